"""The Sarathy-Vadhan coverage reproduction reports dpreg's calibrated interval beside the
paper's two methods: refused (no interval, no coverage) where its public rule does not offer
it, run with its own default θ where it does, and never part of the paper's coverage claim."""

import copy
import math

import numpy as np
import pandas as pd
import pytest

from dpreg.bench import reproduce
from dpreg.bench.claims import QUICK_VERDICT, evaluate_claims
from dpreg.bench.kinds.coverage import CICoverage
from dpreg.bench.spec import load_spec
from dpreg.simple.ci import CALIBRATED_THETA_FACTOR, default_ci_theta, resolve_ci_method


def _spec(n, eps, datasets=6):
    spec = load_spec("sarathy-vadhan-coverage", quick=True)
    data = copy.deepcopy(spec.data)
    data["coverage"].update(n=[n], epsilon=[eps], datasets=datasets)
    return type(spec)(name=spec.name, kind=spec.kind, seed=spec.seed, data=data, quick=True)


def _rows(n, eps):
    spec = _spec(n, eps)
    kind = CICoverage()
    cell = kind.cells(spec)[0]
    rows = pd.DataFrame(kind.run_cell(spec, cell, np.random.SeedSequence(7)))
    return spec, kind, rows


def test_the_shipped_spec_runs_the_calibrated_method():
    assert "calibrated" in load_spec("sarathy-vadhan-coverage")["coverage"]["methods"]


def test_calibrated_below_its_rule_is_refused_for_every_data_set_and_has_no_coverage():
    assert resolve_ci_method("auto", n=30, pairs="all", epsilon=1.0) == "tight"
    spec, kind, rows = _rows(30, 1.0)
    cal = rows[rows["method"] == "dp-calibrated"]
    assert len(cal) == 6 and cal["refused"].eq(True).all()
    assert cal[["lower", "upper", "width", "covered"]].isna().all().all()
    assert rows.loc[rows["method"] == "dp-tight", "refused"].eq(False).all()
    summ = kind.summarise(spec, rows).set_index("method")
    assert summ.loc["dp-calibrated", "refused"] == 6
    assert math.isnan(summ.loc["dp-calibrated", "coverage"])
    assert math.isnan(summ.loc["dp-calibrated", "median_width"])
    # a refused row must not be counted as covered (NaN is truthy under astype(bool))
    assert summ.loc["dp-tight", "refused"] == 0 and summ.loc["dp-tight", "coverage"] == 1.0


def test_calibrated_where_offered_uses_its_own_theta_and_is_narrower_than_tight():
    assert resolve_ci_method("auto", n=200, pairs="all", epsilon=10.0) == "calibrated"
    spec, kind, rows = _rows(200, 10.0)
    cal = rows[rows["method"] == "dp-calibrated"]
    assert cal["refused"].eq(False).all() and (cal["lower"] <= cal["upper"]).all()
    want = default_ci_theta((-4.5, 5.5), 10.0, 200) * CALIBRATED_THETA_FACTOR
    assert np.allclose(cal["theta"], want)
    tight = rows[rows["method"] == "dp-tight"]
    assert cal["width"].median() < tight["width"].median()


def test_the_paper_claim_is_judged_on_union_and_tight_only():
    spec, kind, rows = _rows(200, 10.0)
    summ = kind.summarise(spec, rows)
    # make the calibrated interval look as bad as possible: the paper's claim must not see it
    summ.loc[summ["method"] == "dp-calibrated", "coverage"] = 0.0
    claims = evaluate_claims("sarathy-vadhan-coverage", None, summ).set_index("claim_id")
    assert claims.loc["sv-coverage", "verdict"] == "confirmed"
    assert "calibrated" not in claims.loc["sv-coverage", "measured"]


@pytest.mark.parametrize("refused", [True, False])
def test_results_page_shows_refused_cells_as_refused(refused, tmp_path):
    from studies.report import _key_tables

    spec, kind, rows = _rows(30, 1.0) if refused else _rows(200, 10.0)
    text = "\n".join(_key_tables(spec, kind.summarise(spec, rows)))
    assert ("refused" in text) == refused


def test_quick_reproduction_end_to_end(tmp_path):
    r = reproduce("sarathy-vadhan-coverage", quick=True, out=tmp_path)
    summ = pd.read_csv(r.summary_csv)
    cal = summ[summ["method"] == "dp-calibrated"]
    assert len(cal) and (cal["refused"] == cal["datasets"]).all()
    claims = pd.read_csv(r.claims_csv).set_index("claim_id")
    # a quick grid carries no verdict (it is too small to test a claim) ...
    assert claims.loc["sv-coverage", "verdict"] == QUICK_VERDICT
    # ... but its numbers go through the same judgement, which the paper's claim passes
    judged = evaluate_claims("sarathy-vadhan-coverage", None, summ).set_index("claim_id")
    assert judged.loc["sv-coverage", "verdict"] == "confirmed"
