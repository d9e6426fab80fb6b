"""DPSuffStats and DPIntercept: sensitivities by brute force, limits, ⊥, noise scales, accuracy."""

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from _batch_draws import dp_intercept_draws, noisy_stats_draws
from _stats import ALPHA, ks_pvalue
from dpreg import Ledger, PrivacyLeakWarning, PureDP
from dpreg.exceptions import BudgetExceededError
from dpreg.simple import (
    dp_intercept,
    intercept_sensitivity,
    noisy_stats,
    noisy_stats_sensitivities,
    ols,
)

pytestmark = pytest.mark.filterwarnings("ignore::dpreg.PrivacyLeakWarning")


def nvar(x):
    return float(np.sum((x - x.mean()) ** 2))


def ncov(x, y):
    return float(np.sum((x - x.mean()) * (y - y.mean())))


# --------------------------------------------------------------------------------------------
# sensitivities, brute force over neighbouring datasets
# --------------------------------------------------------------------------------------------
def brute_force(n, xb, yb, slopes):
    """Max change of nvar, ncov and ȳ − αx̄ when one record of an n-record dataset on the grid
    {lo, mid, hi}² is replaced (records are interchangeable: replace the last one)."""
    gx = np.array([xb[0], (xb[0] + xb[1]) / 2, xb[1]])
    gy = np.array([yb[0], (yb[0] + yb[1]) / 2, yb[1]])
    records = list(itertools.product(gx, gy))
    worst = {"nvar": 0.0, "ncov": 0.0, **{a: 0.0 for a in slopes}}
    for others in itertools.product(records, repeat=n - 1):
        for r1, r2 in itertools.product(records, repeat=2):
            d1 = np.array(list(others) + [r1])
            d2 = np.array(list(others) + [r2])
            x1, y1, x2, y2 = d1[:, 0], d1[:, 1], d2[:, 0], d2[:, 1]
            worst["nvar"] = max(worst["nvar"], abs(nvar(x1) - nvar(x2)))
            worst["ncov"] = max(worst["ncov"], abs(ncov(x1, y1) - ncov(x2, y2)))
            for a in slopes:
                f1 = y1.mean() - a * x1.mean()
                f2 = y2.mean() - a * x2.mean()
                worst[a] = max(worst[a], abs(f1 - f2))
    return worst


BOUNDS = [((0.0, 1.0), (0.0, 1.0)), ((-2.0, 1.0), (-1.0, 3.0)), ((0.5, 2.0), (-3.0, -1.0))]


@pytest.mark.parametrize("xb,yb", BOUNDS)
@pytest.mark.parametrize("n", [2, 3])
def test_sensitivities_match_brute_force(n, xb, yb):
    slopes = (-2.0, 0.0, 0.7)
    worst = brute_force(n, xb, yb, slopes)
    sens = noisy_stats_sensitivities(xb, yb, n)
    # the formulas are upper bounds AND attained (the maximum over the grid equals them)
    assert worst["nvar"] == pytest.approx(sens["nvar"], rel=1e-12)
    assert worst["ncov"] == pytest.approx(sens["ncov"], rel=1e-12)
    for a in slopes:
        assert worst[a] == pytest.approx(intercept_sensitivity(a, xb, yb, n), rel=1e-12)


def test_paper_formula_fails_for_negative_lower_bound():
    """Alabi et al. Lemma 18: (1 − 1/n)·r_u² -- too small when r_l < 0."""
    n, xb, yb = 3, (-2.0, 1.0), (-2.0, 1.0)
    worst = brute_force(n, xb, yb, ())
    paper = (1 - 1 / n) * xb[1] ** 2
    assert worst["nvar"] > paper * 8  # 6.0 vs 0.667
    assert worst["nvar"] == pytest.approx((1 - 1 / n) * 9)
    paper_intercept = xb[1] / n * (1 + 0.7)  # r_u/n·(1 + |α|)
    assert intercept_sensitivity(0.7, xb, yb, n) > paper_intercept


# --------------------------------------------------------------------------------------------
# limits, budgets, ⊥
# --------------------------------------------------------------------------------------------
def make_data(n, rng, sigma=0.05):
    x = rng.uniform(0, 1, n)
    y = np.clip(0.5 * x + 0.2 + rng.normal(0, sigma, n), 0, 1)
    return x, y


