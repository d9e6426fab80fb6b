"""Bootstrap world of a DPSuffStats (``noisy_stats(..., inference=True)``) release.

Released (Laplace noise of known scale, replace-one neighbours, n public): ncov~, nvar~,
nvar_y~ (noisy Σ(y − ȳ)²), x̄~ and the line (α̃ = ncov~/nvar~, β̃ = ȳ − α̃x̄ + L₃).

Data model, conditional on the x values (as for the classical OLS interval):
y_i = β + α·x_i + e_i with i.i.d. errors of variance σ².  Given x, the statistics the mechanism
uses are ncov = α·nvar + S, S = Σ(x_i − x̄)e_i ~ N(0, σ²·nvar), Σ(y − ȳ)² = α²nvar + 2αS +
S²/nvar + R, R ~ σ²χ²_{n−2} independent of S, and ȳ − αx̄ = β + ē, ē ~ N(0, σ²/n)
independent of S (Gaussian errors; otherwise by the central limit theorem).

Draws (the default interval, :meth:`NoisyStatsModel.replicate`): nvar is not plugged in;
every draw takes nvar_k from its posterior given nvar~ (Laplace likelihood divided by the
probability of not being ⊥, flat on the feasible range (0, n·w_x²/4]), σ̂²_k at nvar_k, the
slope from the pivot ncov~ = α·nvar + S + L₁ and the intercept from the released line and x̄~
(docs/uncertainty.md, "noisy-stats at ε ≤ 1 on small data").  The plug-in world of the
parametric bootstrap (α̂ = α̃, β̂ = β̃, nvar = min(nvar~, n·w_x²/4), x̄ = x̄~ clamped,
σ̂² = clamp(nvar_y~ − ncov~²/nvar~, 0, n·w_y²/4)/(n − 2), Alg. 1's noise-and-divide step and
⊥ rule replayed) is :meth:`NoisyStatsModel.replay`; it under-covered on small data with wide
bounds.

Analytic (studentizing) covariance of (β̃, α̃), evaluated at any release:
Var α̃ ≈ (σ̂²·nvar~ + 2b₁² + 2α̃²b₂²)/nvar~², Cov(β̃, α̃) ≈ −x̄·Var α̃,
Var β̃ ≈ x̄²·Var α̃ + σ̂²/n + 2(Δ₃(α̃)/ε₃)², with b the Laplace scales and
Δ₃(α) = (w_y + |α|·w_x)/n.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import integrate, special

from dpreg.exceptions import InvalidInputError
from dpreg.inference.dpci.engine import BootstrapModel

__all__ = ["NoisyStatsModel", "noisy_stats_cov", "noisy_stats_plugin_cov", "normal_laplace_cdf",
           "slope_pivot_cdf"]


def _sigma2(ncov: Any, nvar: Any, nvar_y: Any, n: int, wy: float) -> np.ndarray:
    rss = np.asarray(nvar_y, dtype=float) - np.asarray(ncov, dtype=float) ** 2 / np.asarray(
        nvar, dtype=float)
    rss = np.clip(rss, 0.0, n * wy * wy / 4.0)
    return rss / (n - 2)


def noisy_stats_cov(ncov: Any, nvar: Any, nvar_y: Any, xbar: Any, *, n: int,
                    x_bounds: tuple[float, float], y_bounds: tuple[float, float],
                    scales: dict[str, float], eps_intercept: float) -> np.ndarray:
    """DP-aware covariance of (intercept, slope) from released values (vectorised; (B, 2, 2))."""
    ncov = np.atleast_1d(np.asarray(ncov, dtype=float))
    nvar = np.atleast_1d(np.asarray(nvar, dtype=float))
    wx = x_bounds[1] - x_bounds[0]
    wy = y_bounds[1] - y_bounds[0]
    slope = ncov / nvar
    s2 = _sigma2(ncov, nvar, nvar_y, n, wy)
    xb = np.clip(np.atleast_1d(np.asarray(xbar, dtype=float)), *x_bounds)
    b1, b2 = scales["ncov"], scales["nvar"]
    v_slope = (s2 * nvar + 2.0 * b1 * b1 + 2.0 * slope**2 * b2 * b2) / nvar**2
    b3 = 0.0 if np.isinf(eps_intercept) else 1.0 / eps_intercept
    d3 = (wy + np.abs(slope) * wx) / n
    v_int = xb**2 * v_slope + s2 / n + 2.0 * (d3 * b3) ** 2
    c = -xb * v_slope
    out = np.empty(slope.shape + (2, 2))
    out[..., 0, 0] = v_int
    out[..., 1, 1] = v_slope
    out[..., 0, 1] = c
    out[..., 1, 0] = c
    return out


def noisy_stats_plugin_cov(ncov: float, nvar: float, nvar_y: float, xbar: float, *, n: int,
                           x_bounds: tuple[float, float], y_bounds: tuple[float, float]
                           ) -> np.ndarray:
    """The naive plug-in OLS covariance from the noisy statistics, IGNORING the privacy noise
    (for comparison only): σ̂²·[[1/n + x̄²/nvar, −x̄/nvar], [−x̄/nvar, 1/nvar]]."""
    s2 = float(_sigma2(ncov, nvar, nvar_y, n, y_bounds[1] - y_bounds[0]))
    xb = float(np.clip(xbar, *x_bounds))
    return s2 * np.array([[1.0 / n + xb * xb / nvar, -xb / nvar], [-xb / nvar, 1.0 / nvar]])


# --------------------------------------------------------------------------------------------
# test inversion / confidence distribution (the default interval since issue 18)
# --------------------------------------------------------------------------------------------
def normal_laplace_cdf(t: Any, s: float, b: float) -> np.ndarray:
    """P(sZ + L ≤ t) for Z ~ N(0, 1) and L ~ Laplace(0, b) independent (closed form:
    Φ(t/s) − ½e^{s²/2b² − t/b}Φ(t/s − s/b) + ½e^{s²/2b² + t/b}Φ(−t/s − s/b))."""
    t = np.asarray(t, dtype=float)
    if b <= 0.0 and s <= 0.0:
        return (t >= 0.0).astype(float)
    if b <= 0.0:
        return np.asarray(special.ndtr(t / s))
    if s <= 0.0:
        return np.where(t < 0.0, 0.5 * np.exp(np.minimum(t, 0.0) / b),
                        1.0 - 0.5 * np.exp(-np.maximum(t, 0.0) / b))
    r = s / b
    c = 0.5 * r * r
    with np.errstate(over="ignore", under="ignore"):
        lo = np.exp(math.log(0.5) + c - t / b + special.log_ndtr(t / s - r))
        hi = np.exp(math.log(0.5) + c + t / b + special.log_ndtr(-t / s - r))
        out = special.ndtr(t / s) - lo + hi
    return np.clip(out, 0.0, 1.0)


def slope_pivot_cdf(alpha: Any, *, ncov: float, nvar: float, s: float, b_ncov: float,
                    b_nvar: float, strata: int = 1000) -> np.ndarray:
    """F(α) = P(sZ + L₁ + α(nvar~ − L₂) ≤ ncov~): the law of the pivot ncov~ − α·nvar~ =
    S + L₁ − αL₂ (S ~ N(0, s²) sampling part, L₁ ~ Lap(b_ncov), L₂ ~ Lap(b_nvar) the release's
    noises) evaluated at the released value, for every α in ``alpha``.  L₂ is integrated by
    ``strata`` equal-probability strata (deterministic).  F(α_true) is uniform, so {α : a/2 ≤
    F(α) ≤ 1 − a/2} is an exact (1 − a) confidence set (Fieller's construction with Laplace
    noise); F is the slope's confidence distribution."""
    al = np.atleast_1d(np.asarray(alpha, dtype=float))
    u = (np.arange(strata) + 0.5) / strata
    l2 = np.where(u < 0.5, b_nvar * np.log(2.0 * u), -b_nvar * np.log(2.0 * (1.0 - u)))
    den = nvar - l2                                       # (M,)
    t = ncov - al[:, None] * den[None, :]                 # (G, M)
    return np.asarray(normal_laplace_cdf(t, s, b_ncov).mean(axis=1))


