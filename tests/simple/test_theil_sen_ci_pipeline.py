"""The Theil-Sen slope interval as plan -> statistics -> release -> result (issue 31 Phase B):
the plan is public (reads no data, draws nothing), the public functions are compositions of
the pipeline (bit for bit), and the design facts the plan takes from n alone equal the drawn
design's."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpreg._spec import Release, ReleasePlan
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import NoUncertaintyError
from dpreg.privacy import Ledger, PureDP
from dpreg.simple import (
    plan_theil_sen_ci,
    plan_theil_sen_with_ci,
    release_theil_sen_ci,
    release_theil_sen_with_ci,
    theil_sen_ci,
    theil_sen_ci_result,
    theil_sen_ci_statistics,
    theil_sen_with_ci,
    theil_sen_with_ci_result,
)
from dpreg.simple.ci import public_design_size, public_null_variance
from dpreg.simple.pairs import make_design, null_variance_max


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 9, 10, 31])
def test_public_design_size_every_number_of_matchings(n):
    """Every legal number of matchings, including all rounds of an odd n (each vertex then
    sits out once: k = n − 1, not n).  Failed before: public_design_size(5, 5) gave k = 5."""
    top = n - 1 if n % 2 == 0 else n
    for m in ["all", *range(1, top + 1)]:
        d = make_design(n, m, np.random.default_rng(n + (0 if m == "all" else m)))
        assert public_design_size(n, m) == (d.k, 2 * d.size), m


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 9, 10, 31, 200])
def test_public_null_variance_is_the_drawn_designs(n):
    top = n - 1 if n % 2 == 0 else n
    for m in ["all", *range(1, min(top, 12) + 1), top]:
        for seed in range(3):
            d = make_design(n, m, np.random.default_rng(seed))
            assert public_null_variance(n, m, "bound") == null_variance_max(d)  # bit for bit


def _data(n, seed=0):
    g = np.random.default_rng(seed)
    x = g.uniform(0, 1, n)
    return x, 0.5 * x + g.normal(0, 0.1, n)


def test_plan_reads_no_data_and_holds_every_public_fact():
    plan = plan_theil_sen_ci(epsilon=2.0, ci_alpha=0.1, output_range=(-2, 3), ci_method="tight",
                             pairs=3, return_estimate=True, n=101)
    assert isinstance(plan, ReleasePlan)
    assert plan.budget == PureDP(2.0) and plan.n == 101 and plan.d == 1
    assert [p.epsilon for p in plan.parts.values()] == [p.epsilon for p in
                                                        PureDP(2.0).split([1, 1, 1])]
    assert sum(p.epsilon for p in plan.parts.values()) <= 2.0
    k, size = public_design_size(101, 3)
    assert plan.sensitivities == {"pairs_per_record": 3, "entries_per_record": 6,
                                  "rank_utility": 1.0} and k == 3
    assert plan.options["multiset_size"] == size
    assert plan.noise["mechanism_epsilon_lower"] * 6 <= plan.parts["lower"].epsilon
    assert plan.options["null_variance_value"] == public_null_variance(101, 3)
    assert plan.options["method"] == "tight" and plan.options["targets"]["search"] == "scan"
    assert 0 < plan.options["targets"]["q_lower"] < 0.5 < plan.options["targets"]["q_upper"]
    assert plan.options["theta"] == 5 / max(2.0 * 101, 200.0)  # default_ci_theta
    # the calibrated/tight rule is the public one: "auto" at a small ε·n is tight
    assert plan_theil_sen_ci(epsilon=0.5, output_range=(-2, 3), ci_method="auto",
                             n=40).options["method"] == "tight"
    assert plan_theil_sen_ci(epsilon=10.0, output_range=(-2, 3), ci_method="auto",
                             n=400).options["method"] == "calibrated"
    with pytest.raises(NoUncertaintyError):
        plan_theil_sen_ci(epsilon=0.5, output_range=(-2, 3), ci_method="calibrated", n=40)
    with pytest.raises(InvalidInputError, match="alpha"):
        plan_theil_sen_ci(epsilon=1.0, ci_alpha=1.5, output_range=(-2, 3), n=40)
    inf = plan_theil_sen_ci(epsilon=math.inf, output_range=(-2, 3), n=40)
    assert inf.options["targets"] is None and not inf.noise


@pytest.mark.parametrize("method", ["union", "tight", "calibrated", "auto"])
@pytest.mark.parametrize("n,pairs,est", [(60, "all", False), (450, "all", True),
                                         (81, 4, True)])
def test_pipeline_is_the_public_function_bit_for_bit(method, n, pairs, est):
    x, y = _data(n)
    eps = 8.0 if method == "calibrated" else 2.0
    kw = dict(epsilon=eps, ci_alpha=0.1, output_range=(-2, 3), ci_method=method, pairs=pairs,
              return_estimate=est)
    try:
        public = theil_sen_ci(x, y, rng=5, **kw)
    except NoUncertaintyError:
        with pytest.raises(NoUncertaintyError):
            plan_theil_sen_ci(n=n, **kw)
        return
    plan = plan_theil_sen_ci(n=n, **kw)
    rel = release_theil_sen_ci(theil_sen_ci_statistics(x, y, plan), plan,
                               np.random.default_rng(5), seeded=True)
    assert isinstance(rel, Release)
    mine = theil_sen_ci_result(rel)
    assert (mine.low, mine.high, mine.estimate) == (public.low, public.high, public.estimate)
    assert mine.details == public.details
    assert mine.privacy.as_dict() == public.privacy.as_dict()


def test_ledger_charged_once_before_draws_and_not_on_bad_input():
    x, y = _data(50)
    led = Ledger(PureDP(10.0))
    theil_sen_ci(x, y, epsilon=1.0, output_range=(-2, 3), rng=1, ledger=led)
    assert led.spent() == PureDP(1.0)
    with pytest.raises(InvalidInputError):
        theil_sen_ci(x, y, epsilon=1.0, output_range=(-2, 3), rng=1, ledger=led, ci_alpha=2.0)
    with pytest.raises(InvalidInputError):
        theil_sen_with_ci(x, y, epsilon=1.0, ci_alpha=2.0, x_bounds=(0, 1), y_bounds=(-1, 2),
                          rng=1, ledger=led)
    assert led.spent() == PureDP(1.0)


@pytest.mark.parametrize("median", ["exp", "wide", "smooth"])
@pytest.mark.parametrize("ci_method", ["auto", "union", "tight"])
def test_line_with_ci_pipeline_bit_for_bit(median, ci_method):
    x, y = _data(120, 3)
    kw = dict(epsilon=4.0, ci_alpha=0.05, x_bounds=(0, 1), y_bounds=(-1, 2), median=median,
              ci_method=ci_method)
    public = theil_sen_with_ci(x, y, rng=9, **kw)
    plan = plan_theil_sen_with_ci(n=x.size, **kw)
    assert plan.options["line"].budget.epsilon + plan.options["ci"].budget.epsilon <= 4.0
    from dpreg.simple import theil_sen_statistics

    rel = release_theil_sen_with_ci(theil_sen_statistics(x, y, plan.options["line"]), plan,
                                    np.random.default_rng(9), seeded=True)
    mine = theil_sen_with_ci_result(rel)
    assert mine.params.tolist() == public.params.tolist()
    assert mine.conf_int(0.05).equals(public.conf_int(0.05))
    assert mine.privacy.as_dict() == public.privacy.as_dict()
    assert mine.uncertainty == public.uncertainty


def test_line_with_ci_infinite_epsilon_warns_and_equals_nonprivate():
    x, y = _data(40)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = theil_sen_with_ci(x, y, epsilon=math.inf, ci_alpha=0.05, x_bounds=(0, 1),
                                y_bounds=(-1, 2), rng=1)
    assert sum("infinite privacy budget" in str(m.message) for m in w) == 2
    from dpreg.simple import nonprivate_theil_sen_ci

    ref = nonprivate_theil_sen_ci(x, y, ci_alpha=0.05, null_variance="bound",
                                  approximation="normal")
    lo, hi = res.conf_int(0.05).loc["x"]
    assert (lo, hi) == (ref.low, ref.high)
