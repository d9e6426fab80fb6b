"""DPSuffStats ("noisy statistics") and DPIntercept (Alabi et al. 2022, Alg. 1 and §6.4).

Guarantee: **ε-DP (pure) under replace-one neighbours with n public.**

Sensitivities (x clipped to [a, b], width w_x = b − a; y clipped to [c, d], width w_y):

* nvar(x) = Σ(x_i − x̄)²: (1 − 1/n)·w_x²;  ncov(x, y) = Σ(x_i − x̄)(y_i − ȳ): (1 − 1/n)·w_x·w_y.
  Both statistics are translation invariant, so only the widths matter.  (The paper writes
  (1 − 1/n)·r_u², equal to this only when the lower bound is 0 and both variables share one
  range; it is too small when r_l < 0.)
* For a fixed (already released) slope α̃, ȳ − α̃x̄ = (1/n)Σ(y_i − α̃x_i); replacing one record
  changes one term y − α̃x, whose range over the box has length w_y + |α̃|·w_x, so the exact
  sensitivity is (w_y + |α̃|·w_x)/n.  (The paper's r_u/n·(1 + |α̃|) is the special case of one
  shared range [0, r_u].)
* DPIntercept: ȳ of y clipped to [c, d] has sensitivity w_y/n.

With ``inference=True`` two more statistics are released so that a DP-aware interval can be
computed by post-processing (:mod:`dpreg.inference.dpci.noisy_stats`): nvar(y) = Σ(y_i − ȳ)²
(replace-one sensitivity (1 − 1/n)·w_y², the nvar formula on the y range) and x̄ (sensitivity
w_x/n).  The SAME ε is then split 6 : 6 : 6 : 1 : 1 over ncov, nvar, the intercept, nvar(y)
and x̄ (0.3ε, 0.3ε, 0.3ε, 0.05ε, 0.05ε) instead of thirds, so the line is slightly noisier
(Laplace scales × 10/9) and the total stays exactly ε.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpreg._spec import Release, ReleasePlan
from dpreg._validation import check_bounds, check_epsilon, check_int, check_rng, is_seeded
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms import laplace, laplace_rows, laplace_scale
from dpreg.mechanisms.batch import RowRandomness, one_call
from dpreg.mechanisms.sensitivity import mean_sensitivity, ncov_sensitivity, nvar_sensitivity
from dpreg.privacy import Ledger, Neighbouring, PrivacyStatement, PureDP, charge
from dpreg.privacy.neighbours import check_neighbouring
from dpreg.simple._common import (
    check_bounds_opt,
    check_flag,
    check_simple_xy,
    check_x_eval,
    warn_not_private,
)
from dpreg.simple._interval_rule import (
    INFERENCE_SPLIT,
    INTERVAL_MAX_NVAR_NOISE_SHARE,
    INTERVAL_MIN_NVAR_SIGNAL,
    INTERVAL_RELEASE_MAX_NVAR_NOISE_SHARE,
    interval_nvar_noise_share,
    interval_offer_probability,
    interval_offer_threshold,
    interval_refusal,
)
from dpreg.simple._result import SimpleRegressionResult

__all__ = ["noisy_stats", "dp_intercept", "noisy_stats_sensitivities", "intercept_sensitivity",
           "inference_sensitivities", "INFERENCE_SPLIT", "LineStatistics",
           "noisy_stats_statistics", "release_noisy_stats", "release_dp_intercept",
           "noisy_stats_from_statistics", "noisy_stats_source_statistics", "LineMoments",
           "dp_intercept_from_statistics", "INTERVAL_MAX_NVAR_NOISE_SHARE",
           "plan_noisy_stats", "release_line", "line_result", "NO_INTERVAL",
           "NO_FIT_STATISTICS", "INTERVAL_MIN_NVAR_SIGNAL",
           "INTERVAL_RELEASE_MAX_NVAR_NOISE_SHARE", "interval_offer_probability",
           "interval_offer_threshold", "interval_nvar_noise_share", "interval_refusal"]

_SOURCE_NS = "Alabi, McMillan, Sarathy, Smith & Vadhan 2022, Alg. 1 (DPSuffStats)"

#: why a plain DPSuffStats release has no interval / no R² (its results say so)
NO_INTERVAL = ("none: this release lacks the residual spread and x̄ the DP interval needs; "
               "refit with inference=True (ε is then split five ways and the interval is a "
               "parametric bootstrap of the release, no extra budget). The OLS standard "
               "error of the same data would ignore the privacy noise")
NO_FIT_STATISTICS = ("the release has no nvar(y); fit with inference=True (the default "
                     "inference='auto' releases it whenever n >= 3)")
#: the same for DPIntercept
DP_INTERCEPT_NO_INTERVAL = ("none: the intercept-only baseline releases a flat line (slope 0 "
                            "by construction); there is no slope interval to give")
DP_INTERCEPT_NO_FIT_STATISTICS = ("the intercept-only baseline releases a flat line: no sum "
                                  "of squares is released")
_SOURCE_INT = "Alabi, McMillan, Sarathy, Smith & Vadhan 2022, §6.4 (DPIntercept)"


def noisy_stats_sensitivities(
    x_bounds: tuple[float, float], y_bounds: tuple[float, float], n: int
) -> dict[str, float]:
    """Replace-one sensitivities of nvar(x) and ncov(x, y) for clipped data, n public."""
    xb = check_bounds(x_bounds, "x_bounds")
    yb = check_bounds(y_bounds, "y_bounds")
    n = check_int(n, "n", minimum=1)
    return {"nvar": nvar_sensitivity(xb, n), "ncov": ncov_sensitivity(xb, yb, n)}


def inference_sensitivities(
    x_bounds: tuple[float, float], y_bounds: tuple[float, float], n: int
) -> dict[str, float]:
    """Replace-one sensitivities of the two statistics ``inference=True`` adds: nvar(y) =
    Σ(y_i − ȳ)² for y in [c, d], (1 − 1/n)·w_y², and x̄ for x in [a, b], w_x/n."""
    xb = check_bounds(x_bounds, "x_bounds")
    yb = check_bounds(y_bounds, "y_bounds")
    n = check_int(n, "n", minimum=1)
    return {"nvar_y": nvar_sensitivity(yb, n), "xbar": mean_sensitivity(xb, n)}


def intercept_sensitivity(
    slope: float, x_bounds: tuple[float, float], y_bounds: tuple[float, float], n: int
) -> float:
    """Exact replace-one sensitivity of ȳ − slope·x̄ for a fixed slope: (w_y + |slope|·w_x)/n."""
    xb = check_bounds(x_bounds, "x_bounds")
    yb = check_bounds(y_bounds, "y_bounds")
    n = check_int(n, "n", minimum=1)
    return ((yb[1] - yb[0]) + abs(float(slope)) * (xb[1] - xb[0])) / n


def _check_replace_one(neighbouring: Any) -> Neighbouring:
    rel = check_neighbouring(neighbouring)
    if rel is not Neighbouring.REPLACE_ONE:
        raise InvalidInputError(
            "neighbouring must be 'replace-one' for noisy_stats (the sensitivities use the "
            f"public n); got {rel.value!r}"
        )
    return rel


def noisy_stats(
    x: Any,
    y: Any,
    *,
    epsilon: float,
    x_bounds: tuple[float, float],
    y_bounds: tuple[float, float],
    x_eval: Any = None,
    neighbouring: str | Neighbouring = "replace-one",
    release_stats: bool = False,
    inference: bool = False,
    ledger: Ledger | None = None,
    rng: Any = None,
) -> SimpleRegressionResult:
    """DPSuffStats: OLS from Laplace-noised sufficient statistics (Alabi et al. 2022, Alg. 1).

    Parameters
    ----------
    x, y:
        The data (1-D, equal length n >= 2, finite).  They are clipped to the public bounds.
    epsilon:
        Total privacy budget ε in (0, ∞]; split in thirds (ncov, nvar, intercept).  ``inf``
        returns OLS on the clipped data (not private; warns).
    x_bounds, y_bounds:
        Public ranges (lo, hi) the data are clipped to.  Required: never derived from data.
    x_eval:
        Points at which predictions are reported (default: 25% and 75% of ``x_bounds``);
        must lie in ``x_bounds``.  Any number of points: they are post-processing.
    neighbouring:
        Only ``"replace-one"`` (n public) is supported.
    release_stats:
        Also release the noisy nvar(x) and ncov(x, y) in ``extra`` (free: already private).
    inference:
        Also release noisy nvar(y) and x̄ (needs n >= 3) so that the result carries a DP-aware
        standard error and a parametric-bootstrap confidence interval (post-processing).  ε
        is split 0.3/0.3/0.3/0.05/0.05 (ncov, nvar, intercept, nvar(y), x̄) instead of
        thirds; the total charged stays ``PureDP(epsilon)``.
    ledger:
        Optional :class:`~dpreg.Ledger` charged ``PureDP(epsilon)`` before any noise is drawn.
    rng:
        ``None`` (fresh entropy), a seed, a SeedSequence or a Generator.

    Notes
    -----
    Algorithm: clip; L₁ ~ Lap(Δ_cov/(ε/3)), L₂ ~ Lap(Δ_var/(ε/3)); if nvar + L₂ <= 0 the
    release is ⊥ (``failed=True``; decided from the noisy denominator only); α̃ = (ncov +
    L₁)/(nvar + L₂); β̃ = ȳ − α̃x̄ + Lap(Δ₃/(ε/3)) with Δ₃ = (w_y + |α̃|·w_x)/n.  A noisy slope
    or output so large that it overflows is also ⊥ (decided from released values only).

    Guarantee: ε-DP (pure), replace-one neighbours, n public.  Sensitivities: nvar
    (1 − 1/n)w_x², ncov (1 − 1/n)w_x·w_y, intercept (w_y + |α̃|w_x)/n (see module doc).
    Source: Alabi et al. 2022, Alg. 1 and Lemma 18, with the width-based sensitivities.
    """
    xa, ya = check_simple_xy(x, y, min_rows=2)

    def statistics(xb: tuple[float, float], yb: tuple[float, float], infer: bool
                   ) -> tuple[LineStatistics, float | None]:
        nvar_y = None
        if infer:
            yc = np.clip(ya, *yb)
            nvar_y = float(np.dot(yc - yc.mean(), yc - yc.mean()))
        return noisy_stats_statistics(xa, ya, xb, yb), nvar_y

    return noisy_stats_from_statistics(
        statistics, epsilon=epsilon, x_bounds=x_bounds, y_bounds=y_bounds,
        x_eval=x_eval, neighbouring=neighbouring, release_stats=release_stats,
        inference=inference, ledger=ledger, rng=rng)


def noisy_stats_from_statistics(
    statistics: Any,
    *,
    epsilon: float,
    x_bounds: tuple[float, float],
    y_bounds: tuple[float, float],
    x_eval: Any = None,
    neighbouring: str | Neighbouring = "replace-one",
    release_stats: bool = False,
    inference: bool = False,
    ledger: Ledger | None = None,
    rng: Any = None,
) -> SimpleRegressionResult:
    """DPSuffStats's release from its statistics: the one release of :func:`noisy_stats` (in
    memory) and of the streamed fits (a Parquet/CSV file or a Spark DataFrame,
    :func:`noisy_stats_source_statistics`).

    ``statistics``: a function ``(x_bounds, y_bounds, inference) -> (stats, nvar_y)``, called
    once after every parameter is checked and before the ledger is charged: ``stats`` the
    :class:`LineStatistics` of one data set (G = 1) clipped to the bounds, ``nvar_y`` the
    clipped Σ(y_i − ȳ)² (``None`` unless ``inference``); its n is public.  Other parameters,
    guarantee (ε-DP, replace-one, n public) and result: as :func:`noisy_stats`.
    """
    plan = plan_noisy_stats(epsilon=epsilon, x_bounds=x_bounds, y_bounds=y_bounds,
                            x_eval=x_eval, neighbouring=neighbouring, release_stats=release_stats,
                            inference=inference)  # every parameter checked before any read
    gen = check_rng(rng)
    opts = plan.options
    stats, nvar_y = statistics(opts["x_bounds"], opts["y_bounds"], opts["inference"])
    plan = plan_noisy_stats(epsilon=plan.budget.epsilon, n=int(stats.n[0]), **opts,
                            neighbouring=plan.relation)
    charge(ledger, plan.budget, "dpreg.simple.noisy_stats", plan.relation)
    if plan.budget.is_infinite:
        warn_not_private("noisy_stats")
    return line_result(release_line(stats, nvar_y, plan, gen, seeded=is_seeded(rng)))


#: the names of DPSuffStats's releases, in the order of the budget split
_PARTS = ("ncov", "nvar", "intercept", "nvar_y", "xbar")


def plan_noisy_stats(*, epsilon: float, x_bounds: tuple[float, float],
                     y_bounds: tuple[float, float], x_eval: Any = None, n: int | None = None,
                     neighbouring: str | Neighbouring = "replace-one",
                     release_stats: bool = False, inference: bool = False) -> ReleasePlan:
    """The public part of a DPSuffStats release: every parameter checked, the budget
    ``PureDP(ε)`` split over ncov, nvar and the intercept (thirds) -- or, with ``inference``,
    over those and nvar(y), x̄ (:data:`INFERENCE_SPLIT`) -- and, once the public n is known,
    the replace-one sensitivities and Laplace scales of each part.  Reads no data, draws
    nothing: a plan can be shown, compared and charged before the release."""
    eps = check_epsilon(epsilon)
    xb = check_bounds(x_bounds, "x_bounds")
    yb = check_bounds(y_bounds, "y_bounds")
    xe = check_x_eval(x_eval, xb)
    rel = _check_replace_one(neighbouring)
    release = check_flag(release_stats, "release_stats")
    infer = check_flag(inference, "inference")
    budget = PureDP(eps)
    split = budget.split(INFERENCE_SPLIT if infer else [1, 1, 1])
    parts = dict(zip(_PARTS, split))
    sens: dict[str, float] = {}
    noise: dict[str, float] = {}
    if n is not None:
        n = int(n)
        if n < 2:
            raise InvalidInputError(f"x must have at least 2 rows; got {n}")
        if infer and n < 3:
            raise InvalidInputError(
                f"x must have at least 3 rows for inference=True (the error variance needs "
                f"n - 2 > 0 degrees of freedom); got {n}")
        sens = noisy_stats_sensitivities(xb, yb, n)
        if infer:
            sens.update(inference_sensitivities(xb, yb, n))
        noise = {k: laplace_scale(v, parts[k].epsilon) for k, v in sens.items()}
    return ReleasePlan(
        method="noisy-stats",
        options={"x_bounds": xb, "y_bounds": yb, "x_eval": xe, "release_stats": release,
                 "inference": infer},
        budget=budget, relation=rel, parts=parts, n=n, d=2, sensitivities=sens, noise=noise)


def release_line(stats: LineStatistics, nvar_y: float | None, plan: ReleasePlan, rng: Any,
                 *, seeded: bool = False) -> Release:
    """THE release of DPSuffStats on one data set, from its clipped statistics (``stats``,
    G = 1; ``nvar_y`` the clipped Σ(y − ȳ)², needed with ``inference``) and its ``plan``
    (:func:`plan_noisy_stats` with n): Laplace noise on ncov and nvar, the ⊥ test on the noisy
    denominator, the intercept's noise at its data-independent sensitivity for the released
    slope (:func:`release_noisy_stats`, the batched release every path calls) and, with
    ``inference`` and a line, the noisy nvar(y) and x̄.  Guarantee: the parts of ``plan.budget``
    compose to ε-DP (pure), replace-one neighbours, n public (module doc)."""
    opts, parts, sens = plan.options, plan.parts, dict(plan.sensitivities)
    xb, yb, xe, infer = opts["x_bounds"], opts["y_bounds"], opts["x_eval"], opts["inference"]
    n = int(plan.n)  # type: ignore[arg-type]
    draw = release_noisy_stats(stats, x_bounds=xb, y_bounds=yb,
                               parts=[parts["ncov"], parts["nvar"], parts["intercept"]], rng=rng,
                               sensitivities=sens)
    noisy_ncov, noisy_nvar = float(draw["noisy_ncov"][0]), float(draw["noisy_nvar"][0])
    details: dict[str, Any] = {
        "epsilon_parts": {"ncov": parts["ncov"].epsilon, "nvar": parts["nvar"].epsilon,
                          "intercept": parts["intercept"].epsilon},
        "sensitivity_ncov": sens["ncov"],
        "sensitivity_nvar": sens["nvar"],
        "laplace_scale_ncov": plan.noise["ncov"],
        "laplace_scale_nvar": plan.noise["nvar"],
        "x_bounds": xb,
        "y_bounds": yb,
        "n": n,
    }
    values: dict[str, Any] = {"x_eval": list(xe), "noisy_ncov": noisy_ncov,
                              "noisy_nvar": noisy_nvar}
    if infer:
        details["epsilon_parts"].update(nvar_y=parts["nvar_y"].epsilon,
                                        xbar=parts["xbar"].epsilon)
        details.update(
            inference=True, sensitivity_nvar_y=sens["nvar_y"], sensitivity_xbar=sens["xbar"],
            laplace_scale_nvar_y=plan.noise["nvar_y"], laplace_scale_xbar=plan.noise["xbar"])
    reason = str(draw["reason"][0])
    if not reason:
        slope, intercept = float(draw["slope"][0]), float(draw["intercept"][0])
        d3 = float(draw["sensitivity_intercept"][0])
        details["sensitivity_intercept"] = d3
        details["laplace_scale_intercept"] = laplace_scale(d3, parts["intercept"].epsilon)
        values.update(slope=slope, intercept=intercept,
                      predictions={v: slope * v + intercept for v in xe})
        if infer:
            # the two extra releases (after the line; skipped on ⊥, a decision on noisy values)
            assert nvar_y is not None
            values["noisy_nvar_y"] = float(laplace(float(nvar_y), sensitivity=sens["nvar_y"],
                                                   epsilon=parts["nvar_y"].epsilon, rng=rng))
            values["noisy_xbar"] = float(laplace(float(stats.xbar[0]),
                                                 sensitivity=sens["xbar"],
                                                 epsilon=parts["xbar"].epsilon, rng=rng))
            # seed of the (post-processing) bootstrap simulation
            values["bootstrap_seed"] = int(rng.integers(0, 2**63 - 1))
    stmt = PrivacyStatement(plan.budget, plan.relation, "DPSuffStats", _SOURCE_NS, seeded,
                            details)
    return Release(plan, values, stmt, failed=bool(reason), reason=reason)


def line_result(release: Release) -> SimpleRegressionResult:
    """The :class:`SimpleRegressionResult` of a DPSuffStats release (post-processing): the line,
    its predictions, the released statistics (``extra``; free, already private) and, with
    ``inference``, what the DP-aware interval needs (``inference``, built into intervals by
    :meth:`SimpleRegressionResult.to_regression_results`)."""
    plan, v = release.plan, release.values
    opts = plan.options
    n = int(plan.n)  # type: ignore[arg-type]
    extra: dict[str, Any] = {"x_eval": v["x_eval"]}
    if opts["release_stats"] or opts["inference"]:
        extra["noisy_ncov"] = v["noisy_ncov"]
        extra["noisy_nvar"] = v["noisy_nvar"]
    if release.failed:
        return SimpleRegressionResult("noisy-stats", release.privacy, failed=True,
                                      reason=release.reason, n=n, extra=extra,
                                      no_interval=NO_INTERVAL,
                                      no_fit_statistics=NO_FIT_STATISTICS)
    inference_spec = None
    if opts["inference"]:
        extra["noisy_nvar_y"] = v["noisy_nvar_y"]
        extra["noisy_xbar"] = v["noisy_xbar"]
        inference_spec = {
            "released": {"ncov": v["noisy_ncov"], "nvar": v["noisy_nvar"],
                         "nvar_y": v["noisy_nvar_y"], "xbar": v["noisy_xbar"],
                         "slope": v["slope"], "intercept": v["intercept"]},
            "n": n, "x_bounds": opts["x_bounds"], "y_bounds": opts["y_bounds"],
            "scales": {k: plan.noise[k] for k in ("ncov", "nvar", "nvar_y", "xbar")},
            "eps_intercept": plan.parts["intercept"].epsilon,
            "epsilon": plan.budget.epsilon,  # public: the interval rule's input
            "seed": v["bootstrap_seed"],
        }
    return SimpleRegressionResult("noisy-stats", release.privacy, released_slope=v["slope"],
                                  released_intercept=v["intercept"],
                                  released_predictions=v["predictions"], n=n, extra=extra,
                                  inference=inference_spec, no_interval=NO_INTERVAL,
                                  no_fit_statistics=NO_FIT_STATISTICS)


@dataclass(frozen=True)
class LineStatistics:
    """The clipped sufficient statistics DPSuffStats and DPIntercept release from, for a batch
    of G groups (arrays of shape (G,); G = 1 for a single fit): the public n, x̄ and ȳ of the
    data clipped to the public bounds, nvar = Σ(x_i − x̄)² and ncov = Σ(x_i − x̄)(y_i − ȳ).
    Deterministic (no noise); :func:`release_noisy_stats` and :func:`release_dp_intercept`
    turn them into releases."""

    n: np.ndarray
    xbar: np.ndarray
    ybar: np.ndarray
    nvar: np.ndarray
    ncov: np.ndarray

    def replicate(self, size: int) -> LineStatistics:
        """The statistics of group 0 repeated ``size`` times (replicates of one data set)."""
        return LineStatistics(*(np.repeat(np.asarray(v)[:1], size) for v in
                                (self.n, self.xbar, self.ybar, self.nvar, self.ncov)))


def noisy_stats_statistics(xa: np.ndarray, ya: np.ndarray, xb: tuple[float, float],
                           yb: tuple[float, float]) -> LineStatistics:
    """The statistics step of DPSuffStats for one data set (validated arrays, public bounds):
    (n, x̄, ȳ, nvar, ncov) of the data clipped to the bounds, as a batch of one group."""
    xc = np.clip(xa, *xb)
    yc = np.clip(ya, *yb)
    xbar, ybar = float(np.mean(xc)), float(np.mean(yc))
    dx = xc - xbar
    return LineStatistics(np.array([xa.size], dtype=np.int64), np.array([xbar]),
                          np.array([ybar]), np.array([float(np.dot(dx, dx))]),
                          np.array([float(np.dot(dx, yc - ybar))]))


class LineMoments:
    """The chunk function of DPSuffStats's statistics step on a data source (picklable: it
    runs on Spark executors too): for a chunk of rows (x, y), with x, y clipped to the PUBLIC
    bounds and shifted by the bounds' midpoints (u = clip(x) − m_x, v = clip(y) − m_y), the
    sums [count, Σu, Σv, Σu², Σu·v, Σv²].  Sums over chunks add up, so a file's or a Spark
    DataFrame's statistics are one pass in any chunking (:meth:`DataSource.reduce`)."""

    def __init__(self, x_bounds: tuple[float, float], y_bounds: tuple[float, float]) -> None:
        self.lo = np.array([x_bounds[0], y_bounds[0]], dtype=np.float64)
        self.hi = np.array([x_bounds[1], y_bounds[1]], dtype=np.float64)
        self.mid = 0.5 * self.lo + 0.5 * self.hi

    def __call__(self, chunk: np.ndarray) -> np.ndarray:
        c = np.clip(chunk, self.lo, self.hi) - self.mid
        u, v = c[:, 0], c[:, 1]
        return np.array([float(u.size), u.sum(), v.sum(), np.dot(u, u), np.dot(u, v),
                         np.dot(v, v)])


