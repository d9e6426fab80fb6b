"""Median with smooth-sensitivity-calibrated Student-t noise.

Guarantee: **ε-DP (pure)**.  Source: Alabi et al. 2022, §6.2.3, App. D, Alg. 6 (DPSSTheilSen),
using Bun & Steinke 2019 (Thm 31): if S(z) is a t-smooth upper bound on the local sensitivity
of the median, then ``median(z) + (S/s)·T`` with ``T ~ Student-t(d)``,
``t = ε/(2(d+1))`` and ``s = 2√d(ε − t(d+1))/(d+1) = ε√d/(d+1)`` is ε-DP.

Neighbouring relation: one *data record* changes at most ``k`` of the values ``z`` (k = 1 for a
median of the data itself; k = number of pairs a point belongs to in Theil-Sen), and the number
of values M is fixed.  For Theil-Sen use Sarathy & Vadhan's ±∞ tie convention so that M does
not depend on the data (replace-one, n public).

Smooth upper bound (Alabi et al. Lemma 10, index fixed as in their eq. (4)).  Sort the values
clipped to [lo, hi] and bookend them with ``lo`` (index 0) and ``hi`` (index M+1); indices out of
range read as the bookends.  For the order statistic at index m,

    A_m(0) = max(Z[m+k] − Z[m], Z[m] − Z[m−k])
    A_m(l) = max_{s=0..k(l+1)} Z[m+s] − Z[m−k(l+1)+s]          (l >= 1)
    S_m    = max_l e^{−l t} A_m(l).

For odd M the median is Z[m] with m = (M+1)/2.  For even M dpreg releases the usual median
(the average of Z[M/2] and Z[M/2+1], as the reference code does) and uses
``S = max(S_{M/2}, S_{M/2+1})``: the average moves by at most the larger of the two order
statistics' moves, and a maximum of t-smooth upper bounds is a t-smooth upper bound.  Once a
window spans both bookends ``A`` equals ``hi − lo`` and further l only shrink the term, so the
loop stops there (or earlier, once ``e^{−lt}(hi − lo)`` cannot beat the running maximum).
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any

import numpy as np

from dpreg._validation import check_bounds, check_epsilon, check_int, check_rng
from dpreg.exceptions import InvalidInputError, PrivacyLeakWarning

__all__ = ["smooth_median", "smooth_median_rows", "smooth_median_sorted", "median_smooth_sensitivity",
           "student_t_scale"]


def _bookended(z: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return np.concatenate(([lo], np.sort(np.clip(z, lo, hi)), [hi]))


def _window_max_numpy(zb: np.ndarray, m: int, w: int, decay: float, best: float) -> float:
    """max_{s=0..w} zb[m+s] − zb[m−w+s], indices clipped to the bookends (NumPy form; the
    compiled :func:`_window_max_loop` may skip parts that cannot beat ``best``)."""
    top = zb.size - 1
    s = np.arange(w + 1)
    return float(np.max(zb[np.minimum(m + s, top)] - zb[np.maximum(m - w + s, 0)]))


def _window_max_loop(zb: np.ndarray, m: int, w: int, decay: float,
                     best: float) -> float:  # pragma: no cover - numba
    """:func:`_window_max_numpy` as a loop over blocks of 128 offsets (what numba compiles),
    skipping a block when its span zb[m+s₁] − zb[m−w+s₀] times ``decay`` is <= ``best``: every
    difference in the block is <= that span (zb sorted; float subtraction and the product
    with decay > 0 are monotone), so a skipped block cannot make the caller's
    max(best, window·decay) larger, and the caller gets the same value as from the full scan.
    Returns −inf when every block is skipped."""
    top = zb.size - 1
    out = -np.inf
    for s0 in range(0, w + 1, 128):
        s1 = min(s0 + 127, w)
        if (zb[min(m + s1, top)] - zb[max(m - w + s0, 0)]) * decay <= best:
            continue
        for s in range(s0, s1 + 1):
            d = zb[min(m + s, top)] - zb[max(m - w + s, 0)]
            if d > out:
                out = d
    return out


_window_max = _window_max_numpy


def _smooth_bound_at(zb: np.ndarray, m: int, k: int, t: float) -> float:
    """t-smooth upper bound of the local sensitivity of the order statistic zb[m] (the module
    doc's S_m; ``zb`` bookended and sorted; indices out of range read the bookends).  The one
    implementation: compiled with numba when it is installed (the ``fast`` extra; the window
    maximum then runs as a loop that skips blocks which cannot raise the bound), plain NumPy
    otherwise -- the same float differences and maxima, so the same value."""
    top = zb.size - 1  # M + 1
    width_all = zb[top] - zb[0]
    d1 = zb[min(m + k, top)] - zb[m]
    d2 = zb[m] - zb[max(m - k, 0)]
    best = d1 if d1 >= d2 else d2
    el = 1
    while True:
        decay = math.exp(-el * t)
        if decay * width_all <= best:
            break
        w = k * (el + 1)
        # every difference in the window is <= zb[m+w] − zb[m−w] (as in _window_max_loop):
        # when that span cannot beat the running maximum neither can the window
        if (zb[min(m + w, top)] - zb[max(m - w, 0)]) * decay > best:
            a = _window_max(zb, m, w, decay, best) * decay
            if a > best:
                best = a
        if w >= top:
            break  # a window spans both bookends: A = hi − lo, later terms only decay
        el += 1
    return float(best)


try:  # numba is the optional ``fast`` extra
    import numba as _numba

    # numba's on-disk cache needs the source file on disk: imported from a zipped wheel
    # (spark-submit --py-files) the kernels are compiled without it
    _CACHE = os.path.isfile(__file__)
    _window_max = _numba.njit(cache=_CACHE, nogil=True)(_window_max_loop)
    _smooth_bound_at = _numba.njit(cache=_CACHE, nogil=True)(_smooth_bound_at)
except ImportError:  # pragma: no cover - exercised where numba is not installed
    pass


def _median_bound(zb: np.ndarray, k: int, t: float) -> float:
    """S for the median of the bookended sorted values ``zb`` = [lo, sort(clip(z)), hi]: S_m at
    the middle index (odd M), the larger of the two middle ones (even M)."""
    zb = np.ascontiguousarray(zb, dtype=np.float64)
    mm = zb.size - 2
    mids = [mm // 2, mm // 2 + 1] if mm % 2 == 0 else [(mm + 1) // 2]
    return max(float(_smooth_bound_at(zb, int(m), int(k), float(t))) for m in mids)


def median_smooth_sensitivity(z: Any, *, lo: float, hi: float, k: int = 1, t: float) -> float:
    """t-smooth upper bound S on the local sensitivity of the median of ``z`` (see module doc)."""
    arr = np.asarray(z, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0 or np.any(np.isnan(arr)):
        raise InvalidInputError("z must be a non-empty 1-D array without NaN")
    lo, hi = check_bounds((lo, hi), "(lo, hi)")
    k = check_int(k, "k", minimum=1)
    if not (t > 0 and math.isfinite(t)):
        raise InvalidInputError(f"t must be a finite positive number; got {t!r}")
    return _median_bound(_bookended(arr, lo, hi), k, t)


def student_t_scale(epsilon: float, dof: int) -> tuple[float, float]:
    """(t, s): smoothing parameter t = ε/(2(d+1)) and noise divisor s = ε√d/(d+1)."""
    return epsilon / (2.0 * (dof + 1)), epsilon * math.sqrt(dof) / (dof + 1)


def smooth_median(
    z: Any, *, epsilon: float, lo: float, hi: float, k: int = 1, dof: int = 3, rng: Any = None,
    size: int | None = None,
) -> float | np.ndarray:
    """ε-DP median of ``z`` with smooth-sensitivity Student-t noise (Alabi et al. Alg. 6).

    Parameters
    ----------
    z:
        Values (±inf allowed and clipped to [lo, hi]); must be non-empty.
    epsilon:
        Privacy parameter (``inf`` returns the exact median of the clipped values).
    lo, hi:
        Public range the values are clipped to (the output itself is not clipped).
    k:
        Number of values one data record can change (see module doc).
    dof:
        Degrees of freedom d >= 1 of the Student-t noise (default 3, Alabi et al. Table 1).
    size:
        Optional number of i.i.d. draws (experiments on a fixed dataset; each draw is a
        separate ε-DP release).

    Guarantee: ε-DP (pure) for records that each affect at most k values, M fixed.
    """
    try:
        arr = np.asarray(z, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError("z must be an array of real numbers") from None
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidInputError(f"z must be a non-empty 1-D array; got a {arr.ndim}-D array")
    if np.any(np.isnan(arr)):
        raise InvalidInputError("z must not contain NaN")
    eps = check_epsilon(epsilon, minimum=0.0)  # may be a split of a larger budget
    lo, hi = check_bounds((lo, hi), "(lo, hi)")
    k = check_int(k, "k", minimum=1)
    dof = check_int(dof, "dof", minimum=1)
    gen = check_rng(rng)
    if math.isinf(eps):
        center = float(np.median(np.clip(arr, lo, hi)))
        warnings.warn("epsilon=inf: returning the exact (non-private) median",
                      PrivacyLeakWarning, stacklevel=2)
        return center if size is None else np.full(size, center)
    out = smooth_median_rows(_bookended(arr, lo, hi)[None, :], epsilon=eps, k=k, dof=dof,
                             rng=gen, draws_per_row=1 if size is None else size)
    return float(out[0]) if size is None else out


def smooth_median_sorted(s: np.ndarray, *, epsilon: float, lo: float, hi: float, k: int,
                         dof: int = 3, rng: np.random.Generator) -> float:
    """:func:`smooth_median` (one draw, finite ``epsilon``; inputs validated by the caller)
    of a multiset given already clipped to [lo, hi] and sorted (``s = np.sort(np.clip(z, lo,
    hi))``): the same bookended array, bound, centre and Student-t draw, so the same output
    for the same ``rng``.  Guarantee: that of :func:`smooth_median`."""
    zb = np.concatenate(([float(lo)], s, [float(hi)]))
    return float(smooth_median_rows(zb[None, :], epsilon=epsilon, k=k, dof=dof, rng=rng)[0])


def smooth_median_rows(bookended: np.ndarray, *, epsilon: float, k: int, dof: int = 3,
                       rng: Any, draws_per_row: int = 1) -> np.ndarray:
    """The smooth-sensitivity median of every row of a batch: row r of ``bookended`` ((rows,
    M + 2)) is [lo, sort(clip(z_r, lo, hi)), hi]; returns median(z_r) + (S_r/s)·T_r with S_r
    the t-smooth bound of the module doc, (t, s) = :func:`student_t_scale` (ε, d) and T_r ~
    Student-t(d) -- drawn ``gen.standard_t(d, size=rows)`` from one Generator (the stream of
    ``rows`` single calls), or from row r's generator of a
    :class:`~dpreg.mechanisms.batch.RowRandomness`.  With ``draws_per_row`` > 1 (one row only)
    that many i.i.d. draws for the one row (experiments on a fixed data set).  ``epsilon`` must
    be finite (callers handle ε = ∞: the exact median).

    Guarantee per row (each a separate release): ε-DP (pure) for records that each change at
    most k values, M fixed.  Source: Alabi et al. 2022, Alg. 6; Bun & Steinke 2019, Thm 31.
    The one implementation: :func:`smooth_median`, DP Theil-Sen (single fit and per group) and
    the reproduction harness all call it.
    """
    from dpreg.mechanisms.batch import RowRandomness

    zb = np.asarray(bookended, dtype=np.float64)
    rows, mm = zb.shape[0], zb.shape[1] - 2
    if mm < 1:
        raise InvalidInputError("each row needs at least one value besides the bookends")
    t, s = student_t_scale(epsilon, dof)
    sens = np.array([_median_bound(zb[r], k, t) for r in range(rows)])
    if mm % 2:
        center = zb[:, (mm + 1) // 2]
    else:
        center = (zb[:, mm // 2] + zb[:, mm // 2 + 1]) / 2
    if draws_per_row != 1:
        if rows != 1 or isinstance(rng, RowRandomness):
            raise InvalidInputError("draws_per_row > 1 needs a single row and one generator")
        return center[0] + (sens[0] / s) * check_rng(rng).standard_t(dof, size=draws_per_row)
    draws: np.ndarray
    if isinstance(rng, RowRandomness):
        draws = np.array([rng.generator(r).standard_t(dof) for r in range(rows)])
    else:
        draws = np.asarray(check_rng(rng).standard_t(dof, size=rows))
    return center + (sens / s) * draws
