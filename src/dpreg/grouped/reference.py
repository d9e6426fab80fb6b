"""The reference backend: one call of :func:`dpreg.api.fit_arrays` per group (a plain loop).

It is the definition the vectorised LocalBackend and the SparkBackend are tested against; it
supports every method and option.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpreg.grouped._common import (
    GroupSpec,
    Partition,
    check_release_relation,
    group_column,
    group_generator,
    partition_frame,
    privacy_text,
    release_options,
    row_privacy_text,
)

__all__ = ["fit_reference"]


def fit_reference(df: pd.DataFrame, spec: GroupSpec, *, progress: bool = False,
                  part: Partition | None = None) -> pd.DataFrame:
    """Per-group loop over the public keys (empty and too-small groups get a ⊥ row).

    ``part``: the rows of each key (:func:`dpreg.grouped._common.partition_frame`, computed
    here when not given): rows are assigned to keys by the same canonical-key rule on every
    backend, and x and y are read and validated in the declared groups only.
    """
    from dpreg.api import fit_arrays

    if part is None:
        part = partition_frame(df, spec)
    options = release_options(spec)  # the per-group relation for every method that takes one
    rows = []
    from dpreg._progress import track

    iterator: Any = track(range(len(spec.keys)), f"fitting {len(spec.keys)} groups",
                          enabled=progress)
    for k in iterator:
        key = spec.keys[k]
        s, e = int(part.starts[k]), int(part.starts[k + 1])
        n = e - s
        row: dict[str, Any] = {"group": key, "n": n}
        if n == 0:
            row.update(intercept=np.nan, slope=np.nan, failed=True, reason="no rows in this group")
            rows.append(row)
            continue
        if n < spec.min_rows:  # n is public (replace-one), so this decision leaks nothing
            row.update(intercept=np.nan, slope=np.nan, failed=True,
                       reason=f"{n} rows; {spec.method} needs at least {spec.min_rows}")
            rows.append(row)
            continue
        # no seed: secure mode per group (CSPRNG, exact discrete noise); a seed: per-key streams
        rng = group_generator(spec, key)
        res = fit_arrays(part.x[s:e].reshape(-1, 1), part.y[s:e],
                         method=spec.method, epsilon=spec.epsilon, x_bounds=[spec.x_bounds],
                         y_bounds=spec.y_bounds, x_names=[spec.x], y_name=spec.y,
                         delta=spec.delta, random_state=rng, **options)
        check_release_relation(spec, res)
        if res.failed:
            row.update(intercept=np.nan, slope=np.nan, failed=True, reason=res.reason)
        else:
            p = res.params
            row.update(intercept=float(p.get("intercept", 0.0)), slope=float(p[spec.x]),
                       failed=False, reason="")
            for kx, v in (res.extra.get("predictions") or {}).items():
                row[f"pred_{kx}"] = float(v)
        rows.append(row)
    out = pd.DataFrame(rows, columns=None if rows else ["group", "n", "intercept", "slope",
                                                         "failed", "reason"])
    out["group"] = group_column(spec.keys)
    out["privacy"] = row_privacy_text(spec)
    out.attrs["privacy"] = privacy_text(spec)
    return out
