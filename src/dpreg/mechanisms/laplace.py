"""The Laplace mechanism.

Guarantee: for a function f whose L1 sensitivity over the chosen neighbouring relation is Δ,
releasing f(D) + Lap(Δ/ε) (independently per coordinate) is ε-DP (pure).  The neighbouring
relation enters only through Δ -- see :mod:`dpreg.mechanisms.sensitivity`.  Source: Dwork,
McSherry, Nissim & Smith 2006.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpreg._validation import check_epsilon, check_positive, check_rng

__all__ = ["laplace", "laplace_scale"]


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Scale b = Δ/ε of the Laplace noise (density ∝ exp(−|z|/b); sd = √2·b)."""
    sensitivity = check_positive(sensitivity, "sensitivity", allow_zero=True)
    epsilon = check_epsilon(epsilon)
    return 0.0 if math.isinf(epsilon) else sensitivity / epsilon


def laplace(value: Any, *, sensitivity: float, epsilon: float, rng: Any = None) -> Any:
    """Return ``value + Lap(sensitivity/epsilon)`` (elementwise for arrays).

    Parameters
    ----------
    value:
        A finite real number or array (the exact statistic).
    sensitivity:
        L1 sensitivity Δ of the statistic under the neighbouring relation being protected.
    epsilon:
        Privacy parameter ε > 0 (``inf`` adds no noise: not private).
    rng:
        ``None``, a seed, a ``SeedSequence`` or a ``Generator``.

    Guarantee: ε-DP (pure) for the relation Δ was computed for.
    """
    scale = laplace_scale(sensitivity, epsilon)
    arr = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        from dpreg.exceptions import InvalidInputError

        raise InvalidInputError("value must be finite before noise is added; got NaN or inf")
    gen = check_rng(rng)
    if scale == 0.0:
        noisy = arr.copy()
    else:
        noisy = arr + gen.laplace(0.0, scale, size=arr.shape)
    return float(noisy) if noisy.ndim == 0 else noisy
