"""Many PCG64 generators at once: numpy's ``SeedSequence`` → ``PCG64`` seeding and
``random_raw`` vectorised over rows.

Per-group seeded releases give every group its own generator,
``PCG64(SeedSequence(root_entropy, spawn_key=<the group's four key words>))`` (see
:mod:`dpreg.grouped._common`), and take the noise keys of their mechanism calls from its raw
64-bit outputs (:func:`dpreg._random.noise_keys`).  Building 10⁵ such objects one by one costs
~80 µs each in Python (measured: 7.8 s of a 14 s release of 10⁵ groups), for a few dozen
integer operations.  This module computes the same states with NumPy array arithmetic over
all rows at once:

* ``SeedSequence`` (O'Neill's ``seed_seq`` hash mixing, numpy's ``bit_generator.pyx``): the
  pool after the run entropy is common to all rows and is computed once; each row then mixes
  its spawn-key words into it and expands the pool with ``generate_state(4, uint64)``;
* ``PCG64`` (``pcg64.h``): ``srandom_r`` (state 0, inc = 2·initseq + 1, step, add the seed,
  step) and the XSL-RR output of the 128-bit LCG, with 128-bit products from 32-bit limbs.

The outputs are numpy's, bit for bit: :meth:`PCG64Rows.from_seed_sequences` checks its first
and last row against numpy's own objects and raises a ``RuntimeError`` if they ever differ (a
numpy whose seeding is not this arithmetic: the rows are never handed out then), and the tests
compare every row of large batches with random entropy and keys.  An entropy form the
arithmetic does not cover (not an int or a nested sequence of ints) returns None: the caller
then builds numpy's own objects, the same streams.  Only seeded mode uses this module;
secure mode draws from os.urandom (:meth:`dpreg.mechanisms.batch.RowRandomness.secure`).
No randomness is created here and nothing about the data is read: the rows' states are
functions of the public keys and the seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["PCG64Rows", "run_entropy_words"]

_U32 = np.uint32
_U64 = np.uint64
# numpy/random/bit_generator.pyx (SeedSequence)
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_POOL = 4
_M32 = 0xFFFFFFFF
# numpy/random/src/pcg64/pcg64.h: PCG_DEFAULT_MULTIPLIER_128
_MULT_HI, _MULT_LO = 2549297995355413924, 4865540595714422341
_MASK64 = (1 << 64) - 1


def run_entropy_words(entropy: Any) -> list[int] | None:
    """The 32-bit words numpy's SeedSequence makes of ``entropy`` (an int >= 0, or a sequence
    of them, nested), least significant first; None for any other form (the caller then uses
    numpy's own objects)."""
    if isinstance(entropy, (bool, np.bool_)):
        return None
    if isinstance(entropy, (int, np.integer)):
        x = int(entropy)
        if x < 0:
            return None
        if x == 0:
            return [0]
        out = []
        while x > 0:
            out.append(x & _M32)
            x >>= 32
        return out
    if isinstance(entropy, (list, tuple)):
        words: list[int] = []
        for v in entropy:
            w = run_entropy_words(v)
            if w is None:
                return None
            words.extend(w)
        return words
    return None


class _Hash:
    """The running ``hash_const`` of SeedSequence's hashmix (a scalar: it never depends on the
    data mixed in, only on how many words were)."""

    def __init__(self, init: int, mult: int) -> None:
        self.value, self.mult = init, mult

    def mix(self, value: Any) -> Any:
        """hashmix(value): works on Python ints (masked) and on uint32 arrays (wrapping)."""
        h = self.value
        self.value = (h * self.mult) & _M32
        if isinstance(value, np.ndarray):
            v = (value ^ _U32(h)) * _U32(self.value)
            return v ^ (v >> _U32(16))
        v = ((value ^ h) * self.value) & _M32
        return v ^ (v >> 16)


def _mix(x: Any, y: Any) -> Any:
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        r = _U32(_MIX_L) * np.asarray(x, dtype=_U32) - _U32(_MIX_R) * np.asarray(y, dtype=_U32)
        return r ^ (r >> _U32(16))
    r = (_MIX_L * x - _MIX_R * y) & _M32
    return r ^ (r >> 16)


def _pool_states(run: list[int], spawn: np.ndarray) -> np.ndarray:
    """``SeedSequence(run, spawn_key=spawn[g]).generate_state(8, uint32)`` for every row g
    (``spawn``: (G, k) uint32, k >= 1): (G, 8) uint32."""
    h = _Hash(_INIT_A, _MULT_A)
    # the run entropy, padded to the pool size (numpy pads it when a spawn key follows)
    words = list(run) + [0] * max(0, _POOL - len(run))
    pool = [h.mix(words[i]) for i in range(_POOL)]
    for s in range(_POOL):
        for d in range(_POOL):
            if s != d:
                pool[d] = _mix(pool[d], h.mix(pool[s]))
    for w in words[_POOL:]:
        for d in range(_POOL):
            pool[d] = _mix(pool[d], h.mix(w))
    g = spawn.shape[0]
    rows = [np.full(g, p, dtype=_U32) for p in pool]
    with np.errstate(over="ignore"):
        for j in range(spawn.shape[1]):
            col = np.ascontiguousarray(spawn[:, j], dtype=_U32)
            for d in range(_POOL):
                rows[d] = _mix(rows[d], h.mix(col))
        out = np.empty((g, 8), dtype=_U32)
        hb = _Hash(_INIT_B, _MULT_B)
        for i in range(8):
            out[:, i] = hb.mix(rows[i % _POOL])
    return out


def _mul64(a: np.ndarray, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The full 128-bit product of uint64 ``a`` and the constant ``b``: (high, low)."""
    a_lo, a_hi = a & _U64(_M32), a >> _U64(32)
    b_lo, b_hi = _U64(b & _M32), _U64(b >> 32)
    ll, lh, hl, hh = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    mid = (ll >> _U64(32)) + (lh & _U64(_M32)) + (hl & _U64(_M32))
    low = (ll & _U64(_M32)) | (mid << _U64(32))
    high = hh + (lh >> _U64(32)) + (hl >> _U64(32)) + (mid >> _U64(32))
    return high, low


def _step(s_hi: np.ndarray, s_lo: np.ndarray, i_hi: np.ndarray, i_lo: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """One step of the 128-bit LCG: state · MULT + inc (mod 2¹²⁸)."""
    p_hi, p_lo = _mul64(s_lo, _MULT_LO)
    p_hi = p_hi + s_lo * _U64(_MULT_HI) + s_hi * _U64(_MULT_LO)
    lo = p_lo + i_lo
    hi = p_hi + i_hi + (lo < p_lo).astype(_U64)
    return hi, lo


def _output(s_hi: np.ndarray, s_lo: np.ndarray) -> np.ndarray:
    """PCG's XSL-RR output of a 128-bit state."""
    x = s_hi ^ s_lo
    rot = s_hi >> _U64(58)
    return (x >> rot) | (x << ((_U64(64) - rot) & _U64(63)))


class PCG64Rows:
    """The states of G PCG64 generators (one per row), advanced together.

    :meth:`raw` returns the rows' next raw outputs (``PCG64.random_raw``) and advances them;
    :meth:`generator` hands one row over to a real ``numpy.random.Generator`` in the same
    state -- from then on that row lives in the object (draws made with it advance it, and
    later :meth:`raw` calls for the row read from it), so mixing the two never repeats or
    skips an output.
    """

    def __init__(self, s_hi: np.ndarray, s_lo: np.ndarray, i_hi: np.ndarray,
                 i_lo: np.ndarray) -> None:
        self._s_hi, self._s_lo = s_hi, s_lo
        self._i_hi, self._i_lo = i_hi, i_lo
        self._objects: dict[int, np.random.Generator] = {}

    @property
    def rows(self) -> int:
        return int(self._s_hi.size)

    @classmethod
    def from_seed_sequences(cls, entropy: Any, spawn_keys: np.ndarray) -> PCG64Rows | None:
        """Row g: ``PCG64(SeedSequence(entropy, spawn_key=spawn_keys[g]))`` (``spawn_keys``: a
        (G, k) array of 32-bit words, k >= 1).  None when ``entropy`` is not an int or a
        sequence of ints, or the keys are not such an array (the caller uses numpy's objects).
        Raises ``RuntimeError`` when the first or last row differs from numpy's own object:
        the arithmetic is then not this numpy's, and no row is handed out."""
        run = run_entropy_words(entropy)
        keys = np.asarray(spawn_keys)
        if run is None or keys.ndim != 2 or keys.shape[1] < 1 or keys.size == 0 \
                or int(keys.min()) < 0 or int(keys.max()) > _M32:
            return None
        st = _pool_states(run, keys.astype(_U32)).astype("<u4").view("<u8").astype(_U64)
        seed_hi, seed_lo, inc_hi, inc_lo = (np.ascontiguousarray(st[:, i]) for i in range(4))
        # pcg64_srandom_r: inc = (initseq << 1) | 1; state = 0; step; state += seed; step
        i_hi = (inc_hi << _U64(1)) | (inc_lo >> _U64(63))
        i_lo = (inc_lo << _U64(1)) | _U64(1)
        with np.errstate(over="ignore"):
            zero = np.zeros_like(i_hi)
            s_hi, s_lo = _step(zero, zero, i_hi, i_lo)
            lo = s_lo + seed_lo
            s_hi = s_hi + seed_hi + (lo < s_lo).astype(_U64)
            s_hi, s_lo = _step(s_hi, lo, i_hi, i_lo)
        out = cls(s_hi, s_lo, i_hi, i_lo)
        for g in {0, keys.shape[0] - 1}:  # numpy's own object, as a guard against drift
            want = np.random.PCG64(np.random.SeedSequence(
                entropy, spawn_key=tuple(int(w) for w in keys[g]))).state["state"]
            if (want["state"], want["inc"]) != out._state(g):
                raise RuntimeError(
                    f"internal error: dpreg's array seeding of PCG64 generators differs from "
                    f"numpy {np.__version__}'s SeedSequence/PCG64 (row {g}); seeded per-group "
                    "streams would not be numpy's, so none is drawn -- please report this "
                    "(secure mode, random_state=None, is unaffected)")
        return out

    def _state(self, g: int) -> tuple[int, int]:
        return ((int(self._s_hi[g]) << 64) | int(self._s_lo[g]),
                (int(self._i_hi[g]) << 64) | int(self._i_lo[g]))

    def raw(self, rows: np.ndarray, count: int) -> np.ndarray:
        """The next ``count`` raw 64-bit outputs of each row in ``rows`` (distinct row
        indices): a (len(rows), count) uint64 array; the rows advance by ``count``."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        out = np.empty((rows.size, int(count)), dtype=_U64)
        if rows.size == 0 or count <= 0:
            return out
        own = np.array([int(r) in self._objects for r in rows.tolist()], dtype=bool) \
            if self._objects else np.zeros(rows.size, dtype=bool)
        for j in np.flatnonzero(own).tolist():
            out[j] = self._objects[int(rows[j])].bit_generator.random_raw(int(count))
        sel = rows[~own]
        if sel.size:
            s_hi, s_lo = self._s_hi[sel], self._s_lo[sel]
            i_hi, i_lo = self._i_hi[sel], self._i_lo[sel]
            vals = np.empty((sel.size, int(count)), dtype=_U64)
            with np.errstate(over="ignore"):
                for t in range(int(count)):
                    s_hi, s_lo = _step(s_hi, s_lo, i_hi, i_lo)
                    vals[:, t] = _output(s_hi, s_lo)
            self._s_hi[sel], self._s_lo[sel] = s_hi, s_lo
            out[~own] = vals
        return out

    def generator(self, g: int) -> np.random.Generator:
        """Row g as a numpy Generator (PCG64) in its current state; the row is handed over to
        it (see the class doc)."""
        g = int(g)
        gen = self._objects.get(g)
        if gen is None:
            bitgen = np.random.PCG64()
            state, inc = self._state(g)
            bitgen.state = {"bit_generator": "PCG64", "state": {"state": state, "inc": inc},
                            "has_uint32": 0, "uinteger": 0}
            gen = self._objects[g] = np.random.Generator(bitgen)
        return gen

