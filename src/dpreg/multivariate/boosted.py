"""BoostedAdaSSP: gradient boosting with AdaSSP as the base learner (Tang et al. 2023, Alg. 1).

Accounting is in μ-Gaussian DP.  μ is the largest value with μ-GDP ⇒ (ε, δ)-DP on the exact
trade-off curve (:meth:`dpreg.GDP.from_approx`); it is split as μ₁ : μ₂ : μ₃ = a : b : c with
μ₁² + μ₂² + μ₃² = μ² (default a = b = c; ``split="author"`` is 1 : √T : 1, the allocation the
authors' 2023 code uses when it gives one noise multiplier to all T + 2 releases).  XᵀX and
λ_min(XᵀX) are released once (μ₁ and μ₃); every one of the T rounds releases Xᵀg_t with
μ₂/√T, so the composition is √(μ₁² + T·μ₂²/T + μ₃²) = μ.

Noise standard deviations are Δ/μ_i with the sensitivities of the chosen neighbouring relation
(:mod:`dpreg.mechanisms.sensitivity`): Δ_XX = B_x² (add/remove) or √2·B_x² (replace-one),
Δ_λ = B_x², Δ_Xg = B_x·τ or 2·B_x·τ.  (The 2024 author code multiplied by μ instead of dividing
-- about 180× too little noise at ε = 1, δ = 1e−6, T = 100; the test-suite pins that bug.)

Ridge: ``lambda_rule="wang"`` (default) turns the noisy λ_min into Wang's ridge λ >= 0 with
the GDP noise scales in place of Wang's constants; ``"literal"`` adds λ̂ = λ_min + noise to the
diagonal as printed in Alg. 1 (λ̂ can be negative; a pseudo-inverse is then used).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from dpreg._validation import (
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    check_rng,
    fmt,
    is_seeded,
)
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import RegressionResults
from dpreg.mechanisms.gaussian import gaussian, gaussian_calls, gaussian_sigma
from dpreg.mechanisms.sensitivity import (
    gram_sensitivity,
    lambda_min_sensitivity,
    xty_sensitivity,
)
from dpreg.multivariate._common import (
    SCHEDULES,
    check_choice,
    check_design,
    clip_rows,
    column_names,
    learning_rates,
    noisy_symmetric,
    warn_if_not_private,
)
from dpreg.privacy.budgets import GDP, compose
from dpreg.privacy.ledger import charge
from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement, check_neighbouring

__all__ = ["boosted_adassp", "boosted_split", "boosted_budget"]

SOURCE = "Tang, Aydore, Kearns, Rho, Roth, Wang, Wu, Zhang 2023 (BoostedAdaSSP, Alg. 1)"
#: why a BoostedAdaSSP release has no interval / no R² (its results say so)
NO_INTERVAL = ("none: BoostedAdaSSP clips residuals in every round, so the release is a "
               "nonlinear function of individual residuals that the released statistics do "
               "not determine; no valid post-processing interval is available (use "
               "AdaSSP(inference=True) or CovarianceOLS for intervals)")
NO_FIT_STATISTICS = ("BoostedAdaSSP clips residuals in every round: the released statistics "
                     "do not determine the residual sum of squares")


def boosted_split(split: Any, n_rounds: int) -> tuple[float, float, float]:
    """The ratio a : b : c of μ₁ (XᵀX), μ₂ (all T rounds of Xᵀg) and μ₃ (λ_min)."""
    if isinstance(split, str):
        if split == "equal":
            return 1.0, 1.0, 1.0
        if split == "author":
            return 1.0, math.sqrt(n_rounds), 1.0
        raise InvalidInputError(
            f"split must be 'equal', 'author' or three positive numbers (a, b, c); got {split!r}"
        )
    try:
        parts = tuple(float(v) for v in split)
    except (TypeError, ValueError):
        raise InvalidInputError(
            "split must be 'equal', 'author' or three positive numbers (a, b, c); got "
            f"{fmt(split)}") from None
    if len(parts) != 3 or not all(math.isfinite(v) and v > 0 for v in parts):
        raise InvalidInputError(
            f"split must be three finite positive numbers (a, b, c); got {fmt(split)}"
        )
    return parts  # type: ignore[return-value]


class BoostedBudget(NamedTuple):
    """The budget parts of one BoostedAdaSSP run (:func:`boosted_budget`)."""

    mu: GDP  # the whole: the largest μ-GDP implying (ε, δ)-DP
    mu1: GDP  # XᵀX
    mu2: GDP  # all T rounds of Xᵀg
    mu_round: GDP  # one round of Xᵀg
    mu3: GDP  # λ_min
    charged: GDP  # μ₁, μ₃ and T rounds composed (rounded up; never above mu)


def boosted_budget(epsilon: float, delta: float, ratio: tuple[float, float, float],
                   n_rounds: int) -> BoostedBudget:
    """The budget split of a BoostedAdaSSP run at (ε, δ): the largest μ-GDP implying (ε, δ)-DP
    split as μ₁² : μ₂² : μ₃² = a² : b² : c² (``ratio``, see :func:`boosted_split`), μ₂ split
    evenly over the T rounds; the charge composes the parts.  A pure function of public
    inputs (the ledger charge of per-group tables uses it too)."""
    mu = GDP.from_approx(epsilon, delta)
    a, b, c = ratio
    mu1, mu2, mu3 = mu.split([a * a, b * b, c * c])
    mu_round = mu2.split([1.0] * n_rounds)[0] if n_rounds > 1 else mu2
    return BoostedBudget(mu, mu1, mu2, mu_round, mu3,
                         compose([mu1, mu3] + [mu_round] * n_rounds))


def boosted_adassp(
    X: Any,
    y: Any,
    *,
    epsilon: float,
    delta: float,
    x_norm_bound: float = 1.0,
    tau: float = 1.0,
    n_rounds: int = 100,
    split: Any = "author",
    learning_rate: float = 1.0,
    schedule: str = "constant",
    lambda_rule: str = "wang",
    neighbouring: str | Neighbouring = "add-remove",
    failure_prob: float = 0.05,
    rng: Any = None,
    ledger: Any = None,
    names: Any = None,
) -> RegressionResults:
    """BoostedAdaSSP on the design ``X`` (include a ones column for an intercept).

    Parameters
    ----------
    X, y:
        Design and response.  Rows are clipped to ‖x‖₂ <= ``x_norm_bound`` (B_x; the paper fixes
        B_x = 1, so scale features to the unit ball with PUBLIC bounds first); residuals are
        clipped to [−τ, τ] every round, so y needs no bound.
    epsilon, delta:
        Target (ε, δ), δ > 0; converted to μ-GDP on the exact curve.
    tau, n_rounds:
        Residual clip τ (default 1) and number of rounds T (default 100) -- the paper's fixed
        hyperparameters.
    split:
        ``"author"`` (default; 1 : √T : 1, the split implied by the authors' code, which
        produced the paper's fixed-hyperparameter results), ``"equal"`` (1 : 1 : 1) or
        (a, b, c).  On real data the equal split is far worse (diabetes, ε = 1: median R²
        −5.3 vs 0.29 with the author split; docs/multivariate.md).
    learning_rate, schedule:
        θ ← θ + η_t·θ_t with η_t = ``learning_rate`` × {1, 1/t, 1/√t} for ``schedule`` in
        ``"constant"`` (default, the paper's choice), ``"1/t"``, ``"1/sqrt(t)"``.
    lambda_rule:
        ``"wang"`` (ridge λ >= 0 from a lower confidence bound of the noisy λ_min; default) or
        ``"literal"`` (λ̂ = λ_min + noise added raw, as printed in Alg. 1).
    neighbouring:
        ``"add-remove"`` (default) or ``"replace-one"``.
    failure_prob:
        ρ of Wang's λ rule (0.05).
    rng, ledger, names:
        Randomness; optional ledger charged with the composed μ-GDP after validation and before
        any noise; coefficient names.
    """
    Xa, ya = check_design(X, y)
    n, d = Xa.shape
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    bnd = check_positive(x_norm_bound, "x_norm_bound")
    tau_ = check_positive(tau, "tau")
    T = check_int(n_rounds, "n_rounds", minimum=1, maximum=100_000)
    a, b, c = boosted_split(split, T)
    eta = check_positive(learning_rate, "learning_rate")
    sched = check_choice(schedule, "schedule", SCHEDULES)
    rule = check_choice(lambda_rule, "lambda_rule", ("wang", "literal"))
    rel = check_neighbouring(neighbouring)
    fail = check_probability(failure_prob, "failure_prob")
    labels = column_names(X, d, names)
    gen = check_rng(rng)

    mu, mu1, mu2, mu_round, mu3, budget = boosted_budget(eps, dlt, (a, b, c), T)
    charge(ledger, budget, "BoostedAdaSSP", rel)
    warn_if_not_private(eps, "BoostedAdaSSP")

    d_xx = gram_sensitivity(bnd, rel)
    d_lam = lambda_min_sensitivity(bnd, rel)
    d_xg = xty_sensitivity(bnd, tau_, rel)
    sd_xx = gaussian_sigma(d_xx, mu1)
    sd_lam = gaussian_sigma(d_lam, mu3)
    sd_xg = gaussian_sigma(d_xg, mu_round)

    Xc = clip_rows(Xa, bnd)
    xtx = Xc.T @ Xc
    lam_min = max(0.0, float(np.linalg.eigvalsh(xtx)[0]))
    xtx_hat = noisy_symmetric(xtx, sensitivity=d_xx, budget=mu1, rng=gen)
    lam_hat = float(gaussian(lam_min, sensitivity=d_lam, budget=mu3, rng=gen))
    if rule == "wang":
        lam_lower = max(0.0, lam_hat - sd_lam * math.sqrt(math.log(6.0 / dlt)))
        lam = max(0.0, sd_xx * math.sqrt(d * math.log(2.0 * d * d / fail)) - lam_lower)
    else:
        lam = lam_hat
    gamma = np.linalg.pinv(xtx_hat + lam * np.eye(d), hermitian=True)

    etas = learning_rates(sched, eta, T)
    theta = np.zeros(d)
    releases = np.empty((T, d))
    # the T rounds' noise comes from one batched sampler call at the first round (bit for bit
    # the T successive gaussian() calls in seeded mode; secure mode stays exact): the rounds
    # are adaptive in the data, their noise is not
    release_xtg = gaussian_calls(T, sensitivity=d_xg, budget=mu_round, rng=gen)
    for t in range(T):
        g = np.clip(ya - Xc @ theta, -tau_, tau_)
        xtg_hat = np.asarray(release_xtg(Xc.T @ g), dtype=float)
        releases[t] = xtg_hat
        theta = theta + etas[t] * (gamma @ xtg_hat)
    if not np.all(np.isfinite(theta)):  # pragma: no cover - pinv keeps values finite
        raise InvalidInputError("BoostedAdaSSP diverged; use a smaller learning_rate")

    privacy = PrivacyStatement(
        budget=budget, neighbouring=rel, mechanism="BoostedAdaSSP", source=SOURCE,
        seeded=is_seeded(rng),
        details={
            "requested": {"epsilon": eps, "delta": dlt},
            "mu": mu.mu, "mu_parts": {"XtX": mu1.mu, "Xtg_total": mu2.mu,
                                      "Xtg_round": mu_round.mu, "lambda_min": mu3.mu},
            "split": [a, b, c], "n_rounds": T, "tau": tau_, "x_norm_bound": bnd,
            "schedule": sched, "learning_rate": eta, "lambda_rule": rule,
            "sensitivity": {"XtX": d_xx, "lambda_min": d_lam, "Xtg": d_xg},
            "noise_sd": {"XtX": sd_xx, "lambda_min": sd_lam, "Xtg": sd_xg},
        },
    )
    return RegressionResults(
        theta, names=labels, privacy=privacy, method="boosted-adassp",
        uncertainty=NO_INTERVAL, ci_method="none", no_fit_statistics=NO_FIT_STATISTICS,
        nobs=n if rel is Neighbouring.REPLACE_ONE else None,
        extra={"ridge_lambda": lam, "xtg_releases": releases},
    )
