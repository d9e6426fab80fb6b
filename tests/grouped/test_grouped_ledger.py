"""Per-group tables charge a ledger once (issue 15 item 6).

``fit_by_group(ledger=L)`` used to leak through ``**options`` into every group's fit: 3 groups
were charged 3ε while the table claimed ε (parallel composition), and a budget running out
part-way raised after charging.  The table is now charged ONCE -- one group's budget, in the
definition a single fit of the method charges, stated under replace-one -- after validation and
before any release; if it does not fit nothing is released; the per-group fits charge nothing.
"""

from __future__ import annotations

import math
import subprocess

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import dpreg
from dpreg import (
    ApproxDP,
    BudgetExceededError,
    InvalidInputError,
    Ledger,
    PureDP,
    compose,
    fit_by_group,
)
from dpreg.api import charged_budget, fit_arrays
from dpreg.cli import app

BOUNDS = {"x": (0.0, 1.0), "y": (0.0, 1.0)}


@pytest.fixture(scope="module")
def df():
    g = np.random.default_rng(3)
    keys = np.repeat(["a", "b", "c"], [60, 80, 100])
    x = g.uniform(0, 1, keys.size)
    y = np.clip(0.2 + 0.5 * x + g.normal(0, 0.1, keys.size), 0, 1)
    return pd.DataFrame({"k": keys, "x": x, "y": y})


BACKENDS = ["local", "reference"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_three_groups_charge_epsilon_once(df, backend):
    led = Ledger(PureDP(1.0))
    out = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1.0, bounds=BOUNDS,
                       groups=["a", "b", "c"], backend=backend, random_state=0, ledger=led)
    assert len(out) == 3 and not out["failed"].any()
    events = led.events()
    assert len(events) == 1 and events[0].budget == PureDP(1.0)
    assert events[0].neighbouring is dpreg.Neighbouring.REPLACE_ONE
    assert "3 disjoint groups" in events[0].label


@pytest.mark.parametrize("backend", BACKENDS)
def test_insufficient_budget_releases_nothing(df, backend, monkeypatch):
    import dpreg.grouped.local as local
    import dpreg.grouped.reference as reference

    def no_release(*args, **kwargs):
        raise AssertionError("a group was released although the charge was refused")

    monkeypatch.setattr(local, "fit_local", no_release)
    monkeypatch.setattr(reference, "fit_reference", no_release)
    led = Ledger(PureDP(1.0))
    led.spend(PureDP(0.5), "earlier")
    with pytest.raises(BudgetExceededError, match="Nothing was charged"):
        fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=0.75, bounds=BOUNDS,
                     groups=["a", "b", "c"], backend=backend, random_state=0, ledger=led)
    assert [e.label for e in led.events()] == ["earlier"]


@pytest.mark.parametrize("method,opts,delta", [
    ("theil-sen-exp", {"ci_alpha": 0.1}, None),  # local falls back to the reference loop
    ("adassp", {}, 1e-6),
    ("tukey-em", {"n_models": 16}, 1e-6),
])
def test_per_group_fits_do_not_charge(df, monkeypatch, method, opts, delta):
    calls = []
    spend = Ledger.spend

    def counting(self, *args, **kwargs):
        calls.append(args)
        return spend(self, *args, **kwargs)

    monkeypatch.setattr(Ledger, "spend", counting)
    led = Ledger(ApproxDP(100.0, 1e-3))
    fit_by_group(df, "k", "x", "y", method=method, epsilon=1.0, delta=delta, bounds=BOUNDS,
                 groups=["a", "b", "c"], backend="reference", random_state=0, ledger=led,
                 **opts)
    assert len(calls) == 1 and len(led.events()) == 1
    assert led.events()[0].budget == charged_budget(method, epsilon=1.0, delta=delta,
                                                    options=opts)


#: (method, options, delta): every method a per-group table can run
SINGLE_FIT_CASES = [
    ("noisy-stats", {}, None),
    ("noisy-stats", {"inference": True}, None),
    ("dp-intercept", {}, None),
    ("theil-sen-exp", {}, None),
    ("theil-sen-wide", {"theta": 0.05}, None),
    ("theil-sen-smooth", {}, None),
    ("theil-sen-exp", {"ci_alpha": 0.1}, None),
    ("dp-gd", {}, None),
    ("dp-gd", {"variant": "zcdp"}, None),  # rho = eps^2/2 (rho is not a method option)
    ("dp-gd", {"variant": "approx", "n_iter": 20}, 1e-6),
    ("dp-gd", {"algorithm": "clipped", "n_iter": 30}, 1e-6),
    ("dp-gd", {"algorithm": "clipped", "accounting": "zcdp", "neighbouring": "add-remove"}, 1e-6),
    ("adassp", {}, 1e-6),
    ("boosted-adassp", {}, 1e-6),
    ("boosted-adassp", {"n_rounds": 7, "split": "equal"}, 1e-6),
    ("tukey-em", {"n_models": 16}, 1e-6),
    ("covariance-ols", {}, 1e-6),
    ("auto", {}, None),
]


