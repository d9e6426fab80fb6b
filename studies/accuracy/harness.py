"""The benchmark of issue 30 (item 1): every multi-x method of dpreg, OLS and diffprivlib on
real data sets of ordinary size (:mod:`studies.accuracy.data`), at ε ∈ {0.5, 1, 4}.

Protocol: repetition r of a data set draws one 80/20 train/test split (seed 1000 + r) shared by
all methods and ε; every DP fit of repetition r at the k-th ε gets the seed 10,000·r + 100·k,
the same for every method (common random numbers). Where ``auto`` runs the algorithm of a column
with that column's options it therefore reproduces that column's fits exactly, and a comparison
of ``auto`` with the best method measures its choice, not the Monte Carlo noise of two
independent sets of 12 draws (before, each method had its own seed, and ``auto`` running DP-GD
could differ from the DP-GD column by 1.4× in a 12-repetition median). δ = 1e-6 for every (ε, δ)
method; every estimator runs with its defaults (what a user gets), bounds from the data set's
public codebook bounds. Per fit: relative coefficient error of the slopes against OLS on the
SAME training rows, ‖β̂ − β_OLS‖/‖β_OLS‖, on the original scale and on the bounds-standardised
scale (β_j·w_j/w_y with w the half-widths of the public bounds); test R²; ⊥ (failure) and the
CPU seconds of the fit. CovarianceOLS also records whether its DP-aware interval was refused and
the median ratio of its interval widths to OLS's.

References (not private, for the tables only): OLS's own sampling error ‖se(β̂_OLS)‖/‖β_OLS‖,
and the SSP noise floor of :mod:`studies.accuracy.ssp_lab` (the best λ chosen by an oracle).
"""

from __future__ import annotations

import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from studies.accuracy import data as D

EPSILONS = (0.5, 1.0, 4.0)
DELTA = 1e-6
METHODS = ("ols", "adassp", "boosted-adassp", "tukey-em", "dp-gd", "covariance-ols", "auto",
           "diffprivlib")
OUT = Path(__file__).resolve().parents[2] / "docs" / "accuracy-data"


def split(n: int, rep: int) -> tuple[np.ndarray, np.ndarray]:
    """The 80/20 split of repetition ``rep`` (a public permutation: no data involved)."""
    perm = np.random.default_rng(1000 + rep).permutation(n)
    k = int(round(0.8 * n))
    return perm[:k], perm[k:]


