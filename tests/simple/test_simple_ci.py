"""Confidence intervals for the slope: targets, budgets, limits and (slow) coverage study."""

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import special, stats

from dpreg import Ledger, PrivacyLeakWarning, PureDP
from dpreg.exceptions import InvalidInputError
from dpreg.simple import nonprivate_theil_sen_ci, ols_ci, theil_sen_ci
from dpreg.simple.ci import tight_failure_probabilities, tight_targets, union_targets
from dpreg.simple.pairs import kendall_null_variance, null_variance_bound, round_robin_matchings

pytestmark = pytest.mark.filterwarnings("ignore::dpreg.PrivacyLeakWarning")


def make_data(n, rng, design="uniform", slope=0.5, sigma=0.1):
    if design == "uniform":
        x = rng.uniform(0, 1, n)
    elif design == "two-point":
        x = np.where(np.arange(n) % 2 == 0, 0.0, 1.0)
    elif design == "clustered":
        x = rng.choice([0.2, 0.5, 0.8], size=n) + rng.normal(0, 0.01, n)
    else:  # pragma: no cover
        raise ValueError(design)
    return x, slope * x + 0.2 + rng.normal(0, sigma, n)


# --------------------------------------------------------------------------------------------
# targets
# --------------------------------------------------------------------------------------------
def test_union_targets_formula():
    t = union_targets(size=1000, sigma=0.05, alpha=0.1, r_alpha=0.5, eps_lower=0.01,
                      eps_upper=0.02, half_range=2.0, theta=0.01)
    b = 0.5 * stats.norm.ppf(1 - 0.05 / 8) * 0.05
    c = 2 * math.log(4 * 2.0 / (0.05 * 0.01)) / (0.01 * 1000)
    assert t["b"] == pytest.approx(b)
    assert t["c_lower"] == pytest.approx(c) and t["c_upper"] == pytest.approx(c / 2)
    assert t["q_lower"] == pytest.approx(0.5 - b - c)
    assert t["q_upper"] == pytest.approx(0.5 + b + c / 2)


def brute_force_failures(size, sigma, eps, ratio):
    m = np.arange(size + 1)
    cdf = special.ndtr((2 * m / size - 1) / sigma)
    cdf[-1] = 1.0
    p = np.diff(cdf, prepend=0.0)
    f_up, f_lo = np.empty(size + 1), np.empty(size + 1)
    for t in range(size + 1):
        with np.errstate(over="ignore"):
            cap_up = np.minimum(1, ratio * np.exp(-eps * (t - m) / 2))
            cap_lo = np.minimum(1, ratio * np.exp(-eps * (m - t) / 2))
        f_up[t] = (1 - cdf[t]) + np.sum(p[m <= t] * cap_up[m <= t])
        f_lo[t] = cdf[t] + np.sum(p[m > t] * cap_lo[m > t])
    return f_lo, f_up


@pytest.mark.parametrize("size,sigma,eps,ratio", [
    (40, 0.2, 0.5, 200.0), (41, 0.1, 3.0, 50.0), (60, 0.3, 0.05, 400.0), (30, 0.2, 1.0, 0.5),
    (50, 0.15, 100.0, 1e4),
])
def test_tight_failure_probabilities_match_brute_force(size, sigma, eps, ratio):
    f_lo, f_up = tight_failure_probabilities(size=size, sigma=sigma, eps_lower=eps,
                                             eps_upper=eps, half_range=ratio, theta=1.0)
    b_lo, b_up = brute_force_failures(size, sigma, eps, ratio)
    np.testing.assert_allclose(f_up, b_up, atol=1e-12)
    np.testing.assert_allclose(f_lo, b_lo, atol=1e-12)


