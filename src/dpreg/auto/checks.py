"""Bounds-free mode that cannot silently mislead: after ``method="auto"`` has spent part of ε on
DP bounds, decide -- from DP outputs and public inputs only -- whether the rest of the budget
can give a useful release.

Two checks, both computed from the released DP bounds, the public n, the public coarse range
and the ε's of the steps (never from the data):

1. **Self-consistency of the DP bounds.**  Each bound comes from two exponential-mechanism
   quartiles over the public coarse range [L, R] (:func:`dpreg.preprocess.propose_bounds`,
   ε_q per quartile).  If the data really filled the released bounds of width W (so the
   quartiles are a distance ≈ W/(1 + 2w) apart, w the widening, and the data span
   S = 2W/(1 + 2w)), the mechanism's weight inside the data is about S·min(1, 4/(ε_q·n))
   (the rank scores fall off as exp(−ε_q·|r − qn|/2) over ≈ 4/ε_q ranks of spacing S/n),
   and its weight on the empty rest of the coarse range is (R − L − S)·exp(−ε_q·q·n/2), q =
   min(q, 1 − q) = 1/4.  The probability of a quartile outside the data is then
   p = out/(out + in).  When the sum of p over every released quartile exceeds
   :data:`BOUNDS_P_OUT_MAX` (5 %), the released bounds are not what the mechanism would give
   for data filling them: they are as likely noise over the coarse range as a location of
   the data.  This is what happened on sklearn's diabetes data (n = 442, ε = 1: bmi bounds
   [−306611, 157350] for a column that lies in [−0.1, 0.17]): p ≈ 0.5 per quartile.
2. **Noise of the remaining release.**  The planned noise sd of the slopes
   (:func:`dpreg.plan`'s analytic noisy-stats plan for one x, AdaSSP for several) at the ε
   left for the method, relative to the slope scale the bounds allow (w_y/w_x), must be at
   most :data:`RELATIVE_SD_MAX` (0.5): above it the release cannot tell a slope from zero
   even when the data fill the bounds.  This ratio depends on ε·n only (it is scale free).

Failing either raises :class:`~dpreg.exceptions.InsufficientBudgetError` (a ``ValueError``),
whose message names the check, its public numbers (ε, n, the thresholds; not the DP bounds or
p, so that it reads the same for every data set that fails) and what to do (more data, more
ε, public bounds);
the DP bounds' share of ε stays spent and nothing else is charged.  With
``allow_unreliable=True`` (CLI ``--allow-unreliable``) the fit goes on, warns
(:class:`UnreliableReleaseWarning`) and its result carries ``reliable=False``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpreg.exceptions import InsufficientBudgetError, UnreliableReleaseWarning

__all__ = ["BOUNDS_P_OUT_MAX", "RELATIVE_SD_MAX", "Reliability", "bounds_outside_probability",
           "check_bounds_free"]

#: largest summed probability that a DP quartile fell outside data filling the released bounds
BOUNDS_P_OUT_MAX = 0.05
#: largest planned slope-noise sd relative to the slope scale w_y / w_x of the bounds
RELATIVE_SD_MAX = 0.5


@dataclass(frozen=True)
class Reliability:
    """The outcome of :func:`check_bounds_free` (recorded in ``extra["auto"]["reliability"]``)."""

    reliable: bool
    p_outside: float
    relative_sd: float
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"reliable": self.reliable, "p_outside": self.p_outside,
                "relative_sd": self.relative_sd, "reason": self.reason,
                "thresholds": {"p_outside": BOUNDS_P_OUT_MAX, "relative_sd": RELATIVE_SD_MAX}}


def bounds_outside_probability(width: float, *, n: int, quantile_epsilon: float,
                               coarse_width: float, widening: float = 1.0,
                               quantile: float = 0.25) -> float:
    """p of check 1 (module doc) for ONE released quartile: public inputs and a DP width."""
    if math.isinf(quantile_epsilon):
        return 0.0
    spread = max(2.0 * width / (1.0 + 2.0 * widening), 1e-300)
    inside = spread * min(1.0, 4.0 / (quantile_epsilon * n))
    log_out = math.log(max(coarse_width - spread, 1e-300)) - quantile_epsilon * \
        min(quantile, 1.0 - quantile) * n / 2.0
    log_in = math.log(inside)
    return 1.0 / (1.0 + math.exp(min(700.0, log_in - log_out)))


#: the methods whose closed-form plans stand for the pipeline's fit in the check
ONE_X_PROXY = "noisy-stats"
SEVERAL_X_PROXY = "adassp"


def _relative_sd(n: int, epsilon: float, delta: float | None, n_x: int) -> float:
    """Planned slope sd / (w_y / w_x) at the method's ε: analytic, on unit bounds."""
    if math.isinf(epsilon):
        return 0.0
    from dpreg import methods

    # the analytic plan of a candidate the rules could fit (one x: noisy statistics, several
    # x: the sufficient-statistics perturbation family), on unit bounds.  Several x: Wang's
    # λ_min rule, with which RELATIVE_SD_MAX and the measured minimum sizes of docs/auto.md
    # §6a were set (AdaSSP's default became the eigen floor in issue 30; its planned sd
    # differs by at most ~25% at these sizes, far below the limit either way)
    proxy = methods.get(ONE_X_PROXY if n_x == 1 else SEVERAL_X_PROXY)
    opts = {} if n_x == 1 else {"lambda_rule": "wang"}
    cov = proxy.expected_cov(epsilon=epsilon, delta=delta or 1e-6, n=n,
                             x_bounds=[(0.0, 1.0)] * n_x, y_bounds=(0.0, 1.0),
                             fit_intercept=True, options=opts)[0]
    return float(max(math.sqrt(max(cov[j, j], 0.0)) for j in range(1, cov.shape[0])))


