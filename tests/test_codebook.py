"""Codebooks (issue 20 item 2): one TOML schema, validated strictly; used by regress,
fit_by_group, release_sscp and the CLI (--codebook); ``dpreg codebook init`` reads the header
line only; a declared public n is checked under replace-one without revealing the true n."""

from __future__ import annotations

import json
import math
import re
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpreg
from _cli import run_cli
from dpreg.codebook import Codebook, codebook_template, load_codebook, merge_bounds
from dpreg.exceptions import InvalidInputError

FAIR_TOML = """
[dataset]
n = 6366
description = "statsmodels fair (Redbook survey 1974)"

[columns.age]
bounds = [17.5, 42.0]

[columns.yrs_married]
type = "numeric"
bounds = [0.5, 23]

[columns.affairs]
bounds = [0, 60]

[columns.occupation]
type = "categorical"
levels = [1, 2, 3, 4, 5, 6]

[columns.children]
bounds = []
"""


@pytest.fixture(scope="module")
def fair():
    from dpreg.data import load_dataset

    return load_dataset("fair").frame


@pytest.fixture()
def fair_files(tmp_path, fair):
    csv = tmp_path / "fair.csv"
    fair.to_csv(csv, index=False)
    cb = tmp_path / "fair.toml"
    cb.write_text(FAIR_TOML, encoding="utf-8")
    return csv, cb


