"""DP SSCP release (Analyze Gauss) and regression from it: exact limit against statsmodels on
real data, noise calibration, upscaling, PSD repair, persistence, formulas, getAccuracy /
getParameters."""

import json
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from _stats import ALPHA, ks_pvalue, variance_pvalue
from dpreg import ApproxDP, InvalidInputError, Ledger
from dpreg.covariance import (
    SSCPRelease,
    accuracy,
    epsilon_for,
    noise_sd_matrix,
    release_sscp,
    repair_psd,
    sweep_regression,
    upscale,
)
from dpreg.covariance.sweep import scaling_matrix
from dpreg.mechanisms.gaussian import gaussian_sigma
from dpreg.privacy.neighbours import Neighbouring

# Real data shipped with statsmodels (statsmodels.datasets.statecrime: 2009 crime and
# socio-economic rates of the 50 US states and DC; BSD licence).  Public bounds: the rates are
# percentages in [0, 100]; murders per 100,000 are bounded by 50.
STATECRIME = sm.datasets.statecrime.load_pandas().data
COLS = ["murder", "poverty", "hs_grad", "urban", "single", "white"]
BOUNDS = {"murder": (0.0, 50.0), **{c: (0.0, 100.0) for c in COLS[1:]}}


def exact_sscp(frame, cols, bounds):
    X = np.column_stack([np.ones(len(frame))] + [np.clip(frame[c].to_numpy(float), *bounds[c])
                                                  for c in cols])
    return X.T @ X


@pytest.fixture(scope="module")
def exact_release():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return release_sscp(STATECRIME, columns=COLS, bounds=BOUNDS, epsilon=math.inf,
                            delta=1e-6)


# ------------------------------------------------------------------------ ε → ∞ against statsmodels
@pytest.mark.parametrize("formula", [
    "murder ~ poverty + hs_grad + urban + single + white",
    "murder ~ poverty + single",
    "murder ~ single - 1",
    "murder ~ 0 + poverty + urban",
    "poverty ~ murder + white",
])
def test_infinite_epsilon_matches_statsmodels_ols(exact_release, formula):
    res = exact_release.regress(formula)
    ref = sm.OLS.from_formula(formula, STATECRIME).fit()
    ref_params = ref.params.rename({"Intercept": "intercept"})
    ref_bse = ref.bse.rename({"Intercept": "intercept"})
    assert list(res.params.index) == list(ref_params.index)
    np.testing.assert_allclose(res.params, ref_params, rtol=1e-8)
    np.testing.assert_allclose(res.bse, ref_bse, rtol=1e-7)
    np.testing.assert_allclose(res.tvalues, ref.tvalues.to_numpy(), rtol=1e-7)
    np.testing.assert_allclose(res.pvalues, ref.pvalues.to_numpy(), rtol=1e-6, atol=1e-300)
    assert res.df_resid == ref.df_resid
    assert res.extra["rss"] == pytest.approx(ref.ssr, rel=1e-8)
    assert res.extra["s2"] == pytest.approx(ref.scale, rel=1e-8)
    assert res.extra["rsquared"] == pytest.approx(ref.rsquared, rel=1e-8)
    assert res.extra["rsquared_adj"] == pytest.approx(ref.rsquared_adj, rel=1e-8)


def test_clamping_then_ols():
    bounds = dict(BOUNDS, murder=(0.0, 10.0), single=(20.0, 30.0))  # clamps a few states
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = release_sscp(STATECRIME, columns=COLS, bounds=bounds, epsilon=math.inf,
                           delta=1e-6)
    clamped = STATECRIME.copy()
    for c in COLS:
        clamped[c] = clamped[c].clip(*bounds[c])
    res = rel.regress("murder ~ poverty + single")
    ref = sm.OLS.from_formula("murder ~ poverty + single", clamped).fit()
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-8)
    np.testing.assert_allclose(rel.matrix.to_numpy(), exact_sscp(STATECRIME, COLS, bounds),
                               rtol=1e-10)


