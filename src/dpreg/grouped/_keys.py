"""Group keys: the one rule that says when two keys are the same group, and which rows a key
matches.

Why a rule is needed: Python and pandas treat ``1``, ``1.0``, ``True``, ``np.int64(1)`` and
``np.float64(1.0)`` as equal, but their ``repr`` differ.  A key list ``[1, 1.0]`` that passes a
``repr``-based duplicate check gives two output rows fitted on the *same* records -- each
charged ε while the table claims ε by parallel composition.  Every backend therefore maps
declared keys and row keys through :func:`canonical_key`, and matches a row to a key only when
their canonical forms are identical.  A row has one canonical form, and declared keys must
have pairwise different canonical forms, so a row can never match two declared keys.

The rule (:func:`canonical_key`):

* **numbers** (Python/NumPy ints and floats, ``Decimal``, ``Fraction``) are one kind and are
  matched by exact value: ``1``, ``1.0``, ``np.int64(1)``, ``np.float32(1)`` and
  ``Decimal("1.00")`` are the same key (canonical ``1``); ``-0.0`` is ``0``;
  ``1.0000000000000002`` is a different key from ``1``; ``np.float32(0.1)`` is the float32
  value (0.10000000149...), not 0.1.  A ``Decimal``/``Fraction`` that no float represents
  exactly (``Decimal("0.1")``) is refused: no numeric column can hold it;
* **bool** (``True``/``False``, ``np.bool_``) is its own kind: ``True`` is not the number 1;
* **str** (and ``np.str_``) is its own kind, matched exactly: ``"1"`` is not the number 1 and
  ``" a"`` is not ``"a"`` (the CLI's ``--groups-file`` strips each line; the API does not);
* **missing** (None, NaN, ``pd.NA``, ``NaT``) is no key: a declared missing key is an error, and
  rows with a missing key belong to no group (they are in no release, like rows of keys that
  are not declared);
* other types (tuples, bytes, dates, ...) are refused as declared keys and match no row.

How declared keys meet the key column: all declared keys must be of one kind, and that kind
must be the column's: numbers for a numeric column, bool for a bool column, str for a string
column (a categorical column: the kind of its categories; an ``object`` column: any one kind,
and only rows of that kind can match).  So ``'1'`` against a numeric column and ``1`` against a
string column are errors, not silent empty groups.  Lists that break the rule are refused with
an :class:`~dpreg.exceptions.InvalidInputError` naming ``groups``, the clash and the user's own
keys -- before anything is read from the rows or released.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from dpreg._validation import exact_float_key
from dpreg.exceptions import InvalidInputError
from dpreg.simple.fast import jit_on_first_use

__all__ = ["KeyProblem", "canonical_key", "check_declared_keys", "column_kind", "row_codes",
           "keys_in_column", "parse_key_lines", "KINDS", "FROM_DATA"]

#: the kinds of key: numbers, bool and str
KINDS = ("number", "bool", "str")
#: ``groups=FROM_DATA`` reads the keys from the data (the key set is then not protected)
FROM_DATA = "from-data"


class KeyProblem(Exception):
    """Why a value is not a key (internal; turned into an InvalidInputError for declared keys
    and into "matches no key" for rows)."""


def _number(f: float) -> int | float:
    """Canonical number: integral finite values as int (so 1.0 and -0.0 are 1 and 0)."""
    return int(f) if f.is_integer() else f


def canonical_key(value: Any) -> tuple[str, Any]:
    """The canonical form ``(kind, value)`` of one key (see the module doc).

    Two keys are the same group iff their canonical forms are equal *as tuples of (kind,
    value)* -- the kind keeps ``True`` apart from ``1``.  Raises :class:`KeyProblem` for a
    missing key or a value of a type that cannot be a key.
    """
    if value is None or value is pd.NA or value is pd.NaT:
        raise KeyProblem("missing")
    if isinstance(value, (bool, np.bool_)):
        return ("bool", bool(value))
    if isinstance(value, (str, np.str_)):
        return ("str", str(value))
    if isinstance(value, (int, np.integer)):
        return ("number", int(value))
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if math.isnan(f):
            raise KeyProblem("missing")
        if f != value:  # np.longdouble with no float64 equal
            raise KeyProblem("not exactly representable as a float")
        return ("number", _number(f))
    if isinstance(value, (Decimal, Fraction)) or (isinstance(value, numbers.Real)
                                                  and not isinstance(value, np.generic)):
        if isinstance(value, Decimal) and value.is_nan():
            raise KeyProblem("missing")
        try:
            f = float(value)
        except (OverflowError, ValueError):
            raise KeyProblem("not exactly representable as a float") from None
        if f != value:
            raise KeyProblem("not exactly representable as a float")
        return ("number", _number(f))
    if isinstance(value, (np.datetime64, np.timedelta64)) and np.isnat(value):
        raise KeyProblem("missing")
    raise KeyProblem(f"of type {type(value).__name__}")


def _describe(key: Any) -> str:
    """The user's own key, shown in an error (never a value read from the data)."""
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."


