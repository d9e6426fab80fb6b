"""Per-group AdaSSP/BoostedAdaSSP tables: one ReleasePlan per table vs one per group.

Run: .venv/bin/python benchmarks/bench_table_plan.py [--groups G] [--rows R] [--repeat K]

``fit_by_group`` releases every AdaSSP/BoostedAdaSSP group from the table's one plan
(``MethodSpec.table_plan`` built from the public inputs, then ``release_group_line`` per group:
``backend="local"``); ``backend="reference"`` fits every group through ``fit_arrays`` and the
estimator, which validates, plans and maps back again for each group.  Both are timed in the
same run on the same table (default 2,000 groups, 40 rows each, seeded) and checked to give
the same table bit for bit; the ratio is reference / table plan (best of ``--repeat``).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from _timing import best_of, table

from dpreg.grouped import fit_by_group

BOUNDS = {"x": (0.0, 1.0), "y": (-1.0, 3.0)}
CASES = [("adassp", {}), ("boosted-adassp", {"n_rounds": 20})]


def groups_table(groups: int, rows: int, seed: int = 0) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    x = g.uniform(0.0, 1.0, groups * rows)
    return pd.DataFrame({"k": np.repeat(np.arange(groups), rows), "x": x,
                         "y": 0.5 + x + g.normal(0.0, 0.3, x.size)})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    df = groups_table(a.groups, a.rows)
    keys = list(range(a.groups))
    out = []
    for method, opts in CASES:
        kw = dict(method=method, epsilon=1.0, delta=1e-6, bounds=BOUNDS, groups=keys,
                  random_state=2**100 + 7, **opts)

        def run(backend: str, kw: dict = kw) -> pd.DataFrame:
            return fit_by_group(df, "k", "x", "y", backend=backend, **kw)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shared, ref = run("local"), run("reference")
            assert shared.attrs["backend"] == "local (one plan per table)"
            pd.testing.assert_frame_equal(shared, ref, check_exact=True)  # bit for bit
            t_shared = best_of(lambda: run("local"), repeat=a.repeat)
            t_ref = best_of(lambda: run("reference"), repeat=a.repeat)
        label = method + ("".join(f" {k}={v}" for k, v in opts.items()))
        out.append((label, a.groups, f"{t_ref:.3f}", f"{t_shared:.3f}",
                    f"{t_ref / t_shared:.2f}x"))
    print(f"{a.groups} groups x {a.rows} rows, epsilon=1, delta=1e-6, seeded; best of "
          f"{a.repeat}; tables identical bit for bit")
    print(table(out, ("method", "groups", "per-group plans (s)", "one plan (s)", "ratio")))


if __name__ == "__main__":
    main()
