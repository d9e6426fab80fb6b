"""TukeyEM: volumes, the PTR distance bound, the restricted exponential mechanism, sampling,
and the reference-code bugs (PTR Laplace scale, k+1 off-by-one, sampling-level off-by-one)."""

import math

import numpy as np
import pytest
from scipy import stats

from _stats import ALPHA, chi2_pvalue
from dpreg import ApproxDP, InvalidInputError, Ledger
from dpreg.mechanisms import ptr_test, ptr_threshold
from dpreg.multivariate import tukey as tk
from dpreg.privacy import EPSILON_MAX
from dpreg.privacy.neighbours import Neighbouring


# ------------------------------------------------------------------------ reference-code variants
def reference_code_distance(lv, eps, delta, t):
    """The google-research binary search, restated (test-only): log-volumes are indexed from
    depth 1 (``lv[1:]`` here); it returns one more than the paper's A whenever A >= 0."""
    vols = lv[1:]

    def search(k_low, k_high):
        k = int((k_low + k_high) / 2)
        a = vols[t - k - 2]
        deep = vols[t + k + 1: len(vols) - 1]
        terms = (eps / 2) * np.arange(1, len(deep) + 1)
        if np.min((a - deep) - terms) <= math.log(delta / (8 * math.exp(eps))):
            if k_low >= k_high - 1:
                return k_high
            return search(k_low + int((k_high - k_low) / 2), k_high)
        if k_high > k_low + 1:
            return search(k_low, k_high - int((k_high - k_low) / 2))
        return k_low

    return search(-1, t - 1)


def brute_force_distance(lv, t, eps, delta):
    """The paper's A by direct enumeration of k and g."""
    h = lv.size - 1
    best = -1
    thr = math.log(delta / (8 * math.exp(eps)))
    for k in range(0, t - 1):
        for g in range(1, h):
            j = t + k + g + 1
            if j > h - 1:
                break
            if np.isfinite(lv[j]) and lv[t - k - 1] - lv[j] - eps * g / 2 <= thr:
                best = k
                break
    return best


def sorted_models(models):
    return np.sort(np.asarray(models, dtype=float).T, axis=1)


