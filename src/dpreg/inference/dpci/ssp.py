"""Bootstrap worlds of noisy-sufficient-statistics releases: the SSCP (Analyze Gauss) release
behind ``SSCPRelease.regress``/``CovarianceOLS``, and AdaSSP with ``inference=True``.

Data model (conditional on the regressors, as for the classical OLS interval): y = Zβ + e with
i.i.d. errors of variance σ².  Given Z the sufficient statistics are ZᵀZ (fixed), Zᵀy = ZᵀZβ + u
with u ~ N(0, σ²ZᵀZ), and yᵀy = βᵀZᵀZβ + 2βᵀu + uᵀ(ZᵀZ)⁻¹u + R with R ~ σ²χ²_{n−p} independent
of u (exact for Gaussian errors, central-limit approximation otherwise).  Following Ferrando,
Wang & Sheldon (2022, §5: their OLS adaptation never touches the covariates again) the unknown
ZᵀZ of the bootstrap world is the released noisy one (repaired/projected to be positive
semi-definite), β and σ² are the estimates from the release, and every replicate runs the
mechanism again: fresh Gaussian noise of the release's σ on the same entries, the same PSD
repair / ridge rule, the same solve.

The studentizing covariance of an estimate θ = A⁻¹b from a noisy pair (A, b) is the delta
method: Var θ ≈ A⁻¹[σ̂²·ZᵀZ + Cov(δb − δA·θ)]A⁻¹, where δ are the privacy-noise perturbations
(their covariance is known exactly from the noise law), evaluated at the release itself.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpreg.inference.dpci.engine import BootstrapModel

__all__ = ["SSCPModel", "AdaSSPModel", "ADASSP_NOISE_RATIO_LIMIT", "SSCP_REPAIR_SHIFT_LIMIT",
           "sym_noise_cov",
           "batched_repair_psd"]


# --------------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------------
def sym_noise_cov(P: int) -> np.ndarray:
    """Cov(vec E)/s² for a symmetric P×P matrix E with i.i.d. entries on and above the
    diagonal: 1{{i,j} = {k,l}} at ((i,j), (k,l)) (row-major vec)."""
    idx = np.arange(P)
    gi, gj = np.meshgrid(idx, idx, indexing="ij")
    i, j = gi.ravel(), gj.ravel()
    a = np.minimum(i, j)
    b = np.maximum(i, j)
    same = (a[:, None] == a[None, :]) & (b[:, None] == b[None, :])
    return same.astype(float)


def sym_normal(size: int, P: int, sd: float, rng: np.random.Generator) -> np.ndarray:
    """``size`` symmetric P×P matrices with i.i.d. N(0, sd²) on and above the diagonal."""
    iu = np.triu_indices(P)
    out = np.zeros((size, P, P))
    out[:, iu[0], iu[1]] = rng.normal(0.0, sd, size=(size, iu[0].size))
    out = out + np.triu(out, 1).transpose(0, 2, 1)
    return out


def batched_repair_psd(M: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`dpreg.covariance.repair_psd` on a stack (B, P, P): (repaired, ok)."""
    sym = (M + M.transpose(0, 2, 1)) / 2.0
    vals, vecs = np.linalg.eigh(sym)
    scale = np.max(np.abs(vals), axis=1)
    thr = tol * scale
    good = vals > thr[:, None]
    ok = (scale > 0) & good.any(axis=1)
    fill = np.where(good, vals, np.inf).min(axis=1)
    fill = np.where(np.isfinite(fill), fill, 1.0)
    fixed = np.where(good, vals, fill[:, None])
    out = np.einsum("bij,bj,bkj->bik", vecs, fixed, vecs)
    out = (out + out.transpose(0, 2, 1)) / 2.0
    # matrices that needed no repair are returned as their symmetrised input (as repair_psd)
    untouched = good.all(axis=1)
    out[untouched] = sym[untouched]
    return out, ok


