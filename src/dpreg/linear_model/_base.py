"""Shared scikit-learn plumbing for the DP estimators.

Estimators are thin: ``__init__`` stores parameters verbatim (sklearn contract); ``fit``
validates everything (data, bounds, budget) *before* charging the optional ledger and calling
the functional core, then stores ``coef_``, ``intercept_``, ``results_`` (a
:class:`~dpreg.inference.RegressionResults`) and ``privacy_`` (a
:class:`~dpreg.privacy.PrivacyStatement`).  A ⊥ release raises
:class:`~dpreg.exceptions.MechanismFailure` from ``fit``; the budget stays charged because the
failure is itself a private output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from dpreg._validation import check_bounds, check_xy
from dpreg.exceptions import InvalidInputError, MechanismFailure
from dpreg.inference import RegressionResults

__all__ = ["DPRegressorBase", "resolve_bounds_X", "feature_names"]


def resolve_bounds_X(bounds_X: Any, n_features: int, name: str = "bounds_X") -> list[tuple[float, float]]:
    """Public per-feature bounds: one ``(lo, hi)`` pair for all features, or one per feature."""
    if bounds_X is None:
        raise InvalidInputError(
            f"{name} is required: give public (lo, hi) bounds for each feature (from domain "
            "knowledge or a codebook; dpreg never reads them off the private data), e.g. "
            f"{name}=[(0, 1)] * n_features or a single (lo, hi) pair for all features"
        )
    if (isinstance(bounds_X, (tuple, list, np.ndarray)) and len(bounds_X) == 2
            and all(np.isscalar(v) for v in bounds_X)):
        pair = check_bounds(bounds_X, name)
        return [pair] * n_features
    if not isinstance(bounds_X, Sequence) or isinstance(bounds_X, str):
        raise InvalidInputError(f"{name} must be a (lo, hi) pair or a list of them; got {bounds_X!r}")
    if len(bounds_X) != n_features:
        raise InvalidInputError(
            f"{name} must have one (lo, hi) pair per feature ({n_features}); got {len(bounds_X)}"
        )
    return [check_bounds(b, f"{name}[{j}]") for j, b in enumerate(bounds_X)]


def feature_names(X: Any, n_features: int) -> list[str]:
    cols = getattr(X, "columns", None)
    if cols is not None and len(cols) == n_features:
        return [str(c) for c in cols]
    return [f"x{j}" for j in range(n_features)]


class DPRegressorBase(RegressorMixin, BaseEstimator):
    """Common ``fit`` validation, ``predict`` and fitted attributes."""

    #: minimum number of rows the method needs
    _min_rows: int = 1

    def _validate_data_xy(
        self, X: Any, y: Any, *, min_rows: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        Xa, ya = check_xy(X, y, x_ndim=2, min_rows=min_rows or self._min_rows, x_name="X",
                          y_name="y")
        self.n_features_in_ = Xa.shape[1]
        cols = getattr(X, "columns", None)
        if cols is not None and all(isinstance(c, str) for c in cols):
            self.feature_names_in_ = np.asarray(list(cols), dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return Xa, ya

    def _store(self, results: RegressionResults) -> DPRegressorBase:
        self.results_ = results
        self.privacy_ = results.privacy
        if results.failed:
            raise MechanismFailure(results.reason)
        p = results.params
        self.intercept_ = float(p["intercept"]) if "intercept" in p.index else 0.0
        self.coef_ = p.drop("intercept").to_numpy() if "intercept" in p.index else p.to_numpy()
        return self

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "coef_")
        Xa = np.asarray(X, dtype=float) if not hasattr(X, "dtypes") else np.asarray(X, dtype=float)
        if Xa.ndim != 2:
            raise InvalidInputError(f"X must be 2-D (n_samples, n_features); got shape {Xa.shape}")
        if Xa.shape[1] != self.n_features_in_:
            raise InvalidInputError(
                f"X has {Xa.shape[1]} features, but {type(self).__name__} was fitted with "
                f"{self.n_features_in_}"
            )
        if not np.all(np.isfinite(Xa)):
            raise InvalidInputError("X must contain only finite numbers (no NaN or inf)")
        return Xa @ self.coef_ + self.intercept_
