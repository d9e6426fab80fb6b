"""``ClippedDPGradientDescent``: noisy full-batch gradient descent with per-example clipping
(Tang et al. 2023's DP-GD baseline) as a scikit-learn estimator: rows scaled into the unit ball
(a thin layer over :func:`dpreg.multivariate.dp_gradient_descent`)."""

from __future__ import annotations

from typing import Any

from dpreg.linear_model._base import _MultivariateBase
from dpreg.multivariate.dpgd import dp_gradient_descent

__all__ = ["ClippedDPGradientDescent"]


class ClippedDPGradientDescent(_MultivariateBase):
    """Noisy full-batch gradient descent on the squared loss with per-example clipping.

    Parameters
    ----------
    epsilon, delta:
        Privacy target (δ > 0).
    bounds_X:
        Required public feature bounds; rows are scaled into the unit ball with them.
    bounds_y:
        Optional public response bounds (y clamped and scaled to [−1, 1] when given).
    fit_intercept:
        Add a public ones column (default True).
    n_iter, clip_norm, learning_rate, schedule:
        T rounds and gradient clip C_g -- ``"auto"`` (default): T = 1600 and C_g from the
        public rule min(1, 1.5·μ·n/((d+1)·T)) (public n under replace-one, the released noisy
        count under add/remove; μ the GDP parameter of (ε, δ)), grown up to 2 where a release
        of the label's spread (5% of the budget) shows it spread over more than 0.2 of its
        half-width (:mod:`dpreg.multivariate.dpgd`; docs/accuracy.md §11.2, §12.6); with
        ``fit_intercept`` the descent then starts from the intercept of the released label
        mean (a warm start, no extra budget; docs/accuracy.md §12.7);
        ``clip_norm="public"``: the public rule alone; or numbers --
        η (0.5) and its schedule (``"constant"``, ``"1/t"``, ``"1/sqrt(t)"``).
    accounting:
        ``"gdp"`` (default, μ_round = μ/√T) or ``"zcdp"``.
    output:
        ``"average"`` (mean of the last ⌈T/2⌉ iterates; default) or ``"last"``.
    neighbouring:
        ``"replace-one"`` (default; n public) or ``"add-remove"`` (noisy count for n).
    random_state, ledger:
        As for :class:`AdaSSP`.
    raise_on_failure:
        ``True`` (default): a ⊥ release (the mechanism's failure output) raises
        :class:`~dpreg.exceptions.MechanismFailure` from ``fit``.  ``False``: ``fit`` returns
        the estimator with ``results_.failed`` True and ``results_.reason`` (``predict`` then
        raises ``MechanismFailure``).  Either way the budget stays charged: ⊥ is itself a
        private output (docs/architecture.md, "Failure (⊥) policy").
    """

    _needs_y_bounds = False
    _unit_ball = True

    def __init__(self, *, epsilon: float | None = None, delta: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, fit_intercept: bool = True, n_iter: int | str = "auto",
                 clip_norm: float | str = "auto", learning_rate: float = 0.5,
                 schedule: str = "constant", accounting: str = "gdp", output: str = "average",
                 neighbouring: str = "replace-one", random_state: Any = None,
                 ledger: Any = None,
                 raise_on_failure: bool = True) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.n_iter = n_iter
        self.clip_norm = clip_norm
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.accounting = accounting
        self.output = output
        self.neighbouring = neighbouring
        self.random_state = random_state
        self.ledger = ledger
        self.raise_on_failure = raise_on_failure

    def _fit(self, X: Any, y: Any) -> ClippedDPGradientDescent:
        Xa, ya, scaling, names = self._prepare(X, y)
        assert scaling is not None
        core = dp_gradient_descent(
            scaling.design(Xa), scaling.label(ya), epsilon=self._required_epsilon(),
            delta=self._required_delta(),
            clip_norm=self.clip_norm, n_iter=self.n_iter, learning_rate=self.learning_rate,
            schedule=self.schedule, accounting=self.accounting, output=self.output,
            neighbouring=self.neighbouring,
            intercept=scaling.column_factor if scaling.fit_intercept else None,
            rng=self.random_state, ledger=self.ledger)
        self._finish(core, scaling, names, scaling.fit_intercept)
        return self
