"""Studies and results-page tooling stay out of the installed package.

The wheel ships ``src/dpreg`` only; nothing in the library imports ``studies`` (a user's
installation has no such package); and a wheel built from this checkout lists no study module
(tests/wheel_contents.py, also run by ``make lint`` as ``make wheel-check``).  Equivalent by hand:
``python -m pip wheel . -w /tmp/wheel --no-deps`` and list the wheel.
"""

from __future__ import annotations

import ast
import tomllib
import zipfile
from pathlib import Path

import pytest

from wheel_contents import build_wheel, is_study, problems

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "dpreg"


def test_wheel_config_ships_only_the_library():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = conf["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["src/dpreg"]
    assert not wheel.get("include") and not wheel.get("force-include")
    assert (ROOT / "studies" / "__init__.py").exists()


def test_no_study_module_in_the_library():
    found = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if is_study(p.name)]
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
    assert is_study("dpreg/auto/study.py") and not is_study("dpreg/bench/runner.py")


def test_built_wheel_lists_no_study_module(tmp_path):
    pytest.importorskip("hatchling")  # dev extra; the build runs offline with it
    wheel = build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n == "dpreg/__init__.py" for n in names)
    assert {n.split("/")[0] for n in names} == {"dpreg", wheel.name.split("-py3")[0] + ".dist-info"}
    assert not [n for n in names if is_study(n)], [n for n in names if is_study(n)]
    assert problems(wheel) == []


def test_the_wheel_check_rejects_a_study_module(tmp_path):
    """problems() is what `make wheel-check` fails on: it must see a planted study module."""
    good = tmp_path / "dpreg-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(good, "w") as z:
        z.writestr("dpreg/__init__.py", "")
        z.writestr("dpreg-0.1.0.dist-info/METADATA", "")
    assert problems(good) == []
    bad = tmp_path / "x" / good.name
    bad.parent.mkdir()
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("dpreg/__init__.py", "")
        z.writestr("dpreg/auto/study.py", "")
        z.writestr("studies/report.py", "")
        z.writestr("dpreg-0.1.0.dist-info/METADATA", "")
    found = problems(bad)
    assert len(found) == 2 and "studies" in found[0] and "dpreg/auto/study.py" in found[1]
