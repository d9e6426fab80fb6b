"""The option pipeline shared by the commands: privacy parameters, seed, method, ledger."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from dpreg.cli._app import _cli_text, _cli_warning, _fail, _usage, _usage_error
from dpreg.cli._parse import parse_delta, parse_epsilon
from dpreg.exceptions import DPRegError

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

_BACKEND_HELP = ("local (default: in this process; a Parquet file is streamed in chunks for the "
                 "sufficient-statistics methods) or spark (the executors read DATA and sum the "
                 "statistics; the active SparkSession or local[2]; needs dpreg[spark] and Java)")

_PROGRESS_HELP = ("Show progress bars on stderr (default: only when stderr is a terminal; "
                  "--no-progress: never).  They show counts and times, never data.")

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


_SEED_HELP = ("Seed (reproducible). The release is private only if the seed is secret and has "
              ">= 128 bits of entropy: omit it for a real release (secure mode).")


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
