"""Calls (``I()``, ``C()``, transforms) and the arithmetic inside them: mutually recursive, so one
class; the formula level (:mod:`dpreg._formula.parser`) builds on it."""

from __future__ import annotations

from dpreg._formula.cursor import _Cursor, _number
from dpreg._formula.tokens import (
    _INTERNAL_RE,
    _REFUSED_WITH_REASON,
    MAX_EXPRESSION_NODES,
    TRANSFORMS,
    _fail,
    _show,
    _Token,
)
from dpreg._formula.tree import Call, Chain, Node, Num, Paren, Pow, Str, Unary, _has_column, _walk


class _ExprParser(_Cursor):
    """Names, calls and arithmetic (inside ``I()`` and transforms)."""

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
