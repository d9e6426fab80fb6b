"""DP Theil-Sen as plan -> statistics -> release -> result (issue 31 Phase B): the plan reads
no data, the spec's pipeline is the public function bit for bit, per-group releases are the
single fit's, and every random choice of the release is drawn through dpreg.mechanisms."""

from __future__ import annotations

import math
import pathlib
import re

import numpy as np
import pytest

from dpreg import methods
from dpreg.exceptions import InvalidInputError
from dpreg.privacy import Ledger, Neighbouring, PureDP
from dpreg.simple import (
    plan_theil_sen,
    release_theil_sen,
    theil_sen,
    theil_sen_result,
    theil_sen_statistics,
)
from dpreg.simple._common import div_down

MEDIANS = ("exp", "wide", "smooth")


def _data(n=40, seed=3):
    g = np.random.default_rng(seed)
    x = g.uniform(0, 1, n)
    return x, 0.3 + 0.4 * x + g.normal(0, 0.2, n)


@pytest.mark.parametrize("median", MEDIANS)
def test_the_plan_reads_no_data_and_holds_every_public_fact(median):
    """Built from public inputs alone (no x, y anywhere): every field checked."""
    theta = 0.05 if median == "wide" else None
    plan = plan_theil_sen(epsilon=1.2, output_range=(-1, 2), x_bounds=(0, 1), median=median,
                          pairs="all", theta=theta, dof=4, n=50)
    assert plan.method == f"theil-sen-{median}"
    assert plan.budget == PureDP(1.2) and plan.relation == Neighbouring.REPLACE_ONE
    assert plan.n == 50 and plan.d == 2
    assert dict(plan.parts) == dict(zip(("p1", "p2"), PureDP(1.2).split([1, 1])))
    assert sum(p.epsilon for p in plan.parts.values()) <= 1.2
    assert dict(plan.sensitivities) == {"pairs_per_record": 49, "entries_per_record": 98,
                                        "rank_utility": 1.0}
    eps_t = plan.parts["p1"].epsilon
    assert plan.noise["mechanism_epsilon"] == (eps_t if median == "smooth"
                                               else div_down(eps_t, 98))
    o = plan.options
    assert o["median"] == median and o["estimand"] == "predictions" and o["pairs"] == "all"
    assert o["x_eval"] == (0.25, 0.75) and o["output_range"] == (-1.0, 2.0)
    assert o["x_bounds"] == (0.0, 1.0) and o["dof"] == 4
    assert o["theta"] == (0.05 if median == "wide" else 0.0)
    assert o["algorithm"] == "materialise"  # n = 50 < AUTO_FAST_MIN_N
    # the slope: one target at the whole ε; k matchings: k is the bound
    slope = plan_theil_sen(epsilon=2.0, output_range=(-3, 3), median=median,
                           estimand="slope", pairs=3, n=1000)
    assert dict(slope.parts) == {"slope": PureDP(2.0)} and slope.d == 1
    assert slope.sensitivities["entries_per_record"] == 6
    assert slope.options["x_eval"] == ()


def test_the_plan_refuses_bad_public_inputs_before_anything():
    with pytest.raises(InvalidInputError, match="n must"):
        plan_theil_sen(epsilon=1.0, output_range=(-1, 2), n=1)
    with pytest.raises(InvalidInputError, match="median"):
        plan_theil_sen(epsilon=1.0, output_range=(-1, 2), median="mean", n=10)
    with pytest.raises(InvalidInputError, match="theta"):
        plan_theil_sen(epsilon=1.0, output_range=(-1, 2), theta=0.1, n=10)
    with pytest.raises(InvalidInputError, match="10,000"):
        plan_theil_sen(epsilon=1.0, output_range=(-1, 2), median="smooth", n=10_001)
    with pytest.raises(InvalidInputError, match="plan is for n = 10"):
        theil_sen_statistics(*_data(11), plan_theil_sen(epsilon=1.0, output_range=(-1, 2),
                                                        n=10))