# ------------------------------------------------------------------------ volumes and A
def test_log_volumes_match_definition():
    rng = np.random.default_rng(0)
    for m in (8, 9, 20, 21):
        models = rng.normal(size=(m, 3))
        P = sorted_models(models)
        lv = tk.log_volumes(P)
        assert lv[0] == math.inf and lv.size == (m + 1) // 2 + 1
        for ell in range(1, (m + 1) // 2 + 1):
            srt = np.sort(models, axis=0)
            vol = np.prod(srt[m - ell] - srt[ell - 1])
            if vol > 0:
                assert lv[ell] == pytest.approx(math.log(vol), rel=1e-12)
            else:
                assert lv[ell] == -math.inf
        assert np.all(np.diff(lv[1:]) <= 0)  # nested boxes


def test_distance_matches_brute_force_and_is_one_sensitive_under_swaps():
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(400):
        m = int(rng.integers(8, 60))
        d = int(rng.integers(1, 4))
        eps = float(rng.choice([0.5, 2.0, 5.0, 20.0]))
        delta = float(rng.choice([1e-5, 1e-3, 0.1]))
        models = rng.standard_normal((m, d)) * rng.choice([0.1, 1.0], size=d)
        t = tk.target_depth(m)
        lv = tk.log_volumes(sorted_models(models))
        A = tk.distance_lower_bound(lv, t, eps, delta)
        assert A == brute_force_distance(lv, t, eps, delta)
        assert -1 <= A <= t - 2
        swapped = models.copy()
        swapped[int(rng.integers(m))] = rng.standard_normal(d) * float(rng.choice([0.1, 1, 10]))
        A2 = tk.distance_lower_bound(tk.log_volumes(sorted_models(swapped)), t, eps, delta)
        assert abs(A - A2) <= 1
        checked += A >= 0
    assert checked > 50  # the property was exercised on non-trivial bounds


def test_reference_code_returns_a_plus_one():
    rng = np.random.default_rng(2)
    seen = set()
    for _ in range(300):
        m = int(rng.integers(16, 80))
        eps = float(rng.choice([2.0, 5.0, 10.0, 20.0]))
        models = rng.standard_normal((m, 2))
        t = tk.target_depth(m)
        lv = tk.log_volumes(sorted_models(models))
        A = tk.distance_lower_bound(lv, t, eps, 1e-3)
        code = reference_code_distance(lv, eps, 1e-3, t)
        assert code == (-1 if A == -1 else min(A + 1, t - 1))
        seen.add(A >= 0)
    assert seen == {True, False}


def test_reference_code_off_by_one_breaks_sensitivity_on_a_neighbouring_pair():
    """A swap of one model takes the paper's A from 0 to −1 (fine: 1-sensitive) but the
    reference code's value from 1 to −1: a jump of 2, so its Laplace(1/ε₁) test is not ε₁-DP."""
    rng = np.random.default_rng(0)
    delta = 1e-3
    for _ in range(5000):
        m = int(rng.integers(16, 41))
        eps = float(rng.choice([2.0, 5.0, 10.0, 20.0]))
        models = rng.standard_normal((m, 1)) * rng.choice([1.0, 0.2])
        t = tk.target_depth(m)
        lv = tk.log_volumes(sorted_models(models))
        if tk.distance_lower_bound(lv, t, eps, delta) != 0:
            continue
        for _ in range(60):
            nb = models.copy()
            nb[int(rng.integers(m))] = rng.standard_normal(1) * 5
            lv2 = tk.log_volumes(sorted_models(nb))
            if tk.distance_lower_bound(lv2, t, eps, delta) == -1:
                code = (reference_code_distance(lv, eps, delta, t),
                        reference_code_distance(lv2, eps, delta, t))
                assert code == (1, -1)
                return
    pytest.fail("no neighbouring pair with A = 0 / A = -1 found")


# ------------------------------------------------------------------------ PTR
def test_ptr_threshold_and_unsafe_pass_probability():
    eps1, delta = math.log(3) / 2, 1e-5
    thr = ptr_threshold(eps1, delta)
    assert thr == pytest.approx(math.log(1 / (2 * delta)) / eps1)
    # an unsafe dataset (A = -1) passes with probability P[Lap(1/ε₁) > thr + 1] = δ·e^{-ε₁}
    p_unsafe = 0.5 * math.exp(-eps1 * (thr + 1))
    assert p_unsafe == pytest.approx(delta * math.exp(-eps1), rel=1e-12)


def test_ptr_pass_rate_uses_laplace_scale_one_over_epsilon():
    """Pass frequency of the PTR step equals ½·exp(−ε₁(thr − A)); the reference code's
    Laplace scale ε₁ gives a very different frequency and is rejected."""
    eps1, delta, A, n = 0.5, 0.1, 1, 40_000
    thr = ptr_threshold(eps1, delta)
    gen = np.random.default_rng(3)
    passes = sum(ptr_test(A, epsilon=eps1, delta=delta, rng=gen) for _ in range(n))
    p_right = 0.5 * math.exp(-eps1 * (thr - A))
    p_code = 0.5 * math.exp(-(thr - A) / eps1)
    assert stats.binomtest(passes, n, p_right).pvalue > ALPHA
    assert stats.binomtest(passes, n, p_code).pvalue < ALPHA
    for wrong in (0.7, 1.3):  # power: a 30% wrong ε₁ is detected
        p_wrong = 0.5 * math.exp(-eps1 * wrong * (thr - A))
        assert stats.binomtest(passes, n, p_wrong).pvalue < ALPHA


def test_tukey_em_calls_ptr_with_half_epsilon_and_paper_distance(monkeypatch):
    calls = []

    def spy(distance, *, epsilon, delta, rng):
        calls.append((distance, epsilon, delta))
        return True

    monkeypatch.setattr(tk, "ptr_test", spy)
    seen = {}
    real = tk.distance_lower_bound

    def spy_distance(lv, t, eps_em, delta):
        seen["args"] = (t, eps_em, delta)
        seen["value"] = real(lv, t, eps_em, delta)
        return seen["value"]

    monkeypatch.setattr(tk, "distance_lower_bound", spy_distance)
    X, y = data(2000, 2, seed=4)
    tk.tukey_em(X, y, epsilon=2.0, delta=1e-4, n_models=100, rng=0)
    assert calls == [(seen["value"], 1.0, 1e-4)]
    assert seen["args"] == (25, 1.0, 1e-4)


# ------------------------------------------------------------------------ level sampling
def exact_level_probs(lv, t, eps_em, half=True):
    h = lv.size - 1
    levels = np.arange(t, h + 1)
    V = np.exp(lv[levels] - lv[t])
    W = V - np.append(V[1:], 0.0)
    w = W * np.exp((eps_em / 2 if half else eps_em) * (levels - t))
    return levels, w / w.sum()


def depth_counts(points, models, levels):
    depths = np.array([tk.approximate_depth(p, models) for p in points])
    return np.array([(depths == lv).sum() for lv in levels]), depths


@pytest.fixture(scope="module")
def model_set():
    rng = np.random.default_rng(5)
    models = rng.standard_normal((40, 2))
    P = sorted_models(models)  # no jitter needed: continuous draws have no ties
    return models, P, tk.log_volumes(P), tk.target_depth(40)


def draw_points(P, lv, t, eps_em, n, seed, level_shift=0):
    gen = np.random.default_rng(seed)
    levels, logits = tk.level_log_weights(lv, t, eps_em)
    out = []
    for _ in range(n):
        level = int(levels[int(np.argmax(logits + gen.gumbel(size=logits.size)))])
        level = min(level + level_shift, lv.size - 1)
        out.append(tk.sample_at_depth(P, level, gen))
    return np.array(out)


def test_points_have_the_drawn_depth_with_em_probabilities(model_set):
    models, P, lv, t = model_set
    eps_em = 1.0
    pts = draw_points(P, lv, t, eps_em, 6000, seed=6)
    levels, probs = exact_level_probs(lv, t, eps_em)
    counts, depths = depth_counts(pts, models, levels)
    assert depths.min() >= t
    assert chi2_pvalue(counts, probs) > ALPHA
    # power: dropping the ½ (the paper's monotone version) is a different distribution
    _, no_half = exact_level_probs(lv, t, eps_em, half=False)
    assert chi2_pvalue(counts, no_half) < ALPHA
    for wrong in (0.7, 1.3):
        _, pw = exact_level_probs(lv, t, eps_em * wrong)
        assert chi2_pvalue(counts, pw) < ALPHA


def test_reference_code_level_off_by_one_is_detected(model_set):
    """The reference code weights depth ℓ but samples at ℓ + 1; the depths of its points do
    not follow the mechanism's distribution."""
    models, P, lv, t = model_set
    pts = draw_points(P, lv, t, 1.0, 3000, seed=7, level_shift=1)
    levels, probs = exact_level_probs(lv, t, 1.0)
    counts, depths = depth_counts(pts, models, levels)
    assert depths.min() >= t + 1
    assert chi2_pvalue(counts, probs) < ALPHA


def test_sample_at_depth_is_uniform_on_the_exact_depth_region(model_set):
    """d = 2: the region of depth exactly ℓ is the ring between two boxes; split it into the
    8 pieces around the inner box and compare counts with the areas."""
    models, P, lv, t = model_set
    m = models.shape[0]
    level = t + 3
    gen = np.random.default_rng(8)
    pts = np.array([tk.sample_at_depth(P, level, gen) for _ in range(8000)])
    outer_lo, outer_hi = P[:, level - 1], P[:, m - level]
    inner_lo, inner_hi = P[:, level], P[:, m - level - 1]
    cuts = [np.array([outer_lo[j], inner_lo[j], inner_hi[j], outer_hi[j]]) for j in range(2)]
    widths = [np.diff(c) for c in cuts]
    cell = [np.clip(np.searchsorted(cuts[j], pts[:, j], side="right") - 1, 0, 2)
            for j in range(2)]
    counts = np.zeros((3, 3))
    np.add.at(counts, (cell[0], cell[1]), 1)
    area = np.outer(widths[0], widths[1])
    assert counts[1, 1] == 0  # never inside the deeper box
    mask = np.ones((3, 3), bool)
    mask[1, 1] = False
    probs = area[mask] / area[mask].sum()
    assert chi2_pvalue(counts[mask], probs) > ALPHA
    assert all(tk.approximate_depth(p, models) == level for p in pts[:300])


def test_top_level_even_m_samples_the_central_box():
    rng = np.random.default_rng(9)
    models = rng.standard_normal((10, 3))
    P = sorted_models(models)
    gen = np.random.default_rng(0)
    for _ in range(50):
        p = tk.sample_at_depth(P, 5, gen)
        assert tk.approximate_depth(p, models) == 5


# ------------------------------------------------------------------------ end to end
def data(n, d, seed=0, noise=0.5):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, d))])
    y = X @ np.linspace(1.0, -1.0, d + 1) + rng.normal(0, noise, n)
    return X, y


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("m", [40, 41])
def test_infinite_epsilon_is_a_point_of_maximal_depth(m):
    X, y = data(40 * 30, 2, seed=10)
    res = tk.tukey_em(X, y, epsilon=math.inf, delta=1e-5, n_models=m, rng=1)
    gen = np.random.default_rng(1)
    models = tk.partition_models(X, y, m, gen)
    P = tk.jitter_and_sort(models, gen)
    assert tk.approximate_depth(res.params.to_numpy(), P.T) == (m + 1) // 2
    np.testing.assert_allclose(res.params.to_numpy(), np.median(P, axis=1))


