"""Release files are validated, never trusted (issue 16 item 4).

A corpus of malformed and crafted ``release.json`` files -- truncated, keys deleted, wrong
types, reversed bounds, negative/NaN σ, an edited ε claim, deep nesting, NaN/Infinity literals,
non-UTF-8 bytes, wrong versions, extra keys -- must each give a one-line InvalidInputError from
``SSCPRelease.load`` and exit code 1 without a traceback from ``dpreg regress``; the legitimately
valid ones (older version-1 files, extra optional fields, more noise than needed) must load and
give the same regression as the original.  Saved files are strict JSON.

The content checks stand behind the integrity record (tests/test_release_integrity.py): the
corpus runs on files without a record (format version 2, as earlier dpreg versions wrote them,
still read) and again on version-3 files whose digest the crafter recomputed after the edit
(anyone can: the unkeyed digest detects edits, not crafting).
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from dpreg import ApproxDP
from dpreg._release_file import read_json
from dpreg.cli import app
from dpreg.covariance import SSCPRelease, release_sscp
from dpreg.covariance.io import seal_release_dict
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms.gaussian import gaussian_sigma

RUNNER = CliRunner()
FORMULA = "y ~ x + z"


def _frame(n=400):
    g = np.random.default_rng(3)
    df = pd.DataFrame({"x": g.uniform(0, 1, n), "z": g.uniform(0, 1, n)})
    df["y"] = np.clip(0.2 + 0.5 * df.x - 0.2 * df.z + g.normal(0, 0.05, n), 0, 1)
    return df


BOUNDS = {"x": (0.0, 1.0), "z": (0.0, 1.0), "y": (0.0, 1.0)}


def _release(**kw):
    opts = dict(columns=["x", "z", "y"], bounds=BOUNDS, epsilon=2.0, delta=1e-6, random_state=5)
    opts.update(kw)
    return release_sscp(_frame(), **opts)


@pytest.fixture(scope="module")
def base():
    return _release()


def _unsealed(doc, version=2):
    """A release document without its integrity record (how dpreg wrote version 2)."""
    out = copy.deepcopy(doc)
    out.pop("integrity", None)
    out["format_version"] = version
    return out


@pytest.fixture(scope="module")
def base_doc(base):
    return _unsealed(base.to_dict())


def _resealed(content):
    """The crafter's re-computation of the (unkeyed) integrity record after an edit; content
    that has no canonical form (NaN/Infinity, text) is returned unchanged."""
    if not isinstance(content, dict):
        return content
    try:
        return seal_release_dict(content)
    except (TypeError, ValueError):
        return content


def _write(path: Path, content) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content)
    else:
        path.write_text(json.dumps(content, allow_nan=True))
    return path


def _edit(doc, fn):
    out = copy.deepcopy(doc)
    fn(out)
    return out


def _set(path, value):
    def fn(doc):
        obj = doc
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value
    return fn


def _delete(path):
    def fn(doc):
        obj = doc
        for key in path[:-1]:
            obj = obj[key]
        del obj[path[-1]]
    return fn


def _claim_epsilon(value):
    """Edit the ε claim consistently in both places (the crafted 'better privacy' file)."""
    def fn(doc):
        doc["privacy"]["budget"]["epsilon"] = value
        doc["metadata"]["epsilon"] = value
    return fn


def _shrink_sigma(doc):
    doc["metadata"]["sigma"] /= 2
    doc["privacy"]["details"]["sigma"] /= 2


def _asymmetric(doc):
    doc["noisy_scaled"][0][1] += 1.0


def _edit_matrix(doc):
    doc["matrix"][1][1] *= 1.5


def _negate_sigma(doc):
    doc["metadata"]["sigma"] = -abs(doc["metadata"]["sigma"])
    doc["privacy"]["details"]["sigma"] = doc["metadata"]["sigma"]


def _nan_sigma_v1(doc):
    doc["format_version"] = 1
    doc["metadata"]["sigma"] = math.nan
    doc["privacy"]["details"]["sigma"] = math.nan


def _to_replace_one(doc):
    doc["privacy"]["neighbouring"] = "replace-one"
    doc["metadata"]["neighbouring"] = "replace-one"


def _text(doc):
    return json.dumps(doc, indent=1, allow_nan=True)


# (name, content builder, regex the one-line error must match)
BAD = [
    ("truncated", lambda d: _text(d)[: len(_text(d)) // 2], "not readable JSON"),
    ("empty", lambda d: "", "not readable JSON"),
    ("plain text", lambda d: "hello world\n", "not readable JSON"),
    ("top-level array", lambda d: [], "not a dpreg SSCP release"),
    ("top-level null", lambda d: None, "not a dpreg SSCP release"),
    ("no format", lambda d: _edit(d, _delete(["format"])), "not a dpreg SSCP release"),
    ("foreign format", lambda d: _edit(d, _set(["format"], "other")), "not a dpreg SSCP"),
    ("newer version", lambda d: _edit(d, _set(["format_version"], 4)), "newer dpreg"),
    ("version as string", lambda d: _edit(d, _set(["format_version"], "2")), "format_version"),
    ("version as bool", lambda d: _edit(d, _set(["format_version"], True)), "format_version"),
    ("no columns", lambda d: _edit(d, _delete(["columns"])), "'columns' is missing"),
    ("columns a string", lambda d: _edit(d, _set(["columns"], "x,z,y")), "'columns'"),
    ("no column", lambda d: _edit(d, _set(["columns"], [])), "'columns'"),
    ("duplicate columns", lambda d: _edit(d, _set(["columns"], ["x", "x", "y"])), "'columns'"),
    ("intercept column", lambda d: _edit(d, _set(["columns"], ["intercept", "z", "y"])),
     "'columns'"),
    ("numeric column name", lambda d: _edit(d, _set(["columns"], [1, "z", "y"])),
     r"'columns\[0\]'"),
    ("bounds missing a column", lambda d: _edit(d, _delete(["bounds", "z"])), "'bounds'"),
    ("reversed bounds", lambda d: _edit(d, _set(["bounds", "x"], [1.0, 0.0])),
     r"bounds\['x'\]' must be \[lo, hi\] with lo < hi"),
    ("empty bounds", lambda d: _edit(d, _set(["bounds", "x"], [0.5, 0.5])), "lo < hi"),
    ("bounds as text", lambda d: _edit(d, _set(["bounds", "x"], "0:1")), r"bounds\['x'\]"),
    ("NaN bound (v1)", lambda d: _edit(_edit(d, _set(["format_version"], 1)),
                                       _set(["bounds", "x"], [math.nan, 1.0])),
     r"bounds\['x'\]\[0\]"),
    ("matrix row missing", lambda d: _edit(d, _set(["noisy_scaled"], d["noisy_scaled"][:3])),
     "'noisy_scaled' must be a 4x4"),
    ("ragged row", lambda d: _edit(d, _set(["noisy_scaled", 2], [1.0])),
     r"'noisy_scaled\[2\]'"),
    ("asymmetric", lambda d: _edit(d, _asymmetric), "symmetric"),
    ("entry as text", lambda d: _edit(d, _set(["noisy_scaled", 1, 1], "3.0")),
     r"noisy_scaled\[1\]\[1\]"),
    ("entry as bool", lambda d: _edit(d, _set(["noisy_scaled", 1, 1], True)),
     r"noisy_scaled\[1\]\[1\]"),
    ("NaN entry (v1)", lambda d: _edit(_edit(d, _set(["format_version"], 1)),
                                       _set(["noisy_scaled", 1, 1], math.nan)),
     r"noisy_scaled\[1\]\[1\]"),
    ("Infinity literal in a v2 file", lambda d: _edit(d, _set(["noisy_scaled", 1, 1], math.inf)),
     "strict JSON"),
    ("integer too large for a float", lambda d: _text(d).replace(
        json.dumps(d["noisy_scaled"][1][1]), "1" + "0" * 400, 1), "noisy_scaled"),
    ("integer with 5000 digits", lambda d: _text(d).replace(
        json.dumps(d["noisy_scaled"][1][1]), "1" * 5000, 1), "not readable JSON"),
    ("edited matrix", lambda d: _edit(d, _edit_matrix), "'matrix' must be the repaired"),
    ("matrix removed", lambda d: _edit(d, _set(["matrix"], None)), "'matrix' must be"),
    ("no privacy block", lambda d: _edit(d, _delete(["privacy"])), "'privacy' is missing"),
    ("pure budget", lambda d: _edit(d, _set(["privacy", "budget"], {"kind": "pure",
                                                                    "epsilon": 2.0})),
     "privacy.budget"),
    ("edited epsilon claim", lambda d: _edit(d, _claim_epsilon(0.1)),
     "'metadata.sigma' must be >= .*privacy claim was edited"),
    ("epsilon edited in one place", lambda d: _edit(d, _set(["privacy", "budget", "epsilon"],
                                                            0.5)), "metadata.epsilon/delta"),
    ("negative epsilon", lambda d: _edit(d, _claim_epsilon(-1.0)), "privacy.budget.epsilon"),
    ("delta 0", lambda d: _edit(d, _set(["privacy", "budget", "delta"], 0.0)),
     "privacy.budget.delta"),
    ("delta above 1", lambda d: _edit(d, _set(["privacy", "budget", "delta"], 1.5)),
     "privacy.budget.delta"),
    ("unknown relation", lambda d: _edit(d, _set(["privacy", "neighbouring"], "bogus")),
     "privacy.neighbouring"),
    ("relation switched", lambda d: _edit(d, _to_replace_one), "metadata.sensitivity"),
    ("negative sigma", lambda d: _edit(d, _negate_sigma), "'metadata.sigma'"),
    ("NaN sigma (v1)", lambda d: _edit(d, _nan_sigma_v1), "'metadata.sigma'"),
    ("halved sigma", lambda d: _edit(d, _shrink_sigma), "privacy claim was edited"),
    ("sigma only in details edited", lambda d: _edit(d, _set(["privacy", "details", "sigma"],
                                                             1.0)), "privacy.details.sigma"),
    ("edited sensitivity", lambda d: _edit(d, _set(["metadata", "sensitivity"], 1.0)),
     "metadata.sensitivity|privacy.details.sensitivity"),
    ("n_public under add-remove", lambda d: _edit(d, _set(["metadata", "n_public"], 400)),
     "n is private"),
    ("edited n_noisy", lambda d: _edit(d, _set(["metadata", "n_noisy"], 10.0)),
     "metadata.n_noisy"),
    ("unknown calibration", lambda d: _edit(d, _set(["metadata", "calibration"], "bogus")),
     "metadata.calibration"),
    ("classical with epsilon >= 1", lambda d: _edit(d, _set(["metadata", "calibration"],
                                                            "classical")),
     "metadata.calibration|details.calibration"),
    ("other mechanism", lambda d: _edit(d, _set(["privacy", "mechanism"], "Laplace")),
     "privacy.mechanism"),
    ("psd_tol 2", lambda d: _edit(d, _set(["metadata", "psd_tol"], 2.0)), "metadata.psd_tol"),
    ("extra top-level field", lambda d: _edit(d, _set(["evil"], "x")), "unknown field 'evil'"),
    ("duplicate key", lambda d: _text(d).replace('"sigma":', '"sigma": 0.001, "sigma":', 1),
     "repeats the key 'sigma'"),
    ("deep nesting", lambda d: "[" * 100_000 + "]" * 100_000, "nests arrays/objects"),
    ("deep nesting in metadata", lambda d: _edit(d, _set(["metadata", "extra"],
                                                         json.loads("[" * 40 + "]" * 40))),
     "nests arrays/objects"),
    ("non-UTF-8 bytes", lambda d: _text(d).replace('"x"', '"\u00e9"').encode("latin-1"),
     "not UTF-8"),
    ("UTF-16", lambda d: _text(d).encode("utf-16"), "not UTF-8"),
]
assert len(BAD) >= 28


def _replace_one_release():
    return _release(neighbouring="replace-one")


def _legacy(doc):
    """How dpreg wrote files before format version 2 (non-strict JSON allowed)."""
    out = copy.deepcopy(doc)
    out["format_version"] = 1
    return out


def _inf_v1():
    rel = _release(epsilon=math.inf)
    doc = _unsealed(rel.to_dict(), 1)
    doc["privacy"]["budget"]["epsilon"] = math.inf
    doc["metadata"]["epsilon"] = math.inf
    return rel, doc


def _more_noise(doc):
    doc["metadata"]["sigma"] *= 2
    doc["privacy"]["details"]["sigma"] *= 2


GOOD = [
    ("as saved", lambda rel, d: d),
    ("version 1", lambda rel, d: _legacy(d)),
    ("no version field", lambda rel, d: _edit(_legacy(d), _delete(["format_version"]))),
    ("extra privacy field", lambda rel, d: _edit(d, _set(["privacy", "statement"],
                                                         "added by a later dpreg"))),
    ("extra details field", lambda rel, d: _edit(d, _set(["privacy", "details", "note"], 1))),
    ("extra metadata field", lambda rel, d: _edit(d, _set(["metadata", "owner"], "agency"))),
    ("more noise than needed", lambda rel, d: _edit(d, _more_noise)),
]


@pytest.mark.parametrize("sealed", [False, True], ids=["version 2", "version 3 resealed"])
@pytest.mark.parametrize("name,build,match", BAD, ids=[b[0] for b in BAD])
def test_bad_release_file_is_one_line_error(tmp_path, base_doc, name, build, match, sealed):
    content = build(base_doc if not sealed else _unsealed(base_doc, 3))
    if sealed:
        if not isinstance(content, dict) or _resealed(content) is content:
            pytest.skip("text or non-finite content: no digest to recompute (version 2 run)")
        content = _resealed(content)
    path = _write(tmp_path / "release.json", content)
    with pytest.raises(InvalidInputError, match=match) as info:
        SSCPRelease.load(path)
    assert "\n" not in str(info.value)
    res = RUNNER.invoke(app, ["regress", str(path), FORMULA])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output and "error:" in res.output


@pytest.mark.parametrize("sealed", [False, True], ids=["version 2", "version 3 resealed"])
@pytest.mark.parametrize("name,build", GOOD, ids=[g[0] for g in GOOD])
def test_valid_release_files_load(tmp_path, base, base_doc, name, build, sealed):
    content = build(base, base_doc if not sealed else _unsealed(base_doc, 3))
    if sealed:
        if content.get("format_version", 1) < 3:
            pytest.skip("files of versions 1 and 2 carry no integrity record")
        content = _resealed(content)
    path = _write(tmp_path / "release.json", content)
    loaded = SSCPRelease.load(path)
    assert loaded.integrity.status == ("verified-digest" if sealed else "no-record")
    pd.testing.assert_series_equal(loaded.regress(FORMULA, se="plugin").params,
                                   base.regress(FORMULA, se="plugin").params)
    assert loaded.privacy == base.privacy
    res = RUNNER.invoke(app, ["regress", str(path), FORMULA])
    assert res.exit_code == 0, res.output


def test_replace_one_release_round_trips_and_checks_n(tmp_path):
    rel = _replace_one_release()
    path = rel.save(tmp_path / "r.json")
    loaded = SSCPRelease.load(path)
    assert loaded.metadata["n_public"] == 400
    pd.testing.assert_series_equal(loaded.regress(FORMULA, se="plugin").params,
                                   rel.regress(FORMULA, se="plugin").params)
    doc = json.loads(path.read_text())
    for bad in (-5, 0, 4.5, None, True, 4000):
        doc["metadata"]["n_public"] = bad
        _write(path, _resealed(doc))
        with pytest.raises(InvalidInputError, match="metadata.n_public"):
            SSCPRelease.load(path)


@pytest.mark.filterwarnings("ignore::dpreg.exceptions.PrivacyLeakWarning")  # eps = inf: exact reference
def test_infinite_epsilon_files(tmp_path):
    rel, legacy = _inf_v1()
    path = rel.save(tmp_path / "r.json")
    text = path.read_text()
    json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))  # strict
    assert json.loads(text)["privacy"]["budget"]["epsilon"] == "inf"
    assert SSCPRelease.load(path).privacy.budget == ApproxDP(math.inf, 1e-6)
    old = _write(tmp_path / "old.json", legacy)  # version 1 wrote Infinity
    assert "Infinity" in old.read_text()
    assert not SSCPRelease.load(old).privacy.private


def test_saved_files_are_strict_json(tmp_path, base):
    path = base.save(tmp_path / "r.json")
    doc = json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"{c} in file"))
    assert doc["format_version"] == 3


def test_failed_release_round_trips(tmp_path):
    sens = 4.0  # 3 columns plus intercept, add-remove
    sigma = gaussian_sigma(sens, ApproxDP(2.0, 1e-6))
    from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement

    privacy = PrivacyStatement(budget=ApproxDP(2.0, 1e-6), neighbouring=Neighbouring.ADD_REMOVE,
                               mechanism="Analyze Gauss SSCP")
    meta = {"epsilon": 2.0, "delta": 1e-6, "neighbouring": "add-remove", "sensitivity": sens,
            "calibration": "analytic", "sigma": sigma, "n_noisy": -1.0, "n_public": None}
    rel = SSCPRelease(columns=["x", "z", "y"], bounds=list(BOUNDS.values()),
                      noisy_scaled=-np.eye(4), privacy=privacy, metadata=meta)
    loaded = SSCPRelease.load(rel.save(tmp_path / "r.json"))
    assert loaded.failed and loaded.regress(FORMULA).failed
    doc = json.loads((tmp_path / "r.json").read_text())
    doc["matrix"] = np.eye(4).tolist()  # a failed release claiming a matrix
    with pytest.raises(InvalidInputError, match="'matrix' must be null"):
        SSCPRelease.load(_write(tmp_path / "r.json", _resealed(doc)))


def test_size_limit_directory_and_missing_file(tmp_path, base):
    path = base.save(tmp_path / "r.json")
    with pytest.raises(InvalidInputError, match="limit is 100"):
        read_json(path, max_bytes=100)
    with pytest.raises(InvalidInputError, match="is a directory"):
        SSCPRelease.load(tmp_path)
    with pytest.raises(InvalidInputError, match="cannot be read"):
        SSCPRelease.load(tmp_path / "missing.json")
    res = RUNNER.invoke(app, ["regress", str(tmp_path), FORMULA])
    assert res.exit_code == 1 and "Traceback" not in res.output


def test_column_names_from_a_file_are_never_code(tmp_path, base_doc):
    """A crafted column name is only ever a string: a formula reaches it in backquotes."""
    name = "__import__('os').system('touch SENTINEL')"
    doc = copy.deepcopy(base_doc)
    doc["columns"][0] = name
    doc["bounds"] = {name if k == "x" else k: v for k, v in doc["bounds"].items()}
    path = _write(tmp_path / "r.json", doc)
    rel = SSCPRelease.load(path)
    res = rel.regress(f"y ~ `{name}` + z", se="plugin")
    assert list(res.params.index) == ["intercept", name, "z"]
    with pytest.raises(InvalidInputError):
        rel.regress(f"y ~ {name} + z")
    assert not (Path.cwd() / "SENTINEL").exists()
