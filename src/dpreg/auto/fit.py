"""The ``auto`` pipeline: private bounds, private selection, the chosen method's fit
(see :mod:`dpreg.auto`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpreg._validation import check_bounds, check_delta, check_epsilon, check_rng, is_seeded
from dpreg.auto.rules import (
    BOUNDS_FRACTION,
    NS_BOUNDARY_LIMIT,
    NS_U_THRESHOLD,
    SELECTION_FRACTION,
    TS_MATCHINGS,
    TUKEY_PASS_PROBABILITY,
    _fraction,
    choose_multivariate,
    choose_simple,
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

    from dpreg._dispatch import SET_BY_DISPATCH

    if not options:
        return
    params = inspect.signature(fit_auto).parameters
    allowed = {k for k, p in params.items() if p.kind is p.KEYWORD_ONLY} - SET_BY_DISPATCH
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
    out = est.results_
    out.dep_var = y_name
    return out


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
    """
    from dpreg import _dispatch
    from dpreg._validation import check_array, check_xy
    from dpreg.preprocess import DEFAULT_COARSE_RANGE, noisy_boundary_count, noisy_nvar, propose_bounds

    Xa = check_array(X, "X", ndim=(1, 2))
    if Xa.ndim == 1:
        Xa = Xa.reshape(-1, 1)
    Xa, ya = check_xy(Xa, y, x_ndim=2, min_rows=2, x_name="X", y_name="y")
    n, d = Xa.shape
    names = list(x_names) if x_names is not None else [f"x{j}" for j in range(d)]
    eps = check_epsilon(epsilon)
    simple = d == 1
    if simple and not fit_intercept:
        raise InvalidInputError("method 'auto' with one x always fits an intercept")
    dlt = None
    if not simple:
        if delta is None:
            raise InvalidInputError("delta is required for method 'auto' with several regressors "
                                    "(BoostedAdaSSP/TukeyEM are (ε, δ)-DP): e.g. 1e-6")
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
    gen = check_rng(random_state)
    info: dict[str, Any] = {"selection_fraction": fs, "bounds_fraction": fb}

    # ---- multivariate: the choice is free (n, d public) and decides whether bounds are needed
    if not simple:
        d_cols = d + (1 if fit_intercept else 0)
        method, m = choose_multivariate(n, d_cols, epsilon=eps, delta=dlt)  # type: ignore[arg-type]
        info.update({"rule": "TukeyEM iff predicted PTR pass probability >= "
                     f"{TUKEY_PASS_PROBABILITY}, else BoostedAdaSSP", "n_models": m,
                     "pass_probability": tukey_pass_probability(m, d_cols, epsilon=eps,
                                                                delta=dlt)  # type: ignore[arg-type]
                     if m >= 8 else 0.0})
        need_bounds = method != "tukey-em" and (any(b is None for b in xb_list) or yb is None)
        parts = split_budget(eps, selection_fraction=None, bounds_fraction=fb if need_bounds else None)
    else:
        need_bounds = any(b is None for b in xb_list) or yb is None
        # u = ε²·nvar(x)/w² <= ε²·n/4 for any data in the bounds: when even that cannot exceed U
        # the choice is Theil-Sen whatever the data, so no budget is spent on it (public n, ε)
        skip = not selection_possible(n, eps)
        parts = split_budget(eps, selection_fraction=None if skip else fs,
                             bounds_fraction=fb if need_bounds else None)
        method, m = ("theil-sen-exp" if skip else ""), 0

    # ---- private bounds
    private_bounds: dict[str, tuple[float, float]] = {}
    if need_bounds:
        cols = [j for j, b in enumerate(xb_list) if b is None]
        k = len(cols) + (1 if yb is None else 0)
        bpart = parts["bounds"]
        assert bpart is not None
        each = bpart.split([1.0] * k) if math.isfinite(bpart.epsilon) else [bpart] * k
        i = 0
        for j in cols:
            pb = propose_bounds(Xa[:, j], epsilon=each[i].epsilon, coarse_range=coarse[names[j]],
                                rng=gen, ledger=ledger, label=f"auto: DP bounds for {names[j]}")
            xb_list[j] = pb.bounds
            private_bounds[names[j]] = pb.bounds
            i += 1
        if yb is None:
            pb = propose_bounds(ya, epsilon=each[i].epsilon, coarse_range=coarse[y_name], rng=gen,
                                ledger=ledger, label=f"auto: DP bounds for {y_name}")
            yb = pb.bounds
            private_bounds[y_name] = pb.bounds
        info["bounds_epsilon"] = bpart.epsilon
        from dpreg.auto.checks import check_bounds_free  # from DP outputs only: useful at all?
        info["reliability"] = check_bounds_free(
            private_bounds, n=n, bounds_epsilon=bpart.epsilon, coarse=coarse, delta=dlt, n_x=d,
            method_epsilon=parts["method"].epsilon, allow_unreliable=allow_unreliable).as_dict()  # type: ignore[union-attr]
    info["private_bounds"] = private_bounds
    xbs: list[tuple[float, float]] = [b if b is not None else (0.0, 1.0) for b in xb_list]
    ybs: tuple[float, float] = yb if yb is not None else (0.0, 1.0)

    # ---- selection (simple)
    method_eps = parts["method"].epsilon  # type: ignore[union-attr]
    opts = dict(options)
    if simple and parts["selection"] is None:
        info.update({"rule": f"theil-sen-exp: eps^2*n/4 <= {NS_U_THRESHOLD:g}, so u cannot exceed "
                     "the threshold for any data (public n and eps; no selection budget spent)",
                     "selection_epsilon": 0.0})
    elif simple:
        sel = parts["selection"]
        assert sel is not None
        e_nv, e_bc = sel.split([1.0, 1.0]) if math.isfinite(sel.epsilon) else (sel, sel)
        nv = noisy_nvar(Xa[:, 0], epsilon=e_nv.epsilon, x_bounds=xbs[0], rng=gen, ledger=ledger,
                        label="auto: selection statistic nvar(x)")
        bc = noisy_boundary_count(np.column_stack([Xa[:, 0], ya]), bounds=[xbs[0], ybs],
                                  epsilon=e_bc.epsilon, rng=gen, ledger=ledger,
                                  label="auto: selection statistic boundary count")
        stat = selection_statistic(nv.value, epsilon=eps, x_bounds=xbs[0])
        u = eps * stat if math.isfinite(eps) else stat
        share = bc.value / n
        method = choose_simple(u, share)
        info.update({"rule": f"noisy-stats iff eps^2*nvar(x)/w_x^2 > {NS_U_THRESHOLD:g} and "
                     f"boundary share < {NS_BOUNDARY_LIMIT:g}, else theil-sen-exp "
                     f"({TS_MATCHINGS} matchings)", "statistic": stat, "u": u,
                     "boundary_share": share, "selection_epsilon": sel.epsilon})
    if simple and method == "theil-sen-exp":
        from dpreg.simple._common import max_matchings

        opts.setdefault("pairs", min(TS_MATCHINGS, max_matchings(n)))
    elif simple:
        opts.pop("output_range", None)
        opts.pop("pairs", None)
    elif method == "tukey-em":
        opts = {"n_models": m}
    else:
        opts = {"neighbouring": "replace-one", **{k: v for k, v in opts.items()
                                                   if k not in ("output_range", "pairs")}}
    info["method"] = method
    info["method_epsilon"] = method_eps
    if method == "tukey-em":  # needs no bounds: use the public ones only if all were given
        all_known = yb is not None and all(b is not None for b in xb_list)
        out = _fit_tukey(Xa, ya, epsilon=method_eps, delta=dlt, n_models=m, names=names,  # type: ignore[arg-type]
                         y_name=y_name, x_bounds=xbs if all_known else None,
                         y_bounds=yb if all_known else None, fit_intercept=fit_intercept,
                         ledger=ledger, rng=gen)
    else:
        out = _dispatch.fit(method, Xa, ya, epsilon=method_eps, delta=dlt, x_bounds=xbs,
                            y_bounds=ybs, x_names=names, y_name=y_name, fit_intercept=fit_intercept,
                            ledger=ledger, random_state=gen, options=opts)
    known = {names[j]: b for j, b in enumerate(xb_list) if b is not None}
    if yb is not None:
        known[y_name] = yb
    out.bounds = known or None  # TukeyEM without bounds: none were used, none are reported
    info["bounds_needed"] = bool(need_bounds) or method != "tukey-em"
    inner = out.privacy
    out.privacy = PrivacyStatement(
        total, Neighbouring.REPLACE_ONE, f"auto → {inner.mechanism}", _SOURCE + "; " + inner.source,
        seeded=is_seeded(random_state),
        details={"auto": {k: v for k, v in info.items()}, "method": inner.as_dict()},
    )
    out.extra["auto"] = info
    if not info.get("reliability", {}).get("reliable", True):
        out.extra["reliable"] = False  # allow_unreliable=True: fitted although predicted useless
    out.method = f"auto:{method}"
    return out