def test_upscale_is_exact():
    rng = np.random.default_rng(0)
    bounds = [(-3.0, 5.0), (100.0, 400.0), (0.0, 1.0)]
    X = np.column_stack([rng.uniform(lo, hi, 30) for lo, hi in bounds])
    lo = np.array([b[0] for b in bounds])
    hi = np.array([b[1] for b in bounds])
    Dp = np.column_stack([np.ones(30), (X - lo) / (hi - lo)])
    D = np.column_stack([np.ones(30), X])
    np.testing.assert_allclose(upscale(Dp.T @ Dp, bounds), D.T @ D, rtol=1e-12)


# ------------------------------------------------------------------------ noise
@pytest.mark.parametrize("neighbouring,factor", [("add-remove", 1.0),
                                                 ("replace-one", math.sqrt(2))])
@pytest.mark.parametrize("calibration", ["analytic", "classical"])
def test_noise_is_calibrated_on_the_upper_triangle(neighbouring, factor, calibration):
    rng = np.random.default_rng(1)
    d = 6
    frame = pd.DataFrame(rng.uniform(0, 1, size=(200, d)), columns=[f"c{j}" for j in range(d)])
    cols = list(frame.columns)
    bnds = {c: (0.0, 1.0) for c in cols}
    exact = exact_sscp(frame, cols, bnds)
    eps, delta = 0.7, 1e-5
    sigma = gaussian_sigma(factor * (d + 1), ApproxDP(eps, delta), calibration=calibration)
    iu = np.triu_indices(d + 1)
    noise = []
    for seed in range(250):
        rel = release_sscp(frame, columns=cols, bounds=bnds, epsilon=eps, delta=delta,
                           neighbouring=neighbouring, calibration=calibration, random_state=seed)
        E = rel.noisy_scaled - exact
        np.testing.assert_array_equal(E, E.T)
        noise.append(E[iu])
    noise = np.concatenate(noise)
    assert rel.sigma == pytest.approx(sigma, rel=1e-12)
    assert ks_pvalue(noise, stats.norm(scale=sigma).cdf) > ALPHA
    for wrong in (0.7, 1.3):
        assert ks_pvalue(noise, stats.norm(scale=sigma * wrong).cdf) < ALPHA


@pytest.mark.parametrize("draws", [1000, pytest.param(3000, marks=pytest.mark.slow)])
def test_noise_in_original_units_matches_noise_sd_matrix(draws):
    """The noise of the upscaled (unrepaired) matrix has the sd noise_sd_matrix predicts,
    including the min-shift terms of TᵀET: KS (shape) and the χ² test of the variance per
    entry, which rejects 0.7× and 1.3× the sd from 1000 releases (~25 ms each); the KS test
    rejects 1.3× only from ~3000 draws (the slow run)."""
    rng = np.random.default_rng(2)
    bounds = {"a": (10.0, 20.0), "b": (-5.0, 15.0)}
    frame = pd.DataFrame({"a": rng.uniform(10, 20, 100), "b": rng.uniform(-5, 15, 100)})
    exact = exact_sscp(frame, ["a", "b"], bounds)
    eps, delta = 2.0, 1e-6
    sd = noise_sd_matrix(eps, delta, bounds=bounds).to_numpy()
    draws = np.array([release_sscp(frame, columns=["a", "b"], bounds=bounds, epsilon=eps,
                                   delta=delta, random_state=s).raw.to_numpy() - exact
                      for s in range(draws)])
    for i, j in [(0, 0), (0, 1), (1, 1), (1, 2), (2, 2)]:
        z = draws[:, i, j] / sd[i, j]
        assert ks_pvalue(z, stats.norm.cdf) > ALPHA, (i, j)
        assert variance_pvalue(z, 1.0) > ALPHA, (i, j)
        for wrong in (0.7, 1.3):
            assert variance_pvalue(z, wrong) < ALPHA, (i, j, wrong)
        if z.size >= 3000:
            assert ks_pvalue(z, stats.norm(scale=1.3).cdf) < ALPHA
    acc = accuracy(eps, delta, 0.1, bounds=bounds).to_numpy()
    inside = np.mean(np.abs(draws[:, 1, 2]) <= acc[1, 2])
    # 5 binomial sd (0.03 at 3000 releases, 0.047 at 1000)
    assert inside == pytest.approx(0.9, abs=max(0.03, 5 * math.sqrt(0.09 / len(draws))))


