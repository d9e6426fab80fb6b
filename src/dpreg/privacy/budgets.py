"""Typed privacy budgets, their composition, splitting and conversions.

Four definitions are supported, each as a frozen value type:

* :class:`PureDP` -- ε-differential privacy (δ = 0),
* :class:`ApproxDP` -- (ε, δ)-differential privacy,
* :class:`ZCDP` -- ρ-zero-concentrated DP (Bun & Steinke 2016),
* :class:`GDP` -- μ-Gaussian DP (Dong, Roth & Su 2022).

Rounding policy: every conversion and composition rounds *toward more privacy loss* (a larger
ε, ρ or μ is reported), and every calibration derived from a budget rounds toward *more
noise* (e.g. :meth:`GDP.from_approx` returns the largest μ whose exact δ(ε) curve stays at or
below the target δ).  Sums are computed exactly (``fractions.Fraction`` over the binary values
of the floats) and rounded up once, so ``sum(B.split(w)) <= B`` holds exactly, not just up to
floating error.

``split(weights)`` divides the *additive* quantity of each definition: ε for pure DP, ε and δ
for approximate DP (basic composition), ρ for zCDP and μ² for GDP.  A μ-GDP budget split with
weights ``(a², b², c²)`` therefore gives the parts ``μ·a/√(a²+b²+c²)`` etc.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, TypeVar

import numpy as np
from scipy import optimize, special

from dpreg._validation import (
    PRIVACY_PARAM_MAX,
    check_delta,
    check_epsilon,
    check_mu,
    check_positive,
    check_rho,
)
from dpreg.exceptions import InvalidInputError

__all__ = [
    "Budget",
    "PureDP",
    "ApproxDP",
    "ZCDP",
    "GDP",
    "compose",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "zcdp_epsilon",
    "zcdp_to_approx_bun_steinke",
    "zcdp_to_approx_lemma21",
    "zcdp_rho_for_approx",
]

B = TypeVar("B", bound="Budget")


# --------------------------------------------------------------------------------------------
# exact rounding helpers
# --------------------------------------------------------------------------------------------
def _frac(x: float) -> Fraction:
    return Fraction(float(x))


def _round_up(q: Fraction) -> float:
    """Smallest float >= q."""
    f = float(q)
    while Fraction(f) < q:
        f = math.nextafter(f, math.inf)
    return f


def _round_down(q: Fraction) -> float:
    """Largest float <= q."""
    f = float(q)
    while Fraction(f) > q:
        f = math.nextafter(f, -math.inf)
    return f


def _sqrt_start(q: Fraction) -> float:
    """A float within a few ulps of √q (q >= 0), also when q under- or overflows a float
    (an integer square root on q scaled by a power of four); inf when √q overflows."""
    n, d = q.numerator, q.denominator
    if n <= 0:
        return 0.0
    k = (120 - (n.bit_length() - d.bit_length())) // 2
    r = math.isqrt((n << (2 * k)) // d) if k >= 0 else math.isqrt(n // (d << (-2 * k)))
    try:
        return float(Fraction(r, 1 << k) if k >= 0 else Fraction(r << (-k)))
    except OverflowError:
        return math.inf


def _sqrt_up(q: Fraction) -> float:
    """Smallest float whose square is >= q (q >= 0)."""
    f = _sqrt_start(q)
    if math.isinf(f):
        return f
    while Fraction(f) ** 2 < q:
        f = math.nextafter(f, math.inf)
    while f > 0 and Fraction(math.nextafter(f, 0.0)) ** 2 >= q:
        f = math.nextafter(f, 0.0)
    return f


def _sqrt_down(q: Fraction) -> float:
    """Largest float whose square is <= q (q >= 0)."""
    f = _sqrt_start(q)
    if math.isinf(f):
        return float(np.finfo(np.float64).max)
    while f > 0 and Fraction(f) ** 2 > q:
        f = math.nextafter(f, 0.0)
    return f


def _up(x: float, ulps: int = 2) -> float:
    for _ in range(ulps):
        x = math.nextafter(x, math.inf)
    return x


#: relative slack of the caps for budget values: conversions and compositions round toward
#: more loss by a few ulps (e.g. the (ε, δ) of the μ calibrated for ε = EPSILON_MAX is
#: EPSILON_MAX·(1 + 1e-12)), which must not turn a release at the cap into an infinite one
_CAP_SLACK = 1e-9


def _budget_param(value: Any, name: str) -> float:
    """Budget parameters may be 0 (an empty budget, e.g. ``remaining()``) or inf (no privacy);
    mechanisms reject 0 themselves.  A value above its cap (:data:`dpreg.privacy.EPSILON_MAX`,
    ``RHO_MAX``, ``MU_MAX``; up to the rounding slack :data:`_CAP_SLACK`) is no privacy
    either and is stored as inf, so that every check of an infinite budget (NOT PRIVATE
    statements, ledgers) applies to it unchanged."""
    out = check_positive(value, name, allow_inf=True, allow_zero=True)
    return math.inf if out > PRIVACY_PARAM_MAX[name] * (1 + _CAP_SLACK) else out


def _number(value: Any) -> float:
    """``value`` as a float for a comparison (``nan`` for anything that is not a real number;
    the checks that follow report it)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _check_weights(weights: Iterable[float]) -> list[float]:
    w = [float(v) for v in weights]
    if not w:
        raise InvalidInputError("weights must be a non-empty sequence of positive numbers; got []")
    if any((not math.isfinite(v)) or v <= 0 for v in w):
        raise InvalidInputError(
            f"weights must be finite positive numbers; got {w!r}"
        )
    return w


