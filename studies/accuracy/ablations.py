"""Ablations of issue 30 (item 1), on the DEV and TUNING data sets only (the benchmark sets
stay held out): why each multivariate method loses at n = 300-10,000.

``python -m studies.accuracy.ablations [--reps R]`` writes docs/accuracy-data/ablations.json;
:mod:`studies.accuracy.report` turns it into the tables of docs/accuracy.md.

* ``ssp``: AdaSSP's error by λ rule, budget split, bounds and centring (:mod:`ssp_lab`).
* ``floor_scale``: the eigen floor's constant f (dev and tuning sets only).
* ``tukey``: TukeyEM's PTR -- the model count ``n_models="auto"`` picks, the distance the
  test needs, and the smallest n at which the public pass model predicts a pass with
  probability 1/2 (and 0.9) at that m, per d and ε.
* ``dpgd``: DP-GD's error over its step count, learning rate and clipping norm.
* ``cov``: why CovarianceOLS refuses its interval (κ against the rule's limit).
* ``auto``: what ``method="auto"`` picks and how BoostedAdaSSP fares under auto's
  replace-one statement against its own add/remove default.
"""

from __future__ import annotations

import json
import time
import warnings
from typing import Any

import numpy as np

from studies.accuracy import data as D
from studies.accuracy import ssp_lab as L
from studies.accuracy.harness import OUT, ols, r2, split

EPSILONS = (0.5, 1.0, 4.0)
SETS = ("wage1", "bwght", "diabetes", "fair")


def med(v: Any) -> float:
    return float(np.median(np.asarray(v)))