def ols(X: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(intercept, slopes, standard errors of the slopes) of OLS with an intercept."""
    Z = np.column_stack([np.ones(len(y)), X])
    beta, *_ = np.linalg.lstsq(Z, y, rcond=None)
    resid = y - Z @ beta
    s2 = float(resid @ resid) / max(len(y) - Z.shape[1], 1)
    cov = s2 * np.linalg.pinv(Z.T @ Z)
    return float(beta[0]), beta[1:], np.sqrt(np.diag(cov))[1:]


def r2(y: np.ndarray, pred: np.ndarray) -> float:
    return float(1.0 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2))


def _estimator(method: str, eps: float, bx: Any, by: Any, seed: int) -> Any:
    from dpreg.auto import AutoDPRegression
    from dpreg.linear_model import (
        AdaSSP,
        BoostedAdaSSP,
        CovarianceOLS,
        DPGradientDescent,
        TukeyEM,
    )

    common: dict[str, Any] = {"epsilon": eps, "delta": DELTA, "bounds_X": bx, "bounds_y": by,
                              "random_state": seed}
    if ":" in method:  # a study variant: "method:key=value+key=value" (options of the estimator)
        method, spec = method.split(":", 1)
        for kv in spec.split("+"):
            k, v = kv.split("=")
            common[k] = ((v == "true") if v in ("true", "false") else
                         float(v) if k in ("floor_scale", "learning_rate", "clip_norm") else
                         int(v) if k in ("n_iter", "n_rounds") else v)
    if method == "adassp":
        return AdaSSP(**common)
    if method == "boosted-adassp":
        return BoostedAdaSSP(**common)
    if method == "tukey-em":
        return TukeyEM(**common)
    if method == "dp-gd":
        return DPGradientDescent(**common)
    if method == "covariance-ols":
        return CovarianceOLS(**common)
    if method == "auto":
        return AutoDPRegression(**common)
    if method == "ihm":  # iterative Hessian mixing (studied, not shipped: studies/ihm)
        from studies.ihm import IterativeHessianMixing

        return IterativeHessianMixing(**common)
    if method == "diffprivlib":
        from diffprivlib.models import LinearRegression

        lo = np.array([b[0] for b in bx])
        hi = np.array([b[1] for b in bx])
        return LinearRegression(epsilon=eps, bounds_X=(lo, hi), bounds_y=by,
                                random_state=seed)
    raise ValueError(method)


def fit_one(method: str, Xtr: np.ndarray, ytr: np.ndarray, bx: Any, by: Any, eps: float,
            seed: int) -> dict[str, Any]:
    """Fit one method; (intercept, slopes), ⊥, CPU seconds and method-specific extras."""
    from dpreg.exceptions import MechanismFailure

    t0 = time.process_time()
    out: dict[str, Any] = {"failed": False}
    if method == "ols":
        b0, b, _ = ols(Xtr, ytr)
    else:
        est = _estimator(method, eps, bx, by, seed)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(Xtr, ytr)
        except MechanismFailure:
            out.update(failed=True)
            out["cpu"] = time.process_time() - t0
            return out
        b0, b = float(np.ravel(est.intercept_)[0]), np.ravel(est.coef_).astype(float)
        res = getattr(est, "results_", None)
        if method == "auto":
            out["chosen"] = getattr(est, "method_", None)
            if res is not None and res.failed:
                out.update(failed=True)
        if method == "covariance-ols" and res is not None:
            refused = bool(res.extra.get("dp_ci_refused", False))
            out["ci_refused"] = refused
            if not refused:
                ci = res.conf_int().to_numpy()[1:]
                out["ci_width"] = (ci[:, 1] - ci[:, 0]).tolist()
    out["cpu"] = time.process_time() - t0
    out["intercept"] = b0
    out["coef"] = np.asarray(b).tolist()
    return out


def run_set(name: str, methods: tuple[str, ...] = METHODS, reps: int = 30,
            epsilons: tuple[float, ...] = EPSILONS) -> list[dict[str, Any]]:
    """Every (method, ε, repetition) fit of one data set, as flat rows."""
    X, y, bx, by = D.load(name)
    n, d = X.shape
    wx = np.array([(b[1] - b[0]) / 2.0 for b in bx])
    wy = (by[1] - by[0]) / 2.0
    rows: list[dict[str, Any]] = []
    for rep in range(reps):
        tr, te = split(n, rep)
        Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
        b0_ols, b_ols, se_ols = ols(Xtr, ytr)
        base = {"dataset": name, "n_train": len(tr), "d": d, "rep": rep}
        ols_ref = {"ols_norm": float(np.linalg.norm(b_ols)),
                   "ols_se_rel": float(np.linalg.norm(se_ols) / np.linalg.norm(b_ols)),
                   "ols_se_rel_std": float(np.linalg.norm(se_ols * wx / wy)
                                           / np.linalg.norm(b_ols * wx / wy))}
        for method in methods:
            for k, eps in enumerate(epsilons if method != "ols" else (math.inf,)):
                seed = 10_000 * rep + 100 * k  # common random numbers (module doc)
                f = fit_one(method, Xtr, ytr, bx, by, eps, seed)
                row = {**base, **ols_ref, "method": method, "epsilon": eps,
                       "failed": f["failed"], "cpu": f["cpu"]}
                for key in ("chosen", "ci_refused"):
                    if key in f:
                        row[key] = f[key]
                if not f["failed"]:
                    b = np.asarray(f["coef"])
                    row["rel_err"] = float(np.linalg.norm(b - b_ols) / np.linalg.norm(b_ols))
                    row["rel_err_std"] = float(np.linalg.norm((b - b_ols) * wx / wy)
                                               / np.linalg.norm(b_ols * wx / wy))
                    row["test_r2"] = r2(yte, f["intercept"] + Xte @ b)
                    if "ci_width" in f:
                        row["ci_ratio"] = float(np.median(np.asarray(f["ci_width"])
                                                          / (2 * 1.959964 * se_ols)))
                rows.append(row)
    return rows


def run_set_at_share(name: str, methods: tuple[str, ...], reps: int, share: float, path: Path,
                     rename: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """:func:`run_set` at (1 − ``share``)·ε for every ε of :data:`EPSILONS` -- what a method
    gets after a selection step spent ``share`` of ε -- with each row labelled by the full ε it
    was taken from (``epsilon_used`` keeps the ε it ran at) and methods renamed by ``rename``;
    cached as gzipped JSON at ``path`` (read back when it exists)."""
    import gzip

    if path.exists():
        return json.loads(gzip.decompress(path.read_bytes()))
    eps = tuple((1.0 - share) * e for e in EPSILONS)
    rows = run_set(name, methods, reps, eps)
    for r in rows:
        r["epsilon"], r["epsilon_used"] = EPSILONS[eps.index(r["epsilon"])], r["epsilon"]
        r["method"] = (rename or {}).get(r["method"], r["method"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(json.dumps(rows).encode()))
    return rows


def main(argv: list[str] | None = None) -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default="all", help="comma-separated names, or a role "
                   "(benchmark, dev, dev2, tuning) or 'all'")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--out", default=str(OUT / "runs"))
    a = p.parse_args(argv)
    sets = (D.names() if a.sets == "all" else D.names(a.sets) if a.sets in
            ("benchmark", "dev", "dev2", "tuning") else a.sets.split(","))
    methods = tuple(a.methods.split(","))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in sets:
        t0 = time.process_time()
        rows = run_set(name, methods, a.reps)
        tag = "" if methods == METHODS else "-" + "_".join(
            m.replace(":", "-").replace("=", "").replace("+", "-") for m in methods)
        (out / f"{name}{tag}.json").write_text(json.dumps(rows))
        print(f"{name}: {len(rows)} fits, {time.process_time() - t0:.1f} CPU s", flush=True)


if __name__ == "__main__":  # pragma: no cover
    main()
