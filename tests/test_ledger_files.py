"""Unusable ledger files end in one-line library errors (issue 16 item 5).

A directory, a plain-text file, a truncated or corrupt ledger, an SQLite database that is not a
dpreg ledger, a corrupt event row and a read-only file used to end in raw sqlite3 tracebacks.
Each must raise :class:`~dpreg.exceptions.LedgerFileError` (a DPRegError) naming the file and
saying that nothing was charged -- from the API and from `dpreg ledger show/init` and
`dpreg fit --ledger` (exit 1, one line, no traceback) -- and a foreign database is never
modified.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import dpreg.privacy._store as ledger_module
from dpreg import Ledger, PureDP
from dpreg.cli import app
from dpreg.exceptions import DPRegError, LedgerFileError

SRC = str(Path(__file__).resolve().parents[1] / "src")


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    """A real ledger with enough events to span several database pages."""
    path = tmp_path_factory.mktemp("good") / "good.db"
    with Ledger(PureDP(100.0), path) as led:
        for i in range(400):
            led.spend(PureDP(0.01), f"release {i} " + "x" * 40)
    return path


def _copy(good: Path, dst: Path) -> Path:
    """A copy of the ledger with its key file (a keyed ledger is verified with its key)."""
    shutil.copy(good, dst)
    shutil.copy(str(good) + ".key", str(dst) + ".key")
    return dst


def make_directory(tmp: Path, good: Path) -> Path:
    (tmp / "dir.db").mkdir()
    return tmp / "dir.db"


def make_plain_text(tmp: Path, good: Path) -> Path:
    path = tmp / "notes.db"
    path.write_text("total epsilon = 1\nthis is not a database\n" * 20)
    return path


def make_truncated(tmp: Path, good: Path) -> Path:
    data = good.read_bytes()
    path = tmp / "truncated.db"
    path.write_bytes(data[: len(data) // 2])
    return path


def make_corrupt_header(tmp: Path, good: Path) -> Path:
    data = bytearray(good.read_bytes())
    data[:100] = np.random.default_rng(0).integers(0, 256, 100, dtype=np.uint8).tobytes()
    path = tmp / "corrupt_header.db"
    path.write_bytes(bytes(data))
    return path


def make_corrupt_pages(tmp: Path, good: Path) -> Path:
    data = bytearray(good.read_bytes())
    data[4096:12288] = np.random.default_rng(1).integers(0, 256, 8192, dtype=np.uint8).tobytes()
    path = tmp / "corrupt_pages.db"
    path.write_bytes(bytes(data))
    return path


def make_foreign_sqlite(tmp: Path, good: Path) -> Path:
    path = tmp / "foreign.db"
    conn = sqlite3.connect(str(path))
    conn.execute("CREATE TABLE customers (name TEXT, balance REAL)")
    conn.execute("INSERT INTO customers VALUES ('a', 1.0)")
    conn.commit()
    conn.close()
    return path


def make_corrupt_event(tmp: Path, good: Path) -> Path:
    path = _copy(good, tmp / "bad_event.db")
    conn = sqlite3.connect(str(path))
    conn.execute("UPDATE events SET budget = '{not json' WHERE id = 7")
    conn.commit()
    conn.close()
    return path


FAULTS = {
    "directory": make_directory,
    "plain text": make_plain_text,
    "truncated": make_truncated,
    "corrupt header": make_corrupt_header,
    "corrupt pages": make_corrupt_pages,
    "foreign sqlite": make_foreign_sqlite,
    "corrupt event": make_corrupt_event,
}


def _one_line_error(exc: BaseException, path: Path) -> None:
    text = str(exc)
    assert isinstance(exc, LedgerFileError) and isinstance(exc, DPRegError)
    assert "\n" not in text
    assert str(path) in text
    assert "nothing was charged" in text


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_api_open_and_reopen_with_total(tmp_path, good, fault):
    path = FAULTS[fault](tmp_path, good)
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises(LedgerFileError) as info:
        Ledger(None, path)
    _one_line_error(info.value, path)
    with pytest.raises(LedgerFileError) as info:
        Ledger(PureDP(100.0), path)  # a total does not make it writable as a new ledger
    _one_line_error(info.value, path)
    if before is not None:
        assert path.read_bytes() == before, "the file was modified"


def test_foreign_database_is_not_touched(tmp_path, good):
    path = make_foreign_sqlite(tmp_path, good)
    with pytest.raises(LedgerFileError, match="not a dpreg ledger"):
        Ledger(PureDP(1.0), path)
    conn = sqlite3.connect(str(path))
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["customers"]
    conn.close()


def test_empty_sqlite_database_becomes_a_ledger(tmp_path):
    path = tmp_path / "empty.db"
    sqlite3.connect(str(path)).execute("VACUUM").connection.close()
    assert path.stat().st_size > 0
    with Ledger(PureDP(1.0), path) as led:
        led.spend(PureDP(0.5))
    assert Ledger(None, path).spent() == PureDP(0.5)


def _read_only_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    """Open every ledger file read-only (SQLite's own read-only mode): root ignores file
    permissions, so this is how the test reaches SQLite's 'readonly database' errors."""
    real = sqlite3.connect

    def connect(database: str, **kwargs: object) -> sqlite3.Connection:
        return real(f"file:{database}?mode=ro", uri=True, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ledger_module.sqlite3, "connect", connect)


def test_read_only_file(tmp_path, good, monkeypatch):
    path = _copy(good, tmp_path / "ro.db")
    _read_only_connect(monkeypatch)
    led = Ledger(None, path)  # reading needs no write access
    assert led.spent().epsilon == pytest.approx(4.0)  # type: ignore[attr-defined]
    with pytest.raises(LedgerFileError) as info:
        led.spend(PureDP(0.01), "x")
    _one_line_error(info.value, path)
    assert "read-only" in str(info.value)
    assert len(led.events()) == 400  # usable, nothing recorded
    with pytest.raises(LedgerFileError) as info:
        Ledger(PureDP(1.0), tmp_path / "new.db")
    _one_line_error(info.value, tmp_path / "new.db")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="file permissions do not bind root")
