"""Cost of one ``Ledger.spend`` on a file ledger, against the floor measured in the same run.

The floor is what any durable ledger pays: one SQLite ``BEGIN IMMEDIATE`` + INSERT + COMMIT
with the same settings (WAL, ``synchronous=FULL``: an fsync per charge).  ``spend`` adds the
interrupt-safe decision (the cached events checked against the table inside the write
transaction, newer rows read, the exact composition) -- measured with 0, 1,000 and 10,000
events already in the file, since the decision reads the table every time.

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


def _spend(path: Path, existing: int, n: int) -> float:
    led = Ledger(PureDP(1e9), path)
    if existing:  # fill quickly through SQLite (same rows spend writes)
        conn = sqlite3.connect(str(path), isolation_level=None)
        body = json.dumps(PureDP(1e-6).as_dict())
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO events (ts, budget, label, neighbouring, stated) "
                         "VALUES (?, ?, ?, 'replace-one', ?)",
                         [(time.time(), body, f"old{i}", body) for i in range(existing)])
        conn.execute("COMMIT")
        conn.close()
    led.spent()  # read the existing rows once, as a long-lived ledger object has
    t0 = time.perf_counter()
    for i in range(n):
        led.spend(PureDP(1e-6), f"c{i}")
    led.close()
    return (time.perf_counter() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--charges", type=int, default=200)
    n = ap.parse_args().charges
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        floor = _floor(d / "floor.db", n)
        rows = [("SQLite INSERT + COMMIT (floor)", f"{floor * 1e3:.2f}", "1.00x")]
        for existing in (0, 1_000, 10_000):
            t = _spend(d / f"ledger{existing}.db", existing, n)
            rows.append((f"Ledger.spend, {existing:,} events in the file", f"{t * 1e3:.2f}",
                         f"{t / floor:.2f}x"))
        t0 = time.perf_counter()
        Ledger(None, d / "ledger10000.db").close()
        rows.append((f"open a ledger of {10_000 + n:,} events (reads them all)",
                     f"{(time.perf_counter() - t0) * 1e3:.2f}", "-"))
    print(table(rows, ("operation", "ms per charge", "vs floor")))


if __name__ == "__main__":
    main()
