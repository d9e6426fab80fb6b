"""Counting kernels of the O(n log n) all-pairs machinery (numba, with a pure-NumPy fallback).

The one hot loop is a weighted inversion count across *runs*: for points in a fixed order π
with integer ranks ρ (the positions of their float keys in sorted order), integer weights w
and runs (consecutive blocks of π whose internal pairs are ignored -- the groups of equal x),

    inversions = Σ w_a w_b [ρ_a > ρ_b]   over a before b in π, a and b in different runs.

* numba: a Fenwick (binary indexed) tree over ranks, visiting π once; the members of a run
  are all queried before any of them is inserted.  O(n log n), O(n) memory.
* NumPy fallback: the same count as integer comparisons, level by level of a binary
  decomposition of the positions with ``searchsorted`` (O(n log² n)); tested to be identical.

:func:`overlap_pairs` enumerates the pairs whose keys are within the tolerance of each other
(the only pairs whose order may disagree with the reference floating-point values).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["HAVE_NUMBA", "jit_on_first_use", "all_pair_values",
           "cross_run_inversions", "cross_run_inversions_numpy", "overlap_pairs",
           "resolve_backend"]

try:  # numba is the optional ``fast`` extra
    if os.environ.get("DPREG_DISABLE_NUMBA"):
        raise ImportError("disabled by DPREG_DISABLE_NUMBA")
    import numba

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised through DPREG_DISABLE_NUMBA in CI
    numba = None  # type: ignore[assignment]
    HAVE_NUMBA = False


def _inversions_bit(rank: np.ndarray, w: np.ndarray,
                    run_starts: np.ndarray) -> int:  # pragma: no cover - compiled by numba
    n = rank.size
    tree = np.zeros(n + 1, dtype=np.int64)
    inserted = 0
    inv = 0
    for r in range(run_starts.size - 1):
        s = run_starts[r]
        e = run_starts[r + 1]
        for b in range(s, e):
            k = rank[b] + 1
            pre = 0
            while k > 0:
                pre += tree[k]
                k -= k & (-k)
            inv += w[b] * (inserted - pre)
        for b in range(s, e):
            k = rank[b] + 1
            wb = w[b]
            while k <= n:
                tree[k] += wb
                k += k & (-k)
            inserted += wb
    return inv


def _disk_cache_ok(func: Any) -> bool:
    """numba's on-disk cache needs ``func``'s source file on disk: imported from a zipped
    wheel (spark-submit --py-files) the kernels are compiled without it."""
    return os.path.isfile(func.__code__.co_filename)


if HAVE_NUMBA:
    _inversions_nb = numba.njit(cache=_disk_cache_ok(_inversions_bit), nogil=True)(_inversions_bit)
else:  # pragma: no cover
    _inversions_nb = None  # type: ignore[assignment]



def jit_on_first_use(loop: Any) -> Callable[[], Any]:
    """A function returning ``loop`` compiled by numba (``nogil=True``, disk-cached when its
    source is a file) the first
    time it is called -- so ``import dpreg`` never loads numba -- or None without numba.  The
    one lazy-compile helper of the per-group kernels."""

    @functools.cache
    def compiled() -> Any:
        if not HAVE_NUMBA:  # pragma: no cover - depends on the environment
            return None
        import numba

        return numba.njit(cache=_disk_cache_ok(loop), nogil=True)(loop)

    return compiled


def _all_pair_values_loop(x: np.ndarray, y: np.ndarray, x_eval: float, slope: bool, lo: float,
                          hi: float, out: np.ndarray) -> int:  # pragma: no cover - numba
    """The untied pairs' values of all pairs i < j, clipped to [lo, hi], written to ``out`` (in
    an unspecified order); returns how many.  Each value is the float formula of
    :func:`dpreg.simple.pairs.pair_estimates` / :func:`~dpreg.simple.pairs.pair_slopes` (the
    same IEEE operations in the same order, NaN -> 0, then numpy's clip: max then min)."""
    n = x.size
    u = 0
    for i in range(n):
        xi = x[i]
        yi = y[i]
        for j in range(i + 1, n):
            xj = x[j]
            dx = xj - xi
            if dx == 0:
                continue
            if slope:
                v = (y[j] - yi) / dx
            else:
                v = ((xj - x_eval) * yi + (x_eval - xi) * y[j]) / dx
            if v != v:
                v = 0.0
            if not v > lo:
                v = lo
            if not v < hi:
                v = hi
            out[u] = v
            u += 1
    return u


_pair_values_nb = jit_on_first_use(_all_pair_values_loop)


def all_pair_values(x: np.ndarray, y: np.ndarray, *, estimand: str, x_eval: float | None,
                    lo: float, hi: float) -> tuple[np.ndarray, int] | None:
    """(values of the pairs with distinct x, clipped to [lo, hi], unsorted; number of tied
    pairs) over all n(n−1)/2 pairs, in one compiled pass without index arrays -- or None
    without numba.  The values are those of :func:`dpreg.simple.pairs.pair_estimates`
    (predictions at ``x_eval``) or :func:`~dpreg.simple.pairs.pair_slopes` bit for bit."""
    kernel = _pair_values_nb()
    if kernel is None:  # pragma: no cover - depends on the environment
        return None
    n = int(x.size)
    size = n * (n - 1) // 2
    out = np.empty(size)
    xe = 0.0 if x_eval is None else float(x_eval)
    u = int(kernel(np.ascontiguousarray(x, dtype=np.float64),
                   np.ascontiguousarray(y, dtype=np.float64), xe, estimand == "slope",
                   float(lo), float(hi), out))
    return out[:u], size - u


def resolve_backend(backend: str) -> str:
    """"auto" -> "numba" when numba is importable, else "numpy"; validates the name."""
    from dpreg.exceptions import InvalidInputError

    if backend == "auto":
        return "numba" if HAVE_NUMBA else "numpy"
    if backend == "numba" and not HAVE_NUMBA:
        raise InvalidInputError("backend='numba' needs the optional numba package "
                                "(pip install 'dpreg[fast]'); use backend='numpy' or 'auto'")
    if backend not in ("numba", "numpy"):
        raise InvalidInputError(f"backend must be 'auto', 'numba' or 'numpy'; got {backend!r}")
    return backend


def _pairs_gt(rank: np.ndarray, w: np.ndarray, seg: np.ndarray, pos: np.ndarray) -> int:
    """Σ w_a w_b [rank_a > rank_b] over a, b in the same segment with pos_a < pos_b."""
    n = rank.size
    maxpos = int(pos.max(initial=0))
    top = n + 2
    total = 0
    d = 0
    while (1 << d) <= maxpos:
        blk = pos >> (d + 1)
        left = ((pos >> d) & 1) == 0
        right = ~left
        if right.any():
            cb = seg * (maxpos + 1) + blk
            if n > 1_000_000:
                _, cb = np.unique(cb, return_inverse=True)
                cb = cb.astype(np.int64)
            kl = cb[left] * top + rank[left]
            order = np.argsort(kl, kind="stable")
            kls = kl[order]
            cw = np.concatenate(([0], np.cumsum(w[left][order])))
            cbr = cb[right]
            lo = np.searchsorted(kls, cbr * top + rank[right] + 1, side="left")
            hi = np.searchsorted(kls, cbr * top + top, side="left")
            total += int(np.dot(w[right], cw[hi] - cw[lo]))
        d += 1
    return total


def cross_run_inversions_numpy(rank: np.ndarray, w: np.ndarray, run_starts: np.ndarray) -> int:
    """Pure-NumPy version of :func:`cross_run_inversions` (same result, O(n log² n))."""
    n = rank.size
    if n < 2:
        return 0
    rank = rank.astype(np.int64)
    ww = w.astype(np.int64)
    total = _pairs_gt(rank, ww, np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.int64))
    sizes = np.diff(run_starts)
    if np.any(sizes > 1):  # remove the pairs inside a run
        run_id = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
        pos = np.arange(n, dtype=np.int64) - run_starts[:-1][run_id]
        total -= _pairs_gt(rank, ww, run_id, pos)
    return total


