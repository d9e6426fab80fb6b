"""Many seeded single releases at once, for the statistical tests (import with
``from _batch_draws import ...``).

A statistical test of an estimator's law draws thousands of single fits, ``fit(..., rng=s)``
for s = 0, 1, ...; in seeded mode each costs a few milliseconds of exact-sampler set-up per
mechanism call.  The release functions of the simple methods take a
:class:`~dpreg.mechanisms.batch.RowRandomness` instead: row i of one batched call is **bit for
bit** the single fit with generator i (each row takes its generator's noise keys in the order
the single fit takes them; :mod:`dpreg.mechanisms.batch`).  The helpers below compute the
releases of ``fit(..., rng=s)`` for every seed as rows of such calls -- the very numbers the
loop would produce -- and compare the first ``check`` rows with the public single fit itself,
so that a change in the single fit's wiring (its budget split, sensitivities or call order)
fails the test instead of passing unnoticed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpreg.mechanisms import laplace_rows
from dpreg.mechanisms.batch import RowRandomness
from dpreg.privacy import PureDP
from dpreg.simple import dp_intercept, noisy_stats
from dpreg.simple._noisy_stats import (
    INFERENCE_SPLIT,
    LineStatistics,
    inference_sensitivities,
    noisy_stats_sensitivities,
    noisy_stats_statistics,
    release_dp_intercept,
    release_noisy_stats,
)

__all__ = ["noisy_stats_draws", "dp_intercept_draws", "gradient_descent_draws",
           "one_generator_calls"]


def _data(x: Any, y: Any, count: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``count`` data sets: each of ``x``, ``y`` one 1-D array (the same for every data set)
    or a list of them."""
    def many(v: Any) -> list[np.ndarray]:
        if isinstance(v, np.ndarray) and v.ndim == 1:
            return [v] * count
        return [np.asarray(a, dtype=float) for a in v]

    xs, ys = many(x), many(y)
    assert len(xs) == len(ys) == count, (len(xs), len(ys), count)
    return xs, ys


def _rows(seeds: Sequence[int]) -> RowRandomness:
    return RowRandomness.seeded([np.random.default_rng(int(s)) for s in seeds])


def noisy_stats_draws(x: Any, y: Any, seeds: Sequence[int], *, epsilon: float,
                      x_bounds: tuple[float, float], y_bounds: tuple[float, float],
                      inference: bool = False, check: int = 25) -> dict[str, np.ndarray]:
    """``noisy_stats(x_i, y_i, epsilon=..., x_bounds=..., y_bounds=..., inference=...,
    rng=seeds[i])`` for every i, as arrays over i: ``slope``, ``intercept`` (NaN where ⊥),
    ``failed``, ``noisy_ncov``, ``noisy_nvar`` and, with ``inference``, ``noisy_nvar_y`` and
    ``noisy_xbar`` (NaN where ⊥: the single fit skips them).  ``x``, ``y``: one data set
    (used for every seed) or one per seed, all of one size n.  The first ``check`` seeds are
    compared with :func:`dpreg.simple.noisy_stats` bit for bit."""
    xs, ys = _data(x, y, len(seeds))
    st = [noisy_stats_statistics(xa, ya, x_bounds, y_bounds) for xa, ya in zip(xs, ys)]
    n = {int(s.n[0]) for s in st}
    assert len(n) == 1, "one size n for every data set"
    stats = LineStatistics(*(np.concatenate([getattr(s, f) for s in st])
                             for f in ("n", "xbar", "ybar", "nvar", "ncov")))
    parts = PureDP(epsilon).split(INFERENCE_SPLIT if inference else [1, 1, 1])
    sens = noisy_stats_sensitivities(x_bounds, y_bounds, n.pop())
    if inference:
        sens.update(inference_sensitivities(x_bounds, y_bounds, int(stats.n[0])))
    rows = _rows(seeds)
    draw = release_noisy_stats(stats, x_bounds=x_bounds, y_bounds=y_bounds, parts=parts[:3],
                               rng=rows, sensitivities=sens)
    failed = draw["reason"] != ""
    out = {"slope": np.where(failed, np.nan, draw["slope"]),
           "intercept": np.where(failed, np.nan, draw["intercept"]), "failed": failed,
           "noisy_ncov": draw["noisy_ncov"], "noisy_nvar": draw["noisy_nvar"]}
    if inference:
        ok = np.flatnonzero(~failed)
        nvar_y = np.array([float(np.dot(yc - yc.mean(), yc - yc.mean()))
                           for yc in (np.clip(ya, *y_bounds) for ya in ys)])
        sub = rows.take(ok)  # the single fit: nvar(y), then x̄, after the line (not on ⊥)
        for name, values, part in (("noisy_nvar_y", nvar_y, parts[3]),
                                   ("noisy_xbar", stats.xbar, parts[4])):
            got = np.full(len(seeds), np.nan)
            got[ok] = laplace_rows(values[ok], sensitivity=sens[name[6:]],
                                   epsilon=part.epsilon, rng=sub)
            out[name] = got
    for i in range(min(check, len(seeds))):
        r = noisy_stats(xs[i], ys[i], epsilon=epsilon, x_bounds=x_bounds, y_bounds=y_bounds,
                        inference=inference, release_stats=True, rng=int(seeds[i]))
        assert r.failed == out["failed"][i], i
        want = {"noisy_ncov": r.extra["noisy_ncov"], "noisy_nvar": r.extra["noisy_nvar"]}
        if not r.failed:
            want.update(slope=r.slope, intercept=r.intercept)
            if inference:
                want.update(noisy_nvar_y=r.extra["noisy_nvar_y"],
                            noisy_xbar=r.extra["noisy_xbar"])
        for key, value in want.items():
            assert out[key][i] == value, (i, key, out[key][i], value)
    return out


