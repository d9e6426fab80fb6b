"""What DP-GD's public clip rule misses on the development pools, and whether a private
statistic can supply it (issue 30, item 1; docs/accuracy.md §12.6).

DP-GD's clip C_g = min(1, 1.5·μ·n/(p·T)) (:func:`dpreg.multivariate.dpgd_schedule`) was fitted on
the 21 dev and tuning cells.  This study re-scores it on all development cells -- dev, tuning
and ``dev2`` (57 cells; sets above :data:`ROW_CAP` rows are replaced by a public random
subsample of that size, as :mod:`studies.accuracy.dpgd_rule` does for its subsamples) -- on a
grid of C_g at T = 1600, with :func:`studies.accuracy.dpgd_rule.dpgd_batch` (the library's
algorithm, batched), and asks three questions:

1. Does a refit of the same family (the travel constant), or a power law in μn/p, help?
2. How much of the per-cell best clip is explained by the spread of the bound-scaled response
   σ_y (an *oracle*: the true σ_y, not private)?  Rule: C_g = min(2, 1.5·μn/(pT)·m(σ_y)) with
   m(σ) = max(1, σ/σ₀)^k, (σ₀, k) fitted on these cells.
3. Does a private σ̃_y recover that gain?  The statistic that measures spread most cheaply at
   these sizes is a count: with ȳ̃ a Laplace mean of the clipped labels and f̃ a Laplace count
   of |y − ȳ̃| > t over n (replace-one sensitivities 2/n and 1, each at half of a share s of
   ε), σ̂ = t/Φ⁻¹(1 − f̃/2) (exact for a normal response), taken at a lower confidence bound
   (f̃ − z·√2/(ε_f·n)).  Scored generously: the clip uses μ of (1 − s)·ε, the error is read off
   the full-ε grid (the share's cost to DP-GD's noise is *not* charged).

4. Priced: the library's ``clip_norm="auto"`` (the mean-absolute-deviation statistic that came
   out of 3.; :func:`library_clip`) against ``clip_norm="public"``, both simulated the same way
   with DP-GD at the μ left after the statistic (:func:`cell_priced`).

``python -m studies.accuracy.dpgd_clip_spread [--workers 2]`` writes
docs/accuracy-data/dpgd_clip_spread.json (about 25 CPU minutes).
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

import numpy as np

from studies.accuracy import data as D
from studies.accuracy.dpgd_rule import EPSILONS, _cell_data, dpgd_batch, mu_of, rel_errors
from studies.accuracy.harness import OUT

T = 1600
C_GRID = (1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0, 2.0)
SPLITS, DRAWS = 4, 6
ROW_CAP = 6000
#: the dpgd_rule cells (dev, tuning and their subsamples) plus every dev2 set
CELLS = (("wage1", None), ("bwght", None), ("bwght", 500), ("diabetes", None), ("fair", None),
         ("fair", 500), ("fair", 2000)) + tuple((s, None) for s in D.names("dev2"))
THRESHOLD_T = 0.3  # t of the count statistic, in half-widths of the y bounds


def cell_grid(cell: tuple[str, int | None]) -> dict[str, Any]:
    """Median relative error over SPLITS × DRAWS at every C_g of :data:`C_GRID`, each ε, for
    one development set; plus its scaled labels (split 0) for the σ_y statistics."""
    name, rows = cell
    if rows is None and len(D.load(name)[1]) > ROW_CAP:
        rows = ROW_CAP
    data = [_cell_data(name, rows, rep) for rep in range(SPLITS)]
    Zs, ys = np.stack([d[0] for d in data]), np.stack([d[1] for d in data])
    n, p = data[0][0].shape
    out: dict[str, Any] = {}
    for eps in EPSILONS:
        mu = mu_of(eps)
        errs = {}
        for C in C_GRID:
            rng = np.random.default_rng([int(C * 1e4), int(eps * 10), n])
            th = dpgd_batch(Zs, ys, mu=mu, n_iter=T, clip=C, draws=DRAWS, rng=rng)
            errs[f"{C:g}"] = float(np.median(np.concatenate(
                [rel_errors(th[k], d[2], d[3]) for k, d in enumerate(data)])))
        out[f"{name}@{rows}|{eps:g}"] = {"n": n, "p": p, "epsilon": eps, "mu": mu,
                                         "errors": errs}
    labels = np.clip(data[0][1], -1.0, 1.0)
    for v in out.values():
        v["sigma_y"] = float(labels.std())
        v["labels"] = labels.tolist()
    return out


def interp_error(cell: dict[str, Any], C: float) -> float:
    """The grid's median error at C (linear in log₂ C on the log error, clamped)."""
    L = np.log2(np.array(C_GRID))
    e = np.log([cell["errors"][f"{c:g}"] for c in C_GRID])
    return float(math.exp(np.interp(min(max(math.log2(C), L[0]), L[-1]), L, e)))


