"""LocalBackend: per-group releases vectorised over groups.

One stable sort puts every group's rows in a contiguous segment; the deterministic part of
each method is then computed for all groups at once with segment operations, and only the
random draws are made group by group from each group's own stream (a ``SeedSequence``
derived from the key), in exactly the order the reference loop draws them.  With a seed the
releases are therefore **identical** (bit for bit) to :func:`dpreg.grouped.reference.
fit_reference` -- the tests check it method by method:

* ``noisy-stats`` / ``dp-intercept``: clipped means by segment pairwise sums (NumPy's own
  summation order), nvar/ncov per segment, then the noise-and-divide step for all groups as
  array arithmetic;
* ``dp-gd``: the T rounds run for all groups together (per-round gradient sums by segment,
  each group's 2T noise values drawn up front from its stream in the reference's order);
* ``theil-sen-*``: the median step per group (its cost is the median itself: sorting and
  sampling the doubled multiset, or the O(n log n) exact-fast path for groups with
  n >= 2000), run on ``workers`` threads -- NumPy releases the GIL in the heavy parts.  With
  a seed, the options are validated once (the first group goes through the core) and the
  other groups skip the core's per-call bookkeeping (``_lean_exp``/``_lean_smooth``: the
  same arithmetic and draws; the smooth-sensitivity bound compiled with numba).

Without a seed (``random_state=None``, a real release) every group is fitted in secure mode
by calling the functional core with a fresh CSPRNG generator, exactly like the reference
loop (secure noise is not bit-reproducible, so there is nothing to vectorise against).
Methods or options the vectorised kernels do not cover (the multivariate methods, ``ci_alpha``,
``inference=True``, ...) are delegated to the reference loop.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from dpreg.grouped._common import GroupSpec, Partition, assemble, group_generator
from dpreg.grouped._segments import segment_sums

__all__ = ["fit_local", "LOCAL_METHODS", "release_noisy_stats", "release_dp_intercept",
           "supported"]

#: methods the LocalBackend runs itself, with the options each accepts
LOCAL_METHODS: dict[str, tuple[str, ...]] = {
    "noisy-stats": (),
    "dp-intercept": (),
    "dp-gd": ("variant", "tau", "steps", "rho"),
    # (Theil-Sen uses algorithm="auto", as the estimator does: groups with n >= 2000 take the
    # O(n log n) exact-fast path on every backend)
    "theil-sen-exp": ("pairs", "theta", "output_range", "dof"),
    "theil-sen-wide": ("pairs", "theta", "output_range", "dof"),
    "theil-sen-smooth": ("pairs", "theta", "output_range", "dof"),
}


def supported(spec: GroupSpec) -> bool:
    """True when the LocalBackend can run this call itself (else: the reference loop)."""
    allowed = LOCAL_METHODS.get(spec.method)
    return allowed is not None and set(spec.options) <= set(allowed)


def _workers(workers: int | None) -> int:
    if workers is None:
        return max(1, min(2, os.cpu_count() or 1))
    return max(1, int(workers))


class _Frame:
    """Output arrays for all keys, filled by the method kernels."""

    def __init__(self, spec: GroupSpec, part: Partition) -> None:
        g = len(spec.keys)
        self.n = part.counts.astype(np.int64)
        self.intercept = np.full(g, np.nan)
        self.slope = np.full(g, np.nan)
        self.failed = np.ones(g, dtype=bool)
        self.reason = ["" for _ in range(g)]
        self.preds: dict[float, np.ndarray] = {}
        for k in range(g):
            if self.n[k] == 0:
                self.reason[k] = "no rows in this group"
            elif self.n[k] < spec.min_rows:  # n is public (replace-one)
                self.reason[k] = f"{self.n[k]} rows; {spec.method} needs at least {spec.min_rows}"
        self.active = np.flatnonzero(self.n >= max(spec.min_rows, 1))

    def set_line(self, idx: np.ndarray, slope: np.ndarray, intercept: np.ndarray,
                 preds: dict[float, np.ndarray], ok: np.ndarray, reasons: list[str]) -> None:
        for xv in preds:
            self.preds.setdefault(xv, np.full(self.n.size, np.nan))
        for j, k in enumerate(idx):
            if ok[j]:
                self.slope[k] = float(slope[j])
                self.intercept[k] = float(intercept[j])
                self.failed[k] = False
                self.reason[k] = ""
                for xv, vals in preds.items():
                    self.preds[xv][k] = float(vals[j])
            else:
                self.failed[k] = True
                self.reason[k] = reasons[j]

    def table(self, spec: GroupSpec) -> pd.DataFrame:
        return assemble(spec, self.n, self.intercept, self.slope, self.failed, self.reason,
                        self.preds)


# ---------------------------------------------------------------------- seeded kernels
def _segment_means(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    counts = np.diff(starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        return segment_sums(values, starts) / counts


def _active_segments(part: Partition, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x, y and segment starts restricted to the active groups ``idx`` (in that order)."""
    s, e = part.starts[idx], part.starts[idx + 1]
    sel = np.concatenate([np.arange(a, b) for a, b in zip(s, e)]) if idx.size else np.zeros(
        0, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(e - s))).astype(np.int64)
    return part.x[sel], part.y[sel], starts


