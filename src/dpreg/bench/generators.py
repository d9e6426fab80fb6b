"""Synthetic data generators of the five papers' experiments (public simulations).

All take an explicit ``rng`` (normalised by :func:`dpreg._validation.check_rng`) and return
plain arrays.  Where a paper leaves a detail out, the choice is stated in the docstring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpreg._validation import check_int, check_positive, check_rng
from dpreg.exceptions import InvalidInputError

__all__ = [
    "alabi_uniform",
    "alabi_fig8",
    "alabi_true_prediction_sd",
    "alabi_true_slope_sd",
    "sv_design",
    "sv_data",
    "SV_DESIGNS",
    "bain_simulated",
    "BainData",
    "make_regression_like",
]


def alabi_uniform(n: int, *, sigma_x2: float, sigma_e2: float, alpha: float = 0.5,
                  beta: float = 0.2, clip_y: bool = True, rng: Any = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Alabi et al. 2022 §7.1.4: x ~ Uniform with mean ½ and variance σ_x², y = αx + β + e.

    x ~ U[½ − √(3σ_x²), ½ + √(3σ_x²)], e ~ N(0, σ_e²); then (x, y) are clipped to [0, 1]², as
    the paper's text says.  ``clip_y=False`` leaves y unclipped, as the authors' simulation code
    does (x never needs clipping).  Requires σ_x² <= 1/12 (the support stays inside [0, 1]; the
    paper's grid stops at 0.08).
    """
    n = check_int(n, "n", minimum=2)
    sx2 = check_positive(sigma_x2, "sigma_x2")
    se2 = check_positive(sigma_e2, "sigma_e2", allow_zero=True)
    if sx2 > 1.0 / 12.0:
        raise InvalidInputError(f"sigma_x2 must be at most 1/12 (x stays in [0, 1]); got {sx2!r}")
    gen = check_rng(rng)
    half = math.sqrt(3.0 * sx2)
    x = gen.uniform(0.5 - half, 0.5 + half, n)
    y = alpha * x + beta + gen.normal(0.0, math.sqrt(se2), n)
    return np.clip(x, 0.0, 1.0), (np.clip(y, 0.0, 1.0) if clip_y else y)


def alabi_true_prediction_sd(n: int, *, sigma_x2: float, sigma_e2: float,
                             x_new: float = 0.25) -> float:
    """σ(p̂_x): the sampling sd of the OLS prediction at ``x_new`` for the uniform design.

    σ_e·√(1/n + (x_new − ½)²/(n·σ_x²)) -- eq. (3) of Alabi et al. with the population values
    (x̄ = ½, nvar(x) = nσ_x²) in place of the sample ones.  This is the normaliser of the
    synthetic figures (their σ(p̂₂₅)); clipping of y to [0, 1] is ignored (rare on the grids).
    """
    return math.sqrt(sigma_e2) * math.sqrt(1.0 / n + (x_new - 0.5) ** 2 / (n * sigma_x2))


def alabi_true_slope_sd(n: int, *, sigma_x2: float, sigma_e2: float) -> float:
    """σ(α̂) = σ_e/√(nσ_x²): the sampling sd of the OLS slope for the uniform design."""
    return math.sqrt(sigma_e2 / (n * sigma_x2))


