"""What users type as ε, δ and --seed on the command line (issue 15, items 3 and 7).

A typo must never reach the non-private path: ``inf``, ``Infinity`` and literals that overflow a
double (``1e309``) are usage errors of every command taking ε unless ``--not-private`` is
given; a δ that underflows (``1e-400``) must not silently become 0; δ >= 0.5 is refused unless
``--not-private``; a large δ and a seed that cannot carry 128 bits of entropy draw one warning
line on stderr without changing the exit code.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from dpreg.cli import app
from dpreg.privacy import EPSILON_MAX

RUNNER = CliRunner()
TYPOS = ["inf", "Infinity", "INF", "+inf", "1e309", "1e400", "1e999", "nan", "-inf", "NaN",
         "0x1p3", "1_0", "", "1e-400", "0", "-1"]
STRONG_SEED = "340282366920938463463374607431768211297"  # a 128-bit value (> 2**127)


@pytest.fixture(scope="module")
def csv(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("privparams")
    g = np.random.default_rng(5)
    n = 300
    df = pd.DataFrame({"x": g.uniform(0, 1, n), "z": g.uniform(0, 1, n),
                       "grp": np.arange(n) % 3})
    df["y"] = np.clip(0.2 + 0.5 * df.x + g.normal(0, 0.05, n), 0, 1)
    path = d / "data.csv"
    df.to_csv(path, index=False)
    return path


def invoke(*args: str):
    return RUNNER.invoke(app, list(args))


def commands(csv: Path, tmp: Path, eps: str, *extra: str) -> dict[str, list[str]]:
    """Every command that takes ε, with a valid rest of the command line."""
    b = ["-b", "x=0:1", "-b", "y=0:1"]
    return {
        "fit": ["fit", str(csv), "--y", "y", "--x", "x", "-m", "noisy-stats", "-e", eps, *b,
                *extra],
        "fit-groups": ["fit-groups", str(csv), "--by", "grp", "--y", "y", "--x", "x", "-m",
                       "noisy-stats", "-e", eps, *b, "--out", str(tmp / "g.csv"), "--keys-from-data",
                       *extra],
        "release-cov": ["release-cov", str(csv), "-c", "x,y", *b, "-e", eps, "-d", "1e-6",
                        "--out", str(tmp / "r.json"), *extra],
        "ledger init": ["ledger", "init", str(tmp / "l.db"), "-e", eps, *extra],
    }


@pytest.mark.parametrize("raw", TYPOS)
def test_epsilon_typos_are_usage_errors_everywhere(csv, tmp_path, raw):
    for name, args in [*commands(csv, tmp_path, raw).items(),
                       ("demo", ["demo", "--out", str(tmp_path / "demo"), "-e", raw])]:
        res = invoke(*args)
        assert res.exit_code == 2, (name, raw, res.stdout, res.stderr)
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: --epsilon must be "), (name, lines)
        assert f"EPS <= {EPSILON_MAX:g}" in lines[0] and f"got {raw!r}" in lines[0]
        assert res.stdout == ""
    assert not any(tmp_path.iterdir())  # no release, table, ledger or demo output written


def test_overflowing_literal_says_what_it_would_have_done(csv, tmp_path):
    res = invoke(*commands(csv, tmp_path, "1e309")["fit"])
    assert "overflows a double to inf" in res.stderr and "NOT PRIVATE" in res.stderr
    res = invoke(*commands(csv, tmp_path, "Infinity")["fit"])
    assert "--not-private" in res.stderr


def test_ledger_init_1e309_makes_no_ledger(tmp_path):
    path = tmp_path / "l.db"
    res = invoke("ledger", "init", str(path), "-e", "1e309")
    assert res.exit_code == 2 and not path.exists()
    res = invoke("ledger", "init", str(path), "-e", "1", "-d", "1e-400")
    assert res.exit_code == 2 and not path.exists()


def test_not_private_allows_exactly_inf(csv, tmp_path):
    for name, args in commands(csv, tmp_path, "inf", "--not-private").items():
        res = invoke(*args)
        assert res.exit_code == 0, (name, res.stderr)
        assert "NOT PRIVATE" in res.stderr  # one warning line says it up front
        assert "NOT PRIVATE" in " ".join(res.stdout.split()), name
    # an overflowing literal stays a typo, and a finite ε has nothing to allow
    for eps in ("1e309", "nan", "-inf"):
        assert invoke(*commands(csv, tmp_path, eps, "--not-private")["fit"]).exit_code == 2
    res = invoke(*commands(csv, tmp_path, "1", "--not-private")["fit"])
    assert res.exit_code == 2 and res.stderr.startswith("error: --not-private")


def test_not_private_outputs_say_so(csv, tmp_path):
    cmds = commands(csv, tmp_path, "inf", "--not-private", "--json")
    fit = json.loads(invoke(*cmds["fit"]).stdout)
    assert fit["private"] is False and fit["privacy"]["private"] is False
    assert fit["notice"].startswith("NOT PRIVATE") and fit["privacy"]["budget"]["epsilon"] is None
    groups = json.loads(invoke(*cmds["fit-groups"]).stdout)
    assert groups["private"] is False and groups["privacy"].startswith("NOT PRIVATE")
    assert pd.read_csv(tmp_path / "g.csv")["privacy"].str.startswith("NOT PRIVATE").all()
    rel = json.loads(invoke(*cmds["release-cov"]).stdout)
    assert rel["private"] is False and rel["epsilon"] is None and "NOT PRIVATE" in rel["notice"]
    reg = invoke("regress", str(tmp_path / "r.json"), "y ~ x")
    assert reg.exit_code == 0 and "NOT PRIVATE" in reg.stdout.splitlines()[3]
    reg = json.loads(invoke("regress", str(tmp_path / "r.json"), "y ~ x", "--json").stdout)
    assert reg["private"] is False and "NOT PRIVATE" in reg["notice"]
    text = invoke(*commands(csv, tmp_path, "inf", "--not-private")["fit"]).stdout
    assert "WARNING:" in text and "NOT PRIVATE" in text


@pytest.mark.parametrize("raw", ["1e-400", "1e-320", "-1e-6", "inf", "nan", "1", "2", "0x1"])
def test_delta_out_of_range_or_rounded_is_a_usage_error(csv, tmp_path, raw):
    res = invoke("release-cov", str(csv), "-c", "x,y", "-b", "x=0:1", "-b", "y=0:1", "-e", "1",
                 "-d", raw, "--out", str(tmp_path / "r.json"))
    assert res.exit_code == 2, res.stderr
    assert res.stderr.startswith("error: --delta must be ") and f"got {raw!r}" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "r.json").exists()


def test_delta_that_underflows_is_not_silently_zero():
    """float('1e-400') == 0.0: pure DP, a different claim than the user typed."""
    from dpreg.cli import parse_delta

    assert float("1e-400") == 0.0
    with pytest.raises(typer.Exit):
        parse_delta("1e-400")
    assert parse_delta("0") == 0.0 and parse_delta("-0") == 0.0
    assert parse_delta("2.3e-308") == 2.3e-308 and parse_delta("1e-6") == 1e-6


def test_delta_half_or_more_needs_not_private(csv, tmp_path):
    base = commands(csv, tmp_path, "1")["release-cov"]
    args = [a if a != "1e-6" else "0.999999" for a in base]
    res = invoke(*args)
    assert res.exit_code == 2 and "--not-private" in res.stderr
    res = invoke(*args, "--not-private")
    assert res.exit_code == 0, res.stderr
    assert "warning: --delta=0.999999 is large" in res.stderr


def test_large_delta_warns_one_line_exit_code_unchanged(csv, tmp_path):
    base = commands(csv, tmp_path, "1")["release-cov"]
    res = invoke(*[a if a != "1e-6" else "0.01" for a in base])
    assert res.exit_code == 0
    warn = [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warn) == 1 and "much smaller than 1/n" in warn[0]
    res = invoke(*base)
    assert res.exit_code == 0 and "warning" not in res.stderr


def test_delta_at_least_one_over_public_n_warns(tmp_path):
    """δ = 6e-4 < 1e-3 but >= 1/n for the public n = 2000 of a replace-one result; the same δ
    with an add-remove method (n private) must not warn: that would reveal a fact about n."""
    g = np.random.default_rng(1)
    n = 2000
    df = pd.DataFrame({"x": g.uniform(0, 1, n), "z": g.uniform(0, 1, n)})
    df["y"] = np.clip(0.3 * df.x + 0.2 * df.z + g.normal(0, 0.05, n), 0, 1)
    path = tmp_path / "big.csv"
    df.to_csv(path, index=False)
    args = ["fit", str(path), "--y", "y", "--x", "x", "--x", "z", "-e", "1", "-d", "6e-4",
            "-b", "x=0:1", "-b", "z=0:1", "-b", "y=0:1"]
    res = invoke(*args, "-m", "dp-gd")
    assert res.exit_code == 0, res.stderr
    assert "delta >= 1/n for the public n = 2000" in res.stderr
    res = invoke(*args, "-m", "adassp")
    assert res.exit_code == 0 and "warning" not in res.stderr


def test_weak_seed_warns_one_line(csv, tmp_path):
    for name, args in commands(csv, tmp_path, "1", "--seed", "1234").items():
        if name == "ledger init":
            continue
        res = invoke(*args)
        assert res.exit_code == 0, (name, res.stderr)
        warn = [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]
        assert len(warn) == 1, (name, res.stderr)
        assert "--seed 1234 cannot carry 128 bits" in warn[0]
        assert "secrets.randbits(128)" in warn[0] and "omit the seed" in warn[0]
        # the output itself states the requirement
        assert "128 bits of entropy" in " ".join(res.stdout.split()), name
    for seed in (STRONG_SEED, None):
        extra = ["--seed", seed] if seed else []
        res = invoke(*commands(csv, tmp_path, "1", *extra)["fit"])
        assert res.exit_code == 0 and "warning" not in res.stderr


def test_seed_threshold():
    from dpreg.privacy.notices import WEAK_SEED_BELOW, weak_seed

    assert weak_seed(0) and weak_seed(2**96 - 1) and not weak_seed(2**96)
    assert not weak_seed(int(STRONG_SEED)) and not weak_seed(None)
    assert not weak_seed(True)  # not a seed (check_rng rejects it)
    assert weak_seed(np.random.SeedSequence(1234))
    assert not weak_seed(np.random.SeedSequence())  # 128 bits from the OS
    assert weak_seed(np.random.RandomState(0))
    assert not weak_seed(np.random.default_rng(0))  # a Generator cannot be judged
    # a proper 128-bit seed falls below the threshold with probability 2**-32
    assert WEAK_SEED_BELOW / 2**128 == 2.0**-32


def test_parse_epsilon_values():
    from dpreg.cli import parse_epsilon

    assert parse_epsilon("1") == 1.0 and parse_epsilon(" 0.5 ") == 0.5
    assert parse_epsilon("1e-100") == 1e-100 and parse_epsilon(f"{EPSILON_MAX:g}") == EPSILON_MAX
    # above the cap (issue 32): refused, or with --not-private the NOT PRIVATE run (inf)
    assert parse_epsilon("1.7976931348623157e308", not_private=True) == math.inf
    assert parse_epsilon("101", not_private=True) == math.inf
    with pytest.raises(typer.Exit):
        parse_epsilon("1.7976931348623157e308")
    assert parse_epsilon("inf", not_private=True) == math.inf
    assert parse_epsilon("Infinity", not_private=True) == math.inf
    for raw in ("1e309", "nan", "-inf", "1e-101", "1e-400"):
        with pytest.raises(typer.Exit):
            parse_epsilon(raw, not_private=True)
