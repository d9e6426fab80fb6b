"""What a right-hand side stands for: its set of terms (capped) and, for the covariance
release, its linear terms."""

from __future__ import annotations

from dpreg._formula.render import Formula, _render, display_name
from dpreg._formula.tokens import MAX_TERMS, _fail, _show
from dpreg._formula.tree import Chain, Col, Node, Num, Paren, Pow, Unary

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