def _noisy_stats_seeded(spec: GroupSpec, part: Partition, out: _Frame) -> None:
    idx = out.active
    if idx.size == 0:
        return
    xb, yb = spec.x_bounds, spec.y_bounds
    xs, ys, starts = _active_segments(part, idx)
    n = np.diff(starts)
    xc = np.clip(xs, *xb)
    yc = np.clip(ys, *yb)
    xbar = _segment_means(xc, starts)
    ybar = _segment_means(yc, starts)
    seg = np.repeat(np.arange(idx.size), n)
    dx = xc - xbar[seg]
    dy = yc - ybar[seg]
    nvar = np.empty(idx.size)
    ncov = np.empty(idx.size)
    for j in range(idx.size):  # BLAS dot products, as the reference computes them
        a, b = starts[j], starts[j + 1]
        nvar[j] = float(np.dot(dx[a:b], dx[a:b]))
        ncov[j] = float(np.dot(dx[a:b], dy[a:b]))
    release_noisy_stats(spec, out, idx, n, xbar, ybar, nvar, ncov)


def release_noisy_stats(spec: GroupSpec, out: _Frame, idx: np.ndarray, n: np.ndarray,
                        xbar: np.ndarray, ybar: np.ndarray, nvar: np.ndarray,
                        ncov: np.ndarray) -> None:
    """DPSuffStats' noise-and-divide step for many groups from their clipped statistics
    (x̄, ȳ, nvar, ncov): the same arithmetic and draws as :func:`dpreg.simple.noisy_stats`
    (seeded: per-key streams in the reference's order; secure: the same mechanism calls)."""
    from dpreg._validation import check_epsilon
    from dpreg.mechanisms import laplace, laplace_scale
    from dpreg.privacy import PureDP
    from dpreg.simple import _noisy_stats as ns
    from dpreg.simple._common import default_x_eval

    if idx.size == 0:
        return
    eps = check_epsilon(spec.epsilon)
    xb, yb = spec.x_bounds, spec.y_bounds
    parts = PureDP(eps).split([1, 1, 1])
    sens_cov = np.empty(idx.size)
    sens_var = np.empty(idx.size)
    cache: dict[int, dict[str, float]] = {}
    for j, nj in enumerate(n):
        if int(nj) not in cache:
            cache[int(nj)] = ns.noisy_stats_sensitivities(xb, yb, int(nj))
        sens_cov[j], sens_var[j] = cache[int(nj)]["ncov"], cache[int(nj)]["nvar"]
    gens = [group_generator(spec, spec.keys[k]) for k in idx]
    noisy_ncov = np.empty(idx.size)
    noisy_nvar = np.empty(idx.size)
    unit = np.empty(idx.size)
    for j, gen in enumerate(gens):
        if spec.seeded:  # draws of laplace(..., rng=gen) without its per-call overhead
            s1 = laplace_scale(sens_cov[j], parts[0].epsilon)
            s2 = laplace_scale(sens_var[j], parts[1].epsilon)
            noisy_ncov[j] = ncov[j] + gen.laplace(0.0, s1) if s1 else ncov[j]
            noisy_nvar[j] = nvar[j] + gen.laplace(0.0, s2) if s2 else nvar[j]
            s3 = laplace_scale(1.0, parts[2].epsilon)
            unit[j] = gen.laplace(0.0, s3) if s3 else 0.0
        else:
            noisy_ncov[j] = float(laplace(np.zeros(1) + ncov[j], sensitivity=sens_cov[j],
                                          epsilon=parts[0].epsilon, rng=gen)[0])
            noisy_nvar[j] = float(laplace(np.zeros(1) + nvar[j], sensitivity=sens_var[j],
                                          epsilon=parts[1].epsilon, rng=gen)[0])
    ok, slope, d3, slope_ok = ns._noisy_slope(noisy_ncov, noisy_nvar, xb, yb, n)
    with np.errstate(invalid="ignore", over="ignore"):
        centre = ybar - slope * xbar
        if spec.seeded:
            intercept = np.where(slope_ok, centre + unit * d3, np.nan)
        else:  # secure mode: grid noise on the centre itself, as the core does
            intercept = np.full(idx.size, np.nan)
            for jj in np.flatnonzero(slope_ok):
                intercept[jj] = laplace(np.array([centre[jj]]), sensitivity=float(d3[jj]),
                                        epsilon=parts[2].epsilon, rng=gens[jj])[0]
    line_ok = ns._line_ok(slope, intercept, slope_ok, xb)
    reasons = [ns._FAIL_DENOMINATOR if not ok[j] else ns._FAIL_SLOPE if not slope_ok[j]
               else ns._FAIL_INTERCEPT if not line_ok[j] else "" for j in range(idx.size)]
    with np.errstate(invalid="ignore", over="ignore"):
        preds = {float(v): slope * v + intercept for v in default_x_eval(xb)}
    out.set_line(idx, slope, intercept, preds, line_ok, reasons)