def test_large_epsilon_picks_the_deepest_level():
    X, y = data(3000, 2, seed=11)
    m = 100
    res = tk.tukey_em(X, y, epsilon=EPSILON_MAX, delta=0.01, n_models=m, rng=2)
    gen = np.random.default_rng(2)
    P = tk.jitter_and_sort(tk.partition_models(X, y, m, gen), gen)
    assert tk.approximate_depth(res.params.to_numpy(), P.T) == m // 2


def test_accuracy_with_enough_data():
    X, y = data(40_000, 3, seed=12)
    res = tk.tukey_em(X, y, epsilon=1.0, delta=1e-5, n_models=1000, rng=3)
    assert not res.failed
    np.testing.assert_allclose(res.params.to_numpy(), np.linspace(1, -1, 4), atol=0.1)
    assert res.privacy.neighbouring is Neighbouring.REPLACE_ONE
    assert res.privacy.budget == ApproxDP(1.0, 1e-5)


def test_ptr_failure_is_typed_bottom_not_zero_vector():
    X, y = data(400, 2, seed=13)
    res = tk.tukey_em(X, y, epsilon=0.2, delta=1e-6, n_models=20, rng=4)
    assert res.failed and "propose-test-release" in res.reason
    with pytest.raises(Exception, match="propose-test-release"):
        res.params  # noqa: B018
    assert res.to_dict()["coef"] is None