def test_point_mass_is_a_lattice_cell_not_a_density():
    """Sarathy & Vadhan's proof uses the density F'_U(1 − 2m/M) as the mass of rank m; the
    masses must sum to one, which the density (times nothing) does not."""
    size, sigma = 400, 0.05
    m = np.arange(size + 1)
    cells = np.diff(special.ndtr((2 * m / size - 1) / sigma), prepend=0.0)
    density = stats.norm(scale=sigma).pdf(1 - 2 * m / size)
    assert cells.sum() == pytest.approx(1.0, abs=1e-9)
    assert density.sum() == pytest.approx(size / 2, rel=0.01)  # overstated by about M/2


@pytest.mark.parametrize("size,sigma,eps", [(4000, 0.03, 0.01), (20000, 0.02, 0.002),
                                            (800, 0.08, 0.2)])
def test_tight_targets_are_never_wider_than_union(size, sigma, eps):
    for alpha in (0.05, 0.1, 0.3):
        u = union_targets(size=size, sigma=sigma, alpha=alpha, r_alpha=0.5, eps_lower=eps,
                          eps_upper=eps, half_range=2.0, theta=0.01)
        t = tight_targets(size=size, sigma=sigma, alpha=alpha, eps_lower=eps, eps_upper=eps,
                          half_range=2.0, theta=0.01, union=u)
        assert u["q_lower"] <= t["q_lower"] <= 0.5 <= t["q_upper"] <= u["q_upper"]
        if t["t_upper"] is not None:
            assert t["failure_upper"] <= alpha / 2
            f_lo, f_up = tight_failure_probabilities(size=size, sigma=sigma, eps_lower=eps,
                                                     eps_upper=eps, half_range=2.0, theta=0.01)
            # the closest qualifying target: one rank nearer the middle fails the bound
            if t["t_upper"] > math.ceil(size / 2):
                assert f_up[t["t_upper"] - 1] > alpha / 2


# --------------------------------------------------------------------------------------------
# the DP interval
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("pairs,nv", [("all", "bound"), ("all", "kendall"), (5, "bound")])
def test_infinite_epsilon_is_the_nonprivate_interval(pairs, nv):
    g = np.random.default_rng(1)
    x, y = make_data(60, g)
    for method in ("union", "tight"):
        with pytest.warns(PrivacyLeakWarning):
            ci = theil_sen_ci(x, y, epsilon=math.inf, output_range=(-2, 2), ci_method=method,
                              pairs=pairs, null_variance=nv, return_estimate=True, rng=3)
        ref = nonprivate_theil_sen_ci(x, y, pairs=pairs, null_variance=nv, rng=3)
        assert (ci.low, ci.high, ci.estimate) == (ref.low, ref.high, ref.estimate)


def test_budget_split_and_ledger():
    g = np.random.default_rng(2)
    x, y = make_data(80, g)
    led = Ledger(PureDP(3.0))
    ci = theil_sen_ci(x, y, epsilon=1.0, output_range=(-2, 2), ledger=led, rng=0)
    d = ci.details
    assert led.spent() == PureDP(1.0) and ci.estimate is None
    assert d["epsilon_lower"] == pytest.approx(0.5) and d["epsilon_upper"] == pytest.approx(0.5)
    assert d["mechanism_epsilon_lower"] == pytest.approx(0.5 / (2 * 79))  # ε/(4k)
    ci = theil_sen_ci(x, y, epsilon=1.5, output_range=(-2, 2), return_estimate=True,
                      ledger=led, rng=0)
    d = ci.details
    assert led.spent() == PureDP(2.5)
    shares = (d["epsilon_lower"], d["epsilon_upper"], d["epsilon_estimate"])
    assert all(s == pytest.approx(0.5) for s in shares) and sum(shares) <= 1.5
    assert d["mechanism_epsilon_estimate"] == pytest.approx(0.5 / (2 * 79))
    assert ci.estimate is not None and -2 <= ci.estimate <= 2
    assert ci.privacy.budget == PureDP(1.5) and ci.privacy.mechanism == "DPWideTSCI (union)"


