"""The all-pairs materialising Theil-Sen path that builds the sorted multiset directly
(:func:`dpreg.simple.pairs.sorted_doubled_all_pairs`) and samples the medians from it
(:func:`dpreg.mechanisms.exponential.exp_quantile_sorted`,
:func:`dpreg.mechanisms.smooth.smooth_median_sorted`) must give, for the same seed, exactly the
outputs of the path it replaced: the doubled multiset of ``all_pairs`` with
``dp_median_of_doubled`` (sort, intervals, numpy's Gumbel draws, uniform draw)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpreg.mechanisms.exponential import _uniforms_as_gumbel, exp_quantile, exp_quantile_sorted
from dpreg.privacy import PureDP
from dpreg.simple import (
    dp_median_of_doubled,
    plan_theil_sen,
    release_theil_sen,
    theil_sen_statistics,
)
from dpreg.simple.pairs import all_pairs, doubled_pair_values, sorted_doubled_all_pairs


def _groups(seed: int, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Groups of varied sizes (2 to 399), rounded like census ranks, with tied x, exact
    lines, constant y and constant x among them."""
    g = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = int(g.integers(2, 400))
        dec = int(g.integers(1, 5))
        x = np.round(g.uniform(0, 1, n), dec)
        y = np.round(0.35 * x + g.normal(0.3, 0.25, n), dec)
        if i % 17 == 0:
            y = np.round(0.5 * x + 0.1, dec)  # collinear: atoms of equal pair values
        if i % 23 == 0:
            y[:] = 0.5
        if i % 29 == 0:
            x[:] = 0.5  # every pair tied
        out.append((x, y))
    return out


def _previous_path(x, y, median, estimand, x_eval, targets, lo, hi, theta, gen):
    design = all_pairs(x.size)
    points = x_eval if estimand == "predictions" else (None,)
    return [dp_median_of_doubled(doubled_pair_values(x, y, design, estimand=estimand, x_eval=xv),
                                 median=median, epsilon=part.epsilon, k=design.k, lo=lo, hi=hi,
                                 theta=theta, dof=3, rng=gen)
            for xv, part in zip(points, targets)]


@pytest.mark.parametrize("median", ["exp", "wide", "smooth"])
def test_fused_path_bit_identical_to_materialising_on_many_groups(median):
    """Every median, a few hundred groups of varied sizes, predictions and slopes, ε from 0.1
    to 1000: the same seed gives the same floats as the previous path."""
    g = np.random.default_rng({"exp": 1, "wide": 2, "smooth": 3}[median])
    checked = 0
    for i, (x, y) in enumerate(_groups(10 + len(median), 200)):
        estimand = "slope" if i % 4 == 3 else "predictions"
        eps = float(g.choice([0.1, 1.0, 10.0, 1000.0]))
        targets = PureDP(eps).split([1, 1]) if estimand == "predictions" else [PureDP(eps)]
        lo, hi = (-0.5, 1.5) if estimand == "predictions" else (-5.0, 5.0)
        theta = 0.01 if median == "wide" else 0.0
        seed = int(g.integers(1 << 31))
        plan = plan_theil_sen(epsilon=eps, output_range=(lo, hi), median=median,
                              estimand=estimand, pairs="all",
                              x_eval=(0.25, 0.75) if estimand == "predictions" else None,
                              theta=theta if median == "wide" else None, dof=3,
                              algorithm="materialise", n=x.size)
        assert list(plan.parts.values()) == targets
        new = release_theil_sen(theil_sen_statistics(x, y, plan), plan,
                                np.random.default_rng(seed)).values["released"]
        old = _previous_path(x, y, median, estimand, (0.25, 0.75), targets, lo, hi, theta,
                             np.random.default_rng(seed))
        assert np.array_equal(np.array(new), np.array(old)), (i, x.size, estimand, eps)
        checked += 1
    assert checked == 200


def test_sorted_multiset_equals_sorting_the_doubled_multiset():
    for x, y in _groups(5, 40):
        for estimand, xe in (("predictions", 0.25), ("predictions", 0.75), ("slope", None)):
            got = sorted_doubled_all_pairs(x, y, estimand=estimand, x_eval=xe, lo=-0.5, hi=1.5)
            want = np.sort(np.clip(doubled_pair_values(x, y, all_pairs(x.size),
                                                       estimand=estimand, x_eval=xe),
                                   -0.5, 1.5))
            assert got.shape == want.shape and np.array_equal(got, want)


