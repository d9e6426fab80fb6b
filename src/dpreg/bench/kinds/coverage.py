"""Sarathy & Vadhan (2025): coverage and width of the DP Theil-Sen slope intervals, and the
null variance Var(U₀) of the Theil-Sen U-statistic.

Kind ``ci-coverage``.  Two families of cells:

* ``ci`` cells (design × n × ε): ``datasets`` independent data sets from
  :func:`dpreg.bench.generators.sv_data`; on each, one release of every interval method
  (``union`` and ``tight`` :func:`dpreg.simple.theil_sen_ci`, and dpreg's own ``calibrated``
  method, which is not in the paper) plus the non-private references (Theil-Sen interval of
  Def. 6.1.1 with the exact null variance, and the OLS t interval).  Coverage is over data and
  mechanism together, as in their Thm 6.3.1.  Where a method is not offered at a cell's public
  (n, ε) -- ``calibrated`` below :func:`dpreg.simple.ci.calibrated_refusal`'s rule -- every data
  set gets a row with ``refused=True`` and no interval, and the cell's coverage is NaN.  θ of
  the paper's two methods follows :func:`dpreg.simple.theta_guidance` with the generator's σ_e
  and Δ_x as the public guesses (a simulation knows them) unless the spec gives a number;
  ``calibrated`` uses its own default θ, as a user gets it.
* ``var`` cells (design × n): Monte Carlo variance of U₀ = (1/|S|)·Σ sign(s_ij − β₁) over
  ``reps`` data sets, against the corrected closed form (:func:`dpreg.simple.pairs.
  null_variance_exact`, which is exact for the design), the two-point asymptotic 4/(3n) and, for
  a tie-free complete design, Kendall's 2(2n+5)/(9n(n−1)).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpreg._random import simulation_generator
from dpreg.bench import generators as G
from dpreg.bench.kinds._base import Kind, register, require
from dpreg.exceptions import InvalidInputError

__all__ = ["CICoverage"]


#: the keys of each table of a ``ci-coverage`` spec: what ``CICoverage`` and ``_theta`` read
TABLES: dict[str, tuple[str, ...]] = {
    "coverage": ("designs", "n", "epsilon", "methods", "datasets", "output_range", "alpha",
                 "slope", "sigma_e", "delta_x", "theta", "pairs"),
    "variance": ("designs", "n", "reps", "slope", "sigma_e"),
}


def _theta(cfg: dict[str, Any], n: int, eps: float) -> float:
    th = cfg.get("theta", "guidance")
    if th != "guidance":
        return float(th)
    from dpreg.simple import theta_guidance

    lo, hi = cfg["output_range"]
    return theta_guidance(sigma_e=float(cfg.get("sigma_e", 0.1)),
                          delta_x=float(cfg.get("delta_x", 1.0)), R=(hi - lo) / 2.0,
                          epsilon=eps, n=n, p=float(cfg.get("alpha", 0.05)))


@register
class CICoverage(Kind):
    name = "ci-coverage"
    tables = TABLES
    columns = ("dataset", "family", "design", "n", "epsilon", "method", "theta", "truth",
               "lower", "upper", "width", "covered", "refused", "seconds", "reps", "mc_var",
               "mc_var_se", "mc_var_untied_norm", "untied_pairs", "exact_var", "bound_var",
               "two_point_asymptotic", "kendall")

    @classmethod
    def validate(cls, spec: Any) -> None:
        cov = require(spec, spec.data, "coverage", "the spec")
        for key in ("designs", "n", "epsilon", "methods", "datasets", "output_range"):
            require(spec, cov, key, "[coverage]")
        for d in cov["designs"]:
            if d not in G.SV_DESIGNS:
                raise InvalidInputError(f"spec {spec.name!r}: unknown design {d!r}")
        var = spec.data.get("variance")
        if var is not None:
            for key in ("designs", "n", "reps"):
                require(spec, var, key, "[variance]")

    def cells(self, spec: Any) -> list[dict[str, Any]]:
        cov = spec["coverage"]
        cells: list[dict[str, Any]] = []
        for design in cov["designs"]:
            for n in cov["n"]:
                for eps in cov["epsilon"]:
                    cells.append({"cell": len(cells), "panel": "ci", "design": design,
                                  "n": int(n), "epsilon": float(eps),
                                  "cost": float(n) ** 2 * cov["datasets"]})
        var = spec.get("variance")
        if var:
            for design in var["designs"]:
                for n in var["n"]:
                    cells.append({"cell": len(cells), "panel": "var", "design": design,
                                  "n": int(n), "cost": float(n) ** 2 * var["reps"] / 10})
        return cells

    def run_cell(self, spec: Any, cell: dict[str, Any], seq: np.random.SeedSequence
                 ) -> list[dict[str, Any]]:
        if cell["panel"] == "var":
            return self._variance(spec, cell, seq)
        from dpreg.inference import NoUncertaintyError
        from dpreg.simple import nonprivate_theil_sen_ci, ols_ci, theil_sen_ci

        cov = spec["coverage"]
        n, eps, design = cell["n"], cell["epsilon"], cell["design"]
        slope = float(cov.get("slope", 0.5))
        alpha = float(cov.get("alpha", 0.05))
        pairs = cov.get("pairs", "all")
        lo, hi = (float(v) for v in cov["output_range"])
        th = _theta(cov, n, eps)
        rows: list[dict[str, Any]] = []
        methods = list(cov["methods"])
        for d, dseq in enumerate(seq.spawn(int(cov["datasets"]))):
            data_seq, *mseqs = dseq.spawn(1 + len(methods))
            x, y = G.sv_data(design, n, slope=slope, sigma_e=float(cov.get("sigma_e", 0.1)),
                             delta_x=float(cov.get("delta_x", 1.0)),
                             rng=simulation_generator(data_seq))
            base = {"dataset": d, "family": "ci", "design": design, "n": n, "epsilon": eps,
                    "truth": slope}
            for meth, mseq in zip(methods, mseqs):
                # the calibrated method runs with its own default θ (θ=None: the library
                # picks it); the paper's two methods get the spec's θ
                th_m = None if meth == "calibrated" else th
                t0 = time.perf_counter()
                try:
                    ci = theil_sen_ci(x, y, epsilon=eps, ci_alpha=alpha, output_range=(lo, hi),
                                      ci_method=meth, pairs=pairs, theta=th_m,
                                      rng=simulation_generator(mseq))
                except NoUncertaintyError:  # decided from the public (n, ε): the whole cell
                    rows.append({**base, "method": f"dp-{meth}", "theta": math.nan,
                                 "lower": math.nan, "upper": math.nan, "width": math.nan,
                                 "covered": math.nan, "refused": True,
                                 "seconds": time.perf_counter() - t0})
                    continue
                rows.append({**base, "method": f"dp-{meth}", "theta": ci.details["theta"],
                             "lower": ci.low, "upper": ci.high, "width": ci.high - ci.low,
                             "covered": bool(ci.low <= slope <= ci.high), "refused": False,
                             "seconds": time.perf_counter() - t0})
            t0 = time.perf_counter()
            ref = nonprivate_theil_sen_ci(x, y, ci_alpha=alpha, pairs="all")
            rows.append({**base, "method": "theil-sen (non-private)", "lower": ref.low,
                         "upper": ref.high, "width": ref.high - ref.low,
                         "covered": bool(ref.low <= slope <= ref.high),
                         "seconds": time.perf_counter() - t0})
            t0 = time.perf_counter()
            o = ols_ci(x, y, ci_alpha=alpha)
            rows.append({**base, "method": "ols-t (non-private)", "lower": o.low,
                         "upper": o.high, "width": o.high - o.low,
                         "covered": bool(o.low <= slope <= o.high),
                         "seconds": time.perf_counter() - t0})
        return rows

    def _variance(self, spec: Any, cell: dict[str, Any], seq: np.random.SeedSequence
                  ) -> list[dict[str, Any]]:
        from dpreg.simple.pairs import (
            all_pairs,
            kendall_null_variance,
            null_variance_bound,
            null_variance_exact,
        )

        var = spec["variance"]
        n, design = cell["n"], cell["design"]
        reps = int(var["reps"])
        slope = float(var.get("slope", 0.5))
        gen = simulation_generator(seq)
        t0 = time.perf_counter()
        # the design's x are fixed (Var(U₀) is conditional on x); errors re-drawn per rep
        x = G.sv_design(design, n, rng=gen)
        S = all_pairs(n)
        dx = x[S.j] - x[S.i]
        untied = dx != 0
        u0 = np.empty(reps)
        chunk = max(1, 2_000_000 // max(1, S.size))
        for start in range(0, reps, chunk):
            m = min(chunk, reps - start)
            e = gen.normal(0.0, float(var.get("sigma_e", 0.1)), (m, n))
            y = slope * x + e
            with np.errstate(divide="ignore", invalid="ignore"):
                s = (y[:, S.j] - y[:, S.i]) / np.where(untied, dx, 1.0)
            u0[start:start + m] = np.sum(np.sign(s - slope) * untied, axis=1) / S.size
        mc = float(np.var(u0, ddof=1))
        # the paper's U₀ averages over the N pairs with distinct x only (N = ⌊n/2⌋⌈n/2⌉
        # cross pairs for the two-point design): rescale by |S|/N
        n_untied = int(untied.sum())
        mc_paper = mc * (S.size / n_untied) ** 2
        return [{"dataset": 0, "family": "var", "design": design, "n": n, "method": "U0",
                 "reps": reps, "mc_var": mc, "mc_var_se": mc * math.sqrt(2.0 / (reps - 1)),
                 "mc_var_untied_norm": mc_paper, "untied_pairs": n_untied,
                 "exact_var": null_variance_exact(x, S), "bound_var": null_variance_bound(S),
                 "two_point_asymptotic": 4.0 / (3.0 * n),
                 "kendall": kendall_null_variance(n) if design != "two-point" else math.nan,
                 "seconds": time.perf_counter() - t0}]

    def summarise(self, spec: Any, rows: pd.DataFrame) -> pd.DataFrame:
        if not len(rows):
            return pd.DataFrame()
        out = []
        ci = rows[rows["family"] == "ci"]
        for (design, n, eps, method), grp in ci.groupby(["design", "n", "epsilon", "method"],
                                                         sort=True):
            refused = (grp["refused"].eq(True) if "refused" in grp
                       else pd.Series(False, index=grp.index))
            got = grp[~refused]
            k = len(got)
            cov = float(got["covered"].astype(bool).mean()) if k else math.nan
            out.append({"family": "ci", "design": design, "n": int(n), "epsilon": float(eps),
                        "method": method, "datasets": len(grp), "refused": int(refused.sum()),
                        "coverage": cov,
                        "coverage_se": (math.sqrt(max(cov * (1 - cov), 1e-12) / k) if k
                                        else math.nan),
                        "median_width": float(got["width"].median()) if k else math.nan,
                        "mean_width": float(got["width"].mean()) if k else math.nan,
                        "theta": float(grp["theta"].iloc[0]) if grp["theta"].notna().any()
                        else math.nan,
                        "seconds": float(grp["seconds"].sum())})
        var = rows[rows["family"] == "var"]
        for _, r in var.iterrows():
            out.append({"family": "var", "design": r["design"], "n": int(r["n"]),
                        "method": "U0", "reps": int(r["reps"]), "mc_var": r["mc_var"],
                        "mc_var_se": r["mc_var_se"], "exact_var": r["exact_var"],
                        "mc_var_untied_norm": r["mc_var_untied_norm"],
                        "bound_var": r["bound_var"],
                        "two_point_asymptotic": r["two_point_asymptotic"],
                        "kendall": r["kendall"],
                        "z_exact": (r["mc_var"] - r["exact_var"]) / r["mc_var_se"],
                        "seconds": r["seconds"]})
        return pd.DataFrame(out)

    def figures(self, spec: Any, rows: pd.DataFrame, summary: pd.DataFrame, out: Path
                ) -> list[Path]:
        from dpreg.bench.plots import line_panel

        paths: list[Path] = []
        if not len(summary):
            return paths
        ci = summary[summary["family"] == "ci"].copy()
        alpha = float(spec["coverage"].get("alpha", 0.05))
        for design in dict.fromkeys(ci["design"]):
            sub = ci[ci["design"] == design].copy()
            sub["series"] = sub["method"] + " ε=" + sub["epsilon"].map(lambda e: f"{e:g}")
            paths += line_panel(sub, x="n", y="coverage", group="series", out=out,
                                stem=f"figure_coverage_{design}",
                                title=f"coverage of 95% intervals, {design} design",
                                xlabel="n", ylabel="coverage", logy=False, hline=1 - alpha)
            paths += line_panel(sub, x="n", y="median_width", group="series", out=out,
                                stem=f"figure_width_{design}",
                                title=f"median width, {design} design", xlabel="n",
                                ylabel="median interval width")
        var = summary[summary["family"] == "var"].copy()
        if len(var):
            long = []
            for _, r in var.iterrows():
                for col in ("mc_var", "exact_var", "mc_var_untied_norm", "two_point_asymptotic",
                            "kendall"):
                    if not pd.isna(r[col]):
                        long.append({"series": f"{r['design']}: {col}", "n": r["n"],
                                     "value": r[col] * r["n"]})
            paths += line_panel(pd.DataFrame(long), x="n", y="value", group="series", out=out,
                                stem="figure_variance", title="n·Var(U₀): Monte Carlo vs closed forms",
                                xlabel="n", ylabel="n · Var(U₀)", logy=False)
        return paths
