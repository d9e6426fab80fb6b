"""Per-group intervals: ``fit_by_group(..., ci_alpha=)`` / ``dpreg fit-groups --ci``.

The interval columns are read from each group's release by the single fit's own interval
functions (Theil-Sen: the Sarathy–Vadhan slope interval of ``theil_sen_with_ci``; noisy-stats:
the DP-aware bootstrap of the ``inference=True`` release), so a group's row must equal the
single fit with the group's stream; every backend gives the same table for a seed.
"""

import json

import numpy as np
import pandas as pd
import pytest

from _cli import run_cli
from dpreg import InvalidInputError, Ledger, fit_by_group
from dpreg.api import fit_arrays
from dpreg.grouped._common import group_generator, make_spec
from dpreg.privacy import PureDP
from dpreg.simple._noisy_stats import interval_refusal

BOUNDS = {"x": (0.0, 1.0), "y": (-1.0, 2.0)}
SIZES = [0, 2, 16, 60, 150, 400]  # key 0: no rows; key 1: too small for any interval


def table(seed=0, sizes=SIZES):
    g = np.random.default_rng(seed)
    parts = []
    for k, n in enumerate(sizes):
        x = g.uniform(0, 1, n)
        parts.append(pd.DataFrame({"k": k, "x": x, "y": 0.2 + 0.5 * x + g.normal(0, 0.1, n)}))
    return pd.concat(parts).sample(frac=1, random_state=seed)


def fit(method, backend="local", alpha=0.1, **kw):
    return fit_by_group(table(), "k", "x", "y", method=method, epsilon=4.0, bounds=BOUNDS,
                        groups=list(range(len(SIZES))), random_state=7, backend=backend,
                        ci_alpha=alpha, **kw)


@pytest.mark.parametrize("method", ["theil-sen-exp", "theil-sen-wide", "noisy-stats"])
def test_interval_columns_ordered_and_equal_on_local_and_reference(method):
    loc, ref = fit(method), fit(method, backend="reference")
    for t in (loc, ref):
        t.attrs.pop("backend", None)
    pd.testing.assert_frame_equal(loc, ref)
    cols = ["lower_slope", "upper_slope", "informative_slope"]
    if method == "noisy-stats":
        cols += [f"{s}_pred_{v}" for v in (0.25, 0.75) for s in ("lower", "upper")]
    assert [c for c in loc.columns if c.startswith(("lower_", "upper_", "informative_"))] == cols
    # the Theil-Sen tables also carry the tie flag, right after informative_slope
    if method != "noisy-stats":
        cols.append("ci_point_mass")
    assert [c for c in loc.columns
            if c.startswith(("lower_", "upper_", "informative_", "ci_point_mass"))] == cols
    assert list(loc.columns)[-1] == "privacy"
    assert str(loc["informative_slope"].dtype) == "boolean"
    ok = ~loc["failed"]
    assert ok.sum() >= 3 and loc.loc[~ok, "lower_slope"].isna().all()
    assert loc.loc[~ok, "informative_slope"].isna().all()
    if method == "noisy-stats":
        # groups whose public (n, ε) the interval rule refuses: NA intervals, not informative
        # (sizes 16 and 60; 150 is decided by its release -- x uniform: offered -- 400 always)
        public = loc["n"].map(lambda n: n >= 3 and bool(interval_refusal(int(n), 4.0, BOUNDS["x"])))
        gone = ok & loc["lower_slope"].isna()
        assert (gone == (ok & public)).all() and gone.sum() == 2
        assert not loc.loc[gone, "informative_slope"].any()
        assert loc.loc[gone, ["upper_slope", "lower_pred_0.25"]].isna().all().all()
        ok = ok & ~gone
    lo, hi = loc.loc[ok, "lower_slope"], loc.loc[ok, "upper_slope"]
    assert (lo <= hi).all() and np.isfinite(lo).all() and np.isfinite(hi).all()
    if method == "noisy-stats":
        # the bootstrap-t interval around the release (not guaranteed by construction; holds here)
        assert ((lo <= loc.loc[ok, "slope"]) & (loc.loc[ok, "slope"] <= hi)).all()
        for v in (0.25, 0.75):
            p = loc.loc[ok, f"pred_{v}"]
            assert ((loc.loc[ok, f"lower_pred_{v}"] <= p) & (p <= loc.loc[ok, f"upper_pred_{v}"])).all()