def _split_additive(total: float, weights: Sequence[float]) -> list[float]:
    """Split ``total`` proportionally to ``weights``; each part is rounded down from its exact
    rational value, so the exact sum of the parts is <= total."""
    if math.isinf(total):
        return [math.inf] * len(weights)
    exact_w = [_frac(w) for w in weights]
    wsum = sum(exact_w, Fraction(0))
    t = _frac(total)
    return [_round_down(t * w / wsum) for w in exact_w]


# --------------------------------------------------------------------------------------------
# conversion formulas (pure functions)
# --------------------------------------------------------------------------------------------
# δ(ε) is a difference of two nearly equal terms; evaluating it loses ~1e-14 relative accuracy.
# Calibrations aim at δ·(1 − margin) so that the rounding stays on the side of more noise.
_CURVE_MARGIN = 1e-11


#: absolute tolerance of the root finders: effectively relative (rtol), so that the final
#: ulp-by-ulp correction takes a few steps even when the root is tiny
_XTOL = 1e-300


def gdp_delta(epsilon: float, mu: float) -> float:
    """Exact δ(ε) of a μ-GDP mechanism: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).

    (Dong, Roth & Su 2022, Cor. 2.13; Tang et al. 2023 Cor. 2.5.)  Computed in log space as
    Φ(a)·(1 − exp(ε + ln Φ(b) − ln Φ(a))), so that no ε overflows and the second term is kept
    (not dropped) however large ε is: the curve, and every calibration inverted from it, stays
    exact up to ε ~ 1e300.
    """
    epsilon = check_positive(epsilon, "epsilon", allow_inf=True, allow_zero=True)
    mu = check_positive(mu, "mu", allow_inf=True, allow_zero=True)
    if mu == 0:
        return 0.0
    if math.isinf(mu):
        return 1.0
    if math.isinf(epsilon):
        return 0.0
    a = -epsilon / mu + mu / 2.0
    b = -epsilon / mu - mu / 2.0
    log_first = float(special.log_ndtr(a))
    if log_first == -math.inf:
        return 0.0
    ratio = epsilon + float(special.log_ndtr(b)) - log_first  # ln(second/first) <= 0
    if ratio >= 0.0:
        return 0.0
    return max(0.0, math.exp(log_first) * -math.expm1(ratio))


