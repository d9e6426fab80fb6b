"""BoostedAdaSSP: gradient boosting with AdaSSP as the base learner (Tang et al. 2023, Alg. 1).

Accounting is in μ-Gaussian DP.  μ is the largest value with μ-GDP ⇒ (ε, δ)-DP on the exact
trade-off curve (:meth:`dpreg.GDP.from_approx`); it is split as μ₁ : μ₂ : μ₃ = a : b : c with
μ₁² + μ₂² + μ₃² = μ² (default a = b = c; ``split="author"`` is 1 : √T : 1, the allocation the
authors' 2023 code uses when it gives one noise multiplier to all T + 2 releases).  XᵀX and
λ_min(XᵀX) are released once (μ₁ and μ₃); every one of the T rounds releases Xᵀg_t with
μ₂/√T, so the composition is √(μ₁² + T·μ₂²/T + μ₃²) = μ.

Noise standard deviations are Δ/μ_i with the sensitivities of the chosen neighbouring relation
(:mod:`dpreg.mechanisms.sensitivity`): Δ_XX = B_x² (add/remove) or √2·B_x² (replace-one),
Δ_λ = B_x², Δ_Xg = B_x·τ or 2·B_x·τ.  (The 2024 author code multiplied by μ instead of dividing
-- about 180× too little noise at ε = 1, δ = 1e−6, T = 100; the test-suite pins that bug.)

Ridge: ``lambda_rule="wang"`` (default) turns the noisy λ_min into Wang's ridge λ >= 0 with
the GDP noise scales in place of Wang's constants; ``"literal"`` adds λ̂ = λ_min + noise to the
diagonal as printed in Alg. 1 (λ̂ can be negative; a pseudo-inverse is then used).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from dpreg._source import ArraySource
from dpreg._spec import Release, ReleasePlan
from dpreg._validation import (
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    check_rng,
    fmt,
    is_seeded,
)
from dpreg.exceptions import InvalidInputError
from dpreg.inference.results import RegressionResults
from dpreg.mechanisms.gaussian import gaussian, gaussian_calls, gaussian_sigma
from dpreg.mechanisms.sensitivity import (
    gram_sensitivity,
    lambda_min_sensitivity,
    xty_sensitivity,
)
from dpreg.multivariate._common import (
    SCHEDULES,
    check_choice,
    check_design,
    clip_columns,
    column_names,
    fill_rows,
    learning_rates,
    noisy_symmetric,
    warn_if_not_private,
)
from dpreg.privacy.budgets import GDP, compose
from dpreg.privacy.ledger import charge
from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement, check_neighbouring

__all__ = ["boosted_adassp", "boosted_adassp_scaled", "boosted_split", "boosted_budget",
           "BoostedRows", "BoostedStatistics", "boosted_statistics", "plan_boosted",
           "release_boosted", "boosted_result"]

SOURCE = "Tang, Aydore, Kearns, Rho, Roth, Wang, Wu, Zhang 2023 (BoostedAdaSSP, Alg. 1)"
#: why a BoostedAdaSSP release has no interval / no R² (its results say so)
NO_INTERVAL = ("none: BoostedAdaSSP clips residuals in every round, so the release is a "
               "nonlinear function of individual residuals that the released statistics do "
               "not determine; no valid post-processing interval is available (use "
               "AdaSSP(inference=True) or CovarianceOLS for intervals)")
NO_FIT_STATISTICS = ("BoostedAdaSSP clips residuals in every round: the released statistics "
                     "do not determine the residual sum of squares")


def boosted_split(split: Any, n_rounds: int) -> tuple[float, float, float]:
    """The ratio a : b : c of μ₁ (XᵀX), μ₂ (all T rounds of Xᵀg) and μ₃ (λ_min)."""
    if isinstance(split, str):
        if split == "equal":
            return 1.0, 1.0, 1.0
        if split == "author":
            return 1.0, math.sqrt(n_rounds), 1.0
        raise InvalidInputError(
            f"split must be 'equal', 'author' or three positive numbers (a, b, c); got {split!r}"
        )
    try:
        parts = tuple(float(v) for v in split)
    except (TypeError, ValueError):
        raise InvalidInputError(
            "split must be 'equal', 'author' or three positive numbers (a, b, c); got "
            f"{fmt(split)}") from None
    if len(parts) != 3 or not all(math.isfinite(v) and v > 0 for v in parts):
        raise InvalidInputError(
            f"split must be three finite positive numbers (a, b, c); got {fmt(split)}"
        )
    return parts  # type: ignore[return-value]


class BoostedBudget(NamedTuple):
    """The budget parts of one BoostedAdaSSP run (:func:`boosted_budget`)."""

    mu: GDP  # the whole: the largest μ-GDP implying (ε, δ)-DP
    mu1: GDP  # XᵀX
    mu2: GDP  # all T rounds of Xᵀg
    mu_round: GDP  # one round of Xᵀg
    mu3: GDP  # λ_min
    charged: GDP  # μ₁, μ₃ and T rounds composed (rounded up; never above mu)


def boosted_budget(epsilon: float, delta: float, ratio: tuple[float, float, float],
                   n_rounds: int) -> BoostedBudget:
    """The budget split of a BoostedAdaSSP run at (ε, δ): the largest μ-GDP implying (ε, δ)-DP
    split as μ₁² : μ₂² : μ₃² = a² : b² : c² (``ratio``, see :func:`boosted_split`), μ₂ split
    evenly over the T rounds; the charge composes the parts.  A pure function of public
    inputs (the ledger charge of per-group tables uses it too)."""
    mu = GDP.from_approx(epsilon, delta)
    a, b, c = ratio
    mu1, mu2, mu3 = mu.split([a * a, b * b, c * c])
    mu_round = mu2.split([1.0] * n_rounds)[0] if n_rounds > 1 else mu2
    return BoostedBudget(mu, mu1, mu2, mu_round, mu3,
                         compose([mu1, mu3] + [mu_round] * n_rounds))


def _round_loop(C: np.ndarray, yraw: np.ndarray, lows: np.ndarray, highs: np.ndarray,
                shift: np.ndarray, scale: np.ndarray, cf: float, off: int, has_yb: bool,
                ylo: float, yhi: float, yshift: float, yscale: float, bound: float,
                theta: np.ndarray, tau: float, acc: np.ndarray) -> None:  # pragma: no cover
    """One boosting round over one chunk of raw rows (numba): for every row the design row z
    (the operations of :func:`~dpreg.multivariate._common.fill_rows`: clamp, centre, scale,
    the ones column, the unit-ball factor), its clipping to ‖z‖ <= ``bound``, the clamped and
    scaled label, g = clip(label − z·θ, −τ, τ), and ``acc`` += z·g -- the same IEEE
    operations in the same order as :meth:`BoostedRows.gradient`'s NumPy expression."""
    m, d = C.shape
    p = d + off
    z = np.empty(p)
    for i in range(m):
        if off:
            z[0] = cf if cf != 1.0 else 1.0
        for j in range(d):
            v = C[i, j]  # numpy's clip: max(v, lo), then min(., hi), as (a > b ? a : b)
            v = v if v > lows[j] else lows[j]
            v = v if v < highs[j] else highs[j]
            v = (v - shift[j]) / scale[j]
            if cf != 1.0:
                v = v * cf
            z[off + j] = v
        s = z[0] * z[0]
        for k in range(1, p):
            s += z[k] * z[k]
        nrm = np.sqrt(s)
        if nrm > bound:
            f = bound / nrm
            for k in range(p):
                z[k] = z[k] * f
        t = yraw[i]
        if has_yb:
            t = t if t > ylo else ylo
            t = t if t < yhi else yhi
            t = (t - yshift) / yscale
        r = z[0] * theta[0]
        for k in range(1, p):
            r += z[k] * theta[k]
        g = t - r
        g = g if g > -tau else -tau
        g = g if g < tau else tau
        if i == 0:
            for k in range(p):
                acc[k] = z[k] * g
        else:
            for k in range(p):
                acc[k] += z[k] * g


