"""Shared pieces of the per-group backends: validation, public keys, per-key streams, output.

Everything here reads only public inputs (the key list, bounds, ε, the method and its options)
or the *shape* of the private table (column names, missing keys, group sizes n -- n is public
under replace-one neighbours).
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpreg.exceptions import InvalidInputError

__all__ = ["GroupSpec", "group_seed_sequence", "normalise_key", "make_spec", "privacy_text",
           "row_privacy_text",
           "assemble", "Partition", "partition_frame", "key_codes", "group_generator",
           "group_noise_keys"]


def normalise_key(key: Any) -> Any:
    """NumPy scalars become the equal Python scalar, so that a key read by pandas
    (``np.int64(3)``), listed by the user (``3``) or returned by Spark (``3``) gets the same
    stream."""
    return key.item() if isinstance(key, np.generic) else key


def _key_words(key: Any) -> tuple[int, ...]:
    """The first four little-endian 32-bit words of sha256(repr(key))."""
    digest = hashlib.sha256(repr(normalise_key(key)).encode()).digest()
    return struct.unpack("<4I", digest[:16])


def group_seed_sequence(root: np.random.SeedSequence, key: Any) -> np.random.SeedSequence:
    """The independent stream of one group (depends only on the root entropy and the key)."""
    return np.random.SeedSequence(root.entropy, spawn_key=_key_words(key))


def group_generator(spec: GroupSpec, key: Any) -> np.random.Generator:
    """Per-key seeded generator, or a fresh secure generator when no seed was given."""
    if spec.seeded:
        return np.random.Generator(np.random.PCG64(group_seed_sequence(spec.root, key)))
    from dpreg._random import check_rng

    return check_rng(None)


def group_noise_keys(spec: GroupSpec, keys: Sequence[Any], calls: int) -> list[list[bytes]] | None:
    """The noise keys of ``calls`` successive Laplace/Gaussian mechanism calls of every group in
    ``keys`` (:func:`dpreg._random.noise_keys` of its :func:`group_generator`): exactly the keys
    the group's own fit draws, in call order, so a batched release of many groups equals the
    per-group loop.  ``None`` without a seed (secure mode: one os.urandom source for the whole
    batch)."""
    if not spec.seeded:
        return None
    from dpreg._random import noise_keys

    # group_generator(spec, k) is Generator(PCG64(seed sequence of k)); the keys come from its
    # bit generator alone, so the Generator object itself is not needed here
    return [noise_keys(np.random.PCG64(group_seed_sequence(spec.root, k)), calls) for k in keys]


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


def row_privacy_text(spec: GroupSpec) -> str:
    """The per-row ``privacy`` column: what each group's release cost and protects."""
    budget = f"ε={spec.epsilon:g}" + ("" if spec.delta is None else f", δ={spec.delta:g}")
    return (f"{spec.method}, {budget} per group (replace-one neighbours, n public); the table is "
            "released under the same guarantee by parallel composition over disjoint groups")


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


def key_codes(column: Any, keys: Sequence[Any]) -> np.ndarray:
    """Position in ``keys`` of every row's key (−1 when the key is not listed).  Keys match as
    Python objects, as a lookup of ``column.astype(object)`` in an object index of ``keys``
    does, but only the distinct values of the column are converted: the column is factorised
    in its own dtype first (O(n) hashing), then its few distinct values are looked up."""
    from dpreg.grouped._segments import int_key_codes

    col = pd.Series(column)
    if col.dtype.kind in "iu" and col.dtype.itemsize <= 8 and not (
            col.dtype.kind == "u" and col.dtype.itemsize == 8):
        # integer keys: a lookup table over the column's range (no hashing of every row)
        fast = int_key_codes(col.to_numpy(np.int64), list(keys),
                             max_span=max(1 << 16, 4 * len(col) + 1))
        if fast is not None:
            return fast
    index = pd.Index(pd.array(list(keys), dtype=object) if len(keys) else [], dtype=object)
    codes, uniques = pd.factorize(col, sort=False)
    if len(uniques) == 0:
        return np.full(len(codes), -1, dtype=np.int64)
    lookup = index.get_indexer(pd.Index(np.asarray(uniques, dtype=object), dtype=object))
    lookup = np.append(lookup, -1).astype(np.int64)  # code −1 (missing) -> −1
    return lookup[codes]


def partition_frame(df: pd.DataFrame, spec: GroupSpec) -> Partition:
    """One stable (counting) sort of the table by group; rows whose key is not declared are
    dropped."""
    from dpreg.grouped._segments import group_rows

    codes = key_codes(df[spec.by], spec.keys)
    try:
        x = df[spec.x].to_numpy(dtype=np.float64)
        y = df[spec.y].to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(f"columns {spec.x!r} and {spec.y!r} must be numeric") from None
    xs, ys, starts = group_rows(codes, x, y, len(spec.keys))
    return Partition(xs, ys, starts)


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
