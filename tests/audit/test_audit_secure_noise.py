"""Float-safe secure noise: exact discrete samplers (against exact pmfs and OpenDP as an
oracle, each with a power check), the grid and its rounding accounting, routing of the release
path (secure when no seed is given; seeded releases on the grid too) and what results
record."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from _stats import ALPHA, chi2_pvalue
from dpreg import ZCDP
from dpreg._validation import check_rng, is_seeded
from dpreg.mechanisms import gaussian, gaussian_sigma, laplace
from dpreg.mechanisms import secure as S
from dpreg.privacy import GDP, gdp_delta
from dpreg.simple import noisy_stats

N = 200_000


def ent(seed):
    """A reproducible byte source (tests only; releases use os.urandom)."""
    return np.random.default_rng(seed).bytes


def lap_pmf(k, scale):
    q = math.exp(-1.0 / scale)
    return (1 - q) / (1 + q) * q ** np.abs(k)


def dg_pmf(k, var):
    w = np.exp(-(k.astype(float) ** 2) / (2 * var))
    support = np.arange(-int(60 * math.sqrt(var)) - 5, int(60 * math.sqrt(var)) + 6)
    return w / np.exp(-(support.astype(float) ** 2) / (2 * var)).sum()


def gof(draws, pmf_fn):
    ks, counts = np.unique(draws, return_counts=True)
    lo, hi = ks.min() - 3, ks.max() + 3
    grid = np.arange(lo, hi + 1)
    full = np.zeros(grid.size)
    full[ks - lo] = counts
    p = pmf_fn(grid)
    p = np.append(p, max(0.0, 1.0 - p.sum()))  # mass outside the observed range
    return chi2_pvalue(np.append(full, 0.0), p)


class TestBernoulli:
    @pytest.mark.parametrize("a,b", [(1, 3), (2, 7), (0, 9), (5, 5), (2**53 + 1, 3 * 2**52 + 7)])
    def test_ratio_frequency(self, a, b):
        x = S.bernoulli_ratio(np.full(N, a), b, entropy=ent(1))
        p = a / b
        assert stats.binomtest(int(x.sum()), N, p).pvalue > ALPHA
        if 0 < p < 1:  # power: a 3% wrong probability is rejected
            assert stats.binomtest(int(x.sum()), N, min(1.0, p * 1.03)).pvalue < ALPHA or p > 0.97

    def test_ratio_is_a_lazy_exact_comparison(self):
        """With the first two bytes fixed, every decided draw equals [U < a/b] for the
        uniform U those bytes start (the rule is exact, not a float approximation)."""
        for b in range(1, 12):
            for a in range(b + 1):
                for w in range(0, 256, 5):
                    for v in (0, 97, 255):
                        src = bytes([w, v] + [0] * 16)
                        pos = {"i": 0}

                        def entropy(k, src=src, pos=pos):
                            out = src[pos["i"]:pos["i"] + k]
                            pos["i"] += k
                            return out

                        got = bool(S.bernoulli_ratio(np.array([a]), b, entropy=entropy)[0])
                        lo = Fraction(w * 256 + v, 65536)
                        hi = lo + Fraction(1, 65536)
                        if hi <= Fraction(a, b):
                            assert got
                        elif lo >= Fraction(a, b):
                            assert not got

    @pytest.mark.parametrize("a,b", [(0, 1), (1, 3), (1, 1), (7, 2), (29, 4)])
    def test_exp_frequency(self, a, b):
        x = S.bernoulli_exp(np.full(N, a), b, entropy=ent(2))
        assert stats.binomtest(int(x.sum()), N, math.exp(-a / b)).pvalue > ALPHA

    def test_python_int_helpers(self):
        bits = S._Bits(ent(3))
        n = 20_000
        hits = sum(S._py_bernoulli_exp(5, 3, bits) for _ in range(n))
        assert stats.binomtest(hits, n, math.exp(-5 / 3)).pvalue > ALPHA
        hits = sum(S._py_bernoulli(2**70, 3 * 2**70, bits) for _ in range(n))
        assert stats.binomtest(hits, n, 1 / 3).pvalue > ALPHA

    def test_bad(self):
        with pytest.raises(Exception, match="0 <= a <= b"):
            S.bernoulli_ratio([3], 2)
        with pytest.raises(Exception, match="a >= 0"):
            S.bernoulli_exp([-1], 2)


class TestDiscreteLaplace:
    @pytest.mark.parametrize("scale", [0.5, 1, 3.7, Fraction(7, 3), 100])
    def test_matches_exact_pmf(self, scale):
        x = S.discrete_laplace(scale, N, entropy=ent(4))
        s = float(Fraction(scale))
        assert gof(x, lambda k: lap_pmf(k, s)) > ALPHA
        assert gof(x, lambda k: lap_pmf(k, 1.1 * s)) < ALPHA  # power

    def test_symmetric_and_integer(self):
        x = S.discrete_laplace(10, N, entropy=ent(5))
        assert x.dtype == np.int64
        assert stats.binomtest(int((x > 0).sum()), int((x != 0).sum()), 0.5).pvalue > ALPHA

    def test_bad_scale(self):
        for bad in (0, -1, float("nan"), "x"):
            with pytest.raises(Exception, match="scale"):
                S.discrete_laplace(bad, 3)


class TestDiscreteGaussian:
    @pytest.mark.parametrize("sigma", [math.sqrt(90.0), 1.0, 1000.0])
    def test_matches_exact_pmf(self, sigma):
        var, t = S.discrete_gaussian_variance(sigma)
        assert var % t == 0 and var >= sigma**2 - 1e-9 and var - sigma**2 < t + 1e-9
        x = S.discrete_gaussian(sigma, N, entropy=ent(6))
        assert gof(x, lambda k: dg_pmf(k, var)) > ALPHA
        assert gof(x, lambda k: dg_pmf(k, 1.2 * var)) < ALPHA  # power

    @pytest.mark.parametrize("var", [1, 2, 7, 90, 1009])
    def test_exact_integer_variance(self, var):
        x = S.discrete_gaussian(None, N, entropy=ent(16), variance=var)
        assert gof(x, lambda k: dg_pmf(k, var)) > ALPHA
        assert gof(x, lambda k: dg_pmf(k, 1.25 * var)) < ALPHA  # power

    def test_variance_parameter(self):
        assert S.discrete_gaussian_variance(3.0, tau=4) == (30, 6)  # 9 + 16 -> multiple of 6
        with pytest.raises(Exception, match="positive integer"):
            S.discrete_gaussian(None, 3, variance=2.5)


class TestOpenDPOracle:
    """The same distributions drawn by OpenDP's exact samplers (two-sample χ²)."""

    @staticmethod
    def two_sample(a, b):
        lo, hi = np.percentile(np.concatenate([a, b]), [0.05, 99.95])
        edges = np.concatenate([[-np.inf], np.arange(math.floor(lo), math.ceil(hi) + 1) + 0.5,
                                [np.inf]])
        ca, _ = np.histogram(a, edges)
        cb, _ = np.histogram(b, edges)
        keep = (ca + cb) > 10
        return stats.chi2_contingency(np.vstack([ca[keep], cb[keep]]))[1]

    @pytest.fixture
    def dp(self):
        dp = pytest.importorskip("opendp.prelude")
        dp.enable_features("contrib")
        return dp

    def test_laplace(self, dp):
        n = 50_000
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)),
                                 dp.l1_distance(T=int), scale=3.0)
        theirs = np.asarray(meas([0] * n))
        ours = S.discrete_laplace(3, n, entropy=ent(7))
        assert self.two_sample(ours, theirs) > ALPHA
        wrong = S.discrete_laplace(3.6, n, entropy=ent(8))
        assert self.two_sample(wrong, theirs) < ALPHA  # power

    def test_gaussian(self, dp):
        n = 50_000
        meas = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)),
                                  dp.l2_distance(T=float), scale=math.sqrt(90.0))
        theirs = np.asarray(meas([0] * n))
        ours = S.discrete_gaussian(None, n, entropy=ent(9), variance=90)
        assert self.two_sample(ours, theirs) > ALPHA
        wrong = S.discrete_gaussian(None, n, entropy=ent(10), variance=120)
        assert self.two_sample(wrong, theirs) < ALPHA  # power


