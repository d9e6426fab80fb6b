"""Ledger integrity under faults and interrupts (issue 15 item 5).

* an exception between the INSERT and the COMMIT of a charge must not make that ledger object
  blind to other processes' charges (it used to advance its cached last id: 1.4 spent of 1.0);
* a ``KeyboardInterrupt`` at any point of ``spend`` -- in particular right when ``BEGIN
  IMMEDIATE`` returns after waiting for another process's lock -- must leave the connection
  usable and no lock held (it used to leave the transaction open: every other process, and
  ``dpreg ledger show``, blocked and then failed with "database is locked");
* a storm of real SIGINTs across processes sharing one file never lets the committed charges
  exceed the total, and ``dpreg ledger show`` still works afterwards.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dpreg import BudgetExceededError, Ledger, PureDP
from dpreg.cli import app

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _committed_epsilon(path: Path) -> Fraction:
    """Σε of the committed rows, read with a plain SQLite connection (no dpreg code)."""
    conn = sqlite3.connect(str(path), timeout=5.0)
    try:
        rows = conn.execute("SELECT budget FROM events").fetchall()
    finally:
        conn.close()
    return sum((Fraction(json.loads(b)["epsilon"]) for (b,) in rows), Fraction(0))


def _write_lock_is_free(path: Path, timeout: float = 2.0) -> bool:
    """Whether another connection can take the write lock within ``timeout`` seconds."""
    conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError as exc:
        assert "locked" in str(exc)
        return False
    finally:
        conn.close()


class _Fault(Exception):
    pass


def _fail_after_insert(monkeypatch: pytest.MonkeyPatch, exc: type[BaseException]) -> None:
    """Make the next charges raise ``exc`` after their INSERT, before their COMMIT."""
    original = Ledger._commit_event

    def boom(self: Ledger, *args: object, **kwargs: object) -> object:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        raise exc("injected between INSERT and COMMIT")

    monkeypatch.setattr(Ledger, "_commit_event", boom)


@pytest.mark.parametrize("exc", [_Fault, KeyboardInterrupt])
def test_fault_between_insert_and_commit_never_hides_other_charges(tmp_path, monkeypatch, exc):
    """The reported failure: one injected fault, then 1.4 spent of 1.0."""
    path = tmp_path / "l.db"
    a = Ledger(PureDP(1.0), path)
    b = Ledger(PureDP(1.0), path)  # "another process": its own connection
    a.spend(PureDP(0.4), "a1")
    with monkeypatch.context() as m:
        _fail_after_insert(m, exc)
        with pytest.raises(exc):
            a.spend(PureDP(0.4), "a2 (fails)")
    assert _write_lock_is_free(path), "the failed charge left the write lock held"
    b.spend(PureDP(0.6), "b1")  # takes the id the rolled-back insert had used
    with pytest.raises(BudgetExceededError):
        a.spend(PureDP(0.4), "a3")  # a must see b's charge
    assert _committed_epsilon(path) <= Fraction(1.0)
    assert a.spent() == PureDP(1.0)
    assert [e.label for e in a.events()] == ["a1", "b1"]


def test_fault_in_memory_records_nothing(monkeypatch):
    led = Ledger(PureDP(1.0))
    led.spend(PureDP(0.4), "a1")
    with monkeypatch.context() as m:
        _fail_after_insert(m, _Fault)
        with pytest.raises(_Fault):
            led.spend(PureDP(0.4), "fails")
    assert led.spent() == PureDP(0.4)
    led.spend(PureDP(0.6), "a2")
    with pytest.raises(BudgetExceededError):
        led.spend(PureDP(1e-6))


class _InterruptAfterBegin:
    """A connection proxy that raises KeyboardInterrupt as soon as ``BEGIN IMMEDIATE`` returns
    (what a Ctrl-C during the wait for another process's lock does: SQLite's busy wait does
    not return to Python until it has the lock)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.armed = True

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        cur = self._conn.execute(sql, *args)
        if self.armed and sql.strip().upper().startswith("BEGIN"):
            self.armed = False
            raise KeyboardInterrupt
        return cur

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)


def test_interrupt_right_after_begin_releases_the_lock(tmp_path):
    path = tmp_path / "l.db"
    led = Ledger(PureDP(1.0), path)
    led._conn = _InterruptAfterBegin(led._conn)  # type: ignore[assignment]
    with pytest.raises(KeyboardInterrupt):
        led.spend(PureDP(0.1), "interrupted")
    assert _write_lock_is_free(path), "the interrupted charge left the write lock held"
    other = Ledger(None, path)
    other.spend(PureDP(0.5), "other")
    led.spend(PureDP(0.5), "after")  # the interrupted connection is usable
    with pytest.raises(BudgetExceededError):
        led.spend(PureDP(0.01))
    assert [e.label for e in other.events()] == ["other", "after"]


WAITER = textwrap.dedent(
    """
    import sys, time
    from dpreg import Ledger, PureDP
    led = Ledger(None, sys.argv[1])
    print("ready", flush=True)
    sys.stdin.readline()  # go: the lock is now held by another process
    try:
        led.spend(PureDP(0.1), "waiter")
        print("charged", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    time.sleep(60)  # an interactive session that carries on after Ctrl-C
    """
)


