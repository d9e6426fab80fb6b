"""A privacy ledger: records every release and refuses charges past a total budget.

The public :class:`Ledger`; its accounting (what a charge costs and whether it fits) is in
:mod:`dpreg.privacy._accounting`, its SQLite store (file format, locking, integrity chain,
legacy files) in :mod:`dpreg.privacy._store`.

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

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dpreg._integrity import Integrity
from dpreg.exceptions import InvalidInputError, LedgerFileError
from dpreg.privacy._accounting import (
    BOTH_RELATIONS,
    NOT_PRIVATE,
    LedgerCharge,
    PrivacyEvent,
    _Totals,
    admit,
    as_charge,
    fits,
    remaining_budget,
    spent_budget,
)
from dpreg.privacy._store import _LedgerStore, _sigint_deferred
from dpreg.privacy._store import default_key_path as default_key_path
from dpreg.privacy.budgets import ApproxDP, Budget, as_budget
from dpreg.privacy.context import (
    RELEASE_KEYS,
    current_release,
    get_default_ledger,
    record_charge,
    release_context,
    swap_default_ledger,
)
from dpreg.privacy.neighbours import Neighbouring, check_neighbouring

__all__ = ["Ledger", "PrivacyEvent", "LedgerCharge", "charge", "NOT_PRIVATE", "BOTH_RELATIONS",
           "release_context", "current_release", "set_default_ledger", "get_default_ledger", "RELEASE_KEYS"]

_DEFAULT_SLACK = 1e-10


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

class Ledger(_LedgerStore):
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
        self._init_store(path, key_file, verify)
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


    def close(self) -> None:
        """Close the database connection (in-memory ledgers: no-op)."""
        self._close_file()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


    # ------------------------------------------------------------------ integrity
    @property
    def integrity(self) -> Integrity | None:
        """How the file's integrity check stands (:class:`~dpreg.privacy.Integrity`), after
        re-reading it: ``"verified-hmac"`` (keyed chain), ``"verified-digest"`` (unkeyed
        chain), ``"no-record"`` (a file written by an older dpreg; :meth:`seal` adds a chain)
        or ``"unverified"`` (altered, or keyed and opened without its key; ``detail`` says
        why).  ``digest`` is the chain's head.  ``None`` for an in-memory ledger."""
        return self._integrity_now()

    def verify(self) -> Integrity:
        """Verify the whole file again, from its integrity settings and key to every event and
        the seal (opening a ledger does this; later reads and charges verify what they have not
        verified before).  Returns :attr:`integrity`; raises
        :class:`~dpreg.exceptions.LedgerIntegrityError` when the check fails, unless the ledger
        was opened with ``verify=False``."""
        return self._verify_file()

    def seal(self, *, reseal: bool = False) -> Integrity:
        """Write an integrity chain over the ledger's events as they are now, keyed with the
        ledger's key file (created if missing; ``key_file=False``: unkeyed).

        For a ledger written by an older dpreg (``integrity.status == "no-record"``).  A ledger
        that has a record is refused unless ``reseal=True``, which replaces it -- e.g. after
        its key was lost, or after an alteration that was inspected (``verify=False``) and
        accepted.  Sealing **accepts the current content as true**: inspect it first.  One
        write transaction (all or nothing).  Returns :attr:`integrity`."""
        return self._seal_file(reseal)

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

    def _as_charge(self, budget: Any, neighbouring: Any) -> tuple[Budget, Neighbouring, Budget]:
        """(stated budget, stated relation, budget to charge) -- validated, nothing charged."""
        return as_charge(self._total, self._relation, budget, neighbouring)

    def _admit(self, charged: Budget, stated: Budget, rel: Neighbouring, label: str
               ) -> Callable[[_Totals], _Totals]:
        """The decision on a charge: the running sums with it added, or BudgetExceededError."""
        return lambda totals: admit(self._total, self._relation, self._slack, totals, charged,
                                    stated, rel, label)

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
                event, totals, trial = self._charge_file(
                    charged, label, rel, stated, interrupts, self._admit(charged, stated, rel, label))
                self._receipt(event, totals, trial)
                return event
            totals, events, _ = self._state
            trial = self._admit(charged, stated, rel, label)(totals)
            event, _ = self._commit_event(charged, label, rel, stated,
                                          events[-1].id if events else 0)
            # totals first: whatever happens between these two lines, nothing is under-counted
            self._state = (trial, events, None)
            events.append(event)
            self._receipt(event, totals, trial)
            return event

    def _receipt(self, event: PrivacyEvent, before: _Totals, after: _Totals) -> None:
        """Hand the charge to the public entry point collecting them (its price is shown in
        the fit's output; :func:`~dpreg.privacy.context.collect_charges`)."""
        record_charge(LedgerCharge(event, self._total, self._relation, self._describe(before),
                                   self._describe(after)))


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
            return fits(self._total, trial, self._slack)

    def _describe(self, s: _Totals) -> Budget:
        return spent_budget(self._total, s)

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
        return remaining_budget(self._total, self.spent())

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
