"""Mironov's floating-point attack as an audit event: which outputs numpy's float Laplace
sampler can produce from a given value.

``value + Generator.laplace(0.0, b)`` can only produce the floats ``fl(value + Y(k))`` with
``Y(k)`` numpy's sampler applied to one of its 2⁵³ uniform doubles ``U = k·2⁻⁵³``:
``Y = 0 − b·ln(2 − U − U)`` for ``U >= ½`` and ``0 + b·ln(U + U)`` for ``0 < U < ½``
(``numpy/random/src/distributions``; ``ln`` is the C library's ``log``, which Python's
:func:`math.log` calls too).  The set of reachable floats depends on the value (Mironov, CCS
2012): an output reachable from f(D) but not from f(D′) proves that D was the input.  The
event "reachable from f(D) and not from f(D′)" therefore has probability 0 under D′ and large
probability under D for floating-point Laplace noise -- an ε_LCB limited only by the number of
samples -- while for the float-safe grid mechanism (:mod:`dpreg.mechanisms.secure`) it is an
ordinary event, bounded by e^ε like every other.

``Y(k)`` is non-decreasing in k over all of [1, 2⁵³) (negative for k < 2⁵², then >= 0), and
so is ``fl(value + Y(k))``; membership is decided by a galloping search from the inverse of the
density (a few dozen ``log`` evaluations).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["float_laplace_output", "float_laplace_reachable", "reachability_event"]

_TOP = 1 << 53  # k ranges over [1, 2^53)
_HALF = 1 << 52


def float_laplace_output(k: int, value: float, scale: float) -> float:
    """``fl(value + Y(k))``: the output of ``value + Generator.laplace(0.0, scale)`` when the
    sampler's uniform double is ``k·2⁻⁵³`` (1 <= k < 2⁵³)."""
    u = k * 2.0**-53
    if u >= 0.5:
        y = 0.0 - scale * math.log(2.0 - u - u)
    else:
        y = 0.0 + scale * math.log(u + u)
    return value + y


def _guess(y: float, scale: float) -> int:
    """k whose Y(k) is about y (inverse of the sampler, to start the search)."""
    if y < 0:
        w = math.exp(max(y / scale, -745.0))
        return min(max(1, round(w * 2.0**52)), _HALF - 1)
    w = math.exp(-y / scale) if y / scale < 745 else 0.0
    return min(max(_HALF, round((1.0 - w / 2.0) * 2.0**53)), _TOP - 1)


def float_laplace_reachable(z: float, value: float, scale: float) -> bool:
    """Can ``value + Generator.laplace(0.0, scale)`` return exactly ``z``?"""
    z, value, scale = float(z), float(value), float(scale)
    if not (math.isfinite(z) and math.isfinite(value) and scale > 0):
        return False

    def g(k: int) -> float:
        return float_laplace_output(k, value, scale)

    lo_k, hi_k = 1, _TOP - 1
    if z < g(lo_k) or z > g(hi_k):
        return False
    k = _guess(z - value, scale)
    # bracket the first k with g(k) >= z: g(a) < z <= g(b)
    if g(k) >= z:
        b, step = k, 1
        a = k - step
        while a >= lo_k and g(a) >= z:
            b = a
            step *= 2
            a = b - step
        if a < lo_k:
            if g(lo_k) >= z:
                return g(lo_k) == z
            a = lo_k
    else:
        a, step = k, 1
        b = k + step
        while b <= hi_k and g(b) < z:
            a = b
            step *= 2
            b = a + step
        b = min(b, hi_k)
    while b - a > 1:  # invariant g(a) < z <= g(b)
        mid = (a + b) // 2
        if g(mid) >= z:
            b = mid
        else:
            a = mid
    return g(b) == z


def reachability_event(outputs: Any, value_d: float, value_d_prime: float, scale: float
                       ) -> np.ndarray:
    """1.0 where an output is reachable by floating-point Laplace noise of ``scale`` from
    ``value_d`` but not from ``value_d_prime``, else 0.0 (NaN stays NaN: ⊥)."""
    z = np.asarray(outputs, dtype=np.float64).ravel()
    out = np.zeros(z.size)
    for i, v in enumerate(z.tolist()):
        if math.isnan(v):
            out[i] = np.nan
        elif float_laplace_reachable(v, value_d, scale) and not float_laplace_reachable(
                v, value_d_prime, scale):
            out[i] = 1.0
    return out
