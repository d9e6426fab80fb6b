"""The parse tree: a few whitelisted node types over the data's column names, and walks over it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Col:
    name: str


@dataclass(frozen=True)
class Num:
    value: float | int


@dataclass(frozen=True)
class Str:
    value: str


@dataclass(frozen=True)
class Chain:
    """``items[0] ops[0] items[1] ops[1] ...`` at one precedence level (left-associative)."""

    ops: tuple[str, ...]
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Unary:
    op: str
    operand: Node


@dataclass(frozen=True)
class Pow:
    base: Node
    exp: Node


@dataclass(frozen=True)
class Paren:
    inner: Node


@dataclass(frozen=True)
class Call:
    """``func`` is ``"I"``, ``"C"`` or a key of :data:`TRANSFORMS`."""

    func: str
    args: tuple[Node, ...]
    levels: tuple[Num | Str, ...] | None = None
    #: ``C(col)`` whose levels come from a declaration (a codebook), not from the formula:
    #: shown as ``C(col)``, given to formulaic with its levels
    declared: bool = False


Node = Col | Num | Str | Chain | Unary | Pow | Paren | Call


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Chain):
        return node.items
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Pow):
        return (node.base, node.exp)
    if isinstance(node, Paren):
        return (node.inner,)
    if isinstance(node, Call):
        return node.args + (node.levels or ())
    return ()


def _walk(node: Node) -> list[Node]:
    """Every node (iterative: the tree depth is bounded anyway)."""
    out: list[Node] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        out.append(cur)
        stack.extend(reversed(_children(cur)))
    return out


def _has_column(node: Node) -> bool:
    return any(isinstance(n, Col) for n in _walk(node))



def _referenced(*nodes: Node) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for node in nodes:
        for n in _walk(node):
            if isinstance(n, Col):
                seen.setdefault(n.name, None)
    return tuple(seen)



def _rename(node: Node, names: Mapping[str, str]) -> Node:
    """``node`` with every column renamed by ``names``."""
    if isinstance(node, Col):
        return Col(names.get(node.name, node.name))
    if isinstance(node, Chain):
        return Chain(node.ops, tuple(_rename(i, names) for i in node.items))
    if isinstance(node, Unary):
        return Unary(node.op, _rename(node.operand, names))
    if isinstance(node, Pow):
        return Pow(_rename(node.base, names), _rename(node.exp, names))
    if isinstance(node, Paren):
        return Paren(_rename(node.inner, names))
    if isinstance(node, Call):
        return Call(node.func, tuple(_rename(a, names) for a in node.args), node.levels,
                    node.declared)
    return node