def test_infinite_epsilon_is_ols(rng):
    x, y = make_data(200, rng)
    with pytest.warns(PrivacyLeakWarning):
        r = noisy_stats(x, y, epsilon=math.inf, x_bounds=(0, 1), y_bounds=(0, 1), rng=0)
    o = ols(x, y)
    assert r.slope == pytest.approx(o.slope, rel=1e-12, abs=1e-12)
    assert r.intercept == pytest.approx(o.intercept, rel=1e-12, abs=1e-12)
    for k, v in o.predictions.items():
        assert r.predictions[k] == pytest.approx(v, abs=1e-12)
    assert not r.privacy.private


def test_infinite_epsilon_clips_to_bounds(rng):
    x, y = make_data(50, rng)
    r = noisy_stats(x * 3, y, epsilon=math.inf, x_bounds=(0, 1), y_bounds=(0, 1))
    o = ols(np.clip(x * 3, 0, 1), y)
    assert r.slope == pytest.approx(o.slope, abs=1e-12)


def test_budget_split_and_ledger(rng):
    x, y = make_data(100, rng)
    led = Ledger(PureDP(1.0))
    r = noisy_stats(x, y, epsilon=0.6, x_bounds=(0, 1), y_bounds=(0, 1), ledger=led, rng=1)
    assert led.spent().epsilon == pytest.approx(0.6)
    assert len(led.events()) == 1
    parts = r.privacy.details["epsilon_parts"]
    assert sum(parts.values()) <= 0.6
    assert all(v == pytest.approx(0.2) for v in parts.values())
    assert r.privacy.budget == PureDP(0.6)
    assert r.privacy.neighbouring.value == "replace-one"
    assert r.privacy.seeded
    assert r.privacy.details["sensitivity_nvar"] == pytest.approx(1 - 1 / 100)
    assert r.privacy.details["laplace_scale_nvar"] == pytest.approx(3 * (1 - 1 / 100) / 0.6)


def test_charge_happens_before_any_noise(rng):
    x, y = make_data(50, rng)
    led = Ledger(PureDP(1.0))
    led.spend(PureDP(0.9))
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError):
        noisy_stats(x, y, epsilon=0.5, x_bounds=(0, 1), y_bounds=(0, 1), ledger=led, rng=gen)
    assert gen.bit_generator.state == state  # no randomness was consumed
    assert len(led.events()) == 1


def test_failure_is_decided_from_the_noisy_denominator_only():
    """All x equal: nvar = 0.  A decision on the true nvar would always fail; the private
    decision fails exactly when the released noisy nvar is <= 0, about half the time."""
    n = 40
    x = np.full(n, 0.5)
    y = np.linspace(0, 1, n)
    led = Ledger(PureDP(math.inf))
    failed = []
    for seed in range(400):
        r = noisy_stats(x, y, epsilon=1.0, x_bounds=(0, 1), y_bounds=(0, 1), release_stats=True,
                        ledger=led, rng=seed)
        assert r.failed == (r.extra["noisy_nvar"] <= 0)
        failed.append(r.failed)
        if r.failed:
            assert "nvar" in r.reason
    assert len(led.events()) == 400  # ⊥ is a private output: every call was charged
    k = int(np.sum(failed))
    assert stats.binomtest(k, 400, 0.5).pvalue > ALPHA


def test_failure_follows_the_noise_not_the_data(monkeypatch):
    """With the Laplace draws replaced by fixed offsets the ⊥ decision tracks nvar + L₂."""
    import dpreg.simple._noisy_stats as mod

    offsets = iter([])

    def fake_laplace(value, *, sensitivity, epsilon, rng):
        return np.asarray(value, dtype=float) + next(offsets)

    # every noise draw of the release goes through the one batched entry point
    monkeypatch.setattr(mod, "laplace_rows", fake_laplace)
    x = np.array([0.0, 1.0, 0.0, 1.0])
    y = np.array([0.0, 1.0, 0.5, 0.5])
    # nvar = 1 > 0, but L₂ = −1.5 makes the noisy denominator negative -> ⊥
    offsets = iter([0.0, -1.5])
    assert noisy_stats(x, y, epsilon=1, x_bounds=(0, 1), y_bounds=(0, 1)).failed
    # nvar = 0 (all x equal) but L₂ = +0.5 -> a release
    offsets = iter([0.0, 0.5, 0.0])
    r = noisy_stats(np.full(4, 0.3), y, epsilon=1, x_bounds=(0, 1), y_bounds=(0, 1))
    assert not r.failed and r.slope == 0.0