def test_row_equals_the_single_fit_with_the_group_stream():
    """One implementation: a group's interval is the single fit's interval (same stream)."""
    df = table()
    out = fit("theil-sen-exp").set_index("group")
    spec = make_spec(df.columns, None, "k", "x", "y", method="theil-sen-exp", epsilon=4.0,
                     bounds=BOUNDS, delta=None, groups=list(range(len(SIZES))), random_state=7,
                     options={"ci_alpha": 0.1})
    # a group's rows in their order in the input table (the backends keep it)
    rows = df[df["k"] == 4]
    res = fit_arrays(rows[["x"]].to_numpy(), rows["y"].to_numpy(), method="theil-sen-exp",
                     epsilon=4.0, x_bounds=[BOUNDS["x"]], y_bounds=BOUNDS["y"], x_names=["x"],
                     y_name="y", random_state=group_generator(spec, 4), ci_alpha=0.1)
    ci = res.conf_int(0.1).loc["x"]
    assert out.loc[4, "slope"] == res.params["x"]
    assert (out.loc[4, "lower_slope"], out.loc[4, "upper_slope"]) == (ci["lower"], ci["upper"])


def spread_table(seed=3):
    """Groups that exercise every branch of noisy-stats' interval rule at ε = 4: x uniform
    (150 rows: the release decides and offers), bunched at 0.5 (150 rows: ⊥ or refused by the
    release), moderately spread (sd 0.22: offered, part of nvar's posterior below the rule's
    threshold), 400 rows (offered from public inputs) and 60 rows (refused from them)."""
    g = np.random.default_rng(seed)
    kinds = [(150, 1.0), (150, 0.03), (150, 0.03), (150, 0.22), (150, 0.22), (150, 0.22),
             (150, 0.22), (120, 0.16), (400, 1.0), (60, 1.0)]
    parts = []
    for k, (n, sd) in enumerate(kinds):
        x = g.uniform(0, 1, n) if sd == 1.0 else np.clip(g.normal(0.5, sd, n), 0, 1)
        parts.append(pd.DataFrame({"k": k, "x": x, "y": 0.2 + 0.5 * x + g.normal(0, 0.1, n)}))
    return pd.concat(parts), list(range(len(kinds)))


def _single_noisy_fits(df, keys, alpha):
    spec = make_spec(df.columns, None, "k", "x", "y", method="noisy-stats", epsilon=4.0,
                     bounds=BOUNDS, delta=None, groups=keys, random_state=11,
                     options={"ci_alpha": alpha})
    out = {}
    for k in keys:
        rows = df[df["k"] == k]
        out[k] = fit_arrays(rows[["x"]].to_numpy(), rows["y"].to_numpy(), method="noisy-stats",
                            epsilon=4.0, x_bounds=[BOUNDS["x"]], y_bounds=BOUNDS["y"],
                            x_names=["x"], y_name="y", random_state=group_generator(spec, k),
                            inference=True)
    return out


def test_noisy_stats_rows_equal_the_single_fits_whoever_decides():
    """A group's noisy-stats interval is the single fit's, decided by the same rule: offered or
    refused from the group's public n·ε, or by the group's own release (issue 30) -- the
    table's NA rows are exactly the single fits whose ``conf_int`` refuses."""
    from dpreg.inference import NoUncertaintyError

    df, keys = spread_table()
    table = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=4.0, bounds=BOUNDS,
                         groups=keys, random_state=11, ci_alpha=0.1).set_index("group")
    single = _single_noisy_fits(df, keys, 0.1)
    rules = set()
    for k, res in single.items():
        row = table.loc[k]
        assert bool(row["failed"]) == res.failed
        if res.failed:
            continue
        assert row["slope"] == res.params["x"]
        try:
            ci = res.conf_int(0.1).loc["x"]
        except NoUncertaintyError:
            rules.add("refused by " + ("release" if "on this release" in res.uncertainty
                                       else "public inputs"))
            assert np.isnan(row["lower_slope"]) and not row["informative_slope"]
            continue
        rules.add(res.extra["dp_ci_rule"])
        assert (row["lower_slope"], row["upper_slope"]) == (ci["lower"], ci["upper"])
    assert rules == {"public", "release", "refused by release", "refused by public inputs"}


