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

Step count and clip (``n_iter="auto"``, ``clip_norm="auto"``, the defaults since issue 30;
:func:`dpgd_schedule`): T = :data:`DPGD_AUTO_STEPS` (1600) and
C_g = min(1, :data:`DPGD_TRAVEL`·μ·n/(p·T)), μ the GDP parameter of (ε, δ), p the number of
columns of X.  On rows in the unit ball and labels in [−1, 1] (what the estimator passes)
the product η·T·C_g bounds how far the iterates can travel, so it acts as the regulariser:
early stopping where the noise-to-signal ratio ~ p/(μn) is large.  n is the public row count
under replace-one and the released noisy count under add/remove (released first, so the clip
is a function of a release and public inputs: adaptive composition, nothing else spent).
Derived on dpreg's dev and tuning data only (``studies/accuracy/dpgd_rule.py``; held-out
evaluation in docs/accuracy.md); the earlier fixed T = 100, C_g = 1 are
:data:`DPGD_FIXED_SCHEDULE`.  ``clip_norm="public"`` is that rule alone.

The spread of the label (``clip_norm="auto"``, the default since issue 30's second pass;
docs/accuracy.md §12.6): the public rule assumes residuals of a tenth to a third of the label
range; a response spread over much of its bounds has per-example gradients far above that clip,
and the clipped descent converges to a biased (Huber-type) fit whatever ε.  So
:data:`DPGD_SPREAD_SHARE` of the budget (of μ², or of ρ) first releases the spread of the label:
two Gaussian releases of equal budget, Σ clip(y) and then Σ|clip(y) − ȳ̃| about the released
mean ȳ̃ (labels clipped to [−1, 1], the estimators' scaled range; sensitivities
:func:`dpgd_spread_sensitivities`), and the clip becomes :func:`dpgd_spread_clip` of the
public rule at the rest of the budget and the lower confidence bound σ̂ of the label's sd
(:func:`dpgd_spread_sigma`).  Everything after the two releases is post-processing; the rounds
compose with them (:func:`dpgd_spread_budget`), and the charge is unchanged.

