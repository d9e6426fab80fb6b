"""Per-group (small-area) DP regressions: ``dpreg.fit_by_group``.

Privacy: groups are disjoint sets of records, so fitting each group with budget ε is ε-DP for
the whole table by parallel composition (a record belongs to one group).  The *group keys* are
treated as public: pass the public list in ``groups=`` (groups with no rows still get a row in
the output, so their presence is not revealed by the output's shape); if ``groups`` is None the
keys found in the data are used and the caller declares them public -- the result records which
choice was made.  The simple methods use replace-one neighbours with n public, so each group's
row count is released as ``n``.

Randomness: each group gets its own stream derived from its key
(``SeedSequence(root_entropy, spawn_key=hash(key))``), so a group's release does not depend on
how the table is partitioned or ordered.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpreg.exceptions import InvalidInputError

__all__ = ["fit_by_group", "group_seed_sequence"]


def _key_words(key: Any) -> tuple[int, ...]:
    digest = hashlib.sha256(repr(key).encode()).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))


def group_seed_sequence(root: np.random.SeedSequence, key: Any) -> np.random.SeedSequence:
    """The independent stream of one group (depends only on the root entropy and the key)."""
    return np.random.SeedSequence(root.entropy, spawn_key=_key_words(key))


def fit_by_group(
    df: pd.DataFrame, by: str, x: str, y: str, *, method: str, epsilon: float,
    bounds: Mapping[str, Any], delta: float | None = None, groups: Sequence[Any] | None = None,
    backend: str = "local", random_state: Any = None, progress: bool = False, **options: Any,
) -> pd.DataFrame:
    """Fit ``y ~ x`` with ``method`` in every group; one output row per group key.

    Returns a DataFrame with columns ``group`` (the key), ``n``, ``intercept``, ``slope``,
    ``failed``, ``reason`` (plus ``pred_<x>`` columns when the method releases predictions);
    ``result.attrs["privacy"]`` states the guarantee.
    """
    from dpreg.api import fit_arrays

    if backend != "local":
        raise InvalidInputError(f"backend must be 'local'; got {backend!r} (Spark is a separate "
                                "extra that has not landed yet)")
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"df must be a pandas DataFrame; got {type(df).__name__}")
    for col, role in ((by, "by"), (x, "x"), (y, "y")):
        if col not in df.columns:
            raise InvalidInputError(f"{role} column {col!r} is not in the data (columns: "
                                    f"{list(df.columns)})")
    if df[by].isna().any():
        raise InvalidInputError(f"group key column {by!r} contains missing values; give every "
                                "row a key (or drop those rows) before fitting")
    if not isinstance(bounds, Mapping) or x not in bounds or y not in bounds:
        missing = [c for c in (x, y) if not isinstance(bounds, Mapping) or c not in bounds]
        raise InvalidInputError(f"bounds for {missing} are missing: pass bounds={{col: (lo, hi)}}"
                                " with public limits")
    x_bounds, y_bounds = bounds[x], bounds[y]
    from dpreg._dispatch import MIN_ROWS

    if method not in MIN_ROWS:
        raise InvalidInputError(f"method must be one of {sorted(MIN_ROWS)}; got {method!r}")
    min_rows = MIN_ROWS[method]
    declared = groups is not None
    keys = list(groups) if groups is not None else list(pd.unique(df[by]))
    if declared and len(set(map(repr, keys))) != len(keys):
        raise InvalidInputError("groups must not contain duplicate keys")
    if isinstance(random_state, np.random.SeedSequence):
        root = random_state
    elif random_state is None:
        root = np.random.SeedSequence()
    else:
        root = np.random.SeedSequence(int(random_state))
    parts = {k: g for k, g in df.groupby(by, sort=False)}
    rows = []
    iterator: Any = keys
    if progress:
        from rich.progress import track

        iterator = track(keys, description=f"fitting {len(keys)} groups", transient=True)
    for key in iterator:
        g = parts.get(key)
        n = 0 if g is None else len(g)
        row: dict[str, Any] = {"group": key, "n": n}
        if n == 0:
            row.update(intercept=np.nan, slope=np.nan, failed=True, reason="no rows in this group")
            rows.append(row)
            continue
        if n < min_rows:  # n is public (replace-one), so this decision leaks nothing
            row.update(intercept=np.nan, slope=np.nan, failed=True,
                       reason=f"{n} rows; {method} needs at least {min_rows}")
            rows.append(row)
            continue
        assert g is not None
        rng = np.random.default_rng(group_seed_sequence(root, key))
        res = fit_arrays(g[[x]].to_numpy(float), g[y].to_numpy(float), method=method,
                         epsilon=epsilon, x_bounds=[tuple(x_bounds)], y_bounds=tuple(y_bounds),
                         x_names=[x], y_name=y, delta=delta, random_state=rng, **options)
        if res.failed:
            row.update(intercept=np.nan, slope=np.nan, failed=True, reason=res.reason)
        else:
            p = res.params
            row.update(intercept=float(p.get("intercept", 0.0)), slope=float(p[x]), failed=False,
                       reason="")
            for k, v in (res.extra.get("predictions") or {}).items():
                row[f"pred_{k}"] = float(v)
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs["privacy"] = (
        f"{method} with ε={epsilon:g}{'' if delta is None else f', δ={delta:g}'} per group; groups "
        "are disjoint, so the whole table is released under the same guarantee by parallel "
        "composition. Group keys: " + ("the public list passed in `groups`" if declared else
                                      "taken from the data and declared public by the caller")
        + "; per-group n is released (replace-one neighbours, n public)."
    )
    return out
