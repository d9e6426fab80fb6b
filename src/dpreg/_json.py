"""JSON helpers shared by results and releases."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["jsonable", "strict_jsonable", "tagged_jsonable"]


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


def _map_floats(v: Any, nonfinite: Any) -> Any:
    """:func:`jsonable` with every non-finite float replaced by ``nonfinite(value)``."""
    v = jsonable(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else nonfinite(v)
    if isinstance(v, Mapping):
        return {k: _map_floats(x, nonfinite) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_map_floats(x, nonfinite) for x in v]
    return v


def tagged_jsonable(v: Any) -> Any:
    """:func:`jsonable` for files that must keep infinities: NaN becomes ``None``, ±inf the
    strings ``"inf"``/``"-inf"`` (strict JSON; used by SSCP release files, whose ε may be
    infinite)."""
    return _map_floats(v, lambda x: None if math.isnan(x) else ("inf" if x > 0 else "-inf"))


def strict_jsonable(v: Any) -> Any:
    """:func:`jsonable`, then every non-finite float (NaN, ±inf) becomes ``None``, so that the
    result serialises as strict JSON (``json.dumps(..., allow_nan=False)``; ``JSON.parse``
    rejects ``NaN``/``Infinity``).  ``null`` then means "not a finite number": an infinite ε
    (the record's ``private`` field is False), an undefined statistic (e.g. a standard error
    or a ratio that does not exist), or a missing value."""
    return _map_floats(v, lambda x: None)
