"""The SSCP release: :func:`release_sscp` runs Analyze Gauss on the chosen columns and returns an
:class:`SSCPRelease` (the DP output with its metadata; see :mod:`dpreg.covariance`).

Guarantee: (ε, δ)-DP under add/remove (default) or replace-one neighbours (n public), for the
noisy [0, 1]-scaled matrix ``noisy_scaled``; everything else (PSD repair, original units,
regressions, accuracy) is post-processing of it.  The sensitivity and σ are
:mod:`dpreg.covariance.calibration`; the ledger is charged after all validation and before the
noise is drawn (by :func:`dpreg.multivariate.noisy_symmetric`, i.e. :mod:`dpreg.mechanisms`).
The steps: :func:`plan_sscp` -> :func:`sscp_statistics` -> charge -> :func:`release_sscp_matrix`
-> :func:`sscp_release_result`.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpreg._integrity import Integrity, check_hex_digest, resolve_key
from dpreg._release_file import read_json, strict_json
from dpreg._source import ArraySource, DataSource, is_external, open_source
from dpreg._spec import Release, ReleasePlan
from dpreg._validation import (
    DEPRECATED,
    check_array,
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    check_rng,
    fmt,
    is_seeded,
    renamed_parameters,
)
from dpreg._version import __version__
from dpreg.covariance.calibration import (
    INTERCEPT,
    MECHANISM,
    SOURCE,
    _noise_var_factors,
    _quantile,
    analyze_gauss_sigma,
    repair_psd,
    resolve_bounds,
    upscale,
)
from dpreg.covariance.io import (
    check_derived_matrix,
    release_to_dict,
    seal_release_dict,
    validate_release_dict,
    verify_release_dict,
)
from dpreg.covariance.sweep import regress_release
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import RegressionResults
from dpreg.multivariate import noisy_symmetric
from dpreg.privacy.budgets import ApproxDP
from dpreg.privacy.ledger import charge
from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement, check_neighbouring
from dpreg.privacy.notices import public_function, warn_if_not_private

__all__ = ["release_sscp", "SSCPRelease", "sscp_statistics", "ScaledSSCP", "plan_sscp",
           "release_sscp_matrix", "sscp_release_result"]


class SSCPRelease:
    """A released DP SSCP matrix with its metadata.

    Attributes
    ----------
    columns:
        Released column names (the intercept column is added in front as ``"intercept"``).
    bounds:
        Public (lo, hi) per column used for clamping/scaling.
    noisy_scaled:
        The DP output: the noisy [0, 1]-scaled matrix D'ᵀD' + E, before repair (numpy array).
    matrix:
        Repaired, upscaled matrix in original units (DataFrame), or ``None`` when ⊥.
    privacy:
        The :class:`~dpreg.privacy.PrivacyStatement`.
    metadata:
        ε, δ, σ, sensitivity, neighbouring, calibration, noisy n (Ĉ₀₀), public n (replace-one
        only), PSD repair record, dpreg version, creation time.
    integrity:
        For a release read from a file (:meth:`load`, :meth:`from_dict`), the outcome of its
        integrity check (:class:`~dpreg.privacy.Integrity`: ``status`` ``"verified-hmac"``,
        ``"verified-pinned"``, ``"verified-digest"``, ``"unverified"`` or ``"no-record"``);
        carried into every regression on it (``extra["release_integrity"]`` and the summary).
        ``None`` for a release made in this session.
    """

    def __init__(self, *, columns: Sequence[str], bounds: Sequence[tuple[float, float]],
                 noisy_scaled: np.ndarray, privacy: PrivacyStatement, metadata: dict[str, Any],
                 psd_tol: float = 1e-10) -> None:
        self.columns = [str(c) for c in columns]
        self.bounds = [(float(lo), float(hi)) for lo, hi in bounds]
        self.noisy_scaled = np.asarray(noisy_scaled, dtype=float)
        self.privacy = privacy
        self.metadata = dict(metadata)
        names = [INTERCEPT] + self.columns
        repaired, n_fixed = repair_psd(self.noisy_scaled, psd_tol)
        self.metadata.update(psd_tol=psd_tol, psd_repaired=bool(n_fixed),
                             eigenvalues_replaced=n_fixed, failed=repaired is None)
        if repaired is None:
            self.metadata["reason"] = ("the noisy SSCP matrix has no positive eigenvalue: PSD "
                                       "repair is impossible (⊥)")
            self._scaled_repaired = None
            self.matrix = None
        else:
            self._scaled_repaired = repaired
            self.matrix = pd.DataFrame(upscale(repaired, self.bounds), index=names,
                                       columns=names)
        self.raw = pd.DataFrame(upscale(self.noisy_scaled, self.bounds), index=names,
                                columns=names)
        self.integrity: Integrity | None = None

    # ------------------------------------------------------------------ properties
    @property
    def failed(self) -> bool:
        return bool(self.metadata.get("failed", False))

    @property
    def reason(self) -> str:
        return str(self.metadata.get("reason", ""))

    @property
    def n_noisy(self) -> float:
        """Ĉ₀₀: the noisy row count."""
        return float(self.noisy_scaled[0, 0])

    @property
    def n(self) -> float:
        """The n used for degrees of freedom: public n (replace-one) or the noisy count."""
        public = self.metadata.get("n_public")
        return float(public) if public is not None else self.n_noisy

    @property
    def sigma(self) -> float:
        """Noise sd on each upper-triangle entry of the scaled matrix."""
        return float(self.metadata["sigma"])

    def __repr__(self) -> str:
        status = "FAILED (⊥)" if self.failed else f"n≈{self.n_noisy:.1f}"
        return (f"<SSCPRelease {len(self.columns)} columns {self.columns}; {status}; "
                f"{self.privacy.budget}, {self.privacy.neighbouring}>")

    # ------------------------------------------------------------------ accuracy
    def accuracy(self, beta: float = 0.05, *, simultaneous: bool = False,
                 normalize: bool = False) -> pd.DataFrame:
        """Half-widths of (1 − β) noise intervals per entry of :attr:`matrix` (original units;
        divided by n with ``normalize``).  Post-processing of public quantities."""
        beta = check_probability(beta, "beta")
        names = [INTERCEPT] + self.columns
        p = len(names)
        k = p * (p + 1) // 2 if simultaneous else 1
        sd = self.sigma * np.sqrt(_noise_var_factors(self.bounds)) * _quantile(beta, k)
        out = pd.DataFrame(sd, index=names, columns=names)
        return out / self.n if normalize else out

    # ------------------------------------------------------------------ regression
    @renamed_parameters(rng="random_state")
    def regress(self, formula: str, *, se: str = "dp", n_sim: int = 2000,
                kind: str = "percentile", random_state: Any = None,
                rng: Any = DEPRECATED) -> RegressionResults:
        """OLS ``formula`` (e.g. ``"y ~ x1 + x2"``, ``"y ~ x1 - 1"``) from the released matrix.

        Only linear terms of released columns and the intercept are allowed (``- 1`` or
        ``+ 0`` drops the intercept).  Post-processing: no privacy budget is used.  Returns a
        :class:`~dpreg.inference.RegressionResults` with coefficients, standard errors, t and
        two-sided p-values on n − p degrees of freedom, and ``extra`` holding RSS, s², R² and
        adjusted R².

        ``se="dp"`` (default; ``"noise-aware"`` is an alias): DP-aware standard errors
        (sampling variance plus the delta-method variance of the privacy noise) and
        ``conf_int`` from a parametric bootstrap of the release (Ferrando, Wang & Sheldon
        2022; ``n_sim`` replicates, construction ``kind`` = ``"percentile"`` (default),
        ``"studentized"`` or ``"basic"``; ``random_state`` seeds the simulation -- ``rng`` is
        its deprecated spelling, kept for one release); see
        :mod:`dpreg.inference.dpci.ssp`.  ``se="plugin"`` treats the noisy matrix as exact --
        those standard errors ignore the privacy noise and are labelled so
        (``extra["bse_plugin_ignores_noise"]`` holds them in the DP-aware mode too).
        """
        return regress_release(self, formula, se=se, n_sim=n_sim, kind=kind, rng=random_state)

    # ------------------------------------------------------------------ persistence
    def to_dict(self, *, key: Any = None) -> dict[str, Any]:
        """The release file's content (format version :data:`~dpreg.covariance.io.FORMAT_VERSION`):
        strict JSON values only -- an infinite ε is ``"inf"``, a matrix entry that overflows in
        original units is ``null`` (:func:`dpreg.covariance.io.release_to_dict`) -- sealed with
        its integrity record (:func:`dpreg.covariance.io.seal_release_dict`): the SHA-256 of
        the canonical form of the rest, and with ``key`` (a key file path or the 32 key bytes;
        ``dpreg key init``) an HMAC-SHA256 and the key's id (never the key)."""
        return seal_release_dict(release_to_dict(self), resolve_key(key))

    def save(self, path: str | Path, *, key: Any = None) -> Path:
        """Write the release (matrix, bounds, privacy statement, metadata and the integrity
        record of :meth:`to_dict`; signed with ``key`` if given) as strict JSON."""
        doc = self.to_dict(key=key)
        out = Path(path)
        out.write_text(strict_json(doc))
        return out

    @classmethod
    def from_dict(cls, data: Any, *, non_finite_literals: bool = False, key: Any = None,
                  verify: bool = True, expect_digest: str | None = None) -> SSCPRelease:
        """A release from a parsed release file: its integrity record checked
        (:func:`~dpreg.covariance.io.verify_release_dict`; see :meth:`load` for ``key``,
        ``verify`` and ``expect_digest``), then validated by
        :func:`~dpreg.covariance.io.validate_release_dict` (one-line
        :class:`~dpreg.exceptions.InvalidInputError` naming the field otherwise)."""
        body, integrity = verify_release_dict(
            data, key=resolve_key(key), expect_digest=check_hex_digest(expect_digest),
            verify=_check_verify(verify))
        kwargs, stored = validate_release_dict(body, non_finite_literals=non_finite_literals)
        rel = cls(**kwargs)
        check_derived_matrix(rel, stored)
        rel.integrity = integrity
        return rel

    @classmethod
    def load(cls, path: str | Path, *, key: Any = None, verify: bool = True,
             expect_digest: str | None = None) -> SSCPRelease:
        """Read a release written by :meth:`save` (format versions 1, 2 and 3).

        First the integrity record (version 3): the file must not have been altered since it
        was written -- its SHA-256 digest over the canonical form of the content must match;
        with ``key`` (the key file it was signed with, or the 32 key bytes) its HMAC-SHA256
        must match too (a file without a MAC is then refused); with ``expect_digest`` (64 hex
        digits obtained out of band, e.g. published by the curator) the content's digest must
        equal it.  A failure raises :class:`~dpreg.exceptions.ReleaseIntegrityError`;
        ``verify=False`` reads the file anyway and marks it UNVERIFIED.  Files of earlier dpreg
        versions (1, 2) have no record: they are read with ``integrity.status ==
        "no-record"``.  A signed file read without its key is ``"unverified"`` (its digest is
        still checked).  The outcome is :attr:`integrity`, and every regression on the
        release carries it.

        Then the content: the file is size- and depth-checked before parsing, must be strict
        UTF-8 JSON (version 1 files may hold ``Infinity`` for ε = ∞) and is validated field by
        field and for internal consistency (σ against ε, δ, the sensitivity and the
        neighbouring relation; bounds; matrix shape and symmetry; n).  Nothing in it is
        evaluated.
        """
        the_key = resolve_key(key)
        want = check_hex_digest(expect_digest)
        doc, non_finite = read_json(path, what="release file")
        try:
            return cls.from_dict(doc, non_finite_literals=non_finite, key=the_key,
                                 verify=verify, expect_digest=want)
        except InvalidInputError as exc:
            raise type(exc)(f"{path}: {exc}") from None


