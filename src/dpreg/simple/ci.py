"""Confidence intervals for the Theil-Sen slope (Sarathy & Vadhan 2025, §6; corrected).

DP interval (``theil_sen_ci``) -- **ε-DP (pure), replace-one neighbours, n public**:

1. Slopes of a data-independent pair design S, doubled with the ±∞ tie convention (2|S| = M
   entries; one record changes at most 2k of them).
2. Null variance σ² of the U-statistic: its **maximum over every x**,
   :func:`dpreg.simple.pairs.null_variance_max` (depends on S only): Kendall's value for the
   complete design (ties never increase it; proof in :mod:`dpreg.simple.pairs`), the degree
   bound :func:`~dpreg.simple.pairs.null_variance_bound` for matchings designs.
3. Target quantiles (q_L, q_U):

   * ``method="union"`` (DPWideCIUnion, Alg. 6.2): α₁ = r_α·α, α₂ = (1 − r_α)·α,
     b = ½·Φ⁻¹(1 − α₁/8)·σ, c = 2·ln(4R/(α₂θ))/(ε_run·M) with ε_run the budget of each DPWide
     call and M the size of the multiset it runs on (the paper's c = 2ln(4R/(α₂θ))/(εN) does
     not match its own calls at ε/2); q = ½ ∓ (b + c); R = half the width of output_range.
   * ``method="tight"`` (ComputeExpMechCITargets, §6.4): the rank of the true slope in the
     doubled multiset is M·(1 − U₀)/2 with U₀ ≈ N(0, σ²); its mass on rank m is a difference
     of normal CDFs over the lattice cell (the paper uses the density as a point mass), and
     the failure probability of a DPWide call targeting rank t is
     F_U(t) = P[rank > t] + Σ_{m<=t} P[rank = m]·min(1, (R/θ)·exp(−ε_run·(t − m)/2)) (and the
     mirror image for the lower end).  The targets closest to M/2 with failure <= α/2 are
     searched inside the Union targets, so the tight interval is never wider than Union's
     (if no rank qualifies the Union target is kept).  F_U is nonincreasing and F_L
     nondecreasing in t (moving the target one rank out drops a P[rank = m] term or shrinks
     a cap), so the search is a bisection over ranks that evaluates F at O(log M) ranks in
     O(1) memory each (:func:`tight_failure_at`: the near part is a normal CDF, the far
     part a short direct sum or a closed form) -- any n, no array over the M + 1 ranks;
     small M scan all ranks (:func:`tight_failure_probabilities`), with the same targets.

   * ``method="calibrated"``: q = ½ ∓ Q, Q the (1 − α/2) quantile of N(0, (σ/2)²) +
     Laplace(0, 2/(ε_run·M)) (:func:`calibrated_offset`): the same normal model of the true
     slope's rank, plus the rank error a DPWide call actually has when the pair slopes near
     its target are evenly spaced (each interval drawn ∝ length·e^{−(ε_run/2)·rank
     distance}: a Laplace law in ranks), instead of the worst case over data sets; default θ
     a tenth of :func:`default_ci_theta`.  Offered only where that model holds on real data
     (:func:`calibrated_refusal`, public: the rank scale 2/(ε_run·M) <= 0.08, about ε·n >= 200
     through the estimator); an explicit request outside it raises ``NoUncertaintyError``
     before anything is charged.  ``method="auto"`` is calibrated where offered, else tight
     (:func:`resolve_ci_method`).  ε = ∞: Sen's classical interval, b = ½Φ⁻¹(1 − α/2)σ.

4. L̃ = DPWide(q_L), Ũ = DPWide(q_U), each at ε_run = (ε/2)/(2k) on the doubled multiset
   (ε/3 each, and ε/3 for a DPWide median, with ``return_estimate=True``); the interval is
   [L̃ − θ, Ũ + θ] clipped to output_range.  A target at or beyond 0 (1) gives the range end
   without sampling (decided from public quantities only).

Validity (Sarathy & Vadhan Thm 6.3.1/6.4.1): coverage >= 1 − α over the data and the mechanism
when the errors are i.i.d. continuous and symmetric, the true slope lies in
[lo + θ, hi − θ], and n is large enough for the normal approximation of U₀.  Using the
maximal null variance keeps this for every x; with the degree bound used for all pairs before
issue 18 (3× Kendall's value) the sampling part alone covered with probability about
1 − 2Φ(−√3·z) (0.9993 at 95%).

Where the conservativeness of union/tight comes from (issue 18): the tight targets combine the
sampling and the mechanism error in one failure probability per end (α/2 each; the two
failure events are disjoint up to crossing, so there is no union-bound slack to recover).
The mechanism part is the worst case over data sets: the output falls below the rank-m
region with probability at most (R/θ)·exp(−ε_run·(t − m)/2), attained when the pair slopes
below the true slope sit in one clump far from it and the ones above in one clump at it.  On
real data the slopes are spread and the actual rank error is far smaller, so where the
mechanism term dominates (small ε·n) coverage stays near 1.  The calibrated method replaces
that worst case by the evenly-spaced model; it gives up the finite-sample bound (its coverage
is approximate, measured on four real data sets in docs/uncertainty.md) but not privacy: the
targets remain functions of public inputs and the releases are the same DPWide calls.

Non-private interval (``nonprivate_theil_sen_ci``, Def. 6.1.1): [F_s⁻¹(½ − b), F_s⁻¹(½ + b)]
with b = ½·Φ⁻¹(1 − α/8)·σ and the exact (data-dependent) σ by default.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from scipy import optimize, signal, special, stats

from dpreg._spec import Release, ReleasePlan
from dpreg._validation import (
    DEPRECATED,
    check_bounds,
    check_epsilon,
    check_int,
    check_probability,
    check_rng,
    is_seeded,
    renamed_parameters,
)
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import NoUncertaintyError
from dpreg.mechanisms import exp_quantile
from dpreg.privacy import Ledger, Neighbouring, PrivacyStatement, PureDP, charge
from dpreg.simple._common import (
    check_choice,
    check_flag,
    check_pairs_arg,
    check_simple_xy,
    div_down,
    max_matchings,
    warn_not_private,
)
from dpreg.simple._result import ConfidenceInterval
from dpreg.simple._theil_sen import (
    PairStatistics,
    check_theta,
    resolve_algorithm,
    theil_sen_statistics,
)
from dpreg.simple.pairs import (
    doubled_multiset,
    kendall_null_variance,
    make_design,
    null_variance_exact,
    null_variance_max,
    pair_slopes,
)

__all__ = [
    "theil_sen_ci",
    "plan_theil_sen_ci",
    "theil_sen_ci_statistics",
    "release_theil_sen_ci",
    "theil_sen_ci_result",
    "public_null_variance",
    "warn_tight_search",
    "ALL_TIED_CI",
    "CI_METHODS",
    "CALIBRATED_MAX_RANK_SCALE",
    "CALIBRATED_THETA_FACTOR",
    "calibrated_refusal",
    "calibrated_refusal_for",
    "public_design_size",
    "resolve_ci_method",
    "calibrated_offset",
    "calibrated_targets",
    "normal_laplace_sf",
    "nonprivate_half_width",
    "nonprivate_theil_sen_ci",
    "range_clipped_ends",
    "union_targets",
    "tight_targets",
    "tight_failure_probabilities",
    "default_ci_theta",
    "CI_THETA_MIN_EPS_N",
    "TIGHT_MAX_MULTISET",
    "TIGHT_SCAN_MAX_MULTISET",
    "tight_failure_at",
    "POINT_MASS_THETAS",
    "point_mass_flag",
    "warn_point_mass",
    "POINT_MASS_TEXT",
]

#: ``default_ci_theta`` uses width/(ε·n) only once ε·n exceeds this; below it the widening
#: stays at the old fixed 0.005 × width (= width/200), which measured best when ε·n is small.
CI_THETA_MIN_EPS_N = 200.0

#: the interval methods of :func:`theil_sen_ci` ("auto": "calibrated" where
#: :func:`calibrated_refusal` allows it, else "tight")
CI_METHODS = ("union", "tight", "calibrated", "auto")

#: the calibrated method's default widening θ is this share of :func:`default_ci_theta`
#: (measured, docs/uncertainty.md "Theil-Sen: the calibrated interval"): the full default
#: θ, which the guaranteed methods need to bound the mechanism's worst case, is up to twice
#: the non-private interval's width on real data (star98 at ε = 1) and was what made those
#: intervals over-cover; a tenth of it leaves the mechanism's shift small against the
#: sampling spread and still keeps the widened median's central interval >= 2θ long.
CALIBRATED_THETA_FACTOR = 0.1

#: the largest mechanism rank scale 2/(ε_run·M) (a share of the multiset; ≈ 16/(ε·n) for
#: the line-plus-interval estimator at total ε, all pairs or matchings) at which the
#: calibrated interval is offered (:func:`calibrated_refusal`): ε·n >= 200
CALIBRATED_MAX_RANK_SCALE = 0.08

#: largest doubled multiset M for which ``method="tight"`` scans the failure probabilities at
#: all M + 1 ranks (:func:`tight_failure_probabilities`, about 120 bytes per rank at peak);
#: above it the targets are found by bisection over ranks with :func:`tight_failure_at`
#: (O(1) memory; measured CPU: 1.5-6 ms for all pairs at n = 1,000-200,000 where the far sums
#: take their closed form, up to ~0.2 s where they are summed directly, λ >= 10⁻³).  Both give
#: the same targets (tested).
TIGHT_SCAN_MAX_MULTISET = 100_000

#: hard limit of the tight target search: ranks up to M are resolved exactly in float64
#: (2m/M) only while M <= 2⁵² (all pairs: n <= 67,108,864).  Above it the Union targets are
#: used -- valid, and what the tight method falls back to anyway when no rank qualifies --
#: with a warning and ``details["tight_search"]``; decided from public M only.  (Before,
#: this limit was 10⁷ because the search materialised all M + 1 ranks.)
TIGHT_MAX_MULTISET = 2 ** 52

#: the error of the non-private interval (ε = ∞) when no pair of the design has distinct x
ALL_TIED_CI = ("every pair has tied x: the non-private Theil-Sen interval (epsilon=inf) is "
             "undefined (no pair has a slope); with a finite epsilon theil_sen_ci releases the "
             "DP interval, which is then the slope search range (flagged not informative)")

#: the release rule of :func:`point_mass_flag`: an interval containing 0 that lies within this
#: many θ of it is flagged (each end of a DP interval is a widened median ± θ: both medians
#: landing within θ of a pile of exactly-0 pair slopes put the interval inside [−2θ, 2θ])
POINT_MASS_THETAS = 2.0

#: what a flagged interval means (the warning, the uncertainty text and the summary row)
POINT_MASS_TEXT = (
    "the slope interval contains 0 and lies within 2θ of it (θ its public widening): the "
    "pairwise slopes pile up at exactly 0, as they do when the response takes few values "
    "(many pairs share their y).  The median pairwise slope is then 0 whatever the relation "
    "between x and y, so this interval says the median pairwise slope is 0, not that x has "
    "no effect; consider a method that estimates the OLS slope (noisy-stats, adassp)")

_SOURCE = ("Sarathy & Vadhan 2025, Alg. 6.1-6.2 (DPWideCIUnion) and §6.4 "
           "(ComputeExpMechCITargets), with dpreg's corrections (docs/privacy/theil_sen_ci.md)")


# --------------------------------------------------------------------------------------------
# target quantiles
# --------------------------------------------------------------------------------------------
def union_targets(*, size: int, sigma: float, alpha: float, r_alpha: float, eps_lower: float,
                  eps_upper: float, half_range: float, theta: float) -> dict[str, float]:
    """Union-method targets q_L = ½ − b − c_L, q_U = ½ + b + c_U (unclamped) and b, c."""
    a1 = r_alpha * alpha
    a2 = (1.0 - r_alpha) * alpha
    b = 0.5 * float(stats.norm.ppf(1.0 - a1 / 8.0)) * sigma
    log_term = math.log(4.0 * half_range / (a2 * theta))
    c_lo = 2.0 * log_term / (eps_lower * size)
    c_hi = 2.0 * log_term / (eps_upper * size)
    return {"q_lower": 0.5 - b - c_lo, "q_upper": 0.5 + b + c_hi, "b": b,
            "c_lower": c_lo, "c_upper": c_hi, "alpha1": a1, "alpha2": a2}


def normal_laplace_sf(x: float, *, sd: float, scale: float) -> float:
    """P[Z + L > x] for independent Z ~ N(0, sd²) and L ~ Laplace(0, scale) (sd > 0,
    scale >= 0): Φ(−x/sd) + ½e^{sd²/(2b²) − x/b}Φ(x/sd − sd/b) − ½e^{sd²/(2b²) + x/b}Φ(−x/sd − sd/b)
    with b = scale, the exponentials evaluated in log space (``scipy.special.log_ndtr``) so
    that no term overflows; ``scale = 0`` is the normal tail."""
    z = x / sd
    if scale <= 0.0:
        return float(special.ndtr(-z))
    r = sd / scale
    half_r2 = 0.5 * r * r
    plus = math.exp(half_r2 - x / scale + float(special.log_ndtr(z - r)))
    minus = math.exp(half_r2 + x / scale + float(special.log_ndtr(-z - r)))
    return float(min(1.0, max(0.0, float(special.ndtr(-z)) + 0.5 * plus - 0.5 * minus)))


def calibrated_offset(*, sigma: float, alpha: float, size: int, epsilon: float) -> float:
    """Q with P[N(0, (σ/2)²) + Laplace(0, 2/(ε_run·M)) > Q] = α/2 (quantile units; ε_run =
    ``epsilon``, M = ``size``; ε_run = ∞ gives the classical ½·Φ⁻¹(1 − α/2)·σ).

    The first term is the sampling spread of the true slope's rank in the doubled multiset
    (F_s(β₁) = (1 − U₀)/2, U₀ ≈ N(0, σ²)); the second is the rank error of one DPWide call
    when the pair slopes near the target are evenly spaced: interval j is drawn with
    probability ∝ |I_j|·exp(−(ε_run/2)·|rank distance|), a Laplace law in ranks with scale
    2/ε_run.  Public inputs only.
    """
    sd = 0.5 * sigma
    scale = 0.0 if math.isinf(epsilon) else 2.0 / (epsilon * size)
    half = alpha / 2.0
    if scale == 0.0:
        return float(stats.norm.isf(half)) * sd
    hi = float(stats.norm.isf(half / 2.0)) * sd + scale * math.log(1.0 / half)
    while normal_laplace_sf(hi, sd=sd, scale=scale) > half:
        hi *= 2.0
    return float(optimize.brentq(lambda v: normal_laplace_sf(v, sd=sd, scale=scale) - half,
                                 0.0, hi, xtol=1e-14, rtol=1e-12))


def calibrated_targets(*, size: int, sigma: float, alpha: float, eps_lower: float,
                       eps_upper: float) -> dict[str, float]:
    """Targets of the calibrated method: q = ½ ∓ :func:`calibrated_offset` (unclamped)."""
    off_lo = calibrated_offset(sigma=sigma, alpha=alpha, size=size, epsilon=eps_lower)
    off_hi = calibrated_offset(sigma=sigma, alpha=alpha, size=size, epsilon=eps_upper)
    return {"q_lower": 0.5 - off_lo, "q_upper": 0.5 + off_hi,
            "offset_lower": off_lo, "offset_upper": off_hi}


def public_design_size(n: int, pairs: str | int) -> tuple[int, int]:
    """(k, M) of the pair design from public inputs: the largest number of pairs a record
    belongs to and the doubled multiset's size 2|S| -- all pairs: (n − 1, n(n − 1)); m
    round-robin matchings: (m, 2m⌊n/2⌋), except all n rounds of an odd n, where each record
    sits out once (k = n − 1: the complete design).  Equal to the drawn design's ``k`` and
    ``2·size`` for every legal m (tested); needed before anything is drawn."""
    if pairs == "all":
        return n - 1, n * (n - 1)
    m = int(pairs)
    return (n - 1 if n % 2 == 1 and m == n else m), 2 * m * (n // 2)


def public_null_variance(n: int, pairs: str | int, null_variance: str = "bound") -> float:
    """The data-independent null variance σ² the DP interval uses, from the public n and
    pair design choice alone (no design is drawn): ``"kendall"``
    :func:`~dpreg.simple.pairs.kendall_null_variance`; ``"bound"``
    :func:`~dpreg.simple.pairs.null_variance_max` of the design ``make_design(n, pairs,
    rng)`` draws -- Kendall's value for the complete design (all pairs, or every round of the
    round-robin), else :func:`~dpreg.simple.pairs.null_variance_bound`, which depends only on
    the degrees (m matchings: every record in m pairs; for odd n the m records that sit a
    round out in m − 1) and the repeated pairs (none: the rounds are distinct).  The same
    float as ``null_variance_max`` of every drawn design, bit for bit (tested)."""
    if null_variance == "kendall" or pairs == "all":
        return kendall_null_variance(n)
    m = int(pairs)
    if m == max_matchings(n):
        return kendall_null_variance(n)
    size = m * (n // 2)
    # Σ deg·(deg − 1) over the records (an integer, exact in float64 as in the bound)
    sum_deg = (n * m * (m - 1) if n % 2 == 0
               else m * (m - 1) * (m - 2) + (n - m) * m * (m - 1))
    sharing_one = float(sum_deg) - 2.0 * 0
    return 1.0 / size + 0 / size**2 + sharing_one / (3.0 * size**2)


def calibrated_refusal(size: int, eps_lower: float, eps_upper: float) -> str:
    """Why the calibrated interval is not offered at these PUBLIC inputs ("" when it is).

    Refused when the mechanism's rank scale 2/(ε_run·M) of either end exceeds
    :data:`CALIBRATED_MAX_RANK_SCALE` (0.08, about ε·n < 200 for the line-plus-interval
    estimator at total ε): the mechanism's rank error then reaches beyond the quartiles of
    the pair slopes, where they are not evenly spaced, and the model behind
    :func:`calibrated_offset` no longer describes it (measured: two of four real data sets
    over-covered there).  Inputs are n's design size and ε only -- never the data."""
    scale = max(0.0 if math.isinf(e) else 2.0 / (e * size) for e in (eps_lower, eps_upper))
    if scale <= CALIBRATED_MAX_RANK_SCALE * (1.0 + 1e-9):  # inclusive despite float rounding
        return ""
    need = scale / CALIBRATED_MAX_RANK_SCALE
    return (f"the calibrated Theil-Sen interval is not offered here: the mechanism's rank "
            f"error (scale {scale:.3f} of the pair-slope multiset, from n and ε alone) exceeds "
            f"{CALIBRATED_MAX_RANK_SCALE:g}, where its calibration is not reliable "
            f"(docs/uncertainty.md, \"Theil-Sen: the calibrated interval\"). Use about "
            f"{need:.2g}× the ε or the rows, or ci_method='tight' (always offered: coverage "
            f">= 1 − α by Sarathy & Vadhan's bound, usually near 1 and wider), or "
            f"ci_method='auto' (the default), which falls back to it")


