"""Plans against releases on real designs (issue 30, item 2: "plans that tell the truth").

For each real data set (:mod:`studies.accuracy.data` and the real sets shipped in
:mod:`dpreg.data`) the data's own moments (mean and population sd of every column, all
correlations) are given to :func:`dpreg.plan` as the "declared" public design -- what a user
with a census table or a public reference sample of the same population would declare.  The
plan's per-coefficient noise sd, bias and total slope RMSE are compared with R actual releases
on the real rows (the same data each time, so only the privacy noise varies): the empirical sd
of every released coefficient, the mean minus the OLS coefficients of the data, and
√mean‖β̂_slopes − β_OLS‖².  The plan of the old default (``design="uniform"``) is shown
beside it.  Nothing here is private: the "declared" moments are a stand-in for public ones.

    python -m studies.accuracy.plan_check --sets wage1,k401k,gpa2,fair,diabetes,nyse \\
        --out docs/accuracy-data/plan_check.json
    python -m studies.accuracy.plan_check --report docs/accuracy-data/plan_check.json
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

EPSILONS = (0.5, 1.0, 4.0)
DELTA = 1e-6
MULTI = ("adassp", "adassp:lambda_rule=eigen-floor", "covariance-ols", "boosted-adassp",
         "dp-gd", "tukey-em")
ONE = ("noisy-stats", "dp-intercept", "theil-sen-exp")
#: releases per cell (fast methods / slow ones) and simulated releases of a simulated plan
#: (the sufficient-statistics releases are heavy-tailed where the noise rivals the design's
#: small eigenvalues -- kurtosis 10-40 -- so their sd needs ~1000 releases to be within ~7%)
REPS = {"fast": 1000, "slow": 100}
#: covariance-ols releases run with the DP-aware interval (to count its refusals); the others
#: with se="plugin" (the same point estimate and noise, without the bootstrap's cost)
REFUSAL_REPS = 100
SLOW = ("dp-gd", "boosted-adassp", "tukey-em", "theil-sen-exp")
N_SIM = 100
#: the one-x regression of every set (the regressor the one-x methods use)
ONE_X = {"wage1": "educ", "k401k": "mrate", "gpa2": "hsperc", "fair": "rate_marriage",
         "bikeshare": "temp", "nyse": "log_volatility", "twoyear": "univ", "diabetes": "bmi"}


def real_set(name: str) -> tuple[np.ndarray, np.ndarray, list[str], str,
                                 list[tuple[float, float]], tuple[float, float]]:
    """(X, y, x names, y name, x bounds, y bound) of a real set: the study's held-out sets
    (``studies.accuracy.data``, needs the packages of its environment) or dpreg's own
    (``dpreg.data``: diabetes, fair, nyse, bikeshare)."""
    import pandas as pd

    from dpreg.data import load_dataset

    if name in ("diabetes", "fair", "nyse", "bikeshare"):
        ds = load_dataset(name)
        xs, yn = list(ds.x), str(ds.y)
        F = ds.frame[[*xs, yn]].apply(pd.to_numeric, errors="coerce").dropna()
        bnd = {c: (float(ds.bounds[c][0]), float(ds.bounds[c][1])) for c in [*xs, yn]}
        return (F[xs].to_numpy(float), F[yn].to_numpy(float), xs, yn,
                [bnd[c] for c in xs], bnd[yn])
    from studies.accuracy import data as D

    s = D.SETS[name]
    X, y, bx, by = D.load(name)
    return X, y, list(s.x), s.y, bx, by


def moments(X: np.ndarray, y: np.ndarray, xs: list[str], yn: str) -> dict[str, Any]:
    """The data's own moments as a declared design (population sd, all correlations)."""
    W = np.column_stack([X, y])
    cols = [*xs, yn]
    R = np.corrcoef(W, rowvar=False)
    return {"mean": dict(zip(cols, map(float, W.mean(axis=0)))),
            "sd": dict(zip(cols, map(float, W.std(axis=0)))),
            "corr": {a: {b: float(R[i, j]) for j, b in enumerate(cols) if j > i}
                     for i, a in enumerate(cols)},
            "source": "the data's own moments (a stand-in for public ones)"}


