"""The simulated nation (dpreg.data.simulate_nation / write_nation) and the national per-group
job from Parquet (issue 19 items 4-5): every simple method through ``fit_by_group(path)``
equals the in-memory run for the same seed, locally and on Spark."""

import math

import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pytest

import dpreg.data.simulated as sim
from dpreg import InvalidInputError, fit_by_group
from dpreg.data import NATION_TRACTS, simulate_nation, write_nation

BY, X, Y = "tract", "parent_rank", "child_rank"
BOUNDS = {X: (0.0, 1.0), Y: (0.0, 1.0)}
METHODS = ["noisy-stats", "dp-intercept", "dp-gd", "theil-sen-exp", "theil-sen-wide",
           "theil-sen-smooth"]
TRACTS = 300


@pytest.fixture(scope="module")
def nation(tmp_path_factory):
    """A 300-tract nation in memory and as Parquet (5 blocks of 64 tracts: several files)."""
    path = tmp_path_factory.mktemp("nation") / "points"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sim, "_NATION_BLOCK", 64)
        points, truth = simulate_nation(TRACTS, rng=3)
        written = write_nation(path, TRACTS, rng=3)
    return points, truth, written, path


def test_nation_is_seeded_and_the_parquet_files_hold_the_same_points(nation):
    points, truth, written, path = nation
    assert len(list(path.glob("part-*.parquet"))) == math.ceil(TRACTS / 64)
    back = ds.dataset(path).to_table().to_pandas()
    pd.testing.assert_frame_equal(back, points)
    pd.testing.assert_frame_equal(written, truth)
    assert points[BY].dtype == np.int32 and points[BY].is_monotonic_increasing
    np.testing.assert_array_equal(np.bincount(points[BY], minlength=TRACTS), truth["n"])
    assert points[[X, Y]].min().min() >= 0 and points[[X, Y]].max().max() <= 1
    with pytest.MonkeyPatch.context() as mp:  # the points do not depend on the block size
        mp.setattr(sim, "_NATION_BLOCK", 4096)
        assert simulate_nation(TRACTS, rng=3)[1].equals(truth)
    other, _ = simulate_nation(TRACTS, rng=4)
    assert not other[X].head(1000).equals(points[X].head(1000))
    with pytest.raises(InvalidInputError, match="rng must be a non-negative int seed"):
        simulate_nation(10, rng=None)


def test_nation_tract_sizes_follow_the_documented_design():
    """Mean children per tract: E[Poisson(share * P)] with P log-normal (median 4,000, log-sd
    0.42) in 99% of tracts and uniform(0, 400) in 1%; checked within 5 standard errors of the
    mean over the national count of tracts."""
    n = sim.nation_tract_sizes(NATION_TRACTS, rng=11)
    share = sim.NATION_CHILD_SHARE
    mean_pop = 0.99 * 4000 * math.exp(0.42 ** 2 / 2) + 0.01 * 200
    sd = n.std()
    assert abs(n.mean() - share * mean_pop) < 5 * sd / math.sqrt(n.size)
    assert 19e6 < n.sum() < 22e6  # ~20.9 M children
    # right-skewed: the 95% quantile is farther from the median than the 5% quantile
    q5, q50, q95 = np.quantile(n, [0.05, 0.5, 0.95])
    assert q95 - q50 > q50 - q5
    assert 0.005 < np.mean(n < 30) < 0.03  # the special land-use tracts


@pytest.mark.parametrize("method", METHODS)
def test_every_simple_method_from_parquet_equals_in_memory(nation, method):
    points, _, _, path = nation
    # Theil-Sen materialises O(n^2) pairs per tract: 20 tracts keep the test fast (keys not
    # listed are never read)
    keys = list(range(TRACTS if not method.startswith("theil-sen") else 20))
    kw = dict(method=method, epsilon=1.0, bounds=BOUNDS, groups=keys, random_state=5)
    mem = fit_by_group(points, BY, X, Y, **kw)
    got = fit_by_group(path, BY, X, Y, **kw)
    assert got.attrs["backend"] == "local"
    pd.testing.assert_frame_equal(got, mem)
    assert (~mem["failed"]).sum() >= 0.9 * len(keys)
    # the comparison can fail: another seed releases another table
    other = fit_by_group(path, BY, X, Y, **{**kw, "random_state": 6})
    assert not np.allclose(other["intercept"], mem["intercept"], equal_nan=True)


