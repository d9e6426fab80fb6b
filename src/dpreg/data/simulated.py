"""Seeded simulations used by the demo and the experiments.

``simulate_oa_state`` builds a *simulated* Opportunity-Atlas-like state: thousands of census
tracts, each holding 30–400 (parent income rank, child income rank) pairs in [0, 1]².  It is a
simulation written for dpreg -- the real tract-level microdata are confidential and were never
public -- shaped after the facts reported in Alabi et al. (2022, §7.1.1) and Chetty et al.
(2014, 2018):

* tract sizes: 30–400 people, heavily right-skewed (Illinois: 219,594 people in 3,108 tracts,
  about 71 per tract) -- drawn from a log-normal truncated to [30, 400];
* parent ranks inside a tract are concentrated around the tract's typical rank (segregation):
  log-normal multiplicative spread around a tract median drawn from Beta(2, 2), clipped to
  [0, 1], so most tracts have a small nvar(x) = Σ(x − x̄)² (mostly 0–5, up to ~25);
* rank-rank slopes vary across tracts around the national value ≈ 0.34 (sd 0.10);
* absolute mobility at the 25th percentile p25 varies around 0.42 (sd 0.06);
* individual child ranks scatter widely around the tract line (residual sd 0.22–0.30) and
  are clipped to [0, 1].
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpreg._validation import check_int, check_rng
from dpreg.exceptions import InvalidInputError

__all__ = ["simulate_oa_state", "OA_SEED", "OA_TRACTS", "simulate_nation", "write_nation",
           "nation_tract_sizes", "NATION_SEED", "NATION_TRACTS", "NATION_CHILD_SHARE"]

OA_SEED = 20221107  # fixed seed of the bundled simulated state
OA_TRACTS = 3108


def simulate_oa_state(n_tracts: int = OA_TRACTS, *, rng: Any = OA_SEED,
                      decimals: int | None = 4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Simulate one state's tracts.

    Returns ``(points, truth)``: ``points`` has columns ``tract``, ``parent_rank``,
    ``child_rank`` (one row per person); ``truth`` has one row per tract with the generating
    ``slope``, ``intercept``, ``p25``, ``p75``, ``n`` and the residual ``sigma``.
    ``decimals`` rounds the ranks (the bundled file uses 4) -- rounding happens before any
    analysis, so the bundled data are exactly what is analysed.
    """
    n_tracts = check_int(n_tracts, "n_tracts", minimum=1)
    g = check_rng(rng)
    sizes = np.exp(g.normal(np.log(55.0), 0.62, size=n_tracts))
    sizes = np.clip(np.round(sizes), 30, 400).astype(int)
    lines = _tract_lines(g, n_tracts)
    tract = np.repeat(np.arange(n_tracts), sizes)
    x, y = _tract_points(g, lines, tract, decimals)
    ids = np.array([f"T{t:04d}" for t in range(n_tracts)])
    points = pd.DataFrame({"tract": ids[tract], "parent_rank": x, "child_rank": y})
    truth = pd.DataFrame({"tract": ids, "n": sizes, **_truth_columns(lines)})
    return points, truth


def _tract_lines(g: np.random.Generator, n_tracts: int) -> dict[str, np.ndarray]:
    """Each tract's generating line and spread (the model of the module doc), drawn from ``g``
    in a fixed order (the bundled state depends on it)."""
    center = g.beta(2.0, 2.0, size=n_tracts)
    spread = g.uniform(0.15, 0.75, size=n_tracts)
    slope = g.normal(0.34, 0.10, size=n_tracts)
    p25 = g.normal(0.42, 0.06, size=n_tracts)
    intercept = p25 - 0.25 * slope
    sigma = g.uniform(0.22, 0.30, size=n_tracts)
    return {"center": center, "spread": spread, "slope": slope, "p25": p25,
            "intercept": intercept, "sigma": sigma}