# ------------------------------------------------------------------------------ schema
def test_a_valid_codebook_parses_and_round_trips(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(FAIR_TOML + '\n[groups]\nby = "occupation"\nkeys = [1, 2]\n')
    cb = Codebook.load(path)
    assert cb.n == 6366 and cb.group_by == "occupation" and cb.group_keys == (1, 2)
    assert cb.bounds() == {"age": (17.5, 42.0), "yrs_married": (0.5, 23.0),
                           "affairs": (0.0, 60.0)}  # children: empty = not declared yet
    assert cb.levels() == {"occupation": (1, 2, 3, 4, 5, 6)}
    assert Codebook.from_dict(cb.to_dict(), source=str(path)) == cb
    assert load_codebook(cb) is cb and load_codebook(str(path)) == cb


@pytest.mark.parametrize("text,match", [
    ("[colums.age]\nbounds = [0, 1]", r"unknown key 'colums'; did you mean 'columns'\?"),
    ("[columns.age]\nbound = [0, 1]", r"unknown key 'bound' in \[columns.age\]; did you "
                                      r"mean 'bounds'\?"),
    ("[columns.age]\ntype = \"categorial\"\nlevels = [1]", r"did you mean 'categorical'\?"),
    ("[columns.age]\nbounds = [2, 1]", r"lo < hi"),
    ("[columns.age]\nbounds = [1, 1]", r"lo < hi"),
    ("[columns.age]\nbounds = [0, inf]", r"finite"),
    ("[columns.age]\nbounds = [0, nan]", r"finite"),
    ("[columns.age]\nbounds = [0]", r"lo < hi|\[lo, hi\]"),
    ("[columns.age]\nbounds = [0, \"9\"]", r"two numbers"),
    ("[columns.age]\nbounds = [true, 2]", r"two numbers"),
    ("[columns.g]\ntype = \"categorical\"\nlevels = [1, 1]", r"unique levels"),
    ("[columns.g]\ntype = \"categorical\"\nlevels = [1, \"a\"]", r"one kind"),
    ("[columns.g]\ntype = \"categorical\"\nlevels = []", r"non-empty list"),
    ("[columns.g]\ntype = \"categorical\"\nlevels = [\"it's\"]", r"quotes"),
    ("[columns.g]\ntype = \"categorical\"", r"needs levels"),
    ("[columns.g]\ntype = \"categorical\"\nlevels = [1]\nbounds = [0, 1]", r"not allowed for a "
                                                                          r"categorical"),
    ("[columns.g]\nlevels = [\"a\", \"b\"]", r"texts need type = \"categorical\""),
    ("[columns.g]\nlevels = [1, 1]", r"unique numbers"),
    ("[columns.g]\nbounds = [0, 1]\nlevels = [0, 2]", r"inside"),
    ("[dataset]\nn = 0", r"integer >= 1"),
    ("[dataset]\nn = 10.0", r"integer >= 1"),
    ("[dataset]\nn = true", r"integer >= 1"),
    ("[dataset]\nrows = 10", r"unknown key 'rows' in \[dataset\]"),
    ("[groups]\nkeys = [\"a\", \"a\"]", r"unique group keys"),
    ("[groups]\nby = 3", r"groups.by"),
    ("columns = 3", r"tables \[columns.NAME\]"),
    ("[columns.age\nbounds = [0, 1]", r"not valid TOML"),
    # declared public moments (issue 30 item 2: for plans)
    ("[columns.a]\nbounds = [0, 10]\nmean = 3", r"declares mean without sd"),
    ("[columns.a]\nbounds = [0, 10]\nsd = 3", r"declares sd without mean"),
    ("[columns.a]\nmean = 3\nsd = 1", r"no bounds"),
    ("[columns.a]\nbounds = [0, 10]\nmean = 11\nsd = 1", r"must lie in the bounds"),
    ("[columns.a]\nbounds = [0, 10]\nmean = 3\nsd = 5", r"must be <= 4.58258, the largest sd"),
    ("[columns.a]\nbounds = [0, 10]\nmean = 3\nsd = 0", r"sd' must be > 0"),
    ("[columns.a]\nbounds = [0, 10]\nmean = \"3\"\nsd = 1", r"finite number"),
    ("[columns.a]\nbounds = [0, 10]\nmean = 3\nsd = nan", r"finite number"),
    ("[columns.a]\nbounds = [0, 10]\nmean = 3\nsd = 1\ncorr = {b = 0.1}", r"name 'b', which "
                                                                          r"is not a numeric"),
    ("[columns.a]\nbounds = [0, 10]\nmean = 3\nsd = 1\ncorr = {a = 0.1}", r"names the column "
                                                                          r"itself"),
    ("[columns.a]\nbounds = [0, 10]\nmean = 3\nsd = 1\ncorr = 0.1", r"inline table"),
    ("[columns.a]\nbounds = [0, 10]\ncorr = {b = 0.1}", r"corr without mean and sd"),
    ("[columns.a]\nbounds = [0, 10]\nmean = 3\nsd = 1\ncorr = {b = -1.5}\n[columns.b]\n"
     "bounds = [0, 1]\nmean = 0.5\nsd = 0.1", r"\[-1, 1\]"),
    ("[columns.a]\nbounds = [0, 10]\nmean = 3\nsd = 1\ncorr = {b = 0.2}\n[columns.b]\n"
     "bounds = [0, 1]\nmean = 0.5\nsd = 0.1\ncorr = {a = 0.3}", r"declared twice"),
    ("[columns.g]\ntype = \"categorical\"\nlevels = [1, 2]\nmean = 1.5\nsd = 0.5",
     r"not allowed for a categorical"),
    ("[dataset]\nmoments_source = 3", r"dataset.moments_source"),
    ("[columns.a]\nbounds = [0, 10]\nmeans = 3", r"did you mean 'mean'"),
])
def test_invalid_codebooks_are_refused_naming_the_field(tmp_path, text, match):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInputError, match=match) as info:
        Codebook.load(path)
    assert str(path) in str(info.value)


