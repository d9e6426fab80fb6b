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
from typing import Any

import numpy as np

from dpreg import _registry
from dpreg._progress import report
from dpreg._validation import check_bounds, check_epsilon, check_int, check_rng
from dpreg.exceptions import InvalidInputError
from dpreg.privacy import PureDP
from dpreg.simple import _gradient_descent as _gd
from dpreg.simple._common import check_pairs_arg, check_simple_xy, check_x_eval
from dpreg.simple._noisy_stats import (
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

__all__ = ["replicate_predictions", "REPLICABLE"]

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