def calibrated_refusal_for(*, n: int, pairs: str | int, epsilon: float,
                           return_estimate: bool = False) -> str:
    """:func:`calibrated_refusal` at an interval budget ``epsilon`` (split between the two
    ends, and a third part for the estimate with ``return_estimate``, exactly as
    :func:`theil_sen_ci` splits it; each end's ε_run = its part/(2k)): "" where the
    calibrated interval is offered.  Public inputs only; the fit, the planner and the CLI's
    per-group count all consult this one rule."""
    k, size = public_design_size(n, pairs)
    ends = PureDP(float(epsilon)).split([1, 1, 1] if return_estimate else [1, 1])[:2]
    return calibrated_refusal(size, *(div_down(p.epsilon, 2 * k) for p in ends))


def resolve_ci_method(method: str, *, n: int, pairs: str | int, epsilon: float,
                      return_estimate: bool = False) -> str:
    """The targets :func:`theil_sen_ci` uses for ``method`` at these public inputs:
    ``"auto"`` → ``"calibrated"`` where :func:`calibrated_refusal` allows it, else
    ``"tight"``; ``"calibrated"`` outside the rule raises
    :class:`~dpreg.inference.NoUncertaintyError` (before anything is charged or drawn);
    ``"union"``/``"tight"`` unchanged.  ``epsilon`` is the interval's own budget."""
    meth = check_choice(method, "method", CI_METHODS)
    if meth in ("union", "tight"):
        return meth
    refusal = calibrated_refusal_for(n=n, pairs=pairs, epsilon=epsilon,
                                     return_estimate=return_estimate)
    if not refusal:
        return "calibrated"
    if meth == "calibrated":
        raise NoUncertaintyError(refusal)
    return "tight"


