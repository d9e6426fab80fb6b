"""DPGradDescent: noiseless limit, the printed sign bug, noise calibration, variants."""

import math

import numpy as np
import pytest
from scipy import stats

from _stats import ALPHA, ks_pvalue
from dpreg import ZCDP, ApproxDP, Ledger, PrivacyLeakWarning, PureDP
from dpreg.exceptions import InvalidInputError
from dpreg.privacy import zcdp_epsilon, zcdp_rho_for_approx
from dpreg.simple import gradient_descent, ols
from dpreg.simple._gradient_descent import _average_last_half, _gd_iterates

pytestmark = pytest.mark.filterwarnings("ignore::dpreg.PrivacyLeakWarning")


def make_data(n, rng, sigma=0.1):
    x = rng.uniform(0, 1, n)
    return x, np.clip(0.5 * x + 0.2 + rng.normal(0, sigma, n), 0, 1)


def reference_noiseless_gd(u, v, tau, steps):
    """Straightforward loop version of Alabi et al. Alg. 7 (descent sign), no noise."""
    p25, p75 = 0.5, 0.5
    iterates = [(p25, p75)]
    total = 0.0
    for _ in range(steps):
        g25 = g75 = 0.0
        for ui, vi in zip(u, v):
            pred = 2 * (p25 * (0.75 - ui) + p75 * (ui - 0.25))
            g25 += min(max(2 * (pred - vi) * (0.75 - ui), -tau), tau)
            g75 += min(max(2 * (pred - vi) * (ui - 0.25), -tau), tau)
        total += g25**2 + g75**2
        if total > 0:
            step = 1 / math.sqrt(total)
            p25, p75 = p25 - step * g25, p75 - step * g75
        iterates.append((p25, p75))
    half = steps // 2
    tail = iterates[half + 1:]
    return np.mean([t[0] for t in tail]), np.mean([t[1] for t in tail])


@pytest.mark.parametrize("tau,steps", [(1.0, 80), (0.05, 80), (0.2, 7)])
def test_infinite_epsilon_is_the_noiseless_iteration(tau, steps):
    g = np.random.default_rng(1)
    x, y = make_data(60, g)
    xb, yb = (-1.0, 2.0), (-0.5, 1.5)
    with pytest.warns(PrivacyLeakWarning):
        r = gradient_descent(x, y, epsilon=math.inf, x_bounds=xb, y_bounds=yb, tau=tau,
                             n_iter=steps)
    u = (x - xb[0]) / 3.0
    v = (y - yb[0]) / 2.0
    p25, p75 = reference_noiseless_gd(u, v, tau, steps)
    assert r.extra["normalised_predictions"] == pytest.approx((p25, p75), abs=1e-12)
    slope = 2.0 * (2 * (p75 - p25)) / 3.0
    intercept = yb[0] + 2.0 * (1.5 * p25 - 0.5 * p75) - slope * xb[0]
    assert r.slope == pytest.approx(slope, abs=1e-12)
    assert r.intercept == pytest.approx(intercept, abs=1e-12)


def test_noiseless_descent_converges_to_ols():
    g = np.random.default_rng(2)
    x, y = make_data(200, g)
    for variant, kw in (("pure", {"epsilon": math.inf}), ("zcdp", {"rho": math.inf}),
                        ("approx", {"epsilon": math.inf, "delta": 1e-6})):
        r = gradient_descent(x, y, variant=variant, x_bounds=(0, 1), y_bounds=(0, 1), **kw)
        o = ols(x, y)
        assert r.slope == pytest.approx(o.slope, abs=1e-9)
        assert r.intercept == pytest.approx(o.intercept, abs=1e-9)


