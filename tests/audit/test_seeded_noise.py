"""Seeded releases are float-safe (issue 15 item 7): with a seed or a numpy Generator, Laplace
and Gaussian noise goes through the exact discrete samplers on the public grid, with bits from a
SHAKE256 stream keyed by the generator -- reproducible, on the grid, with the discrete
distributions (exact pmfs and OpenDP as oracles, with power checks), and the generator's state
after a call does not depend on the value.  Float numpy noise stays behind the explicit
:class:`~dpreg._random.SimulationGenerator` opt-in.  Mironov's reachability event, which caught
the float seeded release (ε_LCB ≈ 7 at ε = 1), passes now."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from scipy import stats

from _stats import ALPHA, chi2_pvalue
from dpreg import ZCDP
from dpreg._random import (
    SecureGenerator,
    SimulationGenerator,
    check_rng,
    is_seeded,
    is_simulation,
    noise_key,
    noise_keys,
    randomness_mode,
    simulation_generator,
)
from dpreg.audit import audit_samples, audit_target
from dpreg.audit.reachability import float_laplace_reachable, reachability_event
from dpreg.mechanisms import gaussian, gaussian_sigma, laplace
from dpreg.mechanisms import secure as S
from dpreg.privacy import GDP


def lap_pmf(k, scale):
    q = math.exp(-1.0 / scale)
    return (1 - q) / (1 + q) * q ** np.abs(k)


def gof(draws, pmf_fn):
    ks, counts = np.unique(draws, return_counts=True)
    lo, hi = ks.min() - 3, ks.max() + 3
    grid = np.arange(lo, hi + 1)
    full = np.zeros(grid.size)
    full[ks - lo] = counts
    p = pmf_fn(grid)
    p = np.append(p, max(0.0, 1.0 - p.sum()))
    return chi2_pvalue(np.append(full, 0.0), p)


def lap_cdf(k, scale):
    """P(K <= k) of the discrete Laplace P(k) ∝ exp(−|k|/scale)."""
    q = math.exp(-1.0 / scale)
    k = np.asarray(k, dtype=float)
    return np.where(k >= 0, 1.0 - q ** (k + 1) / (1 + q), q ** (-k) / (1 + q))


def binned_gof(draws, scale, bins=60):
    """χ² of the draws in ~equiprobable integer bins against the exact discrete Laplace."""
    edges = np.unique(np.round(np.quantile(draws, np.linspace(0, 1, bins + 1)[1:-1])))
    idx = np.searchsorted(edges, draws, side="left")  # bin j: (edges[j-1], edges[j]]
    counts = np.bincount(idx, minlength=edges.size + 1)
    cdf = np.concatenate([[0.0], lap_cdf(edges, scale), [1.0]])
    return chi2_pvalue(counts, np.diff(cdf))


def grid_units(out, value, plan):
    k = (np.asarray(out) - value) / plan.step
    assert np.array_equal(k, np.round(k))
    return np.round(k).astype(np.int64)


# ----------------------------------------------------------------------------- the release path
class TestSeededRelease:
    def test_same_seed_gives_bit_identical_releases(self):
        v = np.array([0.25, -3.0, 1e6])
        a = laplace(v, sensitivity=2.0, epsilon=0.5, rng=7)
        b = laplace(v, sensitivity=2.0, epsilon=0.5, rng=np.random.default_rng(7))
        assert np.array_equal(a, b)
        assert not np.array_equal(a, laplace(v, sensitivity=2.0, epsilon=0.5, rng=8))
        g1 = gaussian(v, sensitivity=1.0, budget=ZCDP(0.5), rng=np.random.SeedSequence(3))
        g2 = gaussian(v, sensitivity=1.0, budget=ZCDP(0.5), rng=np.random.SeedSequence(3))
        assert np.array_equal(g1, g2)

    def test_seeded_outputs_lie_on_the_public_grid(self):
        """Fails with floating-point noise: value + b·ln(U) is (almost) never a multiple of the
        grid step."""
        lp = S.laplace_grid(1.0, 1.0, 1)
        gp = S.gaussian_grid(1.0, gaussian_sigma(1.0, GDP(1.0)), 1)
        for seed in range(40):
            out = laplace(0.123, sensitivity=1.0, epsilon=1.0, rng=seed)
            assert out / lp.step == round(out / lp.step)
            out = gaussian(0.123, sensitivity=1.0, budget=GDP(1.0), rng=seed)
            assert out / gp.step == round(out / gp.step)

    def test_generator_state_does_not_depend_on_the_value(self):
        """Every seeded call takes the same 32 bytes (4 raw words) from the generator, whatever
        the value and however many bits the rejection samplers read."""
        values = [0.0, 1.0, -7.5, 1e300, 2.0**60 + 1.0]
        for mech in ("laplace", "gaussian"):
            states = []
            for v in values:
                g = np.random.default_rng(11)
                for _ in range(5):
                    if mech == "laplace":
                        laplace(v, sensitivity=1.0, epsilon=0.3, rng=g)
                    else:
                        gaussian(v, sensitivity=1.0, budget=ZCDP(0.1), rng=g)
                states.append(g.bit_generator.state["state"]["state"])
            assert len(set(states)) == 1
            ref = np.random.default_rng(11)
            ref.bit_generator.advance(5 * 4)
            assert ref.bit_generator.state["state"]["state"] == states[0]

    def test_keys_are_raw_words_of_the_generator(self):
        g = np.random.default_rng(5)
        keys = noise_keys(g, 3)
        h = np.random.default_rng(5)
        assert keys == [noise_key(h) for _ in range(3)]
        raw = np.random.default_rng(5).bit_generator.random_raw(12)
        assert b"".join(keys) == raw.astype("<u8").tobytes()

    def test_a_seeded_release_is_its_stream_definition(self):
        """laplace(v, rng=g): key = 4 raw words of g; coordinate i reads its head block of
        SHAKE256(head ‖ key ‖ le64(page)) and then SHAKE256(tail ‖ key ‖ le64(i))."""
        v = np.array([0.5, 2.0, -1.0])
        out = laplace(v, sensitivity=1.0, epsilon=1.0, rng=21)
        key = noise_key(np.random.default_rng(21))
        plan = S.laplace_grid(1.0, 1.0, 3)
        streams = S.SeededStreams([key], 3, S.LAPLACE_BLOCK)
        k = S.discrete_laplace(plan.noise, 3, entropy=streams)
        assert np.array_equal(out, S._from_grid(S._to_grid(v, plan.exponent), k, plan.exponent))
        # the bytes of lane 1: head block then the lane's own extendable output
        s2 = S.SeededStreams([key], 3, S.LAPLACE_BLOCK)
        head = hashlib.shake_256(b"dpreg/seeded-noise/v1/head" + key + (0).to_bytes(8, "little")
                                 ).digest(3 * S.LAPLACE_BLOCK)
        tail = hashlib.shake_256(b"dpreg/seeded-noise/v1/tail" + key + (1).to_bytes(8, "little")
                                 ).digest(40)
        want = head[S.LAPLACE_BLOCK:2 * S.LAPLACE_BLOCK] + tail
        got = b"".join(bytes(s2.u8(np.array([1]))) for _ in range(len(want)))
        assert got == want
        s3 = S.SeededStreams([key], 3, S.LAPLACE_BLOCK)
        words = [int(s3.u64(np.array([1]))[0]) for _ in range(len(want) // 8)]
        assert words == [int.from_bytes(want[8 * i:8 * i + 8], "little")
                         for i in range(len(want) // 8)]

    def test_pages_and_chunks_do_not_change_a_lane(self, monkeypatch):
        key = b"\x07" * 32
        n = 3 * S.PAGE_LANES + 5
        a = S.discrete_laplace(37.5, n, entropy=S.SeededStreams([key], n, S.LAPLACE_BLOCK))
        part = S.discrete_laplace(37.5, 9, entropy=S.SeededStreams(
            [key], 9, S.LAPLACE_BLOCK, coord_offset=2 * S.PAGE_LANES - 4))
        assert np.array_equal(part, a[2 * S.PAGE_LANES - 4:2 * S.PAGE_LANES + 5])
        v = np.zeros(n)
        full, _ = S.secure_laplace(v, sensitivity=1.0, epsilon=1.0, key=key)
        monkeypatch.setattr(S, "_CHUNK_LANES", 1000)
        chunked, _ = S.secure_laplace(v, sensitivity=1.0, epsilon=1.0, key=key)
        assert np.array_equal(full, chunked)

    def test_simulation_generator_keeps_float_noise(self):
        """The explicit opt-in for simulations: numpy's float draws, the same numbers as the
        ordinary generator gave before seeded releases became float-safe."""
        got = laplace(np.array([1.0, 2.0]), sensitivity=2.0, epsilon=0.5,
                      rng=simulation_generator(7))
        want = np.array([1.0, 2.0]) + np.random.default_rng(7).laplace(0.0, 4.0, size=2)
        assert np.array_equal(got, want)
        budget = ZCDP(0.5)
        got = gaussian(0.5, sensitivity=1.0, budget=budget, rng=simulation_generator(8))
        want = 0.5 + np.random.default_rng(8).normal(0.0, gaussian_sigma(1.0, budget))
        assert got == want
        sim = simulation_generator(np.random.SeedSequence(4))
        assert is_simulation(sim) and all(isinstance(c, SimulationGenerator) for c in sim.spawn(2))
        assert check_rng(sim) is sim and is_seeded(sim)

    def test_modes(self):
        assert randomness_mode(None) == "secure" and isinstance(check_rng(None), SecureGenerator)
        assert randomness_mode(3) == "seeded" and randomness_mode(np.random.default_rng(1)) == \
            "seeded"
        assert randomness_mode(simulation_generator(1)) == "simulation"
        # the old import paths keep working
        from dpreg._validation import check_rng as c2
        from dpreg._validation import is_seeded as i2
        from dpreg.mechanisms.secure import SecureGenerator as SG
        from dpreg.mechanisms.secure import is_secure, secure_generator

        assert c2 is check_rng and i2 is is_seeded and SG is SecureGenerator
        assert is_secure(secure_generator()) and not is_secure(simulation_generator(0))


# ----------------------------------------------------------------------------- distributions
N = 100_000


class TestSeededDistributions:
    def test_one_call_many_lanes_matches_the_discrete_laplace(self):
        streams = S.SeededStreams([b"a" * 32], N, S.LAPLACE_BLOCK)
        x = S.discrete_laplace(3.7, N, entropy=streams)
        assert gof(x, lambda k: lap_pmf(k, 3.7)) > ALPHA
        assert gof(x, lambda k: lap_pmf(k, 1.1 * 3.7)) < ALPHA  # power

    def test_many_seeded_calls_match_the_discrete_laplace(self):
        """N separate seeded releases (one key each, drawn from the generator as N calls of
        laplace(v, rng=g) would): the integer noise has the discrete Laplace law of the plan."""
        g = np.random.default_rng(12)
        keys = noise_keys(g, N)
        v = np.full(N, 0.3)
        out = S.laplace_batch(v, sensitivity=1.0, epsilon=4.0, keys=keys)
        plan = S.laplace_grid(1.0, 4.0, 1)
        k = grid_units(out, S._to_grid(np.array([0.3]), plan.exponent)[0] * plan.step, plan)
        scale = float(plan.noise)
        assert binned_gof(k, scale) > ALPHA
        assert binned_gof(k, 1.05 * scale) < ALPHA  # power

    def test_seeded_gaussian_matches_the_discrete_gaussian(self):
        var = 90
        streams = S.SeededStreams([b"g" * 32], N, S.GAUSSIAN_BLOCK)
        x = S.discrete_gaussian(None, N, entropy=streams, variance=var)
        support = np.arange(-600, 601)

        def pmf(k, v):
            w = np.exp(-(k.astype(float) ** 2) / (2 * v))
            return w / np.exp(-(support.astype(float) ** 2) / (2 * v)).sum()

        assert gof(x, lambda k: pmf(k, var)) > ALPHA
        assert gof(x, lambda k: pmf(k, 1.2 * var)) < ALPHA  # power

    def test_opendp_oracle(self):
        dp = pytest.importorskip("opendp.prelude")
        dp.enable_features("contrib")
        n = 50_000
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)),
                                 dp.l1_distance(T=int), scale=3.0)
        theirs = np.asarray(meas([0] * n))
        ours = S.discrete_laplace(3, n, entropy=S.SeededStreams([b"o" * 32], n, S.LAPLACE_BLOCK))
        wrong = S.discrete_laplace(3.6, n, entropy=S.SeededStreams([b"w" * 32], n,
                                                                   S.LAPLACE_BLOCK))

        def two_sample(a, b):
            edges = np.concatenate([[-np.inf], np.arange(-40, 41) + 0.5, [np.inf]])
            ca, _ = np.histogram(a, edges)
            cb, _ = np.histogram(b, edges)
            keep = (ca + cb) > 10
            return stats.chi2_contingency(np.vstack([ca[keep], cb[keep]]))[1]

        assert two_sample(ours, theirs) > ALPHA
        assert two_sample(wrong, theirs) < ALPHA  # power


# ----------------------------------------------------------------------------- lanes
class TestLanes:
    def test_batch_equals_the_calls_one_by_one(self):
        g = np.random.default_rng(3)
        m = 400
        vals = g.normal(size=(m, 2)) * 5
        sens = g.uniform(0.01, 3.0, m)
        h = np.random.default_rng(99)
        one = np.array([laplace(vals[j], sensitivity=sens[j], epsilon=0.7, rng=h)
                        for j in range(m)])
        keys = noise_keys(np.random.default_rng(99), m)
        assert np.array_equal(S.laplace_batch(vals, sensitivity=sens, epsilon=0.7, keys=keys),
                              one)
        h = np.random.default_rng(98)
        one = np.array([gaussian(vals[j], sensitivity=1.0, budget=ZCDP(0.2), rng=h)
                        for j in range(m)])
        sigma = gaussian_sigma(1.0, ZCDP(0.2))
        keys = noise_keys(np.random.default_rng(98), m)
        assert np.array_equal(S.gaussian_batch(vals, sensitivity=1.0, sigma=sigma, keys=keys),
                              one)

    def test_prepared_calls_equal_successive_calls(self):
        """laplace_calls/gaussian_calls (DP-GD's T rounds, noise drawn at the first call) give
        the releases of T successive laplace/gaussian calls, and leave the generator where
        they leave it."""
        from dpreg.mechanisms import gaussian_calls, laplace_calls

        vals = np.random.default_rng(0).normal(size=(7, 3))
        for make, one in (
                (lambda g: laplace_calls(7, sensitivity=2.0, epsilon=0.3, rng=g),
                 lambda v, g: laplace(v, sensitivity=2.0, epsilon=0.3, rng=g)),
                (lambda g: gaussian_calls(7, sensitivity=1.0, budget=ZCDP(0.2), rng=g),
                 lambda v, g: gaussian(v, sensitivity=1.0, budget=ZCDP(0.2), rng=g))):
            g1, g2 = np.random.default_rng(4), np.random.default_rng(4)
            call = make(g1)
            a = np.array([call(v) for v in vals])
            b = np.array([one(v, g2) for v in vals])
            assert np.array_equal(a, b) and g1.random() == g2.random()
            s1, s2 = simulation_generator(4), simulation_generator(4)  # simulations: float
            sim = make(s1)
            assert np.array_equal(np.array([sim(v) for v in vals]),
                                  np.array([one(v, s2) for v in vals]))

    def test_a_lane_reads_the_same_bits_alone_or_in_a_batch(self):
        """Branches are per lane: Bernoulli(exp(−a/b)) with b near 2⁵⁵ (the split
        Bernoulli(a/b)·Bernoulli(1/K) path) next to small b, and Laplace lanes whose scales
        differ by 40 orders of magnitude, give each lane what it gives alone."""
        key = b"L" * 32
        a = np.array([3, (1 << 54) - 5, 1, (1 << 54) + 1, 0, 7], dtype=np.int64)
        b = np.array([5, (1 << 54) + 3, 1, (1 << 54) + 9, 4, 7], dtype=np.int64)
        n = a.size
        for rep in range(30):
            k = key + bytes([rep])
            batch = S._bernoulli_exp_frac(a, b, np.arange(n), S.SeededStreams([k], n, 64))
            for i in range(n):
                alone = S._bernoulli_exp_frac(a[i:i + 1], b[i:i + 1], np.array([i]),
                                              S.SeededStreams([k], n, 64))
                assert alone[0] == batch[i]
        num = np.array([3, 2**54, 7, 2**60, 1], dtype=object)
        den = np.array([1, 3, 2**20, 1, 5], dtype=object)
        streams = S.SeededStreams([key], 5, 64)
        batch = S._laplace_k(num, den, np.arange(5), streams)
        for i in range(5):
            alone = S._laplace_k(num[i:i + 1], den[i:i + 1], np.array([i]),
                                 S.SeededStreams([key], 5, 64))
            assert int(alone[0]) == int(batch[i])

    def test_grid_plans_vectorised_equal_the_scalar_plan(self):
        g = np.random.default_rng(1)
        sens = np.concatenate([g.uniform(1e-6, 10, 300), [1e-300, 1e150, 1.0, 2.0**-40]])
        eps = np.concatenate([g.uniform(1e-3, 20, 300), [1e-100, 1e-90, 1.0, 3.0]])
        e, num, den = S.laplace_grid_lanes(sens, eps, 2)
        for j in range(sens.size):
            plan = S.laplace_grid(float(sens[j]), float(eps[j]), 2)
            assert plan.exponent == e[j]
            assert plan.noise == S.Fraction(int(num[j]), int(den[j]))
            assert (plan.noise.numerator, plan.noise.denominator) == (int(num[j]), int(den[j]))
            # never less noise than the exact scale (Δ/γ + d)/ε
            exact = (S.Fraction(float(sens[j])) / S.Fraction(plan.step) + 2) / S.Fraction(
                float(eps[j]))
            assert plan.noise >= exact
            assert plan.noise - exact <= exact * S.Fraction(1, 2**50) + S.Fraction(1, 2**20)


# ----------------------------------------------------------------------------- Mironov's event
def _plain(rng):
    return np.random.Generator(rng.bit_generator)  # seeded mode on the audit's stream


def _seeded_laplace_releases(data, n, rng, check=200):
    """n seeded releases of the public function, one call each with one generator:
    ``[laplace(value, ..., rng=g) for _ in range(n)]``, computed as ``laplace_rows`` with
    every row's generator that one g (row j then takes g's j-th key, as call j does; bit for
    bit, checked on the first ``check`` calls against a generator in the same state)."""
    from dpreg.mechanisms import laplace_rows
    from dpreg.mechanisms.batch import RowRandomness

    g = _plain(rng)
    twin = np.random.Generator(type(g.bit_generator)())
    twin.bit_generator.state = g.bit_generator.state
    value = float(data["value"])
    out = laplace_rows(np.full(n, value), sensitivity=1.0, epsilon=1.0,
                       rng=RowRandomness.seeded([g] * n))
    calls = [laplace(value, sensitivity=1.0, epsilon=1.0, rng=twin) for _ in range(check)]
    assert out[:check].tolist() == calls
    ref_d, ref_dp = data["refs"]
    return reachability_event(out, ref_d, ref_dp, 1.0)


class TestReachability:
    def test_the_model_of_numpys_sampler_is_exact(self):
        """Every float Laplace output is reachable from its own value (the model reproduces
        numpy's sampler bit for bit) -- and from a neighbour most are not."""
        g = np.random.default_rng(2)
        for v, s in ((0.0, 1.0), (1.0, 0.37), (0.3, 5.0), (-2.5, 1.0)):
            z = v + g.laplace(0.0, s, 3000)
            assert all(float_laplace_reachable(x, v, s) for x in z)
        z = 0.0 + g.laplace(0.0, 1.0, 3000)
        assert np.mean([float_laplace_reachable(x, 1.0, 1.0) for x in z]) < 0.4

    def test_public_seeded_laplace_passes_mironovs_event(self):
        """Before issue 15 a seeded ``laplace`` added numpy float noise: this event gave
        ε_LCB ≈ 7 at claimed ε = 1 (N = 1e5).  Now it is an ordinary event."""
        pair = {"value": 0.0, "refs": (0.0, 1.0)}, {"value": 1.0, "refs": (0.0, 1.0)}
        n = 6000
        a = _seeded_laplace_releases(pair[0], n, np.random.default_rng(1))
        b = _seeded_laplace_releases(pair[1], n, np.random.default_rng(2))
        res = audit_samples(a, b, claim=1.0, alpha=1e-6, rng=3)
        assert res.passed and res.epsilon_lcb < 0.5, res

    def test_audit_target_passes_and_the_float_variant_is_caught(self):
        (res,) = audit_target("laplace-seeded-reachability", pairs=["shift-full"],
                              samples=20_000, alpha=1e-6, rng=4)
        assert res.passed and res.epsilon_lcb < 0.5, res
        from dpreg.audit.registry import _s_laplace_reachability

        data = {"value": 0.0, "refs": (0.0, 1.0)}, {"value": 1.0, "refs": (0.0, 1.0)}
        a = _s_laplace_reachability(data[0], 20_000, simulation_generator(5), epsilon=1.0,
                                    mode="simulation")
        b = _s_laplace_reachability(data[1], 20_000, simulation_generator(6), epsilon=1.0,
                                    mode="simulation")
        bad = audit_samples(a, b, claim=1.0, alpha=1e-6, rng=7)
        assert not bad.passed and bad.epsilon_lcb > 4.0, bad