@functools.cache
def _round_kernel() -> Any:
    """:func:`_round_loop` compiled by numba on first use (the optional ``fast`` extra; not
    with ``DPREG_DISABLE_NUMBA``), or None: :meth:`BoostedRows.gradient` then runs the same
    operations as NumPy expressions."""
    if os.environ.get("DPREG_DISABLE_NUMBA"):
        return None
    try:
        import numba
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    cache = os.path.isfile(_round_loop.__code__.co_filename)  # not from a zipped wheel
    return numba.njit(cache=cache, nogil=True)(_round_loop)


class BoostedRows:
    """BoostedAdaSSP's passes over the rows, one chunk at a time (no copy of the data's size).

    A chunk is given as column blocks side by side (1-D or 2-D row slices of equal length) of
    [X | y]: the regressors, then the response as the last column.  Each pass computes the
    chunk's design rows -- with ``scaling`` (a
    :class:`~dpreg.multivariate._common.PublicScaling`) the PUBLIC transform the estimator
    applies: clamp to the bounds, centre and scale, the ones column, the unit-ball factor, and
    the label clamped and scaled -- and clips every row to ‖z‖₂ <= ``x_norm_bound``
    (z·B/‖z‖ where ‖z‖ > B, the squared norm summed over the columns in order).  Every step is
    per record and uses public quantities only, so a pass computes, on the clipped rows,

    * :meth:`gram`: Σ over chunks of ZᵀZ (= XᵀX of the clipped design), and
    * :meth:`gradient`: Σ over chunks of Zᵀ clip(ỹ − Zθ, −τ, τ) (one boosting round's Xᵀg).

    These equal the whole-array products up to the floating-point summation order.  A pass is
    a :class:`~dpreg._source.ArraySource` reduction; the same rows are recomputed identically
    in every pass.  A round runs as one compiled loop per chunk where numba is installed, and
    as NumPy expressions otherwise -- the same operations in the same order (sums over the
    columns and over the rows of a chunk taken in order), so the same release bit for bit.
    """

    def __init__(self, x_norm_bound: float, scaling: Any = None) -> None:
        self.bound = float(x_norm_bound)
        self.scaling = scaling
        self._z: np.ndarray | None = None
        self._raw: np.ndarray | None = None

    def _buffers(self, m: int, p: int) -> tuple[np.ndarray, np.ndarray]:
        if self._z is None or self._z.shape[1] < m or self._z.shape[0] != p + 1:
            self._z = np.empty((p + 1, max(m, 1)))  # one row per column: contiguous steps
        return self._z[:p, :m], self._z[p, :m]

    @staticmethod
    def _dims(parts: Any) -> tuple[int, int]:
        return parts[0].shape[0], sum(1 if np.ndim(b) == 1 else b.shape[1] for b in parts) - 1

    def rows(self, parts: Any) -> tuple[np.ndarray, np.ndarray]:
        """(Zᵀ, ỹ) of one chunk: the design rows as the columns of a p×m view of the work
        buffer, and the label; valid until the next call."""
        m, d = self._dims(parts)
        sc = self.scaling
        ZT, yv = self._buffers(m, d + (1 if sc is not None and sc.fit_intercept else 0))
        fill_rows(parts, sc, ZT, yv)  # the design rows and label (PublicScaling, in place)
        clip_columns(ZT, self.bound)  # ‖z‖² summed over the columns in order
        return ZT, yv

    def gram(self, source: Any) -> np.ndarray:
        """Σ ZᵀZ over the chunks of ``source`` (an in-memory, validated
        :class:`~dpreg._source.ArraySource` of [X | y])."""

        def blocks(parts: Any) -> np.ndarray:
            ZT, _ = self.rows(parts)
            return ZT @ ZT.T

        return _reduce(source, blocks)

    def gradient(self, source: Any, theta: np.ndarray, tau: float) -> np.ndarray:
        """Σ Zᵀ clip(ỹ − Zθ, −τ, τ) over the chunks of ``source``: one round's Xᵀg."""
        kernel = _round_kernel()
        theta = np.ascontiguousarray(theta, dtype=float)
        tau = float(tau)
        p = theta.size
        if kernel is not None:
            args = self._kernel_args(p)

            def compiled(parts: Any) -> np.ndarray:
                C, yraw = self._raw_chunk(parts)
                acc = np.zeros(p)
                if C.shape[0]:
                    kernel(C, yraw, *args, theta, tau, acc)
                return acc

            return _reduce(source, compiled)

        def blocks(parts: Any) -> np.ndarray:
            ZT, yv = self.rows(parts)
            if ZT.shape[1] == 0:
                return np.zeros(p)
            r = ZT[0] * theta[0]  # Zθ summed over the columns in order
            for k in range(1, p):
                r += ZT[k] * theta[k]
            g = np.clip(yv - r, -tau, tau)
            return np.cumsum(ZT * g, axis=1)[:, -1]  # Σ over the rows in order

        return _reduce(source, blocks)

    def _kernel_args(self, p: int) -> tuple[Any, ...]:
        sc = self.scaling
        if sc is None:  # the design as given: the neutral transform (x - 0) / 1
            return (np.full(p, -np.inf), np.full(p, np.inf), np.zeros(p), np.ones(p), 1.0, 0,
                    False, 0.0, 0.0, 0.0, 1.0, self.bound)
        yb = sc.y_bounds
        return (np.asarray(sc.lows, dtype=float), np.asarray(sc.highs, dtype=float),
                np.asarray(sc.shift, dtype=float), np.asarray(sc.scale, dtype=float),
                float(sc.column_factor), 1 if sc.fit_intercept else 0, yb is not None,
                float(yb[0]) if yb else 0.0, float(yb[1]) if yb else 0.0, float(sc.y_shift),
                float(sc.y_scale), self.bound)

    def _raw_chunk(self, parts: Any) -> tuple[np.ndarray, np.ndarray]:
        """The chunk's raw X (m×d float64) and y: a view of a single float64 X block, else
        the columns copied side by side into a work buffer (one contiguous row of the buffer
        per column: a plain copy, read by the loop as an m×d view)."""
        m, d = self._dims(parts)
        blocks = [np.asarray(b).reshape(m, -1) for b in parts]
        if len(blocks) == 2 and blocks[0].shape[1] == d and blocks[0].dtype == np.float64 \
                and blocks[1].dtype == np.float64:
            return blocks[0], blocks[1][:, 0]
        if self._raw is None or self._raw.shape[1] < m or self._raw.shape[0] != d + 1:
            self._raw = np.empty((d + 1, max(m, 1)))
        R = self._raw[:, :m]
        j = 0
        for b in blocks:
            R[j:j + b.shape[1]] = b.T
            j += b.shape[1]
        return R[:d].T, R[d]


