"""The per-group interval study (studies/group_ci.py) runs end to end on a few tracts, reads the
simulator's truth for the bundled state, and its numbers are proportions in range."""

import math

from studies.group_ci import _state, group_ci_study


def test_bundled_state_has_the_simulators_truth():
    frame, truth = _state()
    assert set(frame["tract"]) == set(truth.index)
    assert truth["slope"].between(-0.2, 0.9).all()


def test_small_study_runs():
    tab = group_ci_study(("theil-sen-exp", "noisy-stats"), (16.0,), tracts=30, reps=1)
    assert list(tab["method"]) == ["theil-sen-exp", "noisy-stats"]
    for c in ("coverage_true_slope", "coverage_ols_slope", "not_informative_share",
              "contains_own_estimate", "failed_share"):
        assert tab[c].between(0.0, 1.0).all()
    # noisy-stats at ε = 16: every tract (30-400 people, n·ε >= 480) may get its interval; its
    # release decides for tracts under ~48 people
    assert (tab["intervals"] > 10).all() and (tab["median_width"] > 0).all()
    ns = tab.set_index("method").loc["noisy-stats"]
    assert 0.0 <= ns["refused_share"] < 0.5
    assert not math.isnan(ns["coverage_true_pred_0.25"])
