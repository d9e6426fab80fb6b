"""scikit-learn estimators for DP simple (one-feature) regression.

Thin layers over :mod:`dpreg.simple`: ``__init__`` stores the parameters verbatim; ``fit``
validates them and the data (X must have exactly one column), calls the functional core
(which charges the optional ledger before drawing noise) and stores ``coef_``, ``intercept_``,
``results_`` (:class:`~dpreg.inference.RegressionResults`) and ``privacy_``.  A ⊥ release
raises :class:`~dpreg.exceptions.MechanismFailure` from ``fit``; the budget stays charged.

All three are ε-DP (or ρ-zCDP / (ε, δ)-DP for DP-GD) under replace-one neighbours with n
public.  Bounds are public inputs: ``bounds_X`` (a (lo, hi) pair or a list with one pair) and
``bounds_y``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpreg._validation import check_bounds, check_epsilon
from dpreg.exceptions import InvalidInputError
from dpreg.linear_model._base import DPRegressorBase, feature_names, resolve_bounds_X
from dpreg.simple import gradient_descent, noisy_stats, theil_sen
from dpreg.simple._result import SimpleRegressionResult

__all__ = ["NoisyStats", "DPTheilSen", "SimpleDPGradientDescent", "default_prediction_range"]


def default_prediction_range(bounds_y: tuple[float, float]) -> tuple[float, float]:
    """Public default output range for DP Theil-Sen predictions: ``bounds_y`` widened by half
    its width on each side (Alabi et al. Table 1: [−0.5, 1.5] for y in [0, 1])."""
    lo, hi = check_bounds(bounds_y, "bounds_y")
    w = hi - lo
    return (lo - 0.5 * w, hi + 0.5 * w)


class _SimpleRegressor(DPRegressorBase):
    _min_rows = 2

    def _prepare(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, Any, Any]:
        if self.fit_intercept is not True:
            raise InvalidInputError(
                f"fit_intercept must be True for {type(self).__name__} (the simple-regression "
                f"mechanisms always fit an intercept); got {self.fit_intercept!r}"
            )
        Xa, ya = self._validate_data_xy(X, y)
        if Xa.shape[1] != 1:
            raise InvalidInputError(
                f"X must have exactly one column for {type(self).__name__} (simple regression); "
                f"got {Xa.shape[1]} columns -- use a multivariate estimator instead"
            )
        bx = resolve_bounds_X(self.bounds_X, 1)[0]
        if self.bounds_y is None:
            raise InvalidInputError(
                "bounds_y is required: give public (lo, hi) bounds for y (from domain "
                "knowledge or a codebook; dpreg never reads them off the private data)"
            )
        by = check_bounds(self.bounds_y, "bounds_y")
        return Xa[:, 0], ya, bx, by

    def _finish(self, X: Any, res: SimpleRegressionResult) -> _SimpleRegressor:
        name = feature_names(X, 1)[0]
        return self._store(res.to_regression_results(x_name=name, y_name="y"))  # type: ignore[return-value]


def _require_epsilon(epsilon: Any) -> float:
    if epsilon is None:
        raise InvalidInputError("epsilon is required: the privacy budget of this fit; got None")
    return check_epsilon(epsilon)


class NoisyStats(_SimpleRegressor):
    """DPSuffStats (Alabi et al. 2022, Alg. 1): OLS from Laplace-noised sufficient statistics.

    ε-DP, replace-one neighbours, n public.  See :func:`dpreg.simple.noisy_stats`.

    Parameters
    ----------
    epsilon:
        Privacy budget (required at fit time).
    bounds_X, bounds_y:
        Public (lo, hi) bounds; data are clipped to them.
    fit_intercept:
        Must be True.
    random_state:
        ``None`` (fresh entropy), a seed or a Generator.
    ledger:
        Optional :class:`dpreg.Ledger` charged at fit time.
    """

    def __init__(self, *, epsilon: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, fit_intercept: bool = True, random_state: Any = None,
                 ledger: Any = None) -> None:
        self.epsilon = epsilon
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X: Any, y: Any) -> NoisyStats:
        eps = _require_epsilon(self.epsilon)
        x1, ya, bx, by = self._prepare(X, y)
        res = noisy_stats(x1, ya, epsilon=eps, x_bounds=bx, y_bounds=by, release_stats=True,
                          ledger=self.ledger, rng=self.random_state)
        return self._finish(X, res)  # type: ignore[return-value]


class DPTheilSen(_SimpleRegressor):
    """DP Theil-Sen regression (Alabi et al. 2022; Sarathy & Vadhan 2025).

    Releases DP medians of the pairwise predictions at 25% and 75% of ``bounds_X`` (ε/2 each)
    and the line through them.  ε-DP, replace-one neighbours, n public.  See
    :func:`dpreg.simple.theil_sen`.

    Parameters
    ----------
    epsilon:
        Privacy budget (required at fit time).
    bounds_X, bounds_y:
        Public (lo, hi) bounds.  ``bounds_X`` fixes the evaluation points; ``bounds_y``
        gives the default ``output_range``.
    median:
        ``"exp"`` (default), ``"wide"`` or ``"smooth"``.
    pairs:
        ``"all"`` (default) or an integer number of round-robin matchings.
    theta:
        Widening for ``median="wide"`` (default 0.005 × the output-range width: 0.01 for
        y in [0, 1]).
    output_range:
        Public range of the predictions; default :func:`default_prediction_range`
        (``bounds_y`` widened by half its width on each side).
    dof:
        Student-t degrees of freedom for ``median="smooth"``.
    fit_intercept, random_state, ledger:
        As for :class:`NoisyStats`.
    """

    def __init__(self, *, epsilon: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, median: str = "exp", pairs: str | int = "all",
                 theta: float | None = None, output_range: Any = None, dof: int = 3,
                 fit_intercept: bool = True, random_state: Any = None,
                 ledger: Any = None) -> None:
        self.epsilon = epsilon
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.median = median
        self.pairs = pairs
        self.theta = theta
        self.output_range = output_range
        self.dof = dof
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X: Any, y: Any) -> DPTheilSen:
        eps = _require_epsilon(self.epsilon)
        x1, ya, bx, by = self._prepare(X, y)
        rng_out = (default_prediction_range(by) if self.output_range is None
                   else check_bounds(self.output_range, "output_range"))
        res = theil_sen(x1, ya, epsilon=eps, output_range=rng_out, x_bounds=bx,
                        median=self.median, pairs=self.pairs, estimand="predictions",
                        theta=self.theta, dof=self.dof, ledger=self.ledger,
                        rng=self.random_state)
        return self._finish(X, res)  # type: ignore[return-value]


class SimpleDPGradientDescent(_SimpleRegressor):
    """DP gradient descent for one feature (Alabi et al. 2022, Alg. 7, descent sign fixed).

    ``variant="pure"`` (ε-DP, needs ``epsilon``), ``"zcdp"`` (ρ-zCDP, needs ``rho``) or
    ``"approx"`` ((ε, δ)-DP, needs ``epsilon`` and ``delta``); replace-one neighbours, n
    public.  See :func:`dpreg.simple.gradient_descent`.

    Parameters
    ----------
    epsilon, rho, delta, variant:
        The budget (see above).
    bounds_X, bounds_y:
        Public (lo, hi) bounds; data are clipped and mapped to [0, 1] with them.
    tau:
        Per-coordinate gradient clipping bound (normalised units; default 1).
    steps:
        Number of rounds (default 80).
    fit_intercept, random_state, ledger:
        As for :class:`NoisyStats`.
    """

    def __init__(self, *, epsilon: float | None = None, rho: float | None = None,
                 delta: float | None = None, variant: str = "pure", bounds_X: Any = None,
                 bounds_y: Any = None, tau: float = 1.0, steps: int = 80,
                 fit_intercept: bool = True, random_state: Any = None,
                 ledger: Any = None) -> None:
        self.epsilon = epsilon
        self.rho = rho
        self.delta = delta
        self.variant = variant
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.tau = tau
        self.steps = steps
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X: Any, y: Any) -> SimpleDPGradientDescent:
        x1, ya, bx, by = self._prepare(X, y)
        res = gradient_descent(x1, ya, epsilon=self.epsilon, rho=self.rho, delta=self.delta,
                               variant=self.variant, x_bounds=bx, y_bounds=by, tau=self.tau,
                               steps=self.steps, ledger=self.ledger, rng=self.random_state)
        return self._finish(X, res)  # type: ignore[return-value]