def _reduce(source: Any, blocks: Any) -> np.ndarray:
    class _Stat:
        def __call__(self, chunk: np.ndarray) -> np.ndarray:
            return blocks([chunk])

    stat = _Stat()
    stat.blocks = blocks  # type: ignore[attr-defined]  # the column blocks side by side
    return source.reduce(source.columns, stat, checked=True)


def boosted_adassp(
    X: Any,
    y: Any,
    *,
    epsilon: float,
    delta: float,
    x_norm_bound: float = 1.0,
    tau: float = 1.0,
    n_rounds: int = 100,
    split: Any = "author",
    learning_rate: float = 1.0,
    schedule: str = "constant",
    lambda_rule: str = "wang",
    neighbouring: str | Neighbouring = "add-remove",
    failure_prob: float = 0.05,
    rng: Any = None,
    ledger: Any = None,
    names: Any = None,
) -> RegressionResults:
    """BoostedAdaSSP on the design ``X`` (include a ones column for an intercept).

    Parameters
    ----------
    X, y:
        Design and response.  Rows are clipped to ‖x‖₂ <= ``x_norm_bound`` (B_x; the paper fixes
        B_x = 1, so scale features to the unit ball with PUBLIC bounds first); residuals are
        clipped to [−τ, τ] every round, so y needs no bound.
    epsilon, delta:
        Target (ε, δ), δ > 0; converted to μ-GDP on the exact curve.
    tau, n_rounds:
        Residual clip τ (default 1) and number of rounds T (default 100) -- the paper's fixed
        hyperparameters.
    split:
        ``"author"`` (default; 1 : √T : 1, the split implied by the authors' code, which
        produced the paper's fixed-hyperparameter results), ``"equal"`` (1 : 1 : 1) or
        (a, b, c).  On real data the equal split is far worse (diabetes, ε = 1: median R²
        −5.3 vs 0.29 with the author split; docs/multivariate.md).
    learning_rate, schedule:
        θ ← θ + η_t·θ_t with η_t = ``learning_rate`` × {1, 1/t, 1/√t} for ``schedule`` in
        ``"constant"`` (default, the paper's choice), ``"1/t"``, ``"1/sqrt(t)"``.
    lambda_rule:
        ``"wang"`` (ridge λ >= 0 from a lower confidence bound of the noisy λ_min; default) or
        ``"literal"`` (λ̂ = λ_min + noise added raw, as printed in Alg. 1).
    neighbouring:
        ``"add-remove"`` (default) or ``"replace-one"``.
    failure_prob:
        ρ of Wang's λ rule (0.05).
    rng, ledger, names:
        Randomness; optional ledger charged with the composed μ-GDP after validation and before
        any noise; coefficient names.
    """
    Xa, ya = check_design(X, y)
    n, d = Xa.shape
    labels = column_names(X, d, names)
    source = ArraySource([Xa, ya], [f"c{j}" for j in range(d + 1)], validated=True)
    return _boosted(source, n=n, labels=labels, scaling=None, epsilon=epsilon, delta=delta,
                    x_norm_bound=x_norm_bound, tau=tau, n_rounds=n_rounds, split=split,
                    learning_rate=learning_rate, schedule=schedule, lambda_rule=lambda_rule,
                    neighbouring=neighbouring, failure_prob=failure_prob, rng=rng,
                    ledger=ledger)


