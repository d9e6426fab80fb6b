"""DP-GD's per-group rounds: ``gd_gradient_sums`` (one fused pass that writes nothing but the
sums, optionally split between threads) against the per-group NumPy expression of the single
fit, bit for bit, and the grouped table for any number of threads."""

import numpy as np
import pandas as pd

from dpreg import fit_by_group

BOUNDS = {"x": (0.0, 1.0), "y": (0.0, 1.0)}


def _table(groups, seed, sizes):
    g = np.random.default_rng(seed)
    n = g.choice(sizes, groups)
    keys = np.repeat(np.arange(groups), n)
    x = g.uniform(-0.1, 1.1, keys.size)
    y = 0.2 + 0.5 * x + g.normal(0, 0.2, keys.size)
    return pd.DataFrame({"k": keys, "x": x, "y": y}).sample(frac=1, random_state=seed)


def _gd_reference(a, b, v, starts, p, tau):
    """The single fit's NumPy expression, group by group."""
    out = np.empty((starts.size - 1, 2))
    for k in range(starts.size - 1):
        s, e = starts[k], starts[k + 1]
        resid = 1.0 * (2.0 * (p[k, 0] * a[s:e] + p[k, 1] * b[s:e]) - v[s:e])
        out[k] = (np.clip(2.0 * resid * a[s:e], -tau, tau).sum(),
                  np.clip(2.0 * resid * b[s:e], -tau, tau).sum())
    return out


def test_fused_gradient_sums_are_the_numpy_expression():
    from concurrent.futures import ThreadPoolExecutor

    from dpreg.simple import _segments

    g = np.random.default_rng(5)
    # every branch of the pairwise sum: < 8, 8..128 (with a tail), > 128 (split), > 1024
    sizes = np.array([1, 2, 7, 8, 9, 15, 16, 127, 128, 129, 130, 255, 256, 257, 1000, 2049])
    sizes = np.concatenate([sizes, g.integers(1, 400, 300)])
    starts = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    u = g.uniform(0, 1, starts[-1])
    v = g.uniform(0, 1, starts[-1])
    a, b = 0.75 - u, u - 0.25
    p = g.normal(0.5, 2.0, (sizes.size, 2))  # large residuals: clipping is active
    for tau in (1.0, 0.05):
        want = _gd_reference(a, b, v, starts, p, tau)
        assert np.array_equal(_segments.gd_gradient_sums(a, b, v, starts, p, tau), want)
        with ThreadPoolExecutor(max_workers=3) as pool:
            old = _segments.GD_THREAD_MIN_ROWS
            _segments.GD_THREAD_MIN_ROWS = 0
            try:
                split = _segments.gd_gradient_sums(a, b, v, starts, p, tau, pool)
            finally:
                _segments.GD_THREAD_MIN_ROWS = old
        assert np.array_equal(split, want)
    # the check rejects another summation order (sequential sums differ in the last bits)
    seq = np.array([[float(np.add.accumulate(np.clip(2.0 * (1.0 * (2.0 * (p[k, 0] * a[s:e]
                    + p[k, 1] * b[s:e]) - v[s:e])) * a[s:e], -1, 1))[-1]), 0.0]
                    for k, (s, e) in enumerate(zip(starts[:-1], starts[1:]))])
    assert not np.array_equal(seq[:, 0], _gd_reference(a, b, v, starts, p, 1.0)[:, 0])


def test_dp_gd_table_does_not_depend_on_the_threads(monkeypatch):
    from dpreg.simple import _segments

    monkeypatch.setattr(_segments, "GD_THREAD_MIN_ROWS", 0)
    df = _table(60, 6, (0, 1, 2, 9, 140, 300))
    kw = dict(method="dp-gd", epsilon=1.0, bounds=BOUNDS, groups=list(range(60)),
              random_state=3, n_iter=12)
    one = fit_by_group(df, "k", "x", "y", workers=1, **kw)
    two = fit_by_group(df, "k", "x", "y", workers=2, **kw)
    ref = fit_by_group(df, "k", "x", "y", backend="reference", **kw)
    pd.testing.assert_frame_equal(one, two)
    pd.testing.assert_frame_equal(one, ref)
