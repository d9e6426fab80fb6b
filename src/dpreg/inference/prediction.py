"""Goodness of fit and predictions from a DP release, in statsmodels' vocabulary.

:attr:`RegressionResults.rsquared <dpreg.inference.RegressionResults.rsquared>`,
``rsquared_adj`` and :meth:`~dpreg.inference.RegressionResults.get_prediction` are computed from
the *released* statistics only (post-processing, no budget):

=====================  ======================================================================
method                 R², residual variance σ̂², df_resid = n − p
=====================  ======================================================================
noisy-stats            with ``inference`` (the default ``"auto"``): R² = ncov~²/(nvar~·nvar_y~),
                       σ̂² = (nvar_y~ − ncov~²/nvar~)/(n − 2) (clamped as in the interval's
                       model), n public; plain release: no nvar(y), no R²
adassp                 with ``inference``: R² = 1 − RSS/TSS of the released coefficients on the
                       released XᵀX~, Xᵀy~, yᵀy~ (TSS centred with the ones column's noisy
                       count and Σy when there is an intercept), σ̂² of the interval's model; n
                       public (replace-one) or the noisy count (add/remove)
covariance-ols /       R² and σ̂² = RSS/(n − p) of the sweep OLS on the released SSCP matrix
SSCPRelease.regress    (n public or the noisy count)
other methods          none: the release has no residual or total sum of squares (each
                       result says why: ``RegressionResults.no_fit_statistics``)
=====================  ======================================================================

Noisy statistics can be inconsistent (e.g. a released residual sum of squares <= 0 when the
noise on yᵀy or nvar(y) exceeds it): R² is then NaN and a new observation has no interval
(:class:`~dpreg.inference.NoUncertaintyError` says so) rather than a number the noise made up.

Prediction intervals (:class:`PredictionResults`) need a DP-aware covariance of the
coefficients, i.e. a parametric-bootstrap release (``results.bootstrap``): the mean prediction
x₀ᵀβ̃ gets the bootstrap interval of that linear function (the same replicates as ``conf_int``)
and the standard error sqrt(x₀ᵀ Σ x₀) with Σ the analytic DP-aware covariance (sampling +
privacy noise); a new observation adds the error variance σ̂²: its interval widens each side of
the mean interval to sqrt(h² + (t_{df,1−α/2}·σ̂)²) (h the mean interval's half-width on that
side).  At ε = ∞ these are statsmodels' ``OLS(...).get_prediction(x)`` quantities (the standard
errors exactly, the intervals up to the bootstrap's Monte-Carlo error).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from dpreg._validation import check_probability
from dpreg.exceptions import InvalidInputError

__all__ = ["PredictionResults", "sscp_fit_statistics",
           "simple_fit_statistics", "design_rows"]

def _adjusted(r2: float, n: float, p: int, intercept: bool) -> float:
    df = n - p
    if not (math.isfinite(r2) and df > 0):
        return math.nan
    return 1.0 - (1.0 - r2) * ((n - 1.0) if intercept else n) / df


def simple_fit_statistics(*, ncov: float, nvar: float, nvar_y: float, n: int,
                          sigma2: float) -> dict[str, float]:
    """R², adjusted R² and σ̂² of a DPSuffStats release made with ``inference=True`` (one x
    and an intercept): R² = ncov~²/(nvar~·nvar_y~); NaN when the noisy statistics are
    inconsistent (a noisy variance <= 0 or R² >= 1: the privacy noise dominates them)."""
    r2 = math.nan
    if nvar > 0 and nvar_y > 0:
        value = ncov * ncov / (nvar * nvar_y)
        if value < 1.0:
            r2 = float(value)
    return {"rsquared": r2, "rsquared_adj": _adjusted(r2, n, 2, True), "s2": float(sigma2)}


def sscp_fit_statistics(*, xtx: np.ndarray, xty: np.ndarray, yty: float, theta: np.ndarray,
                        n: float, intercept_index: int | None) -> dict[str, float]:
    """R² and adjusted R² of coefficients ``theta`` on released second moments: RSS = yᵀy −
    2θᵀXᵀy + θᵀXᵀXθ and TSS = yᵀy − (Σy)²/n with an intercept (Σy = the Xᵀy entry of the ones
    column ``intercept_index``), else yᵀy (uncentred, as statsmodels without a constant).
    NaN when the noisy statistics are inconsistent (TSS <= 0 or RSS <= 0: the privacy noise
    dominates them)."""
    xtx = np.asarray(xtx, dtype=float)
    xty = np.asarray(xty, dtype=float)
    th = np.asarray(theta, dtype=float)
    rss = float(yty - 2.0 * th @ xty + th @ xtx @ th)
    if intercept_index is not None:
        tss = float(yty - xty[intercept_index] ** 2 / n) if n > 0 else math.nan
    else:
        tss = float(yty)
    r2 = float(1.0 - rss / tss) if tss > 0 and rss > 0 else math.nan
    return {"rsquared": r2,
            "rsquared_adj": _adjusted(r2, n, th.size, intercept_index is not None)}


def design_rows(x: Any, names: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """The rows (k, p) of the design at the new points ``x`` for coefficients ``names``
    (``"intercept"`` gets a column of ones) and the row labels.

    ``x``: a DataFrame with the regressors' names as columns, a mapping name -> value(s), a
    Series (one point) or an array (k, q) / (q,) / scalar with the regressors in the order of
    the non-intercept coefficients."""
    regs = [n for n in names if n != "intercept"]
    q = len(regs)
    labels: list[str] | None = None
    if isinstance(x, pd.DataFrame):
        missing = [c for c in regs if c not in x.columns]
        if missing:
            raise InvalidInputError(f"x must have the columns {regs}; missing {missing}")
        arr = x[regs].to_numpy(dtype=float)
        labels = [str(i) for i in x.index]
    elif isinstance(x, pd.Series):
        missing = [c for c in regs if c not in x.index]
        if missing:
            raise InvalidInputError(f"x must have the entries {regs}; missing {missing}")
        arr = x[regs].to_numpy(dtype=float).reshape(1, q)
    elif isinstance(x, Mapping):
        missing = [c for c in regs if c not in x]
        if missing:
            raise InvalidInputError(f"x must have the keys {regs}; missing {missing}")
        cols = [np.atleast_1d(np.asarray(x[c], dtype=float)) for c in regs]
        if len({c.size for c in cols}) > 1:
            raise InvalidInputError("x must give the same number of values for every regressor")
        arr = np.column_stack(cols)
    else:
        try:
            arr = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise InvalidInputError("x must be numeric (a DataFrame, a mapping or an array of "
                                    "the regressors)") from None
        if arr.ndim == 0:
            arr = arr.reshape(1, 1)
        elif arr.ndim == 1:
            arr = arr.reshape(-1, 1) if q == 1 else arr.reshape(1, -1)
        if arr.ndim != 2:
            raise InvalidInputError(f"x must be 2-D (rows of {q} regressors); got {arr.ndim}-D")
    if arr.shape[1] != q:
        raise InvalidInputError(f"x must have {q} columns ({regs}); got {arr.shape[1]}")
    if arr.shape[0] == 0 or not np.all(np.isfinite(arr)):
        raise InvalidInputError("x must hold at least one row of finite numbers")
    cols_out = []
    j = 0
    for n in names:
        if n == "intercept":
            cols_out.append(np.ones(arr.shape[0]))
        else:
            cols_out.append(arr[:, j])
            j += 1
    W = np.column_stack(cols_out)
    return W, labels if labels is not None else [str(i) for i in range(arr.shape[0])]


class PredictionResults:
    """Predictions of a DP regression at new points (statsmodels' ``PredictionResults``
    vocabulary): ``predicted_mean``, ``se_mean``, ``se_obs``, ``var_pred_mean``,
    ``var_resid``, ``df``, :meth:`conf_int` and :meth:`summary_frame`.

    Built by :meth:`RegressionResults.get_prediction`; everything is post-processing of the
    release.  The predicted mean always exists; the standard errors and intervals need a
    DP-aware (parametric-bootstrap) release and raise
    :class:`~dpreg.inference.NoUncertaintyError` otherwise, saying why.
    """

    def __init__(self, results: Any, exog: np.ndarray, row_labels: list[str]) -> None:
        self._results = results
        self.exog = exog
        self.row_labels = row_labels
        params = results.params.to_numpy()
        self.predicted_mean = exog @ params
        boot = results.bootstrap
        self._boot = boot if boot is not None and list(boot.names) == list(results._names) \
            else None
        self.df = results.df_resid
        self.method = results.method

    # ------------------------------------------------------------------ availability
    def _need_boot(self) -> Any:
        if self._boot is None:
            raise self._results._no_uncertainty(
                f"{self.method} has no DP-aware covariance of its coefficients, so its "
                f"predictions have no standard error or interval (uncertainty: "
                f"{self._results.uncertainty})")
        return self._boot

    def _resid_problem(self) -> str | None:
        """Why there is no interval for a new observation (None: there is one)."""
        s2 = self._results.extra.get("s2")
        if s2 is None or not self.df or self.df <= 0:
            return (f"{self.method}: the release has no residual variance, so there is no "
                    "interval for a new observation ("
                    + (self._results.no_fit_statistics or "it releases no sum of squares") + ")")
        if not (math.isfinite(float(s2)) and float(s2) > 0):
            return (f"{self.method}: the residual variance estimated from the release is not "
                    "positive (the privacy noise dominates the released sums of squares), so "
                    "there is no interval for a new observation; more ε or more rows would "
                    "give one")
        return None

    def _need_resid(self) -> tuple[float, float]:
        problem = self._resid_problem()
        if problem is not None:
            raise self._results._no_uncertainty(problem)
        return float(self._results.extra["s2"]), float(self.df)

    # ------------------------------------------------------------------ statsmodels names
    @property
    def var_pred_mean(self) -> np.ndarray:
        """DP-aware variance of the predicted mean: x₀ᵀ Σ x₀ (sampling + privacy noise)."""
        boot = self._need_boot()
        return np.maximum(np.einsum("ki,ij,kj->k", self.exog, boot.cov, self.exog), 0.0)

    @property
    def se_mean(self) -> np.ndarray:
        return np.sqrt(self.var_pred_mean)

    @property
    def var_resid(self) -> float:
        """The error variance σ̂² estimated from the release."""
        return self._need_resid()[0]

    @property
    def se_obs(self) -> np.ndarray:
        """Standard error of a new observation: sqrt(var_pred_mean + σ̂²)."""
        return np.sqrt(self.var_pred_mean + self.var_resid)

    def conf_int(self, alpha: float = 0.05, obs: bool = False) -> pd.DataFrame:
        """(1 − α) intervals (DataFrame ``lower``, ``upper``; one row per point): for the mean
        prediction (default; the parametric bootstrap of the release, as
        :meth:`RegressionResults.conf_int`), or with ``obs=True`` for a new observation (the
        mean interval widened by the error variance, see the module doc).

        As statsmodels' ``conf_int(obs=..., alpha=...)`` when called with keywords; the first
        positional argument is α, as in :meth:`RegressionResults.conf_int`."""
        a = check_probability(alpha, "alpha")
        if not isinstance(obs, (bool, np.bool_)):
            raise InvalidInputError(f"obs must be True or False; got {obs!r}")
        boot = self._need_boot()
        lo = np.empty(len(self.predicted_mean))
        hi = np.empty_like(lo)
        for k, w in enumerate(self.exog):
            _, lo[k], hi[k] = boot.linear_interval(w, alpha=a)
        if obs:
            s2, df = self._need_resid()
            q = float(stats.t.ppf(1.0 - a / 2.0, df)) * math.sqrt(s2)
            mean = self.predicted_mean
            lo = mean - np.sqrt((mean - lo) ** 2 + q * q)
            hi = mean + np.sqrt((hi - mean) ** 2 + q * q)
        return pd.DataFrame({"lower": lo, "upper": hi}, index=self.row_labels)

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """statsmodels' columns: ``mean``, ``mean_se``, ``mean_ci_lower``, ``mean_ci_upper``,
        ``obs_ci_lower``, ``obs_ci_upper`` (the ``obs`` columns are NaN when the release has
        no residual variance)."""
        mean_ci = self.conf_int(alpha)
        out = pd.DataFrame({"mean": self.predicted_mean, "mean_se": self.se_mean,
                            "mean_ci_lower": mean_ci["lower"].to_numpy(),
                            "mean_ci_upper": mean_ci["upper"].to_numpy()},
                           index=self.row_labels)
        if self._resid_problem() is None:
            obs_ci = self.conf_int(alpha, obs=True)
            out["obs_ci_lower"] = obs_ci["lower"].to_numpy()
            out["obs_ci_upper"] = obs_ci["upper"].to_numpy()
        else:
            out["obs_ci_lower"] = math.nan
            out["obs_ci_upper"] = math.nan
        return out

    def __repr__(self) -> str:
        return (f"<PredictionResults {self.method}: {len(self.predicted_mean)} point(s); "
                f"DP-aware intervals {'available' if self._boot is not None else 'not available'}>")
