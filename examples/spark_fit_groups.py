"""Per-tract DP lines on a Spark cluster: a driver script for ``spark-submit``.

The executors read the Parquet data themselves (nothing passes through the driver); each
tract's statistics are aggregated natively (noisy-stats, dp-intercept) or fitted per group
(``applyInPandas``: dp-gd, Theil-Sen), and the driver adds the noise -- in secure mode (no
seed): a real release.  docs/scale.md, "Running on a cluster".

    spark-submit --master yarn --py-files dpreg-<version>-py3-none-any.whl \\
        --conf spark.sql.execution.arrow.pyspark.enabled=true \\
        examples/spark_fit_groups.py hdfs:///nation/points releases.csv \\
        --tracts 73057 --method noisy-stats --epsilon 1

The public key list is 0 .. TRACTS - 1 (``--keys-file FILE``: one key per line instead).
The last line printed says where the executors imported dpreg from (the shipped wheel).
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data", help="Parquet file or folder (columns tract, parent_rank, child_rank)")
    p.add_argument("out", help="CSV file for the per-tract releases (written on the driver)")
    p.add_argument("--tracts", type=int, help="public keys 0 .. TRACTS - 1")
    p.add_argument("--keys-file", help="public keys, one integer per line")
    p.add_argument("--method", default="noisy-stats")
    p.add_argument("--epsilon", type=float, default=1.0)
    args = p.parse_args()

    from pyspark.sql import SparkSession

    import dpreg

    spark = SparkSession.builder.appName("dpreg per-tract lines").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if args.keys_file:
        with open(args.keys_file, encoding="utf-8") as fh:
            keys = dpreg.grouped.parse_key_list(fh.read().splitlines(), [0])
    elif args.tracts:
        keys = list(range(args.tracts))
    else:
        p.error("give --tracts or --keys-file (the public list of tracts)")
    t0 = time.perf_counter()
    table = dpreg.fit_by_group(
        args.data, "tract", "parent_rank", "child_rank", method=args.method,
        epsilon=args.epsilon, bounds={"parent_rank": (0.0, 1.0), "child_rank": (0.0, 1.0)},
        groups=keys, backend="spark", spark=spark)  # no random_state: secure mode
    seconds = time.perf_counter() - t0
    table.to_csv(args.out, index=False)
    print(table.attrs["privacy"])
    print(f"{len(table):,} tracts ({int((~table['failed']).sum()):,} released) in "
          f"{seconds:.1f} s -> {args.out}")
    origin = (spark.sparkContext.parallelize([0], 1)
              .map(lambda _: __import__("dpreg").__file__).first())
    print(f"executors import dpreg from {origin}")
    spark.stop()


if __name__ == "__main__":
    main()