def gdp_mu(epsilon: float, delta: float) -> float:
    """Largest μ such that μ-GDP implies (ε, δ)-DP, by bracketing root finding.

    δ(ε; μ) is increasing in μ, so the root of δ(ε; μ) = δ is bracketed in (0, hi] -- hi doubled
    from 50 until δ(ε; hi) exceeds δ, so μ grows without bound as ε does (μ ≈ √(2ε) for large ε)
    and the noise σ = Δ/μ vanishes continuously as ε → ∞ -- and refined with Brent's method; the
    result is then moved down (never up) until δ(ε; μ) <= δ·(1 − 1e-11) holds in floating point
    -- i.e. rounding is toward more noise, with a margin that covers the evaluation error of the
    curve.
    """
    # the budgets' own cap rule (:func:`_budget_param`, with its rounding slack), not the
    # strict one of user input: a budget that is finite (private) must get a finite μ, or its
    # Gaussian noise would silently vanish while it is still labelled private
    epsilon = (_budget_param(epsilon, "epsilon") if _number(epsilon) > PRIVACY_PARAM_MAX["epsilon"]
               else check_epsilon(epsilon))
    delta = check_delta(delta, allow_zero=False)
    if math.isinf(epsilon):
        return math.inf
    return _gdp_mu_root(float(epsilon), float(delta))


@functools.lru_cache(maxsize=1024)
def _gdp_mu_root(epsilon: float, delta: float) -> float:
    """The root finding of :func:`gdp_mu` on validated finite inputs (a pure function of public
    parameters, cached: estimators convert the same (ε, δ) on every fit)."""
    target = delta * (1.0 - _CURVE_MARGIN)

    def f(mu: float) -> float:
        return gdp_delta(epsilon, mu) - target

    lo, hi = 1e-12, 50.0
    if f(lo) > 0:  # pragma: no cover - would need delta below ~1e-300
        raise InvalidInputError(f"delta={delta!r} is too small to convert to GDP")
    while f(hi) < 0:  # the root grows like √(2ε): widen the bracket (no cap on μ)
        lo, hi = hi, 2.0 * hi
    mu = optimize.brentq(f, lo, hi, xtol=_XTOL, rtol=4 * np.finfo(float).eps, maxiter=500)
    while f(mu) > 0:
        mu = math.nextafter(mu, 0.0)
    return float(mu)


def gdp_epsilon(mu: float, delta: float) -> float:
    """Smallest ε such that μ-GDP implies (ε, δ)-DP (rounded up)."""
    mu = check_mu(mu)
    delta = check_delta(delta, allow_zero=False)
    if math.isinf(mu):
        return math.inf
    if gdp_delta(0.0, mu) <= delta * (1.0 - _CURVE_MARGIN):
        return 0.0

    target = delta * (1.0 - _CURVE_MARGIN)

    def f(eps: float) -> float:
        return gdp_delta(eps, mu) - target

    hi = 1.0
    while f(hi) > 0:
        hi *= 2.0
        if math.isinf(hi):  # pragma: no cover - μ beyond ~1e154
            return math.inf
    eps = optimize.brentq(f, 0.0, hi, xtol=_XTOL, rtol=4 * np.finfo(float).eps, maxiter=500)
    while f(eps) > 0:
        eps = math.nextafter(eps, math.inf)
    return _up(float(eps))