def _check_verify(verify: Any) -> bool:
    if not isinstance(verify, bool):
        from dpreg.exceptions import InvalidParameterError

        raise InvalidParameterError(f"verify must be True or False; got {fmt(verify)}")
    return verify


def _check_columns(columns: Any) -> list[str]:
    if columns is None or isinstance(columns, (str, bytes)) or not isinstance(columns, Sequence):
        raise InvalidInputError(
            f"columns must be a non-empty list of column names; got {fmt(columns)}"
        )
    cols = [str(c) for c in columns]
    if not cols:
        raise InvalidInputError("columns must be a non-empty list of column names; got []")
    if len(set(cols)) != len(cols):
        raise InvalidInputError(f"columns must be distinct; got {cols}")
    if INTERCEPT in cols:
        raise InvalidInputError(
            f"columns must not include {INTERCEPT!r}: the intercept column is added "
            "automatically"
        )
    return cols


def _extract(data: Any, columns: Any) -> tuple[DataSource, list[str], bool]:
    """(source, column names, checked): a file or Spark source, or the in-memory data as an
    :class:`~dpreg._source.ArraySource` (validated here: ``checked``)."""
    cols = _check_columns(columns)
    if isinstance(data, DataSource) or is_external(data):
        source = open_source(data)
        source.check_columns(cols)  # names (and a file's column types) only: no value read
        return source, cols, bool(getattr(source, "validated", False))
    if isinstance(data, pd.DataFrame):
        missing = [c for c in cols if c not in data.columns]
        if missing:
            raise InvalidInputError(f"columns not found in data: {missing}; data has "
                                    f"{[str(c) for c in data.columns]}")
        arr = check_array(data[cols], "data", ndim=2)
    elif isinstance(data, Mapping):
        missing = [c for c in cols if c not in data]
        if missing:
            raise InvalidInputError(f"columns not found in data: {missing}")
        arr = check_array(np.column_stack([np.asarray(data[c]) for c in cols]), "data", ndim=2)
    else:
        arr = check_array(data, "data", ndim=2)
        if arr.shape[1] != len(cols):
            raise InvalidInputError(
                f"columns must name every column of the array data ({arr.shape[1]}); got "
                f"{len(cols)} names"
            )
    return ArraySource(arr, cols), cols, True


