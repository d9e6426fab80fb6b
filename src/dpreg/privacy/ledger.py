"""A privacy ledger: records every release and refuses charges past a total budget.

Accounting across definitions
-----------------------------
A ledger has a *total* in one definition and accepts charges made in others when a sound
conversion exists:

=================  ===========================================================================
total              accepted charges and how they are accounted
=================  ===========================================================================
``PureDP(ε)``      ``PureDP`` only; ε adds.
``ZCDP(ρ)``        ``ZCDP`` (ρ adds), ``PureDP`` (ε ⇒ ε²/2-zCDP), ``GDP`` (μ ⇒ μ²/2-zCDP).
``GDP(μ)``         ``GDP`` only; μ² adds.
``ApproxDP(ε,δ)``  everything.  Pure and approximate charges compose linearly (Σε, Σδ).  zCDP and
                   GDP charges are pooled into one *concentrated* part that is converted to
                   (ε_c, δ_c) once, with δ_c = δ_total − Σδ of the approximate charges: GDP alone
                   via the exact δ(ε) curve, zCDP alone (or zCDP together with GDP folded in as
                   μ²/2) via :func:`~dpreg.privacy.budgets.zcdp_epsilon`.  The ledger also tries
                   folding the pure charges into the concentrated part (ε ⇒ ε²/2) and keeps the
                   smaller total; either way is a valid bound, so the minimum is too.
=================  ===========================================================================

A charge is accepted iff the composed loss of *all* charges so far plus the new one fits in
the total; otherwise :class:`~dpreg.exceptions.BudgetExceededError` is raised and nothing is
recorded.  Sums are exact (``Fraction`` arithmetic on the binary values of the floats); the only
tolerance is a relative ``slack`` (default 1e-10) that absorbs the representation error of
decimal inputs (ten charges of ``0.1`` sum to 1.0000000000000000555 in binary).

Neighbouring relations
----------------------
Budgets only add up when they are stated for the same pairs of datasets.  A ledger accounts
*one* relation (``neighbouring=``, default replace-one; stored in the file).  A charge stated
under add/remove on a replace-one ledger is converted by group privacy with k = 2
(:func:`~dpreg.privacy.relations.convert_relation`: ε ×2, δ ×(1 + e^ε), ρ ×4, μ ×2); a charge
stated under replace-one on an add/remove ledger is refused (n is public under replace-one, so no
add/remove guarantee follows).  Every event records the relation and budget the release stated
and the budget actually charged.

Durability and interrupts
-------------------------
With ``path``, events live in a SQLite database in WAL mode with ``synchronous=FULL``: a charge
is committed (and fsync'ed) before :meth:`Ledger.spend` returns, so a crash after a result was
handed back can never forget that charge.  Charges are serialised with ``BEGIN IMMEDIATE``;
inside that write transaction the ledger re-reads *every* committed event and decides on that
sum, never on state cached in the process, so several processes may share one file and a failed
or interrupted attempt cannot make a ledger object blind to other charges.  The transaction is
rolled back in a ``finally`` block, and a Ctrl-C (``KeyboardInterrupt``) that arrives while the
main thread is inside the transaction is deferred: raised before the COMMIT (nothing is
charged) or, if it arrives during the COMMIT, right after it (the charge stands).  An interrupt
never leaves the connection in a transaction or the file locked.  Opening an
existing ledger and reading it (``spent``, ``events``, ``dpreg ledger show``) take no write lock.
A file that cannot be used (a directory, corrupt, truncated, not an SQLite database, an SQLite
database that is not a dpreg ledger, read-only, locked past the timeout) raises
:class:`~dpreg.exceptions.LedgerFileError` naming the file; nothing is charged.

Integrity
---------
A ledger file carries a hash chain (an HMAC chain with a key): each event row stores
``c_i = F(b"dpreg-ledger-event\\0" || c_{i-1} || canonical(row_i))`` over its stored columns
(id, ts, budget, label, neighbouring, stated, info; :func:`dpreg._integrity.canonical_json`),
starting from ``c_0 = F(b"dpreg-ledger-genesis\\0" || canonical(integrity settings))``, and the
``meta`` table stores the head (event count and ``c_n``) and a seal ``F(b"dpreg-ledger-seal\\0"
|| canonical(total, relation, integrity settings, head))``.  ``F`` is HMAC-SHA256 under the
ledger's key when it has one (a 32-byte key file, by default ``PATH.key`` beside the ledger,
created with mode 0600 when the ledger is created; ``key_file=False``: none) and SHA-256
otherwise.  The new row, the head and the seal are written inside the charge's write
transaction, so a charge and its chain link commit together or not at all.  Opening a ledger
verifies the whole chain; every read and every charge verifies the rows it has not verified
before and the seal, and decides only on verified rows -- so an edited total, an edited,
inserted, deleted or reordered event or a truncated history is refused with
:class:`~dpreg.exceptions.LedgerIntegrityError` (``verify=False`` opens it read-only, marked
UNVERIFIED), and an edit never buys budget.  Without a key the chain detects accidental and
naive edits, not an edit whose chain was recomputed.  Files written by earlier dpreg versions
have no chain: they open and charge as before, with ``integrity.status == "no-record"``, until
:meth:`Ledger.seal` (CLI ``dpreg ledger seal``) adds one.  docs/threat-model.md says what this
protects against and what not (the key's holders, deleting the file, restoring an older copy).

Sharing
-------
``copy.copy``/``copy.deepcopy`` (and so scikit-learn's ``clone``) return the ledger itself:
every clone of an estimator charges the same ledger.  Pickling a file ledger sends its path,
total and relation; unpickling reopens the same file (the file is the shared state), so
process-parallel model selection (``n_jobs=2``) charges every fit to it.  An in-memory ledger
cannot be pickled (a copy in another process would not see this process's charges).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import hmac
import json
import math
import os
import secrets
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
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
    BudgetExceededError,
    InvalidInputError,
    LedgerFileError,
    LedgerIntegrityError,
)
from dpreg.privacy.budgets import (
    GDP,
    ZCDP,
    ApproxDP,
    Budget,
    PureDP,
    _round_down,
    _round_up,
    _sqrt_down,
    _sqrt_up,
    as_budget,
    gdp_epsilon,
    zcdp_epsilon,
)
from dpreg.privacy.context import (
    RELEASE_KEYS,
    current_release,
    get_default_ledger,
    record_charge,
    release_context,
    swap_default_ledger,
)
from dpreg.privacy.neighbours import Neighbouring, check_neighbouring
from dpreg.privacy.relations import convert_relation

__all__ = ["Ledger", "PrivacyEvent", "LedgerCharge", "charge", "NOT_PRIVATE", "BOTH_RELATIONS",
           "release_context", "current_release", "set_default_ledger", "get_default_ledger", "RELEASE_KEYS"]

_DEFAULT_SLACK = 1e-10
#: seconds a charge waits for another process's write lock before giving up
_LOCK_TIMEOUT = 60.0
#: the text every output of a non-private ledger or event carries
NOT_PRIVATE = "NOT PRIVATE (infinite budget)"
#: pass to :func:`charge` for a release whose guarantee holds under both relations (e.g. a
#: quantile by the exponential mechanism, a count of rows at the bounds)
BOTH_RELATIONS = (Neighbouring.REPLACE_ONE, Neighbouring.ADD_REMOVE)


@dataclass(frozen=True)
class PrivacyEvent:
    """One recorded charge.

    ``budget`` is what was charged to the ledger (in the ledger's relation); ``stated`` and
    ``neighbouring`` are the budget and relation the release stated (``stated`` equals
    ``budget`` unless the relation was converted).  ``info`` says what was released, from the
    entry point's :func:`release_context` (keys :data:`RELEASE_KEYS`: the budget as
    ``requested`` in the user's units, ``method``, ``formula`` or ``columns``, the ``data`` file
    name as the user gave it, the ``entry`` point) -- public facts only, never a data value;
    empty for events recorded before ledgers stored it.
    """

    id: int
    budget: Budget
    label: str
    timestamp: float
    neighbouring: Neighbouring = Neighbouring.REPLACE_ONE
    stated: Budget | None = field(default=None)
    info: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.stated is None:
            object.__setattr__(self, "stated", self.budget)

    @property
    def private(self) -> bool:
        """False for an infinite charge (a non-private release)."""
        return not (self.budget.is_infinite or as_budget(self.stated).is_infinite)

    @property
    def converted(self) -> bool:
        """True when the charge differs from the stated budget (relation conversion)."""
        return self.stated != self.budget

    def as_dict(self) -> dict[str, Any]:
        stated = as_budget(self.stated)
        out: dict[str, Any] = {
            "id": self.id, "budget": self.budget.as_dict(), "label": self.label,
            "timestamp": self.timestamp, "neighbouring": self.neighbouring.value,
            "stated_budget": stated.as_dict(), "converted": self.converted,
            "private": self.private, "time": _utc(self.timestamp), **dict(self.info),
        }
        if not self.private:
            out["note"] = NOT_PRIVATE
        return out

    @property
    def requested(self) -> Budget | None:
        """The budget as the user requested it (``None`` for events without that record)."""
        req = self.info.get("requested")
        if not isinstance(req, dict) or not isinstance(req.get("epsilon"), (int, float)):
            return None
        from dpreg.privacy.units import requested_budget

        return requested_budget(req["epsilon"], req.get("delta"))

    @property
    def released(self) -> str:
        """What was released, in words (method, formula/columns, data file), or the label."""
        parts = [str(self.info[k]) for k in ("method", "formula") if self.info.get(k)]
        cols = self.info.get("columns")
        if cols and not self.info.get("formula"):
            parts.append(", ".join(map(str, cols)) if isinstance(cols, list) else str(cols))
        if self.info.get("data"):
            parts.append(f"data {self.info['data']}")
        return "; ".join(parts) if parts else self.label

    def __str__(self) -> str:
        req = self.requested
        text = f"#{self.id} {_utc(self.timestamp)} "
        text += f"{req} as requested, charged {self.budget}" if req is not None and \
            req != self.budget else str(self.budget)
        if self.converted:
            text += f" (stated {self.stated} under {self.neighbouring} neighbours)"
        what = self.released
        if what:
            text += f" [{what}]"
        if not self.private:
            text += f" -- {NOT_PRIVATE}"
        return text



#: how a budget stated under add/remove neighbours is charged to a replace-one ledger
#: (:func:`~dpreg.privacy.relations.add_remove_to_replace_one`), in words
_CONVERSION_RULE = {"PureDP": "ε → 2ε", "ApproxDP": "(ε, δ) → (2ε, (1 + e^ε)·δ)",
                    "ZCDP": "ρ → 4ρ", "GDP": "μ → 2μ"}


@dataclass(frozen=True)
class LedgerCharge:
    """What one release cost on a ledger, in the ledger's units, and why -- the price shown
    where it is paid (a fit's summary and JSON, :attr:`PrivacyStatement.charges`).

    ``event`` is the recorded :class:`PrivacyEvent`; ``total`` and ``neighbouring`` are the
    ledger's; ``spent_before`` and ``spent_after`` are :meth:`Ledger.spent` around this charge
    (the ledger's composed loss, in its own definition).  Budget accounting only: public
    numbers, never a data value."""

    event: PrivacyEvent
    total: Budget
    neighbouring: Neighbouring
    spent_before: Budget
    spent_after: Budget

    @property
    def price(self) -> str:
        """The charge in the ledger's units, e.g. ``ε=1.875 of the ledger's (ε=3, δ=1e-05)
        (spent ε 0 → 1.875)``."""
        b, a, t = self.spent_before, self.spent_after, self.total
        if isinstance(t, GDP):
            mb, ma = float(b.mu), float(a.mu)  # type: ignore[attr-defined]
            return f"μ {mb:.4g} → {ma:.4g} of the ledger's {t} (μ composes in quadrature)"
        if isinstance(t, ZCDP):
            rb, ra = float(b.rho), float(a.rho)  # type: ignore[attr-defined]
            return f"ρ={ra - rb:.4g} of the ledger's {t} (spent ρ {rb:.4g} → {ra:.4g})"
        eb, ea = float(b.epsilon), float(a.epsilon)  # type: ignore[attr-defined]
        if math.isinf(ea):
            return f"ε=inf of the ledger's {t} ({NOT_PRIVATE})"
        return f"ε={ea - eb:.4g} of the ledger's {t} (spent ε {eb:.4g} → {ea:.4g})"

    @property
    def why(self) -> str:
        """Why the price is what it is: the budget as requested, the relation conversion and
        how charges of another kind compose on this ledger ("" when there is nothing to
        explain: a charge of the ledger's kind, relation and size as requested)."""
        ev = self.event
        stated = as_budget(ev.stated)
        parts = []
        req = ev.requested
        if req is not None and req != stated:
            parts.append(f"requested {req}, which the mechanism accounts as {stated}")
        if ev.converted:
            rule = _CONVERSION_RULE.get(type(stated).__name__, "")
            parts.append(f"stated under {ev.neighbouring} neighbours, charged to this "
                         f"{self.neighbouring}-neighbours ledger as {ev.budget}"
                         + (f" ({rule}: one replacement is a removal and an addition)"
                            if rule else ""))
        if isinstance(self.total, ApproxDP) and isinstance(ev.budget, (ZCDP, GDP)):
            parts.append(f"{type(ev.budget).__name__} charges are pooled and turned into (ε, δ) "
                         f"once at the ledger's δ={self.total.delta:g}, so this charge adds "
                         "its marginal ε (several such charges cost less than the sum of "
                         "their ε)")
        return "; ".join(parts)

    def __str__(self) -> str:
        why = self.why
        return self.price + (f" -- {why}" if why else "")

    def as_dict(self) -> dict[str, Any]:
        return {"event_id": self.event.id, "price": self.price, "why": self.why,
                "charged": self.event.budget.as_dict(),
                "stated": as_budget(self.event.stated).as_dict(),
                "release_neighbouring": self.event.neighbouring.value,
                "ledger_neighbouring": self.neighbouring.value,
                "converted": self.event.converted, "ledger_total": self.total.as_dict(),
                "spent_before": self.spent_before.as_dict(),
                "spent_after": self.spent_after.as_dict()}


class _Totals:
    """Exact running sums of the charges, by track."""

    __slots__ = ("eps_pure", "pure_rho", "eps_approx", "delta", "rho", "mu2", "count", "infinite")

    def __init__(self) -> None:
        self.eps_pure = Fraction(0)
        self.pure_rho = Fraction(0)  # Σ ε²/2 over pure charges (their zCDP view)
        self.eps_approx = Fraction(0)
        self.delta = Fraction(0)
        self.rho = Fraction(0)
        self.mu2 = Fraction(0)
        self.count = 0
        self.infinite = False

    def copy(self) -> _Totals:
        t = _Totals()
        for k in self.__slots__:
            setattr(t, k, getattr(self, k))
        return t

    def add(self, b: Budget) -> None:
        self.count += 1
        if b.is_infinite:
            self.infinite = True
            return
        if isinstance(b, PureDP):
            self.eps_pure += Fraction(b.epsilon)
            self.pure_rho += Fraction(b.epsilon) ** 2 / 2
        elif isinstance(b, ApproxDP):
            self.eps_approx += Fraction(b.epsilon)
            self.delta += Fraction(b.delta)
        elif isinstance(b, ZCDP):
            self.rho += Fraction(b.rho)
        elif isinstance(b, GDP):
            self.mu2 += Fraction(b.mu) ** 2


def _concentrated_epsilon(rho: Fraction, mu2: Fraction, delta: float) -> float:
    """ε of the pooled zCDP/GDP part at ``delta`` (inf if delta <= 0)."""
    if rho == 0 and mu2 == 0:
        return 0.0
    if delta <= 0:
        return math.inf
    if rho == 0:
        return gdp_epsilon(_sqrt_up(mu2), delta)
    return zcdp_epsilon(_round_up(rho + mu2 / 2), delta)


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


def _utc(ts: float) -> str:
    """A timestamp as ``YYYY-MM-DD HH:MM:SS UTC``."""
    try:
        return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return "?"


def set_default_ledger(ledger: Ledger | None) -> Ledger | None:
    """Charge ``ledger`` for every release of this session that is not given a ledger
    explicitly; ``None`` switches that off.  Returns the previous default.

    Honoured by the *outermost* public call only -- :func:`dpreg.regress`, every estimator's
    ``fit`` (``ledger=None``), :func:`dpreg.fit_by_group` (charged once per table) and
    :func:`dpreg.release_sscp` -- so a release is charged once, not again by the fits it makes
    internally.  Functional cores (``dpreg.simple``, ``dpreg.multivariate``, ``dpreg.preprocess``)
    and simulations (benchmarks, audits, :func:`dpreg.plan`) never charge it.  An explicit
    ``ledger=`` always wins.  The CLI's counterpart is the ``DPREG_LEDGER`` environment
    variable (a ledger file)."""
    if ledger is not None and not isinstance(ledger, Ledger):
        raise InvalidInputError(f"ledger must be a dpreg.Ledger or None; got {ledger!r}")
    return swap_default_ledger(ledger)


class Ledger:
    """Records privacy events against a total budget; refuses charges that would exceed it.

    Parameters
    ----------
    total:
        The total budget (:class:`PureDP`, :class:`ApproxDP`, :class:`ZCDP` or :class:`GDP`).
        May be ``None`` only when ``path`` names an existing ledger file, whose stored total is
        then used.
    path:
        Optional SQLite file.  Charges are durable before :meth:`spend` returns.  Reopening a
        file with a different total or relation raises :class:`InvalidInputError`; a file that
        cannot be used raises :class:`~dpreg.exceptions.LedgerFileError`.
    neighbouring:
        The relation the ledger accounts (``"replace-one"`` or ``"add-remove"``).  ``None``
        (default): replace-one for a new ledger, the stored relation when reopening a file (a
        file written before ledgers stored their relation is replace-one; :attr:`legacy`).
    slack:
        Relative tolerance for floating-point representation error (default 1e-10).
    key_file:
        The key of the file's integrity chain (module docstring, "Integrity").  ``None``
        (default): ``PATH.key`` beside the ledger -- created (32 random bytes, mode 0600) when
        the ledger is created, and required when it exists.  A path: that key file (created
        with a new ledger if missing).  ``False``: no key -- a new ledger gets an unkeyed
        SHA-256 chain, which detects accidental and naive edits but not an edit whose chain was
        recomputed.  Only for file ledgers.
    verify:
        ``True`` (default): a ledger file whose integrity check fails (altered, or keyed and
        opened without its key) raises :class:`~dpreg.exceptions.LedgerIntegrityError`.
        ``False``: it opens read-only to inspect it (:attr:`integrity` says UNVERIFIED and
        why); every charge is refused.

    Notes
    -----
    ``spend`` is atomic, all-or-nothing, thread-safe and interrupt-safe.
    """

    def __init__(self, total: Budget | None, path: str | Path | None = None, *,
                 neighbouring: Neighbouring | str | None = None,
                 slack: float = _DEFAULT_SLACK, key_file: str | Path | bool | None = None,
                 verify: bool = True) -> None:
        if not (isinstance(slack, (int, float)) and 0 <= slack < 1e-3):
            raise InvalidInputError(f"slack must be a number in [0, 1e-3); got {slack!r}")
        if not isinstance(verify, bool):
            raise InvalidInputError(f"verify must be True or False; got {verify!r}")
        if not (key_file is None or key_file is False or isinstance(key_file, (str, os.PathLike))):
            raise InvalidInputError(
                "key_file must be a key file path, None (PATH.key beside the ledger) or False "
                f"(no key); got {type(key_file).__name__}")
        self._slack = float(slack)
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
        rel = None if neighbouring is None else check_neighbouring(neighbouring)
        if self._path is None:
            if total is None:
                raise InvalidInputError("total must be a budget (PureDP, ApproxDP, ZCDP or GDP); "
                                        "got None (None is only allowed with an existing path)")
            if key_file is not None:
                raise InvalidInputError("key_file needs a ledger file (path=...): an in-memory "
                                        "ledger has no file to protect")
            self._total = as_budget(total, "total")
            self._relation = rel or Neighbouring.REPLACE_ONE
        else:
            self._total, self._relation = self._open(total, rel)

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

    def close(self) -> None:
        """Close the database connection (in-memory ledgers: no-op)."""
        with self._held():
            if self._conn is not None:
                self._rollback(self._conn)
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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

    @property
    def integrity(self) -> Integrity | None:
        """How the file's integrity check stands (:class:`~dpreg.privacy.Integrity`), after
        re-reading it: ``"verified-hmac"`` (keyed chain), ``"verified-digest"`` (unkeyed
        chain), ``"no-record"`` (a file written by an older dpreg; :meth:`seal` adds a chain)
        or ``"unverified"`` (altered, or keyed and opened without its key; ``detail`` says
        why).  ``digest`` is the chain's head.  ``None`` for an in-memory ledger."""
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

    def verify(self) -> Integrity:
        """Verify the whole file again, from its integrity settings and key to every event and
        the seal (opening a ledger does this; later reads and charges verify what they have not
        verified before).  Returns :attr:`integrity`; raises
        :class:`~dpreg.exceptions.LedgerIntegrityError` when the check fails, unless the ledger
        was opened with ``verify=False``."""
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

    def seal(self, *, reseal: bool = False) -> Integrity:
        """Write an integrity chain over the ledger's events as they are now, keyed with the
        ledger's key file (created if missing; ``key_file=False``: unkeyed).

        For a ledger written by an older dpreg (``integrity.status == "no-record"``).  A ledger
        that has a record is refused unless ``reseal=True``, which replaces it -- e.g. after
        its key was lost, or after an alteration that was inspected (``verify=False``) and
        accepted.  Sealing **accepts the current content as true**: inspect it first.  One
        write transaction (all or nothing).  Returns :attr:`integrity`."""
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

    # ------------------------------------------------------------------ sharing
    def __copy__(self) -> Ledger:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Ledger:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        if self._path is None:
            raise InvalidInputError(
                "an in-memory Ledger cannot be pickled: a copy in another process would not see "
                "the charges made here (and this one would not see its charges), so the total "
                "could be exceeded; share a file ledger instead, Ledger(total, path), which every "
                "process reopens (e.g. for n_jobs > 1 in scikit-learn model selection)")
        # the key file's path travels, never the key
        key_file: str | bool = False if self._key_path is None else str(self._key_path.resolve())
        return (_reopen, (str(self._path.resolve()), self._total.as_dict(), self._relation.value,
                          self._slack, key_file, self._verify))

    # ------------------------------------------------------------------ accounting
    @property
    def total(self) -> Budget:
        return self._total

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def neighbouring(self) -> Neighbouring:
        """The relation this ledger accounts; charges under the other one are converted (from
        add/remove) or refused (from replace-one)."""
        return self._relation

    @property
    def legacy(self) -> bool:
        """True for a file written before ledgers stored their relation (treated as
        replace-one)."""
        return self._legacy

    @property
    def private(self) -> bool:
        """False when the total or any recorded charge is infinite (NOT PRIVATE)."""
        with self._held():
            try:
                totals, _, _ = self._refresh()
            except LedgerFileError:
                totals, _, _ = self._state
        return not (self._total.is_infinite or totals.infinite)

    def _check_kind(self, budget: Budget) -> None:
        t = self._total
        ok = (
            isinstance(t, ApproxDP)
            or (isinstance(t, PureDP) and isinstance(budget, PureDP))
            or (isinstance(t, ZCDP) and isinstance(budget, (PureDP, ZCDP, GDP)))
            or (isinstance(t, GDP) and isinstance(budget, GDP))
        )
        if not ok:
            remedy = ""
            if isinstance(t, PureDP):
                remedy = (" This ledger was created without δ, so it accounts pure-ε releases "
                          "only: use a method that needs no δ (`dpreg methods`, "
                          "column 'needs --delta'), or create the ledger with a δ "
                          "(Ledger(ApproxDP(ε, δ), path); `dpreg ledger init PATH --epsilon E "
                          "--delta D`).")
            raise InvalidInputError(
                f"a ledger with total {t} cannot account a {type(budget).__name__} charge "
                "(pure-DP ledgers take PureDP; GDP ledgers take GDP; zCDP ledgers take "
                "PureDP/ZCDP/GDP; (ε,δ) ledgers take everything)." + remedy
                + " Nothing was charged."
            )

    def _loss(self, s: _Totals) -> tuple[Fraction | float, Fraction | float]:
        """(primary loss, δ used) of the totals, in the total's definition."""
        t = self._total
        if s.infinite:
            return math.inf, 0.0
        if isinstance(t, PureDP):
            return s.eps_pure, 0.0
        if isinstance(t, ZCDP):
            return s.rho + s.mu2 / 2 + s.pure_rho, 0.0
        if isinstance(t, GDP):
            return s.mu2, 0.0
        assert isinstance(t, ApproxDP)
        delta_left = float(Fraction(t.delta) - s.delta)
        linear = s.eps_pure + s.eps_approx
        conc = _concentrated_epsilon(s.rho, s.mu2, delta_left)
        best: Fraction | float = linear + Fraction(conc) if math.isfinite(conc) else math.inf
        if s.eps_pure > 0 and (s.rho > 0 or s.mu2 > 0):
            folded = _concentrated_epsilon(s.rho + s.pure_rho, s.mu2, delta_left)
            if math.isfinite(folded):
                alt = s.eps_approx + Fraction(folded)
                if alt < best:
                    best = alt
        uses_conc = s.rho > 0 or s.mu2 > 0
        return best, (float(t.delta) if uses_conc else float(s.delta))

    def _fits(self, s: _Totals) -> bool:
        t = self._total
        if t.is_infinite:
            return True
        loss, _ = self._loss(s)
        if isinstance(loss, float) and math.isinf(loss):
            return False
        if isinstance(t, PureDP):
            cap = Fraction(t.epsilon)
        elif isinstance(t, ZCDP):
            cap = Fraction(t.rho)
        elif isinstance(t, GDP):
            cap = Fraction(t.mu) ** 2
        else:
            assert isinstance(t, ApproxDP)
            if s.delta > Fraction(t.delta) * (1 + Fraction(self._slack)):
                return False
            cap = Fraction(t.epsilon)
        return Fraction(loss) <= cap * (1 + Fraction(self._slack))

    def _as_charge(self, budget: Any, neighbouring: Any) -> tuple[Budget, Neighbouring, Budget]:
        """(stated budget, stated relation, budget to charge) -- validated, nothing charged."""
        stated = as_budget(budget)
        rel = self._relation if neighbouring is None else check_neighbouring(neighbouring)
        try:
            charged = convert_relation(stated, rel, self._relation)
        except InvalidInputError as exc:
            raise InvalidInputError(f"this ledger accounts {self._relation} neighbours: {exc}. "
                                    "Nothing was charged.") from None
        self._check_kind(charged)
        return stated, rel, charged

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

    def _refuse(self, charged: Budget, stated: Budget, rel: Neighbouring, label: str,
                totals: _Totals) -> BudgetExceededError:
        what = str(charged) if charged == stated else (
            f"{charged} (stated {stated} under {rel} neighbours, converted to {self._relation})")
        return BudgetExceededError(
            f"charging {what} ({label or 'unlabelled'}) would exceed the ledger total "
            f"{self._total}; already spent {self._describe(totals)}. Nothing was charged.")

    def spend(self, budget: Budget, label: str = "", *,
              neighbouring: Neighbouring | str | None = None) -> PrivacyEvent:
        """Charge ``budget``; returns the recorded event.

        ``neighbouring`` is the relation the release's guarantee is stated for (``None``: the
        ledger's own).  A budget stated under add/remove on a replace-one ledger is converted
        (:func:`~dpreg.privacy.relations.convert_relation`); one stated under replace-one on an
        add/remove ledger is refused with :class:`InvalidInputError`.

        Raises :class:`BudgetExceededError` (recording nothing) if the composed loss of all
        charges would exceed the total, :class:`InvalidInputError` for a budget type or
        relation the ledger cannot account, and :class:`~dpreg.exceptions.LedgerFileError` when
        the file cannot be written -- or its subclass
        :class:`~dpreg.exceptions.LedgerIntegrityError` when the file fails its integrity check
        (altered, or opened with ``verify=False``).  The charge is durable before this method
        returns.
        """
        stated, rel, charged = self._as_charge(budget, neighbouring)
        if not isinstance(label, str):
            raise InvalidInputError(f"label must be a string; got {label!r}")
        with self._held(), _sigint_deferred() as interrupts:
            if self._path is not None:
                if self._conn is None:
                    raise InvalidInputError(f"ledger {self._path} is closed; reopen it with "
                                            f"Ledger(None, {str(self._path)!r}). Nothing was charged.")
                return self._spend_file(stated, rel, charged, label, interrupts)
            totals, events, _ = self._state
            trial = totals.copy()
            trial.add(charged)
            if not self._fits(trial):
                raise self._refuse(charged, stated, rel, label, totals)
            event, _ = self._commit_event(charged, label, rel, stated,
                                          events[-1].id if events else 0)
            # totals first: whatever happens between these two lines, nothing is under-counted
            self._state = (trial, events, None)
            events.append(event)
            self._receipt(event, totals, trial)
            return event

    def _spend_file(self, stated: Budget, rel: Neighbouring, charged: Budget, label: str,
                    interrupts: _Interrupts) -> PrivacyEvent:
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
            trial = totals.copy()
            trial.add(charged)
            if not self._fits(trial):
                raise self._refuse(charged, stated, rel, label, totals)
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
        self._receipt(event, totals, trial)
        return event

    def _receipt(self, event: PrivacyEvent, before: _Totals, after: _Totals) -> None:
        """Hand the charge to the public entry point collecting them (its price is shown in
        the fit's output; :func:`~dpreg.privacy.context.collect_charges`)."""
        record_charge(LedgerCharge(event, self._total, self._relation, self._describe(before),
                                   self._describe(after)))

    def _recorded(self, event: PrivacyEvent | None) -> bool:
        """Whether an event whose COMMIT raised is in the file after all."""
        if event is None or self._conn is None:
            return False
        try:
            return self._conn.execute("SELECT 1 FROM events WHERE id=?",
                                      (event.id,)).fetchone() is not None
        except sqlite3.Error:
            return True  # cannot tell: say it may be recorded (the safe statement)

    def check_accepts(self, budget: Budget, *,
                      neighbouring: Neighbouring | str | Sequence[Neighbouring | str] | None = None
                      ) -> None:
        """Raise :class:`InvalidInputError` (with the remedy) when this ledger cannot account
        ``budget`` at all -- a kind it does not take (an (ε, δ), zCDP or GDP charge on a
        pure-ε ledger) or a relation it cannot convert -- whatever is left; nothing is read or
        charged.  The public entry points call it before they read any data, so a fit the
        ledger could never pay for is refused before it is attempted.  ``neighbouring``: the
        relation(s) the release is stated for, as for :func:`charge` (``None``: the ledger's)."""
        if neighbouring is None or isinstance(neighbouring, (str, Neighbouring)):
            rel = neighbouring
        else:
            rels = [check_neighbouring(r) for r in neighbouring]
            rel = self._relation if self._relation in rels else (rels[0] if rels else None)
        self._as_charge(budget, rel)

    def can_spend(self, budget: Budget, *, neighbouring: Neighbouring | str | None = None) -> bool:
        """Whether :meth:`spend` would accept ``budget`` now (no side effects)."""
        _, _, charged = self._as_charge(budget, neighbouring)
        with self._held():
            totals, _, _ = self._refresh()
            trial = totals.copy()
            trial.add(charged)
            return self._fits(trial)

    def _describe(self, s: _Totals) -> Budget:
        t = self._total
        loss, delta_used = self._loss(s)
        if isinstance(t, PureDP):
            return PureDP(_as_float_up(loss))
        if isinstance(t, ZCDP):
            return ZCDP(_as_float_up(loss))
        if isinstance(t, GDP):
            infinite = isinstance(loss, float) and math.isinf(loss)
            return GDP(math.inf if infinite else _sqrt_up(Fraction(loss)))
        assert isinstance(t, ApproxDP)
        return ApproxDP(_as_float_up(loss), min(float(delta_used), t.delta))

    def spent(self) -> Budget:
        """Composed loss of all charges so far, in the total's definition (rounded up).

        For an (ε, δ) ledger holding zCDP/GDP charges, all δ not used by approximate charges is
        assigned to the concentrated part, so the reported δ equals the total δ.
        """
        with self._held():
            totals, _, _ = self._refresh()
            return self._describe(totals)

    def remaining(self) -> Budget:
        """What is left, in the total's definition (rounded down; 0 when exhausted).

        This is a conservative summary: :meth:`spend` always decides by recomputing the
        composition of all charges, which can accept a charge that this summary would not
        suggest (e.g. a zCDP charge on an (ε, δ) ledger whose δ is already assigned).
        """
        t = self._total
        s = self.spent()
        if isinstance(t, PureDP):
            return PureDP(_sub_down(t.epsilon, s.epsilon))  # type: ignore[attr-defined]
        if isinstance(t, ZCDP):
            return ZCDP(_sub_down(t.rho, s.rho))  # type: ignore[attr-defined]
        if isinstance(t, GDP):
            if t.is_infinite:
                return GDP(math.inf)
            left = Fraction(t.mu) ** 2 - Fraction(s.mu) ** 2  # type: ignore[attr-defined]
            return GDP(0.0 if left <= 0 else _sqrt_down(left))
        assert isinstance(t, ApproxDP) and isinstance(s, ApproxDP)
        return ApproxDP(_sub_down(t.epsilon, s.epsilon), _sub_down(t.delta, s.delta))

    def describe(self) -> str:
        """One line in the ledger's units: spent, total and what is left, e.g. ``spent
        (ε=1.66, δ=1e-05) of (ε=2, δ=1e-05); remaining ε=0.338``, plus -- when zCDP/GDP charges
        are pooled -- why they compose to less than the sum of their ε."""
        with self._held():
            totals, _, _ = self._refresh()
        spent, left = self._describe(totals), self.remaining()
        if isinstance(left, ApproxDP) and isinstance(self._total, ApproxDP):
            shown = f"ε={left.epsilon:.4g}"
            if totals.rho > 0 or totals.mu2 > 0:
                shown += (f" (the total δ={self._total.delta:g} is assigned to the pooled "
                          "zCDP/GDP charges)") if left.delta == 0 else f", δ={left.delta:g}"
            elif self._total.delta > 0:
                shown += f", δ={left.delta:g}"
        else:
            shown = str(left)
        text = f"spent {spent} of {self._total}; remaining {shown}"
        if (totals.rho > 0 or totals.mu2 > 0) and isinstance(self._total, ApproxDP):
            text += ("; zCDP/GDP charges are pooled and converted to (ε,δ) once, so several "
                     "of them compose to less than the sum of their ε")
        return text

    def events(self) -> list[PrivacyEvent]:
        """All recorded events, oldest first."""
        with self._held():
            _, events, _ = self._refresh()
            return list(events)

    def as_dict(self) -> dict[str, Any]:
        """Total, relation, spending, events and the integrity check (``integrity``: None in
        memory; ``private`` is False, with a ``note``, when the total or a charge is
        infinite)."""
        with self._held():
            totals, events, _ = self._refresh()
            spent = self._describe(totals)
            status = self._status()
        out: dict[str, Any] = {
            "path": None if self._path is None else str(self._path),
            "neighbouring": self._relation.value,
            "legacy_relation": self._legacy,
            "total": self._total.as_dict(), "spent": spent.as_dict(),
            "remaining": self.remaining().as_dict(),
            "private": not (self._total.is_infinite or totals.infinite),
            "events": [e.as_dict() for e in events],
            "integrity": None if status is None else status.as_dict(),
        }
        if not out["private"]:
            out["note"] = NOT_PRIVATE
        return out

    def __repr__(self) -> str:
        totals, events, _ = self._state
        where = f", path={str(self._path)!r}" if self._path else ""
        text = (f"Ledger(total={self._total!r}{where}, neighbouring={self._relation.value!r}"
                f"{' (legacy file)' if self._legacy else ''}, events={len(events)})")
        if self._total.is_infinite or totals.infinite:
            text += f" -- {NOT_PRIVATE}"
        if self._path is not None and self._broken is not None:
            text += " -- UNVERIFIED (failed its integrity check; read-only)"
        elif self._path is not None and self._loaded and self._record is None:
            text += " -- no integrity record"
        return text


def _reopen(path: str, total: dict[str, Any], neighbouring: str, slack: float,
            key_file: str | bool | None = None, verify: bool = True) -> Ledger:
    """Unpickle a file ledger: reopen the same file (it must still exist: a fresh file would
    start from zero and under-count) with the same key file."""
    if not Path(path).exists():
        raise LedgerFileError(f"ledger {path} no longer exists; a pickled ledger reopens its "
                              "file and never creates a new one. Nothing was charged.")
    return Ledger(Budget.from_dict(total), path, neighbouring=neighbouring, slack=slack,
                  key_file=key_file, verify=verify)


def _jsonable_info(info: dict[str, Any]) -> dict[str, Any]:
    """The release context as plain JSON (a budget as ``{"epsilon", "delta"}``)."""
    out: dict[str, Any] = {}
    for k in RELEASE_KEYS:
        v = info.get(k)
        if v is None:
            continue
        if isinstance(v, Budget):
            from dpreg.privacy.units import requested_dict

            v = requested_dict(v)
        elif isinstance(v, (list, tuple)):
            v = [str(c) for c in v]
        elif not isinstance(v, (dict, int, float)):
            v = str(v)
        out[k] = v
    return out


def _read_info(text: Any) -> dict[str, Any]:
    """An event's stored ``info`` (``{}`` when absent; an unreadable one is ignored, it carries
    no accounting)."""
    if not text:
        return {}
    try:
        info = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return {k: info[k] for k in RELEASE_KEYS if k in info} if isinstance(info, dict) else {}


def _as_float_up(x: Fraction | float) -> float:
    if isinstance(x, float):
        return x
    return _round_up(x)


def _sub_down(a: float, b: float) -> float:
    if math.isinf(a):
        return math.inf
    if math.isinf(b):
        return 0.0
    d = Fraction(a) - Fraction(b)
    return 0.0 if d <= 0 else _round_down(d)


def charge(ledger: Ledger | None, budget: Budget, label: str,
           neighbouring: Neighbouring | str | Sequence[Neighbouring | str]) -> PrivacyEvent | None:
    """Charge ``budget`` on ``ledger`` if one is given (helper for the release functions).

    ``neighbouring`` is the relation the release's guarantee is stated for (its
    :class:`~dpreg.privacy.PrivacyStatement`'s ``neighbouring``), or a sequence of relations
    when the guarantee holds under each of them (then the ledger's own is used, unconverted).
    """
    if ledger is None:
        return None
    if not isinstance(ledger, Ledger):
        raise InvalidInputError(f"ledger must be a dpreg.Ledger or None; got {ledger!r}")
    if neighbouring is None or isinstance(neighbouring, (str, Neighbouring)):
        rels = [check_neighbouring(neighbouring)]
    else:
        rels = [check_neighbouring(r) for r in neighbouring]
        if not rels:
            raise InvalidInputError("neighbouring must name at least one relation; got []")
    rel = ledger.neighbouring if ledger.neighbouring in rels else rels[0]
    return ledger.spend(budget, label, neighbouring=rel)
