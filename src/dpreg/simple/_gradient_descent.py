"""DP gradient descent for simple linear regression (Alabi et al. 2022, §6.3, App. E, Alg. 7).

Internally x and y are clipped to their public bounds and mapped to [0, 1]
(u = (x − a)/(b − a), v = (y − c)/(d − c)).  The line is parametrised by its predictions
(p₂₅, p₇₅) at u = 0.25 and 0.75: ŷ(u) = 2[p₂₅(3/4 − u) + p₇₅(u − 1/4)].  Each round t = 0..T−1:

* per-record gradient of (ŷ(u_i) − v_i)² up to a factor 2 absorbed by the step,
  g_i = (2(ŷ(u_i) − v_i)(3/4 − u_i), 2(ŷ(u_i) − v_i)(u_i − 1/4)), each coordinate clipped to
  [−τ, τ];
* G_t = Σ g_i + noise: Laplace with scale 4τ/ε_t per coordinate (``variant="pure"``, replace-one
  L1 sensitivity of a sum of box-clipped 2-vectors is 4τ, ε_t = ε/T), or Gaussian with sd
  2√2τ/√(2ρ_t) = 2τ/√ρ_t (``"zcdp"`` and ``"approx"``, L2 sensitivity 2√2τ, ρ_t = ρ/T);
* adaptive step γ_t = 1/√(Σ_{l<=t} ‖G_l‖²) and the **descent** update p ← p − γ_t·G_t.

Start (0.5, 0.5); output the average of the iterates after updates ⌊T/2⌋+1 … T, mapped back
to the original units (slope = (d − c)/(b − a)·2(p₇₅ − p₂₅), etc.).

⚠ Alg. 7 as printed uses (y_i − ỹ) in the gradient together with p ← p − γΔ: that is gradient
*ascent*; dpreg uses (ỹ − y_i) as the reference code does (the test-suite pins the difference).

Guarantees (replace-one neighbours, n public): ``"pure"`` ε-DP; ``"zcdp"`` ρ-zCDP;
``"approx"`` (ε, δ)-DP with ρ the largest value whose conversion (the smaller of Bun–Steinke
Prop. 1.3 and Alabi et al. Lemma 21) is within (ε, δ).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpreg._validation import (
    check_bounds,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_rho,
    check_rng,
    is_seeded,
)
from dpreg.exceptions import InvalidInputError
from dpreg.mechanisms import gaussian_calls, gaussian_sigma, laplace_calls, laplace_scale
from dpreg.mechanisms.sensitivity import clipped_box_sum_sensitivity
from dpreg.privacy import (
    ZCDP,
    ApproxDP,
    Budget,
    Ledger,
    Neighbouring,
    PrivacyStatement,
    PureDP,
    charge,
    zcdp_rho_for_approx,
)
from dpreg.simple._common import (
    check_choice,
    check_simple_xy,
    check_x_eval,
    div_down,
    warn_not_private,
)
from dpreg.simple._result import SimpleRegressionResult

__all__ = ["gradient_descent", "GDPlan", "plan_gradient_descent", "resolve_budget",
           "release_gradient_descent", "run_replicates", "step_noise"]

_SOURCE = "Alabi, McMillan, Sarathy, Smith & Vadhan 2022, §6.3, App. E, Alg. 7, Lemma 21"
#: why a DP gradient-descent line has no interval / no R² (one x and several x alike)
NO_INTERVAL = ("none: DP gradient descent's iterates depend on per-example gradient clipping, "
               "so the released line does not determine its sampling distribution; no valid "
               "interval is available")
NO_FIT_STATISTICS = ("DP gradient descent releases clipped-gradient iterates: no residual or "
                     "total sum of squares is released")
_MAX_STEPS = 100_000

Noise = Callable[[np.ndarray], np.ndarray]


def data_gradient(u: np.ndarray, v: np.ndarray, *, tau: float, sign: float = 1.0
                  ) -> Callable[[np.ndarray], np.ndarray]:
    """The statistics step of one round for one data set: ``p`` ((R, 2) normalised
    predictions) -> the exact clipped gradient sums (R, 2), g = (Σ clip(2r_i a_i), Σ clip(2r_i
    b_i)) with r_i = ŷ(u_i) − v_i, a_i = 3/4 − u_i, b_i = u_i − 1/4, each term clipped to
    [−τ, τ].  ``sign=-1`` reproduces Alg. 7 as printed (gradient ascent; tests only)."""
    a = 0.75 - u  # ∂ŷ/∂p₂₅ / 2
    b = u - 0.25  # ∂ŷ/∂p₇₅ / 2

    def gradient(p: np.ndarray) -> np.ndarray:
        resid = sign * (2.0 * (p[:, :1] * a + p[:, 1:] * b) - v)  # (R, n)
        return np.stack([np.clip(2.0 * resid * a, -tau, tau).sum(axis=1),
                         np.clip(2.0 * resid * b, -tau, tau).sum(axis=1)], axis=1)

    return gradient


def gd_iterates(gradient: Callable[[np.ndarray], np.ndarray], noise: Noise, *, steps: int,
                rows: int, init: tuple[float, float] = (0.5, 0.5), keep_from: int = 0
                ) -> np.ndarray:
    """The iterates p^keep_from .. pᵀ (shape (T + 1 − keep_from, rows, 2)) of the noisy
    gradient method on a batch of ``rows`` runs (one data set or replicates, or one group per
    row): each round G = noise(gradient(p)) (both (rows, 2)), adaptive step γ = 1/√(Σ‖G‖²) per
    row and the descent update p ← p − γ·G.  The one DPGD loop: the single fit, the
    replicates, the grouped backends and the harness all run it, each with its own exact
    ``gradient`` (a statistics step) and the noise of :func:`step_noise`."""
    p = np.tile(np.asarray(init, dtype=np.float64), (rows, 1))
    out = np.empty((steps + 1 - keep_from, rows, 2), dtype=np.float64)
    if keep_from == 0:
        out[0] = p
    sq_sum = np.zeros(rows)
    for t in range(steps):
        g = np.asarray(noise(gradient(p))).reshape(rows, 2)
        sq_sum += np.einsum("ij,ij->i", g, g)
        with np.errstate(divide="ignore"):
            step = np.where(sq_sum > 0, 1.0 / np.sqrt(sq_sum), 0.0)
        p = p - g * step[:, None]
        if t + 1 >= keep_from:
            out[t + 1 - keep_from] = p
    return out


def _gd_iterates(u: np.ndarray, v: np.ndarray, *, tau: float, steps: int, noise: Noise,
                 init: tuple[float, float] = (0.5, 0.5), sign: float = 1.0,
                 replicates: int | None = None) -> np.ndarray:
    """All iterates p⁰..pᵀ (shape (T+1, 2), or (T+1, R, 2) with ``replicates=R``) of one data
    set: :func:`gd_iterates` with :func:`data_gradient` (``noise`` receives (R, 2) arrays)."""
    r = 1 if replicates is None else replicates
    out = gd_iterates(data_gradient(u, v, tau=tau, sign=sign), noise, steps=steps, rows=r,
                      init=init)
    return out if replicates is not None else out[:, 0, :]


def _average_last_half(iterates: np.ndarray) -> np.ndarray:
    steps = iterates.shape[0] - 1
    return iterates[steps // 2 + 1:].mean(axis=0)


def resolve_budget(variant: str, epsilon: Any, rho: Any, delta: Any
                    ) -> tuple[Budget, Budget, dict[str, Any]]:
    """(budget charged, budget calibrating the noise, details) for a variant."""
    def forbid(name: str, value: Any) -> None:
        if value is not None:
            raise InvalidInputError(
                f"{name} is not used by variant={variant!r}; got {name}={value!r} (pure: "
                "epsilon; zcdp: rho; approx: epsilon and delta)"
            )

    if variant == "pure":
        forbid("rho", rho)
        forbid("delta", delta)
        if epsilon is None:
            raise InvalidInputError("epsilon is required for variant='pure'; got None")
        pure = PureDP(check_epsilon(epsilon))
        return pure, pure, {}
    if variant == "zcdp":
        forbid("epsilon", epsilon)
        forbid("delta", delta)
        if rho is None:
            raise InvalidInputError(
                "rho is required for variant='zcdp' (Alabi et al. run DPGDzCDP with "
                "rho = epsilon**2 / 2); got None"
            )
        conc = ZCDP(check_rho(rho))
        return conc, conc, {}
    forbid("rho", rho)
    if epsilon is None or delta is None:
        raise InvalidInputError(
            f"variant='approx' needs both epsilon and delta; got epsilon={epsilon!r}, "
            f"delta={delta!r}"
        )
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    r = zcdp_rho_for_approx(eps, dlt)
    return ApproxDP(eps, dlt), ZCDP(r), {"rho": r}


def gradient_descent(
    x: Any,
    y: Any,
    *,
    epsilon: float | None = None,
    rho: float | None = None,
    delta: float | None = None,
    variant: str = "pure",
    x_bounds: tuple[float, float],
    y_bounds: tuple[float, float],
    tau: float = 1.0,
    steps: int = 80,
    x_eval: Any = None,
    ledger: Ledger | None = None,
    rng: Any = None,
) -> SimpleRegressionResult:
    """DPGradDescent: noisy clipped gradient descent on the squared loss (Alabi et al. Alg. 7).

    Parameters
    ----------
    x, y:
        The data (1-D, equal length n >= 2, finite); clipped to the public bounds.
    epsilon, rho, delta, variant:
        ``variant="pure"``: ``epsilon`` (ε-DP, Laplace); ``"zcdp"``: ``rho`` (ρ-zCDP,
        Gaussian); ``"approx"``: ``epsilon`` and ``delta`` ((ε, δ)-DP via the zCDP
        conversion).  ``inf`` runs the same iterations without noise (not private; warns).
    x_bounds, y_bounds:
        Public ranges; data are clipped and mapped to [0, 1] with them.  Required.
    tau:
        Per-coordinate gradient clipping bound τ > 0 (in the [0, 1]-normalised units).
    steps:
        Number of rounds T >= 1 (each gets ε/T or ρ/T).
    x_eval:
        Points where predictions are reported (default 25% and 75% of ``x_bounds``).
    ledger:
        Optional ledger charged the variant's budget (``PureDP``, ``ZCDP`` or ``ApproxDP``)
        before noise is drawn.
    rng:
        ``None`` (fresh entropy), a seed, a SeedSequence or a Generator.

    Guarantee: replace-one neighbours, n public; per-round L1 sensitivity 4τ (pure) or L2
    sensitivity 2√2τ (zCDP/approx); T-fold composition.  Source: Alabi et al. 2022, App. E,
    Alg. 7 and Lemma 21 (with the descent sign corrected).
    """
    xa, ya = check_simple_xy(x, y, min_rows=2)
    plan = plan_gradient_descent(xa, ya, variant=variant, epsilon=epsilon, rho=rho, delta=delta,
                 x_bounds=x_bounds, y_bounds=y_bounds, tau=tau, steps=steps, x_eval=x_eval)
    gen = check_rng(rng)
    charge(ledger, plan.charged, "dpreg.simple.gradient_descent",
           Neighbouring.REPLACE_ONE)
    if plan.charged.is_infinite:
        warn_not_private("gradient_descent")
    p25, p75 = run_replicates(plan, gen)
    slope, intercept = plan.line(p25, p75)
    preds = {xv: intercept + slope * xv for xv in plan.x_eval}
    stmt = PrivacyStatement(plan.charged, Neighbouring.REPLACE_ONE, f"DPGD ({plan.variant})",
                            _SOURCE, is_seeded(rng), plan.details)
    return SimpleRegressionResult("dp-gd", stmt, released_slope=float(slope),
                                  released_intercept=float(intercept), released_predictions=preds,
                                  n=plan.n, extra={"x_eval": list(plan.x_eval),
                                                   "normalised_predictions": (float(p25),
                                                                              float(p75))},
                                  no_interval=NO_INTERVAL, no_fit_statistics=NO_FIT_STATISTICS)


@dataclass(frozen=True)
class GDPlan:
    """Everything a DPGD run needs, computed from validated inputs (no randomness yet)."""

    variant: str
    charged: Budget
    per_step: Budget
    sensitivity: float
    u: np.ndarray
    v: np.ndarray
    tau: float
    steps: int
    x_bounds: tuple[float, float]
    y_bounds: tuple[float, float]
    x_eval: tuple[float, ...]
    n: int
    details: dict[str, Any]

    def line(self, p25: Any, p75: Any) -> tuple[Any, Any]:
        """Map normalised predictions at 1/4 and 3/4 back to (slope, intercept) in data units."""
        (xlo, xhi), (ylo, yhi) = self.x_bounds, self.y_bounds
        slope = (yhi - ylo) * 2.0 * (p75 - p25) / (xhi - xlo)
        intercept = ylo + (yhi - ylo) * (1.5 * p25 - 0.5 * p75) - slope * xlo
        return slope, intercept


def plan_gradient_descent(xa: np.ndarray, ya: np.ndarray, *, variant: Any, epsilon: Any,
                          rho: Any, delta: Any, x_bounds: Any, y_bounds: Any, tau: Any,
                          steps: Any, x_eval: Any) -> GDPlan:
    """Everything a DPGD run needs from validated inputs (no randomness): the budget of the
    variant, its per-step split and noise, the normalised data.  ``xa``/``ya`` may be a
    public probe (per-group releases take the data per group)."""
    var = check_choice(variant, "variant", ("pure", "zcdp", "approx"))
    charged, calib, extra_details = resolve_budget(var, epsilon, rho, delta)
    xb = check_bounds(x_bounds, "x_bounds")
    yb = check_bounds(y_bounds, "y_bounds")
    tau_ = check_positive(tau, "tau")
    t_steps = check_int(steps, "steps", minimum=1, maximum=_MAX_STEPS)
    xe = check_x_eval(x_eval, xb)
    n = int(xa.size)
    # ε/T or ρ/T, rounded down exactly (T parts never exceed the whole)
    per_step: Budget = (PureDP(div_down(calib.epsilon, t_steps)) if isinstance(calib, PureDP)
                        else ZCDP(div_down(calib.rho, t_steps)))  # type: ignore[attr-defined]
    details: dict[str, Any] = {"variant": var, "steps": t_steps, "tau": tau_,
                               "x_bounds": xb, "y_bounds": yb, "n": n,
                               "normalisation": "x and y clipped and mapped to [0, 1]",
                               "init": (0.5, 0.5), "averaged_iterates": t_steps - t_steps // 2,
                               **extra_details}
    if isinstance(per_step, PureDP):
        sens = clipped_box_sum_sensitivity(tau_, 2, "replace-one", norm="l1")
        details.update(per_step_epsilon=per_step.epsilon, sensitivity_l1=sens,
                       laplace_scale=laplace_scale(sens, per_step.epsilon))
    else:
        assert isinstance(per_step, ZCDP)
        sens = clipped_box_sum_sensitivity(tau_, 2, "replace-one", norm="l2")
        details.update(per_step_rho=per_step.rho, sensitivity_l2=sens,
                       gaussian_sd=gaussian_sigma(sens, per_step))
    (xlo, xhi), (ylo, yhi) = xb, yb
    u = (np.clip(xa, xlo, xhi) - xlo) / (xhi - xlo)
    v = (np.clip(ya, ylo, yhi) - ylo) / (yhi - ylo)
    return GDPlan(var, charged, per_step, sens, u, v, tau_, t_steps, xb, yb, xe, n, details)


def step_noise(plan: GDPlan, rng: Any) -> Callable[[np.ndarray], np.ndarray]:
    """The per-step gradient noise of ``plan``: Laplace at the per-step ε (pure variant) or
    Gaussian at the per-step zCDP/(ε,δ) budget, scaled to the plan's gradient sensitivity --
    T successive mechanism calls, their grid noise drawn by one batched call at the first
    (:func:`~dpreg.mechanisms.laplace_calls` / :func:`~dpreg.mechanisms.gaussian_calls`: the
    same releases as T calls of ``laplace``/``gaussian``).  ``rng``: a Generator (one data
    set: each call releases the whole (R, 2) array) or a
    :class:`~dpreg.mechanisms.batch.RowRandomness` (one call per row: groups)."""
    per_step, sens = plan.per_step, plan.sensitivity
    if isinstance(per_step, PureDP):
        call = laplace_calls(plan.steps, sensitivity=sens, epsilon=per_step.epsilon, rng=rng)
    else:
        call = gaussian_calls(plan.steps, sensitivity=sens, budget=per_step, rng=rng)

    def noise(g: np.ndarray) -> np.ndarray:
        return np.asarray(call(g))

    return noise


def release_gradient_descent(gradient: Callable[[np.ndarray], np.ndarray], *, plan: GDPlan,
                             rows: int, rng: Any) -> tuple[np.ndarray, np.ndarray]:
    """DPGD's release for a batch of ``rows`` runs from their per-round exact gradient sums
    (``gradient``: (rows, 2) iterates -> (rows, 2) clipped sums): the normalised (p₂₅, p₇₅)
    averaged over the last half of the iterates, arrays of shape (rows,).  ``rng`` as in
    :func:`step_noise`.  Guarantee per run: T-fold composition of the per-step Laplace
    (ε/T, L1 sensitivity 4τ) or Gaussian (ρ/T, L2 sensitivity 2√2τ) releases, replace-one, n
    public (Alabi et al. 2022, App. E, Alg. 7, Lemma 21)."""
    kept = gd_iterates(gradient, step_noise(plan, rng), steps=plan.steps, rows=rows,
                       keep_from=plan.steps // 2 + 1)
    avg = kept.mean(axis=0)
    return avg[:, 0], avg[:, 1]


def run_replicates(plan: GDPlan, gen: np.random.Generator, replicates: int | None = None
         ) -> tuple[Any, Any]:
    """Normalised (p25, p75) of one run, or arrays of ``replicates`` independent runs."""
    r = 1 if replicates is None else replicates
    p25, p75 = release_gradient_descent(data_gradient(plan.u, plan.v, tau=plan.tau), plan=plan,
                                        rows=r, rng=gen)
    if replicates is None:
        return float(p25[0]), float(p75[0])
    return p25, p75
