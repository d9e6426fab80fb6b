"""NoisyStats inference: the two extra releases (sensitivities, noise, budget), the bootstrap
world replaying the real mechanism and estimator wiring (the small coverage check with power runs
the coverage study: studies/tests/test_dpci_noisy_stats.py)."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from _batch_draws import noisy_stats_draws
from _stats import ALPHA, ks_pvalue
from dpreg import Ledger, PureDP
from dpreg.exceptions import InvalidInputError
from dpreg.inference.dpci.noisy_stats import NoisyStatsModel
from dpreg.inference.results import NoUncertaintyError
from dpreg.linear_model import NoisyStats
from dpreg.simple import noisy_stats
from dpreg.simple._noisy_stats import INFERENCE_SPLIT, inference_sensitivities


def nvar(v):
    return float(np.sum((v - v.mean()) ** 2))


# --------------------------------------------------------------------------------------------
# sensitivities of the extra statistics, brute force (replace-one, n public)
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,xb,yb", [(3, (0.0, 1.0), (0.0, 1.0)), (4, (-2.0, 1.0), (-1.0, 3.0)),
                                     (3, (5.0, 9.0), (-4.0, -1.0))])
def test_extra_sensitivities_match_brute_force(n, xb, yb):
    gx = np.linspace(*xb, 4)
    gy = np.linspace(*yb, 4)
    worst_vy = worst_xbar = 0.0
    for rest in itertools.product(range(4), repeat=n - 1):
        for a, b in itertools.product(range(4), repeat=2):  # replace the last record a -> b
            ya = np.array([gy[i] for i in rest] + [gy[a]])
            yb_ = np.array([gy[i] for i in rest] + [gy[b]])
            xa = np.array([gx[i] for i in rest] + [gx[a]])
            xb_ = np.array([gx[i] for i in rest] + [gx[b]])
            worst_vy = max(worst_vy, abs(nvar(ya) - nvar(yb_)))
            worst_xbar = max(worst_xbar, abs(xa.mean() - xb_.mean()))
    sens = inference_sensitivities(xb, yb, n)
    assert sens["nvar_y"] == pytest.approx(worst_vy, rel=1e-12)
    assert sens["xbar"] == pytest.approx(worst_xbar, rel=1e-12)
    # the formulas are upper bounds attained at the corners
    assert sens["nvar_y"] == pytest.approx((1 - 1 / n) * (yb[1] - yb[0]) ** 2)
    assert sens["xbar"] == pytest.approx((xb[1] - xb[0]) / n)


# --------------------------------------------------------------------------------------------
# budget, validation, labelled default
# --------------------------------------------------------------------------------------------
def data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    return x, np.clip(0.2 + 0.5 * x + rng.normal(0, 0.1, n), 0, 1)


def test_budget_is_the_same_epsilon_split_five_ways():
    x, y = data()
    led = Ledger(PureDP(2.0))
    r = noisy_stats(x, y, epsilon=2.0, x_bounds=(0, 1), y_bounds=(0, 1), inference=True,
                    ledger=led, rng=1)
    assert led.spent().epsilon == pytest.approx(2.0)
    assert len(led.events()) == 1
    parts = r.privacy.details["epsilon_parts"]
    assert sum(parts.values()) <= 2.0 + 1e-12
    w = np.array(INFERENCE_SPLIT) / sum(INFERENCE_SPLIT)
    np.testing.assert_allclose([parts[k] for k in ("ncov", "nvar", "intercept", "nvar_y", "xbar")],
                               2.0 * w, rtol=1e-12)
    d = r.privacy.details
    assert d["laplace_scale_nvar_y"] == pytest.approx(d["sensitivity_nvar_y"] / parts["nvar_y"])
    assert d["laplace_scale_xbar"] == pytest.approx(d["sensitivity_xbar"] / parts["xbar"])
    # the default release keeps thirds
    r0 = noisy_stats(x, y, epsilon=2.0, x_bounds=(0, 1), y_bounds=(0, 1), rng=1)
    assert r0.privacy.details["epsilon_parts"]["ncov"] == pytest.approx(2.0 / 3)


def test_bad_input_is_rejected_before_the_charge():
    led = Ledger(PureDP(1.0))
    with pytest.raises(InvalidInputError, match="at least 3 rows"):
        noisy_stats([0.1, 0.9], [0.2, 0.3], epsilon=1.0, x_bounds=(0, 1), y_bounds=(0, 1),
                    inference=True, ledger=led)
    with pytest.raises(InvalidInputError, match="inference"):
        noisy_stats([0.1, 0.5, 0.9], [0.2, 0.3, 0.1], epsilon=1.0, x_bounds=(0, 1),
                    y_bounds=(0, 1), inference="yes", ledger=led)
    assert led.spent().epsilon == 0.0


def test_plain_release_says_it_has_no_interval_and_how_to_get_one():
    x, y = data()
    est = NoisyStats(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1), inference=False,
                     random_state=0).fit(x[:, None], y)
    res = est.results_
    assert not res.has_bse and res.ci_method == "none"
    with pytest.raises(NoUncertaintyError, match="inference=True"):
        res.conf_int(0.05)


def test_extra_releases_have_the_stated_laplace_noise_and_power():
    """noisy nvar(y) − nvar(y) ~ Lap(b₄) over 4000 independent releases (KS), and the same
    test rejects 0.7× and 1.3× the scale."""
    x, y = data(n=50, seed=3)
    true_vy, true_xbar = nvar(np.clip(y, 0, 1)), float(np.mean(x))
    # noisy_stats(..., rng=s) for s < 4000: rows of one batch, bit for bit the single fits
    # (the first ones checked against noisy_stats itself)
    r = noisy_stats_draws(x, y, range(4000), epsilon=4.0, x_bounds=(0, 1), y_bounds=(0, 1),
                          inference=True)
    ok = ~r["failed"]
    out_vy, out_xb = r["noisy_nvar_y"][ok] - true_vy, r["noisy_xbar"][ok] - true_xbar
    d = noisy_stats(x, y, epsilon=4.0, x_bounds=(0, 1), y_bounds=(0, 1), inference=True,
                    rng=0).privacy.details
    for noise, b in ((np.array(out_vy), d["laplace_scale_nvar_y"]),
                     (np.array(out_xb), d["laplace_scale_xbar"])):
        assert ks_pvalue(noise, stats.laplace(scale=b).cdf) > ALPHA
        for wrong in (0.7, 1.3):
            assert ks_pvalue(noise, stats.laplace(scale=wrong * b).cdf) < ALPHA


# --------------------------------------------------------------------------------------------
# the bootstrap world replays the real mechanism
# --------------------------------------------------------------------------------------------
def world_model(x, alpha, beta, sigma, eps, xb, yb, scale_factor=1.0):
    n = x.size
    parts = PureDP(eps).split(INFERENCE_SPLIT)
    w_x, w_y = xb[1] - xb[0], yb[1] - yb[0]
    scales = {"ncov": (1 - 1 / n) * w_x * w_y / parts[0].epsilon * scale_factor,
              "nvar": (1 - 1 / n) * w_x**2 / parts[1].epsilon,
              "nvar_y": (1 - 1 / n) * w_y**2 / parts[3].epsilon,
              "xbar": w_x / n / parts[4].epsilon}
    nv = nvar(x)
    released = {"ncov": alpha * nv, "nvar": nv, "nvar_y": alpha**2 * nv + (n - 2) * sigma**2,
                "xbar": float(x.mean()), "slope": alpha, "intercept": beta}
    return NoisyStatsModel(released=released, n=n, x_bounds=xb, y_bounds=yb, scales=scales,
                           eps_intercept=parts[2].epsilon)


def test_bootstrap_world_matches_real_releases_on_world_data():
    """Data drawn from the bootstrap world (fixed x, y = β + αx + N(0, σ²), no clipping) and
    released by the real noisy_stats have the law of the model's replay (the plug-in world) (two-sample KS on
    slope, intercept and the studentizing variance, which also checks the simulated nvar(y)
    and x̄ releases); models with 0.7× or 1.3× the ncov noise are rejected."""
    n, alpha, beta, sigma, eps = 200, 0.5, 0.2, 0.05, 20.0
    xb, yb = (0.0, 1.0), (-1.0, 2.0)
    x = np.linspace(0.0, 1.0, n)
    rng = np.random.default_rng(11)
    model = world_model(x, alpha, beta, sigma, eps, xb, yb)
    ys = [beta + alpha * x + rng.normal(0, sigma, n) for _ in range(4000)]
    # noisy_stats(x, ys[s], ..., rng=s): rows of one batch, bit for bit the single fits (the
    # first ones checked against noisy_stats itself)
    e = noisy_stats_draws(x, ys, range(4000), epsilon=eps, x_bounds=xb, y_bounds=yb,
                          inference=True)
    ok = ~e["failed"]
    v = model._cov(e["noisy_ncov"][ok], e["noisy_nvar"][ok], e["noisy_nvar_y"][ok],
                   e["noisy_xbar"][ok])
    real = np.column_stack([e["intercept"][ok], e["slope"][ok], v[:, 1, 1]])
    est, cov, ok = model.replay(40_000, np.random.default_rng(12))
    sim = np.column_stack([est[ok], cov[ok, 1, 1]])
    for j in range(3):
        assert stats.ks_2samp(real[:, j], sim[:, j]).pvalue > ALPHA
    for factor in (0.7, 1.3):
        wrong = world_model(x, alpha, beta, sigma, eps, xb, yb, scale_factor=factor)
        est_w, _, ok_w = wrong.replay(40_000, np.random.default_rng(13))
        assert stats.ks_2samp(real[:, 1], est_w[ok_w, 1]).pvalue < ALPHA


def test_infinite_epsilon_interval_is_the_classical_ols_interval():
    import statsmodels.api as sm

    x, y = data(n=400, seed=5)
    with pytest.warns(Warning):
        r = noisy_stats(x, y, epsilon=math.inf, x_bounds=(0, 1), y_bounds=(0, 1),
                        inference=True, rng=0)
    res = r.to_regression_results(n_boot=20_000)
    ref = sm.OLS(y, sm.add_constant(x)).fit()
    np.testing.assert_allclose(res.bse.to_numpy(), ref.bse, rtol=1e-6)
    np.testing.assert_allclose(res.conf_int(0.05).to_numpy(), ref.conf_int(0.05), rtol=0,
                               atol=0.03 * 2 * 1.96 * ref.bse.max())


def test_estimator_results_carry_the_dp_interval():
    x, y = data(n=2000)
    est = NoisyStats(epsilon=2.0, bounds_X=(0, 1), bounds_y=(0, 1), inference=True,
                     n_boot=500, random_state=0).fit(x[:, None], y)
    res = est.results_
    assert res.has_bse and np.all(res.bse > 0)
    ci = res.conf_int(0.05)
    assert np.all(ci["lower"] < res.params) and np.all(res.params < ci["upper"])
    assert "parametric bootstrap" in res.ci_method
    assert "DP-aware" in res.uncertainty and "Interval method" in str(res.summary())
    plug = np.asarray(res.extra["bse_plugin_ignores_noise"])
    assert np.all(res.bse.to_numpy() > plug)  # the privacy noise is added, never ignored
    # a seeded fit is reproducible, interval included
    again = NoisyStats(epsilon=2.0, bounds_X=(0, 1), bounds_y=(0, 1), inference=True,
                       n_boot=500, random_state=0).fit(x[:, None], y)
    assert again.results_.conf_int(0.05).equals(ci)