def _gram_noise_term(theta: np.ndarray, sd: float) -> np.ndarray:
    """Cov(E·θ) for a symmetric E with i.i.d. N(0, sd²) on and above the diagonal, stacked:
    sd²·(δ_ij‖θ‖² + θ_iθ_j − δ_ij θ_i²)."""
    sq = np.sum(theta**2, axis=-1)
    outer = theta[..., :, None] * theta[..., None, :]
    eye = np.eye(theta.shape[-1])
    return sd * sd * (eye * (sq[..., None, None]) + outer - eye * (theta**2)[..., None, :])


def _psd_part(M: np.ndarray) -> np.ndarray:
    vals, vecs = np.linalg.eigh((M + np.swapaxes(M, -1, -2)) / 2.0)
    vals = np.maximum(vals, 0.0)
    return np.einsum("...ij,...j,...kj->...ik", vecs, vals, vecs)


# --------------------------------------------------------------------------------------------
# SSCP release
# --------------------------------------------------------------------------------------------
#: an SSCP release whose PSD repair moved the model's estimate (raw vs repaired solve) by more
#: than this many DP-aware standard errors is refused an interval (the repair's bias is not
#: reproduced by the bootstrap; docs/uncertainty.md)
SSCP_REPAIR_SHIFT_LIMIT = 0.1

