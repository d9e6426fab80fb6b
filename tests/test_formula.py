"""Formulas are parsed by whitelist, never evaluated (issue 16 item 1).

An injection corpus goes through every entry point that takes a formula or a formula term --
``dpreg.regress``, ``dpreg fit --x/--y`` (typer's CliRunner), ``SSCPRelease.regress`` and
``dpreg regress`` -- and must give an InvalidInputError (CLI: exit 1, no traceback) with no side
effect (a sentinel file is never created) and nothing charged to a ledger.  Ordinary formulas
must build exactly the model matrix formulaic builds for them.
"""

from __future__ import annotations

import json
import re
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from formulaic import Formula as Formulaic
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import dpreg
from dpreg import Ledger, PureDP
from dpreg import _formula as F
from dpreg.cli import app
from dpreg.covariance import release_sscp
from dpreg.exceptions import InvalidInputError

RUNNER = CliRunner()
N = 120
WIDE = [f"w{i}" for i in range(12)]

# ------------------------------------------------------------------------------ the corpus
# Right-hand-side fragments; SENTINEL is replaced by a path that must never come to exist.
PAYLOADS = [
    "I(__import__('os').system('touch SENTINEL') + x)",
    "I(open('SENTINEL', 'w').write(str(list(y))) * 0 + x)",
    "__import__('os').system('touch SENTINEL')",
    "I(__import__('subprocess').call(['touch', 'SENTINEL']))",
    "open('SENTINEL', 'w')",
    "I(eval(\"open('SENTINEL', 'w')\"))",
    "I(exec(\"open('SENTINEL', 'w')\"))",
    "eval('x')",
    "I(compile('1', 'f', 'eval'))",
    "I(getattr(__builtins__, 'open')('SENTINEL', 'w'))",
    "I(x.__class__.__mro__[-1].__subclasses__())",
    "I(().__class__.__base__.__subclasses__())",
    "I(x.__dict__)",
    "I(x.values)",
    "x.mean()",
    "x.to_csv('SENTINEL')",
    "I(x.to_csv('SENTINEL') or x)",
    "np.save('SENTINEL', y)",
    "I(np.save('SENTINEL', y) or x)",
    "np.savetxt('SENTINEL', y)",
    "np.lib.npyio.savetxt('SENTINEL', y)",
    "np.log.__self__",
    "I((lambda: open('SENTINEL', 'w'))())",
    "lambda: 1",
    "I(x[0])",
    "x[0]",
    "I([open('SENTINEL', 'w') for _ in [1]])",
    "I({open('SENTINEL', 'w')})",
    "{open('SENTINEL', 'w')}",
    "{x + 1}",
    "I(f\"{open('SENTINEL', 'w')}\")",
    "I(b'x')",
    "I((s := open('SENTINEL', 'w')))",
    "I(x if open('SENTINEL', 'w') else x)",
    "\uff45val('open(\"SENTINEL\", \"w\")')",  # fullwidth e: NFKC-equal to eval
    "__\uff49mport__('os').system('touch SENTINEL')",  # fullwidth i
    "I(\u0435val('1'))",  # Cyrillic e
    "C(x, contr.treatment)",
    "C(g, contr.sum)",
    "C(g, levels=open('SENTINEL', 'w'))",
    "C(g, levels=[open('SENTINEL', 'w')])",
    "C(g, levels=['a'] + [__import__('os')])",
    "C(g, levels=['a\\' + open(\"SENTINEL\", \"w\") + \\'b'])",
    "Q('x')",
    "center(x)",
    "scale(x)",
    "poly(x, 2)",
    "bs(x, df=3)",
    "log(x, out=x)",
    "I(x, open('SENTINEL', 'w'))",
    "I(globals())",
    "I(vars())",
    "I(breakpoint())",
    "I(__builtins__)",
    "np.__dict__",
    "I(10 ** 10 ** 10 + x)",
    "I(x ** 9 ** 9 ** 9)",
    "x | z",
    "x %in% z",
    ".",
    "x; import os",
    "nothere",
    "I(" * 300 + "x" + ")" * 300,
    "(" * 1000 + "x" + ")" * 1000,
    "I(" + "-" * 5000 + "x)",
    "x + " * 3000 + "x",
    "I(" + " + ".join(["x"] * 500) + ")",
    "*".join(WIDE),
]
assert len(PAYLOADS) >= 40


