"""CLI polish (issue 20 item 6): usage errors exit 2 with a did-you-mean, listings that neither
wrap nor cut names when piped (and their --json), warnings for ignored parameters, and
progress bars that stay silent when piped unless --progress is given.

The commands run with stdout and stderr that are pipes, not a terminal: in-process through
typer's runner (tests/_cli.py; same parsing, exit codes and streams), and once as a real
subprocess (test_no_progress_when_piped), on a small CSV whose values are distinctive
numbers, so that a message that printed a data value would be caught.
"""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pandas as pd
import pytest

from _cli import run_cli, run_subprocess

#: distinctive values of the private column (none may appear in any message)
SECRET = 123.456789


def run(*args: str, columns: int = 30, cwd=None) -> subprocess.CompletedProcess:
    return run_cli(*args, columns=columns, cwd=cwd)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(7)
    n = 4000
    x = rng.uniform(20, 60, n)
    frame = pd.DataFrame({"age": x, "income": 1000 + 30 * x + rng.normal(0, 50, n),
                          "region": rng.integers(0, 3, n)})
    frame.loc[0, "age"] = SECRET
    path = tmp_path_factory.mktemp("polish") / "people.csv"
    frame.to_csv(path, index=False)
    groups = path.parent / "groups.txt"
    groups.write_text("0\n1\n2\n")
    return path


FIT = ("-e", "1", "-b", "age=0:100", "-b", "income=0:5000", "--seed", str(2**100))


def _no_data(proc: subprocess.CompletedProcess) -> None:
    assert "123.45" not in proc.stdout + proc.stderr


# ------------------------------------------------------------------ exit codes
def test_unknown_method_exits_2_with_suggestion(data):
    proc = run("fit", str(data), "--y", "income", "--x", "age", "-m", "noisy-stat", *FIT)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error:") and "did you mean 'noisy-stats'" in proc.stderr
    _no_data(proc)
    ok = run("fit", str(data), "--y", "income", "--x", "age", "-m", "noisy-stats", *FIT)
    assert ok.returncode == 0, ok.stderr


def test_misspelt_column_exits_2_with_suggestion(data):
    proc = run("fit", str(data), "--y", "income", "--x", "agee", "-m", "noisy-stats", *FIT)
    assert proc.returncode == 2
    assert "--x 'agee' is not a column of the data; did you mean 'age'?" in proc.stderr
    _no_data(proc)
    proc = run("fit-groups", str(data), "--by", "regoin", "--y", "income", "--x", "age",
               "-m", "noisy-stats", "--out", str(data.parent / "g.csv"), "--keys-from-data",
               *FIT)
    assert proc.returncode == 2 and "did you mean 'region'" in proc.stderr
    proc = run("release-cov", str(data), "-c", "age,incom", "-e", "1", "-d", "1e-6",
               "--out", str(data.parent / "r.json"), "-b", "age=0:100", "-b", "income=0:5000")
    assert proc.returncode == 2 and "did you mean 'income'" in proc.stderr
    assert not (data.parent / "r.json").exists()


def test_unknown_bounds_key_and_option_exit_2(data):
    proc = run("fit", str(data), "--y", "income", "--x", "age", "-m", "noisy-stats", *FIT,
               "-b", "incme=0:1")
    assert proc.returncode == 2 and "did you mean 'income'" in proc.stderr
    proc = run("fit", str(data), "--y", "income", "--x", "age", "-m", "noisy-stats", *FIT,
               "-o", "n_bot=10")
    assert proc.returncode == 2 and "did you mean 'n_boot'" in proc.stderr
    _no_data(proc)


def test_malformed_bounds_and_conflicting_flags_exit_2(data):
    proc = run("fit", str(data), "--y", "income", "--x", "age", "-m", "noisy-stats",
               "-e", "1", "-b", "age=0:1x00")
    assert proc.returncode == 2 and "COL=LO:HI" in proc.stderr
    groups = data.parent / "groups.txt"
    proc = run("fit-groups", str(data), "--by", "region", "--y", "income", "--x", "age",
               "-m", "noisy-stats", "--out", str(data.parent / "g.csv"), *FIT,
               "--groups-file", str(groups), "--keys-from-data")
    assert proc.returncode == 2 and "not both" in proc.stderr
    proc = run("fit", str(data), "--y", "income", "--x", "age", "-m", "noisy-stats", *FIT,
               "--backend", "sparc")
    assert proc.returncode == 2 and "--backend" in proc.stderr