def test_partition_and_rank_deficient_batches():
    rng = np.random.default_rng(14)
    x = rng.normal(size=103)
    X = np.column_stack([np.ones(103), x, 2 * x])  # collinear columns
    y = 1 + x
    models = tk.partition_models(X, y, 10, np.random.default_rng(0))
    assert models.shape == (10, 3) and np.all(np.isfinite(models))
    np.testing.assert_allclose(models, np.tile([1.0, 0.2, 0.4], (10, 1)), atol=1e-8)  # min norm


@pytest.mark.parametrize("m,match", [(7, "n_models"), (8.5, "n_models"),
                                     (40, r"n_models must be <= n // d = 33")])
def test_bad_n_models_costs_nothing(m, match):
    X, y = data(100, 2)
    ledger = Ledger(ApproxDP(10, 0.1))
    with pytest.raises(InvalidInputError, match=match):
        tk.tukey_em(X, y, epsilon=1.0, delta=1e-5, n_models=m, ledger=ledger)
    with pytest.raises(InvalidInputError, match="delta"):
        tk.tukey_em(X, y, epsilon=1.0, delta=0.0, n_models=10, ledger=ledger)
    assert ledger.events() == []


# ------------------------------------------------------------------------ n_models="auto" (issue 21)
def test_default_n_models_is_auto_and_runs_where_1000_could_not():
    """n = 4,000 rows, d = 4 features (+ intercept): the old default n_models=1000 needed
    n >= 5,000 and raised; "auto" picks m from the public n and d, spends nothing extra and
    fits.  An explicit integer that is too large still raises before anything is charged."""
    from dpreg.auto.rules import tukey_auto_n_models
    from dpreg.linear_model import TukeyEM

    rng = np.random.default_rng(5)
    X = rng.normal(size=(4000, 4))
    y = X @ [1.0, -0.5, 0.25, 2.0] + 0.5 + rng.normal(0, 0.5, 4000)
    assert TukeyEM().get_params()["n_models"] == "auto"
    ledger = Ledger(ApproxDP(2.0, 1e-5))
    est = TukeyEM(epsilon=2.0, delta=1e-5, random_state=3, ledger=ledger).fit(X, y)
    m = est.results_.privacy.details["n_models"]
    assert m == tukey_auto_n_models(4000, 5, epsilon=2.0, delta=1e-5) and 8 <= m <= 800
    assert est.results_.privacy.details["n_models_choice"] == "auto"
    assert ledger.spent() == ApproxDP(2.0, 1e-5)  # nothing beyond the fit's own (ε, δ)
    np.testing.assert_allclose(est.coef_, [1.0, -0.5, 0.25, 2.0], atol=0.3)
    led2 = Ledger(ApproxDP(2.0, 1e-5))
    with pytest.raises(InvalidInputError, match=r"n_models must be <= n // d = 800"):
        TukeyEM(epsilon=2.0, delta=1e-5, n_models=1000, ledger=led2).fit(X, y)
    with pytest.raises(InvalidInputError, match="n_models must be 'auto' or an integer"):
        TukeyEM(epsilon=2.0, delta=1e-5, n_models="many", ledger=led2).fit(X, y)
    with pytest.raises(InvalidInputError, match=r"n_models='auto' needs n >= 8·\(d \+ 2\) = 56"):
        tk.tukey_em(np.ones((50, 5)), np.ones(50), epsilon=1.0, delta=1e-5, ledger=led2)
    assert led2.events() == []


