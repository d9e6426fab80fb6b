"""DP Theil-Sen on tied data (issue 32, items 6 and 7).

Pairwise values that coincide (exactly collinear data, rounded heights, integer grids) are
outputs of the exponential-mechanism median with their own score: as ε grows the release
concentrates on a tied median and, in the mechanism's ε → ∞ limit, *is* the exact median --
the ε = ∞ answer -- on every path (materialising, fused all-pairs, exact-fast, per group, the
harness engine).  Before the fix the mechanism was continuous on [lo, hi]: a single value had
no mass whatever ε, so y = x released a slope anywhere in the output range (−1.7, 2.7 at
ε = 1000) and a tied median was replaced by a draw from the nearest interval of positive length.

The public API treats a budget above the cap ``EPSILON_MAX`` (100) as ε = ∞ (the exact, NOT
PRIVATE answer), so the tests call it at ε <= 100 to exercise the mechanism, and reach the
mechanism's own ε → ∞ limit (ε = 1e9 per rank) through the samplers that the public path
calls: ``exp_quantile_sorted`` (materialising all pairs), ``exp_quantile_rows`` (matchings, the
harness) and ``AllPairsEM`` (exact-fast).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpreg
from dpreg import PrivacyLeakWarning, fit_by_group
from dpreg.bench.engines import all_pairs_multiset, em_median_rows, kmatch_multisets
from dpreg.mechanisms.exponential import exp_quantile_rows, exp_quantile_sorted
from dpreg.simple import theil_sen
from dpreg.simple.fast import AllPairsEM, pair_counter
from dpreg.simple.pairs import (
    all_pairs,
    doubled_pair_values,
    make_design,
    sorted_doubled_all_pairs,
)
from dpreg.simple.ranges import default_prediction_range

INF = math.inf
#: the largest private budget of the public API (above it: the exact, non-private answer)
EPS_TOP = 100.0
#: a mechanism ε per rank far beyond any private budget: the mechanism's own ε → ∞ limit
EPS_LIMIT = 1e9


def _fit(x, y, eps, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return theil_sen(x, y, epsilon=eps, **kw)


def _heights(n: int, seed: int = 1886) -> tuple[np.ndarray, np.ndarray]:
    """Galton-like heights: parents' heights in Galton's eleven classes, children's rounded to
    his half-inch grid offset by 0.2 (61.7, 62.2, ...): heavy ties in x, y and the pairwise
    values."""
    g = np.random.default_rng(seed)
    classes = np.array([64.0, 64.5, 65.5, 66.5, 67.5, 68.5, 69.5, 70.5, 71.5, 72.5, 73.0])
    mp = g.normal(68.3, 1.8, n)
    x = classes[np.abs(mp[:, None] - classes[None, :]).argmin(axis=1)]
    c = 0.65 * (mp - 68.3) + 68.1 + g.normal(0.0, 2.2, n)
    y = np.round(np.clip(np.round((c - 61.7) / 0.5) * 0.5 + 61.7, 61.7, 73.7), 1)
    return x, y


def _limit_all_pairs(x, y, *, estimand, x_eval, lo, hi, algorithm, theta=0.0, seed=0):
    """One draw of the all-pairs DP Theil-Sen median mechanism at ε = EPS_LIMIT per rank,
    through the sampler the public path uses (materialising: the sorted doubled multiset and
    exp_quantile_sorted; exact-fast: AllPairsEM on the exact pair values)."""
    gen = np.random.default_rng(seed)
    if algorithm == "materialise":
        s = sorted_doubled_all_pairs(x, y, estimand=estimand, x_eval=x_eval, lo=lo, hi=hi)
        return exp_quantile_sorted(s, epsilon=EPS_LIMIT, lo=lo, hi=hi, theta=theta, rng=gen)
    pc = pair_counter(x, y, estimand=estimand, x_eval=x_eval)
    return AllPairsEM(pc, epsilon=EPS_LIMIT, lo=lo, hi=hi, theta=theta, rng=gen).sample()


def _middle(doubled: np.ndarray, lo: float, hi: float) -> tuple[float, float]:
    """The two middle values of the clipped doubled multiset (its set of medians)."""
    s = np.sort(np.clip(doubled, lo, hi))
    m = s.size // 2
    return float(s[m - 1]), float(s[m])


# ------------------------------------------------------------------------------ item 6
CASES = [  # (median, pairs, algorithm)
    ("exp", "all", "materialise"), ("exp", "all", "exact-fast"), ("exp", 1, "materialise"),
    ("exp", 3, "materialise"), ("wide", "all", "materialise"), ("wide", "all", "exact-fast"),
    ("wide", 3, "materialise"), ("smooth", "all", "materialise"), ("smooth", 1, "materialise"),
]


@pytest.mark.parametrize("median,pairs,algorithm", CASES)
@pytest.mark.parametrize("estimand", ["predictions", "slope"])
@pytest.mark.parametrize("n", [12, 60])
def test_exactly_collinear_data_release_the_line_at_large_epsilon(median, pairs, algorithm,
                                                                  estimand, n):
    """y = x exactly: every untied pairwise slope is 1 and every prediction is x_eval.  At the
    largest private ε (100) the release is the line (exp: to the last place; wide: within its
    widening θ; smooth: within its noise), for several seeds and output ranges."""
    x = np.linspace(0.0, 1.0, n)
    for seed, rng_out in enumerate([(-2.0, 2.0), (-0.5, 1.5), (-10.0, 3.0)]):
        lo, hi = rng_out if estimand == "predictions" else (-4.0, 4.0)
        kw = dict(output_range=(lo, hi), median=median, pairs=pairs, estimand=estimand,
                  algorithm=algorithm, rng=seed)
        if median == "wide":
            kw["theta"] = 1e-3
        r = _fit(x, x.copy(), EPS_TOP, **kw)
        assert not r.failed
        tol = {"exp": 1e-12, "wide": 4e-3 + 1e-12, "smooth": 1e-3}[median]
        assert abs(r.slope - 1.0) <= tol, (seed, r.slope)
        if estimand == "predictions":
            assert abs(r.intercept) <= tol
            for xe, p in r.released_predictions.items():
                assert abs(p - xe) <= tol / 2 + 1e-12


@pytest.mark.parametrize("estimand", ["predictions", "slope"])
def test_exactly_collinear_large_n_on_the_default_path(estimand):
    """n = 500 takes the exact-fast path by default (algorithm="auto").  y = x, and y = 0.25 +
    3x on a dyadic grid of x, are exactly collinear: every exact pair slope is the same value,
    so before the fix every release was uniform over the output range.  (y = 0.25 + 2x with x
    from linspace is collinear only up to rounding: its exact values spread below the last
    place, which let the continuous mechanism concentrate there too -- kept as a regression
    check.)"""
    x = np.linspace(0.0, 1.0, 500)
    xd = np.arange(500) / 512
    for xs, ys, slope in ((x, x.copy(), 1.0), (xd, 0.25 + 3.0 * xd, 3.0),
                          (x, 0.25 + 2.0 * x, 2.0)):
        for eps in (3.0, EPS_TOP):
            r = _fit(xs, ys, eps, output_range=(-4.0, 4.0), estimand=estimand, rng=3)
            assert r.privacy.details["algorithm"] == "exact-fast"
            assert r.slope == pytest.approx(slope, abs=1e-12), (slope, eps)


def test_exactly_collinear_through_regress_and_the_cli(tmp_path):
    n = 500
    x = np.linspace(0.0, 1.0, n)
    df = pd.DataFrame({"x": x, "y": x})
    for method in ("theil-sen-exp", "theil-sen-wide", "theil-sen-smooth"):
        res = dpreg.regress(df, "y ~ x", method=method, epsilon=EPS_TOP,
                            bounds={"x": (0, 1), "y": (0, 1)}, random_state=4)
        assert abs(res.params["x"] - 1.0) <= (1e-12 if method == "theil-sen-exp" else 0.05)
    path = tmp_path / "yx.csv"
    df.to_csv(path, index=False)
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "src"
    env = dict(os.environ, PYTHONPATH=str(src) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               COLUMNS="200", PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, "-m", "dpreg.cli", "fit", str(path), "--y", "y",
                          "--x", "x", "-m", "theil-sen-exp", "-e", "100", "-b", "x=0:1",
                          "-b", "y=0:1", "--seed", "4", "--json"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert not body["failed"]
    assert body["coef"]["x"] == pytest.approx(1.0, abs=1e-12)
    assert body["intercept"] == pytest.approx(0.0, abs=1e-12)


def test_exactly_collinear_groups_through_fit_by_group():
    """Per group (fit_by_group, local and reference backends) at an ordinary ε = 3: groups
    with y = x exactly, of 300 rows (materialising) and 1,000 rows (exact-fast), release the
    line -- exp to the last place, wide within its widening -- never a slope of the range's
    noise with no failure flag (before the fix: slopes like −1.7 for theil-sen-exp)."""
    frames = []
    for key, n in enumerate((300, 1000)):
        x = np.linspace(0.0, 1.0, n)
        frames.append(pd.DataFrame({"g": key, "x": x, "y": x.copy()}))
    df = pd.concat(frames, ignore_index=True)
    for method, tol in (("theil-sen-exp", 1e-12), ("theil-sen-wide", 0.05)):
        for backend in ("local", "reference"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = fit_by_group(df, "g", "x", "y", method=method, epsilon=3.0,
                                   bounds={"x": (0.0, 1.0), "y": (0.0, 1.0)}, groups=[0, 1],
                                   random_state=7, backend=backend)
            assert not out["failed"].any()
            assert np.all(np.abs(out["slope"].to_numpy() - 1.0) <= tol), (method, backend, out)
            assert np.all(np.abs(out["intercept"].to_numpy()) <= tol)


# ------------------------------------------------------------------------------ item 7
@pytest.mark.parametrize("algorithm,n", [("materialise", 200), ("exact-fast", 200),
                                         ("exact-fast", 928)])
@pytest.mark.parametrize("estimand", ["predictions", "slope"])
def test_heights_limit_is_the_non_private_estimate(algorithm, n, estimand):
    """Rounded heights: the median of the pairwise values is tied.  The mechanism's ε → ∞
    limit (ε = 1e9 per rank, through the sampler of the path) is the ε = ∞ release -- the
    non-private Theil-Sen estimate -- exactly, and the widened one lies within θ of it (before
    the fix: 65.998 for the tied 66.0).  Publicly, a budget above the cap is that exact answer,
    and n = 928 at ε = 100 already releases the tied slope exactly."""
    x, y = _heights(n)
    lo, hi = (55.0, 80.0) if estimand == "predictions" else (-3.0, 3.0)
    kw = dict(output_range=(lo, hi), x_bounds=(62.0, 75.0), estimand=estimand,
              algorithm=algorithm)
    exact = _fit(x, y, INF, **kw)
    points = list(exact.released_predictions) if estimand == "predictions" else [None]
    want = ([exact.released_predictions[xe] for xe in points] if estimand == "predictions"
            else [exact.slope])
    for seed in range(3):
        for xe, w in zip(points, want):
            got = _limit_all_pairs(x, y, estimand=estimand, x_eval=xe, lo=lo, hi=hi,
                                   algorithm=algorithm, seed=seed)
            assert got == w, (seed, xe, got, w)
            wide = _limit_all_pairs(x, y, estimand=estimand, x_eval=xe, lo=lo, hi=hi,
                                    algorithm=algorithm, theta=0.01, seed=seed)
            assert abs(wide - w) <= 0.01 + 1e-12
        above_cap = _fit(x, y, 1e9, rng=seed, **kw)
        assert (above_cap.slope, above_cap.intercept) == (exact.slope, exact.intercept)
    if estimand == "slope":  # the ε = ∞ answer is Theil-Sen's estimator (scipy's definition)
        assert exact.slope == pytest.approx(stats.theilslopes(y, x).slope, abs=1e-12)
        if n == 928:
            assert all(_fit(x, y, EPS_TOP, rng=s, **kw).slope == exact.slope for s in range(3))


def _tied_dataset(g: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Integer x and y on small grids with repeated rows."""
    n0 = int(g.integers(3, 14))
    x = g.integers(0, 5, n0).astype(float)
    y = (g.integers(-2, 3) * x + g.integers(-3, 4, n0)).astype(float)
    rep = g.integers(1, 4, n0)
    return np.repeat(x, rep), np.repeat(y, rep)


