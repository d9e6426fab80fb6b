"""The data-independent random choices of subsample-and-aggregate releases (TukeyEM, Amin et
al. 2023): the random partition of the rows into equal batches and the tie-breaking jitter of
the per-batch models.  Both are part of the mechanism -- they are drawn from the release's
generator, never depend on the data's values, and the guarantee of the release that uses them
is stated with them included (:mod:`dpreg.multivariate.tukey`, docs/privacy/tukeyem.md)."""

from __future__ import annotations

import numpy as np

__all__ = ["random_partition", "tie_jitter"]


def random_partition(n: int, n_batches: int, rng: np.random.Generator) -> np.ndarray:
    """Row indices of ``n_batches`` disjoint batches of b = ⌊n/m⌋ rows each, batch j the
    entries j·b .. (j + 1)·b − 1: the first m·b entries of a uniformly random permutation of
    0..n−1 (one ``rng.permutation(n)``; the n − m·b leftover rows are unused).

    Why it is part of the mechanism: with n public the partition depends on n and the
    generator only, so replacing one record changes at most one batch -- the sensitivity
    argument of subsample-and-aggregate (Amin et al. 2023 §3; replace-one, n public)."""
    b = n // n_batches
    return rng.permutation(n)[: n_batches * b]


def tie_jitter(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``values`` plus an independent tie-breaking jitter 10⁻¹⁰·max(|v|, 10⁻¹²)·U(0, 1) on
    every entry (one ``rng.uniform`` of the array's shape).

    Why it is part of the mechanism: TukeyEM's depth volumes need distinct coordinates; the
    jitter is a randomised map of each model on its own (it reads no other model and no
    data), so neighbouring data sets still give model sets that differ in at most one model
    and the exponential mechanism's and PTR's sensitivities are unchanged (Amin et al. 2023)."""
    scale = 1e-10 * np.maximum(np.abs(values), 1e-12)
    return values + scale * rng.uniform(size=values.shape)
