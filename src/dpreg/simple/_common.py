"""Validation and small numerical helpers shared by the simple (one-x) suite.

Everything here either normalises a *public* input or is a deterministic helper; nothing
reads the private data except :func:`check_simple_xy`, whose only decisions are on the shape
and finiteness of the arrays (a malformed call, not a property of a valid dataset).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from dpreg._validation import check_bounds, check_int, check_xy, did_you_mean, fmt
from dpreg.exceptions import InvalidInputError, InvalidParameterError, PrivacyLeakWarning

__all__ = [
    "check_simple_xy",
    "check_choice",
    "check_x_eval",
    "default_x_eval",
    "check_pairs_arg",
    "check_bounds_opt",
    "max_matchings",
    "div_down",
    "warn_not_private",
    "check_flag",
]


def check_simple_xy(x: Any, y: Any, *, min_rows: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """One-dimensional ``x`` and ``y`` of equal length >= ``min_rows``, finite and numeric."""
    xa, ya = check_xy(x, y, x_ndim=1, min_rows=min_rows, x_name="x", y_name="y")
    return xa, ya


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """A string option from ``choices`` (case-sensitive)."""
    if not isinstance(value, str) or value not in choices:
        allowed = " | ".join(repr(c) for c in choices)
        raise InvalidParameterError(f"{name} must be one of {allowed}; got {fmt(value)}"
                                    + did_you_mean(str(value), choices))
    return value


def check_flag(value: Any, name: str) -> bool:
    """A boolean flag (``True``/``False`` only)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidInputError(f"{name} must be True or False; got {fmt(value)}")
    return bool(value)


def default_x_eval(x_bounds: tuple[float, float] | None) -> tuple[float, float]:
    """Points at 25% and 75% of the public x range (0.25 and 0.75 without bounds)."""
    if x_bounds is None:
        return (0.25, 0.75)
    lo, hi = x_bounds
    w = hi - lo
    return (lo + 0.25 * w, lo + 0.75 * w)


def check_x_eval(
    x_eval: Any, x_bounds: tuple[float, float] | None, *, exactly_two: bool = False
) -> tuple[float, ...]:
    """Evaluation points: finite reals inside the public ``x_bounds`` (when given).

    ``None`` gives :func:`default_x_eval`.  With ``exactly_two`` the points must be two
    distinct values (a line is recovered from two predictions).
    """
    if x_eval is None:
        return default_x_eval(x_bounds)
    if isinstance(x_eval, numbers.Real) and not isinstance(x_eval, (bool, np.bool_)):
        values = [x_eval]
    elif isinstance(x_eval, (str, bytes)) or not isinstance(x_eval, (Sequence, np.ndarray)):
        raise InvalidInputError(f"x_eval must be a sequence of real numbers; got {fmt(x_eval)}")
    else:
        values = list(np.asarray(x_eval, dtype=object).ravel())
    out = []
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise InvalidInputError(f"x_eval must contain only real numbers; got {fmt(x_eval)}")
        fv = float(v)
        if not math.isfinite(fv):
            raise InvalidInputError(f"x_eval must contain only finite numbers; got {fmt(x_eval)}")
        if x_bounds is not None and not (x_bounds[0] <= fv <= x_bounds[1]):
            raise InvalidInputError(
                f"x_eval must lie inside x_bounds [{x_bounds[0]:g}, {x_bounds[1]:g}]; got {fv!r}"
            )
        out.append(fv)
    if not out:
        raise InvalidInputError("x_eval must contain at least one value; got an empty sequence")
    if exactly_two and (len(out) != 2 or out[0] == out[1]):
        raise InvalidInputError(
            "x_eval must be two distinct values (the line is recovered from two predictions); "
            f"got {fmt(x_eval)}"
        )
    return tuple(out)


def max_matchings(n: int) -> int:
    """Number of distinct rounds of the circle (round-robin) 1-factorisation of K_n.

    n - 1 for even n (perfect matchings); n for odd n (each round leaves one vertex out).
    """
    return n - 1 if n % 2 == 0 else n


def check_pairs_arg(pairs: Any, n: int) -> str | int:
    """``"all"`` or an integer number of round-robin matchings 1 <= k <= max_matchings(n)."""
    if isinstance(pairs, str):
        if pairs == "all":
            return "all"
        raise InvalidInputError(
            f"pairs must be 'all' or an integer number of matchings; got {pairs!r}"
        )
    top = max_matchings(n)
    return check_int(pairs, "pairs", minimum=1, maximum=top)


def check_bounds_opt(bounds: Any, name: str) -> tuple[float, float] | None:
    return None if bounds is None else check_bounds(bounds, name)


def div_down(value: float, m: int) -> float:
    """``value / m`` rounded toward zero exactly (the result times m never exceeds value)."""
    if math.isinf(value):
        return value
    out = value / m
    while out > 0 and Fraction(out) * m > Fraction(value):
        out = math.nextafter(out, 0.0)
    return out


def warn_not_private(name: str) -> None:
    """Emit the PrivacyLeakWarning for an infinite budget (non-private reference run)."""
    from dpreg.privacy.notices import INFINITE_BUDGET

    warnings.warn(
        f"{name}: infinite privacy budget ({INFINITE_BUDGET}) -- returning the exact "
        "non-private estimate",
        PrivacyLeakWarning,
        stacklevel=3,
    )
