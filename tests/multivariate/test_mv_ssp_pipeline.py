"""AdaSSP and BoostedAdaSSP as plan -> statistics -> release -> results (issue 31 item 2).

* the plans are built from public inputs only (no data argument exists) and every field is
  what the named pure budget and sensitivity functions give;
* the public functions are exactly their pipelines (bit for bit), the specs' plan/statistics/
  release equal the estimators' fits, and a per-group table's rows equal single fits;
* a plan refuses what the fit refuses, before anything is read, charged or drawn.
"""

import math

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import GDP, ApproxDP, InvalidInputError, Ledger, methods
from dpreg.mechanisms.gaussian import gaussian_sigma
from dpreg.mechanisms.sensitivity import (
    gram_sensitivity,
    lambda_min_sensitivity,
    xty_sensitivity,
)
from dpreg.multivariate import (
    PublicScaling,
    adassp,
    adassp_budget,
    adassp_result,
    boosted_adassp,
    boosted_result,
    boosted_statistics,
    plan_adassp,
    plan_boosted,
    release_adassp,
    release_boosted,
    ssp_statistics,
)
from dpreg.multivariate.boosted import boosted_budget, boosted_split
from dpreg.multivariate.ssp import yty_sensitivity
from dpreg.privacy import Neighbouring

EPS, DELTA = 1.0, 1e-6


def _design(n=300, seed=0):
    g = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), g.uniform(-1, 1, (n, 2))])
    y = np.clip(X @ [0.2, 0.5, -0.3] + 0.1 * g.standard_normal(n), -1, 1)
    return X, y


# ------------------------------------------------------------------------ the plans
@pytest.mark.parametrize("calibration", ["gdp", "wang"])
@pytest.mark.parametrize("rule", ["wang", "eigen-floor"])
@pytest.mark.parametrize("inference,relation", [(False, "add-remove"), (True, "add-remove"),
                                                (True, "replace-one")])
def test_adassp_plan_is_public_and_every_field_is_the_named_functions(calibration, rule,
                                                                      inference, relation):
    d, B, C = 4, 2.0, 3.0
    n = 500 if relation == "replace-one" else None
    plan = plan_adassp(d=d, x_norm_bound=B, y_bound=C, epsilon=EPS, delta=DELTA, n=n,
                       neighbouring=relation, failure_prob=0.1, inference=inference,
                       calibration=calibration, count_index=0, n_boot=300, kind="basic",
                       lambda_rule=rule, floor_scale=2.5)
    rel = Neighbouring(relation)
    b = adassp_budget(EPS, DELTA, calibration=calibration, inference=inference,
                      lambda_rule=rule)
    assert plan.method == "adassp"
    assert plan.budget == b.charged
    assert plan.relation is rel
    assert dict(plan.parts) == dict(zip(b.releases, b.parts))
    assert list(plan.parts) == list(b.releases)
    assert plan.n == n and plan.d == d
    every = {"lambda_min": lambda_min_sensitivity(B, rel), "XtX": gram_sensitivity(B, rel),
             "Xty": xty_sensitivity(B, C, rel), "yty": yty_sensitivity(C, rel)}
    assert dict(plan.sensitivities) == {k: every[k] for k in b.releases}
    assert dict(plan.noise) == {k: gaussian_sigma(every[k], plan.parts[k])
                                for k in b.releases}
    assert ("lambda_min" in plan.parts) == (rule == "wang")
    assert ("yty" in plan.parts) == inference
    assert dict(plan.options) == {
        "epsilon": EPS, "delta": DELTA, "implied_epsilon": b.implied_epsilon,
        "x_norm_bound": B, "y_bound": C, "failure_prob": 0.1, "inference": inference,
        "calibration": calibration, "lambda_rule": rule, "floor_scale": 2.5,
        "count_index": 0 if inference and relation == "add-remove" else 0, "n_boot": 300,
        "kind": "basic", "scaling": None}
    with pytest.raises(TypeError):
        plan.options["epsilon"] = 2.0  # frozen


