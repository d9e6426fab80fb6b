"""Randomness modes: what an ``rng``/``random_state`` argument selects.

Every random function in dpreg takes ``rng`` (estimators: ``random_state``) and normalises it
once with :func:`check_rng`.  The *kind* of generator decides how Laplace and Gaussian noise is
drawn (:func:`dpreg.mechanisms.laplace`, :func:`dpreg.mechanisms.gaussian`):

* **secure** -- ``None`` (the default) or a :class:`SecureGenerator`: exact discrete noise on a
  public grid (:mod:`dpreg.mechanisms.secure`) from bits of :func:`os.urandom`; not
  reproducible.  This is what a release should use.
* **seeded** -- an int, a :class:`numpy.random.SeedSequence` or an ordinary
  :class:`numpy.random.Generator`: the *same* exact discrete samplers on the same grid, but
  their bits come from the generator, reproducibly: each mechanism call takes a 32-byte key
  from the generator (:func:`noise_key`; the generator always advances by the same amount,
  whatever the private value) and expands it with SHAKE256 into one byte stream per noise
  coordinate (:class:`dpreg.mechanisms.secure.SeededStreams` gives the exact definition).
  The key is four raw 64-bit outputs of the generator's bit generator.
  Seeded releases are float-safe; they are as secret as the seed, so the seed of a real
  release must be secret and carry >= 128 bits of entropy (a small integer seed can be found
  by brute force).
* **simulation** -- a :class:`SimulationGenerator` (an explicit opt-in): numpy's
  floating-point ``laplace``/``normal`` draws, exactly as :meth:`numpy.random.Generator.laplace`
  produces them.  Fast, reproducible and **not float-safe**: only for the reproduction harness
  (:mod:`dpreg.bench`), the privacy-audit simulations and studies, whose outputs are never
  released.  :func:`simulation_generator` builds one with the same stream as
  ``numpy.random.default_rng(seed)``.

Everything that is not Laplace or Gaussian noise (pair designs, exponential mechanisms,
Student-t noise, ...) is drawn from the generator itself in every mode (a secure generator is a
PCG64 stream seeded with 256 bits from :func:`os.urandom`).

This is a base module: it imports nothing from the rest of dpreg except the exceptions.
"""

from __future__ import annotations

import numbers
import os
from typing import Any

import numpy as np

from dpreg.exceptions import InvalidInputError

__all__ = [
    "SecureGenerator",
    "SimulationGenerator",
    "secure_generator",
    "simulation_generator",
    "is_secure",
    "is_simulation",
    "is_seeded",
    "randomness_mode",
    "check_rng",
    "noise_key",
    "noise_keys",
    "NOISE_KEY_BYTES",
]

#: bytes of the key a seeded mechanism call takes from its generator (256 bits)
NOISE_KEY_BYTES = 32


class SecureGenerator(np.random.Generator):
    """A numpy ``Generator`` seeded from the OS CSPRNG that marks the caller as *unseeded*.

    :func:`check_rng` returns one for ``rng=None``.  Its own numpy stream is used for
    everything that is not Laplace or Gaussian noise (pair designs, exponential mechanisms,
    Student-t noise, ...); :func:`dpreg.mechanisms.laplace` and :func:`dpreg.mechanisms.gaussian`
    recognise it and draw their noise with the exact discrete samplers of
    :mod:`dpreg.mechanisms.secure` from :func:`os.urandom` instead.
    """

    @classmethod
    def from_os_entropy(cls) -> SecureGenerator:
        seed = np.random.SeedSequence(int.from_bytes(os.urandom(32), "little"))
        return cls(np.random.PCG64(seed))


class SimulationGenerator(np.random.Generator):
    """A numpy ``Generator`` that opts in to floating-point Laplace/Gaussian noise.

    For simulations whose outputs are never released: the paper reproductions
    (:mod:`dpreg.bench`), the audit's sampling of mechanisms (:mod:`dpreg.audit`) and studies.
    With it, :func:`dpreg.mechanisms.laplace` adds ``Generator.laplace`` draws and
    :func:`dpreg.mechanisms.gaussian` ``Generator.normal`` draws (fast, reproducible, and the
    same numbers as an ordinary generator gave before seeded releases became float-safe).
    Floating-point noise is **not float-safe** (the low-order bits of a release can reveal the
    data, Mironov 2012): never pass one of these to a release of real data.  Children made with
    :meth:`spawn` are simulation generators too.
    """


