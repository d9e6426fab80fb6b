"""The CLI shows which interval a fit has, and a fit whose method has no interval still prints
its (already paid-for) release with a note instead of failing."""

import json

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from dpreg.cli import app


def _csv(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 3000)
    y = np.clip(0.2 + 0.5 * x + rng.normal(0, 0.1, 3000), 0, 1)
    path = tmp_path / "d.csv"
    pd.DataFrame({"x": x, "y": y}).to_csv(path, index=False)
    return str(path)


def _fit(path, *extra):
    args = ["fit", path, "--y", "y", "--x", "x", "-e", "2", "-b", "x=0:1", "-b", "y=0:1",
            "--ci", "0.05", "--seed", "1", *extra]
    return CliRunner().invoke(app, args)


def test_cli_dp_aware_interval_is_labelled(tmp_path):
    path = _csv(tmp_path)
    out = _fit(path, "-m", "noisy-stats", "-o", "inference=true", "--json")
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    assert "parametric bootstrap" in d["ci_method"]
    lo, hi = d["ci"]["x"]
    assert lo < 0.5 < hi


def test_cli_without_interval_prints_the_release_and_says_why(tmp_path):
    path = _csv(tmp_path)
    out = _fit(path, "-m", "noisy-stats", "-o", "inference=false")
    assert out.exit_code == 0, out.output
    # the remedy in the CLI's own spelling, not the Python API's
    assert "no confidence interval" in out.output and "-o inference=true" in out.output
    assert "inference=True" not in out.output
    assert "intercept" in out.output  # the estimate is shown


def test_cli_default_fit_has_an_interval_without_options(tmp_path):
    path = _csv(tmp_path)
    for method, extra in (("noisy-stats", ()), ("adassp", ("-d", "1e-6"))):
        out = _fit(path, "-m", method, "--json", *extra)
        assert out.exit_code == 0, out.output
        d = json.loads(out.stdout)
        assert "parametric bootstrap" in d["ci_method"]
        lo, hi = d["ci"]["x"]
        assert lo < hi
        assert d["rsquared"] is not None and 0.0 <= d["rsquared"] <= 1.0


def _release(tmp_path):
    rng = np.random.default_rng(3)
    x1, x2 = rng.uniform(0, 1, 4000), rng.uniform(0, 1, 4000)
    y = np.clip(0.2 + 0.5 * x1 - 0.3 * x2 + rng.normal(0, 0.3, 4000), -1, 2)  # residual spread
    # large enough that the release is informative (κ ≈ 0.2 <= 0.5: the interval is not refused)
    data = tmp_path / "r.csv"
    pd.DataFrame({"x1": x1, "x2": x2, "y": y}).to_csv(data, index=False)
    rel = tmp_path / "rel.json"
    out = CliRunner().invoke(app, ["release-cov", str(data), "-c", "x1,x2,y", "-b", "x1=0:1",
                                   "-b", "x2=0:1", "-b", "y=-1:2", "-e", "2", "-d", "1e-6",
                                   "--out", str(rel), "--seed", str(2**100)])
    assert out.exit_code == 0, out.output
    return str(rel)


def _regress(rel, *extra):
    out = CliRunner().invoke(app, ["regress", rel, "y ~ x1 + x2", "--json", *extra])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_cli_regress_on_a_release_has_ci_and_seed(tmp_path):
    rel = _release(tmp_path)
    a = _regress(rel, "--ci", "0.1", "--seed", "5")
    b = _regress(rel, "--ci", "0.1", "--seed", "5")
    c = _regress(rel, "--ci", "0.1", "--seed", "6")
    assert a["ci"]["alpha"] == 0.1
    assert set(a["ci"]) == {"alpha", "intercept", "x1", "x2", "excludes_estimate"}
    assert isinstance(a["ci"]["excludes_estimate"], list)  # checked at the requested α
    assert a["ci"] == b["ci"]  # same seed, same intervals
    assert a["ci"] != c["ci"]  # the seed drives the (post-processing) simulation
    lo, hi = a["ci"]["x1"]
    assert lo < a["coef"]["x1"] < hi
    # without --seed: derived from the release and the formula, so reruns agree
    assert _regress(rel, "--ci", "0.1")["ci"] == _regress(rel, "--ci", "0.1")["ci"]
    assert a["rsquared"] is not None and a["df_resid"] > 0
    text = CliRunner().invoke(app, ["regress", rel, "y ~ x1", "--ci", "0.1"])
    assert text.exit_code == 0 and "[0.05" in text.output and "0.95]" in text.output
