"""Fuzzing the mechanisms, the secure samplers, sensitivities and the privacy budgets."""

from __future__ import annotations

import math

import numpy as np
from fuzzlib import FUZZ, anyfloat, bounds, check_release, deltas, epsilons, positive, rngs, vectors
from hypothesis import given
from hypothesis import strategies as st

from dpreg import GDP, ZCDP, ApproxDP, Budget, Ledger, PureDP, compose
from dpreg.mechanisms import (
    exp_quantile,
    gaussian,
    laplace,
    ptr_test,
    quantile_em_probabilities,
    sensitivity,
    smooth_median,
)
from dpreg.mechanisms import secure as S
from dpreg.privacy import gdp_delta, gdp_epsilon, gdp_mu, zcdp_epsilon, zcdp_rho_for_approx

budgets = st.one_of(
    st.builds(PureDP, st.floats(0, 100)), st.builds(ZCDP, st.floats(0, 100)),
    st.builds(GDP, st.floats(0, 10)), st.builds(ApproxDP, st.floats(0, 10), st.floats(0, 0.5)),
    st.sampled_from([None, 1.0, "x", PureDP(math.inf)]))
values = st.one_of(anyfloat, vectors(max_size=6))


@FUZZ
@given(values, positive, epsilons, st.sampled_from([None, 0, 5]))
def test_laplace(value, sens, eps, rng):
    check_release("laplace", lambda led: laplace(value, sensitivity=sens, epsilon=eps, rng=rng),
                  lambda v: v)


@FUZZ
@given(values, positive, budgets, st.sampled_from([None, 0, 5]),
       st.sampled_from(["analytic", "classical", "bad"]))
def test_gaussian(value, sens, budget, rng, cal):
    check_release("gaussian", lambda led: gaussian(value, sensitivity=sens, budget=budget,
                                                   rng=rng, calibration=cal), lambda v: v)


@FUZZ
@given(vectors(max_size=12), st.one_of(st.floats(0, 1), st.sampled_from([-0.1, 2, math.nan])),
       epsilons, anyfloat, anyfloat, st.one_of(positive, st.just(0.0)), rngs,
       st.sampled_from([None, 3]))
def test_exp_quantile(z, q, eps, lo, hi, theta, rng, size):
    check_release("exp_quantile", lambda led: exp_quantile(
        z, q=q, epsilon=eps, lo=lo, hi=hi, theta=theta, rng=rng, size=size), lambda v: v)
    check_release("quantile_em_probabilities", lambda led: quantile_em_probabilities(
        z, q=q, epsilon=eps, lo=lo, hi=hi, theta=theta), lambda v: v)


@FUZZ
@given(vectors(max_size=12), epsilons, anyfloat, anyfloat, st.sampled_from([1, 2, 0, -1]),
       st.sampled_from([1, 3, 0]), rngs)
def test_smooth_median(z, eps, lo, hi, k, dof, rng):
    check_release("smooth_median", lambda led: smooth_median(
        z, epsilon=eps, lo=lo, hi=hi, k=k, dof=dof, rng=rng), lambda v: v)


@FUZZ
@given(anyfloat, epsilons, deltas, rngs)
def test_ptr(distance, eps, dlt, rng):
    check_release("ptr_test", lambda led: ptr_test(distance, epsilon=eps, delta=dlt, rng=rng),
                  lambda v: None)


@FUZZ
@given(values, positive, epsilons, positive)
def test_secure_samplers(value, sens, eps, sigma):
    check_release("secure_laplace", lambda led: S.secure_laplace(
        value, sensitivity=sens, epsilon=eps)[0], lambda v: v)
    check_release("secure_gaussian", lambda led: S.secure_gaussian(
        value, sensitivity=sens, sigma=sigma)[0], lambda v: v)
    check_release("discrete_laplace", lambda led: S.discrete_laplace(sigma, 4), lambda v: None)
    check_release("discrete_gaussian", lambda led: S.discrete_gaussian(sigma, 4), lambda v: None)


@FUZZ
@given(bounds, bounds, st.sampled_from(["add-remove", "replace-one", "bad", None]),
       st.sampled_from([1, 2, 0, -3, 10**9]), positive, positive)
def test_sensitivities(b1, b2, rel, n, norm, tau):
    s = sensitivity
    for name, call in (("sum_sensitivity", lambda: s.sum_sensitivity(b1, rel)),
                       ("mean_sensitivity", lambda: s.mean_sensitivity(b1, n)),
                       ("nvar_sensitivity", lambda: s.nvar_sensitivity(b1, n)),
                       ("ncov_sensitivity", lambda: s.ncov_sensitivity(b1, b2, n)),
                       ("gram_sensitivity", lambda: s.gram_sensitivity(norm, rel)),
                       ("lambda_min_sensitivity", lambda: s.lambda_min_sensitivity(norm, rel)),
                       ("xty_sensitivity", lambda: s.xty_sensitivity(norm, tau, rel)),
                       ("clipped_box_sum_sensitivity",
                        lambda: s.clipped_box_sum_sensitivity(tau, n, rel)),
                       ("sscp_sensitivity", lambda: s.sscp_sensitivity(n, rel))):
        check_release(name, lambda led, call=call: call(), lambda v: v)


def inf_ok(v):
    """Conversions of an infinite budget ("no privacy") answer +inf by design; NaN never."""
    return 0.0 if v == math.inf else v


@FUZZ
@given(budgets, budgets, st.lists(st.one_of(st.floats(0, 10), st.sampled_from([-1, math.nan])),
                                  max_size=4),
       epsilons, deltas, positive)
def test_budgets_and_conversions(b1, b2, weights, eps, dlt, x):
    if isinstance(b1, Budget):  # (``budgets`` also yields non-budgets, for ``compose``)
        check_release("Budget.split", lambda led: b1.split(weights), lambda v: None)
    check_release("compose", lambda led: compose([b1, b2]), lambda v: None)
    check_release("gdp_mu", lambda led: gdp_mu(eps, dlt), inf_ok)
    check_release("gdp_delta", lambda led: gdp_delta(eps, x), inf_ok)
    check_release("gdp_epsilon", lambda led: gdp_epsilon(x, dlt), inf_ok)
    check_release("zcdp_epsilon", lambda led: zcdp_epsilon(x, dlt), inf_ok)
    check_release("zcdp_rho_for_approx", lambda led: zcdp_rho_for_approx(eps, dlt), inf_ok)
    for conv in ("to_approx", "to_zcdp"):
        fn = getattr(b1, conv, None)
        if fn is not None:
            check_release(f"Budget.{conv}", lambda led, fn=fn, conv=conv: fn(dlt) if conv == "to_approx"
                          else fn(), lambda v: None)


@FUZZ
@given(budgets, st.lists(budgets, max_size=5), st.text(max_size=5))
def test_ledger_spend(total, charges, label):
    def run(led):
        own = Ledger(total)
        for c in charges:
            try:
                own.spend(c, label)
            except Exception as exc:
                from dpreg.exceptions import DPRegError

                if not isinstance(exc, DPRegError):
                    raise
        return own.spent()

    check_release("Ledger", run, lambda v: None)
    assert np.isfinite(0.0)
