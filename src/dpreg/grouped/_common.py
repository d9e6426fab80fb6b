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

from dpreg import methods
from dpreg.exceptions import InvalidInputError
from dpreg.grouped._keys import (
    FROM_DATA,
    KeyProblem,
    canonical_key,
    check_declared_keys,
    row_codes,
)
from dpreg.privacy.neighbours import Neighbouring, check_neighbouring
from dpreg.simple.fast import jit_on_first_use

__all__ = ["GroupSpec", "group_seed_sequence", "normalise_key", "make_spec", "privacy_text",
           "row_privacy_text", "GROUP_RELATION", "release_options", "check_release_relation",
           "assemble", "Partition", "partition_frame", "group_generator",
           "group_randomness", "interval_methods", "interval_options", "interval_row",
           "interval_text", "add_interval_columns", "tie_flagged", "interval_theta",
           "warn_tied_groups"]

#: the neighbouring relation of every per-group release: neighbouring tables differ in the
#: values of one record, which stays in its group, so every group's n is public (and released)
GROUP_RELATION = Neighbouring.REPLACE_ONE


def normalise_key(key: Any) -> Any:
    """NumPy scalars become the equal Python scalar, so that a key read by pandas
    (``np.int64(3)``), listed by the user (``3``) or returned by Spark (``3``) gets the same
    stream.  (Group identity is decided by :func:`dpreg.grouped._keys.canonical_key`.)"""
    return key.item() if isinstance(key, np.generic) else key


def _stream_key(key: Any) -> Any:
    """What a stream is derived from: the canonical key (so ``3``, ``3.0`` and ``np.int64(3)``
    -- one group -- get one stream; ``True`` and ``"3"`` are other groups), element-wise for
    tuples (e.g. ``(tract, method)`` in the demo)."""
    if isinstance(key, tuple):
        return tuple(_stream_key(k) for k in key)
    try:
        return canonical_key(key)[1]
    except KeyProblem:
        return normalise_key(key)


def _key_words(key: Any) -> tuple[int, ...]:
    digest = hashlib.sha256(repr(_stream_key(key)).encode()).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))


def _key_words_array(keys: Sequence[Any]) -> np.ndarray:
    """:func:`_key_words` of every key as a (G, 4) uint32 array (a plain int key is its own
    canonical key, and ``repr`` of it is ``str``: the shortcut gives the same words)."""
    sha = hashlib.sha256
    digests = b"".join([sha((str(k) if type(k) is int else repr(_stream_key(k))).encode())
                        .digest()[:16] for k in keys])
    return np.frombuffer(digests, dtype="<u4").reshape(len(keys), 4)


def group_seed_sequence(root: np.random.SeedSequence, key: Any) -> np.random.SeedSequence:
    """The independent stream of one group (depends only on the root entropy and the key)."""
    return np.random.SeedSequence(root.entropy, spawn_key=_key_words(key))


def group_generator(spec: GroupSpec, key: Any) -> np.random.Generator:
    """Per-key seeded generator, or a fresh secure generator when no seed was given."""
    if spec.seeded:
        return np.random.Generator(np.random.PCG64(group_seed_sequence(spec.root, key)))
    from dpreg._random import check_rng

    return check_rng(None)


def group_randomness(spec: GroupSpec, keys: Sequence[Any]) -> Any:
    """The :class:`~dpreg.mechanisms.batch.RowRandomness` of the groups ``keys`` (one row per
    key): seeded, row g draws from the bit generator of its :func:`group_generator` -- the keys
    the group's own fit takes, in call order, so a batched release of many groups equals the
    per-group loop; secure (no seed), one os.urandom source for the whole batch."""
    from dpreg.mechanisms.batch import RowRandomness

    if not spec.seeded:
        return RowRandomness.secure(len(keys))
    # the generators of group_generator, as arrays of PCG64 states (the same outputs)
    return RowRandomness.seed_sequences(spec.root.entropy, _key_words_array(keys))


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
    #: the kind of the keys (``"number"``, ``"bool"``, ``"str"``; see dpreg.grouped._keys)
    key_kind: str = "any"