def alabi_fig8(n: int = 40, *, sigma: float = 1e-3, tau: float = 1e-4, slope: float = 0.5,
               intercept: float = 0.5, x_mean: float = 0.0, rng: Any = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Alabi et al. Fig. 8 data: x ~ N(x_mean, σ²), y = 0.5x + 0.5 + N(0, τ²), truncated to [0, 1].

    The caption gives x ~ N(0, σ²) (``x_mean=0``): truncation then puts about half of the x at
    exactly 0 (tied pairs).  ``x_mean`` is exposed so a centred variant can be run too.
    """
    n = check_int(n, "n", minimum=2)
    gen = check_rng(rng)
    x = gen.normal(x_mean, check_positive(sigma, "sigma"), n)
    y = slope * x + intercept + gen.normal(0.0, check_positive(tau, "tau"), n)
    return np.clip(x, 0.0, 1.0), np.clip(y, 0.0, 1.0)


SV_DESIGNS = ("two-point", "uniform", "clustered")


def sv_design(design: str, n: int, *, delta_x: float = 1.0, clusters: int = 3,
              spread: float = 0.02, rng: Any = None) -> np.ndarray:
    """x designs for the Sarathy & Vadhan checks (x in [0, Δ_x]).

    * ``"two-point"``: ⌊n/2⌋ points at 0 and ⌈n/2⌉ at Δ_x (their Assumption 5.0.1; the
      within-group pairs are tied, the N = ⌊n/2⌋⌈n/2⌉ cross pairs carry the slope);
    * ``"uniform"``: x ~ U[0, Δ_x] (no ties);
    * ``"clustered"``: ``clusters`` equally spaced centres in [0, Δ_x], x = centre + N(0,
      (spread·Δ_x)²), clipped to [0, Δ_x] (an intermediate design of our choosing).
    """
    n = check_int(n, "n", minimum=2)
    gen = check_rng(rng)
    if design == "two-point":
        x = np.zeros(n)
        x[n // 2:] = delta_x
        return gen.permutation(x)
    if design == "uniform":
        return gen.uniform(0.0, delta_x, n)
    if design == "clustered":
        centres = np.linspace(0.0, delta_x, clusters)
        x = centres[gen.integers(0, clusters, n)] + gen.normal(0.0, spread * delta_x, n)
        return np.clip(x, 0.0, delta_x)
    raise InvalidInputError(f"design must be one of {list(SV_DESIGNS)}; got {design!r}")


def sv_data(design: str, n: int, *, slope: float = 0.5, intercept: float = 0.0,
            sigma_e: float = 0.1, delta_x: float = 1.0, rng: Any = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) with y = β₀ + β₁x + N(0, σ_e²) on a :func:`sv_design` (Gaussian errors)."""
    gen = check_rng(rng)
    x = sv_design(design, n, delta_x=delta_x, rng=gen)
    y = intercept + slope * x + gen.normal(0.0, sigma_e, x.size)
    return x, y


@dataclass(frozen=True)
class BainData:
    """One simulated Bain et al. data set: columns x1..x{d-1}, y; the generator's parameters."""

    X: np.ndarray
    y: np.ndarray
    means: np.ndarray
    sds: np.ndarray
    coefficient: float
    noise_sd: float

    def bounds(self, width: float = 6.0) -> dict[str, tuple[float, float]]:
        """Public bounds from the *generator* (mean ± width·sd per column; y from x1's).

        In the simulation these are known before any data are drawn, which plays the role of
        the DP metadata (min, max) Bain et al. release alongside the matrix.
        """
        out = {f"x{j + 1}": (float(m - width * s), float(m + width * s))
               for j, (m, s) in enumerate(zip(self.means, self.sds))}
        lo1, hi1 = out["x1"]
        c = self.coefficient
        ylo, yhi = sorted((c * lo1, c * hi1))
        pad = width * self.noise_sd
        out["y"] = (float(ylo - pad), float(yhi + pad))
        return out


def bain_simulated(n: int = 50_000, *, d: int = 5, coefficient: float = 1.0,
                   noise_sd: float = 1.0, rng: Any = None) -> BainData:
    """Bain et al. §3.1/§3.3: d − 1 columns N(μ_i, σ_i²) with μ_i ~ U[100, 10000] and
    σ_i ~ U[0, 100]; the last column y = C·x₁ + N(0, noise_sd²) (the §3.3 N(0, 1) reading;
    §3.1's "uniform on {−1, 1}" noise is not used).  σ_i is drawn from U[1, 100] to keep
    every column non-degenerate (U[0, 100] can give σ ≈ 0)."""
    n = check_int(n, "n", minimum=2)
    d = check_int(d, "d", minimum=2)
    gen = check_rng(rng)
    means = gen.uniform(100.0, 10_000.0, d - 1)
    sds = gen.uniform(1.0, 100.0, d - 1)
    X = means + sds * gen.standard_normal((n, d - 1))
    y = coefficient * X[:, 0] + gen.normal(0.0, noise_sd, n)
    return BainData(X, y, means, sds, float(coefficient), float(noise_sd))


def make_regression_like(n: int = 22_000, *, n_features: int = 10, noise: float = 10.0,
                         bias: float = 0.0, rng: Any = None
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn ``make_regression`` style data (Amin et al.'s synthetic set).

    X ~ N(0, I_d), coefficients 100·U(0, 1) (all features informative), y = X·w + bias +
    N(0, noise²).  Returns ``(X, y, w)``.  Drawn from a numpy ``Generator`` (not
    ``make_regression`` itself, which uses the legacy RandomState).
    """
    n = check_int(n, "n", minimum=2)
    d = check_int(n_features, "n_features", minimum=1)
    gen = check_rng(rng)
    X = gen.standard_normal((n, d))
    w = 100.0 * gen.random(d)
    y = X @ w + bias + gen.normal(0.0, noise, n)
    return X, y, w
