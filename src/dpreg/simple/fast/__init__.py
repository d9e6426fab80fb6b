"""Exact all-pairs DP Theil-Sen in O(n log n) time and O(n) memory.

The materialising implementation builds all n(n−1)/2 pairwise estimates (slopes, or
predictions at ``x_eval``), doubles them with the ±∞ tie convention and runs the
exponential-mechanism median on the 2·n_pairs entries: O(n²) memory and O(n² log n) time.
This package produces **exactly the same output distribution** from rank counts alone:

* :class:`PairCounter` -- ``count(r) = #{untied pairs with estimate < r}`` in O(n log n)
  (inversion counting; predictions reduce to slopes by a projective transform), exact with
  respect to the floating-point pair values of the materialising code;
* :func:`dp_median_all_pairs` -- the exponential-mechanism (θ = 0) or widened (θ > 0)
  median of the doubled, clipped multiset, sampled exactly by rejection from a provable
  piecewise-constant envelope whose blocks are found by rank bisection;
* :func:`all_pairs_median` / :func:`pair_order_statistic` -- the exact non-private
  all-pairs median (Theil-Sen) and any order statistic (slope selection).

Privacy: identical to :func:`dpreg.simple.theil_sen` (the same mechanism, sampled exactly):
ε-DP (pure) under replace-one neighbours with n public; one record changes at most 2(n − 1)
entries of the doubled multiset, the rank utility has sensitivity 1 per entry, and the
mechanism runs at ε_t/(2(n − 1)).  Sources: Alabi et al. 2022 (§6.2, Alg. 3); Sarathy &
Vadhan 2025 (Alg. 3.1-3.2); rank counting by inversions as in exact slope selection (Cole,
Salowe, Steiger & Szemerédi 1989; Matoušek 1991).  See docs/scale.md for the reductions and
the exactness argument.

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
from dpreg.simple.fast._kernels import HAVE_NUMBA, resolve_backend
from dpreg.simple.fast._oracle import PairCounter
from dpreg.simple.fast._sampler import AllPairsEM, order_statistic

__all__ = [
    "HAVE_NUMBA",
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
    backend: str = "auto", counter: PairCounter | None = None,
) -> Any:
    """Exponential-mechanism median of all pairwise estimates, without materialising them.

    Exactly the output distribution of ``exp_quantile(doubled, epsilon=epsilon, lo=lo,
    hi=hi, theta=theta)`` on the doubled multiset of all pairs (``dpreg.simple.pairs.
    doubled_pair_values``).  ``epsilon`` is the mechanism's ε on that multiset (DP Theil-Sen
    uses ε_t/(2(n − 1))); ``size`` draws i.i.d. values.  ``counter`` reuses a prepared
    :class:`PairCounter` for the same data.

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
    pc = counter if counter is not None else pair_counter(x, y, estimand=estimand,
                                                          x_eval=x_eval, backend=backend)
    gen = check_rng(rng)
    if math.isinf(eps):
        value = all_pairs_median(counter=pc, lo=lo_, hi=hi_)
        return value if size is None else np.full(int(size), value)
    em = AllPairsEM(pc, epsilon=eps, lo=lo_, hi=hi_, theta=th, rng=gen)
    return em.sample(None if size is None else int(size))


def pair_order_statistic(x: Any = None, y: Any = None, k: int = 1, *, estimand: str = "slope",
                         x_eval: float | None = None, backend: str = "auto",
                         counter: PairCounter | None = None) -> float:
    """The k-th smallest (1-based) pairwise estimate among pairs with distinct x, computed
    with the materialising code's floating-point formula (slope selection in O(n log n)
    per search step).  Not private."""
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

    Equals ``numpy.median`` of the doubled multiset (clipped to [lo, hi] when given), i.e.
    the median of the estimates of the pairs with distinct x -- computed in O(n log n) per
    search step without materialising the pairs.  NOT private.
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
