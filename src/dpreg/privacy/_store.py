"""The SQLite store of a ledger: file format, locking, integrity chain and legacy files.

A file ledger's events live in an SQLite database (WAL, ``synchronous=FULL``; charges under
``BEGIN IMMEDIATE``), carry a hash or HMAC chain sealed in the ``meta`` table, and files
written by older dpreg versions (no relation, no ``info`` column, no chain) are read and
upgraded in place.  The module docstring of :mod:`dpreg.privacy.ledger` ("Durability and
interrupts", "Integrity") states the guarantees.  :class:`_LedgerStore` is the persistence
half of :class:`~dpreg.privacy.ledger.Ledger` (its base class): it reads, verifies and writes
events and keeps the running sums of what it read; whether a charge fits is decided by the
accounting (:func:`~dpreg.privacy._accounting.admit`), inside the store's write transaction.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from dpreg._integrity import (
    Integrity,
    canonical_json,
    create_key_file,
    key_id,
    read_key_file,
    same,
)
from dpreg._version import __version__
from dpreg.exceptions import (
    InvalidInputError,
    LedgerFileError,
    LedgerIntegrityError,
)
from dpreg.privacy._accounting import PrivacyEvent, _jsonable_info, _read_info, _Totals
from dpreg.privacy.budgets import Budget, as_budget
from dpreg.privacy.context import current_release
from dpreg.privacy.neighbours import Neighbouring, check_neighbouring

#: seconds a charge waits for another process's write lock before giving up
_LOCK_TIMEOUT = 60.0


class _Interrupts:
    """SIGINTs held by :func:`_sigint_deferred` (``pending`` > 0 once one arrived)."""

    __slots__ = ("pending",)

    def __init__(self) -> None:
        self.pending = 0

    def check(self) -> None:
        """Raise the held ``KeyboardInterrupt`` now (e.g. before a COMMIT, so that a Ctrl-C
        during the wait for the lock charges nothing)."""
        if self.pending:
            self.pending = 0
            raise KeyboardInterrupt


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[_Interrupts]:
    """Hold a Ctrl-C (SIGINT) that arrives inside the block; it is raised as
    ``KeyboardInterrupt`` by :meth:`_Interrupts.check` or when the block is done (committed or
    rolled back).

    Only the main thread receives SIGINT, and only while Python's default handler is installed
    is it a ``KeyboardInterrupt``; elsewhere (other threads, a custom handler) the block runs as
    is and the ``finally`` rollback of :meth:`Ledger.spend` is the guard.  Deferring costs no
    responsiveness: SQLite's wait for another process's lock does not return to Python until it
    ends, so a Ctrl-C during that wait was never acted on earlier.
    """
    held = _Interrupts()
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield held
        return

    def hold(signum: int, frame: Any) -> None:
        held.pending += 1

    try:
        previous = signal.signal(signal.SIGINT, hold)
    except ValueError:  # not the main interpreter
        yield held
        return
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, previous)
        held.check()

_EVENTS_DDL = ("CREATE TABLE IF NOT EXISTS {name} (id INTEGER PRIMARY KEY AUTOINCREMENT, "
               "ts REAL NOT NULL, budget TEXT NOT NULL, label TEXT NOT NULL, "
               "neighbouring TEXT, stated TEXT, info TEXT, chain TEXT NOT NULL)")
_META_DDL = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
_BASE_EVENT_COLUMNS = {"id", "ts", "budget", "label"}
_RELATION_COLUMNS = {"neighbouring", "stated"}
#: the column that says what was released (added to files written before it existed)
_INFO_COLUMN = "info"
#: the event columns covered by the integrity chain, in chain order
_CHAINED = ("id", "ts", "budget", "label", "neighbouring", "stated", "info")
#: the column holding each event's chain value (NOT NULL: an older dpreg cannot append an
#: event without one -- its INSERT fails and charges nothing)
_CHAIN_COLUMN = "chain"
#: integrity schemes: name -> keyed
_SCHEMES = {"hmac-sha256-chain-1": True, "sha256-chain-1": False}
_GENESIS = b"dpreg-ledger-genesis\x00"
_LINK = b"dpreg-ledger-event\x00"
_SEAL = b"dpreg-ledger-seal\x00"


def _f(key: bytes | None, *parts: bytes) -> bytes:
    """HMAC-SHA256 under ``key`` (SHA-256 without one) of the concatenated ``parts``."""
    data = b"".join(parts)
    if key is None:
        return hashlib.sha256(data).digest()
    return hmac.new(key, data, hashlib.sha256).digest()


def default_key_path(path: str | Path) -> Path:
    """Where a ledger's key file lives unless given: ``PATH.key`` beside the ledger file."""
    p = Path(path)
    return p.with_name(p.name + ".key")


