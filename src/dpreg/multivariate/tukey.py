"""TukeyEM: private aggregation of OLS models by approximate Tukey depth (Amin et al. 2023).

Steps (m = ``n_models``):

1. Shuffle the rows with a data-independent random permutation and fit OLS (minimum-norm
   least squares, so rank-deficient batches are fine) on m disjoint batches of b = ⌊n/m⌋
   rows; the n − m·b leftover rows are not used.  b >= d is required.
2. Add a tiny per-model jitter (10⁻¹⁰·max(|v|, 10⁻¹²)·U(0, 1) to every coordinate v) to break
   ties, sort every coordinate, and compute log-volumes of the nested boxes of approximate
   Tukey depth >= ℓ: V(ℓ) = Π_j (p_j(m−ℓ+1) − p_j(ℓ)), ℓ = 1..⌈m/2⌉.  The jitter is an
   independent randomised map of each model on its own, so neighbouring datasets still give
   model sets that differ in at most one model.
3. Propose-test-release with ε₁ = ε/2 and all of δ: the distance lower bound A is the largest
   k ∈ {0, …, t−2} (t = ⌊⌊m/2⌋/2⌋) such that some g >= 1 with t+k+g+1 <= ⌈m/2⌉−1 has
   ln V(t−k−1) − ln V(t+k+g+1) − ε₂·g/2 <= ln(δ/(8·e^{ε₂})), and −1 if none does (Amin et al.
   Lemma 3.6, after Brown et al. 2021 Lemma 3.8).  A is 1-sensitive; the test passes iff
   A + Lap(1/ε₁) > ln(1/(2δ))/ε₁ (:func:`dpreg.mechanisms.ptr_test`).  On failure the result
   is ⊥ (``failed=True``), never a zero vector.
4. Restricted exponential mechanism with ε₂ = ε/2 over the depth levels ℓ ∈ {t, …, ⌈m/2⌉}:
   level ℓ is drawn with probability ∝ W(ℓ)·exp(ε₂·ℓ/2) (W = volume of depth exactly ℓ) by
   Gumbel-max in log space, and a uniform point of depth exactly ℓ -- the SAME ℓ -- is returned.

Neighbouring relation: the guarantee is stated for **replace-one at
record level with n public**.  With n fixed the partition is data independent, so replacing
one record changes at most one model: a swap of one model.  Approximate Tukey depth is not
monotone under swaps, so the exponential mechanism keeps the factor ½ (the paper drops it by
appealing to monotonicity under model-level add/remove, which a fixed-m partition does not
provide), and the safety lemma is Brown et al.'s, which is stated for swaps.

ε = inf is the non-private limit: no PTR, and the coordinate-wise median of the models -- a
point of maximal approximate Tukey depth ⌈m/2⌉ -- is returned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from dpreg._spec import Release, ReleasePlan
from dpreg._validation import check_delta, check_epsilon, check_int, check_rng, is_seeded
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import RegressionResults
from dpreg.mechanisms.exponential import gumbel_max_index
from dpreg.mechanisms.ptr import ptr_test, ptr_threshold
from dpreg.mechanisms.subsample import random_partition, tie_jitter
from dpreg.multivariate._common import check_design, column_names, warn_if_not_private
from dpreg.privacy.budgets import ApproxDP, PureDP
from dpreg.privacy.ledger import charge
from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement

__all__ = ["TUKEY_AUTO_PASS_PROBABILITY", "TUKEY_MIN_EXTRA_ROWS", "tukey_min_rows_per_model",
    "tukey_auto_n_models", "tukey_pass_probability",
    "tukey_em",
    "tukey_split",
    "plan_tukey_em",
    "TukeyStatistics",
    "tukey_statistics",
    "release_tukey_em",
    "tukey_em_result",
    "PTR_FAILED",
    "partition_models",
    "jitter_and_sort",
    "log_volumes",
    "distance_lower_bound",
    "level_log_weights",
    "sample_at_depth",
    "approximate_depth",
    "target_depth",
    "MIN_MODELS",
]

SOURCE = "Amin, Joseph, Ribero, Vassilvitskii 2023 (TukeyEM); Brown et al. 2021 (PTR lemma)"
#: why a TukeyEM release has no interval / no R² (its results say so)
NO_INTERVAL = ("none: TukeyEM releases one exponential-mechanism draw from a Tukey-depth "
               "region of subsample models; no valid interval is known that is post-processing "
               "of this release (a subsample-and-aggregate interval would need its own budget "
               "and is not offered)")
NO_FIT_STATISTICS = "TukeyEM releases one exponential-mechanism draw: no sum of squares is released"
MIN_MODELS = 8


#: ``n_models="auto"`` gives every model at least d + this many rows (d = design columns)
TUKEY_MIN_EXTRA_ROWS = 2


def tukey_min_rows_per_model(d: int) -> int:
    """The fewest rows b that ``n_models="auto"`` gives each of TukeyEM's models: d + 2.

    An OLS fit on b rows and d columns has residual degrees of freedom b − d; with Gaussian
    rows its coefficient covariance σ²·E[(XᵀX)⁻¹] (an inverse-Wishart mean) is finite only for
    b > d + 1.  At b = d (each model interpolates its rows) or b = d + 1 the models are
    heavy-tailed, their depth boxes huge, and a TukeyEM release that passes PTR can be
    arbitrarily far off (ISLP Wage, 2,400 rows, d = 4: ``"auto"`` used to pick 558 models of
    4 rows, PTR passed and the median test R² was about −600).  A public function of d: no
    privacy cost.
    """
    return int(d) + TUKEY_MIN_EXTRA_ROWS


def target_depth(m: int) -> int:
    """The PTR target depth t = ⌊⌊m/2⌋/2⌋ (≈ m/4)."""
    return (m // 2) // 2


def partition_models(X: np.ndarray, y: np.ndarray, n_models: int, rng: np.random.Generator
                     ) -> np.ndarray:
    """OLS models (m×d) on m disjoint random batches of ⌊n/m⌋ rows (minimum-norm lstsq); the
    batches are :func:`dpreg.mechanisms.random_partition`'s."""
    n, d = X.shape
    b = n // n_models
    order = random_partition(n, n_models, rng)
    Xb = X[order].reshape(n_models, b, d)
    yb = y[order].reshape(n_models, b, 1)
    return (np.linalg.pinv(Xb) @ yb)[:, :, 0]


