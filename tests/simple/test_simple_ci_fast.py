"""The Theil-Sen slope interval on all pairs without materialising them: the exact-fast
sampler of :mod:`dpreg.simple.fast` at an arbitrary public target quantile q (the interval's
ends) against the exact materialising reference, the interval's two paths against each other,
and its memory at n = 20,000 (it used to build all n(n−1)/2 pairs: 1.5 GiB per array).  The
tight method's target search by bisection over ranks (O(1) memory) against the scan over all
M + 1 ranks."""

import math
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from scipy import stats

from _stats import ALPHA, chi2_pvalue
from dpreg import InvalidInputError
from dpreg.mechanisms import exp_quantile
from dpreg.simple import ci as ci_module
from dpreg.simple import theil_sen_ci
from dpreg.simple.ci import (
    TIGHT_MAX_MULTISET,
    TIGHT_SCAN_MAX_MULTISET,
    tight_failure_at,
    tight_failure_probabilities,
    tight_targets,
    union_targets,
)
from dpreg.simple.fast import AllPairsEM, dp_median_all_pairs, pair_counter
from dpreg.simple.fast._reference import (
    exact_doubled,
    exact_em_intervals,
    exact_em_law,
    exact_shifted,
)
from dpreg.simple.pairs import (
    all_pairs,
    doubled_pair_values,
    kendall_null_variance,
    null_variance_bound,
    round_robin_matchings,
)
from simple.test_simple_fast_ts import _bins, _counts, data