@pytest.mark.parametrize("n,d,eps,delta", [(6916, 7, math.log(3), 1e-5), (8645, 9, 1.0, 1e-6),
                                           (20_000, 3, 1.0, 1e-6), (3000, 4, 0.5, 1e-6),
                                           (200, 3, 1.0, 1e-5)])
def test_auto_n_models_is_the_smallest_predicted_to_pass(n, d, eps, delta):
    """m is the rule's m when that is predicted to pass, else the smallest larger m that is
    (never above ⌊n/(d + 2)⌋), else the feasible m most likely to pass."""
    from dpreg.auto.rules import TUKEY_AUTO_PASS_PROBABILITY as TARGET
    from dpreg.auto.rules import tukey_auto_n_models, tukey_pass_probability
    from dpreg.preprocess import tukey_n_models

    def p(m):
        return tukey_pass_probability(m, d, epsilon=eps, delta=delta)

    m = tukey_auto_n_models(n, d, epsilon=eps, delta=delta)
    hi = n // (d + 2)
    m0 = min(max(8, tukey_n_models(n, d)), hi)
    assert m0 <= m <= hi
    if p(m0) >= TARGET:
        assert m == m0
    elif p(m) >= TARGET:
        assert p(m - 1) < TARGET  # the smallest passing m (the step search is exact here)
    else:  # none reaches the target: the best feasible one
        assert p(m) == max(p(k) for k in range(m0, hi + 1))


