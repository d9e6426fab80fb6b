"""Per-group AdaSSP/BoostedAdaSSP tables build their plan once per table (issue 31).

``MethodSpec.table_plan`` builds the ReleasePlan from the public inputs alone (ε, δ, bounds,
options; no n, no rows) and ``release_group_line`` releases each group from it with the key's
own stream.  The table must be the reference loop's (one ``fit_arrays`` per group, which plans
every group again) bit for bit, ⊥ rows and the n <= p refusal under replace-one included.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpreg import InvalidInputError, fit_by_group, methods
from dpreg.exceptions import PrivacyLeakWarning, WeakSeedWarning

BOUNDS = {"x": (0.0, 1.0), "y": (-2.0, 4.0)}
KEYS = list(range(30))


def frame(seed=3):
    g = np.random.default_rng(seed)
    sizes = g.integers(3, 60, len(KEYS))
    sizes[:3] = [0, 1, 0]  # empty and too-small groups: ⊥ rows before any release
    df = pd.DataFrame({"k": np.repeat(KEYS, sizes)})
    df["x"] = g.uniform(-0.2, 1.2, len(df))  # some rows outside the bounds: clipped
    df["y"] = 2.0 * df["x"] + g.normal(0.0, 0.3, len(df))
    return df


def both(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakSeedWarning)
        shared = fit_by_group(df, "k", "x", "y", groups=KEYS, bounds=BOUNDS, **kw)
        ref = fit_by_group(df, "k", "x", "y", groups=KEYS, bounds=BOUNDS, backend="reference",
                           **kw)
    return shared, ref


CASES = [
    ("adassp", {}),
    ("adassp", {"lambda_rule": "wang"}),
    ("adassp", {"calibration": "wang"}),
    ("adassp", {"inference": True, "n_boot": 60}),
    ("adassp", {"floor_scale": 3.0, "failure_prob": 0.1}),
    ("boosted-adassp", {"n_rounds": 5}),
    ("boosted-adassp", {}),
    ("boosted-adassp", {"n_rounds": 7, "split": "equal", "schedule": "1/t", "tau": 0.5}),
]


@pytest.mark.parametrize("method,opts", CASES)
@pytest.mark.parametrize("epsilon", [1.0, 0.02])
def test_table_plan_equals_the_per_group_fits_bit_for_bit(method, opts, epsilon):
    shared, ref = both(frame(), method=method, epsilon=epsilon, delta=1e-6, random_state=11,
                       **opts)
    assert shared.attrs["backend"] == "local (one plan per table)"
    assert ref.attrs.get("backend") is None or ref.attrs["backend"] != shared.attrs["backend"]
    pd.testing.assert_frame_equal(shared, ref, check_exact=True)
    assert shared.attrs["privacy"] == ref.attrs["privacy"]
    done = ~shared["failed"]
    assert shared["failed"].iloc[:3].all() and done.sum() >= 20
    assert np.all(np.isfinite(shared.loc[done, "slope"]))
    # the noise is real: another seed gives other lines
    other, _ = both(frame(), method=method, epsilon=epsilon, delta=1e-6, random_state=12,
                    **opts)
    assert not np.array_equal(other.loc[done, "slope"], shared.loc[done, "slope"])


def test_the_plan_is_built_once_per_table(monkeypatch):
    spec = methods.get("adassp")
    calls = []
    real = type(spec).plan

    def counting(self, **kw):
        calls.append(kw["n"])
        return real(self, **kw)

    monkeypatch.setattr(type(spec), "plan", counting)
    shared, _ = both(frame(), method="adassp", epsilon=1.0, delta=1e-6, random_state=1)
    assert calls == [None]  # one plan, from public inputs only (no n, no rows)
    assert (~shared["failed"]).sum() >= 20


def test_a_group_of_p_rows_is_refused_as_the_single_fit_refuses_it():
    df = pd.DataFrame({"k": [0, 0, 1, 1, 1], "x": [.1, .2, .3, .4, .5],
                       "y": [.1, .2, .3, .4, .5]})
    msgs = []
    for backend in ("local", "reference"):
        with pytest.raises(InvalidInputError, match="more rows than model parameters") as exc:
            fit_by_group(df, "k", "x", "y", method="boosted-adassp", epsilon=1.0, delta=1e-6,
                         bounds=BOUNDS, groups=[0, 1], random_state=2**100, backend=backend)
        msgs.append(str(exc.value))
    assert msgs[0] == msgs[1]


def test_infinite_epsilon_warns_like_the_single_fit():
    with pytest.warns(PrivacyLeakWarning, match="AdaSSP"):
        shared, ref = both(frame(), method="adassp", epsilon=np.inf, delta=1e-6,
                           random_state=2**100)
    pd.testing.assert_frame_equal(shared, ref, check_exact=True)


def test_secure_mode_runs_from_the_table_plan():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = fit_by_group(frame(), "k", "x", "y", method="adassp", epsilon=1.0, delta=1e-6,
                           bounds=BOUNDS, groups=KEYS)
    assert out.attrs["backend"] == "local (one plan per table)"
    assert (~out["failed"]).sum() >= 20


def test_other_methods_have_no_table_plan():
    for spec in methods.specs():
        if spec.name not in ("adassp", "boosted-adassp"):
            assert spec.table_plan(epsilon=1.0, delta=1e-6, x_bounds=(0, 1), y_bounds=(0, 1),
                                   options={}) is None
