"""The "beyond the papers" part of docs/results.md: numbers of dpreg's own studies, rendered
from the files those studies committed (docs/auto-data/, docs/uncertainty-data/).

* ``method="auto"`` vs the better of {Theil-Sen-exp 10-match, NoisyStats} on the Figs. 5–6 grids
  (``docs/auto-data/evaluation.json``, written by ``python -m studies.auto report``) and the
  shipped rule on the second fresh grid and on the Figs. 5–6 grids
  (``docs/auto-data/evaluation3.json``, ``evaluation3_figs.json``, written by ``python -m
  studies.auto rule3 evaluate``);
* the cost of bounds-free mode (``docs/auto-data/bounds_free.json``);
* coverage and width of the DP-aware intervals (``docs/uncertainty-data/*.csv``).

Each part is skipped when its file is absent, so the page still renders in a bare checkout.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from dpreg.bench.claims import fmt_number
from studies.auto import evaluation_table

__all__ = ["beyond_sections", "find_docs", "hessian_mixing"]

_BOUNDS_LABELS = {"bikeshare": "bikeshare, 144 groups of 41–62 rows (temp → bikers)",
                  "nyse": "NYSE, 6051 days (DJ_return → log_volume)"}


def find_docs(dest: Path) -> Path | None:
    """The docs directory holding the study files: next to ``dest`` or in the source tree."""
    for cand in (Path(dest).parent, Path(__file__).resolve().parents[1] / "docs"):
        if any((cand / sub).is_dir() for sub in ("auto-data", "uncertainty-data",
                                                 "hessian-mixing-data", "tukey-data")):
            return cand
    return None


def _auto3(docs: Path) -> list[str]:
    """The shipped rule and the second rule on the second fresh grid (``evaluation3.json``) and
    on the Figs. 5-6 grids (``evaluation3_figs.json``), both written by ``python -m studies.auto
    rule3 evaluate``."""
    ev: dict[str, Any] = {}
    # the fresh grid and the held-out cell, then the Figs. 5-6 grids rerun for the shipped rule
    for fname in ("evaluation3.json", "evaluation3_figs.json"):
        path = docs / "auto-data" / fname
        if path.exists():
            ev.update(json.loads(path.read_text()))
    if not ev:
        return []
    lines = ["Shipped rule (issue 21, third round: NoisyStats iff u·(share + 0.04) > 126.5 and "
             "count/√n · σ_x²/0.05 < 2, from the same two releases), frozen before the second "
             "fresh grid was run, against the second rule (u > 3162 and count/√n < 2) on the same "
             "runs. \"useless\": cells whose better finalist is no better than the trivial "
             "zero-budget release (the midpoint of the y bounds); \"CI > 1.10\": cells whose "
             "bootstrap 95% interval over data sets lies above 1.10.", "",
             "| grid | rule | cells | data sets × releases | cells ≤ 1.10 | share | worst ratio | "
             "useless cells | CI > 1.10 |", "|---|---|---|---|---|---|---|---|---|"]
    names = {"RULE3": "shipped", "RULE2": "second rule"}
    for grid, e in ev.items():
        for rule in ("RULE3", "RULE2"):
            sm = e["rules"][rule]["summary"]
            lines.append(f"| {grid} | {names[rule]} | {sm['cells']} | {e['datasets']} × "
                         f"{e['trials']} | {sm['at_most_1.10']} | "
                         f"{sm['at_most_1.10'] / sm['cells']:.1%} | {sm['max_ratio']:.3f} | "
                         f"{sm['useless_cells']} | {sm['significantly_over_1.10']} |")
    return lines + ["", "The second rule on the first fresh grid (now training data) and the "
                    "first rule (\"previous rule\"):", ""]


def _auto(docs: Path) -> str | None:
    path = docs / "auto-data" / "evaluation.json"
    if not path.exists():
        return None
    ev: dict[str, Any] = json.loads(path.read_text())
    lines = ["### `method=\"auto\"` on the paper's synthetic design (target: ≤ 1.10 × the better of "
             "Theil-Sen-exp 10-match and NoisyStats in ≥ 95% of the cells of a fresh grid and "
             "≤ 1.3 × everywhere, same total ε)",
             "Ĉ_true(0.68)/σ(p̂₂₅) of `auto` (5% of ε on its selection statistics and its method "
             "on the rest; no selection, Theil-Sen at the full ε, where ε²·n/4 is below the "
             "threshold so that no data set could reach it) divided by the better finalist at the "
             "full ε; the data generator of Alabi et al.'s Figs. 5–6 (y clipped to [0, 1]). "
             "fresh: a grid whose n, σ_x², ε and σ_e² all lie off the derivation grid, fresh "
             "seeds; held-out: the independent cell on which the previous rule failed; "
             "derivation grid: in-sample; \"previous rule\": U = 1259 with the share of rows "
             "on the bounds < 0.06, scored on the same runs. Each finalist's releases at ε and "
             "at `auto`'s share of ε use common random numbers. \"informative\": cells whose better "
             "finalist is within 10 sampling sds (elsewhere every method is 10–400× the sampling "
             "error). Derivation and per-cell tables: [auto.md](auto.md).", "", *_auto3(docs),
             "| grid | rule (U, C) | cells | data sets × releases | max ratio | cells ≤ 1.10 | "
             "median | informative cells: max ratio | ≤ 1.10 |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, e in ev.items():
        share = e.get("share_at_most_1.10", float("nan"))
        inf_max = e.get("max_ratio_informative", float("nan"))
        inf_share = e.get("share_at_most_1.10_informative", float("nan"))
        lines.append(f"| {name} | {e['u_threshold']:g}, {e['boundary_limit']:g} | {e['cells']} | "
                     f"{e['datasets']} × {e['trials']} | {e['max_ratio']:.3f} | {share:.1%} | "
                     f"{e['median_ratio']:.3f} | {inf_max:.3f} ({e.get('informative_cells', '?')}) "
                     f"| {inf_share:.1%} |")
    for label, keep in (("second rule", lambda k: "previous" not in k),
                        ("previous rule", lambda k: "previous" in k)):
        fresh = [e for k, e in ev.items() if k.startswith("fresh") and keep(k)]
        if fresh:
            cells = sum(e["cells"] for e in fresh)
            ok = sum(round(e["share_at_most_1.10"] * e["cells"]) for e in fresh)
            worst = max(e["max_ratio"] for e in fresh)
            lines.append(f"\nWhole fresh grid, {label}: {ok} of {cells} cells ≤ 1.10 "
                         f"({ok / cells:.1%}), worst {worst:.3f}.")
    for name, e in ev.items():
        if name not in ("fig5", "fig6", "held-out"):
            continue
        lines += ["", f"Per cell, {name} (n, σ_x², ε, σ_e²; share of rows on the bounds; how often "
                  "`auto` ran NoisyStats):", "", *evaluation_table(e)]
    return "\n".join(lines)


def _bounds(docs: Path) -> str | None:
    path = docs / "auto-data" / "bounds_free.json"
    if not path.exists():
        return None
    d: dict[str, Any] = json.loads(path.read_text())
    lines = ["### Cost of not knowing the bounds (`bounds=\"private\"`)",
             "One x: Ĉ(0.68)/σ̂(p̂₂₅) against the non-private OLS on the same data (median over "
             "data sets, 20 releases each; bounds-free fits made with `allow_unreliable=True`, "
             "how often the reliability check refuses them in auto.md); several x: median "
             "in-sample R² over 10 seeds. Details: [auto.md](auto.md) §6.", "",
             "| data | ε | auto, public bounds | auto, bounds-free | cost (×) | TS-exp, public | "
             "NoisyStats, public |", "|---|---|---|---|---|---|---|"]
    for key in ("bikeshare", "nyse"):
        for eps, r in d.get(key, {}).items():
            cost = r["auto-private"] / r["auto-public"] if r["auto-public"] > 0 else math.nan
            lines.append(f"| {_BOUNDS_LABELS.get(key, key)} | {float(eps):g} | "
                         f"{fmt_number(r['auto-public'])} | {fmt_number(r['auto-private'])} | "
                         f"{fmt_number(cost)} | "
                         f"{fmt_number(r['theil-sen-exp'])} | {fmt_number(r['noisy-stats'])} |")
    mv = d.get("multivariate", {})
    if mv:
        lines += ["", "| data (n × d) | OLS R² | ε | auto, public bounds | auto, bounds-free |",
                  "|---|---|---|---|---|"]
        for key, r in mv.items():
            name, eps = key.split("|")
            lines.append(f"| {name} ({r['n']} × {r['d']}) | {r['ols']:.3f} | {float(eps):g} | "
                         f"{fmt_number(r['auto-public'])} ({r['auto-public-method']}) | "
                         f"{fmt_number(r['auto-private'])} ({r['auto-private-method']}) |")
    return "\n".join(lines)


def _uncertainty(docs: Path) -> str | None:
    folder = docs / "uncertainty-data"
    files = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    if not files:
        return None
    lines = ["### DP-aware confidence intervals (coverage target [1 − α − 0.01, 1 − α + 0.03], "
             "width ≤ 1.5 × oracle)",
             "2,000 repetitions per run; designs uniform, clustered, two-point, t₃ errors, "
             "diabetes (rows resampled, OLS on all rows as the truth) and diabetes-residual (real x "
             "and residuals, residual bootstrap). Per-cell tables, the oracle and the interval "
             "method: [uncertainty.md](uncertainty.md).", "",
             "| run | cells | in band | coverage range | median width / oracle | naive plug-in "
             "coverage | non-private OLS coverage |", "|---|---|---|---|---|---|---|"]
    for f in files:
        df = pd.read_csv(f)
        kinds = df["kind"].unique()
        if "percentile" in kinds:
            df = df[df["kind"] == "percentile"]
        elif "studentized" in kinds:
            df = df[df["kind"] == "studentized"]
        lines.append(f"| {f.stem} | {len(df)} | {int(df['in_target'].sum())} | "
                     f"{df['coverage'].min():.3f}–{df['coverage'].max():.3f} | "
                     f"{df['median_ratio'].min():.2f}–{df['median_ratio'].max():.2f} | "
                     f"{df['naive_coverage'].min():.2f}–{df['naive_coverage'].max():.2f} | "
                     f"{df['np_coverage'].min():.3f}–{df['np_coverage'].max():.3f} |")
    pooled = sorted((folder / "pooled").glob("*.csv"))
    if pooled:
        lines += ["", "Pooled over every run of each cell (`python -m studies.dpci "
                  "--pool …`; extra seeds were run for designs that had a cell outside the band, "
                  "and every run of a cell, the failing one included, is in its pool):", "",
                  "| method | cells | in band | runs per cell | pooled coverage range | "
                  "largest median width / oracle |", "|---|---|---|---|---|---|"]
        for f in pooled:
            df = pd.read_csv(f)
            lines.append(f"| {f.stem} | {len(df)} | {int(df['in_target'].sum())} | "
                         f"{int(df['runs'].min())}–{int(df['runs'].max())} | "
                         f"{df['coverage'].min():.4f}–{df['coverage'].max():.4f} | "
                         f"{df['median_ratio_max'].max():.3f} |")
    return "\n".join(lines)


def beyond_sections(dest: Path) -> str | None:
    """The "beyond the papers" section of docs/results.md (None when no study files exist)."""
    docs = find_docs(dest)
    if docs is None:
        return None
    parts = [p for p in (_auto(docs), _bounds(docs), _uncertainty(docs), _tukey_diamonds(docs))
             if p]
    if not parts:
        return None
    return ("<a id=\"beyond\"></a>\n## Beyond the papers: private algorithm selection, "
            "bounds-free mode, DP-aware intervals\n\n" + "\n\n".join(parts))


def hessian_mixing(dest: Path) -> str | None:
    """For the closing note of docs/results.md: iterative Hessian mixing against AdaSSP and
    BoostedAdaSSP (``docs/hessian-mixing-data/comparison.md``, written by ``python -m
    studies.hessian_mixing``) and its audit line (``audit.json``: the JSON list that
    ``python -m studies.ihm.audit --json`` prints)."""
    docs = find_docs(dest)
    if docs is None:
        return None
    path = docs / "hessian-mixing-data" / "comparison.md"
    if not path.exists():
        return None
    lines = ["### Beyond AdaSSP: iterative Hessian mixing (studied, not shipped)",
             "Test MSE / OLS test MSE under the tang-compare bounded protocol (public bounds, "
             "features in the unit ball with an intercept, y in [−1, 1], δ = 10⁻⁶) on the "
             "thirteen offline data sets; each trial is one random 80/20 split shared by the "
             "three methods (a paired design). Columns IHM/AdaSSP and IHM/Boosted: median over "
             "the trials of the per-split MSE ratio with its distribution-free 95% interval "
             "(sign-test inversion); \"significant\": win = both intervals below 1, loss = "
             "either above 1. The rule set for a new algorithm: keep it as a method only if it "
             "wins on a majority of cells; it does not, so IHM is a study implementation "
             "(studies/ihm), not a dpreg method. Command and discussion: [multivariate.md]"
             "(multivariate.md#iterative-hessian-mixing-studied-not-shipped).", "",
             path.read_text().strip()]
    audit = docs / "hessian-mixing-data" / "audit.json"
    if audit.exists():
        rows = json.loads(audit.read_text())
        lines += ["", "Privacy audit of the study implementation (`python -m studies.ihm.audit "
                  "--json`, dpreg's auditor; α = 10⁻⁶): " +
                  "; ".join(f"{r['pair']}: ε_LCB {r['epsilon_lcb']:.4f} vs claimed "
                            f"{r['epsilon']:.4g} (δ = {r['delta']:g}) at N = {r['samples']:,} "
                            f"({'PASS' if r['passed'] else 'FAIL'})" for r in rows) + "."]
    return "\n".join(lines)


def _tukey_diamonds(docs: Path) -> str | None:
    path = docs / "tukey-data" / "diamonds.md"
    if not path.exists():
        return None
    return ("### TukeyEM on Diamonds: where the accuracy goes (`python -m studies.tukey_diamonds`)"
            "\nThe amin-r2 design (raw units, an intercept, the paper's nine features, 80/20 "
            "split seed 42). Discussion: [multivariate.md](multivariate.md#hyperparameter-"
            "guidance).\n\n" + path.read_text().strip())
