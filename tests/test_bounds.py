"""The one conversion of a public ``bounds`` mapping (dpreg._bounds, issue 31).

Exact behaviour of the conversion and its refusals; every entry point that takes ``bounds=``
(``regress`` on a frame and on a file, ``fit_by_group``, ``plan``, ``release_sscp``, a
codebook's moments) gives the same refusal of a missing column before anything is charged; and
an AST scan of the package: no other module converts a ``bounds`` mapping itself.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import _bounds
from dpreg.exceptions import InvalidInputError, InvalidParameterError

SRC = Path(dpreg.__file__).parent


# ---------------------------------------------------------------------------- the conversion
def test_column_bounds_converts_one_pair_to_floats():
    out = _bounds.column_bounds({"x": (0, 2), "y": [-1.5, np.float32(3)]}, "y")
    assert out == (-1.5, 3.0) and all(type(v) is float for v in out)
    assert _bounds.column_bounds({"x": np.array([0, 2])}, "x") == (0.0, 2.0)


def test_xy_bounds_orders_regressors_and_ignores_other_columns():
    xb, yb = _bounds.xy_bounds({"b": (1, 2), "y": (0, 1), "a": (-3, 3), "z": (5, 6)},
                               ["a", "b"], "y")
    assert xb == [(-3.0, 3.0), (1.0, 2.0)] and yb == (0.0, 1.0)


def test_columns_bounds_takes_a_mapping_or_an_aligned_list():
    assert _bounds.columns_bounds({"u": (0, 1), "v": (2, 4)}, ["v", "u"]) == [(2.0, 4.0),
                                                                                (0.0, 1.0)]
    assert _bounds.columns_bounds([(0, 1), (2, 4)], ["u", "v"]) == [(0.0, 1.0), (2.0, 4.0)]
    with pytest.raises(InvalidInputError, match=r"one \(lo, hi\) pair per column \(2\); got 1"):
        _bounds.columns_bounds([(0, 1)], ["u", "v"])
    with pytest.raises(InvalidInputError, match="bounds is required"):
        _bounds.columns_bounds(None, ["u"])


def test_private_only_where_allowed():
    assert _bounds.column_bounds({"x": "private"}, "x", allow_private=True) == _bounds.PRIVATE
    assert _bounds.column_bounds(_bounds.AllPrivate(), "x", allow_private=True) == "private"
    with pytest.raises(InvalidParameterError, match=r"bounds\['x'\] must be a pair"):
        _bounds.column_bounds({"x": "private"}, "x")


# ---------------------------------------------------------------------------- refusals
def test_missing_column_is_named_and_nothing_else():
    with pytest.raises(InvalidInputError) as exc:
        _bounds.column_bounds({"y": (0, 1)}, "x")
    msg = str(exc.value)
    assert msg.startswith("bounds for column 'x' are missing: pass bounds={'x': (lo, hi), ...}")
    assert "--bounds x=LO:HI" in msg and "never reads bounds off the private data" in msg
    assert isinstance(exc.value, ValueError) and not isinstance(exc.value, InvalidParameterError)


def test_every_missing_column_is_named_in_order():
    with pytest.raises(InvalidInputError, match=r"^bounds for columns 'b', 'y' are missing"):
        _bounds.xy_bounds({"a": (0, 1)}, ["a", "b"], "y")
    with pytest.raises(InvalidInputError, match=r"^bounds for column 'v' are missing"):
        _bounds.columns_bounds({"u": (0, 1)}, ["u", "v"])


@pytest.mark.parametrize(("value", "shown"), [
    ((1, 1), r"\(1, 1\)"),                       # lo == hi
    ((2, 1), r"\(2, 1\)"),                       # lo > hi
    ((0, float("inf")), r"\(0, inf\)"),          # not finite
    ((0, float("nan")), r"\(0, nan\)"),
    (("0", "1"), r"\('0', '1'\)"),               # not numeric
    ((True, 2), r"\(True, 2\)"),
    ((0, 1, 2), r"\(0, 1, 2\)"),                 # not a pair
    (5, "5"),
])
def test_bad_pair_names_parameter_range_and_value(value, shown):
    with pytest.raises(InvalidParameterError) as exc:
        _bounds.column_bounds({"x": value}, "x")
    assert isinstance(exc.value, ValueError)
    assert str(exc.value).startswith(
        "bounds['x'] must be a pair (lo, hi) of finite real numbers with lo < hi; got ")
    assert re.search(shown, str(exc.value)), str(exc.value)


def test_not_a_mapping_is_refused():
    with pytest.raises(InvalidInputError, match="bounds must be a dict mapping column -> "
                                                r"\(lo, hi\); got list"):
        _bounds.column_bounds([(0, 1)], "x")
    with pytest.raises(InvalidInputError, match="bounds are required"):
        _bounds.xy_bounds(None, ["x"], "y")


# ---------------------------------------------------------------------------- entry points
SECRET = 987654.125  # a data value that no refusal may show


@pytest.fixture
def frame():
    g = np.random.default_rng(0)
    return pd.DataFrame({"k": np.repeat(["a", "b"], 20), "x": g.uniform(0, 1, 40),
                         "y": np.r_[SECRET, g.uniform(0, 1, 39)]})


def _refuses_missing_x(call):
    led = dpreg.Ledger(dpreg.ApproxDP(100.0, 1e-3))
    with pytest.raises(InvalidInputError) as exc:
        call(led)
    assert "bounds for column 'x' are missing" in str(exc.value)
    assert str(SECRET) not in str(exc.value) and "987654" not in str(exc.value)
    assert led.events() == []  # refused before any charge (and so before any noise)


def test_regress_refuses_a_missing_column(frame):
    _refuses_missing_x(lambda led: dpreg.regress(
        frame, "y ~ x", method="adassp", epsilon=1.0, delta=1e-6, bounds={"y": (0, 1)},
        ledger=led, random_state=0))


def test_regress_on_a_file_refuses_a_missing_column(frame, tmp_path):
    path = tmp_path / "d.csv"
    frame[["x", "y"]].to_csv(path, index=False)
    _refuses_missing_x(lambda led: dpreg.regress(
        str(path), "y ~ x", method="adassp", epsilon=1.0, delta=1e-6, bounds={"y": (0, 1)},
        ledger=led, random_state=0))


def test_fit_by_group_refuses_a_missing_column(frame):
    _refuses_missing_x(lambda led: dpreg.fit_by_group(
        frame, "k", "x", "y", method="noisy-stats", epsilon=1.0, bounds={"y": (0, 1)},
        groups=["a", "b"], ledger=led, random_state=0))


def test_plan_refuses_a_missing_column():
    _refuses_missing_x(lambda led: dpreg.plan(
        "adassp", 1.0, 1e-6, n=100, formula="y ~ x", bounds={"y": (0, 1)}, ledger=led))


def test_release_sscp_refuses_a_missing_column(frame):
    _refuses_missing_x(lambda led: dpreg.release_sscp(
        frame[["x", "y"]], columns=["x", "y"], bounds={"y": (0, 1)}, epsilon=1.0,
        delta=1e-6, ledger=led, random_state=0))


def test_codebook_moments_refuse_a_column_without_bounds():
    from dpreg.codebook import check_moments

    with pytest.raises(InvalidInputError, match=r"^bounds for column 'x' are missing: design "
                                                r"declares a mean and sd for it"):
        check_moments({"mean": {"x": 0.5}, "sd": {"x": 0.1}}, {"y": (0, 1)})


def test_entry_points_convert_to_the_same_pairs(frame):
    """The cores receive the pairs of the one conversion (floats, regressors in order)."""
    bounds = {"x": (0, 1), "y": (-1, 2)}
    r = dpreg.regress(frame, "y ~ x", method="noisy-stats", epsilon=1.0, bounds=bounds,
                      random_state=0)
    assert r.bounds == {"x": (0.0, 1.0), "y": (-1.0, 2.0)}
    sscp = dpreg.release_sscp(frame[["x", "y"]], columns=["x", "y"], bounds=bounds,
                              epsilon=1.0, delta=1e-6, random_state=0)
    assert [tuple(b) for b in sscp.bounds] == [(0.0, 1.0), (-1.0, 2.0)]


# ---------------------------------------------------------------------------- one copy
def _is_bounds_name(node: ast.AST) -> bool:
    """``bounds`` (a variable, attribute or parameter holding the public column mapping)."""
    name = node.id if isinstance(node, ast.Name) else (
        node.attr if isinstance(node, ast.Attribute) else None)
    return name in {"bounds", "merged"}


def _conversions(tree: ast.AST) -> list[tuple[int, str]]:
    """Places that read one column's pair out of a bounds mapping themselves: ``bounds[c]``
    (a non-constant key) handed to ``check_bounds``, or a comprehension/assignment building
    ``x_bounds``/``y_bounds``/``xb``/``yb`` from ``bounds[...]``/``bounds.get(...)``."""
    found: list[tuple[int, str]] = []

    def reads_column(node: ast.AST) -> bool:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Subscript) and _is_bounds_name(sub.value) \
                    and not isinstance(sub.slice, ast.Constant):
                return True
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
                    and sub.func.attr == "get" and _is_bounds_name(sub.func.value):
                return True
        return False

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(
                node.func, "attr", None)) == "check_bounds" and node.args \
                and reads_column(node.args[0]):
            found.append((node.lineno, "check_bounds(bounds[...])"))
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for tgt in targets for t in ast.walk(tgt) if isinstance(t, ast.Name)}
            if names & {"x_bounds", "y_bounds", "xb", "yb"} and node.value is not None \
                    and reads_column(node.value):
                found.append((node.lineno, f"{sorted(names)} = ... bounds[...]"))
        if isinstance(node, ast.FunctionDef) and node.name in {
                "_bounds_for", "_term_bounds", "_check_domains"}:
            found.append((node.lineno, f"def {node.name}"))
    return found


def test_scan_finds_a_copy():
    """The scan itself: a re-implementation of each kind is caught."""
    for code in ("lo, hi = check_bounds(bounds[c], 'b')",
                 "x_bounds = [tuple(bounds[c]) for c in xs]",
                 "yb = check_bounds(bounds.get(y), 'y')",
                 "def _bounds_for(name, bounds):\n    pass"):
        assert _conversions(ast.parse(code)), code
    assert not _conversions(ast.parse("xb, yb = xy_bounds(bounds, xs, y)"))


def test_no_other_module_converts_a_bounds_mapping():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "_bounds.py" and path.parent == SRC:
            continue
        for line, what in _conversions(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{path.relative_to(SRC)}:{line}: {what}")
    assert offenders == [], "convert bounds through dpreg._bounds:\n" + "\n".join(offenders)