@pytest.mark.parametrize("q", [0.2, 0.7311, 0.05])
@pytest.mark.parametrize("theta", [0.0, 0.05])
@pytest.mark.parametrize("ties", [False, True])
def test_quantile_target_counts_equal_the_reference_at_every_double(q, theta, ties):
    """(L(d), U(d)) at target q are the reference's at every double where its law changes and
    inside each gap, and the loss is the materialising code's ⌊max(0, L − N·q, N·q − U)⌋."""
    import bisect
    from fractions import Fraction

    n = 80
    x, y = data(n, seed=5, ties=ties)
    lo, hi, eps = -0.5, 1.5, 2.0 / (2 * (n - 1))
    d = exact_doubled(x, y)
    w = exact_shifted(d, lo=lo, hi=hi, theta=theta, q=q)
    points, _, _ = exact_em_law(d, epsilon=eps, lo=lo, hi=hi, theta=theta, q=q)
    em = AllPairsEM(pair_counter(x, y), epsilon=eps, lo=lo, hi=hi, theta=theta, q=q,
                    rng=np.random.default_rng(0))
    nq = len(w) * q
    probe = points.tolist() + [a + (b - a) / 2 for a, b in zip(points[:-1], points[1:])]
    for v in probe[:: max(1, len(probe) // 400)]:
        fv = Fraction(float(v))
        want = bisect.bisect_left(w, fv), bisect.bisect_right(w, fv)
        assert em.counts(float(v)) == want
        assert em.loss(*want) == math.floor(max(want[0] - nq, nq - want[1], 0.0))
    assert len(probe) >= 50


def test_reference_scores_are_the_materialising_mechanism_scores():
    """The exact reference at q has the float materialising code's scores (same N·q)."""
    from dpreg.mechanisms import quantile_em_intervals

    x, y = data(30, seed=2)
    v = doubled_pair_values(x, y, all_pairs(30), estimand="slope", x_eval=None)
    for q in (0.2, 0.7311, 0.5):
        _, ref = exact_em_intervals(exact_doubled(x, y), epsilon=0.3, lo=-1, hi=2, q=q)
        _, mat = quantile_em_intervals(v, q=q, epsilon=0.3, lo=-1, hi=2)
        np.testing.assert_array_equal(ref, mat)


@pytest.mark.parametrize("theta", [0.0, 0.05])
def test_quantile_samples_follow_the_exact_reference_with_power(theta):
    """χ² against the exact law at q = 0.3 and two-sample KS against the materialising
    exp_quantile; the same tests reject the sampler at a wrong target (q=0.33)."""
    n, m, q = 150, 6000, 0.3
    x, y = data(n, seed=11, ties=True)
    lo, hi = -0.5, 1.5
    eps = 3.0 / (2 * (n - 1))
    edges, probs = _bins(exact_em_law(exact_doubled(x, y), epsilon=eps, lo=lo, hi=hi,
                                      theta=theta, q=q))
    fast = dp_median_all_pairs(x, y, epsilon=eps, lo=lo, hi=hi, theta=theta, q=q, rng=1,
                               size=m)
    assert np.all((fast >= lo) & (fast <= hi))
    assert chi2_pvalue(_counts(fast, edges), probs) > ALPHA
    v = doubled_pair_values(x, y, all_pairs(n), estimand="slope", x_eval=None)
    ref = exp_quantile(v, q=q, epsilon=eps, lo=lo, hi=hi, theta=theta, rng=2, size=m)
    assert stats.ks_2samp(fast, ref).pvalue > ALPHA
    wrong = dp_median_all_pairs(x, y, epsilon=eps, lo=lo, hi=hi, theta=theta, q=0.33, rng=3,
                                size=m)
    assert chi2_pvalue(_counts(wrong, edges), probs) < 1e-3
    assert stats.ks_2samp(wrong, ref).pvalue < 1e-3


def test_quantile_validation():
    x, y = data(20)
    for bad in (-0.1, 1.5, True, "0.3"):
        with pytest.raises(InvalidInputError, match="q must be"):
            dp_median_all_pairs(x, y, epsilon=1.0, lo=-1, hi=2, q=bad)
    with pytest.raises(InvalidInputError, match="q=0.3"):
        dp_median_all_pairs(x, y, epsilon=np.inf, lo=-1, hi=2, q=0.3)


def _ends(algorithm, seeds, **kw):
    out = []
    for s in seeds:
        ci = theil_sen_ci(*data(60, seed=4), epsilon=2.0, ci_alpha=0.1, output_range=(-2.0, 3.0),
                          return_estimate=True, algorithm=algorithm, rng=s, **kw)
        assert ci.details["algorithm"] == algorithm
        out.append((ci.low, ci.high, ci.estimate))
    return np.array(out)


@pytest.mark.parametrize("method", ["union", "tight"])
def test_interval_fast_and_materialised_have_the_same_law(method):
    a = _ends("exact-fast", range(300), ci_method=method)
    b = _ends("materialise", range(1000, 1300), ci_method=method)
    for j in range(3):
        assert stats.ks_2samp(a[:, j], b[:, j]).pvalue > ALPHA


def test_interval_routing_and_details():
    x, y = data(400, seed=1)
    kw = dict(epsilon=1.0, ci_alpha=0.1, output_range=(-2.0, 3.0), rng=0)
    assert theil_sen_ci(x, y, **kw).details["algorithm"] == "exact-fast"  # auto, n >= 400
    assert theil_sen_ci(x[:399], y[:399], **kw).details["algorithm"] == "materialise"
    ci = theil_sen_ci(x, y, pairs=3, **kw)
    assert ci.details["algorithm"] == "materialise" and ci.details["k"] == 3
    with pytest.raises(InvalidInputError, match="algorithm"):
        theil_sen_ci(x, y, pairs=3, algorithm="exact-fast", **kw)
    fast = theil_sen_ci(x, y, algorithm="exact-fast", **kw).details
    mat = theil_sen_ci(x, y, algorithm="materialise", **kw).details
    for key in ("k", "n_pairs", "multiset_size", "null_variance", "q_lower", "q_upper",
                "pairs"):
        assert fast[key] == mat[key]


def test_interval_at_infinite_epsilon_matches_the_materialised_one():
    x, y = data(500, seed=3)
    kw = dict(epsilon=np.inf, ci_alpha=0.1, output_range=(-2.0, 3.0), return_estimate=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = theil_sen_ci(x, y, algorithm="exact-fast", **kw)
        m = theil_sen_ci(x, y, algorithm="materialise", **kw)
    for a, b in ((f.low, m.low), (f.high, m.high), (f.estimate, m.estimate)):
        assert a == pytest.approx(b, rel=1e-12)


def test_tight_targets_fall_back_to_union_only_above_the_hard_limit(monkeypatch):
    """Above the public hard limit (float64 resolution of the ranks) the Union targets are
    used, with a warning; the limit is far above any M the tight search used to refuse."""
    assert TIGHT_MAX_MULTISET == 2 ** 52
    n = 400
    x, y = data(n, seed=6)
    monkeypatch.setattr(ci_module, "TIGHT_MAX_MULTISET", n * (n - 1) - 1)
    with pytest.warns(UserWarning, match="Union targets"):
        t = theil_sen_ci(x, y, epsilon=1.0, ci_alpha=0.1, output_range=(-2.0, 3.0),
                         ci_method="tight", rng=0)
    u = theil_sen_ci(x, y, epsilon=1.0, ci_alpha=0.1, output_range=(-2.0, 3.0), ci_method="union",
                     rng=0)
    assert "tight_search" in t.details and "target_search" not in t.details
    assert (t.low, t.high) == (u.low, u.high)


def test_tight_method_is_used_above_the_old_multiset_limit():
    """Before: with all pairs and n >= 3163 (M > 10⁷) the tight method warned and used the
    Union targets, because its search held all M + 1 ranks.  Now it bisects over ranks."""
    n = 3200
    assert n * (n - 1) > 10 ** 7
    x, y = data(n, seed=6)
    kw = dict(epsilon=1.0, ci_alpha=0.1, output_range=(-2.0, 3.0), rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = theil_sen_ci(x, y, ci_method="tight", **kw)
    u = theil_sen_ci(x, y, ci_method="union", **kw)
    assert "tight_search" not in t.details and t.details["target_search"] == "bisect"
    # strictly inside the Union targets here (the tight method is what was asked for)
    assert u.details["q_lower"] < t.details["q_lower"] < 0.5 < t.details["q_upper"] < \
        u.details["q_upper"]
    assert t.details["t_lower"] == round(t.details["q_lower"] * n * (n - 1))


_TARGET_CASES = [  # (n, k (None: all pairs), ε of the interval, θ as a fraction of the range)
    (50, None, 1000.0, 0.01), (60, None, 0.5, 0.45), (100, None, 1.0, 0.0125),
    (200, None, 100.0, 0.0025), (300, None, 0.1, 0.75), (400, None, 2.0, 0.0025),
    (1000, None, 10.0, 0.00025), (1000, None, 1.0, 0.001), (3000, 3, 1.0, 0.005),
    (20001, 2, 4.0, 0.001), (700, None, 30.0, 0.000025),
    # M = 100,172 and 100,806: just above TIGHT_SCAN_MAX_MULTISET (auto bisects there)
    (317, None, 3.0, 0.001), (318, None, 0.7, 0.004),
]


def _target_args(n, k, eps, theta_frac):
    if k is None:
        size, kk, var = n * (n - 1), n - 1, kendall_null_variance(n)
    else:
        design = round_robin_matchings(n, k, np.random.default_rng(0))
        size, kk, var = 2 * design.size, design.k, null_variance_bound(design)
    e = (eps / 2) / (2 * kk)
    return dict(size=size, sigma=math.sqrt(var), eps_lower=e, eps_upper=e, half_range=2.0,
                theta=4.0 * theta_frac)


@pytest.mark.parametrize("case", _TARGET_CASES)
def test_failure_probability_at_one_rank_equals_the_scan(case):
    """tight_failure_at (O(1) memory: direct short sum or closed form) against the O(M) scan
    (itself checked against brute force in test_simple_ci.py) at 150 ranks across [0, M]."""
    kw = _target_args(*case)
    f_lo, f_up = tight_failure_probabilities(**kw)
    size = kw["size"]
    common = dict(size=size, sigma=kw["sigma"], half_range=2.0, theta=kw["theta"])
    for t in np.unique(np.linspace(0, size, 150).astype(int)):
        up = tight_failure_at(int(t), side="upper", epsilon=kw["eps_upper"], **common)
        lo = tight_failure_at(int(t), side="lower", epsilon=kw["eps_lower"], **common)
        # relative where it matters for a target (α/2 >= 1e-4); absolute in the far tails,
        # where the scan's running sums carry rounding of order 1e-15 (below 1e-8·α/2)
        assert up == pytest.approx(f_up[t], rel=1e-8, abs=1e-12)
        assert lo == pytest.approx(f_lo[t], rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("case", _TARGET_CASES)
def test_bisected_targets_equal_the_scanned_targets(case):
    """The targets found by bisection are exactly the scan's (the ranks, hence q = t/M), for
    several α and both sides; where no rank qualifies both keep the Union target."""
    kw = _target_args(*case)
    found = 0
    for alpha in (0.01, 0.05, 0.1, 0.3):
        u = union_targets(alpha=alpha, r_alpha=0.5, **kw)
        a = tight_targets(alpha=alpha, union=u, search="scan", **kw)
        b = tight_targets(alpha=alpha, union=u, search="bisect", **kw)
        assert (a["search"], b["search"]) == ("scan", "bisect")
        for key in ("t_lower", "t_upper", "q_lower", "q_upper"):
            assert a[key] == b[key], (key, alpha, a[key], b[key])
        for side in ("lower", "upper"):
            if a[f"t_{side}"] is not None:
                found += 1
                assert b[f"failure_{side}"] <= alpha / 2
                assert b[f"failure_{side}"] == pytest.approx(a[f"failure_{side}"], rel=1e-8)
    assert found > 0 or case[3] >= 0.45 or case[2] <= 0.5
    auto = tight_targets(alpha=0.1, union=union_targets(alpha=0.1, r_alpha=0.5, **kw), **kw)
    assert auto["search"] == ("scan" if kw["size"] <= TIGHT_SCAN_MAX_MULTISET else "bisect")


def test_bisected_target_search_runs_in_constant_memory():
    """All pairs at n = 20,000 (M ≈ 4·10⁸; the scan would hold ~48 GB) and at the hard
    limit M = 2⁵²: the bisection's peak Python allocation stays a few MB (its short direct sums
    hold at most ~40,000 cells) and it returns targets strictly inside Union's."""
    import tracemalloc

    for n, eps in ((20000, 1.0), (20000, 400.0)):
        kw = _target_args(n, None, eps, 1 / max(eps * n, 200))
        assert kw["size"] > 1000 * TIGHT_SCAN_MAX_MULTISET
        u = union_targets(alpha=0.1, r_alpha=0.5, **kw)
        tracemalloc.start()
        try:
            b = tight_targets(alpha=0.1, union=u, **kw)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert b["search"] == "bisect" and peak < 8 * 2 ** 20, peak
        assert u["q_lower"] < b["q_lower"] < 0.5 < b["q_upper"] < u["q_upper"]
    size = TIGHT_MAX_MULTISET
    kw = dict(size=size, sigma=math.sqrt(4 / (9 * math.sqrt(size))), eps_lower=1e-8,
              eps_upper=1e-8, half_range=2.0, theta=1e-7)
    u = union_targets(alpha=0.1, r_alpha=0.5, **kw)
    b = tight_targets(alpha=0.1, union=u, **kw)
    assert u["q_lower"] < b["q_lower"] < 0.5 < b["q_upper"] < u["q_upper"]
    common = dict(size=size, sigma=kw["sigma"], half_range=2.0, theta=1e-7, epsilon=1e-8)
    for side, t, nearer in (("lower", b["t_lower"], 1), ("upper", b["t_upper"], -1)):
        assert tight_failure_at(t, side=side, **common) <= 0.05
        assert tight_failure_at(t + nearer, side=side, **common) > 0.05
    # the rank law is symmetric up to the lattice's one-cell offset
    assert 0 <= b["t_upper"] - (size - b["t_lower"]) <= 1


def test_bisected_targets_are_the_closest_qualifying_ranks():
    """A wrong search (off by one rank) fails: one rank nearer the middle breaks the bound."""
    kw = _target_args(20001, 2, 4.0, 0.001)
    u = union_targets(alpha=0.05, r_alpha=0.5, **kw)
    b = tight_targets(alpha=0.05, union=u, search="bisect", **kw)
    common = dict(size=kw["size"], sigma=kw["sigma"], half_range=2.0, theta=kw["theta"])
    assert tight_failure_at(b["t_upper"], side="upper", epsilon=kw["eps_upper"],
                            **common) <= 0.025
    assert tight_failure_at(b["t_upper"] - 1, side="upper", epsilon=kw["eps_upper"],
                            **common) > 0.025
    assert tight_failure_at(b["t_lower"], side="lower", epsilon=kw["eps_lower"],
                            **common) <= 0.025
    assert tight_failure_at(b["t_lower"] + 1, side="lower", epsilon=kw["eps_lower"],
                            **common) > 0.025


@pytest.mark.parametrize("seed,ties,pairs", [(0, False, "all"), (1, True, "all"),
                                             (2, True, 4), (3, False, 3), (4, True, "all")])
def test_interval_is_the_same_with_bisected_or_scanned_targets(monkeypatch, seed, ties, pairs):
    """End to end (data with and without ties, all pairs and matchings, both algorithms): the
    same seed gives the same released interval whichever search found the targets."""
    x, y = data(420, seed=seed, ties=ties)
    out = []
    for scan_max in (10 ** 12, 0):
        monkeypatch.setattr(ci_module, "TIGHT_SCAN_MAX_MULTISET", scan_max)
        ci = theil_sen_ci(x, y, epsilon=3.0, ci_alpha=0.1, output_range=(-2.0, 3.0),
                          ci_method="tight", pairs=pairs, return_estimate=True, rng=seed)
        out.append((ci.details["target_search"], ci.details["t_lower"],
                    ci.details["t_upper"], ci.low, ci.high, ci.estimate))
    assert (out[0][0], out[1][0]) == ("scan", "bisect")
    assert out[0][1:] == out[1][1:]


@pytest.mark.slow
def test_bisected_targets_equal_the_scan_at_the_old_limit():
    """At the largest M the old search accepted (all pairs, n = 3162: M ≈ 10⁷)."""
    for eps in (0.5, 2.0, 20.0):
        kw = _target_args(3162, None, eps, 1 / max(eps * 3162, 200))
        for alpha in (0.05, 0.1):
            u = union_targets(alpha=alpha, r_alpha=0.5, **kw)
            a = tight_targets(alpha=alpha, union=u, search="scan", **kw)
            b = tight_targets(alpha=alpha, union=u, search="bisect", **kw)
            assert (a["t_lower"], a["t_upper"]) == (b["t_lower"], b["t_upper"])


def test_interval_on_20000_rows_runs_in_bounded_memory():
    """Before: n = 20,000 allocated the 2·10⁸ pair indices and slopes (MemoryError under a 3
    GiB address-space cap; the OS killed the CLI), and the tight method fell back to the
    Union targets (its search held all M + 1 = 4·10⁸ ranks).  Now O(n) memory, and the tight
    targets are searched by bisection (no warning)."""
    code = textwrap.dedent("""
        import resource, warnings
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
        import numpy as np
        from dpreg.simple import theil_sen_ci
        g = np.random.default_rng(0)
        x = g.uniform(0, 1, 20000); y = 0.5 * x + g.normal(0, 0.2, 20000)
        for meth in ("union", "tight"):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                ci = theil_sen_ci(x, y, epsilon=1.0, ci_alpha=0.1, output_range=(-2, 2),
                                  ci_method=meth, return_estimate=True, rng=0)
            assert ci.low < 0.5 < ci.high and ci.high - ci.low < 0.2, (ci.low, ci.high)
            assert "tight_search" not in ci.details
            if meth == "tight":
                assert ci.details["target_search"] == "bisect"
                assert ci.details["q_lower"] > ci.details["union_q_lower"]
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"


def test_estimator_labels_the_union_fallback_not_tight(monkeypatch):
    """Above the public multiset limit the estimator's interval used the Union targets: its
    uncertainty text and ci_method must say so, not "(tight)"."""
    from dpreg.simple import theil_sen_with_ci

    n = 600
    x, y = data(n, seed=6)
    monkeypatch.setattr(ci_module, "TIGHT_MAX_MULTISET", n * (n - 1) - 1)
    with pytest.warns(UserWarning, match="Union targets"):
        r = theil_sen_with_ci(x, y, epsilon=2.0, ci_alpha=0.1, x_bounds=(0.0, 1.0),
                              y_bounds=(-2.0, 3.0), ci_method="tight", rng=0)
    assert "(tight)" not in r.ci_method and "tight search skipped" in r.ci_method
    assert "union (tight search skipped" in r.uncertainty
    r_small = theil_sen_with_ci(x[:300], y[:300], epsilon=2.0, ci_alpha=0.1, x_bounds=(0.0, 1.0),
                                y_bounds=(-2.0, 3.0), ci_method="tight", rng=0)
    assert "(tight)" in r_small.ci_method


_TIED_X = 0.4321987  # a value the error message must not reveal


@pytest.mark.parametrize("algorithm,pairs", [("exact-fast", "all"), ("materialise", "all"),
                                             ("materialise", 3)])
@pytest.mark.parametrize("method", ["union", "tight", "calibrated", "auto"])
@pytest.mark.parametrize("return_estimate", [False, True])
def test_every_pair_tied_at_infinite_epsilon_raises_the_same_error_on_both_paths(
        algorithm, pairs, method, return_estimate):
    """Before: with every x equal the materialising path returned (−inf, inf, NaN) and the
    exact-fast path raised the point estimate's error after charging the ledger.  Now both
    raise the same library error before the ledger is charged, naming no data value."""
    from dpreg import Ledger, PureDP

    n = 450
    x = np.full(n, _TIED_X)
    y = np.random.default_rng(3).normal(size=n)
    led = Ledger(PureDP(math.inf))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidInputError, match="every pair has tied x") as err:
            theil_sen_ci(x, y, epsilon=math.inf, ci_alpha=0.1, output_range=(-2.0, 3.0),
                         ci_method=method, pairs=pairs, algorithm=algorithm,
                         return_estimate=return_estimate, ledger=led, rng=0)
    assert len(led.events()) == 0
    assert not any(ch.isdigit() for ch in str(err.value))  # no data value (no number at all)


@pytest.mark.parametrize("algorithm", ["exact-fast", "materialise"])
def test_every_pair_tied_at_finite_epsilon_is_the_flagged_range_on_both_paths(algorithm):
    """At finite ε the same data give the DP interval: all entries are ±∞, so it is the
    search range, flagged not informative (unchanged; both paths)."""
    x = np.full(450, _TIED_X)
    y = np.random.default_rng(3).normal(size=450)
    ci = theil_sen_ci(x, y, epsilon=1.0, ci_alpha=0.1, output_range=(-2.0, 3.0), ci_method="tight",
                      algorithm=algorithm, rng=0)
    assert (ci.low, ci.high) == (-2.0, 3.0) and not ci.informative


def test_line_with_interval_every_pair_tied_at_infinite_epsilon_raises_before_charging():
    from dpreg import Ledger, PureDP
    from dpreg.simple import theil_sen_with_ci

    x = np.full(450, _TIED_X)
    y = np.random.default_rng(3).normal(size=450)
    led = Ledger(PureDP(math.inf))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidInputError, match="every pair has tied x"):
            theil_sen_with_ci(x, y, epsilon=math.inf, ci_alpha=0.1, x_bounds=(0.0, 1.0),
                              y_bounds=(-3.0, 3.0), ledger=led, rng=0)
    assert len(led.events()) == 0
    # an ordinary ε = ∞ fit still charges (after its releases)
    x2, y2 = data(450, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theil_sen_with_ci(x2, y2, epsilon=math.inf, ci_alpha=0.1, x_bounds=(0.0, 1.0),
                          y_bounds=(-3.0, 3.0), ledger=led, rng=0)
    assert len(led.events()) == 1
