"""Independent replicates of a simple-regression release on the same data (vectorised).

For **evaluation only**: experiments measure a mechanism's error distribution on a fixed data
set (e.g. Alabi et al.'s Ĉ(0.68), the 68th percentile of |p̃ − p̂| over repeated runs).  Every
replicate is a complete release that costs the full ε, so ``trials`` replicates cost
``trials × ε``; this function therefore charges no ledger and must only be run on data whose
repeated release is acceptable (simulations, public benchmark data).  Each replicate has
exactly the distribution of one call of the corresponding :mod:`dpreg.simple` function.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpreg import _registry
from dpreg._progress import report
from dpreg._random import is_secure, is_simulation
from dpreg._validation import check_bounds, check_epsilon, check_int, check_rng
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms import laplace_rows
from dpreg.mechanisms.batch import RowRandomness
from dpreg.privacy import PureDP
from dpreg.simple import _gradient_descent as _gd
from dpreg.simple._common import check_pairs_arg, check_simple_xy, check_x_eval
from dpreg.simple._noisy_stats import (
    _line_ok,
    _noisy_slope,
    noisy_stats_sensitivities,
    noisy_stats_statistics,
    release_dp_intercept,
    release_noisy_stats,
)
from dpreg.simple._theil_sen import (
    check_theta,
    dp_median_all_pairs_target,
    dp_median_of_doubled,
    resolve_algorithm,
)
from dpreg.simple.pairs import doubled_pair_values, make_design

__all__ = ["replicate_predictions", "replicate_predictions_many", "REPLICABLE", "BATCHED"]

#: the one-x methods of the method registry (the simple harness's DP methods)
REPLICABLE = _registry.names(harness="simple")


def replicate_predictions(
    method: str, x: Any, y: Any, *, epsilon: float, x_bounds: tuple[float, float],
    y_bounds: tuple[float, float], trials: int, x_eval: Any = None,
    output_range: tuple[float, float] | None = None, pairs: str | int = "all",
    theta: float | None = None, dof: int = 3, tau: float = 1.0, steps: int = 80,
    rng: Any = None, algorithm: str = "auto",
) -> np.ndarray:
    """Predictions at the two ``x_eval`` points from ``trials`` independent releases.

    Returns an array of shape ``(trials, 2)``; a row is NaN where that replicate was ⊥.
    ``method`` is one of :data:`REPLICABLE` (DP-GD uses the pure-ε variant).  Theil-Sen
    needs ``output_range`` (the public range of the predictions); ``algorithm`` is as in
    :func:`dpreg.simple.theil_sen` (``"exact-fast"`` draws the replicates from the O(n log n)
    all-pairs sampler, reusing its envelope).
    """
    if method not in REPLICABLE:
        raise InvalidInputError(f"method must be one of {list(REPLICABLE)}; got {method!r}")
    xa, ya = check_simple_xy(x, y)
    eps = check_epsilon(epsilon)
    xb = check_bounds(x_bounds, "x_bounds")
    yb = check_bounds(y_bounds, "y_bounds")
    t = check_int(trials, "trials", minimum=1)
    xe = check_x_eval(x_eval, xb, exactly_two=True)
    gen = check_rng(rng)
    n = xa.size
    out = np.empty((t, 2))
    if method == "noisy-stats":
        parts = PureDP(eps).split([1, 1, 1])
        draw = release_noisy_stats(noisy_stats_statistics(xa, ya, xb, yb).replicate(t),
                                   x_bounds=xb, y_bounds=yb, parts=parts, rng=gen)
        for j, xv in enumerate(xe):
            out[:, j] = draw["slope"] * xv + draw["intercept"]
        out[draw["reason"] != ""] = np.nan
        return out
    if method == "dp-intercept":
        level = np.full(t, float(np.mean(np.clip(ya, *yb))))
        out[:] = release_dp_intercept(level, np.full(t, n), y_bounds=yb, epsilon=eps,
                                      rng=gen)[:, None]
        return out
    if method == "dp-gd":
        plan = _gd._plan(xa, ya, variant="pure", epsilon=eps, rho=None, delta=None,
                         x_bounds=xb, y_bounds=yb, tau=tau, steps=steps, x_eval=xe)
        p25, p75 = _gd._run(plan, gen, replicates=t)
        slope, intercept = plan.line(p25, p75)
        for j, xv in enumerate(xe):
            out[:, j] = slope * xv + intercept
        return out
    # Theil-Sen family
    if output_range is None:
        raise InvalidInputError("output_range is required for the Theil-Sen methods")
    lo, hi = check_bounds(output_range, "output_range")
    median = method.rsplit("-", 1)[1]
    th = check_theta(theta, median, (lo, hi))
    pairs_arg = check_pairs_arg(pairs, n)
    alg = resolve_algorithm(algorithm, n=n, pairs=pairs_arg, median=median)
    eps_t = PureDP(eps).split([1, 1])[0].epsilon if math.isfinite(eps) else eps
    if alg == "exact-fast":
        for j, xv in enumerate(xe):
            out[:, j] = dp_median_all_pairs_target(xa, ya, estimand="predictions", x_eval=xv,
                                                   epsilon=eps_t, k=n - 1, lo=lo, hi=hi,
                                                   theta=th, rng=gen, size=t)
        return out
    designs = [make_design(n, pairs_arg, gen)] if pairs_arg == "all" else None
    what = f"Theil-Sen: {t} replicates at 2 prediction points"
    for j, xv in enumerate(xe):
        if designs is not None:
            vals = doubled_pair_values(xa, ya, designs[0], estimand="predictions", x_eval=xv)
            out[:, j] = dp_median_of_doubled(vals, median=median, epsilon=eps_t,
                                             k=designs[0].k, lo=lo, hi=hi, theta=th, dof=dof,
                                             rng=gen, size=t)
        else:
            for r in range(t):
                # progress (silent without a hook): per replicate (a fresh design of
                # matchings each), over both prediction points; counts only
                report(what, j * t + r, 2 * t)
                d = make_design(n, pairs_arg, gen)
                vals = doubled_pair_values(xa, ya, d, estimand="predictions", x_eval=xv)
                out[r, j] = dp_median_of_doubled(vals, median=median, epsilon=eps_t, k=d.k,
                                                 lo=lo, hi=hi, theta=th, dof=dof, rng=gen)
    if designs is None:
        report(what, 2 * t, 2 * t)
    return out



#: the methods whose replicates :func:`replicate_predictions_many` runs for many data sets at
#: once (the others run one data set at a time)
BATCHED = ("noisy-stats", "dp-intercept", "dp-gd")


def replicate_predictions_many(
    method: str, xs: Sequence[Any], ys: Sequence[Any], *, epsilon: float,
    x_bounds: tuple[float, float], y_bounds: tuple[float, float], trials: int,
    rngs: Sequence[Any], x_eval: Any = None, output_range: tuple[float, float] | None = None,
    pairs: str | int = "all", theta: float | None = None, dof: int = 3, tau: float = 1.0,
    steps: int = 80, algorithm: str = "auto",
) -> list[np.ndarray]:
    """:func:`replicate_predictions` on many data sets: ``[replicate_predictions(method,
    xs[i], ys[i], ..., rng=rngs[i]) for i in range(len(xs))]``, the same arrays bit for bit
    (e.g. every tract of the demo, each with its own generator).

    For the methods of :data:`BATCHED`, the data sets whose generator is seeded (not secure,
    not a simulation generator) at a finite ε run together: each mechanism call of data set i
    becomes row i of one batched call through a :class:`~dpreg.mechanisms.batch.RowRandomness`
    of the ``rngs`` -- row i takes its noise keys from ``rngs[i]`` in the order its own call
    takes them, so its replicates are those of its own call (:func:`_noisy_stats_many`,
    :func:`_dp_intercept_many`, :func:`_dp_gd_many`).  Everything else runs one data set at a
    time.  Every parameter and data set is checked before any noise is drawn.

    Evaluation only, like :func:`replicate_predictions`: nothing is charged, each replicate
    costs the full ε on its data set (the module doc)."""
    if method not in REPLICABLE:
        raise InvalidInputError(f"method must be one of {list(REPLICABLE)}; got {method!r}")
    if len(xs) != len(ys) or len(xs) != len(rngs):
        raise InvalidInputError(f"xs, ys and rngs must have one entry per data set; got "
                                f"{len(xs)}, {len(ys)} and {len(rngs)} entries")
    data = [check_simple_xy(x, y) for x, y in zip(xs, ys)]
    eps = check_epsilon(epsilon)
    xb = check_bounds(x_bounds, "x_bounds")
    yb = check_bounds(y_bounds, "y_bounds")
    t = check_int(trials, "trials", minimum=1)
    xe = check_x_eval(x_eval, xb, exactly_two=True)
    gens = [check_rng(r) for r in rngs]
    plans: list[Any] = []
    if method == "dp-gd":  # checks tau and steps too (before any draw)
        plans = [_gd._plan(xa, ya, variant="pure", epsilon=eps, rho=None, delta=None,
                           x_bounds=xb, y_bounds=yb, tau=tau, steps=steps, x_eval=xe)
                 for xa, ya in data]
    batch = [i for i, g in enumerate(gens) if method in BATCHED and math.isfinite(eps)
             and not is_secure(g) and not is_simulation(g)]
    out: list[np.ndarray | None] = [None] * len(data)
    if batch:
        sub = [data[i] for i in batch]
        rows = RowRandomness.seeded([gens[i] for i in batch])
        if method == "noisy-stats":
            got = _noisy_stats_many(sub, xb, yb, eps, t, xe, rows)
        elif method == "dp-intercept":
            got = _dp_intercept_many(sub, yb, eps, t, rows)
        else:
            got = _dp_gd_many([plans[i] for i in batch], t, [gens[i] for i in batch])
        for i, reps in zip(batch, got):
            out[i] = reps
    for i, (xa, ya) in enumerate(data):
        if out[i] is None:
            out[i] = replicate_predictions(
                method, xa, ya, epsilon=eps, x_bounds=xb, y_bounds=yb, trials=t, x_eval=x_eval,
                output_range=output_range, pairs=pairs, theta=theta, dof=dof, tau=tau,
                steps=steps, rng=gens[i], algorithm=algorithm)
    return [o for o in out if o is not None]


def _dp_intercept_many(data: list[tuple[np.ndarray, np.ndarray]], yb: tuple[float, float],
                       eps: float, trials: int, rows: RowRandomness) -> list[np.ndarray]:
    """DPIntercept's replicates of G data sets: row g of one :func:`release_dp_intercept` on
    (G, trials) levels is data set g's one Laplace call of ``trials`` coordinates."""
    level = np.array([float(np.mean(np.clip(ya, *yb))) for _, ya in data])
    n = np.array([ya.size for _, ya in data], dtype=np.int64)
    noisy = release_dp_intercept(np.repeat(level[:, None], trials, axis=1), n, y_bounds=yb,
                                 epsilon=eps, rng=rows)
    return [np.repeat(noisy[g][:, None], 2, axis=1) for g in range(len(data))]


