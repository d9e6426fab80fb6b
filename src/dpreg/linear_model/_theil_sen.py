"""``DPTheilSen``: DP Theil-Sen (Alabi et al. 2022; Sarathy & Vadhan 2025) as a scikit-learn
estimator (a thin layer over :func:`dpreg.simple.theil_sen` and
:func:`dpreg.simple.theil_sen_with_ci`; ε-DP, replace-one, n public)."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpreg._validation import check_bounds, check_probability
from dpreg.exceptions import InvalidInputError
from dpreg.linear_model._base import _require_epsilon, _SimpleRegressor, feature_names
from dpreg.simple import theil_sen
from dpreg.simple.line_with_ci import theil_sen_with_ci
from dpreg.simple.ranges import default_prediction_range
from dpreg.simple.ties import check_y_levels, warn_few_levels

__all__ = ["DPTheilSen"]


class DPTheilSen(_SimpleRegressor):
    """DP Theil-Sen regression (Alabi et al. 2022; Sarathy & Vadhan 2025).

    Releases DP medians of the pairwise predictions at 25% and 75% of ``bounds_X`` (ε/2 each)
    and the line through them.  **Estimand: the median pairwise slope** (and the medians of
    the pairs' predictions), not the OLS slope: the two coincide for a linear relation with
    symmetric errors and differ under skewed errors, outliers, non-linearity or a response
    with few values (``results_.extra["target"]`` says so; docs/simple.md).  ε-DP,
    replace-one neighbours, n public.  See :func:`dpreg.simple.theil_sen`.

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
        ``"auto"`` (default): ``"calibrated"`` where n·ε is above about 200 (coverage close
        to nominal on real data; :func:`dpreg.simple.ci.calibrated_refusal`), else
        ``"tight"``; ``"calibrated"`` (refused with ``NoUncertaintyError`` before anything is
        charged below that), ``"tight"`` or ``"union"`` (Sarathy & Vadhan §6.4 / Alg. 6.2:
        coverage >= 1 − α by a worst-case bound, conservative).
    slope_range:
        Public slope range for the interval (default ±10·(y width)/(x width)).
    fit_intercept, random_state, ledger:
        As for :class:`NoisyStats`.
    y_levels:
        ``None`` (default), or the response's public levels (a list of numbers, e.g.
        ``[0, 1]``) or their number: with at most 20 levels ``fit`` warns
        (:class:`~dpreg.exceptions.TiedSlopesWarning`) before anything is charged that many
        pairwise slopes are exactly 0, so the median pairwise slope (what Theil-Sen
        estimates -- not the OLS slope) is pulled to 0.  Changes nothing else.
    raise_on_failure:
        ``True`` (default): a ⊥ release (the mechanism's failure output) raises
        :class:`~dpreg.exceptions.MechanismFailure` from ``fit``.  ``False``: ``fit`` returns
        the estimator with ``results_.failed`` True and ``results_.reason`` (``predict`` then
        raises ``MechanismFailure``).  Either way the budget stays charged: ⊥ is itself a
        private output (docs/architecture.md, "Failure (⊥) policy").
    """

    def __init__(self, *, epsilon: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, median: str = "exp", pairs: str | int = "all",
                 theta: float | None = None, output_range: Any = None, dof: int = 3,
                 ci_alpha: float | None = None, ci_method: str = "auto",
                 slope_range: Any = None, fit_intercept: bool = True,
                 random_state: Any = None, ledger: Any = None,
                 raise_on_failure: bool = True, y_levels: Any = None) -> None:
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
        self.raise_on_failure = raise_on_failure
        self.y_levels = y_levels

    def _fit(self, X: Any, y: Any) -> DPTheilSen:
        eps = _require_epsilon(self.epsilon)
        x1, ya, bx, by = self._prepare(X, y)
        # the public rule for tied responses: before anything is charged or drawn
        warn_few_levels(check_y_levels(self.y_levels), where="DPTheilSen")
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
        res = theil_sen_with_ci(x1, ya, epsilon=eps, ci_alpha=alpha, x_bounds=bx, y_bounds=by,
                                median=self.median, pairs=self.pairs, theta=self.theta,
                                dof=self.dof, output_range=output_range, slope_range=slope_range,
                                ci_method=self.ci_method, x_name=feature_names(X, 1)[0],
                                y_name="y", ledger=self.ledger, rng=self.random_state)
        return self._store(res)  # type: ignore[return-value]
