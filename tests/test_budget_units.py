"""Budgets in the user's units (issue 20, item 3): summaries, JSON and ledger lines show the
budget as requested (ε, or ε and δ) first and the exact accounting (ρ, μ) second; ledger events
say when and what was released; a default ledger for sessions (``set_default_ledger``) and for
the CLI (``DPREG_LEDGER``)."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

import dpreg
from _cli import run_cli
from dpreg import GDP, ZCDP, ApproxDP, Ledger, PureDP
from dpreg.multivariate.boosted import boosted_budget, boosted_split
from dpreg.multivariate.ssp import adassp_guarantee
from dpreg.privacy.units import COMPOSITION_NOTE, accounting_dict, requested_budget


@pytest.fixture(scope="module")
def frame():
    g = np.random.default_rng(3)
    n = 300
    df = pd.DataFrame({"x": g.uniform(0, 1, n), "z": g.uniform(0, 1, n),
                       "grp": g.choice(["a", "b"], n)})
    df["y"] = np.clip(0.2 + 0.5 * df.x + g.normal(0, 0.05, n), 0, 1)
    return df


BOUNDS = {"y": (0, 1), "x": (0, 1), "z": (0, 1)}


@pytest.fixture(autouse=True)
def no_default_ledger():
    previous = dpreg.set_default_ledger(None)
    yield
    dpreg.set_default_ledger(previous)


class TestStatement:
    def test_adassp_requested_first_accounting_exact(self, frame):
        res = dpreg.regress(frame, "y ~ x", method="adassp", epsilon=1, delta=1e-6,
                            bounds=BOUNDS, random_state=1)
        mu = adassp_guarantee(1.0, 1e-6)[0]  # exact μ-GDP calibration (the default)
        assert isinstance(mu, GDP) and res.privacy.budget == mu  # accounting stays exact
        assert res.privacy.requested == ApproxDP(1.0, 1e-6)
        text = str(res.summary())
        row = next(line for line in text.splitlines() if line.startswith("Privacy budget:"))
        assert "ε=1, δ=1e-06 (as requested)" in row and "μ" not in row
        acc = text[text.index("Accounting:"):]
        assert f"μ={mu.mu:g} (Gaussian DP)" in acc
        d = res.to_dict()["privacy"]
        assert d["requested"] == {"epsilon": 1.0, "delta": 1e-6}
        assert d["budget"] == mu.as_dict()  # the key older readers use is unchanged
        assert d["accounting"]["mu"] == mu.mu
        assert d["accounting"]["implies"]["delta"] == 1e-6
        assert d["accounting"]["implies"]["epsilon"] == mu.to_approx(1e-6).epsilon <= 1.0
        json.dumps(res.to_dict(), allow_nan=False)

    def test_boosted_shows_mu_second(self, frame):
        res = dpreg.regress(frame, "y ~ x + z", method="boosted-adassp", epsilon=1, delta=1e-6,
                            bounds=BOUNDS, random_state=1)
        mu = boosted_budget(1.0, 1e-6, boosted_split("author", 100), 100).charged
        assert isinstance(mu, GDP) and res.privacy.budget == mu
        text = str(res.summary())
        assert "Privacy budget:     ε=1, δ=1e-06 (as requested)" in text
        assert f"μ={mu.mu:g} (Gaussian DP)" in text
        assert res.to_dict()["privacy"]["accounting"]["mu"] == mu.mu

    def test_pure_method_has_no_accounting_row(self, frame):
        res = dpreg.regress(frame, "y ~ x", method="noisy-stats", epsilon=0.5, bounds=BOUNDS,
                            random_state=1)
        assert res.privacy.requested == PureDP(0.5) == res.privacy.budget
        text = str(res.summary())
        assert "ε=0.5 (as requested; pure DP)" in text and "Accounting:" not in text
        assert "note" not in res.to_dict()["privacy"]["accounting"]

    def test_estimator_sets_requested(self, frame):
        est = dpreg.AdaSSP(epsilon=2.0, delta=1e-7, bounds_X=(0, 1), bounds_y=(0, 1),
                           random_state=1).fit(frame[["x"]], frame.y)
        assert est.privacy_.requested == ApproxDP(2.0, 1e-7)
        assert est.privacy_.budget == adassp_guarantee(2.0, 1e-7)[0]
        assert "ε=2, δ=1e-07 (as requested)" in str(est.privacy_)

    def test_core_call_keeps_old_display(self, frame):
        from dpreg.simple import noisy_stats

        res = noisy_stats(frame.x.to_numpy(), frame.y.to_numpy(), epsilon=1.0,
                          x_bounds=(0, 1), y_bounds=(0, 1), rng=1)
        assert res.privacy.requested is None
        assert "requested" not in res.privacy.as_dict()

    def test_units_helpers(self):
        assert requested_budget(1, None) == PureDP(1.0)
        assert requested_budget(1, 1e-6) == ApproxDP(1.0, 1e-6)
        assert requested_budget(1, 1e-6, PureDP(1.0)) == PureDP(1.0)  # δ unused by a pure fit
        assert requested_budget(None, 1e-6) is None
        acc = accounting_dict(ZCDP(0.5), ApproxDP(3.0, 1e-6))
        assert acc["implies"]["epsilon"] == ZCDP(0.5).to_approx(1e-6).epsilon
        assert acc["note"] == COMPOSITION_NOTE.format(kind="ρ-zCDP", param="ρ")


class TestLedgerEvents:
    def test_event_says_what_and_when(self, frame):
        led = Ledger(ApproxDP(2.0, 1e-5), neighbouring="add-remove")
        for _ in range(3):  # three ε=1 fits fit in an ε=2 ledger: said why
            dpreg.regress(frame, "y ~ x", method="adassp", epsilon=1, delta=1e-6,
                          bounds=BOUNDS, ledger=led)
        evs = led.events()
        assert len(evs) == 3
        e = evs[0]
        assert e.requested == ApproxDP(1.0, 1e-6)
        assert e.info["method"] == "adassp" and e.info["formula"] == "y ~ x"
        assert e.info["entry"] == "regress"
        text = str(e)
        assert "(ε=1, δ=1e-06)-DP as requested, charged μ=" in text and " UTC " in text
        assert "adassp; y ~ x" in text
        d = e.as_dict()
        assert d["time"].endswith("UTC") and d["requested"] == {"epsilon": 1.0, "delta": 1e-6}
        desc = led.describe()
        assert "remaining ε=" in desc and "less than the sum of their ε" in desc
        assert led.spent().epsilon < 2.0

    def test_file_roundtrip_and_legacy(self, tmp_path, frame):
        path = tmp_path / "old.db"
        conn = sqlite3.connect(str(path), isolation_level=None)
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT "
                     "NULL, budget TEXT NOT NULL, label TEXT NOT NULL, neighbouring TEXT, "
                     "stated TEXT)")  # the schema before events said what was released
        conn.execute("INSERT INTO meta VALUES ('total', ?)", (json.dumps(PureDP(3.0).as_dict()),))
        conn.execute("INSERT INTO meta VALUES ('neighbouring', 'replace-one')")
        conn.execute("INSERT INTO events (ts, budget, label) VALUES (1.0, ?, 'old')",
                     (json.dumps(PureDP(0.5).as_dict()),))
        conn.close()
        led = Ledger(None, path)
        assert led.events()[0].info == {} and led.events()[0].requested is None
        dpreg.regress(frame, "y ~ x", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                      ledger=led)
        evs = Ledger(None, path).events()
        assert [e.label for e in evs] == ["old", evs[1].label]
        assert evs[0].info == {} and evs[1].info["method"] == "noisy-stats"
        assert evs[1].requested == PureDP(1.0)
        assert "old" in str(evs[0])


class TestDefaultLedger:
    def test_regress_estimator_group_sscp(self, frame):
        led = Ledger(ApproxDP(100.0, 1e-3))  # replace-one: add/remove charges count 2x
        assert dpreg.set_default_ledger(led) is None and dpreg.get_default_ledger() is led
        dpreg.regress(frame, "y ~ x", method="adassp", epsilon=1, delta=1e-6, bounds=BOUNDS)
        assert len(led.events()) == 1  # regress -> AdaSSP.fit: charged once
        est = dpreg.AdaSSP(epsilon=1, delta=1e-6, bounds_X=(0, 1), bounds_y=(0, 1))
        est.fit(frame[["x"]], frame.y)
        assert len(led.events()) == 2 and est.ledger is None  # the parameter is restored
        assert led.events()[-1].info["method"] == "AdaSSP"
        assert led.events()[-1].info["columns"] == ["x"]
        dpreg.release_sscp(frame, columns=["x", "y"], bounds=BOUNDS, epsilon=1, delta=1e-6)
        assert len(led.events()) == 3 and led.events()[-1].info["columns"] == ["x", "y"]
        dpreg.fit_by_group(frame, "grp", "x", "y", method="noisy-stats", epsilon=1,
                           bounds=BOUNDS, groups=["a", "b"])
        assert len(led.events()) == 4  # the table once, not once per group
        assert led.events()[-1].info["formula"] == "y ~ x by grp"
        other = Ledger(PureDP(5.0))
        dpreg.regress(frame, "y ~ x", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                      ledger=other)
        assert len(led.events()) == 4 and len(other.events()) == 1  # explicit ledger wins

    def test_cores_and_unset(self, frame):
        from dpreg.simple import noisy_stats

        led = Ledger(PureDP(5.0))
        dpreg.set_default_ledger(led)
        noisy_stats(frame.x.to_numpy(), frame.y.to_numpy(), epsilon=1.0, x_bounds=(0, 1),
                    y_bounds=(0, 1))
        assert led.events() == []  # functional cores never charge the default
        dpreg.set_default_ledger(None)
        dpreg.regress(frame, "y ~ x", method="noisy-stats", epsilon=1, bounds=BOUNDS)
        assert led.events() == []
        with pytest.raises(dpreg.InvalidInputError, match="ledger"):
            dpreg.set_default_ledger("ledger.db")  # type: ignore[arg-type]


def _cli(*args, cwd, env_extra):
    """The command in this process (tests/_cli.py), with $DPREG_LEDGER only as ``env_extra``
    sets it (the CLI reads it when the command runs)."""
    return run_cli(*args, cwd=cwd, columns=250, env=env_extra)


def test_cli_env_ledger_remaining_and_show(tmp_path, frame):
    frame.to_csv(tmp_path / "mydata.csv", index=False)
    init = _cli("ledger", "init", "l.db", "-e", "2", "-d", "1e-5", "--neighbouring",
                "add-remove", cwd=tmp_path, env_extra={})
    assert init.returncode == 0, init.stderr
    args = ("fit", "mydata.csv", "--y", "y", "--x", "x", "-m", "adassp", "-e", "1", "-d",
            "1e-6", "-b", "y=0:1", "-b", "x=0:1")
    out = _cli(*args, cwd=tmp_path, env_extra={"DPREG_LEDGER": "l.db"})
    assert out.returncode == 0, out.stderr
    assert "ε=1, δ=1e-06 (as requested)" in out.stdout
    assert "ledger l.db: spent" in out.stdout and "remaining ε=" in out.stdout
    js = _cli(*args, "--json", cwd=tmp_path, env_extra={"DPREG_LEDGER": "l.db"})
    doc = json.loads(js.stdout)
    assert doc["privacy"]["requested"] == {"epsilon": 1.0, "delta": 1e-6}
    assert doc["ledger"]["remaining"]["kind"] == "approx"
    none = _cli(*args, cwd=tmp_path, env_extra={})  # no env var, no --ledger: nothing charged
    assert none.returncode == 0 and "ledger" not in none.stdout
    show = _cli("ledger", "show", "l.db", cwd=tmp_path, env_extra={})
    assert show.returncode == 0
    assert show.stdout.count("mydata.csv") == 2 and "y ~ x" in show.stdout
    assert "(ε=1, δ=1e-06)-DP" in show.stdout and "time (UTC)" in show.stdout
    missing = _cli(*args, cwd=tmp_path, env_extra={"DPREG_LEDGER": "nope.db"})
    assert missing.returncode == 1 and "DPREG_LEDGER" in missing.stderr
