"""Every privacy note (docs/privacy/*.md) is pinned to the functions it describes, that code has not
changed since the note was last checked against it, and every function that charges a budget or
uses dpreg.mechanisms is pinned by a note (tests/privacy_pins.py).

When this fails after a code change: re-read the named note against the named functions, fix what
no longer holds, then ``make pin-notes NOTES=docs/privacy/NOTE.md`` (or ``make pin-notes`` for
all).  A new function that charges or draws: pin it in the note that argues its privacy
(``python tests/privacy_pins.py --add NOTE PATH::NAME``; ``--suggest PATH`` lists candidates).
"""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

import pytest

import privacy_pins as pins


# ---------------------------------------------------------------- the repository itself
def test_every_privacy_note_is_pinned_and_current():
    assert pins.notes(), "no privacy notes found"
    bad = pins.problems()
    assert not bad, "\n\n".join(bad)


def test_every_function_that_charges_or_uses_a_mechanism_is_pinned_by_a_note():
    found = pins.privacy_functions()
    # the scan itself finds what it must (a scan that finds nothing would pass vacuously):
    # charges, direct and through the ledger, and the samplers and calibrations of every kind
    uses = {u for f in found for u in f.uses}
    assert {"charge", ".spend", "laplace", "laplace_rows", "gaussian", "gaussian_calls",
            "exp_quantile", "smooth_median", "ptr_test", "gumbel_max_index", "ncov_sensitivity",
            "gaussian_sigma", "RowRandomness"} <= uses, uses
    assert len({f.path for f in found if "charge" in f.uses}) >= 10
    missing = pins.uncovered()
    assert not missing, (
        "these functions charge a budget or use dpreg.mechanisms but no docs/privacy note pins "
        "them; add them to the note that argues their privacy (python tests/privacy_pins.py "
        "--add docs/privacy/NOTE.md PATH::NAME), or write one:\n" +
        "\n".join(f"  {f}  [{', '.join(f.uses)}]" for f in missing))


def test_the_allow_list_is_short_justified_and_not_stale():
    assert len(pins.NOT_PINNED) <= 3, "keep NOT_PINNED short: pin functions in a note instead"
    found = pins.privacy_functions()
    for key, why in pins.NOT_PINNED.items():
        assert len(why) > 80, f"{key}: say why it needs no note"
        assert any(pins.exemption(f, {key: why}) for f in found), \
            f"NOT_PINNED lists {key}, which no longer charges or uses a mechanism: remove it"


def test_every_mechanism_and_privacy_module_is_described_by_a_note():
    """A new module in mechanisms/ or privacy/ needs a note (or an entry in an existing one)."""
    covered = {e.path for e in pins.pinned_entries()}
    src = pins.ROOT / "src" / "dpreg"
    wanted = {p.relative_to(pins.ROOT).as_posix()
              for pkg in ("mechanisms", "privacy") for p in (src / pkg).rglob("*.py")
              if "__pycache__" not in p.parts}
    assert not wanted - covered, (f"not described by any docs/privacy note: {sorted(wanted - covered)}"
                                  "; pin them: python tests/privacy_pins.py --add NOTE PATH...")


def test_the_notes_use_the_repository_layout():
    for note in pins.notes():
        for entry, _ in pins.read_pin(note).entries:
            # the library, or a research implementation kept in the studies (hessian_mixing.md)
            assert entry.path.startswith(("src/dpreg/", "studies/")), (note.name, str(entry))
            assert not Path(entry.path).is_absolute(), (note.name, str(entry))


# ---------------------------------------------------------------- a miniature checkout
MECH_INIT = "from dpreg.mechanisms.noise import laplace\n"
MECH = "def laplace(value, *, epsilon, rng=None):\n    return value + rng.laplace(0.0, 1 / epsilon)\n"
PRIV_INIT = "from dpreg.privacy.ledger import charge\n"
LEDGER = "def charge(ledger, budget, label):\n    if ledger is not None:\n        ledger.spend(budget, label)\n"
CONSTS = "SPLIT = (1.0, 1.0)\n"
CORE = '''\
"""A core."""
import functools

from dpreg.consts import SPLIT
from dpreg.mechanisms import laplace
from dpreg.privacy import charge

_SCALE = 2.0
_WIDE = _SCALE * 3


@functools.lru_cache(maxsize=8)
def sensitivity(n: int, w: float = 1.0) -> float:
    """Sensitivity of the mean."""
    return w / n


def release(x, *, epsilon, ledger=None, rng=None):
    """Release the mean (the privacy argument lives here)."""
    charge(ledger, epsilon, "mean")  # one charge
    return laplace(sum(x) / len(x) * _WIDE, epsilon=epsilon * SPLIT[0], rng=rng)


def helper(x):
    return sorted(x)


class Estimator:
    """An estimator."""

    factor = 1.0

    def fit(self, x, rng=None):
        from dpreg import mechanisms

        return mechanisms.laplace(x, epsilon=1.0, rng=rng)

    def describe(self):
        return "estimator"
'''


