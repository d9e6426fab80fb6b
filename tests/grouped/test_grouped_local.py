"""The vectorised LocalBackend against the reference per-group loop: identical releases for
the same seeds (every simple method), public keys and presence, bad keys, secure mode, the
segment kernels and the ``dpreg fit-groups --backend`` command."""

import sys

import numpy as np
import pandas as pd
import pytest

from dpreg import InvalidInputError, fit_by_group
from dpreg.grouped import group_seed_sequence, parse_key_list
from dpreg.simple._segments import segment_sums, segment_sums_numpy

BOUNDS = {"x": (0.0, 1.0), "y": (0.0, 1.0)}


def table(groups=30, seed=0, *, sizes=(0, 1, 2, 3, 40, 130, 260)):
    """Integer keys 0..groups−1 with varied sizes (including 0 and 1 rows), shuffled rows."""
    g = np.random.default_rng(seed)
    n = g.choice(sizes, groups)
    keys = np.repeat(np.arange(groups), n)
    x = g.uniform(-0.1, 1.1, keys.size)  # some rows outside the bounds: clipping matters
    y = 0.2 + 0.5 * x + g.normal(0, 0.2, keys.size)
    df = pd.DataFrame({"k": keys, "x": x, "y": y})
    return df.sample(frac=1, random_state=seed).reset_index(drop=True)


CASES = [
    ("noisy-stats", {}),
    ("dp-intercept", {}),
    ("dp-gd", {}),
    ("dp-gd", {"variant": "approx", "n_iter": 20}),
    ("theil-sen-exp", {}),
    ("theil-sen-exp", {"pairs": 1}),
    ("theil-sen-wide", {"theta": 0.05}),
    ("theil-sen-smooth", {}),
    ("theil-sen-smooth", {"pairs": 1, "dof": 5}),
]


@pytest.mark.parametrize("method,opts", CASES)
def test_local_equals_reference_loop(method, opts):
    df = table()
    keys = list(range(32))  # 30 and 31 have no rows
    delta = 1e-6 if opts.get("variant") == "approx" else None
    kw = dict(method=method, epsilon=1.5, bounds=BOUNDS, groups=keys, random_state=11,
              delta=delta, **opts)
    loc = fit_by_group(df, "k", "x", "y", **kw)
    ref = fit_by_group(df, "k", "x", "y", backend="reference", **kw)
    assert loc.attrs["backend"] == "local"
    pd.testing.assert_frame_equal(loc, ref)  # bit for bit, same columns and dtypes
    assert loc.attrs["privacy"] == ref.attrs["privacy"]
    assert list(loc["group"]) == keys
    assert (~loc["failed"]).sum() > 5


def test_pairs_too_large_for_a_group_is_an_error_on_every_backend():
    """k matchings need n >= k + 1 (public n); like the reference loop, the local backend
    refuses the whole call instead of silently changing the design of small groups."""
    for backend in ("local", "reference"):
        with pytest.raises(InvalidInputError, match="pairs"):
            fit_by_group(table(), "k", "x", "y", method="theil-sen-exp", epsilon=1,
                         bounds=BOUNDS, random_state=0, pairs=2, backend=backend,
                         groups=list(range(30)))


def test_large_groups_take_the_fast_path_on_both_backends():
    df = table(groups=3, seed=12, sizes=(2100,))
    kw = dict(method="theil-sen-wide", epsilon=1.0, bounds=BOUNDS, random_state=5,
              groups=[0, 1, 2])
    loc = fit_by_group(df, "k", "x", "y", **kw)
    pd.testing.assert_frame_equal(loc, fit_by_group(df, "k", "x", "y", backend="reference", **kw))
    assert not loc["failed"].any()


