"""Multivariate DP gradient descent: calibrated per-round noise (GDP and zCDP accounting),
noisy count under add/remove, output options, clipping, failure on divergence."""

import math

import numpy as np
import pytest
from scipy import stats

from _stats import ALPHA, ks_pvalue
from dpreg import GDP, ZCDP, ApproxDP, InvalidInputError, Ledger
from dpreg.multivariate.dpgd import dp_gradient_descent
from dpreg.privacy.budgets import gdp_mu, zcdp_rho_for_approx

EPS, DELTA, T, D, N = 1.0, 1e-6, 10, 5, 20


#: rounds of the noise-calibration runs: the per-round budget and the √T growth of the summed
#: noise are the same rule at any T, and each round is a seeded Gaussian release (~ms)
T_NOISE = 3


def final_iterates(accounting, neighbouring="replace-one", runs=400, clip=0.5, eta=0.3,
                   n_iter=T_NOISE):
    """X = 0: every gradient is 0, so θ_T = −(η/n)·Σ_t z_t is pure noise."""
    X, y = np.zeros((N, D)), np.linspace(-1, 1, N)
    out, extras = [], []
    for seed in range(runs):
        res = dp_gradient_descent(X, y, epsilon=EPS, delta=DELTA, clip_norm=clip, n_iter=n_iter,
                                  learning_rate=eta, accounting=accounting, output="last",
                                  neighbouring=neighbouring, rng=seed)
        out.append(res.params.to_numpy())
        extras.append(res.extra.get("n_noisy"))
    return np.concatenate(out), extras, res


@pytest.mark.parametrize("accounting", ["gdp", "zcdp"])
def test_noise_is_calibrated(accounting):
    clip, eta = 0.5, 0.3
    samples, _, res = final_iterates(accounting, clip=clip, eta=eta)
    sens = 2 * clip  # replace-one
    t = T_NOISE
    if accounting == "gdp":
        sigma = sens / (gdp_mu(EPS, DELTA) / math.sqrt(t))
    else:
        sigma = sens / math.sqrt(2 * zcdp_rho_for_approx(EPS, DELTA) / t)
    assert res.privacy.details["noise_sd"] == pytest.approx(sigma, rel=1e-9)
    sd = math.sqrt(t) * sigma * eta / N
    assert ks_pvalue(samples, stats.norm(scale=sd).cdf) > ALPHA
    for wrong in (0.7, 1.3):
        assert ks_pvalue(samples, stats.norm(scale=sd * wrong).cdf) < ALPHA


def test_add_remove_releases_a_noisy_count():
    """Under add/remove the count is one more Gaussian release: T + 1 releases share the μ.
    One round (T + 1 = 2) makes the extra release half of the budget, so a count calibrated
    as one of T releases (√2× too little noise) would be caught, and each run is 2 releases."""
    X, y = np.zeros((1000, 2)), np.zeros(1000)
    counts = [dp_gradient_descent(X, y, epsilon=EPS, delta=DELTA, n_iter=1,
                                  neighbouring="add-remove", rng=s).extra["n_noisy"]
              for s in range(1500)]
    mu_r = gdp_mu(EPS, DELTA) / math.sqrt(1 + 1)
    z = (np.array(counts) - 1000) * mu_r
    assert ks_pvalue(z, stats.norm.cdf) > ALPHA
    assert ks_pvalue(z, stats.norm(scale=1.3).cdf) < ALPHA
    assert ks_pvalue(z * math.sqrt(2), stats.norm.cdf) < ALPHA  # calibrated as one of T = 1


