"""Sensitivity formulas as named pure functions.

Each function states the neighbouring relation it is for.  Replace-one ("bounded") neighbours
have the same public size n and differ in one record; add/remove ("unbounded") neighbours differ
by one record's presence.  The test-suite checks every formula against brute force over small
grids of neighbouring datasets, including asymmetric bounds (which catch the "lower bound used
twice" bug of diffprivlib issue #105).
"""

from __future__ import annotations

import math

from dpreg._validation import check_bounds, check_int, check_positive
from dpreg.exceptions import InvalidInputError
from dpreg.privacy.neighbours import Neighbouring, check_neighbouring

__all__ = [
    "sum_sensitivity",
    "mean_sensitivity",
    "nvar_sensitivity",
    "ncov_sensitivity",
    "gram_sensitivity",
    "lambda_min_sensitivity",
    "xty_sensitivity",
    "clipped_box_sum_sensitivity",
    "sscp_sensitivity",
]


def _finite(value: float, what: str) -> float:
    """A sensitivity that overflows floating point is an input error (bounds or norms too
    large), not an infinite noise scale."""
    if not math.isfinite(value):
        raise InvalidInputError(f"the sensitivity of {what} overflows floating point; use "
                                "smaller bounds or clipping norms")
    return value


def sum_sensitivity(bounds: tuple[float, float], neighbouring: str | Neighbouring) -> float:
    """Σ of values clipped to [a, b].  Add/remove: max(|a|, |b|); replace-one: b − a."""
    a, b = check_bounds(bounds, "bounds")
    rel = check_neighbouring(neighbouring)
    return max(abs(a), abs(b)) if rel is Neighbouring.ADD_REMOVE else b - a


def mean_sensitivity(bounds: tuple[float, float], n: int) -> float:
    """Mean of n values in [a, b] with n public (replace-one only): (b − a)/n."""
    a, b = check_bounds(bounds, "bounds")
    n = check_int(n, "n", minimum=1)
    return (b - a) / n


def nvar_sensitivity(bounds: tuple[float, float], n: int) -> float:
    """nvar(x) = Σ(x_i − x̄)² for x_i in [a, b], replace-one, n public: (1 − 1/n)(b − a)².

    Alabi et al. (2022, Lemma 18) write (1 − 1/n)·b², which equals this only for a = 0 and is
    wrong for a < 0; nvar is translation invariant so only the width matters.
    """
    a, b = check_bounds(bounds, "bounds")
    n = check_int(n, "n", minimum=1)
    return (1.0 - 1.0 / n) * (b - a) ** 2


def ncov_sensitivity(x_bounds: tuple[float, float], y_bounds: tuple[float, float], n: int) -> float:
    """ncov(x, y) = Σ(x_i − x̄)(y_i − ȳ), replace-one, n public: (1 − 1/n)·w_x·w_y."""
    a, b = check_bounds(x_bounds, "x_bounds")
    c, d = check_bounds(y_bounds, "y_bounds")
    n = check_int(n, "n", minimum=1)
    return (1.0 - 1.0 / n) * (b - a) * (d - c)


def gram_sensitivity(row_norm_bound: float, neighbouring: str | Neighbouring) -> float:
    """XᵀX (Frobenius norm, equivalently its upper triangle incl. the diagonal) for rows with
    ‖x‖₂ <= B.  Add/remove: B²; replace-one: √2·B² (attained by orthogonal x, x′)."""
    bnd = check_positive(row_norm_bound, "row_norm_bound")
    rel = check_neighbouring(neighbouring)
    sq = _finite(bnd * bnd, "X^T X")
    return sq if rel is Neighbouring.ADD_REMOVE else _finite(math.sqrt(2.0) * sq, "X^T X")


def lambda_min_sensitivity(row_norm_bound: float, neighbouring: str | Neighbouring) -> float:
    """Smallest eigenvalue of XᵀX, rows ‖x‖₂ <= B: B² under both relations (Weyl's inequality:
    adding xxᵀ moves every eigenvalue by at most ‖x‖²; replacing is a rank-two update whose
    eigenvalues lie in [−B², B²])."""
    bnd = check_positive(row_norm_bound, "row_norm_bound")
    check_neighbouring(neighbouring)
    return _finite(bnd * bnd, "lambda_min(X^T X)")


def xty_sensitivity(row_norm_bound: float, label_bound: float,
                    neighbouring: str | Neighbouring) -> float:
    """Xᵀy (L2) for ‖x‖₂ <= B and |y| <= C.  Add/remove: B·C; replace-one: 2·B·C."""
    bnd = check_positive(row_norm_bound, "row_norm_bound")
    c = check_positive(label_bound, "label_bound")
    rel = check_neighbouring(neighbouring)
    return _finite(bnd * c if rel is Neighbouring.ADD_REMOVE else 2.0 * bnd * c, "X^T y")


def clipped_box_sum_sensitivity(tau: float, dim: int, neighbouring: str | Neighbouring,
                                norm: str = "l2") -> float:
    """Σ of per-example vectors box-clipped to [−τ, τ]^dim.

    L2: add/remove √dim·τ, replace-one 2√dim·τ.  L1: add/remove dim·τ, replace-one 2·dim·τ.
    (dim = 2 gives the DP gradient descent constants of Alabi et al.: √2τ/2√2τ and 2τ/4τ.)
    """
    tau = check_positive(tau, "tau")
    dim = check_int(dim, "dim", minimum=1)
    rel = check_neighbouring(neighbouring)
    if norm == "l2":
        base = math.sqrt(dim) * tau
    elif norm == "l1":
        base = dim * tau
    else:
        raise InvalidInputError(f"norm must be 'l1' or 'l2'; got {norm!r}")
    return _finite(base if rel is Neighbouring.ADD_REMOVE else 2.0 * base, "a clipped sum")


def sscp_sensitivity(n_columns: int, neighbouring: str | Neighbouring, *,
                     intercept: bool = True) -> float:
    """SSCP matrix DᵀD (upper triangle, L2) after every column is scaled to [0, 1].

    A row has squared norm at most d (+1 with the intercept column of ones), so the
    sensitivity is the squared row-norm bound: d (+1) under add/remove, √2·(d (+1)) under
    replace-one.  (Bain et al. state √d, which is the row norm, not the sensitivity.)
    """
    d = check_int(n_columns, "n_columns", minimum=1)
    squared_norm = float(d + (1 if intercept else 0))
    rel = check_neighbouring(neighbouring)
    return squared_norm if rel is Neighbouring.ADD_REMOVE else math.sqrt(2.0) * squared_norm
