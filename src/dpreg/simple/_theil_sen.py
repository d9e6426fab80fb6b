"""DP Theil-Sen: a DP median of pairwise estimates (Alabi et al. 2022 §6.2; Sarathy & Vadhan
2025 Alg. 3.1).

Guarantee: **ε-DP (pure) under replace-one neighbours with n public.**

1. Draw a data-independent pair design S (all pairs, or k round-robin matchings on a random
   relabelling; see :mod:`dpreg.simple.pairs`).  k = max number of pairs per record.
2. For each pair compute the estimand: the predictions at the two ``x_eval`` points of the
   line through the two points (``estimand="predictions"``) or the slope (``"slope"``).
3. Build the doubled multiset: each value twice, −∞ and +∞ for a pair with tied x (fixed size
   2|S|; one record changes at most 2k entries).  Values are clipped to ``output_range`` by
   the median.
4. DP median:

   * ``"exp"``: exponential-mechanism median (rank utility) at ε_t/(2k) on the doubled
     multiset, over the doubles of the output range (:mod:`dpreg.mechanisms.exponential`: a
     pairwise value shared by many pairs is an output of its own, so the release concentrates
     on a tied median as ε grows) -- between the pair values exactly the distribution of
     Alabi et al.'s ε_t/k on the undoubled estimates when no x are tied (rank distances
     double);
   * ``"wide"``: the θ-widened version (Sarathy & Vadhan's shift construction; the reference
     code's even-M construction is not ε-DP and is not used);
   * ``"smooth"``: median + smooth-sensitivity-scaled Student-t noise at ε_t with 2k values
     per record inside the smooth sensitivity.

   ε_t = ε/2 for each of the two predictions (together ε), ε_t = ε for the slope.
5. Predictions (p₁, p₂) at (x₁, x₂) give slope (p₂ − p₁)/(x₂ − x₁) and the intercept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpreg._progress import steps
from dpreg._spec import Release, ReleasePlan
from dpreg._validation import (
    check_bounds,
    check_epsilon,
    check_int,
    check_positive,
    check_rng,
    is_seeded,
)
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms import exact_quantile, exp_quantile, smooth_median
from dpreg.mechanisms.exponential import exp_quantile_sorted
from dpreg.mechanisms.smooth import smooth_median_sorted
from dpreg.privacy import Ledger, Neighbouring, PrivacyStatement, PureDP, charge
from dpreg.simple._common import (
    check_bounds_opt,
    check_choice,
    check_pairs_arg,
    check_simple_xy,
    check_x_eval,
    div_down,
    warn_not_private,
)
from dpreg.simple._result import SimpleRegressionResult
from dpreg.simple.pairs import (
    PairDesign,
    doubled_pair_values,
    make_design,
    sorted_doubled_all_pairs,
)

__all__ = ["theil_sen", "DEFAULT_THETA_FRACTION", "dp_median_of_doubled", "ALGORITHMS",
           "AUTO_FAST_MIN_N", "SMOOTH_ALL_PAIRS_MAX_N", "check_smooth_size",
           "resolve_algorithm", "dp_median_all_pairs_target",
           "release_theil_sen", "dp_median_of_sorted", "plan_theil_sen", "PairStatistics",
           "theil_sen_statistics", "theil_sen_result", "target_budgets", "TARGET"]

#: ``algorithm=`` choices: ``"materialise"`` builds the doubled multiset of all pairwise
#: estimates (O(n²) memory); ``"exact-fast"`` samples the same mechanism exactly from
#: O(n log n) rank counts, with the pairwise values computed exactly instead of by the float
#: formula (:mod:`dpreg.simple.fast`; all pairs, exp/wide medians only; time bounded in n on
#: any data); ``"auto"`` uses exact-fast when it applies and n >= :data:`AUTO_FAST_MIN_N`.
ALGORITHMS = ("auto", "exact-fast", "materialise")
#: smallest n for which ``algorithm="auto"`` picks the O(n log n) path: the measured crossover
#: of the two paths' running times (exp and wide medians, slope and predictions, n = 50 to
#: 10,000; benchmarks/bench_theil_sen_auto.py, docs/scale.md) -- below it materialising the
#: n(n−1)/2 pairs is faster.  A constant compared with n, which is public.
AUTO_FAST_MIN_N = 400

#: largest n for ``median="smooth"`` with ``pairs="all"``: that median materialises and sorts
#: the n(n−1) doubled pairwise estimates (no O(n log n) path computes its smooth sensitivity),
#: so its time and memory grow as n²: measured 2.0 s CPU / 0.4 GB at n = 5,000 and 10 s /
#: 1.5 GB at n = 10,000 (docs/scale.md); above it the fit is refused with the alternatives
#: (the exp/wide medians' O(n log n) exact-fast path, or k matchings).  n is public.
SMOOTH_ALL_PAIRS_MAX_N = 10_000

#: default widening θ of ``median="wide"`` as a fraction of the output-range width: Alabi et al.
#: (Table 1) use θ = 0.01 on the range [−0.5, 1.5] (width 2); scaling with the range keeps the
#: default meaningful in original units.
DEFAULT_THETA_FRACTION = 0.005

_MECHANISM = {"exp": "DPExpTheilSen", "wide": "DPWideTheilSen", "smooth": "DPSSTheilSen"}
#: why a DP Theil-Sen line has no interval / no R² (its results say so)
NO_INTERVAL = ("none: the Sarathy–Vadhan slope interval consumes budget, so it exists only "
               "when requested at fit time (ci_alpha=..., which spends half of ε on it) and "
               "then only at that α")
NO_FIT_STATISTICS = ("the DP Theil-Sen release is a median of pairwise slopes: no residual "
                     "or total sum of squares is released")
#: what a Theil-Sen release estimates, in words: every Theil-Sen result carries it
#: (``extra["target"]``, the summary's ``Estimates`` row, the JSON)
TARGET = ("the Theil-Sen line: the median of the pairwise slopes (with the medians of the "
          "pairs' predictions at the two evaluation points) -- NOT the OLS slope; the two "
          "differ under skewed or heavy-tailed errors, outliers, many tied values or a "
          "non-linear relation, and the slope interval covers the median pairwise slope")
_SOURCE = ("Alabi, McMillan, Sarathy, Smith & Vadhan 2022, §6.2, Alg. 2-6; Sarathy & Vadhan "
           "2025, Alg. 3.1-3.2 (±∞ tie convention, widened mechanism)")


def check_theta(theta: Any, median: str, output_range: tuple[float, float]) -> float:
    """θ for the widened median: default 0.005 × range width (0.01 on Alabi et al.'s
    [−0.5, 1.5]); must be positive and below the range width."""
    if median != "wide":
        if theta is not None:
            raise InvalidInputError(
                f"theta is only used with median='wide'; got theta={theta!r} with "
                f"median={median!r}"
            )
        return 0.0
    width = output_range[1] - output_range[0]
    th = DEFAULT_THETA_FRACTION * width if theta is None else check_positive(theta, "theta")
    if th >= width:
        raise InvalidInputError(
            f"theta must be smaller than the output_range width {width:g}; got {th!r}"
        )
    return th


def check_smooth_size(n: int, *, pairs: str | int, median: str) -> None:
    """Refuse ``median="smooth"`` with all pairs above :data:`SMOOTH_ALL_PAIRS_MAX_N` rows
    (public n; raised before anything is charged or drawn)."""
    if median == "smooth" and pairs == "all" and n > SMOOTH_ALL_PAIRS_MAX_N:
        raise InvalidInputError(
            f"median='smooth' (theil-sen-smooth) with pairs='all' is limited to n <= "
            f"{SMOOTH_ALL_PAIRS_MAX_N:,} rows; got n = {n:,}.  Its smooth sensitivity needs "
            "the sorted n(n−1) pairwise estimates (time and memory grow as n²: ~10 s and "
            "1.5 GB at the limit).  Use median='exp' or 'wide' (theil-sen-exp / "
            "theil-sen-wide: all pairs in O(n log n), algorithm='exact-fast'), or "
            "pairs=K for K random matchings (O(K·n))")


def resolve_algorithm(algorithm: Any, *, n: int, pairs: str | int, median: str) -> str:
    """``"exact-fast"`` or ``"materialise"`` for an ``algorithm=`` choice (public inputs only:
    n is public under replace-one neighbours).  Refuses the smooth median with all pairs above
    :data:`SMOOTH_ALL_PAIRS_MAX_N` rows (:func:`check_smooth_size`)."""
    check_smooth_size(n, pairs=pairs, median=median)
    alg = check_choice(algorithm, "algorithm", ALGORITHMS)
    fast_ok = pairs == "all" and median in ("exp", "wide")
    if alg == "exact-fast" and not fast_ok:
        raise InvalidInputError(
            "algorithm='exact-fast' needs pairs='all' and median='exp' or 'wide' (the smooth-"
            f"sensitivity median and k-matching designs materialise); got pairs={pairs!r}, "
            f"median={median!r}"
        )
    if alg == "auto":
        return "exact-fast" if fast_ok and n >= AUTO_FAST_MIN_N else "materialise"
    return alg


def dp_median_all_pairs_target(
    x: np.ndarray, y: np.ndarray, *, estimand: str, x_eval: float | None, epsilon: float,
    k: int, lo: float, hi: float, theta: float, rng: Any, size: int | None = None,
) -> Any:
    """The exp/wide DP median of all pairs for one target via :mod:`dpreg.simple.fast` --
    the mechanism of :func:`dp_median_of_doubled` on the doubled multiset of the exact pair
    values (``doubled_pair_values`` up to rounding of each value)."""
    from dpreg.simple.fast import dp_median_all_pairs

    est = "slope" if estimand == "slope" else "predictions"
    return dp_median_all_pairs(x, y, epsilon=div_down(epsilon, 2 * k), lo=lo, hi=hi,
                               estimand=est, x_eval=x_eval, theta=theta, rng=rng, size=size)


def dp_median_of_doubled(
    doubled: np.ndarray, *, median: str, epsilon: float, k: int, lo: float, hi: float,
    theta: float = 0.0, dof: int = 3, rng: Any = None, q: float = 0.5, size: int | None = None,
) -> Any:
    """The DP median step on a doubled multiset (2|S| entries, one record changes <= 2k).

    ``epsilon`` is the budget of this release (ε_t).  Exp/Wide run at ε_t/(2k); smooth at ε_t
    with ``k=2k`` in the smooth sensitivity.  ``epsilon=inf`` returns the exact quantile of the
    clipped multiset.  With ``size`` it returns that many independent draws (an array).
    """
    if math.isinf(epsilon):
        value = exact_quantile(doubled, q=q, lo=lo, hi=hi)
        return value if size is None else np.full(size, value)
    if median == "smooth":
        return smooth_median(doubled, epsilon=epsilon, lo=lo, hi=hi, k=2 * k, dof=dof, rng=rng,
                             size=size)
    out = exp_quantile(doubled, q=q, epsilon=div_down(epsilon, 2 * k), lo=lo, hi=hi,
                       theta=theta, rng=rng, size=size)
    return float(out) if size is None else np.asarray(out)


def dp_median_of_sorted(
    s: np.ndarray, *, median: str, epsilon: float, k: int, lo: float, hi: float,
    theta: float = 0.0, dof: int = 3, rng: np.random.Generator,
) -> float:
    """:func:`dp_median_of_doubled` (one draw, finite ``epsilon``) of the doubled multiset
    given clipped to [lo, hi] and sorted (:func:`dpreg.simple.pairs.sorted_doubled_all_pairs`):
    the same mechanism at the same ε, the same draws from ``rng`` and the same output, bit for
    bit (:func:`dpreg.mechanisms.exponential.exp_quantile_sorted`,
    :func:`dpreg.mechanisms.smooth.smooth_median_sorted`).  Guarantee: as
    :func:`dp_median_of_doubled`."""
    if median == "smooth":
        return smooth_median_sorted(s, epsilon=epsilon, lo=lo, hi=hi, k=2 * k, dof=dof, rng=rng)
    return exp_quantile_sorted(s, epsilon=div_down(epsilon, 2 * k), lo=lo, hi=hi, theta=theta,
                               rng=rng)


def theil_sen(
    x: Any,
    y: Any,
    *,
    epsilon: float,
    output_range: tuple[float, float],
    x_bounds: tuple[float, float] | None = None,
    median: str = "exp",
    pairs: str | int = "all",
    estimand: str = "predictions",
    x_eval: Any = None,
    theta: float | None = None,
    dof: int = 3,
    ledger: Ledger | None = None,
    rng: Any = None,
    algorithm: str = "auto",
) -> SimpleRegressionResult:
    """DP Theil-Sen regression (DPExpTheilSen / DPWideTheilSen / DPSSTheilSen).

    The pipeline: :func:`plan_theil_sen` (public: every check, the budget and its split per
    target, k, the mechanism ε) -> the ledger charge -> :func:`theil_sen_statistics` (the
    pairwise estimates, deterministic given the pair design) -> :func:`release_theil_sen`
    (the pair design's and the medians' draws; the privacy statement) ->
    :func:`theil_sen_result` (post-processing).

    Parameters
    ----------
    x, y:
        The data (1-D, equal length n >= 2, finite).  Not clipped (only the pairwise
        estimates are).
    epsilon:
        Total budget ε in (0, ∞].  Predictions: ε/2 per ``x_eval`` point; slope: ε.
        ``inf`` returns the exact Theil-Sen median of the clipped estimates (warns).
    output_range:
        Public (lo, hi) range of the released estimand (predictions or slope); pairwise
        values are clipped to it and the Exp/Wide outputs lie in it.  Required.
    x_bounds:
        Optional public x range; only used for the default ``x_eval`` (25%/75% of it) and
        to check user ``x_eval`` values.  (Alabi et al. Table 1 use [−0.5, 1.5] as the
        prediction range for data in [0, 1].)
    median:
        ``"exp"`` | ``"wide"`` | ``"smooth"`` (see the module doc).
    pairs:
        ``"all"`` (k = n − 1) or an integer number of round-robin matchings (1 = one matching,
        Dwork & Lei's short-cut regression), 1 <= pairs <= n − 1 (n for odd n).
    estimand:
        ``"predictions"`` (two DP medians; the line through them is released) or ``"slope"``
        (one DP median of the slopes, Sarathy & Vadhan Alg. 3.1; no intercept).
    x_eval:
        Two distinct evaluation points for ``estimand="predictions"`` (default 25%/75% of
        ``x_bounds``, or 0.25/0.75 without bounds).
    theta:
        Widening θ > 0 for ``median="wide"`` (default 0.005 × the output-range width,
        i.e. 0.01 for the range [−0.5, 1.5] of Alabi et al. Table 1); see
        :func:`dpreg.simple.theta_guidance`.
    dof:
        Student-t degrees of freedom for ``median="smooth"`` (default 3).
    ledger:
        Optional ledger charged ``PureDP(epsilon)`` before any randomness is used.
    rng:
        ``None`` (fresh entropy), a seed, a SeedSequence or a Generator; drives the pair
        design (data-independent) and the noise.
    algorithm:
        ``"auto"`` (default), ``"exact-fast"`` or ``"materialise"``: how the all-pairs
        exp/wide median is computed.  ``"exact-fast"`` never builds the n(n−1)/2 estimates
        (O(n log n) time, O(n) memory, :mod:`dpreg.simple.fast`; running time bounded in n
        also on degenerate data) and samples the same mechanism exactly, with each pairwise
        value computed exactly and rounded once rather than by the float formula (its ε = ∞
        answer is the median of the same rounded values): the laws
        agree up to rounding of the pair values; where many pair values coincide within a few
        units in the last place (collinear data) the doubles carrying them can differ
        (docs/simple.md).  ``"auto"`` uses it for pairs="all",
        median exp/wide and n >= 400 (:data:`AUTO_FAST_MIN_N`, the measured crossover).
        Seeded streams differ between the two.

    Notes
    -----
    Guarantee: ε-DP (pure), replace-one neighbours, n public.  Sensitivity: one record
    changes at most 2k entries of each doubled multiset (k-Lipschitz pair transformation);
    the rank utility has sensitivity 1 per entry.  If all x are equal every pair is tied and
    the release is pure noise (no error is raised: the check would itself leak).  Tied pair
    values (exactly collinear data, rounded data) are released exactly once ε is large
    enough: as ε → ∞ the exp release tends to the ε = ∞ estimate whenever the two middle
    values of the doubled multiset coincide (docs/privacy/theil_sen.md).
    Sources: Alabi et al. 2022 (§6.2, Lemma 5, Alg. 3, 5, 6); Sarathy & Vadhan 2025 (Alg. 3.1,
    3.2).
    """
    xa, ya = check_simple_xy(x, y, min_rows=2)
    plan = plan_theil_sen(epsilon=epsilon, output_range=output_range, x_bounds=x_bounds,
                          median=median, pairs=pairs, estimand=estimand, x_eval=x_eval,
                          theta=theta, dof=dof, algorithm=algorithm, n=int(xa.size))
    gen = check_rng(rng)
    charge(ledger, plan.budget, "dpreg.simple.theil_sen", plan.relation)
    if plan.budget.is_infinite:
        warn_not_private("theil_sen")
    stats = theil_sen_statistics(xa, ya, plan)
    return theil_sen_result(release_theil_sen(stats, plan, gen, seeded=is_seeded(rng)))


def target_budgets(epsilon: float, estimand: str) -> list[PureDP]:
    """The budget of each DP median of a Theil-Sen release at total ε: two targets of ε/2
    (``estimand="predictions"``: ``PureDP(ε).split([1, 1])``, which never sums to more than
    ε) or one of ε (``"slope"``).  A pure function of public inputs; each exp/wide median then
    runs at ε_t/(2k) on the doubled multiset (:func:`dp_median_of_doubled`).  The plan
    (:func:`plan_theil_sen`) and the reproduction harness take ε_t from here."""
    budget = PureDP(float(epsilon))
    return budget.split([1, 1]) if estimand == "predictions" else [budget]


def plan_theil_sen(*, epsilon: Any, output_range: Any, x_bounds: Any = None,
                   median: Any = "exp", pairs: Any = "all", estimand: Any = "predictions",
                   x_eval: Any = None, theta: Any = None, dof: Any = 3, algorithm: Any = "auto",
                   n: Any) -> ReleasePlan:
    """The public plan of a DP Theil-Sen release: reads no data, draws nothing.

    Every parameter of :func:`theil_sen` is checked here, in the order :func:`theil_sen`
    always checked them (ε, ``output_range``, ``x_bounds``, ``median``, ``estimand``, the
    public n >= 2, ``pairs`` for that n, ``x_eval``, θ, ``dof``, ``algorithm`` -- resolved for
    n, which also refuses the smooth median with all pairs above
    :data:`SMOOTH_ALL_PAIRS_MAX_N` rows).  The plan holds ``budget`` = PureDP(ε) (what is
    charged), ``parts`` -- one budget per DP median: ``"p1"``, ``"p2"`` (ε/2 each, the two
    prediction points, ``PureDP(ε).split([1, 1])``) or ``"slope"`` (ε) --, the replace-one
    ``sensitivities`` (``"pairs_per_record"`` k: n − 1 for all pairs, at most the number of
    matchings otherwise; ``"entries_per_record"`` 2k entries of the doubled multiset;
    ``"rank_utility"`` 1 per entry) and ``noise`` (``"mechanism_epsilon"``: the ε of each
    exponential-mechanism median, ε_t/(2k) rounded down, or the smooth median's ε_t; for k
    matchings at the bound k -- the release runs at the drawn design's own k, which is at most
    that).  ``options``: median, estimand, pairs, x_eval, output_range, x_bounds, theta, dof,
    algorithm (resolved).  Guarantee of the release it plans: ε-DP, replace-one, n public."""
    eps = check_epsilon(epsilon)
    lo, hi = check_bounds(output_range, "output_range")
    xb = check_bounds_opt(x_bounds, "x_bounds")
    med = check_choice(median, "median", ("exp", "wide", "smooth"))
    est = check_choice(estimand, "estimand", ("predictions", "slope"))
    n_ = check_int(n, "n", minimum=2)
    pairs_arg = check_pairs_arg(pairs, n_)
    if est == "predictions":
        xe = check_x_eval(x_eval, xb, exactly_two=True)
    else:
        if x_eval is not None:
            raise InvalidInputError(
                f"x_eval is only used with estimand='predictions'; got x_eval={x_eval!r} with "
                "estimand='slope'"
            )
        xe = ()
    th = check_theta(theta, med, (lo, hi))
    dof_ = check_int(dof, "dof", minimum=1)
    alg = resolve_algorithm(algorithm, n=n_, pairs=pairs_arg, median=med)
    budget = PureDP(eps)
    targets = target_budgets(eps, est)
    parts = dict(zip(("p1", "p2") if est == "predictions" else ("slope",), targets))
    k = n_ - 1 if pairs_arg == "all" else int(pairs_arg)
    eps_t = targets[0].epsilon
    mech_eps = eps_t if med == "smooth" else div_down(eps_t, 2 * k)
    return ReleasePlan(
        method=f"theil-sen-{med}",
        options={"median": med, "estimand": est, "pairs": pairs_arg, "x_eval": tuple(xe),
                 "output_range": (lo, hi), "x_bounds": xb, "theta": th, "dof": dof_,
                 "algorithm": alg},
        budget=budget, relation=Neighbouring.REPLACE_ONE, parts=parts, n=n_,
        d=2 if est == "predictions" else 1,
        sensitivities={"pairs_per_record": k, "entries_per_record": 2 * k,
                       "rank_utility": 1.0},
        noise={"mechanism_epsilon": mech_eps})


@dataclass(frozen=True)
class PairStatistics:
    """DP Theil-Sen's statistics step: the validated data of one release, from which the
    doubled multisets of pairwise estimates are computed -- deterministically for a given pair
    design (:meth:`doubled`: the design's pairs; :meth:`sorted_doubled`: all pairs, clipped and
    sorted; the exact-fast path counts the pairs of ``x``, ``y`` itself,
    :mod:`dpreg.simple.fast`).  The pair design is data-independent randomness that is part of
    the mechanism: for k matchings :func:`release_theil_sen` draws it from the release's
    generator first (:func:`dpreg.simple.pairs.make_design`), before any noise; all pairs draw
    nothing."""

    x: np.ndarray
    y: np.ndarray

    def doubled(self, design: PairDesign, *, estimand: str, x_eval: float | None
                ) -> np.ndarray:
        """The doubled multiset of ``design``'s pair values (±∞ for tied x)."""
        return doubled_pair_values(self.x, self.y, design, estimand=estimand, x_eval=x_eval)

    def sorted_doubled(self, *, estimand: str, x_eval: float | None, lo: float, hi: float
                       ) -> np.ndarray:
        """The doubled multiset of all pairs, clipped to [lo, hi] and sorted."""
        return sorted_doubled_all_pairs(self.x, self.y, estimand=estimand, x_eval=x_eval,
                                        lo=lo, hi=hi)


def theil_sen_statistics(x: np.ndarray, y: np.ndarray, plan: ReleasePlan) -> PairStatistics:
    """The statistics step of one data set (validated 1-D arrays of the plan's n rows)."""
    xa = np.asarray(x, dtype=np.float64).reshape(-1)
    ya = np.asarray(y, dtype=np.float64).reshape(-1)
    if xa.size != plan.n or ya.size != plan.n:
        raise InvalidInputError(f"the plan is for n = {plan.n} rows; got x of {xa.size} and "
                                f"y of {ya.size} rows")
    return PairStatistics(xa, ya)


def release_theil_sen(stats: PairStatistics, plan: ReleasePlan, rng: np.random.Generator, *,
                      seeded: bool = False, size: int | None = None) -> Release:
    """THE release of DP Theil-Sen (Alabi et al. 2022 §6.2, Alg. 2-6; Sarathy & Vadhan 2025
    Alg. 3.1): the only code that draws its randomness -- the single fit, the estimator,
    ``regress`` and every ``fit_by_group`` backend call it.  First the data-independent pair
    design (k matchings: drawn from ``rng``; all pairs: nothing), then per target (the two
    prediction points, or the slope) the DP median of the doubled multiset at the target's ε
    (``plan.parts``): :func:`dp_median_of_doubled`, :func:`dp_median_of_sorted` (all pairs,
    finite ε: the same draws and values) or :func:`dp_median_all_pairs_target`
    (``algorithm="exact-fast"``), each drawing through :mod:`dpreg.mechanisms`.  Builds the
    :class:`~dpreg.privacy.PrivacyStatement`.  ``size``: that many independent releases of
    each target (arrays; the materialised or exact-fast paths, one design for all).

    Guarantee: ``plan.budget`` (ε-DP, pure), replace-one neighbours, n public; one record
    changes at most 2k entries of each doubled multiset (k: the design's largest number of
    pairs per record), the rank utility has sensitivity 1 per entry.

    ``values``: ``released`` (one value per target: the predictions at ``x_eval``, or the
    slope), ``pairs`` (the design in words), ``k``."""
    o = plan.options
    n = int(plan.n)  # type: ignore[arg-type]
    median: str = o["median"]
    estimand: str = o["estimand"]
    lo, hi = (float(v) for v in o["output_range"])
    theta: float = o["theta"]
    dof: int = o["dof"]
    algorithm: str = o["algorithm"]
    pairs: str | int = o["pairs"]
    targets: list[PureDP] = list(plan.parts.values())
    # the fast path never builds the n(n-1)/2 pairs: all pairs, k = n - 1; neither does the
    # materialising path for all pairs and finite budgets (the sorted multiset is built directly)
    fused = (algorithm != "exact-fast" and pairs == "all" and size is None
             and all(math.isfinite(part.epsilon) for part in targets))
    design = (_AllPairsInfo(n) if algorithm == "exact-fast" or fused
              else make_design(n, pairs, rng))
    k = design.k
    points: tuple[float | None, ...] = o["x_eval"] if estimand == "predictions" else (None,)
    # progress (silent unless a hook is installed): one step per DP median, i.e. per
    # prediction point (or the slope); public text only
    todo = steps(list(zip(points, targets)), f"Theil-Sen: DP median of {len(points)} "
                 + ("prediction points" if estimand == "predictions" else "slope"))
    if algorithm == "exact-fast":
        values = [
            dp_median_all_pairs_target(stats.x, stats.y, estimand=estimand, x_eval=xv,
                                       epsilon=part.epsilon, k=k, lo=lo, hi=hi, theta=theta,
                                       rng=rng, size=size)
            for xv, part in todo
        ]
    elif fused:
        # all pairs: the sorted clipped multiset is built directly (one compiled pass, only
        # the untied values sorted) and the median samples from it -- the same draws and
        # values as the branch below (tests/simple/test_theil_sen_sorted.py)
        values = [
            dp_median_of_sorted(
                stats.sorted_doubled(estimand=estimand, x_eval=xv, lo=lo, hi=hi),
                median=median, epsilon=part.epsilon, k=k, lo=lo, hi=hi, theta=theta, dof=dof,
                rng=rng)
            for xv, part in todo
        ]
    else:
        assert isinstance(design, PairDesign)
        values = [
            dp_median_of_doubled(
                stats.doubled(design, estimand=estimand, x_eval=xv),
                median=median, epsilon=part.epsilon, k=k, lo=lo, hi=hi, theta=theta, dof=dof,
                rng=rng, size=size)
            for xv, part in todo
        ]
    details = _details(design, median, estimand, targets, k, theta, dof, (lo, hi),
                       tuple(o["x_eval"]))
    details["algorithm"] = algorithm
    stmt = PrivacyStatement(plan.budget, plan.relation, _MECHANISM[median], _SOURCE, seeded,
                            details)
    return Release(plan, {"released": tuple(values), "pairs": design.describe(), "k": k},
                   stmt)


def theil_sen_result(release: Release) -> SimpleRegressionResult:
    """The :class:`SimpleRegressionResult` of a DP Theil-Sen release (post-processing): the
    slope, or the line through the two released predictions (slope (p₂ − p₁)/(x₂ − x₁) and
    its intercept).  ``extra["target"]`` names what it estimates (:data:`TARGET`: the median
    pairwise slope, not the OLS slope)."""
    o, v = release.plan.options, release.values
    xe = tuple(o["x_eval"])
    method, n = release.plan.method, release.plan.n
    extra = {"estimand": o["estimand"], "pairs": v["pairs"], "x_eval": list(xe),
             "target": TARGET}
    if o["estimand"] == "slope":
        return SimpleRegressionResult(method, release.privacy, released_slope=v["released"][0],
                                      n=n, extra=extra, no_interval=NO_INTERVAL,
                                      no_fit_statistics=NO_FIT_STATISTICS)
    (x1, x2), (p1, p2) = xe, v["released"]
    slope = (p2 - p1) / (x2 - x1)
    intercept = p1 - slope * x1
    return SimpleRegressionResult(method, release.privacy, released_slope=slope,
                                  released_intercept=intercept,
                                  released_predictions={x1: p1, x2: p2}, n=n, extra=extra,
                                  no_interval=NO_INTERVAL, no_fit_statistics=NO_FIT_STATISTICS)


class _AllPairsInfo:
    """What the release statement needs to know about the all-pairs design, without the
    n(n−1)/2 index arrays (the exact-fast path)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.k = n - 1
        self.size = n * (n - 1) // 2

    def describe(self) -> str:
        return "all pairs"


def _details(design: PairDesign | _AllPairsInfo, med: str, est: str, targets: list[PureDP], k: int,
             theta: float, dof: int, output_range: tuple[float, float],
             x_eval: tuple[float, ...]) -> dict[str, Any]:
    eps_t = targets[0].epsilon
    out: dict[str, Any] = {
        "median": med,
        "estimand": est,
        "pairs": design.describe(),
        "k": k,
        "n_pairs": design.size,
        "multiset_size": 2 * design.size,
        "tie_convention": "each pair twice; tied x -> -inf and +inf (Sarathy & Vadhan)",
        "epsilon_per_target": eps_t,
        "n_targets": len(targets),
        "output_range": output_range,
    }
    if est == "predictions":
        out["x_eval"] = list(x_eval)
    if med == "smooth":
        out["mechanism_epsilon"] = eps_t
        out["values_changed_per_record"] = 2 * k
        out["dof"] = dof
    else:
        out["mechanism_epsilon"] = div_down(eps_t, 2 * k)  # on the doubled multiset
        out["undoubled_equivalent_epsilon"] = eps_t / k  # Alabi et al.'s ε_t/k
        if med == "wide":
            out["theta"] = theta
    return out
