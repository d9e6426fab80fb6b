"""DP-GD's warm start at the released label mean, on the development pools (issue 30, item 1;
docs/accuracy.md §12.7).

With clipped per-example gradients the iterates of DP-GD travel at most η·T·C_g from where they
start.  Started at zero, a fit whose label sits far from the middle of its public bounds (gifts,
wealth, hours with many zeros: bound-scaled label means of −0.6 to −0.95) must first move its
intercept by |ȳ|·√p, and the travel spent there is missing from the slopes.  ``clip_norm="auto"``
already releases ȳ̃ (the first of its two spread releases), so starting the intercept there costs
nothing.  This study measures, on every development cell of
:mod:`studies.accuracy.dpgd_clip_spread` (dev, tuning, dev2; sets above 6,000 rows subsampled),
with the library's clip rule simulated as :func:`~studies.accuracy.dpgd_clip_spread.library_spread`
does (the spread releases drawn, DP-GD at the rounds' μ):

* ``cold``: the start at zero (the library before this change);
* ``warm``: the start :func:`dpreg.multivariate.dpgd.dpgd_warm_start` at the *released* ȳ̃;
* ``centred_oracle``: the warm start on a design whose regressor columns are centred at their
  exact means -- not private, not shipped: it bounds what a further release of the column means
  could add (it would cost budget this oracle does not pay).

The three share every draw (the statistic, then the rounds' noise: common random numbers), so
their ratio per cell is not Monte Carlo noise between runs.

``python -m studies.accuracy.dpgd_warm_start [--workers 2]`` writes
docs/accuracy-data/dpgd_warm_start.json (about 10 CPU minutes).
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from studies.accuracy import data as D
from studies.accuracy.dpgd_clip_spread import CELLS, ROW_CAP, SPLITS, T, library_spread
from studies.accuracy.dpgd_rule import EPSILONS, _cell_data, dpgd_batch, mu_of, rel_errors
from studies.accuracy.harness import OUT

VARIANTS = ("cold", "warm", "centred_oracle")
STAT_DRAWS, NOISE_DRAWS = 4, 4


def cell_warm(cell: tuple[str, int | None]) -> dict[str, Any]:
    """Median relative coefficient error of each of :data:`VARIANTS` on one development set,
    per ε: per split, ``STAT_DRAWS`` draws of the spread releases, each followed by
    ``NOISE_DRAWS`` runs of the rounds, the same draws for every variant."""
    from dpreg.multivariate.dpgd import dpgd_warm_start

    name, rows = cell
    if rows is None and len(D.load(name)[1]) > ROW_CAP:
        rows = ROW_CAP
    data = [_cell_data(name, rows, rep) for rep in range(SPLITS)]
    n, p = data[0][0].shape
    c = data[0][2].column_factor
    out: dict[str, Any] = {}
    for eps in EPSILONS:
        mu = mu_of(eps)
        errs: dict[str, list[float]] = {v: [] for v in VARIANTS}
        stat_rng = np.random.default_rng([7, int(eps * 10), n])
        for k, (Z, yl, sc, b_ols) in enumerate(data):
            Zc = Z.copy()
            Zc[:, 1:] -= Z[:, 1:].mean(axis=0)
            for s in range(STAT_DRAWS):
                C, mu_r, ybar = library_spread(yl, mu=mu, n=n, p=p, rng=stat_rng)
                warm = dpgd_warm_start(ybar, p, c)
                for v, design, start in (("cold", Z, None), ("warm", Z, warm),
                                         ("centred_oracle", Zc, warm)):
                    rng = np.random.default_rng([k, s, int(eps * 10), n])
                    th = dpgd_batch(design, yl, mu=mu_r, n_iter=T, clip=C, draws=NOISE_DRAWS,
                                    rng=rng, theta0=start)
                    errs[v].extend(rel_errors(th, sc, b_ols))
        key = f"{name}@{rows}|{eps:g}"
        out[key] = {"n": n, "p": p, "epsilon": eps,
                    "y_mean": float(np.mean([d[1].mean() for d in data])),
                    **{v: float(np.median(e)) for v, e in errs.items()}}
        print(key, {v: round(out[key][v], 3) for v in VARIANTS}, flush=True)
    return out


def summary(cells: dict[str, Any]) -> dict[str, Any]:
    """Per ε band: the geometric mean, best and worst of warm/cold and centred_oracle/cold, and
    the cells where each is better."""
    res: dict[str, Any] = {}
    for band in ("0.5", "1", "4", "all"):
        keys = [k for k in cells if band == "all" or k.endswith("|" + band)]
        if not keys:
            continue
        for v in VARIANTS[1:]:
            r = np.array([cells[k][v] / cells[k]["cold"] for k in keys])
            res.setdefault(band, {})[f"{v}_over_cold"] = {
                "geomean": float(np.exp(np.mean(np.log(r)))), "best": float(r.min()),
                "worst": float(r.max()), "better": int((r < 1).sum()), "cells": len(r)}
    return res


def main(argv: list[str] | None = None) -> None:
    import argparse
    from concurrent.futures import ProcessPoolExecutor

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", default="dpgd_warm_start.json")
    a = ap.parse_args(argv)
    t0 = time.time()
    if a.workers > 1:
        with ProcessPoolExecutor(a.workers) as ex:
            parts = list(ex.map(cell_warm, CELLS))
    else:
        parts = [cell_warm(c) for c in CELLS]
    cells = {k: v for part in parts for k, v in part.items()}
    result = {"T": T, "splits": SPLITS, "stat_draws": STAT_DRAWS, "noise_draws": NOISE_DRAWS,
              "row_cap": ROW_CAP, "summary": summary(cells), "wall_s": time.time() - t0,
              "cells": cells}
    (OUT / a.out).write_text(json.dumps(result, indent=1))
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":  # pragma: no cover
    main()