def boosted_adassp_scaled(
    source: Any, *, scaling: Any, epsilon: float, delta: float, x_norm_bound: float = 1.0,
    tau: float = 1.0, n_rounds: int = 100, split: Any = "author", learning_rate: float = 1.0,
    schedule: str = "constant", lambda_rule: str = "wang",
    neighbouring: str | Neighbouring = "add-remove", failure_prob: float = 0.05,
    rng: Any = None, ledger: Any = None,
) -> RegressionResults:
    """:func:`boosted_adassp` on the raw columns [X | y] of an in-memory, validated
    :class:`~dpreg._source.ArraySource` (e.g. the columns of a DataFrame), each chunk mapped
    by the PUBLIC ``scaling`` (:class:`~dpreg.multivariate._common.PublicScaling`) in a work
    buffer as it is read (:class:`BoostedRows`): the release of ``boosted_adassp(
    scaling.design(X), scaling.label(y), ...)`` -- the same rows, noise and accounting --
    without a copy of the design.  What :class:`~dpreg.linear_model.BoostedAdaSSP` runs."""
    if getattr(source, "kind", None) != "memory" or not getattr(source, "validated", False):
        raise InvalidInputError("BoostedAdaSSP needs the rows in memory (each round is a pass "
                                "over them): pass a validated in-memory ArraySource")
    n = int(source.n_rows)
    if scaling.n_columns != len(source.columns) - 1 + int(scaling.fit_intercept):
        raise InvalidInputError("scaling must have one pair of bounds per regressor column")
    labels = [f"x{j}" for j in range(scaling.n_columns)]  # as for the design array
    return _boosted(source, n=n, labels=labels, scaling=scaling, epsilon=epsilon, delta=delta,
                    x_norm_bound=x_norm_bound, tau=tau, n_rounds=n_rounds, split=split,
                    learning_rate=learning_rate, schedule=schedule, lambda_rule=lambda_rule,
                    neighbouring=neighbouring, failure_prob=failure_prob, rng=rng,
                    ledger=ledger)


