"""Spec files are parsed by whitelist: every table of every harness kind refuses a key its kind
does not read (a typo such as ``trails = 50`` must never silently run the defaults), and each
kind's declared keys (``Kind.tables``) are keys its code actually reads."""

import ast
import copy
import inspect
import json
import re
import tomllib
from importlib import resources

import pytest

from dpreg.bench import load_spec, parse_spec, spec_names
from dpreg.bench.kinds import KINDS, Kind, _base
from dpreg.exceptions import InvalidInputError, UnknownNameError

SENTINEL = "VALUE-NEVER-ECHOED-1729"


def _raw(name):
    text = resources.files("dpreg.bench").joinpath("specs", f"{name}.toml").read_text("utf-8")
    return tomllib.loads(text)


def _value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(type(v))


def _key(k):
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


def dumps(data):
    """TOML text of a spec dict (every table inline: enough for these tests)."""
    return "\n".join(f"{_key(k)} = {_value(v)}" for k, v in data.items()) + "\n"


def _misspelt(key, allowed):
    bad = key + key[-1]  # 'trials' -> 'trialss', 'n' -> 'nn': close enough for a did-you-mean
    assert bad not in allowed
    return bad


def _targets(data, kind):
    """(label, path, table) for the last table at each declared path present in ``data`` (the
    last element of an array of tables: a check of the first one only would be caught)."""
    for path in kind.tables:
        found = list(_base._tables_at(data, path))
        if found:
            label, _shape, table = found[-1]
            yield label, path, table


SHIPPED = spec_names()


def test_the_serialiser_round_trips_every_shipped_spec():
    for name in SHIPPED:
        for quick in (False, True):
            assert (parse_spec(dumps(_raw(name)), quick=quick).hash
                    == load_spec(name, quick=quick).hash)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_spec_loads(name):
    for quick in (False, True):
        spec = load_spec(name, quick=quick)
        KINDS[spec.kind]().cells(spec)


def test_every_kind_has_a_shipped_spec_and_declares_its_tables():
    kinds = {load_spec(n).kind for n in SHIPPED}
    assert kinds == set(KINDS)
    for kind in KINDS.values():
        assert kind.tables, kind.name
        assert "quick" in kind.top_level_keys() and "kind" in kind.top_level_keys()


def _refused(text, *fragments):
    with pytest.raises(UnknownNameError) as info:
        parse_spec(text, source="my-spec.toml")
    msg = str(info.value)
    assert isinstance(info.value, InvalidInputError) and isinstance(info.value, ValueError)
    for f in fragments:
        assert f in msg, (f, msg)
    assert SENTINEL not in msg  # keys are named, values never
    assert "known:" in msg
    return msg


@pytest.mark.parametrize("name", SHIPPED)
def test_one_misspelt_key_in_any_table_is_refused(name):
    """For every table of every shipped spec (top level, each declared table, and the same in
    [quick]): the spec with one misspelt key is refused, naming the table, the key, the close
    allowed key and the allowed keys."""
    raw = _raw(name)
    kind = KINDS[raw["kind"]]
    checked = 0
    # the top level: a misspelt scalar key (`trails`-style) or table (`evaluaton`)
    for key in ("seed", *[p.partition(".")[0] for p in kind.tables]):
        bad = _misspelt(key, kind.top_level_keys())
        data = {**copy.deepcopy(raw), bad: SENTINEL}
        _refused(dumps(data), "my-spec.toml: the top level", repr(bad),
                 f"did you mean {key!r}")
        checked += 1
    for label, path, table in _targets(raw, kind):
        allowed = kind.tables[path]
        key = next(iter(table))
        bad = _misspelt(key, allowed)
        table[bad] = SENTINEL
        msg = _refused(dumps(raw), f"my-spec.toml: {label} has the key {bad!r}",
                       f"did you mean {key!r}")
        assert all(repr(k) in msg for k in allowed)  # the allowed keys are listed
        del table[bad]
        checked += 1
    quick = raw.get("quick", {})
    for label, path, table in _targets(quick, kind):
        key = next(iter(table))
        bad = _misspelt(key, kind.tables[path])
        table[bad] = SENTINEL
        brackets = "[[" if label.startswith("[[") else "["
        qlabel = brackets + "quick." + label[len(brackets):]
        _refused(dumps(raw), f"my-spec.toml: {qlabel} has the key {bad!r}")
        # refused whichever run it is: a typo in [quick] fails a full run too
        with pytest.raises(UnknownNameError):
            parse_spec(dumps(raw), quick=True)
        del table[bad]
        checked += 1
    assert checked >= 2 + len({p.partition(".")[0] for p in kind.tables} & set(raw))
    parse_spec(dumps(raw))  # the spec itself (every key removed again) still loads


