"""The SSCP release (covariance-ols) as plan -> statistics -> release -> results (issue 31
item 2).

* the plan is built from public inputs only (no data argument exists); its σ and sensitivity
  are the calibration's, its budget one Gaussian part, and n enters it only where it is public;
* ``release_sscp`` is exactly its pipeline (bit for bit, with one ledger charge), the spec's
  plan/statistics/release equal the estimator's release, and the planner's σ is the plan's;
* a plan refuses what the release refuses, before anything is read, charged or drawn.
"""

import inspect
import math

import numpy as np
import pandas as pd
import pytest

from dpreg import ApproxDP, InvalidInputError, Ledger, methods
from dpreg._source import ArraySource
from dpreg.covariance import (
    SSCPRelease,
    plan_sscp,
    release_sscp,
    release_sscp_matrix,
    sscp_release_result,
    sscp_statistics,
)
from dpreg.covariance.calibration import analyze_gauss_sigma
from dpreg.linear_model import CovarianceOLS
from dpreg.privacy import Neighbouring

EPS, DELTA = 1.0, 1e-6
BOUNDS = [(-1.0, 1.0), (-1.0, 1.0), (-3.0, 3.0)]


def _frame(n=5000, seed=2):
    g = np.random.default_rng(seed)
    df = pd.DataFrame({"a": g.uniform(-1, 1, n), "b": g.uniform(-1, 1, n)})
    df["y"] = 0.3 + df["a"] - 0.5 * df["b"] + 0.2 * g.standard_normal(n)
    return df


def test_the_plan_takes_no_data():
    assert set(inspect.signature(plan_sscp).parameters) == {
        "columns", "bounds", "epsilon", "delta", "neighbouring", "calibration", "psd_tol", "n"}


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
@pytest.mark.parametrize("calibration,eps", [("analytic", EPS), ("classical", 0.5),
                                             ("analytic", math.inf)])
def test_plan_is_public_and_every_field_is_the_calibration(relation, calibration, eps):
    n = 500 if relation == "replace-one" else None
    plan = plan_sscp(columns=["a", "b", "y"], bounds={"a": (-1, 1), "b": (-1, 1), "y": (-3, 3)},
                     epsilon=eps, delta=DELTA, neighbouring=relation, calibration=calibration,
                     psd_tol=1e-8, n=n)
    rel = Neighbouring(relation)
    sens, sigma = analyze_gauss_sigma(3, eps, DELTA, rel, calibration)
    assert plan.method == "covariance-ols"
    assert plan.budget == ApproxDP(eps, DELTA)
    assert plan.relation is rel
    assert dict(plan.parts) == {"sscp": ApproxDP(eps, DELTA)}
    assert plan.n == n and plan.d == 3
    assert dict(plan.sensitivities) == {"sscp": sens}
    assert dict(plan.noise) == {"sscp": sigma}
    assert dict(plan.options) == {"epsilon": eps, "delta": DELTA, "calibration": calibration,
                                  "psd_tol": 1e-8, "columns": ("a", "b", "y"),
                                  "bounds": tuple(BOUNDS)}


@pytest.mark.parametrize("kw,match", [
    ({"n": 100}, "n must be None under add/remove"),
    ({"calibration": "exact"}, "calibration"),
    ({"psd_tol": 1.0}, "psd_tol must be < 1"),
    ({"delta": 0.0}, "delta"),
    ({"epsilon": 2.0, "calibration": "classical"}, "epsilon"),
    ({"bounds": [(-1, 1)]}, "bounds"),
])
def test_plan_refuses_before_anything_is_read(kw, match):
    base = {"columns": ["a", "b", "y"], "bounds": BOUNDS, "epsilon": EPS, "delta": DELTA}
    with pytest.raises(InvalidInputError, match=match):
        plan_sscp(**{**base, **kw})