def test_accuracy_and_epsilon_for_invert_each_other():
    bounds = {"age": (18.0, 90.0), "income": (0.0, 200_000.0)}
    for cal in ("analytic", "classical"):
        for simultaneous in (False, True):
            acc = accuracy(0.5, 1e-6, 0.05, bounds=bounds, n=10_000, calibration=cal,
                           simultaneous=simultaneous)
            target = float(acc.to_numpy().max())
            eps = epsilon_for(target, 1e-6, 0.05, bounds=bounds, n=10_000, calibration=cal,
                              simultaneous=simultaneous)
            assert eps == pytest.approx(0.5, rel=1e-6)
            again = accuracy(eps, 1e-6, 0.05, bounds=bounds, n=10_000, calibration=cal,
                             simultaneous=simultaneous)
            assert float(again.to_numpy().max()) <= target
    e_one = epsilon_for(float(acc.loc["age", "age"]), 1e-6, 0.05, bounds=bounds, n=10_000,
                        entry=("age", "age"), calibration="classical", simultaneous=True)
    assert e_one == pytest.approx(0.5, rel=1e-6)
    # the simultaneous version is wider (Bonferroni over (d+1)(d+2)/2 = 6 entries)
    one = accuracy(1.0, 1e-6, 0.05, bounds=bounds)
    all_ = accuracy(1.0, 1e-6, 0.05, bounds=bounds, simultaneous=True)
    ratio = stats.norm.isf(0.05 / 12) / stats.norm.isf(0.025)
    np.testing.assert_allclose(all_.to_numpy() / one.to_numpy(), ratio)


def test_epsilon_for_classical_refuses_epsilon_above_one():
    with pytest.raises(InvalidInputError, match="epsilon < 1"):
        epsilon_for(1e-9, 1e-6, bounds={"a": (0, 1)}, calibration="classical")
    with pytest.raises(InvalidInputError, match="entry"):
        epsilon_for(1.0, 1e-6, bounds={"a": (0, 1)}, entry=("a", "zz"))


def test_release_accuracy_method_matches_planning_function():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.uniform(0, 5, 500), "b": rng.uniform(0, 5, 500)})
    bounds = {"a": (0, 5), "b": (0, 5)}
    rel = release_sscp(frame, columns=["a", "b"], bounds=bounds, epsilon=1.0, delta=1e-6,
                       random_state=0)
    pd.testing.assert_frame_equal(rel.accuracy(0.05), accuracy(1.0, 1e-6, 0.05, bounds=bounds))


# ------------------------------------------------------------------------ PSD repair
def test_repair_psd():
    M = np.diag([4.0, 1.0, -0.5, 0.0])
    R = np.linalg.qr(np.random.default_rng(4).normal(size=(4, 4)))[0]
    A = R @ M @ R.T
    fixed, n_fixed = repair_psd(A)
    assert n_fixed == 2
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(fixed)), [1.0, 1.0, 1.0, 4.0])
    same, zero = repair_psd(np.eye(3))
    assert zero == 0 and np.allclose(same, np.eye(3))
    none, _ = repair_psd(-np.eye(3))
    assert none is None


def test_failed_release_gives_typed_failure(tmp_path):
    rel = SSCPRelease(columns=["y", "x"], bounds=[(0, 1), (0, 1)],
                      noisy_scaled=-np.eye(3), privacy=_privacy(), metadata=_meta())
    assert rel.failed and "no positive eigenvalue" in rel.reason
    res = rel.regress("y ~ x")
    assert res.failed
    loaded = SSCPRelease.load(rel.save(tmp_path / "r.json"))
    assert loaded.failed


