"""Multivariate DP gradient descent: calibrated per-round noise (GDP and zCDP accounting),
noisy count under add/remove, output options, clipping, failure on divergence, and the public
step-count/clip rule of ``n_iter="auto"``, ``clip_norm="auto"`` (issue 30)."""

import math

import numpy as np
import pytest
from scipy import stats

from _stats import ALPHA, ks_pvalue
from dpreg import GDP, ZCDP, ApproxDP, InvalidInputError, Ledger
from dpreg.multivariate.dpgd import (
    DPGD_AUTO_STEPS,
    DPGD_FIXED_SCHEDULE,
    DPGD_TRAVEL,
    dp_gradient_descent,
    dpgd_budget,
    dpgd_schedule,
)
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
    real = mod.gaussian_calls

    def spy(count, **kw):  # the T rounds' releases (one batched sampler, one call per round)
        release = real(count, **kw)

        def call(value):
            sums.append(np.asarray(value, dtype=float).copy())
            return release(value)
        return call

    monkeypatch.setattr(mod, "gaussian_calls", spy)
    X = np.zeros((10, 2))
    X[0] = [1.0, 0.0]
    y = np.zeros(10)
    y[0] = 1e6
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dp_gradient_descent(X, y, epsilon=math.inf, delta=DELTA, clip_norm=0.7, n_iter=3,
                            learning_rate=0.1, rng=0)
    assert len(sums) == 3
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


# ------------------------------------------------------------------------ the public schedule
def test_schedule_is_the_documented_function_of_public_inputs():
    mu = GDP.from_approx(1.0, 1e-6).mu
    T, C = dpgd_schedule(420, 4, epsilon=1.0, delta=1e-6)
    assert T == DPGD_AUTO_STEPS == 1600
    assert C == pytest.approx(DPGD_TRAVEL * mu * 420 / (4 * 1600), rel=1e-12)
    # more rows or more ε: a larger clip (less regularisation); more columns: a smaller one
    assert dpgd_schedule(4200, 4, epsilon=1.0, delta=1e-6)[1] > C
    assert dpgd_schedule(420, 4, epsilon=4.0, delta=1e-6)[1] > C
    assert dpgd_schedule(420, 8, epsilon=1.0, delta=1e-6)[1] < C
    # capped at the old fixed clip; infinite ε: no noise, the cap
    assert dpgd_schedule(10**9, 4, epsilon=4.0, delta=1e-6)[1] == DPGD_FIXED_SCHEDULE[1] == 1.0
    assert dpgd_schedule(420, 4, epsilon=math.inf, delta=1e-6) == (1600, 1.0)
    # a given T keeps the travel T·C_g = 1.5·μ·n/p
    T2, C2 = dpgd_schedule(420, 4, epsilon=1.0, delta=1e-6, n_iter=400)
    assert T2 == 400 and T2 * C2 == pytest.approx(T * C, rel=1e-12)
    for bad in ({"n_iter": "many"}, {"n_iter": 0}):
        with pytest.raises(InvalidInputError, match="n_iter"):
            dpgd_schedule(420, 4, epsilon=1.0, delta=1e-6, **bad)


def test_auto_schedule_in_a_fit_uses_public_n_under_replace_one():
    rng = np.random.default_rng(5)
    X = rng.uniform(-0.5, 0.5, size=(300, 3))
    y = X @ [0.3, -0.2, 0.1]
    res = dp_gradient_descent(X, y, epsilon=1.0, delta=DELTA, rng=0)
    det = res.privacy.details
    assert (det["n_iter"], det["clip_norm"]) == dpgd_schedule(300, 3, epsilon=1.0, delta=DELTA)
    assert det["schedule_rule"] == {"n_iter": "auto", "clip_norm": "auto"}
    assert det["n_releases"] == 1600
    mu_r = GDP.from_approx(1.0, DELTA).split([1.0] * 1600)[0].mu
    assert det["noise_sd"] == pytest.approx(2 * det["clip_norm"] / mu_r, rel=1e-9)
    given = dp_gradient_descent(X, y, epsilon=1.0, delta=DELTA, n_iter=50, clip_norm=0.3, rng=0)
    assert given.privacy.details["schedule_rule"] == {"n_iter": "given", "clip_norm": "given"}
    assert (given.privacy.details["n_iter"], given.privacy.details["clip_norm"]) == (50, 0.3)


def test_auto_clip_under_add_remove_reads_the_released_count_not_n():
    """n is private under add/remove: the clip is computed from the noisy count released first
    (post-processing), never from the true n."""
    X, y = np.zeros((500, 2)), np.zeros(500)
    seen = set()
    for s in range(3):
        res = dp_gradient_descent(X, y, epsilon=0.5, delta=DELTA, neighbouring="add-remove",
                                  rng=s)
        n_noisy = res.extra["n_noisy"]
        clip = res.privacy.details["clip_norm"]
        assert clip == dpgd_schedule(n_noisy, 2, epsilon=0.5, delta=DELTA)[1] < 1.0
        assert clip != dpgd_schedule(500, 2, epsilon=0.5, delta=DELTA)[1]
        seen.add(clip)
    assert len(seen) == 3  # it moves with the release


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize("accounting", ["gdp", "zcdp"])
def test_charge_does_not_depend_on_the_step_count(neighbouring, accounting):
    """The ledger is charged the whole (ε, δ) budget for any T, so a caller that cannot know
    the fit's T (the method object's budget, before n is seen) charges what the fit charges;
    the rounds compose to at most it."""
    from dpreg.privacy import check_neighbouring
    from dpreg.privacy.budgets import compose

    rel = check_neighbouring(neighbouring)
    charges = set()
    for T in (1, 7, 100, 1600, 12345):
        n_rel, per_round, charged = dpgd_budget(0.7, 1e-6, T, accounting, rel)
        assert compose([per_round] * n_rel) <= charged
        charges.add(charged)
    assert len(charges) == 1
