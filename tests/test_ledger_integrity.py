"""Ledger files carry a tamper-evident record (issue 32 item 5).

A ledger is an SQLite file anyone with write access can edit with the ``sqlite3`` shell: raise
the total, lower or delete a charge, truncate the history.  Before, every such edit was silently
accepted and bought budget.  Now each event row carries a link of a hash chain (HMAC-SHA256 under
the key file beside the ledger; SHA-256 without a key) and the meta table a seal over the total,
relation, integrity settings and head.  Every alteration below must be detected -- on opening,
by ``dpreg ledger show`` (non-zero exit) and by a charge, which is refused (nothing charged) --
and the key must never appear in the database, an output or an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import sqlite3
import stat
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dpreg import ApproxDP, Ledger, PureDP
from dpreg.cli import app
from dpreg.exceptions import (
    BudgetExceededError,
    DPRegError,
    InvalidInputError,
    LedgerFileError,
    LedgerIntegrityError,
)

RUNNER = CliRunner()
SRC = str(Path(__file__).resolve().parents[1] / "src")


def _make(path: Path, n: int = 5, **kw) -> Path:
    with Ledger(PureDP(10.0), path, **kw) as led:
        for i in range(n):
            led.spend(PureDP(0.5), f"release {i}")
    return path


def _sql(path: Path, *statements: tuple[str, tuple] | str) -> None:
    """Edit the file as an attacker would: plain SQLite, no dpreg code."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        for st in statements:
            sql, args = (st, ()) if isinstance(st, str) else st
            conn.execute(sql, args)
    finally:
        conn.close()


def _key(path: Path) -> bytes:
    return Path(str(path) + ".key").read_bytes()


def _rows(path: Path) -> list[tuple]:
    conn = sqlite3.connect(str(path))
    try:
        return conn.execute("SELECT id, ts, budget, label, neighbouring, stated, info, chain "
                            "FROM events ORDER BY id").fetchall()
    finally:
        conn.close()


def _count(path: Path) -> int:
    conn = sqlite3.connect(str(path))
    try:
        return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
    finally:
        conn.close()


def _meta(path: Path) -> dict[str, str]:
    conn = sqlite3.connect(str(path))
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()


# ------------------------------------------------------------------ alterations
def edit_total(p: Path) -> None:
    _sql(p, ("UPDATE meta SET value=? WHERE key='total'", (json.dumps(PureDP(100.0).as_dict()),)))


def edit_event_epsilon(p: Path) -> None:
    _sql(p, ("UPDATE events SET budget=? WHERE id=2", (json.dumps(PureDP(0.001).as_dict()),)))


def edit_last_event(p: Path) -> None:
    _sql(p, ("UPDATE events SET budget=? WHERE id=(SELECT max(id) FROM events)",
             (json.dumps(PureDP(0.001).as_dict()),)))


def edit_label(p: Path) -> None:
    _sql(p, "UPDATE events SET label='something else' WHERE id=3")


def edit_time(p: Path) -> None:
    _sql(p, "UPDATE events SET ts = ts + 3600 WHERE id=3")


def delete_event(p: Path) -> None:
    _sql(p, "DELETE FROM events WHERE id=2")


def truncate_history(p: Path) -> None:
    _sql(p, "DELETE FROM events WHERE id=(SELECT max(id) FROM events)")


def truncate_and_fix_head(p: Path) -> None:
    """Delete the last event and point the head at the one before (its chain value is stored in
    the file: no key needed) -- only the seal can tell."""
    rows = _rows(p)
    head = json.dumps({"chain": rows[-2][7], "events": len(rows) - 1}, separators=(",", ":"),
                      sort_keys=True)
    _sql(p, ("DELETE FROM events WHERE id=?", (rows[-1][0],)),
         ("UPDATE meta SET value=? WHERE key='head'", (head,)))


def delete_all_events(p: Path) -> None:
    _sql(p, "DELETE FROM events")


