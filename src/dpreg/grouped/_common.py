"""Shared pieces of the per-group backends: validation, public keys, per-key streams, output.

Everything here reads only public inputs (the key list, bounds, ε, the method and its options)
or the *shape* of the private table (column names, missing keys, group sizes n -- n is public
under replace-one neighbours).
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpreg.exceptions import InvalidInputError

__all__ = ["GroupSpec", "group_seed_sequence", "normalise_key", "make_spec", "privacy_text",
           "row_privacy_text",
           "assemble", "Partition", "partition_frame", "group_generator"]


def normalise_key(key: Any) -> Any:
    """NumPy scalars become the equal Python scalar, so that a key read by pandas
    (``np.int64(3)``), listed by the user (``3``) or returned by Spark (``3``) gets the same
    stream."""
    return key.item() if isinstance(key, np.generic) else key


def _key_words(key: Any) -> tuple[int, ...]:
    digest = hashlib.sha256(repr(normalise_key(key)).encode()).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))


def group_seed_sequence(root: np.random.SeedSequence, key: Any) -> np.random.SeedSequence:
    """The independent stream of one group (depends only on the root entropy and the key)."""
    return np.random.SeedSequence(root.entropy, spawn_key=_key_words(key))


def group_generator(spec: GroupSpec, key: Any) -> np.random.Generator:
    """Per-key seeded generator, or a fresh secure generator when no seed was given."""
    if spec.seeded:
        return np.random.default_rng(group_seed_sequence(spec.root, key))
    from dpreg._validation import check_rng

    return check_rng(None)


@dataclass
class GroupSpec:
    """Validated public inputs of one ``fit_by_group`` call."""

    by: str
    x: str
    y: str
    method: str
    epsilon: float
    delta: float | None
    x_bounds: tuple[float, float]
    y_bounds: tuple[float, float]
    keys: list[Any]
    declared: bool
    seeded: bool
    root: np.random.SeedSequence
    min_rows: int
    options: dict[str, Any] = field(default_factory=dict)


def _is_missing(key: Any) -> bool:
    try:
        return bool(pd.isna(key))
    except (TypeError, ValueError):
        return False


def make_spec(columns: Sequence[str], key_values: Any, by: str, x: str, y: str, *, method: str,
              epsilon: float, bounds: Mapping[str, Any], delta: float | None,
              groups: Sequence[Any] | None, random_state: Any,
              options: dict[str, Any]) -> GroupSpec:
    """Validate everything public before any noise is drawn.

    ``key_values`` is a callable returning the distinct keys found in the data (only called
    when ``groups`` is None; the caller then declares those keys public) -- or a pandas
    Series of keys.
    """
    cols = list(columns)
    for col, role in ((by, "by"), (x, "x"), (y, "y")):
        if col not in cols:
            raise InvalidInputError(f"{role} column {col!r} is not in the data (columns: {cols})")
    if isinstance(bounds, str) and bounds == "private" or isinstance(bounds, Mapping) and any(
            isinstance(v, str) and v == "private" for v in bounds.values()):
        raise InvalidInputError(
            "fit_by_group needs public bounds for x and y (bounds={col: (lo, hi)}): the table "
            "reports every group's predictions at the same public x points, which group-wise DP "
            "bounds would not give; bounds='private' is available for single fits "
            "(dpreg.regress / AutoDPRegression)")
    if not isinstance(bounds, Mapping) or x not in bounds or y not in bounds:
        missing = [c for c in (x, y) if not isinstance(bounds, Mapping) or c not in bounds]
        raise InvalidInputError(f"bounds for {missing} are missing: pass bounds={{col: (lo, hi)}}"
                                " with public limits")
    from dpreg._dispatch import MIN_ROWS
    from dpreg._validation import check_bounds

    if method not in MIN_ROWS:
        raise InvalidInputError(f"method must be one of {sorted(MIN_ROWS)}; got {method!r}")
    xb = check_bounds(bounds[x], f"bounds[{x!r}]")
    yb = check_bounds(bounds[y], f"bounds[{y!r}]")
    declared = groups is not None
    if groups is not None:
        if isinstance(groups, (str, bytes)) or not isinstance(groups, (Sequence, np.ndarray,
                                                                        pd.Index, pd.Series)):
            raise InvalidInputError("groups must be a list of public group keys; got "
                                    f"{type(groups).__name__}")
        keys = [normalise_key(k) for k in groups]
        if any(_is_missing(k) for k in keys):
            raise InvalidInputError("groups must not contain missing keys (None/NaN): a missing "
                                    "key cannot match any row")
        if len(set(map(repr, keys))) != len(keys):
            raise InvalidInputError("groups must not contain duplicate keys")
    else:
        keys = [normalise_key(k) for k in key_values()]
    if isinstance(random_state, np.random.SeedSequence):
        root = random_state
    elif random_state is None:
        root = np.random.SeedSequence()
    else:
        if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) \
                or int(random_state) < 0:
            raise InvalidInputError("random_state must be None, a non-negative int or a "
                                    f"SeedSequence; got {random_state!r}")
        root = np.random.SeedSequence(int(random_state))
    return GroupSpec(by=by, x=x, y=y, method=method, epsilon=epsilon, delta=delta, x_bounds=xb,
                     y_bounds=yb, keys=keys, declared=declared, seeded=random_state is not None,
                     root=root, min_rows=_min_rows(method, MIN_ROWS[method]),
                     options=dict(options))


def _min_rows(method: str, listed: int) -> int:
    """Rows a group needs.  Every simple method validates n >= 2 (one row has no pairs, no
    spread, and the intercept-only release checks the same shape), so a one-row group gets a
    ⊥ row instead of aborting the whole table."""
    from dpreg.api import SIMPLE_ONLY

    return max(listed, 2) if method in SIMPLE_ONLY or method == "dp-gd" else listed


def _with_notices(text: Callable[[GroupSpec], str]) -> Callable[[GroupSpec], str]:
    """Both privacy texts start with NOT PRIVATE for ε = ∞ and end with the secret-seed
    requirement for a seeded table (:mod:`dpreg.privacy.notices`)."""
    from dpreg.privacy.notices import NOT_PRIVATE_NOTICE, SEED_NOTICE

    @functools.wraps(text)
    def wrapped(spec: GroupSpec) -> str:
        out = text(spec)
        if math.isinf(spec.epsilon):
            out = f"{NOT_PRIVATE_NOTICE}. {out}"
        if spec.seeded:
            out = f"{out.rstrip('.')}. {SEED_NOTICE[0].upper()}{SEED_NOTICE[1:]}."
        return out

    return wrapped


@_with_notices
def row_privacy_text(spec: GroupSpec) -> str:
    """The per-row ``privacy`` column: what each group's release cost and protects."""
    budget = f"ε={spec.epsilon:g}" + ("" if spec.delta is None else f", δ={spec.delta:g}")
    return (f"{spec.method}, {budget} per group (replace-one neighbours, n public); the table is "
            "released under the same guarantee by parallel composition over disjoint groups")


