"""SparkBackend: per-group releases on a Spark cluster (pyspark, the ``[spark]`` extra).

* ``noisy-stats`` and ``dp-intercept`` need only per-group sufficient statistics of the
  clipped data: ``count``, ``avg`` and the population (co)variances (``var_pop``,
  ``covar_pop``: nvar = n·var_pop, ncov = n·covar_pop), computed by **one native
  ``groupBy().agg``** on the executors.  The G-row table of statistics comes back to the
  driver, which adds the noise group by group from each key's own stream
  (:func:`dpreg.grouped.local.release_from_statistics`: the method's batched release, the same code
  as the LocalBackend).  The draws are identical to the LocalBackend's; the statistics differ
  only by the floating-point summation order of the aggregation (relative differences of
  order 1e-15 in the release).
* Every other simple method (Theil-Sen exp/wide/smooth, DP-GD) runs the functional core once
  per group with ``groupBy(key).applyInPandas`` on the executors, with the group's seeded
  stream derived from its key and the rows in their original order (a row index is attached
  before the shuffle): the releases are **bit-identical** to the LocalBackend's and the
  reference loop's.

Public keys, ⊥ rows for listed keys without rows, the parallel-composition statement and the
output columns are the same as for the other backends (:mod:`dpreg.grouped`).  Keys follow
the same canonical-key rule (:mod:`dpreg.grouped._keys`): the declared keys are checked against
the kind of the Spark key column (numeric, string or boolean), only keys a value of the
column's type can equal are sent to the filter (as that type: no cast can make ``2**53 + 1``
match the double ``2**53``), a float key column is normalised (``-0.0`` is ``0.0``), and each
aggregated key is mapped back to its declared key by :func:`~dpreg.grouped._keys.
canonical_key`.  Rows with a missing key, or a key not listed, are in no release; x and y are
checked only in the rows of declared groups.

Running on a cluster: pass ``spark=SparkSession`` built for the cluster (``.master("yarn")``,
``spark://host:7077`` or ``k8s://...``); dpreg and NumPy/pandas/pyarrow must be importable
by the executors' Python (install the wheel on the workers, or ship it with
``--py-files``/``spark.archives`` and set ``PYSPARK_PYTHON``).  Without ``spark=`` the active
session is used, or a ``local[2]`` session is started.  See docs/scale.md.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpreg import methods
from dpreg.exceptions import InvalidInputError
from dpreg.grouped._common import GroupSpec, Partition, group_generator, make_spec
from dpreg.grouped._keys import KeyProblem, canonical_key

__all__ = ["fit_spark", "spark_session", "HAVE_PYSPARK"]

try:  # the optional ``spark`` extra
    import pyspark  # noqa: F401

    HAVE_PYSPARK = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_PYSPARK = False

#: methods whose statistics come from one native aggregation (the method registry's
#: ``spark_native``)
NATIVE_METHODS = methods.names(spark_native=True)
_ROW = "__dpreg_row"


def spark_session(spark: Any = None) -> Any:
    """``spark`` itself, the active session, or a new offline ``local[2]`` session."""
    if not HAVE_PYSPARK:
        raise InvalidInputError("backend='spark' needs pyspark (pip install 'dpreg[spark]') and "
                                "a Java 17+ runtime")
    from pyspark.sql import SparkSession

    if spark is not None:
        if not isinstance(spark, SparkSession):
            raise InvalidInputError(f"spark must be a SparkSession; got {type(spark).__name__}")
        return spark
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    # executors must run the same interpreter (with NumPy, pandas and dpreg importable)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return (SparkSession.builder.master("local[2]").appName("dpreg-fit-groups")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate())


def _to_spark(df: Any, session: Any, by: str, x: str, y: str) -> Any:
    """A Spark DataFrame of (by, x, y, row index); pandas input keeps its row order."""
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import functions as F

    if isinstance(df, pd.DataFrame):
        for col in (by, x, y):
            if col not in df.columns:
                return df  # make_spec reports the missing column
        pdf = df[[by, x, y]].copy()
        pdf[_ROW] = np.arange(len(pdf), dtype=np.int64)
        return session.createDataFrame(pdf)
    if not isinstance(df, SparkFrame):
        raise InvalidInputError("df must be a pandas or a pyspark DataFrame for backend='spark'; "
                                f"got {type(df).__name__}")
    if _ROW in df.columns:
        return df
    return df.withColumn(_ROW, F.monotonically_increasing_id())


def _spark_key_kind(sdf: Any, by: str) -> str:
    """The kind of key the Spark key column holds (``"number"``, ``"bool"``, ``"str"``)."""
    from pyspark.sql import types as T

    dt = sdf.schema[by].dataType
    if isinstance(dt, (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType,
                       T.DoubleType)):
        return "number"
    if isinstance(dt, T.BooleanType):
        return "bool"
    if isinstance(dt, T.StringType):
        return "str"
    raise InvalidInputError(
        f"group key column {by!r} has Spark type {dt.simpleString()}; keys must be integers, "
        "floats, booleans or strings (cast the column, and list the keys the same way)")


_INT_RANGE = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}


def _filter_literals(sdf: Any, by: str, keys: list[Any]) -> list[Any]:
    """The declared keys a value of the key column's type can equal, as that type's Python
    value (ints for integer columns, exact floats for float columns)."""
    dt = sdf.schema[by].dataType.simpleString()
    if dt in _INT_RANGE:
        lim = 2 ** (_INT_RANGE[dt] - 1)
        return [k for k in keys if isinstance(k, int) and -lim <= k < lim]
    if dt in ("float", "double"):
        out = []
        for k in keys:
            try:
                f = float(k)
            except OverflowError:
                continue
            if f == k and (dt == "double" or float(np.float32(f)) == f):
                out.append(f)
        return out
    return list(keys)


def _key_column(sdf: Any, by: str) -> Any:
    """The key column with float keys normalised (-0.0 + 0.0 = 0.0: one group, as locally)."""
    from pyspark.sql import functions as F

    if sdf.schema[by].dataType.simpleString() in ("float", "double"):
        return F.col(by) + F.lit(0.0).cast(sdf.schema[by].dataType)
    return F.col(by)


def _as_double(col: str) -> Any:
    """``col`` as a double, NULL where a text value is not a number (``try_cast``: with ANSI
    mode a plain cast raises on a bad value, possibly in a row of an undeclared group that the
    optimiser had not filtered out yet)."""
    from pyspark.sql import functions as F

    return F.expr("try_cast(`" + col.replace("`", "``") + "` AS DOUBLE)")


def _nonfinite_or_text(sdf: Any, col: str) -> str | None:
    """The kind of problem of ``col`` in these rows: "non-numeric", "missing or non-finite" or
    None (only the rows of declared groups are passed in)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    dt = sdf.schema[col].dataType
    num = _as_double(col)
    if not isinstance(dt, T.NumericType | T.BooleanType):
        if sdf.filter(F.col(col).isNotNull() & num.isNull()).limit(1).count():
            return "non-numeric"
    bad = num.isNull() | F.isnan(num) | (F.abs(num) == float("inf"))
    return "missing or non-finite" if sdf.filter(bad).limit(1).count() else None


