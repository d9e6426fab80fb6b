"""``dpreg audit``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from dpreg.cli._app import _fail, app, console
from dpreg.cli._options import ProgressOption
from dpreg.cli._output import _print_json, _print_table
from dpreg.cli._parse import _ascii_float, _ascii_int, _check_range
from dpreg.exceptions import DPRegError


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
    progress: ProgressOption = None,
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