def noisy_stats_source_statistics(source: Any, x_col: str, y_col: str,
                                  x_bounds: tuple[float, float], y_bounds: tuple[float, float]
                                  ) -> tuple[LineStatistics, float]:
    """The statistics step of DPSuffStats (and DPIntercept) on a data source read in chunks (a
    Parquet/CSV file streamed with pyarrow, or a Spark DataFrame summed on its executors;
    :mod:`dpreg._source`): one pass of :class:`LineMoments`, then (n, x̄, ȳ, nvar, ncov) and
    the clipped nvar(y) from the shifted sums (nvar = Σu² − (Σu)²/n, ...).

    Deterministic, no noise.  The result equals :func:`noisy_stats_statistics` of the same
    data up to floating-point rounding: |u|, |v| are at most half the bounds' widths, so the
    absolute error of nvar is of the order of 1e-16·n·w_x²/4 (likewise ncov, nvar(y)), a
    vanishing fraction of the release's Laplace scale 3(1 − 1/n)·w_x²/ε for any n below 1e12.
    A value that is missing or not a finite number is an ``InvalidInputError`` naming the
    column (raised by the source after the pass; nothing is released or charged)."""
    sums = source.reduce([x_col, y_col], LineMoments(x_bounds, y_bounds))
    cnt, su, sv, suu, suv, svv = (float(v) for v in sums)
    n = int(round(cnt))
    if n == 0:
        z = np.zeros(1)
        return LineStatistics(np.zeros(1, dtype=np.int64), z, z.copy(), z.copy(), z.copy()), 0.0
    mx = 0.5 * x_bounds[0] + 0.5 * x_bounds[1]
    my = 0.5 * y_bounds[0] + 0.5 * y_bounds[1]
    ubar, vbar = su / n, sv / n
    nvar = max(suu - su * ubar, 0.0)
    nvar_y = max(svv - sv * vbar, 0.0)
    ncov = suv - su * vbar
    return (LineStatistics(np.array([n], dtype=np.int64), np.array([mx + ubar]),
                           np.array([my + vbar]), np.array([nvar]), np.array([ncov])), nvar_y)