def _root(fn: Any, lo: float, hi: float, target: float, iters: int = 80) -> float:
    """α in [lo, hi] with fn(α) = target, fn decreasing from above to below target."""
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if fn(mid) > target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


#: stand-in for an infinite confidence-distribution draw (the slope's confidence set is
#: unbounded with that probability); results beyond ±_HUGE/10 are reported as ±inf
_HUGE = 1e200


class NoisyStatsModel(BootstrapModel):
    """Bootstrap world of a DPSuffStats release made with ``inference=True``."""

    description = ("DPSuffStats: y = β + αx + e given x, with nvar, x̄, α, β and σ² estimated from "
                   "the noisy statistics; Laplace noise re-drawn at the release's scales")

    def __init__(self, *, released: dict[str, float], n: int, x_bounds: tuple[float, float],
                 y_bounds: tuple[float, float], scales: dict[str, float],
                 eps_intercept: float, names: list[str] | None = None,
                 offer_threshold: float = 0.0, low_prior_power: float = 0.5) -> None:
        self.r = {k: float(v) for k, v in released.items()}
        #: the interval is given only when nvar~ >= this (the release rule of
        #: :func:`dpreg.simple._interval_rule.interval_refusal`); the posterior of nvar
        #: conditions on that event (0: only on the release not being ⊥)
        self.offer_threshold = max(float(offer_threshold), 0.0)
        #: p of the prior ∝ (t/nvar)^p below the offer threshold t (:meth:`world_nvar_draws`)
        self.low_prior_power = float(low_prior_power)
        if not 0.0 <= self.low_prior_power < 1.0:
            raise InvalidInputError(f"low_prior_power must be in [0, 1); got {low_prior_power!r}")
        self.n = int(n)
        self.xb = (float(x_bounds[0]), float(x_bounds[1]))
        self.yb = (float(y_bounds[0]), float(y_bounds[1]))
        self.scales = dict(scales)
        self.eps3 = float(eps_intercept)
        self.names = list(names) if names is not None else ["intercept", "slope"]
        wx = self.xb[1] - self.xb[0]
        wy = self.yb[1] - self.yb[0]
        self.wx, self.wy = wx, wy
        r = self.r
        self.nvar_t = min(r["nvar"], self.n * wx * wx / 4.0)
        self.xbar_t = float(np.clip(r["xbar"], *self.xb))
        self.sigma2 = float(_sigma2(r["ncov"], r["nvar"], r["nvar_y"], self.n, wy)[()])
        self.slope = r["slope"]
        self.intercept = r["intercept"]
        #: κ: noise sd of the released nvar relative to it
        self.noise_ratio = math.sqrt(2.0) * self.scales["nvar"] / r["nvar"]
        self.plugin_cov = noisy_stats_plugin_cov(r["ncov"], r["nvar"], r["nvar_y"], r["xbar"],
                                                 n=self.n, x_bounds=self.xb, y_bounds=self.yb)

    def _cov(self, ncov: Any, nvar: Any, nvar_y: Any, xbar: Any) -> np.ndarray:
        return noisy_stats_cov(ncov, nvar, nvar_y, xbar, n=self.n, x_bounds=self.xb,
                               y_bounds=self.yb, scales=self.scales, eps_intercept=self.eps3)

    def released(self) -> tuple[np.ndarray, np.ndarray]:
        r = self.r
        cov = self._cov(r["ncov"], r["nvar"], r["nvar_y"], r["xbar"])[0]
        return np.array([self.intercept, self.slope]), cov

    def _nvar_posterior_masses(self) -> tuple[float, float]:
        """(mass below the offer threshold t, mass above it) of the unnormalised posterior of
        nvar (:meth:`world_nvar_draws`), deterministic (numerical quadrature above t)."""
        b = float(self.scales["nvar"])
        hi = self.n * self.wx * self.wx / 4.0
        c, t = self.r["nvar"], min(self.offer_threshold, hi)
        q = self.low_prior_power
        low = t / (1.0 - q) * math.exp(-max(c - t, 0.0) / b) / b if t > 0.0 else 0.0

        def dens(v: float) -> float:
            return math.exp(-abs(c - v) / b) / (2.0 * b) / (1.0 - 0.5 * math.exp(-(v - t) / b))

        # the density is e^{−|c − v|/b} up to a factor in [1, 2]: beyond 80b of c it is < e^{−80}
        lo_end, up_end = max(t, min(c - 80.0 * b, hi)), min(hi, max(c + 80.0 * b, t))
        pts = sorted({lo_end, min(max(c, lo_end), up_end), up_end})
        high = sum(integrate.quad(dens, lo, up, limit=200)[0]
                   for lo, up in zip(pts[:-1], pts[1:]) if up > lo)
        return low, high

    @property
    def unidentified_mass(self) -> float:
        """Posterior probability that nvar lies below the offer threshold t, where the
        release carries no information on it (0 without a threshold).  The (1 − a) intervals
        are set by that region -- uninformative, their width says so -- when it is >= a/2."""
        b = float(self.scales["nvar"])
        if self.offer_threshold <= 0.0 or b <= 0.0 or not math.isfinite(b):
            return 0.0
        low, high = self._nvar_posterior_masses()
        return low / (low + high) if low + high > 0 else 1.0

    def world_nvar_draws(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` draws of nvar = Σ(x − x̄)² given the released nvar~ (its posterior).

        nvar~ = nvar + L₂ with L₂ ~ Lap(b), and the release was not ⊥ (nvar~ > 0), so the
        likelihood of nvar is the Laplace density at nvar~ − nvar divided by P(nvar + L₂ > 0)
        = 1 − ½e^{−nvar/b}; nvar lies in (0, n·w_x²/4], flat prior.  Draws: importance
        resampling of a pool of 4·``size`` Laplace draws truncated to that range (inverse CDF).

        With an offer threshold t > 0 (the interval is given only because nvar~ >= t: the
        release rule of :func:`dpreg.simple._interval_rule.interval_refusal`) the likelihood
        conditions on that event instead: divided by P(nvar + L₂ >= t).  Above t this is the
        same construction with t for 0; below t it is flat (e^{−(nvar~ − t)/b}/b whatever
        nvar: a release that passed says nothing about how far below t nvar is), and there the
        prior is ∝ (t/nvar)^p, p = :attr:`low_prior_power` (½; flat: p = 0 under-covered on
        real data, docs/uncertainty.md "noisy-stats: the interval rule") -- draws t·U^{1/(1−p)}
        with the region's probability :attr:`unidentified_mass`.  Post-processing of released
        values and public constants; b = 0 (ε = ∞) gives nvar~ itself."""
        b = float(self.scales["nvar"])
        hi = self.n * self.wx * self.wx / 4.0
        if b <= 0.0 or not math.isfinite(b):
            return np.full(size, self.nvar_t)
        c = self.r["nvar"]
        t = min(self.offer_threshold, hi)

        def cdf(v: float) -> float:
            z = (v - c) / b
            return 0.5 * math.exp(z) if z < 0 else 1.0 - 0.5 * math.exp(-z)

        f0, f1 = cdf(t), cdf(hi)
        p = f0 + (f1 - f0) * rng.uniform(0.0, 1.0, 4 * size)
        with np.errstate(divide="ignore"):
            pool = np.where(p < 0.5, c + b * np.log(2.0 * p), c - b * np.log(2.0 * (1.0 - p)))
        pool = np.clip(pool, max(t, hi * 1e-12), hi)
        w = 1.0 / (1.0 - 0.5 * np.exp(-(pool - t) / b))
        draws = np.asarray(rng.choice(pool, size=size, p=w / w.sum()))
        if t <= 0.0:
            return draws
        low = rng.uniform(0.0, 1.0, size) < self.unidentified_mass
        vlow = t * rng.uniform(0.0, 1.0, size) ** (1.0 / (1.0 - self.low_prior_power))
        return np.where(low, np.maximum(vlow, hi * 1e-12), draws)

    def replicate(self, size: int, rng: np.random.Generator
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``size`` draws of (intercept, slope) given the release, with nvar's uncertainty.

        Every draw takes its own nvar_k (:meth:`world_nvar_draws`: the released nvar~ is not
        plugged in as the truth, which made the intervals too tight exactly where nvar~
        over-estimates nvar -- the small-data failure of issue 18), σ̂²_k from the released
        statistics at nvar_k, and inverts the slope's pivot ncov~ = α·nvar_k + S + L₁:
        α_k = (ncov~ − S_k − L₁,k)/nvar_k with S_k ~ N(0, σ̂²_k·nvar_k) and L₁,k at the
        release's scale.  The intercept follows from β̃ = β + (α − α̃)x̄ + ē + L₃:
        β_k = β̃ + (α̃ − α_k)·x̄_k − ē_k − L₃,k, x̄_k = x̄~ − L₅,k clamped to the bounds,
        ē_k ~ N(0, σ̂²_k/n).  This is the confidence distribution of ``kind="inversion"``
        with the public fact nvar ∈ (0, n·w_x²/4] imposed (and the ⊥ rule accounted for), so
        the intervals stay bounded.  No draw is ⊥; the covariance of every draw is the
        release's analytic one (``studentized`` then reflects the draws about the estimate).
        Post-processing of released values only."""
        n, r, sc = self.n, self.r, self.scales
        nvar = self.world_nvar_draws(size, rng)
        s2 = _sigma2(r["ncov"], nvar, r["nvar_y"], n, self.wy)
        S = rng.normal(0.0, 1.0, size) * np.sqrt(s2 * nvar)
        slope = (r["ncov"] - S - rng.laplace(0.0, 1.0, size) * sc["ncov"]) / nvar
        xbar = np.clip(r["xbar"] - rng.laplace(0.0, 1.0, size) * sc["xbar"], *self.xb)
        b3 = 0.0 if np.isinf(self.eps3) else 1.0 / self.eps3
        d3 = (self.wy + abs(self.slope) * self.wx) / n
        intercept = (self.intercept + (self.slope - slope) * xbar
                     - rng.normal(0.0, 1.0, size) * np.sqrt(s2 / n)
                     - rng.laplace(0.0, 1.0, size) * d3 * b3)
        est = np.column_stack([intercept, slope])
        ok = np.all(np.isfinite(est), axis=1)
        cov = np.broadcast_to(self.released()[1], (size, 2, 2)).copy()
        return est, cov, ok

    def replay(self, size: int, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``size`` simulated releases of the plug-in world (α̃, β̃, nvar = nvar~, x̄~, σ̂²):
        (S, R, ē) drawn, then Alg. 1's noise-and-divide step with the real scales and ⊥ rule
        (⊥ replicates flagged in ``ok``).  The parametric bootstrap of Ferrando et al. with
        nvar~ plugged in as the truth: the default interval before issue 18's small-data fix
        (:meth:`replicate` now draws nvar from its posterior instead); kept as the replay of
        the mechanism (tests check it against real releases)."""
        n, s2, a, b = self.n, self.sigma2, self.slope, self.intercept
        nvar = self.nvar_t
        S = rng.normal(0.0, np.sqrt(s2 * nvar), size)
        R = s2 * rng.chisquare(n - 2, size)
        ebar = rng.normal(0.0, np.sqrt(s2 / n), size)
        ncov = a * nvar + S
        nvar_y = a * a * nvar + 2.0 * a * S + S * S / nvar + R
        ybar = b + a * self.xbar_t + ebar
        sc = self.scales
        noisy_ncov = ncov + rng.laplace(0.0, 1.0, size) * sc["ncov"]
        noisy_nvar = nvar + rng.laplace(0.0, 1.0, size) * sc["nvar"]
        ok = noisy_nvar > 0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slope = np.where(ok, noisy_ncov / np.where(ok, noisy_nvar, 1.0), np.nan)
            d3 = (self.wy + np.abs(slope) * self.wx) / n
            b3 = 0.0 if np.isinf(self.eps3) else 1.0 / self.eps3
            intercept = ybar - slope * self.xbar_t + rng.laplace(0.0, 1.0, size) * d3 * b3
        ok &= np.isfinite(slope) & np.isfinite(intercept)
        noisy_nvar_y = nvar_y + rng.laplace(0.0, 1.0, size) * sc["nvar_y"]
        noisy_xbar = self.xbar_t + rng.laplace(0.0, 1.0, size) * sc["xbar"]
        est = np.column_stack([intercept, slope])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            cov = self._cov(noisy_ncov, np.where(ok, noisy_nvar, 1.0), noisy_nvar_y, noisy_xbar)
        return est, cov, ok

    # ---------------------------------------------------------------- confidence distribution
    def pivot_sd(self) -> float:
        """sd of the sampling part S of the slope pivot: σ̂·√nvar (nvar = the world's)."""
        return math.sqrt(max(self.sigma2, 0.0) * max(self.nvar_t, 0.0))

    def slope_cdf(self, alpha: Any) -> np.ndarray:
        """The slope's confidence distribution F(α) (:func:`slope_pivot_cdf`) at this release."""
        r = self.r
        return slope_pivot_cdf(alpha, ncov=r["ncov"], nvar=r["nvar"], s=self.pivot_sd(),
                               b_ncov=self.scales["ncov"], b_nvar=self.scales["nvar"])

    @property
    def unbounded_mass(self) -> float:
        """P(nvar~ − L₂ < 0) = ½e^{−nvar~/b}: the mass of the slope's confidence distribution
        at each of ±∞; the (1 − a) slope interval is unbounded when it is ≥ a/2."""
        b = self.scales["nvar"]
        return 0.5 * math.exp(-self.r["nvar"] / b) if b > 0 else 0.0

    def confidence_draws(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` draws (intercept, slope) from the confidence distribution of the release.

        Slope: α_k = F⁻¹(u_k), u_k uniform, with F the exact law of the pivot ncov~ − α·nvar~
        = S + L₁ − αL₂ (:func:`slope_pivot_cdf`): its percentile interval is the equal-tailed
        Fieller interval, exact whatever the true nvar (the plug-in world nvar = nvar~ of the
        bootstrap is what made its intervals miss on small data); draws beyond the finite
        range are ±:data:`_HUGE` (an unbounded confidence set).  Intercept: from β̃ = β +
        (α − α̃)x̄ + ē + L₃, β_k = β̃ + (α̃ − α_k)·x̄_k − ē_k − L₃,k with x̄_k = x̄~ − L₅,k
        clamped to the bounds (x̄'s own confidence distribution), ē_k ~ N(0, σ̂²/n) and L₃ at
        the release's scale Δ₃(α̃)/ε₃.  Post-processing of released values only.

        Not for a release whose interval was offered by the release rule (``offer_threshold``
        > 0): the exact law of the pivot is unconditional, and conditioning on nvar~ >= t
        leaves nvar below t undetermined (:meth:`world_nvar_draws`): refused there."""
        if self.offer_threshold > 0.0:
            raise InvalidInputError(
                "kind must not be 'inversion' for this release: its interval was offered by "
                "the release rule (its noisy Σ(x − x̄)² passed the threshold of the interval "
                "rule), and the inversion interval does not condition on that; use the "
                "default kind='percentile', which does")
        r, sc = self.r, self.scales
        a0 = self.slope
        cov = self._cov(r["ncov"], r["nvar"], r["nvar_y"], r["xbar"])[0]
        scale = math.sqrt(cov[1, 1]) if np.isfinite(cov[1, 1]) and cov[1, 1] > 0 else \
            abs(a0) + 1.0
        q = max(self.unbounded_mass + 1e-9, 0.25 / size)

        def one(a: float) -> float:
            return float(self.slope_cdf(a)[0])

        ends = []
        for sign in (1.0, -1.0):
            target = q if sign > 0 else 1.0 - q
            d = scale
            for _ in range(200):
                a = a0 + sign * d
                if (one(a) <= target) if sign > 0 else (one(a) >= target):
                    break
                d *= 4.0
                if d > _HUGE / 1e10:
                    break
            a = a0 + sign * d
            ends.append(_root(one, min(a0, a), max(a0, a), target))
        a_hi, a_lo = ends
        v_hi = math.asinh((a_hi - a0) / scale)
        v_lo = math.asinh((a_lo - a0) / scale)
        grid = a0 + scale * np.sinh(np.linspace(v_lo, v_hi, 513))
        Fg = np.minimum.accumulate(self.slope_cdf(grid))
        u = rng.uniform(0.0, 1.0, size)
        slope = np.interp(u, Fg[::-1], grid[::-1])
        slope = np.where(u > Fg[0], -_HUGE, np.where(u < Fg[-1], _HUGE, slope))
        xbar = np.clip(r["xbar"] + rng.laplace(0.0, 1.0, size) * sc["xbar"], *self.xb)
        b3 = 0.0 if np.isinf(self.eps3) else 1.0 / self.eps3
        d3 = (self.wy + abs(a0) * self.wx) / self.n
        noise = (rng.normal(0.0, math.sqrt(max(self.sigma2, 0.0) / self.n), size)
                 + rng.laplace(0.0, 1.0, size) * d3 * b3)
        intercept = self.intercept + (a0 - slope) * xbar + noise
        return np.column_stack([intercept, slope])
