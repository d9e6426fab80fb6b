"""Parametric-bootstrap engine for DP confidence intervals (post-processing only).

The method (Ferrando, Wang & Sheldon, *Parametric Bootstrap for Differentially Private
Confidence Intervals*, AISTATS 2022): a DP release is a random function of the data *and* of
the privacy noise, whose distribution is public.  From the released statistics alone we

1. estimate the parameters of a data model (coefficients, error variance, the second moments
   of the design) -- the *bootstrap world*;
2. simulate, many times, the sufficient statistics a data set from that world would have and
   run the **same** mechanism on them (fresh privacy noise of the known law, the same ⊥ rules,
   the same post-processing);
3. read the interval off the simulated estimates.

Nothing touches the private data again, so the interval costs no privacy budget.

Three interval constructions are offered (``kind``):

* ``"percentile"`` (default): [q_{α/2}(θ*), q_{1−α/2}(θ*)], the construction of Ferrando et
  al.  It was the most robust of the three on stress settings where the privacy noise
  dominates (docs/uncertainty.md, "choice of the default"; those settings are not the ones
  the coverage tables evaluate).
* ``"studentized"`` (bootstrap-t): the pivot T = (θ̃ − θ)/ŝe, with ŝe the analytic DP-aware
  standard error (sampling variance plus the delta-method variance of the privacy noise,
  evaluated at the release), is simulated as T* = (θ* − θ̂)/ŝe*; the interval is
  [θ̂ − q_{1−α/2}(T*)·ŝe, θ̂ − q_{α/2}(T*)·ŝe].  Second-order accurate when the noise is
  small relative to the statistics; it under-covers when a noisy denominator is far from
  its true value (the delta-method ŝe is then a poor pivot).
* ``"basic"``: [2θ̂ − q_{1−α/2}(θ*), 2θ̂ − q_{α/2}(θ*)] (corrects first-order bias; tends
  to over-cover when the noise dominates).
* ``"inversion"`` (noisy-stats only, opt-in): the equal-tailed interval of the release's
  *confidence distribution* -- for the slope the exact test inversion (Fieller's
  construction with the Laplace noises) of the pivot ncov~ − α·nvar~ = S + L₁ − αL₂, whose
  law does not involve the unknown nvar; it is unbounded (±∞) when the noisy nvar cannot
  exclude 0 at that level (docs/uncertainty.md, "noisy-stats at ε ≤ 1 on small data").

The models (:mod:`dpreg.inference.dpci.models`) implement :class:`BootstrapModel`; the engine
only handles replicates, ⊥ replicates (dropped: the observed release was not ⊥, so the interval
conditions on success), linear maps to the reported parametrisation, and the quantiles.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from dpreg._validation import check_int, check_probability, check_rng, fmt
from dpreg.exceptions import InvalidInputError

__all__ = [
    "KINDS",
    "BootstrapModel",
    "ParametricBootstrap",
    "SOURCE",
    "check_kind",
]

KINDS = ("studentized", "percentile", "basic", "inversion")
SOURCE = ("Ferrando, Wang & Sheldon 2022, Parametric Bootstrap for Differentially Private "
          "Confidence Intervals (AISTATS); bootstrap-t after Efron & Tibshirani 1993 §12.5")
_CHUNK = 4096


def check_kind(kind: Any) -> str:
    if not isinstance(kind, str) or kind not in KINDS:
        raise InvalidInputError(f"kind must be one of {list(KINDS)}; got {fmt(kind)}")
    return kind


class BootstrapModel(ABC):
    """Interface of a bootstrap world built from one release.

    Subclasses set ``names`` (parameter names in the model's own parametrisation), and
    implement :meth:`released` and :meth:`replicate`.  Both return the estimate and the
    *analytic* covariance (sampling + privacy noise, delta method) computed by one and the same
    function of released values, so that studentization is consistent.
    """

    names: list[str]
    description: str = ""
    #: noise-to-signal ratio κ of the release (noise sd over the statistic it perturbs most,
    #: e.g. a denominator or the smallest eigenvalue of a Gram matrix); the bootstrap is an
    #: approximation whose stress tests under-covered once κ exceeded about 1
    noise_ratio: float = 0.0
    #: κ above which results carry a warning (chosen on stress settings, docs/uncertainty.md)
    noise_ratio_limit: float = 0.5

    @abstractmethod
    def released(self) -> tuple[np.ndarray, np.ndarray]:
        """(estimate (p,), analytic covariance (p, p)) of the actual release."""

    @abstractmethod
    def replicate(self, size: int, rng: np.random.Generator
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``size`` simulated releases: (estimates (B, p), covariances (B, p, p), ok (B,))."""


def _diag_se(cov: np.ndarray) -> np.ndarray:
    d = np.diagonal(cov, axis1=-2, axis2=-1)
    return np.sqrt(np.maximum(d, 0.0))


class ParametricBootstrap:
    """Replicates of a :class:`BootstrapModel`, drawn once (lazily) and reused for every α.

    Parameters
    ----------
    model:
        The bootstrap world.
    n_boot:
        Number of simulated releases B (default 2000).  ⊥ replicates are dropped.
    kind:
        Default interval construction (see module doc).
    rng:
        Randomness of the simulation (post-processing: a seed only makes it reproducible).
    transform:
        Optional ``(A, c, names)``: report φ = A θ + c instead of θ (e.g. coefficients in
        original units from coefficients on a publicly rescaled design).
    """

    def __init__(self, model: BootstrapModel, *, n_boot: int = 2000, kind: str = "percentile",
                 rng: Any = None,
                 transform: tuple[np.ndarray, np.ndarray, Sequence[str]] | None = None) -> None:
        self.model = model
        self.n_boot = check_int(n_boot, "n_boot", minimum=50, maximum=10_000_000)
        self.kind = check_kind(kind)
        self._rng = check_rng(rng)
        est, cov = model.released()
        p = est.size
        if transform is None:
            self._A = np.eye(p)
            self._c = np.zeros(p)
            self.names = list(model.names)
        else:
            A, c, names = transform
            self._A = np.asarray(A, dtype=float)
            self._c = np.asarray(c, dtype=float)
            self.names = [str(v) for v in names]
        self.estimate = self._A @ est + self._c
        self.cov = self._A @ cov @ self._A.T
        self.se = _diag_se(self.cov)
        self._draws: tuple[np.ndarray, np.ndarray] | None = None
        self.n_failed = 0
        # kind "inversion": draws of the model's confidence distribution, from a child stream
        # spawned on first use (the replicates' stream is not advanced)
        self._cd: np.ndarray | None = None

    # ------------------------------------------------------------------ replicates
    def _simulate(self) -> tuple[np.ndarray, np.ndarray]:
        if self._draws is not None:
            return self._draws
        from dpreg._progress import report

        ests, covs = [], []
        left = self.n_boot
        failed = 0
        what = f"bootstrap: {self.n_boot} simulated releases"  # public: B only
        report(what, 0, self.n_boot)
        while left > 0:
            size = min(left, _CHUNK)
            est, cov, ok = self.model.replicate(size, self._rng)
            ok = np.asarray(ok, dtype=bool)
            ests.append(est[ok] @ self._A.T + self._c)
            covs.append(np.einsum("ij,bjk,lk->bil", self._A, cov[ok], self._A))
            failed += int(size - ok.sum())
            left -= size
            report(what, self.n_boot - left, self.n_boot)  # per batch of replicates
        draws = np.concatenate(ests, axis=0)
        cv = np.concatenate(covs, axis=0)
        good = (np.all(np.isfinite(draws), axis=1)
                & np.all(np.isfinite(cv), axis=(1, 2)))
        self.n_failed = failed + int((~good).sum())
        self._draws = (draws[good], cv[good])
        return self._draws

    @property
    def confidence_draws(self) -> np.ndarray | None:
        """Draws φ_k of the model's confidence distribution (reported parametrisation), or
        None when the model has none; the ``percentile`` intervals are read off them.  Values
        beyond ±1e199 stand for ±∞ (an unbounded confidence set)."""
        if not hasattr(self.model, "confidence_draws"):
            return None
        if self._cd is None:
            raw = self.model.confidence_draws(self.n_boot, self._rng.spawn(1)[0])
            with np.errstate(over="ignore", invalid="ignore"):
                self._cd = raw @ self._A.T + self._c
        return self._cd

    def _need_cd(self) -> np.ndarray:
        cd = self.confidence_draws
        if cd is None:
            raise InvalidInputError(
                f"kind must be one of {[k for k in KINDS if k != 'inversion']} for this "
                f"release ('inversion' needs a confidence distribution, which only the "
                f"noisy-stats release has); got 'inversion'")
        return cd

    @property
    def draws(self) -> np.ndarray:
        """Bootstrap estimates φ* (successful replicates only), shape (B', p)."""
        return self._simulate()[0]

    @property
    def draw_cov(self) -> np.ndarray:
        """Analytic covariance of every replicate, shape (B', p, p)."""
        return self._simulate()[1]

    @property
    def draw_se(self) -> np.ndarray:
        """Analytic standard errors of every replicate, shape (B', p)."""
        return _diag_se(self.draw_cov)

    @property
    def failure_rate(self) -> float:
        """Fraction of simulated releases that were ⊥ (or non-finite) and were dropped."""
        self._simulate()
        return self.n_failed / self.n_boot

    @property
    def plugin_se(self) -> np.ndarray | None:
        """The naive plug-in standard error that IGNORES the privacy noise (sampling variance
        from the noisy statistics as if they were exact), when the model defines one."""
        pc = getattr(self.model, "plugin_cov", None)
        if pc is None:
            return None
        return _diag_se(self._A @ np.asarray(pc, dtype=float) @ self._A.T)

    @property
    def bootstrap_se(self) -> np.ndarray:
        """Standard deviation of the bootstrap estimates (a second DP-aware SE)."""
        return np.std(self.draws, axis=0, ddof=1)

    # ------------------------------------------------------------------ intervals
    def interval_arrays(self, alpha: float, kind: str | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) arrays of the (1 − α) intervals for every parameter."""
        a = check_probability(alpha, "alpha")
        k = self.kind if kind is None else check_kind(kind)
        if k == "inversion":
            return _cd_interval(self._need_cd(), a)
        draws = self.draws
        if draws.shape[0] < 20:
            nan = np.full(self.estimate.size, math.nan)
            return nan, nan.copy()
        return _interval(self.estimate, self.se, draws, self.draw_se, a, k)

    def conf_int(self, alpha: float = 0.05, kind: str | None = None) -> pd.DataFrame:
        """(1 − α) intervals as a DataFrame (index: parameter names; ``lower``, ``upper``)."""
        lo, hi = self.interval_arrays(alpha, kind)
        return pd.DataFrame({"lower": lo, "upper": hi}, index=self.names)

    def linear_interval(self, weights: Any, alpha: float = 0.05, kind: str | None = None,
                        offset: float = 0.0) -> tuple[float, float, float]:
        """(estimate, lower, upper) of the (1 − α) interval for wᵀφ + offset (e.g. the
        prediction at a new x: w = (1, x)); uses the same replicates as :meth:`conf_int`."""
        a = check_probability(alpha, "alpha")
        k = self.kind if kind is None else check_kind(kind)
        w = np.asarray(weights, dtype=float).ravel()
        if w.size != self.estimate.size or not np.all(np.isfinite(w)):
            raise InvalidInputError(
                f"weights must be {self.estimate.size} finite numbers (one per parameter "
                f"{self.names}); got {fmt(weights)}")
        est_w = float(w @ self.estimate)
        if k == "inversion":
            with np.errstate(over="ignore", invalid="ignore"):
                cdw = self._need_cd() @ w
            lo, hi = _cd_interval(cdw[:, None], a)
            return est_w + offset, float(lo[0]) + offset, float(hi[0]) + offset
        se_w = float(np.sqrt(max(float(w @ self.cov @ w), 0.0)))
        draws = self.draws @ w
        dse = np.sqrt(np.maximum(np.einsum("i,bij,j->b", w, self.draw_cov, w), 0.0))
        if draws.size < 20:
            return est_w + offset, math.nan, math.nan
        lo, hi = _interval(np.array([est_w]), np.array([se_w]), draws[:, None], dse[:, None],
                           a, k)
        return est_w + offset, float(lo[0]) + offset, float(hi[0]) + offset

    @property
    def reliable(self) -> bool:
        """False when the noise-to-signal ratio κ of the release exceeds the model's limit."""
        return bool(self.model.noise_ratio <= self.model.noise_ratio_limit)

    def describe(self) -> str:
        return (f"parametric bootstrap ({self.kind}, B={self.n_boot}) of the release: "
                f"{self.model.description}")


_INFINITE = 1e199


def _cd_interval(draws: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed (1 − α) interval of confidence-distribution draws; ends beyond
    ±:data:`_INFINITE` (or NaN from an unbounded draw) are ±∞."""
    d = np.where(np.isnan(draws), np.inf, draws)
    d = np.clip(d, -1e300, 1e300)
    lo = np.quantile(d, alpha / 2.0, axis=0, method="inverted_cdf")
    hi = np.quantile(d, 1.0 - alpha / 2.0, axis=0, method="inverted_cdf")
    lo = np.where(lo < -_INFINITE, -np.inf, lo)
    hi = np.where(hi > _INFINITE, np.inf, hi)
    return lo, hi


def _interval(est: np.ndarray, se: np.ndarray, draws: np.ndarray, dse: np.ndarray, alpha: float,
              kind: str) -> tuple[np.ndarray, np.ndarray]:
    lo_q, hi_q = alpha / 2.0, 1.0 - alpha / 2.0
    if kind == "percentile":
        return np.quantile(draws, lo_q, axis=0), np.quantile(draws, hi_q, axis=0)
    if kind == "basic":
        ql, qh = np.quantile(draws, lo_q, axis=0), np.quantile(draws, hi_q, axis=0)
        return 2.0 * est - qh, 2.0 * est - ql
    # studentized: columns whose SE is zero fall back to the basic interval
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (draws - est) / dse
    lo = np.empty(est.size)
    hi = np.empty(est.size)
    for j in range(est.size):
        tj = t[:, j]
        tj = tj[np.isfinite(tj)]
        if se[j] > 0 and tj.size >= 20:
            lo[j] = est[j] - np.quantile(tj, hi_q) * se[j]
            hi[j] = est[j] - np.quantile(tj, lo_q) * se[j]
        else:
            ql, qh = np.quantile(draws[:, j], lo_q), np.quantile(draws[:, j], hi_q)
            lo[j], hi[j] = 2.0 * est[j] - qh, 2.0 * est[j] - ql
    return lo, hi


def normal_quantile(alpha: float) -> float:
    return float(stats.norm.ppf(1.0 - alpha / 2.0))