def _boosted(source: Any, *, n: int, labels: list[str], scaling: Any, epsilon: float,
             delta: float, x_norm_bound: float, tau: float, n_rounds: int, split: Any,
             learning_rate: float, schedule: str, lambda_rule: str,
             neighbouring: str | Neighbouring, failure_prob: float, rng: Any,
             ledger: Any) -> RegressionResults:
    """The algorithm on the rows of ``source`` (validated, in memory), mapped by ``scaling``
    (or taken as the design when None) and clipped to ‖z‖₂ <= ``x_norm_bound``: the pipeline
    :func:`plan_boosted` -> :func:`boosted_statistics` -> the ledger charge (once, after
    validation, before any noise) -> :func:`release_boosted` -> :func:`boosted_result`."""
    plan = plan_boosted(d=len(labels), epsilon=epsilon, delta=delta, x_norm_bound=x_norm_bound,
                        tau=tau, n_rounds=n_rounds, split=split, learning_rate=learning_rate,
                        schedule=schedule, lambda_rule=lambda_rule, neighbouring=neighbouring,
                        failure_prob=failure_prob, scaling=scaling)
    if plan.relation is Neighbouring.REPLACE_ONE:  # n is public only under replace-one
        plan = replace(plan, n=check_int(n, "n", minimum=0))
    gen = check_rng(rng)
    stats = boosted_statistics(source, plan)
    charge(ledger, plan.budget, "BoostedAdaSSP", plan.relation)
    warn_if_not_private(plan.options["epsilon"], "BoostedAdaSSP")
    return boosted_result(release_boosted(stats, plan, gen, seeded=is_seeded(rng)),
                          names=labels)


