"""Differentially private primitives; every sampler takes a keyword ``rng``.

* :func:`laplace` -- ε-DP Laplace mechanism (L1 sensitivity); :func:`laplace_rows` one release
  per row of a batch (:class:`RowRandomness`: one group or many).
* :func:`gaussian` -- Gaussian mechanism calibrated to ρ-zCDP, μ-GDP or (ε, δ) (analytic or
  classical).
* :func:`exp_quantile` -- ε-DP quantile/median by the exponential mechanism over the doubles
  of the output range (θ > 0: widened); :func:`quantile_em_law` its exact law.
* :func:`smooth_median` -- ε-DP median with smooth-sensitivity Student-t noise.
* :mod:`~dpreg.mechanisms.sensitivity` -- sensitivity formulas per neighbouring relation.
* :func:`ptr_test` -- propose-test-release check.
"""

from dpreg.mechanisms import sensitivity
from dpreg.mechanisms.batch import RowRandomness
from dpreg.mechanisms.exponential import (
    exact_quantile,
    exp_quantile,
    quantile_em_intervals,
    quantile_em_law,
    quantile_em_probabilities,
    sample_piecewise_constant,
)
from dpreg.mechanisms.gaussian import gaussian, gaussian_calls, gaussian_sigma
from dpreg.mechanisms.laplace import laplace, laplace_calls, laplace_rows, laplace_scale
from dpreg.mechanisms.ptr import ptr_test, ptr_threshold
from dpreg.mechanisms.smooth import median_smooth_sensitivity, smooth_median, student_t_scale
from dpreg.mechanisms.subsample import random_partition, tie_jitter

__all__ = [
    "random_partition",
    "tie_jitter",
    "laplace",
    "laplace_scale",
    "laplace_calls",
    "laplace_rows",
    "RowRandomness",
    "gaussian",
    "gaussian_sigma",
    "gaussian_calls",
    "exp_quantile",
    "exact_quantile",
    "quantile_em_intervals",
    "quantile_em_law",
    "quantile_em_probabilities",
    "sample_piecewise_constant",
    "smooth_median",
    "median_smooth_sensitivity",
    "student_t_scale",
    "ptr_test",
    "ptr_threshold",
    "sensitivity",
]
