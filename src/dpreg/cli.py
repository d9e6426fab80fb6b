"""The ``dpreg`` command line (thin: parses, calls library functions, prints/writes).

Exit codes: 0 success, 1 data/privacy error (bad data, exhausted ledger, mechanism ⊥), 2 usage
error (unknown option, malformed ``--bounds``, an ε or δ outside its range, conflicting flags, a
bad parameter value: :class:`~dpreg.exceptions.InvalidParameterError`, and a misspelt
method/column/option/bounds key: its subclass :class:`~dpreg.exceptions.UnknownNameError`, with a
did-you-mean; ``--ci`` with a method that has no interval).  ``-o`` keys the method accepts but
does not use in the call warn.  Listings are plain tab-separated lines when stdout is not a terminal; progress
bars go to stderr, only on a terminal or with ``--progress`` (:mod:`dpreg._progress`).  Errors print one
line without a traceback unless ``--debug`` is given; warnings print one line ``warning: ...``
on stderr and leave the exit code unchanged.

ε and δ are parsed from the raw text (:func:`parse_epsilon`, :func:`parse_delta`), never by a
silently overflowing ``float()``: ``inf``, ``1e309`` or ``nan`` for ε and a δ that underflows
(``1e-400``) are usage errors, and so is ε above the cap :data:`dpreg.privacy.EPSILON_MAX` (100:
its noise is below the printed precision of the outputs, no privacy in practice);
``--not-private`` (fit, fit-groups, release-cov, ledger init) allows ``--epsilon inf`` or an ε
above the cap (run as ``inf``: the exact, NOT PRIVATE result, labelled so in every output),
and ``--delta`` in [0.5, 1).  Every number typed on the
command line (ε, δ, ``--bounds``, ``-o`` values, ``--ci`` and the integer options) is read by
one whitelist of ASCII decimal literals (:data:`dpreg._validation.ASCII_NUMBER`): Unicode digits
such as ``١`` or ``１`` and ``_`` separators are refused, naming the option.  ``-o KEY=VALUE``
values are whitelisted (:func:`parse_options`: a number, true/false, none, a word or a flat
list of numbers) and a key that the command sets itself is refused naming its option.  Every
warning of a command prints as one ``warning: ...`` line (never Python's format with a source
path).  Every ``--json`` output is strict JSON: non-finite numbers are written as ``null``
(:func:`dpreg._json.strict_jsonable`).

Files the CLI writes and later trusts carry integrity records (docs/threat-model.md):
``release-cov`` writes a SHA-256 digest of the release (``--key KEYFILE`` or ``$DPREG_KEY``:
HMAC-SHA256 too) that ``regress`` checks (``--no-verify`` reads an altered file, marked
UNVERIFIED); a ledger's HMAC chain uses ``PATH.key`` (or ``--key`` / ``$DPREG_LEDGER_KEY``).  Key
files come from ``dpreg key init``; no output ever contains a key.
"""

from __future__ import annotations

import json
import math
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, NoReturn

from dpreg._extras import missing_extra
from dpreg._version import __version__
from dpreg.exceptions import DPRegError

try:  # the command line lives behind the [cli] extra
    import typer
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table
except ImportError as _exc:
    missing_extra(_exc, "the dpreg command line", extra="cli")
    raise

app = typer.Typer(
    name="dpreg",
    help="Differentially private linear regression: fit, per-group fits, DP covariance "
         "releases, paper reproductions and the demo.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
ledger_app = typer.Typer(help="Create, inspect and seal persistent privacy ledgers (each "
                         "protected by an HMAC-SHA256 chain under its key file).",
                         no_args_is_help=True)
app.add_typer(ledger_app, name="ledger")
key_app = typer.Typer(help="Key files that sign release files and ledgers (HMAC-SHA256; "
                      "docs/threat-model.md).", no_args_is_help=True)
app.add_typer(key_app, name="key")
codebook_app = typer.Typer(help="Codebooks: public bounds and levels of a data set's columns "
                           "(docs/codebook.md).", no_args_is_help=True)
app.add_typer(codebook_app, name="codebook")
_CODEBOOK_HELP = ("TOML codebook with public bounds/levels per column (docs/codebook.md); "
                  "--bounds flags add to it and win for the same column.")

console = Console()
err_console = Console(stderr=True)
_STATE: dict[str, bool] = {"debug": False}


def _version_callback(value: bool) -> None:
    if value:
        console.print(f"dpreg {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version_callback,
                                          is_eager=True, help="Print the version.")] = False,
) -> None:
    _STATE["debug"] = debug
    # every warning of the whole command (the fit, its intervals, the summary, a plot) is one
    # ``warning: ...`` line: never Python's format with a source path and a code line
    ctx.with_resource(_library_warnings())


# ------------------------------------------------------------------ helpers
def _non_ascii_digits(text: str) -> bool:
    """Whether ``text`` holds a digit other than 0-9 (``١``, ``１``, ...)."""
    return any(not ch.isascii() and (ch.isdigit() or ch.isnumeric()) for ch in text)


def _not_a_number_why(text: str) -> str:
    """Why ``text`` is not read as a number (the parenthesis of a usage error)."""
    if _non_ascii_digits(text):
        return " (only ASCII digits 0-9 are accepted in numbers)"
    return " (not a finite decimal number written with the ASCII digits 0-9)"


def parse_bounds(items: list[str] | None) -> Any:
    """``["x=0:1", "y=-1:2.5"]`` -> ``{"x": (0, 1), "y": (-1, 2.5)}`` (usage error if malformed).

    ``["private"]`` -> ``"private"`` and ``COL=private`` -> ``"private"`` for that column
    (bounds-free mode of ``--method auto``).  LO and HI are read by the one whitelist of typed
    numbers (:data:`dpreg._validation.ASCII_NUMBER`: ASCII digits only)."""
    from dpreg._validation import ASCII_NUMBER

    if items and list(items) == ["private"]:
        return "private"
    out: dict[str, Any] = {}
    for item in items or []:
        name, sep, rng = item.rpartition("=")
        if sep and name and rng == "private":
            out[name] = "private"
            continue
        lo_s, sep2, hi_s = rng.partition(":")
        lo_s, hi_s = lo_s.strip(), hi_s.strip()
        if not sep or not sep2 or not name or not (ASCII_NUMBER.fullmatch(lo_s)
                                                   and ASCII_NUMBER.fullmatch(hi_s)):
            raise typer.BadParameter(
                f"expected COL=LO:HI (e.g. income=0:250000), LO and HI decimal numbers "
                f"written with the ASCII digits 0-9; got {item!r}", param_hint="--bounds")
        out[name] = (float(lo_s), float(hi_s))
    return out


def _ascii_float(value: Any) -> float:
    """The parser of the CLI's real-valued options (``--ci``, ``--alpha``, ``--target-sd``):
    the one whitelist of typed numbers (ASCII digits only), else a usage error naming the
    option (exit 2).  Typer passes defaults through unchanged."""
    from dpreg._validation import ASCII_NUMBER

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    if not ASCII_NUMBER.fullmatch(text) or not math.isfinite(float(text)):
        raise typer.BadParameter(f"{str(value)!r} is not a number{_not_a_number_why(text)}")
    return float(text)