class ScaledSSCP:
    """The statistics step of the release, one chunk at a time: for rows x (m×d, raw values)
    the (d+1)×(d+1) matrix D'ᵀD' of D' = [1, (clip(x, lo, hi) − lo)/(hi − lo)].

    A sum over records, so Σ over chunks is the SSCP of the whole table (any chunking, up to
    the floating-point summation order).  Clipping and scaling use only the PUBLIC bounds.  One
    work buffer of the chunk's size is reused (no copy of the size of the data); the object
    pickles without it (it runs on Spark executors).
    """

    def __init__(self, bounds: Sequence[tuple[float, float]]) -> None:
        self.lo = np.array([b[0] for b in bounds], dtype=float)
        self.hi = np.array([b[1] for b in bounds], dtype=float)
        self.width = self.hi - self.lo
        self._buf: np.ndarray | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_buf": None}

    def __call__(self, chunk: np.ndarray) -> np.ndarray:
        return self.blocks([chunk])

    def blocks(self, parts: Sequence[np.ndarray]) -> np.ndarray:
        """The same for a chunk given as column blocks side by side (1-D or 2-D row slices of
        equal length), written into the work buffer without stacking them first.  The buffer
        holds D'ᵀ (one row per column), so that the clamping, centring and scaling run on
        contiguous memory, and the product is D'ᵀ(D'ᵀ)ᵀ."""
        m = parts[0].shape[0]
        d = self.lo.size
        if self._buf is None or self._buf.shape[1] < m:
            self._buf = np.empty((d + 1, m))
            self._buf[0] = 1.0
        DT = self._buf[:, :m]
        j = 1
        for part in parts:
            k = 1 if part.ndim == 1 else part.shape[1]
            sl = slice(j - 1, j - 1 + k)
            np.clip(part.reshape(m, k).T, self.lo[sl, None], self.hi[sl, None],
                    out=DT[j:j + k])
            j += k
        v = DT[1:]
        v -= self.lo[:, None]
        v /= self.width[:, None]
        return DT @ DT.T


