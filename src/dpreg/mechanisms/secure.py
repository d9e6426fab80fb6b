"""Float-safe ("secure") Laplace and Gaussian noise: exact discrete samplers on a public grid.

Why.  Textbook Laplace/Gaussian noise computed in floating point (``value + scale·ln(U)``)
does not have the distribution the proofs assume: the set of floats it can produce depends on
the value it is added to, and the low-order bits of a release can reveal the private value
(Mironov 2012).  In **secure mode** dpreg therefore releases

    out = γ · ( rint(value/γ) + K ),        K ~ discrete Laplace or discrete Gaussian on ℤ,

with a public power-of-two grid step γ = 2^e, the integer noise K sampled *exactly* (integer
arithmetic only) from bits of the operating system's CSPRNG (:func:`os.urandom`).  Every
floating-point operation after the integer sum ``rint(value/γ) + K`` is a deterministic
function of that integer (multiplication by a power of two is exact, a sum of exact integers
is correctly rounded), i.e. post-processing.  Secure mode is what dpreg uses whenever the
caller gives **no seed** (``rng=None``/``random_state=None``, see :class:`SecureGenerator`);
a seed selects the seeded floating-point mode, which is reproducible and meant for
experiments (results record which mode was used: ``PrivacyStatement.randomness``).

Grid rounding is accounted in the sensitivity.  Rounding to the nearest grid point moves each
coordinate by at most γ/2, so for neighbouring inputs ``a, b`` (d coordinates)
``|rint(a_i/γ) − rint(b_i/γ)| <= |a_i − b_i|/γ + 1``, hence in grid units

* L1 sensitivity  Δ₁/γ + d   (Laplace),
* L2 sensitivity  Δ₂/γ + √d  (Gaussian; ‖e_a − e_b‖₂ <= √d for rounding errors in [−½, ½]).

The grid is chosen from public quantities only (Δ, ε or σ, d): γ is the largest power of two
with γ <= Δ·2⁻¹⁰/d (Laplace; √d for Gaussian), so the extra sensitivity is at most 2⁻¹⁰ of
Δ, and with at least 2¹⁴ grid steps per noise scale; it is capped so that all integers stay
well inside int64.  The noise scale is then recomputed from the inflated sensitivity (always
rounded toward *more* noise).  Values are first clamped to ±2¹⁰⁰⁰·γ (a 1-Lipschitz map, so the
sensitivity is unchanged) to keep ``value/γ`` finite.

Samplers (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for differential privacy",
Algorithms 1-3), vectorised over lanes with numpy integer arithmetic:

* ``Bernoulli(a/b)`` for integers 0 <= a <= b: compare a uniform real U with a/b lazily, one
  random byte at a time (each byte decides with probability >= 255/256; undecided lanes read
  another byte).  Exact.
* ``Bernoulli(exp(−γ))`` for rational γ = a/b: Algorithm 1 of CKS for γ in [0, 1] (the loop
  ``K ← K+1`` while Bernoulli(γ/K) succeeds; return 1 iff K is odd) and a product of ⌊γ⌋
  Bernoulli(e⁻¹) draws for the integer part.
* Discrete Laplace ``P(k) ∝ exp(−|k|·den/num)`` (scale num/den): CKS Algorithm 2
  (a truncated geometric part U ∈ [0, num) accepted with probability exp(−U/num), a
  geometric part V counting Bernoulli(e⁻¹) successes, Y = ⌊(U + num·V)/den⌋, a random sign,
  rejecting "−0").
* Discrete Gaussian ``P(k) ∝ exp(−k²/(2S))``: CKS Algorithm 3 with t = ⌊√S⌋ + 1 and S an
  integer multiple of t (so that σ²/t is an integer and every acceptance exponent is a ratio
  of two int64 integers).  The requested σ² is rounded *up* to such an S.

Lanes whose integers would leave the int64-safe range (events of probability < e⁻¹⁰⁰) are
finished exactly with Python integers, so the samplers are exact, not just very accurate.

Privacy of the secure mechanisms.
* :func:`secure_laplace`: discrete Laplace with scale t >= (Δ₁/γ + d)/ε on an integer-valued
  query of L1 sensitivity Δ₁/γ + d: every output's probability ratio is <= e^ε, i.e. **ε-DP
  exactly** (no approximation).
* :func:`secure_gaussian`: the continuous calibration σ (from the budget and the inflated
  sensitivity) gives the grid variance s² = (σ/γ)²; dpreg samples N_ℤ(0, S) with
  S >= s² + τ², τ = 8.  With the randomised rounding kernel κ(u) = φ_τ(u)/Σ_j φ_τ(j − u) (a
  partition of unity, shift-equivariant on ℤ), rounding a continuous N(0, s²) draw gives, at
  every integer, probabilities within a factor 1 ± 2·Σ_{m>=1} e^{−2π²τ²m²} (< 10⁻⁵⁰⁰ for τ = 8)
  of N_ℤ(0, s² + τ²).  The secure output is therefore post-processing of the continuous
  Gaussian mechanism with the same σ, up to that multiplicative factor: every guarantee of
  the continuous mechanism (ρ-zCDP, μ-GDP, (ε, δ)) carries over, with a slack far below the
  float rounding that :func:`~dpreg.mechanisms.gaussian_sigma` already rounds away (σ is
  rounded up).  For zCDP budgets CKS (Thm 14) also give the bound directly.

What remains idealised is listed in ``docs/threat-model.md`` (the exponential mechanism, the
smooth-sensitivity Student-t noise, PTR's Laplace test and TukeyEM's sampling still use
floating-point samplers driven by a CSPRNG-seeded numpy generator).
"""

