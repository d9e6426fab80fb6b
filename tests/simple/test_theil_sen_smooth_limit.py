"""theil-sen-smooth with all pairs materialises the n(n−1) doubled pairwise estimates (time and
memory grow as n²): above the public limit SMOOTH_ALL_PAIRS_MAX_N it is refused -- before
anything is charged or drawn -- with the limit and the alternatives named, in the single fit,
the fit with an interval and every per-group backend."""

import numpy as np
import pandas as pd
import pytest

from dpreg import Ledger, PureDP, fit_by_group
from dpreg.exceptions import InvalidInputError
from dpreg.simple import _theil_sen, theil_sen, theil_sen_with_ci

LIMIT = 40  # the limit is patched down so that the tests stay fast


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(_theil_sen, "SMOOTH_ALL_PAIRS_MAX_N", LIMIT)


def _data(n, seed=0):
    g = np.random.default_rng(seed)
    x = g.uniform(0, 1, n)
    return x, 0.2 + 0.5 * x + g.normal(0, 0.1, n)


def test_the_shipped_limit():
    assert _theil_sen.SMOOTH_ALL_PAIRS_MAX_N == 10_000


def test_smooth_all_pairs_above_the_limit_is_refused_before_the_ledger(small_limit):
    x, y = _data(LIMIT + 1)
    ledger = Ledger(PureDP(10.0))
    with pytest.raises(InvalidInputError) as err:
        theil_sen(x, y, epsilon=1.0, output_range=(-0.5, 1.5), median="smooth", rng=0,
                  ledger=ledger)
    text = str(err.value)
    assert f"n <= {LIMIT:,}" in text and f"n = {LIMIT + 1}" in text
    assert "theil-sen-exp" in text and "theil-sen-wide" in text and "pairs=K" in text
    assert ledger.spent().epsilon == 0
    with pytest.raises(InvalidInputError, match="limited to n"):
        theil_sen_with_ci(x, y, epsilon=1.0, ci_alpha=0.1, x_bounds=(0, 1), y_bounds=(0, 1),
                          median="smooth", ledger=ledger, rng=0)
    assert ledger.spent().epsilon == 0


def test_at_the_limit_and_the_alternatives_still_fit(small_limit):
    x, y = _data(LIMIT)
    assert not theil_sen(x, y, epsilon=1.0, output_range=(-0.5, 1.5), median="smooth",
                         rng=0).failed
    x, y = _data(LIMIT + 25)
    for kw in ({"median": "smooth", "pairs": 3}, {"median": "exp"}, {"median": "wide"}):
        assert not theil_sen(x, y, epsilon=1.0, output_range=(-0.5, 1.5), rng=0, **kw).failed


@pytest.mark.parametrize("backend", ["local", "reference"])
def test_fit_by_group_refuses_a_group_above_the_limit_before_charging(small_limit, backend):
    g = np.random.default_rng(1)
    sizes = [5, LIMIT, LIMIT + 3, 12]
    k = np.repeat(np.arange(4), sizes)
    x = g.uniform(0, 1, k.size)
    df = pd.DataFrame({"k": k, "x": x, "y": 0.3 + 0.4 * x})
    ledger = Ledger(PureDP(10.0))
    kw = dict(method="theil-sen-smooth", epsilon=1.0, bounds={"x": (0, 1), "y": (0, 1)},
              groups=[0, 1, 2, 3], random_state=0, backend=backend)
    with pytest.raises(InvalidInputError, match=f"largest group has {LIMIT + 3} rows"):
        fit_by_group(df, "k", "x", "y", ledger=ledger, **kw)
    assert ledger.spent().epsilon == 0
    ok = fit_by_group(df[df.k != 2], "k", "x", "y", **kw)  # group 2 has no rows now
    assert list(ok["failed"]) == [False, False, True, False]
    ok = fit_by_group(df, "k", "x", "y", pairs=2, **kw)  # matchings: no limit
    assert not ok["failed"].any()
