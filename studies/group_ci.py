"""Coverage of the per-group intervals of ``fit_by_group(..., ci_alpha=...)`` (issue 18, item
3; evaluation only).

Data: the bundled simulated state (``dpreg.data.load_dataset("oa-simulated")``, 3,108 tracts of
30-400 people), whose per-tract generating line is known: :func:`dpreg.data.simulate_oa_state`
with its fixed seed returns the same points and, per tract, the generating ``slope`` (the
study checks that the points equal the bundled file).  Public bounds [0, 1] for both ranks
(ranks by construction), the library's default search ranges, α = 0.1.

For each method and ε, ``reps`` tables are released (seeds 0..reps-1) over a public random
subsample of ``tracts`` tracts; every (tract, release) is one interval.  Reported per
(method, ε): coverage of the generating slope, coverage of the tract's own OLS slope on the
clipped data (the data-conditional target), share of ⊥ rows, share of non-informative slope
intervals (``informative_slope`` False), median width of the slope interval (all intervals and
informative ones), share of intervals that contain their own point estimate (and share that
exclude it while flagged informative), and (noisy-stats)
coverage of the generating prediction at x = 0.25 and 0.75.

Note: the ranks are clipped to [0, 1] by the generator, so the generating slope is the slope of
E[y | x] only before clipping; the OLS-slope column measures coverage of what the data hold.

``python -m studies.group_ci --tracts 500 --reps 4 --out docs/uncertainty-data/group-ci/coverage.csv``
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["group_ci_study", "METHODS"]

METHODS = ("theil-sen-exp", "theil-sen-wide", "theil-sen-smooth", "noisy-stats")
BOUNDS = {"parent_rank": (0.0, 1.0), "child_rank": (0.0, 1.0)}


def _state() -> tuple[pd.DataFrame, pd.DataFrame]:
    from dpreg.data import load_dataset, simulate_oa_state

    frame = load_dataset("oa-simulated").frame
    points, truth = simulate_oa_state()
    if not (np.array_equal(points["tract"].to_numpy(), frame["tract"].to_numpy())
            and np.allclose(points["parent_rank"], frame["parent_rank"], atol=1e-9)
            and np.allclose(points["child_rank"], frame["child_rank"], atol=1e-9)):
        raise RuntimeError("the bundled state differs from simulate_oa_state(): no truth")
    return frame, truth.set_index("tract")


def _ols_slopes(frame: pd.DataFrame) -> pd.Series:
    def slope(d: pd.DataFrame) -> float:
        x, y = d["parent_rank"].to_numpy(), d["child_rank"].to_numpy()
        dx = x - x.mean()
        return float(dx @ (y - y.mean()) / (dx @ dx))

    return frame.groupby("tract").apply(slope, include_groups=False)


def group_ci_study(methods: Sequence[str] = METHODS, epsilons: Sequence[float] = (4.0, 16.0),
                   *, tracts: int = 500, reps: int = 4, alpha: float = 0.1,
                   seed: int = 0) -> pd.DataFrame:
    from dpreg import fit_by_group

    frame, truth = _state()
    pick = np.random.default_rng(seed).choice(truth.index.to_numpy(), size=tracts, replace=False)
    keys = sorted(pick.tolist())
    sub = frame[frame["tract"].isin(keys)]
    ols = _ols_slopes(sub)
    rows = []
    for method in methods:
        for eps in epsilons:
            t0 = time.perf_counter()
            tabs = []
            for r in range(reps):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = fit_by_group(sub, "tract", "parent_rank", "child_rank", method=method,
                                     epsilon=eps, bounds=BOUNDS, groups=keys,
                                     random_state=np.random.SeedSequence([seed, r]),
                                     ci_alpha=alpha)
                tabs.append(t.assign(rep=r))
            t = pd.concat(tabs, ignore_index=True)
            secs = time.perf_counter() - t0
            released = t[~t["failed"]]
            # released groups without an interval: noisy-stats' public interval rule refused it
            # at the tract's (public) n and ε; coverage is over the intervals given
            gone = released["lower_slope"].isna()
            ok = released[~gone]
            true = truth.loc[ok["group"], "slope"].to_numpy()
            own = ols.loc[ok["group"]].to_numpy()
            lo, hi = ok["lower_slope"].to_numpy(), ok["upper_slope"].to_numpy()
            inf = ok["informative_slope"].astype(bool).to_numpy()
            width = hi - lo
            row = {
                "method": method, "epsilon": eps, "alpha": alpha, "intervals": len(ok),
                "failed_share": float(t["failed"].mean()),
                "refused_share": float(gone.mean()) if len(gone) else 0.0,
                "coverage_true_slope": float(np.mean((lo <= true) & (true <= hi))),
                "coverage_ols_slope": float(np.mean((lo <= own) & (own <= hi))),
                "not_informative_share": float(np.mean(~inf)),
                "median_width": float(np.median(width)),
                "median_width_informative": float(np.median(width[inf])) if inf.any()
                else float("nan"),
                "contains_own_estimate": float(np.mean((lo <= ok["slope"]) & (ok["slope"] <= hi))),
                "excludes_estimate_unflagged": float(np.mean(
                    ~((lo <= ok["slope"]) & (ok["slope"] <= hi)) & inf)),
                "seconds": secs,
            }
            if method.startswith("theil-sen"):
                # which groups got the calibrated interval: decided from the group's public n
                # by the same function the fit uses (ci_method="auto", the interval's ε/2)
                from dpreg.simple.ci import resolve_ci_method

                cal = np.array([resolve_ci_method("auto", n=int(m), pairs="all",
                                                  epsilon=eps / 2.0) == "calibrated"
                                for m in ok["n"]], dtype=bool)
                cov = (lo <= true) & (true <= hi)
                row["calibrated_share"] = float(np.mean(cal))
                row["coverage_true_slope_calibrated"] = (float(np.mean(cov[cal])) if cal.any()
                                                         else float("nan"))
                row["coverage_true_slope_tight"] = (float(np.mean(cov[~cal])) if (~cal).any()
                                                    else float("nan"))
                row["median_width_calibrated"] = (float(np.median(width[cal])) if cal.any()
                                                  else float("nan"))
            for xv, col in ((0.25, "p25"), (0.75, "p75")):
                c = f"lower_pred_{xv}"
                if c in ok:
                    tp = truth.loc[ok["group"], col].to_numpy()
                    row[f"coverage_true_pred_{xv}"] = float(np.mean(
                        (ok[c].to_numpy() <= tp) & (tp <= ok[f"upper_pred_{xv}"].to_numpy())))
            rows.append(row)
            print(f"{method} ε={eps:g}: {len(ok)} intervals ({int(gone.sum())} refused), coverage "
                  f"{row['coverage_true_slope']:.3f}"
                  f", non-informative {row['not_informative_share']:.3f}, {secs:.1f} s",
                  flush=True)
    return pd.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tracts", type=int, default=500)
    p.add_argument("--reps", type=int, default=4)
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--epsilons", type=float, nargs="+", default=[4.0, 16.0])
    p.add_argument("--methods", nargs="+", default=list(METHODS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    res = group_ci_study(a.methods, a.epsilons, tracts=a.tracts, reps=a.reps, alpha=a.alpha,
                         seed=a.seed)
    pd.set_option("display.width", 200)
    print(res.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if a.out:
        res.to_csv(a.out, index=False)


if __name__ == "__main__":
    main()