def _dp_intercept_seeded(spec: GroupSpec, part: Partition, out: _Frame) -> None:
    idx = out.active
    if idx.size == 0:
        return
    _, ys, starts = _active_segments(part, idx)
    release_dp_intercept(spec, out, idx, np.diff(starts),
                         _segment_means(np.clip(ys, *spec.y_bounds), starts))


def release_dp_intercept(spec: GroupSpec, out: _Frame, idx: np.ndarray, n: np.ndarray,
                         mean: np.ndarray) -> None:
    """DPIntercept for many groups from the means of the clipped y (as the core draws)."""
    from dpreg._validation import check_epsilon
    from dpreg.mechanisms import laplace, laplace_scale
    from dpreg.mechanisms.sensitivity import mean_sensitivity
    from dpreg.simple._common import default_x_eval

    if idx.size == 0:
        return
    eps = check_epsilon(spec.epsilon)
    yb = spec.y_bounds
    level = np.empty(idx.size)
    for j, k in enumerate(idx):
        sens = mean_sensitivity(yb, int(n[j]))
        gen = group_generator(spec, spec.keys[k])
        if spec.seeded:
            scale = laplace_scale(sens, eps)
            level[j] = mean[j] + gen.laplace(0.0, scale) if scale else mean[j]
        else:
            level[j] = float(laplace(float(mean[j]), sensitivity=sens, epsilon=eps, rng=gen))
    preds = {float(v): level for v in default_x_eval(spec.x_bounds)}
    out.set_line(idx, np.zeros(idx.size), level, preds, np.ones(idx.size, dtype=bool),
                 [""] * idx.size)


