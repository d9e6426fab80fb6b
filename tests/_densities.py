"""Exact-density helpers shared by privacy tests (piecewise-constant output densities) and the
reference code's widened median, kept here only to pin its privacy bug."""

from __future__ import annotations

import math
import statistics

import numpy as np


def log_density_ratio(d1, d2):
    """max |log f1/f2| of two piecewise-constant densities given as (breaks, probs)."""
    (b1, p1), (b2, p2) = d1, d2
    pts = np.union1d(b1, b2)
    mids = (pts[:-1] + pts[1:]) / 2
    mids = mids[np.diff(pts) > 1e-12]

    def dens(b, p, x):
        j = np.clip(np.searchsorted(b, x, side="right") - 1, 0, len(p) - 1)
        width = np.diff(b)[j]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(width > 0, p[j] / width, 0.0)

    f1, f2 = dens(b1, p1, mids), dens(b2, p2, mids)
    assert np.all((f1 > 0) == (f2 > 0)), "supports differ"
    ok = f1 > 0
    return float(np.max(np.abs(np.log(f1[ok] / f2[ok]))))


def reference_code_widened(z, eps, lo, hi, theta):
    """Alabi et al.'s reference `dpMedianExpWide` construction (not ε-DP for even M)."""
    z = sorted(float(v) for v in z)
    n = len(z)
    if n % 2 == 0:
        z.insert(n // 2, statistics.median(z))
        n += 1
    z.insert(math.ceil(n / 2), statistics.median(z))
    n += 1
    for i in range(n // 2):
        z[i] = max(lo, z[i] - theta)
        z[n - i - 1] = min(z[n - i - 1] + theta, hi)
    breaks = np.array([lo] + z + [hi])
    rung = np.array([math.ceil(abs((i - 0.5) - (n + 1) / 2)) for i in range(1, n + 2)])
    with np.errstate(divide="ignore"):
        logw = np.log(np.diff(breaks)) - (eps / 2) * rung
    p = np.exp(logw - logw.max())
    return breaks, p / p.sum()


# --------------------------------------------------------------------------------------------
# the exponential-mechanism quantile over the doubles of [lo, hi] (ties, all-equal inputs)
# --------------------------------------------------------------------------------------------
def cell_width(d, lo, hi):
    """ω(d): the length of the set of reals that round to the double d (nearest), within
    [lo, hi] -- the base measure of the mechanism's output d."""
    return (min(math.nextafter(d, math.inf), hi) - max(math.nextafter(d, -math.inf), lo)) / 2


def log_cell_width(d, lo, hi):
    """log ω(d), computed as log(2ω) − ln 2 (2ω is exact; ω underflows for an end at 0)."""
    return math.log(min(math.nextafter(d, math.inf), hi)
                    - max(math.nextafter(d, -math.inf), lo)) - math.log(2.0)


def gap_weight(a, b):
    """Σ ω(d) over the doubles strictly between a < b: the Lebesgue length from the upper edge
    of a's rounding cell to the lower edge of b's."""
    return (b - a) - ((math.nextafter(a, math.inf) - a) + (b - math.nextafter(b, -math.inf))) / 2


def brute_quantile_law(z, *, q=0.5, epsilon, lo, hi, theta=0.0):
    """An independent, loop-by-loop statement of the mechanism (the oracle of the tests).

    Output: a double d in [lo, hi] with probability ∝ ω(d)·exp(−(ε/2)·loss(d)), ω the
    rounding-cell length (:func:`cell_width`), loss(d) = ⌊max(0, L − N·q, N·q − U)⌋ with
    L = #{w < d}, U = #{w <= d} over the clipped list w (θ > 0: its lowest ⌊N·q⌋ values moved
    down by θ and the others up, clipped again).  Returns ``(points, p_points, p_gaps)``:
    the distinct values of {lo, hi} ∪ w, P(output = points[k]) and P(points[k] < output <
    points[k + 1]) (every double strictly between has the same loss)."""
    s = sorted(min(max(float(v), lo), hi) for v in z)
    n = len(s)
    nq = n * q
    k0 = math.floor(nq)
    if theta > 0:
        s = ([min(max(v - theta, lo), hi) for v in s[:k0]]
             + [min(max(v + theta, lo), hi) for v in s[k0:]])
    pts = sorted(set([lo, hi] + s))

    def loss(lower, upper):
        return math.floor(max(0.0, lower - nq, nq - upper))

    logw = []
    for k, p in enumerate(pts):
        lower = sum(v < p for v in s)
        upper = sum(v <= p for v in s)
        logw.append(log_cell_width(p, lo, hi) - (epsilon / 2) * loss(lower, upper))
        if k + 1 < len(pts):
            w = gap_weight(p, pts[k + 1])
            logw.append(math.log(w) - (epsilon / 2) * loss(upper, upper) if w > 0 else -math.inf)
    logw = np.array(logw)
    pr = np.exp(logw - logw.max())
    pr /= pr.sum()
    return np.array(pts), pr[0::2], pr[1::2]


def continuous_quantile_law(z, *, q=0.5, epsilon, lo, hi, theta=0.0):
    """The law the library sampled before issue 32 (the continuous mechanism on [lo, hi],
    density ∝ exp(−(ε/2)·⌊|#{w < r} − N·q|⌋)): no mass on any single value, in the layout of
    :func:`brute_quantile_law` -- kept to show the tie tests reject it."""
    pts, _, _ = brute_quantile_law(z, q=q, epsilon=epsilon, lo=lo, hi=hi, theta=theta)
    s = sorted(min(max(float(v), lo), hi) for v in z)
    n = len(s)
    k0 = math.floor(n * q)
    if theta > 0:
        s = ([min(max(v - theta, lo), hi) for v in s[:k0]]
             + [min(max(v + theta, lo), hi) for v in s[k0:]])
    logw = np.array([math.log(b - a) - (epsilon / 2) * math.floor(abs(sum(v <= a for v in s)
                                                                      - n * q))
                     for a, b in zip(pts[:-1], pts[1:])])
    pr = np.exp(logw - logw.max())
    return pts, np.zeros(pts.size), pr / pr.sum()


def law_bins(draws, points):
    """Cell of each draw in the layout (point 0, gap 0, point 1, ..., point K−1): 2k when the
    draw equals points[k], 2k + 1 when it lies strictly between points[k] and points[k+1]."""
    draws = np.asarray(draws, dtype=np.float64)
    j = np.clip(np.searchsorted(points, draws, side="right") - 1, 0, len(points) - 1)
    cell = np.where(points[j] == draws, 2 * j, 2 * j + 1)
    return np.bincount(cell, minlength=2 * len(points) - 1)


def law_cells(law):
    """Probabilities in the layout of :func:`law_bins`."""
    points, p_points, p_gaps = law
    out = np.empty(2 * len(points) - 1)
    out[0::2], out[1::2] = p_points, p_gaps
    return out


def law_log_ratio(law1, law2, lo, hi):
    """max over doubles d of |log P1(d)/P2(d)| for two laws (points, p_points, p_gaps) of the
    mechanism over the doubles of [lo, hi]: every point of either law, and a double inside
    every piece of the common refinement of their gaps (where both are ∝ ω(d))."""
    def prob(law, d):
        pts, pp, pg = law
        k = int(np.searchsorted(pts, d, side="right")) - 1
        if pts[k] == d:
            return pp[k]
        return pg[k] * cell_width(d, lo, hi) / gap_weight(pts[k], pts[k + 1])

    allp = np.union1d(law1[0], law2[0])
    probe = list(allp)
    for a, b in zip(allp[:-1], allp[1:]):
        m = a + (b - a) / 2
        if a < m < b:
            probe.append(m)
    worst = 0.0
    for d in probe:
        if cell_width(d, lo, hi) < 1e-290:  # d = 0 and its neighbours: a subnormal cell, whose
            continue  # probability underflows in float64 (the sampler works in logs)
        p1, p2 = prob(law1, d), prob(law2, d)
        assert (p1 > 0) == (p2 > 0), "supports differ"
        if p1 > 0:
            worst = max(worst, abs(math.log(p1 / p2)))
    return worst