def test_overflowing_slope_is_a_failure_not_a_crash(monkeypatch):
    import dpreg.simple._noisy_stats as mod

    offsets = iter([1e300, 1e-300])
    monkeypatch.setattr(mod, "laplace_rows",
                        lambda value, *, sensitivity, epsilon, rng:
                        np.asarray(value, dtype=float) + next(offsets))
    r = noisy_stats(np.full(4, 0.3), np.arange(4) / 4, epsilon=1, x_bounds=(0, 1),
                    y_bounds=(0, 1))
    assert r.failed and "overflow" in r.reason


# --------------------------------------------------------------------------------------------
# noise scales (KS at the right scale, power against 0.7× and 1.3×)
# --------------------------------------------------------------------------------------------
def assert_laplace_scale(samples, scale):
    assert ks_pvalue(samples, stats.laplace(scale=scale).cdf) > ALPHA
    for wrong in (0.7, 1.3):
        assert ks_pvalue(samples, stats.laplace(scale=scale * wrong).cdf) < ALPHA


def test_noise_scales():
    g = np.random.default_rng(2024)
    n = 60
    x, y = make_data(n, g)
    xb, yb = (-0.5, 1.0), (0.0, 2.0)  # asymmetric, different widths
    eps = 0.9
    reps = 8000
    xbar, ybar = x.mean(), y.mean()
    # the releases of noisy_stats(..., rng=seed) for seed < reps (rows of one batch, bit for
    # bit the single fits; the first ones are checked against noisy_stats itself)
    r = noisy_stats_draws(x, y, range(reps), epsilon=eps, x_bounds=xb, y_bounds=yb)
    d_nvar = r["noisy_nvar"] - nvar(x)
    d_ncov = r["noisy_ncov"] - ncov(x, y)
    ok = ~r["failed"]
    alpha_t = r["noisy_ncov"][ok] / r["noisy_nvar"][ok]
    assert np.array_equal(r["slope"][ok], alpha_t)
    scale3 = np.array([intercept_sensitivity(a, xb, yb, n) for a in alpha_t]) / (eps / 3)
    std_int = (r["intercept"][ok] - (ybar - alpha_t * xbar)) / scale3
    w_x, w_y = 1.5, 2.0
    assert_laplace_scale(np.array(d_nvar), (1 - 1 / n) * w_x**2 / (eps / 3))
    assert_laplace_scale(np.array(d_ncov), (1 - 1 / n) * w_x * w_y / (eps / 3))
    assert_laplace_scale(np.array(std_int), 1.0)


# --------------------------------------------------------------------------------------------
# accuracy against theory
# --------------------------------------------------------------------------------------------
def privacy_variance(x, y, eps, xe, xb=(0, 1), yb=(0, 1)):
    """First-order (delta-method) variance of p̃(xe) − p̂(xe) on fixed data."""
    n = x.size
    sens = noisy_stats_sensitivities(xb, yb, n)
    o = ols(x, y)
    b1, b2 = sens["ncov"] / (eps / 3), sens["nvar"] / (eps / 3)
    b3 = intercept_sensitivity(o.slope, xb, yb, n) / (eps / 3)
    v_slope = (2 * b1**2 + o.slope**2 * 2 * b2**2) / nvar(x) ** 2
    return (xe - x.mean()) ** 2 * v_slope + 2 * b3**2


