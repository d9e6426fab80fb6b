"""A public rule for DP-GD's step count T and gradient clip C_g from n, d and ε (issue 30,
item 1; docs/accuracy.md §7.6).  Tuned on the DEV and TUNING data sets only
(:mod:`studies.accuracy.data`: wage1, bwght, diabetes, fair, and row subsamples of fair and
bwght for smaller n); the held-out benchmark sets are evaluated afterwards by
:mod:`studies.accuracy.harness` with the library's estimator.

``python -m studies.accuracy.dpgd_rule [--splits S --draws R]`` writes
docs/accuracy-data/dpgd_rule.json: for every dev cell (data set, n, ε) and every (T, C_g) of a
grid, the median relative coefficient error over S train splits × R noise draws; then the
rule family's fitted constants and its score (geometric-mean ratio to the per-cell best).

The simulator :func:`dpgd_batch` is dpreg's clipped DP-GD (:func:`dpreg.multivariate.
dp_gradient_descent`: replace-one, μ-GDP accounting, constant η, tail average) for R noise
draws at once, with float Gaussian noise in place of the library's secure sampler (the same
law up to its discretisation); :func:`check_simulator` compares the two on one cell.

Why the rule has this form (the noisy-quadratic picture of GD on the squared loss, on rows in
the unit ball): in an eigendirection of ZᵀZ/n with eigenvalue λ, T steps of size η act like a
ridge of strength ≈ 1/(2ηT) (early stopping), and the tail average of the iterates carries a
noise sd of about √2·C_g/(μ·n·λ) once converged (the per-round noise 2C_g√T/μ, divided by n,
integrated over the correlation time 1/(2ηλ) and averaged over T/2 iterates).  Directions with
λ below the noise-to-signal level ≈ C_g/(μn) should be regularised, i.e. ηT ≈ μn/(k·C_g):
T grows with μ·n (more data or more ε: fewer directions are noise-dominated) and shrinks with
C_g.  The clip C_g scales the noise linearly; below the typical per-example gradient norm it
also biases (a Huber-type fit) and slows the early steps.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from typing import Any

import numpy as np

from studies.accuracy import data as D
from studies.accuracy.harness import OUT, ols, split

EPSILONS = (0.5, 1.0, 4.0)
DELTA = 1e-6
ETA = 0.5
T_GRID = (50, 100, 200, 400, 800, 1600, 3200)
C_GRID = (0.03125, 0.0625, 0.125, 0.25, 0.5, 1.0)
#: dev cells: (data set, rows used or None for all)
CELLS = (("wage1", None), ("bwght", None), ("bwght", 500), ("diabetes", None),
         ("fair", None), ("fair", 500), ("fair", 2000))


def mu_of(epsilon: float, delta: float = DELTA) -> float:
    from dpreg.privacy import GDP

    return float(GDP.from_approx(epsilon, delta).mu)


def dpgd_batch(Z: np.ndarray, yl: np.ndarray, *, mu: float, n_iter: int, clip: float,
               draws: int, rng: np.random.Generator, eta: float = ETA,
               theta0: np.ndarray | None = None) -> np.ndarray:
    """``draws`` runs of dpreg's clipped DP-GD on the scaled design ``Z`` (rows in the unit
    ball) and label ``yl``: replace-one (sensitivity 2·C_g, n public), μ/√T per round,
    θ ← θ − η·(noisy clipped gradient sum)/n from ``theta0`` (default 0; the library's warm
    start is :func:`dpreg.multivariate.dpgd.dpgd_warm_start`), the mean of the last ⌈T/2⌉
    iterates.  ``Z`` (n×p) and ``yl`` (n) or a stack of S splits of equal size, ``Z``
    (S×n×p) and ``yl`` (S×n); the result is (draws×p) or (S×draws×p)."""
    single = Z.ndim == 2
    Zs = Z[None] if single else Z
    ys = yl[None] if single else yl
    S, n, p = Zs.shape
    sd = 2.0 * clip * math.sqrt(n_iter) / mu
    theta = np.zeros((S, draws, p)) + (0.0 if theta0 is None else np.asarray(theta0, float))
    tail = np.zeros((S, draws, p))
    start = n_iter // 2
    norms = np.linalg.norm(Zs, axis=2)[:, None, :]     # S × 1 × n
    ZT = np.swapaxes(Zs, 1, 2)
    for t in range(n_iter):
        resid = theta @ ZT - ys[:, None, :]              # S × draws × n
        g = 2.0 * np.abs(resid) * norms
        f = np.where(g > clip, clip / np.where(g > 0, g, 1.0), 1.0)
        total = (2.0 * resid * f) @ Zs                    # S × draws × p
        theta = theta - eta * (total + rng.normal(0.0, sd, total.shape)) / n
        if t >= start:
            tail += theta
    out = tail / (n_iter - start)
    return out[0] if single else out


def _cell_data(name: str, rows: int | None, rep: int) -> tuple[Any, ...]:
    """Train split ``rep`` of a dev data set (optionally a public random subsample of
    ``rows`` rows first), scaled as the estimator scales it, and its OLS slopes."""
    from dpreg.multivariate._common import PublicScaling

    X, y, bx, by = D.load(name)
    if rows is not None:
        keep = np.random.default_rng(77 + rows).permutation(len(y))[:rows]
        X, y = X[keep], y[keep]
    tr, _ = split(len(y), rep)
    Xtr, ytr = X[tr], y[tr]
    sc = PublicScaling.from_bounds(bx, by, fit_intercept=True, unit_ball=True)
    return sc.design(Xtr), sc.label(ytr), sc, ols(Xtr, ytr)[1]


def rel_errors(thetas: np.ndarray, sc: Any, b_ols: np.ndarray) -> np.ndarray:
    out = []
    for th in thetas:
        b = sc.to_original(th)[1]
        out.append(float(np.linalg.norm(b - b_ols) / np.linalg.norm(b_ols)))
    return np.asarray(out)


def grid(splits: int, draws: int) -> dict[str, Any]:
    res: dict[str, Any] = {}
    for name, rows in CELLS:
        data = [_cell_data(name, rows, rep) for rep in range(splits)]
        Zs = np.stack([d[0] for d in data])
        ys = np.stack([d[1] for d in data])
        n, p = data[0][0].shape
        for eps in EPSILONS:
            mu = mu_of(eps)
            key = f"{name}{'' if rows is None else '@' + str(rows)}|{eps:g}"
            cell: dict[str, float] = {}
            for T in T_GRID:
                for C in C_GRID:
                    rng = np.random.default_rng([T, int(C * 1e4), int(eps * 10), n])
                    th = dpgd_batch(Zs, ys, mu=mu, n_iter=T, clip=C, draws=draws, rng=rng)
                    errs = np.concatenate([rel_errors(th[k], d[2], d[3])
                                           for k, d in enumerate(data)])
                    cell[f"{T}|{C:g}"] = float(np.median(errs))
            res[key] = {"n": n, "p": p, "epsilon": eps, "mu": mu, "errors": cell}
            best = min(cell, key=lambda k: cell[k])
            print(f"{key}: n={n} p={p} best {best} {cell[best]:.3f}", flush=True)
    return res


def interpolate(errs: dict[str, float], T: float, C: float) -> float:
    """The grid's median error at (T, C): bilinear in (log₂ T, log₂ C) on the log error,
    clamped to the grid's edges (a rule between grid points is scored between them)."""
    lt, lc = np.log2(np.array(T_GRID, float)), np.log2(np.array(C_GRID, float))
    x = min(max(math.log2(T), lt[0]), lt[-1])
    y = min(max(math.log2(C), lc[0]), lc[-1])
    i = min(int(np.searchsorted(lt, x, side="right")) - 1, len(lt) - 2)
    j = min(int(np.searchsorted(lc, y, side="right")) - 1, len(lc) - 2)
    fx, fy = (x - lt[i]) / (lt[i + 1] - lt[i]), (y - lc[j]) / (lc[j + 1] - lc[j])

    def g(a: int, b: int) -> float:
        return math.log(errs[f"{T_GRID[a]}|{C_GRID[b]:g}"])

    return math.exp((1 - fx) * (1 - fy) * g(i, j) + fx * (1 - fy) * g(i + 1, j)
                    + (1 - fx) * fy * g(i, j + 1) + fx * fy * g(i + 1, j + 1))


