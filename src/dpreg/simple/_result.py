"""Result types of the simple (one-x) suite.

:class:`SimpleRegressionResult` holds one release: a line (slope and intercept, plus the
predictions it was released as), or a slope alone (``theil_sen(..., estimand="slope")``), or
the failure symbol ⊥.  Reading numbers from a failed release raises
:class:`~dpreg.exceptions.MechanismFailure` instead of handing out NaN.

:class:`ConfidenceInterval` is a (1 − α) interval for the slope, optionally with a point
estimate that was released from the same budget.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpreg.exceptions import InvalidInputError, MechanismFailure
from dpreg.inference import RegressionResults
from dpreg.privacy.neighbours import PrivacyStatement

__all__ = ["SimpleRegressionResult", "ConfidenceInterval"]

_NO_SE = (
    "none: {method} releases point estimates only; no standard error that accounts for the "
    "privacy noise is attached (the OLS standard error of the same data would ignore it)"
)


def _release_rule_note(mass: float) -> str:
    """The uncertainty text's note on an interval offered by the release rule."""
    text = (". NOTE: offered by the interval rule on this release (its noisy Σ(x − x̄)² is at "
            "least 3 × its noise sd); the interval conditions on that")
    if mass > 0.0:
        text += (f", and {mass:.1%} of the posterior of Σ(x − x̄)² lies below the threshold, "
                 f"where the release says nothing about it: (1 − a) intervals with a/2 <= "
                 f"{mass:.1%} are set by that region and are uninformative (their width says "
                 f"so; extra['dp_ci_unidentified_mass'])")
    return text


@dataclass(frozen=True, eq=False)
class SimpleRegressionResult:
    """One release of a simple (one-x) regression.

    Attributes
    ----------
    method:
        dpreg method name (``"noisy-stats"``, ``"dp-intercept"``, ``"theil-sen-exp"``,
        ``"theil-sen-wide"``, ``"theil-sen-smooth"``, ``"dp-gd"``, ``"ols"``, ``"theil-sen"``).
    privacy:
        What the release cost and protects (budget, neighbouring relation, mechanism, source,
        whether the generator was seeded, mechanism details).
    released_slope, released_intercept, released_predictions:
        The released numbers (use :attr:`slope`, :attr:`intercept`, :attr:`predictions`,
        which refuse to read a failed release).  A slope-only release has
        ``released_intercept=None`` and no predictions.
    failed, reason:
        ⊥ flag and explanation.  ⊥ is itself a private output: the budget stays spent.
    n:
        Number of records (public under replace-one neighbours).
    extra:
        Further released quantities (e.g. noisy sufficient statistics) -- only ever values
        computed from the private outputs or public inputs.
    inference:
        What the DP-aware interval needs (released values, noise scales, public bounds and the
        seed of the post-processing simulation) when the release was made for inference
        (``noisy_stats(..., inference=True)``); ``None`` otherwise.
    no_interval, no_fit_statistics:
        Why the release carries no interval / no R² (its method's own explanation; shown by
        the converted result's ``uncertainty`` and its errors).
    """

    method: str
    privacy: PrivacyStatement
    released_slope: float | None = None
    released_intercept: float | None = None
    released_predictions: Mapping[float, float] = field(default_factory=dict)
    failed: bool = False
    reason: str = ""
    n: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    inference: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    #: why the release has no interval / no R² (the method's own words, set by its core)
    no_interval: str = field(default="", compare=False, repr=False)
    no_fit_statistics: str = field(default="", compare=False, repr=False)

    # ---------------------------------------------------------------- guarded access
    def _guard(self) -> None:
        if self.failed:
            raise MechanismFailure(self.reason or f"{self.method} returned ⊥")

    @property
    def slope(self) -> float:
        """Released slope (raises :class:`MechanismFailure` on ⊥)."""
        self._guard()
        assert self.released_slope is not None
        return float(self.released_slope)

    @property
    def intercept(self) -> float | None:
        """Released intercept, or ``None`` for a slope-only release."""
        self._guard()
        return None if self.released_intercept is None else float(self.released_intercept)

    @property
    def predictions(self) -> dict[float, float]:
        """Released predictions ``{x_eval: value}`` (empty for a slope-only release)."""
        self._guard()
        return {float(k): float(v) for k, v in self.released_predictions.items()}

    @property
    def has_line(self) -> bool:
        """True when both a slope and an intercept were released."""
        return (not self.failed) and self.released_intercept is not None

    def predict(self, x: Any) -> Any:
        """``intercept + slope · x`` (post-processing; no further privacy cost)."""
        self._guard()
        if self.released_intercept is None:
            raise InvalidInputError(
                f"{self.method} released a slope only (estimand='slope'); there is no "
                "intercept to predict with -- use estimand='predictions' to release a line"
            )
        arr = np.asarray(x, dtype=np.float64)
        out = self.released_intercept + self.released_slope * arr  # type: ignore[operator]
        return float(out) if out.ndim == 0 else out

    # ---------------------------------------------------------------- conversion
    def to_regression_results(self, x_name: str = "x", y_name: str = "y", *,
                              n_boot: int = 2000, kind: str = "percentile") -> RegressionResults:
        """The release as a :class:`~dpreg.inference.RegressionResults` (intercept, slope).

        A release made for inference (``noisy_stats(..., inference=True)``) carries DP-aware
        standard errors and parametric-bootstrap intervals (``n_boot`` replicates, interval
        construction ``kind``; post-processing).  Otherwise no standard errors are attached
        and the uncertainty text says why.  A slope-only release cannot be converted (it has
        no intercept).
        """
        names = ["intercept", str(x_name)]
        extra = dict(self.extra)
        no_se = self.no_interval or _NO_SE.format(method=self.method)
        no_fit = self.no_fit_statistics or None
        if self.failed:
            return RegressionResults(
                [math.nan, math.nan], names=names, privacy=self.privacy, method=self.method,
                uncertainty=no_se, nobs=self.n, dep_var=y_name,
                failed=True, reason=self.reason, extra=extra, ci_method="none",
                no_fit_statistics=no_fit,
            )
        if self.released_intercept is None:
            raise InvalidInputError(
                f"{self.method} released a slope only (estimand='slope'); a RegressionResults "
                "needs an intercept -- use estimand='predictions'"
            )
        extra["predictions"] = self.predictions
        params = [float(self.released_intercept), float(self.released_slope)]  # type: ignore[arg-type]
        if self.inference is not None:
            from dpreg.inference.dpci.engine import ParametricBootstrap
            from dpreg.inference.dpci.noisy_stats import NoisyStatsModel
            from dpreg.inference.prediction import simple_fit_statistics
            from dpreg.inference.uncertainty import bootstrap_kwargs, refusal_kwargs
            from dpreg.simple._interval_rule import interval_offer_threshold, interval_refusal

            spec = self.inference
            rel = spec["released"]
            # the interval rule (public n, ε, bounds and the release's own noisy nvar: post-
            # processing); an offered interval conditions on the event that offered it
            why = interval_refusal(spec["n"], spec["epsilon"], spec["x_bounds"],
                                   noisy_nvar=rel["nvar"], released=True)
            thr = 0.0 if why else interval_offer_threshold(spec["n"], spec["epsilon"],
                                                           spec["x_bounds"])
            model = NoisyStatsModel(released=rel, n=spec["n"], x_bounds=spec["x_bounds"],
                                    y_bounds=spec["y_bounds"], scales=spec["scales"],
                                    eps_intercept=spec["eps_intercept"], names=names,
                                    offer_threshold=thr)
            # R², σ̂² from the released statistics (post-processing)
            extra.update(simple_fit_statistics(ncov=rel["ncov"], nvar=rel["nvar"],
                                               nvar_y=rel["nvar_y"], n=spec["n"],
                                               sigma2=model.sigma2))
            if why:
                kw = refusal_kwargs(why, noise_ratio=model.noise_ratio)
                extra.update(kw.pop("extra_uncertainty"))
                return RegressionResults(params, names=names, privacy=self.privacy,
                                         method=self.method, nobs=self.n, dep_var=y_name,
                                         df_resid=spec["n"] - 2, extra=extra, **kw)
            boot = ParametricBootstrap(model, n_boot=n_boot, kind=kind, rng=spec["seed"])
            kw = bootstrap_kwargs(boot, what="the noisy ncov, nvar, nvar(y), x̄ and line")
            extra.update(kw.pop("extra_uncertainty"))
            extra["dp_ci_rule"] = "release" if thr > 0.0 else "public"
            if thr > 0.0:
                mass = model.unidentified_mass
                extra["dp_ci_unidentified_mass"] = mass
                kw["uncertainty"] += _release_rule_note(mass)
            return RegressionResults(params, names=names, privacy=self.privacy,
                                     method=self.method, nobs=self.n, dep_var=y_name,
                                     df_resid=spec["n"] - 2, extra=extra, **kw)
        return RegressionResults(
            params, names=names, privacy=self.privacy, method=self.method,
            uncertainty=no_se, nobs=self.n, dep_var=y_name, extra=extra, ci_method="none",
            no_fit_statistics=no_fit,
        )

    def __repr__(self) -> str:
        if self.failed:
            return f"<SimpleRegressionResult {self.method}: FAILED (⊥): {self.reason}>"
        parts = [f"slope={self.released_slope:.6g}"]
        if self.released_intercept is not None:
            parts.append(f"intercept={self.released_intercept:.6g}")
        return f"<SimpleRegressionResult {self.method}: {', '.join(parts)}; {self.privacy.budget}>"


