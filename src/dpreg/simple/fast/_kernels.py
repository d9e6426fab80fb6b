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

__all__ = ["HAVE_NUMBA", "jit_on_first_use", "all_pair_values", "prediction_count_separated",
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


def _prediction_count_loop(Y: np.ndarray, T: np.ndarray, Dh: np.ndarray, Dl: np.ndarray,
                           w: np.ndarray, run_starts: np.ndarray) -> int:  # pragma: no cover
    """Cross-run inversions of the prediction keys U_i = (Y_i − ΣT)/(Dh_i + Dl_i) when every
    two keys are provably apart; −1 when some are not (the caller then runs the general exact
    path).  The arithmetic of ``PairCounter._prediction_keys`` in one compiled pass: the
    numerator as a double-double with a rigorous error bound, the double-double division with
    its bound, a sort by the leading double and the separation test of
    :func:`dpreg.simple.fast._exact.exact_ranks` (the common case there); with all neighbours
    separated the sorted order is the exact order, keys are distinct, and the count is the
    Fenwick inversion count of :func:`_inversions_bit`."""
    n = Y.size
    m = T.size
    u = 2.0 ** -53
    qh = np.empty(n)
    tol = np.empty(n)
    ql = np.empty(n)
    for i in range(n):
        # N = Y − ΣT exactly as s + Σe (TwoSum chain); E = fl(Σe), |E − Σe| <= (m − 1)u·Σ|e|
        s = Y[i]
        e_sum = 0.0
        e_abs = 0.0
        for k in range(m):
            a = s
            b = -T[k]
            s = a + b
            bb = s - a
            e = (a - (s - bb)) + (b - bb)
            e_sum += e
            e_abs += abs(e)
        err_n = 0.0 if m <= 1 else m * u * e_abs * (1.0 + 2.0 ** -40)
        nh = s + e_sum
        bb = nh - s
        nl = (s - (nh - bb)) + (e_sum - bb)
        # double-double division by D = Dh + Dl (as in _prediction_keys)
        dh = Dh[i]
        q1 = nh / dh
        p1 = q1 * dh
        c = 134217729.0 * q1
        ah = c - (c - q1)
        al = q1 - ah
        c = 134217729.0 * dh
        bh = c - (c - dh)
        bl = dh - bh
        e1 = ((ah * bh - p1) + ah * bl + al * bh) + al * bl
        r = (((nh - p1) - e1) + nl) - q1 * Dl[i]
        q2 = r / dh
        h = q1 + q2
        bb = h - q1
        lw = (q1 - (h - bb)) + (q2 - bb)
        kappa = 1.02 * err_n / abs(dh)
        if not (np.isfinite(h) and np.isfinite(lw) and np.isfinite(kappa)):
            return -1
        qh[i] = h
        ql[i] = lw
        tol[i] = 27.0 * u * u * abs(h) + kappa + 2.0 ** -990
    order = np.argsort(qh)
    rank = np.empty(n, dtype=np.int64)
    for p in range(n):
        rank[order[p]] = p
    for p in range(1, n):
        a = order[p - 1]
        b = order[p]
        if qh[a] == qh[b]:
            return -1  # the (hi, lo) order would be needed: the general path
        # _separated: the gap exceeds the two tolerances
        h1 = qh[b]
        h0 = -qh[a]
        dh = h1 + h0
        bb = dh - h1
        de = (h1 - (dh - bb)) + (h0 - bb)
        dl = ql[b] - ql[a]
        gap = dh + (de + dl)
        slack = (tol[b] + tol[a]) * (1.0 + 2.0 ** -40) + 4.0 * u * (
            abs(dh) + abs(de) + abs(dl)) + 2.0 ** -1060
        if not gap > slack:
            return -1
    return _inversions_nb(rank, w, run_starts)


_prediction_count_nb = jit_on_first_use(_prediction_count_loop)


def prediction_count_separated(Y: np.ndarray, T: np.ndarray, Dh: np.ndarray, Dl: np.ndarray,
                               w: np.ndarray, run_starts: np.ndarray) -> int | None:
    """:func:`_prediction_count_loop` compiled (None without numba or when the keys are not all
    provably apart)."""
    kernel = _prediction_count_nb()
    if kernel is None:  # pragma: no cover - depends on the environment
        return None
    got = int(kernel(Y, np.ascontiguousarray(T, dtype=np.float64), Dh, Dl,
                     np.ascontiguousarray(w, dtype=np.int64),
                     np.ascontiguousarray(run_starts, dtype=np.int64)))
    return None if got < 0 else got


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
