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

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from dpreg._spec import Release, ReleasePlan
from dpreg._validation import (
    DEPRECATED,
    check_bounds,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_rho,
    check_rng,
    is_seeded,
    renamed_parameters,
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

__all__ = ["gradient_descent", "VARIANTS", "VARIANT_PARAMETERS", "variant_budget",
           "variant_parameters", "plan_gradient_descent", "GradientSums",
           "gradient_descent_statistics", "group_gradient_statistics", "normalised_data", "data_gradient",
           "release_gradient_descent", "gradient_descent_result", "normalised_line",
           "step_noise", "gd_iterates", "NO_INTERVAL", "NO_FIT_STATISTICS"]

_SOURCE = "Alabi, McMillan, Sarathy, Smith & Vadhan 2022, §6.3, App. E, Alg. 7, Lemma 21"
#: why a DP gradient-descent line has no interval / no R² (one x and several x alike)
NO_INTERVAL = ("none: DP gradient descent's iterates depend on per-example gradient clipping, "
               "so the released line does not determine its sampling distribution; no valid "
               "interval is available")
NO_FIT_STATISTICS = ("DP gradient descent releases clipped-gradient iterates: no residual or "
                     "total sum of squares is released")
_MAX_STEPS = 100_000
#: the budget variants of the one-x algorithm
VARIANTS = ("pure", "zcdp", "approx")
#: THE variant -> budget rule's table: the budget parameters each variant takes (all of them
#: required; any other budget parameter given is an error, never silently dropped)
VARIANT_PARAMETERS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "pure": ("epsilon",), "zcdp": ("rho",), "approx": ("epsilon", "delta")})
_BUDGET_NAMES = ("epsilon", "rho", "delta")

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


def variant_budget(variant: Any, *, epsilon: Any = None, rho: Any = None, delta: Any = None
                   ) -> tuple[Budget, Budget]:
    """THE variant -> budget rule of the one-x DPGD (pure function of public inputs):
    ``(budget charged, budget the noise is calibrated to)``.

    ``"pure"``: ``epsilon`` -> (PureDP(ε), PureDP(ε)); ``"zcdp"``: ``rho`` -> (ZCDP(ρ),
    ZCDP(ρ)); ``"approx"``: ``epsilon`` and ``delta`` -> (ApproxDP(ε, δ), ZCDP(ρ)) with ρ =
    :func:`~dpreg.privacy.zcdp_rho_for_approx` (ε, δ), the largest ρ whose conversion is within
    (ε, δ).  The parameters of a variant (:data:`VARIANT_PARAMETERS`) are required; a budget
    parameter the variant does not use is an :class:`~dpreg.exceptions.InvalidInputError`
    naming it (never silently dropped).  Every caller -- the core, the estimators, the spec's
    ``budget``/``plan`` and the harness -- goes through this one function."""
    var = check_choice(variant, "variant", VARIANTS)
    given = {"epsilon": epsilon, "rho": rho, "delta": delta}
    used = VARIANT_PARAMETERS[var]
    for name in _BUDGET_NAMES:
        if name not in used and given[name] is not None:
            raise InvalidInputError(
                f"{name} is not used by variant={var!r}; got {name}={given[name]!r} (pure: "
                "epsilon; zcdp: rho; approx: epsilon and delta)")
    missing = [name for name in used if given[name] is None]
    if missing:
        hint = (" (Alabi et al. run DPGDzCDP with rho = epsilon**2 / 2)" if var == "zcdp"
                else "")
        raise InvalidInputError(
            f"variant={var!r} needs {' and '.join(used)}{hint}; got "
            + ", ".join(f"{name}=None" for name in missing))
    if var == "pure":
        pure = PureDP(check_epsilon(epsilon))
        return pure, pure
    if var == "zcdp":
        conc = ZCDP(check_rho(rho))
        return conc, conc
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    return ApproxDP(eps, dlt), ZCDP(zcdp_rho_for_approx(eps, dlt))


