"""Input validation shared by every public function.

Each checker either returns the normalised value or raises
:class:`~dpreg.exceptions.InvalidInputError` whose message names the parameter, the allowed
range and the value received.  Callers run all checks *before* drawing noise or charging a
ledger, so rejected input costs no privacy budget.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import re
import warnings
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any, TypeVar, cast

import numpy as np

from dpreg._random import check_rng, is_seeded  # re-exported (the modes live in dpreg._random)
from dpreg.exceptions import InvalidInputError, InvalidParameterError, UnknownNameError

__all__ = [
    "check_rng",
    "is_seeded",
    "check_epsilon",
    "check_delta",
    "EPSILON_MAX",
    "RHO_MAX",
    "MU_MAX",
    "PRIVACY_PARAM_MAX",
    "ASCII_NUMBER",
    "parse_number_text",
    "check_rho",
    "check_mu",
    "check_positive",
    "check_int",
    "check_probability",
    "check_bounds",
    "check_known_keys",
    "did_you_mean",
    "check_array",
    "check_xy",
    "fmt",
    "describe_data",
    "exact_float_key",
    "DEPRECATED",
    "ESTIMATOR_DEPRECATED",
    "renamed_parameters",
    "deprecated_aliases",
    "resolve_renamed",
]

RNGLike = None | int | np.integer | np.random.SeedSequence | np.random.Generator


def fmt(value: Any) -> str:
    """Short printable form of a received *parameter* for error messages.

    Containers that may hold data (arrays, long lists, pandas/polars objects) are described by
    their type only -- never their values or their length (a length can be a private row
    count) -- see :func:`describe_data`.  Scalars, strings and short tuples (bounds) are
    shown: they are the caller's own public parameters."""
    if isinstance(value, (list, tuple)) and len(value) <= 3 and all(
            value is None or isinstance(v, (str, bytes, bool, numbers.Number)) for v in value):
        text = repr(value)
    elif isinstance(value, (str, bytes, bool, numbers.Number)) or value is None:
        text = repr(value)
    else:
        return describe_data(value)
    return text if len(text) <= 80 else text[:77] + "..."


def describe_data(value: Any) -> str:
    """What kind of object ``value`` is, for messages about *data*: type, dtype and number of
    dimensions only -- no values, no row counts (under add/remove neighbours n is private)."""
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"a {value.ndim}-D numpy array of dtype {value.dtype}"
    mod = type(value).__module__.split(".")[0]
    if mod in ("pandas", "polars"):
        return f"a {mod} {type(value).__name__}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__}"
    if isinstance(value, (str, bytes)):
        return f"a {type(value).__name__}"
    if isinstance(value, numbers.Number):
        return f"a {type(value).__name__}"
    return f"an object of type {type(value).__name__}"


def _fail(name: str, expected: str, value: Any) -> InvalidInputError:
    """Rejection of a *parameter* (a usage error: exit 2 on the command line)."""
    return InvalidParameterError(f"{name} must be {expected}; got {fmt(value)}")


def _fail_data(name: str, expected: str, value: Any) -> InvalidInputError:
    """Rejection of a data argument: names the argument and the kind of problem, never values
    or counts."""
    return InvalidInputError(f"{name} must be {expected}; got {describe_data(value)}")


