"""The calibrated Theil-Sen slope interval (``theil_sen_ci(ci_method="calibrated")``, the
``"auto"`` default of the estimator): its target arithmetic, its public refusal rule, its
ε = ∞ limit, and the model of the mechanism's rank error it rests on."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from dpreg import Ledger, PureDP
from dpreg.exceptions import PrivacyLeakWarning
from dpreg.inference import NoUncertaintyError
from dpreg.mechanisms import exp_quantile
from dpreg.privacy import EPSILON_MAX
from dpreg.simple import nonprivate_theil_sen_ci, theil_sen_ci, theil_sen_with_ci
from dpreg.simple.ci import (
    CALIBRATED_MAX_RANK_SCALE,
    calibrated_offset,
    calibrated_refusal,
    normal_laplace_sf,
    public_design_size,
    resolve_ci_method,
)
from dpreg.simple.pairs import kendall_null_variance, make_design


def _line(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, n)
    return x, 0.5 * x + rng.normal(0.0, 0.1, n)


# ------------------------------------------------------------------------------ target arithmetic
@pytest.mark.parametrize("sd,scale,x", [(1.0, 1.0, 1.5), (0.3, 2.0, 3.0), (2.0, 0.01, 2.5),
                                        (0.01, 1.0, 2.0), (0.5, 0.5, -0.7), (0.02, 0.009, 0.04)])
def test_normal_laplace_tail_equals_the_convolution_integral(sd, scale, x):
    """P[Z + L > x] in closed form equals the numerical convolution ∫ f_L(l)·P[Z > x − l] dl."""
    num, _ = integrate.quad(lambda v: stats.laplace.pdf(v, scale=scale)
                            * stats.norm.sf(x - v, scale=sd), -60 * scale, 60 * scale,
                            points=[0.0, x], limit=400)
    assert normal_laplace_sf(x, sd=sd, scale=scale) == pytest.approx(num, rel=1e-7, abs=1e-12)


def test_normal_laplace_tail_limits():
    assert normal_laplace_sf(1.3, sd=0.7, scale=0.0) == pytest.approx(stats.norm.sf(1.3 / 0.7))
    # a Laplace much wider than the normal: the Laplace tail ½e^{−x/b}
    assert normal_laplace_sf(5.0, sd=1e-4, scale=1.0) == pytest.approx(0.5 * math.exp(-5.0),
                                                                     rel=1e-6)
    assert normal_laplace_sf(0.0, sd=0.3, scale=0.8) == pytest.approx(0.5)


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.2])
def test_calibrated_offset_solves_its_equation_and_has_the_classical_limit(alpha):
    n = 300
    sigma = math.sqrt(kendall_null_variance(n))
    size = n * (n - 1)
    eps_run = 1.0 / (4 * (n - 1))
    q = calibrated_offset(sigma=sigma, alpha=alpha, size=size, epsilon=eps_run)
    scale = 2.0 / (eps_run * size)
    assert normal_laplace_sf(q, sd=sigma / 2, scale=scale) == pytest.approx(alpha / 2, rel=1e-9)
    classical = 0.5 * stats.norm.isf(alpha / 2) * sigma
    assert calibrated_offset(sigma=sigma, alpha=alpha, size=size,
                             epsilon=math.inf) == pytest.approx(classical, rel=1e-12)
    # more budget, a narrower target range, approaching the classical one
    wider = [calibrated_offset(sigma=sigma, alpha=alpha, size=size, epsilon=e)
             for e in (eps_run, 10 * eps_run, 1000 * eps_run)]
    assert wider[0] > wider[1] > wider[2] > classical
    assert wider[2] == pytest.approx(classical, rel=1e-3)


@pytest.mark.parametrize("n", [5, 6, 7, 30, 31, 200])
@pytest.mark.parametrize("pairs", ["all", 1, 2, 3])
def test_public_design_size_is_the_drawn_designs(n, pairs):
    d = make_design(n, pairs, np.random.default_rng(n))
    assert public_design_size(n, pairs) == (d.k, 2 * d.size)


# ------------------------------------------------------------------------------ the public rule
def test_the_rule_offers_the_calibrated_interval_from_n_eps_about_200():
    """The estimator spends ε/2 on the interval, ε/4 per end: all pairs give the rank scale
    2/(ε_run·M) = 16/(ε·n); the rule offers the calibrated interval up to 0.08."""
    for n, eps, offered in [(442, 0.5, True), (506, 0.5, True), (392, 0.5, False),
                            (303, 0.5, False), (100, 4.0, True), (100, 1.0, False),
                            (1000, 0.25, True), (1000, 0.15, False)]:
        used = resolve_ci_method("auto", n=n, pairs="all", epsilon=eps / 2)
        assert used == ("calibrated" if offered else "tight"), (n, eps)
        k, size = public_design_size(n, "all")
        scale = 2.0 / ((eps / 4) / (2 * k) * size)
        assert scale == pytest.approx(16.0 / (eps * n))
        assert (scale <= CALIBRATED_MAX_RANK_SCALE * (1 + 1e-9)) == offered
    assert resolve_ci_method("tight", n=10, pairs="all", epsilon=0.1) == "tight"
    assert resolve_ci_method("union", n=10, pairs="all", epsilon=0.1) == "union"
    assert resolve_ci_method("auto", n=10, pairs="all", epsilon=math.inf) == "calibrated"
    assert calibrated_refusal(1000, math.inf, math.inf) == ""


def test_explicit_calibrated_below_the_rule_is_refused_before_anything_is_charged():
    x, y = _line(60, 1)
    x[7] = 0.8123456789  # a value no message may contain
    led = Ledger(PureDP(10.0))
    with pytest.raises(NoUncertaintyError, match="ci_method='tight'") as info:
        theil_sen_ci(x, y, epsilon=1.0, ci_alpha=0.1, output_range=(-5.0, 5.0),
                     ci_method="calibrated", ledger=led, rng=0)
    assert "0.8123" not in str(info.value)
    assert len(led.events()) == 0
    led2 = Ledger(PureDP(10.0))
    with pytest.raises(NoUncertaintyError):
        theil_sen_with_ci(x, y, epsilon=1.0, ci_alpha=0.1, x_bounds=(0.0, 1.0),
                          y_bounds=(-1.0, 2.0), ci_method="calibrated", ledger=led2, rng=0)
    assert len(led2.events()) == 0
    # auto falls back to the (conservative) tight interval and says so
    r = theil_sen_with_ci(x, y, epsilon=1.0, ci_alpha=0.1, x_bounds=(0.0, 1.0),
                          y_bounds=(-1.0, 2.0), rng=0)
    assert r.extra["ci_calibrated"] == {"x": False}
    assert "tight" in r.uncertainty and "not offered" in r.uncertainty


def test_estimator_default_is_calibrated_where_offered():
    from dpreg.linear_model import DPTheilSen

    x, y = _line(400, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPTheilSen(epsilon=4.0, bounds_X=(0.0, 1.0), bounds_y=(-1.0, 2.0), ci_alpha=0.1,
                         random_state=3).fit(x.reshape(-1, 1), y)
    assert est.results_.extra["ci_calibrated"] == {"x0": True}
    assert "calibrated" in est.results_.uncertainty
    lo, hi = est.results_.conf_int(0.1).iloc[1]
    assert lo < hi


# ------------------------------------------------------------------------------ ε = ∞ limit
@pytest.mark.parametrize("algorithm", ["materialise", "exact-fast"])
def test_infinite_epsilon_is_sens_classical_interval(algorithm):
    x, y = _line(120, 4)
    with pytest.warns(PrivacyLeakWarning):
        ci = theil_sen_ci(x, y, epsilon=math.inf, ci_alpha=0.1, output_range=(-5.0, 5.0),
                          ci_method="calibrated", null_variance="kendall", algorithm=algorithm,
                          rng=0)
    ref = nonprivate_theil_sen_ci(x, y, ci_alpha=0.1, null_variance="kendall",
                                  approximation="normal")
    assert (ci.low, ci.high) == (ref.low, ref.high)
    sv = nonprivate_theil_sen_ci(x, y, ci_alpha=0.1, null_variance="kendall")
    assert sv.low < ref.low and ref.high < sv.high  # the α/8 version is wider


def test_large_epsilon_approaches_the_classical_interval():
    """ε → ∞ (finite): the calibrated targets tend to Sen's ranks and θ to 0, so the
    released interval tends to the classical non-private one."""
    x, y = _line(300, 5)
    ref = nonprivate_theil_sen_ci(x, y, ci_alpha=0.1, null_variance="kendall",
                                  approximation="normal")
    ci = theil_sen_ci(x, y, epsilon=EPSILON_MAX, ci_alpha=0.1, output_range=(-5.0, 5.0),
                      ci_method="calibrated", null_variance="kendall", rng=1)
    w = ref.high - ref.low
    assert abs(ci.low - ref.low) < 0.02 * w and abs(ci.high - ref.high) < 0.02 * w


# ------------------------------------------------------------------------------ the rank model
def _rank_errors(scale_ranks: float, m: int, draws: int, seed: int) -> np.ndarray:
    """Rank errors of the widened exponential-mechanism quantile on m evenly spaced values
    (spacing 1) at the ε that makes its modelled rank scale ``scale_ranks``."""
    vals = np.arange(m, dtype=float)
    eps = 2.0 / scale_ranks  # weight exp(−(ε/2)·|rank distance|): Laplace scale 2/ε
    rng = np.random.default_rng(seed)
    out = np.asarray(exp_quantile(vals, q=0.5, epsilon=eps, lo=-1.0, hi=float(m),
                                  theta=0.05, rng=rng, size=draws))
    return out - (m / 2.0 - 0.5)


def test_mechanism_rank_error_on_evenly_spaced_values_is_laplace_with_scale_two_over_eps():
    """The model behind the calibrated targets: on evenly spaced values the DPWide quantile's
    rank error is Laplace with scale 2/ε_run.  A KS test accepts that law (p > 0.001) and
    rejects the law with half the scale (p < 10⁻⁶) on the same draws."""
    err = _rank_errors(40.0, 2000, 1500, seed=11)
    p_right = stats.kstest(err, stats.laplace(scale=40.0).cdf).pvalue
    p_half = stats.kstest(err, stats.laplace(scale=20.0).cdf).pvalue
    assert p_right > 1e-3
    assert p_half < 1e-6


def test_a_line_outside_its_slope_interval_is_flagged_in_the_result():
    """The line (ε/2) and the interval (ε/2) are separate releases; over 40 seeded fits the
    flag ``extra['dp_ci_excludes_estimate']`` (and the NOTE) is set exactly when the released
    slope lies outside the released interval, and such fits occur."""
    x, y = _line(120, 8)
    flagged = 0
    for seed in range(40):
        r = theil_sen_with_ci(x, y, epsilon=2.0, ci_alpha=0.2, x_bounds=(0.0, 1.0),
                              y_bounds=(-1.0, 2.0), median="smooth", rng=seed)
        lo, hi = r.conf_int(0.2).iloc[1]
        outside = not lo <= float(r.params.iloc[1]) <= hi
        assert ("dp_ci_excludes_estimate" in r.extra) == outside
        assert ("lies outside the slope interval" in r.uncertainty) == outside
        flagged += outside
    assert flagged > 0


def test_plan_says_which_slope_interval_ci_alpha_would_give():
    """``dpreg.plan`` for a Theil-Sen method states, from the public n and ε alone, whether
    ``ci_alpha=`` would give the calibrated or the tight interval -- the fit's own rule."""
    from dpreg import plan

    b = {"x": (0.0, 1.0), "y": (-1.0, 2.0)}
    p_big = plan("theil-sen-exp", 1.0, n=400, bounds=b, formula="y ~ x", n_sim=20)
    p_small = plan("theil-sen-exp", 1.0, n=100, bounds=b, formula="y ~ x", n_sim=20)
    assert p_big.interval.startswith("offered with ci_alpha=: calibrated")
    assert p_small.interval.startswith("with ci_alpha=: tight")
    assert "not offered here" in p_small.interval
    assert resolve_ci_method("auto", n=400, pairs="all", epsilon=0.5) == "calibrated"
    assert resolve_ci_method("auto", n=100, pairs="all", epsilon=0.5) == "tight"