def test_repair_recorded_on_noisy_small_release():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(rng.uniform(0, 1, size=(5, 4)), columns=list("abcd"))
    bounds = {c: (0, 1) for c in "abcd"}
    repaired = [release_sscp(frame, columns=list("abcd"), bounds=bounds, epsilon=0.5,
                             delta=1e-6, random_state=s).metadata["psd_repaired"] for s in range(20)]
    assert any(repaired)


def _privacy():
    from dpreg.privacy.neighbours import PrivacyStatement

    return PrivacyStatement(budget=ApproxDP(1.0, 1e-6), neighbouring=Neighbouring.ADD_REMOVE,
                            mechanism="Analyze Gauss SSCP")


def _meta():
    # a hand-made release that is internally consistent (the loader checks sigma against
    # epsilon, delta, the sensitivity of 2 columns and the relation, and n_noisy)
    sens = 3.0
    return {"epsilon": 1.0, "delta": 1e-6, "neighbouring": "add-remove",
            "calibration": "analytic", "sensitivity": sens, "n_noisy": -1.0,
            "sigma": gaussian_sigma(sens, ApproxDP(1.0, 1e-6)), "n_public": None}


# ------------------------------------------------------------------------ persistence
def test_save_load_roundtrip(tmp_path):
    rel = release_sscp(STATECRIME, columns=COLS, bounds=BOUNDS, epsilon=1.0, delta=1e-6,
                       random_state=7)
    path = rel.save(tmp_path / "release.json")
    data = json.loads(path.read_text())
    meta = data["metadata"]
    for key in ("epsilon", "delta", "n_noisy", "neighbouring", "mechanism", "dpreg_version",
                "sigma", "sensitivity", "psd_repaired", "calibration"):
        assert key in meta
    assert data["bounds"]["murder"] == [0.0, 50.0]
    assert meta["n_noisy"] == pytest.approx(rel.n_noisy)
    loaded = SSCPRelease.load(path)
    a = rel.regress("murder ~ poverty + single")
    b = loaded.regress("murder ~ poverty + single")
    pd.testing.assert_series_equal(a.params, b.params)
    pd.testing.assert_series_equal(a.bse, b.bse)
    assert loaded.privacy == rel.privacy
    assert loaded.columns == rel.columns