def zcdp_to_approx_bun_steinke(rho: float, delta: float) -> float:
    """ρ-zCDP ⇒ (ρ + 2√(ρ ln(1/δ)), δ)-DP (Bun & Steinke 2016, Prop. 1.3)."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def zcdp_to_approx_lemma21(rho: float, delta: float) -> float:
    """ρ-zCDP ⇒ (ρ + √(4ρ ln(√(πρ)/δ)), δ)-DP, the form used in Alabi et al. 2022, Lemma 21.

    The formula needs √(πρ) > δ.  For larger δ we use the guarantee at the largest valid
    δ′ < δ (an (ε, δ′) guarantee implies (ε, δ) for every δ >= δ′), which keeps ε(δ)
    non-increasing in δ: δ′ = √(πρ)·(1 − 10⁻¹²), where ε ≈ ρ.
    """
    cap = math.sqrt(math.pi * rho) * (1.0 - 1e-12)
    d = min(delta, cap)
    inner = math.sqrt(math.pi * rho) / d
    return rho + math.sqrt(4.0 * rho * math.log(inner))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """ε of the (ε, δ)-DP guarantee implied by ρ-zCDP: the smaller of the two bounds, rounded up."""
    rho = check_rho(rho)
    delta = check_delta(delta, allow_zero=False)
    if math.isinf(rho):
        return math.inf
    eps = min(zcdp_to_approx_bun_steinke(rho, delta), zcdp_to_approx_lemma21(rho, delta))
    return _up(eps, 4)


def zcdp_rho_for_approx(epsilon: float, delta: float) -> float:
    """Largest ρ whose conversion :func:`zcdp_epsilon` gives at most ``epsilon`` at ``delta``.

    Used by mechanisms that take an (ε, δ) target but calibrate Gaussian noise in zCDP (e.g.
    DPGDApprox of Alabi et al. 2022, which inverts Lemma 21).  Rounded toward less ρ (more noise).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    if math.isinf(epsilon):
        return math.inf

    def f(rho: float) -> float:
        return zcdp_epsilon(rho, delta) - epsilon

    lo, hi = 0.0, max(1.0, epsilon)
    while f(hi) < 0:
        hi *= 2.0
    if not math.isfinite(hi) or not f(hi) > 0 or not math.isfinite(zcdp_epsilon(hi, delta)):
        raise InvalidInputError(
            f"epsilon={epsilon!r} is too large to convert to zCDP at delta={delta!r}")
    rho = optimize.brentq(lambda r: f(r) if r > 0 else -epsilon, lo, hi, xtol=_XTOL,
                          rtol=4 * np.finfo(float).eps, maxiter=500)
    while rho > 0 and f(rho) > 0:
        rho = math.nextafter(rho, 0.0)
    return float(rho)


# --------------------------------------------------------------------------------------------
# budget types
# --------------------------------------------------------------------------------------------
class Budget(ABC):
    """Base class of the four budget types (not instantiable)."""

    kind: ClassVar[str] = "budget"

    @abstractmethod
    def split(self: B, weights: Iterable[float]) -> list[B]:
        """Parts proportional to ``weights`` that compose to at most ``self``."""

    @abstractmethod
    def __add__(self: B, other: B) -> B:
        """Sequential composition with a budget of the same definition."""

    @property
    @abstractmethod
    def is_infinite(self) -> bool:
        """True for an infinite (non-private) budget."""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        out.update({k: getattr(self, k) for k in self.__dataclass_fields__})  # type: ignore[attr-defined]
        return out

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Budget:
        """Inverse of :meth:`as_dict`."""
        kind = data.get("kind")
        classes: dict[str, type[Budget]] = {
            "pure": PureDP, "approx": ApproxDP, "zcdp": ZCDP, "gdp": GDP,
        }
        if kind not in classes:
            raise InvalidInputError(f"budget kind must be one of {sorted(classes)}; got {kind!r}")
        params = {k: v for k, v in data.items() if k != "kind"}
        return classes[kind](**params)

    def _same_type(self, other: Any) -> None:
        if type(other) is not type(self):
            raise InvalidInputError(
                f"can only compose budgets of the same definition; got {type(self).__name__} "
                f"and {type(other).__name__} (convert first, e.g. PureDP.to_zcdp())"
            )


@dataclass(frozen=True)
class PureDP(Budget):
    """ε-differential privacy (pure DP)."""

    epsilon: float
    kind: ClassVar[str] = "pure"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _budget_param(self.epsilon, "epsilon"))

    @property
    def is_infinite(self) -> bool:
        return math.isinf(self.epsilon)

    def split(self, weights: Iterable[float]) -> list[PureDP]:
        w = _check_weights(weights)
        return [PureDP(e) for e in _split_additive(self.epsilon, w)]

    def __add__(self, other: PureDP) -> PureDP:
        self._same_type(other)
        return compose([self, other])

    def __le__(self, other: PureDP) -> bool:
        self._same_type(other)
        return self.epsilon <= other.epsilon

    def to_zcdp(self) -> ZCDP:
        """ε-DP ⇒ (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4), rounded up."""
        if self.is_infinite:
            return ZCDP(math.inf)
        return ZCDP(_round_up(_frac(self.epsilon) ** 2 / 2))

    def to_approx(self, delta: float = 0.0) -> ApproxDP:
        """ε-DP is (ε, δ)-DP for every δ >= 0."""
        return ApproxDP(self.epsilon, delta)

    def __str__(self) -> str:
        return f"ε={self.epsilon:g} (pure DP)"