def sscp_statistics(source: DataSource, columns: Sequence[str],
                    bounds: Sequence[tuple[float, float]], *, checked: bool = False
                    ) -> np.ndarray:
    """The exact (not private) [0, 1]-scaled SSCP D'ᵀD' of ``columns`` of ``source``, with the
    intercept column first: the statistics step of :func:`release_sscp`, in one pass of
    chunks (:class:`ScaledSSCP`; on Spark, on the executors).  Its [0, 0] entry is the row
    count, private under add/remove neighbours: it never leaves the release unnoised."""
    stat = ScaledSSCP(bounds)
    if checked and isinstance(source, ArraySource):
        return source.reduce(columns, stat, checked=True)
    return source.reduce(columns, stat)


def _n_public(rel: SSCPRelease) -> int | None:
    """The release's public n (replace-one releases only)."""
    n = rel.metadata.get("n_public")
    return None if n is None else int(n)


@renamed_parameters(rng="random_state")
@public_function(seed_arg="random_state", n_public=_n_public)
def release_sscp(
    data: Any,
    *,
    columns: Sequence[str],
    bounds: Any = None,
    epsilon: float,
    delta: float,
    random_state: Any = None,
    neighbouring: str | Neighbouring = "add-remove",
    calibration: str = "analytic",
    ledger: Any = None,
    psd_tol: float = 1e-10,
    codebook: Any = None,
    rng: Any = DEPRECATED,
) -> SSCPRelease:
    """Release a DP SSCP matrix of ``columns`` (plus an intercept column) of ``data``.

    Parameters
    ----------
    data:
        DataFrame, mapping column → values, a 2-D array whose columns are ``columns``, a path
        to a Parquet or CSV file (or a directory of them; streamed in chunks with
        ``pyarrow.dataset``: memory is bounded by the chunk, not the file), or a Spark
        DataFrame (the clipped, scaled SSCP is summed per partition on the executors; only
        the (d+1)×(d+1) matrix reaches the driver).  Every source goes through the same
        statistics step (:func:`sscp_statistics`) and the same noise step, so a file or Spark
        release equals the in-memory one for the same seed up to the floating-point
        summation order.
    columns:
        Column names to release (the response and all candidate regressors).
    bounds:
        PUBLIC (lo, hi) per column (dict or list aligned with ``columns``); values are clamped.
    epsilon, delta:
        (ε, δ), δ > 0.  ``epsilon=inf`` releases the exact matrix (not private).
    random_state:
        ``None`` (fresh OS entropy, for releases), a seed or a ``numpy.random.Generator``
        (reproducible experiments).  ``rng=`` is its deprecated spelling (one release, with a
        ``DeprecationWarning``).
    neighbouring:
        ``"add-remove"`` (default; sensitivity d + 1) or ``"replace-one"`` (√2·(d + 1); n is
        then public and recorded for the degrees of freedom).
    calibration:
        ``"analytic"`` (default; exact Gaussian curve) or ``"classical"`` (ε < 1).
    ledger:
        Optional :class:`~dpreg.Ledger`, charged (ε, δ) after validation, before any noise
        (default: the session's default ledger, :func:`dpreg.set_default_ledger`, if set).
    psd_tol:
        Relative tolerance of the PSD repair.
    codebook:
        A codebook (TOML path or :class:`dpreg.codebook.Codebook`; docs/codebook.md) whose
        bounds are used for the columns; ``bounds`` given here extend it and win.  Its public
        n is checked under replace-one neighbours (a mismatch is refused without revealing n).
    """
    from dpreg.codebook import merge_bounds, resolve_codebook

    names = [str(c) for c in data.columns] if isinstance(data, pd.DataFrame) else (
        [str(c) for c in data] if isinstance(data, Mapping) else None)
    cb = resolve_codebook(codebook, names)
    bounds = merge_bounds(cb, bounds)
    source, cols, checked = _extract(data, columns)
    if isinstance(bounds, Mapping) and names is not None:
        from dpreg._validation import check_known_keys

        check_known_keys(bounds, names)
    plan = plan_sscp(columns=cols, bounds=bounds, epsilon=epsilon, delta=delta,
                     neighbouring=neighbouring, calibration=calibration, psd_tol=psd_tol)
    gen = check_rng(random_state)
    # the statistics step: clip and accumulate in chunks (a file streamed, a Spark DataFrame
    # on its executors); values are validated here, before anything is charged or drawn
    S = sscp_statistics(source, cols, plan.options["bounds"], checked=checked)
    rel = plan.relation
    if rel is Neighbouring.REPLACE_ONE and S[0, 0] < 1:  # n is public under replace-one
        raise InvalidInputError("data must have at least one row")
    n = int(round(float(S[0, 0])))  # the exact count: used only where n is public
    if cb is not None:  # a declared public n must match (checked under replace-one only)
        cb.check_n(n, rel is Neighbouring.REPLACE_ONE, "this SSCP release")
    if rel is Neighbouring.REPLACE_ONE:
        plan = replace(plan, n=n)
    charge(ledger, plan.budget, "SSCP release (Analyze Gauss)", rel)
    warn_if_not_private(plan.options["epsilon"], "the SSCP matrix")
    return sscp_release_result(release_sscp_matrix(S, plan, gen,
                                                   seeded=is_seeded(random_state)))