def _dp_gd_seeded(spec: GroupSpec, part: Partition, out: _Frame) -> None:
    from dpreg.mechanisms import gaussian_sigma, laplace_scale
    from dpreg.privacy import PureDP
    from dpreg.simple import _gradient_descent as gd

    idx = out.active
    if idx.size == 0:
        return
    opts = dict(spec.options)
    variant = opts.get("variant", "pure")
    # the estimator passes only the budget parameters its variant uses
    eps = None if variant == "zcdp" else spec.epsilon
    delta = spec.delta if variant == "approx" else None
    rho = opts.get("rho") if variant == "zcdp" else None
    probe = np.array([spec.x_bounds[0], spec.x_bounds[1]])
    plan = gd._plan(probe, probe, variant=variant, epsilon=eps, rho=rho, delta=delta,
                    x_bounds=spec.x_bounds, y_bounds=spec.y_bounds, tau=opts.get("tau", 1.0),
                    steps=opts.get("steps", 80), x_eval=None)
    xs, ys, starts = _active_segments(part, idx)
    (xlo, xhi), (ylo, yhi) = plan.x_bounds, plan.y_bounds
    u = (np.clip(xs, xlo, xhi) - xlo) / (xhi - xlo)
    v = (np.clip(ys, ylo, yhi) - ylo) / (yhi - ylo)
    steps, tau = plan.steps, plan.tau
    g_count = idx.size
    noise = np.empty((g_count, steps, 2))
    if isinstance(plan.per_step, PureDP):
        scale = laplace_scale(plan.sensitivity, plan.per_step.epsilon)
        for j, k in enumerate(idx):
            gen = group_generator(spec, spec.keys[k])
            noise[j] = gen.laplace(0.0, scale, size=(steps, 2)) if scale else 0.0
    else:
        sigma = gaussian_sigma(plan.sensitivity, plan.per_step)
        for j, k in enumerate(idx):
            gen = group_generator(spec, spec.keys[k])
            noise[j] = gen.normal(0.0, sigma, size=(steps, 2)) if sigma else 0.0
    seg = np.repeat(np.arange(g_count), np.diff(starts))
    a = 0.75 - u
    b = u - 0.25
    p25 = np.full(g_count, 0.5)
    p75 = np.full(g_count, 0.5)
    sq_sum = np.zeros(g_count)
    keep_from = steps // 2 + 1
    kept = np.empty((steps + 1 - keep_from, g_count, 2))
    for t in range(steps):
        resid = 1.0 * (2.0 * (p25[seg] * a + p75[seg] * b) - v)
        g0 = segment_sums(np.clip(2.0 * resid * a, -tau, tau), starts) + noise[:, t, 0]
        g1 = segment_sums(np.clip(2.0 * resid * b, -tau, tau), starts) + noise[:, t, 1]
        sq_sum += g0 * g0 + g1 * g1
        with np.errstate(divide="ignore"):
            step = np.where(sq_sum > 0, 1.0 / np.sqrt(sq_sum), 0.0)
        p25 = p25 - g0 * step
        p75 = p75 - g1 * step
        if t + 1 >= keep_from:
            kept[t + 1 - keep_from, :, 0] = p25
            kept[t + 1 - keep_from, :, 1] = p75
    avg = kept.mean(axis=0)
    slope, intercept = plan.line(avg[:, 0], avg[:, 1])
    preds = {float(xv): intercept + slope * xv for xv in plan.x_eval}
    out.set_line(idx, slope, intercept, preds, np.ones(g_count, dtype=bool), [""] * g_count)


# ---------------------------------------------------------------------- per-group cores
def _core_call(spec: GroupSpec) -> Callable[[np.ndarray, np.ndarray, np.random.Generator], Any]:
    """The functional core exactly as the reference's estimator calls it."""
    from dpreg.linear_model._simple import default_prediction_range
    from dpreg.simple import dp_intercept, gradient_descent, noisy_stats, theil_sen

    xb, yb, opts = spec.x_bounds, spec.y_bounds, dict(spec.options)
    m = spec.method
    if m == "noisy-stats":
        return lambda x, y, g: noisy_stats(x, y, epsilon=spec.epsilon, x_bounds=xb, y_bounds=yb,
                                           release_stats=True, rng=g)
    if m == "dp-intercept":
        return lambda x, y, g: dp_intercept(x, y, epsilon=spec.epsilon, y_bounds=yb,
                                            x_bounds=xb, rng=g)
    if m == "dp-gd":
        variant = opts.get("variant", "pure")
        eps = None if variant == "zcdp" else spec.epsilon
        delta = spec.delta if variant == "approx" else None
        rho = opts.get("rho") if variant == "zcdp" else None
        return lambda x, y, g: gradient_descent(
            x, y, epsilon=eps, rho=rho, delta=delta, variant=variant, x_bounds=xb, y_bounds=yb,
            tau=opts.get("tau", 1.0), steps=opts.get("steps", 80), rng=g)
    median = m.rsplit("-", 1)[1]
    out_range = opts.get("output_range")
    rng_out = default_prediction_range(yb) if out_range is None else tuple(out_range)
    return lambda x, y, g: theil_sen(
        x, y, epsilon=spec.epsilon, output_range=rng_out, x_bounds=xb, median=median,
        pairs=opts.get("pairs", "all"), estimand="predictions", theta=opts.get("theta"),
        dof=opts.get("dof", 3), rng=g)


