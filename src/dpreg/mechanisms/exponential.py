"""Exponential mechanism on a real interval and DP quantiles (standard and θ-widened).

Sampling.  Given breakpoints ``lo = b_0 <= b_1 <= ... <= b_K = hi`` and a
score ``w_j`` constant on each interval ``I_j = (b_j, b_{j+1})``, the mechanism outputs a value
with density proportional to ``exp(w_j)`` on ``I_j``.  It is sampled exactly by Gumbel-max:
``j* = argmax_j [ln|I_j| + w_j + G_j]`` with i.i.d. standard Gumbel ``G_j`` (zero-length
intervals have ``ln 0 = −∞`` and are never chosen), then a uniform draw from ``I_{j*}``.

DP quantile (McSherry & Talwar 2007; Smith 2011; Alabi et al. 2022 Alg. 3; Sarathy & Vadhan
2025 Alg. 3.2).  For a multiset ``z`` of N values clipped to ``[lo, hi]`` and a target quantile q,
the utility of an output r is ``u(r) = −⌊|c(r) − N·q|⌋`` where ``c(r)`` counts the values below
r.  Changing one value changes c(r) by at most one, so Δu = 1 and sampling with density
∝ exp(ε·u(r)/2) is **ε-DP (pure) under change-one (replace-one) neighbours of the multiset**;
it is also ε-DP under add/remove because N·q moves by q <= 1 while c moves by at most 1 in the
same direction.  (The paper's utility −|#above − #below| has sensitivity 2 and yields the same
distribution as the rung form for q = ½.)

θ-widened quantile (Sarathy & Vadhan 2025 §3, the privacy-safe construction; replaces Alabi et
al.'s Alg. 5).  Sort z, move the lowest ``k0 = ⌊N·q⌋`` values down by θ and the others up by θ
(clipping to ``[lo, hi]``), and use the same rung on the shifted list.  With
``A = #{z < r + θ}`` and ``B = #{z < r − θ}`` the shifted count is
``c_θ(r) = min(k0, A) + max(0, B − k0)``.  Under change-one, A and B move by at most one and
the two terms cannot both move (that would need ``A < k0 < B``, impossible as ``B <= A``), so
``Δu = 1`` and the widened mechanism is **ε-DP under change-one neighbours** (N, hence k0,
is fixed).  On tie-free data it equals the widened utility
``−⌊min_{|w−r|<=θ} |#{z <= w} − N·q|⌋``: every output within θ of the quantile gets the top
score, which concentrates the output when the data are concentrated.

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
    "quantile_em_probabilities",
    "exp_quantile",
    "exp_quantile_rows",
    "exp_quantile_sorted",
    "exact_quantile",
    "gumbel_max_index",
]


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
    """Breakpoints (rows, N + 2) and log-scores (N + 1,) of the (widened) quantile mechanism
    for every row of ``z`` ((rows, N)): interval j has j values of the (shifted) row below it
    and score −(ε/2)·⌊|j − N·q|⌋."""
    s = _shifted_sorted(z, q, lo, hi, theta)
    rows, n = s.shape
    breaks = np.concatenate((np.full((rows, 1), lo), s, np.full((rows, 1), hi)), axis=1)
    rung = np.floor(np.abs(np.arange(n + 1, dtype=np.float64) - n * q))
    return breaks, -(eps / 2.0) * rung


def quantile_em_intervals(
    z: Any, *, q: float = 0.5, epsilon: float, lo: float, hi: float, theta: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints and log-scores ``ε·u/2`` of the (widened) quantile mechanism.

    Returns ``(breaks, log_scores)`` with ``len(breaks) == N + 2``: interval j (0-based) has
    j values of the (shifted) list below it and score ``−(ε/2)·⌊|j − N·q|⌋``.
    """
    arr, q, eps, lo, hi, th = _validate_quantile_args(z, q, epsilon, lo, hi, theta)
    breaks, scores = _intervals(arr[None, :], q, eps, lo, hi, th)
    return breaks[0], scores