def shipped_clip(cell: dict[str, Any], mu: float | None = None, travel: float = 1.5) -> float:
    return min(1.0, travel * (cell["mu"] if mu is None else mu) * cell["n"] / (cell["p"] * T))


def spread_multiplier(sigma: float, s0: float, k: float) -> float:
    return float(max(1.0, sigma / s0) ** k)


def score(cells: dict[str, Any], clip_of: Any) -> dict[str, float]:
    """Geometric-mean ratio to the per-cell best, cells within 1.25×, worst ratio."""
    r = [interp_error(c, clip_of(c)) / min(c["errors"].values()) for c in cells.values()]
    return {"geomean": float(math.exp(np.mean(np.log(r)))), "within_1.25": int(sum(
        x <= 1.25 for x in r)), "cells": len(r), "worst": float(max(r))}


def private_score(cells: dict[str, Any], share: float, z: float, s0: float, k: float,
                  draws: int = 40, seed: int = 0) -> dict[str, float]:
    """:func:`score` of the multiplier fed by the count statistic (module doc, item 3),
    averaged in log over ``draws`` noise draws per cell."""
    from scipy.stats import norm

    rng = np.random.default_rng(seed)
    ratios = []
    for c in cells.values():
        y = np.asarray(c["labels"])
        n, eps_half = len(y), share * c["epsilon"] / 2
        mu_rest = mu_of((1 - share) * c["epsilon"])
        best = min(c["errors"].values())
        logs = []
        for _ in range(draws):
            ybar = float(np.clip(y.mean() + rng.laplace(0, 2 / (n * eps_half)), -1, 1))
            f = (np.sum(np.abs(y - ybar) > THRESHOLD_T) + rng.laplace(0, 1 / eps_half)) / n
            f = min(max(f - z * math.sqrt(2) / (eps_half * n), 1e-6), 1 - 1e-6)
            sig = THRESHOLD_T / float(norm.ppf(1 - f / 2))
            C = min(2.0, shipped_clip(c, mu_rest) * spread_multiplier(sig, s0, k))
            logs.append(math.log(interp_error(c, C) / best))
        ratios.append(math.exp(np.mean(logs)))
    return {"geomean": float(math.exp(np.mean(np.log(ratios)))),
            "within_1.25": int(sum(x <= 1.25 for x in ratios)), "cells": len(ratios),
            "worst": float(max(ratios))}


