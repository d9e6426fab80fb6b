"""``noisy-stats`` and ``dp-intercept``: noisy sufficient statistics of one x (Alabi, McMillan,
Sarathy, Smith & Vadhan 2022, Alg. 1 and §6.4).  Core: :mod:`dpreg.simple._noisy_stats`;
estimator: :class:`dpreg.linear_model.NoisyStats` (dp-intercept: the core alone)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from dpreg import simple as core
from dpreg._spec import (
    AnyOf,
    Anything,
    AuditCase,
    Choice,
    Flag,
    GroupBatch,
    GroupLines,
    Integer,
    IntervalSupport,
    MethodSpec,
    Option,
    Release,
    ReleasePlan,
)
from dpreg.exceptions import InvalidInputError


def _with_inference(options: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    return options.get("inference", "auto") is not False


__all__ = ["NoisyStatsSpec", "DPInterceptSpec", "SPECS", "line_statistics", "release_lines",
           "release_levels"]

_SIMPLE = "ε-DP"


def line_statistics(batch: GroupBatch) -> core.LineStatistics:
    """(n, x̄, ȳ, nvar, ncov) of every active group's data clipped to the public bounds, by
    segment operations bit-identical to the single fit's NumPy code
    (:func:`~dpreg.simple._noisy_stats.noisy_stats_statistics`)."""
    from dpreg.simple import clipped_centred

    xb, yb = batch.x_bounds, batch.y_bounds
    starts, sel = batch.starts, batch.active
    # x̄, ȳ of the clipped data and the centred clipped values (the reference's np.mean and
    # subtraction, bit for bit, in one pass per column)
    xbar, dx = clipped_centred(batch.x, starts, *xb)
    ybar, dy = clipped_centred(batch.y, starts, *yb)
    nvar = np.empty(sel.size)
    ncov = np.empty(sel.size)
    dot = np.dot
    begin, end = starts[sel].tolist(), starts[sel + 1].tolist()
    for j in range(sel.size):  # BLAS dot products, as the single fit computes them
        a, b = begin[j], end[j]
        da = dx[a:b]
        nvar[j] = dot(da, da)
        ncov[j] = dot(da, dy[a:b])
    return core.LineStatistics(np.diff(starts)[sel].astype(np.int64), xbar[sel], ybar[sel],
                               nvar, ncov)


def release_lines(stats: core.LineStatistics, *, epsilon: float, x_bounds: tuple[float, float],
                  y_bounds: tuple[float, float], rng: Any) -> GroupLines:
    """DPSuffStats for a batch of groups from their clipped statistics:
    :func:`~dpreg.simple._noisy_stats.release_noisy_stats` on the batch (thirds of ε; seeded:
    each group's own keys, so each row equals the group's own fit)."""
    from dpreg._validation import check_epsilon
    from dpreg.privacy import PureDP
    from dpreg.simple import default_x_eval

    parts = PureDP(check_epsilon(epsilon)).split([1, 1, 1])
    draw = core.release_noisy_stats(stats, x_bounds=x_bounds, y_bounds=y_bounds, parts=parts,
                                    rng=rng)
    slope, intercept, reason = draw["slope"], draw["intercept"], draw["reason"]
    with np.errstate(invalid="ignore", over="ignore"):
        preds = {float(v): slope * v + intercept for v in default_x_eval(x_bounds)}
    return GroupLines(slope, intercept, preds, reason == "", reason.tolist())


def release_levels(stats: core.LineStatistics, *, epsilon: float,
                   x_bounds: tuple[float, float], y_bounds: tuple[float, float],
                   rng: Any) -> GroupLines:
    """DPIntercept for a batch of groups from the means of their clipped y:
    :func:`~dpreg.simple._noisy_stats.release_dp_intercept` on the batch."""
    from dpreg._validation import check_epsilon
    from dpreg.simple import default_x_eval

    level = core.release_dp_intercept(np.asarray(stats.ybar, dtype=np.float64),
                                      np.asarray(stats.n, dtype=np.int64), y_bounds=y_bounds,
                                      epsilon=check_epsilon(epsilon), rng=rng)
    g = level.size
    preds = {float(v): level for v in default_x_eval(x_bounds)}
    return GroupLines(np.zeros(g), level, preds, np.ones(g, dtype=bool), [""] * g)


class NoisyStatsSpec(MethodSpec):
    name = "noisy-stats"
    target = ('the OLS line of the data clipped to the bounds (from its noisy sufficient statistics)')
    algorithm = "DPSuffStats, noisy sufficient statistics (Alabi et al. 2022, Alg. 1)"
    features = "one"
    delta = "never"
    guarantee = _SIMPLE
    relation = "replace-one"
    min_rows = 2
    always_intercept = True
    pure = True
    privacy_notes = ("noisy_stats.md",)
    order = 10
    estimator = "dpreg.linear_model:NoisyStats"
    harness = ("simple",)
    spark_native = True
    local_options = ()
    local_kind = "vector"
    harness_engine = "replicates"
    group_defaults = MappingProxyType({"inference": False})
    group_defaults_reason = ("a table shows intervals only when it asks for them (ci_alpha=, CLI "
                             "--ci), which switches inference on; without them the interval's "
                             "statistics would cost every group's line accuracy (ε split five "
                             "ways instead of thirds) for columns the table does not have, and "
                             "the vectorised per-group release is the plain one")
    options = MappingProxyType({
        "inference": Option(AnyOf(Choice("auto"), Flag()), "auto",
                            "release the statistics of the DP-aware interval (same ε)"),
        "n_boot": Option(Integer(50, 10_000_000), 2000, "bootstrap replicates of the interval",
                         used_if=_with_inference, when="with inference=False (no interval)"),
    })
    interval = IntervalSupport(
        offered="parametric bootstrap with inference=True (ε split five ways); else none",
        missing=core.NS_NO_INTERVAL, fit_statistics=core.NS_NO_FIT_STATISTICS,
        request="inference", per_group="slope and predictions", per_group_min_rows=3)

    # -- the release pipeline ----------------------------------------------------------------
    def plan(self, *, epsilon: float, delta: float | None, n: int | None,
             x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
             fit_intercept: bool, options: Mapping[str, Any]) -> ReleasePlan:
        """:func:`~dpreg.simple._noisy_stats.plan_noisy_stats` (``inference="auto"``: on
        wherever the interval rule can offer an interval at n, i.e. unless the public inputs
        already refuse it)."""
        infer = options.get("inference", "auto")
        if infer == "auto":
            infer = n is not None and n >= 3 and not core.interval_refusal(
                n, epsilon, x_bounds[0])
        return core.plan_noisy_stats(epsilon=epsilon, x_bounds=x_bounds[0], y_bounds=y_bounds,
                                     n=n, release_stats=True, inference=bool(infer))

    def statistics(self, X: np.ndarray, y: np.ndarray, plan: ReleasePlan) -> Any:
        """(n, x̄, ȳ, nvar, ncov) of the clipped data and, with ``inference``, nvar(y)."""
        xb, yb = plan.options["x_bounds"], plan.options["y_bounds"]
        x = np.asarray(X, dtype=np.float64).reshape(-1)
        stats = core.noisy_stats_statistics(x, np.asarray(y, dtype=np.float64), xb, yb)
        nvar_y = None
        if plan.options["inference"]:
            yc = np.clip(y, *yb)
            nvar_y = float(np.dot(yc - yc.mean(), yc - yc.mean()))
        return stats, nvar_y

    def release(self, stats: Any, plan: ReleasePlan, rng: Any, *, seeded: bool = False
                ) -> Release:
        line, nvar_y = stats
        return core.release_line(line, nvar_y, plan, rng, seeded=seeded)

    def audit_cases(self) -> tuple[AuditCase, ...]:
        """Its replicates (the one-x release) and the estimator's fit, ε = 2 on the one-x
        pairs."""
        from dpreg.privacy import PureDP

        return (AuditCase("noisy-stats", "DPSuffStats, ε = 2, data in [0, 1]², n = 20",
                          PureDP(2.0), "replicates", {"epsilon": 2.0},
                          output_names=("p25", "p75")),
                AuditCase("NoisyStats", "NoisyStats.fit (one x), ε = 2, n = 20", PureDP(2.0),
                          "estimator", {"cls": "NoisyStats", "params": {"epsilon": 2.0},
                                        "features": "simple"},
                          kind="estimator", output_names=("intercept", "slope")))

    def group_interval_text(self, *, level: str, epsilon: float) -> str:
        tot = sum(core.INFERENCE_SPLIT)
        parts = ", ".join(f"{name} ε×{w / tot:g}" for name, w in
                          zip(("ncov", "nvar", "intercept", "nvar(y)", "x̄"),
                              core.INFERENCE_SPLIT))
        return (f"Intervals: level {level} for the slope and the predictions, from the "
                f"inference=True release (per-group ε split {parts}); the intervals are "
                "post-processing of those statistics (DP-aware parametric bootstrap), no extra "
                "budget.")

    def release_groups(self, batch: GroupBatch) -> GroupLines:
        stats = line_statistics(batch)
        return release_lines(stats, epsilon=batch.epsilon, x_bounds=batch.x_bounds,
                             y_bounds=batch.y_bounds, rng=batch.randomness(batch.active))

    def replicates(self, x: np.ndarray, y: np.ndarray, *, epsilon: float,
                   x_bounds: tuple[float, float], y_bounds: tuple[float, float], trials: int,
                   x_eval: tuple[float, float], rng: Any, options: Mapping[str, Any]
                   ) -> np.ndarray:
        from dpreg.privacy import PureDP

        parts = PureDP(epsilon).split([1, 1, 1])
        draw = core.release_noisy_stats(
            core.noisy_stats_statistics(x, y, x_bounds, y_bounds).replicate(trials),
            x_bounds=x_bounds, y_bounds=y_bounds, parts=parts, rng=rng)
        out = draw["slope"][:, None] * np.asarray(x_eval) + draw["intercept"][:, None]
        out[draw["reason"] != ""] = np.nan
        return out

    batched_replicates = True

    def replicates_batch(self, data: Any, *, epsilon: float, x_bounds: tuple[float, float],
                         y_bounds: tuple[float, float], trials: int,
                         x_eval: tuple[float, float], rngs: Any, options: Mapping[str, Any]
                         ) -> list[np.ndarray]:
        from dpreg.mechanisms.batch import RowRandomness

        return _noisy_stats_many(list(data), x_bounds, y_bounds, epsilon, trials, x_eval,
                                 RowRandomness.seeded(list(rngs)))

    def release_line_statistics(self, stats: core.LineStatistics, *, epsilon: float,
                                x_bounds: tuple[float, float], y_bounds: tuple[float, float],
                                rng: Any) -> GroupLines:
        """The release from per-group statistics computed elsewhere (Spark's native
        aggregation)."""
        return release_lines(stats, epsilon=epsilon, x_bounds=x_bounds, y_bounds=y_bounds,
                             rng=rng)

    def expected_cov(self, *, epsilon: float, delta: float | None, n: int,
                     x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
                     fit_intercept: bool, options: Mapping[str, Any]) -> Any:
        """Laplace noise on n·cov, n·var and the intercept, each with its part of ε (thirds,
        or 0.3·ε each when the release carries the interval's statistics: ``inference``, by
        default wherever the interval rule can offer it -- as the fit decides); slope sd
        √2·b_cov/nvar·(1 + 3·2b_var²/nvar²)^½ (a second-order delta method), intercept sd
        from x̄·slope and its Laplace noise; ⊥ when the noisy nvar is <= 0:
        P = ½·exp(−nvar/b_var)."""
        xb, yb = x_bounds[0], y_bounds
        sens = core.noisy_stats_sensitivities(xb, yb, n)
        infer = options.get("inference", "auto")
        if infer == "auto":
            infer = n >= 3 and not core.interval_refusal(n, epsilon, xb)
        share = core.INFERENCE_SPLIT[0] / sum(core.INFERENCE_SPLIT) if infer else 1.0 / 3.0
        e3 = epsilon * share
        wx, wy = xb[1] - xb[0], yb[1] - yb[0]
        nvar = n * wx * wx / 12.0 * (1.0 - 1.0 / n)  # uniform x over its bounds
        b_cov, b_var = sens["ncov"] / e3, sens["nvar"] / e3
        var_slope = 2.0 * b_cov ** 2 / nvar ** 2 * (1.0 + 3.0 * 2.0 * b_var ** 2 / nvar ** 2)
        xbar = (xb[0] + xb[1]) / 2.0
        e_abs = math.sqrt(var_slope * 2.0 / math.pi)
        b3 = (wy + e_abs * wx) / n / e3
        var_int = xbar ** 2 * var_slope + 2.0 * b3 ** 2
        cov = np.array([[var_int, -xbar * var_slope], [-xbar * var_slope, var_slope]])
        fail = 0.5 * math.exp(-nvar / b_var)
        return cov, fail, "analytic (Laplace noise of Alabi et al. Alg. 1, second-order delta method)"

    def expected_error(self, *, epsilon: float, delta: float | None, design: Any,
                       options: Mapping[str, Any], seed: int, detail: bool = True) -> Any:
        """:func:`~dpreg.methods._planning.noisy_stats_error` with the split the fit uses
        (``inference="auto"``: on unless the public limits refuse the interval); the interval's
        refusal probability is 0 or 1 where the public limits decide (n, ε and the bounds),
        else P(the release's noisy spread of x < the release rule's threshold) on the plan's
        design (:func:`~dpreg.simple._noisy_stats.interval_offer_probability`)."""
        from dataclasses import replace

        from dpreg.methods._planning import noisy_stats_error

        asked = options.get("inference", "auto")
        refused = design.n < 3 or bool(core.interval_refusal(design.n, epsilon,
                                                             design.x_bounds[0]))
        infer = (not refused) if asked == "auto" else bool(asked)
        ee = noisy_stats_error(design, epsilon, infer)
        if asked is False:
            return replace(ee, interval_refusal_probability=None)
        if refused:
            return replace(ee, interval_refusal_probability=1.0)
        offer = _offer_probability(design.n, epsilon, design.x_bounds[0], design)
        return replace(ee, interval_refusal_probability=1.0 - offer)

    def planned_interval(self, *, epsilon: float, n: int, x_bounds: list[tuple[float, float]],
                         options: Mapping[str, Any], design: Any = None) -> str | None:
        if options.get("inference", "auto") is False:
            return None
        if n < 3:
            return "none: fewer than 3 rows"
        xb = x_bounds[0]
        why = core.interval_refusal(n, epsilon, xb)
        if why:
            return why
        thr = core.interval_offer_threshold(n, epsilon, xb)
        if thr == 0.0:
            return "offered"
        p = _offer_probability(n, epsilon, xb, design)
        spread = ("for x spread uniformly over its bounds (less when x fills less of them)"
                  if design is None or design.kind == "uniform" else "on the plan's design")
        return (f"depends on the release: offered when its noisy Σ(x − x̄)² is at least "
                f"{core.INTERVAL_MIN_NVAR_SIGNAL:g} × its noise sd (>= {thr:.4g}); "
                f"P(offered) = {p:.1%} {spread}")


def _offer_probability(n: int, epsilon: float, xb: tuple[float, float], design: Any) -> float:
    """P(the release rule offers the interval) when Σ(x − x̄)² is its expectation under the
    plan's design, (n − 1)·Var(x) (x uniform over its bounds when no design is given)."""
    var = (xb[1] - xb[0]) ** 2 / 12.0 if design is None else float(design.cov[0, 0])
    if core.interval_offer_threshold(n, epsilon, xb) == 0.0:
        return 1.0
    return float(core.interval_offer_probability(n, epsilon, xb, (n - 1) * var))