@pytest.mark.parametrize("method,opts,delta", SINGLE_FIT_CASES)
def test_charged_budget_is_what_a_single_fit_charges(method, opts, delta):
    """One function gives a method's charge from public inputs; it must agree with what a
    single fit actually charges (same definition, same value)."""
    g = np.random.default_rng(5)
    x = g.uniform(0, 1, 400)
    y = np.clip(0.2 + 0.5 * x + g.normal(0, 0.1, 400), 0, 1)
    led = Ledger(ApproxDP(1e3, 0.5))
    fit_arrays(x.reshape(-1, 1), y, method=method, epsilon=0.9, delta=delta,
               x_bounds=[(0, 1)], y_bounds=(0, 1), ledger=led, random_state=1, **opts)
    charged = [e.stated for e in led.events()]  # as stated (before any relation conversion)
    expected = charged_budget(method, epsilon=0.9, delta=delta, options=opts)
    if method == "auto":  # several pure charges that compose to at most ε
        assert isinstance(expected, PureDP) and compose(charged).epsilon <= expected.epsilon
    else:
        assert charged == [expected]


def test_charged_budget_rejects_before_charging():
    with pytest.raises(InvalidInputError, match="delta"):
        charged_budget("adassp", epsilon=1.0, delta=None, options={})
    with pytest.raises(InvalidInputError, match="unknown option"):
        charged_budget("noisy-stats", epsilon=1.0, delta=None, options={"thetaa": 1})
    with pytest.raises(InvalidInputError, match="epsilon"):
        charged_budget("noisy-stats", epsilon=-1.0, delta=None, options={})


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_input_costs_nothing(df, backend):
    led = Ledger(PureDP(10.0))
    kw = dict(bounds=BOUNDS, groups=["a", "b", "c"], backend=backend, random_state=0,
              ledger=led)
    with pytest.raises(InvalidInputError):  # an option value only the method checks
        fit_by_group(df, "k", "x", "y", method="theil-sen-wide", epsilon=1.0, theta=-3.0, **kw)
    with pytest.raises(InvalidInputError, match="n_models"):  # too many models for group a
        fit_by_group(df, "k", "x", "y", method="tukey-em", epsilon=1.0, delta=1e-6,
                     n_models=40, **{**kw, "ledger": Ledger(ApproxDP(10.0, 1e-5))})
    with pytest.raises(InvalidInputError, match="delta"):
        fit_by_group(df, "k", "x", "y", method="adassp", epsilon=1.0, **kw)
    bad = df.copy()
    bad.loc[3, "y"] = np.nan
    with pytest.raises(InvalidInputError, match="finite"):
        fit_by_group(bad, "k", "x", "y", method="noisy-stats", epsilon=1.0, **kw)
    with pytest.raises(InvalidInputError, match="ledger must be"):
        fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1.0,
                     **{**kw, "ledger": "ledger.db"})
    assert led.events() == []


def test_add_remove_ledger_refuses_the_table(df):
    led = Ledger(PureDP(10.0), neighbouring="add-remove")
    with pytest.raises(InvalidInputError, match="n is public"):
        fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1.0, bounds=BOUNDS,
                     groups=["a", "b", "c"], random_state=0, ledger=led)
    assert led.events() == []


def test_infinite_epsilon_is_refused_by_a_finite_ledger(df):
    led = Ledger(PureDP(10.0))
    with pytest.raises(BudgetExceededError):
        fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=math.inf, bounds=BOUNDS,
                     groups=["a", "b", "c"], random_state=0, ledger=led)
    assert led.events() == []


def test_file_ledger_two_tables(df, tmp_path):
    path = tmp_path / "groups.db"
    led = Ledger(PureDP(2.0), path)
    for _ in range(2):
        fit_by_group(df, "k", "x", "y", method="dp-intercept", epsilon=1.0, bounds=BOUNDS,
                     groups=["a", "b", "c"], random_state=0, ledger=led)
    with pytest.raises(BudgetExceededError):
        fit_by_group(df, "k", "x", "y", method="dp-intercept", epsilon=1.0, bounds=BOUNDS,
                     groups=["a", "b", "c"], random_state=0, ledger=led)
    assert len(Ledger(None, path).events()) == 2


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """The command in this process (typer's runner; same exit code and streams)."""
    res = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return subprocess.CompletedProcess(list(args), res.exit_code, res.stdout, res.stderr)


def test_cli_fit_groups_ledger(df, tmp_path):
    data = tmp_path / "data.csv"
    df.to_csv(data, index=False)
    keys = tmp_path / "keys.txt"
    keys.write_text("a\nb\nc\n")
    led = tmp_path / "l.db"
    assert _run("ledger", "init", str(led), "-e", "1.5").returncode == 0
    args = ["fit-groups", str(data), "--by", "k", "--y", "y", "--x", "x", "-m", "noisy-stats",
            "-e", "1", "-b", "x=0:1", "-b", "y=0:1", "--groups-file", str(keys), "--seed", "2",
            "--ledger", str(led), "--json"]
    first = _run(*args, "--out", str(tmp_path / "one.csv"))
    assert first.returncode == 0, first.stderr
    assert len(pd.read_csv(tmp_path / "one.csv")) == 3
    assert len(Ledger(None, led).events()) == 1 and Ledger(None, led).spent() == PureDP(1.0)
    second = _run(*args, "--out", str(tmp_path / "two.csv"))
    assert second.returncode == 1 and "exceed" in second.stderr
    assert "Traceback" not in second.stderr
    assert not (tmp_path / "two.csv").exists()
    assert len(Ledger(None, led).events()) == 1
