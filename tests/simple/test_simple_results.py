"""Result types: guarded access on ⊥, predict, conversion to RegressionResults."""

import math

import numpy as np
import pytest

from dpreg import Neighbouring, PrivacyStatement, PureDP
from dpreg.exceptions import InvalidInputError, MechanismFailure
from dpreg.simple import ConfidenceInterval, SimpleRegressionResult, noisy_stats, ols

STMT = PrivacyStatement(PureDP(1.0), Neighbouring.REPLACE_ONE, "DPSuffStats", "test", True, {})


def test_line_result():
    r = SimpleRegressionResult("noisy-stats", STMT, released_slope=2.0, released_intercept=1.0,
                               released_predictions={0.25: 1.5, 0.75: 2.5}, n=10,
                               extra={"noisy_nvar": 3.0})
    assert r.slope == 2.0 and r.intercept == 1.0 and r.has_line
    assert r.predict(0.5) == 2.0
    np.testing.assert_allclose(r.predict([0.0, 1.0]), [1.0, 3.0])
    assert r.predictions == {0.25: 1.5, 0.75: 2.5}
    rr = r.to_regression_results(x_name="income", y_name="mobility")
    assert list(rr.params.index) == ["intercept", "income"]
    assert rr.params["income"] == 2.0 and rr.nobs == 10 and rr.dep_var == "mobility"
    assert not rr.has_bse and "privacy noise" in rr.uncertainty
    assert rr.extra["predictions"] == {0.25: 1.5, 0.75: 2.5}
    assert rr.extra["noisy_nvar"] == 3.0
    assert "slope=2" in repr(r)


def test_failed_result_never_hands_out_numbers():
    r = SimpleRegressionResult("noisy-stats", STMT, failed=True, reason="noisy nvar <= 0", n=5)
    for attr in ("slope", "intercept", "predictions"):
        with pytest.raises(MechanismFailure, match="nvar"):
            getattr(r, attr)
    with pytest.raises(MechanismFailure):
        r.predict(0.3)
    rr = r.to_regression_results()
    assert rr.failed and rr.reason == "noisy nvar <= 0"
    with pytest.raises(MechanismFailure):
        rr.params  # noqa: B018
    assert "FAILED" in repr(r) and not r.has_line


def test_slope_only_result():
    r = SimpleRegressionResult("theil-sen-exp", STMT, released_slope=0.4)
    assert r.slope == 0.4 and r.intercept is None and r.predictions == {}
    with pytest.raises(InvalidInputError, match="slope only"):
        r.predict(1.0)


def test_baseline_results_are_marked_not_private(rng):
    x = rng.uniform(size=30)
    y = x + rng.normal(0, 0.1, 30)
    o = ols(x, y)
    assert not o.privacy.private and math.isinf(o.privacy.budget.epsilon)
    assert set(o.extra["se_predictions"]) == {0.25, 0.75} and o.extra["se_slope"] > 0


def test_release_records_seeding(rng):
    x = rng.uniform(size=30)
    y = x + rng.normal(0, 0.1, 30)
    assert not noisy_stats(x, y, epsilon=1, x_bounds=(0, 1), y_bounds=(-1, 2)).privacy.seeded
    assert noisy_stats(x, y, epsilon=1, x_bounds=(0, 1), y_bounds=(-1, 2), rng=1).privacy.seeded


def test_confidence_interval_type():
    ci = ConfidenceInterval(0.1, 0.4, alpha=0.05, estimate=0.2, method="x")
    lo, hi = ci
    assert (lo, hi) == (0.1, 0.4) and ci.width == pytest.approx(0.3)
    assert 0.2 in ci and 0.5 not in ci and "a" not in ci
    with pytest.raises(AttributeError):
        ci.low = 0.0  # frozen
