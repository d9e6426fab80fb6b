"""Every privacy note (docs/privacy/*.md) is pinned to the code it describes, and the code has
not changed since the note was last checked against it (tests/privacy_pins.py).

When this fails after a code change: re-read the named note against the code, fix what no
longer holds, then ``make pin-notes NOTES=docs/privacy/NOTE.md`` (or ``make pin-notes`` for all).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import privacy_pins as pins


def test_every_privacy_note_is_pinned_and_current():
    assert pins.notes(), "no privacy notes found"
    bad = pins.problems()
    assert not bad, "\n\n".join(bad)


def test_every_mechanism_and_privacy_module_is_covered_by_a_note():
    """A new module in mechanisms/ or privacy/ needs a note (or a pin in an existing one)."""
    covered: set[str] = set()
    for note in pins.notes():
        covered.update(pins.expand(pins.read_pin(note).paths))
    src = pins.ROOT / "src" / "dpreg"
    wanted = {p.relative_to(pins.ROOT).as_posix()
              for pkg in ("mechanisms", "privacy") for p in (src / pkg).rglob("*.py")
              if "__pycache__" not in p.parts}
    assert not wanted - covered, (f"not described by any docs/privacy note: {sorted(wanted - covered)}"
                                  "; pin them: python tests/privacy_pins.py --pin NOTE PATH...")


# ---------------------------------------------------------------- the check itself
@pytest.fixture
def tree(tmp_path):
    """A miniature checkout: one module, one package, one note pinned to both."""
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "mod.py").write_bytes(b"def f(x):\n    return x + 1  # noise\n")
    (tmp_path / "src" / "pkg" / "__init__.py").write_bytes(b"A = 1\n")
    (tmp_path / "src" / "pkg" / "b.py").write_bytes(b"B = 2\n")
    (tmp_path / "notes").mkdir()
    note = tmp_path / "notes" / "m.md"
    note.write_text("# M\n\ntext\n", encoding="utf-8")
    pins.pin(note, ["src/mod.py", "src/pkg"], root=tmp_path)
    return tmp_path, note


def test_a_code_change_makes_the_note_stale_until_its_hash_is_refreshed(tree):
    root, note = tree
    folder = note.parent
    assert note.read_text(encoding="utf-8").startswith("<!-- pinned: src/mod.py src/pkg sha256:")
    assert pins.problems(folder, root) == []
    (root / "src" / "mod.py").write_bytes(b"def f(x):\n    return x + 2  # noise\n")
    (msg,) = pins.problems(folder, root)
    assert "m.md" in msg and "src/mod.py" in msg and "Re-read the note" in msg
    assert "make pin-notes" in msg
    # a file added to a pinned package also counts
    assert pins.update([note], root=root) == [pins._rel(note)]
    assert pins.problems(folder, root) == []
    (root / "src" / "pkg" / "c.py").write_bytes(b"C = 3\n")
    assert len(pins.problems(folder, root)) == 1
    pins.update([note], root=root)
    # the note's own text is untouched by updates
    assert note.read_text(encoding="utf-8").endswith("# M\n\ntext\n")


def test_the_hash_ignores_line_endings_and_trailing_whitespace_only(tree):
    root, note = tree
    before = pins.digest(["src/mod.py"], root)
    (root / "src" / "mod.py").write_bytes(b"\xef\xbb\xbfdef f(x):  \r\n    return x + 1  # noise\r\n\r\n")
    assert pins.digest(["src/mod.py"], root) == before
    (root / "src" / "mod.py").write_bytes(b"def f(x):\n    return x + 1  # noise!\n")
    assert pins.digest(["src/mod.py"], root) != before
    # the order of the paths in the pin line does not matter; the paths themselves do
    assert pins.digest(["src/pkg", "src/mod.py"], root) == pins.digest(["src/mod.py", "src/pkg"], root)
    shutil.copy(root / "src" / "mod.py", root / "src" / "mod2.py")
    assert pins.digest(["src/mod2.py"], root) != pins.digest(["src/mod.py"], root)


def test_missing_malformed_or_dangling_pins_are_reported(tree):
    root, note = tree
    folder = note.parent
    other = folder / "other.md"
    other.write_text("# no pin\n", encoding="utf-8")
    (msg,) = pins.problems(folder, root)
    assert "other.md has 0 pin lines" in msg
    other.write_text("<!-- pinned: src/mod.py sha256:xyz -->\n# bad\n", encoding="utf-8")
    (msg,) = pins.problems(folder, root)
    assert "malformed pin line" in msg
    other.write_text("<!-- pinned: src/gone.py sha256:" + "0" * 64 + " -->\n# x\n", encoding="utf-8")
    (msg,) = pins.problems(folder, root)
    assert "src/gone.py does not exist" in msg and "--pin" in msg
    pins.pin(other, ["src/mod.py"], root=root)
    assert pins.problems(folder, root) == []
    assert other.read_text(encoding="utf-8").count("<!-- pinned:") == 1


def test_the_notes_use_the_repository_layout():
    for note in pins.notes():
        for p in pins.read_pin(note).paths:
            # the library, or a research implementation kept in the studies (hessian_mixing.md)
            assert p.startswith(("src/dpreg/", "studies/")) and not Path(p).is_absolute(), \
                (note.name, p)
