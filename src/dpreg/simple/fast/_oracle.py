"""Exact rank counts of all pairwise Theil-Sen estimates without materialising them.

:class:`PairCounter` answers ``count(t) = #{untied pairs i<j : V_ij < t}`` for any threshold t
(a float, or an exact sum of a few floats given as a :class:`fractions.Fraction`) in
O(n log n) time and O(n) memory, whatever the data (ties, collinear or constant columns,
duplicated points), where V_ij is the pair's **exact** value: the real number
(y_j − y_i)/(x_j − x_i), or the exact value at x₀ of the line through the two points, computed
from the float inputs without any rounding (:func:`exact_pair_value`).

Why exact values.  The materialising code rounds two or three times per pair, and whether its
result falls below t depends on the low-order bits of *both* points jointly.  For data where
many pairs share (nearly) the same value -- y an exact linear function of x, constant y,
duplicated points -- almost every pair is within rounding of t, and no rank count of the
rounded values can avoid evaluating each pair (O(n²): this is what made the exact-fast path
hang).  The exact values have no such noise: "V_ij < t" is decided for all pairs at once by
sorting exact keys.  (Rounding the exact values to doubles would not do either: it merges the
sub-ulp spread of near-collinear data into a few atoms, which changes what the mechanism
releases; see docs/scale.md.)

Reductions (exact real arithmetic; see docs/scale.md):

* **Slopes.**  Order the points by x.  For x_a < x_b, V_ab < t iff z_b < z_a with z = y − t·x:
  the count is the number of inversions of z in x-order (pairs with equal x are the tied
  pairs and are skipped).
* **Predictions at x₀.**  With s = x − x₀ and u = (y − t)/s, V_ab − t = (u_a − u_b)/(1/s_a −
  1/s_b); ordering the points by 1/s (left of x₀ by decreasing x, then right of x₀ by
  decreasing x) the count is again an inversion count of u.  A point with x = x₀ has value y
  for every partner (counted directly).

Exact keys.  The keys are computed without rounding as short sums of floats (error-free
transformations, :mod:`dpreg.simple.fast._exact`) after scaling x and y by powers of two
(exact; the order of the keys is unchanged).  They are sorted by double-double approximations
with a proven error bound; only keys whose error intervals overlap (exact ties, or keys within
~2⁻¹⁰⁰ of each other) are compared exactly.  Equal keys share a rank, so the Fenwick-tree
count of strict inversions is exactly #{V < t}.  A point whose magnitude is beyond the exact
range at the current threshold (its nonzero |x| or |y| about 2¹⁰⁰⁰ or more below the column's
largest, or |x − x₀| below 2⁻⁴⁰⁰ of the largest) has its pairs evaluated one by one in exact
rational arithmetic (O(n) per such point).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from dpreg.simple.fast._exact import (
    U,
    accurate_sum,
    exact_ranks,
    exact_sign,
    exponent,
    float_terms,
    two_prod,
    two_sum,
)
from dpreg.simple.fast._kernels import (
    cross_run_inversions,
    prediction_count_separated,
    resolve_backend,
)

__all__ = ["PairCounter", "exact_pair_value", "exact_pair_values", "reference_slopes",
           "reference_predictions"]

_TOP = 400  # scaled keys and thresholds stay below 2^_TOP
_PRED_TINY_T = -399  # exponent of |x − x₀| (relative to the largest) below which a point is special
_NEVER = -5000  # exponent() of 0 is far below this
#: up to this many distinct points a prediction count tries the one-pass compiled kernel
#: first (per-group sizes; above it NumPy's vectorised sort of the keys is faster)
_FUSED_MAX_POINTS = 4096


def reference_slopes(xa: np.ndarray, ya: np.ndarray, xb: np.ndarray, yb: np.ndarray) -> np.ndarray:
    """The materialising code's float slope (y_b − y_a)/(x_b − x_a) of untied pairs (used here
    only as a guide to where the pair values lie)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        s = (yb - ya) / (xb - xa)
    return np.where(np.isnan(s), 0.0, s)


