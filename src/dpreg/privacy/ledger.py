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

Durability
----------
With ``path``, events live in a SQLite database in WAL mode with ``synchronous=FULL``: a charge
is committed (and fsync'ed) before :meth:`Ledger.spend` returns, so a crash after a result was
handed back can never forget that charge.  Charges are serialised with ``BEGIN IMMEDIATE`` and
the ledger catches up on events written by other processes before deciding, so several
processes may share one ledger file.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from dpreg._version import __version__
from dpreg.exceptions import BudgetExceededError, InvalidInputError
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

__all__ = ["Ledger", "PrivacyEvent"]

_DEFAULT_SLACK = 1e-10


@dataclass(frozen=True)
class PrivacyEvent:
    """One recorded charge."""

    id: int
    budget: Budget
    label: str
    timestamp: float

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "budget": self.budget.as_dict(), "label": self.label,
                "timestamp": self.timestamp}


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
        file with a different total raises :class:`InvalidInputError`.
    slack:
        Relative tolerance for floating-point representation error (default 1e-10).

    ``spend`` is atomic, all-or-nothing and thread-safe.
    """

    def __init__(self, total: Budget | None, path: str | Path | None = None, *,
                 slack: float = _DEFAULT_SLACK) -> None:
        if not (isinstance(slack, (int, float)) and 0 <= slack < 1e-3):
            raise InvalidInputError(f"slack must be a number in [0, 1e-3); got {slack!r}")
        self._slack = float(slack)
        self._lock = threading.Lock()
        self._totals = _Totals()
        self._events: list[PrivacyEvent] = []
        self._last_id = 0
        self._path = None if path is None else Path(path)
        self._conn: sqlite3.Connection | None = None
        if self._path is None:
            if total is None:
                raise InvalidInputError("total must be a budget (PureDP, ApproxDP, ZCDP or GDP); "
                                        "got None (None is only allowed with an existing path)")
            self._total = as_budget(total, "total")
        else:
            self._total = self._open(total)

    # ------------------------------------------------------------------ persistence
    def _open(self, total: Budget | None) -> Budget:
        assert self._path is not None
        exists = self._path.exists() and self._path.stat().st_size > 0
        if not exists and total is None:
            raise InvalidInputError(
                f"total must be given when creating a new ledger file; {self._path} does not exist"
            )
        conn = sqlite3.connect(str(self._path), timeout=60.0, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, "
            "ts REAL NOT NULL, budget TEXT NOT NULL, label TEXT NOT NULL)"
        )
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT value FROM meta WHERE key='total'").fetchone()
            if row is None:
                if total is None:
                    raise InvalidInputError(f"{self._path} is not a dpreg ledger (no total stored)")
                stored = as_budget(total, "total")
                conn.execute("INSERT INTO meta VALUES ('total', ?)", (json.dumps(stored.as_dict()),))
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('created_by', ?)",
                             (f"dpreg {__version__}",))
            else:
                stored = Budget.from_dict(json.loads(row[0]))
                if total is not None and as_budget(total, "total") != stored:
                    raise InvalidInputError(
                        f"total must match the ledger stored in {self._path}: it holds {stored!r}; "
                        f"got {total!r}"
                    )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            conn.close()
            raise
        self._conn = conn
        self._total = stored
        self._catch_up()
        return stored

    def _catch_up(self) -> None:
        """Fold in events written (by this or another process) since the last read."""
        if self._conn is None:
            return
        rows = self._conn.execute(
            "SELECT id, ts, budget, label FROM events WHERE id > ? ORDER BY id", (self._last_id,)
        ).fetchall()
        for eid, ts, budget_json, label in rows:
            budget = Budget.from_dict(json.loads(budget_json))
            self._totals.add(budget)
            self._events.append(PrivacyEvent(int(eid), budget, label, float(ts)))
            self._last_id = int(eid)

    def close(self) -> None:
        """Close the database connection (in-memory ledgers: no-op)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ accounting
    @property
    def total(self) -> Budget:
        return self._total

    @property
    def path(self) -> Path | None:
        return self._path

    def _check_kind(self, budget: Budget) -> None:
        t = self._total
        ok = (
            isinstance(t, ApproxDP)
            or (isinstance(t, PureDP) and isinstance(budget, PureDP))
            or (isinstance(t, ZCDP) and isinstance(budget, (PureDP, ZCDP, GDP)))
            or (isinstance(t, GDP) and isinstance(budget, GDP))
        )
        if not ok:
            raise InvalidInputError(
                f"a ledger with total {t} cannot account a {type(budget).__name__} charge "
                "(pure-DP ledgers take PureDP; GDP ledgers take GDP; zCDP ledgers take "
                "PureDP/ZCDP/GDP; (ε,δ) ledgers take everything)"
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

    def _commit_event(self, budget: Budget, label: str) -> PrivacyEvent:
        ts = time.time()
        if self._conn is None:
            eid = self._last_id + 1
        else:
            cur = self._conn.execute(
                "INSERT INTO events (ts, budget, label) VALUES (?, ?, ?)",
                (ts, json.dumps(budget.as_dict()), label),
            )
            eid = int(cur.lastrowid or 0)
        self._last_id = eid
        return PrivacyEvent(eid, budget, label, ts)

    def spend(self, budget: Budget, label: str = "") -> PrivacyEvent:
        """Charge ``budget``; returns the recorded event.

        Raises :class:`BudgetExceededError` (recording nothing) if the composed loss of all
        charges would exceed the total, and :class:`InvalidInputError` for a budget type the
        ledger cannot account.  The charge is durable before this method returns.
        """
        budget = as_budget(budget)
        if not isinstance(label, str):
            raise InvalidInputError(f"label must be a string; got {label!r}")
        self._check_kind(budget)
        with self._lock:
            if self._conn is not None:
                self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._catch_up()
                trial = self._totals.copy()
                trial.add(budget)
                if not self._fits(trial):
                    spent = self._describe(self._totals)
                    raise BudgetExceededError(
                        f"charging {budget} ({label or 'unlabelled'}) would exceed the ledger total "
                        f"{self._total}; already spent {spent}. Nothing was charged."
                    )
                event = self._commit_event(budget, label)
                if self._conn is not None:
                    self._conn.execute("COMMIT")
            except BaseException:
                if self._conn is not None and self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            self._totals = trial
            self._events.append(event)
            return event

    def can_spend(self, budget: Budget) -> bool:
        """Whether :meth:`spend` would accept ``budget`` now (no side effects)."""
        budget = as_budget(budget)
        self._check_kind(budget)
        with self._lock:
            if self._conn is not None:
                self._catch_up()
            trial = self._totals.copy()
            trial.add(budget)
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
        with self._lock:
            if self._conn is not None:
                self._catch_up()
            return self._describe(self._totals)

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

    def events(self) -> list[PrivacyEvent]:
        """All recorded events, oldest first."""
        with self._lock:
            if self._conn is not None:
                self._catch_up()
            return list(self._events)

    def __repr__(self) -> str:
        where = f", path={str(self._path)!r}" if self._path else ""
        return f"Ledger(total={self._total!r}{where}, events={len(self._events)})"


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


def charge(ledger: Ledger | None, budget: Budget, label: str) -> None:
    """Charge ``budget`` on ``ledger`` if one is given (helper for estimators)."""
    if ledger is None:
        return
    if not isinstance(ledger, Ledger):
        raise InvalidInputError(f"ledger must be a dpreg.Ledger or None; got {ledger!r}")
    ledger.spend(budget, label)

