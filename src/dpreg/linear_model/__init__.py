"""scikit-learn compatible DP regression estimators (thin layers over the functional cores).

One x (replace-one, n public): :class:`NoisyStats`, :class:`DPTheilSen`,
:class:`DPGradientDescent` (one feature).  Several x: :class:`AdaSSP`, :class:`BoostedAdaSSP`,
:class:`TukeyEM`, :class:`DPGradientDescent`, :class:`CovarianceOLS`.
"""

from dpreg.linear_model._auto import AutoDPRegression  # noqa: E402  (imports dpreg.auto)
from dpreg.linear_model._base import DPRegressorBase
from dpreg.linear_model._gd import DPGradientDescent
from dpreg.linear_model._multivariate import (
    AdaSSP,
    BoostedAdaSSP,
    ClippedDPGradientDescent,
    CovarianceOLS,
    TukeyEM,
)
from dpreg.linear_model._simple import DPTheilSen, NoisyStats, SimpleDPGradientDescent

__all__ = [
    "DPRegressorBase",
    "NoisyStats",
    "DPTheilSen",
    "DPGradientDescent",
    "SimpleDPGradientDescent",
    "ClippedDPGradientDescent",
    "AdaSSP",
    "BoostedAdaSSP",
    "TukeyEM",
    "CovarianceOLS",
    "AutoDPRegression",
]
