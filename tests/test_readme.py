"""The README's snippets run as written: every ```python block (in order, one interpreter, as a
reader pasting them into one session would) and every ```bash block marked
``<!-- readme-test: run -->``, each in a fresh directory with the installed ``dpreg`` on PATH.

A snippet that names an undefined variable, a missing import, a data set that is not shipped or
a CLI option that does not exist fails here."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"(?P<marker><!-- readme-test: run -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)


def blocks(text: str) -> list[tuple[str, bool, str]]:
    """(language, marked to run, body) of every fenced block."""
    return [(m["lang"], bool(m["marker"]), m["body"]) for m in FENCE.finditer(text)]


def shell_lines(body: str) -> list[str]:
    """Commands of a bash block: continuation lines joined, comments and blanks dropped."""
    joined = body.replace("\\\n", " ")
    return [ln.strip() for ln in joined.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["MPLBACKEND"] = "Agg"
    return env


def test_the_parser_finds_the_blocks():
    text = "a\n```python\nx = 1\n```\n<!-- readme-test: run -->\n```bash\ndpreg a \\\n  b\n# c\n```\n```\nsyn\n```\n"
    got = blocks(text)
    assert got == [("python", False, "x = 1\n"), ("bash", True, "dpreg a \\\n  b\n# c\n"), ("", False, "syn\n")]
    assert shell_lines(got[1][2]) == ["dpreg a    b"]


def test_readme_python_blocks_run(tmp_path):
    code = [body for lang, _, body in blocks(README.read_text()) if lang == "python"]
    assert len(code) >= 5, "the README lost its Python examples"
    script = tmp_path / "readme_snippets.py"
    script.write_text("\n\n".join(code))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_readme_cli_lines_run(tmp_path):
    """The first ``dpreg`` line runs the installed command (a subprocess); the later ones run
    in this process (tests/_cli.py: the same command without ~5 s of start-up each)."""
    from _cli import run_cli

    marked = [body for lang, run, body in blocks(README.read_text()) if run]
    assert marked, "the README has no runnable command-line example"
    entry_point_run = False
    for body in marked:
        for line in shell_lines(body):
            argv = shlex.split(line)
            assert argv[0] in {"dpreg", "python"}, f"unexpected command in README: {line}"
            if argv[0] == "dpreg" and entry_point_run:
                proc = run_cli(*argv[1:], cwd=tmp_path)
            else:
                entry_point_run = entry_point_run or argv[0] == "dpreg"
                if argv[0] == "python":
                    argv[0] = sys.executable
                proc = subprocess.run(argv, cwd=tmp_path, env=_env(), capture_output=True,
                                      text=True, timeout=600)
            assert proc.returncode == 0, f"{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert entry_point_run


@pytest.mark.parametrize("name", ["algorithms.md", "design.md", "../shared"])
def test_docs_do_not_cite_files_outside_the_repository(name):
    """Users get the repository: its docs and docstrings must not point at files it lacks."""
    hits = []
    for path in [README, *ROOT.joinpath("docs").rglob("*.md"), *ROOT.joinpath("src").rglob("*.py")]:
        if name in path.read_text(encoding="utf-8"):
            hits.append(str(path.relative_to(ROOT)))
    assert not hits, f"{name} is cited in {hits}"
