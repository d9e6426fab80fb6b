"""Releases from Spark DataFrames and files read by Spark executors (issue 19): the statistics
are summed per partition on the executors (mapInArrow) and the noise is added on the driver by
the same release as in memory -- equal for one seed up to the float summation order
(rtol 1e-9).  Uses the session-scoped ``spark`` fixture (tests/conftest.py).

All ``slow`` (``make test-slow``): Spark jobs whose executors start Python workers that import
dpreg cost ~20-70 s of CPU each on the 2-core machine; ``make test`` keeps one Spark smoke test
(tests/grouped/test_grouped_spark.py::test_spark_keys_follow_the_rule)."""

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import InvalidInputError, fit_by_group
from dpreg.covariance import release_sscp

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark"), pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:PySpark does not yet fully support"),
              pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")]

BOUNDS = {"x1": (-1.0, 1.0), "x2": (0.0, 10.0), "y": (-5.0, 15.0)}
COLS = ["x1", "x2", "y"]
RTOL = 1e-9


def frame(n=5000, seed=0):
    g = np.random.default_rng(seed)
    x1 = g.uniform(-1.2, 1.2, n)
    x2 = g.uniform(-1, 11, n)
    y = 1 + 2 * x1 + 0.5 * x2 + g.normal(0, 1, n)
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y, "k": g.integers(0, 5, n)})


def test_covariance_release_and_adassp_on_spark_equal_local(spark, tmp_path):
    df = frame()
    sdf = spark.createDataFrame(df)  # 2 partitions: two partials summed on the driver
    kw = dict(columns=COLS, bounds=BOUNDS, epsilon=1.0, delta=1e-6, random_state=11)
    mem = release_sscp(df, **kw)
    got = release_sscp(sdf, **kw)
    np.testing.assert_allclose(got.noisy_scaled, mem.noisy_scaled, rtol=RTOL)
    # a wrong release (another seed) is outside the tolerance
    assert not np.allclose(release_sscp(df, **{**kw, "random_state": 12}).noisy_scaled,
                           got.noisy_scaled, rtol=RTOL)
    rk = dict(method="adassp", epsilon=1.0, delta=1e-6, bounds=BOUNDS, random_state=2)
    np.testing.assert_allclose(dpreg.regress(sdf, "y ~ x1 + x2", **rk).params.to_numpy(),
                               dpreg.regress(df, "y ~ x1 + x2", **rk).params.to_numpy(),
                               rtol=RTOL)
    bad = df.astype({"x2": object})
    bad.loc[3, "x2"] = "n/a"
    with pytest.raises(InvalidInputError, match=r"\['x2'\].*missing, non-numeric"):
        release_sscp(spark.createDataFrame(bad.astype({"x2": str})), **kw)


def test_fit_by_group_reads_a_parquet_file_on_the_executors(spark, tmp_path):
    df = frame(2000, seed=1)
    path = tmp_path / "g.parquet"
    df.to_parquet(path, index=False)
    kw = dict(method="noisy-stats", epsilon=1.0, bounds={"x1": (-1, 1), "y": (-5, 15)},
              groups=list(range(6)), random_state=4)
    loc = fit_by_group(df, "k", "x1", "y", **kw)
    spk = fit_by_group(str(path), "k", "x1", "y", backend="spark", spark=spark, **kw)
    pd.testing.assert_frame_equal(spk, loc, check_exact=False, rtol=RTOL, atol=1e-12)
    pd.testing.assert_frame_equal(fit_by_group(path, "k", "x1", "y", **kw), loc)
    # the CLI: fit-groups --backend spark reads the Parquet file on the executors (the active
    # session); fit --backend spark sums the statistics there
    from typer.testing import CliRunner

    from dpreg.cli import app

    (tmp_path / "keys.txt").write_text("\n".join(map(str, range(6))))
    r = CliRunner()
    res = r.invoke(app, ["fit-groups", str(path), "--by", "k", "--x", "x1", "--y", "y", "-m",
                         "noisy-stats", "-e", "1", "-b", "x1=-1:1", "-b", "y=-5:15", "--seed",
                         "4", "--groups-file", str(tmp_path / "keys.txt"), "--backend", "spark",
                         "--out", str(tmp_path / "out.csv")])
    assert res.exit_code == 0, res.output
    cli = pd.read_csv(tmp_path / "out.csv")
    np.testing.assert_allclose(cli["slope"], loc["slope"], rtol=RTOL)
    fit = ["fit", str(path), "--y", "y", "--x", "x1", "-m", "adassp", "-e", "1", "-d", "1e-6",
           "-b", "x1=-1:1", "-b", "y=-5:15", "--seed", "4", "--json"]
    outs = []
    for backend in ("spark", "local"):
        res = r.invoke(app, [*fit, "--backend", backend])
        assert res.exit_code == 0, res.output
        outs.append(res.stdout[res.stdout.index("{"):])
    import json

    a, b = (json.loads(o) for o in outs)
    np.testing.assert_allclose([a["intercept"], a["coef"]["x1"]],
                               [b["intercept"], b["coef"]["x1"]], rtol=RTOL)


