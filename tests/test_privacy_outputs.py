"""What every API output says about privacy (issue 15, items 3 and 7).

* ``epsilon=math.inf`` stays available for comparisons, but every output of it says NOT
  PRIVATE: the privacy statement (str, as_dict), results' summary and to_dict, per-group
  tables, SSCP release files.
* Every seeded output states that the guarantee needs a secret seed with >= 128 bits of
  entropy.
* Weak seeds and large δ draw one PrivacyLeakWarning subclass per public call.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.api import METHODS, NEEDS_DELTA, SIMPLE_ONLY
from dpreg.exceptions import PrivacyLeakWarning
from dpreg.privacy import ApproxDP, Neighbouring, PrivacyStatement, PureDP

STRONG = 340282366920938463463374607431768211297  # > 2**127
BOUNDS = {"x": (0, 1), "z": (0, 1), "y": (0, 1)}


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    g = np.random.default_rng(3)
    n = 400
    out = pd.DataFrame({"x": g.uniform(0, 1, n), "z": g.uniform(0, 1, n), "g": np.arange(n) % 4})
    out["y"] = np.clip(0.2 + 0.4 * out.x + 0.2 * out.z + g.normal(0, 0.05, n), 0, 1)
    return out


def flat(text: str) -> str:
    return " ".join(str(text).split())


# ------------------------------------------------------------------ the statement itself
def test_statement_not_private_and_seeded():
    inf = PrivacyStatement(PureDP(math.inf), Neighbouring.REPLACE_ONE, "DPSuffStats")
    assert str(inf).startswith("NOT PRIVATE")
    d = inf.as_dict()
    assert d["private"] is False and d["notice"].startswith("NOT PRIVATE")
    seeded = PrivacyStatement(ApproxDP(1.0, 1e-6), Neighbouring.ADD_REMOVE, "AdaSSP", seeded=True)
    assert "secret" in str(seeded) and "128 bits of entropy" in str(seeded)
    d = seeded.as_dict()
    assert d["private"] is True and "128 bits of entropy" in d["notice"]
    assert "128 bits" in d["randomness_description"] and d["randomness"] == "seeded"
    secure = PrivacyStatement(PureDP(1.0), Neighbouring.REPLACE_ONE, "DPSuffStats")
    assert secure.as_dict()["notice"] == "" and "NOT PRIVATE" not in str(secure)
    assert secure.as_dict()["randomness_description"].startswith("secure")


# ------------------------------------------------------------------ every method via regress
def _fit(df, method, epsilon, seed):
    formula = "y ~ x" if method in SIMPLE_ONLY else "y ~ x + z"
    delta = 1e-6 if method in NEEDS_DELTA or method == "dp-gd" else None
    opts = {"n_models": 20} if method == "tukey-em" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return dpreg.regress(df, formula, method=method, epsilon=epsilon, bounds=BOUNDS,
                             delta=delta, random_state=seed, **opts)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_infinite_epsilon_says_not_private(df, method):
    res = _fit(df, method, math.inf, None)
    text = res.summary().as_text()
    assert text.splitlines()[3].startswith("WARNING:") and "NOT PRIVATE" in text.splitlines()[3]
    assert "NOT PRIVATE" in res.summary().as_html() and "NOT PRIVATE" in res.summary().as_latex()
    out = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert out["private"] is False and out["privacy"]["private"] is False
    assert out["notice"].startswith("NOT PRIVATE")
    assert str(res.privacy).startswith("NOT PRIVATE")


@pytest.mark.parametrize("method", METHODS)
def test_every_method_seeded_states_the_seed_requirement(df, method):
    res = _fit(df, method, 1.0, STRONG)
    assert "128 bits of entropy" in flat(res.summary().as_text())
    out = res.to_dict()
    assert out["private"] is True and "128 bits of entropy" in out["notice"]
    secure = _fit(df, method, 1.0, None)
    assert "128 bits" not in secure.summary().as_text() and secure.to_dict()["notice"] == ""


# ------------------------------------------------------------------ per-group tables
def test_fit_by_group_texts(df):
    for backend in ("local", "reference"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            inf = dpreg.fit_by_group(df, "g", "x", "y", method="noisy-stats", epsilon=math.inf,
                                     bounds=BOUNDS, groups=[0, 1, 2, 3], backend=backend)
        assert inf.attrs["privacy"].startswith("NOT PRIVATE")
        assert inf["privacy"].str.startswith("NOT PRIVATE").all()
        seeded = dpreg.fit_by_group(df, "g", "x", "y", method="noisy-stats", epsilon=1.0,
                                    bounds=BOUNDS, groups=[0, 1, 2, 3], random_state=STRONG,
                                    backend=backend)
        assert "128 bits of entropy" in seeded.attrs["privacy"]
        assert seeded["privacy"].str.contains("128 bits of entropy").all()
        secure = dpreg.fit_by_group(df, "g", "x", "y", method="noisy-stats", epsilon=1.0,
                                    bounds=BOUNDS, groups=[0, 1, 2, 3], backend=backend)
        assert "NOT PRIVATE" not in secure.attrs["privacy"]
        assert "128 bits" not in secure.attrs["privacy"]


# ------------------------------------------------------------------ SSCP release files
def test_release_file_and_its_summary(df, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        rel = dpreg.release_sscp(df, columns=["x", "y"], bounds=BOUNDS, epsilon=math.inf,
                                 delta=1e-6)
    path = rel.save(tmp_path / "inf.json")
    stored = json.loads(path.read_text())["privacy"]
    assert stored["private"] is False and stored["notice"].startswith("NOT PRIVATE")
    loaded = dpreg.SSCPRelease.load(path).regress("y ~ x")
    assert "NOT PRIVATE" in loaded.summary().as_text() and loaded.to_dict()["private"] is False
    rel = dpreg.release_sscp(df, columns=["x", "y"], bounds=BOUNDS, epsilon=1.0, delta=1e-6,
                             random_state=STRONG)
    stored = json.loads(rel.save(tmp_path / "seeded.json").read_text())["privacy"]
    assert "128 bits of entropy" in stored["notice"]
    summary = dpreg.SSCPRelease.load(tmp_path / "seeded.json").regress("y ~ x").summary()
    assert "128 bits of entropy" in flat(summary.as_text())


# ------------------------------------------------------------------ warnings: once per call
def _count(fn, category):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fn()
    return sum(issubclass(w.category, category) for w in got)


def test_weak_seed_warns_once_per_public_call(df):
    from dpreg.exceptions import WeakSeedWarning

    X, y = df[["x", "z"]].to_numpy(), df["y"].to_numpy()
    kw = {"bounds_X": (0, 1), "bounds_y": (0, 1)}
    calls = {
        "regress": lambda s: dpreg.regress(df, "y ~ x + z", method="adassp", epsilon=1,
                                           delta=1e-6, bounds=BOUNDS, random_state=s),
        "AdaSSP.fit": lambda s: dpreg.AdaSSP(epsilon=1, delta=1e-6, random_state=s, **kw).fit(X, y),
        "DPGradientDescent.fit": lambda s: dpreg.DPGradientDescent(
            epsilon=1, delta=1e-6, random_state=s, **kw).fit(X, y),  # fits an inner estimator
        "release_sscp": lambda s: dpreg.release_sscp(df, columns=["x", "y"], bounds=BOUNDS,
                                                     epsilon=1, delta=1e-6, random_state=s),
        "fit_by_group(reference)": lambda s: dpreg.fit_by_group(
            df, "g", "x", "y", method="adassp", epsilon=1, delta=1e-6, bounds=BOUNDS,
            groups=[0, 1, 2, 3], random_state=s, backend="reference"),
    }
    for name, call in calls.items():
        assert _count(lambda c=call: c(1234), WeakSeedWarning) == 1, name
        assert _count(lambda c=call: c(np.random.SeedSequence(7)), WeakSeedWarning) == 1, name
        for ok in (STRONG, None, np.random.default_rng(0)):
            if name.startswith("fit_by_group") and isinstance(ok, np.random.Generator):
                continue  # fit_by_group takes an int or a SeedSequence
            assert _count(lambda c=call, s=ok: c(s), WeakSeedWarning) == 0, (name, ok)


def test_weak_seed_warning_text():
    from dpreg.exceptions import WeakSeedWarning

    with pytest.warns(WeakSeedWarning, match="128 bits") as rec:
        dpreg.NoisyStats(epsilon=1, bounds_X=(0, 1), bounds_y=(0, 1), random_state=42).fit(
            np.linspace(0, 1, 20)[:, None], np.linspace(0, 1, 20))
    text = str(rec[0].message)
    assert "secrets.randbits(128)" in text and "secure mode" in text
    assert issubclass(WeakSeedWarning, PrivacyLeakWarning)


def test_large_delta_warns_once_and_per_public_n(df):
    from dpreg.exceptions import LargeDeltaWarning

    X, y = df[["x", "z"]].to_numpy(), df["y"].to_numpy()
    kw = {"bounds_X": (0, 1), "bounds_y": (0, 1)}
    assert _count(lambda: dpreg.AdaSSP(epsilon=1, delta=0.01, **kw).fit(X, y),
                  LargeDeltaWarning) == 1
    assert _count(lambda: dpreg.regress(df, "y ~ x + z", method="adassp", epsilon=1, delta=0.01,
                                        bounds=BOUNDS), LargeDeltaWarning) == 1
    assert _count(lambda: dpreg.release_sscp(df, columns=["x", "y"], bounds=BOUNDS, epsilon=1,
                                             delta=0.01), LargeDeltaWarning) == 1
    assert _count(lambda: dpreg.fit_by_group(df, "g", "x", "y", method="adassp", epsilon=1,
                                             delta=0.01, bounds=BOUNDS, groups=[0, 1, 2, 3],
                                             backend="reference"), LargeDeltaWarning) == 1
    assert _count(lambda: dpreg.AdaSSP(epsilon=1, delta=1e-6, **kw).fit(X, y),
                  LargeDeltaWarning) == 0
    # δ below 1e-3 but >= 1/n for a public n = 2000 (replace-one)
    g = np.random.default_rng(0)
    Xb = g.uniform(0, 1, (2000, 2))
    yb = np.clip(Xb @ [0.3, 0.2] + g.normal(0, 0.05, 2000), 0, 1)
    with pytest.warns(LargeDeltaWarning, match="1/n for the public n = 2000"):
        dpreg.CovarianceOLS(epsilon=1, delta=6e-4, neighbouring="replace-one", **kw).fit(Xb, yb)
    # add-remove: n is private, so whether δ >= 1/n must not show in a warning
    assert _count(lambda: dpreg.CovarianceOLS(epsilon=1, delta=6e-4, **kw).fit(Xb, yb),
                  LargeDeltaWarning) == 0
    big = pd.DataFrame({"x": Xb[:, 0], "z": Xb[:, 1], "y": yb})
    with pytest.warns(LargeDeltaWarning, match="public n = 2000"):
        dpreg.release_sscp(big, columns=["x", "y"], bounds=BOUNDS, epsilon=1, delta=6e-4,
                           neighbouring="replace-one")
