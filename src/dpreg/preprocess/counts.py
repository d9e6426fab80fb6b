"""Private counts: :func:`noisy_count` (n + Laplace), :func:`boundary_count` /
:func:`noisy_boundary_count` (rows at or beyond the bounds) and TukeyEM's number of models
(:func:`tukey_n_models`, post-processing of a public or noisy n)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpreg._validation import check_bounds, check_epsilon, check_int, check_rng, describe_data
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms import laplace
from dpreg.preprocess._common import PrivateValue, _matrix, _statement
from dpreg.privacy import BOTH_RELATIONS, Neighbouring, PureDP, charge

__all__ = ["noisy_count", "boundary_count", "noisy_boundary_count", "tukey_n_models"]


def noisy_count(data: Any, *, epsilon: float, rng: Any = None, ledger: Any = None,
                label: str = "noisy count") -> PrivateValue:
    """Release the number of rows of ``data`` (or the integer ``data`` itself) with Laplace noise.

    Guarantee: ε-DP (pure) under **add/remove-one** neighbours; the count has sensitivity 1.
    The released value is ``max(0, round(n + Lap(1/ε)))`` (rounding and the floor are
    post-processing).  Under replace-one neighbours n is public and this is unnecessary.
    Source: Dwork, McSherry, Nissim & Smith 2006 (Laplace mechanism).
    """
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        n = check_int(data, "data", minimum=0)
    else:
        try:
            n = len(data)
        except TypeError:
            raise InvalidInputError("data must be a dataset (rows) or a count; got "
                                    f"{describe_data(data)}") from None
    eps = check_epsilon(epsilon)
    gen = check_rng(rng)
    charge(ledger, PureDP(eps), label, Neighbouring.ADD_REMOVE)
    noisy = float(laplace(float(n), sensitivity=1.0, epsilon=eps, rng=gen))
    value = float(max(0, round(noisy)))
    return PrivateValue(value, _statement(eps, Neighbouring.ADD_REMOVE, "Laplace count",
                                          "Dwork et al. 2006", rng, sensitivity=1.0))


def boundary_count(X: Any, bounds: Any) -> int:
    """Number of rows of ``X`` (n × k) with at least one coordinate at or beyond its bounds
    (``bounds``: one ``(lo, hi)`` per column): the rows that clipping moves or that sit on the
    edge of the box.  Changing one row changes it by at most 1 (replace-one and add/remove)."""
    arr = _matrix(X)
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__iter__"):
        raise InvalidInputError(f"bounds must be a list with one (lo, hi) per column; got {bounds!r}")
    b = [check_bounds(v, f"bounds[{j}]") for j, v in enumerate(bounds)]
    if arr.ndim != 2 or len(b) != arr.shape[1]:
        raise InvalidInputError(f"bounds must have one (lo, hi) per column ({arr.shape[-1]}); "
                                f"got {len(b)}")
    lo = np.array([v[0] for v in b])
    hi = np.array([v[1] for v in b])
    with np.errstate(invalid="ignore"):
        edge = (arr <= lo) | (arr >= hi)
    return int(np.count_nonzero(np.any(edge, axis=1)))


def noisy_boundary_count(X: Any, *, bounds: Any, epsilon: float, rng: Any = None,
                         ledger: Any = None, label: str = "noisy boundary count") -> PrivateValue:
    """Release :func:`boundary_count` (rows at or beyond the public or DP-proposed bounds) plus
    Laplace noise: the share of clipped rows, which biases every mean-based estimator (noisy
    sufficient statistics, AdaSSP) but not the conditional medians Theil-Sen estimates.

    Guarantee: ε-DP (pure) under replace-one **and** add/remove neighbours: the count has
    sensitivity 1 (one row enters or leaves the boundary set).  Source: Laplace mechanism
    (Dwork, McSherry, Nissim & Smith 2006); the statistic is dpreg's (docs/auto.md).
    """
    arr = _matrix(X)
    count = boundary_count(arr, bounds)  # validates the bounds before any charge
    eps = check_epsilon(epsilon)
    gen = check_rng(rng)
    charge(ledger, PureDP(eps), label, BOTH_RELATIONS)
    value = float(laplace(float(count), sensitivity=1.0, epsilon=eps, rng=gen))
    return PrivateValue(value, _statement(eps, Neighbouring.REPLACE_ONE, "Laplace boundary count",
                                          "Dwork et al. 2006", rng, sensitivity=1.0,
                                          also_add_remove=True))


def tukey_n_models(n: float, d: int, *, cap: int = 1000, rows_per_coefficient: int = 2) -> int:
    """TukeyEM's number of models m from n (public, or a :func:`noisy_count` release) and the
    number of design columns d: m = min(cap, ⌊n / (rows_per_coefficient·d)⌋).

    Each model is fitted on ⌊n/m⌋ >= rows_per_coefficient·d rows; the cap 1000 is Amin et al.'s
    recommendation.  A function of public values (or of a DP release): no privacy cost.
    """
    nn = float(n)
    if not math.isfinite(nn) or nn < 0:
        raise InvalidInputError(f"n must be a finite number >= 0; got {n!r}")
    dd = check_int(d, "d", minimum=1)
    c = check_int(cap, "cap", minimum=1)
    r = check_int(rows_per_coefficient, "rows_per_coefficient", minimum=1)
    return int(min(c, math.floor(nn / (r * dd))))
