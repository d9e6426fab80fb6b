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
                                  clip_norm="public", neighbouring="add-remove",
                                  rng=s).extra["n_noisy"]
              for s in range(1500)]
    mu_r = gdp_mu(EPS, DELTA) / math.sqrt(1 + 1)
    z = (np.array(counts) - 1000) * mu_r
    assert ks_pvalue(z, stats.norm.cdf) > ALPHA
    assert ks_pvalue(z, stats.norm(scale=1.3).cdf) < ALPHA
    assert ks_pvalue(z * math.sqrt(2), stats.norm.cdf) < ALPHA  # calibrated as one of T = 1


@pytest.mark.parametrize("accounting,kind", [("gdp", GDP), ("zcdp", ZCDP)])
@pytest.mark.parametrize("neighbouring,releases", [("replace-one", T), ("add-remove", T + 1)])
@pytest.mark.parametrize("clip,spread", [("public", 0), ("auto", 2)])
def test_accounting(accounting, kind, neighbouring, releases, clip, spread):
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(50, 2))
    ledger = Ledger(ApproxDP(EPS, DELTA), neighbouring=neighbouring)
    res = dp_gradient_descent(X, X[:, 0], epsilon=EPS, delta=DELTA, n_iter=T,
                              accounting=accounting, neighbouring=neighbouring, ledger=ledger,
                              clip_norm=clip, rng=0)
    assert isinstance(res.privacy.budget, kind)
    assert res.privacy.details["n_releases"] == releases + spread
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
    res = dp_gradient_descent(X, y, epsilon=1.0, delta=DELTA, clip_norm="public", rng=0)
    det = res.privacy.details
    assert (det["n_iter"], det["clip_norm"]) == dpgd_schedule(300, 3, epsilon=1.0, delta=DELTA)
    assert det["schedule_rule"] == {"n_iter": "auto", "clip_norm": "public"}
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
                                  clip_norm="public", rng=s)
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


# ---------------------------------------------------------------------------------------------
# clip_norm="auto": the released spread of the label (issue 30, second pass; docs/accuracy.md
# §12.6)
# ---------------------------------------------------------------------------------------------

def _spread_sums(y, c):
    yc = np.clip(y, -1.0, 1.0)
    return float(yc.sum()), float(np.abs(yc - c).sum())


@pytest.mark.parametrize("relation", ["replace-one", "add-remove"])
def test_spread_sensitivities_match_brute_force_over_neighbours(relation):
    """The largest change of Σ clip(y) and of Σ|clip(y) − c| (c fixed in [−1, 1]) over
    neighbouring label vectors -- one label replaced by any value (replace-one) or one added
    or removed (add/remove), labels and values on a grid that reaches past ±1 -- equals
    :func:`dpgd_spread_sensitivities` (attained, not only bounded)."""
    from dpreg.multivariate.dpgd import dpgd_spread_sensitivities

    grid = np.linspace(-1.5, 1.5, 13)
    rng = np.random.default_rng(0)
    worst = np.zeros(2)
    for _ in range(40):
        y = rng.choice(grid, size=4)
        for c in np.linspace(-1.0, 1.0, 9):
            base = np.array(_spread_sums(y, c))
            if relation == "replace-one":
                nbrs = [np.concatenate([[v], y[1:]]) for v in grid]
            else:
                nbrs = [np.concatenate([y, [v]]) for v in grid] + [y[1:]]
            for yn in nbrs:
                worst = np.maximum(worst, np.abs(np.array(_spread_sums(yn, c)) - base))
    assert tuple(worst) == pytest.approx(dpgd_spread_sensitivities(relation), abs=1e-12)


@pytest.mark.parametrize("budget", [GDP.from_approx(1.0, 1e-6), ZCDP(0.3)])
@pytest.mark.parametrize("rounds", [1, 1600, 1601])
def test_spread_budget_parts_compose_to_at_most_the_whole(budget, rounds):
    from dpreg.multivariate.dpgd import DPGD_SPREAD_SHARE, dpgd_spread_budget
    from dpreg.privacy.budgets import compose

    each, rnd = dpgd_spread_budget(budget, rounds)
    assert compose([each, each] + [rnd] * rounds) <= budget
    size = (lambda b: b.mu ** 2) if isinstance(budget, GDP) else (lambda b: b.rho)
    assert 2 * size(each) == pytest.approx(DPGD_SPREAD_SHARE * size(budget), rel=1e-9)
    assert rounds * size(rnd) == pytest.approx((1 - DPGD_SPREAD_SHARE) * size(budget),
                                               rel=1e-9)


