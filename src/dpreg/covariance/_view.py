"""The read-only view of a release that the post-processing modules use.

:mod:`~dpreg.covariance.sweep` (regression) and :mod:`~dpreg.covariance.io` (the release file)
read a release through this structural type, so they depend on an interface below them and
not on :mod:`~dpreg.covariance.release`, which calls them (no import cycle; the layers are
checked by import-linter, docs/architecture.md).  :class:`~dpreg.covariance.SSCPRelease` is the
one implementation.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import pandas as pd

from dpreg._integrity import Integrity
from dpreg.privacy.neighbours import PrivacyStatement

__all__ = ["ReleaseView"]


class ReleaseView(Protocol):
    """What sweep and io read from an :class:`~dpreg.covariance.SSCPRelease`."""

    columns: list[str]
    bounds: list[tuple[float, float]]
    noisy_scaled: np.ndarray
    matrix: pd.DataFrame | None
    privacy: PrivacyStatement
    metadata: dict[str, Any]
    _scaled_repaired: np.ndarray | None
    integrity: Integrity | None

    @property
    def failed(self) -> bool: ...

    @property
    def reason(self) -> str: ...

    @property
    def n_noisy(self) -> float: ...

    @property
    def n(self) -> float: ...

    @property
    def sigma(self) -> float: ...