def _noisy_stats_many(data: list[tuple[np.ndarray, np.ndarray]], xb: tuple[float, float],
                      yb: tuple[float, float], eps: float, trials: int,
                      xe: tuple[float, ...], rows: RowRandomness) -> list[np.ndarray]:
    """DPSuffStats' replicates of G data sets, row g what :func:`release_noisy_stats` of data
    set g's statistics repeated ``trials`` times with generator g releases: its calls (ncov,
    nvar, then the intercepts of the replicates whose noisy slope is usable) are rows of
    batched :func:`~dpreg.mechanisms.laplace_rows` calls of ``trials`` coordinates -- the
    intercept calls grouped by their number of coordinates k (one coordinate: the grid release
    of the value with sensitivity Δ₃; more: unit noise scaled by each Δ₃, as
    :func:`~dpreg.mechanisms.laplace_rows` does for one generator)."""
    g = len(data)
    parts = PureDP(eps).split([1, 1, 1])
    st = [noisy_stats_statistics(xa, ya, xb, yb) for xa, ya in data]
    n = np.array([int(s.n[0]) for s in st], dtype=np.int64)
    sens = [noisy_stats_sensitivities(xb, yb, int(nj)) for nj in n.tolist()]

    def wide(name: str) -> np.ndarray:
        return np.repeat(np.array([float(getattr(s, name)[0]) for s in st])[:, None], trials,
                         axis=1)

    xbar, ybar = wide("xbar"), wide("ybar")
    noisy_ncov = laplace_rows(wide("ncov"), sensitivity=np.array([s["ncov"] for s in sens]),
                              epsilon=parts[0].epsilon, rng=rows)
    noisy_nvar = laplace_rows(wide("nvar"), sensitivity=np.array([s["nvar"] for s in sens]),
                              epsilon=parts[1].epsilon, rng=rows)
    nn = np.repeat(n[:, None], trials, axis=1)
    _, slope, d3, slope_ok = _noisy_slope(noisy_ncov, noisy_nvar, xb, yb, nn)
    intercept = np.full(slope.shape, np.nan)
    with np.errstate(invalid="ignore", over="ignore"):
        centre = ybar - slope * xbar
    counts = slope_ok.sum(axis=1)
    for k in np.unique(counts[counts > 0]).tolist():
        members = np.flatnonzero(counts == k)
        sel = slope_ok[members]  # (G_k, trials), k True per row (in replicate order)
        sub = rows.take(members)
        if k == 1:
            got = laplace_rows(centre[members][sel].reshape(-1, 1), sensitivity=d3[members][sel],
                               epsilon=parts[2].epsilon, rng=sub)
        else:
            unit = laplace_rows(np.zeros((members.size, k)), sensitivity=1.0,
                                epsilon=parts[2].epsilon, rng=sub)
            with np.errstate(over="ignore", invalid="ignore"):
                got = centre[members][sel].reshape(-1, k) + d3[members][sel].reshape(-1, k) * unit
        block = intercept[members]
        block[sel] = got.reshape(-1)
        intercept[members] = block
    released = _line_ok(slope, intercept, slope_ok, xb)
    out = []
    for j in range(g):
        reps = np.empty((trials, 2))
        for c, xv in enumerate(xe):
            reps[:, c] = slope[j] * xv + intercept[j]
        reps[~released[j]] = np.nan
        out.append(reps)
    return out


