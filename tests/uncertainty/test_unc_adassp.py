"""AdaSSP inference: the yᵀy release (sensitivity, noise, exact budget), the bootstrap world
replaying the four releases, and the estimator's interval in original units."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from _stats import ALPHA, ks_pvalue
from dpreg import GDP, ZCDP, Ledger
from dpreg.exceptions import InvalidInputError
from dpreg.inference.dpci.ssp import AdaSSPModel
from dpreg.inference.results import NoUncertaintyError
from dpreg.linear_model import AdaSSP
from dpreg.multivariate import adassp
from dpreg.multivariate.ssp import adassp_guarantee, yty_sensitivity


@pytest.mark.parametrize("C", [0.5, 1.0, 3.0])
def test_yty_sensitivity_matches_brute_force(C):
    grid = np.linspace(-C, C, 7)
    # add/remove: one y² appears; replace-one: y² -> y'² (other records cancel)
    add_remove = max(v * v for v in grid)
    replace = max(abs(a * a - b * b) for a, b in itertools.product(grid, grid))
    assert yty_sensitivity(C, "add-remove") == pytest.approx(add_remove)
    assert yty_sensitivity(C, "replace-one") == pytest.approx(replace)


def design(n=400, seed=0):
    rng = np.random.default_rng(seed)
    Z = np.column_stack([np.ones(n), rng.uniform(-1, 1, (n, 2))])
    y = Z @ [0.1, 0.4, -0.3] + rng.normal(0, 0.1, n)
    return Z, np.clip(y, -1, 1)


@pytest.mark.parametrize("rule,releases", [("eigen-floor", ("XtX", "Xty")),
                                           ("wang", ("XtX", "Xty", "lambda_min"))])
def test_budget_and_implied_epsilon_are_unchanged(rule, releases):
    Z, y = design()
    common = dict(x_norm_bound=math.sqrt(3), y_bound=1.0, epsilon=1.0, delta=1e-6, rng=0,
                  lambda_rule=rule)
    led_a, led_b = (Ledger(GDP(5.0), neighbouring="add-remove") for _ in range(2))
    plain = adassp(Z, y, ledger=led_a, **common)
    infer = adassp(Z, y, ledger=led_b, inference=True, count_index=0, **common)
    assert led_a.spent() == led_b.spent() == adassp_guarantee(1.0, 1e-6)[0]
    assert infer.privacy.budget == plain.privacy.budget
    assert infer.privacy.details["implied_epsilon"] == plain.privacy.details["implied_epsilon"]
    sd_p, sd_i = plain.privacy.details["noise_sd"], infer.privacy.details["noise_sd"]
    assert set(sd_i) == set(sd_p) == set(releases)
    for k in releases:  # 0.45 instead of 1/2 (eigen floor), 0.3 instead of 1/3 (Wang) of μ²
        assert sd_i[k] == pytest.approx(sd_p[k] * math.sqrt(10 / 9), rel=1e-9)
    mu = adassp_guarantee(1.0, 1e-6)[0].mu
    assert infer.privacy.details["noise_sd_yty"] == pytest.approx(1.0 / (math.sqrt(0.1) * mu))
    assert plain.ci_method == "none" and "inference=True" in plain.uncertainty


def test_validation_before_charge():
    Z, y = design()
    led = Ledger(ZCDP(1.0))
    with pytest.raises(InvalidInputError, match="count_index"):
        adassp(Z, y, x_norm_bound=2.0, y_bound=1.0, epsilon=1.0, delta=1e-6, inference=True,
               ledger=led)
    with pytest.raises(InvalidInputError, match="inference"):
        adassp(Z, y, x_norm_bound=2.0, y_bound=1.0, epsilon=1.0, delta=1e-6, inference=1,
               count_index=0, ledger=led)
    with pytest.raises(InvalidInputError, match="fit_intercept|count_index"):
        AdaSSP(epsilon=1.0, delta=1e-6, bounds_X=(-1, 1), bounds_y=(-1, 1), inference=True,
               fit_intercept=False, ledger=led).fit(Z[:, 1:], y)
    assert led.spent().rho == 0.0


@pytest.mark.parametrize("draws", [1000, pytest.param(3000, marks=pytest.mark.slow)])
def test_yty_noise_is_gaussian_with_the_stated_sd_and_power(draws):
    """noisy yᵀy − yᵀy ~ N(0, sd²) with the stated sd: KS (shape) and the χ² test of the
    variance, which rejects 0.7× and 1.3× the sd from 1000 draws on (z ≈ 9 at 1.3×); the KS
    test itself rejects 1.3× only from ~3000 draws (distance ≈ 0.063; 1500 were borderline),
    so that check runs in the slow run's 3000 draws."""
    Z, y = design(n=60, seed=2)
    true = float(y @ y)
    noise = []
    for s in range(draws):
        r = adassp(Z, y, x_norm_bound=math.sqrt(3), y_bound=1.0, epsilon=1.0, delta=1e-6,
                   neighbouring="replace-one", inference=True, n_boot=50, rng=s)
        noise.append(r.extra["noisy_yty"] - true)
    sd = r.privacy.details["noise_sd_yty"]
    noise = np.array(noise)
    assert ks_pvalue(noise, stats.norm(scale=sd).cdf) > ALPHA
    # the variance itself: (N-1)s²/sd² ~ χ²_(N-1) under the stated sd (two-sided)
    dof = noise.size - 1
    chi = dof * noise.var(ddof=1)
    assert min(stats.chi2.cdf(chi / sd**2, dof), stats.chi2.sf(chi / sd**2, dof)) > ALPHA / 2
    for wrong in (0.7, 1.3):
        w = chi / (wrong * sd) ** 2
        assert min(stats.chi2.cdf(w, dof), stats.chi2.sf(w, dof)) < ALPHA / 2
        if draws >= 3000:
            assert ks_pvalue(noise, stats.norm(scale=wrong * sd).cdf) < ALPHA