def test_other_usage_errors_exit_2():
    assert run("audit", "laplce").returncode == 2
    proc = run("reproduce", "alabi-fig55")
    assert proc.returncode == 2 and "did you mean" in proc.stderr
    assert run("plan", "--y", "y", "--x", "x", "-m", "adasp", "--n", "100", "-b", "x=0:1",
               "-b", "y=0:1", "-e", "1").returncode == 2


def test_data_errors_exit_1(data, tmp_path):
    proc = run("fit", str(tmp_path / "missing.csv"), "--y", "income", "--x", "age",
               "-m", "noisy-stats", *FIT)
    assert proc.returncode == 1 and "does not exist" in proc.stderr
    text = tmp_path / "text.csv"
    pd.DataFrame({"age": ["a", "b", "c"], "income": [1, 2, 3]}).to_csv(text, index=False)
    proc = run("fit", str(text), "--y", "income", "--x", "age", "-m", "noisy-stats", *FIT)
    assert proc.returncode == 1, proc.stderr


# ------------------------------------------------------------------ ignored parameters
def test_delta_on_pure_method_warns_and_continues(data):
    for method, x in (("noisy-stats", ["age"]), ("dp-gd", ["age"]), ("theil-sen-exp", ["age"])):
        args = [a for v in x for a in ("--x", v)]
        proc = run("fit", str(data), "--y", "income", *args, "-m", method, *FIT, "-d", "1e-6",
                   columns=200)
        assert proc.returncode == 0, proc.stderr
        assert "warning: --delta 1e-06 is ignored" in proc.stderr, method
        assert "ε=1 (as requested; pure DP)" in proc.stdout
    # a method that uses δ: no such warning
    proc = run("fit", str(data), "--y", "income", "--x", "age", "-m", "adassp", *FIT,
               "-d", "1e-6")
    assert proc.returncode == 0 and "is ignored" not in proc.stderr
    # dp-gd with two regressors uses δ
    proc = run("fit", str(data), "--y", "income", "--x", "age", "--x", "region", "-m", "dp-gd",
               *FIT, "-b", "region=0:2", "-d", "1e-6")
    assert proc.returncode == 0 and "is ignored" not in proc.stderr


# ------------------------------------------------------------------ listings when piped
def _specs() -> list[str]:
    from dpreg.bench import list_specs

    return [s["name"] for s in list_specs()]


def test_piped_reproduce_list_keeps_whole_summaries():
    from dpreg.bench import list_specs

    rows = [line.split("\t") for line in run("reproduce", "--list", columns=20).stdout.splitlines()]
    assert rows[0] == ["name", "paper", "figure", "what"]
    assert rows[1:] == [[s["name"], s["paper"], s["figure"], " ".join(s["summary"].split())]
                        for s in list_specs()]


def _audit_names() -> list[str]:
    from dpreg.audit import TARGETS

    return list(TARGETS)


def _method_names() -> list[str]:
    from dpreg.methods import names

    return list(names())


def _dataset_names() -> list[str]:
    from dpreg.data import list_datasets

    return list(list_datasets())


@pytest.mark.parametrize("args, names", [
    (("reproduce", "--list"), _specs), (("audit", "--list"), _audit_names),
    (("methods",), _method_names), (("datasets",), _dataset_names)])
def test_piped_listings_are_whole_and_json(args, names):
    proc = run(*args, columns=20)
    assert proc.returncode == 0 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    first = [line.split("\t")[0] for line in lines[1:]]
    assert first == names()  # every name whole, one row each, nothing wrapped or cut
    assert "│" not in proc.stdout and "─" not in proc.stdout  # no table frame
    assert all(line.count("\t") == lines[0].count("\t") for line in lines)
    doc = json.loads(run(*args, "--json").stdout)
    assert [row["name"] for row in doc] == names()


