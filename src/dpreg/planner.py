"""Plan before spending: the expected privacy noise of a release from PUBLIC inputs only.

``dpreg.plan(method, epsilon, delta, n=..., bounds=..., formula=...)`` returns a :class:`Plan`:
the standard deviation of the privacy noise of every coefficient and of the prediction at the
centre of the bounds, the probability that the release fails (⊥), and how these were obtained.
``target_sd=`` inverts it: the smallest ε whose planned sd meets the target (bisection on
log ε; the planned sd decreases with ε).  Nothing is read from any data and nothing is charged;
a plan may be computed as often as wanted.

The public design
-----------------
The noise of a DP regression depends on the data only through facts the plan cannot know
(the spread of x, the residuals), so every plan is computed for one stated **public design**:
n rows with every regressor drawn uniformly over its declared bounds and the response drawn
uniformly over its bounds, independently of the regressors (a zero-slope truth), from
``numpy.random.default_rng(seed)`` (``seed=0`` by default).  Data with more spread in x give
less noise than planned, data concentrated in a small part of the bounds give more; the plan
answers "what does ε buy with these bounds and this n".

How each method is planned
--------------------------
* ``noisy-stats`` -- analytic: Laplace noise on n·cov and n·var (ε/3 each) and the intercept
  (ε/3) of Alabi et al. Alg. 1; slope sd √2·b_cov/nvar·(1 + 3·2b_var²/nvar²)^½ (a second-order
  delta method), intercept sd from x̄·slope and the intercept's Laplace noise; ⊥ when the noisy
  nvar is <= 0: P = ½·exp(−nvar/b_var).
* ``covariance-ols`` -- analytic: the entry sd of the Analyze-Gauss release
  (:mod:`dpreg.covariance.planning`, scaled units) propagated to first order through OLS:
  Cov(β̂) = A⁻¹ Σ_w A⁻¹ with A = DᵀD of the design and Σ_w = σ²((1 + ‖β‖²)I + ββᵀ − diag β²).
* ``adassp`` -- analytic: the same first-order propagation with Wang's noise scales (Gaussian
  XᵀX and Xᵀy noise from :mod:`dpreg.multivariate.ssp`'s sensitivities and ρ split) and the
  ridge λ at its value for the design's λ_min.
* every other method (``theil-sen-*``, ``dp-gd``, ``boosted-adassp``, ``tukey-em``,
  ``dp-intercept``) -- simulation: the release itself is run ``n_sim`` times (default 200) on
  the public design with a simulation generator seeded from ``seed`` (float noise: nothing is
  released), and the sd over those releases is reported (the data are the same in every run,
  so it is the privacy noise alone).  ⊥ is the fraction of failed runs; for ``tukey-em`` the
  analytic PTR pass probability (:func:`dpreg.auto.rules.tukey_pass_probability`) is used.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpreg import methods
from dpreg._validation import (
    EPSILON_MAX,
    check_bounds,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    did_you_mean,
)
from dpreg.exceptions import InvalidInputError, InvalidParameterError

__all__ = ["Plan", "plan", "PLAN_DESIGN", "ANALYTIC_METHODS"]

#: the public design every plan is computed for (see the module doc)
PLAN_DESIGN = ("n rows; each regressor uniform over its declared bounds, the response uniform "
               "over its bounds and independent of the regressors (zero-slope truth); "
               "numpy.random.default_rng(seed)")
#: methods planned in closed form (their spec has ``expected_cov``; the others are simulated
#: on the public design)
ANALYTIC_METHODS = tuple(m.name for m in methods.specs(selector=False)
                         if type(m).expected_cov is not methods.MethodSpec.expected_cov)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


@dataclass(frozen=True)
class Plan:
    """The planned privacy noise of one release (public inputs only; nothing charged).

    ``coef_sd`` maps every coefficient (``intercept`` first) to the sd of its privacy noise;
    ``prediction_sd`` is the sd of the prediction at the centre of the regressors' bounds;
    ``failure_probability`` is P(⊥); ``how`` says whether the numbers are analytic or simulated
    (with the seed and number of runs); ``design`` is :data:`PLAN_DESIGN`.  With a target
    (``target_sd``), ``epsilon`` is the ε found for it and ``target`` names the quantity.
    ``interval`` (noisy-stats; theil-sen-*: which slope interval ``ci_alpha=`` would give,
    calibrated or tight, by :func:`dpreg.simple.ci.calibrated_refusal`; ``None`` for the
    other methods and for ``inference=False``):
    ``"offered"`` when the interval rule
    (:func:`dpreg.simple._noisy_stats.interval_refusal`, the same function the fit consults)
    gives an interval at these public inputs whatever the release, its refusal text (what to
    change) when they refuse it -- known before any budget is spent -- or "depends on the
    release" with the probability of an offer on the plan's design (x uniform over its
    bounds)."""

    method: str
    epsilon: float
    delta: float | None
    n: int
    coef_sd: Mapping[str, float]
    prediction_sd: float
    failure_probability: float
    how: str
    design: str = PLAN_DESIGN
    target: str | None = None
    target_sd: float | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    interval: str | None = None

    def table(self) -> pd.DataFrame:
        """One row per coefficient plus ``prediction@centre``: the planned noise sd."""
        rows = {**dict(self.coef_sd), "prediction@centre": self.prediction_sd}
        return pd.DataFrame({"noise_sd": pd.Series(rows, dtype=float)})

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python, strict-JSON form."""
        def num(v: float) -> float | None:
            return float(v) if math.isfinite(v) else None

        return {"method": self.method, "epsilon": num(self.epsilon), "delta": self.delta,
                "n": self.n, "coef_sd": {k: num(v) for k, v in self.coef_sd.items()},
                "prediction_sd": num(self.prediction_sd),
                "failure_probability": float(self.failure_probability), "how": self.how,
                "design": self.design, "target": self.target, "target_sd": self.target_sd,
                "options": dict(self.options), "interval": self.interval}

    def __str__(self) -> str:
        budget = f"ε={self.epsilon:.4g}" + ("" if self.delta is None else f", δ={self.delta:g}")
        head = [f"Plan for {self.method} with {budget}, n={self.n} (public inputs only; "
                "nothing charged)"]
        if self.target is not None:
            head.append(f"  smallest ε with noise sd of {self.target} <= {self.target_sd:g}: "
                        f"{self.epsilon:.4g}")
        head.append(f"  P(⊥) = {self.failure_probability:.3g}")
        head.append(f"  how: {self.how}")
        head.append(f"  design: {self.design}")
        if self.interval is not None:
            head.append(f"  interval: {self.interval}")
        tab = self.table().to_string(float_format=lambda v: f"{v:.4g}")
        return "\n".join(head) + "\n" + tab


