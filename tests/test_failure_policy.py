"""One ⊥ policy (docs/architecture.md, "Failure (⊥) policy").

Cores, ``regress`` and ``fit_arrays`` return a result with ``failed=True`` and a reason; a
per-group table has a ⊥ row (``failed``, ``reason``); estimators raise
:class:`~dpreg.MechanismFailure` from ``fit`` by default (``raise_on_failure=True``) and with
``raise_on_failure=False`` keep the failed ``results_`` (``predict`` raises).  The budget stays
charged in every case: ⊥ is itself a private output.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.exceptions import InvalidParameterError, MechanismFailure

ESTIMATORS = [dpreg.NoisyStats, dpreg.DPTheilSen, dpreg.DPGradientDescent, dpreg.AdaSSP,
              dpreg.BoostedAdaSSP, dpreg.TukeyEM, dpreg.CovarianceOLS, dpreg.AutoDPRegression]
#: a NoisyStats fit at this ε and seed is ⊥ (its noisy nvar(x) <= 0), found once by search
EPS, FAIL_SEED = 0.01, 2**100 + 1


def _xy(n: int = 50) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(0)
    x = g.uniform(0.0, 1.0, (n, 1))
    return x, np.clip(x[:, 0] * 0.5 + g.normal(0.0, 0.1, n), 0.0, 1.0)


def _failing_seed() -> int:
    X, y = _xy()
    for s in range(FAIL_SEED, FAIL_SEED + 200):
        res = dpreg.NoisyStats(epsilon=EPS, bounds_X=(0, 1), bounds_y=(0, 1), inference=False,
                               random_state=s, raise_on_failure=False).fit(X, y).results_
        if res.failed:
            return s
    raise AssertionError("no ⊥ seed found")


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_every_estimator_takes_raise_on_failure_defaulting_to_raise(cls):
    p = inspect.signature(cls).parameters["raise_on_failure"]
    assert p.default is True and cls().get_params()["raise_on_failure"] is True


@pytest.mark.parametrize("bad", ["no", 0, None])
def test_a_non_boolean_raise_on_failure_is_refused_before_anything_is_charged(bad):
    X, y = _xy()
    led = dpreg.Ledger(dpreg.PureDP(10.0))
    with pytest.raises(InvalidParameterError, match="raise_on_failure must be True or False"):
        dpreg.NoisyStats(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1), ledger=led,
                         raise_on_failure=bad).fit(X, y)
    assert not led.events()


def test_raise_on_failure_true_raises_and_keeps_the_charge():
    X, y = _xy()
    s = _failing_seed()
    led = dpreg.Ledger(dpreg.PureDP(10.0))
    est = dpreg.NoisyStats(epsilon=EPS, bounds_X=(0, 1), bounds_y=(0, 1), inference=False,
                           random_state=s, ledger=led)
    with pytest.raises(MechanismFailure, match="⊥"):
        est.fit(X, y)
    assert len(led.events()) == 1 and est.results_.failed


def test_raise_on_failure_false_returns_the_failed_release_and_predict_refuses():
    X, y = _xy()
    s = _failing_seed()
    led = dpreg.Ledger(dpreg.PureDP(10.0))
    est = dpreg.NoisyStats(epsilon=EPS, bounds_X=(0, 1), bounds_y=(0, 1), inference=False,
                           random_state=s, ledger=led, raise_on_failure=False)
    assert est.fit(X, y) is est
    assert est.results_.failed and "⊥" in est.results_.reason and len(led.events()) == 1
    assert not hasattr(est, "coef_")
    with pytest.raises(MechanismFailure, match="no coefficients"):
        est.predict(X)


def test_a_failed_refit_does_not_keep_the_previous_fits_coefficients():
    """A ⊥ refit of a fitted estimator left the previous release's coef_/intercept_ in place
    (with raise_on_failure=False predict would have used them silently); now they go."""
    X, y = _xy()
    s = _failing_seed()
    est = dpreg.NoisyStats(epsilon=100.0, bounds_X=(0, 1), bounds_y=(0, 1), inference=False,
                           random_state=FAIL_SEED + 10_000).fit(X, y)
    assert hasattr(est, "coef_")
    est.set_params(epsilon=EPS, random_state=s)
    with pytest.raises(MechanismFailure):
        est.fit(X, y)
    assert not hasattr(est, "coef_") and not hasattr(est, "intercept_")
    with pytest.raises(MechanismFailure):
        est.predict(X)


def test_dp_gradient_descent_passes_the_policy_to_its_inner_estimator(monkeypatch):
    X, y = _xy()
    est = dpreg.DPGradientDescent(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1),
                                  raise_on_failure=False, random_state=FAIL_SEED)
    assert est._inner(1).raise_on_failure is False
    est.fit(X, y)
    assert not est.results_.failed and hasattr(est, "coef_")


def test_regress_and_fit_by_group_return_failures_as_results():
    X, y = _xy()
    s = _failing_seed()
    df = pd.DataFrame({"x": X[:, 0], "y": y, "k": 0})
    res = dpreg.regress(df, "y ~ x", method="noisy-stats", epsilon=EPS, inference=False,
                        bounds={"x": (0, 1), "y": (0, 1)}, random_state=s)
    assert res.failed and res.reason
    for seed in range(FAIL_SEED, FAIL_SEED + 200):  # a ⊥ row is a row, not an exception
        table = dpreg.fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=EPS,
                                   bounds={"x": (0, 1), "y": (0, 1)}, groups=[0],
                                   random_state=seed)
        if table["failed"].iloc[0]:
            break
    assert table["failed"].iloc[0] and "⊥" in table["reason"].iloc[0]
    assert np.isnan(table["slope"].iloc[0])
