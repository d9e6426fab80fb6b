"""dpreg.regress: formula handling, bounds, dispatch to every method, ledger charging."""

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

import dpreg
from dpreg import BudgetExceededError, InvalidInputError, Ledger, PureDP
from dpreg.data import load_dataset

pytestmark = pytest.mark.filterwarnings("ignore::dpreg.PrivacyLeakWarning")


@pytest.fixture(scope="module")
def crime():
    return load_dataset("statecrime")


SIMPLE = ["noisy-stats", "dp-intercept", "theil-sen-exp", "theil-sen-wide", "theil-sen-smooth",
          "dp-gd"]
MULTI = ["dp-gd", "adassp", "boosted-adassp", "covariance-ols"]


@pytest.mark.parametrize("method", SIMPLE)
def test_simple_methods(crime, method):
    r = dpreg.regress(crime.frame, "murder ~ poverty", method=method, epsilon=2.0,
                      bounds=crime.bounds, random_state=1)
    assert r.method.startswith(method.split("-")[0]) or r.method == method
    assert r.dep_var == "murder"
    if not r.failed:
        assert list(r.params.index) == ["intercept", "poverty"]
        assert np.all(np.isfinite(r.params))
    assert r.privacy.budget == PureDP(2.0) or r.privacy.budget.kind != "pure"


@pytest.mark.parametrize("method", MULTI)
def test_multivariate_methods(crime, method):
    r = dpreg.regress(crime.frame, crime.formula(), method=method, epsilon=2.0, delta=1e-6,
                      bounds=crime.bounds, random_state=1)
    assert list(r.params.index) == ["intercept", *crime.x]
    assert np.all(np.isfinite(r.params))


def test_tukey_em_on_larger_data():
    g = np.random.default_rng(0)
    df = pd.DataFrame({"x1": g.uniform(0, 1, 20_000), "x2": g.uniform(0, 1, 20_000)})
    df["y"] = 1 + 2 * df.x1 - df.x2 + g.normal(0, 0.1, len(df))
    r = dpreg.regress(df, "y ~ x1 + x2", method="tukey-em", epsilon=2.0, delta=1e-5,
                      bounds={"y": (-5, 5), "x1": (0, 1), "x2": (0, 1)}, random_state=0,
                      n_models=500)
    assert not r.failed, r.reason
    np.testing.assert_allclose(r.params.to_numpy(), [1, 2, -1], atol=0.1)


def test_failure_is_a_typed_result():
    g = np.random.default_rng(1)
    df = pd.DataFrame({"x": g.uniform(0, 1, 200)})
    df["y"] = df.x + g.normal(0, 1, 200)
    r = dpreg.regress(df, "y ~ x", method="tukey-em", epsilon=0.1, delta=1e-6,
                      bounds={"y": (-5, 5), "x": (0, 1)}, random_state=0, n_models=20)
    assert r.failed and r.reason
    with pytest.raises(dpreg.MechanismFailure):
        _ = r.params
    assert r.to_dict()["coef"] is None


@pytest.mark.parametrize("method", ["noisy-stats", "theil-sen-exp", "dp-gd"])
def test_infinite_epsilon_equals_non_private(crime, method):
    r = dpreg.regress(crime.frame, "murder ~ poverty", method=method, epsilon=math.inf,
                      bounds=crime.bounds, random_state=0)
    if method == "noisy-stats":
        ols = smf.ols("murder ~ poverty", crime.frame).fit().params
        np.testing.assert_allclose(r.params.to_numpy(), ols.to_numpy(), rtol=1e-9)
    assert np.all(np.isfinite(r.params))


def test_covariance_ols_infinite_epsilon_matches_statsmodels(crime):
    r = dpreg.regress(crime.frame, crime.formula(), method="covariance-ols", epsilon=math.inf,
                      delta=1e-6, bounds=crime.bounds)
    ref = smf.ols(crime.formula(), crime.frame).fit()
    np.testing.assert_allclose(r.params.to_numpy(), ref.params.to_numpy(), rtol=1e-7)
    np.testing.assert_allclose(r.bse.to_numpy(), ref.bse.to_numpy(), rtol=1e-6)


def test_missing_bounds_message(crime):
    with pytest.raises(InvalidInputError, match=r"bounds for column 'poverty' are missing.*--bounds"):
        dpreg.regress(crime.frame, "murder ~ poverty", method="noisy-stats", epsilon=1.0,
                      bounds={"murder": (0, 50)})
    with pytest.raises(InvalidInputError, match="bounds for column 'murder' are missing"):
        dpreg.regress(crime.frame, "murder ~ poverty", method="noisy-stats", epsilon=1.0,
                      bounds={"poverty": (0, 100)})


