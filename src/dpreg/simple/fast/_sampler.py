"""Exact sampling of the (widened) exponential-mechanism median of all pairwise estimates, and
exact order statistics, from the rank counts of :class:`~dpreg.simple.fast._oracle.PairCounter`.

Target.  The materialising implementation runs :func:`dpreg.mechanisms.exp_quantile` on the
doubled multiset (2·n_pairs entries: each untied value twice, −∞/+∞ for each tied pair),
clipped to [lo, hi].  Its output density on (lo, hi) is proportional to

    f(r) = exp(−(ε/2) · |c_θ(r) − P|),     P = n_pairs = N/2,

where c(s) = #{clipped entries < s} = 2·count(s) + n_tied for lo < s <= hi (0 below lo, N above
hi) and, for the widened mechanism (θ > 0), the shifted count is
c_θ(r) = min(P, c(s*(r))) + max(0, c(s**(r)) − P) with s*(r) the smallest float s with
fl(s − θ) >= r and s**(r) the smallest float s with fl(s + θ) >= r (exactly the reference's
float shift of the sorted list by ∓θ).  c_θ is non-decreasing in r.

Sampler (rejection from a piecewise-constant envelope).  Cut [lo, hi] into blocks at points
where c is known exactly.  On a block [r₀, r₁], monotonicity gives c_θ(r₀) <= c_θ(r) <=
c_θ(r₁), so g_min = dist(P, [c_θ(r₀), c_θ(r₁)]) satisfies f(r) <= exp(−(ε/2)·g_min) there: the
envelope h = Σ_blocks exp(−(ε/2)·g_min)·1[block] is a *provable* upper bound of f.  Propose a
block with probability ∝ length·exp(−(ε/2)·g_min) and a uniform point r in it, compute c_θ(r)
exactly and accept with probability exp(−(ε/2)·(|c_θ(r) − P| − g_min)) <= 1.  An accepted r has
density exactly ∝ f (standard rejection sampling); rejected points only add exact knowledge
(adaptive rejection sampling), which keeps the envelope valid, so the output law is exactly
the mechanism's.  Block boundaries are chosen by *rank bisection*: a block is split at a point
predicted (from exact counts at its ends, a random sample of pair values, or plain
bisection) to halve its rank range or to cut it one e-fold (2/ε ranks) from its heavy end,
until the envelope's mass is within a factor ``slack`` of a lower bound of f's mass.

Exactness is relative to the reference's continuous density (the breakpoints are the
reference's float pair values); as in the reference, the final uniform draw inside an
interval is a floating-point draw.
"""

from __future__ import annotations

import bisect
import math
from typing import Any

import numpy as np

from dpreg.simple.fast._oracle import PairCounter

__all__ = ["AllPairsEM", "order_statistic"]


def _next_up(v: float) -> float:
    return math.nextafter(v, math.inf)


def _next_down(v: float) -> float:
    return math.nextafter(v, -math.inf)


def _ord(v: np.ndarray) -> np.ndarray:
    """Monotone map of floats to integers (adjacent floats -> adjacent integers; ±0 -> 0)."""
    i = np.asarray(v, dtype=np.float64).view(np.int64)
    return np.where(i >= 0, i, -(i & np.int64(0x7FFFFFFFFFFFFFFF)))


def _unord(k: np.ndarray) -> np.ndarray:
    k = np.asarray(k, dtype=np.int64)
    pos = np.abs(k).view(np.float64)
    return np.where(k >= 0, pos, -pos)


