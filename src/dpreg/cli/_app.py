"""The typer applications, the consoles, and the one-line error/warning writers of the CLI."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from dpreg._version import __version__

app = typer.Typer(
    name="dpreg",
    help="Differentially private linear regression: fit, per-group fits, DP covariance "
         "releases, paper reproductions and the demo.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
ledger_app = typer.Typer(help="Create, inspect and seal persistent privacy ledgers (each "
                         "protected by an HMAC-SHA256 chain under its key file).",
                         no_args_is_help=True)
app.add_typer(ledger_app, name="ledger")
key_app = typer.Typer(help="Key files that sign release files and ledgers (HMAC-SHA256; "
                      "docs/threat-model.md).", no_args_is_help=True)
app.add_typer(key_app, name="key")
codebook_app = typer.Typer(help="Codebooks: public bounds and levels of a data set's columns "
                           "(docs/codebook.md).", no_args_is_help=True)
app.add_typer(codebook_app, name="codebook")
_CODEBOOK_HELP = ("TOML codebook with public bounds/levels per column (docs/codebook.md); "
                  "--bounds flags add to it and win for the same column.")

console = Console()
err_console = Console(stderr=True)
_STATE: dict[str, bool] = {"debug": False}

def _version_callback(value: bool) -> None:
    if value:
        console.print(f"dpreg {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version_callback,
                                          is_eager=True, help="Print the version.")] = False,
) -> None:
    _STATE["debug"] = debug
    # every warning of the whole command (the fit, its intervals, the summary, a plot) is one
    # ``warning: ...`` line: never Python's format with a source path and a code line
    ctx.with_resource(_library_warnings())

def _fail(exc: BaseException) -> None:
    """One ``error:`` line on stderr; exit 2 for a usage error (a bad parameter value or a
    misspelt method, column, option or bounds key:
    :class:`~dpreg.exceptions.InvalidParameterError` and its subclass
    :class:`~dpreg.exceptions.UnknownNameError`), else 1 (the data, the ledger, a ⊥)."""
    from dpreg.exceptions import InvalidParameterError

    if _STATE["debug"]:
        raise exc
    # the message is text, not rich markup: "[plots]" in "pip install 'dpreg[plots]'" stays
    err_console.print(f"[bold red]error:[/] {escape(_cli_text(str(exc)))}", highlight=False,
                      soft_wrap=True)
    raise typer.Exit(code=2 if isinstance(exc, InvalidParameterError) else 1)


def _usage(text: str) -> NoReturn:
    """A usage error that is not about one option's value (conflicting flags): exit 2."""
    typer.echo(f"error: {text}", err=True)
    raise typer.Exit(code=2)

#: the library's remedies in Python spelling -> the same remedies on the command line
_CLI_SPELLING: tuple[tuple[str, str], ...] = (
    ("AdaSSP(inference=True)", "--method adassp"),
    ("inference=True", "-o inference=true"),
    ("inference='auto'", "-o inference=auto"),
    ("ci_alpha=...", "--ci ALPHA"),
    ("ci_alpha=", "--ci "),
    ('se="plugin"', "-o se=plugin"),
    ("CovarianceOLS", "--method covariance-ols"),
    ("ci_method='tight'", "-o ci_method=tight"),
    ("ci_method='auto'", "-o ci_method=auto"),
    ("ci_method='calibrated'", "-o ci_method=calibrated"),
)


def _cli_text(text: str) -> str:
    """A library message (an error, the summary's Uncertainty row) with its remedies in CLI
    spelling: "refit with inference=True" becomes "refit with -o inference=true"."""
    for api, cli in _CLI_SPELLING:
        text = text.replace(api, cli)
    return text

def _usage_error(option: str, expected: str, raw: str, why: str = "") -> NoReturn:
    """A one-line usage error (exit 2) naming the option, the expected range and the value."""
    typer.echo(f"error: {option} must be {expected}; got {raw!r}{why}", err=True)
    raise typer.Exit(code=2)

def _cli_warning(text: str) -> None:
    typer.echo(f"warning: {text}", err=True)

@contextmanager
def _library_warnings() -> Iterator[None]:
    """Library warnings as one ``warning: ...`` line each; the weak-seed and large-δ warnings
    are left out (the CLI has said them already, naming the option)."""
    from dpreg.exceptions import LargeDeltaWarning, WeakSeedWarning

    def show(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        _cli_warning(str(message))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakSeedWarning)
        warnings.simplefilter("ignore", LargeDeltaWarning)
        warnings.showwarning = show
        yield
