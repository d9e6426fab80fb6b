"""Shared scikit-learn plumbing for the DP estimators.

Estimators are thin: ``__init__`` stores parameters verbatim (sklearn contract); ``fit``
validates everything (data, bounds, budget) *before* charging the optional ledger and calling
the functional core, then stores ``coef_``, ``intercept_``, ``results_`` (a
:class:`~dpreg.inference.RegressionResults`) and ``privacy_`` (a
:class:`~dpreg.privacy.PrivacyStatement`).  A ⊥ release raises
:class:`~dpreg.exceptions.MechanismFailure` from ``fit`` (``raise_on_failure=True``, the
default) or is kept as ``results_`` with ``failed`` True (``raise_on_failure=False``; ``predict``
then raises); the budget stays charged because the failure is itself a private output.
"""

from __future__ import annotations

import functools
import inspect
from abc import ABCMeta, abstractmethod
from collections.abc import Sequence
from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from dpreg._validation import check_bounds, check_delta, check_epsilon, check_xy
from dpreg.exceptions import InvalidInputError, InvalidParameterError, MechanismFailure
from dpreg.inference import RegressionResults
from dpreg.inference.uncertainty import reparametrised_kwargs
from dpreg.multivariate import PublicScaling
from dpreg.privacy.notices import public_entry
from dpreg.simple import SimpleRegressionResult

__all__ = ["DPRegressorBase", "resolve_bounds_X", "feature_names", "safe_validation_error",
           "resolve_inference"]


def resolve_bounds_X(bounds_X: Any, n_features: int, name: str = "bounds_X") -> list[tuple[float, float]]:
    """Public per-feature bounds: one ``(lo, hi)`` pair for all features, or one per feature."""
    if bounds_X is None:
        raise InvalidInputError(
            f"{name} is required: give public (lo, hi) bounds for each feature (from domain "
            "knowledge or a codebook; dpreg never reads them off the private data), e.g. "
            f"{name}=[(0, 1)] * n_features or a single (lo, hi) pair for all features"
        )
    if (isinstance(bounds_X, (tuple, list, np.ndarray)) and len(bounds_X) == 2
            and all(np.isscalar(v) for v in bounds_X)):
        pair = check_bounds(bounds_X, name)
        return [pair] * n_features
    if not isinstance(bounds_X, Sequence) or isinstance(bounds_X, str):
        raise InvalidInputError(f"{name} must be a (lo, hi) pair or a list of them; got {bounds_X!r}")
    if len(bounds_X) != n_features:
        raise InvalidInputError(
            f"{name} must have one (lo, hi) pair per feature ({n_features}); got {len(bounds_X)}"
        )
    return [check_bounds(b, f"{name}[{j}]") for j, b in enumerate(bounds_X)]


#: scikit-learn's input-validation messages, mapped to messages that keep its meaning but carry
#: no data: sklearn echoes the whole array for a 1-D X, the offending string for text cells and
#: the row counts for mismatched lengths (see docs/threat-model.md)
_SKLEARN_MESSAGES: tuple[tuple[str, str], ...] = (
    ("Expected 2D array, got 1D array",
     "X must be a 2-D array of shape (n_samples, n_features); got a 1-D array. Reshape your "
     "data with X.reshape(-1, 1) for a single feature (or X.reshape(1, -1) for a single "
     "sample)"),
    ("contains NaN", "X must contain only finite numbers; NaN or inf found"),
    ("contains infinity", "X must contain only finite numbers; NaN or inf found"),
    ("Expected 2D array, got scalar",
     "X must be a 2-D array of shape (n_samples, n_features); got a scalar"),
    ("inconsistent numbers of samples", "X and y must have the same number of rows; they differ"),
    ("Complex data not supported", "Complex data not supported: X and y must be real numbers"),
    ("could not convert", "X and y must contain only numbers (non-numeric values found)"),
    ("sparse", "X must be a dense array: sparse input is not supported by this estimator"),
    ("0 feature(s)", "X must have at least one feature (column)"),
    ("Found array with dim", "X must be a 2-D array of shape (n_samples, n_features)"),
    ("Unknown label type", "y must contain real numbers"),
    ("y should be a 1d array", "y must be a 1-D array of real numbers"),
)