def _payload(p: str, sentinel: Path) -> str:
    return p.replace("SENTINEL", str(sentinel))


def _frame() -> pd.DataFrame:
    g = np.random.default_rng(0)
    df = pd.DataFrame({"x": g.uniform(0, 1, N), "z": g.uniform(0, 1, N)})
    for w in WIDE:
        df[w] = g.uniform(0, 1, N)
    df["g"] = pd.Categorical(g.choice(["a", "b"], N), categories=["a", "b"])
    df["y"] = np.clip(0.2 + 0.5 * df.x + g.normal(0, 0.05, N), 0, 1)
    return df


BOUNDS = {c: (0.0, 1.0) for c in ["x", "z", "y", *WIDE]}


@pytest.fixture(scope="module")
def frame():
    return _frame()


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("formula") / "data.csv"
    _frame().to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    rel = release_sscp(_frame(), columns=["x", "z", *WIDE, "y"], bounds=BOUNDS, epsilon=1.0,
                       delta=1e-6, random_state=0)
    path = tmp_path_factory.mktemp("formula") / "release.json"
    rel.save(path)
    return rel, path


@pytest.fixture
def sentinel(tmp_path):
    path = tmp_path / "SENTINEL_FILE"
    yield path
    assert not path.exists(), "a formula payload ran code"


def _pure_ledger(path: Path) -> Ledger:
    led = Ledger(PureDP(10.0), path)
    led.close()
    return led


def _events(path: Path) -> int:
    with Ledger(None, path) as led:
        return len(led.events())


