"""Experiment kinds: how a spec's cells are enumerated, run, summarised and plotted.

Each kind is a :class:`Kind` subclass registered in :data:`KINDS`.  A *cell* is one point of the
experiment grid (a dict of parameters with ``cell`` (index), ``panel`` and ``cost``); a cell's
rows are computed from its own :class:`numpy.random.SeedSequence` child, so cells can run in any
order, in parallel, or be skipped on resume without changing any number.

The interface and the registry live in :mod:`dpreg.bench.kinds._base`; importing the kind
modules below registers them (they import ``_base``, never this package, so there is no cycle).
"""

from dpreg.bench.kinds import coverage, multivariate, simple, sscp  # noqa: F401  (registers)
from dpreg.bench.kinds._base import KINDS, Kind, register, require

__all__ = ["Kind", "KINDS", "register", "require"]
