"""Accuracy study on real data shipped in registry packages (slow).

R² (in sample, median over seeds) of every multivariate method at ε ∈ {0.5, 1, 4} against
non-private OLS, with the documented public bounds of :mod:`dpreg.data`:

* ``diabetes`` -- scikit-learn ``load_diabetes(scaled=False)``: 442 × 10;
* ``bikeshare`` -- ISLP ``load_data("Bikeshare")`` (UCI Capital Bikeshare 2011, hourly):
  bikers ~ temp + hum + windspeed + workingday + hr + season, 8,645 × 6.  Public bounds: temp,
  hum and windspeed are documented as normalised to [0, 1]; workingday ∈ {0, 1}; hr ∈ [0, 23];
  season ∈ [1, 4]; hourly riders bounded by 1,000 (as in :mod:`dpreg.data`);
* ``fair`` -- statsmodels ``datasets.fair``: 6,366 × 6 (affairs survey; weak signal);
* ``statecrime`` -- statsmodels ``datasets.statecrime``: 51 × 5 (too small for DP at these ε;
  included to show it).

All bounds except bikeshare's come from :func:`dpreg.data.load_dataset`.

A research study, not part of the installed package: ``python -m studies.mv_accuracy`` (from the
root of a source checkout) prints the table; ``studies/tests/test_mv_accuracy_slow.py`` checks it
(``make test-slow``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from dpreg.exceptions import MechanismFailure
from dpreg.linear_model import (
    AdaSSP,
    BoostedAdaSSP,
    ClippedDPGradientDescent,
    CovarianceOLS,
    TukeyEM,
)

EPSILONS = (0.5, 1.0, 4.0)
DATASETS = ("diabetes", "bikeshare", "fair", "statecrime")
METHODS = ("AdaSSP", "BoostedAdaSSP", "BoostedAdaSSP-author", "TukeyEM", "ClippedDPGradientDescent",
           "CovarianceOLS")
BIKESHARE_BOUNDS = {"temp": (0.0, 1.0), "hum": (0.0, 1.0), "windspeed": (0.0, 1.0),
                    "workingday": (0.0, 1.0), "hr": (0.0, 23.0), "season": (1.0, 4.0),
                    "bikers": (0.0, 1000.0)}


def load(name: str) -> tuple[Any, np.ndarray, list[Any], Any]:
    """(X frame, y array, bounds_X, bounds_y) for a data set of the study."""
    if name == "bikeshare":
        import ISLP  # data only (make setup installs it without its dependencies)

        raw = ISLP.load_data("Bikeshare")
        cols = ["temp", "hum", "windspeed", "workingday", "hr", "season"]
        X = raw[cols].astype(float)
        return (X, raw["bikers"].astype(float).to_numpy(), [BIKESHARE_BOUNDS[c] for c in cols],
                BIKESHARE_BOUNDS["bikers"])
    from dpreg.data import load_dataset

    ds = load_dataset(name)
    X = ds.frame[list(ds.x)].astype(float)
    return (X, ds.frame[ds.y].astype(float).to_numpy(), [ds.bounds[c] for c in ds.x],
            ds.bounds[ds.y])


def make(method: str, eps: float, bx: Any, by: Any, n: int, p: int, seed: int) -> Any:
    """The estimator of ``method`` with the study's settings (a fixed public rule for TukeyEM's m)."""
    common: dict[str, Any] = dict(epsilon=eps, delta=1e-6, bounds_X=bx, bounds_y=by, random_state=seed)
    if method == "AdaSSP":
        return AdaSSP(inference=False, **common)  # Wang's release (the study's subject)
    if method == "BoostedAdaSSP":
        return BoostedAdaSSP(split="equal", **common)
    if method == "BoostedAdaSSP-author":
        return BoostedAdaSSP(split="author", **common)
    if method == "ClippedDPGradientDescent":
        return ClippedDPGradientDescent(**common)
    if method == "CovarianceOLS":
        return CovarianceOLS(**common)
    # TukeyEM: a fixed public rule for m (n is public under replace-one): about 2p rows per model
    common["delta"] = 1e-5
    return TukeyEM(n_models=max(8, min(1000, n // (2 * p))), **common)


def r2(y: np.ndarray, pred: np.ndarray) -> float:
    """In-sample R²."""
    return float(1.0 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2))


def study(seeds: int = 10, datasets: tuple[str, ...] = DATASETS) -> list[dict[str, Any]]:
    """One row per (data set, method, ε): median R² over ``seeds`` fits and the ⊥ count."""
    from sklearn.linear_model import LinearRegression

    rows: list[dict[str, Any]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in datasets:
            X, y, bx, by = load(name)
            ols = r2(y, LinearRegression().fit(X, y).predict(X))
            n, p = X.shape[0], X.shape[1] + 1
            for method in METHODS:
                for eps in EPSILONS:
                    scores: list[float] = []
                    failures = 0
                    for seed in range(seeds):
                        est = make(method, eps, bx, by, n, p, seed)
                        try:
                            est.fit(X, y)
                        except MechanismFailure:
                            failures += 1
                            continue
                        scores.append(r2(y, est.predict(X)))
                    rows.append({"dataset": name, "n": n, "d": p - 1, "method": method,
                                 "epsilon": eps, "ols_r2": ols,
                                 "median_r2": float(np.median(scores)) if scores else math.nan,
                                 "failures": failures, "trials": seeds})
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    """The markdown table of docs/multivariate.md."""
    out = ["| data (n×d) | OLS R² | method | ε=0.5 | ε=1 | ε=4 |", "|---|---|---|---|---|---|"]
    key: dict[tuple[Any, ...], dict[float, dict[str, Any]]] = {}
    for r in rows:
        key.setdefault((r["dataset"], r["n"], r["d"], r["ols_r2"], r["method"]), {})[
            r["epsilon"]] = r
    for (name, n, d, ols, method), cells in key.items():
        txt = []
        for eps in EPSILONS:
            r = cells[eps]
            v = "⊥" if math.isnan(r["median_r2"]) else f"{r['median_r2']:.3f}"
            if r["failures"]:
                v += f" (⊥ {r['failures']}/{r['trials']})"
            txt.append(v)
        out.append(f"| {name} ({n}×{d}) | {ols:.3f} | {method} | " + " | ".join(txt) + " |")
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover
    print(format_table(study()))
