"""Tabular data sources read in chunks: the one reading front end of the sufficient-statistics
releases (:func:`dpreg.covariance.release_sscp`, ``dpreg.regress(..., method="adassp" |
"covariance-ols" | "noisy-stats")``) and of ``fit_by_group`` from a file.

A source is one of

* in memory: a 2-D array, or a list of 1-D column arrays (:class:`ArraySource`);
* a Parquet or CSV file, or a directory of them (:class:`FileSource`): streamed with
  ``pyarrow.dataset`` in batches of :data:`CHUNK_ROWS` rows, one batch at a time and without
  read-ahead, so memory is bounded by the batch, not the file;
* a Spark DataFrame (:class:`SparkSource`): each executor runs the same chunk function on the
  Arrow batches of its partitions (``mapInArrow``) and returns one partial statistic per
  partition; only these small partials (d×d) reach the driver, which sums them.

Every source offers one operation, :meth:`DataSource.reduce`: Σ over chunks of ``stat(chunk)``,
``chunk`` an (m, k) float64 array of the requested columns.  The statistics are sums over
records (a Gram matrix of clipped rows, counts), so the result does not depend on how the rows
are chunked except for the floating-point summation order.  The chunk functions -- clipping to
PUBLIC bounds and accumulating -- live with their release (covariance, multivariate); the noise
is added afterwards on the driver by the same release function as for in-memory data.

Layering: this module sits at the bottom (next to :mod:`dpreg._validation`; it imports nothing
of dpreg's mathematics), so every layer that releases statistics -- covariance, the estimators,
the API, the per-group front end -- can read through it.  pyarrow and pyspark are imported only
when a file or Spark source is used (the ``[spark]`` extra).

Errors: a missing file, an unreadable format, a missing column or a value that is missing,
non-numeric or non-finite is an :class:`~dpreg.exceptions.InvalidInputError` naming the file
and the column, never a value or a row count (reader messages, which can quote cells, are not
passed on).

Two rules every file entry point shares (the library's and the CLI's readers call them):

* **A CSV must start with a header line** (:func:`csv_header`): without one, the first record
  would become the column names, and column names are shown (unknown-column errors and their
  did-you-mean suggestions, codebook templates).  A first line with a name that is empty or
  reads as a number, a missing-value marker or true/false (:func:`looks_like_a_value`) is
  refused before anything else is done with the file, by a message that quotes nothing of it.
  Parquet column names come from the schema, never from a data row: the rule is for CSV only.
* **A column used as numbers is numbers in every file** (:func:`numeric_problem`): integers,
  floats, decimals and booleans (0/1) are read as float64; text, dates/times, categorical
  (dictionary-encoded) and nested columns are refused naming the column and its type.  In a
  directory each part file's own type counts (the first file's schema does not stand for the
  rest: a part holding the column as text is refused, not cast to numbers).
"""

from __future__ import annotations

import io
import os
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpreg.exceptions import InvalidInputError

__all__ = ["DataSource", "ArraySource", "FileSource", "SparkSource", "open_source",
           "is_external", "is_spark_frame", "CHUNK_ROWS", "csv_header", "check_csv_headers",
           "looks_like_a_value", "header_looks_like_data", "numeric_problem"]

#: rows per chunk: ~5 MB for 10 float64 columns -- small against any table worth streaming,
#: large enough that the Gram product of a chunk keeps BLAS (and its threads) efficient
#: (measured: 8,192-row chunks were ~1.6x slower than 65,536 at n = 2e6, d = 11)
CHUNK_ROWS = 65536
#: rows per batch read from a file (each batch is then cut into CHUNK_ROWS chunks)
FILE_BATCH_ROWS = 65536

Stat = Callable[[np.ndarray], np.ndarray]


def _bad_values(columns: Sequence[str], bad: np.ndarray, where: str) -> InvalidInputError:
    cols = [c for c, b in zip(columns, bad) if b]
    return InvalidInputError(
        f"{where} column(s) {cols} hold a missing, non-numeric or non-finite value (NaN or inf); "
        "drop or impute such rows first")


