"""Iterative Hessian mixing (IHM): DP least squares from Gaussian sketches of the Hessian.

A research implementation kept in the studies (not shipped in the dpreg wheel): measured against
AdaSSP and BoostedAdaSSP on dpreg's thirteen offline data sets it won no majority of the cells
(docs/multivariate.md), so it is not a library method.  It builds on dpreg's mechanisms,
sensitivities and accounting types; dpreg never imports it.

Follows Lev, Shenfeld, Srinivasan, Ligett & Wilson (2026), "Near-Optimal Private Linear
Regression via Iterative Hessian Mixing" (arXiv:2601.07545), which builds on the Gaussian
sketch ("mixing") mechanism for DP least squares of Sheffet (2017) and Lev et al. (2025) and on
the iterative Hessian sketch of Pilanci & Wainwright (2016).  This is an implementation written
from the mathematics; the accounting below is dpreg's own (an exact Rényi-DP composition,
converted once), not the authors' constants.

Data: rows clipped to ‖x‖₂ <= B (``x_norm_bound``), residuals clipped to [−C, C] (``tau``).

Releases (add/remove neighbours; one record appears or disappears):

1. **λ_min**: λ_min(XᵀX) + σ_λ·Z (Gaussian, Δ = B², :func:`lambda_min_sensitivity`), turned into
   the lower bound λ̃ = max(0, λ_min + σ_λ·Z − σ_λ·z_f), z_f = Φ⁻¹(1 − δ_f).
2. **T Hessian sketches**: with the mixing level γ̃² = max(0, γ − λ̃), k×d matrices M_t whose
   rows are i.i.d. N(0, Σ), Σ = XᵀX + γ̃²·I.  The paper writes M_t = S_t·X + γ̃·N_t with S_t
   (k×n) and N_t (k×d) standard Gaussian; its rows have exactly this law, and M_t = G_t·Σ^{1/2}
   with G_t (k×d) standard Gaussian draws the same distribution in O(kd²) instead of O(knd).
   Ĥ_t = M_tᵀM_t/k (≈ XᵀX + γ̃²I).
3. **T gradients**: g_t = Xᵀ clip(y − Xθ_t, ±C) + N(0, σ_g²I) (Gaussian, Δ = B·C,
   :func:`xty_sensitivity`); θ_{t+1} = θ_t + Ĥ_t⁻¹ g_t, θ_0 = 0.

**Privacy** (:func:`ihm_rdp`, :func:`ihm_epsilon`).  On the event λ̃ <= λ_min(X_+ᵀX_+) (X_+ the
larger of the two neighbours), Σ_+ ⪰ γI, so the added row v has t = vᵀΣ_+⁻¹v <= B²/γ = t̄.  One
sketch row N(0, Σ_+) against N(0, Σ_+ − vvᵀ) has Rényi divergences of order α (both
directions; :func:`sketch_row_rdp`)

    D_α(+‖−) = −[ln(1 − αt) − α·ln(1 − t)] / (2(α − 1))     (needs αt < 1),
    D_α(−‖+) = −[ln(1 + (α − 1)t) + (α − 1)·ln(1 − t)] / (2(α − 1)),

both increasing in t, so the larger at t̄ bounds every pair.  k rows and T sketches compose
additively; the Gaussian releases add α·μ_G²/2 with μ_G² = μ_λ² + T·μ_g² (μ = Δ/σ).  The whole
Rényi curve R(α) is converted to (ε, δ') by ε = min_α R(α) + ln((α−1)/α) − (ln δ' + ln α)/(α−1)
(Canonne, Kamath & Steinke 2020; Asoodeh et al. 2021) over a fixed grid of α (every α gives a
valid bound).  The event λ̃ > λ_min(X_+ᵀX_+) has probability <= δ_f under either neighbour
(λ_min of the smaller data set is the smaller); replacing the mechanism on it by one that is
always good changes each side's output law by at most δ_f in total variation, so the run is
(ε, δ' + (1 + e^ε)·δ_f)-DP.  :func:`ihm_budget` fixes δ' = δ/2 and δ_f = δ/(2(1 + e^ε)).

**Budget split** (:func:`ihm_split`): the additive μ²-equivalents (small-t: a sketch row is
≈ t²/4-zCDP, so T sketches of k rows ≈ μ_s² = kT·t̄²/2) are shared as
sketches : λ_min : all gradients = 0.4 : 0.1 : 0.5 (our choice; the paper gives half of ε to
the sketches with λ_min and half to the gradients); one scale is then found by bisection so that
the EXACT Rényi conversion above gives at most ε.

**Neighbouring**: add/remove only (the sketch's divergence bound is for a rank-one change of Σ;
replace-one is refused).  **Randomness**: the Gaussian releases use
:func:`dpreg.mechanisms.gaussian` (secure, seeded or simulation modes); the sketch matrices G_t
are standard normal draws of the generator itself, as for every non-additive mechanism in dpreg
(:mod:`dpreg._random`) -- they are not float-safe (see docs/privacy/hessian_mixing.md).

ε = inf is a non-private reference run: no noise, no sketch (Ĥ = XᵀX), which after the first
step is the least-squares fit (exactly OLS when no residual is clipped).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
from scipy import optimize, special

from dpreg._validation import (
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_rng,
    is_seeded,
)
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import RegressionResults
from dpreg.mechanisms.gaussian import gaussian, gaussian_calls, gaussian_sigma
from dpreg.mechanisms.sensitivity import lambda_min_sensitivity, xty_sensitivity
from dpreg.multivariate._common import (
    check_design,
    clip_rows,
    column_names,
    solve_sym,
    warn_if_not_private,
)
from dpreg.privacy.budgets import GDP, ApproxDP
from dpreg.privacy.ledger import charge
from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement, check_neighbouring

#: why the release has no interval (the library's uncertainty table does not list study methods)
NO_CI_TEXT = ("none: iterative Hessian mixing releases a few Newton steps built from randomly "
              "sketched Hessians and clipped noisy gradients; the released coefficients do not "
              "determine their sampling distribution, so no valid post-processing interval is "
              "available")

__all__ = ["hessian_mixing", "ihm_budget", "ihm_split", "ihm_rdp", "ihm_epsilon",
           "ihm_sketch_size", "sketch_row_rdp", "IHMBudget", "IHM_SPLIT"]

SOURCE = ("Lev, Shenfeld, Srinivasan, Ligett & Wilson 2026 (iterative Hessian mixing, "
          "arXiv:2601.07545); dpreg's Rényi-DP accounting")

#: shares of the μ²-equivalent budget: sketches, λ_min, all T gradients
IHM_SPLIT = (0.4, 0.1, 0.5)
#: orders α of the Rényi conversion (a fixed public grid; any α gives a valid bound)
_ALPHAS = 1.0 + np.geomspace(1e-4, 1e4, 801)


def ihm_split() -> tuple[float, float, float]:
    """Weights of the μ²-equivalent budget over (sketches, λ_min, gradients); they sum to 1."""
    return IHM_SPLIT


def ihm_sketch_size(dim: int, n_iter: int, delta: float) -> int:
    """The paper's public sketch size k = ⌈6·max(d, ln(4T/ϱ))⌉ with ϱ = δ/10 (its default)."""
    dim = check_int(dim, "dim", minimum=1)
    n_iter = check_int(n_iter, "n_iter", minimum=1)
    delta = check_delta(delta, allow_zero=False)
    return int(math.ceil(6.0 * max(dim, math.log(4.0 * n_iter / (delta / 10.0)))))


