"""Method name -> estimator/functional core (the engine behind ``regress``, the CLI and
per-group fits).  Kept separate from :mod:`dpreg.api` so that importing the API is cheap."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpreg._validation import check_bounds, check_epsilon, check_probability
from dpreg.exceptions import InvalidInputError, MechanismFailure
from dpreg.inference import RegressionResults

_TS_MEDIAN = {"theil-sen-exp": "exp", "theil-sen-wide": "wide", "theil-sen-smooth": "smooth"}

#: minimum number of rows each method needs (public n; used by per-group fits)
MIN_ROWS = {"noisy-stats": 2, "dp-intercept": 1, "theil-sen-exp": 2, "theil-sen-wide": 2,
            "theil-sen-smooth": 2, "dp-gd": 2, "adassp": 2, "boosted-adassp": 2,
            "tukey-em": 16, "covariance-ols": 2, "auto": 2}


def _frame(X: np.ndarray, names: list[str]) -> pd.DataFrame:
    return pd.DataFrame(X, columns=names)


def fit(method: str, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float | None,
        x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float], x_names: list[str],
        y_name: str, fit_intercept: bool, ledger: Any, random_state: Any,
        options: dict[str, Any]) -> RegressionResults:
    from dpreg import linear_model as lm
    from dpreg.simple import dp_intercept, theil_sen_with_ci

    _check_option_names(method, options)
    if method == "auto":  # private selection (+ bounds-free mode): dpreg.auto
        from dpreg.auto import fit_auto

        return fit_auto(X, y, epsilon=epsilon, delta=delta, x_bounds=x_bounds, y_bounds=y_bounds,
                        x_names=x_names, y_name=y_name, fit_intercept=fit_intercept, ledger=ledger,
                        random_state=random_state, **options)
    opts = dict(options)
    y_bounds = check_bounds(y_bounds, "bounds for the response")
    if method in ("noisy-stats", "dp-intercept", *tuple(_TS_MEDIAN)) and not fit_intercept:
        raise InvalidInputError(f"method {method!r} always fits an intercept; remove '- 1' from "
                                "the formula (or --no-intercept)")
    ci_alpha = opts.pop("ci_alpha", None)  # other methods: intervals by post-processing
    if ci_alpha is not None:
        ci_alpha = check_probability(ci_alpha, "ci_alpha")
    Xf = _frame(X, x_names)
    if method == "dp-intercept":
        res = dp_intercept(X[:, 0], y, epsilon=epsilon, y_bounds=y_bounds, x_bounds=x_bounds[0],
                           ledger=ledger, rng=random_state, **opts)
        out = res.to_regression_results(x_name=x_names[0], y_name=y_name)
    elif method in _TS_MEDIAN:
        eps = check_epsilon(epsilon)
        if ci_alpha is None:
            est = lm.DPTheilSen(epsilon=eps, bounds_X=x_bounds[0], bounds_y=y_bounds,
                                median=_TS_MEDIAN[method], random_state=random_state,
                                ledger=ledger, **opts)
            try:
                est.fit(Xf, y)
            except MechanismFailure:
                pass
            out = est.results_
        else:
            out = theil_sen_with_ci(X[:, 0], y, epsilon=eps, alpha=ci_alpha,
                                    x_bounds=x_bounds[0], y_bounds=y_bounds,
                                    median=_TS_MEDIAN[method], x_name=x_names[0], y_name=y_name,
                                    ledger=ledger, rng=random_state, **opts)
    else:
        est = _estimator(method, epsilon=epsilon, delta=delta, x_bounds=x_bounds,
                         y_bounds=y_bounds, fit_intercept=fit_intercept, ledger=ledger,
                         random_state=random_state, opts=opts)
        try:
            est.fit(Xf, y)
        except MechanismFailure:
            pass  # ⊥ is a typed result here: results_ holds failed=True and the reason
        out = est.results_
    out.dep_var = y_name
    out.bounds = {y_name: y_bounds, **{n: (float(b[0]), float(b[1])) for n, b in zip(x_names, x_bounds)}}
    return out


def charged_budget(method: str, *, epsilon: float, delta: float | None,
                   options: dict[str, Any], n_features: int = 1) -> Any:
    """The budget one fit of ``method`` charges to a ledger -- in the definition the fit charges
    it (PureDP, ApproxDP, ZCDP or GDP) -- from public inputs only (no data, no noise).

    It is built from the same estimator and the same budget functions as :func:`fit`
    (:func:`~dpreg.multivariate.ssp.adassp_guarantee`,
    :func:`~dpreg.multivariate.boosted.boosted_budget`,
    :func:`~dpreg.multivariate.dpgd.dpgd_budget`, the simple DP-GD's budget variants), so it
    equals what a single fit charges (tests/grouped/test_grouped_ledger.py checks every method).
    ``auto`` composes several charges on the ledger; this is their total (ε, or (ε, δ) with
    several features).  Raises :class:`InvalidInputError` for inputs the fit would reject
    before charging (unknown option names, a missing δ, an invalid ε).
    """
    from dpreg._validation import check_delta
    from dpreg.privacy import ApproxDP, PureDP

    _check_option_names(method, options)
    eps = check_epsilon(epsilon)
    if method in ("noisy-stats", "dp-intercept", *_TS_MEDIAN):
        return PureDP(eps)  # with or without the DP slope interval (ε/2 + ε/2)
    if method == "auto":
        if n_features == 1:
            return PureDP(eps)
        if delta is None:
            raise InvalidInputError("delta is required for method 'auto' with several "
                                    "regressors; got None")
        return ApproxDP(eps, check_delta(delta, allow_zero=False))
    opts = {k: v for k, v in options.items() if k != "ci_alpha"}
    est = _estimator(method, epsilon=eps, delta=delta, x_bounds=[(0.0, 1.0)] * n_features,
                     y_bounds=(0.0, 1.0), fit_intercept=True, ledger=None, random_state=None,
                     opts=opts)
    if method == "dp-gd":
        from dpreg.linear_model._simple import SimpleDPGradientDescent
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
        from dpreg.multivariate.ssp import adassp_guarantee

        return adassp_guarantee(eps, dlt)[0]
    if method == "boosted-adassp":
        from dpreg._validation import check_int
        from dpreg.multivariate.boosted import boosted_budget, boosted_split

        rounds = check_int(est.n_rounds, "n_rounds", minimum=1, maximum=100_000)
        return boosted_budget(eps, dlt, boosted_split(est.split, rounds), rounds).charged
    return ApproxDP(eps, dlt)  # tukey-em, covariance-ols: (ε, δ) as given


#: arguments the dispatcher sets itself (a user option of the same name is rejected)
_SET_BY_DISPATCH = frozenset({
    "x", "y", "X", "epsilon", "delta", "bounds_X", "bounds_y", "x_bounds", "y_bounds", "median",
    "fit_intercept", "random_state", "rng", "ledger", "x_names", "y_name", "self"})
#: options the Theil-Sen interval path consumes besides the estimator's own
_TS_CI_OPTIONS = frozenset({"slope_range", "ci_method", "output_range"})


def _option_target(method: str) -> Any:
    from dpreg import linear_model as lm
    from dpreg.simple import dp_intercept

    if method == "auto":
        from dpreg.auto import fit_auto

        return fit_auto
    if method == "dp-intercept":
        return dp_intercept
    if method in _TS_MEDIAN:
        return lm.DPTheilSen
    return {"noisy-stats": lm.NoisyStats, "dp-gd": lm.DPGradientDescent, "adassp": lm.AdaSSP,
            "boosted-adassp": lm.BoostedAdaSSP, "tukey-em": lm.TukeyEM,
            "covariance-ols": lm.CovarianceOLS}.get(method)


def _check_option_names(method: str, options: dict[str, Any]) -> None:
    """Reject unknown (or dispatcher-owned) option names before anything is charged."""
    import inspect

    target = _option_target(method)
    if target is None or not options:
        return
    params = inspect.signature(target).parameters
    if method != "auto" and any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    allowed = (set(params) - _SET_BY_DISPATCH) | {"ci_alpha"}
    if method == "auto":  # fit_auto's own options, plus those every candidate accepts or drops
        allowed = {k for k, p in params.items() if p.kind is p.KEYWORD_ONLY} - _SET_BY_DISPATCH
        allowed |= {"ci_alpha", "output_range", "pairs"}
    if method in _TS_MEDIAN:
        allowed |= _TS_CI_OPTIONS
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise InvalidInputError(
            f"unknown option(s) for method {method!r}: {', '.join(unknown)}; expected one of "
            f"{', '.join(sorted(allowed))}")


def _estimator(method: str, *, epsilon: float, delta: float | None,
               x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
               fit_intercept: bool, ledger: Any, random_state: Any,
               opts: dict[str, Any]) -> Any:
    from dpreg import linear_model as lm

    common = dict(epsilon=epsilon, bounds_X=x_bounds, bounds_y=y_bounds,
                  fit_intercept=fit_intercept, random_state=random_state, ledger=ledger)
    if method == "noisy-stats":
        return lm.NoisyStats(**common, **opts)
    if method == "dp-gd":
        return lm.DPGradientDescent(**common, delta=delta, **opts)
    classes = {"adassp": lm.AdaSSP, "boosted-adassp": lm.BoostedAdaSSP, "tukey-em": lm.TukeyEM,
               "covariance-ols": lm.CovarianceOLS}
    try:
        return classes[method](**common, delta=delta, **opts)
    except TypeError as exc:  # an unknown hyperparameter name
        raise InvalidInputError(f"unknown option for method {method!r}: {exc}") from None