from __future__ import annotations

import decimal
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpreg.exceptions import InvalidInputError

__all__ = [
    "SecureGenerator",
    "is_secure",
    "secure_generator",
    "bernoulli_ratio",
    "bernoulli_exp",
    "discrete_laplace",
    "discrete_gaussian",
    "discrete_gaussian_variance",
    "secure_laplace",
    "secure_gaussian",
    "laplace_grid",
    "gaussian_grid",
    "GridPlan",
    "GAUSSIAN_TAU",
]

Entropy = Callable[[int], bytes]

#: a lane is decided byte by byte: a·2⁸ and (w + 1)·b must stay below 2⁶³
_MAX_DEN = 1 << 55
#: integers |x| < 2⁶² are handled in int64 lanes; larger ones in Python ints
_SAFE = 1 << 62
#: minimum number of grid steps per noise scale (resolution of the noise)
_MIN_STEPS_LOG2 = 14
#: largest grid-unit noise scale normally used (Gaussian: keeps S = σ² inside the fast int64
#: path; Laplace: keeps the scale below 2⁵⁵).  Larger ones (tiny ε) use Python integers.
_MAX_STEPS_LOG2 = 26
_MAX_LAPLACE_STEPS_LOG2 = 48
#: the extra sensitivity from rounding is at most 2^−10 of the sensitivity (when the caps allow)
_ROUNDING_SHARE_LOG2 = 10
#: |value/γ| is clamped to 2^1000 (1-Lipschitz, keeps everything finite)
_CLAMP_LOG2 = 1000
#: width (grid units) of the randomised-rounding kernel in the discrete Gaussian argument
GAUSSIAN_TAU = 8


# ----------------------------------------------------------------------------- randomness
class _Bits:
    """Uniform random bytes/words from a CSPRNG (``os.urandom`` unless a test injects one)."""

    def __init__(self, entropy: Entropy | None = None) -> None:
        self._read = os.urandom if entropy is None else entropy

    def u8(self, n: int) -> np.ndarray:
        return np.frombuffer(self._read(int(n)), dtype=np.uint8)

    def u64(self, n: int) -> np.ndarray:
        return np.frombuffer(self._read(8 * int(n)), dtype=np.uint64)

    def py_below(self, b: int) -> int:
        """Uniform integer in [0, b) (Python ints, any size; rejection sampling)."""
        nbytes = (b.bit_length() + 7) // 8 + 1
        top = 1 << (8 * nbytes)
        limit = top - top % b
        while True:
            w = int.from_bytes(self._read(nbytes), "little")
            if w < limit:
                return w % b


def _as_bits(entropy: Entropy | _Bits | None) -> _Bits:
    return entropy if isinstance(entropy, _Bits) else _Bits(entropy)


class SecureGenerator(np.random.Generator):
    """A numpy ``Generator`` seeded from the OS CSPRNG that marks the caller as *unseeded*.

    :func:`dpreg._validation.check_rng` returns one for ``rng=None``.  Its own numpy stream is
    used for everything that is not Laplace or Gaussian noise (pair designs, exponential
    mechanisms, Student-t noise, ...); :func:`dpreg.mechanisms.laplace` and
    :func:`dpreg.mechanisms.gaussian` recognise it and draw their noise with the exact
    discrete samplers of this module from :func:`os.urandom` instead.
    """

    @classmethod
    def from_os_entropy(cls) -> SecureGenerator:
        seed = np.random.SeedSequence(int.from_bytes(os.urandom(32), "little"))
        return cls(np.random.PCG64(seed))


def secure_generator() -> SecureGenerator:
    """A fresh :class:`SecureGenerator` (what ``check_rng(None)`` returns)."""
    return SecureGenerator.from_os_entropy()


