"""Exact all-pairs DP Theil-Sen in O(n log n) time and O(n) memory, whatever the data.

The materialising implementation builds all n(n−1)/2 pairwise estimates (slopes, or
predictions at ``x_eval``), doubles them with the ±∞ tie convention and runs the
exponential-mechanism median on the 2·n_pairs entries: O(n²) memory and O(n² log n) time.
This package samples the same mechanism on the same multiset -- with each pairwise value
computed *exactly* (rational arithmetic on the float inputs) and rounded once to the nearest
double, instead of by the floating-point formula -- from rank counts alone:

* :class:`PairCounter` -- ``count(t) = #{untied pairs with exact value < t}`` in O(n log n)
  (inversion counting of exact keys; predictions reduce to slopes by a projective
  transform), for any threshold t that is a short sum of doubles;
* :func:`dp_median_all_pairs` -- the exponential-mechanism (θ = 0) or widened (θ > 0)
  median over the doubles of the output range (:mod:`dpreg.mechanisms.exponential`) of the
  doubled, clipped multiset, sampled exactly by rejection from a provable piecewise-constant
  envelope whose blocks are found by rank bisection; a proposal is a cell of a 106-bit grid
  drawn ∝ its length, i.e. a double drawn ∝ its rounding-cell length;
* :func:`all_pairs_median` / :func:`pair_order_statistic` -- the exact non-private
  all-pairs median (Theil-Sen) and any order statistic (slope selection) of the same rounded
  values, so the mechanism's ε → ∞ limit on a tied median is exactly this median.

Exact values rather than the float formula's: the rounding of ``((x_b − x₀)·y_a + (x₀ −
x_a)·y_b)/(x_b − x_a)`` depends on the low-order bits of both points, so for degenerate data (y
an exact linear function of x, constant y, duplicated points) whether a pair falls below a
threshold cannot be decided without evaluating every pair -- the exact-fast path used to take
O(n²) per count there and never finished. Exact values are decided for all pairs at once and
rounded once (correctly) to the nearest double. They differ from the float formula's by
rounding only, so on ordinary data the two paths' laws agree up to rounding of the pair values;
where many pair values coincide (within a few units in the last place) the two can differ in
which doubles carry the tied values' mass (docs/simple.md, "Degenerate data"). The running time
is bounded by a function of n: O(n log n) per rank count, and the number of counts is bounded
by the resolution of doubles (the sampler cuts every block down to one double after a bounded
number of steps).

Privacy: identical to :func:`dpreg.simple.theil_sen` (the same mechanism, sampled exactly):
ε-DP (pure) under replace-one neighbours with n public; the pair value is a fixed function of
the pair's two points, so one record changes at most 2(n − 1) entries of the doubled multiset,
the rank utility has sensitivity 1 per entry, and the mechanism runs at ε_t/(2(n − 1)).
Sources: Alabi et al. 2022 (§6.2, Alg. 3); Sarathy & Vadhan 2025 (Alg. 3.1-3.2); rank
counting by inversions as in exact slope selection (Cole, Salowe, Steiger & Szemerédi 1989;
Matoušek 1991); error-free transformations (Dekker 1971; Shewchuk 1997; Ogita, Rump & Oishi
2005).  See docs/scale.md for the reductions and the exactness argument.

The counting kernel uses numba when it is installed (``pip install 'dpreg[fast]'``) and a
pure-NumPy implementation otherwise (``backend="numpy"``); both give identical counts.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpreg._validation import check_bounds, check_epsilon, check_positive, check_rng
from dpreg.exceptions import InvalidInputError
from dpreg.simple._common import check_choice, check_simple_xy
from dpreg.simple.fast._kernels import HAVE_NUMBA, jit_on_first_use, resolve_backend
from dpreg.simple.fast._oracle import PairCounter
from dpreg.simple.fast._sampler import AllPairsEM, order_statistic

__all__ = [
    "HAVE_NUMBA",
    "jit_on_first_use",
    "PairCounter",
    "AllPairsEM",
    "pair_counter",
    "dp_median_all_pairs",
    "all_pairs_median",
    "pair_order_statistic",
]


def pair_counter(x: Any, y: Any, *, estimand: str = "slope", x_eval: float | None = None,
                 backend: str = "auto") -> PairCounter:
    """Validated :class:`PairCounter` for the data (see the module doc)."""
    xa, ya = check_simple_xy(x, y, min_rows=2)
    est = check_choice(estimand, "estimand", ("slope", "predictions"))
    resolve_backend(backend)
    if est == "predictions":
        if x_eval is None or isinstance(x_eval, bool) or not math.isfinite(float(x_eval)):
            raise InvalidInputError(
                f"x_eval must be a finite number for estimand='predictions'; got {x_eval!r}")
        return PairCounter(xa, ya, estimand=est, x_eval=float(x_eval), backend=backend)
    return PairCounter(xa, ya, estimand=est, backend=backend)


def dp_median_all_pairs(
    x: Any, y: Any, *, epsilon: float, lo: float, hi: float, estimand: str = "slope",
    x_eval: float | None = None, theta: float = 0.0, rng: Any = None, size: int | None = None,
    backend: str = "auto", counter: PairCounter | None = None, q: float = 0.5,
) -> Any:
    """Exponential-mechanism median (or ``q``-quantile) of all pairwise estimates, without
    materialising them.

    An exact sample of ``exp_quantile(doubled, q=q, epsilon=epsilon, lo=lo, hi=hi,
    theta=theta)`` (the mechanism over the doubles of [lo, hi]) on the doubled multiset of all
    pairs with their *exact* values rounded to the nearest double
    (:func:`dpreg.simple.fast._reference.exact_em_law`; the widening shifts exact).
    ``epsilon`` is the mechanism's ε on that
    multiset (DP Theil-Sen uses ε_t/(2(n − 1))); ``size`` draws i.i.d. values.  ``counter``
    reuses a prepared :class:`PairCounter` for the same data.  ``q`` (public, in [0, 1]) is
    the target quantile (default ½; the Theil-Sen interval's ends use others).  Time: O(n log n) per rank
    count, bounded in n whatever the data (ties, collinear or constant columns).

    Guarantee: ε-DP for the multiset under change-one of an entry; as a Theil-Sen release at
    ε_t/(2(n − 1)) it is ε_t-DP under replace-one neighbours of the records (n public).
    Sensitivity: the rank utility changes by at most 1 per changed entry.  Sources: Alabi et
    al. 2022 Alg. 3; Sarathy & Vadhan 2025 Alg. 3.1-3.2.
    """
    eps = check_epsilon(epsilon)
    lo_, hi_ = check_bounds((lo, hi), "(lo, hi)")
    th = check_positive(theta, "theta", allow_zero=True)
    if th >= hi_ - lo_ and th > 0:
        raise InvalidInputError(f"theta must be smaller than the range width {hi_ - lo_:g}; "
                                f"got {th!r}")
    if size is not None and (isinstance(size, bool) or int(size) != size or size < 1):
        raise InvalidInputError(f"size must be a positive integer or None; got {size!r}")
    if (isinstance(q, bool) or not isinstance(q, (int, float, np.integer, np.floating))
            or not 0.0 <= float(q) <= 1.0):
        raise InvalidInputError(f"q must be a real number with 0 <= q <= 1; got {q!r}")
    pc = counter if counter is not None else pair_counter(x, y, estimand=estimand,
                                                          x_eval=x_eval, backend=backend)
    gen = check_rng(rng)
    if math.isinf(eps):
        if float(q) != 0.5:
            raise InvalidInputError("epsilon=inf (the exact quantile) is only provided for the "
                                    f"median q=0.5 here; got q={q!r}")
        value = all_pairs_median(counter=pc, lo=lo_, hi=hi_)
        return value if size is None else np.full(int(size), value)
    em = AllPairsEM(pc, epsilon=eps, lo=lo_, hi=hi_, theta=th, rng=gen, q=float(q))
    return em.sample(None if size is None else int(size))


def pair_order_statistic(x: Any = None, y: Any = None, k: int = 1, *, estimand: str = "slope",
                         x_eval: float | None = None, backend: str = "auto",
                         counter: PairCounter | None = None) -> float:
    """The k-th smallest (1-based) exact pairwise estimate among pairs with distinct x,
    rounded to the nearest double (slope selection in O(n log n) per search step).  Not
    private."""
    pc = counter if counter is not None else pair_counter(x, y, estimand=estimand,
                                                          x_eval=x_eval, backend=backend)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= pc.n_untied:
        raise InvalidInputError("k must be an integer between 1 and the number of pairs with "
                                f"distinct x; got {k!r}")
    return order_statistic(pc, int(k))


def all_pairs_median(x: Any = None, y: Any = None, *, estimand: str = "slope",
                     x_eval: float | None = None, lo: float | None = None,
                     hi: float | None = None, backend: str = "auto",
                     counter: PairCounter | None = None) -> float:
    """The exact (non-private) Theil-Sen median of all pairwise estimates.

    Equals ``numpy.median`` of the doubled multiset of the exact pair values rounded to
    doubles (clipped to [lo, hi] when given), i.e. the median of the estimates of the pairs
    with distinct x -- computed in O(n log n) per search step without materialising the
    pairs.  NOT private.
    """
    pc = counter if counter is not None else pair_counter(x, y, estimand=estimand,
                                                          x_eval=x_eval, backend=backend)
    clip = lo is not None and hi is not None
    if clip:
        lo, hi = check_bounds((lo, hi), "(lo, hi)")
    u = pc.n_untied
    if u == 0:
        if not clip:
            raise InvalidInputError("every pair has tied x: the Theil-Sen estimate is undefined")
        return float(np.mean(np.array([lo, hi])))
    ka, kb = (u - 1) // 2 + 1, u // 2 + 1
    va = order_statistic(pc, ka)
    vb = va if kb == ka else order_statistic(pc, kb)
    pair = np.array([va, vb])
    if clip:
        pair = np.clip(pair, lo, hi)
    return float(np.mean(pair))
