"""The 106-bit grid on which :mod:`dpreg.simple.fast` draws the output double of the
exponential mechanism in proportion to its rounding cell (exact rational arithmetic with
:class:`fractions.Fraction`).

The grid G is the set of binary floating-point numbers with a 106-bit significand (twice a
double's 53) and the exponent range of doubles: in each binade [2^e, 2^(e+1)) with e >= −969
the points are spaced 2^(e−105); below 2^−969 they are spaced 2^−1074 (the spacing of the
smallest doubles).  Every double is a grid point and every grid point below 2^1023 is the
exact sum of two doubles (so it can be a threshold of :class:`~dpreg.simple.fast.PairCounter`).

A grid *cell* is (prev(φ), φ] for a grid point φ; the sampler proposes cells with probability
proportional to their length and releases the double whose rounding cell (bounded by grid
points) contains the cell, so a double is proposed in proportion to its rounding cell.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from dpreg.mechanisms.exponential import uniform_integer

__all__ = ["BITS", "binade", "quantum", "ordinal", "from_ordinal", "next_up", "next_down",
           "floor_grid", "ceil_grid", "float_up", "draw_cell"]

BITS = 106
_ZONE = -969  # below 2^_ZONE the spacing is the smallest double 2^-1074
_QMIN = Fraction(1, 2 ** 1074)
_HALF = 2 ** (BITS - 1)


def binade(v: Fraction) -> int:
    """floor(log2 |v|) for v ≠ 0."""
    n, d = abs(v.numerator), v.denominator
    e = n.bit_length() - d.bit_length()
    if (n << -e if e < 0 else n) < (d if e < 0 else d << e):
        e -= 1
    return e


def _pow2(e: int) -> Fraction:
    return Fraction(2 ** e) if e >= 0 else Fraction(1, 2 ** -e)


def quantum(v: Fraction) -> Fraction:
    """Grid spacing in the binade of |v| (the spacing *above* |v|)."""
    if v == 0:
        return _QMIN
    e = binade(v)
    return _pow2(e - BITS + 1) if e >= _ZONE else _QMIN


def ordinal(v: Fraction) -> int:
    """Monotone integer index of a grid point (consecutive grid points differ by 1)."""
    if v < 0:
        return -ordinal(-v)
    if v == 0:
        return 0
    e = binade(v)
    if e < _ZONE:
        k = v / _QMIN
    else:
        k = (e - _ZONE) * _HALF + v / _pow2(e - BITS + 1)
    if k.denominator != 1:
        raise ValueError("not a grid point")
    return int(k)


def from_ordinal(k: int) -> Fraction:
    if k < 0:
        return -from_ordinal(-k)
    if k < 2 * _HALF:
        return k * _QMIN
    e = k // _HALF + _ZONE - 1
    m = k - (e - _ZONE) * _HALF
    return m * _pow2(e - BITS + 1)


def next_up(v: Fraction) -> Fraction:
    return from_ordinal(ordinal(v) + 1)


def next_down(v: Fraction) -> Fraction:
    return from_ordinal(ordinal(v) - 1)


def floor_grid(v: Fraction) -> Fraction:
    """The largest grid point <= v."""
    if v < 0:
        return -ceil_grid(-v)
    q = quantum(v)
    return (v // q) * q


def ceil_grid(v: Fraction) -> Fraction:
    """The smallest grid point >= v."""
    if v < 0:
        return -floor_grid(-v)
    q = quantum(v)
    return -((-v) // q) * q


def float_up(v: Fraction) -> float:
    """The smallest double >= v."""
    f = float(v)
    if Fraction(f) < v:
        f = math.nextafter(f, math.inf)
    return f


def draw_cell(a0: Fraction, a1: Fraction, gen: np.random.Generator) -> Fraction:
    """The right end φ of a grid cell (prev(φ), φ] ⊆ (a0, a1] (grid points a0 < a1), drawn
    with probability exactly ∝ the cell's length φ − prev(φ): the continuous uniform draw on
    (a0, a1) rounded up to the grid.

    Every grid point in [a0, a1] is a multiple of the block's finest spacing q (2^-1074 if the
    block straddles 0), so a uniform multiple X = a0 + k·q, k ∈ 1..(a1 − a0)/q, falls in each
    cell with probability length/(a1 − a0); φ = ceil_grid(X).  The one draw is
    :func:`dpreg.mechanisms.exponential.uniform_integer`'s."""
    q = _QMIN if a0 < 0 < a1 else min(quantum(a0), quantum(a1))
    k = uniform_integer(int((a1 - a0) / q), gen) + 1
    return ceil_grid(a0 + k * q)
