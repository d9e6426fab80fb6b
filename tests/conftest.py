"""Shared fixtures (statistical helpers live in ``_stats.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpreg.exceptions import PrivacyLeakWarning


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261120)


@pytest.fixture
def no_leak_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield
