"""noisy-stats' public interval rule (issue 18): an interval is offered only when the noise
share of the released nvar, a function of the public n and ε alone, is at most 2.5 %
(:func:`dpreg.simple._noisy_stats.interval_refusal`).  Every path consults that one function;
an explicit interval request (``ci_alpha=``, CLI ``--ci``) it refuses costs nothing."""

from __future__ import annotations

import inspect
import json
import math

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import Ledger
from dpreg.exceptions import MechanismFailure
from dpreg.inference import NoUncertaintyError
from dpreg.linear_model import NoisyStats
from dpreg.planner import plan
from dpreg.privacy import PureDP
from dpreg.simple import noisy_stats
from dpreg.simple._noisy_stats import (
    INTERVAL_MAX_NVAR_NOISE_SHARE,
    interval_nvar_noise_share,
    interval_refusal,
)

XB, YB = (12.0, 60.0), (0.0, 400.0)  # diabetes' public bmi / progression bounds


def diabetes_like(n: int = 442, seed: int = 0) -> pd.DataFrame:
    """A public-configuration twin of diabetes `progression ~ bmi` (n = 442, bmi 12-60)."""
    g = np.random.default_rng(seed)
    bmi = np.clip(g.normal(26.4, 4.4, n), *XB)
    y = np.clip(-117.8 + 10.2 * bmi + g.normal(0, 62.0, n), *YB)
    return pd.DataFrame({"bmi": bmi, "progression": y})


def test_rule_is_a_pure_function_of_public_inputs():
    """The share is 4√2·(1 − 1/n)/(0.3·n·ε) exactly -- the x bounds cancel -- and equals the
    Laplace sd of a real release's nvar over n·w²/4 (the release's own public scale);
    refusal iff the share exceeds 2.5 %; same inputs, same text; ε = ∞ is never refused."""
    for n in (3, 50, 442, 506, 6366):
        for eps in (0.1, 0.5, 1.0, 4.0):
            s = interval_nvar_noise_share(n, eps, XB)
            assert s == pytest.approx(4 * math.sqrt(2) * (1 - 1 / n) / (0.3 * n * eps), rel=1e-12)
            for xb in ((0.0, 1.0), (-1e3, 5e3)):
                assert interval_nvar_noise_share(n, eps, xb) == pytest.approx(s, rel=1e-12)
            why = interval_refusal(n, eps, XB)
            assert bool(why) == (s > INTERVAL_MAX_NVAR_NOISE_SHARE)
            assert why == interval_refusal(n, eps, XB)
    # the release's own scale gives the same share (one definition of the noise)
    x = np.random.default_rng(1).uniform(*XB, 500)
    r = noisy_stats(x, x, epsilon=1.0, x_bounds=XB, y_bounds=XB, inference=True, rng=0)
    b = r.privacy.details["laplace_scale_nvar"]
    assert math.sqrt(2) * b / (500 * 48.0**2 / 4) == pytest.approx(
        interval_nvar_noise_share(500, 1.0, XB), rel=1e-12)
    # the threshold in n·ε: refused just below ~755, offered just above
    assert interval_refusal(1000, 0.74, XB) and not interval_refusal(1000, 0.76, XB)
    assert not interval_refusal(10, math.inf, XB)
    # its only inputs are public: n, ε, the x bounds (and the wording flag)
    assert list(inspect.signature(interval_refusal).parameters) == [
        "n", "epsilon", "x_bounds", "released"]


def test_estimator_decision_ignores_the_data():
    """Two data sets of the same n with very different spread: the same decision (refused at
    ε = 1, offered at ε = 4), whatever x fills of its bounds."""
    g = np.random.default_rng(2)
    wide = g.uniform(*XB, 442)
    narrow = np.full(442, 30.0) + g.normal(0, 0.01, 442)
    y = np.clip(100 + 3 * wide, *YB)
    for eps, offered in ((1.0, False), (4.0, True)):
        for x in (wide, narrow):
            est = NoisyStats(epsilon=eps, bounds_X=XB, bounds_y=YB, n_boot=60, random_state=0)
            try:
                est.fit(x[:, None], y)
            except MechanismFailure:  # ⊥ (narrow x): the decision is in the privacy details
                pass
            assert bool(est.results_.privacy.details.get("inference")) is offered


