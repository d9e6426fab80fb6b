"""``TukeyEM`` (Amin et al. 2023) as a scikit-learn estimator: no bounds needed; when given,
data are clamped and scaled with them (a thin layer over :func:`dpreg.multivariate.tukey_em`)."""

from __future__ import annotations

from typing import Any

from dpreg.linear_model._base import _check_fit_intercept, _MultivariateBase
from dpreg.multivariate import tukey_em

__all__ = ["TukeyEM"]


class TukeyEM(_MultivariateBase):
    """TukeyEM (Amin et al. 2023): private Tukey-depth aggregation of OLS models; (ε, δ)-DP.

    The guarantee is for replace-one neighbours with n public (see ``docs/privacy/tukeyem.md``).
    If the propose-test-release check fails, ``fit`` raises
    :class:`~dpreg.exceptions.MechanismFailure` (the budget stays spent).

    Parameters
    ----------
    epsilon, delta:
        Privacy target (required; δ > 0, the paper's experiments use δ = 1e−5).
    n_models:
        ``"auto"`` (default) or m >= 8 models on disjoint random batches of ⌊n/m⌋ rows (an
        integer needs n >= m·(d + 1) with an intercept, else ``InvalidInputError``).
        ``"auto"`` chooses m from the public n, the number of design columns, ε and δ: the
        rule min(1000, ⌊n/(2(d + 1))⌋), raised to the smallest m whose propose-test-release
        step is predicted to pass with probability >= 0.9999 by a public model of the depth
        statistic (simulated Gaussian models, no data) -- Amin et al.'s "smallest m that
        passes" -- and never above ⌊n/(d + 1)⌋.  It costs no budget: TukeyEM's guarantee is
        for replace-one neighbours with n public, and the model reads no data
        (:func:`dpreg.auto.rules.tukey_auto_n_models`; ``results_.privacy.details`` records
        m).  With too few models PTR fails, with too many each model is fitted on too few
        rows.
    bounds_X, bounds_y:
        Optional public bounds; when given, data are clamped and scaled with them (the
        method itself needs no bounds).
    fit_intercept, random_state, ledger:
        As for :class:`AdaSSP`.
    raise_on_failure:
        ``True`` (default): a ⊥ release (the mechanism's failure output) raises
        :class:`~dpreg.exceptions.MechanismFailure` from ``fit``.  ``False``: ``fit`` returns
        the estimator with ``results_.failed`` True and ``results_.reason`` (``predict`` then
        raises ``MechanismFailure``).  Either way the budget stays charged: ⊥ is itself a
        private output (docs/architecture.md, "Failure (⊥) policy").
    """

    _needs_y_bounds = False

    def __init__(self, *, epsilon: float | None = None, delta: float | None = None,
                 n_models: int | str = "auto",
                 bounds_X: Any = None, bounds_y: Any = None, fit_intercept: bool = True,
                 random_state: Any = None, ledger: Any = None,
                 raise_on_failure: bool = True) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.n_models = n_models
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.ledger = ledger
        self.raise_on_failure = raise_on_failure

    def _fit(self, X: Any, y: Any) -> TukeyEM:
        Xa, ya, scaling, names = self._prepare(X, y, require_x_bounds=False)
        fit_intercept = _check_fit_intercept(self.fit_intercept)
        Z = self._design(Xa, scaling, fit_intercept)
        ys = scaling.label(ya) if scaling is not None else ya
        core = tukey_em(Z, ys, epsilon=self._required_epsilon(), delta=self._required_delta(),
                        n_models=self.n_models,
                        rng=self.random_state, ledger=self.ledger)
        self._finish(core, scaling, names, fit_intercept)
        return self
