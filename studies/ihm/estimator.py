"""``IterativeHessianMixing`` (Lev et al. 2026) as a scikit-learn estimator: rows scaled into
the unit ball (B = 1), y scaled to [−1, 1] (a thin layer over
:func:`studies.ihm.mechanism.hessian_mixing`).  A study estimator, not shipped in the wheel."""

from __future__ import annotations

from typing import Any

from dpreg.linear_model._base import _MultivariateBase
from studies.ihm.mechanism import hessian_mixing

__all__ = ["IterativeHessianMixing"]


class IterativeHessianMixing(_MultivariateBase):
    """Iterative Hessian mixing (Lev, Shenfeld, Srinivasan, Ligett & Wilson 2026): T Newton
    steps with Gaussian-sketched Hessians and noisy clipped-residual gradients; (ε, δ)-DP under
    add/remove neighbours by an exact Rényi-DP composition (docs/privacy/hessian_mixing.md).

    Parameters
    ----------
    epsilon, delta:
        Privacy target (δ > 0).
    bounds_X, bounds_y:
        Required public bounds; rows are scaled into the unit ball (B = 1) and y to [−1, 1].
    fit_intercept:
        Add a public ones column (default True).
    n_iter, sketch_size, tau:
        T (3), k (default the paper's ⌈6·max(d, ln(4T/ϱ))⌉, ϱ = δ/10) and the residual clip
        τ (1, in the scaled units of y).
    random_state, ledger:
        As for :class:`AdaSSP`.
    """

    _needs_y_bounds = True
    _unit_ball = True
    #: the only relation the sketch bound covers (n is private: no row-count check runs)
    neighbouring = "add-remove"

    def __init__(self, *, epsilon: float | None = None, delta: float | None = None,
                 bounds_X: Any = None, bounds_y: Any = None, fit_intercept: bool = True,
                 n_iter: int = 3, sketch_size: int | None = None, tau: float = 1.0,
                 random_state: Any = None, ledger: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.n_iter = n_iter
        self.sketch_size = sketch_size
        self.tau = tau
        self.random_state = random_state
        self.ledger = ledger

    def _fit(self, X: Any, y: Any) -> IterativeHessianMixing:
        Xa, ya, scaling, names = self._prepare(X, y)
        assert scaling is not None
        core = hessian_mixing(scaling.design(Xa), scaling.label(ya),
                              epsilon=self._required_epsilon(), delta=self._required_delta(),
                              x_norm_bound=1.0, tau=self.tau, n_iter=self.n_iter,
                              sketch_size=self.sketch_size, rng=self.random_state,
                              ledger=self.ledger)
        core = core.replace(extra={k: v for k, v in core.extra.items()
                                   if k not in ("hessians", "gradients")})
        self._finish(core, scaling, names, scaling.fit_intercept)
        return self