#: key lists longer than this are matched with a broadcast join instead of ``isin``
ISIN_MAX_KEYS = 1000


def _listed_rows(sdf: Any, by: str, keys: list[Any], session: Any) -> Any:
    """The rows whose (normalised) key is one of the declared keys; the key column is
    replaced by its normalised value."""
    from pyspark.sql import functions as F

    literals = _filter_literals(sdf, by, keys)
    sdf = sdf.withColumn(by, _key_column(sdf, by))
    if not literals:
        return sdf.limit(0)
    if len(literals) <= ISIN_MAX_KEYS:
        return sdf.filter(F.col(by).isin(literals))
    kdf = session.createDataFrame(pd.DataFrame({"__dpreg_key": pd.Series(literals,
                                                                          dtype=object)}))
    kdf = kdf.select(F.col("__dpreg_key").cast(sdf.schema[by].dataType).alias("__dpreg_key"))
    joined = sdf.join(F.broadcast(kdf), sdf[by] == kdf["__dpreg_key"], "inner")
    return joined.drop("__dpreg_key")


def _distinct_keys(sdf: Any, by: str) -> list[Any]:
    """``groups='from-data'``: the canonical keys found in the column, sorted."""
    found = set()
    for r in sdf.select(_key_column(sdf, by).alias("k")).distinct().collect():
        try:
            found.add(canonical_key(r[0]))
        except KeyProblem:  # a missing key is no group
            continue
    return sorted(v for _, v in found)


