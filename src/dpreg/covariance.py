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
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, stats

from dpreg._json import jsonable
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
from dpreg.privacy.budgets import ApproxDP, Budget
from dpreg.privacy.ledger import charge
from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement, check_neighbouring

__all__ = [
    "release_sscp",
    "SSCPRelease",
    "sweep_regression",
    "repair_psd",
    "upscale",
    "noise_sd_matrix",
    "accuracy",
    "epsilon_for",
]

FORMAT = "dpreg-sscp-release"
FORMAT_VERSION = 1
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
        from formulaic import Formula
        from formulaic.errors import FormulaicError

        if not isinstance(formula, str) or "~" not in formula:
            raise InvalidInputError(
                f"formula must be a string like 'y ~ x1 + x2'; got {fmt(formula)}"
            )
        try:
            parsed = Formula(formula)
        except FormulaicError as exc:
            raise InvalidInputError(f"formula could not be parsed: {exc}") from None
        lhs = list(getattr(parsed, "lhs", []))
        rhs = list(getattr(parsed, "rhs", []))

        def single(term: Any) -> str | None:
            factors = list(term.factors)
            if len(factors) != 1:
                return None
            f = factors[0]
            if str(f.eval_method).endswith("LITERAL") and str(f.expr) == "1":
                return "1"
            if str(f.eval_method).endswith("LOOKUP"):
                return str(f.expr)
            return None

        if len(lhs) != 1 or single(lhs[0]) in (None, "1"):
            raise InvalidInputError(
                f"formula must have one released column on the left of '~'; got {formula!r}"
            )
        response = str(single(lhs[0]))
        regressors: list[str] = []
        intercept = False
        for term in rhs:
            name = single(term)
            if name is None:
                raise InvalidInputError(
                    f"formula may only use released columns as linear terms (no interactions, "
                    f"transformations or powers): {str(term)!r} in {formula!r}; released "
                    f"columns: {self.columns}"
                )
            if name == "1":
                intercept = True
            else:
                regressors.append(name)
        unknown = [c for c in [response] + regressors if c not in self.columns]
        if unknown:
            raise InvalidInputError(
                f"formula uses columns that were not released: {unknown}; released columns: "
                f"{self.columns}"
            )
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
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "columns": self.columns,
            "bounds": {c: list(b) for c, b in zip(self.columns, self.bounds)},
            "noisy_scaled": self.noisy_scaled.tolist(),
            "matrix": None if self.matrix is None else self.matrix.to_numpy().tolist(),
            "privacy": self.privacy.as_dict(),
            "metadata": jsonable(self.metadata),
        }

    def save(self, path: str | Path) -> Path:
        """Write the release (matrix, bounds, privacy statement, metadata) as JSON."""
        out = Path(path)
        out.write_text(json.dumps(self.to_dict(), indent=1, allow_nan=True))
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SSCPRelease:
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise InvalidInputError(
                f"not a dpreg SSCP release (expected format {FORMAT!r}); got "
                f"{fmt(data.get('format') if isinstance(data, Mapping) else data)}"
            )
        if int(data.get("format_version", 0)) > FORMAT_VERSION:
            raise InvalidInputError(
                f"format_version must be <= {FORMAT_VERSION} for this dpreg; got "
                f"{data.get('format_version')!r}"
            )
        cols = [str(c) for c in data["columns"]]
        bounds = [tuple(data["bounds"][c]) for c in cols]
        p = data["privacy"]
        privacy = PrivacyStatement(
            budget=Budget.from_dict(p["budget"]), neighbouring=check_neighbouring(
                p["neighbouring"]), mechanism=p["mechanism"], source=p.get("source", ""),
            seeded=bool(p.get("seeded", False)), details=dict(p.get("details", {})))
        meta = dict(data["metadata"])
        tol = float(meta.get("psd_tol", 1e-10))
        for key in ("psd_repaired", "eigenvalues_replaced", "failed", "reason", "psd_tol"):
            meta.pop(key, None)
        return cls(columns=cols, bounds=bounds,  # type: ignore[arg-type]
                   noisy_scaled=np.asarray(data["noisy_scaled"], dtype=float),
                   privacy=privacy, metadata=meta, psd_tol=tol)

    @classmethod
    def load(cls, path: str | Path) -> SSCPRelease:
        """Read a release written by :meth:`save`."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise InvalidInputError(f"path must be a readable SSCP release JSON file: {exc}"
                                    ) from None
        return cls.from_dict(data)


# --------------------------------------------------------------------------------------------
# the release
# --------------------------------------------------------------------------------------------
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
        budget=budget, neighbouring=rel, mechanism="Analyze Gauss SSCP", source=SOURCE,
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
