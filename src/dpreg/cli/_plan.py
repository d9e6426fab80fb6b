"""``dpreg plan``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from dpreg.cli._app import _fail, app, console
from dpreg.cli._options import _open_ledger
from dpreg.cli._output import _print_json
from dpreg.cli._parse import (
    _ascii_float,
    _ascii_int,
    _check_range,
    parse_bounds,
    parse_delta,
    parse_epsilon,
    parse_options,
)
from dpreg.cli._sources import _read_table
from dpreg.exceptions import DPRegError


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
                   target_sd=target_sd, target=target, random_state=seed, n_sim=n_sim,
                   **opts)
    except DPRegError as exc:
        _fail(exc)
        return
    if as_json:
        _print_json(res.to_dict())
    else:
        console.print(str(res), highlight=False)
