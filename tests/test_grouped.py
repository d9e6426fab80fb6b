"""Per-group fits: public keys, per-key streams, parallel-composition statement."""

import numpy as np
import pandas as pd
import pytest

from dpreg import InvalidInputError, fit_by_group
from dpreg.demo import c_hat

BOUNDS = {"x": (0.0, 1.0), "y": (0.0, 1.0)}


def table(seed=0):
    g = np.random.default_rng(seed)
    keys = np.repeat(["t1", "t2", "t3"], [50, 80, 1])
    x = g.uniform(0, 1, keys.size)
    return pd.DataFrame({"k": keys, "x": x, "y": np.clip(0.3 + 0.4 * x + g.normal(0, .1, keys.size), 0, 1)})


def test_results_do_not_depend_on_row_order():
    df = table()
    a = fit_by_group(df, "k", "x", "y", method="theil-sen-exp", epsilon=2, bounds=BOUNDS,
                     random_state=7, groups="from-data")
    b = fit_by_group(df.sample(frac=1, random_state=3), "k", "x", "y", method="theil-sen-exp",
                     epsilon=2, bounds=BOUNDS, random_state=7, groups=["t3", "t1", "t2"])
    merged = a.merge(b, on="group", suffixes=("_a", "_b"))
    ok = ~merged["failed_a"]
    # same key -> same stream; all-pairs Theil-Sen only sees the multiset of pair estimates,
    # so permuting rows and listing groups in another order gives identical releases
    np.testing.assert_allclose(merged.loc[ok, "slope_a"], merged.loc[ok, "slope_b"], rtol=1e-12)
    assert set(a["group"]) == {"t1", "t2", "t3"}


def test_same_order_same_release():
    df = table()
    a = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=2, bounds=BOUNDS,
                     random_state=5, groups=["t1", "t2", "t3"])
    b = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=2, bounds=BOUNDS,
                     random_state=5, groups=["t2", "t1", "t3"])
    pd.testing.assert_frame_equal(a.set_index("group").sort_index(),
                                  b.set_index("group").sort_index())


def test_declared_groups_absent_and_too_small():
    out = fit_by_group(table(), "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                       groups=["t1", "t2", "t3", "t4"], random_state=0)
    row = out.set_index("group")
    assert row.loc["t4", "failed"] and row.loc["t4", "n"] == 0
    assert row.loc["t3", "failed"] and "at least 2" in row.loc["t3", "reason"]
    assert "parallel composition" in out.attrs["privacy"]
    assert "public list" in out.attrs["privacy"]


def test_bad_keys():
    df = table()
    df.loc[0, "k"] = None  # a row with a missing key is in no group (not an error)
    out = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                       groups=["t1", "t2"], random_state=0)
    assert list(out["n"]) == [49, 80]
    with pytest.raises(InvalidInputError, match="duplicate"):
        fit_by_group(table(), "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                     groups=["t1", "t1"])
    with pytest.raises(InvalidInputError, match="bounds"):
        fit_by_group(table(), "k", "x", "y", method="noisy-stats", epsilon=1, bounds={"x": (0, 1)},
                     groups=["t1"])


def test_c_hat_counts_failures_as_infinite():
    assert c_hat(np.array([0.1, 0.2, 0.3, 0.4])) == 0.3  # ⌈0.68·4⌉ = 3rd smallest
    assert c_hat(np.array([0.1, np.nan, np.nan, np.nan])) == np.inf


@pytest.mark.parametrize("bounds", ["private", {"x": "private", "y": (0, 1)}])
def test_private_bounds_are_refused_per_group_with_the_reason(bounds):
    with pytest.raises(InvalidInputError, match="same public x points"):
        fit_by_group(table(), "k", "x", "y", method="auto", epsilon=1.0, bounds=bounds,
                     random_state=0, groups=["t1"])
