"""Run the ``dpreg`` command in the test process (typer's runner) or as a real subprocess.

A subprocess pays Python's start-up and ``import dpreg`` (numpy, scipy, pandas, scikit-learn:
about 5 s of CPU on the 2-core development machine) on every call, so the tests that check
what a command *does* run it in-process with :func:`run_cli`: the same argument parsing, exit
code, stdout and stderr, without the start-up.  A few tests keep :func:`run_subprocess` for
what only the real entry point shows (``python -m dpreg``, the traceback of ``--debug``,
environment variables read at start-up).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

from typer.testing import CliRunner

SRC = Path(__file__).resolve().parents[1] / "src"


@contextlib.contextmanager
def _cwd(path: str | os.PathLike[str] | None) -> Iterator[None]:
    if path is None:
        yield
        return
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _to_stderr(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def run_cli(*args: str, cwd: str | os.PathLike[str] | None = None, columns: int = 200,
            env: Mapping[str, str | None] | None = None, input: str | None = None,
            show_warnings: bool = False) -> subprocess.CompletedProcess[str]:
    """``dpreg ARGS`` in this process, returned like ``subprocess.run(..., text=True)``.

    stdout and stderr are pipes (not a terminal), as in a subprocess.  Python warnings are
    ignored as ``PYTHONWARNINGS=ignore`` does (the CLI's own warnings are printed lines), or
    with ``show_warnings`` printed to stderr as Python's default filters print them; an
    exception that is not the command's exit (a crash) is raised here, with its traceback.
    ``env`` entries set to None are removed for the call.
    """
    from dpreg import cli
    from dpreg.cli import app

    environ: dict[str, str | None] = {"COLUMNS": str(columns), "FORCE_COLOR": None,
                                      "DPREG_LEDGER": None}
    environ.update(env or {})
    with _cwd(cwd), warnings.catch_warnings():
        if show_warnings:
            warnings.simplefilter("default")
            warnings.showwarning = _to_stderr
        else:
            warnings.simplefilter("ignore")
        # the CLI's consoles are made once, at import, and keep the width $COLUMNS had then
        # (a subprocess reads it at start-up): pinned to ``columns`` for this call
        widths = [(c, c._width) for c in (cli.console, cli.err_console)]
        try:
            for c, _ in widths:
                c._width = columns
            res = CliRunner().invoke(app, [str(a) for a in args], env=environ, input=input)
        finally:
            for c, w in widths:
                c._width = w
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return subprocess.CompletedProcess(list(args), res.exit_code, res.stdout, res.stderr)


def run_subprocess(*args: str, cwd: str | os.PathLike[str] | None = None, columns: int = 200,
                   env: Mapping[str, str] | None = None, module: str = "dpreg",
                   timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m dpreg ARGS`` (``module="dpreg.cli"`` for the other entry point) in a fresh
    interpreter importing this checkout's ``src``."""
    environ = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   COLUMNS=str(columns), PYTHONWARNINGS="ignore")
    environ.pop("FORCE_COLOR", None)
    environ.pop("DPREG_LEDGER", None)
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], capture_output=True,
                          text=True, env=environ, cwd=cwd, timeout=timeout)
