"""The ``auto`` pipeline: private bounds, private selection, the chosen method's fit
(see :mod:`dpreg.auto`)."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpreg import methods
from dpreg._validation import check_bounds, check_delta, check_epsilon, check_rng, is_seeded
from dpreg.auto.rules import (
    BOUNDS_FRACTION,
    NS_BOUNDARY_LIMIT,
    NS_K,
    NS_S0,
    NS_SPREAD_REFERENCE,
    SELECTION_FRACTION,
    TS_MATCHINGS,
    TUKEY_PASS_PROBABILITY,
    _fraction,
    boundary_statistic,
    choose_multivariate,
    choose_noisy_stats,
    selection_possible,
    selection_statistic,
    split_budget,
    tukey_pass_probability,
)
from dpreg.exceptions import InvalidInputError
from dpreg.privacy import ApproxDP, Neighbouring, PrivacyStatement, PureDP

__all__ = ["fit_auto", "check_options", "charged_budget"]

#: options of the chosen method that ``auto`` accepts (passed on, or dropped where the chosen
#: method has no use for them), besides fit_auto's own keyword options
PASSED_ON = frozenset({"ci_alpha", "output_range", "pairs"})


def check_options(options: dict[str, Any]) -> None:
    """Reject unknown (or dispatcher-owned) option names of ``method="auto"`` before anything
    is charged: fit_auto's own keyword options and :data:`PASSED_ON`."""
    import inspect

    from dpreg._spec import SET_BY_CALLER

    if not options:
        return
    params = inspect.signature(fit_auto).parameters
    allowed = {k for k, p in params.items() if p.kind is p.KEYWORD_ONLY} - SET_BY_CALLER
    allowed |= PASSED_ON
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise InvalidInputError(
            f"unknown option(s) for method 'auto': {', '.join(unknown)}; expected one of "
            f"{', '.join(sorted(allowed))}")


def charged_budget(*, epsilon: float, delta: float | None, options: dict[str, Any],
                   n_features: int = 1) -> Any:
    """What ``auto`` charges a ledger in all, from public inputs only: its pieces (DP bounds,
    selection statistics, the chosen method) compose to ε (one x) or (ε, δ) (several x).
    Raises :class:`InvalidInputError` for inputs fit_auto would reject before charging."""
    check_options(options)
    eps = check_epsilon(epsilon)
    if n_features == 1:
        return PureDP(eps)
    if delta is None:
        raise InvalidInputError("delta is required for method 'auto' with several "
                                "regressors; got None")
    return ApproxDP(eps, check_delta(delta, allow_zero=False))

_SOURCE = ("dpreg auto: selection rule from dpreg's harness (docs/auto.md); Alabi et al. 2022 "
           "(the regimes of n·var(x), ε and σ_e)")



def _resolve_bounds(spec: Any, d: int, name: str) -> list[tuple[float, float] | None]:
    """Per-column bounds, ``None`` marking a column whose bounds are to be proposed privately."""
    if isinstance(spec, str):
        if spec != "private":
            raise InvalidInputError(f"{name} must be (lo, hi) pairs or 'private'; got {spec!r}")
        return [None] * d
    if spec is None:
        raise InvalidInputError(
            f"{name} is required: public (lo, hi) bounds, or 'private' to spend part of ε on DP "
            "bounds (bounds-free mode)")
    out: list[tuple[float, float] | None] = []
    items = list(spec)
    if len(items) == 2 and all(np.isscalar(v) and not isinstance(v, str) for v in items):
        items = [tuple(items)] * d  # one (lo, hi) pair for every column
    if len(items) != d:
        raise InvalidInputError(f"{name} must have one entry per column ({d}); got {len(items)}")
    for j, b in enumerate(items):
        out.append(None if (isinstance(b, str) and b == "private") else
                   check_bounds(b, f"{name}[{j}]"))
    return out


def _fit_tukey(X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float, n_models: int,
               names: list[str], y_name: str, x_bounds: Any, y_bounds: Any, fit_intercept: bool,
               ledger: Any, rng: Any) -> Any:
    import pandas as pd

    from dpreg.exceptions import MechanismFailure
    from dpreg.linear_model import TukeyEM

    est = TukeyEM(epsilon=epsilon, delta=delta, n_models=n_models, bounds_X=x_bounds,
                  bounds_y=y_bounds, fit_intercept=fit_intercept, random_state=rng, ledger=ledger)
    try:
        est.fit(pd.DataFrame(X, columns=names), y)
    except MechanismFailure:
        pass  # ⊥ is a typed result: results_ holds failed=True and the reason
    return est.results_.replace(dep_var=y_name)


