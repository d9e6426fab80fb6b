"""No module imports another package's private module (issue 31): what a caller needs from
another package is a public name of that package (its ``__init__``/``__all__``), and
validation shared across packages lives in ``dpreg._validation``.  A private module
``dpreg.pkg._mod`` (or deeper, ``dpreg.pkg.sub._mod``) may be imported only from inside the
package that owns it; the private modules of the top level (``dpreg._spec``,
``dpreg._validation``, ...) belong to the whole library.  No exemptions."""

from __future__ import annotations

import ast
from pathlib import Path

import dpreg

SRC = Path(dpreg.__file__).parent


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _owner(module: str) -> str | None:
    """The package below the top level (``dpreg.simple`` for ``dpreg.simple.fast._kernels``)
    that owns ``module`` when a component of it below that package is private, else None."""
    parts = module.split(".")
    if any(part.startswith("_") and not part.startswith("__") for part in parts[2:]):
        return ".".join(parts[:2])
    return None


def _is_module(dotted: str, root: Path) -> bool:
    base = root.parent.joinpath(*dotted.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def _imports(tree: ast.AST, here: str, is_package: bool, root: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing module's package
                base = here.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((node.lineno, mod))
            # ``from dpreg.pkg import _mod`` names a module; a name from a module is not one
            out.extend((node.lineno, f"{mod}.{a.name}") for a in node.names
                       if _is_module(f"{mod}.{a.name}", root))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
    return [(line, m) for line, m in out if m.startswith("dpreg.")]


def cross_package_private_imports(root: Path = SRC) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        here = _module_name(path, root)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, mod in _imports(tree, here, path.name == "__init__.py", root):
            owner = _owner(mod)
            if owner is not None and not (here == owner or here.startswith(owner + ".")):
                found.append(f"{path.relative_to(root.parent)}:{line}: {mod}")
    return sorted(set(found))


def test_no_cross_package_private_imports():
    assert cross_package_private_imports() == []


def test_the_check_rejects_a_cross_package_private_import(tmp_path):
    pkg = tmp_path / "dpreg"
    for sub in ("simple", "bench"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "simple" / "_common.py").write_text("X = 1\n")
    (pkg / "simple" / "ok.py").write_text("from dpreg.simple._common import X\n"
                                          "from dpreg._validation import check_int\n")
    (pkg / "bench" / "bad.py").write_text("from dpreg.simple._common import X\n"
                                          "from dpreg.simple import _common\n")
    (pkg / "simple" / "fast").mkdir()
    (pkg / "simple" / "fast" / "__init__.py").write_text("from dpreg.simple import _common\n")
    (pkg / "simple" / "fast" / "_kernels.py").write_text("Y = 2\n")
    (pkg / "simple" / "deep.py").write_text("from dpreg.simple.fast._kernels import Y\n")
    (pkg / "bench" / "deep.py").write_text("import dpreg.simple.fast._kernels\n")
    assert cross_package_private_imports(pkg) == [
        "dpreg/bench/bad.py:1: dpreg.simple._common",
        "dpreg/bench/bad.py:2: dpreg.simple._common",
        "dpreg/bench/deep.py:1: dpreg.simple.fast._kernels",
    ]
