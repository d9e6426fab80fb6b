"""Release files carry an integrity record (issue 32 item 5).

A release file travels from the curator to analysts; before, any edit that kept the file
consistent (a regression coefficient's matrix entry nudged together with the derived matrix,
an ε claim raised with a matching σ, a dropped metadata field) was read as the genuine release.
Now ``save`` writes a SHA-256 digest of the canonical form of the content (and, with a key, an
HMAC-SHA256 and the key id); ``load`` / ``dpreg regress`` refuse a file whose digest or MAC does
not match, read it only on request (``verify=False`` / ``--no-verify``) marked UNVERIFIED, and
carry the outcome into every result.  Re-ordering keys or re-indenting is not an alteration.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from dpreg.cli import app
from dpreg.covariance import SSCPRelease, release_sscp
from dpreg.exceptions import InvalidInputError, InvalidParameterError, ReleaseIntegrityError
from dpreg.privacy import create_key_file

RUNNER = CliRunner()
FORMULA = "y ~ x + z"
BOUNDS = {"x": (0.0, 1.0), "z": (0.0, 1.0), "y": (0.0, 1.0)}


def _frame(n=400):
    g = np.random.default_rng(3)
    df = pd.DataFrame({"x": g.uniform(0, 1, n), "z": g.uniform(0, 1, n)})
    df["y"] = np.clip(0.2 + 0.5 * df.x - 0.2 * df.z + g.normal(0, 0.05, n), 0, 1)
    return df


@pytest.fixture(scope="module")
def rel():
    return release_sscp(_frame(), columns=["x", "z", "y"], bounds=BOUNDS, epsilon=2.0,
                        delta=1e-6, random_state=5, neighbouring="replace-one")


@pytest.fixture(scope="module")
def key_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("key") / "curator.key"
    create_key_file(path)
    return path


def _doc(path: Path) -> dict:
    return json.loads(path.read_text())


def _write(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc, indent=1))
    return path


def _canonical_digest(doc: dict) -> str:
    """The documented definition, computed independently of dpreg."""
    body = {k: v for k, v in doc.items() if k != "integrity"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                       allow_nan=False).encode("ascii")
    return hashlib.sha256(canon).hexdigest()


# ------------------------------------------------------------------ what counts as an alteration
def _one_number(d):
    d["noisy_scaled"][1][2] += 1e-9
    d["noisy_scaled"][2][1] = d["noisy_scaled"][1][2]


def _matrix_entry(d):
    d["matrix"][2][2] *= 1.0000001


def _n(d):
    d["metadata"]["n_public"] = 401


def _n_as_float(d):
    d["metadata"]["n_public"] = float(d["metadata"]["n_public"])  # 400 -> 400.0


def _epsilon(d):
    d["metadata"]["epsilon"] = 1.0
    d["privacy"]["budget"]["epsilon"] = 1.0


def _delta(d):
    d["metadata"]["delta"] = 1e-5
    d["privacy"]["budget"]["delta"] = 1e-5


def _delete_field(d):
    del d["metadata"]["created"]


def _delete_matrix(d):
    d["matrix"] = None


def _add_field(d):
    d["metadata"]["owner"] = "agency"


def _add_column_name_space(d):
    d["columns"][0] = "x "
    d["bounds"]["x "] = d["bounds"].pop("x")


def _bounds(d):
    d["bounds"]["x"][1] = 2.0


def _version(d):
    d["format_version"] = 2


def _record_deleted(d):
    del d["integrity"]


def _record_malformed(d):
    d["integrity"]["sha256"] = d["integrity"]["sha256"][:40]


def _record_extra(d):
    d["integrity"]["note"] = "ok"


ALTERED = {
    "one number of the DP matrix": (_one_number, "digest does not match"),
    "one entry of the derived matrix": (_matrix_entry, "digest does not match"),
    "n": (_n, "digest does not match"),
    "n written as a float": (_n_as_float, "digest does not match"),
    "epsilon in the metadata and the claim": (_epsilon, "digest does not match"),
    "delta": (_delta, "digest does not match"),
    "a deleted field": (_delete_field, "digest does not match"),
    "the matrix removed": (_delete_matrix, "digest does not match"),
    "an added field": (_add_field, "digest does not match"),
    "a renamed column": (_add_column_name_space, "digest does not match"),
    "a bound": (_bounds, "digest does not match"),
    "the format version": (_version, "digest does not match"),
    "the integrity record deleted": (_record_deleted, "integrity record is missing"),
    "a malformed record": (_record_malformed, "record is malformed"),
    "an extra field in the record": (_record_extra, "record is malformed"),
}


@pytest.mark.parametrize("name", sorted(ALTERED))
def test_every_alteration_is_refused(tmp_path, rel, name):
    edit, match = ALTERED[name]
    path = rel.save(tmp_path / "r.json")
    doc = _doc(path)
    edit(doc)
    _write(path, doc)
    with pytest.raises(ReleaseIntegrityError, match=match) as info:
        SSCPRelease.load(path)
    text = str(info.value)
    assert isinstance(info.value, InvalidInputError) and isinstance(info.value, ValueError)
    assert "\n" not in text and str(path) in text and "altered after it was written" in text
    assert "--no-verify" in text
    for value in ("0.5", "400", str(rel.metadata["sigma"])):  # no value of the file
        assert value not in text.replace(str(path), "")
    res = RUNNER.invoke(app, ["regress", str(path), FORMULA])
    assert res.exit_code == 1 and "altered after it was written" in res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize("name", ["one number of the DP matrix", "an added field",
                                  "epsilon in the metadata and the claim"])
def test_read_anyway_is_marked_unverified_everywhere(tmp_path, rel, name):
    edit, _ = ALTERED[name]
    path = rel.save(tmp_path / "r.json")
    doc = _doc(path)
    edit(doc)
    _write(path, doc)
    try:
        loaded = SSCPRelease.load(path, verify=False)
    except InvalidInputError as exc:  # the content check still applies (an edited ε claim)
        assert "privacy claim was edited" in str(exc)
        return
    assert loaded.integrity.status == "unverified" and not loaded.integrity.verified
    assert loaded.integrity.detail.startswith("ALTERED")
    res = loaded.regress(FORMULA, se="plugin")
    assert res.extra["release_integrity"]["status"] == "unverified"
    text = str(res.summary())
    assert "UNVERIFIED release file" in text and "Release file" in text
    assert res.to_dict()["extra"]["release_integrity"]["verified"] is False
    out = RUNNER.invoke(app, ["regress", str(path), FORMULA, "--no-verify"])
    assert out.exit_code == 0 and "UNVERIFIED" in out.output
    out = RUNNER.invoke(app, ["regress", str(path), FORMULA, "--no-verify", "--json"])
    data = json.loads(out.stdout)
    assert data["release_integrity"]["status"] == "unverified"
    assert "UNVERIFIED" in out.stderr


def test_unaltered_and_reformatted_files_verify(tmp_path, rel):
    path = rel.save(tmp_path / "r.json")
    doc = _doc(path)
    assert doc["format_version"] == 3
    assert doc["integrity"]["canonical"] == "dpreg-canonical-json-1"
    assert doc["integrity"]["sha256"] == _canonical_digest(doc)
    loaded = SSCPRelease.load(path)
    assert loaded.integrity.status == "verified-digest" and loaded.integrity.verified
    assert loaded.integrity.digest == doc["integrity"]["sha256"]

    def reverse(obj):
        if isinstance(obj, dict):
            return {k: reverse(obj[k]) for k in reversed(list(obj))}
        if isinstance(obj, list):
            return [reverse(v) for v in obj]
        return obj

    again = tmp_path / "reordered.json"
    again.write_text(json.dumps(reverse(doc), indent=7, ensure_ascii=False))
    assert again.read_text() != path.read_text()
    assert SSCPRelease.load(again).integrity.status == "verified-digest"
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(doc, separators=(",", ":")))
    assert SSCPRelease.load(compact).integrity.status == "verified-digest"
    pd.testing.assert_series_equal(SSCPRelease.load(again).regress(FORMULA, se="plugin").params,
                                   rel.regress(FORMULA, se="plugin").params)
    res = RUNNER.invoke(app, ["regress", str(again), FORMULA])
    assert res.exit_code == 0 and "digest matches" in res.output
    assert rel.integrity is None  # made in this session: nothing to verify
    assert "release_integrity" not in rel.regress(FORMULA, se="plugin").extra
    # from_dict verifies too, and round-trips to_dict
    assert SSCPRelease.from_dict(rel.to_dict()).integrity.status == "verified-digest"


def test_keyed_files(tmp_path, rel, key_path):
    key = key_path.read_bytes()
    path = rel.save(tmp_path / "r.json", key=key_path)
    doc = _doc(path)
    rec = doc["integrity"]
    body = {k: v for k, v in doc.items() if k != "integrity"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                       allow_nan=False).encode("ascii")
    assert rec["hmac_sha256"] == hmac.new(key, b"dpreg-sscp-release\x00" + canon,
                                          hashlib.sha256).hexdigest()
    assert rec["key_id"] == hashlib.sha256(b"dpreg-key-id\x00" + key).hexdigest()[:16]
    assert key.hex() not in path.read_text() and key not in path.read_bytes()
    loaded = SSCPRelease.load(path, key=key_path)
    assert loaded.integrity.status == "verified-hmac" and loaded.integrity.key_id == rec["key_id"]
    assert SSCPRelease.load(path, key=key).integrity.status == "verified-hmac"
    # without the key: said to be keyed, marked unverified (its digest still checked)
    unkeyed = SSCPRelease.load(path)
    assert unkeyed.integrity.status == "unverified" and rec["key_id"] in unkeyed.integrity.detail
    assert "without the key" in unkeyed.integrity.detail
    # the wrong key
    other = tmp_path / "other.key"
    other_id = create_key_file(other)
    with pytest.raises(ReleaseIntegrityError, match=f"{rec['key_id']}.*{other_id}") as info:
        SSCPRelease.load(path, key=other)
    assert other.read_bytes().hex() not in str(info.value) and key.hex() not in str(info.value)
    # an edit with the digest recomputed (anyone can): the MAC catches it
    _one_number(doc)
    doc["integrity"]["sha256"] = _canonical_digest(doc)
    _write(path, doc)
    with pytest.raises(ReleaseIntegrityError, match="HMAC-SHA256 does not match"):
        SSCPRelease.load(path, key=key_path)
    assert SSCPRelease.load(path).integrity.status == "unverified"  # no key: cannot tell
    # ... and with the MAC stripped: a given key requires a MAC
    del doc["integrity"]["hmac_sha256"], doc["integrity"]["key_id"]
    _write(path, doc)
    with pytest.raises(ReleaseIntegrityError, match="only an unkeyed digest"):
        SSCPRelease.load(path, key=key_path)
    assert SSCPRelease.load(path).integrity.status == "verified-digest"  # the documented limit


def test_expected_digest(tmp_path, rel):
    path = rel.save(tmp_path / "r.json")
    digest = _doc(path)["integrity"]["sha256"]
    assert SSCPRelease.load(path, expect_digest=digest.upper()).integrity.status == \
        "verified-pinned"
    with pytest.raises(ReleaseIntegrityError, match="not the expected one"):
        SSCPRelease.load(path, expect_digest="0" * 64)
    with pytest.raises(InvalidParameterError, match="64 hex digits"):
        SSCPRelease.load(path, expect_digest="abc")
    res = RUNNER.invoke(app, ["regress", str(path), FORMULA, "--expect-digest", digest])
    assert res.exit_code == 0 and "expected SHA-256 digest" in res.output
    res = RUNNER.invoke(app, ["regress", str(path), FORMULA, "--expect-digest", "1" * 64])
    assert res.exit_code == 1


def test_older_files_have_no_record(tmp_path, rel, key_path):
    """Versions 1 and 2 (earlier dpreg) load as before, marked 'no integrity record'; a digest
    obtained out of band still pins them; a key demands a MAC they do not have."""
    doc = rel.to_dict()
    del doc["integrity"]
    doc["format_version"] = 2
    path = _write(tmp_path / "old.json", doc)
    loaded = SSCPRelease.load(path)
    assert loaded.integrity.status == "no-record" and "older dpreg" in loaded.integrity.detail
    assert "UNVERIFIED" in str(loaded.regress(FORMULA, se="plugin").summary())
    res = RUNNER.invoke(app, ["regress", str(path), FORMULA])
    assert res.exit_code == 0 and "no integrity record" in res.output
    assert SSCPRelease.load(path, expect_digest=_canonical_digest(doc)).integrity.status == \
        "verified-pinned"
    with pytest.raises(ReleaseIntegrityError, match="no MAC"):
        SSCPRelease.load(path, key=key_path)
    assert SSCPRelease.load(path, key=key_path, verify=False).integrity.status == "unverified"


def test_key_parameter_errors_never_show_the_key(tmp_path, rel):
    path = rel.save(tmp_path / "r.json")
    secret = os.urandom(31)
    with pytest.raises(InvalidParameterError) as info:
        SSCPRelease.load(path, key=secret)
    assert secret.hex() not in str(info.value) and repr(secret) not in str(info.value)
    with pytest.raises(InvalidInputError, match="does not exist"):
        SSCPRelease.load(path, key=tmp_path / "missing.key")
    short = tmp_path / "short.key"
    short.write_bytes(secret)
    with pytest.raises(InvalidInputError, match="not a dpreg key file") as info:
        rel.save(tmp_path / "s.json", key=short)
    assert secret.hex() not in str(info.value)
    with pytest.raises(InvalidParameterError, match="verify"):
        SSCPRelease.load(path, verify="no")


def test_cli_key_init_and_signed_releases(tmp_path):
    key = tmp_path / "k.key"
    res = RUNNER.invoke(app, ["key", "init", str(key)])
    assert res.exit_code == 0, res.output
    assert key.stat().st_size == 32
    if os.name == "posix":
        assert stat.S_IMODE(key.stat().st_mode) == 0o600
    secret = key.read_bytes()
    kid = hashlib.sha256(b"dpreg-key-id\x00" + secret).hexdigest()[:16]
    assert kid in res.output and secret.hex() not in res.output
    again = RUNNER.invoke(app, ["key", "init", str(key)])
    assert again.exit_code == 1 and "already exists" in again.output
    assert key.read_bytes() == secret
    shown = RUNNER.invoke(app, ["key", "id", str(key)])
    assert shown.exit_code == 0 and shown.output.strip() == kid
    data = tmp_path / "d.csv"
    _frame().to_csv(data, index=False)
    out = tmp_path / "r.json"
    res = RUNNER.invoke(app, ["release-cov", str(data), "-c", "x,z,y", "-b", "x=0:1", "-b",
                              "z=0:1", "-b", "y=0:1", "-e", "1", "-d", "1e-6", "--out", str(out),
                              "--key", str(key), "--json"])
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)["integrity"]
    assert info["key_id"] == kid and info["sha256"] == _doc(out)["integrity"]["sha256"]
    assert secret.hex() not in res.output
    res = RUNNER.invoke(app, ["regress", str(out), FORMULA, "--key", str(key)])
    assert res.exit_code == 0 and "verified (HMAC-SHA256)" in res.output
    res = RUNNER.invoke(app, ["regress", str(out), FORMULA], env={"DPREG_KEY": str(key)})
    assert res.exit_code == 0 and "verified (HMAC-SHA256)" in res.output
    res = RUNNER.invoke(app, ["regress", str(out), FORMULA, "--json"])
    assert res.exit_code == 0
    assert json.loads(res.stdout)["release_integrity"]["status"] == "unverified"
    assert "without the key" in res.stderr
    for text in (res.output, res.stderr):
        assert secret.hex() not in text


def test_canonical_form_is_independent_of_numpy_types(rel):
    """What save hashes is exactly what load re-serialises (floats round-trip via repr)."""
    doc = rel.to_dict()
    assert doc["integrity"]["sha256"] == _canonical_digest(json.loads(json.dumps(doc)))
    tweaked = copy.deepcopy(doc)
    tweaked["noisy_scaled"][0][0] = np.nextafter(tweaked["noisy_scaled"][0][0], np.inf).item()
    assert _canonical_digest(tweaked) != doc["integrity"]["sha256"]
