"""Exact floating-point arithmetic for the rank counts of :mod:`dpreg.simple.fast`.

Everything here is vectorised NumPy on float64 and *error-free*: the results are exact real
numbers represented as sums of floats (Dekker/Knuth error-free transformations), so that the
order of the pairwise Theil-Sen values can be decided exactly -- ties included -- without
enumerating pairs.

* :func:`two_sum` / :func:`two_prod`: a + b = s + e and a·b = p + e exactly (Knuth; Dekker with
  Veltkamp's split).  Exact unless the result overflows; :func:`two_prod` also needs
  |a|, |b| < 2^996 and, for nonzero a and b, exponent(a) + exponent(b) >= -960 (callers
  check this).
* :func:`accurate_sum`: a sum of floats as a double-double with a rigorous error bound of order
  u²·|sum| (iterated error-free VecSum passes, Ogita, Rump & Oishi 2005).
* :func:`exact_sign`: the exact sign of a sum of floats (iterated error-free distillation,
  with Shewchuk's Grow-Expansion as the fallback that always terminates).
* :func:`exact_ranks`: exact ranks (ties share a rank) of real keys given as double-double
  approximations with a proven error bound, plus an exact comparator used only for the keys
  whose error intervals overlap (exact ties or keys closer than ~2^-100 relative).

References: Knuth, TAOCP vol. 2 (TwoSum); Dekker 1971 (TwoProduct); Shewchuk 1997, "Adaptive
precision floating-point arithmetic and fast robust geometric predicates" (Grow-Expansion,
Thm. 10); Ogita, Rump & Oishi 2005 (iterated VecSum).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["U", "two_sum", "two_prod", "exponent", "accurate_sum", "exact_sign",
           "exact_ranks", "float_terms"]

U = 2.0 ** -53  # unit roundoff
_SPLITTER = 134217729.0  # 2^27 + 1


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s = fl(a + b) and e with a + b = s + e exactly (no overflow)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p = fl(a·b) and e with a·b = p + e exactly (see the module doc for the range)."""
    p = a * b
    c = _SPLITTER * a
    ah = c - (c - a)
    al = a - ah
    c = _SPLITTER * b
    bh = c - (c - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def exponent(v: np.ndarray) -> np.ndarray:
    """floor(log2|v|) + 1 (numpy.frexp's exponent); a very negative number for 0."""
    _, e = np.frexp(v)
    return np.where(v == 0, -10_000, e).astype(np.int64)


def float_terms(v: Fraction, max_terms: int = 8) -> list[float]:
    """An exact expansion of a dyadic rational as floats (greedy: each term is the nearest
    float to the remainder); raises ValueError if v needs more than ``max_terms`` floats."""
    out: list[float] = []
    rem = v
    while rem != 0:
        if len(out) == max_terms:
            raise ValueError("not a short sum of floats")
        try:
            t = float(rem)  # correctly rounded
        except OverflowError:
            raise ValueError("outside the float range") from None
        if not math.isfinite(t) or t == 0:
            raise ValueError("outside the float range")
        out.append(t)
        rem -= Fraction(t)
    return out or [0.0]


def _vecsum(cols: list[np.ndarray]) -> None:
    """One error-free cascade in place: the exact row sums are unchanged, the last column is
    the floating-point sum and the others are the rounding errors."""
    for j in range(1, len(cols)):
        cols[j], cols[j - 1] = two_sum(cols[j], cols[j - 1])


def accurate_sum(terms: Sequence[np.ndarray], *, max_passes: int = 8
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row sums of ``terms`` as normalised double-doubles (hi, lo) with a rigorous bound ``err``
    of |exact sum − (hi + lo)|.

    VecSum passes are repeated (per row, until the rounding errors are below 4u of the sum or
    ``max_passes``); then the errors are summed in floating point and added with TwoSum.  With
    m terms the bound is (m + 1)·u·Σ|errors| (inflated for its own rounding), i.e. about
    u²·|sum| once the passes have converged, and 0 when the sum is exact.  (No underflow term
    is needed: a floating-point sum that falls in the subnormal range is exact.)
    """
    cols = [np.array(v, dtype=np.float64) for v in terms]
    m = len(cols)
    rows = cols[0].size
    hi = np.empty(rows)
    lo = np.empty(rows)
    err = np.empty(rows)
    idx: np.ndarray | None = None
    for k in range(max_passes):
        _vecsum(cols)
        s = cols[-1]
        ab = np.abs(cols[0])
        for c in cols[1:-1]:
            ab = ab + np.abs(c)
        last = k == max_passes - 1
        done = None if last else ab <= 4.0 * U * np.abs(s)
        if done is None or done.all():
            sel: Any = slice(None) if idx is None else idx
            _finish_sum(cols, ab, m, sel, hi, lo, err)
            break
        if done.any():
            d_idx = np.flatnonzero(done) if idx is None else idx[done]
            _finish_sum([c[done] for c in cols], ab[done], m, d_idx, hi, lo, err)
            keep = ~done
            cols = [c[keep] for c in cols]
            idx = np.flatnonzero(keep) if idx is None else idx[keep]
    return hi, lo, err


def _finish_sum(cols: list[np.ndarray], ab: np.ndarray, m: int, sel: Any, hi: np.ndarray,
                lo: np.ndarray, err: np.ndarray) -> None:
    r = cols[0] if m > 1 else np.zeros_like(cols[0])
    for c in cols[1:-1]:
        r = r + c
    h, low = two_sum(cols[-1], r)
    hi[sel], lo[sel] = h, low
    err[sel] = (m + 1) * U * ab * (1.0 + 4.0 * m * U)


def _grow_sign(terms: np.ndarray) -> np.ndarray:
    """Exact sign of the row sums by Shewchuk's Grow-Expansion (always exact; O(m²))."""
    rows, m = terms.shape
    e = [terms[:, 0].copy()]
    for j in range(1, m):
        q = terms[:, j].copy()
        h = []
        for comp in e:
            q, hh = two_sum(q, comp)
            h.append(hh)
        h.append(q)
        e = h
    ex = np.stack(e, axis=1)  # nonoverlapping: the largest component carries the sign
    top = np.argmax(np.abs(ex), axis=1)
    return np.sign(ex[np.arange(rows), top]).astype(np.int64)


def exact_sign(terms: Sequence[np.ndarray] | np.ndarray, *, max_passes: int | None = None
               ) -> np.ndarray:
    """Exact sign (-1, 0, +1) of Σ_j terms[j] for every row.

    Iterated VecSum: each pass replaces the terms by an error-free cascade (their exact sum is
    unchanged) whose last entry s is the floating-point sum; a row is decided when |s| exceeds
    the sum of the other magnitudes (inflated for its own rounding) or when every entry is 0.
    Rows still open after ``max_passes`` (default 2m) go to Grow-Expansion.
    """
    t = np.stack([np.asarray(v, dtype=np.float64) for v in terms], axis=1) if not isinstance(
        terms, np.ndarray) else np.array(terms, dtype=np.float64)
    rows, m = t.shape
    out = np.zeros(rows, dtype=np.int64)
    if rows == 0:
        return out
    open_ = np.arange(rows)
    cur = t
    infl = 1.0 + 4.0 * m * U
    for _ in range(max_passes if max_passes is not None else 2 * m):
        for j in range(1, m):
            s, e = two_sum(cur[:, j], cur[:, j - 1])
            cur[:, j] = s
            cur[:, j - 1] = e
        s = cur[:, -1]
        rest = np.sum(np.abs(cur[:, :-1]), axis=1) * infl
        zero = (s == 0) & (rest == 0)
        done = zero | (np.abs(s) > rest)
        out[open_[done]] = np.where(zero[done], 0, np.sign(s[done])).astype(np.int64)
        open_ = open_[~done]
        cur = cur[~done]
        if open_.size == 0:
            return out
    out[open_] = _grow_sign(cur)
    return out


def _dd_order(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Lexicographic order of (hi, lo): sort by hi, then re-sort the runs of equal hi by lo."""
    order = np.argsort(hi)
    hs = hi[order]
    eq = hs[1:] == hs[:-1]
    if eq.any():
        inrun = np.zeros(hs.size, dtype=bool)
        inrun[1:] |= eq
        inrun[:-1] |= eq
        pos = np.flatnonzero(inrun)
        sub = order[pos]
        order[pos] = sub[np.lexsort((lo[sub], hi[sub]))]
    return order


Refiner = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


def exact_ranks(hi: np.ndarray, lo: np.ndarray, tol: np.ndarray,
                compare: Callable[[np.ndarray, np.ndarray], np.ndarray],
                refine: Refiner | None = None, exact: np.ndarray | None = None) -> np.ndarray:
    """Exact ranks of real keys v_i (equal keys share the rank of the first of them in sorted
    order; ranks lie in 0..m−1).

    ``hi + lo`` is a normalised double-double approximation of v_i (hi = fl(hi + lo)) with
    |v_i − (hi_i + lo_i)| <= tol_i, where the interval ends (hi + lo) ∓ tol are non-decreasing
    in hi + lo (a common absolute tolerance, or one proportional to |v|, qualifies).
    ``compare(i, j)`` returns the exact sign of v_i − v_j for index arrays.

    Sorting the double-doubles lexicographically orders their real values exactly.  Keys with
    identical double-doubles are presumed equal and checked against the first of their group
    with one exact comparison each (exact ties are common in degenerate data); the group heads
    are then ordered: two neighbours whose (conservatively computed) gap exceeds the sum of
    their tolerances are in the exact order, and the remaining runs ("clusters") are ordered
    with ``compare`` by a vectorised quicksort (pivot = middle element, three-way partition;
    the "equal" part is an exact tie).

    ``refine(i, j)`` (optional) approximates v_i − v_j as (hi, lo, rel, absb) with
    |(v_i − v_j) − (hi + lo)| <= rel·|hi| + absb; before the exact quicksort, clusters of three
    or more are re-sorted by their differences to their middle element (up to two rounds), which
    separates keys that agree to ~2^-100 but not exactly.  ``exact`` (optional) marks keys
    equal to their double-double; identical double-doubles of such keys need no comparison.
    """
    m = hi.size
    rank = np.zeros(m, dtype=np.int64)
    if m <= 1:
        return rank
    order = _dd_order(hi, lo)
    h, lw = hi[order], lo[order]
    same = np.concatenate(([False], (h[1:] == h[:-1]) & (lw[1:] == lw[:-1])))
    if not same.any():  # the common case: every neighbour pair clearly apart
        t = tol[order]
        if np.all(_separated(h, lw, t)):
            rank[order] = np.arange(m, dtype=np.int64)
            return rank
    head = ~same
    attach = np.full(m, -1, dtype=np.int64)  # position of the head an element is tied to
    if same.any():
        first = np.maximum.accumulate(np.where(head, np.arange(m), 0))
        mem = np.flatnonzero(same)
        eq = np.zeros(mem.size, dtype=bool)
        todo = np.ones(mem.size, dtype=bool)
        if exact is not None:
            todo = ~(exact[order[mem]] & exact[order[first[mem]]])
            eq[~todo] = True
        if todo.any():
            eq[todo] = compare(order[mem[todo]], order[first[mem[todo]]]) == 0
        attach[mem[eq]] = first[mem[eq]]
        head[mem[~eq]] = True
    hp = np.flatnonzero(head)  # head positions, in dd order
    ho = order[hp]
    k = hp.size
    hfirst = np.arange(k, dtype=np.int64)  # tie groups among heads (index of first head)
    if k > 1:
        sep = _separated(h[hp], lw[hp], tol[ho])
        if not np.all(sep):
            perm = np.arange(k, dtype=np.int64)
            if refine is not None:
                base = refine
                _refine_clusters(perm, sep, lambda a, b: base(ho[a], ho[b]))
            _resolve_clusters(perm, hfirst, sep, lambda a, b: compare(ho[a], ho[b]))
            hp, ho = hp[perm], ho[perm]
    # expand: each head followed by the elements attached to it; a tie group of heads takes
    # the position of its first element
    size = np.ones(m, dtype=np.int64)
    if np.any(attach >= 0):
        size += np.bincount(attach[attach >= 0], minlength=m)
    unit = size[hp]
    start = np.concatenate(([0], np.cumsum(unit)[:-1]))
    grp = start[hfirst]
    rank[ho] = grp
    if np.any(attach >= 0):
        head_rank = np.zeros(m, dtype=np.int64)
        head_rank[hp] = grp
        att = np.flatnonzero(attach >= 0)
        rank[order[att]] = head_rank[attach[att]]
    return rank


def _separated(h: np.ndarray, lw: np.ndarray, tl: np.ndarray) -> np.ndarray:
    """For consecutive double-doubles in order: is the gap provably larger than the sum of
    the two tolerances (so that the exact keys are in the same order)?"""
    dh, de = two_sum(h[1:], -h[:-1])
    dl = lw[1:] - lw[:-1]
    gap = dh + (de + dl)
    slack = (tl[1:] + tl[:-1]) * (1.0 + 2.0 ** -40) + 4.0 * U * (
        np.abs(dh) + np.abs(de) + np.abs(dl)) + 2.0 ** -1060
    return gap > slack


def _refine_clusters(perm: np.ndarray, sep: np.ndarray, refine: Refiner, rounds: int = 2) -> None:
    """Re-sort each cluster of three or more (a run of unseparated neighbours of ``perm``) by
    the keys' differences to the cluster's middle element and update ``sep`` inside it."""
    m = perm.size
    for _ in range(rounds):
        cut = np.concatenate(([True], sep, [True]))
        starts = np.flatnonzero(cut[:-1])
        ends = np.append(starts[1:], m)
        big = (ends - starts) >= 3
        if not big.any():
            return
        s0, s1 = starts[big], ends[big]
        lens = s1 - s0
        pos = np.repeat(s0, lens) + (np.arange(int(lens.sum())) - np.repeat(
            np.cumsum(lens) - lens, lens))
        seg = np.repeat(np.arange(s0.size), lens)
        ref = perm[(s0 + lens // 2)][seg]
        h, lw, rel, absb = refine(perm[pos], ref)
        bad = ~(np.isfinite(h) & np.isfinite(lw) & np.isfinite(absb))
        h = np.where(bad, 0.0, h)
        lw = np.where(bad, 0.0, lw)
        k = np.lexsort((lw, h, seg))
        perm[pos] = perm[pos][k]
        h, lw, seg, bad = h[k], lw[k], seg[k], bad[k]
        absb = np.where(bad, np.inf, absb[k])
        ab = np.maximum.reduceat(absb, np.concatenate(([0], np.cumsum(lens)[:-1])))[seg]
        tl = rel * np.abs(h) + ab
        inner = seg[1:] == seg[:-1]
        sep[pos[:-1][inner]] = _separated(h, lw, tl)[inner]


def _resolve_clusters(order: np.ndarray, first: np.ndarray, sep: np.ndarray,
                      compare: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> None:
    """Sort every cluster (maximal run of unseparated neighbours) of ``order`` in place with
    the exact comparator and record the tie groups in ``first``."""
    m = order.size
    cut = np.concatenate(([True], sep, [True]))
    starts = np.flatnonzero(cut[:-1])
    ends = np.append(starts[1:], m)
    big = (ends - starts) >= 2
    seg_s, seg_e = starts[big], ends[big]
    while seg_s.size:
        lens = seg_e - seg_s
        pos = np.repeat(seg_s, lens) + (np.arange(int(lens.sum())) - np.repeat(
            np.cumsum(lens) - lens, lens))
        seg = np.repeat(np.arange(seg_s.size), lens)
        pivot_pos = seg_s + lens // 2
        elems = order[pos]
        piv = order[pivot_pos][seg]
        c = compare(elems, piv).astype(np.int64)
        c = np.where(elems == piv, 0, c)
        k = np.lexsort((c, seg))  # within a segment: smaller, equal, larger (stable)
        order[pos] = elems[k]
        cs, ss = c[k], seg[k]
        new = np.ones(pos.size, dtype=bool)
        new[1:] = (cs[1:] != cs[:-1]) | (ss[1:] != ss[:-1])
        g_start = np.flatnonzero(new)
        g_end = np.append(g_start[1:], pos.size)
        g_c = cs[g_start]
        # equal-to-pivot groups are exact ties: every member shares the first position
        for_eq = g_c == 0
        eq_len = g_end[for_eq] - g_start[for_eq]
        eq_first = pos[g_start[for_eq]]
        idx = np.repeat(eq_first, eq_len)
        tgt = pos[np.repeat(g_start[for_eq], eq_len) + (np.arange(int(eq_len.sum())) - np.repeat(
            np.cumsum(eq_len) - eq_len, eq_len))]
        first[tgt] = idx
        keep = (~for_eq) & ((g_end - g_start) >= 2)
        seg_s = pos[g_start[keep]]
        seg_e = seg_s + (g_end[keep] - g_start[keep])
