"""Drive the ``dpreg`` command as a user would: in-process through typer's runner (same
parsing, exit codes and streams; tests/_cli.py), and through the real entry point
(``python -m dpreg.cli``, a subprocess) where only that shows the behaviour."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _cli import run_cli as run
from _cli import run_subprocess


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    g = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"x": g.uniform(0, 1, n), "z": g.uniform(-1, 1, n),
                       "grp": g.choice(["a", "b", "c"], n)})
    df["y"] = np.clip(0.2 + 0.5 * df.x + 0.1 * df.z + g.normal(0, 0.05, n), 0, 1)
    path = d / "data.csv"
    df.to_csv(path, index=False)
    return path


def test_help_lists_commands():
    out = run_subprocess("--help", module="dpreg.cli")  # the installed entry point
    assert out.returncode == 0
    for cmd in ("fit", "fit-groups", "release-cov", "regress", "demo", "reproduce", "audit"):
        assert cmd in out.stdout
    assert run("fit", "--help").returncode == 0


def test_fit_json(csv):
    out = run("fit", str(csv), "--y", "y", "--x", "x", "--method", "theil-sen-exp",
              "--epsilon", "8", "--bounds", "x=0:1", "--bounds", "y=0:1", "--seed", "1", "--json")
    assert out.returncode == 0, out.stderr
    obj = json.loads(out.stdout)
    assert set(obj) >= {"method", "coef", "intercept", "privacy", "failed"}
    assert obj["method"] == "theil-sen-exp" and obj["failed"] is False
    assert abs(obj["coef"]["x"] - 0.5) < 0.2
    assert obj["privacy"]["budget"] == {"kind": "pure", "epsilon": 8.0}
    again = json.loads(run("fit", str(csv), "--y", "y", "--x", "x", "--method", "theil-sen-exp",
                           "--epsilon", "8", "--bounds", "x=0:1", "--bounds", "y=0:1", "--seed",
                           "1", "--json").stdout)
    assert again["coef"] == obj["coef"]  # --seed reproduces


def test_fit_with_ci(csv):
    out = run("fit", str(csv), "--y", "y", "--x", "x", "-m", "theil-sen-exp", "-e", "4",
              "-b", "x=0:1", "-b", "y=0:1", "--ci", "0.1", "--json", "--seed", "2")
    assert out.returncode == 0, out.stderr
    ci = json.loads(out.stdout)["ci"]
    assert ci["alpha"] == 0.1 and ci["x"][0] < ci["x"][1]


def test_fit_multivariate_table(csv):
    # 400 rows at ε = 1: the SSCP release is dominated by the noise, so the interval and the
    # standard errors are refused (issue 18); the estimates are still printed
    small = run("fit", str(csv), "--y", "y", "--x", "x", "--x", "z", "-m", "covariance-ols",
                "-e", "1", "-d", "1e-6", "-b", "x=0:1", "-b", "z=-1:1", "-b", "y=0:1",
                "--seed", "3")
    assert small.returncode == 0, small.stderr
    assert "DP Regression Results" in small.stdout and "intercept" in small.stdout
    assert "refused" in small.stdout and "std err" not in small.stdout


def test_usage_errors_exit_2(csv):
    out = run("fit", str(csv), "--y", "y", "--x", "x", "-m", "noisy-stats", "-e", "1",
              "-b", "x=0")
    assert out.returncode == 2 and "COL=LO:HI" in out.stderr
    assert run("fit", str(csv), "--nonsense").returncode == 2


def test_data_errors_exit_1_without_traceback(csv):
    out = run("fit", str(csv), "--y", "y", "--x", "x", "-m", "noisy-stats", "-e", "1",
              "-b", "y=0:1")
    assert out.returncode == 1
    assert "bounds for column 'x' are missing" in out.stderr
    assert "Traceback" not in out.stderr
    out = run("fit", str(csv), "--y", "y", "--x", "x", "-m", "adassp", "-e", "1",
              "-b", "x=0:1", "-b", "y=0:1")
    assert out.returncode == 1 and "delta is required" in out.stderr
    # --debug lets the exception out: the real interpreter prints its traceback
    out = run_subprocess("--debug", "fit", str(csv), "--y", "y", "--x", "x", "-m", "adassp",
                         "-e", "1", "-b", "x=0:1", "-b", "y=0:1", module="dpreg.cli")
    assert out.returncode != 0 and "Traceback" in out.stderr
    # an ε outside its range is a usage error of --epsilon (tests/test_cli_privacy_params.py)
    out = run("fit", str(csv), "--y", "y", "--x", "x", "-m", "noisy-stats", "-e", "-1",
              "-b", "x=0:1", "-b", "y=0:1")
    assert out.returncode == 2 and "--epsilon" in out.stderr


def test_ledger_exhaustion(csv, tmp_path):
    led = tmp_path / "ledger.db"
    assert run("ledger", "init", str(led), "--epsilon", "1.5").returncode == 0
    fit = ["fit", str(csv), "--y", "y", "--x", "x", "-m", "noisy-stats", "-e", "1",
           "-b", "x=0:1", "-b", "y=0:1", "--ledger", str(led), "--json"]
    assert run(*fit).returncode == 0
    out = run(*fit)
    assert out.returncode == 1 and "would exceed" in out.stderr
    shown = json.loads(run("ledger", "show", str(led), "--json").stdout)
    assert len(shown["events"]) == 1 and shown["spent"]["epsilon"] == 1.0
    missing = run(*fit[:-3], "--ledger", str(tmp_path / "nope.db"))
    assert missing.returncode == 1 and "ledger init" in missing.stderr


def test_release_cov_and_regress(csv, tmp_path):
    rel = tmp_path / "release.json"
    out = run("release-cov", str(csv), "--columns", "x,z,y", "-b", "x=0:1", "-b", "z=-1:1",
              "-b", "y=0:1", "-e", "16", "-d", "1e-6", "--out", str(rel), "--seed", "0")
    assert out.returncode == 0, out.stderr
    res = run("regress", str(rel), "y ~ x + z", "--json")
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout)
    assert set(obj["coef"]) == {"x", "z"}
    text = run("regress", str(rel), "y ~ x")
    assert "Signif. codes" in text.stdout
    bad = run("regress", str(rel), "y ~ w")
    assert bad.returncode == 2  # a column not in the release: usage error


def test_fit_groups(csv, tmp_path):
    out_csv = tmp_path / "groups.csv"
    keys = tmp_path / "keys.txt"
    keys.write_text("a\nb\nc\nd\n")  # 'd' has no rows: it still gets a (failed) row
    out = run("fit-groups", str(csv), "--by", "grp", "--y", "y", "--x", "x", "-m", "noisy-stats",
              "-e", "2", "-b", "x=0:1", "-b", "y=0:1", "--out", str(out_csv), "--groups-file",
              str(keys), "--seed", "0", "--json")
    assert out.returncode == 0, out.stderr
    table = pd.read_csv(out_csv)
    assert list(table["group"]) == ["a", "b", "c", "d"]
    assert table.set_index("group").loc["d", "failed"]


def test_audit_lists_targets():  # the audit itself is tested in tests/audit
    out = run("audit", "--list", "--json")
    assert out.returncode == 0, out.stderr
    assert "noisy-stats" in {t["name"] for t in json.loads(out.stdout)}


def test_demo_small(tmp_path):
    out = run("demo", "--out", str(tmp_path / "d"), "--tracts", "40", "--trials", "5", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["tracts"] == 40
    for f in report["files"].values():
        assert Path(f).exists()
    table = pd.read_csv(report["files"]["releases"])
    assert len(table) == 40 * len(report["methods"])
