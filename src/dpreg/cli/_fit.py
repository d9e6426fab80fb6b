"""``dpreg fit``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dpreg.cli._app import _CODEBOOK_HELP, _cli_text, _fail, _library_warnings, app, console
from dpreg.cli._options import (
    _BACKEND_HELP,
    _PROGRESS_HELP,
    _SEED_HELP,
    _check_ci_supported,
    _ledger_line,
    _method_entry,
    _open_ledger,
    _warn_delta_per_n,
    _warn_ignored,
    privacy_options,
    warn_seed,
)
from dpreg.cli._output import _check_plot_extra, _intervals, _plot_result, _print_json, _result_json
from dpreg.cli._parse import (
    _NOT_PRIVATE_HELP,
    _ascii_float,
    _ascii_int,
    _check_choice,
    _check_range,
    parse_bounds,
    parse_options,
)
from dpreg.cli._sources import _header, _is_parquet, _read_table, _spark_frame
from dpreg.exceptions import DPRegError


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
