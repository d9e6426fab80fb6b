"""Analytic privacy-noise covariance of released coefficients, from public inputs only.

Used by :func:`dpreg.plan` (the planner) and by ``auto``'s bounds-free check
(:mod:`dpreg.auto.checks`): for a method, ε (and δ), the public n and bounds, the covariance of
the coefficients' privacy noise on a public design (x uniform over its bounds), to first order
in the noise.  Nothing here reads data or draws noise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["adassp_cov", "covariance_cov", "noisy_stats_cov"]


def _first_order_cov(A: np.ndarray, beta: np.ndarray, sd_a: float, sd_b: float) -> np.ndarray:
    """Cov of A⁻¹(E_b − E_A β) for independent Gaussian noise: E_b entries sd ``sd_b``, E_A a
    symmetric matrix whose upper-triangle entries have sd ``sd_a``."""
    p = beta.size
    sw = (sd_b ** 2) * np.eye(p) + (sd_a ** 2) * (
        float(beta @ beta) * np.eye(p) + np.outer(beta, beta) - np.diag(beta ** 2))
    Ai = np.linalg.inv(A)
    return Ai @ sw @ Ai


def noisy_stats_cov(eps: float, n: int, xb: tuple[float, float], yb: tuple[float, float]
                 ) -> tuple[np.ndarray, float]:
    from dpreg.simple._noisy_stats import noisy_stats_sensitivities

    sens = noisy_stats_sensitivities(xb, yb, n)
    e3 = eps / 3.0
    wx, wy = xb[1] - xb[0], yb[1] - yb[0]
    nvar = n * wx * wx / 12.0 * (1.0 - 1.0 / n)  # uniform x over its bounds
    b_cov, b_var = sens["ncov"] / e3, sens["nvar"] / e3
    var_slope = 2.0 * b_cov ** 2 / nvar ** 2 * (1.0 + 3.0 * 2.0 * b_var ** 2 / nvar ** 2)
    xbar = (xb[0] + xb[1]) / 2.0
    e_abs = math.sqrt(var_slope * 2.0 / math.pi)
    b3 = (wy + e_abs * wx) / n / e3
    var_int = xbar ** 2 * var_slope + 2.0 * b3 ** 2
    cov = np.array([[var_int, -xbar * var_slope], [-xbar * var_slope, var_slope]])
    fail = 0.5 * math.exp(-nvar / b_var)
    return cov, fail


def _transform(scaling: Any) -> np.ndarray:
    """The linear part T of ``scaling.to_original`` (original = T θ + c)."""
    p = scaling.n_columns
    c0 = np.concatenate([[scaling.to_original(np.zeros(p))[0]], scaling.to_original(np.zeros(p))[1]])
    cols = []
    for j in range(p):
        e = np.zeros(p)
        e[j] = 1.0
        b0, bj = scaling.to_original(e)
        cols.append(np.concatenate([[b0], bj]) - c0)
    T = np.column_stack(cols)
    return T if scaling.fit_intercept else T[1:]


def adassp_cov(eps: float, dlt: float, n: int, xb: list[tuple[float, float]],
            yb: tuple[float, float], intercept: bool, options: Mapping[str, Any]) -> np.ndarray:
    from dpreg.mechanisms.gaussian import gaussian_sigma
    from dpreg.mechanisms.sensitivity import (
        gram_sensitivity,
        lambda_min_sensitivity,
        xty_sensitivity,
    )
    from dpreg.multivariate._common import PublicScaling
    from dpreg.multivariate.ssp import adassp_budget
    from dpreg.privacy import check_neighbouring

    rel = check_neighbouring(options.get("neighbouring", "add-remove"))
    fail = float(options.get("failure_prob", 0.05))
    sc = PublicScaling.from_bounds(xb, yb, fit_intercept=intercept)
    p = sc.n_columns
    bnd, cbd = sc.row_norm_bound, 1.0
    # the estimator's own split (the interval release, on by default, takes 10% of it)
    infer = options.get("inference", "auto") not in (False, "false")
    rule = str(options.get("lambda_rule", "wang"))
    plan = adassp_budget(eps, dlt, calibration=str(options.get("calibration", "gdp")),
                         inference=infer, lambda_rule=rule)
    part = dict(zip(plan.releases, plan.parts))
    sd_xx = gaussian_sigma(gram_sensitivity(bnd, rel), part["XtX"])
    sd_xy = gaussian_sigma(xty_sensitivity(bnd, cbd, rel), part["Xty"])
    # design: z = (1, u) with u uniform on [-1, 1]^d: E[zzᵀ] = diag(1, 1/3, ...)
    diag = np.full(p, 1.0 / 3.0)
    if intercept:
        diag[0] = 1.0
    A = n * np.diag(diag)
    if "lambda_min" in part:
        sd_lam = gaussian_sigma(lambda_min_sensitivity(bnd, rel), part["lambda_min"])
        lam_lower = max(0.0, float(A.diagonal().min())
                        - sd_lam * math.sqrt(math.log(6.0 / dlt)))
        lam = max(0.0, sd_xx * math.sqrt(p * math.log(2.0 * p * p / fail)) - lam_lower)
    else:  # the eigenvalue floor: a ridge only where the design's eigenvalues are below it
        from dpreg.multivariate.ssp import EIGEN_FLOOR_SCALE

        f = float(options.get("floor_scale", EIGEN_FLOOR_SCALE))
        lam = max(0.0, f * sd_xx * math.sqrt(p) - float(A.diagonal().min()))
    cov = _first_order_cov(A + lam * np.eye(p), np.zeros(p), sd_xx, sd_xy)
    T = _transform(sc)
    return T @ cov @ T.T


def covariance_cov(eps: float, dlt: float, n: int, xb: list[tuple[float, float]],
                yb: tuple[float, float], intercept: bool, options: Mapping[str, Any]
                ) -> np.ndarray:
    from dpreg.covariance.calibration import _sigma
    from dpreg.privacy import check_neighbouring

    rel = check_neighbouring(options.get("neighbouring", "add-remove"))
    cal = str(options.get("calibration", "analytic"))
    d = len(xb) + 1  # released columns: regressors and the response
    _, sigma = _sigma(d, eps, dlt, rel, cal)
    # scaled design d = (1, u, v), u, v uniform on [0, 1], v independent: A = n·E[zzᵀ]
    k = len(xb)
    M = np.full((k + 1, k + 1), 0.25)
    M[0, :] = M[:, 0] = 0.5
    M[0, 0] = 1.0
    for j in range(1, k + 1):
        M[j, j] = 1.0 / 3.0
    beta = np.zeros(k + 1)
    beta[0] = 0.5
    if not intercept:  # regression through the origin on the scaled columns
        M, beta = M[1:, 1:], np.zeros(k)
    cov = _first_order_cov(n * M, beta, sigma, sigma)
    wy = yb[1] - yb[0]
    wx = np.array([hi - lo for lo, hi in xb])
    lo = np.array([b[0] for b in xb])
    if intercept:  # original: b_j = wy·β_j/wx_j, b_0 = lo_y + wy·(β_0 − Σ β_j lo_j/wx_j)
        T = np.zeros((k + 1, k + 1))
        T[0, 0] = wy
        T[0, 1:] = -wy * lo / wx
        T[1:, 1:] = np.diag(wy / wx)
    else:
        T = np.diag(wy / wx)
    return T @ cov @ T.T
