"""A CSV without a header line (issue 32): its first record would become the column names, and
column names are echoed (unknown-column errors, did-you-mean suggestions, codebook templates).
Every file entry point refuses such a file up front, with a message that shows no value of it.

The files below start with a data row of distinctive sentinel values; each test asserts the
refusal (a ValueError subclass in the library, exit 1 or 2 with one line in the CLI) and that no
sentinel appears in the message, the output or any file written."""

from __future__ import annotations

import gzip

import pytest

import dpreg
from dpreg import InvalidInputError

#: the first (data) row of the headerless files; each fragment below must never be echoed
FIRST_ROW = "0.123456789,987654.321,424242,-0.0031415"
SENTINELS = ("123456789", "987654", "424242", "0031415")
BOUNDS = {"y": (0, 1), "x": (0, 1)}


def _no_sentinel(*texts: str) -> None:
    for text in texts:
        for s in SENTINELS:
            assert s not in text, (s, text)


@pytest.fixture
def headerless(tmp_path):
    path = tmp_path / "noheader.csv"
    path.write_text(FIRST_ROW + "\n0.5,0.25,1,0.1\n0.75,0.5,2,0.2\n", encoding="utf-8")
    return path


def _check_error(exc: BaseException) -> None:
    assert isinstance(exc, ValueError) and isinstance(exc, InvalidInputError)
    msg = str(exc)
    assert "no header line" in msg and "column names" in msg, msg
    _no_sentinel(msg)


# ------------------------------------------------------------------ the detector
@pytest.mark.parametrize("name", [
    "1", "0.123", "-0.3", "+2", "1e5", "1E-5", ".5", "5.", "nan", "NaN", "-nan", "inf",
    "-Infinity", "1,234", "1,234,567.5", "1.234.567", "1 234", "1_000", "١٢٣", "１２３",
    "\u22123", "12%", "$5", "(1,200)", "", "  ", '"3"', "'3'", " 17 ", "NA", "N/A", "null",
    "None", "true", "FALSE", "#N/A", "<NA>", ".", "-"])
def test_value_like_names(name):
    from dpreg._source import header_looks_like_data, looks_like_a_value

    assert looks_like_a_value(name)
    assert header_looks_like_data(["income", name, "age"])


@pytest.mark.parametrize("name", ["x", "x1", "income", "log_y", "e5", "year", "a-b", "x.1",
                                  "Unnamed: 0", "na_count", "inflation", "nancy", "1st",
                                  "y2019", "2019q1", "e", "x-", "Ω"])
def test_names_that_are_not_values(name):
    from dpreg._source import header_looks_like_data, looks_like_a_value

    assert not looks_like_a_value(name)
    assert not header_looks_like_data(["income", name])


# ------------------------------------------------------------------ library entry points
def test_regress_refuses_a_headerless_csv(headerless):
    pytest.importorskip("pyarrow")
    for method in ("noisy-stats", "adassp"):
        with pytest.raises(InvalidInputError) as err:
            dpreg.regress(headerless, "y ~ x", method=method, epsilon=1, delta=1e-6,
                          bounds=BOUNDS, random_state=0)
        _check_error(err.value)
    with pytest.raises(InvalidInputError) as err:  # the names even appear in the formula
        dpreg.regress(str(headerless), "c ~ x", method="noisy-stats", epsilon=1,
                      bounds={"c": (0, 1), "x": (0, 1)}, random_state=0)
    _check_error(err.value)


def test_release_sscp_refuses_a_headerless_csv(headerless):
    pytest.importorskip("pyarrow")
    from dpreg.covariance import release_sscp

    with pytest.raises(InvalidInputError) as err:
        release_sscp(headerless, columns=["x", "y"], bounds=BOUNDS, epsilon=1, delta=1e-6, random_state=0)
    _check_error(err.value)


@pytest.mark.parametrize("groups", ["from-data", [1, 2]])
def test_fit_by_group_refuses_a_headerless_csv(headerless, groups):
    pytest.importorskip("pyarrow")
    with pytest.raises(InvalidInputError) as err:
        dpreg.fit_by_group(headerless, "k", "x", "y", method="noisy-stats", epsilon=1,
                           bounds=BOUNDS, groups=groups, random_state=0)
    _check_error(err.value)


