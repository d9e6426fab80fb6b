"""DP Theil-Sen line plus a DP confidence interval for its slope, from one budget.

:func:`theil_sen_with_ci` is what ``DPTheilSen(ci_alpha=...)`` and ``dpreg.regress(...,
method="theil-sen-*", ci_alpha=...)`` run: **ε-DP (pure), replace-one neighbours, n public**.
``PureDP(ε)`` is charged once (after all validation, before any noise) and split in two halves
by :func:`line_ci_split`: ε/2 releases the line (:func:`dpreg.simple.theil_sen`, Alabi et al. 2022)
and ε/2 the Sarathy–Vadhan slope interval (:func:`dpreg.simple.theil_sen_ci`, Sarathy & Vadhan
2025, Alg. 6.1-6.2); both are ε/2-DP, so the pair is ε-DP by sequential composition.  The
interval consumed budget, so it exists for this α only; the intercept has no DP interval.
See docs/privacy/theil_sen_ci.md.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from dpreg._spec import Release, ReleasePlan
from dpreg._validation import (
    DEPRECATED,
    check_bounds,
    check_int,
    check_rng,
    is_seeded,
    renamed_parameters,
)
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import RegressionResults
from dpreg.privacy import Neighbouring, PrivacyStatement, PureDP, charge
from dpreg.simple._common import check_pairs_arg, check_simple_xy, warn_not_private
from dpreg.simple._theil_sen import (
    PairStatistics,
    check_smooth_size,
    check_theta,
    plan_theil_sen,
    release_theil_sen,
    theil_sen_result,
    theil_sen_statistics,
)
from dpreg.simple.ci import (
    CI_METHODS,
    POINT_MASS_TEXT,
    plan_theil_sen_ci,
    release_theil_sen_ci,
    resolve_ci_method,
    theil_sen_ci_result,
    warn_point_mass,
    warn_tight_search,
)
from dpreg.simple.ranges import default_prediction_range, default_slope_range

__all__ = ["theil_sen_with_ci", "line_ci_split", "plan_theil_sen_with_ci",
           "release_theil_sen_with_ci", "theil_sen_with_ci_result"]

MEDIANS = ("exp", "wide", "smooth")


def line_ci_split(epsilon: float) -> tuple[PureDP, PureDP]:
    """Budget split of :func:`theil_sen_with_ci`: (line, slope interval) = (ε/2, ε/2)
    (``PureDP.split``, whose parts never sum to more than ε); ε = ∞ gives (∞, ∞).

    Notes
    -----
    Chosen by measurement (docs/uncertainty.md, "Theil-Sen: flagged range-wide intervals
    and widths"; y = 0.5x + N(0, 0.1²), n = 100-400, ε = 1-10, same seeds): giving the
    interval 60% or 67% of ε narrows it by 5-45% but raises the median slope error of the
    line by up to 2× where ε·n is small (n = 200, ε = 1: 0.118 → 0.228 → 0.531), while with
    halves the interval already meets the 2× target at n = 400, ε = 10 (1.68× the
    non-private Theil-Sen interval).
    """
    eps = float(epsilon)
    if not math.isfinite(eps):
        return PureDP(eps), PureDP(eps)
    line, ci = PureDP(eps).split([1, 1])
    return line, ci


@renamed_parameters(alpha="ci_alpha")
def theil_sen_with_ci(x: Any, y: Any, *, epsilon: float, ci_alpha: float,
                      x_bounds: tuple[float, float], y_bounds: tuple[float, float],
                      median: str = "exp", pairs: str | int = "all", theta: float | None = None,
                      dof: int = 3, output_range: Any = None, slope_range: Any = None,
                      ci_method: str = "auto", x_name: str = "x", y_name: str = "y",
                      ledger: Any = None, rng: Any = None,
                      alpha: Any = DEPRECATED) -> RegressionResults:
    """Theil-Sen line (ε/2) plus a Sarathy–Vadhan DP (1 − α) interval for the slope (ε/2).

    ``epsilon`` and ``ci_alpha`` must already be valid (the callers check them; ``alpha=`` is
    the deprecated spelling of ``ci_alpha``, kept for one release); ``output_range``
    defaults to :func:`~dpreg.simple.ranges.default_prediction_range` of ``y_bounds`` and
    ``slope_range`` to :func:`~dpreg.simple.ranges.default_slope_range`.  Everything both
    releases need is validated before ``PureDP(ε)`` is charged to ``ledger``.  Returns a
    :class:`~dpreg.inference.RegressionResults` (method ``theil-sen-{median}``) whose
    ``conf_int(ci_alpha)`` is the slope interval (NaN for the intercept); a ⊥ line is returned
    as the failed line's result.

    The pipeline: :func:`plan_theil_sen_with_ci` (public: the line's
    :func:`~dpreg.simple.plan_theil_sen` and the interval's
    :func:`~dpreg.simple.plan_theil_sen_ci` at the halves of :func:`line_ci_split`) -> the
    statistics (:func:`~dpreg.simple.theil_sen_statistics`) -> the ledger charge (once) ->
    :func:`release_theil_sen_with_ci` (the line's release, then the interval's, from one
    generator) -> :func:`theil_sen_with_ci_result` (post-processing).
    """
    gen = check_rng(rng)
    xa, ya = check_simple_xy(x, y)
    plan = plan_theil_sen_with_ci(epsilon=epsilon, ci_alpha=ci_alpha, x_bounds=x_bounds,
                                  y_bounds=y_bounds, median=median, pairs=pairs, theta=theta,
                                  dof=dof, output_range=output_range, slope_range=slope_range,
                                  ci_method=ci_method, n=int(xa.size))
    stats = theil_sen_statistics(xa, ya, plan.options["line"])
    what = f"{plan.method} + DP slope CI"
    finite = not plan.budget.is_infinite
    if finite:
        charge(ledger, plan.budget, what, plan.relation)
        warn_tight_search(plan.options["ci"])
    else:
        warn_not_private("theil_sen")
    release = release_theil_sen_with_ci(stats, plan, gen, seeded=is_seeded(gen))
    if not finite:
        # ε = ∞ is not private: charged after both (deterministic) releases, so that data on
        # which the non-private interval is undefined (every pair tied) raise before the
        # ledger is touched, on every path
        warn_not_private("theil_sen_ci")
        charge(ledger, plan.budget, what, plan.relation)
    out = theil_sen_with_ci_result(release, x_name=x_name, y_name=y_name)
    warn_point_mass(bool(out.extra.get("ci_point_mass", {}).get(x_name, False)))
    return out


def plan_theil_sen_with_ci(*, epsilon: Any, ci_alpha: Any, x_bounds: Any, y_bounds: Any,
                           median: Any = "exp", pairs: Any = "all", theta: Any = None,
                           dof: Any = 3, output_range: Any = None, slope_range: Any = None,
                           ci_method: Any = "auto", n: Any) -> ReleasePlan:
    """The public plan of :func:`theil_sen_with_ci`: reads no data, draws nothing.

    Checks every parameter in the order :func:`theil_sen_with_ci` always did (``median``,
    the ranges, the smooth median's size limit for the public n, ``slope_range``,
    ``output_range``, ``ci_method`` and its public rule -- :func:`~dpreg.simple.ci.resolve_ci_method`
    at the interval's ε/2 --, θ, ``dof``), then holds the two plans it composes:
    ``options["line"]`` = :func:`~dpreg.simple.plan_theil_sen` at ε/2 (the predictions at 25 %
    and 75 % of ``x_bounds``) and ``options["ci"]`` = :func:`~dpreg.simple.plan_theil_sen_ci`
    at ε/2 on ``slope_range``; ``budget`` PureDP(ε) (charged once), ``parts`` ``"line"`` and
    ``"ci"`` (:func:`line_ci_split`).  Guarantee: ε-DP (sequential composition of the two
    ε/2-DP releases), replace-one, n public."""
    if median not in MEDIANS:
        raise InvalidInputError(f"median must be 'exp', 'wide' or 'smooth'; got {median!r}")
    eps = float(epsilon)
    half = line_ci_split(eps)
    slopes = tuple(default_slope_range(x_bounds, y_bounds) if slope_range is None
                   else slope_range)
    out_range = output_range or default_prediction_range(y_bounds)
    n_ = check_int(n, "n", minimum=2)
    pairs_arg = check_pairs_arg(pairs, n_)
    check_smooth_size(n_, pairs=pairs_arg, median=median)
    check_bounds(slopes, "slope_range")
    check_bounds(out_range, "output_range")
    if ci_method not in CI_METHODS:
        raise InvalidInputError(f"ci_method must be one of {list(CI_METHODS)}; got "
                                f"{ci_method!r}")
    # public: which interval targets (an explicit "calibrated" outside its rule raises
    # NoUncertaintyError here, before anything is charged)
    resolve_ci_method(ci_method, n=n_, pairs=pairs_arg, epsilon=half[1].epsilon)
    check_theta(theta, median, check_bounds(out_range, "output_range"))
    check_int(dof, "dof", minimum=1)
    line = plan_theil_sen(epsilon=half[0].epsilon, output_range=out_range, x_bounds=x_bounds,
                          median=median, pairs=pairs, theta=theta, dof=dof, n=n_)
    ci = plan_theil_sen_ci(epsilon=half[1].epsilon, ci_alpha=ci_alpha, output_range=slopes,
                           ci_method=ci_method, pairs=pairs, n=n_)
    return ReleasePlan(
        method=f"theil-sen-{median}",
        options={"median": median, "line": line, "ci": ci, "ci_method": ci_method,
                 "alpha": ci.options["alpha"], "slope_range": slopes,
                 "output_range": line.options["output_range"]},
        budget=PureDP(eps), relation=Neighbouring.REPLACE_ONE,
        parts={"line": half[0], "ci": half[1]}, n=n_, d=2,
        sensitivities=dict(line.sensitivities),
        noise={**{f"line_{k}": v for k, v in line.noise.items()},
               **{f"ci_{k}": v for k, v in ci.noise.items()}})


def release_theil_sen_with_ci(stats: PairStatistics, plan: ReleasePlan,
                              rng: np.random.Generator, *, seeded: bool = False) -> Release:
    """THE release of the line plus its slope interval: :func:`~dpreg.simple.release_theil_sen`
    of ``plan.options["line"]`` (ε/2), then :func:`~dpreg.simple.release_theil_sen_ci` of
    ``plan.options["ci"]`` (ε/2), both from ``rng`` in that order -- every draw goes through
    those two releases (and so through :mod:`dpreg.mechanisms`).  Builds the combined
    :class:`~dpreg.privacy.PrivacyStatement` (PureDP(ε), replace-one, n public: sequential
    composition); ``values``: ``line`` and ``ci``, the two sub-releases."""
    line = release_theil_sen(stats, plan.options["line"], rng, seeded=seeded)
    ci = release_theil_sen_ci(stats, plan.options["ci"], rng, seeded=seeded)
    lp = line.privacy
    privacy = PrivacyStatement(
        plan.budget, lp.neighbouring, f"{lp.mechanism} + DPTSCI",
        lp.source + "; Sarathy & Vadhan 2025 Alg. 6.1-6.2", seeded=lp.seeded,
        details={"line": lp.as_dict(), "ci": ci.privacy.as_dict() if ci.privacy else {},
                 "split": "ε/2 line, ε/2 slope CI"},
    )
    return Release(plan, {"line": line, "ci": ci}, privacy)


def theil_sen_with_ci_result(release: Release, *, x_name: str = "x", y_name: str = "y"
                             ) -> RegressionResults:
    """The :class:`~dpreg.inference.RegressionResults` of a line-plus-interval release
    (post-processing): the line (:func:`~dpreg.simple.theil_sen_result`), its
    ``conf_int(alpha)`` the slope interval (:func:`~dpreg.simple.theil_sen_ci_result`), the
    labels of the interval method actually used, and the flags of a range-wide end, of a
    slope outside the interval and of tied slopes (``extra["ci_point_mass"]``:
    :func:`~dpreg.simple.ci.point_mass_flag`).  A ⊥ line is returned as the failed line's result."""
    o = release.plan.options
    alpha, ci_method, slopes = o["alpha"], o["ci_method"], o["slope_range"]
    method = release.plan.method
    base = theil_sen_result(release.values["line"]).to_regression_results(x_name=x_name,
                                                                          y_name=y_name)
    if base.failed:
        return base
    ci = theil_sen_ci_result(release.values["ci"])
    iv = pd.DataFrame({"lower": [np.nan, ci.low], "upper": [np.nan, ci.high]},
                      index=["intercept", x_name])
    privacy = release.privacy
    # the method actually used: above a public multiset size the tight search falls back to
    # the Union targets (ci.details["tight_search"]), and the labels must say so
    used = ("union (tight search skipped: too many pairs)" if "tight_search" in ci.details
            else str(ci.details.get("method", ci_method)))
    if used == "calibrated":
        kind = ("calibrated: coverage close to the nominal level, the mechanism's rank error "
                "modelled for evenly spaced pair slopes near the targets")
    else:
        kind = (f"{used}: coverage >= the nominal level by Sarathy & Vadhan's worst-case "
                "bound, usually near 1 and wider than needed (conservative)")
        if ci_method == "auto":
            kind += ("; the calibrated interval is not offered at this n and ε (n·ε below "
                     "about 200)")
    text = (f"DP confidence interval for the median pairwise slope -- the Theil-Sen estimand, "
            f"not the OLS slope (Sarathy & Vadhan, {kind}; level {1 - alpha:g}, computed at "
            "fit time with ε/2); no interval for the intercept")
    if not ci.informative:
        text += (f". NOT INFORMATIVE: the {' and '.join(ci.clipped)} end of the slope interval "
                 f"is the end of the slope search range [{slopes[0]:g}, {slopes[1]:g}] -- a "
                 f"public assumption, not a finding from the data (too little ε or too few rows "
                 f"to narrow it; extra['ci_informative'])")
    extra = {**base.extra, "ci_informative": {x_name: ci.informative},
             "ci_clipped": {x_name: list(ci.clipped)},
             "ci_calibrated": {x_name: used == "calibrated"},
             "ci_point_mass": {x_name: ci.point_mass}}
    if ci.point_mass:  # the release rule for tied slopes (post-processing of the interval)
        text += ". WARNING TIES: " + POINT_MASS_TEXT + " (extra['ci_point_mass'])"
    # the line and the interval are separate releases (ε/2 each): where the released slope
    # lies outside the released interval, say so (post-processing of the two releases)
    slope = float(base.params.iloc[1])
    if not ci.low <= slope <= ci.high:
        extra["dp_ci_excludes_estimate"] = [x_name]
        text += (". NOTE: the line's slope lies outside the slope interval: the two are "
                 "separate releases (ε/2 each) whose noise disagrees here; the interval is "
                 "for the median pairwise slope, not centred on this estimate "
                 "(extra['dp_ci_excludes_estimate'])")
    return RegressionResults(
        base.params, privacy=privacy, method=method, intervals={alpha: iv},
        uncertainty=text,
        ci_method=(f"Sarathy–Vadhan DP slope interval ({used}), level {1 - alpha:g} only "
                   "(fit time, ε/2)"),
        nobs=base.nobs, dep_var=y_name, extra=extra,
    )
