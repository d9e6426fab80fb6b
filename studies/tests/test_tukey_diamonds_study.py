"""studies.tukey_diamonds: its premise (TukeyEM at ε = ∞ is the coordinate-wise median of the
partition models) and, slow, the documented diagnosis on Diamonds."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpreg._random import simulation_generator
from dpreg.linear_model import TukeyEM
from dpreg.multivariate.tukey import partition_models


def test_tukey_at_infinite_epsilon_is_the_coordinate_median_of_the_partition_models():
    # the study reads the spread of np.median(partition_models(...)) over partitions as the
    # non-private part of TukeyEM's seed-to-seed variation: equal up to rounding, while another
    # partition's median is visibly different
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = X @ np.array([1.0, 2.0, 3.0]) + rng.normal(size=400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the ε = ∞ not-private warning
        est = TukeyEM(epsilon=math.inf, delta=1e-5, n_models=20,
                      random_state=simulation_generator(3)).fit(X, y)
    Z = np.column_stack([np.ones(400), X])
    med = np.median(partition_models(Z, y, 20, simulation_generator(3)), axis=0)
    fitted = np.r_[est.intercept_, est.coef_]
    np.testing.assert_allclose(fitted, med, rtol=1e-9, atol=1e-9)
    other = np.median(partition_models(Z, y, 20, simulation_generator(4)), axis=0)
    assert np.max(np.abs(fitted - other)) > 1e-3


@pytest.mark.slow
def test_diamonds_diagnosis_holds():
    pytest.importorskip("plotnine")
    from studies.tukey_diamonds import diagnose

    res = diagnose(seeds=5)
    assert res["ols_test_r2"] == pytest.approx(0.9105, abs=1e-3)
    big = res["aggregation"][0]
    assert big["m"] == 1000
    # the mean of the models is near OLS on every partition, the coordinate-wise median is not
    assert big["mean_model_test_r2_over_partitions"]["q10"] > 0.88
    assert big["coordinate_median_test_r2_over_partitions"]["median"] < 0.8
    by = {(t["variant"], t["epsilon"]): t for t in res["tukey"]}
    assert by[("without x, y, z", math.inf)]["median_test_r2"] > 0.89
    assert by[("all nine features, raw units (amin-r2)", math.inf)]["median_test_r2"] < 0.85