class SSCPModel(BootstrapModel):
    """Bootstrap world of ``SSCPRelease.regress(formula)``.

    Parameters are the release's public metadata and the indices (in [intercept] + columns) of
    the regressors and the response.  Other released columns are kept as fixed covariates in the
    simulated matrix (so the PSD repair of the whole matrix is replayed exactly); the response
    is generated from the formula's own regression.
    """

    description = ("SSCP release: y = Xβ + e given all released covariates, with ZᵀZ, β and σ² "
                   "from the repaired noisy matrix; Gaussian noise re-drawn on the scaled matrix, "
                   "PSD repair and the regression replayed")

    def __init__(self, *, scaled_repaired: np.ndarray, noisy_count: float,
                 bounds: list[tuple[float, float]], sigma: float, psd_tol: float,
                 n_public: float | None, x_idx: list[int], y_idx: int,
                 names: list[str], noisy_scaled: np.ndarray | None = None) -> None:
        P = scaled_repaired.shape[0]
        self.P = P
        self.sigma = float(sigma)
        self.tol = float(psd_tol)
        self.n_public = None if n_public is None else float(n_public)
        self.x_idx = list(x_idx)
        self.y_idx = int(y_idx)
        self.names = list(names)
        self.p = len(self.x_idx)
        T = np.zeros((P, P))
        T[0, 0] = 1.0
        for i, (lo, hi) in enumerate(bounds, start=1):
            T[0, i] = lo
            T[i, i] = hi - lo
        self.T = T
        self.Tinv = np.linalg.inv(T)
        C = T.T @ scaled_repaired @ T
        self.C = (C + C.T) / 2.0
        self.noisy_count = float(noisy_count)
        # covariance of vec(TᵀET) / 1 (σ included)
        TT = np.kron(T, T)  # vec(TᵀET) = (T⊗T)ᵀ vec(E) in row-major
        self.noise_cov_vec = self.sigma**2 * TT.T @ sym_noise_cov(P) @ TT
        # bootstrap world
        beta, cov, s2 = self._fit(self.C[None], np.array([self._n_used(self.noisy_count)]))
        self.beta_hat = beta[0]
        self.cov_hat = cov[0]
        self.s2 = float(s2[0])
        Mx = self.C[np.ix_(self.x_idx, self.x_idx)]
        #: plug-in covariance ignoring the privacy noise (for comparison only)
        self.plugin_cov = self.s2 * np.linalg.inv(Mx)
        self.Z = [j for j in range(P) if j != self.y_idx]
        MZ = self.C[np.ix_(self.Z, self.Z)]
        self.MZ = MZ
        bz = np.zeros(len(self.Z))
        for a, j in enumerate(self.x_idx):
            bz[self.Z.index(j)] = self.beta_hat[a]
        self.bZ = bz
        vals, vecs = np.linalg.eigh(MZ)
        self.L = vecs * np.sqrt(np.maximum(vals, 0.0))
        self.n_world = self._n_used(self.noisy_count)
        self._diagnose(scaled_repaired if noisy_scaled is None
                       else np.asarray(noisy_scaled, dtype=float))

    def _diagnose(self, raw: np.ndarray) -> None:
        """The refusal rule, from released values only (issue 18).

        * κ = σ / λ_min of the released (unrepaired) scaled block of the **regressors** (the
          matrix the regression inverts; the response column is not in it).
        * The residual part: the released residual sum of squares of this model, i.e. the
          Schur complement S = yy − vᵀM⁻¹v of the response in the unrepaired scaled matrix of
          the model's columns, and its noise sd σ_S = σ·√(2‖w‖⁴ − Σw⁴) with w = (−M⁻¹v, 1)
          (the sd of wᵀEw for the symmetric noise E).  When S <= 0 the model's block is not
          positive definite: the PSD repair lifts its smallest eigenvalue to the next one and
          so shrinks the estimate (a ridge of that size), and the stress runs and real data
          showed intervals of such releases covering far below nominal.  The rule also
          refuses when the repair of a larger release moved this model's estimate by more
          than :data:`SSCP_REPAIR_SHIFT_LIMIT` DP-aware standard errors.
        """
        raw = (raw + raw.T) / 2.0
        xi, yi = self.x_idx, self.y_idx
        M = raw[np.ix_(xi, xi)]
        lam_x = float(np.linalg.eigvalsh(M)[0]) if xi else math.inf
        #: κ of the regressor block (the noise ratio the rule and ``dp_ci_noise_ratio`` use)
        self.noise_ratio = self.sigma / lam_x if lam_x > 0 else math.inf
        self.residual_ss = math.nan
        self.residual_ss_sd = math.nan
        self.repair_shift = 0.0
        if lam_x > 0:
            # in original units (the model's own span, with or without an intercept), then
            # back on the response's [0, 1] scale: S' = S / r_y²
            C_raw = self.T.T @ raw @ self.T
            C_raw = (C_raw + C_raw.T) / 2.0
            v = C_raw[xi, yi]
            beta_raw = np.linalg.solve(C_raw[np.ix_(xi, xi)], v)
            r_y2 = self.T[yi, yi] ** 2
            self.residual_ss = float(C_raw[yi, yi] - v @ beta_raw) / r_y2
            w = np.zeros(self.P)
            w[xi] = -beta_raw
            w[yi] = 1.0
            wt = self.T @ w  # wᵀTᵀETw = (Tw)ᵀE(Tw)
            self.residual_ss_sd = self.sigma * math.sqrt(
                max(2.0 * float(wt @ wt) ** 2 - float(np.sum(wt**4)), 0.0)) / r_y2
            # how far the repair moved the estimate: raw vs repaired solve, in DP-aware SEs
            se = np.sqrt(np.maximum(np.diag(self.cov_hat), 0.0))
            with np.errstate(divide="ignore", invalid="ignore"):
                shift = np.where(se > 0, np.abs(beta_raw - self.beta_hat) / se, 0.0)
            self.repair_shift = float(np.max(shift))
        #: the PSD repair changed this model's part of the release (residual sum of squares
        #: below the noise, or the estimate moved by more than the limit)
        self.repaired = bool(not self.residual_ss > 0
                             or self.repair_shift > SSCP_REPAIR_SHIFT_LIMIT)
        self.sufficient = bool(self.noise_ratio <= self.noise_ratio_limit and not self.repaired)

    def refusal(self) -> str:
        """Why the release is refused an interval (only meaningful when ``sufficient`` is
        False); every number in it is a released or public value."""
        k = self.noise_ratio
        if not k <= self.noise_ratio_limit:
            what = (f"its regressor block is dominated by the privacy noise (κ = noise sd / "
                    f"smallest eigenvalue of the released regressor block = {k:.3g}; the limit "
                    f"is {self.noise_ratio_limit:g})" if math.isfinite(k) else
                    "its regressor block is not even positive definite (the privacy noise "
                    "exceeds the regressors' smallest eigenvalue)")
            more = (f"about {k / self.noise_ratio_limit:.2g}× the rows or ε (κ falls in "
                    f"proportion to both)" if math.isfinite(k)
                    else "many more rows or a much larger ε")
            return (f"none: refused -- the released SSCP matrix carries too little information "
                    f"for a valid interval: {what}, so the estimate is biased by an amount the "
                    f"release cannot correct (such intervals covered far below nominal, "
                    f"docs/uncertainty.md). Needs {more}, or fewer regressors")
        if not self.residual_ss > 0:
            what = (f"the model's released residual sum of squares is {self.residual_ss:.3g} "
                    f"(on the [0, 1]-scaled release; its privacy-noise sd is "
                    f"{self.residual_ss_sd:.3g}), so the matrix is not positive definite and "
                    f"the PSD repair had to change it")
        else:
            what = (f"the PSD repair of the release moved this model's estimate by "
                    f"{self.repair_shift:.2g} DP-aware standard errors (limit "
                    f"{SSCP_REPAIR_SHIFT_LIMIT:g})")
        return (f"none: refused -- the released SSCP matrix carries too little information "
                f"about the residual variance for a valid interval: {what}; the repair "
                f"shrinks the estimate like a ridge, by an amount the release cannot correct "
                f"(such intervals covered far below nominal, docs/uncertainty.md). The "
                f"residual sum of squares must clearly exceed the noise: it grows with the "
                f"rows and with tighter public bounds of the response, the noise sd falls in "
                f"proportion to ε")

    def _n_used(self, noisy_count: Any) -> Any:
        if self.n_public is not None:
            return np.full(np.shape(noisy_count), self.n_public) if np.ndim(noisy_count) else \
                self.n_public
        return noisy_count

    def _fit(self, C: np.ndarray, n_used: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """β, DP-aware covariance and σ̂² for a stack of original-unit matrices (B, P, P)."""
        xi, yi = self.x_idx, self.y_idx
        M = C[:, xi][:, :, xi]
        v = C[:, xi, yi]
        yy = C[:, yi, yi]
        beta = np.linalg.solve(M, v[..., None])[..., 0]
        rss = yy - 2.0 * np.einsum("bi,bi->b", beta, v) + np.einsum("bi,bij,bj->b", beta, M, beta)
        df = n_used - self.p
        with np.errstate(divide="ignore", invalid="ignore"):
            s2 = np.where(df > 0, np.maximum(rss, 0.0) / np.where(df > 0, df, 1.0), 0.0)
        Minv = np.linalg.inv(M)
        # g = δv − δM·β as a linear functional of vec(N) (row-major, P×P)
        B = C.shape[0]
        G = np.zeros((B, self.p, self.P * self.P))
        for a, i in enumerate(xi):
            G[:, a, i * self.P + yi] += 1.0
            for k, j in enumerate(xi):
                G[:, a, i * self.P + j] -= beta[:, k]
        Vg = np.einsum("bap,pq,bcq->bac", G, self.noise_cov_vec, G)
        cov = s2[:, None, None] * Minv + Minv @ Vg @ Minv
        return beta, cov, s2

    def released(self) -> tuple[np.ndarray, np.ndarray]:
        return self.beta_hat.copy(), self.cov_hat.copy()

    def replicate(self, size: int, rng: np.random.Generator
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        P, Z, y = self.P, self.Z, self.y_idx
        s = math.sqrt(self.s2)
        pz = len(Z)
        zz = rng.standard_normal((size, pz))
        u = s * zz @ self.L.T
        df = max(float(self.n_world) - pz, 1.0)
        R = self.s2 * rng.chisquare(df, size)
        C = np.broadcast_to(self.C, (size, P, P)).copy()
        zy = self.MZ @ self.bZ + u
        C[:, Z, y] = zy
        C[:, y, Z] = zy
        C[:, y, y] = (self.bZ @ self.MZ @ self.bZ + 2.0 * u @ self.bZ
                      + self.s2 * np.sum(zz * zz, axis=1) + R)
        S = self.Tinv.T @ C @ self.Tinv
        noisy = S + sym_normal(size, P, self.sigma, rng)
        rep, ok = batched_repair_psd(noisy, self.tol)
        Co = self.T.T @ rep @ self.T
        Co = (Co + Co.transpose(0, 2, 1)) / 2.0
        Mx = Co[:, self.x_idx][:, :, self.x_idx]
        with np.errstate(all="ignore"):
            cond = np.linalg.cond(Mx)
        ok &= np.isfinite(cond) & (cond < 1e14)
        Co[~ok] = self.C
        beta, cov, _ = self._fit(Co, np.asarray(self._n_used(noisy[:, 0, 0]), dtype=float))
        return beta, cov, ok


# --------------------------------------------------------------------------------------------
# AdaSSP with inference=True
# --------------------------------------------------------------------------------------------
#: κ = σ_XX / λ_min(noisy XᵀX) above which an AdaSSP release is refused an interval (the
#: un-ridged solve the interval needs is then dominated by the noise; same limit as the SSCP
#: release, whose stress runs covered at κ <= 0.35 and failed at κ = 1.33)
ADASSP_NOISE_RATIO_LIMIT = 0.5


class AdaSSPModel(BootstrapModel):
    """Bootstrap world of an AdaSSP release made with ``inference=True``.

    Released: XᵀX~ (sd ``sd_xx`` on the upper triangle), Xᵀy~ (sd ``sd_xy``), yᵀy~ (sd
    ``sd_yy``), λ_min~ (sd ``sd_lam``); the ridge λ and θ̃ = (XᵀX~ + λI)⁻¹Xᵀy~ are functions
    of them.  n is public (replace-one) or the noisy count on the diagonal entry of a public
    ones column (``count_index``).

    **The interval targets the regression coefficient β, not the ridge estimate.**  θ̃ is
    shrunk toward 0 by λ (on small data λ can dwarf XᵀX: the shrinkage is then most of the
    estimate), so a bootstrap world centred at θ̃ reproduces a shrunk-of-shrunk law and its
    intervals miss β.  The world is centred at the de-shrunk estimate β̂ = (XᵀX~)⁻¹Xᵀy~ of the
    same release, and every replicate replays the four releases and computes the same
    de-shrunk estimate, so the percentile interval is for β; λ does not enter it.  This needs
    XᵀX~ to be well determined: when κ = σ_XX / λ_min(XᵀX~) exceeds
    :data:`ADASSP_NOISE_RATIO_LIMIT` (``sufficient`` is False) the caller refuses the interval.
    ``released()`` returns (β̂, its delta-method covariance); ``theta_ridge`` is θ̃.
    """

    description = ("AdaSSP: y = Xβ + e given X, world centred at the de-shrunk estimate "
                   "(XᵀX~)⁻¹Xᵀy~ with σ² from the noisy statistics; the four Gaussian releases "
                   "and Wang's ridge rule replayed, the interval read off the de-shrunk "
                   "replicates (the ridge estimate is biased toward 0 by λ)")
    noise_ratio_limit = ADASSP_NOISE_RATIO_LIMIT

    def __init__(self, *, xtx: np.ndarray, xty: np.ndarray, yty: float, lam_min: float,
                 theta: np.ndarray, sd: dict[str, float], log_term: float, ridge_const: float,
                 n_public: float | None, count_index: int | None, count_scale: float,
                 label_bound: float, names: list[str]) -> None:
        self.d = int(xtx.shape[0])
        self.names = list(names)
        self.sd = {k: float(v) for k, v in sd.items()}
        self.log_term = float(log_term)          # √ln(6/δ)
        self.ridge_const = float(ridge_const)    # √(d·ln(2d²/ρ))
        self.n_public = None if n_public is None else float(n_public)
        self.count_index = count_index
        self.count_scale = float(count_scale)
        self.label_bound = float(label_bound)
        self.xtx = (np.asarray(xtx, dtype=float) + np.asarray(xtx, dtype=float).T) / 2.0
        self.xty = np.asarray(xty, dtype=float)
        self.yty = float(yty)
        self.lam_min = float(lam_min)
        self.theta_ridge = np.asarray(theta, dtype=float)
        self.lam = float(self._ridge(np.array([self.lam_min]))[0])
        # κ: noise sd of XᵀX over the smallest eigenvalue of the UN-regularised noisy XᵀX (the
        # ridge hides nothing here: the interval needs the un-ridged solve)
        mu_min = float(np.linalg.eigvalsh(self.xtx)[0])
        self.gram_min_eigenvalue = mu_min
        self.noise_ratio = self.sd["XtX"] / mu_min if mu_min > 0 else math.inf
        self.sufficient = bool(self.noise_ratio <= self.noise_ratio_limit)
        n0 = self._n(self.xtx[None])[0]
        self.n_world = float(n0)
        if self.sufficient:
            self.theta = np.linalg.solve(self.xtx, self.xty)
        else:  # no world is built (the caller refuses); keep the attributes defined
            self.theta = self.theta_ridge.copy()
        cov, s2 = self._cov(self.xtx[None], self.xty[None], np.array([self.yty]),
                            self.theta[None], np.array([n0]))
        self.cov_hat = cov[0]
        self.s2 = float(s2[0])
        Ainv = np.linalg.pinv(self.xtx, hermitian=True)
        #: plug-in covariance ignoring the privacy noise (for comparison only)
        self.plugin_cov = self.s2 * Ainv @ _psd_part(self.xtx) @ Ainv
        # bootstrap world
        vals, vecs = np.linalg.eigh(self.xtx)
        vals = np.maximum(vals, 0.0)
        self.M = (vecs * vals) @ vecs.T
        self.L = vecs * np.sqrt(vals)
        self.pos = vals > 0
        self.lam_min_world = max(self.lam_min, 0.0)

    def _n(self, xtx: np.ndarray) -> np.ndarray:
        if self.n_public is not None:
            return np.full(xtx.shape[0], self.n_public)
        assert self.count_index is not None
        j = self.count_index
        return np.maximum(xtx[:, j, j] / self.count_scale, float(self.d + 1))

    def _ridge(self, lam_min_noisy: np.ndarray) -> np.ndarray:
        lower = np.maximum(0.0, lam_min_noisy - self.sd["lambda_min"] * self.log_term)
        return np.maximum(0.0, self.sd["XtX"] * self.ridge_const - lower)

    def _cov(self, xtx: np.ndarray, xty: np.ndarray, yty: np.ndarray, theta: np.ndarray,
             n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Delta-method covariance of the de-shrunk estimate θ = (XᵀX~)⁻¹Xᵀy~ and σ̂²."""
        d = self.d
        rss = (yty - 2.0 * np.einsum("bi,bi->b", theta, xty)
               + np.einsum("bi,bij,bj->b", theta, xtx, theta))
        df = np.maximum(n - d, 1.0)
        s2 = np.clip(rss, 0.0, n * self.label_bound**2) / df
        with np.errstate(all="ignore"):
            Ainv = np.linalg.pinv(xtx, hermitian=True)
        mid = (s2[:, None, None] * _psd_part(xtx) + self.sd["Xty"] ** 2 * np.eye(d)
               + _gram_noise_term(theta, self.sd["XtX"]))
        return Ainv @ mid @ Ainv, s2

    def released(self) -> tuple[np.ndarray, np.ndarray]:
        return self.theta.copy(), self.cov_hat.copy()

    def simulate_releases(self, size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """``size`` replays of the four releases on data from the world: the noisy
        statistics, the ridge λ and θ̃ (``"ridge"``), and the de-shrunk estimate
        (``"deshrunk"``; ``"ok"`` where its solve is well conditioned)."""
        d = self.d
        s = math.sqrt(self.s2)
        zz = rng.standard_normal((size, d))
        u = s * zz @ self.L.T
        df = max(self.n_world - int(self.pos.sum()), 1.0)
        R = self.s2 * rng.chisquare(df, size)
        beta = self.theta
        xty = self.M @ beta + u
        yty = (beta @ self.M @ beta + 2.0 * u @ beta + self.s2 * np.sum(zz[:, self.pos] ** 2, axis=1)
               + R)
        lam_noisy = self.lam_min_world + rng.normal(0.0, self.sd["lambda_min"], size)
        lam = self._ridge(lam_noisy)
        xtx_n = self.M + sym_normal(size, d, self.sd["XtX"], rng)
        xty_n = xty + rng.normal(0.0, self.sd["Xty"], (size, d))
        yty_n = yty + rng.normal(0.0, self.sd["yty"], size)
        ridge = _solve_stack(xtx_n + lam[:, None, None] * np.eye(d), xty_n)[0]
        deshrunk, good = _solve_stack(xtx_n, xty_n)
        return {"xtx": xtx_n, "xty": xty_n, "yty": yty_n, "lam": lam, "ridge": ridge,
                "deshrunk": deshrunk, "ok": good & np.all(np.isfinite(deshrunk), axis=1)}

    def replicate(self, size: int, rng: np.random.Generator
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sim = self.simulate_releases(size, rng)
        theta = sim["deshrunk"]
        cov, _ = self._cov(sim["xtx"], sim["xty"], sim["yty"], theta, self._n(sim["xtx"]))
        return theta, cov, sim["ok"]

    def refusal(self) -> str:
        """Why no interval is given (only meaningful when ``sufficient`` is False); every
        number in it is a released or public value."""
        k = self.noise_ratio
        factor = k / self.noise_ratio_limit if math.isfinite(k) else math.inf
        what = (f"κ = noise sd {self.sd['XtX']:.3g} / smallest eigenvalue "
                f"{self.gram_min_eigenvalue:.3g} = {k:.3g} > {self.noise_ratio_limit:g}"
                if math.isfinite(k) else
                f"it is not even positive definite: noise sd {self.sd['XtX']:.3g}, smallest "
                f"eigenvalue {self.gram_min_eigenvalue:.3g}; κ must be <= "
                f"{self.noise_ratio_limit:g}")
        more = (f"about {factor:.2g}× the rows or {factor:.2g}× the ε" if math.isfinite(factor)
                else "many more rows or a much larger ε")
        return (f"none: refused -- this AdaSSP release carries too little information for a "
                f"valid interval: its noisy XᵀX is dominated by the privacy noise ({what}), so "
                f"AdaSSP's ridge (λ = {self.lam:.3g}) shrinks the estimate toward 0 by an "
                f"amount the release cannot correct. Needs {more} (κ falls in proportion to "
                f"both), or try method covariance-ols, which spends the whole budget on one "
                f"matrix and refuses its own interval when that matrix is noise-dominated or "
                f"had to be repaired")


def _solve_stack(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Solve a stack A x = b: (x, well-conditioned flag); ill-conditioned systems get the
    pseudo-inverse solution."""
    with np.errstate(all="ignore"):
        cond = np.linalg.cond(A)
    good = np.isfinite(cond) & (cond < 1e12)
    x = np.empty(b.shape)
    if good.any():
        x[good] = np.linalg.solve(A[good], b[good][..., None])[..., 0]
    if (~good).any():
        with np.errstate(all="ignore"):
            x[~good] = np.einsum("bij,bj->bi", np.linalg.pinv(A[~good], hermitian=True),
                                 b[~good])
    return x, good
