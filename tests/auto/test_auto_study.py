"""dpreg.auto.study: the metric and the threshold derivation on hand-made raw results."""

import math

import numpy as np
import pytest

from dpreg.auto.study import CANDIDATES, P_TRUE, c_true, derive_threshold, evaluate_rule


def test_c_true_is_the_ceil_q_order_statistic_with_bottom_as_infinity():
    p = P_TRUE + np.arange(1, 11) / 100.0  # errors 0.01 .. 0.10
    assert c_true(p) == pytest.approx(0.07)  # ⌈0.68·10⌉ = 7th
    p[:4] = np.nan
    assert c_true(p) == math.inf


def _raw(kind):
    # two cells: statistic ε·nvar = 10 (TS better) and 1000 (NoisyStats better)
    cells = np.array([[100, 0.01, 1.0, 0.01], [1000, 0.1, 10.0, 0.01]])
    nvar = np.array([[10.0], [100.0]])
    err = {"theil-sen-exp": (0.01, 0.05), "noisy-stats": (0.03, 0.01), "dp-gd": (0.2, 0.2),
           "theil-sen-wide": (0.05, 0.06)}
    out = {"cells": cells, "nvar": nvar, "sigma": np.array([0.01, 0.01]), "fraction": np.array(0.05)}
    for m, (a, b) in err.items():
        arr = np.empty((2, 1, 25))
        arr[0], arr[1] = P_TRUE + a, P_TRUE + b
        if kind == "derive":
            out[f"{m}|full"] = arr
        elif m in ("theil-sen-exp", "noisy-stats"):
            out[f"{m}|full"] = arr
            out[f"{m}|method"] = arr
    return out


def test_derivation_finds_a_separating_threshold_and_evaluation_scores_it():
    d = derive_threshold(_raw("derive"))
    assert 10 <= d["threshold"] < 1000
    assert d["worst_ratio"] == pytest.approx(1.0)
    assert d["cells_won"] == {"theil-sen-exp": 1, "noisy-stats": 1, "dp-gd": 0, "theil-sen-wide": 0}
    assert set(d["tables"]) == set(CANDIDATES)
    e = evaluate_rule(_raw("evaluate"), threshold=400.0)
    assert e["max_ratio"] == pytest.approx(1.0)
    assert e["chose_ns"][0] < 0.01 and e["chose_ns"][1] > 0.99
    bad = evaluate_rule(_raw("evaluate"), threshold=1e9)  # always Theil-Sen: cell 2 is 5x worse
    assert bad["max_ratio"] == pytest.approx(5.0)
    assert len(bad["cells_over_1.10"]) == 1
