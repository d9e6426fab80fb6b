"""``dpreg ledger init|show|seal`` and ``dpreg key init|id``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from dpreg.cli._app import _fail, _usage, console, err_console, key_app, ledger_app
from dpreg.cli._options import _LEDGER_KEY_HELP, LEDGER_KEY_ENV, _ledger_key, _open_ledger, privacy_options
from dpreg.cli._output import _is_terminal, _print_json, _print_table
from dpreg.cli._parse import _check_choice
from dpreg.exceptions import DPRegError


@ledger_app.command("init")
def ledger_init(
    path: Annotated[Path, typer.Argument(help="SQLite file to create.")],
    epsilon: Annotated[str, typer.Option("--epsilon", "-e", metavar="EPS", help="Total ε.")],
    delta: Annotated[str, typer.Option("--delta", "-d", metavar="DELTA",
                                       help="Total δ (0: pure DP ledger).")] = "0",
    neighbouring: Annotated[str, typer.Option(
        "--neighbouring", help="The relation the ledger accounts: replace-one (default; "
        "add-remove releases are charged 2ε) or add-remove (replace-one releases are "
        "refused).")] = "replace-one",
    not_private: Annotated[bool, typer.Option(
        "--not-private", help="Allow --epsilon inf (a NOT PRIVATE ledger that refuses no "
        "charge) and --delta in [0.5, 1).")] = False,
    key: Annotated[Path | None, typer.Option(
        "--key", help="Key file of the ledger's HMAC chain (created, mode 0600, if missing; "
        f"default: ${LEDGER_KEY_ENV} if set, else PATH.key beside the ledger).")] = None,
    no_key: Annotated[bool, typer.Option(
        "--no-key", help="No key: an unkeyed SHA-256 chain, which detects accidental and naive "
        "edits but not an edit whose chain was recomputed.")] = False,
) -> None:
    """Create a persistent ledger with a total (ε,δ) budget for one neighbouring relation.

    Its events and total are protected by an HMAC-SHA256 chain under a key file (PATH.key,
    created with mode 0600 unless --key names another or --no-key): an edited, deleted,
    inserted or reordered event, a truncated history or an edited total is detected by every
    later charge and by `dpreg ledger show`.  Keep the key readable only by those who charge
    the ledger, and outside any folder others can write to."""
    if key is not None and no_key:
        _usage("--key and --no-key exclude each other")
    eps_total, delta_total = privacy_options(epsilon, delta, not_private)
    try:
        from dpreg.privacy import check_neighbouring as _relation

        _relation(neighbouring, "--neighbouring")
    except DPRegError:
        _check_choice(neighbouring.strip().lower(), "--neighbouring",
                      ("replace-one", "add-remove"))
    try:
        from dpreg import ApproxDP, Ledger, PureDP
        from dpreg.exceptions import InvalidInputError
        from dpreg.privacy import check_neighbouring

        rel = check_neighbouring(neighbouring, "--neighbouring")
        if path.exists():
            raise InvalidInputError(f"{path} already exists; use `dpreg ledger show {path}`")
        total = PureDP(eps_total) if not delta_total else ApproxDP(eps_total, delta_total)
        if total.epsilon == 0:
            raise InvalidInputError("epsilon must be a real number with 0 < epsilon; got 0.0")
        key_file = False if no_key else _ledger_key(key)
        led = Ledger(total, path, neighbouring=rel, key_file=key_file)
        status = led.integrity
        led.close()
    except DPRegError as exc:
        _fail(exc)
        return
    console.print(f"created ledger {path} with total {total} for {rel} neighbours"
                  + (" -- NOT PRIVATE: an infinite total refuses no charge"
                     if total.is_infinite else ""), highlight=False)
    if isinstance(total, PureDP):  # say now what the first (ε, δ) fit would find out
        console.print("note: without --delta this ledger accounts pure-ε releases only; "
                      "methods that need δ (`dpreg methods`, column 'needs --delta') are refused "
                      "before any data is read. Give --delta to allow them.", highlight=False,
                      soft_wrap=True)
    from dpreg.privacy.ledger import default_key_path

    if status is not None and status.key_id:
        where = key_file if isinstance(key_file, Path) else default_key_path(path)
        console.print(f"integrity: HMAC-SHA256 chain under the key file {where} (key id "
                      f"{status.key_id}); keep it readable only by those who charge the ledger",
                      highlight=False, soft_wrap=True)
    else:
        console.print("integrity: unkeyed SHA-256 chain (--no-key): detects accidental and "
                      "naive edits, not an edit whose chain was recomputed", highlight=False,
                      soft_wrap=True)


@ledger_app.command("show")
def ledger_show(
    path: Annotated[Path, typer.Argument(help="Ledger file.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
    key: Annotated[Path | None, typer.Option("--key", help=_LEDGER_KEY_HELP)] = None,
    verify: Annotated[bool, typer.Option(
        "--verify/--no-verify", help="--no-verify shows a ledger that fails its integrity check "
        "(altered, or keyed and its key missing) anyway, marked UNVERIFIED; the exit code is "
        "still 1.")] = True,
) -> None:
    """Show a ledger's total, relation, spending, events (stated and charged budgets) and its
    integrity check.  Exit code 1 when the ledger fails the check (altered outside dpreg, or
    keyed and its key missing)."""
    try:
        led = _open_ledger(path, key=key, verify=verify)
        info = led.as_dict()
        events = led.events()
        describe = led.describe()
        status = led.integrity
        led.close()
    except DPRegError as exc:
        _fail(exc)
        return
    failed = status is not None and status.status == "unverified"
    if as_json:
        _print_json(info)
        if failed:
            raise typer.Exit(code=1)
        return
    from dpreg.privacy import Budget

    def info_time(e: Any) -> str:
        return str(e.as_dict()["time"]).removesuffix(" UTC")

    total, spent, remaining = (Budget.from_dict(info[k]) for k in ("total", "spent", "remaining"))
    relation = info["neighbouring"] + (" (legacy file: no relation stored, treated as "
                                       "replace-one)" if info["legacy_relation"] else "")
    title = (f"ledger {path}: total {total} for {relation} neighbours; spent {spent}, "
             f"remaining {remaining}")
    if not _is_terminal(sys.stdout):  # piped: the title as a line, then tab-separated rows
        console.print(title, highlight=False, soft_wrap=True)
    _print_table(title, ["id", "time (UTC)", "requested", "charged", "stated (relation)",
                         "released", "label"],
                 [[str(e.id), info_time(e), "-" if e.requested is None else str(e.requested),
                   str(e.budget) + ("" if e.private else " NOT PRIVATE"),
                   f"{e.stated} ({e.neighbouring})", e.released if e.info else "-", e.label]
                  for e in events])
    console.print(f"ledger {path}: {describe}", highlight=False)
    if not info["private"]:
        console.print("NOT PRIVATE: this ledger has an infinite total or charge (a non-private "
                      "budget): its releases carry no privacy guarantee", highlight=False)
    if status is not None:
        console.print(f"integrity: {status.label}: {status.detail}"
                      + (f"; head {status.digest}" if status.digest else ""),
                      highlight=False, soft_wrap=True)
    if failed:
        err_console.print(f"[bold red]error:[/] ledger {path} is UNVERIFIED (shown with "
                          "--no-verify): its content cannot be trusted", highlight=False,
                          soft_wrap=True)
        raise typer.Exit(code=1)


@ledger_app.command("seal")
def ledger_seal(
    path: Annotated[Path, typer.Argument(help="Ledger file.")],
    key: Annotated[Path | None, typer.Option(
        "--key", help="Key file of the chain (created, mode 0600, if missing; default: "
        f"${LEDGER_KEY_ENV} if set, else PATH.key beside the ledger).")] = None,
    no_key: Annotated[bool, typer.Option(
        "--no-key", help="An unkeyed SHA-256 chain (detects accidental and naive edits only).")
    ] = False,
    reseal: Annotated[bool, typer.Option(
        "--reseal", help="Replace an existing integrity record (after its key was lost, or an "
        "alteration was inspected with `ledger show --no-verify` and accepted).")] = False,
) -> None:
    """Add an integrity chain to a ledger written by an older dpreg (it has none).

    Sealing accepts the ledger's content as it is now: inspect it first (`dpreg ledger show
    PATH`).  One write transaction: all or nothing."""
    if key is not None and no_key:
        _usage("--key and --no-key exclude each other")
    try:
        from dpreg import Ledger
        from dpreg.exceptions import InvalidInputError

        if not path.exists():
            raise InvalidInputError(f"ledger {path} does not exist")
        with Ledger(None, path, key_file=False if no_key else _ledger_key(key),
                    verify=False) as led:
            status = led.seal(reseal=reseal)
    except DPRegError as exc:
        _fail(exc)
        return
    console.print(f"sealed ledger {path}: {status.label}: {status.detail}", highlight=False,
                  soft_wrap=True)


# ------------------------------------------------------------------ keys
@key_app.command("init")
def key_init(
    path: Annotated[Path, typer.Argument(help="Key file to create (never overwritten).")],
) -> None:
    """Create a key file: 32 random bytes (Python's secrets module), mode 0600.  It signs
    release files (release-cov --key) and ledgers (ledger init --key); whoever can read it can
    also forge those signatures, so keep it private.  Prints the key's id, never the key."""
    try:
        from dpreg._integrity import create_key_file

        kid = create_key_file(path)
    except DPRegError as exc:
        _fail(exc)
        return
    console.print(f"created key file {path} (key id {kid}); keep it secret: whoever can read "
                  "it can sign altered files", highlight=False, soft_wrap=True)


@key_app.command("id")
def key_id_cmd(
    path: Annotated[Path, typer.Argument(help="Key file.")],
) -> None:
    """Print a key file's id (a hash prefix that names the key without revealing it)."""
    try:
        from dpreg._integrity import key_id, read_key_file

        kid = key_id(read_key_file(path))
    except DPRegError as exc:
        _fail(exc)
        return
    sys.stdout.write(kid + "\n")
