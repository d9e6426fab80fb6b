"""The results page (studies/report.py) is generated from the summaries alone."""

import json
import re
import shutil

import pytest

from dpreg.bench import reproduce
from studies.report import write_results_page


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    out = {}
    for name in ("alabi-fig5", "alabi-stock", "amin-r2"):
        out[name] = reproduce(name, quick=True, out=root)
    return root, out


def _as_full_run(res, src_root):
    """Copy a quick run's folder as if it were a full run (meta quick=false)."""
    tgt = src_root / res.name
    shutil.copytree(res.out_dir, tgt)
    meta = json.loads((tgt / "meta.json").read_text())
    meta["quick"] = False
    (tgt / "meta.json").write_text(json.dumps(meta))
    return tgt


def test_page_from_copied_runs(runs, tmp_path):
    root, res = runs
    src = tmp_path / "src"
    for r in res.values():
        _as_full_run(r, src)
    dest, page = tmp_path / "docs" / "results", tmp_path / "docs" / "results.md"
    write_results_page(src, dest=dest, page=page)
    text = page.read_text()
    for name in res:
        assert f"## {name}:" in text
        assert (dest / name / "summary.csv").exists() and (dest / name / "claims.csv").exists()
        assert not (dest / name / "results.csv").exists()  # the large CSV stays behind
    # every image the page links exists, with its plotted numbers next to it
    for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
        png = page.parent / link
        assert png.exists() and png.with_suffix(".csv").exists(), link
    assert "not run yet" in text  # the other reproductions are listed as missing
    assert "## Closing note" in text
    closing = text.split("## Closing note")[1]
    for cid in ("alabi-4a", "alabi-2a", "amin-adassp", "alabi-1"):
        assert f"| {cid} |" in closing
    assert re.search(r"\*\*(confirmed|not confirmed|partly confirmed|not checked)\*\*", closing)
    # re-rendering from the committed files alone gives the same page
    before = text
    write_results_page(None, dest=dest, page=page)
    assert page.read_text() == before


def test_quick_runs_are_not_copied(runs, tmp_path):
    root, _ = runs
    dest, page = tmp_path / "d", tmp_path / "p.md"
    # quick folders are named NAME-quick and flagged quick: nothing is copied
    write_results_page(root, dest=dest, page=page)
    assert not any(dest.glob("*/summary.csv"))


def test_committed_results_page_matches_committed_summaries(tmp_path):
    """docs/results.md is exactly what the generator writes from docs/results/ (no hand edits,
    no stale summaries)."""
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs"
    if not (docs / "results.md").exists():
        pytest.skip("docs/results.md has not been generated in this checkout")
    shutil.copytree(docs / "results", tmp_path / "results")
    page = write_results_page(dest=tmp_path / "results", page=tmp_path / "results.md")
    assert page.read_text(encoding="utf-8") == (docs / "results.md").read_text(encoding="utf-8")
    # every figure the page shows is committed next to its plotted numbers
    for png in re.findall(r"\]\((results/[^)]+\.png)\)", page.read_text(encoding="utf-8")):
        assert (docs / png).exists() and (docs / png).with_suffix(".csv").exists(), png
