"""Progress of long jobs (base layer: any module may use it).

The library is **silent by default**.  Long-running code reports its steps through one hook:

* :func:`steps` wraps a loop (per group, per prediction point, per bootstrap batch, per
  replicate, per reproduction cell) and :func:`report` sends one count.  Without a hook both
  cost one context-variable read and print nothing.
* :func:`hook` installs a callback ``callback(description, done, total)`` for a block (``total``
  is ``None`` while the length is unknown); :func:`rich_bars` installs the one that draws
  transient bars on **stderr** (what the CLI uses when stderr is a terminal or with
  ``--progress``).

Only public text reaches a hook: a fixed description, a count of steps and the step total --
numbers of groups (the declared keys), prediction points, replicates, bootstrap releases or
cells -- never a value of the data nor a count of rows.

Nesting: the counts of an inner loop (a Theil-Sen fit inside a per-group loop, a bootstrap
inside a reproduction cell) are not reported while an outer :func:`steps` loop or a
:func:`job` runs, so a bar per outer step is drawn, not thousands of short ones.  A
:func:`spinner` (one call of unknown length) does not hide the bars of its inner loops.

Timing: a bar is drawn from the first report, which the library sends before the first step
starts -- there is no grace period, so a 10 s job shows its bar (and elapsed time) from its
first second; a job shorter than rich's refresh interval (0.1 s) may flash a bar that is erased
at once (the bars are transient).

The bars are drawn with rich (the ``[cli]`` extra): without it, turning them on
(:func:`rich_bars`, ``progress=True`` of a library call with no hook installed) raises
:class:`~dpreg.exceptions.MissingExtraError` naming the extra, at the start (:func:`check_bars`),
before any work; hooks and the silent default need nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["interactive", "track", "spinner", "hook", "report", "steps", "job", "rich_bars",
           "check_bars", "ProgressHook"]

T = TypeVar("T")

#: ``callback(description, done, total)``: ``done`` counts finished steps (0 at the start),
#: ``total`` is the number of steps or ``None`` while unknown
ProgressHook = Callable[[str, int, "int | None"], None]

_HOOK: ContextVar[ProgressHook | None] = ContextVar("dpreg_progress_hook", default=None)
#: number of enclosing loops whose inner counts are not reported
_DEPTH: ContextVar[int] = ContextVar("dpreg_progress_depth", default=0)


def interactive(flag: bool | None = None) -> bool:
    """Whether to show progress: ``flag`` when given (``--progress`` / ``--no-progress``),
    else whether stderr is a terminal (silent when piped, in CI and in tests)."""
    if flag is not None:
        return bool(flag)
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


@contextmanager
def hook(callback: ProgressHook) -> Iterator[None]:
    """Send the progress of the jobs run inside the block to ``callback(description, done,
    total)`` (in this thread; worker threads of a job stay silent)."""
    token = _HOOK.set(callback)
    depth = _DEPTH.set(0)
    try:
        yield
    finally:
        _DEPTH.reset(depth)
        _HOOK.reset(token)


def _deliver() -> ProgressHook | None:
    callback = _HOOK.get()
    return callback if callback is not None and _DEPTH.get() == 0 else None


def report(description: str, done: int, total: int | None = None) -> None:
    """One count of a job (nothing without a hook, or inside an outer loop)."""
    callback = _deliver()
    if callback is not None:
        callback(description, int(done), None if total is None else int(total))


def steps(iterable: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """``iterable`` itself, reporting ``(description, i, total)`` before the first item and
    after each; while the caller works on an item, inner reports are not delivered."""
    callback = _deliver()
    if callback is None:
        yield from iterable
        return
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    callback(description, 0, total)
    done = 0
    for item in iterable:
        _DEPTH.set(_DEPTH.get() + 1)
        try:
            yield item
        finally:
            _DEPTH.set(_DEPTH.get() - 1)
        done += 1
        callback(description, done, total)


@contextmanager
def job(description: str, total: int | None = None, *, hide_inner: bool = True
        ) -> Iterator[Callable[[int, int | None], None]]:
    """A job whose counts come from elsewhere (a callback of the bench runner): yields
    ``update(done, total)``.  ``hide_inner``: inner loops are not reported meanwhile."""
    callback = _deliver()
    if callback is None:
        def silent(done: int, new_total: int | None = None) -> None:
            return None

        yield silent
        return

    def update(done: int, new_total: int | None = None) -> None:
        callback(description, int(done), None if new_total is None else int(new_total))

    update(0, total)
    if hide_inner:
        _DEPTH.set(_DEPTH.get() + 1)
    try:
        yield update
    finally:
        if hide_inner:
            _DEPTH.set(_DEPTH.get() - 1)


class _RichBars:
    """The hook that draws one transient rich bar per description on stderr."""

    def __init__(self, console: Any = None) -> None:
        self._console = console
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    def __call__(self, description: str, done: int, total: int | None) -> None:
        if self._bar is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 console=self._console or _console(), transient=True)
            self._bar.start()
        task = self._tasks.get(description)
        if task is None:
            self._tasks[description] = self._bar.add_task(description, total=total,
                                                          completed=done)
            self._bar.refresh()  # drawn at once, not at the next tick
            return
        self._bar.update(task, completed=done, total=total)
        if total is not None and done >= total:
            self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def check_bars(enabled: bool) -> None:
    """Raise :class:`~dpreg.exceptions.MissingExtraError` (``[cli]``) when ``enabled`` asks for
    bars that would be drawn with rich (no hook installed) and rich is not installed.  Entry
    points with a ``progress`` parameter call it before they read data or charge a budget."""
    if enabled and _HOOK.get() is None:
        from dpreg._extras import require

        require("rich", "the progress bars")


@contextmanager
def rich_bars(enabled: bool = True, *, console: Any = None) -> Iterator[None]:
    """Transient progress bars on stderr for the jobs run in the block, when ``enabled``
    (a bar appears with the job's first report; all are erased when the block ends)."""
    if not enabled:
        yield
        return
    from dpreg._extras import require

    require("rich", "the progress bars")
    bars = _RichBars(console)
    try:
        with hook(bars):
            yield
    finally:
        bars.close()


def _console() -> Any:
    from rich.console import Console

    # stderr; force_terminal only matters with --progress on a non-terminal (then the bar is
    # written as rich renders it for a terminal, as the user asked)
    return Console(stderr=True, force_terminal=True if not interactive() else None)


def track(iterable: Iterable[T], description: str, *, enabled: bool = False,
          total: int | None = None) -> Iterator[T]:
    """``iterable`` itself, reported through :func:`steps`; with ``enabled`` and no hook
    installed, drawn as a transient bar on stderr."""
    if enabled and _HOOK.get() is None:
        with rich_bars():
            yield from steps(iterable, description, total)
        return
    yield from steps(iterable, description, total)


@contextmanager
def spinner(description: str, *, enabled: bool = False) -> Iterator[None]:
    """A job of unknown length (one call, e.g. an all-pairs Theil-Sen fit): reported as
    ``(description, 0, None)`` at the start and ``(description, 1, 1)`` at the end -- a
    spinner with the elapsed time -- through the hook, or, with ``enabled`` and no hook, on
    stderr.  Inner loops (per prediction point, per bootstrap batch) still get their bars."""
    if enabled and _HOOK.get() is None:
        with rich_bars(), spinner(description):
            yield
        return
    with job(description, None, hide_inner=False) as update:
        yield
        update(1, 1)
