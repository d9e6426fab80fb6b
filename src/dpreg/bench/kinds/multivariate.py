"""Multivariate comparisons: Tang et al. (BoostedAdaSSP vs AdaSSP, DP-GD, TukeyEM) and Amin et
al. (R² of TukeyEM, AdaSSP, DP-GD against OLS).

Kind ``multivariate``: one cell per (data set, ε).  Each data set is split once into train and
test parts (a fixed public permutation from ``split_seed``, 80/20 like the authors' code); every
method is fitted ``trials`` times on the training part (each fit its own ``SeedSequence``
child), scored by test MSE and test R² (and train R²).  A ⊥ fit (TukeyEM's propose-test-release
failing) is counted as a failure and scored as +∞ MSE / −∞ R² (the authors' code instead
returns the all-zero coefficient vector).

Methods (``estimator``): ``ols`` (non-private), ``adassp``, ``boosted-adassp``, ``dp-gd``
(:class:`~dpreg.linear_model.ClippedDPGradientDescent`), ``tukey-em`` (``n_models`` = ``"auto"``, an
integer or ``"rule"`` = min(1000, ⌊n_train/(2(d+1))⌋), a public function of n and d; with fewer
than 8 models TukeyEM cannot run and the fit counts as ⊥),
``covariance-ols``, ``adassp-databounds`` -- AdaSSP with per-feature box bounds read off the
training data (every feature then mapped to [−1, 1]): **not DP**, labelled as such -- and
``adassp-authors`` -- Amin et al.'s own AdaSSP baseline (their §4.1): the raw design with an
intercept column, its Euclidean row-norm bound and label bound set to the largest row norm and
largest |y| of the training data, no per-feature rescaling: **not DP** either.  Extra keyword
arguments of an estimator go in ``params``.  ``[multi] trials`` is the number of fits per
method; ``[multi] trials_by_data`` overrides it per data set (Amin et al. use 50 fits on
Diamonds, 10 elsewhere).  The summary gives two medians of the fits: ``median_*`` is the lower
median (the ⌈T/2⌉-th smallest value, ``numpy.quantile(..., method="inverted_cdf")``) and
``mid_median_*`` the ordinary one (the mean of the two middle values for even T).

Protocols (``[multi] protocols``, default ``["bounded"]``; every cell is run under each):

* ``"bounded"`` -- dpreg's: every feature and the label are clamped to their documented public
  bounds and mapped to [−1, 1] by the estimators, with an intercept;
* ``"tang"`` -- Tang et al.'s: the **raw** features, every row (train and test) clipped to
  Euclidean norm 1 (:func:`tang_rows`), no intercept; AdaSSP clips labels to |y| <= 1,
  BoostedAdaSSP clips its residuals to τ = 1, DP-GD clips per-example gradients to 1, TukeyEM
  needs no bounds.  The functional cores are called with these bounds (row-norm bound 1, label
  bound 1); the OLS reference is fitted on the same clipped rows without an intercept.  Row
  clipping is a per-record, data-independent map, so it costs no privacy.  ``adassp-databounds``
  has no meaning here and is skipped.
"""

from __future__ import annotations

import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpreg import methods
from dpreg._random import simulation_generator
from dpreg.bench import generators as G
from dpreg.bench.kinds._base import Kind, check_keys, register, require
from dpreg.bench.metrics import mse, r2
from dpreg.exceptions import InvalidInputError, MechanismFailure

__all__ = ["Multivariate", "ESTIMATORS", "PROTOCOLS", "tang_rows"]

#: the OLS baseline, the DP methods of the multivariate harness (the method registry) and
#: AdaSSP with bounds read off the data (a non-private illustration)
ESTIMATORS = ("ols", *methods.names(harness="multivariate"), "adassp-databounds",
              "adassp-authors")
#: a non-DP illustration: AdaSSP with per-feature box bounds read off the data
DATA_BOUNDS = "adassp-databounds"
#: Amin et al.'s AdaSSP baseline (not DP): raw units, row-norm and label bounds read off the data
AUTHORS_ADASSP = "adassp-authors"
#: the estimators that read their bounds off the training data (not private)
NOT_PRIVATE = ("ols", DATA_BOUNDS, AUTHORS_ADASSP)
#: the data protocols of the harness (module doc)
PROTOCOLS = ("bounded", "tang")