def test_bad_inputs_charge_nothing(crime):
    led = Ledger(PureDP(10.0))
    bad_calls = [
        dict(formula="murder ~ poverty", method="noisy-stats", epsilon=0.0),
        dict(formula="murder ~ poverty", method="noisy-stats", epsilon=math.nan),
        dict(formula="murder ~ poverty + urban", method="noisy-stats", epsilon=1.0),
        dict(formula="murder ~ poverty", method="nope", epsilon=1.0),
        dict(formula="murder ~ poverty", method="adassp", epsilon=1.0),  # no delta
        dict(formula="murder ~ nothere", method="noisy-stats", epsilon=1.0),
    ]
    for kw in bad_calls:
        with pytest.raises(InvalidInputError):
            dpreg.regress(crime.frame, bounds=crime.bounds, ledger=led, **kw)
    frame = crime.frame.copy()
    frame.loc[3, "poverty"] = np.nan
    with pytest.raises(InvalidInputError, match="null"):
        dpreg.regress(frame, "murder ~ poverty", method="noisy-stats", epsilon=1.0,
                      bounds=crime.bounds, ledger=led)
    assert led.events() == []


def test_ledger_is_charged_and_exhausted(crime):
    led = Ledger(PureDP(1.0))
    dpreg.regress(crime.frame, "murder ~ poverty", method="theil-sen-exp", epsilon=0.75,
                  bounds=crime.bounds, ledger=led)
    assert led.spent().epsilon == pytest.approx(0.75)
    with pytest.raises(BudgetExceededError):
        dpreg.regress(crime.frame, "murder ~ poverty", method="theil-sen-exp", epsilon=0.5,
                      bounds=crime.bounds, ledger=led)
    assert len(led.events()) == 1


def test_theil_sen_ci_option(crime):
    led = Ledger(PureDP(4.0))
    r = dpreg.regress(crime.frame, "murder ~ poverty", method="theil-sen-exp", epsilon=4.0,
                      bounds=crime.bounds, ledger=led, random_state=0, ci_alpha=0.1)
    ci = r.conf_int(0.1)
    assert ci.loc["poverty", "lower"] < ci.loc["poverty", "upper"]
    assert math.isnan(ci.loc["intercept", "lower"])
    assert led.spent().epsilon == pytest.approx(4.0)  # line and CI share the budget
    assert "DP confidence interval" in r.uncertainty


def test_categorical_needs_declared_levels():
    g = np.random.default_rng(0)
    df = pd.DataFrame({"y": g.uniform(0, 1, 60), "x": g.uniform(0, 1, 60),
                       "region": g.choice(["a", "b", "c"], 60)})
    with pytest.raises(InvalidInputError, match="Categorical"):
        dpreg.regress(df, "y ~ x + region", method="adassp", epsilon=1, delta=1e-6,
                      bounds={"y": (0, 1), "x": (0, 1)})
    df["region"] = pd.Categorical(df["region"], categories=["a", "b", "c"])  # public levels
    r = dpreg.regress(df, "y ~ x + region", method="adassp", epsilon=1, delta=1e-6,
                      bounds={"y": (0, 1), "x": (0, 1)}, random_state=0)
    assert [n for n in r.params.index if "region" in n] == ["region[T.b]", "region[T.c]"]


def test_no_intercept_formula(crime):
    r = dpreg.regress(crime.frame, "murder ~ poverty + urban - 1", method="adassp", epsilon=2,
                      delta=1e-6, bounds=crime.bounds, random_state=0)
    assert list(r.params.index) == ["poverty", "urban"]
    with pytest.raises(InvalidInputError, match="intercept"):
        dpreg.regress(crime.frame, "murder ~ poverty - 1", method="theil-sen-exp", epsilon=2,
                      bounds=crime.bounds)


@pytest.mark.parametrize("method", sorted(dpreg.api.METHODS) + ["auto"])
def test_unknown_option_is_rejected_before_any_charge(method):
    """A misspelt hyperparameter is an InvalidInputError naming it -- never a bare TypeError,
    and never after part of the budget was spent (auto would otherwise pay for selection)."""
    from dpreg.api import fit_arrays

    rng = np.random.default_rng(0)
    d = 1 if method in ("noisy-stats", "dp-intercept", "auto") or method.startswith("theil") else 2
    X = rng.uniform(0, 1, size=(60, d))
    y = X.sum(axis=1) + rng.normal(0, 0.1, 60)
    ledger = Ledger(dpreg.ApproxDP(10.0, 1e-5))
    with pytest.raises(InvalidInputError, match="unknown option.*learning_rat"):
        fit_arrays(X, y, method=method, epsilon=1.0, delta=1e-6, x_bounds=[(0, 1)] * d,
                   y_bounds=(-1, 3), ledger=ledger, learning_rat=0.1)
    assert str(ledger.remaining()) == str(dpreg.ApproxDP(10.0, 1e-5))
