"""One-pass sufficient-statistics releases (issue 19 item 3): time and peak memory against
numpy's Gram matrix of the same array, measured in the same run.

Run: .venv/bin/python benchmarks/bench_sscp_onepass.py [--n 10000000] [--d 10] [--repeat 2]
     [--parquet]   (also stream the same table from a Parquet file written to a temp dir)

For X (n×d float64) and y: the baselines are numpy's XᵀX and the augmented SSCP
[1, X, y]ᵀ[1, X, y] (what every method here must at least compute: np.column_stack + one
matrix product).  Then ``release_sscp`` on [X, y], ``CovarianceOLS().fit(X, y)`` and
``AdaSSP().fit(X, y)`` (secure mode: no seed).  Target: each within 2× the augmented
baseline's time and a peak of <= 1.3× the input (the input plus at most 0.3× of it in extra
allocations).  Peak memory is the tracemalloc peak of the allocations made during the call
(NumPy's buffers are traced), reported relative to the input size (X and y); times are the best
of ``--repeat`` runs after a warm-up on a small table.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
import warnings

import numpy as np
from _timing import table

from dpreg.covariance import release_sscp
from dpreg.linear_model import AdaSSP, CovarianceOLS


def measure(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--parquet", action="store_true")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    g = np.random.default_rng(0)
    n, d = a.n, a.d
    X = g.uniform(-1.1, 1.1, (n, d))
    y = X @ np.full(d, 0.5) + g.normal(0, 1, n)
    size = X.nbytes + y.nbytes
    cols = [f"x{j}" for j in range(d)] + ["y"]
    bounds = [(-1.0, 1.0)] * d + [(-10.0, 10.0)]

    from dpreg._source import ArraySource

    Xy = np.column_stack([X, y])  # release_sscp's array input: the released columns side by side
    size_sscp = Xy.nbytes

    def sscp():
        release_sscp(Xy, columns=cols, bounds=bounds, epsilon=1.0, delta=1e-6)
    runs = {
        "numpy XᵀX": lambda: X.T @ X,
        "numpy augmented [1,X,y]ᵀ[1,X,y]": lambda: (lambda D: D.T @ D)(
            np.column_stack([np.ones(n), X, y])),
        "release_sscp": sscp,
        "CovarianceOLS.fit": lambda: CovarianceOLS(epsilon=1.0, delta=1e-6, bounds_X=(-1, 1),
                                                   bounds_y=(-10, 10)).fit(X, y),
        "AdaSSP.fit": lambda: AdaSSP(epsilon=1.0, delta=1e-6, bounds_X=(-1, 1),
                                     bounds_y=(-10, 10)).fit(X, y),
    }
    tmp = None
    if a.parquet:
        import pyarrow as pa
        import pyarrow.parquet as pq

        import dpreg

        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "t.parquet")
        pq.write_table(pa.table({c: (X[:, j] if j < d else y) for j, c in enumerate(cols)}),
                       path, row_group_size=65_536)
        bmap = {c: b for c, b in zip(cols, bounds)}
        formula = "y ~ " + " + ".join(cols[:-1])
        runs["release_sscp(Parquet path)"] = lambda: release_sscp(
            path, columns=cols, bounds=bounds, epsilon=1.0, delta=1e-6)
        runs["regress(Parquet, adassp)"] = lambda: dpreg.regress(
            path, formula, method="adassp", epsilon=1.0, delta=1e-6, bounds=bmap)
    # warm-up (imports, BLAS threads) on a small table
    small = ArraySource([X[:1000], y[:1000]], cols)
    release_sscp(small, columns=cols, bounds=bounds, epsilon=1.0, delta=1e-6)
    rows = []
    base = None
    for name, fn in runs.items():
        t, peak = measure(fn, a.repeat)
        if name.startswith("numpy augmented"):
            base = t
        ref = size_sscp if name == "release_sscp" else size
        rows.append((name, f"{t:.3f}", "" if base is None else f"{t / base:.2f}",
                     f"{peak / ref:.3f}", f"{1 + peak / ref:.2f}"))
    print(f"n = {n:,}, d = {d}: input X and y = {size / 2**20:.0f} MiB; "
          f"{os.cpu_count()} CPUs")
    print(table(rows, ("computation", "best s", "× augmented", "extra peak / input",
                       "total peak / input")))
    if tmp:
        import shutil

        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
