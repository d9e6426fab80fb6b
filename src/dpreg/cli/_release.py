"""``dpreg release-cov`` and ``dpreg regress``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer

from dpreg.cli._app import _cli_warning, _fail, _library_warnings, app, console
from dpreg.cli._options import (
    _RELEASE_KEY_HELP,
    RELEASE_KEY_ENV,
    BackendOption,
    CodebookOption,
    NotPrivateOption,
    ProgressOption,
    SeedOption,
    _ledger_line,
    _notice_fields,
    check_ci,
    open_ledger,
    release_options,
)
from dpreg.cli._output import (
    _check_plot_extra,
    _intervals,
    _plot_result,
    _print_json,
    _print_summary,
    _result_json,
)
from dpreg.cli._parse import (
    _ascii_float,
    _ascii_int,
    _check_choice,
)
from dpreg.cli._sources import _check_columns, _header, read_data
from dpreg.exceptions import DPRegError


@app.command("release-cov")
def release_cov(
    data: Annotated[Path, typer.Argument(help="CSV file with a header row, or a Parquet file "
                                         "(streamed in chunks).")],
    columns: Annotated[list[str], typer.Option("--columns", "-c", help="Columns to release (repeat).")],
    epsilon: Annotated[str, typer.Option("--epsilon", "-e", metavar="EPS")],
    delta: Annotated[str, typer.Option("--delta", "-d", metavar="DELTA")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the release (JSON).")],
    bounds: Annotated[list[str] | None, typer.Option(
        "--bounds", "-b", help="Public bounds COL=LO:HI.")] = None,
    seed: SeedOption = None,
    ledger: Annotated[Path | None, typer.Option("--ledger")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    not_private: NotPrivateOption = False,
    backend: BackendOption = "local",
    codebook: CodebookOption = None,
    progress: ProgressOption = None,
    key: Annotated[Path | None, typer.Option("--key", help=_RELEASE_KEY_HELP)] = None,
) -> None:
    """Release a DP SSCP (covariance) matrix once; analyse it later with `dpreg regress`.

    The file carries an integrity record: the SHA-256 digest of its content and, with --key,
    an HMAC-SHA256 and the key's id (never the key); `dpreg regress` refuses a file altered
    after it was written."""
    given = release_options(epsilon=epsilon, delta=delta, not_private=not_private, seed=seed,
                            bounds=bounds)
    eps, dlt = given.epsilon, given.delta
    assert dlt is not None  # --delta is a required option
    cols: list[str] = []
    for c in columns:
        cols.extend(part for part in c.split(",") if part)
    _check_choice(backend, "--backend", ("local", "spark"))
    try:
        from dpreg._integrity import resolve_key
        from dpreg.covariance import release_sscp
        from dpreg.privacy import release_context

        signing = resolve_key(_release_key(key), "--key")  # read before anything is charged
        _check_columns(_header(data), {"--columns": cols})
        frame = read_data(data, backend, stream=True)  # a Parquet file is streamed in chunks
        led = open_ledger(ledger)
        from dpreg._progress import interactive, spinner

        with _library_warnings(), release_context(entry="dpreg release-cov", data=str(data)), \
                spinner(f"releasing the SSCP matrix of {len(cols)} columns",
                        enabled=interactive(progress)):
            rel = release_sscp(frame, columns=cols, bounds=given.bounds, epsilon=eps, delta=dlt,
                               random_state=seed, ledger=led, codebook=codebook)
        rel.save(out, key=signing)
        record = json.loads(out.read_text(encoding="utf-8"))["integrity"]
    except DPRegError as exc:
        _fail(exc)
        return
    fields = _notice_fields(eps, seed)
    if led is not None:
        fields["ledger"] = _ledger_line(led)
    integrity = {"sha256": record["sha256"], "key_id": record.get("key_id"),
                 "hmac": "hmac_sha256" in record}
    if as_json:
        _print_json({"out": str(out), "columns": cols, "epsilon": eps, "delta": dlt,
                     "integrity": integrity, **fields})
    else:
        _print_release_text(out, cols, eps, dlt, integrity, fields)


def _print_release_text(out: Path, cols: list[str], eps: float, dlt: float,
                        integrity: dict[str, Any], fields: dict[str, Any]) -> None:
    """release-cov's text output: what was written, its integrity record, notices, ledger."""
    what = (f"NOT PRIVATE SSCP matrix (ε=inf: exact, no noise) of {len(cols)} columns"
            if math.isinf(eps) else
            f"DP SSCP release of {len(cols)} columns")
    claim = "" if math.isinf(eps) else f" ((ε={eps:g}, δ={dlt:g})-DP)"
    console.print(f"wrote {what} to {out}{claim}; analyse it with: dpreg regress {out} "
                  f"\"{cols[-1]} ~ {' + '.join(cols[:-1]) or '1'}\"", highlight=False)
    console.print(f"integrity: sha256 {integrity['sha256']}"
                  + (f"; signed with HMAC-SHA256, key id {integrity['key_id']}"
                     if integrity["hmac"] else "; not signed (no --key)"),
                  highlight=False, soft_wrap=True)
    if fields["notice"]:
        console.print(fields["notice"], highlight=False)
    if "ledger" in fields:
        console.print(fields["ledger"]["text"], highlight=False)


