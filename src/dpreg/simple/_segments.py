"""Segment reductions that reproduce NumPy's own summation bit for bit.

``numpy.sum`` of a contiguous float64 array uses pairwise summation (blocks of 8 partial sums,
split in halves above 128 elements).  :func:`segment_sums` applies exactly that algorithm to
every segment ``values[starts[g]:starts[g+1]]`` at once, so per-group means and gradient sums
computed for all groups together are identical to the per-group ``.sum()`` of the reference
loop.  numba when available; otherwise a per-segment ``.sum()`` loop (the definition itself).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpreg.simple.fast._kernels import HAVE_NUMBA

__all__ = ["segment_sums", "segment_sums_numpy", "clipped_means", "clipped_centred",
           "gd_gradient_sums"]


def _pairwise(a: np.ndarray, s: int, n: int) -> float:  # pragma: no cover - compiled by numba
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[s + i]
        return res
    if n <= 128:
        r0 = a[s]
        r1 = a[s + 1]
        r2 = a[s + 2]
        r3 = a[s + 3]
        r4 = a[s + 4]
        r5 = a[s + 5]
        r6 = a[s + 6]
        r7 = a[s + 7]
        i = 8
        stop = n - (n % 8)
        while i < stop:
            r0 += a[s + i]
            r1 += a[s + i + 1]
            r2 += a[s + i + 2]
            r3 += a[s + i + 3]
            r4 += a[s + i + 4]
            r5 += a[s + i + 5]
            r6 += a[s + i + 6]
            r7 += a[s + i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[s + i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(a, s, n2) + _pairwise(a, s + n2, n - n2)


def _pairwise_clip(a: np.ndarray, s: int, n: int, lo: float, hi: float
                   ) -> float:  # pragma: no cover - compiled by numba
    """:func:`_pairwise` of ``clip(a[s:s+n], lo, hi)`` (clipping each value as it is read:
    ``min(max(v, lo), hi)``, NumPy's clip for finite values)."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += min(max(a[s + i], lo), hi)
        return res
    if n <= 128:
        r0 = min(max(a[s], lo), hi)
        r1 = min(max(a[s + 1], lo), hi)
        r2 = min(max(a[s + 2], lo), hi)
        r3 = min(max(a[s + 3], lo), hi)
        r4 = min(max(a[s + 4], lo), hi)
        r5 = min(max(a[s + 5], lo), hi)
        r6 = min(max(a[s + 6], lo), hi)
        r7 = min(max(a[s + 7], lo), hi)
        i = 8
        stop = n - (n % 8)
        while i < stop:
            r0 += min(max(a[s + i], lo), hi)
            r1 += min(max(a[s + i + 1], lo), hi)
            r2 += min(max(a[s + i + 2], lo), hi)
            r3 += min(max(a[s + i + 3], lo), hi)
            r4 += min(max(a[s + i + 4], lo), hi)
            r5 += min(max(a[s + i + 5], lo), hi)
            r6 += min(max(a[s + i + 6], lo), hi)
            r7 += min(max(a[s + i + 7], lo), hi)
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += min(max(a[s + i], lo), hi)
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise_clip(a, s, n2, lo, hi) + _pairwise_clip(a, s + n2, n - n2, lo, hi)


def _clip_centre_loop(values: np.ndarray, starts: np.ndarray, lo: float, hi: float,
                      means: np.ndarray, out: np.ndarray,
                      centre: bool) -> None:  # pragma: no cover - compiled by numba
    for k in range(starts.size - 1):
        s, e = starts[k], starts[k + 1]
        m = _pairwise_clip(values, s, e - s, lo, hi) / (e - s)
        means[k] = m
        if centre:
            for i in range(s, e):
                out[i] = min(max(values[i], lo), hi) - m


def _gd_term(a: np.ndarray, b: np.ndarray, v: np.ndarray, i: int, p0: float, p1: float,
             tau: float) -> tuple[float, float]:  # pragma: no cover - compiled by numba
    """Row i's clipped gradient terms (clip(2r·a_i, ±τ), clip(2r·b_i, ±τ)), r = ŷ(u_i) − v_i:
    the operations of the NumPy expression of :mod:`dpreg.simple._gradient_descent`."""
    r2 = 2.0 * (1.0 * (2.0 * (p0 * a[i] + p1 * b[i]) - v[i]))
    return min(max(r2 * a[i], -tau), tau), min(max(r2 * b[i], -tau), tau)


def _gd_pairwise(a: np.ndarray, b: np.ndarray, v: np.ndarray, s: int, n: int, p0: float,
                 p1: float, tau: float) -> tuple[float, float]:  # pragma: no cover - numba
    """:func:`_pairwise` of both gradient terms (:func:`_gd_term`) of rows s .. s+n−1, each
    term computed as it is read: NumPy's summation order on the same values, bit-identical to
    summing the materialised terms, without writing them to memory."""
    if n < 8:
        ra = 0.0
        rb = 0.0
        for i in range(s, s + n):
            ta, tb = _gd_term(a, b, v, i, p0, p1, tau)
            ra += ta
            rb += tb
        return ra, rb
    if n <= 128:
        a0, b0 = _gd_term(a, b, v, s, p0, p1, tau)
        a1, b1 = _gd_term(a, b, v, s + 1, p0, p1, tau)
        a2, b2 = _gd_term(a, b, v, s + 2, p0, p1, tau)
        a3, b3 = _gd_term(a, b, v, s + 3, p0, p1, tau)
        a4, b4 = _gd_term(a, b, v, s + 4, p0, p1, tau)
        a5, b5 = _gd_term(a, b, v, s + 5, p0, p1, tau)
        a6, b6 = _gd_term(a, b, v, s + 6, p0, p1, tau)
        a7, b7 = _gd_term(a, b, v, s + 7, p0, p1, tau)
        k = 8
        stop = n - (n % 8)
        while k < stop:
            i = s + k
            ta, tb = _gd_term(a, b, v, i, p0, p1, tau)
            a0 += ta
            b0 += tb
            ta, tb = _gd_term(a, b, v, i + 1, p0, p1, tau)
            a1 += ta
            b1 += tb
            ta, tb = _gd_term(a, b, v, i + 2, p0, p1, tau)
            a2 += ta
            b2 += tb
            ta, tb = _gd_term(a, b, v, i + 3, p0, p1, tau)
            a3 += ta
            b3 += tb
            ta, tb = _gd_term(a, b, v, i + 4, p0, p1, tau)
            a4 += ta
            b4 += tb
            ta, tb = _gd_term(a, b, v, i + 5, p0, p1, tau)
            a5 += ta
            b5 += tb
            ta, tb = _gd_term(a, b, v, i + 6, p0, p1, tau)
            a6 += ta
            b6 += tb
            ta, tb = _gd_term(a, b, v, i + 7, p0, p1, tau)
            a7 += ta
            b7 += tb
            k += 8
        ra = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
        rb = ((b0 + b1) + (b2 + b3)) + ((b4 + b5) + (b6 + b7))
        while k < n:
            ta, tb = _gd_term(a, b, v, s + k, p0, p1, tau)
            ra += ta
            rb += tb
            k += 1
        return ra, rb
    n2 = n // 2
    n2 -= n2 % 8
    a1, b1 = _gd_pairwise(a, b, v, s, n2, p0, p1, tau)
    a2, b2 = _gd_pairwise(a, b, v, s + n2, n - n2, p0, p1, tau)
    return a1 + a2, b1 + b2


def _gd_round_loop(a: np.ndarray, b: np.ndarray, v: np.ndarray, starts: np.ndarray,
                   p: np.ndarray, tau: float, first: int, stop: int,
                   out: np.ndarray) -> None:  # pragma: no cover - compiled by numba
    """Segments first .. stop−1 of one round: ``out[k] = (Σ clip(2r·a), Σ clip(2r·b))``."""
    for k in range(first, stop):
        s, e = starts[k], starts[k + 1]
        ga, gb = _gd_pairwise(a, b, v, s, e - s, p[k, 0], p[k, 1], tau)
        out[k, 0] = ga
        out[k, 1] = gb


def _segment_loop(values: np.ndarray, starts: np.ndarray) -> np.ndarray:  # pragma: no cover
    g = starts.size - 1
    out = np.zeros(g)
    for k in range(g):
        out[k] = _pairwise(values, starts[k], starts[k + 1] - starts[k])
    return out


if HAVE_NUMBA:
    import os

    import numba

    # the on-disk cache needs the source on disk (not a zipped wheel: spark-submit --py-files)
    _njit = numba.njit(cache=os.path.isfile(__file__), nogil=True)
    _pairwise = _njit(_pairwise)  # recursive: jitted in place
    _pairwise_clip = _njit(_pairwise_clip)
    _segment_nb = _njit(_segment_loop)
    _clip_centre_nb = _njit(_clip_centre_loop)
    _gd_term = _njit(_gd_term)
    _gd_pairwise = _njit(_gd_pairwise)  # recursive: jitted in place
    _gd_round_nb = _njit(_gd_round_loop)
else:  # pragma: no cover
    _segment_nb = None  # type: ignore[assignment]
    _gd_round_nb = None  # type: ignore[assignment]
    _clip_centre_nb = None  # type: ignore[assignment]


def segment_sums_numpy(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per-segment ``numpy.sum`` (the definition; used without numba and in the tests)."""
    return np.array([values[starts[k]:starts[k + 1]].sum() for k in range(starts.size - 1)],
                    dtype=np.float64)


def segment_sums(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``[values[s:e].sum() for s, e in segments]``, bit-identical, vectorised."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    if HAVE_NUMBA:
        return _segment_nb(values, starts)
    return segment_sums_numpy(values, starts)


#: the least number of rows for which :func:`gd_gradient_sums` splits a round between threads
GD_THREAD_MIN_ROWS = 200_000


def gd_gradient_sums(a: np.ndarray, b: np.ndarray, v: np.ndarray, starts: np.ndarray,
                     p: np.ndarray, tau: float, pool: Any = None) -> np.ndarray:
    """One DP-GD round's clipped gradient sums for every segment: row k is
    ``[clip(2·r·a, ±τ).sum(), clip(2·r·b, ±τ).sum()]`` over segment k with
    ``r = 2·(p[k,0]·a + p[k,1]·b) − v`` -- the per-group gradient of
    :mod:`dpreg.simple._gradient_descent` (the same operations in the same order, NumPy's
    pairwise summation), bit-identical, in one pass that writes nothing but the sums (numba;
    the NumPy expression otherwise).  ``pool``: a ``concurrent.futures`` executor whose
    threads each take a contiguous share of the segments (the kernel releases the GIL; every
    segment's sums are computed alone, so the result does not depend on the split)."""
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    g = starts.size - 1
    if HAVE_NUMBA:
        out = np.empty((g, 2))
        p = np.ascontiguousarray(p, dtype=np.float64)
        tau = float(tau)
        workers = getattr(pool, "_max_workers", 1) if pool is not None else 1
        if workers > 1 and g > 1 and int(starts[-1]) >= GD_THREAD_MIN_ROWS:
            # contiguous shares of about equal numbers of rows
            cuts = np.searchsorted(starts, np.linspace(0, starts[-1], workers + 1)[1:-1])
            bounds = [0, *sorted(set(int(c) for c in cuts) - {0, g}), g]
            list(pool.map(lambda k: _gd_round_nb(a, b, v, starts, p, tau, bounds[k],
                                                 bounds[k + 1], out),
                          range(len(bounds) - 1)))
        else:
            _gd_round_nb(a, b, v, starts, p, tau, 0, g, out)
        return out
    seg = np.repeat(np.arange(g), np.diff(starts))
    resid = 1.0 * (2.0 * (p[seg, 0] * a + p[seg, 1] * b) - v)
    return np.column_stack([segment_sums(np.clip(2.0 * resid * a, -tau, tau), starts),
                            segment_sums(np.clip(2.0 * resid * b, -tau, tau), starts)])


def _clip_centre(values: np.ndarray, starts: np.ndarray, lo: float, hi: float, centre: bool
                 ) -> tuple[np.ndarray, np.ndarray | None]:
    values = np.ascontiguousarray(values, dtype=np.float64)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    g = starts.size - 1
    if HAVE_NUMBA and not np.any(np.diff(starts) == 0):
        means = np.empty(g)
        out = np.empty(values.size if centre else 0)
        _clip_centre_nb(values, starts, float(lo), float(hi), means, out, centre)
        return means, (out if centre else None)
    clipped = np.clip(values, lo, hi)  # the definition (and empty segments)
    counts = np.diff(starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = segment_sums(clipped, starts) / counts
    if not centre:
        return means, None
    return means, clipped - np.repeat(means, counts)


def clipped_means(values: np.ndarray, starts: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """``[np.mean(np.clip(values[s:e], lo, hi)) for each segment]``, bit-identical, one pass."""
    return _clip_centre(values, starts, lo, hi, False)[0]


def clipped_centred(values: np.ndarray, starts: np.ndarray, lo: float, hi: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Segment means of the clipped values and the clipped values minus their segment's mean
    (``c - c.mean()`` per segment, ``c = np.clip(values, lo, hi)``), bit-identical to NumPy,
    without the temporaries."""
    means, centred = _clip_centre(values, starts, lo, hi, True)
    assert centred is not None
    return means, centred
