"""A DataFrame named by a plain formula is read in place (issue 32, item 8).

``dpreg.regress(df, "y ~ x1 + x2", ...)`` used to clip a copy of every column, build the model
matrix with formulaic, copy it into arrays and copy those into a frame again: 4x the input's
memory and ~30x a one-pass XᵀX at n = 1e7.  Now a formula of plain numeric columns with
declared bounds reads the columns themselves:

* ``covariance-ols``, ``adassp`` and ``boosted-adassp`` (``MethodSpec.reads_columns``) fit from
  an in-memory source of the frame's columns, each row clipped to the public bounds as a chunk
  is read -- the statistics the array path computes, bit for bit;
* the other methods get the same arrays formulaic builds, each column clipped straight into
  the design matrix.

These tests hold the fast path to the old one (formulaic's model matrix, then the array fit),
check that clipping still happens on every row before any statistic, that a NaN is refused
before anything is charged, and that no copy of the frame is made.
"""

from __future__ import annotations

import math
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import ApproxDP, InvalidInputError, Ledger, api

BOUNDS = {"a": (-1.0, 1.0), "b": (-2.0, 2.0), "c d": (-1.5, 1.5), "y": (-3.0, 3.0)}
FORMULAS = ["y ~ a + b + `c d`", "y ~ a - 1", "y ~ 0 + b + a", "y ~ a", "y ~ (a + b)",
            "y ~ a + b + a", "y ~ a + 0 + b", "y ~ 1 + a"]
READS = ["covariance-ols", "adassp", "boosted-adassp"]


def frame(n: int, seed: int = 0) -> pd.DataFrame:
    """Columns partly outside their bounds (and ±inf, which the bounds clip), an integer one."""
    g = np.random.default_rng(seed)
    df = pd.DataFrame({"a": g.uniform(-1.3, 1.3, n), "b": g.integers(-3, 4, n),
                       "c d": g.normal(0, 1, n), "y": g.normal(0, 2, n)})
    df.loc[3, "c d"] = np.inf
    df.loc[5, "y"] = -np.inf
    df.loc[6, "a"] = -0.0
    return df


def old_path(df: pd.DataFrame, formula: str, method: str, **kw):
    """What regress did before: formulaic's model matrix of the clamped columns, then the
    array fit (the code kept for every other formula)."""
    checked = api._check_formula(df, formula, BOUNDS, None)
    mf = api._model_frame(df, formula, BOUNDS, checked)
    return api.fit_arrays(mf.X, mf.y, method=method, x_bounds=mf.x_bounds,
                          y_bounds=mf.y_bounds, x_names=mf.x_names, y_name=mf.y_name,
                          fit_intercept=mf.fit_intercept, **kw)


def same_result(new, old) -> None:
    assert new.failed == old.failed
    if new.failed:  # ⊥ (e.g. TukeyEM's check at small n): the same refusal
        assert new.reason == old.reason
        return
    assert new.params.index.tolist() == old.params.index.tolist()
    np.testing.assert_array_equal(new.params.to_numpy(), old.params.to_numpy())
    assert new.has_bse == old.has_bse
    if new.has_bse:
        np.testing.assert_array_equal(new.bse.to_numpy(), old.bse.to_numpy())
    assert new.nobs == old.nobs and new.dep_var == old.dep_var
    assert new.bounds == old.bounds
    assert str(new.privacy) == str(old.privacy)
    assert str(new.summary()) == str(old.summary())


