"""Codebooks: the public description of a data set's columns, in one TOML file.

A codebook declares, per raw column, its type (numeric with public bounds, or categorical with
its public levels), and optionally the public number of rows and the public list of group keys.
Everything in it must come from outside the private data (a survey's answer codes, a registry,
domain knowledge); ``dpreg codebook init DATA.csv`` writes a template from the CSV's *header
line only*, with empty bounds to fill in.  docs/codebook.md documents the schema::

    [dataset]                      # optional
    n = 6366                       # optional: public number of rows (replace-one methods)
    description = "..."            # optional

    [columns.age]
    type = "numeric"               # the default
    bounds = [17.5, 42.0]          # public [lo, hi], lo < hi; [] = not declared yet

    [columns.occupation]
    type = "categorical"
    levels = [1, 2, 3, 4, 5, 6]    # unique numbers or texts

    [groups]                       # optional (dpreg fit-groups)
    by = "tract"
    keys = ["A", "B"]

The schema is checked strictly: unknown tables, keys or (against the data) columns are errors
with a did-you-mean; types are checked; lo < hi; levels and keys unique.  Every failure is an
:class:`~dpreg.exceptions.InvalidInputError` naming the file and the field; a codebook never
holds private data, so its own values may be shown.

Layer: with :mod:`dpreg._formula` and :mod:`dpreg._validation` (parsing and validation; it
imports nothing of dpreg above them).
"""

from __future__ import annotations

import math
import re
import reprlib
import tomllib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dpreg._validation import check_bounds, check_known_keys, did_you_mean, exact_float_key
from dpreg.exceptions import InvalidInputError, UnknownNameError

__all__ = [
    "Codebook",
    "ColumnSpec",
    "load_codebook",
    "resolve_codebook",
    "codebook_template",
    "merge_bounds",
    "CODEBOOK_MAX_BYTES",
    "CODEBOOK_MAX_DEPTH",
]

#: largest codebook file read (bytes)
CODEBOOK_MAX_BYTES = 16 * 1024 * 1024
#: deepest nesting of arrays and inline tables read (the schema needs 3: ``columns = {x =
#: {bounds = [0, 1]}}``); a deeper file is refused before it is parsed, because tomllib
#: parses nested values recursively and ends in a RecursionError near depth 300
CODEBOOK_MAX_DEPTH = 32
_TOP = ("dataset", "columns", "groups")
_DATASET = ("n", "description")
_COLUMN = ("type", "bounds", "levels", "description")
_GROUPS = ("by", "keys")
_TYPES = ("numeric", "categorical")


@dataclass(frozen=True)
class ColumnSpec:
    """One declared column: ``type`` ``"numeric"`` (``bounds`` (lo, hi) or ``None`` when not
    declared yet) or ``"categorical"`` (``levels``)."""

    name: str
    type: str = "numeric"
    bounds: tuple[float, float] | None = None
    levels: tuple[Any, ...] | None = None
    description: str = ""


