"""scikit-learn compatible DP regression estimators (thin layers over the functional cores).

One x (replace-one, n public): :class:`NoisyStats`, :class:`DPTheilSen`,
:class:`DPGradientDescent` (one feature).  Several x: :class:`AdaSSP`, :class:`BoostedAdaSSP`,
:class:`TukeyEM`, :class:`DPGradientDescent`, :class:`CovarianceOLS`.

``AutoDPRegression`` (private choice among these) lives in :mod:`dpreg.auto`, a layer above this
package; ``dpreg.linear_model.AutoDPRegression`` is an alias resolved on first access
(:func:`__getattr__`), so no module of this package imports :mod:`dpreg.auto` when loaded
(docs/architecture.md).
"""

from typing import Any

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


def __getattr__(name: str) -> Any:
    """``AutoDPRegression``: the alias of :class:`dpreg.auto.AutoDPRegression` (PEP 562)."""
    if name == "AutoDPRegression":
        from dpreg.auto.estimator import AutoDPRegression

        return AutoDPRegression
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
