"""Shared pieces of the SSCP release: the public column bounds, the map back to original units,
PSD repair, and the calibration of the Gaussian noise (sensitivity of the scaled SSCP matrix ->
σ; the per-entry noise variance in original units).

Sensitivity: a row of D' = [1, x'] (x' the column clamped to its PUBLIC bounds and scaled to
[0, 1]) has squared norm <= d + 1, so the L2 sensitivity of the upper triangle of D'ᵀD' is d + 1
under add/remove and √2·(d + 1) under replace-one
(:func:`dpreg.mechanisms.sensitivity.sscp_sensitivity`); σ is the analytic (ε, δ) calibration
(default) or the classical Δ√(2 ln(1.25/δ))/ε (ε < 1) of :func:`dpreg.mechanisms.gaussian_sigma`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from dpreg._bounds import columns_bounds
from dpreg.mechanisms.gaussian import gaussian_sigma
from dpreg.mechanisms.sensitivity import sscp_sensitivity
from dpreg.privacy.budgets import ApproxDP
from dpreg.privacy.neighbours import Neighbouring

__all__ = ["INTERCEPT", "MECHANISM", "SOURCE", "scaling_matrix", "upscale", "repair_psd", "resolve_bounds",
           "analyze_gauss_sigma"]

MECHANISM = "Analyze Gauss SSCP"
INTERCEPT = "intercept"
SOURCE = ("Bain, D'Orazio, Sheffet, Vadhan 2014 (Analyze Gauss SSCP release, Alg. 1-2); "
          "Dwork, Talwar, Thakurta, Zhang 2014")


def resolve_bounds(bounds: Any, columns: Sequence[str], name: str = "bounds"
                   ) -> list[tuple[float, float]]:
    """The public (lo, hi) of each released column: :func:`dpreg._bounds.columns_bounds` (the
    one conversion of a ``bounds`` mapping; a list aligned with ``columns`` is accepted)."""
    return columns_bounds(bounds, columns, name=name)


def scaling_matrix(bounds: Sequence[tuple[float, float]]) -> np.ndarray:
    """T with D = D'·T: T₀₀ = 1, T₀ᵢ = lo_i, T_ii = hi_i − lo_i (intercept column first), so the
    original-unit SSCP matrix is TᵀĈT (:func:`upscale`)."""
    p = len(bounds) + 1
    T = np.zeros((p, p))
    T[0, 0] = 1.0
    for i, (lo, hi) in enumerate(bounds, start=1):
        T[0, i] = lo
        T[i, i] = hi - lo
    return T


def upscale(scaled: np.ndarray, bounds: Sequence[tuple[float, float]]) -> np.ndarray:
    """TᵀĈT: from the [0, 1]-scaled SSCP (with intercept first) to original units."""
    T = scaling_matrix(bounds)
    out = T.T @ scaled @ T
    return (out + out.T) / 2.0


def repair_psd(M: np.ndarray, tol: float = 1e-10) -> tuple[np.ndarray | None, int]:
    """PSD repair after Xi et al. (Bain et al. §3.2): (repaired matrix, #eigenvalues replaced).

    Eigenvalues <= tol·max|λ| are replaced by the smallest eigenvalue above that threshold, so
    the result is positive definite.  Returns ``(None, p)`` when no eigenvalue is above it (⊥).
    """
    sym = (M + M.T) / 2.0
    vals, vecs = np.linalg.eigh(sym)
    scale = float(np.max(np.abs(vals))) if vals.size else 0.0
    thr = tol * scale
    good = vals > thr
    if scale == 0.0 or not np.any(good):
        return None, int(vals.size)
    bad = int(np.count_nonzero(~good))
    if bad == 0:
        return sym, 0
    fixed = np.where(good, vals, float(np.min(vals[good])))
    out = (vecs * fixed) @ vecs.T
    return (out + out.T) / 2.0, bad


def _noise_var_factors(bounds: Sequence[tuple[float, float]]) -> np.ndarray:
    """Var[(TᵀET)_ij]/σ² for E symmetric with i.i.d. N(0, σ²) upper triangle.

    With a_i² = lo_i² + r_i² (a_0 = 1, lo_0 = 0, r_0 = 1): a_i²·a_j² off the diagonal and
    a_i⁴ + 2·lo_i²·r_i² on it (the two cross terms share one noise draw there).
    """
    lo = np.array([0.0] + [b[0] for b in bounds])
    r = np.array([1.0] + [b[1] - b[0] for b in bounds])
    a2 = lo**2 + r**2
    out = np.outer(a2, a2)
    np.fill_diagonal(out, a2**2 + 2.0 * lo**2 * r**2)
    return out


def analyze_gauss_sigma(d: int, epsilon: float, delta: float, neighbouring: Neighbouring,
                        calibration: str) -> tuple[float, float]:
    """(L2 sensitivity, Gaussian σ) of the Analyze-Gauss release of the (d + 1)×(d + 1)
    augmented SSCP matrix of d released columns at (ε, δ) (σ = 0 at ε = inf)."""
    sens = sscp_sensitivity(d, neighbouring, intercept=True)
    if math.isinf(epsilon):
        return sens, 0.0
    return sens, gaussian_sigma(sens, ApproxDP(epsilon, delta), calibration=calibration)


def _unit_sigma(epsilon: float, delta: float, calibration: str) -> float:
    """σ of the Gaussian mechanism for unit sensitivity."""
    return gaussian_sigma(1.0, ApproxDP(epsilon, delta), calibration=calibration)


def _quantile(beta: float, k: int) -> float:
    return float(stats.norm.isf(beta / (2.0 * k)))
