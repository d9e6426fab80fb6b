"""The Gaussian mechanism with classical, analytic, zCDP and Gaussian-DP calibrations.

For a statistic with L2 sensitivity Δ (under the neighbouring relation being protected),
releasing f(D) + N(0, σ² I):

* is **μ-GDP** with μ = Δ/σ (Dong, Roth & Su 2022, Thm 2.7),
* is **ρ-zCDP** with ρ = Δ²/(2σ²) (Bun & Steinke 2016, Prop. 1.6),
* is **(ε, δ)-DP** exactly when δ ≥ δ_μ(ε) on the Gaussian trade-off curve with μ = Δ/σ --
  the *analytic* calibration (Balle & Wang 2018), computed via :func:`dpreg.privacy.gdp_mu`,
* with the *classical* calibration σ = Δ√(2 ln(1.25/δ))/ε is (ε, δ)-DP for ε < 1 only
  (Dwork & Roth 2014, Thm A.1).

Three randomness modes (:mod:`dpreg._random`).  With ``rng=None`` (or a
:class:`~dpreg._random.SecureGenerator`) the noise is **secure**: the value is rounded to a
public power-of-two grid and exact discrete Gaussian noise from the OS CSPRNG is added
(:func:`~dpreg.mechanisms.secure.secure_gaussian`; σ is recomputed for the sensitivity inflated
by the rounding, Δ + √d·γ ≈ (1 + 2⁻¹⁰)Δ).  With a seed or an ordinary numpy Generator
(**seeded** mode) the release is computed the same way from a SHAKE256 stream keyed by 32 bytes
of the generator (reproducible and float-safe; secret only if the seed is).  Only a
:class:`~dpreg._random.SimulationGenerator` (simulations, never releases) adds numpy's
floating-point normal draw.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from dpreg._random import check_rng, is_secure, is_simulation, noise_key
from dpreg._validation import check_positive
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms.secure import _finite_values, secure_gaussian
from dpreg.privacy.budgets import GDP, ZCDP, ApproxDP, Budget, gdp_mu

__all__ = ["gaussian", "gaussian_sigma", "gaussian_calls"]

_FMAX = float(np.finfo(np.float64).max)


def gaussian_sigma(sensitivity: float, budget: Budget, *, calibration: str = "analytic") -> float:
    """Noise standard deviation σ for L2 sensitivity Δ and a budget.

    ``budget`` is a :class:`ZCDP` (σ = Δ/√(2ρ)), :class:`GDP` (σ = Δ/μ) or :class:`ApproxDP`
    (``calibration="analytic"``: the smallest σ meeting (ε, δ) on the exact Gaussian curve;
    ``"classical"``: Δ√(2 ln(1.25/δ))/ε, only for ε < 1).  Rounded toward more noise.
    """
    sensitivity = check_positive(sensitivity, "sensitivity", allow_zero=True)
    if isinstance(budget, ZCDP):
        if budget.rho == 0:
            raise InvalidInputError("budget must have rho > 0; got ZCDP(rho=0)")
        sigma = 0.0 if budget.is_infinite else sensitivity / math.sqrt(2.0 * budget.rho)
    elif isinstance(budget, GDP):
        if budget.mu == 0:
            raise InvalidInputError("budget must have mu > 0; got GDP(mu=0)")
        sigma = 0.0 if budget.is_infinite else sensitivity / budget.mu
    elif isinstance(budget, ApproxDP):
        if budget.epsilon == 0 or budget.delta == 0:
            raise InvalidInputError(
                f"the Gaussian mechanism needs epsilon > 0 and 0 < delta < 1; got {budget!r}"
            )
        if budget.is_infinite:
            sigma = 0.0
        elif calibration == "analytic":
            sigma = sensitivity / gdp_mu(budget.epsilon, budget.delta)
        elif calibration == "classical":
            if budget.epsilon >= 1:
                raise InvalidInputError(
                    "the classical Gaussian calibration needs epsilon < 1; got "
                    f"epsilon={budget.epsilon!r} (use calibration='analytic')"
                )
            sigma = sensitivity * math.sqrt(2.0 * math.log(1.25 / budget.delta)) / budget.epsilon
        else:
            raise InvalidInputError(
                f"calibration must be 'analytic' or 'classical'; got {calibration!r}"
            )
    else:
        raise InvalidInputError(
            f"budget must be a ZCDP, GDP or ApproxDP budget for the Gaussian mechanism; got {budget!r}"
        )
    if sigma == 0 and sensitivity > 0 and not budget.is_infinite:
        return math.ulp(0.0)  # underflow: round toward more noise, never to none
    return math.nextafter(sigma, math.inf) if 0 < sigma < math.inf else sigma


def gaussian(value: Any, *, sensitivity: float, budget: Budget, rng: Any = None,
             calibration: str = "analytic") -> Any:
    """Return ``value + N(0, σ²)`` per coordinate with σ from :func:`gaussian_sigma`.

    Guarantee: the budget given (ρ-zCDP, μ-GDP or (ε, δ)-DP) for the neighbouring relation the
    L2 ``sensitivity`` was computed for.  ``rng=None`` selects secure mode (exact discrete
    Gaussian on a grid, see the module doc); a seed or Generator seeded mode (the same exact
    noise from a stream keyed by the generator); a
    :class:`~dpreg._random.SimulationGenerator` floating-point noise (simulations only).
    """
    sigma = gaussian_sigma(sensitivity, budget, calibration=calibration)
    arr = _finite_values(value)
    gen = check_rng(rng)
    if sigma == 0:
        noisy = arr.copy()
    elif math.isinf(sigma):  # infinite noise: the release is independent of the data
        signs = np.frombuffer(os.urandom(arr.size), dtype=np.uint8) & 1 if is_secure(gen) \
            else gen.integers(0, 2, size=arr.size)
        noisy = np.where(np.asarray(signs).reshape(arr.shape) == 1, _FMAX, -_FMAX)
    elif is_simulation(gen):  # floating-point noise: simulations only (not float-safe)
        with np.errstate(over="ignore", invalid="ignore"):
            noisy = arr + gen.normal(0.0, sigma, size=arr.shape)
    else:
        key = None if is_secure(gen) else noise_key(gen)
        noisy, _ = secure_gaussian(arr, sensitivity=float(sensitivity), sigma=sigma, key=key)
    noisy = np.clip(noisy, -_FMAX, _FMAX)  # post-processing: every release finite
    return float(noisy) if noisy.ndim == 0 else noisy


def gaussian_calls(count: int, *, sensitivity: float, budget: Budget,
                   calibration: str = "analytic", rng: Any = None) -> Callable[[Any], Any]:
    """``count`` successive :func:`gaussian` calls with one plan, their noise drawn by one
    batched sampler call at the first (see :func:`dpreg.mechanisms.laplace_calls`; bit for
    bit in seeded mode; a :class:`~dpreg.mechanisms.batch.RowRandomness` releases a (G, d)
    array per call, row g as row g's own call).  Guarantee: that of ``count`` Gaussian
    releases (compose them)."""
    from dpreg.mechanisms.batch import RowRandomness
    from dpreg.mechanisms.laplace import generator_calls, row_calls
    from dpreg.mechanisms.secure import gaussian_rounds

    sigma = gaussian_sigma(sensitivity, budget, calibration=calibration)
    if isinstance(rng, RowRandomness):  # G rows, one call per row per round (laplace_calls)
        def single(value: Any, gen: np.random.Generator) -> Any:
            return gaussian(value, sensitivity=sensitivity, budget=budget, rng=gen,
                            calibration=calibration)

        if sigma == 0:
            return lambda value: np.asarray(value, dtype=np.float64).copy()
        if not math.isfinite(sigma):  # infinite noise: every row's own call, row by row
            rows = rng
            return lambda value: np.stack([np.asarray(single(np.asarray(value)[j],
                                                             rows.generator(j)))
                                           for j in range(rows.rows)])
        return row_calls(count, rng, lambda n, coords, keys: gaussian_rounds(
            n, coords, sensitivity=float(sensitivity), sigma=sigma, keys=keys), single)
    gen = check_rng(rng)
    if sigma == 0 or not math.isfinite(sigma) or is_simulation(gen):
        return lambda value: gaussian(value, sensitivity=sensitivity, budget=budget, rng=gen,
                                      calibration=calibration)
    return generator_calls(count, gen, lambda n, coords, keys: gaussian_rounds(
        n, coords, sensitivity=float(sensitivity), sigma=sigma, keys=keys), "gaussian_calls")
