"""Float-safe Laplace and Gaussian noise: exact discrete samplers on a public grid.

Why.  Textbook Laplace/Gaussian noise computed in floating point (``value + scale·ln(U)``)
does not have the distribution the proofs assume: the set of floats it can produce depends on
the value it is added to, and the low-order bits of a release can reveal the private value
(Mironov 2012).  dpreg therefore releases

    out = γ · ( rint(value/γ) + K ),        K ~ discrete Laplace or discrete Gaussian on ℤ,

with a public power-of-two grid step γ = 2^e, the integer noise K sampled *exactly* (integer
arithmetic only) from uniform random bytes.  Every floating-point operation after the integer
sum ``rint(value/γ) + K`` is a deterministic function of that integer (multiplication by a
power of two is exact, a sum of exact integers is correctly rounded), i.e. post-processing.

Where the bytes come from (see :mod:`dpreg._random`):

* **secure mode** (no seed: ``rng=None`` or a :class:`SecureGenerator`): :func:`os.urandom`;
* **seeded mode** (a seed or an ordinary numpy ``Generator``): a keyed SHAKE256 stream per
  noise coordinate (:class:`SeededStreams`), the key taken from the generator once per
  mechanism call -- reproducible, and as secret as the seed.

Only a :class:`~dpreg._random.SimulationGenerator` (harness, audit and study simulations, never
releases) selects numpy's floating-point draws instead.

Grid rounding is accounted in the sensitivity.  Rounding to the nearest grid point moves each
coordinate by at most γ/2, so for neighbouring inputs ``a, b`` (d coordinates)
``|rint(a_i/γ) − rint(b_i/γ)| <= |a_i − b_i|/γ + 1``, hence in grid units

* L1 sensitivity  Δ₁/γ + d   (Laplace),
* L2 sensitivity  Δ₂/γ + √d  (Gaussian; ‖e_a − e_b‖₂ <= √d for rounding errors in [−½, ½]).

The grid is chosen from public quantities only (Δ, ε or σ, d): γ is the largest power of two
with γ <= Δ·2⁻¹⁰/d (Laplace; √d for Gaussian), so the extra sensitivity is at most 2⁻¹⁰ of
Δ, and with at least 2¹⁴ grid steps per noise scale; it is capped so that all integers stay
well inside int64.  The noise scale is then recomputed from the inflated sensitivity (always
rounded toward *more* noise: the Laplace scale is the smallest float >= (Δ/γ + d)/ε, computed
with exact error-free transformations, rounded up to a multiple of 2⁻²⁰ -- or to an integer
from 2²⁰ on).  Values are first clamped to ±2¹⁰⁰⁰·γ (a 1-Lipschitz map, so the sensitivity is
unchanged) to keep ``value/γ`` finite.

Samplers (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for differential privacy",
Algorithms 1-3), vectorised over *lanes* (one lane = one noise coordinate) with numpy integer
arithmetic.  Every lane's control flow depends only on its own parameters and its own bytes,
so a lane reads exactly the bytes a one-coordinate call would read, in the same order -- which
is what makes a batch of many releases (``laplace_batch``; e.g. one release per group of
``fit_by_group``) identical to the releases made one by one in seeded mode:

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
* In seeded mode the bytes are pseudo-random (SHAKE256 keyed with 256 bits drawn from the
  seeded generator): the guarantee holds against an adversary who cannot predict the stream,
  i.e. who does not know (and cannot guess) the seed.

What remains idealised is listed in ``docs/threat-model.md`` (the exponential mechanism, the
smooth-sensitivity Student-t noise, PTR's Laplace test and TukeyEM's sampling still use
floating-point samplers driven by a numpy generator).
"""

from __future__ import annotations

import decimal
import functools
import hashlib
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpreg._random import SecureGenerator, is_secure, secure_generator  # re-exported
from dpreg.exceptions import InvalidInputError