@pytest.mark.parametrize("estimand", ["slope", "predictions"])
def test_property_large_epsilon_draw_is_the_exact_median_on_tied_integer_data(estimand):
    """Random integer data with heavy ties, all pairs and 1-2 matchings: in the mechanism's
    ε → ∞ limit (ε = 1e9 per rank, exp_quantile_rows as the materialising path calls it) the
    exp draw lies in the set of medians of the clipped doubled multiset, [two middle values],
    and is the exact median whenever the two coincide (the case for every tied median); the
    widened draw is within θ of that set; ε = ∞ (public) gives the non-private Theil-Sen
    estimate, and so does any budget above the cap."""
    g = np.random.default_rng(32)
    lo, hi = -6.0, 6.0
    coincide = 0
    for trial in range(60):
        x, y = _tied_dataset(g)
        if np.unique(x).size < 2:
            continue
        n = x.size
        xe = 1.5 if estimand == "predictions" else None
        pairs = "all" if trial % 3 else int(g.integers(1, 3))
        design = make_design(n, pairs, np.random.default_rng(trial)) if pairs != "all" \
            else all_pairs(n)
        doubled = doubled_pair_values(x, y, design, estimand=estimand, x_eval=xe)
        m_lo, m_hi = _middle(doubled, lo, hi)
        coincide += m_lo == m_hi
        kw = dict(output_range=(lo, hi), estimand=estimand, pairs=pairs, algorithm="materialise")
        if estimand == "predictions":
            kw["x_eval"] = (xe, 3.0)

        def value(res, xe=xe):
            return res.slope if estimand == "slope" else res.released_predictions[xe]

        exact = value(_fit(x, y, INF, rng=trial, **kw))
        assert exact == 0.5 * (m_lo + m_hi)
        if estimand == "slope" and pairs == "all":
            ref = stats.theilslopes(y, x).slope
            assert exact == pytest.approx(min(max(ref, lo), hi), abs=1e-12)
        assert value(_fit(x, y, 1e9, rng=trial, **kw)) == exact  # above the cap: exact
        got = float(exp_quantile_rows(doubled[None, :], epsilon=EPS_LIMIT, lo=lo, hi=hi,
                                      rng=trial)[0])
        assert m_lo <= got <= m_hi
        if m_lo == m_hi:
            assert got == exact
        th = 0.05
        wide = float(exp_quantile_rows(doubled[None, :], epsilon=EPS_LIMIT, lo=lo, hi=hi,
                                       theta=th, rng=trial)[0])
        assert m_lo - th - 1e-12 <= wide <= m_hi + th + 1e-12
    assert coincide >= 20  # most trials have a tied median: the property is exercised