def plan_boosted(*, d: int, epsilon: float, delta: float, x_norm_bound: float = 1.0,
                 tau: float = 1.0, n_rounds: int = 100, split: Any = "author",
                 learning_rate: float = 1.0, schedule: str = "constant",
                 lambda_rule: str = "wang", neighbouring: str | Neighbouring = "add-remove",
                 failure_prob: float = 0.05, n: int | None = None,
                 scaling: Any = None) -> ReleasePlan:
    """The public part of a BoostedAdaSSP release on d columns: every parameter checked (as
    :func:`boosted_adassp` documents them), the GDP accounting (:func:`boosted_budget` with the
    ratio of :func:`boosted_split`: μ of (ε, δ) split into μ₁ for XᵀX, μ₃ for λ_min and μ₂ for
    the T rounds, μ₂/√T each), the sensitivities under the relation and the noise sd
    σ = Δ/μ_i of each release.  Reads no data and draws nothing.

    ``parts``: ``XtX`` (μ₁), ``lambda_min`` (μ₃), ``Xtg_total`` (μ₂, all rounds) and
    ``Xtg_round`` (one round's share of μ₂); the charge (``budget``) composes μ₁, μ₃ and T
    rounds.  ``n``: the number of rows where it is PUBLIC (replace-one only).  ``scaling``: the
    public :class:`~dpreg.multivariate._common.PublicScaling` of the rows (None: the design as
    given).  ``options`` also carry the requested ε, δ and the whole ``mu``."""
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    bnd = check_positive(x_norm_bound, "x_norm_bound")
    tau_ = check_positive(tau, "tau")
    T = check_int(n_rounds, "n_rounds", minimum=1, maximum=100_000)
    ratio = boosted_split(split, T)
    eta = check_positive(learning_rate, "learning_rate")
    sched = check_choice(schedule, "schedule", SCHEDULES)
    rule = check_choice(lambda_rule, "lambda_rule", ("wang", "literal"))
    rel = check_neighbouring(neighbouring)
    fail = check_probability(failure_prob, "failure_prob")
    d = check_int(d, "d", minimum=1)
    mu, mu1, mu2, mu_round, mu3, charged = boosted_budget(eps, dlt, ratio, T)
    sens = {"XtX": gram_sensitivity(bnd, rel), "lambda_min": lambda_min_sensitivity(bnd, rel),
            "Xtg": xty_sensitivity(bnd, tau_, rel)}
    if n is not None:
        if rel is not Neighbouring.REPLACE_ONE:
            raise InvalidInputError("n must be None under add/remove neighbours (n is private "
                                    "there: only replace-one makes it public); got a number")
        n = check_int(n, "n", minimum=0)
    return ReleasePlan(
        method="boosted-adassp",
        options={"epsilon": eps, "delta": dlt, "mu": mu, "x_norm_bound": bnd, "tau": tau_,
                 "n_rounds": T, "split": ratio, "learning_rate": eta, "schedule": sched,
                 "lambda_rule": rule, "failure_prob": fail, "scaling": scaling},
        budget=charged, relation=rel,
        parts={"XtX": mu1, "lambda_min": mu3, "Xtg_total": mu2, "Xtg_round": mu_round},
        n=n, d=d, sensitivities=sens,
        noise={"XtX": gaussian_sigma(sens["XtX"], mu1),
               "lambda_min": gaussian_sigma(sens["lambda_min"], mu3),
               "Xtg": gaussian_sigma(sens["Xtg"], mu_round)})


