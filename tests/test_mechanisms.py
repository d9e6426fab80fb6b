"""Samplers: seeded statistical tests with power checks, exact distributions, bad input."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from _densities import (
    brute_quantile_law,
    cell_width,
    continuous_quantile_law,
    gap_weight,
    law_bins,
    law_cells,
    law_log_ratio,
    log_density_ratio,
    reference_code_widened,
)
from _stats import ALPHA, chi2_pvalue, ks_pvalue
from dpreg import GDP, ZCDP, ApproxDP, InvalidInputError, PrivacyLeakWarning, PureDP
from dpreg.mechanisms import (
    exp_quantile,
    gaussian,
    gaussian_sigma,
    laplace,
    median_smooth_sensitivity,
    ptr_test,
    ptr_threshold,
    quantile_em_intervals,
    quantile_em_probabilities,
    smooth_median,
    student_t_scale,
)
from dpreg.mechanisms.exponential import exp_quantile_rows, quantile_em_law
from dpreg.privacy.budgets import gdp_delta, gdp_mu

N = 20_000


def assert_scale(samples, make_dist, scale):
    """KS passes at the right scale and rejects at 0.7x and 1.3x (power check)."""
    assert ks_pvalue(samples, make_dist(scale).cdf) > ALPHA
    for wrong in (0.7, 1.3):
        assert ks_pvalue(samples, make_dist(scale * wrong).cdf) < ALPHA


class TestLaplace:
    def test_scale(self, rng):
        x = laplace(np.zeros(N), sensitivity=2.0, epsilon=0.5, rng=rng)
        assert_scale(x, lambda b: stats.laplace(scale=b), 4.0)

    def test_scalar_path_and_seed(self):
        assert isinstance(laplace(1.0, sensitivity=1, epsilon=1, rng=3), float)
        assert laplace(1.0, sensitivity=1, epsilon=1, rng=3) == laplace(1.0, sensitivity=1, epsilon=1, rng=3)
        draws = np.array([laplace(0.0, sensitivity=1, epsilon=2, rng=i) for i in range(4000)])
        assert ks_pvalue(draws, stats.laplace(scale=0.5).cdf) > ALPHA

    def test_infinite_epsilon_is_exact(self):
        assert laplace(1.25, sensitivity=1, epsilon=math.inf, rng=0) == 1.25

    @pytest.mark.parametrize("kw,match", [({"epsilon": 0}, "epsilon"), ({"epsilon": -1}, "epsilon"),
                                          ({"epsilon": math.nan}, "epsilon"),
                                          ({"sensitivity": -1}, "sensitivity")])
    def test_bad(self, kw, match):
        args = {"sensitivity": 1.0, "epsilon": 1.0, **kw}
        with pytest.raises(InvalidInputError, match=match):
            laplace(0.0, rng=0, **args)

    def test_nan_value(self):
        with pytest.raises(InvalidInputError, match="finite"):
            laplace(np.array([1.0, np.nan]), sensitivity=1, epsilon=1, rng=0)


class TestGaussian:
    @pytest.mark.parametrize("budget,sens,sigma", [
        (ZCDP(0.5), 2.0, 2.0),
        (GDP(0.5), 1.0, 2.0),
        (ApproxDP(1.0, 1e-6), 1.0, 1.0 / gdp_mu(1.0, 1e-6)),
    ])
    def test_scale(self, rng, budget, sens, sigma):
        assert gaussian_sigma(sens, budget) == pytest.approx(sigma, rel=1e-12)
        x = gaussian(np.zeros(N), sensitivity=sens, budget=budget, rng=rng)
        assert_scale(x, lambda s: stats.norm(scale=s), sigma)

    def test_analytic_meets_delta_exactly(self):
        sigma = gaussian_sigma(1.0, ApproxDP(0.7, 1e-5))
        assert gdp_delta(0.7, 1.0 / sigma) <= 1e-5
        assert gdp_delta(0.7, 1.0 / (sigma * (1 - 1e-8))) > 1e-5

    def test_classical(self):
        s = gaussian_sigma(1.0, ApproxDP(0.5, 1e-5), calibration="classical")
        assert s == pytest.approx(math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5)
        assert s > gaussian_sigma(1.0, ApproxDP(0.5, 1e-5))  # analytic is tighter
        with pytest.raises(InvalidInputError, match="epsilon < 1"):
            gaussian_sigma(1.0, ApproxDP(1.5, 1e-5), calibration="classical")

    @pytest.mark.parametrize("budget", [PureDP(1.0), ApproxDP(1.0, 0.0), ZCDP(0.0), "rho=1"])
    def test_bad_budget(self, budget):
        with pytest.raises(InvalidInputError):
            gaussian(0.0, sensitivity=1.0, budget=budget, rng=0)

    def test_infinite(self):
        assert gaussian(2.0, sensitivity=1, budget=ZCDP(math.inf), rng=0) == 2.0


# ------------------------------------------------------------------ exponential mechanism
Z15 = np.sort(np.random.default_rng(11).uniform(0.2, 0.8, size=15))


def bin_counts(samples, breaks):
    idx = np.searchsorted(breaks, samples, side="right") - 1
    idx = np.clip(idx, 0, len(breaks) - 2)
    return np.bincount(idx, minlength=len(breaks) - 1)


@pytest.mark.parametrize("q,theta", [(0.5, 0.0), (0.3, 0.0), (0.5, 0.04), (0.8, 0.04)])
class TestExpQuantileDistribution:
    eps, lo, hi = 3.0, -0.5, 1.5

    def test_gumbel_draws_match_exact_probabilities(self, q, theta):
        g = np.random.default_rng(123)
        draws = np.array([exp_quantile(Z15, q=q, epsilon=self.eps, lo=self.lo, hi=self.hi,
                                       theta=theta, rng=g) for _ in range(8000)])
        breaks, p = quantile_em_probabilities(Z15, q=q, epsilon=self.eps, lo=self.lo,
                                              hi=self.hi, theta=theta)
        counts = bin_counts(draws, breaks)
        assert chi2_pvalue(counts, p) > ALPHA
        for wrong in (0.7, 1.3):  # power: the wrong ε is rejected
            _, pw = quantile_em_probabilities(Z15, q=q, epsilon=self.eps * wrong, lo=self.lo,
                                              hi=self.hi, theta=theta)
            assert chi2_pvalue(counts, pw) < ALPHA
        # uniform inside the chosen interval
        j = np.searchsorted(breaks, draws, side="right") - 1
        u = (draws - breaks[j]) / (breaks[j + 1] - breaks[j])
        assert ks_pvalue(u, stats.uniform.cdf) > ALPHA

    def test_batch_draws(self, q, theta):
        draws = exp_quantile(Z15, q=q, epsilon=self.eps, lo=self.lo, hi=self.hi, theta=theta,
                             rng=5, size=N)
        breaks, p = quantile_em_probabilities(Z15, q=q, epsilon=self.eps, lo=self.lo,
                                              hi=self.hi, theta=theta)
        assert chi2_pvalue(bin_counts(draws, breaks), p) > ALPHA

    def test_probabilities_match_definition(self, q, theta):
        """Integrate exp(ε·u(r)/2) of the *definition* of the utility on a fine grid."""
        breaks, p = quantile_em_probabilities(Z15, q=q, epsilon=self.eps, lo=self.lo,
                                              hi=self.hi, theta=theta)
        r = np.linspace(self.lo, self.hi, 400_001)
        mid = (r[:-1] + r[1:]) / 2
        n = Z15.size
        lo_count = np.searchsorted(Z15, mid - theta, side="right")  # #{z <= r-θ}
        hi_count = np.searchsorted(Z15, mid + theta, side="right")  # #{z <= r+θ}
        target = n * q
        # min over the attainable counts c in [lo_count, hi_count] of |c - Nq| (tie-free data)
        inside = np.minimum(target - np.floor(target), np.ceil(target) - target)
        best = np.where(target < lo_count, lo_count - target,
                        np.where(target > hi_count, target - hi_count, inside))
        dens = np.exp(-(self.eps / 2) * np.floor(best)) * np.diff(r)
        mass = np.array([dens[(mid > a) & (mid < b)].sum() for a, b in zip(breaks[:-1], breaks[1:])])
        mass /= dens.sum()
        np.testing.assert_allclose(mass, p, atol=2e-4)


# Tied and all-equal inputs (issue 32): the mechanism's output is a double, and a value shared
# by several inputs is an output with its own (top) score -- its mass is its rounding cell's.
# (name, z, q, theta, epsilon, atoms carry 15-85% of the mass at this epsilon)
TIED = [
    ("all-equal", [0.5] * 7, 0.5, 0.0, 25.0, True),
    ("tied-median", [0.2, 0.5, 0.5, 0.5, 0.5, 0.9], 0.5, 0.0, 37.0, True),
    ("all-clipped-at-lo", [-1.0] * 5, 0.5, 0.0, 39.0, True),
    ("tied-quantile", [0.1] + [0.3] * 6 + [0.9], 0.3, 0.0, 72.0, True),
    ("tied-widened", [0.3] * 6 + [0.31, 1.2], 0.5, 0.02, 3.0, False),
    ("tied-moderate-eps", [0.2, 0.5, 0.5, 0.5, 0.9, 0.9], 0.5, 0.0, 3.0, False),
]


@pytest.mark.parametrize("name,z,q,theta,eps,atoms", TIED, ids=[t[0] for t in TIED])
class TestExpQuantileTies:
    """Draws against the brute-force statement of the mechanism on tied inputs (chi-square
    on the cells 'equal to a value' / 'strictly between two values'), with power against the
    wrong ε and against the continuous mechanism sampled before issue 32 (which never puts
    mass on a value, so a tied median could never be released)."""

    lo, hi = -0.5, 1.5

    def law(self, z, q, theta, eps):
        return brute_quantile_law(z, q=q, epsilon=eps, lo=self.lo, hi=self.hi, theta=theta)

    def test_single_draws_follow_the_brute_force_law(self, name, z, q, theta, eps, atoms):
        g = np.random.default_rng(7)
        draws = np.array([exp_quantile(z, q=q, epsilon=eps, lo=self.lo, hi=self.hi,
                                       theta=theta, rng=g) for _ in range(4000)])
        law = self.law(z, q, theta, eps)
        counts = law_bins(draws, law[0])
        assert chi2_pvalue(counts, law_cells(law)) > ALPHA
        for wrong in (0.7, 1.3):
            assert chi2_pvalue(counts, law_cells(self.law(z, q, theta, eps * wrong))) < ALPHA
        if atoms:
            assert 0.15 < law[1].sum() < 0.85
            old = continuous_quantile_law(z, q=q, epsilon=eps, lo=self.lo, hi=self.hi,
                                          theta=theta)
            # the draws hit values that law gives no mass at all: rejected outright
            assert counts[law_cells(old) == 0].sum() > 100

    def test_batch_draws_and_rows_follow_the_brute_force_law(self, name, z, q, theta, eps,
                                                             atoms):
        law = self.law(z, q, theta, eps)
        batch = exp_quantile(z, q=q, epsilon=eps, lo=self.lo, hi=self.hi, theta=theta, rng=5,
                             size=N)
        assert chi2_pvalue(law_bins(batch, law[0]), law_cells(law)) > ALPHA
        rows = exp_quantile_rows(np.tile(np.asarray(z, dtype=float), (3000, 1)), q=q,
                                 epsilon=eps, lo=self.lo, hi=self.hi, theta=theta, rng=9)
        assert chi2_pvalue(law_bins(rows, law[0]), law_cells(law)) > ALPHA

    def test_library_law_is_the_brute_force_law(self, name, z, q, theta, eps, atoms):
        pts, pp, pg = quantile_em_law(z, q=q, epsilon=eps, lo=self.lo, hi=self.hi,
                                      theta=theta)
        bp, bpp, bpg = self.law(z, q, theta, eps)
        np.testing.assert_array_equal(pts, bp)
        np.testing.assert_allclose(pp, bpp, rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(pg, bpg, rtol=1e-9, atol=1e-300)
        # the interval form sums the same law (a value goes with the interval it starts)
        breaks, p = quantile_em_probabilities(z, q=q, epsilon=eps, lo=self.lo, hi=self.hi,
                                              theta=theta)
        assert p.sum() == pytest.approx(1.0)
        j = np.searchsorted(breaks, pts, side="right") - 1
        for k in range(len(pts) - 1):
            assert p[j[k]] == pytest.approx(pp[k] + pg[k], rel=1e-9, abs=1e-300)


def test_gap_weight_is_the_sum_of_the_cells_of_the_doubles_inside():
    """Brute force over the doubles: a gap's weight is Σ ω(d) over the doubles strictly inside
    it (also across a binade boundary, where the spacing halves)."""
    for a in (0.3, 1.0 - 4 * np.finfo(float).eps, -0.25):
        b = a
        for _ in range(9):
            b = math.nextafter(b, math.inf)
        d, total = math.nextafter(a, math.inf), 0.0
        while d < b:
            total += cell_width(d, -1.0, 2.0)
            d = math.nextafter(d, math.inf)
        assert gap_weight(a, b) == total
    x = 0.7
    assert gap_weight(x, math.nextafter(x, math.inf)) == 0.0  # adjacent doubles: nothing inside


@pytest.mark.parametrize("q", [0.5, 0.3])
def test_large_epsilon_releases_a_tied_quantile_exactly(q):
    """ε → ∞: the mechanism's release is the q-quantile when it is a tied value (the mass of
    every other double vanishes) -- exp_quantile_rows at ε = 1e9, both samplers (i.i.d. draws
    of one row, and row by row).  The public exp_quantile treats ε above the cap (100) as ∞,
    the exact quantile, and at ε = 100 already releases this tied median."""
    z = np.array([0.1, 0.3, 0.3, 0.3, 0.3, 0.3, 0.7, 0.9])
    kw = dict(q=q, epsilon=1e9, lo=-1.0, hi=2.0)
    assert np.all(exp_quantile_rows(z[None, :], rng=3, draws_per_row=200, **kw) == 0.3)
    assert np.all(exp_quantile_rows(np.tile(z, (50, 1)), rng=3, **kw) == 0.3)
    with pytest.warns(PrivacyLeakWarning):
        assert exp_quantile(z, q=q, epsilon=math.inf, lo=-1.0, hi=2.0) == 0.3
    if q == 0.5:
        assert np.all(exp_quantile(z, epsilon=100.0, lo=-1.0, hi=2.0, rng=5, size=200) == 0.3)
    # all equal, and all clipped to one end of the range
    for v, want in ((0.4, 0.4), (5.0, 2.0)):
        rows = np.full((1, 9), v)
        assert np.all(exp_quantile_rows(rows, epsilon=1e9, lo=-1, hi=2, rng=4,
                                        draws_per_row=50) == want)


class TestWidenedPrivacy:
    pair = ([0.1, 0.2, 0.8, 0.9], [0.1, 0.15, 0.2, 0.9])

    def test_reference_code_even_m_bug_is_pinned(self):
        d1 = reference_code_widened(self.pair[0], 1.0, -0.5, 1.5, 0.01)
        d2 = reference_code_widened(self.pair[1], 1.0, -0.5, 1.5, 0.01)
        ratio = log_density_ratio(d1, d2)
        assert ratio == pytest.approx(1.20, abs=0.01)
        assert ratio > 1.0  # the buggy construction violates ε = 1

    def test_ours_is_private_on_the_same_pair(self):
        d1 = quantile_em_probabilities(self.pair[0], epsilon=1.0, lo=-0.5, hi=1.5, theta=0.01)
        d2 = quantile_em_probabilities(self.pair[1], epsilon=1.0, lo=-0.5, hi=1.5, theta=0.01)
        assert log_density_ratio(d1, d2) <= 1.0 + 1e-9

    @pytest.mark.parametrize("theta", [0.0, 0.01, 0.2])
    @pytest.mark.parametrize("q", [0.5, 0.25, 0.9])
    def test_random_neighbours_at_every_double(self, theta, q):
        """The exact laws over the doubles on neighbouring tied inputs: at every value (tied
        values are outputs of their own) and inside every gap the probabilities differ by at
        most e^ε; power (median): the same audit of the mechanism run at 2ε exceeds ε."""
        g = np.random.default_rng(98)
        worst = worst_bug = 0.0
        for _ in range(150):
            n = int(g.integers(1, 9))
            z = np.round(g.uniform(-0.2, 1.2, size=n), 1)  # rounding creates ties
            z[g.integers(n, size=n // 2)] = z[0]  # and more of them
            z2 = z.copy()
            z2[g.integers(n)] = np.round(g.uniform(-0.7, 1.7), 1)  # may leave the range
            for eps, bug in ((1.0, False), (2.0, True)):
                d1 = quantile_em_law(z, q=q, epsilon=eps, lo=-0.5, hi=1.5, theta=theta)
                d2 = quantile_em_law(z2, q=q, epsilon=eps, lo=-0.5, hi=1.5, theta=theta)
                r = law_log_ratio(d1, d2, -0.5, 1.5)
                if bug:
                    worst_bug = max(worst_bug, r)
                else:
                    worst = max(worst, r)
        assert worst <= 1.0 + 1e-9
        if q == 0.5:  # (far quantiles of these small inputs rarely reach the bound)
            assert worst_bug > 1.2

    @pytest.mark.parametrize("theta", [0.0, 0.01, 0.2])
    @pytest.mark.parametrize("q", [0.5, 0.25, 0.9])
    def test_random_neighbours(self, theta, q):
        g = np.random.default_rng(99)
        worst = 0.0
        for _ in range(150):
            n = int(g.integers(1, 9))
            z = np.round(g.uniform(-0.2, 1.2, size=n), 1)  # rounding creates ties
            z2 = z.copy()
            z2[g.integers(n)] = np.round(g.uniform(-0.7, 1.7), 1)  # may leave the range
            d1 = quantile_em_probabilities(z, q=q, epsilon=1.0, lo=-0.5, hi=1.5, theta=theta)
            d2 = quantile_em_probabilities(z2, q=q, epsilon=1.0, lo=-0.5, hi=1.5, theta=theta)
            worst = max(worst, log_density_ratio(d1, d2))
        assert worst <= 1.0 + 1e-9


class TestExpQuantileEdges:
    def test_infinite_epsilon_returns_exact(self):
        with pytest.warns(PrivacyLeakWarning):
            assert exp_quantile([3.0, 1.0, 2.0, 10.0], epsilon=math.inf, lo=0, hi=5) == 2.5

    def test_infinities_are_clipped(self):
        b, s = quantile_em_intervals([-np.inf, 0.5, np.inf], epsilon=1.0, lo=0.0, hi=1.0)
        assert b[0] == 0.0 and b[-1] == 1.0 and b[1] == 0.0 and b[3] == 1.0

    def test_empty_is_uniform(self):
        draws = exp_quantile([], epsilon=1.0, lo=0.0, hi=2.0, rng=1, size=5000)
        assert ks_pvalue(draws, stats.uniform(0, 2).cdf) > ALPHA

    @pytest.mark.parametrize("kw,match", [
        ({"epsilon": 0}, "epsilon"), ({"lo": 1, "hi": 0}, "lo < hi"), ({"q": 1.5}, "q"),
        ({"theta": -0.1}, "theta"), ({"z": [1.0, np.nan]}, "NaN"), ({"z": ["a"]}, "real"),
        ({"z": np.ones((2, 2))}, "1-D"),
    ])
    def test_bad(self, kw, match):
        args = {"z": [0.1, 0.2], "epsilon": 1.0, "lo": 0.0, "hi": 1.0, **kw}
        z = args.pop("z")
        with pytest.raises(InvalidInputError, match=match):
            exp_quantile(z, rng=0, **args)

    def test_output_in_range(self):
        out = exp_quantile(np.linspace(-5, 5, 50), epsilon=0.1, lo=-1, hi=1, rng=0, size=1000)
        assert out.min() >= -1 and out.max() <= 1


# ------------------------------------------------------------------ smooth sensitivity median
def local_sensitivity_brute(z, lo, hi, k, rng, trials=400):
    """Largest |median change| found by changing k entries (extremes and random values)."""
    z = np.clip(np.asarray(z, float), lo, hi)
    base = np.median(z)
    worst = 0.0
    for _ in range(trials):
        z2 = z.copy()
        idx = rng.choice(z.size, size=k, replace=False)
        z2[idx] = rng.choice([lo, hi, rng.uniform(lo, hi)], size=k)
        worst = max(worst, abs(np.median(z2) - base))
    # deterministic extremes: move the k smallest to hi / the k largest to lo
    order = np.argsort(z)
    for idx, val in ((order[:k], hi), (order[-k:], lo)):
        z2 = z.copy()
        z2[idx] = val
        worst = max(worst, abs(np.median(z2) - base))
    return worst


class TestSmoothMedian:
    @pytest.mark.parametrize("m", [7, 8, 21])
    @pytest.mark.parametrize("k", [1, 2, 3])
    def test_upper_bounds_local_sensitivity(self, m, k):
        g = np.random.default_rng(m * 10 + k)
        for _ in range(10):
            z = np.round(g.uniform(0, 1, size=m), 2)
            t = 0.2
            s = median_smooth_sensitivity(z, lo=-0.5, hi=1.5, k=k, t=t)
            assert s + 1e-12 >= local_sensitivity_brute(z, -0.5, 1.5, k, g)

    @pytest.mark.parametrize("m", [6, 7, 30])
    @pytest.mark.parametrize("k", [1, 3])
    def test_smoothness(self, m, k):
        g = np.random.default_rng(m + 100 * k)
        t = 0.15
        for _ in range(60):
            z = g.uniform(0, 1, size=m)
            z2 = z.copy()
            z2[g.choice(m, size=k, replace=False)] = g.uniform(-1, 2, size=k)
            s1 = median_smooth_sensitivity(z, lo=-0.5, hi=1.5, k=k, t=t)
            s2 = median_smooth_sensitivity(z2, lo=-0.5, hi=1.5, k=k, t=t)
            assert s1 <= math.exp(t) * s2 + 1e-12 and s2 <= math.exp(t) * s1 + 1e-12

    def test_constants(self):
        t, s = student_t_scale(1.0, 3)
        assert t == pytest.approx(1 / 8) and s == pytest.approx(math.sqrt(3) / 4)
        # general form s = 2√d(ε − t(d+1))/(d+1)
        assert s == pytest.approx(2 * math.sqrt(3) * (1.0 - t * 4) / 4)

    def test_noise_is_student_t_at_the_right_scale(self):
        z = np.random.default_rng(4).uniform(0, 1, size=41)
        eps, dof = 1.0, 3
        t, s = student_t_scale(eps, dof)
        sens = median_smooth_sensitivity(z, lo=-0.5, hi=1.5, k=1, t=t)
        g = np.random.default_rng(8)
        out = np.array([smooth_median(z, epsilon=eps, lo=-0.5, hi=1.5, k=1, dof=dof, rng=g)
                        for _ in range(10_000)])
        std = (out - np.median(z)) / (sens / s)
        assert ks_pvalue(std, stats.t(dof).cdf) > ALPHA
        for wrong in (0.7, 1.3):
            assert ks_pvalue(std, stats.t(dof, scale=wrong).cdf) < ALPHA

    def test_infinite_epsilon(self):
        with pytest.warns(PrivacyLeakWarning):
            assert smooth_median([1.0, 4.0, 2.0, 3.0], epsilon=math.inf, lo=0, hi=5) == 2.5

    @pytest.mark.parametrize("kw,match", [({"z": []}, "non-empty"), ({"k": 0}, "k"),
                                          ({"dof": 0}, "dof"), ({"epsilon": -1}, "epsilon"),
                                          ({"lo": 2.0}, "lo < hi")])
    def test_bad(self, kw, match):
        args = {"z": [0.1, 0.5], "epsilon": 1.0, "lo": 0.0, "hi": 1.0, **kw}
        z = args.pop("z")
        with pytest.raises(InvalidInputError, match=match):
            smooth_median(z, rng=0, **args)


# ------------------------------------------------------------------ PTR
class TestPTR:
    def test_threshold(self):
        assert ptr_threshold(0.5, 1e-5) == pytest.approx(math.log(1 / 2e-5) / 0.5)

    def test_unsafe_pass_probability(self):
        eps, delta = 0.5, 0.05
        g = np.random.default_rng(1)
        passes = sum(ptr_test(-1, epsilon=eps, delta=delta, rng=g) for _ in range(N))
        p_true = delta * math.exp(-eps)
        assert stats.binomtest(passes, N, p_true).pvalue > ALPHA
        # a PTR with Laplace scale ε (the google-research bug) passes far less often here
        p_bug = 0.5 * math.exp(-(ptr_threshold(eps, delta) + 1) / eps)
        assert stats.binomtest(passes, N, p_bug).pvalue < ALPHA

    def test_bad(self):
        with pytest.raises(InvalidInputError, match="delta"):
            ptr_test(3, epsilon=1.0, delta=0.0, rng=0)


def test_infinite_epsilon_warning_can_be_silenced():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        exp_quantile([1.0], epsilon=math.inf, lo=0, hi=2)


def _smooth_bound_brute_force(z, lo, hi, k, t):
    """The module doc's S = max_m max_l e^{−lt} A_m(l) over every l up to a window spanning
    the whole bookended list (no early stop), read straight from the definition."""
    zb = np.concatenate(([lo], np.sort(np.clip(z, lo, hi)), [hi]))
    size = zb.size

    def at(i):
        return zb[min(max(i, 0), size - 1)]

    mm = z.size
    mids = [mm // 2, mm // 2 + 1] if mm % 2 == 0 else [(mm + 1) // 2]
    out = -np.inf
    for m in mids:
        best = max(at(m + k) - at(m), at(m) - at(m - k))
        el = 1
        while True:
            w = k * (el + 1)
            a = max(at(m + s) - at(m - w + s) for s in range(w + 1))
            best = max(best, a * math.exp(-el * t))
            if w >= size - 1:
                break
            el += 1
        out = max(out, best)
    return out


def test_smooth_bound_is_its_definition():
    """The one implementation of the smooth bound (compiled with numba when installed, with an
    early stop) gives exactly the value of the definition, also for rows of a batch."""
    from dpreg.mechanisms.smooth import _bookended, _median_bound

    g = np.random.default_rng(1)
    for m, k, t in ((9, 1, 0.3), (40, 3, 0.05), (201, 8, 0.01), (50, 200, 0.5), (12, 2, 2.0)):
        z = np.clip(g.normal(0.5, 0.3, m), 0, 1)
        ref = _smooth_bound_brute_force(z, 0.0, 1.0, k, t)
        assert median_smooth_sensitivity(z, lo=0, hi=1, k=k, t=t) == ref
        assert _median_bound(_bookended(z, 0.0, 1.0), k, t) == ref
    # a wrong bound (the l = 0 term only) is caught by the same comparison
    z = np.clip(g.normal(0.5, 0.3, 40), 0, 1)
    zb = _bookended(z, 0.0, 1.0)
    only_l0 = max(zb[21 + 3] - zb[21], zb[21] - zb[21 - 3], zb[20 + 3] - zb[20],
                  zb[20] - zb[20 - 3])
    assert only_l0 != _smooth_bound_brute_force(z, 0.0, 1.0, 3, 0.05)


def test_smooth_bound_window_maximum_forms_agree():
    """The window maximum inside the bound has a NumPy form (no numba) and a loop form (what
    numba compiles): both give the same float on every window, bookends included; the loop
    may skip blocks that cannot beat the running best, and then max(best, window·decay) --
    what the bound uses -- is still the same."""
    from dpreg.mechanisms.smooth import _window_max_loop, _window_max_numpy

    g = np.random.default_rng(4)
    inf = -np.inf
    for n, m, w in ((10, 5, 3), (50, 20, 40), (200, 100, 500), (30, 1, 2), (7, 8, 1),
                    (3000, 1500, 1000)):
        zb = np.r_[0.0, np.sort(g.uniform(0, 1, n)), 1.0]
        assert _window_max_numpy(zb, m, w, 1.0, inf) == _window_max_loop(zb, m, w, 1.0, inf)
        full = _window_max_numpy(zb, m, w, 1.0, inf)
        for decay in (1.0, 0.7, 0.01):
            for best in (0.0, 0.3 * full * decay, full * decay, 0.99 * full * decay, 2.0):
                got = _window_max_loop(zb, m, w, decay, best)
                assert max(best, got * decay) == max(best, full * decay)
                assert got == full or full * decay <= best
    # windows reaching past the list read the bookends: one spanning everything gives hi − lo
    zb = np.r_[0.0, np.sort(g.uniform(0, 1, 10)), 1.0]
    assert _window_max_numpy(zb, 6, 30, 1.0, inf) == _window_max_loop(zb, 6, 30, 1.0, inf) == 1.0


def test_smooth_median_rows_is_the_single_release_row_by_row():
    """Row r of the batched smooth median equals smooth_median on row r's values with the
    same stream (one Generator: the Student-t draws of rows calls in a row)."""
    from dpreg.mechanisms.smooth import smooth_median_rows

    g = np.random.default_rng(2)
    zs = [g.normal(0.5, 0.3, 30) for _ in range(4)]
    batch = np.stack([np.concatenate(([0.0], np.sort(np.clip(z, 0, 1)), [1.0])) for z in zs])
    rows = smooth_median_rows(batch, epsilon=0.8, k=2, dof=3, rng=np.random.default_rng(7))
    gen = np.random.default_rng(7)
    single = [smooth_median(z, epsilon=0.8, lo=0, hi=1, k=2, dof=3, rng=gen) for z in zs]
    assert rows.tolist() == single