def score(res: dict[str, Any], choose: Any) -> tuple[float, float, list[float]]:
    """(geometric-mean ratio to the per-cell best, worst ratio, ratios) of a rule ``choose``
    (n, p, μ -> (T, C)) over the dev cells."""
    ratios = []
    for cell in res.values():
        T, C = choose(cell["n"], cell["p"], cell["mu"])
        ratios.append(interpolate(cell["errors"], T, C) / min(cell["errors"].values()))
    return float(math.exp(np.mean(np.log(ratios)))), float(max(ratios)), ratios


def fixed_steps_rule(T: int, a: float) -> Any:
    """The shipped family: T fixed, C_g = min(1, a·μn/(p·T)) -- the travel T·C_g = a·μn/p."""
    return lambda n, p, mu: (T, min(1.0, a * mu * n / (p * T)))


def sqrt_rule(a: float, c0: float) -> Any:
    """The alternative family: C_g = min(1, c0·√s), T = clamp(a·s/C_g, 50, 2000), s = μn/p."""
    def rule(n: int, p: int, mu: float) -> tuple[float, float]:
        sc = mu * n / p
        C = min(1.0, max(1 / 32, c0 * math.sqrt(sc)))
        return min(2000.0, max(50.0, a * sc / C)), C
    return rule