def test_auto_n_models_passes_where_the_rule_fails():
    """ISLP-Bikeshare-like shape (n = 6,916 training rows, 6 features, ε = ln 3, δ = 1e-5, the
    amin-r2 cell): the rule's 494 models are predicted to fail, auto's m to pass."""
    from dpreg.auto.rules import tukey_auto_n_models, tukey_pass_probability

    m = tukey_auto_n_models(6916, 7, epsilon=math.log(3), delta=1e-5)
    assert tukey_pass_probability(494, 7, epsilon=math.log(3), delta=1e-5) < 1e-3
    assert 494 < m < 988 and tukey_pass_probability(m, 7, epsilon=math.log(3),
                                                    delta=1e-5) >= 0.9999


# ------------------------------------------------------- rows per model (issue 21, item 6)
def test_auto_gives_every_model_at_least_d_plus_2_rows():
    """ISLP Wage's training shape in amin-r2 (2,400 rows, d = 4 with the intercept, ε = ln 3,
    δ = 1e-5): auto used to raise m to 558, i.e. 4 rows per model -- each model interpolates
    its rows.  Now every model gets at least d + 2 rows, the public rule."""
    from dpreg.auto.rules import tukey_auto_n_models
    from dpreg.multivariate.tukey import TUKEY_MIN_EXTRA_ROWS, tukey_min_rows_per_model

    assert TUKEY_MIN_EXTRA_ROWS == 2 and tukey_min_rows_per_model(4) == 6
    for n, d in [(2400, 4), (6916, 7), (3000, 4), (500, 3), (17_600, 11)]:
        m = tukey_auto_n_models(n, d, epsilon=math.log(3), delta=1e-5)
        assert n // m >= d + 2, (n, d, m)
    assert tukey_auto_n_models(55, 5, epsilon=1.0, delta=1e-5) < 8  # n < 8·(d + 2)


def test_auto_on_wage_never_releases_a_wild_model():
    """The failure the rule fixes, end to end: TukeyEM(n_models="auto") on ISLP Wage (wage ~
    age + education + year, the amin-r2 split) either fails its PTR check (⊥: TukeyEM does not
    apply at 2,400 rows and ε = ln 3) or releases a model whose test R² is above −1.  Before the
    rule, PTR passed with 4-row models and the test R² was between −18,000 and −80."""
    pytest.importorskip("ISLP")
    from dpreg.bench.datasets import multivariate
    from dpreg.bench.kinds.multivariate import _split

    data = multivariate("wage")
    tr, te = _split(data.y.size, 0.2, 42)
    A = np.column_stack([np.ones(data.y.size), data.X])
    yte = data.y[te]
    for seed in range(5):
        r = tk.tukey_em(A[tr], data.y[tr], epsilon=math.log(3), delta=1e-5, rng=seed)
        assert r.extra["batch_size"] >= 6
        if not r.failed:
            pred = A[te] @ r.params.to_numpy()
            r2 = 1 - np.sum((yte - pred) ** 2) / np.sum((yte - yte.mean()) ** 2)
            assert r2 > -1.0, (seed, r2)