def _truth_columns(lines: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"slope": lines["slope"], "intercept": lines["intercept"], "p25": lines["p25"],
            "p75": lines["intercept"] + 0.75 * lines["slope"], "sigma": lines["sigma"]}


def _tract_points(g: np.random.Generator, lines: dict[str, np.ndarray], tract: np.ndarray,
                  decimals: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(parent rank, child rank) of one person per entry of ``tract`` (indices into
    ``lines``), in [0, 1], rounded to ``decimals``."""
    spread = lines["spread"][tract]
    x = lines["center"][tract] * np.exp(spread * g.standard_normal(tract.size) - spread ** 2 / 2)
    del spread
    x = np.clip(x, 0.0, 1.0, out=x)
    y = (lines["intercept"][tract] + lines["slope"][tract] * x
         + lines["sigma"][tract] * g.standard_normal(tract.size))
    y = np.clip(y, 0.0, 1.0, out=y)
    if decimals is not None:
        x, y = np.round(x, decimals, out=x), np.round(y, decimals, out=y)
    return x, y


# ---------------------------------------------------------------------- a simulated nation
#: number of census tracts of the 2010 US census (public count)
NATION_TRACTS = 73_057
NATION_SEED = 20_140_601  # fixed seed of the demo's nation
#: children of the cohort per resident: 20.5 M children born 1978-83 (Chetty et al. 2018) over
#: a population of 308.7 M (2010 census)
NATION_CHILD_SHARE = 20.5e6 / 308.7e6
_NATION_BLOCK = 4_096  # tracts per generated block (and per Parquet file)


def nation_tract_sizes(n_tracts: int = NATION_TRACTS, *, rng: Any = NATION_SEED) -> np.ndarray:
    """People per tract in the simulated nation (see :func:`simulate_nation`): integer array of
    length ``n_tracts``; seeded, so the same ``rng`` gives the sizes :func:`simulate_nation`
    uses."""
    return _nation_plan(n_tracts, rng)[0]


def _nation_plan(n_tracts: int, rng: Any
                 ) -> tuple[np.ndarray, dict[str, np.ndarray], list[np.random.Generator]]:
    """Sizes, lines and one generator per block of ``_NATION_BLOCK`` tracts (SeedSequence
    children: the points of a block do not depend on how many blocks are generated)."""
    n_tracts = check_int(n_tracts, "n_tracts", minimum=1)
    if isinstance(rng, np.random.SeedSequence):
        ss = rng
    elif isinstance(rng, (bool, np.bool_)) or not isinstance(rng, (int, np.integer)) or rng < 0:
        raise InvalidInputError(f"rng must be a non-negative int seed or a SeedSequence (a "
                                f"simulation is reproducible); got {rng!r}")
    else:
        ss = np.random.SeedSequence(int(rng))
    head, *block_seeds = ss.spawn(1 + -(-n_tracts // _NATION_BLOCK))
    g = np.random.default_rng(head)
    population = np.exp(g.normal(np.log(4_000.0), 0.42, size=n_tracts))
    special = g.random(n_tracts) < 0.01  # parks, airports, institutions: few residents
    population[special] = g.uniform(0.0, 400.0, size=int(special.sum()))
    sizes = g.poisson(population * NATION_CHILD_SHARE).astype(np.int64)
    lines = _tract_lines(g, n_tracts)
    return sizes, lines, [np.random.default_rng(s) for s in block_seeds]


def _nation_blocks(n_tracts: int, rng: Any, decimals: int | None
                   ) -> tuple[pd.DataFrame, Iterator[tuple[int, np.ndarray, np.ndarray,
                                                           np.ndarray]]]:
    sizes, lines, gens = _nation_plan(n_tracts, rng)
    truth = pd.DataFrame({"tract": np.arange(sizes.size, dtype=np.int32), "n": sizes,
                          **_truth_columns(lines)})

    def blocks() -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
        for b, g in enumerate(gens):
            first = b * _NATION_BLOCK
            ids = np.arange(first, min(first + _NATION_BLOCK, sizes.size), dtype=np.int32)
            tract = np.repeat(ids, sizes[ids])
            x, y = _tract_points(g, lines, tract, decimals)
            yield b, tract, x, y

    return truth, blocks()


def simulate_nation(n_tracts: int = NATION_TRACTS, *, rng: Any = NATION_SEED,
                    decimals: int | None = 4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Simulate a nation of census tracts (one row per child): the national-scale version of
    :func:`simulate_oa_state`, for scale tests and the ``dpreg demo --scale nation`` job.

    Parameters
    ----------
    n_tracts:
        Number of tracts (default 73,057, the number of census tracts of the 2010 US census).
    rng:
        A non-negative int seed or a ``numpy.random.SeedSequence`` (default: the demo's fixed
        seed).  The points are generated in blocks of 4,096 tracts, each from its own child
        stream, so memory during generation is the output plus one block.
    decimals:
        Rounding of the ranks (None: no rounding).

    Returns
    -------
    (points, truth)
        ``points``: columns ``tract`` (int32, 0 .. n_tracts − 1), ``parent_rank``,
        ``child_rank`` (float64 in [0, 1]), sorted by tract; about 20.9 M rows for the default
        size (~400 MB).  ``truth``: one row per tract with ``n`` and the generating ``slope``,
        ``intercept``, ``p25``, ``p75`` and residual ``sigma``.

    Notes
    -----
    A simulation (the real tract-level data were never public).  Tract sizes follow the
    public design of census tracts: the Census Bureau delineates tracts of 1,200 to 8,000
    residents, optimum 4,000, so a tract's population is drawn log-normal with median 4,000
    and log-sd 0.42 (5 % and 95 % quantiles ≈ 2,000 and 8,000, a right tail beyond), and 1 %
    of tracts are special land-use tracts (parks, airports, institutions) with 0–400
    residents.  The number of children in a tract is Poisson with mean ``NATION_CHILD_SHARE``
    × population (20.5 M children of the 1978–83 birth cohorts over 308.7 M residents):
    ~280 per tract on average, from 0 to ~1,500, and a few percent of tracts with fewer than
    30.  Within a tract, parent ranks, the tract's rank-rank line (slope around the national
    value 0.34, sd 0.10) and the child ranks follow the model of :func:`simulate_oa_state`.
    """
    truth, blocks = _nation_blocks(n_tracts, rng, decimals)
    total = int(truth["n"].sum())
    tract = np.empty(total, dtype=np.int32)
    x = np.empty(total)
    y = np.empty(total)
    at = 0
    for _, t, xb, yb in blocks:
        end = at + t.size
        tract[at:end], x[at:end], y[at:end] = t, xb, yb
        at = end
    points = pd.DataFrame({"tract": tract, "parent_rank": x, "child_rank": y}, copy=False)
    return points, truth


def write_nation(path: str | os.PathLike[str], n_tracts: int = NATION_TRACTS, *,
                 rng: Any = NATION_SEED, decimals: int | None = 4) -> pd.DataFrame:
    """Write :func:`simulate_nation`'s points as a directory of Parquet files (one file per
    block of 4,096 tracts, ~1.2 M rows each, row groups of ≤ 1 M rows; readable by
    ``pyarrow.dataset``, ``fit_by_group(path)`` and ``spark.read.parquet``) and return the
    truth table.  The same ``rng`` gives the same points as :func:`simulate_nation`; memory
    is one block at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    truth, blocks = _nation_blocks(n_tracts, rng, decimals)
    for b, t, xb, yb in blocks:
        tab = pa.table({"tract": t, "parent_rank": xb, "child_rank": yb})
        pq.write_table(tab, out / f"part-{b:05d}.parquet", row_group_size=1 << 20)
    return truth