def test_the_reported_typos_are_refused_before_anything_runs():
    raw = _raw("alabi-stock")
    raw["evaluation"]["epsilon_grid"] = raw["evaluation"].pop("epsilons")
    _refused(dumps(raw), "[evaluation] has the key 'epsilon_grid'", "'epsilons'")
    raw = _raw("alabi-fig7")
    raw["evaluation"]["trails"] = raw["evaluation"].pop("trials")
    _refused(dumps(raw), "[evaluation] has the key 'trails'", "did you mean 'trials'")
    raw = _raw("alabi-fig7")
    raw["trails"] = 50
    _refused(dumps(raw), "the top level has the key 'trails'")


def test_a_quick_table_may_not_nest_quick_and_a_table_must_be_a_table():
    raw = _raw("bain-real")
    raw["quick"]["quick"] = {}
    _refused(dumps(raw), "[quick] has the key 'quick'")
    raw = _raw("bain-real")
    raw["real"] = 3
    with pytest.raises(InvalidInputError, match=r"\[real\] must be a table"):
        parse_spec(dumps(raw))


def test_a_kind_that_is_not_a_name_is_refused():
    raw = _raw("bain-real")
    raw["kind"] = ["sscp-real"]
    with pytest.raises(InvalidInputError, match="kind must be one of"):
        parse_spec(dumps(raw))


def test_trials_by_data_names_a_data_set():
    raw = _raw("amin-r2")
    raw["multi"]["trials_by_data"] = {"diamnods": 50}
    with pytest.raises(UnknownNameError, match="did you mean 'diamonds'"):
        parse_spec(dumps(raw))


def test_a_fixed_panel_value_must_be_a_parameter():
    raw = _raw("alabi-fig6")
    raw["panels"][0]["fixed"]["sigma_x"] = 0.1
    _refused(dumps(raw), f"[[panels]] {raw['panels'][0]['name']!r}.fixed has the key "
                         "'sigma_x'", "did you mean 'sigma_x2'")


# ------------------------------------------------ the declared keys are the keys the code reads
_READERS = {"require", "require_key"}


def _read_literals(source):
    """String literals in a read position: ``t["k"]``, ``t.get("k")``, ``"k" in t``,
    ``require(spec, t, "k", ...)``, ``for key in ("k", ...)``."""
    found = set()

    def strings(nodes):
        return {n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)}

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript):
            found |= strings([node.slice])
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in ("get", "pop") and node.args:
                found |= strings(node.args[:1])
            elif name in _READERS:
                found |= strings(node.args)
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            found |= strings([node.left])
        elif isinstance(node, ast.For) and isinstance(node.iter, (ast.Tuple, ast.List)):
            found |= strings(node.iter.elts)
    return found


def _unread(kind):
    """Declared keys (and table names) that the kind's module never reads."""
    read = _read_literals(inspect.getsource(inspect.getmodule(kind)))
    declared = set()
    for path, keys in kind.tables.items():
        declared |= set(path.split(".")) | set(keys)
    return sorted(declared - read)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_declared_key_is_read_by_the_kind(kind):
    assert _unread(KINDS[kind]) == []


def test_a_declared_key_nobody_reads_would_be_caught():
    """The check above can fail: a retired key left in a declaration (``steps``, now
    ``n_iter``) is reported."""
    simple = KINDS["simple-synthetic"]
    stale = type("Stale", (simple,), {
        "tables": {**simple.tables, "methods": (*simple.tables["methods"], "steps")}})
    stale.__module__ = simple.__module__
    assert _unread(stale) == ["steps"]
    assert issubclass(stale, Kind)
