"""``NoisyStats``: DPSuffStats (Alabi et al. 2022, Alg. 1) as a scikit-learn estimator
(a thin layer over :func:`dpreg.simple.noisy_stats`; ε-DP, replace-one, n public)."""

from __future__ import annotations

from typing import Any

from dpreg._validation import check_bounds, check_int
from dpreg.exceptions import InvalidInputError
from dpreg.linear_model._base import (
    _require_epsilon,
    _SimpleRegressor,
    resolve_bounds_X,
    resolve_inference,
)
from dpreg.simple import (
    interval_refusal,
    noisy_stats,
    noisy_stats_from_statistics,
    noisy_stats_source_statistics,
)

__all__ = ["NoisyStats"]


class NoisyStats(_SimpleRegressor):
    """DPSuffStats (Alabi et al. 2022, Alg. 1): OLS from Laplace-noised sufficient statistics.

    ε-DP, replace-one neighbours, n public.  See :func:`dpreg.simple.noisy_stats`.

    Parameters
    ----------
    epsilon:
        Privacy budget (required at fit time).
    bounds_X, bounds_y:
        Public (lo, hi) bounds; data are clipped to them.
    fit_intercept:
        Must be True.
    inference:
        ``"auto"`` (default): ``True`` whenever the release can carry an interval -- n >= 3
        rows and the public inputs do not already refuse it
        (:func:`dpreg.simple._noisy_stats.interval_refusal`: the noise on nvar at most 5% of
        the largest nvar the bounds allow, roughly n·ε >= 378; n is public) -- else
        ``False``: the plain release, whose ``conf_int`` raises
        :class:`~dpreg.inference.NoUncertaintyError` with the reason and what to change
        (decided before anything is charged; where an interval is asked for explicitly --
        :func:`dpreg.regress` / :func:`dpreg.api.fit_arrays` with ``ci_alpha=``, CLI ``--ci``
        -- that refusal is raised instead, before any noise is drawn or budget charged).
        Between 2.5% and 5% the release itself decides (its noisy nvar at least 3 × its noise
        sd): a release it refuses is returned as released, and its ``conf_int`` raises with
        the reason.
        ``True``: also release noisy nvar(y) and x̄ from the same
        ε (split 0.3/0.3/0.3/0.05/0.05 instead of thirds) so that ``results_`` carries DP-aware
        standard errors, a parametric-bootstrap ``conf_int``, ``rsquared`` and
        ``get_prediction`` intervals (post-processing; Ferrando, Wang & Sheldon 2022); the
        line's Laplace scales grow by 10/9 (accuracy cost: docs/uncertainty.md, "Defaults").
        With ``True`` where the rule refuses, the statistics are released as asked but
        ``conf_int`` refuses (same reason).  ``False``: the paper's release, no interval
        (``results_.uncertainty`` says why).
    n_boot:
        Bootstrap replicates for the interval (2000).
    random_state:
        ``None`` (fresh entropy), a seed or a Generator.
    ledger:
        Optional :class:`dpreg.Ledger` charged at fit time.
    raise_on_failure:
        ``True`` (default): a ⊥ release (the mechanism's failure output) raises
        :class:`~dpreg.exceptions.MechanismFailure` from ``fit``.  ``False``: ``fit`` returns
        the estimator with ``results_.failed`` True and ``results_.reason`` (``predict`` then
        raises ``MechanismFailure``).  Either way the budget stays charged: ⊥ is itself a
        private output (docs/architecture.md, "Failure (⊥) policy").
    """

    def __init__(self, *, epsilon: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, fit_intercept: bool = True, inference: bool | str = "auto",
                 n_boot: int = 2000, random_state: Any = None, ledger: Any = None,
                 raise_on_failure: bool = True) -> None:
        self.epsilon = epsilon
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.inference = inference
        self.n_boot = n_boot
        self.random_state = random_state
        self.ledger = ledger
        self.raise_on_failure = raise_on_failure

    def _fit(self, X: Any, y: Any) -> NoisyStats:
        eps = _require_epsilon(self.epsilon)
        x1, ya, bx, by = self._prepare(X, y)
        check_int(self.n_boot, "n_boot", minimum=50, maximum=10_000_000)
        # "auto": the interval statistics whenever n and the public inputs allow an interval
        why = self._public_refusal(x1.size, eps, bx)
        infer = resolve_inference(self.inference, supported=x1.size >= 3 and not why)
        res = noisy_stats(x1, ya, epsilon=eps, x_bounds=bx, y_bounds=by, release_stats=True,
                          inference=infer, ledger=self.ledger, rng=self.random_state)
        self._finish(X, res, n_boot=self.n_boot)
        return self._refused_plain(why, infer)

    def _fit_source(self, source: Any, x_cols: list[str], y_col: str) -> NoisyStats:
        """Fit from a :class:`~dpreg._source.DataSource` (a Parquet/CSV file streamed in
        chunks, or a Spark DataFrame summed on its executors): one pass of the clipped
        moments (:func:`~dpreg.simple._noisy_stats.noisy_stats_source_statistics`), then the
        same release as :meth:`fit` (:func:`~dpreg.simple._noisy_stats.noisy_stats_from_statistics`)."""
        eps = _require_epsilon(self.epsilon)
        if self.fit_intercept is not True:
            raise InvalidInputError(
                "fit_intercept must be True for NoisyStats (the simple-regression mechanisms "
                f"always fit an intercept); got {self.fit_intercept!r}")
        if len(x_cols) != 1:
            raise InvalidInputError(
                f"X must have exactly one column for NoisyStats (simple regression); got "
                f"{len(x_cols)} columns -- use a multivariate method (adassp, covariance-ols)")
        bx = resolve_bounds_X(self.bounds_X, 1)[0]
        if self.bounds_y is None:
            raise InvalidInputError("bounds_y is required: give public (lo, hi) bounds for y")
        by = check_bounds(self.bounds_y, "bounds_y")
        check_int(self.n_boot, "n_boot", minimum=50, maximum=10_000_000)
        resolve_inference(self.inference, supported=True)  # a bad value fails before the pass
        stats, nvar_y = noisy_stats_source_statistics(source, x_cols[0], y_col, bx, by)
        # "auto": the interval statistics whenever n and the public inputs allow an interval
        n = int(stats.n[0])
        why = self._public_refusal(n, eps, bx)
        infer = resolve_inference(self.inference, supported=n >= 3 and not why)
        res = noisy_stats_from_statistics(
            lambda xb, yb, inf: (stats, nvar_y if inf else None), epsilon=eps, x_bounds=bx,
            y_bounds=by, release_stats=True, inference=infer, ledger=self.ledger,
            rng=self.random_state)
        self._store(res.to_regression_results(x_name=x_cols[0], y_name="y",
                                              n_boot=self.n_boot))
        return self._refused_plain(why, infer)

    #: set by :func:`dpreg._dispatch.fit` / :func:`~dpreg._dispatch.fit_source` when the
    #: caller asked for an interval explicitly (``ci_alpha=``, CLI ``--ci``): a refusal of the
    #: interval rule from public inputs is then raised before anything is charged (one by the
    #: release is returned with the release; not a parameter: the
    #: estimator's own interface is ``inference=``)
    _interval_required: bool = False

    def _public_refusal(self, n: int, epsilon: float, x_bounds: tuple[float, float]) -> str:
        """The interval rule's reason at the public (n, ε, x bounds), or "" (n < 3 has no
        interval: the n >= 3 check says so; "" also where the release will decide).  Raised as
        :class:`~dpreg.inference.NoUncertaintyError` when an interval was asked for explicitly
        -- before the release, so that nothing is charged for an interval that cannot be
        given; a refusal by the release itself is the released result's (its ``conf_int``
        says why)."""
        why = interval_refusal(n, epsilon, x_bounds) if n >= 3 else ""
        if why and self._interval_required and self.inference is not False:
            from dpreg.inference import NoUncertaintyError

            raise NoUncertaintyError(
                "noisy-stats: the interval asked for (ci_alpha=...) is refused before anything is "
                "charged (nothing was released, no budget spent): "
                + why.removeprefix("none: refused before release -- "))
        return why

    def _refused_plain(self, why: str, infer: bool) -> NoisyStats:
        """After a plain release that ``inference="auto"`` chose because the public interval
        rule refused: the result says why there is no interval (instead of "ask for
        inference"), so ``conf_int`` raises with the reason and what to change."""
        res = self.results_
        auto = isinstance(self.inference, str)  # "auto" (validated); an explicit False keeps
        if why and auto and not infer and not res.failed:  # its own "ask for inference" text
            extra = {**res.extra, "dp_ci_refused": True, "dp_ci_reliable": False}
            self._store(res.replace(uncertainty=why, extra=extra))
        return self
