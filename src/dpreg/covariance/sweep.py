"""Regression from a released SSCP matrix (post-processing, no budget): the sweep OLS of Bain et
al. (Alg. 2), the formula front end on the released columns, and the regression table with
DP-aware (parametric bootstrap) or labelled plug-in standard errors."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpreg._validation import check_choice, check_int, check_rng
from dpreg.covariance._view import ReleaseView
from dpreg.covariance.calibration import INTERCEPT, scaling_matrix
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import RegressionResults

__all__ = ["sweep_regression", "scaling_matrix", "parse_release_formula", "regress_release", "PLUGIN_SE",
           "SE_KINDS"]

PLUGIN_SE = ("plug-in: OLS standard errors computed from the noisy SSCP matrix as if it were "
             "exact; they ignore the privacy noise and understate the uncertainty when the "
             "noise is not small")
SE_KINDS = ("dp", "plugin", "noise-aware")


def sweep_regression(C: np.ndarray, x_idx: Sequence[int], y_idx: int, n: float, *,
                     bounds: Sequence[tuple[float, float]] | None = None) -> dict[str, Any]:
    """OLS of column ``y_idx`` on columns ``x_idx`` from an SSCP matrix (Bain et al. Alg. 2).

    ``C`` is a positive semi-definite SSCP matrix (a Gram matrix or a repaired release; negative
    eigenvalues, if any, count as 0).  Without ``bounds`` it is in the units of the regression;
    with ``bounds`` (the release's public (lo, hi) per column) ``C`` is the [0, 1]-scaled matrix
    Ĉ (intercept first) and the regression in original units is solved *there*: with
    D = D'T (:func:`scaling_matrix`) the regressors are D'·T[:, x_idx] and the response
    D'·T[:, y_idx], so nothing is formed in original units, where means of 10⁴ and narrow
    ranges make the matrix numerically singular although Ĉ is well conditioned.

    With Ĉ = FᵀF (symmetric square root) β minimises ‖F·(t_y − T_x·β)‖ and is computed by a
    QR factorisation of F·T_x with unit-norm columns (β = M⁻¹v without squaring the condition
    number); RSS = ‖F·(t_y − T_x·β)‖² (= yy − 2βᵀv + βᵀMβ), s² = RSS/(n − p),
    SE_i = √(s²·(M⁻¹)_ii) with M = T_xᵀĈT_x.  Returns NaN standard errors (``se_defined=False``)
    when RSS <= 0 or n − p <= 0; raises ``numpy.linalg.LinAlgError`` when the regressor block
    is numerically singular (rank of F·T_x, columns normalised, below p).  Post-processing.
    """
    from scipy import linalg

    idx = [int(i) for i in x_idx]
    P = C.shape[0]
    T = np.eye(P) if bounds is None else scaling_matrix(bounds)
    A = T[:, idx]
    t = T[:, int(y_idx)]
    rows = np.flatnonzero(np.any(A != 0, axis=1) | (t != 0))
    G = np.asarray(C, dtype=float)[np.ix_(rows, rows)]
    G = (G + G.T) / 2.0
    B, u = A[rows], t[rows]
    vals, vecs = np.linalg.eigh(G)
    F = np.sqrt(np.maximum(vals, 0.0))[:, None] * vecs.T  # G = FᵀF
    FB, Fu = F @ B, F @ u
    p = len(idx)
    norms = np.linalg.norm(FB, axis=0)
    if p and (not np.all(norms > 0) or np.linalg.matrix_rank(FB / norms) < p):
        raise np.linalg.LinAlgError("the regressor block of the SSCP matrix is singular")
    Q, R = np.linalg.qr(FB / norms)
    beta = linalg.solve_triangular(R, Q.T @ Fu) / norms
    resid = Fu - FB @ beta
    rss = float(resid @ resid)
    v = FB.T @ Fu
    yy = float(Fu @ Fu)
    df = float(n - p)
    Rinv = linalg.solve_triangular(R, np.eye(p))
    minv = (Rinv @ Rinv.T) / np.outer(norms, norms)
    ok = rss > 0 and df > 0
    s2 = rss / df if ok else math.nan
    bse = np.sqrt(np.maximum(s2 * np.diag(minv), 0.0)) if ok else np.full(p, math.nan)
    return {"beta": beta, "rss": rss, "s2": s2, "bse": bse, "df_resid": df, "M_inv": minv,
            "se_defined": ok, "yy": yy, "xty": v}


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
    integrity = rel.integrity
    # how the release file checked out (read from a file only): carried into every result
    marked = {} if integrity is None else {"release_integrity": integrity.as_dict()}
    if rel.failed or rel.matrix is None:
        return RegressionResults(np.zeros(len(names)), names=names, privacy=rel.privacy,
                                 method="sscp-ols", failed=True, reason=rel.reason,
                                 dep_var=response, extra=marked)
    scaled = rel._scaled_repaired
    assert scaled is not None
    n_used = rel.n
    try:  # solved in the [0, 1]-scaled units of the release (see sweep_regression)
        fit = sweep_regression(scaled, x_idx, y_idx, n_used, bounds=rel.bounds)
    except np.linalg.LinAlgError:
        return RegressionResults(
            np.zeros(len(names)), names=names, privacy=rel.privacy, method="sscp-ols",
            failed=True, dep_var=response, extra=marked,
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
        if not model.sufficient:
            # too little information (regressor block dominated by the noise, or the PSD repair
            # changed the model's block): refuse -- measured: such intervals covered 0.05-0.8
            # at a nominal 0.9-0.95 (stress runs, small real data; docs/uncertainty.md)
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
    if intercept:  # Σ(y − ȳ)² = r_y²·Σ(y' − ȳ')², from the scaled matrix (no cancellation)
        r_y = rel.bounds[y_idx - 1][1] - rel.bounds[y_idx - 1][0]
        tss = r_y**2 * (scaled[y_idx, y_idx] - scaled[0, y_idx] ** 2 / scaled[0, 0])
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
             "formula": formula, **plugin_extra, **marked}
    return RegressionResults(
        fit["beta"], names=names, privacy=rel.privacy, method="sscp-ols", bse=bse,
        df_resid=df if df > 0 else None, uncertainty=uncertainty,
        nobs=int(public_n) if public_n is not None else None, dep_var=response,
        extra=extra, **dp_kw,
    )
