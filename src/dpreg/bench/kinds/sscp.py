"""Bain, D'Orazio, Sheffet & Vadhan: the DP covariance (SSCP) release, on simulated and real data.

Kind ``sscp-sim``:

* ``coef`` cells (one per coefficient C): ``datasets`` simulated data sets
  (:func:`dpreg.bench.generators.bain_simulated`, n rows, d − 1 Gaussian columns with random
  means and sds, y = C·x₁ + N(0, 1)), ``trials`` releases of the SSCP matrix per data set
  (:func:`dpreg.release_sscp`, add/remove neighbours, analytic Gaussian calibration), the
  regression y ~ x₁ + … + x_{d−1} read off each release (plug-in OLS, Bain et al. Alg. 2).
  Metrics: beta distance ‖β̂_DP − β̂_OLS‖₂ (all coefficients incl. the intercept, and the slopes
  alone) and the coefficient distance |β̂₁,DP − β̂₁,OLS| (β̂_OLS from the same data, like their
  ``lm`` reference); ⊥ releases and singular regressor blocks are counted.
* ``norm`` cells (ε × n): Frobenius and spectral norm of the noise E = (noisy − exact) of the
  [0, 1]-scaled matrix (their sanity checks: shrinks as ε grows, does not depend on n).

Kind ``sscp-real``: one real data set; ``trials`` releases per ε and the coefficient table of
each release (plug-in SEs, t, p) against the non-private OLS table.
"""

from __future__ import annotations

import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpreg._random import simulation_generator
from dpreg.bench import generators as G
from dpreg.bench.kinds._base import Kind, register, require
from dpreg.exceptions import PrivacyLeakWarning

__all__ = ["SSCPSim", "SSCPReal"]


