"""Audit targets: every dpreg mechanism, functional core and estimator, configured with its
hyperparameters, a sampler of independent releases, the claim to test and the built-in
worst-case neighbouring pairs.

The mechanisms' and the per-group pipelines' targets are built here; every method's come from
its spec (:meth:`dpreg._spec.MethodSpec.audit_cases`), which names one of the samplers of
:data:`SAMPLERS` and one of the pair sets of :data:`PAIRS` -- so a new method is audited
without an entry here (by default: its fit through ``regress``, against the budget its spec
says it charges).

A sampler ``sampler(data, n, rng)`` returns an (n, k) array of n independent releases (a row
of NaN is ⊥).  Where dpreg has a vectorised evaluation path that has exactly the distribution
of one release (``size=`` of the medians, :func:`dpreg.replicates.replicate_predictions`,
the replicate runs of gradient descent) it is used; otherwise the public function or the
estimator is called n times (``loop`` targets, which :func:`audit_target` can spread over
worker processes).  Samplers are module-level functions bound with :func:`functools.partial`
so that they can be sent to worker processes.

Randomness: the audited releases are drawn with a
:class:`~dpreg._random.SimulationGenerator` (numpy's floating-point Laplace/Gaussian noise: the
mechanism as designed, fast); the ``*-secure`` targets audit the float-safe release path of
:mod:`dpreg.mechanisms.secure` with the OS CSPRNG, the ``*-seeded`` targets the same path with
bits from a seeded generator (what a seeded release uses), and ``laplace-seeded-reachability``
audits seeded Laplace releases with Mironov's event "the output is reachable by floating-point
noise from f(D) but not from f(D′)" (:mod:`dpreg.audit.reachability`), which floating-point
noise fails with ε_LCB ≈ 7.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from dpreg._random import check_rng, noise_key, simulation_generator
from dpreg._validation import check_int, did_you_mean
from dpreg.audit.estimate import (
    DEFAULT_ALPHA,
    DEFAULT_SAMPLES,
    AuditResult,
    Claim,
    audit_samples,
)
from dpreg.audit.neighbours import (
    NeighbourPair,
    design_pairs,
    distance_pairs,
    grouped_pairs,
    lower_quantile_pairs,
    matching_pair,
    quantile_pairs,
    reachability_pairs,
    scalar_pairs,
    simple_pairs,
    tukey_pairs,
    vector_pairs,
)
from dpreg.exceptions import DPRegError, InvalidInputError, MechanismFailure, UnknownNameError
from dpreg.privacy.budgets import GDP, PureDP

__all__ = ["AuditTarget", "TARGETS", "list_targets", "get_target", "audit_target",
           "loop_sampler", "run_sampler"]

Sampler = Callable[[dict[str, Any], int, np.random.Generator], np.ndarray]

# ----------------------------------------------------------------------------- configuration
EPS_MECH = 1.0          # mechanisms
EPS_SIMPLE = 2.0        # one-x methods (ε/2 per prediction)
EPS_MV, DELTA_MV = 1.0, 1e-6
EPS_LARGE_MV = 30.0     # AdaSSP above the ε where Wang's constants stop holding (≈21.7)
EPS_TUKEY, DELTA_TUKEY = 5.0, 1e-5
EPS_GROUP_MV = 5.0      # per-group AdaSSP: the ε where the add/remove calibration breaks
X_BOUNDS = (0.0, 1.0)
Y_BOUNDS = (0.0, 1.0)
OUTPUT_RANGE = (-0.5, 1.5)   # Alabi et al. Table 1 prediction range
SLOPE_RANGE = (-2.0, 2.0)
PTR_EPS, PTR_DELTA = 1.0, 1e-6


@dataclass(frozen=True)
class AuditTarget:
    """One auditable configuration of a dpreg mechanism, core function or estimator."""

    name: str
    kind: str            # "mechanism" | "core" | "estimator"
    description: str
    claim: Claim
    sampler: Sampler
    pairs: Callable[[], list[NeighbourPair]]
    loop: bool = False
    output_names: tuple[str, ...] = ()
    config: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------- helpers
def loop_sampler(release: Callable[[dict[str, Any], np.random.Generator], Any],
                 data: dict[str, Any], n: int, rng: np.random.Generator) -> np.ndarray:
    """Call ``release(data, rng)`` n times; a :class:`MechanismFailure` or a failed result is a
    NaN row (⊥)."""
    rows: list[np.ndarray | None] = []
    width = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(n):
            try:
                row = release(data, rng)
            except MechanismFailure:
                row = None
            if row is not None:
                row = np.atleast_1d(np.asarray(row, dtype=np.float64))
                width = row.size
            rows.append(row)
    if width == 0:
        width = 1
    out = np.full((n, width), np.nan)
    for i, r in enumerate(rows):
        if r is not None:
            out[i] = r
    return out


def _chunk(args: tuple[Sampler, dict[str, Any], int, np.random.SeedSequence]) -> np.ndarray:
    sampler, data, n, seed = args
    # a simulation generator: float noise where a target audits the idealised mechanism
    return np.asarray(sampler(data, n, simulation_generator(seed)), dtype=np.float64)


def run_sampler(sampler: Sampler, data: dict[str, Any], n: int, seed: np.random.SeedSequence,
                workers: int = 1) -> np.ndarray:
    """n releases, split over ``workers`` processes (each chunk with its own spawned seed)."""
    if workers <= 1 or n < 2000:
        return _chunk((sampler, data, n, seed))
    sizes = [n // workers + (1 if i < n % workers else 0) for i in range(workers)]
    seeds = seed.spawn(workers)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        parts = list(pool.map(_chunk, [(sampler, data, s, sd) for s, sd in zip(sizes, seeds)]))
    return np.concatenate([p.reshape(p.shape[0], -1) for p in parts], axis=0)


def _coefs(res: Any) -> np.ndarray | None:
    if getattr(res, "failed", False):
        return None
    return np.asarray(res.params, dtype=np.float64)


def _estimator_row(est: Any) -> np.ndarray:
    return np.concatenate([[float(est.intercept_)], np.ravel(est.coef_)])


# ----------------------------------------------------------------------------- mechanism samplers
def _seeded_keys(rng: np.random.Generator, n: int) -> list[bytes]:
    """The noise keys of n seeded calls ``laplace(..., rng=g)`` with g the plain (seeded-mode)
    generator on ``rng``'s stream (what n seeded releases draw, one key each)."""
    plain = np.random.Generator(rng.bit_generator)
    return [noise_key(plain) for _ in range(n)]