class TestGrid:
    def test_laplace_plan_accounts_for_rounding(self):
        plan = S.laplace_grid(2.0, 0.5, 3)
        g = Fraction(plan.step)
        assert plan.step == 2.0**plan.exponent
        assert plan.grid_sensitivity == Fraction(2.0) / g + 3  # Δ/γ + d
        assert plan.noise >= plan.grid_sensitivity / Fraction(0.5)  # scale >= Δ_g/ε
        assert 2.0 < plan.effective_sensitivity <= 2.0 * (1 + 2**-10)
        assert plan.noise >= 2**14  # grid steps per noise scale

    def test_gaussian_plan(self):
        sigma = gaussian_sigma(1.0, GDP(0.5))
        plan = S.gaussian_grid(1.0, sigma, 4)
        s_grid = sigma / plan.step * plan.effective_sensitivity / 1.0
        assert float(plan.noise) >= s_grid**2 + S.GAUSSIAN_TAU**2
        assert 1.0 < plan.effective_sensitivity <= 1.0 + 2**-10 + 1e-12

    @given(st.floats(-1e12, 1e12), st.floats(-1e12, 1e12), st.integers(-60, 20))
    def test_rounding_moves_at_most_one_step_more(self, a, b, e):
        """|rint(a/γ) − rint(b/γ)| <= |a − b|/γ + 1 (exact arithmetic)."""
        ra = S._to_grid(np.array([a]), e)[0]
        rb = S._to_grid(np.array([b]), e)[0]
        lhs = abs(Fraction(ra) - Fraction(rb))
        assert lhs <= abs(Fraction(a) - Fraction(b)) / Fraction(2) ** e + 1

    def test_outputs_lie_on_the_grid(self):
        v = np.array([0.1, -3.3, 1e6])
        out, plan = S.secure_laplace(v, sensitivity=1.0, epsilon=1.0, entropy=ent(11))
        k = out / plan.step
        assert np.array_equal(k, np.round(k))
        out, plan = S.secure_gaussian(v, sensitivity=1.0, sigma=2.0, entropy=ent(12))
        assert np.array_equal(out / plan.step, np.round(out / plan.step))

    def test_huge_values_stay_finite_and_exactly_rounded(self):
        v = np.array([1.7e308, -1.7e308, 2.0**60 + 1.0])
        out, plan = S.secure_laplace(v, sensitivity=1e-3, epsilon=1.0, entropy=ent(13))
        assert np.all(np.isfinite(out))
        r = np.array([float(x) for x in S._to_grid(v, plan.exponent)])
        k = np.array([3, -5, 7], dtype=np.int64)
        got = S._from_grid(r, k, plan.exponent)
        assert got[2] == math.ldexp(float(int(r[2]) + 7), plan.exponent)

    def test_secure_laplace_distribution(self):
        v = np.full(N, 0.25)
        out, plan = S.secure_laplace(v, sensitivity=1.0, epsilon=2.0, entropy=ent(14), coords=1)
        b = float(plan.noise) * plan.step
        assert 0.5 <= b <= 0.5 * (1 + 2**-9)
        assert stats.kstest(out - 0.25, stats.laplace(scale=b).cdf).pvalue > ALPHA
        assert stats.kstest(out - 0.25, stats.laplace(scale=0.8 * b).cdf).pvalue < ALPHA

    def test_secure_gaussian_distribution(self):
        out, plan = S.secure_gaussian(np.zeros(N), sensitivity=1.0, sigma=3.0, entropy=ent(15),
                                      coords=1)
        sd = math.sqrt(float(plan.noise)) * plan.step
        assert 3.0 <= sd <= 3.0 * (1 + 2**-9)
        assert stats.kstest(out, stats.norm(scale=sd).cdf).pvalue > ALPHA
        assert stats.kstest(out, stats.norm(scale=0.9 * sd).cdf).pvalue < ALPHA

    def test_discrete_gaussian_is_no_less_private_than_the_continuous_one(self):
        """The rounding-kernel argument, checked numerically: with S >= s² + τ², the
        hockey-stick divergence of N_ℤ(0, S) vs N_ℤ(Δ, S) is below the continuous Gaussian
        curve δ_μ(ε), μ = Δ/s, for integer shifts Δ."""
        for s, shift in ((30.0, 30), (12.0, 5), (50.0, 110)):
            var, _ = S.discrete_gaussian_variance(s, tau=S.GAUSSIAN_TAU)
            k = np.arange(-int(40 * math.sqrt(var)), int(40 * math.sqrt(var)) + shift + 1)
            logp = -(k.astype(float) ** 2) / (2 * var)
            logq = -((k - shift).astype(float) ** 2) / (2 * var)
            logz = np.logaddexp.reduce(logp)
            p, q = np.exp(logp - logz), np.exp(logq - logz)
            for eps in np.linspace(0.0, 4.0, 9):
                disc = float(np.maximum(p - math.exp(eps) * q, 0.0).sum())
                assert disc <= gdp_delta(eps, shift / s) + 1e-12


