"""Vectorised evaluation engines for the one-x methods (experiments only).

Every function here produces ``trials`` **independent releases** of a :mod:`dpreg.simple`
mechanism on one fixed data set, with exactly the distribution of ``trials`` separate calls of
the public function (same pair designs, same budget split, same sensitivities, same noise).
Re-running a mechanism on fixed data is an *evaluation device*: each replicate is a complete
release that costs the full ε, so these engines charge no ledger and are only for simulated or
public benchmark data (as :func:`dpreg.replicates.replicate_predictions`).

Why not call the public functions in a loop?  The full Alabi et al. Figure 5 grid needs
hundreds of millions of pairwise estimates; these engines vectorise over trials:

* **Theil-Sen with k matchings** (:func:`kmatch_multisets`): each trial's design is the
  library's (:func:`dpreg.simple.pairs.round_robin_rows`: the designs of successive
  :func:`~dpreg.simple.pairs.round_robin_matchings` calls as rows, the same generator calls in
  the same order) and its pairwise values the library's
  (:func:`~dpreg.simple.pairs.pair_values`), for all trials at once.  The sorted multisets of
  one trial can feed several medians (Exp, Wide, smooth and the non-private median): the
  methods then share the design draw of a trial (common random numbers), while each method's
  own distribution is unchanged.
* **DP medians on many sorted multisets** (:func:`em_median_rows`, :func:`smooth_median_rows`):
  the doubled ±∞ multiset of Sarathy & Vadhan is rebuilt row-wise from the *undoubled* sorted
  values (:func:`doubled_rows`, tested equal to the library's multiset) and handed to the
  library's own batched mechanisms (:func:`dpreg.mechanisms.exponential.exp_quantile_rows`,
  :func:`dpreg.mechanisms.smooth.smooth_median_rows`) -- no mechanism is re-implemented here.
* **DP gradient descent** (:func:`gd_replicates`): the library's plan, statistics and release
  (:mod:`dpreg.simple`) on a batch of ``trials`` runs -- nothing of DP-GD is re-implemented
  here; each trial is the library's single fit bit for bit.
* **Non-private Theil-Sen with all pairs** (:func:`theil_sen_all_pairs`): the median of the
  n(n−1)/2 pairwise estimates by root-finding on the count of pairs below a value (Kendall
  discordance, O(n log n) per count) for large n, exact enumeration for small n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpreg._validation import check_rng
from dpreg.exceptions import InvalidInputError
from dpreg.simple import (
    div_down,
    gradient_descent_statistics,
    max_matchings,
    plan_gradient_descent,
    release_gradient_descent,
    target_budgets,
)
from dpreg.simple.pairs import (
    make_design,
    pair_estimates,
    pair_slopes,
    pair_values,
    round_robin_rows,
)

__all__ = [
    "SortedMultisets",
    "kmatch_multisets",
    "all_pairs_multiset",
    "em_median_rows",
    "smooth_median_rows",
    "doubled_rows",
    "doubled_median_rows",
    "gd_replicates",
    "theil_sen_all_pairs",
    "median_split",
]

@dataclass(frozen=True)
class SortedMultisets:
    """Pairwise values of ``rows`` designs, sorted per row, in undoubled form.

    ``values[r, :untied[r]]`` are the sorted values of the pairs with distinct x in row r; the
    rest of the row is NaN (tied pairs).  The doubled multiset a DP Theil-Sen median runs on
    has every untied value twice plus −∞ and +∞ per tied pair (2·``size`` entries).
    ``k`` is the design degree (pairs per record).
    """

    values: np.ndarray
    untied: np.ndarray
    size: int
    k: int

    @property
    def rows(self) -> int:
        return int(self.values.shape[0])

    @property
    def tie_free(self) -> bool:
        """True when no row has a tied pair (every row holds ``size`` values)."""
        return bool(np.all(self.untied == self.size))


def _sorted_rows(z: np.ndarray, tied: np.ndarray, k: int) -> SortedMultisets:
    if tied.any():
        z = np.where(tied, np.nan, z)
        untied = (~tied).sum(axis=1).astype(np.intp)
    else:
        untied = np.full(z.shape[0], z.shape[1], dtype=np.intp)
    z.sort(axis=1)  # NaN last
    return SortedMultisets(z, untied, int(z.shape[1]), k)


def kmatch_multisets(x: np.ndarray, y: np.ndarray, k: int, trials: int, rng: Any, *,
                     estimands: tuple[tuple[str, float | None], ...] = (("predictions", 0.25),),
                     ) -> list[SortedMultisets]:
    """Sorted pairwise values for ``trials`` independent k-matching designs.

    The designs are the library's: :func:`dpreg.simple.pairs.round_robin_rows` (row t the
    t-th of ``trials`` successive :func:`~dpreg.simple.pairs.round_robin_matchings` calls
    with one generator, so trial 0 of a fresh generator is the library's design) and the
    pairwise values the library's :func:`~dpreg.simple.pairs.pair_values`, on all trials at
    once.  One :class:`SortedMultisets` per entry of ``estimands`` (``("predictions",
    x_eval)`` or ``("slope", None)``); all are built from the same designs.
    """
    gen = check_rng(rng)
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = int(x.size)
    top = max_matchings(n)
    if not 1 <= k <= top:
        raise InvalidInputError(f"k must be between 1 and {top} for n={n}; got {k}")
    i, j = round_robin_rows(n, k, trials, gen)
    out = []
    for est, xe in estimands:
        z, tied = pair_values(x, y, i, j, estimand=est, x_eval=xe)
        out.append(_sorted_rows(z, tied, k))
    return out


def all_pairs_multiset(x: np.ndarray, y: np.ndarray, *, estimand: str = "predictions",
                       x_eval: float | None = 0.25) -> SortedMultisets:
    """The complete design (k = n − 1): one deterministic row, shared by every trial."""
    xa = np.asarray(x, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    design = make_design(int(xa.size), "all")
    if estimand == "slope":
        z, tied = pair_slopes(xa, ya, design)
    else:
        assert x_eval is not None
        z, tied = pair_estimates(xa, ya, design, float(x_eval))
    return _sorted_rows(z[None, :].copy(), tied[None, :], design.k)


def em_median_rows(ms: SortedMultisets, *, epsilon_target: float, lo: float, hi: float,
                   theta: float = 0.0, rng: Any, draws_per_row: int = 1) -> np.ndarray:
    """DP (θ-widened) median of each row at the target budget ε_t: the library's mechanism
    (:func:`dpreg.mechanisms.exponential.exp_quantile_rows` at ε_t/(2k)) on each row's doubled
    multiset.  One draw per row (each row its own design), or ``draws_per_row`` i.i.d. draws
    from a single row (a fixed design such as all pairs).  Returns a flat array.
    """
    from dpreg.mechanisms.exponential import exp_quantile_rows, exp_quantile_sorted

    gen = check_rng(rng)
    if math.isinf(epsilon_target):
        return np.repeat(doubled_median_rows(ms, lo=lo, hi=hi), draws_per_row)
    if draws_per_row > 1 and ms.rows != 1:
        raise InvalidInputError("draws_per_row > 1 needs a single row (a fixed design)")
    eps_m = div_down(epsilon_target, 2 * ms.k)
    doubled = doubled_rows(ms, lo=lo, hi=hi)[:, 1:-1]
    if draws_per_row == 1:
        # the rows are sorted and clipped: exp_quantile_sorted gives exp_quantile_rows' draws
        # bit for bit (row after row from one generator) without sorting them again
        return np.array([exp_quantile_sorted(doubled[r], epsilon=eps_m, lo=lo, hi=hi,
                                             theta=theta, rng=gen) for r in range(ms.rows)],
                        dtype=np.float64)
    return exp_quantile_rows(doubled, epsilon=eps_m, lo=lo, hi=hi, theta=theta, rng=gen,
                             draws_per_row=draws_per_row)


def _doubled_at(ms: SortedMultisets, p: np.ndarray, lo: float, hi: float,
                rows: np.ndarray | None = None) -> np.ndarray:
    """Entry p (bookended 0..2S+1) of the sorted, clipped doubled multiset, per row."""
    r = np.arange(ms.rows) if rows is None else rows
    size2 = 2 * ms.size
    p = np.clip(p, 0, size2 + 1)
    if ms.tie_free:
        idx = np.clip((p + 1) // 2 - 1, 0, ms.size - 1)
        vals = np.clip(ms.values[r[:, None], idx], lo, hi)
        return np.where(p == 0, lo, np.where(p == size2 + 1, hi, vals))
    u = ms.untied[r][:, None]
    tied = ms.size - u
    idx = np.clip((p - tied + 1) // 2 - 1, 0, ms.size - 1)
    vals = np.clip(ms.values[r[:, None], idx], lo, hi)
    out = np.where(p <= tied, lo, np.where(p <= tied + 2 * u, vals, hi))
    out = np.where(p == 0, lo, out)
    return np.where(p == size2 + 1, hi, out)


def doubled_median_rows(ms: SortedMultisets, *, lo: float = -np.inf, hi: float = np.inf
                        ) -> np.ndarray:
    """Median of each row's doubled multiset clipped to [lo, hi] (the non-private value)."""
    s = ms.size
    p = np.array([[s, s + 1]])
    v = _doubled_at(ms, np.repeat(p, ms.rows, axis=0), lo, hi)
    return 0.5 * (v[:, 0] + v[:, 1])


