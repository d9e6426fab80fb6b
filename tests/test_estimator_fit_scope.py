"""Every estimator's ``fit`` is one public call, written out once: ``DPRegressorBase.fit`` opens
the public-call scope (seed and δ warnings, the release context of the ledger charges, the
session's default ledger) around the estimator's own ``_fit``.  No estimator overrides ``fit``
(an override would leave the scope), and the scope behaves the same for every estimator."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpreg
from dpreg.auto import AutoDPRegression
from dpreg.exceptions import WeakSeedWarning
from dpreg.linear_model import (
    AdaSSP,
    BoostedAdaSSP,
    ClippedDPGradientDescent,
    CovarianceOLS,
    DPGradientDescent,
    DPRegressorBase,
    DPTheilSen,
    NoisyStats,
    SimpleDPGradientDescent,
    TukeyEM,
)
from dpreg.privacy import ApproxDP, Ledger
from studies.ihm.estimator import IterativeHessianMixing

B = (0.0, 1.0)
ONE_X = {"bounds_X": B, "bounds_y": B}
#: one instance per estimator (keyword arguments without the seed), fitted on one or two columns
ESTIMATORS = {
    NoisyStats: (1, {"epsilon": 2.0, **ONE_X}),
    DPTheilSen: (1, {"epsilon": 2.0, **ONE_X}),
    SimpleDPGradientDescent: (1, {"epsilon": 2.0, **ONE_X}),
    DPGradientDescent: (2, {"epsilon": 2.0, "delta": 1e-6, **ONE_X}),
    ClippedDPGradientDescent: (2, {"epsilon": 2.0, "delta": 1e-6, **ONE_X}),
    AdaSSP: (2, {"epsilon": 2.0, "delta": 1e-6, **ONE_X}),
    BoostedAdaSSP: (2, {"epsilon": 2.0, "delta": 1e-6, **ONE_X}),
    TukeyEM: (2, {"epsilon": 2.0, "delta": 1e-6}),
    CovarianceOLS: (2, {"epsilon": 2.0, "delta": 1e-6, **ONE_X}),
    AutoDPRegression: (2, {"epsilon": 2.0, "delta": 1e-6, **ONE_X}),
}


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def fit_overriders(classes: list[type]) -> list[str]:
    """The estimator classes that define ``fit`` themselves (and so leave the public scope)."""
    return sorted(c.__qualname__ for c in classes if "fit" in vars(c))


def test_no_estimator_overrides_fit():
    classes = _subclasses(DPRegressorBase)
    assert IterativeHessianMixing in classes  # the studies' estimator is covered too
    assert set(ESTIMATORS) <= set(classes)
    assert fit_overriders(classes) == []
    assert all(c.fit is DPRegressorBase.fit for c in classes)


def test_the_override_check_can_fail():
    class Bypass(AdaSSP):
        def fit(self, X, y):  # would fit outside the public-call scope
            return self._fit(X, y)

    assert fit_overriders([AdaSSP, Bypass]) == ["test_the_override_check_can_fail.<locals>.Bypass"]


def test_an_estimator_without_its_own_fit_cannot_be_made():
    class Incomplete(DPRegressorBase):
        pass

    with pytest.raises(TypeError, match="_fit"):
        Incomplete()


def _data(d: int, n: int = 3000) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(11)
    X = g.uniform(0, 1, (n, d))
    y = np.clip(0.2 + X @ np.full(d, 0.5 / d) + g.normal(0, 0.05, n), 0, 1)
    return X, y


@pytest.mark.parametrize("cls", list(ESTIMATORS), ids=lambda c: c.__name__)
def test_every_fit_is_one_public_call(cls, tmp_path):
    d, kw = ESTIMATORS[cls]
    X, y = _data(d)
    # a weak seed warns exactly once, also where the fit runs inner fits (DPGradientDescent)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        est = cls(random_state=1234, **kw).fit(X, y)
    assert sum(issubclass(w.category, WeakSeedWarning) for w in got) == 1
    assert est.coef_.shape == (d,)
    # the session's default ledger is charged for an estimator given no ledger, the charges
    # name the estimator's fit, and the estimator's own ledger parameter is left as it was
    led = Ledger(ApproxDP(100.0, 1e-3))
    previous = dpreg.set_default_ledger(led)
    try:
        est = cls(random_state=None, **kw)
        est.fit(X, y)
    finally:
        dpreg.set_default_ledger(previous)
    assert est.ledger is None
    events = led.events()
    assert events and {e.info["entry"] for e in events} == {f"{cls.__name__}.fit"}
    assert fit_overriders([cls]) == []