def insert_event(p: Path) -> None:
    rows = _rows(p)
    _sql(p, ("INSERT INTO events (ts, budget, label, neighbouring, stated, info, chain) VALUES "
             "(?, ?, 'inserted', 'replace-one', ?, '{}', ?)",
             (rows[-1][1] + 1, json.dumps(PureDP(0.1).as_dict()),
              json.dumps(PureDP(0.1).as_dict()), "0" * 64)))


def insert_event_copying_a_link(p: Path) -> None:
    """Insert a copy of an existing row (its chain value too) under a new id."""
    row = _rows(p)[1]
    _sql(p, ("INSERT INTO events (ts, budget, label, neighbouring, stated, info, chain) VALUES "
             "(?, ?, ?, ?, ?, ?, ?)", row[1:]))


def swap_events(p: Path) -> None:
    """Swap the contents of two rows (every column but the id, chain values too)."""
    a, b = _rows(p)[1], _rows(p)[3]
    cols = "ts=?, budget=?, label=?, neighbouring=?, stated=?, info=?, chain=?"
    _sql(p, (f"UPDATE events SET {cols} WHERE id=?", (*b[1:], a[0])),
         (f"UPDATE events SET {cols} WHERE id=?", (*a[1:], b[0])))


def swap_ids(p: Path) -> None:
    """Reorder two events by exchanging their ids."""
    _sql(p, "UPDATE events SET id=-1 WHERE id=2", "UPDATE events SET id=2 WHERE id=4",
         "UPDATE events SET id=4 WHERE id=-1")


def edit_relation(p: Path) -> None:
    _sql(p, "UPDATE meta SET value='add-remove' WHERE key='neighbouring'")


def remove_record(p: Path) -> None:
    """Strip the integrity record: drop the meta rows and the chain column."""
    _sql(p, "DELETE FROM meta WHERE key IN ('integrity', 'head', 'seal')",
         "ALTER TABLE events DROP COLUMN chain")


def recompute_chain_unkeyed(p: Path) -> None:
    """Lower a charge and recompute the whole chain and seal with SHA-256 (what anyone can do
    without the key), keeping the keyed scheme in the settings."""
    _sql(p, ("UPDATE events SET budget=? WHERE id=2", (json.dumps(PureDP(0.001).as_dict()),)))
    _reseal(p, key=None, keep_settings=True)


def recompute_chain_wrong_key(p: Path) -> None:
    _sql(p, ("UPDATE events SET budget=? WHERE id=2", (json.dumps(PureDP(0.001).as_dict()),)))
    _reseal(p, key=os.urandom(32), keep_settings=True)


def downgrade_to_unkeyed(p: Path) -> None:
    """Replace the keyed record by an unkeyed one and recompute everything without the key."""
    _sql(p, ("UPDATE events SET budget=? WHERE id=2", (json.dumps(PureDP(0.001).as_dict()),)))
    _reseal(p, key=None, keep_settings=False)


def _reseal(p: Path, key: bytes | None, keep_settings: bool) -> None:
    """An attacker's re-computation of chain, head and seal following the documented scheme
    (module docstring of dpreg.privacy.ledger) -- with the key when given."""
    import hmac

    def f(*parts: bytes) -> bytes:
        data = b"".join(parts)
        return hmac.new(key, data, hashlib.sha256).digest() if key else \
            hashlib.sha256(data).digest()

    def canon(obj) -> bytes:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                          allow_nan=False).encode("ascii")

    meta = _meta(p)
    record = meta["integrity"]
    if not keep_settings:
        settings = json.loads(record)
        settings.update(scheme="sha256-chain-1", key_id=None)
        record = canon(settings).decode()
    tip = f(b"dpreg-ledger-genesis\x00", record.encode())
    updates = []
    for row in _rows(p):
        tip = f(b"dpreg-ledger-event\x00", tip, canon(list(row[:7])))
        updates.append(("UPDATE events SET chain=? WHERE id=?", (tip.hex(), row[0])))
    head = canon({"events": len(updates), "chain": tip.hex()}).decode()
    seal = f(b"dpreg-ledger-seal\x00", canon({"total": meta["total"],
                                               "neighbouring": meta.get("neighbouring"),
                                               "integrity": record, "head": head})).hex()
    _sql(p, *updates, ("UPDATE meta SET value=? WHERE key='integrity'", (record,)),
         ("UPDATE meta SET value=? WHERE key='head'", (head,)),
         ("UPDATE meta SET value=? WHERE key='seal'", (seal,)))


