"""Cost of one ``Ledger.spend`` on a file ledger, against the floor measured in the same run.

The floor is what any durable ledger pays: one SQLite ``BEGIN IMMEDIATE`` + INSERT + COMMIT
with the same settings (WAL, ``synchronous=FULL``: an fsync per charge).  ``spend`` adds the
interrupt-safe decision (the cached events checked against the table inside the write
transaction, newer rows read, the exact composition) and, on a sealed ledger, the integrity
chain (the new rows' HMAC links verified, the seal checked, the new link, head and seal
written) -- measured with 0, 1,000 and 10,000 events already in the file, on a ledger with an
HMAC chain (what ``Ledger(total, path)`` creates) and on one without a record (a file of an
older dpreg: the code path before the chain existed), and the time to open (and verify) a
ledger of 10,000 events.

Run: .venv/bin/python benchmarks/bench_ledger.py [--charges 200]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from _timing import table

from dpreg import Ledger, PureDP


def _floor(path: Path, n: int) -> float:
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL, "
                 "budget TEXT, label TEXT)")
    body = json.dumps(PureDP(1e-6).as_dict())
    t0 = time.perf_counter()
    for i in range(n):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO events (ts, budget, label) VALUES (?, ?, ?)",
                     (time.time(), body, f"c{i}"))
        conn.execute("COMMIT")
    conn.close()
    return (time.perf_counter() - t0) / n


def _filled(path: Path, existing: int, sealed: bool) -> None:
    """A ledger file with ``existing`` events, written quickly through SQLite in the layout of
    an older dpreg (no integrity record); ``sealed``: then sealed (HMAC chain, key file)."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, "
                 "budget TEXT NOT NULL, label TEXT NOT NULL, neighbouring TEXT, stated TEXT, "
                 "info TEXT)")
    conn.execute("INSERT INTO meta VALUES ('total', ?)", (json.dumps(PureDP(1e9).as_dict()),))
    conn.execute("INSERT INTO meta VALUES ('neighbouring', 'replace-one')")
    body = json.dumps(PureDP(1e-6).as_dict())
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO events (ts, budget, label, neighbouring, stated, info) "
                     "VALUES (?, ?, ?, 'replace-one', ?, '{}')",
                     [(time.time(), body, f"old{i}", body) for i in range(existing)])
    conn.execute("COMMIT")
    conn.close()
    if sealed:
        with Ledger(None, path) as led:
            led.seal()


def _spend(path: Path, existing: int, n: int, sealed: bool) -> float:
    _filled(path, existing, sealed)
    led = Ledger(None, path)
    led.spent()  # read the existing rows once, as a long-lived ledger object has
    t0 = time.perf_counter()
    for i in range(n):
        led.spend(PureDP(1e-6), f"c{i}")
    led.close()
    return (time.perf_counter() - t0) / n


def _open(path: Path, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        Ledger(None, path).close()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--charges", type=int, default=200)
    n = ap.parse_args().charges
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        floor = _floor(d / "floor.db", n)
        rows = [("SQLite INSERT + COMMIT (floor)", f"{floor * 1e3:.2f}", "1.00x", "-")]
        for existing in (0, 1_000, 10_000):
            plain = _spend(d / f"plain{existing}.db", existing, n, sealed=False)
            chained = _spend(d / f"sealed{existing}.db", existing, n, sealed=True)
            rows.append((f"Ledger.spend, {existing:,} events, no integrity record",
                         f"{plain * 1e3:.2f}", f"{plain / floor:.2f}x", "1.00x"))
            rows.append((f"Ledger.spend, {existing:,} events, HMAC chain",
                         f"{chained * 1e3:.2f}", f"{chained / floor:.2f}x",
                         f"{chained / plain:.2f}x"))
        plain = _open(d / "plain10000.db")
        chained = _open(d / "sealed10000.db")
        rows.append((f"open a ledger of {10_000 + n:,} events, no record (reads them all)",
                     f"{plain * 1e3:.2f}", "-", "1.00x"))
        rows.append((f"open a ledger of {10_000 + n:,} events, HMAC chain (verifies them all)",
                     f"{chained * 1e3:.2f}", "-", f"{chained / plain:.2f}x"))
    print(table(rows, ("operation", "ms", "vs floor", "vs no record")))


if __name__ == "__main__":
    main()
