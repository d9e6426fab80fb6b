"""Non-private baselines for the simple suite (NOT differentially private).

* :func:`ols` -- ordinary least squares with the standard errors of Alabi et al. eq. (3);
* :func:`ols_prediction_se` -- σ̂(p̂_x) = s·√(1/n + (x − x̄)²/nvar(x)), s = ‖residuals‖/√(n − 2);
* :func:`ols_slope_se` -- s/√nvar(x);
* :func:`ols_ci` -- the classical t interval for the slope;
* :func:`nonprivate_theil_sen` -- Theil-Sen on all pairs or k round-robin matchings.

They exist to measure DP releases against ("error relative to the OLS standard error") and
are the exact ``epsilon=inf`` counterparts of the DP functions.  Their results carry an
infinite budget, so ``result.privacy.private`` is False.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from dpreg._validation import DEPRECATED, check_probability, check_rng, renamed_parameters
from dpreg.exceptions import InvalidInputError
from dpreg.privacy import Neighbouring, PrivacyStatement, PureDP
from dpreg.simple._common import (
    check_bounds_opt,
    check_choice,
    check_pairs_arg,
    check_simple_xy,
    check_x_eval,
)
from dpreg.simple._result import ConfidenceInterval, SimpleRegressionResult
from dpreg.simple.pairs import doubled_multiset, make_design, pair_estimates, pair_slopes

__all__ = [
    "ols",
    "ols_prediction_se",
    "ols_slope_se",
    "ols_ci",
    "nonprivate_theil_sen",
]


def _not_private(mechanism: str, source: str, details: dict[str, Any]) -> PrivacyStatement:
    return PrivacyStatement(PureDP(math.inf), Neighbouring.REPLACE_ONE, mechanism, source,
                            False, details)


def _ols_core(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float, float]:
    """(slope, intercept, x̄, nvar, RSS); raises when x has no variation."""
    xbar, ybar = float(np.mean(x)), float(np.mean(y))
    dx = x - xbar
    nvar = float(np.dot(dx, dx))
    if not nvar > 0:
        raise InvalidInputError(
            "x has no variation (all values equal): the OLS slope is undefined"
        )
    slope = float(np.dot(dx, y - ybar)) / nvar
    intercept = ybar - slope * xbar
    resid = y - (slope * x + intercept)
    return slope, intercept, xbar, nvar, float(np.dot(resid, resid))


def ols_prediction_se(x: Any, y: Any, x_new: Any) -> Any:
    """Standard error of the OLS prediction at ``x_new`` (Alabi et al. 2022, eq. (3)).

    σ̂(p̂_x) = (‖y − α̂x − β̂‖₂/√(n − 2))·√(1/n + (x_new − x̄)²/nvar(x)); needs n >= 3.
    """
    xa, ya = check_simple_xy(x, y, min_rows=3)
    _, _, xbar, nvar, rss = _ols_core(xa, ya)
    n = xa.size
    s = math.sqrt(rss / (n - 2))
    xn = np.asarray(x_new, dtype=np.float64)
    if not np.all(np.isfinite(xn)):
        raise InvalidInputError("x_new must contain only finite numbers")
    out = s * np.sqrt(1.0 / n + (xn - xbar) ** 2 / nvar)
    return float(out) if out.ndim == 0 else out


def ols_slope_se(x: Any, y: Any) -> float:
    """Standard error s/√nvar(x) of the OLS slope; needs n >= 3."""
    xa, ya = check_simple_xy(x, y, min_rows=3)
    _, _, _, nvar, rss = _ols_core(xa, ya)
    return math.sqrt(rss / (xa.size - 2)) / math.sqrt(nvar)


def ols(x: Any, y: Any, *, x_eval: Any = None,
        x_bounds: tuple[float, float] | None = None) -> SimpleRegressionResult:
    """Non-private OLS line with eq. (3) standard errors (``extra["se_predictions"]``,
    ``extra["se_slope"]``, available for n >= 3)."""
    xa, ya = check_simple_xy(x, y, min_rows=2)
    xb = check_bounds_opt(x_bounds, "x_bounds")
    xe = check_x_eval(x_eval, xb)
    slope, intercept, _, _, _ = _ols_core(xa, ya)
    extra: dict[str, Any] = {"x_eval": list(xe)}
    if xa.size >= 3:
        extra["se_predictions"] = {v: float(ols_prediction_se(xa, ya, v)) for v in xe}
        extra["se_slope"] = ols_slope_se(xa, ya)
    stmt = _not_private("OLS", "ordinary least squares (not private)", {})
    return SimpleRegressionResult("ols", stmt, released_slope=slope, released_intercept=intercept,
                                  released_predictions={v: slope * v + intercept for v in xe},
                                  n=int(xa.size), extra=extra)


@renamed_parameters(alpha="ci_alpha")
def ols_ci(x: Any, y: Any, *, ci_alpha: float = 0.05, alpha: Any = DEPRECATED
           ) -> ConfidenceInterval:
    """Classical (1 − α) t interval for the OLS slope (n − 2 degrees of freedom; n >= 3);
    α is ``ci_alpha`` (``alpha=`` is its deprecated spelling, kept for one release)."""
    xa, ya = check_simple_xy(x, y, min_rows=3)
    a = check_probability(ci_alpha, "ci_alpha")
    slope = _ols_core(xa, ya)[0]
    se = ols_slope_se(xa, ya)
    q = float(stats.t.ppf(1.0 - a / 2.0, xa.size - 2))
    return ConfidenceInterval(slope - q * se, slope + q * se, alpha=a, estimate=slope,
                              method="ols-t", details={"se": se, "df": int(xa.size - 2)})


def nonprivate_theil_sen(
    x: Any, y: Any, *, pairs: str | int = "all", estimand: str = "predictions",
    x_eval: Any = None, x_bounds: tuple[float, float] | None = None, rng: Any = None,
) -> SimpleRegressionResult:
    """Theil-Sen: the median of the pairwise estimates (NOT private).

    Pairs with tied x are handled with the ±∞ convention (each untied pair counted twice,
    −∞ and +∞ per tied pair), which gives exactly the median of the untied estimates.
    ``pairs`` as in :func:`dpreg.simple.theil_sen` (matchings use ``rng``).
    """
    xa, ya = check_simple_xy(x, y, min_rows=2)
    est = check_choice(estimand, "estimand", ("predictions", "slope"))
    xb = check_bounds_opt(x_bounds, "x_bounds")
    n = int(xa.size)
    pairs_arg = check_pairs_arg(pairs, n)
    xe = check_x_eval(x_eval, xb, exactly_two=True) if est == "predictions" else ()
    design = make_design(n, pairs_arg, check_rng(rng))

    def med(values: np.ndarray, tied: np.ndarray) -> float:
        if tied.all():
            raise InvalidInputError(
                "every pair has tied x: the Theil-Sen estimate is undefined"
            )
        return float(np.median(doubled_multiset(values, tied)))

    stmt = _not_private("Theil-Sen", "Theil 1950; Sen 1968 (not private)",
                        {"pairs": design.describe(), "k": design.k})
    extra = {"estimand": est, "pairs": design.describe(), "x_eval": list(xe)}
    if est == "slope":
        return SimpleRegressionResult("theil-sen", stmt,
                                      released_slope=med(*pair_slopes(xa, ya, design)),
                                      n=n, extra=extra)
    p1, p2 = (med(*pair_estimates(xa, ya, design, v)) for v in xe)
    (x1, x2) = xe
    slope = (p2 - p1) / (x2 - x1)
    return SimpleRegressionResult("theil-sen", stmt, released_slope=slope,
                                  released_intercept=p1 - slope * x1,
                                  released_predictions={x1: p1, x2: p2}, n=n, extra=extra)