def _chain_link(key: bytes | None, tip: bytes, row: tuple[Any, ...]) -> bytes | None:
    """The chain value of an event row (its :data:`_CHAINED` columns as stored) after ``tip``
    (None when the row has no canonical form: a value of a type dpreg never writes)."""
    try:
        body = canonical_json(list(row))
    except (TypeError, ValueError):
        return None
    return _f(key, _LINK, tip, body)


def _new_record(key: bytes | None) -> str:
    """The integrity settings of a new chain (stored as meta 'integrity'): the scheme, the
    key's id (never the key) and a random id that makes each ledger's chain its own."""
    return canonical_json({"scheme": "hmac-sha256-chain-1" if key is not None else
                           "sha256-chain-1", "key_id": None if key is None else key_id(key),
                           "ledger_id": secrets.token_hex(16)}).decode("ascii")


def _seal_value(key: bytes | None, meta: dict[str, str | None], record: str, head: str) -> str:
    """The seal over the stored total, relation (None for a legacy file), integrity settings
    and head, as stored."""
    body = canonical_json({"total": meta.get("total"), "neighbouring": meta.get("neighbouring"),
                           "integrity": record, "head": head})
    return _f(key, _SEAL, body).hex()


def _write_head(conn: sqlite3.Connection, key: bytes | None, meta: dict[str, str | None],
                record: str, n: int, tip: bytes) -> None:
    """Store the head (event count, last chain value) and the seal (inside the caller's write
    transaction)."""
    head = canonical_json({"events": n, "chain": tip.hex()}).decode("ascii")
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (head,))
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('seal', ?)",
                 (_seal_value(key, meta, record, head),))


