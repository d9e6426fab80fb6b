"""Shared helpers of the multivariate mechanisms: clipping, public scaling, noise, solving.

Everything here is either a per-record transformation that uses only public quantities
(bounds, clipping norms) -- so it never changes the neighbouring structure of the data -- or
post-processing of released values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpreg._validation import (  # check_choice: re-exported for this package
    check_bounds,
    check_choice,
    check_positive,
    check_xy,
)
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms.gaussian import gaussian
from dpreg.privacy.budgets import Budget
from dpreg.privacy.neighbours import Neighbouring, check_neighbouring
from dpreg.privacy.notices import warn_if_not_private  # re-exported for this package

__all__ = [
    "clip_rows",
    "clip_labels",
    "l2_clipped_sum_sensitivity",
    "noisy_symmetric",
    "solve_sym",
    "learning_rates",
    "check_choice",
    "check_design",
    "column_names",
    "warn_if_not_private",
    "PublicScaling",
    "fill_rows",
    "clip_columns",
    "SCHEDULES",
]

SCHEDULES = ("constant", "1/t", "1/sqrt(t)")


def clip_rows(X: np.ndarray, bound: float) -> np.ndarray:
    """Scale every row with ‖x‖₂ > ``bound`` down to norm ``bound``: x·min(1, B/‖x‖)."""
    norms = np.linalg.norm(X, axis=1)
    with np.errstate(divide="ignore"):
        factor = np.where(norms > bound, bound / np.where(norms > 0, norms, 1.0), 1.0)
    return X * factor[:, None]


def clip_labels(y: np.ndarray, bound: float) -> np.ndarray:
    """Clip values to [−bound, bound]."""
    return np.clip(y, -bound, bound)


def l2_clipped_sum_sensitivity(clip_norm: float, neighbouring: str | Neighbouring) -> float:
    """L2 sensitivity of Σ_i v_i where every v_i has ‖v_i‖₂ <= C.

    Add/remove: one vector appears or disappears, so C.  Replace-one: v_i becomes v_i', and
    ‖v_i − v_i'‖ <= 2C (attained by v_i' = −v_i).
    """
    c = check_positive(clip_norm, "clip_norm")
    rel = check_neighbouring(neighbouring)
    return c if rel is Neighbouring.ADD_REMOVE else 2.0 * c


def noisy_symmetric(M: np.ndarray, *, sensitivity: float, budget: Budget, rng: Any,
                    calibration: str = "analytic") -> np.ndarray:
    """Gaussian mechanism on the upper triangle (incl. diagonal) of a symmetric matrix,
    mirrored to the lower triangle (one noise draw per distinct entry)."""
    d = M.shape[0]
    iu = np.triu_indices(d)
    upper = gaussian(M[iu], sensitivity=sensitivity, budget=budget, rng=rng,
                     calibration=calibration)
    out = np.zeros_like(M, dtype=float)
    out[iu] = upper
    out = out + np.triu(out, 1).T
    return out


def solve_sym(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve A x = b for a symmetric (possibly singular or indefinite) A.

    Uses an LU solve when A is well conditioned and the Moore-Penrose pseudo-inverse
    otherwise (as the reference implementations do).  Pure post-processing.
    """
    try:
        cond = np.linalg.cond(A)
        if np.isfinite(cond) and cond < 1e12:
            return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        pass
    return np.linalg.pinv(A, hermitian=True) @ b


def learning_rates(schedule: str, base: float, n_steps: int) -> np.ndarray:
    """η_t for t = 1..T: ``constant`` η, ``1/t`` η/t, ``1/sqrt(t)`` η/√t."""
    t = np.arange(1, n_steps + 1, dtype=float)
    if schedule == "constant":
        return np.full(n_steps, base)
    if schedule == "1/t":
        return base / t
    return base / np.sqrt(t)


def column_names(X: Any, d: int, names: Sequence[str] | None = None) -> list[str]:
    """Names for the columns of a design: explicit ``names``, DataFrame columns, or x0..x{d-1}."""
    if names is not None:
        out = [str(n) for n in names]
        if len(out) != d:
            raise InvalidInputError(f"names must have one entry per column of X ({d}); "
                                    f"got {len(out)}")
        return out
    cols = getattr(X, "columns", None)
    if cols is not None and len(cols) == d:
        return [str(c) for c in cols]
    return [f"x{j}" for j in range(d)]


