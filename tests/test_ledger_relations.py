"""Neighbouring relations on the ledger (issue 15 item 4) and NOT PRIVATE outputs (item 3).

An add/remove release at ε = 1 and a replace-one release at ε = 1 used to be summed to "ε = 2
spent", a bound under neither relation.  A ledger now accounts one relation: add/remove charges
are converted to replace-one by group privacy (k = 2), replace-one charges are refused on an
add/remove ledger.
"""

from __future__ import annotations

import itertools
import json
import math
import sqlite3
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import dpreg
import dpreg.preprocess
import dpreg.simple
from dpreg import (
    GDP,
    ZCDP,
    ApproxDP,
    BudgetExceededError,
    InvalidInputError,
    Ledger,
    Neighbouring,
    PureDP,
)
from dpreg.cli import app
from dpreg.privacy import BOTH_RELATIONS, charge, convert_relation, gdp_delta

RO, AR = Neighbouring.REPLACE_ONE, Neighbouring.ADD_REMOVE


# ------------------------------------------------------------------ the conversion
class TestConvertRelation:
    def test_exact_factors(self):
        assert convert_relation(PureDP(0.7), AR, RO) == PureDP(1.4)
        assert convert_relation(ZCDP(0.1), "add-remove", "replace-one") == ZCDP(0.4)
        assert convert_relation(GDP(0.5), AR, RO) == GDP(1.0)
        eps, dlt = 1.0, 1e-6
        got = convert_relation(ApproxDP(eps, dlt), AR, RO)
        assert isinstance(got, ApproxDP) and got.epsilon == 2.0
        exact = (1 + Fraction(math.e)) * Fraction(dlt)  # (1 + e^ε)δ
        assert Fraction(got.delta) >= exact  # rounded toward more loss ...
        assert Fraction(got.delta) <= exact * (1 + Fraction(1, 10**14))  # ... by a few ulps
        assert convert_relation(ApproxDP(0.5, 0.0), AR, RO) == ApproxDP(1.0, 0.0)

    def test_same_relation_is_identity(self):
        for b in (PureDP(0.3), ApproxDP(1, 1e-6), ZCDP(0.2), GDP(0.4)):
            assert convert_relation(b, RO, RO) is b
            assert convert_relation(b, AR, AR) is b

    def test_replace_one_to_add_remove_is_refused(self):
        with pytest.raises(InvalidInputError, match="n is public"):
            convert_relation(PureDP(1.0), RO, AR)

    def test_no_guarantee_left(self):
        with pytest.raises(InvalidInputError, match="δ must be < 1"):
            convert_relation(ApproxDP(5.0, 0.01), AR, RO)  # (1 + e^5)·0.01 > 1
        with pytest.raises(InvalidInputError, match="δ must be < 1"):
            convert_relation(ApproxDP(90.0, 1e-20), AR, RO)  # (1 + e^90)·1e-20 ≈ 1.2e19
        # ε = 800 is above the cap EPSILON_MAX: an infinite (NOT PRIVATE) budget, which the
        # conversion keeps infinite (e^800 would overflow: never computed)
        assert convert_relation(ApproxDP(800.0, 1e-9), AR, RO).is_infinite

    def test_infinite_stays_infinite(self):
        assert convert_relation(PureDP(math.inf), AR, RO).is_infinite
        assert convert_relation(ApproxDP(math.inf, 1e-6), AR, RO).is_infinite

    def test_bad_relation_names(self):
        with pytest.raises(InvalidInputError, match="from_"):
            convert_relation(PureDP(1), "sideways", RO)


# ------------------------------------------------------------------ brute force
DOMAIN = (-1.0, 0.0, 1.0)
MAX_N = 3


def _datasets() -> list[tuple[float, ...]]:
    return [d for n in range(1, MAX_N + 1) for d in itertools.product(DOMAIN, repeat=n)]


