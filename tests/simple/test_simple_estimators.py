"""scikit-learn estimators for one feature: contract, fitted attributes, failures, ledger."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpreg import ZCDP, Ledger, PureDP
from dpreg.exceptions import InvalidInputError, MechanismFailure
from dpreg.inference import RegressionResults
from dpreg.linear_model import DPTheilSen, NoisyStats, SimpleDPGradientDescent
from dpreg.simple import default_prediction_range, ols

pytestmark = pytest.mark.filterwarnings("ignore::dpreg.PrivacyLeakWarning")


def data(n=120, seed=0):
    g = np.random.default_rng(seed)
    x = g.uniform(0, 1, n)
    return x.reshape(-1, 1), 0.5 * x + 0.2 + g.normal(0, 0.05, n)


ESTIMATORS = [
    lambda **kw: NoisyStats(**kw),
    lambda **kw: DPTheilSen(**kw),
    lambda **kw: SimpleDPGradientDescent(**kw),
]
COMMON = {"epsilon": 1.0, "bounds_X": (0, 1), "bounds_y": (0, 1)}


@pytest.mark.parametrize("make", ESTIMATORS)
def test_fit_predict_and_attributes(make):
    X, y = data()
    est = make(**COMMON, random_state=3)
    assert est.fit(X, y) is est
    assert est.coef_.shape == (1,) and isinstance(est.intercept_, float)
    assert isinstance(est.results_, RegressionResults)
    assert est.privacy_ is est.results_.privacy
    assert est.privacy_.budget == PureDP(1.0)
    pred = est.predict(X[:5])
    np.testing.assert_allclose(pred, X[:5, 0] * est.coef_[0] + est.intercept_)
    assert list(est.results_.params.index) == ["intercept", "x0"]
    again = clone(est).fit(X, y)  # same seed -> same release
    assert again.coef_[0] == est.coef_[0]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_params_stored_verbatim(make):
    est = make(**COMMON, random_state=7, ledger=None)
    params = est.get_params()
    assert params["epsilon"] == 1.0 and params["bounds_X"] == (0, 1)
    assert params["random_state"] == 7 and params["fit_intercept"] is True
    assert clone(est).get_params() == params


def test_feature_names_from_dataframe():
    X, y = data()
    df = pd.DataFrame({"income": X[:, 0]})
    est = NoisyStats(**COMMON, random_state=0).fit(df, y)
    assert list(est.results_.params.index) == ["intercept", "income"]
    assert list(est.feature_names_in_) == ["income"]
    assert "predictions" in est.results_.extra and "noisy_nvar" in est.results_.extra


def test_bounds_x_as_list_and_infinite_epsilon_is_ols():
    X, y = data()
    est = NoisyStats(epsilon=math.inf, bounds_X=[(0, 1)], bounds_y=(0, 1)).fit(X, y)
    o = ols(X[:, 0], y)
    assert est.coef_[0] == pytest.approx(o.slope, abs=1e-12)
    assert est.intercept_ == pytest.approx(o.intercept, abs=1e-12)


def test_theil_sen_default_output_range_is_public():
    assert default_prediction_range((0, 1)) == (-0.5, 1.5)  # Alabi et al. Table 1
    assert default_prediction_range((10, 30)) == (0.0, 40.0)
    X, y = data()
    est = DPTheilSen(**COMMON, random_state=0).fit(X, y)
    assert est.privacy_.details["output_range"] == (-0.5, 1.5)
    assert est.privacy_.details["x_eval"] == [0.25, 0.75]
    est = DPTheilSen(**COMMON, output_range=(-1, 2), median="wide", pairs=5, theta=0.02,
                     random_state=0).fit(X, y)
    assert est.privacy_.details["output_range"] == (-1.0, 2.0)
    assert est.privacy_.details["k"] == 5 and est.privacy_.details["theta"] == 0.02


def test_gradient_descent_variants():
    X, y = data()
    led = Ledger(ZCDP(10.0))
    est = SimpleDPGradientDescent(rho=0.5, variant="zcdp", bounds_X=(0, 1), bounds_y=(0, 1),
                            n_iter=20, tau=0.5, ledger=led, random_state=0).fit(X, y)
    assert est.privacy_.budget == ZCDP(0.5) and led.spent() == ZCDP(0.5)
    assert est.privacy_.details["steps"] == 20
    with pytest.raises(InvalidInputError, match="rho"):
        SimpleDPGradientDescent(epsilon=1.0, variant="zcdp", bounds_X=(0, 1),
                          bounds_y=(0, 1)).fit(X, y)


def test_failure_raises_and_budget_stays_charged():
    n = 30
    X = np.full((n, 1), 0.5)  # nvar = 0: the noisy denominator is <= 0 about half the time
    y = np.linspace(0, 1, n)
    led = Ledger(PureDP(100.0))
    outcomes = []
    for seed in range(20):
        est = NoisyStats(**COMMON, ledger=led, random_state=seed)
        try:
            est.fit(X, y)
            outcomes.append("ok")
        except MechanismFailure as exc:
            outcomes.append("⊥")
            assert "nvar" in exc.reason
            assert est.results_.failed and est.privacy_.budget == PureDP(1.0)
            assert not hasattr(est, "coef_")
    assert "⊥" in outcomes and "ok" in outcomes
    assert led.spent() == PureDP(20.0)  # every fit charged, ⊥ included


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("change,match", [
    ({"epsilon": None}, "epsilon"), ({"bounds_X": None}, "bounds_X"),
    ({"bounds_y": None}, "bounds_y"), ({"fit_intercept": False}, "fit_intercept"),
    ({"bounds_X": (1, 0)}, "bounds_X"), ({"bounds_y": (0, 0)}, "bounds_y"),
])
def test_bad_parameters_raise_at_fit_and_charge_nothing(make, change, match):
    X, y = data()
    led = Ledger(PureDP(10.0))
    est = make(**{**COMMON, **change}, ledger=led)
    with pytest.raises(InvalidInputError, match=match):
        est.fit(X, y)
    assert led.events() == []


@pytest.mark.parametrize("make", ESTIMATORS)
def test_only_one_feature(make):
    X, y = data()
    with pytest.raises(InvalidInputError, match="exactly one column"):
        make(**COMMON).fit(np.hstack([X, X]), y)
    est = make(**COMMON, random_state=0).fit(X, y)
    with pytest.raises(InvalidInputError, match="features"):
        est.predict(np.hstack([X, X]))


#: DPGradientDescent: for each data shape and algorithm/variant, a parameter it does not use
#: (set away from its default) and what the estimator is given besides
UNUSED = [
    *[(1, {"epsilon": 1.0}, name, value) for name, value in (
        ("clip_norm", 2.0), ("learning_rate", 0.1), ("schedule", "1/t"),
        ("accounting", "zcdp"), ("output", "last"), ("neighbouring", "add-remove"),
        ("delta", 1e-6), ("rho", 0.3))],
    (1, {"variant": "zcdp", "rho": 0.5}, "epsilon", 1.0),
    (1, {"variant": "zcdp", "rho": 0.5}, "delta", 1e-6),
    (1, {"variant": "approx", "epsilon": 1.0, "delta": 1e-6}, "rho", 0.2),
    *[(3, {"epsilon": 1.0, "delta": 1e-6}, name, value) for name, value in (
        ("variant", "zcdp"), ("tau", 0.5), ("rho", 0.3))],
    (1, {"algorithm": "clipped", "epsilon": 1.0, "delta": 1e-6}, "tau", 0.5),
]


@pytest.mark.parametrize("d,given,name,value", UNUSED)
def test_dp_gradient_descent_refuses_a_parameter_it_would_not_use(d, given, name, value):
    """Issue 31: DPGradientDescent silently dropped the parameters of the algorithm (or budget
    variant) not selected, epsilon of the zcdp variant included; each is now an error naming
    it, raised before anything is charged."""
    from dpreg import ApproxDP
    from dpreg.linear_model import DPGradientDescent

    g = np.random.default_rng(0)
    X = g.uniform(0, 1, (100, d))
    y = X.mean(axis=1)
    led = Ledger(ApproxDP(100.0, 1e-2))
    est = DPGradientDescent(bounds_X=(0, 1), bounds_y=(0, 1), random_state=0, ledger=led,
                            **given, **{name: value})
    with pytest.raises(InvalidInputError, match=name):
        est.fit(X, y)
    assert led.events() == []
    # without it the same estimator fits
    DPGradientDescent(bounds_X=(0, 1), bounds_y=(0, 1), random_state=0, ledger=led,
                      **given).fit(X, y)
    assert len(led.events()) == 1