def sketch_row_rdp(alpha: Any, t: float) -> np.ndarray:
    """Rényi divergence of order α between N(0, Σ) and N(0, Σ − vvᵀ) for one row, the larger of
    the two directions, where t = vᵀΣ⁻¹v ∈ [0, 1).  +inf where αt >= 1."""
    a = np.asarray(alpha, dtype=float)
    if not 0.0 <= t < 1.0:
        raise InvalidInputError(f"t must be in [0, 1); got {t!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = 1.0 - a * t
        fwd = np.where(inside > 0,
                       -(np.log(np.where(inside > 0, inside, 1.0)) - a * math.log1p(-t))
                       / (2.0 * (a - 1.0)), np.inf)
        bwd = -(np.log1p((a - 1.0) * t) + (a - 1.0) * math.log1p(-t)) / (2.0 * (a - 1.0))
    return np.maximum(fwd, bwd)


def ihm_rdp(alpha: Any, *, sketch_t: float, sketch_rows: int, n_iter: int,
            gaussian_mu: float) -> np.ndarray:
    """Rényi curve R(α) of one IHM run (on the good event): T·k sketch rows at t̄ plus the
    Gaussian releases with composed μ_G (RDP α·μ_G²/2)."""
    a = np.asarray(alpha, dtype=float)
    return (n_iter * sketch_rows * sketch_row_rdp(a, sketch_t)
            + a * gaussian_mu * gaussian_mu / 2.0)


def _rdp_to_epsilon(rdp: np.ndarray, alphas: np.ndarray, delta: float) -> float:
    vals = rdp + np.log((alphas - 1.0) / alphas) - (math.log(delta) + np.log(alphas)) / (alphas - 1.0)
    vals = np.where(np.isfinite(vals), vals, np.inf)
    return float(max(0.0, float(np.min(vals))))


class IHMBudget(NamedTuple):
    """The calibrated noise of one IHM run (:func:`ihm_budget`)."""

    gamma: float  # mixing level γ (Σ ⪰ γI on the good event)
    mu_lambda: GDP  # the λ_min release
    mu_grad: GDP  # one gradient release
    sketch_rows: int  # k
    n_iter: int  # T
    delta_conv: float  # δ' of the Rényi conversion
    delta_fail: float  # δ_f of the λ̃ bound
    z_fail: float  # Φ⁻¹(1 − δ_f)
    epsilon: float  # the ε the whole run satisfies at δ (<= the target)
    charged: ApproxDP  # (ε, δ) charged


def ihm_epsilon(plan: IHMBudget, delta: float, *, x_norm_bound: float = 1.0) -> float:
    """ε of the whole run at ``delta`` (> (1 + e^ε)·δ_f is needed), from the Rényi curve and the
    failure event: the smallest ε with δ'(ε) + (1 + e^ε)·δ_f <= delta, δ' from the conversion."""
    delta = check_delta(delta, allow_zero=False)
    if math.isinf(plan.mu_grad.mu):
        return math.inf
    t = x_norm_bound ** 2 / plan.gamma
    mu_g = math.sqrt(plan.mu_lambda.mu ** 2 + plan.n_iter * plan.mu_grad.mu ** 2)
    rdp = ihm_rdp(_ALPHAS, sketch_t=t, sketch_rows=plan.sketch_rows, n_iter=plan.n_iter,
                  gaussian_mu=mu_g)
    # fixed point: ε = conv(δ − (1 + e^ε)δ_f) (increasing in ε on the right, so iterate up)
    eps = _rdp_to_epsilon(rdp, _ALPHAS, delta / 2.0)
    for _ in range(100):
        rest = delta - (1.0 + math.exp(min(eps, 700.0))) * plan.delta_fail
        if rest <= 0:
            return math.inf
        new = _rdp_to_epsilon(rdp, _ALPHAS, rest)
        if new <= eps:
            return eps
        eps = new
    return eps  # pragma: no cover - converges in a few steps


@lru_cache(maxsize=256)
def ihm_budget(epsilon: float, delta: float, *, sketch_rows: int, n_iter: int,
               x_norm_bound: float = 1.0, residual_bound: float = 1.0) -> IHMBudget:
    """Calibrate IHM at (ε, δ) -- a pure function of public inputs.

    δ' = δ/2 for the Rényi conversion, δ_f = δ/(2(1 + e^ε)) for the λ̃ bound (so
    δ' + (1 + e^ε)δ_f = δ).  With the shares w of :func:`ihm_split`, a scale μ₀ gives
    μ_λ = √w_λ·μ₀, μ_g = √(w_g/T)·μ₀ and γ = B²·(1 + √(kT/(2w_s))/μ₀) (the 1 keeps
    t̄ = B²/γ < 1 as μ₀ → ∞); μ₀ is the largest value (by
    bisection, rounded toward more noise) whose exact Rényi conversion gives ε' <= ε at δ'.
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    k = check_int(sketch_rows, "sketch_rows", minimum=1)
    T = check_int(n_iter, "n_iter", minimum=1)
    bnd = check_positive(x_norm_bound, "x_norm_bound")
    check_positive(residual_bound, "residual_bound")
    w_s, w_l, w_g = ihm_split()
    if math.isinf(eps):
        inf = GDP(math.inf)
        return IHMBudget(0.0, inf, inf, k, T, 0.0, 0.0, math.inf, math.inf,
                         ApproxDP(math.inf, dlt))
    d_conv = dlt / 2.0
    d_fail = dlt / (2.0 * (1.0 + math.exp(min(eps, 700.0))))
    z_fail = float(-special.ndtri(d_fail))

    def plan(mu0: float) -> IHMBudget:
        # γ = B²(1 + √(kT/(2w_s))/μ₀): t̄ = B²/γ < 1 for every μ₀, so μ₀ (and the Gaussian
        # parts' precision) can grow without bound as ε → ∞ while γ → B²
        gamma = bnd * bnd * (1.0 + math.sqrt(k * T / (2.0 * w_s)) / mu0)
        return IHMBudget(gamma, GDP(math.sqrt(w_l) * mu0), GDP(math.sqrt(w_g / T) * mu0),
                         k, T, d_conv, d_fail, z_fail, math.nan, ApproxDP(eps, dlt))

    def excess(log_mu0: float) -> float:
        p = plan(math.exp(log_mu0))
        t = bnd * bnd / p.gamma
        mu_g = math.sqrt(p.mu_lambda.mu ** 2 + T * p.mu_grad.mu ** 2)
        rdp = ihm_rdp(_ALPHAS, sketch_t=t, sketch_rows=k, n_iter=T, gaussian_mu=mu_g)
        return _rdp_to_epsilon(rdp, _ALPHAS, d_conv) - eps

    lo = math.log(1e-8)
    if excess(lo) > 0:  # pragma: no cover - ε below ~1e-14
        raise InvalidInputError(f"epsilon is too small for iterative Hessian mixing; got {eps!r}")
    hi = lo + 1.0
    while excess(hi) <= 0:
        lo, hi = hi, hi + 1.0
    root = optimize.brentq(excess, lo, hi, xtol=1e-12)
    while excess(root) > 0:
        root -= 1e-9
    p = plan(math.exp(root))
    achieved = ihm_epsilon(p, dlt, x_norm_bound=bnd)
    return p._replace(epsilon=achieved)


def hessian_mixing(
    X: Any,
    y: Any,
    *,
    epsilon: float,
    delta: float,
    x_norm_bound: float = 1.0,
    tau: float = 1.0,
    n_iter: int = 3,
    sketch_size: int | None = None,
    neighbouring: str | Neighbouring = "add-remove",
    rng: Any = None,
    ledger: Any = None,
    names: Any = None,
) -> RegressionResults:
    """Iterative Hessian mixing on the design ``X`` (include a ones column for an intercept).

    Parameters
    ----------
    X, y:
        Design (n×d) and response.  Rows are clipped to ‖x‖₂ <= ``x_norm_bound``; residuals
        to [−τ, τ] every iteration (so y needs no bound).
    epsilon, delta:
        Target (ε, δ), δ > 0 (the run is (ε', δ)-DP with ε' <= ε, see the module doc).
    x_norm_bound, tau:
        PUBLIC row bound B (1: scale rows into the unit ball first) and residual clip C (1).
    n_iter:
        T, the number of sketch-and-step iterations (3, the paper's choice).
    sketch_size:
        k, rows per sketch; default the paper's ⌈6·max(d, ln(4T/ϱ))⌉, ϱ = δ/10.
    neighbouring:
        ``"add-remove"`` only (the sketch's divergence bound is for a rank-one change).
    rng, ledger, names:
        Randomness; optional ledger charged with (ε, δ) after validation and before any noise;
        coefficient names.
    """
    Xa, ya = check_design(X, y)
    n, d = Xa.shape
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    bnd = check_positive(x_norm_bound, "x_norm_bound")
    c = check_positive(tau, "tau")
    T = check_int(n_iter, "n_iter", minimum=1, maximum=1000)
    k = (ihm_sketch_size(d, T, dlt) if sketch_size is None
         else check_int(sketch_size, "sketch_size", minimum=1, maximum=10_000_000))
    rel = check_neighbouring(neighbouring)
    if rel is not Neighbouring.ADD_REMOVE:
        raise InvalidInputError(
            "neighbouring must be 'add-remove' for iterative Hessian mixing (its sketch bound "
            f"is for one added or removed row); got {neighbouring!r}")
    labels = column_names(X, d, names)
    gen = check_rng(rng)
    plan = ihm_budget(eps, dlt, sketch_rows=k, n_iter=T, x_norm_bound=bnd, residual_bound=c)
    budget = ApproxDP(eps, dlt)
    charge(ledger, budget, "IterativeHessianMixing", rel)
    warn_if_not_private(eps, "IterativeHessianMixing")

    d_lam = lambda_min_sensitivity(bnd, rel)
    d_g = xty_sensitivity(bnd, c, rel)
    Xc = clip_rows(Xa, bnd)
    xtx = Xc.T @ Xc
    theta = np.zeros(d)
    hessians = np.empty((T, d, d))
    gradients = np.empty((T, d))
    if math.isinf(eps):
        sd_lam = sd_g = 0.0
        lam_lower = gamma_mix = 0.0
        for t in range(T):
            g = Xc.T @ np.clip(ya - Xc @ theta, -c, c)
            hessians[t], gradients[t] = xtx, g
            theta = theta + solve_sym(xtx, g)
    else:
        sd_lam = gaussian_sigma(d_lam, plan.mu_lambda)
        sd_g = gaussian_sigma(d_g, plan.mu_grad)
        lam_min = max(0.0, float(np.linalg.eigvalsh(xtx)[0]))
        lam_hat = float(gaussian(lam_min, sensitivity=d_lam, budget=plan.mu_lambda, rng=gen))
        lam_lower = max(0.0, lam_hat - sd_lam * plan.z_fail)
        gamma_mix = max(0.0, plan.gamma - lam_lower)
        w, V = np.linalg.eigh(xtx + gamma_mix * np.eye(d))
        root = (V * np.sqrt(np.clip(w, 0.0, None))) @ V.T  # Σ^{1/2}
        release_g = gaussian_calls(T, sensitivity=d_g, budget=plan.mu_grad, rng=gen)
        for t in range(T):
            M = gen.standard_normal((k, d)) @ root  # rows i.i.d. N(0, Σ): the Gaussian sketch
            hessians[t] = H = (M.T @ M) / k
            gradients[t] = g = np.asarray(release_g(Xc.T @ np.clip(ya - Xc @ theta, -c, c)),
                                          dtype=float)
            theta = theta + solve_sym(H, g)

    privacy = PrivacyStatement(
        budget=budget, neighbouring=rel, mechanism="IterativeHessianMixing", source=SOURCE,
        seeded=is_seeded(rng),
        details={
            "requested": {"epsilon": eps, "delta": dlt},
            "implied_epsilon": plan.epsilon,
            "n_iter": T, "sketch_size": k, "tau": c, "x_norm_bound": bnd,
            "gamma": plan.gamma, "split": dict(zip(("sketches", "lambda_min", "gradients"),
                                                   IHM_SPLIT)),
            "sensitivity": {"lambda_min": d_lam, "Xtg": d_g},
            "noise_sd": {"lambda_min": sd_lam, "Xtg": sd_g},
            "mu": {"lambda_min": plan.mu_lambda.mu, "Xtg_round": plan.mu_grad.mu},
            "delta_parts": {"conversion": plan.delta_conv, "lambda_bound": plan.delta_fail},
        },
    )
    return RegressionResults(
        theta, names=labels, privacy=privacy, method="hessian-mixing",
        uncertainty=NO_CI_TEXT, ci_method="none", nobs=None,
        extra={"mixing": gamma_mix, "lambda_lower": lam_lower, "hessians": hessians,
               "gradients": gradients},
    )
