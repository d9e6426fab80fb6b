"""AdaSSP with Wang's constants: the supported ε range, the noise scales, the ridge rule,
clipping, and the ε → ∞ limit."""

import math

import numpy as np
import pytest

from dpreg import ZCDP, ApproxDP, InvalidInputError, Ledger
from dpreg.mechanisms.gaussian import gaussian_sigma
from dpreg.multivariate import ssp as ad
from dpreg.privacy.budgets import zcdp_to_approx_bun_steinke


# ------------------------------------------------------------------------ guarantee
def test_reference_values_of_the_guarantee():
    # the Bun–Steinke conversion gives: 0.78 (ε = 1), 32.7 (ε = 30)
    budget, implied = ad.adassp_guarantee(1.0, 1e-6)
    assert budget.rho == pytest.approx(1.0 / (6 * math.log(6e6)))
    assert zcdp_to_approx_bun_steinke(budget.rho, 1e-6) == pytest.approx(0.7789, abs=1e-3)
    assert implied == pytest.approx(0.7301, abs=1e-3)  # the tighter of the two conversions
    assert ad.adassp_guarantee(10.0, 1e-6)[1] == pytest.approx(8.75, abs=0.01)
    assert ad.adassp_guarantee(30.0, 1e-6)[1] == pytest.approx(32.66, abs=0.01)


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-6, 1e-9])
def test_guarantee_holds_exactly_on_the_supported_range(delta):
    eps_max = ad.adassp_max_epsilon(delta)
    for eps in np.concatenate([np.geomspace(1e-3, eps_max, 60), [eps_max]]):
        assert ad.adassp_guarantee(float(eps), delta)[1] <= eps
    above = math.nextafter(eps_max * (1 + 1e-9), math.inf)
    assert ad.adassp_guarantee(above, delta)[1] > above
    for eps in np.geomspace(eps_max * 1.001, eps_max * 100, 20):
        assert ad.adassp_guarantee(float(eps), delta)[1] > eps


def test_supported_range_values():
    assert ad.adassp_max_epsilon(1e-6) == pytest.approx(21.7066, abs=1e-3)
    assert 30.0 > ad.adassp_max_epsilon(1e-6)


def test_epsilon_above_range_is_refused_before_charging():
    X, y = np.zeros((5, 2)), np.zeros(5)
    ledger = Ledger(ApproxDP(100, 0.1))
    with pytest.raises(InvalidInputError, match=r"epsilon must be <= 21\.7"):
        ad.adassp(X, y, x_norm_bound=1, y_bound=1, epsilon=30.0, delta=1e-6, ledger=ledger)
    assert ledger.events() == []


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
                    neighbouring=neighbouring, rng=0)
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
    res = ad.adassp(X, y, x_norm_bound=B, y_bound=C, epsilon=eps, delta=delta, rng=0)
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
                        rng=seed)
        assert res.extra["ridge_lambda"] >= 0.0


# ------------------------------------------------------------------------ clipping and limit
@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
def test_infinite_epsilon_is_ols_on_clipped_data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    y = X @ [1.0, -1.0, 2.0] + rng.normal(0, 0.5, 300)
    res = ad.adassp(X, y, x_norm_bound=1.5, y_bound=2.0, epsilon=math.inf, delta=1e-6)
    norms = np.linalg.norm(X, axis=1)
    Xc = X * np.minimum(1.0, 1.5 / norms)[:, None]
    yc = np.clip(y, -2, 2)
    np.testing.assert_allclose(res.params.to_numpy(), np.linalg.lstsq(Xc, yc, rcond=None)[0],
                               rtol=1e-9)
    assert res.extra["ridge_lambda"] == 0.0


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
])
def test_bad_parameters_cost_nothing(kw, match):
    X, y = np.ones((10, 2)), np.ones(10)
    ledger = Ledger(ApproxDP(10, 0.1))
    args = dict(x_norm_bound=1.0, y_bound=1.0, epsilon=1.0, delta=1e-6, ledger=ledger)
    args.update(kw)
    with pytest.raises(InvalidInputError, match=match):
        ad.adassp(X, y, **args)
    assert ledger.events() == []


def test_ledger_accepts_the_zcdp_charge_within_epsilon():
    X = np.random.default_rng(5).uniform(-1, 1, size=(100, 2))
    ledger = Ledger(ApproxDP(1.0, 1e-6), neighbouring="add-remove")  # AdaSSP's default
    ad.adassp(X, X[:, 0], x_norm_bound=2, y_bound=1, epsilon=1.0, delta=1e-6, ledger=ledger,
              rng=0)
    assert ledger.spent().epsilon == pytest.approx(ad.adassp_guarantee(1.0, 1e-6)[1])
    assert ledger.spent().epsilon <= 1.0