ALTERATIONS = {
    "edit total": (edit_total, "seal does not match"),
    "edit an event's epsilon": (edit_event_epsilon, "event #2 does not match"),
    "edit the last event": (edit_last_event, "event #5 does not match"),
    "edit a label": (edit_label, "event #3 does not match"),
    "edit a time": (edit_time, "event #3 does not match"),
    "delete an event": (delete_event, "event #3 does not match"),
    "truncate the history": (truncate_history, "holds 4 events, but its seal records 5"),
    "truncate and fix the head": (truncate_and_fix_head, "seal does not match"),
    "delete every event": (delete_all_events, "holds 0 events, but its seal records 5"),
    "insert an event": (insert_event, "event #6 does not match"),
    "insert a copied row": (insert_event_copying_a_link, "event #6 does not match"),
    "swap two events": (swap_events, "event #2 does not match"),
    "swap two ids": (swap_ids, "event #2 does not match"),
    "edit the relation": (edit_relation, "seal does not match"),
    "remove the integrity record": (remove_record, "record was removed|key file exists"),
    "recompute the chain without the key": (recompute_chain_unkeyed, "does not match"),
    "recompute the chain with another key": (recompute_chain_wrong_key, "does not match"),
    "downgrade to an unkeyed chain": (downgrade_to_unkeyed, "unkeyed, but a key file exists"),
}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory) -> Path:
    return _make(tmp_path_factory.mktemp("keyed") / "l.db")


def _copy(src: Path, dst: Path) -> Path:
    shutil.copy(src, dst)
    shutil.copy(str(src) + ".key", str(dst) + ".key")
    return dst


@pytest.mark.parametrize("name", sorted(ALTERATIONS))
def test_every_alteration_is_detected_on_open(tmp_path, keyed, name):
    alter, match = ALTERATIONS[name]
    path = _copy(keyed, tmp_path / "l.db")
    Ledger(None, path).close()  # unaltered: opens
    alter(path)
    with pytest.raises(LedgerIntegrityError, match=match) as info:
        Ledger(None, path)
    text = str(info.value)
    assert isinstance(info.value, LedgerFileError) and isinstance(info.value, DPRegError)
    assert isinstance(info.value, ValueError)
    assert "\n" not in text and str(path) in text and "nothing was charged" in text
    assert _key(path).hex() not in text
    # read-only inspection: opens, says UNVERIFIED, refuses every charge
    led = Ledger(None, path, verify=False)
    status = led.integrity
    assert status is not None and status.status == "unverified" and not status.verified
    assert "UNVERIFIED" in repr(led)
    before = _count(path)
    with pytest.raises(LedgerIntegrityError, match="read-only"):
        led.spend(PureDP(0.01), "after the edit")
    assert _count(path) == before
    led.close()
    # the CLI: one line, exit 1; --no-verify shows the events and still exits non-zero
    res = RUNNER.invoke(app, ["ledger", "show", str(path)])
    assert res.exit_code == 1 and ("altered" in res.output or "cannot be verified" in res.output)
    assert "Traceback" not in res.output
    res = RUNNER.invoke(app, ["ledger", "show", str(path), "--no-verify"],
                        env={"COLUMNS": "250"})
    assert res.exit_code == 1, res.output
    assert "UNVERIFIED" in res.output
    res = RUNNER.invoke(app, ["ledger", "show", str(path), "--no-verify", "--json"])
    assert res.exit_code == 1
    assert json.loads(res.stdout)["integrity"]["status"] == "unverified"