def check_bounds_free(private_bounds: Mapping[str, tuple[float, float]], *, n: int,
                      bounds_epsilon: float, coarse: Mapping[str, tuple[float, float]],
                      method_epsilon: float, delta: float | None, n_x: int,
                      allow_unreliable: bool = False) -> Reliability:
    """Both checks of the module doc on DP outputs (``private_bounds``, each from ε =
    ``bounds_epsilon``/k, two quartiles) and public inputs; raises
    :class:`InsufficientBudgetError` when one fails, unless ``allow_unreliable`` (then warns)."""
    from dpreg.preprocess.bounds import BOUND_QUANTILES, BOUND_WIDENING

    k = max(1, len(private_bounds))
    eps_q = bounds_epsilon / k / 2.0
    p_out = 0.0
    for col, (lo, hi) in private_bounds.items():
        cl, ch = coarse[col]
        for q in BOUND_QUANTILES:
            p_out += bounds_outside_probability(hi - lo, n=n, quantile_epsilon=eps_q,
                                                coarse_width=ch - cl, widening=BOUND_WIDENING,
                                                quantile=q)
    p_out = min(1.0, p_out)
    rel = _relative_sd(n, method_epsilon, delta, n_x)
    problems = []
    if p_out > BOUNDS_P_OUT_MAX:
        # the message states public inputs only (the same text for every data set that fails)
        problems.append(
            f"the DP bounds of {', '.join(private_bounds)} (ε={bounds_epsilon:.3g} for {k} "
            f"column(s), n={n}) are not self-consistent: had the data filled them, the DP "
            f"quartiles would have fallen outside the data with probability > "
            f"{BOUNDS_P_OUT_MAX:g}, so they may be noise over the coarse range rather than a "
            "location of the data")
    if rel > RELATIVE_SD_MAX:
        problems.append(
            f"the ε left for the fit ({method_epsilon:.3g}) with n={n} gives a slope noise sd of "
            f"{rel:.2f}× the slope scale of the bounds (> {RELATIVE_SD_MAX:g})")
    result = Reliability(not problems, p_out, rel, "; ".join(problems) or "ok")
    if problems:
        text = ("bounds-free mode cannot give a useful release here: " + "; ".join(problems)
                + ". Give public bounds (bounds={col: (lo, hi)}, CLI -b COL=LO:HI), more data "
                "or a larger epsilon (see docs/auto.md for the measured minimum data size).")
        if not allow_unreliable:
            raise InsufficientBudgetError(
                text + f" The DP bounds step spent ε={bounds_epsilon:.3g}; nothing else was "
                "charged or released. allow_unreliable=True (CLI --allow-unreliable) fits "
                "anyway and marks the result reliable=False.")
        warnings.warn("UNRELIABLE RELEASE: " + text + " Fitting anyway (allow_unreliable=True); "
                      "the result carries reliable=False.", UnreliableReleaseWarning,
                      stacklevel=4)
    return result
