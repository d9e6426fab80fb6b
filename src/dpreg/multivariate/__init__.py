"""Multivariate DP regression mechanisms (functional cores on a design matrix).

Each function takes a design ``X`` (include a column of ones for an intercept), a response
``y``, the privacy parameters and the method's public hyperparameters, charges the optional
ledger after validation and before any noise, and returns a
:class:`~dpreg.inference.RegressionResults`.  The scikit-learn estimators in
:mod:`dpreg.linear_model` wrap these with public-bound scaling and intercept handling.

* :func:`adassp` -- AdaSSP (μ-GDP ⇒ (ε, δ) for any ε; Wang's ρ-zCDP constants as an option),
  composed of :func:`plan_adassp` (public) -> :func:`ssp_statistics` -> :func:`release_adassp`
  (the draws) -> :func:`adassp_result` (post-processing).
* :func:`boosted_adassp` -- BoostedAdaSSP (μ-GDP ⇒ (ε, δ)): :func:`plan_boosted` ->
  :func:`boosted_statistics` -> :func:`release_boosted` -> :func:`boosted_result`.
* :func:`tukey_em` -- TukeyEM ((ε, δ), replace-one with n public): :func:`plan_tukey_em` ->
  :func:`tukey_statistics` -> :func:`release_tukey_em` -> :func:`tukey_em_result`.
* :func:`dp_gradient_descent` -- noisy full-batch gradient descent (μ-GDP or ρ-zCDP).
"""

from dpreg.multivariate._common import PublicScaling, clip_rows, noisy_symmetric
from dpreg.multivariate.boosted import (
    BoostedStatistics,
    boosted_adassp,
    boosted_result,
    boosted_statistics,
    plan_boosted,
    release_boosted,
)
from dpreg.multivariate.dpgd import (
    DPGDStatistics,
    dp_gradient_descent,
    dp_gradient_descent_result,
    dpgd_budget,
    dpgd_statistics,
    plan_dp_gradient_descent,
    release_dp_gradient_descent,
)
from dpreg.multivariate.ssp import (
    SSPStatistics,
    adassp,
    adassp_budget,
    adassp_guarantee,
    adassp_max_epsilon,
    adassp_result,
    adassp_split,
    plan_adassp,
    release_adassp,
    ssp_solve,
    ssp_statistics,
)
from dpreg.multivariate.tukey import (
    MIN_MODELS,
    TukeyStatistics,
    approximate_depth,
    plan_tukey_em,
    release_tukey_em,
    tukey_auto_n_models,
    tukey_em,
    tukey_em_result,
    tukey_pass_probability,
    tukey_split,
    tukey_statistics,
)

__all__ = [
    "adassp",
    "adassp_budget",
    "adassp_guarantee",
    "adassp_split",
    "adassp_max_epsilon",
    "ssp_solve",
    "plan_adassp",
    "ssp_statistics",
    "SSPStatistics",
    "release_adassp",
    "adassp_result",
    "boosted_adassp",
    "plan_boosted",
    "boosted_statistics",
    "BoostedStatistics",
    "release_boosted",
    "boosted_result",
    "PublicScaling",
    "clip_rows",
    "noisy_symmetric",
    "tukey_em",
    "tukey_split",
    "plan_tukey_em",
    "tukey_statistics",
    "TukeyStatistics",
    "release_tukey_em",
    "tukey_em_result",
    "tukey_auto_n_models",
    "tukey_pass_probability",
    "MIN_MODELS",
    "approximate_depth",
    "dp_gradient_descent",
    "plan_dp_gradient_descent",
    "DPGDStatistics",
    "dpgd_statistics",
    "release_dp_gradient_descent",
    "dp_gradient_descent_result",
    "dpgd_budget",
]