@pytest.mark.parametrize("name", ["edit total", "edit the last event", "truncate the history",
                                  "insert an event", "edit the relation",
                                  "recompute the chain without the key"])
def test_an_open_ledger_refuses_to_charge_after_an_edit(tmp_path, keyed, name):
    """An object opened before the edit re-reads and verifies inside the charge's transaction:
    the edit is refused and nothing is charged."""
    alter, match = ALTERATIONS[name]
    path = _copy(keyed, tmp_path / "l.db")
    led = Ledger(None, path)
    alter(path)
    before = _rows(path)
    with pytest.raises(LedgerIntegrityError, match=match):
        led.spend(PureDP(0.01), "after the edit")
    assert _rows(path) == before
    with pytest.raises(LedgerIntegrityError):
        led.spent()
    assert led.integrity is not None and led.integrity.status == "unverified"


def test_an_edit_of_an_older_event_never_buys_budget(tmp_path, keyed):
    """A long-lived object decides on the rows it verified: lowering an old charge in the file
    changes nothing for it, and verify() (or any fresh open) reports the edit."""
    path = _copy(keyed, tmp_path / "l.db")
    led = Ledger(None, path)
    edit_event_epsilon(path)
    assert led.spent() == PureDP(2.5)
    with pytest.raises(BudgetExceededError):
        led.spend(PureDP(7.6))
    with pytest.raises(LedgerIntegrityError, match="event #2"):
        led.verify()


