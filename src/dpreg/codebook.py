"""Codebooks: the public description of a data set's columns, in one TOML file.

A codebook declares, per raw column, its type (numeric with public bounds, or categorical with
its public levels), and optionally the public number of rows and the public list of group keys.
Everything in it must come from outside the private data (a survey's answer codes, a registry,
domain knowledge); ``dpreg codebook init DATA.csv`` writes a template from the CSV's *header
line only*, with empty bounds to fill in.  docs/codebook.md documents the schema::

    [dataset]                      # optional
    n = 6366                       # optional: public number of rows (replace-one methods)
    description = "..."            # optional
    moments_source = "..."         # optional: where the declared moments come from

    [columns.age]
    type = "numeric"               # the default
    bounds = [17.5, 42.0]          # public [lo, hi], lo < hi; [] = not declared yet
    mean = 29.1                    # optional, with sd: PUBLIC moments for plans
    sd = 6.8                       #   (a census, a public reference sample -- never the data)
    corr = {yrs_married = 0.89}    # optional: public correlations with other columns

    [columns.occupation]
    type = "categorical"
    levels = [1, 2, 3, 4, 5, 6]    # unique numbers or texts

    [groups]                       # optional (dpreg fit-groups)
    by = "tract"
    keys = ["A", "B"]

The schema is checked strictly: unknown tables, keys or (against the data) columns are errors
with a did-you-mean; types are checked; lo < hi; levels and keys unique; declared moments
possible for a variable inside its bounds (mean in [lo, hi], 0 < sd² <= (mean − lo)(hi − mean),
|corr| <= 1, the same correlation when both columns declare it).  Every failure is an
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

from dpreg._bounds import column_bounds
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
    "DeclaredMoments",
    "check_moments",
]

#: largest codebook file read (bytes)
CODEBOOK_MAX_BYTES = 16 * 1024 * 1024
#: deepest nesting of arrays and inline tables read (the schema needs 3: ``columns = {x =
#: {bounds = [0, 1]}}``); a deeper file is refused before it is parsed, because tomllib
#: parses nested values recursively and ends in a RecursionError near depth 300
CODEBOOK_MAX_DEPTH = 32
_TOP = ("dataset", "columns", "groups")
_DATASET = ("n", "description", "moments_source")
_COLUMN = ("type", "bounds", "levels", "description", "mean", "sd", "corr")
#: relative slack of the largest possible variance (mean − lo)(hi − mean) of a variable in
#: [lo, hi] (a 0/1 column declared with sd = √(p(1 − p)) sits exactly on it)
_VARIANCE_SLACK = 1e-9
_GROUPS = ("by", "keys")
_TYPES = ("numeric", "categorical")


@dataclass(frozen=True)
class ColumnSpec:
    """One declared column: ``type`` ``"numeric"`` (``bounds`` (lo, hi) or ``None`` when not
    declared yet; optionally the numeric ``levels`` it takes) or ``"categorical"``
    (``levels``)."""

    name: str
    type: str = "numeric"
    bounds: tuple[float, float] | None = None
    levels: tuple[Any, ...] | None = None
    description: str = ""
    #: declared PUBLIC mean and sd (population sd, divisor N) of a numeric column, or None
    mean: float | None = None
    sd: float | None = None
    #: declared PUBLIC correlations with other numeric columns, ((other, r), ...)
    corr: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class DeclaredMoments:
    """Validated PUBLIC moments of some numeric columns (:func:`check_moments`): ``mean`` and
    ``sd`` (population sd, divisor N) per column, ``corr`` per unordered pair (keys are sorted
    name pairs), and ``source``, where they come from.  Used by :func:`dpreg.plan` to describe
    the design a release will see; they must come from outside the private data (a census, a
    previous survey's published tables, a public reference sample)."""

    mean: Mapping[str, float]
    sd: Mapping[str, float]
    corr: Mapping[tuple[str, str], float]
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("mean", "sd", "corr"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    def correlation(self, a: str, b: str) -> float | None:
        """The declared correlation of columns ``a`` and ``b`` (1 for a == b; None: not
        declared)."""
        if a == b:
            return 1.0
        return self.corr.get((a, b) if a < b else (b, a))

    def as_dict(self) -> dict[str, Any]:
        corr: dict[str, dict[str, float]] = {}
        for (a, b), r in self.corr.items():
            corr.setdefault(a, {})[b] = r
        return {"mean": dict(self.mean), "sd": dict(self.sd), "corr": corr,
                "source": self.source}


@dataclass(frozen=True)
class Codebook:
    """A validated codebook (:func:`load_codebook`, :meth:`from_dict`)."""

    columns: Mapping[str, ColumnSpec]
    n: int | None = None
    group_by: str | None = None
    group_keys: tuple[Any, ...] | None = None
    description: str = ""
    source: str = "codebook"
    moments_source: str = ""

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
        msrc = _text(ds.get("moments_source", ""), where, "dataset.moments_source")
        cols_raw = data.get("columns", {})
        if not isinstance(cols_raw, Mapping):
            raise _error(where, "columns", "tables [columns.NAME]", type(cols_raw).__name__)
        columns = {str(name): _column(str(name), spec, where)
                   for name, spec in cols_raw.items()}
        _check_correlations(columns, f"codebook {where}")
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
                   source=source, moments_source=msrc)

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
        return {c: s.levels for c, s in self.columns.items()
                if s.levels is not None and s.type == "categorical"}

    def numeric_levels(self, column: str) -> tuple[float, ...] | None:
        """The public ``levels`` a numeric column declares (the values it can take: a 0/1
        outcome, a rating scale), or ``None`` (not declared, not numeric, not a column of the
        codebook).  A response with few levels ties many Theil-Sen pairwise slopes at
        exactly 0: the Theil-Sen methods warn (``TiedSlopesWarning``) before any charge."""
        s = self.columns.get(column)
        if s is None or s.type != "numeric" or s.levels is None:
            return None
        return tuple(float(v) for v in s.levels)

    def moments(self) -> DeclaredMoments:
        """The declared PUBLIC moments (``mean``/``sd``/``corr`` of the numeric columns that
        declare them; empty when none do), for :func:`dpreg.plan`."""
        mean = {c: s.mean for c, s in self.columns.items() if s.mean is not None}
        sd = {c: s.sd for c, s in self.columns.items() if s.sd is not None}
        corr: dict[tuple[str, str], float] = {}
        for c, s in self.columns.items():
            for other, r in s.corr:
                corr[(c, other) if c < other else (other, c)] = r
        return DeclaredMoments(mean, sd, corr, self.moments_source)

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
        if self.moments_source:
            ds["moments_source"] = self.moments_source
        if ds:
            out["dataset"] = ds
        cols: dict[str, Any] = {}
        for c, s in self.columns.items():
            entry: dict[str, Any] = {"type": s.type}
            if s.type == "numeric":
                entry["bounds"] = list(s.bounds) if s.bounds is not None else []
                if s.mean is not None:
                    entry["mean"], entry["sd"] = s.mean, s.sd
                if s.corr:
                    entry["corr"] = dict(s.corr)
                if s.levels is not None:
                    entry["levels"] = list(s.levels)
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
        for key in ("mean", "sd", "corr"):
            if key in spec:
                raise InvalidInputError(f"codebook {where}: field '{at}.{key}' is not allowed "
                                        "for a categorical column (declare moments of numeric "
                                        "columns)")
        if "bounds" in spec:
            raise InvalidInputError(f"codebook {where}: field '{at}.bounds' is not allowed for "
                                    "a categorical column (its dummies lie in [0, 1]); give "
                                    "levels")
        if "levels" not in spec:
            raise InvalidInputError(f"codebook {where}: categorical column {name!r} needs "
                                    "levels = [...] (its public list of levels)")
        levels = _unique_list(spec["levels"], where, f"{at}.levels", "levels")
        return ColumnSpec(name, "categorical", None, levels, desc)
    raw = spec.get("bounds", [])
    bounds: tuple[float, float] | None = None
    if not (isinstance(raw, list) and not raw):  # [] = not declared yet
        if not isinstance(raw, list) or any(isinstance(v, bool) or not isinstance(v, (int, float))
                                            for v in raw):
            raise _error(where, f"{at}.bounds", "[lo, hi] (two numbers) or [] (not declared "
                         "yet)", raw)
        try:
            bounds = check_bounds(raw, f"codebook {where}: field '{at}.bounds'")
        except InvalidInputError as exc:
            raise InvalidInputError(str(exc)) from None
    mean = sd = None
    if "mean" in spec or "sd" in spec:
        if "mean" not in spec or "sd" not in spec:
            raise InvalidInputError(f"codebook {where}: column {name!r} declares "
                                    f"{'mean' if 'mean' in spec else 'sd'} without "
                                    f"{'sd' if 'mean' in spec else 'mean'}: declare both")
        if bounds is None:
            raise InvalidInputError(f"codebook {where}: column {name!r} declares a mean and sd "
                                    "but no bounds: moments are checked against the public "
                                    "bounds, declare them first")
        mean, sd = _moment_pair(spec["mean"], spec["sd"], bounds, f"codebook {where}: field "
                                f"'{at}")
    corr: tuple[tuple[str, float], ...] = ()
    if "corr" in spec:
        raw_corr = spec["corr"]
        if not isinstance(raw_corr, Mapping):
            raise _error(where, f"{at}.corr", "an inline table {other_column = r, ...}", raw_corr)
        if mean is None:
            raise InvalidInputError(f"codebook {where}: column {name!r} declares corr without "
                                    "mean and sd: declare them too")
        corr = tuple((str(other), _correlation(r, f"codebook {where}: field '{at}.corr."
                                                  f"{other}'"))
                     for other, r in raw_corr.items())
        if any(other == name for other, _ in corr):
            raise InvalidInputError(f"codebook {where}: field '{at}.corr' names the column "
                                    "itself (its correlation with itself is 1)")
    return ColumnSpec(name, "numeric", bounds, _numeric_levels(spec, bounds, where, at), desc,
                      mean, sd, corr)


def _numeric_levels(spec: Mapping[str, Any], bounds: tuple[float, float] | None, where: str,
                    at: str) -> tuple[float, ...] | None:
    """A numeric column's optional public ``levels``: the values it can take (a 0/1 outcome,
    a rating scale), unique finite numbers inside its bounds.  The column stays a number in
    formulas; the Theil-Sen methods warn that few levels tie many pairwise slopes at 0."""
    if "levels" not in spec:
        return None
    raw = spec["levels"]
    if (not isinstance(raw, list) or not raw
            or not all(_real(v) for v in raw)):
        raise _error(where, f"{at}.levels", "a non-empty list of finite numbers (a numeric "
                     "column's public values; texts need type = \"categorical\")", raw)
    out = tuple(float(v) for v in raw)
    if len(set(out)) != len(out):
        raise _error(where, f"{at}.levels", "unique numbers", raw)
    if bounds is not None and not all(bounds[0] <= v <= bounds[1] for v in out):
        raise InvalidInputError(f"codebook {where}: field '{at}.levels' must lie inside "
                                f"'{at}.bounds' [{bounds[0]:g}, {bounds[1]:g}]; got "
                                f"{_shown(raw)}")
    return out


def _real(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(float(value)))


def _moment_pair(mean: Any, sd: Any, bounds: tuple[float, float], at: str
                 ) -> tuple[float, float]:
    """A declared (mean, sd) possible for a variable inside ``bounds``: mean in [lo, hi],
    sd > 0 and sd² <= (mean − lo)(hi − mean) (the largest variance a variable in [lo, hi] with
    that mean has: all its mass on lo and hi)."""
    lo, hi = bounds
    if not _real(mean):
        raise InvalidInputError(f"{at}.mean' must be a finite number; got {_shown(mean)}")
    if not _real(sd):
        raise InvalidInputError(f"{at}.sd' must be a finite number; got {_shown(sd)}")
    m, s = float(mean), float(sd)
    if not lo <= m <= hi:
        raise InvalidInputError(f"{at}.mean' must lie in the bounds [{lo:g}, {hi:g}]; got {m:g}")
    top = (m - lo) * (hi - m)
    if not s > 0:
        raise InvalidInputError(f"{at}.sd' must be > 0 (a constant column has no slope); got "
                                f"{s:g}")
    if s * s > top * (1.0 + _VARIANCE_SLACK):
        raise InvalidInputError(
            f"{at}.sd' must be <= {math.sqrt(top):.6g}, the largest sd of a variable in "
            f"[{lo:g}, {hi:g}] with mean {m:g} (all its mass on the two bounds); got {s:g}")
    return m, s


def _correlation(value: Any, at: str) -> float:
    if not _real(value) or not -1.0 <= float(value) <= 1.0:
        raise InvalidInputError(f"{at} must be a correlation, a number in [-1, 1]; got "
                                f"{_shown(value)}")
    return float(value)


def _check_correlations(columns: Mapping[str, ColumnSpec], where: str) -> None:
    # ``where``: how messages name the input ("codebook PATH" or "design")
    """Every ``corr`` names a numeric column with declared moments; a pair declared on both
    columns must agree."""
    declared = [c for c, s in columns.items() if s.mean is not None]
    seen: dict[tuple[str, str], float] = {}
    for name, spec in columns.items():
        for other, r in spec.corr:
            if other not in columns or columns[other].mean is None:
                raise UnknownNameError(
                    f"{where}: the correlations of {name!r} name {_shown(other)}, "
                    f"which is not a numeric column with a declared mean and sd"
                    f"{did_you_mean(other[:100], declared)}")
            key = (name, other) if name < other else (other, name)
            if key in seen and abs(seen[key] - r) > 1e-12:
                raise InvalidInputError(
                    f"{where}: the correlation of {key[0]!r} and {key[1]!r} is "
                    f"declared twice with different values ({seen[key]:g} and {r:g})")
            seen[key] = r


def check_moments(moments: Any, bounds: Mapping[str, tuple[float, float]],
                  where: str = "design") -> DeclaredMoments:
    """Validate declared PUBLIC moments given as a dict ``{"mean": {col: m}, "sd": {col: s},
    "corr": {col: {other: r}}, "source": "..."}`` (``corr`` and ``source`` optional) against
    the public ``bounds``, with the rules of a codebook's ``mean``/``sd``/``corr``; a
    :class:`DeclaredMoments` is returned as it is."""
    if isinstance(moments, DeclaredMoments):
        return moments
    if not isinstance(moments, Mapping):
        raise InvalidInputError(f"{where} must be a dict with keys 'mean', 'sd' and optionally "
                                f"'corr', 'source'; got {type(moments).__name__}")
    check_known_keys(moments, ["mean", "sd", "corr", "source"], where, "a key of the design")
    mean, sd = moments.get("mean", {}), moments.get("sd", {})
    if not isinstance(mean, Mapping) or not isinstance(sd, Mapping):
        raise InvalidInputError(f"{where}['mean'] and {where}['sd'] must be dicts column -> "
                                "number")
    if set(mean) != set(sd):
        odd = sorted(set(mean) ^ set(sd), key=str)
        raise InvalidInputError(f"{where}: every column needs both a mean and an sd; "
                                f"{_shown(odd)} has only one")
    cols: dict[str, ColumnSpec] = {}
    for c in mean:
        name = str(c)
        b = column_bounds(bounds, name, why=f"{where} declares a mean and sd for it, which are "
                          "checked against public bounds, but it has no public bounds")
        m, s = _moment_pair(mean[c], sd[c], b, f"{where}: field '{name}")
        cols[name] = ColumnSpec(name, "numeric", b, None, "", m, s)
    raw_corr = moments.get("corr", {})
    if not isinstance(raw_corr, Mapping):
        raise InvalidInputError(f"{where}['corr'] must be a dict column -> {{other: r}}; got "
                                f"{type(raw_corr).__name__}")
    for c, row in raw_corr.items():
        name = str(c)
        if not isinstance(row, Mapping):
            raise InvalidInputError(f"{where}['corr'][{name!r}] must be a dict other -> r; got "
                                    f"{type(row).__name__}")
        if name not in cols:
            raise InvalidInputError(f"{where}['corr'] names {name!r}, which has no declared "
                                    f"mean and sd{did_you_mean(name[:100], list(cols))}")
        pairs = tuple((str(o), _correlation(r, f"{where}['corr'][{name!r}][{str(o)!r}]"))
                      for o, r in row.items())
        if any(o == name for o, _ in pairs):
            raise InvalidInputError(f"{where}['corr'][{name!r}] names the column itself")
        spec = cols[name]
        cols[name] = ColumnSpec(name, "numeric", spec.bounds, None, "", spec.mean, spec.sd,
                                spec.corr + pairs)
    _check_correlations(cols, where)
    source = moments.get("source", "")
    if not isinstance(source, str):
        raise InvalidInputError(f"{where}['source'] must be a text; got {_shown(source)}")
    return Codebook(cols, moments_source=source).moments()


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
        "# For dpreg plan, a numeric column may declare PUBLIC moments (a census, a public",
        "# reference sample -- never the private data): mean = ..., sd = ...,",
        "# corr = {other = r}; say where they come from in [dataset] moments_source.",
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
