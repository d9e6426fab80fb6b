"""Iterative Hessian mixing is a study, not a dpreg method: the library refuses the name (and
lists the methods it has), exports nothing of it, and the study implementation is still audited
with dpreg's auditor (the small audit every built-in target gets in tests/audit)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import Ledger
from dpreg.audit.registry import list_targets
from dpreg.exceptions import UnknownNameError
from dpreg.privacy.budgets import ApproxDP
from studies.ihm import IterativeHessianMixing
from studies.ihm.audit import NAME, TARGET, audit

SRC = Path(__file__).resolve().parents[2] / "src" / "dpreg"


def test_regress_refuses_the_method_before_charging():
    df = pd.DataFrame({"x": np.linspace(0, 1, 50), "y": np.linspace(0, 1, 50)})
    led = Ledger(ApproxDP(5.0, 1e-5))
    with pytest.raises(UnknownNameError, match="method must be one of") as info:
        dpreg.regress(df, "y ~ x", method="hessian-mixing", epsilon=1.0, delta=1e-6,
                      bounds={"x": (0, 1), "y": (0, 1)}, ledger=led)
    msg = str(info.value)
    assert "'adassp'" in msg and "'boosted-adassp'" in msg and "got 'hessian-mixing'" in msg
    assert led.events() == []  # nothing charged


def test_the_library_carries_no_trace_of_it():
    assert "hessian-mixing" not in dpreg.METHODS
    assert not hasattr(dpreg.linear_model, "IterativeHessianMixing")
    assert NAME not in list_targets()
    hits = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
            if "hessian_mixing" in p.name or "HessianMixing" in p.read_text(encoding="utf-8")
            or "hessian-mixing" in p.read_text(encoding="utf-8")]
    assert not hits, hits


def test_study_estimator_fits():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (400, 2))
    y = np.clip(X @ [0.5, -0.3] + 0.1 + rng.normal(0, 0.05, 400), 0, 1)
    est = IterativeHessianMixing(epsilon=4.0, delta=1e-6, bounds_X=[(0, 1), (0, 1)],
                                 bounds_y=(0, 1), random_state=1).fit(X, y)
    assert est.coef_.shape == (2,) and np.all(np.isfinite(est.coef_))


def test_study_target_runs_small():
    first = TARGET.pairs()[0].name
    assert len(TARGET.pairs()) >= 3
    (res,) = audit(pairs=[first], samples=48, alpha=1e-6, rng=0)
    assert res.method == NAME and res.pair == first and res.samples == 48
    assert res.claim == TARGET.claim and np.isfinite(res.epsilon_lcb)
    assert 0 < TARGET.claim.epsilon < 1.0
    assert res.passed  # 48 releases cannot show a loss above the claim at α = 1e-6
