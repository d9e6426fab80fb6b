"""Pair designs, the k-Lipschitz property, the doubled multiset and U-statistic variances."""

from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from dpreg.exceptions import InvalidInputError
from dpreg.simple.pairs import (
    PairDesign,
    all_pairs,
    doubled_multiset,
    doubled_pair_values,
    kendall_null_variance,
    make_design,
    null_variance_bound,
    null_variance_exact,
    pair_estimates,
    pair_slopes,
    round_robin_matchings,
)


def pair_set(design):
    return {(int(a), int(b)) for a, b in zip(design.i, design.j)}


class TestDesigns:
    @pytest.mark.parametrize("n", [2, 3, 7, 10])
    def test_all_pairs(self, n):
        d = all_pairs(n)
        assert d.size == n * (n - 1) // 2
        assert pair_set(d) == set(combinations(range(n), 2))
        assert d.k == n - 1

    @pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 11, 20])
    def test_matchings_partition_all_pairs(self, n):
        top = n - 1 if n % 2 == 0 else n
        d = round_robin_matchings(n, top, rng=1)
        assert d.size == n * (n - 1) // 2
        assert pair_set(d) == set(combinations(range(n), 2))  # distinct, complete
        assert d.k == n - 1

    @pytest.mark.parametrize("n,k", [(8, 1), (8, 3), (9, 1), (9, 4), (100, 10), (101, 10)])
    def test_k_matchings(self, n, k):
        d = round_robin_matchings(n, k, rng=7)
        assert d.size == k * (n // 2)
        assert len(pair_set(d)) == d.size  # no repeated pair
        assert np.all(d.i < d.j)
        deg = d.degrees
        assert deg.max() == k  # every record in at most k pairs
        if n % 2 == 0:
            assert np.all(deg == k)  # perfect matchings
        else:
            assert deg.min() >= k - 1  # each round leaves one record out

    def test_each_round_is_a_matching(self):
        n, k = 10, 4
        d = round_robin_matchings(n, k, rng=3)
        per_round = n // 2
        for r in range(k):
            idx = np.arange(r * per_round, (r + 1) * per_round)
            pts = np.concatenate([d.i[idx], d.j[idx]])
            assert np.unique(pts).size == pts.size

    def test_design_is_data_independent_and_seeded(self):
        a = round_robin_matchings(30, 5, rng=11)
        b = round_robin_matchings(30, 5, rng=11)
        c = round_robin_matchings(30, 5, rng=12)
        assert pair_set(a) == pair_set(b) and pair_set(a) != pair_set(c)

    @pytest.mark.parametrize("pairs", [0, 8, -1, 2.5, "some", None, True])
    def test_bad_pairs(self, pairs):
        with pytest.raises(InvalidInputError, match="pairs"):
            make_design(8, pairs, rng=0)

    def test_odd_n_allows_n_rounds(self):
        assert make_design(7, 7, rng=0).k == 6
        with pytest.raises(InvalidInputError, match="pairs"):
            make_design(7, 8, rng=0)


class TestEstimates:
    def test_prediction_formula(self, rng):
        x = rng.uniform(-1, 2, 9)
        y = rng.normal(size=9)
        d = all_pairs(9)
        for xe in (0.25, -3.0, 1.7):
            z, tied = pair_estimates(x, y, d, xe)
            assert not tied.any()
            s = (y[d.j] - y[d.i]) / (x[d.j] - x[d.i])
            ref = s * (xe - (x[d.i] + x[d.j]) / 2) + (y[d.i] + y[d.j]) / 2
            np.testing.assert_allclose(z, ref, rtol=1e-12, atol=1e-12)
        s2, _ = pair_slopes(x, y, d)
        np.testing.assert_allclose(s2, s, rtol=1e-14)

    def test_ties_and_overflow_never_give_nan(self):
        x = np.array([0.0, 0.0, 1e-310, 1.0])
        y = np.array([0.0, 1.0, 1e300, -1e300])
        d = all_pairs(4)
        z, tied = pair_estimates(x, y, d, 0.5)
        s, tied2 = pair_slopes(x, y, d)
        assert tied[0] and tied2[0] and tied.sum() == 1
        assert not np.isnan(z).any() and not np.isnan(s).any()

    def test_doubled_multiset(self):
        values = np.array([1.0, 2.0, 3.0])
        tied = np.array([False, True, False])
        m = doubled_multiset(values, tied)
        assert Counter(m.tolist()) == Counter([1.0, 1.0, 3.0, 3.0, -np.inf, np.inf])
        # balanced ±inf never move the median of the untied values
        assert np.median(m) == np.median([1.0, 3.0])


def _multiset_distance(a, b):
    ca, cb = Counter(a.tolist()), Counter(b.tolist())
    return sum((ca - cb).values())


class TestLipschitz:
    """Changing one record changes <= k pairwise values per target and <= 2k entries of the
    doubled multiset (brute force over records, replacements and designs, ties included)."""

    @pytest.mark.parametrize("n", [7, 8])
    @pytest.mark.parametrize("pairs", ["all", 1, 2, 3])
    def test_brute_force(self, n, pairs):
        g = np.random.default_rng(5)
        design = make_design(n, pairs, rng=g)
        k = design.k
        worst_slots = worst_multiset = 0
        for _ in range(40):
            x = np.round(g.uniform(0, 1, n), 1)  # rounding creates ties
            y = np.round(g.uniform(0, 1, n), 1)
            for rec in range(n):
                x2, y2 = x.copy(), y.copy()
                x2[rec] = g.choice([x[(rec + 1) % n], np.round(g.uniform(0, 1), 1)])
                y2[rec] = np.round(g.uniform(0, 1), 1)
                for est, xe in (("slope", None), ("predictions", 0.25), ("predictions", 0.9)):
                    if est == "slope":
                        (v1, t1), (v2, t2) = pair_slopes(x, y, design), pair_slopes(x2, y2, design)
                    else:
                        v1, t1 = pair_estimates(x, y, design, xe)
                        v2, t2 = pair_estimates(x2, y2, design, xe)
                    changed = (t1 != t2) | (~t1 & ~t2 & (v1 != v2))
                    # only pairs containing the changed record can change
                    touches = (design.i == rec) | (design.j == rec)
                    assert not np.any(changed & ~touches)
                    worst_slots = max(worst_slots, int(changed.sum()))
                    m1 = doubled_pair_values(x, y, design, estimand=est, x_eval=xe)
                    m2 = doubled_pair_values(x2, y2, design, estimand=est, x_eval=xe)
                    assert m1.size == m2.size == 2 * design.size  # fixed count
                    worst_multiset = max(worst_multiset, _multiset_distance(m1, m2))
        assert worst_slots <= k
        assert worst_multiset <= 2 * k
        assert worst_multiset == 2 * k  # the bound is attained: it is the right constant


def u_statistic_samples(x, design, reps, g):
    e = g.normal(size=(reps, x.size))
    sx = np.sign(x[design.j] - x[design.i])
    se = np.sign(e[:, design.j] - e[:, design.i])
    return (se * sx).sum(axis=1) / design.size


class TestNullVariance:
    def test_kendall_equals_exact_for_complete_design(self, rng):
        for n in (3, 8, 25):
            x = rng.permutation(n).astype(float)
            assert null_variance_exact(x, all_pairs(n)) == pytest.approx(
                kendall_null_variance(n), rel=1e-12)

    @pytest.mark.parametrize("pairs", ["all", 3, 1])
    @pytest.mark.parametrize("ties", [False, True])
    def test_exact_matches_monte_carlo(self, pairs, ties):
        g = np.random.default_rng(17)
        n = 8
        design = make_design(n, pairs, rng=g)
        x = g.uniform(size=n)
        if ties:
            x = np.round(x * 2) / 2
        reps = 60_000
        u = u_statistic_samples(x, design, reps, g)
        exact = null_variance_exact(x, design)
        # sd of a sample variance ≈ var·sqrt((κ − 1)/reps) with κ <= 3 here; 5 sd tolerance
        assert u.var() == pytest.approx(exact, rel=5 * np.sqrt(2 / reps) + 1e-3)
        assert null_variance_bound(design) >= exact - 1e-15

    def test_printed_corollary_b13_is_wrong(self):
        """Sarathy & Vadhan Cor. B.1.3 as printed orients the sign by the pair order
        (i < j, s < t) instead of at the shared point: 0.179 vs the true 0.083 (n = 8)."""
        n = 8
        x = np.arange(n, dtype=float)
        d = all_pairs(n)
        size = d.size
        printed = 1 / size
        for (i, j), (s, t) in ((p, q) for p in zip(d.i, d.j) for q in zip(d.i, d.j)):
            if len({i, j} & {s, t}) == 1:
                printed += np.sign(x[j] - x[i]) * np.sign(x[t] - x[s]) / (3 * size**2)
        assert printed == pytest.approx(0.179, abs=1e-3)
        assert null_variance_exact(x, d) == pytest.approx(0.0833, abs=1e-3)
        assert kendall_null_variance(8) == pytest.approx(null_variance_exact(x, d))

    def test_bound_is_data_independent_formula(self):
        n = 40
        d = all_pairs(n)
        assert null_variance_bound(d) == pytest.approx((4 * n - 2) / (3 * n * (n - 1)))
        # the bound inflates Kendall's variance by 3(4n − 2)/(4n + 10) -> 3 (sd by about √3)
        ratio = null_variance_bound(d) / kendall_null_variance(n)
        assert ratio == pytest.approx(3 * (4 * n - 2) / (4 * n + 10))
        m = round_robin_matchings(n, 1, rng=0)
        assert null_variance_bound(m) == pytest.approx(1 / m.size)  # disjoint pairs

    def test_repeated_pairs_are_counted(self):
        d = PairDesign(np.array([0, 0]), np.array([1, 1]), 2, "custom")
        x = np.array([0.0, 1.0])
        # two copies of one pair: U0 = sign(e1 - e0) exactly, variance 1
        assert null_variance_exact(x, d) == pytest.approx(1.0)
        assert null_variance_bound(d) == pytest.approx(1.0)


def test_round_robin_rows_are_successive_designs_of_one_generator():
    """The harness's designs (round_robin_rows) are the library's: row t is the t-th of
    successive round_robin_matchings calls on one generator, pair for pair, for even and odd
    n."""
    from dpreg.simple.pairs import round_robin_rows

    for n, k in ((2, 1), (7, 3), (8, 7), (31, 5), (40, 2)):
        i, j = round_robin_rows(n, k, 6, np.random.default_rng(n))
        g = np.random.default_rng(n)
        for t in range(6):
            d = round_robin_matchings(n, k, g)
            assert np.array_equal(i[t], d.i) and np.array_equal(j[t], d.j)
        if n > 7:  # rows are successive draws, not one design repeated
            assert not np.array_equal(i[1], i[0])
