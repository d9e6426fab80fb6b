"""Exact sampling of the (widened) exponential-mechanism median -- or any quantile -- of all
pairwise estimates, and order statistics, from the rank counts of
:class:`~dpreg.simple.fast._oracle.PairCounter`.

Target.  The exponential-mechanism q-quantile (default the median, q = ½) of the doubled
multiset (N = 2·n_pairs entries: each untied pair's exact value V twice, −∞/+∞ for each tied
pair), clipped to [lo, hi] -- the mechanism :func:`dpreg.mechanisms.exp_quantile` runs on the
materialised multiset with the same q.  Its density on (lo, hi) is proportional to

    f(r) = exp(−(ε/2) · ⌊|c_θ(r) − N·q|⌋),

with N·q and the difference evaluated in floating point exactly as the materialising code
does (for an integer c this is its distance to [K₀, K₁], K₀ = ⌊N·q⌋, K₁ = ⌈N·q⌉, up to the
rounding of c − N·q, which is reproduced; the median has K₀ = K₁ = P = n_pairs = N/2), where
c(s) = #{clipped entries < s} = 2·count(s) + n_tied for lo < s <= hi (0 at or below lo, N
above hi) and, for the widened mechanism (θ > 0; the lower
K₀ entries of the sorted list shifted down by θ and the others up by θ, then clipped), the
shifted count is c_θ(r) = min(K₀, c(r + θ)) + max(0, c(r − θ) − K₀).  c_θ is non-decreasing
in r.

Resolution.  The uniform draw is resolved on the 106-bit grid of :mod:`._grid`: the sampler
draws a grid cell (prev(φ), φ] with probability ∝ length × f(φ) -- the density at the cell's
right end -- and releases the smallest double >= φ.  (The continuous density and this one
differ only on cells containing a breakpoint, i.e. at a relative scale of 2^-106; every
threshold the sampler evaluates is an exact rational, and every count is exact.)

Sampler (rejection from a piecewise-constant envelope).  Cut (lo, hi] into blocks (r₀, r₁] of
whole cells at grid points.  The proposals in a block are its cells' right ends
φ ∈ [next(r₀), r₁], so monotonicity gives c_θ(next(r₀)) <= c_θ(φ) <= c_θ(r₁) and
g_min = min of ⌊|c − N·q|⌋ over c ∈ [c_θ(next(r₀)), c_θ(r₁)] bounds f on the block: the
envelope h = Σ_blocks exp(−(ε/2)·g_min)·1[block] is a *provable* upper bound of f, exact on a block of
one cell.  Propose a block with probability ∝ length·exp(−(ε/2)·g_min) and a cell in it with
probability ∝ its length (integer arithmetic), compute c_θ(φ) exactly and accept with
probability exp(−(ε/2)·(⌊|c_θ(φ) − N·q|⌋ − g_min)) <= 1.  An accepted φ has probability
exactly ∝ length·f(φ) (standard rejection sampling); rejected points only add exact knowledge (adaptive
rejection sampling), which keeps the envelope valid.  Block boundaries are chosen by *rank
bisection*: a block is split at a point predicted (from exact counts at its ends, a random
sample of pair values, or plain bisection) to halve its rank range, to cut it one e-fold
(2/ε ranks) from its heavy end, or to isolate an atom of equal pair values in one cell, until
the envelope's mass is within a factor ``slack`` of a lower bound of f's mass.  Whatever the
data, every block is down to single cells after a bounded number of cuts (the grid-ordinal
midpoint is used every third cut), and a single-cell block has an exact envelope, so no
proposal loop can stall (the cause of the former hang on duplicated points: a one-ulp block
straddling an atom at the target rank had an envelope e^125 times its density).

As in the reference, the weights and acceptance probabilities are evaluated in floating
point; nothing else is approximated.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction
from typing import Any

import numpy as np

from dpreg.simple.fast._grid import (
    draw_cell,
    float_up,
    floor_grid,
    from_ordinal,
    next_up,
    ordinal,
)
from dpreg.simple.fast._oracle import PairCounter, exact_pair_value

__all__ = ["AllPairsEM", "order_statistic"]

_EXACT_SAMPLE = 256  # pairs of the guidance sample whose exact values are computed (atoms)


def _log(v: Fraction) -> float:
    return math.log(v.numerator) - math.log(v.denominator)


Key = tuple[float, float, Fraction]


def _key(s: Fraction) -> Key:
    """The lookup key of a threshold: (hi, lo, s) with hi = float(s) and lo = float(s − hi).
    Both are monotone in s, so keys sort like the thresholds; the float parts settle almost
    every comparison in C (a grid point and its neighbour share hi but not lo), and the exact
    Fraction only breaks ties that the double-double cannot see."""
    hi = float(s)
    return (hi, float(s - Fraction(hi)) if math.isfinite(hi) else 0.0, s)


class _Point:
    """A block boundary with cached lookup keys and the log-length of the block to its right."""

    __slots__ = ("r", "lkeys", "rkeys", "loglen", "low", "high", "lstamp", "hstamp")

    def __init__(self, r: Fraction) -> None:
        self.r = r
        self.lkeys: tuple[Key, ...] | None = None
        self.rkeys: tuple[Key, ...] | None = None
        self.loglen: float | None = None
        #: cached c_θ bounds at this point as a left end / right end, valid while no
        #: threshold learned since ``stamp`` (an index into ``AllPairsEM._learned``) brackets
        #: the keys
        self.low: int | None = None
        self.high: int | None = None
        self.lstamp = 0
        self.hstamp = 0


class AllPairsEM:
    """The exponential-mechanism q-quantile (default the median) of all pairwise estimates,
    sampled exactly.

    ``epsilon`` is the mechanism's ε on the doubled multiset (what the materialising code
    passes to :func:`~dpreg.mechanisms.exp_quantile`, i.e. ε_t/(2k)); ``theta`` the widening;
    ``q`` the target quantile in [0, 1] (public), the ``q`` of ``exp_quantile``.
    """

    def __init__(self, counter: PairCounter, *, epsilon: float, lo: float, hi: float,
                 theta: float = 0.0, rng: np.random.Generator, sample_size: int = 2048,
                 q: float = 0.5) -> None:
        self.counter = counter
        self.lo, self.hi = Fraction(float(lo)), Fraction(float(hi))
        self.theta = Fraction(float(theta))
        self.a = float(epsilon) / 2.0
        self.N = 2 * counter.n_pairs
        q = float(q)
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"q must be in [0, 1]; got {q!r}")
        self.q = q
        # the target ranks: ⌊|c − N·q|⌋ = dist(c, [K0, K1]) for integer c, with N·q rounded
        # as the materialising code rounds it (float product); K0 also splits the widening
        self.nq = nq = float(self.N) * q
        self.K0, self.K1 = math.floor(nq), math.ceil(nq)
        self.P = self.K0  # the shift split (the median's P = N/2)
        self.T = counter.n_tied
        self.rng = rng
        # exact knowledge of c at thresholds (sorted): c(lo) = 0, c(s) = N above hi; a
        # threshold s is kept as its key (:func:`_key`: keys sort like the thresholds and
        # most comparisons are float ones).  Thresholds are only ever inserted.
        top = next_up(self.hi)
        self._kt: list[Key] = [_key(self.lo), _key(top)]
        self._kc: list[int] = [0, self.N]
        #: float ranges [hi of the previous known threshold, hi of the next] around each
        #: threshold learned, in order: a cached bound whose key lies in none of those learned
        #: after it was computed is still exact (see :meth:`_bounds`)
        self._learned: list[tuple[float, float]] = []
        self._kt_arrays: tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._next_memo: dict[Fraction, Fraction] = {}
        self._lo_key, self._hi_key = _key(self.lo), _key(self.hi)
        # block boundaries (grid points), as sorted keys, with cached per-boundary data
        self._rb: list[Key] = [self._lo_key, self._hi_key]
        self._pts: list[_Point] = [_Point(self.lo), _Point(self.hi)]
        self._depth: dict[Fraction, int] = {}
        self._blocked: set[tuple[Fraction, Fraction]] = set()
        self._sample, self._atoms = self._pair_sample(sample_size)
        self._ends_known = False
        self.refinements = 0
        self.trials = 0

    # ------------------------------------------------------------------ exact counts
    def _c_exact(self, s: Fraction) -> int:
        if s <= self.lo:
            return 0
        if s > self.hi:
            return self.N
        key = _key(s)
        i = bisect.bisect_left(self._kt, key)
        if self._kt[i][2] == s:
            return self._kc[i]
        lo_c, hi_c = self._kc[i - 1], self._kc[i]
        if lo_c == hi_c:
            return lo_c
        c = 2 * self.counter.count(s) + self.T
        self._learn(key, c, i)
        return c

    def _lower(self, s: Fraction) -> int:
        """The largest known c at a threshold <= s (a lower bound of c(s))."""
        if s <= self.lo:
            return 0
        if s > self.hi:
            return self.N
        return self._kc[bisect.bisect_right(self._kt, _key(s)) - 1]

    def _upper(self, s: Fraction) -> int:
        """The smallest known c at a threshold >= s (an upper bound of c(s))."""
        if s <= self.lo:
            return 0
        if s > self.hi:
            return self.N
        return self._kc[bisect.bisect_left(self._kt, _key(s))]

    def _learn(self, key: Key, c: int, i: int) -> None:
        self._learned.append((self._kt[i - 1][0], self._kt[i][0]))
        self._kt.insert(i, key)
        self._kc.insert(i, c)
        s = key[2]
        th = self.theta
        if th:  # block boundaries where φ + θ or φ − θ crosses s
            for r in (floor_grid(s - th), floor_grid(s + th)):
                self._add_boundary(r)

    def _add_boundary(self, r: Fraction) -> bool:
        """Cut the block containing r at r (False if r is already a boundary or outside)."""
        if self.lo < r < self.hi:
            key = _key(r)
            j = bisect.bisect_left(self._rb, key)
            if self._rb[j][2] != r:
                self._rb.insert(j, key)
                self._pts.insert(j, _Point(r))
                self._pts[j - 1].loglen = None  # the block to its left was cut
                return True
        return False

    def _combine(self, c1: int, c2: int) -> int:
        return min(self.P, c1) + max(0, c2 - self.P)

    def c_theta(self, r: Fraction) -> int:
        """Exact shifted count c_θ(r) (evaluates the counter only where needed)."""
        th = self.theta
        if not th:
            return self._c_exact(r)
        P = self.P
        s1, s2 = r + th, r - th
        lo1, hi1 = min(P, self._lower(s1)), min(P, self._upper(s1))
        first = lo1 if lo1 == hi1 else min(P, self._c_exact(s1))
        lo2, hi2 = max(0, self._lower(s2) - P), max(0, self._upper(s2) - P)
        second = lo2 if lo2 == hi2 else max(0, self._c_exact(s2) - P)
        return first + second

    # ------------------------------------------------------------------ envelope
    def _next(self, r: Fraction) -> Fraction:
        out = self._next_memo.get(r)
        if out is None:
            out = self._next_memo[r] = next_up(r)
        return out

    def _keys(self, pt: _Point, left: bool) -> tuple[Key, ...]:
        """Lookup keys of the thresholds that bound c_θ at a block end: next(r) for a left
        end, r for a right end (shifted by ±θ for the widened mechanism); cached."""
        out = pt.lkeys if left else pt.rkeys
        if out is None:
            f = self._next(pt.r) if left else pt.r
            ps = (f,) if not self.theta else (f + self.theta, f - self.theta)
            out = tuple(_key(p) for p in ps)
            if left:
                pt.lkeys = out
            else:
                pt.rkeys = out
        return out

    def _lower_key(self, key: Key) -> int:
        if key <= self._lo_key:
            return 0
        if key > self._hi_key:
            return self.N
        return self._kc[bisect.bisect_right(self._kt, key) - 1]

    def _upper_key(self, key: Key) -> int:
        if key <= self._lo_key:
            return 0
        if key > self._hi_key:
            return self.N
        return self._kc[bisect.bisect_left(self._kt, key)]

    def _bounds(self, p0: _Point, p1: _Point) -> tuple[int, int]:
        """c_θ bounds over the proposals φ ∈ [next(r₀), r₁] of block (r₀, r₁].

        Each end's bound is cached on its point.  A lookup ``_lower_key(k)`` (the count at
        the largest known threshold <= k) or ``_upper_key(k)`` changes only when a threshold t
        is learned with k between t's known neighbours, so hi(k) in the learned range
        [hi(prev), hi(next)] (hi = float, monotone): a cache whose keys fall in none of the
        ranges learned since it was filled is exact (the same value a fresh lookup gives)."""
        learned = self._learned
        now = len(learned)
        low = p0.low
        if low is None or (p0.lstamp < now and self._touched(self._keys(p0, True), p0.lstamp)):
            lk = self._keys(p0, True)
            low = (self._lower_key(lk[0]) if not self.theta else
                   self._combine(self._lower_key(lk[0]), self._lower_key(lk[1])))
            p0.low = low
        p0.lstamp = now
        high = p1.high
        if high is None or (p1.hstamp < now and self._touched(self._keys(p1, False), p1.hstamp)):
            rk = self._keys(p1, False)
            high = (self._upper_key(rk[0]) if not self.theta else
                    self._combine(self._upper_key(rk[0]), self._upper_key(rk[1])))
            p1.high = high
        p1.hstamp = now
        return low, high

    def _touched(self, keys: tuple[Key, ...], since: int) -> bool:
        """Whether a threshold learned after ``since`` may change a lookup of ``keys``."""
        for a, b in self._learned[since:]:
            for k in keys:
                if a <= k[0] <= b:
                    return True
        return False

    def _blocks(self) -> tuple[Any, ...]:
        pts = self._pts
        k = len(pts) - 1
        r0 = [p.r for p in pts[:-1]]
        r1 = [p.r for p in pts[1:]]
        lows = np.empty(k, dtype=np.int64)
        highs = np.empty(k, dtype=np.int64)
        loglen = np.empty(k)
        for m in range(k):
            p0 = pts[m]
            lows[m], highs[m] = self._bounds(p0, pts[m + 1])
            if p0.loglen is None:
                p0.loglen = _log(pts[m + 1].r - p0.r)
            loglen[m] = p0.loglen
        gmin, gmax = self._gaps(lows, highs)
        return r0, r1, lows, highs, gmin, gmax, loglen

    def _gaps(self, lows: np.ndarray, highs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(g_min, g_max) of blocks whose c_θ range is [low, high]: the smallest and largest
        loss :meth:`_gap` of a count in it (the loss falls up to N·q and rises after it, so
        the extremes are at the ends, or 0 when N·q lies inside)."""
        nq = self.nq
        g_lo = np.floor(np.abs(lows.astype(np.float64) - nq)).astype(np.int64)
        g_hi = np.floor(np.abs(highs.astype(np.float64) - nq)).astype(np.int64)
        gmin = np.where(highs < nq, g_hi, np.where(lows > nq, g_lo, 0))
        return gmin, np.maximum(g_lo, g_hi)

    def _gap(self, c: int) -> int:
        """⌊|c − N·q|⌋ in the materialising code's floating point (the rank utility's loss at
        count c; dist(c, [K0, K1]) unless N·q is within rounding of an integer)."""
        return int(math.floor(abs(float(c) - self.nq)))

    def _split_point(self, r0: Fraction, r1: Fraction, lo_c: int, hi_c: int) -> Fraction | None:
        """Where to cut block (r₀, r₁] whose c_θ range is [lo_c, hi_c] (None: a single cell).

        Guided by the pair sample when it has values inside (midpoints between them; each
        atom of equal exact values, shifted by ∓θ, and the grid point above it, which isolate
        the atom's jump in one cell); otherwise by interpolation, the real midpoint and the
        grid-ordinal midpoint in turn -- the last halves the number of cells, so every block
        is down to single cells after at most 3·117 cuts whatever the data."""
        if not self._next(r0) < r1:
            return None
        P, a = 0.5 * (self.K0 + self.K1), self.a
        efold = max(1.0, 1.0 / a) if a > 0 else float(max(hi_c - lo_c, 1))
        if lo_c < P < hi_c:
            target = float(P)
        elif hi_c <= P:
            target = max(lo_c + 0.5 * (hi_c - lo_c), hi_c - max(efold, 0.5 * (P - hi_c)))
        else:
            target = min(hi_c - 0.5 * (hi_c - lo_c), lo_c + max(efold, 0.5 * (lo_c - P)))
        atoms = self._atom_cuts(r0, r1)
        if atoms:  # isolate an atom's jump (the middle one of those inside), exactly
            return atoms[len(atoms) // 2]
        cand = self._candidates(r0, r1)
        if cand.size:
            pred = self._predict_theta(cand)
            best = floor_grid(Fraction(float(cand[int(np.argmin(np.abs(pred - target)))])))
            if r0 < best < r1:
                return best
        d = max(self._depth.get(r0, 0), self._depth.get(r1, 0)) + 1
        if d % 3 == 0:
            s = from_ordinal((ordinal(r0) + ordinal(r1)) // 2)
        elif d % 3 == 2 or hi_c == lo_c:
            s = floor_grid((r0 + r1) / 2)
        else:
            frac = min(max((target - lo_c) / (hi_c - lo_c), 1.0 / 64), 63.0 / 64)
            s = floor_grid(r0 + Fraction(frac) * (r1 - r0))
        if not r0 < s < r1:
            s = from_ordinal((ordinal(r0) + ordinal(r1)) // 2)
            if not r0 < s < r1:
                s = self._next(r0)
        self._depth[s] = d
        return s

    # ------------------------------------------------------------------ pair sample (guidance only)
    def _pair_sample(self, m: int) -> tuple[np.ndarray, list[Fraction]]:
        """Sorted clipped doubled-multiset values of m random pairs (approximate values), and
        the exact values that repeat among the first few of them (atoms).  Used only to choose
        where to cut blocks; the output law does not depend on it."""
        c = self.counter
        n = c.n
        if n < 2 or m <= 0:
            return np.zeros(0), []
        i = self.rng.integers(0, n, size=m)
        j = self.rng.integers(0, n - 1, size=m)
        j = j + (j >= i)
        xi, yi, xj, yj = c.x[i], c.y[i], c.x[j], c.y[j]
        tied = xi == xj
        v = c._values(xi[~tied], yi[~tied], xj[~tied], yj[~tied])
        lo, hi = float(self.lo), float(self.hi)
        vals = np.concatenate((v, v, np.full(int(tied.sum()), lo), np.full(int(tied.sum()), hi)))
        return np.sort(np.clip(vals, lo, hi)), self._sample_atoms(i, j, tied, v)

    def _sample_atoms(self, i: np.ndarray, j: np.ndarray, tied: np.ndarray, v: np.ndarray
                      ) -> list[Fraction]:
        """Exact values shared by two or more distinct sampled pairs (atoms of equal values,
        e.g. points on a common line), looked for among the first sampled pairs whose
        approximate values nearly coincide."""
        c = self.counter
        keep = np.flatnonzero(~tied)[:_EXACT_SAMPLE]
        a, b = np.minimum(i, j)[keep], np.maximum(i, j)[keep]
        _, first = np.unique(a * c.n + b, return_index=True)  # distinct pairs
        keep = keep[np.sort(first)]
        vk = v[np.searchsorted(np.flatnonzero(~tied), keep)]
        o = np.argsort(vk)
        vs = vk[o]
        with np.errstate(invalid="ignore"):
            close = np.abs(np.diff(vs)) <= 1e-9 * np.maximum(np.abs(vs[1:]), 1e-300)
        near = np.zeros(vs.size, dtype=bool)
        near[1:] |= close
        near[:-1] |= close
        seen: dict[Fraction, int] = {}
        for k in keep[o[near]]:
            e = exact_pair_value(float(c.x[i[k]]), float(c.y[i[k]]), float(c.x[j[k]]),
                                 float(c.y[j[k]]), c.estimand, c.x0)
            seen[e] = seen.get(e, 0) + 1
        return sorted(e for e, cnt in seen.items() if cnt >= 2)

    def _predict_c(self, s: np.ndarray) -> np.ndarray:
        """Guess of c at thresholds ``s`` (exact counts at known thresholds, the pair sample
        or linear interpolation in between); guidance only."""
        arrays = self._kt_arrays
        smp = self._sample
        if arrays is None or arrays[0] != len(self._kt):  # thresholds are only inserted
            kt_f = np.asarray([k[0] for k in self._kt])
            # the sample's positions at every known threshold, once per new threshold (the
            # per-candidate lookups below index them: the same values, fewer searches)
            arrays = self._kt_arrays = (len(self._kt), kt_f, np.asarray(self._kc, dtype=np.float64),
                                        np.searchsorted(smp, kt_f, side="right"),
                                        np.searchsorted(smp, kt_f, side="left"))
        _, kt, kc, kt_right, kt_left = arrays
        i = np.clip(np.searchsorted(kt, s, side="left"), 1, kt.size - 1)
        t0, t1, c0, c1 = kt[i - 1], kt[i], kc[i - 1], kc[i]
        k0 = kt_right[i - 1]
        k1 = kt_left[i]
        j = np.searchsorted(smp, s, side="left") - k0
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            by_sample = c0 + (c1 - c0) * (j + 0.5) / (k1 - k0 + 1)
            width = t1 - t0
            linear = np.where(np.isfinite(width) & (width > 0),
                              c0 + (c1 - c0) * (s - t0) / np.where(width > 0, width, 1.0),
                              0.5 * (c0 + c1))
        out = np.where(k1 > k0, by_sample, linear)
        out = np.where(s <= float(self.lo), 0.0, out)
        return np.where(s > float(self.hi), float(self.N), out)

    def _predict_theta(self, r: np.ndarray) -> np.ndarray:
        if not self.theta:
            return self._predict_c(r)
        th = float(self.theta)
        c1 = self._predict_c(r + th)
        c2 = self._predict_c(r - th)
        return np.minimum(self.P, c1) + np.maximum(0.0, c2 - self.P)

    def _shifts(self) -> tuple[Fraction, ...]:
        # c_θ(φ) jumps where φ + θ or φ − θ passes a pair value
        return (Fraction(0),) if not self.theta else (-self.theta, self.theta)

    def _atom_cuts(self, r0: Fraction, r1: Fraction) -> list[Fraction]:
        """Grid points inside (r₀, r₁) that put the jump of c_θ at a sampled atom (a repeated
        exact pair value) into a cell of its own: the cell's end below and above it."""
        out: set[Fraction] = set()
        for sh in self._shifts():
            for atom in self._atoms:
                v = atom + sh
                if r0 <= v < r1:
                    g = floor_grid(v)
                    out.update(c for c in (g, self._next(g)) if r0 < c < r1)
        return sorted(out)

    def _candidates(self, r0: Fraction, r1: Fraction) -> np.ndarray:
        """Cut points (doubles) between sampled pair values inside the block (meaningful for
        blocks wider than a few units in the last place)."""
        out: list[np.ndarray] = []
        smp = self._sample
        f0, f1 = float(r0), float(r1)
        for sh in self._shifts():
            if smp.size:
                v = smp + float(sh) if sh else smp
                k0 = int(np.searchsorted(v, f0, side="right"))
                k1 = int(np.searchsorted(v, f1, side="left"))
                inner = v[k0:k1]  # sorted: its distinct values without another sort
                if inner.size >= 2:
                    inner = inner[np.concatenate(([True], inner[1:] != inner[:-1]))]
                if inner.size >= 2:  # cut between two sampled values
                    mids = 0.5 * (inner[:-1] + inner[1:])
                    out.append(mids[(mids > f0) & (mids < f1)])
        return np.concatenate(out) if out else np.zeros(0)

    def refine(self, *, slack: float = 2.0, max_steps: int = 400) -> None:
        """Split blocks until the envelope mass is within ``slack`` of a lower bound of the
        target's mass (or ``max_steps`` splits)."""
        log_slack = math.log(slack)
        if not self._ends_known:  # the first and the last cell (values clipped to lo or hi)
            self._ends_known = True
            for r in (self._next(self.lo), self.hi):
                self.c_theta(r)
                self._add_boundary(r)
        blocks = self._blocks()
        for _ in range(max_steps):
            r0, r1, lows, highs, gmin, gmax, loglen = blocks
            log_e = loglen - self.a * gmin
            log_l = loglen - self.a * gmax
            top = float(np.max(log_e))
            ze = float(np.sum(np.exp(log_e - top)))
            zl = float(np.sum(np.exp(log_l - top)))
            if zl > 0 and math.log(ze) - math.log(zl) <= log_slack:
                return
            with np.errstate(divide="ignore", invalid="ignore"):
                excess = log_e + np.log1p(-np.exp(-self.a * (gmax - gmin)))
            excess = np.where(np.isnan(excess), -np.inf, excess)
            for m in np.argsort(-excess):
                if not np.isfinite(excess[m]):
                    return
                key = (r0[m], r1[m])
                if key in self._blocked:
                    continue
                s = self._split_point(key[0], key[1], int(lows[m]), int(highs[m]))
                if s is None:
                    self._blocked.add(key)
                    continue
                n_pts = len(self._pts)
                self.c_theta(s)  # learns exact counts at the shifted thresholds
                self._add_boundary(s)
                self.refinements += 1
                # θ = 0: every boundary's count is known and the thresholds are grid points,
                # so a count learned at s inside block m changes no other block's bounds
                # (another block's ends r and next(r) lie outside (r₀, r₁)): split block m
                # only; otherwise (θ > 0: learning adds boundaries) recompute every block
                blocks = (self._split_block(blocks, int(m))
                          if not self.theta and len(self._pts) == n_pts + 1
                          else self._blocks())
                break
            else:
                return

    # ------------------------------------------------------------------ sampling
    def sample(self, size: int | None = None, *, slack: float | None = None) -> Any:
        """One draw (``size=None``) or ``size`` i.i.d. draws of the mechanism."""
        k = 1 if size is None else int(size)
        self.refine(slack=slack if slack is not None else (2.0 if k < 8 else 1.25))
        out = np.empty(k)
        got = rejected = 0
        gen = self.rng
        blocks = self._blocks()
        while got < k:
            r0, r1, lows, highs, gmin, gmax, loglen = blocks
            log_e = loglen - self.a * gmin
            p = np.exp(log_e - np.max(log_e))
            cum = np.cumsum(p)
            m = int(np.searchsorted(cum, gen.random() * cum[-1], side="right"))
            m = min(m, cum.size - 1)
            # a cell (prev(φ), φ] of the block with probability ∝ its length
            phi = draw_cell(r0[m], r1[m], gen)
            self.trials += 1
            n_pts = len(self._pts)
            g = self._gap(self.c_theta(phi))
            if gen.random() < math.exp(-self.a * (g - int(gmin[m]))):
                out[got] = float_up(phi)
                got += 1
            else:
                rejected += 1
                if self._add_boundary(phi):
                    # the other blocks' bounds stay valid (knowledge only grows): split this
                    # block, and refresh everything now and then or when learning added other
                    # boundaries (the widened mechanism's shifted thresholds)
                    in_sync = len(self._pts) == n_pts + 1 and len(r0) == n_pts - 1
                    blocks = (self._split_block(blocks, m) if in_sync and rejected % 32
                              else self._blocks())
        return float(out[0]) if size is None else out

    def _split_block(self, blocks: tuple[Any, ...], m: int) -> tuple[Any, ...]:
        """``blocks`` with block m replaced by its two parts (a boundary was added in it)."""
        r0, r1, lows, highs, gmin, gmax, loglen = blocks
        j = m + 1  # the new boundary's index in self._pts
        pts = self._pts
        new = []
        for k in (m, j):
            lo_c, hi_c = self._bounds(pts[k], pts[k + 1])
            pts[k].loglen = _log(pts[k + 1].r - pts[k].r)
            new.append((lo_c, hi_c, pts[k].loglen))
        lw = np.array([v[0] for v in new], dtype=np.int64)
        hg = np.array([v[1] for v in new], dtype=np.int64)
        gm, gx = self._gaps(lw, hg)
        ll = np.array([v[2] for v in new])

        def put(a: np.ndarray, v: np.ndarray) -> np.ndarray:
            return np.concatenate((a[:m], v, a[m + 1:]))

        return (r0[:m] + [pts[m].r, pts[j].r] + r0[m + 1:],
                r1[:m] + [pts[j].r, pts[j + 1].r] + r1[m + 1:],
                put(lows, lw), put(highs, hg), put(gmin, gm), put(gmax, gx), put(loglen, ll))


# ---------------------------------------------------------------------------- order statistics
_MAX = float(np.finfo(np.float64).max)
_OVER = Fraction(_MAX) + Fraction(2) ** 970  # |V| >= this rounds to ±inf


def _ordinal(v: float) -> int:
    i = int(np.array(v, dtype=np.float64).view(np.int64))
    return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF)


def _from_ordinal(k: int) -> float:
    if k >= 0:
        return float(np.array(k, dtype=np.int64).view(np.float64))
    return -float(np.array(-k, dtype=np.int64).view(np.float64))


def _rounded_le(counter: PairCounter, phi: float) -> int:
    """#{untied pairs whose exact value rounds (to nearest, ties to even) to a double <= φ}."""
    if phi == _MAX:
        return counter.count(_OVER)  # the tie at the overflow threshold goes to ∞
    up = math.nextafter(phi, math.inf)
    boundary = Fraction(phi) + (Fraction(up) - Fraction(phi)) / 2
    even = int(np.array(abs(phi), dtype=np.float64).view(np.int64)) % 2 == 0
    return counter.count(boundary, inclusive=even)


def order_statistic(counter: PairCounter, k: int, *, rng: np.random.Generator | None = None
                    ) -> float:
    """The k-th smallest (1-based) exact value among the untied pairs, rounded to the nearest
    double (ties to even; ±inf beyond the double range) -- slope selection.

    Search over doubles for the smallest φ with #{values rounding to <= φ} >= k: bisection on
    the float ordinal line (at most 64 halvings) alternated with interpolation steps;
    O(n log n) per step.
    """
    u = counter.n_untied
    if not 1 <= k <= u:
        raise ValueError(f"k must be in 1..{u}; got {k}")
    if counter.count(-_OVER, inclusive=True) >= k:
        return -math.inf
    if _rounded_le(counter, _MAX) < k:
        return math.inf
    # invariant: count(lo) < k <= count(hi), where "lo = -inf" stands for the values rounding
    # to −∞ (fewer than k)
    lo_s, hi_s = -math.inf, _MAX
    c_lo, c_hi = 0, _rounded_le(counter, _MAX)
    gen = rng if rng is not None else np.random.default_rng(0)
    n = counter.n
    m = 512
    i = gen.integers(0, n, size=m)
    j = gen.integers(0, n - 1, size=m)
    j = j + (j >= i)
    tied = counter.x[i] == counter.x[j]
    vals = np.sort(counter._values(counter.x[i][~tied], counter.y[i][~tied], counter.x[j][~tied],
                                   counter.y[j][~tied]))
    if vals.size >= 16:
        q = k / u
        half = 4.0 * math.sqrt(q * (1 - q) / vals.size) + 2.0 / vals.size
        for qq in (max(q - half, 0.0), min(q + half, 1.0)):
            s = float(vals[min(int(qq * vals.size), vals.size - 1)])
            if math.isfinite(s) and lo_s < s < hi_s:
                c = _rounded_le(counter, s)
                if c < k:
                    lo_s, c_lo = s, c
                else:
                    hi_s, c_hi = s, c
    step = 0
    lo_ord = _ordinal(-_MAX) - 1 if lo_s == -math.inf else _ordinal(lo_s)
    while _ordinal(hi_s) - lo_ord > 1:
        step += 1
        s = math.nan
        if step % 2 == 1 and math.isfinite(lo_s) and c_hi > c_lo:
            frac = (k - c_lo - 0.5) / (c_hi - c_lo)
            s = lo_s + (hi_s - lo_s) * frac
        if not (lo_s < s < hi_s):
            s = _from_ordinal((lo_ord + _ordinal(hi_s)) // 2)
            if not (lo_s < s < hi_s):
                s = math.nextafter(lo_s, math.inf) if math.isfinite(lo_s) else -_MAX
        c = _rounded_le(counter, s)
        if c < k:
            lo_s, c_lo, lo_ord = s, c, _ordinal(s)
        else:
            hi_s, c_hi = s, c
    return hi_s
