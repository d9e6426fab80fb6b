"""The interface of an experiment kind and the registry of kinds (:data:`KINDS`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpreg._validation import check_known_keys
from dpreg.exceptions import InvalidInputError

__all__ = ["Kind", "KINDS", "register", "require", "check_keys", "COMMON_KEYS"]

#: the top-level keys of every spec (``spec.py`` requires all but ``notes``); ``quick`` holds
#: the ``--quick`` overrides
COMMON_KEYS = ("name", "title", "paper", "figure", "kind", "seed", "summary", "notes")


def require(spec: Any, table: dict[str, Any], key: str, where: str) -> Any:
    if key not in table:
        raise InvalidInputError(f"spec {spec.name!r}: {where} needs key {key!r}")
    return table[key]


def check_keys(table: Any, allowed: Sequence[str], where: str, what: str) -> None:
    """The one whitelist check of a spec table: ``table`` must be a table (a dict) whose keys
    are all in ``allowed``.  A misspelt or retired key (``trails``, ``epsilon_grid``) is refused
    with :class:`~dpreg.exceptions.UnknownNameError` (an :class:`InvalidInputError`) naming
    ``where`` (the spec and the table), the key, a did-you-mean and the allowed keys -- never
    silently left to fall back to a default.  Only keys are named, never a value."""
    if not isinstance(table, dict):
        raise InvalidInputError(f"{where} must be a table")
    check_known_keys(table, allowed, where, what)


def _tables_at(data: Any, path: str, label: str = "") -> Iterator[tuple[str, str, Any]]:
    """``(label, shape, table)`` for every table at the dotted ``path`` of ``data``: an array of
    tables gives one entry per element, labelled by its ``name`` where it has one; ``shape``
    is how the table is written (``[data]``, ``[[methods]]``, ``[[panels]].fixed``)."""
    head, _, rest = path.partition(".")
    if not isinstance(data, dict) or head not in data:
        return
    value = data[head]
    if isinstance(value, list) and not label:
        for i, item in enumerate(value):
            name = item.get("name") if isinstance(item, dict) else None
            tag = f"[[{head}]] " + (repr(name) if isinstance(name, str) else f"number {i + 1}")
            if rest:
                for lab, shape, table in _tables_at(item, rest, tag):
                    yield lab, f"[[{head}]]{shape}", table
            else:
                yield tag, f"[[{head}]]", item
    elif rest:
        for lab, shape, table in _tables_at(value, rest, label + f"[{head}]" if not label
                                            else f"{label}.{head}"):
            yield lab, (f"[{head}]" if not label else f".{head}") + shape, table
    else:
        yield (f"{label}.{head}" if label else f"[{head}]",
               f".{head}" if label else f"[{head}]", value)


class Kind:
    """Interface of an experiment kind (see the module doc)."""

    name: ClassVar[str] = ""
    #: result columns written after the metadata columns
    columns: ClassVar[tuple[str, ...]] = ()
    #: the keys each table of this kind's specs may have, by dotted path (``"panels"``,
    #: ``"panels.fixed"``; an array of tables is checked element by element): declared beside
    #: the code that reads them, and exactly what it reads (``tests/bench/test_bench_spec_keys.py``
    #: checks each declared key is read).  The top level may have :data:`COMMON_KEYS`,
    #: ``quick`` and the first parts of these paths; any other key anywhere is refused.
    tables: ClassVar[dict[str, tuple[str, ...]]] = {}

    @classmethod
    def top_level_keys(cls) -> tuple[str, ...]:
        """The keys a spec of this kind may have at its top level (and in ``[quick]``, less
        ``quick`` itself)."""
        heads = dict.fromkeys(path.partition(".")[0] for path in cls.tables)
        return (*COMMON_KEYS, "quick", *heads)

    @classmethod
    def check_keys(cls, data: dict[str, Any], where: str, *, within: str = "") -> None:
        """Refuse any key of ``data`` (a spec's top level, or its ``[quick]`` table with
        ``within="quick"``) or of one of its tables that this kind does not read
        (:func:`check_keys`)."""
        if not within:
            check_keys(data, cls.top_level_keys(), f"{where}: the top level",
                       f"a top-level key of a {cls.name!r} spec")
        else:  # [quick] overrides any top-level key but quick itself
            check_keys(data, [k for k in cls.top_level_keys() if k != "quick"],
                       f"{where}: [{within}]", f"a key [{within}] may override in a "
                       f"{cls.name!r} spec")

        def inside(label: str) -> str:  # [data] -> [quick.data], [[methods]] -> [[quick.methods]]
            if not within:
                return label
            brackets = "[[" if label.startswith("[[") else "["
            return brackets + within + "." + label[len(brackets):]

        for path, allowed in cls.tables.items():
            for label, shape, table in _tables_at(data, path):
                check_keys(table, allowed, f"{where}: {inside(label)}",
                           f"a key of a {shape} table of a {cls.name!r} spec")

    @classmethod
    def validate(cls, spec: Any) -> None:
        """Raise InvalidInputError when the spec is malformed for this kind."""

    def cells(self, spec: Any) -> list[dict[str, Any]]:
        raise InvalidInputError(f"kind {self.name!r} defines no cells")

    def run_cell(self, spec: Any, cell: dict[str, Any], seq: np.random.SeedSequence
                 ) -> list[dict[str, Any]]:
        raise InvalidInputError(f"kind {self.name!r} cannot run cells")

    def summarise(self, spec: Any, rows: pd.DataFrame) -> pd.DataFrame:
        return rows

    def figures(self, spec: Any, rows: pd.DataFrame, summary: pd.DataFrame, out: Path
                ) -> list[Path]:
        return []


KINDS: dict[str, type[Kind]] = {}


def register(cls: type[Kind]) -> type[Kind]:
    KINDS[cls.name] = cls
    return cls

