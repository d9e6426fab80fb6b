"""``tukey-em``: the exponential mechanism over approximate Tukey depth of subsample OLS
models, with propose-test-release (Amin, Joseph, Ribero & Vassilvitskii 2023).  Core:
:mod:`dpreg.multivariate.tukey` (+ :mod:`dpreg.mechanisms.ptr`); estimator
:class:`dpreg.linear_model.TukeyEM`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from dpreg._spec import (
    AnyOf,
    AuditCase,
    Choice,
    Integer,
    IntervalSupport,
    MethodSpec,
    Option,
    Release,
    ReleasePlan,
)
from dpreg.exceptions import InvalidInputError
from dpreg.multivariate import (
    MIN_MODELS,
    PublicScaling,
    plan_tukey_em,
    release_tukey_em,
    tukey,
    tukey_auto_n_models,
    tukey_em,
    tukey_pass_probability,
    tukey_statistics,
)

__all__ = ["TukeyEMSpec", "SPECS"]


class TukeyEMSpec(MethodSpec):
    name = "tukey-em"
    target = ('a Tukey median of OLS fits on disjoint subsets of the rows (close to the OLS '
              'coefficients under a linear model with symmetric errors)')
    algorithm = "TukeyEM (Amin et al. 2023)"
    features = "any"
    delta = "always"
    guarantee = "(ε, δ)-DP"
    relation = "replace-one"
    min_rows = 16
    privacy_notes = ("tukeyem.md", "ptr.md")
    order = 90
    estimator = "dpreg.linear_model:TukeyEM"
    harness = ("multivariate",)
    needs_bounds = False  # the Tukey depth is scale free: no public bounds are needed
    needs_rows = ("it fits models on disjoint random subsets of the rows and releases a "
                  "Tukey-depth median of them, which needs the rows themselves")
    options = MappingProxyType({
        "n_models": Option(AnyOf(Choice("auto"), Integer(8, None)), "auto",
                           "number m of subsample models ('auto': from public n and d)"),
    })
    interval = IntervalSupport(
        missing=tukey.NO_INTERVAL, fit_statistics=tukey.NO_FIT_STATISTICS)
    moment_plan_caveat = (
        "TukeyEM's noise depends on the spread of OLS fits on small subsets of the rows, i.e. "
        "on the residuals' shape, which means, sds and correlations do not determine: its "
        "P(⊥) (the PTR pass model) is reliable, its sd was off by up to a factor 2 on real "
        "designs (docs/accuracy.md §9); a public reference sample (design=DataFrame) gives a "
        "better plan")

    paper_options = MappingProxyType({"n_models": "rule"})

    def plan(self, *, epsilon: float, delta: float | None, n: int | None,
             x_bounds: list[tuple[float, float]] | None, y_bounds: tuple[float, float] | None,
             fit_intercept: bool, options: Mapping[str, Any],
             n_features: int | None = None) -> ReleasePlan:
        """:func:`~dpreg.multivariate.plan_tukey_em` on the estimator's design: with
        ``x_bounds`` the public scaling (clamp and rescale; the label too when ``y_bounds`` are
        given), without them the regressors as given (``n_features`` of them) and a ones
        column first when ``fit_intercept``.  ``n`` is required: it is public under TukeyEM's
        replace-one guarantee and sets the number of models."""
        o = self.check_options(options, fill=True)
        if delta is None:
            raise InvalidInputError("delta is required for method 'tukey-em' (a value in "
                                    "(0, 1), e.g. 1e-5 or smaller than 1/n)")
        if n is None:
            raise InvalidInputError("n is required for method 'tukey-em': the number of rows, "
                                    "public under its replace-one guarantee; got None")
        scaling = None
        if x_bounds is None:
            if y_bounds is not None:
                raise InvalidInputError(
                    "bounds_X must be given together with bounds_y (or leave both None): the "
                    "public scaling needs the feature bounds; got bounds_X=None")
            if n_features is None:
                raise InvalidInputError("n_features is required without x_bounds: the number "
                                        "of regressors; got None")
            k = int(n_features)
        else:
            scaling = PublicScaling.from_bounds(x_bounds, y_bounds, fit_intercept=fit_intercept)
            k = len(x_bounds)
        d = k + (1 if fit_intercept else 0)
        return plan_tukey_em(n=n, d=d, epsilon=epsilon, delta=delta,
                             n_models=o["n_models"], scaling=scaling,
                             intercept_column=scaling is None and bool(fit_intercept))

    def statistics(self, X: np.ndarray, y: np.ndarray, plan: ReleasePlan) -> Any:
        """The design of the plan's public scaling (or ones column), checked
        (:func:`~dpreg.multivariate.tukey_statistics`, the estimator's design step)."""
        return tukey_statistics(X, y, plan)

    def release(self, stats: Any, plan: ReleasePlan, rng: Any, *, seeded: bool = False
                ) -> Release:
        """:func:`~dpreg.multivariate.release_tukey_em` (the partition, PTR and its ⊥, the
        exponential mechanism, the privacy statement)."""
        return release_tukey_em(stats, plan, rng, seeded=seeded)

    def audit_cases(self) -> tuple[AuditCase, ...]:
        """The core and the estimator's fit with m = 100 models, ε = 5, δ = 1e-5."""
        from dpreg.privacy import ApproxDP

        claim = ApproxDP(5.0, 1e-5)
        return (
            AuditCase("tukey-em", "TukeyEM, m = 100 models, ε = 5, δ = 1e-05", claim,
                      "tukey-core", {"n_models": 100}, "tukey",
                      output_names=("intercept", "x1")),
            AuditCase("TukeyEM", "TukeyEM.fit, m = 100, ε = 5, δ = 1e-05", claim, "estimator",
                      {"cls": "TukeyEM", "params": {"epsilon": 5.0, "delta": 1e-5,
                                                    "n_models": 100}},
                      "tukey-estimator", kind="estimator", output_names=("intercept", "x1")))

    def paper_model_count(self, requested: Any, n: int, d: int, *, epsilon: float,
                          delta: float) -> int | str | None:
        """The number of models of a reproduction: ``"rule"`` = min(1000, ⌊n/(2d)⌋) (each
        model on about 2d rows of a d-column design; a public function of n and d), ``"auto"``
        (the estimator's own public pass model), or an integer; ``None`` when fewer than 8
        models fit (TukeyEM cannot run: a ⊥ of the protocol, no release)."""
        if requested == "auto":
            return "auto" if tukey_auto_n_models(n, d, epsilon=epsilon,
                                                 delta=delta) >= MIN_MODELS else None
        m = min(1000, n // (2 * d)) if requested == "rule" else int(requested)
        return m if m >= MIN_MODELS else None

    def fit_unit_ball(self, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float,
                      rng: Any, params: Mapping[str, Any]) -> Any:
        opts = dict(params)
        n, d = X.shape
        m = self.paper_model_count(opts.pop("n_models", "auto"), n, d, epsilon=epsilon,
                                   delta=delta)
        if m is None:
            return None
        return tukey_em(X, y, n_models=m, epsilon=epsilon, delta=delta, rng=rng, **opts)

    def n_models(self, n: int, d: int, *, epsilon: float, delta: float,
                 options: Mapping[str, Any]) -> int:
        """The number of models a fit with these options uses (public n and d columns)."""
        m = options.get("n_models", "auto")
        if m == "auto":
            return tukey_auto_n_models(n, d, epsilon=epsilon, delta=delta)
        return int(m)

    def failure_probability(self, *, epsilon: float, delta: float | None, n: int, d: int,
                            options: Mapping[str, Any]) -> float | None:
        """1 − the analytic PTR pass probability at the model count a fit would use
        (:meth:`n_models`: ``"auto"`` is the estimator's own public rule; ``d`` counts the
        design's columns, the intercept included); 1 when fewer than 8 models fit."""
        if delta is None:
            return None
        m = self.n_models(n, d, epsilon=epsilon, delta=float(delta), options=options)
        if m < MIN_MODELS:
            return 1.0
        return 1.0 - tukey_pass_probability(m, d, epsilon=epsilon, delta=float(delta))


SPECS = (TukeyEMSpec(),)
