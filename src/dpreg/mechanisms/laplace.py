"""The Laplace mechanism.

Guarantee: for a function f whose L1 sensitivity over the chosen neighbouring relation is Δ,
releasing f(D) + Lap(Δ/ε) (independently per coordinate) is ε-DP (pure).  The neighbouring
relation enters only through Δ -- see :mod:`dpreg.mechanisms.sensitivity`.  Source: Dwork,
McSherry, Nissim & Smith 2006.

Three randomness modes (:mod:`dpreg._random`).  With ``rng=None`` (or a
:class:`~dpreg._random.SecureGenerator`, which is what every dpreg function passes down when no
seed was given) the noise is **secure**: the value is rounded to a public power-of-two grid and
exact discrete Laplace noise drawn from the OS CSPRNG is added
(:func:`~dpreg.mechanisms.secure.secure_laplace`; the rounding is accounted by inflating the
sensitivity by at most one grid step per coordinate, ≈ 2⁻¹⁰·Δ).  With a seed or an ordinary
numpy Generator (**seeded** mode) the release is computed the same way, with the sampler's bits
taken from a SHAKE256 stream keyed by 32 bytes of the generator (reproducible and float-safe;
secret only if the seed is).  Only a :class:`~dpreg._random.SimulationGenerator` (simulations,
never releases) adds numpy's floating-point Laplace draw.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dpreg._random import check_rng, is_secure, is_simulation, noise_key, noise_keys
from dpreg._validation import check_epsilon, check_positive
from dpreg.mechanisms.secure import _finite_values, secure_laplace

__all__ = ["laplace", "laplace_scale", "laplace_calls", "laplace_rows"]

_TINY = math.ulp(0.0)
_FMAX = float(np.finfo(np.float64).max)


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Scale b = Δ/ε of the Laplace noise (density ∝ exp(−|z|/b); sd = √2·b)."""
    sensitivity = check_positive(sensitivity, "sensitivity", allow_zero=True)
    epsilon = check_epsilon(epsilon, minimum=0.0)  # may be a split (ε/T, ε/3, ...)
    if math.isinf(epsilon) or sensitivity == 0:
        return 0.0
    # a positive scale that underflows to 0 would remove the noise: round it up instead
    return max(sensitivity / epsilon, _TINY)


def laplace(value: Any, *, sensitivity: float, epsilon: float, rng: Any = None) -> Any:
    """Return ``value + Lap(sensitivity/epsilon)`` (elementwise for arrays).

    Parameters
    ----------
    value:
        A finite real number or array (the exact statistic).
    sensitivity:
        L1 sensitivity Δ of the statistic under the neighbouring relation being protected.
    epsilon:
        Privacy parameter ε > 0 (``inf`` adds no noise: not private).
    rng:
        ``None`` (secure mode: exact discrete noise on a grid from the OS CSPRNG), a seed, a
        ``SeedSequence`` or a ``Generator`` (seeded mode: the same exact noise from a stream
        keyed by ``rng``; the generator advances by 32 bytes per call whatever the value), or
        a :class:`~dpreg._random.SimulationGenerator` (floating-point noise, simulations only).

    Guarantee: ε-DP (pure) for the relation Δ was computed for -- exactly, for the released
    floating-point numbers themselves, in secure and seeded mode (seeded: against anyone who
    does not know the seed).
    """
    scale = laplace_scale(sensitivity, epsilon)
    arr = _checked(value)
    gen = check_rng(rng)
    if scale == 0.0:
        noisy = arr.copy()
    elif is_simulation(gen):  # floating-point noise: simulations only (not float-safe)
        with np.errstate(over="ignore", invalid="ignore"):
            noisy = arr + gen.laplace(0.0, scale, size=arr.shape)
    else:
        key = None if is_secure(gen) else noise_key(gen)
        noisy, _ = secure_laplace(arr, sensitivity=float(sensitivity), epsilon=float(epsilon),
                                  key=key)
    # an overflowing draw (astronomical scales) is reported as the largest float: clipping is
    # post-processing and keeps every release finite
    noisy = np.clip(noisy, -_FMAX, _FMAX)
    return float(noisy) if noisy.ndim == 0 else noisy


