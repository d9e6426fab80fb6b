"""``dpreg codebook init``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from dpreg.cli._app import _fail, codebook_app, console
from dpreg.cli._sources import _header, _is_parquet
from dpreg.exceptions import DPRegError


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
