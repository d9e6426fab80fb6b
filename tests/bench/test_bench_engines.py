"""The vectorised evaluation engines reproduce the library's releases.

Deterministic parts (pair designs, the doubled multisets, exponential-mechanism intervals and
weights, smooth sensitivities) are compared *exactly* with the library functions; the sampling
steps are compared in distribution with single calls of the public functions (seeded KS tests at
ALPHA, with a power check: the same engine at the wrong budget must be rejected).
"""

import math

import numpy as np
import pytest
from scipy import stats

from _stats import ALPHA
from dpreg.bench import engines as E
from dpreg.simple import gradient_descent, nonprivate_theil_sen, theil_sen
from dpreg.simple._theil_sen import dp_median_of_doubled
from dpreg.simple.pairs import doubled_pair_values, round_robin_matchings

pytestmark = pytest.mark.filterwarnings("ignore::dpreg.PrivacyLeakWarning")

LO, HI = -2.0, 2.0


def data(n, seed, ties=False, all_tied=False):
    g = np.random.default_rng(seed)
    x = g.uniform(0, 1, n)
    y = 0.5 * x + g.normal(0, 0.1, n)
    if ties:
        x[: n // 3 + 1] = x[0]
    if all_tied:
        x[:] = 0.3
    return x, y


CASES = [(n, s, t, a) for n in (2, 3, 8, 21, 40, 41) for s, t, a in
         ((0, False, False), (1, True, False), (2, False, True))]


@pytest.mark.parametrize("n,seed,ties,all_tied", CASES)
def test_multisets_and_mechanism_inputs_match_the_library(n, seed, ties, all_tied):
    x, y = data(n, seed, ties, all_tied)
    k = min(3, n - 1)
    ms = E.kmatch_multisets(x, y, k, 1, np.random.default_rng(seed),
                            estimands=(("predictions", 0.25), ("slope", None)))
    design = round_robin_matchings(n, k, np.random.default_rng(seed))  # same generator calls
    for est, m in zip(("predictions", "slope"), ms):
        lib = np.sort(np.clip(doubled_pair_values(
            x, y, design, estimand=est, x_eval=0.25 if est == "predictions" else None), LO, HI))
        p = np.arange(1, 2 * m.size + 1)[None, :]
        assert np.array_equal(E._doubled_at(m, p, LO, HI)[0], lib)
        assert E.doubled_median_rows(m, lo=LO, hi=HI)[0] == np.median(lib)
        # the exponential and smooth medians run the library's mechanisms on exactly the
        # library's multiset: the same draws as the library's per-row calls
        for theta in (0.0, 0.3):
            got = E.em_median_rows(m, epsilon_target=0.7, lo=LO, hi=HI, theta=theta,
                                   rng=np.random.default_rng(3))
            want = dp_median_of_doubled(lib, median="wide" if theta else "exp", epsilon=0.7,
                                        k=m.k, lo=LO, hi=HI, theta=theta,
                                        rng=np.random.default_rng(3))
            assert got[0] == want
        # the smooth median runs the library's mechanism on exactly the library's multiset
        assert np.array_equal(E.doubled_rows(m, lo=LO, hi=HI)[0], np.r_[LO, lib, HI])


def test_all_pairs_multiset_and_nonprivate_theil_sen():
    x, y = data(60, 4, ties=True)
    ms = E.all_pairs_multiset(x, y, estimand="predictions", x_eval=0.25)
    assert ms.rows == 1 and ms.k == 59 and ms.size == 60 * 59 // 2
    assert E.doubled_median_rows(ms)[0] == nonprivate_theil_sen(x, y).predictions[0.25]
    assert E.theil_sen_all_pairs(x, y) == nonprivate_theil_sen(x, y).predictions[0.25]
    assert (E.theil_sen_all_pairs(x, y, estimand="slope")
            == nonprivate_theil_sen(x, y, estimand="slope").slope)


@pytest.mark.parametrize("estimand", ["predictions", "slope"])
def test_root_finding_theil_sen_for_large_n(estimand):
    # above the enumeration limit the median is found by counting; it lands between the two
    # middle pairwise values
    x, y = data(400, 5)
    exact = (nonprivate_theil_sen(x, y).predictions[0.25] if estimand == "predictions"
             else nonprivate_theil_sen(x, y, estimand="slope").slope)
    fast = E.theil_sen_all_pairs(x, y, estimand=estimand, exact_limit=1000)
    assert fast == pytest.approx(exact, abs=1e-5)


def _single(median, x, y, eps, pairs, seed, estimand="predictions"):
    kw = dict(theta=0.01) if median == "wide" else {}
    r = theil_sen(x, y, epsilon=eps, output_range=(LO, HI), median=median, pairs=pairs,
                  estimand=estimand, rng=seed, **kw)
    return r.slope if estimand == "slope" else r.predictions[0.25]


def _engine(median, ms, eps_t, gen, per_row=1):
    if median == "smooth":
        return E.smooth_median_rows(ms, epsilon_target=eps_t, lo=LO, hi=HI, rng=gen,
                                    draws_per_row=per_row)
    return E.em_median_rows(ms, epsilon_target=eps_t, lo=LO, hi=HI,
                            theta=0.01 if median == "wide" else 0.0, rng=gen,
                            draws_per_row=per_row)


@pytest.mark.parametrize("median", ["exp", "wide", "smooth"])
def test_k_matching_releases_have_the_library_distribution(median):
    x, y = data(30, 7)
    eps, draws = 4.0, 800
    singles = np.array([_single(median, x, y, eps, 3, 10_000 + i) for i in range(draws)])
    g = np.random.default_rng(1)
    ms = E.kmatch_multisets(x, y, 3, draws, g)[0]
    ours = _engine(median, ms, E.median_split(eps, "predictions"), g)
    assert stats.ks_2samp(ours, singles).pvalue > ALPHA
    wrong = _engine(median, ms, E.median_split(4 * eps, "predictions"), g)  # power
    assert stats.ks_2samp(wrong, singles).pvalue < ALPHA


@pytest.mark.parametrize("median", ["exp", "smooth"])
def test_all_pairs_slope_releases_have_the_library_distribution(median):
    x, y = data(25, 8)
    eps, draws = 2.0, 800
    singles = np.array([_single(median, x, y, eps, "all", 20_000 + i, "slope")
                        for i in range(draws)])
    ms = E.all_pairs_multiset(x, y, estimand="slope", x_eval=None)
    g = np.random.default_rng(2)
    ours = _engine(median, ms, E.median_split(eps, "slope"), g, per_row=draws)
    assert stats.ks_2samp(ours, singles).pvalue > ALPHA
    wrong = _engine(median, ms, 0.25 * eps, g, per_row=draws)
    assert stats.ks_2samp(wrong, singles).pvalue < ALPHA


@pytest.mark.parametrize("variant,kw", [("pure", {"epsilon": 1.5}), ("zcdp", {"rho": 0.3}),
                                        ("approx", {"epsilon": 1.0, "delta": 1e-6})])
def test_gradient_descent_replicates_equal_single_runs(variant, kw):
    # the harness runs the library's plan, statistics and release: one replicate from a
    # fresh generator is the single fit with that generator, bit for bit
    for n, seed in ((40, 0), (200, 1), (15, 2)):
        x, y = data(n, seed)
        y = np.clip(y, 0, 1)
        for s in range(5):
            ref = gradient_descent(x, y, variant=variant, x_bounds=(0, 1), y_bounds=(0, 1),
                                   rng=s, **kw)
            preds, slope = E.gd_replicates(x, y, variant=variant, x_bounds=(0, 1),
                                           y_bounds=(0, 1), trials=1, rng=s, **kw)
            assert (preds[0, 0], preds[0, 1]) == (ref.predictions[0.25], ref.predictions[0.75])
            assert slope[0] == ref.slope


def test_gradient_descent_replicates_are_the_library_replicates():
    # large n, large ε (clipping stops binding after a few steps) and small ε: the engine's
    # trials are the library's batched replicates (dpreg.replicate_predictions) bit for bit
    from dpreg.replicates import replicate_predictions

    x, y = data(3000, 3)
    y = np.clip(y, 0, 1)
    for eps in (50.0, 0.5):
        preds, _ = E.gd_replicates(x, y, epsilon=eps, x_bounds=(0, 1), y_bounds=(0, 1),
                                   trials=20, rng=9)
        want = replicate_predictions("dp-gd", x, y, epsilon=eps, x_bounds=(0, 1),
                                     y_bounds=(0, 1), trials=20, rng=9)
        assert np.array_equal(preds, want)


def test_many_trials_vectorised_match_in_distribution():
    x, y = data(50, 11)
    y = np.clip(y, 0, 1)
    draws = 300  # seeded: p = 0.6 for the right law, < 1e-10 at 4x the budget (from 250 on)
    preds, _ = E.gd_replicates(x, y, epsilon=2.0, x_bounds=(0, 1), y_bounds=(0, 1),
                               trials=draws, rng=3)
    singles = [gradient_descent(x, y, epsilon=2.0, x_bounds=(0, 1), y_bounds=(0, 1),
                                rng=5000 + i).predictions[0.25] for i in range(draws)]
    assert stats.ks_2samp(preds[:, 0], singles).pvalue > ALPHA
    wrong, _ = E.gd_replicates(x, y, epsilon=8.0, x_bounds=(0, 1), y_bounds=(0, 1),
                               trials=draws, rng=4)
    assert stats.ks_2samp(wrong[:, 0], singles).pvalue < ALPHA


def test_infinite_epsilon_is_the_exact_median():
    x, y = data(20, 12)
    ms = E.kmatch_multisets(x, y, 2, 5, np.random.default_rng(0))[0]
    out = E.em_median_rows(ms, epsilon_target=math.inf, lo=LO, hi=HI, rng=0)
    assert np.array_equal(out, E.doubled_median_rows(ms, lo=LO, hi=HI))


def test_k_out_of_range_is_rejected():
    x, y = data(6, 0)
    with pytest.raises(ValueError, match="k must be between"):
        E.kmatch_multisets(x, y, 7, 1, 0)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("theta", [0.0, 0.1])
def test_em_median_rows_are_the_library_rows_mechanism(ties, theta):
    """The harness's per-trial medians (tie-free rows doubled by repeat, each row sampled by
    exp_quantile_sorted) are exactly exp_quantile_rows on the doubled multisets built by the
    general index arithmetic, from the same seed."""
    from dpreg.mechanisms.exponential import exp_quantile_rows
    from dpreg.simple._common import div_down

    g = np.random.default_rng(4)
    for _ in range(15):
        n = int(g.integers(4, 80))
        x = np.round(g.normal(0, 1, n), 0) if ties else g.normal(0, 1, n)
        y = 0.5 * x + g.normal(0, 0.3, n)
        ms = E.kmatch_multisets(x, y, int(g.integers(1, 3)), int(g.integers(1, 6)), g)[0]
        assert ms.tie_free != ties or n < 6
        seed = int(g.integers(1 << 30))
        a = E.em_median_rows(ms, epsilon_target=0.8, lo=-3, hi=3, theta=theta,
                             rng=np.random.default_rng(seed))
        # the doubled multisets by the general index arithmetic (the tie-free shortcut of
        # doubled_rows must build the same rows)
        p = np.repeat(np.arange(2 * ms.size + 2)[None, :], ms.rows, axis=0)
        ref = E._doubled_at(ms, p, -3, 3)
        assert np.array_equal(E.doubled_rows(ms, lo=-3, hi=3), ref)
        b = exp_quantile_rows(ref[:, 1:-1], epsilon=div_down(0.8, 2 * ms.k), lo=-3, hi=3,
                              theta=theta, rng=np.random.default_rng(seed))
        assert np.array_equal(a, b)