@pytest.mark.parametrize("median", MEDIANS)
@pytest.mark.parametrize("pairs", ["all", 2])
def test_the_spec_pipeline_is_the_public_function_bit_for_bit(median, pairs):
    spec = methods.get(f"theil-sen-{median}")
    x, y = _data()
    for seed in range(3):
        want = theil_sen(x, y, epsilon=1.3, output_range=(-1, 2), x_bounds=(0, 1),
                         median=median, pairs=pairs, rng=seed)
        plan = spec.plan(epsilon=1.3, delta=None, n=x.size, x_bounds=[(0, 1)],
                         y_bounds=(-1, 2), fit_intercept=True,
                         options={"pairs": pairs, "output_range": (-1, 2)})
        release = spec.release(spec.statistics(x[:, None], y, plan), plan,
                               np.random.default_rng(seed), seeded=True)
        got = theil_sen_result(release)
        assert (got.slope, got.intercept) == (want.slope, want.intercept)
        assert got.predictions == want.predictions and got.extra == want.extra
        assert got.privacy == want.privacy
        assert release.privacy.budget == spec.budget(epsilon=1.3, delta=None, options={})


def test_the_spec_plan_refuses_delta():
    with pytest.raises(InvalidInputError, match="takes no delta"):
        methods.get("theil-sen-exp").plan(epsilon=1.0, delta=1e-6, n=10, x_bounds=[(0, 1)],
                                          y_bounds=(0, 1), fit_intercept=True, options={})


def test_the_public_function_charges_once_after_validation_and_infinity_is_exact():
    x, y = _data()
    led = Ledger(PureDP(5.0))
    with pytest.raises(InvalidInputError):
        theil_sen(x, y, epsilon=1.0, output_range=(-1, 2), median="wide", theta=9.0,
                  ledger=led)
    assert len(led.events()) == 0
    theil_sen(x, y, epsilon=1.0, output_range=(-1, 2), ledger=led, rng=1)
    assert len(led.events()) == 1
    # ε = ∞: the release is the exact median of the clipped pairwise predictions
    plan = plan_theil_sen(epsilon=math.inf, output_range=(-1, 2), n=x.size)
    res = theil_sen_result(release_theil_sen(theil_sen_statistics(x, y, plan), plan,
                                             np.random.default_rng(0)))
    i, j = np.triu_indices(x.size, 1)
    pred = ((x[j] - 0.25) * y[i] + (0.25 - x[i]) * y[j]) / (x[j] - x[i])
    assert res.predictions[0.25] == pytest.approx(float(np.median(np.clip(pred, -1, 2))))


@pytest.mark.parametrize("median", MEDIANS)
@pytest.mark.parametrize("pairs", ["all", 3])
def test_per_group_releases_are_single_fits_with_their_statement(median, pairs):
    """The lean per-group release (one plan per group size) is the full core bit for bit,
    privacy statement included (it used to carry none)."""
    spec = methods.get(f"theil-sen-{median}")
    kw = dict(epsilon=0.8, x_bounds=(0, 1), y_bounds=(-1, 2),
              options={"pairs": pairs, "output_range": (-1, 2)})
    full = spec.group_release(validated=False, **kw)
    lean = spec.group_release(validated=True, **kw)
    for i, n in enumerate((7, 12, 12, 30)):
        x, y = _data(n, seed=10 + i)
        a = full(x, y, np.random.default_rng(i))
        b = lean(x, y, np.random.default_rng(i))
        assert (a.slope, a.intercept, a.predictions) == (b.slope, b.intercept, b.predictions)
        assert b.privacy is not None and b.privacy == a.privacy


def test_no_random_draw_of_the_exact_fast_sampler_outside_mechanisms():
    """The exact-fast sampler's random choices go through dpreg.mechanisms functions
    (envelope_block, envelope_accept, uniform_integer, random_ordered_pairs): no draw from a
    generator in simple/fast."""
    root = pathlib.Path(__file__).resolve().parents[2] / "src" / "dpreg" / "simple" / "fast"
    draw = re.compile(r"\.(random|integers|uniform|normal|gumbel|choice|permutation|"
                      r"exponential|laplace|standard_\w+)\(")
    hits = [f"{p.name}:{k + 1}" for p in sorted(root.glob("*.py"))
            for k, line in enumerate(p.read_text().splitlines()) if draw.search(line)]
    assert hits == []
