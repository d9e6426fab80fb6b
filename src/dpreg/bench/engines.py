"""Vectorised evaluation engines for the one-x methods (experiments only).

Every function here produces ``trials`` **independent releases** of a :mod:`dpreg.simple`
mechanism on one fixed data set, with exactly the distribution of ``trials`` separate calls of
the public function (same pair designs, same budget split, same sensitivities, same noise).
Re-running a mechanism on fixed data is an *evaluation device*: each replicate is a complete
release that costs the full ε, so these engines charge no ledger and are only for simulated or
public benchmark data (as :func:`dpreg.simple.replicates.replicate_predictions`).

Why not call the public functions in a loop?  The full Alabi et al. Figure 5 grid needs
hundreds of millions of pairwise estimates; these engines vectorise over trials:

* **Theil-Sen with k matchings** (:func:`kmatch_multisets`): each trial draws its own design
  exactly as :func:`dpreg.simple.pairs.round_robin_matchings` does (same generator calls in the
  same order), but the pairwise values are built by permuting the *data* and reading each
  round-robin round as two contiguous windows of the permuted sample (no index arithmetic per
  pair).  The sorted multisets of one trial can feed several medians (Exp, Wide, smooth and the
  non-private median): the methods then share the design draw of a trial (common random
  numbers), while each method's own distribution is unchanged.
* **DP medians on many sorted multisets** (:func:`em_median_rows`, :func:`smooth_median_rows`):
  the exponential / θ-widened mechanism and the smooth-sensitivity median computed row-wise
  from the *undoubled* sorted values, reproducing the doubled ±∞ multiset of Sarathy & Vadhan
  exactly (tested against :func:`dpreg.mechanisms.quantile_em_intervals` and
  :func:`dpreg.mechanisms.median_smooth_sensitivity`).  Intervals whose exponential-mechanism
  weight is below e⁻⁶⁰ of the largest are never sampled (total dropped mass < 1e−20).
* **DP gradient descent** (:func:`gd_replicates`): the clipped gradient sum equals the
  unclipped one whenever no example reaches the clipping bound; that is checked exactly per
  replicate and step (max |residual| over the convex-hull vertices of the points times the
  largest |∂ŷ/∂p|), and the O(1) sufficient-statistics sum is used then; otherwise the exact
  clipped sum over all examples.  Noise draws are identical to the library's.
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
from dpreg.privacy import PureDP
from dpreg.simple import _gradient_descent as _gd
from dpreg.simple._common import div_down, max_matchings
from dpreg.simple.pairs import make_design, pair_estimates, pair_slopes

__all__ = [
    "SortedMultisets",
    "kmatch_multisets",
    "all_pairs_multiset",
    "em_median_rows",
    "em_interval_rows",
    "smooth_median_rows",
    "doubled_rows",
    "doubled_median_rows",
    "gd_replicates",
    "theil_sen_all_pairs",
    "median_split",
]

#: intervals with log-weight below (max − LOG_CUT) are never sampled (weight < e⁻⁶⁰ ≈ 1e−26)
LOG_CUT = 60.0


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


def _pair_values(xi: np.ndarray, yi: np.ndarray, xj: np.ndarray, yj: np.ndarray,
                 estimand: str, x_eval: float | None) -> tuple[np.ndarray, np.ndarray]:
    # Same floating-point formulas as dpreg.simple.pairs.pair_estimates / pair_slopes.
    dx = xj - xi
    tied = dx == 0
    any_tied = bool(tied.any())
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if estimand == "slope":
            num = yj - yi
        else:
            assert x_eval is not None
            num = (xj - x_eval) * yi + (x_eval - xi) * yj
        if any_tied:
            z = np.divide(num, dx, out=np.zeros_like(dx), where=~tied)
        else:
            z = np.divide(num, dx, out=num)
    bad = np.isnan(z)
    if bad.any():
        z[bad] = 0.0
    return z, tied


def kmatch_multisets(x: np.ndarray, y: np.ndarray, k: int, trials: int, rng: Any, *,
                     estimands: tuple[tuple[str, float | None], ...] = (("predictions", 0.25),),
                     ) -> list[SortedMultisets]:
    """Sorted pairwise values for ``trials`` independent k-matching designs.

    The designs are drawn trial by trial exactly as
    :func:`dpreg.simple.pairs.round_robin_matchings` draws one (``choice`` of the rounds, then
    ``permutation`` of the labels), so trial 0 of a fresh generator reproduces the library's
    design.  One :class:`SortedMultisets` per entry of ``estimands`` (``("predictions",
    x_eval)`` or ``("slope", None)``); all are built from the same designs.
    """
    gen = check_rng(rng)
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = int(x.size)
    top = max_matchings(n)
    if not 1 <= k <= top:
        raise InvalidInputError(f"k must be between 1 and {top} for n={n}; got {k}")
    m = n - 1 if n % 2 == 0 else n
    h = (m - 1) // 2
    rounds = np.empty((trials, k), dtype=np.intp)
    perms = np.empty((trials, n), dtype=np.intp)
    for t in range(trials):
        rounds[t] = np.sort(gen.choice(top, size=k, replace=False))
        perms[t] = gen.permutation(n)
    xp, yp = x[perms], y[perms]  # data in relabelled order: pair (a, b) reads xp[a], xp[b]

    per = k * h + (k if n % 2 == 0 else 0)

    def windows(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ext = np.concatenate([arr[:, :m], arr[:, :m]], axis=1)
        left = np.empty((trials, per))
        right = np.empty((trials, per))
        for t in range(trials):
            row = ext[t]
            for j, r in enumerate(rounds[t]):
                left[t, j * h:(j + 1) * h] = row[r + 1:r + 1 + h]           # positions r + d
                right[t, j * h:(j + 1) * h] = row[r + m - h:r + m][::-1]   # r + m − d ≡ r − d
        if n % 2 == 0:  # the hub (position n − 1) meets position r in round r
            left[:, k * h:] = arr[:, n - 1:n]
            right[:, k * h:] = np.take_along_axis(arr, rounds, axis=1)
        return left, right

    xa, xb = windows(xp)
    ya, yb = windows(yp)
    out = []
    for est, xe in estimands:
        # orientation does not matter: both formulas are exactly symmetric in (i, j)
        z, tied = _pair_values(xa, ya, xb, yb, est, xe)
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


def _breakpoints(ms: SortedMultisets, pos: np.ndarray, rows: np.ndarray, *, lo: float,
                 hi: float, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoint values and cumulative doubled counts at positions ``pos`` (per row).

    The undoubled breakpoint list of a row with U untied values: the lowest ⌊U/2⌋ values
    shifted down by θ (each standing for two doubled entries), for odd U the middle value once
    down and once up (one entry each), the rest shifted up by θ; clipped to [lo, hi].
    Position −1 reads as ``lo`` and positions >= U + (U mod 2) as ``hi``.
    """
    u = ms.untied[rows][:, None]
    half, odd = u // 2, u % 2
    length = u + odd
    p = pos
    src = np.where(p < half, p, np.where(p <= half + odd, half, p - odd))
    src = np.clip(src, 0, ms.size - 1)
    base = np.clip(ms.values[rows[:, None], src], lo, hi)
    down = (p < half) | ((odd == 1) & (p == half))
    bp = np.where(down, np.clip(base - theta, lo, hi), np.clip(base + theta, lo, hi))
    bp = np.where(p < 0, lo, np.where(p >= length, hi, bp))
    cum = np.where(odd == 1, np.where(p < half, 2 * (p + 1), np.where(p == half, 2 * half + 1,
                                                                        2 * p)), 2 * (p + 1))
    cum = np.clip(cum, 0, 2 * u)
    return bp, cum


