"""Bad inputs: a clear InvalidInputError naming the parameter, and nothing charged."""

import math

import numpy as np
import pytest

from dpreg import Ledger, PureDP
from dpreg.exceptions import InvalidInputError
from dpreg.simple import dp_intercept, gradient_descent, noisy_stats, theil_sen, theil_sen_ci

X = np.linspace(0.1, 0.9, 12)
Y = 0.5 * X + 0.2

BASE = {
    noisy_stats: {"epsilon": 1.0, "x_bounds": (0, 1), "y_bounds": (0, 1)},
    dp_intercept: {"epsilon": 1.0, "y_bounds": (0, 1)},
    theil_sen: {"epsilon": 1.0, "output_range": (-1, 2)},
    gradient_descent: {"epsilon": 1.0, "x_bounds": (0, 1), "y_bounds": (0, 1)},
    theil_sen_ci: {"epsilon": 1.0, "output_range": (-1, 2)},
}
ALL = list(BASE)

DATA_CASES = [
    ((X[:1], Y[:1]), "at least 2"),
    ((np.append(X[:-1], np.nan), Y), "finite"),
    ((X, np.append(Y[:-1], np.inf)), "finite"),
    ((X, Y[:-1]), "same number"),
    ((X.reshape(-1, 1), Y), "ndim"),
    ((["a"] * 12, Y), "real"),
    ((None, Y), "x"),
]


def call(fn, x=X, y=Y, **kw):
    led = Ledger(PureDP(100.0))
    args = {**BASE[fn], "ledger": led, "rng": 0, **kw}
    try:
        return fn(x, y, **args)
    finally:
        assert led.events() == [], "a rejected call must not charge the ledger"


@pytest.mark.parametrize("fn", ALL)
@pytest.mark.parametrize("data,match", DATA_CASES)
def test_bad_data(fn, data, match):
    with pytest.raises(InvalidInputError, match=match):
        call(fn, *data)


@pytest.mark.parametrize("fn", ALL)
@pytest.mark.parametrize("eps", [0, -1.0, math.nan, "1", None, True])
def test_bad_epsilon(fn, eps):
    with pytest.raises(InvalidInputError, match="epsilon"):
        call(fn, epsilon=eps)


@pytest.mark.parametrize("fn,name", [(noisy_stats, "x_bounds"), (noisy_stats, "y_bounds"),
                                     (dp_intercept, "y_bounds"), (dp_intercept, "x_bounds"),
                                     (theil_sen, "output_range"), (theil_sen, "x_bounds"),
                                     (gradient_descent, "x_bounds"),
                                     (gradient_descent, "y_bounds"),
                                     (theil_sen_ci, "output_range")])
@pytest.mark.parametrize("bounds", [(1, 0), (0, 0), (0, math.nan), (0, math.inf), (0, 1, 2),
                                    "01", 5])
def test_bad_bounds(fn, name, bounds):
    with pytest.raises(InvalidInputError, match=name):
        call(fn, **{name: bounds})


@pytest.mark.parametrize("fn", [noisy_stats, gradient_descent, dp_intercept, theil_sen])
def test_required_bounds_have_no_default(fn):
    required = {noisy_stats: "x_bounds", gradient_descent: "y_bounds", dp_intercept: "y_bounds",
                theil_sen: "output_range"}[fn]
    kw = {k: v for k, v in BASE[fn].items() if k != required}
    with pytest.raises(TypeError, match=required):
        fn(X, Y, **kw)


@pytest.mark.parametrize("fn,x_bounds", [(noisy_stats, None), (gradient_descent, None),
                                         (theil_sen, (0, 1)), (dp_intercept, (0, 1))])
@pytest.mark.parametrize("x_eval,match", [([0.5, 1.5], "inside x_bounds"),
                                          ([0.2, math.nan], "finite"), (["a", 0.2], "real"),
                                          ([], "at least one"), ("0.5", "sequence")])
def test_bad_x_eval(fn, x_bounds, x_eval, match):
    kw = {"x_eval": x_eval}
    if x_bounds is not None:
        kw["x_bounds"] = x_bounds
    with pytest.raises(InvalidInputError, match=match):
        call(fn, **kw)


@pytest.mark.parametrize("x_eval", [[0.5], [0.3, 0.3], [0.1, 0.2, 0.3]])
def test_theil_sen_needs_two_distinct_x_eval(x_eval):
    with pytest.raises(InvalidInputError, match="two distinct"):
        call(theil_sen, x_eval=x_eval)


@pytest.mark.parametrize("kw,match", [
    ({"median": "mean"}, "median"), ({"estimand": "intercept"}, "estimand"),
    ({"pairs": 0}, "pairs"), ({"pairs": 12}, "pairs"), ({"pairs": "half"}, "pairs"),
    ({"theta": 0.1}, "theta"), ({"median": "wide", "theta": -1}, "theta"),
    ({"median": "wide", "theta": 3.0}, "theta"), ({"dof": 0}, "dof"),
    ({"estimand": "slope", "x_eval": [0.2, 0.4]}, "x_eval"),
])
def test_bad_theil_sen_options(kw, match):
    with pytest.raises(InvalidInputError, match=match):
        call(theil_sen, **kw)


@pytest.mark.parametrize("kw,match", [
    ({"neighbouring": "add-remove"}, "replace-one"), ({"neighbouring": "nope"}, "neighbouring"),
    ({"release_stats": 1}, "release_stats"),
])
def test_bad_noisy_stats_options(kw, match):
    with pytest.raises(InvalidInputError, match=match):
        call(noisy_stats, **kw)


@pytest.mark.parametrize("fn", ALL)
@pytest.mark.parametrize("rng", ["seed", -1, 1.5])
def test_bad_rng(fn, rng):
    with pytest.raises(InvalidInputError, match="rng"):
        call(fn, rng=rng)


@pytest.mark.parametrize("fn", ALL)
def test_bad_ledger(fn):
    with pytest.raises(InvalidInputError, match="ledger"):
        fn(X, Y, **BASE[fn], ledger="my ledger", rng=0)


@pytest.mark.parametrize("fn", ALL)
def test_ledger_of_the_wrong_kind_charges_nothing(fn):
    from dpreg import GDP

    led = Ledger(GDP(1.0))
    with pytest.raises(InvalidInputError, match="cannot account"):
        fn(X, Y, **BASE[fn], ledger=led, rng=0)
    assert led.events() == []


@pytest.mark.parametrize("fn", ALL)
def test_good_call_charges_exactly_epsilon(fn):
    led = Ledger(PureDP(2.0))
    out = fn(X, Y, **{**BASE[fn], "epsilon": 0.7}, ledger=led, rng=0)
    assert led.spent() == PureDP(0.7) and len(led.events()) == 1
    assert out is not None
