"""Release once, analyse many: a DP sums-of-squares-and-cross-products (SSCP) matrix.

:func:`release_sscp` runs Analyze Gauss (Dwork, Talwar, Thakurta & Zhang 2014, as used by Bain,
D'Orazio, Sheffet & Vadhan 2014) on the (d+1)×(d+1) matrix DᵀD of the chosen columns plus a
leading intercept column of ones:

1. every column is clamped to its PUBLIC bounds [lo, hi] and scaled to [0, 1]:
   x' = (x − lo)/(hi − lo) (Bain et al. print the denominator with the wrong sign);
2. a row of D' = [1, x'] has squared norm <= d + 1, so the L2 sensitivity of the upper
   triangle of D'ᵀD' is d + 1 under add/remove and √2·(d + 1) under replace-one
   (:func:`dpreg.mechanisms.sensitivity.sscp_sensitivity`; Bain et al. say √d, which is the
   row norm, not the sensitivity);
3. i.i.d. Gaussian noise goes on the upper triangle including the diagonal and is mirrored;
   σ is the analytic (ε, δ) calibration (default) or the classical Δ√(2 ln(1.25/δ))/ε (ε < 1);
4. the noisy matrix is repaired to be positive definite (eigenvalues <= tol·λ_max are replaced by
   the smallest eigenvalue above it; no such eigenvalue → ⊥) and mapped back to original units
   with C = TᵀĈT, T₀₀ = 1, T₀ᵢ = lo_i, T_ii = hi_i − lo_i (exact, since D = D'T; the noisy
   intercept row supplies the count and sums, and PSD-ness is preserved).

:class:`SSCPRelease` stores the release with its metadata (JSON :meth:`~SSCPRelease.save` /
:meth:`~SSCPRelease.load`) and fits any OLS on any subset of the columns by post-processing
(:meth:`~SSCPRelease.regress`).  :func:`accuracy` / :func:`epsilon_for` are Bain et al.'s
getAccuracy/getParameters.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, stats

from dpreg._json import jsonable
from dpreg._release_file import Fields, finite_or_tag, read_json, strict_json
from dpreg._validation import (
    check_array,
    check_bounds,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    check_rng,
    fmt,
    is_seeded,
)
from dpreg._version import __version__
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import RegressionResults
from dpreg.mechanisms.gaussian import gaussian_sigma
from dpreg.mechanisms.sensitivity import sscp_sensitivity
from dpreg.multivariate._common import check_choice, noisy_symmetric, warn_if_not_private
from dpreg.privacy.budgets import ApproxDP
from dpreg.privacy.ledger import charge
from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement, check_neighbouring
from dpreg.privacy.notices import public_function

__all__ = [
    "release_sscp",
    "SSCPRelease",
    "sweep_regression",
    "repair_psd",
    "upscale",
    "noise_sd_matrix",
    "accuracy",
    "epsilon_for",
    "validate_release_dict",
]

FORMAT = "dpreg-sscp-release"
#: Version written by :meth:`SSCPRelease.save` (2: strict JSON, infinite ε as ``"inf"``);
#: :meth:`SSCPRelease.load` reads 1 (files of earlier dpreg versions, also without the field)
#: and 2.  The schema is :func:`validate_release_dict`.
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
#: Most columns a release file may hold (its matrices have (d + 1)² entries).
MAX_RELEASE_COLUMNS = 1000
MECHANISM = "Analyze Gauss SSCP"
INTERCEPT = "intercept"
SOURCE = ("Bain, D'Orazio, Sheffet, Vadhan 2014 (Analyze Gauss SSCP release, Alg. 1-2); "
          "Dwork, Talwar, Thakurta, Zhang 2014")
PLUGIN_SE = ("plug-in: OLS standard errors computed from the noisy SSCP matrix as if it were "
             "exact; they ignore the privacy noise and understate the uncertainty when the "
             "noise is not small")
SE_KINDS = ("dp", "plugin", "noise-aware")


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def _resolve_bounds(bounds: Any, columns: Sequence[str], name: str = "bounds"
                    ) -> list[tuple[float, float]]:
    if bounds is None:
        raise InvalidInputError(
            f"{name} is required: give public (lo, hi) bounds for every released column (from "
            "a codebook or domain knowledge, never from the data), e.g. "
            "{'income': (0, 500000), 'age': (18, 90)}"
        )
    if isinstance(bounds, Mapping):
        missing = [c for c in columns if c not in bounds]
        if missing:
            raise InvalidInputError(
                f"{name} must give (lo, hi) for every column; missing: {missing}"
            )
        return [check_bounds(bounds[c], f"{name}[{c!r}]") for c in columns]
    if isinstance(bounds, (str, bytes)) or not isinstance(bounds, Sequence):
        raise InvalidInputError(
            f"{name} must be a dict column -> (lo, hi) or a list of (lo, hi) pairs; got "
            f"{fmt(bounds)}"
        )
    if len(bounds) != len(columns):
        raise InvalidInputError(
            f"{name} must have one (lo, hi) pair per column ({len(columns)}); got {len(bounds)}"
        )
    return [check_bounds(b, f"{name}[{j}]") for j, b in enumerate(bounds)]


def _extract(data: Any, columns: Any) -> tuple[np.ndarray, list[str]]:
    if columns is None or isinstance(columns, (str, bytes)) or not isinstance(columns, Sequence):
        raise InvalidInputError(
            f"columns must be a non-empty list of column names; got {fmt(columns)}"
        )
    cols = [str(c) for c in columns]
    if not cols:
        raise InvalidInputError("columns must be a non-empty list of column names; got []")
    if len(set(cols)) != len(cols):
        raise InvalidInputError(f"columns must be distinct; got {cols}")
    if INTERCEPT in cols:
        raise InvalidInputError(
            f"columns must not include {INTERCEPT!r}: the intercept column is added "
            "automatically"
        )
    if isinstance(data, pd.DataFrame):
        missing = [c for c in cols if c not in data.columns]
        if missing:
            raise InvalidInputError(f"columns not found in data: {missing}; data has "
                                    f"{[str(c) for c in data.columns]}")
        arr = check_array(data[cols], "data", ndim=2)
    elif isinstance(data, Mapping):
        missing = [c for c in cols if c not in data]
        if missing:
            raise InvalidInputError(f"columns not found in data: {missing}")
        arr = check_array(np.column_stack([np.asarray(data[c]) for c in cols]), "data", ndim=2)
    else:
        arr = check_array(data, "data", ndim=2)
        if arr.shape[1] != len(cols):
            raise InvalidInputError(
                f"columns must name every column of the array data ({arr.shape[1]}); got "
                f"{len(cols)} names"
            )
    return arr, cols


def upscale(scaled: np.ndarray, bounds: Sequence[tuple[float, float]]) -> np.ndarray:
    """TᵀĈT: from the [0, 1]-scaled SSCP (with intercept first) to original units."""
    p = len(bounds) + 1
    T = np.zeros((p, p))
    T[0, 0] = 1.0
    for i, (lo, hi) in enumerate(bounds, start=1):
        T[0, i] = lo
        T[i, i] = hi - lo
    out = T.T @ scaled @ T
    return (out + out.T) / 2.0


def repair_psd(M: np.ndarray, tol: float = 1e-10) -> tuple[np.ndarray | None, int]:
    """PSD repair after Xi et al. (Bain et al. §3.2): (repaired matrix, #eigenvalues replaced).

    Eigenvalues <= tol·max|λ| are replaced by the smallest eigenvalue above that threshold, so
    the result is positive definite.  Returns ``(None, p)`` when no eigenvalue is above it (⊥).
    """
    sym = (M + M.T) / 2.0
    vals, vecs = np.linalg.eigh(sym)
    scale = float(np.max(np.abs(vals))) if vals.size else 0.0
    thr = tol * scale
    good = vals > thr
    if scale == 0.0 or not np.any(good):
        return None, int(vals.size)
    bad = int(np.count_nonzero(~good))
    if bad == 0:
        return sym, 0
    fixed = np.where(good, vals, float(np.min(vals[good])))
    out = (vecs * fixed) @ vecs.T
    return (out + out.T) / 2.0, bad


def _noise_var_factors(bounds: Sequence[tuple[float, float]]) -> np.ndarray:
    """Var[(TᵀET)_ij]/σ² for E symmetric with i.i.d. N(0, σ²) upper triangle.

    With a_i² = lo_i² + r_i² (a_0 = 1, lo_0 = 0, r_0 = 1): a_i²·a_j² off the diagonal and
    a_i⁴ + 2·lo_i²·r_i² on it (the two cross terms share one noise draw there).
    """
    lo = np.array([0.0] + [b[0] for b in bounds])
    r = np.array([1.0] + [b[1] - b[0] for b in bounds])
    a2 = lo**2 + r**2
    out = np.outer(a2, a2)
    np.fill_diagonal(out, a2**2 + 2.0 * lo**2 * r**2)
    return out


def _sigma(d: int, epsilon: float, delta: float, neighbouring: Neighbouring,
           calibration: str) -> tuple[float, float]:
    sens = sscp_sensitivity(d, neighbouring, intercept=True)
    if math.isinf(epsilon):
        return sens, 0.0
    return sens, gaussian_sigma(sens, ApproxDP(epsilon, delta), calibration=calibration)


def _plan_columns(bounds: Any, columns: Any) -> tuple[list[str], list[tuple[float, float]]]:
    """Column names and bounds for the planning functions (no data involved)."""
    if isinstance(bounds, Mapping):
        cols = [str(c) for c in (columns if columns is not None else bounds.keys())]
    elif isinstance(bounds, Sequence) and not isinstance(bounds, (str, bytes)):
        cols = ([str(c) for c in columns] if columns is not None
                else [f"x{j}" for j in range(len(bounds))])
    else:
        cols = []
    bnds = _resolve_bounds(bounds, cols)
    if not cols:
        raise InvalidInputError("bounds must name at least one column; got none")
    return cols, bnds


def _unit_sigma(epsilon: float, delta: float, calibration: str) -> float:
    """σ of the Gaussian mechanism for unit sensitivity."""
    return gaussian_sigma(1.0, ApproxDP(epsilon, delta), calibration=calibration)


def _sd_factors(bounds: Any, columns: Any, neighbouring: str | Neighbouring) -> pd.DataFrame:
    """Noise sd per entry (original units) divided by the unit-sensitivity σ: Δ·√Var-factor."""
    cols, bnds = _plan_columns(bounds, columns)
    rel = check_neighbouring(neighbouring)
    sens = sscp_sensitivity(len(cols), rel, intercept=True)
    names = [INTERCEPT] + cols
    return pd.DataFrame(sens * np.sqrt(_noise_var_factors(bnds)), index=names, columns=names)


def _accuracy_factors(beta: float, bounds: Any, columns: Any, n: int | None,
                      neighbouring: str | Neighbouring, simultaneous: bool) -> pd.DataFrame:
    """Half-width per entry divided by the unit-sensitivity σ (independent of ε)."""
    beta = check_probability(beta, "beta")
    out = _sd_factors(bounds, columns, neighbouring)
    p = out.shape[0]
    k = p * (p + 1) // 2 if simultaneous else 1
    out = out * _quantile(beta, k)
    if n is not None:
        out = out / check_int(n, "n", minimum=1)
    return out


def noise_sd_matrix(epsilon: float, delta: float, *, bounds: Any, columns: Any = None,
                    neighbouring: str | Neighbouring = "add-remove",
                    calibration: str = "analytic") -> pd.DataFrame:
    """Standard deviation of the noise on every entry of the released matrix (original units)."""
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    cal = check_choice(calibration, "calibration", ("analytic", "classical"))
    factors = _sd_factors(bounds, columns, neighbouring)
    return factors * (0.0 if math.isinf(eps) else _unit_sigma(eps, dlt, cal))


def _quantile(beta: float, k: int) -> float:
    return float(stats.norm.isf(beta / (2.0 * k)))


def accuracy(epsilon: float, delta: float, beta: float = 0.05, *, bounds: Any,
             columns: Any = None, n: int | None = None,
             neighbouring: str | Neighbouring = "add-remove", calibration: str = "analytic",
             simultaneous: bool = False) -> pd.DataFrame:
    """Bain et al.'s getAccuracy: half-widths a_ij with P(|noise_ij| <= a_ij) >= 1 − β.

    Per entry of the released matrix in original units, a_ij = z_{1−β/2}·sd_ij (with
    ``simultaneous=True`` the guarantee holds for all (d+1)(d+2)/2 distinct entries at once, by
    Bonferroni: β/K).  With ``n`` the half-widths are divided by n, i.e. they refer to the
    matrix of means (1/n)DᵀD as in Bain et al.'s code.  Uses only public inputs; ``bounds`` is
    a dict column → (lo, hi) or a list of pairs (names from ``columns`` or x0, x1, ...).
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    cal = check_choice(calibration, "calibration", ("analytic", "classical"))
    factors = _accuracy_factors(beta, bounds, columns, n, neighbouring, simultaneous)
    return factors * (0.0 if math.isinf(eps) else _unit_sigma(eps, dlt, cal))


def epsilon_for(accuracy: float, delta: float, beta: float = 0.05, *, bounds: Any,
                columns: Any = None, n: int | None = None, entry: Any = None,
                neighbouring: str | Neighbouring = "add-remove",
                calibration: str = "analytic", simultaneous: bool = False) -> float:
    """Bain et al.'s getParameters: the smallest ε whose half-widths (:func:`accuracy`) are
    <= ``accuracy``.

    ``entry=None`` asks for every entry (the worst one) to meet the target, ``entry=(a, b)``
    (column names, ``"intercept"`` allowed) for one entry.  Classical calibration is solved in
    closed form and must give ε < 1; analytic calibration is solved numerically (the analytic σ
    is decreasing in ε).
    """
    tgt = check_positive(accuracy, "accuracy")
    dlt = check_delta(delta, allow_zero=False)
    cal = check_choice(calibration, "calibration", ("analytic", "classical"))
    factors = _accuracy_factors(beta, bounds, columns, n, neighbouring, simultaneous)
    if entry is None:
        worst = float(factors.to_numpy().max())
    else:
        try:
            a, b = entry
            worst = float(factors.loc[str(a), str(b)])
        except (KeyError, TypeError, ValueError):
            raise InvalidInputError(
                f"entry must be a pair of names from {list(factors.index)}; got {fmt(entry)}"
            ) from None
    if cal == "classical":
        eps = worst * math.sqrt(2.0 * math.log(1.25 / dlt)) / tgt
        if eps >= 1.0:
            raise InvalidInputError(
                f"accuracy must be larger: the classical Gaussian calibration is valid only for "
                f"epsilon < 1 and this accuracy needs epsilon={eps:.4g} (use "
                f"calibration='analytic'); got accuracy={tgt!r}"
            )
        while worst * _unit_sigma(eps, dlt, cal) > tgt:
            eps = math.nextafter(eps, math.inf)
        return float(eps)

    def excess(eps: float) -> float:
        return worst * _unit_sigma(eps, dlt, cal) - tgt

    lo, hi = 1e-6, 1.0
    if excess(lo) <= 0:
        return lo
    while excess(hi) > 0:
        lo, hi = hi, hi * 2.0
        if hi > 1e4:
            raise InvalidInputError(
                f"accuracy must be larger: no epsilon up to 1e4 reaches accuracy={tgt!r}"
            )
    eps = optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=1e-12)
    while excess(eps) > 0:
        eps = math.nextafter(eps, math.inf)
    return float(eps)


