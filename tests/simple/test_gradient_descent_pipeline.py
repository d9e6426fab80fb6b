"""DP-GD as plan -> statistics -> release -> result (issue 31 item 2): the variant -> budget rule
(exhaustively), the public plan (no data), the spec's pipeline and the grouped rows against the
public single fit, bit for bit."""

import inspect
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from dpreg import ZCDP, ApproxDP, Ledger, PureDP, fit_by_group, methods
from dpreg.exceptions import InvalidInputError
from dpreg.privacy import zcdp_epsilon, zcdp_rho_for_approx
from dpreg.simple import (
    VARIANT_PARAMETERS,
    gradient_descent,
    gradient_descent_result,
    gradient_descent_statistics,
    plan_gradient_descent,
    release_gradient_descent,
    variant_budget,
    variant_parameters,
)

pytestmark = pytest.mark.filterwarnings("ignore::dpreg.PrivacyLeakWarning")

#: written out independently of the library's table: what each variant takes
TAKES = {"pure": {"epsilon"}, "zcdp": {"rho"}, "approx": {"epsilon", "delta"}}
VALUES = {"epsilon": 0.8, "rho": 0.3, "delta": 1e-6}
BUDGET = {"pure": {"epsilon": 1.0}, "zcdp": {"rho": 0.5}, "approx": {"epsilon": 1.0,
                                                                     "delta": 1e-6}}


def test_variant_budget_rule_every_variant_and_every_set_of_parameters():
    assert {k: set(v) for k, v in VARIANT_PARAMETERS.items()} == TAKES
    names = ("epsilon", "rho", "delta")
    for variant in TAKES:
        for r in range(4):
            for given in itertools.combinations(names, r):
                kw = {k: VALUES[k] for k in given}
                extra = sorted(set(given) - TAKES[variant])
                missing = sorted(TAKES[variant] - set(given))
                if extra or missing:
                    with pytest.raises(InvalidInputError) as err:
                        variant_budget(variant, **kw)
                    # the error names the first offending parameter
                    assert (extra or missing)[0] in str(err.value)
                    continue
                charged, calib = variant_budget(variant, **kw)
                if variant == "pure":
                    assert charged == calib == PureDP(0.8)
                elif variant == "zcdp":
                    assert charged == calib == ZCDP(0.3)
                else:
                    assert charged == ApproxDP(0.8, 1e-6)
                    assert calib == ZCDP(zcdp_rho_for_approx(0.8, 1e-6))
                    assert zcdp_epsilon(calib.rho, 1e-6) <= 0.8  # the conversion is within
    with pytest.raises(InvalidInputError, match="variant"):
        variant_budget("gauss", epsilon=1.0)


def test_variant_parameters_from_a_callers_epsilon_and_delta():
    assert variant_parameters("pure", 0.8, 1e-6) == {"epsilon": 0.8, "rho": None, "delta": None}
    assert variant_parameters("zcdp", 0.8, 1e-6) == {"epsilon": None, "rho": 0.8 ** 2 / 2,
                                                     "delta": None}
    assert variant_parameters("approx", 0.8, 1e-6) == {"epsilon": 0.8, "rho": None,
                                                       "delta": 1e-6}
    # always what the variant takes: the rule accepts it
    for variant in TAKES:
        variant_budget(variant, **variant_parameters(variant, 0.8, 1e-6))


@pytest.mark.parametrize("variant", list(TAKES))
def test_the_plan_reads_no_data_and_holds_every_public_field(variant):
    params = set(inspect.signature(plan_gradient_descent).parameters)
    assert params == {"variant", "epsilon", "rho", "delta", "x_bounds", "y_bounds", "tau",
                      "n_iter", "x_eval", "n", "steps"}  # no data argument (steps: deprecated)
    plan = plan_gradient_descent(variant=variant, **BUDGET[variant], x_bounds=(-1, 3),
                                 y_bounds=(0, 2), tau=0.5, n_iter=40, n=120)
    assert plan.method == "dp-gd" and plan.n == 120 and plan.d == 2
    assert plan.relation.value == "replace-one"
    assert dict(plan.options) == {"variant": variant, "tau": 0.5, "steps": 40,
                                  "x_bounds": (-1.0, 3.0), "y_bounds": (0.0, 2.0),
                                  "x_eval": (0.0, 2.0)}
    rounds, per = plan.parts["rounds"], plan.parts["per_round"]
    if variant == "pure":
        assert plan.budget == rounds == PureDP(1.0)
        assert per.epsilon * 40 <= 1.0 and per.epsilon == pytest.approx(1.0 / 40, rel=1e-15)
        assert dict(plan.sensitivities) == {"l1": 4 * 0.5}
        assert dict(plan.noise) == {"laplace_scale": pytest.approx(2.0 / per.epsilon)}
    else:
        rho = 0.5 if variant == "zcdp" else zcdp_rho_for_approx(1.0, 1e-6)
        assert plan.budget == (ZCDP(0.5) if variant == "zcdp" else ApproxDP(1.0, 1e-6))
        assert rounds == ZCDP(rho)
        assert per.rho * 40 <= rho and per.rho == pytest.approx(rho / 40, rel=1e-15)
        assert dict(plan.sensitivities) == {"l2": pytest.approx(2 * math.sqrt(2) * 0.5)}
        assert dict(plan.noise) == {"gaussian_sd": pytest.approx(2 * 0.5 / math.sqrt(per.rho))}
    # n is optional (per-group and batched releases) and checked when given
    assert plan_gradient_descent(variant=variant, **BUDGET[variant], x_bounds=(0, 1),
                                 y_bounds=(0, 1)).n is None
    with pytest.raises(InvalidInputError, match="n must"):
        plan_gradient_descent(variant=variant, **BUDGET[variant], x_bounds=(0, 1),
                              y_bounds=(0, 1), n=1)


