"""``BoostedAdaSSP`` (Tang et al. 2023) as a scikit-learn estimator: rows scaled into the unit
ball, B_x = 1 (a thin layer over :func:`dpreg.multivariate.boosted_adassp`)."""

from __future__ import annotations

from typing import Any

from dpreg._source import ArraySource
from dpreg.exceptions import InvalidInputError
from dpreg.linear_model._base import _MultivariateBase
from dpreg.multivariate.boosted import boosted_adassp_scaled

__all__ = ["BoostedAdaSSP"]


class BoostedAdaSSP(_MultivariateBase):
    """BoostedAdaSSP (Tang et al. 2023): T rounds of AdaSSP on clipped residuals; μ-GDP.

    Parameters
    ----------
    epsilon, delta:
        Privacy target (δ > 0), converted to μ-GDP on the exact curve.
    bounds_X:
        Required public feature bounds; rows are scaled into the unit ball with them (so the
        paper's fixed row clip B_x = 1 loses nothing).
    bounds_y:
        Optional public response bounds.  When given, y is clamped and scaled to [−1, 1] and τ is
        in those units; otherwise y is used as is and τ is in the units of y.
    fit_intercept:
        Add a public ones column (default True).
    n_rounds, tau:
        T (100) and the residual clip τ (1): the paper's fixed hyperparameters.
    x_norm_bound:
        B_x, the row clip applied after scaling (1).
    split:
        μ₁ : μ₂ : μ₃ for XᵀX : all Xᵀg rounds : λ_min -- ``"author"`` (default; 1 : √T : 1,
        what the paper's results used; much more accurate than equal on real data), ``"equal"``
        (1 : 1 : 1) or a triple.
    learning_rate, schedule:
        η_t = learning_rate × {1, 1/t, 1/√t} (``"constant"``, ``"1/t"``, ``"1/sqrt(t)"``).
    lambda_rule:
        ``"wang"`` (ridge λ >= 0; default) or ``"literal"`` (Alg. 1 as printed).
    neighbouring, failure_prob, random_state, ledger:
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
                 bounds_y: Any = None, fit_intercept: bool = True, n_rounds: int = 100,
                 tau: float = 1.0, x_norm_bound: float = 1.0, split: Any = "author",
                 learning_rate: float = 1.0, schedule: str = "constant",
                 lambda_rule: str = "wang", neighbouring: str = "add-remove",
                 failure_prob: float = 0.05, random_state: Any = None,
                 ledger: Any = None,
                 raise_on_failure: bool = True) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.n_rounds = n_rounds
        self.tau = tau
        self.x_norm_bound = x_norm_bound
        self.split = split
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.lambda_rule = lambda_rule
        self.neighbouring = neighbouring
        self.failure_prob = failure_prob
        self.random_state = random_state
        self.ledger = ledger
        self.raise_on_failure = raise_on_failure

    def _fit(self, X: Any, y: Any) -> BoostedAdaSSP:
        Xa, ya, scaling, names = self._prepare(X, y)
        assert scaling is not None
        # every round reads [X | y] chunk by chunk and scales it in a work buffer: the rows of
        # scaling.design(X) and scaling.label(y), without a copy of the design
        src = ArraySource([Xa, ya], [f"c{j}" for j in range(Xa.shape[1] + 1)], validated=True)
        return self._run(src, scaling, names)

    def _fit_source(self, source: Any, x_cols: list[str], y_col: str) -> BoostedAdaSSP:
        """Fit from the columns of an in-memory :class:`~dpreg._source.ArraySource` (validated,
        ``[*x_cols, y_col]`` in this order: e.g. the columns of a DataFrame named by a plain
        formula, read in place).  Each round is a pass over the rows, so a file or a Spark
        DataFrame is refused."""
        if getattr(source, "kind", None) != "memory" or list(source.columns) != [*x_cols, y_col]:
            raise InvalidInputError("BoostedAdaSSP fits from the rows in memory: each boosting "
                                    "round is a pass over them")
        scaling, names = self._prepare_source(source, x_cols, y_col)
        return self._run(source, scaling, names)

    def _run(self, source: Any, scaling: Any, names: list[str]) -> BoostedAdaSSP:
        core = boosted_adassp_scaled(
            source, scaling=scaling, epsilon=self._required_epsilon(),
            delta=self._required_delta(),
            x_norm_bound=self.x_norm_bound, tau=self.tau, n_rounds=self.n_rounds,
            split=self.split, learning_rate=self.learning_rate, schedule=self.schedule,
            lambda_rule=self.lambda_rule, neighbouring=self.neighbouring,
            failure_prob=self.failure_prob, rng=self.random_state, ledger=self.ledger)
        core = core.replace(extra={k: v for k, v in core.extra.items() if k != "xtg_releases"})
        self._finish(core, scaling, names, scaling.fit_intercept)
        return self
