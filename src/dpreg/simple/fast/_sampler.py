"""Exact sampling of the (widened) exponential-mechanism median -- or any quantile -- of all
pairwise estimates, and order statistics, from the rank counts of
:class:`~dpreg.simple.fast._oracle.PairCounter`.

Target.  The exponential-mechanism q-quantile (default the median, q = ½) over the doubles of
[lo, hi] (:mod:`dpreg.mechanisms.exponential`, module doc) of the doubled multiset (N =
2·n_pairs entries: each untied pair's value twice, −∞/+∞ for each tied pair), clipped to
[lo, hi] -- the mechanism :func:`dpreg.mechanisms.exp_quantile` runs on the materialised
multiset with the same q -- where each pair's value is its *exact* value rounded to the nearest
double (ties to even).  A double d in [lo, hi] is released with probability proportional to

    ω(d) · exp(−(ε/2) · ⌊max(0, L(d) − N·q, N·q − U(d))⌋),

ω(d) the length of d's rounding cell within [lo, hi], L(d) = #{entries < d} and U(d) =
#{entries <= d} (N·q and the differences in floating point exactly as the materialising code
evaluates them). With K(φ) = #{clipped entries <= φ} for doubles φ -- K(φ) = n_tied +
2·#{untied pairs whose value rounds to a double <= φ} (a count at the midpoint between φ and
the next double) for lo <= φ < hi, 0 below lo, N from hi on -- L(d) = K(prev(d)) and U(d) =
K(d). For the widened
mechanism (θ > 0; the lower K₀ = ⌊N·q⌋ entries of the sorted list shifted down by θ and the
others up by θ, exactly, then clipped) L(d) = min(K₀, #{s < d + θ}) + max(0, #{s < d − θ} − K₀)
and U(d) the same with <= (L(lo) = 0, U(hi) = N), where #{s < t} = K(largest double < t) and
#{s <= t} = K(largest double <= t). L and U are non-decreasing in d.

Resolution.  A draw is made on the 106-bit grid of :mod:`._grid`: a grid cell (prev(φ), φ] is
proposed with probability ∝ its length and mapped to the double D(φ) whose rounding cell
contains it (cell boundaries: the grid points at the midpoints between consecutive doubles),
so a double is proposed with probability ∝ ω(d) exactly (integer arithmetic).  Below 2^-1021,
where the midpoints fall between grid points, a boundary is the grid point away from zero
(:meth:`AllPairsEM.mid`): the cells of those doubles shift by half a subnormal spacing, and
the cell of 0 stays of positive length when 0 is an end of the range.

Sampler (rejection from a piecewise-constant envelope).  Cut (lo, hi] into blocks (r₀, r₁] at
rounding-cell boundaries: a block holds the doubles d_a..d_b, and monotonicity bounds the loss
on it between g_min = ⌊max(0, L(d_a) − N·q, N·q − U(d_b))⌋ and g_max = ⌊max(0, L(d_b) − N·q,
N·q − U(d_a))⌋ (evaluated from lower/upper bounds of K known so far): the envelope
h = Σ_blocks exp(−(ε/2)·g_min)·1[block] is a *provable* upper bound of the target, exact on a
block of one double once its counts are known.  Propose a block with probability ∝
length·exp(−(ε/2)·g_min) and a double in it with probability ∝ ω(d), compute its loss g exactly
and accept with probability exp(−(ε/2)·(g − g_min)) <= 1.  An accepted d has probability
exactly ∝ ω(d)·exp(−(ε/2)·g(d)) (standard rejection sampling); rejected proposals only add
exact knowledge (adaptive rejection sampling), which keeps the envelope valid.  Block
boundaries are chosen by *rank bisection*: a block is split at a cell boundary predicted (from
exact counts at its ends, a random sample of pair values, or plain bisection) to halve its
rank range, to cut it one e-fold (2/ε ranks) from its heavy end, or to isolate an atom of equal
pair values in a cell of its own, until the envelope's mass is within a factor ``slack`` of a
lower bound of the target's mass.  Whatever the data, every block is down to one double after
a bounded number of cuts (the median double by ordinal is used every third cut), and a
one-double block has an exact envelope once its counts are learned, so no proposal loop can
stall.

As in the reference, the weights and acceptance probabilities are evaluated in floating
point; nothing else is approximated.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction
from typing import Any

import numpy as np

from dpreg.mechanisms.exponential import (
    envelope_accept,
    envelope_block,
    random_ordered_pairs,
)
from dpreg.simple.fast._grid import ceil_grid, draw_cell, floor_grid
from dpreg.simple.fast._oracle import PairCounter, exact_pair_value

__all__ = ["AllPairsEM", "order_statistic"]

_EXACT_SAMPLE = 256  # pairs of the guidance sample whose exact values are computed (atoms)
#: from this magnitude on, the midpoint of a double and the next is a grid point and the
#: half-spacing a normal double (the grid's fine zone starts at 2^-969)
_MID_EXACT = 2.0 ** -900


def _log(v: Fraction) -> float:
    return math.log(v.numerator) - math.log(v.denominator)


Key = tuple[float, float, Fraction]


def _key(s: Fraction) -> Key:
    """The lookup key of a block boundary: (hi, lo, s) with hi = float(s) and lo =
    float(s − hi).  Both are monotone in s, so keys sort like the boundaries and most
    comparisons are float ones; the exact Fraction only breaks ties the double-double cannot
    see."""
    hi = float(s)
    return (hi, float(s - Fraction(hi)) if math.isfinite(hi) else 0.0, s)


def _up(d: float) -> float:
    return math.nextafter(d, math.inf)


def _down(d: float) -> float:
    return math.nextafter(d, -math.inf)


def _floor_double(t: Fraction) -> float:
    """The largest double <= t."""
    f = float(t)
    return _down(f) if Fraction(f) > t else f


def _below_double(t: Fraction) -> float:
    """The largest double < t."""
    f = float(t)
    return _down(f) if Fraction(f) >= t else f


class _Point:
    """A block boundary: a grid point r at a rounding-cell boundary, the doubles whose cells
    end at r (``dl``) and start after it (``dr``), cached count bounds and the log-length of
    the block to its right."""

    __slots__ = ("r", "dl", "dr", "loglen", "low", "high", "lkeys", "rkeys", "lstamp",
                 "hstamp")

    def __init__(self, r: Fraction, dl: float | None, dr: float | None) -> None:
        self.r = r
        self.dl = dl
        self.dr = dr
        self.loglen: float | None = None
        #: (L, U) lower bounds at dr (this point as a block's left end) and upper bounds at dl
        #: (as a right end), valid while no threshold learned since ``*stamp`` (an index into
        #: ``AllPairsEM._learned``) falls between the known neighbours of their keys
        self.low: tuple[int, int] | None = None
        self.high: tuple[int, int] | None = None
        self.lkeys: tuple[float, ...] = ()
        self.rkeys: tuple[float, ...] = ()
        self.lstamp = 0
        self.hstamp = 0


class AllPairsEM:
    """The exponential-mechanism q-quantile (default the median) of all pairwise estimates
    over the doubles of [lo, hi], sampled exactly.

    ``epsilon`` is the mechanism's ε on the doubled multiset (what the materialising code
    passes to :func:`~dpreg.mechanisms.exp_quantile`, i.e. ε_t/(2k)); ``theta`` the widening;
    ``q`` the target quantile in [0, 1] (public), the ``q`` of ``exp_quantile``.
    """

    def __init__(self, counter: PairCounter, *, epsilon: float, lo: float, hi: float,
                 theta: float = 0.0, rng: np.random.Generator, sample_size: int = 2048,
                 q: float = 0.5) -> None:
        self.counter = counter
        self.flo, self.fhi = float(lo), float(hi)
        self.lo, self.hi = Fraction(self.flo), Fraction(self.fhi)
        self.theta = Fraction(float(theta))
        self.a = float(epsilon) / 2.0
        self.N = 2 * counter.n_pairs
        q = float(q)
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"q must be in [0, 1]; got {q!r}")
        self.q = q
        # N·q rounded as the materialising code rounds it (float product); K0 also splits the
        # widening
        self.nq = nq = float(self.N) * q
        self.K0, self.K1 = math.floor(nq), math.ceil(nq)
        self.P = self.K0  # the shift split (the median's P = N/2)
        self.T = counter.n_tied
        self.rng = rng
        # exact knowledge of K at doubles (sorted): K = 0 below lo, N from hi on.  Thresholds
        # are only ever inserted.
        self._kt: list[float] = [_down(self.flo), self.fhi]
        self._kc: list[int] = [0, self.N]
        # bound knowledge (θ = 0 cuts, one count at a double each): (a, c) says K(φ) <= c for
        # every double φ <= a and K(φ) >= c for every φ > a -- a count taken between a and the
        # next double (see :meth:`_learn_cut`); sorted by (a, c), only ever inserted
        self._bk: list[tuple[float, int]] = []
        #: float ranges [previous known threshold, next] around each threshold learned, in
        #: order: a cached bound whose keys lie in none of those learned after it was computed
        #: is still exact (see :meth:`_cached`)
        self._learned: list[tuple[float, float]] = []
        self._kt_arrays: tuple[tuple[int, int], np.ndarray, np.ndarray, np.ndarray,
                               np.ndarray] | None = None
        self._mid_memo: dict[float, Fraction] = {}
        self._shift_memo: dict[float, tuple[float, float, float, float]] = {}
        # block boundaries (rounding-cell boundaries on the grid), as sorted keys
        self._rb: list[Key] = [_key(self.lo), _key(self.hi)]
        # the first and last doubles with a cell of positive length (lo and hi themselves,
        # unless an end is a nonzero subnormal: see :meth:`mid`)
        first = self.flo if self.mid(self.flo) > self.lo else _up(self.flo)
        last = self.fhi if self.mid(_down(self.fhi)) < self.hi else _down(self.fhi)
        self._pts: list[_Point] = [_Point(self.lo, None, first),
                                   _Point(self.hi, last, None)]
        self._depth: dict[float, int] = {}
        self._sample, self._atoms = self._pair_sample(sample_size)
        self._ends_known = False
        self.refinements = 0
        self.trials = 0

    # ------------------------------------------------------------------ rounding cells
    def mid(self, d: float) -> Fraction:
        """The upper end of d's rounding cell: the midpoint of d and the next double -- a grid
        point, except for |d| < 2^-1021, where the grid's spacing is the doubles' (2^-1074)
        and the midpoint falls between two grid points: there the boundary is the grid point
        away from zero (for d >= 0 the next double, for d < 0 d itself), so the cell of 0 is
        (−2^-1074, 2^-1074] and a range end at 0 keeps a cell of positive length (2^-1074
        instead of the exact 2^-1075; the cells of the other doubles there shift by half a
        spacing).  A range end at a nonzero subnormal whose cell this leaves empty is never
        released (see ``__init__``)."""
        out = self._mid_memo.get(d)
        if out is None:
            if abs(d) >= _MID_EXACT:  # the midpoint d + (d⁺ − d)/2 is a grid point (54 bits)
                out = Fraction(d) + Fraction((_up(d) - d) * 0.5)  # (exact float arithmetic)
            else:
                f = Fraction(d)
                m = f + (Fraction(_up(d)) - f) / 2
                out = floor_grid(m) if d < 0 else ceil_grid(m)
            self._mid_memo[d] = out
        return out

    def double_of(self, phi: Fraction) -> float:
        """D(φ): the double whose rounding cell (mid(prev(d)), mid(d)] contains the grid point
        φ ∈ (lo, hi] (the release for a proposal φ)."""
        f = _floor_double(phi)
        if abs(f) < _MID_EXACT:  # near 0 a double can end the cell of the one below (mid)
            g = _down(f)
            if phi <= self.mid(g):
                return g
            return f if phi <= self.mid(f) else _up(f)
        return f if Fraction(f) == phi or phi <= self.mid(f) else _up(f)

    # ------------------------------------------------------------------ exact counts
    def K(self, phi: float) -> int:
        """#{clipped doubled entries <= φ} at a double φ, exactly (learned)."""
        if phi < self.flo:
            return 0
        if phi >= self.fhi:
            return self.N
        i = bisect.bisect_left(self._kt, phi)
        if self._kt[i] == phi:
            return self._kc[i]
        lo_c, hi_c = self._kc[i - 1], self._kc[i]
        if lo_c == hi_c:
            return lo_c
        if self._bk and self._k_low(phi) == self._k_up(phi):  # squeezed by bound knowledge
            return self._k_low(phi)
        c = self.T + 2 * _rounded_le(self.counter, phi)
        self._learn(phi, c, i)
        return c

    def _k_low(self, phi: float) -> int:
        """The largest known K at a threshold <= φ, or bound below it (a lower bound of K(φ))."""
        if phi < self.flo:
            return 0
        if phi >= self.fhi:
            return self.N
        out = self._kc[bisect.bisect_right(self._kt, phi) - 1]
        j = bisect.bisect_left(self._bk, (phi, -1)) - 1  # the last bound with a < φ
        return max(out, self._bk[j][1]) if j >= 0 else out

    def _k_up(self, phi: float) -> int:
        """The smallest known K at a threshold >= φ, or bound above it (an upper bound of
        K(φ))."""
        if phi < self.flo:
            return 0
        if phi >= self.fhi:
            return self.N
        out = self._kc[bisect.bisect_left(self._kt, phi)]
        j = bisect.bisect_left(self._bk, (phi, -1))  # the first bound with a >= φ
        return min(out, self._bk[j][1]) if j < len(self._bk) else out

    def _learn_bound(self, a: float, c: int) -> None:
        """Record the bound knowledge (a, c) (see ``_bk``).  Lookups it can change lie between
        the exact thresholds around a, which is the range recorded for the cached bounds."""
        i = bisect.bisect_right(self._kt, a)
        self._learned.append((self._kt[i - 1], self._kt[min(i, len(self._kt) - 1)]))
        bisect.insort(self._bk, (a, c))

    def _learn(self, phi: float, c: int, i: int) -> None:
        self._learned.append((self._kt[i - 1], self._kt[i]))
        self._kt.insert(i, phi)
        self._kc.insert(i, c)
        if self.theta:  # cell boundaries where d + θ or d − θ crosses φ (L and U jump there)
            f = Fraction(phi)
            for t in (f - self.theta, f + self.theta):
                for d in {_below_double(t), _floor_double(t)}:
                    self._add_boundary(d)

    def _shifts_of(self, d: float) -> tuple[float, float, float, float]:
        """(largest double < d + θ, < d − θ, <= d + θ, <= d − θ)."""
        out = self._shift_memo.get(d)
        if out is None:
            f = Fraction(d)
            t1, t2 = f + self.theta, f - self.theta
            out = self._shift_memo[d] = (_below_double(t1), _below_double(t2),
                                         _floor_double(t1), _floor_double(t2))
        return out

    def thresholds(self, d: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The doubles φ whose K(φ) give L(d) and U(d) (empty where L(lo) = 0, U(hi) = N)."""
        if not self.theta:
            lt: tuple[float, ...] = (_down(d),)
            ut: tuple[float, ...] = (d,)
        else:
            b1, b2, f1, f2 = self._shifts_of(d)
            lt, ut = (b1, b2), (f1, f2)
        return (() if d <= self.flo else lt), (() if d >= self.fhi else ut)

    def _combine(self, ks: tuple[int, ...]) -> int:
        if len(ks) == 1:
            return ks[0]
        return min(self.P, ks[0]) + max(0, ks[1] - self.P)

    def counts(self, d: float) -> tuple[int, int]:
        """Exact (L(d), U(d)) at a double d in [lo, hi] (evaluates the counter only where the
        knowledge does not already decide them)."""
        lt, ut = self.thresholds(d)
        L = 0 if not lt else self._combine_exact(lt)
        U = self.N if not ut else self._combine_exact(ut)
        return L, U

    def _learn_cut(self, d: float, below: bool | None = None) -> None:
        """Learn what a cut between d and its successor needs for the envelope's heights: U(d)
        (the left block's last double) and L(d⁺) (the right block's first).  θ = 0: both are
        K(d).  θ > 0: U(d) exactly; L(d⁺) is bounded below by the same counts (its thresholds,
        the largest doubles below d⁺ ± θ, are at or above U(d)'s, the largest doubles at or
        below d ± θ, and K is monotone), which is exact unless a pair value lies between the
        two -- a valid envelope either way, for half the counts.  The other bounds there
        (L(d), U(d⁺)) only enter the envelope's lower bound and stay valid from the knowledge.

        θ = 0 with ``below`` given: one count at a double instead of the exact K(d) (a count at
        the midpoint between d and d⁺, a two-term threshold that costs about a third more):
        with every pair value rounded to the nearest double, #{values < d⁺} bounds K(d) from
        above (a value >= d⁺ rounds to >= d⁺) and #{values <= d} bounds it from below (a value
        <= d rounds to <= d).  A cut below the target rank (``below``) needs only the upper
        bound -- the left block's height uses U(d) from above, the right block lies below the
        target too or straddles it, where L does not enter the height -- and a cut above the
        target only the lower bound.  A wrong guess leaves a valid, looser envelope."""
        if not self.theta and below is not None:
            if not self.flo <= d < self.fhi or self._k_low(d) == self._k_up(d):
                return
            if below:
                self._learn_bound(d, self.T + 2 * self.counter.count(_up(d)))
            else:
                self._learn_bound(_down(d), self.T + 2 * self.counter.count(d, inclusive=True))
            return
        ut = self.thresholds(d)[1]
        if ut:
            self._combine_exact(ut)

    def _combine_exact(self, ts: tuple[float, ...]) -> int:
        if len(ts) == 1:
            return self.K(ts[0])
        P = self.P
        lo1, hi1 = min(P, self._k_low(ts[0])), min(P, self._k_up(ts[0]))
        first = lo1 if lo1 == hi1 else min(P, self.K(ts[0]))
        lo2, hi2 = max(0, self._k_low(ts[1]) - P), max(0, self._k_up(ts[1]) - P)
        second = lo2 if lo2 == hi2 else max(0, self.K(ts[1]) - P)
        return first + second

    def exact_loss(self, d: float) -> int:
        """The loss at a double d, exactly; θ = 0: where the knowledge already places d below
        the target (U(d) <= N·q, the loss is ⌊N·q − U(d)⌋) or above it (L(d) >= N·q, the loss
        is ⌊L(d) − N·q⌋), only that count is evaluated -- the same value as
        ``loss(*counts(d))``."""
        if not self.theta and self.flo < d < self.fhi:
            if self._k_up(d) <= self.nq:
                return self.loss(0, self.K(d))
            if self._k_low(_down(d)) >= self.nq:
                return self.loss(self.K(_down(d)), self.N)
        return self.loss(*self.counts(d))

    def _below_target(self, d: float) -> bool:
        """Guess (guidance only: which bound of K(d) a cut learns) whether K(d) lies below the
        target rank N·q, from the pair sample."""
        smp = self._sample
        if not smp.size:
            return True
        return bool(int(np.searchsorted(smp, d, side="right")) * self.N < self.nq * smp.size)

    def loss(self, L: int, U: int) -> int:
        """⌊max(0, L − N·q, N·q − U)⌋ in the materialising code's floating point (its
        ⌊|c − N·q|⌋ when L = U = c)."""
        return int(math.floor(max(max(float(L) - self.nq, self.nq - float(U)), 0.0)))

    # ------------------------------------------------------------------ envelope
    def _add_boundary(self, d: float) -> bool:
        """Cut the block containing the upper end of d's rounding cell there (False if it is
        already a boundary or outside (lo, hi))."""
        if not self.flo <= d < self.fhi:
            return False
        r = self.mid(d)
        if not self.lo < r < self.hi:
            return False
        key = _key(r)
        j = bisect.bisect_left(self._rb, key)
        if self._rb[j][2] == r:
            return False
        self._rb.insert(j, key)
        self._pts.insert(j, _Point(r, d, _up(d)))
        self._pts[j - 1].loglen = None  # the block to its left was cut
        return True

    def _touched(self, keys: tuple[float, ...], since: int) -> bool:
        """Whether a threshold learned after ``since`` may change a lookup of ``keys``."""
        for a, b in self._learned[since:]:
            for k in keys:
                if a <= k <= b:
                    return True
        return False

    def _cached(self, p: _Point, left: bool) -> tuple[int, int]:
        """(L, U) lower bounds at ``p.dr`` (``left``: p is a block's left end) or upper bounds
        at ``p.dl``, from the knowledge; cached on the point and re-read only when a threshold
        learned since brackets one of its keys."""
        now = len(self._learned)
        if left:
            got, keys, stamp = p.low, p.lkeys, p.lstamp
        else:
            got, keys, stamp = p.high, p.rkeys, p.hstamp
        if got is None or (stamp < now and self._touched(keys, stamp)):
            d = p.dr if left else p.dl
            assert d is not None
            lt, ut = self.thresholds(d)
            look = self._k_low if left else self._k_up
            L = 0 if not lt else self._combine(tuple(look(t) for t in lt))
            U = self.N if not ut else self._combine(tuple(look(t) for t in ut))
            got, keys = (L, U), lt + ut
        if left:
            p.low, p.lkeys, p.lstamp = got, keys, now
        else:
            p.high, p.rkeys, p.hstamp = got, keys, now
        return got

    def _bounds(self, p0: _Point, p1: _Point) -> tuple[int, int, int, int]:
        """(L, U) lower bounds at the block's first double and upper bounds at its last."""
        la, ua = self._cached(p0, True)
        lb, ub = self._cached(p1, False)
        return la, ua, lb, ub

    def _blocks(self) -> tuple[Any, ...]:
        pts = self._pts
        k = len(pts) - 1
        bounds = np.empty((k, 4), dtype=np.int64)
        loglen = np.empty(k)
        for m in range(k):
            p0 = pts[m]
            bounds[m] = self._bounds(p0, pts[m + 1])
            if p0.loglen is None:
                p0.loglen = _log(pts[m + 1].r - p0.r)
            loglen[m] = p0.loglen
        gmin, gmax = self._gaps(bounds)
        return [p.r for p in pts], bounds, gmin, gmax, loglen

    def _gaps(self, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(g_min, g_max) of blocks with bounds (L_a, U_a, L_b, U_b): L and U only grow along
        a block, so the loss is at least that of [L_a, U_b] and at most the larger of the
        ends' (evaluated like :meth:`loss`)."""
        nq = self.nq
        la, ua, lb, ub = (bounds[:, i].astype(np.float64) for i in range(4))
        gmin = np.floor(np.maximum(np.maximum(la - nq, nq - ub), 0.0)).astype(np.int64)
        gmax = np.floor(np.maximum(np.maximum(lb - nq, nq - ua), 0.0)).astype(np.int64)
        return gmin, gmax

    def _split_point(self, p0: _Point, p1: _Point, lo_c: int, hi_c: int) -> float | None:
        """The double whose cell's upper end cuts block (p₀, p₁] whose count range is
        [lo_c, hi_c] (None: a block of one double).

        Guided by the pair sample when it has values inside (midpoints between them; each
        atom of equal exact values, shifted by ∓θ, which isolate the atom's jump in cells of
        its own); otherwise by interpolation, the real midpoint and the median double (by
        ordinal) in turn -- the last halves the number of doubles, so every block is down to
        one double after at most 3·64 cuts whatever the data."""
        da, db = p0.dr, p1.dl
        assert da is not None and db is not None
        if not da < db:
            return None
        r0, r1 = p0.r, p1.r

        def snap(v: float) -> float | None:
            # the cell boundary at or below v, else above it, strictly inside the block
            for d in (v, _down(v)):
                if da <= d < db:
                    return d
            return None

        P, a = 0.5 * (self.K0 + self.K1), self.a
        efold = max(1.0, 1.0 / a) if a > 0 else float(max(hi_c - lo_c, 1))
        if lo_c < P < hi_c:
            target = float(P)
        elif hi_c <= P:
            target = max(lo_c + 0.5 * (hi_c - lo_c), hi_c - max(efold, 0.5 * (P - hi_c)))
        else:
            target = min(hi_c - 0.5 * (hi_c - lo_c), lo_c + max(efold, 0.5 * (lo_c - P)))
        atoms = self._atom_cuts(da, db)
        if atoms:  # isolate an atom's jump (the middle one of those inside)
            return atoms[len(atoms) // 2]
        cand = self._candidates(r0, r1)
        if cand.size:
            pred = self._predict_theta(cand)
            best = snap(float(cand[int(np.argmin(np.abs(pred - target)))]))
            if best is not None:
                return best
        dep = max(self._depth.get(da, 0), self._depth.get(db, 0)) + 1
        if dep % 3 == 0 or hi_c == lo_c:
            s = _from_ordinal((_ordinal(da) + _ordinal(db)) // 2)
        elif dep % 3 == 2:
            s = float(r0 + (r1 - r0) / 2)
        else:
            frac = min(max((target - lo_c) / (hi_c - lo_c), 1.0 / 64), 63.0 / 64)
            s = float(r0 + Fraction(frac) * (r1 - r0))
        got = snap(s)
        if got is None:
            got = _from_ordinal((_ordinal(da) + _ordinal(db)) // 2)
        self._depth[got] = dep
        return got

    # ------------------------------------------------------------------ pair sample (guidance only)
    def _pair_sample(self, m: int) -> tuple[np.ndarray, list[Fraction]]:
        """Sorted clipped doubled-multiset values of m random pairs (approximate values), and
        the exact values that repeat among the first few of them (atoms).  Used only to choose
        where to cut blocks; the output law does not depend on it."""
        c = self.counter
        n = c.n
        if n < 2 or m <= 0:
            return np.zeros(0), []
        i, j = random_ordered_pairs(n, m, self.rng)
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
        """Guess of the count of entries below thresholds ``s`` (exact counts at known
        thresholds, the pair sample or linear interpolation in between); guidance only."""
        arrays = self._kt_arrays
        smp = self._sample
        if arrays is None or arrays[0] != (len(self._kt), len(self._bk)):  # only inserted
            # exact counts and cut bounds together (a bound (a, c) stands at a: guidance only)
            merged = sorted(list(zip(self._kt, self._kc)) + self._bk)
            kt_f = np.asarray([t for t, _ in merged])
            kc_f = np.asarray([c for _, c in merged], dtype=np.float64)
            # the sample's positions at every known threshold, once per new threshold (the
            # per-candidate lookups below index them: the same values, fewer searches)
            arrays = self._kt_arrays = ((len(self._kt), len(self._bk)), kt_f, kc_f,
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
        # L and U of the widened mechanism jump where d + θ or d − θ passes a pair value
        return (Fraction(0),) if not self.theta else (-self.theta, self.theta)

    def _atom_cuts(self, da: float, db: float) -> list[float]:
        """Doubles d in [d_a, d_b) whose cell ends cut the block's doubles d_a..d_b so that the
        jumps of L and U at a sampled atom (a repeated exact pair value, shifted by ∓θ) fall in
        cells of their own: the cells of the two doubles around it are isolated."""
        out: set[float] = set()
        for sh in self._shifts():
            for atom in self._atoms:
                v = atom + sh
                f = _floor_double(v)
                for d in (_down(f), f, _up(f)):
                    if da <= d < db:
                        out.add(d)
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
        """Split blocks (or learn the counts of a one-double block) until the envelope mass is
        within ``slack`` of a lower bound of the target's mass (or ``max_steps`` steps)."""
        log_slack = math.log(slack)
        if not self._ends_known:  # the cells of lo and hi (values clipped to the ends)
            self._ends_known = True
            for d in (self.flo, _down(self.fhi)):
                self._learn_cut(d, self._below_target(d))
                self._add_boundary(d)
        blocks = self._blocks()
        for _ in range(max_steps):
            _, bounds, gmin, gmax, loglen = blocks
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
            m = int(np.argmax(excess))
            if not np.isfinite(excess[m]):
                return
            p0, p1 = self._pts[m], self._pts[m + 1]
            lo_c, hi_c = int(bounds[m, 0]), int(bounds[m, 3])
            cut = self._split_point(p0, p1, lo_c, hi_c)
            self.refinements += 1
            if cut is None:  # one double: learn its counts (the envelope becomes exact there)
                assert p0.dr is not None
                self.counts(p0.dr)
                blocks = self._blocks()
                continue
            n_pts = len(self._pts)
            # θ = 0, a block off the target rank: one count bounding K(cut) on the side the
            # envelope needs; the block holding the target (both sides matter there) and
            # θ > 0: exact counts at the thresholds
            below = True if hi_c <= self.nq else False if lo_c >= self.nq else None
            self._learn_cut(cut, below)
            self._add_boundary(cut)
            # θ = 0: a count learned inside block m changes no other block's bounds (their
            # thresholds lie outside it): split block m only; otherwise (θ > 0: learning adds
            # boundaries) recompute every block
            blocks = (self._split_block(blocks, m)
                      if not self.theta and len(self._pts) == n_pts + 1 else self._blocks())

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
            _, bounds, gmin, gmax, loglen = blocks
            log_e = loglen - self.a * gmin
            m = envelope_block(log_e, gen)
            # a grid cell of the block with probability ∝ its length, i.e. a double of the
            # block with probability ∝ ω(d) (the block as ``blocks`` knows it: learning may
            # have added boundaries since, which only tightens bounds not yet read)
            ends = blocks[0]
            d = self.double_of(draw_cell(ends[m], ends[m + 1], gen))
            self.trials += 1
            n_pts = len(self._pts)
            g = self.exact_loss(d)
            if envelope_accept(-self.a * (g - int(gmin[m])), gen):
                out[got] = d
                got += 1
            else:
                rejected += 1
                # isolate d's cell (its counts are now known): the envelope is exact there
                added = self._add_boundary(_down(d)) | self._add_boundary(d)
                if added:
                    # the other blocks' bounds stay valid (knowledge only grows): split this
                    # block, and refresh everything now and then or when learning added
                    # boundaries elsewhere (the widened mechanism's shifted thresholds)
                    blocks = (self._split_block(blocks, m)
                              if not self.theta and rejected % 32
                              and len(self._pts) == n_pts + 1 else self._blocks())
        return float(out[0]) if size is None else out

    def _split_block(self, blocks: tuple[Any, ...], m: int) -> tuple[Any, ...]:
        """``blocks`` with block m replaced by its two parts (a boundary was added in it)."""
        ends, bounds, gmin, gmax, loglen = blocks
        pts = self._pts
        new_b = np.empty((2, 4), dtype=np.int64)
        ll = np.empty(2)
        for t, k in enumerate((m, m + 1)):
            new_b[t] = self._bounds(pts[k], pts[k + 1])
            pts[k].loglen = _log(pts[k + 1].r - pts[k].r)
            ll[t] = pts[k].loglen
        gm, gx = self._gaps(new_b)

        def put(a: np.ndarray, v: np.ndarray) -> np.ndarray:
            return np.concatenate((a[:m], v, a[m + 1:]))

        return (ends[:m + 1] + [pts[m + 1].r] + ends[m + 1:], put(bounds, new_b), put(gmin, gm),
                put(gmax, gx), put(loglen, ll))


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
    i, j = random_ordered_pairs(n, m, gen)
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
