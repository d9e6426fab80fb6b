"""A summary of the harness runs on the ``dev2`` pool (:mod:`studies.accuracy.data`): the
properties of each data set that a selection rule for ``auto`` could read, next to which
method won.

``python -m studies.accuracy.dev2_summary RUNS_DIR`` (after ``python -m
studies.accuracy.harness --sets <dev2 names> --reps 40 --out RUNS_DIR``) prints

* per set: n, d, TukeyEM's model count m = min(1000, ⌊n_train / (2·(d + 1))⌋); the sd of y
  scaled to its public bound, (y − mid)/half-width; the residual sd of OLS on that scaled y;
  and the smallest and largest eigenvalue of the covariance of the bound-scaled regressors
  (same scaling).  Values are clamped to their bounds first (what the methods see); all rows;
  the properties are data-dependent: they describe the pool, they are not public inputs;
* per set and ε ∈ {0.5, 1, 4}: the median relative coefficient error of each method (⊥ share
  in brackets where some fits failed), the best method among AdaSSP, BoostedAdaSSP, TukeyEM,
  DP-GD and CovarianceOLS with a ⊥ share below 1/2, the ratio of DP-GD's and of TukeyEM's
  error (when TukeyEM did not fail in most fits) and of ``auto``'s to the best, and what
  ``auto`` chose (counts over the repetitions).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from studies.accuracy import data as D
from studies.accuracy.harness import EPSILONS, ols
from studies.accuracy.report import load_runs, summarise

CANDIDATES = ("adassp", "boosted-adassp", "tukey-em", "dp-gd", "covariance-ols")
SHORT = {"adassp": "adassp", "boosted-adassp": "boosted", "tukey-em": "tukey",
         "dp-gd": "dp-gd", "covariance-ols": "cov-ols", "auto": "auto"}


def properties(name: str, n_train: int) -> dict[str, float]:
    """n, d, TukeyEM's m, the scaled y's sd, OLS's residual sd on it and the extreme
    eigenvalues of the scaled regressors' covariance."""
    X, y, bx, by = D.load(name)
    lo = np.array([b[0] for b in bx])
    hi = np.array([b[1] for b in bx])
    Xs = (np.clip(X, lo, hi) - (lo + hi) / 2) / ((hi - lo) / 2)
    ys = (np.clip(y, *by) - (by[0] + by[1]) / 2) / ((by[1] - by[0]) / 2)
    n, d = X.shape
    b0, b, _ = ols(Xs, ys)
    resid = ys - b0 - Xs @ b
    eig = np.linalg.eigvalsh(np.atleast_2d(np.cov(Xs, rowvar=False)))
    return {"n": n, "d": d, "m": min(1000, n_train // (2 * (d + 1))),
            "sd_y": float(ys.std()), "resid_sd": float(np.sqrt(resid @ resid / (n - d - 1))),
            "eig_min": float(eig[0]), "eig_max": float(eig[-1])}


def _g(v: float) -> str:
    return "⊥" if v is None or math.isnan(v) else f"{v:.3g}"


def _cell(c: dict[str, Any] | None) -> str:
    if c is None:
        return "–"
    if math.isnan(c["rel_err"]):
        return f"⊥{c['fail']:.0%}"
    return _g(c["rel_err"]) + (f" (⊥{c['fail']:.0%})" if c["fail"] > 0 else "")


def report(path: Path) -> str:
    S = summarise(load_runs(path))
    # the data sets of the runs, in table order (dev2 first): other roles are summarised too
    order = D.names("dev2") + [s for s in D.names() if D.SETS[s].role != "dev2"]
    sets = [s for s in order if any(k[0] == s for k in S)]
    head = ["data", "n", "d", "TukeyEM m", "sd(y scaled)", "OLS resid sd", "eig min", "eig max"]
    lines = ["## dev2 sets (bound-scaled: (v − mid)/half-width)", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in sets:
        n_train = next(v["n_train"] for k, v in S.items() if k[0] == name)
        p = properties(name, n_train)
        lines.append(f"| {name} | {p['n']} | {p['d']} | {p['m']} | {p['sd_y']:.3g} | "
                     f"{p['resid_sd']:.3g} | {p['eig_min']:.3g} | {p['eig_max']:.3g} |")
    methods = (*CANDIDATES, "auto")
    head = ["data", "ε", *(SHORT[m] for m in methods), "best", "dp-gd/best", "tukey/best",
            "auto/best", "auto chose"]
    lines += ["", "## median relative coefficient error by ε", "",
              "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    wins: dict[str, int] = {}
    for name in sets:
        for eps in EPSILONS:
            cells = {m: S.get((name, m, eps)) for m in methods}
            errs = {m: c["rel_err"] for m, c in cells.items() if m in CANDIDATES and c
                    and c["fail"] < 0.5 and not math.isnan(c["rel_err"])}
            if not errs:
                continue
            best = min(errs, key=lambda k: errs[k])
            wins[best] = wins.get(best, 0) + 1

            def ratio(m: str, best: str = best, errs: dict[str, float] = errs,
                      cells: dict[str, Any] = cells) -> str:
                c = cells.get(m)
                if c is None or c["fail"] >= 0.5 or math.isnan(c["rel_err"]):
                    return "⊥"
                return f"{c['rel_err'] / errs[best]:.2f}"

            au = cells.get("auto") or {}
            chose = ", ".join(f"{SHORT.get(k, k)} {v}" for k, v in
                              sorted(au.get("chosen", {}).items(), key=lambda kv: -kv[1]))
            lines.append(f"| {name} | {eps:g} | " + " | ".join(_cell(cells[m]) for m in methods)
                         + f" | {SHORT[best]} | {ratio('dp-gd')} | {ratio('tukey-em')} | "
                         f"{ratio('auto')} | {chose} |")
    lines += ["", "Best method (cells won): " + ", ".join(
        f"{SHORT[m]} {v}" for m, v in sorted(wins.items(), key=lambda kv: -kv[1])) + "."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else Path("/tmp/runs_dev2")
    print(report(path))


if __name__ == "__main__":  # pragma: no cover
    main()