def _rank_cdf(size: int, sigma: float) -> np.ndarray:
    """G[m] ≈ P[rank of the true slope <= m], m = 0..M, from U₀ ≈ N(0, σ²); G[M] = 1."""
    m = np.arange(size + 1, dtype=np.float64)
    g = special.ndtr((2.0 * m / size - 1.0) / sigma)
    g[-1] = 1.0
    return np.maximum.accumulate(g)


def _capped_tail_sum(p: np.ndarray, cdf: np.ndarray, lam: float, ratio: float,
                     shift: int) -> np.ndarray:
    """H[t] = Σ_{m <= t − shift} p[m]·min(1, ratio·exp(−lam·(t − m))) for t = 0..len(p)−1.

    Split at d = ⌊ln(ratio)/lam⌋ (where the cap stops binding): the near part is a CDF
    difference, the far part an exponentially weighted running sum (a first-order recursion,
    evaluated with ``scipy.signal.lfilter``).
    """
    size = p.size
    t = np.arange(size)
    d0 = math.floor(math.log(ratio) / lam) if ratio >= 1.0 else -1
    d = max(min(d0, size + 1), shift - 1)

    padded = np.concatenate(([0.0], cdf))  # cdf[-1] is 1: indices past the end read 1

    def cdf_at(idx: np.ndarray) -> np.ndarray:
        return padded[np.clip(idx, -1, size - 1) + 1]

    near = cdf_at(t - shift) - cdf_at(t - d - 1) if d >= shift else np.zeros(size)
    decay = math.exp(-lam)
    run = signal.lfilter([1.0], [1.0, -decay], p)
    idx = t - d - 1
    far = np.zeros(size)
    ok = idx >= 0
    if ok.any():
        far[ok] = ratio * math.exp(-lam * (d + 1)) * run[idx[ok]]
    return near + far