def _s_laplace(data: dict[str, Any], n: int, rng: np.random.Generator, *, sensitivity: float,
               epsilon: float, mode: str = "simulation") -> np.ndarray:
    """n Laplace releases: ``mode`` "simulation" (float noise), "secure" (os.urandom) or
    "seeded" (n seeded calls, each with its own key from the generator)."""
    from dpreg.mechanisms import laplace
    from dpreg.mechanisms.secure import laplace_batch, secure_laplace

    v = np.atleast_1d(np.asarray(data["value"], dtype=np.float64))
    base = np.broadcast_to(v, (n, v.size)).copy()
    if mode == "secure":
        out, _ = secure_laplace(base, sensitivity=sensitivity, epsilon=epsilon, coords=v.size)
    elif mode == "seeded":
        out = laplace_batch(base, sensitivity=sensitivity, epsilon=epsilon,
                            keys=_seeded_keys(rng, n))
    else:
        out = np.asarray(laplace(base, sensitivity=sensitivity, epsilon=epsilon,
                                 rng=simulation_generator(rng)))
    return out.reshape(n, v.size)


def _s_gaussian(data: dict[str, Any], n: int, rng: np.random.Generator, *, sensitivity: float,
                mu: float, mode: str = "simulation") -> np.ndarray:
    from dpreg.mechanisms import gaussian, gaussian_sigma
    from dpreg.mechanisms.secure import gaussian_batch, secure_gaussian

    v = np.atleast_1d(np.asarray(data["value"], dtype=np.float64))
    base = np.broadcast_to(v, (n, v.size)).copy()
    sigma = gaussian_sigma(sensitivity, GDP(mu))
    if mode == "secure":
        out, _ = secure_gaussian(base, sensitivity=sensitivity, sigma=sigma, coords=v.size)
    elif mode == "seeded":
        out = gaussian_batch(base, sensitivity=sensitivity, sigma=sigma,
                             keys=_seeded_keys(rng, n))
    else:
        out = np.asarray(gaussian(base, sensitivity=sensitivity, budget=GDP(mu),
                                  rng=simulation_generator(rng)))
    return out.reshape(n, v.size)


def _s_laplace_reachability(data: dict[str, Any], n: int, rng: np.random.Generator, *,
                            epsilon: float, mode: str = "seeded") -> np.ndarray:
    """Indicator of Mironov's event for n Laplace releases (Δ = 1) of ``data["value"]``:
    reachable by floating-point noise from f(D) but not from f(D′) (``data["refs"]``)."""
    from dpreg.audit.reachability import reachability_event
    from dpreg.mechanisms import laplace_scale

    out = _s_laplace(data, n, rng, sensitivity=1.0, epsilon=epsilon, mode=mode)
    ref_d, ref_dp = data["refs"]
    return reachability_event(out[:, 0], ref_d, ref_dp, laplace_scale(1.0, epsilon))[:, None]


