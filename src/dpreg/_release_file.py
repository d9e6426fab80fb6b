"""Reading and writing release files safely: strict JSON, bounded size and depth, typed fields.

A release file travels from the data holder to analysts and may be edited or crafted on the
way.  :func:`read_json` refuses, with one line naming the file and the problem, anything that
is not a small, shallow, UTF-8, strictly formed JSON document *before* the JSON parser runs
(size, nesting) or while it runs (duplicate keys, malformed text, oversized integers).
Nothing in a file is ever evaluated.  :func:`strict_json` writes what :func:`read_json` reads.
The field helpers (:class:`Fields`) give errors of the form ``release file: field 'a.b' must be
<expected>; got <found>``.  The schema of each release kind lives next to that release
(:mod:`dpreg.covariance` for the SSCP release).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from dpreg._json import tagged_jsonable
from dpreg._validation import fmt
from dpreg.exceptions import InvalidInputError

__all__ = ["MAX_FILE_BYTES", "MAX_JSON_DEPTH", "read_json", "strict_json", "finite_or_tag",
           "Fields"]

#: Largest release file read (bytes): a 1000-column SSCP release is about 50 MB.
MAX_FILE_BYTES = 128 * 2**20
#: Deepest nesting of JSON arrays/objects accepted (release files need 4).
MAX_JSON_DEPTH = 32

_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


class _DuplicateKey(ValueError):
    pass


def _depth(text: str) -> int:
    """Deepest ``[``/``{`` nesting outside strings (chunked, without recursion)."""
    stripped = _STRING_RE.sub('""', text).encode("utf-8")
    best = 0
    carry = 0
    chunk = 1 << 22
    for start in range(0, len(stripped), chunk):
        b = np.frombuffer(stripped, dtype=np.uint8, count=min(chunk, len(stripped) - start),
                          offset=start)
        step = ((b == ord("[")) | (b == ord("{"))).astype(np.int64) \
            - ((b == ord("]")) | (b == ord("}"))).astype(np.int64)
        if step.size:
            level = np.cumsum(step) + carry
            best = max(best, int(level.max()))
            carry = int(level[-1])
    return best


def _pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in items:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def read_json(path: str | Path, *, what: str = "release file",
              max_bytes: int = MAX_FILE_BYTES, max_depth: int = MAX_JSON_DEPTH
              ) -> tuple[Any, bool]:
    """``(document, had_non_finite_literals)`` of a JSON file, or a one-line
    :class:`~dpreg.exceptions.InvalidInputError` naming the file and the problem.

    ``NaN``/``Infinity`` literals (not JSON, but written by older dpreg versions) are read as
    floats and reported in the second value so that the caller can refuse them where its
    format is strict.
    """
    p = Path(path)
    try:
        if p.is_dir():
            raise InvalidInputError(f"{what} {p} is a directory, not a file")
        size = p.stat().st_size
        if size > max_bytes:
            raise InvalidInputError(f"{what} {p} is {size} bytes; the limit is {max_bytes}")
        with p.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise InvalidInputError(f"{what} {p} cannot be read: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise InvalidInputError(f"{what} {p} is larger than the limit of {max_bytes} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{what} {p} is not UTF-8 text (byte {raw[exc.start]:#04x} at "
                                f"offset {exc.start})") from None
    depth = _depth(text)
    if depth > max_depth:
        raise InvalidInputError(f"{what} {p} nests arrays/objects {depth} deep; the limit is "
                                f"{max_depth}")
    constants: list[str] = []

    def constant(name: str) -> float:
        constants.append(name)
        return float(name.replace("Infinity", "inf"))

    try:
        doc = json.loads(text, parse_constant=constant, object_pairs_hook=_pairs)
    except _DuplicateKey as exc:
        raise InvalidInputError(f"{what} {p} repeats the key {fmt(str(exc))} in one object"
                                ) from None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{what} {p} is not readable JSON: {exc.msg} at line {exc.lineno} "
                                f"column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer with > 4300 digits
        raise InvalidInputError(f"{what} {p} is not readable JSON: {type(exc).__name__}: "
                                f"{str(exc).splitlines()[0][:120] if str(exc) else ''}"
                                ) from None
    return doc, bool(constants)


def finite_or_tag(value: Any) -> Any:
    """Recursively make a value strict-JSON-able: ±inf -> ``"inf"``/``"-inf"``, NaN -> None,
    NumPy scalars/arrays -> Python (:func:`dpreg._json.tagged_jsonable`)."""
    return tagged_jsonable(value)


def strict_json(doc: Any) -> str:
    """Strict JSON text (``allow_nan=False``) of a document made by :func:`finite_or_tag`."""
    return json.dumps(finite_or_tag(doc), indent=1, allow_nan=False)


class Fields:
    """Typed access to a parsed document with errors naming the field (``a.b[2]``)."""

    def __init__(self, what: str = "release file") -> None:
        self.what = what

    def error(self, path: str, expected: str, got: Any) -> InvalidInputError:
        return InvalidInputError(f"{self.what}: field '{path}' must be {expected}; got "
                                 f"{fmt(got)}")

    def obj(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(path, "an object", value)
        return value

    def get(self, obj: dict[str, Any], key: str, path: str) -> Any:
        if key not in obj:
            raise InvalidInputError(f"{self.what}: field '{self._join(path, key)}' is missing")
        return obj[key]

    @staticmethod
    def _join(path: str, key: str) -> str:
        return f"{path}.{key}" if path else key

    def number(self, value: Any, path: str, *, lo: float = -math.inf, hi: float = math.inf,
               lo_open: bool = False, hi_open: bool = False, allow_inf: bool = False,
               expected: str = "") -> float:
        """A JSON number (never a bool) in the range; ``"inf"`` or an ``Infinity`` literal only
        with ``allow_inf``."""
        want = expected or _range_text(lo, hi, lo_open, hi_open, allow_inf)
        if allow_inf and value == "inf":
            value = math.inf
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(path, want, value)
        x = float(value)
        if math.isnan(x) or (math.isinf(x) and not allow_inf):
            raise self.error(path, want, value)
        if x < lo or x > hi or (lo_open and x == lo) or (hi_open and x == hi):
            raise self.error(path, want, value)
        return x

    def integer(self, value: Any, path: str, *, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(path, f"an integer >= {minimum}", value)
        return value

    def string(self, value: Any, path: str, *, choices: tuple[str, ...] | None = None,
               max_len: int = 10_000) -> str:
        if not isinstance(value, str) or len(value) > max_len \
                or (choices is not None and value not in choices):
            want = f"one of {list(choices)}" if choices else f"a string of <= {max_len} characters"
            raise self.error(path, want, value)
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, "true or false", value)
        return value

    def matrix(self, value: Any, path: str, size: int, *, null_entries: bool = False
               ) -> np.ndarray:
        """A ``size`` × ``size`` list of lists of finite numbers (``null`` -> NaN where
        ``null_entries``)."""
        want = f"a {size}x{size} array of finite numbers"
        if not isinstance(value, list) or len(value) != size:
            raise self.error(path, want, value if not isinstance(value, list)
                             else f"a list of {len(value)} rows")
        for i, row in enumerate(value):
            if not isinstance(row, list) or len(row) != size:
                raise self.error(f"{path}[{i}]", f"a row of {size} numbers", row)
        kinds = (int, float, type(None)) if null_entries else (int, float)
        if not all(type(v) in kinds for row in value for v in row):  # bools are not numbers
            for i, row in enumerate(value):
                for j, v in enumerate(row):
                    if type(v) not in kinds:
                        raise self.error(f"{path}[{i}][{j}]", "a finite number", v)
        try:
            out = np.array([[math.nan if v is None else v for v in row] for row in value],
                           dtype=float)
        except OverflowError:
            raise self.error(path, want, "an integer too large for a float") from None
        bad = ~np.isfinite(out)
        if null_entries:
            bad &= ~np.array([[v is None for v in row] for row in value], dtype=bool)
        if bad.any():
            i, j = (int(k) for k in np.argwhere(bad)[0])
            raise self.error(f"{path}[{i}][{j}]", "a finite number", value[i][j])
        return out


def _range_text(lo: float, hi: float, lo_open: bool, hi_open: bool, allow_inf: bool) -> str:
    if lo == -math.inf and hi == math.inf:
        return "a finite number" if not allow_inf else "a number or \"inf\""
    left = "(" if lo_open else "["
    right = ")" if hi_open else "]"
    text = f"a number in {left}{lo:g}, {hi:g}{right}" if hi != math.inf else \
        f"a number {'>' if lo_open else '>='} {lo:g}"
    return text + (' or "inf"' if allow_inf else "")
