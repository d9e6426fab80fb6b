"""LocalBackend: per-group releases vectorised over groups.

One stable sort puts every group's rows in a contiguous segment; the statistics step of each
method is then computed for all groups at once with segment operations, and the release is the
method's one release function (:mod:`dpreg.simple`) run on the batch of groups, its noise drawn
through :mod:`dpreg.mechanisms` with one row per group
(:class:`~dpreg.mechanisms.batch.RowRandomness`, built by
:func:`dpreg.grouped._common.group_randomness`):

* **seeded** (``random_state`` given): every group's noise still comes from its own stream --
  the keys its own fit would take from its per-key generator (a ``SeedSequence`` derived from
  the key), one 32-byte key per mechanism call, each expanded by SHAKE256 into one byte stream
  per coordinate that only that lane reads.  The releases are therefore **identical** (bit for
  bit) to :func:`dpreg.grouped.reference.fit_reference` and do not depend on partitioning,
  ordering or backend -- the tests check it method by method;
* **secure** (no seed): the same batched exact samplers read one os.urandom source for the
  whole batch (the per-group loop is not needed: secure noise is not reproducible anyway).

Kernels (statistics step here, release in :mod:`dpreg.simple`):

* ``noisy-stats`` / ``dp-intercept``: clipped means by segment pairwise sums (NumPy's own
  summation order), nvar/ncov per segment, then
  :func:`dpreg.simple._noisy_stats.release_noisy_stats` /
  :func:`~dpreg.simple._noisy_stats.release_dp_intercept` on all groups;
* ``dp-gd``: :func:`dpreg.simple._gradient_descent.release_gradient_descent` on all groups,
  the per-round gradient sums computed by segment sums;
* ``theil-sen-*``: :func:`dpreg.simple._theil_sen.release_theil_sen` per group (its cost is
  the median itself: sorting and sampling the doubled multiset, or the O(n log n) exact-fast
  path for groups with n >= 400, :data:`dpreg.simple._theil_sen.AUTO_FAST_MIN_N`), run on
  ``workers`` threads -- NumPy (and the compiled
  smooth-sensitivity bound) release the GIL in the heavy parts.  The first group goes
  through the core, which validates the options.

Methods or options the vectorised kernels do not cover (the multivariate methods, ``ci_alpha``,
``inference=True``, ...) are delegated to the reference loop (with ``ci_alpha``, per-group
intervals: :func:`dpreg.grouped.reference.fit_group`; the table is the reference loop's).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from dpreg import _registry
from dpreg._progress import job
from dpreg.grouped._common import (
    GroupSpec,
    Partition,
    assemble,
    group_generator,
    group_randomness,
)
from dpreg.grouped._segments import clipped_centred, clipped_means, gd_gradient_sums

__all__ = ["fit_local", "LOCAL_METHODS", "release_noisy_stats", "release_dp_intercept",
           "supported"]

#: methods the LocalBackend runs itself, with the options each accepts (the method registry's
#: ``local_options``; Theil-Sen uses algorithm="auto", as the estimator does: groups with
#: n >= AUTO_FAST_MIN_N (400) take the O(n log n) exact-fast path on every backend)
LOCAL_METHODS: dict[str, tuple[str, ...]] = {
    m.name: m.local_options for m in _registry.methods(local=True)
    if m.local_options is not None}


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
        for k in np.flatnonzero(self.n < max(spec.min_rows, 1)):
            if self.n[k] == 0:
                self.reason[k] = "no rows in this group"
            else:  # n is public (replace-one)
                self.reason[k] = f"{self.n[k]} rows; {spec.method} needs at least {spec.min_rows}"
        self.active = np.flatnonzero(self.n >= max(spec.min_rows, 1))

    def set_line(self, idx: np.ndarray, slope: np.ndarray, intercept: np.ndarray,
                 preds: dict[float, np.ndarray], ok: np.ndarray, reasons: list[str]) -> None:
        idx = np.asarray(idx, dtype=np.int64)
        ok = np.asarray(ok, dtype=bool)
        for xv in preds:
            self.preds.setdefault(xv, np.full(self.n.size, np.nan))
        good, bad = idx[ok], idx[~ok]
        self.slope[good] = np.asarray(slope, dtype=np.float64)[ok]
        self.intercept[good] = np.asarray(intercept, dtype=np.float64)[ok]
        self.failed[good] = False
        self.failed[bad] = True
        for xv, vals in preds.items():
            self.preds[xv][good] = np.asarray(vals, dtype=np.float64)[ok]
        for j, k in enumerate(idx.tolist()):
            self.reason[k] = "" if ok[j] else reasons[j]

    def table(self, spec: GroupSpec) -> pd.DataFrame:
        return assemble(spec, self.n, self.intercept, self.slope, self.failed, self.reason,
                        self.preds)


# ---------------------------------------------------------------------- batched kernels
def _active_segments(part: Partition, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x, y and segment starts restricted to the active groups ``idx`` (ascending, as the
    partition is in key order)."""
    counts = part.counts
    active = np.zeros(counts.size, dtype=bool)
    active[idx] = True
    starts = np.concatenate(([0], np.cumsum(counts[idx]))).astype(np.int64)
    if np.all(active | (counts == 0)):  # every row belongs to an active group
        return part.x, part.y, starts
    rows = np.repeat(active, counts)
    return part.x[rows], part.y[rows], starts