def _s_exp_quantile(data: dict[str, Any], n: int, rng: np.random.Generator, *, epsilon: float,
                    theta: float, q: float = 0.5) -> np.ndarray:
    from dpreg.mechanisms import exp_quantile

    return np.asarray(exp_quantile(data["z"], q=q, epsilon=epsilon, lo=0.0, hi=1.0,
                                   theta=theta, rng=rng, size=n)).reshape(n, 1)


def _s_smooth_median(data: dict[str, Any], n: int, rng: np.random.Generator, *,
                     epsilon: float) -> np.ndarray:
    from dpreg.mechanisms import smooth_median

    return np.asarray(smooth_median(data["z"], epsilon=epsilon, lo=0.0, hi=1.0, rng=rng,
                                    size=n)).reshape(n, 1)


def _r_ptr(data: dict[str, Any], rng: np.random.Generator, *, epsilon: float,
           delta: float) -> float:
    from dpreg.mechanisms import ptr_test

    return float(ptr_test(data["distance"], epsilon=epsilon, delta=delta, rng=rng))


# ----------------------------------------------------------------------------- simple samplers
def _s_replicates(data: dict[str, Any], n: int, rng: np.random.Generator, *, method: str,
                  epsilon: float) -> np.ndarray:
    from dpreg.replicates import replicate_predictions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return replicate_predictions(method, data["x"], data["y"], epsilon=epsilon,
                                     x_bounds=X_BOUNDS, y_bounds=Y_BOUNDS, trials=n,
                                     output_range=OUTPUT_RANGE, rng=rng)


def _s_theil_sen_matchings(data: dict[str, Any], n: int, rng: np.random.Generator, *,
                           epsilon: float, k: int, median: str, design_seed: int) -> np.ndarray:
    """Theil-Sen with k matchings, conditional on one (data-independent) design drawn from
    ``design_seed``: privacy must hold for every fixed design, so this is a stricter audit."""
    from dpreg.simple import check_theta, check_x_eval, dp_median_of_doubled
    from dpreg.simple.pairs import doubled_pair_values, make_design

    x, y = np.asarray(data["x"], float), np.asarray(data["y"], float)
    design = make_design(x.size, k, np.random.default_rng(design_seed))
    eps_t = PureDP(epsilon).split([1, 1])[0].epsilon
    th = check_theta(None, median, OUTPUT_RANGE)
    cols = []
    for xv in check_x_eval(None, X_BOUNDS, exactly_two=True):
        vals = doubled_pair_values(x, y, design, estimand="predictions", x_eval=xv)
        cols.append(np.asarray(dp_median_of_doubled(
            vals, median=median, epsilon=eps_t, k=design.k, lo=OUTPUT_RANGE[0],
            hi=OUTPUT_RANGE[1], theta=th, rng=rng, size=n)))
    return np.column_stack(cols)


def _s_gd_gaussian(data: dict[str, Any], n: int, rng: np.random.Generator, *, rho: float
                   ) -> np.ndarray:
    from dpreg.simple import (
        check_x_eval,
        gradient_descent_statistics,
        plan_gradient_descent,
        release_gradient_descent,
    )

    x, y = np.asarray(data["x"], float), np.asarray(data["y"], float)
    xe = check_x_eval(None, X_BOUNDS, exactly_two=True)
    plan = plan_gradient_descent(variant="zcdp", rho=rho, x_bounds=X_BOUNDS, y_bounds=Y_BOUNDS,
                                 tau=1.0, n_iter=80, x_eval=xe, n=int(x.size))
    release = release_gradient_descent(gradient_descent_statistics(x, y, plan, rows=n), plan,
                                       rng)
    slope, intercept = release.values["slope"], release.values["intercept"]
    return np.column_stack([slope * xv + intercept for xv in xe])


def _r_theil_sen_ci(data: dict[str, Any], rng: np.random.Generator, *, epsilon: float,
                    method: str, algorithm: str = "auto") -> np.ndarray:
    from dpreg.simple import theil_sen_ci

    ci = theil_sen_ci(data["x"], data["y"], epsilon=epsilon, ci_alpha=0.1,
                      output_range=SLOPE_RANGE, ci_method=method, algorithm=algorithm, rng=rng)
    return np.array([ci.low, ci.high])


# ----------------------------------------------------------------------------- multivariate samplers
def _xnorm(X: np.ndarray) -> float:
    return math.sqrt(X.shape[1])  # features in [0, 1] plus the ones column


