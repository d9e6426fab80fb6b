"""BoostedAdaSSP reads the rows chunk by chunk in every round (issue 32, item 8).

It used to materialise the scaled design and a row-clipped copy of it (3.9x the input's memory
at n = 1e7).  :class:`~dpreg.multivariate.boosted.BoostedRows` recomputes each chunk's design
rows from the raw columns in a work buffer in every pass: the same rows (clamped, centred,
scaled, row-clipped), statistics equal to the whole-array products up to the summation order,
one compiled loop per chunk where numba is installed and the same operations as NumPy
expressions otherwise (the same release bit for bit).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from dpreg import InvalidInputError
from dpreg._source import ArraySource
from dpreg.linear_model import BoostedAdaSSP
from dpreg.multivariate import boosted as bst
from dpreg.multivariate._common import PublicScaling, clip_rows

BOUNDS_X = [(-1.0, 1.0), (-1.0, 0.5), (0.0, 1.0), (-0.5, 1.0)]


def data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Values outside the bounds, exactly on them, and signed zeros."""
    g = np.random.default_rng(seed)
    X = g.uniform(-1.2, 1.2, (n, 4))
    y = g.normal(0, 3, n)
    X[:50] = [-1.0, 0.5, -0.0, 0.0]
    X[50:100, 2] = -0.0
    y[:20] = -0.0
    y[20:40] = 3.0
    return X, y


def source(X: np.ndarray, y: np.ndarray, **kw) -> ArraySource:
    return ArraySource([X, y], [f"c{j}" for j in range(X.shape[1] + 1)], validated=True, **kw)


SCALINGS = [(fi, ub) for fi in (True, False) for ub in (True, False)]


@pytest.mark.parametrize("fit_intercept,unit_ball", SCALINGS)
@pytest.mark.parametrize("bound", [0.7, 1.0, 5.0])
def test_passes_equal_the_whole_array_products(fit_intercept, unit_ball, bound):
    X, y = data(150_000)  # three chunks
    sc = PublicScaling.from_bounds(BOUNDS_X, (-3, 3), fit_intercept=fit_intercept,
                                   unit_ball=unit_ball)
    rows = bst.BoostedRows(bound, sc)
    src = source(X, y)
    Z = clip_rows(sc.design(X), bound)
    yl = sc.label(y)
    theta = np.linspace(-0.5, 0.7, sc.n_columns)
    np.testing.assert_allclose(rows.gram(src), Z.T @ Z, rtol=1e-12)
    ref = Z.T @ np.clip(yl - Z @ theta, -0.3, 0.3)
    np.testing.assert_allclose(rows.gradient(src, theta, 0.3), ref, rtol=1e-11,
                               atol=1e-11 * np.abs(ref).max())


def test_the_rows_of_a_chunk_are_the_design_rows():
    X, y = data(3000)
    sc = PublicScaling.from_bounds(BOUNDS_X, (-3, 3), fit_intercept=True, unit_ball=True)
    ZT, yv = bst.BoostedRows(0.8, sc).rows([X, y])
    Z = ZT.T
    ref = clip_rows(sc.design(X), 0.8)
    np.testing.assert_allclose(Z, ref, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(yv, sc.label(y))
    assert np.all(np.linalg.norm(Z, axis=1) <= 0.8 * (1 + 1e-15))


@pytest.mark.skipif(bst._round_kernel() is None, reason="numba is not installed")
@pytest.mark.parametrize("fit_intercept,unit_ball", SCALINGS)
@pytest.mark.parametrize("columns", [False, True])
def test_the_compiled_round_equals_the_numpy_round_bit_for_bit(fit_intercept, unit_ball,
                                                               columns, monkeypatch):
    X, y = data(140_000, seed=1)
    X[:, 1] = np.round(X[:, 1] * 3)  # integer-valued, as an int column would be
    sc = PublicScaling.from_bounds(BOUNDS_X, (-3, 3), fit_intercept=fit_intercept,
                                   unit_ball=unit_ball)
    # a 2-D block, or a frame's columns one by one (an int column among them)
    blocks = ([X[:, 0], X[:, 1].astype(np.int64), X[:, 2], X[:, 3], y] if columns
              else [X, y])
    src = ArraySource(blocks, list("abcde"), validated=True)
    theta = np.linspace(-0.4, 0.9, sc.n_columns)
    for bound in (0.6, 1.0):
        rows = bst.BoostedRows(bound, sc)
        compiled = rows.gradient(src, theta, 0.25)
        with monkeypatch.context() as m:
            m.setattr(bst, "_round_kernel", lambda: None)
            plain = rows.gradient(src, theta, 0.25)
        np.testing.assert_array_equal(compiled, plain)
    rows = bst.BoostedRows(1.0)  # no scaling: the design as given
    src = source(X / 3, y)
    compiled = rows.gradient(src, theta[:4], 1.0)
    monkeypatch.setattr(bst, "_round_kernel", lambda: None)
    np.testing.assert_array_equal(compiled, rows.gradient(src, theta[:4], 1.0))


def test_the_estimator_on_a_frame_equals_the_estimator_on_arrays():
    X, y = data(80_000, seed=2)
    kw = dict(epsilon=1.0, delta=1e-6, bounds_X=BOUNDS_X, bounds_y=(-3, 3), n_rounds=6,
              random_state=4)
    a = BoostedAdaSSP(**kw).fit(X, y)
    f = BoostedAdaSSP(**kw).fit(pd.DataFrame(X, columns=list("abcd")), pd.Series(y))
    np.testing.assert_array_equal(a.coef_, f.coef_)
    assert a.intercept_ == f.intercept_


def test_the_scaled_core_needs_validated_rows_in_memory():
    X, y = data(100)
    sc = PublicScaling.from_bounds(BOUNDS_X, (-3, 3), fit_intercept=True, unit_ball=True)
    unchecked = ArraySource([X, y], list("abcde"))
    with pytest.raises(InvalidInputError, match="in memory"):
        bst.boosted_adassp_scaled(unchecked, scaling=sc, epsilon=1.0, delta=1e-6)
    wrong = PublicScaling.from_bounds(BOUNDS_X[:3], (-3, 3), fit_intercept=True)
    with pytest.raises(InvalidInputError, match="one pair of bounds per regressor"):
        bst.boosted_adassp_scaled(source(X, y), scaling=wrong, epsilon=1.0, delta=1e-6)


def test_the_estimator_makes_no_copy_of_the_design():
    """Extra memory of BoostedAdaSSP.fit on a 400,000 × 10 array: chunk buffers and the
    finiteness check, not the scaled design and its row-clipped copy (before: 2.9x)."""
    g = np.random.default_rng(3)
    X = g.uniform(-1.1, 1.1, (400_000, 10))
    y = X.sum(axis=1) + g.normal(0, 1, X.shape[0])

    def fit():
        BoostedAdaSSP(epsilon=1.0, delta=1e-6, bounds_X=(-1, 1), bounds_y=(-10, 10),
                      n_rounds=2, random_state=0).fit(X, y)

    fit()  # warm-up (numba)
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        fit()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak / (X.nbytes + y.nbytes) < 0.5
