"""The one formula front end: a restricted grammar parsed by whitelist, never evaluated.

Formulas come from analysts (``dpreg.regress``, ``dpreg fit --y/--x``, ``SSCPRelease.regress``,
``dpreg regress``).  A formula string is tokenised and parsed here against the *names* of the
data's columns only -- no value of the data is read -- into a small tree of whitelisted node
types.  Anything outside the grammar is an :class:`~dpreg.exceptions.InvalidInputError` that
names the offending token and its position.  Only then is the model matrix built with
`formulaic <https://matthewwardrop.github.io/formulaic/>`_, from a string *re-rendered from the
validated tree* in which every column is replaced by an internal identifier (``_dpreg_c0_``,
...) that formulaic looks up in a copy of the referenced columns.  So the text formulaic sees
contains nothing but internal identifiers, numeric and quoted-level literals, the operators
below and the whitelisted function names: user text never reaches Python evaluation, a column
name can never be code, and a column called ``np``, ``C``, ``I`` or ``open`` cannot shadow
anything.

Grammar (``docs/formulas.md`` has the user-facing version)::

    formula   := side '~' side               exactly one '~'; the left side is one factor
    side      := sum
    sum       := term (('+' | '-') term)*    formula meaning: add / remove terms
    term      := ['+' | '-'] (0 | 1)         intercept terms: 1, 0, -1, +1, -0
               | product
    product   := inter (('*' | '/') inter)*  a*b = a + b + a:b;  a/b = a + a:b
    inter     := power (':' power)*          interaction
    power     := atom ['**' INT]             (a + b)**2: all interactions up to order 2
    atom      := COLUMN | call | '(' sum ')'
    call      := 'I' '(' arith ')'
               | 'C' '(' COLUMN [',' 'levels' '=' '[' literal (',' literal)* ']'] ')'
               | TRANSFORM '(' arith ')'     log, log1p, exp, sqrt, abs (also np.log, ...)
               | 'power' '(' arith ',' ['-'] NUMBER ')'     (also np.power)
    arith     := aterm (('+' | '-') aterm)*  ordinary arithmetic on columns and numbers
    aterm     := afactor (('*' | '/') afactor)*
    afactor   := ('+' | '-') afactor | apower
    apower    := aatom ['**' afactor]
    aatom     := COLUMN | NUMBER | TRANSFORM-or-power call | '(' arith ')'
    COLUMN    := a column name of the data: an identifier (letters, digits, _; Unicode letters
                 only in NFKC-normal form) or any name in backquotes: `my column`
    literal   := NUMBER | 'text' | "text"    (levels only; no backslashes, quotes or backquotes
                                              inside)

Centring and scaling use public constants inside ``I()``, e.g. ``I((age - 40) / 10)``;
formulaic's ``center()``/``scale()`` (which use the data's mean and standard deviation, a
private statistic) are refused.  ``C(col)`` without ``levels=`` is only accepted for columns
whose pandas dtype is ``Categorical`` (its declared categories are the public levels); that
check needs the dtypes and is made by :func:`check_categorical_levels`.
"""

from __future__ import annotations

import keyword
import math
import re
import unicodedata
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpreg.exceptions import InvalidInputError, InvalidParameterError, UnknownNameError

__all__ = [
    "MAX_FORMULA_CHARS",
    "MAX_NESTING",
    "MAX_EXPRESSION_NODES",
    "MAX_TERMS",
    "TRANSFORMS",
    "Formula",
    "ModelMatrices",
    "parse_formula",
    "parse_term",
    "formula_from_columns",
    "model_matrices",
    "linear_terms",
    "check_categorical_levels",
    "declare_levels",
    "categorical_columns",
    "level_node",
    "display_name",
]

#: Longest formula accepted (characters).
MAX_FORMULA_CHARS = 10_000
#: Deepest nesting of parentheses, calls, unary signs and powers.
MAX_NESTING = 32
#: Most nodes inside one ``I()``/transform call (formulaic's evaluator recurses over them).
MAX_EXPRESSION_NODES = 200
#: Most terms a right-hand side may expand to (``a*b*c*...`` doubles with every factor).
MAX_TERMS = 500