@pytest.mark.parametrize("accounting,kind", [("gdp", GDP), ("zcdp", ZCDP)])
@pytest.mark.parametrize("neighbouring,releases", [("replace-one", T), ("add-remove", T + 1)])
def test_accounting(accounting, kind, neighbouring, releases):
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(50, 2))
    ledger = Ledger(ApproxDP(EPS, DELTA), neighbouring=neighbouring)
    res = dp_gradient_descent(X, X[:, 0], epsilon=EPS, delta=DELTA, n_iter=T,
                              accounting=accounting, neighbouring=neighbouring, ledger=ledger,
                              rng=0)
    assert isinstance(res.privacy.budget, kind)
    assert res.privacy.details["n_releases"] == releases
    assert ledger.spent().epsilon <= EPS * (1 + 1e-9)
    if kind is GDP:
        assert res.privacy.budget.mu == pytest.approx(gdp_mu(EPS, DELTA), rel=1e-12)
    else:
        assert res.privacy.budget.rho == pytest.approx(zcdp_rho_for_approx(EPS, DELTA),
                                                       rel=1e-12)


def test_per_example_clipping_bounds_each_gradient(monkeypatch):
    """Each per-example gradient enters the sum with norm <= C_g (checked by spying on the
    released sums at ε = inf with one huge outlier)."""
    import dpreg.multivariate.dpgd as mod

    sums = []
    real = mod.gaussian

    def spy(value, **kw):
        sums.append(np.asarray(value, dtype=float).copy())
        return real(value, **kw)

    monkeypatch.setattr(mod, "gaussian", spy)
    X = np.zeros((10, 2))
    X[0] = [1.0, 0.0]
    y = np.zeros(10)
    y[0] = 1e6
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dp_gradient_descent(X, y, epsilon=math.inf, delta=DELTA, clip_norm=0.7, n_iter=3,
                            learning_rate=0.1, rng=0)
    assert all(np.linalg.norm(s) <= 0.7 + 1e-12 for s in sums)


def test_output_average_is_tail_mean():
    X = np.random.default_rng(1).uniform(-0.5, 0.5, size=(100, 2))
    y = X @ [1.0, -1.0]
    last = dp_gradient_descent(X, y, epsilon=2.0, delta=DELTA, n_iter=1, output="last", rng=3)
    avg = dp_gradient_descent(X, y, epsilon=2.0, delta=DELTA, n_iter=1, output="average",
                              rng=3)
    np.testing.assert_allclose(avg.params.to_numpy(), last.params.to_numpy())


@pytest.mark.parametrize("schedule", ["constant", "1/t", "1/sqrt(t)"])
def test_schedules_run(schedule):
    X = np.random.default_rng(2).uniform(-0.5, 0.5, size=(300, 3))
    res = dp_gradient_descent(X, X @ [1, 2, 3], epsilon=2.0, delta=DELTA, schedule=schedule,
                              rng=0)
    assert np.all(np.isfinite(res.params.to_numpy()))


def test_divergence_is_a_typed_failure():
    X = np.random.default_rng(3).uniform(-10, 10, size=(100, 3))
    with np.errstate(all="ignore"):
        res = dp_gradient_descent(X, X @ [1, 2, 3], epsilon=1.0, delta=DELTA, clip_norm=1e150,
                                  learning_rate=1e160, n_iter=400, output="last", rng=0)
    assert res.failed and "diverged" in res.reason


@pytest.mark.parametrize("kw,match", [
    ({"delta": 0.0}, "delta"), ({"clip_norm": 0}, "clip_norm"),
    ({"clip_norm": 1e308}, "clip_norm"), ({"n_iter": 0}, "n_iter"),
    ({"learning_rate": -1}, "learning_rate"), ({"schedule": "1/t2"}, "schedule"),
    ({"accounting": "rdp"}, "accounting"), ({"output": "best"}, "output"),
    ({"neighbouring": "x"}, "neighbouring"),
])
def test_bad_parameters_cost_nothing(kw, match):
    X, y = np.ones((10, 2)), np.ones(10)
    ledger = Ledger(ApproxDP(10, 0.1))
    args = dict(epsilon=1.0, delta=1e-6, ledger=ledger)
    args.update(kw)
    with pytest.raises(InvalidInputError, match=match):
        dp_gradient_descent(X, y, **args)
    assert ledger.events() == []
