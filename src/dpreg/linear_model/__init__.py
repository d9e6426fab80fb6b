"""scikit-learn compatible DP regression estimators (thin layers over the functional cores).

One x (replace-one, n public): :class:`NoisyStats`, :class:`DPTheilSen`,
:class:`DPGradientDescent` (one feature).  Several x: :class:`AdaSSP`, :class:`BoostedAdaSSP`,
:class:`TukeyEM`, :class:`DPGradientDescent`, :class:`CovarianceOLS`.  One estimator per file
(``_noisy_stats.py``, ``_theil_sen.py``, ``_simple_gd.py``, ``_gd.py``, ``_adassp.py``,
``_boosted.py``, ``_tukey.py``, ``_clipped_gd.py``, ``_covariance_ols.py``); the shared
plumbing
(validation, public scaling, storing results) is in ``_base.py``.

``AutoDPRegression`` (private choice among these) lives in :mod:`dpreg.auto`, a layer above this
package (``dpreg.AutoDPRegression``; docs/architecture.md).

Every estimator's public ``fit`` is :meth:`DPRegressorBase.fit`: one public-call scope (the
seed and δ warnings, the release context of the ledger charges, the session's default ledger)
around the estimator's own ``_fit``.
"""

from dpreg.linear_model._adassp import AdaSSP
from dpreg.linear_model._base import DPRegressorBase, feature_names, resolve_bounds_X
from dpreg.linear_model._boosted import BoostedAdaSSP
from dpreg.linear_model._clipped_gd import ClippedDPGradientDescent
from dpreg.linear_model._covariance_ols import CovarianceOLS
from dpreg.linear_model._gd import DPGradientDescent
from dpreg.linear_model._noisy_stats import NoisyStats
from dpreg.linear_model._simple_gd import SimpleDPGradientDescent
from dpreg.linear_model._theil_sen import DPTheilSen
from dpreg.linear_model._tukey import TukeyEM

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
    "feature_names",
    "resolve_bounds_X",
]