@pytest.mark.parametrize("split", ["author", "equal", (1.0, 2.0, 3.0)])
@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_boosted_plan_is_public_and_every_field_is_the_named_functions(split, relation):
    d, B, tau, T = 3, 1.5, 0.7, 12
    n = 200 if relation == "replace-one" else None
    sc = PublicScaling.from_bounds([(0, 1), (-2, 2)], (0, 5), fit_intercept=True,
                                   unit_ball=True)
    plan = plan_boosted(d=d, epsilon=EPS, delta=DELTA, x_norm_bound=B, tau=tau, n_rounds=T,
                        split=split, learning_rate=0.5, schedule="1/t", lambda_rule="literal",
                        neighbouring=relation, failure_prob=0.1, n=n, scaling=sc)
    rel = Neighbouring(relation)
    ratio = boosted_split(split, T)
    mu, mu1, mu2, mu_round, mu3, charged = boosted_budget(EPS, DELTA, ratio, T)
    assert plan.method == "boosted-adassp"
    assert plan.budget == charged and plan.relation is rel
    assert dict(plan.parts) == {"XtX": mu1, "lambda_min": mu3, "Xtg_total": mu2,
                                "Xtg_round": mu_round}
    assert plan.n == n and plan.d == d
    sens = {"XtX": gram_sensitivity(B, rel), "lambda_min": lambda_min_sensitivity(B, rel),
            "Xtg": xty_sensitivity(B, tau, rel)}
    assert dict(plan.sensitivities) == sens
    assert dict(plan.noise) == {"XtX": gaussian_sigma(sens["XtX"], mu1),
                                "lambda_min": gaussian_sigma(sens["lambda_min"], mu3),
                                "Xtg": gaussian_sigma(sens["Xtg"], mu_round)}
    assert dict(plan.options) == {
        "epsilon": EPS, "delta": DELTA, "mu": mu, "x_norm_bound": B, "tau": tau,
        "n_rounds": T, "split": ratio, "learning_rate": 0.5, "schedule": "1/t",
        "lambda_rule": "literal", "failure_prob": 0.1, "scaling": sc}
    # the rounds' parts compose to at most the whole, and the charge never exceeds μ
    assert charged.mu <= mu.mu
    assert math.sqrt(mu1.mu ** 2 + T * mu_round.mu ** 2 + mu3.mu ** 2) <= mu.mu * (1 + 1e-15)


@pytest.mark.parametrize("plan_fn,kw", [
    (plan_adassp, {"x_norm_bound": 1.0, "y_bound": 1.0}),
    (plan_boosted, {}),
])
def test_a_private_n_never_enters_a_plan(plan_fn, kw):
    """Under add/remove n is private: a plan refuses it (only replace-one makes n public)."""
    with pytest.raises(InvalidInputError, match="n must be None under add/remove"):
        plan_fn(d=3, epsilon=EPS, delta=DELTA, n=100, neighbouring="add-remove", **kw)
    plan = plan_fn(d=3, epsilon=EPS, delta=DELTA, n=100, neighbouring="replace-one", **kw)
    assert plan.n == 100


def test_adassp_plan_refuses_before_anything_is_read():
    base = dict(d=3, x_norm_bound=1.0, y_bound=1.0, epsilon=EPS, delta=DELTA)
    with pytest.raises(InvalidInputError, match="more rows than columns"):
        plan_adassp(**base, n=3, neighbouring="replace-one", inference=True)
    with pytest.raises(InvalidInputError, match="count_index is required"):
        plan_adassp(**base, inference=True)
    with pytest.raises(InvalidInputError, match="epsilon must be <="):
        plan_adassp(**{**base, "epsilon": 30.0}, calibration="wang")
    with pytest.raises(InvalidInputError, match="d must be"):
        plan_adassp(**{**base, "d": 0})


def test_release_refuses_statistics_of_another_shape():
    X, y = _design()
    plan = plan_adassp(d=2, x_norm_bound=2.0, y_bound=1.0, epsilon=EPS, delta=DELTA)
    stats = ssp_statistics(dpreg._source.ArraySource([X, y], ["a", "b", "c", "y"]),
                           x_norm_bound=2.0, y_bound=1.0)
    with pytest.raises(InvalidInputError, match="plan's 2 columns; got 3"):
        release_adassp(stats, plan, np.random.default_rng(0))


