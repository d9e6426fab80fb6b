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
    "NS_K",
    "NS_S0",
    "NS_SPREAD_REFERENCE",
    "TS_MATCHINGS",
    "TUKEY_PASS_PROBABILITY",
    "TUKEY_AUTO_PASS_PROBABILITY",
    "split_selection",
    "split_budget",
    "selection_statistic",
    "boundary_statistic",
    "choose_simple",
    "choose_simple_array",
    "choose_noisy_stats",
    "selection_possible",
    "tukey_pass_probability",
    "tukey_auto_n_models",
    "choose_multivariate",
]

#: share of ε spent on the selection statistic (simple regression)
SELECTION_FRACTION = 0.05
#: share of ε spent on DP bounds when some bounds are "private"
BOUNDS_FRACTION = 0.20
#: the shipped rule (:func:`choose_noisy_stats`, issue 21's third rule): NoisyStats iff
#: u·(max(sharẽ, 0) + NS_S0) > NS_K and z·σ̃_x²/NS_SPREAD_REFERENCE < NS_BOUNDARY_LIMIT, with
#: u = ε²·nvar̃(x)/w_x², sharẽ = count̃/n, z = count̃/√n and σ̃_x² = nvar̃(x)/(n·w_x²).  Derived by
#: ``derive_rule3`` of ``studies/auto.py`` on 253 training cells (docs/auto.md §3a), frozen before
#: the fresh grid was run.  With no row on the bounds the u threshold is NS_K/NS_S0 ≈ 3162.5;
#: every clipped row lowers it (clipping costs Theil-Sen too where σ_e is large), while the
#: count condition tightens with the x spread (with x concentrated the clipping rate hardly
#: changes along x and the clipped mean line keeps its slope).
NS_K = 126.5
NS_S0 = 0.04
NS_SPREAD_REFERENCE = 0.05
#: the second rule's threshold on u (NoisyStats iff u > U and z < C; superseded by
#: :func:`choose_noisy_stats`, kept for :func:`choose_simple` and the studies that score it)
NS_U_THRESHOLD = 3162.3
#: C: the limit on the noisy boundary count per √n (z = count̃/√n, :func:`boundary_statistic`),
#: scaled by σ̃_x²/NS_SPREAD_REFERENCE in the shipped rule.  Clipping biases NoisyStats by a
#: fixed amount while its sampling error falls like 1/√n, so the clipped count is compared with
#: √n, not n.
NS_BOUNDARY_LIMIT = 2.0
#: round-robin matchings for the Theil-Sen branch (Alabi et al.'s synthetic choice)
TS_MATCHINGS = 10
#: TukeyEM (several x, some bounds private) only when PTR is predicted to pass with at least
#: this probability
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


def selection_possible(n: int, epsilon: float, u_threshold: float | None = None) -> bool:
    """Whether the simple-regression rule can choose NoisyStats at all (n and ε are public).

    The shipped rule (``u_threshold=None``, :func:`choose_noisy_stats`): on its NoisyStats branch
    sharẽ < C·(ref/σ̃_x²)/√n, so u·(sharẽ + s0) = ε²·n·σ̃_x²·(sharẽ + s0) < ε²·n·(σ̃_x²·s0 +
    C·ref/√n) <= ε²·n·(s0/4 + C·ref/√n), using σ_x² <= 1/4 in units of the x range for data
    inside the bounds.  When that bound is at most K the choice is Theil-Sen for every data set
    and ``auto`` spends no budget on selection (the skip is part of the rule: a noisy nvar̃
    above n·w_x²/4 could otherwise have crossed K, which the skip rules out).  With a number
    ``u_threshold`` (the second rule, :func:`choose_simple`): u <= ε²·n/4, so the selection is
    needed iff ε²·n/4 > U."""
    eps = float(epsilon)
    if math.isinf(eps):
        return True
    if u_threshold is not None:
        return eps * eps * float(n) / 4.0 > u_threshold
    bound = eps * eps * float(n) * (NS_S0 / 4.0
                                    + NS_BOUNDARY_LIMIT * NS_SPREAD_REFERENCE / math.sqrt(float(n)))
    return bound > NS_K


