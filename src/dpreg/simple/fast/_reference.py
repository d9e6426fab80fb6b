"""The materialising reference of :mod:`dpreg.simple.fast` in exact rational arithmetic.

O(n²) pairs with Python :class:`fractions.Fraction` work each: for tests and audits on small
data only.  It builds the doubled multiset of the *exact* pairwise values (each untied pair's
value twice, −∞ and +∞ for a tied pair), the (widened) exponential-mechanism intervals on it,
and the exact law of the released double (the continuous draw rounded up to a double).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from dpreg.simple.fast._oracle import exact_pair_value

__all__ = ["exact_doubled", "exact_em_intervals", "exact_release_cdf"]


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


def exact_release_cdf(breaks: list[Fraction], scores: np.ndarray, points: Any) -> np.ndarray:
    """P(release <= b) for doubles b: the continuous draw X has density ∝ exp(score) on each
    interval, and the release (X rounded up to a double) is <= b exactly when X <= b."""
    import bisect

    lengths = np.array([float(b1 - b0) for b0, b1 in zip(breaks[:-1], breaks[1:])])
    w = np.exp(scores - float(np.max(scores)))
    cum = np.concatenate(([0.0], np.cumsum(lengths * w)))
    out = []
    for b in np.atleast_1d(np.asarray(points, dtype=np.float64)):
        fb = Fraction(float(b))
        j = bisect.bisect_right(breaks, fb) - 1  # breaks[j] <= b < breaks[j + 1]
        if j < 0:
            out.append(0.0)
        elif j >= len(lengths):
            out.append(cum[-1])
        else:
            out.append(cum[j] + float(fb - breaks[j]) * w[j])
    return np.array(out) / cum[-1]