def test_privacy_error_matches_theory_and_rejects_half_noise():
    g = np.random.default_rng(7)
    x, y = make_data(500, g)
    eps = 2.0
    p_hat = ols(x, y).predictions[0.25]
    reps = 3000
    # noisy_stats(..., rng=s) for s < reps: rows of one batch, bit for bit the single fits
    r = noisy_stats_draws(x, y, range(reps), epsilon=eps, x_bounds=(0, 1), y_bounds=(0, 1))
    assert not r["failed"].any()
    errs = r["slope"] * 0.25 + r["intercept"] - p_hat
    ratio = np.mean(errs**2) / privacy_variance(x, y, eps, 0.25)
    # relative sd of a mean of squares of Laplace-type noise: sqrt((κ−1)/reps) <= 4%; 5 sd
    assert ratio == pytest.approx(1.0, abs=0.2)
    # power: half the noise (variance /4) or 0.7× the noise (variance ×0.49) would be caught
    for wrong in (0.25, 0.49):
        assert abs(ratio / wrong - 1.0) > 0.2


@pytest.mark.parametrize("eps,expected", [(1000.0, None), (3.0, "theory")])
def test_error_relative_to_ols_follows_the_epsilon_n_var_rule(eps, expected):
    """Total error vs the truth: MSE ≈ MSE_OLS + privacy variance.  At large ε·n·var(x) it
    approaches the OLS error (ratio -> 1); at moderate values it follows the theory."""
    g = np.random.default_rng(11)
    n, reps, xe = 2000, 600, 0.25
    truth = 0.5 * xe + 0.2
    e_dp, e_ols, v_priv = [], [], []
    for s in range(reps):
        x, y = make_data(n, g)
        e_ols.append(ols(x, y).predictions[xe] - truth)
        e_dp.append(noisy_stats(x, y, epsilon=eps, x_bounds=(0, 1), y_bounds=(0, 1),
                                rng=s).predictions[xe] - truth)
        v_priv.append(privacy_variance(x, y, eps, xe))
    e_dp, e_ols = np.array(e_dp), np.array(e_ols)
    ratio = math.sqrt(np.mean(e_dp**2) / np.mean(e_ols**2))
    sigma = 0.05 * math.sqrt(1 / n + (xe - 0.5) ** 2 / (n / 12))  # sd of the OLS prediction
    if expected is None:
        assert 0.98 < ratio < 1.02
        # Ĉ_true(0.68) / σ(p̂): about 1 ("privacy noise below sampling error")
        c68 = np.quantile(np.abs(e_dp), 0.68)
        assert c68 / sigma == pytest.approx(1.0, abs=0.12)
    else:
        predicted = math.sqrt(1 + np.mean(v_priv) / np.mean(e_ols**2))
        assert predicted > 1.5  # the regime is privacy-dominated
        assert ratio == pytest.approx(predicted, rel=0.12)
        half_noise = math.sqrt(1 + np.mean(v_priv) / 4 / np.mean(e_ols**2))
        assert abs(ratio / half_noise - 1) > 0.12  # power


# --------------------------------------------------------------------------------------------
# DPIntercept
# --------------------------------------------------------------------------------------------
def test_dp_intercept(rng):
    x, y = make_data(80, rng)
    with pytest.warns(PrivacyLeakWarning):
        r = dp_intercept(x, y, epsilon=math.inf, y_bounds=(0, 1))
    assert r.intercept == pytest.approx(y.mean(), abs=1e-15) and r.slope == 0.0
    assert set(r.predictions) == {0.25, 0.75}
    assert all(v == r.intercept for v in r.predictions.values())
    r = dp_intercept(x, y, epsilon=1.0, y_bounds=(0, 1), x_bounds=(10, 20), rng=0)
    assert set(r.predictions) == {12.5, 17.5}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # dp_intercept(..., rng=s).intercept for s < 4000 (rows of one batch, bit for bit)
        draws = dp_intercept_draws(x, y, range(4000), epsilon=0.5, y_bounds=(-1, 2))
    assert_laplace_scale(draws - y.mean(), 3 / (80 * 0.5))


def test_dp_intercept_ledger(rng):
    x, y = make_data(30, rng)
    led = Ledger(PureDP(1))
    dp_intercept(x, y, epsilon=0.25, y_bounds=(0, 1), ledger=led, rng=1)
    assert led.spent() == PureDP(0.25)
