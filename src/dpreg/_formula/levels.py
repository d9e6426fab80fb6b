"""Categorical factors: declared levels (a codebook), the columns used as factors and the check
that no set of levels is read off the private data."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from dpreg._formula.render import Formula, display_name
from dpreg._formula.tokens import _INTERNAL_RE, _show
from dpreg._formula.tree import Call, Chain, Col, Node, Num, Paren, Pow, Str, Unary, _walk
from dpreg.exceptions import InvalidInputError

_LEVEL_TEXT_RE = re.compile(r"[^'\"\\`\x00-\x1f\x7f]*")


def level_node(value: Any, where: str) -> Num | Str:
    """A declared level (a number or a text) as a literal of the grammar; text may not hold
    quotes, backslashes, backquotes or control characters (as in ``levels=[...]``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InvalidInputError(f"{where}: a level must be a number or a text; got "
                                f"{type(value).__name__}")
    if isinstance(value, str):
        if not _LEVEL_TEXT_RE.fullmatch(value) or _INTERNAL_RE.search(value):
            raise InvalidInputError(f"{where}: level {_show(value)} may not contain quotes, "
                                    "backslashes, backquotes or control characters")
        return Str(value)
    if not math.isfinite(value) or (isinstance(value, int) and abs(value) >= 10 ** 18):
        raise InvalidInputError(f"{where}: level {value!r} must be a finite number")
    return Num(value)


def declare_levels(formula: Formula, levels: Mapping[str, Sequence[Any]]) -> Formula:
    """``formula`` with the declared ``levels`` (column -> public list of levels, e.g. from a
    codebook) applied: ``C(col)`` without ``levels=`` and a bare factor ``col`` become
    ``C(col)`` with those levels (shown as ``C(col)``; formulaic gets the levels), so that
    both spellings give the same dummies.  Levels written in the formula win.  A declared
    categorical column used in arithmetic, a transform or as the response is refused."""
    if not levels:
        return formula
    declared = {c: tuple(level_node(v, f"levels of {c!r}") for v in vals)
                for c, vals in levels.items()}

    def numeric_use(node: Node) -> None:
        for n in _walk(node):
            if isinstance(n, Col) and n.name in declared:
                raise InvalidInputError(
                    f"formula: column {n.name!r} is declared categorical (levels "
                    f"{list(levels[n.name])}); it can be a factor (C({display_name(n.name)}) "
                    "or the bare name) but not a number in arithmetic, a transform or the "
                    "response; declare it numeric with bounds instead")

    def factor(node: Node) -> Node:
        if isinstance(node, Col):
            if node.name in declared:
                return Call("C", (node,), declared[node.name], declared=True)
            return node
        if isinstance(node, Chain):
            return Chain(node.ops, tuple(factor(i) for i in node.items))
        if isinstance(node, Pow):
            return Pow(factor(node.base), node.exp)
        if isinstance(node, Paren):
            return Paren(factor(node.inner))
        if isinstance(node, Call) and node.func == "C":
            col = node.args[0]
            assert isinstance(col, Col)
            if node.levels is None and col.name in declared:
                return Call("C", node.args, declared[col.name], declared=True)
            return node
        if isinstance(node, (Num, Unary)):
            return node
        numeric_use(node)
        return node

    numeric_use(formula.lhs)
    return Formula(formula.lhs, factor(formula.rhs), formula.columns)


def categorical_columns(formula: Formula) -> set[str]:
    """Columns used as categorical factors (inside ``C()``)."""
    out = set()
    for call in formula.categorical_calls():
        col = call.args[0]
        assert isinstance(col, Col)
        out.add(col.name)
    return out


def check_categorical_levels(formula: Formula, dtypes: Mapping[str, Any]) -> None:
    """``C(col)`` without ``levels=`` needs a pandas Categorical ``col`` (public categories);
    otherwise its set of levels would be read off the private data.  Uses dtypes only."""
    for call in formula.categorical_calls():
        col = call.args[0]
        assert isinstance(col, Col)
        if call.levels is None and not isinstance(dtypes.get(col.name), pd.CategoricalDtype):
            raise InvalidInputError(
                f"formula: C({display_name(col.name)}) would read the set of levels off the "
                "private data: declare them -- C(col, levels=[...]) in the formula, a codebook "
                "entry (type = \"categorical\", levels = [...]; docs/codebook.md), or a pandas "
                "Categorical column with the public categories"
            )