def test_exp_quantile_sorted_equals_exp_quantile():
    """Any multiset (duplicates, values at the ends), any q and θ: the same draw as
    exp_quantile from the same seed -- and a different multiset gives a different draw (the
    comparison can fail)."""
    g = np.random.default_rng(7)
    for trial in range(300):
        m = int(g.integers(1, 300))
        z = np.round(g.normal(0.4, 0.5, m), int(g.integers(1, 4)))
        z[g.random(m) < 0.05] = np.inf
        q = float(g.choice([0.5, 0.1, 0.9, 0.0, 1.0, float(g.random())]))
        eps = float(g.choice([0.01, 1.0, 50.0]))
        theta = float(g.choice([0.0, 0.05]))
        s = np.sort(np.clip(z, -1.0, 2.0))
        a = exp_quantile_sorted(s, q=q, epsilon=eps, lo=-1.0, hi=2.0, theta=theta,
                                rng=np.random.default_rng(trial))
        b = exp_quantile(z, q=q, epsilon=eps, lo=-1.0, hi=2.0, theta=theta,
                         rng=np.random.default_rng(trial))
        assert a == b
    z = np.sort(g.uniform(0, 1, 50))
    other = np.sort(np.clip(z + 1e-3, 0.0, 1.0))  # every value moved a little
    draws = [exp_quantile_sorted(v, epsilon=1.0, lo=0.0, hi=1.0, rng=np.random.default_rng(3))
             for v in (z, other)]
    assert draws[0] != draws[1]


def test_uniforms_are_the_gumbel_stream():
    """The doubles behind numpy's Gumbel draws: −log(−log(1 − d)) reproduces gen.gumbel bit for
    bit and the generator ends in the same state; a zero double is skipped as numpy redraws."""
    a, b = np.random.default_rng(11), np.random.default_rng(11)
    d = _uniforms_as_gumbel(a, 100_000)
    ref = b.gumbel(size=100_000)
    assert np.array_equal(np.array([0.0 - 1.0 * math.log(-math.log(1.0 - v)) for v in d]), ref)
    assert a.random() == b.random()

    class Zeros(np.random.Generator):
        calls = 0

        def random(self, size=None):  # type: ignore[override]
            out = super().random(size)
            self.calls += 1
            if self.calls == 1:
                out[[0, 5]] = 0.0
            return out

    gen = Zeros(np.random.PCG64(1))
    got = _uniforms_as_gumbel(gen, 10)
    plain = np.random.default_rng(1).random(12)
    assert got.size == 10 and got.all()
    assert np.array_equal(got, np.concatenate((plain[1:5], plain[6:10], plain[10:12])))


def _numpy_rows(monkeypatch, z, **kw):
    """exp_quantile_rows on numpy's own Gumbel draws (the compiled pass switched off)."""
    import dpreg.mechanisms.exponential as E

    with monkeypatch.context() as m:
        m.setattr(E, "_gumbel_keys_nb", lambda: None)
        return E.exp_quantile_rows(z, **kw)


def test_exp_quantile_rows_compiled_path_gives_numpys_draws(monkeypatch):
    """exp_quantile_rows with one generator and with one generator per row takes the compiled
    Gumbel-max pass (exp_quantile_sorted row by row): the same outputs bit for bit as numpy's
    Gumbel draws, for ties, ±inf, any q and θ -- and a changed row changes its draw."""
    from dpreg.mechanisms.batch import RowRandomness
    from dpreg.mechanisms.exponential import _gumbel_keys_nb, exp_quantile_rows

    if _gumbel_keys_nb() is None:
        pytest.skip("numba not installed: there is no compiled path to compare")
    g = np.random.default_rng(11)
    for trial in range(150):
        rows, m = int(g.integers(1, 6)), int(g.integers(0, 80))
        z = np.round(g.normal(0.3, 0.6, (rows, m)), int(g.integers(1, 4)))
        z[g.random((rows, m)) < 0.05] = -np.inf
        kw = dict(q=float(g.choice([0.5, 0.2, 0.9, 0.0, 1.0])),
                  epsilon=float(g.choice([0.01, 0.7, 40.0])), lo=-1.0, hi=1.5,
                  theta=float(g.choice([0.0, 0.05, 1.0])))
        a = exp_quantile_rows(z, rng=np.random.default_rng(trial), **kw)
        b = _numpy_rows(monkeypatch, z, rng=np.random.default_rng(trial), **kw)
        assert np.array_equal(a, b)
        seeds = [trial * 10 + r for r in range(rows)]
        a = exp_quantile_rows(z, rng=RowRandomness.seeded(
            [np.random.default_rng(s) for s in seeds]), **kw)
        b = _numpy_rows(monkeypatch, z, rng=RowRandomness.seeded(
            [np.random.default_rng(s) for s in seeds]), **kw)
        assert np.array_equal(a, b)
    z = np.sort(g.uniform(0, 1, (2, 40)), axis=1)
    moved = z.copy()
    moved[1] = np.clip(moved[1] + 1e-3, 0, 1)
    a = exp_quantile_rows(z, epsilon=1.0, lo=0.0, hi=1.0, rng=np.random.default_rng(2))
    b = exp_quantile_rows(moved, epsilon=1.0, lo=0.0, hi=1.0, rng=np.random.default_rng(2))
    assert a[0] == b[0] and a[1] != b[1]


