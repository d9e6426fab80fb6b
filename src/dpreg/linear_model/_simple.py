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

from dpreg._validation import check_bounds, check_epsilon, check_int, check_probability
from dpreg.exceptions import InvalidInputError
from dpreg.linear_model._base import DPRegressorBase, feature_names, resolve_bounds_X
from dpreg.simple import gradient_descent, noisy_stats, theil_sen
from dpreg.simple._result import SimpleRegressionResult
from dpreg.simple.line_with_ci import theil_sen_with_ci
from dpreg.simple.ranges import default_prediction_range

__all__ = ["NoisyStats", "DPTheilSen", "SimpleDPGradientDescent"]


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

    def _finish(self, X: Any, res: SimpleRegressionResult, **kw: Any) -> _SimpleRegressor:
        name = feature_names(X, 1)[0]
        return self._store(res.to_regression_results(x_name=name, y_name="y", **kw))  # type: ignore[return-value]


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
    inference:
        ``True``: also release noisy nvar(y) and x̄ from the same ε (split 0.3/0.3/0.3/0.05/0.05
        instead of thirds) so that ``results_`` carries DP-aware standard errors and a
        parametric-bootstrap ``conf_int`` (post-processing; Ferrando, Wang & Sheldon 2022).
        ``False`` (default): the paper's release, no interval (``results_.uncertainty`` says
        why).
    n_boot:
        Bootstrap replicates for the interval (2000).
    random_state:
        ``None`` (fresh entropy), a seed or a Generator.
    ledger:
        Optional :class:`dpreg.Ledger` charged at fit time.
    """

    def __init__(self, *, epsilon: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, fit_intercept: bool = True, inference: bool = False,
                 n_boot: int = 2000, random_state: Any = None, ledger: Any = None) -> None:
        self.epsilon = epsilon
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.inference = inference
        self.n_boot = n_boot
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X: Any, y: Any) -> NoisyStats:
        eps = _require_epsilon(self.epsilon)
        x1, ya, bx, by = self._prepare(X, y)
        check_int(self.n_boot, "n_boot", minimum=50, maximum=10_000_000)
        res = noisy_stats(x1, ya, epsilon=eps, x_bounds=bx, y_bounds=by, release_stats=True,
                          inference=self.inference, ledger=self.ledger, rng=self.random_state)
        return self._finish(X, res, n_boot=self.n_boot)  # type: ignore[return-value]


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
    ci_alpha:
        ``None`` (default): the line only, no interval.  A level α in (0, 1): half of ε
        releases the line and the other half a Sarathy–Vadhan DP (1 − α) confidence interval
        for the slope (:func:`dpreg.simple.theil_sen_ci`); ``results_.conf_int(ci_alpha)``
        returns it (only at that α: the interval consumed budget; no intercept interval).
    ci_method:
        ``"tight"`` (default) or ``"union"`` (Sarathy & Vadhan §6.4 / Alg. 6.2).
    slope_range:
        Public slope range for the interval (default ±10·(y width)/(x width)).
    fit_intercept, random_state, ledger:
        As for :class:`NoisyStats`.
    """

    def __init__(self, *, epsilon: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, median: str = "exp", pairs: str | int = "all",
                 theta: float | None = None, output_range: Any = None, dof: int = 3,
                 ci_alpha: float | None = None, ci_method: str = "tight",
                 slope_range: Any = None, fit_intercept: bool = True,
                 random_state: Any = None, ledger: Any = None) -> None:
        self.epsilon = epsilon
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.median = median
        self.pairs = pairs
        self.theta = theta
        self.output_range = output_range
        self.dof = dof
        self.ci_alpha = ci_alpha
        self.ci_method = ci_method
        self.slope_range = slope_range
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X: Any, y: Any) -> DPTheilSen:
        eps = _require_epsilon(self.epsilon)
        x1, ya, bx, by = self._prepare(X, y)
        if self.ci_alpha is not None:
            return self._fit_with_ci(X, x1, ya, eps, bx, by)
        rng_out = (default_prediction_range(by) if self.output_range is None
                   else check_bounds(self.output_range, "output_range"))
        res = theil_sen(x1, ya, epsilon=eps, output_range=rng_out, x_bounds=bx,
                        median=self.median, pairs=self.pairs, estimand="predictions",
                        theta=self.theta, dof=self.dof, ledger=self.ledger,
                        rng=self.random_state)
        return self._finish(X, res)  # type: ignore[return-value]

    def _fit_with_ci(self, X: Any, x1: np.ndarray, ya: np.ndarray, eps: float,
                     bx: tuple[float, float], by: tuple[float, float]) -> DPTheilSen:
        """Line (ε/2) plus a Sarathy–Vadhan slope interval (ε/2):
        :func:`dpreg.simple.theil_sen_with_ci`."""
        alpha = check_probability(self.ci_alpha, "ci_alpha")
        if self.median not in ("exp", "wide", "smooth"):
            raise InvalidInputError(
                f"median must be 'exp', 'wide' or 'smooth'; got {self.median!r}")
        output_range = (None if self.output_range is None
                        else check_bounds(self.output_range, "output_range"))
        slope_range = (None if self.slope_range is None
                       else check_bounds(self.slope_range, "slope_range"))
        res = theil_sen_with_ci(x1, ya, epsilon=eps, alpha=alpha, x_bounds=bx, y_bounds=by,
                                median=self.median, pairs=self.pairs, theta=self.theta,
                                dof=self.dof, output_range=output_range, slope_range=slope_range,
                                ci_method=self.ci_method, x_name=feature_names(X, 1)[0],
                                y_name="y", ledger=self.ledger, rng=self.random_state)
        return self._store(res)  # type: ignore[return-value]


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
