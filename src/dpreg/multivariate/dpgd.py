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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpreg._spec import Release, ReleasePlan
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

__all__ = ["dp_gradient_descent", "dpgd_budget", "plan_dp_gradient_descent", "DPGDStatistics",
           "dpgd_statistics", "release_dp_gradient_descent", "dp_gradient_descent_result"]

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
    plan = plan_dp_gradient_descent(
        n=n, d=d, epsilon=epsilon, delta=delta, clip_norm=clip_norm, n_iter=n_iter,
        learning_rate=learning_rate, schedule=schedule, accounting=accounting, output=output,
        neighbouring=neighbouring)
    labels = column_names(X, d, names)
    gen = check_rng(rng)
    stats = dpgd_statistics(Xa, ya, plan)
    charge(ledger, plan.budget, "DP gradient descent", plan.relation)
    warn_if_not_private(plan.options["epsilon"], "DP gradient descent")
    return dp_gradient_descent_result(
        release_dp_gradient_descent(stats, plan, gen, seeded=is_seeded(rng)), names=labels)


def plan_dp_gradient_descent(*, n: int | None, d: int, epsilon: float, delta: float,
                             clip_norm: float = 1.0, n_iter: int = 100,
                             learning_rate: float = 0.5, schedule: str = "constant",
                             accounting: str = "gdp", output: str = "average",
                             neighbouring: str | Neighbouring = "replace-one",
                             scaling: Any = None) -> ReleasePlan:
    """The public plan of clipped DP-GD on a d-column design: reads no data, draws nothing.

    Every parameter of :func:`dp_gradient_descent` is checked here, in the order it always
    checked them (ε, δ > 0, ``clip_norm``, ``n_iter``, ``learning_rate``, ``schedule``,
    ``accounting``, ``output``, ``neighbouring``; C_g <= 10³⁰⁰).  The plan holds the budget
    rule :func:`dpgd_budget` (``budget``: the composed μ-GDP or ρ-zCDP charged; ``parts``
    ``"round"``: the budget of each of the ``n_releases`` Gaussian releases -- T noisy
    gradient sums, plus a noisy count under add/remove), the sensitivity of the clipped
    gradient sum (:func:`~dpreg.multivariate.l2_clipped_sum_sensitivity`: C_g, or 2·C_g under
    replace-one; the count's is 1) and the Gaussian sd of each round (``noise``).  ``n`` is
    kept only under replace-one (public there); under add/remove it is private and the
    release uses a noisy count.  ``scaling`` (a public
    :class:`~dpreg.multivariate.PublicScaling`) says how :func:`dpgd_statistics` maps raw
    regressors to the design (the estimator's rows in the unit ball); ``None`` takes the
    design as given."""
    d_ = check_int(d, "d", minimum=1)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    cg = check_positive(clip_norm, "clip_norm")
    T = check_int(n_iter, "n_iter", minimum=1, maximum=1_000_000)
    eta = check_positive(learning_rate, "learning_rate")
    sched = check_choice(schedule, "schedule", SCHEDULES)
    acct = check_choice(accounting, "accounting", ("gdp", "zcdp"))
    out_kind = check_choice(output, "output", ("average", "last"))
    rel = check_neighbouring(neighbouring)
    if cg > 1e300:
        raise InvalidInputError(f"clip_norm must be at most 1e300; got {clip_norm!r}")
    public_n = None
    if rel is Neighbouring.REPLACE_ONE:
        if n is None:
            raise InvalidInputError("n is required under replace-one neighbours (the number "
                                    "of rows, public there); got None")
        public_n = check_int(n, "n", minimum=1)
    sens = l2_clipped_sum_sensitivity(cg, rel)
    n_releases, per_round, budget = dpgd_budget(eps, dlt, T, acct, rel)
    sensitivities = {"gradient_sum": sens}
    if rel is Neighbouring.ADD_REMOVE:
        sensitivities["count"] = 1.0
    return ReleasePlan(
        method="dp-gd",
        options={"algorithm": "clipped", "epsilon": eps, "delta": dlt, "clip_norm": cg,
                 "n_iter": T, "learning_rate": eta, "schedule": sched, "accounting": acct,
                 "output": out_kind, "n_releases": n_releases, "scaling": scaling},
        budget=budget, relation=rel, parts={"round": per_round}, n=public_n, d=d_,
        sensitivities=sensitivities, noise={"gradient_sd": gaussian_sigma(sens, per_round)})


@dataclass(frozen=True)
class DPGDStatistics:
    """Clipped DP-GD's statistics: the checked design ``X`` (n×d) and response ``y``.  Each
    round's clipped gradient sum is a pass over the rows at the current noisy iterate, so
    there are no smaller sufficient statistics; the passes run inside the release
    (:func:`release_dp_gradient_descent`)."""

    X: np.ndarray
    y: np.ndarray


