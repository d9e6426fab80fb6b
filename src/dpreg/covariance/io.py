"""The SSCP release file: the versioned schema (:func:`validate_release_dict`), writing
(:func:`release_to_dict`, strict JSON, sealed by :func:`seal_release_dict`) and the checks on
reading -- the integrity record first (:func:`verify_release_dict`: was the file altered after
it was written?), then field by field and against the public parameters (σ against ε, δ, the
sensitivity and the relation).  Nothing in a file is evaluated."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpreg._integrity import (
    CANONICAL,
    Integrity,
    canonical_json,
    digest,
    key_id,
    mac,
    same,
)
from dpreg._json import jsonable
from dpreg._release_file import Fields, finite_or_tag
from dpreg._validation import fmt
from dpreg.covariance._view import ReleaseView
from dpreg.covariance.calibration import INTERCEPT, MECHANISM, analyze_gauss_sigma
from dpreg.exceptions import InvalidInputError, ReleaseIntegrityError
from dpreg.mechanisms.sensitivity import sscp_sensitivity
from dpreg.privacy.budgets import ApproxDP
from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement, check_neighbouring

__all__ = ["FORMAT", "FORMAT_VERSION", "READABLE_VERSIONS", "MAX_RELEASE_COLUMNS",
           "INTEGRITY_FIELD", "release_to_dict", "seal_release_dict", "verify_release_dict",
           "validate_release_dict", "check_derived_matrix"]

FORMAT = "dpreg-sscp-release"
#: Version written by :meth:`SSCPRelease.save` (3: strict JSON, infinite ε as ``"inf"``, and an
#: integrity record); :meth:`SSCPRelease.load` reads 1 (files of earlier dpreg versions, also
#: without the field), 2 (strict JSON, no integrity record) and 3.  The schema is
#: :func:`validate_release_dict`; the integrity record :func:`verify_release_dict`.
FORMAT_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
#: The first version whose files must carry an integrity record.
FIRST_SEALED_VERSION = 3
#: The top-level field holding the integrity record.
INTEGRITY_FIELD = "integrity"
#: Prefix of the MAC input of a release file (a MAC of a ledger is never valid here).
RELEASE_DOMAIN = b"dpreg-sscp-release\x00"
_RECORD_KEYS = {"canonical", "sha256", "key_id", "hmac_sha256"}
#: Most columns a release file may hold (its matrices have (d + 1)² entries).
MAX_RELEASE_COLUMNS = 1000


def release_to_dict(rel: ReleaseView) -> dict[str, Any]:
    """The release file's content (format version :data:`FORMAT_VERSION`): strict JSON
    values only -- an infinite ε is ``"inf"``, a matrix entry that overflows in original
    units is ``null``."""
    matrix = None
    if rel.matrix is not None:
        m = rel.matrix.to_numpy()
        matrix = [[float(v) if math.isfinite(v) else None for v in row] for row in m]
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "columns": list(rel.columns),
        "bounds": {c: list(b) for c, b in zip(rel.columns, rel.bounds)},
        "noisy_scaled": rel.noisy_scaled.tolist(),
        "matrix": matrix,
        "privacy": finite_or_tag(rel.privacy.as_dict()),
        "metadata": finite_or_tag(jsonable(rel.metadata)),
    }


_TOP_FIELDS = ("format", "format_version", "columns", "bounds", "noisy_scaled", "matrix",
               "privacy", "metadata")


def seal_release_dict(content: dict[str, Any], key: bytes | None = None) -> dict[str, Any]:
    """``content`` (strict-JSON values, as :func:`release_to_dict` makes them) with its
    integrity record added as the field ``"integrity"``::

        {"canonical": "dpreg-canonical-json-1",
         "sha256": SHA-256 of the canonical form of every other field,
         "key_id": the key's id, "hmac_sha256": HMAC-SHA256(key, "dpreg-sscp-release\\0" ||
                                                              canonical form)}   (with a key)

    The canonical form is :func:`dpreg._integrity.canonical_json` of the document without the
    ``integrity`` field (sorted keys, no white space, ASCII, no NaN/Infinity).
    """
    body = {k: v for k, v in content.items() if k != INTEGRITY_FIELD}
    canon = canonical_json(body)
    record: dict[str, Any] = {"canonical": CANONICAL, "sha256": digest(canon)}
    if key is not None:
        record["key_id"] = key_id(key)
        record["hmac_sha256"] = mac(key, RELEASE_DOMAIN, canon)
    return {**body, INTEGRITY_FIELD: record}


def _record_ok(rec: Any) -> bool:
    """Whether an integrity record has the shape :func:`seal_release_dict` writes."""
    if not isinstance(rec, dict) or not set(rec) <= _RECORD_KEYS \
            or rec.get("canonical") != CANONICAL or ("key_id" in rec) != ("hmac_sha256" in rec):
        return False
    hexes = [(rec.get("sha256"), 64)] + ([(rec["key_id"], 16), (rec["hmac_sha256"], 64)]
                                         if "key_id" in rec else [])
    return all(isinstance(v, str) and len(v) == n and all(c in "0123456789abcdef" for c in v)
               for v, n in hexes)


def verify_release_dict(data: Any, *, key: bytes | None = None,
                        expect_digest: str | None = None, verify: bool = True
                        ) -> tuple[Any, Integrity | None]:
    """Check a parsed release file's integrity record; return the document without the record
    (for :func:`validate_release_dict`) and the outcome.

    Versions 1 and 2 (older dpreg) have no record: ``"no-record"``.  A version-3 file must have
    one, and its SHA-256 must match the canonical form of the rest; with ``key`` it must also
    carry an HMAC-SHA256 made with that key (a given key means a MAC is required); with
    ``expect_digest`` (a digest obtained out of band) the content's digest must equal it.  A
    keyed file read without a key is ``"unverified"`` (its MAC cannot be checked) once its
    digest matches.  A failure raises :class:`~dpreg.exceptions.ReleaseIntegrityError` -- one
    line, no value of the file, never the key -- unless ``verify=False``, which returns
    ``"unverified"`` with the reason instead.  Anything that is not a readable release of a
    known version is left to :func:`validate_release_dict` (returns ``None``).
    """
    if not isinstance(data, dict):
        return data, None
    version = data.get("format_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) \
            or version not in READABLE_VERSIONS:
        return data, None  # refused (or called newer) by the schema
    body = {k: v for k, v in data.items() if k != INTEGRITY_FIELD}
    try:
        canon: bytes | None = canonical_json(body)
    except (TypeError, ValueError):
        canon = None
    dig = None if canon is None else digest(canon)
    rec = data.get(INTEGRITY_FIELD)
    rec_id = rec.get("key_id") if isinstance(rec, dict) and isinstance(rec.get("key_id"),
                                                                         str) else None

    def fail(why: str, *, altered: bool = True) -> tuple[Any, Integrity]:
        if verify:
            head = "was altered after it was written: " if altered else "cannot be verified: "
            raise ReleaseIntegrityError(
                f"release file {head}{why}; refusing to read it (verify=False, CLI "
                "--no-verify, reads it anyway, marked UNVERIFIED)")
        return body, Integrity("unverified", ("ALTERED: " if altered else "") + why,
                               digest=dig, key_id=rec_id if _record_ok(rec) else None)

    given = "" if key is None else key_id(key)
    if INTEGRITY_FIELD not in data:
        if version >= FIRST_SEALED_VERSION:
            return fail(f"its integrity record is missing (every format-version "
                        f"{version} file has one)")
        older = f"written by an older dpreg (format version {version})"
        if key is not None:
            return fail(f"it has no integrity record ({older}), so no MAC for the given key "
                        f"(key id {given})", altered=False)
        if expect_digest is not None:
            if dig is None or not same(dig, expect_digest):
                return fail("its SHA-256 digest is not the expected one", altered=False)
            return body, Integrity("verified-pinned", f"no integrity record ({older}); its "
                                   "SHA-256 digest equals the expected one", digest=dig)
        return body, Integrity("no-record", older + ": it cannot be checked for edits",
                               digest=dig)
    if not _record_ok(rec):
        return fail("its integrity record is malformed")
    assert isinstance(rec, dict)
    if dig is None:
        return fail("it holds values dpreg never writes (NaN or Infinity)")
    if not same(dig, rec["sha256"]):
        return fail("its SHA-256 digest does not match the content")
    pinned = expect_digest is not None
    if pinned and not same(dig, str(expect_digest)):
        return fail("its SHA-256 digest is not the expected one", altered=False)
    keyed = "hmac_sha256" in rec
    also = "; its SHA-256 digest equals the expected one" if pinned else ""
    if key is not None:
        if not keyed:
            return fail(f"a key was given (key id {given}), but the file carries only an "
                        "unkeyed digest, which anyone can recompute after an edit",
                        altered=False)
        if rec_id != given:
            return fail(f"it was signed with the key whose id is {rec_id}; the given key's id "
                        f"is {given}", altered=False)
        assert canon is not None
        if not same(mac(key, RELEASE_DOMAIN, canon), rec["hmac_sha256"]):
            return fail("its HMAC-SHA256 does not match the content (changed by someone "
                        "without the key)")
        return body, Integrity("verified-hmac", f"HMAC-SHA256 with key id {given} matches{also}",
                               digest=dig, key_id=given)
    if pinned:
        return body, Integrity("verified-pinned", "its SHA-256 digest equals the expected one"
                               + (f" (signed with key id {rec_id}; MAC not checked: no key "
                                  "given)" if keyed else ""), digest=dig, key_id=rec_id)
    if keyed:
        return body, Integrity("unverified", f"signed with key id {rec_id}: its MAC cannot be "
                               "checked without the key (give key=, CLI --key); its unkeyed "
                               "SHA-256 digest matches (no accidental edit)",
                               digest=dig, key_id=rec_id)
    return body, Integrity("verified-digest", "its unkeyed SHA-256 digest matches: no "
                           "accidental or naive edit (an edit whose digest was recomputed is "
                           "not detected without a key)", digest=dig)


def validate_release_dict(data: Any, *, non_finite_literals: bool = False
                          ) -> tuple[dict[str, Any], np.ndarray | None]:
    """Check a parsed SSCP release file against the schema; return the constructor arguments
    of :class:`SSCPRelease` and the stored ``matrix`` (or None).

    Schema (versions 1, 2 and 3; versions 2 and 3 are strict JSON; version 3 files also carry
    the integrity record, checked and removed by :func:`verify_release_dict` first)::

        format          "dpreg-sscp-release"
        format_version  1, 2 or 3 (missing: 1)
        columns         1..MAX_RELEASE_COLUMNS distinct non-empty strings, not "intercept"
        bounds          {column: [lo, hi]} for exactly the columns, finite, lo < hi
        noisy_scaled    (d+1)x(d+1) finite, exactly symmetric (the DP output)
        matrix          null (a failed release) or (d+1)x(d+1) numbers/null, equal to the
                        matrix derived from noisy_scaled and bounds
        privacy         {budget: {kind: "approx", epsilon: > 0 or "inf", delta: in (0, 1)},
                         neighbouring: "add-remove" | "replace-one",
                         mechanism: "Analyze Gauss SSCP", source?: str, seeded?: bool,
                         details?: {sensitivity?, sigma?, calibration?, ...}, ...}
        metadata        {epsilon, delta, neighbouring, calibration: "analytic" | "classical",
                         sensitivity, sigma, n_noisy, n_public, psd_tol: in (0, 1), ...}

    Consistency: the privacy block and the metadata agree; the sensitivity is the one of d
    columns under the relation; σ is at least the σ recomputed from the public (ε, δ, d,
    relation, calibration) -- a smaller σ means the ε claim was edited; n_noisy is the
    released count noisy_scaled[0][0]; n_public is null under add-remove (n is private) and an
    integer >= 1 within 10σ of the noisy count under replace-one.  Unknown top-level fields are
    refused; further optional fields in ``privacy``, ``privacy.details`` and ``metadata`` are
    kept but not used.
    """
    f = Fields("release file")
    if isinstance(data, Mapping) and not isinstance(data, dict):
        data = dict(data)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidInputError(
            f"not a dpreg SSCP release (expected format {FORMAT!r}); got "
            f"{fmt(data.get('format') if isinstance(data, dict) else type(data).__name__)}"
        )
    version = data.get("format_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) \
            or version not in READABLE_VERSIONS:
        newer = isinstance(version, int) and not isinstance(version, bool) \
            and version > FORMAT_VERSION
        raise f.error("format_version", f"one of {list(READABLE_VERSIONS)}"
                      + (" (the file was written by a newer dpreg)" if newer else ""), version)
    if non_finite_literals and version >= 2:
        raise InvalidInputError(
            f"release file: format_version {version} files are strict JSON, but this one holds "
            "NaN or Infinity literals (an infinite epsilon is written as \"inf\")"
        )
    known = _TOP_FIELDS + ((INTEGRITY_FIELD,) if version >= FIRST_SEALED_VERSION else ())
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise InvalidInputError(f"release file: unknown field {fmt(unknown[0])} (a release has "
                                f"{list(_TOP_FIELDS)})")
    # -- columns and bounds
    cols_raw = f.get(data, "columns", "")
    if not isinstance(cols_raw, list) or not 1 <= len(cols_raw) <= MAX_RELEASE_COLUMNS:
        raise f.error("columns", f"a list of 1 to {MAX_RELEASE_COLUMNS} column names", cols_raw)
    cols = [f.string(c, f"columns[{j}]", max_len=1000) for j, c in enumerate(cols_raw)]
    if any(not c for c in cols) or INTERCEPT in cols or len(set(cols)) != len(cols):
        raise f.error("columns", f"distinct non-empty names other than {INTERCEPT!r}", cols)
    d = len(cols)
    bounds_raw = f.obj(f.get(data, "bounds", ""), "bounds")
    if set(bounds_raw) != set(cols):
        raise f.error("bounds", "an object with one [lo, hi] per column", sorted(bounds_raw))
    bounds: list[tuple[float, float]] = []
    for c in cols:
        b = bounds_raw[c]
        path = f"bounds[{c!r}]"
        if not isinstance(b, list) or len(b) != 2:
            raise f.error(path, "[lo, hi]", b)
        lo = f.number(b[0], path + "[0]")
        hi = f.number(b[1], path + "[1]")
        if not lo < hi or not math.isfinite(hi - lo):
            raise f.error(path, "[lo, hi] with lo < hi", b)
        bounds.append((lo, hi))
    # -- the DP output
    noisy = f.matrix(f.get(data, "noisy_scaled", ""), "noisy_scaled", d + 1)
    if not np.array_equal(noisy, noisy.T):
        raise f.error("noisy_scaled", "a symmetric matrix (one noise draw per entry, "
                      "mirrored)", "an asymmetric matrix")
    stored = f.get(data, "matrix", "")
    stored_m = None if stored is None else f.matrix(stored, "matrix", d + 1, null_entries=True)
    # -- privacy statement
    priv = f.obj(f.get(data, "privacy", ""), "privacy")
    budget = f.obj(f.get(priv, "budget", "privacy"), "privacy.budget")
    if set(budget) != {"kind", "epsilon", "delta"}:
        raise f.error("privacy.budget", "{kind, epsilon, delta}", sorted(budget))
    f.string(budget["kind"], "privacy.budget.kind", choices=("approx",))
    eps = f.number(budget["epsilon"], "privacy.budget.epsilon", lo=0.0, lo_open=True,
                   allow_inf=True)
    delta = f.number(budget["delta"], "privacy.budget.delta", lo=0.0, hi=1.0, lo_open=True,
                     hi_open=True)
    rel = check_neighbouring(f.string(f.get(priv, "neighbouring", "privacy"),
                                      "privacy.neighbouring",
                                      choices=tuple(n.value for n in Neighbouring)))
    mechanism = f.string(f.get(priv, "mechanism", "privacy"), "privacy.mechanism",
                         choices=(MECHANISM,))
    source = f.string(priv.get("source", ""), "privacy.source")
    seeded = f.boolean(priv.get("seeded", False), "privacy.seeded")
    details = f.obj(priv.get("details", {}), "privacy.details")
    # -- metadata
    meta = dict(f.obj(f.get(data, "metadata", ""), "metadata"))
    m_eps = f.number(f.get(meta, "epsilon", "metadata"), "metadata.epsilon", lo=0.0,
                     lo_open=True, allow_inf=True)
    m_delta = f.number(f.get(meta, "delta", "metadata"), "metadata.delta", lo=0.0, hi=1.0,
                       lo_open=True, hi_open=True)
    if m_eps != eps or m_delta != delta:
        raise f.error("metadata.epsilon/delta", f"the privacy budget's ({eps!r}, {delta!r})",
                      (m_eps, m_delta))
    m_rel = f.string(f.get(meta, "neighbouring", "metadata"), "metadata.neighbouring",
                     choices=(rel.value,))
    cal = f.string(f.get(meta, "calibration", "metadata"), "metadata.calibration",
                   choices=("analytic", "classical"))
    sens = f.number(f.get(meta, "sensitivity", "metadata"), "metadata.sensitivity", lo=0.0,
                    lo_open=True)
    sigma = f.number(f.get(meta, "sigma", "metadata"), "metadata.sigma", lo=0.0)
    n_noisy = f.number(f.get(meta, "n_noisy", "metadata"), "metadata.n_noisy")
    n_public_raw = f.get(meta, "n_public", "metadata")
    tol = f.number(meta.get("psd_tol", 1e-10), "metadata.psd_tol", lo=0.0, hi=1.0,
                   lo_open=True, hi_open=True)
    if "seeded" in meta and f.boolean(meta["seeded"], "metadata.seeded") != seeded:
        raise f.error("metadata.seeded", f"the privacy statement's {seeded!r}", meta["seeded"])
    for key, value in (("sensitivity", sens), ("sigma", sigma), ("calibration", cal)):
        if key in details and details[key] != value:
            raise f.error(f"privacy.details.{key}", f"metadata.{key} ({value!r})", details[key])
    # -- consistency with the public parameters
    want_sens = sscp_sensitivity(d, rel, intercept=True)
    if not math.isclose(sens, want_sens, rel_tol=1e-12):
        raise f.error("metadata.sensitivity", f"{want_sens!r} ({d} columns plus intercept, "
                      f"{rel.value})", sens)
    try:
        _, want_sigma = analyze_gauss_sigma(d, eps, delta, rel, cal)
    except InvalidInputError as exc:
        raise InvalidInputError(f"release file: field 'metadata.calibration': {exc}") from None
    if sigma < want_sigma * (1.0 - 1e-9):
        raise f.error("metadata.sigma", f">= {want_sigma!r}, the noise that (epsilon={eps!r}, "
                      f"delta={delta!r}) needs for {d} columns under {rel.value} with "
                      f"{cal} calibration (a smaller sigma means the privacy claim was "
                      "edited)", sigma)
    if not math.isclose(n_noisy, float(noisy[0, 0]), rel_tol=1e-12, abs_tol=1e-12):
        raise f.error("metadata.n_noisy", f"the released count noisy_scaled[0][0] "
                      f"({float(noisy[0, 0])!r})", n_noisy)
    if rel is Neighbouring.ADD_REMOVE:
        if n_public_raw is not None:
            raise f.error("metadata.n_public", "null under add-remove (n is private)",
                          n_public_raw)
    else:
        n_pub = f.integer(n_public_raw, "metadata.n_public", minimum=1)
        if abs(n_noisy - n_pub) > 10.0 * sigma + 1e-6 * max(1.0, n_pub):
            raise f.error("metadata.n_public", f"within 10 sigma ({10 * sigma:.4g}) of the "
                          f"noisy count {n_noisy:.6g}", n_pub)
    for key in ("mechanism", "dpreg_version", "created", "reason"):
        if key in meta:
            f.string(meta[key], f"metadata.{key}")
    meta.update(epsilon=eps, delta=delta, neighbouring=m_rel, calibration=cal,
                sensitivity=sens, sigma=sigma, n_noisy=n_noisy)
    for key in ("psd_repaired", "eigenvalues_replaced", "failed", "reason", "psd_tol"):
        meta.pop(key, None)  # recomputed from noisy_scaled
    privacy = PrivacyStatement(budget=ApproxDP(eps, delta), neighbouring=rel,
                               mechanism=mechanism, source=source, seeded=seeded,
                               details=dict(details))
    kwargs = {"columns": cols, "bounds": bounds, "noisy_scaled": noisy, "privacy": privacy,
              "metadata": meta, "psd_tol": tol}
    return kwargs, stored_m


def check_derived_matrix(rel: ReleaseView, stored: np.ndarray | None) -> None:
    """The stored ``matrix`` must be the one derived from ``noisy_scaled`` (an edited
    ``matrix`` would otherwise be silently replaced)."""
    if rel.matrix is None or stored is None:
        if (rel.matrix is None) != (stored is None):
            raise InvalidInputError(
                "release file: field 'matrix' must be "
                + ("null: noisy_scaled cannot be repaired (a failed release)"
                   if rel.matrix is None else
                   "the repaired matrix derived from noisy_scaled and bounds")
                + f"; got {'null' if stored is None else 'a matrix'}")
        return
    derived = rel.matrix.to_numpy()
    finite = np.isfinite(derived)
    scale = float(np.max(np.abs(derived[finite]))) if finite.any() else 1.0
    same_nulls = np.array_equal(np.isnan(stored), ~finite)
    close = np.allclose(stored[finite], derived[finite], rtol=1e-6, atol=1e-9 * scale)
    if not (same_nulls and close):
        raise InvalidInputError(
            "release file: field 'matrix' must be the repaired matrix derived from "
            "noisy_scaled and bounds; got a different matrix (edited file?)"
        )
