"""Why TukeyEM is poor on Diamonds even without privacy (issue 21): a measured diagnosis.

The amin-r2 reproduction fits TukeyEM on Amin et al.'s Diamonds preprocessing (price on carat,
cut, color, clarity, depth, table, x, y, z; raw units, an intercept column, no bounds) and gets
a median test R² of about −1 at ε = ln 3 against OLS's 0.91.  This study separates the possible
causes on the same 80/20 split (seed 42) that reproduction uses:

1. the per-model OLS fits (m models on disjoint batches of ⌊n/m⌋ rows): their own test R² and
   the condition numbers of the batch designs against the full design's;
2. the aggregation: the test R² of the coordinate-wise median of the models (TukeyEM's ε = ∞
   output) and of their mean, and the spread (interquartile range) of each coefficient over
   the models against the OLS coefficient;
3. TukeyEM itself (the estimator, ``n_models="auto"``) at ε = ∞, 10⁶ and ln 3 (δ = 10⁻⁵) on the
   full design, without the size columns x, y, z, and with the public bounds of
   :mod:`dpreg.bench.datasets` (features scaled into [0, 1]).

    nice -n 10 python -m studies.tukey_diamonds [--seeds 20] [--out docs/tukey-data]

writes ``diamonds.json`` and ``diamonds.md`` (a few CPU seconds; needs the ``data`` extra).
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from dpreg._random import simulation_generator
from dpreg.bench.kinds.multivariate import _dataset, _split
from dpreg.linear_model import TukeyEM
from dpreg.multivariate.tukey import partition_models, tukey_auto_n_models

__all__ = ["diagnose", "render"]

EPS_PAPER = math.log(3)
DELTA = 1e-5
NAMES = ("intercept", "carat", "cut", "color", "clarity", "depth", "table", "x", "y", "z")
SIZE = (6, 7, 8)  # x, y, z among the nine features


def _r2(y: np.ndarray, pred: np.ndarray) -> float:
    return float(1.0 - np.mean((y - pred) ** 2) / np.var(y))


def _quantiles(v: np.ndarray) -> dict[str, float]:
    return {q: float(np.quantile(v, p)) for q, p in (("q10", 0.1), ("median", 0.5),
                                                    ("q90", 0.9))}


def diagnose(seeds: int = 20) -> dict[str, Any]:
    """Every number of the diagnosis (see the module docstring)."""
    t0 = time.process_time()
    X, y, bx, by, _ = _dataset({}, "diamonds")
    tr, te = _split(y.size, 0.2, 42)
    Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    Z = np.column_stack([np.ones(len(Xtr)), Xtr])
    Zte = np.column_stack([np.ones(len(Xte)), Xte])
    n, d = Z.shape
    ols = np.linalg.lstsq(Z, ytr, rcond=None)[0]
    sd = Z[:, 1:].std(axis=0)
    Zstd = np.column_stack([np.ones(n), (Z[:, 1:] - Z[:, 1:].mean(axis=0)) / sd])
    size_corr = np.corrcoef(Xtr[:, [0, *SIZE]].T)
    out: dict[str, Any] = {
        "n_train": n, "design_columns": d, "ols_test_r2": _r2(yte, Zte @ ols),
        "cond_full_raw": float(np.linalg.cond(Z)), "cond_full_standardised":
        float(np.linalg.cond(Zstd)),
        "min_corr_carat_x_y_z": float(size_corr[np.triu_indices(4, 1)].min()),
        "aggregation": [], "tukey": [],
    }
    m_auto = tukey_auto_n_models(n, d, epsilon=EPS_PAPER, delta=DELTA)
    out["m_auto"] = m_auto
    for m in (m_auto, 50):
        models = partition_models(Z, ytr, m, simulation_generator(1))
        b = n // m
        order = simulation_generator(1).permutation(n)[: m * b]
        batches = Z[order].reshape(m, b, d)
        conds = np.linalg.cond(batches[: min(m, 200)])
        per_model = np.array([_r2(yte, Zte @ w) for w in models])
        q1, q3 = np.quantile(models, [0.25, 0.75], axis=0)
        med = np.median(models, axis=0)
        # the same aggregates over ``seeds`` fresh partitions: the coordinate-wise median is
        # TukeyEM's ε = ∞ output, so its spread over partitions is the non-private part of the
        # seed-to-seed variation of TukeyEM's accuracy
        by_seed = np.array([(_r2(yte, Zte @ np.median(ms, axis=0)), _r2(yte, Zte @ ms.mean(axis=0)))
                            for ms in (partition_models(Z, ytr, m, simulation_generator(100 + s))
                                       for s in range(seeds))])
        out["aggregation"].append({
            "m": m, "rows_per_model": b,
            "per_model_test_r2_median": float(np.median(per_model)),
            "per_model_test_r2_q10": float(np.quantile(per_model, 0.1)),
            "batch_cond_median": float(np.median(conds)),
            "coordinate_median_test_r2": _r2(yte, Zte @ med),
            "mean_model_test_r2": _r2(yte, Zte @ models.mean(axis=0)),
            "partitions": seeds,
            "coordinate_median_test_r2_over_partitions": _quantiles(by_seed[:, 0]),
            "mean_model_test_r2_over_partitions": _quantiles(by_seed[:, 1]),
            "coef": {nm: {"ols": float(ols[j]), "median_model": float(med[j]),
                          "iqr": float(q3[j] - q1[j])} for j, nm in enumerate(NAMES)},
        })
    variants = (("all nine features, raw units (amin-r2)", list(range(9)), False),
                ("without x, y, z", [j for j in range(9) if j not in SIZE], False),
                ("all nine, public bounds (scaled into [0, 1])", list(range(9)), True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, cols, scaled in variants:
            ols_v = np.linalg.lstsq(np.column_stack([np.ones(n), Xtr[:, cols]]), ytr,
                                    rcond=None)[0]
            ols_r2 = _r2(yte, np.column_stack([np.ones(len(Xte)), Xte[:, cols]]) @ ols_v)
            for eps in (math.inf, 1e6, EPS_PAPER):
                vals = []
                for s in range(seeds):
                    kw: dict[str, Any] = ({"bounds_X": [bx[j] for j in cols], "bounds_y": by}
                                          if scaled else {})
                    est = TukeyEM(epsilon=eps, delta=DELTA,
                                  random_state=simulation_generator(s), **kw)
                    try:
                        est.fit(Xtr[:, cols], ytr)
                    except Exception:  # PTR ⊥ (MechanismFailure): counts as −∞
                        vals.append(-math.inf)
                        continue
                    vals.append(_r2(yte, est.predict(Xte[:, cols])))
                v = np.array(vals)
                out["tukey"].append({
                    "variant": label, "ols_test_r2": ols_r2, "epsilon": eps, "seeds": seeds,
                    "median_test_r2": float(np.median(v)), "q10": float(np.quantile(v, 0.1)),
                    "q90": float(np.quantile(v, 0.9)), "failed_share": float(np.mean(np.isinf(v)))})
    out["cpu_seconds"] = round(time.process_time() - t0, 1)
    return out


def _g(v: float) -> str:
    if math.isinf(v):
        return "−∞" if v < 0 else "∞"
    return f"{v:.3g}" if abs(v) < 1e4 else f"{v:,.0f}"


def render(res: dict[str, Any]) -> str:
    """The markdown tables of :func:`diagnose`'s result."""
    lines = [f"Diamonds, {res['n_train']:,} training rows, {res['design_columns']} design columns; "
             f"OLS test R² {res['ols_test_r2']:.4f}; condition number of the design "
             f"{res['cond_full_raw']:.3g} in raw units, {res['cond_full_standardised']:.3g} "
             f"standardised; carat, x, y, z pairwise correlations >= "
             f"{res['min_corr_carat_x_y_z']:.3f}.", "",
             "Per-model fits and their aggregates without privacy (partition seed 1; the last "
             f"two columns: median [q10, q90] over {res['aggregation'][0]['partitions']} fresh "
             "partitions -- the coordinate-wise median is TukeyEM's ε = ∞ output):", "",
             "| models m | rows per model | per-model test R² (median, q10) | batch cond "
             "(median) | coordinate-wise median: test R² | mean of the models: test R² | "
             "coordinate-wise median over partitions | mean over partitions |",
             "|---|---|---|---|---|---|---|---|"]
    for a in res["aggregation"]:
        cm, mm = a["coordinate_median_test_r2_over_partitions"], a[
            "mean_model_test_r2_over_partitions"]
        lines.append(f"| {a['m']} | {a['rows_per_model']} | {a['per_model_test_r2_median']:.3f}, "
                     f"{a['per_model_test_r2_q10']:.3f} | {a['batch_cond_median']:.3g} | "
                     f"{a['coordinate_median_test_r2']:.3f} | {a['mean_model_test_r2']:.3f} | "
                     f"{cm['median']:.3f} [{cm['q10']:.3f}, {cm['q90']:.3f}] | "
                     f"{mm['median']:.3f} [{mm['q10']:.3f}, {mm['q90']:.3f}] |")
    a = res["aggregation"][0]
    lines += ["", f"Coefficients over the {a['m']} models (raw units): OLS on all training rows, "
              "the coordinate-wise median of the models, and the models' interquartile range.",
              "", "| coefficient | OLS | median of models | IQR over models |", "|---|---|---|---|"]
    for nm, c in a["coef"].items():
        lines.append(f"| {nm} | {_g(c['ols'])} | {_g(c['median_model'])} | {_g(c['iqr'])} |")
    lines += ["", "TukeyEM (`n_models=\"auto\"`, δ = 10⁻⁵), test R² over "
              f"{res['tukey'][0]['seeds']} seeds:", "",
              "| design | OLS test R² | ε | median | q10 | q90 | ⊥ share |",
              "|---|---|---|---|---|---|---|"]
    for t in res["tukey"]:
        eps = "∞" if math.isinf(t["epsilon"]) else ("ln 3" if abs(t["epsilon"] - EPS_PAPER) < 1e-12
                                                     else f"{t['epsilon']:g}")
        lines.append(f"| {t['variant']} | {t['ols_test_r2']:.4f} | {eps} | "
                     f"{_g(t['median_test_r2'])} | {_g(t['q10'])} | {_g(t['q90'])} | "
                     f"{t['failed_share']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m studies.tukey_diamonds")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--out", default="docs/tukey-data")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    res = diagnose(a.seeds)
    (out / "diamonds.json").write_text(json.dumps(res, indent=1) + "\n")
    md = render(res)
    (out / "diamonds.md").write_text(md + "\n")
    print(md)
    print(f"CPU {res['cpu_seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
