"""AdaSSP: adaptive sufficient-statistics perturbation (Wang 2018, Alg. 2), with dpreg's
eigenvalue floor as the default regularisation (issue 30; docs/accuracy.md).

Gaussian releases on data whose rows are clipped to ‖x‖₂ <= B (the public row-norm bound ‖X‖)
and labels clipped to |y| <= C (the public label bound ‖Y‖), each σ = Δ/μ_i with the
sensitivities Δ of the neighbouring relation (add/remove, Wang's setting: Δ_XX = B²,
Δ_λ = B², Δ_Xy = B·C; replace-one: √2·B², B², 2·B·C):

* ``lambda_rule="eigen-floor"`` (default): two releases, XᵀX + σ_XX·E (E symmetric, i.i.d.
  N(0, 1) upper triangle) and Xᵀy + σ_Xy·z, μ² halved between them (0.45 : 0.45 : 0.1 with yᵀy
  for ``inference``).  The estimate is the post-processing :func:`ssp_solve` of the two noisy
  statistics: every eigenvalue of XᵀX^ below f·σ_XX·√d is raised to that floor (f =
  ``floor_scale``, :data:`EIGEN_FLOOR_SCALE` by default) and
  θ̃ = V·diag(1/max(w_i, f·σ_XX·√d))·VᵀXᵀy^.  σ_XX·√d is the order of the spectral norm of the
  symmetric noise matrix, below which an eigenvalue of XᵀX^ is mostly noise.  The floor is a
  function of the released matrix and of public constants only, so nothing else is spent.
  On real data of a few hundred to a few thousand rows it was more accurate than Wang's ridge
  in 27 of 39 held-out cells (geometric-mean error ratio 0.88; docs/accuracy.md §5).
* ``lambda_rule="wang"`` (Wang's algorithm, the default before issue 30): a third release,
  λ_min(XᵀX) + σ_λ·Z, turned into a high-probability lower bound
  λ̃ = max(0, λ_min + σ_λ·Z − σ_λ·√ln(6/δ)); the ridge is
  λ = max(0, σ_XX·√(d·ln(2d²/ρ)) − λ̃) (ρ = 0.05 is Wang's failure probability) and
  θ̃ = (XᵀX^ + λI)⁻¹ Xᵀy^; μ² in thirds (0.3 : 0.3 : 0.3 : 0.1 with yᵀy).

Calibration (:func:`adassp_budget`):

* ``calibration="gdp"`` (default): the exact conversion for any (ε, δ).  μ is the largest
  value with μ-GDP ⇒ (ε, δ)-DP on the exact Gaussian trade-off curve
  (:meth:`dpreg.GDP.from_approx`), split over the releases as μ_i² = w_i·μ² with the weights of
  :func:`adassp_split`; Gaussian mechanisms compose exactly in GDP, so the releases together
  are μ-GDP and hence (ε, δ)-DP -- for every ε, with no refusal, and σ → 0 continuously as
  ε → ∞.  The ledger is charged ``GDP(μ)`` under either rule.
* ``calibration="wang"``: Wang's constants, c = √ln(6/δ)/(ε/3) and σ = c·Δ, i.e. each of his
  three releases (ε/3)²/(2 ln(6/δ))-zCDP and ρ = ε²/(6 ln(6/δ)) in all (with the eigen floor
  that ρ is split over the two releases).  That converts back to (ε', δ)-DP with ε' <= ε only
  up to a δ-dependent maximum (≈21.7 at δ = 1e−6; ε = 30 gives ε' ≈ 32.7):
  :func:`adassp_max_epsilon` computes it and :func:`adassp` refuses larger ε with this
  calibration.  Under add/remove with ``lambda_rule="wang"`` the terms are exactly Wang's
  √(d·ln(6/δ)·ln(2d²/ρ))·B²/(ε/3), B²·ln(6/δ)/(ε/3) and the noise scales c·B², c·B·C.  The
  ledger is charged the composed ``ZCDP``.

ε = inf is a non-private reference run under either calibration (no noise, λ = 0, no floor).

``inference=True`` adds a Gaussian release of yᵀy (labels clipped to |y| <= C, so its
sensitivity is C² under both relations: y² ∈ [0, C²]), which a DP-aware interval needs for the
error variance.  The SAME whole budget is then split 0.45 : 0.45 : 0.1 (XᵀX, Xᵀy, yᵀy; default
rule) or 0.3 : 0.3 : 0.3 : 0.1 (λ_min, XᵀX, Xᵀy, yᵀy; Wang's rule), μ² or ρ, so the original
releases get √(10/9) ≈ 1.054× more noise and the charge and the implied (ε, δ) are unchanged.
The interval is a parametric bootstrap of the releases (:mod:`dpreg.inference.dpci.ssp`;
post-processing); it is read off the de-shrunk solve, which neither the ridge nor the floor
enters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
from scipy import optimize

from dpreg._source import ArraySource
from dpreg._spec import Release, ReleasePlan
from dpreg._validation import (
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    check_rng,
    is_seeded,
)
from dpreg.exceptions import InvalidInputError
from dpreg.inference.dpci.engine import ParametricBootstrap, check_kind
from dpreg.inference.dpci.ssp import AdaSSPModel
from dpreg.inference.results import RegressionResults
from dpreg.inference.uncertainty import bootstrap_kwargs, refusal_kwargs
from dpreg.mechanisms.gaussian import gaussian, gaussian_sigma
from dpreg.mechanisms.sensitivity import (
    gram_sensitivity,
    lambda_min_sensitivity,
    xty_sensitivity,
)
from dpreg.multivariate._common import (
    check_choice,
    check_design,
    clip_columns,
    column_names,
    fill_rows,
    noisy_symmetric,
    solve_sym,
    warn_if_not_private,
)
from dpreg.privacy.budgets import GDP, ZCDP, Budget, compose, gdp_epsilon, zcdp_epsilon
from dpreg.privacy.ledger import charge
from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement, check_neighbouring

__all__ = ["adassp", "adassp_max_epsilon", "adassp_guarantee", "adassp_budget",
           "adassp_split", "yty_sensitivity", "AdaSSPBudget", "CALIBRATIONS", "INFERENCE_SPLIT",
           "SSPStatistics", "SSPGram", "ssp_statistics", "ssp_solve", "LAMBDA_RULES",
           "EIGEN_FLOOR_SCALE", "plan_adassp", "release_adassp", "adassp_result"]

#: shares of the whole budget (μ² or ρ) for λ_min, XᵀX, Xᵀy and yᵀy when ``inference=True``
INFERENCE_SPLIT = (0.3, 0.3, 0.3, 0.1)
#: shares for λ_min, XᵀX and Xᵀy (thirds, as in Wang's ε/3 per release)
EQUAL_SPLIT = (1.0, 1.0, 1.0)
#: ``calibration=`` values: the exact GDP conversion (default) or Wang's constants
CALIBRATIONS = ("gdp", "wang")
#: ``lambda_rule=`` values: Wang's ridge from a released λ_min, or no λ_min release and the
#: eigenvalue floor of :func:`ssp_solve` (post-processing of the noisy XᵀX; the default)
LAMBDA_RULES = ("wang", "eigen-floor")
#: shares of XᵀX and Xᵀy (and yᵀy) when no λ_min is released (``lambda_rule="eigen-floor"``)
NO_LAMBDA_SPLIT = (1.0, 1.0)
NO_LAMBDA_INFERENCE_SPLIT = (0.45, 0.45, 0.1)
#: f of the eigenvalue floor f·σ_XX·√d: the smallest geometric-mean excess error over the
#: dev and tuning data sets of docs/accuracy.md (f = 1 ... 4 tried; 2.5-3 best, 1 and 4 worst)
EIGEN_FLOOR_SCALE = 3.0
#: ``ssp_solve`` rules
SOLVE_RULES = ("eigen-floor", "noisy-gram")


@dataclass(frozen=True)
class SSPStatistics:
    """The statistics step's output (exact, NOT private): XᵀX, Xᵀy and yᵀy of the clipped rows
    and labels, and the row count (used only where n is public: replace-one neighbours)."""

    xtx: np.ndarray
    xty: np.ndarray
    yty: float
    n_rows: int

    @property
    def dim(self) -> int:
        return int(self.xtx.shape[0])


class SSPGram:
    """The statistics step of AdaSSP, one chunk at a time: for a chunk [X | y] (m×(d+1), raw
    values) the augmented Gram [Z | ỹ]ᵀ[Z | ỹ] (flattened) followed by m, where Z = the rows
    clipped to ‖z‖₂ <= ``x_norm_bound`` and ỹ = the labels clipped to |y| <= ``y_bound``.

    With ``scaling`` (a :class:`~dpreg.multivariate._common.PublicScaling`) the rows are first
    mapped by its public transform (clamp to the bounds, centre and scale, ones column, unit-ball
    factor) -- what the estimators do -- in the same work buffer, so no copy of the size of the
    data is made.  Every step uses public quantities only and is per record, so the sum over
    chunks is the statistics of the whole table (up to the floating-point summation order).
    Picklable without its buffer (runs on Spark executors).
    """

    def __init__(self, x_norm_bound: float, y_bound: float, scaling: Any = None) -> None:
        self.bound = float(x_norm_bound)
        self.label_bound = float(y_bound)
        self.scaling = scaling
        self._buf: np.ndarray | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_buf": None}

    def __call__(self, chunk: np.ndarray) -> np.ndarray:
        return self.blocks([chunk[:, :-1], chunk[:, -1]])

    def blocks(self, parts: Sequence[np.ndarray]) -> np.ndarray:
        """The same for the chunk given as column blocks side by side (1-D or 2-D row slices
        of equal length; the last column is y), written into the work buffer without
        stacking them first."""
        m = parts[0].shape[0]
        d = sum(1 if b.ndim == 1 else b.shape[1] for b in parts) - 1
        sc = self.scaling
        p = d if sc is None else sc.n_columns
        if self._buf is None or self._buf.shape[1] < m or self._buf.shape[0] != p + 1:
            self._buf = np.empty((p + 1, max(m, 1)))  # one row per column: contiguous steps
        AT = self._buf[:, :m]
        ZT, yv = AT[:p], AT[p]
        fill_rows(parts, sc, ZT, yv)
        clip_columns(ZT, self.bound)  # row clipping to the public norm bound (clip_rows)
        np.clip(yv, -self.label_bound, self.label_bound, out=yv)
        return np.concatenate([(AT @ AT.T).ravel(), [float(m)]])


def ssp_statistics(source: Any, *, x_norm_bound: float, y_bound: float, scaling: Any = None,
                   columns: Sequence[str] | None = None, checked: bool = False
                   ) -> SSPStatistics:
    """The statistics step of AdaSSP in one pass of chunks over ``source`` (a
    :class:`~dpreg._source.DataSource` whose ``columns`` -- by default all of them -- are the
    regressors followed by the response): :class:`SSPGram` summed over chunks (on Spark, per
    partition on the executors).  ``checked``: the in-memory data were validated already."""
    from dpreg._source import ArraySource

    cols = list(source.columns if columns is None else columns)
    stat = SSPGram(x_norm_bound, y_bound, scaling)
    if checked and isinstance(source, ArraySource):
        flat = source.reduce(cols, stat, checked=True)
    else:
        flat = source.reduce(cols, stat)
    q = int(round(math.sqrt(flat.size - 1)))
    G = flat[:-1].reshape(q, q)
    G = (G + G.T) / 2.0
    return SSPStatistics(xtx=G[:-1, :-1].copy(), xty=G[:-1, -1].copy(), yty=float(G[-1, -1]),
                         n_rows=int(round(float(flat[-1]))))


def yty_sensitivity(label_bound: float, neighbouring: str | Neighbouring) -> float:
    """yᵀy = Σ y_i² for labels clipped to |y| <= C: C² under add/remove (one y² ∈ [0, C²]
    appears or disappears) and under replace-one (y² changes within [0, C²])."""
    c = check_positive(label_bound, "label_bound")
    check_neighbouring(neighbouring)
    return c * c

#: why a plain AdaSSP release has no interval / no R² (its results say so)
NO_INTERVAL = ("none: this release lacks yᵀy, so the error variance is unknown; refit with "
               "inference=True (a fourth Gaussian release of yᵀy from the same budget) for a "
               "parametric-bootstrap interval")
NO_FIT_STATISTICS = ("the release has no yᵀy; fit with inference=True (the default "
                     "inference='auto' releases it whenever the model has an intercept or n "
                     "is public)")

SOURCE = ("Wang 2018 (AdaSSP, Alg. 2; Wang's constants as in google-research "
          "dp_regression/baselines.py, or the exact GDP calibration)")


def _rho_each(epsilon: float, delta: float) -> float:
    """zCDP of one of the three releases: 1/(2c²) with c = √ln(6/δ)/(ε/3)."""
    return (epsilon / 3.0) ** 2 / (2.0 * math.log(6.0 / delta))


def adassp_split(inference: bool = False, lambda_rule: str = "eigen-floor") -> tuple[float, ...]:
    """Weights of the additive budget (μ² in GDP, ρ in zCDP) over the releases, in order.  With
    the default ``lambda_rule="eigen-floor"`` there is no λ_min release: XᵀX, Xᵀy (1 : 1) --
    and yᵀy with ``inference`` (0.45 : 0.45 : 0.1).  With ``"wang"``: λ_min, XᵀX, Xᵀy (thirds)
    -- and yᵀy with ``inference`` (:data:`INFERENCE_SPLIT`).  A pure function; ``Budget.split``
    turns the weights into parts that never compose to more than the whole."""
    rule = check_choice(lambda_rule, "lambda_rule", LAMBDA_RULES)
    if rule == "eigen-floor":
        return NO_LAMBDA_INFERENCE_SPLIT if inference else NO_LAMBDA_SPLIT
    return INFERENCE_SPLIT if inference else EQUAL_SPLIT


def ssp_solve(xtx_hat: Any, xty_hat: Any, *, noise_sd: float, rule: str = "eigen-floor",
              scale: float = EIGEN_FLOOR_SCALE) -> np.ndarray:
    """θ from noisy sufficient statistics without a released λ_min: pure post-processing.

    With Â = XᵀX^ (symmetrised) = V·diag(w)·Vᵀ, d its size and s = ``scale``·``noise_sd``·√d
    (``noise_sd`` = σ_XX, the public noise sd of every entry of Â; σ·√d is the order of the
    spectral norm of the symmetric noise matrix):

    * ``"eigen-floor"``: θ = V·diag(1/max(w_i, s))·Vᵀ·Xᵀy^ -- eigen-directions the noise
      dominates are regularised, well-determined ones are left alone (no shrinkage there);
    * ``"noisy-gram"``: the ridge θ = (Â + λI)⁻¹Xᵀy^ with λ = max(0, s − w_min), Wang's
      rule with λ_min read off the noisy Â instead of a separate release.

    Privacy: a function of released values and public constants only, so it costs nothing
    (post-processing).  ``noise_sd = 0`` (ε = ∞) gives the plain solve (pseudo-inverse where
    Â is singular).
    """
    A = np.asarray(xtx_hat, dtype=float)
    b = np.asarray(xty_hat, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or b.shape != (A.shape[0],):
        raise InvalidInputError(f"xtx_hat must be a square matrix and xty_hat a vector of its "
                                f"size; got shapes {A.shape} and {b.shape}")
    sd = check_positive(noise_sd, "noise_sd", allow_zero=True)
    f = check_positive(scale, "scale", allow_zero=True)
    how = check_choice(rule, "rule", SOLVE_RULES)
    A = (A + A.T) / 2.0
    floor = f * sd * math.sqrt(A.shape[0])
    w, V = np.linalg.eigh(A)
    if how == "noisy-gram":
        lam = max(0.0, floor - float(w[0]))
        w = w + lam
    else:
        w = np.maximum(w, floor)
    tol = np.finfo(float).eps * max(1.0, float(np.max(np.abs(w)))) * A.shape[0]
    inv = np.where(np.abs(w) > tol, 1.0 / np.where(np.abs(w) > tol, w, 1.0), 0.0)
    return np.asarray(V @ (inv * (V.T @ b)), dtype=float)


class AdaSSPBudget(NamedTuple):
    """The budget of one AdaSSP run (:func:`adassp_budget`)."""

    whole: Budget  # GDP(μ) for (ε, δ) ("gdp") or Wang's composed ZCDP(ρ) ("wang")
    parts: tuple[Budget, ...]  # λ_min, XᵀX, Xᵀy (, yᵀy); no λ_min with "eigen-floor"
    charged: Budget  # what the ledger is charged: ``whole`` (the parts compose to at most it)
    implied_epsilon: float  # the ε the charge implies at δ
    releases: tuple[str, ...] = ("lambda_min", "XtX", "Xty")  # the names of ``parts``


def adassp_budget(epsilon: float, delta: float, *, calibration: str = "gdp",
                  inference: bool = False, lambda_rule: str = "eigen-floor") -> AdaSSPBudget:
    """The budget split of an AdaSSP run at (ε, δ) -- a pure function of public inputs.

    ``"gdp"``: the largest μ with μ-GDP ⇒ (ε, δ)-DP, μ² split by :func:`adassp_split`; the
    implied ε is exact (<= ε for every ε).  ``"wang"``: Wang's per-release
    (ε/3)²/(2 ln(6/δ))-zCDP composed (thirds), or that composition split by
    :data:`INFERENCE_SPLIT`; the implied ε exceeds ε above :func:`adassp_max_epsilon` (this
    function reports it; :func:`adassp` refuses such ε).  ``lambda_rule="eigen-floor"``
    (default): no λ_min release; the same whole split over XᵀX, Xᵀy (and yᵀy) by
    :func:`adassp_split` (with ``"wang"`` calibration: Wang's composed ρ of three releases,
    split over two or three).  ``lambda_rule="wang"``: λ_min, XᵀX, Xᵀy (and yᵀy).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    cal = check_choice(calibration, "calibration", CALIBRATIONS)
    rule = check_choice(lambda_rule, "lambda_rule", LAMBDA_RULES)
    weights = adassp_split(bool(inference), rule)
    names = ((("lambda_min",) if rule == "wang" else ()) + ("XtX", "Xty")
             + (("yty",) if inference else ()))
    whole: Budget
    parts: list[Budget]
    if cal == "gdp":
        whole = GDP.from_approx(epsilon, delta)
        parts = list(whole.split(weights))  # compose to at most the whole (split rounds down)
        charged: Budget = whole  # the same charge with or without inference
        assert isinstance(charged, GDP)
        # δ(ε; μ_charged) <= δ(ε; μ) <= δ by construction, so the implied ε is at most ε (the
        # inverse below rounds up by a few ulps)
        implied = math.inf if charged.is_infinite else min(epsilon,
                                                           gdp_epsilon(charged.mu, delta))
    else:
        each = ZCDP(math.inf) if math.isinf(epsilon) else ZCDP(_rho_each(epsilon, delta))
        whole = compose([each, each, each])
        parts = (list(whole.split(weights)) if inference or rule != "wang"
                 else [each, each, each])
        charged = whole
        assert isinstance(charged, ZCDP)
        implied = math.inf if charged.is_infinite else zcdp_epsilon(charged.rho, delta)
    return AdaSSPBudget(whole, tuple(parts), charged, implied, names)