def variant_parameters(variant: Any, epsilon: float, delta: float | None = None
                       ) -> dict[str, float | None]:
    """The budget parameters (``epsilon``, ``rho``, ``delta``) of ``variant`` for a caller that
    takes (ε, δ) -- ``dpreg.regress``, the CLI, ``fit_by_group``, the reproduction harness:
    each parameter of :data:`VARIANT_PARAMETERS` from the caller's value (ρ = ε²/2 for
    ``"zcdp"``, the zCDP that ε-DP implies: Alabi et al.'s DPGDzCDP comparison point), the
    others ``None``.  Pure function of public inputs; :func:`variant_budget` then checks
    them."""
    var = check_choice(variant, "variant", VARIANTS)
    from_caller = {"epsilon": epsilon,
                   "rho": None if epsilon is None else float(epsilon) ** 2 / 2.0,
                   "delta": delta}
    return {name: (from_caller[name] if name in VARIANT_PARAMETERS[var] else None)
            for name in _BUDGET_NAMES}


@renamed_parameters(steps="n_iter")
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
    n_iter: int = 80,
    x_eval: Any = None,
    ledger: Ledger | None = None,
    rng: Any = None,
    steps: Any = DEPRECATED,
) -> SimpleRegressionResult:
    """DPGradDescent: noisy clipped gradient descent on the squared loss (Alabi et al. Alg. 7).

    The pipeline: :func:`plan_gradient_descent` (public: every check, the budget, its
    per-round split, sensitivity and noise scale) -> :func:`gradient_descent_statistics` (the
    exact clipped gradient sums, deterministic) -> the ledger charge ->
    :func:`release_gradient_descent` (the only noise draws; the privacy statement) ->
    :func:`gradient_descent_result` (post-processing).

    Parameters
    ----------
    x, y:
        The data (1-D, equal length n >= 2, finite); clipped to the public bounds.
    epsilon, rho, delta, variant:
        ``variant="pure"``: ``epsilon`` (ε-DP, Laplace); ``"zcdp"``: ``rho`` (ρ-zCDP,
        Gaussian); ``"approx"``: ``epsilon`` and ``delta`` ((ε, δ)-DP via the zCDP
        conversion).  A budget parameter the variant does not use is an error
        (:func:`variant_budget`).  ``inf`` runs the same iterations without noise (not
        private; warns).
    x_bounds, y_bounds:
        Public ranges; data are clipped and mapped to [0, 1] with them.  Required.
    tau:
        Per-coordinate gradient clipping bound τ > 0 (in the [0, 1]-normalised units).
    n_iter:
        Number of rounds T >= 1 (each gets ε/T or ρ/T; default 80).  ``steps=`` is its
        deprecated spelling (one release, with a ``DeprecationWarning``).
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
    plan = plan_gradient_descent(variant=variant, epsilon=epsilon, rho=rho, delta=delta,
                                 x_bounds=x_bounds, y_bounds=y_bounds, tau=tau, n_iter=n_iter,
                                 x_eval=x_eval, n=int(xa.size))
    gen = check_rng(rng)
    stats = gradient_descent_statistics(xa, ya, plan)
    charge(ledger, plan.budget, "dpreg.simple.gradient_descent", plan.relation)
    if plan.budget.is_infinite:
        warn_not_private("gradient_descent")
    return gradient_descent_result(release_gradient_descent(stats, plan, gen,
                                                            seeded=is_seeded(rng)))


@renamed_parameters(steps="n_iter")
def plan_gradient_descent(*, variant: Any = "pure", epsilon: Any = None, rho: Any = None,
                          delta: Any = None, x_bounds: Any, y_bounds: Any, tau: Any = 1.0,
                          n_iter: Any = 80, x_eval: Any = None, n: Any = None,
                          steps: Any = DEPRECATED) -> ReleasePlan:
    """The public plan of a DPGD release: reads no data, draws nothing.

    Every parameter is checked (variant, its budget by :func:`variant_budget`, bounds, τ,
    T, the evaluation points and, when given, the public n >= 2); the plan holds
    ``budget`` (charged), ``parts`` -- ``"rounds"``: the budget the T rounds together are
    calibrated to (the charged one, or for ``"approx"`` the zCDP ρ whose conversion is within
    (ε, δ)) and ``"per_round"``: each round's share, ε/T or ρ/T rounded down exactly so
    that T of them never exceed ``"rounds"`` -- the replace-one sensitivity of one round's
    gradient sum (``"l1"`` = 4τ for Laplace, ``"l2"`` = 2√2τ for Gaussian,
    :func:`~dpreg.mechanisms.sensitivity.clipped_box_sum_sensitivity`) and the noise scale
    (``"laplace_scale"`` or ``"gaussian_sd"``).  ``options``: variant, tau, steps (T, from
    ``n_iter``; ``steps=`` is the deprecated spelling of ``n_iter``), x_bounds, y_bounds,
    x_eval.  ``n`` may be left out (per-group and batched releases: the noise does not depend
    on n)."""
    charged, calib = variant_budget(variant, epsilon=epsilon, rho=rho, delta=delta)
    var = str(variant)
    xb = check_bounds(x_bounds, "x_bounds")
    yb = check_bounds(y_bounds, "y_bounds")
    tau_ = check_positive(tau, "tau")
    t_steps = check_int(n_iter, "n_iter", minimum=1, maximum=_MAX_STEPS)
    xe = check_x_eval(x_eval, xb)
    n_ = None if n is None else check_int(n, "n", minimum=2)
    # ε/T or ρ/T, rounded down exactly (T parts never exceed the whole)
    per_step: Budget = (PureDP(div_down(calib.epsilon, t_steps)) if isinstance(calib, PureDP)
                        else ZCDP(div_down(calib.rho, t_steps)))  # type: ignore[attr-defined]
    if isinstance(per_step, PureDP):
        sens = {"l1": clipped_box_sum_sensitivity(tau_, 2, "replace-one", norm="l1")}
        noise = {"laplace_scale": laplace_scale(sens["l1"], per_step.epsilon)}
    else:
        assert isinstance(per_step, ZCDP)
        sens = {"l2": clipped_box_sum_sensitivity(tau_, 2, "replace-one", norm="l2")}
        noise = {"gaussian_sd": gaussian_sigma(sens["l2"], per_step)}
    return ReleasePlan(
        method="dp-gd",
        options={"variant": var, "tau": tau_, "steps": t_steps, "x_bounds": xb, "y_bounds": yb,
                 "x_eval": xe},
        budget=charged, relation=Neighbouring.REPLACE_ONE,
        parts={"rounds": calib, "per_round": per_step}, n=n_, d=2, sensitivities=sens,
        noise=noise)


@dataclass(frozen=True)
class GradientSums:
    """DPGD's statistics step: ``sums`` maps the current iterates of ``rows`` runs ((rows, 2)
    normalised predictions) to the EXACT clipped gradient sums of each run's data ((rows, 2):
    Σ clip(2r_i a_i), Σ clip(2r_i b_i), see :func:`data_gradient`) -- deterministic; a run is
    one data set, one replicate of it, or one group.  ``lanes``: where the per-round noise is
    released row by row through a :class:`~dpreg.mechanisms.batch.RowRandomness`, its number
    of rows (each round's (rows, 2) sums are released as (lanes, ·): lane g holds runs
    g·rows/lanes .. (g + 1)·rows/lanes − 1, e.g. the replicates of data set g); ``None``: one
    mechanism call per round releases the whole (rows, 2) array (a Generator) or one row per
    run (a RowRandomness of ``rows`` rows)."""

    sums: Callable[[np.ndarray], np.ndarray]
    rows: int = 1
    lanes: int | None = None


def normalised_data(x: np.ndarray, y: np.ndarray, plan: ReleasePlan
                    ) -> tuple[np.ndarray, np.ndarray]:
    """x and y clipped to the plan's public bounds and mapped to [0, 1]: (u, v)."""
    (xlo, xhi), (ylo, yhi) = plan.options["x_bounds"], plan.options["y_bounds"]
    u = (np.clip(x, xlo, xhi) - xlo) / (xhi - xlo)
    v = (np.clip(y, ylo, yhi) - ylo) / (yhi - ylo)
    return u, v