@dataclass
class _Run:
    """The validated public inputs and the data of one ``auto`` run, and what it has decided
    so far (bounds per column: ``None`` until proposed privately)."""

    X: np.ndarray
    y: np.ndarray
    names: list[str]
    y_name: str
    eps: float
    delta: float | None
    fit_intercept: bool
    x_bounds: list[tuple[float, float] | None]
    y_bounds: tuple[float, float] | None
    coarse: dict[str, tuple[float, float]]
    total: Any
    ledger: Any
    gen: np.random.Generator
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def simple(self) -> bool:
        return self.X.shape[1] == 1

    def all_bounds_known(self) -> bool:
        return self.y_bounds is not None and all(b is not None for b in self.x_bounds)


def _validate(X: Any, y: Any, *, epsilon: float, delta: float | None, x_bounds: Any,
              y_bounds: Any, x_names: list[str] | None, y_name: str, fit_intercept: bool,
              selection_fraction: float, bounds_fraction: float, coarse_range: Any, ledger: Any,
              random_state: Any) -> _Run:
    """Phase 1: every public input and the data's shape, checked before anything is charged;
    the ledger must hold the whole budget (ε, or (ε, δ) with several x)."""
    from dpreg._validation import check_array, check_xy
    from dpreg.preprocess import DEFAULT_COARSE_RANGE

    Xa = check_array(X, "X", ndim=(1, 2))
    if Xa.ndim == 1:
        Xa = Xa.reshape(-1, 1)
    Xa, ya = check_xy(Xa, y, x_ndim=2, min_rows=2, x_name="X", y_name="y")
    d = Xa.shape[1]
    names = list(x_names) if x_names is not None else [f"x{j}" for j in range(d)]
    eps = check_epsilon(epsilon)
    simple = d == 1
    if simple and not fit_intercept:
        raise InvalidInputError("method 'auto' with one x always fits an intercept")
    dlt = None
    if not simple:
        if delta is None:
            raise InvalidInputError("delta is required for method 'auto' with several regressors "
                                    "(DP-GD/TukeyEM are (ε, δ)-DP): e.g. 1e-6")
        dlt = check_delta(delta, allow_zero=False)
    xb_list = _resolve_bounds(x_bounds, d, "x_bounds")
    yb = None if (isinstance(y_bounds, str) and y_bounds == "private") else (
        _resolve_bounds([y_bounds], 1, "y_bounds")[0] if y_bounds is not None else
        _resolve_bounds(None, 1, "y_bounds")[0])
    fs = _fraction(selection_fraction, "selection_fraction")
    fb = _fraction(bounds_fraction, "bounds_fraction")

    def coarse_for(col: str) -> tuple[float, float]:
        if coarse_range is None:
            return DEFAULT_COARSE_RANGE
        if isinstance(coarse_range, dict):
            return check_bounds(coarse_range.get(col, DEFAULT_COARSE_RANGE), f"coarse_range[{col!r}]")
        return check_bounds(coarse_range, "coarse_range")

    coarse = {c: coarse_for(c) for c in [*names, y_name]}
    total = PureDP(eps) if simple else ApproxDP(eps, dlt)  # type: ignore[arg-type]
    if ledger is not None:
        from dpreg.privacy import Ledger

        if not isinstance(ledger, Ledger):
            raise InvalidInputError(f"ledger must be a dpreg.Ledger or None; got {ledger!r}")
        if not ledger.can_spend(total, neighbouring=Neighbouring.REPLACE_ONE):
            from dpreg.exceptions import BudgetExceededError

            raise BudgetExceededError(
                f"method 'auto' needs {total} in all; the ledger has {ledger.remaining()} left")
    return _Run(X=Xa, y=ya, names=names, y_name=y_name, eps=eps, delta=dlt,
                fit_intercept=fit_intercept, x_bounds=xb_list, y_bounds=yb, coarse=coarse,
                total=total, ledger=ledger, gen=check_rng(random_state),
                info={"selection_fraction": fs, "bounds_fraction": fb})