def cross_run_inversions(rank: np.ndarray, w: np.ndarray, run_starts: np.ndarray, *,
                         backend: str = "auto") -> int:
    """Weighted inversions of ``rank`` across runs (module doc); backend numba | numpy."""
    rank = np.ascontiguousarray(rank, dtype=np.int64)
    w = np.ascontiguousarray(w, dtype=np.int64)
    run_starts = np.ascontiguousarray(run_starts, dtype=np.int64)
    if resolve_backend(backend) == "numba":
        return int(_inversions_nb(rank, w, run_starts))
    return cross_run_inversions_numpy(rank, w, run_starts)


def overlap_pairs(order: np.ndarray, sorted_keys: np.ndarray, tau: float, run_of: np.ndarray,
                  max_pairs: int = 2_000_000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Chunks ``(a, b)`` of π-positions of pairs from different runs whose tolerance intervals
    overlap: neither fl(k_a − τ) > fl(k_b + τ) nor fl(k_a + τ) < fl(k_b − τ).

    ``order`` sorts the keys (``sorted_keys = keys[order]``).  In key order the lower and upper
    ends are non-decreasing, so (p, q), p < q, overlaps iff fl(k_q − τ) <= fl(k_p + τ).
    O(n log n + K) for K overlapping pairs; chunks hold at most about ``max_pairs`` pairs.
    """
    lo = sorted_keys - tau
    hi = sorted_keys + tau
    end = np.searchsorted(lo, hi, side="right")
    idx = np.arange(sorted_keys.size)
    cnt = np.maximum(end - idx - 1, 0)
    csum = np.cumsum(cnt)
    start = 0
    while start < sorted_keys.size:
        base = int(csum[start - 1]) if start else 0
        stop = max(int(np.searchsorted(csum, base + max_pairs, side="right")), start + 1)
        c = cnt[start:stop]
        tot = int(c.sum())
        if tot:
            p = np.repeat(idx[start:stop], c)
            first = np.repeat(np.cumsum(c) - c, c)
            q = p + 1 + (np.arange(tot) - first)
            a, b = order[p], order[q]
            keep = run_of[a] != run_of[b]
            if keep.any():
                yield a[keep], b[keep]
        start = stop
