"""BoostedAdaSSP: the per-round noise is the calibrated one (and the 2024 reference-code bug is
detected), GDP composition, splits, λ rules, schedules, ε → ∞ limit."""

import math

import numpy as np
import pytest
from scipy import stats

from _stats import ALPHA, ks_pvalue
from dpreg import GDP, ApproxDP, InvalidInputError, Ledger
from dpreg.multivariate import boosted as bst
from dpreg.privacy.budgets import gdp_epsilon, gdp_mu

EPS, DELTA, T, D = 1.0, 1e-6, 100, 5


def zero_design_releases(split="equal", runs=40, neighbouring="add-remove", tau=1.0):
    """X = 0 makes every Xᵀg exactly 0, so the released values are pure noise."""
    X = np.zeros((30, D))
    y = np.linspace(-1, 1, 30)
    out = []
    for seed in range(runs):
        res = bst.boosted_adassp(X, y, epsilon=EPS, delta=DELTA, n_rounds=T, split=split,
                                 tau=tau, neighbouring=neighbouring, rng=seed)
        out.append(res.extra["xtg_releases"].ravel())
    return np.concatenate(out), res


def expected_round_sd(split, tau=1.0, neighbouring="add-remove"):
    mu = gdp_mu(EPS, DELTA)
    a, b, c = (1.0, 1.0, 1.0) if split == "equal" else (1.0, math.sqrt(T), 1.0)
    mu2 = mu * b / math.sqrt(a * a + b * b + c * c)
    sens = tau * (1.0 if neighbouring == "add-remove" else 2.0)
    return sens * math.sqrt(T) / mu2


@pytest.mark.parametrize("split", ["equal", "author"])
def test_round_noise_is_calibrated(split):
    samples, res = zero_design_releases(split)
    sd = expected_round_sd(split)
    assert res.privacy.details["noise_sd"]["Xtg"] == pytest.approx(sd, rel=1e-9)
    assert ks_pvalue(samples, stats.norm(scale=sd).cdf) > ALPHA
    for wrong in (0.7, 1.3):  # power check
        assert ks_pvalue(samples, stats.norm(scale=sd * wrong).cdf) < ALPHA
    if split == "author":  # the spec's reference value: sd = √(T+2)/μ ≈ 42.7
        assert sd == pytest.approx(math.sqrt(T + 2) / gdp_mu(EPS, DELTA), rel=1e-9)
        assert sd == pytest.approx(42.7, abs=0.1)


def test_replace_one_doubles_the_round_noise():
    samples, _ = zero_design_releases("equal", runs=20, neighbouring="replace-one", tau=0.5)
    sd = expected_round_sd("equal", tau=0.5, neighbouring="replace-one")
    assert ks_pvalue(samples, stats.norm(scale=sd).cdf) > ALPHA
    assert ks_pvalue(samples, stats.norm(scale=sd / 2).cdf) < ALPHA


def test_reference_code_bug_mu_as_noise_multiplier_is_detected(monkeypatch):
    """The 2024 author code used sd = B·τ·μ (μ the total GDP parameter) instead of Δ/μ_round.
    Re-running the same pipeline with that calibration fails the noise test: its sd is ≈180×
    too small (0.237 vs 42.7 with the author split)."""
    mu_total = gdp_mu(EPS, DELTA)

    def buggy_gaussian_calls(count, *, sensitivity, budget, rng):
        # the rounds' Xᵀg noise (drawn through the batched entry point) with the bug
        return lambda value: (np.asarray(value, dtype=float)
                              + rng.normal(0.0, sensitivity * mu_total, size=np.shape(value)))

    monkeypatch.setattr(bst, "gaussian_calls", buggy_gaussian_calls)
    samples, _ = zero_design_releases("author", runs=10)
    sd = expected_round_sd("author")
    assert sd / mu_total == pytest.approx(180, rel=0.01)
    assert ks_pvalue(samples, stats.norm(scale=sd).cdf) < ALPHA


def test_composition_is_mu_and_converts_to_epsilon():
    X = np.random.default_rng(0).uniform(-0.3, 0.3, size=(200, 3))
    y = X.sum(axis=1)
    for split in ("equal", "author", (1, 2, 3)):
        for T_ in (1, 7, 100):
            res = bst.boosted_adassp(X, y, epsilon=EPS, delta=DELTA, n_rounds=T_, split=split,
                                     rng=0)
            mu = res.privacy.budget
            assert isinstance(mu, GDP)
            assert mu.mu <= gdp_mu(EPS, DELTA)
            assert mu.mu == pytest.approx(gdp_mu(EPS, DELTA), rel=1e-12)
            assert gdp_epsilon(mu.mu, DELTA) <= EPS * (1 + 1e-12)
            parts = res.privacy.details["mu_parts"]
            a, b, c = bst.boosted_split(split, T_)
            assert parts["XtX"] / parts["lambda_min"] == pytest.approx(a / c)
            assert parts["Xtg_total"] / parts["XtX"] == pytest.approx(b / a)
            assert parts["Xtg_round"] == pytest.approx(parts["Xtg_total"] / math.sqrt(T_))


