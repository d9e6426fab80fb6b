"""Ties in the response: when Theil-Sen's median pairwise slope is a pile of exact zeros.

Theil-Sen estimates the median of the pairwise slopes (y_j − y_i)/(x_j − x_i).  A pair whose
two responses are equal (and whose x differ) has slope exactly 0; when the response takes few
values -- a 0/1 outcome, a five-point scale -- a large share of the pairs do, and the median
pairwise slope sits at 0 whatever the relation between x and y.  Three checks, none of which
changes a release:

* **public** (:func:`check_y_levels`, :func:`warn_few_levels`): the response's public levels
  (``y_levels=``, or a codebook's numeric ``levels`` for the response) give a lower bound on
  the share of tied pairs before anything is charged or drawn;
* **on the release** (:func:`dpreg.simple.ci.point_mass_flag`): a released slope interval
  within 2θ of 0 (post-processing);
* **DP, opt-in** (:func:`dp_tied_share`): a Laplace release of the share of zero-slope pairs,
  ε-DP (pure) under replace-one neighbours with n public, charged like any release
  (docs/privacy/tie_check.md).
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpreg._validation import check_epsilon, check_rng, fmt, is_seeded
from dpreg.exceptions import InvalidParameterError, TiedSlopesWarning
from dpreg.mechanisms import laplace, laplace_scale
from dpreg.privacy import Ledger, Neighbouring, PrivacyStatement, PureDP, charge
from dpreg.privacy.notices import user_stacklevel
from dpreg.simple._common import check_pairs_arg, check_simple_xy, warn_not_private
from dpreg.simple.pairs import PairDesign, make_design

__all__ = [
    "FEW_LEVELS_MAX",
    "check_y_levels",
    "min_tied_share",
    "warn_few_levels",
    "tied_share_sensitivity",
    "zero_slope_share",
    "dp_tied_share",
    "TiedShare",
]

#: a response declared with at most this many levels gets the public warning: with L levels
#: at least about 1/L of all pairs share their y (:func:`min_tied_share`), 5 % at L = 20
FEW_LEVELS_MAX = 20


def check_y_levels(y_levels: Any) -> int | None:
    """The number of public levels of the response from ``y_levels``: ``None`` (not declared),
    a positive integer (the count) or a sequence of distinct finite numbers (the levels).
    Raises :class:`~dpreg.exceptions.InvalidParameterError` otherwise.  Public input only."""
    if y_levels is None:
        return None
    if isinstance(y_levels, numbers.Integral) and not isinstance(y_levels, (bool, np.bool_)):
        if int(y_levels) < 1:
            raise InvalidParameterError(f"y_levels must be a positive integer (the number of "
                                        f"levels) or a list of numbers; got {fmt(y_levels)}")
        return int(y_levels)
    expected = ("y_levels must be a positive integer (the number of levels) or a list of "
                "distinct finite numbers (the response's public levels)")
    if isinstance(y_levels, (str, bytes)) or not hasattr(y_levels, "__len__"):
        raise InvalidParameterError(f"{expected}; got {fmt(y_levels)}")
    vals = list(y_levels)
    if not vals or not all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
                           and math.isfinite(float(v)) for v in vals):
        raise InvalidParameterError(f"{expected}; got {fmt(y_levels)}")
    if len({float(v) for v in vals}) != len(vals):
        raise InvalidParameterError(f"{expected}; got repeated levels in {fmt(y_levels)}")
    return len(vals)


def min_tied_share(levels: int, n: int | None = None) -> float:
    """The smallest possible share of pairs with equal y when y takes at most ``levels``
    values: (n/L − 1)/(n − 1) for n rows spread evenly (Cauchy–Schwarz on the level counts),
    1/L as n grows (``n=None``).  A function of public inputs only."""
    if levels < 1:
        raise InvalidParameterError(f"levels must be >= 1; got {levels!r}")
    if n is None:
        return 1.0 / levels
    if n < 2:
        raise InvalidParameterError(f"n must be >= 2; got {n!r}")
    return max(0.0, (n / levels - 1.0) / (n - 1.0))


def warn_few_levels(levels: int | None, *, where: str) -> None:
    """:class:`~dpreg.exceptions.TiedSlopesWarning` when the response is publicly declared to
    take at most :data:`FEW_LEVELS_MAX` levels.  Decided and worded from public inputs only
    (the count of levels; never a level or any other value); called before anything is
    charged or drawn."""
    if levels is None or levels > FEW_LEVELS_MAX:
        return
    share = min_tied_share(levels)
    warnings.warn(
        f"{where}: the response is declared to take {levels} value(s), so at least about "
        f"{share:.0%} of all pairs share their y and have a pairwise slope of exactly 0.  "
        "Theil-Sen estimates the median pairwise slope, which such ties pull to 0 whatever "
        "the relation between x and y -- it is not the OLS slope; consider noisy-stats or "
        "adassp for the OLS slope (a released interval near 0 is flagged ci_point_mass)",
        TiedSlopesWarning, stacklevel=user_stacklevel())


# ------------------------------------------------------------------------------ DP check
def tied_share_sensitivity(n_pairs: int, pairs_per_record: int) -> float:
    """Replace-one L1 sensitivity of the share of zero-slope pairs over a data-independent
    pair design with ``n_pairs`` pairs in which no record takes part in more than
    ``pairs_per_record`` (k) pairs: k/|S|.

    Replacing one record changes only the indicators 1[y_i = y_j, x_i ≠ x_j] of the pairs it
    belongs to, at most k of them, each by at most 1; the share divides by the fixed |S|.
    All pairs (k = n − 1, |S| = n(n−1)/2): 2/n.  Attained: all y equal and all x distinct,
    then one record's y replaced by another value turns its n − 1 zero slopes into non-zero
    ones (tests/test_ties.py checks both against brute force)."""
    s, k = int(n_pairs), int(pairs_per_record)
    if s < 1 or k < 0:
        raise InvalidParameterError(f"n_pairs must be >= 1 and pairs_per_record >= 0; got "
                                    f"{n_pairs!r}, {pairs_per_record!r}")
    return k / s


def _pair_count(counts: np.ndarray) -> int:
    c = counts.astype(np.int64)
    return int(np.sum(c * (c - 1) // 2))


def zero_slope_share(x: Any, y: Any, design: PairDesign | None = None) -> float:
    """The share of pairs with a pairwise slope of exactly 0 (y_i = y_j and x_i ≠ x_j) among
    all pairs (``design=None``: counted in O(n log n) from the multiplicities of y and of
    (x, y)) or among ``design``'s pairs.  Deterministic; not private on its own."""
    xa = np.asarray(x, dtype=np.float64).reshape(-1)
    ya = np.asarray(y, dtype=np.float64).reshape(-1)
    n = xa.size
    if design is None:
        total = n * (n - 1) // 2
        tied_y = _pair_count(np.unique(ya, return_counts=True)[1])
        both = _pair_count(np.unique(np.column_stack([xa, ya]), axis=0,
                                     return_counts=True)[1])
        return (tied_y - both) / total
    zero = (ya[design.i] == ya[design.j]) & (xa[design.i] != xa[design.j])
    return float(np.count_nonzero(zero)) / design.size