def _parse(formula: Any, bounds: Mapping[str, Any]) -> tuple[str, list[str], bool]:
    """(response, regressors, intercept) of a plain ``y ~ a + b [- 1]`` formula whose names all
    have bounds (plans need no data, so only column names are accepted)."""
    if not isinstance(formula, str) or formula.count("~") != 1:
        raise InvalidInputError(f"formula must be a string like 'y ~ x1 + x2'; got {formula!r}")
    lhs, rhs = (s.strip() for s in formula.split("~"))
    terms = [t.strip() for t in rhs.replace("-", "+-").split("+") if t.strip()]
    intercept = "-1" not in [t.replace(" ", "") for t in terms]
    xs = [t for t in terms if t.replace(" ", "") not in ("-1", "1", "0")]
    for name in [lhs, *xs]:
        if not _NAME.match(name):
            raise InvalidInputError(f"formula terms of a plan must be column names; got {name!r}")
        if name not in bounds:
            raise InvalidInputError(f"bounds for {name!r} are missing: a plan needs public "
                                    f"(lo, hi) for the response and every regressor")
    if not xs:
        raise InvalidInputError(f"formula {formula!r} has no regressors")
    return lhs, xs, intercept


def _design(n: int, xb: list[tuple[float, float]], yb: tuple[float, float], seed: int
            ) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    X = np.column_stack([g.uniform(lo, hi, n) for lo, hi in xb])
    y = g.uniform(yb[0], yb[1], n)
    return X, y