def test_groups_from_the_size_rule_take_the_counter_on_both_backends(monkeypatch):
    """Per-group Theil-Sen uses the O(n log n) counter by the public size rule of
    ``algorithm="auto"`` (AUTO_FAST_MIN_N, the measured crossover; issue 19): a group just
    below it materialises its pairs, groups at and above it do not -- on both backends, which
    still release bit-identical tables."""
    import dpreg.simple._theil_sen as ts

    cut = ts.AUTO_FAST_MIN_N
    assert cut <= 500  # the measured crossover (docs/scale.md), far below the former 2,000
    real = ts.dp_median_all_pairs_target
    seen = []

    def spy(x, *args, **kwargs):
        seen.append(int(x.size))
        return real(x, *args, **kwargs)

    monkeypatch.setattr(ts, "dp_median_all_pairs_target", spy)
    g = np.random.default_rng(21)
    sizes = [cut - 1, cut, 2 * cut]
    keys = np.repeat(np.arange(3), sizes)
    x = g.uniform(0, 1, keys.size)
    df = pd.DataFrame({"k": keys, "x": x, "y": 0.2 + 0.5 * x + g.normal(0, 0.1, keys.size)})
    kw = dict(method="theil-sen-exp", epsilon=1.0, bounds=BOUNDS, random_state=4,
              groups=[0, 1, 2])
    loc = fit_by_group(df, "k", "x", "y", **kw)
    assert sorted(set(seen)) == [cut, 2 * cut]  # two targets (predictions) per fast group
    seen.clear()
    ref = fit_by_group(df, "k", "x", "y", backend="reference", **kw)
    assert sorted(set(seen)) == [cut, 2 * cut]
    pd.testing.assert_frame_equal(loc, ref)
    assert not loc["failed"].any()


def test_local_single_thread_equals_threads():
    df = table(seed=3)
    kw = dict(method="theil-sen-exp", epsilon=1.0, bounds=BOUNDS, random_state=2,
              groups=list(range(30)))
    a = fit_by_group(df, "k", "x", "y", workers=1, **kw)
    b = fit_by_group(df, "k", "x", "y", workers=3, **kw)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker processes fork (Linux)")
@pytest.mark.parametrize("method", ["theil-sen-exp", "theil-sen-smooth"])
def test_worker_processes_give_the_serial_table(method, monkeypatch):
    """With enough groups the per-group Theil-Sen releases run in forked worker processes:
    the same table, bit for bit, as one process for the same seed (each group draws from its
    own key's stream), and the processes are really used."""
    import concurrent.futures

    from dpreg.grouped import local

    started = []

    class Counting(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            started.append(kwargs.get("max_workers"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Counting)
    groups = 2 * local.PROCESS_MIN_GROUPS  # ~3/4 of them with >= 2 rows (released)
    df = table(groups=groups, seed=8, sizes=(0, 1, 2, 3, 5, 20, 45, 60))
    kw = dict(method=method, epsilon=1.0, bounds=BOUNDS, random_state=5,
              groups=list(range(groups)))
    serial = fit_by_group(df, "k", "x", "y", workers=1, **kw)
    assert started == []
    forked = fit_by_group(df, "k", "x", "y", workers=2, **kw)
    assert started == [2]
    pd.testing.assert_frame_equal(serial, forked, check_exact=True)
    assert (~serial["failed"]).sum() > groups // 2
    secure = fit_by_group(df, "k", "x", "y", workers=2, **{**kw, "random_state": None})
    assert started == [2, 2]
    assert list(secure["group"]) == list(serial["group"])
    assert (secure["failed"] == serial["failed"]).all()  # n is public: the same ⊥ rows


@pytest.mark.parametrize("method", ["noisy-stats", "dp-gd", "theil-sen-wide"])
def test_release_does_not_depend_on_partitioning(method):
    """One stream per key: fitting a subset of the groups, or the rows in another order,
    gives the same releases for those groups."""
    df = table(seed=4)
    kw = dict(method=method, epsilon=1.0, bounds=BOUNDS, random_state=9)
    full = fit_by_group(df, "k", "x", "y", groups=list(range(30)), **kw).set_index("group")
    some = [7, 3, 21, 12]
    sub = fit_by_group(df[df.k.isin(some)].iloc[::-1], "k", "x", "y", groups=some,
                       **kw).set_index("group")
    cols = ["n", "slope", "intercept", "failed"]
    if method == "theil-sen-wide":  # all pairs: row order inside a group does not matter
        pd.testing.assert_frame_equal(sub[cols], full.loc[some, cols])
    else:  # sums in another order: equal up to rounding
        pd.testing.assert_frame_equal(sub[cols], full.loc[some, cols], check_exact=False,
                                      rtol=1e-9)


def test_group_seed_sequence_depends_only_on_root_and_key():
    root = np.random.SeedSequence(5)
    a = group_seed_sequence(root, 3).generate_state(4)
    assert np.array_equal(a, group_seed_sequence(np.random.SeedSequence(5), np.int64(3))
                          .generate_state(4))
    assert not np.array_equal(a, group_seed_sequence(root, "3").generate_state(4))
    assert not np.array_equal(a, group_seed_sequence(root, 4).generate_state(4))


def test_presence_is_not_leaked_and_small_groups_fail_on_public_n():
    df = table(seed=5)
    present = set(df.k)
    listed = list(range(35))
    out = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                       groups=listed, random_state=0)
    assert list(out["group"]) == listed  # one row per listed key, in the listed order
    row = out.set_index("group")
    for k in listed:
        n = int((df.k == k).sum())
        assert row.loc[k, "n"] == n
        if k not in present:
            assert row.loc[k, "failed"] and row.loc[k, "reason"] == "no rows in this group"
        elif n < 2:
            assert row.loc[k, "failed"] and "needs at least 2" in row.loc[k, "reason"]
    # rows of keys that are not listed are in no release
    only = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                        groups=[max(present)], random_state=0)
    assert len(only) == 1
    assert "parallel composition" in out["privacy"].iloc[0]
    assert "public list" in out.attrs["privacy"]
    undeclared = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1,
                              bounds=BOUNDS, random_state=0, groups="from-data")
    assert list(undeclared["group"]) == sorted(present)
    assert "NOT protected" in undeclared.attrs["privacy"]