def _clipped_stats(xa: np.ndarray, ya: np.ndarray, xb: tuple[float, float],
                   yb: tuple[float, float]) -> tuple[float, float, float, float]:
    """(x̄, ȳ, nvar, ncov) of the data clipped to the public bounds (one data set)."""
    st = noisy_stats_statistics(xa, ya, xb, yb)
    return float(st.xbar[0]), float(st.ybar[0]), float(st.nvar[0]), float(st.ncov[0])


_FAIL_DENOMINATOR = "noisy nvar(x) <= 0: the noisy denominator is not positive (⊥)"
_FAIL_SLOPE = "noisy slope overflows floating point (⊥)"
_FAIL_INTERCEPT = "noisy intercept overflows floating point (⊥)"


def noisy_slope_step(noisy_ncov: np.ndarray, noisy_nvar: np.ndarray, xb: tuple[float, float],
                 yb: tuple[float, float], n: Any
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Post-processing of the noisy (ncov, nvar): ``(ok, slope, d3, slope_ok)``.

    ``ok``: noisy denominator positive; ``slope`` = noisy ncov / noisy nvar (NaN where not ok);
    ``d3``: the intercept's sensitivity (r_u - r_l + |slope|(x width))/n (``n`` may be an array
    of per-group sizes); ``slope_ok``: slope, Δ₃ and the line's reach are finite. All decided
    from released quantities and public bounds only.
    """
    ok = noisy_nvar > 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        slope = np.where(ok, noisy_ncov / np.where(ok, noisy_nvar, 1.0), np.nan)
        d3 = ((yb[1] - yb[0]) + np.abs(slope) * (xb[1] - xb[0])) / n
        reach = max(abs(yb[0]), abs(yb[1])) + np.abs(slope) * max(abs(xb[0]), abs(xb[1]))
    slope_ok = ok & np.isfinite(d3) & np.isfinite(reach)
    return ok, slope, d3, slope_ok


def line_release_ok(slope: np.ndarray, intercept: np.ndarray, slope_ok: np.ndarray,
             xb: tuple[float, float]) -> np.ndarray:
    """True where the released line is finite over the whole public x range."""
    with np.errstate(invalid="ignore", over="ignore"):
        return slope_ok & np.isfinite(intercept) & np.isfinite(
            np.abs(slope) * max(abs(xb[0]), abs(xb[1])) + np.abs(intercept))


def _per_row(n: np.ndarray, rng: Any, fn: Any) -> Any:
    """``fn(n)`` for every row: one value when the batch is one mechanism call (a single data
    set: every row has its n), else per row (computed once per distinct public n)."""
    n = np.asarray(n, dtype=np.int64)
    if one_call(rng):
        return fn(int(n[0]))
    sizes, inverse = np.unique(n, return_inverse=True)
    vals = [fn(int(v)) for v in sizes.tolist()]
    if isinstance(vals[0], dict):
        return {k: np.array([v[k] for v in vals])[inverse] for k in vals[0]}
    return np.array(vals)[inverse]


def release_noisy_stats(stats: LineStatistics, *, x_bounds: tuple[float, float],
                        y_bounds: tuple[float, float], parts: Sequence[PureDP], rng: Any,
                        sensitivities: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
    """Alg. 1's noise-and-divide step for a batch of G groups (the one implementation: the
    single fit, ``fit_by_group``'s backends, replicates and the harness all call it).

    ``stats``: :class:`LineStatistics` (G rows); ``parts``: the ε of ncov, nvar and the
    intercept (thirds of ε, or the first three parts of :data:`INFERENCE_SPLIT`); ``rng``: a
    Generator (one data set: the batch is one mechanism call per statistic, G = 1 for a fit,
    G = trials for replicates) or a :class:`~dpreg.mechanisms.batch.RowRandomness` (one call
    per group per statistic; seeded rows are bit for bit the groups' own fits).  All noise is
    drawn by :func:`~dpreg.mechanisms.laplace_rows`: ncov + Lap(Δ_cov/ε₁), nvar +
    Lap(Δ_var/ε₂), then for the rows whose noisy slope is usable ȳ − α̃x̄ + Lap(Δ₃/ε₃), Δ₃ =
    (w_y + |α̃|w_x)/n.

    Returns arrays ``noisy_ncov``, ``noisy_nvar``, ``slope``, ``intercept``,
    ``sensitivity_intercept`` and ``reason`` ("" where the row released a line, the ⊥ reason
    otherwise -- decided from noisy quantities only).  Guarantee per row: ε₁ + ε₂ + ε₃ pure DP,
    replace-one, n public (module doc).  ``sensitivities`` (``{"ncov": .., "nvar": ..}``)
    defaults to :func:`noisy_stats_sensitivities` of each row's n.
    """
    xb, yb = x_bounds, y_bounds
    sens = sensitivities if sensitivities is not None else _per_row(
        stats.n, rng, lambda nj: noisy_stats_sensitivities(xb, yb, nj))
    noisy_ncov = laplace_rows(stats.ncov, sensitivity=sens["ncov"], epsilon=parts[0].epsilon,
                              rng=rng)
    noisy_nvar = laplace_rows(stats.nvar, sensitivity=sens["nvar"], epsilon=parts[1].epsilon,
                              rng=rng)
    ok, slope, d3, slope_ok = noisy_slope_step(noisy_ncov, noisy_nvar, xb, yb, stats.n)
    intercept = np.full(slope.shape, np.nan)
    sel = np.flatnonzero(slope_ok)
    if sel.size:
        with np.errstate(invalid="ignore", over="ignore"):
            centre = stats.ybar[sel] - slope[sel] * stats.xbar[sel]
        sub = rng.take(sel) if isinstance(rng, RowRandomness) else rng
        intercept[sel] = laplace_rows(centre, sensitivity=d3[sel], epsilon=parts[2].epsilon,
                                      rng=sub)
    line_ok = line_release_ok(slope, intercept, slope_ok, xb)
    reason = np.where(~ok, _FAIL_DENOMINATOR,
                      np.where(~slope_ok, _FAIL_SLOPE, np.where(~line_ok, _FAIL_INTERCEPT, "")))
    return {"noisy_ncov": noisy_ncov, "noisy_nvar": noisy_nvar, "slope": slope,
            "intercept": intercept, "sensitivity_intercept": d3, "reason": reason}


def release_dp_intercept(ybar: np.ndarray, n: np.ndarray, *, y_bounds: tuple[float, float],
                         epsilon: float, rng: Any) -> np.ndarray:
    """DPIntercept's release for a batch of G groups: ȳ of the clipped y (``ybar``, (G,))
    plus Lap(w_y/(εn)) per row, through :func:`~dpreg.mechanisms.laplace_rows` (``rng`` as in
    :func:`release_noisy_stats`).  Guarantee per row: ε-DP (pure), replace-one, n public
    (Alabi et al. 2022, §6.4)."""
    sens = _per_row(n, rng, lambda nj: mean_sensitivity(y_bounds, nj))
    return laplace_rows(np.asarray(ybar, dtype=np.float64), sensitivity=sens, epsilon=epsilon,
                        rng=rng)


def dp_intercept(
    x: Any,
    y: Any,
    *,
    epsilon: float,
    y_bounds: tuple[float, float],
    x_bounds: tuple[float, float] | None = None,
    x_eval: Any = None,
    ledger: Ledger | None = None,
    rng: Any = None,
) -> SimpleRegressionResult:
    """DPIntercept: the noisy mean of y as a flat line (Alabi et al. 2022, §6.4).

    Releases ỹ = mean(clip(y, y_bounds)) + Lap((d − c)/(εn)) and reports it as the prediction
    at every ``x_eval`` (slope 0, intercept ỹ).  Good only when the true slope is near 0.
    ``x`` is only checked for shape (it does not enter the release); ``x_bounds`` only sets
    the default ``x_eval``.  ``epsilon=inf`` returns the mean of the clipped y (warns).

    Guarantee: ε-DP (pure), replace-one neighbours, n public; sensitivity (d − c)/n.
    Source: Alabi et al. 2022, §6.4.
    """
    _, ya = check_simple_xy(x, y, min_rows=2)
    return dp_intercept_from_statistics(
        lambda yb: (float(np.mean(np.clip(ya, *yb))), int(ya.size)), epsilon=epsilon,
        y_bounds=y_bounds, x_bounds=x_bounds, x_eval=x_eval, ledger=ledger, rng=rng)


def dp_intercept_from_statistics(
    statistics: Any,
    *,
    epsilon: float,
    y_bounds: tuple[float, float],
    x_bounds: tuple[float, float] | None = None,
    x_eval: Any = None,
    ledger: Ledger | None = None,
    rng: Any = None,
) -> SimpleRegressionResult:
    """DPIntercept's release from its statistic: the one release of :func:`dp_intercept` (in
    memory) and of the streamed fit (:func:`noisy_stats_source_statistics` on a file or a
    Spark DataFrame).  ``statistics``: a function ``y_bounds -> (ȳ, n)`` (ȳ of the y clipped
    to the bounds; n public), called once after every parameter is checked and before the
    ledger is charged.  Guarantee and result as :func:`dp_intercept` (ε-DP,
    replace-one, n public; sensitivity (d − c)/n)."""
    eps = check_epsilon(epsilon)
    yb = check_bounds(y_bounds, "y_bounds")
    xb = check_bounds_opt(x_bounds, "x_bounds")
    xe = check_x_eval(x_eval, xb)
    gen = check_rng(rng)
    ybar, n = statistics(yb)
    ybar, n = float(ybar), int(n)
    if n < 2:
        raise InvalidInputError(f"y must have at least 2 rows; got {n}")
    budget = PureDP(eps)
    sens = mean_sensitivity(yb, n)
    charge(ledger, budget, "dpreg.simple.dp_intercept", Neighbouring.REPLACE_ONE)
    if budget.is_infinite:
        warn_not_private("dp_intercept")
    level = float(release_dp_intercept(np.array([ybar]), np.array([n]), y_bounds=yb,
                                       epsilon=eps, rng=gen)[0])
    details = {"sensitivity_mean": sens, "laplace_scale": laplace_scale(sens, eps),
               "y_bounds": yb, "n": n}
    stmt = PrivacyStatement(budget, Neighbouring.REPLACE_ONE, "DPIntercept", _SOURCE_INT,
                            is_seeded(rng), details)
    return SimpleRegressionResult("dp-intercept", stmt, released_slope=0.0,
                                  released_intercept=level,
                                  released_predictions={v: level for v in xe}, n=n,
                                  extra={"x_eval": list(xe)},
                                  no_interval=DP_INTERCEPT_NO_INTERVAL,
                                  no_fit_statistics=DP_INTERCEPT_NO_FIT_STATISTICS)
