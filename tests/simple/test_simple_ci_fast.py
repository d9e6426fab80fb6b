"""The Theil-Sen slope interval on all pairs without materialising them: the exact-fast
sampler of :mod:`dpreg.simple.fast` at an arbitrary public target quantile q (the interval's
ends) against the exact materialising reference, the interval's two paths against each other,
and its memory at n = 20,000 (it used to build all n(n−1)/2 pairs: 1.5 GiB per array)."""

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
from dpreg.simple import theil_sen_ci
from dpreg.simple.ci import TIGHT_MAX_MULTISET
from dpreg.simple.fast import AllPairsEM, dp_median_all_pairs, pair_counter
from dpreg.simple.fast._grid import floor_grid
from dpreg.simple.fast._reference import exact_doubled, exact_em_intervals
from dpreg.simple.pairs import all_pairs, doubled_pair_values
from simple.test_simple_fast_ts import _bins, _counts, data


@pytest.mark.parametrize("q", [0.2, 0.7311, 0.05])
@pytest.mark.parametrize("theta", [0.0, 0.05])
@pytest.mark.parametrize("ties", [False, True])
def test_quantile_target_density_equals_the_reference_on_every_interval(q, theta, ties):
    """c_θ(φ) at target q is the reference's interval index and the log-score is the
    reference's −(ε/2)⌊|j − N·q|⌋ on every interval of positive length."""
    n = 80
    x, y = data(n, seed=5, ties=ties)
    lo, hi, eps = -0.5, 1.5, 2.0 / (2 * (n - 1))
    breaks, scores = exact_em_intervals(exact_doubled(x, y), epsilon=eps, lo=lo, hi=hi,
                                        theta=theta, q=q)
    em = AllPairsEM(pair_counter(x, y), epsilon=eps, lo=lo, hi=hi, theta=theta, q=q,
                    rng=np.random.default_rng(0))
    checked = 0
    for j in range(len(breaks) - 1):
        if not breaks[j + 1] > breaks[j]:
            continue
        phi = floor_grid((breaks[j] + breaks[j + 1]) / 2)
        if not breaks[j] < phi < breaks[j + 1]:
            continue
        c = em.c_theta(phi)
        assert c == j
        assert -(eps / 2) * em._gap(c) == pytest.approx(scores[j], abs=1e-12)
        checked += 1
    assert checked >= 50


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
    """χ² against the exact interval probabilities at q = 0.3 and two-sample KS against the
    materialising exp_quantile; the same tests reject the sampler at a wrong target (q=0.33)."""
    n, m, q = 150, 6000, 0.3
    x, y = data(n, seed=11, ties=True)
    lo, hi = -0.5, 1.5
    eps = 3.0 / (2 * (n - 1))
    breaks, scores = exact_em_intervals(exact_doubled(x, y), epsilon=eps, lo=lo, hi=hi,
                                        theta=theta, q=q)
    edges, probs = _bins(breaks, scores)
    fast = dp_median_all_pairs(x, y, epsilon=eps, lo=lo, hi=hi, theta=theta, q=q, rng=1,
                               size=m)
    assert np.all((fast > lo) & (fast <= hi))
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
        ci = theil_sen_ci(*data(60, seed=4), epsilon=2.0, alpha=0.1, output_range=(-2.0, 3.0),
                          return_estimate=True, algorithm=algorithm, rng=s, **kw)
        assert ci.details["algorithm"] == algorithm
        out.append((ci.low, ci.high, ci.estimate))
    return np.array(out)


@pytest.mark.parametrize("method", ["union", "tight"])
def test_interval_fast_and_materialised_have_the_same_law(method):
    a = _ends("exact-fast", range(300), method=method)
    b = _ends("materialise", range(1000, 1300), method=method)
    for j in range(3):
        assert stats.ks_2samp(a[:, j], b[:, j]).pvalue > ALPHA


def test_interval_routing_and_details():
    x, y = data(400, seed=1)
    kw = dict(epsilon=1.0, alpha=0.1, output_range=(-2.0, 3.0), rng=0)
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
    kw = dict(epsilon=np.inf, alpha=0.1, output_range=(-2.0, 3.0), return_estimate=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = theil_sen_ci(x, y, algorithm="exact-fast", **kw)
        m = theil_sen_ci(x, y, algorithm="materialise", **kw)
    for a, b in ((f.low, m.low), (f.high, m.high), (f.estimate, m.estimate)):
        assert a == pytest.approx(b, rel=1e-12)


def test_tight_targets_fall_back_to_union_above_the_public_limit():
    n = 3200
    assert n * (n - 1) > TIGHT_MAX_MULTISET
    x, y = data(n, seed=6)
    with pytest.warns(UserWarning, match="Union targets"):
        t = theil_sen_ci(x, y, epsilon=1.0, alpha=0.1, output_range=(-2.0, 3.0),
                         method="tight", rng=0)
    u = theil_sen_ci(x, y, epsilon=1.0, alpha=0.1, output_range=(-2.0, 3.0), method="union",
                     rng=0)
    assert "tight_search" in t.details
    assert (t.low, t.high) == (u.low, u.high)


def test_interval_on_20000_rows_runs_in_bounded_memory():
    """Before: n = 20,000 allocated the 2·10⁸ pair indices and slopes (MemoryError under a 3
    GiB address-space cap; the OS killed the CLI).  Now O(n) memory."""
    code = textwrap.dedent("""
        import resource, warnings
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
        import numpy as np
        from dpreg.simple import theil_sen_ci
        g = np.random.default_rng(0)
        x = g.uniform(0, 1, 20000); y = 0.5 * x + g.normal(0, 0.2, 20000)
        for meth in ("union", "tight"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ci = theil_sen_ci(x, y, epsilon=1.0, alpha=0.1, output_range=(-2, 2),
                                  method=meth, return_estimate=True, rng=0)
            assert ci.low < 0.5 < ci.high and ci.high - ci.low < 0.2, (ci.low, ci.high)
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"


def test_estimator_labels_the_union_fallback_not_tight():
    """Above the public multiset limit the estimator's interval used the Union targets: its
    uncertainty text and ci_method must say so, not "(tight)"."""
    from dpreg.simple import theil_sen_with_ci

    n = 3200
    x, y = data(n, seed=6)
    with pytest.warns(UserWarning, match="Union targets"):
        r = theil_sen_with_ci(x, y, epsilon=2.0, alpha=0.1, x_bounds=(0.0, 1.0),
                              y_bounds=(-2.0, 3.0), rng=0)
    assert "(tight)" not in r.ci_method and "tight search skipped" in r.ci_method
    assert "union (tight search skipped" in r.uncertainty
    r_small = theil_sen_with_ci(x[:300], y[:300], epsilon=2.0, alpha=0.1, x_bounds=(0.0, 1.0),
                                y_bounds=(-2.0, 3.0), rng=0)
    assert "(tight)" in r_small.ci_method
