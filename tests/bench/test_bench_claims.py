"""Every reproduction's claims table has the documented columns and verdicts."""

import pandas as pd
import pytest

from dpreg.bench import reproduce
from dpreg.bench.claims import CLAIM_COLUMNS, QUICK_NOTE, QUICK_VERDICT, evaluate_claims


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return {name: reproduce(name, quick=True, out=root)
            for name in ("alabi-fig5", "alabi-stock", "amin-r2")}


def test_claims_have_the_documented_columns(runs):
    for r in runs.values():
        claims = pd.read_csv(r.claims_csv)
        assert list(claims.columns) == list(CLAIM_COLUMNS)
        # a quick grid is too small to test a claim: no verdict, and the report says so
        assert (claims["verdict"] == QUICK_VERDICT).all()
        assert r.to_dict()["evidence"] == QUICK_NOTE
    assert evaluate_claims("alabi-fig5", None, pd.DataFrame()).empty
