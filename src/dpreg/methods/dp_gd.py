"""``dp-gd``: DP gradient descent -- Alabi et al. 2022's DPGD for one x (Alg. 7, pure ε, ρ-zCDP
or (ε, δ) variants), clipped full-batch DP-GD with Gaussian-DP accounting for several x (the
baseline of Tang et al. 2023).  Cores: :mod:`dpreg.simple._gradient_descent` and
:mod:`dpreg.multivariate.dpgd`; estimator :class:`dpreg.linear_model.DPGradientDescent`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from dpreg._spec import (
    Choice,
    GroupBatch,
    GroupLines,
    Integer,
    IntervalSupport,
    MethodSpec,
    Option,
    Real,
)
from dpreg.simple import _gradient_descent as gd_core

__all__ = ["DPGradientDescentSpec", "SPECS", "algorithm_for", "simple_budget_params"]

#: options of the one-x algorithm and of the several-x one
SIMPLE_OPTIONS = ("variant", "tau", "steps")
CLIPPED_OPTIONS = ("n_iter", "clip_norm", "learning_rate", "schedule", "accounting", "output",
                   "neighbouring")


def algorithm_for(options: Mapping[str, Any], n_features: int | None) -> str | None:
    """``"simple"`` or ``"clipped"`` for the ``algorithm`` option and the number of regressors
    (``None`` while it is not known and the option is ``"auto"``)."""
    algo = options.get("algorithm", "auto")
    if algo != "auto":
        return str(algo)
    if n_features is None:
        return None
    return "simple" if n_features == 1 else "clipped"


def _used_by(which: str) -> Any:
    def used(options: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
        algo = algorithm_for(options, context.get("n_features"))
        return algo is None or algo == which
    return used


def simple_budget_params(variant: str, epsilon: float, delta: float | None
                         ) -> tuple[float | None, float | None, float | None]:
    """(ε, ρ, δ) the one-x DPGD gets from a caller's (ε, δ) for its budget ``variant``:
    ``"pure"`` ε; ``"zcdp"`` ρ = ε²/2 (the zCDP that ε-DP implies, Alabi et al.'s DPGDzCDP
    comparison point); ``"approx"`` ε and δ.  Nothing the caller gave is dropped: ``rho`` is
    an option of the estimator only."""
    if variant == "zcdp":
        return None, float(epsilon) ** 2 / 2.0, None
    if variant == "approx":
        return epsilon, None, delta
    return epsilon, None, None


class DPGradientDescentSpec(MethodSpec):
    name = "dp-gd"
    target = ('the least-squares (OLS) coefficients of the data clipped to the bounds, approached by '
              'noisy gradient steps with clipped gradients (clipping biases it toward 0 when '
              'residuals exceed the clip)')
    algorithm = "DP gradient descent (Alabi et al. 2022 for one x; clipped GD otherwise)"
    features = "any"
    delta = "multi-x"
    guarantee = ("one x: ε-DP, ρ-zCDP or (ε, δ)-DP (variant); several x: (ε, δ)-DP via "
                 "μ-GDP")
    relation = "replace-one"
    takes_neighbouring = True
    min_rows = 2
    pure = False
    privacy_notes = ("gradient_descent.md", "dpgd_multivariate.md")
    order = 60
    estimator = "dpreg.linear_model:DPGradientDescent"
    harness = ("simple", "multivariate")
    needs_rows = ("each of its gradient steps is a pass over the rows at the current noisy "
                  "estimate, so it needs the rows, not one set of sums")
    local_options = ("variant", "tau", "steps")
    local_kind = "vector"
    _one = "with several regressors (it belongs to the one-x algorithm)"
    _several = "with one regressor (it belongs to the several-x algorithm)"
    options = MappingProxyType({
        "algorithm": Option(Choice("auto", "simple", "clipped"), "auto",
                            "one-x DPGD ('simple') or clipped DP-GD ('clipped')"),
        "variant": Option(Choice("pure", "zcdp", "approx"), "pure",
                          "one x: budget variant (ε-DP; ρ = ε²/2 zCDP; (ε, δ))",
                          used_if=_used_by("simple"), when=_one),
        "tau": Option(Real(0.0, None, closed="neither"), 1.0, "one x: per-coordinate clip",
                      used_if=_used_by("simple"), when=_one),
        "steps": Option(Integer(1, 100_000), 80, "one x: rounds",
                        used_if=_used_by("simple"), when=_one),
        "n_iter": Option(Integer(1, 1_000_000), 100, "several x: rounds",
                         used_if=_used_by("clipped"), when=_several),
        "clip_norm": Option(Real(0.0, 1e300, closed="right"), 1.0,
                            "several x: per-example gradient clip",
                            used_if=_used_by("clipped"), when=_several),
        "learning_rate": Option(Real(0.0, None, closed="neither"), 0.5,
                                "several x: step size", used_if=_used_by("clipped"),
                                when=_several),
        "schedule": Option(Choice("constant", "1/t", "1/sqrt(t)"), "constant",
                           "several x: step schedule", used_if=_used_by("clipped"),
                           when=_several),
        "accounting": Option(Choice("gdp", "zcdp"), "gdp", "several x: accounting",
                             used_if=_used_by("clipped"), when=_several),
        "output": Option(Choice("average", "last"), "average", "several x: released iterate",
                         used_if=_used_by("clipped"), when=_several),
        "neighbouring": Option(Choice("replace-one", "add-remove"), "replace-one",
                               "several x: neighbouring relation",
                               used_if=_used_by("clipped"), when=_several),
    })
    interval = IntervalSupport(
        missing=gd_core.NO_INTERVAL, fit_statistics=gd_core.NO_FIT_STATISTICS)

    paper_options = MappingProxyType({"algorithm": "clipped"})  # several x: clipped DP-GD
    harness_engine = "gradient"

    def fit_unit_ball(self, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float,
                      rng: Any, params: Mapping[str, Any]) -> Any:
        from dpreg.multivariate.dpgd import dp_gradient_descent

        opts = {k: v for k, v in params.items() if k != "algorithm"}
        return dp_gradient_descent(X, y, epsilon=epsilon, delta=delta, rng=rng,
                                   **{"clip_norm": 1.0, **opts})

    def make_estimator(self, *, epsilon: float, delta: float | None,
                       x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
                       fit_intercept: bool, ledger: Any, random_state: Any,
                       options: Mapping[str, Any]) -> Any:
        """The estimator; the one-x algorithm gets the budget parameters of its variant
        (:func:`simple_budget_params`)."""
        opts = dict(options)
        kwargs: dict[str, Any] = {"epsilon": epsilon, "delta": delta}
        if algorithm_for(opts, len(x_bounds)) == "simple":
            eps, rho, dlt = simple_budget_params(opts.get("variant", "pure"), epsilon, delta)
            kwargs = {"epsilon": eps, "delta": dlt, "rho": rho}
        return self.estimator_class()(bounds_X=x_bounds, bounds_y=y_bounds,
                                      fit_intercept=fit_intercept, random_state=random_state,
                                      ledger=ledger, **kwargs, **opts)

    def budget(self, *, epsilon: float, delta: float | None, options: Mapping[str, Any],
               n_features: int = 1) -> Any:
        from dpreg._validation import check_delta, check_epsilon
        from dpreg.multivariate.dpgd import dpgd_budget
        from dpreg.privacy import check_neighbouring
        from dpreg.simple._gradient_descent import resolve_budget

        eps = check_epsilon(epsilon)
        if algorithm_for(options, n_features) == "simple":
            e, r, d = simple_budget_params(options.get("variant", "pure"), eps, delta)
            return resolve_budget(str(options.get("variant", "pure")), e, r, d)[0]
        if delta is None:
            from dpreg.exceptions import InvalidInputError

            raise InvalidInputError("delta is required for method 'dp-gd' with several "
                                    "regressors (a value in (0, 1), e.g. 1e-6)")
        return dpgd_budget(eps, check_delta(delta, allow_zero=False),
                           int(options.get("n_iter", 100)),
                           str(options.get("accounting", "gdp")),
                           check_neighbouring(options.get("neighbouring", "replace-one")))[2]

    def replicates(self, x: np.ndarray, y: np.ndarray, *, epsilon: float,
                   x_bounds: tuple[float, float], y_bounds: tuple[float, float], trials: int,
                   x_eval: tuple[float, float], rng: Any, options: Mapping[str, Any]
                   ) -> np.ndarray:
        """The pure-ε one-x DPGD, ``trials`` runs at once."""
        from dpreg.simple import _gradient_descent as gd

        plan = gd.plan_gradient_descent(
            x, y, variant="pure", epsilon=epsilon, rho=None, delta=None, x_bounds=x_bounds,
            y_bounds=y_bounds, tau=options.get("tau", 1.0), steps=options.get("steps", 80),
            x_eval=x_eval)
        p25, p75 = gd.run_replicates(plan, rng, replicates=trials)
        slope, intercept = plan.line(p25, p75)
        return np.asarray(slope)[:, None] * np.asarray(x_eval) + np.asarray(intercept)[:, None]

    batched_replicates = True

    def replicates_batch(self, data: Any, *, epsilon: float, x_bounds: tuple[float, float],
                         y_bounds: tuple[float, float], trials: int,
                         x_eval: tuple[float, float], rngs: Any, options: Mapping[str, Any]
                         ) -> list[np.ndarray]:
        """The pure-ε one-x DPGD of many data sets (:func:`_dp_gd_many`); every plan (tau,
        steps) is checked before any draw."""
        plans = [gd_core.plan_gradient_descent(
            x, y, variant="pure", epsilon=epsilon, rho=None, delta=None, x_bounds=x_bounds,
            y_bounds=y_bounds, tau=options.get("tau", 1.0), steps=options.get("steps", 80),
            x_eval=x_eval) for x, y in data]
        return _dp_gd_many(plans, trials, list(rngs))

    def group_release(self, *, epsilon: float, x_bounds: tuple[float, float],
                      y_bounds: tuple[float, float], options: Mapping[str, Any],
                      validated: bool, delta: float | None = None) -> Any:
        """One group's DPGD exactly as the single fit calls its core (the one-x algorithm)."""
        from dpreg.simple import gradient_descent

        variant = options.get("variant", "pure")
        eps, rho, dlt = simple_budget_params(variant, epsilon, delta)
        return lambda x, y, g: gradient_descent(
            x, y, epsilon=eps, rho=rho, delta=dlt, variant=variant, x_bounds=x_bounds,
            y_bounds=y_bounds, tau=options.get("tau", 1.0), steps=options.get("steps", 80),
            rng=g)

    def release_groups(self, batch: GroupBatch) -> GroupLines:
        """DPGD for all groups: :func:`dpreg.simple._gradient_descent.release_gradient_descent`
        on the batch, the per-round gradient sums of every group by segment sums
        (bit-identical to the per-group ``.sum()``), one mechanism call per group per
        round.  With ``batch.workers`` > 1 each round's sums are split between that many
        threads (contiguous shares of the groups; the same sums for any split)."""
        from dpreg.simple import _gradient_descent as gd
        from dpreg.simple._segments import GD_THREAD_MIN_ROWS, gd_gradient_sums

        opts = dict(batch.options)
        variant = opts.get("variant", "pure")
        eps, rho, delta = simple_budget_params(variant, batch.epsilon, batch.delta)
        probe = np.array([batch.x_bounds[0], batch.x_bounds[1]])
        plan = gd.plan_gradient_descent(
            probe, probe, variant=variant, epsilon=eps, rho=rho, delta=delta,
            x_bounds=batch.x_bounds, y_bounds=batch.y_bounds, tau=opts.get("tau", 1.0),
            steps=opts.get("steps", 80), x_eval=None)
        xs, ys, starts = batch.active_rows()
        (xlo, xhi), (ylo, yhi) = plan.x_bounds, plan.y_bounds
        u = (np.clip(xs, xlo, xhi) - xlo) / (xhi - xlo)
        v = (np.clip(ys, ylo, yhi) - ylo) / (yhi - ylo)
        tau = plan.tau
        a = np.ascontiguousarray(0.75 - u)
        b = np.ascontiguousarray(u - 0.25)
        v = np.ascontiguousarray(v)
        del u
        g = batch.active.size
        workers = max(1, int(batch.workers))
        pool = None
        if workers > 1 and a.size >= GD_THREAD_MIN_ROWS:
            from concurrent.futures import ThreadPoolExecutor

            pool = ThreadPoolExecutor(max_workers=workers)
        try:
            def gradient(p: np.ndarray) -> np.ndarray:
                return gd_gradient_sums(a, b, v, starts, p, tau, pool)

            p25, p75 = gd.release_gradient_descent(gradient, plan=plan, rows=g,
                                                   rng=batch.randomness(batch.active))
        finally:
            if pool is not None:
                pool.shutdown()
        slope, intercept = plan.line(p25, p75)
        preds = {float(xv): intercept + slope * xv for xv in plan.x_eval}
        return GroupLines(slope, intercept, preds, np.ones(g, dtype=bool), [""] * g)


