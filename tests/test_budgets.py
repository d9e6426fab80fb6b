import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from dpreg import GDP, ZCDP, ApproxDP, InvalidInputError, PureDP, compose
from dpreg.privacy.budgets import (
    Budget,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    zcdp_epsilon,
    zcdp_rho_for_approx,
    zcdp_to_approx_bun_steinke,
    zcdp_to_approx_lemma21,
)

# reference values of the zCDP/GDP conversions, as published (matched to the printed decimals)
REFERENCE_GDP = [
    (1.0, 1e-6, "0.2367"),
    (0.1, 1e-6, "0.0275"),
    (1.0, 1e-5, "0.2681"),
    (math.log(3), 1e-5, "0.2920"),
    (8.0, 1e-6, "1.532"),
]


def hockey_stick_gaussian(eps: float, mu: float) -> float:
    """δ(ε) of N(μ,1) vs N(0,1) by numerical integration (independent of the closed form)."""
    f = lambda x: max(0.0, stats.norm.pdf(x, mu) - math.exp(eps) * stats.norm.pdf(x))  # noqa: E731
    # the integrand is positive only for x > ε/μ + μ/2
    start = eps / mu + mu / 2
    val, _ = integrate.quad(f, start, start + 40, limit=200, epsabs=1e-14, epsrel=1e-10)
    return val


class TestGDPConversion:
    @pytest.mark.parametrize("eps,delta,mu_ref", REFERENCE_GDP)
    def test_reference_values(self, eps, delta, mu_ref):
        mu = gdp_mu(eps, delta)
        decimals = len(mu_ref.split(".")[1])
        assert round(mu, decimals) == pytest.approx(float(mu_ref), abs=1e-12)
        # and to 1e-6 relative on the δ(ε) curve itself
        assert gdp_delta(eps, mu) == pytest.approx(delta, rel=1e-6)

    @pytest.mark.parametrize("eps,delta,_", REFERENCE_GDP)
    def test_rounds_toward_more_noise(self, eps, delta, _):
        mu = gdp_mu(eps, delta)
        assert gdp_delta(eps, mu) <= delta
        assert gdp_delta(eps, mu * (1 + 1e-9)) > delta

    @pytest.mark.parametrize("eps,mu", [(0.0, 0.5), (0.5, 0.3), (1.0, 1.0), (3.0, 2.0), (0.2, 0.05)])
    def test_closed_form_matches_integration(self, eps, mu):
        assert gdp_delta(eps, mu) == pytest.approx(hockey_stick_gaussian(eps, mu), rel=1e-6, abs=1e-13)

    def test_epsilon_inverse(self):
        for mu in (0.05, 0.3, 1.0, 2.5):
            for delta in (1e-8, 1e-5, 1e-2):
                eps = gdp_epsilon(mu, delta)
                assert gdp_delta(eps, mu) <= delta
                if eps > 0:
                    assert gdp_delta(eps * (1 - 1e-9), mu) > delta

    def test_budget_methods(self):
        g = GDP.from_approx(1.0, 1e-6)
        assert g.mu == gdp_mu(1.0, 1e-6)
        a = g.to_approx(1e-6)
        assert a.delta == 1e-6 and a.epsilon == pytest.approx(1.0, rel=1e-9) and a.epsilon >= 0.999999

    def test_large_epsilon_no_overflow(self):
        assert gdp_delta(800.0, 1.0) == 0.0
        assert math.isfinite(gdp_mu(50.0, 1e-6))


