"""Interval arithmetic for the bounds of generated formula terms.

Analysts declare public bounds (and levels) for the *raw* columns of their data; a formula
such as ``y ~ C(job) + yrs * age + log(age) + I(age**2)`` generates model-matrix columns whose
bounds follow from the declared ones: each generated column is a function of raw columns, so
its range over the declared box is bounded by interval arithmetic.  The functions here are
pure (public numbers in, public numbers out; no data are read) and each is sound: for every
point ``x`` of the argument interval(s), the function's value lies in the returned interval
(tests/test_intervals.py checks this with hypothesis, and exact endpoints for known cases).

They are *tight* for a single occurrence of each column (``I(age**2)`` on [-1, 2] gives
[0, 4]); a column used twice in one expression is treated as two independent columns (the
"dependency problem": ``I(x * x)`` on [-1, 2] gives [-2, 4]), which is still sound.

A range that leaves a transform's domain (``log`` of a range that includes 0, a division by a
range that includes 0, an overflow) raises :class:`DomainError` saying why; the caller adds
the term and the declared range.  Endpoints are computed with the same double-precision
operations NumPy applies to the data, so monotone operations give the exact extreme values.

Layer: next to :mod:`dpreg._formula` (parsing/validation), below everything that fits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from dpreg.exceptions import InvalidInputError

__all__ = [
    "Interval",
    "DomainError",
    "UNIT",
    "iv_point",
    "iv_add",
    "iv_sub",
    "iv_mul",
    "iv_div",
    "iv_neg",
    "iv_pow",
    "iv_rpow",
    "iv_log",
    "iv_log1p",
    "iv_exp",
    "iv_sqrt",
    "iv_abs",
    "TRANSFORM_INTERVALS",
    "interval_of",
    "column_interval",
]

Interval = tuple[float, float]

#: the range of a 0/1 dummy (a level indicator, or a product of indicators)
UNIT: Interval = (0.0, 1.0)


class DomainError(InvalidInputError):
    """A declared range leaves the domain of an operation (or overflows a double)."""


def _finite(lo: float, hi: float, what: str) -> Interval:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise DomainError(f"{what} overflows a double on the declared range")
    return float(lo), float(hi)


def _f(x: float) -> np.float64:
    return np.float64(x)


def iv_point(value: float) -> Interval:
    """The interval of a public constant."""
    return float(value), float(value)


def iv_add(a: Interval, b: Interval) -> Interval:
    """``x + y`` for x in a, y in b (monotone in both: endpoints add)."""
    return _finite(_f(a[0]) + _f(b[0]), _f(a[1]) + _f(b[1]), "a sum")


def iv_sub(a: Interval, b: Interval) -> Interval:
    """``x - y`` for x in a, y in b."""
    return _finite(_f(a[0]) - _f(b[1]), _f(a[1]) - _f(b[0]), "a difference")


def iv_neg(a: Interval) -> Interval:
    """``-x``."""
    return -float(a[1]), -float(a[0])


def iv_mul(a: Interval, b: Interval) -> Interval:
    """``x * y``: the product is bilinear, so its extremes are products of endpoints (this
    covers ranges straddling 0 and the dummy-times-number interactions)."""
    with np.errstate(over="ignore"):
        p = [_f(a[i]) * _f(b[j]) for i in (0, 1) for j in (0, 1)]
    return _finite(min(p), max(p), "a product")


def iv_div(a: Interval, b: Interval) -> Interval:
    """``x / y``; refused when the divisor's range includes 0 (the quotient is unbounded)."""
    if b[0] <= 0.0 <= b[1]:
        raise DomainError(f"a division by a range that includes 0 ([{b[0]:g}, {b[1]:g}]) is "
                          "unbounded")
    with np.errstate(over="ignore"):
        q = [_f(a[i]) / _f(b[j]) for i in (0, 1) for j in (0, 1)]
    return _finite(min(q), max(q), "a quotient")


