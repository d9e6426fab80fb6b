"""``RegressionResults``: what every dpreg regression returns.

Vocabulary follows statsmodels (``params``, ``bse``, ``tvalues``, ``pvalues``,
``conf_int(alpha)``, ``summary()``), plus what a DP release must carry: the privacy statement
(budget, neighbouring relation, mechanism, source), the ⊥ flag and reason, and a plain-words
description of how the standard errors/intervals were obtained (``uncertainty``) -- a plug-in
standard error that ignores the privacy noise is always labelled as such.

A failed release (⊥) is a typed result: ``failed`` is True, ``reason`` says why, and reading
``params`` raises :class:`~dpreg.exceptions.MechanismFailure` instead of handing out numbers.

A result is frozen once built: its attributes cannot be set or deleted, and ``extra`` and
``bounds`` are read-only mappings.  :meth:`RegressionResults.replace` returns a new result with
some metadata changed (what the estimators, the dispatcher and ``auto`` add around a release).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from dpreg._json import jsonable, strict_jsonable
from dpreg._validation import check_probability
from dpreg._version import __version__
from dpreg.exceptions import DPRegError, MechanismFailure
from dpreg.privacy.neighbours import PrivacyStatement
from dpreg.privacy.notices import NOT_PRIVATE_NOTICE
from dpreg.privacy.units import describe_accounting, describe_requested

__all__ = ["RegressionResults", "Summary", "significance_code", "NoUncertaintyError"]


class FrozenDict(dict):  # type: ignore[type-arg]
    """A read-only dict (``extra`` and ``bounds`` of a result): every mutator raises
    ``TypeError``; copies (``dict(d)``, ``{**d}``) are ordinary dicts.  Pickles as its items."""

    def _readonly(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a RegressionResults is frozen: its mappings are read-only (build a new "
                        "result with .replace(...))")

    __setitem__ = __delitem__ = _readonly
    clear = pop = popitem = setdefault = update = _readonly  # type: ignore[assignment]
    __ior__ = _readonly  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        import copy

        return type(self)(copy.deepcopy(dict(self), memo))


class NoUncertaintyError(DPRegError):
    """The method has no valid standard error/interval at the requested level."""


def significance_code(p: float) -> str:
    """R's codes with right-closed cut points: *** <= 0.001 < ** <= 0.01 < * <= 0.05 < . <= 0.1."""
    if p is None or not math.isfinite(p):
        return ""
    for cut, code in ((0.001, "***"), (0.01, "**"), (0.05, "*"), (0.1, ".")):
        if p <= cut:
            return code
    return " "


def _as_series(values: Any, names: Sequence[str]) -> pd.Series:
    if isinstance(values, pd.Series):
        return values.astype(float).reindex(list(names))
    if isinstance(values, Mapping):
        return pd.Series({n: float(values[n]) for n in names}, dtype=float)
    arr = np.asarray(values, dtype=float).ravel()
    return pd.Series(arr, index=list(names), dtype=float)


def _frozen_bounds(bounds: Mapping[str, Any] | None) -> FrozenDict | None:
    return None if bounds is None else FrozenDict(
        {str(k): (float(v[0]), float(v[1])) for k, v in bounds.items()})