class DPInterceptSpec(MethodSpec):
    name = "dp-intercept"
    target = ('the mean of y (the slope is fixed at 0: a baseline, not a regression)')
    algorithm = "intercept-only baseline, a noisy mean of y (Alabi et al. 2022)"
    features = "one"
    delta = "never"
    guarantee = _SIMPLE
    relation = "replace-one"
    min_rows = 2
    always_intercept = True
    pure = True
    privacy_notes = ("dp_intercept.md",)
    order = 20
    estimator = None
    harness = ("simple",)
    spark_native = True
    local_options = ()
    local_kind = "vector"
    harness_engine = "replicates"
    options = MappingProxyType({
        "x_eval": Option(Anything("x points inside the x bounds"), None,
                         "the x points of the reported predictions"),
    })
    interval = IntervalSupport(
        missing=core.DP_INTERCEPT_NO_INTERVAL,
        fit_statistics=core.DP_INTERCEPT_NO_FIT_STATISTICS)
    core_function = "dpreg.simple:dp_intercept"

    def fit(self, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float | None,
            x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
            x_names: list[str], y_name: str, fit_intercept: bool, ledger: Any,
            random_state: Any, options: dict[str, Any], ci_alpha: float | None = None) -> Any:
        res = core.dp_intercept(X[:, 0], y, epsilon=epsilon, y_bounds=y_bounds,
                                x_bounds=x_bounds[0], ledger=ledger, rng=random_state,
                                **options)
        return res.to_regression_results(x_name=x_names[0], y_name=y_name)

    def fit_source(self, source: Any, *, x_cols: list[str], y_col: str, epsilon: float,
                   delta: float | None, x_bounds: list[tuple[float, float]],
                   y_bounds: tuple[float, float], fit_intercept: bool, ledger: Any,
                   random_state: Any, options: dict[str, Any],
                   ci_alpha: float | None = None) -> Any:
        """The core's release from the source's ȳ (one pass of the clipped moments)."""
        from dpreg._validation import check_bounds, check_epsilon

        xb = check_bounds(x_bounds[0], "bounds for the regressor")
        eps = check_epsilon(epsilon)

        def ybar(yb: tuple[float, float]) -> tuple[float, int]:
            stats, _ = core.noisy_stats_source_statistics(source, x_cols[0], y_col, xb, yb)
            return float(stats.ybar[0]), int(stats.n[0])

        res = core.dp_intercept_from_statistics(ybar, epsilon=eps, y_bounds=y_bounds,
                                                x_bounds=xb, ledger=ledger, rng=random_state,
                                                **options)
        return res.to_regression_results(x_name=x_cols[0], y_name=y_col)

    def expected_error(self, *, epsilon: float, delta: float | None, design: Any,
                       options: Mapping[str, Any], seed: int, detail: bool = True) -> Any:
        from dpreg.methods._planning import dp_intercept_error

        return dp_intercept_error(design, epsilon)

    def audit_cases(self) -> tuple[AuditCase, ...]:
        """Its replicates (the one-x release), ε = 2 on the one-x pairs."""
        from dpreg.privacy import PureDP

        return (AuditCase("dp-intercept", "DPIntercept, ε = 2, data in [0, 1]², n = 20",
                          PureDP(2.0), "replicates", {"epsilon": 2.0},
                          output_names=("p25", "p75")),)

    def estimator_class(self) -> Any:
        raise InvalidInputError("method 'dp-intercept' has no estimator class: it is fitted by "
                                "its core, dpreg.simple.dp_intercept")

    def release_groups(self, batch: GroupBatch) -> GroupLines:
        from dpreg.simple import clipped_means

        sel = batch.active
        means = clipped_means(batch.y, batch.starts, *batch.y_bounds)[sel]
        n = batch.counts[sel].astype(np.int64)
        z = np.zeros(sel.size)
        stats = core.LineStatistics(n, z, means, z, z)
        return release_levels(stats, epsilon=batch.epsilon, x_bounds=batch.x_bounds,
                              y_bounds=batch.y_bounds, rng=batch.randomness(sel))

    def replicates(self, x: np.ndarray, y: np.ndarray, *, epsilon: float,
                   x_bounds: tuple[float, float], y_bounds: tuple[float, float], trials: int,
                   x_eval: tuple[float, float], rng: Any, options: Mapping[str, Any]
                   ) -> np.ndarray:
        level = np.full(trials, float(np.mean(np.clip(y, *y_bounds))))
        out = np.empty((trials, 2))
        out[:] = core.release_dp_intercept(level, np.full(trials, y.size), y_bounds=y_bounds,
                                           epsilon=epsilon, rng=rng)[:, None]
        return out

    batched_replicates = True

    def replicates_batch(self, data: Any, *, epsilon: float, x_bounds: tuple[float, float],
                         y_bounds: tuple[float, float], trials: int,
                         x_eval: tuple[float, float], rngs: Any, options: Mapping[str, Any]
                         ) -> list[np.ndarray]:
        from dpreg.mechanisms.batch import RowRandomness

        return _dp_intercept_many(list(data), y_bounds, epsilon, trials,
                                  RowRandomness.seeded(list(rngs)))

    def release_line_statistics(self, stats: core.LineStatistics, *, epsilon: float,
                                x_bounds: tuple[float, float], y_bounds: tuple[float, float],
                                rng: Any) -> GroupLines:
        return release_levels(stats, epsilon=epsilon, x_bounds=x_bounds, y_bounds=y_bounds,
                              rng=rng)