def _pow(x: float, k: int) -> np.float64:
    with np.errstate(over="ignore"):
        return np.power(_f(x), _f(k))  # as numpy computes x ** k on float columns


def iv_pow(a: Interval, p: float) -> Interval:
    """``x ** p`` for a public exponent ``p``.

    Integer ``p``: odd powers are increasing; even powers decrease then increase, so a range
    straddling 0 gives ``[0, max(lo**p, hi**p)]``; ``p = 0`` gives 1; a negative ``p`` is
    refused when the range includes 0.  Non-integer ``p`` needs a range >= 0 (> 0 when p < 0),
    where ``x ** p`` is monotone.
    """
    lo, hi = float(a[0]), float(a[1])
    p = float(p)
    if not math.isfinite(p):
        raise DomainError("a power needs a finite exponent")
    if p == 0:
        return 1.0, 1.0
    if p.is_integer():
        k = int(p)
        if k < 0 and lo <= 0.0 <= hi:
            raise DomainError(f"x ** {k} is unbounded on a range that includes 0 "
                              f"([{lo:g}, {hi:g}])")
        ends = (_pow(lo, k), _pow(hi, k))
        if k % 2 == 1 or lo >= 0:  # monotone: odd power, or even power on [0, inf)
            return _finite(min(ends), max(ends), f"x ** {k}")
        if hi <= 0:
            return _finite(min(ends), max(ends), f"x ** {k}")
        # even power straddling 0 (k > 0 here: k < 0 with 0 inside was refused)
        return _finite(0.0, max(ends), f"x ** {k}")
    if lo < 0 or (p < 0 and lo <= 0):
        raise DomainError(f"x ** {p:g} needs a range {'above' if p < 0 else 'at or above'} 0; "
                          f"got [{lo:g}, {hi:g}]")
    ends = (_pow(lo, p), _pow(hi, p))  # type: ignore[arg-type]
    return _finite(min(ends), max(ends), f"x ** {p:g}")


def iv_rpow(c: float, a: Interval) -> Interval:
    """``c ** x`` for a public base ``c > 0`` (monotone in x)."""
    if not c > 0:
        raise DomainError(f"{c:g} ** x needs a base above 0")
    with np.errstate(over="ignore"):
        ends = (np.power(_f(c), _f(a[0])), np.power(_f(c), _f(a[1])))
    return _finite(min(ends), max(ends), f"{c:g} ** x")


def _monotone(fn: Callable[[np.float64], np.float64], a: Interval, name: str) -> Interval:
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        lo, hi = fn(_f(a[0])), fn(_f(a[1]))
    return _finite(lo, hi, name)


def iv_log(a: Interval) -> Interval:
    """Natural log: increasing on (0, inf); a range that includes 0 or below is refused."""
    if not a[0] > 0:
        raise DomainError(f"log needs a range above 0; got [{a[0]:g}, {a[1]:g}] "
                          "(log(0) = -inf, log of a negative number is undefined)")
    return _monotone(np.log, a, "log")


def iv_log1p(a: Interval) -> Interval:
    """``log(1 + x)``: increasing on (-1, inf)."""
    if not a[0] > -1:
        raise DomainError(f"log1p needs a range above -1; got [{a[0]:g}, {a[1]:g}]")
    return _monotone(np.log1p, a, "log1p")


def iv_exp(a: Interval) -> Interval:
    """``exp(x)``: increasing; refused when exp(hi) overflows a double (hi > ~709.78)."""
    return _monotone(np.exp, a, "exp")


def iv_sqrt(a: Interval) -> Interval:
    """``sqrt(x)``: increasing on [0, inf); a range below 0 is refused."""
    if not a[0] >= 0:
        raise DomainError(f"sqrt needs a range at or above 0; got [{a[0]:g}, {a[1]:g}]")
    return _monotone(np.sqrt, a, "sqrt")


