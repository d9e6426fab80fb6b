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


# ------------------------------------------------------------------ issue 33: verdicts and limits
_ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
_VERDICT_RE = re.compile(r"\*\*(confirmed|not confirmed|partly confirmed|not checked|reported|"
                         r"not tested \(quick grid\))\*\*")


def _page_verdicts(text, header):
    """claim id -> (verdict, strict verdict) of every row of the tables under ``header``."""
    out = {}
    for part in text.split(header)[1:]:
        for line in part.split("\n")[2:]:
            if not line.startswith("| "):
                break
            bold = _VERDICT_RE.findall(line)
            assert len(bold) == 2, line[:120]
            out[line[2:].split(" | ")[0]] = (bold[0], bold[1])
    return out


def test_every_verdict_on_the_page_is_computed_from_a_committed_results_file():
    """Each verdict of docs/results.md equals what dpreg.bench.claims computes from the
    committed summary.csv files (no rerun), the committed claims.csv agree, and no verdict
    appears on the page outside the generated claim tables."""
    import pandas as pd

    from dpreg.bench.claims import evaluate_claims, summary_lookup
    from dpreg.bench.spec import spec_names
    from studies.report import _UNCHECKABLE, CLAIMS_HEADER

    text = (_ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    root = _ROOT / "docs" / "results"
    lookup = summary_lookup(root)
    computed = {}
    for name in spec_names():
        summary = lookup(name)
        if summary is None:
            continue
        claims = evaluate_claims(name, None, summary, lookup)
        assert (claims["paper"].str.len() > 0).all(), name  # the paper's number or figure
        committed = pd.read_csv(root / name / "claims.csv", keep_default_na=False)
        assert list(committed["verdict"]) == list(claims["verdict"]), name
        assert list(committed["strict_verdict"]) == list(claims["strict_verdict"]), name
        for r in claims.itertuples(index=False):
            computed[r.claim_id] = (r.verdict, r.strict_verdict)
    assert computed
    assert _page_verdicts(text, CLAIMS_HEADER) == computed
    closing = _page_verdicts(text, "| id | source | claim | paper | measured | verdict | "
                                   "strict verdict |")
    unchecked = {a: (e, e) for a, _b, _c, _d, e in _UNCHECKABLE}
    assert closing == {**computed, **unchecked}
    # no verdict elsewhere (e.g. typed into a section's prose)
    rows = [ln for ln in text.splitlines() if _VERDICT_RE.search(ln)]
    assert len(rows) == len(computed) + len(closing)


def test_each_limit_statement_names_the_test_or_study_that_measures_it():
    """docs/uncertainty.md 'Assumptions and limits': every statement names an existing test
    (file, and function where given) or study; the noisy-stats small-data case that is now
    refused is not described as an open under-coverage."""
    text = (_ROOT / "docs" / "uncertainty.md").read_text(encoding="utf-8")
    section = text.split("## Assumptions and limits", 1)[1].split("\n## ", 1)[0]
    bullets = re.split(r"\n\* ", section)[1:]  # [0]: the lead-in paragraph
    assert len(bullets) >= 5
    for b in bullets:
        refs = re.findall(r"`((?:tests|studies)/[\w/]+\.py)(?:::(\w+))?`", b)
        mods = re.findall(r"python -m (studies\.\w+)", b)
        assert refs or mods, f"names no test or study: {b[:100]!r}"
        for path, func in refs:
            assert (_ROOT / path).exists(), path
            if func:
                assert f"def {func}(" in (_ROOT / path).read_text(encoding="utf-8"), func
        for mod in mods:
            assert (_ROOT / (mod.replace(".", "/") + ".py")).exists(), mod
    assert "Not fixed yet" not in section
    noisy = [b for b in bullets if "NoisyStats" in b and "under-cover" in b]
    assert noisy and all("test_unc_noisy" in b for b in noisy)
