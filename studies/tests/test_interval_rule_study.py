"""The interval-rule study (studies/interval_rule.py) runs end to end on a few releases: every
rule is judged on the same releases, the library's rule is the library's, and the summary's
numbers are in range."""

import math

from studies.interval_rule import RULES, markdown_table, release_records, summarise_rules


def test_small_study_runs_and_the_rules_share_the_releases():
    df = release_records("boston", "fixed", epsilon=1.0, reps=40, n_boot=100)
    tab = summarise_rules(df)
    assert set(tab["rule"]) <= {r[0] for r in RULES}
    per = tab.groupby("rule")["offered"].max()
    assert per["n·ε rule"] == 0  # boston at ε = 1: n·ε = 506 < 755
    # the library offers exactly what its release rule (k = 3) offers at this share (3.7 %)
    if "release 3, adjusted" in per:
        assert per["library"] == per["release 3, adjusted"]
    ok = tab[tab["offered"] > 0]
    assert ok["coverage"].between(0, 1).all() and (ok["mc_se"] > 0).all()
    assert "| boston (506) | fixed | 1 |" in markdown_table(tab)
    lib = tab[tab["rule"] == "library"]
    assert lib["offered_share"].between(0, 1).all()
    assert all(math.isnan(v) or 0 <= v <= 1 for v in lib["informative_share"])
