"""Parquet and CSV sources read columns by one rule (issue 32): a column used as numbers holds
numbers in EVERY file -- integers, floats, decimals and booleans (0/1) are read as float64; text,
dates/times, categories (dictionary-encoded) are refused naming the column and its type, never a
value.  A directory's first part file does not stand for the others: a part storing the column
as text is refused (it used to be cast to numbers), and a part storing doubles is not cast to the
first part's bool or int64."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import InvalidInputError
from dpreg.covariance import release_sscp

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

BOUNDS = {"x": (0.0, 10.0), "y": (0.0, 10.0)}
KW = dict(columns=["x", "y"], bounds=BOUNDS, epsilon=1.0, delta=1e-6, random_state=3)
#: values of the files below that must never be echoed
SECRET = ("3.25", "7.75", "31337")


def _write_parts(d, parts):
    d.mkdir()
    for i, table in enumerate(parts):
        pq.write_table(table, d / f"part-{i}.parquet")
    return d


def _y(n):
    return pa.array(np.linspace(1.0, 9.0, n))


def _no_value(msg):
    for s in SECRET:
        assert s not in msg, msg


def _numeric_frame(x, y):
    return pd.DataFrame({"x": np.asarray(x, dtype=float), "y": np.asarray(y, dtype=float)})


# ------------------------------------------------------------------ mixed part files
def test_a_part_with_the_column_as_text_is_refused_like_a_csv_with_text(tmp_path):
    """Part 0 stores x as double, part 1 as text that parses as numbers: refused (it used to be
    cast silently), with the message a CSV whose x holds text gets."""
    d = _write_parts(tmp_path / "mixed", [
        pa.table({"x": pa.array([1.0, 2.0]), "y": _y(2)}),
        pa.table({"x": pa.array(["3.25", "7.75"]), "y": _y(2)})])
    with pytest.raises(InvalidInputError) as err:
        release_sscp(d, **KW)
    msg = str(err.value)
    assert "column 'x'" in msg and "a numeric column is required" in msg and "text" in msg
    assert "part-1.parquet" in msg
    _no_value(msg)
    csv = tmp_path / "text.csv"
    csv.write_text("x,y\n1.0,1\n3.25,2\nabc,3\n")
    with pytest.raises(InvalidInputError) as cerr:
        release_sscp(csv, **KW)
    assert "column 'x'" in str(cerr.value) and "a numeric column is required" in str(cerr.value)
    # the other entry points: regress(path), fit_by_group(path), the CLI
    with pytest.raises(InvalidInputError, match="column 'x'.*numeric column is required"):
        dpreg.regress(d, "y ~ x", method="adassp", epsilon=1, delta=1e-6, bounds=BOUNDS,
                      random_state=0)
    with pytest.raises(InvalidInputError, match="column 'x'") as gerr:
        dpreg.fit_by_group(d, "y", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                           groups="from-data", random_state=0)
    _no_value(str(gerr.value))


def test_a_part_with_the_column_as_text_is_refused_by_the_cli(tmp_path):
    from typer.testing import CliRunner

    from dpreg.cli import app

    d = _write_parts(tmp_path / "mixed", [
        pa.table({"x": pa.array([1.0, 2.0]), "y": _y(2), "k": pa.array([1, 1])}),
        pa.table({"x": pa.array(["3.25", "7.75"]), "y": _y(2), "k": pa.array([1, 1])})])
    runner = CliRunner()
    for args in (["release-cov", str(d), "-c", "x,y", "-e", "1", "-d", "1e-6", "-b", "x=0:10",
                  "-b", "y=0:10", "--out", str(tmp_path / "r.json")],
                 ["fit", str(d), "--y", "y", "--x", "x", "-m", "adassp", "-e", "1", "-d", "1e-6",
                  "-b", "x=0:10", "-b", "y=0:10"],
                 ["fit", str(d), "--y", "y", "--x", "x", "-m", "theil-sen-exp", "-e", "1",
                  "-b", "x=0:10", "-b", "y=0:10"],
                 ["fit-groups", str(d), "--by", "k", "--y", "y", "--x", "x", "-m", "noisy-stats",
                  "-e", "1", "-b", "x=0:10", "-b", "y=0:10", "--keys-from-data", "--out",
                  str(tmp_path / "g.csv")]):
        res = runner.invoke(app, args, env={"COLUMNS": "250"})
        assert res.exit_code == 1, (args, res.output)
        assert "column 'x'" in res.stderr, res.stderr
        _no_value(res.output)
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "g.csv").exists()


@pytest.mark.parametrize("first", [
    pa.array([True, False, True]),                     # bool first: a double was read as True
    pa.array([1, 2, 3], pa.int64()),                   # int64 first: a double failed to cast
    pa.array([Decimal("1.50"), Decimal("2.00"), None], pa.decimal128(5, 2)),
    pa.array([None, None, None], pa.null()),           # an all-missing part
])
def test_parts_of_different_numeric_types_are_read_as_numbers(tmp_path, first):
    """Every part is read as float64 from its own type: the release equals the in-memory one
    on the same numbers (the second part's 3.25 and 7.75 are not cast to bool or int)."""
    second = pa.array([3.25, 7.75, 5.0])
    d = _write_parts(tmp_path / "parts", [pa.table({"x": first, "y": _y(3)}),
                                          pa.table({"x": second, "y": _y(3)})])
    xs = [float(v) if v is not None else np.nan for v in first.to_pylist()] + [3.25, 7.75, 5.0]
    if np.isnan(xs).any():  # missing values are refused, naming the column
        with pytest.raises(InvalidInputError, match=r"\['x'\].*missing") as err:
            release_sscp(d, **KW)
        _no_value(str(err.value))
        return
    mem = release_sscp(_numeric_frame(xs, _y(3).to_pylist() * 2), **KW)
    got = release_sscp(d, **KW)
    np.testing.assert_allclose(got.noisy_scaled, mem.noisy_scaled, rtol=1e-9)


def test_decimal_and_bool_columns_are_numbers_in_every_path(tmp_path):
    """A decimal or bool Parquet column is numbers for the streamed methods, for the methods
    that load the columns (CLI fit), and for fit_by_group, as a CSV column of numbers is."""
    from typer.testing import CliRunner

    from dpreg.cli import app

    n = 60
    x = np.round(np.linspace(0.5, 9.5, n), 2)
    t = pa.table({"x": pa.array([Decimal(f"{v:.2f}") for v in x], pa.decimal128(6, 2)),
                  "y": pa.array(np.linspace(1.0, 9.0, n)),
                  "b": pa.array(np.arange(n) % 2 == 0),
                  "k": pa.array(np.arange(n) % 2)})
    path = tmp_path / "dec.parquet"
    pq.write_table(t, path)
    frame = pd.DataFrame({"x": x, "y": np.linspace(1.0, 9.0, n), "b": (np.arange(n) % 2 == 0),
                          "k": np.arange(n) % 2})
    csv = tmp_path / "dec.csv"
    frame.to_csv(csv, index=False)
    kw = dict(method="noisy-stats", epsilon=1.0, bounds={**BOUNDS, "b": (0, 1)}, random_state=2)
    for formula in ("y ~ x", "y ~ b"):
        a = dpreg.regress(path, formula, **kw).params.to_numpy()
        b = dpreg.regress(csv, formula, **kw).params.to_numpy()
        np.testing.assert_allclose(a, b, rtol=1e-9)
    g_pq = dpreg.fit_by_group(path, "k", "x", "y", groups=[0, 1], **kw)
    g_csv = dpreg.fit_by_group(csv, "k", "x", "y", groups=[0, 1], **kw)
    np.testing.assert_allclose(g_pq["slope"].to_numpy(float), g_csv["slope"].to_numpy(float),
                               rtol=1e-9)
    outs = []
    for p in (path, csv):
        res = CliRunner().invoke(app, ["fit", str(p), "--y", "y", "--x", "x", "-m",
                                       "theil-sen-exp", "-e", "1", "-b", "x=0:10", "-b", "y=0:10",
                                       "--seed", "5", "--json"], env={"COLUMNS": "250"})
        assert res.exit_code == 0, res.output
        outs.append(json.loads(res.stdout[res.stdout.index("{"):])["coef"])
    assert outs[0] == outs[1]


@pytest.mark.parametrize("array, kind", [
    (pa.array(["a", "b", "c"]), "text"),
    (pa.array(["a", "b", "c"]).dictionary_encode(), "categories"),
    (pa.array([datetime.date(2020, 1, d) for d in (1, 2, 3)]), "dates/times"),
    (pa.array([datetime.datetime(2020, 1, d) for d in (1, 2, 3)]), "dates/times"),
])
@pytest.mark.parametrize("where", ["file", "second part"])
def test_non_numeric_types_are_refused_naming_column_and_kind(tmp_path, array, kind, where):
    if where == "file":
        path = tmp_path / "t.parquet"
        pq.write_table(pa.table({"x": array, "y": _y(3)}), path)
    else:
        path = _write_parts(tmp_path / "d", [pa.table({"x": pa.array([3.25, 7.75, 1.0]),
                                                       "y": _y(3)}),
                                             pa.table({"x": array, "y": _y(3)})])
    with pytest.raises(InvalidInputError) as err:
        release_sscp(path, **KW)
    msg = str(err.value)
    assert f"column 'x' of data file {path}" in msg and f"({kind}" in msg, msg
    assert "a numeric column is required" in msg
    _no_value(msg)
    # the per-group front end: a numeric x in one part and something else in another is
    # refused too (a single file's non-numeric x is refused by the in-memory checks)
    if where != "file":
        with pytest.raises(InvalidInputError, match="column 'x'") as gerr:
            dpreg.fit_by_group(path, "y", "x", "y", method="noisy-stats", epsilon=1,
                               bounds=BOUNDS, groups="from-data", random_state=0)
        _no_value(str(gerr.value))


def test_a_key_column_of_different_types_in_its_parts_is_refused(tmp_path):
    """fit_by_group reads the key column as pandas: int keys in one part and text keys in
    another would have been cast to the first part's type; refused, naming the types."""
    d = _write_parts(tmp_path / "keys", [
        pa.table({"k": pa.array([1, 2]), "x": pa.array([1.0, 2.0]), "y": _y(2)}),
        pa.table({"k": pa.array(["31337", "2"]), "x": pa.array([3.25, 7.75]), "y": _y(2)})])
    with pytest.raises(InvalidInputError, match="column 'k'.*different types") as err:
        dpreg.fit_by_group(d, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                           groups=[1, 2], random_state=0)
    _no_value(str(err.value))