def is_secure(rng: Any) -> bool:
    """True for ``None`` or a :class:`SecureGenerator`: Laplace/Gaussian noise goes through the
    exact discrete samplers.  Seeds and ordinary generators select the seeded float mode."""
    return rng is None or isinstance(rng, SecureGenerator)


# ----------------------------------------------------------------------------- Python-int exact helpers
def _py_bernoulli(a: int, b: int, bits: _Bits) -> bool:
    """Exact Bernoulli(a/b), 0 <= a <= b, Python integers."""
    while True:
        w = bits.py_below(256)
        hi = a << 8
        if (w + 1) * b <= hi:
            return True
        if w * b >= hi:
            return False
        a = hi - w * b


def _py_bernoulli_exp_frac(a: int, b: int, bits: _Bits) -> bool:
    """Exact Bernoulli(exp(−a/b)) for 0 <= a <= b (CKS Algorithm 1)."""
    k = 1
    while _py_bernoulli(a, b * k, bits):
        k += 1
    return k % 2 == 1


def _py_bernoulli_exp(a: int, b: int, bits: _Bits) -> bool:
    """Exact Bernoulli(exp(−a/b)) for a >= 0, b >= 1 (Python integers)."""
    q, r = divmod(a, b)
    while q > 0:  # e^{-q} as a product of factors e^{-min(q, 44)}
        step = min(q, 44)
        w = int(bits.u64(1)[0])
        t = _exp_words(step, 1)
        if w > t or (w == t and not _py_lt_exp(step, w, bits)):
            return False
        q -= step
    return _py_bernoulli_exp_frac(r, b, bits)


# ----------------------------------------------------------------------------- e^{-v} to any precision
_EXP_MAX = 44  # e^{-44} ≈ 2^{-63.5}: thresholds of 64-bit words for e^{-1} .. e^{-44}


def _exp_words(v: int, k: int) -> int:
    """⌊e^{−v}·2^{64k}⌋ exactly (Decimal's correctly rounded exp, precision raised until the
    floor is certain)."""
    prec = 40 + v + (64 * k * 31) // 100
    while True:
        with decimal.localcontext() as ctx:
            ctx.prec = prec
            x = decimal.Decimal(-v).exp()
        ulp = Fraction(10) ** (x.adjusted() - prec + 1)
        scale = 1 << (64 * k)
        lo = math.floor((Fraction(x) - ulp) * scale)
        hi = math.floor((Fraction(x) + ulp) * scale)
        if lo == hi:
            return lo
        prec *= 2


_T = np.array([_exp_words(v, 1) for v in range(1, _EXP_MAX + 1)], dtype=np.uint64)  # decreasing
_T_ASC = _T[::-1].copy()


def _py_lt_exp(v: int, first: int, bits: _Bits) -> bool:
    """Is U < e^{−v}, given that U's first 64 bits equal ⌊e^{−v}·2⁶⁴⌋?  Reads further words."""
    prefix, k = first, 1
    while True:
        k += 1
        w = int(bits.u64(1)[0])
        prefix = (prefix << 64) | w
        t = _exp_words(v, k)
        if prefix < t:
            return True
        if prefix > t:
            return False


def _bernoulli_exp_int(q: np.ndarray, bits: _Bits) -> np.ndarray:
    """Exact Bernoulli(e^{−q}) for int64 lanes q >= 0: a 64-bit uniform word compared with
    ⌊e^{−q}·2⁶⁴⌋ (ties resolved with further words), q > 44 as a product of e^{−44} factors."""
    out = np.ones(q.size, dtype=bool)
    rem = q.astype(np.int64).copy()
    lanes = np.flatnonzero(rem > 0)
    while lanes.size:
        step = np.minimum(rem[lanes], _EXP_MAX)
        w = bits.u64(lanes.size)
        thr = _T[step - 1]
        ok = w < thr
        tie = w == thr
        for i in np.flatnonzero(tie):
            ok[i] = _py_lt_exp(int(step[i]), int(w[i]), bits)
        out[lanes[~ok]] = False
        rem[lanes] -= step
        lanes = lanes[ok & (rem[lanes] > 0)]
    return out


