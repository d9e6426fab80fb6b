"""Hypothesis strategies for hostile data and parameters, and the release contract.

Contract checked for every public entry point:

* it either returns, or raises a documented :class:`dpreg.DPRegError` (``InvalidInputError``
  for bad input, ``BudgetExceededError``, ``MechanismFailure`` for a ⊥ release from an
  estimator); anything else is a crash;
* a returned release contains no NaN or ±inf (a ⊥ release is flagged ``failed`` instead);
* rejected input (``InvalidInputError``) charges nothing: the ledger is unchanged.
"""

from __future__ import annotations

import math
import os
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from dpreg import ApproxDP, Ledger
from dpreg.exceptions import (
    BudgetExceededError,
    DPRegError,
    InvalidInputError,
    MechanismFailure,
)

EXAMPLES = int(os.environ.get("DPREG_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                       HealthCheck.data_too_large])
COUNTS: Counter[str] = Counter()
OUTCOMES: Counter[str] = Counter()

SPECIAL = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e308, -1e308,
           1.7976931348623157e308, 1.0, -1.0, 0.5, 1e-300]
BAD = [math.nan, math.inf, -math.inf]

finite = st.one_of(st.sampled_from(SPECIAL), st.floats(-1e6, 1e6, allow_nan=False),
                   st.floats(allow_nan=False, allow_infinity=False))
anyfloat = st.one_of(finite, st.sampled_from(BAD))


@st.composite
def vectors(draw, min_size=0, max_size=25, bad=True):
    """1-D data: hostile floats, constant or duplicated values, odd dtypes."""
    n = draw(st.integers(min_size, max_size))
    kind = draw(st.sampled_from(["float", "float", "float", "constant", "dup", "int", "bool",
                                 "object", "string", "none"] if bad else
                                ["float", "float", "constant", "dup", "int"]))
    elem = anyfloat if bad else finite
    if kind == "constant":
        v = draw(finite)
        return np.full(n, v)
    if kind == "dup":
        vals = draw(st.lists(finite, min_size=1, max_size=3))
        return np.array([vals[i % len(vals)] for i in range(n)], dtype=float)
    if kind == "int":
        return np.array(draw(st.lists(st.integers(-10**6, 10**6), min_size=n, max_size=n)))
    if kind == "bool":
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    if kind == "object":
        return np.array(draw(st.lists(st.one_of(elem, st.text(max_size=3)), min_size=n,
                                      max_size=n)), dtype=object)
    if kind == "string":
        return np.array(draw(st.lists(st.text(max_size=3), min_size=n, max_size=n)))
    if kind == "none":
        return [None] * n
    return np.array(draw(st.lists(elem, min_size=n, max_size=n)), dtype=float)


@st.composite
def xy(draw, bad=True, max_size=25):
    """A one-x data set, in the unit box most of the time (so that deep code runs)."""
    mode = draw(st.sampled_from(["box", "box", "hostile", "mismatch"]))
    if mode == "box":
        n = draw(st.integers(0 if bad else 2, max_size))
        x = np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
        y = np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
        if bad and n and draw(st.booleans()):
            i = draw(st.integers(0, n - 1))
            (x if draw(st.booleans()) else y)[i] = draw(anyfloat)
        return x, y
    x = draw(vectors(bad=bad, max_size=max_size))
    if mode == "mismatch":
        return x, draw(vectors(bad=bad, max_size=max_size))
    n = len(x)
    y = draw(vectors(min_size=n, max_size=n, bad=bad))
    return x, y


@st.composite
def design(draw, max_rows=30, max_d=4):
    """A design matrix: n×d with hostile values, d > n, constant or duplicated columns."""
    mode = draw(st.sampled_from(["box", "box", "hostile", "wide", "constcol", "dupcol", "frame",
                                 "ragged"]))
    d = draw(st.integers(1, max_d))
    n = draw(st.integers(0, max_rows))
    if mode == "wide":
        n = draw(st.integers(0, d))
    if mode == "ragged":
        return [[1.0] * draw(st.integers(0, 3)) for _ in range(n)], np.zeros(n)
    if mode == "hostile":
        X = np.array(draw(st.lists(anyfloat, min_size=n * d, max_size=n * d)),
                     dtype=float).reshape(n, d)
    else:
        X = np.array(draw(st.lists(st.floats(0, 1), min_size=n * d, max_size=n * d)),
                     dtype=float).reshape(n, d)
    if mode == "constcol" and n:
        X[:, 0] = draw(finite)
    if mode == "dupcol" and d > 1:
        X[:, 1] = X[:, 0]
    y = np.array(draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n)), dtype=float)
    if draw(st.booleans()) and n:
        y[draw(st.integers(0, n - 1))] = draw(anyfloat)
    if mode == "frame":
        frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(d)])
        if draw(st.booleans()) and n:
            frame["c0"] = frame["c0"].astype(object)
            frame.loc[0, "c0"] = "text"
        return frame, y
    return X, y