def _positions(spec: GroupSpec, values: Any) -> list[int]:
    """The declared key of each aggregated key value (canonical-key rule); each declared key
    is hit at most once (else two output rows would share records)."""
    position = {(spec.key_kind, k): i for i, k in enumerate(spec.keys)}
    out = [position[canonical_key(v)] for v in values]
    if len(set(out)) != len(out):  # pragma: no cover - the filter and the rule prevent it
        raise RuntimeError("internal error: two Spark groups map to one declared key; nothing "
                           "was released")
    return out


def fit_spark(df: Any, by: str, x: str, y: str, *, method: str, epsilon: float,
              bounds: Mapping[str, Any], delta: float | None, groups: Sequence[Any] | None,
              random_state: Any, spark: Any, options: dict[str, Any],
              before_release: Callable[[GroupSpec, np.ndarray], None] | None = None
              ) -> pd.DataFrame:
    """``fit_by_group(..., backend="spark")`` (see the module doc).  ``before_release(spec,
    counts)`` runs after validation and before any group is released (the front end charges
    the ledger there)."""
    from dpreg.grouped import local

    session = spark_session(spark)
    sdf = _to_spark(df, session, by, x, y)
    spec = make_spec(sdf.columns, lambda: _distinct_keys(sdf, by), by, x, y, method=method,
                     epsilon=epsilon, bounds=bounds, delta=delta, groups=groups,
                     random_state=random_state, options=options,
                     key_kind=lambda: _spark_key_kind(sdf, by))
    with_ci = "ci_alpha" in spec.options
    base_spec = spec if not with_ci else GroupSpec(**{
        **spec.__dict__, "options": {k: v for k, v in spec.options.items() if k != "ci_alpha"}})
    if not local.supported(base_spec):
        raise InvalidInputError(
            f"backend='spark' runs the simple methods {sorted(local.LOCAL_METHODS)} with options "
            f"{ {m: list(o) for m, o in local.LOCAL_METHODS.items()} }; got method={method!r}, "
            f"options={sorted(options)}")
    from pyspark.sql import functions as F

    listed = _listed_rows(sdf, by, spec.keys, session)
    for col in (x, y):  # only rows of declared groups are read
        problem = _nonfinite_or_text(listed, col)
        if problem == "non-numeric":
            raise InvalidInputError(
                f"column {col!r} holds a non-numeric value in a row of a declared group; "
                "convert or drop such rows first")
        if problem:
            raise InvalidInputError(
                f"column {col!r} has a missing or non-finite value (NaN or inf) in a row of a "
                "declared group; drop or impute such rows first")
    clipped = listed.select(
        F.col(by).alias("k"),
        F.least(F.greatest(_as_double(x), F.lit(spec.x_bounds[0])),
                F.lit(spec.x_bounds[1])).alias("xc"),
        F.least(F.greatest(_as_double(y), F.lit(spec.y_bounds[0])),
                F.lit(spec.y_bounds[1])).alias("yc"),
        _as_double(x).alias("x"), _as_double(y).alias("y"),
        F.col(_ROW).alias("row"))
    stats = clipped.groupBy("k").agg(
        F.count(F.lit(1)).alias("n"), F.avg("xc").alias("xbar"), F.avg("yc").alias("ybar"),
        F.var_pop("xc").alias("vx"), F.covar_pop("xc", "yc").alias("cxy")).toPandas()
    # aggregated keys -> declared keys by the canonical-key rule (3.0 in a double column is 3)
    pos = _positions(spec, stats["k"])
    counts = np.zeros(len(spec.keys), dtype=np.int64)
    for p, n in zip(pos, stats["n"]):
        counts[p] = int(n)
    if before_release is not None:
        before_release(spec, counts)
    if with_ci:  # the reference loop's per-group fit, on the executors
        table = _release_groups(spec, counts, clipped)
        table.attrs["backend"] = "spark"
        return table
    part = Partition(np.zeros(0), np.zeros(0),
                     np.concatenate(([0], np.cumsum(counts))).astype(np.int64))
    out = local._Frame(spec, part)
    idx = out.active
    if idx.size:
        if spec.method in NATIVE_METHODS:
            _release_native(spec, out, idx, stats, pos)
        else:
            _release_apply(spec, out, idx, clipped)
    table = out.table(spec)
    table.attrs["backend"] = "spark"
    return table