@pytest.mark.parametrize("formula", FORMULAS)
def test_the_plain_columns_are_the_model_matrix_formulaic_builds(formula):
    df = frame(300)
    checked = api._check_formula(df, formula, BOUNDS, None)
    plain = api._plain_columns(checked, BOUNDS)
    assert plain is not None
    fast = plain.model_frame(df, checked)
    ref = api._model_frame(df, formula, BOUNDS, checked)
    np.testing.assert_array_equal(fast.X, ref.X)
    np.testing.assert_array_equal(fast.y, ref.y)
    assert fast.X.flags.f_contiguous == ref.X.flags.f_contiguous  # the same BLAS layout
    assert (fast.x_names, fast.y_name, fast.fit_intercept) == \
        (ref.x_names, ref.y_name, ref.fit_intercept)
    assert (fast.x_bounds, fast.y_bounds, dict(fast.derived)) == \
        (ref.x_bounds, ref.y_bounds, dict(ref.derived))
    # parse_formula (public) returns these arrays
    np.testing.assert_array_equal(api.parse_formula(df, formula, BOUNDS).X, ref.X)


@pytest.mark.parametrize("formula", ["y ~ a + I(b)", "y ~ a:b", "y ~ log(b + 4)",
                                     "y ~ a + b - b", "y ~ a + flag", "y ~ a + f32"])
def test_other_formulas_and_columns_take_the_model_matrix_builder(formula):
    df = frame(50).assign(flag=lambda d: d.a > 0, f32=lambda d: d.a.astype(np.float32))
    bounds = {**BOUNDS, "flag": (0, 1), "f32": (-1, 1)}
    checked = api._check_formula(df, formula, bounds, None)
    assert api._plain_columns(checked, bounds) is None


@pytest.mark.parametrize("method", READS + ["dp-gd", "noisy-stats", "tukey-em"])
@pytest.mark.parametrize("n", [400, 70_000])  # one chunk; several chunks of 65,536 rows
def test_regress_on_a_frame_equals_the_model_matrix_path(method, n):
    if method == "tukey-em" and n > 400:
        pytest.skip("the model-matrix arrays are compared at n = 400 already")
    df = frame(n, seed=n)
    formulas = ["y ~ a"] if method == "noisy-stats" else ["y ~ a + b + `c d`", "y ~ 0 + b + a"]
    kw = {} if method == "noisy-stats" else {"delta": 1e-6}
    if method == "boosted-adassp":
        kw["n_rounds"] = 5
    for formula in formulas:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            new = dpreg.regress(df, formula, method=method, epsilon=1.0, bounds=BOUNDS,
                                random_state=3, **kw)
            old = old_path(df, formula, method, epsilon=1.0, random_state=3, **kw)
        same_result(new, old)


@pytest.mark.parametrize("method", READS)
def test_every_row_is_clipped_to_the_bounds_before_any_statistic(method):
    """At ε = ∞ (exact, NOT PRIVATE) the fit on the raw frame equals the fit on the frame
    clipped beforehand, and differs from a fit with wider bounds for one column (whose
    outliers then clip to 2, not 1): the outliers (±1e6, ±inf) of the raw columns never reach
    a statistic unclipped."""
    df = frame(3000, seed=1)
    df.loc[10:40, "a"] = 1e6
    df.loc[41:60, "y"] = -1e6
    clipped = df.copy()
    for c, (lo, hi) in BOUNDS.items():
        clipped[c] = clipped[c].clip(lo, hi).astype(float)
    kw = {"delta": 1e-6, "random_state": 0}
    if method == "boosted-adassp":
        kw["n_rounds"] = 3
    formula = "y ~ a + b + `c d`"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = dpreg.regress(df, formula, method=method, epsilon=math.inf, bounds=BOUNDS, **kw)
        pre = dpreg.regress(clipped, formula, method=method, epsilon=math.inf, bounds=BOUNDS,
                            **kw)
        wide = dpreg.regress(df, formula, method=method, epsilon=math.inf,
                             bounds={**BOUNDS, "a": (-2.0, 2.0)}, **kw)
    np.testing.assert_allclose(raw.params.to_numpy(), pre.params.to_numpy(), rtol=1e-12,
                               atol=1e-12)
    assert np.all(np.isfinite(raw.params.to_numpy()))
    assert not np.allclose(wide.params.to_numpy(), raw.params.to_numpy(), rtol=1e-6)


