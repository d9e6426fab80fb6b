"""Vectorised replicates have the distribution of independent single releases."""

import numpy as np
import pytest
from scipy import stats

from _stats import ALPHA
from dpreg.replicates import replicate_predictions
from dpreg.simple import dp_intercept, gradient_descent, noisy_stats, theil_sen
from dpreg.simple.ranges import default_prediction_range

pytestmark = pytest.mark.filterwarnings("ignore::dpreg.PrivacyLeakWarning")

XB, YB = (0.0, 1.0), (0.0, 1.0)
OUT = default_prediction_range(YB)


def data(n=40, seed=3):
    g = np.random.default_rng(seed)
    x = g.uniform(0, 1, n)
    return x, np.clip(0.4 * x + 0.3 + g.normal(0, 0.1, n), 0, 1)


def single(method, x, y, eps, seed):
    kw = dict(epsilon=eps, rng=seed)
    if method == "noisy-stats":
        r = noisy_stats(x, y, x_bounds=XB, y_bounds=YB, **kw)
    elif method == "dp-intercept":
        r = dp_intercept(x, y, y_bounds=YB, x_bounds=XB, **kw)
    elif method == "dp-gd":
        r = gradient_descent(x, y, x_bounds=XB, y_bounds=YB, steps=20, **kw)
    else:
        r = theil_sen(x, y, output_range=OUT, x_bounds=XB, median=method.rsplit("-", 1)[1], **kw)
    return np.nan if r.failed else r.predictions[0.25]


METHODS = ["noisy-stats", "dp-intercept", "theil-sen-exp", "theil-sen-wide", "theil-sen-smooth",
           "dp-gd"]


@pytest.mark.parametrize("method", METHODS)
def test_same_distribution_as_single_calls(method):
    x, y = data()
    eps, n_draws = 2.0, 1500
    reps = replicate_predictions(method, x, y, epsilon=eps, x_bounds=XB, y_bounds=YB,
                                 trials=n_draws, output_range=OUT, steps=20, rng=1)[:, 0]
    singles = np.array([single(method, x, y, eps, 1000 + i) for i in range(n_draws)])
    assert np.isnan(reps).mean() == pytest.approx(np.isnan(singles).mean(), abs=0.05)
    a, b = reps[~np.isnan(reps)], singles[~np.isnan(singles)]
    assert stats.ks_2samp(a, b).pvalue > ALPHA
    # power: replicates at 4x the budget are distinguishable from the single calls
    wrong = replicate_predictions(method, x, y, epsilon=4 * eps, x_bounds=XB, y_bounds=YB,
                                  trials=n_draws, output_range=OUT, steps=20, rng=2)[:, 0]
    assert stats.ks_2samp(wrong[~np.isnan(wrong)], b).pvalue < ALPHA


def test_matchings_and_shapes():
    x, y = data(30)
    out = replicate_predictions("theil-sen-exp", x, y, epsilon=1.0, x_bounds=XB, y_bounds=YB,
                                trials=7, output_range=OUT, pairs=3, rng=0)
    assert out.shape == (7, 2) and np.all(np.isfinite(out))


def test_infinite_epsilon_is_exact():
    x, y = data()
    out = replicate_predictions("theil-sen-exp", x, y, epsilon=np.inf, x_bounds=XB, y_bounds=YB,
                                trials=3, output_range=OUT, rng=0)
    exact = theil_sen(x, y, epsilon=np.inf, output_range=OUT, x_bounds=XB).predictions[0.25]
    assert np.all(out[:, 0] == exact)