def _geometric_e1(n: int, bits: _Bits) -> np.ndarray:
    """V ~ Geometric(1 − e⁻¹) (P(V >= v) = e^{−v}) as V = max{v : U < e^{−v}} for a uniform U
    read as a 64-bit word (ties with a threshold resolved exactly with further words); V >= 44
    continues with a fresh draw (memorylessness)."""
    v = np.zeros(n, dtype=np.int64)
    lanes = np.arange(n)
    while lanes.size:
        w = bits.u64(lanes.size)
        below = _EXP_MAX - np.searchsorted(_T_ASC, w, side="right")  # #{v : T_v > w}
        tie = np.isin(w, _T)
        for i in np.flatnonzero(tie):
            j = int(np.flatnonzero(_T == w[i])[0]) + 1  # w equals the threshold of e^{-j}
            below[i] = (j - 1) + int(_py_lt_exp(j, int(w[i]), bits))
        v[lanes] += below
        lanes = lanes[below == _EXP_MAX]
    return v


# ----------------------------------------------------------------------------- vectorised exact samplers
def _bern(a: np.ndarray, b: np.ndarray, bits: _Bits) -> np.ndarray:
    """Bernoulli(a/b) lanes (int64, 0 <= a <= b < 2⁵⁵; not checked)."""
    w = bits.u8(a.size).astype(np.int64)
    hi = a << 8
    wb = w * b
    out = wb + b <= hi
    amb = np.flatnonzero(~out & (wb < hi))
    if amb.size:
        aa, bb = hi[amb] - wb[amb], b[amb]
        while amb.size:  # undecided lanes (probability < 1/256 each): read another byte
            w = bits.u8(amb.size).astype(np.int64)
            hi = aa << 8
            wb = w * bb
            yes = wb + bb <= hi
            out[amb[yes]] = True
            more = ~yes & (wb < hi)
            amb, aa, bb = amb[more], hi[more] - wb[more], bb[more]
    return out


def bernoulli_ratio(a: Any, b: Any, *, entropy: Entropy | _Bits | None = None) -> np.ndarray:
    """Exact independent Bernoulli(a_i/b_i) draws for integers 0 <= a_i <= b_i, 1 <= b_i < 2⁵⁵.

    The uniform real U is compared with a/b one random byte at a time: with the next byte w,
    ``(w+1)·b <= 256·a`` decides 1, ``w·b >= 256·a`` decides 0, otherwise the comparison
    continues with ``a ← 256·a − w·b`` (probability < 1/256 per byte).
    """
    bits = _as_bits(entropy)
    a_arr = np.array(a, dtype=np.int64, copy=True).ravel()
    b_arr = np.broadcast_to(np.asarray(b, dtype=np.int64), np.shape(a)).ravel().copy()
    if a_arr.size and (np.any(b_arr < 1) or np.any(b_arr >= _MAX_DEN) or np.any(a_arr < 0)
                       or np.any(a_arr > b_arr)):
        raise InvalidInputError("bernoulli_ratio needs integers 0 <= a <= b with 1 <= b < 2**55")
    return _bern(a_arr, b_arr, bits).reshape(np.shape(a))


def _bernoulli_exp_frac(a: np.ndarray, b: np.ndarray, bits: _Bits) -> np.ndarray:
    """Exact Bernoulli(exp(−a/b)) for int64 lanes with 0 <= a <= b < 2⁵⁵ (CKS Algorithm 1:
    K ← K + 1 while Bernoulli(γ/K) succeeds; 1 iff the final K is odd)."""
    odd = np.ones(a.size, dtype=bool)  # K = 1
    succ = _bern(a, b, bits)
    alive = np.flatnonzero(succ)
    aa, bb = a[alive], b[alive]
    kk = 2
    while alive.size:
        odd[alive] = kk % 2 == 1
        if int(bb.max()) * kk < _MAX_DEN:
            succ = _bern(aa, bb * kk, bits)
        else:
            # Bernoulli(a/(b·K)) = Bernoulli(a/b) AND Bernoulli(1/K) (independent)
            succ = _bern(aa, bb, bits) & _bern(np.ones(aa.size, dtype=np.int64),
                                               np.full(aa.size, kk, dtype=np.int64), bits)
        alive, aa, bb = alive[succ], aa[succ], bb[succ]
        kk += 1
    return odd


def bernoulli_exp(a: Any, b: Any, *, entropy: Entropy | _Bits | None = None) -> np.ndarray:
    """Exact independent Bernoulli(exp(−a_i/b_i)) for integers a_i >= 0, 1 <= b_i < 2⁵⁵."""
    bits = _as_bits(entropy)
    a_arr = np.array(a, dtype=np.int64).ravel()
    b_arr = np.broadcast_to(np.asarray(b, dtype=np.int64), np.shape(a)).ravel().copy()
    if a_arr.size and (np.any(a_arr < 0) or np.any(b_arr < 1) or np.any(b_arr >= _MAX_DEN)):
        raise InvalidInputError("bernoulli_exp needs integers a >= 0 and 1 <= b < 2**55")
    return _bexp(a_arr, b_arr, bits).reshape(np.shape(a))