@dataclass(frozen=True)
class ApproxDP(Budget):
    """(ε, δ)-differential privacy."""

    epsilon: float
    delta: float
    kind: ClassVar[str] = "approx"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _budget_param(self.epsilon, "epsilon"))
        object.__setattr__(self, "delta", check_delta(self.delta))

    @property
    def is_infinite(self) -> bool:
        return math.isinf(self.epsilon)

    def split(
        self, weights: Iterable[float], delta_weights: Iterable[float] | None = None
    ) -> list[ApproxDP]:
        """Basic-composition split: ε by ``weights``; δ by ``delta_weights`` (default the same)."""
        w = _check_weights(weights)
        dw = w if delta_weights is None else [float(v) for v in delta_weights]
        if len(dw) != len(w) or any((not math.isfinite(v)) or v < 0 for v in dw) or sum(dw) <= 0:
            raise InvalidInputError(
                f"delta_weights must be {len(w)} finite non-negative numbers, not all zero; got {dw!r}"
            )
        eps = _split_additive(self.epsilon, w)
        if self.delta == 0:
            dels = [0.0] * len(w)
        else:
            pos = [i for i, v in enumerate(dw) if v > 0]
            dpos = _split_additive(self.delta, [dw[i] for i in pos])
            dels = [0.0] * len(w)
            for i, d in zip(pos, dpos):
                dels[i] = d
        return [ApproxDP(e, d) for e, d in zip(eps, dels)]

    def __add__(self, other: ApproxDP) -> ApproxDP:
        self._same_type(other)
        return compose([self, other])

    def __le__(self, other: ApproxDP) -> bool:
        self._same_type(other)
        return self.epsilon <= other.epsilon and self.delta <= other.delta

    def __str__(self) -> str:
        return f"(ε={self.epsilon:g}, δ={self.delta:g})-DP"


@dataclass(frozen=True)
class ZCDP(Budget):
    """ρ-zero-concentrated differential privacy."""

    rho: float
    kind: ClassVar[str] = "zcdp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _budget_param(self.rho, "rho"))

    @property
    def is_infinite(self) -> bool:
        return math.isinf(self.rho)

    def split(self, weights: Iterable[float]) -> list[ZCDP]:
        w = _check_weights(weights)
        return [ZCDP(r) for r in _split_additive(self.rho, w)]

    def __add__(self, other: ZCDP) -> ZCDP:
        self._same_type(other)
        return compose([self, other])

    def __le__(self, other: ZCDP) -> bool:
        self._same_type(other)
        return self.rho <= other.rho

    def to_approx(self, delta: float) -> ApproxDP:
        """ρ-zCDP ⇒ (ε, δ)-DP with ε the smaller of Bun–Steinke and Lemma 21 (rounded up)."""
        return ApproxDP(zcdp_epsilon(self.rho, delta), delta)

    @classmethod
    def from_approx(cls, epsilon: float, delta: float) -> ZCDP:
        """Largest ρ whose (ε, δ) conversion stays within ``epsilon`` (rounded toward less ρ)."""
        return cls(zcdp_rho_for_approx(epsilon, delta))

    def __str__(self) -> str:
        return f"ρ={self.rho:g} (zCDP)"


