"""Vectorised replicates have the distribution of independent single releases."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from _batch_draws import dp_intercept_draws, gradient_descent_draws, noisy_stats_draws
from _stats import ALPHA
from dpreg._random import simulation_generator
from dpreg.exceptions import InvalidInputError
from dpreg.methods import dp_gd as dp_gd_spec
from dpreg.replicates import BATCHED, replicate_predictions, replicate_predictions_many
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
        r = gradient_descent(x, y, x_bounds=XB, y_bounds=YB, n_iter=20, **kw)
    else:
        r = theil_sen(x, y, output_range=OUT, x_bounds=XB, median=method.rsplit("-", 1)[1], **kw)
    return np.nan if r.failed else r.predictions[0.25]


def single_draws(method, x, y, eps, seeds):
    """``single(method, x, y, eps, s)`` for every seed s: the non-Theil-Sen methods as rows of
    one batch (bit for bit the single fits, tests/_batch_draws.py), Theil-Sen one by one."""
    kw = dict(epsilon=eps, x_bounds=XB, y_bounds=YB)
    if method == "noisy-stats":
        r = noisy_stats_draws(x, y, seeds, **kw)
        return r["slope"] * 0.25 + r["intercept"]
    if method == "dp-intercept":
        return dp_intercept_draws(x, y, seeds, epsilon=eps, y_bounds=YB)
    if method == "dp-gd":
        slope, intercept = gradient_descent_draws(x, y, seeds, steps=20, **kw)
        return slope * 0.25 + intercept
    return np.array([single(method, x, y, eps, s) for s in seeds])


METHODS = ["noisy-stats", "dp-intercept", "theil-sen-exp", "theil-sen-wide", "theil-sen-smooth",
           "dp-gd"]


@pytest.mark.parametrize("method", METHODS)
def test_same_distribution_as_single_calls(method):
    x, y = data()
    eps, n_draws = 2.0, 1500
    reps = replicate_predictions(method, x, y, epsilon=eps, x_bounds=XB, y_bounds=YB,
                                 trials=n_draws, output_range=OUT, n_iter=20, rng=1)[:, 0]
    singles = single_draws(method, x, y, eps, range(1000, 1000 + n_draws))
    assert np.isnan(reps).mean() == pytest.approx(np.isnan(singles).mean(), abs=0.05)
    a, b = reps[~np.isnan(reps)], singles[~np.isnan(singles)]
    assert stats.ks_2samp(a, b).pvalue > ALPHA
    # power: replicates at 4x the budget are distinguishable from the single calls
    wrong = replicate_predictions(method, x, y, epsilon=4 * eps, x_bounds=XB, y_bounds=YB,
                                  trials=n_draws, output_range=OUT, n_iter=20, rng=2)[:, 0]
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


# ------------------------------------------------ many data sets at once (the demo's tracts)
SIZES = [30, 57, 30, 2, 400, 31, 30, 3, 57, 30]  # repeated and distinct n, in mixed order


def many_data(sizes=SIZES, seed=5):
    g = np.random.default_rng(seed)
    xs = [g.uniform(0, 1, n) for n in sizes]
    return xs, [np.clip(0.3 + 0.4 * x + g.normal(0, 0.1, x.size), 0, 1) for x in xs]


def one_at_a_time(method, xs, ys, rngs, **kw):
    return [replicate_predictions(method, x, y, rng=r, **kw) for x, y, r in zip(xs, ys, rngs)]


def seeds(k, base=100):
    return [np.random.default_rng(base + i) for i in range(k)]


@pytest.mark.parametrize("method,eps,trials", [
    ("dp-gd", 2.0, 6), ("dp-intercept", 0.5, 7),
    # small ε and few replicates: every number k of usable noisy slopes (0, 1, several) occurs,
    # so the intercept calls of every k (the grid release at k = 1) are exercised
    ("noisy-stats", 0.1, 4), ("noisy-stats", 8.0, 5),
    ("theil-sen-exp", 1.0, 3),  # not batched: the reference loop itself
])
def test_many_equals_each_data_set_with_its_own_generator(method, eps, trials, monkeypatch):
    """replicate_predictions_many is replicate_predictions per data set, bit for bit (every
    generator's keys taken in the order its own call takes them); DP-GD in batches of 3 (of
    sorted sizes), so the batching and the re-ordering by n are exercised."""
    monkeypatch.setattr(dp_gd_spec, "_GD_BATCH", 3)
    xs, ys = many_data()
    kw = dict(epsilon=eps, x_bounds=XB, y_bounds=YB, trials=trials, output_range=OUT, n_iter=20)
    got = replicate_predictions_many(method, xs, ys, rngs=seeds(len(xs)), **kw)
    want = one_at_a_time(method, xs, ys, seeds(len(xs)), **kw)
    for i, (a, b) in enumerate(zip(got, want)):
        assert a.shape == (trials, 2)
        assert np.array_equal(a, b, equal_nan=True), (method, i)
    if method == "noisy-stats" and eps < 1:
        usable = {int((~np.isnan(w[:, 0])).sum()) for w in want}
        assert {0, 1}.issubset(usable) and max(usable) > 1, usable
    # the test can see a generator given to the wrong data set: the same-size data sets
    # 0, 2, 6 and 9 (n = 30) release differently with one another's generators
    swapped = replicate_predictions_many(method, xs, ys, rngs=seeds(len(xs))[::-1], **kw)
    for i in (0, 2, 6, 9):
        assert not np.array_equal(swapped[i], want[i], equal_nan=True)


def test_many_takes_each_generators_keys_in_call_order():
    """After the batch every generator is where its own call leaves it (the batched calls took
    exactly its keys, in number and order): the next draw of each agrees."""
    xs, ys = many_data()
    for method in BATCHED:
        a, b = seeds(len(xs)), seeds(len(xs))
        kw = dict(epsilon=1.0, x_bounds=XB, y_bounds=YB, trials=5, n_iter=10)
        replicate_predictions_many(method, xs, ys, rngs=a, **kw)
        one_at_a_time(method, xs, ys, b, **kw)
        assert [g.integers(2**62) for g in a] == [g.integers(2**62) for g in b], method


def test_many_falls_back_for_simulation_secure_and_infinite_epsilon():
    """Simulation generators (floating-point noise) and ε = ∞ run one data set at a time (the
    same arrays); secure generators give replicates of the right shape; mixed lists too."""
    xs, ys = many_data(SIZES[:4])
    kw = dict(x_bounds=XB, y_bounds=YB, trials=4, n_iter=10)
    for method in BATCHED:
        mixed = [simulation_generator(1), np.random.default_rng(2), simulation_generator(3),
                 np.random.default_rng(4)]
        again = [simulation_generator(1), np.random.default_rng(2), simulation_generator(3),
                 np.random.default_rng(4)]
        got = replicate_predictions_many(method, xs, ys, epsilon=2.0, rngs=mixed, **kw)
        want = one_at_a_time(method, xs, ys, again, epsilon=2.0, **kw)
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(got, want)), method
        exact = replicate_predictions_many(method, xs, ys, epsilon=np.inf, rngs=seeds(4), **kw)
        ref = one_at_a_time(method, xs, ys, seeds(4), epsilon=np.inf, **kw)
        assert all(np.array_equal(a, b) for a, b in zip(exact, ref)), method
        secure = replicate_predictions_many(method, xs, ys, epsilon=2.0, rngs=[None] * 4, **kw)
        assert [s.shape for s in secure] == [(4, 2)] * 4


@pytest.mark.parametrize("bad,match", [
    (dict(xs_last=np.array([0.5, np.nan])), "finite"),
    (dict(trials=0), "trials"),
    (dict(n_iter=0), "n_iter"),
    (dict(rngs_short=True), "one entry per data set"),
    (dict(method="ols"), "method"),
])
def test_many_checks_everything_before_any_draw(bad, match):
    xs, ys = many_data(SIZES[:3])
    if "xs_last" in bad:
        xs[-1], ys[-1] = bad["xs_last"], np.array([0.1, 0.2])
    gens = seeds(3)
    rngs = gens[:2] if bad.get("rngs_short") else gens
    with pytest.raises(InvalidInputError, match=match):
        replicate_predictions_many(bad.get("method", "dp-gd"), xs, ys, epsilon=1.0, x_bounds=XB,
                                   y_bounds=YB, trials=bad.get("trials", 3),
                                   n_iter=bad.get("n_iter", 10), rngs=rngs)
    assert [g.integers(2**62) for g in gens] == [g.integers(2**62) for g in seeds(3)]


def test_demo_releases_are_the_per_tract_replicates(tmp_path):
    """The demo's table is what replicate_predictions gives per tract and method with the
    tract's own generator (group_seed_sequence(seed, (tract, method))): the batched methods
    hand each tract its own replicates."""
    from dpreg.data import load_oa_simulated
    from dpreg.demo import DEMO_METHODS, OUTPUT_RANGE, run_demo
    from dpreg.grouped import group_seed_sequence

    report = run_demo(tmp_path, trials=3, max_tracts=6, seed=4, progress=False)
    table = pd.read_csv(report["files"]["releases"])
    frame = load_oa_simulated().frame
    tracts = list(dict.fromkeys(frame["tract"].tolist()))[:6]
    root = np.random.SeedSequence(4)
    for m in DEMO_METHODS:
        rows = table[table["method"] == m]
        assert rows["tract"].astype(str).tolist() == [str(t) for t in tracts]
        for tract, (_, row) in zip(tracts, rows.iterrows()):
            part = frame[frame["tract"] == tract]
            reps = replicate_predictions(
                m, part["parent_rank"].to_numpy(float), part["child_rank"].to_numpy(float),
                epsilon=16.0, x_bounds=XB, y_bounds=YB, trials=3, output_range=OUTPUT_RANGE,
                rng=np.random.default_rng(group_seed_sequence(root, (str(tract), m))))
            assert (row["p25"], row["p75"]) == pytest.approx(tuple(reps[0]), rel=1e-12,
                                                             nan_ok=True), (m, tract)


@pytest.mark.skipif(sys.platform != "linux", reason="the demo's workers are forked (Linux)")
def test_demo_workers_do_not_change_the_files(tmp_path):
    """``run_demo(workers=2)`` runs each method's replicates in a forked worker: the releases
    and the figure are byte-identical to the in-process run (every tract and method has its
    own generator), the summary too apart from its timing column."""
    from dpreg.demo import run_demo

    kw = dict(trials=3, max_tracts=8, seed=5, progress=False)
    one = run_demo(tmp_path / "one", workers=1, **kw)
    two = run_demo(tmp_path / "two", workers=2, **kw)
    for key in ("releases", "figure"):
        assert Path(one["files"][key]).read_bytes() == Path(two["files"][key]).read_bytes(), key
    drop = ["seconds"]
    pd.testing.assert_frame_equal(pd.read_csv(one["files"]["summary"]).drop(columns=drop),
                                  pd.read_csv(two["files"]["summary"]).drop(columns=drop))
    assert [m["method"] for m in one["methods"]] == [m["method"] for m in two["methods"]]
    with pytest.raises(InvalidInputError, match="workers"):
        run_demo(tmp_path / "bad", workers=0, **kw)