def tight_failure_probabilities(*, size: int, sigma: float, eps_lower: float, eps_upper: float,
                                half_range: float, theta: float
                                ) -> tuple[np.ndarray, np.ndarray]:
    """(F_L[t], F_U[t]) for target ranks t = 0..M (Sarathy & Vadhan Alg. 3.2, lattice-corrected).

    F_U(t) = P[rank > t] + Σ_{m<=t} P[rank = m]·min(1, (R/θ)e^{−ε_U(t−m)/2});
    F_L(t) = P[rank <= t] + Σ_{m>t} P[rank = m]·min(1, (R/θ)e^{−ε_L(m−t)/2}).
    """
    cdf = _rank_cdf(size, sigma)
    p = np.diff(cdf, prepend=0.0)
    ratio = half_range / theta
    f_upper = (1.0 - cdf) + _capped_tail_sum(p, cdf, eps_upper / 2.0, ratio, 0)
    p_rev = p[::-1].copy()
    h_rev = _capped_tail_sum(p_rev, np.cumsum(p_rev), eps_lower / 2.0, ratio, 1)
    f_lower = cdf + h_rev[::-1]
    return f_lower, f_upper


def tight_targets(*, size: int, sigma: float, alpha: float, eps_lower: float, eps_upper: float,
                  half_range: float, theta: float, union: dict[str, float],
                  search: str = "auto") -> dict[str, Any]:
    """Targets of the tight method, searched inside the Union targets (never wider).

    ``search``: ``"scan"`` evaluates the failure probabilities at all M + 1 ranks
    (:func:`tight_failure_probabilities`; O(M) memory), ``"bisect"`` evaluates them only at
    the ranks a bisection visits (:func:`tight_failure_at`; O(1) memory, O(log M) time --
    F_U is nonincreasing and F_L nondecreasing in t), ``"auto"`` (default) scans
    up to M = ``TIGHT_SCAN_MAX_MULTISET`` and bisects above.  Both return the same ranks
    (tested exactly); they could differ only where a failure probability lies within float
    rounding (about 10⁻⁹ relative) of α/2.
    """
    how = check_choice(search, "search", ("auto", "scan", "bisect"))
    if how == "auto":
        how = "scan" if size <= TIGHT_SCAN_MAX_MULTISET else "bisect"
    half = alpha / 2.0
    mid_lo, mid_hi = math.floor(size / 2), math.ceil(size / 2)
    t_lo_min = max(0, math.ceil(size * union["q_lower"]))
    t_hi_max = min(size, math.floor(size * union["q_upper"]))
    out: dict[str, Any] = {"q_lower": union["q_lower"], "q_upper": union["q_upper"],
                           "t_lower": None, "t_upper": None, "search": how}
    if how == "scan":
        f_lower, f_upper = tight_failure_probabilities(
            size=size, sigma=sigma, eps_lower=eps_lower, eps_upper=eps_upper,
            half_range=half_range, theta=theta)
        cand = np.arange(t_lo_min, mid_lo + 1)
        ok = cand[f_lower[cand] <= half] if cand.size else cand
        if ok.size:
            out["t_lower"] = int(ok[-1])
        cand = np.arange(mid_hi, t_hi_max + 1)
        ok = cand[f_upper[cand] <= half] if cand.size else cand
        if ok.size:
            out["t_upper"] = int(ok[0])
        fail_lo = float(f_lower[out["t_lower"]]) if out["t_lower"] is not None else None
        fail_hi = float(f_upper[out["t_upper"]]) if out["t_upper"] is not None else None
    else:
        def f_lo(t: int) -> float:
            return tight_failure_at(t, side="lower", size=size, sigma=sigma,
                                    epsilon=eps_lower, half_range=half_range, theta=theta)

        def f_hi(t: int) -> float:
            return tight_failure_at(t, side="upper", size=size, sigma=sigma,
                                    epsilon=eps_upper, half_range=half_range, theta=theta)

        # F_L is nondecreasing in t: the largest qualifying t is one below the first failing
        first_bad = _first_true(lambda t: f_lo(t) > half, t_lo_min, mid_lo)
        t_lo = mid_lo if first_bad is None else first_bad - 1
        if t_lo >= t_lo_min:
            out["t_lower"] = t_lo
        # F_U is nonincreasing in t: the smallest qualifying t
        out["t_upper"] = _first_true(lambda t: f_hi(t) <= half, mid_hi, t_hi_max)
        fail_lo = f_lo(out["t_lower"]) if out["t_lower"] is not None else None
        fail_hi = f_hi(out["t_upper"]) if out["t_upper"] is not None else None
    if out["t_lower"] is not None:
        out["q_lower"] = out["t_lower"] / size
    if out["t_upper"] is not None:
        out["q_upper"] = out["t_upper"] / size
    out["failure_lower"], out["failure_upper"] = fail_lo, fail_hi
    return out