def gradient_descent_statistics(x: np.ndarray, y: np.ndarray, plan: ReleasePlan, *,
                                rows: int = 1) -> GradientSums:
    """The statistics step of one data set (validated arrays): :func:`data_gradient` of its
    normalised data, for ``rows`` runs on it (``rows`` > 1: independent replicates)."""
    u, v = normalised_data(x, y, plan)
    return GradientSums(data_gradient(u, v, tau=plan.options["tau"]), rows=int(rows))


@contextmanager
def group_gradient_statistics(x: np.ndarray, y: np.ndarray, starts: np.ndarray,
                              plan: ReleasePlan, *, workers: int = 1
                              ) -> Iterator[GradientSums]:
    """The statistics step of many groups at once (a context: the threads live as long as
    it): rows contiguous per group (``starts``: the G + 1 segment boundaries), each round's
    exact clipped gradient sums of every group by segment sums in one fused pass
    (:func:`~dpreg.simple._segments.gd_gradient_sums`: the operations of
    :func:`data_gradient` in NumPy's summation order, bit-identical to each group's own
    statistics).  With ``workers`` > 1 and enough rows each round's sums are split between
    that many threads (contiguous shares of the groups; the same sums for any split)."""
    from dpreg.simple._segments import GD_THREAD_MIN_ROWS, gd_gradient_sums

    u, v = normalised_data(x, y, plan)
    tau = plan.options["tau"]
    a = np.ascontiguousarray(0.75 - u)
    b = np.ascontiguousarray(u - 0.25)
    v = np.ascontiguousarray(v)
    del u
    pool = None
    if int(workers) > 1 and a.size >= GD_THREAD_MIN_ROWS:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=int(workers))
    try:
        def sums(p: np.ndarray) -> np.ndarray:
            return gd_gradient_sums(a, b, v, starts, p, tau, pool)

        yield GradientSums(sums, rows=int(np.asarray(starts).size - 1))
    finally:
        if pool is not None:
            pool.shutdown()


