"""``dp-gd``: DP gradient descent -- Alabi et al. 2022's DPGD for one x (Alg. 7, pure ε, ρ-zCDP
or (ε, δ) variants), clipped full-batch DP-GD with Gaussian-DP accounting for several x (the
baseline of Tang et al. 2023).  Cores: :func:`dpreg.simple.gradient_descent` (its pipeline
``plan_gradient_descent`` -> ``gradient_descent_statistics`` -> ``release_gradient_descent``
-> ``gradient_descent_result``, all in :mod:`dpreg.simple`) and :mod:`dpreg.multivariate.dpgd`;
estimator :class:`dpreg.linear_model.DPGradientDescent`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from dpreg import simple as gd
from dpreg._spec import (
    AnyOf,
    AuditCase,
    Choice,
    GroupBatch,
    GroupLines,
    Integer,
    IntervalSupport,
    MethodSpec,
    Option,
    Real,
    Release,
    ReleasePlan,
)
from dpreg.exceptions import InvalidInputError

__all__ = ["DPGradientDescentSpec", "SPECS", "algorithm_for"]

#: options of the one-x algorithm and of the several-x one (``n_iter``, the number of rounds,
#: is both algorithms'; ``steps`` is its deprecated spelling: ``renamed_options``)
SIMPLE_OPTIONS = ("variant", "tau")
CLIPPED_OPTIONS = ("clip_norm", "learning_rate", "schedule", "accounting", "output",
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


#: the number of rounds of the one-x algorithm at ``n_iter="auto"`` (Alabi et al.'s T = 80);
#: the several-x algorithm's "auto" is its public schedule rule
#: (:func:`dpreg.multivariate.dpgd.dpgd_schedule`: T = 1600 and a clip from public inputs)
SIMPLE_AUTO_ROUNDS = 80


def rounds(options: Mapping[str, Any], algorithm: str) -> int | str:
    """The number of rounds of a fit: ``n_iter`` as given, else the deprecated ``steps``
    (its warning was given where the options were checked), else ``"auto"``: the one-x
    algorithm's :data:`SIMPLE_AUTO_ROUNDS`, or ``"auto"`` itself for the several-x
    algorithm (resolved by its public schedule rule)."""
    for key in ("n_iter", "steps"):
        value = options.get(key)
        if value is not None and not (isinstance(value, str) and value == "auto"):
            return int(value)
    return SIMPLE_AUTO_ROUNDS if algorithm == "simple" else "auto"


def simple_rounds(options: Mapping[str, Any]) -> int:
    """The one-x algorithm's number of rounds (:func:`rounds`: always an integer there)."""
    return int(rounds(options, "simple"))


