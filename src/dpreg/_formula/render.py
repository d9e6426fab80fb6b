"""Text of a parse tree: the user-facing spelling and what formulaic is given; :class:`Formula`."""

from __future__ import annotations

import keyword
from collections.abc import Callable
from dataclasses import dataclass

from dpreg._formula.tokens import _INTERNAL, TRANSFORMS
from dpreg._formula.tree import Call, Chain, Col, Node, Num, Paren, Pow, Str, Unary, _walk


def display_name(name: str) -> str:
    """How a column is spelled in a formula: bare if it is a plain ASCII identifier, else in
    backquotes."""
    if name.isascii() and name.isidentifier() and not keyword.iskeyword(name):
        return name
    return f"`{name}`"


def _render(node: Node, col: Callable[[str], str], full: bool = False) -> str:
    """The text of ``node``; ``full``: declared levels written out (what formulaic gets)."""
    if isinstance(node, Col):
        return col(node.name)
    if isinstance(node, Num):
        return repr(node.value)
    if isinstance(node, Str):
        return repr(node.value)
    if isinstance(node, Chain):
        parts = [_render(node.items[0], col, full)]
        for op, item in zip(node.ops, node.items[1:]):
            parts.append(op if op == ":" else f" {op} ")
            parts.append(_render(item, col, full))
        return "".join(parts)
    if isinstance(node, Unary):
        return node.op + _render(node.operand, col, full)
    if isinstance(node, Pow):
        return f"{_render(node.base, col, full)} ** {_render(node.exp, col, full)}"
    if isinstance(node, Paren):
        return f"({_render(node.inner, col, full)})"
    if node.func == "C":
        inner = _render(node.args[0], col, full)
        if node.levels is not None and (full or not node.declared):
            inner += ", levels=[" + ", ".join(_render(v, col, full) for v in node.levels) + "]"
        return f"C({inner})"
    if node.func == "I":
        return f"I({_render(node.args[0], col, full)})"
    return f"{TRANSFORMS[node.func]}({', '.join(_render(a, col, full) for a in node.args)})"


@dataclass(frozen=True)
class Formula:
    """A validated formula: ``lhs ~ rhs`` as trees over the data's column names."""

    lhs: Node
    rhs: Node
    columns: tuple[str, ...]  # referenced columns, in order of first use

    def text(self) -> str:
        """Canonical user-facing spelling (``np.log`` for ``log``, odd names backquoted)."""
        return f"{_render(self.lhs, display_name)} ~ {_render(self.rhs, display_name)}"

    def __str__(self) -> str:
        return self.text()

    def internal(self) -> str:
        """What formulaic is given: every column replaced by its internal identifier."""
        index = {c: i for i, c in enumerate(self.columns)}

        def col(name: str) -> str:
            return _INTERNAL.format(index[name])

        return f"{_render(self.lhs, col, True)} ~ {_render(self.rhs, col, True)}"

    def categorical_calls(self) -> list[Call]:
        return [n for side in (self.lhs, self.rhs) for n in _walk(side)
                if isinstance(n, Call) and n.func == "C"]