def test_auto_makes_the_plain_release_and_conf_int_says_what_to_change():
    """Fails before the rule (main gave this release an interval whose 90% coverage on the
    real diabetes data was 0.845-0.880 at ε = 0.5): the default ``inference="auto"`` at n = 442,
    ε = 1 makes the plain release (thirds) and ``conf_int`` raises with the reason and the
    remedy (ε >= 1.7 at this n, or about 760 rows)."""
    df = diabetes_like()
    res = dpreg.regress(df, "progression ~ bmi", method="noisy-stats", epsilon=1.0,
                        bounds={"bmi": XB, "progression": YB}, random_state=3)
    assert res.privacy.details.get("inference") is None  # the paper's release, full ε on the line
    assert res.extra["dp_ci_refused"] and not res.extra["dp_ci_reliable"]
    with pytest.raises(NoUncertaintyError, match=r"Use ε >= 1\.7\d* at this n, or about 7\d\d rows"):
        res.conf_int(0.1)
    # an explicit inference=False keeps the plain release's own text (how to ask for one)
    plain = NoisyStats(epsilon=1.0, bounds_X=XB, bounds_y=YB, inference=False,
                       random_state=0).fit(df[["bmi"]], df["progression"])
    with pytest.raises(NoUncertaintyError, match="inference=True"):
        plain.results_.conf_int(0.1)


def test_explicit_interval_request_is_refused_before_anything_is_charged():
    """Fails before the rule: ``ci_alpha=`` on a diabetes-like public configuration raises
    NoUncertaintyError with the remedy and the ledger is untouched; where the rule offers the
    interval (ε = 4) the same call releases and gives it."""
    df = diabetes_like()
    led = Ledger(PureDP(10.0))
    with pytest.raises(NoUncertaintyError, match=r"nothing was released, no budget spent.*"
                       r"Use ε >= 1\.7"):
        dpreg.regress(df, "progression ~ bmi", method="noisy-stats", epsilon=1.0,
                      bounds={"bmi": XB, "progression": YB}, ledger=led, ci_alpha=0.1,
                      random_state=0)
    assert led.spent().epsilon == 0.0
    res = dpreg.regress(df, "progression ~ bmi", method="noisy-stats", epsilon=4.0,
                        bounds={"bmi": XB, "progression": YB}, ledger=led, ci_alpha=0.1,
                        random_state=0, n_boot=100)
    assert led.spent().epsilon == pytest.approx(4.0)
    ci = res.conf_int(0.1)
    assert np.all(ci["lower"] <= ci["upper"])


def test_cli_ci_is_refused_before_charging_and_plan_shows_the_rule(tmp_path):
    """``dpreg fit --ci`` exits non-zero with the remedy in CLI spelling and leaves the ledger
    file uncharged; ``dpreg.plan`` states the same refusal from the public n and ε."""
    csv = tmp_path / "d.csv"
    diabetes_like().to_csv(csv, index=False)
    ledger = tmp_path / "l.json"
    from _cli import run_cli

    assert run_cli("ledger", "init", str(ledger), "--epsilon", "10").returncode == 0
    out = run_cli("fit", str(csv), "--y", "progression", "--x", "bmi", "-m", "noisy-stats",
                  "-e", "1", "-b", "bmi=12:60", "-b", "progression=0:400", "--ci", "0.1",
                  "--ledger", str(ledger))
    assert out.returncode != 0
    assert "--ci ALPHA" in out.stderr and "Use ε >= 1.7" in out.stderr
    assert "no budget spent" in out.stderr
    shown = run_cli("ledger", "show", str(ledger), "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["spent"]["epsilon"] == 0.0
    bounds = {"bmi": XB, "progression": YB}
    p = plan("noisy-stats", 1.0, n=442, bounds=bounds, formula="progression ~ bmi")
    assert p.interval == interval_refusal(442, 1.0, XB)
    assert plan("noisy-stats", 4.0, n=442, bounds=bounds,
                formula="progression ~ bmi").interval == "offered"
