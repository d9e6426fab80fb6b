"""Fuzzing the text a user types as method options and codebooks (issue 32, item 4).

* ``-o key=value`` (:func:`dpreg.cli.parse_options`): for every option of several methods, any
  value text is either refused as a usage error (exit 2) or parsed into a whitelisted value
  (a number, a boolean, None, a word, a flat list of numbers) that the library then accepts or
  refuses with a documented :class:`~dpreg.exceptions.DPRegError` -- never a TypeError,
  AttributeError, RecursionError or any other crash.  The same end to end through the command
  line with ``--debug`` (where the command's exception surfaces).
* codebooks (:func:`dpreg.codebook.load_codebook`): small random TOML documents (nested values,
  bracket soups, odd keys) load or raise ``InvalidInputError``; nothing else.
"""

from __future__ import annotations

import math
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer
from fuzzlib import COUNTS, FUZZ
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import dpreg
from dpreg import methods
from dpreg.cli import app, parse_options
from dpreg.exceptions import DPRegError, InvalidInputError

RUNNER = CliRunner()
METHODS = ["noisy-stats", "theil-sen-exp", "theil-sen-wide", "dp-gd", "adassp",
           "covariance-ols", "boosted-adassp"]
ODD_VALUES = ["private", "[]", "[[1]]", "{}", "[1, 2]", "[1,2,3,4,5]", "1e400", "-1e400",
              "1e-400", "nan", "inf", "-0", "0", "1.5", "-3", "2", "true", "false", "none",
              "null", "all", "auto", "wide", "١", "１", "1_0", "0x10", "", " ", "\"x\"",
              "[true]", "[null]", "[" * 50, "a" * 100, "add-remove", "gdp", "zcdp", "9" * 40,
              "[1e308, 1e308]", "[-1e308, 1e308]", "1e308", "[0.1, 0.9]"]
VALUES = st.one_of(st.sampled_from(ODD_VALUES), st.text(max_size=20),
                   st.floats(allow_nan=True, allow_infinity=True).map(repr),
                   st.integers(-10**20, 10**20).map(str))


def _option_names(method: str) -> list[str]:
    return sorted(methods.get(method).options) + ["ci_alpha", "bounds", "random_state",
                                                  "fit_intercept", "x_names", "epsilon"]


KEYS = {m: _option_names(m) for m in METHODS}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    g = np.random.default_rng(2)
    n = 60
    out = pd.DataFrame({"x": g.uniform(0, 1, n), "z": g.uniform(0, 1, n)})
    out["y"] = np.clip(0.3 + 0.4 * out.x + g.normal(0, 0.05, n), 0, 1)
    return out


def _parsed(item: str) -> dict | None:
    """The options of ``-o item`` (``None``: a usage error, as the command line gives)."""
    try:
        return parse_options([item])
    except (typer.Exit, typer.BadParameter):
        return None


@FUZZ
@given(st.sampled_from(METHODS), st.data(), VALUES)
def test_option_values_reach_the_library_only_as_whitelisted_values(frame, method, data, raw):
    COUNTS["options:library"] += 1
    key = data.draw(st.sampled_from(KEYS[method]))
    opts = _parsed(f"{key}={raw}")
    if opts is None:
        return
    for value in opts.values():  # the whitelist: nothing else is ever passed on
        assert value is None or isinstance(value, (bool, int, float, str, list))
        if isinstance(value, float):
            assert math.isfinite(value)
        if isinstance(value, list):
            assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    formula = "y ~ x" if methods.get(method).one_x_only else "y ~ x + z"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dpreg.regress(frame, formula, method=method, epsilon=1.0, delta=1e-6,
                          bounds={"x": (0, 1), "z": (0, 1), "y": (0, 1)}, random_state=3,
                          **opts)
    except DPRegError:
        pass  # a documented refusal (InvalidParameterError, UnknownNameError, ...)


@FUZZ
@given(st.sampled_from(METHODS), st.data(), VALUES)
def test_option_values_on_the_command_line(method, data, raw):
    COUNTS["options:cli"] += 1
    key = data.draw(st.sampled_from(KEYS[method]))
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "d.csv"
        g = np.random.default_rng(4)
        pd.DataFrame({"x": g.uniform(0, 1, 40), "z": g.uniform(0, 1, 40),
                      "y": g.uniform(0, 1, 40)}).to_csv(csv, index=False)
        xs = ["--x", "x"] if methods.get(method).one_x_only else ["--x", "x", "--x", "z"]
        args = ["fit", str(csv), "--y", "y", *xs, "-m", method, "-e", "1", "-d", "1e-6",
                "-b", "x=0:1", "-b", "y=0:1", "-b", "z=0:1", "--seed", "5",
                "-o", f"{key}={raw}"]
        res = RUNNER.invoke(app, ["--debug", *args])
        exc = res.exception
        if exc is not None and not isinstance(exc, SystemExit):
            assert isinstance(exc, DPRegError), f"crash: {type(exc).__name__}: {exc} ({args})"
        else:
            assert res.exit_code in (0, 1, 2), (res.exit_code, res.output)
        plain = RUNNER.invoke(app, args)
        assert plain.exit_code in (0, 1, 2) and "Traceback" not in plain.output, plain.output


# ------------------------------------------------------------------ codebooks
SCALARS = st.one_of(st.integers(-10**6, 10**6).map(str), st.sampled_from(
    ["0", "1.5", "-2e3", "true", "false", "inf", "nan", '"a"', "'b'", '""', "1979-05-27",
     '"""x"""', "'''[['''"]))
TOML_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda v: "[" + ", ".join(v) + "]"),
        st.lists(st.tuples(st.sampled_from(["a", "bounds", "type", "levels", "n", "x"]),
                           inner), max_size=3).map(
            lambda kv: "{" + ", ".join(f"{k} = {v}" for k, v in dict(kv).items()) + "}")),
    max_leaves=12)
KEYS_TOML = st.sampled_from(["bounds", "type", "levels", "description", "n", "by", "keys",
                             "extra", '"quoted key"', "a.b"])
TABLES = st.sampled_from(["[dataset]", "[columns.x]", "[columns.y]", "[groups]", "[other]",
                          "[columns]", "[[columns.x]]", ""])


@st.composite
def codebook_docs(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 4))):
        lines.append(draw(TABLES))
        for _ in range(draw(st.integers(0, 3))):
            lines.append(f"{draw(KEYS_TOML)} = {draw(TOML_VALUES)}")
    if draw(st.booleans()):  # a bracket soup, deep or not, possibly unbalanced
        depth = draw(st.integers(0, 2000))
        lines.append("x = " + draw(st.sampled_from(["[", "{a = "])) * depth
                     + draw(st.sampled_from(["", "1", "]" * depth, "}" * depth])))
    if draw(st.booleans()):
        lines.append(draw(st.text(max_size=30)))
    return "\n".join(lines) + "\n"


@FUZZ
@given(codebook_docs())
def test_codebook_documents_load_or_raise_invalid_input(doc):
    from dpreg.codebook import Codebook, load_codebook

    COUNTS["codebook:load"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cb.toml"
        path.write_text(doc, encoding="utf-8", errors="surrogatepass")
        try:
            cb = load_codebook(path)
        except InvalidInputError as exc:
            assert len(str(exc)) < 2000
            return
        assert isinstance(cb, Codebook)
