"""Iterative Hessian mixing (IHM) vs AdaSSP and BoostedAdaSSP on dpreg's offline real data.

IHM (Lev, Shenfeld, Srinivasan, Ligett & Wilson 2026; :mod:`studies.ihm`, a study implementation)
reports consistent gains over AdaSSP.  This study measures it under dpreg's bounded protocol --
the one of the tang-compare reproduction: public bounds, features scaled into the unit ball
(B = 1) with an intercept column, y scaled to [−1, 1], 80/20 splits, δ = 10⁻⁶ -- on the thirteen
offline data sets of :data:`dpreg.bench.datasets.MULTIVARIATE_NAMES` (the nine of tang-compare
plus Diamonds, randhie, ISLP Default and Caravan) at ε ∈ {0.1, 0.5, 1, 4}.

Design (paired): trial t draws one 80/20 split (seed 42 + t) shared by the three methods, and
each method one fit on it.  Metric: test MSE relative to OLS fitted on the same split.  Per cell
and competitor, the paired log-ratios log(MSE_IHM / MSE_other) over the trials give the median
ratio and its distribution-free 95% interval (order statistics of the sign test,
:func:`median_ratio_ci`): IHM *wins* against a competitor when the interval lies below 1 and
*loses* when it lies above 1 (each is a two-sided sign test at level <= 5%).  A cell is a
significant win when IHM wins against both, a significant loss when it loses against either.

    nice -n 10 python -m studies.hessian_mixing run [--trials 50] [--out docs/hessian-mixing-data]

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
from scipy import stats

from dpreg._random import simulation_generator
from dpreg.bench.datasets import MULTIVARIATE_NAMES
from dpreg.bench.kinds.multivariate import _dataset, _predict_ols, _split
from dpreg.linear_model import AdaSSP, BoostedAdaSSP
from studies.ihm import IterativeHessianMixing

__all__ = ["run", "table", "median_ratio_ci", "EPSILONS", "DELTA"]

EPSILONS = (0.1, 0.5, 1.0, 4.0)
DELTA = 1e-6
METHODS = ("IHM", "AdaSSP", "BoostedAdaSSP")
#: trial t uses the 80/20 split of seed SPLIT_SEED + t (t = 0: the tang-compare split)
SPLIT_SEED = 42


def _make(method: str, eps: float, bx: Any, by: Any, seed: np.random.SeedSequence) -> Any:
    common: dict[str, Any] = {"epsilon": eps, "delta": DELTA, "bounds_X": bx, "bounds_y": by,
                              "random_state": simulation_generator(seed)}
    if method == "IHM":
        return IterativeHessianMixing(**common)
    if method == "AdaSSP":
        return AdaSSP(inference=False, **common)
    return BoostedAdaSSP(**common)


def run(trials: int = 50, datasets: tuple[str, ...] = MULTIVARIATE_NAMES,
        epsilons: tuple[float, ...] = EPSILONS, seed: int = 2026_01) -> pd.DataFrame:
    """One row per fit: data set, ε, method, trial (= split), test MSE, OLS test MSE, CPU s."""
    rows = []
    root = np.random.SeedSequence(seed)
    for di, (name, dseq) in enumerate(zip(datasets, root.spawn(len(datasets)))):
        X, y, bx, by, _ = _dataset({}, name)
        splits = []
        for t in range(trials):  # trial t's split, shared by every method and ε (paired design)
            tr, te = _split(y.size, 0.2, SPLIT_SEED + t)
            _, ols_te = _predict_ols(X[tr], y[tr], X[te])
            splits.append((tr, te, float(np.mean((y[te] - ols_te) ** 2))))
        for eps, eseq in zip(epsilons, dseq.spawn(len(epsilons))):
            for method, mseq in zip(METHODS, eseq.spawn(len(METHODS))):
                for t, tseq in enumerate(mseq.spawn(trials)):
                    tr, te, ols_mse = splits[t]
                    t0 = time.process_time()
                    est = _make(method, eps, bx, by, tseq)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est.fit(X[tr], y[tr])
                    mse = float(np.mean((y[te] - est.predict(X[te])) ** 2))
                    rows.append({"data": name, "n_train": int(len(tr)), "d": int(X.shape[1]),
                                 "epsilon": eps, "method": method, "trial": t, "test_mse": mse,
                                 "ols_test_mse": ols_mse, "rel_mse": mse / ols_mse,
                                 "cpu_seconds": time.process_time() - t0})
        print(f"[{di + 1}/{len(datasets)}] {name} done", flush=True)
    return pd.DataFrame(rows)


def median_ratio_ci(log_ratios: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """Median of paired ratios exp(median log r) and its distribution-free interval.

    The interval [r_(k), r_(n+1−k)] of the order statistics, with the largest k such that
    P(Bin(n, ½) <= k − 1) <= (1 − level)/2, covers the median of i.i.d. paired ratios with
    probability >= ``level`` whatever their distribution; it excludes 1 exactly when the
    two-sided sign test rejects "median 1" at level <= 1 − level.  Pairs whose log ratio is NaN
    (both fits ⊥) are dropped.  With too few pairs for any such k the interval is (0, ∞).
    """
    r = np.sort(np.asarray(log_ratios, dtype=float))
    r = r[~np.isnan(r)]
    n = r.size
    if n == 0:
        return math.nan, 0.0, math.inf
    med = float(np.exp(np.median(r)))
    tail = (1.0 - level) / 2.0
    k = int(stats.binom.ppf(tail, n, 0.5))  # P(Bin <= k) >= tail at this k; step down below
    while k >= 1 and stats.binom.cdf(k - 1, n, 0.5) > tail:
        k -= 1
    if k < 1:
        return med, 0.0, math.inf
    return med, float(np.exp(r[k - 1])), float(np.exp(r[n - k]))


def _paired(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (data set, ε) and competitor: median ratio IHM/competitor, its 95% interval, and
    the outcome ("win" below 1, "loss" above 1, "tie" otherwise)."""
    wide = rows.pivot_table(index=["data", "epsilon", "trial"], columns="method",
                            values="test_mse", sort=False)
    out = []
    for (name, eps), g in wide.groupby(level=["data", "epsilon"], sort=False):
        rec: dict[str, Any] = {"data": name, "epsilon": eps, "trials": len(g)}
        for comp in METHODS[1:]:
            with np.errstate(divide="ignore", invalid="ignore"):
                lr = np.log(g["IHM"].to_numpy(float)) - np.log(g[comp].to_numpy(float))
            med, lo, hi = median_ratio_ci(lr)
            rec[f"ratio_{comp}"], rec[f"lo_{comp}"], rec[f"hi_{comp}"] = med, lo, hi
            rec[f"outcome_{comp}"] = "win" if hi < 1 else "loss" if lo > 1 else "tie"
        out.append(rec)
    return pd.DataFrame(out)


