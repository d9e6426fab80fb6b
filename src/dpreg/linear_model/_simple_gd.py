"""``SimpleDPGradientDescent``: DP gradient descent for one feature (Alabi et al. 2022, Alg. 7)
as a scikit-learn estimator (a thin layer over :func:`dpreg.simple.gradient_descent`)."""

from __future__ import annotations

from typing import Any

from dpreg._validation import ESTIMATOR_DEPRECATED, resolve_renamed
from dpreg.linear_model._base import _SimpleRegressor
from dpreg.methods.dp_gd import SIMPLE_AUTO_ROUNDS
from dpreg.simple import gradient_descent

__all__ = ["SimpleDPGradientDescent"]


def _is_auto(value: Any) -> bool:
    return isinstance(value, str) and value == "auto"


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
    n_iter:
        Number of rounds T; ``"auto"`` (default): 80, Alabi et al.'s
        (:data:`dpreg.methods.dp_gd.SIMPLE_AUTO_ROUNDS`, the rule of ``DPGradientDescent`` and
        the ``dp-gd`` method with one x).  ``steps=`` is its deprecated spelling (one release,
        with a ``DeprecationWarning``; both at once are an error naming both).
    fit_intercept, random_state, ledger:
        As for :class:`NoisyStats`.
    raise_on_failure:
        ``True`` (default): a ⊥ release (the mechanism's failure output) raises
        :class:`~dpreg.exceptions.MechanismFailure` from ``fit``.  ``False``: ``fit`` returns
        the estimator with ``results_.failed`` True and ``results_.reason`` (``predict`` then
        raises ``MechanismFailure``).  Either way the budget stays charged: ⊥ is itself a
        private output (docs/architecture.md, "Failure (⊥) policy").
    """

    #: deprecated parameter spellings (old -> new), resolved at fit time
    _deprecated_params = {"steps": "n_iter"}

    def __init__(self, *, epsilon: float | None = None, rho: float | None = None,
                 delta: float | None = None, variant: str = "pure", bounds_X: Any = None,
                 bounds_y: Any = None, tau: float = 1.0, n_iter: int | str = "auto",
                 fit_intercept: bool = True, random_state: Any = None,
                 ledger: Any = None,
                 raise_on_failure: bool = True, steps: Any = ESTIMATOR_DEPRECATED) -> None:
        self.epsilon = epsilon
        self.rho = rho
        self.delta = delta
        self.variant = variant
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.tau = tau
        self.n_iter = n_iter
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.ledger = ledger
        self.raise_on_failure = raise_on_failure
        self.steps = steps

    def _fit(self, X: Any, y: Any) -> SimpleDPGradientDescent:
        n_iter = resolve_renamed(self.steps, self.n_iter, old="steps", new="n_iter",
                                 where=type(self).__name__,
                                 new_given=not _is_auto(self.n_iter), stacklevel=5)
        if _is_auto(n_iter):
            n_iter = SIMPLE_AUTO_ROUNDS
        x1, ya, bx, by = self._prepare(X, y)
        res = gradient_descent(x1, ya, epsilon=self.epsilon, rho=self.rho, delta=self.delta,
                               variant=self.variant, x_bounds=bx, y_bounds=by, tau=self.tau,
                               n_iter=n_iter, ledger=self.ledger, rng=self.random_state)
        return self._finish(X, res)  # type: ignore[return-value]
