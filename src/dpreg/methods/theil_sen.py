"""``theil-sen-exp``, ``theil-sen-wide``, ``theil-sen-smooth``: DP Theil-Sen with the
exponential-mechanism, θ-widened and smooth-sensitivity medians (Alabi et al. 2022, §6.2), and
the Sarathy–Vadhan DP slope interval at fit time.  Core: :func:`dpreg.simple.theil_sen`, its
pipeline :func:`~dpreg.simple.plan_theil_sen` -> :func:`~dpreg.simple.release_theil_sen`
(exact fast path in :mod:`dpreg.simple.fast`), intervals :mod:`dpreg.simple.line_with_ci` and
:mod:`dpreg.simple.ci`; estimator :class:`dpreg.linear_model.DPTheilSen`."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from dpreg import simple as ts_core
from dpreg._spec import (
    AnyOf,
    AuditCase,
    Choice,
    Constraint,
    Integer,
    IntervalSupport,
    MethodSpec,
    NoneOr,
    Option,
    Pair,
    Real,
    Release,
    ReleasePlan,
)
from dpreg.exceptions import InvalidInputError

__all__ = ["TheilSenSpec", "SPECS", "PAIRS_REASON", "warn_y_levels"]

#: why a Theil-Sen release needs the rows (no one-pass statistics from a file or Spark)
PAIRS_REASON = ("its release is a DP median over pairs of rows (all pairs or k matchings), "
                "which needs every row at once, not sums over rows")


def _levels_ok(value: Any) -> bool:
    from dpreg.simple.ties import check_y_levels

    try:
        check_y_levels(value)
    except InvalidInputError:
        return False
    return True


class _Levels(Constraint):
    """``None``, a positive count of levels or a list of distinct finite numbers."""

    text = ("None, a positive integer (the number of levels) or a list of distinct finite "
            "numbers (the response's public levels)")

    def accepts(self, value: Any) -> bool:
        return _levels_ok(value)


def warn_y_levels(name: str, options: dict[str, Any]) -> None:
    """Remove ``y_levels`` from validated ``options`` and give the public few-levels warning
    (:func:`dpreg.simple.ties.warn_few_levels`) -- before anything is charged or drawn; the
    option changes nothing else."""
    from dpreg.simple.ties import check_y_levels, warn_few_levels

    warn_few_levels(check_y_levels(options.pop("y_levels", None)), where=name)


def _with_ci(options: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    return context.get("ci_alpha", 1.0) is not None


class TheilSenSpec(MethodSpec):
    """One of the three DP Theil-Sen medians (``median``)."""

    features = "one"
    delta = "never"
    guarantee = "ε-DP"
    relation = "replace-one"
    min_rows = 2
    always_intercept = True
    pure = True
    privacy_notes = ("theil_sen.md", "theil_sen_ci.md")
    estimator = "dpreg.linear_model:DPTheilSen"
    harness = ("simple",)
    needs_rows = PAIRS_REASON
    local_options = ("pairs", "theta", "output_range", "dof")
    local_kind = "each"
    harness_engine = "median"
    target = ts_core.TS_TARGET
    moment_plan_caveat = (
        "Theil-Sen's noise depends on the density of the pairwise slopes at their median -- "
        "ties in x, a response piled up at a bound, the residuals' shape -- which means, sds "
        "and correlations do not determine: planned from moments it was within ±25 % of the "
        "releases on one real design and off by a factor 0.3-1.4 on two (docs/accuracy.md "
        "§9); a public reference sample (design=DataFrame) gives a better plan")
    interval = IntervalSupport(
        offered="Sarathy–Vadhan DP slope interval at fit time (ci_alpha=; ε/2)",
        missing=ts_core.TS_NO_INTERVAL, fit_statistics=ts_core.TS_NO_FIT_STATISTICS,
        request="ci_alpha", per_group="slope")

    def __init__(self, median: str, what: str, order: int) -> None:
        self.median = median
        self.name = f"theil-sen-{median}"  # type: ignore[misc]
        self.algorithm = f"DP Theil-Sen, {what}"  # type: ignore[misc]
        self.order = order  # type: ignore[misc]
        self.estimator_options = MappingProxyType({"median": median})  # type: ignore[misc]
        opts: dict[str, Option] = {
            "pairs": Option(AnyOf(Choice("all"), Integer(1, None)), "all",
                            "'all' pairs or the number k of random matchings" + (
                                " ('all': at most 10,000 rows, its cost grows as n²; above, "
                                "use k matchings or theil-sen-exp/-wide)"
                                if median == "smooth" else "")),
            "output_range": Option(NoneOr(Pair()), None,
                                   "public range of the released predictions"),
            "ci_method": Option(Choice("auto", "calibrated", "tight", "union"), "auto",
                                "the slope interval's construction", used_if=_with_ci,
                                when="without ci_alpha (the interval is asked for with it)"),
            "slope_range": Option(NoneOr(Pair()), None, "public range searched by the slope "
                                  "interval", used_if=_with_ci,
                                  when="without ci_alpha (the interval is asked for with it)"),
            "y_levels": Option(_Levels(), None,
                               "the response's public levels (or their number): with few "
                               "levels many pairwise slopes are exactly 0, and the fit warns "
                               "(TiedSlopesWarning) before anything is charged"),
        }
        if median == "wide":
            opts["theta"] = Option(NoneOr(Real(0.0, None, closed="neither")), None,
                                   "widening θ of the exponential-mechanism median")
        if median == "smooth":
            opts["dof"] = Option(Integer(1, None), 3,
                                 "degrees of freedom of the smooth-sensitivity t noise")
        self.options = MappingProxyType(opts)  # type: ignore[misc]
        self.local_options = tuple(  # type: ignore[misc,assignment]
            k for k in ("pairs", "theta", "output_range", "dof") if k in opts)

    # -- the release pipeline --------------------------------------------------------------
    def plan(self, *, epsilon: float, delta: float | None, n: int | None,
             x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
             fit_intercept: bool, options: Mapping[str, Any]) -> ReleasePlan:
        """:func:`~dpreg.simple.plan_theil_sen` of the line the estimator releases (the two
        predictions at 25 %/75 % of the x bounds; ``output_range`` by default
        :func:`~dpreg.simple.ranges.default_prediction_range` of ``y_bounds``); n is required
        (public under replace-one: k, the pairs check and the algorithm depend on it)."""
        from dpreg.simple.ranges import default_prediction_range

        if delta is not None:
            raise InvalidInputError(f"method {self.name!r} is pure ε-DP and takes no delta; "
                                    f"got delta={delta!r}")
        out_range = options.get("output_range")
        return ts_core.plan_theil_sen(
            epsilon=epsilon,
            output_range=default_prediction_range(y_bounds) if out_range is None else out_range,
            x_bounds=x_bounds[0], median=self.median, pairs=options.get("pairs", "all"),
            estimand="predictions", theta=options.get("theta"),
            dof=options.get("dof", 3), algorithm=options.get("algorithm", "auto"), n=n)

    def statistics(self, X: np.ndarray, y: np.ndarray, plan: ReleasePlan) -> Any:
        """:func:`~dpreg.simple.theil_sen_statistics` of the one column of ``X``."""
        return ts_core.theil_sen_statistics(np.asarray(X, dtype=np.float64).reshape(-1),
                                            np.asarray(y, dtype=np.float64), plan)

    def release(self, stats: Any, plan: ReleasePlan, rng: Any, *, seeded: bool = False
                ) -> Release:
        """:func:`~dpreg.simple.release_theil_sen`."""
        return ts_core.release_theil_sen(stats, plan, rng, seeded=seeded)

    # -- fitting ---------------------------------------------------------------------------
    def fit(self, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float | None,
            x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
            x_names: list[str], y_name: str, fit_intercept: bool, ledger: Any,
            random_state: Any, options: dict[str, Any], ci_alpha: float | None = None) -> Any:
        """The line (ε), or with ``ci_alpha`` the line (ε/2) plus the DP slope interval
        (ε/2): :func:`dpreg.simple.theil_sen_with_ci`.  ``y_levels`` only warns
        (:func:`warn_y_levels`), before anything is charged."""
        options = dict(options)
        warn_y_levels(self.name, options)
        if ci_alpha is None:
            return super().fit(X, y, epsilon=epsilon, delta=delta, x_bounds=x_bounds,
                               y_bounds=y_bounds, x_names=x_names, y_name=y_name,
                               fit_intercept=fit_intercept, ledger=ledger,
                               random_state=random_state, options=options)
        from dpreg._validation import check_epsilon
        from dpreg.simple import theil_sen_with_ci

        return theil_sen_with_ci(X[:, 0], y, epsilon=check_epsilon(epsilon), ci_alpha=ci_alpha,
                                 x_bounds=x_bounds[0], y_bounds=y_bounds, median=self.median,
                                 x_name=x_names[0], y_name=y_name, ledger=ledger,
                                 rng=random_state, **options)

    def audit_cases(self) -> tuple[AuditCase, ...]:
        """Its replicates (the one-x release), ε = 2 on the one-x pairs; with the
        exponential-mechanism median also a fixed design of 3 matchings, the slope interval
        (materialised and exact-fast samplers) and the estimator's fit (audited once)."""
        from dpreg.privacy import PureDP

        label = {"exp": "DPExpTheilSen", "wide": "DPWideTheilSen", "smooth": "DPSSTheilSen"}
        two, eps = ("p25", "p75"), PureDP(2.0)
        cases = [AuditCase(self.name, f"{label[self.median]}, all pairs, ε = 2, data in "
                           "[0, 1]², n = 20", eps, "replicates", {"epsilon": 2.0},
                           output_names=two)]
        if self.median != "exp":
            return tuple(cases)
        cases.append(AuditCase(
            "theil-sen-exp-k3", "DPExpTheilSen with 3 round-robin matchings (fixed design), "
            "ε = 2", eps, "theil-sen-matchings",
            {"epsilon": 2.0, "k": 3, "median": "exp", "design_seed": 7}, "matching",
            output_names=two))
        for rule in ("union", "tight"):
            # the same interval through the O(n)-memory exact-fast sampler at the CI's target
            # quantiles (algorithm="auto" takes it only from n >= 400, so the n = 12 pairs
            # audit the materialised path)
            for fast in (False, True):
                extra = {"algorithm": "exact-fast"} if fast else {}
                cases.append(AuditCase(
                    f"theil-sen-ci-{rule}" + ("-fast" if fast else ""),
                    f"DP Theil-Sen slope CI ({rule})"
                    + (" through the exact-fast sampler" if fast else "") + ", ε = 2, α = 0.1",
                    eps, "theil-sen-ci", {"epsilon": 2.0, "method": rule, **extra},
                    "simple-12", output_names=("low", "high")))
        cases.append(AuditCase("DPTheilSen", "DPTheilSen.fit (one x), ε = 2, n = 20", eps,
                               "estimator", {"cls": "DPTheilSen", "params": {"epsilon": 2.0},
                                             "features": "simple"},
                               kind="estimator", output_names=("intercept", "slope")))
        return tuple(cases)

    def check_rows(self, n: int, options: Mapping[str, Any]) -> None:
        """The smooth median with all pairs is limited to
        ``SMOOTH_ALL_PAIRS_MAX_N`` rows (its cost grows as n²)."""
        ts_core.check_smooth_size(int(n), pairs=options.get("pairs", "all"), median=self.median)

    # -- planning --------------------------------------------------------------------------
    def planned_interval(self, *, epsilon: float, n: int, x_bounds: list[tuple[float, float]],
                         options: Mapping[str, Any], design: Any = None) -> str | None:
        """Which slope interval ``ci_alpha=`` would give (default ``ci_method="auto"``): the
        public rule the fit consults, at the interval's ε/2."""
        if n < 2 or not math.isfinite(epsilon):
            return None
        from dpreg.simple.ci import calibrated_refusal_for
        from dpreg.simple.line_with_ci import line_ci_split

        why = calibrated_refusal_for(n=n, pairs=options.get("pairs", "all"),
                                     epsilon=line_ci_split(epsilon)[1].epsilon)
        return ("offered with ci_alpha=: calibrated (coverage close to nominal)" if not why
                else "with ci_alpha=: tight (coverage >= 1 − α, conservative) -- " + why)

    def tight_intervals(self, *, epsilon: float, sizes: Any, options: Mapping[str, Any]
                        ) -> np.ndarray:
        """Per public group size: whether the slope interval a fit at ε gets is the tight one
        (True) rather than the calibrated one -- the fit's own rule, per group."""
        from dpreg.simple.ci import resolve_ci_method
        from dpreg.simple.line_with_ci import line_ci_split

        asked = str(options.get("ci_method", "auto"))
        eps_ci = line_ci_split(epsilon)[1].epsilon
        return np.array([resolve_ci_method(asked, n=int(m), pairs=options.get("pairs", "all"),
                                           epsilon=eps_ci) == "tight" for m in sizes],
                        dtype=bool)

    def group_interval_text(self, *, level: str, epsilon: float) -> str:
        return (f"Intervals: level {level} for the slope only (Sarathy–Vadhan); per-group ε "
                f"split ε/2 = {epsilon / 2:g} for the line, ε/2 = {epsilon / 2:g} for the slope "
                "interval.")

    # -- evaluation ------------------------------------------------------------------------
    def replicates(self, x: np.ndarray, y: np.ndarray, *, epsilon: float,
                   x_bounds: tuple[float, float], y_bounds: tuple[float, float], trials: int,
                   x_eval: tuple[float, float], rng: Any, options: Mapping[str, Any]
                   ) -> np.ndarray:
        """``trials`` releases of the two predictions: the exact-fast all-pairs sampler
        (reusing its envelope) or the materialised doubled pair values (one design for all
        pairs; a fresh design of matchings per replicate)."""
        from dpreg._progress import report
        from dpreg.simple import check_pairs_arg
        from dpreg.simple.pairs import doubled_pair_values, make_design

        if options.get("output_range") is None:
            raise InvalidInputError("output_range is required for the Theil-Sen methods")
        n, t = x.size, trials
        check_pairs_arg(options.get("pairs", "all"), n)
        plan = ts_core.plan_theil_sen(
            epsilon=epsilon, output_range=options["output_range"], median=self.median,
            pairs=options.get("pairs", "all"), x_eval=x_eval, theta=options.get("theta"),
            dof=options.get("dof", 3), algorithm=options.get("algorithm", "auto"), n=n)
        stats = ts_core.theil_sen_statistics(x, y, plan)
        out = np.empty((t, 2))
        if plan.options["pairs"] == "all":
            # one design for all replicates: the library's release, t draws of each target
            release = ts_core.release_theil_sen(stats, plan, rng, size=t)
            for j, vals in enumerate(release.values["released"]):
                out[:, j] = vals
            return out
        # k matchings: a fresh design per replicate and prediction point, and its median
        o = plan.options
        lo, hi = o["output_range"]
        eps_t = plan.parts["p1"].epsilon
        what = f"Theil-Sen: {t} replicates at 2 prediction points"
        for j, xv in enumerate(o["x_eval"]):
            for r in range(t):
                # progress (silent without a hook): per replicate (a fresh design of
                # matchings each), over both prediction points; counts only
                report(what, j * t + r, 2 * t)
                d = make_design(n, o["pairs"], rng)
                vals = doubled_pair_values(x, y, d, estimand="predictions", x_eval=xv)
                out[r, j] = ts_core.dp_median_of_doubled(
                    vals, median=self.median, epsilon=eps_t, k=d.k, lo=lo, hi=hi,
                    theta=o["theta"], dof=o["dof"], rng=rng)
        report(what, 2 * t, 2 * t)
        return out

    # -- per-group fits --------------------------------------------------------------------
    def group_release(self, *, epsilon: float, x_bounds: tuple[float, float],
                      y_bounds: tuple[float, float], options: Mapping[str, Any],
                      validated: bool, delta: float | None = None
                      ) -> Callable[[np.ndarray, np.ndarray, Any], Any]:
        """``validated=False``: the functional core exactly as the estimator calls it (it
        validates the options); ``True``: the same pipeline with one public plan per group
        size (:meth:`plan`, i.e. :func:`~dpreg.simple.plan_theil_sen`) and, per group,
        :func:`~dpreg.simple.theil_sen_statistics` -> :func:`~dpreg.simple.release_theil_sen`
        (the same draws, with its privacy statement) -> :func:`~dpreg.simple.theil_sen_result`
        -- every option validated by the plan, nothing skipped."""
        from dpreg._random import is_seeded
        from dpreg.simple.ranges import default_prediction_range

        median = self.median
        out_range = options.get("output_range")
        lo, hi = default_prediction_range(y_bounds) if out_range is None else out_range
        lo, hi = float(lo), float(hi)
        pairs, dof = options.get("pairs", "all"), int(options.get("dof", 3))
        if not validated:
            from dpreg.simple import theil_sen

            return lambda x, y, g: theil_sen(
                x, y, epsilon=epsilon, output_range=(lo, hi), x_bounds=x_bounds,
                median=median, pairs=pairs, estimand="predictions",
                theta=options.get("theta"), dof=dof, rng=g)
        # one public plan per group size (the noise, k and the algorithm depend on the
        # public n only): the same plan_theil_sen -> statistics -> release_theil_sen as the
        # single fit, with the privacy statement
        plans: dict[int, ReleasePlan] = {}
        opts = {"pairs": pairs, "theta": options.get("theta"), "dof": dof,
                "output_range": (lo, hi)}

        def call(x: np.ndarray, y: np.ndarray, gen: np.random.Generator) -> Any:
            n = int(x.size)
            if n not in plans:
                plans[n] = self.plan(epsilon=epsilon, delta=None, n=n, x_bounds=[x_bounds],
                                     y_bounds=y_bounds, fit_intercept=True, options=opts)
            plan = plans[n]
            return ts_core.theil_sen_result(ts_core.release_theil_sen(
                ts_core.theil_sen_statistics(x, y, plan), plan, gen, seeded=is_seeded(gen)))

        return call


SPECS = (TheilSenSpec("exp", "exponential-mechanism median", 30),
         TheilSenSpec("wide", "θ-widened exponential-mechanism median", 40),
         TheilSenSpec("smooth", "smooth-sensitivity median with Student-t noise", 50))