def test_ledger_show_piped_is_not_cut(tmp_path):
    led = tmp_path / "a-ledger-with-a-long-file-name.db"
    assert run("ledger", "init", str(led), "-e", "2").returncode == 0
    from dpreg import Ledger, PureDP

    with Ledger(None, led) as lg:
        lg.spend(PureDP(0.5), "a-label-that-is-longer-than-the-terminal-width")
    proc = run("ledger", "show", str(led), columns=20)
    assert proc.returncode == 0
    assert "a-label-that-is-longer-than-the-terminal-width" in proc.stdout
    assert str(led) in proc.stdout.splitlines()[0]


# ------------------------------------------------------------------ progress
def test_no_progress_when_piped(data):
    out = data.parent / "groups-out.csv"
    piped = [(lambda *a: run_subprocess(*a, columns=30), []), (run, ["--backend", "reference"])]
    for call, extra in piped:
        # first as a user runs it: python -m dpreg with real pipes
        proc = call("fit-groups", str(data), "--by", "region", "--y", "income", "--x", "age",
                    "-m", "noisy-stats", "--out", str(out), "--keys-from-data", *FIT, *extra)
        assert proc.returncode == 0, proc.stderr
        assert "fitting" not in proc.stderr and "\x1b" not in proc.stderr
        assert "\r" not in proc.stderr
    proc = run("audit", "laplace", "--samples", "2000", "--seed", "1")
    assert "auditing" not in proc.stderr and "\x1b" not in proc.stderr


def test_progress_flag_shows_on_stderr_only(data):
    out = data.parent / "groups-out2.csv"
    proc = run("fit-groups", str(data), "--by", "region", "--y", "income", "--x", "age",
               "-m", "noisy-stats", "--out", str(out), "--keys-from-data", *FIT,
               "--backend", "reference", "--progress")
    assert proc.returncode == 0, proc.stderr
    assert "fitting 3 groups" in proc.stderr  # the bar (public text: a count of groups)
    assert "fitting" not in proc.stdout
    _no_data(proc)
    proc = run("fit-groups", str(data), "--by", "region", "--y", "income", "--x", "age",
               "-m", "noisy-stats", "--out", str(out), "--keys-from-data", *FIT, "--progress")
    assert proc.returncode == 0 and "fitting 3 groups (vectorised)" in proc.stderr
    proc = run("fit", str(data), "--y", "income", "--x", "age", "-m", "theil-sen-exp", *FIT,
               "--progress")
    assert proc.returncode == 0 and "fitting theil-sen-exp" in proc.stderr
    assert "fitting" not in proc.stdout
    _no_data(proc)


def test_library_progress_is_off_by_default(capsys):
    from dpreg import _progress

    assert list(_progress.track(range(3), "x")) == [0, 1, 2]
    with _progress.spinner("y"):
        pass
    assert _progress.interactive() is False  # pytest captures: not a terminal
    assert _progress.interactive(True) is True
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err == ""


def test_progress_bars_count_steps_and_leave_stdout_unchanged(data):
    """--progress draws real bars (counts of steps) on stderr: per prediction point of a
    Theil-Sen fit, per bootstrap batch of the intervals; stdout is byte-identical to a run
    without bars (same seed)."""
    base = ("fit", str(data), "--y", "income", "--x", "age", *FIT)
    for method, extra, bars in (
            ("theil-sen-exp", (), ["Theil-Sen: DP median of 2 prediction points", "2/2"]),
            ("noisy-stats", ("--ci", "0.1"), ["bootstrap: 2000 simulated releases",
                                              "2000/2000"])):
        quiet = run(*base, "-m", method, *extra, "--no-progress", columns=200)
        shown = run(*base, "-m", method, *extra, "--progress", columns=200)
        assert quiet.returncode == shown.returncode == 0, shown.stderr
        assert shown.stdout == quiet.stdout
        assert quiet.stderr == ""
        for text in bars:
            assert text in shown.stderr, (text, shown.stderr[-500:])
            assert text not in shown.stdout
        assert f"fitting {method}" in shown.stderr  # the spinner around the whole fit
        _no_data(shown)