class TestZCDPConversion:
    def test_min_of_two(self):
        for rho in (1e-4, 0.01, 0.5, 2.0, 20.0):
            for delta in (1e-9, 1e-6, 1e-3):
                expect = min(zcdp_to_approx_bun_steinke(rho, delta), zcdp_to_approx_lemma21(rho, delta))
                got = zcdp_epsilon(rho, delta)
                assert got >= expect and got == pytest.approx(expect, rel=1e-14)

    def test_bun_steinke_formula(self):
        expected = 0.5 + 2 * math.sqrt(0.5 * math.log(1e6))
        assert zcdp_to_approx_bun_steinke(0.5, 1e-6) == pytest.approx(expected)

    def test_lemma21_beyond_validity_region_uses_largest_valid_delta(self):
        rho = 1e-6
        edge = math.sqrt(math.pi * rho)
        at_cap = zcdp_to_approx_lemma21(rho, 0.5)  # δ > √(πρ): use δ′ just below √(πρ)
        assert at_cap == pytest.approx(rho, rel=1e-2)
        assert at_cap <= zcdp_to_approx_lemma21(rho, edge * 0.5)

    def test_inverse_rounds_to_less_rho(self):
        for eps, delta in [(1.0, 1e-6), (0.1, 1e-5), (5.0, 1e-8)]:
            rho = zcdp_rho_for_approx(eps, delta)
            assert zcdp_epsilon(rho, delta) <= eps
            assert zcdp_epsilon(rho * (1 + 1e-9), delta) > eps
            assert ZCDP.from_approx(eps, delta).rho == rho

    def test_pure_to_zcdp_rounds_up(self):
        for eps in (0.1, 1 / 3, 1.0, 7.3):
            rho = PureDP(eps).to_zcdp().rho
            assert Fraction(rho) >= Fraction(eps) ** 2 / 2
            assert rho == pytest.approx(eps**2 / 2, rel=1e-15)

    def test_gdp_to_zcdp(self):
        assert GDP(0.6).to_zcdp().rho == pytest.approx(0.18, rel=1e-15)


positive = st.floats(min_value=1e-6, max_value=100.0, allow_nan=False)
weights = st.lists(st.floats(min_value=1e-3, max_value=1e3), min_size=1, max_size=40)


def exact_sum(budgets):
    b0 = budgets[0]
    if isinstance(b0, PureDP):
        return sum(Fraction(b.epsilon) for b in budgets)
    if isinstance(b0, ZCDP):
        return sum(Fraction(b.rho) for b in budgets)
    if isinstance(b0, GDP):
        return sum(Fraction(b.mu) ** 2 for b in budgets)
    raise AssertionError


class TestSplitProperties:
    @given(total=positive, w=weights)
    @settings(max_examples=300, deadline=None)
    def test_pure_split_never_exceeds(self, total, w):
        parts = PureDP(total).split(w)
        assert len(parts) == len(w)
        assert exact_sum(parts) <= Fraction(total)
        assert compose(parts) <= PureDP(total)

    @given(total=positive, w=weights)
    @settings(max_examples=300, deadline=None)
    def test_zcdp_split_never_exceeds(self, total, w):
        parts = ZCDP(total).split(w)
        assert exact_sum(parts) <= Fraction(total)
        assert compose(parts).rho <= total

    @given(total=positive, w=weights)
    @settings(max_examples=300, deadline=None)
    def test_gdp_split_never_exceeds(self, total, w):
        parts = GDP(total).split(w)
        assert exact_sum(parts) <= Fraction(total) ** 2
        assert compose(parts).mu <= total

    @given(eps=positive, delta=st.floats(min_value=0, max_value=0.5), w=weights)
    @settings(max_examples=200, deadline=None)
    def test_approx_split_never_exceeds(self, eps, delta, w):
        parts = ApproxDP(eps, delta).split(w)
        assert sum(Fraction(p.epsilon) for p in parts) <= Fraction(eps)
        assert sum(Fraction(p.delta) for p in parts) <= Fraction(delta)
        c = compose(parts)
        assert c.epsilon <= eps and c.delta <= delta

    @given(total=positive, n=st.integers(min_value=1, max_value=3000))
    @settings(max_examples=60, deadline=None)
    def test_n_times_b_over_n(self, total, n):
        for budget in (PureDP(total), ZCDP(total), GDP(total)):
            parts = budget.split([1.0] * n)
            assert compose(parts) <= budget

    def test_split_proportions(self):
        a, b, c = GDP(1.0).split([1, 4, 4])
        assert (a.mu, b.mu, c.mu) == pytest.approx((1 / 3, 2 / 3, 2 / 3))
        p = PureDP(1.0).split([1, 3])
        assert [x.epsilon for x in p] == pytest.approx([0.25, 0.75])
        d = ApproxDP(1.0, 1e-6).split([1, 1], delta_weights=[0, 1])
        assert d[0].delta == 0 and d[1].delta == pytest.approx(1e-6)

    @pytest.mark.parametrize("bad", [[], [0.0], [-1], [math.nan], [math.inf]])
    def test_bad_weights(self, bad):
        with pytest.raises(InvalidInputError, match="weights"):
            PureDP(1.0).split(bad)