#: the keys of each table of a ``multivariate`` spec: what ``Multivariate`` and the helpers
#: below read (``params`` are the estimator's own options, checked by the estimator)
TABLES: dict[str, tuple[str, ...]] = {
    "multi": ("datasets", "epsilons", "delta", "trials", "protocols", "trials_by_data",
              "test_fraction", "split_seed"),
    "synthetic": ("n", "n_features", "noise", "bias", "x_bound"),
    "plot": ("reference",),
    "methods": ("name", "estimator", "params", "delta"),
}


def tang_rows(X: np.ndarray) -> np.ndarray:
    """Tang et al.'s preprocessing of a design: each row x scaled to x·min(1, 1/‖x‖₂) (rows
    clipped to the unit ball; raw features, no intercept column)."""
    from dpreg.multivariate import clip_rows

    return clip_rows(np.asarray(X, dtype=float), 1.0)


def _fit_tang(m: dict[str, Any], *, eps: float, delta: float, X: np.ndarray, y: np.ndarray,
              seed: np.random.SeedSequence) -> np.ndarray | None:
    """One fit under Tang et al.'s protocol (``X`` already row-clipped): the coefficient
    vector (no intercept), or None for ⊥ / a method that cannot run (its spec's
    ``fit_unit_ball``: the core with row-norm and label bound 1)."""
    spec = methods.get(m["estimator"], allowed=methods.names(harness="multivariate"))
    params: dict[str, Any] = dict(m.get("params", {}))
    dl = float(m.get("delta", delta))
    res = spec.fit_unit_ball(X, y, epsilon=eps, delta=dl, rng=simulation_generator(seed),
                             params=params)
    if res is None or res.failed:
        return None
    return res.params.to_numpy(float)


def _dataset(spec: Any, name: str) -> tuple[np.ndarray, np.ndarray, list[tuple[float, float]],
                                            tuple[float, float], str]:
    if name == "synthetic":
        syn = spec.get("synthetic", {})
        seq = np.random.SeedSequence(spec.seed, spawn_key=(1_000_000,))  # same data in every cell
        X, y, w = G.make_regression_like(int(syn.get("n", 22_000)),
                                         n_features=int(syn.get("n_features", 10)),
                                         noise=float(syn.get("noise", 10.0)),
                                         bias=float(syn.get("bias", 0.0)),
                                         rng=simulation_generator(seq))
        xb = float(syn.get("x_bound", 4.5))
        sd_y = math.sqrt(float(w @ w) + float(syn.get("noise", 10.0)) ** 2)
        yb = float(syn.get("bias", 0.0)), 5.0 * sd_y
        desc = (f"make_regression-style: n={y.size}, {X.shape[1]} informative N(0,1) features, "
                f"noise sd {syn.get('noise', 10.0)}, bias {syn.get('bias', 0.0)}; public bounds "
                f"from the generator: |x| ≤ {xb}, |y − bias| ≤ 5·sd(y) = {yb[1]:.0f}")
        return (X, y, [(-xb, xb)] * X.shape[1], (yb[0] - yb[1], yb[0] + yb[1]), desc)
    from dpreg.bench.datasets import multivariate

    d = multivariate(name)
    return d.X, d.y, list(d.bounds_X), d.bounds_y, d.description


