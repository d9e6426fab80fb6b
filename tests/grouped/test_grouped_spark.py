"""SparkBackend == LocalBackend for the same seeds (local[2] session).

Runs when pyspark and a Java runtime are installed (``pip install 'dpreg[spark]'``, Java 17+);
skipped with the reason otherwise.  The ``spark`` fixture (tests/conftest.py) is one session
per test session.
"""

import numpy as np
import pandas as pd
import pytest

from dpreg import InvalidInputError, fit_by_group

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark"),
              pytest.mark.filterwarnings("ignore:PySpark does not yet fully support"),
              pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")]

BOUNDS = {"x": (0.0, 1.0), "y": (0.0, 1.0)}


def table(seed=0):
    g = np.random.default_rng(seed)
    n = g.choice([0, 1, 2, 25, 70], 16)
    keys = np.repeat(np.arange(16), n)
    x = g.uniform(-0.1, 1.1, keys.size)
    y = 0.2 + 0.5 * x + g.normal(0, 0.2, keys.size)
    return pd.DataFrame({"k": keys, "x": x, "y": y}).sample(frac=1, random_state=seed)


@pytest.mark.slow  # ~60 s on 2 shared cores; make test keeps test_spark_keys_follow_the_rule as
# its one Spark smoke test (tests/scale/test_sources_spark.py is slow too)
def test_spark_backend(spark, monkeypatch):
    """One test (one Spark session per xdist worker): equality with the local backend for
    native-aggregation and applyInPandas methods, Spark DataFrame input, key handling."""
    df = table()
    for method, opts in [("noisy-stats", {}), ("dp-intercept", {}),
                         ("theil-sen-exp", {"pairs": 1})]:
        kw = dict(method=method, epsilon=1.5, bounds=BOUNDS, groups=list(range(18)),
                  random_state=4, **opts)
        loc = fit_by_group(df, "k", "x", "y", **kw)
        spk = fit_by_group(df, "k", "x", "y", backend="spark", spark=spark, **kw)
        assert spk.attrs["backend"] == "spark"
        assert spk.attrs["privacy"] == loc.attrs["privacy"]
        if method in ("noisy-stats", "dp-intercept"):
            # native aggregations: the same draws, statistics summed in Spark's order
            pd.testing.assert_frame_equal(spk, loc, check_exact=False, rtol=1e-9, atol=1e-12)
        else:  # the core per group on the executors, rows in original order: bit-identical
            pd.testing.assert_frame_equal(spk, loc)
        assert spk.set_index("group").loc[17, "reason"] == "no rows in this group"

    # a float key column with the public keys listed as ints (matched by value, streams
    # derived from the listed keys), and the broadcast-join path for long key lists
    import dpreg.grouped.spark as gs

    monkeypatch.setattr(gs, "ISIN_MAX_KEYS", 0)
    fl = df.astype({"k": float})
    kw = dict(method="theil-sen-exp", epsilon=1.0, bounds=BOUNDS, groups=list(range(18)),
              random_state=6, pairs=1)
    pd.testing.assert_frame_equal(fit_by_group(fl, "k", "x", "y", backend="spark", **kw),
                                  fit_by_group(fl, "k", "x", "y", **kw))

    df = table(seed=1)
    sdf = spark.createDataFrame(df.astype({"k": float}))
    out = fit_by_group(sdf, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                       backend="spark", random_state=0, groups="from-data")
    assert list(out["group"]) == sorted(set(df["k"]))  # read from the data, sorted
    assert "NOT protected" in out.attrs["privacy"]
    with pytest.raises(InvalidInputError, match="groups is required"):
        fit_by_group(sdf, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                     backend="spark")
    # a row with a missing key, or a bad value in an undeclared group, is never read
    bad = df.astype({"k": float, "x": object})
    bad.iloc[0, 0] = np.nan
    k1 = bad["k"].iloc[1]
    bad.loc[bad.index[1], "x"] = "abc"
    listed = [k for k in range(16) if k != k1]
    clean = df.astype({"k": float})[lambda d: d["k"] != k1].iloc[1:]
    kw = dict(method="noisy-stats", epsilon=1, bounds=BOUNDS, backend="spark", spark=spark,
              random_state=2, groups=listed)
    got = fit_by_group(spark.createDataFrame(bad.astype({"x": str})), "k", "x", "y", **kw)
    pd.testing.assert_frame_equal(got, fit_by_group(clean, "k", "x", "y", **kw),
                                  check_exact=False, rtol=1e-9, atol=1e-12)
    with pytest.raises(InvalidInputError, match="column 'x'.*non-numeric"):
        fit_by_group(spark.createDataFrame(bad.astype({"x": str})), "k", "x", "y",
                     **{**kw, "groups": list(range(16))})
    with pytest.raises(InvalidInputError, match="backend='spark' runs the simple methods"):
        fit_by_group(df, "k", "x", "y", method="adassp", epsilon=1, delta=1e-6,
                     bounds=BOUNDS, backend="spark", spark=spark, groups=[1])


def test_spark_keys_follow_the_rule(spark):
    """``make test``'s one Spark smoke test (the JVM, applyInPandas on the executors, equality
    with the local backend); the other Spark tests are ``slow``.  Issue 15 item 1 on Spark:
    keys that are one group are refused before anything runs;
    -0.0 and 0.0 rows are one group; 2**53 + 1 does not match the double 2**53; the streams
    are the local backend's (one rule, one stream per canonical key)."""
    g = np.random.default_rng(3)
    keys = np.repeat([0.0, -0.0, 1.0, 1.0000000000000002, 2.0 ** 53], [6, 6, 8, 7, 9])
    df = pd.DataFrame({"k": keys, "x": g.uniform(0, 1, keys.size),
                       "y": g.uniform(0, 1, keys.size)})
    for groups in ([1, 1.0], [1, True], ["1", 1], [1, np.nan], [0, -0.0], [1, None]):
        with pytest.raises(InvalidInputError, match="groups"):
            fit_by_group(df, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                         backend="spark", spark=spark, groups=groups, random_state=0)
    listed = [0, 1, 1.0000000000000002, 2 ** 53 + 1, 2 ** 53, 5]
    for method, opts in (("noisy-stats", {}), ("theil-sen-exp", {"pairs": 1})):
        kw = dict(method=method, epsilon=1.0, bounds=BOUNDS, groups=listed, random_state=8,
                  **opts)
        spk = fit_by_group(df, "k", "x", "y", backend="spark", spark=spark, **kw)
        loc = fit_by_group(df, "k", "x", "y", **kw)
        assert list(spk["n"]) == [12, 8, 7, 0, 9, 0]
        pd.testing.assert_frame_equal(spk, loc, check_exact=False, rtol=1e-9, atol=1e-12)
    sdf = spark.createDataFrame(pd.DataFrame({"k": ["a", " a", "a"], "x": [0.1, 0.2, 0.3],
                                              "y": [0.1, 0.2, 0.3]}))
    with pytest.raises(InvalidInputError, match="holds str values"):
        fit_by_group(sdf, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                     backend="spark", spark=spark, groups=[1])
    out = fit_by_group(sdf, "k", "x", "y", method="noisy-stats", epsilon=1, bounds=BOUNDS,
                       backend="spark", spark=spark, groups=["a", " a"], random_state=0)
    assert list(out["n"]) == [2, 1]
