"""The ``dpreg`` command line (thin: parses, calls library functions, prints/writes).

Exit codes: 0 success, 1 data/privacy error (bad data, exhausted ledger, mechanism ⊥), 2 usage
error (unknown option, malformed ``--bounds``, an ε or δ outside its range).  Errors print one
line without a traceback unless ``--debug`` is given; warnings print one line ``warning: ...``
on stderr and leave the exit code unchanged.

ε and δ are parsed from the raw text (:func:`parse_epsilon`, :func:`parse_delta`), never by a
silently overflowing ``float()``: ``inf``, ``1e309`` or ``nan`` for ε and a δ that underflows
(``1e-400``) are usage errors; ``--not-private`` (fit, fit-groups, release-cov, ledger init)
allows ``--epsilon inf`` (the exact, NOT PRIVATE result, labelled so in every output) and
``--delta`` in [0.5, 1).  Every ``--json`` output is strict JSON: non-finite numbers are
written as ``null`` (:func:`dpreg._json.strict_jsonable`).
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

import typer
from rich.console import Console
from rich.table import Table

from dpreg._version import __version__
from dpreg.exceptions import DPRegError

app = typer.Typer(
    name="dpreg",
    help="Differentially private linear regression: fit, per-group fits, DP covariance "
         "releases, paper reproductions and the demo.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
ledger_app = typer.Typer(help="Create and inspect persistent privacy ledgers.",
                         no_args_is_help=True)
app.add_typer(ledger_app, name="ledger")

console = Console()
err_console = Console(stderr=True)
_STATE: dict[str, bool] = {"debug": False}


def _version_callback(value: bool) -> None:
    if value:
        console.print(f"dpreg {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version_callback,
                                          is_eager=True, help="Print the version.")] = False,
) -> None:
    _STATE["debug"] = debug


# ------------------------------------------------------------------ helpers
def parse_bounds(items: list[str] | None) -> Any:
    """``["x=0:1", "y=-1:2.5"]`` -> ``{"x": (0, 1), "y": (-1, 2.5)}`` (usage error if malformed).

    ``["private"]`` -> ``"private"`` and ``COL=private`` -> ``"private"`` for that column
    (bounds-free mode of ``--method auto``)."""
    if items and list(items) == ["private"]:
        return "private"
    out: dict[str, Any] = {}
    for item in items or []:
        name, sep, rng = item.rpartition("=")
        if sep and name and rng == "private":
            out[name] = "private"
            continue
        lo_s, sep2, hi_s = rng.partition(":")
        try:
            if not sep or not sep2 or not name:
                raise ValueError
            out[name] = (float(lo_s), float(hi_s))
        except ValueError:
            raise typer.BadParameter(
                f"expected COL=LO:HI (e.g. income=0:250000); got {item!r}", param_hint="--bounds"
            ) from None
    return out


def parse_options(items: list[str] | None) -> dict[str, Any]:
    """``["theta=0.02", "pairs=10", "median=wide"]`` -> typed values (JSON literals when possible)."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"expected KEY=VALUE; got {item!r}", param_hint="--option")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def _open_ledger(path: Path | None) -> Any:
    if path is None:
        return None
    from dpreg import Ledger
    from dpreg.exceptions import InvalidInputError

    if not path.exists():
        raise InvalidInputError(
            f"ledger {path} does not exist; create it first with: dpreg ledger init {path} "
            "--epsilon TOTAL [--delta TOTAL_DELTA]"
        )
    return Ledger(None, path)


def _read_csv(path: Path) -> Any:
    import pandas as pd

    from dpreg.exceptions import InvalidInputError

    if not path.exists():
        raise InvalidInputError(f"DATA file {path} does not exist")
    try:
        return pd.read_csv(path)
    except Exception as exc:
        # the parser's own message can quote bytes or cells of the private file: name the file
        # and the kind of error only
        raise InvalidInputError(f"could not read {path} as CSV ({type(exc).__name__}); check "
                                "its encoding (UTF-8) and that every row has the header's "
                                "number of fields") from None


