"""Exact rank counts of all pairwise Theil-Sen estimates without materialising them.

:class:`PairCounter` answers ``count(r) = #{untied pairs i<j : v̂_ij < r}`` for any float r in
O(n log n) time and O(n) memory, where v̂_ij is **the floating-point value the materialising
implementation computes** (:func:`dpreg.simple.pairs.pair_slopes` /
:func:`~dpreg.simple.pairs.pair_estimates`), so that the fast mechanism has exactly the
reference's piecewise-constant density.

Reductions (exact real arithmetic; see docs/scale.md for the derivation):

* **Slopes.**  Order the points by x.  For x_a < x_b, (y_b − y_a)/(x_b − x_a) < r iff
  z_b < z_a with z = y − r·x, so the count is the number of inversions of z in x-order
  (pairs with equal x are the tied pairs and are skipped).
* **Predictions at x₀.**  The line through two points evaluated at x₀ equals the *slope*
  between the transformed points (1/(x − x₀), y/(x − x₀)) (a projective transform sending the
  vertical line x = x₀ to infinity).  With t = x − x₀, a = 1/t and u = (y − r)/t one has
  V_ab − r = (u_a − u_b)/(a_a − a_b); ordering the points by a (points left of x₀ by
  decreasing x, then points right of x₀ by decreasing x) the count is again an inversion
  count of u.  A point with x = x₀ has value y for every partner (counted directly).

Floating point.  The comparisons are made with float keys (z or u) and a provable tolerance τ:
a pair whose keys differ by more than the tolerance is certainly on the side the exact
inequality says *and* its reference float value v̂ is on the same side of r (rounding error
bounds of the reference formula, module constants below).  The few pairs inside the
tolerance ("ambiguous") are enumerated and compared using the reference formula itself.
Points with extreme magnitudes (|x| or |y| > 2⁵⁰⁰, or 0 < |x − x₀| < 2⁻⁴⁰⁰) are "special":
all their pairs are evaluated with the reference formula (O(n) per special point).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpreg.simple.fast._kernels import cross_run_inversions, overlap_pairs, resolve_backend

__all__ = ["PairCounter", "reference_slopes", "reference_predictions"]

_U = 2.0 ** -53  # unit roundoff
_BIG = 2.0 ** 500
_SMALL_T = 2.0 ** -400
_TINY = 2.0 ** -1000
_UP = 1.0 + 2.0 ** -40  # inflation covering the rounding of the tolerance itself


def reference_slopes(xa: np.ndarray, ya: np.ndarray, xb: np.ndarray, yb: np.ndarray) -> np.ndarray:
    """The reference float slope (y_b − y_a)/(x_b − x_a) of untied pairs (symmetric in a, b)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        s = (yb - ya) / (xb - xa)
    return np.where(np.isnan(s), 0.0, s)