def _r_adassp(data: dict[str, Any], rng: np.random.Generator, epsilon: float = EPS_MV,
              **kw: Any) -> np.ndarray | None:
    from dpreg.multivariate import adassp

    X = np.asarray(data["X"], float)
    return _coefs(adassp(X, data["y"], x_norm_bound=_xnorm(X), y_bound=1.0, epsilon=epsilon,
                         delta=DELTA_MV, rng=rng, **kw))


def _r_boosted(data: dict[str, Any], rng: np.random.Generator, **kw: Any) -> np.ndarray | None:
    from dpreg.multivariate import boosted_adassp

    X = np.asarray(data["X"], float)
    res = boosted_adassp(X, data["y"], epsilon=EPS_MV, delta=DELTA_MV, x_norm_bound=_xnorm(X),
                         tau=1.0, n_rounds=3, rng=rng, **kw)
    if res.failed:
        return None
    # the release: the coefficients and the T noisy Xᵀg vectors (kept in ``extra``)
    return np.concatenate([np.asarray(res.params, float), np.ravel(res.extra["xtg_releases"])])


def _r_tukey(data: dict[str, Any], rng: np.random.Generator, *, n_models: int
             ) -> np.ndarray | None:
    from dpreg.multivariate import tukey_em

    return _coefs(tukey_em(data["X"], data["y"], epsilon=EPS_TUKEY, delta=DELTA_TUKEY,
                           n_models=n_models, rng=rng))


def _r_dpgd_mv(data: dict[str, Any], rng: np.random.Generator, **kw: Any
               ) -> np.ndarray | None:
    from dpreg.multivariate import dp_gradient_descent

    opts = {"clip_norm": 1.0, "n_iter": 5, **kw}
    return _coefs(dp_gradient_descent(data["X"], data["y"], epsilon=EPS_MV, delta=DELTA_MV,
                                      rng=rng, **opts))