def test_noisy_stats_flags_are_computed_at_the_tables_alpha():
    """``informative_slope`` is computed at the table's own α (never at a fixed level): the
    single fit's flags at that α -- reliable, the interval containing the estimate, and less
    than α/2 of nvar's posterior below the release rule's threshold.  The same releases give
    different flags at α = 0.1 and α = 0.6 in a group whose posterior has 5-30 % there."""
    df, keys = spread_table()
    flags = {}
    for a in (0.1, 0.6):
        table = fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=4.0,
                             bounds=BOUNDS, groups=keys, random_state=11,
                             ci_alpha=a).set_index("group")
        for k, res in _single_noisy_fits(df, keys, a).items():
            if res.failed or res.extra.get("dp_ci_refused"):
                continue
            want = (bool(res.extra["dp_ci_reliable"]) and not res.excludes_estimate(a)
                    and res.extra.get("dp_ci_unidentified_mass", 0.0) < a / 2)
            assert bool(table.loc[k, "informative_slope"]) is want, (k, a)
            flags[k, a] = want
    assert any(flags[k, 0.1] != flags[k, 0.6] for k in keys if (k, 0.1) in flags)


def test_range_wide_interval_is_flagged():
    """Small groups at small ε: the slope interval is the slope search range and the flag says
    so; an informative interval has both ends strictly inside it."""
    out = fit_by_group(table(sizes=[16, 16, 300, 400]), "k", "x", "y", method="theil-sen-exp",
                       epsilon=4.0, bounds=BOUNDS, groups=[0, 1, 2, 3], random_state=3,
                       ci_alpha=0.1)
    # the slope search range for these bounds, from a single fit's statement
    res = fit_arrays(np.linspace(0, 1, 16).reshape(-1, 1), np.linspace(0, 1, 16),
                     method="theil-sen-exp", epsilon=4.0, x_bounds=[BOUNDS["x"]],
                     y_bounds=BOUNDS["y"], x_names=["x"], y_name="y", random_state=1,
                     ci_alpha=0.1)
    lo_r, hi_r = res.privacy.details["ci"]["details"]["output_range"]
    at_range = (out["lower_slope"] <= lo_r) | (out["upper_slope"] >= hi_r)
    assert at_range.any() and (~at_range).any()
    assert (out["informative_slope"].astype(bool) == ~at_range).all()


def test_privacy_statement_states_the_split_and_the_ledger_is_charged_once():
    led = Ledger(PureDP(10.0))
    ts = fit("theil-sen-exp", ledger=led)
    assert "ε/2 = 2 for the line, ε/2 = 2 for the slope interval" in ts.attrs["privacy"]
    assert "ε/2 = 2 for the line" in ts["privacy"].iloc[0]
    assert led.spent().epsilon == pytest.approx(4.0)
    ns = fit("noisy-stats")
    assert "ncov ε×0.3, nvar ε×0.3, intercept ε×0.3, nvar(y) ε×0.05, x̄ ε×0.05" in ns.attrs["privacy"]
    assert "no extra budget" in ns["privacy"].iloc[0]
    plain = fit_by_group(table(), "k", "x", "y", method="noisy-stats", epsilon=4.0, bounds=BOUNDS,
                         groups=list(range(len(SIZES))), random_state=7)
    assert "Intervals" not in plain.attrs["privacy"] and "lower_slope" not in plain


