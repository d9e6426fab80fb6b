"""RegressionResults and its summary renderers."""

import math
import pathlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpreg import MechanismFailure, Neighbouring, PrivacyStatement, PureDP
from dpreg.inference import RegressionResults, significance_code
from dpreg.inference.results import NoUncertaintyError

SNAP = pathlib.Path(__file__).parent / "snapshots"


def make(**kw):
    base = dict(
        names=["intercept", "x"], privacy=PrivacyStatement(PureDP(1.0), Neighbouring.REPLACE_ONE,
                                                           "DPSuffStats", "Alabi et al. 2022, Alg. 1"),
        method="noisy-stats", bse=[0.1, 0.3], df_resid=10, nobs=12,
        uncertainty="plug-in OLS standard errors (ignore privacy noise)", dep_var="y",
        bounds={"y": (0, 1), "x": (0, 1)},
    )
    base.update(kw)
    return RegressionResults([1.0, 2.0], **base)


def test_numbers():
    r = make()
    assert list(r.params.index) == ["intercept", "x"]
    np.testing.assert_allclose(r.tvalues, [10.0, 2.0 / 0.3])
    np.testing.assert_allclose(r.pvalues, 2 * stats.t.sf([10.0, 2.0 / 0.3], 10))
    ci = r.conf_int(0.05)
    q = stats.t.ppf(0.975, 10)
    np.testing.assert_allclose(ci["lower"], [1 - q * 0.1, 2 - q * 0.3])
    assert list(ci.columns) == ["lower", "upper"]
    np.testing.assert_allclose(r.predict([0.0, 1.0]), [1.0, 3.0])


def test_normal_reference_without_df():
    r = make(df_resid=None)
    np.testing.assert_allclose(r.conf_int(0.1)["upper"]["x"], 2 + stats.norm.ppf(0.95) * 0.3)


def test_no_uncertainty_is_explicit():
    r = make(bse=None, uncertainty="none: point estimates only")
    assert r.bse.isna().all()
    with pytest.raises(NoUncertaintyError, match="no valid confidence interval"):
        r.conf_int(0.05)
    text = str(r.summary())
    assert "no standard errors" in text and "std err" not in text


def test_precomputed_intervals_only_at_their_alpha():
    iv = pd.DataFrame({"lower": [math.nan, 1.5], "upper": [math.nan, 2.5]}, index=["intercept", "x"])
    r = make(bse=None, intervals={0.1: iv})
    assert r.conf_int(0.1)["lower"]["x"] == 1.5
    with pytest.raises(NoUncertaintyError, match="0.1"):
        r.conf_int(0.05)


def test_failed_is_typed():
    r = make(failed=True, reason="noisy nvar <= 0")
    assert r.failed
    with pytest.raises(MechanismFailure, match="noisy nvar"):
        _ = r.params
    assert r.to_dict()["coef"] is None
    assert "FAILED" in str(r.summary())


def test_significance_codes_right_closed():
    assert [significance_code(p) for p in (0.0005, 0.001, 0.005, 0.01, 0.05, 0.07, 0.1, 0.2)] == [
        "***", "***", "**", "**", "*", ".", ".", " "]


def test_summary_text_snapshot():
    text = make().summary().as_text()
    text = text.replace(make().version, "VERSION")
    expected = (SNAP / "summary_noisy_stats.txt").read_text()
    assert text == expected


def test_html_and_latex_render():
    s = make().summary()
    html = s._repr_html_()
    assert html.startswith("<div") and "<table" in html and "DPSuffStats" in html
    latex = s.as_latex()
    assert "\\begin{tabular}" in latex and "\\end{table}" in latex and "***" in latex


def test_to_dict_is_json_ready():
    import json

    d = make(extra={"predictions": {0.25: np.float64(1.5)}}).to_dict()
    json.dumps(d)
    assert d["coef"] == {"x": 2.0} and d["intercept"] == 1.0
    assert d["privacy"]["neighbouring"] == "replace-one"


