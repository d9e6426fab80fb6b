"""The ``dpreg`` command line (thin: parses, calls library functions, prints/writes).

Exit codes: 0 success, 1 data/privacy error (bad data, exhausted ledger, mechanism ⊥), 2 usage
error (unknown option, malformed ``--bounds``, an ε or δ outside its range, conflicting flags, a
bad parameter value: :class:`~dpreg.exceptions.InvalidParameterError`, and a misspelt
method/column/option/bounds key: its subclass :class:`~dpreg.exceptions.UnknownNameError`, with a
did-you-mean; ``--ci`` with a method that has no interval).  ``-o`` keys the method accepts but
does not use in the call warn.  Listings are plain tab-separated lines when stdout is not a terminal; progress
bars go to stderr, only on a terminal or with ``--progress`` (:mod:`dpreg._progress`).  Errors print one
line without a traceback unless ``--debug`` is given; warnings print one line ``warning: ...``
on stderr and leave the exit code unchanged.

ε and δ are parsed from the raw text (:func:`parse_epsilon`, :func:`parse_delta`), never by a
silently overflowing ``float()``: ``inf``, ``1e309`` or ``nan`` for ε and a δ that underflows
(``1e-400``) are usage errors, and so is ε above the cap :data:`dpreg.privacy.EPSILON_MAX` (100:
its noise is below the printed precision of the outputs, no privacy in practice);
``--not-private`` (fit, fit-groups, release-cov, ledger init) allows ``--epsilon inf`` or an ε
above the cap (run as ``inf``: the exact, NOT PRIVATE result, labelled so in every output),
and ``--delta`` in [0.5, 1).  Every number typed on the
command line (ε, δ, ``--bounds``, ``-o`` values, ``--ci`` and the integer options) is read by
one whitelist of ASCII decimal literals (:data:`dpreg._validation.ASCII_NUMBER`): Unicode digits
such as ``١`` or ``１`` and ``_`` separators are refused, naming the option.  ``-o KEY=VALUE``
values are whitelisted (:func:`parse_options`: a number, true/false, none, a word or a flat
list of numbers) and a key that the command sets itself is refused naming its option.  Every
warning of a command prints as one ``warning: ...`` line (never Python's format with a source
path).  Every ``--json`` output is strict JSON: non-finite numbers are written as ``null``
(:func:`dpreg._json.strict_jsonable`).

Files the CLI writes and later trusts carry integrity records (docs/threat-model.md):
``release-cov`` writes a SHA-256 digest of the release (``--key KEYFILE`` or ``$DPREG_KEY``:
HMAC-SHA256 too) that ``regress`` checks (``--no-verify`` reads an altered file, marked
UNVERIFIED); a ledger's HMAC chain uses ``PATH.key`` (or ``--key`` / ``$DPREG_LEDGER_KEY``).  Key
files come from ``dpreg key init``; no output ever contains a key.

Layout: one module per command or command group (``_fit``, ``_fit_groups``, ``_release``
(release-cov, regress), ``_plan``, ``_ledger`` (ledger, key), ``_codebook``, ``_listings``
(methods, datasets), ``_demo``, ``_reproduce``, ``_audit``) over the shared option pipeline
(``_options``: ε/δ, seed, method, ``--ci``, ledger, DATA), the whitelist parsers (``_parse``),
DATA reading (``_sources``), printing (``_output``) and the typer applications (``_app``).
"""

from __future__ import annotations

from dpreg._extras import missing_extra

try:  # the command line lives behind the [cli] extra
    import rich  # noqa: F401
    import typer  # noqa: F401
except ImportError as _exc:
    missing_extra(_exc, "the dpreg command line", extra="cli")
    raise

# importing a command module registers its commands on the app, in this order (the order of
# `dpreg --help`)
# isort: off
from dpreg.cli import _fit, _listings, _fit_groups, _release, _plan  # noqa: E402
from dpreg.cli import _codebook, _ledger, _demo, _reproduce, _audit  # noqa: E402
# isort: on
from dpreg.cli._app import app, codebook_app, console, err_console, key_app, ledger_app  # noqa: E402
from dpreg.cli._options import (  # noqa: E402
    LEDGER_ENV,
    LEDGER_KEY_ENV,
    RELEASE_KEY_ENV,
    privacy_options,
    warn_seed,
)
from dpreg.cli._output import _print_json  # noqa: E402
from dpreg.cli._parse import DELTA_MIN, parse_bounds, parse_delta, parse_epsilon, parse_options  # noqa: E402

__all__ = ["DELTA_MIN", "LEDGER_ENV", "LEDGER_KEY_ENV", "RELEASE_KEY_ENV", "_print_json", "app",
           "codebook_app",
           "console", "err_console", "key_app", "ledger_app", "main", "parse_bounds",
           "parse_delta", "parse_epsilon", "parse_options", "privacy_options", "warn_seed"]
_COMMAND_MODULES = (_fit, _listings, _fit_groups, _release, _plan, _codebook, _ledger, _demo,
                    _reproduce, _audit)


def main() -> None:
    """Run the ``dpreg`` command line."""
    app()