class TestMonotone:
    @given(e1=st.floats(0.01, 20), e2=st.floats(0.01, 20),
           d=st.floats(1e-10, 1e-2))
    @settings(max_examples=100, deadline=None)
    def test_gdp_mu_increasing_in_epsilon(self, e1, e2, d):
        lo, hi = sorted((e1, e2))
        # monotone up to the root finder's last-ulp accuracy
        assert gdp_mu(lo, d) <= gdp_mu(hi, d) * (1 + 1e-12)

    @given(r1=st.floats(1e-6, 50), r2=st.floats(1e-6, 50), d=st.floats(1e-10, 1e-2))
    @settings(max_examples=200, deadline=None)
    def test_zcdp_epsilon_increasing_in_rho(self, r1, r2, d):
        lo, hi = sorted((r1, r2))
        assert zcdp_epsilon(lo, d) <= zcdp_epsilon(hi, d)

    @given(m1=st.floats(0.01, 5), m2=st.floats(0.01, 5), d=st.floats(1e-10, 1e-2))
    @settings(max_examples=100, deadline=None)
    def test_gdp_epsilon_increasing_in_mu(self, m1, m2, d):
        lo, hi = sorted((m1, m2))
        # monotone up to the root finder's last-ulp accuracy (plus an absolute floor near ε = 0)
        assert gdp_epsilon(lo, d) <= gdp_epsilon(hi, d) * (1 + 1e-12) + 1e-15

    @given(rho=st.floats(1e-6, 50), d1=st.floats(1e-12, 0.5), d2=st.floats(1e-12, 0.5))
    @settings(max_examples=100, deadline=None)
    def test_zcdp_epsilon_decreasing_in_delta(self, rho, d1, d2):
        lo, hi = sorted((d1, d2))
        assert zcdp_epsilon(rho, hi) <= zcdp_epsilon(rho, lo)


class TestBudgetTypes:
    def test_frozen(self):
        with pytest.raises(AttributeError):
            PureDP(1.0).epsilon = 2.0  # type: ignore[misc]

    @pytest.mark.parametrize("ctor", [lambda: PureDP(-1), lambda: PureDP(math.nan),
                                      lambda: ApproxDP(1, 1.0), lambda: ApproxDP(1, -1e-9),
                                      lambda: ZCDP(-0.1), lambda: GDP("1")])
    def test_invalid(self, ctor):
        with pytest.raises(InvalidInputError):
            ctor()

    def test_compose_mixed_types_rejected(self):
        with pytest.raises(InvalidInputError, match="same definition"):
            PureDP(1) + ZCDP(1)  # type: ignore[operator]

    def test_compose_values(self):
        assert (PureDP(0.5) + PureDP(0.25)).epsilon == 0.75
        assert (ZCDP(0.5) + ZCDP(0.25)).rho == 0.75
        assert (GDP(0.3) + GDP(0.4)).mu == pytest.approx(0.5)
        assert (GDP(0.3) + GDP(0.4)).mu >= 0.5
        c = ApproxDP(1, 1e-6) + ApproxDP(0.5, 1e-7)
        assert (c.epsilon, c.delta) == (1.5, pytest.approx(1.1e-6))
        with pytest.raises(InvalidInputError, match="delta"):
            ApproxDP(1, 0.6) + ApproxDP(1, 0.6)

    def test_roundtrip_dict(self):
        for b in (PureDP(1.0), ApproxDP(1.0, 1e-6), ZCDP(0.2), GDP(0.7)):
            assert Budget.from_dict(b.as_dict()) == b

    def test_infinite(self):
        assert PureDP(math.inf).is_infinite
        assert PureDP(math.inf).to_zcdp().is_infinite
        assert compose([PureDP(1), PureDP(math.inf)]).is_infinite

    def test_no_global_state_in_split(self):
        np.testing.assert_equal([p.epsilon for p in PureDP(3.0).split([1, 1, 1])],
                                [p.epsilon for p in PureDP(3.0).split([1, 1, 1])])


def _balle_wang_delta(sigma: float, eps: float, sens: float) -> float:
    """The analytic Gaussian condition of Balle & Wang 2018 (Thm. 8), written out here
    independently of :func:`gdp_delta`: Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ), in log space."""
    from scipy import special

    a = sens / (2 * sigma) - eps * sigma / sens
    b = -sens / (2 * sigma) - eps * sigma / sens
    la, lb = special.log_ndtr(a), special.log_ndtr(b)
    return float(np.exp(la) * -np.expm1(min(eps + lb - la, 0.0)))