def _r_sscp(data: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    from dpreg.covariance import release_sscp

    X = np.asarray(data["X"], float)[:, 1:]
    arr = np.column_stack([X, data["y"]])
    cols = [f"x{j}" for j in range(X.shape[1])] + ["y"]
    bounds = [(0.0, 1.0)] * X.shape[1] + [(-1.0, 1.0)]
    rel = release_sscp(arr, columns=cols, bounds=bounds, epsilon=EPS_MV, delta=DELTA_MV,
                       random_state=rng)
    M = np.asarray(rel.noisy_scaled, dtype=float)
    return M[np.triu_indices(M.shape[0])]


# ----------------------------------------------------------------------------- estimator samplers
def _r_estimator(data: dict[str, Any], rng: np.random.Generator, *, cls: str,
                 params: dict[str, Any], features: str = "design") -> np.ndarray:
    import dpreg.linear_model as lm

    if features == "simple":
        X = np.asarray(data["x"], float)[:, None]
        bx, by = [X_BOUNDS], Y_BOUNDS
    else:
        X = np.asarray(data["X"], float)[:, 1:]
        bx, by = [(0.0, 1.0)] * X.shape[1], (-1.0, 1.0)
    est = getattr(lm, cls)(bounds_X=bx, bounds_y=by, random_state=rng, **params)
    est.fit(X, np.asarray(data["y"], float))
    return _estimator_row(est)


# ----------------------------------------------------------------------------- pipeline samplers
#: releases per ``fit_by_group`` call of the table sampler (2 groups each: ~40k groups a call)
GROUP_CHUNK = 20_000
#: the value written for a group whose release is ⊥ (post-processing: the table's output
#: "group A: ⊥" becomes a fixed number, so a table with one ⊥ group is still one sample)
GROUP_BOTTOM = -1000.0


def grouped_tables(data: dict[str, Any], n: int, rng: np.random.Generator, *, method: str,
                   epsilon: float, delta: float | None = None, x_bounds: tuple[float, float],
                   y_bounds: tuple[float, float], options: dict[str, Any] | None = None,
                   copies: dict[str, int] | None = None) -> np.ndarray:
    """n independent releases of the two-group table ``fit_by_group(groups=["A", "B"])``.

    ``data = {"A": {"x", "y"}, "B": {"x", "y"}}``.  Each call of :func:`dpreg.fit_by_group`
    releases up to :data:`GROUP_CHUNK` tables at once: the public key list holds one key per
    group of each table (``2i`` is table i's group A, ``2i + 1`` its group B, every group on its
    own seeded stream derived from its key), so the whole pipeline -- key validation, the row
    partition, value checks, the per-group release and the table assembly -- runs exactly as
    for one table.  A row is (A's outputs, B's outputs): the predictions at the public x points
    for the one-x methods, (intercept, slope) otherwise; a ⊥ group is :data:`GROUP_BOTTOM`.
    ``copies`` (tests only) lists a group's rows under that many keys -- the double release of
    duplicate keys that the canonical-key rule refuses.
    """
    import pandas as pd

    from dpreg.grouped import fit_by_group

    names = sorted(data)
    reps = [(g, k) for g in names for k in range((copies or {}).get(g, 1))]
    width = len(reps)
    rows = []
    done = 0
    while done < n:
        m = min(GROUP_CHUNK, n - done)
        parts_k, parts_x, parts_y = [], [], []
        for j, (g, _) in enumerate(reps):
            x = np.asarray(data[g]["x"], dtype=np.float64)
            y = np.asarray(data[g]["y"], dtype=np.float64)
            keys = np.arange(m) * width + j
            parts_k.append(np.repeat(keys, x.size))
            parts_x.append(np.tile(x, m))
            parts_y.append(np.tile(y, m))
        frame = pd.DataFrame({"k": np.concatenate(parts_k), "x": np.concatenate(parts_x),
                              "y": np.concatenate(parts_y)})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = fit_by_group(frame, "k", "x", "y", method=method, epsilon=epsilon,
                                 delta=delta, bounds={"x": x_bounds, "y": y_bounds},
                                 groups=list(range(m * width)),
                                 random_state=int(rng.integers(0, 2**63 - 1)),
                                 **(options or {}))
        cols = sorted(c for c in table.columns if c.startswith("pred_")) or ["intercept", "slope"]
        vals = table[cols].to_numpy(dtype=np.float64, copy=True)
        vals[table["failed"].to_numpy(dtype=bool)] = GROUP_BOTTOM
        rows.append(vals.reshape(m, width * len(cols)))
        done += m
    return np.concatenate(rows, axis=0)


# ----------------------------------------------------------------------------- claims
def _r_fit(data: dict[str, Any], rng: np.random.Generator, *, method: str, epsilon: float,
           delta: float | None = None, features: str = "simple",
           options: dict[str, Any] | None = None) -> np.ndarray | None:
    """One release of ``method`` as ``regress`` makes it (:func:`dpreg.api.fit_arrays`, the
    public bounds of the pairs: x and y in [0, 1] for one x; features in [0, 1], y in
    [−1, 1] for a design): its coefficients."""
    from dpreg.api import fit_arrays

    if features == "simple":
        X = np.asarray(data["x"], float)[:, None]
        bx, by = [X_BOUNDS], Y_BOUNDS
    else:
        X = np.asarray(data["X"], float)[:, 1:]
        bx, by = [(0.0, 1.0)] * X.shape[1], (-1.0, 1.0)
    return _coefs(fit_arrays(X, np.asarray(data["y"], float), method=method, epsilon=epsilon,
                             delta=delta, x_bounds=bx, y_bounds=by, random_state=rng,
                             **dict(options or {})))


# ----------------------------------------------------------------------------- method targets
#: the samplers a method's :class:`~dpreg._spec.AuditCase` may name: (function, looped --
#: one call per release, through :func:`loop_sampler` -- and whether it takes ``method=``)
SAMPLERS: dict[str, tuple[Callable[..., Any], bool, bool]] = {
    "fit": (_r_fit, True, True),
    "replicates": (_s_replicates, False, True),
    "theil-sen-matchings": (_s_theil_sen_matchings, False, False),
    "gd-zcdp": (_s_gd_gaussian, False, False),
    "theil-sen-ci": (_r_theil_sen_ci, True, False),
    "adassp-core": (_r_adassp, True, False),
    "boosted-core": (_r_boosted, True, False),
    "tukey-core": (_r_tukey, True, False),
    "gd-mv-core": (_r_dpgd_mv, True, False),
    "sscp-core": (_r_sscp, True, False),
    "estimator": (_r_estimator, True, False),
}


def _matching_pairs() -> list[NeighbourPair]:
    return [matching_pair()] + simple_pairs(20)[1:]


#: the neighbour sets a method's :class:`~dpreg._spec.AuditCase` may name ("design": the
#: spec's relation)
PAIRS: dict[str, Callable[[], list[NeighbourPair]]] = {
    "simple": partial(simple_pairs, 20),
    "simple-12": partial(simple_pairs, 12),
    "matching": _matching_pairs,
    "design-add-remove": partial(design_pairs, 20, 2, relation="add-remove"),
    "design-replace-one": partial(design_pairs, 20, 2, relation="replace-one"),
    "tukey": tukey_pairs,
    "tukey-estimator": lambda: _tukey_estimator_pairs(),
}


def _method_target(spec: Any, case: Any) -> AuditTarget:
    """The :class:`AuditTarget` of one :class:`~dpreg._spec.AuditCase` of ``spec``."""
    pairs = f"design-{spec.relation}" if case.pairs == "design" else case.pairs
    if case.sampler not in SAMPLERS or pairs not in PAIRS:  # a packaging error: the tests see it
        raise RuntimeError(f"method {spec.name!r}: audit case {case.name!r} names the sampler "
                           f"{case.sampler!r} and the pairs {pairs!r}; the auditor has the "
                           f"samplers {sorted(SAMPLERS)} and the pairs {sorted(PAIRS)}")
    func, looped, named = SAMPLERS[case.sampler]
    params = {**({"method": spec.name} if named else {}), **dict(case.params)}
    bound: Callable[..., Any] = partial(func, **params) if params else func
    sampler: Sampler = partial(loop_sampler, bound) if looped else bound
    claim = case.claim
    if claim is None:
        claim = spec.budget(epsilon=params["epsilon"], delta=params.get("delta"),
                            options=dict(params.get("options") or {}),
                            n_features=1 if params.get("features", "simple") == "simple" else 2)
    return AuditTarget(case.name, case.kind, case.description, Claim.from_budget(claim),
                       sampler, PAIRS[pairs], loop=looped, output_names=case.output_names)


def _method_targets() -> list[AuditTarget]:
    """Every method's audit targets (its spec's :meth:`~dpreg._spec.MethodSpec.audit_cases`):
    the cores first, then the estimators, each in registry order."""
    from dpreg import methods

    cases = [(spec, case) for spec in methods.specs(selector=False)
             for case in spec.audit_cases()]
    ranked = sorted(range(len(cases)), key=lambda i: (cases[i][1].kind != "core", i))
    return [_method_target(*cases[i]) for i in ranked]


def _mechanism_targets() -> list[AuditTarget]:
    """The mechanisms of :mod:`dpreg.mechanisms`, each alone."""
    t: list[AuditTarget] = []
    t.append(AuditTarget(
        "laplace", "mechanism", "Laplace mechanism, Δ₁ = 1, ε = 1 (simulation: float noise)",
        Claim.from_budget(PureDP(EPS_MECH)),
        partial(_s_laplace, sensitivity=1.0, epsilon=EPS_MECH),
        lambda: scalar_pairs(1.0) + vector_pairs(1.0, "l1")[:1]))
    t.append(AuditTarget(
        "laplace-secure", "mechanism",
        "secure Laplace (grid + exact discrete Laplace from os.urandom), Δ₁ = 1, ε = 1",
        Claim.from_budget(PureDP(EPS_MECH)),
        partial(_s_laplace, sensitivity=1.0, epsilon=EPS_MECH, mode="secure"),
        lambda: scalar_pairs(1.0) + vector_pairs(1.0, "l1")[:1]))
    t.append(AuditTarget(
        "laplace-seeded", "mechanism",
        "seeded Laplace (grid + exact discrete Laplace from a seeded SHAKE256 stream per call), "
        "Δ₁ = 1, ε = 1", Claim.from_budget(PureDP(EPS_MECH)),
        partial(_s_laplace, sensitivity=1.0, epsilon=EPS_MECH, mode="seeded"),
        lambda: scalar_pairs(1.0) + vector_pairs(1.0, "l1")[:1]))
    t.append(AuditTarget(
        "laplace-seeded-reachability", "mechanism",
        "seeded Laplace, Δ₁ = 1, ε = 1, audited with Mironov's event: output reachable by "
        "float noise from f(D) but not from f(D′)", Claim.from_budget(PureDP(EPS_MECH)),
        partial(_s_laplace_reachability, epsilon=EPS_MECH, mode="seeded"),
        partial(reachability_pairs, 1.0), output_names=("reachable from D only",)))
    t.append(AuditTarget(
        "gaussian", "mechanism", "Gaussian mechanism, Δ₂ = 1, μ = 1 GDP (simulation: float noise)",
        Claim.from_budget(GDP(1.0)), partial(_s_gaussian, sensitivity=1.0, mu=1.0),
        lambda: scalar_pairs(1.0) + vector_pairs(1.0, "l2")[:1]))
    t.append(AuditTarget(
        "gaussian-secure", "mechanism",
        "secure Gaussian (grid + exact discrete Gaussian from os.urandom), Δ₂ = 1, μ = 1",
        Claim.from_budget(GDP(1.0)),
        partial(_s_gaussian, sensitivity=1.0, mu=1.0, mode="secure"),
        lambda: scalar_pairs(1.0) + vector_pairs(1.0, "l2")[:1]))
    t.append(AuditTarget(
        "gaussian-seeded", "mechanism",
        "seeded Gaussian (grid + exact discrete Gaussian from a seeded SHAKE256 stream per "
        "call), Δ₂ = 1, μ = 1", Claim.from_budget(GDP(1.0)),
        partial(_s_gaussian, sensitivity=1.0, mu=1.0, mode="seeded"),
        lambda: scalar_pairs(1.0) + vector_pairs(1.0, "l2")[:1]))
    t.append(AuditTarget(
        "exp-quantile", "mechanism", "exponential-mechanism median on [0, 1], ε = 1",
        Claim.from_budget(PureDP(EPS_MECH)),
        partial(_s_exp_quantile, epsilon=EPS_MECH, theta=0.0), quantile_pairs))
    t.append(AuditTarget(
        "wide-quantile", "mechanism", "θ-widened median on [0, 1], θ = 0.02, ε = 1",
        Claim.from_budget(PureDP(EPS_MECH)),
        partial(_s_exp_quantile, epsilon=EPS_MECH, theta=0.02), quantile_pairs))
    # the Theil-Sen slope interval's ends are this mechanism at interior targets q != 1/2
    # (the targets of union/tight/calibrated differ only in q): audit it at q = 0.2, with
    # pairs where one value crosses the target rank, plus the median pairs
    t.append(AuditTarget(
        "wide-quantile-q20", "mechanism",
        "θ-widened 0.2-quantile on [0, 1] (the slope interval's ends), θ = 0.02, ε = 1",
        Claim.from_budget(PureDP(EPS_MECH)),
        partial(_s_exp_quantile, epsilon=EPS_MECH, theta=0.02, q=0.2),
        lambda: lower_quantile_pairs() + quantile_pairs()))
    t.append(AuditTarget(
        "smooth-median", "mechanism", "smooth-sensitivity median (Student-t, 3 d.o.f.), ε = 1",
        Claim.from_budget(PureDP(EPS_MECH)), partial(_s_smooth_median, epsilon=EPS_MECH),
        quantile_pairs))
    from dpreg.mechanisms import ptr_threshold

    thr = ptr_threshold(PTR_EPS, PTR_DELTA)
    t.append(AuditTarget(
        "ptr", "mechanism", f"propose-test-release test, ε = {PTR_EPS:g}, δ = {PTR_DELTA:g}",
        Claim.from_budget(PureDP(PTR_EPS)),
        partial(loop_sampler, partial(_r_ptr, epsilon=PTR_EPS, delta=PTR_DELTA)),
        lambda: distance_pairs(thr), output_names=("pass",)))
    return t


def _pipeline_targets() -> list[AuditTarget]:
    """The per-group table (``fit_by_group``) end to end."""
    t: list[AuditTarget] = []
    from dpreg.methods.adassp import audit_claim

    simple_b = simple_pairs(20, seed=1)[1].d  # group B's data (the same on both sides)
    t.append(AuditTarget(
        "fit-by-group", "pipeline",
        f"fit_by_group table of two declared groups, noisy-stats, ε = {EPS_SIMPLE:g} per group "
        "(parallel composition: the table is ε-DP); output: both groups' predictions",
        Claim.from_budget(PureDP(EPS_SIMPLE)),
        partial(grouped_tables, method="noisy-stats", epsilon=EPS_SIMPLE, x_bounds=X_BOUNDS,
                y_bounds=Y_BOUNDS),
        partial(_table_pairs, simple_b), output_names=("A_p25", "A_p75", "B_p25", "B_p75")))
    t.append(AuditTarget(
        "fit-by-group-adassp", "pipeline",
        f"fit_by_group table of two declared groups, AdaSSP per group (replace-one, n public), "
        f"ε = {EPS_GROUP_MV:g}, δ = {DELTA_MV:g} per group (tested as the composed Gaussian μ)",
        Claim.from_budget(audit_claim(EPS_GROUP_MV)),
        partial(grouped_tables, method="adassp", epsilon=EPS_GROUP_MV, delta=DELTA_MV,
                x_bounds=X_BOUNDS, y_bounds=(-1.0, 1.0)),
        _table_design_pairs, loop=True,
        output_names=("A_intercept", "A_slope", "B_intercept", "B_slope")))
    return t


def _build() -> dict[str, AuditTarget]:
    """The mechanisms, then every method's targets (declared by its spec:
    :meth:`~dpreg._spec.MethodSpec.audit_cases`), then the pipelines."""
    t = [*_mechanism_targets(), *_method_targets(), *_pipeline_targets()]
    return {x.name: x for x in t}


def _table_pairs(other: dict[str, Any]) -> list[NeighbourPair]:
    """Two-group tables: the one-x worst cases in group A (corner, clipped outlier, moved
    point) and the corner pair in group B."""
    sp = {p.name: p for p in simple_pairs(20)}
    picked = [sp["corner"], sp["clipped-outlier"], sp["moved-point"]]
    return (grouped_pairs(picked, other)
            + grouped_pairs([sp["corner"]], simple_pairs(20, seed=2)[1].d, changed="B"))


def _table_design_pairs() -> list[NeighbourPair]:
    """Two-group AdaSSP tables (x in [0, 1], y in [−1, 1]): replace-one pairs of
    :func:`design_pairs` with one feature in group A, plus the record (x, y) = (0, 1)
    replaced by (1, −1) -- orthogonal rows (1, −1), (1, 1) after scaling, where the
    replace-one sensitivity of XᵀX, √2·B², is attained."""
    base = design_pairs(20, 1, relation="replace-one")
    one_x = [NeighbourPair(p.name, p.description, {"x": p.d["X"][:, 1], "y": p.d["y"]},
                           {"x": p.d_prime["X"][:, 1], "y": p.d_prime["y"]}, p.relation)
             for p in base if p.name in ("corner", "origin")]
    x, y = base[0].d["X"][:, 1].copy(), base[0].d["y"].copy()
    x[-1], y[-1] = 0.0, 1.0
    x2, y2 = x.copy(), y.copy()
    x2[-1], y2[-1] = 1.0, -1.0
    one_x.append(NeighbourPair("orthogonal", "the record (0, 1) replaced by (1, −1): orthogonal "
                               "scaled rows (worst case of the XᵀX release)",
                               {"x": x, "y": y}, {"x": x2, "y": y2}))
    g = np.random.default_rng(3)
    xb = g.uniform(0.0, 1.0, 20)
    other = {"x": xb, "y": np.clip(0.5 - 0.8 * xb + g.normal(0.0, 0.05, 20), -1.0, 1.0)}
    return grouped_pairs(one_x, other)


def _tukey_estimator_pairs() -> list[NeighbourPair]:
    """TukeyEM pairs with x rescaled into the public bounds [0, 1] (y bounds ±1000 would be
    needed for the outliers; the estimator clips to its bounds, so use in-bound extremes)."""
    out = []
    for p in tukey_pairs():
        d2 = {"X": np.clip(p.d_prime["X"], 0.0, 1.0), "y": np.clip(p.d_prime["y"], -1.0, 1.0)}
        out.append(NeighbourPair(p.name, p.description + " (clipped to the bounds)", p.d, d2,
                                 p.relation))
    return out


TARGETS: dict[str, AuditTarget] = _build()


def list_targets() -> list[str]:
    """Names of the built-in audit targets."""
    return list(TARGETS)


def get_target(name: str) -> AuditTarget:
    if name not in TARGETS:
        raise UnknownNameError(f"unknown audit target {name!r}{did_you_mean(str(name), list(TARGETS))}"
                               f"; choose one of {list(TARGETS)}")
    return TARGETS[name]


def audit_target(
    name: str | AuditTarget, *, pairs: Sequence[str] | None = None,
    samples: int = DEFAULT_SAMPLES, alpha: float = DEFAULT_ALPHA, rng: Any = None,
    workers: int = 1,
) -> list[AuditResult]:
    """Audit a built-in target on its worst-case pairs (or the named subset ``pairs``).

    Returns one :class:`AuditResult` per pair.  ``workers`` > 1 spreads loop-based targets over
    processes.  ``rng`` seeds the releases and the sample splits (``None``: fresh entropy).
    """
    target = get_target(name) if isinstance(name, str) else name
    n = check_int(samples, "samples", minimum=16)
    w = check_int(workers, "workers", minimum=1, maximum=256)
    all_pairs = target.pairs()
    if pairs:
        known = {p.name: p for p in all_pairs}
        missing = [p for p in pairs if p not in known]
        if missing:
            raise UnknownNameError(f"unknown pair(s) {missing} for {target.name}; "
                                    f"available: {list(known)}")
        chosen = [known[p] for p in pairs]
    else:
        chosen = all_pairs
    gen = check_rng(rng)
    root = np.random.SeedSequence(int(gen.integers(0, 2**63 - 1)))
    results = []
    for pair, seed in zip(chosen, root.spawn(len(chosen))):
        s_d, s_dp, s_split = seed.spawn(3)
        t0 = time.perf_counter()
        try:
            out_d = run_sampler(target.sampler, pair.d, n, s_d, w if target.loop else 1)
            out_dp = run_sampler(target.sampler, pair.d_prime, n, s_dp, w if target.loop else 1)
        except DPRegError as exc:
            raise InvalidInputError(f"{target.name} on pair {pair.name!r}: {exc}") from exc
        seconds = time.perf_counter() - t0
        names = target.output_names if len(target.output_names) == out_d.shape[1] else None
        res = audit_samples(out_d, out_dp, claim=target.claim, alpha=alpha,
                            rng=np.random.default_rng(s_split), method=target.name,
                            pair=pair.name, names=names, seconds=seconds)
        results.append(res)
    return results