def _release_native(spec: GroupSpec, out: Any, idx: np.ndarray, stats: pd.DataFrame,
                    pos: list[int]) -> None:
    from dpreg.grouped import local
    from dpreg.simple import LineStatistics

    row_of = {p: j for j, p in enumerate(pos)}
    take = np.array([row_of[int(k)] for k in idx], dtype=np.int64)
    n = stats["n"].to_numpy(np.int64)[take]
    xbar = stats["xbar"].to_numpy(np.float64)[take]
    ybar = stats["ybar"].to_numpy(np.float64)[take]
    nvar = n * stats["vx"].to_numpy(np.float64)[take]
    ncov = n * stats["cxy"].to_numpy(np.float64)[take]
    local.release_from_statistics(spec, out, idx, LineStatistics(n, xbar, ybar, nvar, ncov))


def _release_groups(spec: GroupSpec, counts: np.ndarray, clipped: Any) -> pd.DataFrame:
    """``ci_alpha``: every group's row from :func:`dpreg.grouped.reference.fit_group` (the
    reference loop's per-group fit, interval columns included) run on the executors with
    ``applyInPandas`` on the group's rows in their original order and the key's own stream;
    the rows come back as JSON and the driver assembles the table as the reference loop does
    (⊥ rows for empty and too-small groups are written on the driver: n is public)."""
    import json

    from pyspark.sql.types import StringType, StructField, StructType

    from dpreg.grouped.reference import fit_group, group_options, table_from_rows

    options = group_options(spec)
    active = {(spec.key_kind, spec.keys[k]): spec.keys[k] for k in range(len(spec.keys))
              if counts[k] >= max(spec.min_rows, 1)}
    ktype = clipped.schema["k"].dataType

    def fit_one(pdf: pd.DataFrame) -> pd.DataFrame:
        key = active.get(canonical_key(pdf["k"].iloc[0]))
        if key is None:  # too small: the driver writes the ⊥ row
            return pd.DataFrame({"k": [pdf["k"].iloc[0]], "row": ["null"]})
        pdf = pdf.sort_values("row", kind="stable")
        got = fit_group(spec, options, key, pdf["x"].to_numpy(np.float64),
                        pdf["y"].to_numpy(np.float64))
        got.pop("group")
        return pd.DataFrame({"k": [pdf["k"].iloc[0]], "row": [json.dumps(got)]})

    schema = StructType([StructField("k", ktype), StructField("row", StringType())])
    res = clipped.select("k", "x", "y", "row").groupBy("k").applyInPandas(fit_one, schema)
    got = res.toPandas()
    by_pos = dict(zip(_positions(spec, got["k"]), got["row"]))
    rows: list[dict[str, Any]] = []
    for k, key in enumerate(spec.keys):
        row = json.loads(by_pos[k]) if k in by_pos else None
        if row is None:  # no rows, or fewer than the method needs
            row = fit_group(spec, options, key, np.zeros(int(counts[k])),
                            np.zeros(int(counts[k]))) if counts[k] < max(spec.min_rows, 1) \
                else None
        if row is None:  # pragma: no cover - every active group returns its row
            raise RuntimeError("internal error: a group's release did not come back")
        rows.append({"group": key, **row})
    return table_from_rows(spec, rows)