class BoostedStatistics:
    """The statistics step of BoostedAdaSSP (deterministic, NOT private): XᵀX of the clipped
    rows (computed once, :meth:`BoostedRows.gram`) and :meth:`gradient`, one round's pass
    Σ z·clip(ỹ − z·θ, −τ, τ) over the rows at a given θ (:meth:`BoostedRows.gradient`) --
    a function of the rows and of the released θ of the previous rounds; it draws nothing.
    The release (:func:`release_boosted`) adds the noise."""

    def __init__(self, source: Any, rows: BoostedRows, tau: float) -> None:
        self._source, self._rows, self._tau = source, rows, float(tau)
        self.xtx = rows.gram(source)  # XᵀX of the row-clipped design, chunk by chunk

    @property
    def dim(self) -> int:
        return int(self.xtx.shape[0])

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        """Σ Zᵀ clip(ỹ − Zθ, −τ, τ) over the rows: one round's Xᵀg (exact)."""
        return self._rows.gradient(self._source, theta, self._tau)


def boosted_statistics(source: Any, plan: ReleasePlan) -> BoostedStatistics:
    """The statistics of ``plan`` (:func:`plan_boosted`) on the rows of ``source`` (a validated,
    in-memory :class:`~dpreg._source.ArraySource` of [X | y]), each chunk mapped by the plan's
    public scaling and clipped to its row-norm bound (:class:`BoostedRows`)."""
    o = plan.options
    return BoostedStatistics(source, BoostedRows(o["x_norm_bound"], o["scaling"]), o["tau"])


