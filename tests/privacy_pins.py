"""Privacy notes pinned to their code (docs/privacy/*.md; checked by tests/test_privacy_pins.py).

Every note carries one machine-readable line naming the source it describes and a hash of it::

    <!-- pinned: src/dpreg/mechanisms/laplace.py src/dpreg/mechanisms/secure.py sha256:<64 hex> -->

A path is a module or a package directory (all its ``*.py`` files).  The hash is SHA-256 over
the pinned files in sorted order, each contributing its repository path, a newline, its text
normalised for platform (UTF-8, BOM dropped, CRLF/CR -> LF, trailing whitespace of each line and
trailing blank lines dropped) and a NUL byte.  Any other edit -- code, comment or docstring --
changes it: the note must then be re-read against the code, fixed where the guarantee,
relation, sensitivity or budget split changed, and its hash refreshed.

Commands (from the repository root)::

    python tests/privacy_pins.py                      # status of every note, current hashes
    python tests/privacy_pins.py --update             # refresh every stale hash   (make pin-notes)
    python tests/privacy_pins.py --update NOTE...     # refresh these notes only
    python tests/privacy_pins.py --pin NOTE PATH...   # (re)write NOTE's pin line for PATHs

Refresh a hash only after re-reading the note: the hash records "this note was checked against
this code".
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT / "docs" / "privacy"
PIN = re.compile(r"^<!-- pinned: (?P<paths>.+?) sha256:(?P<hash>[0-9a-f]{64}|\?) -->[ \t]*$")
PIN_PREFIX = "<!-- pinned:"


def normalise(raw: bytes) -> str:
    """Source text independent of platform: UTF-8 without BOM, LF line ends, no trailing
    whitespace on a line, exactly one final newline."""
    text = raw.decode("utf-8").removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n") + "\n"


def expand(paths: list[str], root: Path = ROOT) -> list[str]:
    """Repository paths of the pinned files (a directory stands for its ``*.py`` files), sorted.
    Raises FileNotFoundError naming a path that is missing or holds no Python file."""
    out: set[str] = set()
    for p in paths:
        full = root / p
        if full.is_file():
            out.add(Path(p).as_posix())
        elif full.is_dir():
            files = [f for f in full.rglob("*.py") if "__pycache__" not in f.parts]
            if not files:
                raise FileNotFoundError(f"{p} holds no Python file")
            out.update(f.relative_to(root).as_posix() for f in files)
        else:
            raise FileNotFoundError(f"{p} does not exist")
    return sorted(out)


def digest(paths: list[str], root: Path = ROOT) -> str:
    h = hashlib.sha256()
    for rel in expand(paths, root):
        h.update(rel.encode("utf-8") + b"\n")
        h.update(normalise((root / rel).read_bytes()).encode("utf-8") + b"\0")
    return h.hexdigest()


@dataclass(frozen=True)
class Pin:
    note: Path
    line: int          # index of the pin line
    paths: list[str]
    recorded: str      # hash written in the note ("?" when never recorded)


def read_pin(note: Path) -> Pin:
    """The note's pin line; ValueError when it has none, several, or a malformed one."""
    lines = note.read_text(encoding="utf-8").splitlines()
    found = [(i, ln) for i, ln in enumerate(lines) if ln.lstrip().startswith(PIN_PREFIX)]
    if len(found) != 1:
        raise ValueError(f"{_rel(note)} has {len(found)} pin lines; it needs exactly one, "
                         f"e.g. '<!-- pinned: src/dpreg/mechanisms/laplace.py sha256:? -->' "
                         "(then run: python tests/privacy_pins.py --update " f"{_rel(note)})")
    i, ln = found[0]
    m = PIN.match(ln.strip())
    if m is None:
        raise ValueError(f"{_rel(note)}: malformed pin line {ln!r}; expected "
                         "'<!-- pinned: PATH [PATH ...] sha256:HEX -->'")
    return Pin(note, i, m["paths"].split(), m["hash"])