def _ascii_int(value: Any) -> int:
    """The parser of the CLI's integer options (``--seed``, ``--n``, ``--workers``, ...):
    ASCII digits only (no ``_`` separators, no Unicode digits), else a usage error."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value).strip()
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        why = (" (only ASCII digits 0-9 are accepted in numbers)" if _non_ascii_digits(text)
               else " (an integer written with the ASCII digits 0-9)")
        raise typer.BadParameter(f"{str(value)!r} is not an integer{why}")
    return int(text)


#: ``-o`` keys each command sets through its own options (a method option of the same name
#: would be given twice): the key -> the option to use instead
_SET_BY_COMMAND: dict[str, dict[str, str]] = {
    "fit": {"epsilon": "--epsilon", "delta": "--delta", "bounds": "--bounds",
            "x_bounds": "--bounds", "y_bounds": "--bounds", "bounds_X": "--bounds",
            "bounds_y": "--bounds", "random_state": "--seed", "rng": "--seed", "seed": "--seed",
            "ledger": "--ledger", "codebook": "--codebook", "method": "--method",
            "median": "--method", "fit_intercept": "--no-intercept", "x_names": "--x",
            "x": "--x", "X": "--x", "y_name": "--y", "y": "--y", "formula": "--y and --x",
            "data": "DATA", "allow_unreliable": "--allow-unreliable"},
}
_SET_BY_COMMAND["fit-groups"] = {
    **{k: v for k, v in _SET_BY_COMMAND["fit"].items() if k not in ("fit_intercept",
                                                                     "allow_unreliable")},
    "fit_intercept": "--method (per-group fits keep the intercept)",
    "groups": "--groups-file or --keys-from-data", "by": "--by", "df": "DATA",
    "backend": "--backend", "workers": "--workers", "progress": "--progress",
    "spark": "--backend spark"}
_SET_BY_COMMAND["plan"] = {
    **{k: v for k, v in _SET_BY_COMMAND["fit"].items() if k not in ("ledger", "codebook",
                                                                     "allow_unreliable")},
    "n": "--n", "n_sim": "--n-sim", "seed": "--seed", "target_sd": "--target-sd",
    "target": "--target", "fit_intercept": "the formula", "codebook": "--codebook",
    "design": "--design", "ledger": "--ledger"}
#: the longest ``-o`` list of numbers and word
_OPTION_LIST_MAX = 16
_OPTION_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
_OPTION_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")


def _option_number(key: str, text: str, item: str) -> int | float:
    """One number of a ``-o`` value (ASCII digits only; finite; an integer literal stays an
    integer), else a usage error naming the option."""
    from dpreg._validation import ASCII_NUMBER

    text = text.strip()
    if _OPTION_INTEGER.fullmatch(text):
        return int(text)
    if not ASCII_NUMBER.fullmatch(text):
        _usage_error(f"-o {key}", _OPTION_EXPECTED, item, _not_a_number_why(text))
    exact = Decimal(text)
    value = float(exact)
    if not math.isfinite(value) or (value == 0 and exact != 0):
        _usage_error(f"-o {key}", _OPTION_EXPECTED, item,
                     " (it does not fit a double: it would become inf or 0)")
    return value


_OPTION_EXPECTED = (f"a number (ASCII digits), true, false, none, a word such as wide, or a "
                    f"list of at most {_OPTION_LIST_MAX} numbers such as [-3, 3]")


def _option_value(key: str, raw: str, item: str) -> Any:
    """A ``-o`` value by whitelist: a number, ``true``/``false``, ``none``/``null``, a word
    (an enumerated choice such as ``wide``, ``all``, ``add-remove``) or a flat list of
    numbers ``[a, b, ...]``; nothing else is passed to the library (never evaluated)."""
    text = raw.strip()
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if low.lstrip("+-") in ("inf", "infinity", "nan"):
        _usage_error(f"-o {key}", _OPTION_EXPECTED, item, " (not a finite number)")
    if _OPTION_WORD.fullmatch(text):
        return text
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        parts = [] if not inner else inner.split(",")
        if len(parts) > _OPTION_LIST_MAX:
            _usage_error(f"-o {key}", _OPTION_EXPECTED, item,
                         f" (a list of more than {_OPTION_LIST_MAX} numbers)")
        return [_option_number(key, p, item) for p in parts]
    return _option_number(key, text, item)


def parse_options(items: list[str] | None, *, command: str = "fit") -> dict[str, Any]:
    """``["theta=0.02", "pairs=10", "median=wide"]`` -> typed values, each read by whitelist
    (:func:`_option_value`); a key the command sets through its own option (``bounds``,
    ``epsilon``, ``random_state``, ...) or a value outside the whitelist is a usage error
    (exit 2) naming the option.  The budget is ``--epsilon``/``--delta`` only: no method
    option is a privacy parameter (dp-gd's zCDP variant runs at ρ = ε²/2)."""
    own = _SET_BY_COMMAND[command]
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise typer.BadParameter(f"expected KEY=VALUE; got {item!r}", param_hint="--option")
        if key in own:
            _usage(f"-o {key} is not a method option: dpreg {command} sets it; use {own[key]}")
        out[key] = _option_value(key, raw, item)
    return out


#: environment variable naming a default ledger file for fit, fit-groups and release-cov
LEDGER_ENV = "DPREG_LEDGER"
#: environment variable naming the key file of the ledgers (default: PATH.key beside a ledger)
LEDGER_KEY_ENV = "DPREG_LEDGER_KEY"
#: environment variable naming the key file that signs (release-cov) and verifies (regress)
#: release files
RELEASE_KEY_ENV = "DPREG_KEY"
_RELEASE_KEY_HELP = (f"Key file (dpreg key init) that signs the release with HMAC-SHA256 "
                     f"(default: ${RELEASE_KEY_ENV} if set; else only an unkeyed SHA-256 "
                     "digest, which detects accidental edits but not a recomputed one).")
_LEDGER_KEY_HELP = (f"The ledger's key file (default: ${LEDGER_KEY_ENV} if set, else PATH.key "
                    "beside the ledger).")


def _ledger_key(key: Path | None) -> Path | None:
    """``--key``, else ``$DPREG_LEDGER_KEY``, else None (the ledger's own PATH.key)."""
    import os

    if key is None and os.environ.get(LEDGER_KEY_ENV):
        return Path(os.environ[LEDGER_KEY_ENV])
    return key


def _open_ledger(path: Path | None, *, use_default: bool = False, key: Path | None = None,
                 verify: bool = True) -> Any:
    """The ledger file ``path``; without one (and ``use_default``), the file named by
    ``$DPREG_LEDGER`` if set.  The file must exist (``dpreg ledger init``).  Its integrity
    record is verified with its key file (``key``, ``$DPREG_LEDGER_KEY`` or PATH.key); a file
    without a record (an older dpreg) prints a warning."""
    import os

    how = ""
    if path is None and use_default and os.environ.get(LEDGER_ENV):
        path, how = Path(os.environ[LEDGER_ENV]), f" (from ${LEDGER_ENV})"
    if path is None:
        return None
    from dpreg import Ledger
    from dpreg.exceptions import InvalidInputError

    if not path.exists():
        raise InvalidInputError(
            f"ledger {path}{how} does not exist; create it first with: dpreg ledger init {path} "
            "--epsilon TOTAL [--delta TOTAL_DELTA]"
        )
    led = Ledger(None, path, key_file=_ledger_key(key), verify=verify)
    status = led.integrity
    if use_default and status is not None and status.status == "no-record":
        _cli_warning(f"ledger {path}: {status}")
    return led


def _ledger_line(led: Any) -> dict[str, Any]:
    """What the ledger has left after a charge (for the output of fit, fit-groups,
    release-cov): ``{"path", "spent", "remaining", "text"}`` in the ledger's units."""
    return {"path": str(led.path), "spent": led.spent().as_dict(),
            "remaining": led.remaining().as_dict(), "text": f"ledger {led.path}: {led.describe()}"}


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


_BACKEND_HELP = ("local (default: in this process; a Parquet file is streamed in chunks for the "
                 "sufficient-statistics methods) or spark (the executors read DATA and sum the "
                 "statistics; the active SparkSession or local[2]; needs dpreg[spark] and Java)")


def _read_text(path: Path, option: str) -> str:
    """A small text input (e.g. the groups file) as UTF-8; a one-line error naming the file."""
    from dpreg.exceptions import InvalidInputError

    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else (
            exc.strerror or type(exc).__name__)
        raise InvalidInputError(f"could not read the {option} file {path}: {why}") from None


def _fail(exc: BaseException) -> None:
    """One ``error:`` line on stderr; exit 2 for a usage error (a bad parameter value or a
    misspelt method, column, option or bounds key:
    :class:`~dpreg.exceptions.InvalidParameterError` and its subclass
    :class:`~dpreg.exceptions.UnknownNameError`), else 1 (the data, the ledger, a ⊥)."""
    from dpreg.exceptions import InvalidParameterError

    if _STATE["debug"]:
        raise exc
    # the message is text, not rich markup: "[plots]" in "pip install 'dpreg[plots]'" stays
    err_console.print(f"[bold red]error:[/] {escape(_cli_text(str(exc)))}", highlight=False,
                      soft_wrap=True)
    raise typer.Exit(code=2 if isinstance(exc, InvalidParameterError) else 1)


def _usage(text: str) -> NoReturn:
    """A usage error that is not about one option's value (conflicting flags): exit 2."""
    typer.echo(f"error: {text}", err=True)
    raise typer.Exit(code=2)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _print_table(title: str, columns: list[str], rows: list[list[str]],
                 *, no_wrap: tuple[str, ...] = ()) -> None:
    """A listing: a rich table on a terminal; piped (not a terminal), plain tab-separated
    lines (a header line, then one line per row) that neither wrap nor cut a name, whatever
    the terminal width (``COLUMNS``) says."""
    if not _is_terminal(sys.stdout):
        def cell(v: Any) -> str:
            return " ".join(str(v).split())  # tabs/newlines inside a cell become spaces

        sys.stdout.write("\t".join(columns) + "\n")
        for r in rows:
            sys.stdout.write("\t".join(cell(v) for v in r) + "\n")
        return
    table = Table(title=title)
    for col in columns:
        table.add_column(col, no_wrap=col in no_wrap, overflow="fold")
    for r in rows:
        table.add_row(*[str(v) for v in r])
    console.print(table)


_PROGRESS_HELP = ("Show progress bars on stderr (default: only when stderr is a terminal; "
                  "--no-progress: never).  They show counts and times, never data.")


def _print_json(obj: Any) -> None:
    """The one writer of every ``--json`` output: strict JSON (non-finite numbers -> null;
    ``allow_nan=False`` so that a NaN or Infinity can never slip through again)."""
    from dpreg._json import strict_jsonable

    sys.stdout.write(json.dumps(strict_jsonable(obj), indent=2, allow_nan=False,
                                default=_json_default) + "\n")


def _json_default(o: Any) -> Any:
    """Objects :func:`strict_jsonable` leaves alone (paths, timestamps, ...) as text."""
    return str(o)


#: the library's remedies in Python spelling -> the same remedies on the command line
_CLI_SPELLING: tuple[tuple[str, str], ...] = (
    ("AdaSSP(inference=True)", "--method adassp"),
    ("inference=True", "-o inference=true"),
    ("inference='auto'", "-o inference=auto"),
    ("ci_alpha=...", "--ci ALPHA"),
    ("ci_alpha=", "--ci "),
    ('se="plugin"', "-o se=plugin"),
    ("CovarianceOLS", "--method covariance-ols"),
    ("ci_method='tight'", "-o ci_method=tight"),
    ("ci_method='auto'", "-o ci_method=auto"),
    ("ci_method='calibrated'", "-o ci_method=calibrated"),
)


def _cli_text(text: str) -> str:
    """A library message (an error, the summary's Uncertainty row) with its remedies in CLI
    spelling: "refit with inference=True" becomes "refit with -o inference=true"."""
    for api, cli in _CLI_SPELLING:
        text = text.replace(api, cli)
    return text


def _intervals(res: Any, ci: float | None) -> Any:
    """The (1 − ci) intervals of a fitted result, or None (a note says why none exists: the
    release is spent, so it is shown anyway)."""
    if ci is None or res.failed:
        return None
    from dpreg.inference.results import NoUncertaintyError

    try:
        return res.conf_int(ci)
    except NoUncertaintyError as exc:
        err_console.print(f"note: no confidence interval: {escape(_cli_text(str(exc)))}",
                          highlight=False)
        return None


def _result_json(res: Any, ci: float | None, ci_frame: Any) -> dict[str, Any]:
    """``res.to_dict()`` with the remedies in CLI spelling and the intervals (``ci``)."""
    out: dict[str, Any] = res.to_dict()
    if isinstance(out.get("uncertainty"), str):
        out["uncertainty"] = _cli_text(out["uncertainty"])
    if ci_frame is not None:
        out["ci"] = {"alpha": ci, **{k: [float(r["lower"]), float(r["upper"])]
                                     for k, r in ci_frame.iterrows()}}
        if "ci_informative" in res.extra:  # an end at the search range is not a finding
            out["ci"]["informative"] = dict(res.extra["ci_informative"])
        elif "dp_ci_unidentified_mass" in res.extra and ci is not None:  # noisy-stats,
            # offered by its release: at the requested level, are the ends set by the region
            # of nvar the release says nothing about?
            ok = float(res.extra["dp_ci_unidentified_mass"]) < ci / 2.0
            out["ci"]["informative"] = {str(k): ok for k in ci_frame.index}
        if "ci_calibrated" in res.extra:  # Theil-Sen: calibrated or the conservative tight one
            out["ci"]["calibrated"] = dict(res.extra["ci_calibrated"])
        # at the requested level (extra['dp_ci_excludes_estimate'] is checked at 0.05 only)
        out["ci"]["excludes_estimate"] = res.excludes_estimate(ci)
    return out


def _print_summary(res: Any, ci: float | None) -> None:
    console.print(_cli_text(str(res.summary(alpha=ci))), highlight=False)


def _save_figure(fig: Any, path: Path) -> None:
    """Write a matplotlib figure (format from the suffix: .png, .pdf, .svg) and close it."""
    import matplotlib.pyplot as plt

    from dpreg.exceptions import InvalidInputError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=150, bbox_inches="tight")
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"could not write the plot to {path}: "
                                f"{getattr(exc, 'strerror', None) or type(exc).__name__} "
                                "(use a .png, .pdf or .svg file name)") from None
    finally:
        plt.close(fig)


