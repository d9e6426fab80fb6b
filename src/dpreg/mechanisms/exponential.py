"""Exponential mechanism on a real interval and DP quantiles (standard and θ-widened).

Sampling a piecewise-constant density.  Given breakpoints ``lo = b_0 <= b_1 <= ... <= b_K = hi``
and a score ``w_j`` constant on each interval ``I_j = (b_j, b_{j+1})``,
:func:`sample_piecewise_constant` outputs a value with density proportional to ``exp(w_j)`` on
``I_j``: ``j* = argmax_j [ln|I_j| + w_j + G_j]`` with i.i.d. standard Gumbel ``G_j``
(zero-length intervals have ``ln 0 = −∞`` and are never chosen), then a uniform draw from
``I_{j*}``.

DP quantile (McSherry & Talwar 2007; Smith 2011; Alabi et al. 2022 Alg. 3; Sarathy & Vadhan
2025 Alg. 3.2), **over the doubles of [lo, hi]**.  For a multiset ``z`` of N values clipped to
``[lo, hi]`` and a target quantile q, the output is a double d in [lo, hi], chosen with
probability ∝ ``ω(d)·exp(ε·u(d)/2)``, where

* ``ω(d)`` is the length of d's rounding cell -- the reals that round to d (to nearest), within
  [lo, hi]: ``(min(d⁺, hi) − max(d⁻, lo))/2`` with d⁻, d⁺ the neighbouring doubles.  It depends
  on d only (public), and the cells tile [lo, hi], so at the scale of the data this is the
  Lebesgue measure of the textbook continuous mechanism;
* ``u(d) = −⌊max(0, L(d) − N·q, N·q − U(d))⌋`` with ``L(d) = #{z < d}`` and
  ``U(d) = #{z <= d}``: minus the distance from N·q to the counts [L, U] that the output d
  splits the data into (a value equal to d may count on either side).  Between two consecutive
  values of z, L = U = c and ``u = −⌊|c − N·q|⌋``, the usual rank utility; at a value that k
  entries of z share, [L, U] spans all k, so a tied quantile has the top score.

Changing one value of z moves L and U by at most one each, so the distance from N·q to [L, U]
-- and its floor -- moves by at most one: Δu = 1 and the mechanism is **ε-DP (pure) under
change-one (replace-one) neighbours of the multiset**; it is also ε-DP under add/remove because
N·q moves by q <= 1 while L and U move by at most one in the same direction.  (The paper's
utility −|#above − #below| has sensitivity 2 and the same rungs for q = ½.)

Why over the doubles (issue 32).  The textbook mechanism is continuous on [lo, hi] with the
utility ``−⌊|#{z < r} − N·q|⌋``: a single point has no mass there, so a value shared by many
entries of z (rounded data, exactly collinear points in Theil-Sen, a constant column) can
never be released, whatever ε -- on y = x every DP Theil-Sen slope was uniform over the output
range, and as ε → ∞ a tied median was replaced by a draw from the nearest interval of positive
length.  That was the mechanism's law, sampled correctly, not a privacy failure.  The outputs
were doubles anyway; giving each double its rounding cell as base measure and the utility of
the counts it splits makes ties count: the mass of a tied value is ω(d) (about one unit in its
last place), so it wins once (ε/2) × its score lead exceeds ln(range/ω(d)) (about 37 for
values of the range's size, about 745 for a tie at 0, the smallest cell); as ε → ∞ the law
concentrates, uniformly by ω, on the doubles between the two middle order statistics -- the
set of medians -- and *is* the median whenever those coincide.  On tie-free data it differs
from the continuous law only on the values themselves (mass of the order of an ulp).

Sampling (exact, Gumbel-max).  With breakpoints lo, the sorted values, hi (N + 2 of them),
piece i is the value of breakpoint i (its first occurrence; weight ω, score from [L, U]) together
with the gap after it (the doubles strictly between it and the next larger breakpoint; score from
their count U, weight the sum of their ω: ``(e − v) − ((v⁺ − v) + (e − e⁻))/2``, zero when no
double lies inside); a repeated value is an empty piece.  ``argmax`` of the piece's log-weight
plus a Gumbel draw picks one, then one uniform decides between the value (probability
weight of the value / weight of the piece) and the gap; the value is released as is, the gap by
a uniform draw inside it, redrawn in the (rounding-size) event that it lands on an end.  A
data-dependent count of random draws would be harmless, but the Gumbel draws have a fixed
number (N + 2) for every input of size N, as many as the continuous sampler's N + 1 intervals
needed, plus one.

θ-widened quantile (Sarathy & Vadhan 2025 §3, the privacy-safe construction; replaces Alabi et
al.'s Alg. 5).  Sort z, move the lowest ``k0 = ⌊N·q⌋`` values down by θ and the others up by θ
(clipping to ``[lo, hi]``), and use the same utility on the shifted list.  With
``A = #{z < r + θ}`` and ``B = #{z < r − θ}`` the shifted count is
``c_θ(r) = min(k0, A) + max(0, B − k0)`` (and the same with <= for U).  Under change-one, A
and B move by at most one and the two terms cannot both move (that would need
``A < k0 < B``, impossible as ``B <= A``), so L and U move by at most one and ``Δu = 1``: the
widened mechanism is **ε-DP under change-one neighbours** (N, hence k0, is fixed).  On
tie-free data it equals the widened utility ``−⌊min_{|w−r|<=θ} |#{z <= w} − N·q|⌋``: every
output within θ of the quantile gets the top score, which concentrates the output when the
data are concentrated.

⚠ Alabi et al.'s reference code widens an even-size list by inserting two copies of the median
midpoint; that variant is *not* ε-DP (log density ratio 1.20 at ε = 1 on {0.1, 0.2, 0.8, 0.9}
vs {0.1, 0.15, 0.2, 0.9}).  It is reproduced only in the test-suite to pin the bug.
"""

