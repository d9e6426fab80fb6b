"""Accuracy planning from public inputs only (Bain et al.'s getAccuracy / getParameters): the
noise sd and (1 − β) half-widths of every entry of a release, and the smallest ε that meets a
target accuracy.  No data is read and nothing is charged."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize

from dpreg._validation import (
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    fmt,
)
from dpreg.covariance.calibration import INTERCEPT, _noise_var_factors, _quantile, _unit_sigma, resolve_bounds
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms.sensitivity import sscp_sensitivity
from dpreg.privacy.neighbours import Neighbouring, check_neighbouring

__all__ = ["noise_sd_matrix", "accuracy", "epsilon_for"]


def _plan_columns(bounds: Any, columns: Any) -> tuple[list[str], list[tuple[float, float]]]:
    """Column names and bounds for the planning functions (no data involved)."""
    if isinstance(bounds, Mapping):
        cols = [str(c) for c in (columns if columns is not None else bounds.keys())]
    elif isinstance(bounds, Sequence) and not isinstance(bounds, (str, bytes)):
        cols = ([str(c) for c in columns] if columns is not None
                else [f"x{j}" for j in range(len(bounds))])
    else:
        cols = []
    bnds = resolve_bounds(bounds, cols)
    if not cols:
        raise InvalidInputError("bounds must name at least one column; got none")
    return cols, bnds


def _sd_factors(bounds: Any, columns: Any, neighbouring: str | Neighbouring) -> pd.DataFrame:
    """Noise sd per entry (original units) divided by the unit-sensitivity σ: Δ·√Var-factor."""
    cols, bnds = _plan_columns(bounds, columns)
    rel = check_neighbouring(neighbouring)
    sens = sscp_sensitivity(len(cols), rel, intercept=True)
    names = [INTERCEPT] + cols
    return pd.DataFrame(sens * np.sqrt(_noise_var_factors(bnds)), index=names, columns=names)


def _accuracy_factors(beta: float, bounds: Any, columns: Any, n: int | None,
                      neighbouring: str | Neighbouring, simultaneous: bool) -> pd.DataFrame:
    """Half-width per entry divided by the unit-sensitivity σ (independent of ε)."""
    beta = check_probability(beta, "beta")
    out = _sd_factors(bounds, columns, neighbouring)
    p = out.shape[0]
    k = p * (p + 1) // 2 if simultaneous else 1
    out = out * _quantile(beta, k)
    if n is not None:
        out = out / check_int(n, "n", minimum=1)
    return out


def noise_sd_matrix(epsilon: float, delta: float, *, bounds: Any, columns: Any = None,
                    neighbouring: str | Neighbouring = "add-remove",
                    calibration: str = "analytic") -> pd.DataFrame:
    """Standard deviation of the noise on every entry of the released matrix (original units)."""
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    cal = check_choice(calibration, "calibration", ("analytic", "classical"))
    factors = _sd_factors(bounds, columns, neighbouring)
    return factors * (0.0 if math.isinf(eps) else _unit_sigma(eps, dlt, cal))


def accuracy(epsilon: float, delta: float, beta: float = 0.05, *, bounds: Any,
             columns: Any = None, n: int | None = None,
             neighbouring: str | Neighbouring = "add-remove", calibration: str = "analytic",
             simultaneous: bool = False) -> pd.DataFrame:
    """Bain et al.'s getAccuracy: half-widths a_ij with P(|noise_ij| <= a_ij) >= 1 − β.

    Per entry of the released matrix in original units, a_ij = z_{1−β/2}·sd_ij (with
    ``simultaneous=True`` the guarantee holds for all (d+1)(d+2)/2 distinct entries at once, by
    Bonferroni: β/K).  With ``n`` the half-widths are divided by n, i.e. they refer to the
    matrix of means (1/n)DᵀD as in Bain et al.'s code.  Uses only public inputs; ``bounds`` is
    a dict column → (lo, hi) or a list of pairs (names from ``columns`` or x0, x1, ...).
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    cal = check_choice(calibration, "calibration", ("analytic", "classical"))
    factors = _accuracy_factors(beta, bounds, columns, n, neighbouring, simultaneous)
    return factors * (0.0 if math.isinf(eps) else _unit_sigma(eps, dlt, cal))


def epsilon_for(accuracy: float, delta: float, beta: float = 0.05, *, bounds: Any,
                columns: Any = None, n: int | None = None, entry: Any = None,
                neighbouring: str | Neighbouring = "add-remove",
                calibration: str = "analytic", simultaneous: bool = False) -> float:
    """Bain et al.'s getParameters: the smallest ε whose half-widths (:func:`accuracy`) are
    <= ``accuracy``.

    ``entry=None`` asks for every entry (the worst one) to meet the target, ``entry=(a, b)``
    (column names, ``"intercept"`` allowed) for one entry.  Classical calibration is solved in
    closed form and must give ε < 1; analytic calibration is solved numerically (the analytic σ
    is decreasing in ε).
    """
    tgt = check_positive(accuracy, "accuracy")
    dlt = check_delta(delta, allow_zero=False)
    cal = check_choice(calibration, "calibration", ("analytic", "classical"))
    factors = _accuracy_factors(beta, bounds, columns, n, neighbouring, simultaneous)
    if entry is None:
        worst = float(factors.to_numpy().max())
    else:
        try:
            a, b = entry
            worst = float(factors.loc[str(a), str(b)])
        except (KeyError, TypeError, ValueError):
            raise InvalidInputError(
                f"entry must be a pair of names from {list(factors.index)}; got {fmt(entry)}"
            ) from None
    if cal == "classical":
        eps = worst * math.sqrt(2.0 * math.log(1.25 / dlt)) / tgt
        if eps >= 1.0:
            raise InvalidInputError(
                f"accuracy must be larger: the classical Gaussian calibration is valid only for "
                f"epsilon < 1 and this accuracy needs epsilon={eps:.4g} (use "
                f"calibration='analytic'); got accuracy={tgt!r}"
            )
        while worst * _unit_sigma(eps, dlt, cal) > tgt:
            eps = math.nextafter(eps, math.inf)
        return float(eps)

    def excess(eps: float) -> float:
        return worst * _unit_sigma(eps, dlt, cal) - tgt

    lo, hi = 1e-6, 1.0
    if excess(lo) <= 0:
        return lo
    while excess(hi) > 0:
        lo, hi = hi, hi * 2.0
        if hi > 1e4:
            raise InvalidInputError(
                f"accuracy must be larger: no epsilon up to 1e4 reaches accuracy={tgt!r}"
            )
    eps = optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=1e-12)
    while excess(eps) > 0:
        eps = math.nextafter(eps, math.inf)
    return float(eps)
