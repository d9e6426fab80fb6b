"""``python -m dpreg`` and the ``dpreg`` console script.

The command line needs the ``[cli]`` extra (typer, rich); without it :func:`main` prints one
line saying so (``pip install 'dpreg[cli]'``) and exits with status 1, instead of a traceback.
"""

from __future__ import annotations

import sys

from dpreg.exceptions import MissingExtraError


def main() -> None:
    """Run the ``dpreg`` command line (:mod:`dpreg.cli`)."""
    try:
        from dpreg.cli import main as cli_main
    except MissingExtraError as exc:
        print(f"dpreg: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    cli_main()


if __name__ == "__main__":
    main()