def analyse(cells: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"shipped": score(cells, shipped_clip)}
    out["travel_refit"] = {f"{a:g}": score(cells, lambda c, a=a: shipped_clip(c, travel=a))
                           for a in (1.5, 2.0, 2.5, 3.0)}
    fits = []
    for s0 in (0.15, 0.2, 0.25, 0.3):
        for k in (1, 2, 3, 4):
            sc = score(cells, lambda c, s0=s0, k=k: min(
                2.0, shipped_clip(c) * spread_multiplier(c["sigma_y"], s0, k)))
            fits.append({"sigma0": s0, "k": k, **sc})
    fits.sort(key=lambda f: f["geomean"])
    out["oracle_spread"] = fits[:5]
    best_s0, best_k = float(fits[0]["sigma0"]), float(fits[0]["k"])
    # the mean absolute deviation about the mean, noiseless (item 4's statistic before noise)
    out["noiseless_abs_dev"] = score(cells, lambda c: min(2.0, shipped_clip(c) * spread_multiplier(
        math.sqrt(math.pi / 2) * float(np.mean(np.abs(np.asarray(c["labels"])
                                                      - np.mean(c["labels"])))), best_s0,
        best_k)))
    out["private_count"] = [{"share": s, "z": z,
                             **private_score(cells, s, z, best_s0, best_k)}
                            for s in (0.05, 0.1, 0.2) for z in (0.0, 1.0, 2.0)]
    return out


def main(argv: list[str] | None = None) -> None:
    import argparse
    from concurrent.futures import ProcessPoolExecutor

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", default="dpgd_clip_spread.json")
    ap.add_argument("--reanalyse", action="store_true",
                    help="only redo the analysis from the grid already in --out")
    a = ap.parse_args(argv)
    if a.reanalyse:
        saved = json.loads((OUT / a.out).read_text())
        cells = saved["cells"]
        for key, c in cells.items():  # the labels are not stored: reload them (split 0)
            name, rest = key.split("@")
            rows = None if rest.startswith("None") else int(rest.split("|")[0])
            c["labels"] = np.clip(_cell_data(name, rows, 0)[1], -1.0, 1.0).tolist()
        saved["analysis"] = analyse(cells)
        for c in cells.values():
            del c["labels"]
        (OUT / a.out).write_text(json.dumps(saved, indent=1))
        print(json.dumps(saved["analysis"]["noiseless_abs_dev"]))
        return
    t0 = time.time()
    with ProcessPoolExecutor(a.workers) as ex:
        parts = list(ex.map(cell_grid, CELLS))
        priced_parts = list(ex.map(cell_priced, CELLS))
    cells = {k: v for part in parts for k, v in part.items()}
    priced = {k: v for part in priced_parts for k, v in part.items()}
    result = {"T": T, "splits": SPLITS, "draws": DRAWS, "row_cap": ROW_CAP,
              "analysis": analyse(cells), "priced": priced,
              "priced_summary": priced_summary(cells, priced), "wall_s": time.time() - t0,
              "cells": {k: {kk: vv for kk, vv in v.items() if kk != "labels"}
                        for k, v in cells.items()}}
    (OUT / a.out).write_text(json.dumps(result, indent=1))
    print(json.dumps({"analysis": result["analysis"],
                      "priced_summary": result["priced_summary"]}, indent=1))



# ---------------------------------------------------------------------------------------------
# 4. the library's rule (clip_norm="auto"), priced: DP-GD runs at the rest of μ
# ---------------------------------------------------------------------------------------------

def library_clip(labels: np.ndarray, *, mu: float, n: int, p: int, rule: str,
                 rng: np.random.Generator) -> tuple[float, float]:
    """(C_g, μ of the rounds) of the library's ``clip_norm=rule`` on scaled labels, with float
    Gaussian noise in place of the secure sampler: ``"public"`` -- the public rule at the whole
    μ; ``"auto"`` -- :func:`dpreg.multivariate.dpgd.dpgd_spread_budget`'s share of μ² to the
    two spread releases (sensitivities 2 and 2, replace-one), σ̂ by ``dpgd_spread_sigma`` and
    the clip by ``dpgd_spread_clip`` of the public rule at the rounds' μ."""
    from dpreg.multivariate.dpgd import dpgd_public_clip

    if rule == "public":
        return dpgd_public_clip(mu, n, p, T), mu
    return library_spread(labels, mu=mu, n=n, p=p, rng=rng)[:2]