def _min_s_vec(r: np.ndarray, theta: float, sign: float) -> np.ndarray:
    """Smallest float s with fl(s + sign·θ) >= r, elementwise and exactly: fl(s + sign·θ) is
    non-decreasing in s, so bracket the answer around r − sign·θ and bisect on the float
    ordinals (at most 64 halvings)."""
    r = np.asarray(r, dtype=np.float64)
    th = sign * theta
    s0 = r - th
    # usual case: the answer is r − sign·θ or its upper neighbour
    nxt = np.nextafter(s0, np.inf)
    prv = np.nextafter(s0, -np.inf)
    at0 = ((s0 + th) >= r) & ((prv + th) < r)
    at1 = ((nxt + th) >= r) & ((s0 + th) < r)
    if np.all(at0 | at1):
        return np.where(at0, s0, nxt)
    delta = 4.0 * (np.spacing(np.abs(r)) + np.spacing(abs(theta)) + np.spacing(np.abs(s0)))
    lo = s0 - delta
    hi = s0 + delta
    for _ in range(64):  # widen until lo fails and hi satisfies the predicate
        bad_lo = (lo + th) >= r
        bad_hi = (hi + th) < r
        if not (bad_lo.any() or bad_hi.any()):
            break
        delta = 2.0 * delta
        lo = np.where(bad_lo, s0 - delta, lo)
        hi = np.where(bad_hi, s0 + delta, hi)
    klo, khi = _ord(lo), _ord(hi)
    while True:
        gap = khi - klo
        act = gap > 1
        if not act.any():
            break
        mid = klo + gap // 2
        ok = (_unord(mid) + th) >= r
        khi = np.where(act & ok, mid, khi)
        klo = np.where(act & ~ok, mid, klo)
    return _unord(khi)


def _min_s(r: float, theta: float, sign: float) -> float:
    """Scalar :func:`_min_s_vec`."""
    return float(_min_s_vec(np.array([r]), theta, sign)[0])