def column_kind(dtype: Any, column: str = "") -> str:
    """The kind of key a pandas key column holds: ``"number"``, ``"bool"``, ``"str"`` or
    ``"any"`` (an ``object`` column: only rows of the declared keys' kind can match).  Decided
    from the dtype alone (categorical: from the categories' dtype)."""
    if isinstance(dtype, pd.CategoricalDtype):
        return column_kind(dtype.categories.dtype, column)
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_string_dtype(dtype) and not pd.api.types.is_object_dtype(dtype):
        return "str"
    if pd.api.types.is_object_dtype(dtype):
        return "any"
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        return "number"
    raise InvalidInputError(
        f"group key column {column!r} has dtype {dtype}; keys must be numbers, bool or str "
        "(convert the column, e.g. to str, and list the keys the same way)")


def _homogeneous_keys(raw: list[Any]) -> str | None:
    """``"number"`` when every key is a Python/NumPy integer (not bool), ``"str"`` when every
    key is a str: their canonical forms are the keys themselves, so the per-key rule can be
    skipped (a long public key list is checked in O(n)); None otherwise."""
    types = {type(k) for k in raw}
    if types and all(issubclass(t, (int, np.integer)) and not issubclass(t, (bool, np.bool_))
                     for t in types):
        return "number"
    if types and all(issubclass(t, (str, np.str_)) for t in types):
        return "str"
    return None


def check_declared_keys(groups: Any, kind: str, column: str = "") -> list[Any]:
    """Validate the public key list and return the canonical keys, in the listed order.

    ``kind`` is the key column's kind (:func:`column_kind`; ``"any"`` for an object column).
    Refused: a missing key, a key of an unsupported type, keys of different kinds, keys of a
    kind the column cannot hold, and two entries that are the same key.
    """
    if isinstance(groups, (str, bytes)) or not isinstance(
            groups, (Sequence, np.ndarray, pd.Index, pd.Series, pd.api.extensions.ExtensionArray)):
        raise InvalidInputError("groups must be a list of public group keys (or 'from-data'); "
                                f"got {type(groups).__name__}")
    raw = list(groups)
    fast = _homogeneous_keys(raw)
    if fast is not None and len(set(raw)) == len(raw):  # the common case, checked in O(n)
        if raw and kind != "any" and fast != kind:
            pass  # fall through: the full check below words the refusal
        else:
            return [int(k) for k in raw] if fast == "number" else [str(k) for k in raw]
    canon: list[tuple[str, Any]] = []
    for i, key in enumerate(raw):
        try:
            canon.append(canonical_key(key))
        except KeyProblem as why:
            if str(why) == "missing":
                raise InvalidInputError(
                    f"groups must not contain missing keys (None/NaN/NA/NaT): entry {i} is "
                    f"{_describe(key)}, which cannot match any row") from None
            raise InvalidInputError(
                f"groups entry {i} ({_describe(key)}) is not a usable key: it is {why}; keys "
                "must be numbers, bool or str") from None
    kinds = {k for k, _ in canon}
    if len(kinds) > 1:
        first: dict[str, Any] = {}
        for (k, _), key in zip(canon, raw):
            first.setdefault(k, key)
        shown = ", ".join(f"{_describe(v)} ({k})" for k, v in first.items())
        raise InvalidInputError(
            f"groups mixes kinds of keys: {shown}; numbers, bool and str keys are different "
            "groups, so list keys of one kind only -- the kind of the key column")
    if kinds and kind != "any" and kinds != {kind}:
        (got,) = kinds
        raise InvalidInputError(
            f"groups lists {got} keys but the key column {column!r} holds {kind} values; list "
            f"the keys as {kind} values (no key is converted between kinds: '1' is not 1)")
    seen: dict[tuple[str, Any], int] = {}
    for i, c in enumerate(canon):
        j = seen.setdefault(c, i)
        if j != i:
            a, b = raw[j], raw[i]
            how = ("the same entry is repeated" if repr(a) == repr(b) and type(a) is type(b)
                   else "numbers are matched by value, so these are one group"
                   if c[0] == "number" else "these are one group")
            raise InvalidInputError(
                f"groups must not contain duplicate keys: entries {j} ({_describe(a)}) and "
                f"{i} ({_describe(b)}) are the same key ({how}); each group may be listed "
                "once, or its records would be released twice")
    return [v for _, v in canon]


