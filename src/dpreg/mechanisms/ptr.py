"""Propose-test-release (PTR) helpers.

Guarantee of :func:`ptr_test`: let ``distance`` be a lower bound A(D) on the number of records
that must change before the dataset becomes "unsafe", with A 1-sensitive under the caller's
neighbouring relation and A = −1 on unsafe datasets.  Releasing whether
``A + Lap(1/ε) > ln(1/(2δ))/ε`` is ε-DP (Laplace mechanism on a 1-sensitive value), and an
unsafe dataset passes with probability P[Lap(1/ε) > ln(1/(2δ))/ε + 1] = δ·e^{−ε} <= δ.
Sources: Dwork & Lei 2009; Brown et al. 2021; Amin et al. 2023 (TukeyEM).  The Laplace scale is
1/ε (the google-research TukeyEM code uses ε, a bug).
"""

from __future__ import annotations

import math
from typing import Any

from dpreg._validation import check_delta, check_epsilon, check_rng

__all__ = ["ptr_threshold", "ptr_test"]


def ptr_threshold(epsilon: float, delta: float) -> float:
    """The PTR pass threshold ln(1/(2δ))/ε."""
    eps = check_epsilon(epsilon, allow_inf=False, minimum=0.0)  # a split (ε/2 of TukeyEM)
    d = check_delta(delta, allow_zero=False)
    return math.log(1.0 / (2.0 * d)) / eps


def ptr_test(distance: float, *, epsilon: float, delta: float, rng: Any = None) -> bool:
    """Noisy test ``distance + Lap(1/ε) > ln(1/(2δ))/ε``: ε-DP in the 1-sensitive distance."""
    thr = ptr_threshold(epsilon, delta)
    gen = check_rng(rng)
    return bool(distance + gen.laplace(0.0, 1.0 / epsilon) > thr)
