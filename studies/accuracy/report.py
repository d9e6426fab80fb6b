"""Tables of docs/accuracy.md from the runs of :mod:`studies.accuracy.harness` and
:mod:`studies.accuracy.ablations`.

``python -m studies.accuracy.report`` (after the runs) computes the SSP noise floors once
(docs/accuracy-data/floors.json) and writes docs/accuracy-data/tables.md (the issue-30
baseline, ``runs/``: the defaults before the changes) and, when ``runs_after/`` exists,
docs/accuracy-data/after.md (the same harness, same splits and seeds, with the current
defaults: AdaSSP's eigen floor, DP-GD's public step-count/clip rule, ``auto``'s DP-GD branch).
The committed runs are gzipped (``*.json.gz``); a fresh harness run writes ``*.json`` next to
them -- delete the ``.gz`` of a data set you rerun, or both are counted.
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
PROTO = "adassp:lambda_rule=eigen-floor+floor_scale=3"
PROTO_R1 = "adassp:lambda_rule=eigen-floor+floor_scale=3+neighbouring=replace-one"
BOOSTED_R1 = "boosted-adassp:neighbouring=replace-one"


def before_after(S40: dict[tuple[str, str, float], dict[str, Any]], sets: list[str]) -> str:
    """AdaSSP default (Wang's λ, yᵀy for the interval) against the eigen floor (f = 3), same
    splits; median relative error, test R² and the ratio of errors."""
    lines = ["| data | ε | fits | AdaSSP err | eigen-floor err | ratio | AdaSSP R² | "
             "eigen-floor R² |", "|---|---|---|---|---|---|---|---|"]
    ratios = []
    for name in sets:
        for eps in EPSILONS:
            a, b = S40.get((name, "adassp", eps)), S40.get((name, PROTO, eps))
            if a is None or b is None:
                continue
            r = b["rel_err"] / a["rel_err"]
            ratios.append(r)
            lines.append(f"| {name} | {eps:g} | {a['n_fits']} | {fmt(a['rel_err'])} | "
                         f"{fmt(b['rel_err'])} | {fmt(r)} | {fmt(a['test_r2'])} | "
                         f"{fmt(b['test_r2'])} |")
    if ratios:
        lr = np.log(ratios)
        lines.append(f"\nGeometric mean of the ratio {math.exp(float(np.mean(lr))):.3f}; the "
                     f"eigen floor is better in {int(np.sum(lr < 0))} of {len(lr)} cells; "
                     f"worst ratio {max(ratios):.2f}, best {min(ratios):.2f}.")
    return "\n".join(lines)


def auto_rules(S: dict[tuple[str, str, float], dict[str, Any]], sets: list[str]) -> str:
    """``auto`` now against candidate rules, all under auto's replace-one statement: TukeyEM
    where its PTR is predicted to pass (the current rule's first branch), otherwise
    BoostedAdaSSP (now), AdaSSP with the eigen floor, or DP-GD.  Each cell: the rule's
    median relative error over the best of every dpreg method (add/remove defaults and the
    prototype included); the target is <= 1.25 in >= 90% of cells."""
    rules = {"now (Boosted)": BOOSTED_R1, "eigen-floor AdaSSP": PROTO_R1, "DP-GD": "dp-gd"}
    cand = ("adassp", "boosted-adassp", "tukey-em", "dp-gd", "covariance-ols", PROTO)
    head = ["data", "ε", "TukeyEM branch", "best method", "best err", "auto (run)",
            *rules]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ok = {k: 0 for k in ["auto (run)", *rules]}
    logs: dict[str, list[float]] = {k: [] for k in ok}
    cells = 0
    for name in sets:
        for eps in EPSILONS:
            au = S.get((name, "auto", eps))
            if au is None:
                continue
            errs = {m: S[(name, m, eps)]["rel_err"] for m in cand if (name, m, eps) in S
                    and S[(name, m, eps)]["fail"] < 0.5}
            best = min(errs, key=lambda k: errs[k])
            tukey = au.get("chosen", {}).get("tukey-em", 0) > 0
            row = [name, f"{eps:g}", "yes" if tukey else "no", best, fmt(errs[best]),
                   fmt(au["rel_err"] / errs[best])]
            ok["auto (run)"] += au["rel_err"] <= 1.25 * errs[best]
            logs["auto (run)"].append(math.log(au["rel_err"] / errs[best]))
            for label, m in rules.items():
                src = (name, "tukey-em", eps) if tukey else (name, m, eps)
                v = S.get(src, {}).get("rel_err", math.nan) / errs[best]
                ok[label] += v <= 1.25
                logs[label].append(math.log(v))
                row.append(fmt(v))
            cells += 1
            lines.append("| " + " | ".join(row) + " |")
    lines.append("\nCells within 1.25x of the best: " + "; ".join(
        f"{k} {v}/{cells}" for k, v in ok.items()) + ". Geometric mean of the ratio to the "
        "best: " + "; ".join(f"{k} {math.exp(float(np.mean(v))):.2f}"
                             for k, v in logs.items() if v) + ".")
    return "\n".join(lines)


def load_runs(path: Path = OUT / "runs") -> list[dict[str, Any]]:
    import gzip

    rows: list[dict[str, Any]] = []
    for f in sorted(path.glob("*.json")):
        rows.extend(json.loads(f.read_text()))
    for f in sorted(path.glob("*.json.gz")):  # the committed copies
        rows.extend(json.loads(gzip.decompress(f.read_bytes())))
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


def refusals(S: dict[tuple[str, str, float], dict[str, Any]], sets: list[str]) -> str:
    lines = ["| data | ε | TukeyEM ⊥ | CovarianceOLS intervals refused | median width / OLS | "
             "auto chose | median CPU s (adassp, boosted, tukey, dp-gd, cov, auto) |",
             "|---|---|---|---|---|---|---|"]
    for name in sets:
        for eps in EPSILONS:
            c = S.get((name, "covariance-ols", eps))
            if c is None:
                continue
            t = S[(name, "tukey-em", eps)]
            ch = ", ".join(f"{k} {v}" for k, v in S[(name, "auto", eps)].get("chosen",
                                                                             {}).items())
            cpu = ", ".join(f"{S[(name, m, eps)]['cpu']:.3f}" for m in DPREG)
            lines.append(f"| {name} | {eps:g} | {t['fail']:.0%} | {c['ci_refused']}/"
                         f"{c['n_fits']} | {fmt(c.get('ci_ratio', math.nan), 1)} | {ch} | "
                         f"{cpu} |")
    return "\n".join(lines)


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


CHANGED = ("adassp", "dp-gd", "auto")
UNCHANGED = ("ols", "boosted-adassp", "tukey-em", "covariance-ols", "diffprivlib")


def _gm(v: list[float]) -> float:
    return math.exp(float(np.mean(np.log(v)))) if v else math.nan


def changed_methods(Sb: dict[tuple[str, str, float], dict[str, Any]],
                    Sa: dict[tuple[str, str, float], dict[str, Any]], sets: list[str]
                    ) -> tuple[str, dict[str, Any]]:
    """Before (the issue-30 baseline's defaults) and after (the current defaults), same splits
    and seeds, for the methods whose defaults changed: median relative error and test R², and
    the ratio of the errors; the geometric mean of the ratio over all cells and per ε."""
    head = ["data", "ε"] + [f"{m} {w}" for m in CHANGED for w in ("before", "after", "ratio")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ratios: dict[str, dict[float, list[float]]] = {m: defaultdict(list) for m in CHANGED}
    r2: dict[str, list[tuple[float, float]]] = {m: [] for m in CHANGED}
    for name in sets:
        for eps in EPSILONS:
            row = [name, f"{eps:g}"]
            for m in CHANGED:
                b, a = Sb.get((name, m, eps)), Sa.get((name, m, eps))
                if b is None or a is None:
                    row += ["–", "–", "–"]
                    continue
                r = a["rel_err"] / b["rel_err"]
                ratios[m][eps].append(r)
                r2[m].append((b["test_r2"], a["test_r2"]))
                row += [fmt(b["rel_err"]), fmt(a["rel_err"]), fmt(r)]
            lines.append("| " + " | ".join(row) + " |")
    summ: dict[str, Any] = {}
    for m in CHANGED:
        allr = [x for v in ratios[m].values() for x in v]
        summ[m] = {"geomean_ratio": _gm(allr), "cells": len(allr),
                   "better": int(sum(x < 1 for x in allr)),
                   "worst_ratio": max(allr) if allr else math.nan,
                   "by_epsilon": {f"{e:g}": _gm(v) for e, v in ratios[m].items()},
                   "median_r2_before": float(np.median([x[0] for x in r2[m]])) if r2[m] else math.nan,
                   "median_r2_after": float(np.median([x[1] for x in r2[m]])) if r2[m] else math.nan}
    lines.append("\n" + "; ".join(
        f"{m}: geometric-mean ratio {v['geomean_ratio']:.3f} (ε = " + ", ".join(
            f"{e}: {g:.3f}" for e, g in v["by_epsilon"].items()) +
        f"), better in {v['better']} of {v['cells']} cells, worst ratio {v['worst_ratio']:.2f}"
        for m, v in summ.items()) + ".")
    return "\n".join(lines), summ


def auto_target(S: dict[tuple[str, str, float], dict[str, Any]], sets: list[str],
                floor: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Issue 30's targets with the current defaults: the best dpreg method (``auto`` itself
    NOT a candidate) against 2·(OLS se + SSP floor), and ``auto`` within 1.25× of it."""
    cand = ("adassp", "boosted-adassp", "tukey-em", "dp-gd", "covariance-ols")
    lines = ["| data | ε | best dpreg method | its error | 2·(OLS se + floor) | met | auto chose | "
             "auto | auto/best | within 1.25× |", "|---|---|---|---|---|---|---|---|---|---|"]
    met = ok = cells = 0
    ratios = []
    for name in sets:
        for eps in EPSILONS:
            errs = {m: S[(name, m, eps)]["rel_err"] for m in cand if (name, m, eps) in S
                    and not math.isnan(S[(name, m, eps)]["rel_err"])
                    and S[(name, m, eps)]["fail"] < 0.5}
            au = S.get((name, "auto", eps))
            if not errs or au is None:
                continue
            best = min(errs, key=lambda k: errs[k])
            goal = 2 * (S[(name, best, eps)]["ols_se_rel"]
                        + floor.get(f"{name}|{eps:g}", {}).get("floor", math.nan))
            r = au["rel_err"] / errs[best]
            ratios.append(r)
            cells += 1
            met += errs[best] <= goal
            ok += r <= 1.25
            chose = ", ".join(f"{k} {v}" for k, v in au.get("chosen", {}).items())
            verdict = "—" if math.isnan(goal) else "yes" if errs[best] <= goal else "no"
            lines.append(f"| {name} | {eps:g} | {best} | {fmt(errs[best])} | {fmt(goal)} | "
                         f"{verdict} | {chose} | "
                         f"{fmt(au['rel_err'])} | {fmt(r)} | {'yes' if r <= 1.25 else 'no'} |")
    summ = {"cells": cells, "best_within_target": met, "auto_within_1.25": ok,
            "auto_geomean_ratio": _gm(ratios)}
    return "\n".join(lines), summ


def reproduced(Sb: dict[tuple[str, str, float], dict[str, Any]],
               Sa: dict[tuple[str, str, float], dict[str, Any]]) -> str:
    """The methods whose defaults did not change must reproduce the baseline exactly (same
    splits and seeds): the largest difference of their median errors."""
    diffs = [abs(Sa[k]["rel_err"] - v["rel_err"]) for k, v in Sb.items()
             if k[1] in UNCHANGED and k in Sa and not math.isnan(v["rel_err"])]
    return (f"Unchanged methods ({', '.join(UNCHANGED)}) reproduce the baseline: {len(diffs)} "
            f"cells, largest difference of the median errors {max(diffs) if diffs else 0:.3g}.")


def _roles_with_runs(S: dict[tuple[str, str, float], dict[str, Any]]
                     ) -> list[tuple[str, list[str]]]:
    """(role, its data sets that have runs in ``S``) for every role with any, in table order."""
    out = []
    for role in ("benchmark", "dev", "dev2", "tuning"):
        sets = [s for s in D.names(role) if any(k[0] == s for k in S)]
        if sets:
            out.append((role, sets))
    return out


def after_report(S: dict[tuple[str, str, float], dict[str, Any]], fl: dict[str, Any]) -> None:
    """docs/accuracy-data/after.md from ``runs_after`` against the baseline ``S``."""
    path = OUT / "runs_after"
    if not path.exists():
        return
    Sa = summarise(load_runs(path))
    base = ("adassp", "boosted-adassp", "tukey-em", "dp-gd", "covariance-ols", "auto",
            "diffprivlib")
    out = ["# After issue 30's changes (current defaults)\n", reproduced(S, Sa), ""]
    summary: dict[str, Any] = {}
    for role, sets in _roles_with_runs(Sa):
        out.append(f"## {role}: relative coefficient error (original scale)\n")
        out.append(main_table(Sa, sets, base, "rel_err", fl))
        out.append(f"\n## {role}: test R²\n")
        out.append(main_table(Sa, sets, base, "test_r2", None))
        t, cs = changed_methods(S, Sa, sets)
        out.append(f"\n## {role}: before/after, the methods whose defaults changed\n\n{t}\n")
        t, ts = auto_target(Sa, sets, fl)
        out.append(f"\n## {role}: targets (auto not a candidate for best)\n\n{t}\n\n{ts}\n")
        summary[role] = {"changed": cs, "targets": ts}
    (OUT / "after.md").write_text("\n".join(out) + "\n")
    (OUT / "after_summary.json").write_text(json.dumps(summary, indent=1))
    print("written", OUT / "after.md")


def crn_report(fl: dict[str, Any], path: Path = OUT / "runs_crn",
               new_auto: Path = OUT / "runs_auto2") -> None:
    """docs/accuracy-data/after_crn.md from ``runs_crn``: the current defaults with common
    random numbers (one seed per repetition and ε for every method, 40 repetitions), so that
    ``auto`` running a column's algorithm reproduces that column's fits.  With ``runs_auto2``
    (the several-x spread rule of §12, same seeds) its rows are ``auto`` and the earlier rule's
    rows become ``auto (TukeyEM rule)``."""
    if not path.exists():
        return
    rows = load_runs(path)
    base: tuple[str, ...] = ("adassp", "boosted-adassp", "tukey-em", "dp-gd", "covariance-ols",
                             "auto")
    if new_auto.exists():
        for r in rows:
            if r["method"] == "auto":
                r["method"] = "auto (TukeyEM rule)"
        rows += load_runs(new_auto)
        base = (*base, "auto (TukeyEM rule)")
    Sc = summarise(rows)
    out = ["# Current defaults, common random numbers (40 repetitions)\n"]
    summary: dict[str, Any] = {}
    for role, sets in _roles_with_runs(Sc):
        out.append(f"## {role}: relative coefficient error (original scale)\n")
        out.append(main_table(Sc, sets, base, "rel_err", fl if role != "dev2" else None))
        t, ts = auto_target(Sc, sets, fl)
        out.append(f"\n## {role}: targets (auto not a candidate for best)\n\n{t}\n\n{ts}\n")
        summary[role] = ts
        if new_auto.exists():
            old = {k: v for k, v in Sc.items() if k[1] != "auto"}
            old.update({(k[0], "auto", k[2]): v for k, v in Sc.items()
                        if k[1] == "auto (TukeyEM rule)"})
            summary[role + " (TukeyEM rule)"] = auto_target(old, sets, fl)[1]
    (OUT / "after_crn.md").write_text("\n".join(out) + "\n")
    (OUT / "after_crn_summary.json").write_text(json.dumps(summary, indent=1))
    print("written", OUT / "after_crn.md")


def change_report(fl: dict[str, Any], *, title: str, stem: str, base: list[tuple[Path, dict[str, str]]],
                  dpgd: Path, auto: Path, old_dpgd: str, old_auto: str, change: str,
                  before_key: str) -> dict[str, Any] | None:
    """A report of one change to DP-GD's defaults (and so to ``auto``, which runs it with
    public bounds), on the same splits and seeds as the ``base`` runs: the new DP-GD
    (``dpgd``) and ``auto`` (``auto``) columns; the earlier ones (``base`` rows renamed to
    ``old_dpgd`` / ``old_auto``) beside them; issue 30's targets scored both ways; the new
    DP-GD over the old per cell.  Writes docs/accuracy-data/``stem``.md and
    ``stem``_summary.json."""
    if not (dpgd.exists() and auto.exists()):
        return None
    rows = [{**r, "method": ren.get(r["method"], r["method"])}
            for path, ren in base for r in load_runs(path)]
    rows += load_runs(dpgd) + load_runs(auto)
    Sc = summarise(rows)
    cols = ("adassp", "boosted-adassp", "tukey-em", "dp-gd", "covariance-ols", "auto",
            old_dpgd, old_auto)
    out = [f"# {title} (40 repetitions, common random numbers)\n"]
    summary: dict[str, Any] = {}
    for role, sets in _roles_with_runs(Sc):
        out.append(f"## {role}: relative coefficient error (original scale)\n")
        out.append(main_table(Sc, sets, cols, "rel_err", fl if role != "dev2" else None))
        out.append(f"\n## {role}: test R²\n")
        out.append(main_table(Sc, sets, cols, "test_r2", None))
        t, ts = auto_target(Sc, sets, fl)
        out.append(f"\n## {role}: targets (auto not a candidate for best)\n\n{t}\n\n{ts}\n")
        before = {k: v for k, v in Sc.items() if k[1] not in ("dp-gd", "auto")}
        before.update({(k[0], "dp-gd", k[2]): v for k, v in Sc.items() if k[1] == old_dpgd})
        before.update({(k[0], "auto", k[2]): v for k, v in Sc.items() if k[1] == old_auto})
        ratio = [Sc[(k[0], "dp-gd", k[2])]["rel_err"] / v["rel_err"] for k, v in Sc.items()
                 if k[1] == old_dpgd and k[0] in sets and (k[0], "dp-gd", k[2]) in Sc]
        summary[role] = {"now": ts, before_key: auto_target(before, sets, fl)[1],
                         "dpgd_new_over_old_geomean": _gm(ratio),
                         "dpgd_new_over_old_worst": float(max(ratio)) if ratio else math.nan,
                         "dpgd_better_cells": int(sum(r < 1 for r in ratio)),
                         "cells": len(ratio)}
        out.append(f"DP-GD, {change}: {summary[role]}\n")
    (OUT / f"{stem}.md").write_text("\n".join(out) + "\n")
    (OUT / f"{stem}_summary.json").write_text(json.dumps(summary, indent=1))
    print("written", OUT / f"{stem}.md")
    return summary


def clip_report(fl: dict[str, Any]) -> dict[str, Any] | None:
    """docs/accuracy-data/after_clip.md (§12.6): DP-GD's spread-aware clip (``runs_clip``) and
    ``auto`` with it (``runs_auto3``) against the public clip and §12.5's ``auto``, on the
    splits and seeds of ``runs_crn``."""
    return change_report(
        fl, title="DP-GD's spread-aware clip", stem="after_clip",
        base=[(OUT / "runs_crn", {"dp-gd": "dp-gd (public clip)", "auto": "auto (TukeyEM rule)"}),
              (OUT / "runs_auto2", {"auto": "auto (§12.5)"})],
        dpgd=OUT / "runs_clip", auto=OUT / "runs_auto3", old_dpgd="dp-gd (public clip)",
        old_auto="auto (§12.5)", change="spread-aware over public clip",
        before_key="before (§12.5)")


def warm_report(fl: dict[str, Any]) -> dict[str, Any] | None:
    """docs/accuracy-data/after_warm.md (§12.7): DP-GD started at the released mean of y
    (``runs_warm``) and ``auto`` with it (``runs_auto4``) against §12.6's cold start
    (``runs_clip``, ``runs_auto3``), on the splits and seeds of ``runs_crn``."""
    return change_report(
        fl, title="DP-GD's warm start at the released mean of y", stem="after_warm",
        base=[(OUT / "runs_crn", {"dp-gd": "dp-gd (public clip)", "auto": "auto (TukeyEM rule)"}),
              (OUT / "runs_clip", {"dp-gd": "dp-gd (cold start)"}),
              (OUT / "runs_auto3", {"auto": "auto (§12.6)"})],
        dpgd=OUT / "runs_warm", auto=OUT / "runs_auto4", old_dpgd="dp-gd (cold start)",
        old_auto="auto (§12.6)", change="warm over cold start",
        before_key="before (§12.6)")


def main() -> None:
    rows = load_runs()
    S = summarise(rows)
    sets_all = [s for s in D.names() if any(k[0] == s for k in S)]
    fl = floors(sets_all)
    base = ("adassp", "boosted-adassp", "tukey-em", "dp-gd", "covariance-ols", "auto",
            "diffprivlib")
    out = ["## data sets\n", datasets_table(), ""]
    for role in ("benchmark", "dev", "dev2", "tuning"):
        sets = [s for s in D.names(role) if s in sets_all]
        if not sets:  # a role without runs (dev2 before its harness run): no empty tables
            continue
        out.append(f"## {role}: relative coefficient error (original scale)\n")
        out.append(main_table(S, sets, base, "rel_err", fl))
        out.append(f"\n## {role}: relative coefficient error (bounds-standardised)\n")
        out.append(main_table(S, sets, base, "rel_err_std", None))
        out.append(f"\n## {role}: test R²\n")
        out.append(main_table(S, sets, base, "test_r2", None))
        out.append(f"\n## {role}: ⊥ and CovarianceOLS's interval\n")
        out.append(refusals(S, sets))
        t, summ = targets(S, sets, fl, DPREG)
        out.append(f"\n## {role}: targets (current methods)\n\n{t}\n\n{summ}\n")
    S40 = summarise(load_runs(OUT / "runs40"))
    Sr1 = summarise(load_runs(OUT / "runs_r1"))
    Sall = {**S, **{k: v for k, v in S40.items() if k[1] == PROTO}, **Sr1}
    for role in ("benchmark", "dev", "dev2", "tuning"):
        sets = [s for s in D.names(role) if s in sets_all]
        if not sets:  # a role without runs (dev2 before its harness run): no empty tables
            continue
        out.append(f"\n## {role}: before/after (AdaSSP default vs eigen floor f = 3)\n")
        out.append(before_after(S40, sets))
        out.append(f"\n## {role}: auto rules (replace-one)\n")
        out.append(auto_rules(Sall, sets))
    (OUT / "tables.md").write_text("\n".join(out) + "\n")
    (OUT / "summary.json").write_text(json.dumps(
        {"|".join(map(str, k)): v for k, v in S.items()}, indent=1))
    print("written", OUT / "tables.md")
    after_report(S, fl)
    crn_report(fl)
    clip_report(fl)
    warm_report(fl)


if __name__ == "__main__":  # pragma: no cover
    main()
