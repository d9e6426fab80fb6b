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

from dpreg._random import check_rng, is_secure, is_simulation, noise_keys
from dpreg.exceptions import InvalidInputError

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
                 factory: Callable[[int], np.random.Generator] | None = None) -> None:
        if sources is not None and len(sources) != rows:
            raise InvalidInputError(f"RowRandomness needs one generator per row ({rows}); got "
                                    f"{len(sources)}")
        self.rows = int(rows)
        self._sources = None if sources is None else list(sources)
        self._factory = factory

    @classmethod
    def seeded(cls, sources: Sequence[_BitSource]) -> RowRandomness:
        """Row g draws from ``sources[g]`` (a seeded Generator or its bit generator)."""
        return cls(len(sources), sources)

    @classmethod
    def secure(cls, rows: int) -> RowRandomness:
        """``rows`` rows whose noise comes from os.urandom (secure mode)."""
        return cls(rows, None)

    @property
    def is_secure(self) -> bool:
        return self._sources is None

    def take(self, idx: Any) -> RowRandomness:
        """The rows ``idx`` (in that order): a batch step that only some rows reach (e.g. the
        intercept of the rows whose noisy slope is usable) draws only from those rows."""
        sel = np.asarray(idx, dtype=np.int64).reshape(-1)
        if self._sources is None:
            return RowRandomness(sel.size, None, self._factory)
        return RowRandomness(sel.size, [self._sources[int(j)] for j in sel.tolist()])

    def keys(self, calls: int = 1) -> list[list[bytes]] | None:
        """The next ``calls`` noise keys of every row (seeded), or None (secure)."""
        if self._sources is None:
            return None
        return [noise_keys(s, calls) for s in self._sources]

    def generator(self, j: int) -> np.random.Generator:
        """Row j's generator for draws that are not Laplace/Gaussian noise."""
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