def _used_by(which: str) -> Any:
    def used(options: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
        algo = algorithm_for(options, context.get("n_features"))
        return algo is None or algo == which
    return used


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
    local_options = ("variant", "tau", "n_iter", "steps")
    renamed_options = MappingProxyType({"steps": "n_iter"})
    local_kind = "vector"
    _one = "with several regressors (it belongs to the one-x algorithm)"
    _several = "with one regressor (it belongs to the several-x algorithm)"
    options = MappingProxyType({
        "algorithm": Option(Choice("auto", "simple", "clipped"), "auto",
                            "one-x DPGD ('simple') or clipped DP-GD ('clipped')"),
        "variant": Option(Choice(*gd.VARIANT_PARAMETERS), "pure",
                          "one x: budget variant (ε-DP; ρ = ε²/2 zCDP; (ε, δ))",
                          used_if=_used_by("simple"), when=_one),
        "tau": Option(Real(0.0, None, closed="neither"), 1.0, "one x: per-coordinate clip",
                      used_if=_used_by("simple"), when=_one),
        "n_iter": Option(AnyOf(Choice("auto"), Integer(1, 1_000_000)), "auto",
                         "rounds T ('auto': 80 with one x, Alabi et al.; 1600 with several, "
                         "with the public clip rule)"),
        "clip_norm": Option(AnyOf(Choice("auto", "public"), Real(0.0, 1e300, closed="right")),
                            "auto",
                            "several x: per-example gradient clip ('public': min(1, "
                            "1.5·μ·n/((d+1)·T)) from public n or a noisy count; 'auto': that "
                            "rule grown for a widely spread label, from a release of its "
                            "spread with 5% of the budget)",
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
    moment_plan_caveat = (
        "with several regressors DP-GD's default clip (clip_norm='auto') grows with the "
        "released spread (mean absolute deviation) of the response, which its declared mean "
        "and sd fix only for a given shape: for a response piled at a bound (a participation "
        "rate at 100%) the planned sd was up to 2.1x too optimistic on a real design "
        "(docs/accuracy.md §9); a public reference sample (design=DataFrame) gives a better "
        "plan, and clip_norm='public' a clip the moments determine")
    interval = IntervalSupport(
        missing=gd.GD_NO_INTERVAL, fit_statistics=gd.GD_NO_FIT_STATISTICS)

    # several x: Tang et al.'s clipped DP-GD baseline with its fixed T = 100, C_g = 1
    paper_options = MappingProxyType({"algorithm": "clipped", "n_iter": 100, "clip_norm": 1.0})
    harness_engine = "gradient"

    def audit_cases(self) -> tuple[AuditCase, ...]:
        """One x: its replicates (pure, ε = 2), the zCDP variant (ρ = 0.5, tested as the
        Gaussian μ = 1) and the estimator's fit; several x: the core and the estimator's fit
        (T = 5, ε = 1, δ = 1e-6, tested as μ-GDP) on replace-one designs."""
        from dpreg.privacy import GDP, PureDP

        two, gdp = ("p25", "p75"), GDP.from_approx(1.0, 1e-6)
        coef3 = ("intercept", "x1", "x2")
        return (
            AuditCase("dp-gd", "DPGradDescent (pure), τ = 1, T = 80, ε = 2, data in [0, 1]², "
                      "n = 20", PureDP(2.0), "replicates", {"epsilon": 2.0}, output_names=two),
            AuditCase("dp-gd-zcdp", "DPGradDescent (zCDP), ρ = 0.5 (tested as the Gaussian "
                      "μ = 1)", GDP(1.0), "gd-zcdp", {"rho": 0.5}, output_names=two),
            AuditCase("dp-gd-mv", "DP gradient descent (d features), T = 5, ε = 1, δ = 1e-06 "
                      "(μ-GDP)", gdp, "gd-mv-core", pairs="design-replace-one",
                      output_names=coef3),
            AuditCase("dp-gd-mv-auto-clip", "DP gradient descent (d features, add/remove), "
                      "T = 5, clip_norm='auto' from the released noisy count and label spread "
                      "(adaptive composition), ε = 1, δ = 1e-06 (μ-GDP)", gdp, "gd-mv-core",
                      {"clip_norm": "auto", "neighbouring": "add-remove"},
                      pairs="design-add-remove", output_names=coef3),
            AuditCase("DPGradientDescent", "DPGradientDescent.fit (one x), ε = 2, n = 20",
                      PureDP(2.0), "estimator",
                      {"cls": "DPGradientDescent", "params": {"epsilon": 2.0, "n_iter": 20},
                       "features": "simple"},
                      kind="estimator", output_names=("intercept", "slope")),
            AuditCase("DPGradientDescent-mv", "DPGradientDescent.fit (two features), T = 5",
                      gdp, "estimator",
                      {"cls": "DPGradientDescent",
                       "params": {"epsilon": 1.0, "delta": 1e-6, "n_iter": 5}},
                      "design-replace-one", kind="estimator", output_names=coef3))

    def fit_unit_ball(self, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float,
                      rng: Any, params: Mapping[str, Any]) -> Any:
        from dpreg.multivariate.dpgd import dp_gradient_descent

        opts = {k: v for k, v in {**self.paper_options, **params}.items() if k != "algorithm"}
        return dp_gradient_descent(X, y, epsilon=epsilon, delta=delta, rng=rng, **opts)

    def make_estimator(self, *, epsilon: float, delta: float | None,
                       x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
                       fit_intercept: bool, ledger: Any, random_state: Any,
                       options: Mapping[str, Any]) -> Any:
        """The estimator; the one-x algorithm gets the budget parameters of its variant from
        the caller's (ε, δ) (:func:`dpreg.simple.variant_parameters`)."""
        opts = dict(options)
        kwargs: dict[str, Any] = {"epsilon": epsilon, "delta": delta}
        if algorithm_for(opts, len(x_bounds)) == "simple":
            kwargs = gd.variant_parameters(opts.get("variant", "pure"), epsilon, delta)
        return self.estimator_class()(bounds_X=x_bounds, bounds_y=y_bounds,
                                      fit_intercept=fit_intercept, random_state=random_state,
                                      ledger=ledger, **kwargs, **opts)

    def budget(self, *, epsilon: float, delta: float | None, options: Mapping[str, Any],
               n_features: int = 1) -> Any:
        from dpreg._validation import check_delta, check_epsilon
        from dpreg.multivariate.dpgd import DPGD_AUTO_STEPS, dpgd_budget
        from dpreg.privacy import check_neighbouring

        eps = check_epsilon(epsilon)
        if algorithm_for(options, n_features) == "simple":
            variant = options.get("variant", "pure")
            return gd.variant_budget(variant, **gd.variant_parameters(variant, eps, delta))[0]
        if delta is None:
            raise InvalidInputError("delta is required for method 'dp-gd' with several "
                                    "regressors (a value in (0, 1), e.g. 1e-6)")
        # the charge is the whole (ε, δ) budget for any T (dpgd_budget), so the step count of
        # n_iter="auto" -- public, but fixed only once the fit runs -- does not enter it
        steps = rounds(options, "clipped")
        return dpgd_budget(eps, check_delta(delta, allow_zero=False),
                           DPGD_AUTO_STEPS if steps == "auto" else int(steps),
                           str(options.get("accounting", "gdp")),
                           check_neighbouring(options.get("neighbouring", "replace-one")))[2]

    # -- the release pipeline (both algorithms) ------------------------------------------
    def plan(self, *, epsilon: float, delta: float | None, n: int | None,
             x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
             fit_intercept: bool, options: Mapping[str, Any]) -> ReleasePlan:
        """One x (``algorithm`` "simple"/"auto"): :func:`~dpreg.simple.plan_gradient_descent`,
        its budget parameters from the caller's (ε, δ)
        (:func:`~dpreg.simple.variant_parameters`).  Several x (or ``algorithm="clipped"``):
        :func:`~dpreg.multivariate.plan_dp_gradient_descent` on the estimator's public
        scaling (rows into the unit ball, the ones column with ``fit_intercept``; the label
        scaled when ``y_bounds`` are given); n is needed under replace-one only."""
        algo = algorithm_for(options, len(x_bounds))
        if algo == "clipped":
            from dpreg.multivariate import PublicScaling, plan_dp_gradient_descent

            if delta is None:
                raise InvalidInputError("delta is required for method 'dp-gd' with several "
                                        "regressors (a value in (0, 1), e.g. 1e-6)")
            sc = PublicScaling.from_bounds(x_bounds, y_bounds, fit_intercept=fit_intercept,
                                           unit_ball=True)
            opts = {k: options[k] for k in CLIPPED_OPTIONS if k in options}
            opts["n_iter"] = rounds(options, "clipped")
            return plan_dp_gradient_descent(n=n, d=sc.n_columns, epsilon=epsilon, delta=delta,
                                            scaling=sc, **opts)
        if len(x_bounds) != 1:
            raise InvalidInputError(
                "method 'dp-gd' with algorithm='simple' takes exactly one regressor (Alabi et "
                f"al.'s one-x DPGD); got {len(x_bounds)}: use algorithm='clipped' or 'auto'")
        variant = options.get("variant", "pure")
        return gd.plan_gradient_descent(
            variant=variant, **gd.variant_parameters(variant, epsilon, delta),
            x_bounds=x_bounds[0], y_bounds=y_bounds, tau=options.get("tau", 1.0),
            n_iter=simple_rounds(options), n=n)

    @staticmethod
    def _clipped(plan: ReleasePlan) -> bool:
        return plan.options.get("algorithm") == "clipped"

    def statistics(self, X: np.ndarray, y: np.ndarray, plan: ReleasePlan) -> Any:
        """One x: :func:`~dpreg.simple.gradient_descent_statistics` of the one column of
        ``X``; several: :func:`~dpreg.multivariate.dpgd_statistics` (the scaled design)."""
        if self._clipped(plan):
            from dpreg.multivariate import dpgd_statistics

            return dpgd_statistics(X, y, plan)
        return gd.gradient_descent_statistics(np.asarray(X, dtype=np.float64).reshape(-1),
                                              np.asarray(y, dtype=np.float64), plan)

    def release(self, stats: Any, plan: ReleasePlan, rng: Any, *, seeded: bool = False
                ) -> Release:
        """:func:`~dpreg.simple.release_gradient_descent` or
        :func:`~dpreg.multivariate.release_dp_gradient_descent`."""
        if self._clipped(plan):
            from dpreg.multivariate import release_dp_gradient_descent

            return release_dp_gradient_descent(stats, plan, rng, seeded=seeded)
        return gd.release_gradient_descent(stats, plan, rng, seeded=seeded)

    def replicates(self, x: np.ndarray, y: np.ndarray, *, epsilon: float,
                   x_bounds: tuple[float, float], y_bounds: tuple[float, float], trials: int,
                   x_eval: tuple[float, float], rng: Any, options: Mapping[str, Any]
                   ) -> np.ndarray:
        """The pure-ε one-x DPGD, ``trials`` runs at once: the library's plan, statistics and
        release on a batch of ``trials`` rows."""
        plan = _replicate_plan(epsilon, x_bounds, y_bounds, x_eval, options, n=x.size)
        release = gd.release_gradient_descent(
            gd.gradient_descent_statistics(x, y, plan, rows=trials), plan, rng)
        return _predictions(release)

    batched_replicates = True

    def replicates_batch(self, data: Any, *, epsilon: float, x_bounds: tuple[float, float],
                         y_bounds: tuple[float, float], trials: int,
                         x_eval: tuple[float, float], rngs: Any, options: Mapping[str, Any]
                         ) -> list[np.ndarray]:
        """The pure-ε one-x DPGD of many data sets (:func:`_dp_gd_many`); the plan (tau,
        steps) is checked before any draw."""
        plan = _replicate_plan(epsilon, x_bounds, y_bounds, x_eval, options)
        return _dp_gd_many(plan, list(data), trials, list(rngs))

    def group_release(self, *, epsilon: float, x_bounds: tuple[float, float],
                      y_bounds: tuple[float, float], options: Mapping[str, Any],
                      validated: bool, delta: float | None = None) -> Any:
        """One group's DPGD exactly as the single fit calls its core (the one-x algorithm)."""
        variant = options.get("variant", "pure")
        params = gd.variant_parameters(variant, epsilon, delta)
        return lambda x, y, g: gd.gradient_descent(
            x, y, epsilon=params["epsilon"], rho=params["rho"], delta=params["delta"],
            variant=variant, x_bounds=x_bounds, y_bounds=y_bounds,
            tau=options.get("tau", 1.0), n_iter=simple_rounds(options), rng=g)

    def release_groups(self, batch: GroupBatch) -> GroupLines:
        """DPGD for all groups: one public plan for the table
        (:func:`~dpreg.simple.plan_gradient_descent`; the noise does not depend on a group's
        n), the per-round gradient sums of every group by segment sums
        (:func:`~dpreg.simple.group_gradient_statistics`, bit-identical to each group's own)
        and :func:`~dpreg.simple.release_gradient_descent` on the batch, one mechanism call
        per group per round from the group's own row of randomness."""
        opts = dict(batch.options)
        variant = opts.get("variant", "pure")
        plan = gd.plan_gradient_descent(
            variant=variant, **gd.variant_parameters(variant, batch.epsilon, batch.delta),
            x_bounds=batch.x_bounds, y_bounds=batch.y_bounds, tau=opts.get("tau", 1.0),
            n_iter=simple_rounds(opts))
        xs, ys, starts = batch.active_rows()
        g = batch.active.size
        with gd.group_gradient_statistics(xs, ys, starts, plan,
                                          workers=batch.workers) as stats:
            release = gd.release_gradient_descent(stats, plan,
                                                  batch.randomness(batch.active), seeded=True)
        slope, intercept = release.values["slope"], release.values["intercept"]
        preds = {float(xv): intercept + slope * xv for xv in plan.options["x_eval"]}
        return GroupLines(slope, intercept, preds, np.ones(g, dtype=bool), [""] * g)


SPECS = (DPGradientDescentSpec(),)


def _replicate_plan(epsilon: float, x_bounds: tuple[float, float],
                    y_bounds: tuple[float, float], x_eval: tuple[float, float],
                    options: Mapping[str, Any], n: int | None = None) -> ReleasePlan:
    """The plan of the replicates (evaluation: the pure-ε variant)."""
    return gd.plan_gradient_descent(variant="pure", epsilon=epsilon, x_bounds=x_bounds,
                                    y_bounds=y_bounds, tau=options.get("tau", 1.0),
                                    n_iter=simple_rounds(options), x_eval=x_eval, n=n)


def _predictions(release: Release) -> np.ndarray:
    """(runs, 2) predictions at the plan's two ``x_eval`` points (post-processing)."""
    slope, intercept = release.values["slope"], release.values["intercept"]
    return (np.asarray(slope)[:, None] * np.asarray(release.plan.options["x_eval"])
            + np.asarray(intercept)[:, None])


#: data sets per batch of :func:`_dp_gd_many` (its noise: steps x 2·trials integers each)
_GD_BATCH = 512


def _dp_gd_many(plan: ReleasePlan, data: list[tuple[np.ndarray, np.ndarray]], trials: int,
                gens: list[np.random.Generator]) -> list[np.ndarray]:
    """DPGD's replicates of G data sets under one public ``plan``, data set g what
    ``replicates(*data[g], ..., rng=gens[g])`` returns: batches of up to ``_GD_BATCH`` data
    sets of similar sizes (sorted by n, so that a batch holds few distinct n) run the
    ``steps`` rounds together (:func:`_batch_statistics`, one lane of noise per data set)."""
    from dpreg.mechanisms.batch import RowRandomness

    out: list[np.ndarray] = [np.empty((trials, 2)) for _ in data]
    order = sorted(range(len(data)), key=lambda k: int(np.asarray(data[k][0]).size))
    for b0 in range(0, len(order), _GD_BATCH):
        idx = order[b0:b0 + _GD_BATCH]
        release = gd.release_gradient_descent(
            _batch_statistics(plan, [data[i] for i in idx], trials), plan,
            RowRandomness.seeded([gens[i] for i in idx]), seeded=True)
        preds = _predictions(release).reshape(len(idx), trials, 2)
        for row, i in enumerate(idx):
            out[i][:] = preds[row]
    return out


def _batch_statistics(plan: ReleasePlan, data: list[tuple[np.ndarray, np.ndarray]],
                      trials: int) -> gd.GradientSums:
    """The statistics step of G data sets × ``trials`` replicates each (rows g·trials ..
    (g + 1)·trials − 1: data set g; one lane per data set): the same element-wise operations
    as :func:`~dpreg.simple.gradient_descent_statistics` (the library's ``data_gradient``),
    its per-row sums over n taken for the data sets of one size n together -- bit-identical
    to each data set's own statistics."""
    g = len(data)
    tau = plan.options["tau"]
    sizes: dict[int, list[int]] = {}
    for k, (x, _) in enumerate(data):
        sizes.setdefault(int(np.asarray(x).size), []).append(k)
    parts = []
    for members in sizes.values():
        uv = [gd.normalised_data(*data[k], plan) for k in members]
        u = np.stack([p[0] for p in uv])[:, None, :]  # (G_n, 1, n)
        v = np.stack([p[1] for p in uv])[:, None, :]
        parts.append((np.asarray(members), 0.75 - u, u - 0.25, v))

    def sums(p: np.ndarray) -> np.ndarray:
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

    return gd.GradientSums(sums, rows=g * trials, lanes=g)