def _dp_intercept_many(data: list[tuple[np.ndarray, np.ndarray]], yb: tuple[float, float],
                       eps: float, trials: int, rows: Any) -> list[np.ndarray]:
    """DPIntercept's replicates of G data sets: row g of one
    :func:`~dpreg.simple._noisy_stats.release_dp_intercept` on (G, trials) levels is data set
    g's one Laplace call of ``trials`` coordinates (``rows``: a seeded
    :class:`~dpreg.mechanisms.batch.RowRandomness`, row g data set g's generator)."""
    level = np.array([float(np.mean(np.clip(ya, *yb))) for _, ya in data])
    n = np.array([ya.size for _, ya in data], dtype=np.int64)
    noisy = core.release_dp_intercept(np.repeat(level[:, None], trials, axis=1), n,
                                      y_bounds=yb, epsilon=eps, rng=rows)
    return [np.repeat(noisy[g][:, None], 2, axis=1) for g in range(len(data))]


def _noisy_stats_many(data: list[tuple[np.ndarray, np.ndarray]], xb: tuple[float, float],
                      yb: tuple[float, float], eps: float, trials: int,
                      xe: tuple[float, ...], rows: Any) -> list[np.ndarray]:
    """DPSuffStats' replicates of G data sets, row g what
    :func:`~dpreg.simple._noisy_stats.release_noisy_stats` of data set g's statistics repeated
    ``trials`` times with generator g releases (:meth:`NoisyStatsSpec.replicates`): its calls
    (ncov, nvar, then the intercepts of the replicates whose noisy slope is usable) are rows of
    batched :func:`~dpreg.mechanisms.laplace_rows` calls of ``trials`` coordinates -- the
    intercept calls grouped by their number of coordinates k (one coordinate: the grid release
    of the value with sensitivity Δ₃; more: unit noise scaled by each Δ₃, as
    :func:`~dpreg.mechanisms.laplace_rows` does for one generator)."""
    from dpreg.mechanisms import laplace_rows
    from dpreg.privacy import PureDP

    g = len(data)
    parts = PureDP(eps).split([1, 1, 1])
    st = [core.noisy_stats_statistics(xa, ya, xb, yb) for xa, ya in data]
    n = np.array([int(s.n[0]) for s in st], dtype=np.int64)
    sens = [core.noisy_stats_sensitivities(xb, yb, int(nj)) for nj in n.tolist()]

    def wide(name: str) -> np.ndarray:
        return np.repeat(np.array([float(getattr(s, name)[0]) for s in st])[:, None], trials,
                         axis=1)

    xbar, ybar = wide("xbar"), wide("ybar")
    noisy_ncov = laplace_rows(wide("ncov"), sensitivity=np.array([s["ncov"] for s in sens]),
                              epsilon=parts[0].epsilon, rng=rows)
    noisy_nvar = laplace_rows(wide("nvar"), sensitivity=np.array([s["nvar"] for s in sens]),
                              epsilon=parts[1].epsilon, rng=rows)
    nn = np.repeat(n[:, None], trials, axis=1)
    _, slope, d3, slope_ok = core.noisy_slope_step(noisy_ncov, noisy_nvar, xb, yb, nn)
    intercept = np.full(slope.shape, np.nan)
    with np.errstate(invalid="ignore", over="ignore"):
        centre = ybar - slope * xbar
    counts = slope_ok.sum(axis=1)
    for k in np.unique(counts[counts > 0]).tolist():
        members = np.flatnonzero(counts == k)
        sel = slope_ok[members]  # (G_k, trials), k True per row (in replicate order)
        sub = rows.take(members)
        if k == 1:
            got = laplace_rows(centre[members][sel].reshape(-1, 1),
                               sensitivity=d3[members][sel], epsilon=parts[2].epsilon, rng=sub)
        else:
            unit = laplace_rows(np.zeros((members.size, k)), sensitivity=1.0,
                                epsilon=parts[2].epsilon, rng=sub)
            with np.errstate(over="ignore", invalid="ignore"):
                got = (centre[members][sel].reshape(-1, k)
                       + d3[members][sel].reshape(-1, k) * unit)
        block = intercept[members]
        block[sel] = got.reshape(-1)
        intercept[members] = block
    released = core.line_release_ok(slope, intercept, slope_ok, xb)
    out = []
    for j in range(g):
        reps = np.empty((trials, 2))
        for c, xv in enumerate(xe):
            reps[:, c] = slope[j] * xv + intercept[j]
        reps[~released[j]] = np.nan
        out.append(reps)
    return out


SPECS = (NoisyStatsSpec(), DPInterceptSpec())
