"""dpreg: differentially private linear regression.

Quick start::

    import dpreg
    res = dpreg.regress(df, "child_rank ~ parent_rank", method="theil-sen-exp", epsilon=1.0,
                        bounds={"child_rank": (0, 1), "parent_rank": (0, 1)})
    print(res.summary())

Stable names: the budget types (:class:`PureDP`, :class:`ApproxDP`, :class:`ZCDP`, :class:`GDP`),
:class:`Ledger`, :func:`regress`, :func:`release_sscp` / :class:`SSCPRelease`,
:func:`fit_by_group`, the estimators (:class:`NoisyStats`, :class:`DPTheilSen`,
:class:`DPGradientDescent`, :class:`AdaSSP`, :class:`BoostedAdaSSP`, :class:`TukeyEM`,
:class:`CovarianceOLS`, and :class:`AutoDPRegression`, which chooses among them privately) and
the exceptions.  Functional cores live in :mod:`dpreg.simple`
(one x) and :mod:`dpreg.multivariate`; primitives in :mod:`dpreg.mechanisms`.
"""

from dpreg._version import __version__
from dpreg.api import METHODS, regress
from dpreg.auto import AutoDPRegression
from dpreg.codebook import Codebook, load_codebook
from dpreg.covariance import SSCPRelease, release_sscp
from dpreg.exceptions import (
    BudgetExceededError,
    DPRegError,
    InvalidInputError,
    MechanismFailure,
    PrivacyLeakWarning,
    TiedSlopesWarning,
)
from dpreg.grouped import fit_by_group
from dpreg.inference import RegressionResults
from dpreg.linear_model import (
    AdaSSP,
    BoostedAdaSSP,
    CovarianceOLS,
    DPGradientDescent,
    DPTheilSen,
    NoisyStats,
    TukeyEM,
)
from dpreg.planner import Plan, plan
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
    get_default_ledger,
    set_default_ledger,
)

__all__ = [
    "__version__",
    "regress",
    "plan",
    "Plan",
    "METHODS",
    "release_sscp",
    "SSCPRelease",
    "fit_by_group",
    "Codebook",
    "load_codebook",
    "RegressionResults",
    "NoisyStats",
    "DPTheilSen",
    "DPGradientDescent",
    "AdaSSP",
    "BoostedAdaSSP",
    "TukeyEM",
    "CovarianceOLS",
    "AutoDPRegression",
    "DPRegError",
    "InvalidInputError",
    "BudgetExceededError",
    "MechanismFailure",
    "PrivacyLeakWarning",
    "TiedSlopesWarning",
    "Budget",
    "PureDP",
    "ApproxDP",
    "ZCDP",
    "GDP",
    "compose",
    "Ledger",
    "set_default_ledger",
    "get_default_ledger",
    "PrivacyEvent",
    "PrivacyStatement",
    "Neighbouring",
]