def _add_remove_pairs():
    for d in _datasets():
        for i in range(len(d)):  # d minus one record
            smaller = d[:i] + d[i + 1:]
            if smaller:
                yield d, smaller


def _replace_one_pairs():
    for d in _datasets():
        for i, v in itertools.product(range(len(d)), DOMAIN):
            if v != d[i]:
                yield d, d[:i] + (v,) + d[i + 1:]


def _laplace_loss(s1: float, s2: float, b: float) -> float:
    """sup over outputs z of |log p(z|s1) − log p(z|s2)| for Laplace(b) noise, on a grid."""
    z = np.linspace(-10, 10, 4001)
    return float(np.max(np.abs((np.abs(z - s2) - np.abs(z - s1)) / b)))


class TestBruteForce:
    """M(D) = Σ D + noise over a small domain: the sum of values in [−1, 1] has add/remove
    sensitivity 1 and replace-one sensitivity 2, so the conversion is exactly tight."""

    b = 0.8  # Laplace scale
    sigma = 1.3  # Gaussian standard deviation

    def test_sensitivities_by_enumeration(self):
        ar = max(abs(sum(d) - sum(e)) for d, e in _add_remove_pairs())
        ro = max(abs(sum(d) - sum(e)) for d, e in _replace_one_pairs())
        assert (ar, ro) == (1.0, 2.0)

    def test_laplace(self):
        eps_ar = max(_laplace_loss(sum(d), sum(e), self.b) for d, e in _add_remove_pairs())
        eps_ro = max(_laplace_loss(sum(d), sum(e), self.b) for d, e in _replace_one_pairs())
        assert eps_ar == pytest.approx(1 / self.b, rel=1e-12)
        converted = convert_relation(PureDP(eps_ar), AR, RO)
        assert eps_ro <= converted.epsilon * (1 + 1e-12)  # the converted budget bounds the loss
        assert eps_ro == pytest.approx(converted.epsilon, rel=1e-9)  # ... and is tight here
        assert eps_ro > eps_ar * 1.5  # not converting would under-count

    def test_gaussian_all_definitions(self):
        mus_ar = [abs(sum(d) - sum(e)) / self.sigma for d, e in _add_remove_pairs()]
        mus_ro = [abs(sum(d) - sum(e)) / self.sigma for d, e in _replace_one_pairs()]
        mu_ar, mu_ro = max(mus_ar), max(mus_ro)
        assert convert_relation(GDP(mu_ar), AR, RO).mu == pytest.approx(mu_ro, rel=1e-12)
        rho_ar, rho_ro = mu_ar ** 2 / 2, mu_ro ** 2 / 2  # Gaussian shift: ρ = Δ²/(2σ²)
        assert convert_relation(ZCDP(rho_ar), AR, RO).rho == pytest.approx(rho_ro, rel=1e-12)
        for eps in (0.25, 0.5, 1.0, 2.0):
            delta_ar = max(gdp_delta(eps, m) for m in mus_ar)  # exact (ε, δ) under add/remove
            conv = convert_relation(ApproxDP(eps, delta_ar), AR, RO)
            true_delta_ro = max(gdp_delta(conv.epsilon, m) for m in mus_ro)
            assert true_delta_ro <= conv.delta  # the converted (2ε, (1+e^ε)δ) holds
            assert max(gdp_delta(eps, m) for m in mus_ro) > delta_ar  # unconverted fails