def _lean_smooth(spec: GroupSpec) -> Callable[[np.ndarray, np.ndarray, np.random.Generator], Any]:
    """theil-sen-smooth with the smooth-sensitivity bound compiled: the same arithmetic and
    the same draws as :func:`dpreg.simple.theil_sen` (the first group still goes through the
    core, which also validates the options)."""
    from dpreg.grouped._segments import median_smooth_bound
    from dpreg.linear_model._simple import default_prediction_range
    from dpreg.mechanisms.smooth import student_t_scale
    from dpreg.privacy import PureDP
    from dpreg.simple._common import default_x_eval
    from dpreg.simple._result import SimpleRegressionResult
    from dpreg.simple.pairs import doubled_pair_values, make_design

    opts = spec.options
    out_range = opts.get("output_range")
    lo, hi = default_prediction_range(spec.y_bounds) if out_range is None else out_range
    lo, hi = float(lo), float(hi)
    eps_t = PureDP(spec.epsilon).split([1, 1])[0].epsilon
    dof = int(opts.get("dof", 3))
    t, s = student_t_scale(eps_t, dof)
    xe = default_x_eval(spec.x_bounds)
    pairs = opts.get("pairs", "all")

    def call(x: np.ndarray, y: np.ndarray, gen: np.random.Generator) -> Any:
        design = make_design(x.size, pairs, gen)
        vals = []
        for xv in xe:
            arr = doubled_pair_values(x, y, design, estimand="predictions", x_eval=xv)
            clipped = np.clip(arr, lo, hi)
            center = float(np.median(clipped))
            zb = np.concatenate(([lo], np.sort(clipped), [hi]))
            sens = median_smooth_bound(zb, 2 * design.k, t)
            vals.append(center + (sens / s) * float(gen.standard_t(dof)))
        (x1, x2), (p1, p2) = xe, vals
        slope = (p2 - p1) / (x2 - x1)
        return SimpleRegressionResult("theil-sen-smooth", None,  # type: ignore[arg-type]
                                      released_slope=slope, released_intercept=p1 - slope * x1,
                                      released_predictions={x1: p1, x2: p2}, n=x.size)

    return call