epsilons = st.one_of(st.sampled_from([0, -1.0, math.nan, math.inf, -math.inf, 1e-300, 1e300,
                                      5e-324, True, "1", None, 1e308]),
                     st.floats(1e-3, 50))
deltas = st.one_of(st.sampled_from([0, 1, -0.1, math.nan, 1e-300, 0.5, 1e-6, math.inf, None,
                                    5e-324]),
                   st.floats(1e-9, 0.2))
positive = st.one_of(st.sampled_from([0, -1.0, math.nan, math.inf, 1e-300, 1e300, 5e-324, None,
                                      "a"]),
                     st.floats(1e-3, 1e3))
bounds = st.one_of(
    st.sampled_from([(0, 1), (1, 0), (0, 0), (math.nan, 1), (-math.inf, math.inf),
                     (-1e308, 1e308), (5e-324, 1e-323), (-1, 1), (0, 1e-300), (0,), "0:1",
                     None, (0, 1, 2), (-1e300, -1e299)]),
    st.tuples(finite, finite))
rngs = st.sampled_from([0, 1, None, -1, "seed", 2**70])


def fresh_ledger() -> Ledger:
    return Ledger(ApproxDP(1e12, 0.9))


#: diagnostics that are not released statistics and may legitimately be +inf (the DP-CI noise
#: ratio κ of dpreg.inference.uncertainty is inf when the sampling variance is 0, e.g. n = 1;
#: the result then says the interval is unreliable)
DIAGNOSTICS = {"dp_ci_noise_ratio"}


def finite_tree(obj: Any, where: str = "") -> None:
    """Every number reachable in a release is finite."""
    if obj is None or isinstance(obj, (str, bool)):
        return
    if isinstance(obj, (float, int, np.floating, np.integer)):
        assert math.isfinite(float(obj)), f"non-finite release at {where}: {obj!r}"
        return
    if isinstance(obj, (pd.Series, pd.DataFrame)):
        finite_tree(obj.to_numpy(dtype=float), where)
        return
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fiu":
            assert np.all(np.isfinite(obj)), f"non-finite release at {where}"
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in DIAGNOSTICS and isinstance(v, float) and v == math.inf:
                continue
            finite_tree(v, f"{where}[{k!r}]")
        return
    if isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            finite_tree(v, f"{where}[{i}]")


def check_release(target: str, call: Callable[[Ledger | None], Any],
                  released: Callable[[Any], Any]) -> None:
    """Run ``call(ledger)`` and check the contract; ``released(result)`` extracts the released
    numbers of a successful, non-⊥ result (return None for a ⊥ result)."""
    COUNTS[target] += 1
    led = fresh_ledger()
    before = len(led.events())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = call(led)
        except InvalidInputError:
            OUTCOMES["rejected"] += 1
            assert len(led.events()) == before, f"{target}: rejected input was charged"
            return
        except MechanismFailure:
            OUTCOMES["bottom"] += 1
            return
        except BudgetExceededError:
            OUTCOMES["budget"] += 1
            assert len(led.events()) == before
            return
        except DPRegError:
            OUTCOMES["other-documented"] += 1
            return
    OUTCOMES["released"] += 1
    finite_tree(released(out), target)
