"""Exceptions and warnings raised by dpreg.

Every error dpreg raises on purpose derives from :class:`DPRegError`, which is also a
:class:`ValueError` so that generic ``except ValueError`` handlers (and scikit-learn's
estimator checks) treat bad input the usual way.  Errors about inputs are raised *before* any
noise is drawn or any budget is charged.
"""

from __future__ import annotations

__all__ = [
    "DPRegError",
    "InvalidInputError",
    "BudgetExceededError",
    "LedgerFileError",
    "MechanismFailure",
    "PrivacyLeakWarning",
]


class DPRegError(ValueError):
    """Root of every exception raised by dpreg."""


class InvalidInputError(DPRegError):
    """Data or a parameter is outside its allowed range.

    The message names the parameter, the allowed range and the value received.  Raised before
    any randomness is used or any privacy budget is charged.
    """


class BudgetExceededError(DPRegError):
    """A charge would take a :class:`dpreg.Ledger` past its total; nothing was recorded."""


class LedgerFileError(DPRegError):
    """A ledger file cannot be used: it is a directory, corrupt, truncated, not an SQLite
    database, an SQLite database that is not a dpreg ledger, read-only, or locked past the
    timeout.  The message names the file; nothing was charged (the charge is rolled back)."""


class MechanismFailure(DPRegError):
    """A mechanism released the failure symbol ⊥ (e.g. a failed propose-test-release check).

    The failure is itself a differentially private output: the budget stays charged.  The
    ``reason`` attribute carries the mechanism's explanation.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PrivacyLeakWarning(UserWarning):
    """Something the user asked for weakens or removes the privacy guarantee.

    Examples: ``epsilon=inf`` (no privacy, used to compare with non-private estimators) or a
    seeded random generator on a release path (reproducible noise is predictable noise).
    """
