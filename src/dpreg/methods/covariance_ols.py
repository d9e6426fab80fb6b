"""``covariance-ols``: OLS on a DP SSCP matrix released once with the Analyze Gauss mechanism
(Bain, D'Orazio, Sheffet & Vadhan; Dwork et al. 2014), with DP-aware standard errors.  Core:
:mod:`dpreg.covariance` (release, sweep OLS); estimator
:class:`dpreg.linear_model.CovarianceOLS`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from dpreg._spec import Choice, Integer, IntervalSupport, MethodSpec, Option
from dpreg.methods._planning import first_order_cov

__all__ = ["CovarianceOLSSpec", "SPECS"]


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
        "n_boot": Option(Integer(50, 10_000_000), 2000, "bootstrap replicates of the interval"),
    })
    interval = IntervalSupport(
        offered="parametric bootstrap of the SSCP release (default); plug-in on request",
        request="default")
    paper_options = MappingProxyType({"se": "plugin"})

    def expected_cov(self, *, epsilon: float, delta: float | None, n: int,
                     x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
                     fit_intercept: bool, options: Mapping[str, Any]) -> Any:
        """The entry sd of the Analyze-Gauss release (scaled units) propagated to first order
        through OLS: Cov(β̂) = A⁻¹ Σ_w A⁻¹ with A = DᵀD of the design and
        Σ_w = σ²((1 + ‖β‖²)I + ββᵀ − diag β²)."""
        from dpreg.covariance.calibration import analyze_gauss_sigma
        from dpreg.privacy import check_neighbouring

        assert delta is not None
        rel = check_neighbouring(options.get("neighbouring", "add-remove"))
        cal = str(options.get("calibration", "analytic"))
        d = len(x_bounds) + 1  # released columns: regressors and the response
        _, sigma = analyze_gauss_sigma(d, epsilon, delta, rel, cal)
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