def _split(n: int, frac: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    perm = simulation_generator(seed).permutation(n)
    n_test = max(1, int(round(frac * n)))
    return perm[n_test:], perm[:n_test]


def _estimator(m: dict[str, Any], *, eps: float, delta: float, bx: list[tuple[float, float]],
               by: tuple[float, float], n: int, d: int, X: np.ndarray, y: np.ndarray,
               seed: np.random.SeedSequence) -> Any:
    """The estimator of one fit under the bounded protocol: the method's spec with the papers'
    own options (``paper_options``, e.g. AdaSSP without the interval's yᵀy) under the spec
    file's ``params``; ``None`` when the method cannot run on this design (TukeyEM with fewer
    than 8 models)."""
    kind = m["estimator"]
    dl = float(m.get("delta", delta))
    rs = simulation_generator(seed)
    if kind == DATA_BOUNDS:  # not DP: bounds read off the training data (module doc)
        data_bx = [(float(lo), float(hi)) for lo, hi in zip(X.min(axis=0), X.max(axis=0))]
        data_bx = [(lo, hi if hi > lo else lo + 1.0) for lo, hi in data_bx]
        lo_y, hi_y = float(y.min()), float(y.max())
        bx, by = data_bx, (lo_y, hi_y if hi_y > lo_y else lo_y + 1.0)
        kind = "adassp"
    spec = methods.get(kind, allowed=methods.names(harness="multivariate"))
    params: dict[str, Any] = {**spec.paper_options, **m.get("params", {})}
    if "n_models" in params:  # TukeyEM: public model count from n and the d + 1 columns
        count = spec.paper_model_count(params.pop("n_models"), n, d + 1, epsilon=eps, delta=dl)
        if count is None:
            return None  # fewer than 8 models of d + 1 rows: TukeyEM cannot run (⊥)
        params["n_models"] = count
    xb, yb = (bx, by) if spec.needs_bounds else (None, None)
    return spec.make_estimator(epsilon=eps, delta=dl, x_bounds=xb, y_bounds=yb,  # type: ignore[arg-type]
                               fit_intercept=True, ledger=None, random_state=rs, options=params)


def _fit_authors_adassp(m: dict[str, Any], *, eps: float, delta: float, X: np.ndarray,
                        y: np.ndarray, seed: np.random.SeedSequence) -> np.ndarray:
    """Amin et al.'s AdaSSP baseline (**not DP**: its bounds are read off the data): Wang's
    AdaSSP on the raw design with an intercept column, row-norm bound = the largest row norm
    and label bound = the largest |y| of ``X``, ``y``.  Returns [intercept, coefficients]."""
    from dpreg.multivariate import adassp

    A = np.column_stack([np.ones(len(X)), X])
    xb = float(np.max(np.linalg.norm(A, axis=1)))
    yb = float(np.max(np.abs(y)))
    params: dict[str, Any] = {"inference": False, "lambda_rule": "wang", **m.get("params", {})}
    res = adassp(A, y, x_norm_bound=xb, y_bound=yb if yb > 0 else 1.0, epsilon=eps,
                 delta=float(m.get("delta", delta)), rng=simulation_generator(seed), **params)
    return res.params.to_numpy(float)


def _predict_ols(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, *, intercept: bool = True
                 ) -> tuple[np.ndarray, np.ndarray]:
    def design(Z: np.ndarray) -> np.ndarray:
        return np.column_stack([np.ones(len(Z)), Z]) if intercept else Z

    A = design(Xtr)
    beta, *_ = np.linalg.lstsq(A, ytr, rcond=None)
    return A @ beta, design(Xte) @ beta


@register
class Multivariate(Kind):
    name = "multivariate"
    tables = TABLES
    columns = ("dataset", "data", "protocol", "n_train", "n_test", "d", "epsilon", "delta", "method",
               "estimator", "private", "trial", "failed", "test_mse", "test_r2", "train_r2",
               "ols_test_mse", "seconds")

    @classmethod
    def validate(cls, spec: Any) -> None:
        multi = require(spec, spec.data, "multi", "the spec")
        for key in ("datasets", "epsilons", "delta", "trials"):
            require(spec, multi, key, "[multi]")
        methods = require(spec, spec.data, "methods", "the spec")
        # per-data-set trial counts name data sets the harness knows (a misspelt one never
        # silently runs the default count; a quick grid may leave some of them out)
        from dpreg.bench.datasets import MULTIVARIATE_NAMES

        check_keys(multi.get("trials_by_data", {}), ("synthetic", *MULTIVARIATE_NAMES),
                   f"spec {spec.name!r}: [multi] trials_by_data", "a data set of the harness")
        for proto in multi.get("protocols", ["bounded"]):
            if proto not in PROTOCOLS:
                raise InvalidInputError(f"spec {spec.name!r}: unknown protocol {proto!r}; choose "
                                        f"from {list(PROTOCOLS)}")
        for m in methods:
            require(spec, m, "name", "each [[methods]] table")
            if require(spec, m, "estimator", f"method {m['name']!r}") not in ESTIMATORS:
                raise InvalidInputError(
                    f"spec {spec.name!r}: unknown estimator {m['estimator']!r}; choose from "
                    f"{list(ESTIMATORS)}")

    def cells(self, spec: Any) -> list[dict[str, Any]]:
        multi = spec["multi"]
        cells: list[dict[str, Any]] = []
        protocols = list(multi.get("protocols", ["bounded"]))
        for proto in protocols:
            for name in multi["datasets"]:
                for eps in multi["epsilons"]:
                    c = {"cell": len(cells), "panel": name, "data": name,
                         "epsilon": float(eps), "cost": 1.0}
                    if proto != "bounded":  # bounded-only specs keep their cell keys
                        c["protocol"] = proto
                    cells.append(c)
        return cells

    def run_cell(self, spec: Any, cell: dict[str, Any], seq: np.random.SeedSequence
                 ) -> list[dict[str, Any]]:
        multi = spec["multi"]
        X, y, bx, by, _ = _dataset(spec, cell["data"])
        tr, te = _split(y.size, float(multi.get("test_fraction", 0.2)),
                        int(multi.get("split_seed", 42)))
        Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
        n, d = Xtr.shape
        proto = cell.get("protocol", "bounded")
        tang = proto == "tang"
        if tang:
            Xtr, Xte = tang_rows(Xtr), tang_rows(Xte)
            _, ols_te = _predict_ols(Xtr, ytr, Xte, intercept=False)
        else:
            _, ols_te = _predict_ols(Xtr, ytr, Xte)
        ols_mse = mse(yte, ols_te)
        trials = int(multi.get("trials_by_data", {}).get(cell["data"], multi["trials"]))
        rows = []
        methods = spec["methods"]
        for j, (m, mseq) in enumerate(zip(methods, seq.spawn(len(methods)))):
            private = m["estimator"] not in NOT_PRIVATE
            if tang and m["estimator"] in (DATA_BOUNDS, AUTHORS_ADASSP):
                continue
            for t, tseq in enumerate(mseq.spawn(trials if m["estimator"] != "ols" else 1)):
                t0 = time.perf_counter()
                failed = False
                pr_tr: np.ndarray | None
                pr_te: np.ndarray | None
                if m["estimator"] == "ols":
                    pr_tr, pr_te = _predict_ols(Xtr, ytr, Xte, intercept=not tang)
                elif tang:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        coef = _fit_tang(m, eps=cell["epsilon"], delta=float(multi["delta"]),
                                         X=Xtr, y=ytr, seed=tseq)
                    failed = coef is None
                    pr_tr, pr_te = (None, None) if coef is None else (Xtr @ coef, Xte @ coef)
                elif m["estimator"] == AUTHORS_ADASSP:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        coef = _fit_authors_adassp(m, eps=cell["epsilon"],
                                                   delta=float(multi["delta"]), X=Xtr, y=ytr,
                                                   seed=tseq)
                    pr_tr, pr_te = coef[0] + Xtr @ coef[1:], coef[0] + Xte @ coef[1:]
                else:
                    est = _estimator(m, eps=cell["epsilon"], delta=float(multi["delta"]), bx=bx,
                                     by=by, n=n, d=d, X=Xtr, y=ytr, seed=tseq)
                    try:
                        if est is None:
                            raise MechanismFailure("not applicable: too few rows for 8 models")
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            est.fit(Xtr, ytr)
                        pr_tr, pr_te = est.predict(Xtr), est.predict(Xte)
                    except MechanismFailure:
                        failed = True
                        pr_tr = pr_te = None
                secs = time.perf_counter() - t0
                rows.append({"dataset": j, "data": cell["data"], "protocol": proto,
                             "n_train": int(n),
                             "n_test": int(len(yte)), "d": int(d), "epsilon": cell["epsilon"],
                             "delta": float(m.get("delta", multi["delta"])), "method": m["name"],
                             "estimator": m["estimator"], "private": private, "trial": t,
                             "failed": failed,
                             "test_mse": math.inf if failed else mse(yte, pr_te),
                             "test_r2": -math.inf if failed else r2(yte, pr_te),
                             "train_r2": -math.inf if failed else r2(ytr, pr_tr),
                             "ols_test_mse": ols_mse, "seconds": secs})
        return rows

    def summarise(self, spec: Any, rows: pd.DataFrame) -> pd.DataFrame:
        if not len(rows):
            return pd.DataFrame()
        out = []
        order = {m["name"]: i for i, m in enumerate(spec["methods"])}
        rows = rows.copy()
        if "protocol" not in rows:
            rows["protocol"] = "bounded"
        rows["protocol"] = rows["protocol"].fillna("bounded")
        for (proto, data, eps, method), grp in rows.groupby(["protocol", "data", "epsilon",
                                                             "method"], sort=False):
            te = grp["test_mse"].to_numpy(float)
            r2v = grp["test_r2"].to_numpy(float)
            tr2 = grp["train_r2"].to_numpy(float)
            with np.errstate(invalid="ignore"):
                out.append({"protocol": proto, "data": data, "epsilon": float(eps),
                            "method": method,
                            "estimator": grp["estimator"].iloc[0],
                            "private": bool(grp["private"].iloc[0]),
                            "n_train": int(grp["n_train"].iloc[0]), "d": int(grp["d"].iloc[0]),
                            "trials": int(len(grp)),
                            "failure_rate": float(grp["failed"].astype(bool).mean()),
                            "median_test_mse": float(np.quantile(te, 0.5, method="inverted_cdf")),
                            "relative_mse": float(np.quantile(te, 0.5, method="inverted_cdf")
                                                  / grp["ols_test_mse"].iloc[0]),
                            "median_test_r2": float(np.quantile(r2v, 0.5, method="inverted_cdf")),
                            "q25_test_r2": float(np.quantile(r2v, 0.25, method="inverted_cdf")),
                            "q75_test_r2": float(np.quantile(r2v, 0.75, method="inverted_cdf")),
                            "median_train_r2": float(np.quantile(tr2, 0.5, method="inverted_cdf")),
                            "mid_median_test_mse": float(np.median(te)),
                            "mid_relative_mse": float(np.median(te)
                                                      / grp["ols_test_mse"].iloc[0]),
                            "mid_median_test_r2": float(np.median(r2v)),
                            "seconds_per_fit": float(grp["seconds"].mean()),
                            "_order": order.get(method, 99)})
        frame = pd.DataFrame(out).sort_values(["protocol", "data", "epsilon", "_order"],
                                              kind="stable")
        return frame.drop(columns="_order").reset_index(drop=True)

    def figures(self, spec: Any, rows: pd.DataFrame, summary: pd.DataFrame, out: Path
                ) -> list[Path]:
        from dpreg.bench.plots import bar_groups, scatter_pairs

        if not len(summary):
            return []
        plot = spec.get("plot", {})
        paths: list[Path] = []
        summary = summary.copy()
        if "protocol" not in summary:
            summary["protocol"] = "bounded"
        protos = list(dict.fromkeys(summary["protocol"]))
        several = len(protos) > 1
        ref = plot.get("reference")
        for proto in protos:
            part = summary[summary["protocol"] == proto]
            tag = f"_{proto}" if several else ""
            label = f" ({proto} protocol)" if several else ""
            # the ordinary median of the fits (older summaries: the lower median)
            relcol = "mid_relative_mse" if "mid_relative_mse" in part else "relative_mse"
            if ref:  # Tang-style scatter: comparator vs reference, relative test MSE
                recs = []
                for (data, eps), grp in part.groupby(["data", "epsilon"], sort=False):
                    g = grp.set_index("method")
                    if ref not in g.index:
                        continue
                    for other in g.index:
                        if other == ref or not bool(g.loc[other, "private"]):
                            continue
                        recs.append({"comparison": f"{ref} vs {other}, ε={eps:g}", "data": data,
                                     "epsilon": eps, "other": other,
                                     "other_relative_mse": g.loc[other, relcol],
                                     "ref_relative_mse": g.loc[ref, relcol]})
                if recs:
                    frame = pd.DataFrame(recs)
                    paths += scatter_pairs(frame, x="other_relative_mse", y="ref_relative_mse",
                                           facet="comparison", out=out,
                                           stem=f"figure_scatter{tag}",
                                           title=f"{spec.figure}{label}: test MSE / OLS test MSE "
                                                 f"(below the diagonal: {ref} better)",
                                           xlabel="comparator", ylabel=ref)
            for eps in sorted(part["epsilon"].unique()):
                sub = part[part["epsilon"] == eps].copy()
                r2col = "mid_median_test_r2" if "mid_median_test_r2" in sub else "median_test_r2"
                sub["median_test_r2_clipped"] = sub[r2col].clip(lower=-1.0)
                paths += bar_groups(sub, cat="data", group="method",
                                    value="median_test_r2_clipped", out=out,
                                    stem=f"figure_r2{tag}_eps{eps:g}".replace(".", "p"),
                                    title=f"{spec.figure}{label}: median test R² (ε = {eps:g}; "
                                          "clipped at −1)",
                                    ylabel="median test R²", ylim=(-1.05, 1.05))
        return paths