def _ols(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(β with intercept first, plug-in standard errors) of OLS with an intercept."""
    from dpreg._extras import require

    sm = require("statsmodels.api", "the SSCP reproductions' OLS reference", extra="repro")

    fit = sm.OLS(y, sm.add_constant(X, has_constant="add")).fit()
    return np.asarray(fit.params), np.asarray(fit.bse)


def _dp_fit(arr: np.ndarray, cols: list[str], bounds: dict[str, tuple[float, float]],
            eps: float, delta: float, gen: np.random.Generator, formula: str
            ) -> tuple[np.ndarray | None, Any, Any]:
    """(β or None when ⊥, the release, the results object)."""
    from dpreg.covariance import release_sscp

    rel = release_sscp(arr, columns=cols, bounds=[bounds[c] for c in cols], epsilon=eps,
                       delta=delta, random_state=gen)
    if rel.failed:
        return None, rel, None
    res = rel.regress(formula, se="plugin")
    if getattr(res, "failed", False):
        return None, rel, res
    return np.asarray(res.params, dtype=float), rel, res


#: the keys of each table of an ``sscp-sim`` spec: what ``SSCPSim`` reads
SIM_TABLES: dict[str, tuple[str, ...]] = {
    "sim": ("n", "d", "epsilon", "delta", "coefficients", "datasets", "trials", "noise_sd",
            "bound_width"),
    "norms": ("epsilons", "n", "reps"),
}
#: the keys of the table of an ``sscp-real`` spec: what ``SSCPReal`` reads
REAL_TABLES: dict[str, tuple[str, ...]] = {"real": ("dataset", "epsilons", "delta", "trials")}


@register
class SSCPSim(Kind):
    name = "sscp-sim"
    tables = SIM_TABLES
    columns = ("dataset", "family", "coefficient", "n", "d", "epsilon", "delta", "trials",
               "failures", "beta_dist_mean", "beta_dist_p95", "slope_dist_mean", "slope_dist_p95",
               "coef_dist_mean", "coef_dist_p95", "beta_dists", "frobenius", "spectral",
               "seconds")

    @classmethod
    def validate(cls, spec: Any) -> None:
        sim = require(spec, spec.data, "sim", "the spec")
        for key in ("n", "d", "epsilon", "delta", "coefficients", "datasets", "trials"):
            require(spec, sim, key, "[sim]")
        norms = spec.data.get("norms")
        if norms is not None:
            for key in ("epsilons", "n", "reps"):
                require(spec, norms, key, "[norms]")

    def cells(self, spec: Any) -> list[dict[str, Any]]:
        sim = spec["sim"]
        eps_list = sim["epsilon"] if isinstance(sim["epsilon"], list) else [sim["epsilon"]]
        cells: list[dict[str, Any]] = []
        for eps in eps_list:
            for c in sim["coefficients"]:
                cells.append({"cell": len(cells), "panel": "coef", "coefficient": float(c),
                              "epsilon": float(eps),
                              "cost": float(sim["n"]) * sim["datasets"] * sim["trials"]})
        norms = spec.get("norms")
        if norms:
            for eps in norms["epsilons"]:
                for n in norms["n"]:
                    cells.append({"cell": len(cells), "panel": "norm", "epsilon": float(eps),
                                  "n": int(n), "cost": float(n) * norms["reps"]})
        return cells

    def run_cell(self, spec: Any, cell: dict[str, Any], seq: np.random.SeedSequence
                 ) -> list[dict[str, Any]]:
        sim = spec["sim"]
        d = int(sim["d"])
        cols = [f"x{j}" for j in range(1, d)] + ["y"]
        formula = "y ~ " + " + ".join(cols[:-1])
        delta = float(sim["delta"])
        width = float(sim.get("bound_width", 6.0))
        if cell["panel"] == "norm":
            return self._norms(spec, cell, seq, cols, delta, width)
        rows = []
        eps = float(cell["epsilon"])
        for ds, dseq in enumerate(seq.spawn(int(sim["datasets"]))):
            data_seq, rel_seq = dseq.spawn(2)
            t0 = time.perf_counter()
            data = G.bain_simulated(int(sim["n"]), d=d, coefficient=cell["coefficient"],
                                    noise_sd=float(sim.get("noise_sd", 1.0)),
                                    rng=simulation_generator(data_seq))
            arr = np.column_stack([data.X, data.y])
            bounds = data.bounds(width)
            beta_ols, _ = _ols(data.X, data.y)
            gen = simulation_generator(rel_seq)
            dist, sdist, cdist = [], [], []
            fails = 0
            for _ in range(int(sim["trials"])):
                beta, _, _ = _dp_fit(arr, cols, bounds, eps, delta, gen, formula)
                if beta is None:
                    fails += 1
                    dist.append(math.inf)
                    sdist.append(math.inf)
                    cdist.append(math.inf)
                    continue
                dist.append(float(np.linalg.norm(beta - beta_ols)))
                sdist.append(float(np.linalg.norm(beta[1:] - beta_ols[1:])))
                cdist.append(float(abs(beta[1] - beta_ols[1])))
            rows.append({"dataset": ds, "family": "coef", "coefficient": cell["coefficient"],
                         "n": int(sim["n"]), "d": d, "epsilon": eps, "delta": delta,
                         "trials": int(sim["trials"]), "failures": fails,
                         "beta_dist_mean": float(np.mean(dist)),
                         "beta_dist_p95": float(np.quantile(dist, 0.95)),
                         "slope_dist_mean": float(np.mean(sdist)),
                         "slope_dist_p95": float(np.quantile(sdist, 0.95)),
                         "coef_dist_mean": float(np.mean(cdist)),
                         "coef_dist_p95": float(np.quantile(cdist, 0.95)),
                         "beta_dists": " ".join(f"{v:.6g}" for v in dist),
                         "seconds": time.perf_counter() - t0})
        return rows

    def _norms(self, spec: Any, cell: dict[str, Any], seq: np.random.SeedSequence,
               cols: list[str], delta: float, width: float) -> list[dict[str, Any]]:
        from dpreg.covariance import release_sscp

        sim, norms = spec["sim"], spec["norms"]
        data_seq, rel_seq = seq.spawn(2)
        data = G.bain_simulated(cell["n"], d=int(sim["d"]), coefficient=1.0,
                                rng=simulation_generator(data_seq))
        arr = np.column_stack([data.X, data.y])
        bounds = data.bounds(width)
        blist = [bounds[c] for c in cols]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            exact = release_sscp(arr, columns=cols, bounds=blist, epsilon=math.inf,
                                 delta=delta, random_state=0).noisy_scaled
        gen = simulation_generator(rel_seq)
        t0 = time.perf_counter()
        fro, spe = [], []
        for _ in range(int(norms["reps"])):
            noisy = release_sscp(arr, columns=cols, bounds=blist, epsilon=cell["epsilon"],
                                 delta=delta, random_state=gen).noisy_scaled
            e = noisy - exact
            fro.append(float(np.linalg.norm(e, "fro")))
            spe.append(float(np.linalg.norm(e, 2)))
        return [{"dataset": 0, "family": "norm", "n": cell["n"], "d": int(sim["d"]),
                 "epsilon": cell["epsilon"], "delta": delta, "trials": int(norms["reps"]),
                 "frobenius": float(np.mean(fro)), "spectral": float(np.mean(spe)),
                 "seconds": time.perf_counter() - t0}]

    def summarise(self, spec: Any, rows: pd.DataFrame) -> pd.DataFrame:
        if not len(rows):
            return pd.DataFrame()
        out = []
        coef = rows[rows["family"] == "coef"]
        for (eps, c), grp in coef.groupby(["epsilon", "coefficient"], sort=True):
            dists = np.concatenate([np.array(s.split(), dtype=float) for s in grp["beta_dists"]])
            out.append({"family": "coef", "epsilon": float(eps), "coefficient": float(c),
                        "releases": int(dists.size),
                        "failure_rate": float(grp["failures"].sum() / grp["trials"].sum()),
                        "beta_dist_mean": float(np.mean(dists)),
                        "beta_dist_median": float(np.median(dists)),
                        "beta_dist_p95": float(np.quantile(dists, 0.95)),
                        "slope_dist_mean": float(grp["slope_dist_mean"].mean()),
                        "coef_dist_mean": float(grp["coef_dist_mean"].mean()),
                        "coef_dist_p95_median": float(grp["coef_dist_p95"].median()),
                        "relative_coef_error": float(grp["coef_dist_mean"].mean() / c),
                        "seconds": float(grp["seconds"].sum())})
        norm = rows[rows["family"] == "norm"]
        for _, r in norm.iterrows():
            out.append({"family": "norm", "epsilon": r["epsilon"], "n": int(r["n"]),
                        "frobenius": r["frobenius"], "spectral": r["spectral"],
                        "releases": int(r["trials"]), "seconds": r["seconds"]})
        return pd.DataFrame(out)

    def figures(self, spec: Any, rows: pd.DataFrame, summary: pd.DataFrame, out: Path
                ) -> list[Path]:
        from dpreg.bench.plots import line_panel

        paths: list[Path] = []
        coef = summary[summary["family"] == "coef"]
        if len(coef):
            parts = []
            for eps, g in coef.groupby("epsilon", sort=True):
                tag = f" (ε={eps:g})"
                parts += [
                    pd.DataFrame({"series": "mean ‖β̂_DP − β̂_OLS‖₂" + tag, "C": g["coefficient"],
                                  "value": g["beta_dist_mean"]}),
                    pd.DataFrame({"series": "95th percentile" + tag, "C": g["coefficient"],
                                  "value": g["beta_dist_p95"]}),
                    pd.DataFrame({"series": "mean |β̂₁,DP − β̂₁,OLS|" + tag,
                                  "C": g["coefficient"], "value": g["coef_dist_mean"]}),
                ]
            long = pd.concat(parts)
            paths += line_panel(long, x="C", y="value", group="series", out=out,
                                stem="figure_beta_distance",
                                title=f"{spec.figure}: beta distance vs C", xlabel="C",
                                ylabel="distance to non-private OLS")
        norm = summary[summary["family"] == "norm"].copy()
        if len(norm):
            norm["series"] = "n=" + norm["n"].astype(int).astype(str)
            paths += line_panel(norm, x="epsilon", y="frobenius", group="series", out=out,
                                stem="figure_noise_norm",
                                title="Frobenius norm of the noise (scaled matrix)",
                                xlabel="ε", ylabel="mean ‖E‖_F")
        return paths


@register
class SSCPReal(Kind):
    name = "sscp-real"
    tables = REAL_TABLES
    columns = ("dataset", "trial", "epsilon", "delta", "n", "term", "ols", "ols_se",
               "estimate", "se", "t", "p", "failed", "seconds")

    @classmethod
    def validate(cls, spec: Any) -> None:
        real = require(spec, spec.data, "real", "the spec")
        for key in ("dataset", "epsilons", "delta", "trials"):
            require(spec, real, key, "[real]")

    def cells(self, spec: Any) -> list[dict[str, Any]]:
        real = spec["real"]
        return [{"cell": i, "panel": "epsilon", "epsilon": float(e),
                 "cost": float(real["trials"])} for i, e in enumerate(real["epsilons"])]

    def run_cell(self, spec: Any, cell: dict[str, Any], seq: np.random.SeedSequence
                 ) -> list[dict[str, Any]]:
        from dpreg.bench.datasets import multivariate

        real = spec["real"]
        data = multivariate(real["dataset"])
        cols = data.features + ["y"]
        bounds = {**dict(zip(data.features, data.bounds_X)), "y": data.bounds_y}
        arr = np.column_stack([data.X, data.y])
        beta_ols, se_ols = _ols(data.X, data.y)
        terms = ["intercept"] + data.features
        formula = "y ~ " + " + ".join(data.features)
        gen = simulation_generator(seq)
        rows = []
        for t in range(int(real["trials"])):
            t0 = time.perf_counter()
            beta, _, res = _dp_fit(arr, cols, bounds, cell["epsilon"], float(real["delta"]),
                                   gen, formula)
            secs = time.perf_counter() - t0
            for j, term in enumerate(terms):
                rec = {"dataset": 0, "trial": t, "epsilon": cell["epsilon"],
                       "delta": float(real["delta"]), "n": int(data.y.size), "term": term,
                       "ols": float(beta_ols[j]), "ols_se": float(se_ols[j]),
                       "failed": beta is None, "seconds": secs}
                if beta is not None:
                    rec.update(estimate=float(beta[j]), se=float(np.asarray(res.bse)[j]),
                               t=float(np.asarray(res.tvalues)[j])
                               if getattr(res, "tvalues", None) is not None else math.nan,
                               p=float(np.asarray(res.pvalues)[j])
                               if getattr(res, "pvalues", None) is not None else math.nan)
                rows.append(rec)
        return rows

    def summarise(self, spec: Any, rows: pd.DataFrame) -> pd.DataFrame:
        if not len(rows):
            return pd.DataFrame()
        out = []
        for (eps, term), grp in rows.groupby(["epsilon", "term"], sort=False):
            ok = grp[~grp["failed"].astype(bool)]
            ols = float(grp["ols"].iloc[0])
            est = ok["estimate"].to_numpy(float)
            p = ok["p"].to_numpy(float) if "p" in ok else np.full(len(ok), np.nan)
            out.append({"epsilon": float(eps), "term": term, "n": int(grp["n"].iloc[0]),
                        "ols": ols, "ols_se": float(grp["ols_se"].iloc[0]),
                        "releases": int(len(grp)),
                        "failure_rate": float(grp["failed"].astype(bool).mean()),
                        "median_estimate": float(np.median(est)) if est.size else math.nan,
                        "q05": float(np.quantile(est, 0.05)) if est.size else math.nan,
                        "q95": float(np.quantile(est, 0.95)) if est.size else math.nan,
                        "median_abs_error": float(np.median(np.abs(est - ols)))
                        if est.size else math.nan,
                        "same_sign": float(np.mean(np.sign(est) == np.sign(ols)))
                        if est.size else math.nan,
                        "significant_5pct": float(np.mean(p < 0.05)) if p.size else math.nan,
                        "first_estimate": float(est[0]) if est.size else math.nan,
                        "first_se": float(ok["se"].iloc[0]) if len(ok) else math.nan,
                        "first_p": float(p[0]) if p.size else math.nan})
        return pd.DataFrame(out)

    def figures(self, spec: Any, rows: pd.DataFrame, summary: pd.DataFrame, out: Path
                ) -> list[Path]:
        from dpreg.bench.plots import line_panel

        if not len(summary):
            return []
        s = summary.copy()
        s["rel_error"] = s["median_abs_error"] / s["ols"].abs()
        return line_panel(s, x="epsilon", y="rel_error", group="term", out=out,
                          stem="figure_relative_error",
                          title=f"{spec.title}: median |β̂_DP − β̂_OLS| / |β̂_OLS|",
                          xlabel="ε", ylabel="relative error", hline=1.0)