def _plan(run: _Run) -> tuple[str, int, bool, dict[str, PureDP | None]]:
    """Phase 2, public inputs only: (method or "" while the private choice is open, TukeyEM's
    m (0 unless TukeyEM is chosen), whether DP bounds are needed, the budget split).

    Several x with some bounds private: TukeyEM where its PTR step is predicted to pass (it
    needs no bounds, so nothing is spent on them).  Otherwise DP-GD, with no selection share
    (it needs bounds; its default clip reads the spread of y itself).  One x: when no data
    inside the bounds can reach the NoisyStats branch of :func:`choose_noisy_stats`
    (:func:`selection_possible`, a bound in n and ε alone) the choice is Theil-Sen whatever the
    data and no budget is spent on it."""
    eps, info = run.eps, run.info
    fs, fb = info["selection_fraction"], info["bounds_fraction"]
    unknown_bounds = any(b is None for b in run.x_bounds) or run.y_bounds is None
    if not run.simple:
        d_cols = run.X.shape[1] + (1 if run.fit_intercept else 0)
        method, m = choose_multivariate(run.n, d_cols, epsilon=eps, delta=run.delta,  # type: ignore[arg-type]
                                        bounds_public=not unknown_bounds)
        if not methods.get(method).needs_bounds:  # TukeyEM (bounds-free): nothing is selected
            info.update({"rule": _MV_RULE, "n_models": m,
                         "pass_probability": tukey_pass_probability(m, d_cols, epsilon=eps,
                                                                    delta=run.delta)})  # type: ignore[arg-type]
            return method, m, False, split_budget(eps, selection_fraction=None,
                                                  bounds_fraction=None)
        info.update({"rule": _MV_RULE, "n_models": m})
        parts = split_budget(eps, selection_fraction=None,
                             bounds_fraction=fb if unknown_bounds else None)
        return method, m, unknown_bounds, parts
    skip = not selection_possible(run.n, eps)
    parts = split_budget(eps, selection_fraction=None if skip else fs,
                         bounds_fraction=fb if unknown_bounds else None)
    return ("theil-sen-exp" if skip else ""), 0, unknown_bounds, parts


_MV_RULE = (f"several x: with some bounds private, tukey-em iff its PTR step is predicted to "
            f"pass with probability >= {TUKEY_PASS_PROBABILITY:g} (it needs no bounds); else "
            f"dp-gd (its default clip grows for a widely spread y, from its own release)")


def _propose_bounds(run: _Run, bpart: PureDP) -> None:
    """Phase 3: DP bounds for every column without public ones (the bounds part of ε split
    equally between them), charged to the ledger."""
    from dpreg.preprocess import propose_bounds

    private_bounds: dict[str, tuple[float, float]] = {}
    cols = [j for j, b in enumerate(run.x_bounds) if b is None]
    k = len(cols) + (1 if run.y_bounds is None else 0)
    each = bpart.split([1.0] * k) if math.isfinite(bpart.epsilon) else [bpart] * k
    i = 0
    for j in cols:
        name = run.names[j]
        pb = propose_bounds(run.X[:, j], epsilon=each[i].epsilon, coarse_range=run.coarse[name],
                            rng=run.gen, ledger=run.ledger, label=f"auto: DP bounds for {name}")
        run.x_bounds[j] = pb.bounds
        private_bounds[name] = pb.bounds
        i += 1
    if run.y_bounds is None:
        pb = propose_bounds(run.y, epsilon=each[i].epsilon, coarse_range=run.coarse[run.y_name],
                            rng=run.gen, ledger=run.ledger,
                            label=f"auto: DP bounds for {run.y_name}")
        run.y_bounds = pb.bounds
        private_bounds[run.y_name] = pb.bounds
    run.info["bounds_epsilon"] = bpart.epsilon
    run.info["private_bounds"] = private_bounds


