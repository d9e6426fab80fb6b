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
    out = _fit(path, "-m", "noisy-stats")
    assert out.exit_code == 0, out.output
    assert "no confidence interval" in out.output and "inference=True" in out.output
    assert "intercept" in out.output  # the estimate is shown