def dp_intercept_draws(x: Any, y: Any, seeds: Sequence[int], *, epsilon: float,
                       y_bounds: tuple[float, float], check: int = 25) -> np.ndarray:
    """``dp_intercept(x, y, epsilon=..., y_bounds=..., rng=s).intercept`` for every seed s (one
    data set), the first ``check`` compared with the single fit bit for bit."""
    yc = np.clip(np.asarray(y, dtype=float), *y_bounds)
    g = len(seeds)
    out = release_dp_intercept(np.full(g, float(np.mean(yc))), np.full(g, yc.size),
                               y_bounds=y_bounds, epsilon=epsilon, rng=_rows(seeds))
    for i in range(min(check, g)):
        want = dp_intercept(x, y, epsilon=epsilon, y_bounds=y_bounds, rng=int(seeds[i]))
        assert out[i] == want.intercept, (i, out[i], want.intercept)
    return out


def gradient_descent_draws(x: Any, y: Any, seeds: Sequence[int], *, epsilon: float,
                           x_bounds: tuple[float, float], y_bounds: tuple[float, float],
                           steps: int = 80, tau: float = 1.0, check: int = 10
                           ) -> tuple[np.ndarray, np.ndarray]:
    """(slope, intercept) of ``gradient_descent(x, y, epsilon=..., x_bounds=...,
    y_bounds=..., steps=..., tau=..., rng=s)`` (the pure variant) for every seed s (one data
    set): :func:`~dpreg.simple.release_gradient_descent` on one row per seed (each row's
    gradient the single fit's, each round's noise row s's own call); the first ``check``
    compared with the single fit bit for bit."""
    from dpreg.simple import (
        gradient_descent,
        gradient_descent_statistics,
        plan_gradient_descent,
        release_gradient_descent,
    )

    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    plan = plan_gradient_descent(epsilon=epsilon, x_bounds=x_bounds, y_bounds=y_bounds,
                                 tau=tau, n_iter=steps, n=xa.size)
    release = release_gradient_descent(
        gradient_descent_statistics(xa, ya, plan, rows=len(seeds)), plan, _rows(seeds))
    slope, intercept = release.values["slope"], release.values["intercept"]
    for i in range(min(check, len(seeds))):
        r = gradient_descent(xa, ya, epsilon=epsilon, x_bounds=x_bounds, y_bounds=y_bounds,
                             n_iter=steps, tau=tau, rng=int(seeds[i]))
        assert (slope[i], intercept[i]) == (r.slope, r.intercept), (i, slope[i], r.slope)
    return np.asarray(slope), np.asarray(intercept)


def one_generator_calls(call: Any, rows_call: Any, seed: int, n: int, check: int = 100
                        ) -> np.ndarray:
    """``[call(gen) for _ in range(n)]`` with one generator ``gen = default_rng(seed)``
    (successive calls take its successive noise keys), computed as ``rows_call(rows)`` with
    ``rows`` a :class:`RowRandomness` whose every row draws from that one generator -- row j
    takes its j-th key, as call j does.  The first ``check`` values are compared with the
    calls themselves (a twin generator in the same state), bit for bit."""
    out = np.asarray(rows_call(RowRandomness.seeded([np.random.default_rng(seed)] * n)),
                     dtype=float)
    twin = np.random.default_rng(seed)
    calls = [float(call(twin)) for _ in range(min(check, n))]
    assert out[:len(calls)].tolist() == calls, "the batch is not the calls"
    return out