def doubled_rows(ms: SortedMultisets, *, lo: float, hi: float) -> np.ndarray:
    """Every row's doubled multiset clipped to [lo, hi], sorted and bookended: (rows, 2S + 2)
    arrays [lo, ..., hi] (the input of :func:`dpreg.mechanisms.smooth.smooth_median_rows`)."""
    if ms.tie_free and ms.size:  # every value twice, in order: no index arithmetic needed
        out = np.empty((ms.rows, 2 * ms.size + 2))
        out[:, 0], out[:, -1] = lo, hi
        out[:, 1:-1] = np.repeat(np.clip(ms.values, lo, hi), 2, axis=1)
        return out
    p = np.arange(2 * ms.size + 2)[None, :]
    return _doubled_at(ms, np.repeat(p, ms.rows, axis=0), lo, hi)


def smooth_median_rows(ms: SortedMultisets, *, epsilon_target: float, lo: float, hi: float,
                       dof: int = 3, rng: Any, draws_per_row: int = 1) -> np.ndarray:
    """DPSSTheilSen's median step per row at budget ε_t: the library's mechanism
    (:func:`dpreg.mechanisms.smooth.smooth_median_rows`, 2k values per record) on each row's
    doubled multiset."""
    from dpreg.mechanisms.smooth import smooth_median_rows as release

    gen = check_rng(rng)
    if math.isinf(epsilon_target):
        return np.repeat(doubled_median_rows(ms, lo=lo, hi=hi), draws_per_row)
    return release(doubled_rows(ms, lo=lo, hi=hi), epsilon=epsilon_target, k=2 * ms.k, dof=dof,
                   rng=gen, draws_per_row=draws_per_row)


