"""Inputs the fuzzer found crashing, hanging or releasing non-finite numbers, pinned."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dpreg import GDP, PureDP, compose
from dpreg.api import fit_arrays
from dpreg.exceptions import InvalidInputError
from dpreg.grouped import fit_by_group
from dpreg.mechanisms import secure as S
from dpreg.privacy import gdp_delta


def test_compose_tiny_gdp_is_fast_and_exact():
    out = compose([GDP(1e-200), GDP(1e-200)])  # used to step one ulp at a time from 0
    assert out.mu == pytest.approx(math.sqrt(2) * 1e-200, rel=1e-15)
    assert Fraction(out.mu) ** 2 >= 2 * Fraction(1e-200) ** 2  # rounded toward more loss
    assert compose([GDP(1e308)] * 5).mu == math.inf  # overflow rounds toward more loss
    assert compose([GDP(3.0), GDP(4.0)]).mu == 5.0


def test_compose_and_gdp_delta_reject_non_budgets():
    with pytest.raises(InvalidInputError):
        compose([None, PureDP(1.0)])
    with pytest.raises(InvalidInputError):
        gdp_delta(1.0, None)
    assert gdp_delta(0.0, 0.0) == 0.0


@pytest.mark.parametrize("sigma", [1e300, 1e30, 3.0, 5e-324])
def test_discrete_gaussian_any_sigma(sigma):
    draws = S.discrete_gaussian(sigma, 4)
    assert len(draws) == 4


@pytest.mark.parametrize("call", [
    lambda: S.secure_gaussian(0.0, sensitivity=5e-324, sigma=1.0),
    lambda: S.secure_laplace(0.0, sensitivity=1e-300, epsilon=5e-324),
    lambda: S.secure_laplace(np.array([1e300, -1e300, 0.5]), sensitivity=1e300, epsilon=1e-300),
])
def test_secure_noise_extreme_scales_stay_finite(call):
    out, _ = call()
    assert np.all(np.isfinite(out))


def test_string_columns_are_invalid_input():
    with pytest.raises(InvalidInputError, match="numeric"):
        fit_arrays(np.array([0.5]), np.array([""]), method="noisy-stats", epsilon=1.0,
                   x_bounds=[(0, 1)], y_bounds=(0, 1))
    frame = pd.DataFrame({"x": [":"], "y": [0.0], "g": ["a"]})
    with pytest.raises(InvalidInputError, match="numeric"):
        fit_by_group(frame, "g", "x", "y", method="noisy-stats", epsilon=1.0,
                     bounds={"x": (0, 1), "y": (0, 1)}, groups=["a"])


@pytest.mark.parametrize("eps", ["1", None, math.nan])
def test_fit_by_group_validates_epsilon_first(eps):
    frame = pd.DataFrame({"x": [], "y": [], "g": []})
    with pytest.raises(InvalidInputError, match="epsilon"):
        fit_by_group(frame, "g", "x", "y", method="theil-sen-exp", epsilon=eps,
                     bounds={"x": (0, 1), "y": (0, 1)})
