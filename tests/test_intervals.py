"""Bounds of generated formula terms by interval arithmetic (issue 20 item 1).

Exact endpoints for known cases; hypothesis properties that every value of a function (and
every generated model-matrix column of random data inside the declared raw bounds) lies in the
derived interval; domain refusals; the user paths on statsmodels' ``fair`` data that used to
fail with "bounds for regressor ... are missing".
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import dpreg
from dpreg import _formula as F
from dpreg import _intervals as IV
from dpreg.api import parse_formula
from dpreg.exceptions import InvalidInputError

# ------------------------------------------------------------------------------ exact cases


@pytest.mark.parametrize("fn,args,expected", [
    (IV.iv_add, ((1, 2), (-3, 5)), (-2, 7)),
    (IV.iv_sub, ((1, 2), (-3, 5)), (-4, 5)),
    (IV.iv_mul, ((-1, 2), (-3, 5)), (-6, 10)),
    (IV.iv_mul, ((0, 1), (17.5, 42)), (0, 42)),           # dummy x age
    (IV.iv_mul, ((0.5, 23), (17.5, 42)), (8.75, 966)),    # yrs_married x age
    (IV.iv_div, ((-1, 2), (4, 8)), (-0.25, 0.5)),
    (IV.iv_div, ((1, 2), (-4, -2)), (-1, -0.25)),
    (IV.iv_neg, ((1, 2),), (-2, -1)),
    (IV.iv_pow, ((17.5, 42), 2), (306.25, 1764)),
    (IV.iv_pow, ((-1, 2), 2), (0, 4)),                    # even power straddling 0
    (IV.iv_pow, ((-3, 2), 2), (0, 9)),
    (IV.iv_pow, ((-3, -2), 2), (4, 9)),                   # even power below 0: decreasing
    (IV.iv_pow, ((-2, 3), 3), (-8, 27)),                  # odd power: increasing
    (IV.iv_pow, ((-2, 3), 0), (1, 1)),
    (IV.iv_pow, ((2, 4), -1), (0.25, 0.5)),
    (IV.iv_pow, ((-4, -2), -2), (1 / 16, 0.25)),
    (IV.iv_pow, ((4, 9), 0.5), (2, 3)),
    (IV.iv_rpow, (2, (-1, 3)), (0.5, 8)),
    (IV.iv_rpow, (0.5, (-1, 3)), (0.125, 2)),
    (IV.iv_log, ((1, math.e),), (0, 1)),
    (IV.iv_log1p, ((0, math.e - 1),), (0, 1)),
    (IV.iv_exp, ((0, 1),), (1, math.e)),
    (IV.iv_sqrt, ((0, 16),), (0, 4)),
    (IV.iv_abs, ((-3, 2),), (0, 3)),
    (IV.iv_abs, ((-3, -2),), (2, 3)),
    (IV.iv_abs, ((2, 3),), (2, 3)),
])
def test_known_intervals(fn, args, expected):
    lo, hi = fn(*args)
    assert lo == pytest.approx(expected[0], rel=1e-15, abs=1e-300)
    assert hi == pytest.approx(expected[1], rel=1e-15, abs=1e-300)


@pytest.mark.parametrize("fn,args,match", [
    (IV.iv_log, ((0, 42),), "log needs a range above 0"),
    (IV.iv_log, ((-1, 42),), "log needs a range above 0"),
    (IV.iv_log1p, ((-1, 2),), "above -1"),
    (IV.iv_sqrt, ((-0.5, 2),), "sqrt needs a range at or above 0"),
    (IV.iv_div, ((1, 2), (-1, 1)), "includes 0"),
    (IV.iv_div, ((1, 2), (0, 1)), "includes 0"),
    (IV.iv_pow, ((-1, 1), -1), "unbounded"),
    (IV.iv_pow, ((0, 1), -2), "unbounded"),
    (IV.iv_pow, ((-1, 1), 0.5), "at or above 0"),
    (IV.iv_rpow, (-2, (0, 1)), "base above 0"),
    (IV.iv_exp, ((0, 800),), "overflows"),
    (IV.iv_pow, ((1, 1e200), 2), "overflows"),
])
def test_domain_errors(fn, args, match):
    with pytest.raises(IV.DomainError, match=match):
        fn(*args)


# ------------------------------------------------------------------------------ properties
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def interval(draw, lo_min=-1e6, hi_max=1e6):
    a = draw(st.floats(min_value=lo_min, max_value=hi_max, allow_nan=False))
    b = draw(st.floats(min_value=lo_min, max_value=hi_max, allow_nan=False))
    assume(a != b)
    return min(a, b), max(a, b)


@st.composite
def away_from_zero(draw, hi_max=1e6):
    """An interval on one side of 0, at least 1e-3 away from it."""
    lo, hi = draw(interval(lo_min=1e-3, hi_max=hi_max))
    return (lo, hi) if draw(st.booleans()) else (-hi, -lo)


def _inside(iv, n, data):
    """Points of ``iv``: both endpoints and uniform draws."""
    u = np.array([data.draw(st.floats(0, 1)) for _ in range(n)])
    return np.concatenate([[iv[0], iv[1]], iv[0] + u * (iv[1] - iv[0])]).clip(iv[0], iv[1])


def _within(values, iv):
    tol = 1e-12 * max(1.0, abs(iv[0]), abs(iv[1]))
    return bool(np.all(values >= iv[0] - tol) and np.all(values <= iv[1] + tol))


UNARY = [
    (IV.iv_log, np.log, 1e-9), (IV.iv_log1p, np.log1p, -1 + 1e-9), (IV.iv_sqrt, np.sqrt, 0.0),
    (IV.iv_abs, np.abs, -1e6), (IV.iv_neg, np.negative, -1e6),
]


@pytest.mark.parametrize("iv_fn,np_fn,lo_min", UNARY)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_unary_intervals_contain_every_value(iv_fn, np_fn, lo_min, data):
    a = data.draw(interval(lo_min=lo_min))
    xs = _inside(a, 8, data)
    assert _within(np_fn(xs), iv_fn(a))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_exp_interval_contains_every_value(data):
    a = data.draw(interval(lo_min=-700, hi_max=700))
    assert _within(np.exp(_inside(a, 8, data)), IV.iv_exp(a))


@pytest.mark.parametrize("iv_fn,np_fn", [(IV.iv_add, np.add), (IV.iv_sub, np.subtract),
                                         (IV.iv_mul, np.multiply), (IV.iv_div, np.divide)])
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_binary_intervals_contain_every_value(iv_fn, np_fn, data):
    a = data.draw(interval())
    b = data.draw(away_from_zero() if iv_fn is IV.iv_div else interval())
    xs, ys = _inside(a, 6, data), _inside(b, 6, data)
    assert _within(np_fn.outer(xs, ys), iv_fn(a, b))


@settings(max_examples=120, deadline=None)
@given(data=st.data(), k=st.integers(-4, 6))
def test_integer_powers_contain_every_value(data, k):
    a = data.draw(away_from_zero(hi_max=50) if k < 0 else interval(lo_min=-50, hi_max=50))
    out = IV.iv_pow(a, k)
    assert _within(np.power(_inside(a, 10, data), float(k)), out)
    if k > 0 and k % 2 == 0 and a[0] < 0 < a[1]:
        assert out[0] == 0.0  # straddling 0: the minimum is 0, not an endpoint's power


# a formula's generated columns on random data inside the declared raw bounds
TEMPLATES = [
    "y ~ a * b", "y ~ a:b:c", "y ~ I(a ** 2) + I(b ** 3)", "y ~ I((a - 3) / 7)",
    "y ~ abs(b) + exp(b / 1000)", "y ~ C(g, levels=['p', 'q', 'r']):a",
    "y ~ I(a * b - c) + power(a, 2)", "y ~ (a + b + c) ** 2", "y ~ I(-a + 2 * b)",
    "log(y + 1000001) ~ a",
]
POSITIVE = ["y ~ log(c) + sqrt(c) + log1p(c) + I(c ** 0.5) + I(c ** -1) + I(2 ** (c / 1e5))"]


@st.composite
def declared(draw, lo_min=-1e3):
    """Declared raw bounds as a user gives them: width between 0.01 and 1000."""
    lo = draw(st.floats(min_value=lo_min, max_value=1e3))
    return lo, lo + draw(st.floats(min_value=1e-2, max_value=1e3))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), formula=st.sampled_from(TEMPLATES + POSITIVE))
def test_generated_columns_lie_in_derived_bounds(data, formula):
    bounds = {"a": data.draw(declared()), "b": data.draw(declared()), "y": (-1e6, 1e6)}
    bounds["c"] = data.draw(declared(lo_min=1e-3 if formula in POSITIVE else -1e3))
    n = 12
    g = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    frame = pd.DataFrame({
        k: np.concatenate([[lo, hi], g.uniform(lo, hi, n - 2)]) for k, (lo, hi) in bounds.items()
    } | {"g": np.array(["p", "q", "r", "p"] * 3)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mf = parse_formula(frame, formula, bounds)
    for j, (lo, hi) in enumerate(mf.x_bounds):
        assert _within(mf.X[:, j], (lo, hi)), (formula, mf.x_names[j])
    assert _within(mf.y, mf.y_bounds)


# ------------------------------------------------------------------------------ user paths
@pytest.fixture(scope="module")
def fair():
    from dpreg.data import load_dataset

    ds = load_dataset("fair")
    return ds.frame, dict(ds.bounds)


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.WeakSeedWarning")
def test_fair_terms_that_used_to_fail_now_fit(fair):
    """issue 20: C(occupation), yrs_married * age, np.log(age), I(age**2) on fair with
    bounds for the raw columns only (they failed with 'bounds ... are missing')."""
    df, bounds = fair
    r = dpreg.regress(df, "affairs ~ C(occupation, levels=[1, 2, 3, 4, 5, 6]) + "
                      "yrs_married * age + np.log(age) + I(age**2)", method="adassp",
                      epsilon=1.0, delta=1e-6, bounds=bounds, random_state=0)
    assert r.bounds["np.log(age)"] == (math.log(17.5), math.log(42.0))
    assert r.bounds["I(age ** 2)"] == (17.5 ** 2, 42.0 ** 2)
    assert r.bounds["yrs_married:age"] == (0.5 * 17.5, 23.0 * 42.0)
    assert r.bounds["C(occupation, levels=[1, 2, 3, 4, 5, 6])[T.2]"] == (0.0, 1.0)
    text = str(r.summary())
    assert "np.log(age) in [2.8622, 3.73767] (derived)" in text
    assert r.to_dict()["extra"]["derived_bounds"]["yrs_married:age"] == \
        "from age in [17.5, 42], yrs_married in [0.5, 23]"


def test_c_without_declared_levels_says_how_to_declare(fair):
    df, bounds = fair
    with pytest.raises(InvalidInputError, match="codebook entry"):
        dpreg.regress(df, "affairs ~ C(occupation)", method="adassp", epsilon=1.0,
                      delta=1e-6, bounds=bounds)


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
def test_two_spellings_of_a_declared_factor_give_the_same_fit(fair):
    df, bounds = fair
    kw = dict(method="adassp", epsilon=np.inf, delta=1e-6, bounds=bounds, random_state=0)
    cb = {"columns": {"occupation": {"type": "categorical", "levels": [1, 2, 3, 4, 5, 6]}}}
    a = dpreg.regress(df, "affairs ~ C(occupation) + age", codebook=cb, **kw)
    b = dpreg.regress(df, "affairs ~ occupation + age", codebook=cb, **kw)
    c = dpreg.regress(df.assign(occupation=pd.Categorical(df.occupation,
                                                          categories=[1.0, 2, 3, 4, 5, 6])),
                      "affairs ~ occupation + age", **kw)
    assert list(a.params.index)[:2] == ["intercept", "C(occupation)[T.2]"]
    np.testing.assert_allclose(a.params.to_numpy(), b.params.to_numpy())
    np.testing.assert_allclose(a.params.to_numpy(), c.params.to_numpy())
    with pytest.raises(InvalidInputError, match="declared categorical"):
        dpreg.regress(df, "affairs ~ I(occupation * 2)", codebook=cb, **kw)


def test_derivation_refuses_a_range_outside_the_domain(fair):
    df, bounds = fair
    with pytest.raises(InvalidInputError, match=r"cannot derive bounds for regressor "
                       r"'np.log\(children\)'.*children in \[0, 5.5\].*log needs a range above 0"):
        dpreg.regress(df, "affairs ~ log(children)", method="adassp", epsilon=1.0,
                      delta=1e-6, bounds=bounds)
    with pytest.raises(InvalidInputError, match="includes 0"):
        dpreg.regress(df, "affairs ~ I(age / (children - 1))", method="adassp", epsilon=1.0,
                      delta=1e-6, bounds=bounds)


def test_missing_raw_bounds_name_the_raw_column(fair):
    df, _ = fair
    with pytest.raises(InvalidInputError, match=r"'np.log\(age\)' are missing: the raw "
                       r"column\(s\) \['age'\] have no declared bounds"):
        dpreg.regress(df, "affairs ~ log(age)", method="adassp", epsilon=1.0, delta=1e-6,
                      bounds={"affairs": (0, 60)})


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
def test_bounds_given_for_a_term_win_over_derived_ones(fair):
    df, bounds = fair
    r = dpreg.regress(df, "affairs ~ I(age**2)", method="adassp", epsilon=np.inf, delta=1e-6,
                      bounds=bounds | {"I(age ** 2)": (0, 2000)}, random_state=0)
    assert r.bounds["I(age ** 2)"] == (0.0, 2000.0)
    assert "derived_bounds" not in r.extra


def test_unknown_bound_keys_are_errors_with_did_you_mean(fair):
    df, bounds = fair
    with pytest.raises(InvalidInputError, match=r"key 'agee'.*did you mean 'age'\?"):
        dpreg.regress(df, "affairs ~ age", method="adassp", epsilon=1.0, delta=1e-6,
                      bounds=bounds | {"agee": (17, 42)})
    with pytest.raises(InvalidInputError, match=r"'log\(age\)'.*did you mean 'np.log\(age\)'"):
        dpreg.regress(df, "affairs ~ log(age)", method="adassp", epsilon=1.0, delta=1e-6,
                      bounds=bounds | {"log(age)": (2, 4)})


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
def test_raw_columns_are_clamped_before_terms_are_generated():
    """A value outside the declared raw range is clamped before log(), so log never sees it
    (before issue 20 a non-positive value made the whole call fail, naming the term)."""
    df = pd.DataFrame({"x": [-5.0, 1.0, 2.0, 3.0, 50.0], "y": [0.0, 1.0, 2.0, 3.0, 4.0]})
    mf = parse_formula(df, "y ~ log(x)", {"x": (1.0, 10.0), "y": (0.0, 4.0)})
    np.testing.assert_allclose(mf.X[:, 0], np.log([1.0, 1.0, 2.0, 3.0, 10.0]))
    assert mf.x_bounds == [(0.0, math.log(10.0))]


def test_formula_text_keeps_declared_levels_short():
    f = F.declare_levels(F.parse_formula("y ~ C(g) + h:x", ["g", "h", "x", "y"]),
                         {"g": ["a", "b"], "h": [1, 2]})
    assert f.text() == "y ~ C(g) + C(h):x"
    assert "levels=['a', 'b']" in f.internal() and "levels=[1, 2]" in f.internal()
    with pytest.raises(InvalidInputError, match="quotes"):
        F.declare_levels(f, {"g": ["a'); open('x"]})
