"""What the current call releases, and the session's default ledger: the state that the
public-entry decorators (:mod:`dpreg.privacy.notices`) and the ledger share.  It lives here, below
both, so that neither imports the other."""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["RELEASE_KEYS", "collect_charges", "current_release", "get_default_ledger",
           "record_charge", "release_context", "swap_default_ledger"]

#: the keys of :attr:`PrivacyEvent.info` (other keys of a release context are not recorded)
RELEASE_KEYS = ("entry", "method", "formula", "columns", "data", "requested")

_RELEASE: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "dpreg_release", default=None)


@contextlib.contextmanager
def release_context(**info: Any) -> Iterator[dict[str, Any]]:
    """Say what the enclosed call releases: every ledger charge inside records it in its
    event's ``info`` (:data:`RELEASE_KEYS`; ``None`` values are skipped).  Nested contexts add
    keys; an outer key wins (the CLI's data file name and the formula of ``regress`` stay when
    ``regress`` fits an estimator).  Public facts only: the caller must never put a data value
    here (column names, the formula, the method and the file name the user typed are public)."""
    outer = _RELEASE.get() or {}
    merged = {k: v for k, v in info.items() if k in RELEASE_KEYS and v is not None}
    merged.update(outer)
    token = _RELEASE.set(merged)
    try:
        yield merged
    finally:
        _RELEASE.reset(token)


def current_release() -> dict[str, Any]:
    """The release context of the current call (empty outside one)."""
    return dict(_RELEASE.get() or {})


_CHARGES: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "dpreg_charges", default=None)


@contextlib.contextmanager
def collect_charges() -> Iterator[list[Any]]:
    """Collect the ledger charges made inside (each a
    :class:`~dpreg.privacy.ledger.LedgerCharge`, appended by :meth:`Ledger.spend`), so that
    the public entry point can show the price of its release where it is paid.  The
    outermost scope owns the list; nested scopes share it."""
    outer = _CHARGES.get()
    if outer is not None:
        yield outer
        return
    got: list[Any] = []
    token = _CHARGES.set(got)
    try:
        yield got
    finally:
        _CHARGES.reset(token)


def record_charge(charge: Any) -> None:
    """Add a charge to the collecting scope (nothing outside one)."""
    got = _CHARGES.get()
    if got is not None:
        got.append(charge)


_DEFAULT_LOCK = threading.Lock()
_DEFAULT_LEDGER: list[Any] = [None]


def swap_default_ledger(ledger: Any) -> Any:
    """Make ``ledger`` (a checked :class:`~dpreg.Ledger` or ``None``) the session default and
    return the previous one; :func:`dpreg.privacy.ledger.set_default_ledger` is the public way."""
    with _DEFAULT_LOCK:
        previous = _DEFAULT_LEDGER[0]
        _DEFAULT_LEDGER[0] = ledger
    return previous


def get_default_ledger() -> Any:
    """The session's default ledger (:func:`set_default_ledger`), or ``None``."""
    return _DEFAULT_LEDGER[0]
