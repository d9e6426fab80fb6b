"""One default per method, from its spec, whatever the entry point (issue 31, item 3).

``regress``, ``fit_arrays``, the CLI's ``fit`` and ``plan`` give a method the option defaults its
spec declares; a per-group table (``fit_by_group``, ``dpreg fit-groups``) differs only where
the spec declares a per-group default (``group_defaults``, with its reason) -- and then an
explicit option is honoured.  The budget charged for the same method and options is the same
through every entry point.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import dpreg
from _cli import run_cli as run
from dpreg import methods
from dpreg.api import fit_arrays

N = 1000
BOUNDS = {"x": (0.0, 1.0), "y": (0.0, 1.0)}
SEED = 2**100 + 11  # strong enough not to warn


def _frame() -> pd.DataFrame:
    g = np.random.default_rng(5)
    x = g.uniform(0.0, 1.0, N)
    y = np.clip(0.3 + 0.4 * x + g.normal(0.0, 0.1, N), 0.0, 1.0)
    return pd.DataFrame({"k": np.repeat([0, 1], N // 2), "x": x, "y": y})


def _delta(method: str) -> float | None:
    return 1e-6 if methods.get(method).delta != "never" else None


def _charged(led: dpreg.Ledger) -> list[dict]:
    return [ev.budget.as_dict() for ev in led.events()]


def _ledger(method: str) -> dpreg.Ledger:
    spec = methods.get(method)
    total = dpreg.ApproxDP(1e6, 0.5)
    return dpreg.Ledger(total, neighbouring=spec.relation)


@pytest.mark.parametrize("method", methods.names(selector=False))
def test_the_same_method_is_charged_the_same_through_every_entry_point(method, tmp_path):
    df = _frame()
    eps, dlt = 1.0, _delta(method)
    kw = dict(method=method, epsilon=eps, delta=dlt)
    expected = methods.get(method).budget(epsilon=eps, delta=dlt, options={},
                                          n_features=1).as_dict()
    charges = {}
    led = _ledger(method)
    dpreg.regress(df, "y ~ x", bounds=BOUNDS, ledger=led, random_state=SEED, **kw)
    charges["regress"] = _charged(led)
    led = _ledger(method)
    fit_arrays(df[["x"]].to_numpy(), df["y"].to_numpy(), x_bounds=[BOUNDS["x"]],
               y_bounds=BOUNDS["y"], ledger=led, random_state=SEED, **kw)
    charges["fit_arrays"] = _charged(led)
    if method != "tukey-em":  # its subsample-and-aggregate needs more rows than a group has
        led_g = dpreg.Ledger(dpreg.ApproxDP(1e6, 0.5), neighbouring="replace-one")
        dpreg.fit_by_group(df, "k", "x", "y", bounds=BOUNDS, groups=[0, 1], ledger=led_g,
                           random_state=SEED, **kw)
        charges["fit_by_group"] = _charged(led_g)
    plan = dpreg.plan(method, eps, dlt, n=N, formula="y ~ x", bounds=BOUNDS, n_sim=10)
    charges["plan"] = [dict(plan.charge["charged"])]
    for where, got in charges.items():
        assert got == [expected], (where, got, expected)


def test_the_cli_charges_what_regress_charges(tmp_path):
    df = _frame()
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    for method in ("noisy-stats", "adassp"):
        ledger = tmp_path / f"{method}.json"
        assert run("ledger", "init", str(ledger), "--epsilon", "100", "--delta", "1e-3",
                   "--neighbouring", methods.get(method).relation, "--no-key").returncode == 0
        args = ["fit", str(data), "--y", "y", "--x", "x", "-m", method, "-e", "1",
                "-b", "x=0:1", "-b", "y=0:1", "--ledger", str(ledger), "--json"]
        if _delta(method):
            args += ["-d", "1e-6"]
        out = run(*args)
        assert out.returncode == 0, out.stderr
        led = dpreg.Ledger(dpreg.ApproxDP(100, 1e-3), neighbouring=methods.get(method).relation)
        dpreg.regress(df, "y ~ x", method=method, epsilon=1.0, delta=_delta(method),
                      bounds=BOUNDS, ledger=led, random_state=SEED)
        shown = json.loads(run("ledger", "show", str(ledger), "--json").stdout)
        assert shown["events"][0]["budget"] == _charged(led)[0]


@pytest.mark.parametrize("method", ["noisy-stats", "adassp"])
def test_regress_fit_arrays_and_plan_use_the_specs_default(method):
    """``inference`` is the spec's default ("auto") in regress, fit_arrays and plan: the same
    release as asking for the default explicitly, and a different one from the other value."""
    df = _frame()
    default = methods.get(method).options["inference"].default
    assert default == "auto"
    kw = dict(method=method, epsilon=1.0, delta=_delta(method), bounds=BOUNDS,
              random_state=SEED)
    base = dpreg.regress(df, "y ~ x", **kw).params.to_numpy()
    np.testing.assert_array_equal(base, dpreg.regress(df, "y ~ x", inference=default,
                                                      **kw).params.to_numpy())
    assert not np.array_equal(base, dpreg.regress(df, "y ~ x", inference=False,
                                                  **kw).params.to_numpy())
    arr = fit_arrays(df[["x"]].to_numpy(), df["y"].to_numpy(), method=method, epsilon=1.0,
                     delta=_delta(method), x_bounds=[BOUNDS["x"]], y_bounds=BOUNDS["y"],
                     random_state=SEED).params.to_numpy()
    np.testing.assert_array_equal(arr, fit_arrays(
        df[["x"]].to_numpy(), df["y"].to_numpy(), method=method, epsilon=1.0,
        delta=_delta(method), x_bounds=[BOUNDS["x"]], y_bounds=BOUNDS["y"],
        random_state=SEED, inference=default).params.to_numpy())
    pkw = dict(n=N, formula="y ~ x", bounds=BOUNDS)
    p = dpreg.plan(method, 1.0, _delta(method), **pkw)
    assert p.coef_sd == dpreg.plan(method, 1.0, _delta(method), inference=default,
                                   **pkw).coef_sd
    assert p.coef_sd != dpreg.plan(method, 1.0, _delta(method), inference=False,
                                   **pkw).coef_sd


def test_a_per_group_table_uses_the_declared_group_default_and_honours_an_explicit_one():
    spec = methods.get("noisy-stats")
    assert spec.group_defaults == {"inference": False} and spec.group_defaults_reason
    assert all(set(m.group_defaults) <= set(m.options) and bool(m.group_defaults)
               == bool(m.group_defaults_reason) for m in methods.specs(selector=False))
    df = _frame()
    kw = dict(method="noisy-stats", epsilon=1.0, bounds=BOUNDS, groups=[0, 1],
              random_state=SEED)
    table = dpreg.fit_by_group(df, "k", "x", "y", **kw)
    plain = dpreg.fit_by_group(df, "k", "x", "y", inference=False, **kw)
    auto = dpreg.fit_by_group(df, "k", "x", "y", inference="auto", **kw)
    np.testing.assert_array_equal(table["slope"], plain["slope"])
    assert not np.array_equal(table["slope"], auto["slope"])  # explicit "auto" honoured