def check_design(X: Any, y: Any, *, min_rows: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Validate a design matrix ``X`` (n×d, finite) and response ``y`` (n, finite)."""
    if y is None:
        raise InvalidInputError(
            "y is required: this estimator requires y to be passed, but the target y is None"
        )
    return check_xy(X, y, x_ndim=2, min_rows=min_rows, x_name="X", y_name="y")


@dataclass(frozen=True)
class PublicScaling:
    """Affine rescaling of features and label computed from PUBLIC bounds only.

    With an intercept every feature is clamped to its public [lo, hi] and mapped to [−1, 1] by
    (x − mid)/half-width, and the label likewise (when its bounds are given); a column of ones is
    put first.  Without an intercept no centring is allowed (it would add an implicit
    intercept), so features are divided by max(|lo|, |hi|) instead.  With ``unit_ball`` every
    column (the ones column included) is further multiplied by 1/√p, p the number of columns,
    so that every row has ‖z‖₂ <= 1 -- what BoostedAdaSSP's B_x = 1 and the gradient methods
    assume.  The map is per record and data independent, so it does not affect privacy; fitted
    coefficients are mapped back exactly by :meth:`to_original`.
    """

    lows: np.ndarray
    highs: np.ndarray
    shift: np.ndarray
    scale: np.ndarray
    y_bounds: tuple[float, float] | None
    y_shift: float
    y_scale: float
    fit_intercept: bool
    column_factor: float

    @classmethod
    def from_bounds(cls, bounds_X: Sequence[tuple[float, float]],
                    bounds_y: Any | None, *, fit_intercept: bool,
                    unit_ball: bool = False) -> PublicScaling:
        lows = np.array([b[0] for b in bounds_X], dtype=float)
        highs = np.array([b[1] for b in bounds_X], dtype=float)
        if fit_intercept:
            shift = (lows + highs) / 2.0
            scale = (highs - lows) / 2.0
        else:
            shift = np.zeros_like(lows)
            scale = np.maximum(np.abs(lows), np.abs(highs))  # > 0 because lo < hi
        yb: tuple[float, float] | None = None
        y_shift, y_scale = 0.0, 1.0
        if bounds_y is not None:
            yb = check_bounds(bounds_y, "bounds_y")
            if fit_intercept:
                y_shift, y_scale = (yb[0] + yb[1]) / 2.0, (yb[1] - yb[0]) / 2.0
            else:
                y_shift, y_scale = 0.0, max(abs(yb[0]), abs(yb[1]))
        p = lows.size + (1 if fit_intercept else 0)
        factor = 1.0 / math.sqrt(p) if unit_ball else 1.0
        return cls(lows, highs, shift, scale, yb, y_shift, y_scale, bool(fit_intercept), factor)

    @property
    def n_columns(self) -> int:
        return self.lows.size + (1 if self.fit_intercept else 0)

    @property
    def row_norm_bound(self) -> float:
        """Public bound on ‖z‖₂ of a transformed row (√p, or 1 with ``unit_ball``)."""
        return math.sqrt(self.n_columns) * self.column_factor

    @property
    def label_bound(self) -> float | None:
        """Public bound on |y| of the transformed label (1), or None without label bounds."""
        return None if self.y_bounds is None else 1.0

    def design(self, X: np.ndarray) -> np.ndarray:
        Xc = np.clip(X, self.lows, self.highs)
        Z = (Xc - self.shift) / self.scale
        if self.fit_intercept:
            Z = np.column_stack([np.ones(Z.shape[0]), Z])
        return Z * self.column_factor

    def label(self, y: np.ndarray) -> np.ndarray:
        if self.y_bounds is None:
            return np.asarray(y, dtype=float)
        yc = np.clip(y, self.y_bounds[0], self.y_bounds[1])
        return (yc - self.y_shift) / self.y_scale

    def to_original(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """(intercept, coef) in original units for coefficients ``theta`` on the design."""
        theta = np.asarray(theta, dtype=float) * self.column_factor
        if self.fit_intercept:
            t0, tj = float(theta[0]), theta[1:]
        else:
            t0, tj = 0.0, theta
        coef = self.y_scale * tj / self.scale
        intercept = self.y_shift + self.y_scale * (t0 - float(np.sum(tj * self.shift / self.scale)))
        if not self.fit_intercept:
            intercept = 0.0
        return intercept, coef


def fill_rows(parts: Sequence[np.ndarray], scaling: PublicScaling | None, ZT: np.ndarray,
              yv: np.ndarray) -> None:
    """Write one chunk of [X | y] -- column blocks side by side (1-D or 2-D row slices of equal
    length; the last column is y) -- into the work buffers ``ZT`` (p×m: one row per design
    column, so that every step below runs on contiguous memory) and ``yv`` (m): the design
    rows (the columns of ``ZT``) and the label.  With ``scaling`` these are
    :meth:`PublicScaling.design` and :meth:`PublicScaling.label` of the chunk (the same
    operations in the same order, so the same numbers, computed in place); without it X and y
    are copied as they are.  Per record and public: the chunked statistics steps (AdaSSP's
    Gram, BoostedAdaSSP's passes) use it so that no copy of the size of the data is made."""
    m = ZT.shape[1]
    blocks = [np.asarray(b).reshape(m, -1) for b in parts]
    d = sum(b.shape[1] for b in blocks) - 1
    off = 1 if scaling is not None and scaling.fit_intercept else 0
    j = 0
    for b in blocks:  # the x columns into ZT (clamped to the bounds with scaling), y into yv
        k = b.shape[1]
        nx = max(0, min(k, d - j))
        if nx:
            dst = ZT[off + j:off + j + nx]
            src = b[:, :nx].T
            if scaling is None:
                dst[...] = src
            else:
                np.clip(src, scaling.lows[j:j + nx, None], scaling.highs[j:j + nx, None],
                        out=dst)
        if nx < k:
            yv[...] = b[:, nx]
        j += k
    if scaling is None:
        return
    V = ZT[off:]
    V -= scaling.shift[:, None]
    V /= scaling.scale[:, None]
    if off:
        ZT[0] = 1.0
    if scaling.column_factor != 1.0:
        ZT *= scaling.column_factor
    if scaling.y_bounds is not None:
        np.clip(yv, scaling.y_bounds[0], scaling.y_bounds[1], out=yv)
        yv -= scaling.y_shift
        yv /= scaling.y_scale


def clip_columns(ZT: np.ndarray, bound: float) -> None:
    """:func:`clip_rows` in place for rows stored as the columns of ``ZT`` (p×m): z·B/‖z‖
    where ‖z‖ > B, with ‖z‖² summed over the p coordinates in order."""
    sq = ZT[0] * ZT[0]
    for k in range(1, ZT.shape[0]):
        sq += ZT[k] * ZT[k]
    norms = np.sqrt(sq)
    over = norms > bound
    if over.any():
        ZT[:, over] *= bound / norms[over]
