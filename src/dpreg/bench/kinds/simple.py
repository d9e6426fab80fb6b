"""One-x regression experiments: Alabi et al. synthetic grids and small real data sets.

Kinds
-----
``simple-synthetic``
    Data from a generator (:mod:`dpreg.bench.generators`), ``datasets`` independent data sets
    per cell and ``trials`` releases per data set and method.  Per data set: Ĉ_true(q)
    (error against the generating line) divided by the true sampling sd σ(p̂) of the OLS
    estimate, and Ĉ(q) (error against OLS on the same data) divided by the estimated σ̂(p̂).
``simple-real``
    Fixed real data sets (one or many groups), one cell per ε; per group Ĉ(q)/σ̂.

Methods (``[[methods]]`` tables): ``method`` is one of ``ols``, ``theil-sen`` (non-private,
``pairs`` = "all" or k), ``noisy-stats``, ``dp-intercept``, ``dp-gd`` (``variant`` pure |
zcdp (ρ = ε²/2, as Alabi et al.) | approx (needs ``delta``)), ``theil-sen-exp``,
``theil-sen-wide`` (``theta``) and ``theil-sen-smooth`` (``dof``), the last three with
``pairs`` and ``output_range``.  ``name`` is the label used in tables and figures.

Theil-Sen methods with the same ``pairs`` share each trial's pair design (common random
numbers); each still has exactly its own release distribution.  For predictions only the
target at ``x_new`` is released and scored; it is charged ε/2 like one of the two targets of a
(p̃₂₅, p̃₇₅) release (Alabi et al. §7.1.5).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpreg import methods
from dpreg._random import simulation_generator
from dpreg.bench import engines as E
from dpreg.bench import generators as G
from dpreg.bench.kinds._base import Kind, register, require
from dpreg.bench.metrics import c_hat, summarise_ratio
from dpreg.exceptions import InvalidInputError
from dpreg.simple import max_matchings

__all__ = ["SimpleSynthetic", "SimpleReal", "METHOD_KINDS", "simple_releases"]

#: the non-private baselines of the simple harness (OLS and Theil-Sen's own median)
BASELINES = ("ols", "theil-sen")
#: the non-private baselines and the DP methods of the simple harness (the method registry)
METHOD_KINDS = (*BASELINES, *methods.names(harness="simple"))
#: the DP medians (Theil-Sen variants, on pair multisets shared between them)
_DP_TS = tuple(m.name for m in methods.specs(harness="simple") if m.harness_engine == "median")
_PARAMS = ("n", "sigma_x2", "sigma_e2", "epsilon", "theta", "enx", "sigma", "tau", "x_mean")


#: the keys a [[methods]] table of the simple harness may have: what ``_check_methods``,
#: ``simple_releases`` and ``_release_rows`` read (anything else is refused when the spec is
#: parsed: a misspelt or retired key -- e.g. ``steps``, now ``n_iter`` -- never silently falls
#: back to a default)
METHOD_KEYS = ("name", "method", "variant", "tau", "n_iter", "delta", "pairs", "output_range",
               "dof", "theta", "y_bounds")
#: the keys of each table of a ``simple-synthetic`` spec: what ``SimpleSynthetic`` reads
SYNTHETIC_TABLES: dict[str, tuple[str, ...]] = {
    "data": ("generator", "alpha", "beta", "x_bounds", "y_bounds", "clip_y", *_PARAMS),
    "evaluation": ("datasets", "trials", "estimand", "x_new", "q"),
    "plot": ("y", "ylabel", "hline"),
    "panels": ("name", "vary", "values", "fixed", "title", "label", "logx", "logy"),
    "panels.fixed": _PARAMS,
    "methods": METHOD_KEYS,
}
#: the keys of each table of a ``simple-real`` spec: what ``SimpleReal`` reads
REAL_TABLES: dict[str, tuple[str, ...]] = {
    "data": ("source",),
    "evaluation": ("trials", "epsilons", "max_groups", "x_new", "q", "keep_releases"),
    "plot": ("epsilon",),
    "methods": METHOD_KEYS,
}


def _check_methods(spec: Any) -> list[dict[str, Any]]:
    methods = require(spec, spec.data, "methods", "the spec")
    if not isinstance(methods, list) or not methods:
        raise InvalidInputError(f"spec {spec.name!r}: [[methods]] must be a non-empty list")
    names = set()
    for m in methods:
        name = require(spec, m, "name", "each [[methods]] table")
        kind = require(spec, m, "method", f"method {name!r}")
        if kind not in METHOD_KINDS:
            raise InvalidInputError(
                f"spec {spec.name!r}: method {name!r} has unknown method {kind!r}; "
                f"choose from {list(METHOD_KINDS)}")
        if kind in _DP_TS:
            require(spec, m, "output_range", f"method {name!r}")
        if name in names:
            raise InvalidInputError(f"spec {spec.name!r}: duplicate method name {name!r}")
        names.add(name)
    return methods


class _Designs:
    """Sorted pairwise multisets per ``pairs`` value, built lazily from a design stream."""

    def __init__(self, x: np.ndarray, y: np.ndarray, trials: int, estimand: str,
                 x_new: float, seq: np.random.SeedSequence, keys: list[str]) -> None:
        self.x, self.y, self.trials = x, y, trials
        self.estimand, self.x_new = estimand, x_new
        self.seqs = dict(zip(keys, seq.spawn(len(keys)))) if keys else {}
        self.cache: dict[str, E.SortedMultisets] = {}

    def get(self, pairs: Any) -> E.SortedMultisets:
        key = str(pairs)
        if key not in self.cache:
            xe = None if self.estimand == "slope" else self.x_new
            if key == "all":
                self.cache[key] = E.all_pairs_multiset(self.x, self.y, estimand=self.estimand,
                                                       x_eval=xe)
            else:
                k = min(int(pairs), max_matchings(self.x.size))
                gen = simulation_generator(self.seqs[key])
                self.cache[key] = E.kmatch_multisets(self.x, self.y, k, self.trials, gen,
                                                     estimands=((self.estimand, xe),))[0]
        return self.cache[key]


def _pairs_keys(methods: list[dict[str, Any]]) -> list[str]:
    keys = []
    for m in methods:
        if m["method"] in _DP_TS or m["method"] == BASELINES[1]:
            key = str(m.get("pairs", "all"))
            if key != "all" and key not in keys:
                keys.append(key)
    return keys


def simple_releases(m: dict[str, Any], x: np.ndarray, y: np.ndarray, *, epsilon: float,
                    estimand: str, x_new: float, trials: int, rng: np.random.Generator,
                    designs: _Designs, x_bounds: tuple[float, float],
                    y_bounds: tuple[float, float], theta: float | None = None) -> np.ndarray:
    """``trials`` releases of the estimand (prediction at ``x_new`` or slope); NaN = ⊥."""
    from dpreg.replicates import replicate_predictions
    from dpreg.simple import ols

    kind = m["method"]
    xe2 = (x_bounds[0] + 0.25 * (x_bounds[1] - x_bounds[0]),
           x_bounds[0] + 0.75 * (x_bounds[1] - x_bounds[0]))

    def from_pair(preds: np.ndarray) -> np.ndarray:
        slope = (preds[:, 1] - preds[:, 0]) / (xe2[1] - xe2[0])
        if estimand == "slope":
            return slope
        return preds[:, 0] + slope * (x_new - xe2[0])

    if kind in BASELINES:
        if kind == BASELINES[0]:
            return np.full(trials, _ols_value(ols(x, y), estimand, x_new))
        pairs = m.get("pairs", "all")
        if str(pairs) == "all":
            v = E.theil_sen_all_pairs(x, y, estimand=estimand, x_eval=x_new)
            return np.full(trials, v)
        return E.doubled_median_rows(designs.get(pairs))
    spec = methods.get(kind)
    if spec.harness_engine == "replicates":
        preds = replicate_predictions(kind, x, y, epsilon=epsilon, x_bounds=x_bounds,
                                      y_bounds=y_bounds, trials=trials, x_eval=xe2, rng=rng)
        return from_pair(preds)
    if spec.harness_engine == "gradient":
        from dpreg.simple import VARIANT_PARAMETERS, variant_parameters

        variant = m.get("variant", "pure")
        # the one rule from (ε, δ) to the variant's budget (Alabi et al. run DPGDzCDP with
        # ρ = ε²/2); δ only where the variant uses it
        delta = (float(require_key(m, "delta")) if "delta" in VARIANT_PARAMETERS.get(variant, ())
                 else None)
        preds, _ = E.gd_replicates(x, y, variant=variant, x_bounds=x_bounds, y_bounds=y_bounds,
                                   tau=float(m.get("tau", 1.0)), n_iter=int(m.get("n_iter", 80)),
                                   x_eval=xe2, trials=trials, rng=rng,
                                   **variant_parameters(variant, epsilon, delta))
        return from_pair(preds)
    # DP Theil-Sen: a DP median of the shared pair multisets, by the spec's median
    median = spec.estimator_options["median"]
    lo, hi = (float(v) for v in m["output_range"])
    pairs = m.get("pairs", "all")
    ms = designs.get(pairs)
    eps_t = E.median_split(epsilon, estimand)
    per_row = trials if str(pairs) == "all" else 1
    if median == "smooth":
        return E.smooth_median_rows(ms, epsilon_target=eps_t, lo=lo, hi=hi,
                                    dof=int(m.get("dof", 3)), rng=rng, draws_per_row=per_row)
    th = 0.0
    if median == "wide":
        th = float(theta if theta is not None else require_key(m, "theta"))
    return E.em_median_rows(ms, epsilon_target=eps_t, lo=lo, hi=hi, theta=th, rng=rng,
                            draws_per_row=per_row)


def _ols_value(r: Any, estimand: str, x_new: float) -> float:
    """The OLS estimand: slope, or the prediction at ``x_new``."""
    if estimand == "slope":
        return float(r.slope)
    return float(r.slope) * x_new + float(r.intercept)


def require_key(m: dict[str, Any], key: str) -> Any:
    if key not in m:
        raise InvalidInputError(f"method {m.get('name')!r} needs {key!r}")
    return m[key]


def _release_rows(methods: list[dict[str, Any]], x: np.ndarray, y: np.ndarray, *,
                  epsilon: float, estimand: str, x_new: float, q: float, trials: int,
                  seq: np.random.SeedSequence, x_bounds: tuple[float, float],
                  y_bounds: tuple[float, float], truth: float | None, sd_true: float,
                  theta: float | None, keep: int = 0) -> list[dict[str, Any]]:
    """One row per method for one data set (Ĉ against truth and against OLS)."""
    from dpreg.simple import ols, ols_prediction_se, ols_slope_se

    design_seq, *method_seqs = seq.spawn(1 + len(methods))
    designs = _Designs(x, y, trials, estimand, x_new, design_seq, _pairs_keys(methods))
    ref = ols(x, y)
    ols_est = _ols_value(ref, estimand, x_new)
    se_hat = (ols_slope_se(x, y) if estimand == "slope"
              else float(ols_prediction_se(x, y, x_new)))
    rows = []
    for m, mseq in zip(methods, method_seqs):
        t0 = time.perf_counter()
        rel = simple_releases(m, x, y, epsilon=epsilon, estimand=estimand, x_new=x_new,
                              trials=trials, rng=simulation_generator(mseq), designs=designs,
                              x_bounds=x_bounds,
                              y_bounds=tuple(m.get("y_bounds", y_bounds)),  # per-method range
                              theta=theta)
        secs = time.perf_counter() - t0
        c_h = c_hat(rel - ols_est, q)
        row = {
            "method": m["name"], "algorithm": m["method"],
            "private": m["method"] not in ("ols", "theil-sen"),
            "trials": trials, "failures": int(np.isnan(rel).sum()),
            "ols": float(ols_est), "se_hat": float(se_hat), "c_hat": c_h,
            "ratio_hat": c_h / se_hat if se_hat > 0 else math.nan,
            "seconds": secs,
        }
        if truth is not None:
            c_t = c_hat(rel - truth, q)
            row.update(truth=float(truth), sd_true=sd_true, c_true=c_t,
                       ratio_true=c_t / sd_true if sd_true > 0 else math.nan)
        if keep:
            row["releases"] = " ".join(f"{v:.6g}" for v in rel[:keep])
        rows.append(row)
    return rows


# ----------------------------------------------------------------------------- synthetic
@register
class SimpleSynthetic(Kind):
    name = "simple-synthetic"
    tables = SYNTHETIC_TABLES
    columns = ("dataset", "method", "algorithm", "private", "generator", "estimand", "n",
               "sigma_x2", "sigma_e2", "epsilon", "theta", "enx", "vary", "value", "trials",
               "failures", "truth", "ols", "sd_true", "se_hat", "c_true", "c_hat", "ratio_true",
               "ratio_hat", "seconds")

    @classmethod
    def validate(cls, spec: Any) -> None:
        _check_methods(spec)
        data = require(spec, spec.data, "data", "the spec")
        gen = require(spec, data, "generator", "[data]")
        if gen not in ("alabi-uniform", "alabi-fig8"):
            raise InvalidInputError(f"spec {spec.name!r}: unknown generator {gen!r}")
        ev = require(spec, spec.data, "evaluation", "the spec")
        for key in ("datasets", "trials"):
            require(spec, ev, key, "[evaluation]")
        panels = require(spec, spec.data, "panels", "the spec")
        for p in panels:
            for key in ("name", "vary", "values"):
                require(spec, p, key, "each [[panels]] table")
            if p["vary"] not in _PARAMS:
                raise InvalidInputError(
                    f"spec {spec.name!r}: panel {p['name']!r} varies unknown {p['vary']!r}")

    def cells(self, spec: Any) -> list[dict[str, Any]]:
        data = spec["data"]
        ev = spec["evaluation"]
        base = {k: data[k] for k in _PARAMS if k in data}
        cells: list[dict[str, Any]] = []
        index: dict[tuple, dict[str, Any]] = {}
        for p in spec["panels"]:
            for v in p["values"]:
                params = {**base, **p.get("fixed", {}), p["vary"]: v}
                if "enx" in params:  # fixed ε·n·σ_x²: n follows
                    params["n"] = max(3, int(round(params["enx"] / (params["epsilon"]
                                                                     * params["sigma_x2"]))))
                key = tuple(sorted((k, float(params[k])) for k in params))
                if key in index:  # shared by several panels
                    c = index[key]
                    c["panel"] += "+" + p["name"]
                    c["values"][p["name"]] = v
                    continue
                c = {"cell": len(cells), "panel": p["name"], "params": params,
                     "values": {p["name"]: v},
                     "cost": float(params["n"]) * ev["datasets"] * ev["trials"]}
                index[key] = c
                cells.append(c)
        return cells

    def run_cell(self, spec: Any, cell: dict[str, Any], seq: np.random.SeedSequence
                 ) -> list[dict[str, Any]]:
        data, ev = spec["data"], spec["evaluation"]
        methods = spec["methods"]
        pr = cell["params"]
        n, eps = int(pr["n"]), float(pr["epsilon"])
        estimand = ev.get("estimand", "predictions")
        x_new, q = float(ev.get("x_new", 0.25)), float(ev.get("q", 0.68))
        trials, datasets = int(ev["trials"]), int(ev["datasets"])
        xb = tuple(data.get("x_bounds", (0.0, 1.0)))
        yb = tuple(data.get("y_bounds", (0.0, 1.0)))
        gen_name = data["generator"]
        alpha, beta = float(data.get("alpha", 0.5)), float(data.get("beta", 0.2))
        if gen_name == "alabi-uniform":
            sx2, se2 = float(pr["sigma_x2"]), float(pr["sigma_e2"])
            truth = alpha if estimand == "slope" else alpha * x_new + beta
            sd_true = (G.alabi_true_slope_sd(n, sigma_x2=sx2, sigma_e2=se2) if estimand == "slope"
                       else G.alabi_true_prediction_sd(n, sigma_x2=sx2, sigma_e2=se2,
                                                       x_new=x_new))
        else:
            truth = alpha if estimand == "slope" else alpha * x_new + beta
            sd_true = math.nan
        theta = pr.get("theta")
        vary = cell["panel"]
        rows: list[dict[str, Any]] = []
        for d, dseq in enumerate(seq.spawn(datasets)):
            data_seq, rel_seq = dseq.spawn(2)
            g = simulation_generator(data_seq)
            if gen_name == "alabi-uniform":
                x, y = G.alabi_uniform(n, sigma_x2=float(pr["sigma_x2"]),
                                       sigma_e2=float(pr["sigma_e2"]), alpha=alpha, beta=beta,
                                       clip_y=bool(data.get("clip_y", True)), rng=g)
            else:
                x, y = G.alabi_fig8(n, sigma=float(pr.get("sigma", 1e-3)),
                                    tau=float(pr.get("tau", 1e-4)), slope=alpha,
                                    intercept=beta, x_mean=float(pr.get("x_mean", 0.0)),
                                    rng=g)
            for r in _release_rows(methods, x, y, epsilon=eps, estimand=estimand, x_new=x_new,
                                   q=q, trials=trials, seq=rel_seq, x_bounds=xb, y_bounds=yb,
                                   truth=truth, sd_true=sd_true, theta=theta):
                rows.append({"dataset": d, **r, "generator": gen_name, "estimand": estimand,
                             "n": n, "sigma_x2": pr.get("sigma_x2"),
                             "sigma_e2": pr.get("sigma_e2"), "epsilon": eps,
                             "theta": theta if theta is not None else
                             next((m.get("theta") for m in methods if m["name"] == r["method"]),
                                  None),
                             "enx": eps * n * float(pr.get("sigma_x2") or math.nan),
                             "vary": vary, "value": ";".join(f"{k}={v}" for k, v in
                                                             cell["values"].items())})
        return rows

    def summarise(self, spec: Any, rows: pd.DataFrame) -> pd.DataFrame:
        if not len(rows):
            return pd.DataFrame()
        out = []
        lookup = {p["name"]: p for p in spec["panels"]}
        for (cell, method), grp in rows.groupby(["cell", "method"], sort=True):
            first = grp.iloc[0]
            for panel in str(first["panel"]).split("+"):
                p = lookup.get(panel)
                vary = p["vary"] if p else ""
                rec: dict[str, Any] = {"panel": panel, "vary": vary,
                                       "x": _param_value(first, vary), "cell": int(cell),
                                       "method": method, "algorithm": first["algorithm"],
                                       "private": bool(first["private"])}
                for col in ("n", "sigma_x2", "sigma_e2", "epsilon", "theta", "enx"):
                    rec[col] = first.get(col)
                rec["datasets"] = int(len(grp))
                rec["trials"] = int(first["trials"])
                rec["failure_rate"] = float(grp["failures"].sum() / (grp["trials"].sum()))
                if "ratio_true" in grp:
                    s = summarise_ratio(grp["ratio_true"].to_numpy(float))
                    rec.update({f"ratio_true_{k}": v for k, v in s.items()})
                s = summarise_ratio(grp["ratio_hat"].to_numpy(float))
                rec.update({f"ratio_hat_{k}": v for k, v in s.items()})
                rec["c_hat_median"] = float(np.median(grp["c_hat"]))
                rec["seconds"] = float(grp["seconds"].sum())
                out.append(rec)
        frame = pd.DataFrame(out)
        return frame.sort_values(["panel", "x", "method"], kind="stable").reset_index(drop=True)

    def figures(self, spec: Any, rows: pd.DataFrame, summary: pd.DataFrame, out: Path
                ) -> list[Path]:
        from dpreg.bench.plots import line_panel

        paths: list[Path] = []
        if not len(summary):
            return paths
        ycol = spec.get("plot", {}).get("y", "ratio_true_mean")
        ylabel = spec.get("plot", {}).get("ylabel", "mean Ĉ_true(0.68) / σ(p̂)")
        for p in spec["panels"]:
            sub = summary[summary["panel"] == p["name"]]
            if not len(sub):
                continue
            paths += line_panel(sub, x="x", y=ycol, group="method", out=out,
                                stem=f"figure_{p['name']}",
                                title=f"{spec.figure}{p['name']}: {p.get('title', p['vary'])}",
                                xlabel=p.get("label", p["vary"]), ylabel=ylabel,
                                logx=bool(p.get("logx", True)), logy=bool(p.get("logy", True)),
                                hline=spec.get("plot", {}).get("hline"))
        return paths


def _param_value(row: pd.Series, vary: str) -> float:
    if vary in row and row[vary] is not None and not pd.isna(row[vary]):
        return float(row[vary])
    for part in str(row.get("value", "")).split(";"):
        if "=" in part:
            return float(part.split("=", 1)[1])
    return math.nan


# ----------------------------------------------------------------------------- real data
@register
class SimpleReal(Kind):
    name = "simple-real"
    tables = REAL_TABLES
    columns = ("dataset", "group", "n", "method", "algorithm", "private", "epsilon", "trials",
               "failures", "ols", "se_hat", "c_hat", "ratio_hat", "seconds", "releases")

    @classmethod
    def validate(cls, spec: Any) -> None:
        _check_methods(spec)
        data = require(spec, spec.data, "data", "the spec")
        src = require(spec, data, "source", "[data]")
        if src not in ("stock", "bikeshare"):
            raise InvalidInputError(f"spec {spec.name!r}: unknown source {src!r}")
        ev = require(spec, spec.data, "evaluation", "the spec")
        require(spec, ev, "trials", "[evaluation]")
        require(spec, ev, "epsilons", "[evaluation]")

    def cells(self, spec: Any) -> list[dict[str, Any]]:
        ev = spec["evaluation"]
        return [{"cell": i, "panel": "epsilon", "epsilon": float(e),
                 "cost": float(ev["trials"])} for i, e in enumerate(ev["epsilons"])]

    def run_cell(self, spec: Any, cell: dict[str, Any], seq: np.random.SeedSequence
                 ) -> list[dict[str, Any]]:
        from dpreg.bench.datasets import simple_groups

        ev = spec["evaluation"]
        src = simple_groups(spec["data"]["source"])
        limit = ev.get("max_groups")
        keys = src.keys if limit is None else src.keys[: int(limit)]
        x_new, q = float(ev.get("x_new", 0.25)), float(ev.get("q", 0.68))
        trials = int(ev["trials"])
        keep = int(ev.get("keep_releases", 0))
        rows = []
        for d, dseq in enumerate(seq.spawn(len(keys))):
            x, y = src.xs[d], src.ys[d]
            for r in _release_rows(spec["methods"], x, y, epsilon=cell["epsilon"],
                                   estimand="predictions", x_new=x_new, q=q, trials=trials,
                                   seq=dseq, x_bounds=(0.0, 1.0), y_bounds=(0.0, 1.0),
                                   truth=None, sd_true=math.nan, theta=None, keep=keep):
                rows.append({"dataset": d, "group": keys[d], "n": int(x.size),
                             "epsilon": cell["epsilon"], **r})
        return rows

    def summarise(self, spec: Any, rows: pd.DataFrame) -> pd.DataFrame:
        if not len(rows):
            return pd.DataFrame()
        out = []
        for (eps, method), grp in rows.groupby(["epsilon", "method"], sort=True):
            r = grp["ratio_hat"].to_numpy(float)
            s = summarise_ratio(r)
            out.append({"epsilon": float(eps), "method": method,
                        "algorithm": grp["algorithm"].iloc[0],
                        "groups": int(len(grp)),
                        "share_below_se": float(np.mean(r < 1.0)),
                        **{f"ratio_hat_{k}": v for k, v in s.items()},
                        "c_hat_median": float(np.median(grp["c_hat"])),
                        "failure_rate": float(grp["failures"].sum() / grp["trials"].sum()),
                        "seconds": float(grp["seconds"].sum())})
        return pd.DataFrame(out)

    def figures(self, spec: Any, rows: pd.DataFrame, summary: pd.DataFrame, out: Path
                ) -> list[Path]:
        from dpreg.bench.plots import ecdf_groups, release_ecdf

        if not len(rows):
            return []
        if rows["dataset"].nunique() > 1:
            return ecdf_groups(rows, out=out, stem="figure_ecdf",
                               title=f"{spec.title}: Ĉ(0.68)/σ̂(p̂₂₅) over groups")
        return release_ecdf(rows, out=out, stem="figure_releases", title=spec.title,
                            epsilon=float(spec.get("plot", {}).get("epsilon",
                                                                   rows["epsilon"].iloc[0])))
