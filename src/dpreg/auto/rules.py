"""The selection rules of ``method="auto"`` and its budget splits (see :mod:`dpreg.auto`).

Everything here is a function of public inputs (n, d, ε, δ, fractions) or post-processing of
DP releases: no data is read and nothing is charged.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpreg._validation import check_bounds, check_epsilon
from dpreg.exceptions import InvalidInputError
from dpreg.multivariate.tukey import (
    TUKEY_AUTO_PASS_PROBABILITY,
    tukey_auto_n_models,
    tukey_pass_probability,
)
from dpreg.privacy import PureDP

__all__ = [
    "SELECTION_FRACTION",
    "BOUNDS_FRACTION",
    "NS_U_THRESHOLD",
    "NS_BOUNDARY_LIMIT",
    "TS_MATCHINGS",
    "TUKEY_PASS_PROBABILITY",
    "TUKEY_AUTO_PASS_PROBABILITY",
    "split_selection",
    "split_budget",
    "selection_statistic",
    "boundary_statistic",
    "choose_simple",
    "choose_simple_array",
    "selection_possible",
    "tukey_pass_probability",
    "tukey_auto_n_models",
    "choose_multivariate",
]

#: share of ε spent on the selection statistic (simple regression)
SELECTION_FRACTION = 0.05
#: share of ε spent on DP bounds when some bounds are "private"
BOUNDS_FRACTION = 0.20
#: NoisyStats only when u = ε²·nvar̃(x)/w_x² exceeds this ...
NS_U_THRESHOLD = 3162.3
#: ... and the noisy number of rows at or beyond the bounds is below this many times √n
#: (z = count̃/√n, :func:`boundary_statistic`); Theil-Sen-exp otherwise.  Both derived by
#: ``derive_rule2`` of ``studies/auto.py`` on a 108-cell factorial grid over n, σ_x², ε and σ_e²
#: (derivation seeds; common random numbers): U = 10^3.5 and C = 2 minimise the worst ratio to
#: the better finalist, then the number of cells above 1.10 (docs/auto.md §3).  Clipping biases
#: NoisyStats by a fixed amount while its sampling error falls like 1/√n, so the clipped count
#: is compared with √n, not n.
NS_BOUNDARY_LIMIT = 2.0
#: round-robin matchings for the Theil-Sen branch (Alabi et al.'s synthetic choice)
TS_MATCHINGS = 10
#: TukeyEM only when PTR is predicted to pass with at least this probability
TUKEY_PASS_PROBABILITY = 0.95


def _fraction(value: Any, name: str) -> float:
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a real number in (0, 1); got {value!r}") from None
    if not 0.0 < f < 1.0:
        raise InvalidInputError(f"{name} must be a real number in (0, 1); got {value!r}")
    return f


def split_selection(epsilon: float, fraction: float = SELECTION_FRACTION) -> tuple[PureDP, PureDP]:
    """(selection part, method part) of a pure ε: ``fraction``·ε and the rest.  The parts never
    exceed the whole (``PureDP.split`` rounds down); ε = inf gives two infinite parts."""
    eps = check_epsilon(epsilon)
    f = _fraction(fraction, "selection_fraction")
    if math.isinf(eps):
        return PureDP(math.inf), PureDP(math.inf)
    a, b = PureDP(eps).split([f, 1.0 - f])
    return a, b


def split_budget(epsilon: float, *, selection_fraction: float | None, bounds_fraction: float | None
                 ) -> dict[str, PureDP | None]:
    """Named split of a pure ε into ``bounds`` / ``selection`` / ``method`` parts (a fraction of
    None means that step is skipped and gets nothing).  Parts never exceed the whole."""
    eps = check_epsilon(epsilon)
    fs = None if selection_fraction is None else _fraction(selection_fraction, "selection_fraction")
    fb = None if bounds_fraction is None else _fraction(bounds_fraction, "bounds_fraction")
    used = (fs or 0.0) + (fb or 0.0)
    if used >= 1.0:
        raise InvalidInputError(
            f"selection_fraction + bounds_fraction must be below 1; got {fs} + {fb}")
    names = [k for k, f in (("bounds", fb), ("selection", fs)) if f is not None]
    weights = [f for f in (fb, fs) if f is not None] + [1.0 - used]
    parts = ([PureDP(math.inf)] * len(weights) if math.isinf(eps)
             else PureDP(eps).split(weights))
    out: dict[str, PureDP | None] = {"bounds": None, "selection": None}
    out.update(dict(zip(names, parts[:-1])))
    out["method"] = parts[-1]
    return out


def selection_statistic(noisy_nvar: float, *, epsilon: float, x_bounds: tuple[float, float]) -> float:
    """s = ε·nvar̃(x)/w_x² (Alabi et al.'s εn·var(x) in units of the x range); post-processing."""
    a, b = check_bounds(x_bounds, "x_bounds")
    eps = check_epsilon(epsilon)
    with np.errstate(invalid="ignore"):
        s = float(eps * (noisy_nvar / (b - a) ** 2))
    return s if not math.isnan(s) else -math.inf


def boundary_statistic(noisy_count: float, n: int) -> float:
    """z = count̃/√n: the noisy number of rows at or beyond the bounds per √n (n public under
    replace-one); post-processing.  NaN maps to +inf (Theil-Sen)."""
    z = float(noisy_count) / math.sqrt(float(n))
    return z if not math.isnan(z) else math.inf


def selection_possible(n: int, epsilon: float, u_threshold: float = NS_U_THRESHOLD) -> bool:
    """Whether the simple-regression rule can choose NoisyStats at all: u = ε²·nvar(x)/w_x² is
    at most ε²·n/4 for data inside the bounds, so when ε²·n/4 <= U the choice is Theil-Sen for
    every data set and ``auto`` spends no budget on selection (n and ε are public)."""
    eps = float(epsilon)
    return math.isinf(eps) or eps * eps * float(n) / 4.0 > u_threshold


def choose_simple_array(u: Any, boundary_z: Any, *, u_threshold: float = NS_U_THRESHOLD,
                        boundary_limit: float = NS_BOUNDARY_LIMIT) -> np.ndarray:
    """Vectorised rule: True where NoisyStats is chosen (``u > u_threshold`` and
    ``boundary_z < boundary_limit``, z = count̃/√n); NaN statistics choose Theil-Sen."""
    uu = np.asarray(u, dtype=float)
    bb = np.asarray(boundary_z, dtype=float)
    with np.errstate(invalid="ignore"):
        return (uu > u_threshold) & (bb < boundary_limit)


def choose_simple(u: float, boundary_z: float, *, u_threshold: float = NS_U_THRESHOLD,
                  boundary_limit: float = NS_BOUNDARY_LIMIT) -> str:
    """``"noisy-stats"`` when u = ε²·nvar̃(x)/w_x² exceeds ``u_threshold`` and the noisy boundary
    count per √n (:func:`boundary_statistic`) is below ``boundary_limit``, else
    ``"theil-sen-exp"``."""
    ns = bool(choose_simple_array(u, boundary_z, u_threshold=u_threshold,
                                  boundary_limit=boundary_limit))
    return "noisy-stats" if ns else "theil-sen-exp"


def choose_multivariate(n: float, d: int, *, epsilon: float, delta: float) -> tuple[str, int]:
    """(method, n_models) for a design with n rows (public or a noisy count) and d columns
    (intercept included): TukeyEM with m = :func:`dpreg.preprocess.tukey_n_models` when
    :func:`tukey_pass_probability` >= TUKEY_PASS_PROBABILITY, else BoostedAdaSSP."""
    from dpreg.preprocess import tukey_n_models

    m = tukey_n_models(n, d)
    if m >= 8 and tukey_pass_probability(m, d, epsilon=epsilon, delta=delta) >= TUKEY_PASS_PROBABILITY:
        return "tukey-em", m
    return "boosted-adassp", 0