def test_load_rejects_foreign_files(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(InvalidInputError, match="not a dpreg SSCP release"):
        SSCPRelease.load(p)
    p.write_text("{not json")
    with pytest.raises(InvalidInputError, match="readable"):
        SSCPRelease.load(p)


# ------------------------------------------------------------------------ formulas and results
@pytest.mark.parametrize("formula,match", [
    ("murder ~ poverty:single", "linear terms"),
    ("murder ~ np.log(poverty)", "linear terms"),
    ("murder ~ violent", "not released"),
    ("murder ~ murder + poverty", "response"),
    ("poverty + single ~ murder", "one released column"),
    ("murder poverty", "like 'y ~ x1"),
    ("murder ~ 0", "no regressors"),
])
def test_formula_errors(exact_release, formula, match):
    with pytest.raises(InvalidInputError, match=match):
        exact_release.regress(formula)


def simulated(n=20_000, seed=11):
    rng = np.random.default_rng(seed)
    poverty = rng.uniform(5, 25, n)
    single = rng.uniform(15, 45, n)
    murder = np.clip(-3 + 0.2 * poverty + 0.2 * single + rng.normal(0, 2, n), 0, 50)
    return pd.DataFrame({"murder": murder, "poverty": poverty, "single": single})


def test_undefined_standard_errors_are_flagged():
    """51 rows barely carry ε = 1: in about 1 release in 20 the noisy RSS is negative, so no
    SE exists (NaN + flag).  The seed picks such a release (seed 3 of the float-safe seeded
    noise; seed 8 did with the old float noise)."""
    rel = release_sscp(STATECRIME, columns=COLS, bounds=BOUNDS, epsilon=1.0, delta=1e-6,
                       random_state=3)
    res = rel.regress("murder ~ poverty + single", se="plugin")
    assert res.extra["se_defined"] is False
    assert res.uncertainty.startswith("undefined")
    assert res.bse.isna().all()
    # the DP-aware default refuses: 51 rows at ε = 1 leave the matrix dominated by the noise
    # (κ > 0.5, issue 18), so there is no interval and no standard error, and it says why
    dp = rel.regress("murder ~ poverty + single", n_sim=100, random_state=0)
    assert dp.extra["se_defined"] is False and dp.bse.isna().all()
    assert dp.extra["dp_ci_refused"] is True and dp.uncertainty.startswith("none: refused")


def test_summary_and_uncertainty_labels():
    cols = ["murder", "poverty", "single"]  # bounds keys must be columns of the data
    rel = release_sscp(simulated(), columns=cols, bounds={c: BOUNDS[c] for c in cols},
                       epsilon=8.0, delta=1e-6, random_state=8)  # κ ≈ 0.1: the DP-aware interval exists
    res = rel.regress("murder ~ poverty + single", se="plugin")
    assert "plug-in" in res.uncertainty
    text = str(res.summary())
    assert "Signif. codes" in text and "poverty" in text
    assert res.nobs is None  # add/remove: n is private
    noisy = rel.regress("murder ~ poverty + single", se="noise-aware", n_sim=50, random_state=0)
    assert "noise-aware" in noisy.uncertainty
    assert np.all(noisy.bse.to_numpy() >= res.bse.to_numpy())
    np.testing.assert_allclose(noisy.params, res.params)


def test_replace_one_records_public_n():
    rel = release_sscp(STATECRIME, columns=COLS, bounds=BOUNDS, epsilon=1.0, delta=1e-6,
                       neighbouring="replace-one", random_state=9)
    res = rel.regress("murder ~ poverty")
    assert res.nobs == 51 and res.df_resid == 49
    assert rel.metadata["sensitivity"] == pytest.approx(math.sqrt(2) * 7)


def test_accuracy_improves_with_n_on_simulated_data():
    """Bain et al. §3.5 sanity: the noise does not depend on n, so coefficients get closer to
    the truth as n grows."""
    errs = []
    for n in (1_000, 100_000):
        rng = np.random.default_rng(10)
        x = rng.uniform(0, 10, n)
        frame = pd.DataFrame({"x": x, "y": 2.0 * x + 1 + rng.normal(0, 1, n)})
        e = []
        for s in range(10):
            rel = release_sscp(frame, columns=["y", "x"], bounds={"x": (0, 10), "y": (-10, 40)},
                               epsilon=0.5, delta=1e-6, random_state=s)
            e.append(abs(rel.regress("y ~ x").params["x"] - 2.0))
        errs.append(np.median(e))
    assert errs[1] < errs[0] / 10


# ------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kw,match", [
    ({"bounds": None}, "bounds is required"),
    ({"bounds": {"murder": (0, 50)}}, "missing"),
    ({"bounds": [(0, 1)]}, "one \\(lo, hi\\) pair per column"),
    ({"delta": 0.0}, "delta"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"columns": ["murder", "violentx"]}, "not found"),
    ({"columns": ["murder", "murder"]}, "distinct"),
    ({"columns": []}, "non-empty"),
    ({"columns": ["intercept"]}, "intercept"),
    ({"calibration": "classical", "epsilon": 1.5}, "epsilon < 1"),
    ({"neighbouring": "both"}, "neighbouring"),
    ({"psd_tol": 2.0}, "psd_tol"),
])
def test_bad_input_costs_nothing(kw, match):
    ledger = Ledger(ApproxDP(10.0, 0.1))
    args = dict(columns=["murder", "poverty"], bounds=BOUNDS, epsilon=1.0, delta=1e-6,
                ledger=ledger)
    args.update(kw)
    with pytest.raises(InvalidInputError, match=match):
        release_sscp(STATECRIME, **args)
    bad = STATECRIME.copy()
    bad.loc[bad.index[3], "poverty"] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        release_sscp(bad, columns=["murder", "poverty"], bounds=BOUNDS, epsilon=1.0,
                     delta=1e-6, ledger=ledger)
    assert ledger.events() == []