def test_ledger_charged_gdp_before_noise():
    X = np.random.default_rng(1).uniform(-0.3, 0.3, size=(200, 3))
    y = X.sum(axis=1)
    ledger = Ledger(ApproxDP(1.0, 1e-6), neighbouring="add-remove")  # the default relation
    bst.boosted_adassp(X, y, epsilon=1.0, delta=1e-6, ledger=ledger, rng=0)
    assert len(ledger.events()) == 1
    assert ledger.spent().epsilon <= 1.0 * (1 + 1e-9)


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("rule", ["wang", "literal"])
def test_infinite_epsilon_converges_to_ols_on_row_clipped_data(rule):
    rng = np.random.default_rng(2)
    X = np.column_stack([np.full(300, 0.5), rng.uniform(-0.5, 0.5, size=(300, 2))])
    X[:5] *= 3  # a few rows with ‖x‖ > 1 are clipped
    y = X @ [1.0, 2.0, -1.0] + rng.normal(0, 0.1, 300)
    res = bst.boosted_adassp(X, y, epsilon=math.inf, delta=DELTA, tau=100.0, lambda_rule=rule,
                             n_rounds=200, rng=0)
    Xc = X * np.minimum(1, 1 / np.linalg.norm(X, axis=1))[:, None]
    ref = np.linalg.lstsq(Xc, y, rcond=None)[0]
    np.testing.assert_allclose(res.params.to_numpy(), ref, rtol=1e-7, atol=1e-8)
    if rule == "wang":
        assert res.extra["ridge_lambda"] == 0.0


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
def test_noiseless_small_tau_is_robust_to_outliers():
    """Without noise and with a small τ the fixed point is a Huber-type fit that ignores a
    gross outlier (Tang et al. Thm A.5), unlike OLS."""
    rng = np.random.default_rng(3)
    n = 400
    X = np.column_stack([np.full(n, 0.5), rng.uniform(-0.5, 0.5, n)])
    y = X @ [2.0, 1.0] + rng.normal(0, 0.05, n)
    y[0] = 500.0
    res = bst.boosted_adassp(X, y, epsilon=math.inf, delta=DELTA, tau=0.2, n_rounds=400, rng=0)
    np.testing.assert_allclose(res.params.to_numpy(), [2.0, 1.0], atol=0.05)
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    assert abs(ols[0] - 2.0) > 1.0


def test_lambda_rules_and_schedules_run():
    rng = np.random.default_rng(4)
    X = rng.uniform(-0.5, 0.5, size=(500, 3))
    y = X @ [1.0, -1.0, 0.5]
    for rule in ("wang", "literal"):
        for sched in ("constant", "1/t", "1/sqrt(t)"):
            res = bst.boosted_adassp(X, y, epsilon=2.0, delta=DELTA, lambda_rule=rule,
                                     schedule=sched, rng=1)
            assert np.all(np.isfinite(res.params.to_numpy()))
            if rule == "wang":
                assert res.extra["ridge_lambda"] >= 0


def test_schedule_scales_updates():
    """With one round the update is η₁·θ₁ for every schedule (η₁ = learning_rate)."""
    X = np.random.default_rng(5).uniform(-0.5, 0.5, size=(200, 2))
    y = X @ [1.0, 2.0]
    base = bst.boosted_adassp(X, y, epsilon=1.0, delta=DELTA, n_rounds=1, rng=9)
    half = bst.boosted_adassp(X, y, epsilon=1.0, delta=DELTA, n_rounds=1, learning_rate=0.5,
                              rng=9)
    np.testing.assert_allclose(half.params.to_numpy(), 0.5 * base.params.to_numpy())


@pytest.mark.parametrize("kw,match", [
    ({"delta": 0.0}, "delta"), ({"n_rounds": 0}, "n_rounds"), ({"split": "half"}, "split"),
    ({"split": (1, 1)}, "split"), ({"split": (1, -1, 1)}, "split"), ({"tau": -1}, "tau"),
    ({"x_norm_bound": 0}, "x_norm_bound"), ({"learning_rate": 0}, "learning_rate"),
    ({"schedule": "cosine"}, "schedule"), ({"lambda_rule": "huge"}, "lambda_rule"),
    ({"neighbouring": "swap"}, "neighbouring"), ({"failure_prob": 1.5}, "failure_prob"),
])
def test_bad_parameters_cost_nothing(kw, match):
    X = np.zeros((10, 2))
    y = np.zeros(10)
    ledger = Ledger(ApproxDP(10, 0.1))
    args = dict(epsilon=1.0, delta=1e-6, ledger=ledger, rng=0)
    args.update(kw)
    with pytest.raises(InvalidInputError, match=match):
        bst.boosted_adassp(X, y, **args)
    assert ledger.events() == []


def _boosted_fit(seed):
    g = np.random.default_rng(3)
    X = g.uniform(-0.3, 0.3, size=(400, 3))
    y = X @ np.array([1.0, -0.5, 0.2]) + g.normal(0, 0.05, 400)
    return bst.boosted_adassp(X, y, epsilon=EPS, delta=DELTA, n_rounds=25, rng=seed)


def test_round_noise_is_one_batched_draw_and_the_seeded_stream_is_unchanged(monkeypatch):
    """The T rounds' Xᵀg noise is drawn by one batched sampler call (issue 19: one secure draw
    per round dominated small fits): ``gaussian`` is called once (λ_min) rather than T + 1
    times, and the seeded result equals the one-call-per-round stream bit for bit."""
    batched = _boosted_fit(7)
    calls = []
    real = bst.gaussian

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(bst, "gaussian", counting)
    _boosted_fit(7)
    assert len(calls) == 1

    def per_call(count, *, sensitivity, budget, rng):  # the former loop: one call per round
        return lambda value: real(value, sensitivity=sensitivity, budget=budget, rng=rng)

    monkeypatch.setattr(bst, "gaussian_calls", per_call)
    reference = _boosted_fit(7)
    np.testing.assert_array_equal(batched.coef_ if hasattr(batched, "coef_") else batched.params,
                                  reference.coef_ if hasattr(reference, "coef_")
                                  else reference.params)
    np.testing.assert_array_equal(batched.extra["xtg_releases"], reference.extra["xtg_releases"])
