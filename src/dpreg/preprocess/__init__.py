"""Private preprocessing: the statistics a DP analysis needs before it can choose bounds, a
method or a hyperparameter, each released by a DP mechanism and charged to the ledger.

=================================  =======================================  ====================
function                           releases                                 guarantee
=================================  =======================================  ====================
:func:`noisy_count`                n + Lap(1/ε) (rounded, >= 0)             ε-DP, add/remove
:func:`dp_quantile`                one q-quantile (exp. mechanism)          ε-DP, both relations
:func:`propose_bounds`             (lo, hi) from two DP quantiles, widened  ε-DP, both relations
:func:`propose_row_norm_bound`     a DP upper quantile of the row norms     ε-DP, both relations
:func:`noisy_nvar`                 Σ(x − x̄)² of clipped x + Laplace         ε-DP, either relation
:func:`tukey_n_models`             TukeyEM's m from n (public or noisy)     no cost (post-proc.)
=================================  =======================================  ====================

Under **replace-one** neighbouring (the simple-regression suite, TukeyEM) n is public and
:func:`noisy_count` is unnecessary: use ``len(data)``.  Under **add/remove** (AdaSSP's family by
default) n itself is private and must be released by :func:`noisy_count` before it is used.

Every function validates its inputs first (:class:`~dpreg.exceptions.InvalidInputError` before any
noise or charge), charges ``ledger`` (when given) before drawing noise, and returns a
:class:`PrivateValue` whose ``privacy`` records the budget, relation, mechanism and source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpreg._validation import (
    check_array,
    check_bounds,
    check_epsilon,
    check_int,
    check_positive,
    check_rng,
    describe_data,
    is_seeded,
)
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms import exp_quantile, laplace
from dpreg.privacy import (
    BOTH_RELATIONS,
    Neighbouring,
    PrivacyStatement,
    PureDP,
    charge,
    check_neighbouring,
)

__all__ = [
    "PrivateValue",
    "PrivateBounds",
    "DEFAULT_COARSE_RANGE",
    "BOUND_QUANTILES",
    "BOUND_WIDENING",
    "noisy_count",
    "dp_quantile",
    "propose_bounds",
    "propose_row_norm_bound",
    "noisy_nvar",
    "nvar_sensitivity_for",
    "boundary_count",
    "noisy_boundary_count",
    "tukey_n_models",
]

#: the public range searched when the user declares none: every value is clipped to it
DEFAULT_COARSE_RANGE = (-1.0e6, 1.0e6)
#: quantiles used to propose (lo, hi) bounds
BOUND_QUANTILES = (0.25, 0.75)
#: each side of a proposed range is widened by this fraction of its width (post-processing)
BOUND_WIDENING = 1.0
_QUANTILE_SOURCE = ("exponential-mechanism quantile (McSherry & Talwar 2007; Smith 2011), run on "
                    "asinh(z/scale) so that the base measure is scale-free")


@dataclass(frozen=True)
class PrivateValue:
    """A released statistic with its privacy statement."""

    value: float
    privacy: PrivacyStatement


@dataclass(frozen=True)
class PrivateBounds:
    """A DP-proposed ``(lo, hi)`` range (clip the data to it before use)."""

    lo: float
    hi: float
    privacy: PrivacyStatement
    raw: tuple[float, float] = field(default=(math.nan, math.nan))

    @property
    def bounds(self) -> tuple[float, float]:
        return (self.lo, self.hi)


def _statement(eps: float, rel: Neighbouring, mechanism: str, source: str, rng: Any,
               **details: Any) -> PrivacyStatement:
    return PrivacyStatement(PureDP(eps), rel, mechanism, source, seeded=is_seeded(rng),
                            details=dict(details))


def _values(z: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(z, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be an array of real numbers") from None
    if arr.size == 0:
        raise InvalidInputError(f"{name} must have at least one value; got an empty array")
    if np.any(np.isnan(arr)):
        raise InvalidInputError(f"{name} must not contain NaN")
    return arr


def _matrix(X: Any, name: str = "X") -> np.ndarray:
    """``X`` validated by :func:`dpreg._validation.check_array` (numeric, finite, non-empty); a
    1-D input is one column."""
    arr = check_array(X, name, ndim=(1, 2))
    return arr.reshape(-1, 1) if arr.ndim == 1 else arr


def noisy_count(data: Any, *, epsilon: float, rng: Any = None, ledger: Any = None,
                label: str = "noisy count") -> PrivateValue:
    """Release the number of rows of ``data`` (or the integer ``data`` itself) with Laplace noise.

    Guarantee: ε-DP (pure) under **add/remove-one** neighbours; the count has sensitivity 1.
    The released value is ``max(0, round(n + Lap(1/ε)))`` (rounding and the floor are
    post-processing).  Under replace-one neighbours n is public and this is unnecessary.
    Source: Dwork, McSherry, Nissim & Smith 2006 (Laplace mechanism).
    """
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        n = check_int(data, "data", minimum=0)
    else:
        try:
            n = len(data)
        except TypeError:
            raise InvalidInputError("data must be a dataset (rows) or a count; got "
                                    f"{describe_data(data)}") from None
    eps = check_epsilon(epsilon)
    gen = check_rng(rng)
    charge(ledger, PureDP(eps), label, Neighbouring.ADD_REMOVE)
    noisy = float(laplace(float(n), sensitivity=1.0, epsilon=eps, rng=gen))
    value = float(max(0, round(noisy)))
    return PrivateValue(value, _statement(eps, Neighbouring.ADD_REMOVE, "Laplace count",
                                          "Dwork et al. 2006", rng, sensitivity=1.0))


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
    monotone map leaves every count c(r) = #{z < r} unchanged, so the utility and its
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


def boundary_count(X: Any, bounds: Any) -> int:
    """Number of rows of ``X`` (n × k) with at least one coordinate at or beyond its bounds
    (``bounds``: one ``(lo, hi)`` per column): the rows that clipping moves or that sit on the
    edge of the box.  Changing one row changes it by at most 1 (replace-one and add/remove)."""
    arr = _matrix(X)
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__iter__"):
        raise InvalidInputError(f"bounds must be a list with one (lo, hi) per column; got {bounds!r}")
    b = [check_bounds(v, f"bounds[{j}]") for j, v in enumerate(bounds)]
    if arr.ndim != 2 or len(b) != arr.shape[1]:
        raise InvalidInputError(f"bounds must have one (lo, hi) per column ({arr.shape[-1]}); "
                                f"got {len(b)}")
    lo = np.array([v[0] for v in b])
    hi = np.array([v[1] for v in b])
    with np.errstate(invalid="ignore"):
        edge = (arr <= lo) | (arr >= hi)
    return int(np.count_nonzero(np.any(edge, axis=1)))


def noisy_boundary_count(X: Any, *, bounds: Any, epsilon: float, rng: Any = None,
                         ledger: Any = None, label: str = "noisy boundary count") -> PrivateValue:
    """Release :func:`boundary_count` (rows at or beyond the public or DP-proposed bounds) plus
    Laplace noise: the share of clipped rows, which biases every mean-based estimator (noisy
    sufficient statistics, AdaSSP) but not the conditional medians Theil-Sen estimates.

    Guarantee: ε-DP (pure) under replace-one **and** add/remove neighbours: the count has
    sensitivity 1 (one row enters or leaves the boundary set).  Source: Laplace mechanism
    (Dwork, McSherry, Nissim & Smith 2006); the statistic is dpreg's (docs/auto.md).
    """
    arr = _matrix(X)
    count = boundary_count(arr, bounds)  # validates the bounds before any charge
    eps = check_epsilon(epsilon)
    gen = check_rng(rng)
    charge(ledger, PureDP(eps), label, BOTH_RELATIONS)
    value = float(laplace(float(count), sensitivity=1.0, epsilon=eps, rng=gen))
    return PrivateValue(value, _statement(eps, Neighbouring.REPLACE_ONE, "Laplace boundary count",
                                          "Dwork et al. 2006", rng, sensitivity=1.0,
                                          also_add_remove=True))


def tukey_n_models(n: float, d: int, *, cap: int = 1000, rows_per_coefficient: int = 2) -> int:
    """TukeyEM's number of models m from n (public, or a :func:`noisy_count` release) and the
    number of design columns d: m = min(cap, ⌊n / (rows_per_coefficient·d)⌋).

    Each model is fitted on ⌊n/m⌋ >= rows_per_coefficient·d rows; the cap 1000 is Amin et al.'s
    recommendation.  A function of public values (or of a DP release): no privacy cost.
    """
    nn = float(n)
    if not math.isfinite(nn) or nn < 0:
        raise InvalidInputError(f"n must be a finite number >= 0; got {n!r}")
    dd = check_int(d, "d", minimum=1)
    c = check_int(cap, "cap", minimum=1)
    r = check_int(rows_per_coefficient, "rows_per_coefficient", minimum=1)
    return int(min(c, math.floor(nn / (r * dd))))