def test_spread_clip_and_sigma_are_the_documented_formulas():
    from dpreg.multivariate.dpgd import (
        DPGD_SPREAD_MAX_CLIP,
        DPGD_SPREAD_Z,
        dpgd_spread_clip,
        dpgd_spread_sigma,
    )

    assert dpgd_spread_sigma(0.3, 0.01) == pytest.approx(
        math.sqrt(math.pi / 2) * (0.3 - DPGD_SPREAD_Z * 0.01))
    assert dpgd_spread_clip(0.05, 0.1) == 0.05          # below σ₀: the public clip
    assert dpgd_spread_clip(0.05, -3.0) == 0.05         # a negative lower bound: the same
    assert dpgd_spread_clip(0.05, 0.4) == pytest.approx(0.4)   # (0.4/0.2)³ = 8
    assert dpgd_spread_clip(0.5, 0.4) == DPGD_SPREAD_MAX_CLIP  # capped
    assert dpgd_spread_clip(3.0, 0.1) == 1.0            # the public cap still holds at σ ≤ σ₀
    assert dpgd_spread_clip(0.05, float("nan")) == 0.05
    from dpreg.multivariate.dpgd import DPGD_SPREAD_SHARE, dpgd_spread_base_clip

    # the public rule at the rounds' μ: 1.5·√(1 − share)·μ·n/(p·T), capped at 1
    assert dpgd_spread_base_clip(0.5, 1000, 4, 1600) == pytest.approx(
        DPGD_TRAVEL * math.sqrt(1 - DPGD_SPREAD_SHARE) * 0.5 * 1000 / (4 * 1600), rel=1e-12)
    assert dpgd_spread_base_clip(math.inf, 10, 4, 1600) == 1.0


@pytest.mark.parametrize("scale,rejects", [(1.0, False), (0.5, True)])
def test_spread_releases_carry_their_calibrated_noise(scale, rejects):
    """Labels all 0: the released mean is N(0, sd₁²)/n and, given it, the released mean absolute
    deviation is |ȳ̃| + N(0, sd₂²)/n with sd = Δ/μ_each, μ_each² = share/2·μ².  The KS test
    accepts the calibrated sds and rejects half of them (a release with half the noise)."""
    from dpreg.multivariate.dpgd import DPGD_SPREAD_SHARE

    n = 200
    X, y = np.zeros((n, 2)), np.zeros(n)
    mu_each = gdp_mu(EPS, DELTA) * math.sqrt(DPGD_SPREAD_SHARE / 2)
    z1, z2 = [], []
    for s in range(600):
        sp = dp_gradient_descent(X, y, epsilon=EPS, delta=DELTA, n_iter=1,
                                 rng=s).privacy.details["spread"]
        z1.append(sp["y_mean"] * n * mu_each / 2.0)
        z2.append((sp["abs_dev"] - abs(sp["y_mean"])) * n * mu_each / 2.0)
    for z in (np.array(z1), np.array(z2)):
        p = ks_pvalue(z / scale, stats.norm.cdf)
        assert (p < ALPHA) is rejects


def test_spread_clip_grows_for_a_spread_label_only():
    """A label spread over its whole range (±1, σ = 1) gets the largest clip; a concentrated one
    (σ = 0.05) keeps the public rule at the rounds' share of μ; the clip is the documented
    function of the released values."""
    from dpreg.multivariate.dpgd import (
        DPGD_SPREAD_MAX_CLIP,
        DPGD_SPREAD_SHARE,
        dpgd_public_clip,
        dpgd_spread_clip,
    )

    g = np.random.default_rng(1)
    n = 5000
    X = g.uniform(-0.5, 0.5, size=(n, 3))
    wide = np.where(g.random(n) < 0.5, -1.0, 1.0)
    narrow = 0.05 * g.standard_normal(n)
    base = dpgd_public_clip(gdp_mu(1.0, DELTA) * math.sqrt(1 - DPGD_SPREAD_SHARE), n, 3, 1600)
    for y, expect in ((wide, DPGD_SPREAD_MAX_CLIP), (narrow, base)):
        det = dp_gradient_descent(X, y, epsilon=1.0, delta=DELTA, rng=2).privacy.details
        sp = det["spread"]
        assert sp["base_clip"] == pytest.approx(base, rel=1e-12)
        assert det["clip_norm"] == dpgd_spread_clip(sp["base_clip"], sp["sigma_hat"])
        assert det["clip_norm"] == pytest.approx(expect, rel=1e-12)
        assert det["schedule_rule"]["clip_norm"] == "auto"