class _LedgerStore:
    """The persistence of a :class:`~dpreg.privacy.ledger.Ledger` (its base class): the file,
    its connection and lock, the integrity record and the events read so far.  In memory
    (``path=None``) only the lock and the event list are used."""

    _total: Budget
    _relation: Neighbouring

    def _init_store(self, path: str | Path | None, key_file: str | Path | bool | None,
                    verify: bool) -> None:
        self._lock = threading.Lock()
        #: (totals, events, chain tip) of the committed charges last read (and verified);
        #: assigned in one step
        self._state: tuple[_Totals, list[PrivacyEvent], bytes | None] = (_Totals(), [], None)
        self._path = None if path is None else Path(path)
        self._conn: sqlite3.Connection | None = None
        self._legacy = False
        self._pid = os.getpid()
        self._verify = verify
        #: where the key file is (None: no key, key_file=False)
        self._key_path: Path | None = None
        if self._path is not None and key_file is not False:
            self._key_path = default_key_path(self._path) if key_file is None \
                else Path(key_file)  # type: ignore[arg-type]
        self._key: bytes | None = None
        #: the stored integrity settings (meta 'integrity'), None for a file without a record
        self._record: str | None = None
        self._loaded = False  # whether _record/_key/_genesis reflect the file
        self._genesis: bytes | None = None
        #: why the integrity check failed (verify=False: the ledger is then read-only)
        self._broken: str | None = None
        #: the meta table as last read (the seal is written from it inside a charge)
        self._meta: dict[str, str | None] = {}

    # ------------------------------------------------------------------ persistence
    def _file_error(self, exc: BaseException, doing: str, charged: str = "nothing was charged"
                    ) -> LedgerFileError:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        low = msg.lower()
        if "readonly" in low or "read-only" in low or isinstance(exc, PermissionError):
            why = "the file (or its folder) is read-only"
        elif "locked" in low or "busy" in low:
            why = f"another process held its write lock for more than {_LOCK_TIMEOUT:g} s"
        elif "not a database" in low or "malformed" in low or "corrupt" in low:
            why = "the file is corrupt, truncated or not an SQLite database"
        elif "unable to open" in low:
            why = "the file cannot be opened"
        else:
            why = "the database reported an error"
        return LedgerFileError(f"ledger {self._path}: cannot {doing}: {why} ({msg}); {charged}")

    def _not_a_ledger(self, why: str) -> LedgerFileError:
        return LedgerFileError(f"ledger {self._path} is not a dpreg ledger ({why}); nothing was "
                               "charged")

    def _open(self, total: Budget | None, rel: Neighbouring | None) -> tuple[Budget, Neighbouring]:
        assert self._path is not None
        path = self._path
        try:
            if path.is_dir():
                raise LedgerFileError(f"ledger {path} is a directory, not a ledger file; nothing "
                                      "was charged")
            exists = path.exists() and path.stat().st_size > 0
        except OSError as exc:
            raise self._file_error(exc, "open it") from None
        if not exists and total is None:
            raise InvalidInputError(
                f"total must be given when creating a new ledger file; {path} does not exist"
            )
        if total is not None:
            total = as_budget(total, "total")
        try:
            conn = sqlite3.connect(str(path), timeout=_LOCK_TIMEOUT, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._file_error(exc, "open it") from None
        try:
            tables = self._tables(conn)
            if not exists or not (tables - {"sqlite_sequence"}) or (
                    {"meta", "events"} <= tables and not self._has_total(conn)):
                foreign = tables - {"meta", "events", "sqlite_sequence"}
                if foreign:  # refused before anything (a key file) is created
                    raise self._not_a_ledger(f"it holds the tables {sorted(foreign)}")
                if total is None:
                    raise self._not_a_ledger("no total stored")
                self._create(conn, total, rel, self._key_for_new())
            stored, stored_rel = self._read_meta(conn, total, rel)
            conn.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as exc:
            conn.close()
            raise self._file_error(exc, "open it") from None
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._total, self._relation = stored, stored_rel
        try:
            self._refresh()  # loads the integrity record and verifies the whole chain
        except BaseException:
            self._conn = None
            conn.close()
            raise
        return stored, stored_rel

    def _key_for_new(self) -> bytes | None:
        """The key of a chain about to be written: the key file (created, mode 0600, if it
        does not exist yet; a process creating it at the same time gives the same key), or
        None with ``key_file=False``."""
        where = self._key_path
        if where is None:
            return None
        if not where.exists():
            try:
                create_key_file(where)
            except InvalidInputError as exc:
                if not where.exists():
                    raise LedgerFileError(f"ledger {self._path}: cannot create its key file: "
                                          f"{exc}; nothing was charged") from None
        try:
            return read_key_file(where)
        except InvalidInputError as exc:
            raise LedgerFileError(f"ledger {self._path}: {exc}; nothing was charged") from None

    @staticmethod
    def _tables(conn: sqlite3.Connection) -> set[str]:
        return {str(r[0]) for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table'").fetchall()}

    @staticmethod
    def _has_total(conn: sqlite3.Connection) -> bool:
        return conn.execute("SELECT 1 FROM meta WHERE key='total'").fetchone() is not None

    def _create(self, conn: sqlite3.Connection, total: Budget | None,
                rel: Neighbouring | None, key: bytes | None) -> None:
        """Write the schema, total, relation and integrity record of a new ledger (one write
        transaction; another process creating the same file at the same time finds it complete
        and compares)."""
        if total is None:
            raise self._not_a_ledger("no total stored")
        if not (self._tables(conn) - {"sqlite_sequence"}):
            conn.execute("PRAGMA journal_mode=WAL")  # only on an empty file: never convert others
        try:
            conn.execute("BEGIN IMMEDIATE")
            tables = self._tables(conn)
            foreign = tables - {"meta", "events", "sqlite_sequence"}
            if foreign:
                raise self._not_a_ledger(f"it holds the tables {sorted(foreign)}")
            conn.execute(_META_DDL)
            conn.execute(_EVENTS_DDL.format(name="events"))
            if not self._has_total(conn):
                if conn.execute("SELECT 1 FROM events LIMIT 1").fetchone() is not None:
                    raise self._not_a_ledger("events without a total")
                cols = self._event_columns(conn)
                for col in (*sorted(_RELATION_COLUMNS), _INFO_COLUMN, _CHAIN_COLUMN):
                    if col not in cols:  # an empty events table made by someone else
                        conn.execute(f"ALTER TABLE events ADD COLUMN {col} TEXT")
                total_text = json.dumps(total.as_dict())
                rel_text = (rel or Neighbouring.REPLACE_ONE).value
                conn.execute("INSERT INTO meta VALUES ('total', ?)", (total_text,))
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('neighbouring', ?)",
                             (rel_text,))
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('created_by', ?)",
                             (f"dpreg {__version__}",))
                record = _new_record(key)
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('integrity', ?)", (record,))
                _write_head(conn, key, {"total": total_text, "neighbouring": rel_text}, record,
                            0, _f(key, _GENESIS, record.encode("utf-8")))
            conn.execute("COMMIT")
        finally:
            self._rollback(conn)

    def _read_meta(self, conn: sqlite3.Connection, total: Budget | None,
                   rel: Neighbouring | None) -> tuple[Budget, Neighbouring]:
        tables = self._tables(conn)
        if not {"meta", "events"} <= tables:
            raise self._not_a_ledger("an SQLite database without dpreg's meta and events tables")
        cols = self._event_columns(conn)
        if not _BASE_EVENT_COLUMNS <= cols:
            raise self._not_a_ledger(f"its events table lacks {sorted(_BASE_EVENT_COLUMNS - cols)}")
        meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta").fetchall()}
        if "total" not in meta:
            raise self._not_a_ledger("no total stored")
        try:
            stored = Budget.from_dict(json.loads(meta["total"]))
        except (ValueError, TypeError, AttributeError):
            raise self._not_a_ledger("its stored total cannot be read") from None
        if total is not None and total != stored:
            raise InvalidInputError(
                f"total must match the ledger stored in {self._path}: it holds {stored!r}; "
                f"got {total!r}"
            )
        self._legacy = "neighbouring" not in meta
        if self._legacy:
            stored_rel = Neighbouring.REPLACE_ONE
        else:
            try:
                stored_rel = check_neighbouring(meta["neighbouring"])
            except InvalidInputError:
                raise self._not_a_ledger("its stored neighbouring relation cannot be read") from None
        if rel is not None and rel is not stored_rel:
            raise InvalidInputError(
                f"neighbouring must match the ledger stored in {self._path}: it accounts "
                f"{stored_rel} neighbours{' (legacy file: no relation stored)' if self._legacy else ''}"
                f"; got {rel.value!r}")
        return stored, stored_rel

    @staticmethod
    def _event_columns(conn: sqlite3.Connection) -> set[str]:
        return {str(r[1]) for r in conn.execute("PRAGMA table_info(events)").fetchall()}

    def _read_rows(self, after: int = 0
                   ) -> list[tuple[PrivacyEvent, tuple[Any, ...], str | None]]:
        """The committed events with id > ``after``: each parsed, with its chained columns (as
        stored) and its stored chain value (raises sqlite3.Error or LedgerFileError)."""
        conn = self._conn
        assert conn is not None
        cols = self._event_columns(conn)
        picked = ", ".join(c if c in cols or c in _BASE_EVENT_COLUMNS else "NULL"
                           for c in (*_CHAINED, _CHAIN_COLUMN))
        rows = conn.execute(f"SELECT {picked} FROM events WHERE id > ? ORDER BY id",
                            (after,)).fetchall()
        out = []
        for row in rows:
            eid, ts, budget_json, label, rel_text, stated_json, info_json, chain = row
            try:
                budget = Budget.from_dict(json.loads(budget_json))
                rel = self._relation if rel_text is None else check_neighbouring(rel_text)
                stated = budget if stated_json is None else Budget.from_dict(json.loads(stated_json))
                info = _read_info(info_json)
                event = PrivacyEvent(int(eid), budget, str(label), float(ts), rel, stated, info)
            except (ValueError, TypeError, AttributeError):
                raise LedgerFileError(f"ledger {self._path} is corrupt: event {eid!r} cannot be "
                                      "read; nothing was charged") from None
            out.append((event, tuple(row[:len(_CHAINED)]),
                        chain if isinstance(chain, str) else None))
        return out

    def _cache_holds(self, events: list[PrivacyEvent], tip: bytes | None) -> bool:
        """Whether ``events`` (read earlier) are exactly the committed rows up to the last one:
        same count, the same last row (and its chain value).  Ids grow in commit order (under
        one write lock), so the rows still to read are those with a larger id."""
        assert self._conn is not None
        last = events[-1]
        chained = self._record is not None and tip is not None and self._broken is None
        row = self._conn.execute(
            "SELECT count(*), (SELECT ts FROM events WHERE id = ?), "
            "(SELECT budget FROM events WHERE id = ?), "
            + (f"(SELECT {_CHAIN_COLUMN} FROM events WHERE id = ?) " if chained else "? ")
            + "FROM events WHERE id <= ?",
            (last.id, last.id, last.id, last.id)).fetchone()
        try:
            return (int(row[0]) == len(events) and row[1] == last.timestamp
                    and json.loads(row[2]) == last.budget.as_dict()
                    and (not chained or (isinstance(row[3], str) and tip is not None
                                         and same(row[3], tip.hex()))))
        except (TypeError, ValueError):
            return False

    def _fail(self, why: str, *, altered: bool = True) -> None:
        """An integrity check failed: raise :class:`LedgerIntegrityError` (``verify=True``) or
        remember why and make the ledger read-only (``verify=False``)."""
        text = ("was altered outside dpreg: " if altered else "cannot be verified: ") + why
        if self._verify:
            raise LedgerIntegrityError(
                f"ledger {self._path} {text}; nothing was charged (verify=False, CLI "
                "--no-verify, opens it read-only to inspect it)")
        if self._broken is None:
            self._broken = text

    def _read_meta_rows(self) -> dict[str, str | None]:
        assert self._conn is not None
        return {str(k): None if v is None else str(v)
                for k, v in self._conn.execute("SELECT key, value FROM meta").fetchall()}

    def _load_record(self, meta: dict[str, str | None]) -> None:
        """Take the stored integrity settings: the scheme, and the key of a keyed ledger (whose
        id must match); or note that the file has no record.  A key file for a ledger without
        a keyed record, or a chain without a record, is a record replaced or removed."""
        assert self._conn is not None
        self._loaded = True
        self._key = None
        self._genesis = None
        self._broken = None
        record = meta.get("integrity")
        self._record = record
        cols = self._event_columns(self._conn)
        where = self._key_path
        available = where is not None and (where.exists() or where.is_symlink())
        if record is None:
            if _CHAIN_COLUMN in cols:
                self._fail("its integrity record was removed (its events carry chain values, "
                           "its meta table no record)")
            elif available:
                self._fail(f"it has no integrity record, but a key file exists for it ({where}):"
                           " the record may have been removed; a ledger written by an older "
                           "dpreg is sealed with Ledger.seal() (CLI: dpreg ledger seal)",
                           altered=False)
            return
        try:
            settings = json.loads(record)
            kid = settings["key_id"]
            keyed = _SCHEMES[settings["scheme"]]
            if keyed != isinstance(kid, str) or not isinstance(settings.get("ledger_id"), str):
                raise ValueError
        except (ValueError, TypeError, KeyError):
            self._fail("its integrity record is malformed")
            return
        if _CHAIN_COLUMN not in cols:
            self._fail("its events carry no chain values")
            return
        if keyed:
            if not available:
                self._fail(f"it is keyed (key id {kid}) and its key file "
                           f"{where if where is not None else '(none: key_file=False)'} was not "
                           "found; give it with key_file= (CLI: --key or $DPREG_LEDGER_KEY)",
                           altered=False)
                return
            assert where is not None
            try:
                key = read_key_file(where)
            except InvalidInputError as exc:
                self._fail(f"it is keyed (key id {kid}), but {exc}", altered=False)
                return
            if key_id(key) != kid:
                self._fail(f"it is keyed with key id {kid}, but the key file {where} holds key "
                           f"id {key_id(key)}", altered=False)
                return
            self._key = key
        elif available:
            self._fail(f"its chain is unkeyed, but a key file exists for it ({where}): a keyed "
                       "record may have been replaced by an unkeyed one, which needs no key (a "
                       "ledger created without a key is opened with key_file=False)")
            return
        self._genesis = _f(self._key, _GENESIS, record.encode("utf-8"))

    def _check_seal(self, meta: dict[str, str | None], n: int, tip: bytes) -> None:
        """The sealed head must be the verified chain's (count and last value), and the seal
        must cover the stored total, relation, integrity settings and head."""
        head = meta.get("head")
        try:
            parsed = json.loads(head or "")
            count, chain = parsed["events"], parsed["chain"]
            if isinstance(count, bool) or not isinstance(count, int) \
                    or not isinstance(chain, str):
                raise ValueError
        except (ValueError, TypeError, KeyError):
            self._fail("its sealed head is missing or malformed")
            return
        if count != n:
            self._fail(f"it holds {n} events, but its seal records {count}: events were "
                       + ("removed (the history was truncated)" if n < count else
                          "added outside dpreg"))
            return
        if not same(chain, tip.hex()):
            self._fail("its last event does not match the sealed head")
            return
        assert self._record is not None
        want = _seal_value(self._key, meta, self._record, str(head))
        if not same(want, meta.get("seal") or ""):
            self._fail("its seal does not match: the stored total, neighbouring relation or "
                       "head was edited")

    def _sync(self) -> tuple[_Totals, list[PrivacyEvent], bytes | None]:
        """Bring the state up to what is committed in the file: check the rows read before
        against the table, read and verify every newer one (everything again if the check
        fails or the integrity settings changed), and check the seal.  The state only ever
        holds rows read from the table (verified, for a file with an integrity record) or
        committed by :meth:`spend`, so a failed or interrupted attempt never enters it."""
        meta = self._read_meta_rows()
        totals, events, tip = self._state
        if not self._loaded or meta.get("integrity") != self._record:
            self._load_record(meta)  # (re)load: verify every event again
            totals, events, tip = _Totals(), [], None
        if events and not self._cache_holds(events, tip):
            totals, events, tip = _Totals(), [], None
        if not events:
            tip = self._genesis
        new = self._read_rows(events[-1].id if events else 0)
        checking = self._record is not None and self._broken is None and tip is not None
        for event, row, chain in new:
            if not checking:
                break
            assert tip is not None
            link = _chain_link(self._key, tip, row)
            if link is None or chain is None or not same(link.hex(), chain):
                self._fail(f"event #{event.id} does not match the integrity chain (it was "
                           "edited, or an event before it was inserted, removed or reordered)")
                checking = False
            else:
                tip = link
        if new:
            totals = totals.copy()
            for event, _, _ in new:
                totals.add(event.budget)
            events = [*events, *(event for event, _, _ in new)]
        if checking:
            assert tip is not None
            self._check_seal(meta, len(events), tip)
        self._meta = meta
        state = (totals, events, tip if self._broken is None else None)
        self._state = state
        return state

    def _refresh(self) -> tuple[_Totals, list[PrivacyEvent], bytes | None]:
        """Re-read (and verify) the committed events of a file ledger (no-op in memory or when
        closed)."""
        conn = self._conn
        if conn is None:
            return self._state
        self._rollback(conn)  # a transaction left by an interrupted call
        try:
            # one read transaction: the meta table and the events are one snapshot (a charge
            # committed by another process between two reads would look like an alteration);
            # it takes no write lock
            conn.execute("BEGIN")
            return self._sync()
        except sqlite3.Error as exc:
            raise self._file_error(exc, "read it", "nothing was charged by this read") from None
        finally:
            self._rollback(conn)

    @staticmethod
    def _rollback(conn: sqlite3.Connection | None) -> None:
        """End any open transaction of ``conn`` (also when interrupted while doing so)."""
        pending: BaseException | None = None
        for _ in range(100):
            try:
                if conn is None or not conn.in_transaction:
                    break
                conn.execute("ROLLBACK")
            except KeyboardInterrupt as exc:  # finish the rollback first, then re-raise
                pending = exc
            except sqlite3.Error:
                break
        if pending is not None:
            raise pending

    def _held(self) -> threading.Lock:
        """The object's lock -- after a ``fork`` a fresh lock and a fresh connection to the same
        file first (SQLite connections must not cross a fork; another thread may have held the
        lock at the fork)."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._lock = threading.Lock()
            if self._conn is not None:  # the inherited connection is left alone, not closed
                try:
                    conn = sqlite3.connect(str(self._path), timeout=_LOCK_TIMEOUT,
                                           isolation_level=None, check_same_thread=False)
                    conn.execute("PRAGMA synchronous=FULL")
                except sqlite3.Error as exc:
                    self._conn = None
                    raise self._file_error(exc, "reopen it after a fork") from None
                self._conn = conn
        return self._lock

    def _close_file(self) -> None:
        with self._held():
            if self._conn is not None:
                self._rollback(self._conn)
                self._conn.close()
                self._conn = None

    # ------------------------------------------------------------------ integrity
    def _status(self) -> Integrity | None:
        if self._path is None:
            return None
        kid = None if self._key is None else key_id(self._key)
        if self._broken is not None:
            return Integrity("unverified", self._broken, key_id=kid)
        if self._record is None:
            return Integrity("no-record", "written by an older dpreg; seal it with "
                             f"Ledger.seal() (CLI: dpreg ledger seal {self._path})")
        _, events, tip = self._state
        head = None if tip is None else tip.hex()
        n = len(events)
        what = f"chain over {n} event{'' if n == 1 else 's'}, the total and the relation matches"
        if self._key is not None:
            return Integrity("verified-hmac", f"HMAC-SHA256 {what} (key id {kid})", digest=head,
                             key_id=kid)
        return Integrity("verified-digest", f"unkeyed SHA-256 {what} (detects accidental and "
                         "naive edits, not an edit whose chain was recomputed)", digest=head)

    def _integrity_now(self) -> Integrity | None:
        """:attr:`~dpreg.privacy.ledger.Ledger.integrity`."""
        if self._path is None:
            return None
        with self._held():
            try:
                self._refresh()
            except LedgerIntegrityError as exc:
                return Integrity("unverified", str(exc),
                                 key_id=None if self._key is None else key_id(self._key))
            except LedgerFileError:
                pass  # unreadable now: the last state read
            return self._status()

    def _verify_file(self) -> Integrity:
        """:meth:`~dpreg.privacy.ledger.Ledger.verify`."""
        with self._held():
            self._usable_file("verify it")
            self._loaded = False
            self._refresh()
            status = self._status()
            assert status is not None
            return status

    def _usable_file(self, doing: str) -> sqlite3.Connection:
        if self._path is None:
            raise InvalidInputError(f"cannot {doing}: an in-memory ledger has no file")
        if self._conn is None:
            raise InvalidInputError(f"ledger {self._path} is closed; reopen it with "
                                    f"Ledger(None, {str(self._path)!r})")
        return self._conn

    def _seal_file(self, reseal: bool) -> Integrity:
        """:meth:`~dpreg.privacy.ledger.Ledger.seal`."""
        with self._held(), _sigint_deferred() as interrupts:
            conn = self._usable_file("seal it")
            if self._record is not None and not reseal:
                status = self._status()
                raise InvalidInputError(
                    f"ledger {self._path} already has an integrity record ({status}); "
                    "reseal=True (CLI: --reseal) replaces it, accepting its current content")
            where = self._key_path
            created = where is not None and not where.exists()
            key = self._key_for_new()
            committed = False
            self._rollback(conn)
            try:
                conn.execute("BEGIN IMMEDIATE")
                meta = self._read_meta_rows()
                if meta.get("integrity") is not None and not reseal:
                    raise InvalidInputError(f"ledger {self._path} was sealed by another process "
                                            "meanwhile")
                rows = self._read_rows(0)
                seq_row = conn.execute(
                    "SELECT seq FROM sqlite_sequence WHERE name='events'").fetchone()
                record = _new_record(key)
                tip = _f(key, _GENESIS, record.encode("utf-8"))
                conn.execute("DROP TABLE IF EXISTS events_sealing")
                conn.execute(_EVENTS_DDL.format(name="events_sealing"))
                for event, row, _ in rows:
                    link = _chain_link(key, tip, row)
                    if link is None:
                        raise LedgerFileError(f"ledger {self._path} is corrupt: event "
                                              f"{event.id} cannot be sealed; nothing was changed")
                    conn.execute(f"INSERT INTO events_sealing ({', '.join(_CHAINED)}, "
                                 f"{_CHAIN_COLUMN}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                 (*row, link.hex()))
                    tip = link
                conn.execute("DROP TABLE events")
                conn.execute("ALTER TABLE events_sealing RENAME TO events")
                if seq_row is not None and seq_row[0] is not None:
                    conn.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE "
                                 "name = 'events'", (int(seq_row[0]),))
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('integrity', ?)", (record,))
                _write_head(conn, key, meta, record, len(rows), tip)
                interrupts.check()
                conn.execute("COMMIT")
                committed = True
            except sqlite3.Error as exc:
                self._rollback(conn)
                raise self._file_error(exc, "seal it", "nothing was changed") from None
            finally:
                self._rollback(conn)
                if created and not committed and where is not None:
                    # a key file made for a seal that did not happen would mark the unsealed
                    # ledger as stripped of its record
                    with contextlib.suppress(OSError):
                        where.unlink()
            self._loaded = False
            self._state = (_Totals(), [], None)
            self._refresh()
            status = self._status()
            assert status is not None
            return status

    # ------------------------------------------------------------------ writing events
    def _commit_event(self, budget: Budget, label: str, neighbouring: Neighbouring,
                      stated: Budget, last_id: int, tip: bytes | None = None,
                      count: int = 0) -> tuple[PrivacyEvent, bytes | None]:
        """Record the event: an INSERT inside the open write transaction (file ledgers; the
        COMMIT follows in :meth:`spend`), or just the next id (in memory).  With an integrity
        record, the row carries its chain value after ``tip`` and the head and seal (over
        ``count + 1`` events) are rewritten in the same transaction.  Returns the event and
        the new chain tip."""
        ts = time.time()
        info = _jsonable_info(current_release())
        new_tip = None
        if self._conn is None:
            eid = last_id + 1
        elif self._record is None:  # a file without an integrity record (older dpreg)
            cur = self._conn.execute(
                "INSERT INTO events (ts, budget, label, neighbouring, stated, info) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (ts, json.dumps(budget.as_dict()), label, neighbouring.value,
                 json.dumps(stated.as_dict()), json.dumps(info)),
            )
            eid = int(cur.lastrowid or 0)
        else:
            assert tip is not None
            eid = self._next_id()
            row = (eid, ts, json.dumps(budget.as_dict()), label, neighbouring.value,
                   json.dumps(stated.as_dict()), json.dumps(info))
            new_tip = _chain_link(self._key, tip, row)
            assert new_tip is not None
            self._conn.execute(
                f"INSERT INTO events ({', '.join(_CHAINED)}, {_CHAIN_COLUMN}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (*row, new_tip.hex()))
            _write_head(self._conn, self._key, self._meta, self._record, count + 1, new_tip)
        return PrivacyEvent(eid, budget, label, ts, neighbouring, stated, info), new_tip

    def _next_id(self) -> int:
        """The id AUTOINCREMENT would give the next event (inside the write transaction)."""
        assert self._conn is not None
        top = self._conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0]
        seq = self._conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'"
                                 ).fetchone()
        return max(int(top), int(seq[0]) if seq is not None and seq[0] is not None else 0) + 1

    def _charge_file(self, charged: Budget, label: str, rel: Neighbouring, stated: Budget,
                     interrupts: _Interrupts, admit: Callable[[_Totals], _Totals]
                     ) -> tuple[PrivacyEvent, _Totals, _Totals]:
        """Record a charge in the file: in one write transaction, re-read and verify every
        committed event, let ``admit`` decide on their running sums (it returns them with the
        charge added, or raises), write the event (with its chain link, head and seal) and
        commit.  Returns the event and the running sums before and after it."""
        conn = self._conn
        assert conn is not None
        self._rollback(conn)  # a transaction left by an interrupted call
        event: PrivacyEvent | None = None
        commit_sent = False
        try:
            conn.execute("BEGIN IMMEDIATE")
            # decide on what is committed in the file now, never on what this object saw
            # (verified: a file that fails its integrity check is refused here)
            totals, events, tip = self._sync()
            if self._broken is not None:
                raise LedgerIntegrityError(
                    f"ledger {self._path} {self._broken}; it was opened read-only "
                    "(verify=False): nothing was charged")
            trial = admit(totals)
            if self._record is None:  # a file written by an older dpreg: add what it lacks
                cols = self._event_columns(conn)
                if not _RELATION_COLUMNS <= cols:  # a legacy file
                    conn.execute("ALTER TABLE events ADD COLUMN neighbouring TEXT")
                    conn.execute("ALTER TABLE events ADD COLUMN stated TEXT")
                if _INFO_COLUMN not in cols:  # written before events said what was released
                    conn.execute(f"ALTER TABLE events ADD COLUMN {_INFO_COLUMN} TEXT")
            event, new_tip = self._commit_event(charged, label, rel, stated, 0, tip, len(events))
            interrupts.check()  # a Ctrl-C so far (e.g. during the lock wait): charge nothing
            commit_sent = True
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback(conn)
            outcome = "nothing was charged"
            if commit_sent and self._recorded(event):
                outcome = "the charge WAS recorded"
            raise self._file_error(exc, "record the charge", outcome) from None
        finally:
            self._rollback(conn)
        assert event is not None
        self._state = (trial, [*events, event], new_tip)
        return event, totals, trial

    def _recorded(self, event: PrivacyEvent | None) -> bool:
        """Whether an event whose COMMIT raised is in the file after all."""
        if event is None or self._conn is None:
            return False
        try:
            return self._conn.execute("SELECT 1 FROM events WHERE id=?",
                                      (event.id,)).fetchone() is not None
        except sqlite3.Error:
            return True  # cannot tell: say it may be recorded (the safe statement)