@pytest.fixture
def tree(tmp_path):
    """src/dpreg with a mechanism, a ledger, a constants module and a core; one note."""
    files = {"src/dpreg/__init__.py": "", "src/dpreg/mechanisms/__init__.py": MECH_INIT,
             "src/dpreg/mechanisms/noise.py": MECH, "src/dpreg/privacy/__init__.py": PRIV_INIT,
             "src/dpreg/privacy/ledger.py": LEDGER, "src/dpreg/consts.py": CONSTS,
             "src/dpreg/core.py": CORE}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    (tmp_path / "notes").mkdir()
    note = tmp_path / "notes" / "core.md"
    note.write_text("# Core\n\ntext\n", encoding="utf-8")
    return tmp_path, note


def h(root, entry):
    return pins.entry_hash(pins.Entry.parse(entry), root)


def edit(root, rel, old, new):
    p = root / rel
    text = p.read_text(encoding="utf-8")
    assert old in text, old
    p.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_changed_function_body_makes_its_note_stale_naming_the_function(tree):
    root, note = tree
    pins.pin(note, pins.expand_entries(["src/dpreg/core.py::release,sensitivity"]), root=root)
    text = note.read_text(encoding="utf-8")
    assert text.startswith("<!-- pinned:\nsrc/dpreg/core.py::release sha256:")
    assert "\n-->\n\n# Core\n" in text  # a blank line ends the HTML block
    folder = note.parent
    assert pins.problems(folder, root) == []
    fp = pins.fingerprint(pins.Entry.parse("src/dpreg/core.py::release"), root)
    assert h(root, "src/dpreg/core.py::release") == hashlib.sha256(fp.encode()).hexdigest()[:16]
    edit(root, "src/dpreg/core.py", "epsilon * SPLIT[0]", "epsilon * SPLIT[1]")
    (msg,) = pins.problems(folder, root)
    assert "src/dpreg/core.py::release" in msg and "sensitivity" not in msg.split("Re-read")[0]
    assert "make pin-notes NOTES=" in msg and "git log -p -L ':release:src/dpreg/core.py'" in msg
    assert pins.update([note], root=root) == [pins._rel(note, root)]
    assert pins.problems(folder, root) == []
    assert note.read_text(encoding="utf-8").endswith("# Core\n\ntext\n")  # text untouched
    # an edit elsewhere in the same file leaves the note current: the point of names
    edit(root, "src/dpreg/core.py", "return sorted(x)", "return sorted(x, reverse=True)")
    assert pins.problems(folder, root) == []


@pytest.mark.parametrize("old, new", [
    ('"""Release the mean (the privacy argument lives here)."""',
     '"""Release the mean.\n\n    A longer argument, rewritten.\n    """'),             # docstring
    ('"""A core."""', '"""A core.\n\nIts module docstring, rewritten."""'),          # module docstring
    ('    """An estimator."""', '    """An estimator, documented."""'),                     # class docstring
    ("  # one charge", "  # the one charge, before any noise"),                           # comment
    ('charge(ledger, epsilon, "mean")', 'charge(\n        ledger, epsilon,\n        "mean",\n    )'),
    ("def release(x, *, epsilon, ledger=None, rng=None):",
     "def release(x: list, *, epsilon: float, ledger: object = None, rng=None) -> float:"),
    ("    charge(ledger", "    note: str\n    charge(ledger"),                   # a bare annotation
])
def test_docstring_comment_formatting_and_annotation_edits_keep_the_hash(tree, old, new):
    root, _ = tree
    before = h(root, "src/dpreg/core.py::release")
    file_before = h(root, "src/dpreg/core.py")
    edit(root, "src/dpreg/core.py", old, new)
    assert h(root, "src/dpreg/core.py::release") == before
    assert h(root, "src/dpreg/core.py") == file_before  # a whole-file pin ignores them too


@pytest.mark.parametrize("rel, old, new", [
    ("src/dpreg/core.py", "w / n", "w / (n - 1)"),                                    # body
    ("src/dpreg/core.py", "w: float = 1.0", "w: float = 2.0"),                        # default
    ("src/dpreg/core.py", "lru_cache(maxsize=8)", "lru_cache(maxsize=None)"),         # decorator
    ("src/dpreg/core.py", "    return w / n", "    s: float = w\n    return s / n"),  # annotated assignment
    ("src/dpreg/core.py", "def sensitivity(n: int", "def sensitivity(m: int"),         # a parameter's name
])
def test_code_changes_change_the_hash(tree, rel, old, new):
    root, _ = tree
    before = h(root, "src/dpreg/core.py::sensitivity")
    edit(root, rel, old, new)
    assert h(root, "src/dpreg/core.py::sensitivity") != before


