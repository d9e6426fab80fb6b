"""``dpreg methods`` and ``dpreg datasets``."""

from __future__ import annotations

from typing import Annotated

import typer

from dpreg.cli._app import app
from dpreg.cli._output import _print_json, _print_table


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