def test_sigint_while_waiting_for_the_lock_leaves_no_lock(tmp_path):
    """The reported failure: Ctrl-C while waiting for the lock; afterwards every other process
    (and `dpreg ledger show`) blocked and failed with 'database is locked'."""
    path = tmp_path / "l.db"
    Ledger(PureDP(1.0), path).close()
    proc = subprocess.Popen([sys.executable, "-c", WAITER, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=_env())
    holder = sqlite3.connect(str(path), isolation_level=None)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "ready"
        holder.execute("BEGIN IMMEDIATE")  # another process is charging
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(0.5)  # the waiter is inside BEGIN IMMEDIATE, waiting for the lock
        os.kill(proc.pid, signal.SIGINT)
        time.sleep(0.3)
        holder.execute("ROLLBACK")  # the other charge ends; the waiter gets the lock
        outcome = proc.stdout.readline().strip()
        assert outcome in ("interrupted", "charged")
        assert _write_lock_is_free(path, timeout=3.0), "the interrupted process holds the lock"
        shown = CliRunner().invoke(app, ["ledger", "show", str(path), "--json"])
        assert shown.exit_code == 0, shown.output
        labels = [e["label"] for e in json.loads(shown.stdout)["events"]]
        assert labels == ([] if outcome == "interrupted" else ["waiter"])
    finally:
        holder.close()
        proc.kill()
        proc.wait()


STORM_CHARGER = textwrap.dedent(
    """
    import sys, time
    from dpreg import BudgetExceededError, Ledger, PureDP
    led = Ledger(None, sys.argv[1])
    step = float(sys.argv[2])

    def shielded(fn):  # the harness itself must survive a SIGINT landing in its handlers
        while True:
            try:
                try:
                    return fn()
                except KeyboardInterrupt:
                    pass
            except KeyboardInterrupt:
                pass

    def charge_until_refused():
        while True:
            try:
                ev = led.spend(PureDP(step), "p" + sys.argv[3])
                print("ok", ev.id, flush=True)  # handed back only after the commit
            except KeyboardInterrupt:
                continue
            except BudgetExceededError:
                return
            except Exception as exc:  # must not happen; reported and checked by the test
                print("error", type(exc).__name__, exc, flush=True)

    def idle():  # stay alive with the connection open (an interactive session)
        while True:
            time.sleep(60)

    print("ready", flush=True)
    shielded(charge_until_refused)
    shielded(lambda: print("done", flush=True))
    shielded(idle)
    """
)


def sigint_storm(path: Path, *, n_procs: int, seconds: float, step: float, total: float,
                 seed: int) -> None:
    """Several processes charge one file while SIGINTs land at random times; then check that
    the committed charges fit the total, every returned charge is committed, no lock is held
    and `dpreg ledger show` works."""
    Ledger(PureDP(total), path).close()
    g = np.random.default_rng(seed)
    procs = [subprocess.Popen([sys.executable, "-c", STORM_CHARGER, str(path), str(step), str(i)],
                              stdout=subprocess.PIPE, text=True, env=_env())
             for i in range(n_procs)]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        # signals at random times until the budget is spent (or ``seconds`` have passed)
        end = time.monotonic() + seconds
        sent, next_check = 0, 0.0
        while time.monotonic() < end:
            time.sleep(float(g.exponential(0.002)))
            p = procs[int(g.integers(n_procs))]
            if p.poll() is None:
                os.kill(p.pid, signal.SIGINT)
                sent += 1
            if time.monotonic() > next_check:
                next_check = time.monotonic() + 0.1
                if _committed_epsilon(path) > Fraction(total) - Fraction(step):
                    end = min(end, time.monotonic() + 0.3)
        assert sent > 10
        time.sleep(0.2)
        assert all(p.poll() is None for p in procs), "a charging process died"
        assert _write_lock_is_free(path, timeout=5.0), "a process holds the lock after the storm"
        shown = CliRunner().invoke(app, ["ledger", "show", str(path), "--json"])
        assert shown.exit_code == 0, shown.output
        assert json.loads(shown.stdout)["total"]["epsilon"] == total
        assert _committed_epsilon(path) <= Fraction(total) * (1 + Fraction(1, 10**10))
        # the processes are still alive: a charge now must still be decided (no lock held)
        led = Ledger(None, path)
        try:
            led.spend(PureDP(step), "after the storm")
        except BudgetExceededError:
            pass
        led.close()
    finally:
        for p in procs:
            p.kill()
        returned, errors = [], []
        for p in procs:
            out, _ = p.communicate()
            returned += [int(v) for v in re.findall(r"ok (\d+)", out)]
            errors += [line for line in out.splitlines() if "error" in line]
    assert not errors, errors[:3]
    assert _committed_epsilon(path) <= Fraction(total) * (1 + Fraction(1, 10**10))
    conn = sqlite3.connect(str(path))
    ids = {int(r[0]) for r in conn.execute("SELECT id FROM events").fetchall()}
    conn.close()
    assert returned and set(returned) <= ids, "a charge whose result was returned is not in the file"


def test_sigint_storm_fast(tmp_path):
    sigint_storm(tmp_path / "storm.db", n_procs=3, seconds=15.0, step=0.002, total=1.0, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_sigint_storm_long(tmp_path, seed):
    sigint_storm(tmp_path / f"storm{seed}.db", n_procs=6, seconds=120.0, step=0.0005, total=1.0,
                 seed=seed)
