"""The formula level of the grammar and the entry points: :func:`parse_formula`,
:func:`parse_term`, :func:`formula_from_columns`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from dpreg._formula.expressions import _ExprParser
from dpreg._formula.render import Formula, _render, display_name
from dpreg._formula.terms import _expand
from dpreg._formula.tokens import MAX_FORMULA_CHARS, _fail, _show
from dpreg._formula.tree import Call, Chain, Col, Node, Num, Paren, Pow, Unary, _referenced
from dpreg.exceptions import InvalidInputError, InvalidParameterError, UnknownNameError


class _Parser(_ExprParser):
    """The whole grammar: the formula level on top of calls and arithmetic."""

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


def _check_text(text: Any, what: str) -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"{what} must be a string like 'y ~ x1 + x2'; got "
                                f"{type(text).__name__}")
    if len(text) > MAX_FORMULA_CHARS:
        raise _fail(f"{what} is longer than {MAX_FORMULA_CHARS} characters (got {len(text)})")
    return text



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