@pytest.mark.parametrize("rel, old, new", [
    ("src/dpreg/core.py", "_SCALE = 2.0", "_SCALE = 4.0"),                 # a constant it reads, transitively
    ("src/dpreg/consts.py", "(1.0, 1.0)", "(2.0, 1.0)"),                   # a constant imported from a module
    ("src/dpreg/core.py", "from dpreg.mechanisms import laplace",
     "from dpreg.mechanisms.noise import laplace"),                        # where a name comes from
])
def test_module_level_constants_and_imports_a_function_reads_are_part_of_its_hash(tree, rel, old, new):
    root, _ = tree
    before = h(root, "src/dpreg/core.py::release")
    others = h(root, "src/dpreg/core.py::sensitivity")
    edit(root, rel, old, new)
    assert h(root, "src/dpreg/core.py::release") != before
    assert h(root, "src/dpreg/core.py::sensitivity") == others  # it reads none of them


def test_a_class_pin_covers_its_whole_body_and_a_method_pin_only_the_method(tree):
    root, _ = tree
    cls, fit = h(root, "src/dpreg/core.py::Estimator"), h(root, "src/dpreg/core.py::Estimator.fit")
    edit(root, "src/dpreg/core.py", '"estimator"', '"an estimator"')
    assert h(root, "src/dpreg/core.py::Estimator") != cls
    assert h(root, "src/dpreg/core.py::Estimator.fit") == fit
    edit(root, "src/dpreg/core.py", "factor = 1.0", "factor = 2.0")
    assert h(root, "src/dpreg/core.py::Estimator.fit") == fit
    # a module-level constant can be pinned by name too
    assert h(root, "src/dpreg/core.py::_SCALE") != h(root, "src/dpreg/core.py::_WIDE")


def test_a_renamed_or_removed_pinned_function_is_reported_by_name(tree):
    root, note = tree
    pins.pin(note, pins.expand_entries(["src/dpreg/core.py::release,Estimator.fit"]), root=root)
    edit(root, "src/dpreg/core.py", "def release(", "def release_mean(")
    edit(root, "src/dpreg/core.py", "def fit(", "def fit_one(")
    (msg,) = pins.problems(note.parent, root)
    assert "no longer exists" in msg
    assert "src/dpreg/core.py::release: src/dpreg/core.py defines no 'release'" in msg
    assert "Estimator.fit" in msg and "--suggest" in msg
    with pytest.raises(pins.PinError, match="release"):
        pins.update([note], root=root)
    (root / "src/dpreg/core.py").unlink()
    (msg,) = pins.problems(note.parent, root)
    assert "is not a Python module" in msg
    with pytest.raises(pins.PinError, match="does not exist"):
        pins.entry_hash(pins.Entry.parse("src/dpreg/core.py"), root)


def test_functions_that_charge_or_use_a_mechanism_must_be_pinned(tree):
    root, note = tree
    found = {str(f): f.uses for f in pins.privacy_functions(root)}
    assert found == {
        "src/dpreg/core.py::release": ("charge", "laplace"),     # both, through re-exports
        "src/dpreg/core.py::Estimator.fit": ("laplace",),        # a local import, by attribute
        "src/dpreg/privacy/ledger.py::charge": (".spend",),
    }
    pins.pin(note, [pins.Entry.parse("src/dpreg/core.py::sensitivity")], root=root)
    allowed = {"src/dpreg/privacy": "the ledger is tested elsewhere; " * 3}
    missing = [str(f) for f in pins.uncovered(root, note.parent, allowed)]
    assert missing == ["src/dpreg/core.py::Estimator.fit", "src/dpreg/core.py::release"]
    pins.add(note, pins.expand_entries(["src/dpreg/core.py::release"]), root=root)
    assert [str(f) for f in pins.uncovered(root, note.parent, allowed)] == ["src/dpreg/core.py::Estimator.fit"]
    pins.add(note, [pins.Entry.parse("src/dpreg/core.py::Estimator")], root=root)  # the class covers its methods
    assert pins.uncovered(root, note.parent, allowed) == []
    assert [str(f) for f in pins.uncovered(root, note.parent, {})] == ["src/dpreg/privacy/ledger.py::charge"]
    pins.pin(note, [pins.Entry.parse("src/dpreg")], root=root)  # a package pin covers everything in it
    assert pins.uncovered(root, note.parent, {}) == []
    # a new charging function appears: it is reported until a note pins it
    edit(root, "src/dpreg/consts.py", "SPLIT", "from dpreg.privacy import charge as c\n\n\n"
           "def spend_twice(ledger):\n    c(ledger, 1.0, 'a')\n    c(ledger, 1.0, 'b')\n\n\nSPLIT")
    pins.pin(note, [pins.Entry.parse("src/dpreg/core.py")], root=root)
    assert "src/dpreg/consts.py::spend_twice" in [str(f) for f in pins.uncovered(root, note.parent, {})]


