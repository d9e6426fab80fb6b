"""noisy-stats' default interval on small data with wide public bounds (issue 18): the
released nvar~ is not plugged in as the truth; its posterior given the release is carried into
the interval.  Seeded."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from dpreg.data import load_dataset
from dpreg.inference import NoUncertaintyError
from dpreg.inference.dpci.engine import ParametricBootstrap
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


def _machinery_ci(r, alpha: float, n_boot: int) -> np.ndarray:
    """The default (percentile) interval of an ``inference=True`` release built directly from
    its statistics, *without* the public interval rule: the posterior-nvar machinery itself,
    which cells above the rule's threshold use and which the rule now keeps from users where
    the noise share of nvar exceeds 2.5 %."""
    spec = r.inference
    model = NoisyStatsModel(released=spec["released"], n=spec["n"], x_bounds=spec["x_bounds"],
                            y_bounds=spec["y_bounds"], scales=spec["scales"],
                            eps_intercept=spec["eps_intercept"], names=["intercept", "x"])
    boot = ParametricBootstrap(model, n_boot=n_boot, kind="percentile", rng=spec["seed"])
    return boot.conf_int(alpha).to_numpy()


def _coverage(eps: float, seeds: range, n_boot: int, alphas: tuple[float, ...]):
    x, y, xb, yb, truth = _diabetes_bmi()
    cover = []
    for seed in seeds:
        r = noisy_stats(x, y, epsilon=eps, x_bounds=xb, y_bounds=yb, inference=True, rng=seed)
        if r.failed:
            continue
        row = []
        for a in alphas:
            ci = _machinery_ci(r, a, n_boot)
            row += [ci[j, 0] <= truth[j] <= ci[j, 1] for j in range(2)]
        cover.append(row)
    return np.mean(cover, axis=0), len(cover)


def _public_coverage(eps: float, seeds: range, n_boot: int, alphas: tuple[float, ...]):
    """What users get: ``to_regression_results().conf_int`` (the interval rule applies).
    Returns (coverage per α × coefficient or None, releases with an interval, refused)."""
    x, y, xb, yb, truth = _diabetes_bmi()
    cover, refused = [], 0
    for seed in seeds:
        r = noisy_stats(x, y, epsilon=eps, x_bounds=xb, y_bounds=yb, inference=True, rng=seed)
        if r.failed:
            continue
        rr = r.to_regression_results(n_boot=n_boot)
        if rr.extra.get("dp_ci_refused"):
            refused += 1
            with pytest.raises(NoUncertaintyError, match="refused by the interval rule"):
                rr.conf_int(alphas[0])
            continue
        row = []
        for a in alphas:
            ci = rr.conf_int(a).to_numpy()
            row += [ci[j, 0] <= truth[j] <= ci[j, 1] for j in range(2)]
        cover.append(row)
    return (np.mean(cover, axis=0) if cover else None), len(cover), refused


def test_small_data_default_interval_covers_where_nvar_is_poorly_determined():
    """diabetes `progression ~ bmi` (442 rows, bmi bounds 12-60: the noise sd of nvar is 2.5x
    the data's nvar at ε = 0.5), fixed data, 240 seeded releases (181 not ⊥), 95% default
    intervals of the machinery (:func:`_machinery_ci`; users are refused an interval here by
    the public rule, see below): both coefficients' coverage of the full-data OLS fit (of the
    clipped data) is at least 0.95 - 2·MC SE (0.918).  The plug-in bootstrap world (before
    the posterior fix) covered the intercept 0.906 on these seeds (this test fails there);
    now 0.956."""
    cov, m = _coverage(0.5, range(240), 400, (0.05,))
    se = np.sqrt(0.95 * 0.05 / m)
    assert np.all(cov >= 0.95 - 2 * se), (cov, m)


def test_public_rule_refuses_the_diabetes_cells_that_under_covered():
    """diabetes (442 rows) at ε = 0.5: the public noise share 8.5% is above the rule's 5%, so
    every release's ``conf_int`` is refused whatever the noise drew, with the remedy (ε >=
    0.85 at this n; always at ε >= 1.7); at ε = 1 (4.3%) the release decides, and on these
    data (bmi fills 3% of what its bounds allow) it refuses almost every release (2.6% offered
    in the study), saying what gives an interval whatever the release; at ε = 4 (n·ε = 1768) it
    is offered.  Before the rule (main before issue 18) these releases had intervals (the 90%
    ones under-covered at ε = 0.5: 0.845-0.880)."""
    cov, m, refused = _public_coverage(0.5, range(12), 50, (0.1,))
    assert cov is None and m == 0 and refused >= 8, (m, refused)
    x, y, xb, yb, _ = _diabetes_bmi()
    r = noisy_stats(x, y, epsilon=0.5, x_bounds=xb, y_bounds=yb, inference=True, rng=0)
    with pytest.raises(NoUncertaintyError, match=r"from public inputs.*Use ε >= 0\.85\d* at "
                       r"this n.*whatever the release needs ε >= 1\.7"):
        r.to_regression_results(n_boot=50).conf_int(0.1)
    cov, m, refused = _public_coverage(1.0, range(12), 50, (0.1,))
    assert m <= 2 and refused >= 8, (m, refused)
    r = noisy_stats(x, y, epsilon=1.0, x_bounds=xb, y_bounds=yb, inference=True, rng=0)
    with pytest.raises(NoUncertaintyError, match=r"on this release.*whatever the release needs "
                       r"ε >= 1\.7\d* at this n, or about 7\d\d rows"):
        r.to_regression_results(n_boot=50).conf_int(0.1)
    r4 = noisy_stats(x, y, epsilon=4.0, x_bounds=xb, y_bounds=yb, inference=True, rng=0)
    assert r4.to_regression_results(n_boot=50).has_bse


@pytest.mark.slow
def test_small_data_real_coverage_in_band_or_refused_slow():
    """One real small data set, what users get (the interval rule applies): diabetes
    `progression ~ bmi`, fixed data (the full-data OLS fit of the clipped data is the truth),
    300 seeded releases per ε, B = 1000.  ε = 0.5: refused in every non-⊥ release (the cells
    that under-covered before the rule: 90% 0.819-0.880 at ε = 0.5); ε = 1: refused by the
    release in all but a few.  ε = 4: offered,
    and both coefficients at both levels within 2 Monte Carlo SE of the band
    [1 − α − 0.01, 1 − α + 0.03] (the MC SE is printed in the message).  Measured: 222 and 258
    refusals (the rest ⊥); ε = 4: 294 intervals, 0.963 / 0.939 at 95% / 90% for both
    coefficients.  Fails on the code before the rule (intervals at ε <= 1)."""
    alphas = (0.05, 0.1)
    cov, m, refused = _public_coverage(0.5, range(300), 1000, alphas)
    assert cov is None and m == 0 and refused > 200, (m, refused)
    # ε = 1: the release decides and refuses almost every release (3 of 258 offered)
    cov, m, refused = _public_coverage(1.0, range(300), 1000, alphas)
    assert m <= 15 and refused > 200, (m, refused)
    cov, m, refused = _public_coverage(4.0, range(300), 1000, alphas)
    assert refused == 0 and m > 280
    for k, a in enumerate(alphas):
        se = np.sqrt(a * (1 - a) / m)
        for j in range(2):
            c = cov[2 * k + j]
            assert 1 - a - 0.01 - 2 * se <= c <= 1 - a + 0.03 + 2 * se, (a, j, c, m, se)