def test_declared_moments_parse_round_trip_and_reach_the_plan(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text("""
[dataset]
moments_source = "1974 Redbook survey report, table 2 (published)"
[columns.rate_marriage]
bounds = [1, 5]
mean = 4.1
sd = 0.96
corr = {affairs = -0.18}
[columns.affairs]
bounds = [0, 60]
mean = 0.7
sd = 2.2
[columns.male]
bounds = [0, 1]
mean = 0.3
sd = 0.458257569495584
""", encoding="utf-8")
    cb = Codebook.load(path)
    m = cb.moments()
    assert m.mean == {"rate_marriage": 4.1, "affairs": 0.7, "male": 0.3}
    assert m.correlation("affairs", "rate_marriage") == -0.18 == m.correlation("rate_marriage",
                                                                               "affairs")
    assert m.correlation("male", "affairs") is None and m.correlation("male", "male") == 1.0
    assert "Redbook" in m.source
    # a 0/1 column may sit exactly on the largest sd √(p(1 − p))
    assert cb.columns["male"].sd == pytest.approx(math.sqrt(0.21))
    assert Codebook.from_dict(cb.to_dict(), source=str(path)) == cb
    p = dpreg.plan("noisy-stats", 2.0, n=6366, codebook=path, formula="affairs ~ rate_marriage")
    assert "Redbook" in p.design and p.coef_bias["rate_marriage"] is not None
    # the codebook template says how to declare them, and that they must be public
    assert "PUBLIC" in codebook_template(["a"]) and "mean = ..." in codebook_template(["a"])


def test_check_moments_validates_a_dict_like_a_codebook():
    from dpreg.codebook import DeclaredMoments, check_moments

    good = check_moments({"mean": {"x": 1.0}, "sd": {"x": 0.5}, "source": "census"},
                         {"x": (0.0, 2.0)})
    assert isinstance(good, DeclaredMoments) and good.as_dict()["source"] == "census"
    assert check_moments(good, {}) is good
    with pytest.raises(InvalidInputError, match="no public bounds"):
        check_moments({"mean": {"w": 1.0}, "sd": {"w": 0.5}}, {"x": (0.0, 2.0)})
    with pytest.raises(InvalidInputError, match="must be a dict"):
        check_moments([1, 2], {"x": (0.0, 2.0)})
    with pytest.raises(InvalidInputError, match="did you mean 'mean'"):
        check_moments({"means": {}}, {"x": (0.0, 2.0)})


def test_codebook_columns_must_be_columns_of_the_data(fair):
    cb = Codebook.from_dict({"columns": {"agee": {"bounds": [17, 42]}}})
    with pytest.raises(InvalidInputError, match=r"'agee'.*did you mean 'age'\?"):
        dpreg.regress(fair, "affairs ~ age", method="dp-gd", epsilon=1.0, codebook=cb,
                      bounds={"affairs": (0, 60), "age": (17, 42)})


def test_explicit_bounds_extend_the_codebook_and_win():
    cb = Codebook.from_dict({"columns": {"a": {"bounds": [0, 1]}, "b": {"bounds": [0, 2]}}})
    assert merge_bounds(cb, {"b": (5, 6), "c": (1, 3)}) == {"a": (0.0, 1.0), "b": (5, 6),
                                                            "c": (1, 3)}
    assert merge_bounds(cb, None) == {"a": (0.0, 1.0), "b": (0.0, 2.0)}
    assert merge_bounds(None, {"b": (5, 6)}) == {"b": (5, 6)}


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")
def test_regress_with_a_codebook_path(fair_files, fair):
    _, cb = fair_files
    r = dpreg.regress(fair, "affairs ~ C(occupation) + yrs_married * age + log(age)",
                      method="adassp", epsilon=np.inf, delta=1e-6, codebook=cb,
                      random_state=0, bounds={"age": (18, 40)})
    assert r.bounds["age"] == (18.0, 40.0)  # the explicit bound wins over the codebook's
    assert r.bounds["np.log(age)"] == (np.log(18.0), np.log(40.0))
    assert r.bounds["C(occupation)[T.6]"] == (0.0, 1.0)


# ------------------------------------------------------------------------------ public n
def test_declared_n_is_checked_under_replace_one_without_revealing_n(fair):
    wrong = Codebook.from_dict({"dataset": {"n": 6000}, "columns": {
        "age": {"bounds": [17.5, 42]}, "affairs": {"bounds": [0, 60]}}})
    led = dpreg.Ledger(dpreg.PureDP(5.0))
    with pytest.raises(InvalidInputError, match="does not match") as info:
        dpreg.regress(fair, "affairs ~ age", method="dp-gd", epsilon=1.0, codebook=wrong,
                      ledger=led)
    assert not re.search(r"\d{3}", str(info.value).replace("6000", ""))  # no n in it
    assert "6366" not in str(info.value)
    assert led.spent().epsilon == 0  # refused before anything was charged
    right = Codebook.from_dict({**wrong.to_dict(), "dataset": {"n": len(fair)}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpreg.exceptions.WeakSeedWarning)
        r = dpreg.regress(fair, "affairs ~ age", method="dp-gd", epsilon=1.0, codebook=right,
                          random_state=1)
    assert r.nobs == len(fair)


def test_declared_n_is_not_checked_under_add_remove(fair):
    wrong = Codebook.from_dict({"dataset": {"n": 6000}, "columns": {
        "age": {"bounds": [17.5, 42]}, "affairs": {"bounds": [0, 60]}}})
    with pytest.warns(UserWarning, match="neither checked nor used"):
        r = dpreg.regress(fair, "affairs ~ age", method="adassp", epsilon=1.0, delta=1e-6,
                          codebook=wrong)
    assert r.nobs is None  # n stays private


# ------------------------------------------------------------------------------ other entry points
def test_fit_by_group_takes_bounds_and_keys_from_the_codebook(fair):
    cb = Codebook.from_dict({"columns": {"age": {"bounds": [17.5, 42]},
                                         "affairs": {"bounds": [0, 60]}},
                             "groups": {"by": "occupation", "keys": [1, 2, 3, 4, 5, 6, 7]}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpreg.exceptions.WeakSeedWarning)
        table = dpreg.fit_by_group(fair, "occupation", "age", "affairs", method="noisy-stats",
                                   epsilon=1.0, codebook=cb, random_state=3)
    assert list(table["group"]) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    with pytest.raises(InvalidInputError, match=r"did you mean 'affairs'\?"):
        dpreg.fit_by_group(fair, "occupation", "age", "affairs", method="noisy-stats",
                           epsilon=1.0, codebook=cb, bounds={"afairs": (0, 60)})


def test_release_sscp_takes_bounds_from_the_codebook(fair):
    cb = Codebook.from_dict({"dataset": {"n": 1}, "columns": {
        "age": {"bounds": [17.5, 42]}, "affairs": {"bounds": [0, 60]}}})
    with pytest.warns(UserWarning, match="neither checked nor used"):  # n private here
        rel = dpreg.release_sscp(fair, columns=["age", "affairs"], epsilon=1.0, delta=1e-6,
                                 codebook=cb, random_state=2**100 + 1, neighbouring="add-remove")
    assert rel.bounds == [(17.5, 42.0), (0.0, 60.0)]
    with pytest.raises(InvalidInputError, match="does not match"):
        dpreg.release_sscp(fair, columns=["age", "affairs"], epsilon=1.0, delta=1e-6,
                           codebook=cb, neighbouring="replace-one")


# ------------------------------------------------------------------------------ template
SENTINELS = ("918273.645", "SENTINEL_VALUE_XYZ", "-77.123456")


def _csv_with_sentinels(tmp_path: Path) -> Path:
    path = tmp_path / "secret.csv"
    rows = ["income,region,\"odd name\",y", ",".join(SENTINELS) + ",1", "1,2,3,4"]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command in this process (tests/_cli.py: same exit code and streams)."""
    return run_cli(*args)


def test_codebook_init_writes_names_and_empty_bounds_only(tmp_path):
    csv = _csv_with_sentinels(tmp_path)
    with csv.open("ab") as fh:  # a data line that is not even UTF-8: only the header is read
        fh.write(b"\xff\xfe,\x80,\x81,\x82\n")
    res = _cli("codebook", "init", str(csv))
    assert res.returncode == 0, res.stderr
    text = res.stdout
    for sentinel in SENTINELS:
        assert sentinel not in text
    assert not re.search(r"bounds = \[[^\]]", text)  # every bounds list is empty
    out = tmp_path / "cb.toml"
    assert _cli("codebook", "init", str(csv), "--out", str(out)).returncode == 0
    cb = Codebook.load(out)
    assert list(cb.columns) == ["income", "region", "odd name", "y"]
    assert cb.bounds() == {} and cb.n is None
    assert codebook_template(["income", "region", "odd name", "y"]) == out.read_text()
    again = _cli("codebook", "init", str(csv), "--out", str(out))
    assert again.returncode == 1 and "already exists" in again.stderr


def test_cli_fit_with_a_codebook_on_real_data(fair_files):
    csv, cb = fair_files
    res = _cli("fit", str(csv), "--y", "affairs", "--x", "C(occupation)", "--x", "age",
               "--x", "yrs_married:age", "--x", "log(age)", "-m", "adassp", "-e", "1", "-d",
               "1e-6", "--codebook", str(cb), "-b", "age=18:40", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["bounds"]["age"] == [18.0, 40.0]  # -b wins over the codebook
    assert out["bounds"]["yrs_married:age"] == [0.5 * 18, 23.0 * 40]
    assert out["bounds"]["C(occupation)[T.2]"] == [0.0, 1.0]
    assert set(out["extra"]["derived_bounds"]) >= {"yrs_married:age", "np.log(age)"}
    typo = _cli("fit", str(csv), "--y", "affairs", "--x", "age", "-m", "dp-gd", "-e", "1",
                "--codebook", str(cb), "-b", "agee=18:40")
    assert typo.returncode == 2 and "did you mean 'age'?" in typo.stderr  # usage error
    wrong_n = Path(str(cb) + ".n.toml")
    wrong_n.write_text(FAIR_TOML.replace("n = 6366", "n = 6365"), encoding="utf-8")
    res = _cli("fit", str(csv), "--y", "affairs", "--x", "age", "-m", "dp-gd", "-e", "1",
               "--codebook", str(wrong_n))
    assert res.returncode == 1 and "does not match" in res.stderr
    assert "6366" not in res.stderr + res.stdout


def test_cli_release_cov_and_fit_groups_with_a_codebook(fair_files, tmp_path):
    csv, cb = fair_files
    text = FAIR_TOML.replace("[dataset]\nn = 6366\n", "[dataset]\n") + \
        '\n[groups]\nby = "occupation"\nkeys = [1, 2, 3, 4, 5, 6]\n'
    cb2 = tmp_path / "groups.toml"
    cb2.write_text(text, encoding="utf-8")
    res = _cli("fit-groups", str(csv), "--by", "occupation", "--y", "affairs", "--x", "age",
               "-m", "noisy-stats", "-e", "1", "--out", str(tmp_path / "g.csv"),
               "--codebook", str(cb2), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["groups"] == 6
    assert pd.read_csv(tmp_path / "g.csv")["group"].tolist() == [1, 2, 3, 4, 5, 6]
    res = _cli("release-cov", str(csv), "-c", "age,yrs_married,affairs", "-e", "1", "-d",
               "1e-6", "--out", str(tmp_path / "r.json"), "--codebook", str(cb))
    assert res.returncode == 0, res.stderr
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["bounds"] == {"age": [17.5, 42.0], "yrs_married": [0.5, 23.0],
                               "affairs": [0.0, 60.0]}


@pytest.mark.parametrize("keys", ["[9007199254740993.0]", "[1.0, 1e23]", "[0.10000000000000001]",
                                  "[1e309]", "[1e-400]"])
def test_codebook_group_keys_must_be_exact_numbers(tmp_path, keys):
    """A float key the TOML reader turns into a different double (or inf) is refused, as in a
    --groups-file: it would release a group the codebook never listed."""
    path = tmp_path / "cb.toml"
    path.write_text(f'[groups]\nby = "k"\nkeys = {keys}\n', encoding="utf-8")
    with pytest.raises(InvalidInputError, match="groups.keys") as err:
        Codebook.load(path)
    assert str(path) in str(err.value)


def test_codebook_group_keys_that_round_trip_are_kept(tmp_path):
    path = tmp_path / "cb.toml"
    path.write_text('[groups]\nby = "k"\nkeys = [0.1, 2.5, 9007199254740992.0, 9007199254740993]\n',
                    encoding="utf-8")
    assert Codebook.load(path).group_keys == (0.1, 2.5, 2.0 ** 53, 2 ** 53 + 1)