def _pred_sd(cov: np.ndarray, xb: list[tuple[float, float]], intercept: bool) -> float:
    c = np.array([(lo + hi) / 2.0 for lo, hi in xb])
    if intercept:
        c = np.concatenate([[1.0], c])
    return float(math.sqrt(max(0.0, float(c @ cov @ c))))


def _simulate(method: str, eps: float, dlt: float | None, n: int, X: np.ndarray,
              y: np.ndarray, xs: list[str], yname: str, xb: list[tuple[float, float]],
              yb: tuple[float, float], intercept: bool, options: Mapping[str, Any],
              seed: int, n_sim: int) -> tuple[np.ndarray, float, list[str]]:
    """Run the release ``n_sim`` times on the design; (coefficient draws of the non-failed
    runs, failed fraction, names)."""
    from dpreg._random import SimulationGenerator
    from dpreg.api import fit_arrays
    from dpreg.privacy.notices import public_call

    gen = SimulationGenerator(np.random.PCG64(np.random.SeedSequence([seed, 1])))
    draws, failed, names = [], 0, []
    with warnings.catch_warnings(), public_call():  # nested: no default ledger, no warnings
        warnings.simplefilter("ignore")
        for _ in range(n_sim):
            res = fit_arrays(X, y, method=method, epsilon=eps, delta=dlt, x_bounds=xb,
                             y_bounds=yb, x_names=xs, y_name=yname, fit_intercept=intercept,
                             ledger=None, random_state=gen, **dict(options))
            if res.failed:
                failed += 1
                continue
            names = list(res.params.index)
            draws.append(res.params.to_numpy(dtype=float))
    return np.array(draws), failed / n_sim, names


def _one(method: str, eps: float, dlt: float | None, n: int, xs: list[str], yname: str,
         xb: list[tuple[float, float]], yb: tuple[float, float], intercept: bool,
         options: Mapping[str, Any], seed: int, n_sim: int) -> Plan:
    names = (["intercept"] if intercept else []) + xs
    spec = methods.get(method)
    fail = 0.0
    closed = None if math.isinf(eps) else spec.expected_cov(
        epsilon=eps, delta=dlt, n=n, x_bounds=xb, y_bounds=yb, fit_intercept=intercept,
        options=options)
    if math.isinf(eps):
        cov = np.zeros((len(names), len(names)))
        how = "ε = inf: no privacy noise"
    elif closed is not None:
        cov, fail, how = closed
    else:
        X, y = _design(n, xb, yb, seed)
        draws, fail, got = _simulate(method, eps, dlt, n, X, y, xs, yname, xb, yb, intercept,
                                     options, seed, n_sim)
        if len(draws) >= 2:
            cov = np.cov(draws, rowvar=False).reshape(len(got), len(got))
            names = got
        else:
            cov = np.full((len(names), len(names)), math.nan)
        how = (f"simulation: {n_sim} releases on the public design (seed={seed}), sd over the "
               "releases")
        analytic_fail = spec.failure_probability(epsilon=eps, delta=dlt, n=n, d=len(names),
                                                 options=options)
        if analytic_fail is not None:
            fail = analytic_fail
            how += "; P(⊥) from the analytic PTR pass probability"
    interval = spec.planned_interval(epsilon=eps, n=n, x_bounds=xb, options=options)
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return Plan(method, eps, dlt, n, dict(zip(names, map(float, sd))),
                _pred_sd(cov, xb, "intercept" in names), float(fail), how,
                options=dict(options), interval=interval)