def test_the_columns_source_clips_every_chunk():
    """The statistics step on the frame's columns (several chunks) is the SSCP of the clipped
    values."""
    from dpreg.covariance.release import sscp_statistics

    df = frame(150_000, seed=2)
    checked = api._check_formula(df, "y ~ a + b + `c d`", BOUNDS, None)
    plain = api._plain_columns(checked, BOUNDS)
    source = plain.source(df, checked)
    cols = ["a", "b", "c d", "y"]
    bounds = [BOUNDS[c] for c in cols]
    S = sscp_statistics(source, cols, bounds)
    D = np.column_stack([np.ones(len(df))] + [
        (df[c].clip(*BOUNDS[c]).to_numpy(float) - BOUNDS[c][0]) / (BOUNDS[c][1] - BOUNDS[c][0])
        for c in cols])
    np.testing.assert_allclose(S, D.T @ D, rtol=1e-12)
    assert np.all(D[:, 1:] >= 0) and np.all(D[:, 1:] <= 1)


@pytest.mark.parametrize("method", READS + ["dp-gd"])
@pytest.mark.parametrize("column", ["a", "y", "c d"])
def test_a_missing_value_is_refused_before_anything_is_charged(method, column):
    df = frame(200)
    df.loc[17, column] = np.nan
    led = Ledger(ApproxDP(100.0, 1e-3))
    with pytest.raises(InvalidInputError, match="missing") as err:
        dpreg.regress(df, "y ~ a + b + `c d`", method=method, epsilon=1.0, delta=1e-6,
                      bounds=BOUNDS, ledger=led)
    assert led.events() == []
    assert repr(column) in str(err.value) or f"`{column}`" in str(err.value)
    assert "17" not in str(err.value)  # no row, no value


def test_replace_one_still_needs_more_rows_than_parameters():
    df = frame(10).iloc[:4]  # n = 4 = p (3 regressors and the intercept)
    with pytest.raises(InvalidInputError, match="more rows than model parameters"):
        dpreg.regress(df, "y ~ a + b + `c d`", method="covariance-ols", epsilon=1.0,
                      delta=1e-6, bounds=BOUNDS, neighbouring="replace-one")


def test_a_bound_for_an_unknown_column_is_still_refused():
    with pytest.raises(InvalidInputError, match="did you mean|not a column|unknown"):
        dpreg.regress(frame(50), "y ~ a", method="adassp", epsilon=1.0, delta=1e-6,
                      bounds={**BOUNDS, "aa": (0, 1)})


def peak_over_input(fn, df: pd.DataFrame) -> float:
    fn()  # warm-up: imports, numba
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / df.memory_usage(index=False).sum()


@pytest.mark.parametrize("method", READS)
def test_a_frame_is_not_copied(method):
    """Extra memory of a fit on a 500,000-row frame: the chunk buffers (a few MB), not a
    copy of the frame (before: 2.9x the frame for covariance-ols and adassp, 5.7x for
    boosted-adassp)."""
    df = frame(500_000, seed=4).replace([np.inf, -np.inf], 0.0)
    kw = {"n_rounds": 2} if method == "boosted-adassp" else {}

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dpreg.regress(df, "y ~ a + b + `c d`", method=method, epsilon=1.0, delta=1e-6,
                          bounds=BOUNDS, random_state=0, **kw)

    assert peak_over_input(fit, df) < 0.5


def test_an_array_fit_wraps_the_design_without_copying_it():
    """``MethodSpec.fit`` hands the estimator a frame over the design (pandas copies an
    array into a new frame by default)."""
    g = np.random.default_rng(5)
    X = g.uniform(-1, 1, (400_000, 6))
    y = X.sum(axis=1)

    def fit():
        api.fit_arrays(X, y, method="adassp", epsilon=1.0, delta=1e-6,
                       x_bounds=[(-1.0, 1.0)] * 6, y_bounds=(-6.0, 6.0), random_state=0)

    fit()
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        fit()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak / (X.nbytes + y.nbytes) < 0.5
