"""Method name -> its spec (:mod:`dpreg.methods`), with the checks every fit shares: the engine
behind ``regress``, the CLI and per-group fits for every method but ``auto`` --
:func:`dpreg.api.fit_arrays` sends ``auto`` to its spec, which chooses a method privately and
fits it here.  Nothing here knows a method by name: each spec says what it needs and how it
fits."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpreg import methods
from dpreg._spec import MethodSpec
from dpreg._validation import check_bounds, check_epsilon, check_probability
from dpreg.exceptions import (
    InvalidInputError,
    InvalidParameterError,
)
from dpreg.inference import RegressionResults

#: minimum number of rows each method needs (public n; used by per-group fits)
MIN_ROWS = {m.name: m.min_rows for m in methods.specs()}


def spec_of(method: str) -> MethodSpec:
    """The spec of a method this module fits (every method but ``auto``)."""
    return methods.get(method, allowed=methods.names(selector=False))


def prepare_options(spec: MethodSpec, options: dict[str, Any], *, n_features: int | None
                    ) -> tuple[dict[str, Any], float | None]:
    """(the method's validated options, ``ci_alpha``) before anything is read, charged or
    drawn.  ``ci_alpha`` asks for an interval at that level explicitly: where the release
    cannot carry one the refusal is raised before the fit."""
    opts = dict(options)
    ci_alpha = opts.pop("ci_alpha", None)
    if ci_alpha is not None:
        ci_alpha = check_probability(ci_alpha, "ci_alpha")
    return spec.check_options(opts, context={"n_features": n_features,
                                             "ci_alpha": ci_alpha}), ci_alpha


def _check_shape(spec: MethodSpec, fit_intercept: bool, n_features: int) -> None:
    if spec.always_intercept and not fit_intercept:
        raise InvalidInputError(f"method {spec.name!r} always fits an intercept; remove '- 1' "
                                "from the formula (or --no-intercept)")
    if spec.one_x_only and n_features != 1:
        raise InvalidInputError(f"method {spec.name!r} takes exactly one regressor; got "
                                f"{n_features}")


def fit(method: str, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float | None,
        x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float], x_names: list[str],
        y_name: str, fit_intercept: bool, ledger: Any, random_state: Any,
        options: dict[str, Any]) -> RegressionResults:
    """Fit ``method`` (not ``auto``) on arrays; a ⊥ release is returned as a failed result."""
    spec = spec_of(method)
    opts, ci_alpha = prepare_options(spec, options, n_features=X.shape[1])
    y_bounds = check_bounds(y_bounds, "bounds for the response")
    _check_shape(spec, fit_intercept, X.shape[1])
    check_ledger_accepts(spec, ledger, epsilon=epsilon, delta=delta, options=opts,
                         n_features=X.shape[1])
    out = spec.fit(X, y, epsilon=epsilon, delta=delta, x_bounds=x_bounds, y_bounds=y_bounds,
                   x_names=x_names, y_name=y_name, fit_intercept=fit_intercept, ledger=ledger,
                   random_state=random_state, options=opts, ci_alpha=ci_alpha)
    return out.replace(dep_var=y_name, bounds={y_name: y_bounds, **dict(zip(x_names, x_bounds))},
                       extra=with_estimand(out.extra, spec))


def with_estimand(extra: Any, spec: MethodSpec) -> dict[str, Any]:
    """``extra`` with ``target``: what the method's release estimates (its spec's
    ``target``), so that a summary and the JSON say which slope a fit reports."""
    out = dict(extra)
    if spec.target:
        out.setdefault("target", spec.target)
    return out


def check_ledger_accepts(spec: MethodSpec, ledger: Any, *, epsilon: float, delta: float | None,
                         options: dict[str, Any], n_features: int) -> None:
    """Refuse a fit that ``ledger`` could never account (an (ε, δ), zCDP or GDP method on a
    pure-ε ledger), with the remedy, before any data is read or fitted
    (:meth:`~dpreg.privacy.Ledger.check_accepts`); nothing to check without a ledger or
    without the δ the method needs (the fit itself says δ is required)."""
    from dpreg.privacy import Ledger

    if not isinstance(ledger, Ledger) or (spec.needs_delta and delta is None):
        return
    ledger.check_accepts(spec.budget(epsilon=check_epsilon(epsilon), delta=delta,
                                     options=options, n_features=n_features))


def source_methods() -> tuple[str, ...]:
    """The methods that fit from a :class:`~dpreg._source.DataSource` (a file streamed in
    chunks or a Spark DataFrame): those with a one-pass statistics step."""
    return methods.names(selector=False, source=True)


def fit_source(method: str, source: Any, *, x_cols: list[str], y_col: str, epsilon: float,
               delta: float | None, x_bounds: list[tuple[float, float]],
               y_bounds: tuple[float, float], fit_intercept: bool, ledger: Any,
               random_state: Any, options: dict[str, Any]) -> RegressionResults:
    """Fit a sufficient-statistics ``method`` (:func:`source_methods`) from a
    :class:`~dpreg._source.DataSource`: the method's own statistics step reads the source
    once, its own release adds the noise."""
    spec = spec_of(method)
    opts, ci_alpha = prepare_options(spec, options, n_features=len(x_cols))
    y_bounds = check_bounds(y_bounds, "bounds for the response")
    if spec.needs_delta and delta is None:
        raise InvalidInputError(f"delta is required for method {method!r} (a value in (0, 1), "
                                "e.g. 1e-6 or smaller than 1/n)")
    _check_shape(spec, fit_intercept, len(x_cols))
    check_ledger_accepts(spec, ledger, epsilon=epsilon, delta=delta, options=opts,
                         n_features=len(x_cols))
    bounds = {y_col: y_bounds, **{n: (float(b[0]), float(b[1]))
                                  for n, b in zip(x_cols, x_bounds)}}
    out = spec.fit_source(source, x_cols=x_cols, y_col=y_col, epsilon=epsilon, delta=delta,
                          x_bounds=x_bounds, y_bounds=y_bounds, fit_intercept=fit_intercept,
                          ledger=ledger, random_state=random_state, options=opts,
                          ci_alpha=ci_alpha)
    return out.replace(dep_var=y_col, bounds=bounds, extra=with_estimand(out.extra, spec))


def charged_budget(method: str, *, epsilon: float, delta: float | None,
                   options: dict[str, Any], n_features: int = 1) -> Any:
    """The budget one fit of ``method`` charges to a ledger -- in the definition the fit charges
    it (PureDP, ApproxDP, ZCDP or GDP) -- from public inputs only (no data, no noise): the
    spec's own budget rule, the one its fit uses (tests/grouped/test_grouped_ledger.py checks
    every method against what a single fit charges).  ``auto`` is
    :func:`dpreg.auto.charged_budget` (:func:`dpreg.api.charged_budget` takes every method).
    Raises :class:`InvalidInputError` for inputs the fit would reject before charging
    (unknown option names, a missing δ, an invalid ε)."""
    spec = spec_of(method)
    opts, _ = prepare_options(spec, options, n_features=n_features)
    return spec.budget(epsilon=check_epsilon(epsilon), delta=delta, options=opts,
                       n_features=n_features)


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
