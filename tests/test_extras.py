"""``pip install dpreg`` is the library; the command line, plots, reproductions and the auditor's
command are extras (issue 31 item 4, docs/install.md).

Each check runs tests/_base_install.py in a fresh interpreter in which the extras' dependencies
(typer, rich, matplotlib, statsmodels) are absent: the base paths run without trying to import
one, each optional part says which extra to install, and the ``dpreg`` console script prints
the ``[cli]`` hint instead of a traceback.  A planted eager import shows that the base-path
check fails when a module imports one of them at load time.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import dpreg

ROOT = Path(__file__).resolve().parents[1]
HARNESS = Path(__file__).resolve().parent / "_base_install.py"
SRC = Path(dpreg.__file__).resolve().parents[1]  # the folder that holds the dpreg package
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _run(*args: str, src: Path = SRC, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(HARNESS.parent)])}
    return subprocess.run([sys.executable, str(HARNESS), *args], capture_output=True, text=True,
                          env=env, cwd=str(ROOT), timeout=timeout)


def test_base_paths_import_no_extra_dependency():
    proc = _run("base")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("ok")


@pytest.mark.parametrize("module", ["linear_model/_base.py", "_formula/__init__.py"])
def test_the_base_path_check_catches_an_eager_import(tmp_path, module):
    """A copy of the package with ``import matplotlib`` at the top of one module (one loaded on
    ``import dpreg``, one only when regress() parses a formula) fails the base-path run."""
    copy = tmp_path / "src"
    shutil.copytree(SRC / "dpreg", copy / "dpreg",
                    ignore=shutil.ignore_patterns("__pycache__", "files"))
    (copy / "dpreg" / "data" / "files").symlink_to(SRC / "dpreg" / "data" / "files")
    target = copy / "dpreg" / module
    text = target.read_text(encoding="utf-8")
    head, sep, rest = text.partition("from __future__ import annotations\n")
    assert sep, module
    target.write_text(head + sep + "import matplotlib  # planted\n" + rest, encoding="utf-8")
    proc = _run("base", src=copy)
    assert proc.returncode != 0
    assert "matplotlib" in proc.stderr


def test_each_optional_part_names_its_extra():
    proc = _run("missing")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    for extra in ("plots", "repro", "cli", "audit"):
        assert f"pip install 'dpreg[{extra}]'" in out
    assert out.strip().endswith("ok")


def test_plot_without_the_plots_extra_is_refused_before_anything_is_read():
    proc = _run("cli-plot")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.count("refused: [plots]") == 2


@pytest.mark.parametrize("how", ["console script", "python -m dpreg"])
def test_the_command_without_the_cli_extra_says_which_extra(how):
    target = PYPROJECT["project"]["scripts"]["dpreg"]
    if how == "console script":
        proc = _run("console", target)
    else:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(HARNESS.parent)])}
        code = ("import runpy, sys, _base_install as h; h.block(('typer', 'rich')); "
                "sys.argv = ['dpreg', '--help']; runpy.run_module('dpreg', run_name='__main__')")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, cwd=str(ROOT), timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "pip install 'dpreg[cli]'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1  # one line


def test_the_command_with_the_cli_extra_runs():
    proc = subprocess.run([sys.executable, "-m", "dpreg", "--version"], capture_output=True,
                          text=True, cwd=str(ROOT), timeout=120,
                          env={**os.environ, "PYTHONPATH": str(SRC)})
    assert proc.returncode == 0 and proc.stdout.startswith("dpreg "), proc.stderr


def _names(requirements: list[str]) -> set[str]:
    import re

    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_base_dependencies_are_the_library_only():
    base = _names(PYPROJECT["project"]["dependencies"])
    assert base == {"numpy", "scipy", "pandas", "pyarrow", "formulaic", "scikit-learn"}
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"typer", "rich"} <= _names(extras["cli"])
    assert "matplotlib" in _names(extras["plots"])
    assert "statsmodels" in _names(extras["repro"]) and "dpreg[cli,plots]" in extras["repro"]
    assert "dpreg[cli]" in extras["audit"]
    (everything,) = extras["all"]
    assert set(everything.removeprefix("dpreg[").removesuffix("]").split(",")) == \
        set(extras) - {"all", "dev", "docs"}


def test_the_extra_map_matches_pyproject():
    """Every optional module the library names in its errors is installed by that extra."""
    from dpreg._extras import EXTRA_OF

    extras = PYPROJECT["project"]["optional-dependencies"]

    def closure(extra: str) -> set[str]:
        out = set()
        for req in extras[extra]:
            if req.startswith("dpreg["):
                for inner in req.removeprefix("dpreg[").removesuffix("]").split(","):
                    out |= closure(inner)
            else:
                out |= _names([req])
        return out

    for module, extra in EXTRA_OF.items():
        assert module in closure(extra), (module, extra)


def _module_level_imports(tree: ast.Module) -> list[tuple[str, int]]:
    """The modules a file imports when it is loaded (module level, including inside a
    top-level ``try``/``if``), as (name, line)."""
    out: list[tuple[str, int]] = []
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.module, node.lineno))
        elif isinstance(node, (ast.Try, ast.If)):
            stack += node.body + node.orelse + getattr(node, "finalbody", [])
            for h in getattr(node, "handlers", []):
                stack += h.body
    return out


def eager_heavy_imports(package: Path) -> list[str]:
    """``path:line module`` for every module-level import of an extra's dependency in the
    package, except the command line's own (the package dpreg/cli lives behind [cli]: its
    __init__ names the extra before any of its modules is loaded)."""
    heavy = ("matplotlib", "statsmodels", "typer", "rich")
    found = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).as_posix()
        for name, line in _module_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if name.split(".")[0] in heavy and not rel.startswith("dpreg/cli/"):
                found.append(f"{rel}:{line} {name}")
    return found


def test_no_module_imports_an_extra_dependency_when_loaded():
    """Static complement of the base-path run: also the modules the base paths never load
    (bench, demo, audit) import an extra's dependency only inside the function that needs it,
    after dpreg._extras.require names the extra."""
    assert eager_heavy_imports(SRC / "dpreg") == []


def test_the_static_import_check_can_fail(tmp_path):
    pkg = tmp_path / "dpreg"
    (pkg / "bench").mkdir(parents=True)
    (pkg / "bench" / "plots.py").write_text("try:\n    import matplotlib.pyplot as plt\n"
                                           "except ImportError:\n    plt = None\n")
    (pkg / "cli").mkdir()
    (pkg / "cli" / "_fit.py").write_text("import typer\n")
    (pkg / "ok.py").write_text("def f():\n    import statsmodels.api as sm\n    return sm\n")
    assert eager_heavy_imports(pkg) == ["dpreg/bench/plots.py:2 matplotlib.pyplot"]


def test_the_wheel_check_rejects_a_heavy_base_requirement(tmp_path):
    """tests/wheel_contents.py (``make wheel-check``; the real wheel in
    studies/tests/test_not_shipped.py) fails a wheel whose base install pulls an extra's
    dependency, and passes one that requires it under an extra only."""
    import zipfile

    from wheel_contents import problems

    def wheel(folder: str, metadata: str) -> Path:
        path = tmp_path / folder / "dpreg-0.1.0-py3-none-any.whl"
        path.parent.mkdir()
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("dpreg/__init__.py", "")
            z.writestr("dpreg-0.1.0.dist-info/METADATA", metadata)
        return path

    ok = ("Requires-Dist: numpy>=1.26\nRequires-Dist: typer>=0.12; extra == 'cli'\n"
          "Requires-Dist: matplotlib>=3.8; extra == \"plots\"\n")
    assert problems(wheel("ok", ok)) == []
    bad = ok + "Requires-Dist: statsmodels>=0.14\nRequires-Dist: rich (>=13)\n"
    (found,) = problems(wheel("bad", bad))
    assert "['rich', 'statsmodels']" in found