def test_property_exact_fast_path_on_tied_integer_data():
    """The exact-fast path (pairs="all") on the same kind of data: in the mechanism's ε → ∞
    limit (AllPairsEM at ε = 1e9 per rank) the release is its own ε = ∞ answer (the exact
    all-pairs median, rounded) whenever the two middle exact values coincide."""
    g = np.random.default_rng(33)
    checked = 0
    for trial in range(25):
        x, y = _tied_dataset(g)
        if np.unique(x).size < 2:
            continue
        for estimand, xe in (("slope", None), ("predictions", 1.5)):
            kw = dict(output_range=(-6.0, 6.0), estimand=estimand, algorithm="exact-fast")
            if xe is not None:
                kw["x_eval"] = (xe, 3.0)
            doubled = doubled_pair_values(x, y, all_pairs(x.size), estimand=estimand,
                                          x_eval=xe)
            m_lo, m_hi = _middle(doubled, -6.0, 6.0)
            exact = _fit(x, y, INF, **kw)
            a = exact.slope if xe is None else exact.released_predictions[xe]
            b = _limit_all_pairs(x, y, estimand=estimand, x_eval=xe, lo=-6.0, hi=6.0,
                                 algorithm="exact-fast", seed=trial)
            if m_lo == m_hi:
                assert b == a
                checked += 1
            else:
                assert m_lo - 1e-12 <= b <= m_hi + 1e-12
    assert checked >= 15