def test_array_and_mapping_inputs():
    arr = STATECRIME[["murder", "poverty"]].to_numpy()
    a = release_sscp(arr, columns=["m", "p"], bounds=[(0, 50), (0, 100)], epsilon=1.0,
                     delta=1e-6, random_state=3)
    b = release_sscp({"m": arr[:, 0], "p": arr[:, 1]}, columns=["m", "p"],
                     bounds={"m": (0, 50), "p": (0, 100)}, epsilon=1.0, delta=1e-6, random_state=3)
    np.testing.assert_array_equal(a.noisy_scaled, b.noisy_scaled)
    ledger = Ledger(ApproxDP(1.0, 1e-6), neighbouring="add-remove")  # the release's relation
    release_sscp(arr, columns=["m", "p"], bounds=[(0, 50), (0, 100)], epsilon=1.0,
                 delta=1e-6, ledger=ledger)
    assert len(ledger.events()) == 1


# ------------------------------------------------------------------------ properties
@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, (12, 4), elements=st.floats(-50, 50, allow_subnormal=False)),
       st.lists(st.booleans(), min_size=3, max_size=3))
def test_sweep_regression_equals_least_squares(A, keep):
    """From the exact SSCP matrix the sweep regression is OLS for any regressor subset."""
    D = np.column_stack([np.ones(12), A])
    x_idx = [0] + [j + 1 for j, k in enumerate(keep) if k]
    M = D[:, x_idx]
    if np.linalg.matrix_rank(M) < len(x_idx) or np.linalg.cond(M) > 1e6:
        return
    fit = sweep_regression(D.T @ D, x_idx, 4, 12)
    ref, rss, *_ = np.linalg.lstsq(M, D[:, 4], rcond=None)
    np.testing.assert_allclose(fit["beta"], ref, rtol=1e-6, atol=1e-6 * (1 + np.abs(ref).max()))
    resid = D[:, 4] - M @ ref
    assert fit["rss"] == pytest.approx(resid @ resid, rel=1e-5, abs=1e-6 * (1 + D[:, 4] @ D[:, 4]))


# ------------------------------------------------------- regression in the scaled units (issue 21)
def _scaled_reference(S, bounds):
    """y ~ 1 + x from the [0, 1]-scaled matrix by hand: regress y' on [1, x'] there (well
    conditioned), then map back (y = lo_y + r_y·y', x' = (x − lo)/r)."""
    p = S.shape[0] - 1
    gamma = np.linalg.solve(S[:p, :p], S[:p, p])
    lo = np.array([b[0] for b in bounds])
    r = np.array([b[1] - b[0] for b in bounds])
    slopes = r[-1] * gamma[1:] / r[:-1]
    intercept = lo[-1] + r[-1] * (gamma[0] - np.sum(gamma[1:] * lo[:-1] / r[:-1]))
    return np.concatenate([[intercept], slopes])


def test_near_collinear_large_means_are_not_marked_failed():
    """Bain et al.'s generator (means 100-10,000, sds 1-100, bounds μ ± 6σ): the released
    matrix is well conditioned in [0, 1] units but numerically singular in original units, where
    the old rank check marked every release of this data set (1 in 10 over the generator's data
    sets at ε = 1) as ⊥.  Every release must give the regression, equal to the one solved by hand
    in the scaled units."""
    from dpreg._random import simulation_generator
    from dpreg.bench.generators import bain_simulated

    data = bain_simulated(20_000, d=5, coefficient=1.0,
                          rng=simulation_generator(np.random.SeedSequence(7)))
    assert np.max(data.means / data.sds) > 3000  # x3 ~ N(7779, 2²): a narrow column far from 0
    arr = np.column_stack([data.X, data.y])
    cols = ["x1", "x2", "x3", "x4", "y"]
    b = data.bounds(6.0)
    bounds = [b[c] for c in cols]
    gen = simulation_generator(np.random.SeedSequence(100))
    for _ in range(10):
        rel = release_sscp(arr, columns=cols, bounds=bounds, epsilon=1.0, delta=2**-16, random_state=gen)
        assert not rel.failed
        res = rel.regress("y ~ x1 + x2 + x3 + x4", se="plugin")
        assert not res.failed, res.reason
        ref = _scaled_reference(rel._scaled_repaired, bounds)
        np.testing.assert_allclose(res.params.to_numpy(), ref, rtol=1e-7,
                                   atol=1e-7 * np.abs(ref).max())


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, (15, 3), elements=st.floats(0.0, 1.0, allow_subnormal=False)),
       st.lists(st.booleans(), min_size=3, max_size=3),
       st.lists(st.floats(-1e4, 1e4), min_size=3, max_size=3),
       st.lists(st.floats(0.5, 100.0), min_size=3, max_size=3))
