"""Shared pieces of the private preprocessing: the released-value types and input checks."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpreg._validation import check_array, is_seeded
from dpreg.exceptions import InvalidInputError
from dpreg.privacy import Neighbouring, PrivacyStatement, PureDP

__all__ = ["PrivateValue", "PrivateBounds"]


@dataclass(frozen=True)
class PrivateValue:
    """A released statistic with its privacy statement."""

    value: float
    privacy: PrivacyStatement


@dataclass(frozen=True)
class PrivateBounds:
    """A DP-proposed ``(lo, hi)`` range (clip the data to it before use)."""

    lo: float
    hi: float
    privacy: PrivacyStatement
    raw: tuple[float, float] = field(default=(math.nan, math.nan))

    @property
    def bounds(self) -> tuple[float, float]:
        return (self.lo, self.hi)


def _statement(eps: float, rel: Neighbouring, mechanism: str, source: str, rng: Any,
               **details: Any) -> PrivacyStatement:
    return PrivacyStatement(PureDP(eps), rel, mechanism, source, seeded=is_seeded(rng),
                            details=dict(details))


def _values(z: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(z, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be an array of real numbers") from None
    if arr.size == 0:
        raise InvalidInputError(f"{name} must have at least one value; got an empty array")
    if np.any(np.isnan(arr)):
        raise InvalidInputError(f"{name} must not contain NaN")
    return arr


def _matrix(X: Any, name: str = "X") -> np.ndarray:
    """``X`` validated by :func:`dpreg._validation.check_array` (numeric, finite, non-empty); a
    1-D input is one column."""
    arr = check_array(X, name, ndim=(1, 2))
    return arr.reshape(-1, 1) if arr.ndim == 1 else arr