def secure_generator() -> SecureGenerator:
    """A fresh :class:`SecureGenerator` (what ``check_rng(None)`` returns)."""
    return SecureGenerator.from_os_entropy()


def simulation_generator(seed: Any = None) -> SimulationGenerator:
    """A :class:`SimulationGenerator` with the stream of ``numpy.random.default_rng(seed)``
    (``seed``: an int, a sequence of ints, a ``SeedSequence`` or None)."""
    if isinstance(seed, np.random.Generator):
        return SimulationGenerator(seed.bit_generator)
    return SimulationGenerator(np.random.PCG64(seed))


def is_secure(rng: Any) -> bool:
    """True for ``None`` or a :class:`SecureGenerator`: Laplace/Gaussian noise from os.urandom."""
    return rng is None or isinstance(rng, SecureGenerator)


def is_simulation(rng: Any) -> bool:
    """True for a :class:`SimulationGenerator` (floating-point noise; simulations only)."""
    return isinstance(rng, SimulationGenerator)


def is_seeded(rng: Any) -> bool:
    """True when ``rng`` selects a reproducible mode (seeded or simulation): anything but
    ``None`` or a :class:`SecureGenerator`.  Results record it."""
    return not is_secure(rng)


def randomness_mode(rng: Any) -> str:
    """``"secure"``, ``"seeded"`` or ``"simulation"`` (see the module doc)."""
    if is_secure(rng):
        return "secure"
    return "simulation" if is_simulation(rng) else "seeded"


def _fail(name: str, expected: str, value: Any) -> InvalidInputError:
    text = repr(value)
    text = text if len(text) <= 80 else text[:77] + "..."
    return InvalidInputError(f"{name} must be {expected}; got {text}")


def check_rng(rng: Any, name: str = "rng") -> np.random.Generator:
    """Normalise ``rng``/``random_state`` to a :class:`numpy.random.Generator`.

    * ``None`` -> a :class:`SecureGenerator` seeded from the OS CSPRNG (secure mode: the right
      choice for releases),
    * a non-negative ``int`` or a :class:`numpy.random.SeedSequence` -> a new seeded generator
      (seeded mode: reproducible, float-safe; secret only if the seed is),
    * a :class:`numpy.random.Generator` -> returned unchanged (its state advances; a
      :class:`SimulationGenerator` stays one),
    * a legacy :class:`numpy.random.RandomState` -> a generator seeded by one draw from it
      (accepted for scikit-learn compatibility; at most 31 bits of seed).
    """
    if rng is None:
        return secure_generator()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, (bool, np.bool_)):
        raise _fail(name, "None, a non-negative int, a SeedSequence or a Generator", rng)
    if isinstance(rng, numbers.Integral):
        if int(rng) < 0:
            raise _fail(name, "a non-negative integer seed", rng)
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.RandomState):
        return np.random.default_rng(int(rng.randint(0, 2**31 - 1)))
    raise _fail(name, "None, a non-negative int, a SeedSequence or a Generator", rng)


def noise_key(gen: np.random.Generator) -> bytes:
    """The key of one seeded mechanism call: :data:`NOISE_KEY_BYTES` = 32 bytes, the next four
    64-bit raw outputs of ``gen``'s bit generator (``gen.bit_generator.random_raw(4)``) in
    little-endian order.  Always the same number of outputs, so the generator's state after a
    call does not depend on the value released or on how many bits the samplers consumed."""
    return noise_keys(gen, 1)[0]


def noise_keys(gen: np.random.Generator | np.random.BitGenerator, count: int) -> list[bytes]:
    """``count`` successive :func:`noise_key` draws at once (the raw outputs of a bit generator
    form one stream, so this equals ``count`` separate calls -- what a core making ``count``
    mechanism calls draws).  ``gen`` may also be the bit generator itself."""
    bitgen = gen if isinstance(gen, np.random.BitGenerator) else gen.bit_generator
    words = NOISE_KEY_BYTES // 8
    raw = np.asarray(bitgen.random_raw(words * int(count)), dtype="<u8").tobytes()
    return [raw[i:i + NOISE_KEY_BYTES] for i in range(0, len(raw), NOISE_KEY_BYTES)]
