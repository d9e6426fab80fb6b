"""The public API matches its committed snapshot (tests/snapshots/public_api.txt).

A refactor that drops or renames a public name, a parameter, a default, a method or a CLI
option fails here with a diff; an addition fails too until the snapshot is updated consciously::

    make api-snapshot      # = DPREG_UPDATE_API_SNAPSHOT=1 pytest tests/test_api_snapshot.py

Names of the stable API (``api_snapshot.STABLE``) can never be dropped, not even by an update.
"""

from __future__ import annotations

import difflib
import os
import types

import pytest
import typer

import api_snapshot as snap
import dpreg
import dpreg.mechanisms
from dpreg.cli import app


def _diff(old: list[str], new: list[str]) -> str:
    return "\n".join(difflib.unified_diff(old, new, "tests/snapshots/public_api.txt (committed)",
                                          "live API", lineterm="", n=1))


def _missing_stable(lines: list[str]) -> list[str]:
    missing = [ln.removeprefix("MISSING ") for ln in lines if ln.startswith("MISSING ")]
    commands = {ln.removeprefix("command dpreg ") for ln in lines if ln.startswith("command dpreg ")}
    missing += [f"dpreg {c} (CLI)" for c in snap.STABLE_COMMANDS if c not in commands]
    return missing


def test_public_api_matches_the_snapshot():
    live = snap.build()
    missing = _missing_stable(live)
    assert not missing, (f"stable names are gone: {missing}. Stable names are kept (add, don't "
                         "rename); restore them (an alias is enough).")
    if os.environ.get(snap.UPDATE_ENV) == "1":
        snap.write(live)
        return
    committed = snap.read()
    assert committed, f"no snapshot at {snap.SNAPSHOT}; create it with: {snap.UPDATE_COMMAND}"
    if committed != live:
        pytest.fail("the public API differs from its snapshot (- committed, + live):\n"
                    + _diff(committed, live) + "\n\nIf the change is intended (an addition, or a "
                    "deprecation agreed on), check that no user-visible name or parameter is lost, "
                    f"then update the snapshot: {snap.UPDATE_COMMAND}\nand commit "
                    "tests/snapshots/public_api.txt with the change.", pytrace=False)


# ---------------------------------------------------------------- the check can fail
def test_a_renamed_parameter_or_a_dropped_name_changes_the_snapshot(monkeypatch):
    before = snap.python_lines()

    def laplace(value, *, sensitivity, eps, rng=None):  # `epsilon` renamed
        raise AssertionError

    monkeypatch.setattr(dpreg.mechanisms, "laplace", laplace)
    after = snap.python_lines()
    (old,) = [ln for ln in before if ln.startswith("def dpreg.mechanisms.laplace(")]
    (new,) = [ln for ln in after if ln.startswith("def dpreg.mechanisms.laplace(")]
    assert "epsilon" in old and new == "def dpreg.mechanisms.laplace(value, *, sensitivity, eps, rng=None)"
    assert f"-{old}" in _diff(before, after) and f"+{new}" in _diff(before, after)

    monkeypatch.delattr(dpreg, "fit_by_group")
    gone = snap.python_lines()
    assert "MISSING dpreg.fit_by_group" in gone
    assert _missing_stable(gone + snap.cli_lines()) == ["dpreg.fit_by_group"]


def test_a_changed_default_and_a_new_method_change_the_snapshot():
    class Est(dpreg.NoisyStats):
        __module__ = "dpreg.fake"

        def __init__(self, *, epsilon=2.0, bounds_X=None):  # default changed, params dropped
            pass

        def extra(self, X):  # a new public method
            return X

    lines = snap.class_lines("dpreg.NoisyStats", Est)
    assert lines[0].startswith("class dpreg.NoisyStats(*, epsilon=2.0, bounds_X=None)")
    assert "  dpreg.NoisyStats.extra(self, X)" in lines
    assert lines != snap.class_lines("dpreg.NoisyStats", dpreg.NoisyStats)


def test_a_dropped_cli_option_or_command_changes_the_snapshot():
    cmd = typer.main.get_command(app)
    before = snap.command_lines(cmd)
    fit = cmd.commands["fit"]
    fit.params = [p for p in fit.params if p.name != "seed"]
    del cmd.commands["demo"]
    after = snap.command_lines(cmd)
    assert "  option --seed  [default=None]" in before[before.index("command dpreg fit"):
                                                        before.index("command dpreg fit-groups")]
    assert "command dpreg demo" in before and "command dpreg demo" not in after
    assert _missing_stable(after) == ["dpreg demo (CLI)"]
    assert len(after) < len(before)


def test_signatures_leave_out_annotations_and_addresses():
    sentinel = object()

    def f(a: int, b: str = "x", *args: float, c=sentinel, **kw: types.NoneType) -> int:
        return 0

    assert snap.signature(f) == "(a, b='x', *args, c=<object object>, **kw)"
