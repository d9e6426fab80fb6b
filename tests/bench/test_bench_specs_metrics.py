"""Specs (TOML shipped in the package), metrics and generators of the harness."""

import math

import numpy as np
import pandas as pd
import pytest

from dpreg.bench import generators as G
from dpreg.bench import list_specs, load_spec, parse_spec, spec_names
from dpreg.bench.kinds import KINDS
from dpreg.bench.metrics import c_hat, c_hat_rows, coverage, mean_with_inf, r2, summarise_ratio
from dpreg.exceptions import InvalidInputError

MINIMAL = """
name = "t"
title = "t"
paper = "p"
figure = "f"
kind = "simple-synthetic"
seed = 1
summary = "s"
[data]
generator = "alabi-uniform"
n = 50
sigma_x2 = 0.05
sigma_e2 = 0.01
epsilon = 1.0
[evaluation]
datasets = 2
trials = 3
[[panels]]
name = "a"
vary = "n"
values = [30, 40]
[[methods]]
name = "OLS"
method = "ols"
[quick.evaluation]
trials = 2
"""


@pytest.mark.parametrize("name", spec_names())
@pytest.mark.parametrize("quick", [False, True])
def test_every_shipped_spec_parses_and_has_cells(name, quick):
    spec = load_spec(name, quick=quick)
    assert spec.name == name and spec.kind in KINDS and spec.notes
    cells = KINDS[spec.kind]().cells(spec)
    assert cells and [c["cell"] for c in cells] == list(range(len(cells)))
    assert all("panel" in c and "cost" in c for c in cells)


def test_list_specs_has_the_twelve_reproductions():
    assert len(list_specs()) == 12  # alabi-fig6-noclip since issue 21
    assert {s["kind"] for s in list_specs()} == set(KINDS)


def test_quick_overrides_merge_and_change_the_hash():
    full, quick = parse_spec(MINIMAL), parse_spec(MINIMAL, quick=True)
    assert full["evaluation"] == {"datasets": 2, "trials": 3}
    assert quick["evaluation"] == {"datasets": 2, "trials": 2}  # tables merge key by key
    assert full.hash != quick.hash and len(full.hash) == 12
    assert parse_spec(MINIMAL).hash == full.hash  # stable
    assert parse_spec(MINIMAL.replace("n = 50", "n = 51")).hash != full.hash


@pytest.mark.parametrize("text,match", [
    (MINIMAL.replace('kind = "simple-synthetic"', 'kind = "nope"'), "kind must be one of"),
    (MINIMAL.replace('seed = 1', 'seed = -1'), "seed must be"),
    (MINIMAL.replace('summary = "s"', ''), "missing required keys"),
    (MINIMAL.replace('method = "ols"', 'method = "magic"'), "unknown method"),
    (MINIMAL.replace('vary = "n"', 'vary = "colour"'), "varies unknown"),
    (MINIMAL.replace('generator = "alabi-uniform"', 'generator = "x"'), "unknown generator"),
    ("name = [", "not valid TOML"),
    # a [[methods]] key the harness does not read is refused, never silently defaulted: the
    # retired spelling of DP-GD's rounds (now n_iter, the library's one spelling) and a typo
    (MINIMAL.replace('method = "ols"', 'method = "dp-gd"\nsteps = 80'),
     r"\[\[methods\]\] 'OLS' has the key 'steps', which is not a key of a \[\[methods\]\] table"),
    (MINIMAL.replace('method = "ols"', 'method = "dp-gd"\nn_itre = 80'),
     "did you mean 'n_iter'"),
])
def test_malformed_specs_are_rejected(text, match):
    with pytest.raises(InvalidInputError, match=match):
        parse_spec(text)


def test_dp_gd_rounds_are_n_iter_in_the_harness():
    spec = parse_spec(MINIMAL.replace('method = "ols"', 'method = "dp-gd"\nn_iter = 40'))
    assert spec["methods"][0]["n_iter"] == 40
    fig5 = load_spec("alabi-fig5")
    gd = [m for m in fig5["methods"] if m["method"] == "dp-gd"]
    assert len(gd) == 2 and all(m["n_iter"] == 80 and "steps" not in m for m in gd)


def test_unknown_name():
    with pytest.raises(InvalidInputError, match="unknown reproduction"):
        load_spec("alabi-fig99")