from __future__ import annotations

import functools
import math
import os
import warnings
from typing import Any

import numpy as np

from dpreg._validation import check_bounds, check_epsilon, check_positive, check_rng, describe_data
from dpreg.exceptions import InvalidInputError, PrivacyLeakWarning

__all__ = [
    "sample_piecewise_constant",
    "quantile_em_intervals",
    "quantile_em_law",
    "quantile_em_probabilities",
    "exp_quantile",
    "exp_quantile_rows",
    "exp_quantile_sorted",
    "exact_quantile",
    "gumbel_max_index",
    "envelope_block",
    "envelope_accept",
    "uniform_integer",
    "random_ordered_pairs",
]


_LN2 = math.log(2.0)


def gumbel_max_index(log_weights: np.ndarray, rng: np.random.Generator) -> int:
    """The exponential mechanism's choice among finitely many outcomes: index j with
    probability ∝ exp(log_weights[j]), exactly, by Gumbel-max (argmax of log-weight plus an
    i.i.d. standard Gumbel draw; no normalisation, −inf weights are never chosen).  The one
    sampler of a discrete exponential-mechanism choice in dpreg: the piecewise-constant
    densities below and TukeyEM's depth level and region (:mod:`dpreg.multivariate.tukey`)
    call it.  ``rng`` must already be a Generator (callers normalise it once)."""
    lw = np.asarray(log_weights, dtype=np.float64)
    return int(np.argmax(lw + rng.gumbel(size=lw.shape)))


def sample_piecewise_constant(
    breaks: np.ndarray, log_scores: np.ndarray, *, rng: Any = None, size: int | None = None
) -> float | np.ndarray:
    """Draw from the density ∝ exp(log_scores[j]) on (breaks[j], breaks[j+1]).

    Uses Gumbel-max for a single draw (exact, no normalisation needed).  With ``size`` it
    draws ``size`` i.i.d. values using the normalised interval probabilities.
    """
    gen = check_rng(rng)
    breaks = np.asarray(breaks, dtype=np.float64)
    log_scores = np.asarray(log_scores, dtype=np.float64)
    if breaks.ndim != 1 or log_scores.shape != (breaks.size - 1,):
        raise InvalidInputError(
            "breaks must be 1-D with one more entry than log_scores; got shapes "
            f"{breaks.shape} and {log_scores.shape}"
        )
    lengths = np.diff(breaks)
    if np.any(lengths < 0):
        raise InvalidInputError("breaks must be sorted in non-decreasing order")
    with np.errstate(divide="ignore"):
        logw = np.log(lengths) + log_scores
    if not np.any(np.isfinite(logw)):
        raise InvalidInputError("all intervals have zero length or zero weight")
    if size is None:
        j = gumbel_max_index(logw, gen)
        return float(gen.uniform(breaks[j], breaks[j + 1]))
    p = np.exp(logw - np.max(logw))
    p /= p.sum()
    idx = gen.choice(p.size, size=size, p=p)
    return gen.uniform(breaks[idx], breaks[idx + 1])