def test_compiled_pass_gives_numpys_draws_on_large_tied_multisets(monkeypatch):
    """The compiled pass skips pieces by bounds without a logarithm and starts near the
    target rank: on multisets of Theil-Sen size (up to 20,000 entries, heavy ties, values at
    the range's ends, ends at 0, wide and narrow ranges) and every ε from the all-pairs
    mechanism's (1e-4) to the ε → ∞ regime (1e9), its draw is numpy's Gumbel-max draw bit for
    bit -- and a wrong skip (a bound without its margin) would pick another piece."""
    import dpreg.mechanisms.exponential as E

    if E._gumbel_keys_nb() is None:
        pytest.skip("numba not installed: there is no compiled path to compare")
    g = np.random.default_rng(32)
    ranges = [(-1.0, 2.0), (0.0, 1.0), (-1.0, 0.0), (-1e6, 1e6), (-1e-3, 1e-3)]
    for trial in range(120):
        lo, hi = ranges[trial % len(ranges)]
        m = int(g.choice([2, 50, 3000, 20_000]))
        spread = (hi - lo) * float(g.choice([0.01, 0.3, 1.5]))
        z = 0.5 * (lo + hi) + spread * g.normal(size=m)
        z = np.round(z / spread, int(g.integers(0, 4))) * spread  # ties at every scale
        z[g.random(m) < 0.1] = lo  # entries clipped to the ends (and ±inf)
        z[g.random(m) < 0.05] = np.inf
        s = np.sort(np.clip(z, lo, hi))
        kw = dict(q=float(g.choice([0.5, 0.5, 0.1, 0.97, float(g.random())])),
                  epsilon=float(g.choice([1e-4, 0.01, 1.0, 100.0, 1e9])), lo=lo, hi=hi,
                  theta=float(g.choice([0.0, 0.0, 0.01 * (hi - lo)])))
        a = E.exp_quantile_sorted(s, rng=np.random.default_rng(trial), **kw)
        with monkeypatch.context() as mp:
            mp.setattr(E, "_gumbel_keys_nb", lambda: None)
            b = E.exp_quantile_sorted(s, rng=np.random.default_rng(trial), **kw)
        assert a == b, (trial, m, kw)


def test_few_log_weights_are_the_vector_weights_bit_for_bit():
    """The compiled path rescores its few candidate pieces with scalar arithmetic and one
    numpy.log; at every piece of tied, clipped, widened multisets (ends at 0 included) those
    are the floats the numpy path computes for all pieces -- the bit-for-bit agreement of
    the two paths rests on it."""
    from dpreg.mechanisms.exponential import _few_log_weights, _value_log_weights

    g = np.random.default_rng(5)
    for trial in range(200):
        lo, hi = [(-1.0, 2.0), (0.0, 1.0), (-1.0, 0.0), (-3e5, 1e-3)][trial % 4]
        m = int(g.integers(0, 60))
        z = np.round(g.uniform(lo - 0.3 * (hi - lo), hi + 0.3 * (hi - lo), m),
                     int(g.integers(0, 3)))
        b = np.sort(np.clip(z, lo, hi))
        if trial % 3 == 0 and m:
            b = np.sort(np.clip(b + float(g.choice([-1, 1])) * 0.01, lo, hi))
        c, nq = -float(g.choice([1e-3, 0.5, 1e4])), m * float(g.random())
        idx = np.arange(m + 2)
        want = _value_log_weights(b, lo, hi, c, nq, idx)
        got = _few_log_weights(b, lo, hi, c, nq, idx.tolist())
        for w, h in zip(want, got):
            assert np.array_equal(w, h), (trial, w, h)
