"""Per-group (small-area) DP regressions: ``dpreg.fit_by_group`` and ``dpreg fit-groups``.

Privacy: groups are disjoint sets of records, so fitting each group with budget ε is ε-DP for
the whole table by parallel composition (a record belongs to one group).  The *group keys* are
treated as public: pass the public list in ``groups=`` -- every listed key gets an output row,
also keys with no rows (n = 0, ⊥ "no rows in this group"), so the output's shape does not
reveal which groups are present; rows whose key is not listed are left out of every release.
If ``groups`` is None the keys found in the data are used and the caller declares them
public; the result records which choice was made.  The simple methods use replace-one
neighbours with n public, so each group's row count is released as ``n`` (groups with fewer
rows than the method needs get a ⊥ row, a decision on public n).  Missing keys (None/NaN) in
the data or in ``groups`` are an error: such rows belong to no public group.

Randomness: with a seed, each group gets its own stream derived from its key
(``SeedSequence(root_entropy, spawn_key=sha256(repr(key)))``, NumPy scalars normalised to
Python scalars), so a group's release does not depend on how the table is partitioned or
ordered, nor on the backend.  Without a seed every group is released in secure mode (fresh
CSPRNG generator, exact discrete noise; :mod:`dpreg.mechanisms.secure`).

Backends (``backend=``):

* ``"local"`` (default) -- :mod:`dpreg.grouped.local`: vectorised over groups; with a seed
  the releases are identical to the reference loop;
* ``"reference"`` -- :mod:`dpreg.grouped.reference`: one ``fit_arrays`` call per group;
* ``"spark"`` -- :mod:`dpreg.grouped.spark`: pyspark (the ``[spark]`` extra); sufficient
  statistics with Spark's native aggregations, the other methods via ``applyInPandas``.

See docs/scale.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpreg.exceptions import InvalidInputError
from dpreg.grouped._common import group_seed_sequence, make_spec
from dpreg.privacy.notices import public_function

__all__ = ["fit_by_group", "group_seed_sequence", "parse_key_list", "BACKENDS"]

BACKENDS = ("local", "reference", "spark")


def parse_key_list(lines: Sequence[str], column: Any = None) -> list[Any]:
    """Public group keys from text lines (one key per line, blank lines ignored), converted
    to the type of the key column when it is numeric (a CSV column of integers has int keys,
    so the line "17" must become 17 to match).  Used by ``dpreg fit-groups --groups-file``."""
    keys = [ln.strip() for ln in lines if ln.strip()]
    if column is None:
        return keys
    kind = pd.Series(column).dtype.kind
    conv: Any = int if kind in "iu" else float if kind == "f" else None
    if conv is None:
        return keys
    try:
        return [conv(k) for k in keys]
    except ValueError:
        raise InvalidInputError(f"the groups file lists keys that are not numbers, but the key "
                                f"column holds {pd.Series(column).dtype} values") from None


def _check_table(df: pd.DataFrame, by: str, x: str, y: str) -> None:
    if df[by].isna().any():
        raise InvalidInputError(f"group key column {by!r} contains missing values; give every "
                                "row a key (or drop those rows) before fitting")


@public_function(n_public=lambda table: None)  # weak seed, δ >= 1e-3: once per table
def fit_by_group(
    df: Any, by: str, x: str, y: str, *, method: str, epsilon: float,
    bounds: Mapping[str, Any], delta: float | None = None, groups: Sequence[Any] | None = None,
    backend: str = "local", random_state: Any = None, progress: bool = False,
    workers: int | None = None, spark: Any = None, **options: Any,
) -> pd.DataFrame:
    """Fit ``y ~ x`` with ``method`` in every group; one output row per group key.

    Parameters
    ----------
    df:
        pandas DataFrame (any backend) or a pyspark DataFrame (``backend="spark"``).
    by, x, y:
        Group key column, regressor and response.
    method, epsilon, delta, bounds, **options:
        As for :func:`dpreg.api.fit_arrays`; ``bounds`` holds public (lo, hi) for x and y.
        ε (and δ) is spent **per group**; the table as a whole has the same guarantee by
        parallel composition.
    groups:
        The public list of group keys (recommended; see the module doc), or None to declare
        the keys found in the data public.
    backend:
        ``"local"`` (vectorised), ``"reference"`` (per-group loop) or ``"spark"``.
    random_state:
        None (secure mode, a real release), a non-negative int or a SeedSequence (per-key
        reproducible streams: identical releases on every backend).
    workers:
        Threads for the per-group parts of the local backend (default min(2, CPUs)).
    spark:
        A ``SparkSession`` for ``backend="spark"`` (default: the active session, or a new
        ``local[2]`` one).

    Returns a DataFrame with columns ``group`` (the key), ``n``, ``intercept``, ``slope``,
    ``failed``, ``reason``, ``pred_<x>`` (predictions at the evaluation points, when the method
    releases them and some group did not fail) and ``privacy`` (the statement, also in
    ``result.attrs["privacy"]``).
    """
    if backend not in BACKENDS:
        raise InvalidInputError(f"backend must be one of {list(BACKENDS)}; got {backend!r}")
    from dpreg._validation import check_epsilon

    epsilon = check_epsilon(epsilon)  # a str/None/NaN ε would otherwise fail deep inside (fuzz)
    if backend == "spark":
        from dpreg.grouped.spark import fit_spark

        return fit_spark(df, by, x, y, method=method, epsilon=epsilon, bounds=bounds, delta=delta,
                         groups=groups, random_state=random_state, spark=spark, options=options)
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"df must be a pandas DataFrame; got {type(df).__name__}")
    spec = make_spec(df.columns, lambda: pd.unique(df[by]) if by in df.columns else [], by, x, y,
                     method=method, epsilon=epsilon, bounds=bounds, delta=delta, groups=groups,
                     random_state=random_state, options=options)
    _check_table(df, by, x, y)
    if backend == "reference":
        from dpreg.grouped.reference import fit_reference

        return fit_reference(df, spec, progress=progress)
    from dpreg.grouped import local
    from dpreg.grouped._common import partition_frame

    if not local.supported(spec):
        from dpreg.grouped.reference import fit_reference

        out = fit_reference(df, spec, progress=progress)
        out.attrs["backend"] = "reference (method/options not vectorised)"
        return out
    part = partition_frame(df, spec)
    if not (np.all(np.isfinite(part.x)) and np.all(np.isfinite(part.y))):
        raise InvalidInputError(f"columns {x!r} and {y!r} must be finite numbers in every row of "
                                "the listed groups (found NaN or inf); drop or impute them first")
    out = local.fit_local(spec, part, workers=workers)
    out.attrs["backend"] = "local"
    return out