def iv_abs(a: Interval) -> Interval:
    """``|x|``: ``[0, max(-lo, hi)]`` when the range straddles 0."""
    lo, hi = float(a[0]), float(a[1])
    if lo >= 0:
        return lo, hi
    if hi <= 0:
        return -hi, -lo
    return 0.0, max(-lo, hi)


#: the one-argument transforms of the formula grammar -> their interval functions
TRANSFORM_INTERVALS: Mapping[str, Callable[[Interval], Interval]] = {
    "log": iv_log, "log1p": iv_log1p, "exp": iv_exp, "sqrt": iv_sqrt, "abs": iv_abs,
}


def _const(node: object) -> float | None:
    """The value of a node made of numbers only (``2``, ``-1``, ``(1 / 2)``), else None."""
    from dpreg import _formula as F

    if isinstance(node, F.Num):
        return float(node.value)
    if isinstance(node, F.Paren):
        return _const(node.inner)
    if isinstance(node, F.Unary):
        v = _const(node.operand)
        return None if v is None else (-v if node.op == "-" else v)
    return None


def interval_of(node: object, bounds: Mapping[str, Interval]) -> Interval:
    """The range of a numeric formula expression (a column, ``I(...)``, a transform, or
    arithmetic of these and numbers) when each column ``c`` lies in ``bounds[c]``.

    Raises :class:`KeyError` (the column's name) when a column has no declared bounds and
    :class:`DomainError` when a declared range leaves an operation's domain.
    """
    from dpreg import _formula as F

    if isinstance(node, F.Col):
        lo, hi = bounds[node.name]
        return float(lo), float(hi)
    if isinstance(node, F.Num):
        return iv_point(node.value)
    if isinstance(node, F.Paren):
        return interval_of(node.inner, bounds)
    if isinstance(node, F.Unary):
        inner = interval_of(node.operand, bounds)
        return iv_neg(inner) if node.op == "-" else inner
    if isinstance(node, F.Chain):
        acc = interval_of(node.items[0], bounds)
        ops = {"+": iv_add, "-": iv_sub, "*": iv_mul, "/": iv_div}
        for op, item in zip(node.ops, node.items[1:]):
            if op not in ops:
                raise DomainError(f"operator {op!r} has no numeric range")
            acc = ops[op](acc, interval_of(item, bounds))
        return acc
    if isinstance(node, F.Pow):
        p = _const(node.exp)
        if p is not None:
            return iv_pow(interval_of(node.base, bounds), p)
        c = _const(node.base)
        if c is not None:
            return iv_rpow(c, interval_of(node.exp, bounds))
        base = interval_of(node.base, bounds)
        if not base[0] > 0:
            raise DomainError("x ** y with columns on both sides needs a base range above 0")
        return iv_exp(iv_mul(interval_of(node.exp, bounds), iv_log(base)))
    if isinstance(node, F.Call):
        if node.func == "I":
            return interval_of(node.args[0], bounds)
        if node.func == "power":
            p = _const(node.args[1])
            assert p is not None  # the grammar allows a signed number only
            return iv_pow(interval_of(node.args[0], bounds), p)
        if node.func in TRANSFORM_INTERVALS:
            return TRANSFORM_INTERVALS[node.func](interval_of(node.args[0], bounds))
        if node.func == "C":
            return UNIT
    raise DomainError(f"no numeric range for {type(node).__name__}")


def column_interval(factors: tuple[object | None, ...], bounds: Mapping[str, Interval]
                    ) -> Interval:
    """The range of a model-matrix column that is the product of ``factors``: a numeric
    expression each (:func:`interval_of`) or ``None`` for a categorical factor, whose dummies
    are 0/1 (:data:`UNIT`)."""
    acc: Interval = (1.0, 1.0)
    for f in factors:
        acc = iv_mul(acc, UNIT if f is None else interval_of(f, bounds))
    return acc
