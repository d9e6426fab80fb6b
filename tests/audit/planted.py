"""Planted privacy bugs (TEST-ONLY: never importable from the ``dpreg`` package).

Each :class:`Planted` bundles a buggy variant of a dpreg release, the correct release on the
same configuration, a neighbouring pair chosen to expose the bug, and the claim the correct
release makes.  The auditor must FAIL the buggy variant (ε_LCB > claimed ε) and PASS the
correct one.  The bugs are the ones privacy reviews and the papers' reference code actually
contain (listed in docs/audit.md), re-created from dpreg's own building blocks (so that only the bug
differs), by patching one name inside a dpreg module for the duration of a sampler call, or by
calling a dpreg function with a wrong input (data-derived bounds, NaN data).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from unittest import mock

import numpy as np

from _densities import reference_code_widened
from dpreg._random import simulation_generator
from dpreg.audit import Claim, loop_sampler
from dpreg.audit.neighbours import (
    NeighbourPair,
    design_pairs,
    distance_pairs,
    grouped_pairs,
    matching_pair,
    quantile_pairs,
    reachability_pairs,
    scalar_pairs,
    simple_pairs,
)
from dpreg.mechanisms import (
    exp_quantile,
    laplace,
    ptr_threshold,
    sample_piecewise_constant,
)
from dpreg.mechanisms.sensitivity import sum_sensitivity
from dpreg.privacy import GDP, PureDP

Sampler = Callable[[dict[str, Any], int, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class Planted:
    name: str
    bug: str
    source: str
    buggy: Sampler
    correct: Sampler | None
    pair: NeighbourPair
    claim: Claim
    samples: int = 100_000
    names: tuple[str, ...] | None = None
    notes: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------- 1. noise ×0.8
def _laplace_scaled(data, n, rng, *, factor):
    base = np.full(n, float(data["value"]))
    return np.asarray(laplace(base, sensitivity=factor * 1.0, epsilon=1.0, rng=rng))


# ----------------------------------------------------------------------------- 2. diffprivlib #105
SUM_BOUNDS = (-1.0, 3.0)


def _noisy_sum(data, n, rng, *, buggy):
    lo, hi = SUM_BOUNDS
    sens = max(abs(lo), abs(lo)) if buggy else sum_sensitivity(SUM_BOUNDS, "add-remove")
    total = float(np.clip(data["z"], lo, hi).sum())
    return np.asarray(laplace(np.full(n, total), sensitivity=sens, epsilon=1.0, rng=rng))


# ----------------------------------------------------------------------------- 3/4. Theil-Sen budgets
TS_RANGE = (-0.5, 1.5)
TS_X_EVAL = (0.25, 0.26)   # two close targets: the pair that exposes one exposes both


def _theil_sen_targets(data, n, rng, *, epsilon, pairs, design_seed=0, per_target=None,
                       forget_k=False):
    """The DPExpTheilSen prediction release assembled from dpreg's pieces (as
    ``replicate_predictions`` does).  ``per_target`` overrides the ε of each target (the bug
    keeps the full ε for each); ``forget_k`` runs the median at ε_t/2 instead of ε_t/(2k)."""
    from dpreg.simple._theil_sen import dp_median_of_doubled
    from dpreg.simple.pairs import doubled_pair_values, make_design

    x, y = np.asarray(data["x"], float), np.asarray(data["y"], float)
    design = make_design(x.size, pairs, np.random.default_rng(design_seed))
    eps_t = PureDP(epsilon).split([1, 1])[0].epsilon if per_target is None else per_target
    k = 1 if forget_k else design.k
    cols = []
    for xv in TS_X_EVAL:
        vals = doubled_pair_values(x, y, design, estimand="predictions", x_eval=xv)
        cols.append(np.asarray(dp_median_of_doubled(vals, median="exp", epsilon=eps_t, k=k,
                                                    lo=TS_RANGE[0], hi=TS_RANGE[1], rng=rng,
                                                    size=n)))
    return np.column_stack(cols)


# ----------------------------------------------------------------------------- 5. even-M widened median
def _wide_median(data, n, rng, *, reference, epsilon=2.0, theta=0.01):
    if reference:
        breaks, p = reference_code_widened(data["z"], epsilon, 0.0, 1.0, theta)
        with np.errstate(divide="ignore"):
            return np.asarray(sample_piecewise_constant(breaks, np.log(p / np.diff(breaks)),
                                                        rng=rng, size=n))
    return np.asarray(exp_quantile(data["z"], epsilon=epsilon, lo=0.0, hi=1.0, theta=theta,
                                   rng=rng, size=n))


# ----------------------------------------------------------------------------- 6/13. BoostedAdaSSP
MV_EPS, MV_DELTA = 1.0, 1e-6


def _boosted(data, rng, *, bug, x_norm_bound=None):
    import dpreg.multivariate.boosted as boosted_mod
    from dpreg.mechanisms import gaussian
    from dpreg.multivariate import boosted_adassp
    from dpreg.multivariate._common import noisy_symmetric

    X = np.asarray(data["X"], float)
    bnd = math.sqrt(X.shape[1]) if x_norm_bound is None else x_norm_bound
    with ExitStack() as stack:
        if bug == "mu-multiplier":
            # the 2024 author code: noise sd = Δ·μ instead of Δ/μ
            def as_multiplier(b):
                return GDP(1.0 / b.mu)

            stack.enter_context(mock.patch.object(
                boosted_mod, "gaussian",
                lambda v, *, sensitivity, budget, rng: gaussian(
                    v, sensitivity=sensitivity, budget=as_multiplier(budget), rng=rng)))
            stack.enter_context(mock.patch.object(
                boosted_mod, "noisy_symmetric",
                lambda M, *, sensitivity, budget, rng: noisy_symmetric(
                    M, sensitivity=sensitivity, budget=as_multiplier(budget), rng=rng)))
        elif bug == "sensitivity-1":
            # google-research private_kendall: sensitivity 1 whatever the clipping norms
            for name in ("gram_sensitivity", "lambda_min_sensitivity"):
                stack.enter_context(mock.patch.object(boosted_mod, name, lambda *a, **k: 1.0))
            stack.enter_context(mock.patch.object(boosted_mod, "xty_sensitivity",
                                                  lambda *a, **k: 1.0))
        res = boosted_adassp(X, data["y"], epsilon=MV_EPS, delta=MV_DELTA, x_norm_bound=bnd,
                             tau=1.0, n_rounds=3, rng=rng)
    if res.failed:
        return None
    # the release: the coefficients and the T noisy Xᵀg vectors (res.extra)
    return np.concatenate([np.asarray(res.params, float),
                           np.ravel(res.extra["xtg_releases"])])


# ----------------------------------------------------------------------------- 7. PTR scale
PTR_EPS = math.log(3.0) / 2.0   # TukeyEM's PTR share at the paper's ε = ln 3
PTR_DELTA = 1e-5


def _ptr(data, rng, *, buggy):
    from dpreg.mechanisms import ptr_test

    if not buggy:
        return float(ptr_test(data["distance"], epsilon=PTR_EPS, delta=PTR_DELTA, rng=rng))
    thr = ptr_threshold(PTR_EPS, PTR_DELTA)
    # google-research tukey.py: Laplace scale ε₁ instead of 1/ε₁
    return float(data["distance"] + rng.laplace(0.0, PTR_EPS) > thr)


# ----------------------------------------------------------------------------- 8-11, 14. noisy statistics
NS_EPS = 2.0
BOX = (0.0, 1.0)


def _ns_correct(data, n, rng, *, bounds=BOX, x_eval=None):
    from dpreg.replicates import replicate_predictions

    return replicate_predictions("noisy-stats", data["x"], data["y"], epsilon=NS_EPS,
                                 x_bounds=bounds, y_bounds=bounds, trials=n, x_eval=x_eval,
                                 rng=rng)


def _ns_from_stats(stats, sens, xb, yb, n_rec, n, rng, x_eval=(0.25, 0.75), bottom=None):
    from dpreg.simple._noisy_stats import LineStatistics, release_noisy_stats

    parts = PureDP(NS_EPS).split([1, 1, 1])
    batch = LineStatistics(*(np.full(n, v) for v in (n_rec, *stats)))
    draw = release_noisy_stats(batch, x_bounds=xb, y_bounds=yb, parts=parts, rng=rng,
                               sensitivities=sens)
    out = np.column_stack([draw["slope"] * xv + draw["intercept"] for xv in x_eval])
    failed = draw["reason"] != "" if bottom is None else np.full(n, bool(bottom))
    if bottom is not None:  # ⊥ decided by the caller; otherwise use the noisy slope anyway
        with np.errstate(invalid="ignore", divide="ignore"):
            slope = draw["noisy_ncov"] / draw["noisy_nvar"]
            icpt = stats[1] - slope * stats[0]
        out = np.column_stack([slope * xv + icpt for xv in x_eval])
    out[failed] = np.nan
    return out


def _ns_bottom_unnoised(data, n, rng):
    from dpreg.simple._noisy_stats import _clipped_stats, noisy_stats_sensitivities

    x, y = np.asarray(data["x"], float), np.asarray(data["y"], float)
    stats = _clipped_stats(x, y, BOX, BOX)
    sens = noisy_stats_sensitivities(BOX, BOX, x.size)
    # ⊥ decided from the exact nvar(x) (leaks whether x is constant)
    return _ns_from_stats(stats, sens, BOX, BOX, x.size, n, rng, bottom=stats[2] <= 0.0)


def _ns_bounds_from_data(data, n, rng):
    x, y = np.asarray(data["x"], float), np.asarray(data["y"], float)
    xb, yb = (float(x.min()), float(x.max())), (float(y.min()), float(y.max()))
    from dpreg.replicates import replicate_predictions

    return replicate_predictions("noisy-stats", x, y, epsilon=NS_EPS, x_bounds=xb, y_bounds=yb,
                                 trials=n, x_eval=(0.3, 0.7), rng=rng)


def _ns_clip_unused(data, n, rng):
    from dpreg.simple._noisy_stats import noisy_stats_sensitivities

    x, y = np.asarray(data["x"], float), np.asarray(data["y"], float)
    _ = np.clip(x, *BOX), np.clip(y, *BOX)  # clipped ... and then not used
    xbar, ybar = float(x.mean()), float(y.mean())
    dx = x - xbar
    stats = (xbar, ybar, float(dx @ dx), float(dx @ (y - ybar)))
    return _ns_from_stats(stats, noisy_stats_sensitivities(BOX, BOX, x.size), BOX, BOX, x.size,
                          n, rng)


def _ns_nan_through(data, n, rng):
    import dpreg.simple._noisy_stats as ns_mod
    from dpreg.simple._noisy_stats import _clipped_stats, noisy_stats_sensitivities

    def raw_laplace(value, *, sensitivity, epsilon, rng):  # noise without the finiteness check
        v = np.asarray(value, dtype=float)
        return v + rng.laplace(0.0, np.asarray(sensitivity, dtype=float) / epsilon, size=v.shape)

    x, y = np.asarray(data["x"], float), np.asarray(data["y"], float)  # no finiteness check
    stats = _clipped_stats(x, y, BOX, BOX)  # np.clip keeps NaN
    # the release draws all its noise through laplace_rows: replace that one entry point
    with np.errstate(invalid="ignore"), mock.patch.object(ns_mod, "laplace_rows", raw_laplace):
        return _ns_from_stats(stats, noisy_stats_sensitivities(BOX, BOX, x.size), BOX, BOX,
                              x.size, n, rng)


SYM = (-1.0, 1.0)


def _ns_ru_squared(data, n, rng, *, buggy):
    from dpreg.simple._noisy_stats import _clipped_stats, noisy_stats_sensitivities

    x, y = np.asarray(data["x"], float), np.asarray(data["y"], float)
    stats = _clipped_stats(x, y, SYM, SYM)
    sens = noisy_stats_sensitivities(SYM, SYM, x.size)
    if buggy:  # Alabi et al. Alg. 1: (1 − 1/n)·r_u², valid only for r_l = 0
        sens = {k: (1 - 1 / x.size) * SYM[1] ** 2 for k in sens}
    with np.errstate(invalid="ignore"):
        return _ns_from_stats(stats, sens, SYM, SYM, x.size, n, rng)


def _nan_pair() -> NeighbourPair:
    p = simple_pairs(20)[1]
    y2 = np.asarray(p.d["y"], float).copy()
    y2[-1] = np.nan
    return NeighbourPair("nan-record", "one record's y is NaN", p.d, {"x": p.d["x"], "y": y2})


def _sym_corner_pair() -> NeighbourPair:
    n = 20
    x = np.full(n, -1.0)
    y = np.full(n, -1.0)
    x2, y2 = x.copy(), y.copy()
    x2[-1], y2[-1] = 1.0, 1.0
    x[: n // 2] = 0.0  # some spread so the noisy slope is usually defined
    x2[: n // 2] = 0.0
    return NeighbourPair("corner-sym", "bounds [−1, 1]²: one point from (−1, −1) to (1, 1)",
                         {"x": x, "y": y}, {"x": x2, "y": y2})


# ----------------------------------------------------------------------------- 12. DP-GD without clipping
def _dpgd(data, rng, *, clip):
    from dpreg.mechanisms import gaussian
    from dpreg.multivariate import dp_gradient_descent

    if clip:
        res = dp_gradient_descent(data["X"], data["y"], epsilon=MV_EPS, delta=MV_DELTA,
                                  clip_norm=1.0, n_iter=5, rng=rng)
        return None if res.failed else np.asarray(res.params, float)
    # the same loop as dpreg.multivariate.dp_gradient_descent (GDP accounting, replace-one,
    # constant rate 0.5, tail average) -- but the per-example gradients are NOT clipped
    X, y = np.asarray(data["X"], float), np.asarray(data["y"], float)
    n, d = X.shape
    T = 5
    per_round = GDP.from_approx(MV_EPS, MV_DELTA).split([1.0] * T)[0]
    theta = np.zeros(d)
    tail = np.zeros(d)
    for t in range(T):
        total = X.T @ (2.0 * (X @ theta - y))
        noisy = np.asarray(gaussian(total, sensitivity=2.0, budget=per_round, rng=rng))
        theta = theta - 0.5 * noisy / n
        if t >= T // 2:
            tail += theta
    return tail / (T - T // 2)


# ----------------------------------------------------------------------------- 15. a group released twice
def _group_tables(data, n, rng, *, twice):
    """The two-group fit_by_group table (DPIntercept, ε = 1 per group); the bug lists group A
    under two keys that are one group -- ``groups=[1, 1.0, 2]`` before the canonical-key rule
    -- so A's records are released twice while the table claims ε by parallel composition."""
    from dpreg.audit.registry import grouped_tables

    return grouped_tables(data, n, rng, method="dp-intercept", epsilon=1.0, x_bounds=(0.0, 1.0),
                          y_bounds=(0.0, 1.0), copies={"A": 2} if twice else None)


