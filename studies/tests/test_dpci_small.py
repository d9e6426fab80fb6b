"""Small seeded coverage studies (studies/dpci.py), fast: every method runs end to end, and
NoisyStats' DP-aware interval covers with power."""

import math

import pytest

from studies.dpci import METHODS, coverage_study, summarise


@pytest.mark.parametrize("method", METHODS)
def test_every_method_of_the_study_runs(method):
    """The study reaches into library internals (oracle noise of each release): a refactor that
    moves them must keep the study running."""
    # noisy-stats: 800 rows (n·ε >= 755: its public interval rule offers the interval);
    # AdaSSP/SSCP need 20,000 (issue 18)
    n = 800 if method == "noisy-stats" else 20_000
    df = coverage_study(method, "uniform", n=n, epsilon=1.0, reps=3, n_boot=50,
                        kinds=("percentile",), oracle_draws=20, seed=0)
    p = 2 if method == "noisy-stats" else 4
    assert len(df) == 3 * p * 2  # reps x parameters x alphas
    tab = summarise(df)
    assert tab["coverage"].between(0.0, 1.0).all()


# --------------------------------------------------------------------------------------------
# coverage with power (small; the full studies are in test_dpci_coverage_slow.py)
# --------------------------------------------------------------------------------------------
def test_small_coverage_study_covers_and_the_naive_interval_does_not():
    """Noise-dominated setting (n = 800, ε = 1; the smallest n·ε the public interval rule
    offers is ~755): the DP-aware interval covers at ≈ 95% (binomial tolerance 4 SE at 200
    reps), the plug-in interval that ignores the privacy noise covers far less -- the test has
    the power to catch a forgotten noise term."""
    df = coverage_study("noisy-stats", "uniform", n=800, epsilon=1.0, reps=200, n_boot=400,
                        kinds=("percentile",), oracle_draws=200, seed=1)
    tab = summarise(df)
    t05 = tab[tab["alpha"] == 0.05]
    tol = 4 * math.sqrt(0.95 * 0.05 / 200)
    assert (t05["coverage"] >= 0.95 - tol).all(), t05
    assert (t05["naive_coverage"] <= 0.5).all(), t05
    assert (t05["median_ratio"] <= 1.5).all(), t05