#: Whitelisted transforms: accepted spelling -> what formulaic evaluates (NumPy ufuncs).
TRANSFORMS: dict[str, str] = {
    "log": "np.log", "log1p": "np.log1p", "exp": "np.exp", "sqrt": "np.sqrt",
    "abs": "np.abs", "power": "np.power",
}
_REFUSED_WITH_REASON = {
    "center": "center() centres by the data's mean, a private statistic",
    "scale": "scale() scales by the data's mean and standard deviation, private statistics",
    "standardize": "standardize() uses the data's mean and standard deviation",
    "poly": "poly() fits orthogonal polynomials to the data (private statistics)",
    "bs": "splines place knots at data quantiles (private statistics)",
    "cr": "splines place knots at data quantiles (private statistics)",
    "cc": "splines place knots at data quantiles (private statistics)",
    "cs": "splines place knots at data quantiles (private statistics)",
    "Q": "Q('name') is patsy quoting; write the column name in backquotes: `name`",
}
_INTERNAL = "_dpreg_c{}_"
_INTERNAL_RE = re.compile(r"_dpreg_c(\d+)_")
_TOKEN_RE = re.compile(
    r"(?P<ws>[ \t\r\n]+)"
    r"|(?P<number>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"  # ASCII digits only
    r"|(?P<string>'[^'\\`\x00-\x1f\x7f]*'|\"[^\"\\`\x00-\x1f\x7f]*\")"
    r"|(?P<bq>`[^`\x00-\x1f\x7f]+`)"
    r"|(?P<name>[^\W\d]\w*)"
    r"|(?P<op>\*\*|[~+\-*/:(),=\[\].])"
)


def _fail(message: str) -> InvalidInputError:
    """A malformed formula: the caller's text (a usage error: exit 2 on the command line)."""
    return InvalidParameterError(f"formula: {message}")


