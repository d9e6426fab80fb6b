"""Full-batch DP gradient descent on the squared loss for d features (Tang et al. 2023 §4
baseline; details reconstructed, docs/privacy/dpgd_multivariate.md).

Round t: per-example gradients ∇_i = 2(θᵀx_i − y_i)·x_i are clipped to ‖∇_i‖₂ <= C_g, summed,
and the sum is released with Gaussian noise of sd Δ/μ_round (Δ = C_g for add/remove, 2·C_g
for replace-one).  θ ← θ − η_t·(noisy sum)/n, with η_t = η, η/t or η/√t.

Accounting: R releases each get an equal share of the budget -- μ_round = μ/√R in μ-GDP
(``accounting="gdp"``, μ from (ε, δ) on the exact curve) or ρ_round = ρ/R in zCDP
(``accounting="zcdp"``, ρ the largest value converting to (ε, δ)).  Under replace-one n is
public and R = T; under add/remove n is private, so a noisy count (sensitivity 1) is released
as well (R = T + 1) and used in place of n.

Output: ``"average"`` (default) is the mean of the last ⌈T/2⌉ iterates (tail averaging, which
averages out part of the noise); ``"last"`` is θ_T.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
from dpreg.mechanisms.gaussian import gaussian, gaussian_sigma
from dpreg.multivariate._common import (
    SCHEDULES,
    check_choice,
    check_design,
    column_names,
    l2_clipped_sum_sensitivity,
    learning_rates,
    warn_if_not_private,
)
from dpreg.privacy.budgets import GDP, ZCDP, compose
from dpreg.privacy.ledger import charge
from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement, check_neighbouring

__all__ = ["dp_gradient_descent", "dpgd_budget"]

SOURCE = ("noisy full-batch gradient descent (Tang et al. 2023 §4 baseline; Abadi et al. 2016 "
          "per-example clipping)")


def dpgd_budget(epsilon: float, delta: float, n_iter: int, accounting: str,
                neighbouring: Neighbouring) -> tuple[int, GDP | ZCDP, GDP | ZCDP]:
    """(number of Gaussian releases, budget of each, composed budget charged) of a clipped
    DP-GD run at (ε, δ): T noisy gradient sums, plus a noisy count under add/remove (n is
    private); the largest μ-GDP (or ρ-zCDP) implying (ε, δ)-DP split evenly.  A pure function
    of public inputs (the ledger charge of per-group tables uses it too)."""
    n_releases = n_iter + (1 if neighbouring is Neighbouring.ADD_REMOVE else 0)
    whole: GDP | ZCDP = (GDP.from_approx(epsilon, delta) if accounting == "gdp"
                         else ZCDP.from_approx(epsilon, delta))
    per_round = whole.split([1.0] * n_releases)[0] if n_releases > 1 else whole
    return n_releases, per_round, compose([per_round] * n_releases)


def dp_gradient_descent(
    X: Any,
    y: Any,
    *,
    epsilon: float,
    delta: float,
    clip_norm: float = 1.0,
    n_iter: int = 100,
    learning_rate: float = 0.5,
    schedule: str = "constant",
    accounting: str = "gdp",
    output: str = "average",
    neighbouring: str | Neighbouring = "replace-one",
    rng: Any = None,
    ledger: Any = None,
    names: Any = None,
) -> RegressionResults:
    """DP gradient descent on the design ``X`` (include a ones column for an intercept).

    Parameters
    ----------
    X, y:
        Design and response.  Privacy comes from per-example gradient clipping, so no bounds
        are needed for the guarantee; scaling rows to the unit ball with public bounds makes the
        default learning rate (0.5) stable.
    epsilon, delta:
        Target (ε, δ), δ > 0.
    clip_norm:
        C_g, the L2 clipping norm of per-example gradients.
    n_iter, learning_rate, schedule:
        T rounds; η_t = ``learning_rate`` × {1, 1/t, 1/√t} for ``schedule`` in
        ``"constant"``, ``"1/t"``, ``"1/sqrt(t)"``.
    accounting:
        ``"gdp"`` (default; exact) or ``"zcdp"``.
    output:
        ``"average"`` (mean of the last ⌈T/2⌉ iterates; default) or ``"last"``.
    neighbouring:
        ``"replace-one"`` (default; n public) or ``"add-remove"`` (a noisy count replaces n).
    rng, ledger, names:
        Randomness; optional ledger charged (μ-GDP or ρ-zCDP) after validation and before any
        noise; coefficient names.
    """
    Xa, ya = check_design(X, y)
    n, d = Xa.shape
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    cg = check_positive(clip_norm, "clip_norm")
    T = check_int(n_iter, "n_iter", minimum=1, maximum=1_000_000)
    eta = check_positive(learning_rate, "learning_rate")
    sched = check_choice(schedule, "schedule", SCHEDULES)
    acct = check_choice(accounting, "accounting", ("gdp", "zcdp"))
    out_kind = check_choice(output, "output", ("average", "last"))
    rel = check_neighbouring(neighbouring)
    labels = column_names(X, d, names)
    if cg > 1e300:
        raise InvalidInputError(f"clip_norm must be at most 1e300; got {clip_norm!r}")
    sens = l2_clipped_sum_sensitivity(cg, rel)
    gen = check_rng(rng)

    n_releases, per_round, budget = dpgd_budget(eps, dlt, T, acct, rel)
    charge(ledger, budget, "DP gradient descent", rel)
    warn_if_not_private(eps, "DP gradient descent")

    sd = gaussian_sigma(sens, per_round)
    if rel is Neighbouring.ADD_REMOVE:
        n_hat = max(1.0, float(gaussian(float(n), sensitivity=1.0, budget=per_round, rng=gen)))
    else:
        n_hat = float(n)
    etas = learning_rates(sched, eta, T)
    theta = np.zeros(d)
    tail_start = T // 2
    tail_sum = np.zeros(d)
    # ∇_i = 2·r_i·x_i has norm 2|r_i|·‖x_i‖, so the clipped sum is Xᵀ(2·r·f) with the per-example
    # factor f_i = min(1, C/(2|r_i|·‖x_i‖)): two matrix-vector products per round.
    row_norms = np.linalg.norm(Xa, axis=1)
    for t in range(T):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            resid = Xa @ theta - ya
            g_norm = 2.0 * np.abs(resid) * row_norms
            factor = np.where(g_norm > cg, cg / np.where(g_norm > 0, g_norm, 1.0), 1.0)
            total = Xa.T @ (2.0 * resid * factor)
        if not np.all(np.isfinite(total)):  # the iterates diverged (learning rate too large)
            theta = np.full(d, np.nan)
            break
        noisy = np.asarray(gaussian(total, sensitivity=sens, budget=per_round, rng=gen),
                           dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            theta = theta - etas[t] * noisy / n_hat
        if t >= tail_start:
            tail_sum += theta
    result = tail_sum / (T - tail_start) if out_kind == "average" else theta

    privacy = PrivacyStatement(
        budget=budget, neighbouring=rel, mechanism="DP gradient descent", source=SOURCE,
        seeded=is_seeded(rng),
        details={
            "requested": {"epsilon": eps, "delta": dlt}, "accounting": acct,
            "n_releases": n_releases, "per_round": per_round.as_dict(),
            "clip_norm": cg, "sensitivity": sens, "noise_sd": sd, "n_iter": T,
            "learning_rate": eta, "schedule": sched, "output": out_kind,
            "noisy_count": rel is Neighbouring.ADD_REMOVE,
        },
    )
    extra: dict[str, Any] = {}
    if rel is Neighbouring.ADD_REMOVE:
        extra["n_noisy"] = n_hat
    if not np.all(np.isfinite(result)):
        return RegressionResults(
            np.zeros(d), names=labels, privacy=privacy, method="dp-gd", failed=True,
            reason=("DP gradient descent diverged (non-finite iterate); use a smaller "
                    "learning_rate or scale the features to the unit ball"),
            nobs=n if rel is Neighbouring.REPLACE_ONE else None, extra=extra)
    return RegressionResults(
        result, names=labels, privacy=privacy, method="dp-gd",
        uncertainty="none: DP gradient descent releases a point estimate only",
        nobs=n if rel is Neighbouring.REPLACE_ONE else None, extra=extra,
    )