def _lean_exp(spec: GroupSpec, core: Callable[..., Any]
              ) -> Callable[[np.ndarray, np.ndarray, np.random.Generator], Any]:
    """theil-sen-exp/-wide without the per-call validation and bookkeeping of the core: the
    same arithmetic and the same draws as :func:`dpreg.simple.theil_sen` (materialising path;
    groups the core sends to the O(n log n) path, n >= AUTO_FAST_MIN_N with all pairs, still
    go through ``core``).  The first group goes through the core, which validates the options.
    """
    from dpreg.linear_model._simple import default_prediction_range
    from dpreg.mechanisms.exponential import _shifted_sorted, sample_piecewise_constant
    from dpreg.privacy import PureDP
    from dpreg.simple._common import default_x_eval, div_down
    from dpreg.simple._result import SimpleRegressionResult
    from dpreg.simple._theil_sen import AUTO_FAST_MIN_N, check_theta
    from dpreg.simple.pairs import doubled_pair_values, make_design

    opts = spec.options
    median = spec.method.rsplit("-", 1)[1]
    out_range = opts.get("output_range")
    lo, hi = default_prediction_range(spec.y_bounds) if out_range is None else out_range
    lo, hi = float(lo), float(hi)
    th = check_theta(opts.get("theta"), median, (lo, hi))
    eps_t = PureDP(spec.epsilon).split([1, 1])[0].epsilon
    xe = default_x_eval(spec.x_bounds)
    pairs = opts.get("pairs", "all")
    method = spec.method

    def call(x: np.ndarray, y: np.ndarray, gen: np.random.Generator) -> Any:
        if pairs == "all" and x.size >= AUTO_FAST_MIN_N:
            return core(x, y, gen)
        design = make_design(x.size, pairs, gen)
        eps = div_down(eps_t, 2 * design.k)
        vals = []
        for xv in xe:
            arr = doubled_pair_values(x, y, design, estimand="predictions", x_eval=xv)
            srt = _shifted_sorted(arr, 0.5, lo, hi, th)
            m = srt.size
            rung = np.floor(np.abs(np.arange(m + 1, dtype=np.float64) - m * 0.5))
            breaks = np.concatenate(([lo], srt, [hi]))
            vals.append(float(sample_piecewise_constant(breaks, -(eps / 2.0) * rung, rng=gen)))
        (x1, x2), (p1, p2) = xe, vals
        slope = (p2 - p1) / (x2 - x1)
        return SimpleRegressionResult(method, None,  # type: ignore[arg-type]
                                      released_slope=slope, released_intercept=p1 - slope * x1,
                                      released_predictions={x1: p1, x2: p2}, n=x.size)

    return call


def _per_group(spec: GroupSpec, part: Partition, out: _Frame, workers: int) -> None:
    call = _core_call(spec)
    idx = out.active
    lean = None
    if (spec.seeded and spec.method == "theil-sen-smooth" and math.isfinite(spec.epsilon)
            and idx.size > 1):
        lean = _lean_smooth(spec)
    elif (spec.seeded and spec.method in ("theil-sen-exp", "theil-sen-wide")
          and math.isfinite(spec.epsilon) and idx.size > 1):
        lean = _lean_exp(spec, call)

    def run(k: int, fn: Callable[..., Any] = call) -> Any:
        s, e = part.starts[k], part.starts[k + 1]
        return fn(part.x[s:e], part.y[s:e], group_generator(spec, spec.keys[k]))

    results = []
    rest = idx.tolist()
    if lean is not None:  # the core on the first group validates the options
        results.append(run(rest[0]))
        rest = rest[1:]
    fn = lean if lean is not None else call
    if workers > 1 and len(rest) > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results.extend(pool.map(lambda k: run(k, fn), rest,
                                    chunksize=max(1, len(rest) // (8 * workers))))
    else:
        results.extend(run(int(k), fn) for k in rest)
    slope = np.array([r.released_slope if not r.failed else math.nan for r in results])
    intercept = np.array([r.released_intercept if not r.failed else math.nan for r in results])
    ok = np.array([not r.failed for r in results], dtype=bool)
    reasons = [r.reason if r.failed else "" for r in results]
    preds: dict[float, np.ndarray] = {}
    for j, r in enumerate(results):
        if r.failed:
            continue
        for xv, val in r.predictions.items():
            preds.setdefault(float(xv), np.full(idx.size, np.nan))[j] = float(val)
    out.set_line(idx, slope, intercept, preds, ok, reasons)


def fit_local(spec: GroupSpec, part: Partition, *, workers: int | None = None) -> pd.DataFrame:
    """Vectorised per-group releases (see the module doc); ``spec`` must be :func:`supported`."""
    out = _Frame(spec, part)
    nw = _workers(workers)
    if spec.seeded and spec.method == "noisy-stats":
        _noisy_stats_seeded(spec, part, out)
    elif spec.seeded and spec.method == "dp-intercept":
        _dp_intercept_seeded(spec, part, out)
    elif spec.seeded and spec.method == "dp-gd":
        _dp_gd_seeded(spec, part, out)
    else:
        _per_group(spec, part, out, nw)
    return out.table(spec)
