"""Plots of DP releases (matplotlib; every function returns the Axes it drew into).

* :func:`plot_coefficients` -- behind :meth:`RegressionResults.plot
  <dpreg.inference.RegressionResults.plot>`: coefficients with their DP-aware intervals;
* :func:`plot_group_estimates` -- the per-group table of :func:`dpreg.fit_by_group`: slope (or
  predictions) per group, sorted, with the per-group intervals when the table has
  ``lower_<col>``/``upper_<col>`` columns;
* :func:`plot_interval_widths` -- ECDF of the per-group interval widths (needs those columns);
* :func:`plot_groups` -- both panels in one figure (``dpreg fit-groups --plot``).

Everything here reads released numbers only (post-processing).  The module lives in the
``inference`` layer because :meth:`RegressionResults.plot` needs it and the per-group plots read
a plain DataFrame (they import nothing of :mod:`dpreg.grouped`).  matplotlib is imported when a
plot is drawn, never on ``import dpreg``; without it (the ``[plots]`` extra) a plot raises
:class:`~dpreg.exceptions.MissingExtraError` naming the extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpreg.exceptions import InvalidInputError

__all__ = ["plot_coefficients", "plot_group_estimates", "plot_interval_widths", "plot_groups",
           "interval_columns", "use_file_backend"]


def _pyplot(what: str) -> Any:
    """``matplotlib.pyplot``, or :class:`~dpreg.exceptions.MissingExtraError` naming the
    ``[plots]`` extra."""
    from dpreg._extras import require

    return require("matplotlib.pyplot", what)


def _axes(ax: Any, figsize: tuple[float, float] = (6.4, 4.0)) -> Any:
    if ax is not None:
        return ax
    plt = _pyplot("RegressionResults.plot and dpreg.inference.plots")
    _, new = plt.subplots(figsize=figsize)
    return new


def plot_coefficients(results: Any, *, alpha: float = 0.05, ax: Any = None,
                      include_intercept: bool = True) -> Any:
    """Coefficients (points) with their (1 − α) intervals from ``results.conf_int`` (bars).

    A method without an interval is drawn as points only and says so in the title; an
    interval flagged unreliable (``extra['dp_ci_reliable']`` False) or not informative
    (``extra['informative']`` False) is drawn dashed and named in the legend."""
    params = results.params
    if not include_intercept and "intercept" in params.index:
        params = params.drop("intercept")
    if params.empty:
        raise InvalidInputError("there is no coefficient to plot (only the intercept, and "
                                "include_intercept=False)")
    ax = _axes(ax)
    pos = np.arange(len(params))
    ci = results._conf_int_or_none(alpha)
    if ci is not None:
        ci = ci.reindex(params.index)
    ax.axvline(0.0, color="0.75", lw=0.8, zorder=0)
    ax.plot(params.to_numpy(), pos, "o", color="C0", label="estimate", zorder=3)
    title = f"{results.method}: {results.privacy.budget}"
    if ci is not None:
        flagged = (results.extra.get("dp_ci_reliable") is False
                   or results.extra.get("informative") is False)
        lo = ci["lower"].to_numpy()
        hi = ci["upper"].to_numpy()
        ok = np.isfinite(lo) & np.isfinite(hi)
        level = f"{100 * (1 - alpha):g}%"
        label = (f"{level} DP-aware interval" if not flagged
                 else f"{level} interval (flagged: see results.uncertainty)")
        segs = ax.hlines(pos[ok], lo[ok], hi[ok], color="C0", lw=2.0, label=label, zorder=2)
        if flagged:
            segs.set_linestyle("--")
    else:
        title += " (no interval: see results.uncertainty)"
    if not results.privacy.private:
        title = "NOT PRIVATE -- " + title
    ax.set_yticks(pos)
    ax.set_yticklabels([str(n) for n in params.index])
    ax.invert_yaxis()
    ax.set_xlabel(f"coefficient ({results.dep_var})")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="best", fontsize=8)
    return ax


# ------------------------------------------------------------------------------ per group
_ESTIMATE_COLUMNS = ("slope", "intercept")


def interval_columns(table: pd.DataFrame) -> list[str]:
    """The estimate columns of a per-group table that have ``lower_<col>`` and
    ``upper_<col>`` interval columns (e.g. ``slope``, ``pred_0.25``)."""
    return [c[len("lower_"):] for c in table.columns if isinstance(c, str)
            and c.startswith("lower_") and f"upper_{c[len('lower_'):]}" in table.columns]


def _check_table(table: Any) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise InvalidInputError(f"table must be the DataFrame of fit_by_group; got "
                                f"{type(table).__name__}")
    return table


def _estimate_columns(table: pd.DataFrame, columns: Sequence[str] | None) -> list[str]:
    if columns is None:
        preds = [c for c in table.columns if isinstance(c, str) and c.startswith("pred_")]
        cols = ["slope"] if "slope" in table.columns else []
        return cols + preds if cols or preds else []
    if isinstance(columns, str):
        columns = [columns]
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise InvalidInputError(f"columns {missing} are not in the table (columns: "
                                f"{[str(c) for c in table.columns]})")
    return list(columns)


def plot_group_estimates(table: pd.DataFrame, columns: Sequence[str] | str | None = None, *,
                         ax: Any = None, sort: bool = True, max_groups: int | None = None
                         ) -> Any:
    """Per-group estimates of a :func:`dpreg.fit_by_group` table with their intervals.

    ``columns``: estimate columns to draw (default: ``slope`` and every ``pred_*`` column).
    Groups run along the x axis (sorted by the first column's estimate with ``sort``); each
    column is one series; a column with ``lower_<col>``/``upper_<col>`` in the table gets
    its per-group interval as a vertical bar.  ⊥ groups (``failed``) are left out and counted
    in the title.  ``max_groups`` draws an evenly spaced subset of the sorted groups."""
    table = _check_table(table)
    cols = _estimate_columns(table, columns)
    if not cols:
        raise InvalidInputError("the table has no estimate column (slope or pred_*) to plot")
    failed = table["failed"].astype(bool) if "failed" in table.columns else \
        pd.Series(False, index=table.index)
    good = table.loc[~failed & np.isfinite(table[cols[0]].astype(float))]
    if sort:
        good = good.sort_values(cols[0], kind="stable")
    if max_groups is not None and len(good) > max_groups > 0:
        keep = np.unique(np.linspace(0, len(good) - 1, int(max_groups)).round().astype(int))
        good = good.iloc[keep]
    ax = _axes(ax, (7.5, 4.0))
    pos = np.arange(len(good))
    with_ci = set(interval_columns(table))
    offsets = np.linspace(-0.2, 0.2, len(cols)) if len(cols) > 1 else [0.0]
    for k, (col, off) in enumerate(zip(cols, offsets)):
        est = good[col].to_numpy(dtype=float)
        color = f"C{k % 10}"
        if col in with_ci:
            lo = good[f"lower_{col}"].to_numpy(dtype=float)
            hi = good[f"upper_{col}"].to_numpy(dtype=float)
            ok = np.isfinite(lo) & np.isfinite(hi)
            ax.vlines(pos[ok] + off, lo[ok], hi[ok], color=color, lw=1.0, alpha=0.6)
        ax.plot(pos + off, est, "o", ms=3, color=color,
                label=col + (" (with interval)" if col in with_ci else ""))
    n_failed = int(failed.sum())
    ax.set_xlabel("group" + (" (sorted by " + cols[0] + ")" if sort else ""))
    if len(good) <= 30 and "group" in good.columns:
        ax.set_xticks(pos)
        ax.set_xticklabels([str(g) for g in good["group"]], rotation=90, fontsize=7)
    title = f"{len(good)} groups"
    if n_failed:
        title += f" ({n_failed} ⊥ left out)"
    if not with_ci.intersection(cols):
        title += "; no per-group intervals in the table"
    ax.set_title(title, fontsize=10)
    ax.legend(loc="best", fontsize=8)
    return ax


def plot_interval_widths(table: pd.DataFrame, columns: Sequence[str] | str | None = None, *,
                         ax: Any = None) -> Any:
    """ECDF of the per-group interval widths ``upper_<col> − lower_<col>`` (one step curve per
    column; default: every column with interval columns).  Raises
    :class:`~dpreg.exceptions.InvalidInputError` when the table has no interval columns."""
    table = _check_table(table)
    avail = interval_columns(table)
    if columns is None:
        cols = avail
    else:
        cols = [columns] if isinstance(columns, str) else list(columns)
        missing = [c for c in cols if c not in avail]
        if missing:
            raise InvalidInputError(f"no interval columns lower_<col>/upper_<col> for {missing} "
                                    f"(columns with intervals: {avail})")
    if not cols:
        raise InvalidInputError("the table has no per-group interval columns (lower_<col>, "
                                "upper_<col>); there are no interval widths to plot")
    ax = _axes(ax)
    for k, col in enumerate(cols):
        w = (table[f"upper_{col}"].astype(float) - table[f"lower_{col}"].astype(float))
        w = np.sort(w[np.isfinite(w)].to_numpy())
        if w.size == 0:
            continue
        ecdf = np.arange(1, w.size + 1) / w.size
        ax.step(np.concatenate([[w[0]], w]), np.concatenate([[0.0], ecdf]), where="post",
                color=f"C{k % 10}", label=f"{col} (median {np.median(w):.3g})")
    ax.set_xlabel("interval width")
    ax.set_ylabel("fraction of groups")
    ax.set_ylim(0, 1.02)
    ax.set_title("ECDF of per-group interval widths", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    return ax


def plot_groups(table: pd.DataFrame, columns: Sequence[str] | str | None = None, *,
                max_groups: int | None = None) -> Any:
    """A figure with :func:`plot_group_estimates` and, when the table has interval columns,
    :func:`plot_interval_widths` beside it; returns the Figure."""
    plt = _pyplot("plot_groups")
    table = _check_table(table)
    has_ci = bool(interval_columns(table))
    fig, axes = plt.subplots(1, 2 if has_ci else 1, figsize=(12.0 if has_ci else 7.5, 4.2),
                             squeeze=False)
    plot_group_estimates(table, columns, ax=axes[0, 0], max_groups=max_groups)
    if has_ci:
        plot_interval_widths(table, ax=axes[0, 1])
    privacy = table.attrs.get("privacy") if hasattr(table, "attrs") else None
    if isinstance(privacy, str) and privacy:
        first = privacy.splitlines()[0]
        fig.suptitle(first if len(first) <= 110 else first[:107] + "...", fontsize=9)
    fig.tight_layout()
    return fig




def use_file_backend() -> None:
    """Select matplotlib's non-interactive Agg backend unless pyplot is already in use (the
    CLI writes plots to files and must not need a display)."""
    import sys

    if "matplotlib.pyplot" not in sys.modules:
        from dpreg._extras import require

        require("matplotlib", "plotting to a file").use("Agg")