def library_spread(labels: np.ndarray, *, mu: float, n: int, p: int,
                   rng: np.random.Generator) -> tuple[float, float, float]:
    """(C_g, μ of the rounds, ȳ̃) of the library's ``clip_norm="auto"`` (:func:`library_clip`),
    with the released mean ȳ̃ that the warm start reads."""
    from dpreg.multivariate.dpgd import (
        DPGD_SPREAD_SHARE,
        dpgd_spread_base_clip,
        dpgd_spread_clip,
        dpgd_spread_sensitivities,
        dpgd_spread_sigma,
    )

    y = np.clip(labels, -1.0, 1.0)
    mu_each = math.sqrt(DPGD_SPREAD_SHARE / 2.0) * mu
    s_sum, s_abs = dpgd_spread_sensitivities("replace-one")
    ybar = float(np.clip((y.sum() + rng.normal(0.0, s_sum / mu_each)) / n, -1.0, 1.0))
    m = (np.abs(y - ybar).sum() + rng.normal(0.0, s_abs / mu_each)) / n
    sig = dpgd_spread_sigma(m, s_abs / mu_each / n)
    mu_rest = math.sqrt(1.0 - DPGD_SPREAD_SHARE) * mu
    return dpgd_spread_clip(dpgd_spread_base_clip(mu, n, p, T), sig), mu_rest, ybar


def cell_priced(cell: tuple[str, int | None], stat_draws: int = 6,
                noise_draws: int = 4) -> dict[str, Any]:
    """Median relative error of DP-GD with ``clip_norm="public"`` and ``"auto"`` on one
    development set, simulated the same way: per split, ``stat_draws`` draws of the statistic
    (one clip for "public"), each followed by ``noise_draws`` runs at the rounds' μ."""
    name, rows = cell
    if rows is None and len(D.load(name)[1]) > ROW_CAP:
        rows = ROW_CAP
    data = [_cell_data(name, rows, rep) for rep in range(SPLITS)]
    n, p = data[0][0].shape
    out: dict[str, Any] = {}
    for eps in EPSILONS:
        mu = mu_of(eps)
        for i, rule in enumerate(("public", "auto")):
            rng = np.random.default_rng([i, int(eps * 10), n])
            errs: list[float] = []
            for Z, yl, sc, b_ols in data:
                for _ in range(stat_draws):
                    C, mu_r = library_clip(yl, mu=mu, n=n, p=p, rule=rule, rng=rng)
                    th = dpgd_batch(Z, yl, mu=mu_r, n_iter=T, clip=C, draws=noise_draws,
                                    rng=rng)
                    errs.extend(rel_errors(th, sc, b_ols))
            out.setdefault(f"{name}@{rows}|{eps:g}", {})[rule] = float(np.median(errs))
    return out


def priced_summary(cells: dict[str, Any], priced: dict[str, Any]) -> dict[str, Any]:
    """"auto" against "public" per ε band (geometric mean and worst of the ratio) and both
    against the grid's per-cell best."""
    out: dict[str, Any] = {}
    for band in ("0.5", "1", "4", "all"):
        keys = [k for k in priced if band == "all" or k.endswith("|" + band)]
        r = np.array([priced[k]["auto"] / priced[k]["public"] for k in keys])
        out[band] = {"auto_over_public_geomean": float(np.exp(np.mean(np.log(r)))),
                     "worst": float(r.max()), "better": int((r < 1).sum()), "cells": len(r)}
    for rule in ("public", "auto"):
        b = np.array([priced[k][rule] / min(cells[k]["errors"].values()) for k in priced])
        out[f"{rule}_over_grid_best"] = {"geomean": float(np.exp(np.mean(np.log(b)))),
                                         "within_1.25": int((b <= 1.25).sum())}
    return out


if __name__ == "__main__":  # pragma: no cover
    main()