def plan_sscp(*, columns: Sequence[str], bounds: Any, epsilon: float, delta: float,
              neighbouring: str | Neighbouring = "add-remove", calibration: str = "analytic",
              psd_tol: float = 1e-10, n: int | None = None) -> ReleasePlan:
    """The public part of an SSCP release of ``columns`` (plus the intercept column): the
    bounds resolved per column, every parameter checked (as :func:`release_sscp` documents
    them), the budget (ε, δ) -- one Gaussian release, ``parts = {"sscp": (ε, δ)}`` -- and the
    Analyze-Gauss sensitivity and noise sd σ under the relation
    (:func:`dpreg.covariance.calibration.analyze_gauss_sigma`: d + 1 add/remove, √2·(d + 1)
    replace-one, in [0, 1]-scaled units).  Reads no data and draws nothing.

    ``n``: the number of rows where it is PUBLIC (replace-one only; under add/remove it is
    private: giving it is an error).  ``d`` of the plan is the number of released columns."""
    cols = [str(c) for c in columns]
    bnds = resolve_bounds(bounds, cols)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    rel = check_neighbouring(neighbouring)
    cal = check_choice(calibration, "calibration", ("analytic", "classical"))
    tol = check_positive(psd_tol, "psd_tol")
    if tol >= 1:
        raise InvalidInputError(f"psd_tol must be < 1; got {psd_tol!r}")
    d = len(cols)
    sens, sigma = analyze_gauss_sigma(d, eps, dlt, rel, cal)  # validates the classical range too
    if n is not None:
        if rel is not Neighbouring.REPLACE_ONE:
            raise InvalidInputError("n must be None under add/remove neighbours (n is private "
                                    "there: only replace-one makes it public); got a number")
        n = check_int(n, "n", minimum=1)
    budget = ApproxDP(eps, dlt)
    return ReleasePlan(
        method="covariance-ols",
        options={"epsilon": eps, "delta": dlt, "calibration": cal, "psd_tol": tol,
                 "columns": tuple(cols), "bounds": tuple(bnds)},
        budget=budget, relation=rel, parts={"sscp": budget}, n=n, d=d,
        sensitivities={"sscp": sens}, noise={"sscp": sigma})