def _read_csv_header(path: Path) -> list[str]:
    """The column names of a CSV file (its header row only)."""
    import pandas as pd

    from dpreg.exceptions import InvalidInputError

    if not path.exists():
        raise InvalidInputError(f"DATA file {path} does not exist")
    try:
        return [str(c) for c in pd.read_csv(path, nrows=0).columns]
    except Exception as exc:
        raise InvalidInputError(f"could not read {path} as CSV: {exc}") from None


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
    if _STATE["debug"]:
        raise exc
    err_console.print(f"[bold red]error:[/] {exc}", highlight=False)
    raise typer.Exit(code=1)


def _print_json(obj: Any) -> None:
    """The one writer of every ``--json`` output: strict JSON (non-finite numbers -> null;
    ``allow_nan=False`` so that a NaN or Infinity can never slip through again)."""
    from dpreg._json import strict_jsonable

    sys.stdout.write(json.dumps(strict_jsonable(obj), indent=2, allow_nan=False,
                                default=_json_default) + "\n")


def _json_default(o: Any) -> Any:
    """Objects :func:`strict_jsonable` leaves alone (paths, timestamps, ...) as text."""
    return str(o)


# ------------------------------------------------------------------ privacy parameters
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_INFINITY = frozenset({"inf", "+inf", "infinity", "+infinity"})
_NOT_PRIVATE_HELP = ("Allow --epsilon inf (the exact, NOT PRIVATE result, labelled so in every "
                     "output) and --delta in [0.5, 1).")
#: smallest positive δ accepted (the smallest normal double): below it δ is rounded, and
#: 1e-400 would silently become 0 -- pure DP, a different claim
DELTA_MIN = sys.float_info.min


def _usage_error(option: str, expected: str, raw: str, why: str = "") -> NoReturn:
    """A one-line usage error (exit 2) naming the option, the expected range and the value."""
    typer.echo(f"error: {option} must be {expected}; got {raw!r}{why}", err=True)
    raise typer.Exit(code=2)


def _cli_warning(text: str) -> None:
    typer.echo(f"warning: {text}", err=True)


def _read_number(raw: str, option: str, expected: str) -> Decimal | None:
    """The exact decimal value of ``raw`` (``None`` for inf/infinity); anything that is not a
    plain decimal number (nan, -inf, hex, words) is a usage error."""
    text = str(raw).strip()
    if text.lower() in _INFINITY:
        return None
    if not _DECIMAL.fullmatch(text):
        _usage_error(option, expected, raw, " (not a finite decimal number)")
    return Decimal(text)