class DataSource:
    """Columns of a table read chunk by chunk (see the module doc)."""

    kind = "memory"
    columns: list[str]
    where = "data"

    def check_columns(self, columns: Sequence[str]) -> list[str]:
        cols = [str(c) for c in columns]
        missing = [c for c in cols if c not in self.columns]
        if missing:
            raise InvalidInputError(f"columns not found in {self.where}: {missing}; it has "
                                    f"{self.columns}")
        return cols

    def reduce(self, columns: Sequence[str], stat: Stat) -> np.ndarray:
        """Σ over chunks of ``stat(chunk)`` (``chunk``: (m, len(columns)) float64, finite);
        an :class:`InvalidInputError` when a value of these columns is not a finite number.
        The sum of no chunk (an empty table) is ``stat`` of an empty chunk."""
        cols = self.check_columns(columns)
        total: np.ndarray | None = None
        bad = np.zeros(len(cols), dtype=bool)
        for chunk in self._chunks(cols):
            fin = np.isfinite(chunk)
            if not fin.all():
                bad |= ~fin.all(axis=0)
                continue
            part = stat(chunk)
            total = part if total is None else total + part
        if bad.any():
            raise _bad_values(cols, bad, self.where)
        if total is None:
            total = stat(np.zeros((0, len(cols))))
        return np.asarray(total, dtype=float)

    def _chunks(self, columns: list[str]) -> Iterator[np.ndarray]:  # pragma: no cover
        """The chunks of ``columns`` read in this process (sources computed elsewhere, like
        Spark, override :meth:`reduce` instead)."""
        raise TypeError(f"{type(self).__name__} reads no chunks in this process")

    def select(self, columns: Sequence[str], names: Sequence[str]) -> DataSource:
        """A view of ``columns`` under new ``names`` (e.g. formula-safe release names)."""
        return _Selected(self, self.check_columns(columns), [str(n) for n in names])


class _Selected(DataSource):
    def __init__(self, base: DataSource, columns: list[str], names: list[str]) -> None:
        self.base = base
        self.kind = base.kind
        self.where = base.where
        self._map = dict(zip(names, columns))
        self.columns = names

    def reduce(self, columns: Sequence[str], stat: Stat) -> np.ndarray:
        cols = self.check_columns(columns)
        return self.base.reduce([self._map[c] for c in cols], stat)


class ArraySource(DataSource):
    """In-memory columns: a 2-D float array, or a sequence of 1-D/2-D arrays side by side
    (``names`` for all their columns).  Chunks are row slices (views of a 2-D array when all
    its columns are requested in order), so nothing of the size of the data is copied."""

    def __init__(self, data: np.ndarray | Sequence[np.ndarray], names: Sequence[str],
                 *, chunk_rows: int = CHUNK_ROWS, validated: bool = False) -> None:
        #: True when the caller has checked every value (finite numbers): no per-chunk check
        self.validated = bool(validated)
        self.columns = [str(c) for c in names]
        blocks = [data] if isinstance(data, np.ndarray) else list(data)
        self._blocks = [b if b.ndim == 2 else b.reshape(-1, 1)
                        for b in (np.asarray(a) for a in blocks)]
        self.n_rows = self._blocks[0].shape[0] if self._blocks else 0
        if sum(b.shape[1] for b in self._blocks) != len(self.columns):
            raise InvalidInputError("names must name every column of the data")
        self.chunk_rows = int(chunk_rows)

    def _chunks(self, columns: list[str]) -> Iterator[np.ndarray]:
        idx = [self.columns.index(c) for c in columns]
        step = self.chunk_rows
        whole = idx == list(range(len(self.columns)))
        for i in range(0, self.n_rows, step):
            parts = [b[i:i + step] for b in self._blocks]
            block = parts[0] if len(parts) == 1 else np.hstack(parts)
            yield block if whole else block[:, idx]

    def reduce(self, columns: Sequence[str], stat: Stat, *, checked: bool = False
               ) -> np.ndarray:
        """As :meth:`DataSource.reduce`; ``checked=True`` skips the finiteness check of each
        chunk (the caller has validated the whole array already)."""
        if not (checked or self.validated):
            return super().reduce(columns, stat)
        cols = self.check_columns(columns)
        total: np.ndarray | None = None
        by_blocks = getattr(stat, "blocks", None)
        if by_blocks is not None and cols == self.columns and len(self._blocks) > 1:
            # the chunk function reads the blocks side by side itself: no stacked copy
            step = self.chunk_rows
            for i in range(0, self.n_rows, step):
                part = by_blocks([b[i:i + step] for b in self._blocks])
                total = part if total is None else total + part
        else:
            for chunk in self._chunks(cols):
                part = stat(chunk)
                total = part if total is None else total + part
        if total is None:
            total = stat(np.zeros((0, len(cols))))
        return np.asarray(total, dtype=float)