def _check_plot_extra(path: Path | None) -> None:
    """``--plot`` needs matplotlib (the ``[plots]`` extra): checked before anything is read or
    charged, so that a missing extra never costs a release."""
    if path is not None:
        from dpreg._extras import require

        require("matplotlib", "--plot", extra="plots")


def _plot_result(res: Any, path: Path | None, ci: float | None) -> None:
    """``--plot PATH``: coefficients with their DP-aware intervals (none for a ⊥ release)."""
    if path is None:
        return
    if res.failed:
        err_console.print("note: no plot: the release is ⊥", highlight=False)
        return
    from dpreg.inference.plots import use_file_backend

    use_file_backend()
    ax = res.plot(alpha=0.05 if ci is None else ci)
    _save_figure(ax.figure, path)


# ------------------------------------------------------------------ privacy parameters
_INFINITY = frozenset({"inf", "+inf", "infinity", "+infinity"})
_NOT_PRIVATE_HELP = ("Allow --epsilon inf or above the cap 100 (the exact, NOT PRIVATE result, "
                     "labelled so in every output) and --delta in [0.5, 1).")
#: smallest positive δ accepted (the smallest normal double): below it δ is rounded, and
#: 1e-400 would silently become 0 -- pure DP, a different claim
DELTA_MIN = sys.float_info.min


def _usage_error(option: str, expected: str, raw: str, why: str = "") -> NoReturn:
    """A one-line usage error (exit 2) naming the option, the expected range and the value."""
    typer.echo(f"error: {option} must be {expected}; got {raw!r}{why}", err=True)
    raise typer.Exit(code=2)


def _check_range(value: float | None, option: str, *, low: float, high: float | None = None,
                 open_low: bool = False, open_high: bool = True, integer: bool = False) -> None:
    """A numeric option of the CLI itself in its range, else a usage error (exit 2) naming the
    option, the range and what was received (``None``: not given)."""
    if value is None:
        return
    ok = (value > low if open_low else value >= low) and (
        high is None or (value < high if open_high else value <= high)) and not (
        isinstance(value, float) and math.isnan(value))
    if ok:
        return
    what = "an integer" if integer else "a number"
    rng = (f"{low:g} {'<' if open_low else '<='} {option.lstrip('-').upper()}"
           + ("" if high is None else f" {'<' if open_high else '<='} {high:g}"))
    _usage_error(option, f"{what} with {rng}", str(value))


def _check_choice(value: str, option: str, choices: tuple[str, ...]) -> None:
    """An enumerated option of the CLI: a usage error (exit 2) with a did-you-mean."""
    if value in choices:
        return
    from dpreg._validation import did_you_mean

    _usage_error(option, "one of " + ", ".join(choices), value,
                 did_you_mean(value, choices))


def _cli_warning(text: str) -> None:
    typer.echo(f"warning: {text}", err=True)


def _read_number(raw: str, option: str, expected: str) -> Decimal | None:
    """The exact decimal value of ``raw`` (``None`` for inf/infinity); anything that is not a
    plain decimal number (nan, -inf, hex, words) is a usage error."""
    text = str(raw).strip()
    if text.lower() in _INFINITY:
        return None
    from dpreg._validation import ASCII_NUMBER  # the one whitelist of typed numbers

    if not ASCII_NUMBER.fullmatch(text):
        _usage_error(option, expected, raw, _not_a_number_why(text))
    return Decimal(text)


def parse_epsilon(raw: str, *, option: str = "--epsilon", not_private: bool = False,
                  has_flag: bool = True) -> float:
    """ε from the command line: a number with 1e-100 <= ε <= :data:`~dpreg.privacy.EPSILON_MAX`
    (100; above it the noise is below the printed precision of the outputs: no privacy in
    practice); ``inf``/``infinity`` or a finite ε above the cap only with ``not_private``, and
    then it is ``inf`` (any literal that overflows a double such as ``1e309`` is refused even
    then: write ``inf``).  ``has_flag``: the command has ``--not-private`` (the messages then
    mention it)."""
    from dpreg._validation import EPSILON_MAX, PRIVACY_PARAM_MIN

    expected = f"a number with {PRIVACY_PARAM_MIN:g} <= EPS <= {EPSILON_MAX:g} (e.g. 1)"
    exact = _read_number(raw, option, expected)
    if exact is None:
        if not_private:
            return math.inf
        _usage_error(option, expected, raw, ": an infinite epsilon releases the exact, NOT "
                     "PRIVATE result" + ("; add --not-private if that is what you want"
                                         if has_flag else ""))
    value = float(exact)
    if math.isinf(value):
        _usage_error(option, expected, raw, ": it overflows a double to inf, which would "
                     "release the exact, NOT PRIVATE result" + (
                         " (for a non-private reference run write --epsilon inf "
                         "--not-private)" if has_flag else ""))
    if exact <= 0 or value < PRIVACY_PARAM_MIN:
        _usage_error(option, expected, raw, " (it underflows to 0 as a double)"
                     if exact > 0 and value == 0 else "")
    if exact > Decimal(repr(EPSILON_MAX)):
        if not_private:
            _cli_warning(f"{option} {str(raw).strip()} is above the cap {EPSILON_MAX:g}: run as "
                         f"{option} inf (the exact, NOT PRIVATE result)")
            return math.inf
        _usage_error(option, expected, raw, f": above {EPSILON_MAX:g} the noise is below the "
                     "printed precision of the outputs, which is no privacy in practice" + (
                         "; add --not-private for a NOT PRIVATE reference run (the exact "
                         "result, as with --epsilon inf)" if has_flag else ""))
    return value


def parse_delta(raw: str | None, *, option: str = "--delta", not_private: bool = False
                ) -> float | None:
    """δ from the command line: 0 or a number in [2.2e-308, 0.5) (up to 1 with
    ``not_private``), exact as typed up to double rounding -- never silently 0."""
    if raw is None:
        return None
    top = "1" if not_private else "0.5"
    expected = f"a number with 0 <= DELTA < {top}, much smaller than 1/n (e.g. 1e-6)"
    exact = _read_number(raw, option, expected)
    if exact is None or exact < 0 or exact >= 1:
        _usage_error(option, expected, raw, " (delta is a probability)")
    value = float(exact) + 0.0  # -0 becomes 0
    if exact > 0 and value < DELTA_MIN:
        _usage_error(option, expected, raw, f": it is below the smallest normal double "
                     f"({DELTA_MIN:.3g}) and would be rounded"
                     + (" to 0 -- pure DP, a different claim" if value == 0 else "")
                     + "; write 0 for pure DP")
    if exact >= Decimal("0.5") and not not_private:
        _usage_error(option, expected, raw, ": with delta >= 0.5 a mechanism may publish "
                     "records outright with that probability, which is no privacy guarantee; "
                     "add --not-private to run anyway")
    return value


def privacy_options(epsilon: str, delta: str | None, not_private: bool, *,
                    eps_option: str = "--epsilon") -> tuple[float, float | None]:
    """Parse ε and δ of one command, check that ``--not-private`` is used for what it allows,
    and print the one-line warnings (large δ, NOT PRIVATE run)."""
    from dpreg.privacy.notices import NOT_PRIVATE_NOTICE, large_delta_message

    eps = parse_epsilon(epsilon, option=eps_option, not_private=not_private)
    dlt = parse_delta(delta, not_private=not_private)
    if not_private and math.isfinite(eps) and (dlt is None or dlt < 0.5):
        _usage_error("--not-private", f"used with {eps_option} inf (or above the cap) or "
                     "--delta >= 0.5 (it allows nothing else)",
                     f"{eps_option} {epsilon}", "; drop --not-private for a private run")
    text = large_delta_message(dlt, shown="--delta")
    if text is not None:
        _cli_warning(text)
    if math.isinf(eps):
        _cli_warning(f"--not-private: {NOT_PRIVATE_NOTICE}")
    return eps, dlt


def warn_seed(seed: int | None) -> None:
    """One stderr line when ``--seed`` cannot carry 128 bits of entropy (below 2**96)."""
    from dpreg.privacy.notices import weak_seed, weak_seed_message

    if seed is not None and weak_seed(seed):
        _cli_warning(weak_seed_message(f"--seed {seed}"))


_SEED_HELP = ("Seed (reproducible). The release is private only if the seed is secret and has "
              ">= 128 bits of entropy: omit it for a real release (secure mode).")


def _warn_delta_per_n(delta: float | None, nobs: int | None) -> None:
    """δ >= 1/n where n is public (replace-one results); δ >= 1e-3 was said already."""
    from dpreg.privacy.notices import large_delta_message

    if nobs and large_delta_message(delta) is None:
        text = large_delta_message(delta, n_public=nobs, shown="--delta")
        if text is not None:
            _cli_warning(text)