class TestNoiseVanishesAsEpsilonGrows:
    """σ(ε) of the analytic calibration is strictly decreasing and tends to 0 (issue 21: the
    root bracket capped μ at 50, so σ stopped at 0.02·Δ from ε ≈ 2,500 on)."""

    @pytest.mark.parametrize("delta", [1e-6, 2.0**-16])
    def test_sigma_strictly_decreasing_and_tight_up_to_the_cap(self, delta):
        from dpreg.mechanisms.gaussian import gaussian_sigma
        from dpreg.privacy import EPSILON_MAX

        sens = 6.0
        grid = np.logspace(-1, math.log10(EPSILON_MAX), 41)
        sig = np.array([gaussian_sigma(sens, ApproxDP(float(e), delta)) for e in grid])
        assert np.all(np.diff(sig) < 0) and sig[-1] > 0
        for e, s in zip(grid, sig):
            assert _balle_wang_delta(s, e, sens) <= delta  # (ε, δ)-DP
            assert _balle_wang_delta(s * (1 - 1e-6), e, sens) > delta  # and no more noise
        # above the cap the budget is infinite (NOT PRIVATE): no noise, as for ε = inf
        above = EPSILON_MAX * (1 + 1e-8)
        assert ApproxDP(above, delta).is_infinite
        assert gaussian_sigma(sens, ApproxDP(above, delta)) == 0.0
        # within the budgets' rounding slack of the cap a budget stays finite (private), and so
        # must its noise: a finite μ, never a vanished σ (gdp_mu follows the budgets' rule)
        edge = math.nextafter(EPSILON_MAX, math.inf)
        assert not ApproxDP(edge, delta).is_infinite
        assert 0.5 * sig[-1] < gaussian_sigma(sens, ApproxDP(edge, delta)) <= sig[-1]

    @pytest.mark.parametrize("delta", [1e-6, 2.0**-16])
    def test_mu_root_is_tight_and_unbounded_up_to_1e12(self, delta):
        # the root finding itself (behind gdp_mu, which stops at the cap) has no cap on μ: at
        # large ε, Φ(μ/2 − ε/μ) = δ up to the second term (about |z|/μ of the first, a shift of
        # μ by < 1e-4 relative for ε >= 1e4), i.e. μ ≈ z + √(z² + 2ε) with z = Φ⁻¹(δ)
        from dpreg.privacy.budgets import _gdp_mu_root

        sens = 6.0
        grid = np.logspace(-1, 12, 53)
        mus = np.array([_gdp_mu_root(float(e), delta) for e in grid])
        assert np.all(np.diff(mus) > 0)
        for e, mu in zip(grid, mus):  # tight (the reference's own float error at ε ~ 1e9)
            assert _balle_wang_delta(sens / mu, e, sens) <= delta * (1 + 1e-9)
            assert _balle_wang_delta(sens / mu * (1 - 1e-6), e, sens) > delta
        z = stats.norm.ppf(delta)
        big = grid >= 1e4
        np.testing.assert_allclose(mus[big], z + np.sqrt(z**2 + 2 * grid[big]), rtol=1e-4)
        assert sens / mus[-1] < 1e-5 * sens

    def test_gdp_mu_grows_up_to_the_cap_then_is_infinite(self):
        from dpreg.privacy import EPSILON_MAX
        from dpreg.privacy.budgets import _gdp_mu_root

        mus = [gdp_mu(e, 1e-6) for e in (1.0, 10.0, 50.0, EPSILON_MAX)]
        assert all(a < b for a, b in zip(mus, mus[1:])) and math.isfinite(mus[-1])
        roots = [_gdp_mu_root(e, 1e-6) for e in (1e3, 1e4, 1e8, 1e12)]
        assert all(a < b for a, b in zip(roots, roots[1:])) and roots[-1] > 1e6
        assert gdp_mu(math.inf, 1e-6) == math.inf
        # the budgets' cap rule: within its rounding slack a budget is finite, so is μ
        assert math.isfinite(gdp_mu(math.nextafter(EPSILON_MAX, math.inf), 1e-6))
        assert gdp_mu(EPSILON_MAX * (1 + 1e-8), 1e-6) == math.inf

    def test_gdp_delta_keeps_the_second_term_at_large_epsilon(self):
        # at ε = 2000, μ = 60: Φ(a) and e^ε Φ(b) are both far from 0 in log space; dropping the
        # second term (as for ε >= 700 before) overstated δ
        eps, mu = 2000.0, 63.3
        assert gdp_delta(eps, mu) == pytest.approx(_balle_wang_delta(1.0 / mu, eps, 1.0),
                                                   rel=1e-9)
