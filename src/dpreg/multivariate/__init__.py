"""Multivariate DP regression mechanisms (functional cores on a design matrix).

Each function takes a design ``X`` (include a column of ones for an intercept), a response
``y``, the privacy parameters and the method's public hyperparameters, charges the optional
ledger after validation and before any noise, and returns a
:class:`~dpreg.inference.RegressionResults`.  The scikit-learn estimators in
:mod:`dpreg.linear_model` wrap these with public-bound scaling and intercept handling.

* :func:`adassp` -- AdaSSP (μ-GDP ⇒ (ε, δ) for any ε; Wang's ρ-zCDP constants as an option).
* :func:`boosted_adassp` -- BoostedAdaSSP (μ-GDP ⇒ (ε, δ)).
* :func:`tukey_em` -- TukeyEM ((ε, δ), replace-one with n public).
* :func:`dp_gradient_descent` -- noisy full-batch gradient descent (μ-GDP or ρ-zCDP).
"""

from dpreg.multivariate.boosted import boosted_adassp
from dpreg.multivariate.dpgd import dp_gradient_descent
from dpreg.multivariate.ssp import (
    adassp,
    adassp_budget,
    adassp_guarantee,
    adassp_max_epsilon,
    adassp_split,
    ssp_solve,
)
from dpreg.multivariate.tukey import approximate_depth, tukey_em

__all__ = [
    "adassp",
    "adassp_budget",
    "adassp_guarantee",
    "adassp_split",
    "adassp_max_epsilon",
    "ssp_solve",
    "boosted_adassp",
    "tukey_em",
    "approximate_depth",
    "dp_gradient_descent",
]