def test_read_only_permissions(tmp_path, good):  # pragma: no cover - not run as root
    path = _copy(good, tmp_path / "ro.db")
    path.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(LedgerFileError) as info:
            Ledger(None, path).spend(PureDP(0.01))
        _one_line_error(info.value, path)
    finally:
        tmp_path.chmod(0o755)


def test_spend_spent_events_after_the_file_went_bad(tmp_path, good):
    """A ledger opened fine whose file is later damaged (another program overwrote it)."""
    path = _copy(good, tmp_path / "later.db")
    led = Ledger(None, path)
    led.close()
    led2 = Ledger(None, path)
    path.write_text("overwritten\n" * 1000)
    for call in (lambda: led2.spend(PureDP(0.01)), led2.spent, led2.events):
        try:
            call()  # SQLite may still serve this from its page cache ...
        except LedgerFileError as exc:  # ... or notice: then a one-line library error
            assert str(path) in str(exc) and "\n" not in str(exc)


def test_closed_file_ledger_refuses_to_charge(tmp_path):
    led = Ledger(PureDP(1.0), tmp_path / "c.db")
    led.spend(PureDP(0.25))
    led.close()
    with pytest.raises(DPRegError, match="closed.*Nothing was charged"):
        led.spend(PureDP(0.25))
    assert Ledger(None, tmp_path / "c.db").spent() == PureDP(0.25)


# ------------------------------------------------------------------ CLI
def _subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
               COLUMNS="200", PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-m", "dpreg.cli", *args], capture_output=True,
                          text=True, env=env, timeout=300)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """The command in this process (typer's runner): same exit code and streams, no start-up
    cost per call."""
    res = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return subprocess.CompletedProcess(list(args), res.exit_code, res.stdout, res.stderr)


def _cli_error(out: subprocess.CompletedProcess[str], path: Path) -> None:
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr and "sqlite3" not in out.stderr
    line = " ".join(out.stderr.split())  # rich wraps long lines
    assert str(path) in line.replace(" ", "") or str(path) in line
    assert "nothing was charged" in line


def test_cli_every_fault(tmp_path, good):
    """`dpreg ledger show` (text and --json) and `dpreg fit --ledger` on every fault."""
    data = tmp_path / "data.csv"
    g = np.random.default_rng(0)
    pd.DataFrame({"x": g.uniform(0, 1, 50), "y": g.uniform(0, 1, 50)}).to_csv(data, index=False)
    plain = make_plain_text(tmp_path, good)  # once as a real process: exit code, no traceback
    _cli_error(_subprocess("ledger", "show", str(plain)), plain)
    for fault, make in sorted(FAULTS.items()):
        sub = tmp_path / fault.replace(" ", "_")
        sub.mkdir()
        path = make(sub, good)
        _cli_error(_run("ledger", "show", str(path)), path)
        _cli_error(_run("ledger", "show", str(path), "--json"), path)
        fit = _run("fit", str(data), "--y", "y", "--x", "x", "-m", "noisy-stats", "-e", "0.5",
                   "-b", "x=0:1", "-b", "y=0:1", "--seed", "1", "--ledger", str(path))
        _cli_error(fit, path)
        assert fit.stdout == "", f"{fault}: a release was printed"


def test_cli_init_errors(tmp_path):
    missing_dir = tmp_path / "no" / "such" / "dir" / "l.db"
    out = _run("ledger", "init", str(missing_dir), "-e", "1")
    _cli_error(out, missing_dir)
    existing = tmp_path / "exists.db"
    existing.write_text("x")
    out = _run("ledger", "init", str(existing), "-e", "1")
    assert out.returncode == 1 and "already exists" in out.stderr
