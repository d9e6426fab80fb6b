"""``AdaSSP`` (Wang 2018) as a scikit-learn estimator: rows scaled to [−1, 1]^d plus the ones
column, so ‖X‖ = √(d+1) and ‖Y‖ = 1 on the scaled label (a thin layer over
:func:`dpreg.multivariate.adassp`)."""

from __future__ import annotations

from typing import Any

from dpreg._source import ArraySource
from dpreg.linear_model._base import _MultivariateBase, resolve_inference
from dpreg.multivariate.ssp import EIGEN_FLOOR_SCALE, SSPStatistics, adassp, ssp_statistics

__all__ = ["AdaSSP"]


class AdaSSP(_MultivariateBase):
    """AdaSSP (Wang 2018); (ε, δ)-DP for any ε (exact μ-GDP calibration) or Wang's constants.

    Parameters
    ----------
    epsilon, delta:
        Privacy target; δ > 0 required.  Any ε with the default calibration; with
        ``calibration="wang"`` ε <= :func:`dpreg.multivariate.adassp_max_epsilon` (≈21.7 at
        δ = 1e−6), the range where Wang's constants hold.
    bounds_X, bounds_y:
        Required public bounds: one (lo, hi) for all features or one per feature, and (lo, hi)
        for the response.  Features and label are clamped to them and scaled to [−1, 1], which
        gives the public norm bounds ‖X‖ = √(d + 1) (with the ones column) and ‖Y‖ = 1.
    fit_intercept:
        Add a public ones column (default True).
    neighbouring:
        ``"add-remove"`` (default; Wang's setting) or ``"replace-one"``.
    failure_prob:
        Wang's ρ (0.05).
    calibration:
        ``"gdp"`` (default): the largest μ with μ-GDP ⇒ (ε, δ)-DP on the exact Gaussian curve,
        μ² split over the Gaussian releases (halves of XᵀX and Xᵀy with the default
        ``lambda_rule``; thirds of λ_min, XᵀX, Xᵀy with ``"wang"``), σ_i = Δ_i/μ_i; the
        ledger is charged the composed μ-GDP.  ``"wang"``: Wang's constants
        c = √ln(6/δ)/(ε/3) (ρ-zCDP; refused above the maximum ε).
        :func:`dpreg.multivariate.adassp_budget` gives the split for either.
    inference:
        ``"auto"`` (default): ``True`` whenever the release can carry an interval (an intercept,
        or replace-one neighbours), else ``False``.  ``True``: also release a noisy yᵀy from
        the same budget (10% of it: 0.45/0.45/0.1 over XᵀX, Xᵀy, yᵀy, or 0.3/0.3/0.3/0.1 with
        Wang's λ_min) so that ``results_`` carries DP-aware
        standard errors, a parametric-bootstrap ``conf_int``, ``rsquared`` and
        ``get_prediction`` intervals (post-processing; Ferrando, Wang & Sheldon 2022); the
        original releases get √(10/9) ≈ 1.054× more noise (accuracy cost:
        docs/uncertainty.md, "Defaults").  Under add/remove it needs ``fit_intercept=True``
        (the noisy count of the ones column estimates n).  ``False``: point estimate only, as
        in Wang 2018.
    n_boot:
        Bootstrap replicates for the interval (2000).
    lambda_rule, floor_scale:
        ``"eigen-floor"`` (default): no λ_min release -- XᵀX and Xᵀy get the whole budget --
        and the eigenvalues of the noisy XᵀX below ``floor_scale``·σ_XX·√(d+1) (3 by
        default) are raised to it (post-processing; same charge); more accurate than Wang's
        ridge at n of a few hundred to a few thousand rows (docs/accuracy.md);
        :func:`dpreg.multivariate.ssp_solve`.  ``"wang"``: Wang's ridge λ from a released
        λ_min (a third of the budget; Wang 2018's algorithm).
    random_state, ledger:
        Randomness (None: fresh entropy) and an optional :class:`~dpreg.Ledger`.
    raise_on_failure:
        ``True`` (default): a ⊥ release (the mechanism's failure output) raises
        :class:`~dpreg.exceptions.MechanismFailure` from ``fit``.  ``False``: ``fit`` returns
        the estimator with ``results_.failed`` True and ``results_.reason`` (``predict`` then
        raises ``MechanismFailure``).  Either way the budget stays charged: ⊥ is itself a
        private output (docs/architecture.md, "Failure (⊥) policy").
    """


    def __init__(self, *, epsilon: float | None = None, delta: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, fit_intercept: bool = True,
                 neighbouring: str = "add-remove", failure_prob: float = 0.05,
                 inference: bool | str = "auto", n_boot: int = 2000,
                 random_state: Any = None, ledger: Any = None,
                 calibration: str = "gdp", lambda_rule: str = "eigen-floor",
                 floor_scale: float = EIGEN_FLOOR_SCALE,
                 raise_on_failure: bool = True) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.neighbouring = neighbouring
        self.failure_prob = failure_prob
        self.inference = inference
        self.n_boot = n_boot
        self.random_state = random_state
        self.ledger = ledger
        self.raise_on_failure = raise_on_failure
        self.calibration = calibration
        self.lambda_rule = lambda_rule
        self.floor_scale = floor_scale

    def _fit(self, X: Any, y: Any) -> AdaSSP:
        Xa, ya, scaling, names = self._prepare(X, y)
        assert scaling is not None and scaling.label_bound is not None
        # the statistics step: scale, clip and accumulate in chunks (no copy of the design)
        src = ArraySource([Xa, ya], [f"c{j}" for j in range(Xa.shape[1] + 1)])
        stats = ssp_statistics(src, x_norm_bound=scaling.row_norm_bound,
                               y_bound=scaling.label_bound, scaling=scaling, checked=True)
        return self._release(stats, scaling, names)

    def _fit_source(self, source: Any, x_cols: list[str], y_col: str) -> AdaSSP:
        """Fit from a :class:`~dpreg._source.DataSource` (a Parquet/CSV file streamed in
        chunks, or a Spark DataFrame aggregated on its executors): the same statistics step
        and the same release as :meth:`fit`."""
        scaling, names = self._prepare_source(source, x_cols, y_col)
        assert scaling.label_bound is not None
        stats = ssp_statistics(source, columns=[*x_cols, y_col],
                               x_norm_bound=scaling.row_norm_bound,
                               y_bound=scaling.label_bound, scaling=scaling)
        return self._release(stats, scaling, names)

    def _release(self, stats: SSPStatistics, scaling: Any, names: list[str]) -> AdaSSP:
        # "auto": the yᵀy release whenever n is public or estimable from the ones column
        infer = resolve_inference(self.inference, supported=scaling.fit_intercept
                                  or self._n_is_public())
        core = adassp(stats, None, x_norm_bound=scaling.row_norm_bound,
                      y_bound=scaling.label_bound, epsilon=self._required_epsilon(),
                      delta=self._required_delta(),
                      neighbouring=self.neighbouring, failure_prob=self.failure_prob,
                      inference=infer, n_boot=self.n_boot,
                      calibration=self.calibration,
                      lambda_rule=self.lambda_rule, floor_scale=self.floor_scale,
                      count_index=0 if scaling.fit_intercept else None,
                      rng=self.random_state, ledger=self.ledger)
        self._finish(core, scaling, names, scaling.fit_intercept)
        return self
