"""AdaSSP: the exact μ-GDP calibration for any ε (default) and Wang's constants
(``calibration="wang"``: the supported ε range, the noise scales), Wang's ridge rule
(``lambda_rule="wang"``; the default eigenvalue floor has its own file,
test_mv_ssp_eigen_floor.py), clipping, and the ε → ∞ limit."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpreg import GDP, ZCDP, ApproxDP, InvalidInputError, Ledger
from dpreg.mechanisms.gaussian import gaussian_sigma
from dpreg.multivariate import ssp as ad
from dpreg.privacy import EPSILON_MAX
from dpreg.privacy.budgets import compose, gdp_delta, gdp_mu, zcdp_to_approx_bun_steinke

WANG = {"calibration": "wang"}
#: Wang's algorithm: his ridge from a released λ_min (the default is the eigenvalue floor)
WANG_RULE = {"lambda_rule": "wang"}


# ------------------------------------------------------------------------ guarantee
def test_reference_values_of_the_guarantee():
    # the Bun–Steinke conversion gives: 0.78 (ε = 1), 32.7 (ε = 30)
    budget, implied = ad.adassp_guarantee(1.0, 1e-6, **WANG)
    assert isinstance(budget, ZCDP)
    assert budget.rho == pytest.approx(1.0 / (6 * math.log(6e6)))
    assert zcdp_to_approx_bun_steinke(budget.rho, 1e-6) == pytest.approx(0.7789, abs=1e-3)
    assert implied == pytest.approx(0.7301, abs=1e-3)  # the tighter of the two conversions
    assert ad.adassp_guarantee(10.0, 1e-6, **WANG)[1] == pytest.approx(8.75, abs=0.01)
    assert ad.adassp_guarantee(30.0, 1e-6, **WANG)[1] == pytest.approx(32.66, abs=0.01)


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-6, 1e-9])
def test_guarantee_holds_exactly_on_the_supported_range(delta):
    eps_max = ad.adassp_max_epsilon(delta)
    for eps in np.concatenate([np.geomspace(1e-3, eps_max, 60), [eps_max]]):
        assert ad.adassp_guarantee(float(eps), delta, **WANG)[1] <= eps
    above = math.nextafter(eps_max * (1 + 1e-9), math.inf)
    assert ad.adassp_guarantee(above, delta, **WANG)[1] > above
    for eps in np.geomspace(eps_max * 1.001, eps_max * 100, 20):
        assert ad.adassp_guarantee(float(eps), delta, **WANG)[1] > eps


def test_supported_range_values():
    assert ad.adassp_max_epsilon(1e-6) == pytest.approx(21.7066, abs=1e-3)
    assert 30.0 > ad.adassp_max_epsilon(1e-6)


def test_epsilon_above_wangs_range_is_refused_before_charging():
    X, y = np.zeros((5, 2)), np.zeros(5)
    ledger = Ledger(ApproxDP(100, 0.1))
    with pytest.raises(InvalidInputError, match=r"epsilon must be <= 21\.7.*calibration='gdp'"):
        ad.adassp(X, y, x_norm_bound=1, y_bound=1, epsilon=30.0, delta=1e-6, ledger=ledger,
                  **WANG)
    assert ledger.events() == []


# ------------------------------------------------------------------------ exact calibration
@pytest.mark.parametrize("eps", [30.0, 50.0, EPSILON_MAX])
@pytest.mark.parametrize("rule,releases", [("eigen-floor", ("XtX", "Xty")),
                                           ("wang", ("XtX", "lambda_min", "Xty"))])
def test_any_epsilon_is_calibrated_exactly(eps, rule, releases):
    """Issue 21: ε = 30 at δ = 1e-6 was refused.  The default calibration runs at any ε: the
    noise scales of the releases (two with the default eigen floor, three with Wang's λ_min)
    compose (Gaussian mechanisms compose exactly in GDP: μ² adds) to at most the μ that is
    exactly (ε, δ)-DP, checked from the released σ's themselves, and an (ε, δ) ledger accepts
    the charge."""
    delta, B, C = 1e-6, 2.0, 3.0
    X = np.random.default_rng(0).uniform(-1, 1, size=(60, 3))
    ledger = Ledger(ApproxDP(eps, delta), neighbouring="add-remove")
    res = ad.adassp(X, X[:, 0], x_norm_bound=B, y_bound=C, epsilon=eps, delta=delta,
                    ledger=ledger, rng=0, lambda_rule=rule)
    sd, sens = res.privacy.details["noise_sd"], res.privacy.details["sensitivity"]
    assert set(sd) == set(sens) == set(releases)
    mu_used = math.sqrt(sum((sens[k] / sd[k]) ** 2 for k in releases))
    mu = gdp_mu(eps, delta)
    assert mu_used <= mu and mu_used == pytest.approx(mu, rel=1e-9)  # exact, not conservative
    assert gdp_delta(eps, mu_used) <= delta
    for k in releases:  # equal shares of μ² (halves, or thirds with λ_min)
        assert sd[k] == pytest.approx(sens[k] * math.sqrt(len(releases)) / mu, rel=1e-9)
    assert isinstance(res.privacy.budget, GDP) and res.privacy.budget.mu <= mu
    assert eps * (1 - 1e-9) <= res.privacy.details["implied_epsilon"] <= eps
    assert res.privacy.details["calibration"] == "gdp"
    assert ledger.spent().epsilon <= eps * (1 + 1e-12)  # accepted; ulps of the conversion


def test_exact_calibration_adds_less_noise_than_wangs_constants():
    """Within Wang's range both hold; the exact one spends all of (ε, δ), Wang's about 3/4
    (under either rule: the same releases compared)."""
    for rule in ("eigen-floor", "wang"):
        for eps in (0.1, 1.0, 10.0, 21.0):
            exact = ad.adassp_budget(eps, 1e-6, lambda_rule=rule)
            wang = ad.adassp_budget(eps, 1e-6, lambda_rule=rule, **WANG)
            assert exact.releases == wang.releases
            assert wang.implied_epsilon < exact.implied_epsilon <= eps
            sd_exact = gaussian_sigma(1.0, dict(zip(exact.releases, exact.parts))["XtX"])
            sd_wang = gaussian_sigma(1.0, dict(zip(wang.releases, wang.parts))["XtX"])
            assert sd_exact < sd_wang


@settings(max_examples=150, deadline=None)
@given(eps=st.floats(1e-3, EPSILON_MAX), delta=st.floats(1e-12, 0.1), inference=st.booleans(),
       calibration=st.sampled_from(["gdp", "wang"]), rule=st.sampled_from(["eigen-floor", "wang"]))
def test_budget_parts_never_exceed_the_whole(eps, delta, inference, calibration, rule):
    plan = ad.adassp_budget(eps, delta, calibration=calibration, inference=inference,
                            lambda_rule=rule)
    weights = ad.adassp_split(inference, rule)
    assert len(plan.parts) == len(weights) == len(plan.releases) == (
        (3 if rule == "wang" else 2) + (1 if inference else 0))
    assert compose(list(plan.parts)) <= plan.whole
    assert plan.charged <= plan.whole
    if calibration == "gdp":
        assert plan.implied_epsilon <= eps
        # the parts are in the split's proportions (μ_i² ∝ w_i)
        mus = np.array([p.mu for p in plan.parts])
        np.testing.assert_allclose(mus**2 / np.sum(mus**2), np.array(weights) / sum(weights),
                                   rtol=1e-9)


def test_adassp_split_is_a_pure_function():
    # the default rule is the eigen floor: XᵀX and Xᵀy (and yᵀy), no λ_min
    assert ad.adassp_split() == (1.0, 1.0) == ad.adassp_split(False, "eigen-floor")
    assert ad.adassp_split(True) == (0.45, 0.45, 0.1)
    assert ad.adassp_budget(1.0, 1e-6).releases == ("XtX", "Xty")
    # Wang's: thirds over λ_min, XᵀX, Xᵀy
    assert ad.adassp_split(False, "wang") == (1.0, 1.0, 1.0)
    assert ad.adassp_split(True, "wang") == ad.INFERENCE_SPLIT == (0.3, 0.3, 0.3, 0.1)


def test_noise_vanishes_continuously_as_epsilon_grows():
    """ε → ∞ along the way: the noise scales decrease strictly up to the cap EPSILON_MAX (the
    largest private ε), where the fit is close to the ε = inf fit (OLS on the clipped data);
    above the cap ε is treated as inf (issue 32): the exact fit itself, NOT PRIVATE."""
    grid = np.geomspace(0.1, EPSILON_MAX, 40)
    sds = [gaussian_sigma(1.0, ad.adassp_budget(float(e), 1e-6).parts[1]) for e in grid]
    assert np.all(np.diff(sds) < 0) and 0 < sds[-1] < 0.01 * sds[0]
    assert gaussian_sigma(1.0, ad.adassp_budget(1e12, 1e-6).parts[1]) == 0.0
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(300, 3)) / 2
    y = X @ [1.0, -1.0, 0.5] + rng.normal(0, 0.1, 300)
    with pytest.warns(Warning):
        exact = ad.adassp(X, y, x_norm_bound=1.0, y_bound=1.0, epsilon=math.inf, delta=1e-6)
    near = ad.adassp(X, y, x_norm_bound=1.0, y_bound=1.0, epsilon=EPSILON_MAX, delta=1e-6,
                     rng=0)
    np.testing.assert_allclose(near.params.to_numpy(), exact.params.to_numpy(), atol=0.05)
    assert near.privacy.private
    with pytest.warns(Warning):
        big = ad.adassp(X, y, x_norm_bound=1.0, y_bound=1.0, epsilon=1e12, delta=1e-6, rng=0)
    np.testing.assert_array_equal(big.params.to_numpy(), exact.params.to_numpy())
    assert not big.privacy.private


# ------------------------------------------------------------------------ noise scales
@pytest.mark.parametrize("neighbouring,f_xx,f_xy", [("add-remove", 1.0, 1.0),
                                                    ("replace-one", math.sqrt(2), 2.0)])
def test_noise_scales_are_wangs_constants(monkeypatch, neighbouring, f_xx, f_xy):
    calls = []
    real = ad.gaussian

    def spy(value, *, sensitivity, budget, rng, **kw):
        calls.append(gaussian_sigma(sensitivity, budget))
        return real(value, sensitivity=sensitivity, budget=budget, rng=rng, **kw)

    monkeypatch.setattr(ad, "gaussian", spy)
    import dpreg.multivariate._common as common

    monkeypatch.setattr(common, "gaussian", spy)
    eps, delta, B, C = 0.8, 1e-5, 2.0, 3.0
    X = np.random.default_rng(0).uniform(-1, 1, size=(50, 3))
    res = ad.adassp(X, X[:, 0], x_norm_bound=B, y_bound=C, epsilon=eps, delta=delta,
                    neighbouring=neighbouring, rng=0, **WANG, **WANG_RULE)
    c = math.sqrt(math.log(6 / delta)) / (eps / 3)
    assert calls == pytest.approx([c * B**2, f_xx * c * B**2, f_xy * c * B * C], rel=1e-12)
    sd = res.privacy.details["noise_sd"]
    assert sd["XtX"] == pytest.approx(f_xx * c * B**2)
    assert sd["lambda_min"] == pytest.approx(c * B**2)
    assert sd["Xty"] == pytest.approx(f_xy * c * B * C)
    assert isinstance(res.privacy.budget, ZCDP)
    assert res.privacy.budget.rho == pytest.approx(eps**2 / (6 * math.log(6 / delta)))


def test_ridge_rule_without_noise(monkeypatch):
    """With the noise switched off the output is ridge regression with Wang's λ."""
    def no_noise(value, **kw):
        return np.asarray(value, dtype=float) if np.ndim(value) else float(value)

    monkeypatch.setattr(ad, "gaussian", no_noise)
    import dpreg.multivariate._common as common

    monkeypatch.setattr(common, "gaussian", no_noise)
    rng = np.random.default_rng(1)
    X = rng.uniform(-0.3, 0.3, size=(200, 3))
    y = X @ [1.0, 2.0, 3.0]
    eps, delta, B, C, rho = 1.0, 1e-6, 1.0, 2.0, 0.05
    res = ad.adassp(X, y, x_norm_bound=B, y_bound=C, epsilon=eps, delta=delta, rng=0, **WANG,
                    **WANG_RULE)
    lam_min = np.linalg.eigvalsh(X.T @ X)[0]
    lam_tilde = max(0.0, lam_min - B**2 * math.log(6 / delta) / (eps / 3))
    d = 3
    lam = max(0.0, math.sqrt(d * math.log(6 / delta) * math.log(2 * d * d / rho)) * B**2
              / (eps / 3) - lam_tilde)
    assert res.extra["ridge_lambda"] == pytest.approx(lam, rel=1e-9)
    ridge = np.linalg.solve(X.T @ X + lam * np.eye(3), X.T @ y)
    np.testing.assert_allclose(res.params.to_numpy(), ridge, rtol=1e-9)


def test_lambda_is_never_negative():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 4))
    for seed in range(30):
        res = ad.adassp(X, X[:, 1], x_norm_bound=1.0, y_bound=1.0, epsilon=20.0, delta=1e-6,
                        rng=seed, **WANG_RULE)
        assert res.extra["ridge_lambda"] >= 0.0