def _first_true(pred: Any, lo: int, hi: int) -> int | None:
    """Smallest t in [lo, hi] with ``pred(t)`` for a predicate that is monotone (False, then
    True) on the range; None if it is False at ``hi`` (or the range is empty)."""
    if hi < lo or not pred(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


# -- failure probability at one target rank, in O(1) memory ----------------------------------
#: decay per rank λ above which the far sum of :func:`tight_failure_at` is summed directly
#: over the ⌈40/λ⌉ nearest cells (at most 40,000 terms; the rest weighs < e⁻⁴⁰); below it
#: the closed form (error about λ³ relative, < 10⁻⁹) is used
_DIRECT_SUM_MIN_DECAY = 1e-3
_DIRECT_SUM_LOG_WEIGHT = 40.0
_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _rank_cdf_sf(m: np.ndarray, size: int, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """(G[m], 1 − G[m]) as in :func:`_rank_cdf` (0 / 1 outside 0..M − 1, G[M] = 1), the
    upper tail computed as Φ(−a) rather than 1 − Φ(a)."""
    a = (2.0 * m / size - 1.0) / sigma
    cdf, sf = special.ndtr(a), special.ndtr(-a)
    below, top = m < 0, m >= size
    cdf[below], sf[below] = 0.0, 1.0
    cdf[top], sf[top] = 1.0, 0.0
    return cdf, sf


def _far_sum_direct(j: int, step: int, size: int, sigma: float, lam: float) -> float:
    """Σ_{i>=0} P[rank = j + step·i]·e^{−λ·i} over the ⌈40/λ⌉ nearest cells (step = ±1)."""
    count = math.ceil(_DIRECT_SUM_LOG_WEIGHT / lam) + 1
    m = j + step * np.arange(count, dtype=np.int64)
    m = m[(m >= 0) & (m <= size)]
    if m.size == 0:
        return 0.0
    cdf, sf = _rank_cdf_sf(m.astype(np.float64), size, sigma)
    cdf_prev, sf_prev = _rank_cdf_sf(m.astype(np.float64) - 1.0, size, sigma)
    # each cell's mass from the tail it sits in (no cancellation against 1)
    mass = np.where(cdf <= 0.5, cdf - cdf_prev, sf_prev - sf)
    return float(np.dot(mass, np.exp(-lam * np.abs(m - j))))


def _far_sum_closed(a: float, size: int, sigma: float, lam: float) -> float:
    """Σ_{i>=0} P[rank = j − i]·e^{−λ·i} with a = (2j/M − 1)/σ the upper edge of cell j.

    The lattice cells of the normal rank law weighted by e^{λ·m} (m = the cell's upper edge)
    equal C·∫ φ(u)·e^{λ·v(u)} du (C = (e^λ − 1)/λ, the cell average of the edge weight) minus
    the Euler–Maclaurin boundary term μ·(density at the edge), μ = λ/12 + λ²/24 + λ³/80 +
    O(λ⁴); the integral is e^{κ²/2 − aκ}·Φ(a − κ) relative to the weight at the edge, κ =
    λMσ/2, evaluated in logs (``erfcx``) so that nothing overflows at any M.
    """
    kappa = lam * size * sigma / 2.0
    y = kappa - a
    if y > 0:
        log_int = -a * a / 2.0 + math.log(0.5 * float(special.erfcx(y / _SQRT2)))
    else:
        log_int = (y * y - a * a) / 2.0 + float(special.log_ndtr(-y))
    c = math.expm1(lam) / lam
    mu = lam / 12.0 + lam * lam / 24.0 + lam ** 3 / 80.0
    log_dens = -a * a / 2.0 - _LOG_SQRT_2PI + math.log(2.0 / (size * sigma))
    return c * math.exp(log_int) - mu * math.exp(log_dens)


def tight_failure_at(t: int, *, side: str, size: int, sigma: float, epsilon: float,
                     half_range: float, theta: float) -> float:
    """F_U(t) (``side="upper"``) or F_L(t) (``"lower"``) of :func:`tight_failure_probabilities`
    at one target rank t, in O(1) memory (no array over the M + 1 ranks).

    With d the largest rank distance at which the cap min(1, (R/θ)e^{−λ·dist}) (λ = ε/2) is
    still 1: F_U(t) = P[rank > t − d − 1] + (R/θ)e^{−λ(d+1)}·Σ_{i>=0} P[rank = t − d − 1 −
    i]e^{−λi}, and mirrored for F_L.  The far sum is summed directly over its ⌈40/λ⌉ nearest
    cells when λ >= 10⁻³ and otherwise taken from its closed form (:func:`_far_sum_closed`);
    both agree with the O(M) scan to about 10⁻⁹ relative (tests).  The inputs are public.
    """
    side = check_choice(side, "side", ("lower", "upper"))
    lam = epsilon / 2.0
    ratio = half_range / theta
    d0 = math.floor(math.log(ratio) / lam) if ratio >= 1.0 else -1
    direct = lam >= _DIRECT_SUM_MIN_DECAY
    if side == "upper":
        d = max(d0, -1)
        j = t - d - 1  # the nearest cell of the far sum; the near part is P[rank > j]
        if j < 0:
            return 1.0
        near = float(_rank_cdf_sf(np.array([float(j)]), size, sigma)[1][0])
        far = (_far_sum_direct(j, -1, size, sigma, lam) if direct
               else _far_sum_closed((2.0 * j / size - 1.0) / sigma, size, sigma, lam))
    else:
        d = max(d0, 0)
        j = t + d + 1  # the near part is P[rank <= j − 1]
        if j > size:
            return 1.0
        near = float(_rank_cdf_sf(np.array([float(j - 1)]), size, sigma)[0][0])
        # mirror image: cell j's lower edge is −(upper edge of the mirrored cell M − j + 1)
        far = (_far_sum_direct(j, 1, size, sigma, lam) if direct
               else _far_sum_closed(-(2.0 * (j - 1) / size - 1.0) / sigma, size, sigma, lam))
    return near + math.exp(math.log(ratio) - lam * (d + 1)) * far


def default_ci_theta(output_range: tuple[float, float], epsilon: float, n: int) -> float:
    """Default widening θ of the DP slope interval: width(output_range) / max(ε·n, 200).

    A function of public inputs only (the range, the interval's budget ε and n).  θ enters
    the interval twice: it widens both ends by θ (width + 2θ), and the exponential
    mechanism's worst-case rank error grows with ln(R/θ).  The width-optimal θ is of the
    order of the pair-slope spread per unit quantile divided by ε·n (Sarathy & Vadhan §5.1),
    which is unknown without the data; width/(ε·n) is that with the spread replaced by the
    range (too large a θ costs 2θ linearly, too small one only ln(R/θ)).  Below ε·n = 200 it
    stays at the old fixed default 0.005 × width.  Measured (studies/ts_ci_width.py, n =
    100-400, ε = 1-10): never more than 4% wider than the best of six fixed θ's in the cells
    where the interval is informative, and up to 1.5× narrower than the old default at n = 400,
    ε = 5 (docs/uncertainty.md).  ε = ∞ gives 0 (the non-private interval has no widening).
    """
    lo, hi = output_range
    return (hi - lo) / max(float(epsilon) * float(n), CI_THETA_MIN_EPS_N)


# --------------------------------------------------------------------------------------------
# intervals
# --------------------------------------------------------------------------------------------
def _inverse_cdf(values: np.ndarray, q: float) -> float:
    if q <= 0:
        return -math.inf
    if q >= 1:
        return math.inf
    return float(np.quantile(values, q, method="inverted_cdf"))


def range_clipped_ends(low: float, high: float, output_range: tuple[float, float]
                       ) -> list[str]:
    """Which ends of a released interval lie at (or beyond) the search range
    ``output_range``: ``"lower"`` and/or ``"upper"``.  Such an end is the public range, not
    something the data showed, so the interval is reported as not informative."""
    lo, hi = output_range
    return [name for name, at in (("lower", low <= lo), ("upper", high >= hi)) if at]


@renamed_parameters(alpha="ci_alpha")
def nonprivate_theil_sen_ci(
    x: Any, y: Any, *, ci_alpha: float = 0.05, pairs: str | int = "all",
    null_variance: str = "exact", rng: Any = None, approximation: str = "berry-esseen",
    alpha: Any = DEPRECATED,
) -> ConfidenceInterval:
    """Non-private Theil-Sen interval [F_s⁻¹(½ − b), F_s⁻¹(½ + b)], b = ½Φ⁻¹(1 − α/8)σ
    (Sarathy & Vadhan Def. 6.1.1; ``approximation="normal"``: b = ½Φ⁻¹(1 − α/2)σ, Sen's
    classical interval, :func:`nonprivate_half_width`).  NOT private.

    ``null_variance``: ``"exact"`` (corrected Cor. B.1.3 on the actual x), ``"bound"`` (the
    data-independent bound) or ``"kendall"`` (complete design without ties).  The estimate is
    the Theil-Sen slope.  ``rng`` drives the matchings design.  ``ci_alpha``: 1 − coverage
    (``alpha=`` is its deprecated spelling, kept for one release).
    """
    xa, ya = check_simple_xy(x, y, min_rows=2)
    a = check_probability(ci_alpha, "ci_alpha")
    n = int(xa.size)
    pairs_arg = check_pairs_arg(pairs, n)
    nv = check_choice(null_variance, "null_variance", ("exact", "bound", "kendall"))
    _check_kendall(nv, pairs_arg)
    appr = check_choice(approximation, "approximation", ("berry-esseen", "normal"))
    design = make_design(n, pairs_arg, check_rng(rng))
    s, tied = pair_slopes(xa, ya, design)
    if tied.all():
        raise InvalidInputError(ALL_TIED_CI)
    d = doubled_multiset(s, tied)
    var = _null_var(nv, xa, design)
    return _nonprivate_from(d, math.sqrt(var), a, var, nv, design.describe(), None,
                            approximation=appr)


def nonprivate_half_width(alpha: float, sigma: float, approximation: str) -> float:
    """b of the non-private interval [F_s⁻¹(½ − b), F_s⁻¹(½ + b)] (quantile units):
    ``"berry-esseen"`` ½·Φ⁻¹(1 − α/8)·σ (Sarathy & Vadhan Def. 6.1.1: room for the normal
    approximation's error), ``"normal"`` ½·Φ⁻¹(1 − α/2)·σ (Sen 1968's classical interval;
    the ε = ∞ limit of ``method="calibrated"``)."""
    tail = alpha / 8.0 if approximation == "berry-esseen" else alpha / 2.0
    return 0.5 * float(stats.norm.isf(tail)) * sigma


def _nonprivate_from(d: np.ndarray, sigma: float, alpha: float, var: float, nv: str,
                     pairs_desc: str, privacy: PrivacyStatement | None,
                     method: str = "theil-sen",
                     approximation: str = "berry-esseen") -> ConfidenceInterval:
    b = nonprivate_half_width(alpha, sigma, approximation)
    low, high = _inverse_cdf(d, 0.5 - b), _inverse_cdf(d, 0.5 + b)
    return ConfidenceInterval(low, high, alpha=alpha, estimate=float(np.median(d)),
                              method=method, privacy=privacy,
                              details={"b": b, "null_variance": var, "null_variance_kind": nv,
                                       "q_lower": 0.5 - b, "q_upper": 0.5 + b,
                                       "pairs": pairs_desc, "approximation": approximation})


def _check_kendall(nv: str, pairs_arg: str | int) -> None:
    if nv == "kendall" and pairs_arg != "all":
        raise InvalidInputError(
            "null_variance='kendall' is only exact for pairs='all' (complete design without "
            f"ties); got pairs={pairs_arg!r}"
        )


def _null_var(nv: str, x: np.ndarray, design: Any) -> float:
    if nv == "bound":
        return null_variance_max(design)
    if nv == "kendall":
        return kendall_null_variance(design.n)
    return null_variance_exact(x, design)


class _PairSource:
    """The doubled pair-slope multiset the interval's releases run on: materialised from a
    pair design (O(|S|) memory), or -- all pairs with ``algorithm="exact-fast"`` -- only a
    :class:`~dpreg.simple.fast.PairCounter` (O(n) memory; the same mechanisms, sampled
    exactly from rank counts).  Which one is used depends on public inputs only."""

    def __init__(self, x: np.ndarray, y: np.ndarray, pairs: str | int, algorithm: str,
                 rng: np.random.Generator) -> None:
        n = int(x.size)
        self.rng = rng
        self.design = None if algorithm == "exact-fast" else make_design(n, pairs, rng)
        if self.design is None:
            from dpreg.simple.fast import pair_counter

            self.counter = pair_counter(x, y)
            self.k, self.multiset_size, self.describe = n - 1, n * (n - 1), "all pairs"
            self.n_untied = int(self.counter.n_untied)
        else:
            s, tied = pair_slopes(x, y, self.design)
            self.n_untied = int(tied.size - np.count_nonzero(tied))
            self.doubled = doubled_multiset(s, tied)
            self.k, self.multiset_size = self.design.k, int(self.doubled.size)
            self.describe = self.design.describe()

    def dp_quantile(self, q: float, epsilon: float, lo: float, hi: float, theta: float) -> float:
        """The DPWide q-quantile at the mechanism's ε (one draw from ``rng``)."""
        if self.design is None:
            from dpreg.simple.fast import dp_median_all_pairs

            return float(dp_median_all_pairs(None, None, epsilon=epsilon, lo=lo, hi=hi,
                                             theta=theta, rng=self.rng, counter=self.counter,
                                             q=q))
        return float(exp_quantile(self.doubled, q=q, epsilon=epsilon, lo=lo, hi=hi,
                                  theta=theta, rng=self.rng))

    def check_defined(self) -> None:
        """ε = ∞ only: the non-private interval needs a pair with distinct x (both paths raise
        the same error; the message names no data value)."""
        if self.n_untied == 0:
            raise InvalidInputError(ALL_TIED_CI)

    def nonprivate(self, sigma: float, alpha: float, var: float, nv: str,
                   stmt: PrivacyStatement, method: str,
                   approximation: str = "berry-esseen") -> ConfidenceInterval:
        """ε = ∞: the non-private interval on the same multiset (not private)."""
        if self.design is not None:
            return _nonprivate_from(self.doubled, sigma, alpha, var, nv, self.describe, stmt,
                                    method=method, approximation=approximation)
        b = nonprivate_half_width(alpha, sigma, approximation)
        low, high = self._inverse_cdf(0.5 - b), self._inverse_cdf(0.5 + b)
        from dpreg.simple.fast import all_pairs_median

        return ConfidenceInterval(low, high, alpha=alpha,
                                  estimate=all_pairs_median(counter=self.counter),
                                  method=method, privacy=stmt,
                                  details={"b": b, "null_variance": var,
                                           "null_variance_kind": nv, "q_lower": 0.5 - b,
                                           "q_upper": 0.5 + b, "pairs": self.describe,
                                           "approximation": approximation})

    def _inverse_cdf(self, q: float) -> float:
        """:func:`_inverse_cdf` of the doubled multiset (T entries −∞, each untied value
        twice, T entries +∞) from an order statistic: the ⌈M·q⌉-th smallest entry."""
        if q <= 0:
            return -math.inf
        if q >= 1:
            return math.inf
        from dpreg.simple.fast import pair_order_statistic

        pc = self.counter
        rank = max(1, math.ceil(self.multiset_size * q))
        tied = pc.n_tied
        if rank <= tied:
            return -math.inf
        if rank > tied + 2 * pc.n_untied:
            return math.inf
        return pair_order_statistic(k=math.ceil((rank - tied) / 2), counter=pc)


@renamed_parameters(alpha="ci_alpha", method="ci_method")
def theil_sen_ci(
    x: Any,
    y: Any,
    *,
    epsilon: float,
    ci_alpha: float = 0.05,
    output_range: tuple[float, float],
    ci_method: str = "union",
    pairs: str | int = "all",
    theta: float | None = None,
    return_estimate: bool = False,
    r_alpha: float = 0.5,
    null_variance: str = "bound",
    ledger: Ledger | None = None,
    rng: Any = None,
    algorithm: str = "auto",
    alpha: Any = DEPRECATED,
    method: Any = DEPRECATED,
) -> ConfidenceInterval:
    """ε-DP (1 − α) confidence interval for the slope (DPWideTSCI; Sarathy & Vadhan §6).

    Parameters
    ----------
    x, y:
        The data (1-D, equal length n >= 2, finite).
    epsilon:
        Total budget ε in (0, ∞].  Each interval end gets ε/2 (ε/3 when ``return_estimate``:
        ends and estimate get ε/3 each); every DPWide call runs at (its share)/(2k) on the
        doubled multiset.  ``inf`` returns :func:`nonprivate_theil_sen_ci` with the same
        design and null variance (not private; warns).
    ci_alpha:
        1 − coverage, in (0, 1).  ``alpha=`` is its deprecated spelling (one release).
    output_range:
        Public slope range (lo, hi); the true slope is assumed to lie in [lo + θ, hi − θ].
    ci_method:
        ``"union"`` (Alg. 6.2), ``"tight"`` (§6.4; never wider than union) -- both coverage
        >= 1 − α by a worst-case bound, conservative -- ``"calibrated"`` (coverage close to
        1 − α; refused with ``NoUncertaintyError`` where :func:`calibrated_refusal` says so)
        or ``"auto"`` (calibrated where offered, else tight).  ``method=`` is its deprecated
        spelling (one release).
    pairs:
        ``"all"`` or an integer number of round-robin matchings.
    theta:
        Widening θ > 0 (default :func:`default_ci_theta`: width(output_range)/max(ε·n, 200),
        public); see :func:`dpreg.simple.theta_guidance` for a choice from public guesses of
        the error sd and x spread.
    return_estimate:
        Also release a DPWide median of the slopes (``.estimate``) from the same ε.
    r_alpha:
        Share of α given to sampling error in the union method (default ½).
    null_variance:
        ``"bound"`` (default; depends only on the pair design) or ``"kendall"`` (only for
        ``pairs="all"`` when it is *public knowledge* that x has no ties).
    ledger, rng:
        As elsewhere; the ledger is charged ``PureDP(epsilon)`` before any randomness is used.
    algorithm:
        ``"auto"`` (default), ``"exact-fast"`` or ``"materialise"``, as in
        :func:`dpreg.simple.theil_sen`: with ``pairs="all"``, ``"exact-fast"`` samples the
        same DPWide quantiles from O(n log n) rank counts in O(n) memory
        (:func:`dpreg.simple.fast.dp_median_all_pairs` with the target ``q``) instead of
        building the n(n−1) doubled slopes; ``"auto"`` uses it from n >= 400
        (``AUTO_FAST_MIN_N``, public).  The pair values are then exact rather than the float
        formula's (docs/scale.md).

    Notes
    -----
    Guarantee: ε-DP (pure), replace-one neighbours, n public; each DPWide call is a
    rank-utility exponential mechanism with sensitivity 1 per entry and one record changes
    <= 2k entries.  The targets depend only on public quantities (n, S, ε, α, θ, range).
    Source: Sarathy & Vadhan 2025, Alg. 6.1, 6.2, §6.4 (corrected: see module doc).
    """
    xa, ya = check_simple_xy(x, y, min_rows=2)
    plan = plan_theil_sen_ci(epsilon=epsilon, ci_alpha=ci_alpha, output_range=output_range,
                             ci_method=ci_method, pairs=pairs, theta=theta,
                             return_estimate=return_estimate, r_alpha=r_alpha,
                             null_variance=null_variance, algorithm=algorithm, n=int(xa.size))
    gen = check_rng(rng)
    stats = theil_sen_ci_statistics(xa, ya, plan)
    seeded = is_seeded(rng)
    if plan.budget.is_infinite:
        # not private anyway: the release draws the data-independent pair design first, so
        # that data on which the non-private interval is undefined (every pair tied) raise
        # before the ledger is charged, identically on both paths
        release = release_theil_sen_ci(stats, plan, gen, seeded=seeded)
        charge(ledger, plan.budget, "dpreg.simple.theil_sen_ci", plan.relation)
        warn_not_private("theil_sen_ci")
        out = theil_sen_ci_result(release)
        warn_point_mass(out.point_mass)
        return out
    charge(ledger, plan.budget, "dpreg.simple.theil_sen_ci", plan.relation)
    warn_tight_search(plan)
    out = theil_sen_ci_result(release_theil_sen_ci(stats, plan, gen, seeded=seeded))
    warn_point_mass(out.point_mass)
    return out


def warn_tight_search(plan: ReleasePlan) -> None:
    """The warning of a tight interval whose target search was skipped (a public fact of
    the plan: the multiset is beyond :data:`TIGHT_MAX_MULTISET`)."""
    if plan.options["tight_search"]:
        warnings.warn(f"ci_method='tight': the doubled pair multiset has "
                      f"{plan.options['multiset_size']} entries (more than "
                      f"{TIGHT_MAX_MULTISET}, beyond which float64 no longer resolves every "
                      "rank); the (valid, possibly wider) Union targets are used",
                      UserWarning, stacklevel=3)


def plan_theil_sen_ci(*, epsilon: Any, ci_alpha: Any = 0.05, output_range: Any,
                      ci_method: Any = "union", pairs: Any = "all", theta: Any = None,
                      return_estimate: Any = False, r_alpha: Any = 0.5,
                      null_variance: Any = "bound", algorithm: Any = "auto", n: Any
                      ) -> ReleasePlan:
    """The public plan of the DP slope interval (:func:`theil_sen_ci`): reads no data and
    draws nothing.

    Every parameter is checked here, in the order :func:`theil_sen_ci` always checked them
    (ε, ``ci_alpha``, ``output_range``, ``ci_method``, ``pairs`` for the public n >= 2,
    ``return_estimate``, the interval method -- :func:`resolve_ci_method`, which refuses an
    explicit ``"calibrated"`` outside :func:`calibrated_refusal` -- θ (default
    :func:`default_ci_theta`, a tenth of it for the calibrated targets), ``r_alpha``,
    ``null_variance``, ``algorithm``).  The plan holds ``budget`` = PureDP(ε), ``parts``
    ``"lower"``, ``"upper"`` (and ``"estimate"``): ``PureDP(ε).split`` in two (three) --,
    the ``sensitivities`` (k pairs per record: :func:`public_design_size`; 2k entries of the
    doubled multiset; rank utility 1 per entry), ``noise`` (each DPWide call's ε_run =
    part/(2k), rounded down) and in ``options`` the null variance
    (:func:`public_null_variance`) and the target quantiles (``targets``:
    :func:`union_targets`, :func:`tight_targets` or :func:`calibrated_targets`; ``None`` at
    ε = ∞).  Guarantee of the release it plans: ε-DP, replace-one, n public."""
    eps = check_epsilon(epsilon)
    a = check_probability(ci_alpha, "ci_alpha")
    lo, hi = check_bounds(output_range, "output_range")
    meth = check_choice(ci_method, "ci_method", CI_METHODS)
    n_ = check_int(n, "n", minimum=2)
    pairs_arg = check_pairs_arg(pairs, n_)
    want_est = check_flag(return_estimate, "return_estimate")
    # which targets: decided from public inputs only (n, the design's size, ε), before
    # anything is charged; an explicit "calibrated" outside its rule is refused here
    used = resolve_ci_method(meth, n=n_, pairs=pairs_arg, epsilon=eps,
                             return_estimate=want_est)
    th = (default_ci_theta((lo, hi), eps, n_) * (CALIBRATED_THETA_FACTOR
                                                  if used == "calibrated" else 1.0)
          if theta is None else check_theta(theta, "wide", (lo, hi)))
    ra = check_probability(r_alpha, "r_alpha")
    nv = check_choice(null_variance, "null_variance", ("bound", "kendall"))
    _check_kendall(nv, pairs_arg)
    alg = resolve_algorithm(algorithm, n=n_, pairs=pairs_arg, median="wide")
    budget = PureDP(eps)
    split = budget.split([1, 1, 1] if want_est else [1, 1])
    parts = dict(zip(("lower", "upper", "estimate"), split))
    k, size = public_design_size(n_, pairs_arg)
    var = public_null_variance(n_, pairs_arg, nv)
    sigma = math.sqrt(var)
    noise: dict[str, float] = {}
    targets: dict[str, Any] | None = None
    union: dict[str, float] | None = None
    tight_search = ""
    meth_targets = used
    if not budget.is_infinite:
        eps_lo = div_down(parts["lower"].epsilon, 2 * k)
        eps_hi = div_down(parts["upper"].epsilon, 2 * k)
        noise = {"mechanism_epsilon_lower": eps_lo, "mechanism_epsilon_upper": eps_hi}
        if want_est:
            noise["mechanism_epsilon_estimate"] = div_down(parts["estimate"].epsilon, 2 * k)
        half_range = (hi - lo) / 2.0
        union = union_targets(size=size, sigma=sigma, alpha=a, r_alpha=ra, eps_lower=eps_lo,
                              eps_upper=eps_hi, half_range=half_range, theta=th)
        targets = dict(union)
        if used == "tight" and size > TIGHT_MAX_MULTISET:
            tight_search = (f"skipped: multiset size {size} > {TIGHT_MAX_MULTISET}; "
                            "Union targets used")
            meth_targets = "union"
        if meth_targets == "tight":
            targets = tight_targets(size=size, sigma=sigma, alpha=a, eps_lower=eps_lo,
                                    eps_upper=eps_hi, half_range=half_range, theta=th,
                                    union=union)
        elif meth_targets == "calibrated":
            targets = calibrated_targets(size=size, sigma=sigma, alpha=a, eps_lower=eps_lo,
                                         eps_upper=eps_hi)
    return ReleasePlan(
        method=f"theil-sen-ci-{used}",
        options={"alpha": a, "output_range": (lo, hi), "method": used,
                 "method_requested": meth, "method_targets": meth_targets,
                 "pairs": pairs_arg, "theta": th, "return_estimate": want_est,
                 "r_alpha": ra, "null_variance": nv, "null_variance_value": var,
                 "sigma": sigma, "algorithm": alg, "multiset_size": size,
                 "union": union, "targets": targets, "tight_search": tight_search},
        budget=budget, relation=Neighbouring.REPLACE_ONE, parts=parts, n=n_, d=1,
        sensitivities={"pairs_per_record": k, "entries_per_record": 2 * k,
                       "rank_utility": 1.0},
        noise=noise)


def theil_sen_ci_statistics(x: np.ndarray, y: np.ndarray, plan: ReleasePlan
                            ) -> PairStatistics:
    """The statistics step of the slope interval: the validated data of the plan's n rows
    (:class:`~dpreg.simple.PairStatistics`, as for the Theil-Sen line: the doubled pair-slope
    multiset is computed in the release, after the data-independent design is drawn)."""
    return theil_sen_statistics(x, y, plan)


def release_theil_sen_ci(stats: PairStatistics, plan: ReleasePlan, rng: np.random.Generator,
                         *, seeded: bool = False) -> Release:
    """THE release of the DP slope interval (DPWideTSCI; Sarathy & Vadhan 2025 Alg. 6.1-6.2,
    §6.4, with dpreg's corrections): the only code that draws its randomness -- the public
    :func:`theil_sen_ci`, :func:`~dpreg.simple.theil_sen_with_ci` (the estimator's
    ``ci_alpha=``, ``regress`` and every per-group interval) call it.  First the
    data-independent pair design (k matchings: drawn from ``rng``; all pairs: nothing), then
    the DPWide quantile at the lower target (unless it is at or below 0: the range end, from
    public quantities), at the upper target, and with ``return_estimate`` a DPWide median,
    each a rank-utility exponential mechanism at the plan's ε_run through
    :mod:`dpreg.mechanisms` (``exp_quantile``, or the exact-fast all-pairs sampler of
    :mod:`dpreg.simple.fast`, whose random choices are :mod:`dpreg.mechanisms.exponential`
    functions).  ε = ∞: the non-private interval on the same design (raises when every pair
    is tied).  Builds the :class:`~dpreg.privacy.PrivacyStatement`.

    Guarantee: ``plan.budget`` (ε-DP, pure), replace-one neighbours, n public; one record
    changes at most 2k entries of the doubled multiset, the rank utility has sensitivity 1
    per entry; the targets are the plan's (public).

    ``values``: ``low``, ``high``, ``estimate`` (``None`` unless requested), ``method`` and
    ``details`` (what the :class:`ConfidenceInterval` records)."""
    o = plan.options
    lo, hi = o["output_range"]
    a, th, used, meth_targets = o["alpha"], o["theta"], o["method"], o["method_targets"]
    want_est: bool = o["return_estimate"]
    k, size = plan.sensitivities["pairs_per_record"], o["multiset_size"]
    var, nv = o["null_variance_value"], o["null_variance"]
    parts = plan.parts
    src = _PairSource(stats.x, stats.y, o["pairs"], o["algorithm"], rng)
    if plan.budget.is_infinite:
        src.check_defined()
    details: dict[str, Any] = {
        "pairs": src.describe, "k": int(k), "n_pairs": size // 2, "multiset_size": size,
        "null_variance": var, "null_variance_kind": nv, "theta": th, "output_range": (lo, hi),
        "method": used, "method_requested": o["method_requested"],
        "epsilon_lower": parts["lower"].epsilon, "epsilon_upper": parts["upper"].epsilon,
        "algorithm": o["algorithm"],
    }
    if want_est:
        details["epsilon_estimate"] = parts["estimate"].epsilon
    stmt = PrivacyStatement(plan.budget, plan.relation, f"DPWideTSCI ({used})", _SOURCE,
                            seeded, details)
    method = f"theil-sen-ci-{used}"
    if plan.budget.is_infinite:
        out = src.nonprivate(o["sigma"], a, var, nv, stmt, method,
                             "normal" if used == "calibrated" else "berry-esseen")
        return Release(plan, {"low": out.low, "high": out.high,
                              "estimate": out.estimate if want_est else None,
                              "method": method, "details": out.details}, stmt)
    targets, union = o["targets"], o["union"]
    eps_lo = plan.noise["mechanism_epsilon_lower"]
    eps_hi = plan.noise["mechanism_epsilon_upper"]
    if o["tight_search"]:
        details["tight_search"] = o["tight_search"]
    if meth_targets == "tight":
        details["target_search"] = targets["search"]
    elif meth_targets == "calibrated":
        details.update(offset_lower=targets["offset_lower"],
                       offset_upper=targets["offset_upper"])
    details.update(mechanism_epsilon_lower=eps_lo, mechanism_epsilon_upper=eps_hi,
                   union_q_lower=union["q_lower"], union_q_upper=union["q_upper"],
                   b=union["b"], c_lower=union["c_lower"], c_upper=union["c_upper"],
                   q_lower=targets["q_lower"], q_upper=targets["q_upper"])
    if meth_targets == "tight":
        details.update(t_lower=targets["t_lower"], t_upper=targets["t_upper"])

    q_lo, q_hi = targets["q_lower"], targets["q_upper"]
    low = lo if q_lo <= 0 else min(max(src.dp_quantile(
        q_lo, eps_lo, lo, hi, th) - th, lo), hi)
    high = hi if q_hi >= 1 else min(max(src.dp_quantile(
        q_hi, eps_hi, lo, hi, th) + th, lo), hi)
    estimate = None
    if want_est:
        eps_est = plan.noise["mechanism_epsilon_estimate"]
        details["mechanism_epsilon_estimate"] = eps_est
        estimate = src.dp_quantile(0.5, eps_est, lo, hi, th)
    if low > high:  # independent draws crossed: report the hull (only adds coverage)
        low, high = high, low
    # an end AT the search range is the range itself (a public assumption), not a finding:
    # flag it (decided from the released ends and public inputs only)
    details["clipped"] = range_clipped_ends(low, high, (lo, hi))
    details["informative"] = not details["clipped"]
    return Release(plan, {"low": low, "high": high, "estimate": estimate, "method": method,
                          "details": details}, stmt)


def point_mass_flag(low: float, high: float, theta: float) -> bool:
    """The release rule for tied slopes: True when a released slope interval [low, high]
    contains 0 and lies within :data:`POINT_MASS_THETAS` × θ of it, θ being the interval's
    public widening (``details["theta"]``; 0 for the non-private interval, which is then
    flagged only when it is the point 0).

    Each end of the DP interval is a θ-widened exponential-mechanism quantile moved out by θ;
    when many pairwise slopes are exactly 0 both quantiles land within θ of 0 and the interval
    lies inside [−2θ, 2θ] -- the release is then a statement about a pile of exactly-0
    slopes, not about the relation between x and y.  Reads only the released ends and the
    public θ: post-processing, costs no budget.  On continuous data the interval's width is
    of the order of the sampling spread of the slope, far more than 4θ = 4·width/(ε·n), so the
    flag does not fire (docs/simple.md, "Tied responses")."""
    lo, hi, th = float(low), float(high), float(theta)
    return bool(lo <= 0.0 <= hi and max(-lo, hi) <= POINT_MASS_THETAS * th)


def warn_point_mass(flagged: bool) -> None:
    """:class:`~dpreg.exceptions.TiedSlopesWarning` for an interval flagged by
    :func:`point_mass_flag` (public text only, no value of the data)."""
    if flagged:
        from dpreg.exceptions import TiedSlopesWarning
        from dpreg.privacy.notices import user_stacklevel

        warnings.warn("Theil-Sen: " + POINT_MASS_TEXT, TiedSlopesWarning,
                      stacklevel=user_stacklevel())


def theil_sen_ci_result(release: Release) -> ConfidenceInterval:
    """The :class:`ConfidenceInterval` of a slope-interval release (post-processing):
    ``details["point_mass"]`` is :func:`point_mass_flag` of the released ends and the public
    θ; ``details["target"]`` names the estimand (the median pairwise slope)."""
    v = release.values
    details = {**v["details"], "target": "the median pairwise slope (not the OLS slope)",
               "point_mass": point_mass_flag(v["low"], v["high"],
                                             release.plan.options["theta"])}
    return ConfidenceInterval(v["low"], v["high"], alpha=release.plan.options["alpha"],
                              estimate=v["estimate"], method=v["method"],
                              privacy=release.privacy, details=details)