class RegressionResults:
    """Results of a DP regression.

    Parameters
    ----------
    params:
        Coefficients, ``"intercept"`` first when fitted, then the feature names.
    privacy:
        The :class:`~dpreg.privacy.PrivacyStatement` of the release.
    method:
        dpreg method name (e.g. ``"noisy-stats"``).
    bse:
        Standard errors (same index) or ``None`` when the method has none.
    df_resid:
        Residual degrees of freedom for t-based tests; ``None`` means normal (z) reference.
    intervals:
        Pre-computed intervals keyed by α (e.g. DP confidence intervals that consumed budget at
        fit time): ``{alpha: DataFrame(lower, upper)}``.
    interval_fn:
        Optional ``alpha -> DataFrame`` computing intervals by post-processing (no budget).
    uncertainty:
        Plain-words description of how ``bse``/intervals were obtained.
    ci_method:
        Short label of the interval construction ``conf_int`` uses (shown in the summary), e.g.
        ``"parametric bootstrap (studentized)"``; derived from what is available when omitted.
    bootstrap:
        The :class:`~dpreg.inference.dpci.ParametricBootstrap` behind a DP-aware interval
        (other constructions: ``bootstrap.conf_int(alpha, kind="percentile")``), or ``None``.
    nobs:
        Number of observations if public (``None`` when n itself is private).
    no_fit_statistics:
        Why the release has no R² or residual variance (the method's own words; raised by
        :attr:`rsquared` and friends when ``extra`` has none).
    failed, reason:
        ⊥ flag and explanation.
    extra:
        Method-specific released quantities (e.g. predictions at x_eval, noisy statistics).

    Notes
    -----
    The object is frozen after construction (setting an attribute raises ``AttributeError``;
    ``extra`` and ``bounds`` are read-only); :meth:`replace` builds a changed copy.
    """

    #: what :meth:`replace` may change: metadata around the release, not the release itself
    _REPLACEABLE = ("privacy", "method", "dep_var", "bounds", "extra", "nobs", "uncertainty",
                    "ci_method", "no_fit_statistics")

    def __init__(
        self,
        params: Any,
        *,
        names: Sequence[str] | None = None,
        privacy: PrivacyStatement,
        method: str,
        bse: Any = None,
        df_resid: float | None = None,
        intervals: Mapping[float, pd.DataFrame] | None = None,
        interval_fn: Callable[[float], pd.DataFrame] | None = None,
        uncertainty: str = "none: this method releases point estimates only",
        nobs: int | None = None,
        dep_var: str = "y",
        failed: bool = False,
        reason: str = "",
        extra: Mapping[str, Any] | None = None,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        ci_method: str | None = None,
        bootstrap: Any = None,
        no_fit_statistics: str | None = None,
    ) -> None:
        if names is None:
            names = list(params.index) if isinstance(params, pd.Series) else (
                list(params) if isinstance(params, Mapping) else
                [f"x{i}" for i in range(np.asarray(params).size)])
        self._names = [str(n) for n in names]
        self._params = _as_series(params, self._names) if not failed else pd.Series(
            np.nan, index=self._names, dtype=float)
        self._bse = None if bse is None else _as_series(bse, self._names)
        self.df_resid = df_resid
        self._intervals = {float(a): df for a, df in (intervals or {}).items()}
        self._interval_fn = interval_fn
        self._fn_cache: dict[float, pd.DataFrame] = {}
        self.uncertainty = uncertainty
        self.no_fit_statistics = no_fit_statistics
        self._ci_method = ci_method
        self.bootstrap = bootstrap
        self.privacy = privacy
        self.method = method
        self.nobs = nobs
        self.dep_var = dep_var
        self.failed = bool(failed)
        self.reason = reason
        self.extra = FrozenDict(extra or {})
        #: the public bounds the release used (column -> (lo, hi)), when known
        self.bounds = _frozen_bounds(bounds)
        self.version = __version__
        object.__setattr__(self, "_frozen", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_frozen", False):
            raise AttributeError(f"a RegressionResults is frozen: cannot set {name!r} (build a new "
                                 "result with .replace(...))")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a RegressionResults is frozen: cannot delete {name!r}")

    def replace(self, **changes: Any) -> RegressionResults:
        """A new result equal to this one but for ``changes``: ``privacy``, ``method``,
        ``dep_var``, ``bounds``, ``extra``, ``nobs``, ``uncertainty`` or ``ci_method`` (the
        metadata around the release).  The estimates, intervals and the ⊥ flag are the
        release's own and cannot be replaced.  Post-processing: no budget."""
        unknown = sorted(set(changes) - set(self._REPLACEABLE))
        if unknown:
            raise TypeError(f"replace() cannot change {unknown}; it changes only "
                            f"{list(self._REPLACEABLE)}")
        new = object.__new__(type(self))
        state = dict(vars(self))  # shallow: the copy shares the release's interval cache, so a
        # random interval construction gives one answer for the release, whichever copy asks
        if "bounds" in changes:
            changes["bounds"] = _frozen_bounds(changes["bounds"])
        if "extra" in changes:
            changes["extra"] = FrozenDict(changes["extra"] or {})
        if "ci_method" in changes:
            state["_ci_method"] = changes.pop("ci_method")
        state.update(changes)
        vars(new).update(state)
        return new

    # ------------------------------------------------------------------ numbers
    def _guard(self) -> None:
        if self.failed:
            raise MechanismFailure(self.reason or "the mechanism returned ⊥")

    @property
    def params(self) -> pd.Series:
        self._guard()
        return self._params.copy()

    @property
    def bse(self) -> pd.Series:
        self._guard()
        if self._bse is None:
            return pd.Series(np.nan, index=self._names, dtype=float)
        return self._bse.copy()

    @property
    def has_bse(self) -> bool:
        return self._bse is not None and not self.failed

    @property
    def ci_method(self) -> str:
        """How :meth:`conf_int` builds intervals (the label shown in the summary)."""
        if self._ci_method:
            return self._ci_method
        if self._interval_fn is not None:
            return "post-processing interval function (see Uncertainty)"
        if self._bse is not None:
            ref = f"t({self.df_resid:g})" if self.df_resid else "normal"
            return f"Wald: coef ± {ref} quantile × std err (see Uncertainty)"
        if self._intervals:
            levels = ", ".join(f"{1 - a:g}" for a in self._intervals)
            return f"computed at fit time (level {levels} only)"
        return "none"

    @property
    def tvalues(self) -> pd.Series:
        return self.params / self.bse

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided p-values of H0: coefficient = 0 (NaN where no standard error exists)."""
        t = self.tvalues.abs()
        if self.df_resid is not None and self.df_resid > 0:
            p = 2.0 * stats.t.sf(t, self.df_resid)
        else:
            p = 2.0 * stats.norm.sf(t)
        return pd.Series(p, index=self._names, dtype=float)

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """(1 − α) intervals: DataFrame with columns ``lower``, ``upper``.

        Uses, in order: intervals computed at fit time for this α, the method's
        post-processing interval function, or ``params ± q·bse`` (t with ``df_resid`` or
        normal).  Raises :class:`NoUncertaintyError` when none exists.
        """
        self._guard()
        alpha = check_probability(alpha, "alpha")
        for a, df in self._intervals.items():
            if math.isclose(a, alpha, rel_tol=0, abs_tol=1e-12):
                return df.copy()
        if self._interval_fn is not None:
            key = round(alpha, 12)
            if key not in self._fn_cache:  # a random construction must not change between calls
                self._fn_cache[key] = self._interval_fn(alpha)
            return self._fn_cache[key].copy()
        if self._bse is not None:
            q = (stats.t.ppf(1 - alpha / 2, self.df_resid) if self.df_resid
                 else stats.norm.ppf(1 - alpha / 2))
            return pd.DataFrame({"lower": self._params - q * self._bse,
                                 "upper": self._params + q * self._bse})
        avail = ", ".join(f"{a:g}" for a in self._intervals) or "none"
        raise NoUncertaintyError(
            f"{self.method} has no valid confidence interval at alpha={alpha:g} "
            f"(intervals computed at fit time for alpha: {avail}; uncertainty: {self.uncertainty})"
        )

    def excludes_estimate(self, alpha: float = 0.05) -> list[str]:
        """Names of the parameters whose (1 − α) interval (:meth:`conf_int`) excludes the
        released point estimate -- at any α, not only the level checked at fit time.  It can
        happen where the interval is for another quantity than the point (AdaSSP's interval is
        for the un-shrunk coefficient, its estimate is shrunk by λ) or is a separate release
        (the Theil-Sen slope interval).  Post-processing of released values; the summary shows
        it as a ``Note`` row at its α and ``dpreg fit --json`` as ``ci.excludes_estimate``.
        Raises :class:`NoUncertaintyError` where there is no interval."""
        ci = self.conf_int(alpha)
        p = self._params
        out = (p < ci["lower"]) | (p > ci["upper"])
        return [str(k) for k, v in out.items() if bool(v)]

    def predict(self, X: Any) -> np.ndarray:
        """Linear predictions for rows of X (columns in the order of the non-intercept params)."""
        p = self.params
        coef = p.drop("intercept") if "intercept" in p.index else p
        intercept = float(p["intercept"]) if "intercept" in p.index else 0.0
        arr = np.asarray(X, dtype=float)
        if arr.ndim == 1:
            arr = arr.reshape(-1, 1) if coef.size == 1 else arr.reshape(1, -1)
        return arr @ coef.to_numpy() + intercept

    # ------------------------------------------------------------------ fit and predictions
    @staticmethod
    def _no_uncertainty(text: str) -> NoUncertaintyError:
        """The error the views of a result (predictions, plots) raise when the release lacks
        what they need (they do not import this module: no cycle)."""
        return NoUncertaintyError(text)

    def _conf_int_or_none(self, alpha: float) -> pd.DataFrame | None:
        """:meth:`conf_int`, or None when the release has no interval at ``alpha``."""
        try:
            return self.conf_int(alpha)
        except NoUncertaintyError:
            return None

    def _fit_statistic(self, key: str, what: str) -> float:
        self._guard()
        value = self.extra.get(key)
        if value is None:
            why = self.no_fit_statistics or \
                f"{self.method} releases no residual or total sum of squares"
            raise NoUncertaintyError(f"{self.method} has no {what}: {why}")
        return float(value)

    @property
    def rsquared(self) -> float:
        """R² computed from the released statistics only (post-processing; which methods have
        one, and how: :mod:`dpreg.inference.prediction`).  Raises :class:`NoUncertaintyError`
        (saying why) when the release carries no sum of squares; NaN when the noisy total sum
        of squares is not positive."""
        return self._fit_statistic("rsquared", "R² (rsquared)")

    @property
    def rsquared_adj(self) -> float:
        """Adjusted R², 1 − (1 − R²)(n − 1)/df_resid, from the released statistics (as
        :attr:`rsquared`)."""
        return self._fit_statistic("rsquared_adj", "adjusted R² (rsquared_adj)")

    def get_prediction(self, x: Any) -> Any:
        """Predictions at new points ``x`` as a
        :class:`~dpreg.inference.prediction.PredictionResults` (statsmodels' names:
        ``predicted_mean``, ``se_mean``, ``se_obs``, ``conf_int(alpha, obs=False)``,
        ``summary_frame(alpha)``).  ``x``: a DataFrame with the regressors as columns, a
        mapping, or an array with the regressors in the order of the non-intercept
        coefficients.  Post-processing of the release: no budget.  The intervals exist where
        the release is DP-aware (a parametric bootstrap: noisy-stats and adassp with
        ``inference``, covariance-ols); elsewhere they raise :class:`NoUncertaintyError`."""
        self._guard()
        from dpreg.inference.prediction import PredictionResults, design_rows

        W, labels = design_rows(x, self._names)
        return PredictionResults(self, W, labels)

    def plot(self, alpha: float = 0.05, *, ax: Any = None, include_intercept: bool = True
             ) -> Any:
        """Coefficients with their DP-aware (1 − α) intervals (matplotlib); returns the Axes.

        ``ax``: draw into these Axes (default: a new figure).  Intervals come from
        :meth:`conf_int`; a method without one is drawn as points and says so in the title; an
        interval flagged unreliable (``extra['dp_ci_reliable']`` False) is drawn dashed.
        ``include_intercept=False`` leaves the intercept out (it is often on another scale)."""
        self._guard()
        from dpreg.inference.plots import plot_coefficients

        return plot_coefficients(self, alpha=alpha, ax=ax, include_intercept=include_intercept)

    # ------------------------------------------------------------------ export
    def to_dict(self) -> dict[str, Any]:
        """Plain-Python, strict-JSON form (``json.dumps(..., allow_nan=False)`` works): every
        non-finite number is ``None`` -- an infinite ε (``private`` is then False and
        ``notice`` says NOT PRIVATE), a standard error or statistic that does not exist."""
        out: dict[str, Any] = {
            "method": self.method,
            "failed": self.failed,
            "reason": self.reason,
            "private": self.privacy.private,
            "notice": self.privacy.as_dict()["notice"],
            "privacy": self.privacy.as_dict(),
            "nobs": self.nobs,
            "uncertainty": self.uncertainty,
            "ci_method": self.ci_method,
            "bounds": self.bounds,
            "dpreg_version": self.version,
        }
        if self.failed:
            out.update(coef=None, intercept=None, bse=None)
            return strict_jsonable(out)  # type: ignore[no-any-return]
        p = self._params
        out["intercept"] = float(p["intercept"]) if "intercept" in p.index else 0.0
        out["coef"] = {k: float(v) for k, v in p.items() if k != "intercept"}
        out["bse"] = None if self._bse is None else {k: float(v) for k, v in self._bse.items()}
        # from the released statistics where the release has them (None otherwise)
        out["rsquared"] = self.extra.get("rsquared")
        out["df_resid"] = self.df_resid
        out["extra"] = {k: jsonable(v) for k, v in self.extra.items()}
        return strict_jsonable(out)  # type: ignore[no-any-return]

    def summary(self, alpha: float | None = None) -> Summary:
        """Printable summary; ``alpha`` defaults to the level of intervals computed at fit
        time (if any), else 0.05."""
        if alpha is None:
            alpha = next(iter(self._intervals), 0.05) if len(self._intervals) == 1 else 0.05
        return Summary(self, alpha)

    def __repr__(self) -> str:
        if self.failed:
            return f"<RegressionResults {self.method}: FAILED (⊥): {self.reason}>"
        coefs = ", ".join(f"{k}={v:.4g}" for k, v in self._params.items())
        shown = describe_requested(self.privacy.requested, self.privacy.budget)
        return f"<RegressionResults {self.method}: {coefs}; {shown}>"


def _integrity_text(checked: Mapping[str, Any]) -> str:
    """The ``Release file`` row: how the file's integrity record checked out."""
    status = str(checked.get("status", ""))
    head = {"verified-hmac": "verified (HMAC-SHA256)",
            "verified-pinned": "verified (expected SHA-256 digest)",
            "verified-digest": "digest matches (unkeyed SHA-256)",
            "no-record": "UNVERIFIED (no integrity record)"}.get(status, "UNVERIFIED")
    dig = checked.get("digest")
    return head + (f"; sha256 {str(dig)[:16]}..." if dig else "")


@dataclass
class Summary:
    """Printable summary: ``str()`` / ``as_text()``, ``_repr_html_()`` / ``as_html()``,
    ``as_latex()``."""

    results: RegressionResults
    alpha: float = 0.05

    # --------------------------------------------------------------- content
    def header(self) -> list[tuple[str, str]]:
        r = self.results
        priv = r.privacy
        rows = [
            ("Dep. variable", r.dep_var),
            ("Method", f"{r.method} ({priv.mechanism})"),
            ("Privacy budget", describe_requested(priv.requested, priv.budget)
             + ("" if priv.private else "  NOT PRIVATE")),
            *((("Accounting", acc),) if (acc := describe_accounting(priv.requested, priv.budget))
              else ()),
            ("Neighbouring", str(priv.neighbouring)),
            *(("Ledger charge", str(c)) for c in priv.charges),
            ("No. observations", "private" if r.nobs is None else str(r.nobs)),
            self._bounds_row(),
            *((("Estimates", str(r.extra["target"])),) if r.extra.get("target") else ()),
            ("Uncertainty", r.uncertainty),
            *self._fit_rows(),
            *((("Interval method", r.ci_method),) if r._ci_method else ()),
            *self._exclusion_rows(),
            ("Randomness", priv.randomness_description),
            ("Source", priv.source or "-"),
            ("dpreg", r.version),
        ]
        if r.failed:
            rows.insert(1, ("Status", f"FAILED (⊥): {r.reason}"))
        if not priv.private:
            rows.insert(0, ("WARNING", NOT_PRIVATE_NOTICE))
        checked = r.extra.get("release_integrity")  # a regression on a release file
        if isinstance(checked, Mapping):
            rows.append(("Release file", _integrity_text(checked)))
            if not checked.get("verified"):
                why = " (no integrity record)" if checked.get("status") == "no-record" else ""
                rows.insert(0, ("WARNING", f"UNVERIFIED release file{why}: "
                                + str(checked.get("detail", ""))))
        tied = r.extra.get("ci_point_mass")  # Theil-Sen: the release rule for tied slopes
        if isinstance(tied, Mapping) and any(tied.values()):
            rows.insert(0, ("WARNING TIES", "the slope interval of "
                            + ", ".join(str(k) for k, v in tied.items() if v)
                            + " lies within 2θ of 0: many pairwise slopes are exactly 0 (few "
                            "response values); it estimates the median pairwise slope, not the "
                            "OLS slope (extra['ci_point_mass'])"))
        if r.extra.get("reliable", True) is False:  # bounds-free mode, allow_unreliable=True
            rows.insert(0, ("WARNING", "UNRELIABLE: fitted although the budget left after the "
                            "DP bounds was predicted too small for a useful release"))
        return rows

    def _fit_rows(self) -> list[tuple[str, str]]:
        """R² and residual df where the release carries them (computed from it)."""
        r = self.results
        r2 = r.extra.get("rsquared") if not r.failed else None
        if r2 is None:
            return []
        text = f"{float(r2):.4g}" if math.isfinite(float(r2)) else \
            "nan (the privacy noise dominates the released sums of squares)"
        df = f" (df_resid {r.df_resid:.6g})" if r.df_resid else ""
        return [("R-squared", f"{text}, from the released statistics{df}")]

    def _bounds_row(self) -> tuple[str, str]:
        """The bounds the release used; those proposed privately (``bounds="private"``: DP
        quantiles charged to the same budget) are marked, the others are public."""
        r = self.results
        if not r.bounds:
            return ("Public bounds", "not recorded")
        details = r.privacy.details if isinstance(r.privacy.details, Mapping) else {}
        auto = details.get("auto", {})
        private = set(auto.get("private_bounds") or {}) if isinstance(auto, Mapping) else set()
        derived = r.extra.get("derived_bounds") or {}  # from the raw columns' (formula terms)
        text = "; ".join(f"{k} in [{lo:g}, {hi:g}]" + (" (DP estimate)" if k in private else
                                                        " (derived)" if k in derived else "")
                         for k, (lo, hi) in r.bounds.items())
        return ("Bounds" if private else "Public bounds", text)

    def _exclusion_rows(self) -> list[tuple[str, str]]:
        """A ``Note`` row when an interval at this summary's α excludes its point estimate."""
        r = self.results
        if r.failed:
            return []
        try:
            names = r.excludes_estimate(self.alpha)
        except NoUncertaintyError:
            return []
        if not names:
            return []
        return [("Note", f"the {1 - self.alpha:.0%} interval of {', '.join(names)} excludes "
                         "the point estimate (the interval is for another quantity or is a "
                         "separate release: see Uncertainty)")]

    def table(self) -> pd.DataFrame | None:
        r = self.results
        if r.failed:
            return None
        lo_name, hi_name = f"[{self.alpha / 2:g}", f"{1 - self.alpha / 2:g}]"
        df = pd.DataFrame({"coef": r.params})
        stat_name = "t" if r.df_resid else "z"
        if r.has_bse:
            df["std err"] = r.bse
            df[stat_name] = r.tvalues
            df[f"P>|{stat_name}|"] = r.pvalues
        try:
            ci = r.conf_int(self.alpha)
            df[lo_name] = ci["lower"]
            df[hi_name] = ci["upper"]
        except NoUncertaintyError:
            pass
        if r.has_bse:
            df[""] = [significance_code(p) for p in r.pvalues]
        return df

    # --------------------------------------------------------------- renderers
    def as_text(self) -> str:
        width = 78
        lines = ["=" * width, f"{'DP Regression Results':^{width}}", "=" * width]
        for k, v in self.header():
            if k in ("Accounting", "Ledger charge", "Estimates", "Note", "WARNING TIES"):  # wrapped
                import textwrap

                v = ("\n" + " " * 20).join(textwrap.wrap(v, width - 20))
            lines.append(f"{k + ':':<20}{v}")
        lines.append("-" * width)
        tab = self.table()
        if tab is None:
            lines.append("No estimates: the mechanism returned ⊥ (the budget stays spent).")
        else:
            lines.append(tab.to_string(float_format=lambda v: f"{v:.4g}"))
            if "" in tab.columns:
                lines.append("---")
                lines.append("Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1")
            if not self.results.has_bse:
                lines.append("(no standard errors: see Uncertainty above)")
        lines.append("=" * width)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return self.as_text()

    def as_html(self) -> str:
        head = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
            f"<td style='text-align:left'>{html.escape(v)}</td></tr>" for k, v in self.header()
        )
        tab = self.table()
        body = ("<p>No estimates: the mechanism returned ⊥.</p>" if tab is None
                else tab.to_html(float_format=lambda v: f"{v:.4g}", border=0,
                                 classes="dpreg-coef"))
        return (f"<div class='dpreg-summary'><h4>DP Regression Results</h4>"
                f"<table class='dpreg-header'>{head}</table>{body}</div>")

    def _repr_html_(self) -> str:
        return self.as_html()

    def as_latex(self) -> str:
        tab = self.table()
        out = ["\\begin{table}[ht]", "\\centering"]
        priv = self.results.privacy
        cap = f"{self.results.method}: {describe_requested(priv.requested, priv.budget)}, " \
              f"{self.results.privacy.neighbouring} neighbours"
        if not self.results.privacy.private:
            cap = f"NOT PRIVATE (epsilon = inf) -- {cap}"
        out.append(f"\\caption{{{_tex(cap)}}}")
        if tab is None:
            out.append("Mechanism returned $\\bot$.")
        else:
            cols = list(tab.columns)
            out.append("\\begin{tabular}{l" + "r" * len(cols) + "}")
            out.append("\\hline")
            out.append(" & ".join([""] + [_tex(c) for c in cols]) + " \\\\")
            out.append("\\hline")
            for name, row in tab.iterrows():
                cells = [_tex(str(name))]
                for c in cols:
                    v = row[c]
                    cells.append(_tex(v) if isinstance(v, str) else f"{v:.4g}")
                out.append(" & ".join(cells) + " \\\\")
            out.append("\\hline")
            out.append("\\end{tabular}")
        out.append("\\end{table}")
        return "\n".join(out)


def _tex(s: str) -> str:
    rep = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#",
           "_": "\\_", "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}", "^": "\\^{}",
           "|": "$|$", "<": "$<$", ">": "$>$"}
    return "".join(rep.get(ch, ch) for ch in str(s))