def reference_predictions(xa: np.ndarray, ya: np.ndarray, xb: np.ndarray, yb: np.ndarray,
                          x0: float) -> np.ndarray:
    """The materialising code's float prediction at x0 of the line through two untied points
    (:func:`dpreg.simple.pairs.pair_estimates`; a guide only)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        num = (xb - x0) * ya + (x0 - xa) * yb
        z = num / (xb - xa)
    return np.where(np.isnan(z), 0.0, z)


def exact_pair_value(xa: float, ya: float, xb: float, yb: float, estimand: str = "slope",
                     x_eval: float | None = None) -> Fraction:
    """The exact value of an untied pair (x_a ≠ x_b) as a rational number."""
    fxa, fxb = Fraction(xa), Fraction(xb)
    if estimand == "slope":
        return (Fraction(yb) - Fraction(ya)) / (fxb - fxa)
    f0 = Fraction(x_eval)  # type: ignore[arg-type]
    return ((fxb - f0) * Fraction(ya) + (f0 - fxa) * Fraction(yb)) / (fxb - fxa)


def exact_pair_values(xa: Any, ya: Any, xb: Any, yb: Any, *, estimand: str = "slope",
                      x_eval: float | None = None) -> list[Fraction]:
    """:func:`exact_pair_value` of each pair (O(1) Python work per pair; for tests and
    reference computations)."""
    arrs = [np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in (xa, ya, xb, yb)]
    return [exact_pair_value(float(a), float(b), float(c), float(d), estimand, x_eval)
            for a, b, c, d in zip(*arrs)]


def _runs(values: np.ndarray) -> np.ndarray:
    """Start indices of runs of equal consecutive values, with the end sentinel appended."""
    if values.size == 0:
        return np.zeros(1, dtype=np.int64)
    change = np.flatnonzero(values[1:] != values[:-1]) + 1
    return np.concatenate(([0], change, [values.size])).astype(np.int64)


def _tied_keys(rank: np.ndarray, w: np.ndarray, run_of: np.ndarray) -> int:
    """Σ w_a·w_b over pairs in different runs with equal keys."""
    o = np.lexsort((run_of, rank))
    rk, ru, ww = rank[o], run_of[o], w[o]
    if not np.any(rk[1:] == rk[:-1]):
        return 0
    g = np.flatnonzero(np.concatenate(([True], rk[1:] != rk[:-1])))
    h = np.flatnonzero(np.concatenate(([True], (rk[1:] != rk[:-1]) | (ru[1:] != ru[:-1]))))
    sg = np.add.reduceat(ww, g)
    sh = np.add.reduceat(ww, h)
    return int((np.sum(sg * sg) - np.sum(sh * sh)) // 2)


def _scale(v: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """v·2^k and whether the scaling was exact."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = np.ldexp(v, k)
        ok = np.isfinite(out) & (np.ldexp(out, -k) == v)
    return out, ok


def _exp1(v: float) -> int:
    return int(exponent(np.array([v]))[0])


def _prod_ok(ea: np.ndarray | int, eb: np.ndarray | int) -> np.ndarray:
    """two_prod is exact: a factor is 0, or the exponents leave room below the product."""
    ea, eb = np.asarray(ea), np.asarray(eb)
    return (ea < _NEVER) | (eb < _NEVER) | (ea + eb >= -960)


