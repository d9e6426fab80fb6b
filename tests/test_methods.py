"""The method registry (dpreg.methods) is the one table of methods: each method is one spec,
and every caller asks a spec instead of branching on a method name."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import dpreg
from dpreg import methods
from dpreg._spec import SET_BY_CALLER, MethodSpec, load
from dpreg._validation import deprecated_aliases
from dpreg.exceptions import InvalidInputError, InvalidParameterError, UnknownNameError

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "dpreg"


@pytest.mark.parametrize("name", list(methods.REGISTRY))
def test_every_spec_names_real_objects_and_notes(name):
    m = methods.REGISTRY[name]
    assert isinstance(m, MethodSpec) and m.name == name
    assert m.estimator is None or m.core_function is None  # one place the options go
    if m.core_function is not None:
        assert callable(load(m.core_function))
    if m.estimator is not None:
        est = m.estimator_class()
        assert inspect.isclass(est) and hasattr(est, "fit")
        params = inspect.signature(est).parameters
        assert "epsilon" in params and set(m.estimator_options) <= set(params)
        assert ("delta" in params) == (m.delta != "never")
        assert ("neighbouring" in params) == m.takes_neighbouring
    assert m.privacy_notes and all((ROOT / "docs" / "privacy" / n).is_file()
                                   for n in m.privacy_notes)
    assert m.min_rows >= 2


@pytest.mark.parametrize("name", [m.name for m in methods.specs(selector=False)
                                  if m.estimator is not None or m.core_function is not None])
def test_spec_options_are_the_estimators_hyperparameters(name):
    """The options a spec declares are what its fit takes besides the public inputs the
    callers set (one list, checked against the estimator or core it fits with); where several
    method names share one estimator (the Theil-Sen medians), each declares the subset its
    variant uses and together they declare all of them.  (A spec that is its method's only
    code has no other list to agree with: tests/test_adding_a_method.py.)"""
    m = methods.get(name)
    target = m.estimator_class() if m.estimator is not None else load(m.core_function)
    params = set(inspect.signature(target).parameters) - SET_BY_CALLER
    params -= set(deprecated_aliases(target))  # old spellings (tests/test_vocabulary.py)
    params -= set(m.estimator_options) | {"rho", "ci_alpha", "neighbouring"}
    siblings = [s for s in methods.specs(selector=False)
                if (s.estimator, s.core_function) == (m.estimator, m.core_function)]
    declared = set().union(*(set(s.options) for s in siblings)) - {"neighbouring"}
    assert set(m.options) - {"neighbouring"} <= params
    assert declared == params, (name, declared ^ params)


def test_public_lists_are_read_from_the_registry():
    from dpreg import api

    assert dpreg.METHODS == api.METHODS == api.SIMPLE_ONLY + api.MULTI
    assert "auto" not in dpreg.METHODS  # the public value: auto chooses among these
    assert set(dpreg.METHODS) | {"auto"} == set(methods.REGISTRY)
    assert api.NEEDS_DELTA == ("adassp", "boosted-adassp", "tukey-em", "covariance-ols")
    assert api.SIMPLE_ONLY == ("noisy-stats", "dp-intercept", "theil-sen-exp", "theil-sen-wide",
                               "theil-sen-smooth")


def test_grouped_bench_demo_and_planner_read_the_registry():
    from dpreg._dispatch import MIN_ROWS
    from dpreg.bench.kinds.multivariate import ESTIMATORS
    from dpreg.bench.kinds.simple import METHOD_KINDS
    from dpreg.demo import DEMO_METHODS
    from dpreg.grouped.local import LOCAL_METHODS
    from dpreg.planner import ANALYTIC_METHODS
    from dpreg.replicates import REPLICABLE

    assert MIN_ROWS == {m.name: m.min_rows for m in methods.specs()}
    assert set(LOCAL_METHODS) == {m.name for m in methods.specs() if m.local_options is not None}
    assert set(REPLICABLE) <= set(METHOD_KINDS)
    assert {m for m in ESTIMATORS if m in methods.REGISTRY} == set(
        methods.names(harness="multivariate"))
    assert sorted(DEMO_METHODS) == sorted(methods.names(harness="simple"))
    assert set(ANALYTIC_METHODS) == {"noisy-stats", "dp-intercept", "adassp", "covariance-ols"}


def test_unknown_method_names_the_choices_and_suggests():
    with pytest.raises(InvalidInputError, match=r"method must be one of \[.*'auto'\]; got "
                       r"'noisy-stat' \(did you mean 'noisy-stats'\?\)"):
        methods.get("noisy-stat")
    with pytest.raises(InvalidInputError) as info:
        methods.get("zzz")
    assert "did you mean" not in str(info.value)
    with pytest.raises(InvalidInputError, match="did you mean 'tukey-em'"):
        dpreg.api.fit_arrays([[0.1], [0.2]], [0.1, 0.2], method="tukey_em", epsilon=1.0,
                             x_bounds=[(0, 1)], y_bounds=(0, 1))


# ------------------------------------------------------------------------- option checks
def test_options_are_validated_by_their_declared_constraints():
    ada = methods.get("adassp")
    with pytest.raises(UnknownNameError, match="did you mean 'calibration'"):
        ada.check_options({"calibraton": "gdp"})
    with pytest.raises(InvalidParameterError, match=r"calibration must be one of \['gdp', "
                       r"'wang'\]; got 'wan'; did you mean 'wang'"):
        ada.check_options({"calibration": "wan"})
    with pytest.raises(InvalidParameterError, match="n_models must be"):
        methods.get("tukey-em").check_options({"n_models": 3})
    assert methods.get("tukey-em").check_options({"n_models": 8}) == {"n_models": 8}
    assert ada.check_options({}, fill=True)["calibration"] == "gdp"


@pytest.mark.parametrize("name,opts,context,word", [
    ("dp-gd", {"variant": "zcdp"}, {"n_features": 3}, "variant"),
    ("dp-gd", {"clip_norm": 5.0}, {"n_features": 1}, "clip_norm"),
    ("theil-sen-exp", {"ci_method": "tight"}, {"ci_alpha": None}, "ci_method"),
    ("noisy-stats", {"n_boot": 100, "inference": False}, {}, "n_boot"),
])
def test_an_option_the_fit_would_not_use_is_an_error(name, opts, context, word):
    """Never silently dropped: the parameter and why it is unused are named."""
    with pytest.raises(InvalidParameterError, match=rf"option '{word}' is not used"):
        methods.get(name).check_options(opts, context=context)


def test_unused_options_are_refused_through_regress_before_any_charge():
    import numpy as np

    from dpreg import Ledger, PureDP

    g = np.random.default_rng(0)
    x = g.uniform(0, 1, 50)
    led = Ledger(PureDP(10))
    with pytest.raises(InvalidParameterError, match="not used"):
        dpreg.api.fit_arrays(x.reshape(-1, 1), x, method="dp-gd", epsilon=1.0,
                             x_bounds=[(0, 1)], y_bounds=(0, 1), clip_norm=7.0, ledger=led)
    with pytest.raises(UnknownNameError):  # theta belongs to theil-sen-wide only
        dpreg.api.fit_arrays(x.reshape(-1, 1), x, method="theil-sen-exp", epsilon=1.0,
                             x_bounds=[(0, 1)], y_bounds=(0, 1), theta=0.1, ledger=led)
    assert led.events() == []


# ------------------------------------------------------------------------- no name branches
#: a comparison of a value with a method name: what every caller must ask a spec instead of
_BRANCH = re.compile(r"""(==|!=| in |startswith\()\s*[(\[{]?\s*["'](noisy-stats|adassp|"""
                     r"""boosted-adassp|covariance-ols|tukey-em|theil-sen[a-z-]*|dp-gd|"""
                     r"""dp-intercept)["']""")


def _branches(text: str) -> list[int]:
    return [i for i, line in enumerate(text.splitlines(), 1) if _BRANCH.search(line)]


def test_no_code_branches_on_a_method_name():
    """Every file of the package, the specs included, with no exemption list."""
    found = {p.relative_to(SRC).as_posix(): lines for p in sorted(SRC.rglob("*.py"))
             if (lines := _branches(p.read_text(encoding="utf-8")))}
    assert not found, f"branches on a method name (ask the method's spec instead): {found}"


def test_the_branch_check_can_fail():
    assert _branches('if method == "adassp":\n    pass\nok = m.startswith("theil-sen")') == [1, 3]
    assert _branches('if kind in ("noisy-stats", "dp-intercept"):') == [1]
    assert _branches('x = methods.get("adassp")') == []


def _method_lists(path: Path) -> list[int]:
    names = set(methods.REGISTRY)
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


def test_no_hand_written_method_lists():
    """Lists of methods are read from the registry (by capability), never written by hand."""
    found = {p.relative_to(SRC).as_posix(): lines for p in sorted(SRC.rglob("*.py"))
             if (lines := _method_lists(p))}
    assert not found, f"literal lists of method names: {found}; read dpreg.methods instead"


def test_the_list_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('METHODS = ("noisy-stats", "adassp")\n')
    assert _method_lists(bad) == [1]


# ------------------------------------------------------------------------- layers
def _layer_index() -> dict[str, int]:
    """Top-level module of dpreg -> its layer (0 = top) in the import-linter layers contract."""
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (layers,) = [c["layers"] for c in conf["tool"]["importlinter"]["contracts"]
                 if c["type"] == "layers" and c.get("containers") == ["dpreg"]]
    return {name.strip(): i for i, layer in enumerate(layers)
            for name in layer.replace(":", "|").split("|")}


def _top(path: str) -> str:
    return path.partition(":")[0].split(".")[1]


def test_dynamic_loads_respect_the_layers():
    """A spec names its estimator by dotted path (loaded on demand: an import import-linter
    cannot see).  Estimators sit above the specs and below the dispatcher; ``auto``'s spec
    loads the selector, which sits between the API and the dispatcher."""
    idx = _layer_index()
    assert idx["_spec"] > idx["mechanisms"] and idx["methods"] > idx["linear_model"]
    for m in methods.specs(selector=False):
        if m.estimator is not None:
            assert idx["_dispatch"] < idx[_top(m.estimator)] < idx["methods"], m.name
        if m.core_function is not None:  # a core sits below the specs that describe it
            assert idx[_top(m.core_function)] > idx["methods"], m.name
    for m in methods.specs(selector=True):
        assert m.estimator is not None and idx["api"] < idx[_top(m.estimator)] < idx["_dispatch"]


def test_the_layer_check_sees_a_misplaced_estimator():
    idx = _layer_index()
    assert not idx[_top("dpreg.auto:fit_auto")] > idx["_dispatch"]  # what the check rejects
