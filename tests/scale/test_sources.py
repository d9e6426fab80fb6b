"""Releases from files and Spark DataFrames (issue 19): the same statistics step (clip and
accumulate in chunks) and the same release as in memory, so for one seed the releases are equal
up to the floating-point summation order (rtol 1e-9 below; the sums differ in the last bits)."""

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import InvalidInputError
from dpreg._source import ArraySource, FileSource
from dpreg.covariance import release_sscp
from dpreg.covariance.release import ScaledSSCP

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

BOUNDS = {"x1": (-1.0, 1.0), "x2": (0.0, 10.0), "y": (-5.0, 15.0)}
COLS = ["x1", "x2", "y"]
#: float summation order only: chunked/partitioned sums agree with the in-memory ones to ~1e-15
RTOL = 1e-9


def frame(n=20_000, seed=0):
    g = np.random.default_rng(seed)
    x1 = g.uniform(-1.2, 1.2, n)
    x2 = g.uniform(-1, 11, n)
    y = 1 + 2 * x1 + 0.5 * x2 + g.normal(0, 1, n)
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y, "name": ["a"] * n})


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    df = frame()
    d = tmp_path_factory.mktemp("src")
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), d / "t.parquet",
                   row_group_size=3000)
    df.to_csv(d / "t.csv", index=False)
    return df, d


def test_chunked_sscp_equals_the_one_shot_matrix(rng):
    X = rng.uniform(-2, 12, (10_001, 3))
    bnds = [(-1.0, 1.0), (0.0, 10.0), (-5.0, 15.0)]
    lo, hi = np.array(bnds).T
    D = np.column_stack([np.ones(len(X)), (np.clip(X, lo, hi) - lo) / (hi - lo)])
    for chunk in (1, 7, 8192, 20_000):
        S = ArraySource(X, COLS, chunk_rows=chunk).reduce(COLS, ScaledSSCP(bnds))
        np.testing.assert_allclose(S, D.T @ D, rtol=1e-12)
    assert S[0, 0] == len(X)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_release_sscp_from_a_file_equals_in_memory(data, fmt):
    df, d = data
    kw = dict(columns=COLS, bounds=BOUNDS, epsilon=1.0, delta=1e-6, rng=5)
    mem = release_sscp(df, **kw)
    got = release_sscp(d / f"t.{fmt}", **kw)
    np.testing.assert_allclose(got.noisy_scaled, mem.noisy_scaled, rtol=RTOL)
    assert got.metadata["sigma"] == mem.metadata["sigma"]
    # a wrong statistics step (no clipping) is caught by the tolerance
    raw = ArraySource(df[COLS].to_numpy(), COLS).reduce(
        COLS, lambda c: np.column_stack([np.ones(len(c)), c]).T @ np.column_stack([np.ones(len(c)), c]))
    assert not np.allclose(raw, mem.noisy_scaled, rtol=RTOL)


@pytest.mark.parametrize("method", ["adassp", "covariance-ols"])
def test_regress_from_a_file_equals_in_memory(data, method):
    df, d = data
    kw = dict(method=method, epsilon=1.0, delta=1e-6, bounds=BOUNDS, random_state=3)
    mem = dpreg.regress(df, "y ~ x1 + x2", **kw)
    for path in (d / "t.parquet", str(d / "t.csv")):
        got = dpreg.regress(path, "y ~ x1 + x2", **kw)
        np.testing.assert_allclose(got.params.to_numpy(), mem.params.to_numpy(), rtol=RTOL)
        assert list(got.params.index) == list(mem.params.index)
        assert got.privacy == mem.privacy
    nox = dpreg.regress(d / "t.parquet", "y ~ x1 - 1", **kw)
    assert list(nox.params.index) == ["x1"]


def test_file_sources_refuse_bad_input_naming_the_column(data, tmp_path):
    df, d = data
    kw = dict(method="adassp", epsilon=1.0, delta=1e-6, bounds=BOUNDS, random_state=3)
    with pytest.raises(InvalidInputError, match="plain column names only"):
        dpreg.regress(d / "t.parquet", "y ~ log(x2)", **kw)
    with pytest.raises(InvalidInputError, match="needs the data in memory"):
        dpreg.regress(d / "t.parquet", "y ~ x1", **{**kw, "method": "tukey-em"})
    with pytest.raises(InvalidInputError, match="bounds for regressor 'x2' are missing"):
        dpreg.regress(d / "t.parquet", "y ~ x1 + x2", **{**kw, "bounds": {"x1": (0, 1), "y": (0, 1)}})
    with pytest.raises(InvalidInputError, match="'name'.*numeric"):
        release_sscp(d / "t.parquet", columns=["x1", "name"], bounds=[(0, 1)] * 2, epsilon=1,
                     delta=1e-6)
    bad = df.copy()
    bad.loc[17, "x2"] = np.nan
    pq.write_table(pa.Table.from_pandas(bad, preserve_index=False), tmp_path / "bad.parquet")
    with pytest.raises(InvalidInputError, match=r"\['x2'\].*missing, non-numeric or non-finite") as e:
        release_sscp(tmp_path / "bad.parquet", columns=COLS, bounds=BOUNDS, epsilon=1, delta=1e-6)
    assert "17" not in str(e.value)
    with pytest.raises(InvalidInputError, match="does not exist"):
        FileSource(tmp_path / "nope.parquet")
    (tmp_path / "t.txt").write_text("a,b\n1,2\n")
    with pytest.raises(InvalidInputError, match="must end in .parquet"):
        FileSource(tmp_path / "t.txt")


def test_cli_streams_a_parquet_file(data, tmp_path):
    """``dpreg release-cov data.parquet`` and ``dpreg fit data.parquet`` stream the file and
    give the CSV (pandas) release for the same seed."""
    import json

    from typer.testing import CliRunner

    from dpreg.cli import app

    df, d = data
    args = ["-c", "x1,x2,y", "-b", "x1=-1:1", "-b", "x2=0:10", "-b", "y=-5:15", "-e", "1",
            "-d", "1e-6", "--seed", "4"]
    r = CliRunner()
    for fmt in ("parquet", "csv"):
        res = r.invoke(app, ["release-cov", str(d / f"t.{fmt}"), *args, "--out",
                             str(tmp_path / f"{fmt}.json")])
        assert res.exit_code == 0, res.output
    a, b = (json.loads((tmp_path / f"{f}.json").read_text()) for f in ("parquet", "csv"))
    np.testing.assert_allclose(a["noisy_scaled"], b["noisy_scaled"], rtol=RTOL)
    fit = ["--y", "y", "--x", "x1", "--x", "x2", "-m", "covariance-ols", "-e", "1", "-d", "1e-6",
           "-b", "x1=-1:1", "-b", "x2=0:10", "-b", "y=-5:15", "--seed", "4", "--json"]
    outs = []
    for fmt in ("parquet", "csv"):
        res = r.invoke(app, ["fit", str(d / f"t.{fmt}"), *fit])
        assert res.exit_code == 0, res.output
        outs.append(json.loads(res.stdout[res.stdout.index("{"):]))
    for key in ("intercept", "coef"):
        np.testing.assert_allclose(pd.Series(outs[0][key]), pd.Series(outs[1][key]), rtol=RTOL)