@dataclass
class PairCounter:
    """Exact ``#{untied pairs with exact value < t}`` for all pairs of n points.

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
        xs, ys = x[order] + 0.0, y[order] + 0.0  # (+0.0 turns −0.0 into 0.0)
        new = np.ones(n, dtype=bool)
        new[1:] = (xs[1:] != xs[:-1]) | (ys[1:] != ys[:-1])
        starts = np.flatnonzero(new)
        ux, uy = xs[starts], ys[starts]
        uw = np.diff(np.append(starts, n)).astype(np.int64)
        xr = _runs(ux)
        wx = np.add.reduceat(uw, xr[:-1]) if ux.size else np.zeros(0, dtype=np.int64)
        self.n_tied = int(np.sum(wx * (wx - 1) // 2))
        self.n_untied = self.n_pairs - self.n_tied
        if self.estimand == "slope":
            self.x0: float | None = None
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
        self._sx, self._sy, self._sw = ux, uy, uw  # π: x ascending
        self._zy, self._zw = np.zeros(0), np.zeros(0, dtype=np.int64)  # no points at x0
        self._finish(ux)
        xmax = float(np.max(np.abs(ux), initial=0.0))
        self._J = -_exp1(xmax) if xmax > 0 else 0
        self._X, okx = _scale(ux, self._J)
        self._eX = exponent(self._X)
        # centre y on a data value (the key order is unchanged): y − y_ref exactly as yh + yl
        yref = float(np.median(uy)) if uy.size else 0.0
        yref = float(uy[np.argmin(np.abs(uy - yref))]) if uy.size else 0.0
        with np.errstate(over="ignore", invalid="ignore"):
            self._yh, self._yl = two_sum(uy, np.full(uy.size, -yref))
        self._ok_static = okx & np.isfinite(self._yh)
        self._ey = _exp1(float(np.max(np.abs(self._yh[self._ok_static]), initial=0.0)))
        with np.errstate(over="ignore", invalid="ignore"):
            span = float(np.max(uy, initial=0.0) - np.min(uy, initial=0.0))
            self._bound = self._value_bound(ux, span * (1 + 4 * U))

    def _prepare_predictions(self, ux: np.ndarray, uy: np.ndarray, uw: np.ndarray) -> None:
        x0 = float(self.x0)  # type: ignore[arg-type]
        with np.errstate(over="ignore", invalid="ignore"):
            th, tl = two_sum(ux, np.full(ux.size, -x0))
        on = (ux == x0)
        self._zy, self._zw = uy[on], uw[on]
        idx = np.flatnonzero(~on)
        left = idx[th[idx] < 0][::-1]
        right = idx[th[idx] > 0][::-1]
        o = np.concatenate((left, right))
        self._sx, self._sy, self._sw = ux[o], uy[o], uw[o]
        self._finish(self._sx)
        th, tl = th[o], tl[o]
        fin = np.isfinite(th) & np.isfinite(tl)
        tmax = float(np.max(np.abs(th[fin]), initial=0.0))
        self._J = -_exp1(tmax) if tmax > 0 else 0
        self._Dh, okh = _scale(np.where(fin, th, 1.0), self._J)
        self._Dl, okl = _scale(np.where(fin, tl, 0.0), self._J)
        self._eDh, self._eDl = exponent(self._Dh), exponent(self._Dl)
        self._ok_static = fin & okh & okl & (self._eDh >= _PRED_TINY_T)
        ymax = float(np.max(np.abs(uy), initial=0.0))
        self._ey = _exp1(ymax)
        self._main_weight = int(self._sw.sum())
        with np.errstate(over="ignore", invalid="ignore"):
            b = self._value_bound(self._sx, 2.0 * tmax * ymax * (1 + 4 * U))
        self._bound = max(b, ymax) if math.isfinite(tmax) else math.inf

    def _finish(self, sx: np.ndarray) -> None:
        self._runs = _runs(sx)

    @staticmethod
    def _value_bound(sorted_x: np.ndarray, numerator: float) -> float:
        """An upper bound of |V| over all untied pairs: numerator / (smallest x gap), inflated."""
        xs = np.unique(sorted_x)
        if xs.size < 2:
            return 0.0
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            gap = float(np.min(np.diff(xs)))
            b = numerator / (gap * (1 - 4 * U)) * (1 + 2.0 ** -30)
        return b if math.isfinite(b) and gap > 0 else math.inf

    # ------------------------------------------------------------------ counting
    def count(self, r: float | Fraction, *, inclusive: bool = False) -> int:
        """``#{untied pairs with exact value < r}`` (``<= r`` with ``inclusive``), exactly.
        ``r``: a float, or a Fraction that is a sum of a few floats (e.g. a 106-bit grid
        point, or one ± θ)."""
        self.evaluations += 1
        if isinstance(r, Fraction):
            R = r
        else:
            rf = float(r)
            if math.isnan(rf):
                raise ValueError("r must not be NaN")
            if rf == -math.inf:
                return 0
            if rf == math.inf:
                return self.n_untied
            R = Fraction(rf)
        if self.n_untied == 0:
            return 0
        lim = self._limit()
        if lim is not None:
            if R > lim:
                return self.n_untied
            if R < -lim:
                return 0
        on = self._count_on(R, inclusive)
        for shift in (0, 1100):  # R·2^shift as a short sum of doubles (tiny R: scale up)
            try:
                terms = float_terms(R * Fraction(2) ** shift)
            except ValueError:
                continue
            return on + self._count_main(R, terms, shift, inclusive)
        every = np.arange(self._sx.size)  # not a short sum of doubles at any scale
        return on + self._count_special(R, every, inclusive)

    def _limit(self) -> Fraction | None:
        """|V| bound of the untied pairs as an exact Fraction (cached; None if unbounded)."""
        cached: tuple[float, Fraction | None] | None = getattr(self, "_lim", None)
        if cached is None or cached[0] != self._bound:
            lim = (Fraction(self._bound) * (1 + Fraction(1, 2 ** 30))
                   if math.isfinite(self._bound) else None)
            cached = (self._bound, lim)
            self._lim = cached
        return cached[1]

    def _count_on(self, R: Fraction, inclusive: bool) -> int:
        """Pairs of a point at x0 with any point off x0: exact value y of the point at x0."""
        if self._zy.size == 0 or self._sx.size == 0:
            return 0
        t0 = float(R)  # y < R iff y < t0, or y = t0 < R (t0 is the double nearest to R)
        rest = Fraction(t0)
        below = (self._zy < t0) | ((self._zy == t0) & ((rest < R) | (inclusive and rest == R)))
        return int(np.sum(self._zw[below])) * self._main_weight

    def _count_main(self, R: Fraction, terms: list[float], shift: int, inclusive: bool) -> int:
        sx, sw = self._sx, self._sw
        if sx.size < 2:
            return 0
        if (self.estimand == "predictions" and self._backend == "numba"
                and sx.size <= _FUSED_MAX_POINTS):
            # the common case in one compiled pass: every key in range and provably apart
            # from the others (then no two keys are equal and ``inclusive`` adds nothing)
            got = self._prediction_inputs(terms, shift)
            if got is not None and got[2].all():
                fast = prediction_count_separated(got[1], got[0], self._Dh, self._Dl, sw,
                                                  self._runs)
                if fast is not None:
                    return fast
        if self.estimand == "slope":
            hi, lo, tol, ok, fns, exact = self._slope_keys(terms, shift)
        else:
            hi, lo, tol, ok, fns, exact = self._prediction_keys(terms, shift)
        cmp, ref = fns if fns is not None else (None, None)
        if ok.all():
            idx, w, runs, sub, sub_ref = None, sw, self._runs, cmp, ref
        else:
            idx = sel = np.flatnonzero(ok)
            base_cmp, base_ref = cmp, ref
            hi, lo, tol, w, runs = hi[idx], lo[idx], tol[idx], sw[idx], _runs(sx[idx])
            exact = exact[idx] if exact is not None else None

            def sub(a: np.ndarray, c: np.ndarray) -> np.ndarray:
                return base_cmp(sel[a], sel[c])  # type: ignore[misc]

            def sub_ref(a: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, ...]:
                return base_ref(sel[a], sel[c])  # type: ignore[misc]

        rank = exact_ranks(hi, lo, tol, sub, sub_ref, exact)  # type: ignore[arg-type]
        total = cross_run_inversions(rank, w, runs, backend=self._backend)
        if inclusive and rank.size > 1 and np.bincount(rank).max() > 1:
            # pairs with equal keys (value exactly R) in different runs (none: distinct ranks)
            total += _tied_keys(rank, w, np.repeat(np.arange(runs.size - 1), np.diff(runs)))
        if idx is not None:
            total += self._count_special(R, np.flatnonzero(~ok), inclusive)
        return total

    # ------------------------------------------------------------------ exact keys
    def _scaled_y(self, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """y·2^K (slope: the centred y as yh, yl; predictions: y, 0) and whether each scaling
        was exact; cached for the last K (thresholds inside the data's range share it)."""
        cached = getattr(self, "_ycache", None)
        if cached is not None and cached[0] == K:
            return cached[1]
        if self.estimand == "slope":
            h, okh = _scale(self._yh, K)
            low, okl = _scale(self._yl, K)
            out = (h, low, okh & okl)
        else:
            h, okh = _scale(self._sy, K)
            out = (h, np.zeros(0), okh)
        self._ycache = (K, out)
        return out

    def _slope_keys(self, terms: list[float], shift: int) -> tuple[Any, ...]:
        """Keys Z = (y − y_ref)·2^K − t·2^(K−J)·X with X = x·2^J, as double-doubles
        (``terms``: t·2^shift as a sum of doubles)."""
        J, size = self._J, self._sx.size
        K = _TOP - max(self._ey, _exp1(terms[0]) - shift - J)
        T, okT = _scale(np.array(terms), K - J - shift)
        if not okT.all() or np.any(np.abs(T) >= 2.0 ** 996):
            z = np.zeros(size)
            return z, z, z, np.zeros(size, dtype=bool), None, None
        X, eX = self._X, self._eX
        Yh, Yl, oky = self._scaled_y(K)
        ok = self._ok_static & oky
        parts: list[np.ndarray] = [Yh, Yl]
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            for tk in T:
                ok &= _prod_ok(_exp1(float(tk)), eX)
                if abs(math.frexp(float(tk))[0]) == 0.5:  # a power of two: the product is exact
                    parts.append(-tk * X)  # (e.g. the half-ulp term of a midpoint threshold)
                    continue
                p, e = two_prod(np.full(size, -tk), X)
                parts.extend((p, e))
            zh, zl, err = accurate_sum(parts)
        delta = float(np.max(err[ok], initial=0.0)) * (1 + 2.0 ** -40)
        tol = np.full(size, delta)
        exact = err == 0

        def cmp(i: np.ndarray, j: np.ndarray) -> np.ndarray:
            return exact_sign([v[i] for v in parts] + [-v[j] for v in parts])

        def refine(i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, ...]:
            # Z_i − C with C = the double-double of Z_j: an exact short sum again
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                h, lw, e = accurate_sum([v[i] for v in parts] + [-zh[j], -zl[j]])
            return h, lw, np.zeros(1), e * (1 + 2.0 ** -40)

        return zh, zl, tol, ok, (cmp, refine), exact

    def _prediction_inputs(self, terms: list[float], shift: int
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The threshold's terms T = t·2^K, the scaled y (Y = y·2^K) and which points are in
        the exact range, for the prediction keys; None if T cannot be scaled exactly."""
        K = _TOP - max(self._ey, _exp1(terms[0]) - shift)
        T, okT = _scale(np.array(terms), K - shift)
        if not okT.all():
            return None
        Y, _, oky = self._scaled_y(K)
        return T, Y, self._ok_static & oky

    def _prediction_keys(self, terms: list[float], shift: int) -> tuple[Any, ...]:
        """Keys U = (y − t)·2^K / ((x − x₀)·2^J) as double-doubles; |U − (hi + lo)| <=
        27u²·|hi| + κ (κ from the error of the numerator; see the bound in the comments)
        (``terms``: t·2^shift as a sum of doubles)."""
        size = self._sx.size
        got = self._prediction_inputs(terms, shift)
        if got is None:
            z = np.zeros(size)
            return z, z, z, np.zeros(size, dtype=bool), None, None
        T, Y, ok = got
        Dh, Dl = self._Dh, self._Dl
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            nh, nl, errN = accurate_sum([Y] + [np.full(size, -tk) for tk in T])
            # double-double division N/D, D = Dh + Dl exact with |Dl| <= u|Dh|:
            # q1 = fl(nh/Dh); r ≈ nh + nl − q1·D (nh − p1 is exact by Sterbenz); q2 = fl(r/Dh).
            # |U − (q1 + q2)| <= (13.1u²|nh| + 9.2u²|nh| + errN·(1 + 3u))/|Dh|
            #                <= 26u²|U| + 1.01·errN/|Dh|
            q1 = nh / Dh
            p1, e1 = two_prod(q1, Dh)
            r = (((nh - p1) - e1) + nl) - q1 * Dl
            q2 = r / Dh
            qh, ql = two_sum(q1, q2)
            kappa_i = 1.02 * errN / np.abs(Dh)
        ok &= np.isfinite(qh) & np.isfinite(ql) & np.isfinite(kappa_i)
        exact = (nh == 0) & (nl == 0) & (errN == 0)  # y = t: the key is exactly 0
        kappa = float(np.max(kappa_i[ok], initial=0.0))
        tol = 27.0 * U * U * np.abs(qh) + kappa + 2.0 ** -990
        sy, sx, x0 = self._sy, self._sx, float(self.x0)  # type: ignore[arg-type]
        eDh, eDl = self._eDh, self._eDl
        eT = [_exp1(float(tk)) for tk in T]

        def cmp(i: np.ndarray, j: np.ndarray) -> np.ndarray:
            # sign(U_i − U_j) = sign(N_i·D_j − N_j·D_i)·sign(D_i)·sign(D_j), with
            # N_i·D_j − N_j·D_i = Y_i·D_j − Y_j·D_i − T·(D_j − D_i), all exact products
            safe = np.ones(i.size, dtype=bool)
            eYi, eYj = exponent(Y[i]), exponent(Y[j])
            for ea, eb in ((eYi, eDh[j]), (eYi, eDl[j]), (eYj, eDh[i]), (eYj, eDl[i])):
                safe &= _prod_ok(ea, eb)
            for et in eT:
                for ed in (eDh[i], eDl[i], eDh[j], eDl[j]):
                    safe &= _prod_ok(et, ed)
            out = np.zeros(i.size, dtype=np.int64)
            a, c = i[safe], j[safe]
            if a.size:
                parts: list[np.ndarray] = []
                for u1, u2 in ((Y[a], Dh[c]), (Y[a], Dl[c]), (-Y[c], Dh[a]), (-Y[c], Dl[a])):
                    parts.extend(two_prod(u1, u2))
                for tk in T:
                    for d, sgn in ((Dh[c], -1.0), (Dl[c], -1.0), (Dh[a], 1.0), (Dl[a], 1.0)):
                        parts.extend(two_prod(np.full(a.size, sgn * tk), d))
                sign_d = (np.sign(Dh[a]) * np.sign(Dh[c])).astype(np.int64)
                out[safe] = exact_sign(parts) * sign_d
            f0 = Fraction(x0)
            unsafe = np.flatnonzero(~safe)
            if unsafe.size:  # the threshold as an exact rational (only needed here)
                R = sum((Fraction(float(t)) for t in terms), Fraction(0)) / Fraction(2) ** shift
            for k in unsafe:
                ua = (Fraction(float(sy[i[k]])) - R) / (Fraction(float(sx[i[k]])) - f0)
                uc = (Fraction(float(sy[j[k]])) - R) / (Fraction(float(sx[j[k]])) - f0)
                out[k] = (ua > uc) - (ua < uc)
            return out

        def refine(i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, ...]:
            # U_i − C = (N_i − C·D_i)/D_i with C = the double-double of U_j; the numerator is
            # an exact short sum up to underflow in the products (bounded by 2^-1066 each)
            ch, cl = qh[j], ql[j]
            with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
                num = [Y[i]] + [np.full(i.size, -tk) for tk in T]
                for cc in (ch, cl):
                    for d in (Dh[i], Dl[i]):
                        num.extend(two_prod(-cc, d))
                rh, rl, e = accurate_sum(num)
                e = e + 8 * 2.0 ** -1066
                d_h, d_l = Dh[i], Dl[i]
                q1 = rh / d_h
                p1, e1 = two_prod(q1, d_h)
                r = (((rh - p1) - e1) + rl) - q1 * d_l
                q2 = r / d_h
                h, lw = two_sum(q1, q2)
                absb = 1.02 * e / np.abs(d_h) + 2.0 ** -990
            return h, lw, np.full(1, 27.0 * U * U), absb

        return qh, ql, tol, ok, (cmp, refine), exact

    # ------------------------------------------------------------------ out-of-range points
    def _count_special(self, R: Fraction, special: np.ndarray, inclusive: bool) -> int:
        """Pairs with a point outside the exact range at this threshold (rational arithmetic)."""
        sx, sy, sw = self._sx, self._sy, self._sw
        est, x0 = self.estimand, self.x0
        total = 0
        is_special = np.zeros(sx.size, dtype=bool)
        is_special[special] = True
        for k in special:
            xk, yk, wk = float(sx[k]), float(sy[k]), int(sw[k])
            partners = np.flatnonzero((sx != sx[k]) & ~(is_special & (np.arange(sx.size) <= k)))
            for j in partners:
                v = exact_pair_value(xk, yk, float(sx[j]), float(sy[j]), est, x0)
                if v < R or (inclusive and v == R):
                    total += wk * int(sw[j])
        return total

    # ------------------------------------------------------------------ guidance only
    def _values(self, xa: np.ndarray, ya: np.ndarray, xb: np.ndarray, yb: np.ndarray) -> np.ndarray:
        """Approximate pair values (the materialising formula); used only to choose where the
        sampler and the order-statistic search look, never for a count."""
        if self.estimand == "slope":
            return reference_slopes(xa, ya, xb, yb)
        assert self.x0 is not None
        return reference_predictions(xa, ya, xb, yb, self.x0)