@dataclass(frozen=True)
class Codebook:
    """A validated codebook (:func:`load_codebook`, :meth:`from_dict`)."""

    columns: Mapping[str, ColumnSpec]
    n: int | None = None
    group_by: str | None = None
    group_keys: tuple[Any, ...] | None = None
    description: str = ""
    source: str = "codebook"

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", MappingProxyType(dict(self.columns)))

    # ----------------------------------------------------------------- reading
    @classmethod
    def from_dict(cls, data: Any, source: str = "codebook") -> Codebook:
        """Validate a parsed codebook (the TOML document as a dict)."""
        where = source
        if not isinstance(data, Mapping):
            raise _error(where, "", "a table", type(data).__name__)
        _keys(data, _TOP, where, "")
        ds = data.get("dataset", {})
        if not isinstance(ds, Mapping):
            raise _error(where, "dataset", "a table [dataset]", type(ds).__name__)
        _keys(ds, _DATASET, where, "dataset")
        n = ds.get("n")
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise _error(where, "dataset.n", "an integer >= 1 (the public number of rows)", n)
        desc = _text(ds.get("description", ""), where, "dataset.description")
        cols_raw = data.get("columns", {})
        if not isinstance(cols_raw, Mapping):
            raise _error(where, "columns", "tables [columns.NAME]", type(cols_raw).__name__)
        columns = {str(name): _column(str(name), spec, where)
                   for name, spec in cols_raw.items()}
        gr = data.get("groups", {})
        if not isinstance(gr, Mapping):
            raise _error(where, "groups", "a table [groups]", type(gr).__name__)
        _keys(gr, _GROUPS, where, "groups")
        by = gr.get("by")
        if by is not None and (not isinstance(by, str) or not by):
            raise _error(where, "groups.by", "a column name", by)
        keys = gr.get("keys")
        if keys is not None:
            keys = _unique_list(keys, where, "groups.keys", "group keys")
        return cls(columns=columns, n=n, group_by=by, group_keys=keys, description=desc,
                   source=source)

    @classmethod
    def load(cls, path: str | Path) -> Codebook:
        """Read and validate a TOML codebook file."""
        p = Path(path)
        try:
            size = p.stat().st_size
        except OSError as exc:
            raise InvalidInputError(f"codebook {p}: cannot read it "
                                    f"({exc.strerror or type(exc).__name__})") from None
        if size > CODEBOOK_MAX_BYTES:
            raise InvalidInputError(f"codebook {p}: larger than {CODEBOOK_MAX_BYTES} bytes")
        too_deep = InvalidInputError(f"codebook {p}: arrays or inline tables nest deeper than "
                                     f"{CODEBOOK_MAX_DEPTH} levels (a codebook needs at most 3)")
        try:
            text = p.read_text(encoding="utf-8")
            if nesting_depth(text) > CODEBOOK_MAX_DEPTH:
                raise too_deep
            data = tomllib.loads(text)
        except RecursionError:  # pragma: no cover - the pre-scan refuses such files first
            raise too_deep from None
        except UnicodeDecodeError:
            raise InvalidInputError(f"codebook {p}: not UTF-8 text") from None
        except OSError as exc:
            raise InvalidInputError(f"codebook {p}: cannot read it "
                                    f"({exc.strerror or type(exc).__name__})") from None
        except tomllib.TOMLDecodeError as exc:
            raise InvalidInputError(f"codebook {p}: not valid TOML ({exc})") from None
        cb = cls.from_dict(data, source=str(p))
        if cb.group_keys is not None:
            _exact_keys(p.read_text(encoding="utf-8"), str(p))
        return cb

    # ----------------------------------------------------------------- use
    def bounds(self) -> dict[str, tuple[float, float]]:
        """Declared bounds of the numeric columns (columns with empty bounds left out)."""
        return {c: s.bounds for c, s in self.columns.items() if s.bounds is not None}

    def levels(self) -> dict[str, tuple[Any, ...]]:
        """Declared levels of the categorical columns."""
        return {c: s.levels for c, s in self.columns.items() if s.levels is not None}

    def check_columns(self, names: Sequence[str]) -> None:
        """Every declared column (and the group column) must be a column of the data (names
        only): a typo is an error with a did-you-mean."""
        check_known_keys(self.columns, [str(n) for n in names], f"codebook {self.source}",
                         "a column of the data")
        if self.group_by is not None:
            check_known_keys([self.group_by], [str(n) for n in names],
                             f"codebook {self.source}: groups.by", "a column of the data")

    def check_n(self, n_rows: int, n_public: bool, what: str) -> None:
        """A declared public n must match the data's number of rows -- checked only where the
        release makes n public (replace-one neighbours); the refusal says "does not match"
        and no number.  Under add-remove n is private: the declared n is neither checked nor
        used (a check would itself be a non-private test of n), and a warning says so."""
        if self.n is None:
            return
        if not n_public:
            warnings.warn(f"codebook {self.source} declares dataset.n, but {what} is stated "
                          "under add-remove neighbours, where n is private: the declared n is "
                          "neither checked nor used", UserWarning, stacklevel=3)
            return
        if int(n_rows) != self.n:
            raise InvalidInputError(
                f"the data's number of rows does not match the public n declared in codebook "
                f"{self.source} (dataset.n); nothing was released or charged")

    def to_dict(self) -> dict[str, Any]:
        """The codebook as TOML-shaped data (``from_dict(cb.to_dict())`` round-trips)."""
        out: dict[str, Any] = {}
        ds: dict[str, Any] = {}
        if self.n is not None:
            ds["n"] = self.n
        if self.description:
            ds["description"] = self.description
        if ds:
            out["dataset"] = ds
        cols: dict[str, Any] = {}
        for c, s in self.columns.items():
            entry: dict[str, Any] = {"type": s.type}
            if s.type == "numeric":
                entry["bounds"] = list(s.bounds) if s.bounds is not None else []
            else:
                entry["levels"] = list(s.levels or ())
            if s.description:
                entry["description"] = s.description
            cols[c] = entry
        out["columns"] = cols
        if self.group_by is not None or self.group_keys is not None:
            out["groups"] = {k: v for k, v in (("by", self.group_by), (
                "keys", None if self.group_keys is None else list(self.group_keys)))
                if v is not None}
        return out


