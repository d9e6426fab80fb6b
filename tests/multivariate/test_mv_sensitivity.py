"""Brute-force sensitivities at the level the multivariate code uses them: the publicly scaled
designs (with the intercept column) of the estimators and the [0, 1]-scaled SSCP matrix, for
both neighbouring relations.  The brute force must never exceed the formula the code uses."""

import itertools
import math

import numpy as np
import pytest

from dpreg.mechanisms.sensitivity import (
    gram_sensitivity,
    lambda_min_sensitivity,
    sscp_sensitivity,
    xty_sensitivity,
)
from dpreg.multivariate._common import PublicScaling, l2_clipped_sum_sensitivity

RELATIONS = ["add-remove", "replace-one"]


def neighbours(data, grid, relation):
    data = list(data)
    if relation == "replace-one":
        for i, g in itertools.product(range(len(data)), grid):
            yield data[:i] + [g] + data[i + 1:]
    else:
        for i in range(len(data)):
            yield data[:i] + data[i + 1:]
        for g in grid:
            yield data + [g]


def brute_force(stat, grid, n, relation):
    worst = 0.0
    for data in itertools.combinations_with_replacement(range(len(grid)), n):
        recs = [grid[i] for i in data]
        base = stat(recs)
        for nb in neighbours(recs, grid, relation):
            worst = max(worst, float(np.linalg.norm(np.ravel(base - stat(nb)))))
    return worst


def upper(M):
    return M[np.triu_indices(M.shape[0])]


def gram(recs):
    Z = np.array([r[0] for r in recs]).reshape(len(recs), -1) if recs else np.zeros((0, 3))
    return upper(Z.T @ Z) if len(recs) else np.zeros(6)


def lam_min(recs):
    Z = np.array([r[0] for r in recs])
    return np.array([np.linalg.eigvalsh(Z.T @ Z)[0]])


def xty(recs):
    Z = np.array([r[0] for r in recs])
    y = np.array([r[1] for r in recs])
    return Z.T @ y


# designs used by the estimators: d = 2 features with bounds (−2, 6) and (0, 1), intercept
BOUNDS_X = [(-2.0, 6.0), (0.0, 1.0)]
RAW = [(-2.0, 0.0), (-2.0, 1.0), (6.0, 1.0), (2.0, 0.5), (6.0, 0.0), (0.0, 0.25)]


def design_grid(unit_ball, labels):
    sc = PublicScaling.from_bounds(BOUNDS_X, (-3.0, 7.0), fit_intercept=True,
                                   unit_ball=unit_ball)
    Z = sc.design(np.array(RAW))
    ys = sc.label(np.array(labels))
    return sc, [(z, float(v)) for z in Z for v in ys]


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("unit_ball", [False, True], ids=["adassp-scaling", "unit-ball"])
def test_gram_lambda_xty_on_scaled_designs(relation, unit_ball):
    sc, grid = design_grid(unit_ball, [-3.0, 2.0, 7.0])
    B, C = sc.row_norm_bound, sc.label_bound
    assert B == pytest.approx(1.0 if unit_ball else math.sqrt(3))
    bf_gram = brute_force(gram, grid, 2, relation)
    designs = [(z, 0.0) for z in sc.design(np.array(RAW))]
    bf_lam = max(brute_force(lam_min, designs, n, relation) for n in (3, 4))
    bf_xty = brute_force(xty, grid, 2, relation)
    assert bf_gram <= gram_sensitivity(B, relation) + 1e-12
    assert bf_lam <= lambda_min_sensitivity(B, relation) + 1e-12
    assert bf_xty <= xty_sensitivity(B, C, relation) + 1e-12
    # the bounds are not loose by more than the fixed intercept column costs
    assert bf_xty >= 0.5 * xty_sensitivity(B, C, relation)
    assert bf_lam >= 0.1 * lambda_min_sensitivity(B, relation)


@pytest.mark.parametrize("relation", RELATIONS)
def test_boosted_xtg_with_clipped_residuals(relation):
    """Xᵀg with rows in the unit ball and residuals clipped to [−τ, τ]: B·τ or 2·B·τ."""
    tau = 0.7
    sc, _ = design_grid(True, [0.0])
    Z = sc.design(np.array(RAW))
    grid = [(z, float(g)) for z in Z for g in np.clip([-5.0, -0.3, 0.0, 0.7, 3.0], -tau, tau)]
    bf = brute_force(xty, grid, 2, relation)
    assert bf <= xty_sensitivity(1.0, tau, relation) + 1e-12
    assert bf >= 0.9 * xty_sensitivity(1.0, tau, relation)


@pytest.mark.parametrize("relation", RELATIONS)
def test_clipped_gradient_sum(relation):
    """Σ of per-example vectors clipped to L2 norm C: C (add/remove), 2C (replace-one)."""
    from dpreg.multivariate._common import clip_rows

    C = 1.5
    raw = np.array([[3.0, 0.0], [-3.0, 0.0], [0.0, 2.0], [1.0, 1.0], [0.2, -0.1]])
    vecs = clip_rows(raw, C)
    grid = [(v, 0.0) for v in vecs]

    def total(recs):
        return np.sum([r[0] for r in recs], axis=0) if recs else np.zeros(2)

    bf = brute_force(total, grid, 2, relation)
    assert bf == pytest.approx(l2_clipped_sum_sensitivity(C, relation))


def sscp_upper(d):
    def stat(recs):
        D = np.array([np.r_[1.0, r[0]] for r in recs]).reshape(len(recs), d + 1)
        return upper(D.T @ D)
    return stat


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("d", [1, 2, 3])
def test_sscp_scaled_with_intercept(relation, d):
    """Rows [1, x′] with x′ ∈ [0, 1]^d.  The code uses d + 1 (add/remove) and √2·(d + 1)
    (replace-one); the exact values on the upper triangle are smaller:
    √((d+1)(d+2)/2) and √((d+1)(d+2)/2 − 1) (attained at the corners)."""
    grid = [(np.array(p, dtype=float), 0.0) for p in itertools.product([0.0, 0.5, 1.0], repeat=d)]
    bf = brute_force(sscp_upper(d), grid, 2 if d < 3 else 1, relation)
    used = sscp_sensitivity(d, relation, intercept=True)
    assert bf <= used + 1e-12
    exact = math.sqrt((d + 1) * (d + 2) / 2 - (0 if relation == "add-remove" else 1))
    assert bf == pytest.approx(exact)
