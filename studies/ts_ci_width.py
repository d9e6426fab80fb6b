"""Width of the DP Theil-Sen slope interval against the non-private Theil-Sen interval
(issue 18, item 4; evaluation only).

Design as the ``sarathy-vadhan-coverage`` benchmark spec: y = 0.5x + N(0, 0.1²), x uniform
on [0, 1], all pairs, slope range [−4.5, 5.5], θ from :func:`dpreg.simple.theta_guidance`
with the generator's σ_e = 0.1 and Δ_x = 1 as public guesses, the data-independent null
variance bound, 95% intervals.  Two budgets for the interval: the whole ε
(:func:`dpreg.simple.theil_sen_ci` alone) and ε/2 (what ``DPTheilSen(ci_alpha=...)`` /
``regress(..., ci_alpha=...)`` spend on it: the other half releases the line), and the
estimator itself (:func:`dpreg.simple.theil_sen_with_ci` with its own defaults: x bounds
[0, 1], y bounds [0, 1], the same slope range, default θ), with the median absolute error of
its released slope.  Reported per (n, ε): median DP width, median non-private Theil-Sen width
(Sarathy & Vadhan Def. 6.1.1), their ratio, the share of intervals with an end at the slope
range (``informative`` False) and the coverage of the true slope 0.5.

``python -m studies.ts_ci_width --reps 100 --out docs/uncertainty-data/theil-sen/ts-ci-width.csv``
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["width_study"]

SLOPE, SIGMA, RANGE = 0.5, 0.1, (-4.5, 5.5)


def width_study(ns: Sequence[int] = (100, 200, 400), epsilons: Sequence[float] = (1, 2, 4, 10),
                *, reps: int = 100, alpha: float = 0.05, seed: int = 0,
                method: str = "auto") -> pd.DataFrame:
    from dpreg.simple import (
        nonprivate_theil_sen_ci,
        theil_sen_ci,
        theil_sen_with_ci,
        theta_guidance,
    )

    rows = []
    for n in ns:
        for eps in epsilons:
            ss = np.random.SeedSequence(seed, spawn_key=(int(n), int(eps * 100)))
            t0 = time.time()
            rec: dict[str, list[float]] = {k: [] for k in (
                "w_full", "w_half", "w_est", "w_np", "inf_full", "inf_half", "inf_est",
                "cov_full", "cov_half", "cov_est", "cov_np", "err_est", "w_sen")}
            for child in ss.spawn(reps):
                s_data, s_full, s_half, s_est = child.spawn(4)
                g = np.random.default_rng(s_data)
                x = g.uniform(0.0, 1.0, n)
                y = SLOPE * x + g.normal(0.0, SIGMA, n)
                ref = nonprivate_theil_sen_ci(x, y, ci_alpha=alpha)
                rec["w_np"].append(ref.width)
                rec["w_sen"].append(nonprivate_theil_sen_ci(x, y, ci_alpha=alpha,
                                                            approximation="normal").width)
                rec["cov_np"].append(float(ref.low <= SLOPE <= ref.high))
                for tag, e, s in (("full", eps, s_full), ("half", eps / 2.0, s_half)):
                    # θ guidance is for the worst-case (union/tight) targets; the calibrated
                    # ones use their own default
                    th = None if method in ("auto", "calibrated") else theta_guidance(
                        sigma_e=SIGMA, delta_x=1.0, R=(RANGE[1] - RANGE[0]) / 2.0, epsilon=e,
                        n=n, p=alpha)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        ci = theil_sen_ci(x, y, epsilon=e, ci_alpha=alpha, output_range=RANGE,
                                          ci_method="auto" if method == "calibrated" else method,
                                          theta=th, rng=np.random.default_rng(s))
                    rec[f"w_{tag}"].append(ci.width)
                    rec[f"inf_{tag}"].append(float(ci.informative))
                    rec[f"cov_{tag}"].append(float(ci.low <= SLOPE <= ci.high))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = theil_sen_with_ci(x, y, epsilon=eps, ci_alpha=alpha, x_bounds=(0.0, 1.0),
                                            y_bounds=(0.0, 1.0), slope_range=RANGE,
                                            ci_method=method, rng=np.random.default_rng(s_est))
                iv = res.conf_int(alpha).iloc[1]
                lo_e, hi_e = float(iv["lower"]), float(iv["upper"])
                rec["w_est"].append(hi_e - lo_e)
                rec["inf_est"].append(float(all(res.extra["ci_informative"].values())))
                rec["cov_est"].append(float(lo_e <= SLOPE <= hi_e))
                rec["err_est"].append(abs(float(res.params.iloc[1]) - SLOPE))
            w_np = float(np.median(rec["w_np"]))
            w_sen = float(np.median(rec["w_sen"]))
            for tag, label in (("full", "ε (interval alone)"), ("half", "ε/2 (line + interval)"),
                               ("est", "estimator (theil_sen_with_ci)")):
                w = float(np.median(rec[f"w_{tag}"]))
                err = float(np.median(rec["err_est"])) if tag == "est" else float("nan")
                rows.append({"n": n, "epsilon": eps, "interval_budget": label,
                             "median_width_dp": w, "median_width_nonprivate": w_np,
                             "ratio": w / w_np, "median_width_sen": w_sen,
                             "ratio_sen": w / w_sen,
                             "uninformative_share": 1.0 - float(np.mean(rec[f"inf_{tag}"])),
                             "coverage_dp": float(np.mean(rec[f"cov_{tag}"])),
                             "coverage_nonprivate": float(np.mean(rec["cov_np"])),
                             "median_abs_slope_error": err,
                             "reps": reps, "seconds": round(time.time() - t0, 1)})
            print(pd.DataFrame(rows[-3:]).round(4).to_string(index=False), flush=True)
    return pd.DataFrame(rows)


def _main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.ts_ci_width")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--method", default="auto", choices=("auto", "calibrated", "tight", "union"))
    ap.add_argument("--n", default="100,200,400")
    ap.add_argument("--epsilons", default="1,2,4,10")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    df = width_study([int(v) for v in a.n.split(",")], [float(v) for v in a.epsilons.split(",")],
                     reps=a.reps, seed=a.seed, method=a.method)
    if a.out:
        df.to_csv(a.out, index=False)


if __name__ == "__main__":  # pragma: no cover - command line
    _main()
