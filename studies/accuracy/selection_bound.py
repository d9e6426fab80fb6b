"""How far can a DP *selection* take ``auto``?  An upper bound (issue 30, item 1).

``auto`` with several regressors chooses its method from public inputs (n, d, ε, δ).  A private
selection would spend a share s of ε on a DP statistic and run the chosen method with the rest.
Whatever the statistic, such an ``auto`` can do no better than an ORACLE that pays the same
share and then always picks, per cell, the method with the smallest median error at (1 − s)·ε.
This script measures that oracle on the benchmark sets: it runs the candidate methods at
(1 − s)·ε with the harness's splits and common random numbers, and counts the cells in which
the oracle is within 1.25× of the best method at the full ε (the issue's target for ``auto``).
If even the oracle misses the 90% target at a share that a useful statistic needs, no
selection rule can reach it and the remaining gap is in the methods, not in the choice.

Usage (about 10 CPU minutes per share at 40 repetitions)::

    python -m studies.accuracy.selection_bound --full /tmp/runs_crn40 --shares 0.05,0.1,0.2 \\
        --reps 40 --out docs/accuracy-data/selection_bound.json

``--full`` is a harness output folder at the full ε (the same repetitions); the candidate runs
at (1 − s)·ε are written next to the JSON (``selection_runs/``) and reused when present.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from studies.accuracy import data as D
from studies.accuracy.harness import EPSILONS, run_set_at_share
from studies.accuracy.report import _gm, load_runs, summarise

CANDIDATES = ("adassp", "boosted-adassp", "tukey-em", "dp-gd", "covariance-ols")
#: the candidates a practical selection would consider (issue 30's proposal)
SMALL = ("dp-gd", "covariance-ols", "tukey-em")


def _runs(name: str, share: float, reps: int, folder: Path) -> list[dict[str, Any]]:
    return run_set_at_share(name, CANDIDATES, reps, share, folder / f"{name}-s{share:g}.json.gz")


def _best(S: dict[tuple[str, str, float], dict[str, Any]], name: str, eps: float,
          cands: tuple[str, ...]) -> tuple[str, float]:
    errs = {m: S[(name, m, eps)]["rel_err"] for m in cands if (name, m, eps) in S
            and S[(name, m, eps)]["fail"] < 0.5 and not math.isnan(S[(name, m, eps)]["rel_err"])}
    m = min(errs, key=lambda k: errs[k])
    return m, errs[m]


def bound(full: Path, shares: list[float], reps: int, folder: Path) -> dict[str, Any]:
    Sf = summarise(load_runs(full))
    sets = [s for s in D.names("benchmark") if any(k[0] == s for k in Sf)]
    out: dict[str, Any] = {"sets": sets, "reps": reps, "shares": {}}
    for share in shares:
        rows = [r for s in sets for r in _runs(s, share, reps, folder)]
        Ss = summarise(rows)
        cells: list[dict[str, Any]] = []
        for name in sets:
            for eps in EPSILONS:
                bm, be = _best(Sf, name, eps, CANDIDATES)
                cell: dict[str, Any] = {"set": name, "epsilon": eps, "best": bm, "best_err": be}
                for tag, cands in (("all", CANDIDATES), ("small", SMALL)):
                    om, oe = _best(Ss, name, eps, cands)
                    cell[tag] = {"method": om, "err": oe, "ratio": oe / be}
                dm = Ss[(name, "dp-gd", eps)]["rel_err"]
                cell["dp-gd"] = {"err": dm, "ratio": dm / be}
                cells.append(cell)
        summ = {tag: {"within_1.25": sum(c[tag]["ratio"] <= 1.25 for c in cells),
                      "geomean_ratio": _gm([c[tag]["ratio"] for c in cells])}
                for tag in ("all", "small", "dp-gd")}
        out["shares"][f"{share:g}"] = {"cells": cells, "summary": summ, "n_cells": len(cells)}
    return out


def table(res: dict[str, Any]) -> str:
    lines = ["| share s | cells | oracle over all 5 methods at (1−s)ε: within 1.25× | "
             "geo-mean ratio | oracle over DP-GD/CovarianceOLS/TukeyEM | geo-mean ratio | "
             "DP-GD alone at (1−s)ε | geo-mean ratio |", "|---|---|---|---|---|---|---|---|"]
    for s, v in res["shares"].items():
        sm, n = v["summary"], v["n_cells"]
        lines.append(f"| {s} | {n} | {sm['all']['within_1.25']} | {sm['all']['geomean_ratio']:.3f}"
                     f" | {sm['small']['within_1.25']} | {sm['small']['geomean_ratio']:.3f} | "
                     f"{sm['dp-gd']['within_1.25']} | {sm['dp-gd']['geomean_ratio']:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", required=True, help="harness output at the full ε")
    p.add_argument("--shares", default="0.05,0.1,0.2")
    p.add_argument("--reps", type=int, default=40)
    p.add_argument("--out", default=str(D.__file__).replace("data.py", "") + "selection.json")
    a = p.parse_args(argv)
    out = Path(a.out)
    res = bound(Path(a.full), [float(s) for s in a.shares.split(",")], a.reps,
                out.parent / "selection_runs")
    out.write_text(json.dumps(res, indent=1))
    print(table(res))


if __name__ == "__main__":  # pragma: no cover
    main()
