"""The method registry (dpreg._registry) is the one table of methods, and everything reads it."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import dpreg
from dpreg import _registry
from dpreg.exceptions import InvalidInputError

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "dpreg"


@pytest.mark.parametrize("name", list(_registry.REGISTRY))
def test_every_entry_names_real_objects_and_notes(name):
    m = _registry.REGISTRY[name]
    assert m.name == name
    if m.estimator is not None:
        est = m.load_estimator()
        assert inspect.isclass(est) and hasattr(est, "fit")
        params = inspect.signature(est).parameters
        assert "epsilon" in params and set(m.estimator_options) <= set(params)
        assert ("delta" in params) == (m.delta != "never")
        assert ("neighbouring" in params) == m.takes_neighbouring
    assert m.cores and all(callable(_registry.load(c)) for c in m.cores)
    assert m.privacy_notes and all((ROOT / "docs" / "privacy" / n).is_file()
                                   for n in m.privacy_notes)
    assert m.min_rows >= 2


def test_public_lists_are_read_from_the_registry():
    from dpreg import api

    assert dpreg.METHODS == api.METHODS == api.SIMPLE_ONLY + api.MULTI
    assert "auto" not in dpreg.METHODS  # the public value: auto chooses among these
    assert set(dpreg.METHODS) | {"auto"} == set(_registry.REGISTRY)
    assert api.NEEDS_DELTA == ("adassp", "boosted-adassp", "tukey-em",
                              "covariance-ols")
    assert api.SIMPLE_ONLY == ("noisy-stats", "dp-intercept", "theil-sen-exp", "theil-sen-wide",
                               "theil-sen-smooth")


def test_grouped_and_bench_read_the_registry():
    from dpreg._dispatch import MIN_ROWS
    from dpreg.bench.kinds.multivariate import ESTIMATORS
    from dpreg.bench.kinds.simple import METHOD_KINDS
    from dpreg.grouped.local import LOCAL_METHODS
    from dpreg.simple.replicates import REPLICABLE

    assert MIN_ROWS == {m.name: m.min_rows for m in _registry.methods()}
    assert set(LOCAL_METHODS) == {m.name for m in _registry.methods() if m.local_options is not None}
    assert set(REPLICABLE) <= set(METHOD_KINDS)
    assert {m for m in ESTIMATORS if m in _registry.REGISTRY} == set(
        _registry.names(harness="multivariate"))


def test_unknown_method_names_the_choices_and_suggests():
    with pytest.raises(InvalidInputError, match=r"method must be one of \[.*'auto'\]; got "
                       r"'noisy-stat' \(did you mean 'noisy-stats'\?\)"):
        _registry.get("noisy-stat")
    with pytest.raises(InvalidInputError) as info:
        _registry.get("zzz")
    assert "did you mean" not in str(info.value)
    with pytest.raises(InvalidInputError, match="did you mean 'tukey-em'"):
        dpreg.api.fit_arrays([[0.1], [0.2]], [0.1, 0.2], method="tukey_em", epsilon=1.0,
                             x_bounds=[(0, 1)], y_bounds=(0, 1))


def _dpreg_imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dpreg"):
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("dpreg")}
    return out


def test_the_registry_imports_no_estimator_or_core():
    """Estimators and cores are dotted paths, loaded on demand: the table sits at the bottom of
    the layering (the import-linter contract checks the same, docs/architecture.md)."""
    assert _dpreg_imports(SRC / "_registry.py") == {"dpreg.exceptions"}
    assert all(":" in p for m in _registry.methods() for p in (*m.cores, m.estimator or ":"))


#: files allowed to hold literal lists of method names, and why (everything else reads the
#: registry): per-method texts and display orders, and algorithm-specific code paths that the
#: one-release-function refactor (issue 17, item 1) replaces
_LISTS_ALLOWED = {
    "_registry.py": "the table itself",
    "demo.py": "the demo's display order (same set as the registry's one-x methods, tested)",
    "inference/uncertainty.py": "per-method interval texts (every method covered, tested)",
    "inference/prediction.py": "per-method fit-statistics texts (every method covered, tested "
                               "in tests/uncertainty/test_unc_defaults_prediction.py)",
    "bench/kinds/simple.py": "which methods share the replicate code path",
    "simple/replicates.py": "which methods have replicates batched over many data sets (tested "
                            "bit for bit against the per-data-set loop)",
    "grouped/local.py": "which Theil-Sen variants share the lean seeded path",
    "simple/_result.py": "which simple methods have an interval text",
    "planner.py": "which methods the planner solves in closed form (the rest is simulated)",
}


def _method_lists(path: Path) -> list[int]:
    names = set(_registry.REGISTRY)
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            elts = node.elts
        elif isinstance(node, ast.Dict):
            elts = [k for k in node.keys if k is not None]
        else:
            continue
        if sum(isinstance(e, ast.Constant) and e.value in names for e in elts) >= 2:
            lines.append(node.lineno)
    return lines


def test_no_other_hand_written_method_lists():
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel not in _LISTS_ALLOWED and (lines := _method_lists(path)):
            found[rel] = lines
    assert not found, (f"literal lists of method names outside the registry: {found}; read "
                       "dpreg._registry instead (or allow the file in this test, with a reason)")


def test_the_list_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('METHODS = ("noisy-stats", "adassp")\n')
    assert _method_lists(bad) == [1]


def test_demo_shows_every_one_x_method():
    from dpreg.demo import DEMO_METHODS

    assert sorted(DEMO_METHODS) == sorted(_registry.names(harness="simple"))


def _layer_index() -> dict[str, int]:
    """Top-level module of dpreg -> its layer (0 = top) in the import-linter layers contract."""
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (layers,) = [c["layers"] for c in conf["tool"]["importlinter"]["contracts"]
                 if c["type"] == "layers"]
    return {name.strip(): i for i, layer in enumerate(layers)
            for name in layer.replace(":", "|").split("|")}


def _top(path: str) -> str:
    return path.partition(":")[0].split(".")[1]


def test_dynamic_loads_respect_the_layers():
    """The registry names estimators and cores by dotted path, loaded by _dispatch on demand: an
    import import-linter cannot see.  Every method _dispatch fits must live below it; ``auto``
    (loaded only by api, never by _dispatch) lives in auto/, between the two."""
    idx = _layer_index()
    assert idx["_registry"] > idx["mechanisms"] and set(idx) >= {"_dispatch", "api", "auto"}
    for m in _registry.methods(selector=False):
        for path in (m.estimator, *m.cores):
            if path is not None:
                assert idx[_top(path)] > idx["_dispatch"], (m.name, path)
    for m in _registry.methods(selector=True):
        for path in (m.estimator, *m.cores):
            assert path is not None and idx["api"] < idx[_top(path)] < idx["_dispatch"], path
    from dpreg import _dispatch

    with pytest.raises(InvalidInputError):  # _dispatch refuses the selector: it never loads auto
        _dispatch._entry("auto")


def test_the_layer_check_sees_a_misplaced_core():
    idx = _layer_index()
    assert not idx[_top("dpreg.auto:fit_auto")] > idx["_dispatch"]  # what the check above rejects