class TestRouting:
    def test_default_is_secure(self):
        assert isinstance(check_rng(None), S.SecureGenerator)
        assert not is_seeded(None) and not is_seeded(check_rng(None)) and is_seeded(3)
        assert S.is_secure(None) and not S.is_secure(np.random.default_rng(0))

    def test_unseeded_laplace_is_on_the_grid(self):
        plan = S.laplace_grid(1.0, 1.0, 1)
        for _ in range(20):
            out = laplace(0.123, sensitivity=1.0, epsilon=1.0)
            assert (out / plan.step) == round(out / plan.step)

    def test_seeded_releases_are_float_safe_too(self):
        """Issue 15 item 7: a seed no longer selects numpy's float noise (it used to equal
        value + default_rng(seed).laplace(...)); the release is on the grid and only the
        explicit SimulationGenerator keeps the float draw (tests/audit/test_seeded_noise.py)."""
        got = laplace(np.array([1.0, 2.0]), sensitivity=2.0, epsilon=0.5, rng=7)
        old = np.array([1.0, 2.0]) + np.random.default_rng(7).laplace(0.0, 4.0, size=2)
        assert not np.array_equal(got, old)
        plan = S.laplace_grid(2.0, 0.5, 2)
        assert np.array_equal(got / plan.step, np.round(got / plan.step))
        budget = ZCDP(0.5)
        got = gaussian(0.5, sensitivity=1.0, budget=budget, rng=8)
        assert got != 0.5 + np.random.default_rng(8).normal(0.0, gaussian_sigma(1.0, budget))
        plan = S.gaussian_grid(1.0, gaussian_sigma(1.0, budget), 1)
        assert got / plan.step == round(got / plan.step)

    def test_infinite_budget_and_zero_sensitivity_add_nothing(self):
        assert laplace(0.3, sensitivity=1.0, epsilon=math.inf) == 0.3
        assert laplace(0.3, sensitivity=0.0, epsilon=1.0) == 0.3
        assert gaussian(0.3, sensitivity=0.0, budget=ZCDP(1.0)) == 0.3

    def test_results_record_the_mode(self):
        x = np.linspace(0, 1, 30)
        y = 0.5 * x + 0.1
        r = noisy_stats(x, y, epsilon=5.0, x_bounds=(0, 1), y_bounds=(0, 1))
        assert r.privacy.randomness == "secure" and r.privacy.as_dict()["randomness"] == "secure"
        r = noisy_stats(x, y, epsilon=5.0, x_bounds=(0, 1), y_bounds=(0, 1), rng=1)
        assert r.privacy.randomness == "seeded"