def test_every_group_empty_or_no_groups():
    df = table(seed=6)
    out = fit_by_group(df, "k", "x", "y", method="theil-sen-exp", epsilon=1, bounds=BOUNDS,
                       groups=[100, 101], random_state=0)
    assert out["failed"].all() and list(out["n"]) == [0, 0]
    assert not any(c.startswith("pred_") for c in out.columns)
    ref = fit_by_group(df, "k", "x", "y", method="theil-sen-exp", epsilon=1, bounds=BOUNDS,
                       groups=[100, 101], random_state=0, backend="reference")
    pd.testing.assert_frame_equal(out, ref)


def test_bad_keys_and_values():
    df = table(seed=7)
    kw = dict(method="noisy-stats", epsilon=1, bounds=BOUNDS)
    bad = df.astype({"k": float})
    bad.loc[0, "k"] = np.nan  # in no group: the other rows give the same table
    listed = list(range(30))
    for backend in ("local", "reference"):
        pd.testing.assert_frame_equal(
            fit_by_group(bad, "k", "x", "y", backend=backend, groups=listed, random_state=1,
                         **kw),
            fit_by_group(bad.iloc[1:], "k", "x", "y", backend=backend, groups=listed,
                         random_state=1, **kw))
    with pytest.raises(InvalidInputError, match="missing keys"):
        fit_by_group(df, "k", "x", "y", groups=[1, np.nan], **kw)
    with pytest.raises(InvalidInputError, match="missing keys"):
        fit_by_group(df, "k", "x", "y", groups=[1, None], **kw)
    with pytest.raises(InvalidInputError, match="duplicate"):
        fit_by_group(df, "k", "x", "y", groups=[1, np.int64(1)], **kw)
    with pytest.raises(InvalidInputError, match="list of public group keys"):
        fit_by_group(df, "k", "x", "y", groups="abc", **kw)
    nan_x = df.copy()
    nan_x.loc[nan_x.index[nan_x.k == nan_x.k.iloc[0]][0], "x"] = np.nan
    with pytest.raises(InvalidInputError, match="finite"):
        fit_by_group(nan_x, "k", "x", "y", groups=listed, **kw)
    # a NaN in a group that is not listed is never read
    k0 = nan_x.k.iloc[0]
    fit_by_group(nan_x, "k", "x", "y", groups=[k for k in range(30) if k != k0], **kw)
    with pytest.raises(InvalidInputError, match="backend"):
        fit_by_group(df, "k", "x", "y", backend="dask", groups=listed, **kw)
    with pytest.raises(InvalidInputError, match="column"):
        fit_by_group(df, "key", "x", "y", groups=listed, **kw)
    with pytest.raises(InvalidInputError, match="random_state"):
        fit_by_group(df, "k", "x", "y", random_state=-1, groups=listed, **kw)


