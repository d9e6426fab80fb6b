"""Closed-form pieces of the plans (:func:`dpreg.plan`) shared by the method specs: the
first-order covariance of a solve with noisy normal equations and the linear map from
publicly scaled coefficients back to original units.  Public inputs only: nothing here reads
data or draws noise."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["first_order_cov", "scaling_transform"]


def first_order_cov(A: np.ndarray, beta: np.ndarray, sd_a: float, sd_b: float) -> np.ndarray:
    """Cov of A⁻¹(E_b − E_A β) for independent Gaussian noise: E_b entries sd ``sd_b``, E_A a
    symmetric matrix whose upper-triangle entries have sd ``sd_a``."""
    p = beta.size
    sw = (sd_b ** 2) * np.eye(p) + (sd_a ** 2) * (
        float(beta @ beta) * np.eye(p) + np.outer(beta, beta) - np.diag(beta ** 2))
    Ai = np.linalg.inv(A)
    return Ai @ sw @ Ai


def scaling_transform(scaling: Any) -> np.ndarray:
    """The linear part T of ``scaling.to_original`` (original = T θ + c)."""
    p = scaling.n_columns
    c0 = np.concatenate([[scaling.to_original(np.zeros(p))[0]],
                         scaling.to_original(np.zeros(p))[1]])
    cols = []
    for j in range(p):
        e = np.zeros(p)
        e[j] = 1.0
        b0, bj = scaling.to_original(e)
        cols.append(np.concatenate([[b0], bj]) - c0)
    T = np.column_stack(cols)
    return T if scaling.fit_intercept else T[1:]