# --------------------------------------------------------------------------------------------
# regression from the matrix
# --------------------------------------------------------------------------------------------
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


class SSCPRelease:
    """A released DP SSCP matrix with its metadata.

    Attributes
    ----------
    columns:
        Released column names (the intercept column is added in front as ``"intercept"``).
    bounds:
        Public (lo, hi) per column used for clamping/scaling.
    noisy_scaled:
        The DP output: the noisy [0, 1]-scaled matrix D'ᵀD' + E, before repair (numpy array).
    matrix:
        Repaired, upscaled matrix in original units (DataFrame), or ``None`` when ⊥.
    privacy:
        The :class:`~dpreg.privacy.PrivacyStatement`.
    metadata:
        ε, δ, σ, sensitivity, neighbouring, calibration, noisy n (Ĉ₀₀), public n (replace-one
        only), PSD repair record, dpreg version, creation time.
    """

    def __init__(self, *, columns: Sequence[str], bounds: Sequence[tuple[float, float]],
                 noisy_scaled: np.ndarray, privacy: PrivacyStatement, metadata: dict[str, Any],
                 psd_tol: float = 1e-10) -> None:
        self.columns = [str(c) for c in columns]
        self.bounds = [(float(lo), float(hi)) for lo, hi in bounds]
        self.noisy_scaled = np.asarray(noisy_scaled, dtype=float)
        self.privacy = privacy
        self.metadata = dict(metadata)
        names = [INTERCEPT] + self.columns
        repaired, n_fixed = repair_psd(self.noisy_scaled, psd_tol)
        self.metadata.update(psd_tol=psd_tol, psd_repaired=bool(n_fixed),
                             eigenvalues_replaced=n_fixed, failed=repaired is None)
        if repaired is None:
            self.metadata["reason"] = ("the noisy SSCP matrix has no positive eigenvalue: PSD "
                                       "repair is impossible (⊥)")
            self._scaled_repaired = None
            self.matrix = None
        else:
            self._scaled_repaired = repaired
            self.matrix = pd.DataFrame(upscale(repaired, self.bounds), index=names,
                                       columns=names)
        self.raw = pd.DataFrame(upscale(self.noisy_scaled, self.bounds), index=names,
                                columns=names)

    # ------------------------------------------------------------------ properties
    @property
    def failed(self) -> bool:
        return bool(self.metadata.get("failed", False))

    @property
    def reason(self) -> str:
        return str(self.metadata.get("reason", ""))

    @property
    def n_noisy(self) -> float:
        """Ĉ₀₀: the noisy row count."""
        return float(self.noisy_scaled[0, 0])

    @property
    def n(self) -> float:
        """The n used for degrees of freedom: public n (replace-one) or the noisy count."""
        public = self.metadata.get("n_public")
        return float(public) if public is not None else self.n_noisy

    @property
    def sigma(self) -> float:
        """Noise sd on each upper-triangle entry of the scaled matrix."""
        return float(self.metadata["sigma"])

    def __repr__(self) -> str:
        status = "FAILED (⊥)" if self.failed else f"n≈{self.n_noisy:.1f}"
        return (f"<SSCPRelease {len(self.columns)} columns {self.columns}; {status}; "
                f"{self.privacy.budget}, {self.privacy.neighbouring}>")

    # ------------------------------------------------------------------ accuracy
    def accuracy(self, beta: float = 0.05, *, simultaneous: bool = False,
                 normalize: bool = False) -> pd.DataFrame:
        """Half-widths of (1 − β) noise intervals per entry of :attr:`matrix` (original units;
        divided by n with ``normalize``).  Post-processing of public quantities."""
        beta = check_probability(beta, "beta")
        names = [INTERCEPT] + self.columns
        p = len(names)
        k = p * (p + 1) // 2 if simultaneous else 1
        sd = self.sigma * np.sqrt(_noise_var_factors(self.bounds)) * _quantile(beta, k)
        out = pd.DataFrame(sd, index=names, columns=names)
        return out / self.n if normalize else out

    # ------------------------------------------------------------------ regression
    def _parse(self, formula: str) -> tuple[str, list[str], bool]:
        """The one restricted formula front end (:mod:`dpreg._formula`), linear terms only."""
        from dpreg._formula import linear_terms, parse_formula

        response, regressors, intercept = linear_terms(
            parse_formula(formula, self.columns, released=True))
        if response in regressors:
            raise InvalidInputError(
                f"formula must not use the response {response!r} as a regressor"
            )
        if not regressors and not intercept:
            raise InvalidInputError(f"formula has no regressors: {formula!r}")
        return response, regressors, intercept

    def regress(self, formula: str, *, se: str = "dp", n_sim: int = 2000,
                kind: str = "percentile", rng: Any = None) -> RegressionResults:
        """OLS ``formula`` (e.g. ``"y ~ x1 + x2"``, ``"y ~ x1 - 1"``) from the released matrix.

        Only linear terms of released columns and the intercept are allowed (``- 1`` or
        ``+ 0`` drops the intercept).  Post-processing: no privacy budget is used.  Returns a
        :class:`~dpreg.inference.RegressionResults` with coefficients, standard errors, t and
        two-sided p-values on n − p degrees of freedom, and ``extra`` holding RSS, s², R² and
        adjusted R².

        ``se="dp"`` (default; ``"noise-aware"`` is an alias): DP-aware standard errors
        (sampling variance plus the delta-method variance of the privacy noise) and
        ``conf_int`` from a parametric bootstrap of the release (Ferrando, Wang & Sheldon
        2022; ``n_sim`` replicates, construction ``kind`` = ``"percentile"`` (default),
        ``"studentized"`` or ``"basic"``; ``rng`` seeds the simulation); see
        :mod:`dpreg.inference.dpci.ssp`.  ``se="plugin"`` treats the noisy matrix as exact --
        those standard errors ignore the privacy noise and are labelled so
        (``extra["bse_plugin_ignores_noise"]`` holds them in the DP-aware mode too).
        """
        from dpreg.inference.dpci.engine import check_kind

        response, regressors, intercept = self._parse(formula)
        se_kind = check_choice(se, "se", SE_KINDS)
        k = check_int(n_sim, "n_sim", minimum=50)
        boot_kind = check_kind(kind)
        names = ([INTERCEPT] if intercept else []) + regressors
        allcols = [INTERCEPT] + self.columns
        x_idx = [allcols.index(c) for c in names]
        y_idx = allcols.index(response)
        public_n = self.metadata.get("n_public")
        if self.failed or self.matrix is None:
            return RegressionResults(np.zeros(len(names)), names=names, privacy=self.privacy,
                                     method="sscp-ols", failed=True, reason=self.reason,
                                     dep_var=response)
        C = self.matrix.to_numpy()
        n_used = self.n
        try:
            fit = sweep_regression(C, x_idx, y_idx, n_used)
        except np.linalg.LinAlgError:
            return RegressionResults(
                np.zeros(len(names)), names=names, privacy=self.privacy, method="sscp-ols",
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

            base = self._scaled_repaired
            assert base is not None
            model = SSCPModel(scaled_repaired=base, noisy_count=self.n_noisy,
                              bounds=self.bounds, sigma=self.sigma,
                              psd_tol=float(self.metadata["psd_tol"]), n_public=public_n,
                              x_idx=x_idx, y_idx=y_idx, names=names,
                              noisy_scaled=self.noisy_scaled)
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
        elif not fit["se_defined"]:
            uncertainty += ("; the released RSS is <= 0 (or n <= p), so the sampling part is "
                            "set to 0 and the interval reflects the privacy noise only -- "
                            "which then dominates")
        extra = {"rss": fit["rss"], "s2": fit["s2"], "rsquared": r2, "rsquared_adj": adj,
                 "n_used": n_used, "n_noisy": self.n_noisy, "df_model": df_model,
                 "se_defined": fit["se_defined"], "se_kind": se_kind,
                 "formula": formula, **plugin_extra}
        return RegressionResults(
            fit["beta"], names=names, privacy=self.privacy, method="sscp-ols", bse=bse,
            df_resid=df if df > 0 else None, uncertainty=uncertainty,
            nobs=int(public_n) if public_n is not None else None, dep_var=response,
            extra=extra, **dp_kw,
        )

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """The release file's content (format version :data:`FORMAT_VERSION`): strict JSON
        values only -- an infinite ε is ``"inf"``, a matrix entry that overflows in original
        units is ``null``."""
        matrix = None
        if self.matrix is not None:
            m = self.matrix.to_numpy()
            matrix = [[float(v) if math.isfinite(v) else None for v in row] for row in m]
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "columns": list(self.columns),
            "bounds": {c: list(b) for c, b in zip(self.columns, self.bounds)},
            "noisy_scaled": self.noisy_scaled.tolist(),
            "matrix": matrix,
            "privacy": finite_or_tag(self.privacy.as_dict()),
            "metadata": finite_or_tag(jsonable(self.metadata)),
        }

    def save(self, path: str | Path) -> Path:
        """Write the release (matrix, bounds, privacy statement, metadata) as strict JSON."""
        out = Path(path)
        out.write_text(strict_json(self.to_dict()))
        return out

    @classmethod
    def from_dict(cls, data: Any, *, non_finite_literals: bool = False) -> SSCPRelease:
        """A release from a parsed release file, validated by :func:`validate_release_dict`
        (one-line :class:`~dpreg.exceptions.InvalidInputError` naming the field otherwise)."""
        kwargs, stored = validate_release_dict(data, non_finite_literals=non_finite_literals)
        rel = cls(**kwargs)
        _check_derived_matrix(rel, stored)
        return rel

    @classmethod
    def load(cls, path: str | Path) -> SSCPRelease:
        """Read a release written by :meth:`save` (format versions 1 and 2).

        The file is size- and depth-checked before parsing, must be strict UTF-8 JSON
        (version 1 files may hold ``Infinity`` for ε = ∞) and is validated field by field and
        for internal consistency (σ against ε, δ, the sensitivity and the neighbouring
        relation; bounds; matrix shape and symmetry; n).  Nothing in it is evaluated.
        """
        doc, non_finite = read_json(path, what="release file")
        try:
            return cls.from_dict(doc, non_finite_literals=non_finite)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{path}: {exc}") from None