def test_printed_sign_of_algorithm_7_ascends():
    """Alg. 7 builds the gradient from (y − ỹ) and then subtracts it: gradient ascent.  With
    the printed sign the squared loss grows without bound; with dpreg's sign it reaches OLS."""
    g = np.random.default_rng(3)
    u, v = make_data(100, g)

    def loss(p):
        pred = 2 * (p[0] * (0.75 - u) + p[1] * (u - 0.25))
        return float(np.mean((pred - v) ** 2))

    def no_noise(gr):
        return gr

    good = _gd_iterates(u, v, tau=1e6, steps=200, noise=no_noise)
    bad = _gd_iterates(u, v, tau=1e6, steps=200, noise=no_noise, sign=-1.0)
    ols_line = ols(u, v)
    best = (ols_line.predict(0.25), ols_line.predict(0.75))
    assert loss(good[-1]) == pytest.approx(loss(best), rel=1e-9)
    assert loss(bad[-1]) > 100 * loss(bad[0])  # ascent: the loss explodes
    assert np.linalg.norm(bad[-1] - best) > 10 * np.linalg.norm(bad[0] - best)
    assert all(loss(bad[t + 1]) > loss(bad[t]) for t in range(20))


def test_average_of_last_half():
    it = np.arange(2 * 8).reshape(8, 2).astype(float)  # T = 7 updates
    np.testing.assert_allclose(_average_last_half(it), it[4:].mean(axis=0))  # updates 4..7
    it = np.arange(2 * 81).reshape(81, 2).astype(float)  # T = 80
    assert _average_last_half(it)[0] == it[41:, 0].mean()  # 40 iterates after update 40


def test_affine_equivariance_of_the_normalisation():
    """Data in original units: rescaling data and bounds together rescales the fitted line."""
    g = np.random.default_rng(4)
    x, y = make_data(80, g)
    base = gradient_descent(x, y, epsilon=3.0, x_bounds=(0, 1), y_bounds=(0, 1), rng=9)
    a, b, c, d = 10.0, 5.0, -3.0, 2.0
    scaled = gradient_descent(a + b * x, c + d * y, epsilon=3.0, x_bounds=(a, a + b),
                              y_bounds=(c, c + d), rng=9)
    assert scaled.slope == pytest.approx(d / b * base.slope, rel=1e-10)
    for xv in (0.1, 0.6):
        assert scaled.predict(a + b * xv) == pytest.approx(c + d * base.predict(xv), rel=1e-10)
    assert list(scaled.predictions) == [a + 0.25 * b, a + 0.75 * b]


class Recorder:
    """Wraps ``laplace_calls``/``gaussian_calls`` (the T mechanism calls of one run, their
    noise drawn together): records each call's parameters and noise."""

    def __init__(self, fn):
        self.fn, self.calls, self.noise = fn, [], []

    def __call__(self, count, **kw):
        inner = self.fn(count, **kw)
        params = {k: v for k, v in kw.items() if k != "rng"}

        def call(value):
            out = inner(value)
            self.calls.append(params)
            self.noise.append(np.asarray(out) - np.asarray(value))
            return out

        return call


@pytest.mark.parametrize("variant", ["pure", "zcdp", "approx"])
def test_noise_calibration(monkeypatch, variant):
    import dpreg.simple._gradient_descent as mod

    g = np.random.default_rng(5)
    x, y = make_data(50, g)
    tau, steps = 0.5, 40
    name = "laplace_calls" if variant == "pure" else "gaussian_calls"
    rec = Recorder(getattr(mod, name))
    monkeypatch.setattr(mod, name, rec)
    kw = {"pure": {"epsilon": 2.0}, "zcdp": {"rho": 0.3},
          "approx": {"epsilon": 1.0, "delta": 1e-5}}[variant]
    for s in range(60):
        gradient_descent(x, y, variant=variant, x_bounds=(0, 1), y_bounds=(0, 1), tau=tau,
                         n_iter=steps, rng=s, **kw)
    assert len(rec.calls) == 60 * steps
    noise = np.concatenate([np.ravel(z) for z in rec.noise])  # (1, 2) per call: one row
    if variant == "pure":
        assert {c["sensitivity"] for c in rec.calls} == {4 * tau}  # replace-one L1
        (eps_t,) = {c["epsilon"] for c in rec.calls}
        assert eps_t == pytest.approx(2.0 / steps) and eps_t * steps <= 2.0
        scale = 4 * tau / (2.0 / steps)
        dist = stats.laplace
    else:
        rho = 0.3 if variant == "zcdp" else zcdp_rho_for_approx(1.0, 1e-5)
        (sens,) = {c["sensitivity"] for c in rec.calls}
        assert sens == pytest.approx(2 * math.sqrt(2) * tau)  # replace-one L2
        (budget,) = {c["budget"] for c in rec.calls}
        assert budget.rho == pytest.approx(rho / steps) and budget.rho * steps <= rho
        scale = 2 * tau / math.sqrt(rho / steps)  # sd = 2√2τ/√(2ρ_t)
        dist = stats.norm
    assert ks_pvalue(noise, dist(scale=scale).cdf) > ALPHA
    for wrong in (0.7, 1.3):
        assert ks_pvalue(noise, dist(scale=scale * wrong).cdf) < ALPHA