def choose_noisy_stats(nvar_scaled: Any, boundary_count: Any, *, n: int, epsilon: float
                       ) -> np.ndarray:
    """The shipped simple-regression rule (vectorised; True: NoisyStats, False: Theil-Sen-exp).

    Inputs are the two selection releases of ``auto`` -- ``nvar_scaled`` = nvar̃(x)/w_x² (the
    Laplace release of Σ(x − x̄)² of the clipped x, in units of the x range) and
    ``boundary_count`` = count̃ (the Laplace release of the number of rows at or beyond the
    bounds) -- and the public n and ε.  With u = ε²·nvar_scaled, sharẽ = count̃/n,
    z = count̃/√n and σ̃_x² = nvar_scaled/n::

        NoisyStats  iff  u·(max(sharẽ, 0) + NS_S0) > NS_K
                    and  z·σ̃_x²/NS_SPREAD_REFERENCE < NS_BOUNDARY_LIMIT

    NaN statistics choose Theil-Sen.  A pure function of DP outputs and public values:
    post-processing, no privacy cost of its own.

    Notes
    -----
    Privacy: the two inputs are released by ``auto`` with ``SELECTION_FRACTION``·ε split
    equally (each ε-DP at 2.5% of ε by default; replace-one sensitivities (1 − 1/n)·w_x² and 1),
    sequential composition with the method's (1 − SELECTION_FRACTION)·ε; where
    :func:`selection_possible` is False (a function of public n and ε) nothing is released and
    Theil-Sen gets the whole ε.
    """
    nv = np.asarray(nvar_scaled, dtype=float)
    bc = np.asarray(boundary_count, dtype=float)
    nn = float(n)
    eps = float(epsilon)
    with np.errstate(invalid="ignore", over="ignore"):
        u = nv * (eps * eps) if math.isfinite(eps) else np.where(nv > 0, math.inf, -math.inf)
        share = np.maximum(bc / nn, 0.0)
        spread = np.maximum(nv / nn, 0.0)
        z = bc / math.sqrt(nn)
        return ((u * (share + NS_S0) > NS_K)
                & (z * (spread / NS_SPREAD_REFERENCE) < NS_BOUNDARY_LIMIT))


def choose_simple_array(u: Any, boundary_z: Any, *, u_threshold: float = NS_U_THRESHOLD,
                        boundary_limit: float = NS_BOUNDARY_LIMIT) -> np.ndarray:
    """The second rule (superseded by :func:`choose_noisy_stats`; kept for the studies that
    score it), vectorised: True where NoisyStats is chosen (``u > u_threshold`` and
    ``boundary_z < boundary_limit``, z = count̃/√n); NaN statistics choose Theil-Sen."""
    uu = np.asarray(u, dtype=float)
    bb = np.asarray(boundary_z, dtype=float)
    with np.errstate(invalid="ignore"):
        return (uu > u_threshold) & (bb < boundary_limit)


def choose_simple(u: float, boundary_z: float, *, u_threshold: float = NS_U_THRESHOLD,
                  boundary_limit: float = NS_BOUNDARY_LIMIT) -> str:
    """The second rule (superseded by :func:`choose_noisy_stats`): ``"noisy-stats"`` when
    u = ε²·nvar̃(x)/w_x² exceeds ``u_threshold`` and the noisy boundary
    count per √n (:func:`boundary_statistic`) is below ``boundary_limit``, else
    ``"theil-sen-exp"``."""
    ns = bool(choose_simple_array(u, boundary_z, u_threshold=u_threshold,
                                  boundary_limit=boundary_limit))
    return "noisy-stats" if ns else "theil-sen-exp"


def choose_multivariate(n: float, d: int, *, epsilon: float, delta: float,
                        bounds_public: bool = True) -> tuple[str, int]:
    """(method, n_models) of the several-x rule's PUBLIC part, for a design with n rows and d
    columns (intercept included), from public inputs only (n is public under ``auto``'s
    replace-one statement; whether the user gave bounds is public).

    * Some bounds private (``bounds_public=False``): TukeyEM with m =
      :func:`dpreg.preprocess.tukey_n_models` when :func:`tukey_pass_probability` >=
      TUKEY_PASS_PROBABILITY -- it needs no bounds, so the DP bounds' share is saved.
    * Otherwise ``("dp-gd", 0)``: clipped full-batch DP gradient descent with its defaults
      (its clip grows for a widely spread response from its own release of the response's
      spread: :mod:`dpreg.multivariate.dpgd`).

    Between issue 30's two passes ``auto`` spent 5% of ε on nvar(y) where n·ε >= ~3,900 and ran
    AdaSSP for a response spread over more than 0.38 half-widths of its bounds.  Once DP-GD's
    default clip took the spread into account, DP-GD alone was within 1.25× of the best dpreg
    method in 38 of 48 development cells against at most 35 for any threshold of that
    selection (docs/accuracy.md §12.6), so the selection was removed.

    With public bounds the rule took TukeyEM wherever its PTR step was predicted to pass until
    issue 30's second development pool: there that choice was within 1.25× of the best dpreg
    method in 3 of the 13 cells where it fired (DP-GD in 8; TukeyEM up to 8× worse;
    docs/accuracy.md §12).  Whether TukeyEM wins depends on the residuals' tails, which no
    public input shows."""
    from dpreg.preprocess import tukey_n_models

    m = tukey_n_models(n, d)
    check_epsilon(epsilon)
    if (not bounds_public and m >= 8
            and tukey_pass_probability(m, d, epsilon=epsilon, delta=delta)
            >= TUKEY_PASS_PROBABILITY):
        return "tukey-em", m
    return "dp-gd", 0