def test_pin_block_format_errors_are_reported(tree):
    root, note = tree
    folder = note.parent
    note.write_text("# no pin\n", encoding="utf-8")
    (msg,) = pins.problems(folder, root)
    assert "has 0 pin blocks" in msg
    note.write_text("<!-- pinned: src/dpreg/core.py sha256:" + "0" * 64 + " -->\n# old\n", encoding="utf-8")
    (msg,) = pins.problems(folder, root)
    assert "old format" in msg and "--pin" in msg
    # --pin converts an old one-line pin in place
    pins.pin(note, [pins.Entry.parse("src/dpreg/core.py::release")], root=root)
    assert pins.problems(folder, root) == []
    assert note.read_text(encoding="utf-8").count("<!-- pinned:") == 1
    good = note.read_text(encoding="utf-8")
    for bad, what in ((good.replace("sha256:", "sha1:"), "malformed pin entry"),
                      (good.replace("\n-->\n", "\n"), "not closed"),
                      (good.replace("-->", good.splitlines()[1] + "\n-->"), "more than once"),
                      ("<!-- pinned:\n-->\n# empty\n", "names no code"),
                      (good + "\n<!-- pinned:\n-->\n", "2 pin blocks")):
        note.write_text(bad, encoding="utf-8")
        (msg,) = pins.problems(folder, root)
        assert what in msg, (what, msg)
    # "?" marks an entry written by hand and not yet recorded: stale until --update
    note.write_text("<!-- pinned:\nsrc/dpreg/core.py::release sha256:?\n-->\n# x\n", encoding="utf-8")
    assert "recorded sha256:?" in pins.problems(folder, root)[0]
    pins.update([note], root=root)
    assert pins.problems(folder, root) == []


def test_command_line_entries_add_and_drop(tree):
    root, note = tree
    assert [str(e) for e in pins.expand_entries(["src/x.py::a,B.c", "src/y.py", "src/x.py::a"])] == \
        ["src/x.py::a", "src/x.py::B.c", "src/y.py"]
    with pytest.raises(pins.PinError, match="not a pin entry"):
        pins.Entry.parse("src/x.py::1bad")
    pins.pin(note, pins.expand_entries(["src/dpreg/core.py::release,sensitivity"]), root=root)
    pins.add(note, pins.expand_entries(["src/dpreg/consts.py::SPLIT", "src/dpreg/core.py::release"]), root=root)
    assert [str(e) for e, _ in pins.read_pin(note).entries] == [
        "src/dpreg/core.py::release", "src/dpreg/core.py::sensitivity", "src/dpreg/consts.py::SPLIT"]
    pins.drop(note, [pins.Entry.parse("src/dpreg/core.py::sensitivity")])
    assert len(pins.read_pin(note).entries) == 2
    with pytest.raises(pins.PinError, match="does not pin"):
        pins.drop(note, [pins.Entry.parse("src/dpreg/core.py::helper")])
    with pytest.raises(pins.PinError, match="pinned to nothing"):
        pins.drop(note, [e for e, _ in pins.read_pin(note).entries])


def test_the_canonical_form_is_fixed():
    """The normalised syntax tree is what every recorded hash is taken of: changing how it is
    built silently re-pins every note, so it is spelled out here (and must stay independent of
    the Python version: no positions, no None or empty fields, no contexts)."""
    import ast

    tree = pins.normalise(ast.parse(textwrap.dedent('''\
        @deco(1)
        def f(a: int, b=2.5, *c, d=None, **e) -> str:
            """doc"""
            x: int = a  # comment
            return g(a, b)[x]
        ''')))
    text = pins.canonical(tree.body[0])
    assert text == (
        "FunctionDef(name=str:'f',args=arguments(args=[arg(arg=str:'a'),arg(arg=str:'b')],"
        "vararg=arg(arg=str:'c'),kwonlyargs=[arg(arg=str:'d')],kw_defaults=[Constant()],"
        "kwarg=arg(arg=str:'e'),defaults=[Constant(value=float:2.5)]),"
        "body=[Assign(targets=[Name(id=str:'x')],value=Name(id=str:'a')),"
        "Return(value=Subscript(value=Call(func=Name(id=str:'g'),args=[Name(id=str:'a'),"
        "Name(id=str:'b')]),slice=Name(id=str:'x')))],"
        "decorator_list=[Call(func=Name(id=str:'deco'),args=[Constant(value=int:1)])])")
    assert pins.HEX == 16