# ------------------------------------------------------------------------ the pipelines
def _same_results(a, b):
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())
    assert list(a.params.index) == list(b.params.index)
    assert a.privacy == b.privacy
    assert a.nobs == b.nobs
    assert a.uncertainty == b.uncertainty
    assert a.extra.keys() == b.extra.keys()
    if a.bootstrap is not None or b.bootstrap is not None:
        np.testing.assert_array_equal(a.conf_int().to_numpy(), b.conf_int().to_numpy())
        np.testing.assert_array_equal(a.bse.to_numpy(), b.bse.to_numpy())


@pytest.mark.parametrize("kw", [
    {},
    {"inference": True, "count_index": 0, "n_boot": 200},
    {"inference": True, "neighbouring": "replace-one", "n_boot": 200, "kind": "basic"},
    {"lambda_rule": "eigen-floor", "calibration": "wang"},
])
def test_adassp_is_its_pipeline_bit_for_bit(kw):
    X, y = _design()
    B = math.sqrt(3.0)
    ledger = Ledger(ApproxDP(10.0, 1e-3))
    out = adassp(X, y, x_norm_bound=B, y_bound=1.0, epsilon=EPS, delta=DELTA, rng=5,
                 ledger=ledger, names=["c", "a", "b"], **kw)
    plan = plan_adassp(d=3, x_norm_bound=B, y_bound=1.0, epsilon=EPS, delta=DELTA,
                       n=300 if kw.get("neighbouring") == "replace-one" else None, **kw)
    stats = ssp_statistics(dpreg._source.ArraySource([X, y], ["0", "1", "2", "y"]),
                           x_norm_bound=B, y_bound=1.0)
    release = release_adassp(stats, plan, np.random.default_rng(5), seeded=True)
    _same_results(out, adassp_result(release, names=["c", "a", "b"]))
    # the ledger was charged exactly once, the plan's budget
    assert [e.stated for e in ledger.events()] == [plan.budget]


@pytest.mark.parametrize("kw", [{}, {"lambda_rule": "literal", "split": "equal",
                                     "neighbouring": "replace-one", "schedule": "1/sqrt(t)"}])
def test_boosted_adassp_is_its_pipeline_bit_for_bit(kw):
    X, y = _design()
    out = boosted_adassp(X, y, epsilon=EPS, delta=DELTA, x_norm_bound=2.0, n_rounds=9, rng=8,
                         **kw)
    plan = plan_boosted(d=3, epsilon=EPS, delta=DELTA, x_norm_bound=2.0, n_rounds=9,
                        n=300 if kw.get("neighbouring") == "replace-one" else None, **kw)
    src = dpreg._source.ArraySource([X, y], ["a", "b", "c", "y"], validated=True)
    release = release_boosted(boosted_statistics(src, plan), plan, np.random.default_rng(8),
                              seeded=True)
    res = boosted_result(release)
    _same_results(out, res)
    np.testing.assert_array_equal(out.extra["xtg_releases"], res.extra["xtg_releases"])
    assert release.values["xtg_releases"].shape == (9, 3)


def _frame(n=250, seed=3):
    g = np.random.default_rng(seed)
    X = pd.DataFrame({"a": g.uniform(0, 10, n), "b": g.uniform(-5, 5, n)})
    y = 2 + 0.3 * X["a"] - 0.2 * X["b"] + g.standard_normal(n)
    return X, y.to_numpy()


@pytest.mark.parametrize("method,options", [
    ("adassp", {}),
    ("adassp", {"inference": False, "lambda_rule": "eigen-floor"}),
    ("adassp", {"neighbouring": "replace-one", "n_boot": 100}),
    ("boosted-adassp", {"n_rounds": 6}),
    ("boosted-adassp", {"n_rounds": 4, "neighbouring": "replace-one", "split": "equal"}),
])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_spec_pipeline_equals_the_estimator_bit_for_bit(method, options, fit_intercept):
    X, y = _frame()
    bx, by = [(0.0, 10.0), (-5.0, 5.0)], (-5.0, 10.0)
    spec = methods.get(method)
    est = spec.make_estimator(epsilon=EPS, delta=DELTA, x_bounds=bx, y_bounds=by,
                              fit_intercept=fit_intercept, ledger=None, random_state=4,
                              options=options).fit(X, y)
    plan = spec.plan(epsilon=EPS, delta=DELTA, n=len(y), x_bounds=bx, y_bounds=by,
                     fit_intercept=fit_intercept, options=options)
    stats = spec.statistics(X.to_numpy(), y, plan)
    release = spec.release(stats, plan, np.random.default_rng(4), seeded=True)
    assert release.privacy == est.privacy_
    sc = plan.options["scaling"]
    b0, coef = sc.to_original(np.asarray(release.values["theta"]))
    np.testing.assert_array_equal(coef, est.coef_)
    assert b0 == est.intercept_
    assert plan.budget == spec.budget(epsilon=EPS, delta=DELTA, options=options, n_features=2)
    if method == "adassp" and est.results_.bootstrap is not None:  # the interval's inputs
        assert release.values["bootstrap_seed"] is not None


