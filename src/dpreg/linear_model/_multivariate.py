"""scikit-learn estimators for multivariate DP regression.

All five follow one pattern: ``__init__`` stores the parameters verbatim; ``fit`` validates the
data and every parameter, rescales features (and the label, where bounds are given) with the
PUBLIC bounds (:class:`~dpreg.multivariate._common.PublicScaling`; an intercept is a leading
column of ones), calls the functional core -- which charges the optional ledger after its own
validation and before any noise -- and maps the coefficients back to original units.

* :class:`AdaSSP` -- rows scaled to [−1, 1]^d plus the ones column, so ‖X‖ = √(d+1) and
  ‖Y‖ = 1 on the scaled label.
* :class:`BoostedAdaSSP` -- rows scaled into the unit ball (B_x = 1, the paper's fixed value).
* :class:`TukeyEM` -- no bounds needed; when given, data are clamped and scaled with them.
* :class:`ClippedDPGradientDescent` -- rows scaled into the unit ball; per-example gradients clipped.
* :class:`CovarianceOLS` -- an Analyze Gauss SSCP release followed by OLS on it
  (``release_`` keeps the release for further analyses at no privacy cost).
"""

from __future__ import annotations

import keyword
from typing import Any

import numpy as np

from dpreg._validation import check_bounds, check_int
from dpreg.covariance import SSCPRelease, release_sscp
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import RegressionResults
from dpreg.inference.uncertainty import bootstrap_rng, no_ci_text, reparametrised_kwargs
from dpreg.linear_model._base import DPRegressorBase, feature_names, resolve_bounds_X
from dpreg.multivariate._common import PublicScaling, check_choice
from dpreg.multivariate.boosted import boosted_adassp
from dpreg.multivariate.dpgd import dp_gradient_descent
from dpreg.multivariate.ssp import adassp
from dpreg.multivariate.tukey import tukey_em

__all__ = ["AdaSSP", "BoostedAdaSSP", "TukeyEM", "ClippedDPGradientDescent", "CovarianceOLS"]