def _check_groups_argument(groups: Any) -> None:
    if groups is None:
        raise InvalidInputError(
            "groups is required: pass the public list of group keys, groups=[...] (CLI: "
            "--groups-file FILE, one key per line), so that the table has one row per listed "
            "key and does not reveal which groups are present; or pass groups='from-data' "
            "(CLI: --keys-from-data) to take the keys from the data -- the key set is then NOT "
            "protected (the table reveals which groups occur)")


@functools.lru_cache(maxsize=1)
def interval_methods() -> dict[str, str]:
    """The methods whose per-group table carries (1 − α) intervals when ``ci_alpha=`` is
    given, and what they cover -- from the specs (``interval.per_group``): the Theil-Sen
    methods spend ε/2 on the Sarathy–Vadhan slope interval (slope only); noisy-stats
    releases the extra statistics of ``inference=True`` and its DP-aware parametric
    bootstrap gives slope and prediction intervals by post-processing."""
    return {m.name: m.interval.per_group for m in methods.specs(selector=False)
            if m.interval.per_group is not None}


def _bootstrapped(method: str) -> bool:
    """True when the method's per-group interval is post-processing of its ``inference=True``
    release (no budget of its own)."""
    return method in interval_methods() and methods.get(method).interval.request == "inference"


def tie_flagged(method: str) -> bool:
    """True when the method's per-group interval is a release of its own with a public
    widening θ (requested with ``ci_alpha``: the Theil-Sen slope interval): its interval
    table carries ``ci_point_mass``, the release rule for tied slopes
    (:func:`dpreg.simple.ci.point_mass_flag`)."""
    return method in interval_methods() and methods.get(method).interval.request == "ci_alpha"


def interval_theta(result: Any) -> float:
    """The public widening θ of a group's released slope interval, read from the release's
    privacy statement (``details["ci"]["details"]["theta"]``: a function of the group's public
    n, ε and the slope search range; 0 for the non-private interval at ε = ∞)."""
    return float(result.privacy.details["ci"]["details"]["theta"])


