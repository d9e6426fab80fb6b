"""studies.amin_diamonds_gap: the paper's AdaSSP baseline, run as the paper's numbers were
(all rows, in-sample R²), lands on its Diamonds number 0.216; on amin-r2's split it is lower."""

import pytest


def test_authors_adassp_reproduces_the_papers_diamonds_number():
    pytest.importorskip("plotnine")
    from studies.amin_diamonds_gap import gap, render

    rows = {(r["method"], r["protocol"].split(" ")[0]): r for r in gap(trials=5)}
    ins = rows[("AdaSSP (authors' bounds, not DP)", "in-sample,")]
    split = rows[("AdaSSP (authors' bounds, not DP)", "split")]
    assert abs(ins["median"] - 0.216) < 0.03 and ins["rows"] == 53_940
    assert split["median"] < ins["median"] and split["rows"] == 43_152
    assert rows[("TukeyEM", "split")]["trials"] == 5
    assert "| TukeyEM |" in render(list(rows.values()))