def _bexp(a_arr: np.ndarray, b_arr: np.ndarray, bits: _Bits) -> np.ndarray:
    q, r = np.divmod(a_arr, b_arr)
    out = _bernoulli_exp_int(q, bits)  # e^{−⌊a/b⌋}
    live = np.flatnonzero(out & (r > 0))
    if live.size:
        out[live] = _bernoulli_exp_frac(r[live], b_arr[live], bits)
    return out


def _uniform_below(b: int, n: int, bits: _Bits) -> np.ndarray:
    """n exact uniform integers in [0, b), 1 <= b < 2⁶³ (64-bit words with rejection)."""
    out = np.empty(n, dtype=np.int64)
    limit = np.uint64((1 << 64) - (1 << 64) % b) if (1 << 64) % b else None
    todo = np.arange(n)
    bb = np.uint64(b)
    while todo.size:
        w = bits.u64(todo.size)
        if limit is None:
            keep = np.ones(todo.size, dtype=bool)
        else:
            keep = w < limit
        out[todo[keep]] = (w[keep] % bb).astype(np.int64)
        todo = todo[~keep]
    return out


def _laplace_scale_fraction(scale: Any) -> Fraction:
    try:
        if isinstance(scale, (bool, np.bool_)):
            raise TypeError
        frac = Fraction(scale)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInputError(f"scale must be a finite positive number; got {scale!r}") from None
    if not frac > 0:
        raise InvalidInputError(f"scale must be a finite positive number; got {scale!r}")
    return frac


def _py_discrete_laplace(num: int, den: int, bits: _Bits) -> int:
    """One exact discrete-Laplace draw of scale num/den with Python integers (any size)."""
    while True:
        u = bits.py_below(num)
        if not _py_bernoulli_exp_frac(u, num, bits):
            continue
        v = int(_geometric_e1(1, bits)[0])
        y = (u + num * v) // den
        negative = bool(bits.u8(1)[0] & 1)
        if negative and y == 0:
            continue
        return -y if negative else y


