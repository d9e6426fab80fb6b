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
    group_generator,
    privacy_text,
    row_privacy_text,
)

__all__ = ["fit_reference"]


def fit_reference(df: pd.DataFrame, spec: GroupSpec, *, progress: bool = False) -> pd.DataFrame:
    """Per-group loop over the public keys (empty and too-small groups get a ⊥ row)."""
    from dpreg.api import fit_arrays
    from dpreg.grouped._common import normalise_key

    parts = {normalise_key(k): g for k, g in df.groupby(spec.by, sort=False)}
    rows = []
    iterator: Any = spec.keys
    if progress:
        from rich.progress import track

        iterator = track(spec.keys, description=f"fitting {len(spec.keys)} groups",
                         transient=True)
    for key in iterator:
        g = parts.get(key)
        n = 0 if g is None else len(g)
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
        assert g is not None
        # no seed: secure mode per group (CSPRNG, exact discrete noise); a seed: per-key streams
        rng = group_generator(spec, key)
        res = fit_arrays(g[[spec.x]].to_numpy(float), g[spec.y].to_numpy(float),
                         method=spec.method, epsilon=spec.epsilon, x_bounds=[spec.x_bounds],
                         y_bounds=spec.y_bounds, x_names=[spec.x], y_name=spec.y,
                         delta=spec.delta, random_state=rng, **spec.options)
        if res.failed:
            row.update(intercept=np.nan, slope=np.nan, failed=True, reason=res.reason)
        else:
            p = res.params
            row.update(intercept=float(p.get("intercept", 0.0)), slope=float(p[spec.x]),
                       failed=False, reason="")
            for k, v in (res.extra.get("predictions") or {}).items():
                row[f"pred_{k}"] = float(v)
        rows.append(row)
    out = pd.DataFrame(rows)
    out["privacy"] = row_privacy_text(spec)
    out.attrs["privacy"] = privacy_text(spec)
    return out