def _check_interval_request(method: str, options: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Validate ``ci_alpha`` (public) before anything is charged; returns the options and the
    extra minimum group size the interval needs (noisy-stats with inference: n >= 3)."""
    if "ci_alpha" not in options:
        return options, 0
    from dpreg._validation import check_probability

    opts = dict(options)
    opts["ci_alpha"] = check_probability(opts["ci_alpha"], "ci_alpha")
    allowed = interval_methods()
    if method not in allowed:
        raise InvalidInputError(
            f"ci_alpha (--ci) gives per-group intervals for the methods {sorted(allowed)}; got "
            f"method={method!r}")
    if _bootstrapped(method):
        if "inference" in opts and opts["inference"] is not True:
            raise InvalidInputError(
                f"ci_alpha with {method} releases the statistics of inference=True (its "
                f"DP-aware interval needs them); got inference={opts['inference']!r}")
    return opts, methods.get(method).interval.per_group_min_rows


def interval_options(spec: GroupSpec, options: dict[str, Any]) -> dict[str, Any]:
    """The options of one group's :func:`dpreg.api.fit_arrays` call for an interval table:
    noisy-stats releases with ``inference=True`` (``ci_alpha`` is applied afterwards, by
    post-processing); the Theil-Sen methods keep ``ci_alpha`` (ε/2 on the slope interval)."""
    opts = dict(options)
    if "ci_alpha" in opts and _bootstrapped(spec.method):
        del opts["ci_alpha"]
        opts["inference"] = True
    return opts


def interval_row(spec: GroupSpec, result: Any) -> dict[str, Any]:
    """The interval columns of one group's released (not failed) result: ``lower_slope``,
    ``upper_slope``, ``informative_slope`` and, for noisy-stats, ``lower_pred_<x>`` /
    ``upper_pred_<x>`` at the release's evaluation points -- all read from the release by the
    single fit's own interval functions (``result.conf_int``, ``result.get_prediction``):
    post-processing, nothing more is drawn from the data.

    ``informative_slope`` is False when the slope interval at the table's α excludes the
    group's released slope (Theil-Sen: two releases; noisy-stats: the percentile interval is
    not centred on the estimate), when an end of the Theil-Sen slope interval is the end of the public
    slope search range (``extra['ci_informative']``), and for noisy-stats when the release
    flags its interval unreliable (``extra['dp_ci_reliable']``) or, for an interval the
    release rule offered, when the posterior mass of Σ(x − x̄)² below the rule's threshold
    (``extra['dp_ci_unidentified_mass']``, where the release says nothing) is at least α/2:
    the interval's ends are then set by that region.  A group whose interval the noisy-stats
    interval rule refuses (from its public n·ε or from its release:
    :func:`dpreg.simple._noisy_stats.interval_refusal`) gets NA interval columns and
    ``informative_slope`` False.

    ``ci_point_mass`` (Theil-Sen, :func:`tie_flagged`) is
    :func:`dpreg.simple.ci.point_mass_flag` of the row's ``lower_slope``, ``upper_slope`` and
    the group's public widening θ (:func:`interval_theta`): the one release rule for tied
    slopes, for every backend (they all build their interval rows here)."""
    from dpreg.inference import NoUncertaintyError
    from dpreg.simple.ci import point_mass_flag

    alpha = float(spec.options["ci_alpha"])
    try:
        ci = result.conf_int(alpha)
    except NoUncertaintyError:  # refused by the interval rule (this group's n, ε, release)
        return {"lower_slope": np.nan, "upper_slope": np.nan, "informative_slope": False}
    row: dict[str, Any] = {"lower_slope": float(ci.loc[spec.x, "lower"]),
                           "upper_slope": float(ci.loc[spec.x, "upper"])}
    extra = result.extra
    # at the table's α (never at a fixed level): an interval that excludes its own estimate
    # is flagged, whatever the method
    inside = spec.x not in result.excludes_estimate(alpha)
    if "ci_informative" in extra:
        row["informative_slope"] = bool(extra["ci_informative"].get(spec.x, True)) and inside
    else:
        row["informative_slope"] = (bool(extra.get("dp_ci_reliable", True)) and inside
                                    and float(extra.get("dp_ci_unidentified_mass", 0.0))
                                    < alpha / 2.0)
    if tie_flagged(spec.method):
        # the single fit's release rule for tied slopes, applied to this row's released ends
        # and the group's public θ: post-processing (the same function as extra['ci_point_mass'])
        row["ci_point_mass"] = point_mass_flag(row["lower_slope"], row["upper_slope"],
                                               interval_theta(result))
    if _bootstrapped(spec.method):
        xs = [float(v) for v in (extra.get("predictions") or {})]
        if xs:
            pci = result.get_prediction(np.array(xs).reshape(-1, 1)).conf_int(alpha)
            for j, xv in enumerate(xs):
                row[f"lower_pred_{xv}"] = float(pci.iloc[j, 0])
                row[f"upper_pred_{xv}"] = float(pci.iloc[j, 1])
    return row


def add_interval_columns(spec: GroupSpec, table: pd.DataFrame) -> pd.DataFrame:
    """Every interval table has ``lower_slope``, ``upper_slope``, ``informative_slope`` (NA in
    ⊥ rows; the flags as pandas' nullable boolean), for the Theil-Sen methods
    ``ci_point_mass`` (:func:`tie_flagged`) and, for noisy-stats, ``lower_/upper_pred_<x>``
    beside every ``pred_<x>`` column -- in a fixed order before ``privacy``."""
    if "ci_alpha" not in spec.options:
        return table
    out = table.copy()
    want = ["lower_slope", "upper_slope", "informative_slope"]
    flags = ["informative_slope"]
    if tie_flagged(spec.method):
        want.append("ci_point_mass")
        flags.append("ci_point_mass")
    if _bootstrapped(spec.method):
        for c in [c for c in out.columns if isinstance(c, str) and c.startswith("pred_")]:
            want += [f"lower_{c}", f"upper_{c}"]
    for c in want:
        if c not in out.columns:
            out[c] = np.nan
    for c in flags:
        out[c] = pd.array([None if pd.isna(v) else bool(v) for v in out[c]], dtype="boolean")
    rest = [c for c in out.columns if c not in want and c != "privacy"]
    tail = ["privacy"] if "privacy" in out.columns else []
    res = out[rest + want + tail]
    res.attrs.update(table.attrs)
    return res


def warn_tied_groups(table: pd.DataFrame) -> None:
    """ONE :class:`~dpreg.exceptions.TiedSlopesWarning` for an interval table in which some
    groups are flagged ``ci_point_mass``, stating how many (of the released groups).  Both
    counts are functions of released values (the flags and ``failed``): public
    post-processing, costs no budget; the message holds no value of the data.  The groups'
    own fits do not warn (:func:`dpreg.grouped.reference.fit_group`): one table, one warning."""
    if "ci_point_mass" not in table.columns:
        return
    flagged = int(table["ci_point_mass"].fillna(False).astype(bool).sum())
    if not flagged:
        return
    import warnings

    from dpreg.exceptions import TiedSlopesWarning
    from dpreg.privacy.notices import user_stacklevel
    from dpreg.simple.ci import POINT_MASS_TEXT

    released = int((~table["failed"].astype(bool)).sum())
    warnings.warn(
        f"Theil-Sen: {flagged} of {released} released groups are flagged ci_point_mass -- in "
        f"each, {POINT_MASS_TEXT}", TiedSlopesWarning, stacklevel=user_stacklevel())


def interval_text(spec: GroupSpec) -> str:
    """The budget split of an interval table, for both privacy texts ('' without
    ``ci_alpha``)."""
    if "ci_alpha" not in spec.options:
        return ""
    level = f"{1 - float(spec.options['ci_alpha']):g}"
    return " " + methods.get(spec.method).group_interval_text(level=level,
                                                              epsilon=spec.epsilon)


def check_group_relation(options: dict[str, Any]) -> dict[str, Any]:
    """Per-group releases are replace-one with n public (the table states each group's n):
    a ``neighbouring=`` option asking for another relation is refused; asking for replace-one
    is accepted and dropped (:func:`release_options` sets it for every method that takes it)."""
    opts = dict(options)
    if "neighbouring" in opts:
        rel = check_neighbouring(opts.pop("neighbouring"))
        if rel is not GROUP_RELATION:
            raise InvalidInputError(
                f"neighbouring must be {GROUP_RELATION.value!r} for per-group fits; got "
                f"{rel.value!r}: every group's release is calibrated for replace-one neighbours "
                "with n public (the table reports each group's n, which add/remove would "
                "protect); use dpreg.regress or an estimator for an add/remove release")
    return opts


def release_options(spec: GroupSpec) -> dict[str, Any]:
    """The options one group's :func:`dpreg.api.fit_arrays` call gets: the user's, plus the
    per-group relation for every method whose estimator takes ``neighbouring=`` (AdaSSP,
    BoostedAdaSSP and CovarianceOLS default to add/remove; calibrated for add/remove but
    stated as replace-one they would spend up to 7/3 of the charged ρ), and -- for a method
    whose table default differs from its other entry points' -- the spec's declared
    ``group_defaults`` (with their reason, ``group_defaults_reason``: noisy-stats and AdaSSP
    release the plain line unless the table asks for intervals with ``ci_alpha``, which
    switches ``inference`` on); an option the caller gave is kept as given."""
    entry = methods.get(spec.method)
    opts = {**entry.group_defaults, **spec.options}
    if entry.takes_neighbouring and entry.uses("neighbouring", opts, {"n_features": 1}):
        opts["neighbouring"] = GROUP_RELATION.value
    return opts


def check_release_relation(spec: GroupSpec, result: Any) -> None:
    """Every group's release must be calibrated for the relation the table states; a release
    whose statement names another relation is an internal error (it is not returned)."""
    privacy = getattr(result, "privacy", None)
    rel = getattr(privacy, "neighbouring", None)
    if rel is not None and check_neighbouring(rel) is not GROUP_RELATION:
        raise RuntimeError(  # pragma: no cover - guarded by release_options and the tests
            f"internal error: a per-group {spec.method} release was calibrated for {rel} "
            f"neighbours, but the table states {GROUP_RELATION.value}; nothing was returned")


def make_spec(columns: Sequence[str], key_values: Any, by: str, x: str, y: str, *, method: str,
              epsilon: float, bounds: Mapping[str, Any], delta: float | None,
              groups: Any, random_state: Any,
              options: dict[str, Any], key_kind: Any = "any") -> GroupSpec:
    """Validate everything public before any noise is drawn.

    ``groups``: the public key list (validated and canonicalised by
    :func:`dpreg.grouped._keys.check_declared_keys` against the key column's kind,
    ``key_kind()`` -- a callable or a string), or ``"from-data"``: then ``key_values()`` returns
    the canonical keys found in the data (the key set is then not protected).  None is refused.
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
    from dpreg._bounds import xy_bounds

    entry = methods.get(method, allowed=sorted(methods.REGISTRY))
    (xb,), yb = xy_bounds(bounds, [x], y)
    options = check_group_relation(options)
    options, ci_min_rows = _check_interval_request(entry.name, options)
    _check_groups_argument(groups)
    declared = not (isinstance(groups, str) and groups == FROM_DATA)
    kind = key_kind() if callable(key_kind) else key_kind
    if declared:
        keys = check_declared_keys(groups, kind, by)
    else:
        keys = list(key_values())
    key_kind_found = canonical_key(keys[0])[0] if keys else kind
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
                     root=root, min_rows=max(entry.min_rows, ci_min_rows),
                     options=dict(options), key_kind=key_kind_found)


#: what the key set reveals, by how the keys were given
_KEYS_DECLARED = ("the public list passed in `groups` (every listed key has a row, also keys "
                  "without rows, so which groups occur in the data is not revealed)")
_KEYS_FROM_DATA = ("read from the data (groups='from-data'): the key set is NOT protected -- "
                   "the table reveals which groups occur in the data")


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
    keys = "" if spec.declared else "; group keys read from the data: the key set is NOT protected"
    return (f"{spec.method}, {budget} per group (replace-one neighbours, n public); the table is "
            "released under the same guarantee by parallel composition over disjoint groups"
            + keys + ("." + interval_text(spec) if interval_text(spec) else ""))


@_with_notices
def privacy_text(spec: GroupSpec) -> str:
    """The statement attached to every grouped release (``attrs["privacy"]`` and the
    ``privacy`` column)."""
    return (
        f"{spec.method} with ε={spec.epsilon:g}"
        f"{'' if spec.delta is None else f', δ={spec.delta:g}'} per group; groups are disjoint, "
        "so the whole table is released under the same guarantee by parallel composition. "
        "Group keys: " + (_KEYS_DECLARED if spec.declared else _KEYS_FROM_DATA)
        + ". Neighbouring tables differ in the values of one record, which stays in its group "
        "(replace-one neighbours, every group's n public): per-group n is released."
        + interval_text(spec)
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


def declared_values(series: pd.Series, keep: np.ndarray, column: str) -> np.ndarray:
    """The values of ``column`` in the rows of the declared groups (``keep``: a mask or row
    indices), as float64.

    Only those rows are read: a value in a row of an undeclared group (or with a missing key)
    never changes the output.  A non-numeric, missing or non-finite value in a declared group
    is an error naming the column and the kind of problem -- never the value, the group or a
    count (the caller drops or imputes such rows).
    """
    dt = series.dtype
    if pd.api.types.is_bool_dtype(dt) or (pd.api.types.is_numeric_dtype(dt)
                                          and not pd.api.types.is_complex_dtype(dt)):
        vals = series.to_numpy(dtype=np.float64, na_value=np.nan)[keep]
    elif pd.api.types.is_object_dtype(dt) or pd.api.types.is_string_dtype(dt):
        raw = series.to_numpy(dtype=object)[keep]
        try:
            num = pd.to_numeric(pd.Series(raw, dtype=object), errors="coerce")
            vals = num.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            vals = None
        if vals is None or bool(np.any(np.isnan(vals) & ~pd.isna(raw))):
            raise InvalidInputError(
                f"column {column!r} holds a non-numeric value in a row of a declared group; "
                "convert or drop such rows first") from None
    else:
        raise InvalidInputError(f"column {column!r} must be numeric; got dtype {dt}")
    if not bool(np.all(np.isfinite(vals))):
        raise InvalidInputError(
            f"column {column!r} has a missing or non-finite value (NaN or inf) in a row of a "
            "declared group; drop or impute such rows first")
    return np.asarray(vals, dtype=np.float64)


def _group_order_loop(codes: np.ndarray, starts: np.ndarray) -> np.ndarray:  # pragma: no cover
    """Stable counting sort: the rows with code ≥ 0, grouped by code, in row order inside a
    group (O(n); compiled by numba when available)."""
    pos = starts[:-1].copy()
    out = np.empty(starts[-1], dtype=np.int64)
    for i in range(codes.size):
        c = codes[i]
        if c >= 0:
            out[pos[c]] = i
            pos[c] += 1
    return out


# the compiled counting sort and partition pass (None without numba)
_compiled_order = jit_on_first_use(_group_order_loop)


def group_order(codes: np.ndarray, starts: np.ndarray, *, compiled: bool = True) -> np.ndarray:
    """Row indices of the declared groups, contiguous per group (key order) and in row order
    inside a group: what ``np.argsort(codes[codes >= 0], kind="stable")`` selects, in O(n)
    with numba (``compiled=False``: that argsort)."""
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    kernel = _compiled_order() if compiled else None
    if kernel is not None:
        return np.asarray(kernel(codes, np.ascontiguousarray(starts, dtype=np.int64)))
    kept = np.flatnonzero(codes >= 0)
    return kept[np.argsort(codes[kept], kind="stable")]


def _scatter_loop(codes: np.ndarray, x: np.ndarray, y: np.ndarray, starts: np.ndarray,
                  xs: np.ndarray, ys: np.ndarray) -> int:  # pragma: no cover - numba
    """The counting sort of :func:`_group_order_loop` moving x and y directly, and checking
    them in the declared rows only: returns 0, or 1/2 when x/y holds NaN or inf there."""
    pos = starts[:-1].copy()
    bad = 0
    for i in range(codes.size):
        c = codes[i]
        if c >= 0:
            p = pos[c]
            xi = x[i]
            yi = y[i]
            if not (abs(xi) < np.inf):
                bad = 1
            elif not (abs(yi) < np.inf) and bad == 0:
                bad = 2
            xs[p] = xi
            ys[p] = yi
            pos[c] = p + 1
    return bad


_compiled_scatter = jit_on_first_use(_scatter_loop)


def _scatter_two_pass_loop(codes: np.ndarray, x: np.ndarray, y: np.ndarray, starts: np.ndarray,
                           shift: int, xs: np.ndarray, ys: np.ndarray, tc: np.ndarray,
                           buf_x: np.ndarray, buf_y: np.ndarray) -> int:  # pragma: no cover
    """:func:`_scatter_loop` in two stable passes (the same output, faster on many groups):
    pass 1 moves each declared row (and its code) to its *bucket* -- the groups
    ``b·2^shift .. (b+1)·2^shift − 1``, a contiguous range of the output -- writing to a few
    dozen sequential streams instead of one random position per row; pass 2 moves each
    bucket's rows, copied to a scratch buffer, to their group's positions inside the bucket's
    range (which stays in cache).  Both passes keep row order, so every group's rows end in
    their original order, exactly as the one-pass counting sort puts them."""
    g = starts.size - 1
    nb = ((g - 1) >> shift) + 1
    bpos = np.empty(nb, dtype=np.int64)
    for b in range(nb):
        bpos[b] = starts[b << shift]
    bad = 0
    for i in range(codes.size):
        c = codes[i]
        if c >= 0:
            xi = x[i]
            yi = y[i]
            if not (abs(xi) < np.inf):
                bad = 1
            elif not (abs(yi) < np.inf) and bad == 0:
                bad = 2
            b = c >> shift
            p = bpos[b]
            tc[p] = c
            xs[p] = xi
            ys[p] = yi
            bpos[b] = p + 1
    pos = starts[:-1].copy()
    for b in range(nb):
        g0 = b << shift
        g1 = min(g0 + (1 << shift), g)
        s0 = starts[g0]
        m = starts[g1] - s0
        for j in range(m):
            buf_x[j] = xs[s0 + j]
            buf_y[j] = ys[s0 + j]
        for j in range(m):
            c = tc[s0 + j]
            p = pos[c]
            xs[p] = buf_x[j]
            ys[p] = buf_y[j]
            pos[c] = p + 1
    return bad


_compiled_scatter_two_pass = jit_on_first_use(_scatter_two_pass_loop)

#: :func:`partition_frame` scatters in two passes (:func:`_scatter_two_pass_loop`) from this
#: many declared rows and more than :data:`TWO_PASS_MIN_GROUPS` groups; buckets of 2^shift
#: groups, about :data:`TWO_PASS_BUCKETS` of them (measured best on 10^5 groups x 200 rows:
#: 1.5x faster than one pass; docs/scale.md)
TWO_PASS_MIN_ROWS = 1 << 20
TWO_PASS_MIN_GROUPS = 256
TWO_PASS_BUCKETS = 64


def _scatter(codes: np.ndarray, x: np.ndarray, y: np.ndarray, starts: np.ndarray,
             xs: np.ndarray, ys: np.ndarray, *, two_pass: bool | None = None) -> int:
    """Group the declared rows (codes >= 0) into ``xs``/``ys`` by key, in row order inside a
    group, checking x and y in those rows only (0, or 1/2 for a NaN/inf in x/y): one compiled
    pass, or two for large tables with many groups (the same output).  Needs numba."""
    g = starts.size - 1
    rows = int(starts[-1])
    if two_pass is None:
        two_pass = rows >= TWO_PASS_MIN_ROWS and g > TWO_PASS_MIN_GROUPS
    if not two_pass or g < 1:
        return int(_compiled_scatter()(codes, x, y, starts, xs, ys))
    shift = max(0, int(math.ceil(math.log2(g / TWO_PASS_BUCKETS))))
    ends = starts[np.minimum(np.arange(1, ((g - 1) >> shift) + 2) << shift, g)]
    biggest = int(np.max(np.diff(np.concatenate(([0], ends))))) if ends.size else 0
    tc = np.empty(rows, dtype=np.int32 if g < 2**31 else np.int64)
    return int(_compiled_scatter_two_pass()(codes, x, y, starts, shift, xs, ys, tc,
                                            np.empty(biggest), np.empty(biggest)))


def _plain_float(series: pd.Series) -> np.ndarray | None:
    """The column as float64 without a copy or an NA mask when it is a plain NumPy numeric or
    bool column (None otherwise: the general path of :func:`declared_values`)."""
    dt = series.dtype
    if isinstance(dt, np.dtype) and dt.kind in "fiub" and dt.kind != "c":
        return series.to_numpy(dtype=np.float64, copy=False)
    return None


def partition_frame(df: pd.DataFrame, spec: GroupSpec) -> Partition:
    """One stable grouping of the table's rows by key; rows whose key is not declared (or
    missing) are dropped.  Rows are assigned to keys by :func:`dpreg.grouped._keys.row_codes`
    (the canonical-key rule), so a row belongs to at most one output row; x and y are read
    (and validated) in those rows only."""
    codes = row_codes(df[spec.by], spec.keys, spec.key_kind)
    counts = np.bincount(codes + 1, minlength=len(spec.keys) + 1)[1:]
    starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    xv, yv = _plain_float(df[spec.x]), _plain_float(df[spec.y])
    kernel = _compiled_scatter() if xv is not None and yv is not None else None
    if kernel is not None:  # one pass: group, move and check the declared rows (numba)
        xs, ys = np.empty(int(starts[-1])), np.empty(int(starts[-1]))
        bad = _scatter(np.ascontiguousarray(codes, dtype=np.int64), np.ascontiguousarray(xv),
                       np.ascontiguousarray(yv), starts, xs, ys)
        if bad:
            column = spec.x if bad == 1 else spec.y
            raise InvalidInputError(
                f"column {column!r} has a missing or non-finite value (NaN or inf) in a row of "
                "a declared group; drop or impute such rows first")
        return Partition(xs, ys, starts)
    rows = group_order(codes, starts)
    xs = declared_values(df[spec.x], rows, spec.x)
    ys = declared_values(df[spec.y], rows, spec.y)
    return Partition(np.ascontiguousarray(xs), np.ascontiguousarray(ys), starts)


def group_column(keys: list[Any]) -> Any:
    """The output's ``group`` column: the canonical keys, with pandas' dtype unless that would
    change a key (ints that a float64 column cannot hold exactly, e.g. ``2**53 + 1`` next to
    ``2.5``, keep an object column, so two keys never print as one)."""
    if not keys:
        return list(keys)
    col = pd.Series(keys)
    if col.dtype.kind == "f" and any(isinstance(k, int) and float(k) != k for k in keys):
        return pd.Series(keys, dtype=object)
    return col


def assemble(spec: GroupSpec, n: np.ndarray, intercept: np.ndarray, slope: np.ndarray,
             failed: np.ndarray, reason: list[str], preds: dict[float, np.ndarray]) -> pd.DataFrame:
    """The output table: one row per key, the same columns and dtypes as the reference loop
    (``pred_<x>`` columns only when some group released a line), plus ``privacy``."""
    data: dict[str, Any] = {
        "group": group_column(spec.keys),
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