def test_sweep_regression_in_scaled_units_equals_least_squares(A, keep, lows, widths):
    """With ``bounds`` the sweep solves from the scaled matrix and equals OLS on the
    original-unit data, with or without the intercept, for any regressor subset."""
    bounds = [(lo, lo + w) for lo, w in zip(lows, widths)]
    S = np.column_stack([np.ones(15), A])
    D = S @ scaling_matrix(bounds)
    x_idx = [j for j, k in zip((0, 1, 2), keep) if k]
    if not x_idx:
        return
    M = D[:, x_idx]
    if np.linalg.matrix_rank(M) < len(x_idx) or np.linalg.cond(M) > 1e6:
        return
    # a scaled column that is tiny next to the data (a low bound of 1e-29 or 1e-301 over an
    # all-zero column) is below the rounding of the SSCP matrix's square root (~1e-16 of its
    # norm): numerically singular there, whatever exact least squares on D says
    if np.linalg.norm(M, axis=0).min() < 1e-8 * np.linalg.norm(D):
        return
    fit = sweep_regression(S.T @ S, x_idx, 3, 15, bounds=bounds)
    ref, *_ = np.linalg.lstsq(M, D[:, 3], rcond=None)
    np.testing.assert_allclose(fit["beta"], ref, rtol=1e-6, atol=1e-6 * (1 + np.abs(ref).max()))
    resid = D[:, 3] - M @ ref
    assert fit["rss"] == pytest.approx(resid @ resid, rel=1e-5, abs=1e-8 * (1 + D[:, 3] @ D[:, 3]))


def _caschools_like(n=420, seed=2021):
    """Data shaped like AER's CASchools (420 districts): test score on student-teacher ratio,
    % CalWORKs and % English learners."""
    rng = np.random.default_rng(seed)
    stratio = rng.uniform(14.0, 26.0, n)
    calworks = np.clip(rng.gamma(2.0, 6.8, n), 0.0, 79.0)
    english = np.clip(rng.gamma(0.9, 17.0, n), 0.0, 86.0)
    score = np.clip(700.0 - 1.0 * stratio - 0.11 * calworks - 0.55 * english
                    + rng.normal(0.0, 9.0, n), 600.0, 720.0)
    X = np.column_stack([stratio, calworks, english])
    return X, score


def test_covariance_ols_at_huge_epsilon_equals_ols():
    """ε = 1e8 is above the cap EPSILON_MAX (issue 32): treated as ε = inf, the exact OLS of
    the clipped data, labelled NOT PRIVATE.  (Before the cap the release still drew noise
    there, σ ≈ 3e-4 on the scaled matrix; with the old σ floor of 0.02·Δ the CalWORKs slope
    moved by several standard errors.  The continuity of σ(ε) up to the cap is checked in
    tests/test_budgets.py, TestNoiseVanishesAsEpsilonGrows.)"""
    from dpreg import CovarianceOLS

    X, y = _caschools_like()
    ref = sm.OLS(y, sm.add_constant(X)).fit()
    est = CovarianceOLS(epsilon=1e8, delta=1e-6, bounds_X=[(10.0, 30.0), (0.0, 100.0),
                                                           (0.0, 100.0)],
                        bounds_y=(600.0, 720.0), se="plugin", random_state=1).fit(X, y)
    got = np.concatenate([[est.intercept_], est.coef_])
    assert np.all(np.abs(got - ref.params) <= 0.01 * ref.bse)
    assert not est.privacy_.private