def _check_fit_intercept(value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidInputError(f"fit_intercept must be True or False; got {value!r}")
    return bool(value)


def _release_names(names: list[str]) -> list[str]:
    """Column names for the SSCP release of [X, y]: the feature names and ``y`` when they are
    distinct Python identifiers (formula-safe), otherwise x0..x{d-1} and y."""
    resp = "y"
    ok = (len(set(names)) == len(names) and "intercept" not in names and resp not in names
          and all(n.isidentifier() and not keyword.iskeyword(n) for n in names))
    cols = list(names) if ok else [f"x{j}" for j in range(len(names))]
    return cols + [resp]


class _MultivariateBase(DPRegressorBase):
    """Shared fit plumbing."""

    _needs_y_bounds = True
    _unit_ball = False


    def _prepare(self, X: Any, y: Any, *, require_x_bounds: bool = True
                 ) -> tuple[np.ndarray, np.ndarray, PublicScaling | None, list[str]]:
        Xa, ya = self._validate(X, y)
        n, d = Xa.shape
        fit_intercept = _check_fit_intercept(self.fit_intercept)  # type: ignore[attr-defined]
        p = d + (1 if fit_intercept else 0)
        # n <= p is refused only where n is public (replace-one neighbours): under add/remove
        # n is private, and the release itself handles a short (or constant-column) design --
        # the noise and the ridge keep it well defined -- so no data-dependent check runs.
        # A constant column is never refused: a declared categorical level with no rows gives
        # a legitimate all-zero dummy, and saying "column c is constant" would reveal a fact
        # about the private data (see docs/threat-model.md).
        if self._n_is_public() and n <= p:
            raise InvalidInputError(
                f"X must have more rows than model parameters ({p}: {d} features"
                f"{' + intercept' if fit_intercept else ''}) under replace-one neighbours "
                "(n public); DP regression needs n > p"
            )
        names = feature_names(X, d)
        bounds_X = self.bounds_X  # type: ignore[attr-defined]
        bounds_y = self.bounds_y  # type: ignore[attr-defined]
        if bounds_X is None and not require_x_bounds:
            if bounds_y is not None:
                raise InvalidInputError(
                    "bounds_X must be given together with bounds_y (or leave both None): the "
                    "public scaling needs the feature bounds; got bounds_X=None"
                )
            return Xa, ya, None, names
        bx = resolve_bounds_X(bounds_X, d)
        if bounds_y is None and self._needs_y_bounds:
            raise InvalidInputError(
                "bounds_y is required: give public (lo, hi) bounds for the response (from "
                "domain knowledge, never from the data), e.g. bounds_y=(0, 100)"
            )
        if bounds_y is not None:
            check_bounds(bounds_y, "bounds_y")
        scaling = PublicScaling.from_bounds(bx, bounds_y, fit_intercept=fit_intercept,
                                            unit_ball=self._unit_ball)
        return Xa, ya, scaling, names

    def _finish(self, core: RegressionResults, scaling: PublicScaling | None,
                names: list[str], fit_intercept: bool) -> DPRegressorBase:
        out_names = (["intercept"] if fit_intercept else []) + names
        extra = dict(core.extra)
        if core.failed:
            res = RegressionResults(np.zeros(len(out_names)), names=out_names,
                                    privacy=core.privacy, method=core.method, failed=True,
                                    reason=core.reason, nobs=core.nobs, extra=extra)
            return self._store(res)
        theta = core.params.to_numpy()
        if scaling is not None:
            intercept, coef = scaling.to_original(theta)
            extra["scaling"] = {"column_factor": scaling.column_factor,
                                "label_scaled": scaling.y_bounds is not None}
        else:
            intercept, coef = (float(theta[0]), theta[1:]) if fit_intercept else (0.0, theta)
        params = np.concatenate([[intercept], coef]) if fit_intercept else np.asarray(coef)
        if core.bootstrap is not None:  # DP-aware interval: report it in original units
            def to_params(th: np.ndarray) -> np.ndarray:
                if scaling is not None:
                    b0, bj = scaling.to_original(th)
                else:
                    b0, bj = (float(th[0]), th[1:]) if fit_intercept else (0.0, th)
                return np.concatenate([[b0], bj]) if fit_intercept else np.asarray(bj)

            kw = reparametrised_kwargs(core, to_params, out_names)
            extra.update(kw.pop("extra_uncertainty"))
        else:
            kw = {"uncertainty": core.uncertainty if core.has_bse else no_ci_text(core.method),
                  "ci_method": None if core.has_bse else "none"}
        res = RegressionResults(params, names=out_names, privacy=core.privacy,
                                method=core.method, nobs=core.nobs, extra=extra, **kw)
        return self._store(res)

    @staticmethod
    def _design(Xa: np.ndarray, scaling: PublicScaling | None, fit_intercept: bool
                ) -> np.ndarray:
        if scaling is not None:
            return scaling.design(Xa)
        return np.column_stack([np.ones(Xa.shape[0]), Xa]) if fit_intercept else Xa


class AdaSSP(_MultivariateBase):
    """AdaSSP (Wang 2018) with Wang's constants; ρ-zCDP ⇒ (ε, δ)-DP.

    Parameters
    ----------
    epsilon, delta:
        Privacy target; δ > 0 required and ε <= :func:`dpreg.multivariate.adassp_max_epsilon`
        (≈21.7 at δ = 1e−6), the range where Wang's constants hold.
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
    inference:
        ``True``: also release a noisy yᵀy from the same budget (ρ split 0.3/0.3/0.3/0.1) so
        that ``results_`` carries DP-aware standard errors and a parametric-bootstrap
        ``conf_int`` (post-processing; Ferrando, Wang & Sheldon 2022).  Under add/remove it
        needs ``fit_intercept=True`` (the noisy count of the ones column estimates n).
        ``False`` (default): point estimate only, as in Wang 2018.
    n_boot:
        Bootstrap replicates for the interval (2000).
    random_state, ledger:
        Randomness (None: fresh entropy) and an optional :class:`~dpreg.Ledger`.
    """


    def __init__(self, *, epsilon: float | None = None, delta: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, fit_intercept: bool = True,
                 neighbouring: str = "add-remove", failure_prob: float = 0.05,
                 inference: bool = False, n_boot: int = 2000,
                 random_state: Any = None, ledger: Any = None) -> None:
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

    def fit(self, X: Any, y: Any) -> AdaSSP:
        Xa, ya, scaling, names = self._prepare(X, y)
        assert scaling is not None and scaling.label_bound is not None
        core = adassp(scaling.design(Xa), scaling.label(ya), x_norm_bound=scaling.row_norm_bound,
                      y_bound=scaling.label_bound, epsilon=self._required_epsilon(),
                      delta=self._required_delta(),
                      neighbouring=self.neighbouring, failure_prob=self.failure_prob,
                      inference=self.inference, n_boot=self.n_boot,
                      count_index=0 if scaling.fit_intercept else None,
                      rng=self.random_state, ledger=self.ledger)
        self._finish(core, scaling, names, scaling.fit_intercept)
        return self


class BoostedAdaSSP(_MultivariateBase):
    """BoostedAdaSSP (Tang et al. 2023): T rounds of AdaSSP on clipped residuals; μ-GDP.

    Parameters
    ----------
    epsilon, delta:
        Privacy target (δ > 0), converted to μ-GDP on the exact curve.
    bounds_X:
        Required public feature bounds; rows are scaled into the unit ball with them (so the
        paper's fixed row clip B_x = 1 loses nothing).
    bounds_y:
        Optional public response bounds.  When given, y is clamped and scaled to [−1, 1] and τ is
        in those units; otherwise y is used as is and τ is in the units of y.
    fit_intercept:
        Add a public ones column (default True).
    n_rounds, tau:
        T (100) and the residual clip τ (1): the paper's fixed hyperparameters.
    x_norm_bound:
        B_x, the row clip applied after scaling (1).
    split:
        μ₁ : μ₂ : μ₃ for XᵀX : all Xᵀg rounds : λ_min -- ``"author"`` (default; 1 : √T : 1,
        what the paper's results used; much more accurate than equal on real data), ``"equal"``
        (1 : 1 : 1) or a triple.
    learning_rate, schedule:
        η_t = learning_rate × {1, 1/t, 1/√t} (``"constant"``, ``"1/t"``, ``"1/sqrt(t)"``).
    lambda_rule:
        ``"wang"`` (ridge λ >= 0; default) or ``"literal"`` (Alg. 1 as printed).
    neighbouring, failure_prob, random_state, ledger:
        As for :class:`AdaSSP`.
    """

    _needs_y_bounds = False
    _unit_ball = True

    def __init__(self, *, epsilon: float | None = None, delta: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, fit_intercept: bool = True, n_rounds: int = 100,
                 tau: float = 1.0, x_norm_bound: float = 1.0, split: Any = "author",
                 learning_rate: float = 1.0, schedule: str = "constant",
                 lambda_rule: str = "wang", neighbouring: str = "add-remove",
                 failure_prob: float = 0.05, random_state: Any = None,
                 ledger: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.n_rounds = n_rounds
        self.tau = tau
        self.x_norm_bound = x_norm_bound
        self.split = split
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.lambda_rule = lambda_rule
        self.neighbouring = neighbouring
        self.failure_prob = failure_prob
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X: Any, y: Any) -> BoostedAdaSSP:
        Xa, ya, scaling, names = self._prepare(X, y)
        assert scaling is not None
        core = boosted_adassp(
            scaling.design(Xa), scaling.label(ya), epsilon=self._required_epsilon(),
            delta=self._required_delta(),
            x_norm_bound=self.x_norm_bound, tau=self.tau, n_rounds=self.n_rounds,
            split=self.split, learning_rate=self.learning_rate, schedule=self.schedule,
            lambda_rule=self.lambda_rule, neighbouring=self.neighbouring,
            failure_prob=self.failure_prob, rng=self.random_state, ledger=self.ledger)
        core.extra.pop("xtg_releases", None)
        self._finish(core, scaling, names, scaling.fit_intercept)
        return self


class TukeyEM(_MultivariateBase):
    """TukeyEM (Amin et al. 2023): private Tukey-depth aggregation of OLS models; (ε, δ)-DP.

    The guarantee is for replace-one neighbours with n public (see ``docs/privacy/tukeyem.md``).
    If the propose-test-release check fails, ``fit`` raises
    :class:`~dpreg.exceptions.MechanismFailure` (the budget stays spent).

    Parameters
    ----------
    epsilon, delta:
        Privacy target (required; δ > 0, the paper's experiments use δ = 1e−5).
    n_models:
        m >= 8 models on disjoint random batches of ⌊n/m⌋ rows (needs n >= m·(d + 1) with an
        intercept).  Guidance: TukeyEM works when n is large compared with d (n >= ~1000·d)
        with m around 1000 (default); with too few models PTR fails, with too many each model
        is fitted on too few rows.
    bounds_X, bounds_y:
        Optional public bounds; when given, data are clamped and scaled with them (the
        method itself needs no bounds).
    fit_intercept, random_state, ledger:
        As for :class:`AdaSSP`.
    """

    _needs_y_bounds = False

    def __init__(self, *, epsilon: float | None = None, delta: float | None = None, n_models: int = 1000,
                 bounds_X: Any = None, bounds_y: Any = None, fit_intercept: bool = True,
                 random_state: Any = None, ledger: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.n_models = n_models
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X: Any, y: Any) -> TukeyEM:
        Xa, ya, scaling, names = self._prepare(X, y, require_x_bounds=False)
        fit_intercept = _check_fit_intercept(self.fit_intercept)
        Z = self._design(Xa, scaling, fit_intercept)
        ys = scaling.label(ya) if scaling is not None else ya
        core = tukey_em(Z, ys, epsilon=self._required_epsilon(), delta=self._required_delta(),
                        n_models=self.n_models,
                        rng=self.random_state, ledger=self.ledger)
        self._finish(core, scaling, names, fit_intercept)
        return self


class ClippedDPGradientDescent(_MultivariateBase):
    """Noisy full-batch gradient descent on the squared loss with per-example clipping.

    Parameters
    ----------
    epsilon, delta:
        Privacy target (δ > 0).
    bounds_X:
        Required public feature bounds; rows are scaled into the unit ball with them.
    bounds_y:
        Optional public response bounds (y clamped and scaled to [−1, 1] when given).
    fit_intercept:
        Add a public ones column (default True).
    n_iter, clip_norm, learning_rate, schedule:
        T rounds (100), gradient clip C_g (1), η (0.5) and its schedule (``"constant"``,
        ``"1/t"``, ``"1/sqrt(t)"``).
    accounting:
        ``"gdp"`` (default, μ_round = μ/√T) or ``"zcdp"``.
    output:
        ``"average"`` (mean of the last ⌈T/2⌉ iterates; default) or ``"last"``.
    neighbouring:
        ``"replace-one"`` (default; n public) or ``"add-remove"`` (noisy count for n).
    random_state, ledger:
        As for :class:`AdaSSP`.
    """

    _needs_y_bounds = False
    _unit_ball = True

    def __init__(self, *, epsilon: float | None = None, delta: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, fit_intercept: bool = True, n_iter: int = 100,
                 clip_norm: float = 1.0, learning_rate: float = 0.5,
                 schedule: str = "constant", accounting: str = "gdp", output: str = "average",
                 neighbouring: str = "replace-one", random_state: Any = None,
                 ledger: Any = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.n_iter = n_iter
        self.clip_norm = clip_norm
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.accounting = accounting
        self.output = output
        self.neighbouring = neighbouring
        self.random_state = random_state
        self.ledger = ledger

    def fit(self, X: Any, y: Any) -> ClippedDPGradientDescent:
        Xa, ya, scaling, names = self._prepare(X, y)
        assert scaling is not None
        core = dp_gradient_descent(
            scaling.design(Xa), scaling.label(ya), epsilon=self._required_epsilon(),
            delta=self._required_delta(),
            clip_norm=self.clip_norm, n_iter=self.n_iter, learning_rate=self.learning_rate,
            schedule=self.schedule, accounting=self.accounting, output=self.output,
            neighbouring=self.neighbouring, rng=self.random_state, ledger=self.ledger)
        self._finish(core, scaling, names, scaling.fit_intercept)
        return self


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
        Bootstrap replicates for the interval (2000).
    random_state, ledger:
        As for :class:`AdaSSP`.
    """


    def __init__(self, *, epsilon: float | None = None, delta: float | None = None, bounds_X: Any = None,
                 bounds_y: Any = None, fit_intercept: bool = True,
                 neighbouring: str = "add-remove", calibration: str = "analytic",
                 se: str = "dp", n_boot: int = 2000,
                 random_state: Any = None, ledger: Any = None) -> None:
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

    def fit(self, X: Any, y: Any) -> CovarianceOLS:
        Xa, ya, scaling, names = self._prepare(X, y)
        assert scaling is not None
        d = Xa.shape[1]
        cols = _release_names(names)
        bx = resolve_bounds_X(self.bounds_X, d)
        by = check_bounds(self.bounds_y, "bounds_y")
        check_choice(self.se, "se", ("dp", "plugin", "noise-aware"))
        check_int(self.n_boot, "n_boot", minimum=50, maximum=10_000_000)
        data = np.column_stack([Xa, ya])
        release: SSCPRelease = release_sscp(
            data, columns=cols, bounds=list(bx) + [by], epsilon=self._required_epsilon(),
            delta=self._required_delta(), rng=self.random_state, neighbouring=self.neighbouring,
            calibration=self.calibration, ledger=self.ledger)
        self.release_ = release
        rhs = " + ".join(cols[:-1]) + ("" if scaling.fit_intercept else " - 1")
        res = release.regress(f"{cols[-1]} ~ {rhs}", se=self.se, n_sim=self.n_boot,
                              rng=bootstrap_rng(self.random_state))
        out_names = (["intercept"] if scaling.fit_intercept else []) + names
        if res.failed:
            final = RegressionResults(np.zeros(len(out_names)), names=out_names,
                                      privacy=res.privacy, method="covariance-ols",
                                      failed=True, reason=res.reason)
        else:
            kw: dict[str, Any] = {"uncertainty": res.uncertainty, "ci_method": res.ci_method,
                                  "bse": res.bse.to_numpy()}
            if res.bootstrap is not None:
                kw = reparametrised_kwargs(res, lambda th: th, out_names)
                kw.pop("extra_uncertainty")  # already in res.extra
            final = RegressionResults(
                res.params.to_numpy(), names=out_names, privacy=res.privacy,
                method="covariance-ols", df_resid=res.df_resid,
                nobs=res.nobs, dep_var="y", extra=res.extra, **kw)
        self._store(final)
        return self