def jitter_and_sort(models: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Tie-breaking jitter per model coordinate (:func:`dpreg.mechanisms.tie_jitter`), then
    every coordinate sorted: a d×m array."""
    return np.sort(tie_jitter(models, rng).T, axis=1)


def log_volumes(P: np.ndarray) -> np.ndarray:
    """lv[ℓ] = ln V(ℓ) for ℓ = 0..⌈m/2⌉ (lv[0] = +inf), V(ℓ) the volume of depth >= ℓ.

    ``P`` is the d×m array of sorted coordinates; V(ℓ) = Π_j (p_j(m−ℓ+1) − p_j(ℓ)) in the
    1-based order statistics p_j(1) <= … <= p_j(m).
    """
    d, m = P.shape
    h = (m + 1) // 2
    lengths = P[:, ::-1][:, :h] - P[:, :h]  # column ℓ−1: p(m−ℓ+1) − p(ℓ)
    with np.errstate(divide="ignore"):
        logs = np.log(np.maximum(lengths, 0.0))
    out = np.empty(h + 1)
    out[0] = math.inf
    out[1:] = logs.sum(axis=0)
    return out


def _qualifies(lv: np.ndarray, t: int, k: int, eps_em: float, log_thr: float) -> bool:
    """Does some g >= 1 with t+k+g+1 <= ⌈m/2⌉−1 satisfy the Lemma 3.6 volume condition?"""
    h = lv.size - 1
    top = h - 1
    first = t + k + 2
    if first > top:
        return False
    a = lv[t - k - 1]
    deep = lv[first: top + 1]
    g = np.arange(1, deep.size + 1, dtype=float)
    if not np.isfinite(a):  # a zero-volume box never qualifies
        return False
    with np.errstate(invalid="ignore"):
        lhs = a - deep - eps_em * g / 2.0
    lhs = np.where(np.isfinite(deep), lhs, math.inf)
    return bool(np.min(lhs) <= log_thr)


def distance_lower_bound(lv: np.ndarray, t: int, eps_em: float, delta: float) -> int:
    """The paper's A: largest k in {0..t−2} whose volume condition holds, else −1.

    The condition is monotone in k (if it holds for k it holds for k−1 with g+1), so a binary
    search over k is exact.
    """
    if t < 2:
        return -1
    log_thr = math.log(delta) - math.log(8.0) - eps_em
    lo, hi = -1, t - 2  # invariant: A in [lo, hi]; condition(lo) true (or lo = −1)
    if not _qualifies(lv, t, 0, eps_em, log_thr):
        return -1
    lo = 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _qualifies(lv, t, mid, eps_em, log_thr):
            lo = mid
        else:
            hi = mid - 1
    return lo


def level_log_weights(lv: np.ndarray, t: int, eps_em: float) -> tuple[np.ndarray, np.ndarray]:
    """Levels ℓ = t..⌈m/2⌉ and their log-weights ln W(ℓ) + ε₂·ℓ/2 (restricted EM)."""
    h = lv.size - 1
    levels = np.arange(t, h + 1)
    cur = lv[levels]
    nxt = np.append(lv[levels[:-1] + 1], -math.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isfinite(cur), np.exp(np.minimum(nxt - cur, 0.0)), 1.0)
        log_w = np.where(np.isfinite(cur), cur + np.log1p(-ratio), -math.inf)
    return levels, log_w + eps_em * levels / 2.0


def _uniform(lo: float, hi: float, rng: np.random.Generator) -> float:
    return float(lo + (hi - lo) * rng.uniform())


def sample_at_depth(P: np.ndarray, level: int, rng: np.random.Generator) -> np.ndarray:
    """A uniform point of approximate Tukey depth exactly ``level`` (Amin et al. App. 7.4).

    The region is split by the first coordinate j whose coordinate depth equals ``level``:
    coordinates before j have depth >= level+1, coordinate j exactly level, later ones >= level;
    j is drawn proportionally to the region volumes (Gumbel-max in log space).
    """
    d, m = P.shape

    def length(lv_: int) -> np.ndarray:
        if 2 * lv_ > m + 1 or lv_ < 1:
            return np.zeros(d)
        return np.maximum(P[:, m - lv_] - P[:, lv_ - 1], 0.0)

    geq = length(level)
    gt = length(level + 1)
    exact = np.maximum(geq - gt, 0.0)
    with np.errstate(divide="ignore"):
        lg_gt, lg_geq, lg_exact = np.log(gt), np.log(geq), np.log(exact)
    prefix = np.concatenate([[0.0], np.cumsum(lg_gt)[:-1]])
    suffix = np.concatenate([np.cumsum(lg_geq[::-1])[::-1][1:], [0.0]])
    log_vol = prefix + lg_exact + suffix
    j = gumbel_max_index(log_vol, rng)
    out = np.empty(d)
    for i in range(j):
        out[i] = _uniform(P[i, level], P[i, m - level - 1], rng)
    lo_l, hi_l = P[j, level - 1], P[j, m - level]
    if 2 * level + 1 > m:  # the two exact-depth pieces are the same central interval
        out[j] = _uniform(lo_l, hi_l, rng)
    else:
        left = P[j, level] - lo_l
        right = hi_l - P[j, m - level - 1]
        if rng.uniform() * (left + right) < left:
            out[j] = _uniform(lo_l, P[j, level], rng)
        else:
            out[j] = _uniform(P[j, m - level - 1], hi_l, rng)
    for i in range(j + 1, d):
        out[i] = _uniform(P[i, level - 1], P[i, m - level], rng)
    return out


def approximate_depth(w: np.ndarray, models: np.ndarray) -> int:
    """Approximate Tukey depth of ``w`` w.r.t. the rows of ``models``: the minimum over the 2d
    axis-aligned halfspaces through w of the number of models they contain."""
    w = np.asarray(w, dtype=float)
    le = (models <= w).sum(axis=0)
    ge = (models >= w).sum(axis=0)
    return int(np.min(np.minimum(le, ge)))


def tukey_em(
    X: Any,
    y: Any,
    *,
    epsilon: float,
    delta: float,
    n_models: int | str = "auto",
    rng: Any = None,
    ledger: Any = None,
    names: Any = None,
) -> RegressionResults:
    """TukeyEM on the design ``X`` (include a ones column for an intercept).

    Parameters
    ----------
    X, y:
        Design (n×d) and response; no bounds are needed.
    epsilon, delta:
        (ε, δ) with δ > 0: ε/2 for the PTR test, ε/2 for the exponential mechanism, all of δ
        for PTR (:func:`tukey_split`).  ``epsilon=inf`` returns the coordinate-wise median of
        the models (not private).
    n_models:
        ``"auto"`` (default) or an integer m >= 8 (needs n >= m·d).  ``"auto"`` chooses m
        from the public n, d, ε and δ (:func:`tukey_auto_n_models`): the
        rule min(1000, ⌊n/(2d)⌋), raised to the smallest m whose PTR step a public model of
        the depth statistic predicts to pass with probability >= 0.9999 (Amin et al. §4.3:
        "the smallest m that passes"), but never so far that a model gets fewer than d + 2
        rows (:func:`tukey_min_rows_per_model`).  No budget is spent on it: n is public under the
        replace-one guarantee and the model uses no data.  Too few models make PTR fail, too
        many make every model (fitted on ⌊n/m⌋ rows) inaccurate.
    rng, ledger, names:
        Randomness; optional ledger charged (ε, δ) after validation and before any
        randomness is used; coefficient names.

    Guarantee: (ε, δ)-DP for replace-one neighbours with n public.  PTR failure is a private
    output (``failed=True``; the budget stays spent).

    Notes
    -----
    The pipeline: :func:`plan_tukey_em` (every check, m, the PTR/EM split, sensitivities and
    the PTR noise scale, from the public n and d) -> :func:`tukey_statistics` (deterministic:
    the checked design) -> the ledger charge (once, after validation, before any randomness)
    -> :func:`release_tukey_em` (THE draws: the partition, the jitter, the PTR test and its ⊥,
    the exponential mechanism; the privacy statement) -> :func:`tukey_em_result`
    (post-processing into the results object).
    """
    Xa, ya = check_design(X, y)
    n, d = Xa.shape
    plan = plan_tukey_em(n=n, d=d, epsilon=epsilon, delta=delta, n_models=n_models)
    labels = column_names(X, d, names)
    gen = check_rng(rng)
    stats = tukey_statistics(Xa, ya, plan)
    charge(ledger, plan.budget, "TukeyEM", plan.relation)
    warn_if_not_private(plan.options["epsilon"], "TukeyEM")
    return tukey_em_result(release_tukey_em(stats, plan, gen, seeded=is_seeded(rng)),
                           names=labels)


def tukey_split(epsilon: float, delta: float) -> tuple[ApproxDP, PureDP]:
    """TukeyEM's budget split: (ε/2, δ) for the propose-test-release check and ε/2 (pure) for
    the restricted exponential mechanism; they compose (basic composition) to exactly (ε, δ).
    A pure function of the public (ε, δ)."""
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    return ApproxDP(eps / 2.0, dlt), PureDP(eps / 2.0)


def plan_tukey_em(*, n: int, d: int, epsilon: float, delta: float,
                  n_models: int | str = "auto", scaling: Any = None,
                  intercept_column: bool = False) -> ReleasePlan:
    """The public part of a TukeyEM release on n rows and d design columns: every parameter
    checked (as :func:`tukey_em` documents them), the number of models m (given, or
    :func:`tukey_auto_n_models` of the public n, d, ε, δ), the batch size ⌊n/m⌋ and the
    PTR target depth, the budget (ε, δ) and its split (:func:`tukey_split`: ``parts``
    ``"ptr"`` and ``"em"``), the sensitivities (the distance bound A of the PTR test and the
    depth score of the exponential mechanism are both 1-sensitive under a swap of one model)
    and the Laplace scale 1/ε₁ of the PTR test.  Reads no data and draws nothing.

    ``n`` is public: TukeyEM's guarantee is for replace-one neighbours with n public.
    ``scaling`` (a public :class:`~dpreg.multivariate.PublicScaling`) and
    ``intercept_column`` (put a ones column first when there is no scaling) say how
    :func:`tukey_statistics` turns raw regressors into the design (the estimator's steps);
    the defaults take the design as given."""
    n = check_int(n, "n", minimum=1)
    d = check_int(d, "d", minimum=1)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    auto = isinstance(n_models, str)
    if auto and n_models != "auto":
        raise InvalidInputError(f"n_models must be 'auto' or an integer >= {MIN_MODELS}; got "
                                f"{n_models!r}")
    if auto:
        m = tukey_auto_n_models(n, d, epsilon=eps, delta=dlt)
        if m < MIN_MODELS:
            b_min = tukey_min_rows_per_model(d)
            raise InvalidInputError(
                f"n_models='auto' needs n >= {MIN_MODELS}·(d + {TUKEY_MIN_EXTRA_ROWS}) = "
                f"{MIN_MODELS * b_min} rows for this design ({MIN_MODELS} models of at least "
                f"d + {TUKEY_MIN_EXTRA_ROWS} = {b_min} rows each); got n={n}")
    else:
        m = check_int(n_models, "n_models", minimum=MIN_MODELS)
    if n // m < d:
        raise InvalidInputError(
            f"n_models must be <= n // d = {n // d} for this data: each of the m models is fitted "
            f"on b = n // m rows and needs b >= d = {d} (columns of the design); got "
            f"n_models={m} with n={n} rows (b={n // m})"
        )
    if not isinstance(intercept_column, (bool, np.bool_)):
        raise InvalidInputError(f"intercept_column must be True or False; got "
                                f"{intercept_column!r}")
    ptr_part, em_part = tukey_split(eps, dlt)
    b = n // m
    finite = not math.isinf(eps)
    return ReleasePlan(
        method="tukey-em",
        options={"epsilon": eps, "delta": dlt, "n_models": m,
                 "n_models_choice": "auto" if auto else "given", "batch_size": b,
                 "rows_unused": n - m * b, "target_depth": target_depth(m),
                 "epsilon_ptr": ptr_part.epsilon, "epsilon_em": em_part.epsilon,
                 "ptr_threshold": ptr_threshold(ptr_part.epsilon, dlt) if finite else None,
                 "scaling": scaling, "intercept_column": bool(intercept_column)},
        budget=ApproxDP(eps, dlt), relation=Neighbouring.REPLACE_ONE,
        parts={"ptr": ptr_part, "em": em_part}, n=n, d=d,
        sensitivities={"ptr_distance": 1.0, "em_depth": 1.0},
        noise={"ptr_distance": 1.0 / ptr_part.epsilon if finite else 0.0})


@dataclass(frozen=True)
class TukeyStatistics:
    """TukeyEM's statistics: the checked design ``X`` (n×d) and response ``y``.  TukeyEM is
    subsample-and-aggregate -- its release fits OLS models on a random partition of the rows
    -- so it has no sufficient statistics short of the rows themselves; the random partition
    is part of the release (:func:`release_tukey_em`)."""

    X: np.ndarray
    y: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def dim(self) -> int:
        return int(self.X.shape[1])


def tukey_statistics(X: Any, y: Any, plan: ReleasePlan) -> TukeyStatistics:
    """The deterministic statistics step of TukeyEM: the raw regressors ``X`` mapped to the
    design by the plan's public scaling (clamp to the bounds and rescale, ones column first)
    or given a leading ones column (``intercept_column``), or taken as they are; checked
    finite and of the plan's n rows and d columns (public values)."""
    Xa, ya = check_design(X, y)
    sc = plan.options["scaling"]
    if sc is not None:
        Xa, ya = sc.design(Xa), sc.label(ya)
    elif plan.options["intercept_column"]:
        Xa = np.column_stack([np.ones(Xa.shape[0]), Xa])
    if Xa.shape != (plan.n, plan.d):
        raise InvalidInputError(f"the design must have the plan's n={plan.n} rows and "
                                f"d={plan.d} columns; got {Xa.shape[0]} rows and "
                                f"{Xa.shape[1]} columns")
    return TukeyStatistics(Xa, ya)


#: the reason of TukeyEM's ⊥ (the PTR check failed)
PTR_FAILED = ("TukeyEM's propose-test-release check failed (⊥): the models are not "
              "concentrated enough for this epsilon/delta and n_models. TukeyEM needs "
              "n large compared with d (about n >= 1000*d, n_models around 1000).")


def release_tukey_em(stats: TukeyStatistics, plan: ReleasePlan, rng: Any, *,
                     seeded: bool = False) -> Release:
    """THE release of TukeyEM from its statistics (:func:`tukey_statistics`) and public
    ``plan`` (:func:`plan_tukey_em`) with the Generator ``rng``, in this order of draws: the
    data-independent random partition into m batches (:func:`partition_models`, OLS per
    batch), the tie-breaking jitter (:func:`jitter_and_sort`), the propose-test-release check
    at (ε₁, δ) (:func:`dpreg.mechanisms.ptr_test` on the 1-sensitive distance bound
    :func:`distance_lower_bound`; on failure the release is ⊥ -- ``failed=True`` with
    :data:`PTR_FAILED`, no estimate), and the restricted exponential mechanism at ε₂ (the
    depth level by :func:`dpreg.mechanisms.exponential.gumbel_max_index`, then a uniform
    point of that depth, :func:`sample_at_depth`).  At ε = inf: the coordinate-wise median of
    the models, no test.  Builds the :class:`PrivacyStatement` ((ε, δ), replace-one, n
    public); ``values["theta"]`` holds the estimate (absent for ⊥)."""
    o = plan.options
    d = int(plan.d)  # type: ignore[arg-type]
    if (stats.n_rows, stats.dim) != (plan.n, d):
        raise InvalidInputError(f"stats must have the plan's n={plan.n} rows and d={d} "
                                f"columns; got {stats.n_rows} rows and {stats.dim} columns")
    details: dict[str, Any] = {
        "requested": {"epsilon": o["epsilon"], "delta": o["delta"]},
        "n_models": o["n_models"], "n_models_choice": o["n_models_choice"],
        "batch_size": o["batch_size"], "rows_unused": o["rows_unused"],
        "target_depth": o["target_depth"],
        "epsilon_ptr": o["epsilon_ptr"], "epsilon_em": o["epsilon_em"],
        "em_exponent": "epsilon_em * depth / 2 (swap neighbours at model level)",
    }
    if o["ptr_threshold"] is not None:
        details["ptr_threshold"] = o["ptr_threshold"]
    privacy = PrivacyStatement(budget=plan.budget, neighbouring=plan.relation,
                               mechanism="TukeyEM", source=SOURCE, seeded=seeded,
                               details=details)
    models = partition_models(stats.X, stats.y, o["n_models"], rng)
    P = jitter_and_sort(models, rng)
    if math.isinf(o["epsilon"]):
        return Release(plan, {"theta": np.median(P, axis=1)}, privacy)
    lv = log_volumes(P)
    t, eps_em = o["target_depth"], o["epsilon_em"]
    distance = distance_lower_bound(lv, t, eps_em, o["delta"])
    if not ptr_test(distance, epsilon=o["epsilon_ptr"], delta=o["delta"], rng=rng):
        return Release(plan, {}, privacy, failed=True, reason=PTR_FAILED)
    levels, logits = level_log_weights(lv, t, eps_em)
    level = int(levels[gumbel_max_index(logits, rng)])
    return Release(plan, {"theta": sample_at_depth(P, level, rng)}, privacy)


def tukey_em_result(release: Release, *, names: Sequence[str] | None = None
                    ) -> RegressionResults:
    """The :class:`~dpreg.inference.RegressionResults` of a TukeyEM release (post-processing):
    the released point (zeros with ``failed=True`` and the reason for ⊥), the model count and
    batch size, and why there is no interval (:data:`NO_INTERVAL`) and no R²."""
    plan, o = release.plan, release.plan.options
    d = int(plan.d)  # type: ignore[arg-type]
    labels = [f"x{j}" for j in range(d)] if names is None else [str(s) for s in names]
    extra = {"n_models": o["n_models"], "batch_size": o["batch_size"]}
    if release.failed:
        return RegressionResults(
            np.zeros(d), names=labels, privacy=release.privacy, method="tukey-em",
            failed=True, reason=release.reason, nobs=plan.n, extra=extra,
            uncertainty=NO_INTERVAL, no_fit_statistics=NO_FIT_STATISTICS)
    return RegressionResults(release.values["theta"], names=labels, privacy=release.privacy,
                             method="tukey-em", uncertainty=NO_INTERVAL,
                             no_fit_statistics=NO_FIT_STATISTICS, nobs=plan.n, extra=extra)


# ---- the number of models from public values (n_models="auto"; Amin et al. 2023, §4.3):
# the predicted pass probability of the PTR step, from a fixed public simulation (no data)
#: ``TukeyEM(n_models="auto")`` raises m until PTR is predicted to pass with this probability:
#: the Gaussian pass model is optimistic on real data (ISLP Bikeshare, 6 features: predicted
#: distance 24 vs realised 21-25 at m = 615, where 0.95 was predicted and 77% passed), so the
#: target leaves a margin of a few depth units (m = 682 there; every fit passed)
TUKEY_AUTO_PASS_PROBABILITY = 0.9999


@lru_cache(maxsize=256)
def _proxy_distance(m: int, d: int, eps_em: float, delta: float) -> int:
    gen = np.random.default_rng(12345)  # public simulation, fixed seed: no data involved
    P = np.sort(gen.standard_normal((d, m)), axis=1)
    return int(distance_lower_bound(log_volumes(P), target_depth(m), eps_em, delta))


def tukey_pass_probability(m: int, d: int, *, epsilon: float, delta: float) -> float:
    """Predicted probability that TukeyEM's PTR step passes with m models in d dimensions.

    The distance bound A depends on the models only through ratios of the widths of their
    coordinate-wise quantile boxes, which are scale free; for well-conditioned data the m OLS
    models are close to Gaussian, so A is predicted from m simulated standard-normal models (a
    public computation, no data, no privacy cost) and the pass probability is
    P(A + Lap(1/ε₁) > ln(1/(2δ))/ε₁) with ε₁ = ε/2.  Heavier-tailed models give a smaller A:
    the prediction is optimistic for such data, hence the high required probability.
    """
    from dpreg.mechanisms.ptr import ptr_threshold

    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    if m < MIN_MODELS or d < 1:
        return 0.0
    if math.isinf(eps):
        return 1.0
    a = _proxy_distance(int(m), int(d), eps / 2.0, dlt)
    z = ptr_threshold(eps / 2.0, dlt) - a  # need Lap(2/ε) > z
    b = 2.0 / eps
    return 1.0 - 0.5 * math.exp(z / b) if z < 0 else 0.5 * math.exp(-z / b)


@lru_cache(maxsize=256)
def tukey_auto_n_models(n: int, d: int, *, epsilon: float, delta: float,
                        target: float = TUKEY_AUTO_PASS_PROBABILITY) -> int:
    """TukeyEM's number of models m for n rows and d design columns (intercept included) --
    ``n_models="auto"``; a function of public values only (n is public under TukeyEM's
    replace-one guarantee), so it costs no budget.

    Start from the rule m₀ = :func:`dpreg.preprocess.tukey_n_models` (min(1000, ⌊n/(2d)⌋));
    if the PTR step is predicted (:func:`tukey_pass_probability`) to pass with probability
    below ``target`` (:data:`TUKEY_AUTO_PASS_PROBABILITY`), take the smallest m in (m₀, ⌊n/(d + 2)⌋]
    predicted to reach it -- Amin et al.'s "smallest m whose PTR check passes" (§4.3), with the
    public pass model in place of their non-private trial runs -- and when no feasible m
    reaches it, the feasible m with the highest predicted probability.  Feasible: every model
    gets ⌊n/m⌋ >= d + 2 rows (:func:`tukey_min_rows_per_model`; fewer give heavy-tailed models
    whose release can be arbitrarily bad even when PTR passes), i.e. m <= ⌊n/(d + 2)⌋.  Returns
    a value below 8 when n < 8·(d + 2) (TukeyEM cannot run).
    """
    from dpreg.preprocess import tukey_n_models

    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    hi = int(n) // tukey_min_rows_per_model(int(d))
    m0 = max(MIN_MODELS, tukey_n_models(n, d))
    if hi < MIN_MODELS:
        return hi
    m0 = min(m0, hi)

    def p(m: int) -> float:
        return tukey_pass_probability(m, d, epsilon=eps, delta=dlt)

    if p(m0) >= target:
        return m0
    best, best_p = m0, p(m0)
    prev, m = m0, m0
    while m < hi:  # coarse scan (steps of ~2%), then bisection inside the first passing step
        m = min(hi, m + max(1, m // 50))
        pm = p(m)
        if pm >= target:
            lo_m, hi_m = prev, m  # p(lo_m) < target <= p(hi_m)
            while hi_m - lo_m > 1:
                mid = (lo_m + hi_m) // 2
                if p(mid) >= target:
                    hi_m = mid
                else:
                    lo_m = mid
            return hi_m
        if pm > best_p:
            best, best_p = m, pm
        prev = m
    return best
