"""Statistician's defaults (issue 18, item 5): ``regress`` and the estimators release what their
intervals need without extra arguments; R², df_resid and predictions with intervals come from
the released statistics only, and at ε = ∞ they are statsmodels' OLS quantities."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import dpreg
from dpreg.exceptions import InvalidInputError
from dpreg.inference.prediction import simple_fit_statistics, sscp_fit_statistics
from dpreg.inference.results import NoUncertaintyError
from dpreg.linear_model import AdaSSP, NoisyStats

BOUNDS = {"x1": (0, 10), "x2": (-1, 1), "y": (-20, 20)}


def frame(n=300, seed=1):
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(0, 10, n)
    x2 = rng.uniform(-1, 1, n)
    y = np.clip(1 + 0.5 * x1 - 2 * x2 + rng.normal(0, 1, n), -20, 20)
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y})


CASES = [("noisy-stats", "y ~ x1", ["x1"], {}),
         ("covariance-ols", "y ~ x1 + x2", ["x1", "x2"], {"delta": 1e-6}),
         ("adassp", "y ~ x1 + x2", ["x1", "x2"], {"delta": 1e-6})]


# ------------------------------------------------------------------ defaults
@pytest.mark.parametrize("method,formula,cols,kw", CASES)
def test_regress_gives_intervals_without_extra_arguments(method, formula, cols, kw):
    r = dpreg.regress(frame(2000), formula, method=method, epsilon=2.0, bounds=BOUNDS,
                      random_state=3, n_boot=200, **kw)
    assert r.has_bse and "parametric bootstrap" in r.ci_method
    ci = r.conf_int(0.05)
    assert list(ci.index) == list(r.params.index)
    assert np.all(ci["lower"].to_numpy() <= ci["upper"].to_numpy())


def test_estimators_default_to_auto_inference_and_keep_the_budget():
    df = frame(500)
    # n·ε = 1000: the public interval rule offers the interval (n·ε >= 755)
    ns = NoisyStats(epsilon=2.0, bounds_X=(0, 10), bounds_y=(-20, 20), n_boot=100,
                    random_state=0).fit(df[["x1"]], df["y"])
    assert ns.inference == "auto" and ns.results_.has_bse
    assert ns.results_.privacy.details["inference"] is True
    assert ns.results_.privacy.budget == dpreg.PureDP(2.0)  # same ε, split five ways
    ada = AdaSSP(epsilon=1.0, delta=1e-6, bounds_X=[(0, 10), (-1, 1)], bounds_y=(-20, 20),
                 n_boot=100, random_state=0).fit(df[["x1", "x2"]], df["y"])
    assert ada.results_.has_bse and ada.results_.privacy.details["inference"] is True
    # no intercept under add/remove: n cannot be estimated, "auto" falls back to Wang's release
    plain = AdaSSP(epsilon=1.0, delta=1e-6, bounds_X=[(0, 10), (-1, 1)], bounds_y=(-20, 20),
                   fit_intercept=False, random_state=0).fit(df[["x1", "x2"]], df["y"])
    assert not plain.results_.has_bse and "inference" not in plain.results_.privacy.details
    with pytest.raises(InvalidInputError, match="inference must be True, False or 'auto'"):
        NoisyStats(epsilon=1.0, bounds_X=(0, 10), bounds_y=(-20, 20),
                   inference="yes").fit(df[["x1"]], df["y"])


def test_noisy_stats_auto_falls_back_below_three_rows():
    x = np.array([[0.2], [0.8]])
    y = np.array([0.1, 0.9])
    est = NoisyStats(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1), random_state=0).fit(x, y)
    assert not est.results_.has_bse
    with pytest.raises(InvalidInputError, match="at least 3 rows"):
        NoisyStats(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1), inference=True).fit(x, y)


def test_regress_plain_release_on_request_and_engine_default_unchanged():
    """``inference=False`` gives the paper's release; the array engine (per-group fits,
    ``auto``) releases only what it is asked for."""
    from dpreg.api import fit_arrays

    df = frame(500)
    # n·ε = 250: below the interval rule's public limit (~378), so "auto" is the plain release
    r = dpreg.regress(df, "y ~ x1", method="noisy-stats", epsilon=0.5, bounds=BOUNDS,
                      random_state=0, inference=False)
    assert not r.has_bse
    e = fit_arrays(df[["x1"]].to_numpy(), df["y"].to_numpy(), method="noisy-stats",
                   epsilon=0.5, x_bounds=[(0, 10)], y_bounds=(-20, 20), random_state=0)
    assert not e.has_bse  # the same (plain) release
    np.testing.assert_array_equal(e.params.to_numpy(), r.params.to_numpy())


# ------------------------------------------------------------------ ε = ∞: statsmodels OLS
@pytest.mark.parametrize("method,formula,cols,kw", CASES)
def test_infinite_epsilon_fit_statistics_and_predictions_are_statsmodels(method, formula, cols,
                                                                         kw):
    df = frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = dpreg.regress(df, formula, method=method, epsilon=math.inf, bounds=BOUNDS,
                          random_state=0, n_boot=20_000, **kw)
    ref = sm.OLS(df["y"], sm.add_constant(df[cols])).fit()
    assert r.rsquared == pytest.approx(ref.rsquared, rel=1e-9)
    assert r.rsquared_adj == pytest.approx(ref.rsquared_adj, rel=1e-9)
    assert r.df_resid == pytest.approx(ref.df_resid)
    new = pd.DataFrame({"x1": [1.0, 5.0, 9.5], "x2": [0.0, 0.5, -0.9]})[cols]
    p = r.get_prediction(new)
    rp = ref.get_prediction(sm.add_constant(new, has_constant="add"))
    np.testing.assert_allclose(p.predicted_mean, rp.predicted_mean, rtol=1e-9)
    np.testing.assert_allclose(p.se_mean, rp.se_mean, rtol=1e-6)
    np.testing.assert_allclose(p.se_obs, rp.se_obs, rtol=1e-6)
    assert p.var_resid == pytest.approx(ref.scale, rel=1e-9)
    # intervals: the bootstrap's Monte-Carlo error only (B = 20,000)
    tol_mean = 0.03 * 2 * 1.96 * rp.se_mean.max()
    np.testing.assert_allclose(p.conf_int(0.05).to_numpy(), rp.conf_int(alpha=0.05),
                               atol=tol_mean, rtol=0)
    np.testing.assert_allclose(p.conf_int(alpha=0.05, obs=True).to_numpy(),
                               rp.conf_int(obs=True, alpha=0.05), atol=tol_mean, rtol=0)
    frame_ours = p.summary_frame(0.1)
    frame_sm = rp.summary_frame(alpha=0.1)
    assert list(frame_ours.columns) == list(frame_sm.columns)
    np.testing.assert_allclose(frame_ours["mean_se"], frame_sm["mean_se"], rtol=1e-6)


def test_obs_interval_is_wider_than_mean_interval_and_rejects_a_wrong_variance():
    """The new-observation interval adds the error variance: it must contain the mean interval
    and be close to ±t·se_obs; an implementation that forgot σ̂² would fail the second check."""
    df = frame(20000)  # informative release (κ ≈ 0.23 <= 0.5): its interval is not refused
    r = dpreg.regress(df, "y ~ x1 + x2", method="covariance-ols", epsilon=8.0, bounds=BOUNDS,
                      delta=1e-6, random_state=1, n_boot=2000)
    p = r.get_prediction({"x1": [2.0, 8.0], "x2": [0.1, -0.3]})
    mean, obs = p.conf_int(0.05), p.conf_int(0.05, obs=True)
    assert np.all(obs["lower"] < mean["lower"]) and np.all(mean["upper"] < obs["upper"])
    half = (obs["upper"] - obs["lower"]).to_numpy() / 2
    assert np.allclose(half, 1.96 * p.se_obs, rtol=0.05)
    assert not np.allclose(half, 1.96 * p.se_mean, rtol=0.5)


# ------------------------------------------------------------------ refusals, per method
def test_methods_without_released_sums_of_squares_say_why():
    df = frame(400)
    r = dpreg.regress(df, "y ~ x1", method="theil-sen-exp", epsilon=1.0, bounds=BOUNDS,
                      random_state=0)
    with pytest.raises(NoUncertaintyError, match="median of pairwise slopes"):
        _ = r.rsquared
    p = r.get_prediction([2.0, 4.0])
    assert p.predicted_mean.shape == (2,)  # the point prediction is post-processing
    with pytest.raises(NoUncertaintyError, match="no DP-aware covariance"):
        p.conf_int()
    plain = dpreg.regress(df, "y ~ x1", method="noisy-stats", epsilon=1.0, bounds=BOUNDS,
                          random_state=0, inference=False)
    with pytest.raises(NoUncertaintyError, match="inference=True"):
        _ = plain.rsquared
    assert plain.to_dict()["rsquared"] is None


def test_inconsistent_noisy_statistics_give_nan_not_a_made_up_number():
    assert math.isnan(simple_fit_statistics(ncov=5.0, nvar=1.0, nvar_y=10.0, n=50,
                                            sigma2=0.0)["rsquared"])  # 25/10 > 1
    assert simple_fit_statistics(ncov=2.0, nvar=1.0, nvar_y=10.0, n=50,
                                 sigma2=1.0)["rsquared"] == pytest.approx(0.4)
    xtx = np.array([[10.0, 5.0], [5.0, 5.0]])
    good = sscp_fit_statistics(xtx=xtx, xty=np.array([3.0, 2.0]), yty=2.0,
                               theta=np.array([0.2, 0.2]), n=10.0, intercept_index=0)
    assert good["rsquared"] == pytest.approx(1 - (2 - 2 * 1.0 + 0.2 * 0.2 * 25) / (2 - 0.9))
    bad = sscp_fit_statistics(xtx=xtx, xty=np.array([3.0, 2.0]), yty=0.5,
                              theta=np.array([0.2, 0.2]), n=10.0, intercept_index=0)
    assert math.isnan(bad["rsquared"])


def test_get_prediction_input_forms_and_errors():
    df = frame(2000)
    r = dpreg.regress(df, "y ~ x1 + x2", method="covariance-ols", epsilon=2.0, bounds=BOUNDS,
                      delta=1e-6, random_state=0, n_boot=100)
    a = r.get_prediction(np.array([[1.0, 0.5]])).predicted_mean
    b = r.get_prediction({"x1": 1.0, "x2": 0.5}).predicted_mean
    c = r.get_prediction(pd.DataFrame({"x2": [0.5], "x1": [1.0]})).predicted_mean
    d = r.get_prediction(pd.Series({"x1": 1.0, "x2": 0.5})).predicted_mean
    expect = r.params["intercept"] + r.params["x1"] * 1.0 + r.params["x2"] * 0.5
    for v in (a, b, c, d):
        assert v[0] == pytest.approx(expect)
    with pytest.raises(InvalidInputError, match="missing"):
        r.get_prediction(pd.DataFrame({"x1": [1.0]}))
    with pytest.raises(InvalidInputError, match="finite"):
        r.get_prediction(np.array([[1.0, np.nan]]))
    with pytest.raises(InvalidInputError, match="2 columns"):
        r.get_prediction(np.ones((2, 3)))


def test_every_method_without_fit_statistics_has_its_own_reason():
    from dpreg import methods

    for name, spec in methods.REGISTRY.items():
        if name != "covariance-ols":  # the SSCP release always carries them
            why = spec.interval.fit_statistics
            assert why and "no" in why and name not in why, name