def safe_validation_error(exc: ValueError, *, min_rows: int = 1,
                          n_public: bool = False) -> InvalidInputError:
    """An :class:`InvalidInputError` for a ValueError from scikit-learn's ``validate_data``
    that never repeats sklearn's text verbatim (which can contain data values and counts):
    known messages are mapped to fixed wordings; messages about the *public* shape contract
    (feature counts and names seen at fit time; the shape of a zero-feature X when n is public)
    are kept; anything else gets a generic message."""
    if isinstance(exc, InvalidInputError):
        return exc
    text = str(exc)
    if n_public and ("0 feature(s) (shape=" in text or "sample(s) (shape=" in text):
        return InvalidInputError(text)  # only the shape: n is public (replace-one)
    for marker, message in _SKLEARN_MESSAGES:
        if marker in text:
            return InvalidInputError(message)
    if "sample(s)" in text and "minimum of" in text:
        return InvalidInputError(f"X and y must have at least {max(1, min_rows)} row(s) for "
                                 "this method")
    if ("features, but" in text and "is expecting" in text) or "feature names" in text:
        return InvalidInputError(text)  # public: the fitted model's feature count / names
    return InvalidInputError("X and y must be numeric arrays of matching length (the input "
                             "did not pass scikit-learn's validation)")


def resolve_inference(value: Any, *, supported: bool) -> bool:
    """The ``inference`` parameter of NoisyStats/AdaSSP: ``True``/``False`` as given, or
    ``"auto"`` (the default): ``True`` exactly when the release can carry an interval
    (``supported``, decided from public facts only: n under replace-one, the intercept)."""
    if isinstance(value, str) and value == "auto":
        return bool(supported)
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidParameterError(f"inference must be True, False or 'auto'; got {value!r}")
    return bool(value)


@functools.cache
def _specs_of(cls: type) -> tuple[tuple[Any, ...], dict[str, Any], frozenset[str]]:
    """The method specs fitted with estimator ``cls``, its ``__init__`` defaults and the
    union of those specs' option names (public facts of the class, cached once)."""
    from dpreg import methods

    mine = tuple(m for m in methods.specs(selector=False) if m.estimator is not None
                 and m.estimator_class() is cls)
    defaults = {k: p.default for k, p in inspect.signature(cls).parameters.items()}
    return mine, defaults, frozenset().union(*(set(m.options) for m in mine))