def median_split(epsilon: float, estimand: str) -> float:
    """ε_t of one DP median: ε/2 per prediction target (two targets), ε for the slope -- the
    library's own split (:func:`dpreg.simple.target_budgets`, which the Theil-Sen plan uses);
    each median then runs at ε_t/(2k) (:func:`em_median_rows`)."""
    if math.isinf(epsilon):
        return epsilon
    return target_budgets(epsilon, estimand)[0].epsilon


# ----------------------------------------------------------------------------- DP-GD
def gd_replicates(x: np.ndarray, y: np.ndarray, *, variant: str = "pure",
                  epsilon: float | None = None, rho: float | None = None,
                  delta: float | None = None, x_bounds: tuple[float, float],
                  y_bounds: tuple[float, float], tau: float = 1.0, n_iter: int = 80,
                  x_eval: tuple[float, float] = (0.25, 0.75), trials: int, rng: Any
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``trials`` independent DPGradDescent releases: ``(predictions (trials, 2), slopes)``.

    The library's own pipeline on a batch of ``trials`` runs: :func:`dpreg.simple.
    plan_gradient_descent`, :func:`~dpreg.simple.gradient_descent_statistics` (``rows=trials``)
    and :func:`~dpreg.simple.release_gradient_descent` -- trial t of a fresh generator is
    :func:`dpreg.simple.gradient_descent` with that generator, bit for bit (trials = 1).
    """
    xa = np.asarray(x, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    plan = plan_gradient_descent(variant=variant, epsilon=epsilon, rho=rho, delta=delta,
                                 x_bounds=x_bounds, y_bounds=y_bounds, tau=tau, n_iter=n_iter,
                                 x_eval=x_eval, n=int(xa.size))
    release = release_gradient_descent(gradient_descent_statistics(xa, ya, plan, rows=trials),
                                       plan, check_rng(rng))
    slope, intercept = release.values["slope"], release.values["intercept"]
    preds = np.column_stack([slope * xv + intercept for xv in plan.options["x_eval"]])
    return preds, np.asarray(slope)


# ----------------------------------------------------------------------------- non-private TS
def _count_below(u: np.ndarray, w: np.ndarray, s: float) -> float:
    """Number of pairs whose slope (w_j − w_i)/(u_j − u_i) is below s (no ties in u)."""
    from scipy.stats import kendalltau

    tau = kendalltau(u, w - s * u).statistic
    npairs = u.size * (u.size - 1) / 2.0
    return npairs * (1.0 - float(tau)) / 2.0


def theil_sen_all_pairs(x: np.ndarray, y: np.ndarray, *, estimand: str = "predictions",
                        x_eval: float = 0.25, exact_limit: int = 20_000) -> float:
    """Non-private Theil-Sen (all pairs; median of the untied pairwise values).

    Up to ``exact_limit`` pairs: exact (``numpy.median`` of the values).  Above: the value where
    the count of pairwise values below it crosses half the pairs, found by Brent's method on
    Kendall discordance counts (to 1e−12 absolute).  A prediction at x₀ is the slope of the
    pair in the coordinates (1/(x − x₀), y/(x − x₀)).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x.size
    u: np.ndarray | None
    w: np.ndarray | None
    if estimand == "slope":
        u, w = x, y
    else:
        d = x - x_eval
        u, w = (1.0 / d, y / d) if np.all(d != 0) else (None, None)
    npairs = n * (n - 1) // 2
    exact = (npairs <= exact_limit or u is None or np.unique(u).size < n
             or not np.all(np.isfinite(u)))
    if exact:
        design = make_design(n, "all")
        z, tied = (pair_slopes(x, y, design) if estimand == "slope"
                   else pair_estimates(x, y, design, float(x_eval)))
        return float(np.median(z[~tied]))
    assert u is not None and w is not None
    from scipy.optimize import brentq

    # bracket from a sample of pairs
    gen = np.random.default_rng(0)  # deterministic bracketing only (no privacy role)
    i = gen.integers(0, n, 20000)
    j = gen.integers(0, n, 20000)
    keep = i != j
    sl = (w[j[keep]] - w[i[keep]]) / (u[j[keep]] - u[i[keep]])
    lo_b, hi_b = np.quantile(sl, [0.45, 0.55])
    half = npairs / 2.0

    def f(s: float) -> float:
        return _count_below(u, w, s) - half

    span = hi_b - lo_b
    while f(lo_b) > 0:
        lo_b -= span
        span *= 2
    span = hi_b - lo_b
    while f(hi_b) < 0:
        hi_b += span
        span *= 2
    return float(brentq(f, lo_b, hi_b, xtol=1e-12, rtol=1e-15))
