"""``DPGradientDescent``: one estimator name for both DP gradient-descent algorithms.

* One feature (``algorithm="auto"`` or ``"simple"``): Alabi et al. 2022, Alg. 7 with the descent
  sign fixed -- the line is parametrised by its predictions at 1/4 and 3/4 of the public x range,
  per-coordinate clipping τ, adaptive step, average of the last half of the iterates; ε-DP
  (``variant="pure"``), ρ-zCDP (``"zcdp"``) or (ε, δ)-DP (``"approx"``).  See
  :class:`~dpreg.linear_model.SimpleDPGradientDescent`.
* Several features (``"auto"`` or ``"clipped"``): full-batch noisy gradient descent on the
  squared loss with per-example L2 clipping and Gaussian noise, μ-GDP or ρ-zCDP accounting
  converted to (ε, δ) (Tang et al. 2023's DP-GD baseline).  See
  :class:`~dpreg.linear_model.ClippedDPGradientDescent`.

Both use replace-one neighbours by default.  The parameters of the algorithm not selected are
ignored.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpreg.exceptions import InvalidInputError
from dpreg.linear_model._base import DPRegressorBase
from dpreg.linear_model._clipped_gd import ClippedDPGradientDescent
from dpreg.linear_model._simple_gd import SimpleDPGradientDescent

__all__ = ["DPGradientDescent"]

_SIMPLE_PARAMS = ("epsilon", "rho", "delta", "variant", "bounds_X", "bounds_y", "tau", "steps",
                  "fit_intercept", "random_state", "ledger")
_CLIPPED_PARAMS = ("epsilon", "delta", "bounds_X", "bounds_y", "fit_intercept", "n_iter",
                   "clip_norm", "learning_rate", "schedule", "accounting", "output",
                   "neighbouring", "random_state", "ledger")


class DPGradientDescent(DPRegressorBase):
    """DP gradient descent for one or several features (see the module documentation).

    Parameters
    ----------
    epsilon, delta, rho:
        Privacy budget.  One feature: ``variant`` decides which are needed (pure: ε; zcdp: ρ;
        approx: ε and δ).  Several features: ε and δ (δ > 0).
    bounds_X, bounds_y:
        Public bounds (one (lo, hi) for all features or one per feature; the response).
    algorithm:
        ``"auto"`` (one feature → ``"simple"``, several → ``"clipped"``), ``"simple"`` or
        ``"clipped"``.
    variant, tau, steps:
        One-feature algorithm: budget variant, per-coordinate clip τ (1) and rounds T (80).
    n_iter, clip_norm, learning_rate, schedule, accounting, output, neighbouring:
        Several-feature algorithm: rounds (100), gradient clip (1), step size (0.5) and its
        schedule, ``"gdp"``/``"zcdp"`` accounting, ``"average"``/``"last"`` output,
        neighbouring relation.
    fit_intercept, random_state, ledger:
        As for the other estimators.
    """

    def __init__(self, *, epsilon: float | None = None, delta: float | None = None,
                 rho: float | None = None, bounds_X: Any = None, bounds_y: Any = None,
                 fit_intercept: bool = True, algorithm: str = "auto", variant: str = "pure",
                 tau: float = 1.0, steps: int = 80, n_iter: int = 100, clip_norm: float = 1.0,
                 learning_rate: float = 0.5, schedule: str = "constant",
                 accounting: str = "gdp", output: str = "average",
                 neighbouring: str = "replace-one", random_state: Any = None,
                 ledger: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.algorithm = algorithm
        self.variant = variant
        self.tau = tau
        self.steps = steps
        self.n_iter = n_iter
        self.clip_norm = clip_norm
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.accounting = accounting
        self.output = output
        self.neighbouring = neighbouring
        self.random_state = random_state
        self.ledger = ledger

    def _inner(self, n_features: int) -> DPRegressorBase:
        algo = self.algorithm
        if algo not in ("auto", "simple", "clipped"):
            raise InvalidInputError(
                f"algorithm must be 'auto', 'simple' or 'clipped'; got {algo!r}"
            )
        if algo == "auto":
            algo = "simple" if n_features == 1 else "clipped"
        if algo == "simple":
            params = {k: getattr(self, k) for k in _SIMPLE_PARAMS}
            # each budget variant uses its own parameters; the others belong to "clipped"
            unused = {"pure": ("rho", "delta"), "zcdp": ("epsilon", "delta"),
                      "approx": ("rho",)}.get(self.variant, ())
            for k in unused:
                params[k] = None
            return SimpleDPGradientDescent(**params)
        return ClippedDPGradientDescent(**{k: getattr(self, k) for k in _CLIPPED_PARAMS})

    def _fit(self, X: Any, y: Any) -> DPGradientDescent:
        Xv, _ = self._validate(X, y)  # sets n_features_in_/feature_names_in_
        inner = self._inner(Xv.shape[1])
        inner.fit(X, y)
        self.algorithm_ = type(inner).__name__
        for attr in ("coef_", "intercept_", "results_", "privacy_"):
            setattr(self, attr, getattr(inner, attr))
        self.coef_ = np.asarray(self.coef_, dtype=float)
        return self
