"""The reference backend: one call of :func:`dpreg.api.fit_arrays` per group (a plain loop).

It is the definition the vectorised LocalBackend and the SparkBackend are tested against; it
supports every method and option.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from dpreg.exceptions import InvalidInputError, TiedSlopesWarning
from dpreg.grouped._common import (
    GroupSpec,
    Partition,
    add_interval_columns,
    check_release_relation,
    group_column,
    group_generator,
    interval_options,
    interval_row,
    partition_frame,
    privacy_text,
    release_options,
    row_privacy_text,
    warn_tied_groups,
)
from dpreg.simple.ci import ALL_TIED_CI

__all__ = ["fit_reference", "fit_group", "group_options", "table_from_rows", "table_plan",
           "fit_from_table_plan"]


def group_options(spec: GroupSpec) -> dict[str, Any]:
    """The options of every group's :func:`dpreg.api.fit_arrays` call: the per-group relation
    for every method that takes one; noisy-stats with ``ci_alpha`` releases the statistics of
    ``inference=True``."""
    return interval_options(spec, release_options(spec))


def fit_group(spec: GroupSpec, options: dict[str, Any], key: Any, x: np.ndarray,
              y: np.ndarray) -> dict[str, Any]:
    """One group's output row (``group``, ``n``, the line, ``pred_<x>``, the interval columns
    with ``ci_alpha``): :func:`dpreg.api.fit_arrays` on the group's rows (in their original
    order) with the key's own stream.  The reference loop and the SparkBackend's interval path
    (on the executors) both call this."""
    from dpreg.api import fit_arrays

    row = _row_head(spec, key, x)
    if row.get("failed"):
        return row
    # no seed: secure mode per group (CSPRNG, exact discrete noise); a seed: per-key streams
    rng = group_generator(spec, key)
    try:
        # a group's own TiedSlopesWarning is silenced: the table warns once with the count of
        # flagged groups (ci_point_mass, read from every row: warn_tied_groups)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TiedSlopesWarning)
            res = fit_arrays(x.reshape(-1, 1), y, method=spec.method, epsilon=spec.epsilon,
                             x_bounds=[spec.x_bounds], y_bounds=spec.y_bounds,
                             x_names=[spec.x], y_name=spec.y, delta=spec.delta,
                             random_state=rng, **options)
    except InvalidInputError as exc:
        # ε = ∞ only (the non-private reference table; nothing is private there): a group
        # whose every x is tied has no non-private Theil-Sen interval.  That group's row is
        # failed with the reason instead of the whole table aborting.  At a finite ε this
        # error does not occur (the DP interval is then the search range, flagged).
        if not (math.isinf(spec.epsilon) and str(exc) == ALL_TIED_CI):
            raise
        row.update(intercept=np.nan, slope=np.nan, failed=True, reason=ALL_TIED_CI)
        return row
    check_release_relation(spec, res)
    if res.failed:
        row.update(intercept=np.nan, slope=np.nan, failed=True, reason=res.reason)
        return row
    p = res.params
    row.update(intercept=float(p.get("intercept", 0.0)), slope=float(p[spec.x]),
               failed=False, reason="")
    for kx, v in (res.extra.get("predictions") or {}).items():
        row[f"pred_{kx}"] = float(v)
    if "ci_alpha" in spec.options:  # the single fit's own interval, read from the release
        row.update(interval_row(spec, res))
    return row


def _row_head(spec: GroupSpec, key: Any, x: np.ndarray) -> dict[str, Any]:
    """A group's row before its release: key and n, and ⊥ for an empty or too small group."""
    n = int(x.size)
    row: dict[str, Any] = {"group": key, "n": n}
    if n == 0:
        row.update(intercept=np.nan, slope=np.nan, failed=True, reason="no rows in this group")
    elif n < spec.min_rows:  # n is public (replace-one), so this decision leaks nothing
        row.update(intercept=np.nan, slope=np.nan, failed=True,
                   reason=f"{n} rows; {spec.method} needs at least {spec.min_rows}")
    return row


