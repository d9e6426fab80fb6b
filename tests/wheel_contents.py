"""The installed package is the library only: build the wheel and check its file list.

The wheel must hold ``dpreg/`` and its ``.dist-info`` and nothing named like a research study
(``study*``, ``studies``): those live in the top-level ``studies/`` folder, outside the package.
Its metadata must require only the library's dependencies: typer, rich, matplotlib and
statsmodels come with extras (``Requires-Dist: ...; extra == "cli"``), never with the base
install (issue 31; docs/install.md).
Used by ``make wheel-check`` (part of ``make lint``, so CI runs it) and by
studies/tests/test_not_shipped.py.  Equivalent by hand::

    python -m pip wheel . --no-deps -w /tmp/x && python -m zipfile -l /tmp/x/dpreg-*.whl

Commands (from the repository root)::

    python tests/wheel_contents.py            # build into a temporary folder, check, exit 1 on failure
    python tests/wheel_contents.py WHEEL      # check an existing wheel

The build runs offline (``--no-build-isolation``: the build backend, hatchling, is in the dev
extra).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def is_study(name: str) -> bool:
    """Whether a path names a study module or folder (``study*``, ``studies``)."""
    parts = name.replace("\\", "/").split("/")
    return any(p in ("studies", "study.py", "studies.py") or p.startswith("study") for p in parts)


def build_wheel(dest: Path, root: Path = ROOT) -> Path:
    """Build the project's wheel into ``dest`` (offline, no dependencies) and return its path."""
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(root), "-w", str(dest),
                           "--no-deps", "--no-build-isolation", "-q"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"pip wheel failed ({proc.returncode}):\n{proc.stderr}")
    (wheel,) = dest.glob("dpreg-*.whl")
    return wheel


#: dependencies that only extras may require
EXTRA_ONLY = ("typer", "rich", "matplotlib", "statsmodels")


def base_requirements(metadata: str) -> list[str]:
    """The names of the ``Requires-Dist`` entries without an ``extra ==`` marker."""
    import re

    out = []
    for line in metadata.splitlines():
        if line.startswith("Requires-Dist:") and "extra ==" not in line:
            req = line.removeprefix("Requires-Dist:").strip()
            out.append(re.split(r"[<>=!~\[; (]", req, maxsplit=1)[0].lower())
    return out


def problems(wheel: Path) -> list[str]:
    """What is wrong with the wheel's file list and base requirements (empty when it ships the
    library only)."""
    names = zipfile.ZipFile(wheel).namelist()
    out = []
    if "dpreg/__init__.py" not in names:
        out.append("dpreg/__init__.py is missing")
    dist_info = wheel.name.split("-py3")[0] + ".dist-info"
    extra_tops = sorted({n.split("/")[0] for n in names} - {"dpreg", dist_info})
    if extra_tops:
        out.append(f"top-level entries other than dpreg/ and {dist_info}/: {extra_tops}")
    studies = [n for n in names if is_study(n)]
    if studies:
        out.append(f"study modules in the wheel: {studies}")
    meta = f"{dist_info}/METADATA"
    if meta in names:
        heavy = sorted(set(base_requirements(zipfile.ZipFile(wheel).read(meta).decode("utf-8")))
                       & set(EXTRA_ONLY))
        if heavy:
            out.append(f"the base install requires {heavy} (only an extra may)")
    else:
        out.append(f"{meta} is missing")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    with tempfile.TemporaryDirectory() as tmp:
        wheel = Path(args[0]) if args else build_wheel(Path(tmp))
        bad = problems(wheel)
        n = len(zipfile.ZipFile(wheel).namelist())
        if bad:
            print(f"{wheel.name}: " + "; ".join(bad), file=sys.stderr)
            return 1
        print(f"ok    {wheel.name}: {n} files, dpreg/ and its .dist-info only, no study module, "
              f"no {'/'.join(EXTRA_ONLY)} in the base requirements")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