def _method_entry(method: str) -> Any:
    """The spec of ``--method`` (a misspelt name: usage error, exit 2, with a did-you-mean) --
    checked before any data is read."""
    from dpreg import methods

    try:
        return methods.get(method)
    except DPRegError as exc:
        _fail(exc)
        raise  # pragma: no cover - _fail exits


def _warn_ignored(entry: Any, delta: float | None, one_regressor: bool) -> None:
    """``warning:`` lines for parameters the method will not use (the run continues): a δ
    given to a release that is pure ε-DP (``needs --delta`` is "no" in ``dpreg methods``, or
    "with 2+ regressors" and there is one)."""
    if delta is None or delta == 0:
        return
    if entry.delta == "never" or (entry.delta == "multi-x" and one_regressor):
        why = "is pure ε-DP" if entry.delta == "never" else "is pure ε-DP with one regressor"
        _cli_warning(f"--delta {delta:g} is ignored: --method {entry.name} {why} (it spends "
                     "only ε; see `dpreg methods`)")


def _check_ci_supported(entry: Any, ci: float | None) -> None:
    """``--ci`` with a method that never has an interval (its spec's ``interval.request`` is
    ``"none"``): a usage error (exit 2) before any data is read or budget charged, with the
    reason."""
    if ci is None:
        return
    if entry.interval.request == "none":
        why = _cli_text(entry.interval.missing.removeprefix("none: "))
        _usage(f"--ci is not supported by --method {entry.name}: {why}")


def _notice_fields(eps: float, seed: int | None) -> dict[str, Any]:
    """``private``, ``seeded`` and ``notice`` of a command's JSON/text output (the same
    notices as :attr:`dpreg.PrivacyStatement.notices`)."""
    from dpreg.privacy.notices import NOT_PRIVATE_NOTICE, SEED_NOTICE

    notices = ([NOT_PRIVATE_NOTICE] if math.isinf(eps) else []) + (
        [SEED_NOTICE] if seed is not None else [])
    return {"private": math.isfinite(eps), "seeded": seed is not None,
            "notice": " | ".join(notices)}


@contextmanager
def _library_warnings() -> Iterator[None]:
    """Library warnings as one ``warning: ...`` line each; the weak-seed and large-δ warnings
    are left out (the CLI has said them already, naming the option)."""
    from dpreg.exceptions import LargeDeltaWarning, WeakSeedWarning

    def show(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        _cli_warning(str(message))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakSeedWarning)
        warnings.simplefilter("ignore", LargeDeltaWarning)
        warnings.showwarning = show
        yield


# ------------------------------------------------------------------ fit
@app.command()
def fit(
    data: Annotated[Path, typer.Argument(help="CSV file with a header row, or a Parquet file.")],
    y: Annotated[str, typer.Option("--y", help="Response column.")],
    x: Annotated[list[str], typer.Option("--x", help="Regressor column (repeat for several), "
                                         "or one formula term such as 'log(income)'.")],
    method: Annotated[str, typer.Option("--method", "-m", help="Method name (see `dpreg methods`).")],
    epsilon: Annotated[str, typer.Option("--epsilon", "-e", metavar="EPS",
                                         help="Privacy budget ε of this fit.")],
    bounds: Annotated[list[str] | None, typer.Option(
        "--bounds", "-b", help="Public bounds COL=LO:HI for the response and every raw "
        "regressor column (bounds of formula terms are derived from them; with --method auto: "
        "'private' or COL=private spends part of ε on DP bounds).")] = None,
    delta: Annotated[str | None, typer.Option("--delta", "-d", metavar="DELTA",
                                              help="δ (methods that need it).")] = None,
    no_intercept: Annotated[bool, typer.Option("--no-intercept", help="Fit without intercept.")] = False,
    ci: Annotated[float | None, typer.Option("--ci", parser=_ascii_float,
        help="Also report (1-ALPHA) intervals.")] = None,
    option: Annotated[list[str] | None, typer.Option(
        "--option", "-o", help="Method hyperparameter KEY=VALUE (repeatable).")] = None,
    seed: Annotated[int | None, typer.Option("--seed", parser=_ascii_int, help=_SEED_HELP)] = None,
    ledger: Annotated[Path | None, typer.Option("--ledger", help="Charge this persistent ledger.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    not_private: Annotated[bool, typer.Option("--not-private", help=_NOT_PRIVATE_HELP)] = False,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Also draw the coefficients with their DP-aware (1-ALPHA) intervals to "
        "this file (.png, .pdf, .svg).")] = None,
    allow_unreliable: Annotated[bool, typer.Option(
        "--allow-unreliable", help="With --method auto --bounds private: fit even when the "
        "DP bounds leave too little for a useful release (warns; JSON reliable=false).")] = False,
    backend: Annotated[str, typer.Option("--backend", help=_BACKEND_HELP)] = "local",
    codebook: Annotated[Path | None, typer.Option("--codebook", help=_CODEBOOK_HELP)] = None,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress",
                                                  help=_PROGRESS_HELP)] = None,
) -> None:
    """Fit one DP regression of Y on X from a CSV or Parquet file."""
    opts = parse_options(option, command="fit")
    eps, dlt = privacy_options(epsilon, delta, not_private)
    warn_seed(seed)
    bmap = parse_bounds(bounds)
    _check_choice(backend, "--backend", ("local", "spark"))
    _check_range(ci, "--ci", low=0, high=1, open_low=True)
    entry = _method_entry(method)
    _check_ci_supported(entry, ci if ci is not None else opts.get("ci_alpha"))
    try:
        _check_plot_extra(plot)
        from dpreg._formula import formula_from_columns
        from dpreg._progress import interactive, rich_bars, spinner
        from dpreg.api import needs_memory_message, regress, source_methods
        from dpreg.exceptions import InvalidInputError

        # the formula is built from the header alone (each --y/--x a column name, or one term
        # of the restricted grammar), before any value of the data is read
        parsed = formula_from_columns(y, x, _header(data), intercept=not no_intercept)
        formula = parsed.text()
        _warn_ignored(entry, dlt, len(x) == 1 and not parsed.categorical_calls()
                      and not any(op in x[0] for op in "*:"))
        if backend == "spark":  # the executors read the file and sum the statistics
            if method not in source_methods():  # why, and what to do (the local backend)
                raise InvalidInputError(f"--backend spark: {needs_memory_message(method)} "
                                        "(here: the default --backend local reads DATA into "
                                        "memory)")
            frame = _spark_frame(data)
        elif method in source_methods() and _is_parquet(data):
            frame = str(data)  # streamed in chunks: memory bounded by the chunk
        else:
            frame = _read_table(data)
        led = _open_ledger(ledger, use_default=True)
        if ci is not None:
            opts.setdefault("ci_alpha", ci)
        if allow_unreliable:
            opts["allow_unreliable"] = True
        from dpreg.privacy import release_context

        # bars on stderr (only on a terminal or with --progress): a spinner for the fit and
        # the intervals, with a bar per prediction point / bootstrap batch inside
        with rich_bars(interactive(progress)):
            with _library_warnings(), release_context(entry="dpreg fit", data=str(data)), \
                    spinner(f"fitting {method}"):
                res = regress(frame, formula, method=method, epsilon=eps, bounds=bmap,
                              delta=dlt, ledger=led, random_state=seed, codebook=codebook,
                              **opts)
            _warn_delta_per_n(dlt, res.nobs)
            with spinner("computing the intervals (parametric bootstrap of the release)"):
                ci_frame = _intervals(res, ci)  # the release is spent: shown even without a CI
                # the summary's intervals (a bootstrap where the method has one) are drawn
                # here, under the spinner; printing below reuses them
                summary_text = None if as_json else _cli_text(str(res.summary(alpha=ci)))
        _plot_result(res, plot, ci)
    except DPRegError as exc:
        _fail(exc)
        return
    if as_json:
        out = _result_json(res, ci, ci_frame)
        out["method"] = method
        out["reliable"] = bool(res.extra.get("reliable", True))
        auto = res.extra.get("auto")
        if auto is not None:  # --method auto: what was chosen, what the choice and bounds cost
            from dpreg._json import jsonable

            out["chosen_method"] = auto.get("method")
            out["selection"] = jsonable({k: v for k, v in auto.items() if k != "private_bounds"})
            out["private_bounds"] = {k: list(v) for k, v in auto.get("private_bounds", {}).items()}
        if led is not None:
            out["ledger"] = _ledger_line(led)
        _print_json(out)
        return
    console.print(summary_text, highlight=False)
    if led is not None:
        console.print(_ledger_line(led)["text"], highlight=False)
    if res.failed:
        raise typer.Exit(code=1)