def laplace_rows(values: Any, *, sensitivity: Any, epsilon: float, rng: Any = None) -> np.ndarray:
    """One Laplace release per row of a batch: ``values`` is (G,) or (G, d), row g has L1
    sensitivity ``sensitivity[g]`` (a scalar applies to every row).

    ``rng`` (:mod:`dpreg.mechanisms.batch`): a :class:`~dpreg.mechanisms.batch.RowRandomness`
    makes row g exactly ``laplace(values[g], sensitivity=sensitivity[g], epsilon=epsilon,
    rng=<row g's generator>)`` (bit for bit in seeded mode: row g's next key; secure: one
    os.urandom source, vectorised over rows by :func:`~dpreg.mechanisms.secure.laplace_batch`);
    a Generator makes the batch one call -- with one sensitivity, ``laplace(values, ...)``;
    with per-row sensitivities, G = 1 in secure or seeded mode is ``laplace(values[0], ...)``
    and otherwise (replicates of one data set, or a simulation generator) row g is unit-scale
    Laplace noise times ``sensitivity[g]`` (the same law; an evaluation device, never a
    release of real data).

    Guarantee: each row is an ε-DP (pure) Laplace release for the relation its sensitivity
    was computed for (Dwork, McSherry, Nissim & Smith 2006); rows on disjoint groups compose
    in parallel.  ε = ∞ adds no noise.
    """
    from dpreg.mechanisms.batch import RowRandomness
    from dpreg.mechanisms.secure import laplace_batch

    arr = _checked(values)
    per_row = np.ndim(sensitivity) > 0
    sens = np.asarray(sensitivity, dtype=np.float64)
    if isinstance(rng, RowRandomness):
        g = rng.rows
        if arr.shape[:1] != (g,):
            from dpreg.exceptions import InvalidInputError

            raise InvalidInputError(f"values must have one row per generator ({g}); got shape "
                                    f"{arr.shape}")
        check_epsilon(epsilon, minimum=0.0)
        if g == 0 or math.isinf(epsilon):
            return arr.copy()
        sens_g = np.broadcast_to(sens, (g,))
        if rng.is_simulation():
            return np.stack([np.asarray(laplace(arr[j], sensitivity=float(sens_g[j]),
                                                epsilon=epsilon, rng=rng.generator(j)))
                             for j in range(g)]).reshape(arr.shape)
        noisy = laplace_batch(arr, sensitivity=sens_g, epsilon=epsilon, keys=rng.flat_keys(1))
        return np.clip(noisy, -_FMAX, _FMAX)
    gen = check_rng(rng)
    if not per_row:
        return np.asarray(laplace(arr, sensitivity=float(sens), epsilon=epsilon, rng=gen))
    if arr.size == 1 and not is_simulation(gen):
        # a release: grid noise added to the value itself (scaling unit noise by Δ in floating
        # point would undo the float-safety of the grid)
        return np.asarray(laplace(arr, sensitivity=float(sens.reshape(-1)[0]), epsilon=epsilon,
                                  rng=gen)).reshape(arr.shape)
    unit = np.asarray(laplace(np.zeros(arr.shape), sensitivity=1.0, epsilon=epsilon, rng=gen))
    with np.errstate(over="ignore", invalid="ignore"):
        return arr + sens.reshape((-1,) + (1,) * (arr.ndim - 1)) * unit