# --------------------------------------------------------------------- reading helpers
def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in a TOML document outside strings and comments (a
    table header ``[a]`` counts 1, ``[[a]]`` 2): one linear pass, no recursion, so a hostile
    file is measured before tomllib parses it.  Unclosed brackets count too."""
    depth = deepest = 0
    pos, n = 0, len(text)
    while True:
        m = _SPECIAL.search(text, pos)
        if m is None:
            return deepest
        ch, i = m.group(), m.start()
        if ch == "#":  # a comment runs to the end of the line
            end = text.find("\n", i)
            pos = n if end < 0 else end
        elif ch in "\"'":
            pos = _string_end(text, i)
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
            pos = i + 1
        else:
            depth = max(depth - 1, 0)
            pos = i + 1


_SPECIAL = re.compile(r"[#\"'\[\]{}]")
#: the rest of each kind of TOML string after its opening quotes, through its closing ones
#: (escapes skipped whole; atomic, so an unclosed string fails in linear time)
_STRING_REST = {
    '"""': re.compile(r'(?:[^\\"]++|\\.|"(?!""))*+"""', re.S),
    "'''": re.compile(r"(?:[^']++|'(?!''))*+'''"),
    '"': re.compile(r'(?:[^\\"\n]++|\\.)*+"'),
    "'": re.compile(r"[^'\n]*+'"),
}


def _string_end(text: str, i: int) -> int:
    """Where the TOML string opened at ``text[i]`` ends (one past its closing quotes; the end
    of the line for an unclosed one-line string, the end of the text for an unclosed
    multi-line one).  Linear in the string's length."""
    ch = text[i]
    quote = ch * 3 if text.startswith(ch * 3, i) else ch
    m = _STRING_REST[quote].match(text, i + len(quote))
    if m is None:
        end = text.find("\n", i) if len(quote) == 1 else -1
        return len(text) if end < 0 else end
    end = m.end()
    if len(quote) == 3:  # up to two more quotes belong to the content
        extra = 0
        while extra < 2 and text.startswith(ch, end):
            end, extra = end + 1, extra + 1
    return end


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother = 2, 60, 60
_SHORT.maxlist = _SHORT.maxdict = _SHORT.maxtuple = 6


def _shown(value: Any) -> str:
    """A codebook value for a message: its repr cut short (depth and length bounded, so a
    deep or long value gives a short message and no RecursionError)."""
    return _SHORT.repr(value)


# --------------------------------------------------------------------- validation helpers
def _error(where: str, key: str, expected: str, got: Any) -> InvalidInputError:
    at = f" field {_shown(key)}" if key else ""
    return InvalidInputError(f"codebook {where}:{at} must be {expected}; got {_shown(got)}")


def _keys(table: Mapping[str, Any], allowed: Sequence[str], where: str, at: str) -> None:
    for key in table:
        if key not in allowed:
            raise UnknownNameError(
                f"codebook {where}: unknown key {_shown(key)}"
                f"{' in [' + at + ']' if at else ''}{did_you_mean(str(key)[:100], allowed)} "
                f"(allowed: {list(allowed)})")


def _text(value: Any, where: str, key: str) -> str:
    if not isinstance(value, str):
        raise _error(where, key, "a text", value)
    return value


class _FloatText(str):
    """A TOML float as its text (``tomllib``'s ``parse_float``), told apart from TOML strings."""


def _exact_keys(text: str, where: str) -> None:
    """The ``[groups] keys`` written as floats must be exactly the doubles the TOML reader
    makes of them (:func:`dpreg._validation.exact_float_key`, the rule of ``--groups-file``):
    ``9007199254740993.0`` would become the key 2**53, a group the codebook never listed."""
    keys = tomllib.loads(text, parse_float=_FloatText).get("groups", {}).get("keys", [])
    for i, key in enumerate(keys):
        if isinstance(key, _FloatText):
            try:
                exact_float_key(str(key))
            except ValueError as why:
                raise InvalidInputError(
                    f"codebook {where}: field 'groups.keys' entry {i} ({key}) cannot be a "
                    f"key: {why}; write each key exactly as the number it is (an integer "
                    "without a decimal point is read exactly)") from None


def _level(value: Any, where: str, key: str) -> Any:
    from dpreg._formula import level_node

    if isinstance(value, float) and not math.isfinite(value):
        raise _error(where, key, "finite numbers or texts", value)
    try:
        return level_node(value, f"codebook {where}: field {key!r}").value
    except InvalidInputError as exc:
        raise InvalidInputError(str(exc)) from None


def _unique_list(value: Any, where: str, key: str, what: str) -> tuple[Any, ...]:
    if not isinstance(value, list) or not value:
        raise _error(where, key, f"a non-empty list of {what}", value)
    out = tuple(_level(v, where, key) for v in value)
    kinds = {isinstance(v, str) for v in out}
    if len(kinds) > 1:
        raise _error(where, key, f"{what} of one kind (all numbers or all texts)", value)
    if len(set(out)) != len(out):
        raise _error(where, key, f"unique {what}", value)
    return out


def _column(name: str, spec: Any, where: str) -> ColumnSpec:
    at = f"columns.{name}"
    if not isinstance(spec, Mapping):
        raise _error(where, at, "a table [columns.NAME]", spec)
    _keys(spec, _COLUMN, where, at)
    kind = spec.get("type", "numeric")
    if kind not in _TYPES:
        raise InvalidInputError(f"codebook {where}: field '{at}.type' must be one of "
                                f"{list(_TYPES)}"
                                f"{did_you_mean(kind, _TYPES) if isinstance(kind, str) else ''}"
                                f"; got {_shown(kind)}")
    desc = _text(spec.get("description", ""), where, f"{at}.description")
    if kind == "categorical":
        if "bounds" in spec:
            raise InvalidInputError(f"codebook {where}: field '{at}.bounds' is not allowed for "
                                    "a categorical column (its dummies lie in [0, 1]); give "
                                    "levels")
        if "levels" not in spec:
            raise InvalidInputError(f"codebook {where}: categorical column {name!r} needs "
                                    "levels = [...] (its public list of levels)")
        levels = _unique_list(spec["levels"], where, f"{at}.levels", "levels")
        return ColumnSpec(name, "categorical", None, levels, desc)
    if "levels" in spec:
        raise InvalidInputError(f"codebook {where}: field '{at}.levels' is only allowed with "
                                "type = \"categorical\"")
    raw = spec.get("bounds", [])
    if isinstance(raw, list) and not raw:
        return ColumnSpec(name, "numeric", None, None, desc)  # not declared yet
    if not isinstance(raw, list) or any(isinstance(v, bool) or not isinstance(v, (int, float))
                                        for v in raw):
        raise _error(where, f"{at}.bounds", "[lo, hi] (two numbers) or [] (not declared yet)",
                     raw)
    try:
        bounds = check_bounds(raw, f"codebook {where}: field '{at}.bounds'")
    except InvalidInputError as exc:
        raise InvalidInputError(str(exc)) from None
    return ColumnSpec(name, "numeric", bounds, None, desc)


# --------------------------------------------------------------------- entry points
def load_codebook(codebook: str | Path | Codebook | Mapping[str, Any]) -> Codebook:
    """A :class:`Codebook` from a TOML file path, a parsed dict, or a Codebook (returned)."""
    if isinstance(codebook, Codebook):
        return codebook
    if isinstance(codebook, (str, Path)):
        return Codebook.load(codebook)
    if isinstance(codebook, Mapping):
        return Codebook.from_dict(codebook, source="<dict>")
    raise InvalidInputError(f"codebook must be a path to a TOML file or a dpreg.codebook."
                            f"Codebook; got {type(codebook).__name__}")


def resolve_codebook(codebook: Any, names: Sequence[str] | None = None) -> Codebook | None:
    """``None`` stays None; anything else is loaded and, given the data's column names,
    checked against them."""
    if codebook is None:
        return None
    cb = load_codebook(codebook)
    if names is not None:
        cb.check_columns(names)
    return cb


def merge_bounds(codebook: Codebook | None, bounds: Any) -> Any:
    """The bounds a run uses: the codebook's, extended and overridden by ``bounds`` given
    explicitly (keyword argument or CLI ``--bounds``), which win for the same key.
    ``bounds="private"`` and ``bounds=None`` without a codebook are passed through."""
    if codebook is None or (isinstance(bounds, str) and bounds == "private"):
        return bounds
    out: dict[str, Any] = dict(codebook.bounds())
    if bounds is None:
        return out
    if not isinstance(bounds, Mapping):
        raise InvalidInputError(f"bounds must be a dict mapping column -> (lo, hi) when a "
                                f"codebook is given; got {type(bounds).__name__}")
    out.update(bounds)
    return out


def codebook_template(columns: Sequence[str]) -> str:
    """A codebook template (TOML) for ``columns``: every column numeric with EMPTY bounds to
    fill in from public knowledge.  Only the names are used -- never a value of the data."""
    lines = [
        "# dpreg codebook (docs/codebook.md). Fill in PUBLIC bounds from domain knowledge, a",
        "# survey's answer codes or a registry -- never from the data itself. A column with",
        "# empty bounds is not declared yet; a categorical column takes",
        "#   type = \"categorical\"",
        "#   levels = [1, 2, 3]   (and no bounds)",
        "",
        "[dataset]",
        "# n = 1000              # optional: the public number of rows (replace-one methods)",
        "",
    ]
    for c in columns:
        lines += [f"[columns.{_toml_key(str(c))}]", 'type = "numeric"', "bounds = []", ""]
    lines += ["# [groups]             # optional, for dpreg fit-groups",
              "# by = \"COLUMN\"", "# keys = [\"A\", \"B\"]", ""]
    return "\n".join(lines)


def _toml_key(name: str) -> str:
    import re

    if re.fullmatch(r"[A-Za-z0-9_-]+", name):
        return name
    escaped = "".join(c if c not in '"\\' and 0x20 <= ord(c) != 0x7F
                      else f"\\u{ord(c):04X}" for c in name)
    return f'"{escaped}"'
