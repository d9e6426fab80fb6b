"""Plan before spending: the expected error of a release from PUBLIC inputs only.

``dpreg.plan(method, epsilon, delta, n=..., formula=..., bounds=... | codebook=...,
design=...)`` returns a :class:`Plan`: per coefficient the sd of the privacy noise, the bias
(E[release] − the OLS coefficients of the design) and their root-mean-square error, the total
RMSE of the slopes, the probability that the release fails (⊥) and that its interval is
refused, what the release would cost (and, with ``ledger=``, its price on that ledger in the
ledger's units), the design's assumptions and how the numbers were obtained.  ``target_sd=``
inverts it: the smallest ε whose planned noise sd meets the target (bisection on log ε).
Nothing is read from any data and nothing is charged; a plan may be computed as often as
wanted.

The public design
-----------------
The error of a DP regression depends on facts about the data -- the spread of x relative to
its bounds, the correlations, the coefficients -- so a plan is computed for a stated PUBLIC
design (:class:`dpreg.methods._planning.PlanDesign`):

* declared moments: per column a public ``mean`` and ``sd`` and the correlations, from a
  codebook (``codebook=``; docs/codebook.md) or ``design={"mean": ..., "sd": ..., "corr":
  ...}`` -- values from a census, a previous survey's published tables or a public reference
  sample, NEVER from the private data;
* a public reference design: ``design=`` a DataFrame (or 2-D array) the caller states is
  public, with the regressors' columns and optionally the response's;
* nothing declared: the uniform-spread assumption (every regressor uniform over its bounds, the
  response uniform and independent) -- and the plan says that it assumes this and that the
  figures are optimistic when x does not fill its bounds.

How each method is planned
--------------------------
The sufficient-statistics methods see the data only through n·E[w wᵀ], w = (1, x, y), which
the design's moments determine exactly: ``noisy-stats`` and ``dp-intercept`` in closed form
(:func:`~dpreg.methods._planning.noisy_stats_error`), ``adassp`` and ``covariance-ols`` by a
seeded Monte Carlo of their own Gaussian noise on these statistics through their λ rule or PSD
repair and solve (:func:`~dpreg.methods._planning.adassp_error`,
:func:`~dpreg.methods._planning.sscp_ols_error`; no rows simulated).  Every other method
(``theil-sen-*``, ``dp-gd``, ``boosted-adassp``, ``tukey-em``) is simulated: the release itself
is run ``n_sim`` times (default 200) on n synthetic rows of the design
(:meth:`~dpreg.methods._planning.PlanDesign.rows`, seeded from ``seed``) with a simulation
generator (float noise: nothing is released); ⊥ is the fraction of failed runs, for
``tukey-em`` the analytic PTR pass probability (:func:`dpreg.auto.rules.
tukey_pass_probability`).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from dpreg import methods
from dpreg._bounds import as_mapping, xy_bounds
from dpreg._validation import (
    DEPRECATED,
    EPSILON_MAX,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    did_you_mean,
    renamed_parameters,
)
from dpreg.exceptions import InvalidInputError, InvalidParameterError
from dpreg.methods import ExpectedError, PlanDesign, robust_sd, tail_note

__all__ = ["Plan", "plan", "PLAN_DESIGN", "ANALYTIC_METHODS"]

#: the design a plan assumes when nothing is declared (see the module doc)
PLAN_DESIGN = ("n rows; each regressor uniform over its declared bounds, the response uniform "
               "over its bounds and independent of the regressors (zero-slope truth); "
               "numpy.random.default_rng(seed)")
#: methods planned from the design's sufficient statistics (their spec has
#: ``expected_error``: closed form or a Monte Carlo of the noise alone); the others are
#: simulated on rows of the design
ANALYTIC_METHODS = tuple(m.name for m in methods.specs(selector=False)
                         if type(m).expected_error is not methods.MethodSpec.expected_error)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def _num(v: Any) -> float | None:
    return None if v is None or not math.isfinite(float(v)) else float(v)


@dataclass(frozen=True)
class Plan:
    """The planned error of one release (public inputs only; nothing charged).

    Per coefficient (``intercept`` first): ``coef_sd``, the sd of the privacy noise;
    ``coef_bias``, E[release] − the OLS coefficients of the design (``None`` where not known:
    the response's correlations are not declared); ``coef_rmse`` = √(bias² + sd²) (the sd
    alone when the bias is not known).  ``total_rmse``: √Σ(bias² + sd²) over the slopes (the
    expected ‖β̂ − β‖ of the slopes, root-mean-square).  ``prediction_sd`` /
    ``prediction_bias``: the same for the prediction at the design's mean of x (the centre of
    the bounds under the uniform assumption).  ``failure_probability``: P(⊥);
    ``interval_refusal_probability``: the probability that the interval rule refuses
    (covariance-ols; noisy-stats: 0 or 1 where its public limits decide, else the
    probability that the release's noisy spread of x falls short of the release rule on the
    plan's design; ``None`` where not planned); ``interval``: which interval a request would
    get (text: ``"offered"``, the refusal text when public inputs refuse it before any budget
    is spent, or "depends on the release" with P(offered) on the plan's design).  ``charge``: what the release
    costs (``budget``, the definition it is charged in, ``neighbouring``, and with a ledger
    ``price`` in the ledger's units and ``affordable``).  ``design``: the design in words;
    ``assumptions``: what the plan assumes (uniform spread, undeclared correlations, ...) and
    when its figures are fragile (heavy-tailed releases); ``coef_robust_sd``: the typical
    noise, IQR/1.349 of the planned releases (plans from draws; ``None`` for closed forms) --
    the sd is dominated by rare large errors where the two differ by more than 2×;
    ``how``: how the numbers were obtained.  With ``target_sd``, ``epsilon`` is the ε found and
    ``target`` names the quantity."""

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
    coef_bias: Mapping[str, float | None] = field(default_factory=dict)
    coef_rmse: Mapping[str, float] = field(default_factory=dict)
    total_rmse: float = math.nan
    prediction_bias: float | None = None
    interval_refusal_probability: float | None = None
    assumptions: tuple[str, ...] = ()
    charge: Mapping[str, Any] = field(default_factory=dict)
    coef_robust_sd: Mapping[str, float | None] = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """One row per coefficient plus ``prediction@mean``: noise sd, its robust version
        (IQR/1.349; NaN for closed forms), bias, RMSE."""
        names = [*self.coef_sd, "prediction@mean"]
        sd = [*self.coef_sd.values(), self.prediction_sd]
        bias = [self.coef_bias.get(k) for k in self.coef_sd] + [self.prediction_bias]
        rmse = [self.coef_rmse.get(k, math.nan) for k in self.coef_sd]
        pb = self.prediction_bias
        rmse.append(math.hypot(self.prediction_sd, pb) if pb is not None else
                    self.prediction_sd)
        rob = [self.coef_robust_sd.get(k) for k in self.coef_sd] + [None]
        return pd.DataFrame({"noise_sd": pd.Series(sd, index=names, dtype=float),
                             "robust_sd": pd.Series([math.nan if v is None else v for v in rob],
                                                    index=names, dtype=float),
                             "bias": pd.Series([math.nan if b is None else b for b in bias],
                                               index=names, dtype=float),
                             "rmse": pd.Series(rmse, index=names, dtype=float)})

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python, strict-JSON form (non-finite numbers and unknown biases as null)."""
        return {"method": self.method, "epsilon": _num(self.epsilon), "delta": self.delta,
                "n": self.n, "coef_sd": {k: _num(v) for k, v in self.coef_sd.items()},
                "coef_bias": {k: _num(v) for k, v in self.coef_bias.items()},
                "coef_rmse": {k: _num(v) for k, v in self.coef_rmse.items()},
                "coef_robust_sd": {k: _num(v) for k, v in self.coef_robust_sd.items()},
                "total_rmse": _num(self.total_rmse),
                "prediction_sd": _num(self.prediction_sd),
                "prediction_bias": _num(self.prediction_bias),
                "failure_probability": float(self.failure_probability),
                "interval_refusal_probability": _num(self.interval_refusal_probability),
                "how": self.how, "design": self.design,
                "assumptions": list(self.assumptions), "charge": dict(self.charge),
                "target": self.target, "target_sd": self.target_sd,
                "options": dict(self.options), "interval": self.interval}

    def __str__(self) -> str:
        budget = f"ε={self.epsilon:.4g}" + ("" if self.delta is None else f", δ={self.delta:g}")
        head = [f"Plan for {self.method} with {budget}, n={self.n} (public inputs only; "
                "nothing charged)"]
        if self.target is not None:
            head.append(f"  smallest ε with noise sd of {self.target} <= {self.target_sd:g}: "
                        f"{self.epsilon:.4g}")
        head.append(f"  design: {self.design}")
        head += [f"  ASSUMES: {a}" for a in self.assumptions]
        tot = "unknown" if not math.isfinite(self.total_rmse) else f"{self.total_rmse:.4g}"
        bias_known = any(v is not None for v in self.coef_bias.values())
        head.append(f"  total RMSE of the slopes: {tot}"
                    + ("" if bias_known else " (noise only: the bias is not known)"))
        head.append(f"  P(⊥) = {self.failure_probability:.3g}")
        if self.interval_refusal_probability is not None:
            head.append(f"  P(interval refused) = {self.interval_refusal_probability:.3g}")
        if self.interval is not None:
            head.append(f"  interval: {self.interval}")
        if self.charge:
            line = f"  charge: {self.charge.get('budget')} ({self.charge.get('neighbouring')})"
            if self.charge.get("price"):
                line += f"; on the ledger: {self.charge['price']}"
            if self.charge.get("affordable") is False:
                line += " -- the ledger CANNOT pay for it"
            head.append(line)
        head.append(f"  how: {self.how}")
        tab = self.table().to_string(float_format=lambda v: f"{v:.4g}", na_rep="unknown")
        return "\n".join(head) + "\n" + tab


def _parse(formula: Any) -> tuple[str, list[str], bool]:
    """(response, regressors, intercept) of a plain ``y ~ a + b [- 1]`` formula (plans need no
    data, so only column names are accepted; their bounds are converted by
    :func:`dpreg._bounds.xy_bounds`)."""
    if not isinstance(formula, str) or formula.count("~") != 1:
        raise InvalidInputError(f"formula must be a string like 'y ~ x1 + x2'; got {formula!r}")
    lhs, rhs = (s.strip() for s in formula.split("~"))
    terms = [t.strip() for t in rhs.replace("-", "+-").split("+") if t.strip()]
    intercept = "-1" not in [t.replace(" ", "") for t in terms]
    xs = [t for t in terms if t.replace(" ", "") not in ("-1", "1", "0")]
    for name in [lhs, *xs]:
        if not _NAME.match(name):
            raise InvalidInputError(f"formula terms of a plan must be column names; got {name!r}")
    if not xs:
        raise InvalidInputError(f"formula {formula!r} has no regressors")
    if len(set(xs)) != len(xs) or lhs in xs:
        raise InvalidInputError(f"formula {formula!r} names a column twice")
    return lhs, xs, intercept


def _design(n: int, xb: list[tuple[float, float]], yb: tuple[float, float], seed: int
            ) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the uniform design (as :meth:`PlanDesign.rows` draws them)."""
    g = np.random.default_rng(seed)
    X = np.column_stack([g.uniform(lo, hi, n) for lo, hi in xb])
    y = g.uniform(yb[0], yb[1], n)
    return X, y


def _simulate(method: str, eps: float, dlt: float | None, n: int, X: np.ndarray,
              y: np.ndarray, xs: list[str], yname: str, xb: list[tuple[float, float]],
              yb: tuple[float, float], intercept: bool, options: Mapping[str, Any],
              seed: int, n_sim: int) -> tuple[np.ndarray, float, list[str]]:
    """Run the release ``n_sim`` times on the design's rows; (coefficient draws of the
    non-failed runs, failed fraction, names)."""
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


def _rows_ols(design: PlanDesign, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """OLS coefficients of the rows clipped to the bounds (what the releases estimate)."""
    lo = np.array([b[0] for b in design.x_bounds])
    hi = np.array([b[1] for b in design.x_bounds])
    Xc = np.clip(X, lo, hi)
    if design.fit_intercept:
        Xc = np.column_stack([np.ones(Xc.shape[0]), Xc])
    return np.asarray(np.linalg.lstsq(Xc, np.clip(y, *design.y_bounds), rcond=None)[0])


def _simulated(spec: Any, eps: float, dlt: float | None, design: PlanDesign,
               options: Mapping[str, Any], seed: int, n_sim: int) -> ExpectedError:
    X, y = design.rows(seed)
    xs, xb = list(design.x_names), list(design.x_bounds)
    draws, fail, got = _simulate(spec.name, eps, dlt, design.n, X, y, xs, design.y_name, xb,
                                 design.y_bounds, design.fit_intercept, options, seed, n_sim)
    p = len(design.names)
    if len(draws) >= 2:
        cov = np.atleast_2d(np.cov(draws, rowvar=False)).reshape(p, p)
        bias = (draws.mean(axis=0) - _rows_ols(design, X, y)) if design.y_known else None
    else:
        cov = np.full((p, p), math.nan)
        bias = np.full(p, math.nan) if design.y_known else None
    what = {"uniform": "the uniform design", "reference": "the public reference rows",
            "declared": "synthetic rows with the declared moments (Gaussian copula, Beta "
                        "margins on the bounds; the response linear in x with normal "
                        "residuals)"}[design.kind]
    how = (f"simulation: {n_sim} releases on {what} (seed={seed}), sd over the releases, bias "
           "against the OLS coefficients of those rows")
    analytic = spec.failure_probability(epsilon=eps, delta=dlt, n=design.n, d=p,
                                        options=options)
    if analytic is not None:
        fail = analytic
        how += "; P(⊥) from the analytic PTR pass probability"
    notes = tail_note(draws, design.names) if len(draws) else ()
    if design.kind == "declared" and spec.moment_plan_caveat:
        notes = (spec.moment_plan_caveat, *notes)
    return ExpectedError(cov, bias, float(fail), how, notes=notes,
                         robust_sd=robust_sd(draws) if len(draws) else None)


def _charge(spec: Any, eps: float, dlt: float | None, k: int, options: Mapping[str, Any],
            ledger: Any) -> dict[str, Any]:
    """What a fit with these inputs charges (public), and with a ledger its price there in the
    ledger's units (a replay on an in-memory copy: the ledger itself is not touched)."""
    budget = spec.budget(epsilon=eps, delta=dlt, options=options, n_features=k)
    rel = str(options.get("neighbouring", spec.relation)) if spec.takes_neighbouring \
        else spec.relation
    out: dict[str, Any] = {"budget": str(budget), "charged": budget.as_dict(),
                           "neighbouring": rel, "price": None, "affordable": None}
    if ledger is None:
        return out
    from dpreg.privacy import Ledger
    from dpreg.privacy.context import collect_charges

    if not isinstance(ledger, Ledger):
        raise InvalidInputError(f"ledger must be a dpreg.Ledger (its price is shown, nothing "
                                f"is charged); got {type(ledger).__name__}")
    ledger.check_accepts(budget, neighbouring=rel)
    copy = Ledger(ledger.total, neighbouring=ledger.neighbouring,
                  slack=float(getattr(ledger, "_slack", 1e-10)))
    for ev in ledger.events():
        copy.spend(ev.budget, ev.label, neighbouring=ledger.neighbouring)
    if not copy.can_spend(budget, neighbouring=rel):
        out["affordable"] = False
        out["price"] = f"more than is left ({ledger.describe()})"
        return out
    with collect_charges() as got:
        copy.spend(budget, "plan", neighbouring=rel)
    out["affordable"] = True
    out["price"] = str(got[-1]) if got else None
    return out


def _one(spec: Any, eps: float, dlt: float | None, design: PlanDesign,
         options: Mapping[str, Any], seed: int, n_sim: int, ledger: Any,
         detail: bool = True) -> Plan:
    names = design.names
    ee = spec.expected_error(epsilon=eps, delta=dlt, design=design, options=options, seed=seed,
                             detail=detail)
    if ee is None:
        ee = _simulated(spec, eps, dlt, design, options, seed, n_sim)
    cov = np.asarray(ee.cov, dtype=float).reshape(len(names), len(names))
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    bias = None if ee.bias is None else np.asarray(ee.bias, dtype=float)
    rmse = sd if bias is None else np.sqrt(sd ** 2 + bias ** 2)
    slopes = [i for i, nm in enumerate(names) if nm != "intercept"]
    total = float(np.sqrt(np.sum(rmse[slopes] ** 2))) if bias is not None else math.nan
    c = np.asarray(design.mean[:design.k], dtype=float)
    if design.fit_intercept:
        c = np.concatenate([[1.0], c])
    pred_sd = float(math.sqrt(max(0.0, float(c @ cov @ c)))) if np.all(np.isfinite(cov)) \
        else math.nan
    pred_bias = None if bias is None else float(c @ bias)
    xb = list(design.x_bounds)
    interval = spec.planned_interval(epsilon=eps, n=design.n, x_bounds=xb, options=options,
                                     design=design)
    refusal = ee.interval_refusal_probability
    return Plan(
        spec.name, eps, dlt, design.n, dict(zip(names, map(float, sd))), pred_sd,
        float(ee.failure_probability), ee.how, design=design.describe(),
        options=dict(options), interval=interval,
        coef_bias={nm: (None if bias is None else float(b)) for nm, b in
                   zip(names, bias if bias is not None else [None] * len(names))},
        coef_rmse=dict(zip(names, map(float, rmse))), total_rmse=total,
        prediction_bias=pred_bias, interval_refusal_probability=refusal,
        assumptions=tuple(design.notes) + tuple(ee.notes),
        coef_robust_sd={nm: (None if ee.robust_sd is None else float(v)) for nm, v in
                        zip(names, ee.robust_sd if ee.robust_sd is not None
                            else [None] * len(names))},
        charge=_charge(spec, eps, dlt, design.k, options, ledger))


def _reference(design: Any, xs: list[str], yname: str) -> tuple[np.ndarray, np.ndarray | None]:
    """(X, y or None) of a public reference design (a DataFrame with the regressors' columns
    and optionally the response's, or a 2-D array of the regressors, optionally followed by
    the response).  No value is ever shown in a message."""
    k = len(xs)
    if isinstance(design, pd.DataFrame):
        missing = [c for c in xs if c not in design.columns]
        if missing:
            raise InvalidInputError(f"design (a public reference design) lacks the column(s) "
                                    f"{missing} of the formula")
        cols = xs + ([yname] if yname in design.columns else [])
        frame = design[cols]
        try:
            W = frame.to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise InvalidInputError("design (a public reference design) has non-numeric "
                                    "values in the formula's columns") from None
    else:
        W = np.asarray(design)
        if W.ndim != 2 or W.shape[1] not in (k, k + 1) or not np.issubdtype(W.dtype, np.number):
            raise InvalidInputError(f"design as an array must be a numeric 2-D array with {k} "
                                    f"columns (the regressors) or {k + 1} (then the response "
                                    "last)")
        W = W.astype(float)
    if W.shape[0] < 2 or not np.all(np.isfinite(W)):
        raise InvalidInputError("design (a public reference design) must have at least 2 rows "
                                "and only finite values in the formula's columns")
    return W[:, :k], (W[:, k] if W.shape[1] == k + 1 else None)


def _resolve_design(design: Any, cb: Any, n: int, xs: list[str], yname: str,
                    xb: list[tuple[float, float]], yb: tuple[float, float],
                    intercept: bool, all_bounds: Mapping[str, Any]) -> PlanDesign:
    from dpreg.codebook import Codebook, DeclaredMoments, check_moments

    args = (n, xs, yname, xb, yb, intercept)
    bounds = dict(zip([*xs, yname], [*xb, yb]))
    if isinstance(design, str):
        if design != "uniform":
            raise InvalidParameterError(
                "design must be 'uniform', a dict of declared moments, a dpreg.Codebook or a "
                f"public reference DataFrame; got {design!r}" + did_you_mean(design,
                                                                             ["uniform"]))
        return PlanDesign.uniform(*args)
    if design is None:
        if cb is not None and any(c in cb.moments().mean for c in xs):
            design = cb
        else:
            return PlanDesign.uniform(*args)
    if isinstance(design, (Codebook, DeclaredMoments)):
        mom = design.moments() if isinstance(design, Codebook) else design
        for c in [*xs, yname]:  # checked against their own bounds; now against the plan's
            if c in mom.mean:
                check_moments({"mean": {c: mom.mean[c]}, "sd": {c: mom.sd[c]}}, bounds,
                              "design (the declared moments, against the plan's bounds)")
        return PlanDesign.from_moments(*args, mom)
    if isinstance(design, Mapping):
        extra = [k for k in design if k not in ("mean", "sd", "corr", "source")]
        if extra:
            raise InvalidParameterError(f"design has the key {extra[0]!r}; a dict of declared "
                                        "moments has 'mean', 'sd', 'corr' and 'source'"
                                        + did_you_mean(str(extra[0]), ["mean", "sd", "corr",
                                                                       "source"]))
        # every declared column is checked (against its bounds), not only the formula's
        return PlanDesign.from_moments(*args, check_moments(design, all_bounds))
    if isinstance(design, (pd.DataFrame, np.ndarray, list)):
        X, y = _reference(design, xs, yname)
        return PlanDesign.from_reference(*args, X, y)
    raise InvalidInputError("design must be 'uniform', a dict of declared moments, a "
                            "dpreg.Codebook or a public reference DataFrame; got "
                            f"{type(design).__name__}")


@renamed_parameters(seed="random_state")
def plan(method: str, epsilon: float | None = None, delta: float | None = None, *, n: int,
         formula: str, bounds: Mapping[str, Any] | None = None, codebook: Any = None,
         design: Any = None, ledger: Any = None, target_sd: float | None = None,
         target: str | None = None, random_state: int = 0, n_sim: int = 200,
         seed: Any = DEPRECATED, **options: Any) -> Plan:
    """The expected error of ``method`` at ``epsilon`` (and ``delta``) for ``n`` rows of a
    public design -- or, with ``target_sd``, the smallest ε that meets it.

    Parameters
    ----------
    method:
        A method name (``dpreg methods``; not ``auto``).
    epsilon, delta:
        The budget to plan for (ε is not needed with ``target_sd``).
    n:
        The public number of rows.
    formula, bounds, codebook:
        A plain ``"y ~ x1 + x2"`` over columns with public (lo, hi): ``bounds`` (a dict) and/or
        a ``codebook`` (TOML path or :class:`dpreg.Codebook`; ``bounds`` add to it and win).
    design:
        The PUBLIC design the plan is for (module doc): ``None`` -- the codebook's declared
        moments when it has them, else the uniform-spread assumption (said in the plan);
        ``"uniform"``; a dict ``{"mean": {col: m}, "sd": {col: s}, "corr": {col: {other: r}},
        "source": "..."}`` of declared public moments (population sd; validated as a
        codebook's); a :class:`dpreg.Codebook`; or a DataFrame (or 2-D array) that is a
        public reference sample.  Never moments computed from the private data.
    ledger:
        A :class:`dpreg.Ledger` to price the release on (in its units; nothing is charged).
    target_sd, target:
        Solve for ε instead: the smallest ε whose noise sd of ``target`` (a coefficient name or
        ``"prediction"``; default the largest sd among the slopes) is <= ``target_sd``.
    random_state, n_sim:
        The seed (an integer >= 0) of the design's rows and of the plan's simulations, and
        the number of simulated releases (simulated methods only; see the module doc).
        ``seed=`` is the deprecated spelling of ``random_state`` (one release, with a
        ``DeprecationWarning``).
    options:
        Method options, as for :func:`dpreg.regress`.  For the Theil-Sen methods a response
        declared to take at most 20 levels (``y_levels=``, or the codebook's numeric levels
        of the response) gives regress's :class:`~dpreg.exceptions.TiedSlopesWarning` before
        anything is planned, and the plan's ``assumptions`` say that its error is of the
        median pairwise slope, which the ties pull to 0.

    Uses only these public inputs; reads no data and charges nothing.
    """
    from dpreg.codebook import merge_bounds, resolve_codebook

    entry = methods.get(method)
    if entry.is_selector:
        raise InvalidInputError("method must be a concrete method (plan the one 'auto' would "
                                "choose); got 'auto'")
    n = check_int(n, "n", minimum=2, maximum=10**9)
    seed = check_int(random_state, "random_state", minimum=0)
    n_sim = check_int(n_sim, "n_sim", minimum=10, maximum=100_000)
    cb = resolve_codebook(codebook)
    bounds = merge_bounds(cb, bounds) if cb is not None else bounds
    bounds = as_mapping(bounds)
    yname, xs, intercept = _parse(formula)
    if entry.one_x_only and len(xs) != 1:
        raise InvalidInputError(f"method {method!r} fits y on exactly one x; got {xs}")
    xb, yb = xy_bounds(bounds, xs, yname)
    dlt = None if delta is None else check_delta(delta, allow_zero=False)
    if entry.needs_delta and dlt is None:
        raise InvalidInputError(f"delta is required for method {method!r}")
    from dpreg._dispatch import check_option_keys, prepare_options

    check_option_keys(options)
    from dpreg.api import codebook_y_levels

    # the response's public levels from the codebook, as regress takes them (Theil-Sen only)
    options = codebook_y_levels(cb, yname, entry, options)
    # the fit's own option rule (unknown names, values, an option these settings would not
    # use): refused here as regress refuses it, never silently dropped from the plan
    checked, ci_alpha = prepare_options(entry, dict(options), n_features=len(xs))
    opts = {**checked, **({} if ci_alpha is None else {"ci_alpha": ci_alpha})}
    ties = _few_levels_note(entry, opts, n)  # warns as regress would, before any simulation
    des = _resolve_design(design, cb, n, xs, yname, xb, yb, intercept, bounds)

    def at(eps: float, detail: bool = True) -> Plan:
        p = _one(entry, eps, dlt, des, opts, seed, n_sim, ledger, detail)
        return p if ties is None else replace(p, assumptions=(*p.assumptions, ties))

    def search(eps: float) -> Plan:  # the steps of the ε search need the noise only
        return at(eps, detail=False)

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
    while not value(search(hi)) <= goal:
        hi *= 4.0
        if hi > cap:
            if value(search(cap)) <= goal:
                hi = cap
                break
            raise InvalidInputError(f"target_sd={goal:g} is not reached by any epsilon up to "
                                    f"{cap:.4g} for n={n}: increase n or the target")
    lo = hi / 4.0
    while lo > 1e-4 and value(search(lo)) <= goal:
        hi, lo = lo, lo / 4.0
    for _ in range(40):  # bisection on log ε to 0.5 %
        if hi / lo < 1.005:
            break
        mid = math.sqrt(lo * hi)
        if value(search(mid)) <= goal:
            hi = mid
        else:
            lo = mid
    best = at(hi)
    return replace(best, target=target or "max slope", target_sd=goal)


def _few_levels_note(spec: Any, options: Mapping[str, Any], n: int) -> str | None:
    """For a method that takes ``y_levels`` (the Theil-Sen methods) whose response is declared
    to take few levels: the :class:`~dpreg.exceptions.TiedSlopesWarning` that
    :func:`dpreg.regress` gives for the same inputs (:func:`dpreg.simple.ties.warn_few_levels`)
    and the plan's note that its error concerns the median pairwise slope, which the ties
    pull to 0.  Public inputs only (the number of levels and n; never a level)."""
    if "y_levels" not in spec.options:
        return None
    from dpreg.simple.ties import FEW_LEVELS_MAX, check_y_levels, min_tied_share, warn_few_levels

    levels = check_y_levels(options.get("y_levels"))
    warn_few_levels(levels, where=f"plan({spec.name!r})")
    if levels is None or levels > FEW_LEVELS_MAX:
        return None
    share = min_tied_share(levels, n)
    return (f"the planned error is of the DP median pairwise slope about the median pairwise "
            f"slope of the data, not about the OLS slope: with the response declared to take "
            f"{levels} value(s), at least about {share:.0%} of the pairs have a "
            "slope of exactly 0, which pulls that median to 0 whatever the relation between x "
            "and y (the plan's rows have such ties only when design= is a public reference "
            "sample that has them)")
