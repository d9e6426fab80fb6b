"""Studies and results-page tooling stay out of the installed package.

The wheel ships ``src/dpreg`` only; nothing in the library imports ``studies`` (a user's
installation has no such package); and a wheel built from this checkout lists no study module.
Equivalent by hand: ``python -m pip wheel . -w /tmp/wheel --no-deps`` and list the wheel.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "dpreg"


def _is_study(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return any(p in ("studies", "study.py", "studies.py") or p.startswith("study") for p in parts)


def test_wheel_config_ships_only_the_library():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = conf["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["src/dpreg"]
    assert not wheel.get("include") and not wheel.get("force-include")
    assert (ROOT / "studies" / "__init__.py").exists()


def test_no_study_module_in_the_library():
    found = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if _is_study(p.name)]
    assert not found, f"study modules inside the package (move them to studies/): {found}"


def _imports(path: Path) -> set[str]:
    mods: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            mods.add(node.module)
    return mods


def test_the_library_never_imports_studies():
    bad = {str(p.relative_to(SRC)): sorted(m for m in _imports(p) if m.split(".")[0] == "studies")
           for p in SRC.rglob("*.py")}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"library modules import the (unshipped) studies package: {bad}"


def test_the_check_catches_a_study_import(tmp_path):
    planted = tmp_path / "m.py"
    planted.write_text("import numpy\nfrom studies.auto import run_grid\n", encoding="utf-8")
    assert "studies.auto" in _imports(planted)
    assert _is_study("dpreg/auto/study.py") and not _is_study("dpreg/bench/runner.py")


def test_built_wheel_lists_no_study_module(tmp_path):
    pytest.importorskip("hatchling")  # dev extra; the build runs offline with it
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "-w", str(tmp_path),
                           "--no-deps", "--no-build-isolation", "-q"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("dpreg-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n == "dpreg/__init__.py" for n in names)
    assert {n.split("/")[0] for n in names} == {"dpreg", wheel.name.split("-py3")[0] + ".dist-info"}
    assert not [n for n in names if _is_study(n)], [n for n in names if _is_study(n)]
