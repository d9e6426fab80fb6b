"""Method name -> estimator/functional core, read from the method registry
(:mod:`dpreg._registry`): the engine behind ``regress``, the CLI and per-group fits for every
method but ``auto`` -- :func:`dpreg.api.fit_arrays` sends ``auto`` to :func:`dpreg.auto.fit_auto`,
which chooses a method privately and fits it here.  Kept separate from :mod:`dpreg.api` so that
importing the API is cheap."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import pandas as pd

from dpreg import _registry
from dpreg._validation import check_bounds, check_epsilon, check_probability
from dpreg.exceptions import (
    InvalidInputError,
    InvalidParameterError,
    MechanismFailure,
    UnknownNameError,
)
from dpreg.inference import RegressionResults

#: minimum number of rows each method needs (public n; used by per-group fits)
MIN_ROWS = {m.name: m.min_rows for m in _registry.methods()}


def _entry(method: str) -> _registry.Method:
    """The registry entry of a method this module fits (every method but ``auto``)."""
    return _registry.get(method, allowed=_registry.names(selector=False))


def _frame(X: np.ndarray, names: list[str]) -> pd.DataFrame:
    return pd.DataFrame(X, columns=names)


def fit(method: str, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float | None,
        x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float], x_names: list[str],
        y_name: str, fit_intercept: bool, ledger: Any, random_state: Any,
        options: dict[str, Any]) -> RegressionResults:
    """Fit ``method`` (not ``auto``) on arrays; a ⊥ release is returned as a failed result."""
    from dpreg.simple import theil_sen_with_ci

    entry = _entry(method)
    _check_option_names(entry, options)
    opts = dict(options)
    y_bounds = check_bounds(y_bounds, "bounds for the response")
    if entry.always_intercept and not fit_intercept:
        raise InvalidInputError(f"method {method!r} always fits an intercept; remove '- 1' from "
                                "the formula (or --no-intercept)")
    if "inference" not in opts and takes_inference(method):
        # the engine releases what it is asked for: per-group fits and ``auto`` keep the
        # plain release; :func:`dpreg.regress` asks for ``inference="auto"`` itself
        opts["inference"] = False
    ci_alpha = opts.pop("ci_alpha", None)  # other methods: intervals by post-processing
    if ci_alpha is not None:
        ci_alpha = check_probability(ci_alpha, "ci_alpha")
    median = entry.estimator_options.get("median")
    if entry.estimator is None:  # dp-intercept: the functional core alone
        res = entry.load_core()(X[:, 0], y, epsilon=epsilon, y_bounds=y_bounds,
                                x_bounds=x_bounds[0], ledger=ledger, rng=random_state, **opts)
        out = res.to_regression_results(x_name=x_names[0], y_name=y_name)
    elif median is not None and ci_alpha is not None:  # Theil-Sen line + DP slope interval
        out = theil_sen_with_ci(X[:, 0], y, epsilon=check_epsilon(epsilon), alpha=ci_alpha,
                                x_bounds=x_bounds[0], y_bounds=y_bounds, median=median,
                                x_name=x_names[0], y_name=y_name, ledger=ledger,
                                rng=random_state, **opts)
    else:
        est = _estimator(entry, epsilon=epsilon, delta=delta, x_bounds=x_bounds,
                         y_bounds=y_bounds, fit_intercept=fit_intercept, ledger=ledger,
                         random_state=random_state, opts=opts)
        _interval_asked(est, ci_alpha)
        try:
            est.fit(_frame(X, x_names), y)
        except MechanismFailure:
            pass  # ⊥ is a typed result here: results_ holds failed=True and the reason
        out = est.results_
    return out.replace(dep_var=y_name, bounds={y_name: y_bounds, **dict(zip(x_names, x_bounds))})


def _interval_asked(est: Any, ci_alpha: float | None) -> None:
    """``ci_alpha`` given: the caller asked for an interval explicitly, so an estimator with a
    public interval rule (NoisyStats: :func:`dpreg.simple._noisy_stats.interval_refusal`)
    raises its refusal before anything is charged instead of making the plain release."""
    if ci_alpha is not None and hasattr(type(est), "_interval_required"):
        est._interval_required = True


def takes_inference(method: str) -> bool:
    """True when ``method``'s estimator takes ``inference=`` (NoisyStats, AdaSSP): releasing
    the statistics its DP-aware interval needs is then an option of the fit."""
    entry = _registry.get(method)
    if entry.is_selector or entry.estimator is None:
        return False
    import inspect

    return "inference" in inspect.signature(entry.load_estimator()).parameters


#: methods without an estimator whose functional core has a release from a data source
#: (:func:`fit_source`): DPIntercept needs only n and the clipped mean of y
_CORE_SOURCE = ("dp-intercept",)


def source_methods() -> tuple[str, ...]:
    """The registered methods that can fit from a :class:`~dpreg._source.DataSource`: those
    whose estimator defines ``_fit_source`` (a statistics step read in chunks), and DPIntercept
    (its core's release from the same statistics)."""
    return tuple(m.name for m in _registry.methods()
                 if not m.is_selector and (
                     m.name in _CORE_SOURCE
                     or (m.estimator is not None and hasattr(m.load_estimator(), "_fit_source"))))


def fit_source(method: str, source: Any, *, x_cols: list[str], y_col: str, epsilon: float,
               delta: float | None, x_bounds: list[tuple[float, float]],
               y_bounds: tuple[float, float], fit_intercept: bool, ledger: Any,
               random_state: Any, options: dict[str, Any]) -> RegressionResults:
    """Fit a sufficient-statistics ``method`` (:func:`source_methods`) from a
    :class:`~dpreg._source.DataSource` (a file streamed in chunks or a Spark DataFrame): the
    method's own statistics step reads the source once, its own release adds the noise."""
    entry = _entry(method)
    _check_option_names(entry, options)
    y_bounds = check_bounds(y_bounds, "bounds for the response")
    if entry.needs_delta and delta is None:
        raise InvalidInputError(f"delta is required for method {method!r} (a value in (0, 1), "
                                "e.g. 1e-6 or smaller than 1/n)")
    if entry.always_intercept and not fit_intercept:
        raise InvalidInputError(f"method {method!r} always fits an intercept; remove '- 1' from "
                                "the formula (or --no-intercept)")
    if entry.one_x_only and len(x_cols) != 1:
        raise InvalidInputError(f"method {method!r} takes exactly one regressor; got "
                                f"{len(x_cols)} ({x_cols})")
    bounds = {y_col: y_bounds, **{n: (float(b[0]), float(b[1]))
                                  for n, b in zip(x_cols, x_bounds)}}
    ci_alpha = options.get("ci_alpha")  # as in :func:`fit`: intervals by post-processing
    if ci_alpha is not None:
        check_probability(ci_alpha, "ci_alpha")
    opts = {k: v for k, v in options.items() if k != "ci_alpha"}
    if entry.estimator is None:  # dp-intercept: the core's release from the source's ȳ
        from dpreg.simple._noisy_stats import (
            dp_intercept_from_statistics,
            noisy_stats_source_statistics,
        )

        xb = check_bounds(x_bounds[0], "bounds for the regressor")
        epsilon = check_epsilon(epsilon)

        def ybar(yb: tuple[float, float]) -> tuple[float, int]:
            stats, _ = noisy_stats_source_statistics(source, x_cols[0], y_col, xb, yb)
            return float(stats.ybar[0]), int(stats.n[0])

        res = dp_intercept_from_statistics(ybar, epsilon=epsilon, y_bounds=y_bounds,
                                           x_bounds=xb, ledger=ledger, rng=random_state, **opts)
        return res.to_regression_results(x_name=x_cols[0], y_name=y_col).replace(
            dep_var=y_col, bounds=bounds)
    est = _estimator(entry, epsilon=epsilon, delta=delta, x_bounds=x_bounds, y_bounds=y_bounds,
                     fit_intercept=fit_intercept, ledger=ledger, random_state=random_state,
                     opts=opts)
    _interval_asked(est, ci_alpha)
    try:
        est._fit_source(source, x_cols, y_col)
    except MechanismFailure:
        pass  # ⊥ is a typed result here: results_ holds failed=True and the reason
    return est.results_.replace(dep_var=y_col, bounds=bounds)


def charged_budget(method: str, *, epsilon: float, delta: float | None,
                   options: dict[str, Any], n_features: int = 1) -> Any:
    """The budget one fit of ``method`` charges to a ledger -- in the definition the fit charges
    it (PureDP, ApproxDP, ZCDP or GDP) -- from public inputs only (no data, no noise).

    It is built from the same estimator and the same budget functions as :func:`fit`
    (:func:`~dpreg.multivariate.ssp.adassp_budget`,
    :func:`~dpreg.multivariate.boosted.boosted_budget`,
    :func:`~dpreg.multivariate.dpgd.dpgd_budget`, the simple DP-GD's budget variants), so it
    equals what a single fit charges (tests/grouped/test_grouped_ledger.py checks every method).
    ``auto`` is :func:`dpreg.auto.charged_budget` (:func:`dpreg.api.charged_budget` takes every
    method).  Raises :class:`InvalidInputError` for inputs the fit would reject before charging
    (unknown option names, a missing δ, an invalid ε).
    """
    from dpreg.privacy import ApproxDP, PureDP

    entry = _entry(method)
    _check_option_names(entry, options)
    eps = check_epsilon(epsilon)
    if entry.pure:
        return PureDP(eps)  # Theil-Sen with or without the DP slope interval (ε/2 + ε/2)
    opts = {k: v for k, v in options.items() if k != "ci_alpha"}
    est = _estimator(entry, epsilon=eps, delta=delta, x_bounds=[(0.0, 1.0)] * n_features,
                     y_bounds=(0.0, 1.0), fit_intercept=True, ledger=None, random_state=None,
                     opts=opts)
    if method == "dp-gd":
        from dpreg.linear_model import SimpleDPGradientDescent
        from dpreg.multivariate.dpgd import dpgd_budget
        from dpreg.privacy import check_neighbouring
        from dpreg.simple._gradient_descent import _resolve_budget

        inner = est._inner(n_features)
        if isinstance(inner, SimpleDPGradientDescent):
            return _resolve_budget(inner.variant, inner.epsilon, inner.rho, inner.delta)[0]
        from dpreg._validation import check_int
        from dpreg.multivariate._common import check_choice

        return dpgd_budget(
            check_epsilon(inner.epsilon), inner._required_delta(),
            check_int(inner.n_iter, "n_iter", minimum=1, maximum=1_000_000),
            check_choice(inner.accounting, "accounting", ("gdp", "zcdp")),
            check_neighbouring(inner.neighbouring))[2]
    dlt = est._required_delta()
    if method == "adassp":
        from dpreg.multivariate.ssp import adassp_budget

        return adassp_budget(eps, dlt, calibration=est.calibration,
                             inference=bool(est.inference)).charged
    if method == "boosted-adassp":
        from dpreg._validation import check_int
        from dpreg.multivariate.boosted import boosted_budget, boosted_split

        rounds = check_int(est.n_rounds, "n_rounds", minimum=1, maximum=100_000)
        return boosted_budget(eps, dlt, boosted_split(est.split, rounds), rounds).charged
    return ApproxDP(eps, dlt)  # tukey-em, covariance-ols: (ε, δ) as given


#: arguments the dispatcher sets itself (a user option of the same name is rejected)
SET_BY_DISPATCH = frozenset({
    "x", "y", "X", "epsilon", "delta", "bounds_X", "bounds_y", "x_bounds", "y_bounds", "median",
    "fit_intercept", "random_state", "rng", "ledger", "x_names", "y_name", "self"})
#: arguments the engine (:func:`dpreg.api.fit_arrays`) takes itself, and where the caller
#: gives them: a method option of the same name is refused by ``regress``, ``fit_by_group`` and
#: ``plan`` before anything is read or charged (it used to end in a raw TypeError about a
#: keyword argument given twice)
ENGINE_ARGUMENTS = {
    "method": "method=", "epsilon": "epsilon=", "delta": "delta=", "ledger": "ledger=",
    "random_state": "random_state=", "x_bounds": "bounds=", "y_bounds": "bounds=",
    "x_names": "the formula", "y_name": "the formula",
    "fit_intercept": "the formula ('- 1' drops the intercept)",
}


def check_option_keys(options: Any) -> None:
    """Method options must not name an argument the engine takes itself
    (:data:`ENGINE_ARGUMENTS`): an :class:`~dpreg.exceptions.InvalidParameterError` naming the
    option and where it is given instead."""
    for key in options:
        where = ENGINE_ARGUMENTS.get(str(key))
        if where is not None:
            raise InvalidParameterError(f"{key!r} is not a method option: it is given by {where}")


#: options the Theil-Sen interval path consumes besides the estimator's own
_TS_CI_OPTIONS = frozenset({"slope_range", "ci_method", "output_range"})


def _option_target(entry: _registry.Method) -> Any:
    """What a method's options go to: its estimator class, or its core without one."""
    return entry.load_estimator() if entry.estimator is not None else entry.load_core()


def _check_option_names(entry: _registry.Method, options: dict[str, Any]) -> None:
    """Reject unknown (or dispatcher-owned) option names before anything is charged."""
    import inspect

    if not options:
        return
    params = inspect.signature(_option_target(entry)).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    allowed = (set(params) - SET_BY_DISPATCH) | {"ci_alpha"}
    if entry.estimator_options.get("median") is not None:
        allowed |= _TS_CI_OPTIONS
    unknown = sorted(set(options) - allowed)
    if unknown:
        from dpreg._validation import did_you_mean

        hint = "".join(did_you_mean(u, sorted(allowed)) for u in unknown)
        raise UnknownNameError(
            f"unknown option(s) for method {entry.name!r}: {', '.join(unknown)}{hint}; "
            f"expected one of {', '.join(sorted(allowed))}")
    _check_option_kinds(entry, params, options)


def _check_option_kinds(entry: _registry.Method, params: Any, options: dict[str, Any]) -> None:
    """An option whose default is a boolean, an integer or a real number takes a value of that
    kind; the estimator checks the range.
    Without this an unused option (``n_iter=1.5`` with one regressor) was silently ignored and
    a list or an infinite value reached code that expects a number."""
    from dpreg._validation import fmt

    for key, value in options.items():
        param = params.get(key)
        default = None if param is None else param.default
        if isinstance(default, (bool, np.bool_)):
            ok, expected = isinstance(value, (bool, np.bool_)), "true or false"
        elif isinstance(default, numbers.Integral):
            ok = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
            expected = "an integer"
        elif isinstance(default, numbers.Real):
            ok = (not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Real)
                  and math.isfinite(float(value)))
            expected = "a finite number"
        else:
            continue
        if not ok:
            raise InvalidParameterError(f"option {key} of method {entry.name!r} must be "
                                        f"{expected}; got {fmt(value)}")


def _estimator(entry: _registry.Method, *, epsilon: float, delta: float | None,
               x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
               fit_intercept: bool, ledger: Any, random_state: Any,
               opts: dict[str, Any]) -> Any:
    """The method's estimator with the public inputs (and δ where the method takes one)."""
    kwargs = dict(epsilon=epsilon, bounds_X=x_bounds, bounds_y=y_bounds,
                  fit_intercept=fit_intercept, random_state=random_state, ledger=ledger,
                  **entry.estimator_options)
    if entry.delta != "never":
        kwargs["delta"] = delta
    try:
        return entry.load_estimator()(**kwargs, **opts)
    except TypeError as exc:  # an unknown hyperparameter name
        raise UnknownNameError(f"unknown option for method {entry.name!r}: {exc}") from None
