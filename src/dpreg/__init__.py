"""dpreg: differentially private linear regression.

Stable top-level names: the budget types (:class:`PureDP`, :class:`ApproxDP`, :class:`ZCDP`,
:class:`GDP`), :class:`Ledger`, :class:`Neighbouring`, and the exceptions.  Algorithms live in
:mod:`dpreg.simple` (one x), :mod:`dpreg.linear_model` (estimators) and :mod:`dpreg.mechanisms`.
"""

from dpreg._version import __version__
from dpreg.exceptions import (
    BudgetExceededError,
    DPRegError,
    InvalidInputError,
    MechanismFailure,
    PrivacyLeakWarning,
)
from dpreg.privacy import (
    GDP,
    ZCDP,
    ApproxDP,
    Budget,
    Ledger,
    Neighbouring,
    PrivacyEvent,
    PrivacyStatement,
    PureDP,
    compose,
)

__all__ = [
    "__version__",
    "DPRegError",
    "InvalidInputError",
    "BudgetExceededError",
    "MechanismFailure",
    "PrivacyLeakWarning",
    "Budget",
    "PureDP",
    "ApproxDP",
    "ZCDP",
    "GDP",
    "compose",
    "Ledger",
    "PrivacyEvent",
    "PrivacyStatement",
    "Neighbouring",
]