def test_state_demo_bar_on_stderr_only_when_asked(tmp_path):
    """The state demo's bar follows the same rule as every other job: nothing on stderr when
    piped, the bar on stderr with --progress, and the table on stdout either way (it used to
    draw the bar on stdout, and piping also dropped the table)."""
    args = ("demo", "--tracts", "6", "--trials", "1", "--out", str(tmp_path / "d"))
    quiet = run(*args, columns=200)
    shown = run(*args, "--progress", columns=200)
    assert quiet.returncode == shown.returncode == 0, shown.stderr
    assert quiet.stderr == ""
    for proc in (quiet, shown):
        assert "Privacy noise vs sampling error in 6 simulated tracts" in proc.stdout
        assert "DP regressions in" not in proc.stdout
    assert "DP regressions in 6 tracts" in shown.stderr


def test_release_cov_spinner_on_stderr_with_progress(data, tmp_path):
    """release-cov (one pass over a possibly large file) shows a spinner on stderr with
    --progress, nothing when piped, and the same stdout either way."""
    args = ("release-cov", str(data), "-c", "age,income", "-e", "1", "-d", "1e-6",
            "-b", "age=0:100", "-b", "income=0:5000", "--out", str(tmp_path / "r.json"),
            "--seed", "3")
    quiet = run(*args, columns=200)
    shown = run(*args, "--progress", columns=200)
    assert quiet.returncode == shown.returncode == 0, shown.stderr

    def same_release(text: str) -> str:  # the digest covers the file's creation time
        return re.sub(r"sha256 [0-9a-f]{64}", "sha256 <digest>", text)

    assert same_release(shown.stdout) == same_release(quiet.stdout)
    assert "releasing the SSCP matrix of 2 columns" not in quiet.stderr
    assert "releasing the SSCP matrix of 2 columns" in shown.stderr
    _no_data(shown)


# ------------------------------------------------------------------ bad option values
BAD_VALUES = [  # (args after the data file or command, option named, value shown)
    (["ledger", "init", "{tmp}/l.db", "-e", "1", "--neighbouring", "sideways"],
     "--neighbouring", "sideways"),
    (["ledger", "init", "{tmp}/l.db", "-e", "1", "--neighbouring", "add-remov"],
     "did you mean 'add-remove'", "add-remov"),
    (["fit", "{data}", "--y", "income", "--x", "age", "-m", "noisy-stats", *FIT, "--ci", "2"],
     "--ci", "2"),
    (["fit", "{data}", "--y", "income", "--x", "age", "-m", "noisy-stats", *FIT, "--ci", "0"],
     "--ci", "0"),
    (["fit", "{data}", "--y", "income", "--x", "age", "-m", "noisy-stats", *FIT,
      "--backend", "locl"], "did you mean 'local'", "locl"),
    (["fit", "{data}", "--y", "income", "--x", "age", "-m", "theil-sen-exp", *FIT,
      "-o", "pairs=-3"], "pairs", "-3"),
    (["fit", "{data}", "--y", "income", "--x", "age", "-m", "theil-sen-wide", *FIT,
      "-o", "theta=-1"], "theta", "-1"),
    (["fit", "{data}", "--y", "income", "--x", "age", "-m", "adassp", "-d", "1e-6", *FIT,
      "-o", "inference=maybe"], "inference", "maybe"),
    (["fit", "{data}", "--y", "income", "--x", "log(age", "-m", "noisy-stats", *FIT],
     "--x", "log(age"),
    (["fit", "{data}", "--y", "income", "--x", "age", "-m", "noisy-stats", "-e", "1",
      "-b", "age=5:1", "-b", "income=0:5000"], "bounds['age']", "(5.0, 1.0)"),
    (["fit", "{data}", "--y", "income", "--x", "age", "-m", "noisy-stats", "-e", "0", *FIT[2:]],
     "--epsilon", "0"),
    (["fit", "{data}", "--y", "income", "--x", "age", "-m", "adassp", *FIT, "-d", "0.7"],
     "--delta", "0.7"),
    (["fit-groups", "{data}", "--by", "region", "--y", "income", "--x", "age", "-m",
      "noisy-stats", *FIT, "--out", "{tmp}/o.csv", "--keys-from-data", "--backend", "moon"],
     "--backend", "moon"),
    (["fit-groups", "{data}", "--by", "region", "--y", "income", "--x", "age", "-m",
      "noisy-stats", *FIT, "--out", "{tmp}/o.csv", "--keys-from-data", "--workers", "0"],
     "--workers", "0"),
    (["fit-groups", "{data}", "--by", "region", "--y", "income", "--x", "age", "-m",
      "noisy-stats", *FIT, "--out", "{tmp}/o.csv", "--keys-from-data", "--ci", "1.5"],
     "--ci", "1.5"),
    (["audit", "laplace", "--samples", "0"], "--samples", "0"),
    (["audit", "laplace", "--alpha", "2"], "--alpha", "2"),
    (["audit", "laplace", "--workers", "0"], "--workers", "0"),
    (["reproduce", "alabi-fig5", "--workers", "0"], "--workers", "0"),
    (["demo", "--trials", "0"], "--trials", "0"),
    (["demo", "--tracts", "0"], "--tracts", "0"),
    (["demo", "--workers", "0"], "--workers", "0"),
    (["plan", "--y", "income", "--x", "age", "-m", "noisy-stats", "--n", "0", "-b",
      "age=0:100", "-b", "income=0:5000", "-e", "1"], "--n", "0"),
    (["plan", "--y", "income", "--x", "age", "-m", "noisy-stats", "--n", "100", "-b",
      "age=0:100", "-b", "income=0:5000", "--target-sd", "-1"], "--target-sd", "-1"),
    (["plan", "--y", "income", "--x", "age", "-m", "noisy-stats", "--n", "100", "-b",
      "age=0:100", "-b", "income=0:5000", "-e", "1", "--target", "ag", "--target-sd", "1"],
     "did you mean 'age'", "ag"),
    (["regress", "{tmp}/none.json", "y ~ x", "--ci", "3"], "--ci", "3"),
    (["fit", "{data}", "--y", "income", "--x", "age", "-m", "noisy-stats", *FIT,
      "--ci", "abc"], "--ci", "is not a number"),  # the ASCII number parser: also exit 2
]


