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
from dpreg.grouped._common import GroupSpec, group_seed_sequence, make_spec

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


def _check_finite(part: Any, x: str, y: str) -> None:
    if not (np.all(np.isfinite(part.x)) and np.all(np.isfinite(part.y))):
        raise InvalidInputError(f"columns {x!r} and {y!r} must be finite numbers in every row of "
                                "the listed groups (found NaN or inf); drop or impute them first")


def table_budget(ledger: Any, spec: GroupSpec) -> Any:
    """What a per-group table charges ``ledger``: ONE group's release budget (parallel
    composition over disjoint groups), in the definition a single fit of the method charges
    (:func:`dpreg._dispatch.charged_budget`); None without a ledger.  Public inputs only."""
    if ledger is None:
        return None
    from dpreg.privacy import Ledger

    if not isinstance(ledger, Ledger):
        raise InvalidInputError(f"ledger must be a dpreg.Ledger or None; got {ledger!r}")
    from dpreg._dispatch import charged_budget

    return charged_budget(spec.method, epsilon=spec.epsilon, delta=spec.delta,
                          options=spec.options)


def _preflight(spec: GroupSpec, counts: np.ndarray) -> None:
    """Run the method once on PUBLIC dummy data of the smallest fitted group size (n is public
    under replace-one; the result is discarded), so that an option value only the method checks
    is rejected before the table is charged rather than after."""
    import warnings

    from dpreg.api import fit_arrays

    sizes = [int(c) for c in counts if int(c) >= spec.min_rows]
    if not sizes:
        return
    m = min(sizes)
    g = np.random.default_rng(0)
    xs = g.uniform(spec.x_bounds[0], spec.x_bounds[1], m)
    ys = g.uniform(spec.y_bounds[0], spec.y_bounds[1], m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_arrays(xs.reshape(-1, 1), ys, method=spec.method, epsilon=spec.epsilon,
                   x_bounds=[spec.x_bounds], y_bounds=spec.y_bounds, x_names=[spec.x],
                   y_name=spec.y, delta=spec.delta, random_state=g, **spec.options)


def charge_table(ledger: Any, spec: GroupSpec, budget: Any, counts: np.ndarray) -> None:
    """Charge the table's budget once, before any group is released (all or nothing): a
    :class:`~dpreg.exceptions.BudgetExceededError` here means nothing is released.  Stated
    under replace-one neighbours with n public, as every per-group release is."""
    if ledger is None:
        return
    from dpreg.privacy import Neighbouring, charge

    _preflight(spec, counts)
    charge(ledger, budget, f"fit_by_group {spec.method}: {len(spec.keys)} disjoint groups "
           "(parallel composition)", Neighbouring.REPLACE_ONE)


def _charge_frame(ledger: Any, spec: GroupSpec, budget: Any, df: pd.DataFrame) -> None:
    """:func:`charge_table` for a pandas table fitted by the reference loop."""
    if ledger is None:
        return
    from dpreg.grouped._common import partition_frame

    part = partition_frame(df, spec)
    _check_finite(part, spec.x, spec.y)  # what the per-group fits would reject, before charging
    charge_table(ledger, spec, budget, part.counts)


def fit_by_group(
    df: Any, by: str, x: str, y: str, *, method: str, epsilon: float,
    bounds: Mapping[str, Any], delta: float | None = None, groups: Sequence[Any] | None = None,
    backend: str = "local", random_state: Any = None, progress: bool = False,
    workers: int | None = None, spark: Any = None, ledger: Any = None, **options: Any,
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
    ledger:
        Optional :class:`~dpreg.Ledger`, charged ONCE for the whole table -- one group's
        budget, by parallel composition over disjoint groups, in the definition a single fit of
        ``method`` charges, stated under replace-one neighbours -- after validation and before
        any group is released.  If it does not fit, :class:`~dpreg.BudgetExceededError` is
        raised and nothing is released.  The per-group fits charge nothing.

    Returns a DataFrame with columns ``group`` (the key), ``n``, ``intercept``, ``slope``,
    ``failed``, ``reason``, ``pred_<x>`` (predictions at the evaluation points, when the method
    releases them and some group did not fail) and ``privacy`` (the statement, also in
    ``result.attrs["privacy"]``).
    """
    if backend not in BACKENDS:
        raise InvalidInputError(f"backend must be one of {list(BACKENDS)}; got {backend!r}")
    from dpreg._validation import check_epsilon

    epsilon = check_epsilon(epsilon)  # a str/None/NaN ε would otherwise fail deep inside (fuzz)
    if ledger is not None:
        from dpreg.privacy import Ledger

        if not isinstance(ledger, Ledger):
            raise InvalidInputError(f"ledger must be a dpreg.Ledger or None; got {ledger!r}")
    if backend == "spark":
        from dpreg.grouped.spark import fit_spark

        def before_release(spec: GroupSpec, counts: np.ndarray) -> None:
            charge_table(ledger, spec, table_budget(ledger, spec), counts)

        return fit_spark(df, by, x, y, method=method, epsilon=epsilon, bounds=bounds, delta=delta,
                         groups=groups, random_state=random_state, spark=spark, options=options,
                         before_release=before_release)
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"df must be a pandas DataFrame; got {type(df).__name__}")
    spec = make_spec(df.columns, lambda: pd.unique(df[by]) if by in df.columns else [], by, x, y,
                     method=method, epsilon=epsilon, bounds=bounds, delta=delta, groups=groups,
                     random_state=random_state, options=options)
    _check_table(df, by, x, y)
    budget = table_budget(ledger, spec)
    if backend == "reference":
        from dpreg.grouped.reference import fit_reference

        _charge_frame(ledger, spec, budget, df)
        return fit_reference(df, spec, progress=progress)
    from dpreg.grouped import local
    from dpreg.grouped._common import partition_frame

    if not local.supported(spec):
        from dpreg.grouped.reference import fit_reference

        _charge_frame(ledger, spec, budget, df)
        out = fit_reference(df, spec, progress=progress)
        out.attrs["backend"] = "reference (method/options not vectorised)"
        return out
    part = partition_frame(df, spec)
    _check_finite(part, x, y)
    charge_table(ledger, spec, budget, part.counts)
    out = local.fit_local(spec, part, workers=workers)
    out.attrs["backend"] = "local"
    return out
