"""``adassp`` and ``boosted-adassp``: adaptive sufficient-statistics perturbation (Wang 2018)
and its boosted version (Tang et al. 2023), with Gaussian-DP accounting.  Cores:
:mod:`dpreg.multivariate.ssp`, :mod:`dpreg.multivariate.boosted`; estimators
:class:`dpreg.linear_model.AdaSSP`, :class:`~dpreg.linear_model.BoostedAdaSSP`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from dpreg._spec import (
    AnyOf,
    Anything,
    Choice,
    Flag,
    Integer,
    IntervalSupport,
    MethodSpec,
    Option,
    Real,
)
from dpreg.methods._planning import first_order_cov, scaling_transform
from dpreg.multivariate import boosted, ssp


def _with_inference(options: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    return options.get("inference", "auto") is not False


__all__ = ["AdaSSPSpec", "BoostedAdaSSPSpec", "SPECS"]

_RELATION = Option(Choice("add-remove", "replace-one"), "add-remove",
                   "neighbouring relation the release is calibrated for")
_FAILURE = Option(Real(0.0, 1.0, closed="neither"), 0.05,
                  "failure probability of the λ_min lower bound (Wang's ρ)")


class AdaSSPSpec(MethodSpec):
    name = "adassp"
    target = ('the OLS coefficients of the data clipped to the bounds, shrunk toward 0 by the ridge '
              'term λ that AdaSSP chooses privately (a bias that can dominate its error at small n·ε)')
    algorithm = "AdaSSP (Wang 2018)"
    features = "any"
    delta = "always"
    guarantee = "(ε, δ)-DP via ρ-zCDP"
    relation = "add-remove"
    takes_neighbouring = True
    min_rows = 2
    privacy_notes = ("adassp.md",)
    order = 70
    estimator = "dpreg.linear_model:AdaSSP"
    reads_columns = True
    harness = ("multivariate",)
    options = MappingProxyType({
        "neighbouring": _RELATION,
        "failure_prob": _FAILURE,
        "inference": Option(AnyOf(Choice("auto"), Flag()), "auto",
                            "release yᵀy for the DP-aware interval (same budget)"),
        "n_boot": Option(Integer(50, 10_000_000), 2000, "bootstrap replicates of the interval",
                         used_if=_with_inference, when="with inference=False (no interval)"),
        "calibration": Option(Choice("gdp", "wang"), "gdp",
                              "exact μ-GDP calibration or Wang's constants"),
        "lambda_rule": Option(Choice("wang", "eigen-floor"), "wang",
                              "Wang's ridge from a released λ_min, or the eigenvalue floor of the "
                              "noisy XᵀX (no λ_min release)"),
        "floor_scale": Option(Real(0.0, None, closed="neither"), ssp.EIGEN_FLOOR_SCALE,
                              "eigen-floor: the floor in units of σ_XX·√(d+1)",
                              used_if=lambda o, c: o.get("lambda_rule") == "eigen-floor",
                              when="with lambda_rule='wang' (it sets the eigenvalue floor)"),
    })
    interval = IntervalSupport(
        offered="parametric bootstrap with inference=True (adds a noisy yᵀy from the same "
                "budget); else none",
        missing=ssp.NO_INTERVAL, fit_statistics=ssp.NO_FIT_STATISTICS,
        request="inference")
    paper_options = MappingProxyType({"inference": False})  # Wang 2018: no yᵀy

    def fit_unit_ball(self, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float,
                      rng: Any, params: Mapping[str, Any]) -> Any:
        return ssp.adassp(X, y, x_norm_bound=1.0, y_bound=1.0, epsilon=epsilon, delta=delta,
                          rng=rng, **{"inference": False, **params})

    def budget(self, *, epsilon: float, delta: float | None, options: Mapping[str, Any],
               n_features: int = 1) -> Any:
        """The charge of :func:`~dpreg.multivariate.ssp.adassp_budget` (the same with or
        without the interval release; ``inference="auto"`` counts as on)."""
        from dpreg._validation import check_delta, check_epsilon
        from dpreg.exceptions import InvalidInputError
        from dpreg.multivariate.ssp import adassp_budget

        if delta is None:
            raise InvalidInputError("delta is required for method 'adassp' (a value in (0, 1), "
                                    "e.g. 1e-6 or smaller than 1/n)")
        return adassp_budget(check_epsilon(epsilon), check_delta(delta, allow_zero=False),
                             calibration=str(options.get("calibration", "gdp")),
                             inference=bool(options.get("inference", "auto")),
                             lambda_rule=str(options.get("lambda_rule", "wang"))).charged

    def max_epsilon(self, *, delta: float | None, options: Mapping[str, Any]) -> float:
        if options.get("calibration") == "wang":
            from dpreg.multivariate.ssp import adassp_max_epsilon

            return adassp_max_epsilon(delta or 1e-6)
        return math.inf

    def expected_cov(self, *, epsilon: float, delta: float | None, n: int,
                     x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
                     fit_intercept: bool, options: Mapping[str, Any]) -> Any:
        """First-order propagation of Wang's Gaussian XᵀX and Xᵀy noise (the estimator's own
        split and sensitivities) with the ridge λ at its value for the design's λ_min."""
        from dpreg.mechanisms.gaussian import gaussian_sigma
        from dpreg.mechanisms.sensitivity import (
            gram_sensitivity,
            lambda_min_sensitivity,
            xty_sensitivity,
        )
        from dpreg.multivariate._common import PublicScaling
        from dpreg.multivariate.ssp import adassp_budget
        from dpreg.privacy import check_neighbouring

        assert delta is not None
        rel = check_neighbouring(options.get("neighbouring", "add-remove"))
        fail = float(options.get("failure_prob", 0.05))
        sc = PublicScaling.from_bounds(x_bounds, y_bounds, fit_intercept=fit_intercept)
        p = sc.n_columns
        bnd, cbd = sc.row_norm_bound, 1.0
        # the estimator's own split (the interval release, on by default, takes 10% of it)
        infer = options.get("inference", "auto") not in (False, "false")
        plan = adassp_budget(epsilon, delta, calibration=str(options.get("calibration", "gdp")),
                             inference=infer,
                             lambda_rule=str(options.get("lambda_rule", "wang")))
        part = dict(zip(plan.releases, plan.parts))
        sd_xx = gaussian_sigma(gram_sensitivity(bnd, rel), part["XtX"])
        sd_xy = gaussian_sigma(xty_sensitivity(bnd, cbd, rel), part["Xty"])
        # design: z = (1, u) with u uniform on [-1, 1]^d: E[zzᵀ] = diag(1, 1/3, ...)
        diag = np.full(p, 1.0 / 3.0)
        if fit_intercept:
            diag[0] = 1.0
        A = n * np.diag(diag)
        if "lambda_min" in part:
            sd_lam = gaussian_sigma(lambda_min_sensitivity(bnd, rel), part["lambda_min"])
            lam_lower = max(0.0, float(A.diagonal().min())
                            - sd_lam * math.sqrt(math.log(6.0 / delta)))
            lam = max(0.0, sd_xx * math.sqrt(p * math.log(2.0 * p * p / fail)) - lam_lower)
        else:  # the eigenvalue floor: a ridge only where the design's eigenvalues are below it
            f = float(options.get("floor_scale", ssp.EIGEN_FLOOR_SCALE))
            lam = max(0.0, f * sd_xx * math.sqrt(p) - float(A.diagonal().min()))
        cov = first_order_cov(A + lam * np.eye(p), np.zeros(p), sd_xx, sd_xy)
        T = scaling_transform(sc)
        return (T @ cov @ T.T, 0.0,
                "analytic (Wang's noise scales, first-order propagation, ridge λ of the design)")


    def expected_error(self, *, epsilon: float, delta: float | None, design: Any,
                       options: Mapping[str, Any], seed: int, detail: bool = True) -> Any:
        """:func:`~dpreg.methods._planning.adassp_error` for the λ rule these options select
        (the spec's own default when not given)."""
        from dpreg.methods._planning import adassp_error

        assert delta is not None
        opts = {k: options.get(k, o.default) for k, o in self.options.items()}
        return adassp_error(design, epsilon=epsilon, delta=delta, options=opts,
                            lambda_rule=str(opts["lambda_rule"]),
                            floor_scale=float(opts["floor_scale"]), seed=seed)


