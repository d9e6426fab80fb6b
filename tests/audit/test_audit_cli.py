"""`dpreg audit METHOD`: JSON fields, rich table, exit codes."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from dpreg.cli import app

RUNNER = CliRunner()


def test_audit_json_reports_the_bound_event_n_alpha_and_verdict():
    res = RUNNER.invoke(app, ["audit", "laplace-secure", "--pairs", "shift-full,shift-half",
                              "--samples", "3000", "--alpha", "1e-6", "--seed", "1", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert [r["pair"] for r in rows] == ["shift-full", "shift-half"]
    for r in rows:
        assert r["samples"] == 3000 and r["alpha"] == 1e-6 and r["epsilon"] == 1.0
        assert 0.0 <= r["epsilon_lcb"] <= 1.0 and r["verdict"] == "PASS" and r["event"]


def test_audit_table_and_bad_input():
    res = RUNNER.invoke(app, ["audit", "ptr", "--samples", "500", "--seed", "2"])
    assert res.exit_code == 0 and "PASS" in res.stdout and "ε_LCB" in res.stdout
    assert RUNNER.invoke(app, ["audit", "nope"]).exit_code == 2  # usage error
    assert RUNNER.invoke(app, ["audit", "laplace", "--samples", "3"]).exit_code == 2  # bad value
    assert RUNNER.invoke(app, ["audit", "laplace", "--pairs", "nope"]).exit_code == 2
    assert RUNNER.invoke(app, ["audit"]).exit_code == 1