@app.command()
def methods(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List the method names accepted by --method (the method registry)."""
    from dpreg.methods import specs as registered

    needs = {"always": "yes", "never": "no", "multi-x": "with 2+ regressors"}
    if as_json:
        _print_json([{"name": m.name, "regressors": "one" if m.one_x_only else "one or more",
                      "needs_delta": m.delta, "neighbouring": m.relation,
                      "guarantee": m.guarantee, "algorithm": m.algorithm}
                     for m in registered()])
        return
    _print_table("dpreg methods", ["method", "regressors", "needs --delta", "neighbours",
                                   "algorithm"],
                 [[m.name, "exactly 1" if m.one_x_only else "1 or more", needs[m.delta],
                   m.relation, m.algorithm] for m in registered()],
                 no_wrap=("method", "regressors", "neighbours"))


@app.command()
def datasets(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List the real and simulated data sets that ship with dpreg's dependencies."""
    from dpreg.data import list_datasets

    listed = list_datasets()
    if as_json:
        _print_json([{"name": k, "description": v} for k, v in listed.items()])
        return
    _print_table("dpreg.data.load_dataset(name)", ["name", "description"],
                 [[k, v] for k, v in listed.items()], no_wrap=("name",))


# ------------------------------------------------------------------ per-group fits
@app.command("fit-groups")
def fit_groups(
    data: Annotated[Path, typer.Argument(help="CSV file with a header row, or a Parquet file "
                                         "(with --backend spark, read by the executors).")],
    by: Annotated[str, typer.Option("--by", help="Group key column (keys are treated as public).")],
    y: Annotated[str, typer.Option("--y", help="Response column.")],
    x: Annotated[str, typer.Option("--x", help="The regressor column.")],
    method: Annotated[str, typer.Option("--method", "-m", help="Method name.")],
    epsilon: Annotated[str, typer.Option("--epsilon", "-e", metavar="EPS",
                                         help="ε per group (parallel composition).")],
    out: Annotated[Path, typer.Option("--out", help="Output CSV, one row per group.")],
    bounds: Annotated[list[str] | None, typer.Option(
        "--bounds", "-b", help="Public bounds COL=LO:HI.")] = None,
    groups_file: Annotated[Path | None, typer.Option(
        "--groups-file", help="Text file with the public list of group keys (one per line; "
        "surrounding whitespace is ignored). Required unless --keys-from-data.")] = None,
    keys_from_data: Annotated[bool, typer.Option(
        "--keys-from-data", help="Take the group keys from the data instead of --groups-file: "
        "the key set is then NOT protected (the output reveals which groups occur).")] = False,
    delta: Annotated[str | None, typer.Option("--delta", "-d", metavar="DELTA")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o")] = None,
    seed: Annotated[int | None, typer.Option("--seed", parser=_ascii_int, help=_SEED_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    backend: Annotated[str, typer.Option(
        "--backend", help="local (vectorised), reference (per-group loop) or spark.")] = "local",
    workers: Annotated[int | None, typer.Option(
        "--workers", "-j", parser=_ascii_int, help="Workers for the per-group parts of the local backend "
        "(processes on Linux for >= 200 groups, else threads).")] = None,
    not_private: Annotated[bool, typer.Option("--not-private", help=_NOT_PRIVATE_HELP)] = False,
    ledger: Annotated[Path | None, typer.Option(
        "--ledger", help="Charge this persistent ledger once for the whole table (parallel "
        "composition), before any group is released.")] = None,
    ci: Annotated[float | None, typer.Option(
        "--ci", parser=_ascii_float,
        metavar="ALPHA", help="Per-group (1-ALPHA) intervals: lower_/upper_ columns "
        "for the slope (theil-sen-*: ε/2 on the slope interval) and, for noisy-stats, the "
        "predictions (post-processing of the inference release), plus informative_slope. "
        "Same as -o ci_alpha=ALPHA.")] = None,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Also draw the per-group estimates (with their intervals, and the ECDF "
        "of the interval widths, when the table has interval columns) to this file.")] = None,
    codebook: Annotated[Path | None, typer.Option(
        "--codebook", help=_CODEBOOK_HELP + " Its [groups] keys are the public key list when "
        "--groups-file is not given.")] = None,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress",
                                                  help=_PROGRESS_HELP)] = None,
) -> None:
    """Fit one DP regression per group (disjoint groups: parallel composition, ε per group)."""
    opts = parse_options(option, command="fit-groups")
    eps, dlt = privacy_options(epsilon, delta, not_private)
    warn_seed(seed)
    bmap = parse_bounds(bounds)
    _check_range(ci, "--ci", low=0, high=1, open_low=True)
    _check_range(workers, "--workers", low=1, integer=True)
    _check_choice(backend, "--backend", ("local", "reference", "spark"))
    if ci is not None:
        opts.setdefault("ci_alpha", ci)
    if groups_file is not None and keys_from_data:
        _usage("give either --groups-file (the public key list) or --keys-from-data, not both")
    entry = _method_entry(method)
    _check_ci_supported(entry, opts.get("ci_alpha"))
    _warn_ignored(entry, dlt, True)
    try:
        _check_plot_extra(plot)
        import pandas as pd

        from dpreg._progress import interactive, rich_bars
        from dpreg.codebook import resolve_codebook
        from dpreg.exceptions import InvalidInputError
        from dpreg.grouped import fit_by_group

        header = _header(data)
        _check_columns(header, {"--by": [by], "--y": [y], "--x": [x]})
        cb = resolve_codebook(codebook, header)
        cb_keys = cb is not None and cb.group_keys is not None and cb.group_by in (None, by)
        if groups_file is None and not keys_from_data and not cb_keys:
            raise InvalidInputError(
                "the group keys must be declared: --groups-file FILE lists the public keys (one "
                "per line; every listed key gets a row, so the output does not reveal which "
                "groups occur), a --codebook with [groups] keys, or --keys-from-data takes them "
                "from the data (the key set is then NOT protected)")
        keys: Any = "from-data" if keys_from_data else None  # None: the codebook's keys
        if backend == "spark":  # the executors read the file; the driver only its schema
            from dpreg._source import FileSource

            if not data.exists():
                raise InvalidInputError(f"DATA file {data} does not exist")
            frame: Any = str(data)
            schema = FileSource(data)._schema
            key_col = (pd.Series([], dtype=schema.field(by).type.to_pandas_dtype())
                       if by in schema.names else None)
        else:
            frame = _read_table(data)
            key_col = frame[by] if by in frame.columns else None
        if groups_file is not None:
            from dpreg.grouped import parse_key_list

            keys = parse_key_list(_read_text(groups_file, "--groups-file").splitlines(),
                                  key_col)
        led = _open_ledger(ledger, use_default=True)
        from dpreg.privacy import release_context

        # a bar over the groups (per-group loop) or a spinner (vectorised); on stderr
        with rich_bars(interactive(progress)), _library_warnings(), \
                release_context(entry="dpreg fit-groups", data=str(data)):
            table = fit_by_group(frame, by, x, y, method=method, epsilon=eps, bounds=bmap,
                                 delta=dlt, groups=keys, random_state=seed,
                                 progress=interactive(progress), backend=backend,
                                 workers=workers, ledger=led, codebook=cb, **opts)
    except DPRegError as exc:
        _fail(exc)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    if plot is not None:
        try:
            from dpreg.inference.plots import plot_groups, use_file_backend

            use_file_backend()
            _save_figure(plot_groups(table), plot)
        except DPRegError as exc:
            _fail(exc)
            return
    summary = {"groups": int(len(table)), "failed": int(table["failed"].sum()),
               "out": str(out), "privacy": table.attrs.get("privacy", ""),
               **_notice_fields(eps, seed)}
    if "informative_slope" in table.columns:  # read from the released table
        flags = table["informative_slope"]
        summary["intervals"] = {
            "level": 1 - float(opts["ci_alpha"]),
            "columns": [c for c in table.columns if str(c).startswith(("lower_", "upper_"))],
            "not_informative": int((flags == False).sum()),  # noqa: E712 (nullable booleans)
            # released groups without an interval: noisy-stats' interval rule refused it at
            # the group's public n and ε, or from the group's release
            "refused": int((~table["failed"].astype(bool) & table["lower_slope"].isna()).sum())}
        ok = [int(m) for m in table.loc[~table["failed"].astype(bool), "n"] if int(m) >= 2]
        tight = entry.tight_intervals(epsilon=eps, sizes=ok, options=opts) \
            if math.isfinite(eps) else None
        if tight is not None:
            # which released groups got the method's conservative fallback interval (Theil-Sen:
            # tight instead of calibrated): the fit's own public rule at each group's n
            summary["intervals"]["tight"] = int(sum(bool(t) for t in tight))
    if plot is not None:
        summary["plot"] = str(plot)
    if led is not None:
        summary["ledger"] = _ledger_line(led)
    if as_json:
        _print_json(summary)
    else:
        console.print(f"wrote {summary['groups']} group releases ({summary['failed']} ⊥) to {out}")
        if "intervals" in summary:
            iv = summary["intervals"]
            console.print(f"(1-{opts['ci_alpha']:g}) intervals in {', '.join(iv['columns'])}; "
                          f"{iv['not_informative']} slope intervals NOT informative "
                          "(informative_slope=False: an end at the search range, flagged "
                          "unreliable, or refused)" + (
                              f"; {iv['refused']} refused (NA) by noisy-stats' interval rule: "
                              "too few rows for this ε in those groups, or their release does "
                              "not show x's spread above its noise"
                              if iv["refused"] else "") + (
                              f"; {iv['tight']} groups have the conservative tight Theil-Sen "
                              "interval (n·ε below about 200: the calibrated one is not "
                              "offered there)" if iv.get("tight") else ""), highlight=False)
        console.print(summary["privacy"], highlight=False)
        if led is not None:
            console.print(summary["ledger"]["text"], highlight=False)


# ------------------------------------------------------------------ covariance release
@app.command("release-cov")
def release_cov(
    data: Annotated[Path, typer.Argument(help="CSV file with a header row, or a Parquet file "
                                         "(streamed in chunks).")],
    columns: Annotated[list[str], typer.Option("--columns", "-c", help="Columns to release (repeat).")],
    epsilon: Annotated[str, typer.Option("--epsilon", "-e", metavar="EPS")],
    delta: Annotated[str, typer.Option("--delta", "-d", metavar="DELTA")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the release (JSON).")],
    bounds: Annotated[list[str] | None, typer.Option(
        "--bounds", "-b", help="Public bounds COL=LO:HI.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", parser=_ascii_int, help=_SEED_HELP)] = None,
    ledger: Annotated[Path | None, typer.Option("--ledger")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    not_private: Annotated[bool, typer.Option("--not-private", help=_NOT_PRIVATE_HELP)] = False,
    backend: Annotated[str, typer.Option("--backend", help=_BACKEND_HELP)] = "local",
    codebook: Annotated[Path | None, typer.Option("--codebook", help=_CODEBOOK_HELP)] = None,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress",
                                                  help=_PROGRESS_HELP)] = None,
    key: Annotated[Path | None, typer.Option("--key", help=_RELEASE_KEY_HELP)] = None,
) -> None:
    """Release a DP SSCP (covariance) matrix once; analyse it later with `dpreg regress`.

    The file carries an integrity record: the SHA-256 digest of its content and, with --key,
    an HMAC-SHA256 and the key's id (never the key); `dpreg regress` refuses a file altered
    after it was written."""
    eps, dlt = privacy_options(epsilon, delta, not_private)
    assert dlt is not None  # --delta is a required option
    warn_seed(seed)
    bmap = parse_bounds(bounds)
    cols: list[str] = []
    for c in columns:
        cols.extend(part for part in c.split(",") if part)
    _check_choice(backend, "--backend", ("local", "spark"))
    try:
        from dpreg._integrity import resolve_key
        from dpreg.covariance import release_sscp
        from dpreg.privacy import release_context

        signing = resolve_key(_release_key(key), "--key")  # read before anything is charged
        _check_columns(_header(data), {"--columns": cols})
        if backend == "spark":
            frame: Any = _spark_frame(data)
        elif _is_parquet(data):
            frame = str(data)  # streamed in chunks: memory bounded by the chunk, not the file
        else:
            frame = _read_csv(data)
        led = _open_ledger(ledger, use_default=True)
        from dpreg._progress import interactive, spinner

        with _library_warnings(), release_context(entry="dpreg release-cov", data=str(data)), \
                spinner(f"releasing the SSCP matrix of {len(cols)} columns",
                        enabled=interactive(progress)):
            rel = release_sscp(frame, columns=cols, bounds=bmap, epsilon=eps, delta=dlt,
                               rng=seed, ledger=led, codebook=codebook)
        rel.save(out, key=signing)
        record = json.loads(out.read_text(encoding="utf-8"))["integrity"]
    except DPRegError as exc:
        _fail(exc)
        return
    fields = _notice_fields(eps, seed)
    if led is not None:
        fields["ledger"] = _ledger_line(led)
    integrity = {"sha256": record["sha256"], "key_id": record.get("key_id"),
                 "hmac": "hmac_sha256" in record}
    if as_json:
        _print_json({"out": str(out), "columns": cols, "epsilon": eps, "delta": dlt,
                     "integrity": integrity, **fields})
    else:
        what = (f"NOT PRIVATE SSCP matrix (ε=inf: exact, no noise) of {len(cols)} columns"
                if math.isinf(eps) else
                f"DP SSCP release of {len(cols)} columns")
        claim = "" if math.isinf(eps) else f" ((ε={eps:g}, δ={dlt:g})-DP)"
        console.print(f"wrote {what} to {out}{claim}; analyse it with: dpreg regress {out} "
                      f"\"{cols[-1]} ~ {' + '.join(cols[:-1]) or '1'}\"", highlight=False)
        console.print(f"integrity: sha256 {integrity['sha256']}"
                      + (f"; signed with HMAC-SHA256, key id {integrity['key_id']}"
                         if integrity["hmac"] else "; not signed (no --key)"),
                      highlight=False, soft_wrap=True)
        if fields["notice"]:
            console.print(fields["notice"], highlight=False)
        if led is not None:
            console.print(fields["ledger"]["text"], highlight=False)


@app.command()
def regress(
    release: Annotated[Path, typer.Argument(help="A release written by `dpreg release-cov`.")],
    formula: Annotated[str, typer.Argument(help='Formula over released columns, e.g. "y ~ x1 + x2".')],
    as_json: Annotated[bool, typer.Option("--json")] = False,
    ci: Annotated[float | None, typer.Option(
        "--ci", parser=_ascii_float,
        help="Report (1-ALPHA) DP-aware intervals (default level 0.05 in the summary).")] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", parser=_ascii_int,
        help="Seed of the interval's simulation (post-processing: it does not affect "
        "privacy). Default: derived from the release file and the formula, so the same "
        "release gives the same intervals on every run.")] = None,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Also draw the coefficients with their intervals to this file.")] = None,
    key: Annotated[Path | None, typer.Option(
        "--key", help=f"Key file the release was signed with: its HMAC-SHA256 must match "
        f"(default: ${RELEASE_KEY_ENV} if set).")] = None,
    expect_digest: Annotated[str | None, typer.Option(
        "--expect-digest", metavar="SHA256",
        help="The release's SHA-256 digest as obtained out of band (e.g. published by the "
        "curator): the file must match it.")] = None,
    verify: Annotated[bool, typer.Option(
        "--verify/--no-verify", help="--no-verify reads a file that fails its integrity check "
        "(altered after it was written) anyway; every output then says UNVERIFIED.")] = True,
) -> None:
    """OLS on a released DP SSCP matrix (post-processing: no further privacy cost).

    The file's integrity record is checked first: a file altered after it was written is
    refused (--no-verify reads it, marked UNVERIFIED); the outcome is printed and is the JSON
    field release_integrity."""
    _check_range(ci, "--ci", low=0, high=1, open_low=True)
    try:
        _check_plot_extra(plot)
        from dpreg._integrity import check_hex_digest
        from dpreg.covariance import SSCPRelease

        rel = SSCPRelease.load(release, key=_release_key(key), verify=verify,
                               expect_digest=check_hex_digest(expect_digest, "--expect-digest"))
        res = rel.regress(formula, rng=_release_seed(release, formula) if seed is None
                          else seed)
        ci_frame = _intervals(res, ci)
        _plot_result(res, plot, ci)
    except DPRegError as exc:
        _fail(exc)
        return
    status = rel.integrity
    if status is not None and not status.verified:
        _cli_warning(f"release file {release} is UNVERIFIED: {status.detail}")
    if as_json:
        out = _result_json(res, ci, ci_frame)
        out["release_integrity"] = None if status is None else status.as_dict()
        _print_json(out)
    else:
        _print_summary(res, ci)
        if status is not None:
            console.print(f"release file {release}: {status.label}: {status.detail}"
                          + (f"; sha256 {status.digest}" if status.digest else ""),
                          highlight=False, soft_wrap=True)


