"""Fuzzing the CLI (in process, ``typer.testing.CliRunner``): hostile CSV files and option
values.  With ``--debug`` the command's exception surfaces, so the contract of ``fuzzlib`` is
checked exactly: only documented :class:`~dpreg.exceptions.DPRegError` subclasses or a usage
error (exit code 2), no NaN/inf in a JSON release, and a persistent ``--ledger`` is unchanged
whenever the input was rejected.  Without ``--debug`` every outcome is an exit code 0/1/2 with
no traceback."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from fuzzlib import COUNTS, FUZZ, finite_tree, xy
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from dpreg import ApproxDP, Ledger
from dpreg.cli import app
from dpreg.exceptions import DPRegError, InvalidInputError

RUNNER = CliRunner()
METHODS = ["noisy-stats", "dp-intercept", "theil-sen-exp", "theil-sen-smooth", "dp-gd",
           "adassp", "covariance-ols", "tukey-em", "bogus"]
NUMBERS = st.sampled_from(["1", "0", "-1", "nan", "inf", "-inf", "1e308", "5e-324", "x", "",
                           "0.5", "1e-300"])
BOUND = st.sampled_from(["0:1", "1:0", "0:0", "nan:1", "-inf:inf", "0:1e308", "a:b", "0", "",
                         "-1:1", "0:1:2"])


def _events(path: Path) -> int:
    with Ledger(None, path) as led:
        return len(led.events())


def _invoke(args: list[str], ledger: Path | None) -> None:
    before = _events(ledger) if ledger is not None else None
    res = RUNNER.invoke(app, ["--debug", *args])
    exc = res.exception
    if exc is not None and not isinstance(exc, SystemExit):
        assert isinstance(exc, DPRegError), f"crash: {type(exc).__name__}: {exc} ({args})"
        if isinstance(exc, InvalidInputError) and ledger is not None:
            assert _events(ledger) == before, f"rejected input was charged: {args}"
        return
    assert res.exit_code in (0, 1, 2), (res.exit_code, args, res.output)
    if res.exit_code == 0 and "--json" in args:
        obj = json.loads(res.stdout)
        if not (isinstance(obj, dict) and obj.get("failed")):
            finite_tree({k: v for k, v in obj.items() if k not in ("privacy",)}
                        if isinstance(obj, dict) else obj, args[0])
    plain = RUNNER.invoke(app, args)  # no --debug: an exit code, never a traceback
    assert plain.exit_code in (0, 1, 2) and "Traceback" not in plain.output, (args, plain.output)


def _write_csv(folder: Path, x, y) -> Path:
    path = folder / "data.csv"
    try:
        frame = pd.DataFrame({"x": x, "y": y})
    except Exception:
        frame = pd.DataFrame({"x": [1.0], "y": ["oops"]})
    frame["g"] = np.arange(len(frame)) % 2
    frame.to_csv(path, index=False)
    return path


@FUZZ
@given(xy(max_size=12), st.sampled_from(METHODS), NUMBERS, BOUND, BOUND,
       st.sampled_from([None, "1e-6", "0", "2"]), st.booleans())
def test_fit(data, method, eps, bx, by, delta, use_ledger):
    COUNTS["cli:fit"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        csv = _write_csv(folder, *data)
        args = ["fit", str(csv), "--y", "y", "--x", "x", "-m", method, "-e", eps,
                "-b", f"x={bx}", "-b", f"y={by}", "--seed", "1", "--json"]
        if delta is not None:
            args += ["-d", delta]
        if method == "tukey-em":
            args += ["-o", "n_models=2"]
        led = None
        if use_ledger:
            led = folder / "l.db"
            Ledger(ApproxDP(1e12, 0.5), led).close()
            args += ["--ledger", str(led)]
        _invoke(args, led)


@FUZZ
@given(xy(max_size=12), st.sampled_from(["noisy-stats", "theil-sen-exp", "bogus"]), NUMBERS,
       BOUND, BOUND)
def test_fit_groups(data, method, eps, bx, by):
    COUNTS["cli:fit-groups"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        csv = _write_csv(folder, *data)
        _invoke(["fit-groups", str(csv), "--by", "g", "--y", "y", "--x", "x", "-m", method,
                 "-e", eps, "-b", f"x={bx}", "-b", f"y={by}", "--out", str(folder / "o.csv"),
                 "--keys-from-data", "--seed", "2", "--json"], None)


@FUZZ
@given(xy(max_size=12), NUMBERS, st.sampled_from(["1e-6", "0", "1", "nan"]), BOUND,
       st.sampled_from(["y ~ x", "y ~ q", "~~"]), st.booleans())
def test_release_cov_and_regress(data, eps, delta, b, formula, use_ledger):
    COUNTS["cli:release-cov"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        csv = _write_csv(folder, *data)
        out = folder / "rel.json"
        args = ["release-cov", str(csv), "-c", "x", "-c", "y", "-b", f"x={b}", "-b", f"y={b}",
                "-e", eps, "-d", delta, "--out", str(out), "--seed", "3"]
        led = None
        if use_ledger:
            led = folder / "l.db"
            Ledger(ApproxDP(1e12, 0.5), led).close()
            args += ["--ledger", str(led)]
        _invoke(args, led)
        if out.exists():
            COUNTS["cli:regress"] += 1
            _invoke(["regress", str(out), formula, "--json"], None)


@FUZZ
@given(NUMBERS, st.sampled_from(["0", "1e-6", "1", "nan", "-1"]))
def test_ledger_commands(eps, delta):
    COUNTS["cli:ledger"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "l.db"
        _invoke(["ledger", "init", str(path), "-e", eps, "-d", delta], None)
        if path.exists():
            _invoke(["ledger", "show", str(path)], None)
        _invoke(["ledger", "show", str(Path(tmp) / "missing.db")], None)


@FUZZ
@given(st.sampled_from(["laplace", "ptr", "noisy-stats", "nope", ""]),
       st.sampled_from(["16", "0", "-5", "x", "100"]), st.sampled_from(["1e-6", "0", "2", "nan"]),
       st.sampled_from([None, "shift-full", "nope"]))
def test_audit_command(method, samples, alpha, pairs):
    COUNTS["cli:audit"] += 1
    args = ["audit", method, "--samples", samples, "--alpha", alpha, "--seed", "1", "--json"]
    if pairs is not None:
        args += ["--pairs", pairs]
    _invoke(args, None)
    assert math.isfinite(1.0)