# ---------------------------------------------------------------- frozen results (issue 17)
def test_results_are_frozen_after_construction():
    r = make(extra={"predictions": {0.25: 1.5}})
    for name, value in [("dep_var", "z"), ("bounds", None), ("privacy", None), ("method", "x"),
                        ("nobs", 3), ("failed", True), ("_params", None), ("new_attribute", 1)]:
        with pytest.raises(AttributeError, match="frozen"):
            setattr(r, name, value)
    with pytest.raises(AttributeError, match="frozen"):
        del r.dep_var
    with pytest.raises(TypeError, match="frozen"):
        r.extra["auto"] = {}
    with pytest.raises(TypeError, match="frozen"):
        r.extra.pop("predictions")
    with pytest.raises(TypeError, match="frozen"):
        r.bounds["y"] = (0.0, 2.0)  # type: ignore[index]
    with pytest.raises(TypeError, match="frozen"):
        r.extra |= {"a": 1}
    assert r.dep_var == "y" and r.bounds == {"y": (0.0, 1.0), "x": (0.0, 1.0)}
    assert set(r.extra) == {"predictions"} and r.method == "noisy-stats" and not r.failed


def test_replace_returns_a_new_result_and_leaves_the_old_one():
    r = make(extra={"a": 1})
    stmt = PrivacyStatement(PureDP(2.0), Neighbouring.REPLACE_ONE, "auto -> DPSuffStats", "rules")
    s = r.replace(dep_var="z", bounds={"z": (0, 2), "x": (0, 1)}, privacy=stmt,
                  extra={**r.extra, "auto": {"method": "noisy-stats"}}, method="auto:noisy-stats")
    assert s is not r and type(s) is RegressionResults
    assert (s.dep_var, s.method, s.privacy) == ("z", "auto:noisy-stats", stmt)
    assert s.bounds == {"z": (0.0, 2.0), "x": (0.0, 1.0)} and s.extra == {"a": 1, "auto": {"method": "noisy-stats"}}
    assert (r.dep_var, r.method, r.extra, r.privacy.mechanism) == ("y", "noisy-stats", {"a": 1}, "DPSuffStats")
    pd.testing.assert_series_equal(s.params, r.params)
    pd.testing.assert_frame_equal(s.conf_int(0.05), r.conf_int(0.05))
    with pytest.raises(AttributeError, match="frozen"):
        s.dep_var = "w"
    with pytest.raises(TypeError, match="frozen"):
        s.extra["b"] = 2
    # the release itself (estimates, errors, the ⊥ flag) is not metadata
    for bad in ({"params": [0.0, 0.0]}, {"failed": True}, {"bse": None}, {"nonsense": 1}):
        with pytest.raises(TypeError, match="cannot change"):
            r.replace(**bad)


def test_replace_shares_the_interval_cache():
    rng = np.random.default_rng(0)

    def fn(alpha):  # a random construction: the release must answer once per alpha
        return pd.DataFrame({"lower": rng.normal(size=2), "upper": rng.normal(size=2) + 5},
                            index=["intercept", "x"])

    r = make(bse=None, interval_fn=fn)
    s = r.replace(dep_var="z")
    pd.testing.assert_frame_equal(s.conf_int(0.1), r.conf_int(0.1))


def test_frozen_results_pickle_and_copy():
    import copy
    import pickle

    r = make(extra={"auto": {"method": "noisy-stats"}})
    for twin in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r), copy.copy(r)):
        pd.testing.assert_series_equal(twin.params, r.params)
        assert twin.extra == r.extra and twin.bounds == r.bounds and twin.privacy == r.privacy
        with pytest.raises(AttributeError, match="frozen"):
            twin.method = "x"
        with pytest.raises(TypeError, match="frozen"):
            twin.extra["x"] = 1


def test_fitted_estimator_clones_and_pickles_with_frozen_results():
    import pickle

    from sklearn.base import clone

    from dpreg.linear_model import NoisyStats

    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, 200)
    y = 2 * x + rng.normal(0, 0.1, 200)
    est = NoisyStats(epsilon=1.0, bounds_X=(0, 1), bounds_y=(-1, 3), random_state=3).fit(x.reshape(-1, 1), y)
    twin = pickle.loads(pickle.dumps(est))
    pd.testing.assert_series_equal(twin.results_.params, est.results_.params)
    with pytest.raises(AttributeError, match="frozen"):
        twin.results_.bounds = None
    fresh = clone(est)
    assert fresh.get_params() == est.get_params() and not hasattr(fresh, "results_")