class AllPairsEM:
    """The exponential-mechanism median of all pairwise estimates, sampled exactly.

    ``epsilon`` is the mechanism's ε on the doubled multiset (what the materialising code
    passes to :func:`~dpreg.mechanisms.exp_quantile`, i.e. ε_t/(2k)); ``theta`` the widening.
    """

    def __init__(self, counter: PairCounter, *, epsilon: float, lo: float, hi: float,
                 theta: float = 0.0, rng: np.random.Generator, sample_size: int = 2048) -> None:
        self.counter = counter
        self.lo, self.hi = float(lo), float(hi)
        self.theta = float(theta)
        self.a = float(epsilon) / 2.0
        self.P = counter.n_pairs
        self.N = 2 * counter.n_pairs
        self.T = counter.n_tied
        self.rng = rng
        # exact knowledge of c at thresholds (sorted); c(lo) = 0, c(next_up(hi)) = N
        self._kt: list[float] = [self.lo, _next_up(self.hi)]
        self._kc: list[int] = [0, self.N]
        self._rb: list[float] = [self.lo, self.hi]  # block boundaries in r
        self._depth: dict[float, int] = {self.lo: 0, self.hi: 0}
        self._blocked: set[tuple[float, float]] = set()
        self._sample = self._pair_sample(sample_size)
        self.refinements = 0
        self.trials = 0

    # ------------------------------------------------------------------ exact counts
    def _c_exact(self, s: float) -> int:
        if s <= self.lo:
            return 0
        if s > self.hi:
            return self.N
        i = bisect.bisect_left(self._kt, s)
        if i < len(self._kt) and self._kt[i] == s:
            return self._kc[i]
        lo_c, hi_c = self._kc[i - 1], self._kc[i]
        if lo_c == hi_c:
            return lo_c
        c = 2 * self.counter.count(s) + self.T
        self._learn(s, c)
        return c

    def _c_bounds(self, s: float) -> tuple[int, int]:
        if s <= self.lo:
            return 0, 0
        if s > self.hi:
            return self.N, self.N
        i = bisect.bisect_left(self._kt, s)
        if i < len(self._kt) and self._kt[i] == s:
            return self._kc[i], self._kc[i]
        return self._kc[i - 1], self._kc[i]

    def _learn(self, s: float, c: int) -> None:
        i = bisect.bisect_left(self._kt, s)
        if i < len(self._kt) and self._kt[i] == s:
            return
        self._kt.insert(i, s)
        self._kc.insert(i, c)
        th = self.theta
        if th == 0.0:
            pts = [s]
        else:  # r-points where s*(r) or s**(r) crosses s (both sides of the crossing)
            pts = [s + th, _next_up(_next_down(s) + th), s - th, _next_up(_next_down(s) - th)]
        for r in pts:
            if self.lo < r < self.hi:
                j = bisect.bisect_left(self._rb, r)
                if self._rb[j] != r:
                    self._rb.insert(j, r)

    def _shift(self, r: float) -> tuple[float, float]:
        if self.theta == 0.0:
            return r, r
        return _min_s(r, self.theta, -1.0), _min_s(r, self.theta, 1.0)

    def _combine(self, c1: int, c2: int) -> int:
        if self.theta == 0.0:
            return c1
        return min(self.P, c1) + max(0, c2 - self.P)

    def c_theta(self, r: float) -> int:
        """Exact shifted count c_θ(r) (evaluates the counter only where needed)."""
        s1, s2 = self._shift(r)
        if self.theta == 0.0:
            return self._c_exact(s1)
        lo1, hi1 = self._c_bounds(s1)
        first = min(self.P, lo1) if min(self.P, lo1) == min(self.P, hi1) else min(
            self.P, self._c_exact(s1))
        lo2, hi2 = self._c_bounds(s2)
        if max(0, lo2 - self.P) == max(0, hi2 - self.P):
            second = max(0, lo2 - self.P)
        else:
            second = max(0, self._c_exact(s2) - self.P)
        return first + second

    # ------------------------------------------------------------------ envelope
    def _shift_vec(self, r: np.ndarray, sign: float) -> np.ndarray:
        """Vectorised :meth:`_shift` component (sign −1: s*, +1: s**)."""
        return _min_s_vec(r, self.theta, sign)

    def _bounds_vec(self, s: np.ndarray, upper: bool) -> np.ndarray:
        kt = np.asarray(self._kt)
        kc = np.asarray(self._kc, dtype=np.int64)
        i = np.searchsorted(kt, s, side="left")
        i_c = np.minimum(i, kt.size - 1)
        exact = kt[i_c] == s
        if upper:
            out = kc[i_c]
        else:
            out = np.where(exact, kc[i_c], kc[np.maximum(i - 1, 0)])
        out = np.where(s <= self.lo, 0, out)
        return np.where(s > self.hi, self.N, out)

    def _combine_vec(self, c1: np.ndarray, c2: np.ndarray) -> np.ndarray:
        if self.theta == 0.0:
            return c1
        return np.minimum(self.P, c1) + np.maximum(0, c2 - self.P)

    def _blocks(self) -> tuple[np.ndarray, ...]:
        rb = np.asarray(self._rb)
        r0, r1 = rb[:-1], rb[1:]
        # the density lives on the open interval (lo, hi): at the left end use the limit from
        # the right (entries clipped to lo count as below every r > lo); proposals r = lo are
        # discarded in :meth:`sample`
        r0b = np.maximum(r0, _next_up(self.lo))
        if self.theta == 0.0:
            lows = self._bounds_vec(r0b, upper=False)
            highs = self._bounds_vec(r1, upper=True)
        else:
            lows = self._combine_vec(self._bounds_vec(self._shift_vec(r0b, -1.0), upper=False),
                                     self._bounds_vec(self._shift_vec(r0b, 1.0), upper=False))
            highs = self._combine_vec(self._bounds_vec(self._shift_vec(r1, -1.0), upper=True),
                                      self._bounds_vec(self._shift_vec(r1, 1.0), upper=True))
        P = self.P
        gmin = np.where(highs < P, P - highs, np.where(lows > P, lows - P, 0))
        gmax = np.maximum(np.abs(lows - P), np.abs(highs - P))
        length = r1 - r0
        with np.errstate(divide="ignore"):
            loglen = np.log(length)
        return r0, r1, lows, highs, gmin, gmax, loglen

    def _split_point(self, r0: float, r1: float, lo_c: int, hi_c: int) -> float | None:
        """Where to cut block [r0, r1] whose c_θ range is [lo_c, hi_c] (None: cannot)."""
        if not (_next_up(r0) < r1):
            return None
        P, a = self.P, self.a
        efold = max(1.0, 1.0 / a) if a > 0 else float(max(hi_c - lo_c, 1))
        if lo_c < P < hi_c:
            target = float(P)
        elif hi_c <= P:
            target = max(lo_c + 0.5 * (hi_c - lo_c), hi_c - max(efold, 0.5 * (P - hi_c)))
        else:
            target = min(hi_c - 0.5 * (hi_c - lo_c), lo_c + max(efold, 0.5 * (lo_c - P)))
        cand = self._sample_candidates(r0, r1)
        if cand.size:
            pred = self._predict_theta(cand)
            best = float(cand[int(np.argmin(np.abs(pred - target)))])
            if r0 < best < r1:
                return best
        d = max(self._depth.get(r0, 0), self._depth.get(r1, 0)) + 1
        if d % 2 == 0 or hi_c == lo_c or not (math.isfinite(r0) and math.isfinite(r1)):
            s = r0 + 0.5 * (r1 - r0)
        else:
            frac = min(max((target - lo_c) / (hi_c - lo_c), 1.0 / 64), 63.0 / 64)
            s = r0 + frac * (r1 - r0)
        if not (r0 < s < r1):
            s = _next_up(r0)
        self._depth[s] = d
        return s

    # ------------------------------------------------------------------ pair sample (guidance only)
    def _pair_sample(self, m: int) -> np.ndarray:
        """Sorted clipped doubled-multiset values of m random pairs (used only to choose
        where to cut blocks; the output law does not depend on it)."""
        c = self.counter
        n = c.n
        if n < 2 or m <= 0:
            return np.zeros(0)
        i = self.rng.integers(0, n, size=m)
        j = self.rng.integers(0, n - 1, size=m)
        j = j + (j >= i)
        xi, yi, xj, yj = c.x[i], c.y[i], c.x[j], c.y[j]
        tied = xi == xj
        v = c._values(xi[~tied], yi[~tied], xj[~tied], yj[~tied])
        vals = np.concatenate((v, v, np.full(int(tied.sum()), self.lo),
                               np.full(int(tied.sum()), self.hi)))
        return np.sort(np.clip(vals, self.lo, self.hi))

    def _predict_c(self, s: np.ndarray) -> np.ndarray:
        """Guess of c at thresholds ``s`` (exact counts at known thresholds, the pair sample
        or linear interpolation in between); guidance only."""
        kt = np.asarray(self._kt)
        kc = np.asarray(self._kc, dtype=np.float64)
        i = np.clip(np.searchsorted(kt, s, side="left"), 1, kt.size - 1)
        t0, t1, c0, c1 = kt[i - 1], kt[i], kc[i - 1], kc[i]
        smp = self._sample
        k0 = np.searchsorted(smp, t0, side="right")
        k1 = np.searchsorted(smp, t1, side="left")
        j = np.searchsorted(smp, s, side="left") - k0
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            by_sample = c0 + (c1 - c0) * (j + 0.5) / (k1 - k0 + 1)
            width = t1 - t0
            linear = np.where(np.isfinite(width) & (width > 0),
                              c0 + (c1 - c0) * (s - t0) / np.where(width > 0, width, 1.0),
                              0.5 * (c0 + c1))
        out = np.where(k1 > k0, by_sample, linear)
        out = np.where(kt[np.minimum(np.searchsorted(kt, s), kt.size - 1)] == s,
                       kc[np.minimum(np.searchsorted(kt, s), kt.size - 1)], out)
        out = np.where(s <= self.lo, 0.0, out)
        return np.where(s > self.hi, float(self.N), out)

    def _predict_theta(self, r: np.ndarray) -> np.ndarray:
        if self.theta == 0.0:
            return self._predict_c(r)
        c1 = self._predict_c(self._shift_vec(r, -1.0))
        c2 = self._predict_c(self._shift_vec(r, 1.0))
        return np.minimum(self.P, c1) + np.maximum(0.0, c2 - self.P)

    def _sample_candidates(self, r0: float, r1: float) -> np.ndarray:
        smp = self._sample
        if smp.size == 0:
            return smp
        shifts = (0.0,) if self.theta == 0.0 else (-self.theta, self.theta)
        out = []
        for sh in shifts:
            v = smp + sh
            k0 = int(np.searchsorted(v, r0, side="right"))
            k1 = int(np.searchsorted(v, r1, side="left"))
            if k1 - k0 >= 2:
                inner = np.unique(v[k0:k1])
                if inner.size >= 2:  # cut between two sampled values, not on one
                    out.append(0.5 * (inner[:-1] + inner[1:]))
        return np.concatenate(out) if out else np.zeros(0)

    def refine(self, *, slack: float = 2.0, max_steps: int = 400) -> None:
        """Split blocks until the envelope mass is within ``slack`` of a lower bound of the
        target's mass (or ``max_steps`` splits)."""
        log_slack = math.log(slack)
        for _ in range(max_steps):
            r0, r1, lows, highs, gmin, gmax, loglen = self._blocks()
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
                key = (float(r0[m]), float(r1[m]))
                if key in self._blocked:
                    continue
                s = self._split_point(key[0], key[1], int(lows[m]), int(highs[m]))
                if s is None:
                    self._blocked.add(key)
                    continue
                self.c_theta(s)  # learns exact counts at the shifted thresholds
                j = bisect.bisect_left(self._rb, s)
                if self._rb[j] != s:
                    self._rb.insert(j, s)
                self.refinements += 1
                break
            else:
                return

    # ------------------------------------------------------------------ sampling
    def sample(self, size: int | None = None, *, slack: float | None = None) -> Any:
        """One draw (``size=None``) or ``size`` i.i.d. draws of the mechanism."""
        k = 1 if size is None else int(size)
        self.refine(slack=slack if slack is not None else (2.0 if k < 8 else 1.25))
        out = np.empty(k)
        got = 0
        gen = self.rng
        blocks = self._blocks()
        while got < k:
            r0, r1, lows, highs, gmin, gmax, loglen = blocks
            log_e = loglen - self.a * gmin
            p = np.exp(log_e - np.max(log_e))
            cum = np.cumsum(p)
            m = int(np.searchsorted(cum, gen.random() * cum[-1], side="right"))
            m = min(m, cum.size - 1)
            a0, a1 = float(r0[m]), float(r1[m])
            r = float(gen.uniform(a0, a1))
            self.trials += 1
            if not (a0 <= r <= a1) or r <= self.lo:  # outside the block or at lo: propose again
                continue
            g = abs(self.c_theta(r) - self.P)
            if gen.random() < math.exp(-self.a * (g - int(gmin[m]))):
                out[got] = r
                got += 1
            else:
                j = bisect.bisect_left(self._rb, r)
                if self.lo < r < self.hi and self._rb[j] != r:
                    self._rb.insert(j, r)
                blocks = self._blocks()
        return float(out[0]) if size is None else out


