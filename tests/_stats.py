"""Statistical helpers for the test-suite (import with ``from _stats import ...``).

Statistical tests use a tiny significance level (``ALPHA``) so a correct implementation fails
with probability about 1e-6 per test, and each such test is paired with a *power* check: the
same test applied against a wrong scale (0.7x and 1.3x) must reject.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

ALPHA = 1e-6



def ks_pvalue(samples: np.ndarray, cdf) -> float:
    return float(stats.kstest(samples, cdf).pvalue)


def variance_pvalue(samples: np.ndarray, sd: float) -> float:
    """Two-sided p-value of the χ² test that i.i.d. normal ``samples`` have standard deviation
    ``sd``: (N − 1)s²/sd² ~ χ²_(N−1).  Against a wrong scale it is far more powerful than KS
    (at N = 1000 a 1.3× sd is ≈ 9 standard errors away, where KS needs ~3000 draws)."""
    z = np.asarray(samples, dtype=float)
    dof = z.size - 1
    q = dof * z.var(ddof=1) / sd**2
    return float(2 * min(stats.chi2.cdf(q, dof), stats.chi2.sf(q, dof)))


def chi2_pvalue(counts: np.ndarray, probs: np.ndarray, min_expected: float = 5.0) -> float:
    """χ² goodness of fit, pooling cells with small expected counts into one."""
    counts = np.asarray(counts, dtype=float)
    probs = np.asarray(probs, dtype=float)
    n = counts.sum()
    expected = probs * n
    big = expected >= min_expected
    obs = list(counts[big])
    exp = list(expected[big])
    if (~big).any():
        obs.append(counts[~big].sum())
        exp.append(expected[~big].sum())
    obs_a, exp_a = np.array(obs), np.array(exp)
    keep = exp_a > 0
    stat = float(np.sum((obs_a[keep] - exp_a[keep]) ** 2 / exp_a[keep]))
    df = int(keep.sum()) - 1
    return float(stats.chi2.sf(stat, df))