def test_release_refuses_statistics_of_another_shape():
    plan = plan_sscp(columns=["a", "b", "y"], bounds=BOUNDS, epsilon=EPS, delta=DELTA)
    with pytest.raises(InvalidInputError, match=r"plan's \(4, 4\) SSCP matrix"):
        release_sscp_matrix(np.eye(3), plan, np.random.default_rng(0))


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_release_sscp_is_its_pipeline_bit_for_bit(relation):
    df = _frame()
    ledger = Ledger(ApproxDP(10.0, 1e-3), neighbouring=relation)
    out = release_sscp(df, columns=["a", "b", "y"], bounds=BOUNDS, epsilon=EPS, delta=DELTA,
                       random_state=21, neighbouring=relation, ledger=ledger)
    plan = plan_sscp(columns=["a", "b", "y"], bounds=BOUNDS, epsilon=EPS, delta=DELTA,
                     neighbouring=relation, n=len(df) if relation == "replace-one" else None)
    S = sscp_statistics(ArraySource(df[["a", "b", "y"]].to_numpy(), ["a", "b", "y"]),
                        ["a", "b", "y"], plan.options["bounds"])
    release = release_sscp_matrix(S, plan, np.random.default_rng(21), seeded=True)
    mine = sscp_release_result(release)
    assert isinstance(mine, SSCPRelease)
    np.testing.assert_array_equal(mine.noisy_scaled, out.noisy_scaled)
    assert mine.privacy == out.privacy
    a, b = mine.to_dict(), out.to_dict()
    for d in (a, b):
        d["metadata"].pop("created")  # the time of the release
        d.pop("integrity", None)  # its hash covers the time
        d["privacy"].pop("ledger_charges", None)  # the charge record of the public function
    assert a == b
    pa, pb = mine.regress("y ~ a + b", random_state=5), out.regress("y ~ a + b", random_state=5)
    np.testing.assert_array_equal(pa.params.to_numpy(), pb.params.to_numpy())
    np.testing.assert_array_equal(pa.conf_int().to_numpy(), pb.conf_int().to_numpy())
    # the ledger was charged exactly once, the plan's budget
    assert [e.stated for e in ledger.events()] == [plan.budget]


@pytest.mark.parametrize("options", [{}, {"neighbouring": "replace-one",
                                          "calibration": "classical"}])
def test_spec_pipeline_equals_the_estimator_bit_for_bit(options):
    df = _frame()
    eps = 0.5
    spec = methods.get("covariance-ols")
    bx, by = BOUNDS[:2], BOUNDS[2]
    est = spec.make_estimator(epsilon=eps, delta=DELTA, x_bounds=bx, y_bounds=by,
                              fit_intercept=True, ledger=None, random_state=4,
                              options=options).fit(df[["a", "b"]], df["y"])
    assert isinstance(est, CovarianceOLS)
    plan = spec.plan(epsilon=eps, delta=DELTA, n=len(df), x_bounds=bx, y_bounds=by,
                     fit_intercept=True, options=options)
    stats = spec.statistics(df[["a", "b"]].to_numpy(), df["y"].to_numpy(), plan)
    release = spec.release(stats, plan, np.random.default_rng(4), seeded=True)
    assert release.privacy == est.privacy_
    np.testing.assert_array_equal(release.values["noisy_scaled"], est.release_.noisy_scaled)
    assert plan.budget == spec.budget(epsilon=eps, delta=DELTA, options=options, n_features=2)
    assert plan.n == (len(df) if options else None)  # n is public under replace-one only


def test_spec_plan_refuses_what_the_estimator_refuses():
    spec = methods.get("covariance-ols")
    base = dict(epsilon=EPS, n=None, x_bounds=BOUNDS[:2], fit_intercept=True)
    with pytest.raises(InvalidInputError, match="delta is required"):
        spec.plan(delta=None, y_bounds=BOUNDS[2], options={}, **base)
    with pytest.raises(InvalidInputError, match="y_bounds is required"):
        spec.plan(delta=DELTA, y_bounds=None, options={}, **base)
    with pytest.raises(InvalidInputError, match="epsilon"):
        spec.plan(delta=DELTA, y_bounds=BOUNDS[2], options={"calibration": "classical"},
                  **{**base, "epsilon": 3.0})
    with pytest.raises(InvalidInputError, match="epsilon"):
        CovarianceOLS(epsilon=3.0, delta=DELTA, bounds_X=BOUNDS[:2], bounds_y=BOUNDS[2],
                      calibration="classical").fit(_frame()[["a", "b"]], _frame()["y"])


def test_the_planner_uses_the_plans_sigma():
    spec = methods.get("covariance-ols")
    for rel in ("add-remove", "replace-one"):
        plan = spec.plan(epsilon=EPS, delta=DELTA, n=400, x_bounds=[(0, 1)], y_bounds=(0, 1),
                         fit_intercept=True, options={"neighbouring": rel})
        _, sigma = analyze_gauss_sigma(2, EPS, DELTA, Neighbouring(rel), "analytic")
        assert plan.noise["sscp"] == sigma
