"""Reading DATA: CSV or Parquet, its header, Spark frames, and small text inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dpreg.exceptions import DPRegError


def _read_csv(path: Path) -> Any:
    import pandas as pd

    from dpreg._source import csv_header
    from dpreg.exceptions import InvalidInputError

    if not path.exists():
        raise InvalidInputError(f"DATA file {path} does not exist")
    csv_header(path)  # a header line, not a data row taken for the column names
    try:
        return pd.read_csv(path)
    except Exception as exc:
        # the parser's own message can quote bytes or cells of the private file: name the file
        # and the kind of error only
        raise InvalidInputError(f"could not read {path} as CSV ({type(exc).__name__}); check "
                                "its encoding (UTF-8) and that every row has the header's "
                                "number of fields") from None


def _read_csv_header(path: Path) -> list[str]:
    """The column names of a CSV file (its header row only, as pandas names the columns of
    :func:`_read_csv`); a file whose first line looks like a data row is refused."""
    import pandas as pd

    from dpreg._source import csv_header
    from dpreg.exceptions import InvalidInputError

    if not path.exists():
        raise InvalidInputError(f"DATA file {path} does not exist")
    csv_header(path)
    try:
        return [str(c) for c in pd.read_csv(path, nrows=0).columns]
    except Exception as exc:  # the parser's message can quote bytes of the file
        raise InvalidInputError(f"could not read {path} as CSV ({type(exc).__name__})") from None


def _check_columns(header: list[str], given: dict[str, list[str]]) -> None:
    """Every column named by an option must be in DATA's header: else a usage error (exit 2)
    with a did-you-mean among the header's names (the user's own column names; no value)."""
    from dpreg._validation import did_you_mean
    from dpreg.exceptions import UnknownNameError

    known = set(header)
    for option, names in given.items():
        for name in names:
            if name not in known:
                listed = header if len(header) <= 20 else header[:20] + ["..."]
                raise UnknownNameError(f"{option} {name!r} is not a column of the data"
                                       f"{did_you_mean(name, header)} (columns: {listed})")


def _is_parquet(path: Path) -> bool:
    """A Parquet file (or a directory of them), by name."""
    from dpreg._source import file_format

    try:
        return path.exists() and file_format(path) == "parquet"
    except DPRegError:
        return False


def _read_table(path: Path) -> Any:
    """DATA as a pandas DataFrame: CSV (pandas) or Parquet (pyarrow)."""
    if not _is_parquet(path):
        return _read_csv(path)
    from dpreg._source import FileSource

    src = FileSource(path)
    return src.to_pandas(src.columns)


def _header(path: Path) -> list[str]:
    """DATA's column names (a CSV header row or the Parquet schema); no value is read."""
    if not _is_parquet(path):
        return _read_csv_header(path)
    from dpreg._source import FileSource

    return FileSource(path).columns


def _spark_frame(path: Path) -> Any:
    """DATA read by Spark executors (``--backend spark``; the active session or local[2])."""
    from dpreg._source import FileSource
    from dpreg.grouped.spark import spark_session

    return FileSource(path).spark_frame(spark_session(None))

def _read_text(path: Path, option: str) -> str:
    """A small text input (e.g. the groups file) as UTF-8; a one-line error naming the file."""
    from dpreg.exceptions import InvalidInputError

    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else (
            exc.strerror or type(exc).__name__)
        raise InvalidInputError(f"could not read the {option} file {path}: {why}") from None


def read_data(data: Path, backend: str, *, stream: bool) -> Any:
    """DATA for a release: with ``--backend spark`` a Spark frame (the executors read the
    file); a Parquet file that the release reads in chunks (``stream``: a sufficient-statistics
    release) as its path, memory bounded by the chunk; else the whole table in memory
    (:func:`_read_table`)."""
    if backend == "spark":
        return _spark_frame(data)
    if stream and _is_parquet(data):
        return str(data)
    return _read_table(data)