def test_bad_interval_requests_are_refused_before_anything_is_charged():
    led = Ledger(PureDP(10.0))
    with pytest.raises(InvalidInputError, match="ci_alpha .*dp-gd"):
        fit("dp-gd", ledger=led)
    with pytest.raises(InvalidInputError, match="ci_alpha"):
        fit("theil-sen-exp", alpha=1.5, ledger=led)
    with pytest.raises(InvalidInputError, match="inference=True"):
        fit("noisy-stats", inference=False, ledger=led)
    assert led.spent().epsilon == 0


def test_noisy_stats_interval_needs_three_rows():
    out = fit("noisy-stats").set_index("group")
    assert out.loc[1, "failed"] and "needs at least 3" in out.loc[1, "reason"]


def test_cli_fit_groups_ci(tmp_path):
    data = tmp_path / "d.csv"
    table().to_csv(data, index=False)
    keys = tmp_path / "keys.txt"
    keys.write_text("\n".join(str(k) for k in range(len(SIZES))))
    out = tmp_path / "o.csv"
    plot = tmp_path / "p.png"
    proc = run_cli(
        "fit-groups", str(data), "--by", "k", "--x", "x", "--y",
        "y", "-m", "noisy-stats", "-e", "4", "-b", "x=0:1", "-b", "y=-1:2", "--groups-file",
        str(keys), "--out", str(out), "--seed", "7", "--ci", "0.1", "--plot", str(plot),
        "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["intervals"]["level"] == pytest.approx(0.9)
    # the released groups of 16 and 60 rows: n·ε < 378, refused from public inputs (NA); the
    # group of 150 rows is decided by its release (x uniform over its bounds: offered)
    assert summary["intervals"]["refused"] == 2
    got = pd.read_csv(out)
    lib = fit("noisy-stats")
    for c in ("lower_slope", "upper_slope", "lower_pred_0.25", "upper_pred_0.75"):
        np.testing.assert_array_equal(got[c].to_numpy(), lib[c].to_numpy())
    assert plot.stat().st_size > 0


def test_cli_fit_groups_ci_counts_the_tight_theil_sen_groups(tmp_path):
    """``dpreg fit-groups -m theil-sen-* --ci`` says how many released groups got the
    conservative tight interval (n·ε < 200 at the group's public n: here n = 2 and 16 at ε = 4; the
    groups of 60, 150 and 400 rows get the calibrated one)."""
    data = tmp_path / "d.csv"
    table().to_csv(data, index=False)
    keys = tmp_path / "keys.txt"
    keys.write_text("\n".join(str(k) for k in range(len(SIZES))))
    args = ["fit-groups", str(data), "--by", "k", "--x", "x",
            "--y", "y", "-m", "theil-sen-exp", "-e", "4", "-b", "x=0:1", "-b", "y=-1:2",
            "--groups-file", str(keys), "--out", str(tmp_path / "o.csv"), "--seed", "7",
            "--ci", "0.1"]
    proc = run_cli(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    iv = json.loads(proc.stdout)["intervals"]
    released = pd.read_csv(tmp_path / "o.csv")
    released = released[~released["failed"].astype(bool)]
    assert iv["tight"] == int((released["n"] * 4.0 < 200).sum()) == 2
    text = " ".join(run_cli(*args).stdout.split())  # rich wraps at the terminal width
    assert "2 groups have the conservative tight Theil-Sen interval" in text


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.slow  # a Spark job per method (make test keeps one Spark smoke test)
@pytest.mark.filterwarnings("ignore:PySpark does not yet fully support")
@pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")
def test_spark_interval_table_equals_reference(spark):
    for method in ("theil-sen-wide", "noisy-stats"):
        sp = fit(method, backend="spark", spark=spark)
        ref = fit(method, backend="reference")
        assert sp.attrs.pop("backend") == "spark"
        ref.attrs.pop("backend", None)
        pd.testing.assert_frame_equal(sp, ref)


@pytest.mark.parametrize("backend", ["local", "reference"])
def test_infinite_epsilon_reference_table_survives_a_group_with_every_x_tied(backend):
    """At ε = ∞ (the non-private reference table) a group whose every x is tied has no
    Theil-Sen interval: that group's row is failed with the reason and the other groups keep
    theirs (before, the single fit's error aborted the whole table).  At a finite ε the same
    group gets the DP interval, which is the search range, flagged not informative."""
    import math

    from dpreg.simple.ci import ALL_TIED_CI

    g = np.random.default_rng(3)
    parts = []
    for k in range(3):
        x = np.full(30, 0.5) if k == 1 else g.uniform(0, 1, 30)
        parts.append(pd.DataFrame({"k": k, "x": x, "y": 0.2 + 0.5 * x + g.normal(0, 0.1, 30)}))
    df = pd.concat(parts)
    out = fit_by_group(df, "k", "x", "y", method="theil-sen-exp", epsilon=math.inf,
                       bounds=BOUNDS, groups=[0, 1, 2], backend=backend, ci_alpha=0.1)
    assert out["failed"].tolist() == [False, True, False]
    assert out.loc[1, "reason"] == ALL_TIED_CI
    assert np.isnan(out.loc[1, "lower_slope"]) and np.isnan(out.loc[1, "upper_slope"])
    for k in (0, 2):
        assert out.loc[k, "lower_slope"] <= out.loc[k, "slope"] <= out.loc[k, "upper_slope"]
    private = fit_by_group(df, "k", "x", "y", method="theil-sen-exp", epsilon=2.0,
                           bounds=BOUNDS, groups=[0, 1, 2], backend=backend, ci_alpha=0.1,
                           random_state=1)
    assert not private.loc[1, "failed"] and not private.loc[1, "informative_slope"]


def test_theil_sen_group_flags_a_line_outside_its_interval_and_mixes_methods_by_public_n():
    """Each group's Theil-Sen interval is calibrated where its public n·ε allows (n = 60, 150,
    400 at ε = 4: n·ε >= 200) and tight in smaller ones, exactly as the single fit with that n
    decides; and ``informative_slope`` is False whenever the group's line has its slope outside
    its interval (two separate ε/2 releases) -- never an unflagged exclusion.  Before: the
    flag only marked range-clipped ends, and every group got the tight interval."""
    from dpreg.simple.ci import resolve_ci_method

    seen_excl = 0
    for seed in range(6):
        t = fit_by_group(table(seed), "k", "x", "y", method="theil-sen-smooth", epsilon=4.0,
                         bounds=BOUNDS, groups=list(range(len(SIZES))), random_state=seed,
                         ci_alpha=0.1)
        ok = t[~t["failed"]]
        excl = ~((ok["lower_slope"] <= ok["slope"]) & (ok["slope"] <= ok["upper_slope"]))
        assert not (excl & ok["informative_slope"].astype(bool)).any()
        seen_excl += int(excl.sum())
    assert seen_excl > 0  # the property was exercised
    for n in (16, 60, 150, 400):
        want = "calibrated" if n * 4.0 >= 200 else "tight"
        assert resolve_ci_method("auto", n=n, pairs="all", epsilon=2.0) == want


@pytest.mark.parametrize("with_ledger", [False, True])
def test_explicit_calibrated_in_a_table_with_a_small_group_is_refused_before_any_release(
        with_ledger, monkeypatch):
    """``ci_method="calibrated"`` asks for the calibrated interval in every group; a group
    below the public rule (here n = 2 and 16 at ε = 4) makes the whole request fail with
    ``NoUncertaintyError`` before the table is charged or any group drawn -- with or without a
    ledger (before: without a ledger the error surfaced in the middle of the table)."""
    import dpreg.grouped.local as local_mod
    import dpreg.grouped.reference as reference_mod
    from dpreg.inference import NoUncertaintyError

    def no_release(*a, **k):
        raise AssertionError("a group was fitted before the request was refused")

    led = Ledger(PureDP(10.0)) if with_ledger else None
    with monkeypatch.context() as mp:
        mp.setattr(reference_mod, "fit_reference", no_release)
        mp.setattr(local_mod, "fit_local", no_release)
        with pytest.raises(NoUncertaintyError, match="ci_method='auto'"):
            fit("theil-sen-exp", ci_method="calibrated", ledger=led)
    if led is not None:
        assert led.events() == []
    # the default mixes per group, and an explicit request on large groups only is served
    t = fit("theil-sen-exp")
    assert t["lower_slope"].notna().sum() >= 4
    big = fit_by_group(table(sizes=[200, 400]), "k", "x", "y", method="theil-sen-exp",
                       epsilon=4.0, bounds=BOUNDS, groups=[0, 1], random_state=7,
                       ci_alpha=0.1, ci_method="calibrated")
    assert big["lower_slope"].notna().all()


# ------------------------------------------------------------------ tied slopes per group
TIE_SIZES = [0, 400, 500, 600, 450]  # key 0: no rows (⊥)


def tie_table(binary_keys, seed=0):
    """Keys in ``binary_keys`` get a 0/1 response (most pairs tied: the median pairwise slope
    piles up at 0); the others a continuous one."""
    g = np.random.default_rng(seed)
    parts = []
    for k, n in enumerate(TIE_SIZES):
        x = g.uniform(0, 1, n)
        y = ((g.uniform(0, 1, n) < 0.2 + 0.1 * x).astype(float) if k in binary_keys
             else 0.2 + 0.5 * x + g.normal(0, 0.1, n))
        parts.append(pd.DataFrame({"k": k, "x": x, "y": y}))
    return pd.concat(parts).sample(frac=1, random_state=seed)


def tie_fit(binary_keys, backend="local", method="theil-sen-exp"):
    import warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fit_by_group(tie_table(binary_keys), "k", "x", "y", method=method, epsilon=4.0,
                           bounds=BOUNDS, groups=list(range(len(TIE_SIZES))), random_state=5,
                           backend=backend, ci_alpha=0.1)
    from dpreg.exceptions import TiedSlopesWarning

    return out, [w for w in seen if issubclass(w.category, TiedSlopesWarning)]


@pytest.mark.parametrize("backend", ["local", "reference"])
def test_binary_response_groups_are_flagged_and_the_table_warns_once(backend):
    """A 0/1 response in three groups: all three flagged ``ci_point_mass`` (nullable boolean,
    NA in the ⊥ row, after ``informative_slope``), the continuous group not, and ONE
    TiedSlopesWarning for the table with the count -- not one per group."""
    out, tied = tie_fit({1, 3, 4}, backend)
    assert str(out["ci_point_mass"].dtype) == "boolean"
    assert pd.isna(out.loc[0, "ci_point_mass"])
    assert out.loc[1:, "ci_point_mass"].tolist() == [True, False, True, True]
    cols = list(out.columns)
    assert cols.index("ci_point_mass") == cols.index("informative_slope") + 1
    assert cols[-1] == "privacy"
    assert len(tied) == 1
    text = str(tied[0].message)
    assert "3 of 4 released groups are flagged ci_point_mass" in text
    assert tied[0].filename == __file__  # points at the caller, not inside dpreg


def test_continuous_response_flags_no_group_and_does_not_warn():
    out, tied = tie_fit(set())
    assert not out["ci_point_mass"].fillna(False).any() and not tied
    assert out.loc[1:, "ci_point_mass"].notna().all()


@pytest.mark.parametrize("method", ["theil-sen-exp", "theil-sen-smooth"])
def test_point_mass_column_is_point_mass_flag_of_each_groups_released_interval(method):
    """Exactly :func:`point_mass_flag` of the row's released ends and the group's public θ
    (the single fit's widening at the group's n, stated in its release), and equal to the
    single fit's own ``extra['ci_point_mass']`` with the group's stream."""
    import warnings

    from dpreg.simple.ci import point_mass_flag

    df = tie_table({1, 3})
    out, _ = tie_fit({1, 3}, method=method)
    spec = make_spec(df.columns, lambda: None, "k", "x", "y", method=method, epsilon=4.0,
                     bounds=BOUNDS, delta=None, groups=list(range(len(TIE_SIZES))),
                     random_state=5, options={"ci_alpha": 0.1})
    for k in range(1, len(TIE_SIZES)):
        part = df[df["k"] == k]
        with warnings.catch_warnings():  # a flagged single fit warns for itself
            warnings.simplefilter("ignore")
            single = fit_arrays(part[["x"]].to_numpy(), part["y"].to_numpy(), method=method,
                                epsilon=4.0, x_bounds=[BOUNDS["x"]], y_bounds=BOUNDS["y"],
                                x_names=["x"], y_name="y", random_state=group_generator(spec, k),
                                ci_alpha=0.1)
        theta = single.privacy.details["ci"]["details"]["theta"]
        row = out.loc[k]
        want = point_mass_flag(row["lower_slope"], row["upper_slope"], theta)
        assert bool(row["ci_point_mass"]) is want is bool(single.extra["ci_point_mass"]["x"])
    assert out["ci_point_mass"].fillna(False).sum() == 2


@pytest.mark.parametrize("method", ["theil-sen-exp", "theil-sen-wide"])
def test_point_mass_column_is_the_same_on_local_and_reference(method):
    loc, loc_w = tie_fit({1, 2, 4}, "local", method)
    ref, ref_w = tie_fit({1, 2, 4}, "reference", method)
    pd.testing.assert_series_equal(loc["ci_point_mass"], ref["ci_point_mass"])
    assert [str(w.message) for w in loc_w] == [str(w.message) for w in ref_w]
    assert len(loc_w) == 1


def test_noisy_stats_interval_table_has_no_tie_column():
    """The release rule is Theil-Sen's (a public widening θ): noisy-stats' bootstrap interval
    table does not carry ``ci_point_mass``."""
    assert "ci_point_mass" not in fit("noisy-stats").columns


def test_cli_fit_groups_counts_the_tied_groups(tmp_path):
    """``dpreg fit-groups -m theil-sen-* --ci``: the written table has ``ci_point_mass``
    (equal to the library's), ``--json`` counts the flagged groups in
    ``intervals.point_mass`` and the text output says WARNING TIES with the count."""
    data = tmp_path / "d.csv"
    tie_table({1, 3, 4}).to_csv(data, index=False)
    keys = tmp_path / "keys.txt"
    keys.write_text("\n".join(str(k) for k in range(len(TIE_SIZES))))
    args = ["fit-groups", str(data), "--by", "k", "--x", "x", "--y", "y", "-m",
            "theil-sen-exp", "-e", "4", "-b", "x=0:1", "-b", "y=-1:2", "--groups-file",
            str(keys), "--out", str(tmp_path / "o.csv"), "--seed", "5", "--ci", "0.1"]
    proc = run_cli(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["intervals"]["point_mass"] == 3
    got = pd.read_csv(tmp_path / "o.csv")
    lib, _ = tie_fit({1, 3, 4})
    assert got["ci_point_mass"].tolist()[1:] == lib["ci_point_mass"].tolist()[1:]
    text = " ".join(run_cli(*args).stdout.split())  # rich wraps at the terminal width
    assert "WARNING TIES: 3 groups flagged ci_point_mass" in text


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.slow  # a Spark job (make test keeps one Spark smoke test)
@pytest.mark.filterwarnings("ignore:PySpark does not yet fully support")
@pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")
def test_spark_point_mass_column_and_warning_equal_reference(spark):
    """The SparkBackend's rows come from the same ``fit_group`` on the executors and its table
    from the same ``table_from_rows`` on the driver: the same ``ci_point_mass`` column and the
    same one counted warning (on the driver) as the reference loop."""
    import warnings

    from dpreg.exceptions import TiedSlopesWarning

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        sp = fit_by_group(tie_table({1, 3, 4}), "k", "x", "y", method="theil-sen-exp",
                          epsilon=4.0, bounds=BOUNDS, groups=list(range(len(TIE_SIZES))),
                          random_state=5, backend="spark", spark=spark, ci_alpha=0.1)
    tied = [str(w.message) for w in seen if issubclass(w.category, TiedSlopesWarning)]
    ref, ref_w = tie_fit({1, 3, 4}, "reference")
    pd.testing.assert_series_equal(sp["ci_point_mass"], ref["ci_point_mass"])
    assert tied == [str(w.message) for w in ref_w] and len(tied) == 1