def _spark_equals_local(spark, path, method, keys):
    kw = dict(method=method, epsilon=1.0, bounds=BOUNDS, groups=list(range(keys)),
              random_state=8)
    loc = fit_by_group(path, BY, X, Y, **kw)
    spk = fit_by_group(str(path), BY, X, Y, backend="spark", spark=spark, **kw)
    assert spk.attrs["backend"] == "spark"
    if method in ("noisy-stats", "dp-intercept"):  # native aggregation: summation order
        pd.testing.assert_frame_equal(spk, loc, check_exact=False, rtol=1e-9, atol=1e-12)
    else:  # the core per group on the executors, rows in file order: bit for bit
        pd.testing.assert_frame_equal(spk, loc)


SPARK_WARNINGS = ("ignore:PySpark does not yet fully support", "ignore:The copy keyword is deprecated")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.filterwarnings(*SPARK_WARNINGS)
@pytest.mark.slow  # Spark jobs (make test keeps one Spark smoke test)
@pytest.mark.parametrize("method", ["noisy-stats", "dp-intercept"])
def test_nation_on_spark_equals_local(spark, nation, method):
    """The executors read the Parquet files; the statistics are aggregated natively and the
    noise added on the driver: equal to the local releases up to the summation order."""
    _spark_equals_local(spark, nation[3], method, TRACTS)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.filterwarnings(*SPARK_WARNINGS)
@pytest.mark.slow  # applyInPandas jobs: ~1-2 min on 2 shared cores
@pytest.mark.parametrize("method", ["dp-gd", "theil-sen-exp", "theil-sen-wide",
                                    "theil-sen-smooth"])
def test_nation_per_group_methods_on_spark_equal_local(spark, nation, method):
    _spark_equals_local(spark, nation[3], method, 12)



def _cli(*args):
    """``dpreg ARGS`` in this process (stdout and stderr are not terminals: piped)."""
    from typer.testing import CliRunner

    from dpreg.cli import app

    res = CliRunner().invoke(app, list(args))
    res.returncode = res.exit_code
    return res


def test_demo_scale_nation_runs_caches_and_prints_a_table(tmp_path):
    import json

    out = tmp_path / "demo"
    r = _cli("demo", "--scale", "nation", "--tracts", "150", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert r.stderr == ""  # piped: no progress bar
    assert report["tracts"] == 150 and report["epsilon"] == 1.0
    assert [m["method"] for m in report["methods"]] == ["noisy-stats", "dp-intercept", "dp-gd"]
    assert all(m["released"] + m["failed"] == 150 for m in report["methods"])
    files = sorted((out / "nation-150" / "points").glob("*.parquet"))
    stamp = [f.stat().st_mtime_ns for f in files]
    # the second run reuses the cached nation; piped, the table is tab-separated lines
    r = _cli("demo", "--scale", "nation", "--tracts", "150", "--out", str(out), "-m",
             "theil-sen-exp", "-m", "noisy-stats", "-e", "2")
    assert r.returncode == 0, r.stderr
    assert [f.stat().st_mtime_ns for f in files] == stamp
    lines = r.stdout.splitlines()
    assert lines[0].split("\t")[0] == "method"
    assert [ln.split("\t")[0] for ln in lines[1:3]] == ["theil-sen-exp", "noisy-stats"]
    assert "ε=2 per tract" in r.stdout and "parallel composition" in r.stdout
    # --progress draws the bar on stderr even when piped
    r = _cli("demo", "--scale", "nation", "--tracts", "150", "--out", str(out), "-m",
             "dp-intercept", "--progress")
    assert r.returncode == 0 and "dp-intercept" in r.stderr


def test_demo_scale_nation_usage_errors(tmp_path):
    r = _cli("demo", "--scale", "nations", "--out", str(tmp_path / "d"))
    assert r.returncode == 2 and "did you mean 'nation'" in r.stderr
    r = _cli("demo", "--scale", "nation", "--tracts", "5", "-m", "theil-sen-expo", "--out",
             str(tmp_path / "d"))
    assert r.returncode == 2 and "did you mean 'theil-sen-exp'" in r.stderr
    r = _cli("demo", "-m", "noisy-stats", "--out", str(tmp_path / "d"))
    assert r.returncode == 2 and "--scale nation only" in r.stderr