# ------------------------------------------------------------------ the ledger
class TestLedgerRelations:
    def test_issue_example_replace_one_ledger(self):
        led = Ledger(PureDP(3.0))
        assert led.neighbouring is RO
        ev = led.spend(PureDP(1.0), "add-remove release", neighbouring="add-remove")
        assert (ev.budget, ev.stated, ev.neighbouring, ev.converted) == (
            PureDP(2.0), PureDP(1.0), AR, True)
        led.spend(PureDP(1.0), "replace-one release")
        assert led.spent() == PureDP(3.0)  # not "ε = 2"
        with pytest.raises(BudgetExceededError, match="stated ε=0.01.*add-remove"):
            led.spend(PureDP(0.01), neighbouring="add-remove")

    def test_issue_example_add_remove_ledger(self):
        led = Ledger(PureDP(3.0), neighbouring="add-remove")
        led.spend(PureDP(1.0), "add-remove release")
        with pytest.raises(InvalidInputError, match="replace-one.*n is public.*Nothing was"):
            led.spend(PureDP(1.0), "replace-one release", neighbouring="replace-one")
        assert led.spent() == PureDP(1.0) and len(led.events()) == 1
        with pytest.raises(InvalidInputError, match="n is public"):
            led.can_spend(PureDP(0.1), neighbouring=RO)
        assert led.can_spend(PureDP(0.1))

    def test_approx_and_concentrated_charges_convert(self):
        led = Ledger(ApproxDP(10.0, 1e-5))
        led.spend(ZCDP(0.01), neighbouring=AR)
        led.spend(GDP(0.1), neighbouring=AR)
        led.spend(ApproxDP(0.5, 1e-7), neighbouring=AR)
        charged = [e.budget for e in led.events()]
        assert charged[:2] == [ZCDP(0.04), GDP(0.2)]
        assert charged[2].epsilon == 1.0 and charged[2].delta > 1e-7 * (1 + math.e ** 0.5) * 0.999

    def test_refused_conversion_charges_nothing(self):
        led = Ledger(ApproxDP(10.0, 0.5))
        with pytest.raises(InvalidInputError, match="δ must be < 1"):
            led.spend(ApproxDP(5.0, 0.01), neighbouring=AR)
        assert led.events() == []

    def test_file_stores_the_relation(self, tmp_path):
        path = tmp_path / "ar.db"
        with Ledger(PureDP(2.0), path, neighbouring="add-remove") as led:
            led.spend(PureDP(0.5), "a")
        again = Ledger(None, path)
        assert again.neighbouring is AR and not again.legacy
        assert again.events()[0].neighbouring is AR
        with pytest.raises(InvalidInputError, match="neighbouring must match.*add-remove"):
            Ledger(None, path, neighbouring="replace-one")
        Ledger(PureDP(2.0), path, neighbouring="add-remove").close()  # same relation: fine

    def test_file_events_keep_stated_and_charged(self, tmp_path):
        path = tmp_path / "ro.db"
        with Ledger(PureDP(2.0), path) as led:
            led.spend(PureDP(0.5), "ar", neighbouring=AR)
        ev = Ledger(None, path).events()[0]
        assert (ev.budget, ev.stated, ev.neighbouring) == (PureDP(1.0), PureDP(0.5), AR)
        d = ev.as_dict()
        assert d["neighbouring"] == "add-remove" and d["converted"] is True
        assert d["stated_budget"] == {"kind": "pure", "epsilon": 0.5}
        assert d["budget"] == {"kind": "pure", "epsilon": 1.0}

    def test_legacy_file(self, tmp_path):
        """A file written before ledgers stored their relation: replace-one, and said so."""
        path = tmp_path / "legacy.db"
        conn = sqlite3.connect(str(path), isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT "
                     "NULL, budget TEXT NOT NULL, label TEXT NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('total', ?)", (json.dumps(PureDP(2.0).as_dict()),))
        conn.execute("INSERT INTO events (ts, budget, label) VALUES (1.0, ?, 'old')",
                     (json.dumps(PureDP(0.5).as_dict()),))
        conn.close()
        led = Ledger(None, path)
        assert led.legacy and led.neighbouring is RO and "legacy" in repr(led)
        with pytest.raises(InvalidInputError, match="legacy"):
            Ledger(None, path, neighbouring="add-remove")
        led.spend(PureDP(0.25), "new", neighbouring=AR)  # adds the columns it needs
        evs = Ledger(None, path).events()
        assert [(e.label, e.budget, e.stated, e.neighbouring) for e in evs] == [
            ("old", PureDP(0.5), PureDP(0.5), RO), ("new", PureDP(0.5), PureDP(0.25), AR)]
        shown = CliRunner().invoke(app, ["ledger", "show", str(path)], env={"COLUMNS": "250"})
        assert shown.exit_code == 0 and "legacy file" in shown.output
        info = json.loads(CliRunner().invoke(app, ["ledger", "show", str(path), "--json"]).stdout)
        assert info["legacy_relation"] is True and info["neighbouring"] == "replace-one"