@pytest.mark.parametrize("args, named, value", BAD_VALUES,
                         ids=[" ".join(a[:1] + [n]) for a, n, _ in BAD_VALUES])
def test_bad_option_values_are_usage_errors(data, tmp_path, args, named, value):
    """Every bad parameter value -- an invalid choice, an unparseable number, ε/δ/α/counts out
    of range, a malformed formula term or bounds -- exits 2 with one line naming the option
    and what was received, before anything is read or charged."""
    from typer.testing import CliRunner

    from dpreg.cli import app

    argv = [a.replace("{data}", str(data)).replace("{tmp}", str(tmp_path)) for a in args]
    res = CliRunner().invoke(app, argv, env={"COLUMNS": "250"})
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert named in res.output and value in res.output, res.output
    assert "Traceback" not in res.output
    assert "123.45" not in res.output
    assert not (tmp_path / "l.db").exists() and not (tmp_path / "o.csv").exists()


def test_data_errors_still_exit_1(data, tmp_path):
    """Errors from the data (not from a parameter) keep exit code 1."""
    from typer.testing import CliRunner

    from dpreg.cli import app

    bad = tmp_path / "bad.csv"
    bad.write_text("age,income\n1,2\nx,3\n")
    res = CliRunner().invoke(app, ["fit", str(bad), "--y", "income", "--x", "age", "-m",
                                   "noisy-stats", *FIT])
    assert res.exit_code == 1, res.output
    res = CliRunner().invoke(app, ["fit", str(tmp_path / "missing.csv"), "--y", "income",
                                   "--x", "age", "-m", "noisy-stats", *FIT])
    assert res.exit_code == 1, res.output


