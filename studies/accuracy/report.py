"""Tables of docs/accuracy.md from the runs of :mod:`studies.accuracy.harness` and
:mod:`studies.accuracy.ablations`.

``python -m studies.accuracy.report`` (after the runs) computes the SSP noise floors once
(docs/accuracy-data/floors.json) and writes docs/accuracy-data/tables.md.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from studies.accuracy import data as D
from studies.accuracy.harness import EPSILONS, OUT

DPREG = ("adassp", "boosted-adassp", "tukey-em", "dp-gd", "covariance-ols", "auto")
PROTO = "adassp:lambda_rule=eigen-floor+floor_scale=2"


def load_runs(path: Path = OUT / "runs") -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for f in sorted(path.glob("*.json")):
        rows.extend(json.loads(f.read_text()))
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[tuple[str, str, float], dict[str, Any]]:
    cells: dict[tuple[str, str, float], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        cells[(r["dataset"], r["method"], r["epsilon"])].append(r)
    out = {}
    for key, rs in cells.items():
        ok = [r for r in rs if not r["failed"]]

        def m(k: str, rr: list[dict[str, Any]] = ok) -> float:
            v = [r[k] for r in rr if k in r and r[k] is not None]
            return float(np.median(v)) if v else math.nan

        s = {"n_fits": len(rs), "fail": sum(r["failed"] for r in rs) / len(rs),
             "rel_err": m("rel_err"), "rel_err_std": m("rel_err_std"), "test_r2": m("test_r2"),
             "cpu": m("cpu", rs), "ols_se_rel": m("ols_se_rel", rs),
             "n_train": rs[0]["n_train"], "d": rs[0]["d"]}
        if any("ci_refused" in r for r in rs):
            s["ci_refused"] = sum(bool(r.get("ci_refused")) for r in rs)
            s["ci_ratio"] = m("ci_ratio")
        if any("chosen" in r for r in rs):
            ch: dict[str, int] = defaultdict(int)
            for r in rs:
                ch[str(r.get("chosen"))] += 1
            s["chosen"] = dict(ch)
        out[key] = s
    return out


def floors(sets: list[str], reps: int = 200) -> dict[str, dict[str, Any]]:
    path = OUT / "floors.json"
    have: dict[str, dict[str, Any]] = json.loads(path.read_text()) if path.exists() else {}
    from studies.accuracy import ssp_lab

    for name in sets:
        for eps in EPSILONS:
            key = f"{name}|{eps:g}"
            if key not in have:
                have[key] = ssp_lab.floor(name, eps, reps=reps)
                path.write_text(json.dumps(have, indent=1))
    return have


def fmt(v: float, nd: int = 2) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "⊥"
    if abs(v) >= 1000:
        return f"{v:.3g}"
    return f"{v:.{nd}f}"


def main_table(S: dict[tuple[str, str, float], dict[str, Any]], sets: list[str],
               methods: tuple[str, ...], key: str, floor: dict[str, Any] | None) -> str:
    head = ["data (n_train×d)", "ε", "OLS se", *(m if not m.startswith("adassp:") else
                                                 "adassp eigen-floor" for m in methods)]
    if floor is not None:
        head += ["SSP floor"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in sets:
        for eps in EPSILONS:
            ref = S.get((name, "adassp", eps)) or S.get((name, methods[0], eps))
            if ref is None:
                continue
            row = [f"{name} ({ref['n_train']}×{ref['d']})", f"{eps:g}",
                   fmt(ref["ols_se_rel"]) if key.startswith("rel_err") else ""]
            if key == "test_r2":
                row[2] = fmt(S[(name, "ols", math.inf)]["test_r2"]) if (
                    name, "ols", math.inf) in S else ""
            for mth in methods:
                c = S.get((name, mth, eps))
                if c is None:
                    row.append("–")
                    continue
                v = fmt(c[key])
                if c["fail"] > 0:
                    v += f" (⊥{c['fail']:.0%})"
                row.append(v)
            if floor is not None:
                row.append(fmt(floor.get(f"{name}|{eps:g}", {}).get("floor", math.nan)))
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def targets(S: dict[tuple[str, str, float], dict[str, Any]], sets: list[str],
            floor: dict[str, Any], methods: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """Issue 30's two targets per cell: best ≤ 2·(OLS se + floor); auto ≤ 1.25·best."""
    lines = ["| data | ε | best dpreg | its error | 2·(OLS se + floor) | met | auto | auto/best |",
             "|---|---|---|---|---|---|---|---|"]
    met = auto_ok = cells = 0
    for name in sets:
        for eps in EPSILONS:
            errs = {m: S[(name, m, eps)]["rel_err"] for m in methods if (name, m, eps) in S
                    and not math.isnan(S[(name, m, eps)]["rel_err"])
                    and S[(name, m, eps)]["fail"] < 0.5}
            if not errs:
                continue
            best = min(errs, key=lambda k: errs[k])
            ols_se = S[(name, best, eps)]["ols_se_rel"]
            fl = floor.get(f"{name}|{eps:g}", {}).get("floor", math.nan)
            goal = 2 * (ols_se + fl)
            a = S.get((name, "auto", eps), {}).get("rel_err", math.nan)
            ok1 = errs[best] <= goal
            ok2 = a <= 1.25 * errs[best]
            cells += 1
            met += ok1
            auto_ok += ok2
            lines.append(f"| {name} | {eps:g} | {best} | {fmt(errs[best])} | {fmt(goal)} | "
                         f"{'yes' if ok1 else 'no'} | {fmt(a)} | {fmt(a / errs[best])} |")
    return "\n".join(lines), {"cells": cells, "best_within_target": met,
                              "auto_within_1.25": auto_ok}