@app.command()
def regress(
    release: Annotated[Path, typer.Argument(help="A release written by `dpreg release-cov`.")],
    formula: Annotated[str, typer.Argument(help='Formula over released columns, e.g. "y ~ x1 + x2".')],
    as_json: Annotated[bool, typer.Option("--json")] = False,
    ci: Annotated[float | None, typer.Option(
        "--ci", parser=_ascii_float,
        help="Report (1-ALPHA) DP-aware intervals (default level 0.05 in the summary).")] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", parser=_ascii_int,
        help="Seed of the interval's simulation (post-processing: it does not affect "
        "privacy). Default: derived from the release file and the formula, so the same "
        "release gives the same intervals on every run.")] = None,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Also draw the coefficients with their intervals to this file.")] = None,
    key: Annotated[Path | None, typer.Option(
        "--key", help=f"Key file the release was signed with: its HMAC-SHA256 must match "
        f"(default: ${RELEASE_KEY_ENV} if set).")] = None,
    expect_digest: Annotated[str | None, typer.Option(
        "--expect-digest", metavar="SHA256",
        help="The release's SHA-256 digest as obtained out of band (e.g. published by the "
        "curator): the file must match it.")] = None,
    verify: Annotated[bool, typer.Option(
        "--verify/--no-verify", help="--no-verify reads a file that fails its integrity check "
        "(altered after it was written) anyway; every output then says UNVERIFIED.")] = True,
) -> None:
    """OLS on a released DP SSCP matrix (post-processing: no further privacy cost).

    The file's integrity record is checked first: a file altered after it was written is
    refused (--no-verify reads it, marked UNVERIFIED); the outcome is printed and is the JSON
    field release_integrity."""
    check_ci(ci)
    try:
        _check_plot_extra(plot)
        from dpreg._integrity import check_hex_digest
        from dpreg.covariance import SSCPRelease

        rel = SSCPRelease.load(release, key=_release_key(key), verify=verify,
                               expect_digest=check_hex_digest(expect_digest, "--expect-digest"))
        res = rel.regress(formula, random_state=_release_seed(release, formula) if seed is None
                          else seed)
        ci_frame = _intervals(res, ci)
        _plot_result(res, plot, ci)
    except DPRegError as exc:
        _fail(exc)
        return
    status = rel.integrity
    if status is not None and not status.verified:
        _cli_warning(f"release file {release} is UNVERIFIED: {status.detail}")
    if as_json:
        out = _result_json(res, ci, ci_frame)
        out["release_integrity"] = None if status is None else status.as_dict()
        _print_json(out)
    else:
        _print_summary(res, ci)
        if status is not None:
            console.print(f"release file {release}: {status.label}: {status.detail}"
                          + (f"; sha256 {status.digest}" if status.digest else ""),
                          highlight=False, soft_wrap=True)


def _release_key(key: Path | None) -> Path | None:
    """``--key``, else ``$DPREG_KEY``, else None."""
    import os

    if key is None and os.environ.get(RELEASE_KEY_ENV):
        return Path(os.environ[RELEASE_KEY_ENV])
    return key


def _release_seed(path: Path, formula: str) -> int:
    """The default seed of ``dpreg regress``: a hash of the release file's bytes and the
    formula (public: the file is a DP release), so reruns give the same intervals."""
    import hashlib

    digest = hashlib.sha256(path.read_bytes() + b"\0" + formula.encode("utf-8")).digest()
    return int.from_bytes(digest[:16], "little")