def test_a_headerless_part_of_a_csv_directory_is_refused(tmp_path):
    pytest.importorskip("pyarrow")
    from dpreg._source import FileSource

    d = tmp_path / "parts"
    d.mkdir()
    (d / "p0.csv").write_text("y,x,k,w\n0.5,0.25,1,0.1\n", encoding="utf-8")
    (d / "p1.csv").write_text(FIRST_ROW + "\n0.5,0.25,1,0.1\n", encoding="utf-8")
    with pytest.raises(InvalidInputError) as err:
        FileSource(d)
    _check_error(err.value)


def test_a_compressed_headerless_csv_is_refused(tmp_path):
    pytest.importorskip("pyarrow")
    from dpreg._source import FileSource

    path = tmp_path / "noheader.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(FIRST_ROW + "\n0.5,0.25,1,0.1\n")
    with pytest.raises(InvalidInputError) as err:
        FileSource(path)
    _check_error(err.value)


def test_files_with_a_header_line_are_read(tmp_path):
    pytest.importorskip("pyarrow")
    from dpreg._source import FileSource

    path = tmp_path / "ok.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write('\ufeff"y", x ,k\n1,2,3\n')  # BOM, quotes and spaces are part of a header
    assert FileSource(path).columns == ["y", " x ", "k"]


# ------------------------------------------------------------------ the CLI
def _cli(*args: str):
    from typer.testing import CliRunner

    from dpreg.cli import app

    return CliRunner().invoke(app, list(args), env={"COLUMNS": "250"})


def _check_cli(res, written=()):
    assert res.exit_code in (1, 2), (res.exit_code, res.output)
    assert "Traceback" not in res.output
    assert res.stdout == "", res.stdout
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "no header line" in lines[0], res.stderr
    _no_sentinel(res.output)
    for path in written:
        assert not path.exists() or (_no_sentinel(path.read_text()) is None)


FIT = ["--y", "y", "--x", "x", "-e", "1", "-b", "y=0:1", "-b", "x=0:1"]


@pytest.mark.parametrize("method", ["noisy-stats", "adassp", "theil-sen-exp"])
def test_cli_fit_refuses_a_headerless_csv(headerless, method, tmp_path):
    _check_cli(_cli("fit", str(headerless), *FIT, "-m", method, "-d", "1e-6", "--json"))
    # a formula term naming a sentinel must not get a did-you-mean either
    _check_cli(_cli("fit", str(headerless), "--y", "y", "--x", "log(x)", "-m", method,
                    "-e", "1", "-d", "1e-6", "-b", "y=0:1", "-b", "x=1:2"))


@pytest.mark.parametrize("keys", ["--keys-from-data", "--groups-file"])
def test_cli_fit_groups_refuses_a_headerless_csv(headerless, tmp_path, keys):
    out = tmp_path / "g.csv"
    extra = ["--keys-from-data"]
    if keys == "--groups-file":
        (tmp_path / "keys.txt").write_text("1\n2\n")
        extra = ["--groups-file", str(tmp_path / "keys.txt")]
    _check_cli(_cli("fit-groups", str(headerless), "--by", "k", *FIT, "-m", "noisy-stats",
                    "--out", str(out), *extra), written=[out])
    assert not out.exists()


def test_cli_release_cov_refuses_a_headerless_csv(headerless, tmp_path):
    out = tmp_path / "r.json"
    _check_cli(_cli("release-cov", str(headerless), "-c", "x,y", "-e", "1", "-d", "1e-6",
                    "-b", "x=0:1", "-b", "y=0:1", "--out", str(out)), written=[out])
    assert not out.exists()


def test_cli_codebook_init_refuses_a_headerless_csv(headerless, tmp_path):
    out = tmp_path / "cb.toml"
    _check_cli(_cli("codebook", "init", str(headerless)))
    _check_cli(_cli("codebook", "init", str(headerless), "--out", str(out)), written=[out])
    assert not out.exists()


def test_cli_codebook_init_still_writes_a_real_header(tmp_path):
    path = tmp_path / "ok.csv"
    path.write_text("income,age\n123456789,42\n", encoding="utf-8")
    res = _cli("codebook", "init", str(path))
    assert res.exit_code == 0 and "[columns.income]" in res.stdout
    assert "123456789" not in res.stdout