def step_noise(plan: ReleasePlan, rng: Any) -> Callable[[np.ndarray], np.ndarray]:
    """The per-round gradient noise of ``plan``: Laplace at the per-round ε (pure variant) or
    Gaussian at the per-round zCDP/(ε,δ) budget, scaled to the plan's gradient sensitivity --
    T successive mechanism calls, their grid noise drawn by one batched call at the first
    (:func:`~dpreg.mechanisms.laplace_calls` / :func:`~dpreg.mechanisms.gaussian_calls`: the
    same releases as T calls of ``laplace``/``gaussian``).  ``rng``: a Generator (one data
    set: each call releases the whole array) or a
    :class:`~dpreg.mechanisms.batch.RowRandomness` (one call per row).  Called by
    :func:`release_gradient_descent` only."""
    per_step, steps = plan.parts["per_round"], plan.options["steps"]
    if isinstance(per_step, PureDP):
        call = laplace_calls(steps, sensitivity=plan.sensitivities["l1"],
                             epsilon=per_step.epsilon, rng=rng)
    else:
        call = gaussian_calls(steps, sensitivity=plan.sensitivities["l2"], budget=per_step,
                              rng=rng)

    def noise(g: np.ndarray) -> np.ndarray:
        return np.asarray(call(g))

    return noise


def normalised_line(plan: ReleasePlan, p25: Any, p75: Any) -> tuple[Any, Any]:
    """Map normalised predictions at 1/4 and 3/4 back to (slope, intercept) in data units
    (post-processing)."""
    (xlo, xhi), (ylo, yhi) = plan.options["x_bounds"], plan.options["y_bounds"]
    slope = (yhi - ylo) * 2.0 * (p75 - p25) / (xhi - xlo)
    intercept = ylo + (yhi - ylo) * (1.5 * p25 - 0.5 * p75) - slope * xlo
    return slope, intercept