def _show(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


# ------------------------------------------------------------------------------ tokens
@dataclass(frozen=True)
class _Token:
    kind: str  # number, string, bq, name, op, end
    text: str
    pos: int


def _non_ascii_digit(ch: str) -> bool:
    """A digit other than 0-9 (Arabic-Indic ``١``, full-width ``１``, ...): ``int``/``float``
    would read it as a number, the grammar does not (docs/formulas.md)."""
    return not ch.isascii() and (ch.isdigit() or ch.isnumeric())


def _tokenize(text: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    n = len(text)
    while pos < n:
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            ch = text[pos]
            if ch in "'\"":
                raise _fail(f"string literal at position {pos} is not closed or contains a "
                            "backslash, a backquote or a control character")
            if ch == "`":
                raise _fail(f"backquoted name at position {pos} is not closed or is empty")
            if _non_ascii_digit(ch):
                raise _fail(f"character {ch!r} (U+{ord(ch):04X}) at position {pos} is a "
                            "non-ASCII digit: only ASCII digits 0-9 are accepted in numbers")
            raise _fail(f"character {ch!r} (U+{ord(ch):04X}) at position {pos} is not allowed "
                        "(the grammar is in docs/formulas.md)")
        kind = m.lastgroup or ""
        tok = m.group()
        end = m.end()
        if kind == "number" and end < n and _non_ascii_digit(text[end]):
            raise _fail(f"number {_show(text[pos:end + 1])} at position {pos} has a non-ASCII "
                        "digit: only ASCII digits 0-9 are accepted in numbers")
        if kind == "number" and end < n and (text[end].isalnum() or text[end] in "_."):
            raise _fail(f"malformed number {_show(text[pos:end + 1])} at position {pos}")
        if kind == "name" and end < n and text[end] in "'\"":
            raise _fail(f"string prefix {tok!r} at position {pos} is not allowed (no f-strings, "
                        "bytes or raw strings)")
        if kind == "name" and unicodedata.normalize("NFKC", tok) != tok:
            raise _fail(f"name {_show(tok)} at position {pos} is not in Unicode NFKC normal "
                        f"form (it reads as {_show(unicodedata.normalize('NFKC', tok))}); "
                        "write column names with odd characters in backquotes")
        if kind != "ws":
            out.append(_Token(kind, tok, pos))
        pos = end
    out.append(_Token("end", "", n))
    return out


# ------------------------------------------------------------------------------ tree
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


# ------------------------------------------------------------------------------ parser
class _Parser:
    def __init__(self, text: str, columns: Sequence[str], released: bool = False) -> None:
        self.text = text
        self.released = released
        self.columns = {str(c) for c in columns}
        self.column_list = [str(c) for c in columns]
        self.toks = _tokenize(text)
        self.i = 0
        self.depth = 0

    # -- helpers
    @property
    def tok(self) -> _Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> _Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def take(self) -> _Token:
        t = self.toks[self.i]
        self.i += 1
        return t

    def at(self, text: str) -> bool:
        return self.tok.kind == "op" and self.tok.text == text

    def expect(self, text: str, where: str) -> _Token:
        if not self.at(text):
            raise self.unexpected(f"expected {text!r} {where}")
        return self.take()

    def unexpected(self, why: str = "") -> InvalidInputError:
        t = self.tok
        if t.kind == "end":
            return _fail(f"unexpected end of formula{': ' + why if why else ''}")
        hint = ""
        if t.kind == "op" and t.text == ".":
            hint = " (attribute access is not allowed)"
        elif t.kind == "op" and t.text in "[]":
            hint = " (subscripts are only allowed in C(col, levels=[...]))"
        elif t.kind == "op" and t.text == "=":
            hint = " (keywords other than levels= are not allowed)"
        elif t.kind == "string":
            hint = " (strings are only allowed in C(col, levels=[...]))"
        return _fail(f"unexpected {_show(t.text)} at position {t.pos}{hint}"
                     f"{'; ' + why if why else ''}")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise _fail(f"nesting deeper than {MAX_NESTING} levels at position {self.tok.pos}")

    def leave(self) -> None:
        self.depth -= 1

    def column(self, t: _Token) -> Col:
        name = t.text[1:-1] if t.kind == "bq" else t.text
        if name not in self.columns:
            shown = self.column_list if len(self.column_list) <= 20 else \
                self.column_list[:20] + ["..."]
            if t.kind == "name" and name in _REFUSED_WITH_REASON:
                raise _fail(f"{name!r} at position {t.pos} is not allowed: "
                            f"{_REFUSED_WITH_REASON[name]}")
            if self.released:
                raise _fail(f"unknown name {_show(name)} at position {t.pos}: not released "
                            f"(released columns: {shown})")
            raise _fail(f"unknown name {_show(name)} at position {t.pos}: not a column of the "
                        f"data (columns: {shown})")
        return Col(name)

    # -- formula level
    def formula(self) -> tuple[Node, Node]:
        lhs = self.sum()
        if not self.at("~"):
            raise self.unexpected("a formula looks like 'y ~ x1 + x2'")
        self.take()
        rhs = self.sum()
        if self.tok.kind != "end":
            raise self.unexpected("only one '~' is allowed" if self.at("~") else "")
        return lhs, rhs

    def sum(self) -> Node:
        ops: list[str] = []
        items = [self.term()]
        while self.at("+") or self.at("-"):
            ops.append(self.take().text)
            items.append(self.term())
        return items[0] if not ops else Chain(tuple(ops), tuple(items))

    def term(self) -> Node:
        if self.at("+") or self.at("-"):
            op = self.take().text
            t = self.tok
            if t.kind == "number" and t.text in ("0", "1"):
                self.take()
                return Unary(op, Num(int(t.text)))
            raise self.unexpected(f"a sign at formula level is only allowed on the intercept "
                                  f"terms 1 and 0 (e.g. '- 1'), not on {_show(t.text)}")
        if self.tok.kind == "number":
            t = self.take()
            if t.text not in ("0", "1"):
                raise _fail(f"number {_show(t.text)} at position {t.pos} is not a term: only "
                            "1/0/-1 (intercept) are numbers at formula level; use I() for "
                            "arithmetic")
            return Num(int(t.text))
        return self.product()

    def product(self) -> Node:
        ops: list[str] = []
        items = [self.inter()]
        while self.at("*") or self.at("/"):
            ops.append(self.take().text)
            items.append(self.inter())
        return items[0] if not ops else Chain(tuple(ops), tuple(items))

    def inter(self) -> Node:
        ops: list[str] = []
        items = [self.fpower()]
        while self.at(":"):
            ops.append(self.take().text)
            items.append(self.fpower())
        return items[0] if not ops else Chain(tuple(ops), tuple(items))

    def fpower(self) -> Node:
        base = self.fatom()
        if self.at("**"):
            self.take()
            t = self.tok
            if t.kind != "number" or not t.text.isdigit() or not 1 <= int(t.text) <= 9:
                raise self.unexpected("'**' at formula level needs an integer order from 1 to "
                                      "9, e.g. (a + b)**2; use I(x**2) for a numeric power")
            self.take()
            return Pow(base, Num(int(t.text)))
        return base

    def fatom(self) -> Node:
        t = self.tok
        if self.at("("):
            self.enter()
            self.take()
            inner = self.sum()
            self.expect(")", f"to close '(' at position {t.pos}")
            self.leave()
            return Paren(inner)
        if t.kind in ("name", "bq"):
            return self.name_or_call(formula_level=True)
        raise self.unexpected()

    # -- names and calls
    def func_name(self) -> str | None:
        """If a call starts here, consume its (possibly ``np.``-prefixed) name and return it."""
        t = self.tok
        if t.kind != "name":
            return None
        if t.text == "np" and self.peek().kind == "op" and self.peek().text == "." \
                and self.peek(2).kind == "name" and self.peek(3).text == "(":
            name = self.peek(2).text
            if name not in TRANSFORMS:
                raise _fail(f"np.{name} at position {t.pos} is not an allowed transform "
                            f"(allowed: {sorted(TRANSFORMS)})")
            self.i += 3
            return name
        if self.peek().kind == "op" and self.peek().text == "(":
            if t.text in TRANSFORMS or t.text in ("I", "C"):
                self.take()
                return t.text
            reason = _REFUSED_WITH_REASON.get(t.text, "")
            raise _fail(f"function {_show(t.text)} at position {t.pos} is not allowed"
                        f"{': ' + reason if reason else ''} (allowed: I, C, "
                        f"{', '.join(sorted(TRANSFORMS))})")
        return None

    def name_or_call(self, formula_level: bool) -> Node:
        start = self.tok
        func = self.func_name()
        if func is None:
            col = self.column(self.take())
            if self.at("."):
                raise self.unexpected()
            return col
        if func == "C" and not formula_level:
            raise _fail(f"C() at position {start.pos} is only allowed as a formula term, not "
                        "inside arithmetic")
        if func == "I" and not formula_level:
            raise _fail(f"I() at position {start.pos} cannot be nested inside arithmetic")
        self.enter()
        self.expect("(", f"after {func}")
        if func == "C":
            node = self.c_call(start)
        else:
            first = self.arith_root()
            args: tuple[Node, ...] = (first,)
            if func == "power":
                self.expect(",", "between the two arguments of power(x, k)")
                args = (first, self.signed_number("the exponent of power(x, k)"))
            node = Call(func, args)
            self.expect(")", f"to close {func}( at position {start.pos}")
        self.leave()
        return node

    def signed_number(self, what: str) -> Node:
        sign = ""
        if self.at("-") or self.at("+"):
            sign = self.take().text
        t = self.tok
        if t.kind != "number":
            raise self.unexpected(f"{what} must be a number")
        self.take()
        num = _number(t)
        return Unary(sign, num) if sign else num

    def c_call(self, start: _Token) -> Node:
        t = self.tok
        if t.kind not in ("name", "bq"):
            raise self.unexpected("C() takes a column name")
        col = self.column(self.take())
        levels: tuple[Num | Str, ...] | None = None
        if self.at(","):
            self.take()
            kw = self.tok
            if not (kw.kind == "name" and kw.text == "levels" and self.peek().text == "="):
                raise self.unexpected("the only extra argument of C() is levels=[...] "
                                      "(contrasts and other arguments are not allowed)")
            self.i += 2
            levels = self.level_list()
        self.expect(")", f"to close C( at position {start.pos}")
        return Call("C", (col,), levels)

    def level_list(self) -> tuple[Num | Str, ...]:
        open_tok = self.expect("[", "after levels=")
        out: list[Num | Str] = []
        while True:
            t = self.tok
            sign = ""
            if self.at("-"):
                sign = "-"
                self.take()
                t = self.tok
            if t.kind == "number":
                self.take()
                val = _number(t).value
                out.append(Num(-val if sign else val))
            elif t.kind == "string" and not sign:
                self.take()
                value = t.text[1:-1]
                if _INTERNAL_RE.search(value):
                    raise _fail(f"level {_show(value)} at position {t.pos} is reserved")
                out.append(Str(value))
            else:
                raise self.unexpected("levels must be numbers or quoted strings")
            if self.at(","):
                self.take()
                continue
            break
        self.expect("]", f"to close '[' at position {open_tok.pos}")
        kinds = {type(v) for v in out}
        if len(kinds) > 1:
            raise _fail(f"levels at position {open_tok.pos} mix numbers and strings")
        values = [v.value for v in out]
        if len(set(values)) != len(values):
            raise _fail(f"levels at position {open_tok.pos} repeat a value")
        return tuple(out)

    # -- arithmetic (inside I() and transforms)
    def arith_root(self) -> Node:
        start = self.tok.pos
        node = self.arith()
        if len(_walk(node)) > MAX_EXPRESSION_NODES:
            raise _fail(f"expression at position {start} has more than {MAX_EXPRESSION_NODES} "
                        "parts; split it up")
        return node

    def arith(self) -> Node:
        ops: list[str] = []
        items = [self.aterm()]
        while self.at("+") or self.at("-"):
            ops.append(self.take().text)
            items.append(self.aterm())
            if len(items) > MAX_EXPRESSION_NODES:
                raise _fail(f"expression has more than {MAX_EXPRESSION_NODES} parts")
        return items[0] if not ops else Chain(tuple(ops), tuple(items))

    def aterm(self) -> Node:
        ops: list[str] = []
        items = [self.afactor()]
        while self.at("*") or self.at("/"):
            ops.append(self.take().text)
            items.append(self.afactor())
            if len(items) > MAX_EXPRESSION_NODES:
                raise _fail(f"expression has more than {MAX_EXPRESSION_NODES} parts")
        return items[0] if not ops else Chain(tuple(ops), tuple(items))

    def afactor(self) -> Node:
        if self.at("-") or self.at("+"):
            op = self.take().text
            self.enter()
            node = Unary(op, self.afactor())
            self.leave()
            return node
        return self.apower()

    def apower(self) -> Node:
        base = self.aatom()
        if self.at("**"):
            op = self.take()
            self.enter()
            node = Pow(base, self.afactor())
            self.leave()
            if not (_has_column(node.base) or _has_column(node.exp)):
                # a power of plain numbers would be computed with Python integers (10**10**10
                # never finishes); powers must involve a column, which numpy evaluates
                raise _fail(f"'**' at position {op.pos} has only numbers on both sides; write "
                            "the value instead")
            return node
        return base

    def aatom(self) -> Node:
        t = self.tok
        if t.kind == "number":
            self.take()
            return _number(t)
        if self.at("("):
            self.enter()
            self.take()
            inner = self.arith()
            self.expect(")", f"to close '(' at position {t.pos}")
            self.leave()
            return Paren(inner)
        if t.kind in ("name", "bq"):
            return self.name_or_call(formula_level=False)
        raise self.unexpected()


def _has_column(node: Node) -> bool:
    return any(isinstance(n, Col) for n in _walk(node))


def _number(t: _Token) -> Num:
    if re.fullmatch(r"[0-9]+", t.text):
        if len(t.text) > 1 and t.text[0] == "0":
            raise _fail(f"number {_show(t.text)} at position {t.pos} has a leading zero")
        if len(t.text) > 18:
            raise _fail(f"number {_show(t.text)} at position {t.pos} is too long")
        return Num(int(t.text))
    value = float(t.text)
    if not np.isfinite(value):
        raise _fail(f"number {_show(t.text)} at position {t.pos} is not finite")
    return Num(value)


# ------------------------------------------------------------------------------ rendering
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


def _check_text(text: Any, what: str) -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"{what} must be a string like 'y ~ x1 + x2'; got "
                                f"{type(text).__name__}")
    if len(text) > MAX_FORMULA_CHARS:
        raise _fail(f"{what} is longer than {MAX_FORMULA_CHARS} characters (got {len(text)})")
    return text


def _referenced(*nodes: Node) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for node in nodes:
        for n in _walk(node):
            if isinstance(n, Col):
                seen.setdefault(n.name, None)
    return tuple(seen)


_Terms = set[frozenset[str]]


def _expand(node: Node) -> _Terms:
    """The set of terms (sets of factors) a right-hand side stands for, intercept aside,
    refusing to grow past :data:`MAX_TERMS` (so formulaic never expands a huge product)."""

    def capped(terms: _Terms) -> _Terms:
        if len(terms) > MAX_TERMS:
            raise _fail(f"the right-hand side expands to more than {MAX_TERMS} terms")
        return terms

    def cross(a: _Terms, b: _Terms) -> _Terms:
        out: _Terms = set()
        for s in a:
            for t in b:
                out.add(s | t)
                if len(out) > MAX_TERMS:
                    capped(out)
        return out

    if isinstance(node, Paren):
        return _expand(node.inner)
    if isinstance(node, (Num, Unary)):
        return set()
    if isinstance(node, Pow):
        base = _expand(node.base)
        out = base
        for _ in range(int(node.exp.value) - 1 if isinstance(node.exp, Num) else 0):
            out = capped(out | base | cross(out, base))
        return out
    if isinstance(node, Chain):
        terms = _expand(node.items[0])
        for op, item in zip(node.ops, node.items[1:]):
            other = _expand(item)
            if op == "+":
                terms = terms | other
            elif op == "-":
                terms = terms - other
            elif op == "*":
                terms = terms | other | cross(terms, other)
            elif op == "/":
                every = frozenset().union(*terms) if terms else frozenset()
                terms = terms | cross({every}, other)
            else:  # ':'
                terms = cross(terms, other)
            capped(terms)
        return terms
    return {frozenset({_render(node, display_name)})}


def _check_lhs(lhs: Node) -> None:
    if isinstance(lhs, Paren):
        lhs = lhs.inner
    if not isinstance(lhs, (Col, Call)) or (isinstance(lhs, Call) and lhs.func == "C"):
        raise _fail(f"the left of '~' must be one response (a column, I(...) or a transform); "
                    f"got {_show(_render(lhs, display_name))}")


def parse_formula(text: Any, columns: Sequence[str], *, released: bool = False) -> Formula:
    """Parse ``text`` against the column *names* ``columns`` (no data are read).

    Raises :class:`~dpreg.exceptions.InvalidInputError` naming the offending token for anything
    outside the grammar of this module.  ``released=True`` words the errors for a released
    matrix (``SSCPRelease.regress``), whose left side must be one released column.
    """
    text = _check_text(text, "formula")
    if "~" not in text:
        raise InvalidInputError(f"formula must be a string like 'y ~ x1 + x2'; got "
                                f"{_show(text, 80)}")
    parser = _Parser(text, columns, released)
    lhs, rhs = parser.formula()
    if released:
        if not isinstance(lhs.inner if isinstance(lhs, Paren) else lhs, Col):
            raise _fail(f"formula must have one released column on the left of '~'; got "
                        f"{_show(_render(lhs, display_name), 80)}")
    else:
        _check_lhs(lhs)
    _expand(rhs)
    return Formula(lhs, rhs, _referenced(lhs, rhs))


def parse_term(text: Any, columns: Sequence[str]) -> Node:
    """One right-hand-side term such as ``x``, ``log(income)`` or ``I((age - 40) / 10)``."""
    text = _check_text(text, "term")
    parser = _Parser(text, columns)
    node = parser.product()
    if parser.tok.kind != "end":
        raise parser.unexpected("give one term per --x")
    return node


#: an --x/--y that looks like a plain column name (no operator or call): when it is not a
#: column, it is reported as a misspelt name (with a did-you-mean), not as a bad term
_NAME_LIKE = re.compile(r"[\w .-]+")


def formula_from_columns(y: str, xs: Sequence[str], columns: Sequence[str], *,
                         intercept: bool = True) -> Formula:
    """The formula of ``y`` on ``xs`` (CLI ``--y``/``--x``).

    A name that is a column of the data is that column, whatever characters it holds (it is
    never parsed as code); anything else must be one term of the grammar (e.g. ``log(x)``).
    """
    names = [str(c) for c in columns]
    cols = set(names)

    def one(value: str, what: str) -> Node:
        if not isinstance(value, str):
            raise InvalidInputError(f"{what} must be a column name; got {type(value).__name__}")
        if value in cols:
            return Col(value)
        try:
            return parse_term(value, names)
        except InvalidInputError as exc:
            if _NAME_LIKE.fullmatch(value):  # a misspelt column, not a term
                from dpreg._validation import did_you_mean

                raise UnknownNameError(f"{what} {_show(value)} is not a column of the data"
                                       f"{did_you_mean(value, names)}") from None
            raise InvalidParameterError(f"{what} {_show(value)} is not a column of the data "
                                        f"and not a valid term: {exc}") from None

    lhs = one(y, "--y")
    _check_lhs(lhs)
    if not xs:
        raise InvalidInputError("give at least one regressor (--x)")
    items = [one(x, "--x") for x in xs]
    ops = ["+"] * (len(items) - 1)
    if not intercept:
        ops.append("-")
        items.append(Num(1))
    rhs: Node = items[0] if not ops else Chain(tuple(ops), tuple(items))
    _expand(rhs)
    return Formula(lhs, rhs, _referenced(lhs, rhs))


# ------------------------------------------------------------------------------ use
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


@dataclass(frozen=True)
class ModelMatrices:
    """Model matrices built by formulaic behind the gate, with user-facing column names."""

    lhs: pd.DataFrame
    rhs: pd.DataFrame
    #: per rhs column: True when every factor of its term is categorical (a 0/1 dummy product)
    dummy: tuple[bool, ...]
    #: per rhs column: the factors whose product it is -- a numeric expression over the user's
    #: column names, or ``None`` for a categorical factor (a 0/1 dummy); () for the intercept
    factors: tuple[tuple[Node | None, ...], ...] = ()
    #: the same for the lhs columns
    lhs_factors: tuple[tuple[Node | None, ...], ...] = ()


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


def _term_factors(spec: Any, n_columns: int, columns: Sequence[str]
                  ) -> tuple[tuple[Node | None, ...], ...]:
    """Per model-matrix column of a formulaic ``ModelSpec``: its factors (see
    :class:`ModelMatrices`).  A numeric factor's expression is re-parsed by this module's
    grammar (over the internal identifiers) and mapped back to the user's column names."""
    from formulaic.parser.types import Factor

    internal = [_INTERNAL.format(i) for i in range(len(columns))]
    back = dict(zip(internal, columns))
    kinds = {expr: state[0] for expr, state in spec.encoder_state.items()}
    out: list[tuple[Node | None, ...]] = [()] * n_columns
    for term, idx in spec.term_indices.items():
        facs: list[Node | None] = []
        for f in term.factors:
            expr = str(f.expr)
            if expr == "1":
                continue
            if kinds.get(expr) == Factor.Kind.CATEGORICAL:
                facs.append(None)
            else:
                facs.append(_rename(parse_term(expr, internal), back))
        for j in idx:
            out[j] = tuple(facs)
    return tuple(out)


def _back(name: str, columns: Sequence[str]) -> str:
    """Internal identifiers in a formulaic column name -> user spelling (bare factors keep the
    raw column name, as formulaic writes them; inside calls the formula spelling)."""

    def sub(m: re.Match[str]) -> str:
        raw = columns[int(m.group(1))]
        start, end = m.span()
        bare = (start == 0 or name[start - 1] == ":") and \
            (end == len(name) or name[end] in ":[")
        return raw if bare else display_name(raw)

    return _INTERNAL_RE.sub(sub, name)


def model_matrices(formula: Formula, data: pd.DataFrame) -> ModelMatrices:
    """Build the model matrices of a validated ``formula`` on ``data`` with formulaic.

    Only the referenced columns are handed over, renamed to internal identifiers.  formulaic's
    own warnings (which can print data values, e.g. categories outside the declared levels) are
    suppressed and its errors are replaced by messages that name the term, never values.
    """
    from formulaic import Formula as _Formulaic
    from formulaic.parser.types import Factor

    cols = formula.columns
    labels = {str(c): c for c in data.columns}
    frame = pd.DataFrame({_INTERNAL.format(i): data[labels[c]] for i, c in enumerate(cols)},
                         index=data.index, copy=False)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            mm = _Formulaic(formula.internal()).get_model_matrix(frame, na_action="raise")
    except RecursionError:
        raise _fail("too deeply nested to evaluate") from None
    except Exception as exc:  # formulaic raises several types; never echo data
        msg = str(exc)
        m = re.search(r"checking for nulls in `([^`]*)`", msg)
        if m:
            raise InvalidInputError(
                f"formula term {_show(_back(m.group(1), cols), 80)} has missing (null/NaN) or "
                "undefined values in some rows (e.g. log of a non-positive number or an empty "
                "cell); clean the data or change the transform"
            ) from None
        raise InvalidInputError(
            f"could not build the model matrix for formula {_show(formula.text(), 200)} "
            f"({type(exc).__name__})"
        ) from None
    lhs, rhs = mm.lhs, mm.rhs  # fresh objects of this call: renamed in place
    spec = rhs.model_spec
    rhs_factors = _term_factors(spec, rhs.shape[1], cols)
    lhs_factors = _term_factors(lhs.model_spec, lhs.shape[1], cols)
    index = {c: _INTERNAL.format(i) for i, c in enumerate(cols)}

    def col(name: str) -> str:
        return index[name]

    # declared levels (a codebook) are written out for formulaic; the names show C(col)
    short = {_render(c, col, True): _render(c, col) for c in formula.categorical_calls()
             if c.declared}

    def name(c: Any) -> str:
        text = str(c)
        for full, brief in short.items():
            text = text.replace(full, brief)
        return _back(text, cols)

    lhs.columns = [name(c) for c in lhs.columns]
    rhs.columns = [name(c) for c in rhs.columns]
    kinds = {expr: state[0] for expr, state in spec.encoder_state.items()}
    dummy = [False] * rhs.shape[1]
    for term, idx in spec.term_indices.items():
        factors = list(term.factors)
        cat = bool(factors) and all(
            kinds.get(str(f.expr)) == Factor.Kind.CATEGORICAL for f in factors)
        for j in idx:
            dummy[j] = cat
    return ModelMatrices(lhs, rhs, tuple(dummy), rhs_factors, lhs_factors)


def linear_terms(formula: Formula) -> tuple[str, list[str], bool]:
    """``(response, regressors, intercept)`` of a formula of plain columns only.

    For the covariance release, where only linear terms of released columns can be fitted:
    ``y ~ x1 + x2``, ``- 1``/``+ 0`` to drop the intercept, ``- x`` to remove a term.  Anything
    else (interactions, transforms, ``C()``, ``I()``, powers) is refused naming the term.
    """
    lhs = formula.lhs.inner if isinstance(formula.lhs, Paren) else formula.lhs
    if not isinstance(lhs, Col):
        raise _fail(f"the left of '~' must be one released column; got "
                    f"{_show(_render(lhs, display_name))}")
    rhs = formula.rhs
    while isinstance(rhs, Paren):
        rhs = rhs.inner
    if isinstance(rhs, Chain) and set(rhs.ops) <= {"+", "-"}:
        signed = [("+", rhs.items[0])] + list(zip(rhs.ops, rhs.items[1:]))
    else:
        signed = [("+", rhs)]
    intercept = True
    regressors: list[str] = []
    for op, item in signed:
        while isinstance(item, Paren):
            item = item.inner
        if isinstance(item, Unary) and isinstance(item.operand, Num):
            op = "-" if (op == "-") != (item.op == "-") else "+"
            item = item.operand
        if isinstance(item, Num):  # 1 adds the intercept, 0 removes it; '-' flips
            intercept = (item.value == 1) == (op == "+")
        elif isinstance(item, Col):
            if op == "+" and item.name not in regressors:
                regressors.append(item.name)
            elif op == "-" and item.name in regressors:
                regressors.remove(item.name)
        else:
            raise _fail(
                f"only released columns as linear terms are allowed here (no interactions, "
                f"transformations or powers): {_show(_render(item, display_name), 80)}"
            )
    return lhs.name, regressors, intercept