def test_cli_refusal_in_cli_spelling_and_json_says_which_interval(tmp_path):
    """``dpreg fit --ci -o ci_method=calibrated`` below the rule exits 1 with the remedy in CLI
    spelling (``-o ci_method=tight``, not the API's ``ci_method='tight'``); with the default
    the ``--json`` output's ``ci`` says whether the interval is calibrated."""
    import json

    import pandas as pd

    from _cli import run_cli

    x, y = _line(80, 9)
    small = tmp_path / "s.csv"
    pd.DataFrame({"x": x, "y": y}).to_csv(small, index=False)
    base = ["fit", str(small), "-m", "theil-sen-exp", "--x", "x",
            "--y", "y", "-e", "1", "-b", "x=0:1", "-b", "y=-1:2", "--ci", "0.1"]
    out = run_cli(*base, "-o", "ci_method=calibrated")
    assert out.returncode == 1
    assert "-o ci_method=tight" in out.stderr and "ci_method='tight'" not in out.stderr
    js = run_cli(*base, "--json")
    assert js.returncode == 0, js.stderr
    assert json.loads(js.stdout)["ci"]["calibrated"] == {"x": False}
    x2, y2 = _line(500, 10)
    big = tmp_path / "b.csv"
    pd.DataFrame({"x": x2, "y": y2}).to_csv(big, index=False)
    js2 = run_cli(base[0], str(big), *base[2:], "--json")
    assert js2.returncode == 0, js2.stderr
    assert json.loads(js2.stdout)["ci"]["calibrated"] == {"x": True}