def test_unaltered_ledgers_verify(tmp_path):
    path = _make(tmp_path / "l.db")
    led = Ledger(None, path)
    status = led.integrity
    assert status is not None and status.status == "verified-hmac" and status.verified
    assert status.key_id and status.key_id in status.detail and len(status.digest) == 64
    assert led.verify().status == "verified-hmac"
    assert led.as_dict()["integrity"]["status"] == "verified-hmac"
    led.spend(PureDP(0.5), "more")
    assert Ledger(None, path).integrity.status == "verified-hmac"
    assert Ledger(PureDP(1.0)).integrity is None  # in memory: no file
    res = RUNNER.invoke(app, ["ledger", "show", str(path)], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "verified (HMAC-SHA256" in res.output


def test_unkeyed_ledger(tmp_path):
    path = _make(tmp_path / "l.db", key_file=False)
    assert not Path(str(path) + ".key").exists()
    led = Ledger(None, path)
    assert led.integrity.status == "verified-digest" and led.integrity.key_id is None
    for alter in (edit_total, edit_event_epsilon, delete_event, truncate_history, swap_ids):
        p = tmp_path / f"{alter.__name__}.db"
        shutil.copy(path, p)
        alter(p)
        with pytest.raises(LedgerIntegrityError):
            Ledger(None, p)


def test_unkeyed_chain_does_not_stop_a_recomputed_edit(tmp_path):
    """The documented limit of a ledger without a key: whoever recomputes the SHA-256 chain
    after an edit is not detected (docs/threat-model.md)."""
    path = _make(tmp_path / "l.db", key_file=False)
    _sql(path, ("UPDATE events SET budget=? WHERE id=2", (json.dumps(PureDP(0.001).as_dict()),)))
    _reseal(path, key=None, keep_settings=True)
    assert Ledger(None, path).integrity.status == "verified-digest"


def test_rollback_to_an_older_copy_is_not_detected(tmp_path):
    """The other documented limit: restoring a complete older copy (with its key) is a valid
    ledger; the head shown by `dpreg ledger show` is what to compare against a note kept
    elsewhere."""
    path = _make(tmp_path / "l.db", n=2)
    backup = tmp_path / "backup.db"
    shutil.copy(path, backup)
    with Ledger(None, path) as led:
        led.spend(PureDP(5.0), "big")
        head = led.integrity.digest
    shutil.copy(backup, path)
    for ext in ("-wal", "-shm"):
        Path(str(path) + ext).unlink(missing_ok=True)
    led = Ledger(None, path)
    assert led.integrity.verified and led.integrity.digest != head
    assert led.spent() == PureDP(1.0)


def test_key_file_created_beside_the_ledger(tmp_path):
    path = tmp_path / "l.db"
    with Ledger(PureDP(1.0), path):
        pass
    key = Path(str(path) + ".key")
    assert key.stat().st_size == 32
    if os.name == "posix":
        assert stat.S_IMODE(key.stat().st_mode) == 0o600
    # a key file elsewhere
    other = tmp_path / "keys" / "ledger.key"
    other.parent.mkdir()
    with Ledger(PureDP(1.0), tmp_path / "m.db", key_file=other) as led:
        led.spend(PureDP(0.5))
    assert other.stat().st_size == 32 and not Path(str(tmp_path / "m.db") + ".key").exists()
    assert Ledger(None, tmp_path / "m.db", key_file=other).integrity.status == "verified-hmac"
    with pytest.raises(LedgerIntegrityError, match="key file .* was not found"):
        Ledger(None, tmp_path / "m.db")


def test_keyed_ledger_without_or_with_the_wrong_key(tmp_path, keyed):
    path = _copy(keyed, tmp_path / "l.db")
    key = Path(str(path) + ".key")
    secret = key.read_bytes()
    moved = tmp_path / "moved.key"
    key.rename(moved)
    with pytest.raises(LedgerIntegrityError, match="cannot be verified.*keyed.*not found") as info:
        Ledger(None, path)
    led = Ledger(None, path, verify=False)  # read it without the key: read-only, UNVERIFIED
    assert led.integrity.status == "unverified" and led.spent() == PureDP(2.5)
    with pytest.raises(LedgerIntegrityError):
        led.spend(PureDP(0.1))
    led.close()
    assert Ledger(None, path, key_file=moved).integrity.status == "verified-hmac"
    other = tmp_path / "other.key"
    RUNNER.invoke(app, ["key", "init", str(other)])
    with pytest.raises(LedgerIntegrityError, match="key id") as info:
        Ledger(None, path, key_file=other)
    for secret_bytes in (secret, other.read_bytes()):
        assert secret_bytes.hex() not in str(info.value)
    with pytest.raises(LedgerIntegrityError):
        Ledger(None, path, key_file=False)
    bad = tmp_path / "bad.key"
    bad.write_bytes(b"short")
    with pytest.raises(LedgerIntegrityError, match="not a dpreg key file"):
        Ledger(None, path, key_file=bad)


def test_the_key_never_appears_in_the_file_or_any_output(tmp_path):
    path = tmp_path / "l.db"
    res = RUNNER.invoke(app, ["ledger", "init", str(path), "--epsilon", "2"])
    assert res.exit_code == 0, res.output
    key = _key(path)
    assert "key id" in res.output
    with Ledger(None, path) as led:
        led.spend(PureDP(0.5), "a")
        texts = [repr(led), str(led.as_dict()), str(led.integrity), led.describe()]
        pickled = pickle.dumps(led)
    outputs = [RUNNER.invoke(app, ["ledger", "show", str(path), *extra]).output
               for extra in ([], ["--json"])]
    encodings = [key.hex(), key.hex().upper(), __import__("base64").b64encode(key).decode()]
    for text in texts + outputs:
        for enc in encodings:
            assert enc not in text
    for blob in [pickled, path.read_bytes()] + [Path(str(path) + s).read_bytes()
                                                for s in ("-wal",) if Path(str(path) + s).exists()]:
        assert key not in blob and key.hex().encode() not in blob


def test_legacy_ledger_opens_and_is_sealed_explicitly(tmp_path):
    """A file of an older dpreg (no chain): opens and charges as before, marked 'no integrity
    record'; `dpreg ledger seal` adds the chain (and the key); edits are detected after that."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, "
                 "budget TEXT NOT NULL, label TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('total', ?)", (json.dumps(PureDP(2.0).as_dict()),))
    for i in range(3):
        conn.execute("INSERT INTO events (ts, budget, label) VALUES (?, ?, ?)",
                     (1.0 + i, json.dumps(PureDP(0.25).as_dict()), f"old {i}"))
    conn.close()
    led = Ledger(None, path)
    assert led.integrity.status == "no-record" and "older dpreg" in led.integrity.detail
    assert "no integrity record" in repr(led)
    led.spend(PureDP(0.25), "new, unsealed")
    res = RUNNER.invoke(app, ["ledger", "show", str(path)], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "no integrity record" in res.output
    assert "dpreg ledger seal" in res.output
    led.close()
    res = RUNNER.invoke(app, ["ledger", "seal", str(path)])
    assert res.exit_code == 0, res.output
    assert Path(str(path) + ".key").exists()
    led = Ledger(None, path)
    assert led.integrity.status == "verified-hmac"
    assert [e.label for e in led.events()] == ["old 0", "old 1", "old 2", "new, unsealed"]
    assert led.spent() == PureDP(1.0) and led.legacy  # still no relation stored: replace-one
    led.spend(PureDP(0.5), "sealed")
    led.close()
    res = RUNNER.invoke(app, ["ledger", "seal", str(path)])
    assert res.exit_code == 1 and "already has an integrity record" in res.output
    edit_event_epsilon(path)
    with pytest.raises(LedgerIntegrityError, match="event #2"):
        Ledger(None, path)


def test_charging_a_ledger_without_a_record_warns(tmp_path):
    path = tmp_path / "old.db"
    _make(path, n=1, key_file=False)
    remove_record(path)  # what a ledger of an older dpreg looks like
    data = tmp_path / "d.csv"
    # n = 600, eps = 5: the secure release is never ⊥ (P(noisy nvar <= 0) ~ e^-40; with the
    # 60 rows and eps = 0.5 this test used it was 1/3, and a ⊥ fit exits with status 1)
    data.write_text("x,y\n" + "".join(f"{i % 7},{(3 * i) % 11}\n" for i in range(600)))
    res = RUNNER.invoke(app, ["fit", str(data), "--y", "y", "--x", "x", "--method",
                              "noisy-stats", "-e", "5", "-b", "x=0:10", "-b", "y=0:10",
                              "--ledger", str(path)])
    assert res.exit_code == 0, res.output
    assert "warning: ledger" in res.stderr and "no integrity record" in res.stderr
    assert "dpreg ledger seal" in res.stderr
    assert len(Ledger(None, path).events()) == 2  # charged as before


def test_legacy_ledger_with_a_key_file_beside_it_is_refused(tmp_path):
    """A key file beside a ledger without a record: the record was stripped (or the file is an
    old one the user meant to seal) -- refused, never charged silently."""
    path = tmp_path / "l.db"
    _make(path, n=2)
    remove_record(path)
    with pytest.raises(LedgerIntegrityError, match="no integrity record, but a key file exists"):
        Ledger(None, path)
    # stripping the record AND deleting the key file is deleting the protection altogether:
    # documented as not detectable (like deleting the whole ledger)
    Path(str(path) + ".key").unlink()
    assert Ledger(None, path).integrity.status == "no-record"


def test_reseal_after_inspection(tmp_path, keyed):
    path = _copy(keyed, tmp_path / "l.db")
    edit_label(path)
    led = Ledger(None, path, verify=False)
    with pytest.raises(InvalidInputError, match="already has an integrity record"):
        led.seal()
    assert led.seal(reseal=True).status == "verified-hmac"
    led.close()
    assert Ledger(None, path).events()[2].label == "something else"


def test_an_older_dpreg_cannot_append_without_a_link(tmp_path, keyed):
    """What an older dpreg's charge does on a sealed ledger: an INSERT without a chain value --
    refused by SQLite (NOT NULL), so it charges nothing and cannot break the chain."""
    path = _copy(keyed, tmp_path / "l.db")
    with pytest.raises(sqlite3.IntegrityError, match="NOT NULL"):
        _sql(path, ("INSERT INTO events (ts, budget, label, neighbouring, stated, info) VALUES "
                    "(1.0, ?, 'old dpreg', 'replace-one', ?, '{}')",
                    (json.dumps(PureDP(0.1).as_dict()), json.dumps(PureDP(0.1).as_dict()))))
    assert Ledger(None, path).integrity.status == "verified-hmac"


def test_cli_init_options_and_environment(tmp_path):
    path = tmp_path / "l.db"
    res = RUNNER.invoke(app, ["ledger", "init", str(path), "-e", "1", "--no-key"])
    assert res.exit_code == 0 and "unkeyed SHA-256 chain" in res.output
    assert not Path(str(path) + ".key").exists()
    assert Ledger(None, path).integrity.status == "verified-digest"
    key = tmp_path / "elsewhere.key"
    other = tmp_path / "m.db"
    res = RUNNER.invoke(app, ["ledger", "init", str(other), "-e", "1", "--key", str(key)])
    assert res.exit_code == 0 and key.exists(), res.output
    res = RUNNER.invoke(app, ["ledger", "show", str(other)])
    assert res.exit_code == 1 and "not found" in res.output
    res = RUNNER.invoke(app, ["ledger", "show", str(other)], env={"DPREG_LEDGER_KEY": str(key)})
    assert res.exit_code == 0 and "verified" in res.output
    res = RUNNER.invoke(app, ["ledger", "show", str(other), "--key", str(key), "--json"])
    assert json.loads(res.stdout)["integrity"]["status"] == "verified-hmac"
    res = RUNNER.invoke(app, ["ledger", "init", str(tmp_path / "x.db"), "-e", "1", "--no-key",
                              "--key", str(key)])
    assert res.exit_code == 2


CHARGER = textwrap.dedent(
    """
    import sys
    from dpreg import Ledger, PureDP, BudgetExceededError
    led = Ledger(None, sys.argv[1])
    n = 0
    for i in range(int(sys.argv[2])):
        try:
            led.spend(PureDP(0.01), f"{sys.argv[3]}-{i}")
            n += 1
        except BudgetExceededError:
            pass
    print(n, flush=True)
    """
)


def test_parallel_charges_from_two_processes_keep_a_valid_chain(tmp_path):
    path = tmp_path / "shared.db"
    with Ledger(PureDP(1.0), path):
        pass
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    procs = [subprocess.Popen([sys.executable, "-c", CHARGER, str(path), "60", name],
                              stdout=subprocess.PIPE, text=True, env=env)
             for name in ("a", "b")]
    counts = [int(p.communicate(timeout=300)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    led = Ledger(None, path)
    assert led.integrity.status == "verified-hmac"
    assert len(led.events()) == sum(counts) == 100  # 120 tried, the total allows 100
    assert {e.label.split("-")[0] for e in led.events()} == {"a", "b"}
    assert Fraction(led.spent().epsilon) <= Fraction(1.0) * (1 + Fraction(1, 10**9))
    assert [e.id for e in led.events()] == sorted(e.id for e in led.events())


def test_pickled_ledger_reopens_with_its_key_file(tmp_path):
    key = tmp_path / "k.key"
    with Ledger(ApproxDP(1.0, 1e-6), tmp_path / "l.db", key_file=key) as led:
        copy = pickle.loads(pickle.dumps(led))
        copy.spend(PureDP(0.1))
        assert copy.integrity.status == "verified-hmac"
        assert led.integrity.status == "verified-hmac" and len(led.events()) == 1