def _data(n=150, seed=3):
    g = np.random.default_rng(seed)
    x = g.uniform(-0.2, 1.2, n)
    return x, 0.3 + 0.4 * x + g.normal(0, 0.2, n)


@pytest.mark.parametrize("variant", list(TAKES))
def test_the_spec_pipeline_is_the_public_function_bit_for_bit(variant):
    spec = methods.get("dp-gd")
    x, y = _data()
    eps, delta = 1.3, 1e-6
    params = variant_parameters(variant, eps, delta)
    for seed in range(4):
        want = gradient_descent(x, y, variant=variant, **params, x_bounds=(0, 1),
                                y_bounds=(0, 1), tau=0.6, n_iter=30, rng=seed)
        plan = spec.plan(epsilon=eps, delta=delta, n=x.size, x_bounds=[(0, 1)],
                         y_bounds=(0, 1), fit_intercept=True,
                         options={"variant": variant, "tau": 0.6, "n_iter": 30})
        release = spec.release(spec.statistics(x[:, None], y, plan), plan,
                               np.random.default_rng(seed), seeded=True)
        got = gradient_descent_result(release)
        assert (got.slope, got.intercept) == (want.slope, want.intercept)
        assert got.predictions == want.predictions and got.extra == want.extra
        assert got.privacy == want.privacy
        assert release.privacy.budget == spec.budget(epsilon=eps, delta=delta,
                                                      options={"variant": variant})


def test_the_public_function_composes_plan_statistics_charge_release():
    x, y = _data()
    led = Ledger(ApproxDP(10.0, 1e-3))
    with pytest.raises(InvalidInputError, match="rho is not used"):
        gradient_descent(x, y, epsilon=1.0, rho=0.5, x_bounds=(0, 1), y_bounds=(0, 1),
                         ledger=led, rng=0)
    assert led.events() == []  # refused before any charge
    plan = plan_gradient_descent(variant="approx", epsilon=1.0, delta=1e-6, x_bounds=(0, 1),
                                 y_bounds=(0, 1), n=x.size)
    r = gradient_descent(x, y, variant="approx", epsilon=1.0, delta=1e-6, x_bounds=(0, 1),
                         y_bounds=(0, 1), ledger=led, rng=0)
    assert [e.budget for e in led.events()] == [plan.budget] == [r.privacy.budget]
    by_hand = gradient_descent_result(release_gradient_descent(
        gradient_descent_statistics(x, y, plan), plan, np.random.default_rng(0), seeded=True))
    assert (by_hand.slope, by_hand.intercept) == (r.slope, r.intercept)


@pytest.mark.parametrize("variant", list(TAKES))
def test_grouped_rows_are_single_fits(variant):
    g = np.random.default_rng(8)
    n = g.choice([2, 5, 40, 130], 25)
    keys = np.repeat(np.arange(25), n)
    x = g.uniform(-0.1, 1.1, keys.size)
    df = pd.DataFrame({"k": keys, "x": x, "y": 0.2 + 0.5 * x + g.normal(0, 0.2, keys.size)})
    kw = dict(method="dp-gd", epsilon=1.2, delta=1e-6, bounds={"x": (0, 1), "y": (0, 1)},
              groups=list(range(26)), random_state=4, variant=variant, n_iter=25)
    loc = fit_by_group(df, "k", "x", "y", **kw)
    ref = fit_by_group(df, "k", "x", "y", backend="reference", **kw)
    assert loc.attrs["backend"] == "local"
    pd.testing.assert_frame_equal(loc, ref)  # the reference loop fits each group alone
    assert (~loc["failed"]).sum() == 25
