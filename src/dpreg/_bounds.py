"""The one conversion of a public ``bounds`` mapping (column -> (lo, hi)) into what the cores take.

Every entry point that takes ``bounds=`` -- :func:`dpreg.regress` (plain columns and formula
terms), :func:`dpreg.fit_by_group`, :func:`dpreg.plan`, :func:`dpreg.release_sscp` and the
SSCP planning functions, and a codebook's declared moments -- turns the mapping into per-column
``(lo, hi)`` pairs here, and nowhere else (``tests/test_bounds.py`` scans the package for a
second copy):

* :func:`column_bounds`: one column's pair; a column without an entry is refused with
  ``bounds for column 'x' are missing: ...`` (naming the column, never a data value);
* :func:`xy_bounds`: the cores' ``x_bounds`` (one pair per regressor) and ``y_bounds``;
* :func:`columns_bounds`: the pairs of a list of columns (the SSCP release, which has no x/y
  roles; a list of pairs aligned with the columns is accepted there too);
* :func:`term_bounds` / :func:`check_term_domains`: the bounds of a formula term derived by
  interval arithmetic (:mod:`dpreg._intervals`) from the declared bounds of its raw columns.

Each pair is validated by :func:`dpreg._validation.check_bounds` (two finite reals, lo < hi,
within the floating-point limits); a bad pair raises an
:class:`~dpreg.exceptions.InvalidParameterError` naming ``bounds['x']``, the expected range and
the value received (a bound is public).  Everything here reads the public mapping only: it runs
before any private value is read, any noise drawn or anything charged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dpreg._validation import check_bounds, fmt
from dpreg.exceptions import InvalidInputError

__all__ = ["PRIVATE", "AllPrivate", "missing_error", "as_mapping", "column_bounds", "xy_bounds",
           "columns_bounds", "term_bounds", "check_term_domains"]

Pair = tuple[float, float]

#: the value of a column whose bounds ``method="auto"`` proposes privately
PRIVATE = "private"


class AllPrivate(dict):  # type: ignore[type-arg]
    """``bounds="private"``: every column's bounds are proposed privately (``method="auto"``)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> str:
        return PRIVATE


def _how(column: str) -> str:
    return (f"pass bounds={{{column!r}: (lo, hi), ...}} with public limits from domain "
            f"knowledge or a codebook (CLI: --bounds {column}=LO:HI). dpreg never reads bounds "
            "off the private data.")


def missing_error(columns: Sequence[str], why: str | None = None) -> InvalidInputError:
    """The refusal of columns without declared bounds: ``bounds for column 'x' are missing:
    WHY`` (``bounds for columns 'x', 'y' ...`` for several), naming the columns only."""
    cols = [str(c) for c in columns]
    what = (f"column {cols[0]!r}" if len(cols) == 1
            else "columns " + ", ".join(repr(c) for c in cols))
    return InvalidInputError(f"bounds for {what} are missing: {why or _how(cols[0])}")


def as_mapping(bounds: Any) -> Mapping[str, Any]:
    """``bounds`` itself when it is a mapping; ``None`` or anything else is refused."""
    if bounds is None:
        raise InvalidInputError("bounds are required: pass bounds={column: (lo, hi), ...} with "
                                "public limits, or a codebook that declares them")
    if not isinstance(bounds, Mapping):
        raise InvalidInputError(
            f"bounds must be a dict mapping column -> (lo, hi); got {type(bounds).__name__}")
    return bounds


def column_bounds(bounds: Any, column: str, *, allow_private: bool = False,
                  why: str | None = None) -> Any:
    """The public ``(lo, hi)`` of ``column`` in the ``bounds`` mapping, validated.

    ``allow_private``: a column declared ``"private"`` (or every column of an
    :class:`AllPrivate`) returns :data:`PRIVATE` (``method="auto"`` proposes it privately);
    otherwise that value is refused like any other non-pair.  ``why``: the text after
    ``are missing:`` (default: how to declare the bounds)."""
    bounds = as_mapping(bounds)
    if isinstance(bounds, AllPrivate):
        value: Any = PRIVATE
    elif column not in bounds:
        raise missing_error([column], why)
    else:
        value = bounds[column]
    if allow_private and isinstance(value, str) and value == PRIVATE:
        return PRIVATE
    return check_bounds(value, f"bounds[{column!r}]")


def _check_present(bounds: Mapping[str, Any], columns: Sequence[str], why: str | None) -> None:
    if isinstance(bounds, AllPrivate):
        return
    missing = [c for c in columns if c not in bounds]
    if missing:
        raise missing_error(missing, why)


def xy_bounds(bounds: Any, x_columns: Sequence[str], y_column: str, *,
              allow_private: bool = False, why: str | None = None
              ) -> tuple[list[Any], Any]:
    """``(x_bounds, y_bounds)``: one validated pair per regressor (in order) and the
    response's.  Every missing column is named (all of them, before any pair is checked)."""
    bounds = as_mapping(bounds)
    _check_present(bounds, [*x_columns, y_column], why)
    xb = [column_bounds(bounds, c, allow_private=allow_private) for c in x_columns]
    return xb, column_bounds(bounds, y_column, allow_private=allow_private)