def _rel(p: Path) -> str:
    try:
        return p.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(p)


def notes(folder: Path = NOTES) -> list[Path]:
    return sorted(folder.glob("*.md"))


def problems(folder: Path = NOTES, root: Path = ROOT) -> list[str]:
    """One message per note that lacks a valid pin or whose code changed since its hash."""
    out: list[str] = []
    for note in notes(folder):
        try:
            pin = read_pin(note)
            current = digest(pin.paths, root)
        except (ValueError, FileNotFoundError) as exc:
            out.append(str(exc) if isinstance(exc, ValueError) else
                       f"{_rel(note)} is pinned to a path that {exc}; pin it to the code that "
                       f"implements it now: python tests/privacy_pins.py --pin {_rel(note)} PATH...")
            continue
        if current != pin.recorded:
            out.append(f"{_rel(note)} describes {' '.join(pin.paths)}, whose source changed since "
                       "the note was last checked (recorded sha256:" f"{pin.recorded[:12]}, now "
                       f"{current[:12]}). Re-read the note against the code, fix what no longer "
                       "holds (guarantee, neighbouring relation, sensitivity, budget split, "
                       "source), then record the new hash: make pin-notes NOTES="
                       f"{_rel(note)}")
    return out


def _write_pin(note: Path, paths: list[str], hexdigest: str, line: int | None) -> None:
    text = note.read_text(encoding="utf-8")
    eol = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines()
    pin = f"<!-- pinned: {' '.join(paths)} sha256:{hexdigest} -->"
    if line is None:
        lines.insert(0, pin)
    else:
        lines[line] = pin
    note.write_text(eol.join(lines) + eol, encoding="utf-8", newline="")


def update(selected: list[Path] | None = None, root: Path = ROOT, folder: Path = NOTES) -> list[str]:
    """Refresh the recorded hash of the selected (default: all) notes; returns the changed ones."""
    changed = []
    for note in (selected if selected else notes(folder)):
        pin = read_pin(note)
        current = digest(pin.paths, root)
        if current != pin.recorded:
            _write_pin(note, pin.paths, current, pin.line)
            changed.append(_rel(note))
    return changed


def pin(note: Path, paths: list[str], root: Path = ROOT) -> None:
    """Write (or replace) ``note``'s pin line for ``paths`` with their current hash."""
    current = digest(paths, root)
    try:
        line: int | None = read_pin(note).line
    except ValueError:
        lines = note.read_text(encoding="utf-8").splitlines()
        found = [i for i, ln in enumerate(lines) if ln.lstrip().startswith(PIN_PREFIX)]
        if len(found) > 1:
            raise
        line = found[0] if found else None
    _write_pin(note, paths, current, line)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python tests/privacy_pins.py", description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--update", nargs="*", metavar="NOTE", default=None,
                   help="refresh the hash of these notes (all stale notes if none is given)")
    g.add_argument("--pin", nargs="+", metavar=("NOTE", "PATH"),
                   help="write NOTE's pin line for the given source paths")
    a = ap.parse_args(argv)
    if a.pin:
        if len(a.pin) < 2:
            ap.error("--pin needs a note and at least one source path")
        pin(Path(a.pin[0]), a.pin[1:])
        print(f"pinned {a.pin[0]} to {' '.join(a.pin[1:])}")
        return 0
    if a.update is not None:
        changed = update([Path(n) for n in a.update] or None)
        for c in changed:
            print(f"updated {c}  (you re-read it against its code, didn't you?)")
        if not changed:
            print("every selected note's hash is current")
        return 0
    bad = problems()
    for note in notes():
        try:
            p = read_pin(note)
            state = "ok   " if digest(p.paths) == p.recorded else "STALE"
            print(f"{state} {_rel(note)}  sha256:{digest(p.paths)}  {' '.join(p.paths)}")
        except (ValueError, FileNotFoundError):
            print(f"BAD   {_rel(note)}")
    for msg in bad:
        print("\n" + msg, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