def test_null_variance_used_is_data_independent():
    g = np.random.default_rng(3)
    x, y = make_data(50, g)
    a = theil_sen_ci(x, y, epsilon=1, output_range=(-2, 2), pairs=4, rng=7)
    b = theil_sen_ci(np.round(x, 1), y, epsilon=1, output_range=(-2, 2), pairs=4, rng=7)
    assert a.details["null_variance"] == b.details["null_variance"]  # same S, other x
    assert a.details["null_variance"] == null_variance_bound(round_robin_matchings(50, 4, 7))
    k = theil_sen_ci(x, y, epsilon=1, output_range=(-2, 2), null_variance="kendall", rng=0)
    assert k.details["null_variance"] == kendall_null_variance(50)


def test_extreme_targets_give_the_range_without_sampling():
    g = np.random.default_rng(4)
    x, y = make_data(20, g)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    ci = theil_sen_ci(x, y, epsilon=0.1, output_range=(-2, 3), rng=gen)
    assert (ci.low, ci.high) == (-2.0, 3.0)
    assert ci.details["q_lower"] <= 0 and ci.details["q_upper"] >= 1
    assert gen.bit_generator.state == state  # decided from public quantities: nothing drawn


def test_interval_is_informative_at_large_eps_n():
    g = np.random.default_rng(5)
    x, y = make_data(1500, g)
    for method in ("union", "tight"):
        ci = theil_sen_ci(x, y, epsilon=2, output_range=(-2, 2), ci_method=method, pairs=10,
                          rng=1)
        assert ci.low < 0.5 < ci.high and ci.width < 0.6
    u = theil_sen_ci(x, y, epsilon=2, output_range=(-2, 2), ci_method="union", pairs=10, rng=1)
    t = theil_sen_ci(x, y, epsilon=2, output_range=(-2, 2), ci_method="tight", pairs=10, rng=1)
    assert t.details["q_upper"] - t.details["q_lower"] < u.details["q_upper"] - u.details[
        "q_lower"]
    lo, hi = t
    assert (lo, hi) == (t.low, t.high) and 0.5 in t


def test_ols_ci_matches_statsmodels():
    g = np.random.default_rng(6)
    x, y = make_data(40, g)
    ours = ols_ci(x, y, ci_alpha=0.1)
    ref = sm.OLS(y, sm.add_constant(x)).fit().conf_int(alpha=0.1)[1]
    assert (ours.low, ours.high) == pytest.approx(tuple(ref), rel=1e-10)


def test_nonprivate_theil_sen_ci_kendall_equals_exact_without_ties():
    g = np.random.default_rng(7)
    x, y = make_data(40, g)
    a = nonprivate_theil_sen_ci(x, y, null_variance="exact")
    b = nonprivate_theil_sen_ci(x, y, null_variance="kendall")
    assert (a.low, a.high) == (b.low, b.high)
    assert a.low < a.estimate < a.high


@pytest.mark.parametrize("kw,match", [
    ({"ci_alpha": 0}, "ci_alpha"), ({"ci_alpha": 1.5}, "ci_alpha"), ({"ci_method": "exact"}, "ci_method"),
    ({"theta": 0}, "theta"), ({"theta": 10}, "theta"), ({"r_alpha": 1}, "r_alpha"),
    ({"null_variance": "kendall", "pairs": 3}, "kendall"), ({"null_variance": "exact"},
                                                           "null_variance"),
    ({"return_estimate": "yes"}, "return_estimate"), ({"output_range": (2, -2)}, "output_range"),
    ({"epsilon": 0}, "epsilon"), ({"pairs": 0}, "pairs"),
])
def test_bad_arguments(kw, match):
    g = np.random.default_rng(8)
    x, y = make_data(10, g)
    led = Ledger(PureDP(10))
    args = {"epsilon": 1.0, "output_range": (-2, 2), "ledger": led, **kw}
    with pytest.raises(InvalidInputError, match=match):
        theil_sen_ci(x, y, **args)
    assert led.events() == []


# --------------------------------------------------------------------------------------------
# slow: coverage study
# --------------------------------------------------------------------------------------------
DESIGNS = ("uniform", "two-point", "clustered")
ALPHAS = (0.05, 0.1)


