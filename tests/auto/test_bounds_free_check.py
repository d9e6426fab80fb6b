"""Bounds-free mode cannot silently mislead (issue 20, item 5): after the DP bounds of
``method="auto"``, a check on DP outputs only refuses a release the remaining budget cannot
make useful (InsufficientBudgetError), or with allow_unreliable=True warns and marks it."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes

import dpreg
from dpreg.auto.checks import BOUNDS_P_OUT_MAX, bounds_outside_probability, check_bounds_free
from dpreg.exceptions import InsufficientBudgetError, UnreliableReleaseWarning


@pytest.fixture(scope="module")
def diabetes():
    return load_diabetes(as_frame=True).frame


def test_issue_case_is_refused(diabetes):
    """n = 442, ε = 1: the DP bounds of bmi came out as [−306611, 157350] and the fit returned
    an intercept of 1.46e5 with exit 0 -- now refused, having spent only the bounds' share."""
    led = dpreg.Ledger(dpreg.PureDP(5.0))
    with pytest.raises(InsufficientBudgetError, match="cannot give a useful release") as exc:
        dpreg.regress(diabetes, "target ~ bmi", method="auto", epsilon=1, bounds="private",
                      ledger=led)
    assert isinstance(exc.value, ValueError)
    assert "allow_unreliable" in str(exc.value)
    assert led.spent().epsilon == pytest.approx(0.2)  # the DP bounds only
    assert all("DP bounds" in e.label for e in led.events())


def test_allow_unreliable_warns_and_marks(diabetes):
    with pytest.warns(UnreliableReleaseWarning, match="UNRELIABLE"):
        res = dpreg.regress(diabetes, "target ~ bmi", method="auto", epsilon=1,
                            bounds="private", allow_unreliable=True)
    assert res.extra["reliable"] is False
    assert res.extra["auto"]["reliability"]["reliable"] is False
    assert res.to_dict()["extra"]["reliable"] is False
    assert "UNRELIABLE" in str(res.summary())


def test_enough_data_passes_silently():
    g = np.random.default_rng(0)
    x = g.normal(50, 10, 20000)
    df = pd.DataFrame({"x": x, "y": 2 + 0.5 * x + g.normal(0, 5, x.size)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreliableReleaseWarning)
        res = dpreg.regress(df, "y ~ x", method="auto", epsilon=1, bounds="private")
    rel = res.extra["auto"]["reliability"]
    assert rel["reliable"] is True and rel["p_outside"] <= BOUNDS_P_OUT_MAX
    assert "reliable" not in res.extra
    assert abs(float(res.params["x"]) - 0.5) < 0.05


def test_public_bounds_skip_the_check(diabetes):
    res = dpreg.regress(diabetes, "target ~ bmi", method="auto", epsilon=1,
                        bounds={"target": (25, 350), "bmi": (-0.1, 0.17)})
    assert "reliability" not in res.extra["auto"]


def test_outside_probability_properties():
    kw = dict(quantile_epsilon=0.05, coarse_width=2e6)
    # the issue's numbers: bmi bounds of width ~4.6e5 at n = 442 -> a quartile is as likely
    # outside the data as inside
    assert bounds_outside_probability(4.6e5, n=442, **kw) > 0.4
    ps = [bounds_outside_probability(40.0, n=n, **kw) for n in (300, 1000, 3000, 10000)]
    assert all(a > b for a, b in zip(ps, ps[1:])) and ps[-1] < 1e-6  # falls with n
    assert bounds_outside_probability(40.0, n=442, quantile_epsilon=float("inf"),
                                      coarse_width=2e6) == 0.0
    ok = check_bounds_free({"x": (0.0, 40.0)}, n=50000, bounds_epsilon=0.2,
                           coarse={"x": (-1e6, 1e6)}, method_epsilon=0.8, delta=None, n_x=1)
    assert ok.reliable
    with pytest.raises(InsufficientBudgetError, match="slope noise sd"):
        # self-consistent bounds (ε of the bounds is large) but almost no ε left for the fit
        check_bounds_free({"x": (0.0, 40.0)}, n=2000, bounds_epsilon=50.0,
                          coarse={"x": (-1e6, 1e6)}, method_epsilon=0.01, delta=None, n_x=1)


def test_cli_issue_case(tmp_path, diabetes):
    diabetes.to_csv(tmp_path / "diabetes.csv", index=False)
    from _cli import run_cli

    args = ["fit", "diabetes.csv", "--y", "target", "--x",
            "bmi", "-m", "auto", "-e", "1", "--bounds", "private"]
    out = run_cli(*args, cwd=tmp_path)
    assert out.returncode == 1 and "cannot give a useful release" in out.stderr
    assert out.stdout == ""
    forced = run_cli(*args, "--allow-unreliable", "--json", cwd=tmp_path, show_warnings=True)
    assert forced.returncode == 0 and "UNRELIABLE" in forced.stderr
    assert json.loads(forced.stdout)["reliable"] is False
