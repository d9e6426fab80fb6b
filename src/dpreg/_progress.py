"""Progress display for long jobs (base layer: any module may use it).

The library is silent by default: every long-running function takes ``progress: bool = False``
and only shows a bar when the caller turns it on (the CLI does so when stderr is a terminal,
or with ``--progress``).  Bars and spinners go to **stderr**, are transient (erased when the
job ends) and show only public text: a description, counts of steps and elapsed time -- never
a value of the data.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["interactive", "track", "spinner"]

T = TypeVar("T")


def interactive(flag: bool | None = None) -> bool:
    """Whether to show progress: ``flag`` when given (``--progress`` / ``--no-progress``),
    else whether stderr is a terminal (silent when piped, in CI and in tests)."""
    if flag is not None:
        return bool(flag)
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def _console() -> Any:
    from rich.console import Console

    # stderr; force_terminal only matters with --progress on a non-terminal (then the bar is
    # written as rich renders it for a terminal, as the user asked)
    return Console(stderr=True, force_terminal=True if not interactive() else None)


def track(iterable: Iterable[T], description: str, *, enabled: bool = False,
          total: int | None = None) -> Iterator[T]:
    """``iterable`` itself, with a transient progress bar on stderr when ``enabled``."""
    if not enabled:
        yield from iterable
        return
    from rich.progress import track as rich_track

    yield from rich_track(iterable, description=description, total=total, transient=True,
                          console=_console())


@contextmanager
def spinner(description: str, *, enabled: bool = False) -> Iterator[None]:
    """A transient spinner with the elapsed time on stderr while the block runs (for one call
    whose length is unknown, e.g. an all-pairs Theil-Sen fit), when ``enabled``."""
    if not enabled:
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=_console(), transient=True) as bar:
        bar.add_task(description, total=None)
        yield
