"""Pooling coverage summaries of independent runs (studies.dpci.pool_summaries)."""

import math

import pandas as pd
import pytest

from studies.dpci import pool_summaries


def _run(cov, reps, ratio=1.0, alpha=0.1):
    return pd.DataFrame([{"method": "m", "design": "d", "alpha": alpha, "kind": "percentile",
                          "param": "x0", "reps": reps, "coverage": cov, "naive_coverage": 0.5,
                          "np_coverage": 0.9, "median_ratio": ratio}])


def test_pooled_coverage_is_the_repetition_weighted_mean_with_its_binomial_se():
    out = pool_summaries([_run(0.8845, 2000), _run(0.8895, 2000, ratio=1.2), _run(0.8995, 4000)])
    row = out.iloc[0]
    assert row["runs"] == 3 and row["reps"] == 8000
    assert row["coverage"] == pytest.approx((0.8845 * 2000 + 0.8895 * 2000 + 0.8995 * 4000) / 8000)
    assert row["coverage_se"] == pytest.approx(math.sqrt(row["coverage"] * (1 - row["coverage"])
                                                         / 8000))
    assert bool(row["in_target"])  # 0.89075 in [0.89, 0.93]
    assert row["median_ratio_max"] == 1.2
    low = pool_summaries([_run(0.8845, 2000), _run(0.8895, 2000)]).iloc[0]
    assert not bool(low["in_target"])  # 0.887 < 0.89


def test_cells_are_pooled_separately():
    a = _run(0.9, 100)
    b = _run(0.95, 100, alpha=0.05)
    out = pool_summaries([a, b, a])
    assert len(out) == 2
    assert list(out["runs"]) == [2, 1]