def _method(spec: str) -> tuple[str, dict[str, Any]]:
    name, _, rest = spec.partition(":")
    opts: dict[str, Any] = {}
    for kv in filter(None, rest.split("+")):
        k, v = kv.split("=")
        opts[k] = v
    return name, opts


def releases(method: str, opts: dict[str, Any], X: np.ndarray, y: np.ndarray, xs: list[str],
             yn: str, bx: Any, by: Any, eps: float, reps: int) -> dict[str, Any]:
    """``reps`` releases on the real rows (seeds 5000 + r): coefficient draws, ⊥ count and,
    for covariance-ols, how many intervals were refused."""
    from dpreg.api import fit_arrays

    extra: dict[str, Any] = ({"n_boot": 50} if method in ("adassp", "covariance-ols",
                                                          "noisy-stats") else {})
    draws, failed, refused, checked = [], 0, 0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(reps):
            more: dict[str, Any] = dict(extra)
            if method == "covariance-ols" and r >= REFUSAL_REPS:
                more = {"se": "plugin"}
            res = fit_arrays(X, y, method=method, epsilon=eps,
                             delta=None if method in ("noisy-stats", "dp-intercept",
                                                      "theil-sen-exp") else DELTA,
                             x_bounds=bx, y_bounds=by, x_names=xs, y_name=yn,
                             random_state=5000 + r, **more, **opts)
            if res.failed:
                failed += 1
                continue
            draws.append(res.params.to_numpy(float))
            if method == "covariance-ols" and r < REFUSAL_REPS:
                checked += 1
                refused += "refused" in str(getattr(res, "uncertainty", ""))
    return {"draws": np.array(draws), "failed": failed, "refused": refused,
            "checked": checked}


