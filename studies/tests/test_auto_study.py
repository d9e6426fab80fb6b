"""studies/auto.py (the harness runs behind method="auto"): the metric and the threshold derivation on hand-made raw results."""

import math

import numpy as np
import pytest

from studies.auto import (
    CANDIDATES,
    P_TRUE,
    c_true,
    derive_rule,
    derive_rule2,
    derive_threshold,
    evaluate_rule,
    figure_cells,
)


def test_c_true_is_the_ceil_q_order_statistic_with_bottom_as_infinity():
    p = P_TRUE + np.arange(1, 11) / 100.0  # errors 0.01 .. 0.10
    assert c_true(p) == pytest.approx(0.07)  # ⌈0.68·10⌉ = 7th
    p[:4] = np.nan
    assert c_true(p) == math.inf


def _raw(kind):
    # cells: u = ε²·nvar = 10 (TS better), 1e4 (NoisyStats better), 1e4 with 30% of the rows on
    # the bounds (TS better: clipping biases the means)
    cells = np.array([[100, 0.01, 1.0, 0.01], [10000, 0.1, 10.0, 0.01], [10000, 0.1, 10.0, 0.05]])
    nvar = np.array([[10.0], [100.0], [100.0]])
    clipped = np.array([[0.0], [0.0], [0.3]])
    err = {"theil-sen-exp": (0.01, 0.05, 0.01), "noisy-stats": (0.03, 0.01, 0.05),
           "dp-gd": (0.2, 0.2, 0.2), "theil-sen-wide": (0.05, 0.06, 0.05)}
    out = {"cells": cells, "nvar": nvar, "clipped": clipped, "sigma": np.full(3, 0.01),
           "fraction": np.array(0.05)}
    for m, errs in err.items():
        arr = np.empty((3, 1, 25))
        for i, e in enumerate(errs):
            arr[i] = P_TRUE + e
        if kind == "derive":
            out[f"{m}|full"] = arr
        elif m in ("theil-sen-exp", "noisy-stats"):
            out[f"{m}|full"] = arr
            out[f"{m}|method"] = arr
    return out


def test_first_derivation_picks_a_threshold_on_eps_nvar():
    raw = _raw("derive")
    two = {k: (v[:2] if k not in ("fraction",) else v) for k, v in raw.items()}
    d = derive_threshold(two)
    assert 10 <= d["threshold"] < 1000
    assert d["worst_ratio"] == pytest.approx(1.0)
    assert d["cells_won"] == {"theil-sen-exp": 1, "noisy-stats": 1, "dp-gd": 0, "theil-sen-wide": 0}
    assert set(d["tables"]) == set(CANDIDATES)


def test_rule_derivation_needs_both_statistics_and_evaluation_scores_it():
    d = derive_rule([_raw("derive")])
    assert d["worst_ratio"] == pytest.approx(1.0)
    assert 10 < d["u_threshold"] < 1e4
    assert 0.0 < d["boundary_limit"] <= 0.3
    e = evaluate_rule(_raw("evaluate"), u_threshold=d["u_threshold"],
                      boundary_limit=d["boundary_limit"], form="share")
    assert e["max_ratio"] == pytest.approx(1.0)
    # cell 1 sits 10 below the lowest candidate U (100) with Lap(40) noise on u: mostly TS
    assert e["chose_ns"][0] < 0.25 and e["chose_ns"][1] > 0.99 and e["chose_ns"][2] < 0.01
    # a rule blind to the boundary share runs NoisyStats on the clipped cell: 5x worse
    blind = evaluate_rule(_raw("evaluate"), u_threshold=d["u_threshold"], boundary_limit=2.0,
                          form="share")
    assert blind["max_ratio"] == pytest.approx(5.0)
    assert len(blind["cells_over_1.10"]) == 1
    never = evaluate_rule(_raw("evaluate"), u_threshold=math.inf)  # always Theil-Sen
    assert never["max_ratio"] == pytest.approx(5.0)