def release_sscp_matrix(stats: np.ndarray, plan: ReleasePlan, rng: Any, *,
                        seeded: bool = False) -> Release:
    """THE draw of the SSCP release: Analyze Gauss on the exact [0, 1]-scaled SSCP ``stats``
    (:func:`sscp_statistics`, (d+1)×(d+1) with the count first) at the public ``plan``'s
    (:func:`plan_sscp`) sensitivity and budget -- Gaussian noise on the upper triangle,
    mirrored (:func:`dpreg.multivariate.noisy_symmetric`, i.e. :mod:`dpreg.mechanisms`) --
    with the Generator ``rng``.  Builds the :class:`PrivacyStatement`; ``values`` holds
    ``noisy_scaled``, the only private-data-derived value (everything else is
    post-processing: :func:`sscp_release_result`)."""
    o = plan.options
    d = int(plan.d)  # type: ignore[arg-type]
    S = np.asarray(stats, dtype=float)
    if S.shape != (d + 1, d + 1):
        raise InvalidInputError(f"stats must be the plan's ({d + 1}, {d + 1}) SSCP matrix; "
                                f"got shape {S.shape}")
    sens, sigma = plan.sensitivities["sscp"], plan.noise["sscp"]
    noisy = noisy_symmetric(S, sensitivity=sens, budget=plan.parts["sscp"], rng=rng,
                            calibration=o["calibration"])
    privacy = PrivacyStatement(
        budget=plan.budget, neighbouring=plan.relation, mechanism=MECHANISM, source=SOURCE,
        seeded=seeded,
        details={"sensitivity": sens, "sigma": sigma, "calibration": o["calibration"]},
        requested=plan.budget,
    )
    return Release(plan, {"noisy_scaled": noisy}, privacy)


def sscp_release_result(release: Release) -> SSCPRelease:
    """The :class:`SSCPRelease` of an SSCP release (post-processing: the metadata from the
    public plan and the noisy count, the PSD repair in original units)."""
    plan, o = release.plan, release.plan.options
    noisy = release.values["noisy_scaled"]
    meta = {
        "epsilon": o["epsilon"], "delta": o["delta"], "neighbouring": plan.relation.value,
        "mechanism": "Analyze Gauss (Gaussian noise on the upper triangle of the [0,1]-scaled "
                     "SSCP with intercept column, mirrored)",
        "calibration": o["calibration"], "sensitivity": plan.sensitivities["sscp"],
        "sigma": plan.noise["sscp"],
        "n_noisy": float(noisy[0, 0]),
        "n_public": plan.n if plan.relation is Neighbouring.REPLACE_ONE else None,
        "dpreg_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "seeded": release.privacy.seeded,
    }
    return SSCPRelease(columns=list(o["columns"]), bounds=list(o["bounds"]),
                       noisy_scaled=noisy, privacy=release.privacy, metadata=meta,
                       psd_tol=o["psd_tol"])
