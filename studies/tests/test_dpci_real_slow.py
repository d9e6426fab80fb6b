"""Issue 18: the diabetes case of the real-data coverage study (docs/uncertainty.md, "Real data
of ordinary size") with the band.

diabetes (442 rows), progression ~ age + bmi + bp + s5 (noisy-stats: ~ bmi), ε = 1,
δ = 1e-6, residual-bootstrap truth, 200 repetitions.  Every method either refuses the
interval (``NoUncertaintyError``; before issue 18 AdaSSP printed intervals that covered 0% of
the truths for intercept, bmi, bp and s5) or covers within the band
[1 − α − 0.01, 1 − α + 0.03] widened by 2 Monte Carlo SE (200 reps: SE ≈ 0.015 at 95%).
About 4 minutes on one core.
"""

import pytest

from studies.dpci_real import real_coverage_study, summarise_real

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("method", ["adassp", "covariance-ols", "noisy-stats"])
def test_diabetes_intervals_are_in_band_or_refused(method):
    df = real_coverage_study(method, "diabetes", "residual", epsilon=1.0, reps=200,
                             n_boot=500, seed=0)
    tab = summarise_real(df)
    if method in ("adassp", "covariance-ols"):
        # the release carries too little information at n = 442, ε = 1: refused, never a
        # misleading interval
        assert (tab["refused"] >= 0.95 * tab["reps"]).all(), tab.to_dict("records")
    if method == "noisy-stats":  # n·ε = 442 < 755: its public interval rule refuses every one
        assert (tab["with_interval"] == 0).all(), tab.to_dict("records")
    for _, row in tab[tab["with_interval"] > 0].iterrows():
        if row["with_interval"] < 20:
            continue  # too few intervals to judge (all but a handful refused)
        assert row["band_lo"] - 2 * row["mc_se"] <= row["coverage"], row.to_dict()
        assert row["coverage"] <= row["band_hi"] + 2 * row["mc_se"], row.to_dict()


def test_covariance_ols_accepted_real_cell_is_in_band():
    """The SSCP refusal rule (regressor-block κ and the PSD repair of the model's block,
    docs/uncertainty.md) gives intervals on fair (6,366 rows) at ε = 4, where the old rule
    (κ with the response column) refused 258 of 300 releases (now 55); the accepted ones
    cover at or above the band (widened by 2 MC SE), with widths near the oracle.  About 15 s."""
    df = real_coverage_study("covariance-ols", "fair", "residual", epsilon=4.0, reps=200,
                             n_boot=500, seed=0)
    tab = summarise_real(df)
    assert (tab["with_interval"] >= 0.7 * tab["reps"]).all(), tab.to_dict("records")
    for _, row in tab.iterrows():
        # never below the band (widened by 2 MC SE); above it is conservative (300 reps in
        # docs/uncertainty.md: 0.93-0.99), so only a loose width check on that side
        assert row["band_lo"] - 2 * row["mc_se"] <= row["coverage"], row.to_dict()
        assert row["median_width_ratio"] <= 1.5, row.to_dict()


@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_diabetes_theil_sen_default_interval_is_in_band(epsilon):
    """The Theil-Sen slope interval through ``DPTheilSen(ci_alpha=…)`` with its default
    (``ci_method="auto"`` → calibrated at n·ε >= 200) covers the generating slope of the
    diabetes residual design within the band widened by 2 MC SE at 95% and 90% (before: the
    tight interval covered 1.000 in every cell, 2.7-3.7× the non-private width at ε = 4).
    The check rejects the tight interval (coverage 1.000 is above the widened band at 300
    repetitions) and must see intervals narrower than 5× (ε = 1) / 2× (ε = 4) Sen's classical
    interval.  About 1 minute."""
    df = real_coverage_study("theil-sen", "diabetes", "residual", epsilon=epsilon, reps=300,
                             seed=1)
    tab = summarise_real(df)
    assert (tab["conservative"] == 0).all(), tab.to_dict("records")
    for _, row in tab.iterrows():
        assert row["band_lo"] - 2 * row["mc_se"] <= row["coverage"], row.to_dict()
        assert row["coverage"] <= row["band_hi"] + 2 * row["mc_se"], row.to_dict()
        assert row["median_width_ratio"] <= (5.0 if epsilon == 1.0 else 2.0), row.to_dict()