def adassp_guarantee(epsilon: float, delta: float, *, calibration: str = "gdp"
                     ) -> tuple[Budget, float]:
    """(charged budget of the three releases, the ε it implies at ``delta``).

    With ``calibration="wang"`` the budget is Wang's composed zCDP and the ε is what his
    constants actually deliver (AdaSSP is (ε, δ)-DP as advertised only when it is <= the
    requested ε); with ``"gdp"`` (default) it is the composed μ-GDP, whose ε never exceeds ε.
    """
    b = adassp_budget(epsilon, delta, calibration=calibration)
    return b.charged, b.implied_epsilon


@lru_cache(maxsize=256)
def adassp_max_epsilon(delta: float) -> float:
    """Largest ε for which Wang's constants (``calibration="wang"``) are (ε, δ)-DP by the zCDP
    composition (the default ``"gdp"`` calibration has no maximum).

    f(ε) = ε'(ε) − ε is negative for small ε (ε' ≈ 0.78·ε) and positive for large ε (ε'
    grows like ε²); the set where f <= 0 is an interval (0, ε_max], found by bracketing and
    Brent's method and then moved down until the guarantee holds in floating point.
    """
    delta = check_delta(delta, allow_zero=False)

    def f(eps: float) -> float:
        return adassp_guarantee(eps, delta, calibration="wang")[1] - eps

    hi = 1.0
    while f(hi) <= 0:
        hi *= 2.0
        if hi > 1e9:  # pragma: no cover - never reached for 0 < δ < 1
            return math.inf
    lo = hi / 2.0 if hi > 1.0 else 1e-9
    eps = optimize.brentq(f, lo, hi, xtol=1e-13, rtol=8 * np.finfo(float).eps, maxiter=500)
    while f(eps) > 0:
        eps = math.nextafter(eps, 0.0)
    return float(eps)


