"""The five multivariate estimators: scikit-learn contract, bad input (nothing charged),
ledger order, ε → ∞ limits and back-transformation of coefficients."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpreg import GDP, ZCDP, ApproxDP, InvalidInputError, Ledger, MechanismFailure
from dpreg.exceptions import PrivacyLeakWarning
from dpreg.linear_model import (
    AdaSSP,
    BoostedAdaSSP,
    ClippedDPGradientDescent,
    CovarianceOLS,
    TukeyEM,
)

B = (-10, 10)

_TUKEY_SMALL = ("sklearn's check data have fewer rows than TukeyEM needs "
                "(n >= n_models*(d+1) with n_models >= 8)")
_TUKEY_CHECKS = [
    "check_fit_score_takes_y", "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters", "check_estimators_fit_returns_self",
    "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit", "check_estimators_dtypes", "check_dtype_object",
    "check_pipeline_consistency", "check_estimators_nan_inf", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_regressors_train",
    "check_regressor_data_not_an_array", "check_regressors_no_decision_function",
    "check_supervised_y_2d", "check_regressors_int", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_fit2d_1feature", "check_dict_unchanged",
    "check_fit_idempotent", "check_fit_check_is_fitted", "check_n_features_in",
    "check_fit2d_predict1d",
]


_N_PRIVATE = ("under add/remove neighbours n is private: dpreg's message for a zero-feature X "
              "omits the shape (n, 0) that scikit-learn's wording includes")


def _expected_failures(est):
    if isinstance(est, TukeyEM):
        return dict.fromkeys(_TUKEY_CHECKS, _TUKEY_SMALL)
    if getattr(est, "neighbouring", "replace-one") == "add-remove":
        return {"check_estimators_empty_data_messages": _N_PRIVATE}
    return {}


CHECKED = [
    AdaSSP(epsilon=1.0, delta=1e-6, bounds_X=B, bounds_y=B, random_state=0),
    BoostedAdaSSP(epsilon=1.0, delta=1e-6, bounds_X=B, bounds_y=B, random_state=0),
    TukeyEM(epsilon=1.0, delta=1e-5, n_models=8, random_state=0),
    ClippedDPGradientDescent(epsilon=1.0, delta=1e-6, bounds_X=B, bounds_y=B, random_state=0),
    CovarianceOLS(epsilon=1.0, delta=1e-6, bounds_X=B, bounds_y=B, random_state=0),
]


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
@parametrize_with_checks(CHECKED, expected_failed_checks=_expected_failures)
def test_sklearn_contract(estimator, check):
    check(estimator)


# ------------------------------------------------------------------------ shared fixtures
def make_data(n=400, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = X @ np.arange(1, d + 1) * 0.5 + 0.3 + rng.normal(0, 0.2, n)
    return X, np.clip(y, -5, 5)


def all_estimators(**kw):
    kw = {"epsilon": 1.0, "delta": 1e-6, **kw}
    base = dict(bounds_X=(-1, 1), bounds_y=(-5, 5), **kw)
    return [
        AdaSSP(**base),
        BoostedAdaSSP(**base),
        TukeyEM(n_models=20, bounds_X=(-1, 1), bounds_y=(-5, 5), **kw),
        ClippedDPGradientDescent(**base),
        CovarianceOLS(**base),
    ]


ESTIMATOR_IDS = ["AdaSSP", "BoostedAdaSSP", "TukeyEM", "ClippedDPGradientDescent", "CovarianceOLS"]


# ------------------------------------------------------------------------ bad input
BAD_CASES = {
    "d > n": (lambda X, y: (X[:3], y[:3]), {}, "more rows than model parameters"),
    "NaN in X": (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X),
                               y), {}, "NaN"),
    "NaN in y": (lambda X, y: (X, np.where(np.arange(y.size) == 3, np.nan, y)), {}, "NaN"),
    "inf in X": (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 5, np.inf, X),
                               y), {}, "inf"),
    "y None": (lambda X, y: (X, None), {}, "target y is None"),
    "delta 0": (lambda X, y: (X, y), {"delta": 0.0}, "delta"),
    "epsilon 0": (lambda X, y: (X, y), {"epsilon": 0.0}, "epsilon"),
    "epsilon negative": (lambda X, y: (X, y), {"epsilon": -1.0}, "epsilon"),
    "bad bounds_X": (lambda X, y: (X, y), {"bounds_X": (1, -1)}, "bounds_X"),
    "bounds_X wrong length": (lambda X, y: (X, y), {"bounds_X": [(-1, 1)] * 2}, "bounds_X"),
    "fit_intercept not bool": (lambda X, y: (X, y), {"fit_intercept": "yes"}, "fit_intercept"),
}


#: estimators whose guarantee is stated for add/remove neighbours (n private): no row-count check
ADD_REMOVE = {0, 1, 4}


@pytest.mark.parametrize("case", list(BAD_CASES))
@pytest.mark.parametrize("idx", range(5), ids=ESTIMATOR_IDS)
def test_bad_input_is_rejected_and_costs_nothing(case, idx):
    if case == "d > n" and idx in ADD_REMOVE:
        pytest.skip("n is private under add/remove: n <= p is released, not refused (below)")
    make, params, match = BAD_CASES[case]
    X, y = make(*make_data())
    ledger = Ledger(ApproxDP(100.0, 0.5))
    est = all_estimators(ledger=ledger, random_state=0)[idx].set_params(**params)
    with pytest.raises(InvalidInputError, match=match):
        est.fit(X, y)
    assert ledger.events() == []


@pytest.mark.parametrize("case", ["constant column", "all-zero dummy", "d > n"])
@pytest.mark.parametrize("idx", sorted(ADD_REMOVE), ids=["AdaSSP", "BoostedAdaSSP",
                                                         "CovarianceOLS"])
def test_data_facts_are_released_not_refused(case, idx):
    """Refusing a constant column, an empty declared level or n <= p would reveal a fact about
    the private data (and, for n, a private count under add/remove): the DP release handles
    them, is charged, and its coefficients are finite."""
    X, y = make_data()
    if case == "constant column":
        X = np.column_stack([X, np.full(len(X), 2.0)])
    elif case == "all-zero dummy":
        X = np.column_stack([X, np.zeros(len(X))])
    else:
        X, y = X[:3], y[:3]
    ledger = Ledger(ApproxDP(100.0, 0.5))
    est = all_estimators(ledger=ledger, random_state=0)[idx]
    if X.shape[1] == 4:
        est.set_params(bounds_X=[(-1, 1)] * 3 + [(-5, 5)])
    try:
        est.fit(X, y)
        assert np.all(np.isfinite(est.coef_)) and math.isfinite(est.intercept_)
    except MechanismFailure:
        pass  # a ⊥ release is a DP outcome, not a refusal
    assert len(ledger.events()) == 1


@pytest.mark.parametrize("idx", [0, 1, 3, 4], ids=["AdaSSP", "BoostedAdaSSP",
                                                   "ClippedDPGradientDescent", "CovarianceOLS"])
def test_missing_bounds(idx):
    X, y = make_data()
    ledger = Ledger(ApproxDP(100.0, 0.5))
    est = all_estimators(ledger=ledger)[idx].set_params(bounds_X=None)
    with pytest.raises(InvalidInputError, match="bounds_X is required"):
        est.fit(X, y)
    if idx in (0, 4):
        est = all_estimators(ledger=ledger)[idx].set_params(bounds_y=None)
        with pytest.raises(InvalidInputError, match="bounds_y is required"):
            est.fit(X, y)
    assert ledger.events() == []


def test_method_specific_bad_input_costs_nothing():
    X, y = make_data(n=100, d=3)
    ledger = Ledger(ApproxDP(100.0, 0.5))
    cases = [
        (TukeyEM(epsilon=1.0, delta=1e-5, n_models=30, ledger=ledger), "n_models must be <= n // d = 25"),
        (TukeyEM(epsilon=1.0, delta=1e-5, n_models=7, ledger=ledger), "n_models"),
        (AdaSSP(delta=1e-6, epsilon=30.0, bounds_X=(-1, 1), bounds_y=(-5, 5), ledger=ledger,
                calibration="wang"), r"epsilon must be <= 21\.7"),
        (AdaSSP(delta=1e-6, epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-5, 5), ledger=ledger,
                calibration="zcdp"), "calibration"),
        (BoostedAdaSSP(epsilon=1.0, delta=1e-6, n_rounds=0, bounds_X=(-1, 1), ledger=ledger), "n_rounds"),
        (BoostedAdaSSP(epsilon=1.0, delta=1e-6, split=(1, 0, 1), bounds_X=(-1, 1), ledger=ledger), "split"),
        (BoostedAdaSSP(epsilon=1.0, delta=1e-6, schedule="1/t^2", bounds_X=(-1, 1), ledger=ledger), "schedule"),
        (BoostedAdaSSP(epsilon=1.0, delta=1e-6, lambda_rule="x", bounds_X=(-1, 1), ledger=ledger), "lambda_rule"),
        (BoostedAdaSSP(epsilon=1.0, delta=1e-6, tau=0, bounds_X=(-1, 1), ledger=ledger), "tau"),
        (ClippedDPGradientDescent(epsilon=1.0, delta=1e-6, accounting="rdp", bounds_X=(-1, 1), ledger=ledger), "accounting"),
        (ClippedDPGradientDescent(epsilon=1.0, delta=1e-6, output="best", bounds_X=(-1, 1), ledger=ledger), "output"),
        (ClippedDPGradientDescent(epsilon=1.0, delta=1e-6, clip_norm=-1, bounds_X=(-1, 1), ledger=ledger), "clip_norm"),
        (CovarianceOLS(delta=1e-6, epsilon=2.0, calibration="classical", bounds_X=(-1, 1),
                       bounds_y=(-5, 5), ledger=ledger), "epsilon < 1"),
        (CovarianceOLS(epsilon=1.0, delta=1e-6, neighbouring="sideways", bounds_X=(-1, 1), bounds_y=(-5, 5),
                       ledger=ledger), "neighbouring"),
        (TukeyEM(epsilon=1.0, delta=1e-5, n_models=10, bounds_y=(-5, 5), ledger=ledger), "bounds_X must be given"),
    ]
    for est, match in cases:
        with pytest.raises(InvalidInputError, match=match):
            est.fit(X, y)
    assert ledger.events() == []


# ------------------------------------------------------------------------ ledger and privacy
@pytest.mark.parametrize("idx", range(5), ids=ESTIMATOR_IDS)
def test_ledger_is_charged_once_and_statement_recorded(idx):
    X, y = make_data(n=2000, d=2)
    ledger = Ledger(ApproxDP(50.0, 0.1))
    est = all_estimators(ledger=ledger, random_state=1, epsilon=8.0)[idx]
    if isinstance(est, TukeyEM):
        est.set_params(n_models=200, delta=1e-3)
    est.fit(X, y)
    events = ledger.events()
    assert len(events) == 1
    assert events[0].stated == est.privacy_.budget
    assert events[0].neighbouring is est.privacy_.neighbouring
    assert est.privacy_.seeded is True
    assert isinstance(est.privacy_.budget, (ApproxDP, ZCDP, GDP))
    assert est.results_.privacy is est.privacy_
    assert est.coef_.shape == (2,)
    assert np.isfinite(est.intercept_)


def test_unseeded_statement():
    X, y = make_data()
    est = AdaSSP(epsilon=1.0, delta=1e-6, bounds_X=(-1, 1), bounds_y=(-5, 5)).fit(X, y)
    assert est.privacy_.seeded is False


def test_ledger_refusal_leaves_estimator_unfitted():
    X, y = make_data()
    ledger = Ledger(ApproxDP(0.5, 1e-6))
    est = CovarianceOLS(delta=1e-6, epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-5, 5), ledger=ledger)
    from dpreg import BudgetExceededError

    with pytest.raises(BudgetExceededError):
        est.fit(X, y)
    assert not hasattr(est, "coef_")


def test_tukey_failure_raises_and_keeps_budget_charged():
    X, y = make_data(n=200, d=2)
    ledger = Ledger(ApproxDP(10.0, 1e-3))
    est = TukeyEM(delta=1e-5, epsilon=0.1, n_models=8, ledger=ledger, random_state=0)
    with pytest.raises(MechanismFailure, match="propose-test-release"):
        est.fit(X, y)
    assert len(ledger.events()) == 1
    assert est.results_.failed


# ------------------------------------------------------------------------ ε → ∞ limits
def ols(X, y, intercept=True):
    A = np.column_stack([np.ones(len(X)), X]) if intercept else X
    return np.linalg.lstsq(A, y, rcond=None)[0]


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_infinite_epsilon_gives_ols_on_clamped_data(fit_intercept):
    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 3, size=(300, 3))
    y = X @ [1.0, -2.0, 0.5] + 1.0 + rng.normal(0, 0.3, 300)
    bx, by = [(-1.5, 2.5), (-2, 2), (-1, 3)], (-6, 8)
    Xc, yc = np.clip(X, [b[0] for b in bx], [b[1] for b in bx]), np.clip(y, *by)
    ref = ols(Xc, yc, fit_intercept)
    ref_int, ref_coef = (ref[0], ref[1:]) if fit_intercept else (0.0, ref)
    for est in [AdaSSP(delta=1e-6, epsilon=math.inf, bounds_X=bx, bounds_y=by, fit_intercept=fit_intercept),
                CovarianceOLS(delta=1e-6, epsilon=math.inf, bounds_X=bx, bounds_y=by,
                              fit_intercept=fit_intercept),
                BoostedAdaSSP(delta=1e-6, epsilon=math.inf, bounds_X=bx, bounds_y=by, tau=100.0,
                              fit_intercept=fit_intercept)]:
        est.fit(X, y)
        np.testing.assert_allclose(est.coef_, ref_coef, rtol=1e-8, atol=1e-9)
        assert est.intercept_ == pytest.approx(ref_int, rel=1e-8, abs=1e-9)
        np.testing.assert_allclose(est.predict(X), X @ ref_coef + ref_int, rtol=1e-8)


def test_infinite_epsilon_warns():
    X, y = make_data()
    with pytest.warns(PrivacyLeakWarning, match="NOT private"):
        AdaSSP(delta=1e-6, epsilon=math.inf, bounds_X=(-1, 1), bounds_y=(-5, 5)).fit(X, y)


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
def test_dpgd_converges_to_ols_without_noise():
    X, y = make_data(n=500, d=3)
    est = ClippedDPGradientDescent(delta=1e-6, epsilon=math.inf, bounds_X=(-1, 1), bounds_y=(-5, 5),
                            clip_norm=1e6, n_iter=3000, learning_rate=0.9, output="last")
    est.fit(X, y)
    ref = ols(np.clip(X, -1, 1), np.clip(y, -5, 5))
    np.testing.assert_allclose(np.r_[est.intercept_, est.coef_], ref, atol=1e-6)


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
def test_tukey_infinite_epsilon_is_coordinatewise_median_of_models():
    X, y = make_data(n=1000, d=2)
    est = TukeyEM(delta=1e-5, epsilon=math.inf, n_models=50, random_state=4).fit(X, y)
    ref = ols(X, y)
    np.testing.assert_allclose(np.r_[est.intercept_, est.coef_], ref, atol=0.05)


def test_dataframe_feature_names_and_results():
    X, y = make_data(n=20_000)  # large enough for an interval (κ <= 0.5, issue 18)
    df = pd.DataFrame(X, columns=["age", "income", "score"])
    est = CovarianceOLS(delta=1e-6, epsilon=8.0, bounds_X=(-1, 1), bounds_y=(-5, 5), random_state=0)
    est.fit(df, y)
    assert list(est.results_.params.index) == ["intercept", "age", "income", "score"]
    assert list(est.feature_names_in_) == ["age", "income", "score"]
    assert est.release_.columns == ["age", "income", "score", "y"]
    text = str(est.results_.summary())
    assert "Std" in text or "std err" in text
    assert "DP-aware" in est.results_.uncertainty  # the default interval accounts for the noise
    plug = CovarianceOLS(delta=1e-6, epsilon=4.0, bounds_X=(-1, 1), bounds_y=(-5, 5),
                         random_state=0, se="plugin").fit(df, y)
    assert "plug-in" in plug.results_.uncertainty


def test_clone_and_params_roundtrip():
    est = BoostedAdaSSP(epsilon=1.0, delta=1e-6, bounds_X=(-1, 1), split="author", schedule="1/t")
    c = clone(est)
    assert c.get_params() == est.get_params()


def test_scaling_back_transform_matches_predictions():
    """Coefficients mapped back from the scaled problem predict like the scaled model."""
    from dpreg.multivariate._common import PublicScaling

    rng = np.random.default_rng(5)
    bx = [(-3.0, 5.0), (10.0, 20.0)]
    X = np.column_stack([rng.uniform(-3, 5, 50), rng.uniform(10, 20, 50)])
    for fit_intercept in (True, False):
        for unit_ball in (True, False):
            sc = PublicScaling.from_bounds(bx, (0.0, 40.0), fit_intercept=fit_intercept,
                                           unit_ball=unit_ball)
            Z = sc.design(X)
            assert np.all(np.linalg.norm(Z, axis=1) <= sc.row_norm_bound + 1e-12)
            theta = rng.normal(size=Z.shape[1])
            intercept, coef = sc.to_original(theta)
            pred_scaled = (Z @ theta) * sc.y_scale + sc.y_shift
            np.testing.assert_allclose(X @ coef + intercept, pred_scaled, rtol=1e-10)


def test_warnings_free_fit_with_finite_epsilon():
    X, y = make_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # a 128-bit seed: a small one draws a WeakSeedWarning by design (test_privacy_outputs)
        AdaSSP(epsilon=1.0, delta=1e-6, bounds_X=(-1, 1), bounds_y=(-5, 5),
               random_state=0xB7E151628AED2A6ABF7158809CF4F3C7).fit(X, y)


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
def test_covariance_ols_infinite_epsilon_matches_statsmodels_on_real_data():
    """statsmodels.datasets.statecrime (2009 US state rates, BSD): murder on five rates, public
    bounds [0, 100] for percentages and [0, 50] for murders per 100,000 (nothing clamped)."""
    import statsmodels.api as sm

    data = sm.datasets.statecrime.load_pandas().data
    xs = ["poverty", "hs_grad", "urban", "single", "white"]
    est = CovarianceOLS(delta=1e-6, epsilon=math.inf, bounds_X=(0, 100), bounds_y=(0, 50))
    est.fit(data[xs], data["murder"])
    ref = sm.OLS(data["murder"], sm.add_constant(data[xs])).fit()
    res = est.results_
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-8)
    np.testing.assert_allclose(res.bse.to_numpy(), ref.bse.to_numpy(), rtol=1e-7)
    np.testing.assert_allclose(res.tvalues.to_numpy(), ref.tvalues.to_numpy(), rtol=1e-7)
    np.testing.assert_allclose(res.pvalues.to_numpy(), ref.pvalues.to_numpy(), rtol=1e-6)
    assert res.df_resid == ref.df_resid