@dataclass(frozen=True)
class ConfidenceInterval:
    """A (1 − α) confidence interval ``[low, high]`` for the slope.

    Unpacks like a pair (``low, high = ci``).  ``estimate`` is a point estimate released from
    the same budget when it was requested (``None`` otherwise).  ``details`` records the
    target quantiles, the null-variance bound and the per-call budgets.
    """

    low: float
    high: float
    alpha: float | None = None
    estimate: float | None = None
    method: str = ""
    privacy: PrivacyStatement | None = field(default=None, compare=False, repr=False)
    details: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __iter__(self) -> Iterator[float]:
        yield self.low
        yield self.high

    @property
    def width(self) -> float:
        return self.high - self.low

    @property
    def clipped(self) -> tuple[str, ...]:
        """Ends (``"lower"``/``"upper"``) that lie at the search/output range: there the
        interval is the public range, not a finding from the data."""
        return tuple(self.details.get("clipped", ()))

    @property
    def point_mass(self) -> bool:
        """True when the release rule for tied slopes flags this interval
        (:func:`dpreg.simple.ci.point_mass_flag`: it contains 0 and lies within 2θ of it, θ
        its public widening) -- the pairwise slopes pile up at exactly 0 (a response with few
        values) and the interval describes that pile.  False for intervals without the
        rule (non-Theil-Sen)."""
        return bool(self.details.get("point_mass", False))

    @property
    def informative(self) -> bool:
        """False when an end of the interval is the search range (see :attr:`clipped`)."""
        return not self.clipped

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, (int, float, np.floating, np.integer)):
            return False
        return bool(self.low <= float(value) <= self.high)