def _details(plan: ReleasePlan) -> dict[str, Any]:
    """The privacy statement's details (public: from the plan alone)."""
    opts, per_step, calib = plan.options, plan.parts["per_round"], plan.parts["rounds"]
    t_steps = opts["steps"]
    details: dict[str, Any] = {"variant": opts["variant"], "steps": t_steps, "tau": opts["tau"],
                               "x_bounds": opts["x_bounds"], "y_bounds": opts["y_bounds"],
                               "n": plan.n,
                               "normalisation": "x and y clipped and mapped to [0, 1]",
                               "init": (0.5, 0.5), "averaged_iterates": t_steps - t_steps // 2}
    if isinstance(plan.budget, ApproxDP):  # the zCDP ρ the (ε, δ) rounds are calibrated to
        details["rho"] = calib.rho
    if isinstance(per_step, PureDP):
        details.update(per_step_epsilon=per_step.epsilon,
                       sensitivity_l1=plan.sensitivities["l1"],
                       laplace_scale=plan.noise["laplace_scale"])
    else:
        details.update(per_step_rho=per_step.rho, sensitivity_l2=plan.sensitivities["l2"],
                       gaussian_sd=plan.noise["gaussian_sd"])
    return details


def release_gradient_descent(stats: GradientSums, plan: ReleasePlan, rng: Any, *,
                             seeded: bool = False) -> Release:
    """THE release of DPGD (Alabi et al. 2022, App. E, Alg. 7, Lemma 21) for a batch of
    ``stats.rows`` runs: the only code that draws DPGD noise.  T rounds of: the exact clipped
    gradient sums (``stats``), Laplace (ε/T, L1 sensitivity 4τ) or Gaussian (ρ/T, L2
    sensitivity 2√2τ) noise through :func:`step_noise`, the adaptive step and the descent
    update (:func:`gd_iterates`); the released (p₂₅, p₇₅) are the averages of the iterates
    after updates ⌊T/2⌋+1 … T.  ``rng``: a Generator, or a
    :class:`~dpreg.mechanisms.batch.RowRandomness` (one row per run, or per lane of
    ``stats.lanes``).  Guarantee per run: T-fold composition of the per-round releases, i.e.
    ``plan.budget`` (ε-DP, ρ-zCDP or (ε, δ)-DP), replace-one neighbours, n public.

    ``values``: ``p25``, ``p75`` (normalised, arrays of shape (rows,)), ``slope``,
    ``intercept`` (data units, post-processing of those) and ``x_eval``."""
    steps = plan.options["steps"]
    call = step_noise(plan, rng)
    rows, lanes = int(stats.rows), stats.lanes
    if lanes is None:
        noise = call
    else:
        def noise(g: np.ndarray) -> np.ndarray:
            return np.asarray(call(g.reshape(lanes, -1))).reshape(rows, 2)

    kept = gd_iterates(stats.sums, noise, steps=steps, rows=rows, keep_from=steps // 2 + 1)
    avg = kept.mean(axis=0)
    p25, p75 = avg[:, 0], avg[:, 1]
    slope, intercept = normalised_line(plan, p25, p75)
    stmt = PrivacyStatement(plan.budget, plan.relation, f"DPGD ({plan.options['variant']})",
                            _SOURCE, seeded, _details(plan))
    return Release(plan, {"p25": p25, "p75": p75, "slope": slope, "intercept": intercept,
                          "x_eval": list(plan.options["x_eval"])}, stmt)


def gradient_descent_result(release: Release, run: int = 0) -> SimpleRegressionResult:
    """The :class:`SimpleRegressionResult` of run ``run`` of a DPGD release (post-processing):
    its line, the predictions at the plan's ``x_eval`` and the normalised (p₂₅, p₇₅)."""
    v = release.values
    p25, p75 = float(v["p25"][run]), float(v["p75"][run])
    slope, intercept = normalised_line(release.plan, p25, p75)
    preds = {xv: intercept + slope * xv for xv in release.plan.options["x_eval"]}
    return SimpleRegressionResult("dp-gd", release.privacy, released_slope=float(slope),
                                  released_intercept=float(intercept),
                                  released_predictions=preds, n=release.plan.n,
                                  extra={"x_eval": list(v["x_eval"]),
                                         "normalised_predictions": (p25, p75)},
                                  no_interval=NO_INTERVAL, no_fit_statistics=NO_FIT_STATISTICS)
