"""Accuracy cost of the interval-ready defaults (docs/uncertainty.md, "Defaults").

``NoisyStats`` and ``AdaSSP`` release the statistics of their DP-aware interval by default
(``inference="auto"``): the same budget is split over one or two more statistics, so the point
estimate gets a little more noise (Laplace scales × 10/9 for NoisyStats; Gaussian sds × √(10/9)
for AdaSSP).  The Theil-Sen interval (``ci_alpha=``) would halve ε for the line, which is why it
is not a default.  This study measures the cost on real data shipped with dpreg's dependencies:
paired seeds, the same data, ``inference=False`` (or no ``ci_alpha``) against the default, and
the error of the coefficients against non-private OLS on the data clipped to the same public
bounds (the release's target at ε = ∞).

Metric: for the slope coefficients β (intercept left out), the relative error
‖β̂ − β_OLS‖₂ / ‖β_OLS‖₂ per release; the table shows its median and 90th percentile over the
seeds and the ratio of the medians (default / plain).  ⊥ releases are counted.

A research study, not part of the installed package: ``python -m studies.defaults_cost [--seeds
N] [--theil-sen-seeds M]`` (from the root of a source checkout) prints the table.
"""

from __future__ import annotations

import argparse
import math
import warnings
from typing import Any

import numpy as np

from dpreg.exceptions import MechanismFailure

EPSILONS = (0.5, 1.0, 4.0)
#: (data set, regressors) -- one x for the simple methods, several for AdaSSP
SIMPLE_CASES = (("diabetes", ("bmi",)), ("fair", ("rate_marriage",)))
#: Theil-Sen on all pairs is quadratic in n: the small data set only
THEIL_SEN_CASES = (("diabetes", ("bmi",)),)
MULTI_CASES = (("diabetes", ("age", "bmi", "bp", "s5")), ("fair", ("rate_marriage", "age",
                                                                    "yrs_married", "religious")))


def _data(name: str, cols: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, list[Any], Any]:
    from dpreg.data import load_dataset

    ds = load_dataset(name)
    X = ds.frame[list(cols)].to_numpy(dtype=float)
    y = ds.frame[ds.y].to_numpy(dtype=float)
    return X, y, [ds.bounds[c] for c in cols], ds.bounds[ds.y]


def _ols_slopes(X: np.ndarray, y: np.ndarray, bx: list[Any], by: Any) -> np.ndarray:
    Xc = np.column_stack([np.clip(X[:, j], *bx[j]) for j in range(X.shape[1])])
    yc = np.clip(y, *by)
    Z = np.column_stack([np.ones(len(yc)), Xc])
    return np.linalg.lstsq(Z, yc, rcond=None)[0][1:]


def _fit(method: str, option: str, eps: float, X: np.ndarray, y: np.ndarray, bx: list[Any],
         by: Any, seed: Any) -> np.ndarray | None:
    from dpreg.linear_model import AdaSSP, NoisyStats

    est: Any
    if method == "noisy-stats":
        est = NoisyStats(epsilon=eps, bounds_X=bx[0], bounds_y=by,
                         inference=option == "default", random_state=seed)
    elif method == "adassp":
        est = AdaSSP(epsilon=eps, delta=1e-6, bounds_X=bx, bounds_y=by,
                     inference=option == "default", random_state=seed)
    else:  # theil-sen-exp through the regress engine: the line alone, or line + interval
        from dpreg.api import fit_arrays

        opts: dict[str, Any] = {} if option == "default" else {"ci_alpha": 0.05}
        res = fit_arrays(X, y, method="theil-sen-exp", epsilon=eps, x_bounds=bx, y_bounds=by,
                         random_state=seed, **opts)
        return None if res.failed else res.params.to_numpy()[1:]
    try:
        est.fit(X, y)
    except MechanismFailure:
        return None
    return np.asarray(est.coef_, dtype=float)


def run(seeds: int = 500, theil_sen_seeds: int = 200) -> list[dict[str, Any]]:
    from dpreg._random import simulation_generator

    rows = []
    jobs = ([("noisy-stats", d, c, ("plain", "default")) for d, c in SIMPLE_CASES]
            + [("theil-sen-exp", d, c, ("default", "with ci_alpha")) for d, c in THEIL_SEN_CASES]
            + [("adassp", d, c, ("plain", "default")) for d, c in MULTI_CASES])
    for method, name, cols, options in jobs:
        X, y, bx, by = _data(name, cols)
        ref = _ols_slopes(X, y, bx, by)
        for eps in EPSILONS:
            errs: dict[str, list[float]] = {o: [] for o in options}
            fails = dict.fromkeys(options, 0)
            n_seeds = theil_sen_seeds if method.startswith("theil-sen") else seeds
            for s in range(n_seeds):
                for o in options:  # paired: the same seed for both configurations
                    rng = simulation_generator(np.random.SeedSequence([s, 17]))
                    coef = _fit(method, o, eps, X, y, bx, by, rng)
                    if coef is None:
                        fails[o] += 1
                        continue
                    errs[o].append(float(np.linalg.norm(coef - ref) / np.linalg.norm(ref)))
            med = {o: float(np.median(errs[o])) if errs[o] else math.nan for o in options}
            rows.append({
                "method": method, "data": f"{name} ({len(y)} rows; {' + '.join(cols)})",
                "epsilon": eps, "options": options, "seeds": n_seeds,
                "median": med,
                "p90": {o: float(np.quantile(errs[o], 0.9)) if errs[o] else math.nan
                        for o in options},
                "failed": fails,
                "ratio": med[options[1]] / med[options[0]],
            })
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    out = ["| method | data | ε | A | B | seeds | median rel. error A | median rel. error B | "
           "90% A | 90% B | ⊥ A/B | ratio of medians B/A |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a, b = r["options"]
        out.append(f"| {r['method']} | {r['data']} | {r['epsilon']:g} | {a} | {b} | {r['seeds']} | "
                   f"{r['median'][a]:.3f} | {r['median'][b]:.3f} | {r['p90'][a]:.3f} | "
                   f"{r['p90'][b]:.3f} | {r['failed'][a]}/{r['failed'][b]} | "
                   f"{r['ratio']:.3f} |")
    out.append("\n(paired seeds; relative error ‖β̂ − β_OLS‖/‖β_OLS‖ of the slopes against OLS "
               "on the data clipped to the public bounds)")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=500)
    ap.add_argument("--theil-sen-seeds", type=int, default=200)
    args = ap.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = run(args.seeds, args.theil_sen_seeds)
    print(table(rows))


if __name__ == "__main__":
    main()