def _release_key(key: Path | None) -> Path | None:
    """``--key``, else ``$DPREG_KEY``, else None."""
    import os

    if key is None and os.environ.get(RELEASE_KEY_ENV):
        return Path(os.environ[RELEASE_KEY_ENV])
    return key


def _release_seed(path: Path, formula: str) -> int:
    """The default seed of ``dpreg regress``: a hash of the release file's bytes and the
    formula (public: the file is a DP release), so reruns give the same intervals."""
    import hashlib

    digest = hashlib.sha256(path.read_bytes() + b"\0" + formula.encode("utf-8")).digest()
    return int.from_bytes(digest[:16], "little")


# ------------------------------------------------------------------ plan
@app.command("plan")
def plan_cmd(
    y: Annotated[str, typer.Option("--y", help="Response column.")],
    x: Annotated[list[str], typer.Option("--x", help="Regressor column (repeat for several).")],
    method: Annotated[str, typer.Option("--method", "-m", help="Method name.")],
    n: Annotated[int, typer.Option("--n", parser=_ascii_int, help="The public number of rows.")],
    bounds: Annotated[list[str] | None, typer.Option(
        "--bounds", "-b", help="Public bounds COL=LO:HI (added to --codebook's).")] = None,
    codebook: Annotated[Path | None, typer.Option(
        "--codebook", help="TOML codebook: public bounds and, where declared, the public "
        "mean/sd/corr the plan's design uses (docs/codebook.md).")] = None,
    design: Annotated[str | None, typer.Option(
        "--design", metavar="uniform|PUBLIC.csv",
        help="The plan's public design: 'uniform' (ignore declared moments) or a CSV/Parquet "
        "file that is a PUBLIC reference sample (never the private data).")] = None,
    ledger: Annotated[Path | None, typer.Option(
        "--ledger", help="Show the price of the release on this ledger (nothing is "
        "charged).")] = None,
    epsilon: Annotated[str | None, typer.Option("--epsilon", "-e", metavar="EPS")] = None,
    delta: Annotated[str | None, typer.Option("--delta", "-d", metavar="DELTA")] = None,
    target_sd: Annotated[float | None, typer.Option(
        "--target-sd", parser=_ascii_float,
        help="Solve for the smallest ε whose noise sd meets this.")] = None,
    target: Annotated[str | None, typer.Option(
        "--target", help="Coefficient name or 'prediction' for --target-sd (default: the "
        "largest slope sd).")] = None,
    seed: Annotated[int, typer.Option("--seed", parser=_ascii_int, help="Seed of the public design.")] = 0,
    n_sim: Annotated[int, typer.Option("--n-sim", parser=_ascii_int, help="Simulated releases.")] = 200,
    option: Annotated[list[str] | None, typer.Option("--option", "-o")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Expected error of a release (noise sd, bias, RMSE, P(⊥), price) from public inputs
    only: the bounds, n and a public design (nothing private is read, nothing is charged)."""
    eps = None if epsilon is None else parse_epsilon(epsilon, has_flag=False)
    dlt = parse_delta(delta)
    opts = parse_options(option, command="plan")
    _check_range(n, "--n", low=2, integer=True)
    _check_range(n_sim, "--n-sim", low=10, integer=True)
    _check_range(target_sd, "--target-sd", low=0, open_low=True)
    try:
        from dpreg.planner import plan

        formula = f"{y} ~ {' + '.join(x)}"
        des: Any = design
        if design is not None and design != "uniform":
            from dpreg.exceptions import InvalidInputError

            if not Path(design).exists():
                raise InvalidInputError(f"--design {design}: no such file (give 'uniform' or "
                                        "a PUBLIC reference sample as CSV or Parquet)")
            des = _read_table(Path(design))  # a public reference sample, by the user's word
        led = None if ledger is None else _open_ledger(ledger)
        res = plan(method, eps, dlt, n=n, bounds=parse_bounds(bounds) if bounds else None,
                   codebook=codebook, design=des, ledger=led, formula=formula,
                   target_sd=target_sd, target=target, seed=seed, n_sim=n_sim, **opts)
    except DPRegError as exc:
        _fail(exc)
        return
    if as_json:
        _print_json(res.to_dict())
    else:
        console.print(str(res), highlight=False)


# ------------------------------------------------------------------ codebook
@codebook_app.command("init")
def codebook_init(
    data: Annotated[Path, typer.Argument(help="CSV file (only its header line is read) or a "
                                         "Parquet file (only its schema is read).")],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Write the template here (default: standard output).")] = None,
) -> None:
    """Write a codebook template: the data's column names with EMPTY bounds to fill in from
    public knowledge (no value of the data is read)."""
    try:
        from dpreg.codebook import codebook_template
        from dpreg.exceptions import InvalidInputError

        if not data.exists():
            raise InvalidInputError(f"DATA file {data} does not exist")
        if _is_parquet(data):  # the schema's names
            header = _header(data)
        else:  # the first record only, refused when it looks like a data row
            from dpreg._source import csv_header

            header = csv_header(data)
        text = codebook_template(header)
        if out is None:
            sys.stdout.write(text)
            return
        if out.exists():
            raise InvalidInputError(f"{out} already exists; not overwritten")
        out.write_text(text, encoding="utf-8")
    except DPRegError as exc:
        _fail(exc)
        return
    console.print(f"wrote a codebook template for {len(header)} columns to {out}: fill in the "
                  "public bounds (and levels) before using it with --codebook", highlight=False)


# ------------------------------------------------------------------ ledger
@ledger_app.command("init")
def ledger_init(
    path: Annotated[Path, typer.Argument(help="SQLite file to create.")],
    epsilon: Annotated[str, typer.Option("--epsilon", "-e", metavar="EPS", help="Total ε.")],
    delta: Annotated[str, typer.Option("--delta", "-d", metavar="DELTA",
                                       help="Total δ (0: pure DP ledger).")] = "0",
    neighbouring: Annotated[str, typer.Option(
        "--neighbouring", help="The relation the ledger accounts: replace-one (default; "
        "add-remove releases are charged 2ε) or add-remove (replace-one releases are "
        "refused).")] = "replace-one",
    not_private: Annotated[bool, typer.Option(
        "--not-private", help="Allow --epsilon inf (a NOT PRIVATE ledger that refuses no "
        "charge) and --delta in [0.5, 1).")] = False,
    key: Annotated[Path | None, typer.Option(
        "--key", help="Key file of the ledger's HMAC chain (created, mode 0600, if missing; "
        f"default: ${LEDGER_KEY_ENV} if set, else PATH.key beside the ledger).")] = None,
    no_key: Annotated[bool, typer.Option(
        "--no-key", help="No key: an unkeyed SHA-256 chain, which detects accidental and naive "
        "edits but not an edit whose chain was recomputed.")] = False,
) -> None:
    """Create a persistent ledger with a total (ε,δ) budget for one neighbouring relation.

    Its events and total are protected by an HMAC-SHA256 chain under a key file (PATH.key,
    created with mode 0600 unless --key names another or --no-key): an edited, deleted,
    inserted or reordered event, a truncated history or an edited total is detected by every
    later charge and by `dpreg ledger show`.  Keep the key readable only by those who charge
    the ledger, and outside any folder others can write to."""
    if key is not None and no_key:
        _usage("--key and --no-key exclude each other")
    eps_total, delta_total = privacy_options(epsilon, delta, not_private)
    try:
        from dpreg.privacy import check_neighbouring as _relation

        _relation(neighbouring, "--neighbouring")
    except DPRegError:
        _check_choice(neighbouring.strip().lower(), "--neighbouring",
                      ("replace-one", "add-remove"))
    try:
        from dpreg import ApproxDP, Ledger, PureDP
        from dpreg.exceptions import InvalidInputError
        from dpreg.privacy import check_neighbouring

        rel = check_neighbouring(neighbouring, "--neighbouring")
        if path.exists():
            raise InvalidInputError(f"{path} already exists; use `dpreg ledger show {path}`")
        total = PureDP(eps_total) if not delta_total else ApproxDP(eps_total, delta_total)
        if total.epsilon == 0:
            raise InvalidInputError("epsilon must be a real number with 0 < epsilon; got 0.0")
        key_file = False if no_key else _ledger_key(key)
        led = Ledger(total, path, neighbouring=rel, key_file=key_file)
        status = led.integrity
        led.close()
    except DPRegError as exc:
        _fail(exc)
        return
    console.print(f"created ledger {path} with total {total} for {rel} neighbours"
                  + (" -- NOT PRIVATE: an infinite total refuses no charge"
                     if total.is_infinite else ""), highlight=False)
    if isinstance(total, PureDP):  # say now what the first (ε, δ) fit would find out
        console.print("note: without --delta this ledger accounts pure-ε releases only; "
                      "methods that need δ (`dpreg methods`, column 'needs --delta') are refused "
                      "before any data is read. Give --delta to allow them.", highlight=False,
                      soft_wrap=True)
    from dpreg.privacy.ledger import default_key_path

    if status is not None and status.key_id:
        where = key_file if isinstance(key_file, Path) else default_key_path(path)
        console.print(f"integrity: HMAC-SHA256 chain under the key file {where} (key id "
                      f"{status.key_id}); keep it readable only by those who charge the ledger",
                      highlight=False, soft_wrap=True)
    else:
        console.print("integrity: unkeyed SHA-256 chain (--no-key): detects accidental and "
                      "naive edits, not an edit whose chain was recomputed", highlight=False,
                      soft_wrap=True)


@ledger_app.command("show")
def ledger_show(
    path: Annotated[Path, typer.Argument(help="Ledger file.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
    key: Annotated[Path | None, typer.Option("--key", help=_LEDGER_KEY_HELP)] = None,
    verify: Annotated[bool, typer.Option(
        "--verify/--no-verify", help="--no-verify shows a ledger that fails its integrity check "
        "(altered, or keyed and its key missing) anyway, marked UNVERIFIED; the exit code is "
        "still 1.")] = True,
) -> None:
    """Show a ledger's total, relation, spending, events (stated and charged budgets) and its
    integrity check.  Exit code 1 when the ledger fails the check (altered outside dpreg, or
    keyed and its key missing)."""
    try:
        led = _open_ledger(path, key=key, verify=verify)
        info = led.as_dict()
        events = led.events()
        describe = led.describe()
        status = led.integrity
        led.close()
    except DPRegError as exc:
        _fail(exc)
        return
    failed = status is not None and status.status == "unverified"
    if as_json:
        _print_json(info)
        if failed:
            raise typer.Exit(code=1)
        return
    from dpreg.privacy import Budget

    def info_time(e: Any) -> str:
        return str(e.as_dict()["time"]).removesuffix(" UTC")

    total, spent, remaining = (Budget.from_dict(info[k]) for k in ("total", "spent", "remaining"))
    relation = info["neighbouring"] + (" (legacy file: no relation stored, treated as "
                                       "replace-one)" if info["legacy_relation"] else "")
    title = (f"ledger {path}: total {total} for {relation} neighbours; spent {spent}, "
             f"remaining {remaining}")
    if not _is_terminal(sys.stdout):  # piped: the title as a line, then tab-separated rows
        console.print(title, highlight=False, soft_wrap=True)
    _print_table(title, ["id", "time (UTC)", "requested", "charged", "stated (relation)",
                         "released", "label"],
                 [[str(e.id), info_time(e), "-" if e.requested is None else str(e.requested),
                   str(e.budget) + ("" if e.private else " NOT PRIVATE"),
                   f"{e.stated} ({e.neighbouring})", e.released if e.info else "-", e.label]
                  for e in events])
    console.print(f"ledger {path}: {describe}", highlight=False)
    if not info["private"]:
        console.print("NOT PRIVATE: this ledger has an infinite total or charge (a non-private "
                      "budget): its releases carry no privacy guarantee", highlight=False)
    if status is not None:
        console.print(f"integrity: {status.label}: {status.detail}"
                      + (f"; head {status.digest}" if status.digest else ""),
                      highlight=False, soft_wrap=True)
    if failed:
        err_console.print(f"[bold red]error:[/] ledger {path} is UNVERIFIED (shown with "
                          "--no-verify): its content cannot be trusted", highlight=False,
                          soft_wrap=True)
        raise typer.Exit(code=1)


@ledger_app.command("seal")
def ledger_seal(
    path: Annotated[Path, typer.Argument(help="Ledger file.")],
    key: Annotated[Path | None, typer.Option(
        "--key", help="Key file of the chain (created, mode 0600, if missing; default: "
        f"${LEDGER_KEY_ENV} if set, else PATH.key beside the ledger).")] = None,
    no_key: Annotated[bool, typer.Option(
        "--no-key", help="An unkeyed SHA-256 chain (detects accidental and naive edits only).")
    ] = False,
    reseal: Annotated[bool, typer.Option(
        "--reseal", help="Replace an existing integrity record (after its key was lost, or an "
        "alteration was inspected with `ledger show --no-verify` and accepted).")] = False,
) -> None:
    """Add an integrity chain to a ledger written by an older dpreg (it has none).

    Sealing accepts the ledger's content as it is now: inspect it first (`dpreg ledger show
    PATH`).  One write transaction: all or nothing."""
    if key is not None and no_key:
        _usage("--key and --no-key exclude each other")
    try:
        from dpreg import Ledger
        from dpreg.exceptions import InvalidInputError

        if not path.exists():
            raise InvalidInputError(f"ledger {path} does not exist")
        with Ledger(None, path, key_file=False if no_key else _ledger_key(key),
                    verify=False) as led:
            status = led.seal(reseal=reseal)
    except DPRegError as exc:
        _fail(exc)
        return
    console.print(f"sealed ledger {path}: {status.label}: {status.detail}", highlight=False,
                  soft_wrap=True)


# ------------------------------------------------------------------ keys
@key_app.command("init")
def key_init(
    path: Annotated[Path, typer.Argument(help="Key file to create (never overwritten).")],
) -> None:
    """Create a key file: 32 random bytes (Python's secrets module), mode 0600.  It signs
    release files (release-cov --key) and ledgers (ledger init --key); whoever can read it can
    also forge those signatures, so keep it private.  Prints the key's id, never the key."""
    try:
        from dpreg._integrity import create_key_file

        kid = create_key_file(path)
    except DPRegError as exc:
        _fail(exc)
        return
    console.print(f"created key file {path} (key id {kid}); keep it secret: whoever can read "
                  "it can sign altered files", highlight=False, soft_wrap=True)


@key_app.command("id")
def key_id_cmd(
    path: Annotated[Path, typer.Argument(help="Key file.")],
) -> None:
    """Print a key file's id (a hash prefix that names the key without revealing it)."""
    try:
        from dpreg._integrity import key_id, read_key_file

        kid = key_id(read_key_file(path))
    except DPRegError as exc:
        _fail(exc)
        return
    sys.stdout.write(kid + "\n")


# ------------------------------------------------------------------ demo, reproduce, audit
@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("demo-output"),
    epsilon: Annotated[str | None, typer.Option(
        "--epsilon", "-e", metavar="EPS",
        help="ε per tract (default 16, the paper's setting; --scale nation: 1).")] = None,
    trials: Annotated[int, typer.Option("--trials", parser=_ascii_int,
        help="DP runs per tract for the error measure.")] = 25,
    tracts: Annotated[int | None, typer.Option(
        "--tracts", parser=_ascii_int,
        help="Use only the first N tracts (--scale nation: a nation of N tracts; "
                         "default 73,057).")] = None,
    seed: Annotated[int, typer.Option("--seed", parser=_ascii_int, help="Seed of the evaluation runs.")] = 0,
    scale: Annotated[str, typer.Option(
        "--scale", metavar="state|nation",
        help="state: the bundled simulated state (3,108 tracts); nation: the national job on a "
             "simulated nation (73,057 tracts, ~20.9 M rows; written once as Parquet, then "
             "reused), every tract released in secure mode.")] = "state",
    method: Annotated[list[str] | None, typer.Option(
        "--method", "-m", help="--scale nation: a method to run (repeatable; 'all' for the six "
                               "simple methods; default noisy-stats, dp-intercept, dp-gd -- the "
                               "Theil-Sen variants take minutes each).")] = None,
    data: Annotated[Path | None, typer.Option(
        "--data", help="--scale nation: folder of the cached nation (default OUT/nation-N).")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress",
                                                  help=_PROGRESS_HELP)] = None,
) -> None:
    """The main job: per-tract DP regressions on the bundled simulated state, or (--scale
    nation) the national job on a simulated nation of 20.9 M people."""
    from dpreg._validation import did_you_mean
    from dpreg.exceptions import UnknownNameError

    _check_range(trials, "--trials", low=1, integer=True)
    _check_range(tracts, "--tracts", low=1, integer=True)
    try:
        if scale not in ("state", "nation"):
            raise UnknownNameError(f"--scale must be 'state' or 'nation'; got {scale!r}"
                                   f"{did_you_mean(scale, ['state', 'nation'])}")
        if scale == "state" and (method or data is not None):
            _usage("--method and --data apply to --scale nation only")
        eps = parse_epsilon(epsilon if epsilon is not None else
                            ("16" if scale == "state" else "1"), has_flag=False)
        if scale == "nation":
            _demo_nation(out, eps, tracts, method, data, as_json, progress)
            return
        from dpreg._progress import interactive
        from dpreg.demo import run_demo

        # the bar on stderr only on a terminal or with --progress; the table on stdout
        report = run_demo(out, epsilon=eps, trials=trials, max_tracts=tracts, seed=seed,
                          progress=not as_json and interactive(progress),
                          console=None if as_json else console)
    except DPRegError as exc:
        _fail(exc)
        return
    if as_json:
        _print_json(report)


def _demo_nation(out: Path, eps: float, tracts: int | None, methods: list[str] | None,
                 data: Path | None, as_json: bool, progress: bool | None) -> None:
    from dpreg._progress import interactive
    from dpreg.demo import NATION_DEMO_METHODS, NATION_METHODS, run_nation_demo

    chosen = tuple(NATION_DEMO_METHODS) if not methods else tuple(
        dict.fromkeys(m for item in methods for m in
                      (NATION_METHODS if item == "all" else (item,))))
    report = run_nation_demo(out, epsilon=eps, methods=chosen, tracts=tracts, data=data,
                             progress=interactive(progress))
    if as_json:
        _print_json(report)
        return
    _print_table(f"Simulated nation: {report['tracts']:,} tracts, {report['rows']:,} rows, "
                 f"ε={report['epsilon']:g} per tract, secure mode",
                 ["method", "seconds", "released", "⊥", "median |slope error|"],
                 [[r["method"], f"{r['seconds']:.2f}", f"{r['released']:,}", f"{r['failed']:,}",
                   f"{r['median_abs_slope_error']:.3f}"] for r in report["methods"]])
    console.print(report["privacy"], highlight=False, soft_wrap=True)
    console.print(f"data {report['data']} (simulation, reading: {report['data_seconds']:.1f} s); "
                  f"wrote {report['files']['summary']}", highlight=False, soft_wrap=True)


@app.command()
def reproduce(
    name: Annotated[str, typer.Argument(help="Name of a reproduction (see --list).")] = "",
    quick: Annotated[bool, typer.Option("--quick", help="Reduced grid (seconds; not evidence).")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List the reproductions and exit.")] = False,
    out: Annotated[Path, typer.Option("--out", help="Output root; files go to OUT/NAME[-quick].")] = Path(
        "bench-output/reproduce"),
    resume: Annotated[bool, typer.Option(
        "--resume", help="Keep finished cells of OUT/NAME/results.csv (same spec hash).")] = False,
    workers: Annotated[int, typer.Option("--workers", "-j", parser=_ascii_int,
        help="Processes for the cells.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress",
                                                  help=_PROGRESS_HELP)] = None,
) -> None:
    """Reproduce a paper figure/table: CSVs, figures (PNG + plotted numbers) and claim verdicts."""
    _check_range(workers, "--workers", low=1, integer=True)
    try:
        from dpreg.bench import list_specs
        from dpreg.bench import reproduce as run_reproduction
        from dpreg.exceptions import InvalidInputError

        if list_:
            specs = list_specs()
            if as_json:
                _print_json(specs)
                return
            _print_table("dpreg reproduce NAME", ["name", "paper", "figure", "what"],
                         [[s["name"], s["paper"], s["figure"], s["summary"]] for s in specs],
                         no_wrap=("name",))
            return
        if not name:
            raise InvalidInputError("give a reproduction NAME (see `dpreg reproduce --list`)")
        from dpreg._progress import interactive, job, rich_bars

        # one bar over the cells (counts only; the fits inside a cell report nothing)
        with rich_bars(interactive(progress)), job(f"{name}: cells") as update:
            result = run_reproduction(name, out=out, quick=quick, resume=resume,
                                      workers=workers,
                                      progress=lambda done, total, _desc: update(done, total))
    except DPRegError as exc:
        _fail(exc)
        return
    if as_json:
        _print_json(result.to_dict())
        return
    console.print(f"{result.name}: {result.cells_run} cells run, {result.cells_skipped} resumed, "
                  f"{result.seconds:.1f}s -> {result.out_dir}", highlight=False)
    if quick:
        console.print(f"{result.name} --quick: {result.to_dict()['evidence']}.",
                      highlight=False, markup=False)
    if len(result.claims):
        table = Table(title="paper claims" + (" (quick grid: too small to test a claim)"
                                              if quick else ""))
        for col in ("claim", "measured", "verdict"):
            table.add_column(col, overflow="fold")
        for r in result.claims.itertuples():
            table.add_row(str(r.claim), str(r.measured), str(r.verdict))
        console.print(table)


@app.command()
def audit(
    method: Annotated[str, typer.Argument(
        help="Audit target (see --list), or 'all'.")] = "",
    pairs: Annotated[str | None, typer.Option(
        "--pairs", help="Comma-separated neighbouring pairs to use (default: all built-in).")] = None,
    samples: Annotated[int, typer.Option(
        "--samples", "-n", parser=_ascii_int, help="Releases per side N (default 100000).")] = 100_000,
    alpha: Annotated[float, typer.Option(
        "--alpha", parser=_ascii_float, help="Error level α of the lower confidence bound.")] = 1e-6,
    seed: Annotated[int | None, typer.Option("--seed", parser=_ascii_int,
        help="Seed of the audit runs.")] = None,
    workers: Annotated[int, typer.Option(
        "--workers", "-j", parser=_ascii_int, help="Processes for targets that loop over releases.")] = 1,
    list_: Annotated[bool, typer.Option("--list", help="List audit targets and pairs.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress",
                                                  help=_PROGRESS_HELP)] = None,
) -> None:
    """Empirical privacy audit: ε lower confidence bound on worst-case neighbouring pairs.

    Exit code 0 if every audit passes, 1 if any FAILS (ε_LCB > claimed ε), 2 on a usage error.
    """
    _check_range(samples, "--samples", low=16, integer=True)
    _check_range(alpha, "--alpha", low=0, high=1, open_low=True)
    _check_range(workers, "--workers", low=1, high=256, open_high=False, integer=True)
    try:
        from dpreg.audit import TARGETS, AuditResult, audit_target, results_json, results_table
        from dpreg.exceptions import InvalidInputError

        if list_:
            rows: list[dict[str, Any]] = [
                {"name": t.name, "kind": t.kind, "claim": str(t.claim),
                 "description": t.description, "pairs": [p.name for p in t.pairs()]}
                for t in TARGETS.values()]
            if as_json:
                _print_json(rows)
                return
            _print_table("dpreg audit METHOD", ["name", "kind", "claim", "pairs", "description"],
                         [[r["name"], r["kind"], r["claim"], ", ".join(r["pairs"]),
                           r["description"]] for r in rows], no_wrap=("name",))
            return
        if not method:
            raise InvalidInputError("give an audit target METHOD (see `dpreg audit --list`) "
                                    "or 'all'")
        names = list(TARGETS) if method == "all" else [method]
        chosen = [p.strip() for p in pairs.split(",") if p.strip()] if pairs else None
        from dpreg._progress import interactive, rich_bars, spinner, steps

        results: list[AuditResult] = []
        with rich_bars(interactive(progress)):
            # a bar over the targets (several) or a spinner (one); public names and counts
            for name in steps(names, f"auditing {len(names)} targets") if len(names) > 1 \
                    else names:
                with spinner(f"auditing {name}"):
                    results += audit_target(name, pairs=chosen, samples=samples, alpha=alpha,
                                            rng=seed, workers=workers)
    except DPRegError as exc:
        _fail(exc)
        return
    if as_json:
        _print_json(results_json(results))
    else:
        console.print(results_table(results))
        for res in results:
            console.print(f"  {res.method} / {res.pair}: event {res.event}", highlight=False)
    if not all(res.passed for res in results):
        raise typer.Exit(code=1)


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