# ----------------------------------------------------------------------- CSV header lines
#: how readers spell a missing value or a boolean in a cell (pandas' and Arrow's defaults, and
#: the "." / "-" of statistics packages), lower case: a column name spelt like one is a cell
_VALUE_WORDS = frozenset({
    "na", "n/a", "nan", "-nan", "+nan", "null", "none", "nil", "#n/a", "#n/a n/a", "#na",
    "<na>", "nat", "-1.#ind", "-1.#qnan", "1.#ind", "1.#qnan", ".", "-", "true", "false"})
#: characters that group digits in a written number (1,234 1_234 1'234 1 234)
_GROUPING = frozenset(",_'\u2019")


def looks_like_a_value(name: str) -> bool:
    """True when a CSV column name reads as a cell of a data row: empty, a number in any
    common spelling (``1e5``, ``-0.3``, ``nan``, ``inf``, ``1,234.5``, ``1.234.567``,
    ``12%``, ``$5``, ``(1,200)``, non-ASCII digits, after NFKC normalisation and stripping
    whitespace and quotes), a missing-value marker (``NA``, ``NULL``, ``#N/A``, ...) or
    ``true``/``false``.  Names such as ``x1``, ``y2019`` or ``1st`` are not values."""
    text = unicodedata.normalize("NFKC", str(name)).strip().strip("\"'").strip()
    if not text or text.lower() in _VALUE_WORDS:
        return True
    t = text.replace("\u2212", "-")  # the minus sign
    if len(t) > 2 and t[0] == "(" and t[-1] == ")":  # an accountant's negative number
        t = t[1:-1]
    t = "".join(ch for ch in t if not (ch.isspace() or ch in _GROUPING
                                       or unicodedata.category(ch) == "Sc"))
    t = t.removesuffix("%").removesuffix("\u2030")
    if t.count(".") > 1:  # 1.234.567: dots that group digits
        t = t.replace(".", "")
    try:
        float(t)  # also non-ASCII decimal digits, nan/inf in any case
    except ValueError:
        return False
    return True


def header_looks_like_data(names: Sequence[str]) -> bool:
    """True when a CSV's first line looks like a data row rather than a header: some name is
    empty or reads as a value (:func:`looks_like_a_value`)."""
    return not names or any(looks_like_a_value(n) for n in names)


def _headerless(where: str) -> InvalidInputError:
    # the same words whatever the line holds: neither a name nor which kind of value it is
    return InvalidInputError(
        f"{where} seems to have no header line: its first line has a field that is empty or "
        "looks like a value (a number, a missing-value marker or true/false), as the fields "
        "of a data row do, and without a header line the first record would be taken for the "
        "column names. Add a first line with the column names (none empty and none a number: "
        "e.g. y2019 rather than 2019; pandas' to_csv(path, index=False) leaves out the unnamed "
        "index column)")


