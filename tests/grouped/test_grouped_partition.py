"""The partition of fit_by_group's local backend: the two-pass scatter (large tables with many
groups) puts every declared row where the one-pass counting sort puts it -- bit for bit, rows
in their original order inside a group -- and checks x and y in declared rows only."""

import numpy as np
import pytest

from dpreg.grouped import _common


def _case(groups, rows, seed, undeclared=0.1):
    g = np.random.default_rng(seed)
    codes = g.integers(0, groups, rows)
    codes[g.random(rows) < undeclared] = -1  # rows of undeclared keys
    codes[codes == 3] = -1  # an empty group
    x, y = g.normal(size=rows), g.normal(size=rows)
    counts = np.bincount(codes + 1, minlength=groups + 1)[1:]
    starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return codes.astype(np.int64), x, y, starts


def _run(codes, x, y, starts, two_pass):
    xs, ys = np.empty(int(starts[-1])), np.empty(int(starts[-1]))
    bad = _common._scatter(codes, x, y, starts, xs, ys, two_pass=two_pass)
    return bad, xs, ys


@pytest.mark.parametrize("groups,rows", [(1, 50), (5, 1000), (700, 30_000), (5000, 20_000)])
def test_two_pass_scatter_is_the_one_pass_scatter(groups, rows):
    codes, x, y, starts = _case(groups, rows, groups)
    one = _run(codes, x, y, starts, False)
    two = _run(codes, x, y, starts, True)
    assert one[0] == two[0] == 0
    assert np.array_equal(one[1], two[1]) and np.array_equal(one[2], two[2])
    # the definition: rows of group k in row order
    keep = np.flatnonzero(codes >= 0)
    order = keep[np.argsort(codes[keep], kind="stable")]
    assert np.array_equal(two[1], x[order]) and np.array_equal(two[2], y[order])
    # and the check rejects a wrong order (rows of a group reversed)
    k = int(np.argmax(np.diff(starts)))
    wrong = two[1].copy()
    wrong[starts[k]:starts[k + 1]] = wrong[starts[k]:starts[k + 1]][::-1]
    assert not np.array_equal(wrong, one[1])


@pytest.mark.parametrize("two_pass", [False, True])
def test_non_finite_values_are_found_in_declared_rows_only(two_pass):
    codes, x, y, starts = _case(700, 30_000, 1)
    und = int(np.flatnonzero(codes < 0)[0])
    dec = int(np.flatnonzero(codes >= 0)[5])
    x2 = x.copy()
    x2[und] = np.nan
    assert _run(codes, x2, y, starts, two_pass)[0] == 0
    y2 = y.copy()
    y2[dec] = np.inf
    assert _run(codes, x, y2, starts, two_pass)[0] == 2
    x2[dec] = -np.inf
    assert _run(codes, x2, y2, starts, two_pass)[0] == 1


def test_partition_frame_takes_the_two_pass_path_on_large_tables(monkeypatch):
    import pandas as pd

    from dpreg.grouped._common import make_spec, partition_frame

    codes, x, y, _ = _case(400, 40_000, 2, undeclared=0.0)
    df = pd.DataFrame({"k": codes, "x": x, "y": y})
    spec = make_spec(df.columns, None, "k", "x", "y", method="noisy-stats", epsilon=1.0,
                     bounds={"x": (-9, 9), "y": (-9, 9)}, delta=None,
                     groups=list(range(400)), random_state=0, options={})
    one = partition_frame(df, spec)
    used = []
    real = _common._compiled_scatter_two_pass

    def spy():
        used.append(True)
        return real()

    monkeypatch.setattr(_common, "_compiled_scatter_two_pass", spy)
    monkeypatch.setattr(_common, "TWO_PASS_MIN_ROWS", 1000)
    two = partition_frame(df, spec)
    assert used
    assert np.array_equal(one.x, two.x) and np.array_equal(one.y, two.y)
    assert np.array_equal(one.starts, two.starts)
