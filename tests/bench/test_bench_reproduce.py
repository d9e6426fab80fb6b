"""``dpreg reproduce alabi-fig5 --quick`` end to end: structure, seeds, resume (seconds)."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _cli import run_cli
from dpreg import __version__
from dpreg.bench import load_spec, reproduce
from dpreg.bench.runner import META_COLUMNS, cell_seed_sequence


def cli(*args):
    """The command in this process (tests/_cli.py: same exit code and streams)."""
    return run_cli(*args)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro")
    proc = cli("reproduce", "alabi-fig5", "--quick", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(proc.stdout)


def test_cli_json_report(quick_run):
    out, report = quick_run
    assert report["name"] == "alabi-fig5" and report["quick"] is True
    # panel a: n = 31, 316; panel c: ε = 0.1, 1 at n = 316 -- (n=316, ε=1) is shared
    assert report["cells_total"] == report["cells_run"] == 3 and report["cells_skipped"] == 0
    assert Path(report["out_dir"]) == out / "alabi-fig5-quick"
    for key in ("results", "summary", "claims", "meta"):
        assert Path(report[key]).exists(), key
    assert report["figures"] and all(Path(f).exists() for f in report["figures"])
    for f in report["figures"]:  # every PNG comes with its plotted numbers
        assert Path(f).with_suffix(".csv").exists()
    assert {v["claim_id"] for v in report["verdicts"]} >= {"alabi-4a", "alabi-4b", "alabi-4d"}


def test_results_csv_structure(quick_run):
    _, report = quick_run
    spec = load_spec("alabi-fig5", quick=True)
    rows = pd.read_csv(report["results"])
    methods = [m["name"] for m in spec["methods"]]
    ev = spec["evaluation"]
    # one row per cell x data set x method
    assert len(rows) == 3 * ev["datasets"] * len(methods)
    assert set(rows["panel"]) == {"a", "c", "a+c"}
    assert list(rows.columns[:len(META_COLUMNS)]) == list(META_COLUMNS)
    assert (rows["spec_hash"] == spec.hash).all() and (rows["seed_entropy"] == spec.seed).all()
    assert (rows["dpreg_version"] == __version__).all()
    assert set(rows["method"]) == set(methods)
    assert (rows.groupby(["cell", "method"]).size() == ev["datasets"]).all()
    assert (rows["spawn_key"] == rows["cell"].astype(str) + "/" + rows["dataset"].astype(str)).all()
    # no NaN where a value is always defined
    for col in ("n", "epsilon", "trials", "failures", "truth", "ols", "sd_true", "se_hat",
                "c_true", "c_hat", "ratio_true", "ratio_hat", "seconds"):
        assert rows[col].notna().all(), col
    # failure counts are consistent: only DPSuffStats can fail (negative noisy nvar), an
    # infinite bound needs more than (1 - q) of the trials to fail, finite otherwise
    assert ((rows["failures"] >= 0) & (rows["failures"] <= rows["trials"])).all()
    assert (rows.loc[rows["method"] != "DPSuffStats", "failures"] == 0).all()
    k = np.ceil(ev["q"] * rows["trials"] - 1e-12)
    inf_expected = rows["failures"] > rows["trials"] - k
    assert (np.isinf(rows["c_true"]) == inf_expected).all()
    assert (np.isinf(rows["c_hat"]) == inf_expected).all()
    # non-private OLS: Ĉ against OLS is exactly 0; Ĉ_true is |p̂ − p_true|
    ols = rows[rows["method"] == "OLS"]
    assert (ols["c_hat"] == 0).all()
    assert np.allclose(ols["c_true"], (ols["ols"] - ols["truth"]).abs())
    # the true sd is the closed form of the generator
    r = rows.iloc[0]
    expect = math.sqrt(r["sigma_e2"]) * math.sqrt(1 / r["n"] + 0.0625 / (r["n"] * r["sigma_x2"]))
    assert r["sd_true"] == pytest.approx(expect)


def test_summary_matches_rows(quick_run):
    _, report = quick_run
    rows = pd.read_csv(report["results"])
    summary = pd.read_csv(report["summary"])
    assert set(summary["panel"]) == {"a", "c"}
    for _, s in summary.iterrows():
        grp = rows[(rows["cell"] == s["cell"]) & (rows["method"] == s["method"])]
        assert s["datasets"] == len(grp)
        assert s["failure_rate"] == pytest.approx(grp["failures"].sum() / grp["trials"].sum())
        vals = grp["ratio_true"].to_numpy(float)
        if np.isinf(vals).any():
            assert np.isinf(s["ratio_true_mean"])
        else:
            assert s["ratio_true_mean"] == pytest.approx(vals.mean())
    # the shared cell appears in both panels; every panel value once per method
    assert (summary.groupby(["panel", "x", "method"]).size() == 1).all()
    assert len(summary) == 4 * rows["method"].nunique()


def test_resume_skips_finished_cells_and_reproduces(quick_run, tmp_path):
    out, report = quick_run
    before = pd.read_csv(report["results"])
    # drop one cell, resume: only that cell runs and the numbers are identical
    folder = Path(report["out_dir"])
    target = tmp_path / "alabi-fig5-quick"
    target.mkdir()
    before[before["cell"] != 2].to_csv(target / "results.csv", index=False)
    res = reproduce("alabi-fig5", quick=True, out=tmp_path, resume=True)
    assert res.cells_run == 1 and res.cells_skipped == 2
    after = pd.read_csv(res.results_csv)
    drop = ["seconds"]
    pd.testing.assert_frame_equal(before.drop(columns=drop), after.drop(columns=drop))
    assert folder.exists()


def test_resume_ignores_rows_of_another_spec_version(tmp_path):
    res = reproduce("alabi-fig5", quick=True, out=tmp_path)
    rows = pd.read_csv(res.results_csv)
    rows["spec_hash"] = "stale"
    rows.to_csv(res.results_csv, index=False)
    again = reproduce("alabi-fig5", quick=True, out=tmp_path, resume=True)
    assert again.cells_run == again.cells_total == 3
    assert (pd.read_csv(again.results_csv)["spec_hash"] == again.spec_hash).all()


def test_workers_do_not_change_numbers(quick_run, tmp_path):
    _, report = quick_run
    one = pd.read_csv(report["results"])
    two = pd.read_csv(reproduce("alabi-fig5", quick=True, out=tmp_path, workers=2).results_csv)
    pd.testing.assert_frame_equal(one.drop(columns=["seconds"]), two.drop(columns=["seconds"]))


def test_cell_streams_are_spawn_children():
    root = np.random.SeedSequence(123)
    kids = root.spawn(5)
    for i, kid in enumerate(kids):
        mine = cell_seed_sequence(123, i)
        assert mine.spawn_key == kid.spawn_key and mine.entropy == kid.entropy
        assert np.array_equal(mine.generate_state(4), kid.generate_state(4))


def test_list_and_errors():
    proc = cli("reproduce", "--list", "--json")
    assert proc.returncode == 0, proc.stderr
    names = {s["name"] for s in json.loads(proc.stdout)}
    assert names == {"alabi-fig5", "alabi-fig6", "alabi-fig6-noclip", "alabi-fig7", "alabi-fig8", "alabi-bikeshare",
                     "alabi-stock", "sarathy-vadhan-coverage", "bain-sim", "bain-real",
                     "tang-compare", "amin-r2"}
    bad = cli("reproduce", "no-such-figure")
    assert bad.returncode == 2 and "unknown reproduction" in bad.stderr  # usage error
    missing = cli("reproduce")
    assert missing.returncode == 1 and "--list" in missing.stderr


def test_meta_json(quick_run):
    _, report = quick_run
    meta = json.loads(Path(report["meta"]).read_text())
    spec = load_spec("alabi-fig5", quick=True)
    assert meta["spec_hash"] == spec.hash and meta["seed"] == spec.seed and meta["quick"]
    assert meta["rows"] == len(pd.read_csv(report["results"]))
    # CPU time of all processes is recorded next to the wall time (shared machines)
    assert 0 < meta["cpu_seconds"] and meta["seconds"] > 0