#: data sets per batch of :func:`_dp_gd_many` (its noise: steps x 2·trials integers each)
_GD_BATCH = 512


def _dp_gd_many(plans: list[Any], trials: int, gens: list[np.random.Generator]
                ) -> list[np.ndarray]:
    """DPGD's replicates of G data sets (plans of equal steps, ε and τ), data set g what
    ``_gd._run(plans[g], gens[g], replicates=trials)`` returns: batches of up to ``_GD_BATCH``
    data sets of similar sizes (sorted by n, so that a batch holds few distinct n) run the
    ``steps`` rounds together (:func:`_gd_batch`)."""
    out: list[np.ndarray] = [np.empty((trials, 2)) for _ in plans]
    order = sorted(range(len(plans)), key=lambda k: plans[k].n)
    for b0 in range(0, len(order), _GD_BATCH):
        idx = order[b0:b0 + _GD_BATCH]
        p25, p75 = _gd_batch([plans[i] for i in idx],
                             RowRandomness.seeded([gens[i] for i in idx]), trials)
        for row, i in enumerate(idx):
            slope, intercept = plans[i].line(p25[row], p75[row])
            for j, xv in enumerate(plans[i].x_eval):
                out[i][:, j] = slope * xv + intercept
    return out


def _gd_batch(plans: list[Any], rows: RowRandomness, trials: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """DPGD replicates of G data sets with plans of equal steps, ε and τ: (p25, p75) of shape
    (G, trials), row g what ``_gd._run(plans[g], gen_g, replicates=trials)`` returns -- the
    same element-wise operations as :func:`~dpreg.simple._gradient_descent.data_gradient`,
    its per-row sums over n taken for the data sets of one size n together, and each round's
    noise one :func:`~dpreg.mechanisms.laplace_calls` call per data set (row g of ``rows``:
    the keys data set g's own run takes, in the same order)."""
    g = len(plans)
    tau = plans[0].tau
    sizes: dict[int, list[int]] = {}
    for k, plan in enumerate(plans):
        sizes.setdefault(plan.n, []).append(k)
    parts = []
    for members in sizes.values():
        u = np.stack([plans[k].u for k in members])[:, None, :]  # (G_n, 1, n)
        v = np.stack([plans[k].v for k in members])[:, None, :]
        parts.append((np.asarray(members), 0.75 - u, u - 0.25, v))

    def gradient(p: np.ndarray) -> np.ndarray:
        q = p.reshape(g, trials, 2)
        out = np.empty((g, trials, 2))
        for members, a, b, v in parts:
            qm = q[members]
            # as data_gradient: resid = 2(p25·a + p75·b) − v, sums of clip(2·resid·a) and
            # clip(2·resid·b) over the n rows (in place: the same operations, fewer arrays)
            resid = qm[:, :, :1] * a
            tmp = qm[:, :, 1:] * b
            resid += tmp
            resid *= 2.0
            resid -= v
            resid *= 2.0
            np.multiply(resid, a, out=tmp)
            out[members, :, 0] = np.clip(tmp, -tau, tau, out=tmp).sum(axis=2)
            np.multiply(resid, b, out=tmp)
            out[members, :, 1] = np.clip(tmp, -tau, tau, out=tmp).sum(axis=2)
        return out.reshape(g * trials, 2)

    per_row = _gd.step_noise(plans[0], rows)  # every plan has the same steps, ε and τ

    def noise(grad: np.ndarray) -> np.ndarray:
        return np.asarray(per_row(grad.reshape(g, trials * 2))).reshape(g * trials, 2)

    kept = _gd.gd_iterates(gradient, noise, steps=plans[0].steps, rows=g * trials,
                           keep_from=plans[0].steps // 2 + 1)
    avg = kept.mean(axis=0).reshape(g, trials, 2)
    return avg[:, :, 0], avg[:, :, 1]
