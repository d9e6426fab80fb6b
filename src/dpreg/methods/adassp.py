"""``adassp`` and ``boosted-adassp``: adaptive sufficient-statistics perturbation (Wang 2018)
and its boosted version (Tang et al. 2023), with Gaussian-DP accounting.  Cores:
:mod:`dpreg.multivariate.ssp`, :mod:`dpreg.multivariate.boosted`; estimators
:class:`dpreg.linear_model.AdaSSP`, :class:`~dpreg.linear_model.BoostedAdaSSP`."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from dpreg._source import ArraySource
from dpreg._spec import (
    AnyOf,
    Anything,
    AuditCase,
    Choice,
    Flag,
    GroupLine,
    Integer,
    IntervalSupport,
    MethodSpec,
    Option,
    Real,
    Release,
    ReleasePlan,
)
from dpreg._validation import check_xy
from dpreg.exceptions import InvalidInputError
from dpreg.methods._planning import first_order_cov, scaling_transform
from dpreg.multivariate import (
    PublicScaling,
    adassp_result,
    boosted,
    boosted_result,
    boosted_statistics,
    plan_adassp,
    plan_boosted,
    release_adassp,
    release_boosted,
    ssp,
    ssp_statistics,
)
from dpreg.privacy import Neighbouring, check_neighbouring


def _with_inference(options: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    return options.get("inference", "auto") is not False


__all__ = ["AdaSSPSpec", "BoostedAdaSSPSpec", "SPECS"]

_RELATION = Option(Choice("add-remove", "replace-one"), "add-remove",
                   "neighbouring relation the release is calibrated for")
_FAILURE = Option(Real(0.0, 1.0, closed="neither"), 0.05,
                  "failure probability of the λ_min lower bound (Wang's ρ)")


def _design_source(X: Any, y: Any, *, validated: bool) -> ArraySource:
    """[X | y] as an in-memory source (X n×k regressors, y the response; checked finite)."""
    Xa, ya = check_xy(X, y, x_ndim=2, min_rows=1, x_name="X", y_name="y")
    return ArraySource([Xa, ya], [f"c{j}" for j in range(Xa.shape[1] + 1)],
                       validated=validated)


def _public_n(n: int | None, rel: Neighbouring, p: int, terms: str = "") -> int | None:
    """The plan's n: public only under replace-one, where it must exceed the p parameters (the
    estimators' rule; ``terms`` says what they are, as the estimators say it); under add/remove
    n is private and never enters the plan."""
    if n is None or rel is not Neighbouring.REPLACE_ONE:
        return None
    if n <= p:
        raise InvalidInputError(f"X must have more rows than model parameters ({p}{terms}) "
                                "under replace-one neighbours (n public); DP regression needs "
                                "n > p")
    return n


def _table_plan(spec: MethodSpec, *, epsilon: float, delta: float | None,
                x_bounds: tuple[float, float], y_bounds: tuple[float, float],
                options: Mapping[str, Any]) -> ReleasePlan:
    """The spec's :meth:`~MethodSpec.plan` of a per-group table's releases (y on one x with an
    intercept) from the public inputs alone: n is left out (``None``) and added per group by
    :func:`_group_plan`, where the single fit adds it."""
    return spec.plan(epsilon=epsilon, delta=delta, n=None, x_bounds=[x_bounds],
                     y_bounds=y_bounds, fit_intercept=True, options=options)


def _group_plan(plan: ReleasePlan, n: int) -> ReleasePlan:
    """The table's plan for one group of n rows: under replace-one n is public and enters the
    plan (refused when n <= p, the estimators' rule); under add/remove n is private and the
    plan is the table's as it is."""
    rel = check_neighbouring(plan.relation)
    if rel is not Neighbouring.REPLACE_ONE:
        return plan
    p = plan.options["scaling"].n_columns  # the intercept and the table's one x
    return replace(plan, n=_public_n(n, rel, p, f": {p - 1} features + intercept"))


def _group_line(core: Any, scaling: PublicScaling) -> GroupLine:
    """The released line of a group in original units (the estimators' map back)."""
    if core.failed:
        return GroupLine(math.nan, math.nan, True, core.reason, core.privacy)
    intercept, coef = scaling.to_original(core.params.to_numpy())
    return GroupLine(float(intercept), float(coef[0]), False, "", core.privacy)


class _OnePlanPerTable(MethodSpec):
    """AdaSSP and BoostedAdaSSP per-group tables: the spec's plan once per table
    (:meth:`table_plan`), then :meth:`statistics` and :meth:`release` per group
    (:meth:`release_group_line`) -- the steps the estimator's core runs, without its per-fit
    validation, plan and charge.  ``core_label``: the core's name in the ε = ∞ warning;
    ``core_result``: its post-processing of a release (coefficients on the scaled design)."""

    core_label: ClassVar[str]
    core_result: ClassVar[Callable[..., Any]]

    def table_plan(self, *, epsilon: float, delta: float | None,
                   x_bounds: tuple[float, float], y_bounds: tuple[float, float],
                   options: Mapping[str, Any]) -> ReleasePlan:
        """:meth:`plan` once per table, without n (public inputs only)."""
        return _table_plan(self, epsilon=epsilon, delta=delta, x_bounds=x_bounds,
                           y_bounds=y_bounds, options=options)

    def release_group_line(self, plan: ReleasePlan, x: np.ndarray, y: np.ndarray, rng: Any
                           ) -> GroupLine:
        """One group from the table's plan (with the group's public n under replace-one)."""
        from dpreg._random import check_rng, is_seeded
        from dpreg.privacy.notices import warn_if_not_private

        plan = _group_plan(plan, int(x.shape[0]))
        gen = check_rng(rng)
        stats = self.statistics(x.reshape(-1, 1), y, plan)
        warn_if_not_private(plan.options["epsilon"], self.core_label)
        release = self.release(stats, plan, gen, seeded=is_seeded(rng))
        return _group_line(type(self).core_result(release, names=["x0", "x1"]),
                           plan.options["scaling"])


class AdaSSPSpec(_OnePlanPerTable):
    name = "adassp"
    target = ('the OLS coefficients of the data clipped to the bounds, shrunk toward 0 where the '
              'noisy XᵀX is below its eigenvalue floor (Wang\'s rule: by a private ridge λ) -- a '
              'bias that can dominate its error at small n·ε')
    algorithm = "AdaSSP (Wang 2018)"
    features = "any"
    delta = "always"
    guarantee = "(ε, δ)-DP via ρ-zCDP"
    relation = "add-remove"
    takes_neighbouring = True
    min_rows = 2
    privacy_notes = ("adassp.md",)
    core_label = "AdaSSP"
    core_result = adassp_result
    order = 70
    estimator = "dpreg.linear_model:AdaSSP"
    reads_columns = True
    harness = ("multivariate",)
    group_defaults = MappingProxyType({"inference": False})
    group_defaults_reason = ("a per-group table carries no AdaSSP interval (interval.per_group "
                             "is None), so the noisy yᵀy of inference=True would cost every "
                             "group's coefficients accuracy for a column the table does not have")
    options = MappingProxyType({
        "neighbouring": _RELATION,
        "failure_prob": _FAILURE,
        "inference": Option(AnyOf(Choice("auto"), Flag()), "auto",
                            "release yᵀy for the DP-aware interval (same budget)"),
        "n_boot": Option(Integer(50, 10_000_000), 2000, "bootstrap replicates of the interval",
                         used_if=_with_inference, when="with inference=False (no interval)"),
        "calibration": Option(Choice("gdp", "wang"), "gdp",
                              "exact μ-GDP calibration or Wang's constants"),
        "lambda_rule": Option(Choice("eigen-floor", "wang"), "eigen-floor",
                              "the eigenvalue floor of the noisy XᵀX (no λ_min release), or "
                              "Wang's ridge from a released λ_min"),
        "floor_scale": Option(Real(0.0, None, closed="neither"), ssp.EIGEN_FLOOR_SCALE,
                              "eigen-floor: the floor in units of σ_XX·√(d+1)",
                              used_if=lambda o, c: o.get("lambda_rule") == "eigen-floor",
                              when="with lambda_rule='wang' (it sets the eigenvalue floor)"),
    })
    interval = IntervalSupport(
        offered="parametric bootstrap with inference=True (adds a noisy yᵀy from the same "
                "budget); else none",
        missing=ssp.NO_INTERVAL, fit_statistics=ssp.NO_FIT_STATISTICS,
        request="inference")
    # Wang 2018's own algorithm: no yᵀy, the ridge from a released λ_min
    paper_options = MappingProxyType({"inference": False, "lambda_rule": "wang"})

    def plan(self, *, epsilon: float, delta: float | None, n: int | None,
             x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
             fit_intercept: bool, options: Mapping[str, Any]) -> ReleasePlan:
        """:func:`~dpreg.multivariate.plan_adassp` on the estimator's public scaling (features
        to [−1, 1] and the ones column: ‖X‖ = √p, ‖Y‖ = 1); ``inference="auto"`` is on exactly
        where the estimator turns it on (an intercept, or n public under replace-one)."""
        o = self.check_options(options, context={"n_features": len(x_bounds)}, fill=True)
        sc = PublicScaling.from_bounds(x_bounds, y_bounds, fit_intercept=fit_intercept)
        rel = check_neighbouring(o["neighbouring"])
        infer = o["inference"]
        if infer == "auto":
            infer = bool(fit_intercept) or rel is Neighbouring.REPLACE_ONE
        if delta is None:
            raise InvalidInputError("delta is required for method 'adassp' (a value in (0, 1), "
                                    "e.g. 1e-6 or smaller than 1/n)")
        if sc.label_bound is None:
            raise InvalidInputError("y_bounds is required for method 'adassp': public (lo, hi) "
                                    "bounds of the response; got None")
        return plan_adassp(
            d=sc.n_columns, x_norm_bound=sc.row_norm_bound, y_bound=sc.label_bound,
            epsilon=epsilon, delta=delta, n=_public_n(n, rel, sc.n_columns), neighbouring=rel,
            failure_prob=o["failure_prob"], inference=infer, calibration=o["calibration"],
            count_index=0 if fit_intercept else None, n_boot=o["n_boot"],
            lambda_rule=o["lambda_rule"], floor_scale=o["floor_scale"], scaling=sc)

    def statistics(self, X: np.ndarray, y: np.ndarray, plan: ReleasePlan) -> Any:
        """XᵀX, Xᵀy, yᵀy of the rows scaled by the plan's public scaling and clipped
        (:func:`~dpreg.multivariate.ssp_statistics`, the estimator's statistics step)."""
        o = plan.options
        return ssp_statistics(_design_source(X, y, validated=True),
                              x_norm_bound=o["x_norm_bound"], y_bound=o["y_bound"],
                              scaling=o["scaling"], checked=True)

    def release(self, stats: Any, plan: ReleasePlan, rng: Any, *, seeded: bool = False
                ) -> Release:
        """:func:`~dpreg.multivariate.release_adassp` (the draws and the privacy statement)."""
        return release_adassp(stats, plan, rng, seeded=seeded)

    def fit_unit_ball(self, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float,
                      rng: Any, params: Mapping[str, Any]) -> Any:
        # the authors' protocol runs the paper's algorithm (Wang's ridge, no yᵀy)
        return ssp.adassp(X, y, x_norm_bound=1.0, y_bound=1.0, epsilon=epsilon, delta=delta,
                          rng=rng, **{**self.paper_options, **params})

    def budget(self, *, epsilon: float, delta: float | None, options: Mapping[str, Any],
               n_features: int = 1) -> Any:
        """The charge of :func:`~dpreg.multivariate.ssp.adassp_budget` (the same with or
        without the interval release; ``inference="auto"`` counts as on)."""
        from dpreg._validation import check_delta, check_epsilon
        from dpreg.exceptions import InvalidInputError
        from dpreg.multivariate.ssp import adassp_budget

        if delta is None:
            raise InvalidInputError("delta is required for method 'adassp' (a value in (0, 1), "
                                    "e.g. 1e-6 or smaller than 1/n)")
        return adassp_budget(check_epsilon(epsilon), check_delta(delta, allow_zero=False),
                             calibration=str(options.get("calibration", "gdp")),
                             inference=bool(options.get("inference", "auto")),
                             lambda_rule=str(options.get("lambda_rule", "eigen-floor"))).charged

    def audit_cases(self) -> tuple[AuditCase, ...]:
        """The core under add/remove at ε = 1 (exact μ-GDP calibration), at ε = 30 (above
        Wang's range) and with Wang's constants, and the estimator's fit; δ = 1e-6, tested
        as the composed Gaussian μ."""
        coef3 = ("intercept", "x1", "x2")
        ar = "design-add-remove"
        return (
            AuditCase("adassp", "AdaSSP (add/remove, eigen floor), ε = 1, δ = 1e-06 (tested as the composed "
                      "Gaussian μ)", audit_claim(1.0), "adassp-core", pairs=ar, output_names=coef3),
            AuditCase("adassp-eps30", "AdaSSP (add/remove), ε = 30, δ = 1e-06: above Wang's "
                      "range (exact μ-GDP calibration; tested as the composed Gaussian μ)",
                      audit_claim(30.0), "adassp-core", {"epsilon": 30.0}, ar, output_names=coef3),
            AuditCase("adassp-wang", "AdaSSP with Wang's constants and λ_min ridge (add/remove), "
                      "ε = 1, δ = 1e-06 (tested as the composed Gaussian μ = √(2ρ))",
                      audit_claim(1.0, "wang"), "adassp-core",
                      {"calibration": "wang", "lambda_rule": "wang"}, ar,
                      output_names=coef3),
            AuditCase("AdaSSP", "AdaSSP.fit (add/remove), ε = 1, δ = 1e-6", audit_claim(1.0),
                      "estimator", {"cls": "AdaSSP", "params": {"epsilon": 1.0, "delta": 1e-6}},
                      ar, kind="estimator", output_names=coef3))

    def max_epsilon(self, *, delta: float | None, options: Mapping[str, Any]) -> float:
        if options.get("calibration") == "wang":
            from dpreg.multivariate.ssp import adassp_max_epsilon

            return adassp_max_epsilon(delta or 1e-6)
        return math.inf

    def expected_cov(self, *, epsilon: float, delta: float | None, n: int,
                     x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
                     fit_intercept: bool, options: Mapping[str, Any]) -> Any:
        """First-order propagation of the Gaussian XᵀX and Xᵀy noise (the release's own plan:
        :meth:`plan`'s rule, split, sensitivities and noise sds) with the regularisation at its
        value for the design: the eigenvalue floor (default) or Wang's ridge λ at the design's
        λ_min (``lambda_rule="wang"``)."""
        assert delta is not None
        plan = self.plan(epsilon=epsilon, delta=delta, n=n, x_bounds=x_bounds,
                         y_bounds=y_bounds, fit_intercept=fit_intercept, options=options)
        sc, o = plan.options["scaling"], plan.options
        p, fail = sc.n_columns, o["failure_prob"]
        sd_xx, sd_xy = plan.noise["XtX"], plan.noise["Xty"]
        # design: z = (1, u) with u uniform on [-1, 1]^d: E[zzᵀ] = diag(1, 1/3, ...)
        diag = np.full(p, 1.0 / 3.0)
        if fit_intercept:
            diag[0] = 1.0
        A = n * np.diag(diag)
        if "lambda_min" in plan.parts:
            sd_lam = plan.noise["lambda_min"]
            lam_lower = max(0.0, float(A.diagonal().min())
                            - sd_lam * math.sqrt(math.log(6.0 / delta)))
            lam = max(0.0, sd_xx * math.sqrt(p * math.log(2.0 * p * p / fail)) - lam_lower)
        else:  # the eigenvalue floor: a ridge only where the design's eigenvalues are below it
            lam = max(0.0, o["floor_scale"] * sd_xx * math.sqrt(p) - float(A.diagonal().min()))
        cov = first_order_cov(A + lam * np.eye(p), np.zeros(p), sd_xx, sd_xy)
        T = scaling_transform(sc)
        how = ("the eigenvalue floor at the design" if "lambda_min" not in plan.parts
               else "Wang's ridge λ of the design")
        return (T @ cov @ T.T, 0.0,
                f"analytic (the release's noise scales, first-order propagation, {how})")

    def expected_error(self, *, epsilon: float, delta: float | None, design: Any,
                       options: Mapping[str, Any], seed: int, detail: bool = True) -> Any:
        """:func:`~dpreg.methods._planning.adassp_error` for the λ rule these options select
        (the spec's own default when not given)."""
        from dpreg.methods._planning import adassp_error

        assert delta is not None
        opts = {k: options.get(k, o.default) for k, o in self.options.items()}
        return adassp_error(design, epsilon=epsilon, delta=delta, options=opts,
                            lambda_rule=str(opts["lambda_rule"]),
                            floor_scale=float(opts["floor_scale"]), seed=seed)


class BoostedAdaSSPSpec(_OnePlanPerTable):
    name = "boosted-adassp"
    target = ('the OLS coefficients of the data clipped to the bounds, approached by boosting rounds '
              'of ridge-regularised AdaSSP (shrinkage bias where the rounds stop short)')
    algorithm = "BoostedAdaSSP (Tang et al. 2023)"
    features = "any"
    delta = "always"
    guarantee = "(ε, δ)-DP via μ-GDP"
    relation = "add-remove"
    takes_neighbouring = True
    min_rows = 2
    privacy_notes = ("boosted_adassp.md",)
    core_label = "BoostedAdaSSP"
    core_result = boosted_result
    order = 80
    estimator = "dpreg.linear_model:BoostedAdaSSP"
    reads_columns = True  # every round a pass over the frame's columns, in memory
    harness = ("multivariate",)
    needs_rows = ("each of its boosting rounds is a pass over the rows at the current estimate "
                  "(residuals), so it needs the rows, not one set of sums")
    options = MappingProxyType({
        "n_rounds": Option(Integer(1, 100_000), 100, "boosting rounds T"),
        "tau": Option(Real(0.0, None, closed="neither"), 1.0, "residual clip τ"),
        "x_norm_bound": Option(Real(0.0, None, closed="neither"), 1.0,
                               "row-norm bound of the scaled design"),
        "split": Option(Anything("'equal', 'author' or three positive numbers (a, b, c)"),
                        "author", "budget ratio of XᵀX, the rounds and λ_min"),
        "learning_rate": Option(Real(0.0, None, closed="neither"), 1.0, "step size"),
        "schedule": Option(Choice("constant", "1/t", "1/sqrt(t)"), "constant", "step schedule"),
        "lambda_rule": Option(Choice("wang", "literal"), "wang", "ridge rule"),
        "neighbouring": _RELATION,
        "failure_prob": _FAILURE,
    })
    interval = IntervalSupport(
        missing=boosted.NO_INTERVAL, fit_statistics=boosted.NO_FIT_STATISTICS)

    def plan(self, *, epsilon: float, delta: float | None, n: int | None,
             x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
             fit_intercept: bool, options: Mapping[str, Any]) -> ReleasePlan:
        """:func:`~dpreg.multivariate.plan_boosted` on the estimator's public scaling (rows into
        the unit ball, the label to [−1, 1] where ``y_bounds`` are given)."""
        o = self.check_options(options, context={"n_features": len(x_bounds)}, fill=True)
        sc = PublicScaling.from_bounds(x_bounds, y_bounds, fit_intercept=fit_intercept,
                                       unit_ball=True)
        rel = check_neighbouring(o["neighbouring"])
        if delta is None:
            raise InvalidInputError("delta is required for method 'boosted-adassp' (a value in "
                                    "(0, 1), e.g. 1e-6 or smaller than 1/n)")
        return plan_boosted(
            d=sc.n_columns, epsilon=epsilon, delta=delta, x_norm_bound=o["x_norm_bound"],
            tau=o["tau"], n_rounds=o["n_rounds"], split=o["split"],
            learning_rate=o["learning_rate"], schedule=o["schedule"],
            lambda_rule=o["lambda_rule"], neighbouring=rel, failure_prob=o["failure_prob"],
            n=_public_n(n, rel, sc.n_columns), scaling=sc)

    def statistics(self, X: np.ndarray, y: np.ndarray, plan: ReleasePlan) -> Any:
        """The rows' passes of the plan (:func:`~dpreg.multivariate.boosted_statistics`): XᵀX
        now, each round's Xᵀg at the released θ in the release."""
        return boosted_statistics(_design_source(X, y, validated=True), plan)

    def release(self, stats: Any, plan: ReleasePlan, rng: Any, *, seeded: bool = False
                ) -> Release:
        """:func:`~dpreg.multivariate.release_boosted` (the draws and the privacy statement)."""
        return release_boosted(stats, plan, rng, seeded=seeded)

    def fit_unit_ball(self, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float,
                      rng: Any, params: Mapping[str, Any]) -> Any:
        return boosted.boosted_adassp(X, y, x_norm_bound=1.0, epsilon=epsilon, delta=delta,
                                      rng=rng, **{"tau": 1.0, **params})

    def budget(self, *, epsilon: float, delta: float | None, options: Mapping[str, Any],
               n_features: int = 1) -> Any:
        from dpreg._validation import check_delta, check_epsilon, check_int
        from dpreg.exceptions import InvalidInputError
        from dpreg.multivariate.boosted import boosted_budget, boosted_split

        if delta is None:
            raise InvalidInputError("delta is required for method 'boosted-adassp' (a value in "
                                    "(0, 1), e.g. 1e-6 or smaller than 1/n)")
        rounds = check_int(options.get("n_rounds", 100), "n_rounds", minimum=1,
                           maximum=100_000)
        return boosted_budget(check_epsilon(epsilon), check_delta(delta, allow_zero=False),
                              boosted_split(options.get("split", "author"), rounds),
                              rounds).charged

    def audit_cases(self) -> tuple[AuditCase, ...]:
        """The core (T = 3) and the estimator's fit under add/remove, ε = 1, δ = 1e-6, tested
        as μ-GDP (the core's output: the coefficients and the T noisy Xᵀg vectors)."""
        from dpreg.privacy import GDP

        gdp = GDP.from_approx(1.0, 1e-6)
        return (
            AuditCase("boosted-adassp", "BoostedAdaSSP (add/remove), T = 3, ε = 1, δ = 1e-06 "
                      "(μ-GDP)", gdp, "boosted-core", pairs="design-add-remove"),
            AuditCase("BoostedAdaSSP", "BoostedAdaSSP.fit (add/remove), T = 3, ε = 1, δ = 1e-6",
                      gdp, "estimator", {"cls": "BoostedAdaSSP",
                                         "params": {"epsilon": 1.0, "delta": 1e-6,
                                                    "n_rounds": 3}},
                      "design-add-remove", kind="estimator",
                      output_names=("intercept", "x1", "x2")))


def audit_claim(epsilon: float, calibration: str = "gdp") -> Any:
    """What AdaSSP's audit tests at ``epsilon`` (δ = 1e-6): the composed μ-GDP of its three
    Gaussians (Wang's constants: zCDP ρ, tested as μ = √(2ρ))."""
    from dpreg.multivariate.ssp import adassp_guarantee
    from dpreg.privacy import GDP, ZCDP

    charged, _ = adassp_guarantee(epsilon, 1e-6, calibration=calibration)
    if isinstance(charged, ZCDP):
        return GDP(math.sqrt(2.0 * charged.rho))
    return charged


SPECS = (AdaSSPSpec(), BoostedAdaSSPSpec())
