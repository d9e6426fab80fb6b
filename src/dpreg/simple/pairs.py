"""Pair designs, pairwise estimates and the null variance of the Theil-Sen U-statistic.

Pair designs (Alabi et al. 2022 §6.2 and App. C; Sarathy & Vadhan 2025 Alg. 3.1)
---------------------------------------------------------------------------------
A design S is a set of unordered index pairs chosen **without looking at the data**.  Its
degree k is the largest number of pairs any index belongs to: changing one record changes at
most k pairwise values (the transformation data -> estimates is k-Lipschitz).

* ``"all"``: every pair (k = n − 1), built with :func:`numpy.triu_indices`.
* ``k`` matchings: k distinct rounds of the circle (round-robin) 1-factorisation of K_n on a
  uniformly random relabelling of the indices.  For even n the n − 1 rounds are perfect
  matchings; for odd n there are n rounds of (n − 1)/2 pairs and each round leaves one index
  out.  Rounds never repeat a pair.  The relabelling permutation and the choice of rounds
  are data-independent randomness (drawn from the caller's generator).

Tie convention (Sarathy & Vadhan §3)
------------------------------------
Every pair contributes **two** entries to the multiset passed to the DP median: its value
twice when x_i ≠ x_j, and −∞ and +∞ when x_i = x_j (the entries are clipped to the public
output range by the median).  The multiset always has exactly 2|S| entries, whatever the data,
and changing one record changes at most 2k of them.  Without ties this multiset is the
undoubled multiset with every rank distance doubled, so an exponential-mechanism median on
it at ε/(2k) has exactly the distribution of the undoubled median at ε/k.

Null variance of the U-statistic (Sarathy & Vadhan App. B.1, corrected by dpreg)
-------------------------------------------------------------------------------------------
U(β) = (1/|S|) Σ_{pairs, x_i≠x_j} sign(s_ij − β).  At the true slope, with i.i.d. continuous
symmetric errors, two pairs sharing exactly one index a (other ends b, c) have covariance
sign(x_b − x_a)·sign(x_c − x_a)/3, disjoint pairs are independent, so

    Var(U₀) = #untied/|S|² + (1/(3|S|²)) Σ_a [(Σ_b s_ab)² − Σ_b s_ab²]

with s_ab = sign(x_b − x_a) (``null_variance_exact``).  It depends on the private x, so DP
intervals use a data-independent bound: ``null_variance_max``, the maximum of the exact value
over every x.  For a general design that is bounded by ``null_variance_bound`` = 1/|S| +
#(ordered pairs of S sharing exactly one index)/(3|S|²) (|Σ_b s_ab| <= deg(a)), which only
needs S.  For the complete design the maximum is Kendall's 2(2n+5)/(9n(n−1))
(``kendall_null_variance``), attained at distinct x -- about a third of the degree bound:

    |S|²·Var(U₀) = N_u/3 + (1/3) Σ_a D_a²,   D_a = Σ_b s_ab = #{x_b > x_a} − #{x_b < x_a},

(N_u = #untied pairs, using Σ_a Σ_b s_ab² = 2N_u).  Breaking a group of g tied x values into
g distinct consecutive ranks turns the group's common D into D + (g − 1), D + (g − 3), …,
D − (g − 1) (mean D: Σ D_a² grows by Σ (g − 1 − 2j)² >= 0 by convexity) and adds g(g − 1)/2
untied pairs, while every other record's D is unchanged.  So distinct x maximise both terms
and Var(U₀) <= Kendall's value for every x, ties included (checked by enumerating every tie
pattern for n <= 6 in the tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpreg._validation import check_int, check_rng
from dpreg.exceptions import InvalidInputError
from dpreg.simple._common import check_pairs_arg, max_matchings

__all__ = [
    "PairDesign",
    "all_pairs",
    "round_robin_matchings",
    "round_robin_rows",
    "make_design",
    "pair_values",
    "pair_estimates",
    "pair_slopes",
    "doubled_multiset",
    "doubled_pair_values",
    "sorted_doubled_all_pairs",
    "null_variance_bound",
    "null_variance_max",
    "null_variance_exact",
    "kendall_null_variance",
]


@dataclass(frozen=True, eq=False)
class PairDesign:
    """A data-independent set of unordered pairs ``{i[p], j[p]}`` of indices 0..n−1.

    ``k`` is the maximum number of pairs any index belongs to.
    """

    i: np.ndarray
    j: np.ndarray
    n: int
    kind: str
    n_matchings: int | None = None

    @property
    def size(self) -> int:
        """|S|, the number of pairs."""
        return int(self.i.size)

    @property
    def degrees(self) -> np.ndarray:
        """Number of pairs each index belongs to."""
        return np.bincount(self.i, minlength=self.n) + np.bincount(self.j, minlength=self.n)

    @property
    def k(self) -> int:
        """Maximum degree: the Lipschitz constant of data -> pairwise values."""
        return int(self.degrees.max()) if self.size else 0

    def describe(self) -> str:
        if self.kind == "all":
            return "all pairs"
        return f"{self.n_matchings} round-robin matching(s)"


def all_pairs(n: int) -> PairDesign:
    """The complete design: all n(n−1)/2 pairs (k = n − 1)."""
    n = check_int(n, "n", minimum=2)
    i, j = np.triu_indices(n, 1)
    return PairDesign(i.astype(np.intp), j.astype(np.intp), n, "all")


def round_robin_matchings(n: int, k: int, rng: Any = None) -> PairDesign:
    """k distinct rounds of the circle 1-factorisation of K_n on a random relabelling.

    Vertices 0..m−1 sit on a circle, m = n − 1 for even n (vertex n − 1 is the hub) and m = n
    for odd n (a dummy hub; its partner sits the round out).  Round r pairs (r+d, r−d) mod m
    for d = 1..(m−1)/2, plus (hub, r) for even n.  The k rounds are drawn without
    replacement and the labels are permuted uniformly at random, both from ``rng`` and both
    independent of the data.  (:func:`round_robin_rows` with one row.)
    """
    i, j = round_robin_rows(n, k, 1, rng)
    return PairDesign(i[0], j[0], int(n), "matchings", n_matchings=int(k))


def round_robin_rows(n: int, k: int, designs: int, rng: Any = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of ``designs`` independent k-matching designs as rows: ``(i, j)``, index
    arrays of shape (designs, pairs), row t the pairs (i < j, round by round) of the t-th of
    ``designs`` successive :func:`round_robin_matchings` calls with one generator -- the same
    generator calls in the same order (per design: ``choice`` of the k rounds, then
    ``permutation`` of the labels), so row 0 of a fresh generator is that call's design.  The
    one implementation of the design (the reproduction harness draws its trials' designs
    here)."""
    n = check_int(n, "n", minimum=2)
    top = max_matchings(n)
    k = check_int(k, "pairs", minimum=1, maximum=top)
    designs = check_int(designs, "designs", minimum=1)
    gen = check_rng(rng)
    m = n - 1 if n % 2 == 0 else n
    rounds = np.empty((designs, k), dtype=np.intp)
    perm = np.empty((designs, n), dtype=np.intp)
    for t in range(designs):
        rounds[t] = np.sort(gen.choice(top, size=k, replace=False))
        perm[t] = gen.permutation(n)
    d = np.arange(1, (m - 1) // 2 + 1, dtype=np.intp)
    a = (rounds[:, :, None] + d) % m  # (designs, k, (m − 1)/2)
    b = (rounds[:, :, None] - d) % m
    if n % 2 == 0:  # the hub n − 1 meets the circle vertex r in round r
        a = np.concatenate([a, np.full((designs, k, 1), n - 1, dtype=np.intp)], axis=2)
        b = np.concatenate([b, rounds[:, :, None]], axis=2)
    a = a.reshape(designs, -1)  # round by round
    b = b.reshape(designs, -1)
    pa = np.take_along_axis(perm, a, axis=1)
    pb = np.take_along_axis(perm, b, axis=1)
    return np.minimum(pa, pb), np.maximum(pa, pb)


def make_design(n: int, pairs: str | int, rng: Any = None) -> PairDesign:
    """``pairs="all"`` -> :func:`all_pairs`; integer k -> :func:`round_robin_matchings`."""
    p = check_pairs_arg(pairs, n)
    if p == "all":
        return all_pairs(n)
    return round_robin_matchings(n, int(p), rng)


def _check_design(design: Any, n: int) -> PairDesign:
    if not isinstance(design, PairDesign):
        raise InvalidInputError(f"design must be a PairDesign; got {type(design).__name__}")
    if design.n != n:
        raise InvalidInputError(f"design is for n={design.n} records; the data have n={n}")
    return design


def pair_estimates(
    x: np.ndarray, y: np.ndarray, design: PairDesign, x_eval: float
) -> tuple[np.ndarray, np.ndarray]:
    """Predictions at ``x_eval`` of the lines through the two points of each pair.

    Returns ``(z, tied)``; ``z`` is meaningful only where ``tied`` is False.  The value is
    computed in Lagrange form ((x_j − x_e)·y_i + (x_e − x_i)·y_j)/(x_j − x_i), which equals
    s·(x_e − (x_i+x_j)/2) + (y_i+y_j)/2 and can overflow to ±∞ but never produce NaN for
    finite data with x_i ≠ x_j.
    """
    _check_design(design, x.size)
    return pair_values(x, y, design.i, design.j, estimand="predictions", x_eval=x_eval)


def pair_slopes(x: np.ndarray, y: np.ndarray, design: PairDesign) -> tuple[np.ndarray, np.ndarray]:
    """Slopes (y_j − y_i)/(x_j − x_i) of each pair; ``(s, tied)`` as in :func:`pair_estimates`."""
    _check_design(design, x.size)
    return pair_values(x, y, design.i, design.j, estimand="slope")


def pair_values(x: np.ndarray, y: np.ndarray, i: np.ndarray, j: np.ndarray, *,
                estimand: str, x_eval: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(z, tied)`` of the pairs (i, j) -- index arrays of any one shape (a design, or the
    rows of :func:`round_robin_rows`): the prediction at ``x_eval`` (``estimand=
    "predictions"``, :func:`pair_estimates`' formula) or the slope (``"slope"``,
    :func:`pair_slopes`') of each pair; 0 where tied (x_i = x_j).  Both formulas are exactly
    symmetric in (i, j)."""
    xi, xj = x[i], x[j]
    yi, yj = y[i], y[j]
    dx = xj - xi
    tied = dx == 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if estimand == "slope":
            num = yj - yi
        else:
            if x_eval is None:
                raise InvalidInputError("x_eval is required for estimand='predictions'")
            num = (xj - x_eval) * yi + (x_eval - xi) * yj
        z = np.divide(num, dx, out=np.zeros_like(dx), where=~tied)
    return _nan_guard(z), tied


def _nan_guard(values: np.ndarray) -> np.ndarray:
    # Only reachable when differences of values near ±1.8e308 overflow (inf − inf).  The
    # replacement is a fixed function of the pair, so the transformation stays k-Lipschitz.
    bad = np.isnan(values)
    if bad.any():
        values = np.where(bad, 0.0, values)
    return values


def doubled_multiset(values: np.ndarray, tied: np.ndarray) -> np.ndarray:
    """2|S| entries: each untied value twice, and −∞, +∞ for each tied pair."""
    untied = values[~tied]
    n_tied = int(tied.size - untied.size)
    out = np.empty(2 * tied.size, dtype=np.float64)
    u = untied.size
    out[:u] = untied
    out[u:2 * u] = untied
    out[2 * u:2 * u + n_tied] = -np.inf
    out[2 * u + n_tied:] = np.inf
    return out


def doubled_pair_values(x: np.ndarray, y: np.ndarray, design: PairDesign, *,
                        estimand: str = "slope", x_eval: float | None = None) -> np.ndarray:
    """The multiset a DP Theil-Sen median runs on: slopes (``estimand="slope"``) or
    predictions at ``x_eval`` (``"predictions"``), doubled with the ±∞ tie convention."""
    if estimand == "slope":
        return doubled_multiset(*pair_slopes(x, y, design))
    if estimand == "predictions" and x_eval is not None:
        return doubled_multiset(*pair_estimates(x, y, design, float(x_eval)))
    raise InvalidInputError(
        f"estimand must be 'slope' or 'predictions' (with x_eval); got {estimand!r}, "
        f"x_eval={x_eval!r}"
    )


def sorted_doubled_all_pairs(x: np.ndarray, y: np.ndarray, *, estimand: str,
                             x_eval: float | None, lo: float, hi: float) -> np.ndarray:
    """``np.sort(np.clip(doubled_pair_values(x, y, all_pairs(n), ...), lo, hi))``: the doubled
    multiset of all pairs clipped to the public range [lo, hi] and sorted -- what the DP
    medians sort first -- built without the index arrays or the doubled array: the untied
    values are computed and clipped in one compiled pass (numba; the same float formula and
    clip), only they are sorted, and each is then written twice between the clipped −∞
    (``lo``) and +∞ (``hi``) entries of the tied pairs.  Equal floats are interchangeable, so
    the result is the same array (up to the sign of zeros equal to each other, which no
    consumer distinguishes: differences, ``uniform`` draws and order statistics agree).
    Without numba: the materialising formula itself."""
    from dpreg.simple.fast._kernels import all_pair_values

    got = all_pair_values(x, y, estimand=estimand, x_eval=x_eval, lo=lo, hi=hi)
    if got is None:  # pragma: no cover - without numba
        return np.sort(np.clip(doubled_pair_values(x, y, all_pairs(x.size), estimand=estimand,
                                                   x_eval=x_eval), lo, hi))
    vals, n_tied = got
    vals.sort()
    u = vals.size
    out = np.empty(2 * (u + n_tied))
    out[:n_tied] = lo
    out[n_tied:n_tied + 2 * u:2] = vals
    out[n_tied + 1:n_tied + 2 * u:2] = vals
    out[n_tied + 2 * u:] = hi
    return out


def _repeat_count(design: PairDesign) -> int:
    """Number of ordered pairs of distinct copies of the same pair (0 for dpreg's designs)."""
    if design.size == 0:
        return 0
    keys = design.i.astype(np.int64) * design.n + design.j.astype(np.int64)
    _, counts = np.unique(keys, return_counts=True)
    return int(np.sum(counts * (counts - 1)))


def null_variance_bound(design: PairDesign) -> float:
    """Data-independent upper bound on Var(U₀) under the ±∞ tie convention.

    1/|S| + R/|S|² + C/(3|S|²), with R the ordered pairs of identical copies and C the ordered
    pairs of members of S sharing exactly one index.  Depends only on S.
    """
    size = design.size
    if size == 0:
        raise InvalidInputError("the pair design is empty")
    deg = design.degrees.astype(np.float64)
    repeats = _repeat_count(design)
    sharing_one = float(np.sum(deg * (deg - 1))) - 2.0 * repeats
    return 1.0 / size + repeats / size**2 + sharing_one / (3.0 * size**2)


def _is_complete(design: PairDesign) -> bool:
    """Whether S holds every unordered pair of 0..n−1 exactly once (a function of S only)."""
    n = design.n
    return (design.size == n * (n - 1) // 2 and bool(np.all(design.i != design.j))
            and _repeat_count(design) == 0)


def null_variance_max(design: PairDesign) -> float:
    """max over x of Var(U₀) (:func:`null_variance_exact`): the data-independent variance the
    DP interval uses.  Kendall's 2(2n+5)/(9n(n−1)) for the complete design (all pairs; the
    maximum over every x, ties included -- module doc), :func:`null_variance_bound`
    otherwise.  Depends only on S."""
    if design.size and _is_complete(design):
        return kendall_null_variance(design.n)
    return null_variance_bound(design)


def null_variance_exact(x: np.ndarray, design: PairDesign) -> float:
    """Var(U₀) for the given x (data-dependent: for non-private intervals only).

    Corrects Sarathy & Vadhan Cor. B.1.3: the covariance sign is oriented at the shared index,
    tied pairs contribute nothing, and identical copies of a pair (not produced by dpreg's
    designs) add covariance 1.
    """
    x = np.asarray(x, dtype=np.float64)
    _check_design(design, x.size)
    size = design.size
    if size == 0:
        raise InvalidInputError("the pair design is empty")
    s = np.sign(x[design.j] - x[design.i])
    untied = s != 0
    at_vertex = np.bincount(design.i, weights=s, minlength=design.n) - np.bincount(
        design.j, weights=s, minlength=design.n
    )
    untied_deg = np.bincount(design.i, weights=untied, minlength=design.n) + np.bincount(
        design.j, weights=untied, minlength=design.n
    )
    keys = design.i.astype(np.int64) * design.n + design.j.astype(np.int64)
    _, inv, counts = np.unique(keys, return_inverse=True, return_counts=True)
    # identical copies: exclude from the sharing-one sum (they share two indices, counted at
    # both ends) and add their covariance 1 when untied
    rep_untied = float(np.sum((counts[inv] - 1) * untied))
    sharing = float(np.sum(at_vertex**2) - np.sum(untied_deg)) - 2.0 * rep_untied
    return (float(np.sum(untied)) + rep_untied) / size**2 + sharing / (3.0 * size**2)


def kendall_null_variance(n: int) -> float:
    """Var(U₀) of the complete design when x has no ties: 2(2n+5)/(9n(n−1)) (Kendall)."""
    n = check_int(n, "n", minimum=2)
    return 2.0 * (2 * n + 5) / (9.0 * n * (n - 1))
