"""``CovarianceOLS``: an Analyze Gauss SSCP release (:func:`dpreg.covariance.release_sscp`)
followed by OLS on it, as a scikit-learn estimator (``release_`` keeps the release for further
analyses at no privacy cost)."""

from __future__ import annotations

import keyword
from typing import Any

import numpy as np

from dpreg._source import ArraySource
from dpreg._validation import check_bounds, check_choice, check_int
from dpreg.covariance import SSCPRelease, release_sscp
from dpreg.inference.results import RegressionResults
from dpreg.inference.uncertainty import bootstrap_rng, reparametrised_kwargs
from dpreg.linear_model._base import _MultivariateBase, resolve_bounds_X

__all__ = ["CovarianceOLS"]


def _release_names(names: list[str]) -> list[str]:
    """Column names for the SSCP release of [X, y]: the feature names and ``y`` when they are
    distinct Python identifiers (formula-safe), otherwise x0..x{d-1} and y."""
    resp = "y"
    ok = (len(set(names)) == len(names) and "intercept" not in names and resp not in names
          and all(n.isidentifier() and not keyword.iskeyword(n) for n in names))
    cols = list(names) if ok else [f"x{j}" for j in range(len(names))]
    return cols + [resp]


class CovarianceOLS(_MultivariateBase):
    """OLS from a DP SSCP release (Analyze Gauss, Bain et al.); (ε, δ)-DP.

    ``results_`` has coefficients, plug-in standard errors, t and p-values (labelled as
    plug-in in ``results_.uncertainty``); ``release_`` is the :class:`~dpreg.SSCPRelease`,
    from which further regressions on the same columns cost no budget.

    Parameters
    ----------
    epsilon, delta:
        Privacy target (δ > 0).
    bounds_X, bounds_y:
        Required public bounds (one pair for all features or one per feature; the response).
    fit_intercept:
        Fit an intercept (the release always contains the intercept column).
    neighbouring:
        ``"add-remove"`` (default) or ``"replace-one"``.
    calibration:
        ``"analytic"`` (default) or ``"classical"`` (ε < 1).
    se:
        ``"dp"`` (default): DP-aware standard errors and a parametric-bootstrap ``conf_int``
        (post-processing of the release; Ferrando, Wang & Sheldon 2022); ``"plugin"``: OLS
        standard errors from the noisy matrix, labelled as ignoring the privacy noise.
    n_boot:
        Bootstrap replicates for the interval (2000).  The bootstrap is lazy: ``fit`` computes
        the release, the coefficients and the analytic DP-aware standard errors only; the
        ``n_boot`` replicates are simulated when an interval is first requested
        (``results_.conf_int()``, ``summary()`` with intervals) and reused afterwards.  Their
        seed is fixed at fit time (a child of ``random_state`` tagged for the bootstrap), so
        the same ``random_state`` gives the same intervals whenever they are computed.
    random_state, ledger:
        As for :class:`AdaSSP`.
    raise_on_failure:
        ``True`` (default): a ⊥ release (the mechanism's failure output) raises
        :class:`~dpreg.exceptions.MechanismFailure` from ``fit``.  ``False``: ``fit`` returns
        the estimator with ``results_.failed`` True and ``results_.reason`` (``predict`` then
        raises ``MechanismFailure``).  Either way the budget stays charged: ⊥ is itself a
        private output (docs/architecture.md, "Failure (⊥) policy").
    """


    def __init__(self, *, epsilon: float | None = None, delta: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, fit_intercept: bool = True,
                 neighbouring: str = "add-remove", calibration: str = "analytic",
                 se: str = "dp", n_boot: int = 2000,
                 random_state: Any = None, ledger: Any = None,
                 raise_on_failure: bool = True) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.neighbouring = neighbouring
        self.calibration = calibration
        self.se = se
        self.n_boot = n_boot
        self.random_state = random_state
        self.ledger = ledger
        self.raise_on_failure = raise_on_failure

    def _fit(self, X: Any, y: Any) -> CovarianceOLS:
        Xa, ya, scaling, names = self._prepare(X, y)
        assert scaling is not None
        cols = _release_names(names)
        # the columns side by side, read chunk by chunk (no copy of [X, y])
        return self._release(ArraySource([Xa, ya], cols, validated=True), cols, names,
                             scaling.fit_intercept)

    def _fit_source(self, source: Any, x_cols: list[str], y_col: str) -> CovarianceOLS:
        """Fit from a :class:`~dpreg._source.DataSource` (a Parquet/CSV file streamed in
        chunks, or a Spark DataFrame aggregated on its executors): the same release."""
        scaling, names = self._prepare_source(source, x_cols, y_col)
        cols = _release_names(names)
        return self._release(source.select([*x_cols, y_col], cols), cols, names,
                             scaling.fit_intercept)

    def _release(self, data: Any, cols: list[str], names: list[str], fit_intercept: bool
                 ) -> CovarianceOLS:
        d = len(names)
        bx = resolve_bounds_X(self.bounds_X, d)
        by = check_bounds(self.bounds_y, "bounds_y")
        check_choice(self.se, "se", ("dp", "plugin", "noise-aware"))
        check_int(self.n_boot, "n_boot", minimum=50, maximum=10_000_000)
        release: SSCPRelease = release_sscp(
            data, columns=cols, bounds=list(bx) + [by], epsilon=self._required_epsilon(),
            delta=self._required_delta(), random_state=self.random_state, neighbouring=self.neighbouring,
            calibration=self.calibration, ledger=self.ledger)
        self.release_ = release
        rhs = " + ".join(cols[:-1]) + ("" if fit_intercept else " - 1")
        res = release.regress(f"{cols[-1]} ~ {rhs}", se=self.se, n_sim=self.n_boot,
                              random_state=bootstrap_rng(self.random_state))
        out_names = (["intercept"] if fit_intercept else []) + names
        if res.failed:
            final = RegressionResults(np.zeros(len(out_names)), names=out_names,
                                      privacy=res.privacy, method="covariance-ols",
                                      failed=True, reason=res.reason)
        else:
            kw: dict[str, Any] = {"uncertainty": res.uncertainty, "ci_method": res.ci_method,
                                  "bse": res.bse.to_numpy() if res.has_bse else None}
            if res.bootstrap is not None:
                kw = reparametrised_kwargs(res, lambda th: th, out_names)
                kw.pop("extra_uncertainty")  # already in res.extra
            final = RegressionResults(
                res.params.to_numpy(), names=out_names, privacy=res.privacy,
                method="covariance-ols", df_resid=res.df_resid,
                nobs=res.nobs, dep_var="y", extra=res.extra, **kw)
        self._store(final)
        return self