def test_spec_plan_refuses_what_the_estimator_refuses():
    bx, by = [(0.0, 1.0)] * 2, (0.0, 1.0)
    spec = methods.get("adassp")
    with pytest.raises(InvalidInputError, match="more rows than model parameters"):
        spec.plan(epsilon=EPS, delta=DELTA, n=3, x_bounds=bx, y_bounds=by,
                  fit_intercept=True, options={"neighbouring": "replace-one"})
    with pytest.raises(InvalidInputError, match="delta is required"):
        spec.plan(epsilon=EPS, delta=None, n=None, x_bounds=bx, y_bounds=by,
                  fit_intercept=True, options={})
    with pytest.raises(InvalidInputError, match="not used"):
        spec.plan(epsilon=EPS, delta=DELTA, n=None, x_bounds=bx, y_bounds=by,
                  fit_intercept=True, options={"inference": False, "n_boot": 100})
    # under add/remove the number of rows never enters the plan
    assert spec.plan(epsilon=EPS, delta=DELTA, n=10**6, x_bounds=bx, y_bounds=by,
                     fit_intercept=True, options={}).n is None


def test_planner_refuses_wangs_calibration_above_its_range():
    """dpreg.plan used to report a charge and an error for a Wang-calibrated AdaSSP at an ε
    the fit refuses (ε = 30 > 21.7 at δ = 1e-6); the plan now refuses it the same way."""
    with pytest.raises(InvalidInputError, match="epsilon must be <= 21.71"):
        dpreg.plan("adassp", 30.0, 1e-6, n=500, formula="y ~ a + b",
                   bounds={"a": (0, 10), "b": (-5, 5), "y": (-5, 10)}, n_sim=20,
                   calibration="wang")


# ------------------------------------------------------------------------ per-group tables
@pytest.mark.parametrize("method,options", [("adassp", {}), ("boosted-adassp", {"n_rounds": 5}),
                                            ("adassp", {"lambda_rule": "eigen-floor",
                                                        "inference": True})])
def test_group_rows_equal_single_fits(method, options):
    from dpreg.grouped._common import group_seed_sequence

    g = np.random.default_rng(11)
    df = pd.DataFrame({"k": np.repeat(["a", "b", "c"], [60, 80, 7]),
                       "x": g.uniform(0, 1, 147)})
    df["y"] = np.clip(0.5 * df["x"] + 0.1 * g.standard_normal(147), -1, 1)
    table = dpreg.fit_by_group(df, "k", "x", "y", method=method, epsilon=EPS, delta=DELTA,
                               bounds={"x": (0, 1), "y": (-1, 1)}, random_state=9,
                               groups=["a", "b", "c"], **options)
    spec = methods.get(method)
    # the table's per-group options: replace-one (n public) and, without ci_alpha, no interval
    single = {**options, "neighbouring": "replace-one"}
    if "inference" in spec.options:
        single.setdefault("inference", False)
    for key in ("a", "b", "c"):
        part = df[df["k"] == key]
        gen = np.random.Generator(np.random.PCG64(
            group_seed_sequence(np.random.SeedSequence(9), key)))
        est = spec.make_estimator(epsilon=EPS, delta=DELTA, x_bounds=[(0.0, 1.0)],
                                  y_bounds=(-1.0, 1.0), fit_intercept=True, ledger=None,
                                  random_state=gen,
                                  options=single)
        est.fit(part[["x"]], part["y"].to_numpy())
        row = table[table["group"] == key].iloc[0]
        assert not row["failed"]
        assert row["slope"] == est.coef_[0]
        assert row["intercept"] == est.intercept_
        assert est.privacy_.neighbouring is Neighbouring.REPLACE_ONE
        assert isinstance(est.privacy_.budget, GDP)