def test_bootstrap_world_matches_real_releases_on_world_data():
    """Labels drawn from the world (fixed design, y = Zθ + N(0, σ²), no clipping) and released
    by the real adassp with Wang's ridge have the law of the model's ridge replicates (KS per
    coefficient); a world with 0.7× or 1.3× the Xᵀy noise is rejected.  (The world replays
    Wang's λ_min release and ridge; with the default eigen floor no λ enters the replay.)"""
    Z, y0 = design(n=300, seed=3)
    C, eps, delta = 3.0, 1.0, 1e-6
    B = math.sqrt(3)
    probe = adassp(Z, y0, x_norm_bound=B, y_bound=C, epsilon=eps, delta=delta,
                   neighbouring="replace-one", inference=True, n_boot=50, rng=0,
                   lambda_rule="wang")
    det = probe.privacy.details
    sd = dict(det["noise_sd"], yty=det["noise_sd_yty"])
    theta = np.array([0.1, 0.4, -0.3])
    sigma = 0.3
    xtx = Z.T @ Z
    n, d = Z.shape

    def model(factor=1.0):
        return AdaSSPModel(
            xtx=xtx, xty=xtx @ theta, yty=float(theta @ xtx @ theta + (n - d) * sigma**2),
            lam_min=float(np.linalg.eigvalsh(xtx)[0]), theta=theta,
            sd=dict(sd, Xty=sd["Xty"] * factor), log_term=math.sqrt(math.log(6 / delta)),
            ridge_const=math.sqrt(d * math.log(2 * d * d / 0.05)), n_public=n,
            count_index=None, count_scale=1.0, label_bound=C, names=["a", "b", "c"])

    rng = np.random.default_rng(4)
    real = []
    # 1000 releases (~15 ms each): seeded p-values 0.03-0.05 for the right world, 3e-11 and
    # 5e-9 for 0.7x and 1.3x the Xᵀy noise
    for s in range(1000):
        y = Z @ theta + rng.normal(0, sigma, n)
        r = adassp(Z, y, x_norm_bound=B, y_bound=C, epsilon=eps, delta=delta,
                   neighbouring="replace-one", rng=s + 1, lambda_rule="wang")
        real.append(r.params.to_numpy())
    real = np.array(real)
    est = model().simulate_releases(30_000, np.random.default_rng(5))["ridge"]
    for j in range(d):
        assert stats.ks_2samp(real[:, j], est[:, j]).pvalue > ALPHA
    for factor in (0.7, 1.3):
        est_w = model(factor).simulate_releases(30_000, np.random.default_rng(6))["ridge"]
        assert min(stats.ks_2samp(real[:, j], est_w[:, j]).pvalue for j in range(d)) < ALPHA


def test_estimator_interval_in_original_units():
    rng = np.random.default_rng(7)
    n = 20_000
    X = rng.uniform(10, 20, (n, 2))
    y = 5 + X @ [2.0, -1.0] + rng.normal(0, 2, n)
    est = AdaSSP(epsilon=2.0, delta=1e-6, bounds_X=[(10, 20), (10, 20)], bounds_y=(-20, 40),
                 inference=True, n_boot=400, random_state=0).fit(X, y)
    res = est.results_
    ci = res.conf_int(0.05)
    assert list(ci.index) == ["intercept", "x0", "x1"]
    assert np.all(ci["lower"] < res.params) and np.all(res.params < ci["upper"])
    # original units: the slopes' intervals straddle the truth at this accuracy
    assert ci.loc["x0", "lower"] < 2.0 < ci.loc["x0", "upper"]
    assert np.all(res.bse.to_numpy() > np.asarray(res.extra["bse_plugin_ignores_noise"]))
    assert "parametric bootstrap" in res.ci_method
    plain = AdaSSP(epsilon=2.0, delta=1e-6, bounds_X=[(10, 20), (10, 20)], bounds_y=(-20, 40), inference=False,
                   random_state=0).fit(X, y)
    with pytest.raises(NoUncertaintyError, match="inference=True"):
        plain.results_.conf_int(0.05)