# ------------------------------------------------------------------------ the other paths
def test_per_group_paths_give_the_exact_median_on_tied_data():
    """fit_by_group (local and reference backends) on tied groups at ε = 1e9 -- above the
    cap, the public ε → ∞: the same lines as the single fit at ε = ∞ (groups of 200 rows
    materialise, of 450 take exact-fast; before the fix the mechanism ran there and missed
    the tied medians).  The mechanism's own limit per group is that of the single fit's
    samplers (test_heights_limit_is_the_non_private_estimate)."""
    frames, expect = [], {}
    bounds = {"x": (62.0, 75.0), "y": (55.0, 80.0)}
    for key, n in enumerate((200, 450, 200)):
        x, y = _heights(n, seed=key)
        frames.append(pd.DataFrame({"g": key, "x": x, "y": y}))
        ref = _fit(x, y, INF, output_range=default_prediction_range(bounds["y"]),
                   x_bounds=bounds["x"])
        expect[key] = (ref.slope, ref.intercept)
    df = pd.concat(frames, ignore_index=True)
    for backend in ("local", "reference"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fit_by_group(df, "g", "x", "y", method="theil-sen-exp", epsilon=1e9,
                               bounds=bounds, groups=[0, 1, 2], random_state=5, backend=backend)
        for _, row in out.iterrows():
            assert (row["slope"], row["intercept"]) == expect[row["group"]]


def test_harness_engine_gives_the_exact_median_on_tied_rows():
    """The reproduction harness's batched medians (em_median_rows over k-matching rows and the
    all-pairs row) run the same sampler: at ε = 1e9 each row's draw is its exact median when
    the two middle values coincide."""
    x, y = _heights(120, seed=9)
    lo, hi = 55.0, 80.0
    for ms in (kmatch_multisets(x, y, 3, 40, 1, estimands=(("predictions", 65.25),))[0],
               all_pairs_multiset(x, y, x_eval=65.25)):
        draws = em_median_rows(ms, epsilon_target=1e9, lo=lo, hi=hi, rng=2)
        for r in range(ms.rows):
            vals = ms.values[r, :ms.untied[r]]
            tied = ms.size - ms.untied[r]
            doubled = np.concatenate((vals, vals, np.full(tied, -INF), np.full(tied, INF)))
            m_lo, m_hi = _middle(doubled, lo, hi)
            assert m_lo <= draws[r] <= m_hi
            if m_lo == m_hi:
                assert draws[r] == m_lo


# ------------------------------------------------------------------ a range end at zero
@pytest.mark.parametrize("lo,hi", [(0.0, 1.0), (-1.0, 0.0)])
def test_a_tied_value_at_a_range_end_of_zero_is_released(lo, hi):
    """The rounding cell of 0 as an end of [lo, hi] is half a subnormal spacing (2^-1075):
    computed as a float it underflowed to 0, so a tied median at that end had no mass, and
    constant y with slopes in (0, 1) released a uniform slope at any ε (exact-fast: never
    finished -- its grid gave the end's cell no length).  Now the tie is released: by the
    mechanism at a large ε (both samplers of exp_quantile_rows), and by Theil-Sen at ε = 100
    with n = 200 (a tie at 0 weighs 2^-1075, so it needs a lead of about 745 in the exponent,
    ε·n/8 = 2,500 here, instead of about 37 for a value of the range's size)."""
    from simple.test_simple_fast_degenerate import time_limit

    z = np.array([[0.0] * 9 + [0.5 * (lo + hi)]])
    many = exp_quantile_rows(z, epsilon=1e3, lo=lo, hi=hi, rng=1, draws_per_row=50)
    single = exp_quantile_rows(np.repeat(z, 20, axis=0), epsilon=1e3, lo=lo, hi=hi, rng=2)
    assert np.all(many == 0.0) and np.all(single == 0.0)
    x = np.linspace(0.0, 1.0, 200)
    for algorithm in ("materialise", "exact-fast"):
        with time_limit(120):
            r = _fit(x, np.full(200, 3.0), EPS_TOP, output_range=(lo, hi), estimand="slope",
                     algorithm=algorithm, rng=1)
        assert r.slope == 0.0, algorithm