def fit_rule(res: dict[str, Any]) -> dict[str, Any]:
    """Grid search of both families' constants on the dev cells; the shipped rule's score; the
    best fixed (T, C) and the old defaults for reference."""
    from dpreg.multivariate.dpgd import DPGD_AUTO_STEPS, DPGD_TRAVEL

    fixed = sorted((score(res, fixed_steps_rule(T, a))[0], T, a)
                   for T in (400, 800, 1000, 1200, 1600, 2000, 3200)
                   for a in (0.75, 1.0, 1.25, 1.5, 2.0, 3.0))
    sqrt = sorted((score(res, sqrt_rule(a, c0))[0], a, c0)
                  for a in (0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
                  for c0 in (0.01, 0.015, 0.02, 0.03, 0.04))
    const = sorted((score(res, lambda n, p, mu, T=T, C=C: (T, C))[0], T, C)
                   for T in T_GRID for C in C_GRID)
    shipped = score(res, fixed_steps_rule(DPGD_AUTO_STEPS, DPGD_TRAVEL))
    old = score(res, lambda n, p, mu: (100, 1.0))
    return {"shipped": {"T": DPGD_AUTO_STEPS, "travel": DPGD_TRAVEL, "geomean": shipped[0],
                        "worst": shipped[1], "ratios": dict(zip(res, shipped[2]))},
            "old_defaults": {"geomean": old[0], "worst": old[1],
                             "ratios": dict(zip(res, old[2]))},
            "fixed_steps_family_best": [{"geomean": g, "T": T, "travel": a}
                                        for g, T, a in fixed[:8]],
            "sqrt_family_best": [{"geomean": g, "a": a, "c0": c0} for g, a, c0 in sqrt[:5]],
            "best_constant": [{"geomean": g, "T": T, "clip": C} for g, T, C in const[:3]],
            "cells": list(res)}


def check_simulator(draws: int = 40) -> dict[str, Any]:
    """Median error of :func:`dpgd_batch` and of the library's estimator on wage1, ε = 1,
    T = 100, C_g = 1: the simulator must reproduce the library (up to Monte Carlo noise)."""
    from dpreg.linear_model import ClippedDPGradientDescent

    Z, yl, sc, b_ols = _cell_data("wage1", None, 0)
    sim = rel_errors(dpgd_batch(Z, yl, mu=mu_of(1.0), n_iter=100, clip=1.0, draws=draws,
                                rng=np.random.default_rng(5)), sc, b_ols)
    X, y, bx, by = D.load("wage1")
    tr, _ = split(len(y), 0)
    lib = []
    for s in range(draws):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = ClippedDPGradientDescent(epsilon=1.0, delta=DELTA, bounds_X=bx, bounds_y=by,
                                           n_iter=100, clip_norm=1.0,
                                           random_state=s).fit(X[tr], y[tr])
        lib.append(float(np.linalg.norm(est.coef_ - b_ols) / np.linalg.norm(b_ols)))
    return {"simulator_median": float(np.median(sim)), "library_median": float(np.median(lib)),
            "simulator_q25_q75": [float(q) for q in np.quantile(sim, [0.25, 0.75])],
            "library_q25_q75": [float(q) for q in np.quantile(lib, [0.25, 0.75])]}


def main(argv: list[str] | None = None) -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--splits", type=int, default=6)
    p.add_argument("--draws", type=int, default=8)
    p.add_argument("--out", default="dpgd_rule.json")
    p.add_argument("--refit", action="store_true",
                   help="only redo the rule fit from the grid already in --out")
    a = p.parse_args(argv)
    path = OUT / a.out
    if a.refit:
        out: dict[str, Any] = json.loads(path.read_text())
    else:
        t0 = time.process_time()
        out = {"check": check_simulator(), "splits": a.splits, "draws": a.draws}
        print("simulator check", out["check"], flush=True)
        out["grid"] = grid(a.splits, a.draws)
        out["cpu_s"] = time.process_time() - t0
    out["fit"] = fit_rule(out["grid"])
    path.write_text(json.dumps(out, indent=1))
    print(json.dumps({k: v for k, v in out["fit"].items() if k != "cells"}, indent=1))


if __name__ == "__main__":  # pragma: no cover
    main()
