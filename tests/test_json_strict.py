"""Every ``--json`` output is strict JSON (issue 16, item 5): ``NaN``/``Infinity`` are not JSON
(``JSON.parse`` rejects them); non-finite numbers are written as ``null``.  Each output is parsed
with a ``parse_constant`` that raises, so a ``NaN``/``Infinity`` token fails the test."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import dpreg
from dpreg.cli import app

RUNNER = CliRunner()


def _reject(token: str):
    raise AssertionError(f"non-strict JSON token {token}")


def strict(text: str):
    return json.loads(text, parse_constant=_reject)


def json_of(*args: str, code: int = 0):
    res = RUNNER.invoke(app, [*args, "--json"])
    assert res.exit_code == code, (args, res.stdout, res.stderr)
    return strict(res.stdout)


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("strictjson")
    g = np.random.default_rng(11)
    n = 300
    df = pd.DataFrame({"x": g.uniform(0, 1, n), "grp": np.arange(n) % 3})
    df["y"] = np.clip(0.2 + 0.5 * df.x + g.normal(0, 0.05, n), 0, 1)
    big, small = d / "data.csv", d / "small.csv"
    df.to_csv(big, index=False)
    df.head(5).to_csv(small, index=False)  # 5 rows: undefined statistics downstream
    return big, small


B = ["-b", "x=0:1", "-b", "y=0:1"]


def test_fit_json_outputs(data):
    big, _ = data
    fit = ["fit", str(big), "--y", "y", "--x", "x", *B, "-e", "1"]
    json_of(*fit, "-m", "noisy-stats", "--seed", "1")
    json_of(*fit, "-m", "theil-sen-exp", "--ci", "0.1", "--seed", "2")
    json_of(*fit, "-m", "adassp", "-d", "1e-6", "-o", "inference=true", "--ci", "0.05")
    failed = json_of(*fit, "-m", "tukey-em", "-d", "1e-6", "-o", "n_models=20", "--seed", "1")
    assert failed["failed"] is True and failed["coef"] is None  # ⊥ release
    inf = json_of("fit", str(big), "--y", "y", "--x", "x", *B, "-e", "inf", "--not-private",
                  "-m", "noisy-stats")
    assert inf["privacy"]["budget"]["epsilon"] is None and inf["private"] is False


def test_fit_groups_release_cov_regress_json(data, tmp_path):
    big, small = data
    json_of("fit-groups", str(big), "--by", "grp", "--y", "y", "--x", "x", "-m", "noisy-stats",
            "-e", "1", *B, "--out", str(tmp_path / "g.csv"), "--seed", "3", "--keys-from-data")
    json_of("fit-groups", str(big), "--by", "grp", "--y", "y", "--x", "x", "-m", "noisy-stats",
            "-e", "inf", "--not-private", *B, "--out", str(tmp_path / "g2.csv"),
            "--keys-from-data")
    rel = tmp_path / "small.json"
    json_of("release-cov", str(small), "-c", "x,y", *B, "-e", "1", "-d", "1e-6", "--out",
            str(rel), "--seed", "3")
    # a release of 5 rows: the DP-aware interval's noise ratio is infinite (was `Infinity`)
    out = json_of("regress", str(rel), "y ~ x")
    assert out["extra"]["dp_ci_noise_ratio"] is None
    inf_rel = tmp_path / "inf.json"
    json_of("release-cov", str(big), "-c", "x,y", *B, "-e", "inf", "--not-private", "-d", "1e-6",
            "--out", str(inf_rel))
    out = json_of("regress", str(inf_rel), "y ~ x")
    assert out["privacy"]["budget"]["epsilon"] is None and out["private"] is False


def test_ledger_show_json(tmp_path):
    led = tmp_path / "inf.db"
    assert RUNNER.invoke(app, ["ledger", "init", str(led), "-e", "inf", "--not-private"]
                         ).exit_code == 0
    shown = json_of("ledger", "show", str(led))
    assert shown["total"]["epsilon"] is None and shown["remaining"]["epsilon"] is None
    led2 = tmp_path / "fin.db"
    assert RUNNER.invoke(app, ["ledger", "init", str(led2), "-e", "2", "-d", "1e-6"]
                         ).exit_code == 0
    assert json_of("ledger", "show", str(led2))["total"]["epsilon"] == 2.0


def test_listing_and_audit_json():
    assert json_of("reproduce", "--list")
    assert json_of("audit", "--list")
    rows = json_of("audit", "laplace", "--samples", "2000", "--seed", "1")
    assert rows and all(r["method"] == "laplace" for r in rows)


def test_demo_json(tmp_path):
    report = json_of("demo", "--out", str(tmp_path / "d"), "--tracts", "3", "--trials", "2")
    assert report["tracts"] == 3


def test_writer_refuses_non_finite_even_if_the_conversion_is_bypassed(monkeypatch, capsys):
    """The writer itself uses allow_nan=False: a future output that slipped past the
    conversion fails loudly instead of printing `NaN`."""
    import dpreg._json
    from dpreg import cli

    cli._print_json({"a": [1.0, math.nan, np.float64("inf")], "b": {"c": -math.inf}})
    assert strict(capsys.readouterr().out) == {"a": [1.0, None, None], "b": {"c": None}}
    monkeypatch.setattr(dpreg._json, "strict_jsonable", lambda v: v)
    with pytest.raises(ValueError, match="JSON compliant"):
        cli._print_json({"a": math.nan})


def test_one_json_writer_in_the_cli():
    src = "".join(p.read_text() for p in sorted((Path(dpreg.__file__).parent / "cli").glob("*.py")))
    assert src.count("json.dumps(") == 1 and "allow_nan=False" in src


def test_results_to_dict_is_strict_json():
    from dpreg.privacy import Neighbouring, PrivacyStatement, PureDP

    res = dpreg.RegressionResults(
        [1.0, 2.0], names=["intercept", "x"], method="noisy-stats", bse=[math.nan, math.inf],
        privacy=PrivacyStatement(PureDP(math.inf), Neighbouring.REPLACE_ONE, "DPSuffStats"),
        extra={"ratio": np.float64("inf"), "arr": np.array([1.0, np.nan])})
    out = strict(json.dumps(res.to_dict(), allow_nan=False))
    assert out["bse"] == {"intercept": None, "x": None}
    assert out["extra"] == {"ratio": None, "arr": [1.0, None]}
    assert out["privacy"]["budget"]["epsilon"] is None and out["private"] is False