def _validate_quantile_args(
    z: Any, q: float, epsilon: float, lo: float, hi: float, theta: float
) -> tuple[np.ndarray, float, float, float, float, float]:
    # ±inf entries are allowed (Sarathy & Vadhan's convention for tied pairs): they are
    # clipped to the output range like every other value.  NaN is rejected.
    try:
        arr = np.asarray(z, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(f"z must be an array of real numbers; got {describe_data(z)}") from None
    if arr.ndim != 1:
        raise InvalidInputError(f"z must be a 1-D array; got {arr.ndim}-D")
    if arr.size and np.any(np.isnan(arr)):
        raise InvalidInputError("z must not contain NaN")
    if isinstance(q, bool) or not isinstance(q, (int, float, np.floating, np.integer)):
        raise InvalidInputError(f"q must be a real number with 0 <= q <= 1; got {q!r}")
    q = float(q)
    if not (0.0 <= q <= 1.0):
        raise InvalidInputError(f"q must be a real number with 0 <= q <= 1; got {q!r}")
    eps = check_epsilon(epsilon, minimum=0.0)  # may be a split of a larger budget
    lo_, hi_ = check_bounds((lo, hi), "(lo, hi)")
    th = check_positive(theta, "theta", allow_zero=True)
    return arr, q, eps, lo_, hi_, th


def _shifted_sorted(z: np.ndarray, q: float, lo: float, hi: float, theta: float) -> np.ndarray:
    """Row-wise (last axis): sort the values clipped to [lo, hi], then (θ > 0) move the lowest
    ⌊N·q⌋ down and the others up by θ, clipping again (module doc)."""
    s = np.sort(np.clip(z, lo, hi), axis=-1)
    size = s.shape[-1]
    if theta > 0 and size:
        k0 = int(math.floor(size * q))
        s[..., :k0] = np.clip(s[..., :k0] - theta, lo, hi)
        s[..., k0:] = np.clip(s[..., k0:] + theta, lo, hi)
    return s


def _intervals(z: np.ndarray, q: float, eps: float, lo: float, hi: float, theta: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints (rows, N + 2) and log-scores (N + 1,) of the open intervals of the (widened)
    quantile mechanism for every row of ``z`` ((rows, N)): interval j has j values of the
    (shifted) row at or below its left end and score −(ε/2)·⌊|j − N·q|⌋."""
    s = _shifted_sorted(z, q, lo, hi, theta)
    rows, n = s.shape
    breaks = np.concatenate((np.full((rows, 1), lo), s, np.full((rows, 1), hi)), axis=1)
    rung = np.floor(np.abs(np.arange(n + 1, dtype=np.float64) - n * q))
    return breaks, -(eps / 2.0) * rung


def _value_log_weights(b: np.ndarray, lo: float, hi: float, c: float, nq: float,
                       idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Log-weights of the pieces at breakpoint indices ``idx`` of the quantile mechanism over
    the doubles of [lo, hi] on the sorted (shifted, clipped) values ``b`` (N of them; the
    breakpoints are lo, b..., hi, indices 0..N + 1).  ``c`` = −ε/2.  The one formula of the
    weights: the numpy sampler evaluates it on every index and :func:`exp_quantile_sorted` on
    the few near-best ones, so both give the same floats.

    Piece i (the first occurrence of its value v; both weights −inf for a repeated value) is
    the value v and the gap after it, the doubles strictly between v and the next larger
    breakpoint e.  Returns ``(la, lg)``: ``la = log ω(v) + c·⌊max(0, L − N·q, N·q − U)⌋`` with
    L = #{b < v}, U = #{b <= v}, and ``lg = log[(e − v) − ((v⁺ − v) + (e − e⁻))/2] +
    c·⌊|U − N·q|⌋`` (−inf where v = hi or no double lies strictly inside)."""
    m = b.size
    idx = np.asarray(idx, dtype=np.intp)
    if m:
        v = b[np.minimum(np.maximum(idx - 1, 0), m - 1)]  # a fresh array
        v[idx == 0] = lo
        v[idx == m + 1] = hi
    else:
        v = np.where(idx == 0, lo, hi)
    lower_i = np.searchsorted(b, v, side="left")
    upper_i = np.searchsorted(b, v, side="right")
    # piece i counts only at its value's first occurrence among the breakpoints (a repeat
    # weighs nothing): piece 0 (lo) always, piece i >= 1 when its value exceeds lo and its
    # first position in b is i − 1
    first = (idx == 0) | ((v > lo) & (lower_i == idx - 1))
    lower = lower_i.astype(np.float64)
    upper = upper_i.astype(np.float64)
    loss = np.floor(np.maximum(np.maximum(lower - nq, nq - upper), 0.0))
    up = np.nextafter(v, np.inf)
    # log ω(v) = log(2ω) − ln 2: 2ω, a difference of neighbouring doubles, is exact and
    # positive (ω itself underflows to 0 for a range end at 0, whose cell is 2^-1075)
    span = np.minimum(up, hi) - np.maximum(np.nextafter(v, -np.inf), lo)
    la = np.log(span) - _LN2 + c * loss
    # the gap after v: up to the next larger breakpoint (b[U], or hi)
    if m:
        e = b[np.minimum(upper_i, m - 1)]
        e[upper_i >= m] = hi
    else:
        e = np.full(v.shape, hi)
    width = (e - v) - ((up - v) + (e - np.nextafter(e, -np.inf))) * 0.5
    with np.errstate(divide="ignore", invalid="ignore"):  # no double inside: set below
        lg = np.log(width) + c * np.floor(np.abs(upper - nq))
    la[~first] = -np.inf
    lg[~(first & (v < hi) & (width > 0))] = -np.inf
    return la, lg


def _few_log_weights(b: np.ndarray, lo: float, hi: float, c: float, nq: float,
                     idx: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_value_log_weights` at a few piece indices, the same floats bit for bit: the
    counts, cells and widths are exact IEEE operations done on Python floats in the same
    order, and the logarithms are one ``numpy.log`` call, as there (a handful of pieces costs
    a few numpy calls instead of some fifty; tested equal at every index)."""
    m = b.size
    loss_a: list[float] = []
    loss_g: list[float] = []
    args: list[float] = []
    is_first: list[bool] = []
    gap: list[bool] = []
    for i in idx:
        v = lo if i == 0 else (hi if i == m + 1 else float(b[i - 1]))
        lower_i = int(b.searchsorted(v, side="left"))
        upper_i = int(b.searchsorted(v, side="right"))
        first = i == 0 or (v > lo and lower_i == i - 1)
        lower, upper = float(lower_i), float(upper_i)
        is_first.append(first)
        loss_a.append(float(math.floor(max(max(lower - nq, nq - upper), 0.0))))
        up = math.nextafter(v, math.inf)
        args.append(min(up, hi) - max(math.nextafter(v, -math.inf), lo))
        e = float(b[upper_i]) if upper_i < m else hi
        width = (e - v) - ((up - v) + (e - math.nextafter(e, -math.inf))) * 0.5
        ok = first and v < hi and width > 0
        gap.append(ok)
        loss_g.append(float(math.floor(abs(upper - nq))))
        args.append(width if ok else 1.0)
    logs = np.log(np.array(args, dtype=np.float64)).tolist()
    la = [logs[2 * k] - _LN2 + c * loss_a[k] if is_first[k] else -math.inf
          for k in range(len(idx))]
    lg = [logs[2 * k + 1] + c * loss_g[k] if gap[k] else -math.inf for k in range(len(idx))]
    return np.array(la, dtype=np.float64), np.array(lg, dtype=np.float64)


def _all_pieces(b: np.ndarray) -> np.ndarray:
    return np.arange(b.size + 2, dtype=np.intp)


def _piece_value(b: np.ndarray, lo: float, hi: float, i: int, la: float, lm: float,
                 gen: np.random.Generator) -> float:
    """The release for piece i (log-weights ``la`` of its value, ``lm`` of the whole piece):
    its value with probability exp(la − lm), else a uniform draw strictly inside the gap after
    it (redrawn if floating-point rounding puts it on an end).  One uniform decides, always."""
    m = b.size
    v = lo if i == 0 else (hi if i == m + 1 else float(b[i - 1]))
    if gen.random() < math.exp(la - lm):
        return v
    u_i = int(np.searchsorted(b, v, side="right"))
    e = float(b[u_i]) if u_i < m else hi
    while True:
        u = float(gen.uniform(v, e))
        if v < u < e:
            return u


def _law_from_sorted(b: np.ndarray, lo: float, hi: float, eps: float, q: float
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(points, p_points, p_gaps) of the mechanism on the sorted (shifted, clipped) ``b``."""
    la, lg = _value_log_weights(b, lo, hi, -(eps / 2.0), b.size * q, _all_pieces(b))
    top = max(float(np.max(la)), float(np.max(lg)))
    pa, pg = np.exp(la - top), np.exp(lg - top)
    total = pa.sum() + pg.sum()
    bp = np.concatenate(([lo], b, [hi]))
    first = np.ones(bp.size, dtype=bool)
    first[1:] = bp[1:] > bp[:-1]
    # every distinct point but the last (hi) has a gap after it
    return bp[first], pa[first] / total, pg[first][:-1] / total


def quantile_em_intervals(
    z: Any, *, q: float = 0.5, epsilon: float, lo: float, hi: float, theta: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints and log-scores ``ε·u/2`` of the open intervals of the (widened) quantile
    mechanism.

    Returns ``(breaks, log_scores)`` with ``len(breaks) == N + 2``: interval j (0-based) has
    j values of the (shifted) list at or below its left end and score
    ``−(ε/2)·⌊|j − N·q|⌋``.  The values themselves are outputs too, with their own score
    (module doc); :func:`quantile_em_law` gives the whole law.
    """
    arr, q, eps, lo, hi, th = _validate_quantile_args(z, q, epsilon, lo, hi, theta)
    breaks, scores = _intervals(arr[None, :], q, eps, lo, hi, th)
    return breaks[0], scores


def quantile_em_law(
    z: Any, *, q: float = 0.5, epsilon: float, lo: float, hi: float, theta: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact output law of :func:`exp_quantile`: ``(points, p_points, p_gaps)``.

    ``points`` are the distinct values among lo, the (shifted, clipped) values and hi, sorted;
    ``p_points[k] = P(output == points[k])`` and ``p_gaps[k] = P(points[k] < output <
    points[k + 1])``.  Inside a gap every double d has probability ∝ its rounding-cell length
    ω(d) (module doc).  Finite ``epsilon`` only.
    """
    arr, q, eps, lo, hi, th = _validate_quantile_args(z, q, epsilon, lo, hi, theta)
    if math.isinf(eps):
        raise InvalidInputError("quantile_em_law needs a finite epsilon")
    return _law_from_sorted(_shifted_sorted(arr, q, lo, hi, th), lo, hi, eps, q)


def quantile_em_probabilities(
    z: Any, *, q: float = 0.5, epsilon: float, lo: float, hi: float, theta: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Exact output distribution on intervals: ``(breaks, p)`` with the N + 2 breakpoints of
    :func:`quantile_em_intervals` and ``p[j] = P(breaks[j] <= output < breaks[j + 1])`` (the
    last interval closed at hi): each interval carries the value at its left end, so a value
    shared by several entries is counted once, in the last interval starting at it (the
    repeats are empty).  ``numpy.searchsorted(breaks, x, side="right") − 1`` (capped at N)
    bins draws the same way.  :func:`quantile_em_law` separates values from gaps."""
    arr, q, eps, lo, hi, th = _validate_quantile_args(z, q, epsilon, lo, hi, theta)
    if math.isinf(eps):
        raise InvalidInputError("quantile_em_probabilities needs a finite epsilon")
    s = _shifted_sorted(arr, q, lo, hi, th)
    points, p_points, p_gaps = _law_from_sorted(s, lo, hi, eps, q)
    breaks = np.concatenate(([lo], s, [hi]))
    p = np.zeros(breaks.size - 1)
    # interval of each point: the last breakpoint equal to it (hi: the last interval)
    j = np.minimum(np.searchsorted(breaks, points, side="right") - 1, breaks.size - 2)
    np.add.at(p, j, p_points)
    np.add.at(p, j[:-1], p_gaps)
    return breaks, p


def exact_quantile(z: Any, *, q: float = 0.5, lo: float | None = None,
                   hi: float | None = None) -> float:
    """Non-private counterpart: the q-quantile of z clipped to [lo, hi].

    q = ½ gives the usual median (average of the two middle values for even N); other q use the
    inverse empirical CDF (``numpy.quantile(..., method="inverted_cdf")``).
    """
    arr = np.asarray(z, dtype=np.float64)
    if lo is not None and hi is not None:
        arr = np.clip(arr, lo, hi)
    if arr.size == 0:
        raise InvalidInputError("z must be non-empty to take a quantile")
    if q == 0.5:
        return float(np.median(arr))
    return float(np.quantile(arr, q, method="inverted_cdf"))


def exp_quantile(
    z: Any, *, q: float = 0.5, epsilon: float, lo: float, hi: float, theta: float = 0.0,
    rng: Any = None, size: int | None = None,
) -> float | np.ndarray:
    """ε-DP q-quantile of ``z`` by the exponential mechanism over the doubles of [lo, hi]
    (θ > 0: widened).

    Guarantee: ε-DP (pure) when one value of ``z`` changes (change-one/replace-one); for θ = 0
    also under add/remove.  Utility ``−⌊max(0, #{z < d} − N·q, N·q − #{z <= d})⌋`` of an output
    double d (sensitivity 1), base measure the rounding cell of d (public); a tied quantile is
    released exactly as ε → ∞ (module doc).  If one data record affects k values of ``z``
    (e.g. k pairs in Theil-Sen), call with ε/k.  Sources: McSherry & Talwar 2007; Alabi et al.
    2022 Alg. 3; Sarathy & Vadhan 2025 Alg. 3.2.

    Parameters
    ----------
    z:
        The values (±inf allowed: clipped to the range, as in Sarathy & Vadhan's tie rule).
    q:
        Target quantile in [0, 1] (0.5: median).
    epsilon:
        Privacy parameter of this call.  ``inf`` returns :func:`exact_quantile` (not private).
    lo, hi:
        Public output range; values are clipped to it and the output lies in it.
    theta:
        Widening θ >= 0 (Sarathy & Vadhan's privacy-safe construction; 0 = standard mechanism).
    size:
        Optional number of i.i.d. draws (for experiments on a fixed dataset).
    """
    arr, q, eps, lo_, hi_, th = _validate_quantile_args(z, q, epsilon, lo, hi, theta)
    gen = check_rng(rng)
    if math.isinf(eps):
        warnings.warn("epsilon=inf: returning the exact (non-private) quantile",
                      PrivacyLeakWarning, stacklevel=2)
        value = exact_quantile(arr, q=q, lo=lo_, hi=hi_) if arr.size else 0.5 * (lo_ + hi_)
        return value if size is None else np.full(size, value)
    out = exp_quantile_rows(arr[None, :], q=q, epsilon=eps, lo=lo_, hi=hi_, theta=th, rng=gen,
                            draws_per_row=1 if size is None else size)
    return float(out[0]) if size is None else out


def _sample_sorted_numpy(b: np.ndarray, lo: float, hi: float, eps: float, q: float,
                         gen: np.random.Generator) -> float:
    """One draw of the mechanism on the sorted (shifted, clipped) ``b``: numpy's Gumbel draws
    over the N + 2 pieces (:func:`gumbel_max_index`), then the piece's value or gap."""
    la, lg = _value_log_weights(b, lo, hi, -(eps / 2.0), b.size * q, _all_pieces(b))
    lm = np.logaddexp(la, lg)
    i = gumbel_max_index(lm, gen)
    return _piece_value(b, lo, hi, i, float(la[i]), float(lm[i]), gen)


def _sample_sorted_many(b: np.ndarray, lo: float, hi: float, eps: float, q: float,
                        gen: np.random.Generator, size: int) -> np.ndarray:
    """``size`` i.i.d. draws on one sorted row from the normalised piece probabilities."""
    m = b.size
    la, lg = _value_log_weights(b, lo, hi, -(eps / 2.0), m * q, _all_pieces(b))
    lm = np.logaddexp(la, lg)
    p = np.exp(lm - np.max(lm))
    p /= p.sum()
    k = gen.choice(p.size, size=size, p=p)
    bp = np.concatenate(([lo], b, [hi]))
    out = bp[k].copy()
    gap = np.flatnonzero(~(gen.random(size) < np.exp(la[k] - lm[k])))
    if gap.size:
        a = bp[k[gap]]
        u_i = np.searchsorted(b, a, side="right")
        e = np.where(u_i < m, b[np.minimum(u_i, max(m - 1, 0))] if m else hi, hi)
        u = gen.uniform(a, e)
        bad = np.flatnonzero(~((u > a) & (u < e)))
        while bad.size:  # rounding put a draw on an end of its gap: redraw it
            u[bad] = gen.uniform(a[bad], e[bad])
            bad = bad[~((u[bad] > a[bad]) & (u[bad] < e[bad]))]
        out[gap] = u
    return out


def exp_quantile_rows(
    z: Any, *, q: float = 0.5, epsilon: float, lo: float, hi: float, theta: float = 0.0,
    rng: Any, draws_per_row: int = 1,
) -> np.ndarray:
    """The ε-DP (θ-widened) exponential-mechanism q-quantile of every row of ``z`` ((rows, N),
    ±inf allowed, clipped to [lo, hi]): row r is ``exp_quantile(z[r], ...)`` -- the same
    mechanism over the doubles of [lo, hi] and the same draws (Gumbel-max over the N + 2
    pieces), row after row from one Generator, or from row r's generator of a
    :class:`~dpreg.mechanisms.batch.RowRandomness`.  ``draws_per_row`` > 1 (one row only):
    that many i.i.d. draws for the one row (experiments on a fixed data set).  ``epsilon``
    must be finite (the mechanism's own ε, e.g. ε_t/(2k) for a Theil-Sen multiset).

    Guarantee per row (each a separate release): ε-DP (pure) when one value of the row changes
    (replace-one); θ = 0 also under add/remove.  Sources: McSherry & Talwar 2007; Alabi et al.
    2022 Alg. 3; Sarathy & Vadhan 2025 Alg. 3.2 (widening).  The one implementation:
    :func:`exp_quantile`, DP Theil-Sen (single fit and per group) and the reproduction harness
    call it (or :func:`exp_quantile_sorted`, the same sampler on a presorted row).
    """
    from dpreg.mechanisms.batch import RowRandomness

    arr = np.asarray(z, dtype=np.float64)
    if arr.ndim != 2:
        raise InvalidInputError(f"z must be a (rows, N) array; got {arr.ndim}-D")
    if arr.size and np.any(np.isnan(arr)):
        raise InvalidInputError("z must not contain NaN")
    if not math.isfinite(epsilon):
        raise InvalidInputError("exp_quantile_rows needs a finite epsilon (ε = ∞ is the exact "
                                "quantile, not a mechanism)")
    lo, hi, q, eps, th = float(lo), float(hi), float(q), float(epsilon), float(theta)
    if not lo < hi:  # the public range (a point range has no doubles to weigh)
        raise InvalidInputError(f"exp_quantile_rows needs lo < hi; got lo={lo!r}, hi={hi!r}")
    rows = arr.shape[0]
    if draws_per_row != 1:
        if rows != 1 or isinstance(rng, RowRandomness):
            raise InvalidInputError("draws_per_row > 1 needs a single row and one generator")
        b = _shifted_sorted(arr, q, lo, hi, th)[0]
        return _sample_sorted_many(b, lo, hi, eps, q, check_rng(rng), int(draws_per_row))
    srt = np.sort(np.clip(arr, lo, hi), axis=1)
    one = None if isinstance(rng, RowRandomness) else check_rng(rng)
    # exp_quantile_sorted: the compiled Gumbel-max pass where numba is installed (the same
    # pieces, the same draws from the same generator(s) and the same outputs, bit for bit,
    # without numpy's N + 2 Gumbel logarithms per row; measured: bench_harness), numpy's
    # otherwise
    return np.array([exp_quantile_sorted(srt[r], q=q, epsilon=eps, lo=lo, hi=hi, theta=th,
                                         rng=one if one is not None else rng.generator(r))
                     for r in range(rows)], dtype=np.float64)


# ----------------------------------------------------------------------------- presorted input
def _gumbel_keys_loop(b: np.ndarray, lo: float, hi: float, c: float, nq: float,
                      d: np.ndarray, keys: np.ndarray) -> float:  # pragma: no cover - numba
    """Approximate Gumbel-max keys of the N + 2 pieces of the quantile mechanism on the sorted
    (shifted) values ``b`` (breakpoints lo, b..., hi; piece i = the value of breakpoint i and
    the gap after it, as :func:`_value_log_weights`): key = log(value weight + gap weight) +
    (0 − log(−log(1 − d))) for the pieces of positive weight, −inf for the others (repeated
    values) and for those whose key is provably more than the tolerance below the running
    maximum; returns the largest.

    Skipping needs no logarithm per piece.  Bounds: ω(v) is at most the spacing of the doubles
    at the range's largest magnitude, a gap's weight at most the range's length (both logs
    computed once, with a margin for rounding) and at most 2^e_g with e_g the exponent of its
    computed length (rounding is monotone), the sum of two weights at most twice the larger,
    and G = −log(−log(1 − d)) <= −log d <= min(1/d − 1, (1 − e_d)·ln 2) for d in
    [2^(e_d−1), 2^e_d), since −log(1 − d) >= d and log x <= x − 1.  The pieces around the
    target rank are visited first, so the running maximum is near its final value before the
    scan and the cheapest bound settles almost every other piece."""
    m = b.size
    best = -np.inf
    ln2 = math.log(2.0)
    big = max(abs(lo), abs(hi))
    top_cell = math.log(np.nextafter(big, np.inf) - big) + 1e-9
    top_gap = math.log(hi - lo) + 1e-9 if hi > lo else -np.inf
    for t in range(m + 2):
        keys[t] = -np.inf
    # first pass: 64 pieces from about 32 ranks below the target (from the first occurrence of
    # that value); second pass: every piece (the first pass's are recomputed, same keys)
    start = 0
    if m:
        p = min(max(int(math.floor(nq)) - 32, 0), m - 1)
        while p > 0 and b[p - 1] == b[p]:
            p -= 1
        start = 0 if b[p] <= lo else p + 1
    for phase in range(2):
        i = start if phase == 0 else 0
        visited = 0
        while i <= m + 1 and (phase == 1 or visited < 64):
            visited += 1
            v = lo if i == 0 else (hi if i == m + 1 else b[i - 1])
            e = i  # the last breakpoint equal to v
            while e <= m:
                nxt = hi if e == m else b[e]
                if nxt > v:
                    break
                e += 1
            # L = #{b < v} = max(i − 1, 0), U = #{b <= v} = min(e, m)
            lower = float(i - 1) if i > 0 else 0.0
            upper = float(e) if e <= m else float(m)
            loss_v = math.floor(max(max(lower - nq, nq - upper), 0.0))
            gap = v < hi
            loss_g = math.floor(abs(upper - nq))
            thr = best - 1e-8 * (1.0 + abs(best))
            bound_v = top_cell + c * loss_v
            crude = (max(bound_v, top_gap + c * loss_g) if gap else bound_v) + ln2
            if crude < thr and crude + (1.0 / d[i] - 1.0) < thr:
                i = e + 1
                continue
            nxt = hi if e >= m else b[e]
            bound = bound_v
            if gap:
                # the binary exponent of the length (of d below): 2^(e − 1) <= x < 2^e, read
                # from the bits (x > 0; e of the smallest normal for a subnormal x)
                e_g = max(int((np.float64(nxt - v).view(np.int64) >> 52) & 0x7FF), 1) - 1022
                bound = max(bound, e_g * ln2 + c * loss_g)
            e_d = max(int((np.float64(d[i]).view(np.int64) >> 52) & 0x7FF), 1) - 1022
            if bound + ln2 + (1 - e_d) * ln2 >= thr:
                up = np.nextafter(v, np.inf)
                span = min(up, hi) - max(np.nextafter(v, -np.inf), lo)  # 2ω(v) > 0
                la = math.log(span) - _LN2 + c * loss_v
                lg = -np.inf
                if gap:
                    width = (nxt - v) - ((up - v) + (nxt - np.nextafter(nxt, -np.inf))) * 0.5
                    if width > 0:
                        lg = math.log(width) + c * loss_g
                if la == -np.inf:
                    lm = lg
                elif lg == -np.inf:
                    lm = la
                else:
                    lm = max(la, lg) + math.log1p(math.exp(-abs(la - lg)))
                if lm > -np.inf:
                    k = lm + (0.0 - math.log(-math.log(1.0 - d[i])))
                    keys[i] = k
                    if k > best:
                        best = k
            i = e + 1
    return best


@functools.cache
def _gumbel_keys_nb() -> Any:
    """:func:`_gumbel_keys_loop` compiled by numba on first use (None without numba)."""
    if os.environ.get("DPREG_DISABLE_NUMBA"):
        return None
    try:
        import numba
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return numba.njit(cache=os.path.isfile(__file__), nogil=True)(_gumbel_keys_loop)


def _uniforms_as_gumbel(gen: np.random.Generator, size: int) -> np.ndarray:
    """The ``size`` doubles d that ``gen.gumbel(size=size)`` turns into its draws
    −log(−log(1 − d)) (numpy draws d = next_double and redraws d = 0), advancing ``gen``
    exactly as that call does."""
    d = gen.random(size)
    while not d.all():  # probability ~size·2^-53
        d = d[d != 0]
        more = gen.random(size - d.size)
        d = np.concatenate((d, more))
    return d


def exp_quantile_sorted(
    s: np.ndarray, *, q: float = 0.5, epsilon: float, lo: float, hi: float, theta: float = 0.0,
    rng: np.random.Generator,
) -> float:
    """:func:`exp_quantile` of a multiset given already clipped to [lo, hi] and sorted
    (``s = np.sort(np.clip(z, lo, hi))``): the same mechanism, the same draws from ``rng`` and
    the same output, bit for bit, for finite ``epsilon`` (validated by the caller; ``rng`` a
    Generator).

    Gumbel-max (:func:`gumbel_max_index`) picks argmax_i log-weight_i + G_i over the N + 2
    pieces (each value with the gap after it, :func:`_value_log_weights`).  Here the N + 2
    uniforms behind ``rng.gumbel`` are drawn (the same stream) and a compiled pass computes
    every key approximately -- skipping the repeated values of tied data (weight 0, never
    chosen) and, without a logarithm, the pieces whose key is provably below the running
    maximum; the few keys within 1e-8·(1 + |max|) of the largest (the approximation errs by
    < 1e-11 there) are recomputed exactly as numpy computes them (:func:`_few_log_weights`:
    the floats of :func:`_value_log_weights`; then ``numpy.logaddexp``, plus libm's
    −log(−log(U)) as in numpy's Gumbel sampler) and the first largest is taken, so the piece
    is the one :func:`gumbel_max_index` returns.  Then one
    uniform chooses the value or the gap, and a gap is ``rng.uniform`` inside it
    (:func:`_piece_value`, shared with the numpy path).  Without numba: numpy's Gumbel draws
    on every piece.

    Guarantee: that of :func:`exp_quantile` (ε-DP under change-one of the multiset; θ = 0 also
    add/remove).  Sources: McSherry & Talwar 2007; Alabi et al. 2022 Alg. 3; Sarathy & Vadhan
    2025 Alg. 3.2.
    """
    lo, hi, q = float(lo), float(hi), float(q)
    b = np.ascontiguousarray(s, dtype=np.float64)
    n = b.size
    if theta > 0 and n:
        b = b.copy()
        k0 = int(math.floor(n * q))
        b[:k0] = np.clip(b[:k0] - theta, lo, hi)
        b[k0:] = np.clip(b[k0:] + theta, lo, hi)
    kernel = _gumbel_keys_nb()
    if kernel is None:
        return _sample_sorted_numpy(b, lo, hi, float(epsilon), q, rng)
    c = -(float(epsilon) / 2.0)
    nq = n * q
    d = _uniforms_as_gumbel(rng, n + 2)
    keys = np.empty(n + 2)
    best = float(kernel(b, lo, hi, c, nq, d, keys))
    cand = np.flatnonzero(keys >= best - 1e-8 * (1.0 + abs(best))).tolist()
    # exactly as numpy: the log-weights, plus the Gumbel draw loc − scale·log(−log(U)) with
    # U = 1 − d (libm's log, as math.log)
    la, lg = _few_log_weights(b, lo, hi, c, nq, cand)
    lm = np.logaddexp(la, lg)
    exact = [float(lm[j]) + (0.0 - 1.0 * math.log(-math.log(1.0 - float(d[t]))))
             for j, t in enumerate(cand)]
    j = max(range(len(exact)), key=exact.__getitem__)  # the first largest, as np.argmax
    return _piece_value(b, lo, hi, cand[j], float(la[j]), float(lm[j]), rng)


# ------------------------------------------------------------------ envelope rejection sampling
# The draws of the exact O(n log n) all-pairs sampler (:mod:`dpreg.simple.fast`): that sampler
# computes the envelope (blocks of doubles with bounds on their rank loss) from the pair
# counts; the random choices it makes are these functions' (release noise is drawn in
# :mod:`dpreg.mechanisms` only).


def envelope_block(log_weights: np.ndarray, rng: np.random.Generator) -> int:
    """The proposal step of a rejection sampler of the exponential mechanism over blocks of
    outcomes: block m with probability ∝ exp(log_weights[m]) (inverse-CDF on the cumulative
    weights scaled by their maximum: one uniform from ``rng``).  ``rng`` must already be a
    Generator.  Exactness of the final law comes from :func:`envelope_accept` (the proposal
    only has to dominate the target)."""
    lw = np.asarray(log_weights, dtype=np.float64)
    cum = np.cumsum(np.exp(lw - np.max(lw)))
    m = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
    return min(m, cum.size - 1)


def envelope_accept(log_ratio: float, rng: np.random.Generator) -> bool:
    """The acceptance step of a rejection sampler: True with probability exp(log_ratio)
    (``log_ratio`` <= 0: the target weight over the envelope weight of the proposed outcome,
    e.g. −ε·(loss − block's least loss) for the exponential mechanism); one uniform from
    ``rng``.  Together with :func:`envelope_block` and :func:`uniform_integer` (the outcome
    inside the block) the accepted draws follow the target law exactly."""
    return bool(rng.random() < math.exp(log_ratio))


def uniform_integer(m: int, rng: np.random.Generator) -> int:
    """A uniform integer in [0, m) for any integer m >= 1, exactly (Python integers: 62-bit
    chunks from ``rng`` and rejection above 2^62) -- the uniform choice of an outcome inside
    a block of a rejection sampler (:func:`envelope_block`)."""
    if m <= 2 ** 62:
        return int(rng.integers(m))
    bits = m.bit_length()
    chunks = -(-bits // 62)
    while True:
        k = 0
        for c in rng.integers(0, 2 ** 62, size=chunks):
            k = (k << 62) | int(c)
        k >>= chunks * 62 - bits
        if k < m:
            return k


def random_ordered_pairs(n: int, m: int, rng: np.random.Generator
                         ) -> tuple[np.ndarray, np.ndarray]:
    """``m`` ordered pairs (i, j) of distinct indices in [0, n), each uniform and independent
    (n >= 2): the data-independent sample a rejection sampler over pairwise values uses to
    place its block boundaries -- it changes the running time, never the law of the output.
    Two arrays of draws from ``rng`` (i, then j)."""
    i = rng.integers(0, n, size=m)
    j = rng.integers(0, n - 1, size=m)
    return i, j + (j >= i)