# ------------------------------------------------------------------------------ entry points
@pytest.mark.parametrize("payload", PAYLOADS)
def test_payload_regress(frame, payload, sentinel):
    led = Ledger(PureDP(10.0))
    t = time.perf_counter()
    with pytest.raises(InvalidInputError, match="formula"):
        dpreg.regress(frame, "y ~ x + " + _payload(payload, sentinel), method="noisy-stats",
                      epsilon=1.0, bounds=BOUNDS, ledger=led)
    assert time.perf_counter() - t < 5.0
    assert led.events() == []


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payload_cli_fit(csv, payload, sentinel, tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    _pure_ledger(ledger)
    args = ["fit", str(csv), "--y", "y", "--x", _payload(payload, sentinel), "-m", "noisy-stats",
            "-e", "1", "-b", "x=0:1", "-b", "y=0:1", "--ledger", str(ledger)]
    res = RUNNER.invoke(app, ["--debug", *args])
    assert isinstance(res.exception, InvalidInputError), (res.exception, res.output)
    plain = RUNNER.invoke(app, args)
    # a misspelt column (UnknownNameError) or a malformed term (InvalidParameterError: the
    # user's own text) is a usage error, exit 2; anything else (data) exit 1
    from dpreg.exceptions import InvalidParameterError

    usage = isinstance(res.exception, InvalidParameterError)
    assert plain.exit_code == (2 if usage else 1) and "Traceback" not in plain.output
    assert _events(ledger) == 0


@pytest.mark.parametrize("payload", PAYLOADS[:12])
def test_payload_cli_fit_response(csv, payload, sentinel):
    args = ["fit", str(csv), "--y", _payload(payload, sentinel), "--x", "x", "-m", "noisy-stats",
            "-e", "1", "-b", "x=0:1", "-b", "y=0:1"]
    res = RUNNER.invoke(app, ["--debug", *args])
    assert isinstance(res.exception, InvalidInputError), (res.exception, res.output)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payload_sscp_regress(release, payload, sentinel):
    rel, _ = release
    with pytest.raises(InvalidInputError, match="formula"):
        rel.regress("y ~ x + " + _payload(payload, sentinel), se="plugin")


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payload_cli_regress(release, payload, sentinel):
    _, path = release
    args = ["regress", str(path), "y ~ x + " + _payload(payload, sentinel)]
    res = RUNNER.invoke(app, ["--debug", *args])
    assert isinstance(res.exception, InvalidInputError), (res.exception, res.output)
    plain = RUNNER.invoke(app, args)
    from dpreg.exceptions import InvalidParameterError

    usage = isinstance(res.exception, InvalidParameterError)  # the user's formula text
    assert plain.exit_code == (2 if usage else 1) and "Traceback" not in plain.output


WHOLE = [  # whole formulas (left side or structure is the payload)
    "__import__('os').system('touch SENTINEL') ~ x",
    "I(open('SENTINEL', 'w')) ~ x",
    "y ~ x ~ z",
    "y ~ x | z",
    "y ~ ",
    " ~ x",
    "y + x ~ z",
    "y ~ x\x00",
    "y ~ x + 2",
    "y ~ x ** 2.5",
    "y ~ -x",
    "y ~ 1.0 + x",
]


@pytest.mark.parametrize("formula", WHOLE)
def test_whole_formula_payloads(frame, release, formula, sentinel):
    text = _payload(formula, sentinel)
    led = Ledger(PureDP(10.0))
    with pytest.raises(InvalidInputError):
        dpreg.regress(frame, text, method="noisy-stats", epsilon=1.0, bounds=BOUNDS, ledger=led)
    with pytest.raises(InvalidInputError):
        release[0].regress(text, se="plugin")
    assert led.events() == []


def test_non_string_and_oversized_formulas(frame, release):
    for bad in (None, 3, b"y ~ x", ["y ~ x"], "y ~ " + "x + " * 5000 + "x"):
        with pytest.raises(InvalidInputError):
            dpreg.regress(frame, bad, method="noisy-stats", epsilon=1.0, bounds=BOUNDS)
        with pytest.raises(InvalidInputError):
            release[0].regress(bad, se="plugin")


def test_errors_name_the_offending_token(frame):
    cases = {
        "y ~ x + open('f')": "'open' at position 8",
        "y ~ x.mean()": "'.' at position 5 (attribute access",
        "y ~ x[0]": "subscripts",
        "y ~ C(g, contr.sum)": "levels=",
        "y ~ \uff45val(x)": "NFKC",
        "y ~ center(x)": "mean",
        "y ~ nothere": "'nothere' at position 4: not a column",
        "y ~ {x}": "'{'",
        "y ~ I(f'{x}')": "string prefix 'f'",
        "y ~ log(x, out=x)": "','",
        "y ~ I(" + "log(" * 40 + "x" + ")" * 41: "nesting deeper than 32",
    }
    for formula, needle in cases.items():
        with pytest.raises(InvalidInputError) as info:
            dpreg.regress(frame, formula, method="noisy-stats", epsilon=1.0, bounds=BOUNDS)
        assert needle in str(info.value), (formula, str(info.value))


# ------------------------------------------------------------------------------ names as data
PAYLOAD_NAME = "I(__import__('os').system('touch SENTINEL'))"


def test_a_column_named_like_a_payload_is_a_column(tmp_path, sentinel):
    name = _payload(PAYLOAD_NAME, sentinel)
    df = _frame()[["x", "y"]].rename(columns={"x": name})
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    res = RUNNER.invoke(app, ["--debug", "fit", str(path), "--y", "y", "--x", name, "-m",
                              "noisy-stats", "-e", "1", "-b", f"{name}=0:1", "-b", "y=0:1",
                              "--seed", "1", "--json"])
    assert res.exit_code == 0, res.output
    assert name in json.loads(res.stdout)["coef"]
    r = dpreg.regress(df, f"y ~ `{name}`", method="noisy-stats", epsilon=1.0,
                      bounds={name: (0, 1), "y": (0, 1)}, random_state=0)
    assert list(r.params.index) == ["intercept", name]
    rel = release_sscp(df, columns=[name, "y"], bounds={name: (0, 1), "y": (0, 1)},
                       epsilon=1.0, delta=1e-6, random_state=0)
    assert list(rel.regress(f"y ~ `{name}`", se="plugin").params.index) == ["intercept", name]


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")  # eps = inf: exact reference
def test_columns_that_shadow_names_stay_columns():
    g = np.random.default_rng(1)
    df = pd.DataFrame({c: g.uniform(1, 2, 50) for c in ["np", "C", "I", "open", "y", "a b"]})
    r = dpreg.regress(df, "y ~ np + C + I(open * 2) + np.log(`a b`)", method="adassp",
                      epsilon=np.inf, delta=1e-6, random_state=0,
                      bounds={"np": (1, 2), "C": (1, 2), "I(open * 2)": (2, 4), "y": (1, 2),
                              "np.log(`a b`)": (0, 1)})
    X = np.column_stack([np.ones(50), df["np"], df["C"], df["open"] * 2, np.log(df["a b"])])
    beta = np.linalg.lstsq(X, df["y"], rcond=None)[0]
    np.testing.assert_allclose(r.params.to_numpy(), beta, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------------------ what still works
ORDINARY = [
    "y ~ x + z",
    "y ~ x * z",
    "y ~ (x + z) ** 2",
    "y ~ x / z",
    "y ~ x:z - 1",
    "y ~ 0 + x + z",
    "y ~ -1 + x",
    "y ~ x - 1 + 1",
    "y ~ x + z - z",
    "y ~ np.log(x) + I((z - 0.5) * 2)",
    "y ~ log1p(x) + exp(z) + sqrt(x) + abs(z - 0.5) + power(x, 3)",
    "y ~ I(x ** 2) + I(-x) + I(x ** -1)",
    "y ~ x + g",
    "y ~ x:g",
    "y ~ C(g, levels=['a', 'b']) + x",
    "np.log(y + 1) ~ x",
]


def _formulaic_spelling(formula: str) -> str:
    """The same formula in formulaic's own namespace (log -> np.log ...), for the reference."""
    return re.sub(r"(?<![\w.])(" + "|".join(F.TRANSFORMS) + r")\(", r"np.\1(", formula)


@pytest.mark.parametrize("formula", ORDINARY)
def test_ordinary_formulas_build_formulaics_matrix(frame, formula):
    parsed = F.parse_formula(formula, list(frame.columns))
    assert F.parse_formula(parsed.text(), list(frame.columns)) == parsed  # canonical round trip
    mm = F.model_matrices(parsed, frame)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        ref = Formulaic(_formulaic_spelling(formula)).get_model_matrix(frame, na_action="raise")
    assert list(mm.rhs.columns) == [str(c) for c in ref.rhs.columns]
    assert list(mm.lhs.columns) == [str(c) for c in ref.lhs.columns]
    np.testing.assert_array_equal(mm.rhs.to_numpy(dtype=float), ref.rhs.to_numpy(dtype=float))
    np.testing.assert_array_equal(mm.lhs.to_numpy(dtype=float), ref.lhs.to_numpy(dtype=float))


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")  # eps = inf: exact reference
def test_generated_terms_take_bounds_by_their_name(frame):
    r = dpreg.regress(frame, "y ~ log(x) + I((z - 0.5) * 2)", method="adassp", epsilon=np.inf,
                      delta=1e-6, random_state=0,
                      bounds={"y": (0, 1), "np.log(x)": (-10, 0), "I((z - 0.5) * 2)": (-1, 1)})
    assert list(r.params.index) == ["intercept", "np.log(x)", "I((z - 0.5) * 2)"]
    with pytest.raises(InvalidInputError, match=r"bounds for regressor 'np.log\(x\)'"):
        dpreg.regress(frame, "y ~ log(x)", method="adassp", epsilon=1.0, delta=1e-6,
                      bounds={"y": (0, 1)})


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")  # eps = inf: exact reference
def test_dummies_get_unit_bounds_and_interactions_with_numbers_derived_ones(frame):
    r = dpreg.regress(frame, "y ~ x + C(g, levels=['a', 'b'])", method="adassp",
                      epsilon=np.inf, delta=1e-6, bounds=BOUNDS, random_state=0)
    assert "C(g, levels=['a', 'b'])[T.b]" in r.params.index
    big = frame.assign(x=frame.x * 100)
    # g comes first: its dummies times x lie in [0, 1] x [0, 100] (issue 20: derived, stated)
    r = dpreg.regress(big, "y ~ g:x", method="adassp", epsilon=np.inf, delta=1e-6,
                      bounds={"y": (0, 1), "x": (0, 100)}, random_state=0)
    assert r.bounds["g[a]:x"] == (0.0, 100.0) and r.bounds["g[b]:x"] == (0.0, 100.0)
    assert r.extra["derived_bounds"]["g[a]:x"] == "from x in [0, 100]"
    assert "g[a]:x in [0, 100] (derived)" in str(r.summary())


def test_c_without_levels_needs_a_categorical(frame):
    with pytest.raises(InvalidInputError, match="levels off the"):
        dpreg.regress(frame.assign(h=np.arange(N) % 3), "y ~ C(h)", method="adassp",
                      epsilon=1.0, delta=1e-6, bounds=BOUNDS)


def test_values_outside_declared_levels_are_not_echoed(frame):
    df = frame.assign(h=pd.Series(np.arange(N) % 3 + 1000))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mm = F.model_matrices(F.parse_formula("y ~ C(h, levels=[1000, 1001])", list(df.columns)),
                              df)
    assert not any("1002" in str(w.message) for w in caught)
    assert list(mm.rhs.columns) == ["Intercept", "C(h, levels=[1000, 1001])[T.1001]"]


def test_nan_from_a_transform_is_a_clear_error(frame):
    # declared bounds of z outside log's domain: refused from the public bounds (issue 20)
    with pytest.raises(InvalidInputError, match=r"cannot derive bounds for regressor "
                       r"'np.log\(z - 0.5\)'.*log needs a range above 0"):
        dpreg.regress(frame, "y ~ log(z - 0.5)", method="noisy-stats", epsilon=1.0,
                      bounds=BOUNDS)
    # no raw bounds, only the term's: NaN rows are refused naming the term, not the rows
    with pytest.raises(InvalidInputError, match=r"'np.log\(z - 0.5\)' has missing"):
        dpreg.regress(frame, "y ~ log(z - 0.5)", method="noisy-stats", epsilon=1.0,
                      bounds={"y": (0, 1), "np.log(z - 0.5)": (-5, 0)})


def test_cli_builds_the_formula_from_names_and_terms(csv):
    res = RUNNER.invoke(app, ["fit", str(csv), "--y", "y", "--x", "x", "--x", "log(z)", "-m",
                              "adassp", "-d", "1e-6", "-e", "1", "-b", "x=0:1", "-b",
                              "np.log(z)=-10:0", "-b", "y=0:1", "--seed", "1", "--json",
                              "--no-intercept"])
    assert res.exit_code == 0, res.output
    assert set(json.loads(res.stdout)["coef"]) == {"x", "np.log(z)"}


# ------------------------------------------------------------------------------ SSCP linear terms
@pytest.mark.parametrize("formula,expected", [
    ("y ~ x + z", ("y", ["x", "z"], True)),
    ("y ~ x + z - 1", ("y", ["x", "z"], False)),
    ("y ~ 0 + x", ("y", ["x"], False)),
    ("y ~ -1 + x", ("y", ["x"], False)),
    ("y ~ x - 1 + 1", ("y", ["x"], True)),
    ("y ~ x - 0", ("y", ["x"], True)),
    ("y ~ x + z - z", ("y", ["x"], True)),
    ("y ~ x + x", ("y", ["x"], True)),
    ("y ~ (x + z)", ("y", ["x", "z"], True)),
    ("y ~ 1", ("y", [], True)),
])
def test_linear_terms(formula, expected):
    assert F.linear_terms(F.parse_formula(formula, ["x", "z", "y"], released=True)) == expected


@pytest.mark.parametrize("formula", ["y ~ x:z", "y ~ x*z", "y ~ log(x)", "y ~ I(x * 2)",
                                     "y ~ C(x, levels=[1])", "y ~ (x + z)**2", "log(y) ~ x"])
def test_linear_terms_refuses_the_rest(formula):
    with pytest.raises(InvalidInputError):
        F.linear_terms(F.parse_formula(formula, ["x", "z", "y"], released=True))


def test_sscp_intercept_semantics_match_formulaic(release):
    rel, _ = release
    for a, b in [("y ~ 0 + x", "y ~ x - 1"), ("y ~ -1 + x + z", "y ~ x + z - 1"),
                 ("y ~ x - 1 + 1", "y ~ x")]:
        pd.testing.assert_series_equal(rel.regress(a, se="plugin").params,
                                       rel.regress(b, se="plugin").params)


# ------------------------------------------------------------------------------ property
_ALLOWED_IDENTIFIERS = re.compile(r"_dpreg_c\d+_|np|I|C|levels|" + "|".join(F.TRANSFORMS))


_PIECES = list("xyz~+-*/:()[],.=`'\"0129 eIClognp_{}|") + ["log(", "I(", "C(", "levels=[",
                                                           "np.", "**", " ~ ", "x", "y"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_anything_is_parsed_or_refused_and_only_whitelisted_text_reaches_formulaic(text):
    """Random formula-like text: an InvalidInputError or a formula whose rendering for formulaic
    holds only internal column identifiers, whitelisted names, numbers, level strings and
    operators -- and that reads back to the same tree."""
    cols = ["x", "y", "z"]
    try:
        parsed = F.parse_formula(text, cols)
    except InvalidInputError:
        return
    internal = parsed.internal()
    no_strings = re.sub(r"'[^']*'|\"[^\"]*\"", "''", internal)
    for name in re.findall(r"[A-Za-z_]\w*", no_strings):
        assert _ALLOWED_IDENTIFIERS.fullmatch(name), (text, internal, name)
    assert not re.search(r"[^\w\s~+\-*/:().,\[\]=']", no_strings), (text, internal)
    assert F.parse_formula(parsed.text(), cols) == parsed


def _arith():
    leaf = st.sampled_from(["x", "z", "`a b`", "2", "0.5", "3e-1"])

    def extend(child):
        return st.one_of(
            st.tuples(child, st.sampled_from(["+", "-", "*", "/"]), child).map(" ".join),
            child.map(lambda e: f"({e})"),
            child.map(lambda e: f"-{e}"),
            child.map(lambda e: f"({e} + x) ** 2"),
            st.tuples(st.sampled_from(["log", "np.log", "log1p", "exp", "sqrt", "abs"]),
                      child).map(lambda t: f"{t[0]}({t[1]})"),
            child.map(lambda e: f"power({e}, 2)"),
        )

    return st.recursive(leaf, extend, max_leaves=6)


_TERMS = st.one_of(st.sampled_from(["x", "z", "`a b`", "g", "C(g, levels=['a', 'b'])",
                                    "C(h, levels=[1, 2])"]),
                   _arith().map(lambda e: f"I({e})"),
                   _arith().map(lambda e: f"log({e})"))
_FORMULAS = st.tuples(
    st.lists(_TERMS, min_size=1, max_size=4),
    st.lists(st.sampled_from([" + ", " - ", ":", " * ", " / "]), min_size=3, max_size=3),
    st.sampled_from(["", " - 1", " + 0"]),
).map(lambda t: "y ~ " + "".join(a + b for a, b in zip(t[0], t[1][:len(t[0]) - 1] + [""]))
       + t[2])


@settings(max_examples=150, deadline=None)
@given(_FORMULAS)
def test_grammar_formulas_are_accepted_rendered_faithfully_and_match_formulaic(formula):
    """Formulas generated from the documented grammar parse; what formulaic is given holds
    only whitelisted text; the model matrix equals formulaic's for the user's own spelling."""
    df = _frame().rename(columns={"w0": "a b"}).assign(h=np.arange(N) % 2 + 1)
    parsed = F.parse_formula(formula, [str(c) for c in df.columns])
    no_strings = re.sub(r"'[^']*'", "''", parsed.internal())
    for name in re.findall(r"[A-Za-z_]\w*", no_strings):
        assert _ALLOWED_IDENTIFIERS.fullmatch(name), (formula, name)
    assert F.parse_formula(parsed.text(), list(df.columns)) == parsed
    try:
        mm = F.model_matrices(parsed, df)
    except InvalidInputError:  # e.g. log of a negative value: refused, as formulaic refuses
        mm = None
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            ref = Formulaic(_formulaic_spelling(formula)).get_model_matrix(df, na_action="raise")
        except Exception:
            ref = None
    assert (mm is None) == (ref is None), formula
    if mm is not None and ref is not None:
        assert list(mm.rhs.columns) == [str(c) for c in ref.rhs.columns]
        np.testing.assert_array_equal(mm.rhs.to_numpy(dtype=float), ref.rhs.to_numpy(dtype=float))
