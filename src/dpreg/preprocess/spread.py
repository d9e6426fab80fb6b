"""Private spread of x: :func:`noisy_nvar` (Σ(x − x̄)² of clipped x plus Laplace noise) and its
sensitivity (:func:`nvar_sensitivity_for`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpreg._validation import check_bounds, check_epsilon, check_int, check_rng
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms import laplace
from dpreg.preprocess._common import PrivateValue, _statement, _values
from dpreg.privacy import Neighbouring, PureDP, charge, check_neighbouring

__all__ = ["noisy_nvar", "nvar_sensitivity_for"]


def nvar_sensitivity_for(x_bounds: tuple[float, float], n: int,
                         neighbouring: str | Neighbouring = "replace-one") -> float:
    """Sensitivity of nvar(x) = Σ(x_i − x̄)² for x_i in [a, b] (width w = b − a).

    * replace-one (n public): (1 − 1/n)·w² (Alabi et al. Lemma 18, width form).
    * add/remove: w².  Adding z to n values changes nvar by n/(n+1)·(z − x̄)² ∈ [0, w²·n/(n+1)].
    """
    a, b = check_bounds(x_bounds, "x_bounds")
    n = check_int(n, "n", minimum=1)
    rel = check_neighbouring(neighbouring)
    w2 = (b - a) ** 2
    return (1.0 - 1.0 / n) * w2 if rel is Neighbouring.REPLACE_ONE else w2


def noisy_nvar(x: Any, *, epsilon: float, x_bounds: tuple[float, float],
               neighbouring: str | Neighbouring = "replace-one", rng: Any = None,
               ledger: Any = None, label: str = "noisy nvar(x)") -> PrivateValue:
    """Release nvar(x) = Σ(x_i − x̄)² of x clipped to the public (or DP-proposed) ``x_bounds``
    plus Laplace noise with the sensitivity of :func:`nvar_sensitivity_for`.

    ε·nvar(x) is Alabi et al.'s εn·var(x), the statistic that separates the regimes where
    Theil-Sen or noisy sufficient statistics is more accurate; ``dpreg.auto`` uses it.

    Guarantee: ε-DP (pure) under the chosen ``neighbouring`` relation.  Source: Laplace
    mechanism (Dwork et al. 2006) on Alabi et al. 2022's nvar statistic.
    """
    arr = _values(x, "x")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError("x must contain only finite numbers")
    xb = check_bounds(x_bounds, "x_bounds")
    eps = check_epsilon(epsilon)
    rel = check_neighbouring(neighbouring)
    gen = check_rng(rng)
    sens = nvar_sensitivity_for(xb, arr.size, rel)
    charge(ledger, PureDP(eps), label, rel)
    c = np.clip(arr, *xb)
    stat = float(np.sum((c - c.mean()) ** 2))
    value = float(laplace(stat, sensitivity=sens, epsilon=eps, rng=gen))
    return PrivateValue(value, _statement(eps, rel, "Laplace nvar(x)", "Dwork et al. 2006; "
                                          "Alabi et al. 2022 (nvar)", rng, sensitivity=sens,
                                          x_bounds=xb))