def reference_predictions(xa: np.ndarray, ya: np.ndarray, xb: np.ndarray, yb: np.ndarray,
                          x0: float) -> np.ndarray:
    """The reference float prediction at x0 of the line through two untied points, computed
    exactly as :func:`dpreg.simple.pairs.pair_estimates` does (symmetric in a, b)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        num = (xb - x0) * ya + (x0 - xa) * yb
        z = num / (xb - xa)
    return np.where(np.isnan(z), 0.0, z)


def _runs(values: np.ndarray) -> np.ndarray:
    """Start indices of runs of equal consecutive values, with the end sentinel appended."""
    if values.size == 0:
        return np.zeros(1, dtype=np.int64)
    change = np.flatnonzero(values[1:] != values[:-1]) + 1
    return np.concatenate(([0], change, [values.size])).astype(np.int64)


@dataclass
class PairCounter:
    """Exact ``#{untied pairs with reference value < r}`` for all pairs of n points.

    Parameters: ``x``, ``y`` (finite 1-D float arrays), ``estimand`` ("slope" or
    "predictions"), ``x_eval`` (for predictions), ``backend`` ("auto", "numba", "numpy").
    Attributes ``n_pairs`` (n(n−1)/2), ``n_tied`` (pairs with equal x), ``n_untied``.
    """

    x: np.ndarray
    y: np.ndarray
    estimand: str = "slope"
    x_eval: float | None = None
    backend: str = "auto"
    evaluations: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        x = np.ascontiguousarray(self.x, dtype=np.float64)
        y = np.ascontiguousarray(self.y, dtype=np.float64)
        self.x, self.y = x, y
        self._backend = resolve_backend(self.backend)
        n = x.size
        self.n = n
        self.n_pairs = n * (n - 1) // 2
        # deduplicate identical points (their mutual pairs are tied; weights multiply)
        order = np.lexsort((y, x))
        xs, ys = x[order], y[order]
        new = np.ones(n, dtype=bool)
        new[1:] = (xs[1:] != xs[:-1]) | (ys[1:] != ys[:-1])
        starts = np.flatnonzero(new)
        ux, uy = xs[starts], ys[starts]
        uw = np.diff(np.append(starts, n)).astype(np.int64)
        # tied pairs: equal x (x sorted ascending here)
        xr = _runs(ux)
        wx = np.add.reduceat(uw, xr[:-1]) if ux.size else np.zeros(0, dtype=np.int64)
        self.n_tied = int(np.sum(wx * (wx - 1) // 2))
        self.n_untied = self.n_pairs - self.n_tied
        if self.estimand == "slope":
            self._prepare_slope(ux, uy, uw)
        elif self.estimand == "predictions":
            if self.x_eval is None or not math.isfinite(float(self.x_eval)):
                raise ValueError("x_eval must be a finite number for estimand='predictions'")
            self.x0 = float(self.x_eval)
            self._prepare_predictions(ux, uy, uw)
        else:
            raise ValueError(f"estimand must be 'slope' or 'predictions'; got {self.estimand!r}")

    # ------------------------------------------------------------------ preparation
    def _prepare_slope(self, ux: np.ndarray, uy: np.ndarray, uw: np.ndarray) -> None:
        special = (np.abs(ux) > _BIG) | (np.abs(uy) > _BIG)
        keep = ~special
        self._sx, self._sy, self._sw = ux[keep], uy[keep], uw[keep]  # x ascending
        self._runs = _runs(self._sx)
        self._run_of = np.repeat(np.arange(self._runs.size - 1), np.diff(self._runs))
        self._wx, self._wy, self._ww = ux[special], uy[special], uw[special]
        self._zx = self._zy = self._zw = np.zeros(0)
        sx, sy = self._sx, self._sy
        self._ymax = float(np.max(np.abs(sy), initial=0.0))
        self._xmax = float(np.max(np.abs(sx), initial=0.0))
        self._xspan = float(sx[-1] - sx[0]) if sx.size else 0.0
        self._bound = self._value_bound(sx, 2.0 * self._ymax)

    def _prepare_predictions(self, ux: np.ndarray, uy: np.ndarray, uw: np.ndarray) -> None:
        x0 = self.x0
        t = ux - x0
        special = (np.abs(ux) > _BIG) | (np.abs(uy) > _BIG) | ((t != 0) & (np.abs(t) < _SMALL_T))
        if abs(x0) > _BIG:
            special[:] = True
        on = (t == 0) & ~special  # points at x0: value y for every partner
        main = ~special & ~on
        # order: t < 0 by decreasing x, then t > 0 by decreasing x  (increasing 1/t)
        idx = np.flatnonzero(main)
        left = idx[t[idx] < 0][::-1]
        right = idx[t[idx] > 0][::-1]
        o = np.concatenate((left, right))
        self._sx, self._sy, self._sw, self._st = ux[o], uy[o], uw[o], t[o]
        self._runs = _runs(self._sx)
        self._run_of = np.repeat(np.arange(self._runs.size - 1), np.diff(self._runs))
        self._wx, self._wy, self._ww = ux[special], uy[special], uw[special]
        self._zx, self._zy, self._zw = ux[on], uy[on], uw[on]
        st, sy = self._st, self._sy
        with np.errstate(divide="ignore", over="ignore"):
            inv = np.abs(1.0 / st) if st.size else np.zeros(0)
            self._ya = np.abs(sy) / np.abs(st) if st.size else np.zeros(0)
        amax = float(np.max(inv, initial=0.0))
        self._sigma = 2.0 ** -1070 * (amax * amax + amax) + _TINY
        self._main_weight = int(self._sw.sum())
        ymax = float(np.max(np.abs(np.concatenate((sy, self._zy))), initial=0.0))
        tmax = float(np.max(np.abs(st), initial=0.0))
        with np.errstate(over="ignore"):
            self._bound = max(self._value_bound(self._sx, 2.0 * tmax * ymax),
                              ymax * (1 + 16 * _U) + self._sigma)

    @staticmethod
    def _value_bound(sorted_x: np.ndarray, numerator: float) -> float:
        """A bound on |v̂| over safe untied pairs: numerator / (smallest x gap) with slack."""
        xs = np.unique(sorted_x)
        if xs.size < 2:
            return 0.0
        gap = float(np.min(np.diff(xs)))
        with np.errstate(over="ignore", divide="ignore"):
            b = numerator / (gap * (1 - 4 * _U)) * (1 + 64 * _U) + _TINY * (1.0 + 1.0 / gap)
        return b if math.isfinite(b) else math.inf

    # ------------------------------------------------------------------ counting
    def count(self, r: float) -> int:
        """``#{untied pairs with reference value < r}`` (exact)."""
        r = float(r)
        self.evaluations += 1
        if math.isnan(r):
            raise ValueError("r must not be NaN")
        total = self._count_special(r) + self._count_on(r)
        return total + self._count_main(r)

    def _main_total(self) -> int:
        cached = getattr(self, "_main_total_cache", None)
        if cached is not None:
            return int(cached)
        w = self._sw
        tot = int(w.sum())
        within = 0
        if self._runs.size > 1:
            wr = np.add.reduceat(w, self._runs[:-1]) if w.size else np.zeros(0, dtype=np.int64)
            within = int(np.sum(wr * wr)) - int(np.sum(w * w))
        self._main_total_cache = (tot * tot - int(np.sum(w * w)) - within) // 2
        return int(self._main_total_cache)

    def _count_main(self, r: float) -> int:
        sx, sy, sw = self._sx, self._sy, self._sw
        if sx.size < 2:
            return 0
        if abs(r) > _BIG:
            if self._bound < abs(r):
                return self._main_total() if r > 0 else 0
            return self._brute_main(r)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if self.estimand == "slope":
                keys = sy - r * sx
                tau = (16 * _U * (self._ymax + abs(r) * self._xmax)
                       + 2.0 ** -1060 * (1.0 + self._xspan)) * _UP
            else:
                keys = (sy - r) / self._st
                taus = 8 * _U * self._ya + 6 * _U * np.abs(keys) + self._sigma
                tau = float(np.max(taus)) * _UP
        if not (math.isfinite(tau) and np.all(np.isfinite(keys))):
            return self._brute_main(r)
        # ranks of the keys; pairs whose keys differ by more than the tolerance are decided
        # by the order of the keys (module doc), the rest are resolved with the reference
        order = np.argsort(keys)
        rank = np.empty(order.size, dtype=np.int64)
        rank[order] = np.arange(order.size, dtype=np.int64)
        inv = cross_run_inversions(rank, sw, self._runs, backend=self._backend)
        ks = keys[order]
        if not np.any((ks[1:] - tau) <= (ks[:-1] + tau)):
            return inv
        for a, b in overlap_pairs(order, ks, tau, self._run_of):
            first = np.minimum(a, b)  # earlier in the order pi
            second = np.maximum(a, b)
            wab = sw[a] * sw[b]
            counted = rank[first] > rank[second]
            v = self._values(sx[a], sy[a], sx[b], sy[b])
            inv += int(np.sum(wab[v < r])) - int(np.sum(wab[counted]))
        return inv

    def _values(self, xa: np.ndarray, ya: np.ndarray, xb: np.ndarray, yb: np.ndarray) -> np.ndarray:
        if self.estimand == "slope":
            return reference_slopes(xa, ya, xb, yb)
        return reference_predictions(xa, ya, xb, yb, self.x0)

    def _brute_main(self, r: float) -> int:
        """All safe pairs evaluated with the reference formula (pathological magnitudes only)."""
        sx, sy, sw = self._sx, self._sy, self._sw
        total = 0
        for i in range(sx.size - 1):
            j = slice(i + 1, None)
            untied = sx[j] != sx[i]
            v = self._values(np.full(untied.sum(), sx[i]), np.full(untied.sum(), sy[i]),
                             sx[j][untied], sy[j][untied])
            total += int(sw[i] * np.sum(sw[j][untied][v < r]))
        return total

    def _count_on(self, r: float) -> int:
        """Pairs of a point at x0 with a safe point off x0 (value ≈ y of the point at x0)."""
        if self._zy.size == 0 or self._sx.size == 0:
            return 0
        zy, zw = self._zy, self._zw
        slack = 4 * _U * np.abs(zy) + 2 * self._sigma
        sure_below = (zy + slack) < r
        sure_not = (zy - slack) > r
        total = int(np.sum(zw[sure_below])) * self._main_weight
        for k in np.flatnonzero(~sure_below & ~sure_not):
            v = reference_predictions(np.full(self._sx.size, self._zx[k]),
                                      np.full(self._sx.size, zy[k]), self._sx, self._sy, self.x0)
            total += int(zw[k] * np.sum(self._sw[v < r]))
        return total

    def _count_special(self, r: float) -> int:
        """Every pair with at least one special point, with the reference formula."""
        if self._wx.size == 0:
            return 0
        allx = np.concatenate((self._sx, self._zx))
        ally = np.concatenate((self._sy, self._zy))
        allw = np.concatenate((self._sw, self._zw))
        total = 0
        for k in range(self._wx.size):
            # partners: every non-special point, and the special points after k
            px = np.concatenate((allx, self._wx[k + 1:]))
            py = np.concatenate((ally, self._wy[k + 1:]))
            pw = np.concatenate((allw, self._ww[k + 1:]))
            untied = px != self._wx[k]
            m = int(untied.sum())
            v = self._values(np.full(m, self._wx[k]), np.full(m, self._wy[k]), px[untied],
                             py[untied])
            total += int(self._ww[k] * np.sum(pw[untied][v < r]))
        return total