def dpgd_statistics(X: Any, y: Any, plan: ReleasePlan) -> DPGDStatistics:
    """The deterministic statistics step: the raw regressors mapped to the design by the
    plan's public scaling (rows into the unit ball, ones column first; the label scaled when
    its bounds are public), or taken as they are; checked finite and of the plan's d columns
    (and n rows where n is public)."""
    Xa, ya = check_design(X, y)
    sc = plan.options["scaling"]
    if sc is not None:
        Xa, ya = sc.design(Xa), sc.label(ya)
    if Xa.shape[1] != plan.d or (plan.n is not None and Xa.shape[0] != plan.n):
        raise InvalidInputError(f"the design must have the plan's d={plan.d} columns"
                                + (f" and n={plan.n} rows" if plan.n is not None else "")
                                + f"; got {Xa.shape[0]} rows and {Xa.shape[1]} columns")
    return DPGDStatistics(Xa, ya)


#: the reason of a diverged DP-GD run (a non-finite iterate: post-processing of the releases)
DIVERGED = ("DP gradient descent diverged (non-finite iterate); use a smaller "
            "learning_rate or scale the features to the unit ball")


def release_dp_gradient_descent(stats: DPGDStatistics, plan: ReleasePlan, rng: Any, *,
                                seeded: bool = False) -> Release:
    """THE release of clipped DP-GD (Tang et al. 2023 §4 baseline; Abadi et al. 2016
    per-example clipping): the only code that draws its noise -- :func:`dp_gradient_descent`,
    the estimators and the spec call it.  Under add/remove first the noisy count
    (:func:`dpreg.mechanisms.gaussian`, sensitivity 1, one round's budget), then per round
    t = 1..T the sum of the per-example gradients 2(θᵀx_i − y_i)·x_i clipped to L2 norm
    C_g, released with :func:`dpreg.mechanisms.gaussian` at the plan's sensitivity and round
    budget, and the step θ ← θ − η_t·(noisy sum)/n (n the public n, or the noisy count).
    A non-finite iterate stops the run: ⊥ (``failed``, :data:`DIVERGED`; decided from
    released values only).  Builds the :class:`~dpreg.privacy.PrivacyStatement`.

    Guarantee: ``plan.budget`` (μ-GDP or ρ-zCDP, implying the requested (ε, δ)), under the
    plan's relation; ``values``: ``theta`` (the tail average or the last iterate) and, under
    add/remove, ``n_noisy``."""
    o = plan.options
    Xa, ya = stats.X, stats.y
    n, d = Xa.shape
    if d != plan.d:
        raise InvalidInputError(f"stats must have the plan's d={plan.d} columns; got {d}")
    rel = plan.relation
    per_round = plan.parts["round"]
    sens = plan.sensitivities["gradient_sum"]
    cg, T = o["clip_norm"], o["n_iter"]
    if rel is Neighbouring.ADD_REMOVE:
        n_hat = max(1.0, float(gaussian(float(n), sensitivity=1.0, budget=per_round, rng=rng)))
    else:
        n_hat = float(n)
    etas = learning_rates(o["schedule"], o["learning_rate"], T)
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
        noisy = np.asarray(gaussian(total, sensitivity=sens, budget=per_round, rng=rng),
                           dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            theta = theta - etas[t] * noisy / n_hat
        if t >= tail_start:
            tail_sum += theta
    result = tail_sum / (T - tail_start) if o["output"] == "average" else theta

    privacy = PrivacyStatement(
        budget=plan.budget, neighbouring=rel, mechanism="DP gradient descent", source=SOURCE,
        seeded=seeded,
        details={
            "requested": {"epsilon": o["epsilon"], "delta": o["delta"]},
            "accounting": o["accounting"],
            "n_releases": o["n_releases"], "per_round": per_round.as_dict(),
            "clip_norm": cg, "sensitivity": sens, "noise_sd": plan.noise["gradient_sd"],
            "n_iter": T, "learning_rate": o["learning_rate"], "schedule": o["schedule"],
            "output": o["output"], "noisy_count": rel is Neighbouring.ADD_REMOVE,
        },
    )
    values: dict[str, Any] = {"theta": result}
    if rel is Neighbouring.ADD_REMOVE:
        values["n_noisy"] = n_hat
    if not np.all(np.isfinite(result)):
        return Release(plan, values, privacy, failed=True, reason=DIVERGED)
    return Release(plan, values, privacy)


def dp_gradient_descent_result(release: Release, *, names: Sequence[str] | None = None
                               ) -> RegressionResults:
    """The :class:`~dpreg.inference.RegressionResults` of a clipped DP-GD release
    (post-processing): the released iterate (zeros with ``failed=True`` and the reason for a
    diverged run), the noisy count under add/remove."""
    plan = release.plan
    d = int(plan.d)  # type: ignore[arg-type]
    labels = [f"x{j}" for j in range(d)] if names is None else [str(s) for s in names]
    extra: dict[str, Any] = {}
    if "n_noisy" in release.values:
        extra["n_noisy"] = release.values["n_noisy"]
    if release.failed:
        return RegressionResults(
            np.zeros(d), names=labels, privacy=release.privacy, method="dp-gd", failed=True,
            reason=release.reason, nobs=plan.n, extra=extra)
    return RegressionResults(
        release.values["theta"], names=labels, privacy=release.privacy, method="dp-gd",
        uncertainty="none: DP gradient descent releases a point estimate only",
        nobs=plan.n, extra=extra,
    )
