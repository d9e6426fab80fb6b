"""``dpreg fit``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from dpreg.cli._app import _cli_text, _fail, _library_warnings, app, console
from dpreg.cli._options import (
    BackendOption,
    CodebookOption,
    NotPrivateOption,
    ProgressOption,
    ReleaseOptions,
    SeedOption,
    _ledger_line,
    _warn_delta_per_n,
    _warn_ignored,
    check_ci,
    method_for,
    open_ledger,
    release_options,
)
from dpreg.cli._output import _check_plot_extra, _intervals, _plot_result, _print_json, _result_json
from dpreg.cli._parse import _ascii_float, _check_choice
from dpreg.cli._sources import _header, read_data
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
    seed: SeedOption = None,
    ledger: Annotated[Path | None, typer.Option("--ledger", help="Charge this persistent ledger.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    not_private: NotPrivateOption = False,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Also draw the coefficients with their DP-aware (1-ALPHA) intervals to "
        "this file (.png, .pdf, .svg).")] = None,
    allow_unreliable: Annotated[bool, typer.Option(
        "--allow-unreliable", help="With --method auto --bounds private: fit even when the "
        "DP bounds leave too little for a useful release (warns; JSON reliable=false).")] = False,
    backend: BackendOption = "local",
    codebook: CodebookOption = None,
    progress: ProgressOption = None,
) -> None:
    """Fit one DP regression of Y on X from a CSV or Parquet file."""
    given = release_options(epsilon=epsilon, delta=delta, not_private=not_private, seed=seed,
                            bounds=bounds, option=option, command="fit")
    _check_choice(backend, "--backend", ("local", "spark"))
    check_ci(ci)
    entry = method_for(method, given.options, ci)
    try:
        _check_plot_extra(plot)
        from dpreg._formula import formula_from_columns

        # the formula is built from the header alone (each --y/--x a column name, or one term
        # of the restricted grammar), before any value of the data is read
        parsed = formula_from_columns(y, x, _header(data), intercept=not no_intercept)
        _warn_ignored(entry, given.delta, len(x) == 1 and not parsed.categorical_calls()
                      and not any(op in x[0] for op in "*:"))
        frame = _fit_data(data, backend, method)
        led = open_ledger(ledger)
        if allow_unreliable:
            given.options["allow_unreliable"] = True
        res, ci_frame, summary_text = _fit_release(
            frame, parsed.text(), given, data=data, method=method, seed=seed, led=led,
            codebook=codebook, ci=ci, progress=progress, as_json=as_json)
        _plot_result(res, plot, ci)
    except DPRegError as exc:
        _fail(exc)
        return
    if as_json:
        _print_fit_json(res, method, ci, ci_frame, led)
        return
    console.print(summary_text, highlight=False)
    if led is not None:
        console.print(_ledger_line(led)["text"], highlight=False)
    if res.failed:
        raise typer.Exit(code=1)


def _fit_data(data: Path, backend: str, method: str) -> Any:
    """DATA for ``method``: streamed (a Parquet file, Spark) where the method reads sufficient
    statistics, else in memory; ``--backend spark`` with another method is an error saying why."""
    from dpreg.api import needs_memory_message, source_methods
    from dpreg.exceptions import InvalidInputError

    if backend == "spark" and method not in source_methods():  # why, and what to do
        raise InvalidInputError(f"--backend spark: {needs_memory_message(method)} "
                                "(here: the default --backend local reads DATA into memory)")
    return read_data(data, backend, stream=method in source_methods())


def _fit_release(frame: Any, formula: str, given: ReleaseOptions, *, data: Path, method: str,
                 seed: int | None, led: Any, codebook: Path | None, ci: float | None,
                 progress: bool | None, as_json: bool) -> tuple[Any, Any, str | None]:
    """The release, its ``ci`` intervals and (for text output) its summary, under progress
    bars on stderr (only on a terminal or with --progress): a spinner for the fit and the
    intervals, with a bar per prediction point / bootstrap batch inside."""
    from dpreg._progress import interactive, rich_bars, spinner
    from dpreg.api import regress
    from dpreg.privacy import release_context

    with rich_bars(interactive(progress)):
        with _library_warnings(), release_context(entry="dpreg fit", data=str(data)), \
                spinner(f"fitting {method}"):
            res = regress(frame, formula, method=method, epsilon=given.epsilon,
                          bounds=given.bounds, delta=given.delta, ledger=led,
                          random_state=seed, codebook=codebook, **given.options)
        _warn_delta_per_n(given.delta, res.nobs)
        with spinner("computing the intervals (parametric bootstrap of the release)"):
            ci_frame = _intervals(res, ci)  # the release is spent: shown even without a CI
            # the summary's intervals (a bootstrap where the method has one) are drawn here,
            # under the spinner; printing reuses them
            summary_text = None if as_json else _cli_text(str(res.summary(alpha=ci)))
    return res, ci_frame, summary_text


def _print_fit_json(res: Any, method: str, ci: float | None, ci_frame: Any, led: Any) -> None:
    """``dpreg fit --json``: the result, the method asked for, and with --method auto what was
    chosen and what the choice and the bounds cost."""
    out = _result_json(res, ci, ci_frame)
    out["method"] = method
    out["reliable"] = bool(res.extra.get("reliable", True))
    auto = res.extra.get("auto")
    if auto is not None:
        from dpreg._json import jsonable

        out["chosen_method"] = auto.get("method")
        out["selection"] = jsonable({k: v for k, v in auto.items() if k != "private_bounds"})
        out["private_bounds"] = {k: list(v) for k, v in auto.get("private_bounds", {}).items()}
    if led is not None:
        out["ledger"] = _ledger_line(led)
    _print_json(out)