__all__ = [
    "SecureGenerator",
    "is_secure",
    "secure_generator",
    "SeededStreams",
    "bernoulli_ratio",
    "bernoulli_exp",
    "discrete_laplace",
    "discrete_gaussian",
    "discrete_gaussian_variance",
    "secure_laplace",
    "secure_gaussian",
    "laplace_batch",
    "gaussian_batch",
    "NoiseRounds",
    "laplace_rounds",
    "gaussian_rounds",
    "laplace_grid",
    "laplace_grid_lanes",
    "gaussian_grid",
    "GridPlan",
    "GAUSSIAN_TAU",
    "LAPLACE_BLOCK",
    "GAUSSIAN_BLOCK",
    "PAGE_LANES",
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
#: Laplace scales below 2^20 grid units are multiples of 2^-20, larger ones integers
_SCALE_DEN = 1 << 20
#: seeded streams: bytes of a lane's head block (a discrete Laplace draw reads ~25 bytes on
#: average, more than 64 with probability < 1 %; a discrete Gaussian ~35, more than 128 < 1 %)
LAPLACE_BLOCK = 64
GAUSSIAN_BLOCK = 128
#: seeded streams: lanes per head page (one SHAKE256 output per page)
PAGE_LANES = 4096
_HEAD = b"dpreg/seeded-noise/v1/head"
_TAIL = b"dpreg/seeded-noise/v1/tail"
_PAGE0 = (0).to_bytes(8, "little")
#: lanes drawn together at most (bounds the memory of the seeded head blocks)
_CHUNK_LANES = 1 << 18


# ----------------------------------------------------------------------------- randomness
def _count(lanes: Any) -> int:
    return int(lanes) if isinstance(lanes, (int, np.integer)) else len(lanes)


class _Source:
    """One sequential byte stream.  The lane-aware interface (``u8(lanes)``, ``u64(lanes)``)
    reads one byte / one little-endian 64-bit word per entry of ``lanes`` (only their number
    matters: every lane reads the same stream); ``lane(i)`` is the stream itself."""

    def __init__(self, read: Entropy) -> None:
        self._read = read

    def u8(self, lanes: Any) -> np.ndarray:
        return np.frombuffer(self._read(_count(lanes)), dtype=np.uint8)

    def u64(self, lanes: Any) -> np.ndarray:
        return np.frombuffer(self._read(8 * _count(lanes)), dtype="<u8")

    def py_below(self, b: int) -> int:
        """Uniform integer in [0, b) (Python ints, any size; rejection sampling)."""
        nbytes = (b.bit_length() + 7) // 8 + 1
        top = 1 << (8 * nbytes)
        limit = top - top % b
        while True:
            w = int.from_bytes(self._read(nbytes), "little")
            if w < limit:
                return w % b

    def lane(self, i: int) -> _Source:
        return self


class _Bits(_Source):
    """Uniform random bytes from a CSPRNG (``os.urandom`` unless a test injects one), shared by
    all lanes (secure mode: the order in which lanes read does not matter)."""

    def __init__(self, entropy: Entropy | None = None) -> None:
        super().__init__(os.urandom if entropy is None else entropy)


class SeededStreams:
    """Seeded mode: one pseudo-random byte stream per lane, derived from a 32-byte key.

    ``keys`` are the keys of ``len(keys)`` mechanism calls (each key a call's
    :func:`dpreg._random.noise_key`); each call has ``coords`` noise coordinates, numbered
    ``coord_offset``, ``coord_offset + 1``, ... in C order of the released array.  Lane
    ``j·coords + i`` is coordinate ``c = coord_offset + i`` of call ``j``, and its stream is

        HEAD[(c mod 4096)·B : (c mod 4096 + 1)·B]  ‖  SHAKE256(b"dpreg/seeded-noise/v1/tail" ‖ K ‖ le64(c))

    with ``HEAD = SHAKE256(b"dpreg/seeded-noise/v1/head" ‖ K ‖ le64(⌊c/4096⌋))`` and the block
    size B = 64 bytes (Laplace) or 128 bytes (Gaussian): the first B bytes come from one output
    shared by 4096 coordinates (fast), the rest, rarely needed, from the lane's own extendable
    output.  A lane's stream depends only on (K, c, B): how the lanes are batched, chunked or
    ordered does not change what any lane reads.  ``u8`` reads one byte, ``u64`` eight bytes
    as a little-endian unsigned integer.
    """

    def __init__(self, keys: Sequence[bytes], coords: int, block: int, *,
                 coord_offset: int = 0) -> None:
        self._keys = [bytes(k) for k in keys]
        self._coords = int(coords)
        self._offset = int(coord_offset)
        self._block = int(block)
        if self._offset == 0 and self._coords <= PAGE_LANES:  # one page per key
            n = self._coords * self._block
            head = b"".join([hashlib.shake_256(_HEAD + k + _PAGE0).digest(n)
                             for k in self._keys])
        else:
            head = b"".join(self._head(k) for k in self._keys)
        lanes = len(self._keys) * self._coords
        # flat head blocks (+7 bytes of padding so that 8-byte windows never run off the end)
        self._flat = np.frombuffer(head + bytes(7), dtype=np.uint8)
        self._buf = self._flat[:lanes * self._block].reshape(lanes, self._block)
        self._win = np.lib.stride_tricks.as_strided(self._flat, shape=(lanes * self._block, 8),
                                                    strides=(1, 1), writeable=False)
        self._pos = np.zeros(lanes, dtype=np.int64)
        self._ext: dict[int, bytes] = {}

    def _head(self, key: bytes) -> bytes:
        out, c, c1, B = [], self._offset, self._offset + self._coords, self._block
        while c < c1:
            page, slot = divmod(c, PAGE_LANES)
            stop = min(c1, (page + 1) * PAGE_LANES)
            d = hashlib.shake_256(_HEAD + key + page.to_bytes(8, "little")).digest(
                (stop - page * PAGE_LANES) * B)
            out.append(d[slot * B:])
            c = stop
        return b"".join(out)

    def _bytes(self, lane: int, start: int, n: int) -> bytes:
        """Bytes [start, start + n) of ``lane``'s stream."""
        B = self._block
        head = self._buf[lane, start:min(B, start + n)].tobytes() if start < B else b""
        t0, t1 = max(0, start - B), start + n - B
        if t1 <= 0:
            return head
        ext = self._ext.get(lane, b"")
        if len(ext) < t1:
            j, i = divmod(lane, self._coords)
            c = self._offset + i
            ext = hashlib.shake_256(_TAIL + self._keys[j] + c.to_bytes(8, "little")).digest(
                max(t1, 2 * len(ext), 64))
            self._ext[lane] = ext
        return head + ext[t0:t1]

    def read_lane(self, lane: int, n: int) -> bytes:
        p = int(self._pos[lane])
        self._pos[lane] = p + n
        return self._bytes(lane, p, n)

    def u8(self, lanes: Any) -> np.ndarray:
        ln = np.asarray(lanes, dtype=np.int64)
        p = self._pos[ln]
        self._pos[ln] = p + 1
        ok = p < self._block
        flat = ln * self._block + p
        if ok.all():
            return self._flat[flat]
        out = np.empty(ln.size, dtype=np.uint8)
        out[ok] = self._flat[flat[ok]]
        for j in np.flatnonzero(~ok):
            out[j] = self._bytes(int(ln[j]), int(p[j]), 1)[0]
        return out

    def u64(self, lanes: Any) -> np.ndarray:
        ln = np.asarray(lanes, dtype=np.int64)
        p = self._pos[ln]
        self._pos[ln] = p + 8
        ok = p + 8 <= self._block
        flat = ln * self._block + p
        if ok.all():
            raw = self._win[flat]  # (m, 8): a copy of each lane's next 8 bytes
        else:
            raw = np.empty((ln.size, 8), dtype=np.uint8)
            raw[ok] = self._win[flat[ok]]
            for j in np.flatnonzero(~ok):
                raw[j] = np.frombuffer(self._bytes(int(ln[j]), int(p[j]), 8), dtype=np.uint8)
        return np.ascontiguousarray(raw).view("<u8").reshape(ln.size)

    def lane(self, i: int) -> _Source:
        return _LaneView(self, int(i))


class _LaneView(_Source):
    """The stream of one lane of :class:`SeededStreams` (for the Python-integer paths)."""

    def __init__(self, streams: SeededStreams, lane: int) -> None:
        super().__init__(lambda n: streams.read_lane(lane, n))


Bits = _Source | SeededStreams


def _as_bits(entropy: Entropy | Bits | None) -> Bits:
    if isinstance(entropy, (_Source, SeededStreams)):
        return entropy
    return _Bits(entropy)


# ----------------------------------------------------------------------------- Python-int exact helpers
def _py_bernoulli(a: int, b: int, bits: _Source) -> bool:
    """Exact Bernoulli(a/b), 0 <= a <= b, Python integers."""
    while True:
        w = bits.py_below(256)
        hi = a << 8
        if (w + 1) * b <= hi:
            return True
        if w * b >= hi:
            return False
        a = hi - w * b


def _py_bernoulli_exp_frac(a: int, b: int, bits: _Source) -> bool:
    """Exact Bernoulli(exp(−a/b)) for 0 <= a <= b (CKS Algorithm 1)."""
    k = 1
    while _py_bernoulli(a, b * k, bits):
        k += 1
    return k % 2 == 1


def _py_bernoulli_exp(a: int, b: int, bits: _Source) -> bool:
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


def _py_lt_exp(v: int, first: int, bits: _Source) -> bool:
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


def _bernoulli_exp_int(q: np.ndarray, lanes: np.ndarray, bits: Bits) -> np.ndarray:
    """Exact Bernoulli(e^{−q}) for int64 lanes q >= 0: a 64-bit uniform word compared with
    ⌊e^{−q}·2⁶⁴⌋ (ties resolved with further words), q > 44 as a product of e^{−44} factors."""
    out = np.ones(q.size, dtype=bool)
    rem = q.astype(np.int64).copy()
    idx = np.flatnonzero(rem > 0)
    while idx.size:
        step = np.minimum(rem[idx], _EXP_MAX)
        w = bits.u64(lanes[idx])
        thr = _T[step - 1]
        ok = w < thr
        for i in np.flatnonzero(w == thr):
            ok[i] = _py_lt_exp(int(step[i]), int(w[i]), bits.lane(int(lanes[idx[i]])))
        out[idx[~ok]] = False
        rem[idx] -= step
        idx = idx[ok & (rem[idx] > 0)]
    return out


def _geometric_e1(lanes: np.ndarray, bits: Bits) -> np.ndarray:
    """V ~ Geometric(1 − e⁻¹) (P(V >= v) = e^{−v}) per lane, as V = max{v : U < e^{−v}} for a
    uniform U read as a 64-bit word (ties with a threshold resolved exactly with further
    words); V >= 44 continues with a fresh draw (memorylessness)."""
    lanes = np.asarray(lanes, dtype=np.int64)
    v = np.zeros(lanes.size, dtype=np.int64)
    idx = np.arange(lanes.size)
    while idx.size:
        w = bits.u64(lanes[idx])
        pos = np.searchsorted(_T_ASC, w, side="right")
        below = _EXP_MAX - pos  # #{v : T_v > w}
        tie = (pos > 0) & (_T_ASC[np.maximum(pos - 1, 0)] == w)  # w equals a threshold
        for i in np.flatnonzero(tie):
            j = int(np.flatnonzero(_T == w[i])[0]) + 1  # w equals the threshold of e^{-j}
            below[i] = (j - 1) + int(_py_lt_exp(j, int(w[i]), bits.lane(int(lanes[idx[i]]))))
        v[idx] += below
        idx = idx[below == _EXP_MAX]
    return v


# ----------------------------------------------------------------------------- vectorised exact samplers
def _bern(a: np.ndarray, b: np.ndarray, lanes: np.ndarray, bits: Bits) -> np.ndarray:
    """Bernoulli(a/b) lanes (int64, 0 <= a <= b < 2⁵⁵; not checked)."""
    w = bits.u8(lanes).astype(np.int64)
    hi = a << 8
    wb = w * b
    out = wb + b <= hi
    amb = np.flatnonzero(~out & (wb < hi))
    if amb.size:
        aa, bb, ll = hi[amb] - wb[amb], b[amb], lanes[amb]
        while amb.size:  # undecided lanes (probability < 1/256 each): read another byte
            w = bits.u8(ll).astype(np.int64)
            hi = aa << 8
            wb = w * bb
            yes = wb + bb <= hi
            out[amb[yes]] = True
            more = ~yes & (wb < hi)
            amb, aa, bb, ll = amb[more], hi[more] - wb[more], bb[more], ll[more]
    return out


def bernoulli_ratio(a: Any, b: Any, *, entropy: Entropy | Bits | None = None) -> np.ndarray:
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
    return _bern(a_arr, b_arr, np.arange(a_arr.size), bits).reshape(np.shape(a))


def _bernoulli_exp_frac(a: np.ndarray, b: np.ndarray, lanes: np.ndarray, bits: Bits
                        ) -> np.ndarray:
    """Exact Bernoulli(exp(−a/b)) for int64 lanes with 0 <= a <= b < 2⁵⁵ (CKS Algorithm 1:
    K ← K + 1 while Bernoulli(γ/K) succeeds; 1 iff the final K is odd).  Whether a lane draws
    Bernoulli(a/(bK)) directly or as Bernoulli(a/b)·Bernoulli(1/K) depends on that lane's b
    only (b·K < 2⁵⁵), so each lane reads what it would read alone."""
    odd = np.ones(a.size, dtype=bool)  # K = 1
    succ = _bern(a, b, lanes, bits)
    alive = np.flatnonzero(succ)
    aa, bb, ll = a[alive], b[alive], lanes[alive]
    kk = 2
    while alive.size:
        odd[alive] = kk % 2 == 1
        direct = bb < -(-_MAX_DEN // kk)  # bb·kk < 2^55 (no overflow)
        succ = np.empty(alive.size, dtype=bool)
        d = np.flatnonzero(direct)
        if d.size:
            succ[d] = _bern(aa[d], bb[d] * kk, ll[d], bits)
        s = np.flatnonzero(~direct)
        if s.size:
            # Bernoulli(a/(b·K)) = Bernoulli(a/b) AND Bernoulli(1/K) (independent)
            first = _bern(aa[s], bb[s], ll[s], bits)
            second = _bern(np.ones(s.size, dtype=np.int64), np.full(s.size, kk, dtype=np.int64),
                           ll[s], bits)
            succ[s] = first & second
        alive, aa, bb, ll = alive[succ], aa[succ], bb[succ], ll[succ]
        kk += 1
    return odd


def bernoulli_exp(a: Any, b: Any, *, entropy: Entropy | Bits | None = None) -> np.ndarray:
    """Exact independent Bernoulli(exp(−a_i/b_i)) for integers a_i >= 0, 1 <= b_i < 2⁵⁵."""
    bits = _as_bits(entropy)
    a_arr = np.array(a, dtype=np.int64).ravel()
    b_arr = np.broadcast_to(np.asarray(b, dtype=np.int64), np.shape(a)).ravel().copy()
    if a_arr.size and (np.any(a_arr < 0) or np.any(b_arr < 1) or np.any(b_arr >= _MAX_DEN)):
        raise InvalidInputError("bernoulli_exp needs integers a >= 0 and 1 <= b < 2**55")
    return _bexp(a_arr, b_arr, np.arange(a_arr.size), bits).reshape(np.shape(a))


def _bexp(a_arr: np.ndarray, b_arr: np.ndarray, lanes: np.ndarray, bits: Bits) -> np.ndarray:
    q, r = np.divmod(a_arr, b_arr)
    out = _bernoulli_exp_int(q, lanes, bits)  # e^{−⌊a/b⌋}
    live = np.flatnonzero(out & (r > 0))
    if live.size:
        out[live] = _bernoulli_exp_frac(r[live], b_arr[live], lanes[live], bits)
    return out


def _uniform_below(b: np.ndarray, lanes: np.ndarray, bits: Bits) -> np.ndarray:
    """Exact uniform integers in [0, b_i) per lane, 1 <= b_i < 2⁶³ (a 64-bit word, rejected
    when it is >= the largest multiple of b_i below 2⁶⁴)."""
    n = lanes.size
    out = np.empty(n, dtype=np.int64)
    bu = np.asarray(b, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        rem = (np.uint64(0) - bu) % bu  # 2^64 mod b
        limit = np.uint64(0) - rem      # 2^64 − rem (used only where rem > 0)
    exact = rem == 0
    todo = np.arange(n)
    while todo.size:
        w = bits.u64(lanes[todo])
        keep = exact[todo] | (w < limit[todo])
        kept = todo[keep]
        out[kept] = (w[keep] % bu[kept]).astype(np.int64)
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


def _py_discrete_laplace(num: int, den: int, bits: _Source) -> int:
    """One exact discrete-Laplace draw of scale num/den with Python integers (any size)."""
    one = np.zeros(1, dtype=np.int64)
    while True:
        u = bits.py_below(num)
        if not _py_bernoulli_exp_frac(u, num, bits):
            continue
        v = int(_geometric_e1(one, bits)[0])
        y = (u + num * v) // den
        negative = bool(bits.u8(1)[0] & 1)
        if negative and y == 0:
            continue
        return -y if negative else y


def _dlap_fast(num: np.ndarray, den: np.ndarray, lanes: np.ndarray, bits: Bits
               ) -> tuple[np.ndarray, dict[int, int]]:
    """Discrete Laplace of scale num_i/den_i per lane (int64, both < 2⁵⁵): the int64 draws and
    the (index -> Python int) draws of the lanes that left the int64-safe range."""
    n = lanes.size
    out = np.zeros(n, dtype=np.int64)
    big: dict[int, int] = {}
    v_cap = np.maximum(1, (_SAFE // num) - 2)  # u + num·v stays below 2^62 for v < v_cap
    todo = np.arange(n)
    while todo.size:
        ln, nm = lanes[todo], num[todo]
        u = _uniform_below(nm, ln, bits)
        acc = _bernoulli_exp_frac(u, nm, ln, bits)
        ta, u, la, na = todo[acc], u[acc], ln[acc], nm[acc]
        v = _geometric_e1(la, bits)
        sign = (bits.u8(la) & 1).astype(bool)
        cap = v_cap[ta]
        capped = v >= cap
        y = (u + na * np.minimum(v, cap)) // den[ta]
        for i in np.flatnonzero(capped):  # exact in Python integers
            yi = (int(u[i]) + int(na[i]) * int(v[i])) // int(den[ta[i]])
            big[int(ta[i])] = -yi if sign[i] else yi
        reject = sign & (y == 0) & ~capped
        keep = ~reject & ~capped
        out[ta[keep]] = np.where(sign[keep], -y[keep], y[keep])
        todo = np.concatenate([todo[~acc], ta[reject]])
    return out, big


def _merge(out: np.ndarray, big: dict[int, int]) -> np.ndarray:
    """int64 draws with the Python-int ones filled in (an object array if one leaves int64)."""
    if not big:
        return out
    if all(abs(v) < _SAFE for v in big.values()):
        for idx, val in big.items():
            out[idx] = val
        return out
    obj = out.astype(object)
    for idx, val in big.items():
        obj[idx] = val
    return obj


def _laplace_k(num: np.ndarray, den: np.ndarray, lanes: np.ndarray, bits: Bits) -> np.ndarray:
    """Discrete-Laplace noise per lane (scale num_i/den_i; int64 or object arrays of positive
    integers): lanes with num or den >= 2⁵⁵ use the Python-integer sampler."""
    n = lanes.size
    if num.dtype == object or den.dtype == object:
        fast = np.array([int(a) < _MAX_DEN and int(b) < _MAX_DEN for a, b in zip(num, den)],
                        dtype=bool).reshape(n)
    else:
        fast = (num < _MAX_DEN) & (den < _MAX_DEN)
    if fast.all():
        return _merge(*_dlap_fast(num.astype(np.int64), den.astype(np.int64), lanes, bits))
    out = np.zeros(n, dtype=np.int64)
    big: dict[int, int] = {}
    fi = np.flatnonzero(fast)
    if fi.size:
        part, pbig = _dlap_fast(num[fi].astype(np.int64), den[fi].astype(np.int64), lanes[fi],
                                bits)
        out[fi] = part
        big.update({int(fi[i]): v for i, v in pbig.items()})
    for i in np.flatnonzero(~fast):
        big[int(i)] = _py_discrete_laplace(int(num[i]), int(den[i]), bits.lane(int(lanes[i])))
    return _merge(out, big)


def discrete_laplace(scale: Any, size: int, *, entropy: Entropy | Bits | None = None
                     ) -> np.ndarray:
    """Exact draws from the discrete Laplace distribution P(k) ∝ exp(−|k|/scale) on ℤ.

    ``scale`` is an int, a :class:`fractions.Fraction` or a float (used exactly as the rational
    it represents exactly; numerators or denominators from 2⁵⁵ on use a slower Python-integer
    path).  Returns an int64 array (or an object array of Python ints when a draw leaves the
    int64 range).  CKS 2020, Algorithm 2.  Draw i reads lane i of ``entropy`` (one shared
    stream for a CSPRNG; its own stream for :class:`SeededStreams`).
    """
    bits = _as_bits(entropy)
    frac = _laplace_scale_fraction(scale)
    n = int(size)
    num, den = frac.numerator, frac.denominator
    dtype: Any = np.int64 if num < _MAX_DEN and den < _MAX_DEN else object
    return _laplace_k(np.full(n, num, dtype=dtype), np.full(n, den, dtype=dtype),
                      np.arange(n), bits)


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


def discrete_gaussian(sigma: Any, size: int, *, entropy: Entropy | Bits | None = None,
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


def _discrete_gaussian_st(S: int, t: int, n: int, bits: Bits,
                          lanes: np.ndarray | None = None) -> np.ndarray:
    """N_ℤ(0, S) by CKS Algorithm 3 with Laplace proposals of integer scale t (any t >= 1 is
    correct; t ≈ √S is efficient).  The acceptance probability exp(−(|Y|t − S)²/(2St²)) is
    an exact ratio of integers (reduced to (|Y| − S/t)²/(2S) when t divides S).  Draw i reads
    lane ``lanes[i]`` (default i)."""
    if S < 1 or t < 1:
        raise InvalidInputError(f"discrete Gaussian needs S >= 1 and t >= 1; got S={S}, t={t}")
    lanes = np.arange(n) if lanes is None else np.asarray(lanes, dtype=np.int64)
    divides = S % t == 0
    m_int = S // t
    den = 2 * S if divides else 2 * S * t * t
    out: np.ndarray = np.zeros(n, dtype=np.int64)
    big: dict[int, int] = {}
    todo = np.arange(n)
    t_dtype: Any = np.int64 if t < _MAX_DEN else object

    def centred(y: Any) -> Any:  # (|y| − S/t) times 1 (t | S) or t (otherwise), exact
        return abs(y) - m_int if divides else abs(y) * t - S

    vector_ok = den < _MAX_DEN
    lim = 1 << 31
    while todo.size:
        ones = np.ones(todo.size, dtype=t_dtype)
        y = _laplace_k(np.full(todo.size, t, dtype=t_dtype), ones, lanes[todo], bits)
        if not vector_ok:
            small = np.zeros(todo.size, dtype=bool)
        elif y.dtype == object:  # per lane: a lane that left int64 takes the Python path
            small = np.array([abs(int(v)) < lim and abs(centred(int(v))) < lim for v in y],
                             dtype=bool).reshape(todo.size)
        else:
            with np.errstate(over="ignore"):
                q_all = centred(y)
            small = (np.abs(y) < lim) & (np.abs(q_all) < lim)
        y_small = np.where(small, y, 0).astype(np.int64)
        acc = np.zeros(todo.size, dtype=bool)
        si = np.flatnonzero(small)
        if si.size:  # (vector_ok: S, t < 2^55, so the int64 arithmetic cannot overflow)
            q = centred(y_small[si])
            acc[si] = _bexp(q * q, np.full(si.size, den, dtype=np.int64), lanes[todo[si]], bits)
        done_big = np.zeros(todo.size, dtype=bool)
        for i in np.flatnonzero(~small):  # exact continuation with Python integers
            qi = centred(int(y[i]))
            if _py_bernoulli_exp(qi * qi, den, bits.lane(int(lanes[todo[i]]))):
                big[int(todo[i])] = int(y[i])
                done_big[i] = True
        out[todo[acc]] = y_small[acc]
        todo = todo[~(acc | done_big)]  # rejected lanes (small or not) draw again
    return _merge(out, big)


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


def _floor_log2_arr(x: np.ndarray) -> np.ndarray:
    return np.frexp(x)[1].astype(np.int64) - 1


def _choose_exponents(scale: np.ndarray, sensitivity: np.ndarray, coords: float,
                      max_steps_log2: int) -> np.ndarray:
    """Grid exponents (vectorised): rounding share <= 2^−10 of Δ and >= 2^14 steps per noise
    scale; at most 2^``max_steps_log2`` steps per noise scale (speed: beyond it the rounding
    share grows but stays accounted) and inside the normal float range."""
    share = sensitivity / coords
    fl_scale = _floor_log2_arr(scale)
    fl_share = np.where(share > 0, _floor_log2_arr(np.where(share > 0, share, 1.0)), -1074)
    want = np.minimum(fl_scale - _MIN_STEPS_LOG2, fl_share - _ROUNDING_SHARE_LOG2)
    floor_cap = fl_scale - max_steps_log2
    return np.minimum(np.maximum(np.maximum(want, floor_cap), -1022 + 60), 1023 - 60)


def _choose_exponent(scale: float, sensitivity: float, coords: float, max_steps_log2: int
                     ) -> int:
    return int(_choose_exponents(np.array([scale]), np.array([sensitivity]), coords,
                                 max_steps_log2)[0])


def _sum_up(t: np.ndarray, d: float) -> np.ndarray:
    """The smallest float >= t + d exactly (TwoSum gives the rounding error of t + d)."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = t + d
        bp = s - t
        err = (t - (s - bp)) + (d - bp)
    return np.where(err > 0, np.nextafter(s, np.inf), s)


_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp splitting)


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = _SPLIT * x
    hi = c - (c - x)
    return hi, x - hi


def _div_up(u: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """The smallest float >= u/ε exactly, or inf when u/ε exceeds the float range.

    q = RN(u/ε) is that float or its predecessor; which one is decided by the sign of
    q·ε − u, computed exactly with Dekker's product (where the splitting cannot overflow or
    underflow) and with exact rationals elsewhere."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        q = u / eps
        p = q * eps
        qh, ql = _split(q)
        eh, el = _split(eps)
        err = ((qh * eh - p) + qh * el + ql * eh) + ql * el
        diff = (p - u) + err  # p − u is exact (Sterbenz): its sign is the sign of q·ε − u
    safe = ((np.abs(q) < 2.0**990) & (np.abs(q) > 2.0**-900) & (eps < 2.0**990)
            & (eps > 2.0**-900) & (p > 2.0**-850) & (p < 2.0**990) & np.isfinite(u))
    out = np.where(diff >= 0, q, np.nextafter(q, np.inf))
    for i in np.flatnonzero(~safe):
        if not math.isfinite(float(u[i])):
            out[i] = np.inf
            continue
        exact = Fraction(float(u[i])) / Fraction(float(eps[i]))
        try:
            qi = float(exact)  # correctly rounded
        except OverflowError:
            out[i] = np.inf
            continue
        if Fraction(qi) < exact:
            qi = math.nextafter(qi, math.inf)
        out[i] = qi
    return out


def laplace_grid_lanes(sensitivity: Any, epsilon: Any, coords: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid exponents and discrete-Laplace scales num/den of many releases at once.

    For L1 sensitivities Δ_i (> 0, finite), ε_i (> 0, finite) and ``coords`` coordinates per
    release: ``(e, num, den)`` with γ_i = 2^e_i and scale num_i/den_i >= (Δ_i/γ_i + d)/ε_i.
    The scale is the smallest float Q >= U/ε (U the smallest float >= Δ/γ + d; both steps
    exact, so Q >= the exact scale), rounded up to a multiple of 2⁻²⁰ (Q < 2²⁰) or to an
    integer, in lowest terms.  ``num``/``den`` are int64, or object arrays of Python ints
    when a scale reaches 2⁵⁵.
    :func:`laplace_grid` is this function for one release, so a batch uses the same plans as
    the releases made one by one."""
    sens = np.atleast_1d(np.asarray(sensitivity, dtype=np.float64))
    eps = np.broadcast_to(np.asarray(epsilon, dtype=np.float64), sens.shape).copy()
    d = int(coords)
    with np.errstate(over="ignore", divide="ignore"):
        b = sens / eps
    b = np.where((b > 0) & (b < np.inf), b, 2.0**1000)
    e = _choose_exponents(b, sens, float(d), _MAX_LAPLACE_STEPS_LOG2)
    t = np.ldexp(sens, -e)  # exact (power-of-two scaling inside the normal range)
    q = _div_up(_sum_up(t, float(d)), eps)
    den = np.where(q < _SCALE_DEN, _SCALE_DEN, 1).astype(np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        numf = np.ceil(q * den)
    if np.all(numf < _MAX_DEN):
        num64 = numf.astype(np.int64)
        g = np.gcd(num64, den)  # lowest terms, as Fraction(num, den) of laplace_grid
        return e, num64 // g, den // g
    num = np.empty(sens.size, dtype=object)
    den = den.astype(object)
    for i in range(sens.size):
        if numf[i] < _MAX_DEN:
            gi = math.gcd(int(numf[i]), int(den[i]))
            num[i], den[i] = int(numf[i]) // gi, int(den[i]) // gi
        elif math.isfinite(float(numf[i])):
            num[i] = int(numf[i])  # an integer-valued float: exact
        else:  # the scale exceeds the float range: ⌈U/ε⌉ in exact rationals
            u = Fraction(float(_sum_up(t[i:i + 1], float(d))[0]))
            num[i] = math.ceil(u / Fraction(float(eps[i])))
    return e, num, den


def laplace_grid(sensitivity: float, epsilon: float, coords: int) -> GridPlan:
    """Grid and discrete-Laplace scale for L1 ``sensitivity``, ``epsilon`` and ``coords``
    coordinates.  The scale num/den >= (Δ/γ + d)/ε (rounded up; see
    :func:`laplace_grid_lanes`).  Plans are cached (they are functions of public values)."""
    if not (sensitivity > 0 and math.isfinite(sensitivity) and epsilon > 0
            and math.isfinite(epsilon) and coords >= 1):
        raise InvalidInputError("laplace_grid needs finite sensitivity > 0, epsilon > 0 and d >= 1")
    return _laplace_plan(float(sensitivity), float(epsilon), int(coords))


@functools.lru_cache(maxsize=4096)
def _laplace_plan(sensitivity: float, epsilon: float, coords: int) -> GridPlan:
    e_arr, num, den = laplace_grid_lanes(sensitivity, epsilon, coords)
    e = int(e_arr[0])
    step = math.ldexp(1.0, e)
    g_sens = Fraction(sensitivity) / Fraction(step) + coords
    return GridPlan(e, step, g_sens, float(g_sens * Fraction(step)),
                    Fraction(int(num[0]), int(den[0])))


def gaussian_grid(sensitivity: float, sigma: float, coords: int) -> GridPlan:
    """Grid and discrete-Gaussian variance for L2 ``sensitivity`` and the continuous σ the
    budget calls for at that sensitivity; σ is scaled up with the inflated sensitivity and the
    variance S (grid units) is >= (σ'/γ)² + τ².  Plans are cached (public values)."""
    if not (sensitivity > 0 and math.isfinite(sensitivity) and sigma > 0 and math.isfinite(sigma)
            and coords >= 1):
        raise InvalidInputError("gaussian_grid needs finite sensitivity > 0, sigma > 0 and d >= 1")
    return _gaussian_plan(float(sensitivity), float(sigma), int(coords))


@functools.lru_cache(maxsize=4096)
def _gaussian_plan(sensitivity: float, sigma: float, coords: int) -> GridPlan:
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


def _to_grid(values: np.ndarray, e: Any) -> np.ndarray:
    """rint(clamp(v)/2^e) as float64 integers (exact: scaling by a power of two); ``e`` a
    scalar or an array broadcasting against ``values``."""
    e_arr = np.asarray(e, dtype=np.int64)
    top = np.minimum(_CLAMP_LOG2 + e_arr, 1023)
    lim = np.where(_CLAMP_LOG2 + e_arr < 1024, np.ldexp(1.0, top), np.inf)
    clamped = np.clip(values, -lim, lim)
    return np.rint(np.ldexp(clamped, -e_arr))


def _scaled_int(v: int, e: int, fmax: float) -> float:
    """v·2^e correctly rounded, ±``fmax`` when it overflows (exact rational arithmetic)."""
    try:
        return float(Fraction(v) * Fraction(2) ** e)
    except OverflowError:
        return fmax if v > 0 else -fmax


def _from_grid(r: np.ndarray, k: np.ndarray, e: Any) -> np.ndarray:
    """2^e·(r + k), computed as a correctly rounded function of the exact integer r + k
    (clipped to ±max-float: post-processing); ``e`` a scalar or broadcasting against ``r``."""
    out = np.empty(r.shape, dtype=np.float64)
    e_full = np.broadcast_to(np.asarray(e, dtype=np.int64), r.shape).ravel()
    flat_r, flat_k, flat_o = r.ravel(), k.ravel(), out.reshape(-1)
    fmax = float(np.finfo(np.float64).max)
    if k.dtype != object:
        small = (np.abs(flat_r) < 2.0**52) & (np.abs(flat_k) < (1 << 52))
    else:
        small = np.zeros(flat_r.size, dtype=bool)
    kk = flat_k[small].astype(np.int64).astype(np.float64)
    with np.errstate(over="ignore"):
        # both exact integers < 2^52: the sum is exact, scaling by 2^e exact or overflowing
        flat_o[small] = np.ldexp(flat_r[small] + kk, e_full[small])
    for i in np.flatnonzero(~small):
        flat_o[i] = _scaled_int(int(flat_r[i]) + int(flat_k[i]), int(e_full[i]), fmax)
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


def _check_key(key: Any) -> bytes:
    if not isinstance(key, (bytes, bytearray)) or len(key) < 16:
        raise InvalidInputError("key must be bytes of length >= 16 (a seeded call's noise key)")
    return bytes(key)


def _keyed_draws(draw: Callable[[np.ndarray, Bits, int], np.ndarray], keys: Sequence[bytes],
                 coords: int, block: int) -> np.ndarray:
    """Noise for ``len(keys)`` calls of ``coords`` lanes each from their seeded streams, in
    chunks of at most ~2^18 lanes (a lane's draw does not depend on the chunking).
    ``draw(lanes, streams, start)`` draws the chunk whose first lane is global lane ``start``."""
    parts: list[np.ndarray] = []
    if len(keys) == 1:  # one call: chunks of whole pages of its coordinates
        step = max(PAGE_LANES, (_CHUNK_LANES // PAGE_LANES) * PAGE_LANES)
        for c0 in range(0, coords, step):
            c1 = min(coords, c0 + step)
            streams = SeededStreams(keys, c1 - c0, block, coord_offset=c0)
            parts.append(draw(np.arange(c1 - c0), streams, c0))
    else:
        per = max(1, _CHUNK_LANES // max(1, coords))
        for j0 in range(0, len(keys), per):
            ks = keys[j0:j0 + per]
            streams = SeededStreams(ks, coords, block)
            parts.append(draw(np.arange(len(ks) * coords), streams, j0 * coords))
    return _concat(parts)


def _concat(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=np.int64)
    if len(parts) == 1:
        return parts[0]
    if any(p.dtype == object for p in parts):
        return np.concatenate([p.astype(object) for p in parts])
    return np.concatenate(parts)


def _laplace_noise(num: np.ndarray, den: np.ndarray, n_lanes: int, entropy: Any,
                   keys: Sequence[bytes] | None, coords: int) -> np.ndarray:
    """Discrete-Laplace integers for ``n_lanes`` lanes with per-lane scales num/den: from a
    shared CSPRNG (``keys`` None) or from the seeded streams of ``keys`` (``coords`` lanes
    per key, lane = key index·coords + coordinate)."""
    if keys is None:
        bits = _as_bits(entropy)
        step = 4 * _CHUNK_LANES  # bounded memory; one shared source, so chunking is immaterial
        parts = [_laplace_k(num[a:a + step], den[a:a + step], np.arange(min(step, n_lanes - a)),
                            bits) for a in range(0, n_lanes, step)]
        return _concat(parts)

    def draw(lanes: np.ndarray, streams: Bits, start: int) -> np.ndarray:
        sel = slice(start, start + lanes.size)
        return _laplace_k(num[sel], den[sel], lanes, streams)

    return _keyed_draws(draw, keys, coords, LAPLACE_BLOCK)


def secure_laplace(value: Any, *, sensitivity: float, epsilon: float,
                   entropy: Entropy | None = None, coords: int | None = None,
                   key: bytes | None = None) -> tuple[np.ndarray, GridPlan]:
    """ε-DP Laplace release on a grid with exact discrete noise (see the module doc).

    ``value`` is a finite array (or scalar) whose L1 sensitivity is ``sensitivity``; returns
    (noisy float64 array of the same shape, the :class:`GridPlan` used).  Guarantee: ε-DP
    exactly, for the neighbouring relation ``sensitivity`` was computed for.  ``coords`` is
    the number of coordinates of one release (default: all of ``value``); a smaller value is
    only for drawing many independent releases at once (e.g. an audit), each of ``coords``
    coordinates.  The noise bits come from ``os.urandom`` (or the test hook ``entropy``), or,
    with ``key`` (seeded mode), from the :class:`SeededStreams` of that key: coordinate i (C
    order) reads lane i.
    """
    arr = _finite_values(value)
    plan = laplace_grid(_num(sensitivity, "sensitivity"), _num(epsilon, "epsilon"),
                        max(1, arr.size if coords is None else int(coords)))
    r = _to_grid(arr, plan.exponent)
    n = arr.size
    num, den = plan.noise.numerator, plan.noise.denominator
    dtype: Any = np.int64 if num < _MAX_DEN and den < _MAX_DEN else object
    keys = None if key is None else [_check_key(key)]
    k = _laplace_noise(np.full(n, num, dtype=dtype), np.full(n, den, dtype=dtype), n, entropy,
                       keys, n)
    return _from_grid(r, k.reshape(arr.shape), plan.exponent), plan


def secure_gaussian(value: Any, *, sensitivity: float, sigma: float,
                    entropy: Entropy | None = None, coords: int | None = None,
                    key: bytes | None = None) -> tuple[np.ndarray, GridPlan]:
    """Gaussian release on a grid with exact discrete-Gaussian noise (see the module doc).

    ``sigma`` is the continuous noise sd the budget requires at L2 ``sensitivity``; the secure
    release carries every guarantee of that continuous mechanism (the module doc explains the
    rounding-kernel argument).  Returns (noisy array, :class:`GridPlan`).  ``coords``,
    ``entropy`` and ``key`` as in :func:`secure_laplace`.
    """
    arr = _finite_values(value)
    plan = gaussian_grid(_num(sensitivity, "sensitivity"), _num(sigma, "sigma"),
                         max(1, arr.size if coords is None else int(coords)))
    r = _to_grid(arr, plan.exponent)
    k = _gaussian_noise(int(plan.noise), plan.laplace_t, arr.size, entropy,
                        None if key is None else [_check_key(key)], arr.size)
    return _from_grid(r, k.reshape(arr.shape), plan.exponent), plan


def _gaussian_noise(S: int, t: int, n_lanes: int, entropy: Any, keys: Sequence[bytes] | None,
                    coords: int) -> np.ndarray:
    if keys is None:
        bits = _as_bits(entropy)
        step = 4 * _CHUNK_LANES
        return _concat([_discrete_gaussian_st(S, t, min(step, n_lanes - a), bits)
                        for a in range(0, n_lanes, step)])
    return _keyed_draws(lambda lanes, streams, _start: _discrete_gaussian_st(
        S, t, lanes.size, streams, lanes), keys, coords, GAUSSIAN_BLOCK)


def _batch_values(values: Any, m_name: str = "values") -> np.ndarray:
    arr = _finite_values(values)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise InvalidInputError(f"{m_name} must be an (m, d) array of m releases")
    return arr


def _batch_keys(keys: Sequence[bytes] | None, m: int) -> list[bytes] | None:
    if keys is None:
        return None
    out = [_check_key(k) for k in keys]
    if len(out) != m:
        raise InvalidInputError(f"keys must have one key per release ({m}); got {len(out)}")
    return out


def laplace_batch(values: Any, *, sensitivity: Any, epsilon: Any,
                  keys: Sequence[bytes] | None = None, entropy: Entropy | None = None
                  ) -> np.ndarray:
    """m independent secure Laplace releases at once: row j of ``values`` (an (m, d) array, or
    (m,) for one coordinate each) released with L1 sensitivity ``sensitivity[j]`` and
    ``epsilon[j]`` (scalars broadcast).

    Row j equals ``secure_laplace(values[j], sensitivity=..., epsilon=..., key=keys[j])[0]``
    bit for bit in seeded mode (the same plan, from :func:`laplace_grid_lanes`, and the same
    lane streams), and has its distribution with a shared CSPRNG (``keys`` None).  Returns an
    array of the shape of ``values``.
    """
    arr = _batch_values(values)
    m, d = arr.shape
    sens = np.broadcast_to(np.asarray(sensitivity, dtype=np.float64), (m,)).copy()
    eps = np.broadcast_to(np.asarray(epsilon, dtype=np.float64), (m,)).copy()
    if m and not (np.all(sens > 0) and np.all(np.isfinite(sens)) and np.all(eps > 0)
                  and np.all(np.isfinite(eps))):
        raise InvalidInputError("laplace_batch needs finite sensitivities > 0 and epsilons > 0")
    ks = _batch_keys(keys, m)
    if m == 0:
        return np.zeros(np.shape(values), dtype=np.float64)
    e, num, den = laplace_grid_lanes(sens, eps, d)
    r = _to_grid(arr, e[:, None])
    k = _laplace_noise(np.repeat(num, d), np.repeat(den, d), m * d, entropy, ks, d)
    return _from_grid(r, k.reshape(m, d), e[:, None]).reshape(np.shape(values))


def gaussian_batch(values: Any, *, sensitivity: float, sigma: float,
                   keys: Sequence[bytes] | None = None, entropy: Entropy | None = None
                   ) -> np.ndarray:
    """m independent secure Gaussian releases with one plan: row j of ``values`` ((m, d) or
    (m,)) released at L2 ``sensitivity`` and continuous ``sigma``; row j equals
    ``secure_gaussian(values[j], ..., key=keys[j])[0]`` in seeded mode."""
    arr = _batch_values(values)
    m, d = arr.shape
    ks = _batch_keys(keys, m)
    plan = gaussian_grid(_num(sensitivity, "sensitivity"), _num(sigma, "sigma"), d)
    if m == 0:
        return np.zeros(np.shape(values), dtype=np.float64)
    r = _to_grid(arr, plan.exponent)
    k = _gaussian_noise(int(plan.noise), plan.laplace_t, m * d, entropy, ks, d)
    return _from_grid(r, k.reshape(m, d), plan.exponent).reshape(np.shape(values))


class NoiseRounds:
    """The grid noise of ``count`` successive releases with one plan, drawn up front by one
    batched sampler call (the integer noise K does not depend on the released values).

    ``release(t, value)`` is release t: γ·(rint(value/γ) + K_t), exactly what the t-th of
    ``count`` successive :func:`secure_laplace`/:func:`secure_gaussian` calls with the same
    plan computes -- with ``keys`` (seeded) the same bits, so bit for bit.  ``k`` holds the
    (count, d) integers, ``plan`` the :class:`GridPlan`.
    """

    def __init__(self, plan: GridPlan, k: np.ndarray) -> None:
        self.plan = plan
        self.k = k

    def release(self, t: int, value: Any) -> np.ndarray:
        arr = _finite_values(value)
        if arr.size != self.k.shape[1]:
            raise InvalidInputError(f"value must have {self.k.shape[1]} coordinates; got "
                                    f"{arr.size}")
        e = self.plan.exponent
        r = _to_grid(arr.reshape(-1), e)
        return _from_grid(r, self.k[t], e).reshape(arr.shape)

    def release_rows(self, calls: Any, values: Any) -> np.ndarray:
        """Releases ``calls[j]`` of the rows of ``values`` ((m, d)) at once: row j equals
        ``release(calls[j], values[j])`` (clipped to ±max-float)."""
        arr = _finite_values(values)
        rows = np.asarray(calls, dtype=np.int64)
        if arr.ndim != 2 or arr.shape != (rows.size, self.k.shape[1]):
            raise InvalidInputError(f"values must have shape ({rows.size}, {self.k.shape[1]}); "
                                    f"got {arr.shape}")
        e = self.plan.exponent
        fmax = float(np.finfo(np.float64).max)
        return np.clip(_from_grid(_to_grid(arr, e), self.k[rows], e), -fmax, fmax)


def laplace_rounds(count: int, coords: int, *, sensitivity: float, epsilon: float,
                   keys: Sequence[bytes] | None = None, entropy: Entropy | None = None
                   ) -> NoiseRounds:
    """Noise of ``count`` secure Laplace releases of ``coords`` coordinates each (L1
    ``sensitivity``, ``epsilon``): release t with key ``keys[t]`` (seeded) or from one CSPRNG
    source."""
    plan = laplace_grid(_num(sensitivity, "sensitivity"), _num(epsilon, "epsilon"), int(coords))
    n = int(count) * int(coords)
    num, den = plan.noise.numerator, plan.noise.denominator
    dtype: Any = np.int64 if num < _MAX_DEN and den < _MAX_DEN else object
    k = _laplace_noise(np.full(n, num, dtype=dtype), np.full(n, den, dtype=dtype), n, entropy,
                       _batch_keys(keys, int(count)), int(coords))
    return NoiseRounds(plan, k.reshape(int(count), int(coords)))


def gaussian_rounds(count: int, coords: int, *, sensitivity: float, sigma: float,
                    keys: Sequence[bytes] | None = None, entropy: Entropy | None = None
                    ) -> NoiseRounds:
    """Noise of ``count`` secure Gaussian releases of ``coords`` coordinates each (L2
    ``sensitivity``, continuous ``sigma``), as :func:`laplace_rounds`."""
    plan = gaussian_grid(_num(sensitivity, "sensitivity"), _num(sigma, "sigma"), int(coords))
    n = int(count) * int(coords)
    k = _gaussian_noise(int(plan.noise), plan.laplace_t, n, entropy,
                        _batch_keys(keys, int(count)), int(coords))
    return NoiseRounds(plan, k.reshape(int(count), int(coords)))
