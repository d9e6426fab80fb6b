"""Planted bugs (tests/audit/planted.py) must be detected; the correct releases must pass.

Fast suite: the bugs whose leak is large are caught with 5,000 releases per side.  Slow suite
(``make test-slow``): every planted bug, 5 independent audits each at α = 1e-6, detected by a
majority, and the correct release on the same configuration passes; the table is printed.
"""

from __future__ import annotations

import numpy as np
import pytest
from planted import by_name, draw, planted_bugs

from dpreg.audit import audit_samples
from dpreg.exceptions import InvalidInputError
from dpreg.replicates import replicate_predictions

ALPHA = 1e-6
FAST = ["sum-bound-twice", "bottom-from-unnoised", "bounds-from-data", "clip-unused",
        "nan-through-clip", "noise-x0.8", "group-key-twice", "seeded-float-laplace"]


def run(p, sampler, n, seed):
    a = draw(sampler, p.pair.d, n, seed)
    b = draw(sampler, p.pair.d_prime, n, seed + 1)
    return audit_samples(a, b, claim=p.claim, alpha=ALPHA, rng=seed + 2, method=p.name,
                         pair=p.pair.name, names=p.names)


def test_there_are_at_least_twelve_distinct_bugs():
    bugs = planted_bugs()
    assert len(bugs) >= 12 and len({b.name for b in bugs}) == len(bugs)
    import dpreg

    assert not hasattr(dpreg, "planted") and "planted" not in dir(dpreg.audit)


@pytest.mark.parametrize("name", FAST)
def test_large_leaks_are_caught_fast(name):
    p = by_name()[name]
    n = 40_000 if name == "noise-x0.8" else 5_000
    bad = run(p, p.buggy, n, 11)
    assert not bad.passed, (name, bad.epsilon_lcb, bad.event)
    if p.correct is not None:
        good = run(p, p.correct, n, 21)
        assert good.passed, (name, good.epsilon_lcb, good.event)


def test_nan_record_is_rejected_by_the_library():
    p = by_name()["nan-through-clip"]
    with pytest.raises(InvalidInputError, match="finite"):
        replicate_predictions("noisy-stats", p.pair.d_prime["x"], p.pair.d_prime["y"],
                              epsilon=2.0, x_bounds=(0, 1), y_bounds=(0, 1), trials=3)


@pytest.mark.slow
def test_planted_bug_table():
    runs = 5
    rows = []
    for p in planted_bugs():
        verdicts = [not run(p, p.buggy, p.samples, 100 * k).passed for k in range(runs)]
        lcb = run(p, p.buggy, p.samples, 999).epsilon_lcb
        ok = None if p.correct is None else run(p, p.correct, p.samples, 555)
        rows.append((p.name, sum(verdicts), runs, p.samples, p.claim.epsilon, lcb,
                     None if ok is None else ok.epsilon_lcb, None if ok is None else ok.passed))
    print("\n| bug | detected | runs | N | ε claimed | ε_LCB (bug) | ε_LCB (correct) | correct passes |")
    print("|---|---|---|---|---|---|---|---|")
    for name, det, r, n, eps, lcb, lcb_ok, passed in rows:
        print(f"| {name} | {'yes' if det > r // 2 else 'NO'} ({det}/{r}) | {r} | {n:,} | "
              f"{eps:.3g} | {lcb:.3f} | {'—' if lcb_ok is None else f'{lcb_ok:.3f}'} | "
              f"{'rejects input' if passed is None else passed} |")
    assert all(det > r // 2 for _, det, r, *_ in rows), rows
    assert all(p is not False for *_, p in rows), rows
    assert np.isfinite([lcb for *_, lcb, _, _ in rows]).all()