def plan(method: str, epsilon: float | None = None, delta: float | None = None, *, n: int,
         bounds: Mapping[str, Any], formula: str, target_sd: float | None = None,
         target: str | None = None, seed: int = 0, n_sim: int = 200,
         **options: Any) -> Plan:
    """The expected privacy noise of ``method`` at ``epsilon`` (and ``delta``) for ``n`` rows
    with the public ``bounds`` -- or, with ``target_sd``, the smallest ε that meets it.

    Parameters
    ----------
    method:
        A method name (``dpreg methods``; not ``auto``).
    epsilon, delta:
        The budget to plan for (ε is not needed with ``target_sd``).
    n:
        The public number of rows.
    bounds, formula:
        Public (lo, hi) per column and a plain ``"y ~ x1 + x2"`` over those columns.
    target_sd, target:
        Solve for ε instead: the smallest ε whose noise sd of ``target`` (a coefficient name or
        ``"prediction"``; default the largest sd among the slopes) is <= ``target_sd``.
    seed, n_sim:
        The seed of the public design and of the simulations, and the number of simulated
        releases (simulated methods only; see the module doc).
    options:
        Method options, as for :func:`dpreg.regress`.

    Uses only these public inputs; reads no data and charges nothing.
    """
    entry = methods.get(method)
    if entry.is_selector:
        raise InvalidInputError("method must be a concrete method (plan the one 'auto' would "
                                "choose); got 'auto'")
    n = check_int(n, "n", minimum=2, maximum=10**9)
    seed = check_int(seed, "seed", minimum=0)
    n_sim = check_int(n_sim, "n_sim", minimum=10, maximum=100_000)
    if not isinstance(bounds, Mapping):
        raise InvalidInputError(f"bounds must be a dict column -> (lo, hi); got {type(bounds).__name__}")
    yname, xs, intercept = _parse(formula, bounds)
    if entry.one_x_only and len(xs) != 1:
        raise InvalidInputError(f"method {method!r} fits y on exactly one x; got {xs}")
    xb = [check_bounds(bounds[x], f"bounds[{x!r}]") for x in xs]
    yb = check_bounds(bounds[yname], f"bounds[{yname!r}]")
    dlt = None if delta is None else check_delta(delta, allow_zero=False)
    if entry.needs_delta and dlt is None:
        raise InvalidInputError(f"delta is required for method {method!r}")
    from dpreg._dispatch import check_option_keys

    check_option_keys(options)
    opts = {k: v for k, v in options.items()}

    def at(eps: float) -> Plan:
        return _one(method, eps, dlt, n, xs, yname, xb, yb, intercept, opts, seed, n_sim)

    if target_sd is None:
        if epsilon is None:
            raise InvalidInputError("epsilon is required (or give target_sd to solve for it)")
        return at(check_epsilon(epsilon))
    goal = check_positive(target_sd, "target_sd")
    slopes = xs

    def value(p: Plan) -> float:
        if target is None:
            return max(p.coef_sd.get(s, math.nan) for s in slopes)
        if target == "prediction":
            return p.prediction_sd
        if target not in p.coef_sd:
            raise InvalidParameterError(
                f"target must be 'prediction' or one of {list(p.coef_sd)}; got {target!r}"
                + did_you_mean(str(target), ["prediction", *p.coef_sd]))
        return p.coef_sd[target]

    hi = 1.0
    # above EPSILON_MAX a release is not private (treated as epsilon = inf)
    cap = min(EPSILON_MAX, entry.max_epsilon(delta=dlt, options=opts) * (1 - 1e-9))
    while not value(at(hi)) <= goal:
        hi *= 4.0
        if hi > cap:
            if value(at(cap)) <= goal:
                hi = cap
                break
            raise InvalidInputError(f"target_sd={goal:g} is not reached by any epsilon up to "
                                    f"{cap:.4g} for n={n}: increase n or the target")
    lo = hi / 4.0
    while lo > 1e-4 and value(at(lo)) <= goal:
        hi, lo = lo, lo / 4.0
    for _ in range(40):  # bisection on log ε to 0.5 %
        if hi / lo < 1.005:
            break
        mid = math.sqrt(lo * hi)
        if value(at(mid)) <= goal:
            hi = mid
        else:
            lo = mid
    best = at(hi)
    return Plan(best.method, hi, dlt, n, best.coef_sd, best.prediction_sd,
                best.failure_probability, best.how, target=target or "max slope",
                target_sd=goal, options=best.options, interval=best.interval)
