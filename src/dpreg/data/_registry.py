"""Dataset registry: real data shipped inside registry packages, with documented public bounds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from dpreg.exceptions import InvalidInputError

__all__ = ["Dataset", "register", "load_dataset", "list_datasets"]


@dataclass(frozen=True)
class Dataset:
    """A data set with the public metadata a DP analysis needs.

    ``bounds`` are *public* bounds per column taken from the data's documentation or domain
    knowledge (never from the observed minimum/maximum); every loader checks that the data lie
    inside them.  ``groups`` names the column that splits the data into small data sets (for
    per-group fits), if any.
    """

    name: str
    frame: pd.DataFrame
    y: str
    x: tuple[str, ...]
    bounds: dict[str, tuple[float, float]]
    description: str
    source: str
    license: str
    bounds_note: str = ""
    groups: str | None = None
    extra: dict = field(default_factory=dict)

    def formula(self) -> str:
        return f"{self.y} ~ " + " + ".join(self.x)


_LOADERS: dict[str, tuple[Callable[[], Dataset], str]] = {}


def register(name: str, summary: str) -> Callable[[Callable[[], Dataset]], Callable[[], Dataset]]:
    def deco(fn: Callable[[], Dataset]) -> Callable[[], Dataset]:
        _LOADERS[name] = (fn, summary)
        return fn
    return deco


def list_datasets() -> dict[str, str]:
    """Names of the available data sets with a one-line summary."""
    return {k: v[1] for k, v in sorted(_LOADERS.items())}


def load_dataset(name: str) -> Dataset:
    """Load a registered data set by name (see :func:`list_datasets`)."""
    if name not in _LOADERS:
        raise InvalidInputError(
            f"name must be one of {sorted(_LOADERS)}; got {name!r}"
        )
    ds = _LOADERS[name][0]()
    for col, (lo, hi) in ds.bounds.items():
        vals = ds.frame[col]
        if (vals < lo).any() or (vals > hi).any():  # pragma: no cover - guards the metadata
            raise AssertionError(f"{name}: column {col} leaves its documented bounds")
    return ds