SPECS = (DPGradientDescentSpec(),)


#: data sets per batch of :func:`_dp_gd_many` (its noise: steps x 2·trials integers each)
_GD_BATCH = 512


def _dp_gd_many(plans: list[gd_core.GDPlan], trials: int, gens: list[np.random.Generator]
                ) -> list[np.ndarray]:
    """DPGD's replicates of G data sets (plans of equal steps, ε and τ), data set g what
    ``run_replicates(plans[g], gens[g], replicates=trials)`` returns: batches of up to
    ``_GD_BATCH`` data sets of similar sizes (sorted by n, so that a batch holds few distinct
    n) run the ``steps`` rounds together (:func:`_gd_batch`)."""
    from dpreg.mechanisms.batch import RowRandomness

    out: list[np.ndarray] = [np.empty((trials, 2)) for _ in plans]
    order = sorted(range(len(plans)), key=lambda k: plans[k].n)
    for b0 in range(0, len(order), _GD_BATCH):
        idx = order[b0:b0 + _GD_BATCH]
        p25, p75 = _gd_batch([plans[i] for i in idx],
                             RowRandomness.seeded([gens[i] for i in idx]), trials)
        for row, i in enumerate(idx):
            slope, intercept = plans[i].line(p25[row], p75[row])
            for j, xv in enumerate(plans[i].x_eval):
                out[i][:, j] = slope * xv + intercept
    return out