@pytest.mark.parametrize("method", ["noisy-stats", "dp-intercept", "dp-gd", "theil-sen-exp",
                                    "theil-sen-smooth"])
def test_secure_mode_without_a_seed(method):
    df = table(groups=8, seed=8, sizes=(1, 60))
    out = fit_by_group(df, "k", "x", "y", method=method, epsilon=2, bounds=BOUNDS,
                       groups=list(range(9)))
    n = out.set_index("group")["n"]
    assert len(out) == 9 and n.loc[8] == 0
    ok = out[n.to_numpy() >= 2]
    assert (~ok["failed"]).mean() > 0.5
    assert np.all(np.isfinite(ok.loc[~ok["failed"], "slope"]))


def test_unsupported_options_fall_back_to_the_reference_loop():
    df = table(groups=6, seed=9, sizes=(80,))
    df["z"] = np.random.default_rng(0).uniform(0, 1, len(df))
    out = fit_by_group(df, "k", "x", "y", method="covariance-ols", epsilon=1, delta=1e-6,
                       bounds=BOUNDS, random_state=1, groups=list(range(6)))
    assert out.attrs["backend"].startswith("reference")
    assert len(out) == 6


def test_segment_sums_are_numpys_own_sums():
    g = np.random.default_rng(0)
    for sizes in ([0, 1, 7, 8, 9, 127, 128, 129, 1000, 4099], g.integers(0, 300, 200)):
        starts = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        v = g.standard_cauchy(int(starts[-1]))
        assert np.array_equal(segment_sums(v, starts), segment_sums_numpy(v, starts))


def test_parse_key_list():
    assert parse_key_list(["a", " b ", ""]) == ["a", "b"]
    assert parse_key_list(["3", "17"], pd.Series([1, 2])) == [3, 17]
    assert parse_key_list(["3.5"], pd.Series([1.0])) == [3.5]
    assert parse_key_list(["a"], pd.Series(["x"])) == ["a"]
    with pytest.raises(InvalidInputError, match="not a number"):
        parse_key_list(["a"], pd.Series([1, 2]))


def _cli(*args):
    """The command in this process (tests/_cli.py: same exit code and streams)."""
    from _cli import run_cli

    return run_cli(*args)


def test_cli_fit_groups_backends_and_integer_keys(tmp_path):
    df = table(groups=12, seed=10)
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    keys = tmp_path / "keys.txt"
    keys.write_text("\n".join(str(k) for k in range(14)) + "\n")
    outs = {}
    for backend in ("local", "reference"):
        out = tmp_path / f"{backend}.csv"
        r = _cli("fit-groups", str(data), "--by", "k", "--y", "y", "--x", "x", "-m",
                 "theil-sen-exp", "-e", "1", "-b", "x=0:1", "-b", "y=0:1", "--out", str(out),
                 "--groups-file", str(keys), "--seed", "3", "--backend", backend, "--json")
        assert r.returncode == 0, r.stderr
        outs[backend] = pd.read_csv(out)
    pd.testing.assert_frame_equal(outs["local"], outs["reference"])
    t = outs["local"].set_index("group")
    assert list(t.index) == list(range(14))
    assert t.loc[13, "n"] == 0 and t.loc[13, "failed"]
    assert (t["n"] == df.groupby("k").size().reindex(range(14), fill_value=0)).all()
    r = _cli("fit-groups", str(data), "--by", "k", "--y", "y", "--x", "x", "-m", "noisy-stats",
             "-e", "1", "-b", "x=0:1", "-b", "y=0:1", "--out", str(tmp_path / "o.csv"),
             "--groups-file", str(keys), "--backend", "nope")
    assert r.returncode == 2 and "--backend" in r.stderr  # usage error


# ---------------------------------------------------------------------- issue 15 item 8
@pytest.mark.parametrize("method,core", [("noisy-stats", "noisy_stats"),
                                         ("dp-intercept", "dp_intercept"),
                                         ("dp-gd", "gradient_descent")])
