"""Fuzzing the private preprocessing (dpreg.preprocess) and the auto selection pipeline."""

from __future__ import annotations

import math

from fuzzlib import FUZZ, bounds, check_release, design, epsilons, positive, rngs, vectors
from hypothesis import given
from hypothesis import strategies as st

from dpreg.auto import fit_auto
from dpreg.preprocess import (
    dp_quantile,
    noisy_boundary_count,
    noisy_count,
    noisy_nvar,
    propose_bounds,
    propose_row_norm_bound,
)

quantiles = st.one_of(st.floats(0, 1), st.sampled_from([-0.1, 1.5, math.nan, math.inf]))


@FUZZ
@given(vectors(max_size=15), quantiles, epsilons, bounds, positive, rngs)
def test_quantiles_and_bounds(z, q, eps, coarse, scale, rng):
    check_release("dp_quantile", lambda led: dp_quantile(
        z, q=q, epsilon=eps, coarse_range=coarse, scale=scale, rng=rng, ledger=led),
        lambda v: v.value)
    check_release("propose_bounds", lambda led: propose_bounds(
        z, epsilon=eps, coarse_range=coarse, rng=rng, ledger=led), lambda v: v.bounds)
    check_release("noisy_count", lambda led: noisy_count(z, epsilon=eps, rng=rng, ledger=led),
                  lambda v: v.value)


@FUZZ
@given(design(max_rows=15, max_d=3), epsilons, bounds, rngs)
def test_statistics_of_a_design(data, eps, b, rng):
    X, y = data
    arr = X.to_numpy() if hasattr(X, "to_numpy") else X
    first = arr[:, 0] if getattr(arr, "ndim", 0) == 2 else arr
    k = arr.shape[1] if getattr(arr, "ndim", 0) == 2 else 1
    check_release("noisy_nvar", lambda led: noisy_nvar(
        first, epsilon=eps, x_bounds=b, rng=rng, ledger=led), lambda v: v.value)
    check_release("noisy_boundary_count", lambda led: noisy_boundary_count(
        X, bounds=[b] * k if k > 1 else b if isinstance(b, str) or b is None else [b],
        epsilon=eps, rng=rng, ledger=led), lambda v: v.value)
    check_release("propose_row_norm_bound", lambda led: propose_row_norm_bound(
        X, epsilon=eps, rng=rng, ledger=led), lambda v: v.value)


@FUZZ
@given(design(max_rows=20, max_d=1), epsilons, st.one_of(bounds, st.just("private")),
       st.one_of(bounds, st.just("private")), rngs)
def test_auto_pipeline_one_x(data, eps, bx, by, rng):
    X, y = data
    check_release("fit_auto", lambda led: fit_auto(
        X, y, epsilon=eps, x_bounds=bx if isinstance(bx, str) else [bx], y_bounds=by,
        random_state=rng, ledger=led), lambda r: r.params)
