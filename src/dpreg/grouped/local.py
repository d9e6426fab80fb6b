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

The kernels belong to the methods (their specs, :mod:`dpreg.methods`); this module only
partitions, runs and assembles.  A spec says how (``local_kind``):

* ``"vector"`` -- ``release_groups`` on a :class:`~dpreg._spec.GroupBatch` of all groups at
  once (noisy-stats, dp-intercept: clipped means by segment pairwise sums in NumPy's own
  summation order, nvar/ncov per segment, then the core's batched release; dp-gd: the
  batched gradient descent with per-round gradient sums by segment sums);
* ``"each"`` -- ``group_release`` per group (theil-sen-*: its cost is the median itself,
  sorting and sampling the doubled multiset, or the O(n log n) exact-fast path for groups
  with n >= 400), run on ``workers`` threads or forked processes.  The first group goes
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

from dpreg import methods
from dpreg._progress import job
from dpreg._spec import GroupBatch, GroupLines
from dpreg.grouped._common import (
    GroupSpec,
    Partition,
    assemble,
    group_generator,
    group_randomness,
)

__all__ = ["fit_local", "LOCAL_METHODS", "release_from_statistics", "supported"]

#: methods the LocalBackend runs itself, with the options each accepts (the specs'
#: ``local_options``; Theil-Sen uses algorithm="auto", as the estimator does: groups with
#: n >= AUTO_FAST_MIN_N (400) take the O(n log n) exact-fast path on every backend)
LOCAL_METHODS: dict[str, tuple[str, ...]] = {
    m.name: m.local_options for m in methods.specs(local=True)
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


# ---------------------------------------------------------------------- batched releases
def _batch(spec: GroupSpec, part: Partition, idx: np.ndarray, workers: int = 1) -> GroupBatch:
    """The groups of ``part`` as a :class:`~dpreg._spec.GroupBatch`: the segments of every
    group with rows (they tile the partition's x and y, so no copy is made) and the positions
    of the active groups ``idx`` among them -- computing a few inactive groups' statistics
    (1 <= n < min_rows, never released) costs less than copying the rows out.  Each active
    group's randomness is its own (:func:`~dpreg.grouped._common.group_randomness`)."""
    counts = part.counts
    nonempty = np.flatnonzero(counts > 0)
    starts = np.concatenate(([0], np.cumsum(counts[nonempty]))).astype(np.int64)
    active = np.searchsorted(nonempty, idx)
    keys = [spec.keys[k] for k in idx.tolist()]

    def randomness(positions: np.ndarray) -> Any:
        where = np.asarray(positions, dtype=np.int64).reshape(-1)
        if where.shape == active.shape and np.array_equal(where, active):
            return group_randomness(spec, keys)
        j = np.searchsorted(active, where)  # active is ascending
        if not np.array_equal(active[np.minimum(j, active.size - 1)], where):
            raise RuntimeError("internal error: randomness of a segment that is not released")
        return group_randomness(spec, [keys[i] for i in j.tolist()])

    return GroupBatch(part.x, part.y, starts, active, randomness, spec.epsilon, spec.delta,
                      spec.x_bounds, spec.y_bounds, dict(spec.options), workers)


def _write(out: _Frame, idx: np.ndarray, lines: GroupLines) -> None:
    out.set_line(idx, lines.slope, lines.intercept, dict(lines.predictions), lines.ok,
                 list(lines.reasons))


def release_from_statistics(spec: GroupSpec, out: _Frame, idx: np.ndarray,
                            stats: Any) -> None:
    """The groups ``idx`` released from per-group statistics computed elsewhere (Spark's
    native aggregation): the method's own release of a batch
    (``release_line_statistics`` of its spec), written into ``out``."""
    if idx.size == 0:
        return
    lines = methods.get(spec.method).release_line_statistics(
        stats, epsilon=spec.epsilon, x_bounds=spec.x_bounds, y_bounds=spec.y_bounds,
        rng=group_randomness(spec, [spec.keys[k] for k in idx]))
    _write(out, idx, lines)


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


def _group_release(spec: GroupSpec, *, validated: bool) -> Callable[..., Any]:
    """One group's release of the method (its spec's ``group_release``)."""
    return methods.get(spec.method).group_release(
        epsilon=spec.epsilon, x_bounds=spec.x_bounds, y_bounds=spec.y_bounds,
        options=dict(spec.options), validated=validated, delta=spec.delta)


def _fit_chunk(ks: list[int]) -> list[_Summary]:
    """Worker process: the lean release of the groups ``ks`` of the forked job."""
    assert _FORK_JOB is not None
    spec, part = _FORK_JOB
    fn = _group_release(spec, validated=True)
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
    call = _group_release(spec, validated=False)
    idx = out.active
    lean = _group_release(spec, validated=True) \
        if math.isfinite(spec.epsilon) and idx.size > 1 else None

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
    entry = methods.get(spec.method)
    if entry.local_kind == "vector":
        if out.active.size:
            _write(out, out.active, entry.release_groups(
                _batch(spec, part, out.active, _workers(workers))))
    else:
        _per_group(spec, part, out, _workers(workers))
    return out.table(spec)
