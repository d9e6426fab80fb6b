"""The token cursor the parser's grammar methods share, and number literals."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from dpreg._formula.tokens import (
    _REFUSED_WITH_REASON,
    MAX_NESTING,
    _fail,
    _show,
    _Token,
    _tokenize,
)
from dpreg._formula.tree import Col, Num
from dpreg.exceptions import InvalidInputError


class _Cursor:
    """The token stream of one text: position, lookahead, errors naming the token, the nesting
    limit and column lookup (by name only).  The grammar is in its subclasses."""


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