# ------------------------------------------------------------------------ clipping and limit
@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("rule,key", [("wang", "ridge_lambda"), ("eigen-floor", "eigen_floor")])
def test_infinite_epsilon_is_ols_on_clipped_data(rule, key):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    y = X @ [1.0, -1.0, 2.0] + rng.normal(0, 0.5, 300)
    res = ad.adassp(X, y, x_norm_bound=1.5, y_bound=2.0, epsilon=math.inf, delta=1e-6,
                    lambda_rule=rule)
    norms = np.linalg.norm(X, axis=1)
    Xc = X * np.minimum(1.0, 1.5 / norms)[:, None]
    yc = np.clip(y, -2, 2)
    np.testing.assert_allclose(res.params.to_numpy(), np.linalg.lstsq(Xc, yc, rcond=None)[0],
                               rtol=1e-9)
    assert res.extra[key] == 0.0  # no ridge, no floor: the non-private solve


def test_accuracy_improves_with_epsilon():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(20_000, 3)) / math.sqrt(3)
    beta = np.array([0.5, -0.3, 0.2])
    y = X @ beta + rng.normal(0, 0.05, 20_000)
    errs = []
    for eps in (0.1, 1.0, 10.0):
        e = [np.linalg.norm(ad.adassp(X, y, x_norm_bound=1, y_bound=1, epsilon=eps,
                                      delta=1e-6, rng=s).params.to_numpy() - beta)
             for s in range(5)]
        errs.append(np.median(e))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.01


