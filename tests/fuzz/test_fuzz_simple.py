"""Fuzzing the one-x functional core: hostile data and parameters never crash, never release
NaN/inf and never charge the ledger when rejected."""

from __future__ import annotations

from fuzzlib import FUZZ, bounds, check_release, deltas, epsilons, positive, rngs, xy
from hypothesis import given
from hypothesis import strategies as st

from dpreg.replicates import REPLICABLE, replicate_predictions
from dpreg.simple import (
    dp_intercept,
    gradient_descent,
    noisy_stats,
    nonprivate_theil_sen,
    ols,
    theil_sen,
    theil_sen_ci,
    theta_guidance,
)


def simple_release(r):
    if r.failed:
        return None
    return [r.released_slope, r.released_intercept, r.released_predictions, r.extra]


@FUZZ
@given(xy(), epsilons, bounds, bounds, rngs)
def test_noisy_stats(data, eps, xb, yb, rng):
    x, y = data
    check_release("noisy_stats", lambda led: noisy_stats(
        x, y, epsilon=eps, x_bounds=xb, y_bounds=yb, ledger=led, rng=rng,
        release_stats=True), simple_release)


@FUZZ
@given(xy(), epsilons, bounds, rngs)
def test_dp_intercept(data, eps, yb, rng):
    x, y = data
    check_release("dp_intercept", lambda led: dp_intercept(
        x, y, epsilon=eps, y_bounds=yb, ledger=led, rng=rng), simple_release)


@FUZZ
@given(xy(max_size=14), epsilons, bounds, st.sampled_from(["exp", "wide", "smooth", "bad"]),
       st.sampled_from(["all", 1, 2, 0, 99, "x"]), st.sampled_from(["predictions", "slope"]),
       st.one_of(st.none(), positive), rngs)
def test_theil_sen(data, eps, out_range, median, pairs, estimand, theta, rng):
    x, y = data
    theta = theta if median == "wide" else None
    check_release("theil_sen", lambda led: theil_sen(
        x, y, epsilon=eps, output_range=out_range, x_bounds=(0, 1), median=median, pairs=pairs,
        estimand=estimand, theta=theta, ledger=led, rng=rng), simple_release)


@FUZZ
@given(xy(max_size=14), st.sampled_from(["pure", "zcdp", "approx"]), epsilons, deltas,
       positive, bounds, bounds, positive, st.sampled_from([1, 3, 0, -1, 10**9]), rngs)
def test_gradient_descent(data, variant, eps, dlt, rho, xb, yb, tau, steps, rng):
    x, y = data
    kw = {"pure": {"epsilon": eps}, "zcdp": {"rho": rho},
          "approx": {"epsilon": eps, "delta": dlt}}[variant]
    check_release("gradient_descent", lambda led: gradient_descent(
        x, y, variant=variant, x_bounds=xb, y_bounds=yb, tau=tau, n_iter=steps, ledger=led,
        rng=rng, **kw), simple_release)


@FUZZ
@given(xy(max_size=12), epsilons, st.one_of(st.floats(1e-3, 0.5), st.sampled_from([0, 1, -1])),
       bounds, st.sampled_from(["union", "tight"]), st.sampled_from(["all", 1, 2]),
       st.booleans(), rngs)
def test_theil_sen_ci(data, eps, alpha, out_range, method, pairs, est, rng):
    x, y = data

    def released(ci):
        return [ci.low, ci.high, ci.estimate]

    check_release("theil_sen_ci", lambda led: theil_sen_ci(
        x, y, epsilon=eps, ci_alpha=alpha, output_range=out_range, ci_method=method, pairs=pairs,
        return_estimate=est, ledger=led, rng=rng), released)


@FUZZ
@given(xy(max_size=12), st.sampled_from(list(REPLICABLE) + ["nope"]), epsilons, bounds,
       st.sampled_from([1, 3, 0]), rngs)
def test_replicate_predictions(data, method, eps, out_range, trials, rng):
    x, y = data
    check_release("replicate_predictions", lambda led: replicate_predictions(
        method, x, y, epsilon=eps, x_bounds=(0, 1), y_bounds=(0, 1), trials=trials,
        output_range=out_range, rng=rng),
        lambda out: out[~__import__("numpy").isnan(out).all(axis=1)])


@FUZZ
@given(xy(max_size=12), positive, positive, positive, positive)
def test_baselines_and_guidance(data, a, b, c, d):
    x, y = data
    # non-private evaluation baselines: no crash (an undefined OLS slope -- constant x -- or SE
    # -- n = 2 -- is reported as NaN by design; they release nothing private)
    check_release("ols", lambda led: ols(x, y), lambda r: None)
    check_release("nonprivate_theil_sen", lambda led: nonprivate_theil_sen(x, y), lambda r: None)
    check_release("theta_guidance", lambda led: theta_guidance(
        sigma_e=b, delta_x=c, R=d, epsilon=a, n=12), lambda v: v)
