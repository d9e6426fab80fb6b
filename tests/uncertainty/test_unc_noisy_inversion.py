"""Issue 18: the opt-in ``kind="inversion"`` interval of a noisy-stats release (the slope's
exact test inversion with the Laplace noises; docs/uncertainty.md, "noisy-stats at ε ≤ 1 on
small data")."""

import math

import numpy as np
import pytest

from dpreg.inference.dpci.engine import ParametricBootstrap
from dpreg.inference.dpci.noisy_stats import (
    NoisyStatsModel,
    normal_laplace_cdf,
    slope_pivot_cdf,
)


def test_normal_laplace_cdf_matches_monte_carlo_and_rejects_laplace_only():
    rng = np.random.default_rng(0)
    s, b, m = 1.3, 2.0, 400_000
    x = s * rng.standard_normal(m) + rng.laplace(0.0, b, m)
    t = np.array([-5.0, -1.0, 0.0, 0.7, 3.0])
    emp = (x[:, None] <= t).mean(axis=0)
    tol = 4.0 * math.sqrt(0.25 / m)  # 4 binomial SE
    assert np.max(np.abs(normal_laplace_cdf(t, s, b) - emp)) < tol
    # a wrong law (the Laplace part alone) is rejected at this tolerance
    assert np.max(np.abs(normal_laplace_cdf(t, 0.0, b) - emp)) > tol
    # limits: s = 0 is the Laplace CDF, b = 0 the normal CDF
    assert normal_laplace_cdf(np.array([-1.0]), 0.0, 1.0)[0] == pytest.approx(0.5 * math.exp(-1))
    assert normal_laplace_cdf(np.array([1.0]), 1.0, 0.0)[0] == pytest.approx(0.8413447, abs=1e-6)


def test_slope_pivot_is_uniform_at_the_true_slope_whatever_nvar():
    """F(α_true) ~ U(0, 1) over releases, including nvar far below the noise (κ ≈ 2.5, where
    the plug-in bootstrap world nvar = nvar~ under-covered); the equal-tailed set covers at
    the nominal rate among the non-⊥ releases (at or above it: the ⊥ selection makes the
    pivot's L₂ term smaller)."""
    rng = np.random.default_rng(1)
    alpha_true, b1, b2, s = 0.7, 3.0, 5.0, 0.5
    for nvar in (2.8, 40.0):
        u = []
        for _ in range(1500):
            v = nvar + rng.laplace(0.0, b2)
            if v <= 0:
                continue  # ⊥
            c = alpha_true * nvar + s * rng.standard_normal() + rng.laplace(0.0, b1)
            u.append(slope_pivot_cdf(alpha_true, ncov=c, nvar=v, s=s, b_ncov=b1,
                                     b_nvar=b2, strata=400)[0])
        u = np.array(u)
        cover = np.mean((u >= 0.05) & (u <= 0.95))
        se = math.sqrt(0.9 * 0.1 / u.size)
        assert 0.9 - 3 * se <= cover <= 0.9 + 0.03 + 3 * se, (nvar, cover)
        # a pivot that ignores the denominator's noise (b_nvar = 0) is rejected at small nvar
    v_small = [2.8 + rng.laplace(0.0, b2) for _ in range(1500)]
    wrong = []
    for v in v_small:
        if v <= 0:
            continue
        c = alpha_true * 2.8 + s * rng.standard_normal() + rng.laplace(0.0, b1)
        wrong.append(slope_pivot_cdf(alpha_true, ncov=c, nvar=v, s=s, b_ncov=b1, b_nvar=0.0,
                                     strata=10)[0])
    wrong = np.array(wrong)
    assert np.mean((wrong >= 0.05) & (wrong <= 0.95)) < 0.9 - 3 * math.sqrt(0.09 / wrong.size)


def _model(nvar: float) -> NoisyStatsModel:
    rel = {"ncov": 0.5 * nvar, "nvar": nvar, "nvar_y": 30.0, "xbar": 0.5, "slope": 0.5,
           "intercept": 0.2}
    return NoisyStatsModel(released=rel, n=400, x_bounds=(0.0, 1.0), y_bounds=(0.0, 1.0),
                           scales={"ncov": 3.0, "nvar": 5.0, "nvar_y": 40.0, "xbar": 0.05},
                           eps_intercept=0.3)


def test_inversion_interval_is_unbounded_exactly_when_nvar_cannot_exclude_zero():
    # mass at ±∞ is ½e^{−nvar~/b}: ≥ 2.5% per side iff nvar~ <= b·ln(20) = 14.98
    small = ParametricBootstrap(_model(12.0), n_boot=2000, rng=0)
    ci = small.conf_int(0.05, kind="inversion")
    assert ci.loc["slope", "lower"] == -np.inf and ci.loc["slope", "upper"] == np.inf
    big = ParametricBootstrap(_model(20.0), n_boot=2000, rng=0)
    ci = big.conf_int(0.05, kind="inversion")
    lo, hi = ci.loc["slope", "lower"], ci.loc["slope", "upper"]
    assert np.isfinite(lo) and np.isfinite(hi) and lo < 0.5 < hi  # contains its estimate
    # the default (percentile) interval of the same release is unchanged and finite
    assert np.all(np.isfinite(big.conf_int(0.05).to_numpy()))


def test_inversion_kind_is_refused_for_models_without_a_confidence_distribution():
    from dpreg.exceptions import InvalidInputError
    from dpreg.inference.dpci.engine import BootstrapModel

    class Plain(BootstrapModel):
        names = ["a"]

        def released(self):
            return np.zeros(1), np.eye(1)

        def replicate(self, size, rng):
            return rng.standard_normal((size, 1)), np.ones((size, 1, 1)), np.ones(size, bool)

    with pytest.raises(InvalidInputError, match="inversion"):
        ParametricBootstrap(Plain(), n_boot=100, rng=0).conf_int(0.05, kind="inversion")
