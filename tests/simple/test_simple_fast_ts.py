"""The O(n log n) exact all-pairs Theil-Sen machinery (dpreg.simple.fast) against the
materialising reference in exact arithmetic (dpreg.simple.fast._reference: all pairs, their
exact rational values): exact rank counts, the exact target counts at every double where the
reference's law over the doubles changes, samples (χ² against the exact law, with a power
check; two-sample KS against the float materialising sampler) and the wiring into theil_sen /
replicate_predictions.  Degenerate data (ties, collinear and
constant columns, duplicated points; running time) are in test_simple_fast_degenerate.py."""

import bisect
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from _stats import ALPHA, chi2_pvalue
from dpreg import InvalidInputError
from dpreg.mechanisms import exp_quantile
from dpreg.replicates import replicate_predictions
from dpreg.simple import theil_sen
from dpreg.simple.fast import (
    HAVE_NUMBA,
    AllPairsEM,
    all_pairs_median,
    dp_median_all_pairs,
    pair_counter,
    pair_order_statistic,
)
from dpreg.simple.fast._kernels import cross_run_inversions, cross_run_inversions_numpy
from dpreg.simple.fast._reference import (
    exact_doubled,
    exact_em_law,
    exact_shifted,
    law_release_cdf,
)
from dpreg.simple.pairs import all_pairs, doubled_pair_values

BACKENDS = ["numpy"] + (["numba"] if HAVE_NUMBA else [])


def data(n, seed=0, *, ties=False):
    g = np.random.default_rng(seed)
    x = g.uniform(0, 1, n)
    y = 0.2 + 0.5 * x + g.normal(0, 0.15, n)
    if ties:  # ties in x, duplicated points, ties in the pair values
        x, y = np.round(x, 1), np.round(y, 1)
    return x, y


def doubled(x, y, est, x_eval):
    """The materialising code's (float) doubled multiset."""
    return doubled_pair_values(x, y, all_pairs(x.size), estimand=est, x_eval=x_eval)


def exact(x, y, est, x_eval):
    """The sorted doubled multiset of exact pair values (Fractions; ±inf for tied pairs)."""
    return exact_doubled(x, y, estimand=est, x_eval=x_eval)


def below(d, t, inclusive=False):
    """#{entries of the sorted exact multiset < t} (<= t with ``inclusive``)."""
    t = Fraction(t) if not isinstance(t, Fraction) else t
    return (bisect.bisect_right if inclusive else bisect.bisect_left)(d, t)


def rounded(d):
    """The doubled multiset with each exact value rounded to the nearest double."""
    return np.array([float(v) for v in d])


