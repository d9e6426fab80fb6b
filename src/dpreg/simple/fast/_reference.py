"""The materialising reference of :mod:`dpreg.simple.fast` in exact rational arithmetic.

O(n²) pairs with Python :class:`fractions.Fraction` work each: for tests and audits on small
data only.  It builds the doubled multiset of the *exact* pairwise values (each untied pair's
value twice, −∞ and +∞ for a tied pair), the (widened) exponential-mechanism intervals on it,
and the exact law of the released double: the mechanism over the doubles of [lo, hi]
(:mod:`dpreg.mechanisms.exponential`) on the values rounded to the nearest double, with the
widening shifts taken exactly -- what :class:`~dpreg.simple.fast.AllPairsEM` samples.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from dpreg.simple.fast._oracle import exact_pair_value

__all__ = ["exact_doubled", "exact_em_intervals", "exact_shifted", "exact_em_law",
           "law_release_cdf"]


def exact_doubled(x: Any, y: Any, *, estimand: str = "slope",
                  x_eval: float | None = None) -> list[Fraction | float]:
    """Sorted doubled multiset of exact pair values (±inf for tied pairs)."""
    xa = np.asarray(x, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    out: list[Fraction | float] = []
    for i in range(xa.size):
        for j in range(i + 1, xa.size):
            if xa[i] == xa[j]:
                out.extend((-math.inf, math.inf))
            else:
                v = exact_pair_value(float(xa[i]), float(ya[i]), float(xa[j]), float(ya[j]),
                                     estimand, x_eval)
                out.extend((v, v))
    return sorted(out)


def exact_em_intervals(doubled: list[Fraction | float], *, epsilon: float, lo: float, hi: float,
                       theta: float = 0.0, q: float = 0.5) -> tuple[list[Fraction], np.ndarray]:
    """Breakpoints (exact) and log-scores of the (widened) q-quantile mechanism on ``doubled``
    (default the median): clip to [lo, hi], shift the lowest ⌊N·q⌋ values down and the others
    up by θ (clipping again), interval j has j shifted values below it and log-score
    −(ε/2)·⌊|j − N·q|⌋."""
    flo, fhi, th = Fraction(lo), Fraction(hi), Fraction(theta)
    clipped = [min(max(Fraction(v) if not isinstance(v, float) or math.isfinite(v)
                       else (flo if v < 0 else fhi), flo), fhi) for v in doubled]
    clipped.sort()
    n = len(clipped)
    half = int(math.floor(n * q))
    if th:
        clipped = ([min(max(v - th, flo), fhi) for v in clipped[:half]]
                   + [min(max(v + th, flo), fhi) for v in clipped[half:]])
    breaks = [flo] + clipped + [fhi]
    scores = -(epsilon / 2.0) * np.floor(np.abs(np.arange(n + 1, dtype=np.float64) - n * q))
    return breaks, scores


def _log_cell(d: float, lo: float, hi: float) -> float:
    """log ω(d), the rounding cell of d within [lo, hi]: log of twice the cell (a difference of
    neighbouring doubles, exact) minus ln 2 -- ω itself underflows for a range end at 0."""
    return math.log(min(math.nextafter(d, math.inf), hi)
                    - max(math.nextafter(d, -math.inf), lo)) - math.log(2.0)


def _gap(a: float, b: float) -> float:
    """Σ of the rounding-cell lengths of the doubles strictly between a < b."""
    return (b - a) - ((math.nextafter(a, math.inf) - a) + (b - math.nextafter(b, -math.inf))) / 2


def _floor_double(t: Fraction) -> float:
    f = float(t)
    return math.nextafter(f, -math.inf) if Fraction(f) > t else f


def exact_shifted(doubled: list[Fraction | float], *, lo: float, hi: float, theta: float = 0.0,
                  q: float = 0.5) -> list[Fraction]:
    """The list the sampler's counts L, U run on: ``doubled`` rounded to the nearest double
    (ties to even; ±inf stay), clipped, sorted; θ > 0: the lowest ⌊N·q⌋ shifted down by θ and
    the others up, exactly, then clipped (sorted, as Fractions)."""
    flo, fhi, th = Fraction(lo), Fraction(hi), Fraction(theta)
    w = [Fraction(v) for v in sorted(min(max(float(v), lo), hi) for v in doubled)]
    k0 = int(math.floor(len(w) * q))
    if th:
        w = ([min(max(v - th, flo), fhi) for v in w[:k0]]
             + [min(max(v + th, flo), fhi) for v in w[k0:]])
    return w


def exact_em_law(doubled: list[Fraction | float], *, epsilon: float, lo: float, hi: float,
                 theta: float = 0.0, q: float = 0.5
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact law of the (widened) q-quantile mechanism over the doubles of [lo, hi] on
    ``doubled`` with every value rounded to the nearest double (ties to even) and clipped,
    the lowest ⌊N·q⌋ then shifted down by θ and the others up, exactly, and clipped again.

    Returns ``(points, p_points, p_gaps)`` like :func:`dpreg.mechanisms.quantile_em_law`:
    ``points`` the doubles where the counts L(d) = #{w < d}, U(d) = #{w <= d} can change (lo,
    hi, and the two doubles around each shifted value), ``p_points[k] = P(release ==
    points[k])`` and ``p_gaps[k]`` the probability of the doubles strictly between points[k]
    and points[k + 1] (one count there, each double ∝ its rounding-cell length)."""
    import bisect

    w = exact_shifted(doubled, lo=lo, hi=hi, theta=theta, q=q)
    n = len(w)
    nq = n * q
    cand = {lo, hi}
    for v in set(w):
        f = _floor_double(v)
        cand.update(c for c in (f, math.nextafter(f, math.inf)) if lo <= c <= hi)
    points = np.array(sorted(cand))

    def loss(lower: int, upper: int) -> float:
        return math.floor(max(max(float(lower) - nq, nq - float(upper)), 0.0))

    logw = []
    for k, d in enumerate(points.tolist()):
        fd = Fraction(d)
        lower, upper = bisect.bisect_left(w, fd), bisect.bisect_right(w, fd)
        logw.append(_log_cell(d, lo, hi) - (epsilon / 2) * loss(lower, upper))
        if k + 1 < points.size:
            g = _gap(d, float(points[k + 1]))
            logw.append(math.log(g) - (epsilon / 2) * loss(upper, upper) if g > 0 else -math.inf)
    lw = np.array(logw)
    p = np.exp(lw - lw.max())
    p /= p.sum()
    return points, p[0::2], p[1::2]


def law_release_cdf(law: tuple[np.ndarray, np.ndarray, np.ndarray], at: Any) -> np.ndarray:
    """P(release <= b) for doubles b under a law (points, p_points, p_gaps) of the mechanism
    over the doubles of [lo, hi] (inside a gap each double weighs its rounding-cell length)."""
    points, pp, pg = law
    cum_pt = np.cumsum(pp)
    cum_gap = np.concatenate(([0.0], np.cumsum(pg)))
    out = []
    for b in np.atleast_1d(np.asarray(at, dtype=np.float64)).tolist():
        k = int(np.searchsorted(points, b, side="right")) - 1
        if k < 0:
            out.append(0.0)
            continue
        total = cum_pt[k] + cum_gap[k]
        if points[k] < b and k + 1 < points.size:
            whole = _gap(float(points[k]), float(points[k + 1]))
            part = _gap(float(points[k]), math.nextafter(b, math.inf))
            total += pg[k] * (part / whole if whole > 0 else 0.0)
        out.append(total)
    return np.array(out)
