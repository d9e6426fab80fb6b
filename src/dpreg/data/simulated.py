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

from typing import Any

import numpy as np
import pandas as pd

from dpreg._validation import check_int, check_rng

__all__ = ["simulate_oa_state", "OA_SEED", "OA_TRACTS"]

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
    center = g.beta(2.0, 2.0, size=n_tracts)
    spread = g.uniform(0.15, 0.75, size=n_tracts)
    slope = g.normal(0.34, 0.10, size=n_tracts)
    p25 = g.normal(0.42, 0.06, size=n_tracts)
    intercept = p25 - 0.25 * slope
    sigma = g.uniform(0.22, 0.30, size=n_tracts)

    tract = np.repeat(np.arange(n_tracts), sizes)
    x = center[tract] * np.exp(spread[tract] * g.standard_normal(tract.size)
                               - spread[tract] ** 2 / 2)
    x = np.clip(x, 0.0, 1.0)
    y = intercept[tract] + slope[tract] * x + sigma[tract] * g.standard_normal(tract.size)
    y = np.clip(y, 0.0, 1.0)
    if decimals is not None:
        x, y = np.round(x, decimals), np.round(y, decimals)
    ids = np.array([f"T{t:04d}" for t in range(n_tracts)])
    points = pd.DataFrame({"tract": ids[tract], "parent_rank": x, "child_rank": y})
    truth = pd.DataFrame({"tract": ids, "n": sizes, "slope": slope, "intercept": intercept,
                          "p25": p25, "p75": intercept + 0.75 * slope, "sigma": sigma})
    return points, truth
