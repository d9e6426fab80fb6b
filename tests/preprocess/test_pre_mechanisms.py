"""dpreg.preprocess: validation before charge, charges, sensitivities (brute force), noise laws."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from _batch_draws import one_generator_calls
from _stats import ALPHA, ks_pvalue
from dpreg import Ledger, PureDP
from dpreg.exceptions import InvalidInputError, PrivacyLeakWarning
from dpreg.mechanisms import laplace_rows, quantile_em_intervals
from dpreg.preprocess import (
    DEFAULT_COARSE_RANGE,
    boundary_count,
    dp_quantile,
    noisy_boundary_count,
    noisy_count,
    noisy_nvar,
    nvar_sensitivity_for,
    propose_bounds,
    propose_row_norm_bound,
    tukey_n_models,
)


def _nvar(x: np.ndarray) -> float:
    return float(np.sum((x - x.mean()) ** 2))


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize("call", [
    lambda L: noisy_count([1, 2, 3], epsilon=0.0, ledger=L),
    lambda L: noisy_count(-1, epsilon=1.0, ledger=L),
    lambda L: dp_quantile([1.0, np.nan], q=0.5, epsilon=1.0, ledger=L),
    lambda L: dp_quantile([1.0, 2.0], q=1.5, epsilon=1.0, ledger=L),
    lambda L: dp_quantile([], q=0.5, epsilon=1.0, ledger=L),
    lambda L: dp_quantile([1.0], q=0.5, epsilon=1.0, coarse_range=(1, 0), ledger=L),
    lambda L: dp_quantile([1.0], q=0.5, epsilon=1.0, scale=0.0, ledger=L),
    lambda L: propose_bounds([1.0, 2.0], epsilon=1.0, quantiles=(0.8, 0.2), ledger=L),
    lambda L: propose_bounds([1.0, 2.0], epsilon=-1.0, ledger=L),
    lambda L: propose_row_norm_bound(np.ones((3, 2)), epsilon=1.0, coarse_range=(-1, 5), ledger=L),
    lambda L: propose_row_norm_bound(np.array([[np.inf, 1.0]]), epsilon=1.0, ledger=L),
    lambda L: noisy_nvar([0.1, 0.2], epsilon=1.0, x_bounds=(1, 0), ledger=L),
    lambda L: noisy_nvar([0.1, np.inf], epsilon=1.0, x_bounds=(0, 1), ledger=L),
    lambda L: noisy_nvar([0.1, 0.2], epsilon=1.0, x_bounds=(0, 1), neighbouring="swap", ledger=L),
    lambda L: noisy_boundary_count(np.ones((3, 2)), bounds=[(0, 1)], epsilon=1.0, ledger=L),
    lambda L: noisy_boundary_count(np.ones((3, 2)), bounds=[(0, 1), (2, 1)], epsilon=1.0, ledger=L),
    lambda L: noisy_boundary_count(np.array([[0.5, np.nan]]), bounds=[(0, 1)] * 2, epsilon=1.0,
                                   ledger=L),
    lambda L: noisy_boundary_count(np.empty((0, 2)), bounds=[(0, 1)] * 2, epsilon=1.0, ledger=L),
    lambda L: noisy_boundary_count(np.ones((3, 2)), bounds=[(0, 1)] * 2, epsilon=0.0, ledger=L),
    lambda L: noisy_boundary_count([["a", "b"]], bounds=[(0, 1)] * 2, epsilon=1.0, ledger=L),
])
def test_bad_input_is_rejected_before_any_charge(call):
    L = Ledger(PureDP(10.0))
    with pytest.raises(InvalidInputError):
        call(L)
    assert L.events() == []


def test_every_mechanism_charges_exactly_its_epsilon():
    L = Ledger(PureDP(10.0))
    x = np.linspace(0, 1, 40)
    noisy_count(x, epsilon=0.5, ledger=L, rng=0)
    dp_quantile(x, q=0.5, epsilon=0.25, ledger=L, rng=0)
    propose_bounds(x, epsilon=1.0, ledger=L, rng=0)
    propose_row_norm_bound(np.c_[x, x], epsilon=0.75, ledger=L, rng=0)
    noisy_nvar(x, epsilon=0.5, x_bounds=(0, 1), ledger=L, rng=0)
    assert [e.stated.epsilon for e in L.events()] == [0.5, 0.25, 1.0, 0.75, 0.5]
    # the count is add/remove: charged 2ε on this (replace-one) ledger; the rest hold under it
    assert [e.budget.epsilon for e in L.events()] == [1.0, 0.25, 1.0, 0.75, 0.5]
    assert L.spent().epsilon == pytest.approx(3.5)


def test_refused_when_the_ledger_is_short_and_nothing_is_spent():
    from dpreg.exceptions import BudgetExceededError

    L = Ledger(PureDP(0.1))
    with pytest.raises(BudgetExceededError):
        propose_bounds(np.arange(10.0), epsilon=1.0, ledger=L, rng=0)
    assert L.events() == []


# ----------------------------------------------------------------------------- noisy count
def test_noisy_count_noise_is_laplace_one_over_epsilon_with_power():
    eps, n = 0.5, 1000
    # 6000 calls noisy_count(n, ..., rng=gen) with one generator: one batch of its Laplace
    # releases, rounded and floored at 0 as noisy_count does (checked against the calls)
    draws = one_generator_calls(
        lambda g: noisy_count(n, epsilon=eps, rng=g).value,
        lambda rows: np.maximum(0.0, np.round(laplace_rows(np.full(6000, float(n)),
                                                           sensitivity=1.0, epsilon=eps,
                                                           rng=rows))), 11, 6000) - n
    # rounding to integers: compare the mean absolute deviation (1/ε for Laplace, +1/12ε·… tiny)
    mad = float(np.mean(np.abs(draws)))
    se = math.sqrt(1.0 / eps ** 2) / math.sqrt(draws.size)  # sd of |Lap(b)| is b
    assert abs(mad - 1.0 / eps) < 5.5 * se
    for wrong in (0.7, 1.3):
        assert abs(mad - wrong / eps) > 5.5 * se
    assert noisy_count(3, epsilon=0.001, rng=1).value >= 0.0


def test_noisy_count_is_add_remove_and_counts_rows():
    r = noisy_count(np.zeros((7, 3)), epsilon=math.inf, rng=0)
    assert r.value == 7.0
    assert str(r.privacy.neighbouring) == "add-remove"


# ----------------------------------------------------------------------------- DP quantile
def _density_on_grid(z, q, eps, grid, lo=-1e6, hi=1e6, scale=1.0):
    """Exact output density of dp_quantile in the asinh domain, at grid points."""
    u = np.arcsinh(np.clip(np.asarray(z, float), lo, hi) / scale)
    breaks, scores = quantile_em_intervals(u, q=q, epsilon=eps, lo=math.asinh(lo / scale),
                                           hi=math.asinh(hi / scale))
    lengths = np.diff(breaks)
    with np.errstate(divide="ignore"):
        logw = np.log(lengths) + scores
    m = np.max(logw)
    logZ = m + math.log(float(np.sum(np.exp(logw - m))))
    j = np.clip(np.searchsorted(breaks, grid, side="right") - 1, 0, scores.size - 1)
    return scores[j] - logZ


@pytest.mark.parametrize("q", [0.25, 0.5, 0.75])
def test_dp_quantile_log_density_ratio_is_at_most_epsilon_on_neighbours(q):
    eps = 0.8
    g = np.random.default_rng(3)
    grid = np.arcsinh(np.linspace(-50, 50, 4001))
    worst = 0.0
    for _ in range(40):
        z = g.normal(0, 3, 9)
        z2 = z.copy()
        z2[g.integers(9)] = g.choice([-1e7, 1e7, g.normal(0, 30)])
        a = _density_on_grid(z, q, eps, grid)
        b = _density_on_grid(z2, q, eps, grid)
        worst = max(worst, float(np.max(np.abs(a - b))))
        # add/remove: drop one value
        c = _density_on_grid(z[1:], q, eps, grid)
        worst = max(worst, float(np.max(np.abs(a - c))))
    assert worst <= eps + 1e-9
    assert worst > 0.5 * eps  # the bound is nearly attained (the test can see a violation)


def test_dp_quantile_concentrates_near_the_quantile_and_stays_in_range():
    x = np.random.default_rng(0).normal(5.0, 1.0, 2000)
    vals = [dp_quantile(x, q=0.5, epsilon=2.0, rng=s).value for s in range(20)]
    assert all(abs(v - 5.0) < 0.3 for v in vals)
    v = dp_quantile([1e9] * 5, q=0.5, epsilon=1.0, rng=0).value
    assert DEFAULT_COARSE_RANGE[0] <= v <= DEFAULT_COARSE_RANGE[1]


def test_dp_quantile_at_infinite_epsilon_is_the_exact_quantile():
    x = np.array([3.0, 1.0, 2.0, 10.0, 7.0])
    with pytest.warns(PrivacyLeakWarning):
        v = dp_quantile(x, q=0.5, epsilon=math.inf, rng=0).value
    assert v == pytest.approx(3.0)


def test_propose_bounds_covers_the_data_at_moderate_epsilon_and_charges_once():
    x = np.random.default_rng(1).uniform(10, 20, 2000)
    L = Ledger(PureDP(1.0))
    pb = propose_bounds(x, epsilon=1.0, rng=0, ledger=L)
    assert 5.0 < pb.lo < 10.5 and 19.5 < pb.hi < 25.0
    assert len(L.events()) == 1
    # the Tukey-fence-like widening: quartiles ± 1·IQR
    a, b = pb.raw
    assert pb.lo == pytest.approx(a - (b - a)) and pb.hi == pytest.approx(b + (b - a))


def test_row_norm_bound_is_near_the_upper_quantile():
    X = np.random.default_rng(2).normal(size=(3000, 4))
    v = propose_row_norm_bound(X, epsilon=2.0, rng=0, widening=0.0).value
    q95 = float(np.quantile(np.linalg.norm(X, axis=1), 0.95))
    assert abs(v - q95) < 0.15


# ----------------------------------------------------------------------------- noisy nvar
def test_nvar_sensitivity_brute_force_replace_one_and_add_remove():
    a, b = -1.0, 2.0
    vals = np.linspace(a, b, 4)
    for n in (2, 3, 4):
        bound_r = nvar_sensitivity_for((a, b), n, "replace-one")
        bound_a = nvar_sensitivity_for((a, b), n, "add-remove")
        worst_r = worst_a = 0.0
        for data in itertools.product(vals, repeat=n):
            x = np.array(data)
            for i in range(n):
                for v in vals:
                    x2 = x.copy()
                    x2[i] = v
                    worst_r = max(worst_r, abs(_nvar(x) - _nvar(x2)))
            for v in vals:
                worst_a = max(worst_a, abs(_nvar(np.append(x, v)) - _nvar(x)))
        assert worst_r <= bound_r + 1e-12
        assert worst_r == pytest.approx(bound_r)  # attained: (1 − 1/n)·w² is tight
        assert worst_a <= bound_a + 1e-12


@given(st.lists(st.floats(-5, 5), min_size=2, max_size=12), st.floats(-50, 50), st.integers(0, 11))
def test_nvar_sensitivity_property_with_clipping(xs, new, idx):
    xb = (-1.0, 1.5)
    x = np.clip(np.array(xs), *xb)
    x2 = x.copy()
    x2[idx % x.size] = np.clip(new, *xb)
    assert abs(_nvar(x) - _nvar(x2)) <= nvar_sensitivity_for(xb, x.size) + 1e-9


def test_noisy_nvar_noise_is_laplace_with_the_stated_scale_and_power():
    x = np.random.default_rng(5).uniform(0, 4, 50)
    eps, xb = 0.7, (0.0, 4.0)
    exact = _nvar(x)
    scale = (1 - 1 / 50) * 16 / eps
    # 4000 calls with one generator, as one batch of their Laplace releases (checked)
    draws = one_generator_calls(
        lambda g: noisy_nvar(x, epsilon=eps, x_bounds=xb, rng=g).value,
        lambda rows: laplace_rows(np.full(4000, exact), sensitivity=(1 - 1 / 50) * 16,
                                  epsilon=eps, rng=rows), 9, 4000)
    assert ks_pvalue(draws - exact, stats.laplace(scale=scale).cdf) > ALPHA
    for wrong in (0.7, 1.3):
        assert ks_pvalue(draws - exact, stats.laplace(scale=wrong * scale).cdf) < ALPHA


def test_noisy_nvar_clips_to_the_bounds_and_is_exact_at_infinite_epsilon():
    x = np.array([-10.0, 0.0, 0.5, 10.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = noisy_nvar(x, epsilon=math.inf, x_bounds=(0.0, 1.0), rng=0)
    assert r.value == pytest.approx(_nvar(np.clip(x, 0, 1)))


# ----------------------------------------------------------------------------- boundary count
def test_boundary_count_sensitivity_brute_force_replace_one_and_add_remove():
    bounds = [(0.0, 1.0), (-1.0, 1.0)]
    vals = [(-0.5, 0.0), (0.0, 0.0), (0.5, 0.0), (0.5, 1.0), (1.0, -1.0), (0.3, 2.0)]
    worst_r = worst_a = 0
    for n in (1, 2, 3):
        for data in itertools.product(vals, repeat=n):
            X = np.array(data)
            c = boundary_count(X, bounds)
            for i in range(n):
                for v in vals:
                    X2 = X.copy()
                    X2[i] = v
                    worst_r = max(worst_r, abs(c - boundary_count(X2, bounds)))
            for v in vals:
                worst_a = max(worst_a, abs(boundary_count(np.vstack([X, v]), bounds) - c))
    assert worst_r == 1 and worst_a == 1  # sensitivity 1, attained under both relations


def test_boundary_count_counts_rows_on_or_beyond_any_bound():
    X = np.array([[0.0, 0.5], [0.5, 0.5], [0.5, 1.0], [2.0, 3.0], [0.2, 0.8]])
    assert boundary_count(X, [(0.0, 1.0)] * 2) == 3
    assert boundary_count(X[:, 0], [(0.0, 1.0)]) == 2


def test_noisy_boundary_count_noise_is_laplace_one_over_epsilon_with_power():
    X = np.column_stack([np.linspace(0, 1, 200), np.full(200, 0.5)])  # 2 rows on the x bounds
    eps = 0.4
    # 4000 calls with one generator, as one batch of their Laplace releases (checked)
    draws = one_generator_calls(
        lambda g: noisy_boundary_count(X, bounds=[(0, 1)] * 2, epsilon=eps, rng=g).value,
        lambda rows: laplace_rows(np.full(4000, 2.0), sensitivity=1.0, epsilon=eps,
                                  rng=rows), 21, 4000) - 2.0
    assert ks_pvalue(draws, stats.laplace(scale=1 / eps).cdf) > ALPHA
    for wrong in (0.7, 1.3):
        assert ks_pvalue(draws, stats.laplace(scale=wrong / eps).cdf) < ALPHA
    L = Ledger(PureDP(1.0))
    r = noisy_boundary_count(X, bounds=[(0, 1)] * 2, epsilon=0.25, ledger=L, rng=0)
    assert [e.budget.epsilon for e in L.events()] == [0.25]
    assert r.privacy.details["sensitivity"] == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert noisy_boundary_count(X, bounds=[(0, 1)] * 2, epsilon=math.inf, rng=0).value == 2.0


# ----------------------------------------------------------------------------- TukeyEM m
def test_tukey_n_models_from_n():
    assert tukey_n_models(8645, 7) == 617
    assert tukey_n_models(10**7, 5) == 1000
    assert tukey_n_models(10, 7) == 0
    assert tukey_n_models(4000.6, 2, rows_per_coefficient=4) == 500
    with pytest.raises(InvalidInputError):
        tukey_n_models(float("nan"), 3)
