"""Evaluation metrics of the reproductions.

Conventions (Alabi et al. 2022, §7):

* **Empirical q error bound** Ĉ(q): with errors e_1..e_T of T releases on one data set,
  Ĉ(q) is the ⌈qT⌉-th smallest error.  A ⊥ release (NaN) counts as an error of +∞, so a
  method that fails in more than a (1 − q) fraction of the trials has Ĉ(q) = ∞; the failure
  rate is always reported next to it.
* Ĉ(q) measures |p̃ − p̂| (DP release vs non-private OLS on the same data) and is normalised by
  the *estimated* OLS standard error σ̂(p̂) of eq. (3); Ĉ_true(q) measures |p̃ − p_true| and is
  normalised by the *true* sampling sd σ(p̂) of the generator (the synthetic figures).
* Averages over data sets of a ratio that is +∞ on some data set are +∞; medians and the
  share of data sets with an infinite bound are reported as well.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpreg.exceptions import InvalidInputError

__all__ = [
    "c_hat",
    "c_hat_rows",
    "failure_rate",
    "mean_with_inf",
    "mse",
    "r2",
    "coverage",
    "summarise_ratio",
]


def c_hat(errors: Any, q: float = 0.68) -> float:
    """Ĉ(q) of one data set: the ⌈qT⌉-th smallest |error| (NaN = ⊥ counts as +∞)."""
    e = np.asarray(errors, dtype=np.float64).ravel()
    if e.size == 0:
        raise InvalidInputError("errors must be non-empty")
    if not 0.0 < q <= 1.0:
        raise InvalidInputError(f"q must be in (0, 1]; got {q!r}")
    e = np.where(np.isnan(e), np.inf, np.abs(e))
    k = max(1, math.ceil(q * e.size - 1e-12))
    return float(np.partition(e, k - 1)[k - 1])


def c_hat_rows(errors: np.ndarray, q: float = 0.68) -> np.ndarray:
    """Ĉ(q) of each row of a (data sets × trials) error array (NaN = ⊥ = +∞)."""
    e = np.asarray(errors, dtype=np.float64)
    if e.ndim != 2 or e.shape[1] == 0:
        raise InvalidInputError(f"errors must be a 2-D array with trials > 0; got {e.shape}")
    e = np.where(np.isnan(e), np.inf, np.abs(e))
    k = max(1, math.ceil(q * e.shape[1] - 1e-12))
    return np.partition(e, k - 1, axis=1)[:, k - 1]


def failure_rate(values: Any) -> float:
    """Fraction of ⊥ (NaN) releases."""
    v = np.asarray(values, dtype=np.float64)
    return float(np.isnan(v).mean()) if v.size else float("nan")


def mean_with_inf(values: Any) -> float:
    """Mean that is +∞ as soon as one value is +∞ (NaN entries are ignored)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return float("nan")
    if np.isinf(v).any():
        return float("inf")
    return float(v.mean())


def summarise_ratio(values: Any) -> dict[str, float]:
    """mean (∞ if any ∞), median, 25% and 75% quantiles and share of infinite values."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if v.size == 0:
        nan = float("nan")
        return {"mean": nan, "median": nan, "q25": nan, "q75": nan, "share_inf": nan}
    with np.errstate(invalid="ignore"):
        return {
            "mean": mean_with_inf(v),
            "median": float(np.quantile(v, 0.5, method="inverted_cdf")),
            "q25": float(np.quantile(v, 0.25, method="inverted_cdf")),
            "q75": float(np.quantile(v, 0.75, method="inverted_cdf")),
            "share_inf": float(np.isinf(v).mean()),
        }


def mse(y: Any, pred: Any) -> float:
    """Mean squared error."""
    y = np.asarray(y, dtype=np.float64)
    pred = np.asarray(pred, dtype=np.float64)
    return float(np.mean((y - pred) ** 2))


def r2(y: Any, pred: Any) -> float:
    """Coefficient of determination 1 − SSE/SST (negative when worse than the mean)."""
    y = np.asarray(y, dtype=np.float64)
    pred = np.asarray(pred, dtype=np.float64)
    sst = float(np.sum((y - y.mean()) ** 2))
    if sst == 0:
        return float("nan")
    return 1.0 - float(np.sum((y - pred) ** 2)) / sst


def coverage(lower: Any, upper: Any, truth: float) -> float:
    """Share of intervals [lower, upper] that contain ``truth`` (NaN bounds count as misses)."""
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    ok = (lo <= truth) & (truth <= hi)
    return float(ok.mean()) if ok.size else float("nan")