def test_shipped_form_compares_the_count_with_root_n_and_derive_rule2_finds_it():
    # cell 3 has 30% of 10,000 rows on the bounds: z = 3000/100 = 30 > C whatever the share limit
    e = evaluate_rule(_raw("evaluate"), u_threshold=1000.0, boundary_limit=2.0)
    assert e["chose_ns"][1] > 0.99 and e["chose_ns"][2] < 0.01
    assert e["max_ratio"] == pytest.approx(1.0)
    raw = _raw("evaluate")
    raw.update(nvar_y=np.ones((3, 1)), ncov=np.zeros((3, 1)))
    d = derive_rule2(raw)
    worst, over, _, u, c = d["z"]["best"]
    assert worst == pytest.approx(1.0) and over == 0
    assert 100 <= u < 1e4 and c < math.inf
    assert d["previous_rule"][0] == pytest.approx(1.0)


def test_paired_releases_share_random_numbers_and_keep_the_release_law():
    from scipy import stats

    from dpreg._random import simulation_generator
    from dpreg.bench.generators import alabi_uniform
    from dpreg.replicates import replicate_predictions
    from studies.auto import _OPTS, _paired_p25

    x, y = alabi_uniform(300, sigma_x2=0.02, sigma_e2=0.02, rng=np.random.default_rng(3))
    a, b = _paired_p25("theil-sen-exp", x, y, levels=(0.3, 0.285), trials=300, seed=[5])
    assert np.corrcoef(a, b)[0, 1] > 0.9  # coupled: the same matchings and uniforms
    ref = replicate_predictions("theil-sen-exp", x, y, epsilon=0.3, x_bounds=(0, 1),
                                y_bounds=(0, 1), trials=300, x_eval=(0.25, 0.75),
                                rng=simulation_generator(9), **_OPTS["theil-sen-exp"])[:, 0]
    assert stats.ks_2samp(a, ref).pvalue > 1e-3  # each level alone: the release's law
    wrong = replicate_predictions("theil-sen-exp", x, y, epsilon=0.1, x_bounds=(0, 1),
                                  y_bounds=(0, 1), trials=300, x_eval=(0.25, 0.75),
                                  rng=simulation_generator(9), **_OPTS["theil-sen-exp"])[:, 0]
    assert stats.ks_2samp(a, wrong).pvalue < 1e-3  # and the check can tell ε apart
    n1, n2 = _paired_p25("noisy-stats", x, y, levels=(4.0, 3.8), trials=50, seed=[6])
    ok = np.isfinite(n1) & np.isfinite(n2)
    assert ok.sum() > 40 and np.corrcoef(n1[ok], n2[ok])[0, 1] > 0.9  # Laplace draws scaled


def test_figure_grids_are_the_harness_cells():
    assert len(figure_cells("alabi-fig5")) == 18
    f6 = figure_cells("alabi-fig6")
    assert len(f6) == 18 and {c[0] for c in f6} == {800, 8000, 20000}