def datasets_table() -> str:
    """The data sets: role, source, model, n, d, OLS R² (all rows), the share of rows with a
    value outside its public bound, and every bound with its justification."""
    from studies.accuracy.harness import ols, r2

    lines = ["| data | role | source | model | n | d | OLS R² | rows clamped |",
             "|---|---|---|---|---|---|---|---|"]
    bounds = ["| data | variable | public bound | why |", "|---|---|---|---|"]
    for name in D.names():
        s = D.SETS[name]
        X, y, _, _ = D.load(name)
        b0, b, _ = ols(X, y)
        lines.append(f"| {name} | {s.role} | {s.source} | {s.y} ~ {' + '.join(s.x)} | "
                     f"{len(y)} | {len(s.x)} | {r2(y, b0 + X @ b):.3f} | "
                     f"{D.clipped_share(name):.1%} |")
        for col in (s.y, *s.x):
            lo, hi = s.bounds[col]
            bounds.append(f"| {name} | {col} | [{lo:.4g}, {hi:.4g}] | {s.why[col]} |")
    return "\n".join(lines) + "\n\n" + "\n".join(bounds)


def main() -> None:
    rows = load_runs()
    S = summarise(rows)
    sets_all = [s for s in D.names() if any(k[0] == s for k in S)]
    fl = floors(sets_all)
    base = ("adassp", "boosted-adassp", "tukey-em", "dp-gd", "covariance-ols", "auto",
            "diffprivlib")
    out = ["## data sets\n", datasets_table(), ""]
    for role in ("benchmark", "dev", "tuning"):
        sets = [s for s in D.names(role) if s in sets_all]
        out.append(f"## {role}: relative coefficient error (original scale)\n")
        out.append(main_table(S, sets, (*base, PROTO), "rel_err", fl))
        out.append(f"\n## {role}: relative coefficient error (bounds-standardised)\n")
        out.append(main_table(S, sets, (*base, PROTO), "rel_err_std", None))
        out.append(f"\n## {role}: test R²\n")
        out.append(main_table(S, sets, (*base, PROTO), "test_r2", None))
        t, summ = targets(S, sets, fl, DPREG)
        out.append(f"\n## {role}: targets (current methods)\n\n{t}\n\n{summ}\n")
        t, summ = targets(S, sets, fl, (*DPREG, PROTO))
        out.append(f"\n## {role}: targets with the prototype\n\n{t}\n\n{summ}\n")
    (OUT / "tables.md").write_text("\n".join(out) + "\n")
    (OUT / "summary.json").write_text(json.dumps(
        {"|".join(map(str, k)): v for k, v in S.items()}, indent=1))
    print("written", OUT / "tables.md")


if __name__ == "__main__":  # pragma: no cover
    main()
