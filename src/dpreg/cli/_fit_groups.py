"""``dpreg fit-groups``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer

from dpreg.cli._app import _CODEBOOK_HELP, _fail, _library_warnings, _usage, app, console
from dpreg.cli._options import (
    NotPrivateOption,
    ProgressOption,
    ReleaseOptions,
    SeedOption,
    _ledger_line,
    _notice_fields,
    _warn_ignored,
    check_ci,
    method_for,
    open_ledger,
    release_options,
)
from dpreg.cli._output import _check_plot_extra, _print_json, _save_figure
from dpreg.cli._parse import _ascii_float, _ascii_int, _check_choice, _check_range
from dpreg.cli._sources import _check_columns, _header, _read_table, _read_text
from dpreg.exceptions import DPRegError


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
    seed: SeedOption = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    backend: Annotated[str, typer.Option(
        "--backend", help="local (vectorised), reference (per-group loop) or spark.")] = "local",
    workers: Annotated[int | None, typer.Option(
        "--workers", "-j", parser=_ascii_int, help="Workers for the per-group parts of the local backend "
        "(processes on Linux for >= 200 groups, else threads).")] = None,
    not_private: NotPrivateOption = False,
    ledger: Annotated[Path | None, typer.Option(
        "--ledger", help="Charge this persistent ledger once for the whole table (parallel "
        "composition), before any group is released.")] = None,
    ci: Annotated[float | None, typer.Option(
        "--ci", parser=_ascii_float,
        metavar="ALPHA", help="Per-group (1-ALPHA) intervals: lower_/upper_ columns "
        "for the slope (theil-sen-*: ε/2 on the slope interval) and, for noisy-stats, the "
        "predictions (post-processing of the inference release), plus informative_slope "
        "and, for theil-sen-*, ci_point_mass (interval within 2θ of 0: tied slopes). "
        "Same as -o ci_alpha=ALPHA.")] = None,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Also draw the per-group estimates (with their intervals, and the ECDF "
        "of the interval widths, when the table has interval columns) to this file.")] = None,
    codebook: Annotated[Path | None, typer.Option(
        "--codebook", help=_CODEBOOK_HELP + " Its [groups] keys are the public key list when "
        "--groups-file is not given.")] = None,
    progress: ProgressOption = None,
) -> None:
    """Fit one DP regression per group (disjoint groups: parallel composition, ε per group)."""
    given = release_options(epsilon=epsilon, delta=delta, not_private=not_private, seed=seed,
                            bounds=bounds, option=option, command="fit-groups")
    check_ci(ci)
    _check_range(workers, "--workers", low=1, integer=True)
    _check_choice(backend, "--backend", ("local", "reference", "spark"))
    if groups_file is not None and keys_from_data:
        _usage("give either --groups-file (the public key list) or --keys-from-data, not both")
    entry = method_for(method, given.options, ci)
    _warn_ignored(entry, given.delta, True)
    try:
        _check_plot_extra(plot)
        from dpreg._progress import interactive, rich_bars
        from dpreg.codebook import resolve_codebook
        from dpreg.grouped import fit_by_group

        header = _header(data)
        _check_columns(header, {"--by": [by], "--y": [y], "--x": [x]})
        cb = resolve_codebook(codebook, header)
        _check_keys_declared(groups_file, keys_from_data,
                             cb is not None and cb.group_keys is not None
                             and cb.group_by in (None, by))
        frame, key_col = _group_data(data, by, backend)
        keys: Any = "from-data" if keys_from_data else None  # None: the codebook's keys
        if groups_file is not None:
            from dpreg.grouped import parse_key_list

            keys = parse_key_list(_read_text(groups_file, "--groups-file").splitlines(),
                                  key_col)
        led = open_ledger(ledger)
        from dpreg.privacy import release_context

        # a bar over the groups (per-group loop) or a spinner (vectorised); on stderr
        with rich_bars(interactive(progress)), _library_warnings(), \
                release_context(entry="dpreg fit-groups", data=str(data)):
            table = fit_by_group(frame, by, x, y, method=method, epsilon=given.epsilon,
                                 bounds=given.bounds, delta=given.delta, groups=keys,
                                 random_state=seed, progress=interactive(progress),
                                 backend=backend, workers=workers, ledger=led, codebook=cb,
                                 **given.options)
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
    summary = _groups_summary(table, entry, given, seed, out)
    if plot is not None:
        summary["plot"] = str(plot)
    if led is not None:
        summary["ledger"] = _ledger_line(led)
    if as_json:
        _print_json(summary)
    else:
        _print_groups_text(summary, given.options, out)


def _check_keys_declared(groups_file: Path | None, keys_from_data: bool,
                         codebook_keys: bool) -> None:
    """The group keys come from somewhere the user declared, before any value is read."""
    from dpreg.exceptions import InvalidInputError

    if groups_file is None and not keys_from_data and not codebook_keys:
        raise InvalidInputError(
            "the group keys must be declared: --groups-file FILE lists the public keys (one "
            "per line; every listed key gets a row, so the output does not reveal which "
            "groups occur), a --codebook with [groups] keys, or --keys-from-data takes them "
            "from the data (the key set is then NOT protected)")


def _group_data(data: Path, by: str, backend: str) -> tuple[Any, Any]:
    """DATA and its key column (for the type of the listed keys): with --backend spark the
    executors read the file and the driver only its schema (an empty key column of the
    right type); else the table in memory."""
    import pandas as pd

    if backend != "spark":
        frame = _read_table(data)
        return frame, frame[by] if by in frame.columns else None
    from dpreg._source import FileSource
    from dpreg.exceptions import InvalidInputError

    if not data.exists():
        raise InvalidInputError(f"DATA file {data} does not exist")
    schema = FileSource(data)._schema
    key_col = (pd.Series([], dtype=schema.field(by).type.to_pandas_dtype())
               if by in schema.names else None)
    return str(data), key_col


def _groups_summary(table: Any, entry: Any, given: ReleaseOptions, seed: int | None,
                    out: Path) -> dict[str, Any]:
    """What fit-groups reports, read from the released table (post-processing)."""
    eps, opts = given.epsilon, given.options
    summary: dict[str, Any] = {
        "groups": int(len(table)), "failed": int(table["failed"].sum()), "out": str(out),
        "privacy": table.attrs.get("privacy", ""), **_notice_fields(eps, seed)}
    if "informative_slope" in table.columns:  # read from the released table
        flags = table["informative_slope"]
        summary["intervals"] = {
            "level": 1 - float(opts["ci_alpha"]),
            "columns": [c for c in table.columns if str(c).startswith(("lower_", "upper_"))],
            "not_informative": int((flags == False).sum()),  # noqa: E712 (nullable booleans)
            # released groups without an interval: noisy-stats' interval rule refused it at
            # the group's public n and ε, or from the group's release
            "refused": int((~table["failed"].astype(bool) & table["lower_slope"].isna()).sum())}
        if "ci_point_mass" in table.columns:  # Theil-Sen: the release rule for tied slopes
            summary["intervals"]["point_mass"] = int(
                table["ci_point_mass"].fillna(False).astype(bool).sum())
        ok = [int(m) for m in table.loc[~table["failed"].astype(bool), "n"] if int(m) >= 2]
        tight = entry.tight_intervals(epsilon=eps, sizes=ok, options=opts) \
            if math.isfinite(eps) else None
        if tight is not None:
            # which released groups got the method's conservative fallback interval (Theil-Sen:
            # tight instead of calibrated): the fit's own public rule at each group's n
            summary["intervals"]["tight"] = int(sum(bool(t) for t in tight))
    return summary


def _print_groups_text(summary: dict[str, Any], opts: dict[str, Any], out: Path) -> None:
    """fit-groups' text output: what was written, the intervals, the privacy line, the ledger."""
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
                          "offered there)" if iv.get("tight") else "") + (
                          f"; WARNING TIES: {iv['point_mass']} group"
                          f"{'' if iv['point_mass'] == 1 else 's'} flagged ci_point_mass "
                          "(slope interval within 2θ of 0: the median pairwise slope piles "
                          "up at exactly 0, as with a response of few values)"
                          if iv.get("point_mass") else ""), highlight=False)
    console.print(summary["privacy"], highlight=False)
    if "ledger" in summary:
        console.print(summary["ledger"]["text"], highlight=False)
