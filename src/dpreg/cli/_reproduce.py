"""``dpreg reproduce``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from dpreg.cli._app import _fail, app, console
from dpreg.cli._options import ProgressOption
from dpreg.cli._output import _print_json, _print_table
from dpreg.cli._parse import _ascii_int, _check_range
from dpreg.exceptions import DPRegError


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
    progress: ProgressOption = None,
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
