"""TukeyEM as plan -> statistics -> release -> results (issue 31 item 2).

* the plan is built from public inputs only (no data argument exists) and every field is what
  the named pure functions give (the model count, the PTR/EM split, the PTR threshold);
* ``tukey_em`` is exactly its pipeline (bit for bit, the PTR ⊥ and ε = inf included), the
  spec's plan/statistics/release equal the estimator's fit, and a per-group table's rows equal
  single fits;
* a plan refuses what the fit refuses, before anything is read, charged or drawn.
"""

import inspect
import math
from contextlib import nullcontext

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import ApproxDP, InvalidInputError, Ledger, PureDP, methods
from dpreg.exceptions import PrivacyLeakWarning
from dpreg.linear_model import TukeyEM
from dpreg.mechanisms.ptr import ptr_threshold
from dpreg.multivariate import (
    PublicScaling,
    TukeyStatistics,
    plan_tukey_em,
    release_tukey_em,
    tukey_auto_n_models,
    tukey_em,
    tukey_em_result,
    tukey_split,
    tukey_statistics,
)
from dpreg.multivariate.tukey import PTR_FAILED, target_depth
from dpreg.privacy import Neighbouring

EPS, DELTA = 1.0, 1e-5


def _design(n=4000, seed=1):
    g = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), g.uniform(-1, 1, (n, 2))])
    y = X @ [0.3, 1.0, -0.5] + 0.2 * g.standard_normal(n)
    return X, y


# ------------------------------------------------------------------------ the plan
def test_the_plan_takes_no_data():
    params = set(inspect.signature(plan_tukey_em).parameters)
    assert params == {"n", "d", "epsilon", "delta", "n_models", "scaling", "intercept_column"}


@pytest.mark.parametrize("n_models", ["auto", 50])
@pytest.mark.parametrize("eps", [EPS, 3.0, math.inf])
def test_plan_is_public_and_every_field_is_the_named_functions(n_models, eps):
    n, d = 4003, 3
    plan = plan_tukey_em(n=n, d=d, epsilon=eps, delta=DELTA, n_models=n_models)
    m = tukey_auto_n_models(n, d, epsilon=eps, delta=DELTA) if n_models == "auto" else 50
    ptr_part, em_part = tukey_split(eps, DELTA)
    assert (ptr_part, em_part) == (ApproxDP(eps / 2, DELTA), PureDP(eps / 2))
    assert plan.method == "tukey-em"
    assert plan.budget == ApproxDP(eps, DELTA)
    assert plan.relation is Neighbouring.REPLACE_ONE
    assert dict(plan.parts) == {"ptr": ptr_part, "em": em_part}
    assert plan.n == n and plan.d == d
    assert dict(plan.sensitivities) == {"ptr_distance": 1.0, "em_depth": 1.0}
    assert dict(plan.noise) == {"ptr_distance": 0.0 if math.isinf(eps) else 2.0 / eps}
    b = n // m
    assert dict(plan.options) == {
        "epsilon": eps, "delta": DELTA, "n_models": m,
        "n_models_choice": "auto" if n_models == "auto" else "given", "batch_size": b,
        "rows_unused": n - m * b, "target_depth": target_depth(m),
        "epsilon_ptr": eps / 2, "epsilon_em": eps / 2,
        "ptr_threshold": None if math.isinf(eps) else ptr_threshold(eps / 2, DELTA),
        "scaling": None, "intercept_column": False}
    with pytest.raises(TypeError):
        plan.options["epsilon"] = 2.0  # frozen


def test_the_split_composes_to_the_whole():
    for eps in (0.1, 1.0, 7.5):
        ptr_part, em_part = tukey_split(eps, DELTA)
        assert ptr_part.epsilon + em_part.epsilon == eps
        assert ptr_part.delta == DELTA


@pytest.mark.parametrize("kw,match", [
    ({"n_models": "many"}, "n_models must be 'auto' or an integer >= 8"),
    ({"n_models": 7}, "n_models must be"),
    ({"n_models": 500}, r"n_models must be <= n // d = 333"),
    ({"n": 39}, r"n_models='auto' needs n >= 8·\(d \+ 2\) = 40 rows"),
    ({"delta": 0.0}, "delta"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"d": 0}, "d must be"),
    ({"intercept_column": 1}, "intercept_column must be True or False"),
])
def test_plan_refuses_before_anything_is_read(kw, match):
    base = {"n": 1000, "d": 3, "epsilon": EPS, "delta": DELTA}
    with pytest.raises(InvalidInputError, match=match):
        plan_tukey_em(**{**base, **kw})