def quantile_em_probabilities(
    z: Any, *, q: float = 0.5, epsilon: float, lo: float, hi: float, theta: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Exact output distribution: ``(breaks, p)`` with p[j] = P(output in interval j)."""
    breaks, scores = quantile_em_intervals(z, q=q, epsilon=epsilon, lo=lo, hi=hi, theta=theta)
    with np.errstate(divide="ignore"):
        logw = np.log(np.diff(breaks)) + scores
    p = np.exp(logw - np.max(logw))
    return breaks, p / p.sum()


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
    """ε-DP q-quantile of ``z`` by the exponential mechanism (θ > 0: widened).

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

    Guarantee: ε-DP (pure) when one value of ``z`` changes (change-one/replace-one); for θ = 0
    also under add/remove.  If one data record affects k values of ``z`` (e.g. k pairs in
    Theil-Sen), call with ε/k.  Sources: Alabi et al. 2022 Alg. 3; Sarathy & Vadhan 2025 Alg. 3.2.
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


def exp_quantile_rows(
    z: Any, *, q: float = 0.5, epsilon: float, lo: float, hi: float, theta: float = 0.0,
    rng: Any, draws_per_row: int = 1,
) -> np.ndarray:
    """The ε-DP (θ-widened) exponential-mechanism q-quantile of every row of ``z`` ((rows, N),
    ±inf allowed, clipped to [lo, hi]): row r is ``exp_quantile(z[r], ...)`` -- the same
    intervals and the same draws (Gumbel-max, :func:`sample_piecewise_constant`), row after
    row from one Generator, or from row r's generator of a
    :class:`~dpreg.mechanisms.batch.RowRandomness`.  ``draws_per_row`` > 1 (one row only):
    that many i.i.d. draws for the one row (experiments on a fixed data set).  ``epsilon``
    must be finite (the mechanism's own ε, e.g. ε_t/(2k) for a Theil-Sen multiset).

    Guarantee per row (each a separate release): ε-DP (pure) when one value of the row changes
    (replace-one); θ = 0 also under add/remove.  Sources: McSherry & Talwar 2007; Alabi et al.
    2022 Alg. 3; Sarathy & Vadhan 2025 Alg. 3.2 (widening).  The one implementation:
    :func:`exp_quantile`, DP Theil-Sen (single fit and per group) and the reproduction harness
    call it.
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
    if draws_per_row == 1 and float(hi) > float(lo) and _gumbel_keys_nb() is not None:
        # the compiled Gumbel-max pass of exp_quantile_sorted: the same intervals, the same
        # draws from the same generator(s) and the same outputs, bit for bit, without numpy's
        # N + 1 Gumbel logarithms per row (measured: bench_harness)
        srt = np.sort(np.clip(arr, float(lo), float(hi)), axis=1)
        one = None if isinstance(rng, RowRandomness) else check_rng(rng)
        return np.array([exp_quantile_sorted(srt[r], q=float(q), epsilon=float(epsilon),
                                             lo=float(lo), hi=float(hi), theta=float(theta),
                                             rng=one if one is not None else rng.generator(r))
                         for r in range(arr.shape[0])], dtype=np.float64)
    breaks, scores = _intervals(arr, float(q), float(epsilon), float(lo), float(hi),
                                float(theta))
    rows = breaks.shape[0]
    if draws_per_row != 1:
        if rows != 1 or isinstance(rng, RowRandomness):
            raise InvalidInputError("draws_per_row > 1 needs a single row and one generator")
        return np.asarray(sample_piecewise_constant(breaks[0], scores, rng=rng,
                                                    size=draws_per_row))
    if isinstance(rng, RowRandomness):
        return np.array([sample_piecewise_constant(breaks[r], scores, rng=rng.generator(r))
                         for r in range(rows)], dtype=np.float64)
    gen = check_rng(rng)
    return np.array([sample_piecewise_constant(breaks[r], scores, rng=gen) for r in range(rows)],
                    dtype=np.float64)


# ----------------------------------------------------------------------------- presorted input
def _gumbel_keys_loop(b: np.ndarray, lo: float, hi: float, c: float, nq: float,
                      d: np.ndarray, keys: np.ndarray) -> float:  # pragma: no cover - numba
    """Approximate Gumbel-max keys of the quantile mechanism on the sorted (shifted) values
    ``b`` (breakpoints lo, b..., hi): key_j = (log|I_j| + c·⌊|j − N·q|⌋) + (0 − log(−log(1 −
    d_j))) for intervals of positive length, −inf for the others and for those whose key is
    provably more than the tolerance below the running maximum (G = −log(−log(1 − d)) <=
    −log d <= (1 − e)·ln 2 for d in [2^(e−1), 2^e), since −log(1 − d) >= d: a bound without
    the two logarithms); returns the largest."""
    m = b.size
    best = -np.inf
    ln2 = math.log(2.0)
    for j in range(m + 1):
        a = lo if j == 0 else b[j - 1]
        e = hi if j == m else b[j]
        length = e - a
        keys[j] = -np.inf
        if length > 0:
            base = math.log(length) + c * math.floor(abs(float(j) - nq))
            ub = base + (1 - math.frexp(d[j])[1]) * ln2
            if ub < best - 1e-8 * (1.0 + abs(best)):
                continue
            k = base + (0.0 - math.log(-math.log(1.0 - d[j])))
            keys[j] = k
            if k > best:
                best = k
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

    Gumbel-max (:func:`gumbel_max_index`) picks argmax_j log-weight_j + G_j over the N + 1
    intervals.  Here the N + 1 uniforms behind ``rng.gumbel`` are drawn (the same stream) and
    a compiled pass computes every key approximately -- skipping the zero-length intervals of
    the doubled multisets (weight 0, never chosen); the few keys within 1e-8·(1 + |max|) of the
    largest (the approximation errs by < 1e-11 there) are recomputed exactly as numpy computes
    them (``np.log`` of the lengths plus the score, plus libm's −log(−log(U)) as in numpy's
    Gumbel sampler) and the first largest is taken, so the index is the one
    :func:`gumbel_max_index` returns.  The value is then ``rng.uniform`` on that interval, as
    in :func:`sample_piecewise_constant`.  Without numba: :func:`exp_quantile_rows`.

    Guarantee: that of :func:`exp_quantile` (ε-DP under change-one of the multiset; θ = 0 also
    add/remove).  Sources: McSherry & Talwar 2007; Alabi et al. 2022 Alg. 3; Sarathy & Vadhan
    2025 Alg. 3.2.
    """
    kernel = _gumbel_keys_nb()
    lo, hi, q = float(lo), float(hi), float(q)
    if kernel is None:  # pragma: no cover - without numba
        return float(exp_quantile_rows(np.asarray(s)[None, :], q=q, epsilon=epsilon, lo=lo,
                                       hi=hi, theta=theta, rng=rng)[0])
    b = np.ascontiguousarray(s, dtype=np.float64)
    n = b.size
    if theta > 0 and n:
        b = b.copy()
        k0 = int(math.floor(n * q))
        b[:k0] = np.clip(b[:k0] - theta, lo, hi)
        b[k0:] = np.clip(b[k0:] + theta, lo, hi)
    c = -(float(epsilon) / 2.0)
    nq = n * q
    d = _uniforms_as_gumbel(rng, n + 1)
    keys = np.empty(n + 1)
    best = float(kernel(b, lo, hi, c, nq, d, keys))
    cand = np.flatnonzero(keys >= best - 1e-8 * (1.0 + abs(best)))
    # the candidates' interval ends (the breakpoints lo, b..., hi without building them)
    if n:
        left = np.where(cand == 0, lo, b[np.maximum(cand - 1, 0)])
        right = np.where(cand == n, hi, b[np.minimum(cand, n - 1)])
    else:
        left, right = np.full(cand.size, lo), np.full(cand.size, hi)
    # exactly as numpy: log-weight (np.log of the lengths + the score), plus the Gumbel draw
    # loc − scale·log(−log(U)) with U = 1 − d (libm's log, as math.log)
    lw = np.log(right - left) + c * np.floor(np.abs(cand.astype(np.float64) - nq))
    exact = [float(lw[i]) + (0.0 - 1.0 * math.log(-math.log(1.0 - float(d[j]))))
             for i, j in enumerate(cand.tolist())]
    i = int(np.argmax(exact))
    return float(rng.uniform(left[i], right[i]))