def _same(a: Any, b: Any) -> bool:
    """Whether a parameter is at its default (``is``, or equal for plain values)."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # e.g. an array: not a default
        return False


def feature_names(X: Any, n_features: int) -> list[str]:
    cols = getattr(X, "columns", None)
    if cols is not None and len(cols) == n_features:
        return [str(c) for c in cols]
    return [f"x{j}" for j in range(n_features)]


class DPRegressorBase(RegressorMixin, BaseEstimator, metaclass=ABCMeta):
    """Common ``fit`` (the public-call scope around each estimator's :meth:`_fit`), validation,
    ``predict`` and fitted attributes."""

    #: minimum number of rows the method needs
    _min_rows: int = 2

    @public_entry
    def fit(self, X: Any, y: Any) -> Self:
        """Fit the release to ``X`` (2-D, n × d) and ``y`` (1-D, n); returns the estimator.

        One public call (:func:`dpreg.privacy.notices.public_entry`): it warns once about a weak
        seed or a large δ, records the estimator and its requested budget with every ledger
        charge inside, and an outermost fit with ``ledger=None`` charges the session's default
        ledger.  Fits nested inside it (``DPGradientDescent`` → its inner estimator) do not warn
        or charge the default again.  The estimator's own work is :meth:`_fit`."""
        rof = getattr(self, "raise_on_failure", True)
        if not isinstance(rof, (bool, np.bool_)):
            raise InvalidParameterError(f"raise_on_failure must be True or False; got {rof!r}")
        self._refuse_unused(X)
        self._fit(X, y)
        return self

    #: True where the estimator applies its method's option rule itself (DPGradientDescent)
    _own_unused_check: bool = False

    def _refuse_unused(self, X: Any) -> None:
        """A hyperparameter set away from its default that this fit would not use is an error
        naming it -- never silently dropped -- by the rule of the method's spec
        (:meth:`dpreg._spec.MethodSpec.check_options`' ``used_if``, the rule ``regress``
        applies), raised before anything is read, charged or drawn."""
        if self._own_unused_check:
            return
        mine, defaults, options = _specs_of(type(self))
        if not mine:
            return
        params = self.get_params(deep=False)
        spec = next((m for m in mine if all(params.get(k) == v for k, v in
                                            m.estimator_options.items())), None)
        if spec is None:
            return
        given = {k: params[k] for k in options if k in params
                 and not _same(params[k], defaults.get(k))}
        fixed = ", ".join(f"{k}={v!r}" for k, v in spec.estimator_options.items())
        for key, value in given.items():
            if key not in spec.options:
                raise InvalidParameterError(
                    f"{key}={value!r} is not used by {type(self).__name__} with {fixed} "
                    f"(method {spec.name!r}); remove it (or leave it at its default "
                    f"{defaults.get(key)!r})")
        shape = getattr(X, "shape", None)
        context = {"n_features": shape[1] if shape is not None and len(shape) == 2 else None,
                   "ci_alpha": params.get("ci_alpha")}
        full = {k: params[k] for k in spec.options if k in params}
        for key, value in given.items():
            if not spec.uses(key, full, context):
                raise InvalidParameterError(
                    f"{key}={value!r} is not used by {type(self).__name__} "
                    f"{spec.options[key].when or 'with these settings'}; remove it (or leave "
                    f"it at its default {defaults.get(key)!r})")

    @abstractmethod
    def _fit(self, X: Any, y: Any) -> object:
        """The estimator's fit proper (validation, the release, :meth:`_store`), run inside
        :meth:`fit`'s public-call scope; every estimator defines it and none overrides
        :meth:`fit`."""

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        # DP noise makes the fit deliberately imprecise on scikit-learn's tiny test problems.
        tags.regressor_tags.poor_score = True
        tags.non_deterministic = getattr(self, "random_state", None) is None
        return tags

    def _n_is_public(self) -> bool:
        """True when the estimator's guarantee is stated for replace-one neighbours (n public);
        row-count checks may only run then."""
        from dpreg.privacy.neighbours import Neighbouring, check_neighbouring

        rel = getattr(self, "neighbouring", "replace-one")
        try:
            return check_neighbouring(rel) is Neighbouring.REPLACE_ONE
        except InvalidInputError:
            return True  # an invalid relation is reported by the core's own check

    def _validate(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        """scikit-learn's input conventions (sparse, complex, shapes, feature names) followed by
        dpreg's checks (finite numbers, matching lengths); every rejection is an
        :class:`InvalidInputError` naming the problem.  Sets ``n_features_in_`` and
        ``feature_names_in_``."""
        if y is None:
            raise InvalidInputError(
                f"y is required: {type(self).__name__} requires y to be passed, but the target "
                "y is None"
            )
        # a minimum row count is a fact about n: enforced only where n is public
        min_rows = self._min_rows if self._n_is_public() else 1
        try:
            Xv, yv = validate_data(self, X, y, dtype=np.float64, y_numeric=True,
                                   ensure_min_samples=max(1, min_rows),
                                   ensure_all_finite=False)
        except ValueError as exc:
            raise safe_validation_error(exc, min_rows=min_rows,
                                        n_public=self._n_is_public()) from None
        return check_xy(Xv, yv, x_ndim=2, min_rows=min_rows, x_name="X", y_name="y")

    def _required_epsilon(self) -> float:
        eps = getattr(self, "epsilon", None)
        if eps is None:
            raise InvalidInputError(
                "epsilon is required: the privacy budget of this fit (a real number in (0, inf]); "
                "got None"
            )
        return check_epsilon(eps)

    def _required_delta(self) -> float:
        delta = getattr(self, "delta", None)
        if delta is None:
            raise InvalidInputError(
                f"delta is required for {type(self).__name__}: a real number with 0 < delta < 1 "
                "(well below 1/n, e.g. 1e-6); got None"
            )
        return check_delta(delta, allow_zero=False)

    def _store(self, results: RegressionResults) -> DPRegressorBase:
        if results.bounds is None:  # record the public bounds this fit used (a new result)
            results = results.replace(bounds=self._public_bounds(results))
        # the budget as the user gave it, next to the exact accounting (dpreg.privacy.units)
        results = results.replace(privacy=results.privacy.with_requested(
            getattr(self, "epsilon", None), getattr(self, "delta", None)))
        self.results_ = results
        self.privacy_ = results.privacy
        if results.failed:  # ⊥: no line to keep (a previous fit's coefficients are dropped)
            for attr in ("coef_", "intercept_"):
                if hasattr(self, attr):
                    delattr(self, attr)
            if getattr(self, "raise_on_failure", True) is not False:
                raise MechanismFailure(results.reason)
            return self
        p = results.params
        self.intercept_ = float(p["intercept"]) if "intercept" in p.index else 0.0
        self.coef_ = p.drop("intercept").to_numpy() if "intercept" in p.index else p.to_numpy()
        return self

    def _public_bounds(self, results: RegressionResults) -> dict[str, tuple[float, float]] | None:
        """The public bounds this fit used, keyed by coefficient name (None when not given)."""
        out: dict[str, tuple[float, float]] = {}
        by = getattr(self, "bounds_y", None)
        if by is not None:
            out[results.dep_var] = check_bounds(by, "bounds_y")
        bx = getattr(self, "bounds_X", None)
        names = [n for n in results._names if n != "intercept"]
        if bx is not None and names:
            out.update(zip(names, resolve_bounds_X(bx, len(names))))
        return out or None

    def predict(self, X: Any) -> np.ndarray:
        """Linear predictions ``X @ coef_ + intercept_`` (post-processing of the release).
        After a ⊥ fit (``raise_on_failure=False``) there is no line: raises
        :class:`~dpreg.exceptions.MechanismFailure` with the release's reason."""
        res = getattr(self, "results_", None)
        if res is not None and res.failed:
            raise MechanismFailure(f"the fitted release is ⊥ (the mechanism failed: "
                                   f"{res.reason}); it has no coefficients to predict with -- "
                                   "refit (the failure already spent its budget)")
        check_is_fitted(self, "coef_")
        try:
            Xv = validate_data(self, X, reset=False, dtype=np.float64)
        except ValueError as exc:
            raise safe_validation_error(exc) from None
        return Xv @ self.coef_ + self.intercept_


# --------------------------------------------------------------------------------------------
# one-feature estimators (thin layers over dpreg.simple): NoisyStats, DPTheilSen,
# SimpleDPGradientDescent.  All ε-DP (or ρ-zCDP / (ε, δ)-DP for DP-GD) under replace-one
# neighbours with n public; bounds_X (a (lo, hi) pair or a list with one pair) and bounds_y are
# public inputs.
# --------------------------------------------------------------------------------------------
class _SimpleRegressor(DPRegressorBase):
    _min_rows = 2

    def _prepare(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, Any, Any]:
        if self.fit_intercept is not True:
            raise InvalidInputError(
                f"fit_intercept must be True for {type(self).__name__} (the simple-regression "
                f"mechanisms always fit an intercept); got {self.fit_intercept!r}"
            )
        Xa, ya = self._validate(X, y)
        if Xa.shape[1] != 1:
            raise InvalidInputError(
                f"X must have exactly one column for {type(self).__name__} (simple regression); "
                f"got {Xa.shape[1]} columns -- use a multivariate estimator instead"
            )
        bx = resolve_bounds_X(self.bounds_X, 1)[0]
        if self.bounds_y is None:
            raise InvalidInputError(
                "bounds_y is required: give public (lo, hi) bounds for y (from domain "
                "knowledge or a codebook; dpreg never reads them off the private data)"
            )
        by = check_bounds(self.bounds_y, "bounds_y")
        return Xa[:, 0], ya, bx, by

    def _finish(self, X: Any, res: SimpleRegressionResult, **kw: Any) -> _SimpleRegressor:
        name = feature_names(X, 1)[0]
        return self._store(res.to_regression_results(x_name=name, y_name="y", **kw))  # type: ignore[return-value]


def _require_epsilon(epsilon: Any) -> float:
    if epsilon is None:
        raise InvalidInputError("epsilon is required: the privacy budget of this fit; got None")
    return check_epsilon(epsilon)


# --------------------------------------------------------------------------------------------
# several-feature estimators: AdaSSP, BoostedAdaSSP, TukeyEM, ClippedDPGradientDescent,
# CovarianceOLS.  ``fit`` validates the data and every parameter, rescales features (and the
# label, where bounds are given) with the PUBLIC bounds (PublicScaling; an intercept is a
# leading column of ones), calls the functional core -- which charges the optional ledger after
# its own validation and before any noise -- and maps the coefficients back to original units.
# --------------------------------------------------------------------------------------------
def _check_fit_intercept(value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidInputError(f"fit_intercept must be True or False; got {value!r}")
    return bool(value)


def _ssp_fit_statistics(model: Any, scaling: PublicScaling | None, fit_intercept: bool,
                        extra: dict[str, Any]) -> dict[str, Any]:
    """R², σ̂² (original units, in ``extra``) and ``df_resid`` of a release whose bootstrap
    world holds released second moments (AdaSSP with ``inference``): post-processing of the
    noisy XᵀX, Xᵀy, yᵀy and the released coefficients (:mod:`dpreg.inference.prediction`).
    R² is invariant under the public rescaling; σ̂² is scaled back by the label's scale.
    Returns the ``df_resid`` keyword (n public or the noisy count, minus p)."""
    from dpreg.inference.prediction import sscp_fit_statistics

    needed = ("xtx", "xty", "yty", "theta", "n_world", "s2")
    if not all(hasattr(model, k) for k in needed):
        return {}
    n = float(model.n_world)
    extra.update(sscp_fit_statistics(xtx=model.xtx, xty=model.xty, yty=model.yty,
                                     theta=model.theta, n=n,
                                     intercept_index=0 if fit_intercept else None))
    y_scale = scaling.y_scale if scaling is not None else 1.0
    extra["s2"] = float(model.s2) * y_scale * y_scale
    df = n - int(np.asarray(model.theta).size)
    return {"df_resid": df} if df > 0 else {}


class _MultivariateBase(DPRegressorBase):
    """Shared fit plumbing."""

    _needs_y_bounds = True
    _unit_ball = False


    def _prepare(self, X: Any, y: Any, *, require_x_bounds: bool = True
                 ) -> tuple[np.ndarray, np.ndarray, PublicScaling | None, list[str]]:
        Xa, ya = self._validate(X, y)
        n, d = Xa.shape
        fit_intercept = _check_fit_intercept(self.fit_intercept)  # type: ignore[attr-defined]
        p = d + (1 if fit_intercept else 0)
        # n <= p is refused only where n is public (replace-one neighbours): under add/remove
        # n is private, and the release itself handles a short (or constant-column) design --
        # the noise and the ridge keep it well defined -- so no data-dependent check runs.
        # A constant column is never refused: a declared categorical level with no rows gives
        # a legitimate all-zero dummy, and saying "column c is constant" would reveal a fact
        # about the private data (see docs/threat-model.md).
        if self._n_is_public() and n <= p:
            raise InvalidInputError(
                f"X must have more rows than model parameters ({p}: {d} features"
                f"{' + intercept' if fit_intercept else ''}) under replace-one neighbours "
                "(n public); DP regression needs n > p"
            )
        names = feature_names(X, d)
        bounds_X = self.bounds_X  # type: ignore[attr-defined]
        bounds_y = self.bounds_y  # type: ignore[attr-defined]
        if bounds_X is None and not require_x_bounds:
            if bounds_y is not None:
                raise InvalidInputError(
                    "bounds_X must be given together with bounds_y (or leave both None): the "
                    "public scaling needs the feature bounds; got bounds_X=None"
                )
            return Xa, ya, None, names
        bx = resolve_bounds_X(bounds_X, d)
        if bounds_y is None and self._needs_y_bounds:
            raise InvalidInputError(
                "bounds_y is required: give public (lo, hi) bounds for the response (from "
                "domain knowledge, never from the data), e.g. bounds_y=(0, 100)"
            )
        if bounds_y is not None:
            check_bounds(bounds_y, "bounds_y")
        scaling = PublicScaling.from_bounds(bx, bounds_y, fit_intercept=fit_intercept,
                                            unit_ball=self._unit_ball)
        return Xa, ya, scaling, names

    def _prepare_source(self, source: Any, x_cols: Sequence[str], y_col: str
                        ) -> tuple[PublicScaling, list[str]]:
        """The public scaling for a fit from a :class:`~dpreg._source.DataSource` (a file or
        a Spark DataFrame read in chunks): bounds and options are checked from the names
        alone, before any value is read."""
        names = source.check_columns([*x_cols, y_col])[:-1]
        d = len(names)
        fit_intercept = _check_fit_intercept(self.fit_intercept)  # type: ignore[attr-defined]
        n = getattr(source, "n_rows", None)  # known for in-memory columns (a DataFrame's)
        p = d + (1 if fit_intercept else 0)
        if n is not None and self._n_is_public() and n <= p:  # as _prepare
            raise InvalidInputError(
                f"X must have more rows than model parameters ({p}: {d} features"
                f"{' + intercept' if fit_intercept else ''}) under replace-one neighbours "
                "(n public); DP regression needs n > p"
            )
        bx = resolve_bounds_X(self.bounds_X, d)  # type: ignore[attr-defined]
        by = self.bounds_y  # type: ignore[attr-defined]
        if by is None:
            raise InvalidInputError(
                "bounds_y is required: give public (lo, hi) bounds for the response (from "
                "domain knowledge, never from the data), e.g. bounds_y=(0, 100)")
        check_bounds(by, "bounds_y")
        self._required_epsilon()
        self._required_delta()
        self.n_features_in_ = d
        self.feature_names_in_ = np.asarray(names, dtype=object)
        return PublicScaling.from_bounds(bx, by, fit_intercept=fit_intercept,
                                         unit_ball=self._unit_ball), names

    def _finish(self, core: RegressionResults, scaling: PublicScaling | None,
                names: list[str], fit_intercept: bool) -> DPRegressorBase:
        from dpreg import methods

        out_names = (["intercept"] if fit_intercept else []) + names
        extra = dict(core.extra)
        entry = methods.REGISTRY.get(core.method)
        support = entry.interval if entry is not None else None  # the method's own words
        missing = support.missing if support is not None else ""
        no_fit = core.no_fit_statistics or (support.fit_statistics if support else None)
        if core.failed:
            res = RegressionResults(np.zeros(len(out_names)), names=out_names,
                                    privacy=core.privacy, method=core.method, failed=True,
                                    reason=core.reason, nobs=core.nobs, extra=extra,
                                    uncertainty=missing or core.uncertainty,
                                    no_fit_statistics=no_fit)
            return self._store(res)
        theta = core.params.to_numpy()
        if scaling is not None:
            intercept, coef = scaling.to_original(theta)
            extra["scaling"] = {"column_factor": scaling.column_factor,
                                "label_scaled": scaling.y_bounds is not None}
        else:
            intercept, coef = (float(theta[0]), theta[1:]) if fit_intercept else (0.0, theta)
        params = np.concatenate([[intercept], coef]) if fit_intercept else np.asarray(coef)
        if core.bootstrap is not None:  # DP-aware interval: report it in original units
            def to_params(th: np.ndarray) -> np.ndarray:
                if scaling is not None:
                    b0, bj = scaling.to_original(th)
                else:
                    b0, bj = (float(th[0]), th[1:]) if fit_intercept else (0.0, th)
                return np.concatenate([[b0], bj]) if fit_intercept else np.asarray(bj)

            kw = reparametrised_kwargs(core, to_params, out_names, point=params)
            extra.update(kw.pop("extra_uncertainty"))
            kw.update(_ssp_fit_statistics(core.bootstrap.model, scaling, fit_intercept, extra))
        else:
            own = core.has_bse or core.extra.get("dp_ci_refused")  # a refusal keeps its reason
            kw = {"uncertainty": core.uncertainty if own else (missing or core.uncertainty),
                  "ci_method": None if core.has_bse else "none"}
        res = RegressionResults(params, names=out_names, privacy=core.privacy,
                                method=core.method, nobs=core.nobs, extra=extra,
                                no_fit_statistics=no_fit, **kw)
        return self._store(res)

    @staticmethod
    def _design(Xa: np.ndarray, scaling: PublicScaling | None, fit_intercept: bool
                ) -> np.ndarray:
        if scaling is not None:
            return scaling.design(Xa)
        return np.column_stack([np.ones(Xa.shape[0]), Xa]) if fit_intercept else Xa
