"""High-level entry point: ``dpreg.regress(data, "y ~ x1 + x2", method=..., epsilon=..., bounds=...)``.

The formula is parsed by a restricted grammar (:mod:`dpreg._formula`, docs/formulas.md: column
names, ``+ - : * / **``, intercept terms, ``C(col[, levels=[...]])``, ``I(arithmetic)`` and the
transforms log, log1p, exp, sqrt, abs, power) and never evaluated; only the validated formula
reaches `formulaic <https://matthewwardrop.github.io/formulaic/>`_, which builds the model
matrix.  Every response and regressor column needs *public* bounds given in ``bounds`` (a dict
mapping the column -- or the formula term as the model matrix names it, e.g.
``"np.log(income)"`` for ``log(income)`` -- to ``(lo, hi)``); missing bounds are an error that
says how to supply them, never something read off the data.  Categorical regressors are
accepted only as pandas ``Categorical`` columns whose declared categories are the public list
of levels, or as ``C(col, levels=[...])`` with the levels written in the formula (their dummy
columns get bounds (0, 1)).

Methods (``method=``; the table is :mod:`dpreg.methods`, ``dpreg methods`` prints it):

=====================  ===========================================================  =========
name                   algorithm                                                    x columns
=====================  ===========================================================  =========
``noisy-stats``        DPSuffStats, noisy sufficient statistics (Alabi et al. Alg 1) 1
``dp-intercept``       intercept-only baseline (noisy mean of y)                      1
``theil-sen-exp``      DP Theil-Sen, exponential-mechanism median                     1
``theil-sen-wide``     DP Theil-Sen, θ-widened exponential-mechanism median          1
``theil-sen-smooth``   DP Theil-Sen, smooth-sensitivity median with Student-t noise  1
``dp-gd``              DP gradient descent (Alabi et al. for one x; clipped GD else)  >= 1
``adassp``             AdaSSP (Wang 2018)                                            >= 1
``boosted-adassp``     BoostedAdaSSP (Tang et al. 2023)                              >= 1
``tukey-em``           TukeyEM (Amin et al. 2023)                                    >= 1
``covariance-ols``     OLS on an Analyze-Gauss DP SSCP matrix (Bain et al.)         >= 1
``auto``               private choice among the above (:mod:`dpreg.auto`)           >= 1
=====================  ===========================================================  =========
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpreg import _bounds, methods
from dpreg._bounds import AllPrivate as _AllPrivate
from dpreg.exceptions import InvalidInputError
from dpreg.inference import RegressionResults
from dpreg.privacy.notices import public_function

__all__ = ["regress", "source_methods", "METHODS", "parse_formula", "ModelFrame", "fit_arrays",
           "charged_budget"]

#: methods that fit y on exactly one x
SIMPLE_ONLY: tuple[str, ...] = methods.names(selector=False, features="one")
#: methods that take one or more x (``auto`` aside)
MULTI: tuple[str, ...] = methods.names(selector=False, features="any")
#: every method but ``auto`` (which chooses among these privately)
METHODS: tuple[str, ...] = SIMPLE_ONLY + MULTI
#: methods that always need δ
NEEDS_DELTA: tuple[str, ...] = methods.names(delta="always")


@dataclass(frozen=True)
class ModelFrame:
    """Design matrix, response and public bounds resolved from a formula."""

    X: np.ndarray
    y: np.ndarray
    x_names: list[str]
    y_name: str
    x_bounds: list[tuple[float, float]]
    y_bounds: tuple[float, float]
    fit_intercept: bool
    #: bounds derived from the raw columns' (term -> how), stated in the summary
    derived: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Checked:
    """A formula validated against a DataFrame's names, dtypes and the public bounds (nothing
    of the values read yet): what :func:`parse_formula` and :func:`regress` build on."""

    parsed: Any
    names: list[str]
    labels: dict[str, Any]
    dtypes: dict[str, Any]


def _check_formula(data: pd.DataFrame, formula: str, bounds: Mapping[str, Any],
                   levels: Mapping[str, Any] | None) -> _Checked:
    from dpreg import _formula
    from dpreg._validation import check_known_keys

    if not isinstance(data, pd.DataFrame):
        raise InvalidInputError(f"data must be a pandas DataFrame; got {type(data).__name__}")
    if not isinstance(formula, str) or "~" not in formula:
        shown = formula if isinstance(formula, str) and len(formula) <= 80 else \
            type(formula).__name__
        raise InvalidInputError(f"formula must be a string like 'y ~ x1 + x2'; got {shown!r}")
    if not isinstance(bounds, Mapping):
        raise InvalidInputError(
            f"bounds must be a dict mapping column -> (lo, hi); got {type(bounds).__name__}"
        )
    names = [str(c) for c in data.columns]
    if len(set(names)) != len(names):
        raise InvalidInputError("data must have distinct column names")
    parsed = _formula.parse_formula(formula, names)  # names only: before any value is read
    if levels:
        check_known_keys(levels, names, "levels")
        parsed = _formula.declare_levels(parsed, levels)
    labels = dict(zip(names, data.columns))
    dtypes = {c: data[labels[c]].dtype for c in parsed.columns}
    _formula.check_categorical_levels(parsed, dtypes)
    if data.shape[0] == 0:
        raise InvalidInputError("data must have at least one row; got an empty DataFrame")
    for col, dt in dtypes.items():
        if isinstance(dt, pd.CategoricalDtype) or pd.api.types.is_numeric_dtype(dt) \
                or pd.api.types.is_bool_dtype(dt):
            continue
        if col in _formula.categorical_columns(parsed):
            continue  # C(col, levels=[...]) of a text column: declared levels
        raise InvalidInputError(
            f"column {col!r} is not numeric (dtype {dt}); declare it categorical with its "
            "public levels (C(col, levels=[...]), a codebook, or a pandas Categorical), so "
            "that the set of levels is not read off the data"
        )
    _bounds.check_term_domains(parsed, bounds)  # public refusals before any value is read
    return _Checked(parsed, names, labels, dtypes)


@dataclass(frozen=True)
class _PlainColumns:
    """A formula of plain numeric columns (``y ~ x1 + x2``, ``- 1``/``+ 0`` for no intercept),
    each with declared public bounds: the model matrix is the columns themselves, clipped to
    their bounds, so it is read from the frame in place (no formulaic, no copy of the frame)."""

    y_name: str
    x_names: list[str]
    fit_intercept: bool
    x_bounds: list[tuple[float, float]]
    y_bounds: tuple[float, float]

    def column(self, data: pd.DataFrame, checked: _Checked, name: str) -> np.ndarray:
        return data[checked.labels[name]].to_numpy()  # a view for a numpy column

    def check_values(self, data: pd.DataFrame, checked: _Checked) -> None:
        """A missing value (NaN) is refused, naming the column only, as the model-matrix
        builder refuses it; ±inf is clipped to the bounds like any value outside them."""
        for name in [self.y_name, *self.x_names]:
            col = self.column(data, checked, name)
            if col.dtype.kind == "f" and _has_nan(col):
                from dpreg._formula import _show, display_name

                raise InvalidInputError(
                    f"formula term {_show(display_name(name), 80)} has missing (null/NaN) or "
                    "undefined values in some rows (e.g. log of a non-positive number or an "
                    "empty cell); clean the data or change the transform")

    def source(self, data: pd.DataFrame, checked: _Checked) -> Any:
        """The columns [x..., y] side by side, read in chunks in place: the statistics steps
        clip every row to the public bounds as they read it (values checked:
        :meth:`check_values`)."""
        from dpreg._source import ArraySource

        cols = [*self.x_names, self.y_name]
        return ArraySource([self.column(data, checked, c) for c in cols], cols, validated=True)

    def model_frame(self, data: pd.DataFrame, checked: _Checked) -> ModelFrame:
        """The arrays of :class:`ModelFrame`: each column clipped to its bounds straight into
        the design matrix (the numbers the model-matrix builder gives, in its layout)."""
        X = np.empty((data.shape[0], len(self.x_names)), order="F")
        for j, (name, (lo, hi)) in enumerate(zip(self.x_names, self.x_bounds)):
            np.clip(self.column(data, checked, name), lo, hi, out=X[:, j])
        y = np.clip(self.column(data, checked, self.y_name), *self.y_bounds).astype(float,
                                                                                  copy=False)
        return ModelFrame(X, y, list(self.x_names), self.y_name, list(self.x_bounds),
                          self.y_bounds, self.fit_intercept, {})


def _has_nan(col: np.ndarray, step: int = 1 << 20) -> bool:
    return any(np.isnan(col[i:i + step]).any() for i in range(0, col.size, step))


def _plain_columns(checked: _Checked, bounds: Mapping[str, Any]) -> _PlainColumns | None:
    """The plain-column reading of the formula (:class:`_PlainColumns`), or None when it needs
    the model-matrix builder: a term other than a column, a column removed with ``-``, a
    column that is not a float64 or integer NumPy column (bool, categorical, extension
    dtypes), or a column without declared bounds (the builder's path reports that)."""
    from dpreg import _formula

    if isinstance(bounds, _AllPrivate):
        return None
    try:
        y_name, x_names, intercept = _formula.linear_terms(checked.parsed)
    except InvalidInputError:
        return None
    rhs = checked.parsed.rhs
    while isinstance(rhs, _formula.Paren):
        rhs = rhs.inner
    if isinstance(rhs, _formula.Chain):  # removals: the builder's term order decides
        for op, item in zip(rhs.ops, rhs.items[1:]):
            while isinstance(item, _formula.Paren):
                item = item.inner
            if op == "-" and not isinstance(item, (_formula.Num, _formula.Unary)):
                return None
    used = [y_name, *x_names]
    if not x_names or y_name in x_names or "Intercept" in used:
        return None
    for name in used:
        dt = checked.dtypes.get(name)
        if not isinstance(dt, np.dtype) or not (dt == np.float64 or dt.kind in "iu"):
            return None
        if not isinstance(bounds.get(name), (tuple, list)):
            return None
    x_bounds, y_bounds = _bounds.xy_bounds(bounds, list(x_names), y_name)
    return _PlainColumns(y_name, list(x_names), intercept, x_bounds, y_bounds)


def parse_formula(data: pd.DataFrame, formula: str, bounds: Mapping[str, Any], *,
                  levels: Mapping[str, Any] | None = None) -> ModelFrame:
    """Resolve ``formula`` on ``data`` into arrays plus public bounds (see module doc).

    The formula is parsed by the restricted grammar of :mod:`dpreg._formula` against the column
    *names* first (nothing is evaluated, no value is read); only a validated formula reaches
    formulaic.  ``bounds`` are given for raw columns (the bounds of generated terms --
    interactions, powers, transforms, dummies -- are derived from them, docs/formulas.md) or
    for a term by its model-matrix name; ``levels`` declares the public levels of categorical
    columns (column -> list, e.g. from a codebook).  A formula of plain numeric columns with
    declared bounds is read from the columns directly (each clipped to its bounds into the
    design matrix; the same arrays formulaic builds).
    """
    checked = _check_formula(data, formula, bounds, levels)
    plain = _plain_columns(checked, bounds)
    if plain is not None:
        plain.check_values(data, checked)
        _check_bound_keys(bounds, checked.names, [])
        return plain.model_frame(data, checked)
    return _model_frame(data, formula, bounds, checked)


def _check_bound_keys(bounds: Mapping[str, Any], names: list[str], terms: list[str]) -> None:
    from dpreg._validation import check_known_keys

    if not isinstance(bounds, _AllPrivate):
        check_known_keys(bounds, names + [c for c in terms if c not in names
                                          and c != "Intercept"],
                         what="a column of the data or a term of the formula")


def _model_frame(data: pd.DataFrame, formula: str, bounds: Mapping[str, Any],
                 checked: _Checked) -> ModelFrame:
    """The model matrices built by formulaic (:func:`dpreg._formula.model_matrices`) from
    the columns clamped to their declared bounds."""
    from dpreg import _formula

    parsed, names, labels, dtypes = (checked.parsed, checked.names, checked.labels,
                                     checked.dtypes)
    # raw numeric columns are clamped to their declared bounds before terms are generated,
    # so every generated column lies in the bounds derived from them (and log/sqrt never see
    # a value outside the declared domain)
    used_as_factor = _formula.categorical_columns(parsed)
    clamped = data
    for col in parsed.columns:
        value = None if isinstance(bounds, _AllPrivate) else bounds.get(col)
        dt = dtypes[col]
        if value is None or isinstance(value, str) or col in used_as_factor \
                or isinstance(dt, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dt):
            continue
        lo, hi = _bounds.column_bounds(bounds, col)
        if clamped is data:
            clamped = data.copy(deep=False)
        clamped[labels[col]] = data[labels[col]].clip(lo, hi)
    mm = _formula.model_matrices(parsed, clamped)
    lhs, rhs = mm.lhs, mm.rhs
    if lhs.shape[1] != 1:
        raise InvalidInputError(f"formula must have exactly one response; got {list(lhs.columns)}")
    y_name = str(lhs.columns[0])
    cols = [str(c) for c in rhs.columns]
    _check_bound_keys(bounds, names, cols + [y_name])
    fit_intercept = "Intercept" in cols
    x_idx = [j for j, c in enumerate(cols) if c != "Intercept"]
    x_names = [cols[j] for j in x_idx]
    if not x_names:
        raise InvalidInputError(f"formula {formula!r} has no regressors besides the intercept")
    derived: dict[str, str] = {}
    x_bounds = [_bounds.term_bounds(name, mm.factors[j], bounds, "regressor", derived)
                for j, name in zip(x_idx, x_names)]
    y_bounds = _bounds.term_bounds(y_name, mm.lhs_factors[0], bounds, "response", derived)
    X = np.asarray(rhs.iloc[:, x_idx], dtype=float)
    y = np.asarray(lhs.iloc[:, 0], dtype=float)
    return ModelFrame(X, y, x_names, y_name, x_bounds, y_bounds, fit_intercept, derived)


def fit_arrays(
    X: np.ndarray, y: np.ndarray, *, method: str, epsilon: float, x_bounds: list[tuple[float, float]],
    y_bounds: tuple[float, float], x_names: list[str] | None = None, y_name: str = "y",
    fit_intercept: bool = True, delta: float | None = None, ledger: Any = None,
    random_state: Any = None, **options: Any,
) -> RegressionResults:
    """Fit ``method`` on arrays (the engine behind :func:`regress`, the CLI and per-group fits):
    the method's spec (:mod:`dpreg.methods`) fits it -- ``auto`` chooses a method privately
    (:func:`dpreg.auto.fit_auto`), every other method goes through :func:`dpreg._dispatch.fit`.

    Options not given take the method's own defaults (e.g. ``inference="auto"`` for
    noisy-stats/AdaSSP: the interval statistics wherever the release supports them)."""
    from dpreg import _dispatch

    entry = methods.get(method)
    try:
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError("X and y must be numeric arrays (got non-numeric or ragged "
                                "values)") from None
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    names = x_names or [f"x{j}" for j in range(X.shape[1])]
    if not entry.is_selector and (isinstance(y_bounds, str) or isinstance(x_bounds, str)
                                  or any(isinstance(b, str) for b in x_bounds)):
        raise InvalidInputError("bounds='private' (bounds-free mode) needs method='auto'")
    if entry.one_x_only and X.shape[1] != 1:
        raise InvalidInputError(
            f"method {method!r} fits y on exactly one x; got {X.shape[1]} regressors ({names}). "
            f"Use one of {list(MULTI)} for several regressors."
        )
    if entry.needs_delta and delta is None:
        raise InvalidInputError(f"delta is required for method {method!r} (a value in (0, 1), "
                                "e.g. 1e-6 or smaller than 1/n)")
    if entry.is_selector:  # private selection (+ bounds-free mode)
        entry.check_options(options)
        out = entry.fit(X, y, epsilon=epsilon, delta=delta, x_bounds=x_bounds,
                        y_bounds=y_bounds, x_names=names, y_name=y_name,
                        fit_intercept=fit_intercept, ledger=ledger, random_state=random_state,
                        options=dict(options))
    else:
        out = _dispatch.fit(
            method, X, y, epsilon=epsilon, delta=delta,
            x_bounds=x_bounds, y_bounds=y_bounds, x_names=names, y_name=y_name,
            fit_intercept=fit_intercept, ledger=ledger, random_state=random_state,
            options=options,
        )
    # the budget as the user gave it, next to the exact accounting (dpreg.privacy.units)
    return out.replace(privacy=out.privacy.with_requested(epsilon, delta))


def charged_budget(method: str, *, epsilon: float, delta: float | None,
                   options: dict[str, Any], n_features: int = 1) -> Any:
    """The budget one fit of ``method`` charges to a ledger, from public inputs only:
    :func:`dpreg.auto.charged_budget` for ``auto``, :func:`dpreg._dispatch.charged_budget`
    for every other method (the per-group table charges this once)."""
    from dpreg import _dispatch

    spec = methods.get(method)
    if spec.is_selector:
        return spec.budget(epsilon=epsilon, delta=delta, options=options, n_features=n_features)
    return _dispatch.charged_budget(method, epsilon=epsilon, delta=delta, options=options,
                                    n_features=n_features)


def source_methods() -> tuple[str, ...]:
    """Methods that fit from a file or a Spark DataFrame (one pass of chunked sufficient
    statistics): those whose spec has a statistics step for a data source
    (:func:`dpreg._dispatch.source_methods`)."""
    from dpreg import _dispatch

    return _dispatch.source_methods()


def needs_memory_message(method: Any) -> str:
    """The error for a method that cannot fit from a file or a Spark DataFrame: why, and what
    to do (load the columns into memory, or use a sufficient-statistics method).  Raised
    before anything is read, charged or drawn."""
    name = str(method)
    why = methods.REGISTRY[name].needs_rows if name in methods.REGISTRY else None
    if method not in methods.REGISTRY or why is None:
        return (f"method {method!r} cannot fit from a file or a Spark DataFrame; those fit "
                f"{list(source_methods())} (one pass of sufficient statistics)"
                + methods.suggest(method))
    return (f"method {name!r} cannot fit from a file or a Spark DataFrame: {why}. Load the "
            "columns it uses into memory and pass the pandas DataFrame instead (e.g. "
            "pandas.read_parquet(path, columns=[...]), or sdf.select(...).toPandas() for a "
            f"Spark DataFrame), or use a method that releases sufficient statistics in one "
            f"pass: {list(source_methods())}")


def _regress_source(data: Any, formula: str, *, method: str, epsilon: float, bounds: Any,
                    delta: float | None, ledger: Any, random_state: Any,
                    options: dict[str, Any]) -> RegressionResults:
    """``regress`` on a file or Spark source: the formula is parsed against the column names
    (plain columns only), then the method's statistics step reads the source in one pass and
    the same release as for a DataFrame runs on the driver."""
    from dpreg import _dispatch, _formula
    from dpreg._source import open_source

    if method not in source_methods():
        raise InvalidInputError(needs_memory_message(method))
    if not isinstance(bounds, Mapping):
        raise InvalidInputError(
            f"bounds must be a dict mapping column -> (lo, hi); got {type(bounds).__name__}")
    source = open_source(data)
    try:
        response, regressors, intercept = _formula.linear_terms(
            _formula.parse_formula(formula, source.columns))
    except InvalidInputError as exc:
        raise InvalidInputError(
            f"{exc} (from a file or a Spark DataFrame the formula may use plain column names "
            "only: 'y ~ x1 + x2', '- 1' to drop the intercept)") from None
    if not regressors:
        raise InvalidInputError(f"formula must have at least one regressor; got {formula!r}")
    x_bounds, y_bounds = _bounds.xy_bounds(bounds, regressors, response, allow_private=True)
    return _dispatch.fit_source(method, source, x_cols=regressors, y_col=response,
                                epsilon=epsilon, delta=delta, x_bounds=x_bounds,
                                y_bounds=y_bounds, fit_intercept=intercept, ledger=ledger,
                                random_state=random_state, options=options)


@public_function()
def regress(
    data: pd.DataFrame, formula: str, *, method: str, epsilon: float,
    bounds: Mapping[str, Any] | str | None = None, delta: float | None = None, ledger: Any = None,
    random_state: Any = None, codebook: Any = None, **method_options: Any,
) -> RegressionResults:
    """Fit a DP linear regression described by a formula on a DataFrame.

    Parameters
    ----------
    data:
        pandas DataFrame holding the private data; or, for the sufficient-statistics methods
        (:func:`source_methods`), a path to a Parquet/CSV file (streamed in chunks: memory is
        bounded by the chunk, not the file) or a Spark DataFrame (statistics aggregated on the
        executors) -- the formula may then use plain column names only.
    formula:
        ``"y ~ x1 + x2"`` (restricted formula grammar, docs/formulas.md; ``- 1`` drops the
        intercept).  Anything outside the grammar is an ``InvalidInputError`` naming the token.
    method:
        One of :data:`METHODS` (see the module documentation).
    epsilon, delta:
        Privacy budget of this fit (δ for the methods that need it).
    bounds:
        Public ``(lo, hi)`` per raw column used by the formula; the bounds of generated terms
        (interactions, powers, transforms, dummies) are derived from them by interval
        arithmetic and stated in the summary (docs/formulas.md), or given by the term's name.
        A key that is neither a column nor a term is an error with a did-you-mean.  With
        ``method="auto"`` a column's entry may be ``"private"``, or ``bounds="private"`` for
        all columns: DP bounds are then proposed from part of ε (see :mod:`dpreg.auto`).
    codebook:
        A codebook (path to a TOML file, or a :class:`dpreg.codebook.Codebook`;
        docs/codebook.md): public bounds and categorical levels of the raw columns, and
        optionally the public n (checked under replace-one neighbours).  ``bounds`` given here
        extend it and win for the same key.
    ledger:
        Optional :class:`dpreg.Ledger` charged before any noise is drawn (default: the
        session's default ledger, :func:`dpreg.set_default_ledger`, if one is set).
    random_state:
        ``None`` (fresh OS entropy, for releases) or a seed (reproducible experiments).
    method_options:
        Method hyperparameters (e.g. ``theta=0.01`` for ``theil-sen-wide``, ``n_models`` for
        ``tukey-em``).  Uncertainty (docs/uncertainty.md): ``noisy-stats``/``adassp`` release
        the statistics of their DP-aware parametric-bootstrap intervals by default
        (``inference="auto"``, same budget; ``inference=False`` gives the plain release),
        ``covariance-ols`` is DP-aware by default (``se="plugin"``: labelled plug-in SEs),
        ``ci_alpha=`` for the Theil-Sen methods (a DP slope interval from half of ε).

    Returns
    -------
    RegressionResults
        ``params``, ``bse``/``conf_int`` where a valid one exists, ``summary()``, ``privacy``.
    """
    if isinstance(epsilon, float) and math.isnan(epsilon):
        raise InvalidInputError("epsilon must be a real number with 0 < epsilon <= inf; got nan")
    from dpreg._dispatch import check_option_keys

    check_option_keys(method_options)  # e.g. fit_intercept=: the formula says it
    from dpreg._source import is_external
    from dpreg.codebook import merge_bounds, resolve_codebook

    cb = resolve_codebook(codebook, [str(c) for c in data.columns]
                          if isinstance(data, pd.DataFrame) else None)
    merged: Any = merge_bounds(cb, bounds)
    if merged is None:
        raise InvalidInputError("bounds are required: pass bounds={column: (lo, hi), ...} with "
                                "public limits, or codebook=PATH (docs/codebook.md)")
    if is_external(data):  # a Parquet/CSV path or a Spark DataFrame: read in chunks
        return _regress_source(data, formula, method=method, epsilon=epsilon, bounds=merged,
                               delta=delta, ledger=ledger, random_state=random_state,
                               options=method_options)
    if isinstance(merged, str) and merged == "private":
        merged = _AllPrivate()
    levels = cb.levels() if cb else None
    spec = methods.REGISTRY.get(method) if isinstance(method, str) else None
    if spec is not None and spec.reads_columns:
        checked = _check_formula(data, formula, merged, levels)
        plain = _plain_columns(checked, merged)
        if plain is not None:  # the frame's columns read in place, clipped chunk by chunk
            plain.check_values(data, checked)
            _check_bound_keys(merged, checked.names, [])
            if cb is not None:
                cb.check_n(data.shape[0], _n_is_public(method, method_options),
                           f"method {method!r}")
            from dpreg import _dispatch

            res = _dispatch.fit_source(
                method, plain.source(data, checked), x_cols=plain.x_names,
                y_col=plain.y_name, epsilon=epsilon, delta=delta, x_bounds=plain.x_bounds,
                y_bounds=plain.y_bounds, fit_intercept=plain.fit_intercept, ledger=ledger,
                random_state=random_state, options=method_options)
            return res.replace(privacy=res.privacy.with_requested(epsilon, delta))
    mf = parse_formula(data, formula, merged, levels=levels)
    if cb is not None:
        cb.check_n(data.shape[0], _n_is_public(method, method_options), f"method {method!r}")
        method_options = codebook_y_levels(cb, mf.y_name, spec, method_options)
    res = fit_arrays(
        mf.X, mf.y, method=method, epsilon=epsilon, x_bounds=mf.x_bounds, y_bounds=mf.y_bounds,
        x_names=mf.x_names, y_name=mf.y_name, fit_intercept=mf.fit_intercept, delta=delta,
        ledger=ledger, random_state=random_state, **method_options,
    )
    if mf.derived:  # a new (frozen) result that also says which bounds were derived
        res = res.replace(extra={**res.extra, "derived_bounds": dict(mf.derived)})
    return res


def codebook_y_levels(cb: Any, y_name: str, spec: Any, options: Mapping[str, Any]
                      ) -> dict[str, Any]:
    """``options`` with ``y_levels`` from the codebook's numeric ``levels`` of the response
    (:meth:`dpreg.codebook.Codebook.numeric_levels`) for a method that takes it (the
    Theil-Sen methods, which then warn that few levels tie many pairwise slopes at 0); an
    explicit ``y_levels`` wins.  Public inputs only."""
    out = dict(options)
    if spec is None or "y_levels" not in spec.options or "y_levels" in out or cb is None:
        return out
    found = cb.numeric_levels(str(y_name))
    if found is not None:
        out["y_levels"] = list(found)
    return out


def _n_is_public(method: str, options: Mapping[str, Any]) -> bool:
    """Whether a fit of ``method`` is stated under replace-one neighbours (n public): the
    ``neighbouring=`` option if given, else the method's default relation (its spec)."""
    from dpreg.privacy import Neighbouring, check_neighbouring

    rel = options.get("neighbouring", methods.get(method).relation)
    try:
        return check_neighbouring(rel) is Neighbouring.REPLACE_ONE
    except InvalidInputError:
        return False  # an unknown relation is reported by the fit's own checks