def coverage_table(n, eps, pairs, reps, seed, designs=DESIGNS, methods=("union", "tight"),
                   null_variance="bound", baselines=True):
    g = np.random.default_rng(seed)
    rows = {}
    for design in designs:
        keys = [(m, a) for m in methods for a in ALPHAS]
        if baselines:
            keys += [(b, a) for b in ("nonprivate-TS", "OLS-t") for a in ALPHAS]
        hits = {key: [] for key in keys}
        widths = {key: [] for key in keys}
        for _ in range(reps):
            x, y = make_data(n, g, design)
            for m, a in keys:
                if m == "nonprivate-TS":
                    ci = nonprivate_theil_sen_ci(x, y, ci_alpha=a, pairs=pairs, rng=g)
                elif m == "OLS-t":
                    ci = ols_ci(x, y, ci_alpha=a)
                else:
                    ci = theil_sen_ci(x, y, epsilon=eps, ci_alpha=a, output_range=(-2, 2),
                                      ci_method=m, pairs=pairs, null_variance=null_variance,
                                      rng=g)
                hits[(m, a)].append(ci.low <= 0.5 <= ci.high)
                widths[(m, a)].append(ci.width)
        for key in keys:
            rows[(design, *key)] = (float(np.mean(hits[key])), float(np.median(widths[key])))
    return rows


def print_table(title, rows):
    print("\n" + title)
    print(f"{'design':<11}{'method':<15}{'alpha':>6}{'coverage':>10}{'median width':>14}")
    for (design, m, a), (cov, width) in rows.items():
        print(f"{design:<11}{m:<15}{a:>6}{cov:>10.3f}{width:>14.4f}")


def lower_limit(a, reps, z=4.75):
    """Coverage below this is evidence (one-sided, z = 4.75 ≈ ALPHA) against >= 1 − α."""
    return 1 - a - z * math.sqrt(a * (1 - a) / reps)


@pytest.mark.slow
@pytest.mark.parametrize("n,eps,pairs,reps", [(400, 2.0, 10, 2000), (300, 4.0, "all", 400)])
def test_coverage_study(n, eps, pairs, reps):
    rows = coverage_table(n, eps, pairs, reps, seed=n)
    print_table(f"DP Theil-Sen CI coverage: n={n}, eps={eps}, pairs={pairs}, reps={reps}, "
                "slope 0.5, sigma_e 0.1, range (-2, 2), theta 0.01, null variance: bound", rows)
    for (design, m, a), (cov, _) in rows.items():
        if m in ("union", "tight"):
            assert cov >= lower_limit(a, reps), (design, m, a, cov)


@pytest.mark.slow
def test_tight_interval_calibration_and_power(monkeypatch):
    """With privacy noise nearly gone (ε = 50) and the exact Kendall variance (uniform x, no
    ties) the tight interval is close to nominal -- and an implementation that understates the
    null standard deviation three-fold is caught by the same coverage check."""
    import dpreg.simple.ci as ci_mod

    reps, n = 500, 400
    rows = coverage_table(n, 50.0, "all", reps, seed=99, designs=("uniform",),
                          null_variance="kendall", baselines=False)
    print_table(f"calibration: n={n}, eps=50, pairs=all, null variance: kendall, reps={reps}",
                rows)
    for (_, _m, a), (cov, _) in rows.items():
        assert cov >= lower_limit(a, reps)
    true_var = ci_mod.kendall_null_variance
    monkeypatch.setattr(ci_mod, "kendall_null_variance", lambda n: true_var(n) / 9)
    wrong = coverage_table(n, 50.0, "all", reps, seed=100, designs=("uniform",),
                           methods=("tight",), null_variance="kendall", baselines=False)
    print_table("wrong implementation (null sd / 3)", wrong)
    assert any(cov < lower_limit(a, reps) for (_, _, a), (cov, _) in wrong.items())