def csv_header(path: str | os.PathLike[str], where: str | None = None) -> list[str]:
    """The column names of a CSV file: its first record, read by pandas (so compressed files
    such as ``.csv.gz`` too; a UTF-8 byte-order mark, quotes and blank leading lines as the
    readers take them), and nothing after it.  Refused with an
    :class:`~dpreg.exceptions.InvalidInputError` that quotes nothing of the file: an
    unreadable or empty file, and a first line that looks like a data row
    (:func:`header_looks_like_data`) -- a CSV without a header line.  Every CSV entry point
    calls this before it shows or uses a column name.  (Parquet names come from the schema,
    not from a data row, so Parquet files are not checked.)"""
    import pandas as pd

    p = Path(path)
    where = where or f"data file {p}"
    try:
        first = pd.read_csv(p, header=None, nrows=1, dtype=str, keep_default_na=False,
                            na_filter=False, encoding="utf-8")
    except pd.errors.EmptyDataError:
        raise InvalidInputError(f"{where} is empty: it has no header line") from None
    except Exception as exc:  # the reader's message can quote bytes of the private file
        raise InvalidInputError(f"could not read the header line of {where} as CSV "
                                f"({type(exc).__name__}); check that it is UTF-8 text") from None
    names = [str(v) for v in first.iloc[0].tolist()] if len(first) else []
    if header_looks_like_data(names):
        raise _headerless(where)
    return names


def _dataset_files(path: Path) -> list[Path]:
    """The files of a data directory that ``pyarrow.dataset`` reads (not those whose name or
    folder starts with ``.`` or ``_``, e.g. ``_SUCCESS``); a file: itself."""
    if not path.is_dir():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and not any(
        part.startswith((".", "_")) for part in p.relative_to(path).parts))


def check_csv_headers(path: str | os.PathLike[str]) -> None:
    """:func:`csv_header` of a CSV file, or of every file of a directory of them."""
    base = Path(path)
    for p in _dataset_files(base):
        csv_header(p, f"data file {p}" if p == base else f"part file {p} of data file {base}")


# ----------------------------------------------------------------------- numeric columns
def numeric_problem(arrow_type: Any) -> str | None:
    """None when a column of this Arrow type is read as numbers (integers, floats, decimals,
    booleans as 0/1, and the all-missing null type, whose missing values are refused when
    read); else what it holds instead: ``"text"``, ``"dates/times"``, ``"categories"``
    (dictionary-encoded, e.g. a pandas Categorical) or ``"nested values"``."""
    import pyarrow.types as pt

    t = arrow_type
    if (pt.is_integer(t) or pt.is_floating(t) or pt.is_boolean(t) or pt.is_decimal(t)
            or pt.is_null(t)):
        return None
    if pt.is_string(t) or pt.is_large_string(t) or pt.is_binary(t) or pt.is_large_binary(t) \
            or pt.is_fixed_size_binary(t) or getattr(pt, "is_string_view", _no)(t) \
            or getattr(pt, "is_binary_view", _no)(t):
        return "text"
    if pt.is_temporal(t):
        return "dates/times"
    if pt.is_dictionary(t):
        return "categories"
    if pt.is_nested(t):
        return "nested values"
    return "values of another type"


def _no(t: Any) -> bool:
    return False


_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}


def file_format(path: Path) -> str:
    """``"parquet"`` or ``"csv"`` from the file name (a directory: from the files in it)."""
    suffixes = [s.lower() for s in path.suffixes]
    if path.is_dir():
        kinds = {_FORMATS.get(p.suffix.lower()) for p in path.rglob("*") if p.is_file()}
        kinds.discard(None)
        if len(kinds) == 1:
            return str(kinds.pop())
        raise InvalidInputError(f"data directory {path} must hold .parquet or .csv files of one "
                                "kind")
    for s in reversed(suffixes):
        if s in _FORMATS:
            return _FORMATS[s]
    raise InvalidInputError(f"data file {path} must end in .parquet, .pq or .csv (the format is "
                            "taken from the name)")