def adassp(
    X: Any,
    y: Any,
    *,
    x_norm_bound: float,
    y_bound: float,
    epsilon: float,
    delta: float,
    neighbouring: str | Neighbouring = "add-remove",
    failure_prob: float = 0.05,
    rng: Any = None,
    ledger: Any = None,
    names: Any = None,
    inference: bool = False,
    calibration: str = "gdp",
    count_index: int | None = None,
    n_boot: int = 2000,
    kind: str = "percentile",
    lambda_rule: str = "eigen-floor",
    floor_scale: float = EIGEN_FLOOR_SCALE,
) -> RegressionResults:
    """AdaSSP ridge regression on the design ``X`` (include a ones column for an intercept).

    Parameters
    ----------
    X, y:
        Design (n×d) and response.  Rows are clipped to ‖x‖₂ <= ``x_norm_bound`` and labels to
        |y| <= ``y_bound`` before anything is computed.  Or ``X`` is the output of the
        statistics step, :func:`ssp_statistics` (then ``y`` is None): the release from
        statistics computed in chunks, from a file or on Spark executors -- the same release.
    x_norm_bound, y_bound:
        PUBLIC bounds ‖X‖ and ‖Y‖ (required; never derived from the data).
    epsilon, delta:
        Target (ε, δ); δ > 0 is required.  Any ε with the default calibration; with
        ``calibration="wang"`` ε must not exceed :func:`adassp_max_epsilon`.
    neighbouring:
        ``"add-remove"`` (Wang's constants; default) or ``"replace-one"``.
    failure_prob:
        Wang's ρ, the failure probability of the λ_min lower bound (default 0.05).
    rng, ledger, names:
        Randomness; optional :class:`~dpreg.Ledger` charged (ρ-zCDP) after validation and
        before any noise; coefficient names.
    calibration:
        ``"gdp"`` (default): σ_i = Δ_i/μ_i from the exact μ-GDP conversion of (ε, δ), μ² split
        by :func:`adassp_split` (:func:`adassp_budget`); ``"wang"``: Wang's constants (zCDP;
        ε limited).
    inference:
        Also release yᵀy (the same budget, 10% of it to yᵀy, see module doc) and attach
        DP-aware standard errors and a parametric-bootstrap ``conf_int`` (``n_boot``
        replicates, construction ``kind``).  Needs n: public under replace-one, otherwise the
        index of a PUBLIC column of ones in ``X`` (``count_index``) whose noisy Gram diagonal
        entry serves as the count.
    lambda_rule, floor_scale:
        ``"eigen-floor"`` (default): no λ_min release (the budget goes to XᵀX and Xᵀy) and the
        estimate is :func:`ssp_solve`'s eigenvalue floor ``floor_scale``·σ_XX·√d of the noisy
        XᵀX (post-processing; module doc).  ``"wang"``: Wang's ridge from a released λ_min (a
        third of the budget; Wang 2018's algorithm).  The interval of ``inference`` is the
        same under both: it is read off the de-shrunk estimate, which no λ enters.

    Notes
    -----
    The pipeline: :func:`plan_adassp` (every check, the budget split, sensitivities and noise
    scales, from public inputs) -> :func:`ssp_statistics` (deterministic) -> the ledger charge
    (once, after validation, before any noise) -> :func:`release_adassp` (THE draws and the
    privacy statement) -> :func:`adassp_result` (post-processing: the bootstrap interval).
    Returns a :class:`~dpreg.inference.RegressionResults` whose privacy budget is the composed
    μ-GDP (``"gdp"``) or ρ-zCDP (``"wang"``); ``details['implied_epsilon']`` is the ε it implies
    at δ.
    """
    if isinstance(X, SSPStatistics):  # the statistics step ran already (chunks, file, Spark)
        stats: SSPStatistics | None = X
        Xa = ya = None
        n, d = X.n_rows, X.dim
    else:
        stats = None
        Xa, ya = check_design(X, y)
        n, d = Xa.shape
    labels = column_names(X, d, names)
    plan = plan_adassp(d=d, x_norm_bound=x_norm_bound, y_bound=y_bound, epsilon=epsilon,
                       delta=delta, neighbouring=neighbouring, failure_prob=failure_prob,
                       inference=inference, calibration=calibration, count_index=count_index,
                       n_boot=n_boot, kind=kind, lambda_rule=lambda_rule,
                       floor_scale=floor_scale)
    if plan.relation is Neighbouring.REPLACE_ONE:  # n is public only under replace-one
        plan = _with_public_n(plan, n)
    gen = check_rng(rng)
    if stats is None:
        assert Xa is not None and ya is not None
        stats = ssp_statistics(ArraySource([Xa, ya], [*map(str, range(d)), "y"]),
                               x_norm_bound=plan.options["x_norm_bound"],
                               y_bound=plan.options["y_bound"], checked=True)
    charge(ledger, plan.budget, "AdaSSP", plan.relation)
    warn_if_not_private(plan.options["epsilon"], "AdaSSP")
    return adassp_result(release_adassp(stats, plan, gen, seeded=is_seeded(rng)), names=labels)