@dataclass(frozen=True)
class TiedShare:
    """A DP release of the share of zero-slope pairs (:func:`dp_tied_share`).

    ``share``: the noisy share clipped to [0, 1] (post-processing); ``noisy``: before
    clipping; ``scale``: the Laplace scale b = Δ/ε; ``sensitivity``: Δ = k/|S|; ``pairs``:
    the design in words."""

    share: float
    noisy: float
    scale: float
    sensitivity: float
    epsilon: float
    pairs: str
    privacy: PrivacyStatement = field(compare=False, repr=False)


def dp_tied_share(x: Any, y: Any, *, epsilon: float, rng: Any = None, pairs: str | int = "all",
                  ledger: Ledger | None = None) -> TiedShare:
    """ε-DP release of the share of pairs whose pairwise slope is exactly 0 (y_i = y_j,
    x_i ≠ x_j): the opt-in check for a response with many ties, before trusting a Theil-Sen
    slope.

    Guarantee: **ε-DP (pure), replace-one neighbours, n public.**  The pair design is
    Theil-Sen's (:func:`dpreg.simple.pairs.make_design`: all pairs, or ``pairs`` round-robin
    matchings drawn from ``rng`` on a random relabelling, independent of the data).  The
    statistic is the share Z of the design's pairs with slope exactly 0; replacing one record
    changes at most k of its |S| indicators by at most 1, so Z has L1 sensitivity
    Δ = k/|S| (:func:`tied_share_sensitivity`; 2/n for all pairs), and Z + Lap(Δ/ε) is ε-DP by
    the Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006), drawn through
    :func:`dpreg.mechanisms.laplace`.  ``PureDP(ε)`` is charged to ``ledger`` after every
    check and before any draw.  Clipping to [0, 1] is post-processing.  ``epsilon=inf``
    returns Z itself (not private; warns).  See docs/privacy/tie_check.md.
    """
    xa, ya = check_simple_xy(x, y, min_rows=2)
    eps = check_epsilon(epsilon)
    n = int(xa.size)
    pairs_arg = check_pairs_arg(pairs, n)
    gen = check_rng(rng)
    budget = PureDP(eps)
    charge(ledger, budget, "dpreg.simple.ties.dp_tied_share", Neighbouring.REPLACE_ONE)
    if budget.is_infinite:
        warn_not_private("dp_tied_share")
    design = None if pairs_arg == "all" else make_design(n, pairs_arg, gen)
    size, k = (n * (n - 1) // 2, n - 1) if design is None else (design.size, design.k)
    sens = tied_share_sensitivity(size, k)
    value = zero_slope_share(xa, ya, design)
    noisy = float(laplace(value, sensitivity=sens, epsilon=eps, rng=gen))
    described = "all pairs" if design is None else design.describe()
    stmt = PrivacyStatement(budget, Neighbouring.REPLACE_ONE, "Laplace (tied-pair share)",
                            "Dwork, McSherry, Nissim & Smith 2006 (Laplace mechanism)",
                            is_seeded(rng), {"sensitivity": sens, "pairs": described,
                                             "k": k, "n_pairs": size})
    return TiedShare(share=min(max(noisy, 0.0), 1.0), noisy=noisy,
                     scale=laplace_scale(sens, eps), sensitivity=sens, epsilon=eps,
                     pairs=described, privacy=stmt)