@dataclass(frozen=True)
class GDP(Budget):
    """μ-Gaussian differential privacy (f-DP with trade-off function G_μ)."""

    mu: float
    kind: ClassVar[str] = "gdp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _budget_param(self.mu, "mu"))

    @property
    def is_infinite(self) -> bool:
        return math.isinf(self.mu)

    def split(self, weights: Iterable[float]) -> list[GDP]:
        """Split μ² proportionally to ``weights`` (so the parts compose back to at most μ)."""
        w = _check_weights(weights)
        if self.is_infinite:
            return [GDP(math.inf) for _ in w]
        exact_w = [_frac(v) for v in w]
        wsum = sum(exact_w, Fraction(0))
        mu2 = _frac(self.mu) ** 2
        parts = [_sqrt_down(mu2 * v / wsum) for v in exact_w]
        return [GDP(p) for p in parts]

    def __add__(self, other: GDP) -> GDP:
        self._same_type(other)
        return compose([self, other])

    def __le__(self, other: GDP) -> bool:
        self._same_type(other)
        return self.mu <= other.mu

    def to_approx(self, delta: float) -> ApproxDP:
        """μ-GDP ⇒ (ε, δ)-DP on the exact δ(ε) curve (ε rounded up)."""
        return ApproxDP(gdp_epsilon(self.mu, delta), delta)

    @classmethod
    def from_approx(cls, epsilon: float, delta: float) -> GDP:
        """Largest μ such that μ-GDP implies (ε, δ)-DP (exact curve, rounded down)."""
        return cls(gdp_mu(epsilon, delta))

    def to_zcdp(self) -> ZCDP:
        """μ-GDP ⇒ (μ²/2)-zCDP: a μ-GDP mechanism is a post-processing of the Gaussian pair
        N(0,1) vs N(μ,1), whose Rényi divergence of order α is αμ²/2."""
        if self.is_infinite:
            return ZCDP(math.inf)
        return ZCDP(_round_up(_frac(self.mu) ** 2 / 2))

    def __str__(self) -> str:
        return f"μ={self.mu:g} (Gaussian DP)"


def compose(budgets: Sequence[B]) -> B:
    """Sequential composition of budgets of one definition (rounded toward more loss).

    Pure: ε adds; approximate: ε and δ add (basic composition); zCDP: ρ adds; GDP: μ² adds.
    """
    budgets = [as_budget(b) for b in budgets]  # type: ignore[misc]
    if not budgets:
        raise InvalidInputError("compose needs at least one budget; got none")
    first = budgets[0]
    for b in budgets[1:]:
        first._same_type(b)
    if isinstance(first, PureDP):
        if any(b.is_infinite for b in budgets):
            return PureDP(math.inf)  # type: ignore[return-value]
        return PureDP(_round_up(sum((_frac(b.epsilon) for b in budgets), Fraction(0))))  # type: ignore[attr-defined,return-value]
    if isinstance(first, ApproxDP):
        dsum = sum((_frac(b.delta) for b in budgets), Fraction(0))  # type: ignore[attr-defined]
        if dsum >= 1:
            raise InvalidInputError(f"composed delta must be < 1; got {float(dsum)!r}")
        eps = (math.inf if any(b.is_infinite for b in budgets)
               else _round_up(sum((_frac(b.epsilon) for b in budgets), Fraction(0))))  # type: ignore[attr-defined]
        return ApproxDP(eps, _round_up(dsum))  # type: ignore[return-value]
    if isinstance(first, ZCDP):
        if any(b.is_infinite for b in budgets):
            return ZCDP(math.inf)  # type: ignore[return-value]
        return ZCDP(_round_up(sum((_frac(b.rho) for b in budgets), Fraction(0))))  # type: ignore[attr-defined,return-value]
    if isinstance(first, GDP):
        if any(b.is_infinite for b in budgets):
            return GDP(math.inf)  # type: ignore[return-value]
        return GDP(_sqrt_up(sum((_frac(b.mu) ** 2 for b in budgets), Fraction(0))))  # type: ignore[attr-defined,return-value]
    raise InvalidInputError(f"not a budget: {first!r}")  # pragma: no cover


def as_budget(value: Any, name: str = "budget") -> Budget:
    """Accept a :class:`Budget` or reject with a clear message."""
    if isinstance(value, Budget):
        return value
    raise InvalidInputError(
        f"{name} must be a PureDP, ApproxDP, ZCDP or GDP budget; got {value!r}"
    )