def columns_bounds(bounds: Any, columns: Sequence[str], *, name: str = "bounds"
                   ) -> list[Pair]:
    """One validated pair per column of ``columns``, from a mapping column -> (lo, hi) or from
    a list of pairs aligned with ``columns`` (the SSCP release; ``name`` is the parameter's
    name in the messages)."""
    if bounds is None:
        raise InvalidInputError(
            f"{name} is required: give public (lo, hi) bounds for every released column (from "
            "a codebook or domain knowledge, never from the data), e.g. "
            "{'income': (0, 500000), 'age': (18, 90)}")
    if isinstance(bounds, Mapping):
        _check_present(bounds, columns, None)
        return [check_bounds(bounds[c], f"{name}[{c!r}]") for c in columns]
    if isinstance(bounds, (str, bytes)) or not isinstance(bounds, Sequence):
        raise InvalidInputError(
            f"{name} must be a dict column -> (lo, hi) or a list of (lo, hi) pairs; got "
            f"{fmt(bounds)}")
    if len(bounds) != len(columns):
        raise InvalidInputError(
            f"{name} must have one (lo, hi) pair per column ({len(columns)}); got {len(bounds)}")
    return [check_bounds(b, f"{name}[{j}]") for j, b in enumerate(bounds)]


# ---------------------------------------------------------------------------- formula terms
def _declared(bounds: Mapping[str, Any], cols: Sequence[str]) -> dict[str, Pair]:
    """The validated pairs of the raw columns among ``cols`` that have public ones."""
    return {c: check_bounds(bounds[c], f"bounds[{c!r}]") for c in cols
            if c in bounds and not isinstance(bounds[c], str)}


def _shown(usable: Mapping[str, Pair]) -> str:
    return ", ".join(f"{c} in [{b[0]:g}, {b[1]:g}]" for c, b in usable.items())


def term_bounds(name: str, factors: tuple[Any, ...], bounds: Mapping[str, Any], what: str,
                derived: dict[str, str]) -> Any:
    """The bounds of one model-matrix column: given for it by name, or derived by interval
    arithmetic (:mod:`dpreg._intervals`) from the declared bounds of the raw columns it is
    computed from (a 0/1 dummy factor lies in [0, 1]).  ``what``: the term's role in the
    messages (``"regressor"``, ``"response"``).  Derived ones are noted in ``derived`` (term ->
    how, stated in the summary).  :data:`PRIVATE` where the column's bounds are
    private (``method="auto"``)."""
    from dpreg import _formula, _intervals

    if isinstance(bounds, AllPrivate) or name in bounds:
        return column_bounds(bounds, name, allow_private=True)
    if factors == (_formula.Col(name),) or not factors:
        return column_bounds(bounds, name, allow_private=True)  # a raw column
    raw = sorted({n.name for f in factors if f is not None for n in _formula._walk(f)
                  if isinstance(n, _formula.Col)})
    usable = _declared(bounds, raw)
    missing = [c for c in raw if c not in usable]
    if missing:
        private = [c for c in missing if c in bounds]
        why = (f"the raw column(s) {private} have private bounds, which cannot be carried "
               "through a formula term" if private else
               f"the raw column(s) {missing} have no declared bounds")
        raise InvalidInputError(
            f"bounds for {what} {name!r} are missing: {why}. Declare public bounds for the raw "
            f"column(s) (bounds={{{missing[0]!r}: (lo, hi), ...}}, a codebook, or CLI --bounds "
            f"{missing[0]}=LO:HI) and dpreg derives the term's bounds, or give bounds for the "
            f"term itself ({name!r}). dpreg never reads bounds off the private data.")
    try:
        lo, hi = _intervals.column_interval(factors, usable)
    except _intervals.DomainError as exc:
        raise InvalidInputError(
            f"cannot derive bounds for {what} {name!r} from the declared bounds "
            f"({_shown(usable)}): {exc}. Declare a range inside the transform's domain, or "
            f"give bounds for the term itself ({name!r})") from None
    try:
        out = check_bounds((lo, hi), f"derived bounds of {name!r}")
    except InvalidInputError as exc:  # e.g. a constant term: lo == hi
        raise InvalidInputError(f"{exc}; give bounds for the term itself ({name!r})") from None
    derived[name] = "from " + _shown(usable) if usable else "0/1 dummies"
    return out


def check_term_domains(parsed: Any, bounds: Mapping[str, Any]) -> None:
    """Every transform/``I()`` of a parsed formula must be defined on the declared box of its
    raw columns (checked from the public bounds alone, before the model matrix is built -- so
    a range leaving a transform's domain is refused without looking at any row)."""
    from dpreg import _formula, _intervals

    if isinstance(bounds, AllPrivate):
        return
    for side, what in ((parsed.lhs, "response"), (parsed.rhs, "regressor")):
        for node in _formula._walk(side):
            if not isinstance(node, _formula.Call) or node.func == "C":
                continue
            cols = sorted({n.name for n in _formula._walk(node) if isinstance(n, _formula.Col)})
            if not cols or any(not isinstance(bounds.get(c), (tuple, list)) for c in cols):
                continue
            usable = _declared(bounds, cols)
            try:
                _intervals.interval_of(node, usable)
            except _intervals.DomainError as exc:
                name = _formula._render(node, _formula.display_name)
                raise InvalidInputError(
                    f"cannot derive bounds for {what} {name!r} from the declared bounds "
                    f"({_shown(usable)}): {exc}. Declare a range inside the transform's "
                    f"domain, or give bounds for the term itself ({name!r})") from None
