"""Differentially private simple (one-x) linear regression.

Releases (all ε-DP or ρ-zCDP under replace-one neighbours with n public; bounds and ranges are
public inputs, never derived from the data):

* :func:`noisy_stats` -- DPSuffStats: Laplace-noised sufficient statistics (Alabi et al. 2022).
* :func:`dp_intercept` -- DPIntercept: a noisy mean of y as a flat line.
* :func:`theil_sen` -- DP Theil-Sen (exponential, widened or smooth-sensitivity median of
  pairwise predictions or slopes; all pairs or k round-robin matchings); its pipeline
  :func:`plan_theil_sen` (public) -> :func:`theil_sen_statistics` -> :func:`release_theil_sen`
  (the pair design's and the medians' draws) -> :func:`theil_sen_result`.
* :func:`gradient_descent` -- DPGradDescent (pure, zCDP or (ε, δ) variants); its pipeline
  :func:`plan_gradient_descent` (public) -> :func:`gradient_descent_statistics` ->
  :func:`release_gradient_descent` (the only draws) -> :func:`gradient_descent_result`, the
  budget of each variant by :func:`variant_budget` (from a caller's (ε, δ):
  :func:`variant_parameters`).
* :func:`theil_sen_ci` -- DP confidence interval for the slope (Sarathy & Vadhan 2025).
* :func:`theil_sen_with_ci` -- a DP Theil-Sen line (ε/2) plus that slope interval (ε/2).
* :func:`theta_guidance` -- widening θ from public guesses.

Non-private baselines: :func:`ols`, :func:`ols_prediction_se`, :func:`ols_slope_se`,
:func:`ols_ci`, :func:`nonprivate_theil_sen`, :func:`nonprivate_theil_sen_ci`.
Pair designs and U-statistic variances: :mod:`dpreg.simple.pairs`.  Public default ranges:
:func:`default_prediction_range`, :func:`default_slope_range`.
"""

from dpreg.simple._common import (
    check_pairs_arg,
    check_simple_xy,
    check_x_eval,
    default_x_eval,
    div_down,
    max_matchings,
)
from dpreg.simple._gradient_descent import NO_FIT_STATISTICS as GD_NO_FIT_STATISTICS
from dpreg.simple._gradient_descent import NO_INTERVAL as GD_NO_INTERVAL
from dpreg.simple._gradient_descent import (
    VARIANT_PARAMETERS,
    GradientSums,
    gradient_descent,
    gradient_descent_result,
    gradient_descent_statistics,
    group_gradient_statistics,
    normalised_data,
    normalised_line,
    plan_gradient_descent,
    release_gradient_descent,
    variant_budget,
    variant_parameters,
)
from dpreg.simple._interval_rule import (
    INFERENCE_SPLIT,
    INTERVAL_MIN_NVAR_SIGNAL,
    interval_offer_probability,
    interval_offer_threshold,
    interval_refusal,
)
from dpreg.simple._noisy_stats import (
    DP_INTERCEPT_NO_FIT_STATISTICS,
    DP_INTERCEPT_NO_INTERVAL,
    LineStatistics,
    dp_intercept,
    dp_intercept_from_statistics,
    intercept_sensitivity,
    line_release_ok,
    noisy_slope_step,
    noisy_stats,
    noisy_stats_from_statistics,
    noisy_stats_sensitivities,
    noisy_stats_source_statistics,
    noisy_stats_statistics,
    plan_noisy_stats,
    release_dp_intercept,
    release_line,
    release_noisy_stats,
)
from dpreg.simple._noisy_stats import NO_FIT_STATISTICS as NS_NO_FIT_STATISTICS
from dpreg.simple._noisy_stats import NO_INTERVAL as NS_NO_INTERVAL
from dpreg.simple._result import ConfidenceInterval, SimpleRegressionResult
from dpreg.simple._segments import clipped_centred, clipped_means
from dpreg.simple._theil_sen import NO_FIT_STATISTICS as TS_NO_FIT_STATISTICS
from dpreg.simple._theil_sen import NO_INTERVAL as TS_NO_INTERVAL
from dpreg.simple._theil_sen import TARGET as TS_TARGET
from dpreg.simple._theil_sen import (
    PairStatistics,
    check_smooth_size,
    check_theta,
    dp_median_of_doubled,
    plan_theil_sen,
    release_theil_sen,
    target_budgets,
    theil_sen,
    theil_sen_result,
    theil_sen_statistics,
)
from dpreg.simple.baselines import (
    nonprivate_theil_sen,
    ols,
    ols_ci,
    ols_prediction_se,
    ols_slope_se,
)
from dpreg.simple.ci import (
    nonprivate_theil_sen_ci,
    plan_theil_sen_ci,
    release_theil_sen_ci,
    theil_sen_ci,
    theil_sen_ci_result,
    theil_sen_ci_statistics,
)
from dpreg.simple.line_with_ci import (
    plan_theil_sen_with_ci,
    release_theil_sen_with_ci,
    theil_sen_with_ci,
    theil_sen_with_ci_result,
)
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
    "plan_theil_sen",
    "theil_sen_statistics",
    "PairStatistics",
    "release_theil_sen",
    "theil_sen_result",
    "check_smooth_size",
    "dp_median_of_doubled",
    "TS_NO_INTERVAL",
    "TS_TARGET",
    "TS_NO_FIT_STATISTICS",
    "gradient_descent",
    "plan_gradient_descent",
    "gradient_descent_statistics",
    "release_gradient_descent",
    "gradient_descent_result",
    "group_gradient_statistics",
    "normalised_line",
    "normalised_data",
    "GradientSums",
    "variant_budget",
    "variant_parameters",
    "VARIANT_PARAMETERS",
    "GD_NO_INTERVAL",
    "GD_NO_FIT_STATISTICS",
    "target_budgets",
    "INFERENCE_SPLIT",
    "INTERVAL_MIN_NVAR_SIGNAL",
    "interval_offer_probability",
    "interval_offer_threshold",
    "DP_INTERCEPT_NO_FIT_STATISTICS",
    "DP_INTERCEPT_NO_INTERVAL",
    "dp_intercept_from_statistics",
    "line_release_ok",
    "noisy_slope_step",
    "noisy_stats_statistics",
    "plan_noisy_stats",
    "release_dp_intercept",
    "release_line",
    "release_noisy_stats",
    "NS_NO_FIT_STATISTICS",
    "NS_NO_INTERVAL",
    "check_simple_xy",
    "check_x_eval",
    "check_pairs_arg",
    "default_x_eval",
    "max_matchings",
    "div_down",
    "check_theta",
    "LineStatistics",
    "clipped_centred",
    "clipped_means",
    "interval_refusal",
    "noisy_stats_from_statistics",
    "noisy_stats_source_statistics",
    "theil_sen_ci",
    "plan_theil_sen_ci",
    "theil_sen_ci_statistics",
    "release_theil_sen_ci",
    "theil_sen_ci_result",
    "theil_sen_with_ci",
    "plan_theil_sen_with_ci",
    "release_theil_sen_with_ci",
    "theil_sen_with_ci_result",
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
