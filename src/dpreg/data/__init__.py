"""Data: real data sets that ship inside registry packages, and seeded simulations.

>>> from dpreg.data import load_dataset, list_datasets
>>> ds = load_dataset("diabetes"); ds.bounds["bmi"]
(12.0, 60.0)
"""

from dpreg.data import real as _real  # noqa: F401  (registers the loaders)
from dpreg.data._registry import Dataset, list_datasets, load_dataset
from dpreg.data.real import bikeshare_groups, load_oa_simulated
from dpreg.data.simulated import (
    NATION_SEED,
    NATION_TRACTS,
    OA_SEED,
    OA_TRACTS,
    simulate_nation,
    simulate_oa_state,
    write_nation,
)

__all__ = [
    "Dataset",
    "list_datasets",
    "load_dataset",
    "load_oa_simulated",
    "bikeshare_groups",
    "simulate_oa_state",
    "OA_SEED",
    "OA_TRACTS",
    "simulate_nation",
    "write_nation",
    "NATION_SEED",
    "NATION_TRACTS",
]
