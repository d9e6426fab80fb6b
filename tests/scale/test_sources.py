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
    kw = dict(columns=COLS, bounds=BOUNDS, epsilon=1.0, delta=1e-6, random_state=5)
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
    with pytest.raises(InvalidInputError, match="cannot fit from a file"):
        dpreg.regress(d / "t.parquet", "y ~ x1", **{**kw, "method": "tukey-em"})
    with pytest.raises(InvalidInputError, match="bounds for column 'x2' are missing"):
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


# ----------------------------------------------------------------- simple (one-x) releases
SIMPLE_BOUNDS = {"x1": (-1.0, 1.0), "y": (-5.0, 15.0)}


def test_simple_statistics_step_is_chunking_invariant_and_clips(data):
    """The streamed statistics of DPSuffStats (one pass of shifted clipped sums) equal the
    in-memory step's (two-pass, exact centring) to rounding in every chunking; a statistics
    step without clipping is outside the tolerance (the data exceed the x bounds)."""
    from dpreg.simple._noisy_stats import noisy_stats_source_statistics, noisy_stats_statistics

    df, _ = data
    xb, yb = SIMPLE_BOUNDS["x1"], SIMPLE_BOUNDS["y"]
    x, y = df["x1"].to_numpy(), df["y"].to_numpy()
    mem = noisy_stats_statistics(x, y, xb, yb)
    yc = np.clip(y, *yb)
    nvar_y = float(np.dot(yc - yc.mean(), yc - yc.mean()))
    fields = ("n", "xbar", "ybar", "nvar", "ncov")
    for chunk in (1, 7, 4096, 50_000):
        src = ArraySource(df[["x1", "y"]].to_numpy(), ["x1", "y"], chunk_rows=chunk)
        got, got_nvar_y = noisy_stats_source_statistics(src, "x1", "y", xb, yb)
        for f in fields:
            np.testing.assert_allclose(getattr(got, f), getattr(mem, f), rtol=1e-12, atol=0)
        assert got_nvar_y == pytest.approx(nvar_y, rel=1e-12)
    raw = noisy_stats_statistics(x, y, (-9.0, 9.0), (-99.0, 99.0))  # nothing clipped
    assert not np.allclose(raw.nvar, got.nvar, rtol=RTOL)


@pytest.mark.parametrize("method", ["noisy-stats", "dp-intercept"])
def test_simple_sufficient_statistics_methods_from_a_file_equal_in_memory(data, method):
    """``regress(path, method="noisy-stats" | "dp-intercept")`` streams the file and releases
    what the same seed releases from the DataFrame (rtol 1e-9: summation order only), with
    the same privacy statement and, for noisy-stats, the same DP-aware intervals."""
    df, d = data
    kw = dict(method=method, epsilon=1.0, bounds=SIMPLE_BOUNDS, random_state=3)
    mem = dpreg.regress(df, "y ~ x1", **kw)
    for path in (d / "t.parquet", str(d / "t.csv")):
        got = dpreg.regress(path, "y ~ x1", **kw)
        np.testing.assert_allclose(got.params.to_numpy(), mem.params.to_numpy(), rtol=RTOL)
        assert list(got.params.index) == list(mem.params.index)
        assert got.privacy == mem.privacy
        assert got.nobs == mem.nobs == len(df)
        if method == "noisy-stats":
            np.testing.assert_allclose(got.conf_int().to_numpy(), mem.conf_int().to_numpy(),
                                       rtol=1e-7)
    other = dpreg.regress(d / "t.parquet", "y ~ x1", **{**kw, "random_state": 4})
    assert not np.allclose(other.params.to_numpy(), mem.params.to_numpy(), rtol=RTOL)
    if method == "noisy-stats":  # the plain release (no interval statistics) too
        plain = {**kw, "inference": False}
        np.testing.assert_allclose(dpreg.regress(d / "t.parquet", "y ~ x1", **plain).params,
                                   dpreg.regress(df, "y ~ x1", **plain).params, rtol=RTOL)
        with pytest.raises(InvalidInputError, match="exactly one regressor"):
            dpreg.regress(d / "t.parquet", "y ~ x1 + x2", **{**kw, "bounds": BOUNDS})
        with pytest.raises(InvalidInputError, match="always fits an intercept"):
            dpreg.regress(d / "t.parquet", "y ~ x1 - 1", **kw)


def test_methods_that_need_the_rows_refuse_a_path_before_anything_is_charged(data):
    """Every method that cannot be released from one pass of sufficient statistics refuses a
    path (and a Spark frame: the same check) with why and what to do, before the ledger is
    charged; the list of streaming methods is exactly the sufficient-statistics ones."""
    from dpreg import Ledger, PureDP
    from dpreg.methods import REGISTRY, names

    _, d = data
    assert set(dpreg.api.source_methods()) == {"noisy-stats", "dp-intercept", "adassp",
                                               "covariance-ols"}
    needs_rows = {m for m, spec in REGISTRY.items() if spec.needs_rows is not None}
    assert needs_rows == set(names()) - set(dpreg.api.source_methods())
    led = Ledger(PureDP(100.0))
    for method in set(names()) - set(dpreg.api.source_methods()):
        with pytest.raises(InvalidInputError, match="cannot fit from a file") as e:
            dpreg.regress(d / "t.parquet", "y ~ x1", method=method, epsilon=1.0, delta=1e-6,
                          bounds=SIMPLE_BOUNDS, ledger=led, random_state=1)
        assert "Load the columns" in str(e.value) and "into memory" in str(e.value), method
        assert "a Spark DataFrame: " in str(e.value), method  # the method's own reason
    assert led.events() == []


def test_cli_fits_noisy_stats_from_a_parquet_file(data, monkeypatch):
    """``dpreg fit t.parquet -m noisy-stats`` streams the file (the sufficient-statistics path:
    the file is never loaded whole -- loading it is made to fail here) and gives the release of
    the same command on the CSV (read with pandas), also with ``--ci``."""
    import json

    from typer.testing import CliRunner

    import dpreg.cli._sources as sources  # where every command reads DATA
    from dpreg.cli import app

    _, d = data
    read_table = sources._read_table

    def no_parquet_load(path):
        assert not str(path).endswith(".parquet"), "the Parquet file was loaded into memory"
        return read_table(path)

    monkeypatch.setattr(sources, "_read_table", no_parquet_load)
    fit = ["--y", "y", "--x", "x1", "-m", "noisy-stats", "-e", "1", "-b", "x1=-1:1",
           "-b", "y=-5:15", "--seed", "4", "--json", "--ci", "0.1"]
    outs = []
    for fmt in ("parquet", "csv"):
        res = CliRunner().invoke(app, ["fit", str(d / f"t.{fmt}"), *fit])
        assert res.exit_code == 0, res.output
        outs.append(json.loads(res.stdout[res.stdout.index("{"):]))
    for key in ("intercept", "coef"):
        np.testing.assert_allclose(pd.Series(outs[0][key]), pd.Series(outs[1][key]), rtol=RTOL)
    assert outs[0]["nobs"] == outs[1]["nobs"]
