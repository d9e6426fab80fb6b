"""Iterative Hessian mixing (IHM) vs AdaSSP and BoostedAdaSSP on dpreg's offline real data.

IHM (Lev, Shenfeld, Srinivasan, Ligett & Wilson 2026; :mod:`dpreg.multivariate.hessian_mixing`)
reports consistent gains over AdaSSP.  This study measures it under dpreg's bounded protocol --
the one of the tang-compare reproduction: public bounds, features scaled into the unit ball
(B = 1) with an intercept column, y scaled to [−1, 1], one 80/20 split (seed 42), δ = 10⁻⁶ --
on the nine data sets of that reproduction at ε ∈ {0.1, 0.5, 1, 4}.

Metric: test MSE relative to OLS (fitted on the same training split), median over ``trials``
fits.  A *win* of IHM in a cell: its median is strictly below both AdaSSP's and BoostedAdaSSP's.

    nice -n 10 python -m studies.hessian_mixing run [--trials 10] [--out docs/hessian-mixing-data]

writes ``comparison.csv`` (one row per fit) and ``comparison.md`` (the table and the verdict).
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpreg._random import simulation_generator
from dpreg.bench.datasets import MULTIVARIATE_NAMES
from dpreg.bench.kinds.multivariate import _dataset, _predict_ols, _split
from dpreg.linear_model import AdaSSP, BoostedAdaSSP, IterativeHessianMixing

__all__ = ["run", "table", "EPSILONS", "DELTA"]

EPSILONS = (0.1, 0.5, 1.0, 4.0)
DELTA = 1e-6
METHODS = ("IHM", "AdaSSP", "BoostedAdaSSP")


def _make(method: str, eps: float, bx: Any, by: Any, seed: np.random.SeedSequence) -> Any:
    common: dict[str, Any] = {"epsilon": eps, "delta": DELTA, "bounds_X": bx, "bounds_y": by,
                              "random_state": simulation_generator(seed)}
    if method == "IHM":
        return IterativeHessianMixing(**common)
    if method == "AdaSSP":
        return AdaSSP(inference=False, **common)
    return BoostedAdaSSP(**common)


def run(trials: int = 10, datasets: tuple[str, ...] = MULTIVARIATE_NAMES,
        epsilons: tuple[float, ...] = EPSILONS, seed: int = 2026_01) -> pd.DataFrame:
    """One row per fit: data set, ε, method, trial, test MSE, OLS test MSE, seconds."""
    rows = []
    root = np.random.SeedSequence(seed)
    for di, (name, dseq) in enumerate(zip(datasets, root.spawn(len(datasets)))):
        X, y, bx, by, _ = _dataset({}, name)
        tr, te = _split(y.size, 0.2, 42)
        Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
        _, ols_te = _predict_ols(Xtr, ytr, Xte)
        ols_mse = float(np.mean((yte - ols_te) ** 2))
        for eps, eseq in zip(epsilons, dseq.spawn(len(epsilons))):
            for method, mseq in zip(METHODS, eseq.spawn(len(METHODS))):
                for t, tseq in enumerate(mseq.spawn(trials)):
                    t0 = time.perf_counter()
                    est = _make(method, eps, bx, by, tseq)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est.fit(Xtr, ytr)
                    mse = float(np.mean((yte - est.predict(Xte)) ** 2))
                    rows.append({"data": name, "n_train": int(len(tr)), "d": int(X.shape[1]),
                                 "epsilon": eps, "method": method, "trial": t, "test_mse": mse,
                                 "ols_test_mse": ols_mse, "rel_mse": mse / ols_mse,
                                 "seconds": time.perf_counter() - t0})
        print(f"[{di + 1}/{len(datasets)}] {name} done", flush=True)
    return pd.DataFrame(rows)


def table(rows: pd.DataFrame) -> tuple[str, dict[str, Any]]:
    """Markdown table of median test MSE / OLS per (data set, ε) and method, and the verdict."""
    med = (rows.groupby(["data", "epsilon", "method"], sort=False)["rel_mse"].median()
           .unstack("method"))
    lines = ["| data set | n | d | ε | IHM | AdaSSP | BoostedAdaSSP | IHM best |",
             "|---|---|---|---|---|---|---|---|"]
    meta = rows.groupby("data", sort=False)[["n_train", "d"]].first()
    wins = vs_ada = vs_boost = 0
    cells = 0
    for (name, eps), r in med.iterrows():
        ihm, ada, boo = float(r["IHM"]), float(r["AdaSSP"]), float(r["BoostedAdaSSP"])
        win = ihm < ada and ihm < boo
        wins += win
        vs_ada += ihm < ada
        vs_boost += ihm < boo
        cells += 1
        lines.append(f"| {name} | {int(meta.loc[name, 'n_train'])} | {int(meta.loc[name, 'd'])} "
                     f"| {eps:g} | {_f(ihm)} | {_f(ada)} | {_f(boo)} | {'yes' if win else 'no'} |")
    verdict = {"cells": cells, "ihm_best": wins, "ihm_beats_adassp": vs_ada,
               "ihm_beats_boosted": vs_boost, "majority": wins > cells / 2}
    lines += ["", f"IHM best in {wins} of {cells} cells (beats AdaSSP in {vs_ada}, "
              f"BoostedAdaSSP in {vs_boost}); majority: {'yes' if verdict['majority'] else 'no'}."]
    return "\n".join(lines), verdict


def _f(v: float) -> str:
    if not math.isfinite(v):
        return "∞"
    return f"{v:.3g}" if v < 1000 else f"{v:.3e}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m studies.hessian_mixing")
    ap.add_argument("command", choices=["run", "table"])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--datasets", default=",".join(MULTIVARIATE_NAMES))
    ap.add_argument("--out", default="docs/hessian-mixing-data")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.command == "run":
        rows = run(a.trials, tuple(a.datasets.split(",")))
        rows.to_csv(out / "comparison.csv", index=False)
    rows = pd.read_csv(out / "comparison.csv")
    md, verdict = table(rows)
    (out / "comparison.md").write_text(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