class FileSource(DataSource):
    """A Parquet or CSV file (or a directory of them) streamed with ``pyarrow.dataset``.

    A CSV file (each file of a CSV directory) must start with a header line
    (:func:`check_csv_headers`, run before anything else).  Columns used as numbers must hold
    numbers in every file (:func:`numeric_problem` of each part file's own type, see
    :meth:`check_columns`); they are read as float64 from every part, whatever numeric type
    each part stores."""

    kind = "file"

    def __init__(self, path: str | os.PathLike[str], *, batch_rows: int = FILE_BATCH_ROWS,
                 chunk_rows: int = CHUNK_ROWS) -> None:
        self.path = Path(path)
        self.where = f"data file {self.path}"
        if not self.path.exists():
            raise InvalidInputError(f"data file {self.path} does not exist")
        self.format = file_format(self.path)
        if self.format == "csv":  # before any name of the file is used or shown
            check_csv_headers(self.path)
        try:
            import pyarrow.dataset as ds
        except ImportError:
            raise InvalidInputError("reading a Parquet/CSV file in chunks needs pyarrow (pip "
                                    "install 'dpreg[spark]')") from None
        try:
            self._dataset = ds.dataset(str(self.path), format=self.format)
            schema = self._dataset.schema
        except Exception as exc:  # the reader's message can quote bytes of the private file
            raise InvalidInputError(f"could not read {self.path} as {self.format} "
                                    f"({type(exc).__name__})") from None
        if self.format == "csv":  # a file the listing above left out (defensive)
            listed = set(_dataset_files(self.path))
            for f in self._dataset.files:
                if Path(f) not in listed:
                    csv_header(f, f"part file {f} of data file {self.path}")
        self.columns = [str(c) for c in schema.names]
        self._schema = schema
        self._part_types: dict[str, list[tuple[Any, str]]] | None = None
        self.batch_rows = int(batch_rows)
        self.chunk_rows = int(chunk_rows)

    def part_types(self, column: str) -> list[tuple[Any, str]]:
        """``(Arrow type, part file)`` of ``column`` for each distinct type its part files
        store (a file: one entry).  Read from each part's own schema (a Parquet footer; a CSV
        file's first block, as the reader infers it); parts without the column are left out
        (they read as missing values)."""
        if self._part_types is None:
            found: dict[str, dict[Any, str]] = {}
            try:
                for frag in self._dataset.get_fragments():
                    for field in frag.physical_schema:
                        found.setdefault(field.name, {}).setdefault(field.type, str(frag.path))
            except Exception as exc:
                raise InvalidInputError(f"could not read the schema of {self.where} "
                                        f"({type(exc).__name__})") from None
            self._part_types = {c: list(t.items()) for c, t in found.items()}
        return self._part_types.get(column, [(self._schema.field(column).type, str(self.path))])

    def _type_error(self, column: str, t: Any, part: str, what: str) -> InvalidInputError:
        inpart = f" in part file {part}" if self.path.is_dir() else ""
        return InvalidInputError(f"column {column!r} of {self.where} has type {t} ({what}"
                                 f"{inpart}); a numeric column is required")

    def check_columns(self, columns: Sequence[str]) -> list[str]:
        """The column names, each in the file and of a numeric type in every part file
        (:func:`numeric_problem`); else an error naming the column, its type and (in a
        directory) the part file -- never a value."""
        cols = super().check_columns(columns)
        for c in cols:
            for t, part in self.part_types(c):
                what = numeric_problem(t)
                if what is not None:
                    raise self._type_error(c, t, part, what)
        return cols

    def _as_float(self, column: str) -> bool:
        """Whether ``column`` is read as float64 from every part file: a Parquet column of
        numeric types (each part's values are cast from the part's own type), a CSV column
        whose files the reader infers as integers or floats (their text is parsed as float64;
        booleans stay booleans: the CSV reader parses ``true`` as no number)."""
        import pyarrow.types as pt

        types = [t for t, _ in self.part_types(column)]
        if self.format == "parquet":
            return all(numeric_problem(t) is None for t in types)
        return all(pt.is_integer(t) or pt.is_floating(t) or pt.is_null(t) for t in types)

    def _read_as(self, columns: Sequence[str]) -> Any:
        """The dataset with ``columns`` read as float64 (the schema's type replaced): every
        part file is then converted from its own type while it is read, not cast to the first
        file's type, which can lose values (a double read as bool, text read as numbers)."""
        if not columns:
            return self._dataset
        import pyarrow as pa
        import pyarrow.dataset as ds

        schema = pa.schema([pa.field(f.name, pa.float64() if f.name in columns else f.type,
                                     f.nullable) for f in self._schema])
        d = self._dataset
        return ds.FileSystemDataset(list(d.get_fragments()), schema, d.format, d.filesystem)

    def batches(self, columns: list[str]) -> Iterator[Any]:
        """pyarrow RecordBatches of ``columns`` as float64, one at a time (no read-ahead, one
        thread); the columns have passed :meth:`check_columns`."""
        try:
            import pyarrow.dataset as ds

            # no pre-buffering of whole files, no read-ahead, one thread: one batch in memory
            opts = (ds.ParquetFragmentScanOptions(pre_buffer=False)
                    if self.format == "parquet" else None)
            dataset = self._read_as([c for c in columns if self._as_float(c)])
            scanner = dataset.scanner(columns=columns, batch_size=self.batch_rows,
                                      use_threads=False, batch_readahead=0,
                                      fragment_readahead=0, fragment_scan_options=opts)
            yield from scanner.to_batches()
        except InvalidInputError:
            raise
        except Exception as exc:  # e.g. a text cell in a CSV column inferred as numeric
            raise InvalidInputError(
                f"could not read columns {columns} of {self.where} as numbers "
                f"({type(exc).__name__}); check that they hold only numbers") from None

    def to_pandas(self, columns: Sequence[str]) -> Any:
        """Only ``columns`` of the file as a pandas DataFrame (the per-group front end reads
        the key, x and y columns this way; the other columns are never read).  Numbers are
        numbers whatever each part file stores: a column whose parts all hold numbers of
        different types, or decimals, is read as float64; a column that holds numbers in
        some parts and something else in others (text, dates/times, categories: two of
        these) is refused, naming the column and the types."""
        import pyarrow.types as pt

        cols = DataSource.check_columns(self, columns)
        as_float: list[str] = []
        for c in cols:
            parts = [(t, part) for t, part in self.part_types(c) if not pt.is_null(t)]
            kinds = {numeric_problem(t) for t, _ in parts}
            if len(kinds) > 1:  # numbers in some parts, text (or dates, ...) in others
                shown = ", ".join(f"{t} in {part}" for t, part in parts[:3])
                raise InvalidInputError(
                    f"column {c!r} of {self.where} has different types in its part files "
                    f"({shown}); write it with one type in every part (numbers, or text)")
            if kinds == {None} and (len(parts) > 1 or any(pt.is_decimal(t) for t, _ in parts)) \
                    and self._as_float(c):
                as_float.append(c)
        try:
            return self._read_as(as_float).to_table(columns=cols, use_threads=False).to_pandas()
        except Exception as exc:
            raise InvalidInputError(f"could not read columns {cols} of {self.where} "
                                    f"({type(exc).__name__})") from None

    def spark_frame(self, session: Any) -> Any:
        """The file as a Spark DataFrame, read by the executors (``spark.read``)."""
        reader = session.read
        if self.format == "csv":
            return reader.option("header", "true").option("inferSchema", "true").csv(
                str(self.path))
        return reader.parquet(str(self.path))

    def _chunks(self, columns: list[str]) -> Iterator[np.ndarray]:
        for batch in self.batches(columns):
            arr = batch_to_array(batch, len(columns))
            for i in range(0, arr.shape[0], self.chunk_rows):
                yield arr[i:i + self.chunk_rows]


