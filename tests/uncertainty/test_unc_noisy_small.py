"""noisy-stats' default interval on small data with wide public bounds (issue 18): the
released nvar~ is not plugged in as the truth; its posterior given the release is carried into
the interval.  Seeded."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from dpreg.data import load_dataset
from dpreg.inference.dpci.noisy_stats import NoisyStatsModel
from dpreg.simple import noisy_stats

ALPHA = 1e-6


def _model(nvar_tilde: float, b: float, n: int = 100, wx: float = 10.0) -> NoisyStatsModel:
    released = {"ncov": 50.0, "nvar": nvar_tilde, "nvar_y": 400.0, "xbar": 5.0,
                "slope": 50.0 / nvar_tilde, "intercept": 1.0}
    scales = {"ncov": 20.0, "nvar": b, "nvar_y": 30.0, "xbar": 0.05}
    return NoisyStatsModel(released=released, n=n, x_bounds=(0.0, wx), y_bounds=(0.0, 20.0),
                           scales=scales, eps_intercept=1.0)


def _posterior_cdf(c: float, b: float, hi: float, weighted: bool = True):
    def dens(v: float) -> float:
        w = 1.0 / (1.0 - 0.5 * np.exp(-v / b)) if weighted else 1.0
        return float(np.exp(-abs(c - v) / b) * w)

    grid = np.linspace(0.0, hi, 4001)
    pdf = np.array([dens(v) for v in grid])
    cdf = integrate.cumulative_trapezoid(pdf, grid, initial=0.0)
    cdf /= cdf[-1]
    return lambda v: np.interp(v, grid, cdf)


def test_world_nvar_is_drawn_from_its_posterior_not_plugged_in():
    """The draws of nvar follow the posterior given nvar~ (flat prior on (0, n·w²/4], Laplace
    likelihood divided by P(not ⊥)): one-sample KS against the CDF by quadrature; the same
    draws reject the posterior without the ⊥ factor, and a plug-in nvar = nvar~ is not it."""
    c, b = 40.0, 40.0
    m = _model(c, b)
    hi = 100 * 10.0**2 / 4.0
    d = m.world_nvar_draws(40_000, np.random.default_rng(3))
    assert np.all((d > 0) & (d <= hi))
    assert stats.kstest(d, _posterior_cdf(c, b, hi)).pvalue > ALPHA
    assert stats.kstest(d, _posterior_cdf(c, b, hi, weighted=False)).pvalue < ALPHA
    assert np.std(d) > 0.5 * b  # carries the noise of nvar~ (the plug-in world had sd 0)
    # ε = ∞ (no noise on nvar): the released value itself
    assert np.all(_model(c, 0.0).world_nvar_draws(10, np.random.default_rng(0)) == c)


def _diabetes_bmi():
    ds = load_dataset("diabetes")
    xb, yb = ds.bounds["bmi"], ds.bounds["progression"]
    x = np.clip(ds.frame["bmi"].to_numpy(float), *xb)
    y = np.clip(ds.frame["progression"].to_numpy(float), *yb)
    return x, y, xb, yb, np.polynomial.polynomial.polyfit(x, y, 1)


def _coverage(eps: float, seeds: range, n_boot: int, alphas: tuple[float, ...]):
    x, y, xb, yb, truth = _diabetes_bmi()
    cover = []
    for seed in seeds:
        r = noisy_stats(x, y, epsilon=eps, x_bounds=xb, y_bounds=yb, inference=True, rng=seed)
        if r.failed:
            continue
        rr = r.to_regression_results(n_boot=n_boot)
        row = []
        for a in alphas:
            ci = rr.conf_int(a).to_numpy()
            row += [ci[j, 0] <= truth[j] <= ci[j, 1] for j in range(2)]
        cover.append(row)
    return np.mean(cover, axis=0), len(cover)


def test_small_data_default_interval_covers_where_nvar_is_poorly_determined():
    """diabetes `progression ~ bmi` (442 rows, bmi bounds 12-60: the noise sd of nvar is 2.5x
    the data's nvar at ε = 0.5), fixed data, 240 seeded releases (181 not ⊥), 95% default
    intervals: both coefficients' coverage of the full-data OLS fit (of the clipped data) is at
    least 0.95 - 2·MC SE (0.918).  The plug-in bootstrap world (before the fix) covered the
    intercept 0.906 on these seeds (this test fails there); now 0.956."""
    cov, m = _coverage(0.5, range(240), 400, (0.05,))
    se = np.sqrt(0.95 * 0.05 / m)
    assert np.all(cov >= 0.95 - 2 * se), (cov, m)


@pytest.mark.slow
def test_small_data_real_coverage_in_band_slow():
    """The previously failing real-data cell (docs/uncertainty.md, "Real data of ordinary
    size"): diabetes `progression ~ bmi`, fixed data, ε = 0.5, 300 releases, B = 1000.  Before:
    0.903-0.921 (95%) / 0.819-0.843 (90%) in the study.  Seeded (seeds 0-299, 222 not ⊥): both
    coefficients at both levels must lie in the band [1 − α − 0.01, 1 − α + 0.03] (now 0.955,
    0.950 / 0.896, 0.905; the plug-in world gave 0.923, 0.941 / 0.869, 0.901 and fails).  The
    Monte Carlo SE (0.015 / 0.020) is printed in the message."""
    alphas = (0.05, 0.1)
    cov, m = _coverage(0.5, range(300), 1000, alphas)
    for k, a in enumerate(alphas):
        se = np.sqrt(a * (1 - a) / m)
        for j in range(2):
            c = cov[2 * k + j]
            assert 1 - a - 0.01 <= c <= 1 - a + 0.03, (a, j, c, m, se)