The warm start (``clip_norm="auto"`` on a design whose first column is a declared intercept
column -- the estimators' ones column, or the core function's ``intercept=`` -- since issue 30's
third pass; docs/accuracy.md §12.7): the descent starts from
zero slopes and the intercept that fits the released label mean ȳ̃ (:func:`dpgd_warm_start`)
instead of from zero.  With clipped gradients the iterates travel at most η·T·C_g, and a label
whose values sit far from the middle of its public bounds (wealth, gifts, hours worked with many
zeros) needs an intercept far from zero: started at zero, the descent spends its travel on the
intercept and ends biased.  The start is a function of a release already made
(post-processing): nothing more is spent, and the guarantee is unchanged.
"""

from __future__ import annotations

import math
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
from dpreg.mechanisms.gaussian import gaussian, gaussian_calls, gaussian_sigma
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
           "dpgd_statistics", "release_dp_gradient_descent", "dp_gradient_descent_result",
           "dpgd_schedule", "DPGD_AUTO_STEPS", "DPGD_TRAVEL", "DPGD_MAX_CLIP",
           "DPGD_FIXED_SCHEDULE", "dpgd_public_clip", "dpgd_spread_sensitivities",
           "dpgd_spread_budget", "dpgd_spread_sigma", "dpgd_spread_clip",
           "dpgd_spread_base_clip", "dpgd_warm_start",
           "DPGD_SPREAD_SHARE", "DPGD_SPREAD_Z", "DPGD_SPREAD_SIGMA0", "DPGD_SPREAD_POWER",
           "DPGD_SPREAD_MAX_CLIP"]

#: T of ``n_iter="auto"``: enough rounds that the clip, not T, limits the travel (the error
#: on the dev data was flat along T·C_g = const for T >= 400; 1600 was the best fixed T)
DPGD_AUTO_STEPS = 1600
#: the travel constant of ``clip_norm="auto"``: T·C_g = DPGD_TRAVEL·μ·n/p (dev data: 1.25-1.5)
DPGD_TRAVEL = 1.5
#: the largest clip ``clip_norm="auto"`` chooses (the earlier fixed default)
DPGD_MAX_CLIP = 1.0
#: (T, C_g) before issue 30 (Tang et al.'s baseline values; ``paper_options`` of the method)
DPGD_FIXED_SCHEDULE = (100, 1.0)
#: the share of the budget (of μ² under GDP accounting, of ρ under zCDP) that
#: ``clip_norm="auto"`` spends on the spread of the label (two releases, half each)
DPGD_SPREAD_SHARE = 0.05
#: σ̂ is the released spread lowered by this many noise sds (the clip grows only for a spread
#: the release clearly shows)
DPGD_SPREAD_Z = 2.0
#: labels spread up to this sd (in half-widths of the label bounds) keep the public clip ...
DPGD_SPREAD_SIGMA0 = 0.2
#: ... above it the clip grows as (σ̂/σ₀)^k ...
DPGD_SPREAD_POWER = 3
#: ... up to this clip (per-example gradients on rows in the unit ball are at most ~4)
DPGD_SPREAD_MAX_CLIP = 2.0

SOURCE = ("noisy full-batch gradient descent (Tang et al. 2023 §4 baseline; Abadi et al. 2016 "
          "per-example clipping)")


def dpgd_budget(epsilon: float, delta: float, n_iter: int, accounting: str,
                neighbouring: Neighbouring) -> tuple[int, GDP | ZCDP, GDP | ZCDP]:
    """(number of Gaussian releases, budget of each, budget charged) of a clipped DP-GD run at
    (ε, δ): T noisy gradient sums, plus a noisy count under add/remove (n is private); the
    largest μ-GDP (or ρ-zCDP) implying (ε, δ)-DP split evenly.  The charge is that whole
    budget -- the same for every T, so a caller that does not know n (and hence the step count
    of :func:`dpgd_schedule`) charges what the fit charges -- and the rounds compose to at most
    it (``Budget.split`` rounds every part down).  A pure function of public inputs (the ledger
    charge of per-group tables uses it too)."""
    n_releases = n_iter + (1 if neighbouring is Neighbouring.ADD_REMOVE else 0)
    if accounting == "gdp":
        g = GDP.from_approx(epsilon, delta)
        g_round = g.split([1.0] * n_releases)[0] if n_releases > 1 else g
        assert compose([g_round] * n_releases) <= g
        return n_releases, g_round, g
    z = ZCDP.from_approx(epsilon, delta)
    z_round = z.split([1.0] * n_releases)[0] if n_releases > 1 else z
    assert compose([z_round] * n_releases) <= z
    return n_releases, z_round, z


def _clip_mode(value: Any) -> str | None:
    """``"auto"`` (the spread-aware rule) or ``"public"`` (the public rule alone) for those
    strings, None for a number (checked by the caller); any other string is refused."""
    if isinstance(value, str):
        if value in ("auto", "public"):
            return value
        raise InvalidInputError("clip_norm must be 'auto', 'public' or a positive number; "
                                f"got {value!r}")
    return None


def _auto_or(value: Any, name: str) -> bool:
    """True for the string ``"auto"``; any other string is refused (numbers are checked by the
    caller)."""
    if isinstance(value, str):
        if value == "auto":
            return True
        raise InvalidInputError(f"{name} must be 'auto' or a positive number; got {value!r}")
    return False


def dpgd_schedule(n: float, p: int, *, epsilon: float, delta: float,
                  n_iter: int | str = "auto") -> tuple[int, float]:
    """(T, C_g) of ``n_iter="auto"`` / ``clip_norm="auto"`` -- a pure function of n, p, ε, δ
    (and a given T): T = :data:`DPGD_AUTO_STEPS` unless given, and
    C_g = min(:data:`DPGD_MAX_CLIP`, :data:`DPGD_TRAVEL`·μ·n/(p·T)) with μ the GDP parameter of
    (ε, δ) (``GDP.from_approx``) and p the number of design columns (intercept included).

    **Privacy status:** n must be public or a DP release.  :func:`dp_gradient_descent` passes
    the public n under replace-one neighbours and the released noisy count under add/remove;
    p, ε, δ are public.  So (T, C_g) is public or post-processing of a release, and the rounds'
    Gaussian mechanisms, each calibrated to the sensitivity of the chosen C_g, compose
    adaptively as before.  Tuned for rows in the unit ball, labels in [−1, 1], η = 0.5 and the
    tail average (the estimator's scaling and defaults); ``studies/accuracy/dpgd_rule.py``."""
    T = DPGD_AUTO_STEPS if _auto_or(n_iter, "n_iter") else check_int(
        n_iter, "n_iter", minimum=1, maximum=1_000_000)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    mu = GDP.from_approx(eps, dlt).mu
    if not float(n) > 0:
        raise InvalidInputError(f"n must be a positive number of rows; got {n!r}")
    if int(p) < 1:
        raise InvalidInputError(f"p must be a positive number of columns; got {p!r}")
    return T, dpgd_public_clip(mu, n, p, T)


def dpgd_public_clip(mu: float, n: float, p: int, n_iter: int) -> float:
    """The public clip rule at a GDP parameter μ: min(:data:`DPGD_MAX_CLIP`,
    :data:`DPGD_TRAVEL`·μ·n/(p·T)) (:data:`DPGD_MAX_CLIP` at μ = ∞).  A pure function of its
    (public or released) inputs."""
    if math.isinf(mu):
        return DPGD_MAX_CLIP
    return float(min(DPGD_MAX_CLIP, DPGD_TRAVEL * mu * float(n) / (int(p) * int(n_iter))))


def dpgd_spread_base_clip(mu: float, n: float, p: int, n_iter: int) -> float:
    """The public clip that :func:`dpgd_spread_clip` grows: :func:`dpgd_public_clip` at the μ
    the rounds keep after :data:`DPGD_SPREAD_SHARE` of μ² went to the spread releases,
    √(1 − share)·μ.  A pure function of its (public or released) inputs."""
    return dpgd_public_clip(float(mu) * math.sqrt(1.0 - DPGD_SPREAD_SHARE), n, p, n_iter)


def dpgd_warm_start(y_mean: float, d: int, intercept: float) -> np.ndarray:
    """The first iterate of ``clip_norm="auto"`` on a design whose first column is the public
    constant ``intercept`` (the estimators' ones column times 1/√p): zero slopes and
    θ₀ = ȳ̃/``intercept``, whose prediction is the released label mean ȳ̃.  A pure function of
    a release and public inputs (post-processing: it spends nothing)."""
    theta = np.zeros(int(d))
    theta[0] = float(y_mean) / float(intercept)
    return theta


def dpgd_spread_sensitivities(neighbouring: str | Neighbouring) -> tuple[float, float]:
    """(Δ₁, Δ₂): the sensitivities of the two spread releases of ``clip_norm="auto"`` on labels
    clipped to [−1, 1] -- Δ₁ of Σᵢ clip(yᵢ), Δ₂ of Σᵢ |clip(yᵢ) − c| for a centre c ∈ [−1, 1]
    fixed before the release (it is the released mean, clipped to [−1, 1]).  Replace-one: one
    term of each sum changes within [−1, 1], resp. [0, 2], so (2, 2); add/remove: one term is
    added or removed, so (1, 2).  Scalars: L1 = L2."""
    rel = check_neighbouring(neighbouring)
    return (2.0, 2.0) if rel is Neighbouring.REPLACE_ONE else (1.0, 2.0)


def dpgd_spread_budget(budget: GDP | ZCDP, n_rounds: int) -> tuple[GDP | ZCDP, GDP | ZCDP]:
    """(budget of each spread release, budget of each of the ``n_rounds`` other releases) of
    ``clip_norm="auto"``: :data:`DPGD_SPREAD_SHARE` of ``budget`` (of μ² or ρ) split evenly over
    the two spread releases, the rest evenly over the rounds (and the noisy count under
    add/remove).  ``Budget.split`` rounds every part down, so the 2 + ``n_rounds`` releases
    compose to at most ``budget`` (asserted).  A pure function of public inputs."""
    spread_total, rest = budget.split([DPGD_SPREAD_SHARE, 1.0 - DPGD_SPREAD_SHARE])
    each = spread_total.split([1.0, 1.0])[0]
    rnd = rest.split([1.0] * n_rounds)[0] if n_rounds > 1 else rest
    assert compose([each, each] + [rnd] * n_rounds) <= budget  # type: ignore[list-item, operator]
    return each, rnd


def dpgd_spread_sigma(abs_dev: float, noise_sd: float) -> float:
    """σ̂: the label sd implied by a released mean absolute deviation m̃ (sd √(2/π)·σ for a
    normal label), lowered by :data:`DPGD_SPREAD_Z` noise sds of m̃:
    √(π/2)·(m̃ − z·sd).  Post-processing of the release and its public noise sd."""
    return float(math.sqrt(math.pi / 2.0) * (float(abs_dev) - DPGD_SPREAD_Z * float(noise_sd)))


def dpgd_spread_clip(base_clip: float, sigma_hat: float) -> float:
    """C_g of ``clip_norm="auto"``: the public clip ``base_clip`` (:func:`dpgd_public_clip` at
    the rounds' budget) times max(1, σ̂/σ₀)^k, at most :data:`DPGD_SPREAD_MAX_CLIP`
    (σ₀ = :data:`DPGD_SPREAD_SIGMA0`, k = :data:`DPGD_SPREAD_POWER`).  Labels spread less than
    σ₀ half-widths keep the public clip.  Derived on the development data only
    (``studies/accuracy/dpgd_clip_spread.py``; docs/accuracy.md §12.6)."""
    ratio = max(1.0, float(sigma_hat) / DPGD_SPREAD_SIGMA0) if math.isfinite(sigma_hat) else 1.0
    return float(min(DPGD_SPREAD_MAX_CLIP,
                     min(DPGD_MAX_CLIP, float(base_clip)) * ratio ** DPGD_SPREAD_POWER))


def dp_gradient_descent(
    X: Any,
    y: Any,
    *,
    epsilon: float,
    delta: float,
    clip_norm: float | str = "auto",
    n_iter: int | str = "auto",
    learning_rate: float = 0.5,
    schedule: str = "constant",
    accounting: str = "gdp",
    output: str = "average",
    neighbouring: str | Neighbouring = "replace-one",
    intercept: float | None = None,
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
        C_g, the L2 clipping norm of per-example gradients; ``"auto"`` (default): the public
        rule grown for a widely spread label, from a release of the label's spread that
        costs :data:`DPGD_SPREAD_SHARE` of the budget (module doc; labels are taken as
        scaled to [−1, 1], as the estimators scale them); ``"public"``: the public rule
        of :func:`dpgd_schedule` alone, min(1, 1.5·μ·n/(p·T)) (n: public under replace-one,
        the released noisy count under add/remove); or a number.
    n_iter, learning_rate, schedule:
        T rounds (``"auto"``, default: 1600); η_t = ``learning_rate`` × {1, 1/t, 1/√t} for
        ``schedule`` in ``"constant"``, ``"1/t"``, ``"1/sqrt(t)"``.
    accounting:
        ``"gdp"`` (default; exact) or ``"zcdp"``.
    output:
        ``"average"`` (mean of the last ⌈T/2⌉ iterates; default) or ``"last"``.
    neighbouring:
        ``"replace-one"`` (default; n public) or ``"add-remove"`` (a noisy count replaces n).
    intercept:
        The constant value of ``X``'s first column when it is an intercept column (e.g. 1.0
        for a column of ones; a public fact the caller declares, never read from ``X``).  With
        ``clip_norm="auto"`` the descent then starts from the intercept that fits the released
        label mean instead of from zero (:func:`dpgd_warm_start`; post-processing).  ``None``
        (default): start from zero.
    rng, ledger, names:
        Randomness; optional ledger charged (μ-GDP or ρ-zCDP) after validation and before any
        noise; coefficient names.
    """
    Xa, ya = check_design(X, y)
    n, d = Xa.shape
    plan = plan_dp_gradient_descent(
        n=n, d=d, epsilon=epsilon, delta=delta, clip_norm=clip_norm, n_iter=n_iter,
        learning_rate=learning_rate, schedule=schedule, accounting=accounting, output=output,
        neighbouring=neighbouring, intercept=intercept)
    labels = column_names(X, d, names)
    gen = check_rng(rng)
    stats = dpgd_statistics(Xa, ya, plan)
    charge(ledger, plan.budget, "DP gradient descent", plan.relation)
    warn_if_not_private(plan.options["epsilon"], "DP gradient descent")
    return dp_gradient_descent_result(
        release_dp_gradient_descent(stats, plan, gen, seeded=is_seeded(rng)), names=labels)


def plan_dp_gradient_descent(*, n: int | None, d: int, epsilon: float, delta: float,
                             clip_norm: float | str = "auto", n_iter: int | str = "auto",
                             learning_rate: float = 0.5, schedule: str = "constant",
                             accounting: str = "gdp", output: str = "average",
                             neighbouring: str | Neighbouring = "replace-one",
                             scaling: Any = None, intercept: float | None = None
                             ) -> ReleasePlan:
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
    design as given.

    ``intercept``: the public constant of the design's first column when it is an intercept
    column (``None``: not known; with an intercept ``scaling`` it is the scaling's 1/√p).  With
    ``clip_norm="auto"`` the descent then starts at the released label mean
    (``options["warm_start"]``: that constant, or ``None``; :func:`dpgd_warm_start`).

    ``clip_norm="auto"`` (default): the spread-aware clip (module doc), fixed in the release
    after the two spread releases; the plan holds their budget ``parts["spread"]``
    (:func:`dpgd_spread_budget`), sensitivities and sds, and the rounds' smaller
    ``parts["round"]``.  ``n_iter="auto"`` / ``clip_norm="public"``: T =
    :data:`DPGD_AUTO_STEPS` (never reads n) and C_g by :func:`dpgd_schedule` from public
    inputs -- under replace-one
    from the public n, here in the plan; under add/remove n is private, so the plan keeps
    ``clip_norm="public"`` with no gradient sensitivity or sd yet, and the release computes C_g
    from the noisy count it releases first (adaptive composition: each later round is a
    Gaussian mechanism at the sensitivity of that C_g and the round's fixed budget, so the
    total is ``budget`` as for a given C_g)."""
    d_ = check_int(d, "d", minimum=1)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    clip_mode = _clip_mode(clip_norm)
    auto_clip = clip_mode is not None
    cg = 0.0 if auto_clip else check_positive(clip_norm, "clip_norm")
    auto_steps = _auto_or(n_iter, "n_iter")
    T = DPGD_AUTO_STEPS if auto_steps else check_int(n_iter, "n_iter", minimum=1,
                                                     maximum=1_000_000)
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
    n_releases, per_round, budget = dpgd_budget(eps, dlt, T, acct, rel)
    parts: dict[str, Any] = {"round": per_round}
    sensitivities: dict[str, float] = {}
    noise: dict[str, float] = {}
    clip: float | str = cg
    if clip_mode == "auto":  # the spread of the label first: C_g is fixed in the release
        parts["spread"], parts["round"] = dpgd_spread_budget(budget, n_releases)
        per_round = parts["round"]
        n_releases += 2
        sensitivities["spread_sum"], sensitivities["spread_abs_dev"] = \
            dpgd_spread_sensitivities(rel)
        noise["spread_sum_sd"] = gaussian_sigma(sensitivities["spread_sum"], parts["spread"])
        noise["spread_abs_dev_sd"] = gaussian_sigma(sensitivities["spread_abs_dev"],
                                                     parts["spread"])
        clip = "auto"
    elif auto_clip and public_n is not None:  # the public n: the clip is fixed here
        clip = dpgd_schedule(public_n, d_, epsilon=eps, delta=dlt, n_iter=T)[1]
    elif auto_clip:  # add/remove: from the noisy count, in the release
        clip = "public"
    # the warm start needs the released label mean (clip_norm="auto") and a first column that
    # is publicly a constant: the estimators' ones column times 1/sqrt(p), or the caller's
    if intercept is not None:
        intercept = check_positive(intercept, "intercept")
    elif scaling is not None and bool(scaling.fit_intercept):
        intercept = float(scaling.column_factor)
    warm = intercept if clip_mode == "auto" else None
    if not isinstance(clip, str):
        sensitivities["gradient_sum"] = l2_clipped_sum_sensitivity(clip, rel)
        noise["gradient_sd"] = gaussian_sigma(sensitivities["gradient_sum"], per_round)
    if rel is Neighbouring.ADD_REMOVE:
        sensitivities["count"] = 1.0
    return ReleasePlan(
        method="dp-gd",
        options={"algorithm": "clipped", "epsilon": eps, "delta": dlt, "clip_norm": clip,
                 "n_iter": T, "learning_rate": eta, "schedule": sched, "accounting": acct,
                 "output": out_kind, "n_releases": n_releases, "scaling": scaling,
                 "warm_start": warm,  # the first column's constant value, or None
                 "schedule_rule": {"n_iter": "auto" if auto_steps else "given",
                                   "clip_norm": clip_mode if auto_clip else "given"}},
        budget=budget, relation=rel, parts=parts, n=public_n, d=d_,
        sensitivities=sensitivities, noise=noise)


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
    (:func:`dpreg.mechanisms.gaussian`, sensitivity 1, one round's budget); with
    ``clip_norm="auto"`` then the two spread releases (module doc: Σ clip(y) and
    Σ|clip(y) − ȳ̃|, each a Gaussian mechanism at ``plan.parts["spread"]`` and the
    sensitivities of :func:`dpgd_spread_sensitivities`) and C_g = :func:`dpgd_spread_clip`
    (post-processing; kept in ``details["spread"]``); then per round
    t = 1..T the sum of the per-example gradients 2(θᵀx_i − y_i)·x_i clipped to L2 norm
    C_g (the plan's, the spread-aware one, or with ``clip_norm="public"`` under add/remove
    :func:`dpgd_schedule` of the released count: adaptive composition), released at the
    sensitivity of that C_g and
    the round budget (the T rounds' noise drawn by one batched ``gaussian_calls`` sampler
    call of :mod:`dpreg.mechanisms.gaussian`, the same releases as T ``gaussian`` calls),
    and the step θ ← θ − η_t·(noisy sum)/n (n the public n, or the noisy count).
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
    T = o["n_iter"]
    if rel is Neighbouring.ADD_REMOVE:  # n is private: a noisy count, released first
        n_hat = max(1.0, float(gaussian(float(n), sensitivity=1.0, budget=per_round, rng=rng)))
    else:
        n_hat = float(n)
    spread: dict[str, Any] = {}
    if o["clip_norm"] == "auto":  # the spread of the label, then C_g from it (adaptive)
        part = plan.parts["spread"]
        yc = np.clip(ya, -1.0, 1.0)
        ybar = float(np.clip(float(gaussian(float(yc.sum()), budget=part, rng=rng,
                                            sensitivity=plan.sensitivities["spread_sum"]))
                             / n_hat, -1.0, 1.0))
        abs_dev = float(gaussian(float(np.abs(yc - ybar).sum()), budget=part, rng=rng,
                                 sensitivity=plan.sensitivities["spread_abs_dev"])) / n_hat
        sigma_hat = dpgd_spread_sigma(abs_dev, plan.noise["spread_abs_dev_sd"] / n_hat)
        base = dpgd_spread_base_clip(GDP.from_approx(o["epsilon"], o["delta"]).mu, n_hat, d, T)
        cg = dpgd_spread_clip(base, sigma_hat)
        spread = {"y_mean": ybar, "abs_dev": abs_dev, "sigma_hat": sigma_hat,
                  "base_clip": base,
                  "sensitivity": [plan.sensitivities["spread_sum"],
                                  plan.sensitivities["spread_abs_dev"]],
                  "noise_sd": [plan.noise["spread_sum_sd"], plan.noise["spread_abs_dev_sd"]]}
        sens = l2_clipped_sum_sensitivity(cg, rel)
        sd = gaussian_sigma(sens, per_round)
    elif o["clip_norm"] == "public":  # add/remove: C_g from the released count (adaptive)
        cg = dpgd_schedule(n_hat, d, epsilon=o["epsilon"], delta=o["delta"], n_iter=T)[1]
        sens = l2_clipped_sum_sensitivity(cg, rel)
        sd = gaussian_sigma(sens, per_round)
    else:
        cg, sens, sd = o["clip_norm"], plan.sensitivities["gradient_sum"], plan.noise["gradient_sd"]
    etas = learning_rates(o["schedule"], o["learning_rate"], T)
    theta = np.zeros(d)
    if o.get("warm_start") and spread:  # start at the released mean's intercept (module doc)
        theta = dpgd_warm_start(spread["y_mean"], d, o["warm_start"])
        spread["warm_start_intercept"] = float(theta[0])
    tail_start = T // 2
    tail_sum = np.zeros(d)
    # ∇_i = 2·r_i·x_i has norm 2|r_i|·‖x_i‖, so the clipped sum is Xᵀ(2·r·f) with the per-example
    # factor f_i = min(1, C/(2|r_i|·‖x_i‖)): two matrix-vector products per round.
    row_norms = np.linalg.norm(Xa, axis=1)
    # the T Gaussian releases of the gradient sums, their noise drawn in one batched sampler
    # call at the first round (the same releases as T gaussian() calls, bit for bit seeded)
    release = gaussian_calls(T, sensitivity=sens, budget=per_round, rng=rng)
    for t in range(T):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            resid = Xa @ theta - ya
            g_norm = 2.0 * np.abs(resid) * row_norms
            factor = cg / np.maximum(g_norm, cg)  # min(1, C_g/‖∇_i‖)
            total = Xa.T @ (2.0 * resid * factor)
        if not np.all(np.isfinite(total)):  # the iterates diverged (learning rate too large)
            theta = np.full(d, np.nan)
            break
        noisy = np.asarray(release(total), dtype=float)
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
            "clip_norm": cg, "sensitivity": sens, "noise_sd": sd, "n_iter": T,
            "schedule_rule": dict(o["schedule_rule"]),
            "learning_rate": o["learning_rate"], "schedule": o["schedule"],
            "output": o["output"], "noisy_count": rel is Neighbouring.ADD_REMOVE,
            **({"spread": spread} if spread else {}),
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
