"""The interface of an experiment kind and the registry of kinds (:data:`KINDS`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpreg.exceptions import InvalidInputError

__all__ = ["Kind", "KINDS", "register", "require"]


def require(spec: Any, table: dict[str, Any], key: str, where: str) -> Any:
    if key not in table:
        raise InvalidInputError(f"spec {spec.name!r}: {where} needs key {key!r}")
    return table[key]


class Kind:
    """Interface of an experiment kind (see the module doc)."""

    name: ClassVar[str] = ""
    #: result columns written after the metadata columns
    columns: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def validate(cls, spec: Any) -> None:
        """Raise InvalidInputError when the spec is malformed for this kind."""

    def cells(self, spec: Any) -> list[dict[str, Any]]:
        raise InvalidInputError(f"kind {self.name!r} defines no cells")

    def run_cell(self, spec: Any, cell: dict[str, Any], seq: np.random.SeedSequence
                 ) -> list[dict[str, Any]]:
        raise InvalidInputError(f"kind {self.name!r} cannot run cells")

    def summarise(self, spec: Any, rows: pd.DataFrame) -> pd.DataFrame:
        return rows

    def figures(self, spec: Any, rows: pd.DataFrame, summary: pd.DataFrame, out: Path
                ) -> list[Path]:
        return []


KINDS: dict[str, type[Kind]] = {}


def register(cls: type[Kind]) -> type[Kind]:
    KINDS[cls.name] = cls
    return cls