def test_the_fit_refuses_like_its_plan_before_any_charge():
    X, y = _design(n=1000)
    ledger = Ledger(ApproxDP(10.0, 1e-3))
    with pytest.raises(InvalidInputError, match="n_models must be <= n // d = 333"):
        tukey_em(X, y, epsilon=EPS, delta=DELTA, n_models=500, ledger=ledger)
    assert list(ledger.events()) == []  # refused before the charge


def test_release_refuses_statistics_of_another_shape():
    X, y = _design(n=1000)
    plan = plan_tukey_em(n=1000, d=3, epsilon=EPS, delta=DELTA, n_models=50)
    stats = TukeyStatistics(X[:, :2], y)
    with pytest.raises(InvalidInputError, match="plan's n=1000 rows and d=3 columns"):
        release_tukey_em(stats, plan, np.random.default_rng(0))
    with pytest.raises(InvalidInputError, match="plan's n=1000 rows and d=3 columns"):
        tukey_statistics(X[:999], y[:999], plan)


# ------------------------------------------------------------------------ the pipeline
def _same_results(a, b):
    assert a.failed == b.failed and a.reason == b.reason
    if not a.failed:
        np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())
        assert list(a.params.index) == list(b.params.index)
    assert a.privacy == b.privacy
    assert a.nobs == b.nobs
    assert a.uncertainty == b.uncertainty
    assert a.extra == b.extra


@pytest.mark.parametrize("n,eps,n_models,failed", [
    (4000, EPS, "auto", False),   # PTR passes: the exponential mechanism's draw
    (200, 0.1, 20, True),         # PTR fails: ⊥
    (4000, math.inf, 50, False),  # the non-private limit: the coordinate-wise median
])
def test_tukey_em_is_its_pipeline_bit_for_bit(n, eps, n_models, failed):
    X, y = _design(n=n)
    ledger = Ledger(ApproxDP(math.inf, 1e-3)) if math.isinf(eps) else Ledger(
        ApproxDP(10.0, 1e-3))
    with pytest.warns(PrivacyLeakWarning) if math.isinf(eps) else nullcontext():
        out = tukey_em(X, y, epsilon=eps, delta=DELTA, n_models=n_models, rng=7,
                       ledger=ledger, names=["c", "a", "b"])
    assert out.failed is failed
    plan = plan_tukey_em(n=n, d=3, epsilon=eps, delta=DELTA, n_models=n_models)
    release = release_tukey_em(tukey_statistics(X, y, plan), plan, np.random.default_rng(7),
                               seeded=True)
    assert release.failed is failed
    if failed:  # ⊥ carries no estimate, only its reason
        assert dict(release.values) == {} and release.reason == PTR_FAILED
    _same_results(out, tukey_em_result(release, names=["c", "a", "b"]))
    # the ledger was charged exactly once, the plan's budget
    assert [e.stated for e in ledger.events()] == [plan.budget]


def test_the_non_private_limit_is_the_median_of_the_models():
    X, y = _design(n=2000)
    plan = plan_tukey_em(n=2000, d=3, epsilon=math.inf, delta=DELTA, n_models=40)
    rel = release_tukey_em(tukey_statistics(X, y, plan), plan, np.random.default_rng(3))
    # the same partition, without jitter: OLS per batch, coordinate-wise median
    g = np.random.default_rng(3)
    order = g.permutation(2000)[:2000]
    models = np.array([np.linalg.lstsq(X[o], y[o], rcond=None)[0]
                       for o in order.reshape(40, 50)])
    np.testing.assert_allclose(rel.values["theta"], np.median(models, axis=0), rtol=1e-8)