def discrete_laplace(scale: Any, size: int, *, entropy: Entropy | _Bits | None = None
                     ) -> np.ndarray:
    """Exact draws from the discrete Laplace distribution P(k) ∝ exp(−|k|/scale) on ℤ.

    ``scale`` is an int, a :class:`fractions.Fraction` or a float (used exactly as the rational
    it represents exactly; numerators or denominators from 2⁵⁵ on use a slower Python-integer
    path).  Returns an int64 array (or an object array of Python ints when a draw leaves the
    int64 range).  CKS 2020, Algorithm 2.
    """
    bits = _as_bits(entropy)
    frac = _laplace_scale_fraction(scale)
    num, den = frac.numerator, frac.denominator
    n = int(size)
    if num >= _MAX_DEN or den >= _MAX_DEN:  # enormous or oddly precise scales: Python ints
        draws = [_py_discrete_laplace(num, den, bits) for _ in range(n)]
        if all(abs(d) < _SAFE for d in draws):
            return np.array(draws, dtype=np.int64).reshape(n)
        return np.array(draws, dtype=object).reshape(n)
    out = np.zeros(n, dtype=np.int64)
    big: dict[int, int] = {}
    v_cap = max(1, (_SAFE // num) - 2)  # u + num·v stays below 2^62 for v < v_cap
    numa = np.full(1, num, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        m = todo.size
        u = _uniform_below(num, m, bits)
        acc = _bernoulli_exp_frac(u, np.broadcast_to(numa, (m,)), bits)
        todo_a, u = todo[acc], u[acc]
        m = todo_a.size
        v = _geometric_e1(m, bits)
        sign = (bits.u8(m) & 1).astype(bool)
        capped = v >= v_cap
        y = (u + num * np.minimum(v, v_cap)) // den
        for i in np.flatnonzero(capped):  # exact in Python integers
            yi = (int(u[i]) + num * int(v[i])) // den
            big[int(todo_a[i])] = -yi if sign[i] else yi
        reject = sign & (y == 0) & ~capped
        keep = ~reject & ~capped
        out[todo_a[keep]] = np.where(sign[keep], -y[keep], y[keep])
        todo = np.concatenate([todo[~acc], todo_a[reject]])
    if big:
        obj = out.astype(object)
        for idx, val in big.items():
            obj[idx] = val
        return obj
    return out


def discrete_gaussian_variance(sigma: Any, *, tau: int = 0) -> tuple[int, int]:
    """The sampler's parameters ``(S, t)`` for a requested σ: S is the smallest multiple of
    t = ⌊√(σ² + τ²)⌋ + 1 that is >= σ² + τ² (so S/t is an integer).  Exact rational arithmetic.
    """
    try:
        if isinstance(sigma, (bool, np.bool_)):
            raise TypeError
        s2 = Fraction(sigma) ** 2 + tau * tau
    except (TypeError, ValueError, OverflowError):
        raise InvalidInputError(f"sigma must be a finite positive number; got {sigma!r}") from None
    if not s2 > 0:
        raise InvalidInputError(f"sigma must be a finite positive number; got {sigma!r}")
    t = math.isqrt(math.floor(s2)) + 1  # = ⌊σ⌋ + 1 for the (possibly non-integer) σ
    m = math.ceil(s2 / t)
    return t * m, t


def discrete_gaussian(sigma: Any, size: int, *, entropy: Entropy | _Bits | None = None,
                      tau: int = 0, variance: int | None = None) -> np.ndarray:
    """Exact draws from the discrete Gaussian N_ℤ(0, S), P(k) ∝ exp(−k²/(2S)).

    With ``variance=S`` (a positive integer) that S is used exactly.  Otherwise S is
    :func:`discrete_gaussian_variance` of ``sigma`` (σ² + τ² rounded up to a multiple of
    ⌊√·⌋ + 1; relative increase < 1/σ, negligible for the σ >= 2¹⁴ grid units the secure
    mechanism uses).  CKS 2020, Algorithm 3: Y ~ discrete Laplace(t), t = ⌊√S⌋ + 1, accepted
    with probability exp(−(|Y| − S/t)²/(2S)).  Returns an int64 array (object array of Python
    ints in the astronomically unlikely case of int64 overflow).
    """
    if variance is not None:
        if isinstance(variance, bool) or not isinstance(variance, (int, np.integer)) \
                or int(variance) < 1:
            raise InvalidInputError(f"variance must be a positive integer; got {variance!r}")
        S = int(variance)
        t = math.isqrt(S) + 1
    else:
        S, t = discrete_gaussian_variance(sigma, tau=tau)
    return _discrete_gaussian_st(S, t, int(size), _as_bits(entropy))


def _discrete_gaussian_st(S: int, t: int, n: int, bits: _Bits) -> np.ndarray:
    """N_ℤ(0, S) by CKS Algorithm 3 with Laplace proposals of integer scale t (any t >= 1 is
    correct; t ≈ √S is efficient).  The acceptance probability exp(−(|Y|t − S)²/(2St²)) is
    an exact ratio of integers (reduced to (|Y| − S/t)²/(2S) when t divides S)."""
    if S < 1 or t < 1:
        raise InvalidInputError(f"discrete Gaussian needs S >= 1 and t >= 1; got S={S}, t={t}")
    divides = S % t == 0
    m_int = S // t
    den = 2 * S if divides else 2 * S * t * t
    out: np.ndarray = np.zeros(n, dtype=np.int64)
    big: dict[int, int] = {}
    todo = np.arange(n)

    def centred(y: Any) -> Any:  # (|y| − S/t) times 1 (t | S) or t (otherwise), exact
        return abs(y) - m_int if divides else abs(y) * t - S

    vector_ok = den < _MAX_DEN
    while todo.size:
        y = discrete_laplace(t, todo.size, entropy=bits)
        if y.dtype == object or not vector_ok:
            small = np.zeros(todo.size, dtype=bool)
            y_small = np.zeros(todo.size, dtype=np.int64)
        else:
            with np.errstate(over="ignore"):
                q_all = centred(y)
            small = (np.abs(y) < (1 << 31)) & (np.abs(q_all) < (1 << 31))
            y_small = np.where(small, y, 0)
        acc = np.zeros(todo.size, dtype=bool)
        si = np.flatnonzero(small)
        if si.size:  # (vector_ok: S, t < 2^55, so the int64 arithmetic cannot overflow)
            q = centred(y_small)
            acc[si] = _bexp(q[si] * q[si], np.full(si.size, den, dtype=np.int64), bits)
        for i in np.flatnonzero(~small):  # exact continuation with Python integers
            qi = centred(int(y[i]))
            if _py_bernoulli_exp(qi * qi, den, bits):
                big[int(todo[i])] = int(y[i])
        out[todo[acc]] = y_small[acc]
        done = acc | ~small
        todo = todo[~done]
    if big:
        if all(abs(v) < (1 << 62) for v in big.values()):
            for idx, val in big.items():
                out[idx] = val
            return out
        obj = out.astype(object)
        for idx, val in big.items():
            obj[idx] = val
        return obj
    return out


# ----------------------------------------------------------------------------- mechanisms on a grid
@dataclass(frozen=True)
class GridPlan:
    """How a secure release is computed (all public: Δ, ε or σ, d).

    ``step`` = γ = 2**``exponent``; ``grid_sensitivity`` the inflated sensitivity in grid units
    (Δ/γ + d for L1, Δ/γ + √d for L2); ``effective_sensitivity`` = γ·grid_sensitivity (the
    sensitivity the noise is calibrated to, in data units); ``noise`` the parameter of the
    sampler in grid units (Laplace scale num/den, or the discrete Gaussian variance S, sampled
    with Laplace proposals of scale ``laplace_t``).
    """

    exponent: int
    step: float
    grid_sensitivity: Fraction
    effective_sensitivity: float
    noise: Fraction
    laplace_t: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"grid_step": self.step, "grid_exponent": self.exponent,
                "effective_sensitivity": self.effective_sensitivity,
                "noise_parameter_grid_units": float(self.noise)}


def _floor_log2(x: float) -> int:
    m, e = math.frexp(x)  # x = m·2^e, 0.5 <= m < 1
    return e - 1


def _choose_exponent(scale: float, sensitivity: float, coords: float, max_steps_log2: int
                     ) -> int:
    """Grid exponent: rounding share <= 2^−10 of Δ and >= 2^14 steps per noise scale; at most
    2^``max_steps_log2`` steps per noise scale (speed: beyond it the rounding share grows but
    stays accounted) and inside the normal float range."""
    share = sensitivity / coords
    want = min(_floor_log2(scale) - _MIN_STEPS_LOG2,
               (_floor_log2(share) if share > 0 else -1074) - _ROUNDING_SHARE_LOG2)
    floor_cap = _floor_log2(scale) - max_steps_log2
    return int(min(max(want, floor_cap, -1022 + 60), 1023 - 60))


def laplace_grid(sensitivity: float, epsilon: float, coords: int) -> GridPlan:
    """Grid and discrete-Laplace scale for L1 ``sensitivity``, ``epsilon`` and ``coords``
    coordinates.  The scale num/den >= (Δ/γ + d)/ε (rounded up)."""
    if not (sensitivity > 0 and math.isfinite(sensitivity) and epsilon > 0
            and math.isfinite(epsilon) and coords >= 1):
        raise InvalidInputError("laplace_grid needs finite sensitivity > 0, epsilon > 0 and d >= 1")
    b = sensitivity / epsilon
    e = _choose_exponent(b if 0 < b < math.inf else math.ldexp(1.0, 1000), sensitivity,
                         float(coords), _MAX_LAPLACE_STEPS_LOG2)
    step = math.ldexp(1.0, e)
    g_sens = Fraction(sensitivity) / Fraction(step) + coords
    scale = g_sens / Fraction(epsilon)
    if scale.numerator >= _MAX_DEN or scale.denominator >= _MAX_DEN:
        # round the scale UP to a simpler rational (integer if large) for the fast sampler
        den = 1 if scale >= 1 << 20 else 1 << 20
        scale = Fraction(math.ceil(scale * den), den)
    return GridPlan(e, step, g_sens, float(g_sens * Fraction(step)), scale)


def gaussian_grid(sensitivity: float, sigma: float, coords: int) -> GridPlan:
    """Grid and discrete-Gaussian variance for L2 ``sensitivity`` and the continuous σ the
    budget calls for at that sensitivity; σ is scaled up with the inflated sensitivity and the
    variance S (grid units) is >= (σ'/γ)² + τ²."""
    if not (sensitivity > 0 and math.isfinite(sensitivity) and sigma > 0 and math.isfinite(sigma)
            and coords >= 1):
        raise InvalidInputError("gaussian_grid needs finite sensitivity > 0, sigma > 0 and d >= 1")
    root_d = math.sqrt(coords)
    e = _choose_exponent(sigma, sensitivity, root_d, _MAX_STEPS_LOG2)
    step = math.ldexp(1.0, e)
    # √d rounded up to a rational; inflated sensitivity Δ/γ + √d (grid units)
    g_sens = Fraction(sensitivity) / Fraction(step) + Fraction(math.nextafter(root_d, math.inf))
    # σ' = σ·(inflated Δ)/Δ in grid units (σ is linear in Δ for every calibration)
    sigma_grid = Fraction(sigma) / Fraction(step) * (g_sens * Fraction(step) / Fraction(sensitivity))
    try:
        sigma_grid_f: float | Fraction = math.nextafter(float(sigma_grid), math.inf)
    except OverflowError:  # Δ far below the smallest usable grid step: exact rational σ'
        sigma_grid_f = sigma_grid
    S, t = discrete_gaussian_variance(sigma_grid_f, tau=GAUSSIAN_TAU)
    return GridPlan(e, step, g_sens, float(g_sens * Fraction(step)), Fraction(S), t)


def _to_grid(values: np.ndarray, e: int) -> np.ndarray:
    """rint(clamp(v)/2^e) as float64 integers (exact: scaling by a power of two)."""
    lim = math.ldexp(1.0, min(_CLAMP_LOG2 + e, 1023)) if _CLAMP_LOG2 + e < 1024 else np.inf
    clamped = np.clip(values, -lim, lim) if np.isfinite(lim) else values
    return np.rint(np.ldexp(clamped, -e))


def _scaled_int(v: int, e: int, fmax: float) -> float:
    """v·2^e correctly rounded, ±``fmax`` when it overflows (exact rational arithmetic)."""
    try:
        return float(Fraction(v) * Fraction(2) ** e)
    except OverflowError:
        return fmax if v > 0 else -fmax


def _from_grid(r: np.ndarray, k: np.ndarray, e: int) -> np.ndarray:
    """2^e·(r + k), computed as a correctly rounded function of the exact integer r + k
    (clipped to ±max-float: post-processing)."""
    out = np.empty(r.shape, dtype=np.float64)
    flat_r, flat_k, flat_o = r.ravel(), k.ravel(), out.reshape(-1)
    fmax = float(np.finfo(np.float64).max)
    if k.dtype != object:
        small = (np.abs(flat_r) < 2.0**52) & (np.abs(flat_k) < (1 << 52))
    else:
        small = np.zeros(flat_r.size, dtype=bool)
    kk = flat_k[small].astype(np.int64).astype(np.float64)
    with np.errstate(over="ignore"):
        # both exact integers < 2^52: the sum is exact, scaling by 2^e exact or overflowing
        flat_o[small] = np.ldexp(flat_r[small] + kk, e)
    for i in np.flatnonzero(~small):
        flat_o[i] = _scaled_int(int(flat_r[i]) + int(flat_k[i]), e, fmax)
    return np.clip(out, -fmax, fmax)


def _num(x: Any, name: str) -> float:
    try:
        out = float(x)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a finite positive number; got {x!r}") from None
    if isinstance(x, (bool, np.bool_)) or not (out > 0 and math.isfinite(out)):
        raise InvalidInputError(f"{name} must be a finite positive number; got {x!r}")
    return out


def _finite_values(value: Any) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError("value must be a real number or an array of real numbers") from None
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError("value must be finite before noise is added; got NaN or inf")
    return arr


def secure_laplace(value: Any, *, sensitivity: float, epsilon: float,
                   entropy: Entropy | None = None, coords: int | None = None
                   ) -> tuple[np.ndarray, GridPlan]:
    """ε-DP Laplace release on a grid with exact discrete noise (see the module doc).

    ``value`` is a finite array (or scalar) whose L1 sensitivity is ``sensitivity``; returns
    (noisy float64 array of the same shape, the :class:`GridPlan` used).  Guarantee: ε-DP
    exactly, for the neighbouring relation ``sensitivity`` was computed for.  ``coords`` is
    the number of coordinates of one release (default: all of ``value``); a smaller value is
    only for drawing many independent releases at once (e.g. an audit), each of ``coords``
    coordinates.
    """
    arr = _finite_values(value)
    plan = laplace_grid(_num(sensitivity, "sensitivity"), _num(epsilon, "epsilon"),
                        max(1, arr.size if coords is None else int(coords)))
    r = _to_grid(arr, plan.exponent)
    k = discrete_laplace(plan.noise, arr.size, entropy=entropy).reshape(arr.shape)
    return _from_grid(r, k, plan.exponent), plan


def secure_gaussian(value: Any, *, sensitivity: float, sigma: float,
                    entropy: Entropy | None = None, coords: int | None = None
                    ) -> tuple[np.ndarray, GridPlan]:
    """Gaussian release on a grid with exact discrete-Gaussian noise (see the module doc).

    ``sigma`` is the continuous noise sd the budget requires at L2 ``sensitivity``; the secure
    release carries every guarantee of that continuous mechanism (the module doc explains the
    rounding-kernel argument).  Returns (noisy array, :class:`GridPlan`).  ``coords`` as in
    :func:`secure_laplace`.
    """
    arr = _finite_values(value)
    plan = gaussian_grid(_num(sensitivity, "sensitivity"), _num(sigma, "sigma"),
                         max(1, arr.size if coords is None else int(coords)))
    r = _to_grid(arr, plan.exponent)
    k = _discrete_gaussian_st(int(plan.noise), plan.laplace_t, arr.size, _as_bits(entropy))
    return _from_grid(r, k.reshape(arr.shape), plan.exponent), plan
