"""Regression from a released SSCP matrix (post-processing, no budget): the sweep OLS of Bain et
al. (Alg. 2), the formula front end on the released columns, and the regression table with
DP-aware (parametric bootstrap) or labelled plug-in standard errors."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpreg._validation import check_int, check_rng
from dpreg.covariance._view import ReleaseView
from dpreg.covariance.calibration import INTERCEPT
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import RegressionResults
from dpreg.multivariate._common import check_choice

__all__ = ["sweep_regression", "parse_release_formula", "regress_release", "PLUGIN_SE",
           "SE_KINDS"]

PLUGIN_SE = ("plug-in: OLS standard errors computed from the noisy SSCP matrix as if it were "
             "exact; they ignore the privacy noise and understate the uncertainty when the "
             "noise is not small")
SE_KINDS = ("dp", "plugin", "noise-aware")


def sweep_regression(C: np.ndarray, x_idx: Sequence[int], y_idx: int, n: float
                     ) -> dict[str, Any]:
    """OLS of column ``y_idx`` on columns ``x_idx`` from an SSCP matrix (Bain et al. Alg. 2).

    β = M⁻¹v (solved, not inverted), RSS = yy − 2βᵀv + βᵀMβ, s² = RSS/(n − p),
    SE_i = √(s²·(M⁻¹)_ii).  Returns NaN standard errors (``se_defined=False``) when RSS <= 0 or
    n − p <= 0; raises ``numpy.linalg.LinAlgError`` when M is singular.
    """
    idx = list(x_idx)
    M = C[np.ix_(idx, idx)]
    v = C[idx, y_idx]
    yy = float(C[y_idx, y_idx])
    if np.linalg.matrix_rank(M) < len(idx):
        raise np.linalg.LinAlgError("the regressor block of the SSCP matrix is singular")
    beta = np.linalg.solve(M, v)
    rss = float(yy - 2.0 * beta @ v + beta @ M @ beta)
    p = len(idx)
    df = float(n - p)
    minv = np.linalg.solve(M, np.eye(p))
    ok = rss > 0 and df > 0
    s2 = rss / df if ok else math.nan
    bse = np.sqrt(np.maximum(s2 * np.diag(minv), 0.0)) if ok else np.full(p, math.nan)
    return {"beta": beta, "rss": rss, "s2": s2, "bse": bse, "df_resid": df, "M_inv": minv,
            "se_defined": ok, "yy": yy}


def parse_release_formula(columns: Sequence[str], formula: str) -> tuple[str, list[str], bool]:
    """The one restricted formula front end (:mod:`dpreg._formula`), linear terms only."""
    from dpreg._formula import linear_terms, parse_formula

    response, regressors, intercept = linear_terms(
        parse_formula(formula, columns, released=True))
    if response in regressors:
        raise InvalidInputError(
            f"formula must not use the response {response!r} as a regressor"
        )
    if not regressors and not intercept:
        raise InvalidInputError(f"formula has no regressors: {formula!r}")
    return response, regressors, intercept


def regress_release(rel: ReleaseView, formula: str, *, se: str = "dp", n_sim: int = 2000,
                    kind: str = "percentile", rng: Any = None) -> RegressionResults:
    """:meth:`dpreg.covariance.SSCPRelease.regress` (documented there): OLS ``formula`` from the
    released matrix by post-processing, with DP-aware (parametric bootstrap, ``se="dp"``) or
    labelled plug-in (``se="plugin"``) standard errors."""
    from dpreg.inference.dpci.engine import check_kind

    response, regressors, intercept = parse_release_formula(rel.columns, formula)
    se_kind = check_choice(se, "se", SE_KINDS)
    k = check_int(n_sim, "n_sim", minimum=50)
    boot_kind = check_kind(kind)
    names = ([INTERCEPT] if intercept else []) + regressors
    allcols = [INTERCEPT] + rel.columns
    x_idx = [allcols.index(c) for c in names]
    y_idx = allcols.index(response)
    public_n = rel.metadata.get("n_public")
    if rel.failed or rel.matrix is None:
        return RegressionResults(np.zeros(len(names)), names=names, privacy=rel.privacy,
                                 method="sscp-ols", failed=True, reason=rel.reason,
                                 dep_var=response)
    C = rel.matrix.to_numpy()
    n_used = rel.n
    try:
        fit = sweep_regression(C, x_idx, y_idx, n_used)
    except np.linalg.LinAlgError:
        return RegressionResults(
            np.zeros(len(names)), names=names, privacy=rel.privacy, method="sscp-ols",
            failed=True, dep_var=response,
            reason="the regressor block of the released matrix is singular (⊥)")
    bse = fit["bse"]
    uncertainty = PLUGIN_SE
    dp_kw: dict[str, Any] = {}
    plugin_extra: dict[str, Any] = {}
    if se_kind == "plugin":
        dp_kw["ci_method"] = ("plug-in Wald interval (coef ± t quantile × plug-in std err): "
                              "IGNORES the privacy noise")
    if se_kind in ("dp", "noise-aware"):
        from dpreg.inference.dpci.engine import ParametricBootstrap
        from dpreg.inference.dpci.ssp import SSCPModel
        from dpreg.inference.uncertainty import bootstrap_kwargs

        base = rel._scaled_repaired
        assert base is not None
        model = SSCPModel(scaled_repaired=base, noisy_count=rel.n_noisy,
                          bounds=rel.bounds, sigma=rel.sigma,
                          psd_tol=float(rel.metadata["psd_tol"]), n_public=public_n,
                          x_idx=x_idx, y_idx=y_idx, names=names,
                          noisy_scaled=rel.noisy_scaled)
        if model.noise_ratio > model.noise_ratio_limit:
            # too little information: refuse (measured: such intervals covered 0.15-0.54 at a
            # nominal 0.9-0.95 on small real data, docs/uncertainty.md)
            from dpreg.inference.uncertainty import refusal_kwargs

            dp_kw = refusal_kwargs(model.refusal(), noise_ratio=model.noise_ratio)
            plugin_extra = dp_kw.pop("extra_uncertainty")
            bse = None
            uncertainty = dp_kw.pop("uncertainty")
        else:
            boot = ParametricBootstrap(model, n_boot=k, kind=boot_kind, rng=check_rng(rng))
            dp_kw = bootstrap_kwargs(boot, what="the released SSCP matrix")
            dp_kw["uncertainty"] = dp_kw["uncertainty"].replace("DP-aware:",
                                                                "DP-aware (noise-aware):", 1)
            plugin_extra = dp_kw.pop("extra_uncertainty")
            bse = dp_kw.pop("bse")
            uncertainty = dp_kw.pop("uncertainty")
    if intercept:
        tss = fit["yy"] - C[0, y_idx] ** 2 / C[0, 0]
    else:
        tss = fit["yy"]
    r2 = 1.0 - fit["rss"] / tss if tss > 0 else math.nan
    df_model = len(names) - (1 if intercept else 0)
    df = fit["df_resid"]
    if intercept and df > 0 and math.isfinite(r2):
        adj = 1.0 - (1.0 - r2) * (n_used - 1) / df
    elif df > 0 and math.isfinite(r2):
        adj = 1.0 - (1.0 - r2) * n_used / df
    else:
        adj = math.nan
    if not fit["se_defined"] and se_kind == "plugin":
        uncertainty = ("undefined: RSS <= 0 or n - p <= 0 in the released matrix, so no "
                       "standard errors exist")
    elif not fit["se_defined"] and "dp_ci_refused" not in plugin_extra:
        uncertainty += ("; the released RSS is <= 0 (or n <= p), so the sampling part is "
                        "set to 0 and the interval reflects the privacy noise only -- "
                        "which then dominates")
    extra = {"rss": fit["rss"], "s2": fit["s2"], "rsquared": r2, "rsquared_adj": adj,
             "n_used": n_used, "n_noisy": rel.n_noisy, "df_model": df_model,
             "se_defined": fit["se_defined"], "se_kind": se_kind,
             "formula": formula, **plugin_extra}
    return RegressionResults(
        fit["beta"], names=names, privacy=rel.privacy, method="sscp-ols", bse=bse,
        df_resid=df if df > 0 else None, uncertainty=uncertainty,
        nobs=int(public_n) if public_n is not None else None, dep_var=response,
        extra=extra, **dp_kw,
    )
