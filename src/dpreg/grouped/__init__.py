"""Per-group (small-area) DP regressions: ``dpreg.fit_by_group`` and ``dpreg fit-groups``.

Privacy: groups are disjoint sets of records, so fitting each group with budget ε is ε-DP for
the whole table by parallel composition (a record belongs to one group).  Every group's
release is calibrated for **replace-one neighbours with n public** -- neighbouring tables
differ in the values of one record, which stays in its group -- for every method (AdaSSP,
BoostedAdaSSP and CovarianceOLS get ``neighbouring="replace-one"``; a ``neighbouring=`` option
asking for add/remove is refused), so each group's row count is released as ``n`` (groups with
fewer rows than the method needs get a ⊥ row, a decision on public n).

Group keys (``groups=``, required):

* the public list of keys (recommended): every listed key gets an output row, also keys with
  no rows (n = 0, ⊥ "no rows in this group"), so the output's shape does not reveal which
  groups are present; rows whose key is not listed, or is missing, are in no release and are
  never read;
* ``"from-data"``: the keys found in the data -- the key set is then NOT protected (the table
  reveals which groups occur), and the privacy statement says so.

Keys are matched by one rule on every backend (:mod:`dpreg.grouped._keys`): numbers by exact
value (``1``, ``1.0``, ``np.int64(1)`` are one key; ``-0.0`` is ``0``), bool and str as their
own kinds (``True`` is not ``1``, ``"1"`` is not ``1``); the declared keys must be of one kind,
the key column's, and pairwise different under the rule -- otherwise an InvalidInputError, so
no records are ever released twice.

Randomness: with a seed, each group gets its own stream derived from its key
(``SeedSequence(root_entropy, spawn_key=sha256(repr(canonical key)))``: ``3``, ``3.0`` and
``np.int64(3)`` -- one group -- get one stream), so a group's release does not depend on how
the table is partitioned or ordered, nor on the backend.  Without a seed every group is
released in secure mode (fresh CSPRNG generator, exact discrete noise;
:mod:`dpreg.mechanisms.secure`).

Backends (``backend=``):

* ``"local"`` (default) -- :mod:`dpreg.grouped.local`: vectorised over groups; with a seed
  the releases are identical to the reference loop;
* ``"reference"`` -- :mod:`dpreg.grouped.reference`: one ``fit_arrays`` call per group;
* ``"spark"`` -- :mod:`dpreg.grouped.spark`: pyspark (the ``[spark]`` extra); sufficient
  statistics with Spark's native aggregations, the other methods via ``applyInPandas``.

See docs/scale.md.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpreg.exceptions import InvalidInputError
from dpreg.grouped._common import GroupSpec, group_seed_sequence, make_spec
from dpreg.grouped._keys import FROM_DATA, column_kind, keys_in_column, parse_key_lines
from dpreg.privacy.notices import public_function

__all__ = ["fit_by_group", "group_seed_sequence", "parse_key_list", "BACKENDS", "FROM_DATA"]

BACKENDS = ("local", "reference", "spark")


def parse_key_list(lines: Sequence[str], column: Any = None) -> list[Any]:
    """Public group keys from text lines (one key per line; leading/trailing whitespace is not
    part of a key; blank lines are skipped), read as the kind of the key column: numbers for a
    numeric column (a CSV column of integers has int keys, so the line "17" must become 17 to
    match), true/false for a bool column, the text otherwise.  Used by ``dpreg fit-groups
    --groups-file``; duplicates (``1``, ``01``, ``1.0`` in a numeric column; the same text
    twice) are refused by :func:`fit_by_group`."""
    kind = "str" if column is None else column_kind(pd.Series(column).dtype)
    return parse_key_lines(lines, "str" if kind == "any" else kind)


def table_budget(ledger: Any, spec: GroupSpec) -> Any:
    """What a per-group table charges ``ledger``: ONE group's release budget (parallel
    composition over disjoint groups), in the definition a single fit of the method charges
    (:func:`dpreg.api.charged_budget`); None without a ledger.  Public inputs only."""
    if ledger is None:
        return None
    from dpreg.privacy import Ledger

    if not isinstance(ledger, Ledger):
        raise InvalidInputError(f"ledger must be a dpreg.Ledger or None; got {ledger!r}")
    from dpreg.api import charged_budget
    from dpreg.grouped._common import release_options

    return charged_budget(spec.method, epsilon=spec.epsilon, delta=spec.delta,
                          options=release_options(spec))


def _preflight(spec: GroupSpec, counts: np.ndarray) -> None:
    """Run the method once on PUBLIC dummy data of the smallest fitted group size (n is public
    under replace-one; the result is discarded), so that an option value only the method checks
    is rejected before the table is charged rather than after."""
    import warnings

    from dpreg.api import fit_arrays
    from dpreg.grouped._common import release_options

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
                   y_name=spec.y, delta=spec.delta, random_state=g, **release_options(spec))


def _check_calibrated_request(spec: GroupSpec, counts: np.ndarray) -> None:
    """An explicit ``ci_method="calibrated"`` (Theil-Sen) must be offered in every group that
    will be fitted: decided from the groups' public sizes by the single fit's own rule
    (:func:`dpreg.simple.ci.resolve_ci_method`), so that a refusal happens before the table is
    charged or any group drawn, with or without a ledger (``"auto"`` instead gives the tight
    interval in the groups below the rule)."""
    opts = spec.options
    if opts.get("ci_alpha") is None or opts.get("ci_method") != "calibrated":
        return
    from dpreg.simple.ci import resolve_ci_method
    from dpreg.simple.line_with_ci import line_ci_split

    sizes = [int(c) for c in counts if int(c) >= max(spec.min_rows, 2)]
    if sizes and math.isfinite(spec.epsilon):
        resolve_ci_method("calibrated", n=min(sizes), pairs=opts.get("pairs", "all"),
                          epsilon=line_ci_split(spec.epsilon)[1].epsilon)


def _check_group_sizes(spec: GroupSpec, counts: np.ndarray) -> None:
    """A method's upper limit on n (``check_rows`` of its spec, e.g. theil-sen-smooth with all
    pairs), checked on the largest group that will be fitted -- n is public under replace-one
    -- before the table is charged or any group drawn."""
    from dpreg import methods

    fitted = counts[counts >= max(spec.min_rows, 1)]
    if not fitted.size:
        return
    n = int(fitted.max())
    try:
        methods.get(spec.method).check_rows(n, spec.options)
    except InvalidInputError as exc:
        raise InvalidInputError(f"fit_by_group: the largest group has {n:,} rows; {exc}") \
            from None


def charge_table(ledger: Any, spec: GroupSpec, budget: Any, counts: np.ndarray) -> None:
    """Charge the table's budget once, before any group is released (all or nothing): a
    :class:`~dpreg.exceptions.BudgetExceededError` here means nothing is released.  Stated
    under replace-one neighbours with n public, as every per-group release is.  A group too
    large for the method (:func:`_check_group_sizes`) and an interval request a group cannot
    be given (:func:`_check_calibrated_request`) are refused first."""
    _check_group_sizes(spec, counts)
    _check_calibrated_request(spec, counts)
    if ledger is None:
        return
    from dpreg.privacy import Neighbouring, charge

    _preflight(spec, counts)
    charge(ledger, budget, f"fit_by_group {spec.method}: {len(spec.keys)} disjoint groups "
           "(parallel composition)", Neighbouring.REPLACE_ONE)


def _with_codebook(df: Any, by: str, bounds: Any, groups: Any, codebook: Any
                   ) -> tuple[Any, Any]:
    """Bounds and group keys of a per-group run, with a codebook's declarations merged in
    (explicit ``bounds``/``groups`` win); bounds keys must be columns of the data."""
    from dpreg._validation import check_known_keys
    from dpreg.codebook import merge_bounds, resolve_codebook

    names = [str(c) for c in getattr(df, "columns", [])]
    cb = resolve_codebook(codebook, names or None)
    bounds = merge_bounds(cb, bounds)
    if bounds is None:
        raise InvalidInputError("bounds are required: pass bounds={x: (lo, hi), y: (lo, hi)} "
                                "with public limits, or codebook=PATH (docs/codebook.md)")
    if isinstance(bounds, Mapping) and names:
        check_known_keys(bounds, names)
    if cb is not None:
        if groups is None and cb.group_keys is not None and cb.group_by in (None, by):
            groups = list(cb.group_keys)
            if isinstance(df, pd.DataFrame) and by in df.columns:  # as the key column's kind
                groups = parse_key_list([str(k) for k in groups], df[by].iloc[:0])
        if isinstance(df, pd.DataFrame):
            cb.check_n(len(df), True, "fit_by_group (replace-one neighbours)")
    return bounds, groups


def _y_levels_warned(method: str, y: str, options: dict[str, Any], codebook: Any, df: Any
                     ) -> dict[str, Any]:
    """The Theil-Sen public rule for a per-group table: ``y_levels`` (given, or the codebook's
    numeric levels of ``y``) warns once for the table (``TiedSlopesWarning``) before anything
    is charged, and is then dropped from the options (it changes nothing else); refused,
    like any option a method does not use, for the other methods."""
    if "y_levels" not in options and codebook is None:
        return options
    from dpreg._dispatch import spec_of
    from dpreg.api import codebook_y_levels
    from dpreg.codebook import resolve_codebook
    from dpreg.methods.theil_sen import warn_y_levels

    spec = spec_of(method)
    out = dict(options)
    if codebook is not None:
        names = [str(c) for c in getattr(df, "columns", [])]
        out = codebook_y_levels(resolve_codebook(codebook, names or None), y, spec, out)
    if "y_levels" not in out:
        return out
    out.update(spec.check_options({"y_levels": out["y_levels"]}))  # refused where unused
    warn_y_levels(spec.name, out)
    return out


@public_function(n_public=lambda table: None)  # weak seed, δ >= 1e-3: once per table
def fit_by_group(
    df: Any, by: str, x: str, y: str, *, method: str, epsilon: float,
    bounds: Mapping[str, Any] | None = None, delta: float | None = None,
    groups: Sequence[Any] | str | None = None,
    backend: str = "local", random_state: Any = None, progress: bool = False,
    workers: int | None = None, spark: Any = None, ledger: Any = None, codebook: Any = None,
    **options: Any,
) -> pd.DataFrame:
    """Fit ``y ~ x`` with ``method`` in every group; one output row per group key.

    Parameters
    ----------
    df:
        pandas DataFrame (any backend), a pyspark DataFrame (``backend="spark"``), or a path to
        a Parquet/CSV file (or a directory of them): with ``backend="spark"`` the executors
        read it (``spark.read``, nothing passes through the driver); with the local backends
        only the ``by``, ``x`` and ``y`` columns are read, through Arrow.  A CSV must start
        with a header line, and x and y must hold numbers in every part file (the rules of
        :mod:`dpreg._source`, checked before anything is read or charged).
    by, x, y:
        Group key column, regressor and response.
    method, epsilon, delta, bounds, **options:
        As for :func:`dpreg.api.fit_arrays`; ``bounds`` holds public (lo, hi) for x and y.
        ε (and δ) is spent **per group**; the table as a whole has the same guarantee by
        parallel composition.  Every group is released under replace-one neighbours with n
        public (a ``neighbouring=`` option for another relation is refused).
    groups:
        Required.  The public list of group keys (see the module doc for how keys are
        matched), or ``"from-data"`` to take the keys found in the data -- the key set is then
        not protected.
    backend:
        ``"local"`` (vectorised), ``"reference"`` (per-group loop) or ``"spark"``.
    random_state:
        None (secure mode, a real release), a non-negative int or a SeedSequence (per-key
        reproducible streams: identical releases on every backend).
    progress:
        Show a transient bar over the groups (per-group loop) or a spinner (vectorised) on
        stderr; default False (the library is silent; the CLI turns it on on a terminal).
        It shows the number of declared keys and the elapsed time only.  The bars need rich
        (the ``[cli]`` extra): without it ``progress=True`` raises
        :class:`~dpreg.exceptions.MissingExtraError` before anything is read or charged.
    workers:
        Workers for the per-group parts of the local backend (default min(2, CPUs)): the
        per-group Theil-Sen releases run in that many forked worker processes on Linux when
        at least 200 groups are fitted (threads otherwise), and DP-GD's per-round gradient
        sums are split between that many threads on tables of at least 200,000 rows.  Every
        group draws from its own stream and its sums are computed alone, so the table is the
        same for any number of workers (bit for bit when seeded).
    spark:
        A ``SparkSession`` for ``backend="spark"`` (default: the active session, or a new
        ``local[2]`` one).
    ledger:
        Optional :class:`~dpreg.Ledger`, charged ONCE for the whole table -- one group's
        budget, by parallel composition over disjoint groups, in the definition a single fit of
        ``method`` charges, stated under replace-one neighbours -- after validation and before
        any group is released.  If it does not fit, :class:`~dpreg.BudgetExceededError` is
        raised and nothing is released.  The per-group fits charge nothing.  Default: the
        session's default ledger (:func:`dpreg.set_default_ledger`), if one is set.
    codebook:
        A codebook (TOML path or :class:`dpreg.codebook.Codebook`; docs/codebook.md): bounds
        for x and y (``bounds`` given here extend it and win) and, when ``groups`` is not
        given and the codebook's ``[groups] by`` is ``by``, the public key list.  Its public n
        is checked against the number of rows of a pandas DataFrame (n is public under
        replace-one; a mismatch is refused without revealing n).

    Notes
    -----
    Returns a DataFrame with columns ``group`` (the key), ``n``, ``intercept``, ``slope``,
    ``failed``, ``reason``, ``pred_<x>`` (predictions at the evaluation points, when the method
    releases them and some group did not fail) and ``privacy`` (the statement, also in
    ``result.attrs["privacy"]``).

    ``ci_alpha=ALPHA`` (CLI ``--ci``) adds per-group (1 − α) intervals, computed by the single
    fit's own interval functions, for the methods in
    :func:`dpreg.grouped._common.interval_methods` (others refuse it before anything is
    charged): ``lower_slope``, ``upper_slope`` and ``informative_slope`` (False when an end of
    the Theil-Sen interval is the end of the slope search range, or noisy-stats flags its
    interval unreliable; NA in ⊥ rows) and, for Theil-Sen, ``ci_point_mass``
    (:func:`dpreg.simple.ci.point_mass_flag` of the row's interval and the group's public
    widening θ: the slopes pile up at exactly 0, as with a response of few values; NA in ⊥
    rows).  When any group is flagged the table gives ONE
    :class:`~dpreg.exceptions.TiedSlopesWarning` stating how many (a count of released flags:
    post-processing; the groups' own fits do not warn).  Theil-Sen spends ε/2 of each
    group's ε on the Sarathy–Vadhan slope interval (slope only; the line is released from the other ε/2, so
    the interval need not contain the released slope).  noisy-stats releases with
    ``inference=True`` and its DP-aware bootstrap also gives ``lower_pred_<x>`` /
    ``upper_pred_<x>`` (post-processing, no extra budget).  The split is stated in both
    privacy texts.

    Option defaults are the method's spec's, as in :func:`dpreg.regress`, except where the
    spec declares a per-group default with its reason (``group_defaults``: noisy-stats and
    AdaSSP release the plain line, ``inference=False``, unless ``ci_alpha`` asks for
    intervals); an option given explicitly is honoured.  A ⊥ group is a row with ``failed``
    True and its ``reason`` (docs/architecture.md, "Failure (⊥) policy").
    """
    if backend not in BACKENDS:
        raise InvalidInputError(f"backend must be one of {list(BACKENDS)}; got {backend!r}")
    from dpreg._progress import check_bars

    check_bars(bool(progress))  # progress=True draws with rich: the [cli] extra, checked first
    from dpreg._validation import check_epsilon

    epsilon = check_epsilon(epsilon)  # a str/None/NaN ε would otherwise fail deep inside (fuzz)
    from dpreg._dispatch import check_option_keys

    check_option_keys(options)  # x_names=, fit_intercept=, ...: set per group, not options
    bounds, groups = _with_codebook(df, by, bounds, groups, codebook)
    options = _y_levels_warned(method, y, options, codebook, df)
    if ledger is not None:
        from dpreg.privacy import Ledger

        if not isinstance(ledger, Ledger):
            raise InvalidInputError(f"ledger must be a dpreg.Ledger or None; got {ledger!r}")
        from dpreg._dispatch import check_ledger_accepts, prepare_options, spec_of

        # a table the ledger could never account is refused before any file or group is read
        method_spec = spec_of(method)
        check_ledger_accepts(method_spec, ledger, epsilon=epsilon, delta=delta,
                             options=prepare_options(method_spec, options, n_features=1)[0],
                             n_features=1)
    from dpreg._source import FileSource, is_spark_frame

    if not is_spark_frame(df) and isinstance(df, (str, os.PathLike)):
        source = FileSource(df)
        # x and y hold numbers in every part file (the rule of the releases from a file), for
        # every backend alike; names and types only, no value read
        source.check_columns(list(dict.fromkeys([x, y])))
        if backend == "spark":  # the executors read the file
            from dpreg.grouped.spark import spark_session

            df = source.spark_frame(spark_session(spark))
        else:  # only the key, x and y columns are read (Arrow -> pandas)
            df = source.to_pandas(list(dict.fromkeys([by, x, y])))
    if backend == "spark":
        from dpreg.grouped.spark import fit_spark

        def before_release(spec: GroupSpec, counts: np.ndarray) -> None:
            charge_table(ledger, spec, table_budget(ledger, spec), counts)

        return fit_spark(df, by, x, y, method=method, epsilon=epsilon, bounds=bounds, delta=delta,
                         groups=groups, random_state=random_state, spark=spark, options=options,
                         before_release=before_release)
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"df must be a pandas DataFrame; got {type(df).__name__}")
    spec = make_spec(df.columns, lambda: keys_in_column(df[by]), by, x, y,
                     method=method, epsilon=epsilon, bounds=bounds, delta=delta, groups=groups,
                     random_state=random_state, options=options,
                     key_kind=lambda: column_kind(df[by].dtype, by))
    from dpreg.grouped import local
    from dpreg.grouped._common import partition_frame
    from dpreg.grouped.reference import fit_reference

    # rows -> keys by the canonical-key rule; x and y read (and validated) in declared groups only
    part = partition_frame(df, spec)
    # one charge for the whole table, after every check and before any group is released
    charge_table(ledger, spec, table_budget(ledger, spec), part.counts)
    if backend == "reference":
        return fit_reference(df, spec, progress=progress, part=part)
    if not local.supported(spec):
        from dpreg.grouped.reference import fit_from_table_plan, table_plan

        plan = table_plan(spec)
        if plan is not None:  # one public plan for the table, every group released from it
            out = fit_from_table_plan(df, spec, plan, progress=progress, part=part)
            out.attrs["backend"] = "local (one plan per table)"
            return out
        out = fit_reference(df, spec, progress=progress, part=part)
        out.attrs["backend"] = "reference (method/options not vectorised)"
        return out
    from dpreg._progress import spinner

    with spinner(f"fitting {len(spec.keys)} groups (vectorised)", enabled=progress):
        out = local.fit_local(spec, part, workers=workers)
    out.attrs["backend"] = "local"
    return out