# ------------------------------------------------------------------ ignored parameters
def test_options_the_method_does_not_use_are_usage_errors_naming_key_and_method(data):
    """An option the method does not have, or has but does not use in this call, is refused
    (exit 2) naming the option and the method -- never silently ignored."""
    from typer.testing import CliRunner

    from dpreg.cli import app

    base = ["fit", str(data), "--y", "income", "--x", "age", *FIT, "--json"]
    res = CliRunner().invoke(app, [*base, "-m", "theil-sen-exp", "-o", "dof=5"])
    assert res.exit_code == 2 and "dof" in res.stderr and "theil-sen-exp" in res.stderr
    res = CliRunner().invoke(app, [*base, "-m", "theil-sen-exp", "-o", "slope_range=[-1,1]"])
    assert res.exit_code == 2 and "slope_range" in res.stderr and "ci_alpha" in res.stderr
    res = CliRunner().invoke(app, [*base, "-m", "theil-sen-smooth", "-o", "dof=5"])
    assert res.exit_code == 0, res.stderr  # used there
    res = CliRunner().invoke(app, [*base, "-m", "noisy-stats", "-o", "inference=false",
                                   "-o", "n_boot=100"])
    assert res.exit_code == 2 and "n_boot" in res.stderr and "noisy-stats" in res.stderr
    assert "123.45" not in res.stderr


@pytest.mark.parametrize("method", ["dp-gd", "boosted-adassp", "tukey-em", "dp-intercept"])
def test_ci_with_a_method_without_intervals_is_a_usage_error(data, tmp_path, method):
    """--ci where the method never has an interval: exit 2 before anything is charged."""
    from typer.testing import CliRunner

    from dpreg import Ledger, PureDP
    from dpreg.cli import app

    led = tmp_path / "l.db"
    Ledger(PureDP(10), led).close()
    res = CliRunner().invoke(app, ["fit", str(data), "--y", "income", "--x", "age", *FIT,
                                   "-d", "1e-6", "-m", method, "--ci", "0.1",
                                   "--ledger", str(led)])
    assert res.exit_code == 2, res.output
    assert f"--ci is not supported by --method {method}" in res.output
    assert Ledger(None, led).events() == []


# ------------------------------------------------------------------ a new user's day
def test_new_user_journey_codebook_formula_ledger(tmp_path):
    """As a new user would (issue 20): write the fair data to CSV, `codebook init`, fill in
    public bounds and levels, fit `C(occupation) + yrs_married*age + np.log(age)` with a
    codebook charging a ledger, then `ledger show` lists what was released (method, formula,
    the data file's name) -- all with pipes."""
    from dpreg.data import load_dataset

    load_dataset("fair").frame.to_csv(tmp_path / "fair.csv", index=False)
    init = run("codebook", "init", "fair.csv", "--out", "cb.toml", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    text = (tmp_path / "cb.toml").read_text(encoding="utf-8")
    assert "bounds = []" in text  # empty: nothing read from the data
    filled = {"rate_marriage": "[1, 5]", "age": "[17.5, 42]", "yrs_married": "[0.5, 23]"}
    for col, b in filled.items():
        text = text.replace(f'[columns.{col}]\ntype = "numeric"\nbounds = []',
                            f'[columns.{col}]\ntype = "numeric"\nbounds = {b}')
    text = text.replace('[columns.occupation]\ntype = "numeric"\nbounds = []',
                        '[columns.occupation]\ntype = "categorical"\nlevels = [1, 2, 3, 4, 5, 6]')
    (tmp_path / "cb.toml").write_text(text, encoding="utf-8")
    assert run("ledger", "init", "l.db", "-e", "4", "-d", "1e-5",
               cwd=tmp_path).returncode == 0
    fit = run("fit", "fair.csv", "--codebook", "cb.toml", "--y", "rate_marriage",
              "--x", "C(occupation)", "--x", "yrs_married*age", "--x", "np.log(age)",
              "-m", "adassp", "-e", "1", "-d", "1e-6", "--ledger", "l.db", "--json",
              cwd=tmp_path)
    assert fit.returncode == 0, fit.stderr
    out = json.loads(fit.stdout)
    assert out["bounds"]["yrs_married:age"] == [0.5 * 17.5, 23.0 * 42.0]
    assert out["bounds"]["C(occupation)[T.6]"] == [0.0, 1.0]
    assert {"np.log(age)", "yrs_married:age"} <= set(out["extra"]["derived_bounds"])
    assert out["ledger"]["remaining"]
    show = run("ledger", "show", "l.db", cwd=tmp_path, columns=400)
    assert show.returncode == 0, show.stderr
    row = show.stdout.splitlines()[2]  # title, header, the one release
    assert "adassp" in row and "fair.csv" in row and "np.log(age)" in row