def table(rows: pd.DataFrame) -> tuple[str, dict[str, Any]]:
    """Markdown table (median test MSE / OLS per method; paired median ratios IHM/other with
    95% intervals; the cell's outcome) and the verdict counts."""
    med = (rows.groupby(["data", "epsilon", "method"], sort=False)["rel_mse"].median()
           .unstack("method"))
    pair = _paired(rows).set_index(["data", "epsilon"])
    meta = rows.groupby("data", sort=False)[["n_train", "d"]].first()
    trials = int(rows.groupby(["data", "epsilon", "method"])["trial"].nunique().min())
    lines = ["| data set | n | d | ε | IHM | AdaSSP | BoostedAdaSSP | IHM/AdaSSP (95% CI) "
             "| IHM/Boosted (95% CI) | IHM best (point) | significant |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    cnt = {"cells": 0, "ihm_best_point": 0, "ihm_best_significant": 0,
           "ihm_worse_significant": 0, "vs_adassp_win": 0, "vs_adassp_loss": 0,
           "vs_boosted_win": 0, "vs_boosted_loss": 0}
    for (name, eps), r in med.iterrows():
        p = pair.loc[(name, eps)]
        oa, ob = p["outcome_AdaSSP"], p["outcome_BoostedAdaSSP"]
        point = p["ratio_AdaSSP"] < 1 and p["ratio_BoostedAdaSSP"] < 1
        sig = "win" if oa == ob == "win" else "loss" if "loss" in (oa, ob) else "—"
        cnt["cells"] += 1
        cnt["ihm_best_point"] += bool(point)
        cnt["ihm_best_significant"] += sig == "win"
        cnt["ihm_worse_significant"] += sig == "loss"
        cnt["vs_adassp_win"] += oa == "win"
        cnt["vs_adassp_loss"] += oa == "loss"
        cnt["vs_boosted_win"] += ob == "win"
        cnt["vs_boosted_loss"] += ob == "loss"
        lines.append(
            f"| {name} | {int(meta.loc[name, 'n_train'])} | {int(meta.loc[name, 'd'])} "
            f"| {eps:g} | {_f(float(r['IHM']))} | {_f(float(r['AdaSSP']))} "
            f"| {_f(float(r['BoostedAdaSSP']))} | {_ci(p, 'AdaSSP')} "
            f"| {_ci(p, 'BoostedAdaSSP')} | {'yes' if point else 'no'} | {sig} |")
    c = cnt["cells"]
    verdict = {**cnt, "trials": trials, "majority_point": cnt["ihm_best_point"] > c / 2,
               "majority_significant": cnt["ihm_best_significant"] > c / 2}
    lines += ["", f"{trials} paired fits per cell.  IHM best (both paired median ratios < 1) in "
              f"{cnt['ihm_best_point']} of {c} cells; significantly better than both (both 95% "
              f"intervals below 1) in {cnt['ihm_best_significant']}, significantly worse than "
              f"at least one in {cnt['ihm_worse_significant']}.  Against AdaSSP: "
              f"{cnt['vs_adassp_win']} significant wins, {cnt['vs_adassp_loss']} losses; against "
              f"BoostedAdaSSP: {cnt['vs_boosted_win']} wins, {cnt['vs_boosted_loss']} losses.  "
              f"Majority (point): {'yes' if verdict['majority_point'] else 'no'}; majority "
              f"(significant): {'yes' if verdict['majority_significant'] else 'no'}."]
    return "\n".join(lines), verdict


def _ci(p: pd.Series, comp: str) -> str:
    return (f"{_f(float(p[f'ratio_{comp}']))} ({_f(float(p[f'lo_{comp}']))}–"
            f"{_f(float(p[f'hi_{comp}']))})")


def _f(v: float) -> str:
    if not math.isfinite(v):
        return "∞"
    return f"{v:.3g}" if v < 1000 else f"{v:.3e}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m studies.hessian_mixing")
    ap.add_argument("command", choices=["run", "table"])
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--datasets", default=",".join(MULTIVARIATE_NAMES))
    ap.add_argument("--out", default="docs/hessian-mixing-data")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.command == "run":
        rows = run(a.trials, tuple(a.datasets.split(",")))
        rows.to_csv(out / "comparison.csv", index=False, float_format="%.6g")
    rows = pd.read_csv(out / "comparison.csv")
    md, verdict = table(rows)
    (out / "comparison.md").write_text(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
