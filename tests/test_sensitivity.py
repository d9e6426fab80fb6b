"""Sensitivity formulas against brute force over neighbouring datasets (both relations)."""

import itertools
import math

import numpy as np
import pytest

from dpreg import InvalidInputError
from dpreg.mechanisms import sensitivity as S


def neighbours(data, grid, relation):
    """All neighbours of a tuple of records under the relation (records drawn from grid)."""
    data = list(data)
    if relation == "replace-one":
        for i, g in itertools.product(range(len(data)), grid):
            yield data[:i] + [g] + data[i + 1:]
    else:
        for i in range(len(data)):
            if len(data) > 1:
                yield data[:i] + data[i + 1:]
        for g in grid:
            yield data + [g]


def brute_force(stat, grid, n, relation, dist=lambda a, b: float(np.max(np.abs(a - b)))):
    worst = 0.0
    for data in itertools.combinations_with_replacement(grid, n):
        base = stat(list(data))
        for nb in neighbours(data, grid, relation):
            if relation == "replace-one" and len(nb) != n:
                continue
            worst = max(worst, dist(np.asarray(base, float), np.asarray(stat(nb), float)))
    return worst


GRID_1D = [-1.0, 0.0, 1.5, 3.0]  # asymmetric bounds [-1, 3]
BOUNDS = (-1.0, 3.0)
l2 = lambda a, b: float(np.linalg.norm(np.ravel(a - b)))  # noqa: E731


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_sum(relation, n):
    bf = brute_force(lambda d: sum(d), GRID_1D, n, relation)
    assert bf == pytest.approx(S.sum_sensitivity(BOUNDS, relation))


def test_sum_catches_lower_bound_used_twice():
    """diffprivlib #105: max(|lo|, |lo|) instead of max(|lo|, |hi|)."""
    buggy = max(abs(BOUNDS[0]), abs(BOUNDS[0]))
    bf = brute_force(lambda d: sum(d), GRID_1D, 2, "add-remove")
    assert bf > buggy + 1  # the brute-force check rejects the buggy formula
    assert bf == S.sum_sensitivity(BOUNDS, "add-remove")


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_mean(n):
    assert brute_force(np.mean, GRID_1D, n, "replace-one") == pytest.approx(
        S.mean_sensitivity(BOUNDS, n))


def nvar(d):
    d = np.asarray(d, float)
    return float(np.sum((d - d.mean()) ** 2))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_nvar(n):
    bf = brute_force(nvar, GRID_1D, n, "replace-one")
    assert bf == pytest.approx(S.nvar_sensitivity(BOUNDS, n))
    # Alabi et al.'s (1 - 1/n) r_u^2 under-states it when r_l < 0
    assert bf > (1 - 1 / n) * BOUNDS[1] ** 2


@pytest.mark.parametrize("n", [2, 3])
def test_ncov(n):
    xs, ys = [-1.0, 0.5, 3.0], [0.0, 2.0, 5.0]
    grid = list(itertools.product(xs, ys))

    def ncov(d):
        a = np.asarray(d, float)
        return float(np.sum((a[:, 0] - a[:, 0].mean()) * (a[:, 1] - a[:, 1].mean())))

    bf = brute_force(ncov, grid, n, "replace-one")
    assert bf == pytest.approx(S.ncov_sensitivity((-1, 3), (0, 5), n))


def ball_grid(B, d=2):
    pts = [np.zeros(d)]
    for k in range(8):
        ang = k * math.pi / 4
        for r in (B, B / 2):
            v = np.zeros(d)
            v[0], v[1] = r * math.cos(ang), r * math.sin(ang)
            pts.append(v)
    return [tuple(p) for p in pts]


def gram(d):
    X = np.asarray(d, float).reshape(len(d), -1)
    return X.T @ X


def upper(m):
    return m[np.triu_indices(m.shape[0])]


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_gram(relation):
    B = 1.5
    grid = ball_grid(B)
    bf = brute_force(gram, grid, 2, relation, dist=l2)
    assert bf == pytest.approx(S.gram_sensitivity(B, relation))
    bf_upper = brute_force(lambda d: upper(gram(d)), grid, 2, relation, dist=l2)
    assert bf_upper <= S.gram_sensitivity(B, relation) + 1e-12
    assert bf_upper == pytest.approx(S.gram_sensitivity(B, relation))  # tight for this grid


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_lambda_min(relation):
    B = 2.0
    grid = ball_grid(B)
    bf = brute_force(lambda d: np.linalg.eigvalsh(gram(d))[0], grid, 3, relation)
    assert bf <= S.lambda_min_sensitivity(B, relation) + 1e-12
    assert bf == pytest.approx(B**2)  # attained


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_xty(relation):
    B, C = 1.5, 2.0
    grid = [(*x, y) for x in ball_grid(B) for y in (-C, 0.0, C)]

    def xty(d):
        a = np.asarray(d, float)
        return a[:, :2].T @ a[:, 2]

    bf = brute_force(xty, grid, 2, relation, dist=l2)
    assert bf == pytest.approx(S.xty_sensitivity(B, C, relation))


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_box_clipped_sum(relation, norm):
    tau, dim = 0.7, 2
    corners = [tuple(c) for c in itertools.product((-tau, 0.0, tau), repeat=dim)]
    dist = l2 if norm == "l2" else (lambda a, b: float(np.sum(np.abs(a - b))))
    bf = brute_force(lambda d: np.sum(np.asarray(d, float), axis=0), corners, 2, relation,
                     dist=dist)
    assert bf == pytest.approx(S.clipped_box_sum_sensitivity(tau, dim, relation, norm))


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_sscp(relation):
    d = 2
    rows = [(1.0, *c) for c in itertools.product((0.0, 0.5, 1.0), repeat=d)]

    def sscp(data):
        D = np.asarray(data, float)
        return upper(D.T @ D)

    bf = brute_force(sscp, rows, 2, relation, dist=l2)
    assert bf <= S.sscp_sensitivity(d, relation) + 1e-12
    full = brute_force(lambda data: np.asarray(data, float).T @ np.asarray(data, float), rows, 2,
                       relation, dist=l2)
    assert full <= S.sscp_sensitivity(d, relation) + 1e-12
    if relation == "add-remove":
        assert full == pytest.approx(d + 1)  # the all-ones row attains the squared-norm bound
    # Bain et al.'s √d is too small
    assert bf > math.sqrt(d)


def test_bad_arguments():
    with pytest.raises(InvalidInputError, match="neighbouring"):
        S.sum_sensitivity((0, 1), "sideways")
    with pytest.raises(InvalidInputError, match="bounds"):
        S.sum_sensitivity((1, 0), "add-remove")
    with pytest.raises(InvalidInputError, match="norm"):
        S.clipped_box_sum_sensitivity(1.0, 2, "add-remove", norm="linf")
