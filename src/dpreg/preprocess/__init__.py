"""Private preprocessing: the statistics a DP analysis needs before it can choose bounds, a
method or a hyperparameter, each released by a DP mechanism and charged to the ledger.

=================================  =======================================  ====================
function                           releases                                 guarantee
=================================  =======================================  ====================
:func:`noisy_count`                n + Lap(1/ε) (rounded, >= 0)             ε-DP, add/remove
:func:`dp_quantile`                one q-quantile (exp. mechanism)          ε-DP, both relations
:func:`propose_bounds`             (lo, hi) from two DP quantiles, widened  ε-DP, both relations
:func:`propose_row_norm_bound`     a DP upper quantile of the row norms     ε-DP, both relations
:func:`noisy_nvar`                 Σ(x − x̄)² of clipped x + Laplace         ε-DP, either relation
:func:`tukey_n_models`             TukeyEM's m from n (public or noisy)     no cost (post-proc.)
=================================  =======================================  ====================

Under **replace-one** neighbouring (the simple-regression suite, TukeyEM) n is public and
:func:`noisy_count` is unnecessary: use ``len(data)``.  Under **add/remove** (AdaSSP's family by
default) n itself is private and must be released by :func:`noisy_count` before it is used.

Every function validates its inputs first (:class:`~dpreg.exceptions.InvalidInputError` before any
noise or charge), charges ``ledger`` (when given) before drawing noise, and returns a
:class:`PrivateValue` whose ``privacy`` records the budget, relation, mechanism and source.
"""

from dpreg.preprocess._common import PrivateBounds, PrivateValue
from dpreg.preprocess.bounds import (
    BOUND_QUANTILES,
    BOUND_WIDENING,
    DEFAULT_COARSE_RANGE,
    dp_quantile,
    propose_bounds,
    propose_row_norm_bound,
)
from dpreg.preprocess.counts import boundary_count, noisy_boundary_count, noisy_count, tukey_n_models
from dpreg.preprocess.spread import noisy_nvar, nvar_sensitivity_for

__all__ = [
    "PrivateValue",
    "PrivateBounds",
    "DEFAULT_COARSE_RANGE",
    "BOUND_QUANTILES",
    "BOUND_WIDENING",
    "noisy_count",
    "dp_quantile",
    "propose_bounds",
    "propose_row_norm_bound",
    "noisy_nvar",
    "nvar_sensitivity_for",
    "boundary_count",
    "noisy_boundary_count",
    "tukey_n_models",
]