def test_variants_budgets_and_ledger():
    g = np.random.default_rng(6)
    x, y = make_data(40, g)
    common = {"x_bounds": (0, 1), "y_bounds": (0, 1), "rng": 0}
    led = Ledger(ApproxDP(10.0, 1e-4))
    r = gradient_descent(x, y, epsilon=1.0, ledger=led, **common)
    assert r.privacy.budget == PureDP(1.0)
    assert r.privacy.details["laplace_scale"] == pytest.approx(4 * 1.0 * 80 / 1.0)
    r = gradient_descent(x, y, rho=0.5, variant="zcdp", ledger=led, **common)
    assert r.privacy.budget == ZCDP(0.5)
    assert r.privacy.details["gaussian_sd"] == pytest.approx(2 / math.sqrt(0.5 / 80))
    r = gradient_descent(x, y, epsilon=1.0, delta=1e-6, variant="approx", ledger=led, **common)
    assert r.privacy.budget == ApproxDP(1.0, 1e-6)
    rho = r.privacy.details["rho"]
    assert zcdp_epsilon(rho, 1e-6) <= 1.0  # the conversion stays within the target
    assert zcdp_epsilon(rho * 1.001, 1e-6) > 1.0  # ... and is tight
    assert [type(e.budget) for e in led.events()] == [PureDP, ZCDP, ApproxDP]


@pytest.mark.parametrize("kw,match", [
    ({"epsilon": 1.0, "rho": 0.5}, "rho"),
    ({"epsilon": 1.0, "delta": 1e-6}, "delta"),
    ({}, "epsilon"),
    ({"variant": "zcdp", "epsilon": 1.0}, "epsilon"),
    ({"variant": "zcdp"}, "rho"),
    ({"variant": "approx", "epsilon": 1.0}, "delta"),
    ({"variant": "approx", "epsilon": 1.0, "delta": 0.0}, "delta"),
    ({"variant": "approx", "epsilon": 1.0, "delta": 1e-6, "rho": 1}, "rho"),
    ({"variant": "sgd", "epsilon": 1.0}, "variant"),
    ({"epsilon": 1.0, "tau": 0}, "tau"),
    ({"epsilon": 1.0, "n_iter": 0}, "n_iter"),
    ({"epsilon": 1.0, "n_iter": 2.5}, "n_iter"),
])
def test_bad_arguments(kw, match):
    led = Ledger(PureDP(1))
    with pytest.raises(InvalidInputError, match=match):
        gradient_descent([0.1, 0.5, 0.9], [0.2, 0.4, 0.5], x_bounds=(0, 1), y_bounds=(0, 1),
                         ledger=led, **kw)
    assert led.events() == []


def test_accuracy_improves_with_budget():
    g = np.random.default_rng(7)
    x, y = make_data(500, g)
    o = ols(x, y)
    errs = {}
    for eps in (0.5, 50.0):
        errs[eps] = np.sqrt(np.mean([
            (gradient_descent(x, y, epsilon=eps, x_bounds=(0, 1), y_bounds=(0, 1),
                              rng=s).predictions[0.25] - o.predictions[0.25]) ** 2
            for s in range(100)]))
    assert errs[50.0] < errs[0.5] / 5
    assert errs[50.0] < 0.02
