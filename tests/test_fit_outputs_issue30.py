"""Issue 30: a fit says what it cost (item 5: the price in the ledger's units and why, a ledger's
kind checked before any data is read), which slope it estimates (item 4), and when an interval
excludes its own estimate at any level (item 3)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import dpreg
from dpreg import ApproxDP, Ledger, PureDP
from dpreg.exceptions import InvalidInputError

B = {"x": (0.0, 1.0), "z": (0.0, 1.0), "y": (0.0, 1.0)}


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    g = np.random.default_rng(0)
    n = 600
    out = pd.DataFrame({"x": g.uniform(0, 1, n), "z": g.uniform(0, 1, n), "k": np.arange(n) % 3})
    out["y"] = np.clip(0.2 + 0.5 * out.x + 0.1 * out.z + g.normal(0, 0.1, n), 0, 1)
    return out


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


def test_adassp_price_is_the_ledgers_marginal_epsilon_with_the_conversion_explained(df):
    led = Ledger(ApproxDP(3.0, 1e-5))  # replace-one, AdaSSP states add/remove GDP
    before = led.spent().epsilon
    res = _quiet(dpreg.regress, df, "y ~ x + z", method="adassp", epsilon=1.0, delta=1e-6,
                 bounds=B, ledger=led, random_state=1)
    after = led.spent().epsilon
    (c,) = res.privacy.charges
    # the price is exactly what the ledger's composed ε moved by (not the requested ε = 1)
    assert c.spent_before.epsilon == before and c.spent_after.epsilon == after
    assert after - before > 1.5  # μ doubled by the relation conversion: ~1.875, not 1
    assert f"ε={after - before:.4g} of the ledger's" in c.price
    assert "μ → 2μ" in c.why and "add-remove" in c.why and "pooled" in c.why
    assert "requested (ε=1, δ=1e-06)" in c.why
    text = str(res.summary())
    assert "Ledger charge:" in text and f"{after - before:.4g}" in text
    d = res.privacy.as_dict()["ledger_charges"][0]
    assert d["converted"] is True and d["ledger_neighbouring"] == "replace-one"
    assert d["release_neighbouring"] == "add-remove"
    json.dumps(res.as_dict() if hasattr(res, "as_dict") else d)  # JSON-ready


def test_second_charge_shows_its_own_marginal_price(df):
    led = Ledger(ApproxDP(3.0, 1e-5))
    _quiet(dpreg.regress, df, "y ~ x", method="noisy-stats", epsilon=0.5, bounds=B, ledger=led,
           random_state=2)
    res = _quiet(dpreg.regress, df, "y ~ x", method="noisy-stats", epsilon=0.25, bounds=B,
                 ledger=led, random_state=3)
    (c,) = res.privacy.charges
    assert math.isclose(c.spent_before.epsilon, 0.5) and math.isclose(c.spent_after.epsilon, 0.75)
    assert c.price.startswith("ε=0.25 of the ledger's") and c.why == ""


def test_no_ledger_no_price_row(df):
    res = _quiet(dpreg.regress, df, "y ~ x", method="noisy-stats", epsilon=1.0, bounds=B,
                 random_state=1)
    assert res.privacy.charges == () and "Ledger charge" not in str(res.summary())
    assert "ledger_charges" not in res.privacy.as_dict()


def test_estimator_and_grouped_table_carry_the_price(df):
    led = Ledger(ApproxDP(5.0, 1e-5))
    est = _quiet(dpreg.AdaSSP(epsilon=0.5, delta=1e-6, bounds_X=[(0, 1)] * 2, bounds_y=(0, 1),
                              ledger=led, random_state=2).fit, df[["x", "z"]], df.y)
    assert len(est.privacy_.charges) == 1 and len(est.results_.privacy.charges) == 1
    t = _quiet(dpreg.fit_by_group, df, "k", "x", "y", method="noisy-stats", epsilon=1.0,
               bounds=B, ledger=led, random_state=3, groups=[0, 1, 2])
    (d,) = t.attrs["ledger_charges"]
    assert d["charged"] == {"kind": "pure", "epsilon": 1.0} or d["charged"]["epsilon"] == 1.0
    assert "Ledger charge: ε=1 of the ledger's" in t.attrs["privacy"]


@pytest.mark.parametrize("call", ["regress", "regress-multi-gd", "groups-file", "estimator"])
def test_pure_ledger_refuses_a_delta_method_before_any_data_is_read(df, call, tmp_path):
    led = Ledger(PureDP(2.0))
    missing = str(tmp_path / "no-such-file.parquet")  # reading it would be a file error
    with pytest.raises(InvalidInputError, match="created without δ") as info:
        if call == "regress":  # a file: only its column names are read before the check
            data = tmp_path / "d.csv"
            df.to_csv(data, index=False)
            dpreg.regress(str(data), "y ~ x + z", method="adassp", epsilon=1.0, delta=1e-6,
                          bounds=B, ledger=led)
        elif call == "regress-multi-gd":
            _quiet(dpreg.regress, df, "y ~ x + z", method="dp-gd", epsilon=1.0, delta=1e-6,
                   bounds=B, ledger=led)
        elif call == "groups-file":
            dpreg.fit_by_group(missing, "k", "x", "y", method="adassp", epsilon=1.0, delta=1e-6,
                               bounds=B, ledger=led, groups=[0, 1, 2])
        else:
            _quiet(dpreg.AdaSSP(epsilon=1.0, delta=1e-6, bounds_X=[(0, 1)] * 2, bounds_y=(0, 1),
                                ledger=led).fit, df[["x", "z"]], df.y)
    assert "dpreg ledger init PATH --epsilon E --delta D" in str(info.value)
    assert led.events() == [] and led.spent().epsilon == 0.0


def test_pure_ledger_still_takes_pure_methods(df):
    led = Ledger(PureDP(2.0))
    res = _quiet(dpreg.regress, df, "y ~ x", method="dp-gd", epsilon=1.0, bounds=B, ledger=led,
                 random_state=4)
    assert res.privacy.charges[0].price.startswith("ε=1 of the ledger's ε=2")


def test_cli_fit_prints_the_price_and_ledger_init_says_what_a_pure_ledger_refuses(df, tmp_path):
    from dpreg.cli import app

    runner = CliRunner()
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    led = tmp_path / "study.ledger"
    res = runner.invoke(app, ["ledger", "init", str(led), "-e", "3"])
    assert res.exit_code == 0 and "pure-ε releases only" in res.output
    res = runner.invoke(app, ["fit", str(data), "--y", "y", "--x", "x", "--x", "z", "-m", "adassp",
                              "-e", "1", "-d", "1e-6", "-b", "x=0:1", "-b", "z=0:1", "-b", "y=0:1",
                              "--ledger", str(led)])
    assert res.exit_code == 1 and "created without δ" in res.output
    led2 = tmp_path / "approx.ledger"
    assert runner.invoke(app, ["ledger", "init", str(led2), "-e", "3", "-d", "1e-5"]).exit_code == 0
    res = runner.invoke(app, ["fit", str(data), "--y", "y", "--x", "x", "--x", "z", "-m", "adassp",
                              "-e", "1", "-d", "1e-6", "-b", "x=0:1", "-b", "z=0:1", "-b", "y=0:1",
                              "--ledger", str(led2)])
    assert res.exit_code == 0, res.output
    assert "Ledger charge:" in res.output and "μ → 2μ" in res.output.replace("\n", " ")


# ------------------------------------------------ issue 30, item 4: say which slope
@pytest.mark.parametrize("method,needle", [("theil-sen-exp", "NOT the OLS slope"),
                                           ("noisy-stats", "the OLS line"),
                                           ("adassp", "shrunk toward 0")])
def test_every_summary_says_what_the_release_estimates(df, method, needle):
    res = _quiet(dpreg.regress, df, "y ~ x", method=method, epsilon=1.0, delta=1e-6, bounds=B,
                 random_state=5)
    assert needle in res.extra["target"]
    assert "Estimates:" in str(res.summary())


def test_every_method_names_its_target():
    from dpreg import methods

    for spec in methods.specs():
        assert spec.target, spec.name


# ------------------------------------- issue 30, item 3: exclusion flagged at every level
def test_an_interval_that_excludes_its_estimate_is_flagged_at_the_level_asked_for(df):
    # Wang's ridge: its shrinkage at ε = 0.5 moves the estimate out of a 50% interval (the
    # default eigen floor shrinks less; the flag is what is tested, at any level)
    res = _quiet(dpreg.regress, df.iloc[:500], "y ~ x + z", method="adassp", epsilon=0.5,
                 delta=1e-6, bounds=B, random_state=0, lambda_rule="wang")
    at95 = res.excludes_estimate(0.05)
    at50 = res.excludes_estimate(0.5)
    assert at95 == [] and res.extra["dp_ci_excludes_estimate"] == []  # the fit-time check
    assert at50  # a narrower interval excludes the ridge-shrunk estimate
    ci = res.conf_int(0.5)
    p = res.params
    assert at50 == [k for k in p.index if not ci.loc[k, "lower"] <= p[k] <= ci.loc[k, "upper"]]
    assert "Note:" in str(res.summary(alpha=0.5)) and "Note:" not in str(res.summary(alpha=0.05))