# --------------------------------------------------------------------------------------------
# release-file schema
# --------------------------------------------------------------------------------------------
_TOP_FIELDS = ("format", "format_version", "columns", "bounds", "noisy_scaled", "matrix",
               "privacy", "metadata")


def validate_release_dict(data: Any, *, non_finite_literals: bool = False
                          ) -> tuple[dict[str, Any], np.ndarray | None]:
    """Check a parsed SSCP release file against the schema; return the constructor arguments
    of :class:`SSCPRelease` and the stored ``matrix`` (or None).

    Schema (versions 1 and 2; version 2 is strict JSON)::

        format          "dpreg-sscp-release"
        format_version  1 or 2 (missing: 1)
        columns         1..MAX_RELEASE_COLUMNS distinct non-empty strings, not "intercept"
        bounds          {column: [lo, hi]} for exactly the columns, finite, lo < hi
        noisy_scaled    (d+1)x(d+1) finite, exactly symmetric (the DP output)
        matrix          null (a failed release) or (d+1)x(d+1) numbers/null, equal to the
                        matrix derived from noisy_scaled and bounds
        privacy         {budget: {kind: "approx", epsilon: > 0 or "inf", delta: in (0, 1)},
                         neighbouring: "add-remove" | "replace-one",
                         mechanism: "Analyze Gauss SSCP", source?: str, seeded?: bool,
                         details?: {sensitivity?, sigma?, calibration?, ...}, ...}
        metadata        {epsilon, delta, neighbouring, calibration: "analytic" | "classical",
                         sensitivity, sigma, n_noisy, n_public, psd_tol: in (0, 1), ...}

    Consistency: the privacy block and the metadata agree; the sensitivity is the one of d
    columns under the relation; σ is at least the σ recomputed from the public (ε, δ, d,
    relation, calibration) -- a smaller σ means the ε claim was edited; n_noisy is the
    released count noisy_scaled[0][0]; n_public is null under add-remove (n is private) and an
    integer >= 1 within 10σ of the noisy count under replace-one.  Unknown top-level fields are
    refused; further optional fields in ``privacy``, ``privacy.details`` and ``metadata`` are
    kept but not used.
    """
    f = Fields("release file")
    if isinstance(data, Mapping) and not isinstance(data, dict):
        data = dict(data)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidInputError(
            f"not a dpreg SSCP release (expected format {FORMAT!r}); got "
            f"{fmt(data.get('format') if isinstance(data, dict) else type(data).__name__)}"
        )
    version = data.get("format_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) \
            or version not in READABLE_VERSIONS:
        newer = isinstance(version, int) and not isinstance(version, bool) \
            and version > FORMAT_VERSION
        raise f.error("format_version", f"one of {list(READABLE_VERSIONS)}"
                      + (" (the file was written by a newer dpreg)" if newer else ""), version)
    if non_finite_literals and version >= 2:
        raise InvalidInputError(
            "release file: format_version 2 files are strict JSON, but this one holds NaN or "
            "Infinity literals (an infinite epsilon is written as \"inf\")"
        )
    unknown = sorted(set(data) - set(_TOP_FIELDS))
    if unknown:
        raise InvalidInputError(f"release file: unknown field {fmt(unknown[0])} (a release has "
                                f"{list(_TOP_FIELDS)})")
    # -- columns and bounds
    cols_raw = f.get(data, "columns", "")
    if not isinstance(cols_raw, list) or not 1 <= len(cols_raw) <= MAX_RELEASE_COLUMNS:
        raise f.error("columns", f"a list of 1 to {MAX_RELEASE_COLUMNS} column names", cols_raw)
    cols = [f.string(c, f"columns[{j}]", max_len=1000) for j, c in enumerate(cols_raw)]
    if any(not c for c in cols) or INTERCEPT in cols or len(set(cols)) != len(cols):
        raise f.error("columns", f"distinct non-empty names other than {INTERCEPT!r}", cols)
    d = len(cols)
    bounds_raw = f.obj(f.get(data, "bounds", ""), "bounds")
    if set(bounds_raw) != set(cols):
        raise f.error("bounds", "an object with one [lo, hi] per column", sorted(bounds_raw))
    bounds: list[tuple[float, float]] = []
    for c in cols:
        b = bounds_raw[c]
        path = f"bounds[{c!r}]"
        if not isinstance(b, list) or len(b) != 2:
            raise f.error(path, "[lo, hi]", b)
        lo = f.number(b[0], path + "[0]")
        hi = f.number(b[1], path + "[1]")
        if not lo < hi or not math.isfinite(hi - lo):
            raise f.error(path, "[lo, hi] with lo < hi", b)
        bounds.append((lo, hi))
    # -- the DP output
    noisy = f.matrix(f.get(data, "noisy_scaled", ""), "noisy_scaled", d + 1)
    if not np.array_equal(noisy, noisy.T):
        raise f.error("noisy_scaled", "a symmetric matrix (one noise draw per entry, "
                      "mirrored)", "an asymmetric matrix")
    stored = f.get(data, "matrix", "")
    stored_m = None if stored is None else f.matrix(stored, "matrix", d + 1, null_entries=True)
    # -- privacy statement
    priv = f.obj(f.get(data, "privacy", ""), "privacy")
    budget = f.obj(f.get(priv, "budget", "privacy"), "privacy.budget")
    if set(budget) != {"kind", "epsilon", "delta"}:
        raise f.error("privacy.budget", "{kind, epsilon, delta}", sorted(budget))
    f.string(budget["kind"], "privacy.budget.kind", choices=("approx",))
    eps = f.number(budget["epsilon"], "privacy.budget.epsilon", lo=0.0, lo_open=True,
                   allow_inf=True)
    delta = f.number(budget["delta"], "privacy.budget.delta", lo=0.0, hi=1.0, lo_open=True,
                     hi_open=True)
    rel = check_neighbouring(f.string(f.get(priv, "neighbouring", "privacy"),
                                      "privacy.neighbouring",
                                      choices=tuple(n.value for n in Neighbouring)))
    mechanism = f.string(f.get(priv, "mechanism", "privacy"), "privacy.mechanism",
                         choices=(MECHANISM,))
    source = f.string(priv.get("source", ""), "privacy.source")
    seeded = f.boolean(priv.get("seeded", False), "privacy.seeded")
    details = f.obj(priv.get("details", {}), "privacy.details")
    # -- metadata
    meta = dict(f.obj(f.get(data, "metadata", ""), "metadata"))
    m_eps = f.number(f.get(meta, "epsilon", "metadata"), "metadata.epsilon", lo=0.0,
                     lo_open=True, allow_inf=True)
    m_delta = f.number(f.get(meta, "delta", "metadata"), "metadata.delta", lo=0.0, hi=1.0,
                       lo_open=True, hi_open=True)
    if m_eps != eps or m_delta != delta:
        raise f.error("metadata.epsilon/delta", f"the privacy budget's ({eps!r}, {delta!r})",
                      (m_eps, m_delta))
    m_rel = f.string(f.get(meta, "neighbouring", "metadata"), "metadata.neighbouring",
                     choices=(rel.value,))
    cal = f.string(f.get(meta, "calibration", "metadata"), "metadata.calibration",
                   choices=("analytic", "classical"))
    sens = f.number(f.get(meta, "sensitivity", "metadata"), "metadata.sensitivity", lo=0.0,
                    lo_open=True)
    sigma = f.number(f.get(meta, "sigma", "metadata"), "metadata.sigma", lo=0.0)
    n_noisy = f.number(f.get(meta, "n_noisy", "metadata"), "metadata.n_noisy")
    n_public_raw = f.get(meta, "n_public", "metadata")
    tol = f.number(meta.get("psd_tol", 1e-10), "metadata.psd_tol", lo=0.0, hi=1.0,
                   lo_open=True, hi_open=True)
    if "seeded" in meta and f.boolean(meta["seeded"], "metadata.seeded") != seeded:
        raise f.error("metadata.seeded", f"the privacy statement's {seeded!r}", meta["seeded"])
    for key, value in (("sensitivity", sens), ("sigma", sigma), ("calibration", cal)):
        if key in details and details[key] != value:
            raise f.error(f"privacy.details.{key}", f"metadata.{key} ({value!r})", details[key])
    # -- consistency with the public parameters
    want_sens = sscp_sensitivity(d, rel, intercept=True)
    if not math.isclose(sens, want_sens, rel_tol=1e-12):
        raise f.error("metadata.sensitivity", f"{want_sens!r} ({d} columns plus intercept, "
                      f"{rel.value})", sens)
    try:
        _, want_sigma = _sigma(d, eps, delta, rel, cal)
    except InvalidInputError as exc:
        raise InvalidInputError(f"release file: field 'metadata.calibration': {exc}") from None
    if sigma < want_sigma * (1.0 - 1e-9):
        raise f.error("metadata.sigma", f">= {want_sigma!r}, the noise that (epsilon={eps!r}, "
                      f"delta={delta!r}) needs for {d} columns under {rel.value} with "
                      f"{cal} calibration (a smaller sigma means the privacy claim was "
                      "edited)", sigma)
    if not math.isclose(n_noisy, float(noisy[0, 0]), rel_tol=1e-12, abs_tol=1e-12):
        raise f.error("metadata.n_noisy", f"the released count noisy_scaled[0][0] "
                      f"({float(noisy[0, 0])!r})", n_noisy)
    if rel is Neighbouring.ADD_REMOVE:
        if n_public_raw is not None:
            raise f.error("metadata.n_public", "null under add-remove (n is private)",
                          n_public_raw)
    else:
        n_pub = f.integer(n_public_raw, "metadata.n_public", minimum=1)
        if abs(n_noisy - n_pub) > 10.0 * sigma + 1e-6 * max(1.0, n_pub):
            raise f.error("metadata.n_public", f"within 10 sigma ({10 * sigma:.4g}) of the "
                          f"noisy count {n_noisy:.6g}", n_pub)
    for key in ("mechanism", "dpreg_version", "created", "reason"):
        if key in meta:
            f.string(meta[key], f"metadata.{key}")
    meta.update(epsilon=eps, delta=delta, neighbouring=m_rel, calibration=cal,
                sensitivity=sens, sigma=sigma, n_noisy=n_noisy)
    for key in ("psd_repaired", "eigenvalues_replaced", "failed", "reason", "psd_tol"):
        meta.pop(key, None)  # recomputed from noisy_scaled
    privacy = PrivacyStatement(budget=ApproxDP(eps, delta), neighbouring=rel,
                               mechanism=mechanism, source=source, seeded=seeded,
                               details=dict(details))
    kwargs = {"columns": cols, "bounds": bounds, "noisy_scaled": noisy, "privacy": privacy,
              "metadata": meta, "psd_tol": tol}
    return kwargs, stored_m


def _check_derived_matrix(rel: SSCPRelease, stored: np.ndarray | None) -> None:
    """The stored ``matrix`` must be the one derived from ``noisy_scaled`` (an edited
    ``matrix`` would otherwise be silently replaced)."""
    if rel.matrix is None or stored is None:
        if (rel.matrix is None) != (stored is None):
            raise InvalidInputError(
                "release file: field 'matrix' must be "
                + ("null: noisy_scaled cannot be repaired (a failed release)"
                   if rel.matrix is None else
                   "the repaired matrix derived from noisy_scaled and bounds")
                + f"; got {'null' if stored is None else 'a matrix'}")
        return
    derived = rel.matrix.to_numpy()
    finite = np.isfinite(derived)
    scale = float(np.max(np.abs(derived[finite]))) if finite.any() else 1.0
    same_nulls = np.array_equal(np.isnan(stored), ~finite)
    close = np.allclose(stored[finite], derived[finite], rtol=1e-6, atol=1e-9 * scale)
    if not (same_nulls and close):
        raise InvalidInputError(
            "release file: field 'matrix' must be the repaired matrix derived from "
            "noisy_scaled and bounds; got a different matrix (edited file?)"
        )


# --------------------------------------------------------------------------------------------
# the release
# --------------------------------------------------------------------------------------------
def _n_public(rel: SSCPRelease) -> int | None:
    """The release's public n (replace-one releases only)."""
    n = rel.metadata.get("n_public")
    return None if n is None else int(n)


@public_function(seed_arg="rng", n_public=_n_public)
def release_sscp(
    data: Any,
    *,
    columns: Sequence[str],
    bounds: Any,
    epsilon: float,
    delta: float,
    rng: Any = None,
    neighbouring: str | Neighbouring = "add-remove",
    calibration: str = "analytic",
    ledger: Any = None,
    psd_tol: float = 1e-10,
) -> SSCPRelease:
    """Release a DP SSCP matrix of ``columns`` (plus an intercept column) of ``data``.

    Parameters
    ----------
    data:
        DataFrame, mapping column → values, or a 2-D array whose columns are ``columns``.
    columns:
        Column names to release (the response and all candidate regressors).
    bounds:
        PUBLIC (lo, hi) per column (dict or list aligned with ``columns``); values are clamped.
    epsilon, delta:
        (ε, δ), δ > 0.  ``epsilon=inf`` releases the exact matrix (not private).
    neighbouring:
        ``"add-remove"`` (default; sensitivity d + 1) or ``"replace-one"`` (√2·(d + 1); n is
        then public and recorded for the degrees of freedom).
    calibration:
        ``"analytic"`` (default; exact Gaussian curve) or ``"classical"`` (ε < 1).
    ledger:
        Optional :class:`~dpreg.Ledger`, charged (ε, δ) after validation, before any noise.
    psd_tol:
        Relative tolerance of the PSD repair.
    """
    arr, cols = _extract(data, columns)
    bnds = _resolve_bounds(bounds, cols)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    rel = check_neighbouring(neighbouring)
    cal = check_choice(calibration, "calibration", ("analytic", "classical"))
    tol = check_positive(psd_tol, "psd_tol")
    if tol >= 1:
        raise InvalidInputError(f"psd_tol must be < 1; got {psd_tol!r}")
    n, d = arr.shape
    sens, sigma = _sigma(d, eps, dlt, rel, cal)  # validates the classical range too
    gen = check_rng(rng)
    budget = ApproxDP(eps, dlt)
    charge(ledger, budget, "SSCP release (Analyze Gauss)", rel)
    warn_if_not_private(eps, "the SSCP matrix")

    lo = np.array([b[0] for b in bnds])
    hi = np.array([b[1] for b in bnds])
    scaled = (np.clip(arr, lo, hi) - lo) / (hi - lo)
    D = np.column_stack([np.ones(n), scaled])
    S = D.T @ D
    noisy = noisy_symmetric(S, sensitivity=sens, budget=budget, rng=gen, calibration=cal)
    privacy = PrivacyStatement(
        budget=budget, neighbouring=rel, mechanism=MECHANISM, source=SOURCE,
        seeded=is_seeded(rng),
        details={"sensitivity": sens, "sigma": sigma, "calibration": cal},
    )
    meta = {
        "epsilon": eps, "delta": dlt, "neighbouring": rel.value,
        "mechanism": "Analyze Gauss (Gaussian noise on the upper triangle of the [0,1]-scaled "
                     "SSCP with intercept column, mirrored)",
        "calibration": cal, "sensitivity": sens, "sigma": sigma,
        "n_noisy": float(noisy[0, 0]),
        "n_public": int(n) if rel is Neighbouring.REPLACE_ONE else None,
        "dpreg_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "seeded": is_seeded(rng),
    }
    return SSCPRelease(columns=cols, bounds=bnds, noisy_scaled=noisy, privacy=privacy,
                       metadata=meta, psd_tol=tol)