# ----------------------------------------------------------------------------- 16. seeded float noise
def _seeded_laplace_reach(data, n, rng, *, float_noise):
    """Issue 15 item 7: a seeded Laplace release drawn with numpy's float sampler (the bug)
    vs the float-safe seeded release, audited with Mironov's reachability event."""
    from dpreg.audit.registry import _s_laplace_reachability

    return _s_laplace_reachability(data, n, rng, epsilon=1.0,
                                   mode="simulation" if float_noise else "seeded")


# ----------------------------------------------------------------------------- registry
def _mech(fn: Callable[..., Any], **kw: Any) -> Sampler:
    return partial(fn, **kw)


def _loop(fn: Callable[..., Any], **kw: Any) -> Sampler:
    return partial(loop_sampler, partial(fn, **kw))


def planted_bugs() -> list[Planted]:
    sp = {p.name: p for p in simple_pairs(20)}
    qp = {p.name: p for p in quantile_pairs()}
    ar = {p.name: p for p in design_pairs(20, 2, relation="add-remove")}
    ro = {p.name: p for p in design_pairs(20, 2, relation="replace-one")}
    ar_wide = {p.name: p for p in design_pairs(20, 2, relation="add-remove", seed=3)}
    gdp = Claim.from_budget(GDP.from_approx(MV_EPS, MV_DELTA))
    sum_pair = NeighbourPair("add-top", "add a record at the upper bound 3",
                             {"z": np.full(10, 0.5)}, {"z": np.append(np.full(10, 0.5), 3.0)},
                             "add-remove")
    steep = sp["steep-pair"]
    # scale the design so rows use the clipping norm 10 of the sensitivity-1 bug
    big = ar_wide["corner"]
    scale = np.array([1.0, 7.0, 7.0])
    big = NeighbourPair("corner ×7", "add-remove corner record, features scaled by 7 (norm <= 10)",
                        {"X": big.d["X"] * scale, "y": big.d["y"]},
                        {"X": big.d_prime["X"] * scale, "y": big.d_prime["y"]}, "add-remove")
    thr = ptr_threshold(PTR_EPS, PTR_DELTA)
    table_pair = grouped_pairs([sp["corner"]], simple_pairs(20, seed=1)[1].d)[0]
    return [
        Planted("noise-x0.8", "Laplace noise scale multiplied by 0.8",
                "generic implementation slip", _mech(_laplace_scaled, factor=0.8),
                _mech(_laplace_scaled, factor=1.0), scalar_pairs(1.0)[0],
                Claim.from_budget(PureDP(1.0))),
        Planted("sum-bound-twice", "sensitivity of a clipped sum from the lower bound twice: "
                "max(|lo|, |lo|) instead of max(|lo|, |hi|)", "diffprivlib issue #105",
                _mech(_noisy_sum, buggy=True), _mech(_noisy_sum, buggy=False), sum_pair,
                Claim.from_budget(PureDP(1.0))),
        Planted("theil-sen-target-not-halved", "each of the two predictions gets the full ε "
                "instead of ε/2", "Alabi et al. reference code (per-target eps passed through)",
                _mech(_theil_sen_targets, epsilon=2.0, pairs="all", per_target=2.0),
                _mech(_theil_sen_targets, epsilon=2.0, pairs="all"), steep,
                Claim.from_budget(PureDP(2.0)), names=("p25", "p26")),
        Planted("theil-sen-k-missing", "k-matching Theil-Sen median run at ε_t/2 instead of "
                "ε_t/(2k) (the ε/k for k matchings is missing)",
                "Alabi et al. code/paper budget bookkeeping",
                _mech(_theil_sen_targets, epsilon=2.0, pairs=3, design_seed=7, forget_k=True),
                _mech(_theil_sen_targets, epsilon=2.0, pairs=3, design_seed=7),
                matching_pair(), Claim.from_budget(PureDP(2.0)), names=("p25", "p26")),
        Planted("wide-even-m", "widened median for even M inserts two copies of the median "
                "midpoint", "Alabi et al. reference code dpMedianExpWide",
                _mech(_wide_median, reference=True), _mech(_wide_median, reference=False),
                qp["alabi-even"], Claim.from_budget(PureDP(2.0))),
        Planted("boosted-mu-multiplier", "BoostedAdaSSP noise sd Δ·μ instead of Δ/μ",
                "amazon-science/boostedadassp (2024)",
                _loop(_boosted, bug="mu-multiplier"), _loop(_boosted, bug=None), ar["corner"],
                gdp, samples=5_000),
        Planted("tukey-ptr-scale", "TukeyEM's PTR test with Laplace scale ε/2 instead of 2/ε",
                "google-research dp_regression/tukey.py",
                _loop(_ptr, buggy=True), _loop(_ptr, buggy=False), distance_pairs(thr)[0],
                Claim.from_budget(PureDP(PTR_EPS)), notes={"epsilon_ptr": PTR_EPS}),
        Planted("bottom-from-unnoised", "⊥ decided from the exact nvar(x) instead of the noisy "
                "one", "generic implementation slip (DPSuffStats ⊥ rule)",
                _mech(_ns_bottom_unnoised), _mech(_ns_correct), sp["corner"],
                Claim.from_budget(PureDP(NS_EPS))),
        Planted("bounds-from-data", "x and y bounds taken from the data (min, max)",
                "the AdaSSP baseline of Amin et al., common misuse",
                _mech(_ns_bounds_from_data), _mech(_ns_correct, x_eval=(0.3, 0.7)),
                sp["clipped-outlier"], Claim.from_budget(PureDP(NS_EPS))),
        Planted("clip-unused", "data clipped to the bounds but the unclipped values used",
                "generic implementation slip", _mech(_ns_clip_unused), _mech(_ns_correct),
                sp["clipped-outlier"], Claim.from_budget(PureDP(NS_EPS))),
        Planted("nan-through-clip", "NaN passes validation and np.clip (the release becomes "
                "NaN only when a record is NaN)", "generic implementation slip",
                _mech(_ns_nan_through), None, _nan_pair(),
                Claim.from_budget(PureDP(NS_EPS)), notes={"correct_on": "the clean side only"}),
        Planted("gd-no-clipping", "DP gradient descent without per-example gradient clipping",
                "generic DP-SGD slip (Abadi et al. 2016 clipping omitted)",
                _loop(_dpgd, clip=False), _loop(_dpgd, clip=True), ro["clipped-outlier"], gdp,
                samples=5_000),
        Planted("boosted-sensitivity-1", "BoostedAdaSSP sensitivities hard-coded to 1 while "
                "rows are clipped to norm 10", "google-research private_kendall/boosted_adassp.py", _loop(_boosted, bug="sensitivity-1", x_norm_bound=10.0),
                _loop(_boosted, bug=None, x_norm_bound=10.0), big, gdp, samples=10_000),
        Planted("seeded-float-laplace", "seeded Laplace release with numpy's floating-point "
                "noise: the set of reachable outputs depends on the value", "Mironov 2012; "
                "dpreg before issue 15 (seeded mode)",
                _mech(_seeded_laplace_reach, float_noise=True),
                _mech(_seeded_laplace_reach, float_noise=False), reachability_pairs(1.0)[0],
                Claim.from_budget(PureDP(1.0)), names=("reachable from D only",)),
        Planted("noisy-stats-ru-squared", "DPSuffStats sensitivity (1 − 1/n)·r_u² with r_l < 0 "
                "(bounds [−1, 1])", "Alabi et al. Alg. 1 / Lemma 18",
                _mech(_ns_ru_squared, buggy=True), _mech(_ns_ru_squared, buggy=False),
                _sym_corner_pair(), Claim.from_budget(PureDP(NS_EPS))),
        Planted("group-key-twice", "fit_by_group releases one group's records under two keys "
                "that are the same group (1 and 1.0) and claims ε by parallel composition",
                "dpreg's own fit_by_group before the canonical-key rule (issue 15 item 1)",
                _mech(_group_tables, twice=True), _mech(_group_tables, twice=False),
                table_pair, Claim.from_budget(PureDP(1.0)), samples=20_000),
    ]


def by_name() -> dict[str, Planted]:
    return {p.name: p for p in planted_bugs()}


def draw(sampler: Sampler, data: dict[str, Any], n: int, seed: int) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the audit simulations' generator (float noise where the bug is in the arithmetic)
        return np.asarray(sampler(data, n, simulation_generator(seed)), dtype=float)


__all__ = ["Planted", "planted_bugs", "by_name", "draw"]
