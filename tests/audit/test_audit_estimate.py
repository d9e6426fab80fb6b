"""The ε lower-confidence-bound estimator: Clopper–Pearson bounds, event selection, validity
(a correct mechanism fails at most at rate α) and power (wrong claims are rejected)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from dpreg.audit import (
    AuditResult,
    Claim,
    audit,
    audit_samples,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lcb,
)
from dpreg.exceptions import InvalidInputError
from dpreg.privacy import GDP, ZCDP, ApproxDP, PureDP, gdp_delta


class TestClopperPearson:
    @pytest.mark.parametrize("n", [1, 7, 50, 1000])
    @pytest.mark.parametrize("alpha", [0.05, 1e-6])
    def test_defining_tail_equations(self, n, alpha):
        for k in sorted({0, 1, n // 3, n - 1, n}):
            lo = float(clopper_pearson_lower(k, n, alpha))
            hi = float(clopper_pearson_upper(k, n, alpha))
            if k == 0:
                assert lo == 0.0
            else:  # P(Bin(n, lo) >= k) = alpha
                assert stats.binom.sf(k - 1, n, lo) == pytest.approx(alpha, rel=1e-6)
            if k == n:
                assert hi == 1.0
            else:  # P(Bin(n, hi) <= k) = alpha
                assert stats.binom.cdf(k, n, hi) == pytest.approx(alpha, rel=1e-6)
            assert lo <= k / n <= hi

    @pytest.mark.parametrize("p", [0.01, 0.3, 0.9])
    def test_exact_coverage(self, p):
        """P(lower bound > p) <= α, computed exactly over the binomial distribution."""
        n, alpha = 80, 0.05
        ks = np.arange(n + 1)
        pmf = stats.binom.pmf(ks, n, p)
        miss_lo = pmf[clopper_pearson_lower(ks, n, alpha) > p].sum()
        miss_hi = pmf[clopper_pearson_upper(ks, n, alpha) < p].sum()
        assert miss_lo <= alpha and miss_hi <= alpha
        assert miss_lo > alpha / 5  # not absurdly conservative (power)


class TestEpsilonLcb:
    def test_zero_without_evidence(self):
        assert float(epsilon_lcb(50, 50, 100, 100, 0.05)) == 0.0
        assert float(epsilon_lcb(0, 0, 100, 100, 0.05)) == 0.0

    def test_monotone_and_delta(self):
        base = float(epsilon_lcb(600, 200, 1000, 1000, 1e-3))
        assert base > 0.5
        assert float(epsilon_lcb(650, 200, 1000, 1000, 1e-3)) > base
        assert float(epsilon_lcb(600, 150, 1000, 1000, 1e-3)) > base
        assert float(epsilon_lcb(600, 200, 1000, 1000, 1e-3, delta=0.1)) < base
        assert base < math.log(3)  # below the point estimate


def laplace_pair(n, rng, eps=1.0, shift=1.0):
    scale = 1.0 / eps
    return rng.laplace(0.0, scale, n), rng.laplace(shift, scale, n)


class TestAuditSamples:
    def test_exact_laplace_passes_and_is_tight(self):
        g = np.random.default_rng(1)
        a, b = laplace_pair(100_000, g)
        r = audit_samples(a, b, claim=1.0, rng=2)
        assert r.passed and 0.85 < r.epsilon_lcb <= 1.0
        assert r.samples == 100_000 and r.alpha == 1e-6

    def test_power_rejects_a_smaller_claim(self):
        g = np.random.default_rng(3)
        a, b = laplace_pair(40_000, g)
        r = audit_samples(a, b, claim=0.6, rng=4)
        assert not r.passed and r.verdict == "FAIL" and r.epsilon_lcb > 0.6

    def test_false_failure_rate_is_at_most_alpha(self):
        """200 audits of an exactly 1-DP mechanism at its worst case, α = 0.1, N = 400: the
        number of FAILs is within the binomial(200, 0.1) upper tail at 1e-6."""
        g = np.random.default_rng(5)
        fails = 0
        for i in range(200):
            a, b = laplace_pair(400, g)
            fails += not audit_samples(a, b, claim=1.0, alpha=0.1, rng=i).passed
        assert fails <= stats.binom.ppf(1 - 1e-6, 200, 0.1)

    def test_bottom_event(self):
        g = np.random.default_rng(6)
        a = np.where(g.uniform(size=(20_000, 1)) < 0.5, np.nan, g.normal(size=(20_000, 1)))
        b = np.where(g.uniform(size=(20_000, 1)) < 0.05, np.nan, g.normal(size=(20_000, 1)))
        r = audit_samples(a, b, claim=1.0, rng=7)
        assert not r.passed and "⊥" in r.event
        assert r.epsilon_lcb > 1.9  # ln(0.5/0.05) = 2.3

    def test_joint_loss_over_columns(self):
        """Two independent 0.7-DP coordinates compose to 1.4 > 1: only a joint event shows it."""
        g = np.random.default_rng(8)
        n = 100_000
        a = g.laplace(0.0, 1 / 0.7, (n, 2))
        b = g.laplace(1.0, 1 / 0.7, (n, 2))
        r = audit_samples(a, b, claim=1.0, rng=9)
        assert not r.passed

    def test_approx_claim_uses_hockey_stick(self):
        g = np.random.default_rng(10)
        mu = 1.0
        a, b = g.normal(0, 1, 100_000), g.normal(mu, 1, 100_000)
        eps = 1.0
        ok = audit_samples(a, b, claim=Claim(eps, gdp_delta(eps, mu)), rng=11)
        assert ok.passed and ok.hockey_stick_lcb <= gdp_delta(eps, mu)
        bad = audit_samples(a, b, claim=Claim(eps, gdp_delta(eps, 0.6)), rng=11)
        assert not bad.passed and bad.hockey_stick_lcb > gdp_delta(eps, 0.6)

    def test_constant_outputs(self):
        r = audit_samples(np.zeros(100), np.zeros(100), claim=1.0, rng=0)
        assert r.passed and r.epsilon_lcb == 0.0

    def test_result_is_serialisable(self):
        g = np.random.default_rng(12)
        r = audit_samples(*laplace_pair(2000, g), claim=PureDP(1.0), rng=1, method="m", pair="p")
        d = r.as_dict()
        json.dumps(d)
        assert d["method"] == "m" and d["verdict"] in ("PASS", "FAIL")
        assert isinstance(r, AuditResult) and r.ratio == r.epsilon_lcb

    @pytest.mark.parametrize("kw, match", [
        ({"claim": 0.0}, "epsilon"), ({"claim": "x"}, "epsilon"),
        ({"claim": 1.0, "alpha": 0.0}, "alpha"), ({"claim": 1.0, "delta": 1.0}, "delta"),
    ])
    def test_bad_arguments(self, kw, match):
        with pytest.raises(InvalidInputError, match=match):
            audit_samples(np.zeros(50), np.ones(50), **kw)

    def test_shape_checks(self):
        with pytest.raises(InvalidInputError, match="columns"):
            audit_samples(np.zeros((50, 2)), np.zeros((50, 3)), claim=1.0)
        with pytest.raises(InvalidInputError, match="at least 8"):
            audit_samples(np.zeros(5), np.zeros(5), claim=1.0)
        with pytest.raises(InvalidInputError, match="1-D or 2-D"):
            audit_samples(np.zeros((4, 4, 4)), np.zeros((4, 4, 4)), claim=1.0)


class TestClaims:
    def test_from_budget(self):
        assert Claim.from_budget(PureDP(2.0)) == Claim(2.0, 0.0, "ε=2")
        assert Claim.from_budget(ApproxDP(1.0, 1e-5)).delta == 1e-5
        g = Claim.from_budget(GDP(1.0))
        assert g.delta == 0.01 and gdp_delta(g.epsilon, 1.0) <= 0.01 + 1e-12
        z = Claim.from_budget(ZCDP(0.5))
        assert z.delta == 0.01 and z.epsilon > 0.5
        assert "GDP" in str(g) and "zCDP" in str(z)


def test_audit_with_a_sampler_is_reproducible():
    def sampler(data, n, rng):
        return rng.laplace(data, 1.0, n)

    r1 = audit(sampler, 0.0, 1.0, claim=1.0, samples=5000, rng=3, method="lap")
    r2 = audit(sampler, 0.0, 1.0, claim=1.0, samples=5000, rng=3, method="lap")
    assert r1.epsilon_lcb == r2.epsilon_lcb and r1.passed and r1.seconds >= 0


def _correlated(shift, n, seed):
    cov = np.array([[1.0, 0.99], [0.99, 1.0]])
    g = np.random.default_rng(seed)
    return g.multivariate_normal([0.0, 0.0], cov, n), g.multivariate_normal(shift, cov, n), cov


def test_discriminant_events_see_a_shift_across_correlated_outputs():
    # a shift of 0.2 in one of two outputs with correlation 0.99: each coordinate alone shows
    # μ = 0.2, but the pair is μ = Mahalanobis distance ≈ 1.42 apart -- Fisher's discriminant
    # (pooled covariance) is the optimal event; the per-coordinate events cannot find it
    a, b, cov = _correlated([0.2, 0.0], 20_000, 3)
    shift = np.array([0.2, 0.0])
    mu = float(np.sqrt(shift @ np.linalg.solve(cov, shift)))
    res = audit_samples(a, b, claim=GDP(mu * 1.02), alpha=1e-6, rng=0)
    assert res.passed
    assert res.event.startswith(("discriminant", "Gaussian likelihood-ratio"))
    assert res.epsilon_lcb > 0.5 * res.claim.epsilon
    # the claim a coordinate-wise view would suggest (μ = 0.2) is rejected
    assert not audit_samples(a, b, claim=GDP(0.25), alpha=1e-6, rng=0).passed


def test_gaussian_likelihood_ratio_sees_a_change_of_correlation():
    # same marginals, correlation 0 vs 0.9: every coordinate-wise event (thresholds, naive-Bayes
    # histograms) is blind, and the means are equal; the quadratic score is not
    g = np.random.default_rng(4)
    a = g.normal(0.0, 1.0, (20_000, 2))
    b = g.multivariate_normal([0.0, 0.0], [[1.0, 0.9], [0.9, 1.0]], 20_000)
    res = audit_samples(a, b, claim=0.1, alpha=1e-6, rng=0)
    assert not res.passed
    assert res.event.startswith("Gaussian likelihood-ratio")
    assert res.epsilon_lcb > 3.0  # without it, the best event (a noisy projection) shows ≈ 0.9
