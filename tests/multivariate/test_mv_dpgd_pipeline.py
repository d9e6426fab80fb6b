"""Clipped DP-GD (several regressors) as plan -> statistics -> release -> results (issue 31
item 2): the plan is public and holds what the named budget function gives, the core
function is its pipeline bit for bit, and the spec's plan covers any number of regressors."""

import inspect
import math

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import InvalidInputError, Ledger, methods
from dpreg.mechanisms.gaussian import gaussian_sigma
from dpreg.multivariate import (
    PublicScaling,
    dp_gradient_descent,
    dp_gradient_descent_result,
    dpgd_budget,
    dpgd_statistics,
    plan_dp_gradient_descent,
    release_dp_gradient_descent,
)
from dpreg.multivariate._common import l2_clipped_sum_sensitivity
from dpreg.multivariate.dpgd import DIVERGED
from dpreg.privacy import Neighbouring


def _data(n=300, d=3, seed=0):
    g = np.random.default_rng(seed)
    X = g.uniform(-1, 1, (n, d))
    return X, X @ np.linspace(-0.4, 0.4, d) + g.normal(0, 0.1, n)


def test_plan_takes_no_data_and_holds_the_budget_rule():
    assert "X" not in inspect.signature(plan_dp_gradient_descent).parameters
    for rel in ("replace-one", "add-remove"):
        for acct in ("gdp", "zcdp"):
            plan = plan_dp_gradient_descent(n=500, d=4, epsilon=1.5, delta=1e-6, n_iter=40,
                                            accounting=acct, neighbouring=rel, clip_norm=2.0)
            relation = Neighbouring(rel)
            n_rel, per_round, budget = dpgd_budget(1.5, 1e-6, 40, acct, relation)
            assert plan.budget == budget and plan.parts["round"] == per_round
            assert plan.options["n_releases"] == n_rel == 40 + (rel == "add-remove")
            sens = l2_clipped_sum_sensitivity(2.0, relation)
            assert plan.sensitivities["gradient_sum"] == sens
            assert plan.noise["gradient_sd"] == gaussian_sigma(sens, per_round)
            assert plan.d == 4 and plan.n == (500 if rel == "replace-one" else None)
    with pytest.raises(InvalidInputError, match="learning_rate"):
        plan_dp_gradient_descent(n=10, d=2, epsilon=1.0, delta=1e-6, learning_rate=-1)
    with pytest.raises(InvalidInputError, match="n is required"):
        plan_dp_gradient_descent(n=None, d=2, epsilon=1.0, delta=1e-6)


@pytest.mark.parametrize("opts", [{}, {"accounting": "zcdp", "output": "last", "schedule": "1/t"},
                                  {"neighbouring": "add-remove"}, {"clip_norm": 1e150, "learning_rate": 1e160, "output": "last"}])
def test_core_is_its_pipeline_bit_for_bit(opts):
    X, y = _data()
    public = dp_gradient_descent(X, y, epsilon=2.0, delta=1e-6, rng=4, **opts)
    plan = plan_dp_gradient_descent(n=X.shape[0], d=3, epsilon=2.0, delta=1e-6, **opts)
    rel = release_dp_gradient_descent(dpgd_statistics(X, y, plan), plan,
                                      np.random.default_rng(4), seeded=True)
    mine = dp_gradient_descent_result(rel)
    assert mine.failed == public.failed == ("clip_norm" in opts)
    if mine.failed:
        assert mine.reason == public.reason == DIVERGED
    else:
        assert mine.params.tolist() == public.params.tolist()
    assert mine.privacy.as_dict() == public.privacy.as_dict()
    assert mine.extra == public.extra


def test_ledger_untouched_on_bad_input():
    X, y = _data()
    led = Ledger(dpreg.ApproxDP(5.0, 1e-5))
    with pytest.raises(InvalidInputError):
        dp_gradient_descent(X, y, epsilon=1.0, delta=1e-6, schedule="bogus", ledger=led)
    assert led.events() == []  # refused before any charge


