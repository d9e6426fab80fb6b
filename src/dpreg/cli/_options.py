"""The option pipeline shared by the commands.

Every command that releases (fit, fit-groups, release-cov) runs the same steps, each ONE function
here, in this order, all before any value of DATA is read or any budget is charged:

1. :func:`release_options`: ``-o`` options, ε and δ (with the ``--not-private`` checks and the
   large-δ / NOT PRIVATE warnings), the weak-seed warning, ``--bounds``;
2. :func:`check_ci`: ``--ci ALPHA`` in (0, 1) (also regress);
3. :func:`method_for`: ``--method``'s spec, with ``--ci`` as the method option ``ci_alpha`` and a
   usage error for a method that has no interval;

then DATA through :func:`dpreg.cli._sources.read_data` and the ledger through
:func:`open_ledger`.  The option types the commands share (``--seed``, ``--not-private``,
``--progress``, ``--backend``, ``--codebook``) are declared once here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from dpreg.cli._app import _CODEBOOK_HELP, _cli_text, _cli_warning, _fail, _usage, _usage_error
from dpreg.cli._parse import (
    _NOT_PRIVATE_HELP,
    _ascii_int,
    _check_range,
    parse_bounds,
    parse_delta,
    parse_epsilon,
    parse_options,
)
from dpreg.exceptions import DPRegError

_BACKEND_HELP = ("local (default: in this process; a Parquet file is streamed in chunks for the "
                 "sufficient-statistics methods) or spark (the executors read DATA and sum the "
                 "statistics; the active SparkSession or local[2]; needs dpreg[spark] and Java)")

_PROGRESS_HELP = ("Show progress bars on stderr (default: only when stderr is a terminal; "
                  "--no-progress: never).  They show counts and times, never data.")

_SEED_HELP = ("Seed (reproducible). The release is private only if the seed is secret and has "
              ">= 128 bits of entropy: omit it for a real release (secure mode).")

#: the option types the commands share (typer reads them from the annotations)
SeedOption = Annotated[int | None, typer.Option("--seed", parser=_ascii_int, help=_SEED_HELP)]
NotPrivateOption = Annotated[bool, typer.Option("--not-private", help=_NOT_PRIVATE_HELP)]
ProgressOption = Annotated[bool | None, typer.Option("--progress/--no-progress",
                                                     help=_PROGRESS_HELP)]
BackendOption = Annotated[str, typer.Option("--backend", help=_BACKEND_HELP)]
CodebookOption = Annotated[Path | None, typer.Option("--codebook", help=_CODEBOOK_HELP)]

#: environment variable naming a default ledger file for fit, fit-groups and release-cov
LEDGER_ENV = "DPREG_LEDGER"
#: environment variable naming the key file of the ledgers (default: PATH.key beside a ledger)
LEDGER_KEY_ENV = "DPREG_LEDGER_KEY"
#: environment variable naming the key file that signs (release-cov) and verifies (regress)
#: release files
RELEASE_KEY_ENV = "DPREG_KEY"
_RELEASE_KEY_HELP = (f"Key file (dpreg key init) that signs the release with HMAC-SHA256 "
                     f"(default: ${RELEASE_KEY_ENV} if set; else only an unkeyed SHA-256 "
                     "digest, which detects accidental edits but not a recomputed one).")
_LEDGER_KEY_HELP = (f"The ledger's key file (default: ${LEDGER_KEY_ENV} if set, else PATH.key "
                    "beside the ledger).")


def _ledger_key(key: Path | None) -> Path | None:
    """``--key``, else ``$DPREG_LEDGER_KEY``, else None (the ledger's own PATH.key)."""
    import os

    if key is None and os.environ.get(LEDGER_KEY_ENV):
        return Path(os.environ[LEDGER_KEY_ENV])
    return key


def _open_ledger(path: Path | None, *, use_default: bool = False, key: Path | None = None,
                 verify: bool = True) -> Any:
    """The ledger file ``path``; without one (and ``use_default``), the file named by
    ``$DPREG_LEDGER`` if set.  The file must exist (``dpreg ledger init``).  Its integrity
    record is verified with its key file (``key``, ``$DPREG_LEDGER_KEY`` or PATH.key); a file
    without a record (an older dpreg) prints a warning."""
    import os

    how = ""
    if path is None and use_default and os.environ.get(LEDGER_ENV):
        path, how = Path(os.environ[LEDGER_ENV]), f" (from ${LEDGER_ENV})"
    if path is None:
        return None
    from dpreg import Ledger
    from dpreg.exceptions import InvalidInputError

    if not path.exists():
        raise InvalidInputError(
            f"ledger {path}{how} does not exist; create it first with: dpreg ledger init {path} "
            "--epsilon TOTAL [--delta TOTAL_DELTA]"
        )
    led = Ledger(None, path, key_file=_ledger_key(key), verify=verify)
    status = led.integrity
    if use_default and status is not None and status.status == "no-record":
        _cli_warning(f"ledger {path}: {status}")
    return led


def _ledger_line(led: Any) -> dict[str, Any]:
    """What the ledger has left after a charge (for the output of fit, fit-groups,
    release-cov): ``{"path", "spent", "remaining", "text"}`` in the ledger's units."""
    return {"path": str(led.path), "spent": led.spent().as_dict(),
            "remaining": led.remaining().as_dict(), "text": f"ledger {led.path}: {led.describe()}"}


def privacy_options(epsilon: str, delta: str | None, not_private: bool, *,
                    eps_option: str = "--epsilon") -> tuple[float, float | None]:
    """Parse ε and δ of one command, check that ``--not-private`` is used for what it allows,
    and print the one-line warnings (large δ, NOT PRIVATE run)."""
    from dpreg.privacy.notices import NOT_PRIVATE_NOTICE, large_delta_message

    eps = parse_epsilon(epsilon, option=eps_option, not_private=not_private)
    dlt = parse_delta(delta, not_private=not_private)
    if not_private and math.isfinite(eps) and (dlt is None or dlt < 0.5):
        _usage_error("--not-private", f"used with {eps_option} inf (or above the cap) or "
                     "--delta >= 0.5 (it allows nothing else)",
                     f"{eps_option} {epsilon}", "; drop --not-private for a private run")
    text = large_delta_message(dlt, shown="--delta")
    if text is not None:
        _cli_warning(text)
    if math.isinf(eps):
        _cli_warning(f"--not-private: {NOT_PRIVATE_NOTICE}")
    return eps, dlt


def warn_seed(seed: int | None) -> None:
    """One stderr line when ``--seed`` cannot carry 128 bits of entropy (below 2**96)."""
    from dpreg.privacy.notices import weak_seed, weak_seed_message

    if seed is not None and weak_seed(seed):
        _cli_warning(weak_seed_message(f"--seed {seed}"))


def _warn_delta_per_n(delta: float | None, nobs: int | None) -> None:
    """δ >= 1/n where n is public (replace-one results); δ >= 1e-3 was said already."""
    from dpreg.privacy.notices import large_delta_message

    if nobs and large_delta_message(delta) is None:
        text = large_delta_message(delta, n_public=nobs, shown="--delta")
        if text is not None:
            _cli_warning(text)


def _method_entry(method: str) -> Any:
    """The spec of ``--method`` (a misspelt name: usage error, exit 2, with a did-you-mean) --
    checked before any data is read."""
    from dpreg import methods

    try:
        return methods.get(method)
    except DPRegError as exc:
        _fail(exc)
        raise  # pragma: no cover - _fail exits


def _warn_ignored(entry: Any, delta: float | None, one_regressor: bool) -> None:
    """``warning:`` lines for parameters the method will not use (the run continues): a δ
    given to a release that is pure ε-DP (``needs --delta`` is "no" in ``dpreg methods``, or
    "with 2+ regressors" and there is one)."""
    if delta is None or delta == 0:
        return
    if entry.delta == "never" or (entry.delta == "multi-x" and one_regressor):
        why = "is pure ε-DP" if entry.delta == "never" else "is pure ε-DP with one regressor"
        _cli_warning(f"--delta {delta:g} is ignored: --method {entry.name} {why} (it spends "
                     "only ε; see `dpreg methods`)")


def _check_ci_supported(entry: Any, ci: float | None) -> None:
    """``--ci`` with a method that never has an interval (its spec's ``interval.request`` is
    ``"none"``): a usage error (exit 2) before any data is read or budget charged, with the
    reason."""
    if ci is None:
        return
    if entry.interval.request == "none":
        why = _cli_text(entry.interval.missing.removeprefix("none: "))
        _usage(f"--ci is not supported by --method {entry.name}: {why}")


def _notice_fields(eps: float, seed: int | None) -> dict[str, Any]:
    """``private``, ``seeded`` and ``notice`` of a command's JSON/text output (the same
    notices as :attr:`dpreg.PrivacyStatement.notices`)."""
    from dpreg.privacy.notices import NOT_PRIVATE_NOTICE, SEED_NOTICE

    notices = ([NOT_PRIVATE_NOTICE] if math.isinf(eps) else []) + (
        [SEED_NOTICE] if seed is not None else [])
    return {"private": math.isfinite(eps), "seeded": seed is not None,
            "notice": " | ".join(notices)}


# ------------------------------------------------------------------ the pipeline
@dataclass(frozen=True)
class ReleaseOptions:
    """The parsed options every releasing command starts from."""

    #: ``-o KEY=VALUE`` method options, typed (:func:`parse_options`)
    options: dict[str, Any]
    epsilon: float
    delta: float | None
    #: ``--bounds`` as :func:`parse_bounds` gives them
    bounds: Any


def release_options(*, epsilon: str, delta: str | None, not_private: bool, seed: int | None,
                    bounds: list[str] | None, option: list[str] | None = None,
                    command: str | None = None) -> ReleaseOptions:
    """Step 1 of a releasing command, in this order (the first bad input is the one reported,
    a usage error, exit 2): the ``-o`` options of ``command`` (none when ``command`` is None),
    ε and δ (:func:`privacy_options`), the weak-seed warning (:func:`warn_seed`), ``--bounds``.
    Nothing is read from DATA and nothing is charged."""
    opts = {} if command is None else parse_options(option, command=command)
    eps, dlt = privacy_options(epsilon, delta, not_private)
    warn_seed(seed)
    return ReleaseOptions(opts, eps, dlt, parse_bounds(bounds))


def check_ci(ci: float | None) -> None:
    """``--ci ALPHA``: 0 < ALPHA < 1, else a usage error (exit 2) naming the option."""
    _check_range(ci, "--ci", low=0, high=1, open_low=True)


def method_for(method: str, opts: dict[str, Any], ci: float | None) -> Any:
    """The spec of ``--method`` (a misspelt name: exit 2 with a did-you-mean), with ``--ci``
    set as the method option ``ci_alpha`` in ``opts`` (an explicit ``-o ci_alpha`` wins) and a
    usage error when an interval is asked of a method that never has one -- before any data
    is read or budget charged."""
    if ci is not None:
        opts.setdefault("ci_alpha", ci)
    entry = _method_entry(method)
    _check_ci_supported(entry, opts.get("ci_alpha"))
    return entry


def open_ledger(path: Path | None) -> Any:
    """The ledger a releasing command charges: ``--ledger``, else ``$DPREG_LEDGER`` if set,
    else None (:func:`_open_ledger`)."""
    return _open_ledger(path, use_default=True)
