"""Fuzzing the multivariate cores, the covariance release, every estimator and the formula API:
hostile designs (NaN, ±inf, 1e308, d > n, constant/duplicate columns, object columns, ragged
rows) and hostile parameters never crash, never release NaN/inf and are never charged when
rejected (contract in ``fuzzlib``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from fuzzlib import FUZZ, bounds, check_release, deltas, design, epsilons, positive, rngs, xy
from hypothesis import given
from hypothesis import strategies as st

from dpreg import linear_model as lm
from dpreg.api import fit_arrays, regress
from dpreg.covariance import release_sscp
from dpreg.multivariate import adassp, boosted_adassp, dp_gradient_descent, tukey_em


def results_release(r):
    """Released numbers of a RegressionResults (None for ⊥)."""
    if r.failed:
        return None
    return [r.params.to_numpy(dtype=float),
            None if not r.has_bse else r.bse.to_numpy(dtype=float)]


def estimator_release(est):
    out = [np.asarray(est.coef_, dtype=float), np.asarray(est.intercept_, dtype=float)]
    res = getattr(est, "results_", None)
    if res is not None and not res.failed:
        out.append(res.params.to_numpy(dtype=float))
    return out


@FUZZ
@given(design(), epsilons, deltas, positive, positive,
       st.sampled_from(["add-remove", "replace-one", "bad"]), rngs)
def test_adassp(data, eps, dlt, xnorm, ybound, rel, rng):
    X, y = data
    check_release("adassp", lambda led: adassp(
        X, y, x_norm_bound=xnorm, y_bound=ybound, epsilon=eps, delta=dlt, neighbouring=rel,
        rng=rng, ledger=led), results_release)


@FUZZ
@given(design(max_rows=20, max_d=3), epsilons, deltas, positive, positive,
       st.sampled_from([1, 3, 0, -2]), rngs)
def test_boosted_adassp(data, eps, dlt, xnorm, tau, rounds, rng):
    X, y = data
    check_release("boosted_adassp", lambda led: boosted_adassp(
        X, y, epsilon=eps, delta=dlt, x_norm_bound=xnorm, tau=tau, n_rounds=rounds, rng=rng,
        ledger=led), results_release)


@FUZZ
@given(design(max_rows=24, max_d=2), epsilons, deltas, st.sampled_from([2, 3, 0, 1, 10**9]), rngs)
def test_tukey_em(data, eps, dlt, m, rng):
    X, y = data
    check_release("tukey_em", lambda led: tukey_em(
        X, y, epsilon=eps, delta=dlt, n_models=m, rng=rng, ledger=led), results_release)


@FUZZ
@given(design(max_rows=20, max_d=3), epsilons, deltas, positive, st.sampled_from([1, 5, 0, -1]),
       st.sampled_from(["gdp", "zcdp", "bad"]), st.sampled_from(["average", "last", "x"]), rngs)
def test_dp_gradient_descent(data, eps, dlt, clip, iters, acc, output, rng):
    X, y = data
    check_release("dp_gradient_descent", lambda led: dp_gradient_descent(
        X, y, epsilon=eps, delta=dlt, clip_norm=clip, n_iter=iters, accounting=acc,
        output=output, rng=rng, ledger=led), results_release)


@FUZZ
@given(design(max_rows=20, max_d=3), epsilons, deltas, bounds, rngs)
def test_release_sscp(data, eps, dlt, b, rng):
    X, y = data
    try:
        frame = pd.DataFrame(np.asarray(X))
        frame.columns = [f"c{j}" for j in range(frame.shape[1])]
        frame["y"] = y
    except Exception:  # ragged rows: give the raw object to the function
        frame = X
    cols = [c for c in getattr(frame, "columns", []) if c != "y"] + ["y"]

    def released(rel):
        return [rel.to_dict() if hasattr(rel, "to_dict") else None]

    check_release("release_sscp", lambda led: release_sscp(
        frame, columns=cols, bounds={c: b for c in cols}, epsilon=eps, delta=dlt, random_state=rng,
        ledger=led), lambda rel: None)
    check_release("release_sscp.regress", lambda led: release_sscp(
        frame, columns=cols, bounds={c: b for c in cols}, epsilon=eps, delta=dlt, random_state=rng,
        ledger=led).regress("y ~ " + " + ".join(cols[:-1]) if len(cols) > 1 else "y ~ 1"),
        results_release)


ESTIMATORS = {
    "NoisyStats": lambda eps, dlt, bx, by, rng, led: lm.NoisyStats(
        epsilon=eps, bounds_X=bx, bounds_y=by, random_state=rng, ledger=led),
    "DPTheilSen": lambda eps, dlt, bx, by, rng, led: lm.DPTheilSen(
        epsilon=eps, bounds_X=bx, bounds_y=by, random_state=rng, ledger=led),
    "DPGradientDescent": lambda eps, dlt, bx, by, rng, led: lm.DPGradientDescent(
        epsilon=eps, bounds_X=bx, bounds_y=by, random_state=rng, ledger=led),
    "DPGradientDescent-approx": lambda eps, dlt, bx, by, rng, led: lm.DPGradientDescent(
        epsilon=eps, delta=dlt, bounds_X=bx, bounds_y=by, random_state=rng, ledger=led),
    "AdaSSP": lambda eps, dlt, bx, by, rng, led: lm.AdaSSP(
        epsilon=eps, delta=dlt, bounds_X=bx, bounds_y=by, random_state=rng, ledger=led),
    "BoostedAdaSSP": lambda eps, dlt, bx, by, rng, led: lm.BoostedAdaSSP(
        epsilon=eps, delta=dlt, bounds_X=bx, bounds_y=by, n_rounds=3, random_state=rng,
        ledger=led),
    "TukeyEM": lambda eps, dlt, bx, by, rng, led: lm.TukeyEM(
        epsilon=eps, delta=dlt, n_models=2, bounds_X=bx, bounds_y=by, random_state=rng,
        ledger=led),
    "CovarianceOLS": lambda eps, dlt, bx, by, rng, led: lm.CovarianceOLS(
        epsilon=eps, delta=dlt, bounds_X=bx, bounds_y=by, random_state=rng, ledger=led),
}


@FUZZ
@given(st.sampled_from(sorted(ESTIMATORS)), design(max_rows=20, max_d=2), epsilons, deltas,
       st.one_of(bounds, st.just([(0, 1), (0, 1)])), bounds, rngs)
def test_estimators(name, data, eps, dlt, bx, by, rng):
    X, y = data
    check_release(f"estimator:{name}",
                  lambda led: ESTIMATORS[name](eps, dlt, bx, by, rng, led).fit(X, y),
                  estimator_release)


@FUZZ
@given(st.sampled_from(sorted(ESTIMATORS)), xy(max_size=16), epsilons, rngs)
def test_estimators_one_x(name, data, eps, rng):
    x, y = data
    X = np.asarray(x).reshape(-1, 1) if np.ndim(x) == 1 else x
    check_release(f"estimator-1x:{name}",
                  lambda led: ESTIMATORS[name](eps, 1e-6, (0, 1), (0, 1), rng, led).fit(X, y),
                  estimator_release)


METHODS = ["noisy-stats", "dp-intercept", "theil-sen-exp", "theil-sen-wide", "theil-sen-smooth",
           "dp-gd", "adassp", "boosted-adassp", "tukey-em", "covariance-ols", "nope"]


@FUZZ
@given(st.sampled_from(METHODS), xy(max_size=16), epsilons, st.sampled_from([None, 1e-6, 0, 2.0]),
       bounds, bounds, rngs, st.sampled_from(["y ~ x", "y ~ x - 1", "y ~ q", "nonsense ~~"]))
def test_regress_and_fit_arrays(method, data, eps, dlt, bx, by, rng, formula):
    x, y = data
    try:
        frame = pd.DataFrame({"x": x, "y": y})
    except Exception:
        frame = {"x": x, "y": y}
    opts = {"n_models": 2} if method == "tukey-em" else {}
    check_release(f"regress:{method}", lambda led: regress(
        frame, formula, method=method, epsilon=eps, bounds={"x": bx, "y": by}, delta=dlt,
        ledger=led, random_state=rng, **opts), results_release)
    X = np.asarray(x).reshape(-1, 1) if np.ndim(x) == 1 else x
    check_release(f"fit_arrays:{method}", lambda led: fit_arrays(
        X, y, method=method, epsilon=eps, x_bounds=[bx], y_bounds=by, delta=dlt, ledger=led,
        random_state=rng, **opts), results_release)


@FUZZ
@given(xy(max_size=16), st.sampled_from(["noisy-stats", "theil-sen-exp", "dp-gd", "adassp",
                                         "bogus"]),
       epsilons, bounds, bounds, st.sampled_from(["local", "reference", "nope"]), rngs,
       st.sampled_from([None, ["a", "b"], [], ["zzz"], "from-data", ["a", "a"]]))
def test_fit_by_group(data, method, eps, bx, by, backend, rng, groups):
    from dpreg.grouped import fit_by_group

    x, y = data
    try:
        frame = pd.DataFrame({"x": x, "y": y})
        frame["g"] = np.where(np.arange(len(frame)) % 2 == 0, "a", "b")
    except Exception:
        frame = {"x": x, "y": y, "g": "a"}

    def released(table):
        num = table.select_dtypes("number")
        ok = ~table["failed"].astype(bool) if "failed" in table else slice(None)
        return num[ok].drop(columns=[c for c in num if c in ("n", "failed")], errors="ignore")

    check_release(f"fit_by_group:{method}", lambda led: fit_by_group(
        frame, "g", "x", "y", method=method, epsilon=eps, bounds={"x": bx, "y": by},
        delta=1e-6 if method == "adassp" else None, groups=groups, backend=backend,
        random_state=rng), released)