def _gd_batch(plans: list[gd_core.GDPlan], rows: Any, trials: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """DPGD replicates of G data sets with plans of equal steps, ε and τ: (p25, p75) of shape
    (G, trials), row g what ``run_replicates(plans[g], gen_g, replicates=trials)`` returns --
    the same element-wise operations as :func:`~dpreg.simple._gradient_descent.data_gradient`,
    its per-row sums over n taken for the data sets of one size n together, and each round's
    noise one :func:`~dpreg.mechanisms.laplace_calls` call per data set (row g of ``rows``:
    the keys data set g's own run takes, in the same order)."""
    g = len(plans)
    tau = plans[0].tau
    sizes: dict[int, list[int]] = {}
    for k, plan in enumerate(plans):
        sizes.setdefault(plan.n, []).append(k)
    parts = []
    for members in sizes.values():
        u = np.stack([plans[k].u for k in members])[:, None, :]  # (G_n, 1, n)
        v = np.stack([plans[k].v for k in members])[:, None, :]
        parts.append((np.asarray(members), 0.75 - u, u - 0.25, v))

    def gradient(p: np.ndarray) -> np.ndarray:
        q = p.reshape(g, trials, 2)
        out = np.empty((g, trials, 2))
        for members, a, b, v in parts:
            qm = q[members]
            # as data_gradient: resid = 2(p25·a + p75·b) − v, sums of clip(2·resid·a) and
            # clip(2·resid·b) over the n rows (in place: the same operations, fewer arrays)
            resid = qm[:, :, :1] * a
            tmp = qm[:, :, 1:] * b
            resid += tmp
            resid *= 2.0
            resid -= v
            resid *= 2.0
            np.multiply(resid, a, out=tmp)
            out[members, :, 0] = np.clip(tmp, -tau, tau, out=tmp).sum(axis=2)
            np.multiply(resid, b, out=tmp)
            out[members, :, 1] = np.clip(tmp, -tau, tau, out=tmp).sum(axis=2)
        return out.reshape(g * trials, 2)

    per_row = gd_core.step_noise(plans[0], rows)  # every plan has the same steps, ε and τ

    def noise(grad: np.ndarray) -> np.ndarray:
        return np.asarray(per_row(grad.reshape(g, trials * 2))).reshape(g * trials, 2)

    kept = gd_core.gd_iterates(gradient, noise, steps=plans[0].steps, rows=g * trials,
                               keep_from=plans[0].steps // 2 + 1)
    avg = kept.mean(axis=0).reshape(g, trials, 2)
    return avg[:, :, 0], avg[:, :, 1]