def table_plan(spec: GroupSpec) -> Any:
    """The method's one plan for every group of the table (:meth:`~dpreg._spec.MethodSpec.
    table_plan`, from the public inputs alone: ε, δ, the bounds and the table's options), or
    ``None`` where the method has none or the table asks for per-group intervals (those come
    from each group's own fit)."""
    from dpreg import methods
    from dpreg._dispatch import prepare_options

    if "ci_alpha" in spec.options:
        return None
    entry = methods.get(spec.method)
    options, _ = prepare_options(entry, group_options(spec), n_features=1)
    return entry.table_plan(epsilon=spec.epsilon, delta=spec.delta, x_bounds=spec.x_bounds,
                            y_bounds=spec.y_bounds, options=options)


def fit_from_table_plan(df: pd.DataFrame, spec: GroupSpec, plan: Any, *,
                        progress: bool = False, part: Partition | None = None) -> pd.DataFrame:
    """:func:`fit_reference` with the table's one plan (:func:`table_plan`): every group is
    released from ``plan`` by its spec's ``release_group_line`` with the key's own stream --
    the same rows, bit for bit, as the loop of :func:`dpreg.api.fit_arrays` (which plans
    every group again).  Nothing is charged here (the table is charged once)."""
    from dpreg import methods
    from dpreg._progress import track

    if part is None:
        part = partition_frame(df, spec)
    entry = methods.get(spec.method)
    iterator: Any = track(range(len(spec.keys)), f"fitting {len(spec.keys)} groups",
                          enabled=progress)
    rows = []
    for k in iterator:
        s, e = int(part.starts[k]), int(part.starts[k + 1])
        key, x, y = spec.keys[k], part.x[s:e], part.y[s:e]
        row = _row_head(spec, key, x)
        if not row.get("failed"):
            line = entry.release_group_line(plan, x, y, group_generator(spec, key))
            check_release_relation(spec, line)
            row.update(intercept=line.intercept, slope=line.slope, failed=line.failed,
                       reason=line.reason)
        rows.append(row)
    return table_from_rows(spec, rows)


def table_from_rows(spec: GroupSpec, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The output table from the rows of :func:`fit_group`, one per key in key order (every
    backend's interval table is assembled here: the reference loop, the LocalBackend's
    delegation to it and the SparkBackend's driver); a Theil-Sen interval table with groups
    flagged ``ci_point_mass`` gives one ``TiedSlopesWarning`` with their count."""
    out = pd.DataFrame(rows, columns=None if rows else ["group", "n", "intercept", "slope",
                                                         "failed", "reason"])
    out["group"] = group_column(spec.keys)
    out["privacy"] = row_privacy_text(spec)
    out.attrs["privacy"] = privacy_text(spec)
    table = add_interval_columns(spec, out)
    warn_tied_groups(table)  # one warning for the table (a count of released flags: public)
    return table


def fit_reference(df: pd.DataFrame, spec: GroupSpec, *, progress: bool = False,
                  part: Partition | None = None) -> pd.DataFrame:
    """Per-group loop over the public keys (empty and too-small groups get a ⊥ row).

    ``part``: the rows of each key (:func:`dpreg.grouped._common.partition_frame`, computed
    here when not given): rows are assigned to keys by the same canonical-key rule on every
    backend, and x and y are read and validated in the declared groups only.
    """
    if part is None:
        part = partition_frame(df, spec)
    options = group_options(spec)
    from dpreg._progress import track

    iterator: Any = track(range(len(spec.keys)), f"fitting {len(spec.keys)} groups",
                          enabled=progress)
    rows = []
    for k in iterator:
        s, e = int(part.starts[k]), int(part.starts[k + 1])
        rows.append(fit_group(spec, options, spec.keys[k], part.x[s:e], part.y[s:e]))
    return table_from_rows(spec, rows)