# ----------------------------------------------------------------------------- metrics
def test_c_hat_is_the_ceil_qT_order_statistic():
    e = np.array([0.5, -0.1, 0.3, 0.9, -0.2])  # |e| sorted: .1 .2 .3 .5 .9
    assert c_hat(e, 0.68) == 0.5  # ⌈0.68·5⌉ = 4th
    assert c_hat(e, 0.6) == 0.3  # ⌈3⌉ = 3rd (no rounding up of an exact product)
    assert c_hat(e, 1.0) == 0.9
    assert c_hat([1.0, np.nan, 2.0], 0.68) == math.inf  # ⊥ = +∞: 3rd of 3
    assert c_hat([1.0, np.nan, 2.0, 3.0], 0.5) == 2.0
    rows = np.array([[0.5, -0.1, 0.3, 0.9, -0.2], [1, 2, np.nan, np.nan, np.nan]])
    assert list(c_hat_rows(rows, 0.68)) == [0.5, math.inf]
    with pytest.raises(InvalidInputError):
        c_hat([], 0.5)


def test_means_medians_and_other_metrics():
    assert mean_with_inf([1, 2, np.inf]) == math.inf and mean_with_inf([1, 3]) == 2
    s = summarise_ratio([1.0, 2.0, 3.0, np.inf])
    assert s["mean"] == math.inf and s["share_inf"] == 0.25 and s["median"] == 2.0
    assert r2([1, 2, 3], [1, 2, 3]) == 1.0 and r2([1, 2, 3], [2, 2, 2]) == 0.0
    assert coverage([0, 1, np.nan], [2, 3, 1], 1.5) == pytest.approx(2 / 3)


# ----------------------------------------------------------------------------- generators
def test_alabi_uniform_moments():
    x, y = G.alabi_uniform(200_000, sigma_x2=0.05, sigma_e2=0.005, rng=0)
    assert x.mean() == pytest.approx(0.5, abs=2e-3) and x.var() == pytest.approx(0.05, rel=0.02)
    assert np.all((x >= 0) & (x <= 1) & (y >= 0) & (y <= 1))
    slope = np.polyfit(x, y, 1)[0]
    assert slope == pytest.approx(0.5, abs=0.01)
    with pytest.raises(InvalidInputError):
        G.alabi_uniform(10, sigma_x2=0.1, sigma_e2=0.01)
    # σ(p̂₂₅) is the sd of the OLS prediction over repeated samples
    preds = []
    g = np.random.default_rng(1)
    for _ in range(2000):
        xs, ys = G.alabi_uniform(100, sigma_x2=0.05, sigma_e2=0.01, rng=g)
        b, a = np.polyfit(xs, ys, 1)
        preds.append(a + 0.25 * b)
    sd = G.alabi_true_prediction_sd(100, sigma_x2=0.05, sigma_e2=0.01)
    assert np.std(preds) == pytest.approx(sd, rel=0.08)


def test_sarathy_vadhan_designs_and_bain_and_make_regression():
    x = G.sv_design("two-point", 11, rng=0)
    assert sorted(x).count(0.0) == 5 and sorted(x).count(1.0) == 6
    u = G.sv_design("uniform", 50, rng=0)
    assert np.unique(u).size == 50
    c = G.sv_design("clustered", 50, rng=0)
    assert np.all((c >= 0) & (c <= 1))
    d = G.bain_simulated(1000, d=5, coefficient=2.0, rng=0)
    assert d.X.shape == (1000, 4)
    b = d.bounds()
    for j in range(4):
        lo, hi = b[f"x{j + 1}"]
        assert lo < d.X[:, j].min() and d.X[:, j].max() < hi
    assert b["y"][0] < d.y.min() and d.y.max() < b["y"][1]
    X, y, w = G.make_regression_like(500, n_features=3, noise=1.0, bias=2.0, rng=0)
    assert X.shape == (500, 3) and w.shape == (3,)
    resid = y - X @ w - 2.0
    assert resid.std() == pytest.approx(1.0, rel=0.15)


def test_summaries_of_every_kind_survive_empty_frames():
    for name in spec_names():
        spec = load_spec(name, quick=True)
        out = KINDS[spec.kind]().summarise(spec, pd.DataFrame())
        assert isinstance(out, pd.DataFrame) and len(out) == 0