def _as_real(value: Any, name: str, expected: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise _fail(name, expected, value)
    out = float(value)
    if math.isnan(out):
        raise _fail(name, expected, value)
    return out


def check_positive(
    value: Any, name: str, *, allow_inf: bool = False, allow_zero: bool = False
) -> float:
    """A real number > 0 (or >= 0 with ``allow_zero``), finite unless ``allow_inf``."""
    lo = "0 <=" if allow_zero else "0 <"
    expected = f"a real number with {lo} {name}" + (" <= inf" if allow_inf else " < inf")
    out = _as_real(value, name, expected)
    if out < 0 or (out == 0 and not allow_zero) or (math.isinf(out) and not allow_inf):
        raise _fail(name, expected, value)
    return out


#: smallest privacy parameter accepted from users: smaller values are numerically meaningless
#: and their budget splits (ε/2k, ρ/T, ...) would underflow to 0 after the ledger was charged.
#: Mechanisms called with such a split pass ``minimum=0``.
PRIVACY_PARAM_MIN = 1e-100

#: largest ε treated as a privacy guarantee.  Above it a release is NOT PRIVATE in practice: its
#: noise falls below the printed precision of every output for all but tiny n, and the bound
#: e^ε on a likelihood ratio (e^100 ≈ 2.7e43) constrains nothing.  The library's own jobs stay
#: well below it (the demo and the reproductions use ε <= 16; docs go up to ε = 50).  A finite
#: ε above the cap is treated exactly like ε = inf (the exact, non-private answer, labelled NOT
#: PRIVATE in every output); the command line refuses it unless ``--not-private``.
EPSILON_MAX = 100.0
#: the zCDP cap: an ``EPSILON_MAX``-DP release is (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4),
#: so every release private by the ε cap stays private in zCDP units
RHO_MAX = EPSILON_MAX ** 2 / 2
#: the Gaussian-DP cap: μ-GDP is (μ²/2)-zCDP, so ``MU_MAX`` maps onto ``RHO_MAX``; its (ε, δ)
#: curve at small δ lies far above ``EPSILON_MAX`` (the μ cap is never the stricter one)
MU_MAX = EPSILON_MAX
#: the cap of each privacy parameter by name (budget fields ``epsilon``, ``rho``, ``mu``)
PRIVACY_PARAM_MAX = {"epsilon": EPSILON_MAX, "rho": RHO_MAX, "mu": MU_MAX}

#: the one whitelist of a number typed as text (command-line options, ``-o`` values, formula
#: literals): ASCII digits only -- Python's ``float``/``Decimal``/``\d`` also accept Arabic-Indic
#: (``١``), full-width (``１``) and other Unicode digits and ``_`` separators, never wanted here
ASCII_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_number_text(text: str, name: str, expected: str = "a plain decimal number") -> Decimal:
    """The exact value of a number typed as ``text`` (surrounding spaces ignored), read by the
    :data:`ASCII_NUMBER` whitelist; anything else (Unicode digits, ``_``, hex, ``nan``, words)
    is an :class:`~dpreg.exceptions.InvalidParameterError` naming ``name``."""
    raw = str(text).strip()
    if ASCII_NUMBER.fullmatch(raw):
        return Decimal(raw)
    why = ("only ASCII digits 0-9 are accepted in numbers"
           if any(ch.isdigit() or ch.isnumeric() for ch in raw if not ch.isascii())
           else "not a plain decimal number written with the ASCII digits 0-9")
    raise InvalidParameterError(f"{name} must be {expected}; got {fmt(str(text))} ({why})")


def _check_privacy_param(value: Any, name: str, allow_inf: bool, minimum: float,
                         cap: float) -> float:
    out = check_positive(value, name, allow_inf=True)
    if out < minimum:
        raise _fail(name, f"a real number with {minimum:g} <= {name}"
                    + (" <= inf" if allow_inf else f" <= {cap:g}"), value)
    if out > cap:
        if not allow_inf:  # no non-private path here: above the cap is no privacy at all
            raise _fail(name, f"a real number with {minimum:g} <= {name} <= {cap:g} (above "
                        f"{cap:g} a release is not private in practice)", value)
        return math.inf  # the exact, NOT PRIVATE path of an infinite budget
    return out


def check_epsilon(value: Any, name: str = "epsilon", *, allow_inf: bool = True,
                  minimum: float = PRIVACY_PARAM_MIN) -> float:
    """Privacy parameter ε: a real number in [1e-100, ∞]; ``inf`` means *no privacy*, and so
    does any ε above :data:`EPSILON_MAX` (returned as ``inf``).  Without ``allow_inf`` both
    are refused."""
    return _check_privacy_param(value, name, allow_inf, minimum, EPSILON_MAX)


def check_rho(value: Any, name: str = "rho", *, allow_inf: bool = True,
              minimum: float = PRIVACY_PARAM_MIN) -> float:
    """zCDP parameter ρ in [1e-100, ∞]; above :data:`RHO_MAX` it is returned as ``inf`` (no
    privacy)."""
    return _check_privacy_param(value, name, allow_inf, minimum, RHO_MAX)


def check_mu(value: Any, name: str = "mu", *, allow_inf: bool = True,
             minimum: float = PRIVACY_PARAM_MIN) -> float:
    """Gaussian-DP parameter μ in [1e-100, ∞]; above :data:`MU_MAX` it is returned as ``inf``
    (no privacy)."""
    return _check_privacy_param(value, name, allow_inf, minimum, MU_MAX)


def check_delta(value: Any, name: str = "delta", *, allow_zero: bool = True) -> float:
    """δ in [0, 1) (or (0, 1) when the method needs δ > 0)."""
    expected = f"a real number with 0 {'<=' if allow_zero else '<'} {name} < 1"
    out = _as_real(value, name, expected)
    if not (0.0 <= out < 1.0) or (out == 0.0 and not allow_zero):
        raise _fail(name, expected, value)
    return out


def check_probability(value: Any, name: str) -> float:
    """A probability strictly inside (0, 1), e.g. a significance level α."""
    expected = f"a real number with 0 < {name} < 1"
    out = _as_real(value, name, expected)
    if not (0.0 < out < 1.0):
        raise _fail(name, expected, value)
    return out


def check_int(value: Any, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer within [minimum, maximum]."""
    lo = "-inf" if minimum is None else str(minimum)
    hi = "inf" if maximum is None else str(maximum)
    expected = f"an integer with {lo} <= {name} <= {hi}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise _fail(name, expected, value)
    out = int(value)
    if (minimum is not None and out < minimum) or (maximum is not None and out > maximum):
        raise _fail(name, expected, value)
    return out


_BOUND_MAX = 1e150
_WIDTH_MIN = 1e-150


def check_bounds(bounds: Any, name: str = "bounds") -> tuple[float, float]:
    """Public bounds ``(lo, hi)``: two finite reals with ``lo < hi``.

    Bounds must come from outside the data (domain knowledge, a codebook, or a separate DP
    release); dpreg never derives them from the private data.
    """
    expected = "a pair (lo, hi) of finite real numbers with lo < hi"
    if isinstance(bounds, (str, bytes)) or not isinstance(bounds, (Sequence, np.ndarray)):
        raise _fail(name, expected, bounds)
    if len(bounds) != 2:
        raise _fail(name, expected, bounds)
    lo_raw, hi_raw = bounds[0], bounds[1]
    try:
        lo = _as_real(lo_raw, name, expected)
        hi = _as_real(hi_raw, name, expected)
    except InvalidInputError:
        raise _fail(name, expected, bounds) from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise _fail(name, expected, bounds)
    # keep widths, squared widths and sums of clipped values finite and non-zero in floating
    # point (an overflowing or vanishing sensitivity would otherwise remove or break the noise)
    if max(abs(lo), abs(hi)) > _BOUND_MAX or hi - lo < _WIDTH_MIN:
        raise _fail(name, f"a pair (lo, hi) with |lo|, |hi| <= {_BOUND_MAX:g} and "
                    f"hi - lo >= {_WIDTH_MIN:g}", bounds)
    return lo, hi


def exact_float_key(text: str) -> float:
    """The double a decimal number text (a key written with a point or an exponent: ``2.5``,
    ``1e3``) denotes, when it denotes exactly one: a ``ValueError`` saying why otherwise.

    Group keys are matched by exact value (:mod:`dpreg.grouped._keys`), so a key text must be
    read as the number it says.  The rule: the key the double becomes (an int when integral,
    as keys are canonicalised), written back (``str`` of the int, ``repr`` of the float: the
    shortest text of that double), must be the same number as the text.  ``0.1`` and ``1e3``
    are read; ``9007199254740993.0`` (its double is 2**53), ``1e23`` (99999999999999991611392),
    ``0.10000000000000001`` (0.1), ``1e-400`` (0) and ``1e309`` (inf) are refused.  Integer
    texts are no concern of this rule: they are read as exact Python ints.  Shared by
    ``--groups-file`` lines and a codebook's ``[groups] keys``."""
    from decimal import Decimal, InvalidOperation

    try:
        exact = Decimal(text.strip())
        value = float(text)
    except (InvalidOperation, ValueError):
        raise ValueError("it is not a number") from None
    if not exact.is_finite() or not math.isfinite(value):
        raise ValueError("it is beyond the floating-point range (it would be read as "
                         "infinity)" if exact.is_finite() else "it is not a finite number")
    written = str(int(value)) if value.is_integer() else repr(value)
    if Decimal(written) != exact:
        raise ValueError("no floating-point number equals it exactly (it would be read as a "
                         "different number)")
    return value


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """``"; did you mean 'age'?"`` when a known name is close to ``name`` (difflib), else ``""``."""
    import difflib

    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=3, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?"


def check_known_keys(keys: Any, known: Sequence[str], name: str = "bounds",
                     what: str = "a column of the data") -> None:
    """Every key of ``keys`` must be one of ``known`` (public names: columns, formula terms);
    a typo is an error with a did-you-mean, never silently ignored."""
    known_set = {str(k) for k in known}
    for key in keys:
        if str(key) not in known_set:
            shown = sorted(known_set)
            listed = shown if len(shown) <= 20 else shown[:20] + ["..."]
            raise UnknownNameError(
                f"{name} has the key {str(key)!r}, which is not {what}"
                f"{did_you_mean(str(key), shown)} (known: {listed})")


def _column_names(obj: Any) -> list[str] | None:
    cols = getattr(obj, "columns", None)
    return None if cols is None else [str(c) for c in cols]


def check_array(
    a: Any, name: str, *, ndim: int | tuple[int, ...] = (1, 2), min_rows: int = 1
) -> np.ndarray:
    """Convert to a float64 array and check it is numeric, finite, non-empty and well shaped.

    ``ndim`` may be 1, 2 or a tuple of allowed dimensions.  Booleans are accepted as 0/1;
    strings, objects, complex numbers and datetimes are rejected with the offending columns
    named when the input is a DataFrame.  Messages name the argument, the column (for a
    DataFrame) and the kind of problem -- never a value, a count of bad values or the number
    of rows (see docs/threat-model.md, "What error messages may say").
    """
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if a is None:
        raise _fail_data(name, "an array of numbers", a)
    bad = _non_numeric_columns(a)
    if bad:
        raise InvalidInputError(
            f"{name} must contain only numeric columns; non-numeric columns: {bad}"
        )
    try:
        raw = np.asarray(a)
    except Exception as exc:  # pragma: no cover - exotic containers
        raise _fail_data(name, "an array of numbers", a) from exc
    if raw.dtype.kind in "cOSUMmV" and raw.dtype.kind != "O":
        raise _fail_data(name, "an array of real numbers (not complex, text or dates)", raw)
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise _fail_data(name, "an array of real numbers (non-numeric values found)",
                         raw) from None
    if raw.dtype.kind == "O" and any(
        isinstance(v, (str, bytes, complex)) for v in raw.ravel().tolist()
    ):
        raise _fail_data(name, "an array of real numbers (non-numeric values found)", raw)
    if arr.ndim not in allowed:
        raise _fail_data(name, f"an array with ndim in {allowed}", arr)
    if arr.shape[0] < min_rows or arr.size == 0:
        raise InvalidInputError(f"{name} must be a non-empty array with at least {min_rows} "
                                "row(s) for this method")
    if not np.all(np.isfinite(arr)):
        cols = _column_names(a)
        where = ""
        if cols is not None and arr.ndim == 2:
            bad_cols = [c for c, ok in zip(cols, np.all(np.isfinite(arr), axis=0)) if not ok]
            where = f" (in column(s) {bad_cols})"
        raise InvalidInputError(
            f"{name} must contain only finite numbers; NaN or inf found{where}. Remove or "
            "impute them before fitting."
        )
    return arr


def _non_numeric_columns(a: Any) -> list[str]:
    """Names of non-numeric columns of a pandas/polars frame (empty list otherwise)."""
    dtypes = getattr(a, "dtypes", None)
    cols = _column_names(a)
    if dtypes is None or cols is None or isinstance(dtypes, np.dtype):
        return []
    from pandas.api.types import is_bool_dtype, is_complex_dtype, is_numeric_dtype

    bad = []
    for col, dt in zip(cols, list(dtypes)):
        try:
            ok = (is_numeric_dtype(dt) or is_bool_dtype(dt)) and not is_complex_dtype(dt)
        except TypeError:  # a dtype pandas does not know (e.g. polars)
            ok = dt.is_numeric() if hasattr(dt, "is_numeric") else False
        if not ok:
            bad.append(col)
    return bad


def check_xy(
    x: Any, y: Any, *, x_ndim: int | tuple[int, ...] = 1, min_rows: int = 1,
    x_name: str = "x", y_name: str = "y",
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a design ``x`` and response ``y`` (finite, numeric, non-empty, same length)."""
    xa = check_array(x, x_name, ndim=x_ndim, min_rows=1)
    ya = check_array(y, y_name, ndim=1, min_rows=1)
    if xa.shape[0] != ya.shape[0]:
        raise InvalidInputError(
            f"{x_name} and {y_name} must have the same number of rows; they differ"
        )
    if xa.shape[0] < min_rows:
        raise InvalidInputError(
            f"{x_name} and {y_name} must have at least {min_rows} rows for this method"
        )
    return xa, ya


def check_choice(value: Any, name: str, options: Sequence[str]) -> str:
    """A string from a fixed set of options (:class:`~dpreg.exceptions.InvalidParameterError`
    naming the options, the value received and the nearest option otherwise)."""
    if not isinstance(value, str) or value not in options:
        raise InvalidParameterError(f"{name} must be one of {list(options)}; got {fmt(value)}"
                                    + did_you_mean(str(value), options))
    return value

# --------------------------------------------------------------------------------------------
# deprecated parameter spellings (docs/architecture.md, "Vocabulary"): one mechanism for all
# --------------------------------------------------------------------------------------------
class _Deprecated:
    """The default of a deprecated parameter spelling (shown as ``<deprecated>`` in a
    signature): "not given"."""

    _instance: _Deprecated | None = None

    def __new__(cls) -> _Deprecated:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<deprecated>"

    def __reduce__(self) -> str:
        return "DEPRECATED"


#: the default of every deprecated parameter spelling (an old name kept for one release)
DEPRECATED: Any = _Deprecated()
#: the same for an estimator's parameter: scikit-learn's convention (its checks allow plain
#: values only as defaults of ``__init__``)
ESTIMATOR_DEPRECATED = "deprecated"


def _not_given(value: Any) -> bool:
    return value is DEPRECATED or (isinstance(value, str) and value == ESTIMATOR_DEPRECATED)


def resolve_renamed(old_value: Any, new_value: Any, *, old: str, new: str, where: str,
                    new_given: bool, stacklevel: int = 3) -> Any:
    """The value of parameter ``new`` when the caller may have used its deprecated spelling
    ``old``: ``new_value`` when ``old`` was not given (its value is :data:`DEPRECATED`, or
    :data:`ESTIMATOR_DEPRECATED` for an estimator's parameter);
    ``old_value`` with a :class:`DeprecationWarning` naming ``new`` when only ``old`` was
    given; an :class:`~dpreg.exceptions.InvalidParameterError` naming both when both were
    (``new_given``).  Raised before anything is read, charged or drawn."""
    if _not_given(old_value):
        return new_value
    if new_given:
        raise InvalidParameterError(
            f"{where}: {old}= is the deprecated spelling of {new}=; give only {new}= (got "
            f"both {old}={fmt(old_value)} and {new}={fmt(new_value)})")
    warnings.warn(f"{where}: the parameter {old}= is deprecated and will be removed in the "
                  f"next release; use {new}= instead (same meaning)", DeprecationWarning,
                  stacklevel=stacklevel)
    return old_value


F = TypeVar("F", bound=Callable[..., Any])


def renamed_parameters(**renames: str) -> Callable[[F], F]:
    """Decorator keeping old keyword spellings of a function's parameters for one release:
    ``@renamed_parameters(rng="random_state")``.  The function declares both (the old one
    keyword-only with the default :data:`DEPRECATED`, so that signatures and the API snapshot
    show both); a call with the old keyword warns (:class:`DeprecationWarning` naming the new
    one) and passes its value as the new one; a call with both is an
    :class:`~dpreg.exceptions.InvalidParameterError` naming both.  The aliases are listed on
    the wrapper as ``__deprecated_aliases__`` (old -> new), read by
    :func:`deprecated_aliases`."""

    def deco(fn: F) -> F:
        params = inspect.signature(fn).parameters
        for old, new in renames.items():
            if old not in params or new not in params or params[old].default is not DEPRECATED \
                    or params[old].kind is not inspect.Parameter.KEYWORD_ONLY:
                raise TypeError(f"{fn.__qualname__}: declare {new} and the keyword-only "
                                f"{old}=DEPRECATED to rename {old} to {new}")
        where = fn.__qualname__

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old in kwargs:
                    kwargs[new] = resolve_renamed(kwargs.pop(old), kwargs.get(new), old=old,
                                                  new=new, where=where,
                                                  new_given=new in kwargs, stacklevel=3)
            return fn(*args, **kwargs)

        wrapper.__deprecated_aliases__ = {**deprecated_aliases(fn), **renames}  # type: ignore[attr-defined]
        return cast(F, wrapper)

    return deco


def deprecated_aliases(obj: Any) -> dict[str, str]:
    """The deprecated parameter spellings of a callable (old -> new): those of
    :func:`renamed_parameters`, or a class's ``_deprecated_params`` (estimators, which keep
    scikit-learn's contract of storing parameters verbatim and resolve them at fit time with
    :func:`resolve_renamed`)."""
    found = getattr(obj, "__deprecated_aliases__", None)
    if found is None and inspect.isclass(obj):
        found = getattr(obj, "_deprecated_params", None)
    return dict(found or {})
