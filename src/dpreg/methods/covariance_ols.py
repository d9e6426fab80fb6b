"""``covariance-ols``: OLS on a DP SSCP matrix released once with the Analyze Gauss mechanism
(Bain, D'Orazio, Sheffet & Vadhan; Dwork et al. 2014), with DP-aware standard errors.  Core:
:mod:`dpreg.covariance` (release, sweep OLS); estimator
:class:`dpreg.linear_model.CovarianceOLS`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from dpreg._source import ArraySource
from dpreg._spec import AuditCase, Choice, Integer, IntervalSupport, MethodSpec, Option, Release, ReleasePlan
from dpreg.covariance import plan_sscp, release_sscp_matrix, sscp_statistics
from dpreg.exceptions import InvalidInputError
from dpreg.methods._planning import first_order_cov
from dpreg.privacy import Neighbouring, check_neighbouring

__all__ = ["CovarianceOLSSpec", "SPECS"]


def _bootstraps(options: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    return options.get("se", "dp") != "plugin"


class CovarianceOLSSpec(MethodSpec):
    name = "covariance-ols"
    target = ('the OLS coefficients of the data clipped to the bounds (the sweep of a DP SSCP matrix)')
    algorithm = "OLS on an Analyze-Gauss DP SSCP matrix (Bain et al. 2014)"
    features = "any"
    delta = "always"
    guarantee = "(ε, δ)-DP"
    relation = "add-remove"
    takes_neighbouring = True
    min_rows = 2
    privacy_notes = ("sscp_release.md",)
    order = 100
    estimator = "dpreg.linear_model:CovarianceOLS"
    reads_columns = True
    harness = ("multivariate",)
    options = MappingProxyType({
        "neighbouring": Option(Choice("add-remove", "replace-one"), "add-remove",
                               "neighbouring relation the release is calibrated for"),
        "calibration": Option(Choice("analytic", "classical"), "analytic",
                              "Gaussian calibration of the release"),
        "se": Option(Choice("dp", "plugin", "noise-aware"), "dp", "standard errors"),
        "n_boot": Option(Integer(50, 10_000_000), 2000, "bootstrap replicates of the interval",
                         used_if=_bootstraps, when="with se='plugin' (no bootstrap)"),
    })
    interval = IntervalSupport(
        offered="parametric bootstrap of the SSCP release (default); plug-in on request",
        request="default")
    paper_options = MappingProxyType({"se": "plugin"})

    def plan(self, *, epsilon: float, delta: float | None, n: int | None,
             x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
             fit_intercept: bool, options: Mapping[str, Any]) -> ReleasePlan:
        """:func:`~dpreg.covariance.plan_sscp` of the regressors and the response (columns
        ``x0..x{k-1}, y``; the estimator's names when its feature names are not
        formula-safe), with the public n under replace-one only.  The OLS table
        (``fit_intercept``, ``se``, ``n_boot``) is post-processing of the release: checked
        here, it does not enter the plan's budget or noise."""
        o = self.check_options(options, fill=True)
        if delta is None:
            raise InvalidInputError("delta is required for method 'covariance-ols' (a value in "
                                    "(0, 1), e.g. 1e-6 or smaller than 1/n)")
        if y_bounds is None:
            raise InvalidInputError("y_bounds is required for method 'covariance-ols': public "
                                    "(lo, hi) bounds of the response; got None")
        rel = check_neighbouring(o["neighbouring"])
        cols = [f"x{j}" for j in range(len(x_bounds))] + ["y"]
        return plan_sscp(columns=cols, bounds=[*x_bounds, y_bounds], epsilon=epsilon,
                         delta=delta, neighbouring=rel, calibration=o["calibration"],
                         n=n if rel is Neighbouring.REPLACE_ONE else None)

    def statistics(self, X: np.ndarray, y: np.ndarray, plan: ReleasePlan) -> Any:
        """The exact [0, 1]-scaled SSCP of [X, y] (:func:`~dpreg.covariance.sscp_statistics`,
        the estimator's statistics step)."""
        cols = list(plan.options["columns"])
        src = ArraySource([np.asarray(X, dtype=float), np.asarray(y, dtype=float)], cols)
        return sscp_statistics(src, cols, plan.options["bounds"])

    def release(self, stats: Any, plan: ReleasePlan, rng: Any, *, seeded: bool = False
                ) -> Release:
        """:func:`~dpreg.covariance.release_sscp_matrix` (the draw and the privacy
        statement)."""
        return release_sscp_matrix(stats, plan, rng, seeded=seeded)

    def audit_cases(self) -> tuple[AuditCase, ...]:
        """The SSCP release (Analyze Gauss, add/remove) and the estimator's fit, ε = 1,
        δ = 1e-6, tested as the analytic μ-GDP."""
        from dpreg.privacy import GDP, gdp_mu

        claim = GDP(gdp_mu(1.0, 1e-6))
        return (
            AuditCase("sscp", "SSCP release (Analyze Gauss, add/remove), ε = 1, δ = 1e-06 "
                      "(analytic: μ-GDP)", claim, "sscp-core", pairs="design-add-remove"),
            AuditCase("CovarianceOLS", "CovarianceOLS.fit (add/remove), ε = 1, δ = 1e-6", claim,
                      "estimator", {"cls": "CovarianceOLS",
                                    "params": {"epsilon": 1.0, "delta": 1e-6, "se": "plugin"}},
                      "design-add-remove", kind="estimator",
                      output_names=("intercept", "x1", "x2")))

    def expected_cov(self, *, epsilon: float, delta: float | None, n: int,
                     x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
                     fit_intercept: bool, options: Mapping[str, Any]) -> Any:
        """The entry sd of the Analyze-Gauss release (scaled units) propagated to first order
        through OLS: Cov(β̂) = A⁻¹ Σ_w A⁻¹ with A = DᵀD of the design and
        Σ_w = σ²((1 + ‖β‖²)I + ββᵀ − diag β²)."""
        assert delta is not None
        # the release's own plan: its sensitivity and σ (scaled units; public inputs only)
        sigma = self.plan(epsilon=epsilon, delta=delta, n=n, x_bounds=x_bounds,
                          y_bounds=y_bounds, fit_intercept=fit_intercept,
                          options={k: v for k, v in options.items()
                                   if k in ("neighbouring", "calibration")}).noise["sscp"]
        # scaled design d = (1, u, v), u, v uniform on [0, 1], v independent: A = n·E[zzᵀ]
        k = len(x_bounds)
        M = np.full((k + 1, k + 1), 0.25)
        M[0, :] = M[:, 0] = 0.5
        M[0, 0] = 1.0
        for j in range(1, k + 1):
            M[j, j] = 1.0 / 3.0
        beta = np.zeros(k + 1)
        beta[0] = 0.5
        if not fit_intercept:  # regression through the origin on the scaled columns
            M, beta = M[1:, 1:], np.zeros(k)
        cov = first_order_cov(n * M, beta, sigma, sigma)
        wy = y_bounds[1] - y_bounds[0]
        wx = np.array([hi - lo for lo, hi in x_bounds])
        lo = np.array([b[0] for b in x_bounds])
        if fit_intercept:  # original: b_j = wy·β_j/wx_j, b_0 = lo_y + wy·(β_0 − Σ β_j lo_j/wx_j)
            T = np.zeros((k + 1, k + 1))
            T[0, 0] = wy
            T[0, 1:] = -wy * lo / wx
            T[1:, 1:] = np.diag(wy / wx)
        else:
            T = np.diag(wy / wx)
        return (T @ cov @ T.T, 0.0,
                "analytic (Analyze-Gauss entry sd, first-order propagation through OLS)")

    def expected_error(self, *, epsilon: float, delta: float | None, design: Any,
                       options: Mapping[str, Any], seed: int, detail: bool = True) -> Any:
        """:func:`~dpreg.methods._planning.sscp_ols_error` (with the interval rule's refusal
        probability)."""
        from dpreg.methods._planning import sscp_ols_error

        assert delta is not None
        return sscp_ols_error(design, epsilon=epsilon, delta=delta, options=options, seed=seed,
                              refusal_draws=200 if detail else 0)


SPECS = (CovarianceOLSSpec(),)
