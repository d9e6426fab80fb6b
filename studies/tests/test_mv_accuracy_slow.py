"""The accuracy study on real data (studies/mv_accuracy.py), with its checks (slow)."""

import pytest

from studies.mv_accuracy import EPSILONS, METHODS, format_table, study


@pytest.mark.slow
def test_accuracy_study_on_real_data():
    pytest.importorskip("ISLP")
    rows = study(seeds=10)
    print("\n" + format_table(rows))
    by = {(r["dataset"], r["method"], r["epsilon"]): r for r in rows}
    # bikeshare (8,645 rows): every method gets within 0.05 of OLS at ε = 4
    for method in METHODS:
        r = by[("bikeshare", method, 4.0)]
        assert r["median_r2"] > r["ols_r2"] - 0.05, r
    # R² improves with ε for AdaSSP
    for name in ("diabetes", "bikeshare"):
        vals = [by[(name, "AdaSSP", e)]["median_r2"] for e in EPSILONS]
        assert vals[0] <= vals[2]