def _select_simple(run: _Run, sel: PureDP | None, xb: tuple[float, float],
                   yb: tuple[float, float]) -> str:
    """Phase 4 (one x): the private choice between NoisyStats and Theil-Sen from a noisy
    nvar(x) and a noisy boundary count (``sel`` split equally), or Theil-Sen for free when the
    plan spent nothing on selection."""
    from dpreg.preprocess import noisy_boundary_count, noisy_nvar

    rule = (f"noisy-stats iff u*(max(share,0)+{NS_S0:g}) > {NS_K:g} and "
            f"z*sx2/{NS_SPREAD_REFERENCE:g} < {NS_BOUNDARY_LIMIT:g} (u = eps^2*nvar(x)/w_x^2, "
            "share = boundary count/n, z = boundary count/sqrt(n), sx2 = nvar(x)/(n*w_x^2)), "
            f"else theil-sen-exp ({TS_MATCHINGS} matchings)")
    if sel is None:
        run.info.update({"rule": rule + "; eps^2*n*(s0/4 + C*ref/sqrt(n)) <= K, so no data in "
                         "the bounds can reach noisy-stats: theil-sen-exp (public n and eps; no "
                         "selection budget spent)", "selection_epsilon": 0.0})
        return "theil-sen-exp"
    eps = run.eps
    e_nv, e_bc = sel.split([1.0, 1.0]) if math.isfinite(sel.epsilon) else (sel, sel)
    nv = noisy_nvar(run.X[:, 0], epsilon=e_nv.epsilon, x_bounds=xb, rng=run.gen,
                    ledger=run.ledger, label="auto: selection statistic nvar(x)")
    bc = noisy_boundary_count(np.column_stack([run.X[:, 0], run.y]), bounds=[xb, yb],
                              epsilon=e_bc.epsilon, rng=run.gen, ledger=run.ledger,
                              label="auto: selection statistic boundary count")
    stat = selection_statistic(nv.value, epsilon=eps, x_bounds=xb)
    u = eps * stat if math.isfinite(eps) else stat
    z = boundary_statistic(bc.value, run.n)
    nv_scaled = nv.value / (xb[1] - xb[0]) ** 2
    run.info.update({"rule": rule, "statistic": stat, "u": u,
                     "boundary_share": bc.value / run.n, "boundary_z": z,
                     "x_spread": nv_scaled / run.n, "selection_epsilon": sel.epsilon})
    ns = bool(choose_noisy_stats(nv_scaled, bc.value, n=run.n, epsilon=eps))
    return "noisy-stats" if ns else "theil-sen-exp"


def _method_options(run: _Run, method: str, m: int, options: dict[str, Any]) -> dict[str, Any]:
    """Phase 5: the chosen method's options -- the user's where it has a use for them, the
    interval request, and the public choices the rules made (the number of TukeyEM models,
    Theil-Sen's matchings, the replace-one relation of the pipeline's statement)."""
    spec = methods.get(method)
    opts = {k: v for k, v in options.items() if k in spec.options or k == "ci_alpha"}
    if run.simple and "pairs" in spec.options:
        from dpreg.simple import max_matchings

        opts.setdefault("pairs", min(TS_MATCHINGS, max_matchings(run.n)))
    if "n_models" in spec.options:
        return {"n_models": m}
    if spec.takes_neighbouring and not run.simple:
        opts["neighbouring"] = "replace-one"
    return opts


def _statement(total: Any, inner: PrivacyStatement, info: dict[str, Any],
               seeded: bool) -> PrivacyStatement:
    """The pipeline's privacy statement: the composed total, replace-one neighbours (n
    public), naming the chosen method's own statement.  The record is a deep copy: nothing the
    result's ``extra["auto"]`` shares can change the statement."""
    return PrivacyStatement(
        total, Neighbouring.REPLACE_ONE, f"auto → {inner.mechanism}", _SOURCE + "; " + inner.source,
        seeded=seeded, details={"auto": copy.deepcopy(info), "method": inner.as_dict()})


