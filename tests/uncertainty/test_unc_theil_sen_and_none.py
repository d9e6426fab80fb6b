"""Uniform exposure of the Sarathy–Vadhan Theil-Sen interval, and explicit "no interval" for
the methods that have none."""

import math

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import Ledger, PureDP
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import NoUncertaintyError
from dpreg.linear_model import BoostedAdaSSP, DPGradientDescent, DPTheilSen, TukeyEM


def line_data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    return x, np.clip(0.2 + 0.5 * x + rng.normal(0, 0.1, n), 0, 1)


def test_dptheilsen_estimator_exposes_the_dp_slope_interval():
    x, y = line_data()
    led = Ledger(PureDP(2.0))
    est = DPTheilSen(epsilon=2.0, bounds_X=(0, 1), bounds_y=(0, 1), ci_alpha=0.1,
                     random_state=1, ledger=led).fit(x[:, None], y)
    res = est.results_
    assert led.spent().epsilon == pytest.approx(2.0) and len(led.events()) == 1
    ci = res.conf_int(0.1)
    assert math.isnan(ci.loc["intercept", "lower"])
    assert ci.loc["x0", "lower"] < ci.loc["x0", "upper"]
    assert "Sarathy–Vadhan" in res.ci_method and "0.9" in res.ci_method
    assert "Interval method" in str(res.summary())
    with pytest.raises(NoUncertaintyError, match="0.1"):
        res.conf_int(0.05)
    # the same release through the formula API (one engine)
    r = dpreg.regress(pd.DataFrame({"x": x, "y": y}), "y ~ x", method="theil-sen-exp",
                      epsilon=2.0, bounds={"x": (0, 1), "y": (0, 1)}, ci_alpha=0.1,
                      random_state=1)
    assert r.conf_int(0.1).loc["x", "lower"] == pytest.approx(ci.loc["x0", "lower"])


def test_dptheilsen_without_ci_says_so_and_bad_options_cost_nothing():
    x, y = line_data()
    res = DPTheilSen(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1), random_state=0).fit(
        x[:, None], y).results_
    with pytest.raises(NoUncertaintyError, match="ci_alpha"):
        res.conf_int(0.05)
    led = Ledger(PureDP(1.0))
    for bad in (dict(ci_alpha=1.5), dict(ci_alpha=0.1, ci_method="exact"),
                dict(ci_alpha=0.1, median="wide", theta=-1.0),
                dict(ci_alpha=0.1, slope_range=(1, 0))):
        with pytest.raises(InvalidInputError):
            DPTheilSen(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1), ledger=led,
                       **bad).fit(x[:, None], y)
    assert led.spent().epsilon == 0.0


@pytest.mark.parametrize("make", [
    lambda: BoostedAdaSSP(epsilon=1.0, delta=1e-6, bounds_X=(0, 1), bounds_y=(0, 1),
                          n_rounds=5, random_state=0),
    lambda: DPGradientDescent(epsilon=1.0, delta=1e-6, bounds_X=(0, 1), bounds_y=(0, 1),
                              random_state=0),
    lambda: TukeyEM(epsilon=5.0, delta=1e-5, n_models=300, random_state=0),
])
def test_methods_without_a_valid_interval_say_so(make):
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (8000, 2))
    y = np.clip(0.1 + X @ [0.3, 0.2] + rng.normal(0, 0.05, 8000), 0, 1)
    est = make()
    try:
        est.fit(X, y)
    except dpreg.MechanismFailure:
        pytest.skip("the release was ⊥ (itself a labelled outcome)")
    res = est.results_
    assert res.ci_method == "none" and not res.has_bse
    with pytest.raises(NoUncertaintyError, match="no valid confidence interval"):
        res.conf_int(0.05)
    assert res.uncertainty.startswith("none:") and len(res.uncertainty) > 60
    assert "no standard errors" in str(res.summary())


def test_support_table_covers_every_method():
    """Every method's spec says what interval it offers; those without one say why."""
    from dpreg import methods

    for m in ("tukey-em", "boosted-adassp", "dp-gd", "dp-intercept"):
        support = methods.get(m).interval
        assert support.offered == "none" and support.request == "none"
        assert support.missing.startswith("none:") and len(support.missing) > 60
    for m in ("noisy-stats", "adassp", "covariance-ols", "theil-sen-exp"):
        assert methods.get(m).interval.offered != "none"
