"""Choosing the widening θ of DPWideTheilSen from public guesses (Sarathy & Vadhan 2025, §5.1).

θ ≈ max( σ_e·ln(R·ε·n·Δ_x/(p·σ_e)) / (ε·n·Δ_x),  (R/p)·exp(−ε·n) )

The first term balances the two θ terms of their Thm 1.2 (slope estimand, two-point design
with x-spread Δ_x, Gaussian errors with sd σ_e); the second keeps θ away from 0 when the slopes
are concentrated.  σ_e and Δ_x are properties of the private data: pass **public guesses**
(domain knowledge, a pilot study on public data) -- never values computed from the data being
protected.  (The paper's text writes "σ_e/(ηΔ_x)" for σ_e/Δ_x, a typo.)
"""

from __future__ import annotations

import math

from dpreg._validation import check_epsilon, check_int, check_positive, check_probability
from dpreg.exceptions import InvalidInputError

__all__ = ["theta_guidance"]


def theta_guidance(*, sigma_e: float, delta_x: float, R: float, epsilon: float, n: int,
                   p: float = 0.05) -> float:
    """Suggested θ for ``theil_sen(..., median="wide")`` / ``theil_sen_ci`` (slope estimand).

    Parameters
    ----------
    sigma_e:
        Public guess of the error standard deviation (units of y).
    delta_x:
        Public guess of the x spread Δ_x (for a two-point design the distance between the two
        x values; in general about 2·sd(x)).
    R:
        Half-width of the public slope range [−R, R] (for a range (lo, hi) use (hi − lo)/2).
    epsilon:
        The finite privacy budget of the release.
    n:
        Number of records (public).
    p:
        Failure probability of the accuracy bound (default 0.05).

    Returns the larger of the two terms (always > 0).
    """
    se = check_positive(sigma_e, "sigma_e")
    dx = check_positive(delta_x, "delta_x")
    r = check_positive(R, "R")
    eps = check_epsilon(epsilon, allow_inf=False)
    n = check_int(n, "n", minimum=1)
    p = check_probability(p, "p")
    scale = eps * n * dx
    try:
        first = se * math.log(r * scale / (p * se)) / scale
    except (ValueError, ZeroDivisionError, OverflowError):  # extreme inputs under/overflow
        first = math.nan
    second = (r / p) * math.exp(-eps * n)
    terms = [v for v in (first, second) if math.isfinite(v)]
    theta = max(terms + [math.ulp(0.0)])
    if not terms:
        raise InvalidInputError(
            "theta_guidance: the inputs are so extreme that no finite theta results; got "
            f"sigma_e={sigma_e!r}, delta_x={delta_x!r}, R={R!r}, epsilon={epsilon!r}, n={n!r}")
    return theta
