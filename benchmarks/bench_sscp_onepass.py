"""One-pass sufficient-statistics releases (issues 19 item 3 and 32 item 8): time and peak
memory of every array, DataFrame and formula entry point against numpy's Gram matrix of the
same data, measured in the same run.

Run: .venv/bin/python benchmarks/bench_sscp_onepass.py [--n 1000000] [--d 10] [--repeat 2]
     [--parquet]   (also stream the same table from a Parquet file written to a temp dir)
     [--spark]     (with --parquet: the same releases from spark.read.parquet on a local[2]
                   session, whose start-up is timed once and printed apart)
     [--no-boosted]  (skip BoostedAdaSSP: 100 passes over the rows)

For X (n×d float64) and y: the baselines are numpy's XᵀX (no copy) and the augmented SSCP
[1, X, y]ᵀ[1, X, y] (what every method here must at least compute: np.column_stack + one
matrix product; the ratios are to its time).  Then, on the arrays: ``release_sscp`` on [X, y],
``CovarianceOLS().fit(X, y)``, ``AdaSSP().fit(X, y)``, ``BoostedAdaSSP().fit(X, y)``; on a
pandas DataFrame ``df`` of the columns x0..x{d-1}, y: ``release_sscp(df)``,
``dpreg.regress(df, "y ~ x0 + ...", method=...)`` for covariance-ols, adassp and
boosted-adassp, and the estimators on the frame (``fit(df[xs], df["y"])``, the selection made
once outside the timing).  All in secure mode (no seed).  Target: each single-pass entry within
2× the augmented baseline's time and a peak of <= 1.3× the input (the input plus at most 0.3×
of it in extra allocations); BoostedAdaSSP (T = 100 passes) has the memory target only.

Peak memory is the **tracemalloc** peak of the allocations made during the call (NumPy's and
pandas' buffers are traced; the input itself is allocated before and not counted), reported
as extra / input and as total (1 + extra) / input, the input being X and y (the frame's
columns for the DataFrame entries, which hold the same bytes).  Times are the best of
``--repeat`` runs after a warm-up on a small table, without tracemalloc.
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
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--parquet", action="store_true")
    ap.add_argument("--spark", action="store_true")
    ap.add_argument("--no-boosted", action="store_true")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    g = np.random.default_rng(0)
    n, d = a.n, a.d
    X = g.uniform(-1.1, 1.1, (n, d))
    y = X @ np.full(d, 0.5) + g.normal(0, 1, n)
    size = X.nbytes + y.nbytes
    cols = [f"x{j}" for j in range(d)] + ["y"]
    bounds = [(-1.0, 1.0)] * d + [(-10.0, 10.0)]
    bmap = {c: b for c, b in zip(cols, bounds)}
    formula = "y ~ " + " + ".join(cols[:-1])
    kw = dict(epsilon=1.0, delta=1e-6, bounds_X=(-1, 1), bounds_y=(-10, 10))

    import pandas as pd

    import dpreg
    from dpreg._source import ArraySource
    from dpreg.linear_model import BoostedAdaSSP

    Xy = np.column_stack([X, y])  # release_sscp's array input: the released columns side by side
    df = pd.DataFrame({c: Xy[:, j] for j, c in enumerate(cols)})  # one float64 block
    size_df = int(df.memory_usage(index=False).sum())
    Xdf, ys = df[cols[:-1]], df["y"]  # the estimators' frame input, selected once

    def reg(method):
        return lambda: dpreg.regress(df, formula, method=method, epsilon=1.0, delta=1e-6,
                                     bounds=bmap)

    # (name, function, input bytes, single pass?)
    runs = [
        ("numpy XᵀX (no copy)", lambda: X.T @ X, size, True),
        ("numpy augmented [1,X,y]ᵀ[1,X,y]", lambda: (lambda D: D.T @ D)(
            np.column_stack([np.ones(n), X, y])), size, True),
        ("release_sscp(array [X, y])", lambda: release_sscp(
            Xy, columns=cols, bounds=bounds, epsilon=1.0, delta=1e-6), Xy.nbytes, True),
        ("CovarianceOLS.fit(X, y)", lambda: CovarianceOLS(**kw).fit(X, y), size, True),
        ("AdaSSP.fit(X, y)", lambda: AdaSSP(**kw).fit(X, y), size, True),
        ("BoostedAdaSSP.fit(X, y)", lambda: BoostedAdaSSP(**kw).fit(X, y), size, False),
        ("release_sscp(df)", lambda: release_sscp(
            df, columns=cols, bounds=bmap, epsilon=1.0, delta=1e-6), size_df, True),
        ("regress(df, covariance-ols)", reg("covariance-ols"), size_df, True),
        ("regress(df, adassp)", reg("adassp"), size_df, True),
        ("regress(df, boosted-adassp)", reg("boosted-adassp"), size_df, False),
        ("CovarianceOLS.fit(df[xs], df.y)", lambda: CovarianceOLS(**kw).fit(Xdf, ys),
         size_df, True),
        ("AdaSSP.fit(df[xs], df.y)", lambda: AdaSSP(**kw).fit(Xdf, ys), size_df, True),
        ("BoostedAdaSSP.fit(df[xs], df.y)", lambda: BoostedAdaSSP(**kw).fit(Xdf, ys),
         size_df, False),
    ]
    if a.no_boosted:
        runs = [r for r in runs if "oosted" not in r[0]]
    tmp = None
    if a.parquet:
        import pyarrow as pa
        import pyarrow.parquet as pq

        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "t.parquet")
        pq.write_table(pa.table({c: (X[:, j] if j < d else y) for j, c in enumerate(cols)}),
                       path, row_group_size=65_536)
        runs.append(("release_sscp(Parquet path)", lambda: release_sscp(
            path, columns=cols, bounds=bounds, epsilon=1.0, delta=1e-6), size, True))
        runs.append(("regress(Parquet, adassp)", lambda: dpreg.regress(
            path, formula, method="adassp", epsilon=1.0, delta=1e-6, bounds=bmap), size, True))
        if a.spark:
            from dpreg.grouped.spark import spark_session

            t0 = time.perf_counter()
            session = spark_session()  # local[2] (or the active session)
            session.sparkContext.setLogLevel("ERROR")
            session.range(1).count()  # the JVM and a first job
            start_s = time.perf_counter() - t0
            print(f"Spark session start-up and a first job: {start_s:.1f} s", file=sys.stderr)
            sdf = session.read.parquet(path)
            release_sscp(sdf, columns=cols, bounds=bounds, epsilon=1.0, delta=1e-6)  # workers up
            runs.append(("release_sscp(Spark DataFrame)", lambda: release_sscp(
                sdf, columns=cols, bounds=bounds, epsilon=1.0, delta=1e-6), size, True))
            runs.append(("regress(Spark DataFrame, adassp)", lambda: dpreg.regress(
                sdf, formula, method="adassp", epsilon=1.0, delta=1e-6, bounds=bmap), size,
                True))
    # warm-up (imports, BLAS threads, formulaic) on a small table
    small = ArraySource([X[:1000], y[:1000]], cols)
    release_sscp(small, columns=cols, bounds=bounds, epsilon=1.0, delta=1e-6)
    dpreg.regress(df.iloc[:1000], formula, method="adassp", epsilon=1.0, delta=1e-6,
                  bounds=bmap)
    rows = []
    base = None
    for name, fn, ref, one_pass in runs:
        t, peak = measure(fn, a.repeat)
        if name.startswith("numpy augmented"):
            base = t
        ratio = "" if base is None else f"{t / base:.2f}"
        ok = "" if base is None or name.startswith("numpy") else (
            ("pass" if t <= 2 * base else "MISS") if one_pass else "(T passes)")
        mem_ok = "" if name.startswith("numpy") else (
            "pass" if 1 + peak / ref <= 1.3 else "MISS")
        rows.append((name, f"{t:.3f}", ratio, ok, f"{peak / ref:.3f}", f"{1 + peak / ref:.2f}",
                     mem_ok))
        print(f"  {name}: {t:.3f} s, extra peak {peak / ref:.3f}x", file=sys.stderr, flush=True)
    print(f"n = {n:,}, d = {d}: input X and y = {size / 2**20:.0f} MiB; "
          f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    print(table(rows, ("computation", "best s", "× augmented", "≤ 2×", "extra peak / input",
                       "total peak / input", "≤ 1.3×")))
    if a.spark and a.parquet:
        print(f"Spark local[2] session start-up and a first job (once, not in the table): "
              f"{start_s:.1f} s; Spark memory is the driver's only (executors are other "
              "processes)")
    if tmp:
        import shutil

        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
