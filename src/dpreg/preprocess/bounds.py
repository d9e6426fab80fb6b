"""Private bounds: :func:`dp_quantile` (exponential mechanism on a wide public range),
:func:`propose_bounds` (two DP quantiles, widened) and :func:`propose_row_norm_bound`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpreg._validation import check_bounds, check_epsilon, check_positive, check_rng
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms import exp_quantile
from dpreg.preprocess._common import PrivateBounds, PrivateValue, _matrix, _statement, _values
from dpreg.privacy import BOTH_RELATIONS, Neighbouring, PureDP, charge

__all__ = ["DEFAULT_COARSE_RANGE", "BOUND_QUANTILES", "BOUND_WIDENING", "dp_quantile",
           "propose_bounds", "propose_row_norm_bound"]

#: the public range searched when the user declares none: every value is clipped to it
DEFAULT_COARSE_RANGE = (-1.0e6, 1.0e6)
#: quantiles used to propose (lo, hi) bounds
BOUND_QUANTILES = (0.25, 0.75)
#: each side of a proposed range is widened by this fraction of its width (post-processing)
BOUND_WIDENING = 1.0
_QUANTILE_SOURCE = ("exponential-mechanism quantile (McSherry & Talwar 2007; Smith 2011), run on "
                    "asinh(z/scale) so that the base measure is scale-free")


def _check_scale(scale: Any) -> float:
    return check_positive(scale, "scale")


def dp_quantile(z: Any, *, q: float, epsilon: float, coarse_range: Any = DEFAULT_COARSE_RANGE,
                scale: float = 1.0, rng: Any = None, ledger: Any = None,
                label: str = "DP quantile") -> PrivateValue:
    """ε-DP q-quantile of ``z`` by the exponential mechanism over a wide public range.

    The values are clipped to the public ``coarse_range`` (default ±10⁶) and mapped by the
    increasing function u = asinh(z/scale); the rung exponential mechanism
    (:func:`dpreg.mechanisms.exp_quantile`, θ = 0) picks the q-quantile of u over
    [asinh(lo/scale), asinh(hi/scale)], and the answer is mapped back by scale·sinh(u).  A
    monotone map leaves the counts #{z < r} and #{z <= r} unchanged, so the utility and its
    sensitivity (1) are those of the plain mechanism; only the base measure changes, from
    uniform on a range of width 2·10⁶ to roughly logarithmic, which keeps the output near the data
    whatever their scale.

    Guarantee: ε-DP (pure) under replace-one **and** add/remove neighbours (one value changes
    each count by at most one).  Source: McSherry & Talwar 2007; Smith 2011; Alabi et al. 2022
    Alg. 3 (the same mechanism dpreg uses for Theil-Sen medians).
    """
    arr = _values(z, "z")
    qq = float(q)
    if not 0.0 <= qq <= 1.0 or math.isnan(qq):
        raise InvalidInputError(f"q must be a real number with 0 <= q <= 1; got {q!r}")
    eps = check_epsilon(epsilon)
    lo, hi = check_bounds(coarse_range, "coarse_range")
    s = _check_scale(scale)
    gen = check_rng(rng)
    charge(ledger, PureDP(eps), label, BOTH_RELATIONS)
    u = np.arcsinh(np.clip(arr, lo, hi) / s)
    ulo, uhi = math.asinh(lo / s), math.asinh(hi / s)
    r = float(exp_quantile(u, q=qq, epsilon=eps, lo=ulo, hi=uhi, rng=gen))  # inf: exact + warning
    value = float(np.clip(s * math.sinh(r), lo, hi))
    return PrivateValue(value, _statement(eps, Neighbouring.REPLACE_ONE, "exponential-mechanism "
                                          "quantile", _QUANTILE_SOURCE, rng, q=qq,
                                          coarse_range=(lo, hi), scale=s,
                                          also_add_remove=True))


def propose_bounds(z: Any, *, epsilon: float, quantiles: tuple[float, float] = BOUND_QUANTILES,
                   widening: float = BOUND_WIDENING, coarse_range: Any = DEFAULT_COARSE_RANGE,
                   scale: float = 1.0, rng: Any = None, ledger: Any = None,
                   label: str = "DP bounds") -> PrivateBounds:
    """Propose public-to-be bounds for one column: two DP quantiles (ε/2 each), widened.

    With ``(a, b)`` the released ``quantiles`` (default the quartiles) the proposal is
    ``(a − w·(b − a), b + w·(b − a))`` with ``w = widening`` (default 1.0, a Tukey-fence-like
    rule), intersected with ``coarse_range``; if the two draws come out in the wrong order they
    are swapped, and a degenerate range is widened to ``±scale`` (all post-processing).  Clip
    the data to the result before any bounded mechanism; that mechanism's guarantee then holds
    for the proposed bounds, and the total is the sum (sequential composition).

    Guarantee: ε-DP (pure) under replace-one and add/remove (two quantiles at ε/2, sequential
    composition).  Source: as :func:`dp_quantile`.
    """
    arr = _values(z, "z")
    qa, qb = (float(v) for v in quantiles)
    if not (0.0 <= qa < qb <= 1.0):
        raise InvalidInputError(f"quantiles must be (qa, qb) with 0 <= qa < qb <= 1; got {quantiles!r}")
    w = check_positive(widening, "widening", allow_zero=True)
    eps = check_epsilon(epsilon)
    lo, hi = check_bounds(coarse_range, "coarse_range")
    s = _check_scale(scale)
    gen = check_rng(rng)
    charge(ledger, PureDP(eps), label, BOTH_RELATIONS)
    half = PureDP(eps).split([1, 1]) if math.isfinite(eps) else [PureDP(eps)] * 2
    a = dp_quantile(arr, q=qa, epsilon=half[0].epsilon, coarse_range=(lo, hi), scale=s, rng=gen).value
    b = dp_quantile(arr, q=qb, epsilon=half[1].epsilon, coarse_range=(lo, hi), scale=s, rng=gen).value
    a, b = min(a, b), max(a, b)
    width = b - a
    if width <= 0.0:
        a, b, width = a - s, b + s, 2.0 * s
    plo, phi = max(lo, a - w * width), min(hi, b + w * width)
    if not phi > plo:  # only when the coarse range itself is degenerate around the draws
        plo, phi = lo, hi
    st = _statement(eps, Neighbouring.REPLACE_ONE, "DP bounds (two exponential-mechanism "
                    "quantiles)", _QUANTILE_SOURCE, rng, quantiles=(qa, qb), widening=w,
                    coarse_range=(lo, hi), scale=s, also_add_remove=True)
    return PrivateBounds(float(plo), float(phi), st, raw=(float(a), float(b)))


def propose_row_norm_bound(X: Any, *, epsilon: float, q: float = 0.95, widening: float = 0.25,
                           coarse_range: tuple[float, float] = (0.0, 1.0e6), scale: float = 1.0,
                           rng: Any = None, ledger: Any = None,
                           label: str = "DP row-norm bound") -> PrivateValue:
    """A clipping norm C for the rows of ``X``: (1 + widening) × the DP q-quantile of ‖x_i‖₂.

    Guarantee: ε-DP (pure) under replace-one and add/remove (one row changes one norm).
    Source: as :func:`dp_quantile` (clipping-norm selection by a private quantile follows
    Andrew et al. 2021's adaptive clipping idea, here in one shot).
    """
    Xa = _matrix(X)
    w = check_positive(widening, "widening", allow_zero=True)
    lo, hi = check_bounds(coarse_range, "coarse_range")
    if lo < 0:
        raise InvalidInputError(f"coarse_range must lie in [0, inf) for norms; got {coarse_range!r}")
    r = dp_quantile(np.linalg.norm(Xa, axis=1), q=q, epsilon=epsilon, coarse_range=(lo, hi),
                    scale=scale, rng=rng, ledger=ledger, label=label)
    value = float(min(hi, max(r.value, 1e-12) * (1.0 + w)))
    return PrivateValue(value, _statement(r.privacy.budget.epsilon, Neighbouring.REPLACE_ONE,  # type: ignore[attr-defined]
                                          "DP row-norm quantile", _QUANTILE_SOURCE, rng, q=q,
                                          widening=w, also_add_remove=True))
