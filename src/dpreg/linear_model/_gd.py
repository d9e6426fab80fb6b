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

Both use replace-one neighbours by default.  A parameter the selected algorithm (or budget
variant) does not use, set away from its default, is an error naming it, raised before
anything is charged -- never silently dropped: the options by the ``dp-gd`` spec's own rule
(``used_if``, the rule ``regress`` applies), the budget parameters of the one-x algorithm by
:func:`dpreg.simple.variant_budget`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpreg import methods
from dpreg._validation import ESTIMATOR_DEPRECATED, resolve_renamed
from dpreg.exceptions import InvalidInputError, InvalidParameterError
from dpreg.linear_model._base import DPRegressorBase
from dpreg.linear_model._clipped_gd import ClippedDPGradientDescent
from dpreg.linear_model._simple_gd import SimpleDPGradientDescent
from dpreg.methods.dp_gd import SIMPLE_OPTIONS, rounds

__all__ = ["DPGradientDescent"]

_SIMPLE_PARAMS = ("epsilon", "rho", "delta", "variant", "bounds_X", "bounds_y", "tau",
                  "fit_intercept", "random_state", "ledger", "raise_on_failure")
_CLIPPED_PARAMS = ("epsilon", "delta", "bounds_X", "bounds_y", "fit_intercept", "n_iter",
                   "clip_norm", "learning_rate", "schedule", "accounting", "output",
                   "neighbouring", "random_state", "ledger", "raise_on_failure")


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
    n_iter:
        Rounds T of either algorithm; ``"auto"`` (default): 80 with one feature (Alabi et
        al.), and with several 1600 with the public clip rule of
        :func:`dpreg.multivariate.dpgd.dpgd_schedule`.  ``steps=`` is its deprecated spelling
        (one release, with a ``DeprecationWarning``; both at once are an error).
    variant, tau:
        One-feature algorithm: budget variant and per-coordinate clip τ (1).
    clip_norm, learning_rate, schedule, accounting, output, neighbouring:
        Several-feature algorithm: gradient clip (``"auto"``: the public rule above, grown
        for a widely spread label from a 5% release of its spread; ``"public"``: the public
        rule alone), step
        size (0.5) and its
        schedule, ``"gdp"``/``"zcdp"`` accounting, ``"average"``/``"last"`` output,
        neighbouring relation.
    fit_intercept, random_state, ledger:
        As for the other estimators.
    raise_on_failure:
        ``True`` (default): a ⊥ release (the mechanism's failure output) raises
        :class:`~dpreg.exceptions.MechanismFailure` from ``fit``.  ``False``: ``fit`` returns
        the estimator with ``results_.failed`` True and ``results_.reason`` (``predict`` then
        raises ``MechanismFailure``).  Either way the budget stays charged: ⊥ is itself a
        private output (docs/architecture.md, "Failure (⊥) policy").
    """

    #: deprecated parameter spellings (old -> new), resolved at fit time
    _deprecated_params = {"steps": "n_iter"}
    _own_unused_check = True  # the spec's rule, per algorithm, in _inner

    def __init__(self, *, epsilon: float | None = None, delta: float | None = None,
                 rho: float | None = None, bounds_X: Any = None, bounds_y: Any = None,
                 fit_intercept: bool = True, algorithm: str = "auto", variant: str = "pure",
                 tau: float = 1.0, n_iter: int | str = "auto",
                 clip_norm: float | str = "auto",
                 learning_rate: float = 0.5, schedule: str = "constant",
                 accounting: str = "gdp", output: str = "average",
                 neighbouring: str = "replace-one", random_state: Any = None,
                 ledger: Any = None,
                 raise_on_failure: bool = True, steps: Any = ESTIMATOR_DEPRECATED) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.algorithm = algorithm
        self.variant = variant
        self.tau = tau
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
        self.steps = steps

    def _inner(self, n_features: int) -> DPRegressorBase:
        """The estimator of the selected algorithm, after refusing every parameter it would
        not use (before anything is read, charged or drawn)."""
        algo = self.algorithm
        if algo not in ("auto", "simple", "clipped"):
            raise InvalidInputError(
                f"algorithm must be 'auto', 'simple' or 'clipped'; got {algo!r}"
            )
        spec = methods.get("dp-gd")
        n_iter = resolve_renamed(self.steps, self.n_iter, old="steps", new="n_iter",
                                 where="DPGradientDescent", new_given=self.n_iter != "auto",
                                 stacklevel=6)
        params = {k: getattr(self, k) for k in spec.options}
        params["n_iter"] = n_iter
        given = {k: v for k, v in params.items()
                 if v is not spec.options[k].default and v != spec.options[k].default}
        runs = algo if algo != "auto" else ("simple" if n_features == 1 else "clipped")
        for k, value in given.items():
            if not spec.uses(k, given, {"n_features": n_features}):
                owner = ("the one-x algorithm ('simple')" if k in SIMPLE_OPTIONS
                         else "the several-x algorithm ('clipped')")
                raise InvalidParameterError(
                    f"{k}={value!r} is not used by DPGradientDescent with {n_features} "
                    f"regressor(s) and algorithm={algo!r} (it runs {runs!r}); {k} belongs to "
                    f"{owner}: remove it (or leave it at its default "
                    f"{spec.options[k].default!r})")
        algo = runs
        inner = {k: getattr(self, k) for k in _SIMPLE_PARAMS + _CLIPPED_PARAMS}
        inner["n_iter"] = rounds(given, algo)
        if algo == "simple":
            # the budget parameters go to the core as given: its variant rule
            # (dpreg.simple.variant_budget) refuses any the variant does not use
            return SimpleDPGradientDescent(n_iter=inner["n_iter"],
                                           **{k: inner[k] for k in _SIMPLE_PARAMS})
        if self.rho is not None:
            raise InvalidParameterError(
                f"rho={self.rho!r} is not used by DPGradientDescent's several-x algorithm "
                "('clipped': it takes epsilon and delta; rho belongs to the one-x algorithm's "
                "variant='zcdp'); remove it")
        return ClippedDPGradientDescent(**{k: inner[k] for k in _CLIPPED_PARAMS})

    def _fit(self, X: Any, y: Any) -> DPGradientDescent:
        Xv, _ = self._validate(X, y)  # sets n_features_in_/feature_names_in_
        inner = self._inner(Xv.shape[1])
        inner.fit(X, y)
        self.algorithm_ = type(inner).__name__
        for attr in ("coef_", "intercept_", "results_", "privacy_"):
            if hasattr(inner, attr):
                setattr(self, attr, getattr(inner, attr))
            elif hasattr(self, attr):  # ⊥ with raise_on_failure=False: no line
                delattr(self, attr)
        if hasattr(self, "coef_"):
            self.coef_ = np.asarray(self.coef_, dtype=float)
        return self