def parse_epsilon(raw: str, *, option: str = "--epsilon", not_private: bool = False,
                  has_flag: bool = True) -> float:
    """ε from the command line: a finite number with 1e-100 <= ε that stays finite as a
    double; ``inf``/``infinity`` only with ``not_private`` (any overflowing literal such as
    ``1e309`` is refused even then: write ``inf``).  ``has_flag``: the command has
    ``--not-private`` (the messages then mention it)."""
    from dpreg._validation import PRIVACY_PARAM_MIN

    expected = f"a finite number with {PRIVACY_PARAM_MIN:g} <= EPS < inf (e.g. 1)"
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
        _usage_error("--not-private", f"used with {eps_option} inf or --delta >= 0.5 (it "
                     "allows nothing else)", f"{eps_option} {epsilon}",
                     "; drop --not-private for a private run")
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
    data: Annotated[Path, typer.Argument(help="CSV file with a header row.")],
    y: Annotated[str, typer.Option("--y", help="Response column.")],
    x: Annotated[list[str], typer.Option("--x", help="Regressor column (repeat for several), "
                                         "or one formula term such as 'log(income)'.")],
    method: Annotated[str, typer.Option("--method", "-m", help="Method name (see `dpreg methods`).")],
    epsilon: Annotated[str, typer.Option("--epsilon", "-e", metavar="EPS",
                                         help="Privacy budget ε of this fit.")],
    bounds: Annotated[list[str], typer.Option(
        "--bounds", "-b", help="Public bounds COL=LO:HI for the response and every regressor "
        "(with --method auto: 'private' or COL=private spends part of ε on DP bounds).")],
    delta: Annotated[str | None, typer.Option("--delta", "-d", metavar="DELTA",
                                              help="δ (methods that need it).")] = None,
    no_intercept: Annotated[bool, typer.Option("--no-intercept", help="Fit without intercept.")] = False,
    ci: Annotated[float | None, typer.Option("--ci", help="Also report (1-ALPHA) intervals.")] = None,
    option: Annotated[list[str] | None, typer.Option(
        "--option", "-o", help="Method hyperparameter KEY=VALUE (repeatable).")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help=_SEED_HELP)] = None,
    ledger: Annotated[Path | None, typer.Option("--ledger", help="Charge this persistent ledger.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    not_private: Annotated[bool, typer.Option("--not-private", help=_NOT_PRIVATE_HELP)] = False,
) -> None:
    """Fit one DP regression of Y on X from a CSV file."""
    eps, dlt = privacy_options(epsilon, delta, not_private)
    warn_seed(seed)
    bmap = parse_bounds(bounds)
    opts = parse_options(option)
    try:
        from dpreg._formula import formula_from_columns
        from dpreg.api import regress

        # the formula is built from the header alone (each --y/--x a column name, or one term
        # of the restricted grammar), before any value of the data is read
        formula = formula_from_columns(y, x, _read_csv_header(data),
                                       intercept=not no_intercept).text()
        frame = _read_csv(data)
        led = _open_ledger(ledger)
        if ci is not None:
            opts.setdefault("ci_alpha", ci)
        with _library_warnings():
            res = regress(frame, formula, method=method, epsilon=eps, bounds=bmap, delta=dlt,
                          ledger=led, random_state=seed, **opts)
        _warn_delta_per_n(dlt, res.nobs)
        ci_frame = None
        if ci is not None and not res.failed:
            from dpreg.inference.results import NoUncertaintyError

            try:
                ci_frame = res.conf_int(ci)
            except NoUncertaintyError as exc:  # the release is spent: show it, say why no CI
                err_console.print(f"note: no confidence interval: {exc}")
    except DPRegError as exc:
        _fail(exc)
        return
    if as_json:
        out = res.to_dict()
        out["method"] = method
        auto = res.extra.get("auto")
        if auto is not None:  # --method auto: what was chosen, what the choice and bounds cost
            from dpreg._json import jsonable

            out["chosen_method"] = auto.get("method")
            out["selection"] = jsonable({k: v for k, v in auto.items() if k != "private_bounds"})
            out["private_bounds"] = {k: list(v) for k, v in auto.get("private_bounds", {}).items()}
        if ci_frame is not None:
            out["ci"] = {"alpha": ci, **{k: [float(r["lower"]), float(r["upper"])]
                                         for k, r in ci_frame.iterrows()}}
            if "ci_informative" in res.extra:  # an end at the search range is not a finding
                out["ci"]["informative"] = dict(res.extra["ci_informative"])
        _print_json(out)
        return
    console.print(str(res.summary(alpha=ci)), highlight=False)
    if res.failed:
        raise typer.Exit(code=1)


@app.command()
def methods() -> None:
    """List the method names accepted by --method (the method registry)."""
    from dpreg._registry import methods as registered

    table = Table(title="dpreg methods")
    table.add_column("method", no_wrap=True)
    table.add_column("regressors", no_wrap=True)
    table.add_column("needs --delta")
    table.add_column("neighbours", no_wrap=True)
    table.add_column("algorithm")
    needs = {"always": "yes", "never": "no", "multi-x": "with 2+ regressors"}
    for m in registered():
        table.add_row(m.name, "exactly 1" if m.one_x_only else "1 or more", needs[m.delta],
                      m.relation, m.algorithm)
    console.print(table)


@app.command()
def datasets() -> None:
    """List the real and simulated data sets that ship with dpreg's dependencies."""
    from dpreg.data import list_datasets

    table = Table(title="dpreg.data.load_dataset(name)")
    table.add_column("name")
    table.add_column("description")
    for name, summary in list_datasets().items():
        table.add_row(name, summary)
    console.print(table)


# ------------------------------------------------------------------ per-group fits
@app.command("fit-groups")
def fit_groups(
    data: Annotated[Path, typer.Argument(help="CSV file with a header row.")],
    by: Annotated[str, typer.Option("--by", help="Group key column (keys are treated as public).")],
    y: Annotated[str, typer.Option("--y", help="Response column.")],
    x: Annotated[str, typer.Option("--x", help="The regressor column.")],
    method: Annotated[str, typer.Option("--method", "-m", help="Method name.")],
    epsilon: Annotated[str, typer.Option("--epsilon", "-e", metavar="EPS",
                                         help="ε per group (parallel composition).")],
    bounds: Annotated[list[str], typer.Option("--bounds", "-b", help="Public bounds COL=LO:HI.")],
    out: Annotated[Path, typer.Option("--out", help="Output CSV, one row per group.")],
    groups_file: Annotated[Path | None, typer.Option(
        "--groups-file", help="Text file with the public list of group keys (one per line; "
        "surrounding whitespace is ignored). Required unless --keys-from-data.")] = None,
    keys_from_data: Annotated[bool, typer.Option(
        "--keys-from-data", help="Take the group keys from the data instead of --groups-file: "
        "the key set is then NOT protected (the output reveals which groups occur).")] = False,
    delta: Annotated[str | None, typer.Option("--delta", "-d", metavar="DELTA")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help=_SEED_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    backend: Annotated[str, typer.Option(
        "--backend", help="local (vectorised), reference (per-group loop) or spark.")] = "local",
    workers: Annotated[int | None, typer.Option(
        "--workers", "-j", help="Threads for the per-group parts of the local backend.")] = None,
    not_private: Annotated[bool, typer.Option("--not-private", help=_NOT_PRIVATE_HELP)] = False,
    ledger: Annotated[Path | None, typer.Option(
        "--ledger", help="Charge this persistent ledger once for the whole table (parallel "
        "composition), before any group is released.")] = None,
) -> None:
    """Fit one DP regression per group (disjoint groups: parallel composition, ε per group)."""
    eps, dlt = privacy_options(epsilon, delta, not_private)
    warn_seed(seed)
    bmap = parse_bounds(bounds)
    opts = parse_options(option)
    try:
        from dpreg.exceptions import InvalidInputError
        from dpreg.grouped import fit_by_group

        if groups_file is not None and keys_from_data:
            raise InvalidInputError("give either --groups-file (the public key list) or "
                                    "--keys-from-data, not both")
        if groups_file is None and not keys_from_data:
            raise InvalidInputError(
                "the group keys must be declared: --groups-file FILE lists the public keys (one "
                "per line; every listed key gets a row, so the output does not reveal which "
                "groups occur), or --keys-from-data takes them from the data (the key set is "
                "then NOT protected)")
        frame = _read_csv(data)
        keys: Any = "from-data"
        if groups_file is not None:
            from dpreg.grouped import parse_key_list

            keys = parse_key_list(_read_text(groups_file, "--groups-file").splitlines(),
                                  frame[by] if by in frame.columns else None)
        led = _open_ledger(ledger)
        with _library_warnings():
            table = fit_by_group(frame, by, x, y, method=method, epsilon=eps, bounds=bmap,
                                 delta=dlt, groups=keys, random_state=seed,
                                 progress=not as_json, backend=backend,
                                 workers=workers, ledger=led, **opts)
    except DPRegError as exc:
        _fail(exc)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    summary = {"groups": int(len(table)), "failed": int(table["failed"].sum()),
               "out": str(out), "privacy": table.attrs.get("privacy", ""),
               **_notice_fields(eps, seed)}
    if as_json:
        _print_json(summary)
    else:
        console.print(f"wrote {summary['groups']} group releases ({summary['failed']} ⊥) to {out}")
        console.print(summary["privacy"], highlight=False)


# ------------------------------------------------------------------ covariance release
@app.command("release-cov")
def release_cov(
    data: Annotated[Path, typer.Argument(help="CSV file with a header row.")],
    columns: Annotated[list[str], typer.Option("--columns", "-c", help="Columns to release (repeat).")],
    bounds: Annotated[list[str], typer.Option("--bounds", "-b", help="Public bounds COL=LO:HI.")],
    epsilon: Annotated[str, typer.Option("--epsilon", "-e", metavar="EPS")],
    delta: Annotated[str, typer.Option("--delta", "-d", metavar="DELTA")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the release (JSON).")],
    seed: Annotated[int | None, typer.Option("--seed", help=_SEED_HELP)] = None,
    ledger: Annotated[Path | None, typer.Option("--ledger")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    not_private: Annotated[bool, typer.Option("--not-private", help=_NOT_PRIVATE_HELP)] = False,
) -> None:
    """Release a DP SSCP (covariance) matrix once; analyse it later with `dpreg regress`."""
    eps, dlt = privacy_options(epsilon, delta, not_private)
    assert dlt is not None  # --delta is a required option
    warn_seed(seed)
    bmap = parse_bounds(bounds)
    cols: list[str] = []
    for c in columns:
        cols.extend(part for part in c.split(",") if part)
    try:
        from dpreg.covariance import release_sscp

        frame = _read_csv(data)
        with _library_warnings():
            rel = release_sscp(frame, columns=cols, bounds=bmap, epsilon=eps, delta=dlt,
                               rng=seed, ledger=_open_ledger(ledger))
        rel.save(out)
    except DPRegError as exc:
        _fail(exc)
        return
    fields = _notice_fields(eps, seed)
    if as_json:
        _print_json({"out": str(out), "columns": cols, "epsilon": eps, "delta": dlt, **fields})
    else:
        what = (f"NOT PRIVATE SSCP matrix (ε=inf: exact, no noise) of {len(cols)} columns"
                if math.isinf(eps) else
                f"DP SSCP release of {len(cols)} columns")
        claim = "" if math.isinf(eps) else f" ((ε={eps:g}, δ={dlt:g})-DP)"
        console.print(f"wrote {what} to {out}{claim}; analyse it with: dpreg regress {out} "
                      f"\"{cols[-1]} ~ {' + '.join(cols[:-1]) or '1'}\"", highlight=False)
        if fields["notice"]:
            console.print(fields["notice"], highlight=False)


@app.command()
def regress(
    release: Annotated[Path, typer.Argument(help="A release written by `dpreg release-cov`.")],
    formula: Annotated[str, typer.Argument(help='Formula over released columns, e.g. "y ~ x1 + x2".')],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """OLS on a released DP SSCP matrix (post-processing: no further privacy cost)."""
    try:
        from dpreg.covariance import SSCPRelease

        res = SSCPRelease.load(release).regress(formula)
    except DPRegError as exc:
        _fail(exc)
        return
    if as_json:
        _print_json(res.to_dict())
    else:
        console.print(str(res.summary()), highlight=False)


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
) -> None:
    """Create a persistent ledger with a total (ε,δ) budget for one neighbouring relation."""
    eps_total, delta_total = privacy_options(epsilon, delta, not_private)
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
        led = Ledger(total, path, neighbouring=rel)
        led.close()
    except DPRegError as exc:
        _fail(exc)
        return
    console.print(f"created ledger {path} with total {total} for {rel} neighbours"
                  + (" -- NOT PRIVATE: an infinite total refuses no charge"
                     if total.is_infinite else ""), highlight=False)


@ledger_app.command("show")
def ledger_show(
    path: Annotated[Path, typer.Argument(help="Ledger file.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Show a ledger's total, relation, spending and events (stated and charged budgets)."""
    try:
        led = _open_ledger(path)
        info = led.as_dict()
        events = led.events()
        led.close()
    except DPRegError as exc:
        _fail(exc)
        return
    if as_json:
        _print_json(info)
        return
    from dpreg.privacy import Budget

    total, spent, remaining = (Budget.from_dict(info[k]) for k in ("total", "spent", "remaining"))
    relation = info["neighbouring"] + (" (legacy file: no relation stored, treated as "
                                       "replace-one)" if info["legacy_relation"] else "")
    table = Table(title=f"ledger {path}: total {total} for {relation} neighbours; spent {spent}, "
                        f"remaining {remaining}")
    for col in ("id", "charged", "stated (relation)", "label"):
        table.add_column(col)
    for e in events:
        table.add_row(str(e.id), str(e.budget) + ("" if e.private else " NOT PRIVATE"),
                      f"{e.stated} ({e.neighbouring})", e.label)
    console.print(table)
    if not info["private"]:
        console.print("NOT PRIVATE: this ledger has an infinite total or charge (a non-private "
                      "budget): its releases carry no privacy guarantee", highlight=False)


# ------------------------------------------------------------------ demo, reproduce, audit
@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("demo-output"),
    epsilon: Annotated[str, typer.Option(
        "--epsilon", "-e", metavar="EPS",
        help="ε per tract (default 16, the paper's setting).")] = "16",
    trials: Annotated[int, typer.Option("--trials", help="DP runs per tract for the error measure.")] = 25,
    tracts: Annotated[int | None, typer.Option("--tracts", help="Use only the first N tracts.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the evaluation runs.")] = 0,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The main job: per-tract DP regressions on the bundled simulated state."""
    eps = parse_epsilon(epsilon, has_flag=False)
    try:
        from dpreg.demo import run_demo

        report = run_demo(out, epsilon=eps, trials=trials, max_tracts=tracts, seed=seed,
                          progress=not as_json, console=console)
    except DPRegError as exc:
        _fail(exc)
        return
    if as_json:
        _print_json(report)


@app.command()
def reproduce(
    name: Annotated[str, typer.Argument(help="Name of a reproduction (see --list).")] = "",
    quick: Annotated[bool, typer.Option("--quick", help="Reduced grid (seconds; not evidence).")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List the reproductions and exit.")] = False,
    out: Annotated[Path, typer.Option("--out", help="Output root; files go to OUT/NAME[-quick].")] = Path(
        "bench-output/reproduce"),
    resume: Annotated[bool, typer.Option(
        "--resume", help="Keep finished cells of OUT/NAME/results.csv (same spec hash).")] = False,
    workers: Annotated[int, typer.Option("--workers", "-j", help="Processes for the cells.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Reproduce a paper figure/table: CSVs, figures (PNG + plotted numbers) and claim verdicts."""
    try:
        from dpreg.bench import list_specs
        from dpreg.bench import reproduce as run_reproduction
        from dpreg.exceptions import InvalidInputError

        if list_:
            specs = list_specs()
            if as_json:
                _print_json(specs)
                return
            table = Table(title="dpreg reproduce NAME")
            for col in ("name", "paper", "figure", "what"):
                table.add_column(col)
            for s in specs:
                table.add_row(s["name"], s["paper"], s["figure"], s["summary"])
            console.print(table)
            return
        if not name:
            raise InvalidInputError("give a reproduction NAME (see `dpreg reproduce --list`)")
        if as_json:
            result = run_reproduction(name, out=out, quick=quick, resume=resume,
                                      workers=workers)
        else:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                          console=console, transient=True) as bar:
                task = bar.add_task(name, total=None)

                def progress(done: int, total: int, desc: str) -> None:
                    bar.update(task, completed=done, total=total, description=desc)

                result = run_reproduction(name, out=out, quick=quick, resume=resume,
                                          workers=workers, progress=progress)
    except DPRegError as exc:
        _fail(exc)
        return
    if as_json:
        _print_json(result.to_dict())
        return
    console.print(f"{result.name}: {result.cells_run} cells run, {result.cells_skipped} resumed, "
                  f"{result.seconds:.1f}s -> {result.out_dir}", highlight=False)
    if len(result.claims):
        table = Table(title="paper claims" + (" (quick grid: not evidence)" if quick else ""))
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
        "--samples", "-n", help="Releases per side N (default 100000).")] = 100_000,
    alpha: Annotated[float, typer.Option(
        "--alpha", help="Error level α of the lower confidence bound.")] = 1e-6,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the audit runs.")] = None,
    workers: Annotated[int, typer.Option(
        "--workers", "-j", help="Processes for targets that loop over releases.")] = 1,
    list_: Annotated[bool, typer.Option("--list", help="List audit targets and pairs.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Empirical privacy audit: ε lower confidence bound on worst-case neighbouring pairs.

    Exit code 0 if every audit passes, 1 if any FAILS (ε_LCB > claimed ε) or on bad input.
    """
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
            table = Table(title="dpreg audit METHOD")
            for col in ("name", "kind", "claim", "pairs", "description"):
                table.add_column(col)
            for r in rows:
                table.add_row(r["name"], r["kind"], r["claim"], ", ".join(r["pairs"]),
                              r["description"])
            console.print(table)
            return
        if not method:
            raise InvalidInputError("give an audit target METHOD (see `dpreg audit --list`) "
                                    "or 'all'")
        names = list(TARGETS) if method == "all" else [method]
        chosen = [p.strip() for p in pairs.split(",") if p.strip()] if pairs else None
        results: list[AuditResult] = []
        for name in names:
            if not as_json:
                err_console.print(f"auditing {name} ...", highlight=False)
            results += audit_target(name, pairs=chosen, samples=samples, alpha=alpha, rng=seed,
                                    workers=workers)
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
