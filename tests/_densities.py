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
