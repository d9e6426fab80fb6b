"""``dpreg demo``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dpreg.cli._app import _fail, _usage, app, console
from dpreg.cli._options import ProgressOption
from dpreg.cli._output import _print_json, _print_table
from dpreg.cli._parse import _ascii_int, _check_range, parse_epsilon
from dpreg.exceptions import DPRegError


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
    workers: Annotated[int | None, typer.Option(
        "--workers", "-j", parser=_ascii_int,
        help="--scale state: processes for the methods' runs (default: one per CPU, at most one "
             "per method; the output does not depend on it).")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    progress: ProgressOption = None,
) -> None:
    """The main job: per-tract DP regressions on the bundled simulated state, or (--scale
    nation) the national job on a simulated nation of 20.9 M people."""
    from dpreg._validation import did_you_mean
    from dpreg.exceptions import UnknownNameError

    _check_range(trials, "--trials", low=1, integer=True)
    _check_range(tracts, "--tracts", low=1, integer=True)
    _check_range(workers, "--workers", low=1, integer=True)
    try:
        if scale not in ("state", "nation"):
            raise UnknownNameError(f"--scale must be 'state' or 'nation'; got {scale!r}"
                                   f"{did_you_mean(scale, ['state', 'nation'])}")
        if scale == "state" and (method or data is not None):
            _usage("--method and --data apply to --scale nation only")
        if scale == "nation" and workers is not None:
            _usage("--workers applies to --scale state only")
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
                          console=None if as_json else console, workers=workers)
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