class BoostedAdaSSPSpec(MethodSpec):
    name = "boosted-adassp"
    target = ('the OLS coefficients of the data clipped to the bounds, approached by boosting rounds '
              'of ridge-regularised AdaSSP (shrinkage bias where the rounds stop short)')
    algorithm = "BoostedAdaSSP (Tang et al. 2023)"
    features = "any"
    delta = "always"
    guarantee = "(ε, δ)-DP via μ-GDP"
    relation = "add-remove"
    takes_neighbouring = True
    min_rows = 2
    privacy_notes = ("boosted_adassp.md",)
    order = 80
    estimator = "dpreg.linear_model:BoostedAdaSSP"
    reads_columns = True  # every round a pass over the frame's columns, in memory
    harness = ("multivariate",)
    needs_rows = ("each of its boosting rounds is a pass over the rows at the current estimate "
                  "(residuals), so it needs the rows, not one set of sums")
    options = MappingProxyType({
        "n_rounds": Option(Integer(1, 100_000), 100, "boosting rounds T"),
        "tau": Option(Real(0.0, None, closed="neither"), 1.0, "residual clip τ"),
        "x_norm_bound": Option(Real(0.0, None, closed="neither"), 1.0,
                               "row-norm bound of the scaled design"),
        "split": Option(Anything("'equal', 'author' or three positive numbers (a, b, c)"),
                        "author", "budget ratio of XᵀX, the rounds and λ_min"),
        "learning_rate": Option(Real(0.0, None, closed="neither"), 1.0, "step size"),
        "schedule": Option(Choice("constant", "1/t", "1/sqrt(t)"), "constant", "step schedule"),
        "lambda_rule": Option(Choice("wang", "literal"), "wang", "ridge rule"),
        "neighbouring": _RELATION,
        "failure_prob": _FAILURE,
    })
    interval = IntervalSupport(
        missing=boosted.NO_INTERVAL, fit_statistics=boosted.NO_FIT_STATISTICS)

    def fit_unit_ball(self, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float,
                      rng: Any, params: Mapping[str, Any]) -> Any:
        return boosted.boosted_adassp(X, y, x_norm_bound=1.0, epsilon=epsilon, delta=delta,
                                      rng=rng, **{"tau": 1.0, **params})

    def budget(self, *, epsilon: float, delta: float | None, options: Mapping[str, Any],
               n_features: int = 1) -> Any:
        from dpreg._validation import check_delta, check_epsilon, check_int
        from dpreg.exceptions import InvalidInputError
        from dpreg.multivariate.boosted import boosted_budget, boosted_split

        if delta is None:
            raise InvalidInputError("delta is required for method 'boosted-adassp' (a value in "
                                    "(0, 1), e.g. 1e-6 or smaller than 1/n)")
        rounds = check_int(options.get("n_rounds", 100), "n_rounds", minimum=1,
                           maximum=100_000)
        return boosted_budget(check_epsilon(epsilon), check_delta(delta, allow_zero=False),
                              boosted_split(options.get("split", "author"), rounds),
                              rounds).charged


SPECS = (AdaSSPSpec(), BoostedAdaSSPSpec())