@pytest.mark.parametrize("kw,match", [
    ({"x_norm_bound": 0}, "x_norm_bound"), ({"y_bound": -1}, "y_bound"),
    ({"delta": 0.0}, "delta"), ({"epsilon": 0}, "epsilon"),
    ({"failure_prob": 0}, "failure_prob"), ({"neighbouring": "x"}, "neighbouring"),
    ({"calibration": "zcdp"}, "calibration"),
])
def test_bad_parameters_cost_nothing(kw, match):
    X, y = np.ones((10, 2)), np.ones(10)
    ledger = Ledger(ApproxDP(10, 0.1))
    args = dict(x_norm_bound=1.0, y_bound=1.0, epsilon=1.0, delta=1e-6, ledger=ledger)
    args.update(kw)
    with pytest.raises(InvalidInputError, match=match):
        ad.adassp(X, y, **args)
    assert ledger.events() == []


@pytest.mark.parametrize("calibration", ["gdp", "wang"])
def test_ledger_accepts_the_charge_within_epsilon(calibration):
    X = np.random.default_rng(5).uniform(-1, 1, size=(100, 2))
    ledger = Ledger(ApproxDP(1.0, 1e-6), neighbouring="add-remove")  # AdaSSP's default
    ad.adassp(X, X[:, 0], x_norm_bound=2, y_bound=1, epsilon=1.0, delta=1e-6, ledger=ledger,
              rng=0, calibration=calibration)
    assert ledger.spent().epsilon == pytest.approx(
        ad.adassp_guarantee(1.0, 1e-6, calibration=calibration)[1])
    assert ledger.spent().epsilon <= 1.0