def laplace_calls(count: int, *, sensitivity: float, epsilon: float, rng: Any = None
                  ) -> Callable[[Any], Any]:
    """A function to call ``count`` times in a row with values of one shape: call t returns
    what the t-th of ``count`` successive ``laplace(value, sensitivity=..., epsilon=...,
    rng=rng)`` calls returns (bit for bit in seeded mode: the same keys, drawn at the first
    call; the same law in secure mode), but the noise of all calls is drawn by one batched
    sampler call at the first one -- the grid noise does not depend on the values.  For
    iterative algorithms (DP gradient descent: one call per round).  A simulation generator
    (or ε = ∞) makes each call a plain :func:`laplace` call.  With a
    :class:`~dpreg.mechanisms.batch.RowRandomness` of G rows each call takes a (G, d) array and
    releases row g as row g's own t-th call (:func:`row_calls`).  Guarantee: that of ``count``
    Laplace releases (ε each; compose them)."""
    from dpreg.mechanisms.batch import RowRandomness
    from dpreg.mechanisms.secure import laplace_rounds

    scale = laplace_scale(sensitivity, epsilon)
    if isinstance(rng, RowRandomness):
        if scale == 0.0:
            return lambda value: _checked(value).copy()
        return row_calls(count, rng, lambda n, coords, keys: laplace_rounds(
            n, coords, sensitivity=float(sensitivity), epsilon=float(epsilon), keys=keys),
            lambda value, gen: laplace(value, sensitivity=sensitivity, epsilon=epsilon,
                                       rng=gen))
    gen = check_rng(rng)
    if scale == 0.0 or is_simulation(gen):
        return lambda value: laplace(value, sensitivity=sensitivity, epsilon=epsilon, rng=gen)
    return generator_calls(count, gen, lambda n, coords, keys: laplace_rounds(
        n, coords, sensitivity=float(sensitivity), epsilon=float(epsilon), keys=keys),
        "laplace_calls")


def generator_calls(count: int, gen: np.random.Generator, rounds: Callable[[int, int, Any], Any],
                    name: str) -> Callable[[Any], Any]:
    """``count`` successive mechanism calls with one generator (secure or seeded): call t
    releases its value with the t-th of ``count`` noise rounds, drawn by ``rounds(count,
    coords, keys)`` at the first call (seeded: the ``count`` keys the calls would take, in
    order).  Shared by :func:`laplace_calls` and :func:`~dpreg.mechanisms.gaussian_calls`."""
    state: dict[str, Any] = {"t": 0}

    def call(value: Any) -> Any:
        arr = _checked(value)
        if "rounds" not in state:
            keys = None if is_secure(gen) else noise_keys(gen, count)
            state["rounds"] = rounds(count, arr.size, keys)
        t = state["t"]
        if t >= count:
            from dpreg.exceptions import InvalidInputError

            raise InvalidInputError(f"{name} was prepared for {count} calls")
        state["t"] = t + 1
        noisy = np.clip(state["rounds"].release(t, arr), -_FMAX, _FMAX)
        return float(noisy) if noisy.ndim == 0 else noisy

    return call


def _checked(value: Any) -> np.ndarray:
    """``value`` as a finite float64 array (the check every mechanism call makes first)."""
    return _finite_values(value)


def row_calls(count: int, rng: Any, rounds: Callable[[int, int, Any], Any],
              single: Callable[[Any, np.random.Generator], Any]) -> Callable[[Any], Any]:
    """``count`` successive mechanism calls of every row of a
    :class:`~dpreg.mechanisms.batch.RowRandomness`: call t maps a (G, d) array to the rows'
    t-th releases.  The grid noise of all G·count calls is drawn at the first call by
    ``rounds(G·count, d, keys)`` (call t of row g = lane g·count + t; seeded: row g's keys in
    call order -- the keys its own ``count`` calls take).  Simulation rows call ``single``
    row by row.  (Shared by :func:`laplace_calls` and
    :func:`~dpreg.mechanisms.gaussian_calls`; the mechanism is the one of ``rounds``.)"""
    g = rng.rows
    state: dict[str, Any] = {"t": 0}
    first = np.arange(g, dtype=np.int64) * count

    def call(value: Any) -> Any:
        arr = _checked(value)
        t = state["t"]
        if t >= count:
            from dpreg.exceptions import InvalidInputError

            raise InvalidInputError(f"the batched calls were prepared for {count} calls")
        state["t"] = t + 1
        if rng.is_simulation():
            return np.stack([np.asarray(single(arr[j], rng.generator(j))) for j in range(g)])
        if "rounds" not in state:
            state["rounds"] = rounds(g * count, arr.shape[1], rng.flat_keys(count))
        return state["rounds"].release_rows(first + t, arr)

    return call