def test_secure_mode_is_batched_not_a_loop_over_groups(method, core, monkeypatch):
    """Secure mode draws every group's noise with one batched call of the exact samplers (it
    used to call the functional core group by group: 120-175 s for 1e5 groups); the per-group
    core and the per-group generators are not used."""
    import dpreg.simple as simple
    from dpreg.grouped import _common, local

    def boom(*a, **k):
        raise AssertionError("per-group call in secure mode")

    monkeypatch.setattr(simple, core, boom)
    monkeypatch.setattr(_common, "group_generator", boom)
    monkeypatch.setattr(local, "group_generator", boom)
    df = table(groups=12, seed=3, sizes=(40, 80))
    out = fit_by_group(df, "k", "x", "y", method=method, epsilon=2.0, bounds=BOUNDS,
                       groups=list(range(12)))
    assert out.attrs["backend"] == "local" and (~out["failed"]).sum() >= 10


def test_secure_grouped_releases_are_on_the_grid_with_the_discrete_laplace_law():
    """Secure dp-intercept for many identical groups: every level is on the group's public
    grid and level − mean has the discrete Laplace law of the plan (χ² in equiprobable bins,
    with a power check at a 15 % wrong scale)."""
    from scipy import stats

    from dpreg.mechanisms import secure as S
    from dpreg.mechanisms.sensitivity import mean_sensitivity

    groups, m = 40_000, 5
    y = np.tile(np.linspace(0.1, 0.9, m), groups)
    df = pd.DataFrame({"k": np.repeat(np.arange(groups), m), "x": 0.5, "y": y})
    out = fit_by_group(df, "k", "x", "y", method="dp-intercept", epsilon=1.0, bounds=BOUNDS,
                       groups=list(range(groups)))
    plan = S.laplace_grid(mean_sensitivity((0.0, 1.0), m), 1.0, 1)
    centre = S._to_grid(np.array([np.mean(y[:m])]), plan.exponent)[0]
    k = out["intercept"].to_numpy() / plan.step - centre
    assert np.array_equal(k, np.round(k))
    scale = float(plan.noise)
    q = np.exp(-1.0 / scale)

    def cdf(v):
        v = np.asarray(v, dtype=float)
        return np.where(v >= 0, 1.0 - q ** (v + 1) / (1 + q), q ** (-v) / (1 + q))

    def pvalue(s):
        nonlocal q
        q = np.exp(-1.0 / s)
        edges = np.unique(np.round(np.quantile(k, np.linspace(0, 1, 41)[1:-1])))
        counts = np.bincount(np.searchsorted(edges, k, side="left"), minlength=edges.size + 1)
        probs = np.diff(np.concatenate([[0.0], cdf(edges), [1.0]]))
        return stats.chisquare(counts, probs * counts.sum()).pvalue

    assert pvalue(scale) > 1e-6
    assert pvalue(1.15 * scale) < 1e-6  # power: a 15 % wrong scale is rejected (5 % was borderline: p = 2.5e-4 seen)


def test_clipped_stats_are_numpys():
    from dpreg.simple._segments import clipped_centred, clipped_means

    g = np.random.default_rng(5)
    codes = g.integers(-1, 40, 5000)
    x, y = g.normal(size=5000), g.normal(size=5000)
    keep = codes >= 0
    order = np.flatnonzero(keep)[np.argsort(codes[keep], kind="stable")]
    xs, ys = x[order], y[order]
    starts = np.concatenate(([0], np.cumsum(np.bincount(codes[keep], minlength=40))))
    means, centred = clipped_centred(xs, starts, -0.5, 0.7)
    for k in range(40):
        seg = np.clip(xs[starts[k]:starts[k + 1]], -0.5, 0.7)
        assert means[k] == np.mean(seg)
        assert np.array_equal(centred[starts[k]:starts[k + 1]], seg - np.mean(seg))
    assert np.array_equal(clipped_means(ys, starts, 0.0, 1.0), means * 0 + np.array(
        [np.mean(np.clip(ys[starts[k]:starts[k + 1]], 0.0, 1.0)) for k in range(40)]))