def _ordinal(v: float) -> int:
    i = int(np.array(v, dtype=np.float64).view(np.int64))
    return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF)


def _from_ordinal(k: int) -> float:
    if k >= 0:
        return float(np.array(k, dtype=np.int64).view(np.float64))
    return -float(np.array(-k, dtype=np.int64).view(np.float64))


def order_statistic(counter: PairCounter, k: int, *, rng: np.random.Generator | None = None
                    ) -> float:
    """The k-th smallest (1-based) reference value among the untied pairs (slope selection).

    Search over floats for the largest s with count(s) < k: bisection on the float ordinal
    line (at most 64 halvings) alternated with interpolation steps; O(n log n) per step.
    """
    u = counter.n_untied
    if not 1 <= k <= u:
        raise ValueError(f"k must be in 1..{u}; got {k}")
    lo_s, hi_s = -math.inf, math.inf
    c_lo = 0
    c_hi = counter.count(math.inf)
    if c_hi < k:
        return math.inf
    # a cheap initial bracket from sampled pair values
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
                c = counter.count(s)
                if c < k:
                    lo_s, c_lo = s, c
                else:
                    hi_s, c_hi = s, c
    step = 0
    while _ordinal(hi_s) - _ordinal(lo_s) > 1:
        step += 1
        s = math.nan
        if step % 2 == 1 and math.isfinite(lo_s) and math.isfinite(hi_s) and c_hi > c_lo:
            frac = (k - c_lo - 0.5) / (c_hi - c_lo)
            s = lo_s + (hi_s - lo_s) * frac
        if not (lo_s < s < hi_s):
            s = _from_ordinal((_ordinal(lo_s) + _ordinal(hi_s)) // 2)
            if not (lo_s < s < hi_s):
                s = _next_up(lo_s)
        c = counter.count(s)
        if c < k:
            lo_s, c_lo = s, c
        else:
            hi_s, c_hi = s, c
    return lo_s