def _interval_band(ms: SortedMultisets, idx: np.ndarray, rows: np.ndarray, *, epsilon: float,
                   lo: float, hi: float, theta: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(left, right, log-weight, rung) of the intervals with indices ``idx`` (per row).

    Interval i lies between breakpoints i − 1 and i; interval 0 starts at ``lo``.  Its rung is
    U for i = 0 and |cum_{i−1} − U| otherwise (``cum`` = doubled untied entries at or below).
    """
    left, cum_left = _breakpoints(ms, idx - 1, rows, lo=lo, hi=hi, theta=theta)
    right, _ = _breakpoints(ms, idx, rows, lo=lo, hi=hi, theta=theta)
    u = ms.untied[rows][:, None]
    rung = np.where(idx == 0, u, np.abs(cum_left - u)).astype(np.float64)
    rung = np.where(idx < 0, np.inf, rung)
    with np.errstate(divide="ignore", invalid="ignore"):
        logw = np.log(right - left) - (epsilon / 2.0) * rung
    logw = np.where(np.isnan(logw), -np.inf, logw)
    return left, right, logw, rung


def em_interval_rows(ms: SortedMultisets, *, epsilon: float, lo: float, hi: float,
                     theta: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All intervals ``(left, right, log-weight)``, each of shape (rows, S+2), of the median.

    Equals :func:`dpreg.mechanisms.quantile_em_intervals` on the doubled multiset at q = ½
    with ``epsilon`` the mechanism's ε (ε_t/(2k)), once its zero-length intervals are dropped
    (log-weight = ln|I| − (ε/2)·rung; −inf for empty intervals and row padding).

    In the doubled list the lowest S entries move down by θ and the others up (S = number of
    pairs); tied pairs sit at the ends (−∞, +∞) and only shift the count below each interval
    by the same amount they shift S, so with U untied values the interval above c doubled
    untied entries has rung |c − U|.
    """
    rows = np.arange(ms.rows)
    idx = np.repeat(np.arange(ms.size + 2)[None, :], ms.rows, axis=0)
    left, right, logw, _ = _interval_band(ms, idx, rows, epsilon=epsilon, lo=lo, hi=hi,
                                          theta=theta)
    return left, right, logw


def _sample_band(ms: SortedMultisets, *, epsilon: float, lo: float, hi: float, theta: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Intervals around the median that hold all but < e⁻⁶⁰ of each row's weight."""
    rows = np.arange(ms.rows)
    center = (ms.untied // 2)[:, None]
    width = ms.size + 2
    band = min(width, max(64, int(np.ceil(200.0 / max(epsilon, 1e-300)))))
    while True:
        if band >= width:
            idx = np.repeat(np.arange(width)[None, :], ms.rows, axis=0)
            left, right, logw, _ = _interval_band(ms, idx, rows, epsilon=epsilon, lo=lo, hi=hi,
                                                  theta=theta)
            return left, right, logw
        start = np.clip(center - band // 2, 0, width - band)
        idx = start + np.arange(band)[None, :]
        left, right, logw, rung = _interval_band(ms, idx, rows, epsilon=epsilon, lo=lo, hi=hi,
                                                 theta=theta)
        # every excluded interval has a rung at least that of the band's end intervals
        # (the rung is V-shaped in the index) and length at most hi − lo
        edge = np.where(start[:, 0] > 0, rung[:, 0], np.inf)
        edge = np.minimum(edge, np.where(start[:, 0] + band < width, rung[:, -1], np.inf))
        outside = (math.log(width) + math.log(hi - lo) - (epsilon / 2.0) * edge)
        if np.all(outside <= np.max(logw, axis=1) - LOG_CUT - 1.0):
            return left, right, logw
        band *= 4


def _tie_free_band(ms: SortedMultisets, *, epsilon: float, lo: float, hi: float, theta: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_sample_band` for rows without ties (all rows share the breakpoint layout)."""
    size = ms.size
    half, odd = size // 2, size % 2
    vals = np.clip(ms.values, lo, hi)
    parts = [np.clip(vals[:, :half] - theta, lo, hi)]
    if odd:
        parts += [np.clip(vals[:, half:half + 1] - theta, lo, hi),
                  np.clip(vals[:, half:half + 1] + theta, lo, hi),
                  np.clip(vals[:, half + 1:] + theta, lo, hi)]
        cum = np.concatenate([2 * np.arange(1, half + 1), [2 * half + 1],
                              2 * np.arange(half + 1, size + 1)])
    else:
        parts.append(np.clip(vals[:, half:] + theta, lo, hi))
        cum = 2 * np.arange(1, size + 1)
    rows = ms.rows
    breaks = np.concatenate([np.full((rows, 1), lo)] + parts + [np.full((rows, 1), hi)], axis=1)
    rung = np.concatenate([[size], np.abs(cum - size)]).astype(np.float64)
    width = rung.size
    band = min(width, max(64, int(np.ceil(200.0 / max(epsilon, 1e-300)))))
    while True:
        start = max(0, min(half + odd - band // 2, width - band))
        stop = start + band
        left, right = breaks[:, start:stop], breaks[:, start + 1:stop + 1]
        with np.errstate(divide="ignore"):
            logw = np.log(right - left) - (epsilon / 2.0) * rung[None, start:stop]
        if band >= width:
            return left, right, logw
        edge = min(rung[start] if start > 0 else np.inf, rung[stop - 1] if stop < width else np.inf)
        outside = math.log(width) + math.log(hi - lo) - (epsilon / 2.0) * edge
        if np.all(outside <= np.max(logw, axis=1) - LOG_CUT - 1.0):
            return left, right, logw
        band *= 4


def em_median_rows(ms: SortedMultisets, *, epsilon_target: float, lo: float, hi: float,
                   theta: float = 0.0, rng: Any, draws_per_row: int = 1) -> np.ndarray:
    """DP (θ-widened) median of each row at the target budget ε_t (mechanism ε_t/(2k)).

    One draw per row (each row its own design), or ``draws_per_row`` i.i.d. draws from a
    single row (a fixed design such as all pairs).  Returns a flat array.
    """
    gen = check_rng(rng)
    if math.isinf(epsilon_target):
        return np.repeat(doubled_median_rows(ms, lo=lo, hi=hi), draws_per_row)
    eps_mech = div_down(epsilon_target, 2 * ms.k)
    if ms.tie_free:
        left, right, logw = _tie_free_band(ms, epsilon=eps_mech, lo=lo, hi=hi, theta=theta)
    else:
        left, right, logw = _sample_band(ms, epsilon=eps_mech, lo=lo, hi=hi, theta=theta)
    top = np.max(logw, axis=1, keepdims=True)
    logw = np.where(logw >= top - LOG_CUT, logw, -np.inf)
    if draws_per_row == 1:  # inverse-CDF draw of the interval, then uniform inside it
        w = np.cumsum(np.exp(logw - top), axis=1)
        target = gen.random(w.shape[0]) * w[:, -1]
        j = np.minimum(np.sum(w <= target[:, None], axis=1), w.shape[1] - 1)
        r = np.arange(logw.shape[0])
        return gen.uniform(left[r, j], right[r, j])
    if ms.rows != 1:
        raise InvalidInputError("draws_per_row > 1 needs a single row (a fixed design)")
    w = np.exp(logw[0] - top[0, 0])
    w /= w.sum()
    idx = gen.choice(w.size, size=draws_per_row, p=w)
    return gen.uniform(left[0, idx], right[0, idx])


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
    """ε_t of one DP median: ε/2 per prediction target (two targets), ε for the slope."""
    if estimand == "slope" or math.isinf(epsilon):
        return epsilon
    return PureDP(epsilon).split([1, 1])[0].epsilon


# ----------------------------------------------------------------------------- DP-GD
def _hull_points(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Indices of the convex-hull vertices of the points (a_i, v_i) (all points if degenerate)."""
    pts = np.column_stack([a, v])
    uniq = np.unique(pts, axis=0)
    if uniq.shape[0] < 3:
        return uniq
    try:
        from scipy.spatial import ConvexHull

        hull = ConvexHull(uniq)
        return np.asarray(uniq[hull.vertices])
    except Exception:  # collinear points (QhullError): the extremes are all the points
        return np.asarray(uniq)


def gd_replicates(x: np.ndarray, y: np.ndarray, *, variant: str = "pure",
                  epsilon: float | None = None, rho: float | None = None,
                  delta: float | None = None, x_bounds: tuple[float, float],
                  y_bounds: tuple[float, float], tau: float = 1.0, steps: int = 80,
                  x_eval: tuple[float, float] = (0.25, 0.75), trials: int, rng: Any
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``trials`` independent DPGradDescent releases: ``(predictions (trials, 2), slopes)``.

    The library's release itself (:func:`dpreg.simple._gradient_descent.release_gradient_descent`:
    same plan, loop and noise as :func:`dpreg.simple.gradient_descent`, on a (trials, 2) batch);
    only the statistics step differs: the gradient sum is computed from sufficient statistics
    whenever clipping provably does not bind (module doc).
    """
    xa = np.asarray(x, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    plan = _gd._plan(xa, ya, variant=variant, epsilon=epsilon, rho=rho, delta=delta,
                     x_bounds=x_bounds, y_bounds=y_bounds, tau=tau, steps=steps, x_eval=x_eval)
    u, v, tau_ = plan.u, plan.v, plan.tau
    a = 0.75 - u
    b = u - 0.25
    n = u.size
    sa, saa, sv, sva = a.sum(), (a * a).sum(), v.sum(), (v * a).sum()
    hull = _hull_points(a, v)
    amax = float(max(np.max(np.abs(a)), np.max(np.abs(b))))

    def gradient(p: np.ndarray) -> np.ndarray:
        """The exact clipped gradient sums of every replicate (module doc)."""
        p25, p75 = p[:, 0], p[:, 1]
        dlt = p25 - p75
        # max_i |resid_i| over the hull vertices (a linear function of the point)
        res_h = 2.0 * dlt[:, None] * hull[None, :, 0] + p75[:, None] - hull[None, :, 1]
        safe = 2.0 * np.max(np.abs(res_h), axis=1) * amax <= tau_
        g = np.empty((p.shape[0], 2))
        g1 = 2.0 * (2.0 * dlt * saa + p75 * sa - sva)
        g[:, 0] = g1
        g[:, 1] = (2.0 * dlt * sa + n * p75 - sv) - g1
        if not safe.all():
            idx = np.nonzero(~safe)[0]
            pp = p[idx]
            resid = 2.0 * (pp[:, :1] * a + pp[:, 1:] * b) - v
            g[idx, 0] = np.clip(2.0 * resid * a, -tau_, tau_).sum(axis=1)
            g[idx, 1] = np.clip(2.0 * resid * b, -tau_, tau_).sum(axis=1)
        return g

    p25, p75 = _gd.release_gradient_descent(gradient, plan=plan, rows=trials,
                                            rng=check_rng(rng))
    slope, intercept = plan.line(p25, p75)
    preds = np.column_stack([slope * xv + intercept for xv in plan.x_eval])
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