def _release_apply(spec: GroupSpec, out: Any, idx: np.ndarray, clipped: Any) -> None:
    """The functional core per group on the executors (``applyInPandas``)."""
    from pyspark.sql.types import (
        BooleanType,
        DoubleType,
        StringType,
        StructField,
        StructType,
    )

    from dpreg.grouped import local

    call = local._group_release(spec, validated=False)
    # validate the method options on the driver, on public dummy data of the smallest active
    # group size (n is public), so a bad option is an InvalidInputError here rather than an
    # executor failure; nothing private is read and the dummy release is discarded
    m = int(np.min(out.n[idx]))
    call(np.linspace(*spec.x_bounds, m), np.linspace(*spec.y_bounds, m), np.random.default_rng(0))
    # the listed key object of each active group: its stream is derived from the key as the
    # user listed it (also when Spark returns it as another type, e.g. 3.0 for 3)
    active = {(spec.key_kind, spec.keys[int(k)]): spec.keys[int(k)] for k in idx}
    ktype = clipped.schema["k"].dataType

    def fit_one(pdf: pd.DataFrame) -> pd.DataFrame:
        key = active.get(canonical_key(pdf["k"].iloc[0]))
        base = {"k": [pdf["k"].iloc[0]], "failed": [True], "reason": [""],
                "slope": [math.nan], "intercept": [math.nan], "xe0": [math.nan],
                "p0": [math.nan], "xe1": [math.nan], "p1": [math.nan]}
        if key is None:  # too small: the driver writes the ⊥ row
            return pd.DataFrame(base)
        pdf = pdf.sort_values("row", kind="stable")
        res = call(pdf["x"].to_numpy(np.float64), pdf["y"].to_numpy(np.float64),
                   group_generator(spec, key))
        if res.failed:
            base["reason"] = [str(res.reason)]
            return pd.DataFrame(base)
        base.update(failed=[False], slope=[float(res.released_slope)],
                    intercept=[float(res.released_intercept)])
        for j, (xv, pv) in enumerate(list(res.predictions.items())[:2]):
            base[f"xe{j}"] = [float(xv)]
            base[f"p{j}"] = [float(pv)]
        return pd.DataFrame(base)

    schema = StructType([StructField("k", ktype), StructField("failed", BooleanType()),
                         StructField("reason", StringType()),
                         *[StructField(c, DoubleType()) for c in
                           ("slope", "intercept", "xe0", "p0", "xe1", "p1")]])
    res = clipped.select("k", "x", "y", "row").groupBy("k").applyInPandas(fit_one, schema)
    got = res.toPandas()
    by_pos = dict(zip(_positions(spec, got["k"]), got.itertuples()))
    rows = [by_pos[int(k)] for k in idx]
    ok = np.array([not r.failed for r in rows], dtype=bool)
    preds: dict[float, np.ndarray] = {}
    for j, r in enumerate(rows):
        if not r.failed:
            for xe, pv in ((r.xe0, r.p0), (r.xe1, r.p1)):
                if not math.isnan(xe):
                    preds.setdefault(float(xe), np.full(idx.size, np.nan))[j] = float(pv)
    out.set_line(idx, np.array([r.slope for r in rows]), np.array([r.intercept for r in rows]),
                 preds, ok, [str(r.reason) if r.failed else "" for r in rows])