def release_boosted(stats: BoostedStatistics, plan: ReleasePlan, rng: Any, *,
                    seeded: bool = False) -> Release:
    """THE release of BoostedAdaSSP (Tang et al. 2023, Alg. 1) from its statistics and public
    ``plan``, with the Generator ``rng``: the noisy XᵀX (symmetric, μ₁) and λ_min (μ₃), the
    ridge (``lambda_rule``), then T rounds, each releasing Xᵀg at the current θ with μ₂/√T
    and stepping θ ← θ + η_t·(XᵀX^ + λI)⁺Xᵀg^.  Every draw is a Gaussian mechanism of
    :mod:`dpreg.mechanisms` at the plan's sensitivity and part; they compose in GDP to
    ``plan.budget`` under ``plan.relation`` (module doc).  Returns the
    :class:`~dpreg._spec.Release` with its :class:`PrivacyStatement`."""
    o, part, sens, sd = plan.options, plan.parts, plan.sensitivities, plan.noise
    d, T = int(plan.d), int(o["n_rounds"])  # type: ignore[arg-type]
    if stats.dim != d:
        raise InvalidInputError(f"stats must have the plan's {d} columns; got {stats.dim}")
    lam_min = max(0.0, float(np.linalg.eigvalsh(stats.xtx)[0]))
    xtx_hat = noisy_symmetric(stats.xtx, sensitivity=sens["XtX"], budget=part["XtX"], rng=rng)
    lam_hat = float(gaussian(lam_min, sensitivity=sens["lambda_min"], budget=part["lambda_min"],
                             rng=rng))
    if o["lambda_rule"] == "wang":
        lam_lower = max(0.0, lam_hat - sd["lambda_min"] * math.sqrt(math.log(6.0 / o["delta"])))
        lam = max(0.0, sd["XtX"] * math.sqrt(d * math.log(2.0 * d * d / o["failure_prob"]))
                  - lam_lower)
    else:
        lam = lam_hat
    gamma = np.linalg.pinv(xtx_hat + lam * np.eye(d), hermitian=True)

    etas = learning_rates(o["schedule"], o["learning_rate"], T)
    theta = np.zeros(d)
    releases = np.empty((T, d))
    # the T rounds' noise comes from one batched sampler call at the first round (bit for bit
    # the T successive gaussian() calls in seeded mode; secure mode stays exact): the rounds
    # are adaptive in the data, their noise is not
    release_xtg = gaussian_calls(T, sensitivity=sens["Xtg"], budget=part["Xtg_round"], rng=rng)
    for t in range(T):  # each round one pass: Xᵀg with g = clip(y − Xθ, −τ, τ)
        xtg_hat = np.asarray(release_xtg(stats.gradient(theta)), dtype=float)
        releases[t] = xtg_hat
        theta = theta + etas[t] * (gamma @ xtg_hat)
    if not np.all(np.isfinite(theta)):  # pragma: no cover - pinv keeps values finite
        raise InvalidInputError("BoostedAdaSSP diverged; use a smaller learning_rate")
    values = {"theta": theta, "ridge_lambda": lam, "xtg_releases": releases}
    return Release(plan, values, _boosted_statement(plan, seeded))


def _boosted_statement(plan: ReleasePlan, seeded: bool) -> PrivacyStatement:
    o, part = plan.options, plan.parts
    return PrivacyStatement(
        budget=plan.budget, neighbouring=plan.relation, mechanism="BoostedAdaSSP",
        source=SOURCE, seeded=seeded,
        details={
            "requested": {"epsilon": o["epsilon"], "delta": o["delta"]},
            "mu": o["mu"].mu, "mu_parts": {"XtX": part["XtX"].mu,
                                           "Xtg_total": part["Xtg_total"].mu,
                                           "Xtg_round": part["Xtg_round"].mu,
                                           "lambda_min": part["lambda_min"].mu},
            "split": list(o["split"]), "n_rounds": o["n_rounds"], "tau": o["tau"],
            "x_norm_bound": o["x_norm_bound"], "schedule": o["schedule"],
            "learning_rate": o["learning_rate"], "lambda_rule": o["lambda_rule"],
            "sensitivity": dict(plan.sensitivities),
            "noise_sd": {k: plan.noise[k] for k in ("XtX", "lambda_min", "Xtg")},
        },
    )


def boosted_result(release: Release, *, names: Sequence[str] | None = None
                   ) -> RegressionResults:
    """The :class:`~dpreg.inference.RegressionResults` of a BoostedAdaSSP release
    (post-processing): the coefficients, the ridge λ and the T released Xᵀg; no interval (the
    release clips residuals every round: :data:`NO_INTERVAL`)."""
    plan, v = release.plan, release.values
    d = int(plan.d)  # type: ignore[arg-type]
    labels = [f"x{j}" for j in range(d)] if names is None else [str(s) for s in names]
    return RegressionResults(
        v["theta"], names=labels, privacy=release.privacy, method="boosted-adassp",
        uncertainty=NO_INTERVAL, ci_method="none", no_fit_statistics=NO_FIT_STATISTICS,
        nobs=plan.n, extra={"ridge_lambda": v["ridge_lambda"],
                            "xtg_releases": v["xtg_releases"]},
    )
