"""Differentially private simple (one-x) linear regression.

Releases (all ε-DP or ρ-zCDP under replace-one neighbours with n public; bounds and ranges are
public inputs, never derived from the data):

* :func:`noisy_stats` -- DPSuffStats: Laplace-noised sufficient statistics (Alabi et al. 2022).
* :func:`dp_intercept` -- DPIntercept: a noisy mean of y as a flat line.
* :func:`theil_sen` -- DP Theil-Sen (exponential, widened or smooth-sensitivity median of
  pairwise predictions or slopes; all pairs or k round-robin matchings).
* :func:`gradient_descent` -- DPGradDescent (pure, zCDP or (ε, δ) variants).
* :func:`theil_sen_ci` -- DP confidence interval for the slope (Sarathy & Vadhan 2025).
* :func:`theil_sen_with_ci` -- a DP Theil-Sen line (ε/2) plus that slope interval (ε/2).
* :func:`theta_guidance` -- widening θ from public guesses.

Non-private baselines: :func:`ols`, :func:`ols_prediction_se`, :func:`ols_slope_se`,
:func:`ols_ci`, :func:`nonprivate_theil_sen`, :func:`nonprivate_theil_sen_ci`.
Pair designs and U-statistic variances: :mod:`dpreg.simple.pairs`.  Public default ranges:
:func:`default_prediction_range`, :func:`default_slope_range`.
"""

from dpreg.simple._gradient_descent import gradient_descent
from dpreg.simple._noisy_stats import (
    dp_intercept,
    intercept_sensitivity,
    noisy_stats,
    noisy_stats_sensitivities,
)
from dpreg.simple._result import ConfidenceInterval, SimpleRegressionResult
from dpreg.simple._theil_sen import theil_sen
from dpreg.simple.baselines import (
    nonprivate_theil_sen,
    ols,
    ols_ci,
    ols_prediction_se,
    ols_slope_se,
)
from dpreg.simple.ci import nonprivate_theil_sen_ci, theil_sen_ci
from dpreg.simple.line_with_ci import theil_sen_with_ci
from dpreg.simple.pairs import (
    PairDesign,
    all_pairs,
    kendall_null_variance,
    null_variance_bound,
    null_variance_exact,
    null_variance_max,
    round_robin_matchings,
)
from dpreg.simple.ranges import default_prediction_range, default_slope_range
from dpreg.simple.theta import theta_guidance

__all__ = [
    "noisy_stats",
    "dp_intercept",
    "theil_sen",
    "gradient_descent",
    "theil_sen_ci",
    "theil_sen_with_ci",
    "theta_guidance",
    "default_prediction_range",
    "default_slope_range",
    "SimpleRegressionResult",
    "ConfidenceInterval",
    "ols",
    "ols_prediction_se",
    "ols_slope_se",
    "ols_ci",
    "nonprivate_theil_sen",
    "nonprivate_theil_sen_ci",
    "noisy_stats_sensitivities",
    "intercept_sensitivity",
    "PairDesign",
    "all_pairs",
    "round_robin_matchings",
    "null_variance_bound",
    "null_variance_max",
    "null_variance_exact",
    "kendall_null_variance",
]
