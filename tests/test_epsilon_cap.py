"""Privacy parameters above the cap (issue 32, item 2).

ε = 1e30 or 1e308 used to run "private" with the exact answer to every printed digit and to
print a raw numpy RuntimeWarning with a source path.  A budget whose noise is below any
output's printed precision is a non-private release in practice, so dpreg has one cap per
unit (:data:`dpreg.privacy.EPSILON_MAX`, ``RHO_MAX = EPSILON_MAX**2 / 2``, ``MU_MAX =
EPSILON_MAX``):

* the library treats a finite value above its cap exactly like ``inf``: the exact,
  non-private answer, marked NOT PRIVATE in every output (statement, summary WARNING row,
  ``to_dict``) with a PrivacyLeakWarning; budgets and ledger totals above the cap are
  infinite budgets;
* the command line refuses it as a usage error (exit 2) naming the cap and ``--not-private``;
  with ``--not-private`` it runs as ``--epsilon inf`` and every output says NOT PRIVATE;
* no numpy RuntimeWarning (overflow, divide by zero) and no warning with a source path
  reaches the user at the edge values (the cap, just above it, 1e30, 1e308).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import dpreg
from dpreg.api import METHODS, NEEDS_DELTA, SIMPLE_ONLY
from dpreg.cli import app
from dpreg.exceptions import InvalidParameterError, PrivacyLeakWarning
from dpreg.privacy import (
    EPSILON_MAX,
    GDP,
    MU_MAX,
    RHO_MAX,
    ZCDP,
    ApproxDP,
    Ledger,
    PureDP,
    gdp_mu,
)

RUNNER = CliRunner()
STRONG = 340282366920938463463374607431768211297  # a 128-bit seed: no weak-seed warning
BOUNDS = {"x": (0, 1), "z": (0, 1), "y": (0, 1)}
ABOVE = math.nextafter(EPSILON_MAX, math.inf)
EDGES_ABOVE = [ABOVE, 1e30, 1e308]


# ------------------------------------------------------------------ the caps
def test_caps_are_consistent_across_units():
    from dpreg._validation import check_epsilon, check_mu, check_rho

    assert 16 <= EPSILON_MAX < 709  # the demo's ε per group is private; e^ε stays a double
    assert RHO_MAX == EPSILON_MAX ** 2 / 2 and MU_MAX == EPSILON_MAX
    # an ε_max-DP release is (ε_max²/2)-zCDP (Bun & Steinke Prop. 1.4): accepted as private
    assert PureDP(EPSILON_MAX).to_zcdp() == ZCDP(RHO_MAX)
    assert not ZCDP(RHO_MAX).is_infinite and not GDP(MU_MAX).is_infinite
    assert GDP(MU_MAX).to_zcdp() == ZCDP(RHO_MAX)
    # the μ cap is no stricter than the ε cap: at small δ its (ε, δ) curve exceeds ε_max
    assert gdp_mu(EPSILON_MAX, 1e-6) < MU_MAX
    for check, cap in ((check_epsilon, EPSILON_MAX), (check_rho, RHO_MAX),
                       (check_mu, MU_MAX)):
        assert check(cap) == cap
        assert check(math.nextafter(cap, math.inf)) == math.inf
        assert check(1e30) == math.inf and check(1e308) == math.inf


def test_check_without_inf_refuses_above_the_cap_naming_it():
    from dpreg._validation import check_epsilon

    assert check_epsilon(EPSILON_MAX, allow_inf=False) == EPSILON_MAX
    for value in EDGES_ABOVE:
        with pytest.raises(InvalidParameterError, match=f"epsilon <= {EPSILON_MAX:g}"):
            check_epsilon(value, allow_inf=False)


@pytest.mark.parametrize("budget", [PureDP(1e30), ApproxDP(1e30, 1e-6), ZCDP(1e308),
                                    GDP(1e30), PureDP(EPSILON_MAX * 1.001),
                                    ZCDP(RHO_MAX * 1.001), GDP(MU_MAX * 1.001)])
def test_budgets_above_the_cap_are_infinite(budget):
    assert budget.is_infinite
    assert not PureDP(EPSILON_MAX).is_infinite and not ApproxDP(EPSILON_MAX, 1e-6).is_infinite
    # conversions round toward more loss by ulps: a release at the cap stays finite
    assert not ApproxDP(EPSILON_MAX * (1 + 1e-12), 1e-6).is_infinite
    assert GDP.from_approx(EPSILON_MAX, 1e-6).to_approx(1e-6).epsilon <= EPSILON_MAX * 1.000001


def test_ledger_total_above_the_cap_is_not_private():
    led = Ledger(PureDP(1e30))
    assert not led.private and led.total.is_infinite
    assert "NOT PRIVATE" not in str(Ledger(PureDP(EPSILON_MAX)).describe())
    assert Ledger(PureDP(EPSILON_MAX)).private


# ------------------------------------------------------------------ every method via regress
@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    g = np.random.default_rng(32)
    n = 400
    out = pd.DataFrame({"x": g.uniform(0, 1, n), "z": g.uniform(0, 1, n)})
    out["y"] = np.clip(0.2 + 0.4 * out.x + 0.2 * out.z + g.normal(0, 0.05, n), 0, 1)
    return out


def _fit(df, method, epsilon):
    formula = "y ~ x" if method in SIMPLE_ONLY else "y ~ x + z"
    delta = 1e-6 if method in NEEDS_DELTA or method == "dp-gd" else None
    opts: dict = {"n_models": 20} if method == "tukey-em" else {}
    if method.startswith("theil-sen"):
        opts["ci_alpha"] = 0.1
    res = dpreg.regress(df, formula, method=method, epsilon=epsilon, bounds=BOUNDS,
                        delta=delta, random_state=STRONG, **opts)
    try:  # the intervals and the summary are computed too: they used to overflow
        res.conf_int(0.1)
    except dpreg.DPRegError:
        pass
    res.summary(alpha=0.1).as_text()
    return res


@pytest.mark.parametrize("method", METHODS)
def test_every_method_at_the_cap_is_private_without_runtime_warnings(df, method):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("error", PrivacyLeakWarning)
        res = _fit(df, method, EPSILON_MAX)
    assert res.privacy.private and res.to_dict()["private"] is True


@pytest.mark.parametrize("method", METHODS)
def test_every_method_above_the_cap_is_the_not_private_reference(df, method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        ref = _fit(df, method, math.inf)
    for eps in EDGES_ABOVE:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            warnings.simplefilter("error", RuntimeWarning)
            res = _fit(df, method, eps)
        assert any(issubclass(w.category, PrivacyLeakWarning) for w in seen), (method, eps)
        assert not res.privacy.private and res.privacy.budget.is_infinite
        out = json.loads(json.dumps(res.to_dict(), allow_nan=False))
        assert out["private"] is False and out["notice"].startswith("NOT PRIVATE")
        lines = res.summary().as_text().splitlines()
        assert lines[3].startswith("WARNING:") and "NOT PRIVATE" in lines[3]
        if not ref.failed:  # the exact answer, as with epsilon=inf
            np.testing.assert_array_equal(res.params.to_numpy(), ref.params.to_numpy())


# ------------------------------------------------------------------ the command line
@pytest.fixture(scope="module")
def csv(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("epscap")
    g = np.random.default_rng(7)
    n = 300
    frame = pd.DataFrame({"x": g.uniform(0, 1, n), "z": g.uniform(0, 1, n),
                          "grp": np.arange(n) % 3})
    frame["y"] = np.clip(0.2 + 0.5 * frame.x + g.normal(0, 0.05, n), 0, 1)
    path = d / "data.csv"
    frame.to_csv(path, index=False)
    return path


def _commands(csv: Path, tmp: Path, eps: str, *extra: str) -> dict[str, list[str]]:
    b = ["-b", "x=0:1", "-b", "y=0:1"]
    return {
        "fit": ["fit", str(csv), "--y", "y", "--x", "x", "-m", "noisy-stats", "-e", eps, *b,
                *extra],
        "fit-groups": ["fit-groups", str(csv), "--by", "grp", "--y", "y", "--x", "x", "-m",
                       "noisy-stats", "-e", eps, *b, "--out", str(tmp / "g.csv"),
                       "--keys-from-data", *extra],
        "release-cov": ["release-cov", str(csv), "-c", "x,y", *b, "-e", eps, "-d", "1e-6",
                        "--out", str(tmp / "r.json"), *extra],
        "ledger init": ["ledger", "init", str(tmp / "l.db"), "-e", eps, *extra],
    }


def _clean_stderr(text: str) -> None:
    """No raw Python warning: no RuntimeWarning, no source path, no traceback."""
    assert "RuntimeWarning" not in text and "Traceback" not in text, text
    assert ".py:" not in text and "site-packages" not in text, text
    assert "encountered" not in text, text  # numpy's overflow/divide warnings, even as a line


@pytest.mark.parametrize("raw", ["100.0000001", "101", "1e30", "1e308",
                                 "1.7976931348623157e308"])
def test_cli_refuses_epsilon_above_the_cap_without_not_private(csv, tmp_path, raw):
    for name, args in _commands(csv, tmp_path, raw).items():
        res = RUNNER.invoke(app, args)
        assert res.exit_code == 2, (name, raw, res.stdout, res.stderr)
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: --epsilon must be "), lines
        assert f"{EPSILON_MAX:g}" in lines[0] and "--not-private" in lines[0], lines
        assert res.stdout == ""
    assert not any(tmp_path.iterdir())  # nothing written, no ledger created


@pytest.mark.parametrize("command", ["demo", "plan"])
def test_commands_without_not_private_refuse_above_the_cap(tmp_path, command):
    args = (["demo", "--out", str(tmp_path / "demo"), "-e", "1e30"] if command == "demo" else
            ["plan", "--y", "y", "--x", "x", "-m", "noisy-stats", "--n", "100", "-b", "x=0:1",
             "-b", "y=0:1", "-e", "1e30"])
    res = RUNNER.invoke(app, args)
    assert res.exit_code == 2 and f"{EPSILON_MAX:g}" in res.stderr, res.stderr
    assert "Traceback" not in res.output


def test_cli_at_the_cap_is_a_private_run(csv, tmp_path):
    res = RUNNER.invoke(app, _commands(csv, tmp_path, f"{EPSILON_MAX:g}", "--json")["fit"])
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["private"] is True
    _clean_stderr(res.stderr)


@pytest.mark.parametrize("raw", ["101", "1e30", "1e308"])
def test_cli_not_private_above_the_cap_runs_and_says_so(csv, tmp_path, raw):
    cmds = _commands(csv, tmp_path, raw, "--not-private", "--json")
    for name in ("fit", "fit-groups", "release-cov"):
        res = RUNNER.invoke(app, cmds[name])
        assert res.exit_code == 0, (name, res.stderr)
        out = json.loads(res.stdout)
        assert out["private"] is False and "NOT PRIVATE" in out["notice"], (name, out)
        assert "NOT PRIVATE" in res.stderr and f"{EPSILON_MAX:g}" in res.stderr
        _clean_stderr(res.stderr)
    res = RUNNER.invoke(app, cmds["ledger init"][:-1])
    assert res.exit_code == 0 and "NOT PRIVATE" in res.stdout, res.output
    assert not Ledger(None, tmp_path / "l.db").private


@pytest.mark.parametrize("method", ["noisy-stats", "theil-sen-exp", "theil-sen-smooth",
                                    "theil-sen-wide", "adassp", "covariance-ols", "tukey-em",
                                    "boosted-adassp", "dp-gd"])
def test_cli_edges_print_no_raw_warning(csv, tmp_path, method):
    ci = [] if method in ("dp-gd", "tukey-em", "boosted-adassp") else ["--ci", "0.1"]
    xs = ["--x", "x"] if method.startswith(("theil", "noisy")) else ["--x", "x", "--x", "z"]
    for eps in (f"{EPSILON_MAX:g}", "1e30", "1e308"):
        extra = [] if float(eps) <= EPSILON_MAX else ["--not-private"]
        args = ["fit", str(csv), "--y", "y", *xs, "-m", method, "-e", eps, "-b", "x=0:1",
                "-b", "y=0:1", "-b", "z=0:1", "-d", "1e-6", *ci, *extra,
                "--seed", str(STRONG)]
        if method == "tukey-em":
            args += ["-o", "n_models=20"]
        res = RUNNER.invoke(app, args)
        assert res.exit_code in (0, 1), (method, eps, res.output)
        _clean_stderr(res.stderr)
        assert ("NOT PRIVATE" in res.stdout) == bool(extra), (method, eps, res.stdout)


def test_cli_rho_is_not_an_option_the_budget_is_epsilon(csv):
    """The budget is --epsilon/--delta only: dp-gd's zCDP variant runs at ρ = ε²/2, and a
    ``-o rho`` (which could carry a huge, NOT PRIVATE ρ past the ε cap) is a usage error."""
    args = ["fit", str(csv), "--y", "y", "--x", "x", "-m", "dp-gd", "-e", "1", "-b", "x=0:1",
            "-b", "y=0:1", "-o", "variant=zcdp", "-o", "rho=1e30", "--json"]
    res = RUNNER.invoke(app, args)
    assert res.exit_code == 2 and "rho" in res.stderr, res.output
    res = RUNNER.invoke(app, [*args, "--not-private"])  # nothing it could allow here
    assert res.exit_code == 2 and "--not-private" in res.stderr, res.output
    res = RUNNER.invoke(app, args[:-3] + ["--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["privacy"]["budget"] == {"kind": "zcdp", "rho": 0.5}
