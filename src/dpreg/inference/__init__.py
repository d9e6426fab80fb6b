"""Regression results with statsmodels vocabulary and privacy metadata."""

from dpreg.inference.results import (
    NoUncertaintyError,
    RegressionResults,
    Summary,
    significance_code,
)

__all__ = ["RegressionResults", "Summary", "significance_code", "NoUncertaintyError"]
