"""scikit-learn compatible DP regression estimators (thin layers over the functional cores)."""

from dpreg.linear_model._base import DPRegressorBase

__all__ = ["DPRegressorBase"]