class TestChargeHelper:
    def test_needs_a_relation(self):
        with pytest.raises(TypeError):
            charge(Ledger(PureDP(1)), PureDP(0.1), "x")  # type: ignore[call-arg]
        with pytest.raises(InvalidInputError, match="neighbouring"):
            charge(Ledger(PureDP(1)), PureDP(0.1), "x", None)  # type: ignore[arg-type]

    def test_both_relations_charge_unconverted(self):
        for rel in (RO, AR):
            led = Ledger(PureDP(1), neighbouring=rel)
            ev = charge(led, PureDP(0.4), "quantile", BOTH_RELATIONS)
            assert ev is not None and ev.budget == PureDP(0.4) and ev.neighbouring is rel

    def test_add_remove_release_on_replace_one_ledger(self):
        led = Ledger(PureDP(1))
        ev = charge(led, PureDP(0.4), "count", AR)
        assert ev is not None and ev.budget == PureDP(0.8)


class TestCallersPassTheirRelation:
    """Every release charges under the relation its PrivacyStatement states."""

    def test_noisy_count_is_add_remove(self):
        led = Ledger(PureDP(1.0))
        res = dpreg.preprocess.noisy_count(50, epsilon=0.3, rng=0, ledger=led)
        assert res.privacy.neighbouring is AR
        assert led.events()[0].budget == PureDP(0.6)

    def test_quantile_holds_under_both(self):
        for rel in (RO, AR):
            led = Ledger(PureDP(1.0), neighbouring=rel)
            dpreg.preprocess.dp_quantile(np.arange(20.0), q=0.5, epsilon=0.3, rng=0, ledger=led)
            assert led.events()[0].budget == PureDP(0.3)

    def test_sscp_release_add_remove_default(self):
        g = np.random.default_rng(0)
        data = g.uniform(0, 1, (50, 2))
        led = Ledger(ApproxDP(10.0, 1e-4))
        rel = dpreg.release_sscp(data, columns=["a", "b"], bounds=[(0, 1), (0, 1)], epsilon=1.0,
                                 delta=1e-6, random_state=0, ledger=led)
        assert rel.privacy.neighbouring is AR
        ev = led.events()[0]
        assert ev.stated == ApproxDP(1.0, 1e-6) and ev.budget.epsilon == 2.0
        led_ar = Ledger(ApproxDP(10.0, 1e-4), neighbouring="add-remove")
        dpreg.release_sscp(data, columns=["a", "b"], bounds=[(0, 1), (0, 1)], epsilon=1.0,
                           delta=1e-6, random_state=0, ledger=led_ar)
        assert led_ar.events()[0].budget == ApproxDP(1.0, 1e-6)

    def test_replace_one_release_refused_on_add_remove_ledger(self):
        g = np.random.default_rng(1)
        x = g.uniform(0, 1, 40)
        y = 0.5 * x + g.normal(0, 0.1, 40)
        led = Ledger(PureDP(5.0), neighbouring="add-remove")
        with pytest.raises(InvalidInputError, match="n is public"):
            dpreg.simple.noisy_stats(x, y, epsilon=1.0, x_bounds=(0, 1), y_bounds=(-1, 2),
                                     rng=0, ledger=led)
        assert led.events() == []

    def test_auto_checks_its_total_under_replace_one(self):
        g = np.random.default_rng(2)
        x = g.uniform(0, 1, 200)
        y = 0.5 * x + g.normal(0, 0.1, 200)
        led = Ledger(PureDP(5.0), neighbouring="add-remove")
        with pytest.raises(InvalidInputError, match="n is public"):
            dpreg.regress(pd.DataFrame({"x": x, "y": y}), "y ~ x",
                          method="auto", epsilon=1.0, bounds={"x": (0, 1), "y": (-1, 2)},
                          ledger=led, random_state=0)
        assert led.events() == []