# ------------------------------------------------------------------------ spec and estimator
@pytest.mark.parametrize("bounds", [True, False])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_spec_pipeline_equals_the_estimator_bit_for_bit(bounds, fit_intercept):
    X, y = _design()
    Xf = pd.DataFrame(X[:, 1:] * 3 + 1, columns=["a", "b"])
    bx, by = ([(-2.0, 4.0), (-2.0, 4.0)], (-3.0, 3.0)) if bounds else (None, None)
    spec = methods.get("tukey-em")
    est = spec.make_estimator(epsilon=EPS, delta=DELTA, x_bounds=bx, y_bounds=by,
                              fit_intercept=fit_intercept, ledger=None, random_state=4,
                              options={}).fit(Xf, y)
    plan = spec.plan(epsilon=EPS, delta=DELTA, n=len(y), x_bounds=bx, y_bounds=by,
                     fit_intercept=fit_intercept, options={}, n_features=2)
    stats = spec.statistics(Xf.to_numpy(), y, plan)
    release = spec.release(stats, plan, np.random.default_rng(4), seeded=True)
    assert release.privacy == est.privacy_
    assert not release.failed
    theta = np.asarray(release.values["theta"])
    sc = plan.options["scaling"]
    if sc is not None:
        assert isinstance(sc, PublicScaling)
        b0, coef = sc.to_original(theta)
    else:
        b0, coef = (float(theta[0]), theta[1:]) if fit_intercept else (0.0, theta)
    np.testing.assert_array_equal(coef, est.coef_)
    assert b0 == est.intercept_
    assert plan.budget == spec.budget(epsilon=EPS, delta=DELTA, options={}, n_features=2)


def test_spec_plan_refuses_what_the_estimator_refuses():
    spec = methods.get("tukey-em")
    bx = [(0.0, 1.0)] * 2
    base = dict(epsilon=EPS, n=1000, x_bounds=bx, y_bounds=None, fit_intercept=True)
    with pytest.raises(InvalidInputError, match="delta is required"):
        spec.plan(delta=None, options={}, **base)
    with pytest.raises(InvalidInputError, match="n is required"):
        spec.plan(delta=DELTA, options={}, **{**base, "n": None})
    with pytest.raises(InvalidInputError, match="bounds_X must be given together"):
        spec.plan(delta=DELTA, options={}, **{**base, "x_bounds": None, "y_bounds": (0, 1)})
    with pytest.raises(InvalidInputError, match="n_models"):
        spec.plan(delta=DELTA, options={"n_models": 3}, **base)
    with pytest.raises(InvalidInputError, match="n_models must be <= n // d = 333"):
        spec.plan(delta=DELTA, options={"n_models": 400}, **base)
    # the estimator refuses the same model count
    X, y = _design(n=1000)
    with pytest.raises(InvalidInputError, match="n_models must be <= n // d = 333"):
        TukeyEM(epsilon=EPS, delta=DELTA, n_models=400, bounds_X=bx).fit(X[:, 1:], y)


# ------------------------------------------------------------------------ per-group tables
def test_group_rows_equal_single_fits():
    from dpreg.grouped._common import group_seed_sequence

    g = np.random.default_rng(11)
    sizes = [3000, 2500, 10]
    df = pd.DataFrame({"k": np.repeat(["a", "b", "c"], sizes),
                       "x": g.uniform(0, 1, sum(sizes))})
    df["y"] = np.clip(0.5 * df["x"] + 0.1 * g.standard_normal(sum(sizes)), -1, 1)
    table = dpreg.fit_by_group(df, "k", "x", "y", method="tukey-em", epsilon=EPS, delta=DELTA,
                               bounds={"x": (0, 1), "y": (-1, 1)}, random_state=9,
                               groups=["a", "b", "c"])
    spec = methods.get("tukey-em")
    for key in ("a", "b"):
        part = df[df["k"] == key]
        gen = np.random.Generator(np.random.PCG64(
            group_seed_sequence(np.random.SeedSequence(9), key)))
        est = spec.make_estimator(epsilon=EPS, delta=DELTA, x_bounds=[(0.0, 1.0)],
                                  y_bounds=(-1.0, 1.0), fit_intercept=True, ledger=None,
                                  random_state=gen, options={})
        est.fit(part[["x"]], part["y"].to_numpy())
        row = table[table["group"] == key].iloc[0]
        assert not row["failed"]
        assert row["slope"] == est.coef_[0]
        assert row["intercept"] == est.intercept_
        assert est.privacy_.neighbouring is Neighbouring.REPLACE_ONE
    assert table[table["group"] == "c"].iloc[0]["failed"]  # too few rows: ⊥, no fit