# ----------------------------------------------------------------------- rows -> keys
def _lookup(values: Sequence[Any], keys: list[Any], kind: str) -> np.ndarray:
    """Position of each value's canonical form among the keys (−1: no key), by the scalar
    definition.  ``values`` are distinct values of one pandas column or categories."""
    pos = {(kind, k): i for i, k in enumerate(keys)}
    out = np.full(len(values), -1, dtype=np.int64)
    cache: dict[tuple[type, Any], int] = {}
    for i, v in enumerate(values):
        try:
            hit = cache.get((type(v), v))
        except TypeError:  # unhashable: never a key
            continue
        if hit is None:
            try:
                hit = pos.get(canonical_key(v), -1)
            except KeyProblem:
                hit = -1
            try:
                cache[(type(v), v)] = hit
            except TypeError:  # pragma: no cover - hashable above
                pass
        out[i] = hit
    return out


def row_codes(column: pd.Series, keys: list[Any], kind: str) -> np.ndarray:
    """For every row, the position of its key in ``keys`` (canonical keys of one ``kind``), or
    −1 when the row's key is missing or not declared.

    Vectorised per dtype; each branch computes exactly ``keys.index(canonical_key(v)[1])`` of
    the scalar rule (tested against it over random mixed columns).
    """
    n = len(column)
    if not keys:
        return np.full(n, -1, dtype=np.int64)
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        lut = _lookup(list(dtype.categories), keys, kind)
        codes = column.cat.codes.to_numpy(np.int64)
        return np.where(codes >= 0, lut[np.maximum(codes, 0)], -1)
    col_kind = column_kind(dtype)
    if col_kind == "any":  # object column
        values = column.to_numpy(dtype=object)
        if kind == "str":  # only str rows can equal a str key
            return pd.Index(keys, dtype=object).get_indexer(values).astype(np.int64)
        return _lookup(values, keys, kind)
    if col_kind != kind:  # check_declared_keys refuses this; defensive
        return np.full(n, -1, dtype=np.int64)
    # NumPy int/float/bool columns cannot hold a missing value that matches (NaN matches no
    # key); extension dtypes (Int64, boolean, string) mark theirs with a mask
    extension = isinstance(dtype, pd.api.extensions.ExtensionDtype)
    if col_kind == "bool":
        vals = column.to_numpy(dtype=bool, na_value=False)
        lut = np.full(2, -1, dtype=np.int64)
        for i, k in enumerate(keys):
            lut[int(k)] = i
        out = lut[vals.astype(np.int64)]
    elif col_kind == "str":
        out = pd.Index(keys, dtype=object).get_indexer(
            column.to_numpy(dtype=object, na_value=None)).astype(np.int64)
        extension = False  # a missing str value matches no key
    elif pd.api.types.is_float_dtype(dtype):
        vals = column.to_numpy(dtype=np.float64, na_value=np.nan) + 0.0  # -0.0 -> 0.0
        pos, table = [], []
        for i, k in enumerate(keys):
            try:
                f = float(k)
            except OverflowError:  # an int beyond the float range: no float row equals it
                continue
            if f == k:  # a float column can only hold keys that a float equals exactly
                pos.append(i)
                table.append(f)
        out = _remap(pd.Index(np.asarray(table, dtype=np.float64)).get_indexer(vals), pos)
        extension = False  # NaN (a missing value) matches no key
    else:  # integer column
        np_dtype = np.dtype(getattr(dtype, "numpy_dtype", dtype))
        info = np.iinfo(np_dtype)
        vals = column.to_numpy(dtype=np_dtype, na_value=0) if extension else \
            column.to_numpy(dtype=np_dtype)
        ipos: list[int] = []
        itable: list[int] = []
        for i, k in enumerate(keys):
            if isinstance(k, int) and info.min <= k <= info.max:
                ipos.append(i)
                itable.append(k)
        out = _int_lookup(vals, itable, ipos)
        if out is None:
            out = _remap(pd.Index(np.asarray(itable, dtype=np_dtype)).get_indexer(vals), ipos)
    out = np.asarray(out, dtype=np.int64)
    if extension:
        out[column.isna().to_numpy(dtype=bool)] = -1
    return out