def batch_to_array(batch: Any, k: int) -> np.ndarray:
    """An Arrow batch's first ``k`` columns as an (m, k) float64 array (missing values NaN)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = np.empty((batch.num_rows, k))
    for j in range(k):
        col = batch.column(j)
        if not pa.types.is_floating(col.type) or col.type != pa.float64():
            col = pc.cast(col, pa.float64())
        out[:, j] = col.to_numpy(zero_copy_only=False)
    return out


def is_spark_frame(data: Any) -> bool:
    """True for a pyspark DataFrame (classic or Spark Connect), without importing pyspark."""
    return any(c.__module__.startswith("pyspark.sql") and c.__name__ == "DataFrame"
               for c in type(data).__mro__)


class SparkSource(DataSource):
    """A Spark DataFrame: chunk functions run on the executors (``mapInArrow``), one partial
    per partition comes back to the driver.  Columns are read with ``try_cast(... AS
    DOUBLE)``: text that is not a number is missing, and missing values are refused."""

    kind = "spark"
    where = "the Spark DataFrame"

    def __init__(self, df: Any) -> None:
        self.df = df
        self.columns = [str(c) for c in df.columns]

    def reduce(self, columns: Sequence[str], stat: Stat) -> np.ndarray:
        from pyspark.sql import functions as F

        cols = self.check_columns(columns)
        k = len(cols)
        sel = self.df.select([F.expr("try_cast(`" + c.replace("`", "``") + "` AS DOUBLE)")
                              .alias(f"c{j}") for j, c in enumerate(cols)])
        parts = sel.mapInArrow(_PartitionReducer(stat, k), "p binary, bad binary").collect()
        total: np.ndarray | None = None
        bad = np.zeros(k, dtype=bool)
        for row in parts:  # partition order: a fixed summation order for a fixed partitioning
            bad |= np.frombuffer(row["bad"], dtype=bool)
            if row["p"]:
                part = np.load(io.BytesIO(row["p"]), allow_pickle=False)
                total = part if total is None else total + part
        if bad.any():
            raise _bad_values(cols, bad, self.where)
        if total is None:
            total = stat(np.zeros((0, k)))
        return np.asarray(total, dtype=float)


class _PartitionReducer:
    """The executor side of :meth:`SparkSource.reduce` (picklable): Σ stat(chunk) over the
    Arrow batches of one partition, as one row (the partial as ``.npy`` bytes; which columns
    had a bad value)."""

    def __init__(self, stat: Stat, k: int) -> None:
        self.stat = stat
        self.k = k

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        total: np.ndarray | None = None
        bad = np.zeros(self.k, dtype=bool)
        for batch in batches:
            arr = batch_to_array(batch, self.k)
            for i in range(0, arr.shape[0], CHUNK_ROWS):
                chunk = arr[i:i + CHUNK_ROWS]
                fin = np.isfinite(chunk)
                if not fin.all():
                    bad |= ~fin.all(axis=0)
                    continue
                if bad.any():
                    continue
                part = self.stat(chunk)
                total = part if total is None else total + part
        buf = b""
        if total is not None and not bad.any():
            out = io.BytesIO()
            np.save(out, np.asarray(total, dtype=float), allow_pickle=False)
            buf = out.getvalue()
        yield pa.RecordBatch.from_pydict({"p": [buf], "bad": [bad.tobytes()]},
                                         schema=pa.schema([("p", pa.binary()),
                                                           ("bad", pa.binary())]))


def is_external(data: Any) -> bool:
    """True for the sources read in chunks rather than held in memory: a path (``str`` or
    ``os.PathLike``) or a Spark DataFrame."""
    return isinstance(data, (str, os.PathLike)) or is_spark_frame(data)


def open_source(data: Any) -> DataSource:
    """The :class:`DataSource` of a path or a Spark DataFrame (see :func:`is_external`)."""
    if isinstance(data, DataSource):
        return data
    if is_spark_frame(data):
        return SparkSource(data)
    if isinstance(data, (str, os.PathLike)):
        return FileSource(data)
    raise InvalidInputError(f"data must be a path to a Parquet/CSV file or a Spark DataFrame here; "
                            f"got {type(data).__name__}")