def test_spread_clip_at_infinite_epsilon_is_the_noiseless_rule():
    """ε = ∞: the spread releases are exact, so the fit is clipped GD at
    min(2, 1·max(1, σ/σ₀)³) with σ = √(π/2)·mean|y − ȳ| -- its non-private counterpart."""
    from dpreg.multivariate.dpgd import dpgd_spread_clip

    g = np.random.default_rng(3)
    X = g.uniform(-0.5, 0.5, size=(300, 2))
    y = np.clip(0.1 * X[:, 0] + 0.23 * g.standard_normal(300), -1, 1)
    sigma = math.sqrt(math.pi / 2) * float(np.abs(y - y.mean()).mean())
    C = dpgd_spread_clip(1.0, sigma)
    assert 1.0 < C < 2.0
    with pytest.warns(UserWarning):
        auto = dp_gradient_descent(X, y, epsilon=math.inf, delta=DELTA, n_iter=50, rng=0)
    with pytest.warns(UserWarning):
        given = dp_gradient_descent(X, y, epsilon=math.inf, delta=DELTA, n_iter=50,
                                    clip_norm=C, rng=0)
    assert auto.privacy.details["clip_norm"] == pytest.approx(C, rel=1e-12)
    np.testing.assert_allclose(auto.params.to_numpy(), given.params.to_numpy(), rtol=1e-12)


def _clipped_gd_from(X, y, theta0, clip, T, eta=0.5):
    """Noiseless clipped GD written out independently of the library: per-example gradients
    2·r_i·x_i clipped to norm ``clip``, θ ← θ − η·(sum)/n from ``theta0``, the mean of the last
    ⌈T/2⌉ iterates."""
    n = len(y)
    theta, tail = np.array(theta0, dtype=float), []
    for t in range(T):
        grads = 2.0 * (X @ theta - y)[:, None] * X
        norms = np.linalg.norm(grads, axis=1)
        grads *= np.minimum(1.0, clip / np.maximum(norms, 1e-300))[:, None]
        theta = theta - eta * grads.sum(axis=0) / n
        if t >= T // 2:
            tail.append(theta)
    return np.mean(tail, axis=0)


def test_warm_start_is_the_released_mean_intercept():
    """With a declared intercept column (constant c) and ``clip_norm="auto"`` the descent starts
    at zero slopes and θ₀ = ȳ̃/c, ȳ̃ the first spread release (post-processing); without a
    declared column, or with another clip mode (no ȳ̃ released), it starts at zero."""
    from dpreg.multivariate.dpgd import dpgd_warm_start, plan_dp_gradient_descent

    np.testing.assert_array_equal(dpgd_warm_start(0.3, 4, 0.5), [0.6, 0.0, 0.0, 0.0])
    g = np.random.default_rng(5)
    c = 0.5
    X = np.column_stack([np.full(400, c), g.uniform(-0.5, 0.5, (400, 2))])
    y = np.clip(0.8 + 0.1 * X[:, 1] + 0.05 * g.standard_normal(400), -1, 1)
    sp = dp_gradient_descent(X, y, epsilon=1.0, delta=DELTA, intercept=c, rng=3
                             ).privacy.details["spread"]
    assert sp["warm_start_intercept"] == sp["y_mean"] / c
    assert "warm_start_intercept" not in dp_gradient_descent(
        X, y, epsilon=1.0, delta=DELTA, rng=3).privacy.details["spread"]
    for clip in ("public", 0.5):
        plan = plan_dp_gradient_descent(n=400, d=3, epsilon=1.0, delta=DELTA, clip_norm=clip,
                                        intercept=c)
        assert plan.options["warm_start"] is None
    assert plan_dp_gradient_descent(n=400, d=3, epsilon=1.0, delta=DELTA,
                                    intercept=c).options["warm_start"] == c
    with pytest.raises(InvalidInputError, match="intercept"):
        plan_dp_gradient_descent(n=400, d=3, epsilon=1.0, delta=DELTA, intercept=-1.0)


