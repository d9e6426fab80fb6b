"""The threshold τ of ``auto``'s several-x spread selection, chosen on the development pools
only (docs/accuracy.md §12.4).

Where the gate :func:`dpreg.auto.rules.mv_selection_possible` opens, ``auto`` releases nvar(y)
with 5% of ε and runs AdaSSP (replace-one) or DP-GD with the other 95%.  This script scores each
candidate τ with the methods AS ``auto`` RUNS THEM: it runs the harness (same splits and common
random numbers) for ``adassp:neighbouring=replace-one`` and ``dp-gd`` at 0.95·ε on the dev,
dev2 and tuning sets, simulates the Laplace noise of the released σ̃_y² around the set's true
spread, and counts the cells within 1.25× of the best of the five methods at the full ε (from
a harness output at the full ε, ``--full``).  The benchmark sets are not read.

Usage::

    python -m studies.accuracy.spread_rule --full docs/accuracy-data/runs_crn \\
        --runs docs/accuracy-data/runs_spread --reps 40        # ~8 CPU min for the runs
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from studies.accuracy import data as D
from studies.accuracy.harness import EPSILONS, run_set_at_share
from studies.accuracy.report import load_runs, summarise

CANDIDATES = ("adassp", "boosted-adassp", "tukey-em", "dp-gd", "covariance-ols")
ROLES = ("dev", "dev2", "tuning")
SHARE = 0.05
AS_AUTO = {"adassp:neighbouring=replace-one": "adassp-r1@0.95", "dp-gd": "dp-gd@0.95"}


def runs(name: str, reps: int, folder: Path) -> list[dict[str, Any]]:
    """AdaSSP (replace-one) and DP-GD at (1 − SHARE)·ε on one set (cached in ``folder``)."""
    return run_set_at_share(name, tuple(AS_AUTO), reps, SHARE, folder / f"{name}.json.gz",
                            rename=AS_AUTO)


def spread(name: str) -> tuple[int, float]:
    """(training rows, sd of y clipped to its bounds in half-widths) -- a property of the data,
    used only to simulate the release in this study."""
    X, y, bx, by = D.load(name)
    h = (by[1] - by[0]) / 2.0
    ys = (np.clip(y, *by) - (by[0] + by[1]) / 2.0) / h
    return int(round(0.8 * len(y))), float(ys.std())


def score(full: Path, folder: Path, reps: int, taus: list[float], draws: int = 400
          ) -> dict[str, Any]:
    from dpreg.auto.rules import MV_SPREAD_SIGNAL, mv_spread_noise_sd

    sets = [s for r in ROLES for s in D.names(r)]
    rows = [r for r in load_runs(full) if r["dataset"] in sets]
    for s in sets:
        rows += runs(s, reps, folder)
    S = summarise(rows)

    def err(name: str, m: str, eps: float) -> float:
        c = S.get((name, m, eps))
        return math.inf if c is None or c["fail"] >= 0.5 else c["rel_err"]

    props = {s: spread(s) for s in sets}
    out: dict[str, Any] = {}
    for tau in [math.inf, *taus]:
        rng = np.random.default_rng(0)
        hits, logs = 0.0, []
        for name in sets:
            n, sy = props[name]
            for eps in EPSILONS:
                best = min(err(name, m, eps) for m in CANDIDATES)
                sd = mv_spread_noise_sd(n, eps, SHARE)
                if math.isinf(tau) or sd > tau ** 2 / MV_SPREAD_SIGNAL:
                    rs = [err(name, "dp-gd", eps) / best]
                else:
                    v = sy ** 2 + rng.laplace(0.0, sd / math.sqrt(2.0), draws)
                    rs = [(err(name, "adassp-r1@0.95", eps) if x > tau ** 2
                           else err(name, "dp-gd@0.95", eps)) / best for x in v]
                hits += float(np.mean([r <= 1.25 for r in rs]))
                logs.append(float(np.mean(np.log(rs))))
        out["always dp-gd" if math.isinf(tau) else f"{tau:g}"] = {
            "within_1.25": round(hits, 1), "cells": len(logs),
            "geomean_ratio": math.exp(float(np.mean(logs)))}
    return out


def main(argv: list[str] | None = None) -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", required=True)
    p.add_argument("--runs", required=True)
    p.add_argument("--reps", type=int, default=40)
    p.add_argument("--taus", default="0.3,0.35,0.38,0.4,0.42,0.45,0.5,0.55")
    a = p.parse_args(argv)
    res = score(Path(a.full), Path(a.runs), a.reps, [float(t) for t in a.taus.split(",")])
    for k, v in res.items():
        print(f"tau {k}: {v['within_1.25']} of {v['cells']} within 1.25x, "
              f"geometric-mean ratio {v['geomean_ratio']:.3f}")


if __name__ == "__main__":  # pragma: no cover
    main()