# ------------------------------------------------------------------ NOT PRIVATE
class TestNotPrivate:
    def test_infinite_total(self):
        led = Ledger(PureDP(math.inf))
        assert "NOT PRIVATE" in repr(led) and not led.private
        led.spend(PureDP(1.0), "finite")
        info = led.as_dict()
        assert info["private"] is False and "NOT PRIVATE" in info["note"]

    def test_infinite_charge(self):
        led = Ledger(ApproxDP(math.inf, 1e-6))
        ev = led.spend(PureDP(math.inf), "exact fit")
        assert not ev.private and "NOT PRIVATE" in str(ev)
        d = led.events()[0].as_dict()
        assert d["private"] is False and "NOT PRIVATE" in d["note"]
        assert Ledger(PureDP(1.0)).private and "NOT PRIVATE" not in repr(Ledger(PureDP(1.0)))
        assert led.spend(PureDP(1.0)).private

    def test_cli_show(self, tmp_path):
        path = tmp_path / "inf.db"
        with Ledger(PureDP(math.inf), path) as led:
            led.spend(PureDP(math.inf), "exact")
        text = CliRunner().invoke(app, ["ledger", "show", str(path)], env={"COLUMNS": "250"})
        assert text.exit_code == 0 and "NOT PRIVATE" in text.output
        out = CliRunner().invoke(app, ["ledger", "show", str(path), "--json"])
        info = json.loads(out.stdout, parse_constant=lambda c: pytest.fail(f"non-strict {c}"))
        assert info["private"] is False and "NOT PRIVATE" in info["note"]
        assert info["total"]["epsilon"] is None  # strict JSON: null, not Infinity
        assert info["events"][0]["private"] is False and "NOT PRIVATE" in info["events"][0]["note"]

    def test_finite_ledger_show_says_nothing(self, tmp_path):
        path = tmp_path / "fin.db"
        Ledger(PureDP(1.0), path).close()
        text = CliRunner().invoke(app, ["ledger", "show", str(path)])
        assert text.exit_code == 0 and "NOT PRIVATE" not in text.output


# ------------------------------------------------------------------ CLI init
def test_cli_init_neighbouring(tmp_path):
    runner = CliRunner()
    ar = tmp_path / "ar.db"
    out = runner.invoke(app, ["ledger", "init", str(ar), "-e", "2", "--neighbouring", "add-remove"])
    assert out.exit_code == 0 and "add-remove" in out.output
    assert Ledger(None, ar).neighbouring is AR
    ro = tmp_path / "ro.db"
    assert runner.invoke(app, ["ledger", "init", str(ro), "-e", "2"]).exit_code == 0
    assert Ledger(None, ro).neighbouring is RO
    shown = runner.invoke(app, ["ledger", "show", str(ar)], env={"COLUMNS": "250"})
    assert "add-remove" in shown.output
    assert json.loads(runner.invoke(app, ["ledger", "show", str(ar), "--json"]).stdout)[
        "neighbouring"] == "add-remove"
    bad = runner.invoke(app, ["ledger", "init", str(tmp_path / "x.db"), "-e", "1",
                              "--neighbouring", "sideways"])
    assert bad.exit_code == 2 and "--neighbouring" in bad.output
    assert not (tmp_path / "x.db").exists()
