"""Printing: tables, the one JSON writer, summaries, intervals and plots."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from dpreg.cli._app import _cli_text, console, err_console


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _print_table(title: str, columns: list[str], rows: list[list[str]],
                 *, no_wrap: tuple[str, ...] = ()) -> None:
    """A listing: a rich table on a terminal; piped (not a terminal), plain tab-separated
    lines (a header line, then one line per row) that neither wrap nor cut a name, whatever
    the terminal width (``COLUMNS``) says."""
    if not _is_terminal(sys.stdout):
        def cell(v: Any) -> str:
            return " ".join(str(v).split())  # tabs/newlines inside a cell become spaces

        sys.stdout.write("\t".join(columns) + "\n")
        for r in rows:
            sys.stdout.write("\t".join(cell(v) for v in r) + "\n")
        return
    table = Table(title=title)
    for col in columns:
        table.add_column(col, no_wrap=col in no_wrap, overflow="fold")
    for r in rows:
        table.add_row(*[str(v) for v in r])
    console.print(table)

def _print_json(obj: Any) -> None:
    """The one writer of every ``--json`` output: strict JSON (non-finite numbers -> null;
    ``allow_nan=False`` so that a NaN or Infinity can never slip through again)."""
    from dpreg._json import strict_jsonable

    sys.stdout.write(json.dumps(strict_jsonable(obj), indent=2, allow_nan=False,
                                default=_json_default) + "\n")


def _json_default(o: Any) -> Any:
    """Objects :func:`strict_jsonable` leaves alone (paths, timestamps, ...) as text."""
    return str(o)



def _intervals(res: Any, ci: float | None) -> Any:
    """The (1 − ci) intervals of a fitted result, or None (a note says why none exists: the
    release is spent, so it is shown anyway)."""
    if ci is None or res.failed:
        return None
    from dpreg.inference.results import NoUncertaintyError

    try:
        return res.conf_int(ci)
    except NoUncertaintyError as exc:
        err_console.print(f"note: no confidence interval: {escape(_cli_text(str(exc)))}",
                          highlight=False)
        return None


def _result_json(res: Any, ci: float | None, ci_frame: Any) -> dict[str, Any]:
    """``res.to_dict()`` with the remedies in CLI spelling and the intervals (``ci``)."""
    out: dict[str, Any] = res.to_dict()
    if isinstance(out.get("uncertainty"), str):
        out["uncertainty"] = _cli_text(out["uncertainty"])
    if ci_frame is not None:
        out["ci"] = {"alpha": ci, **{k: [float(r["lower"]), float(r["upper"])]
                                     for k, r in ci_frame.iterrows()}}
        if "ci_informative" in res.extra:  # an end at the search range is not a finding
            out["ci"]["informative"] = dict(res.extra["ci_informative"])
        elif "dp_ci_unidentified_mass" in res.extra and ci is not None:  # noisy-stats,
            # offered by its release: at the requested level, are the ends set by the region
            # of nvar the release says nothing about?
            ok = float(res.extra["dp_ci_unidentified_mass"]) < ci / 2.0
            out["ci"]["informative"] = {str(k): ok for k in ci_frame.index}
        if "ci_calibrated" in res.extra:  # Theil-Sen: calibrated or the conservative tight one
            out["ci"]["calibrated"] = dict(res.extra["ci_calibrated"])
        if "ci_point_mass" in res.extra:  # Theil-Sen: the release rule for tied slopes
            out["ci"]["point_mass"] = dict(res.extra["ci_point_mass"])
        # at the requested level (extra['dp_ci_excludes_estimate'] is checked at 0.05 only)
        out["ci"]["excludes_estimate"] = res.excludes_estimate(ci)
    return out


def _print_summary(res: Any, ci: float | None) -> None:
    console.print(_cli_text(str(res.summary(alpha=ci))), highlight=False)


def _save_figure(fig: Any, path: Path) -> None:
    """Write a matplotlib figure (format from the suffix: .png, .pdf, .svg) and close it."""
    import matplotlib.pyplot as plt

    from dpreg.exceptions import InvalidInputError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=150, bbox_inches="tight")
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"could not write the plot to {path}: "
                                f"{getattr(exc, 'strerror', None) or type(exc).__name__} "
                                "(use a .png, .pdf or .svg file name)") from None
    finally:
        plt.close(fig)


def _check_plot_extra(path: Path | None) -> None:
    """``--plot`` needs matplotlib (the ``[plots]`` extra): checked before anything is read or
    charged, so that a missing extra never costs a release."""
    if path is not None:
        from dpreg._extras import require

        require("matplotlib", "--plot", extra="plots")


def _plot_result(res: Any, path: Path | None, ci: float | None) -> None:
    """``--plot PATH``: coefficients with their DP-aware intervals (none for a ⊥ release)."""
    if path is None:
        return
    if res.failed:
        err_console.print("note: no plot: the release is ⊥", highlight=False)
        return
    from dpreg.inference.plots import use_file_backend

    use_file_backend()
    ax = res.plot(alpha=0.05 if ci is None else ci)
    _save_figure(ax.figure, path)
