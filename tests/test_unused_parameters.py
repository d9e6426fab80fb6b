"""Parameters a method does not use are an error, not silently dropped (issue 31, item 3):
through ``plan``, the estimators, ``regress`` and the CLI's ``-o`` -- by the method spec's one
rule (``used_if``), raised before anything is read, charged or drawn.

Each case here was silently accepted before (checked on the unchanged code): ``plan`` ignored
unknown and unused options of the methods it plans analytically; the estimators other than
DPGradientDescent ignored an option their settings do not use; ``n_boot`` with
``se="plugin"`` (covariance-ols) was dropped everywhere.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpreg
from _cli import run_cli as run
from dpreg.exceptions import InvalidInputError

B = {"x": (0.0, 1.0), "y": (0.0, 1.0), "z": (0.0, 1.0)}


@pytest.mark.parametrize("method,options,match", [
    ("noisy-stats", {"theta": 0.1}, "unknown option"),
    ("noisy-stats", {"inference": False, "n_boot": 100}, "'n_boot' is not used"),
    ("adassp", {"lambda_rule": "wang", "floor_scale": 5.0}, "'floor_scale' is not used"),
    ("covariance-ols", {"se": "plugin", "n_boot": 100}, "'n_boot' is not used"),
])
def test_plan_refuses_what_the_fit_would_not_use(method, options, match):
    delta = None if method == "noisy-stats" else 1e-6
    with pytest.raises(InvalidInputError, match=match):
        dpreg.plan(method, 1.0, delta, n=500, formula="y ~ x", bounds=B, **options)


def _xy(d: int):
    g = np.random.default_rng(0)
    X = g.uniform(0.0, 1.0, (300, d))
    return X, np.clip(X.mean(axis=1) + g.normal(0.0, 0.1, 300), 0.0, 1.0)


@pytest.mark.parametrize("make,d,word", [
    (lambda: dpreg.NoisyStats(epsilon=1.0, inference=False, n_boot=100), 1, "n_boot"),
    (lambda: dpreg.DPTheilSen(epsilon=1.0, dof=5), 1, "dof"),
    (lambda: dpreg.DPTheilSen(epsilon=1.0, theta=0.1, median="smooth"), 1, "theta"),
    (lambda: dpreg.DPTheilSen(epsilon=1.0, ci_method="tight"), 1, "ci_method"),
    (lambda: dpreg.DPTheilSen(epsilon=1.0, slope_range=(-3, 3)), 1, "slope_range"),
    (lambda: dpreg.AdaSSP(epsilon=1.0, delta=1e-6, inference=False, n_boot=100), 2, "n_boot"),
    (lambda: dpreg.AdaSSP(epsilon=1.0, delta=1e-6, lambda_rule="wang",
                          floor_scale=5.0), 2, "floor_scale"),
    (lambda: dpreg.CovarianceOLS(epsilon=1.0, delta=1e-6, se="plugin", n_boot=100), 2,
     "n_boot"),
])
def test_an_estimator_refuses_a_parameter_its_settings_do_not_use(make, d, word):
    X, y = _xy(d)
    led = dpreg.Ledger(dpreg.ApproxDP(10.0, 1e-3))
    est = make().set_params(bounds_X=(0, 1), bounds_y=(0, 1), ledger=led)
    with pytest.raises(InvalidInputError, match=rf"{word}=.* is not used by {type(est).__name__}"):
        est.fit(X, y)
    assert not led.events()


def test_an_estimator_accepts_the_same_parameter_where_it_is_used():
    X, y = _xy(1)
    kw = dict(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1), random_state=2**100 + 1)
    dpreg.NoisyStats(n_boot=100, **kw).fit(X, y)
    dpreg.DPTheilSen(median="smooth", dof=5, **kw).fit(X, y)
    dpreg.DPTheilSen(ci_alpha=0.1, ci_method="tight", slope_range=(-3, 3), **kw).fit(X, y)


def test_regress_and_the_cli_refuse_n_boot_with_plugin_standard_errors(tmp_path):
    X, y = _xy(2)
    df = pd.DataFrame({"x": X[:, 0], "z": X[:, 1], "y": y})
    with pytest.raises(InvalidInputError, match="'n_boot' is not used"):
        dpreg.regress(df, "y ~ x + z", method="covariance-ols", epsilon=1.0, delta=1e-6,
                      bounds=B, se="plugin", n_boot=100)
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    out = run("fit", str(data), "--y", "y", "--x", "x", "--x", "z", "-m", "covariance-ols",
              "-e", "1", "-d", "1e-6", "-b", "x=0:1", "-b", "z=0:1", "-b", "y=0:1",
              "-o", "se=plugin", "-o", "n_boot=100")
    assert out.returncode != 0 and "n_boot" in out.stderr


def test_fit_groups_refuses_an_option_the_table_would_not_use(tmp_path):
    g = np.random.default_rng(1)
    df = pd.DataFrame({"k": g.integers(0, 2, 400), "x": g.uniform(0, 1, 400)})
    df["y"] = np.clip(df["x"] * 0.5 + g.normal(0, 0.1, 400), 0, 1)
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    out = run("fit-groups", str(data), "--by", "k", "--y", "y", "--x", "x", "-m",
              "theil-sen-exp", "-e", "1", "--out", str(tmp_path / "t.csv"), "-b", "x=0:1",
              "-b", "y=0:1", "--keys-from-data", "-o", "ci_method=tight")
    assert out.returncode != 0 and "ci_method" in out.stderr
    assert not (tmp_path / "t.csv").exists()