def test_warm_start_at_infinite_epsilon_is_clipped_gd_from_the_mean():
    """ε = ∞: ȳ̃ is the exact mean, so the fit is noiseless clipped GD started at (ȳ/c, 0, …),
    its non-private counterpart -- checked against an independent loop, as is the zero start
    without a declared intercept (the two differ: the check can fail)."""
    from dpreg.multivariate.dpgd import dpgd_spread_clip

    g = np.random.default_rng(8)
    n, c, T = 500, 1 / math.sqrt(3), 60
    X = np.column_stack([np.full(n, c), g.uniform(-0.5, 0.5, (n, 2)) * c])
    y = -0.85 + 0.3 * X[:, 1] + 0.02 * g.standard_normal(n)
    sigma = math.sqrt(math.pi / 2) * float(np.abs(y - y.mean()).mean())
    C = dpgd_spread_clip(1.0, sigma)
    with pytest.warns(UserWarning):
        warm = dp_gradient_descent(X, y, epsilon=math.inf, delta=DELTA, n_iter=T,
                                   intercept=c, rng=0).params.to_numpy()
    with pytest.warns(UserWarning):
        cold = dp_gradient_descent(X, y, epsilon=math.inf, delta=DELTA, n_iter=T,
                                   rng=0).params.to_numpy()
    np.testing.assert_allclose(warm, _clipped_gd_from(X, y, [y.mean() / c, 0, 0], C, T),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cold, _clipped_gd_from(X, y, [0, 0, 0], C, T),
                               rtol=1e-10, atol=1e-12)
    assert np.abs(warm - cold).max() > 1e-3


def test_clip_norm_strings_are_checked_before_any_noise():
    X, y = np.zeros((20, 2)), np.zeros(20)
    with pytest.raises(InvalidInputError, match="'auto', 'public' or a positive number"):
        dp_gradient_descent(X, y, epsilon=1.0, delta=DELTA, clip_norm="spread", rng=0)


def _spread_flip_pair(n: int = 2000):
    """Labels ±0.22 with one record at the bound (d) or at 0 (d′): the lowered spread σ̂ sits
    just above σ₀, where the clip grows without reaching its cap (T = 3: the public clip is 1),
    so an exact spread statistic would give d and d′ different clips -- visible in the
    released clip and the coefficients."""
    g = np.random.default_rng(1)
    X = g.uniform(-1, 1, size=(n, 2))
    y = 0.22 * np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    y[0] = 1.0
    y2 = y.copy()
    y2[0] = 0.0
    return {"X": X, "y": y}, {"X": X, "y": y2}


def _spread_audit(samples: int = 1500):
    from dpreg.audit import audit, loop_sampler

    def release(data, rng):
        res = dp_gradient_descent(data["X"], data["y"], epsilon=EPS, delta=DELTA, n_iter=3,
                                  rng=rng)
        return [*res.params.to_numpy()[:2], res.privacy.details["clip_norm"]]

    d, dp = _spread_flip_pair()
    return audit(lambda data, n, rng: loop_sampler(release, data, n, rng), d, dp, claim=EPS,
                 delta=DELTA, samples=samples, rng=6, method="dp-gd-spread-clip",
                 pair="spread-flip", names=["b0", "b1", "clip"])


@pytest.mark.slow
def test_spread_clip_passes_its_audit():
    res = _spread_audit()
    assert res.passed, res.as_dict()


@pytest.mark.slow
def test_a_noiseless_spread_statistic_is_caught(monkeypatch):
    """Planted bug: the mean absolute deviation released without noise (still "charged")."""
    import dpreg.multivariate.dpgd as mod

    real = mod.gaussian

    def leaky(value, *, sensitivity, budget, rng=None, **kw):
        if sensitivity == 2.0 and budget == leaky.spread_part:
            return value
        return real(value, sensitivity=sensitivity, budget=budget, rng=rng, **kw)

    leaky.spread_part = mod.plan_dp_gradient_descent(
        n=2000, d=2, epsilon=EPS, delta=DELTA, n_iter=3).parts["spread"]
    monkeypatch.setattr(mod, "gaussian", leaky)
    res = _spread_audit()
    assert not res.passed
    assert res.epsilon_lcb > EPS