@_with_notices
def privacy_text(spec: GroupSpec) -> str:
    """The statement attached to every grouped release (``attrs["privacy"]`` and the
    ``privacy`` column)."""
    return (
        f"{spec.method} with ε={spec.epsilon:g}"
        f"{'' if spec.delta is None else f', δ={spec.delta:g}'} per group; groups are disjoint, "
        "so the whole table is released under the same guarantee by parallel composition. "
        "Group keys: " + ("the public list passed in `groups`" if spec.declared else
                          "taken from the data and declared public by the caller")
        + "; per-group n is released (replace-one neighbours, n public)."
    )


@dataclass
class Partition:
    """Rows of the declared groups, contiguous per group (in key order, original row order
    inside a group).  ``starts[g]:starts[g+1]`` are the rows of ``spec.keys[g]``."""

    x: np.ndarray
    y: np.ndarray
    starts: np.ndarray

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.starts)


def partition_frame(df: pd.DataFrame, spec: GroupSpec) -> Partition:
    """One stable sort of the table by group; rows whose key is not declared are dropped."""
    keys = pd.Index(pd.array(spec.keys, dtype=object) if spec.keys else [], dtype=object)
    col = df[spec.by]
    codes = keys.get_indexer(pd.Index(col.astype(object)))
    keep = codes >= 0
    order = np.argsort(codes[keep], kind="stable")
    try:
        xs = df[spec.x].to_numpy(dtype=np.float64)[keep][order]
        ys = df[spec.y].to_numpy(dtype=np.float64)[keep][order]
    except (TypeError, ValueError):
        raise InvalidInputError(f"columns {spec.x!r} and {spec.y!r} must be numeric") from None
    counts = np.bincount(codes[keep], minlength=len(spec.keys))
    starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return Partition(np.ascontiguousarray(xs), np.ascontiguousarray(ys), starts)


def assemble(spec: GroupSpec, n: np.ndarray, intercept: np.ndarray, slope: np.ndarray,
             failed: np.ndarray, reason: list[str], preds: dict[float, np.ndarray]) -> pd.DataFrame:
    """The output table: one row per key, the same columns and dtypes as the reference loop
    (``pred_<x>`` columns only when some group released a line), plus ``privacy``."""
    data: dict[str, Any] = {
        "group": list(spec.keys),
        "n": np.asarray(n, dtype=np.int64),
        "intercept": np.asarray(intercept, dtype=np.float64),
        "slope": np.asarray(slope, dtype=np.float64),
        "failed": np.asarray(failed, dtype=bool),
        "reason": list(reason),
    }
    if not bool(np.all(failed)):
        for xv, vals in preds.items():
            data[f"pred_{xv}"] = np.where(failed, np.nan, np.asarray(vals, dtype=np.float64))
    out = pd.DataFrame(data)
    out["privacy"] = row_privacy_text(spec)
    out.attrs["privacy"] = privacy_text(spec)
    return out


def check_epsilon_like(value: Any) -> None:
    """ε must be a real number (the cores validate the range); NaN is rejected early."""
    if isinstance(value, float) and math.isnan(value):
        raise InvalidInputError("epsilon must be a real number with 0 < epsilon <= inf; got nan")