def probes_near(d, k=50):
    """Thresholds at (when a value is a sum of doubles, as the sampler's thresholds are),
    just below and just above (in doubles and at 2^-200 relative) the exact values, plus a
    few fixed ones."""
    fin = sorted({v for v in d if not isinstance(v, float)})
    fin = fin[:: max(1, len(fin) // k)]
    out = [-1e9, 0.0, 0.25, 1e9]
    for v in fin:
        f = float(v)
        dd = Fraction(f) + Fraction(float(v - Fraction(f)))  # within 2^-106 of v
        tiny = abs(dd) * Fraction(1, 2 ** 200) or Fraction(1, 2 ** 1000)
        out += [f, math.nextafter(f, math.inf), math.nextafter(f, -math.inf), dd, dd + tiny,
                dd - tiny]
    return out


TARGETS = [("slope", None), ("predictions", 0.25), ("predictions", 0.3)]


# ---------------------------------------------------------------------------- counting
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("est,x_eval", TARGETS)
@pytest.mark.parametrize("ties", [False, True])
def test_counts_equal_the_exact_multiset(backend, est, x_eval, ties):
    x, y = data(120, seed=3, ties=ties)
    d = exact(x, y, est, x_eval)
    pc = pair_counter(x, y, estimand=est, x_eval=x_eval, backend=backend)
    assert pc.n_pairs == len(d) // 2
    assert pc.n_tied == sum(isinstance(v, float) for v in d) // 2
    for r in probes_near(d):
        assert 2 * pc.count(r) + pc.n_tied == below(d, r), r
        assert 2 * pc.count(r, inclusive=True) + pc.n_tied == below(d, r, inclusive=True), r


@given(st.lists(st.tuples(st.integers(-4, 4), st.integers(-4, 4)), min_size=2, max_size=25),
       st.sampled_from([None, 0.0, 1.0, 0.5, 0.3]), st.integers(-9, 9))
def test_counts_on_small_integer_grids(points, x_eval, r2):
    """Heavy ties everywhere (x, y, pair values, points on x = x_eval): exact counts."""
    x = np.array([p[0] for p in points], dtype=float)
    y = np.array([p[1] for p in points], dtype=float)
    est = "slope" if x_eval is None else "predictions"
    d = exact(x, y, est, x_eval)
    for backend in BACKENDS:
        pc = pair_counter(x, y, estimand=est, x_eval=x_eval, backend=backend)
        for r in (Fraction(r2, 2), Fraction(r2, 3), r2 / 3, np.nextafter(r2 / 2, np.inf)):
            assert 2 * pc.count(r) + pc.n_tied == below(d, r)
            assert 2 * pc.count(r, inclusive=True) + pc.n_tied == below(d, r, inclusive=True)


def test_counts_with_extreme_magnitudes():
    x, y = data(40, seed=5)
    x[3], y[7], x[9] = 1e200, -1e180, 0.25 + 1e-130  # outside the exact range: pair by pair
    x[11], y[12], x[13] = 1e-300, 1e-310, -5e-324
    for est, xe in TARGETS:
        d = exact(x, y, est, xe)
        pc = pair_counter(x, y, estimand=est, x_eval=xe)
        # every ~60th exact value (each count is exact pair-by-pair arithmetic here)
        for r in probes_near(d, k=12) + [-1e300, 1e300, 5e-324, -1e-310]:
            assert 2 * pc.count(r) + pc.n_tied == below(d, r), r


def test_numba_and_numpy_inversion_kernels_agree():
    if not HAVE_NUMBA:
        pytest.skip("numba is not installed: only the NumPy kernel exists")
    g = np.random.default_rng(1)
    for n in (1, 2, 7, 300, 5000):
        rank = g.permutation(n).astype(np.int64)
        w = g.integers(1, 4, n).astype(np.int64)
        cuts = np.unique(np.concatenate(([0, n], g.integers(0, n + 1, n // 3))))
        a = cross_run_inversions(rank, w, cuts, backend="numba")
        assert a == cross_run_inversions_numpy(rank, w, cuts)
    with pytest.raises(InvalidInputError, match="backend"):
        pair_counter(*data(5), backend="gpu")


# ---------------------------------------------------------------------------- non-private
@pytest.mark.parametrize("est,x_eval", TARGETS)
def test_exact_median_and_order_statistics(est, x_eval):
    """Order statistics are the exact values rounded to the nearest double; the median is
    numpy's median of those (clipped) values."""
    x, y = data(150, seed=2, ties=True)
    d = exact(x, y, est, x_eval)
    v = rounded(d)
    fin = np.sort(v[np.isfinite(v)])[::2]  # one copy per untied pair
    assert all_pairs_median(x, y, estimand=est, x_eval=x_eval, lo=-3, hi=3) == float(
        np.median(np.clip(v, -3, 3)))
    assert all_pairs_median(x, y, estimand=est, x_eval=x_eval) == float(np.median(fin))
    for k in (1, 17, fin.size // 2, fin.size):
        assert pair_order_statistic(x, y, k, estimand=est, x_eval=x_eval) == fin[k - 1]
    with pytest.raises(InvalidInputError, match="k must be"):
        pair_order_statistic(x, y, fin.size + 1, estimand=est, x_eval=x_eval)


def test_large_n_median_against_sorted_pairs():
    """n = 2500 (3.1 million pairs): the exact median agrees with the float formula's median
    to rounding of the pair values (exactness itself is tested on smaller data)."""
    x, y = data(2500, seed=4)
    i, j = np.triu_indices(x.size, 1)
    fin = np.sort((y[j] - y[i]) / (x[j] - x[i]))
    ref = float(np.median(fin))
    assert all_pairs_median(x, y) == pytest.approx(ref, rel=1e-14, abs=0)


# ---------------------------------------------------------------------------- the mechanism
def _em(x, y, est, x_eval, eps, lo, hi, theta, seed=0):
    pc = pair_counter(x, y, estimand=est, x_eval=x_eval)
    return AllPairsEM(pc, epsilon=eps, lo=lo, hi=hi, theta=theta, rng=np.random.default_rng(seed))


@pytest.mark.parametrize("est,x_eval", TARGETS)
@pytest.mark.parametrize("theta", [0.0, 0.05])
@pytest.mark.parametrize("n,ties", [
    (60, True), (200, True), (120, False),
    # 44,850 exact (Fraction) pair values: ~4 CPU-s each, so make test runs n = 120 without ties
    pytest.param(300, False, marks=pytest.mark.slow)])
def test_target_counts_equal_the_reference_at_every_double(est, x_eval, theta, n, ties):
    """The fast sampler's counts (L(d), U(d)) -- hence its target probability ∝ ω(d)·e^{−ε/2 ·
    loss} -- equal the exact reference's at the doubles where the reference's law changes and
    at a double inside each of its gaps: the two laws over the doubles are equal."""
    x, y = data(n, seed=n, ties=ties)
    lo, hi = -0.5, 1.5
    d = exact(x, y, est, x_eval)
    eps = 2.0 / (2 * (n - 1))
    w = exact_shifted(d, lo=lo, hi=hi, theta=theta)
    points, _, _ = exact_em_law(d, epsilon=eps, lo=lo, hi=hi, theta=theta)
    em = _em(x, y, est, x_eval, eps, lo, hi, theta)
    probe = points.tolist() + [a + (b - a) / 2 for a, b in zip(points[:-1], points[1:])]
    pick = probe if len(probe) <= 500 else list(np.random.default_rng(0).choice(probe, 500,
                                                                                 replace=False))
    for v in pick:
        fv = Fraction(float(v))
        want = bisect.bisect_left(w, fv), bisect.bisect_right(w, fv)
        assert em.counts(float(v)) == want, v
        assert em.loss(*want) == math.floor(max(want[0] - len(w) / 2, len(w) / 2 - want[1], 0))


def _bins(law, nbins=25):
    """Cells (a, b] with double edges of about equal probability under the exact law (the
    first edge just below lo)."""
    lo, hi = float(law[0][0]), float(law[0][-1])
    pts = law[0]
    grid = np.unique(np.concatenate((np.linspace(lo, hi, 4001),
                                     pts[:: max(1, len(pts) // 4000)])))
    cdf = law_release_cdf(law, grid)
    idx = np.unique(np.searchsorted(cdf, np.linspace(0, 1, nbins + 1)[1:-1]))
    edges = np.unique(np.concatenate(([math.nextafter(lo, -math.inf)], grid[idx], [hi])))
    return edges, np.diff(law_release_cdf(law, edges))


def _counts(draws, edges):
    """Draws per cell (a, b] (releases are doubles)."""
    return np.diff(np.searchsorted(np.sort(draws), edges, side="right"))


@pytest.mark.parametrize("est,x_eval,theta", [("slope", None, 0.0), ("predictions", 0.25, 0.0),
                                              ("predictions", 0.3, 0.05)])
def test_samples_follow_the_exact_reference_distribution_with_power(est, x_eval, theta):
    n, m = 200, (6000 if theta == 0 else 15000)
    x, y = data(n, seed=11, ties=True)
    lo, hi = -0.5, 1.5
    eps = 3.0 / (2 * (n - 1))
    v = doubled(x, y, est, x_eval)
    law = exact_em_law(exact(x, y, est, x_eval), epsilon=eps, lo=lo, hi=hi, theta=theta)
    edges, probs = _bins(law)
    fast = dp_median_all_pairs(x, y, epsilon=eps, lo=lo, hi=hi, estimand=est, x_eval=x_eval,
                               theta=theta, rng=1, size=m)
    assert np.all((fast >= lo) & (fast <= hi))
    assert chi2_pvalue(_counts(fast, edges), probs) > ALPHA
    ref = exp_quantile(v, epsilon=eps, lo=lo, hi=hi, theta=theta, rng=2, size=m)
    assert stats.ks_2samp(fast, ref).pvalue > ALPHA  # two-sample, against the materialising
    # power: the same tests reject a sampler with 0.7x or 1.3x the privacy parameter
    for f in (0.7, 1.3):
        wrong = dp_median_all_pairs(x, y, epsilon=f * eps, lo=lo, hi=hi, estimand=est,
                                    x_eval=x_eval, theta=theta, rng=3, size=m)
        assert chi2_pvalue(_counts(wrong, edges), probs) < ALPHA
        if theta == 0.0:  # (the widened top is flat: the KS distance is too small there)
            assert stats.ks_2samp(wrong, ref).pvalue < 1e-3


def test_single_draws_are_rejection_sampled_from_a_valid_envelope():
    """Single draws (the release path) refine less; their law must be the same."""
    n = 40
    x, y = data(n, seed=8)
    eps = 2.0 / (2 * (n - 1))
    law = exact_em_law(exact(x, y, "slope", None), epsilon=eps, lo=-0.5, hi=1.5)
    edges, probs = _bins(law, nbins=12)
    draws = np.array([dp_median_all_pairs(x, y, epsilon=eps, lo=-0.5, hi=1.5, rng=s)
                      for s in range(300)])
    assert chi2_pvalue(_counts(draws, edges), probs) > ALPHA


@pytest.mark.parametrize("theta", [0.0, 0.05])
@pytest.mark.parametrize("ties", [False, True])
def test_cached_envelope_bounds_equal_fresh_lookups(theta, ties):
    """The sampler caches each block end's count bounds and re-reads them only when a
    threshold learned since brackets their keys (issue 19 speed-up); after refining and
    sampling (many thresholds learned, blocks split), every cached bound equals a fresh lookup
    in the exact knowledge -- so the envelope, the proposals and the seeded draws are those of
    the uncached sampler.  Some bounds change after they are first cached (θ = 0: a cut off
    the target rank records a one-sided bound that later exact counts tighten; θ > 0: the
    shifted thresholds fall inside other blocks), so a cache that is never re-read would be
    wrong."""
    x, y = data(300, seed=4, ties=ties)
    em = AllPairsEM(pair_counter(x, y), epsilon=1.0 / 299, lo=-2.0, hi=3.0, theta=theta,
                    rng=np.random.default_rng(1))
    snapshot = None
    for size in (None, 40):
        em.sample(size)
        if snapshot is None:  # the bounds as cached after the first draw
            snapshot = {id(p): (p.low, p.high) for p in em._pts}

    def fresh(p, left):
        d = p.dr if left else p.dl
        look = em._k_low if left else em._k_up
        lt, ut = em.thresholds(d)
        return (0 if not lt else em._combine(tuple(look(t) for t in lt)),
                em.N if not ut else em._combine(tuple(look(t) for t in ut)))

    stale = 0
    pts = em._pts
    for p0, p1 in zip(pts[:-1], pts[1:]):
        assert em._bounds(p0, p1) == fresh(p0, True) + fresh(p1, False)
        old_l = snapshot.get(id(p0), (None, None))[0]
        old_h = snapshot.get(id(p1), (None, None))[1]
        if old_l is not None:
            stale += old_l != fresh(p0, True)
        if old_h is not None:
            stale += old_h != fresh(p1, False)
    assert len(em._learned) > 10
    assert stale > 0


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("q", [0.5, 0.2])
def test_cut_bounds_and_one_sided_losses_are_exact(ties, q):
    """θ = 0: a cut off the target rank records one count at a double as a bound (a, c) of K
    (K(φ) <= c for φ <= a, >= c for φ > a), and a proposal whose side of the target is known
    counts only U or only L.  Against the exact reference: every recorded bound lies between
    K(a) and K(a⁺), and the loss the sampler computes at every probed double is the
    reference's (a bound on the wrong side, or a count skipped where it mattered, fails)."""
    n = 200
    x, y = data(n, seed=6, ties=ties)
    lo, hi, eps = -0.5, 1.5, 2.0 / (2 * (n - 1))
    w = exact_shifted(exact(x, y, "slope", None), lo=lo, hi=hi, q=q)
    em = AllPairsEM(pair_counter(x, y), epsilon=eps, lo=lo, hi=hi, q=q,
                    rng=np.random.default_rng(2))
    em.sample(30)
    assert len(em._bk) >= 5

    def K(phi):
        return bisect.bisect_right(w, Fraction(phi))

    for a, c in em._bk:
        assert K(a) <= c <= K(math.nextafter(a, math.inf)), (a, c)
    nq = len(w) * q
    probe = np.random.default_rng(3).choice(np.array([float(v) for v in w]), 150)
    for v in list(probe) + [math.nextafter(float(v), -math.inf) for v in probe[:50]]:
        if lo < v < hi:
            want_l, want_u = bisect.bisect_left(w, Fraction(v)), K(v)
            assert em.exact_loss(float(v)) == math.floor(max(want_l - nq, nq - want_u, 0.0))


def test_all_tied_and_infinite_epsilon():
    x = np.zeros(10)
    y = np.arange(10.0)
    out = dp_median_all_pairs(x, y, epsilon=0.1, lo=-1, hi=1, rng=0, size=2000)
    # every entry is ±inf: L = U = P strictly inside the range, so the output is uniform
    assert stats.kstest(out, stats.uniform(-1, 2).cdf).pvalue > ALPHA
    x, y = data(50)
    val = dp_median_all_pairs(x, y, epsilon=math.inf, lo=-5, hi=5, rng=0)
    assert val == float(np.median(np.clip(rounded(exact(x, y, "slope", None)), -5, 5)))


def test_validation():
    x, y = data(10)
    with pytest.raises(InvalidInputError, match="x_eval"):
        dp_median_all_pairs(x, y, epsilon=1, lo=0, hi=1, estimand="predictions")
    with pytest.raises(InvalidInputError, match="theta"):
        dp_median_all_pairs(x, y, epsilon=1, lo=0, hi=1, theta=2.0)
    with pytest.raises(InvalidInputError, match="size"):
        dp_median_all_pairs(x, y, epsilon=1, lo=0, hi=1, size=0)
    with pytest.raises(InvalidInputError):
        dp_median_all_pairs(x, y, epsilon=-1, lo=0, hi=1)
    with pytest.raises(InvalidInputError):
        dp_median_all_pairs(x[:1], y[:1], epsilon=1, lo=0, hi=1)


# ---------------------------------------------------------------------------- wiring
def test_theil_sen_algorithm_choice_and_statement():
    x, y = data(150, seed=1)
    kw = dict(epsilon=2.0, output_range=(-0.5, 1.5), x_bounds=(0, 1))
    fast = theil_sen(x, y, **kw, algorithm="exact-fast", rng=0)
    mat = theil_sen(x, y, **kw, algorithm="materialise", rng=0)
    assert fast.privacy.details["algorithm"] == "exact-fast"
    assert mat.privacy.details["algorithm"] == "materialise"
    assert theil_sen(x, y, **kw, rng=0).privacy.details["algorithm"] == "materialise"  # n < 2000
    assert fast.privacy.budget == mat.privacy.budget
    with pytest.raises(InvalidInputError, match="exact-fast"):
        theil_sen(x, y, **kw, algorithm="exact-fast", median="smooth")
    with pytest.raises(InvalidInputError, match="exact-fast"):
        theil_sen(x, y, **kw, algorithm="exact-fast", pairs=3)
    with pytest.raises(InvalidInputError, match="algorithm"):
        theil_sen(x, y, **kw, algorithm="fastest")


@pytest.mark.parametrize("method", ["theil-sen-exp", "theil-sen-wide"])
def test_replicates_fast_and_materialised_have_the_same_law(method):
    x, y = data(120, seed=6)
    # 1500 replicates: seeded KS p 0.45-0.75 for the two paths, < 1e-14 for half the budget
    kw = dict(epsilon=2.0, x_bounds=(0, 1), y_bounds=(-0.5, 1.5), trials=1500,
              output_range=(-0.5, 1.5))
    a = replicate_predictions(method, x, y, **kw, algorithm="exact-fast", rng=1)
    b = replicate_predictions(method, x, y, **kw, algorithm="materialise", rng=2)
    for j in range(2):
        assert stats.ks_2samp(a[:, j], b[:, j]).pvalue > ALPHA
    half = replicate_predictions(method, x, y, **{**kw, "epsilon": 1.0},
                                 algorithm="exact-fast", rng=3)
    assert stats.ks_2samp(half[:, 0], b[:, 0]).pvalue < 1e-3  # power: half the budget


def test_fast_path_never_materialises(monkeypatch):
    import dpreg.simple._theil_sen as ts

    def boom(*a, **k):
        raise AssertionError("materialised the pairs")

    monkeypatch.setattr(ts, "doubled_pair_values", boom)
    monkeypatch.setattr(ts, "make_design", boom)
    x, y = data(3000, seed=9)
    res = theil_sen(x, y, epsilon=1.0, output_range=(-0.5, 1.5), x_bounds=(0, 1), rng=0)
    assert res.privacy.details["algorithm"] == "exact-fast"
    assert abs(res.slope - 0.5) < 0.2
