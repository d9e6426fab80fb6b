"""Issue 30 item 4, "say which slope": Theil-Sen names its estimand (the median pairwise
slope), flags a released interval piled at 0 (the release rule), warns on a response declared
with few levels before anything is charged (the public rule), and offers an opt-in DP check of
the share of zero-slope pairs (dpreg.simple.ties.dp_tied_share; docs/privacy/tie_check.md)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.codebook import Codebook
from dpreg.exceptions import TiedSlopesWarning, UnknownNameError
from dpreg.simple.ci import POINT_MASS_THETAS, point_mass_flag
from dpreg.simple.pairs import round_robin_matchings
from dpreg.simple.ties import (
    FEW_LEVELS_MAX,
    check_y_levels,
    dp_tied_share,
    min_tied_share,
    tied_share_sensitivity,
    zero_slope_share,
)

SEED = 2**100 + 12345  # a 128-bit-capable seed: no WeakSeedWarning
B = {"x": (0.0, 10.0), "y": (0.0, 1.0)}


def _binary(n: int = 2000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    return pd.DataFrame({"x": x, "y": (rng.uniform(size=n) < 0.2 + 0.03 * x).astype(float)})


def _continuous(n: int = 2000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    return pd.DataFrame({"x": x, "y": np.clip(0.3 + 0.03 * x + rng.normal(0, 0.1, n), 0, 1)})


def _fit(df: pd.DataFrame, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = dpreg.regress(df, "y ~ x", method="theil-sen-exp", epsilon=2.0, bounds=B,
                            random_state=SEED, **kw)
    return res, [w for w in caught if issubclass(w.category, TiedSlopesWarning)]


# ------------------------------------------------------------------ the estimand, named
def test_results_name_the_median_pairwise_slope():
    df = _continuous(300)
    est = dpreg.DPTheilSen(epsilon=1.0, bounds_X=(0, 10), bounds_y=(0, 1), random_state=SEED)
    est.fit(df[["x"]], df["y"])
    assert "median of the pairwise slopes" in est.results_.extra["target"]
    assert "NOT the OLS slope" in est.results_.extra["target"]
    assert "Estimates:" in str(est.results_.summary())
    res, _ = _fit(df, ci_alpha=0.1)
    assert "median pairwise slope" in res.uncertainty
    assert "median of the pairwise slopes" in res.to_dict()["extra"]["target"]
    ci = dpreg.simple.theil_sen_ci(df.x, df.y, epsilon=1.0, output_range=(-1, 1),
                                  rng=SEED)
    assert "median pairwise slope" in ci.details["target"]


# ------------------------------------------------------------------ the release rule
def test_point_mass_flag_is_the_rule():
    th = 0.01
    assert point_mass_flag(-0.01, 0.02, th)
    assert point_mass_flag(-2 * th, 2 * th, th)
    assert not point_mass_flag(-0.01, 0.0201, th)  # beyond 2θ
    assert not point_mass_flag(0.001, 0.01, th)  # does not contain 0
    assert point_mass_flag(0.0, 0.0, 0.0) and not point_mass_flag(-1e-9, 1e-9, 0.0)
    assert POINT_MASS_THETAS == 2.0


def test_release_rule_flags_a_binary_response():
    res, tied = _fit(_binary(), ci_alpha=0.05)
    assert res.extra["ci_point_mass"] == {"x": True}
    assert tied and "median pairwise slope is 0" in str(tied[0].message)
    lo, hi = res.conf_int(0.05).loc["x"]
    assert lo <= 0 <= hi
    text = str(res.summary())
    assert "WARNING TIES:" in text and "WARNING TIES" in res.uncertainty
    from dpreg.cli._output import _result_json

    out = _result_json(res, 0.05, res.conf_int(0.05))
    assert out["ci"]["point_mass"] == {"x": True}
    assert out["extra"]["ci_point_mass"] == {"x": True}


def test_release_rule_silent_on_continuous_data():
    for seed in range(3):
        res, tied = _fit(_continuous(seed=seed), ci_alpha=0.05)
        assert res.extra["ci_point_mass"] == {"x": False} and not tied
        assert "WARNING TIES" not in str(res.summary())
    ci = dpreg.simple.theil_sen_ci(_continuous().x, _continuous().y, epsilon=2.0,
                                  output_range=(-1, 1), rng=SEED)
    assert ci.point_mass is False


def test_theil_sen_ci_flags_and_warns():
    df = _binary()
    with pytest.warns(TiedSlopesWarning):
        ci = dpreg.simple.theil_sen_ci(df.x, df.y, epsilon=2.0, output_range=(-1, 1),
                                      ci_method="tight", rng=SEED)
    assert ci.point_mass and ci.details["point_mass"]


# ------------------------------------------------------------------ the public rule
def test_y_levels_warns_before_anything_is_charged():
    df = _continuous(300)
    led = dpreg.Ledger(dpreg.PureDP(10.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TiedSlopesWarning)
        with pytest.raises(TiedSlopesWarning, match="2 value"):
            dpreg.regress(df, "y ~ x", method="theil-sen-exp", epsilon=1.0, bounds=B,
                          y_levels=[0, 1], ledger=led, random_state=SEED)
        with pytest.raises(TiedSlopesWarning):
            dpreg.DPTheilSen(epsilon=1.0, bounds_X=(0, 10), bounds_y=(0, 1), y_levels=2,
                             ledger=led, random_state=SEED).fit(df[["x"]], df["y"])
        with pytest.raises(TiedSlopesWarning):
            dpreg.fit_by_group(df.assign(g=0), "g", "x", "y", method="theil-sen-wide",
                               epsilon=1.0, bounds=B, groups=[0], y_levels=[0, 1],
                               ledger=led, random_state=SEED)
    assert led.spent().epsilon == 0.0


def test_y_levels_message_holds_no_data_value_and_many_levels_do_not_warn():
    df = _continuous(300)
    _, tied = _fit(df, y_levels=[0.0625, 0.8125, 0.4375])
    assert len(tied) == 1
    msg = str(tied[0].message)
    assert "0.0625" not in msg and "0.8125" not in msg and "3 value(s)" in msg
    assert not _fit(df, y_levels=FEW_LEVELS_MAX + 1)[1]


def test_y_levels_refused_where_unused_and_checked():
    df = _continuous(300)
    with pytest.raises(UnknownNameError, match="y_levels"):
        dpreg.regress(df, "y ~ x", method="noisy-stats", epsilon=1.0, bounds=B,
                      y_levels=[0, 1], random_state=SEED)
    with pytest.raises(UnknownNameError, match="y_levels"):
        dpreg.fit_by_group(df.assign(g=0), "g", "x", "y", method="dp-gd", epsilon=1.0,
                           bounds=B, groups=[0], y_levels=[0, 1], random_state=SEED)
    for bad in ([0, 0], [], 0, "01", [0, math.inf], True):
        with pytest.raises(dpreg.InvalidInputError, match="y_levels"):
            check_y_levels(bad)
    assert check_y_levels([0, 1]) == 2 and check_y_levels(5) == 5 and check_y_levels(None) is None


def test_codebook_numeric_levels_trigger_the_public_rule():
    cb = Codebook.from_dict({"columns": {"x": {"bounds": [0, 10]},
                                         "y": {"bounds": [0, 1], "levels": [0, 1]}}})
    assert cb.numeric_levels("y") == (0.0, 1.0) and cb.numeric_levels("x") is None
    assert "y" not in cb.levels()  # still a number in formulas
    assert Codebook.from_dict(cb.to_dict()).numeric_levels("y") == (0.0, 1.0)
    df = _continuous(300)
    with pytest.warns(TiedSlopesWarning, match="2 value"):
        dpreg.regress(df, "y ~ x", method="theil-sen-exp", epsilon=1.0, codebook=cb,
                      random_state=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TiedSlopesWarning)
        dpreg.regress(df, "y ~ x", method="noisy-stats", epsilon=1.0, codebook=cb,
                      random_state=SEED)


def test_min_tied_share():
    assert min_tied_share(2) == 0.5
    # n = 6 evenly spread over 2 levels: 2·C(3, 2) = 6 of the 15 pairs
    assert min_tied_share(2, 6) == pytest.approx(6 / 15)
    rng = np.random.default_rng(0)
    for _ in range(50):
        y = rng.integers(0, 3, 30).astype(float)
        x = np.arange(30.0)
        assert zero_slope_share(x, y) >= min_tied_share(3, 30) - 1e-12


# ------------------------------------------------------------------ the DP tie check
def _brute_share(x, y, pairs):
    return sum(y[i] == y[j] and x[i] != x[j] for i, j in pairs) / len(pairs)


@pytest.mark.parametrize("design", ["all", "matchings"])
def test_tied_share_sensitivity_against_brute_force(design):
    n = 4
    if design == "all":
        pairs = list(itertools.combinations(range(n), 2))
        k = n - 1
        d = None
    else:
        d = round_robin_matchings(n, 2, np.random.default_rng(3))
        pairs = list(zip(d.i.tolist(), d.j.tolist()))
        k = d.k
    bound = tied_share_sensitivity(len(pairs), k)
    assert bound == (2 / n if design == "all" else k / len(pairs))
    rows = list(itertools.product((0.0, 1.0, 2.0), (0.0, 1.0)))
    worst = 0.0
    for data in itertools.product(rows, repeat=n):
        x = np.array([r[0] for r in data])
        y = np.array([r[1] for r in data])
        z = _brute_share(x, y, pairs)
        assert zero_slope_share(x, y, d) == pytest.approx(z)
        for i, new in itertools.product(range(n), rows):
            x2, y2 = x.copy(), y.copy()
            x2[i], y2[i] = new
            worst = max(worst, abs(_brute_share(x2, y2, pairs) - z))
    assert worst <= bound + 1e-12
    assert worst == pytest.approx(bound)  # attained by some neighbouring pair


def _laplace_scale_ok(noise: np.ndarray, b: float) -> bool:
    """Mean |noise| of Laplace(b) draws is b with sd b/√m: accept within 4 sd."""
    m = noise.size
    return abs(np.mean(np.abs(noise)) - b) <= 4 * b / math.sqrt(m) and \
        abs(np.mean(noise)) <= 4 * math.sqrt(2) * b / math.sqrt(m)


def test_dp_tied_share_noise_matches_theory_and_the_test_has_power():
    rng = np.random.default_rng(7)
    n, eps = 200, 1.0
    x = rng.uniform(size=n)
    y = (rng.uniform(size=n) < 0.5).astype(float)
    true = zero_slope_share(x, y)
    gen = np.random.default_rng(11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = [dp_tied_share(x, y, epsilon=eps, rng=gen) for _ in range(2000)]
    b = 2 / (n * eps)
    assert rel[0].scale == pytest.approx(b) and rel[0].sensitivity == pytest.approx(2 / n)
    noise = np.array([r.noisy for r in rel]) - true
    assert _laplace_scale_ok(noise, b)
    assert not _laplace_scale_ok(noise / 2, b)  # half the scale would be caught
    assert all(0.0 <= r.share <= 1.0 for r in rel)


def test_dp_tied_share_charges_and_states_its_guarantee():
    df = _binary(300)
    led = dpreg.Ledger(dpreg.PureDP(5.0))
    out = dp_tied_share(df.x, df.y, epsilon=0.5, rng=SEED, ledger=led)
    assert led.spent().epsilon == pytest.approx(0.5)
    assert out.privacy.budget == dpreg.PureDP(0.5)
    assert str(out.privacy.neighbouring) == "replace-one"
    assert abs(out.share - zero_slope_share(df.x, df.y)) < 0.2
    m = dp_tied_share(df.x, df.y, epsilon=0.5, rng=SEED, pairs=3)
    assert m.pairs.startswith("3 ") and m.sensitivity == pytest.approx(2 / 300)
    with pytest.warns(dpreg.PrivacyLeakWarning):
        exact = dp_tied_share(df.x, df.y, epsilon=math.inf, rng=SEED)
    assert exact.share == zero_slope_share(df.x, df.y)


def test_cli_json_and_option(tmp_path):
    import json

    from typer.testing import CliRunner

    from dpreg.cli import app

    data = tmp_path / "d.csv"
    _binary().to_csv(data, index=False)
    res = CliRunner().invoke(app, ["fit", str(data), "--y", "y", "--x", "x", "-m",
                                   "theil-sen-exp", "-e", "2", "-b", "x=0:10", "-b", "y=0:1",
                                   "--ci", "0.05", "-o", "y_levels=[0, 1]", "--json"])
    assert res.exit_code == 0, res.output
    text = res.stdout
    out = json.loads(text[text.index("{"):])
    assert out["ci"]["point_mass"] == {"x": True}
    assert "median of the pairwise slopes" in out["extra"]["target"]
