"""JSON helpers shared by results and releases."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["jsonable", "strict_jsonable"]


def jsonable(v: Any) -> Any:
    """Convert NumPy scalars/arrays (recursively inside mappings and sequences) to plain Python."""
    if isinstance(v, (np.floating, np.integer, np.bool_)):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, Mapping):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def strict_jsonable(v: Any) -> Any:
    """:func:`jsonable`, then every non-finite float (NaN, ±inf) becomes ``None``, so that the
    result serialises as strict JSON (``json.dumps(..., allow_nan=False)``; ``JSON.parse``
    rejects ``NaN``/``Infinity``).  ``null`` then means "not a finite number": an infinite ε
    (the record's ``private`` field is False), an undefined statistic (e.g. a standard error
    or a ratio that does not exist), or a missing value."""
    v = jsonable(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, Mapping):
        return {k: strict_jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [strict_jsonable(x) for x in v]
    return v