def test_third_rule_flags_useless_cells_and_skips_where_the_rule_cannot_choose_noisy_stats():
    from studies.auto import RULE2, RULE3, derive_rule3, evaluate3, rule3_choose, rule3_skip

    raw = _raw("evaluate")
    # cell 1 (n = 100, ε = 1): ε²·n·(s0/4 + C·0.05/√n) = 1.01 <= K: public skip, Theil-Sen at ε
    skip = rule3_skip(raw["cells"][:, 0], raw["cells"][:, 2], RULE3)
    assert skip.tolist() == [True, False, False]
    assert rule3_skip([100], [1.0], RULE2).tolist() == [True]  # ε²·n/4 = 25 <= U
    ev = evaluate3(raw, {"RULE2": RULE2, "RULE3": RULE3}, seed=1, boot=50)
    r3 = ev["rules"]["RULE3"]
    # cell 2: u = 100·1e2 = 1e4, share 0: u·s0 = 400 > K, z = 0 < C -> NoisyStats, ratio 1;
    # cell 3: 30% of the rows on the bounds: z·σ̃²/0.05 = 30·0.2 = 6 > C -> Theil-Sen, ratio 1
    assert r3["chose_ns"][1] > 0.99 and r3["chose_ns"][2] < 0.01
    assert r3["summary"]["max_ratio"] == pytest.approx(1.0)
    # errors 0.01..0.05, the trivial release's |0.5 − 0.325| = 0.175: no cell is useless; when
    # the better finalist is 0.2 off in cell 3 (and 0.15 in cell 2), only cell 3 is
    assert ev["useless"] == [False, False, False]
    raw1 = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in raw.items()}
    for k in ("theil-sen-exp|full", "noisy-stats|full"):
        raw1[k][1] = P_TRUE + 0.15
        raw1[k][2] = P_TRUE + 0.2
    assert evaluate3(raw1, {"RULE3": RULE3}, seed=1, boot=0)["useless"] == [False, False, True]
    # the choice itself: the clipped-count term scales with σ̃_x²/0.05 (a = 1)
    u, nv = np.array([1e4]), np.array([5.0])  # σ̃_x² = 5/100 = 0.05
    assert rule3_choose(u, np.array([19.0]), nv, 100.0, 10.0, RULE3).tolist() == [True]
    assert rule3_choose(u, np.array([21.0]), nv, 100.0, 10.0, RULE3).tolist() == [False]
    # a search whose grid contains RULE3 and a rule that never runs NoisyStats picks one
    # with the minimum cells over 1.10 (here RULE3: ratio 1 everywhere)
    d = derive_rule3([raw], seeds=(1,), grid=((RULE3["K"], 1e9), (RULE3["s0"],), (RULE3["C"],),
                                             (RULE3["a"],)))
    assert d["rule"]["K"] == RULE3["K"] and d["mean_cells_over_1.10"] == 0


def test_selection_noisy_stats_share_follows_the_rule_and_its_skip():
    from studies.auto import RULE2, RULE3, selection_noisy_stats_share

    gen = np.random.default_rng(0)
    x = np.linspace(0.0, 1.0, 2000)  # σ_x² ≈ 1/12: u = ε²·nvar ≈ 1.7e7 at ε = 100
    inside = 0.2 + 0.5 * x
    kw = dict(x_bounds=(0.0, 1.0), y_bounds=(0.0, 1.0), draws=2000, rng=gen)
    # no row on the bounds except x's two ends (count 2: z·σ̃²/0.05 ≈ 0.07 < C): NoisyStats
    assert selection_noisy_stats_share(x, inside, epsilon=100.0, rule=RULE3, **kw) == 1.0
    assert selection_noisy_stats_share(x, inside, epsilon=100.0, rule=RULE2, **kw) == 1.0
    # every row on the y bounds: count/√n·σ̃²/0.05 ≈ 75 > C: Theil-Sen
    clipped = np.where(x < 0.5, 0.0, 1.0)
    assert selection_noisy_stats_share(x, clipped, epsilon=100.0, rule=RULE3, **kw) == 0.0
    # public skip (ε²·n·(s0/4 + C·0.05/√n) <= K at n = 2000, ε = 1): no selection, share 0
    assert selection_noisy_stats_share(x, inside, epsilon=1.0, rule=RULE3, **kw) == 0.0
    # u far below K/s0 with no row on the bounds: only the noise can choose NoisyStats, and the
    # share then follows the Laplace tail, 0 < P < 0.5
    few = np.linspace(0.45, 0.55, 60)
    p = selection_noisy_stats_share(few, 0.2 + 0.5 * few, epsilon=16.0, rule=RULE3,
                                    x_bounds=(0.0, 1.0), y_bounds=(0.0, 1.0), draws=20000, rng=gen)
    assert 0.0 < p < 0.5
