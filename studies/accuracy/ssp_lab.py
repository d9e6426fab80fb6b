"""Ablations of sufficient-statistics perturbation (AdaSSP's family) on one data set.

Every variant draws its Gaussian noise exactly as :func:`dpreg.multivariate.adassp` does for
its calibration (the largest μ-GDP implying (ε, δ), μ² split over the releases by weights,
σ_i = Δ_i/μ_i with the add/remove sensitivities of rows clipped to the public scaling), and the
estimate is then computed by one of several λ / solve rules from the SAME noisy statistics, so
the comparison isolates:

* the **λ rule** -- Wang's (λ_min released with a third of the budget), λ = 0, a fixed multiple
  of the noise, the oracle λ (best on a grid for this data set and ε, chosen with the true
  error: not private, the "noise floor" reference), and the post-processing rules of the
  prototype (:func:`dpreg.multivariate.ssp_solve`): the eigenvalue floor and the noisy-Gram
  ridge, which need no λ_min release;
* the **budget split** between λ_min, XᵀX and Xᵀy (and yᵀy with ``inference``);
* the **bounds**: the public bounds widened or narrowed around their midpoints by a factor,
  the non-private data range (an unattainable reference: what perfectly tight bounds would
  give), and the data clipped to DP-tightened bounds (a share of ε spent on DP quantiles
  inside the public bounds, :func:`dpreg.preprocess.propose_bounds`);
* **centring**: the midpoints of the public bounds (what dpreg does) against [0, 1] scaling.

A research study (not installed); errors are ‖β̂ − β_OLS‖/‖β_OLS‖ of the slopes in original
units, OLS on all rows of the data set.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpreg.multivariate._common import PublicScaling
from dpreg.privacy.budgets import GDP
from studies.accuracy import data as D

DELTA = 1e-6
FAIL = 0.05
LAMBDA_GRID = (0.0, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)  # multiples of σ_XX·√p


def scaled(name: str, *, widen: float = 1.0, tight: bool = False, centre: bool = True,
           X: np.ndarray | None = None, y: np.ndarray | None = None,
           bounds: tuple[list[tuple[float, float]], tuple[float, float]] | None = None
           ) -> tuple[np.ndarray, np.ndarray, PublicScaling]:
    """(Z, ỹ, scaling) of a data set under a bounds variant."""
    if X is None or y is None:
        X, y, bx, by = D.load(name)
    else:
        assert bounds is not None
        bx, by = bounds
    if bounds is not None:
        bx, by = bounds
    if tight:  # NOT private: the data range (reference only)
        bx = [(float(X[:, j].min()), float(X[:, j].max()) + 1e-9) for j in range(X.shape[1])]
        by = (float(y.min()), float(y.max()) + 1e-9)
    if widen != 1.0:
        bx = [((lo + hi) / 2 - widen * (hi - lo) / 2, (lo + hi) / 2 + widen * (hi - lo) / 2)
              for lo, hi in bx]
        by = ((by[0] + by[1]) / 2 - widen * (by[1] - by[0]) / 2,
              (by[0] + by[1]) / 2 + widen * (by[1] - by[0]) / 2)
    sc = PublicScaling.from_bounds(bx, by, fit_intercept=True)
    if not centre:  # [0, 1] scaling: shift by lo, scale by the width (row norm still <= √p)
        lows = np.array([b[0] for b in bx])
        highs = np.array([b[1] for b in bx])
        sc = PublicScaling(sc.lows, sc.highs, lows, highs - lows, sc.y_bounds, sc.y_shift,
                           sc.y_scale, True, 1.0)
    return sc.design(X), sc.label(y), sc


def sigmas(eps: float, p: int, B: float, weights: tuple[float, ...]) -> dict[str, float]:
    """Noise sds of the releases (λ_min, XᵀX, Xᵀy[, yᵀy]) for μ² split by ``weights``
    (a zero weight: that release is not made); add/remove sensitivities, label bound 1."""
    mu = GDP.from_approx(eps, DELTA).mu
    w = np.asarray(weights, dtype=float) / float(np.sum(weights))
    names = ("lambda_min", "XtX", "Xty", "yty")[: len(w)]
    sens = {"lambda_min": B * B, "XtX": B * B, "Xty": B, "yty": 1.0}
    return {k: (sens[k] / (mu * math.sqrt(wk)) if wk > 0 else math.inf)
            for k, wk in zip(names, w)}


def solve_rules(G: np.ndarray, v: np.ndarray, E: np.ndarray, e: np.ndarray, sd: dict[str, float],
                lam_noise: float, p: int) -> dict[str, np.ndarray]:
    """θ under every rule from one draw of the noisy statistics (scaled units)."""
    from dpreg.multivariate.ssp import ssp_solve

    Gh, vh = G + E, v + e
    s = sd["XtX"] * math.sqrt(p)
    out: dict[str, np.ndarray] = {}
    if math.isfinite(sd["lambda_min"]):
        lam_min = float(np.linalg.eigvalsh(G)[0])
        lower = max(0.0, lam_min + lam_noise * sd["lambda_min"]
                    - sd["lambda_min"] * math.sqrt(math.log(6.0 / DELTA)))
        lam = max(0.0, sd["XtX"] * math.sqrt(p * math.log(2.0 * p * p / FAIL)) - lower)
        out["wang"] = np.linalg.pinv(Gh + lam * np.eye(p), hermitian=True) @ vh
    for c in LAMBDA_GRID:
        out[f"ridge{c:g}"] = np.linalg.pinv(Gh + c * s * np.eye(p), hermitian=True) @ vh
    for c in (0.5, 1.0, 2.0, 4.0):
        out[f"floor{c:g}"] = ssp_solve(Gh, vh, noise_sd=sd["XtX"], rule="eigen-floor", scale=c)
        out[f"lift{c:g}"] = ssp_solve(Gh, vh, noise_sd=sd["XtX"], rule="noisy-gram", scale=c)
    return out


def errors(name: str, eps: float, *, weights: tuple[float, ...] = (1.0, 1.0, 1.0),
           reps: int = 200, seed: int = 0, train: bool = False,
           **variant: Any) -> dict[str, np.ndarray]:
    """Relative slope errors (one per noise draw) of every rule for one variant; ``train``:
    on the training rows of the benchmark's first split (as the harness fits), else all."""
    X, y, bx, by = D.load(name)
    if train:
        from studies.accuracy.harness import split

        tr = split(len(y), 0)[0]
        X, y = X[tr], y[tr]
    b_ols = np.linalg.lstsq(np.column_stack([np.ones(len(y)), X]), y, rcond=None)[0][1:]
    Z, yz, sc = scaled(name, X=X, y=y, bounds=(bx, by), **variant)
    n, p = Z.shape
    B = sc.row_norm_bound
    norms = np.linalg.norm(Z, axis=1)
    Z = Z * np.minimum(1.0, B / np.maximum(norms, 1e-300))[:, None]
    yz = np.clip(yz, -1.0, 1.0)
    G, v = Z.T @ Z, Z.T @ yz
    sd = sigmas(eps, p, B, weights)
    rng = np.random.default_rng(seed)
    out: dict[str, list[float]] = {}
    for _ in range(reps):
        U = np.triu(rng.standard_normal((p, p)) * sd["XtX"])
        E = U + np.triu(U, 1).T
        e = np.asarray(rng.standard_normal(p) * sd["Xty"], dtype=float)
        lam_noise = float(rng.standard_normal())
        for k, th in solve_rules(G, v, E, e, sd, lam_noise, p).items():
            b = sc.to_original(th)[1]
            out.setdefault(k, []).append(float(np.linalg.norm(b - b_ols) / np.linalg.norm(b_ols)))
    return {k: np.asarray(val) for k, val in out.items()}


def floor(name: str, eps: float, reps: int = 200) -> dict[str, float]:
    """The SSP noise floor: the smallest median error over the oracle λ grid and eigenvalue
    floors, with the λ_min release's budget given back (XᵀX : Xᵀy in 1:1, 2:1 and 1:2), on
    the training rows of the first split.  Not private (the oracle sees the error); a
    reference for the tables."""
    best = (math.inf, "")
    for w in ((0.0, 1.0, 1.0), (0.0, 2.0, 1.0), (0.0, 1.0, 2.0)):
        errs = errors(name, eps, weights=w, reps=reps, train=True)
        for k, v in errs.items():
            if k.startswith("ridge") or k.startswith("floor"):
                m = float(np.median(v))
                if m < best[0]:
                    best = (m, f"{k} split {w[1]:g}:{w[2]:g}")
    return {"floor": best[0], "rule": best[1]}  # type: ignore[dict-item]