def _int_lookup(vals: np.ndarray, table: list[int], pos: list[int]) -> np.ndarray | None:
    """Codes of an integer column by a lookup array over the declared keys' range (O(n), no
    hashing of every row): row value v gets ``pos[j]`` where ``table[j] == v``, else −1.  None
    when the keys span more than max(2**16, 4 * rows) values (then a hash lookup is cheaper)."""
    if not table or vals.size == 0:
        return None
    lo, hi = min(table), max(table)
    if hi - lo + 1 > max(1 << 16, 4 * vals.size):
        return None
    if vals.dtype == np.uint64:  # values beyond the int64 range: use the hash lookup
        return None
    lut = np.full(hi - lo + 2, -1, dtype=np.int64)  # slot 0: values outside [lo, hi]
    lut[np.asarray(table, dtype=np.int64) - lo + 1] = np.asarray(pos, dtype=np.int64)
    kernel = _compiled_lookup()
    # int32/int64 columns go to the kernel as they are (numba compiles one loop per dtype)
    v = np.ascontiguousarray(vals, dtype=vals.dtype if kernel is not None and vals.dtype in
                             (np.int32, np.int64) else np.int64)
    if kernel is not None:
        out = np.empty(v.size, dtype=np.int64)
        kernel(v, np.int64(lo), np.int64(hi), lut, out)
        return out
    inside = (v >= lo) & (v <= hi)  # pragma: no cover - without numba
    with np.errstate(over="ignore"):
        idx = np.where(inside, (v - np.int64(lo)) + 1, 0)
    return lut[idx]


def _lookup_loop(v: np.ndarray, lo: int, hi: int, lut: np.ndarray,
                 out: np.ndarray) -> None:  # pragma: no cover - compiled by numba
    for i in range(v.size):
        x = v[i]
        out[i] = lut[x - lo + 1] if lo <= x <= hi else -1


_compiled_lookup = jit_on_first_use(_lookup_loop)  # the compiled key lookup, or None


def _remap(idx: np.ndarray, pos: list[int]) -> np.ndarray:
    """Positions in the matched sub-list -> positions in the key list (−1 stays −1)."""
    idx = np.asarray(idx, dtype=np.int64)
    if pos == list(range(len(pos))):  # every key could match: positions are the same
        return idx
    lut = np.asarray(pos + [-1], dtype=np.int64)
    return lut[idx]  # idx = −1 picks the trailing −1


def keys_in_column(column: pd.Series) -> list[Any]:
    """The distinct canonical keys found in a pandas key column, sorted (``groups=
    'from-data'``); missing keys and values of unsupported types are no key."""
    kind = column_kind(column.dtype)
    if kind == "any":  # pandas would merge 1 and True: canonicalise every row (cached)
        values: Any = column.to_numpy(dtype=object)
    else:
        values = pd.unique(column.dropna())
    found: set[tuple[str, Any]] = set()
    seen: set[tuple[type, Any]] = set()
    for v in values:
        try:
            if (type(v), v) in seen:
                continue
            seen.add((type(v), v))
        except TypeError:  # unhashable: never a key
            continue
        try:
            found.add(canonical_key(v))
        except KeyProblem:
            continue
    kinds = {k for k, _ in found}
    if len(kinds) > 1:
        raise InvalidInputError(
            "groups='from-data' found keys of several kinds (numbers, bool, str) in the key "
            "column; declare the public key list instead (groups=[...])")
    return sorted(v for _, v in found)


# ----------------------------------------------------------------------- the groups file
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_BOOL = {"true": True, "false": False}


def parse_key_lines(lines: Sequence[str], kind: str) -> list[Any]:
    """Keys from the lines of a groups file (one key per line; leading/trailing whitespace is
    not part of a key; blank lines are skipped), read as the key column's kind: numbers by a
    whitelist (decimal integers and decimal/scientific floats; no inf/nan, no ``_``), bool as
    true/false (any case), str as the stripped text.  Integers are read as exact Python ints
    (any size); a float text must denote exactly the double it is read as
    (:func:`dpreg._validation.exact_float_key`: ``9007199254740993.0`` would be 2**53, ``1e309``
    inf -- refused, naming the line).  Duplicates are refused afterwards by
    :func:`check_declared_keys` (e.g. ``1``, ``01`` and ``1.0`` in a numeric column)."""
    keys: list[Any] = []
    for lineno, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        if kind == "number":
            if _INT.fullmatch(text):
                keys.append(int(text))
            elif _FLOAT.fullmatch(text):
                try:
                    keys.append(exact_float_key(text))
                except ValueError as why:
                    raise InvalidInputError(
                        f"the groups file has a number on line {lineno} that cannot be a key: "
                        f"{why}; write each key exactly as the number it is (an integer "
                        "without a decimal point is read exactly)") from None
            else:
                raise InvalidInputError(
                    f"the groups file has a key that is not a number on line {lineno}, but the "
                    "key column holds numbers; write one decimal number per line")
        elif kind == "bool":
            if text.lower() not in _BOOL:
                raise InvalidInputError(
                    f"the groups file has a key that is not true/false on line {lineno}, but "
                    "the key column holds bool values")
            keys.append(_BOOL[text.lower()])
        else:
            keys.append(text)
    return keys