def test_simple_sufficient_statistics_on_spark_equal_local(spark, tmp_path):
    """noisy-stats and dp-intercept from a Spark DataFrame: the clipped moments summed per
    partition on the executors, the release on the driver -- the local release for the seed
    (rtol 1e-9); ``dpreg fit --backend spark -m noisy-stats`` likewise; a method that needs
    the rows refuses the Spark frame with the reason, before any Spark job."""
    df = frame(3000, seed=3)
    sdf = spark.createDataFrame(df).repartition(3)
    bounds = {"x1": (-1.0, 1.0), "y": (-5.0, 15.0)}
    for method in ("noisy-stats", "dp-intercept"):
        kw = dict(method=method, epsilon=1.0, bounds=bounds, random_state=6)
        got, mem = dpreg.regress(sdf, "y ~ x1", **kw), dpreg.regress(df, "y ~ x1", **kw)
        np.testing.assert_allclose(got.params.to_numpy(), mem.params.to_numpy(), rtol=RTOL)
        assert got.privacy == mem.privacy
    with pytest.raises(InvalidInputError, match="theil-sen-exp' cannot fit from a file or a "
                                                "Spark DataFrame: its release is a DP median"):
        dpreg.regress(sdf, "y ~ x1", method="theil-sen-exp", epsilon=1.0, bounds=bounds)
    import json

    from typer.testing import CliRunner

    from dpreg.cli import app

    path = tmp_path / "s.parquet"
    df.to_parquet(path, index=False)
    fit = ["fit", str(path), "--y", "y", "--x", "x1", "-m", "noisy-stats", "-e", "1",
           "-b", "x1=-1:1", "-b", "y=-5:15", "--seed", "4", "--json"]
    outs = []
    for backend in ("spark", "local"):
        res = CliRunner().invoke(app, [*fit, "--backend", backend])
        assert res.exit_code == 0, res.output
        outs.append(json.loads(res.stdout[res.stdout.index("{"):]))
    a, b = outs
    np.testing.assert_allclose([a["intercept"], a["coef"]["x1"]],
                               [b["intercept"], b["coef"]["x1"]], rtol=RTOL)
    res = CliRunner().invoke(app, [*fit[:7], "theil-sen-exp", *fit[8:], "--backend", "spark"])
    assert res.exit_code != 0 and "load the columns" in res.output.lower()


def test_covariance_ols_on_spark_and_a_csv_read_by_spark(spark, tmp_path):
    df = frame(3000, seed=2)
    sdf = spark.createDataFrame(df).repartition(4)
    kw = dict(method="covariance-ols", epsilon=2.0, delta=1e-6, bounds=BOUNDS, random_state=9)
    mem = dpreg.regress(df, "y ~ x1 + x2", **kw)
    np.testing.assert_allclose(dpreg.regress(sdf, "y ~ x1 + x2", **kw).params.to_numpy(),
                               mem.params.to_numpy(), rtol=RTOL)