@pytest.mark.parametrize("d", [1, 2, 4])
def test_spec_plan_covers_any_d_and_equals_the_fit(d):
    X, y = _data(400, d, 2)
    bx, by = [(-1.0, 1.0)] * d, (-3.0, 3.0)
    spec = methods.get("dp-gd")
    opts = {"algorithm": "clipped", "n_iter": 30}
    plan = spec.plan(epsilon=1.0, delta=1e-6, n=400, x_bounds=bx, y_bounds=by,
                     fit_intercept=True, options=opts)
    assert plan.d == d + 1
    rel = spec.release(spec.statistics(X, y, plan), plan, np.random.default_rng(7),
                       seeded=True)
    sc = PublicScaling.from_bounds(bx, by, fit_intercept=True, unit_ball=True)
    core = dp_gradient_descent(sc.design(X), sc.label(y), epsilon=1.0, delta=1e-6, n_iter=30,
                               intercept=1 / math.sqrt(d + 1), rng=7)
    assert rel.values["theta"].tolist() == core.params.tolist()
    if d > 1:  # "auto" picks the clipped algorithm for several regressors
        auto = spec.plan(epsilon=1.0, delta=1e-6, n=400, x_bounds=bx, y_bounds=by,
                         fit_intercept=True, options={"n_iter": 30})
        assert (auto.budget, auto.d, auto.noise) == (plan.budget, plan.d, plan.noise)
        df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)]).assign(y=y)
        res = dpreg.regress(df, "y ~ " + " + ".join(f"x{j}" for j in range(d)),
                            method="dp-gd", epsilon=1.0, delta=1e-6, n_iter=30,
                            bounds={**{f"x{j}": bx[j] for j in range(d)}, "y": by},
                            random_state=7)
        intercept, coef = sc.to_original(rel.values["theta"])
        assert res.params.tolist() == [intercept, *coef]
    with pytest.raises(InvalidInputError, match="delta"):
        spec.plan(epsilon=1.0, delta=None, n=400, x_bounds=bx, y_bounds=by,
                  fit_intercept=True, options=opts)


def test_spec_simple_algorithm_still_refuses_several_x():
    with pytest.raises(InvalidInputError, match="exactly one regressor"):
        methods.get("dp-gd").plan(epsilon=1.0, delta=None, n=50, x_bounds=[(0, 1)] * 2,
                                  y_bounds=(0, 1), fit_intercept=True,
                                  options={"algorithm": "simple"})


def test_auto_clip_sits_in_the_plan_with_public_n_and_in_the_release_otherwise():
    """Issue 30's public rule in the split: under replace-one the plan fixes C_g from the
    public n (and with it the sensitivity and sd); under add/remove n is private, so the plan
    leaves C_g to the release, which reads it off the noisy count it released first
    (adaptive composition) -- the same budget either way."""
    from dpreg.multivariate.dpgd import DPGD_AUTO_STEPS, dpgd_schedule

    X, y = _data(600, 3, 5)
    ro = plan_dp_gradient_descent(n=600, d=3, epsilon=1.0, delta=1e-6, clip_norm="public")
    T, cg = dpgd_schedule(600, 3, epsilon=1.0, delta=1e-6)
    assert ro.options["n_iter"] == T == DPGD_AUTO_STEPS and ro.options["clip_norm"] == cg < 1.0
    assert ro.sensitivities["gradient_sum"] == l2_clipped_sum_sensitivity(cg, "replace-one")
    ar = plan_dp_gradient_descent(n=None, d=3, epsilon=1.0, delta=1e-6,
                                  clip_norm="public", neighbouring="add-remove")
    assert ar.options["clip_norm"] == "public" and "gradient_sum" not in ar.sensitivities
    assert ar.budget == dpgd_budget(1.0, 1e-6, T, "gdp", Neighbouring.ADD_REMOVE)[2]
    rel = release_dp_gradient_descent(dpgd_statistics(X, y, ar), ar, np.random.default_rng(3),
                                      seeded=True)
    d = rel.privacy.details
    cg_ar = dpgd_schedule(rel.values["n_noisy"], 3, epsilon=1.0, delta=1e-6)[1]
    assert d["clip_norm"] == cg_ar and d["sensitivity"] == l2_clipped_sum_sensitivity(
        cg_ar, "add-remove")
    assert d["noise_sd"] == gaussian_sigma(d["sensitivity"], ar.parts["round"])
    assert d["schedule_rule"] == {"n_iter": "auto", "clip_norm": "public"}


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_estimator_warm_starts_exactly_when_it_adds_the_ones_column(fit_intercept):
    """The estimator declares its ones column (1/√p after the unit-ball scaling) to the core,
    so the default fit starts at the released label mean's intercept; without an intercept
    there is no such column and the descent starts at zero."""
    X, y = _data(300, 2, 4)
    est = dpreg.DPGradientDescent(epsilon=1.0, delta=1e-6, bounds_X=(-1, 1), bounds_y=(-3, 3),
                                  fit_intercept=fit_intercept, n_iter=20, random_state=1)
    sp = est.fit(X, y).results_.privacy.details["spread"]
    if fit_intercept:
        assert sp["warm_start_intercept"] == pytest.approx(sp["y_mean"] * math.sqrt(3), rel=1e-12)
    else:
        assert "warm_start_intercept" not in sp
