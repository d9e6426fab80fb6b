"""Group keys (issue 15 item 1, issue 16 item 6): keys that are one group under the canonical-key
rule are refused before any release, a row never feeds two output rows, the key set must be
declared (or explicitly read from the data, which the statement then says is not protected),
and bad values in rows of undeclared groups never change the output.

The property test draws mixed key lists (ints, floats incl. -0.0 and 1.0000000000000002,
bools, NumPy scalars, str with whitespace, None/NaN/NA/NaT, Decimal, Fraction) against key
columns of every supported dtype and checks, for the local and the reference backend, that
either the call is refused (with an error naming ``groups``, before any release) exactly when
the rule says the list is invalid, or every output row is fitted on exactly the rows the rule
assigns to its key -- so the row sets of different output rows are disjoint.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpreg.api
from dpreg import InvalidInputError, fit_by_group
from dpreg.grouped import group_seed_sequence, parse_key_list
from dpreg.grouped._keys import KeyProblem, canonical_key, column_kind, row_codes

BOUNDS = {"x": (0.0, 1.0), "y": (0.0, 1.0)}


def frame(keys, seed=0):
    g = np.random.default_rng(seed)
    n = len(keys)
    return pd.DataFrame({"k": keys, "x": g.uniform(0, 1, n), "y": g.uniform(0, 1, n)})


def base_table():
    """Integer keys 1 (50 rows) and 2 (40 rows)."""
    return frame(np.repeat([1, 2], [50, 40]))


# ------------------------------------------------------------------ the reported clashes
CLASHES = [
    ([1, 1.0], "same key"),
    ([1, True], "mixes kinds"),
    ([1, np.int64(1)], "same key"),
    ([1, np.float64(1.0)], "same key"),
    ([np.int64(1), np.float64(1.0)], "same key"),
    ([1, np.bool_(True)], "mixes kinds"),
    (["1", 1], "mixes kinds"),
    ([1, 2, 1], "same key"),
    ([0.0, -0.0], "same key"),
    ([1, Decimal("1.00")], "same key"),
    ([1, Fraction(2, 2)], "same key"),
    ([1, None], "missing"),
    ([1, float("nan")], "missing"),
    ([1, np.nan], "missing"),
    ([1, pd.NA], "missing"),
    ([1, pd.NaT], "missing"),
    ([1, Decimal("NaN")], "missing"),
    (["1"], "holds number values"),
    ([True], "holds number values"),
    ([1, Decimal("0.1")], "not a usable key"),
    ([1, (1, 2)], "not a usable key"),
]


@pytest.mark.parametrize("backend", ["local", "reference"])
@pytest.mark.parametrize("method,kw", [("noisy-stats", {}), ("adassp", {"delta": 1e-6}),
                                       ("noisy-stats", {"inference": True}),
                                       ("theil-sen-exp", {"ci_alpha": 0.2})])
@pytest.mark.parametrize("groups,why", CLASHES)
def test_keys_that_are_one_group_are_refused_before_any_release(monkeypatch, groups, why,
                                                                  backend, method, kw):
    calls = []
    monkeypatch.setattr(dpreg.api, "fit_arrays", lambda *a, **k: calls.append(1))
    import dpreg.grouped.local as local

    monkeypatch.setattr(local, "fit_local", lambda *a, **k: calls.append(1))
    with pytest.raises(InvalidInputError, match="groups") as err:
        fit_by_group(base_table(), "k", "x", "y", method=method, epsilon=1.0, bounds=BOUNDS,
                     groups=groups, backend=backend, random_state=0, **kw)
    assert why in str(err.value)
    assert not calls  # refused before anything was released


def test_the_error_names_only_the_users_keys():
    df = base_table()
    df["x"] = 0.123456789  # a private value that must not appear
    with pytest.raises(InvalidInputError) as err:
        fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                     groups=[7, 7.0], random_state=0)
    msg = str(err.value)
    assert "entries 0 (7) and 1 (7.0)" in msg and "0.1234" not in msg and "50" not in msg


def test_same_key_spelled_differently_is_one_group_with_one_stream():
    df = base_table()
    kw = dict(method="noisy-stats", epsilon=1.0, bounds=BOUNDS, random_state=3)
    a = fit_by_group(df, "k", "x", "y", groups=[1, 2], **kw)
    for spelled in ([1.0, 2.0], [np.int64(1), np.float32(2)], [Decimal("1"), Fraction(4, 2)]):
        b = fit_by_group(df, "k", "x", "y", groups=spelled, **kw)
        pd.testing.assert_frame_equal(a, b)
    assert list(a["group"]) == [1, 2] and list(a["n"]) == [50, 40]
    root = np.random.SeedSequence(5)
    states = {tuple(group_seed_sequence(root, k).generate_state(2))
              for k in (3, 3.0, np.int64(3), np.float64(3.0), Decimal(3))}
    assert len(states) == 1
    assert tuple(group_seed_sequence(root, True).generate_state(2)) != tuple(
        group_seed_sequence(root, 1).generate_state(2))


def test_float_key_columns_follow_the_rule():
    keys = np.array([0.0, -0.0, 1.0, 1.0000000000000002, 2.5, np.nan, 2.0 ** 53])
    df = frame(np.repeat(keys, 3))
    out = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                       groups=[0, 1, 1.0000000000000002, 2.5, 2 ** 53 + 1, 2 ** 53],
                       random_state=0).set_index("group")
    # -0.0 is 0; 1.0000000000000002 is its own key; 2**53 + 1 is not the float 2**53; NaN rows
    # belong to no group
    assert out["n"].to_dict() == {0: 6, 1: 3, 1.0000000000000002: 3, 2.5: 3, 2 ** 53 + 1: 0,
                                  2 ** 53: 3}


def test_string_columns_match_exactly_and_refuse_numbers():
    df = frame(["a", "a", " a", " a", "1", "1"])
    out = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                       groups=["a", " a", "1", "b"], random_state=0).set_index("group")
    assert out["n"].to_dict() == {"a": 2, " a": 2, "1": 2, "b": 0}
    with pytest.raises(InvalidInputError, match="holds str values"):
        fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                     groups=[1])


def test_object_column_keeps_kinds_apart():
    """pandas' own grouping merges 1, 1.0 and True in an object column; the rule does not merge
    True with 1 (and only rows of the declared kind can match)."""
    df = frame(pd.Series([1, 1.0, True, True, "1", "1", np.int64(1), None], dtype=object))
    nums = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                        groups=[1], random_state=0)
    assert list(nums["n"]) == [3]
    bools = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                         groups=[True], random_state=0)
    assert list(bools["n"]) == [2]
    text = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                        groups=["1"], random_state=0)
    assert list(text["n"]) == [2]


# ------------------------------------------------------------------ the property test
KEY_POOL = [0, 1, 2, -1, 0.0, -0.0, 1.0, 1.5, 1.0000000000000002, float("nan"), np.nan,
            np.int64(1), np.int32(2), np.uint8(1), np.float64(1.0), np.float32(1.5),
            np.float32(0.1), True, False, np.bool_(True), "1", "a", " a", "a ", "1.0", "",
            None, pd.NA, pd.NaT, Decimal("1"), Decimal("0.1"), Decimal("1.5"),
            Fraction(3, 2), 2 ** 53, 2 ** 53 + 1, float(2 ** 53)]
COLUMNS = {
    "int64": (lambda v: pd.Series(v, dtype="int64"), st.integers(-1, 2)),
    "uint8": (lambda v: pd.Series(v, dtype="uint8"), st.integers(0, 2)),
    "Int64": (lambda v: pd.Series(v, dtype="Int64"), st.one_of(st.integers(-1, 2), st.none())),
    "float64": (lambda v: pd.Series(v, dtype="float64"),
                st.sampled_from([0.0, -0.0, 1.0, 1.5, 1.0000000000000002, 2.0, np.nan,
                                 float(2 ** 53)])),
    "float32": (lambda v: pd.Series(v, dtype="float32"),
                st.sampled_from([0.0, 1.0, 1.5, np.float32(0.1), np.nan])),
    "bool": (lambda v: pd.Series(v, dtype="bool"), st.booleans()),
    "str": (lambda v: pd.Series(v, dtype="str"),
            st.one_of(st.sampled_from(["1", "a", " a", "a ", "1.0", ""]), st.none())),
    "category": (lambda v: pd.Series(pd.Categorical(v, categories=["1", "a", " a", "b"])),
                 st.one_of(st.sampled_from(["1", "a", " a"]), st.none())),
    "object": (lambda v: pd.Series(v, dtype=object), st.sampled_from(KEY_POOL)),
}


def oracle_identity(v):
    try:
        return canonical_key(v)
    except KeyProblem:
        return None


def oracle_valid(groups, col_kind):
    """Is the declared list valid under the rule (independent restatement)?"""
    ids = [oracle_identity(k) for k in groups]
    if any(i is None for i in ids):
        return False
    kinds = {i[0] for i in ids}
    if len(kinds) > 1 or (kinds and col_kind != "any" and kinds != {col_kind}):
        return False
    return len(set(ids)) == len(ids)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow],
          deadline=None)
@given(data=st.data(), col=st.sampled_from(sorted(COLUMNS)),
       backend=st.sampled_from(["local", "reference"]))
def test_rows_of_different_output_rows_are_disjoint(data, col, backend):
    make, values = COLUMNS[col]
    raw = data.draw(st.lists(values, min_size=0, max_size=14), label="rows")
    groups = data.draw(st.lists(st.sampled_from(KEY_POOL), min_size=0, max_size=5),
                       label="groups")
    column = make(raw)
    n = len(column)
    df = pd.DataFrame({"k": column, "x": np.arange(n, dtype=float) / max(n, 1),
                       "y": np.linspace(0, 1, n)})
    kind = column_kind(column.dtype)
    seen = []
    real = dpreg.api.fit_arrays

    def spy(X, y, **kw):  # records which rows each release is fitted on (x = row index / n)
        seen.append(frozenset(np.rint(np.ravel(X) * max(n, 1)).astype(int).tolist()))
        return real(X, y, **kw)

    valid = oracle_valid(groups, kind)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dpreg.api, "fit_arrays", spy)
        try:
            out = fit_by_group(df, "k", "x", "y", method="dp-intercept", epsilon=1.0,
                               bounds=BOUNDS, groups=groups, backend=backend, random_state=0)
        except InvalidInputError as exc:
            assert not valid, (groups, col, str(exc))
            assert "groups" in str(exc) and not seen
            return
    assert valid, (groups, col)
    row_ids = [oracle_identity(v) for v in column.astype(object)]
    expected = []
    for key in groups:
        ident = canonical_key(key)
        expected.append(frozenset(i for i, r in enumerate(row_ids)
                                  if r == ident and (kind == "any" or r[0] == kind)))
    assert list(out["n"]) == [len(s) for s in expected]
    for a in range(len(expected)):
        for b in range(a + 1, len(expected)):
            assert not expected[a] & expected[b]
    if backend == "reference":
        fitted = [s for s in expected if len(s) >= 2]  # dp-intercept per group needs 2 rows
        assert sorted(map(sorted, seen)) == sorted(map(sorted, fitted))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), col=st.sampled_from(sorted(COLUMNS)))
def test_vectorised_row_codes_are_the_scalar_rule(data, col):
    make, values = COLUMNS[col]
    column = make(data.draw(st.lists(values, max_size=20)))
    kind = column_kind(column.dtype)
    pool = [k for k in KEY_POOL if oracle_identity(k) is not None
            and (kind == "any" or oracle_identity(k)[0] == kind)]
    if not pool:
        return
    first = data.draw(st.sampled_from(pool))
    want = oracle_identity(first)[0]
    same = [k for k in pool if oracle_identity(k)[0] == want]
    keys = list({oracle_identity(k): oracle_identity(k)[1]
                 for k in data.draw(st.lists(st.sampled_from(same), max_size=5)) + [first]
                 }.values())
    codes = row_codes(column, keys, want)
    for i, v in enumerate(column.astype(object)):
        ident = oracle_identity(v)
        exp = next((j for j, k in enumerate(keys) if canonical_key(k) == ident), -1)
        assert codes[i] == exp, (col, v, keys, codes[i])


# ------------------------------------------------------------------ declared vs from-data
def test_groups_are_required():
    with pytest.raises(InvalidInputError, match="groups is required.*from-data"):
        fit_by_group(base_table(), "k", "x", "y", method="noisy-stats", epsilon=1,
                     bounds=BOUNDS)


@pytest.mark.parametrize("backend", ["local", "reference"])
def test_keys_from_data_say_the_key_set_is_not_protected(backend):
    df = base_table()
    out = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                       groups="from-data", random_state=0, backend=backend)
    assert list(out["group"]) == [1, 2]
    assert "NOT protected" in out.attrs["privacy"] and "from-data" in out.attrs["privacy"]
    assert out["privacy"].str.contains("NOT protected").all()
    declared = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                            groups=[1, 2], random_state=0, backend=backend)
    assert "NOT protected" not in declared.attrs["privacy"]
    assert "not revealed" in declared.attrs["privacy"]
    # from-data merges spellings of one key in an object column (one group, not two)
    mixed = frame(pd.Series([1, 1.0, np.int64(1), 2, 2.0], dtype=object))
    out = fit_by_group(mixed, "k", "x", "y", method="dp-intercept", epsilon=1, bounds=BOUNDS,
                       groups="from-data", random_state=0, backend=backend)
    assert list(out["group"]) == [1, 2] and list(out["n"]) == [3, 2]


@pytest.mark.parametrize("backend", ["local", "reference"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, "abc", None])
def test_bad_values_in_undeclared_groups_do_not_change_the_output(backend, bad):
    """A NaN/inf/text value (or a missing key) in a row that is in no declared group is never
    read: the table for the declared groups is identical to the one without that row."""
    g = np.random.default_rng(0)
    keys = np.repeat(["a", "b", "c"], [30, 25, 5])
    clean = pd.DataFrame({"k": keys, "x": g.uniform(0, 1, 60).astype(object),
                          "y": g.uniform(0, 1, 60)})
    dirty = clean.copy()
    dirty.loc[57, "x"] = bad           # group c is not declared
    dirty.loc[len(dirty)] = [None, 0.5, 0.5]   # a row with a missing key
    kw = dict(method="noisy-stats", epsilon=1.0, bounds=BOUNDS, groups=["a", "b"],
              random_state=4, backend=backend)
    pd.testing.assert_frame_equal(fit_by_group(dirty, "k", "x", "y", **kw),
                                  fit_by_group(clean, "k", "x", "y", **kw))


@pytest.mark.parametrize("backend", ["local", "reference"])
@pytest.mark.parametrize("bad,kind", [(np.nan, "missing or non-finite"),
                                      (np.inf, "missing or non-finite"),
                                      ("abc", "non-numeric")])
def test_bad_values_in_declared_groups_are_named_errors(backend, bad, kind):
    g = np.random.default_rng(1)
    df = pd.DataFrame({"k": np.repeat(["a", "b"], [30, 25]), "x": g.uniform(0, 1, 55),
                       "y": g.uniform(0, 1, 55).astype(object)})
    df.loc[3, "y"] = bad
    calls = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dpreg.api, "fit_arrays", lambda *a, **k: calls.append(1))
        with pytest.raises(InvalidInputError, match=f"column 'y'.*{kind}") as err:
            fit_by_group(df, "k", "x", "y", method="theil-sen-exp", epsilon=1, bounds=BOUNDS,
                         groups=["a", "b"], random_state=0, backend=backend)
    msg = str(err.value)
    assert "abc" not in msg and "'a'" not in msg and not calls


# ------------------------------------------------------------------ groups file / CLI
def test_parse_key_list_reads_the_column_kind():
    assert parse_key_list([" 3", "17 ", "", "-2", "1.5", "1e3"], pd.Series([1, 2])) == \
        [3, 17, -2, 1.5, 1000.0]
    assert parse_key_list(["true", "False"], pd.Series([True])) == [True, False]
    assert parse_key_list([" a ", "b"], pd.Series(["x"], dtype="str")) == ["a", "b"]
    for bad in ("inf", "nan", "1_000", "0x10", "one"):
        with pytest.raises(InvalidInputError, match="line 1"):
            parse_key_list([bad], pd.Series([1, 2]))


def _cli(*args):
    """In process (many invocations; tests/test_cli.py drives the real subprocess)."""
    from typer.testing import CliRunner

    from dpreg.cli import app

    res = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    return res.exit_code, " ".join(res.output.split())  # rich may wrap lines


def test_cli_groups_file_duplicates_and_declared_keys(tmp_path):
    df = base_table()
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    common = ["fit-groups", str(data), "--by", "k", "--y", "y", "--x", "x", "-m", "noisy-stats",
              "-e", "1", "-b", "x=0:1", "-b", "y=0:1", "--seed", "1", "--out",
              str(tmp_path / "o.csv")]
    keys = tmp_path / "keys.txt"
    for lines in (["1", "1.0"], ["1", "01"], ["1", " 1 "], ["2", "2e0"]):
        keys.write_text("\n".join(lines) + "\n")
        code, out = _cli(*common, "--groups-file", str(keys))
        assert code == 1 and "duplicate keys" in out, (lines, out)
    keys.write_text("a\n")
    code, out = _cli(*common, "--groups-file", str(keys))
    assert code == 1 and "not a number on line 1" in out
    code, out = _cli(*common)  # no declared keys
    assert code == 1 and "--groups-file" in out and "--keys-from-data" in out
    code, out = _cli(*common, "--groups-file", str(keys), "--keys-from-data")
    assert code == 2 and "not both" in out  # conflicting flags: usage error
    code, out = _cli(*common, "--keys-from-data", "--json")
    assert code == 0, out
    assert "NOT protected" in out
    assert list(pd.read_csv(tmp_path / "o.csv")["group"]) == [1, 2]
    txt = tmp_path / "txt.csv"
    frame(["a", "a", "b", "b"]).to_csv(txt, index=False)
    keys.write_text("a\n a\n")
    code, out = _cli("fit-groups", str(txt), *common[2:], "--groups-file", str(keys))
    assert code == 1 and "duplicate keys" in out


def test_canonical_key_examples():
    assert canonical_key(np.float32(0.1)) == ("number", float(np.float32(0.1)))
    assert canonical_key(-0.0) == ("number", 0) and canonical_key(1e300)[1] == int(1e300)
    assert canonical_key(np.inf) == ("number", math.inf)
    assert canonical_key(np.str_(" a")) == ("str", " a")
    for bad in (None, np.nan, pd.NA, pd.NaT, np.datetime64("NaT"), Decimal("0.1"), b"a",
                (1,), 1j):
        with pytest.raises(KeyProblem):
            canonical_key(bad)


@pytest.mark.parametrize("compiled", [True, False])
def test_group_order_is_the_stable_argsort(compiled):
    from dpreg.grouped._common import group_order

    g = np.random.default_rng(4)
    for n, k in ((0, 3), (1, 1), (50, 4), (5000, 300)):
        codes = g.integers(-1, k, n)
        counts = np.bincount(codes + 1, minlength=k + 1)[1:]
        starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        kept = np.flatnonzero(codes >= 0)
        want = kept[np.argsort(codes[kept], kind="stable")]
        assert np.array_equal(group_order(codes, starts, compiled=compiled), want)


def test_fused_partition_equals_the_general_path():
    """partition_frame's one-pass numba scatter (plain numeric columns) gives the rows, order
    and checks of the general path (group_order + declared_values)."""
    from dpreg.grouped._common import (
        _compiled_scatter,
        declared_values,
        group_order,
        make_spec,
        partition_frame,
    )
    from dpreg.grouped._keys import row_codes

    if _compiled_scatter() is None:
        pytest.skip("numba not installed: partition_frame takes the general path")
    g = np.random.default_rng(9)
    n = 4000
    df = pd.DataFrame({"k": g.integers(-3, 60, n), "x": g.uniform(0, 1, n),
                       "y": g.integers(0, 5, n).astype(np.int32)})
    keys = list(range(0, 50, 2))
    df.loc[df["k"] == 1, "x"] = np.nan  # undeclared group: ignored
    spec = make_spec(df.columns, None, "k", "x", "y", method="noisy-stats", epsilon=1.0,
                     bounds={"x": (0, 1), "y": (0, 5)}, delta=None, groups=keys,
                     random_state=0, options={}, key_kind="number")
    part = partition_frame(df, spec)
    codes = row_codes(df["k"], spec.keys, spec.key_kind)
    rows = group_order(codes, part.starts)
    assert np.array_equal(part.x, declared_values(df["x"], rows, "x"))
    assert np.array_equal(part.y, declared_values(df["y"], rows, "y"))
    for col in ("x", "y"):
        bad = df.copy()
        bad[col] = bad[col].astype(float)
        bad.loc[bad.index[bad["k"] == 4][0], col] = np.inf  # a declared group
        with pytest.raises(InvalidInputError, match=f"column '{col}' has a missing or non-finite"):
            partition_frame(bad, spec)


# ------------------------------------------------------------------ key texts that round-trip
#: number texts whose double is a different number: read as it, they would release a group the
#: file never listed (9007199254740993.0 -> 2**53) or an inf key (1e309)
NOT_EXACT = ["9007199254740993.0", "1e309", "-1e309", "1e23", "0.10000000000000001",
             "1e-400", "2.5e-324", "9007199254740993e0"]


@pytest.mark.parametrize("text", NOT_EXACT)
def test_groups_file_numbers_that_do_not_round_trip_are_refused(text):
    with pytest.raises(InvalidInputError, match="line 2") as err:
        parse_key_list(["1", text, "3"], pd.Series([1.0, 2.0]))
    msg = str(err.value)
    assert "exactly" in msg
    assert "9007199254740992" not in msg  # what it would have become is no key of the file


def test_groups_file_numbers_that_round_trip_are_read():
    got = parse_key_list(["0.1", "1.50", "1e3", "-0.0", "9007199254740992.0", "1e22",
                          "9007199254740993", "-7"], pd.Series([1.0]))
    assert got == [0.1, 1.5, 1000.0, 0.0, 2.0 ** 53, 1e22, 2 ** 53 + 1, -7]
    assert isinstance(got[6], int)  # an integer text is an exact int, never a double


@pytest.mark.parametrize("dtype", ["float64", "int64", "Int64", "object"])
def test_integer_keys_beyond_2_53_are_matched_exactly(dtype):
    """Python int keys are exact: 2**53 and 2**53 + 1 are two keys; a float64 column holds no
    2**53 + 1, so that key gets no row (its group is empty), and the row 2**53 feeds only the
    key 2**53 -- two listed keys are never merged, no unlisted group is released."""
    big = 2 ** 53
    vals = [big, big, big + 1, 7] if dtype != "float64" else [float(big), float(big), 7.0,
                                                              7.0]
    col = pd.Series(vals, dtype=dtype if dtype != "object" else object)
    keys = [big, big + 1, 7]
    codes = row_codes(col, keys, "number")
    if dtype == "float64":
        assert codes.tolist() == [0, 0, 2, 2]
    else:
        assert codes.tolist() == [0, 0, 1, 2]


def test_cli_groups_file_refuses_a_number_that_does_not_round_trip(tmp_path):
    df = frame(np.repeat([2.0 ** 53, 3.0], [50, 40]))
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    keys = tmp_path / "keys.txt"
    keys.write_text("3\n9007199254740993.0\n")
    out = tmp_path / "o.csv"
    code, text = _cli("fit-groups", str(data), "--by", "k", "--y", "y", "--x", "x", "-m",
                      "noisy-stats", "-e", "1", "-b", "x=0:1", "-b", "y=0:1", "--groups-file",
                      str(keys), "--out", str(out))
    assert code == 1 and "line 2" in text, text
    assert not out.exists()
