"""Shared fixtures (statistical helpers live in ``_stats.py``)."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import settings

from dpreg.exceptions import PrivacyLeakWarning

# Property tests search deterministically (same examples every run) so CI is reproducible;
# set HYPOTHESIS_PROFILE=explore locally for a randomised search.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261120)


@pytest.fixture
def no_leak_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield
