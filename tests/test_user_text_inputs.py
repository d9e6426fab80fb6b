"""Numbers and options read from user text (issue 32, items 2 and 4).

* Only ASCII digits are numbers: Python's ``float()``/``Decimal()``/``\\d`` accept Arabic-Indic
  (``١``), full-width (``１``) and other Unicode digits, so ``--epsilon ١`` used to run at
  ε = 1.  One whitelist (:data:`dpreg._validation.ASCII_NUMBER`) reads every number typed by a
  user: ``--epsilon``/``--delta``, ``--bounds LO:HI``, ``-o key=value``, ``--ci`` and the other
  numeric options, and number literals in formulas.
* ``-o key=value``: a value is a number, ``true``/``false``, ``none``, a word (an enum such
  as ``wide``) or a flat list of numbers; a key that the command sets itself (``bounds``,
  ``epsilon``, ``random_state``, ...) is refused naming the command's own option.  These
  used to end in raw TypeErrors.
* A codebook nested deeper than :data:`dpreg.codebook.CODEBOOK_MAX_DEPTH` is refused naming
  the file and the limit (it used to end in a raw RecursionError inside tomllib).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import dpreg
from dpreg.cli import app
from dpreg.exceptions import DPRegError, InvalidInputError, InvalidParameterError

RUNNER = CliRunner()
UNICODE_DIGITS = ["١", "１", "٠٫١", "1١", "۱", "१", "𝟏", "١e1", "0.١"]


@pytest.fixture(scope="module")
def csv(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("usertext")
    g = np.random.default_rng(11)
    n = 200
    frame = pd.DataFrame({"x": g.uniform(0, 1, n), "z": g.uniform(0, 1, n),
                          "grp": np.arange(n) % 2})
    frame["y"] = np.clip(0.2 + 0.5 * frame.x + g.normal(0, 0.05, n), 0, 1)
    path = d / "data.csv"
    frame.to_csv(path, index=False)
    return path


def _fit(csv: Path, *extra: str, method: str = "noisy-stats", eps: str = "1",
         bounds: tuple[str, ...] = ("x=0:1", "y=0:1")) -> list[str]:
    args = ["fit", str(csv), "--y", "y", "--x", "x", "-m", method, "-e", eps]
    for b in bounds:
        args += ["-b", b]
    return [*args, *extra]


def _usage(res, option: str) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert "Traceback" not in res.output
    text = " ".join(res.stderr.split())
    assert option in text, text
    return text


# ------------------------------------------------------------------ ASCII digits only
def test_the_whitelist_is_ascii():
    from dpreg._validation import ASCII_NUMBER, parse_number_text

    for ok in ("1", "-0.5", "+.5", "1e-6", "2E+3", "10."):
        assert ASCII_NUMBER.fullmatch(ok)
        assert float(parse_number_text(ok, "x")) == float(ok)
    for bad in [*UNICODE_DIGITS, "1_0", "0x10", "nan", "inf", "", " ", "1e", "--1", "1 2"]:
        assert not ASCII_NUMBER.fullmatch(bad)
    with pytest.raises(InvalidParameterError, match="only ASCII digits"):
        parse_number_text("١", "--epsilon")
    with pytest.raises(InvalidParameterError, match="--epsilon"):
        parse_number_text("١", "--epsilon")


@pytest.mark.parametrize("raw", UNICODE_DIGITS)
def test_epsilon_and_delta_refuse_unicode_digits(csv, raw):
    text = _usage(RUNNER.invoke(app, _fit(csv, eps=raw)), "--epsilon")
    assert "ASCII" in text
    text = _usage(RUNNER.invoke(app, _fit(csv, "-d", raw.replace("1", "١"),
                                          method="adassp")), "--delta")
    assert "ASCII" in text


@pytest.mark.parametrize("raw", ["x=٠:١", "x=0:１", "x=0:1_0", "x=٠٫٥:1"])
def test_bounds_refuse_unicode_digits(csv, raw):
    text = _usage(RUNNER.invoke(app, _fit(csv, bounds=(raw, "y=0:1"))), "--bounds")
    assert "ASCII" in text


@pytest.mark.parametrize("option", ["--ci"])
@pytest.mark.parametrize("raw", ["٠٫١", "０.１", "0.١"])
def test_numeric_cli_options_refuse_unicode_digits(csv, option, raw):
    text = _usage(RUNNER.invoke(app, _fit(csv, option, raw)), option)
    assert "ASCII" in text


@pytest.mark.parametrize("raw", ["١٢", "１", "1_0"])
def test_integer_cli_options_refuse_unicode_digits(csv, raw):
    _usage(RUNNER.invoke(app, _fit(csv, "--seed", raw)), "--seed")
    _usage(RUNNER.invoke(app, ["plan", "--y", "y", "--x", "x", "-m", "noisy-stats", "--n", raw,
                               "-b", "x=0:1", "-b", "y=0:1", "-e", "1"]), "--n")


@pytest.mark.parametrize("raw", ["theta=٠٫١", "theta=١", "pairs=１", "theta=0.1_0"])
def test_option_values_refuse_unicode_digits(csv, raw):
    text = _usage(RUNNER.invoke(app, _fit(csv, "-o", raw, method="theil-sen-wide")), "-o")
    assert "ASCII" in text and raw.split("=")[0] in text


@pytest.mark.parametrize("formula_x", ["I(x * ٢)", "I(x ** ２)", "log(x + ١)"])
def test_formula_numbers_are_ascii(csv, formula_x):
    from dpreg._formula import parse_formula

    with pytest.raises(InvalidParameterError, match="ASCII"):
        parse_formula(f"y ~ {formula_x}", ["x", "y"])
    res = RUNNER.invoke(app, ["fit", str(csv), "--y", "y", "--x", formula_x, "-m", "adassp",
                              "-e", "1", "-d", "1e-6", "-b", "x=1:2", "-b", "y=0:1"])
    _usage(res, "ASCII")
    # a column name may still contain non-ASCII digits (names are not numbers)
    assert parse_formula("y ~ x١", ["x١", "y"])


def test_codebook_numbers_are_toml_numbers(tmp_path):
    from dpreg.codebook import load_codebook

    path = tmp_path / "cb.toml"
    path.write_text("[columns.x]\nbounds = [٠, ١]\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="not valid TOML"):
        load_codebook(path)
    path.write_text('[columns.x]\nbounds = ["0", "1"]\n', encoding="utf-8")
    with pytest.raises(InvalidInputError, match="two numbers"):
        load_codebook(path)


# ------------------------------------------------------------------ -o key=value
def test_parse_options_values():
    from dpreg.cli import parse_options

    got = parse_options(["theta=0.02", "pairs=10", "se=plugin", "inference=true",
                         "output=false", "slope_range=[-3, 3.5]", "dof=none", "tau=1e-3",
                         "ci_method=auto", "schedule=constant-1"])
    assert got == {"theta": 0.02, "pairs": 10, "se": "plugin", "inference": True,
                   "output": False, "slope_range": [-3, 3.5], "dof": None, "tau": 1e-3,
                   "ci_method": "auto", "schedule": "constant-1"}
    assert isinstance(got["pairs"], int) and isinstance(got["theta"], float)


@pytest.mark.parametrize("raw", ["theta={}", "theta=[[1]]", 'theta="x"', "theta=[1, [2]]",
                                 "theta=1e400", "theta=nan", "theta=Infinity", "theta=-inf",
                                 "theta=a b", "theta=$(rm)", "theta=[" + "1," * 100 + "1]",
                                 "theta=" + "a" * 300, "theta={\"a\": 1}", "theta=[true]",
                                 "theta=1e-400"])
def test_option_values_outside_the_whitelist_are_usage_errors(csv, raw):
    text = _usage(RUNNER.invoke(app, _fit(csv, "-o", raw, method="theil-sen-wide")), "-o theta")
    assert "theta" in text


@pytest.mark.parametrize("key,flag", [("bounds", "--bounds"), ("epsilon", "--epsilon"),
                                      ("delta", "--delta"), ("random_state", "--seed"),
                                      ("ledger", "--ledger"), ("codebook", "--codebook"),
                                      ("method", "--method"), ("fit_intercept",
                                                               "--no-intercept"),
                                      ("x_bounds", "--bounds"), ("y_name", "--y"),
                                      ("x_names", "--x")])
@pytest.mark.parametrize("method", ["noisy-stats", "theil-sen-exp", "adassp", "dp-gd"])
def test_option_keys_the_command_sets_are_usage_errors(csv, key, flag, method):
    for value in ("private", "1", "[1, 2]", "true"):
        res = RUNNER.invoke(app, _fit(csv, "-o", f"{key}={value}", "-d", "1e-6",
                                      method=method))
        text = _usage(res, f"-o {key}")
        assert flag in text, text


def test_fit_groups_and_plan_option_keys(csv, tmp_path):
    res = RUNNER.invoke(app, ["fit-groups", str(csv), "--by", "grp", "--y", "y", "--x", "x",
                              "-m", "noisy-stats", "-e", "1", "-b", "x=0:1", "-b", "y=0:1",
                              "--keys-from-data", "--out", str(tmp_path / "g.csv"),
                              "-o", "groups=private"])
    assert "--groups-file" in _usage(res, "-o groups")
    res = RUNNER.invoke(app, ["plan", "--y", "y", "--x", "x", "-m", "noisy-stats", "--n", "50",
                              "-b", "x=0:1", "-b", "y=0:1", "-e", "1", "-o", "n_sim=5"])
    assert "--n-sim" in _usage(res, "-o n_sim")


@pytest.mark.parametrize("key", ["fit_intercept", "x_bounds", "y_bounds", "x_names", "y_name"])
def test_library_regress_refuses_option_names_it_sets(key):
    frame = pd.DataFrame({"x": [0.1, 0.5, 0.9] * 10, "y": [0.2, 0.4, 0.8] * 10})
    with pytest.raises(InvalidParameterError, match=key):
        dpreg.regress(frame, "y ~ x", method="noisy-stats", epsilon=1.0,
                      bounds={"x": (0, 1), "y": (0, 1)}, **{key: True})


@pytest.mark.parametrize("raw", ["n_iter=1.5", "n_iter=1e400", "n_iter=true", "n_iter=[1]",
                                 "n_iter=wide"])
def test_integer_options_reject_non_integers(csv, raw):
    res = RUNNER.invoke(app, _fit(csv, "-o", raw, method="dp-gd"))
    _usage(res, "n_iter")


# ------------------------------------------------------------------ codebook nesting
@pytest.mark.parametrize("doc", [
    "[columns.x]\nbounds = " + "[" * 1000 + "]" * 1000 + "\n",
    "[columns.x]\nbounds = [0, 1]\ndescription = " + "{a = " * 1000 + "1" + "}" * 1000 + "\n",
    "[dataset]\nn = 5\n[columns]\nx = " + "{b = " * 600 + "[]" + "}" * 600 + "\n",
    "[columns.x]\nbounds = " + "[" * 5000 + "\n",  # not even closed
])
def test_deeply_nested_codebook_is_refused_naming_the_limit(tmp_path, doc):
    from dpreg.codebook import CODEBOOK_MAX_DEPTH, load_codebook

    path = tmp_path / "deep.toml"
    path.write_text(doc, encoding="utf-8")
    with pytest.raises(InvalidInputError) as info:
        load_codebook(path)
    msg = str(info.value)
    assert str(path) in msg and str(CODEBOOK_MAX_DEPTH) in msg and "nest" in msg
    assert len(msg) < 400


def test_nesting_in_strings_and_comments_is_not_counted(tmp_path):
    from dpreg.codebook import load_codebook

    path = tmp_path / "ok.toml"
    deep = "[" * 2000
    path.write_text(f'# {deep}\n[dataset]\ndescription = "{deep}"\n[columns.x]\n'
                    f"bounds = [0, 1] # {deep}\ndescription = '''{deep}\n{deep}'''\n",
                    encoding="utf-8")
    cb = load_codebook(path)
    assert cb.bounds() == {"x": (0.0, 1.0)}


def test_codebook_dotted_keys_and_long_values_keep_messages_short(tmp_path):
    from dpreg.codebook import load_codebook

    path = tmp_path / "dotted.toml"
    path.write_text("[columns.x]\nbounds = [0, 1]\n" + "description." + ".".join(["a"] * 3000)
                    + " = 1\n", encoding="utf-8")
    with pytest.raises(InvalidInputError) as info:
        load_codebook(path)
    assert len(str(info.value)) < 400


def test_deep_codebook_through_the_cli(csv, tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text("[columns.x]\nbounds = " + "[" * 1000 + "]" * 1000 + "\n", encoding="utf-8")
    res = RUNNER.invoke(app, _fit(csv, "--codebook", str(path), bounds=()))
    assert res.exit_code in (1, 2) and "Traceback" not in res.output
    assert "nest" in res.stderr and str(path.name) in res.stderr


def test_deeply_nested_formula_and_I_are_refused():
    from dpreg._formula import parse_formula

    for f in ["y ~ " + "(" * 5000 + "x" + ")" * 5000, "y ~ " + "(" * 3000 + "x" + ")" * 3000,
              "y ~ I(" + "(" * 3000 + "x" + ")" * 3000 + ")",
              "y ~ " + "I(" * 3000 + "x" + ")" * 3000, "y ~ " + "log(" * 3000 + "x" + ")" * 3000,
              "y ~ I(" + "-" * 8000 + "x)"]:
        with pytest.raises(DPRegError):
            parse_formula(f, ["x", "y"])


def test_option_errors_are_library_errors_in_debug_mode(csv):
    res = RUNNER.invoke(app, ["--debug", *_fit(csv, "-o", "bounds=private")])
    assert res.exit_code == 2 or isinstance(res.exception, DPRegError), res.exception
    assert not isinstance(res.exception, TypeError)


def test_json_output_unaffected(csv):
    res = RUNNER.invoke(app, _fit(csv, "-o", "inference=false", "--json"))
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["private"] is True
