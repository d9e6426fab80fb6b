"""Independent replicates of a simple-regression release on the same data (vectorised).

For **evaluation only**: experiments measure a mechanism's error distribution on a fixed data
set (e.g. Alabi et al.'s Ĉ(0.68), the 68th percentile of |p̃ − p̂| over repeated runs).  Every
replicate is a complete release that costs the full ε, so ``trials`` replicates cost
``trials × ε``; this function therefore charges no ledger and must only be run on data whose
repeated release is acceptable (simulations, public benchmark data).  Each replicate has
exactly the distribution of one call of the corresponding :mod:`dpreg.simple` function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpreg import methods
from dpreg._validation import (
    DEPRECATED,
    check_bounds,
    check_epsilon,
    check_int,
    check_rng,
    renamed_parameters,
)
from dpreg.exceptions import InvalidInputError
from dpreg.simple import check_simple_xy, check_x_eval

__all__ = ["replicate_predictions", "replicate_predictions_many", "REPLICABLE", "BATCHED"]

#: the one-x methods of the simple harness (their specs release replicates)
REPLICABLE = methods.names(harness="simple")
#: the methods whose replicates :func:`replicate_predictions_many` runs for many data sets at
#: once (their specs' ``batched_replicates``; the others run one data set at a time)
BATCHED = tuple(m for m in REPLICABLE if methods.get(m).batched_replicates)


@renamed_parameters(steps="n_iter")
def replicate_predictions(
    method: str, x: Any, y: Any, *, epsilon: float, x_bounds: tuple[float, float],
    y_bounds: tuple[float, float], trials: int, x_eval: Any = None,
    output_range: tuple[float, float] | None = None, pairs: str | int = "all",
    theta: float | None = None, dof: int = 3, tau: float = 1.0, n_iter: int = 80,
    rng: Any = None, algorithm: str = "auto", steps: Any = DEPRECATED,
) -> np.ndarray:
    """Predictions at the two ``x_eval`` points from ``trials`` independent releases.

    Returns an array of shape ``(trials, 2)``; a row is NaN where that replicate was ⊥.
    ``method`` is one of :data:`REPLICABLE` (DP-GD uses the pure-ε variant).  Theil-Sen
    needs ``output_range`` (the public range of the predictions); ``algorithm`` is as in
    :func:`dpreg.simple.theil_sen` (``"exact-fast"`` draws the replicates from the O(n log n)
    all-pairs sampler, reusing its envelope).  The other keyword arguments are the options of
    the methods that have them (``pairs``, ``theta``, ``dof``: Theil-Sen; ``tau``, ``n_iter``:
    DP-GD; ``steps=`` is the deprecated spelling of ``n_iter``).
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
    return methods.get(method).replicates(
        xa, ya, epsilon=eps, x_bounds=xb, y_bounds=yb, trials=t, x_eval=(xe[0], xe[1]),
        rng=gen,
        options={"output_range": output_range, "pairs": pairs, "theta": theta, "dof": dof,
                 "tau": tau, "n_iter": n_iter, "algorithm": algorithm})


@renamed_parameters(steps="n_iter")
def replicate_predictions_many(
    method: str, xs: Sequence[Any], ys: Sequence[Any], *, epsilon: float,
    x_bounds: tuple[float, float], y_bounds: tuple[float, float], trials: int,
    rngs: Sequence[Any], x_eval: Any = None, output_range: tuple[float, float] | None = None,
    pairs: str | int = "all", theta: float | None = None, dof: int = 3, tau: float = 1.0,
    n_iter: int = 80, algorithm: str = "auto", steps: Any = DEPRECATED,
) -> list[np.ndarray]:
    """:func:`replicate_predictions` on many data sets: ``[replicate_predictions(method,
    xs[i], ys[i], ..., rng=rngs[i]) for i in range(len(xs))]``, the same arrays bit for bit
    (e.g. every tract of the demo, each with its own generator).

    For the methods of :data:`BATCHED`, the data sets whose generator is seeded (not secure,
    not a simulation generator) at a finite ε run together: each mechanism call of data set i
    becomes row i of one batched call through a :class:`~dpreg.mechanisms.batch.RowRandomness`
    of the ``rngs`` -- row i takes its noise keys from ``rngs[i]`` in the order its own call
    takes them, so its replicates are those of its own call (the method's
    ``replicates_many``).  Everything else runs one data set at a time.  Every parameter and
    data set is checked before any noise is drawn.

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
    return methods.get(method).replicates_many(
        data, epsilon=eps, x_bounds=xb, y_bounds=yb, trials=t, x_eval=(xe[0], xe[1]),
        rngs=gens,
        options={"output_range": output_range, "pairs": pairs, "theta": theta, "dof": dof,
                 "tau": tau, "n_iter": n_iter, "algorithm": algorithm})