def fit_auto(
    X: Any, y: Any, *, epsilon: float, delta: float | None = None, x_bounds: Any,
    y_bounds: Any, x_names: list[str] | None = None, y_name: str = "y", fit_intercept: bool = True,
    selection_fraction: float = SELECTION_FRACTION, bounds_fraction: float = BOUNDS_FRACTION,
    coarse_range: Any = None, ledger: Any = None, random_state: Any = None,
    allow_unreliable: bool = False, **options: Any,
) -> Any:
    """Run the whole ``auto`` pipeline; returns a :class:`~dpreg.inference.RegressionResults`.

    ``x_bounds``: a list of ``(lo, hi)`` (one per column; an entry may be ``"private"``) or
    ``"private"``; ``y_bounds``: ``(lo, hi)`` or ``"private"``.  ``coarse_range``: the public
    range searched by the DP bounds (default ±10⁶; one ``(lo, hi)`` for all columns, or a dict
    column name -> ``(lo, hi)``).  ``options`` go to the chosen method (``output_range`` for
    Theil-Sen).  The result's ``extra["auto"]`` records the chosen method, the selection
    statistic and spend, and the private bounds; ``privacy`` states the composed total.
    After DP bounds, :func:`dpreg.auto.checks.check_bounds_free` (DP outputs only) raises
    ``InsufficientBudgetError`` when the rest cannot be useful -- with ``allow_unreliable=True``
    it warns instead and the result gets ``extra["reliable"] = False``.

    Phases: validate everything (:func:`_validate`), plan from public inputs (:func:`_plan`),
    DP bounds where none are public (:func:`_propose_bounds`), the private choice with one x
    (:func:`_select_simple`), the chosen method's fit; the result is built once, with the
    pipeline's statement (:func:`_statement`).
    """
    from dpreg import _dispatch

    run = _validate(X, y, epsilon=epsilon, delta=delta, x_bounds=x_bounds, y_bounds=y_bounds,
                    x_names=x_names, y_name=y_name, fit_intercept=fit_intercept,
                    selection_fraction=selection_fraction, bounds_fraction=bounds_fraction,
                    coarse_range=coarse_range, ledger=ledger, random_state=random_state)
    method, m, need_bounds, parts = _plan(run)
    if need_bounds:
        assert parts["bounds"] is not None
        _propose_bounds(run, parts["bounds"])
        from dpreg.auto.checks import check_bounds_free  # from DP outputs only: useful at all?
        run.info["reliability"] = check_bounds_free(
            run.info["private_bounds"], n=run.n, bounds_epsilon=parts["bounds"].epsilon,
            coarse=run.coarse, delta=run.delta, n_x=run.X.shape[1],
            method_epsilon=parts["method"].epsilon,  # type: ignore[union-attr]
            allow_unreliable=allow_unreliable).as_dict()
    else:
        run.info["private_bounds"] = {}
    xbs: list[tuple[float, float]] = [b if b is not None else (0.0, 1.0) for b in run.x_bounds]
    ybs: tuple[float, float] = run.y_bounds if run.y_bounds is not None else (0.0, 1.0)
    method_eps = parts["method"].epsilon  # type: ignore[union-attr]
    if run.simple:
        method = _select_simple(run, parts["selection"], xbs[0], ybs)
    opts = _method_options(run, method, m, options)
    run.info["method"] = method
    run.info["method_epsilon"] = method_eps
    if not methods.get(method).needs_bounds:  # TukeyEM: public bounds only if all were given
        known_all = run.all_bounds_known()
        out = _fit_tukey(run.X, run.y, epsilon=method_eps, delta=run.delta, n_models=m,  # type: ignore[arg-type]
                         names=run.names, y_name=run.y_name,
                         x_bounds=xbs if known_all else None,
                         y_bounds=run.y_bounds if known_all else None,
                         fit_intercept=run.fit_intercept, ledger=run.ledger, rng=run.gen)
    else:
        out = _dispatch.fit(method, run.X, run.y, epsilon=method_eps, delta=run.delta,
                            x_bounds=xbs, y_bounds=ybs, x_names=run.names, y_name=run.y_name,
                            fit_intercept=run.fit_intercept, ledger=run.ledger,
                            random_state=run.gen, options=opts)
    known = {run.names[j]: b for j, b in enumerate(run.x_bounds) if b is not None}
    if run.y_bounds is not None:
        known[run.y_name] = run.y_bounds
    run.info["bounds_needed"] = bool(need_bounds) or methods.get(method).needs_bounds
    extra = {**out.extra, "auto": run.info}
    if not run.info.get("reliability", {}).get("reliable", True):
        extra["reliable"] = False  # allow_unreliable=True: fitted although predicted useless
    return out.replace(
        privacy=_statement(run.total, out.privacy, run.info, is_seeded(random_state)),
        extra=extra, method=f"auto:{method}",
        bounds=known or None)  # TukeyEM without bounds: none were used, none are reported
