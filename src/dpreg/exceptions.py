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
    "UnknownNameError",
    "BudgetExceededError",
    "LedgerFileError",
    "LedgerIntegrityError",
    "ReleaseIntegrityError",
    "MechanismFailure",
    "InsufficientBudgetError",
    "MissingExtraError",
    "UnreliableReleaseWarning",
    "PrivacyLeakWarning",
    "WeakSeedWarning",
    "LargeDeltaWarning",
    "TiedSlopesWarning",
]


class DPRegError(ValueError):
    """Root of every exception raised by dpreg."""


class InvalidInputError(DPRegError):
    """Data or a parameter is outside its allowed range.

    The message names the parameter, the allowed range and the value received.  Raised before
    any randomness is used or any privacy budget is charged.
    """


class InvalidParameterError(InvalidInputError):
    """A parameter the caller chose (not the data) is invalid: a value outside its range, a
    choice that is not one of the allowed ones, a malformed number.

    The message names the parameter, the expected values and what was received (with a "did
    you mean" for choices).  The command line exits with code 2 (usage error) on it; errors
    about the data itself stay :class:`InvalidInputError` (exit code 1).
    """


class UnknownNameError(InvalidParameterError):
    """A name the caller typed is not one that exists: a method, a column of the data, a
    hyperparameter (option) of the method, a bounds or codebook key.

    The message lists the known names and a "did you mean" suggestion; it shows only the
    caller's own string and public names (method names, the data's column names), never a
    value of the data.  The command line exits with code 2 (usage error) on it.
    """


class BudgetExceededError(DPRegError):
    """A charge would take a :class:`dpreg.Ledger` past its total; nothing was recorded."""


class LedgerFileError(DPRegError):
    """A ledger file cannot be used: it is a directory, corrupt, truncated, not an SQLite
    database, an SQLite database that is not a dpreg ledger, read-only, or locked past the
    timeout.  The message names the file; nothing was charged (the charge is rolled back)."""


class LedgerIntegrityError(LedgerFileError):
    """A ledger file's integrity record does not match its content: an event was edited,
    inserted, removed or reordered, the history was truncated, or the stored total, relation or
    integrity settings were edited (docs/threat-model.md) -- or a keyed ledger was opened
    without its key.  Nothing was charged, and nothing can be charged to it: an edit never
    buys budget.  The message names the file and the first place the record breaks; it never
    contains the key."""


class ReleaseIntegrityError(InvalidInputError):
    """A release file was altered after it was written (its digest or MAC does not match its
    content, or its integrity record is missing or malformed), or it cannot be verified as
    asked (a key was given but the file is not signed with it; its digest is not the expected
    one).  Refused by default; ``verify=False`` (CLI ``--no-verify``) reads it anyway, marked
    UNVERIFIED.  The message contains no value of the file and never the key."""


class InsufficientBudgetError(DPRegError):
    """The budget left (after a DP preprocessing step such as bounds-free mode's DP bounds)
    cannot give a useful release; decided from DP outputs and public inputs only
    (:mod:`dpreg.auto.checks`).  What was spent so far stays charged; nothing else is."""


class MechanismFailure(DPRegError):
    """A mechanism released the failure symbol ⊥ (e.g. a failed propose-test-release check).

    The failure is itself a differentially private output: the budget stays charged.  The
    ``reason`` attribute carries the mechanism's explanation.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class MissingExtraError(DPRegError, ImportError):
    """An optional part of dpreg was used without the dependency it needs: the message names
    the extra that installs it, e.g. ``pip install 'dpreg[plots]'`` for
    :meth:`RegressionResults.plot <dpreg.inference.RegressionResults.plot>`.

    ``pip install dpreg`` installs the library (fitting, ``regress``, ``release_sscp``,
    ``plan``, the ledger, formulas, CSV/Parquet files) with numpy, scipy, pandas, pyarrow,
    formulaic and scikit-learn only; the command line (``[cli]``), plots (``[plots]``), the
    paper reproductions and their data sets (``[repro]``) and the privacy auditor's command
    (``[audit]``) are extras.  Also an :class:`ImportError`, so ``except ImportError`` handlers
    see it; raised before anything is computed or charged.
    """


class PrivacyLeakWarning(UserWarning):
    """Something the user asked for weakens or removes the privacy guarantee.

    Examples: ``epsilon=inf`` (no privacy, used to compare with non-private estimators) or a
    seeded random generator on a release path (reproducible noise is predictable noise).
    """


class UnreliableReleaseWarning(UserWarning):
    """A release was made although dpreg predicted it to be useless (``allow_unreliable=True``
    in bounds-free mode); its result carries ``reliable=False``."""


class WeakSeedWarning(PrivacyLeakWarning):
    """A seed that cannot carry 128 bits of entropy was given for a release.

    A seeded release is private only while the seed is secret: whoever knows or guesses it
    regenerates the noise.  Emitted once per public call for integer seeds below 2**96 (and
    equally weak SeedSequences or legacy RandomState objects); see
    :mod:`dpreg.privacy.notices`.
    """


class LargeDeltaWarning(PrivacyLeakWarning):
    """δ is too large to be meaningful: δ >= 1e-3, or δ >= 1/n where n is public.

    δ bounds the probability that the guarantee fails outright, so it should be much smaller
    than 1/n.  Emitted once per public call (``regress``, an estimator's ``fit``,
    ``release_sscp``, ``fit_by_group``).
    """


class TiedSlopesWarning(UserWarning):
    """Many pairwise slopes are exactly 0, so a Theil-Sen release says little about the slope.

    Theil-Sen estimates the median of the pairwise slopes (y_j − y_i)/(x_j − x_i).  When the
    response takes few values (a 0/1 outcome, a rating scale) most pairs share their y and
    their slope is exactly 0; the median pairwise slope is then 0 or close to it whatever the
    relation between x and y, and the released slope and interval pile up at 0.  Emitted

    * before anything is charged, when the response is declared to take few values (a
      codebook's numeric ``levels`` for the response, or ``y_levels=``): decided from public
      inputs only; and
    * after a release, when the released slope interval contains 0 and lies within twice its
      public widening θ of it (``ci_point_mass``): decided from the released values only
      (post-processing, costs nothing).

    The message never contains a value of the data.
    """
