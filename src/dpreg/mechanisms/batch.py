"""Randomness of a batch of releases: one release per row (one group or many).

Every release function of dpreg (:mod:`dpreg.simple`, :mod:`dpreg.multivariate`) works on a
batch of G rows -- G = 1 for a single fit, G groups for ``fit_by_group``, G replicates for the
harness -- and draws its noise through the mechanisms of this package.  What the ``rng`` of
such a function may be:

* a :class:`numpy.random.Generator` (the single fit, or replicates of one data set): the whole
  batch is **one** mechanism call per step, exactly what the single fit draws (secure, seeded
  or simulation mode as :mod:`dpreg._random` describes);
* a :class:`RowRandomness` (many groups): **one mechanism call per row** per step.  Seeded:
  row g takes its key from its own generator (:func:`~dpreg._random.noise_key`), so row g's
  release is bit for bit what the single fit on group g with that generator releases -- the
  batch does not depend on partitioning, ordering or backend.  Secure: every row's noise from
  one os.urandom source (the exact samplers, vectorised over rows).

This module only routes randomness; the mechanisms themselves (their guarantee, neighbouring
relation, sensitivity and paper) are documented in :mod:`~dpreg.mechanisms.laplace`,
:mod:`~dpreg.mechanisms.gaussian`, :mod:`~dpreg.mechanisms.smooth` and
:mod:`~dpreg.mechanisms.exponential`; a batch of G independent releases on G disjoint groups is
the parallel composition of G releases (each row's guarantee is the mechanism's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpreg._random import NOISE_KEY_BYTES, check_rng, is_secure, is_simulation, noise_keys
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms._pcg64 import PCG64Rows

__all__ = ["RowRandomness", "row_count"]

_BitSource = np.random.Generator | np.random.BitGenerator


class RowRandomness:
    """The randomness of G rows released by separate mechanism calls (see the module doc).

    ``RowRandomness.seeded(gens)``: one generator (or bit generator) per row -- row g's calls
    take their keys from ``gens[g]`` in call order; ``RowRandomness.secure(G)``: one
    os.urandom source for all rows (not reproducible).  Draws that are not Laplace or
    Gaussian noise (Student-t, exponential mechanism) use :meth:`generator`, row by row.
    """

    def __init__(self, rows: int, sources: Sequence[_BitSource] | None,
                 factory: Callable[[int], np.random.Generator] | None = None, *,
                 lanes: PCG64Rows | None = None, index: np.ndarray | None = None) -> None:
        if sources is not None and len(sources) != rows:
            raise InvalidInputError(f"RowRandomness needs one generator per row ({rows}); got "
                                    f"{len(sources)}")
        self.rows = int(rows)
        self._sources = None if sources is None else list(sources)
        self._factory = factory
        # seeded rows held as arrays of PCG64 states (seed_sequences): row g is lanes row
        # index[g]
        self._lanes = lanes
        self._index = None if lanes is None else (
            np.arange(self.rows, dtype=np.int64) if index is None
            else np.asarray(index, dtype=np.int64))

    @classmethod
    def seeded(cls, sources: Sequence[_BitSource]) -> RowRandomness:
        """Row g draws from ``sources[g]`` (a seeded Generator or its bit generator)."""
        return cls(len(sources), sources)

    @classmethod
    def seed_sequences(cls, entropy: Any, spawn_keys: Any) -> RowRandomness:
        """Row g draws from ``PCG64(SeedSequence(entropy, spawn_key=spawn_keys[g]))``
        (``spawn_keys``: G rows of k >= 1 32-bit words) -- exactly
        ``seeded([PCG64(SeedSequence(entropy, spawn_key=k)) for k in spawn_keys])``, with the
        G generators' states computed and advanced as arrays
        (:class:`~dpreg.mechanisms._pcg64.PCG64Rows`: the same outputs, bit for bit, without
        building G Python objects; ~100x faster for 10^5 rows).  An entropy the arrays do not
        cover gets numpy's own objects (the same streams); arrays that would not be numpy's
        raise ``RuntimeError`` (checked on the first and last row)."""
        words = np.asarray(spawn_keys, dtype=np.uint64)
        if words.ndim == 2 and words.shape[0] == 0:
            return cls(0, [])
        lanes = PCG64Rows.from_seed_sequences(entropy, words) if words.ndim == 2 else None
        if lanes is None:  # an entropy form the arrays do not cover: numpy's own objects
            return cls.seeded([np.random.PCG64(np.random.SeedSequence(
                entropy, spawn_key=tuple(int(w) for w in k))) for k in words.tolist()])
        return cls(lanes.rows, None, lanes=lanes)

    @classmethod
    def secure(cls, rows: int) -> RowRandomness:
        """``rows`` rows whose noise comes from os.urandom (secure mode)."""
        return cls(rows, None)

    @property
    def is_secure(self) -> bool:
        return self._sources is None and self._lanes is None

    def take(self, idx: Any) -> RowRandomness:
        """The rows ``idx`` (in that order): a batch step that only some rows reach (e.g. the
        intercept of the rows whose noisy slope is usable) draws only from those rows."""
        sel = np.asarray(idx, dtype=np.int64).reshape(-1)
        if self._lanes is not None:
            assert self._index is not None
            if np.unique(sel).size != sel.size:
                raise InvalidInputError("RowRandomness.take needs distinct rows")
            return RowRandomness(sel.size, None, lanes=self._lanes, index=self._index[sel])
        if self._sources is None:
            return RowRandomness(sel.size, None, self._factory)
        return RowRandomness(sel.size, [self._sources[int(j)] for j in sel.tolist()])

    def keys(self, calls: int = 1) -> list[list[bytes]] | None:
        """The next ``calls`` noise keys of every row (seeded), or None (secure)."""
        flat = self.flat_keys(calls)
        if flat is None:
            return None
        c = int(calls)
        return [flat[g * c:(g + 1) * c] for g in range(self.rows)]

    def flat_keys(self, calls: int = 1) -> list[bytes] | None:
        """The next ``calls`` noise keys of every row, row after row (row g's t-th key at
        position g·calls + t; what :meth:`keys` returns, flattened), or None (secure).  Each
        is :func:`dpreg._random.noise_keys` of the row's generator; with
        :meth:`seed_sequences` all rows are advanced at once."""
        if self._sources is None and self._lanes is None:
            return None
        c = max(0, int(calls))
        if self._lanes is not None:  # 4 raw outputs a key, every row at once
            assert self._index is not None
            words = NOISE_KEY_BYTES // 8
            raw = self._lanes.raw(self._index, words * c).astype("<u8").tobytes()
            return [raw[i:i + NOISE_KEY_BYTES] for i in range(0, len(raw), NOISE_KEY_BYTES)]
        assert self._sources is not None
        return [k for s in self._sources for k in noise_keys(s, c)]

    def generator(self, j: int) -> np.random.Generator:
        """Row j's generator for draws that are not Laplace/Gaussian noise."""
        if self._lanes is not None:
            assert self._index is not None
            return self._lanes.generator(int(self._index[j]))
        if self._sources is None:
            return check_rng(None) if self._factory is None else self._factory(j)
        src = self._sources[j]
        return src if isinstance(src, np.random.Generator) else np.random.Generator(src)

    def is_simulation(self) -> bool:
        """True when every row has a simulation generator (floating-point noise)."""
        return self._sources is not None and bool(self._sources) and all(
            is_simulation(s) for s in self._sources)


def row_count(values: Any) -> int:
    """G: the number of rows of a batch of values ((G,) or (G, d))."""
    arr = np.asarray(values)
    return 1 if arr.ndim == 0 else int(arr.shape[0])


def one_call(rng: Any) -> bool:
    """True when ``rng`` makes the whole batch one mechanism call (a Generator or None)."""
    return not isinstance(rng, RowRandomness)


def secure_rows(rng: Any) -> bool:
    return isinstance(rng, RowRandomness) and rng.is_secure or (
        not isinstance(rng, RowRandomness) and is_secure(rng))