def _nonempty_segments(part: Partition, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segment starts of every group with rows (they tile the partition's x and y, so no copy
    is made) and the positions of the active groups ``idx`` among them.  For the kernels whose
    per-segment statistics are independent of each other: computing a few inactive groups'
    statistics (1 <= n < min_rows, never released) costs less than copying the rows out."""
    counts = part.counts
    nonempty = np.flatnonzero(counts > 0)
    starts = np.concatenate(([0], np.cumsum(counts[nonempty]))).astype(np.int64)
    return starts, np.searchsorted(nonempty, idx)


def _noisy_stats_kernel(spec: GroupSpec, part: Partition, out: _Frame) -> None:
    idx = out.active
    if idx.size == 0:
        return
    xb, yb = spec.x_bounds, spec.y_bounds
    starts, sel = _nonempty_segments(part, idx)
    # x̄, ȳ of the clipped data and the centred clipped values (the reference's np.mean and
    # subtraction, bit for bit, in one pass per column)
    xbar, dx = clipped_centred(part.x, starts, *xb)
    ybar, dy = clipped_centred(part.y, starts, *yb)
    nvar = np.empty(idx.size)
    ncov = np.empty(idx.size)
    dot = np.dot
    begin, end = starts[sel].tolist(), starts[sel + 1].tolist()
    for j in range(idx.size):  # BLAS dot products, as the reference computes them
        a, b = begin[j], end[j]
        da = dx[a:b]
        nvar[j] = dot(da, da)
        ncov[j] = dot(da, dy[a:b])
    release_noisy_stats(spec, out, idx, np.diff(starts)[sel], xbar[sel], ybar[sel], nvar, ncov)


def release_noisy_stats(spec: GroupSpec, out: _Frame, idx: np.ndarray, n: np.ndarray,
                        xbar: np.ndarray, ybar: np.ndarray, nvar: np.ndarray,
                        ncov: np.ndarray) -> None:
    """DPSuffStats for the groups ``idx`` from their clipped statistics (x̄, ȳ, nvar, ncov):
    :func:`dpreg.simple._noisy_stats.release_noisy_stats` on the batch (seeded: each group's own
    keys, so each row equals the group's own fit), written into ``out``."""
    from dpreg._validation import check_epsilon
    from dpreg.privacy import PureDP
    from dpreg.simple._common import default_x_eval
    from dpreg.simple._noisy_stats import LineStatistics
    from dpreg.simple._noisy_stats import release_noisy_stats as release

    if idx.size == 0:
        return
    xb = spec.x_bounds
    parts = PureDP(check_epsilon(spec.epsilon)).split([1, 1, 1])
    stats = LineStatistics(np.asarray(n, dtype=np.int64), *(np.asarray(v, dtype=np.float64)
                                                            for v in (xbar, ybar, nvar, ncov)))
    draw = release(stats, x_bounds=xb, y_bounds=spec.y_bounds, parts=parts,
                   rng=group_randomness(spec, [spec.keys[k] for k in idx]))
    slope, intercept, reason = draw["slope"], draw["intercept"], draw["reason"]
    with np.errstate(invalid="ignore", over="ignore"):
        preds = {float(v): slope * v + intercept for v in default_x_eval(xb)}
    out.set_line(idx, slope, intercept, preds, reason == "", reason.tolist())


def _dp_intercept_kernel(spec: GroupSpec, part: Partition, out: _Frame) -> None:
    idx = out.active
    if idx.size == 0:
        return
    starts, sel = _nonempty_segments(part, idx)
    release_dp_intercept(spec, out, idx, np.diff(starts)[sel],
                         clipped_means(part.y, starts, *spec.y_bounds)[sel])


def release_dp_intercept(spec: GroupSpec, out: _Frame, idx: np.ndarray, n: np.ndarray,
                         mean: np.ndarray) -> None:
    """DPIntercept for the groups ``idx`` from the means of their clipped y:
    :func:`dpreg.simple._noisy_stats.release_dp_intercept` on the batch, written into ``out``."""
    from dpreg._validation import check_epsilon
    from dpreg.simple._common import default_x_eval
    from dpreg.simple._noisy_stats import release_dp_intercept as release

    if idx.size == 0:
        return
    level = release(np.asarray(mean, dtype=np.float64), np.asarray(n, dtype=np.int64),
                    y_bounds=spec.y_bounds, epsilon=check_epsilon(spec.epsilon),
                    rng=group_randomness(spec, [spec.keys[k] for k in idx]))
    preds = {float(v): level for v in default_x_eval(spec.x_bounds)}
    out.set_line(idx, np.zeros(idx.size), level, preds, np.ones(idx.size, dtype=bool),
                 [""] * idx.size)


def _dp_gd_kernel(spec: GroupSpec, part: Partition, out: _Frame) -> None:
    """DPGD for all groups: :func:`dpreg.simple._gradient_descent.release_gradient_descent` on
    the batch, with the per-round gradient sums of every group computed by segment sums
    (bit-identical to the per-group ``.sum()``) and one mechanism call per group per round."""
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
    tau = plan.tau
    a = np.ascontiguousarray(0.75 - u)
    b = np.ascontiguousarray(u - 0.25)
    v = np.ascontiguousarray(v)
    del u
    scratch = (np.empty(a.size), np.empty(a.size))

    def gradient(p: np.ndarray) -> np.ndarray:
        return gd_gradient_sums(a, b, v, starts, p, tau, scratch)

    p25, p75 = gd.release_gradient_descent(
        gradient, plan=plan, rows=idx.size,
        rng=group_randomness(spec, [spec.keys[k] for k in idx]))
    slope, intercept = plan.line(p25, p75)
    preds = {float(xv): intercept + slope * xv for xv in plan.x_eval}
    out.set_line(idx, slope, intercept, preds, np.ones(idx.size, dtype=bool), [""] * idx.size)


# ---------------------------------------------------------------------- per-group cores
def _core_call(spec: GroupSpec) -> Callable[[np.ndarray, np.ndarray, np.random.Generator], Any]:
    """The functional core exactly as the reference's estimator calls it."""
    from dpreg.simple import dp_intercept, gradient_descent, noisy_stats, theil_sen
    from dpreg.simple.ranges import default_prediction_range

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


def _release_call(spec: GroupSpec) -> Callable[[np.ndarray, np.ndarray, np.random.Generator],
                                              Any]:
    """theil-sen-* on one group from options validated once: the core's own release
    (:func:`dpreg.simple._theil_sen.release_theil_sen`, the same draws as
    :func:`dpreg.simple.theil_sen`) without the per-call validation, ledger and statement
    (the first group still goes through the core, which validates the options)."""
    from dpreg.privacy import PureDP
    from dpreg.simple._common import check_pairs_arg, default_x_eval
    from dpreg.simple._result import SimpleRegressionResult
    from dpreg.simple._theil_sen import check_theta, release_theil_sen, resolve_algorithm
    from dpreg.simple.ranges import default_prediction_range

    opts = spec.options
    median = spec.method.rsplit("-", 1)[1]
    out_range = opts.get("output_range")
    lo, hi = default_prediction_range(spec.y_bounds) if out_range is None else out_range
    lo, hi = float(lo), float(hi)
    th = check_theta(opts.get("theta"), median, (lo, hi))
    targets = PureDP(spec.epsilon).split([1, 1])
    xe = default_x_eval(spec.x_bounds)
    pairs, dof, method = opts.get("pairs", "all"), int(opts.get("dof", 3)), spec.method

    def call(x: np.ndarray, y: np.ndarray, gen: np.random.Generator) -> Any:
        n = int(x.size)
        pairs_arg = check_pairs_arg(pairs, n)
        (p1, p2), _ = release_theil_sen(
            x, y, median=median, estimand="predictions", pairs=pairs_arg, x_eval=xe,
            targets=targets, lo=lo, hi=hi, theta=th, dof=dof,
            algorithm=resolve_algorithm("auto", n=n, pairs=pairs_arg, median=median), rng=gen)
        (x1, x2) = xe
        slope = (p2 - p1) / (x2 - x1)
        return SimpleRegressionResult(method, None,  # type: ignore[arg-type]
                                      released_slope=slope, released_intercept=p1 - slope * x1,
                                      released_predictions={x1: p1, x2: p2}, n=n)

    return call


#: a group's release as the table needs it: (slope, intercept, {x_eval: prediction}, failed,
#: reason) -- what worker processes send back (small and picklable)
_Summary = tuple[float, float, dict[float, float], bool, str]

#: the per-group job a worker process runs (set in the parent just before the pool forks, so
#: the children inherit it with the data instead of receiving it by pickling)
_FORK_JOB: tuple[GroupSpec, Partition] | None = None

#: the least number of groups for which ``fit_by_group`` starts worker processes (below it the
#: start-up, ~10 ms per process, is not worth it and threads are used)
PROCESS_MIN_GROUPS = 200


def _summary(r: Any) -> _Summary:
    if r.failed:
        return math.nan, math.nan, {}, True, r.reason
    return (float(r.released_slope), float(r.released_intercept),
            {float(k): float(v) for k, v in r.predictions.items()}, False, "")


def _fit_chunk(ks: list[int]) -> list[_Summary]:
    """Worker process: the lean release of the groups ``ks`` of the forked job."""
    assert _FORK_JOB is not None
    spec, part = _FORK_JOB
    fn = _release_call(spec)
    out = []
    for k in ks:
        s, e = part.starts[k], part.starts[k + 1]
        out.append(_summary(fn(part.x[s:e], part.y[s:e], group_generator(spec, spec.keys[k]))))
    return out


def _fork_context() -> Any:
    """The ``fork`` multiprocessing context where the platform has it (Linux), else None."""
    import multiprocessing as mp
    import sys

    if sys.platform != "linux" or "fork" not in mp.get_all_start_methods():
        return None
    if mp.current_process().daemon:  # a daemonic process may not have children
        return None
    return mp.get_context("fork")


def _per_group(spec: GroupSpec, part: Partition, out: _Frame, workers: int) -> None:
    """theil-sen-*: each group's own release (the core's), in key order.  With ``workers`` > 1
    the groups are split into contiguous chunks run by ``workers`` forked processes (Linux;
    elsewhere threads): every group draws from its own generator (seeded: derived from the
    key; secure: fresh OS entropy), so the table does not depend on the workers, the chunks or
    their order -- bit-identical to ``workers=1`` for the same seed."""
    global _FORK_JOB
    call = _core_call(spec)
    idx = out.active
    lean = _release_call(spec) if math.isfinite(spec.epsilon) and idx.size > 1 else None

    def run(k: int, fn: Callable[..., Any] = call) -> _Summary:
        s, e = part.starts[k], part.starts[k + 1]
        return _summary(fn(part.x[s:e], part.y[s:e], group_generator(spec, spec.keys[k])))

    results: list[_Summary] = []
    rest = idx.tolist()
    n_keys = len(spec.keys)
    # progress (silent without a hook): the position among the declared (public) keys, total
    # the number of keys -- never a count of rows; inner reports are hidden meanwhile
    with job(f"fitting {n_keys} groups one by one", n_keys) as update:
        if lean is not None:  # the core on the first group validates the options
            results.append(run(rest[0]))
            update(rest[0] + 1, n_keys)
            rest = rest[1:]
        fn = lean if lean is not None else call
        ctx = _fork_context() if lean is not None and workers > 1 else None
        if ctx is not None and len(rest) >= PROCESS_MIN_GROUPS:
            from concurrent.futures import ProcessPoolExecutor

            size = max(1, len(rest) // (16 * workers))
            chunks = [rest[i:i + size] for i in range(0, len(rest), size)]
            _FORK_JOB = (spec, part)
            try:
                with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as procs:
                    for ks, got in zip(chunks, procs.map(_fit_chunk, chunks)):  # in key order
                        results.extend(got)
                        update(int(ks[-1]) + 1, n_keys)
            finally:
                _FORK_JOB = None
        elif workers > 1 and len(rest) > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                done = pool.map(lambda k: run(k, fn), rest,
                                chunksize=max(1, len(rest) // (8 * workers)))
                for k, r in zip(rest, done):  # in key order, on this thread
                    results.append(r)
                    update(int(k) + 1, n_keys)
        else:
            for k in rest:
                results.append(run(int(k), fn))
                update(int(k) + 1, n_keys)
        update(n_keys, n_keys)
    slope = np.array([r[0] for r in results])
    intercept = np.array([r[1] for r in results])
    ok = np.array([not r[3] for r in results], dtype=bool)
    reasons = [r[4] for r in results]
    preds: dict[float, np.ndarray] = {}
    for j, r in enumerate(results):
        for xv, val in r[2].items():
            preds.setdefault(xv, np.full(idx.size, np.nan))[j] = val
    out.set_line(idx, slope, intercept, preds, ok, reasons)


def fit_local(spec: GroupSpec, part: Partition, *, workers: int | None = None) -> pd.DataFrame:
    """Vectorised per-group releases (see the module doc); ``spec`` must be :func:`supported`."""
    out = _Frame(spec, part)
    nw = _workers(workers)
    if spec.method == "noisy-stats":
        _noisy_stats_kernel(spec, part, out)
    elif spec.method == "dp-intercept":
        _dp_intercept_kernel(spec, part, out)
    elif spec.method == "dp-gd":
        _dp_gd_kernel(spec, part, out)
    else:
        _per_group(spec, part, out, nw)
    return out.table(spec)