def ssp(reps: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in SETS:
        for eps in EPSILONS:
            cell: dict[str, Any] = {}
            # λ rules at Wang's thirds and with λ_min's budget given back (1:1, 2:1, 1:2)
            for tag, w in (("thirds", (1.0, 1.0, 1.0)), ("0:1:1", (0.0, 1.0, 1.0)),
                           ("0:2:1", (0.0, 2.0, 1.0)), ("0:1:2", (0.0, 1.0, 2.0)),
                           ("inference", (0.3, 0.3, 0.3, 0.1)),
                           ("inference-floor", (0.0, 0.45, 0.45, 0.1))):
                errs = L.errors(name, eps, weights=w, reps=reps)
                cell[tag] = {k: med(v) for k, v in errs.items()}
            for tag, kw in (("widen2", {"widen": 2.0}), ("widen4", {"widen": 4.0}),
                            ("tight", {"tight": True}), ("uncentred", {"centre": False})):
                errs = L.errors(name, eps, reps=reps, **kw)
                cell[tag] = {k: med(v) for k, v in errs.items() if k in ("wang", "ridge0")}
                errs = L.errors(name, eps, weights=(0.0, 1.0, 1.0), reps=reps, **kw)
                cell[tag].update({k: med(v) for k, v in errs.items() if k.startswith("floor")})
            out[f"{name}|{eps:g}"] = cell
            print("ssp", name, eps, flush=True)
    return out


def tukey() -> dict[str, Any]:
    from dpreg.mechanisms.ptr import ptr_threshold
    from dpreg.multivariate.tukey import (
        target_depth,
        tukey_auto_n_models,
        tukey_pass_probability,
    )

    rows = []
    for d in (3, 4, 5, 7, 11):  # design columns (intercept included)
        for eps in EPSILONS:
            def prob(n: int, d: int = d, eps: float = eps) -> tuple[float, int]:
                m = tukey_auto_n_models(n, d, epsilon=eps, delta=1e-6)
                if m < 8:
                    return 0.0, m
                return tukey_pass_probability(m, d, epsilon=eps, delta=1e-6), m

            need: dict[str, Any] = {}
            for target in (0.5, 0.9):
                n = 64
                while prob(n)[0] < target and n < 2_000_000:
                    n = int(n * 1.1) + 1
                lo, hi = int(n / 1.1) - 1, n
                while hi - lo > max(1, lo // 200):
                    mid = (lo + hi) // 2
                    if prob(mid)[0] >= target:
                        hi = mid
                    else:
                        lo = mid
                need[f"n_{target:g}"] = hi
                need[f"m_{target:g}"] = prob(hi)[1]
            at = {}
            for n in (420, 1110, 5000):
                p_, m_ = prob(n)
                at[str(n)] = {"m": m_, "t": target_depth(m_) if m_ >= 8 else 0,
                              "pass": p_}
            rows.append({"d": d, "epsilon": eps, "threshold": ptr_threshold(eps / 2, 1e-6),
                         **need, "at": at})
            print("tukey", d, eps, need, flush=True)
    return {"rows": rows}


def dpgd(reps: int) -> dict[str, Any]:
    from dpreg.linear_model import ClippedDPGradientDescent

    out: dict[str, Any] = {}
    grid: list[tuple[str, dict[str, Any]]] = [
        ("default", {}), ("T=25", {"n_iter": 25}), ("T=400", {"n_iter": 400}),
        ("lr=2", {"learning_rate": 2.0}), ("lr=2,T=25", {"learning_rate": 2.0, "n_iter": 25}),
        ("clip=0.25", {"clip_norm": 0.25}), ("clip=4", {"clip_norm": 4.0})]
    for name in SETS[:1]:
        X, y, bx, by = D.load(name)
        for eps in EPSILONS:
            cell = {}
            for tag, kw in grid:
                errs, r2s = [], []
                for rep in range(reps):
                    tr, te = split(len(y), rep)
                    _, b_ols, _ = ols(X[tr], y[tr])
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est = ClippedDPGradientDescent(epsilon=eps, delta=1e-6, bounds_X=bx,
                                                       bounds_y=by, random_state=rep, **kw)
                        est.fit(X[tr], y[tr])
                    errs.append(np.linalg.norm(est.coef_ - b_ols) / np.linalg.norm(b_ols))
                    r2s.append(r2(y[te], est.predict(X[te])))
                cell[tag] = {"rel_err": med(errs), "test_r2": med(r2s)}
            out[f"{name}|{eps:g}"] = cell
            print("dpgd", name, eps, flush=True)
    return out


def auto(reps: int) -> dict[str, Any]:
    from dpreg.auto.rules import choose_multivariate
    from dpreg.linear_model import BoostedAdaSSP

    out: dict[str, Any] = {"choice": {}, "boosted": {}}
    for n in (300, 420, 1000, 1110, 3000, 5000, 10_000):
        for d in (3, 5, 7, 11):
            for eps in EPSILONS:
                out["choice"][f"{n}|{d}|{eps:g}"] = choose_multivariate(n, d, epsilon=eps,
                                                                        delta=1e-6)[0]
    for name in SETS[:2]:
        X, y, bx, by = D.load(name)
        for eps in EPSILONS:
            cell = {}
            for rel in ("add-remove", "replace-one"):
                errs, r2s = [], []
                for rep in range(reps):
                    tr, te = split(len(y), rep)
                    _, b_ols, _ = ols(X[tr], y[tr])
                    est = BoostedAdaSSP(epsilon=eps, delta=1e-6, bounds_X=bx, bounds_y=by,
                                        neighbouring=rel, random_state=rep).fit(X[tr], y[tr])
                    errs.append(np.linalg.norm(est.coef_ - b_ols) / np.linalg.norm(b_ols))
                    r2s.append(r2(y[te], est.predict(X[te])))
                cell[rel] = {"rel_err": med(errs), "test_r2": med(r2s)}
            out["boosted"][f"{name}|{eps:g}"] = cell
            print("auto", name, eps, flush=True)
    return out


def floor_scale(reps: int) -> dict[str, Any]:
    """The eigen floor's constant f on the dev and tuning sets only (the benchmark stays held
    out): median error of ``ssp_solve`` with f ∈ {1, 1.5, 2, 2.5, 3, 4}, the λ_min budget
    given back (XᵀX : Xᵀy = 1 : 1), the same draws for every f.  f = 3 had the smallest
    geometric-mean excess over the per-cell best."""
    from dpreg.multivariate.ssp import ssp_solve

    fs = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0)
    out: dict[str, Any] = {}
    for name in SETS:
        X, y, bx, by = D.load(name)
        b_ols = ols(X, y)[1]
        Z, yz, sc = L.scaled(name, X=X, y=y, bounds=(bx, by))
        p = Z.shape[1]
        B = sc.row_norm_bound
        Z = Z * np.minimum(1.0, B / np.linalg.norm(Z, axis=1))[:, None]
        yz = np.clip(yz, -1.0, 1.0)
        G, v = Z.T @ Z, Z.T @ yz
        for eps in EPSILONS:
            sd = L.sigmas(eps, p, B, (0.0, 1.0, 1.0))
            rng = np.random.default_rng(0)
            res: dict[float, list[float]] = {f: [] for f in fs}
            for _ in range(reps):
                U = np.triu(rng.standard_normal((p, p)) * sd["XtX"])
                E = U + np.triu(U, 1).T
                e = rng.standard_normal(p) * sd["Xty"]
                for f in fs:
                    b = sc.to_original(ssp_solve(G + E, v + e, noise_sd=sd["XtX"], scale=f))[1]
                    res[f].append(float(np.linalg.norm(b - b_ols) / np.linalg.norm(b_ols)))
            out[f"{name}|{eps:g}"] = {str(f): med(res[f]) for f in fs}
    return out


def cov() -> dict[str, Any]:
    """Why CovarianceOLS refuses its interval: κ = σ / λ_min of the [0, 1]-scaled regressor
    block (intercept included) of the data (the released block adds noise to it), against the
    rule's limit 0.5; the factor of rows (or of ε) κ/0.5 that would bring it under; and the same
    κ in the centred basis (λ_min of the scaled covariance block n·Cov(x), the part of the
    matrix the slopes depend on) for comparison.  σ is public (read off one release)."""
    from dpreg.linear_model import CovarianceOLS

    out: dict[str, Any] = {}
    for name in D.names():
        X, y, bx, by = D.load(name)
        tr = split(len(y), 0)[0]
        X, y = X[tr], y[tr]
        lo = np.array([b[0] for b in bx])
        hi = np.array([b[1] for b in bx])
        U = (np.clip(X, lo, hi) - lo) / (hi - lo)
        Zs = np.column_stack([np.ones(len(y)), U])
        lam = float(np.linalg.eigvalsh(Zs.T @ Zs)[0])
        Uc = U - U.mean(axis=0)
        lam_c = float(np.linalg.eigvalsh(Uc.T @ Uc)[0])
        for eps in EPSILONS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = CovarianceOLS(epsilon=eps, delta=1e-6, bounds_X=bx, bounds_y=by,
                                    random_state=0).fit(X, y)
            sigma = float(est.release_.metadata["sigma"])
            out[f"{name}|{eps:g}"] = {"n": len(y), "sigma": sigma, "lambda_min": lam,
                                      "kappa": sigma / lam, "rows_factor": sigma / lam / 0.5,
                                      "lambda_min_centred": lam_c,
                                      "kappa_centred": sigma / lam_c}
    return out


def main(argv: list[str] | None = None) -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=200, help="noise draws per SSP cell")
    p.add_argument("--fit-reps", type=int, default=20, help="fits per DP-GD/auto cell")
    p.add_argument("--parts", default="ssp,floor_scale,tukey,cov,dpgd,auto")
    p.add_argument("--out", default="ablations.json", help="file under docs/accuracy-data")
    a = p.parse_args(argv)
    path = OUT / a.out
    res: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    for part in a.parts.split(","):
        t0 = time.process_time()
        res[part] = (ssp(a.reps) if part == "ssp" else tukey() if part == "tukey" else
                     dpgd(a.fit_reps) if part == "dpgd" else cov() if part == "cov" else
                     floor_scale(a.reps) if part == "floor_scale" else auto(a.fit_reps))
        res[part + "_cpu_s"] = time.process_time() - t0
        OUT.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(res, indent=1))
    print("written", path)


if __name__ == "__main__":  # pragma: no cover
    main()