def _check_inference(value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidInputError(f"inference must be True or False; got {value!r}")
    return bool(value)


def plan_adassp(*, d: int, x_norm_bound: float, y_bound: float, epsilon: float, delta: float,
                n: int | None = None, neighbouring: str | Neighbouring = "add-remove",
                failure_prob: float = 0.05, inference: bool = False, calibration: str = "gdp",
                count_index: int | None = None, n_boot: int = 2000, kind: str = "percentile",
                lambda_rule: str = "eigen-floor", floor_scale: float = EIGEN_FLOOR_SCALE,
                scaling: Any = None) -> ReleasePlan:
    """The public part of an AdaSSP release on d columns: every parameter checked (as
    :func:`adassp` documents them), the budget and its split (:func:`adassp_budget`, whose
    weights are :func:`adassp_split`), the sensitivity of each release under the relation
    (:mod:`dpreg.mechanisms.sensitivity`, :func:`yty_sensitivity`) and its Gaussian noise sd
    σ = Δ/μ_i (or Wang's c·Δ).  Reads no data and draws nothing: a plan can be shown, compared
    and charged before the release.

    ``n``: the number of rows where it is PUBLIC -- replace-one neighbours only (under
    add/remove n is private: giving it is an error); with ``inference`` it must exceed d.
    ``scaling``: the public :class:`~dpreg.multivariate._common.PublicScaling` a statistics
    step maps raw rows by (kept in ``options``; None: the design as given).  ``options`` also
    carry the requested ε and δ and the ε the charge implies at δ (``implied_epsilon``)."""
    bnd = check_positive(x_norm_bound, "x_norm_bound")
    cbd = check_positive(y_bound, "y_bound")
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    rel = check_neighbouring(neighbouring)
    fail = check_probability(failure_prob, "failure_prob")
    d = check_int(d, "d", minimum=1)
    infer = _check_inference(inference)
    boot_n = check_int(n_boot, "n_boot", minimum=50, maximum=10_000_000)
    boot_kind = check_kind(kind)
    if infer and rel is Neighbouring.ADD_REMOVE:
        if count_index is None:
            raise InvalidInputError(
                "count_index is required for inference=True under add/remove neighbours (n is "
                "private): give the index of a public column of ones in X, or use "
                "neighbouring='replace-one'; got None")
        count_index = check_int(count_index, "count_index", minimum=0, maximum=d - 1)
    cal = check_choice(calibration, "calibration", CALIBRATIONS)
    rule = check_choice(lambda_rule, "lambda_rule", LAMBDA_RULES)
    floor_f = check_positive(floor_scale, "floor_scale", allow_zero=True)
    if cal == "wang" and not math.isinf(eps):
        eps_max = adassp_max_epsilon(dlt)
        if eps > eps_max:
            raise InvalidInputError(
                f"epsilon must be <= {eps_max:.4g} for AdaSSP with calibration='wang' and "
                f"delta={dlt:g}: Wang's noise constants are (epsilon, delta)-DP only up to that "
                f"value (the three zCDP releases compose to more than epsilon beyond it; the "
                f"default calibration='gdp' has no limit); got {epsilon!r}"
            )
    budget = adassp_budget(eps, dlt, calibration=cal, inference=infer, lambda_rule=rule)
    parts = dict(zip(budget.releases, budget.parts))
    every = {"XtX": gram_sensitivity(bnd, rel), "lambda_min": lambda_min_sensitivity(bnd, rel),
             "Xty": xty_sensitivity(bnd, cbd, rel), "yty": yty_sensitivity(cbd, rel)}
    sens = {k: v for k, v in every.items() if k in parts}
    plan = ReleasePlan(
        method="adassp",
        options={"epsilon": eps, "delta": dlt, "implied_epsilon": budget.implied_epsilon,
                 "x_norm_bound": bnd, "y_bound": cbd, "failure_prob": fail, "inference": infer,
                 "calibration": cal, "lambda_rule": rule, "floor_scale": floor_f,
                 "count_index": count_index, "n_boot": boot_n, "kind": boot_kind,
                 "scaling": scaling},
        budget=budget.charged, relation=rel, parts=parts, n=None, d=d, sensitivities=sens,
        noise={k: gaussian_sigma(sens[k], parts[k]) for k in parts})
    if n is None:
        return plan
    if rel is not Neighbouring.REPLACE_ONE:
        raise InvalidInputError("n must be None under add/remove neighbours (n is private "
                                "there: only replace-one makes it public); got a number")
    return _with_public_n(plan, n)


def _with_public_n(plan: ReleasePlan, n: int) -> ReleasePlan:
    """``plan`` with its public n (replace-one), checked against the inference's needs."""
    n = check_int(n, "n", minimum=0)
    if plan.options["inference"] and n <= int(plan.d):  # type: ignore[arg-type]
        raise InvalidInputError(f"X must have more rows than columns ({plan.d}) for "
                                "inference=True under replace-one neighbours")
    return replace(plan, n=n)


def release_adassp(stats: SSPStatistics, plan: ReleasePlan, rng: Any, *,
                   seeded: bool = False) -> Release:
    """THE release of AdaSSP from its statistics (:func:`ssp_statistics`: XᵀX, Xᵀy, yᵀy of the
    clipped rows) and its public ``plan`` (:func:`plan_adassp`), with the Generator ``rng``:
    with ``lambda_rule="wang"`` the noisy λ_min and Wang's ridge λ from its lower bound, the
    noisy XᵀX (symmetric) and Xᵀy, θ = (XᵀX^ + λI)⁻¹Xᵀy^; with ``"eigen-floor"`` no λ_min
    release and θ by :func:`ssp_solve`; with ``inference`` the noisy yᵀy and the seed of the
    (post-processing) bootstrap.  Every draw is a Gaussian mechanism of
    :mod:`dpreg.mechanisms` at the plan's sensitivity and part of the budget; the parts
    compose to ``plan.budget`` (μ-GDP or ρ-zCDP), under ``plan.relation`` (module doc).
    Returns the :class:`~dpreg._spec.Release` with its :class:`PrivacyStatement`."""
    o, part, sens, sd = plan.options, plan.parts, plan.sensitivities, plan.noise
    d = int(plan.d)  # type: ignore[arg-type]
    if stats.dim != d:
        raise InvalidInputError(f"stats must have the plan's {d} columns; got {stats.dim}")
    values: dict[str, Any] = {}
    wang = o["lambda_rule"] == "wang"
    lam = 0.0
    if wang:
        lam_min = max(0.0, float(np.linalg.eigvalsh(stats.xtx)[0]))
        lam_noisy = float(gaussian(lam_min, sensitivity=sens["lambda_min"],
                                   budget=part["lambda_min"], rng=rng))
        lam_lower = max(0.0, lam_noisy - sd["lambda_min"] * math.sqrt(math.log(6.0 / o["delta"])))
        lam = max(0.0, sd["XtX"] * math.sqrt(d * math.log(2.0 * d * d / o["failure_prob"]))
                  - lam_lower)
        values["noisy_lambda_min"] = lam_noisy
    xtx_hat = noisy_symmetric(stats.xtx, sensitivity=sens["XtX"], budget=part["XtX"], rng=rng)
    xty_hat = np.asarray(gaussian(stats.xty, sensitivity=sens["Xty"], budget=part["Xty"],
                                  rng=rng), dtype=float)
    if wang:
        values["theta"] = solve_sym(xtx_hat + lam * np.eye(d), xty_hat)
        values["ridge_lambda"] = lam
    else:  # no λ_min release: the eigenvalue floor of the noisy XᵀX (post-processing)
        values["theta"] = ssp_solve(xtx_hat, xty_hat, noise_sd=sd["XtX"], rule="eigen-floor",
                                    scale=o["floor_scale"])
        values["eigen_floor"] = o["floor_scale"] * sd["XtX"] * math.sqrt(d)
    values.update(noisy_xtx=xtx_hat, noisy_xty=xty_hat)
    if o["inference"]:
        values["noisy_yty"] = float(gaussian(stats.yty, sensitivity=sens["yty"],
                                             budget=part["yty"], rng=rng))
        values["bootstrap_seed"] = int(rng.integers(0, 2**63 - 1))  # post-processing's seed
    return Release(plan, values, _adassp_statement(plan, seeded))


def _adassp_statement(plan: ReleasePlan, seeded: bool) -> PrivacyStatement:
    o, sens, sd = plan.options, plan.sensitivities, plan.noise
    shown = ("XtX", "lambda_min", "Xty")  # the order of the statement's tables
    details: dict[str, Any] = {
        "requested": {"epsilon": o["epsilon"], "delta": o["delta"]},
        "implied_epsilon": o["implied_epsilon"],
        "delta": o["delta"],
        "x_norm_bound": o["x_norm_bound"], "y_bound": o["y_bound"],
        "sensitivity": {k: sens[k] for k in shown if k in sens},
        "noise_sd": {k: sd[k] for k in shown if k in sd},
        "failure_prob": o["failure_prob"],
        "calibration": o["calibration"],
        "lambda_rule": o["lambda_rule"],
        **({"floor_scale": o["floor_scale"]} if o["lambda_rule"] != "wang" else {}),
    }
    if o["inference"]:
        details.update({"inference": True, "budget_shares": dict(zip(
            plan.parts, adassp_split(True, o["lambda_rule"]))),
            "sensitivity_yty": sens["yty"], "noise_sd_yty": sd["yty"]})
    return PrivacyStatement(budget=plan.budget, neighbouring=plan.relation, mechanism="AdaSSP",
                            source=SOURCE, seeded=seeded, details=details)


def adassp_result(release: Release, *, names: Sequence[str] | None = None
                  ) -> RegressionResults:
    """The :class:`~dpreg.inference.RegressionResults` of an AdaSSP release (post-processing
    of released values and public constants only): the coefficients, the ridge λ or the
    eigenvalue floor, and -- with ``inference`` -- the DP-aware interval, a parametric
    bootstrap of the four noisy statistics (:class:`~dpreg.inference.dpci.ssp.AdaSSPModel`)
    seeded by the release, or its refusal with the reason (docs/uncertainty.md)."""
    plan, v, o = release.plan, release.values, release.plan.options
    d = int(plan.d)  # type: ignore[arg-type]
    labels = [f"x{j}" for j in range(d)] if names is None else [str(s) for s in names]
    wang = o["lambda_rule"] == "wang"
    extra: dict[str, Any] = ({"ridge_lambda": v["ridge_lambda"]} if wang
                             else {"eigen_floor": v["eigen_floor"]})
    dp_kw: dict[str, Any] = {"uncertainty": NO_INTERVAL, "ci_method": "none",
                             "no_fit_statistics": NO_FIT_STATISTICS}
    if o["inference"]:
        sd = plan.noise
        # the eigen floor replays no ridge: λ = 0 in the bootstrap world
        model = AdaSSPModel(
            xtx=v["noisy_xtx"], xty=v["noisy_xty"], yty=v["noisy_yty"],
            lam_min=v["noisy_lambda_min"] if wang else 0.0, theta=v["theta"],
            sd={"XtX": sd["XtX"], "Xty": sd["Xty"], "yty": sd["yty"],
                "lambda_min": sd["lambda_min"] if wang else 0.0},
            log_term=math.sqrt(math.log(6.0 / o["delta"])) if wang else 0.0,
            ridge_const=math.sqrt(d * math.log(2.0 * d * d / o["failure_prob"])) if wang else 0.0,
            n_public=None if plan.n is None else float(plan.n),
            count_index=o["count_index"], count_scale=1.0, label_bound=o["y_bound"],
            names=labels)
        if model.sufficient:
            boot = ParametricBootstrap(model, n_boot=o["n_boot"], kind=o["kind"],
                                       rng=v["bootstrap_seed"])
            dp_kw = bootstrap_kwargs(boot, what="the four noisy AdaSSP statistics",
                                     point=v["theta"])
        else:  # too little information in the release: refuse, saying why (docs/uncertainty.md)
            dp_kw = refusal_kwargs(model.refusal(), noise_ratio=model.noise_ratio)
        extra.update(dp_kw.pop("extra_uncertainty"))
        extra["noisy_yty"] = v["noisy_yty"]
    return RegressionResults(v["theta"], names=labels, privacy=release.privacy,
                             method="adassp", nobs=plan.n, extra=extra, **dp_kw)
