"""Privacy notes pinned to the functions they describe (docs/privacy/*.md; tests/test_privacy_pins.py).

Every note carries one pin block, an HTML comment (invisible when rendered) naming the code the
note describes, one entry a line, each with a hash of that code::

    <!-- pinned:
    src/dpreg/mechanisms/laplace.py sha256:0f3c9a1e5b7d2c48
    src/dpreg/simple/_noisy_stats.py::release_noisy_stats sha256:9be04d1f6a2c3e57
    src/dpreg/mechanisms/secure.py::NoiseRounds.release sha256:?
    -->

An entry is ``PATH::NAME`` -- a function, class or module-level constant of the module at PATH;
``Class.method`` for a method (a function nested in another is part of it) -- or a bare ``PATH``,
a whole module or package folder (all its ``*.py`` files), for a note that describes a whole
module (a mechanism's own module, the ledger).  Pin names wherever the note describes specific
functions: a note is then stale only when the code it describes changed, not when something
else in the same file did.  ``sha256:?`` marks an entry written by hand and not yet recorded.

**What the hash covers** (SHA-256 of a normalised AST, first 16 hex digits).  The syntax tree of
the named definition -- its decorators, default values and whole body (for a class: the whole
class) -- plus the module-level assignments and imports of the names it reads (a constant such as
``_SPLIT = 0.5`` or the module a name is imported from; transitively), or the whole module's tree
for a bare PATH.  Left out, so that they never force a re-pin: comments and formatting (the AST
has neither), **docstrings** (and any other bare string statement), and **type annotations** of
parameters, return values and local variables (annotations at class and module level stay: they
define dataclass fields).  Why leave out docstrings although the privacy argument is written in
them first: the note is the record "this argument was checked against this code"; a docstring
edit changes no draw, split or charge, so it cannot make a checked argument false -- it is
reviewed as documentation, while every change to what runs (an expression, a constant, a
default, a decorator, an error message, a called function's name) re-opens the note.  Functions
the pinned code calls are not included: pin each one the note relies on (sensitivities, budget
splits, samplers).  The canonical form (:func:`canonical`) has no positions, expression
contexts or ``Constant.kind``, and leaves out fields that are None or empty, so optional fields
that later Python versions add (``type_params`` in 3.12) leave the hash unchanged: every recorded
hash was checked to be the same under CPython 3.11, 3.12 and 3.13.
A file that is not Python is hashed as normalised text (LF line ends, no trailing whitespace).

**Coverage** (:func:`privacy_functions`): every function of ``src/dpreg`` that charges a budget
(calls ``dpreg.privacy.ledger.charge`` or any ``.spend(...)``) or uses anything of
``dpreg.mechanisms`` (a sampler, a sensitivity, a noise scale, the row randomness) must be pinned
by some note -- by name, through its class, or by a whole-file pin -- unless it is listed in
:data:`NOT_PINNED` with the reason.  Found by syntax: names resolved through the imports and the
re-exports of dpreg's own modules.  Not found: a sampler written in place from a generator's
draws (``simple/fast``, TukeyEM's region sampler) and budget splits or clipping that call no
mechanism -- the notes pin those by hand (``--suggest`` lists only what the scan sees).

Commands (from the repository root)::

    python tests/privacy_pins.py [-v]                     # status of every note (-v: every entry)
    python tests/privacy_pins.py --update                 # refresh every stale hash   (make pin-notes)
    python tests/privacy_pins.py --update NOTE...         # refresh these notes only
    python tests/privacy_pins.py --pin NOTE ENTRY...      # (re)write NOTE's pin block with these entries
    python tests/privacy_pins.py --add NOTE ENTRY...      # add entries to NOTE's block
    python tests/privacy_pins.py --drop NOTE ENTRY...     # remove entries from NOTE's block
    python tests/privacy_pins.py --suggest [PATH...]      # functions that charge/use mechanisms, and their notes

ENTRY on the command line may list several names of one module: ``src/dpreg/x.py::f,g,C.m``.
Refresh a hash only after re-reading the note against the code: the hash records "this note was
checked against this code".
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT / "docs" / "privacy"
SRC = "src/dpreg"
HEX = 16
BLOCK_START = "<!-- pinned:"
BLOCK_END = "-->"
ENTRY = re.compile(r"^(?P<entry>[^\s:]+(?:::[A-Za-z_][A-Za-z0-9_.]*)?) sha256:(?P<hash>[0-9a-f]{"
                   + str(HEX) + r"}|\?)$")
OLD_PIN = re.compile(r"^<!-- pinned: .+ sha256:[0-9a-f?]+ -->$")

#: Functions that charge a budget or use dpreg.mechanisms but need no note of their own, and why.
#: Keys: ``PATH`` (a module or package folder: everything in it) or ``PATH::NAME``.  Keep it short.
NOT_PINNED: dict[str, str] = {
    "src/dpreg/audit": (
        "the empirical audit runs every mechanism only on the neighbouring datasets it builds "
        "itself, to estimate the mechanisms' privacy loss; it reads no user data, charges no "
        "ledger, and the mechanisms it samples are pinned by their own notes"),
}


# ---------------------------------------------------------------- normalised syntax trees
def normalise(tree: ast.Module) -> ast.Module:
    """Drop docstrings (any bare string statement) and the type annotations of parameters,
    return values and local variables (an annotated assignment in a function becomes a plain
    one; a bare ``x: int`` there, which does nothing, is dropped); keep everything that runs.
    Annotations at class and module level stay (they define dataclass fields).  In place."""
    tree.body = _statements(tree.body, in_function=False)
    return tree


def _statements(stmts: list[ast.stmt], *, in_function: bool) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for s in stmts:
        if _is_string_statement(s):
            continue
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            s.returns = None
            a = s.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
                if arg is not None:
                    arg.annotation = None  # type: ignore[assignment]
            s.body = _statements(s.body, in_function=True)
        elif isinstance(s, ast.ClassDef):
            s.body = _statements(s.body, in_function=False)
        elif isinstance(s, ast.AnnAssign) and in_function:
            if s.value is None:
                continue
            s = ast.Assign(targets=[s.target], value=s.value)
        else:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list):
                    setattr(s, field, _statements(inner, in_function=in_function))
            for h in getattr(s, "handlers", []):
                h.body = _statements(h.body, in_function=in_function)
            for case in getattr(s, "cases", []):
                case.body = _statements(case.body, in_function=in_function)
        out.append(s)
    return out


def _is_string_statement(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)


_SKIP_FIELDS = frozenset({"ctx", "kind", "type_comment", "type_ignores"})


def canonical(node: object) -> str:
    """A text form of a syntax tree that is the same on every Python version this project runs:
    field names in the grammar's order, fields that are None or empty omitted (new optional
    fields such as ``type_params`` therefore leave it unchanged), no positions, no contexts."""
    if isinstance(node, ast.AST):
        parts = []
        for field in node._fields:
            if field in _SKIP_FIELDS:
                continue
            value = getattr(node, field, None)
            if value is None or (isinstance(value, list) and not value):
                continue
            parts.append(f"{field}={canonical(value)}")
        return f"{type(node).__name__}({','.join(parts)})"
    if isinstance(node, list):
        return "[" + ",".join(canonical(v) for v in node) + "]"
    return f"{type(node).__name__}:{node!r}"


def normalise_text(raw: bytes) -> str:
    """Source text independent of platform: UTF-8 without BOM, LF line ends, no trailing
    whitespace on a line, exactly one final newline (files that are not Python)."""
    text = raw.decode("utf-8").removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n") + "\n"


class PinError(ValueError):
    """A pin that names nothing (missing file, missing function) or cannot be read."""


@dataclass(frozen=True)
class _Binding:
    text: str                           # canonical form of the binding statement
    reads: frozenset[str]               # names its right-hand side reads
    origin: tuple[str, str] | None      # (module, name) of ``from module import name``


@dataclass
class _Module:
    tree: ast.Module                            # normalised
    name: str                                   # dotted module name
    bindings: dict[str, list[_Binding]]         # module-level name -> how it is bound
    defined: dict[str, list[ast.stmt]]          # module-level def/class name -> definitions
    assigned: dict[str, list[ast.stmt]]         # module-level constant name -> its assignments


def _dotted_name(rel: str) -> str:
    parts = list(Path(rel).with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _parse(path: Path, mtime_ns: int, name: str) -> _Module:
    source = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise PinError(f"{path} does not parse: {exc}") from None
    tree = normalise(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    bindings: dict[str, list[_Binding]] = {}
    defined: dict[str, list[ast.stmt]] = {}
    assigned: dict[str, list[ast.stmt]] = {}
    for stmt in _module_level(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.setdefault(stmt.name, []).append(stmt)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                bound = alias.asname or alias.name.split(".")[0]
                bindings.setdefault(bound, []).append(
                    _Binding(f"import {alias.name} as {bound}", frozenset(), None))
        elif isinstance(stmt, ast.ImportFrom):
            base = stmt.module or ""
            if stmt.level:
                up = package.split(".")[: len(package.split(".")) - (stmt.level - 1)]
                base = ".".join([*up, *([base] if base else [])])
            for alias in stmt.names:
                bound = alias.asname or alias.name
                bindings.setdefault(bound, []).append(
                    _Binding(f"from {base} import {alias.name} as {bound}", frozenset(), (base, alias.name)))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            binding = _Binding(canonical(stmt), frozenset(_names([stmt])), None)
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        bindings.setdefault(n.id, []).append(binding)
                        assigned.setdefault(n.id, []).append(stmt)
    return _Module(tree, name, bindings, defined, assigned)


def _module_level(stmts: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements run at import time, looking inside if/try/with/loop blocks (not into
    definitions)."""
    for s in stmts:
        yield s
        if isinstance(s, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            for field in ("body", "orelse", "finalbody"):
                yield from _module_level(getattr(s, field, []))
            for h in getattr(s, "handlers", []):
                yield from _module_level(h.body)


def module(path: Path, root: Path = ROOT) -> _Module:
    try:
        name = _dotted_name(path.resolve().relative_to(root.resolve()).as_posix())
    except ValueError:
        name = path.stem
    return _parse(path, path.stat().st_mtime_ns, name)


def _find_module(name: str, root: Path) -> Path | None:
    """The file of the dotted module ``name`` in this checkout (under src/ or at the top)."""
    for base in (root / "src", root):
        p = base / Path(*name.split("."))
        if (p / "__init__.py").is_file():
            return p / "__init__.py"
        if p.with_suffix(".py").is_file():
            return p.with_suffix(".py")
    return None


def _members(stmts: list[ast.stmt], name: str) -> list[ast.stmt]:
    return [s for s in _module_level(stmts)
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and s.name == name]


def definitions(path: Path, name: str, root: Path = ROOT) -> list[ast.stmt]:
    """Every definition of ``name`` (``f``, ``Class``, ``Class.method``; or a module-level
    constant ``NAME``: its assignments) in the module at ``path``, in source order (a name
    defined in both branches of an ``if`` has two)."""
    mod = module(path, root)
    first, *rest = name.split(".")
    found = list(mod.defined.get(first, [])) or ([] if rest else list(mod.assigned.get(first, [])))
    for part in rest:
        found = [m for d in found for m in _members(getattr(d, "body", []), part)]
    return found


def _names(nodes: Iterable[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def _context(mod: _Module, nodes: list[ast.stmt], root: Path) -> list[str]:
    """Canonical module-level bindings of the names ``nodes`` read, transitively: assignments
    (constants), imports, and -- for a name imported from a module of this checkout -- the
    assignment that binds it there (a constant imported from another module counts as if it
    were defined here).  Definitions of other functions and classes are not included: pin those
    separately."""
    seen: set[tuple[str, str]] = set()
    out: set[str] = set()
    todo: list[tuple[_Module, str]] = [(mod, n) for n in sorted(_names(nodes))]
    while todo:
        m, name = todo.pop()
        if (m.name, name) in seen:
            continue
        seen.add((m.name, name))
        for b in m.bindings.get(name, []):
            if m is mod:
                out.add(b.text)
            elif b.origin is None:  # another module's constant (its imports only lead there)
                out.add(f"{m.name}: {b.text}")
            todo.extend((m, r) for r in b.reads)
            if b.origin is not None:
                src = _find_module(b.origin[0], root)
                if src is not None and src.is_file():
                    todo.append((module(src, root), b.origin[1]))
    return sorted(out)


# ---------------------------------------------------------------- entries and their hashes
@dataclass(frozen=True, order=True)
class Entry:
    path: str            # repository path of a module or package folder
    name: str | None     # "f", "Class", "Class.method"; None: the whole path

    @classmethod
    def parse(cls, text: str) -> Entry:
        path, sep, name = text.partition("::")
        if not path or (sep and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", name)):
            raise PinError(f"not a pin entry: {text!r}; expected PATH or PATH::NAME (NAME: "
                           "function, Class or Class.method)")
        return cls(Path(path).as_posix(), name if sep else None)

    def __str__(self) -> str:
        return self.path if self.name is None else f"{self.path}::{self.name}"

    def covers(self, path: str, name: str) -> bool:
        """Whether this entry pins the definition ``name`` of the module ``path``."""
        if self.name is None:
            return path == self.path or path.startswith(self.path.rstrip("/") + "/")
        return path == self.path and (name == self.name or name.startswith(self.name + "."))


def fingerprint(entry: Entry, root: Path = ROOT) -> str:
    """The normalised text that ``entry``'s hash is taken of; PinError when it names nothing."""
    full = root / entry.path
    if entry.name is None:
        if full.is_file():
            return _file_fingerprint(full, root)
        if full.is_dir():
            files = sorted(f for f in full.rglob("*.py") if "__pycache__" not in f.parts)
            if not files:
                raise PinError(f"{entry.path} holds no Python file")
            return "".join(f"{f.relative_to(full).as_posix()}\n{_file_fingerprint(f, root)}\0" for f in files)
        raise PinError(f"{entry.path} does not exist")
    if not full.is_file() or full.suffix != ".py":
        raise PinError(f"{entry.path} is not a Python module (a PATH::NAME entry needs one)")
    defs = definitions(full, entry.name, root)
    if not defs:
        raise PinError(f"{entry.path} defines no {entry.name!r} (renamed, moved or removed?)")
    context = _context(module(full, root), defs, root)
    return "\n".join(canonical(d) for d in defs) + "\n--- module context ---\n" + "\n".join(context)


def _file_fingerprint(path: Path, root: Path = ROOT) -> str:
    if path.suffix == ".py":
        return canonical(module(path, root).tree)
    return normalise_text(path.read_bytes())


def entry_hash(entry: Entry, root: Path = ROOT) -> str:
    return hashlib.sha256(fingerprint(entry, root).encode("utf-8")).hexdigest()[:HEX]


# ---------------------------------------------------------------- notes
@dataclass(frozen=True)
class Pin:
    note: Path
    start: int                          # line index of "<!-- pinned:"
    end: int                            # line index of "-->"
    entries: list[tuple[Entry, str]]    # (entry, recorded hash or "?")


def _rel(p: Path, root: Path = ROOT) -> str:
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(p)


def notes(folder: Path = NOTES) -> list[Path]:
    return sorted(folder.glob("*.md"))


def read_pin(note: Path) -> Pin:
    """The note's pin block; PinError when it has none, several, or a malformed one."""
    lines = note.read_text(encoding="utf-8").splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.strip().startswith(BLOCK_START)]
    example = ("'<!-- pinned:' alone on a line, then one 'PATH::NAME sha256:?' or 'PATH sha256:?' "
               "a line, then '-->' (then run: python tests/privacy_pins.py --update " f"{_rel(note)})")
    if len(starts) != 1:
        raise PinError(f"{_rel(note)} has {len(starts)} pin blocks; it needs exactly one: {example}")
    start = starts[0]
    if OLD_PIN.match(lines[start].strip()):
        raise PinError(f"{_rel(note)} has a whole-file pin line of the old format; name the functions "
                       f"it describes: python tests/privacy_pins.py --pin {_rel(note)} PATH::NAME ...")
    if lines[start].strip() != BLOCK_START:
        raise PinError(f"{_rel(note)}: malformed pin block start {lines[start]!r}; expected {example}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == BLOCK_END), None)
    if end is None:
        raise PinError(f"{_rel(note)}: the pin block is not closed by a '-->' line")
    entries: list[tuple[Entry, str]] = []
    for i in range(start + 1, end):
        m = ENTRY.match(lines[i].strip())
        if m is None:
            raise PinError(f"{_rel(note)} line {i + 1}: malformed pin entry {lines[i]!r}; expected "
                           f"'PATH::NAME sha256:<{HEX} hex>' or 'PATH sha256:<{HEX} hex>' ('?': not yet recorded)")
        entries.append((Entry.parse(m["entry"]), m["hash"]))
    if not entries:
        raise PinError(f"{_rel(note)}: the pin block names no code")
    seen = [str(e) for e, _ in entries]
    dup = sorted({s for s in seen if seen.count(s) > 1})
    if dup:
        raise PinError(f"{_rel(note)}: the pin block names {', '.join(dup)} more than once")
    return Pin(note, start, end, entries)


def problems(folder: Path = NOTES, root: Path = ROOT) -> list[str]:
    """One message per note that lacks a valid pin, names code that no longer exists, or whose
    pinned code changed since its hashes were recorded (naming the entries that changed)."""
    out: list[str] = []
    for note in notes(folder):
        rel = _rel(note, root)
        try:
            pin = read_pin(note)
        except PinError as exc:
            out.append(str(exc))
            continue
        missing, stale = [], []
        for entry, recorded in pin.entries:
            try:
                current = entry_hash(entry, root)
            except PinError as exc:
                missing.append(f"  {entry}: {exc}")
                continue
            if current != recorded:
                stale.append((entry, recorded, current))
        if missing:
            out.append(f"{rel} pins code that no longer exists:\n" + "\n".join(missing) +
                       "\nPin the code that implements it now: python tests/privacy_pins.py --drop "
                       f"{rel} ENTRY... and --add {rel} PATH::NAME... (--suggest PATH lists candidates)")
        if stale:
            lines = [f"  {e}  (recorded sha256:{r}, now {c})" for e, r, c in stale]
            hints = [f"  git log -p -L ':{e.name.rsplit('.', 1)[-1]}:{e.path}'" if e.name else f"  git log -p -- {e.path}"
                     for e, _, _ in stale]
            out.append(f"{rel} describes code that changed since the note was last checked:\n" +
                       "\n".join(lines) + "\nRe-read the note against that code (what changed:\n" +
                       "\n".join(hints) + "\n), fix what no longer holds (guarantee, neighbouring "
                       "relation, sensitivity, budget split, source), then record the new hashes: "
                       f"make pin-notes NOTES={rel}")
    return out


def _write_block(note: Path, entries: list[tuple[Entry, str]], pin: Pin | None) -> None:
    text = note.read_text(encoding="utf-8")
    eol = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines()
    block = [BLOCK_START, *(f"{e} sha256:{h}" for e, h in entries), BLOCK_END]
    start = 0 if pin is None else pin.start
    lines[start:start if pin is None else pin.end + 1] = block
    after = start + len(block)
    if after < len(lines) and lines[after].strip():  # a blank line ends the HTML block
        lines.insert(after, "")
    note.write_text(eol.join(lines) + eol, encoding="utf-8", newline="")


def update(selected: list[Path] | None = None, root: Path = ROOT, folder: Path = NOTES) -> list[str]:
    """Refresh the recorded hashes of the selected (default: all) notes; returns the notes changed.
    Raises PinError (naming every missing entry) before writing a note that pins missing code."""
    changed = []
    for note in (selected if selected else notes(folder)):
        pin = read_pin(note)
        fresh, missing = [], []
        for entry, _ in pin.entries:
            try:
                fresh.append((entry, entry_hash(entry, root)))
            except PinError as exc:
                missing.append(f"{entry}: {exc}")
        if missing:
            raise PinError(f"{_rel(note, root)} pins code that no longer exists: " + "; ".join(missing) +
                           f"; fix its pins first (--drop/--add/--pin {_rel(note, root)} ...)")
        if fresh != pin.entries:
            _write_block(note, fresh, pin)
            changed.append(_rel(note, root))
    return changed


def expand_entries(args: Iterable[str]) -> list[Entry]:
    """Command-line entries: ``PATH``, ``PATH::NAME`` or ``PATH::A,B,C.m`` (several of one module)."""
    out: list[Entry] = []
    for arg in args:
        path, sep, names = arg.partition("::")
        for name in (names.split(",") if sep else [None]):
            e = Entry.parse(f"{path}::{name.strip()}" if name is not None else path)
            if e not in out:
                out.append(e)
    return out


def _existing(note: Path) -> Pin | None:
    """The note's pin block if it has a valid one; None if it has none at all."""
    try:
        return read_pin(note)
    except PinError:
        lines = note.read_text(encoding="utf-8").splitlines()
        if any(ln.strip().startswith(BLOCK_START) for ln in lines):
            old = [i for i, ln in enumerate(lines) if OLD_PIN.match(ln.strip())]
            if len(old) == 1:  # an old one-line pin: replaced in place
                return Pin(note, old[0], old[0], [])
            raise
        return None


def pin(note: Path, entries: list[Entry], root: Path = ROOT) -> None:
    """Write (or replace) ``note``'s pin block with ``entries`` and their current hashes."""
    if not entries:
        raise PinError("a pin block needs at least one entry")
    hashed = [(e, entry_hash(e, root)) for e in entries]
    _write_block(note, hashed, _existing(note))


def add(note: Path, entries: list[Entry], root: Path = ROOT) -> None:
    """Add ``entries`` (with current hashes) to ``note``'s block; existing entries keep theirs."""
    old = read_pin(note)
    have = {e for e, _ in old.entries}
    new = [(e, entry_hash(e, root)) for e in entries if e not in have]
    _write_block(note, old.entries + new, old)


def drop(note: Path, entries: list[Entry]) -> None:
    old = read_pin(note)
    unknown = [str(e) for e in entries if e not in {x for x, _ in old.entries}]
    if unknown:
        raise PinError(f"{_rel(note)} does not pin {', '.join(unknown)}")
    kept = [(e, h) for e, h in old.entries if e not in entries]
    if not kept:
        raise PinError(f"dropping these would leave {_rel(note)} pinned to nothing")
    _write_block(note, kept, old)


# ---------------------------------------------------------------- coverage
@dataclass(frozen=True, order=True)
class PrivacyFunction:
    """A definition that charges a budget or uses dpreg.mechanisms (found by syntax)."""

    path: str
    name: str                   # "f", "Class.method", or "<module>" for import-time code
    uses: tuple[str, ...]       # what it charges or uses: "charge", ".spend", "laplace", ...

    def __str__(self) -> str:
        return f"{self.path}::{self.name}"


_MECHANISMS = "dpreg.mechanisms"
_CHARGE = ("dpreg.privacy.ledger.charge", "dpreg.privacy.charge")


def _module_name(rel: str) -> str:
    parts = list(Path(rel).with_suffix("").parts[1:])  # drop "src"
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(nodes: Iterable[ast.AST], modname: str, is_package: bool) -> dict[str, str]:
    """Local name -> qualified name for the imports among ``nodes`` (not inside nested defs)."""
    out: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    out[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = modname.split(".") if is_package else modname.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join([*pkg, *([base] if base else [])])
            for a in node.names:
                out[a.asname or a.name] = f"{base}.{a.name}"
    return out


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _dotted(node: ast.AST) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _module_file(qualified: str, root: Path) -> Path | None:
    p = root / "src" / Path(*qualified.split("."))
    if (p / "__init__.py").is_file():
        return p / "__init__.py"
    return p.with_suffix(".py") if p.with_suffix(".py").is_file() else None


@cache
def _module_names(path: Path, modname: str) -> tuple[dict[str, str], frozenset[str]]:
    """(imports, other bindings) at the top level of a module: local name -> qualified name of
    what it imports, and the names it defines itself (def, class, assignment)."""
    tree = ast.parse(path.read_bytes().decode("utf-8").removeprefix("\ufeff"))
    stmts = list(_module_level(tree.body))
    own = {t.id for s in stmts if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign))
           for t in ast.walk(s) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    own |= {s.name for s in stmts if isinstance(s, _DEFS)}
    return _imports(stmts, modname, path.name == "__init__.py"), frozenset(own)


@cache
def _resolve(qualified: str, root: Path) -> tuple[str, str | None]:
    """Follow ``a.b.c`` through packages, submodules and re-exports: (qualified name, the name
    of the object it is) -- object None when it is a module.  ``from dpreg.mechanisms import
    laplace`` is the function that dpreg/mechanisms/__init__.py binds, not the submodule."""
    parts = qualified.split(".")
    for _ in range(20):  # re-export chains are short; a cycle ends here
        cur, k = parts[0], 1
        if _module_file(cur, root) is None:
            return qualified, parts[-1]
        while k < len(parts):
            f = _module_file(cur, root)
            if f is None:
                return ".".join(parts), parts[k - 1]
            imported, own = _module_names(f, cur)
            p = parts[k]
            target = imported.get(p)
            if p in own:
                return ".".join(parts), p
            if target is not None and target != f"{cur}.{p}":
                parts = [*target.split("."), *parts[k + 1:]]
                break
            if _module_file(f"{cur}.{p}", root) is None:
                return ".".join(parts), p  # bound by some means we do not follow: an object
            cur, k = f"{cur}.{p}", k + 1
        else:
            return ".".join(parts), None
    return ".".join(parts), parts[-1]


def _uses(nodes: Iterable[ast.AST], aliases: dict[str, str], root: Path) -> set[str]:
    """What ``nodes`` charge or use of dpreg.mechanisms: a name or attribute chain resolved
    through the imports (and the re-exports of the modules it comes from) to a function, class
    or constant of dpreg.mechanisms or to the ledger's ``charge`` -- called or passed on -- and
    any ``.spend(...)`` call."""
    found: set[str] = set()
    for n in nodes:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "spend":
            found.add(".spend")
        if not isinstance(n, (ast.Name, ast.Attribute)):
            continue
        chain = _dotted(n)
        if not chain or not aliases.get(chain[0], "").startswith("dpreg"):
            continue
        target, obj = _resolve(".".join([aliases[chain[0]], *chain[1:]]), root)
        if target in _CHARGE:
            found.add("charge")
        elif obj is not None and target.startswith(_MECHANISMS + "."):
            found.add(obj)  # a module itself (``sensitivity``) is not a use; its functions are
    return found


def _units(tree: ast.Module) -> list[tuple[str, list[ast.AST]]]:
    """(name, nodes) of every definition: ``<module>`` (import-time code), each function (with
    everything defined inside it), each class (decorators, bases and the statements of its body
    that are not methods) and each method (``Class.method``; nested classes ``A.B.method``)."""
    out: list[tuple[str, list[ast.AST]]] = []

    def below(stmts: list[ast.AST]) -> list[ast.AST]:
        return [n for s in stmts for n in ast.walk(s)]

    def block(stmts: list[ast.stmt], name: str, prefix: str) -> None:
        own: list[ast.AST] = []
        for s in _module_level(stmts):
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + s.name, below([s])))
            elif isinstance(s, ast.ClassDef):
                out.append((prefix + s.name, below([*s.decorator_list, *s.bases, *s.keywords])))
                block(s.body, prefix + s.name, prefix + s.name + ".")
            elif not isinstance(s, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                own.extend(ast.walk(s))
            else:  # the compound statement's own expressions (its bodies are walked above)
                own.extend(n for f in ("test", "iter", "target", "items") if getattr(s, f, None)
                           for n in below(getattr(s, f) if isinstance(getattr(s, f), list)
                                          else [getattr(s, f)]))
        out.append((name, own))

    block(tree.body, "<module>", "")
    return out


@cache
def _scan(path: Path, mtime_ns: int, rel: str, root: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    tree = ast.parse(path.read_bytes().decode("utf-8").removeprefix("\ufeff"))
    modname, pkg = _module_name(rel), path.name == "__init__.py"
    units = _units(tree)
    aliases = _imports([s for s in _module_level(tree.body)], modname, pkg)
    merged: dict[str, set[str]] = {}
    for name, nodes in units:
        local = [n for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))]
        used = _uses(nodes, {**aliases, **_imports(local, modname, pkg)} if local else aliases, root)
        if used:
            merged.setdefault(name, set()).update(used)
    return tuple((name, tuple(sorted(u))) for name, u in merged.items())


def privacy_functions(root: Path = ROOT, under: str = SRC) -> list[PrivacyFunction]:
    """Every function, method (``Class.method``), class body or import-time block of the modules
    under ``under`` that charges a budget or uses a name of dpreg.mechanisms; sorted."""
    base = root / under
    files = [base] if base.is_file() else sorted(f for f in base.rglob("*.py") if "__pycache__" not in f.parts)
    out: list[PrivacyFunction] = []
    for f in files:
        rel = f.relative_to(root).as_posix()
        out.extend(PrivacyFunction(rel, name, uses)
                   for name, uses in _scan(f, f.stat().st_mtime_ns, rel, root))
    return sorted(out)


def pinned_entries(folder: Path = NOTES) -> dict[Entry, list[str]]:
    """Every entry of every note that has a valid pin block -> the notes pinning it."""
    out: dict[Entry, list[str]] = {}
    for note in notes(folder):
        try:
            pin = read_pin(note)
        except PinError:
            continue
        for e, _ in pin.entries:
            out.setdefault(e, []).append(note.name)
    return out


def exemption(fn: PrivacyFunction, allowed: dict[str, str] = NOT_PINNED) -> str | None:
    for key in allowed:
        e = Entry.parse(key)
        if e.covers(fn.path, fn.name):
            return key
    return None


def notes_pinning(fn: PrivacyFunction, pinned: dict[Entry, list[str]]) -> list[str]:
    return sorted({n for e, ns in pinned.items() if e.covers(fn.path, fn.name) for n in ns})


def uncovered(root: Path = ROOT, folder: Path = NOTES, allowed: dict[str, str] = NOT_PINNED,
              under: str = SRC) -> list[PrivacyFunction]:
    """The privacy functions that no note pins and :data:`NOT_PINNED` does not exempt."""
    pinned = pinned_entries(folder)
    return [fn for fn in privacy_functions(root, under)
            if not notes_pinning(fn, pinned) and exemption(fn, allowed) is None]


# ---------------------------------------------------------------- command line
def _status(verbose: bool, root: Path = ROOT, folder: Path = NOTES) -> None:
    """One line per note (ok / STALE / GONE / BAD and its number of entries); with ``verbose``
    every entry and its current hash, otherwise only the entries that need attention."""
    for note in notes(folder):
        try:
            pin = read_pin(note)
        except PinError:
            print(f"BAD    {_rel(note, root)}")
            continue
        rows = []
        for entry, recorded in pin.entries:
            try:
                current = entry_hash(entry, root)
                state = "ok" if current == recorded else "STALE"
            except PinError:
                current, state = "-" * HEX, "GONE"
            rows.append((state, entry, current))
        worst = "GONE" if any(r[0] == "GONE" for r in rows) else (
            "STALE" if any(r[0] == "STALE" for r in rows) else "ok")
        print(f"{worst:<6} {_rel(note, root)}  ({len(rows)} entries)")
        for state, entry, current in rows:
            if verbose or state != "ok":
                print(f"    {state:<6} {entry} sha256:{current}")


def _suggest(paths: list[str]) -> None:
    pinned = pinned_entries()
    for under in paths or [SRC]:
        for fn in privacy_functions(ROOT, Path(under).as_posix()):
            by = notes_pinning(fn, pinned)
            ex = exemption(fn)
            if by:
                where = "pinned by " + ", ".join(by)
            elif ex:
                where = f"exempt (NOT_PINNED: {ex})"
            else:
                same = sorted({n for e, ns in pinned.items() if e.path == fn.path for n in ns})
                where = ("UNPINNED" + (f"; notes pinning this module: {', '.join(same)}" if same else "")
                         + f"\n    python tests/privacy_pins.py --add docs/privacy/NOTE.md {fn}")
            print(f"{fn}  [{', '.join(fn.uses)}]  {where}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python tests/privacy_pins.py", description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--update", nargs="*", metavar="NOTE", default=None,
                   help="refresh the hashes of these notes (all stale notes if none is given)")
    g.add_argument("--pin", nargs="+", metavar=("NOTE", "ENTRY"),
                   help="write NOTE's pin block for these entries (PATH, PATH::NAME, PATH::A,B)")
    g.add_argument("--add", nargs="+", metavar=("NOTE", "ENTRY"), help="add entries to NOTE's pin block")
    g.add_argument("--drop", nargs="+", metavar=("NOTE", "ENTRY"), help="remove entries from NOTE's pin block")
    ap.add_argument("-v", "--verbose", action="store_true", help="status: list every entry")
    g.add_argument("--suggest", nargs="*", metavar="PATH", default=None,
                   help="list the functions under PATH (default src/dpreg) that charge a budget or use "
                        "dpreg.mechanisms, with the notes that pin them")
    a = ap.parse_args(argv)
    try:
        for opt in ("pin", "add", "drop"):
            args = getattr(a, opt)
            if args:
                if len(args) < 2:
                    ap.error(f"--{opt} needs a note and at least one entry")
                note, entries = Path(args[0]), expand_entries(args[1:])
                if opt == "pin":
                    pin(note, entries)
                elif opt == "add":
                    add(note, entries)
                else:
                    drop(note, entries)
                print(f"{opt}: {args[0]}: {', '.join(map(str, entries))}")
                return 0
        if a.update is not None:
            changed = update([Path(n) for n in a.update] or None)
            for c in changed:
                print(f"updated {c}  (you re-read it against its code, didn't you?)")
            if not changed:
                print("every selected note's hashes are current")
            return 0
        if a.suggest is not None:
            _suggest(a.suggest)
            return 0
    except PinError as exc:
        print(exc, file=sys.stderr)
        return 1
    _status(a.verbose)
    bad = problems()
    missing = uncovered()
    for msg in bad:
        print("\n" + msg, file=sys.stderr)
    if missing:
        print("\nCharge a budget or use dpreg.mechanisms, pinned by no note:\n" +
              "\n".join(f"  {fn}  [{', '.join(fn.uses)}]" for fn in missing), file=sys.stderr)
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