def cell(name: str, spec: str, eps: float, one_x: bool) -> dict[str, Any]:
    import dpreg

    X, y, xs, yn, bx, by = real_set(name)
    if one_x:
        j = xs.index(ONE_X[name])
        X, xs, bx = X[:, [j]], [xs[j]], [bx[j]]
    method, opts = _method(spec)
    n = X.shape[0]
    formula = f"{yn} ~ {' + '.join(xs)}"
    bounds = {**dict(zip(xs, bx)), yn: by}
    dlt = None if method in ("noisy-stats", "dp-intercept", "theil-sen-exp") else DELTA
    t0 = time.process_time()
    p = dpreg.plan(method, eps, dlt, n=n, formula=formula, bounds=bounds,
                   design=moments(X, y, xs, yn), n_sim=N_SIM, **opts)
    t_plan = time.process_time() - t0
    u = dpreg.plan(method, eps, dlt, n=n, formula=formula, bounds=bounds, design="uniform",
                   n_sim=max(10, N_SIM // 2), **opts)
    reps = REPS["slow" if method in SLOW else "fast"]
    t0 = time.process_time()
    rel = releases(method, opts, X, y, xs, yn, bx, by, eps, reps)
    t_rel = time.process_time() - t0
    Z = np.column_stack([np.ones(n), X])
    ols = np.linalg.lstsq(Z, y, rcond=None)[0]
    names = list(p.coef_sd)
    D = rel["draws"]
    out: dict[str, Any] = {
        "set": name, "n": n, "d": len(xs), "method": spec, "epsilon": eps, "reps": reps,
        "names": names, "plan_sd": [p.coef_sd[k] for k in names],
        "uniform_sd": [u.coef_sd[k] for k in names],
        "plan_bias": [p.coef_bias[k] for k in names], "plan_total_rmse": p.total_rmse,
        "plan_robust_sd": [p.coef_robust_sd.get(k) for k in names],
        "plan_fail": p.failure_probability, "plan_refusal": p.interval_refusal_probability,
        "how": p.how, "assumptions": list(p.assumptions),
        "emp_fail": rel["failed"] / reps, "emp_refusal": (rel["refused"] / rel["checked"]
                                                          if rel["checked"] else None),
        "cpu_plan": t_plan, "cpu_releases": t_rel, "ols": ols.tolist()}
    if D.shape[0] >= 2:
        out["emp_sd"] = D.std(axis=0, ddof=1).tolist()
        out["emp_bias"] = (D.mean(axis=0) - ols).tolist()
        out["emp_total_rmse"] = float(np.sqrt(np.mean(np.sum((D[:, 1:] - ols[1:]) ** 2,
                                                              axis=1))))
        q75, q25 = np.percentile(D, [75, 25], axis=0)
        out["emp_robust_sd"] = ((q75 - q25) / 1.349).tolist()
        C = D - D.mean(axis=0)
        out["emp_kurtosis"] = (np.mean(C ** 4, axis=0) / np.maximum(np.mean(C ** 2, axis=0) ** 2,
                                                                    1e-300)).tolist()
    return out


def run(sets: list[str], out: Path, eps_list: tuple[float, ...], methods: str) -> None:
    rows: list[dict[str, Any]] = []
    if out.exists():
        rows = json.loads(out.read_text())
    done = {(r["set"], r["method"], r["epsilon"]) for r in rows}
    for name in sets:
        plan = [(m, False) for m in MULTI if methods != "one"]
        if name in ONE_X and methods != "multi":
            plan += [(m, True) for m in ONE]
        for spec, one in plan:
            if methods not in ("all", "multi", "one") and spec not in methods.split(","):
                continue
            for eps in eps_list:
                if (name, spec, eps) in done:
                    continue
                t = time.time()
                rows.append(cell(name, spec, eps, one))
                print(f"{name} {spec} eps={eps}: {time.time() - t:.1f}s", flush=True)
                out.write_text(json.dumps(rows, indent=1, allow_nan=True))


def _ratio_text(emp: list[float], plan: list[float]) -> tuple[str, int, int]:
    r = [1.0 if p == 0 and e == 0 else e / p if p > 0 and math.isfinite(e) else math.inf
         for e, p in zip(emp, plan)]
    ok = sum(0.75 <= v <= 1.25 for v in r)
    fin = [v for v in r if math.isfinite(v)]
    if not fin:
        return "—", ok, len(r)
    lo, hi = min(fin), max(fin)
    txt = f"{lo:.2f}" if abs(hi - lo) < 0.005 else f"{lo:.2f}–{hi:.2f}"
    return txt + ("" if len(fin) == len(r) else " (inf)"), ok, len(r)


def report(path: Path) -> str:
    """The markdown table of docs/accuracy.md §9 from the JSON."""
    rows = json.loads(path.read_text())
    lines = ["| data (n×d) | method | ε | emp/plan sd | within ±25% | emp/plan robust sd | "
             "emp/uniform-plan sd | slope RMSE plan / emp | ⊥ plan / emp | "
             "refusal plan / emp |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    tot_ok = tot = 0
    per: dict[str, list[int]] = {}
    for r in rows:
        rob = "—"
        if "emp_sd" not in r:
            sd_txt, ok, k = "— (all ⊥)", 0, 0
            u_txt = "—"
            rmse = f"{r['plan_total_rmse']:.3g} / —"
        else:
            sd_txt, ok, k = _ratio_text(r["emp_sd"], r["plan_sd"])
            u_txt = _ratio_text(r["emp_sd"], r["uniform_sd"])[0]
            if r.get("emp_robust_sd") and all(v is not None for v in r.get("plan_robust_sd")
                                              or [None]):
                rob = _ratio_text(r["emp_robust_sd"], r["plan_robust_sd"])[0]
            pr = r["plan_total_rmse"]
            rmse = (f"{pr:.3g} / {r['emp_total_rmse']:.3g}"
                    if pr is not None and math.isfinite(pr) else "—")
        tot_ok += ok
        tot += k
        acc = per.setdefault(r["method"], [0, 0])
        acc[0] += ok
        acc[1] += k
        ref = ("" if r["plan_refusal"] is None or r["emp_refusal"] is None else
               f"{r['plan_refusal'] if r['plan_refusal'] is not None else math.nan:.2f} / "
               f"{r['emp_refusal'] if r['emp_refusal'] is not None else math.nan:.2f}")
        lines.append(f"| {r['set']} ({r['n']}×{r['d']}) | {r['method']} | {r['epsilon']:g} | "
                     f"{sd_txt} | {ok}/{k} | {rob} | {u_txt} | {rmse} | "
                     f"{r['plan_fail']:.2f} / {r['emp_fail']:.2f} | {ref} |")
    lines.append("")
    lines.append(f"Planned sds within ±25% of the empirical sd: {tot_ok} of {tot}. Per method: "
                 + "; ".join(f"{m} {a}/{b}" for m, (a, b) in per.items()) + ".")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sets", default="wage1,k401k,gpa2,fair,diabetes,nyse")
    ap.add_argument("--out", default="docs/accuracy-data/plan_check.json")
    ap.add_argument("--eps", default=",".join(map(str, EPSILONS)))
    ap.add_argument("--methods", default="all",
                    help="all, multi, one, or a comma list of method specs")
    ap.add_argument("--report", default=None, help="print the table of this JSON and stop")
    ap.add_argument("--first-order", action="store_true",
                    help="print the Monte Carlo / first-order sd ratios of AdaSSP and stop")
    a = ap.parse_args()
    if a.first_order:
        print(first_order(a.sets.split(","), tuple(float(e) for e in a.eps.split(","))))
        return
    if a.report:
        print(report(Path(a.report)))
        return
    run(a.sets.split(","), Path(a.out), tuple(float(e) for e in a.eps.split(",")), a.methods)



def first_order(sets: list[str], eps_list: tuple[float, ...]) -> str:
    """Why AdaSSP is planned by a Monte Carlo of its noise: the first-order (delta-method)
    propagation of the same noise through (XᵀX + λI)⁻¹ -- the design's exact statistics, λ at
    the expected noisy λ_min -- against the Monte Carlo plan (which matches the releases,
    §9): the ratio MC sd / first-order sd per slope (min–max)."""
    import math as _m

    from dpreg.codebook import check_moments
    from dpreg.mechanisms.gaussian import gaussian_sigma
    from dpreg.mechanisms.sensitivity import (
        gram_sensitivity,
        lambda_min_sensitivity,
        xty_sensitivity,
    )
    from dpreg.methods._planning import (
        PlanDesign,
        adassp_error,
        first_order_cov,
        scaling_transform,
    )
    from dpreg.multivariate._common import PublicScaling
    from dpreg.multivariate.ssp import adassp_budget
    from dpreg.privacy import Neighbouring

    lines = ["| data | ε | MC sd / first-order sd (slopes) |", "|---|---|---|"]
    for name in sets:
        X, y, xs, yn, bx, by = real_set(name)
        bounds = {**dict(zip(xs, bx)), yn: by}
        des = PlanDesign.from_moments(len(y), xs, yn, bx, by, True,
                                      check_moments(moments(X, y, xs, yn), bounds))
        sc = PublicScaling.from_bounds(bx, by, fit_intercept=True)
        p = sc.n_columns
        Z = sc.design(X)
        A = Z.T @ Z
        theta = np.linalg.lstsq(Z, sc.label(y), rcond=None)[0]
        for eps in eps_list:
            plan_b = adassp_budget(eps, DELTA, inference=True)
            part = dict(zip(plan_b.releases, plan_b.parts))
            rel = Neighbouring.ADD_REMOVE
            bnd = sc.row_norm_bound
            sd_xx = gaussian_sigma(gram_sensitivity(bnd, rel), part["XtX"])
            sd_xy = gaussian_sigma(xty_sensitivity(bnd, 1.0, rel), part["Xty"])
            sd_lam = gaussian_sigma(lambda_min_sensitivity(bnd, rel), part["lambda_min"])
            lam_lower = max(0.0, float(np.linalg.eigvalsh(A)[0])
                            - sd_lam * _m.sqrt(_m.log(6.0 / DELTA)))
            lam = max(0.0, sd_xx * _m.sqrt(p * _m.log(2.0 * p * p / 0.05)) - lam_lower)
            T = scaling_transform(sc)
            fo = np.sqrt(np.diag(T @ first_order_cov(A + lam * np.eye(p), theta, sd_xx, sd_xy)
                                 @ T.T))
            mc = np.sqrt(np.diag(adassp_error(des, epsilon=eps, delta=DELTA, options={},
                                              lambda_rule="wang", floor_scale=3.0,
                                              seed=0).cov))
            r = mc[1:] / fo[1:]
            lines.append(f"| {name} | {eps:g} | {r.min():.2f}–{r.max():.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
