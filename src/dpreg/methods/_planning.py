"""The pieces of the plans (:func:`dpreg.plan`) shared by the method specs: the public design a
plan is computed for, the expected error of a release (noise covariance, bias, P(⊥)) and the
closed-form or noise-only Monte Carlo computations of the sufficient-statistics methods.

Public inputs only: nothing here reads private data, and the random numbers drawn here are the
plan's own (a seeded simulation of the privacy noise on public statistics), never a release.

The public design
-----------------
:class:`PlanDesign` describes the n rows a release will see by their PUBLIC first and second
moments -- the mean and sd of every column and the correlations, declared in a codebook or
computed from a public reference sample -- or, with nothing declared, by the uniform-spread
assumption (every regressor uniform over its bounds, the response uniform and independent of
the regressors).  The sufficient-statistics methods (noisy-stats, adassp, covariance-ols,
dp-intercept) see the data only through n·E[w wᵀ], w = (1, x, y), so for them the declared
moments determine the statistics exactly; the other methods are simulated on synthetic rows
with these moments (:meth:`PlanDesign.rows`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["first_order_cov", "scaling_transform", "PlanDesign", "ExpectedError",
           "noisy_stats_error", "dp_intercept_error", "adassp_error", "sscp_ols_error",
           "UNIFORM_NOTE", "NOISE_DRAWS", "tail_note", "robust_sd", "HEAVY_TAIL"]

#: what a plan without declared moments assumes (every plan output says it)
UNIFORM_NOTE = ("assumes every regressor spreads uniformly over its bounds (no public moments "
                "used): the figures are OPTIMISTIC when the data do not fill their bounds "
                "(the noise of the sufficient-statistics methods grows with bound width / data "
                "spread); declare public means, sds and correlations (codebook or design=) for "
                "an honest plan")
#: above this q = E[(nvar noise / nvar)²] the noisy-stats plan says its closed form is rough
#: (the series of 1/(1 + r) is then far from converged and the release heavy-tailed)
NOISY_DENOMINATOR_Q = 0.08
#: a coefficient whose draws have sd > HEAVY_TAIL × (IQR/1.349) is called heavy-tailed
HEAVY_TAIL = 2.0
#: noise draws of the Monte Carlo plans of the sufficient-statistics methods (cheap: one
#: (d+1)×(d+1) solve each; the sd they give is within ~2 % of its limit)
NOISE_DRAWS = 2000


def first_order_cov(A: np.ndarray, beta: np.ndarray, sd_a: float, sd_b: float) -> np.ndarray:
    """Cov of A⁻¹(E_b − E_A β) for independent Gaussian noise: E_b entries sd ``sd_b``, E_A a
    symmetric matrix whose upper-triangle entries have sd ``sd_a``."""
    p = beta.size
    sw = (sd_b ** 2) * np.eye(p) + (sd_a ** 2) * (
        float(beta @ beta) * np.eye(p) + np.outer(beta, beta) - np.diag(beta ** 2))
    Ai = np.linalg.inv(A)
    return Ai @ sw @ Ai


def scaling_transform(scaling: Any) -> np.ndarray:
    """The linear part T of ``scaling.to_original`` (original = T θ + c)."""
    p = scaling.n_columns
    c0 = np.concatenate([[scaling.to_original(np.zeros(p))[0]],
                         scaling.to_original(np.zeros(p))[1]])
    cols = []
    for j in range(p):
        e = np.zeros(p)
        e[j] = 1.0
        b0, bj = scaling.to_original(e)
        cols.append(np.concatenate([[b0], bj]) - c0)
    T = np.column_stack(cols)
    return T if scaling.fit_intercept else T[1:]


def _scaling_offset(scaling: Any) -> np.ndarray:
    """The constant part c of ``scaling.to_original`` (original = T θ + c)."""
    p = scaling.n_columns
    b0, bj = scaling.to_original(np.zeros(p))
    c = np.concatenate([[b0], bj])
    return c if scaling.fit_intercept else c[1:]


# ---------------------------------------------------------------------------- the design
@dataclass(frozen=True)
class PlanDesign:
    """The public design of a plan: n rows of the regressors ``x_names`` and the response
    ``y_name`` with public bounds, described by the population ``mean`` and covariance ``cov``
    of (x..., y) (divisor N).

    ``kind``: ``"uniform"`` (nothing declared: uniform spread, response independent),
    ``"declared"`` (moments from a codebook or a dict) or ``"reference"`` (a public reference
    sample, ``reference`` holds its rows clipped to the bounds, the response column last when
    ``reference_has_y``).  ``y_known``: the response's covariances with the regressors are
    declared, so the OLS coefficients (and hence the bias) are known; otherwise the plan is for
    a zero-slope truth and reports no bias.  ``notes``: the assumptions, in words.
    """

    n: int
    x_names: tuple[str, ...]
    y_name: str
    x_bounds: tuple[tuple[float, float], ...]
    y_bounds: tuple[float, float]
    fit_intercept: bool
    mean: np.ndarray
    cov: np.ndarray
    y_known: bool
    kind: str = "uniform"
    reference: np.ndarray | None = field(default=None, repr=False)
    reference_has_y: bool = False
    notes: tuple[str, ...] = ()
    source: str = ""

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def uniform(cls, n: int, x_names: Sequence[str], y_name: str,
                x_bounds: Sequence[tuple[float, float]], y_bounds: tuple[float, float],
                fit_intercept: bool) -> PlanDesign:
        """The uniform-spread assumption (nothing declared)."""
        bounds = [*x_bounds, y_bounds]
        mean = np.array([(lo + hi) / 2.0 for lo, hi in bounds])
        cov = np.diag([(hi - lo) ** 2 / 12.0 for lo, hi in bounds])
        return cls(int(n), tuple(x_names), y_name, tuple(map(tuple, x_bounds)),  # type: ignore[arg-type]
                   tuple(y_bounds), bool(fit_intercept), mean, cov, False,  # type: ignore[arg-type]
                   "uniform", notes=(UNIFORM_NOTE,))

    @classmethod
    def from_moments(cls, n: int, x_names: Sequence[str], y_name: str,
                     x_bounds: Sequence[tuple[float, float]], y_bounds: tuple[float, float],
                     fit_intercept: bool, moments: Any) -> PlanDesign:
        """From declared moments (:class:`dpreg.codebook.DeclaredMoments`, validated against
        the bounds): a column without declared moments is taken uniform over its bounds, a
        correlation not declared as 0 (both said in ``notes``); the response's relation is
        known when every regressor's correlation with it is declared.  Raises
        :class:`~dpreg.exceptions.InvalidInputError` when the correlation matrix of the model's
        columns is not positive semi-definite."""
        from dpreg.exceptions import InvalidInputError

        names = [*x_names, y_name]
        bounds = [*x_bounds, y_bounds]
        notes: list[str] = []
        missing = [c for c in x_names if c not in moments.mean]
        if missing:
            notes.append(f"no moments declared for {missing}: uniform spread over the bounds "
                         "assumed for them (optimistic when the data do not fill the bounds)")
        mean = np.array([moments.mean.get(c, (lo + hi) / 2.0) for c, (lo, hi) in
                         zip(names, bounds)])
        sd = np.array([moments.sd.get(c, (hi - lo) / math.sqrt(12.0)) for c, (lo, hi) in
                       zip(names, bounds)])
        k = len(x_names)
        R = np.eye(k + 1)
        undeclared = []
        for i in range(k + 1):
            for j in range(i + 1, k + 1):
                r = moments.correlation(names[i], names[j])
                if r is None:
                    if j < k and names[i] in moments.mean and names[j] in moments.mean:
                        undeclared.append(f"{names[i]}~{names[j]}")
                    r = 0.0
                R[i, j] = R[j, i] = r
        if undeclared:
            notes.append(f"correlations not declared, taken as 0: {', '.join(undeclared)}")
        y_known = y_name in moments.mean and all(
            moments.correlation(c, y_name) is not None for c in x_names)
        if not y_known:
            R[:k, k] = R[k, :k] = 0.0
            notes.append(f"the response's correlations with every regressor are not declared: "
                         f"noise planned for a zero-slope truth and the bias is not known "
                         f"(declare corr with {y_name!r} for it)")
        if float(np.linalg.eigvalsh(R)[0]) < -1e-9:
            raise InvalidInputError(
                f"the declared correlations of {names} are not a valid correlation matrix "
                "(not positive semi-definite): no variables have them")
        cov = R * np.outer(sd, sd)
        src = str(getattr(moments, "source", "") or "")
        return cls(int(n), tuple(x_names), y_name, tuple(map(tuple, x_bounds)),  # type: ignore[arg-type]
                   tuple(y_bounds), bool(fit_intercept), mean, cov, y_known,  # type: ignore[arg-type]
                   "declared", notes=tuple(notes), source=src)

    @classmethod
    def from_reference(cls, n: int, x_names: Sequence[str], y_name: str,
                       x_bounds: Sequence[tuple[float, float]], y_bounds: tuple[float, float],
                       fit_intercept: bool, X: np.ndarray, y: np.ndarray | None) -> PlanDesign:
        """From a PUBLIC reference sample (its rows clipped to the bounds; ``y`` None when it
        has no response column: the response is then taken independent of x, uniform over its
        bounds)."""
        lo = np.array([b[0] for b in x_bounds])
        hi = np.array([b[1] for b in x_bounds])
        Xc = np.clip(np.asarray(X, dtype=float), lo, hi)
        notes: list[str] = []
        if y is None:
            yc = None
            W = Xc
            ylo, yhi = y_bounds
            mean = np.concatenate([Xc.mean(axis=0), [(ylo + yhi) / 2.0]])
            k = Xc.shape[1]
            cov = np.zeros((k + 1, k + 1))
            cov[:k, :k] = np.atleast_2d(np.cov(Xc, rowvar=False, ddof=0))
            cov[k, k] = (yhi - ylo) ** 2 / 12.0
            notes.append(f"the reference design has no column {y_name!r}: noise planned for a "
                         "response independent of x (zero-slope truth); bias not known")
            ref = Xc
        else:
            yc = np.clip(np.asarray(y, dtype=float), *y_bounds)
            W = np.column_stack([Xc, yc])
            mean = W.mean(axis=0)
            cov = np.atleast_2d(np.cov(W, rowvar=False, ddof=0))
            ref = W
        return cls(int(n), tuple(x_names), y_name, tuple(map(tuple, x_bounds)),  # type: ignore[arg-type]
                   tuple(y_bounds), bool(fit_intercept), mean, cov, yc is not None,  # type: ignore[arg-type]
                   "reference", reference=ref, reference_has_y=yc is not None,
                   notes=tuple(notes))

    # -- facts ------------------------------------------------------------------------------
    @property
    def k(self) -> int:
        return len(self.x_names)

    @property
    def names(self) -> list[str]:
        """The coefficient names (``intercept`` first when fitted)."""
        return (["intercept"] if self.fit_intercept else []) + list(self.x_names)

    def second_moments(self) -> np.ndarray:
        """E[w wᵀ] for w = (1, x..., y)."""
        m = self.mean
        M = np.empty((self.k + 2, self.k + 2))
        M[0, 0] = 1.0
        M[0, 1:] = M[1:, 0] = m
        M[1:, 1:] = self.cov + np.outer(m, m)
        return M

    def ols(self) -> np.ndarray | None:
        """The OLS coefficients the moments imply (intercept first when fitted); ``None`` when
        the response's relation is not declared."""
        if not self.y_known:
            return None
        k = self.k
        M = self.second_moments()
        idx = ([0] if self.fit_intercept else []) + list(range(1, k + 1))
        A = M[np.ix_(idx, idx)]
        b = M[idx, k + 1]
        return np.asarray(np.linalg.lstsq(A, b, rcond=None)[0], dtype=float)

    def describe(self) -> str:
        """One line: what the plan assumes about the rows."""
        if self.kind == "uniform":
            return ("uniform spread: n rows, every regressor uniform over its bounds, the "
                    "response uniform over its bounds and independent of the regressors")
        if self.kind == "reference":
            return ("a public reference design: its rows clipped to the bounds"
                    + ("" if self.reference_has_y else ", response not in it"))
        return ("declared public moments (mean, sd, correlations)"
                + (f" from {self.source}" if self.source else ""))

    # -- rows for the simulated methods -------------------------------------------------------
    def rows(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """n synthetic rows with this design, from ``numpy.random.default_rng(seed)``.

        uniform: x and y uniform over their bounds, independent (the historical plan design);
        reference: the reference rows (resampled with replacement to n rows when its size
        differs), the response drawn as in "declared" when the reference has none;
        declared: a Gaussian copula with the declared correlations of x and Beta margins on
        [lo, hi] with the declared mean and sd (a two-point margin on {lo, hi} when the sd is
        the largest possible), and y = the OLS line of the moments plus normal residuals of the
        implied residual variance (clipped to its bounds by the release, as real data are)."""
        g = np.random.default_rng(seed)
        n, k = self.n, self.k
        if self.kind == "uniform":
            X = np.column_stack([g.uniform(lo, hi, n) for lo, hi in self.x_bounds])
            return X, g.uniform(self.y_bounds[0], self.y_bounds[1], n)
        if self.kind == "reference":
            assert self.reference is not None
            ref = self.reference
            take = np.arange(n) if ref.shape[0] == n else g.integers(0, ref.shape[0], n)
            X = ref[take, :k]
            if self.reference_has_y:
                return X, ref[take, k]
            return X, self._response(X, g)
        X = self._copula(g, n)
        return X, self._response(X, g)

    def _copula(self, g: np.random.Generator, n: int) -> np.ndarray:
        from scipy import stats

        k = self.k
        sd = np.sqrt(np.diag(self.cov)[:k])
        R = self.cov[:k, :k] / np.outer(sd, sd)
        w, V = np.linalg.eigh(R)
        L = V * np.sqrt(np.clip(w, 0.0, None))
        U = stats.norm.cdf(g.standard_normal((n, k)) @ L.T)
        X = np.empty((n, k))
        for j, (lo, hi) in enumerate(self.x_bounds):
            X[:, j] = _margin(U[:, j], float(self.mean[j]), float(sd[j]), lo, hi)
        return X

    def _response(self, X: np.ndarray, g: np.random.Generator) -> np.ndarray:
        k = self.k
        lo, hi = self.y_bounds
        my, vy = float(self.mean[k]), float(self.cov[k, k])
        if not self.y_known:
            from scipy import stats

            U = stats.norm.cdf(g.standard_normal(X.shape[0]))
            return _margin(U, my, math.sqrt(vy), lo, hi)
        Sxx, sxy = self.cov[:k, :k], self.cov[:k, k]
        slope = np.linalg.lstsq(Sxx, sxy, rcond=None)[0]
        resid_var = max(vy - float(sxy @ slope), 0.0)
        # a synthetic public design (no release noise): residuals of the declared variance
        return (my + (X - self.mean[:k]) @ slope
                + math.sqrt(resid_var) * g.standard_normal(X.shape[0]))


def _margin(u: np.ndarray, mean: float, sd: float, lo: float, hi: float) -> np.ndarray:
    """The quantile function at ``u`` of the Beta law on [lo, hi] with this mean and sd (the
    two-point law on {lo, hi} when sd is the largest possible)."""
    from scipy import stats

    w = hi - lo
    m = (mean - lo) / w
    v = (sd / w) ** 2
    top = m * (1.0 - m)
    if m <= 0.0 or m >= 1.0:
        return np.full(u.shape, mean)
    if v >= top * (1.0 - 1e-6):
        return lo + w * (u > 1.0 - m)
    c = top / v - 1.0
    return lo + w * stats.beta.ppf(u, m * c, (1.0 - m) * c)


# ---------------------------------------------------------------------------- the answer
@dataclass(frozen=True)
class ExpectedError:
    """The expected error of one release on a :class:`PlanDesign`: ``cov``, the covariance of
    the released coefficients over the privacy noise (names as the design's, intercept first);
    ``bias``, E[release] − the design's OLS coefficients (``None`` when the response's relation
    is not declared); ``failure_probability``, P(⊥); ``interval_refusal_probability``, the
    probability that the interval rule refuses (``None``: the method has no such rule);
    ``how``, one line on how it was computed."""

    cov: np.ndarray
    bias: np.ndarray | None
    failure_probability: float
    how: str
    interval_refusal_probability: float | None = None
    #: caveats about these figures (shown with the plan's assumptions)
    notes: tuple[str, ...] = ()
    #: IQR/1.349 of the released coefficients (plans from draws; None for closed forms)
    robust_sd: np.ndarray | None = None


def _noise_generator(seed: int) -> np.random.Generator:
    # the plan's own noise (public seed; nothing released), separate from the rows' stream
    return np.random.default_rng(np.random.SeedSequence([int(seed), 2]))


def _sym_noise(g: np.random.Generator, draws: int, p: int) -> np.ndarray:
    """``draws`` symmetric p×p matrices with i.i.d. N(0, 1) upper triangles (diagonal
    included), mirrored: the noise structure of :func:`~dpreg.multivariate._common.
    noisy_symmetric`."""
    E = np.zeros((draws, p, p))
    iu = np.triu_indices(p)
    E[:, iu[0], iu[1]] = g.standard_normal((draws, iu[0].size))
    return E + np.triu(E, 1).transpose(0, 2, 1)


def robust_sd(draws: np.ndarray) -> np.ndarray | None:
    """IQR/1.349 per column (the sd for normal draws; insensitive to rare huge ones)."""
    if draws.ndim != 2 or draws.shape[0] < 20:
        return None
    q75, q25 = np.percentile(draws, [75, 25], axis=0)
    return np.asarray((q75 - q25) / 1.349, dtype=float)


def tail_note(draws: np.ndarray, names: Sequence[str]) -> tuple[str, ...]:
    """A caveat when the draws of a coefficient are heavy-tailed: sd > :data:`HEAVY_TAIL`
    times the robust sd (IQR/1.349; the two agree for normal noise, 1.4 for Laplace), i.e.
    the sd is dominated by rare large errors -- a few releases far off -- and the sd of a
    handful of releases will usually come out smaller."""
    if draws.shape[0] < 20:
        return ()
    sd = draws.std(axis=0, ddof=1)
    robust = robust_sd(draws)
    assert robust is not None
    heavy = [i for i in range(draws.shape[1]) if robust[i] > 0 and sd[i] > HEAVY_TAIL * robust[i]]
    if not heavy:
        return ()
    listed = ", ".join(f"{names[i]} {robust[i]:.3g}" for i in heavy)
    return (f"heavy-tailed release: the noise sd of {', '.join(names[i] for i in heavy)} is "
            f"dominated by rare large errors (sd > {HEAVY_TAIL:g}× the typical error); the "
            f"typical error (IQR/1.349) is {listed}, and the sd seen over a few releases is "
            "usually smaller than planned",)


def _summarise(coefs: np.ndarray, ok: np.ndarray, truth: np.ndarray | None, how: str,
               refusal: float | None = None, names: Sequence[str] = ()) -> ExpectedError:
    good = coefs[ok]
    p = coefs.shape[1]
    if good.shape[0] >= 2:
        cov = np.atleast_2d(np.cov(good, rowvar=False))
        bias = None if truth is None else good.mean(axis=0) - truth
    else:
        cov = np.full((p, p), math.nan)
        bias = None if truth is None else np.full(p, math.nan)
    notes = tail_note(good, list(names) or [f"coefficient {j}" for j in range(p)])
    return ExpectedError(cov, bias, float(1.0 - ok.mean()), how, refusal, notes,
                         robust_sd(good))


# ---------------------------------------------------------------------------- noisy-stats
def noisy_stats_error(design: PlanDesign, epsilon: float, inference: bool) -> ExpectedError:
    """DPSuffStats (Alabi et al. Alg. 1) in closed form on the design's statistics.

    nvar = n·var(x), ncov = n·cov(x, y) (the declared moments); the release divides
    ncov + L₁ by nvar + L₂ with L Laplace of scales b_cov, b_var (ε/3 each, or 0.3·ε with the
    interval's statistics).  With q = E[(L₂/nvar)²] = 2b_var²/nvar² and the series
    1/(1 + r) = 1 − r + r² − …: E[slope] = β(1 + q + 6q²), E[slope²] = (2b_cov²/nvar² + β²)
    (1 + 3q + 30q²) (Laplace moments E r⁴ = 6q²; valid while q is small, i.e. while ⊥ is rare);
    the intercept ȳ − slope·x̄ + Lap((w_y + |slope|w_x)/(n·ε₃)); ⊥ when the noisy nvar is <= 0:
    P = ½·exp(−nvar/b_var)."""
    from scipy import stats as st

    from dpreg import simple as core

    xb, yb, n = design.x_bounds[0], design.y_bounds, design.n
    sens = core.noisy_stats_sensitivities(xb, yb, n)
    share = (core.INFERENCE_SPLIT[0] / sum(core.INFERENCE_SPLIT) if inference else 1.0 / 3.0)
    e1 = epsilon * share
    wx, wy = xb[1] - xb[0], yb[1] - yb[0]
    nvar = n * float(design.cov[0, 0])
    ncov = n * float(design.cov[0, 1])
    beta = ncov / nvar
    xbar = float(design.mean[0])
    if math.isinf(epsilon):
        b_cov = b_var = 0.0
    else:
        b_cov, b_var = sens["ncov"] / e1, sens["nvar"] / e1
    q = 2.0 * b_var ** 2 / nvar ** 2
    ey, ey2 = 1.0 + q + 6.0 * q * q, 1.0 + 3.0 * q + 30.0 * q * q
    s1 = 2.0 * b_cov ** 2 / nvar ** 2
    m_slope = beta * ey
    var_slope = max((s1 + beta ** 2) * ey2 - (beta * ey) ** 2, 0.0)
    sd_slope = math.sqrt(var_slope)
    if sd_slope > 0:
        z = m_slope / sd_slope
        e_abs = sd_slope * math.sqrt(2.0 / math.pi) * math.exp(-z * z / 2.0) + m_slope * (
            1.0 - 2.0 * float(st.norm.cdf(-z)))
    else:
        e_abs = abs(m_slope)
    e_sq = m_slope ** 2 + var_slope
    e_d3sq = (wy ** 2 + 2.0 * wy * wx * e_abs + wx ** 2 * e_sq) / n ** 2
    lap_int = 0.0 if math.isinf(epsilon) else 2.0 * e_d3sq / e1 ** 2
    var_int = xbar ** 2 * var_slope + lap_int
    cov = np.array([[var_int, -xbar * var_slope], [-xbar * var_slope, var_slope]])
    bias = None
    if design.y_known:
        b_slope = m_slope - beta
        bias = np.array([-xbar * b_slope, b_slope])
    fail = 0.0 if b_var == 0 else 0.5 * math.exp(-nvar / b_var)
    notes: tuple[str, ...] = ()
    if q > NOISY_DENOMINATOR_Q:
        notes = (f"the Laplace noise of n·var(x) is {math.sqrt(q):.2g}× the design's n·var(x): "
                 "the released slope is a ratio with a denominator often near 0, heavy-tailed "
                 "(its sd is dominated by rare huge values), and the closed form is only a "
                 "rough guide; more rows, a larger ε or narrower public x bounds fix it",)
    return ExpectedError(cov, bias, fail, "analytic: Laplace noise of Alabi et al. Alg. 1 on "
                         "the design's n·var(x) and n·cov(x, y), the ratio expanded to 4th "
                         "order; P(⊥) = ½·exp(−nvar/b_var)", notes=notes)


def dp_intercept_error(design: PlanDesign, epsilon: float) -> ExpectedError:
    """DPIntercept: ȳ + Lap(w_y/(n·ε)) and a slope fixed at 0 (so its bias is −β)."""
    wy = design.y_bounds[1] - design.y_bounds[0]
    b = 0.0 if math.isinf(epsilon) else wy / (design.n * epsilon)
    cov = np.array([[2.0 * b * b, 0.0], [0.0, 0.0]])
    truth = design.ols()
    bias = None if truth is None else np.array([float(design.mean[-1]) - truth[0], -truth[1]])
    return ExpectedError(cov, bias, 0.0, "analytic: a Laplace mean of y, slope fixed at 0")


# ---------------------------------------------------------------------------- AdaSSP
def adassp_error(design: PlanDesign, *, epsilon: float, delta: float, options: Mapping[str, Any],
                 lambda_rule: str, floor_scale: float, seed: int,
                 draws: int = NOISE_DRAWS) -> ExpectedError:
    """AdaSSP (Wang 2018) on the design's exact sufficient statistics: XᵀX, Xᵀy of the
    estimator's public scaling computed from the moments, then ``draws`` seeded draws of the
    release's own Gaussian noise (the budget split, sensitivities and σ of
    :func:`~dpreg.multivariate.ssp.adassp_budget`) through its λ rule -- ``"wang"``: the noisy
    λ_min lower bound and Wang's ridge; ``"eigen-floor"``: the eigenvalue floor of
    :func:`~dpreg.multivariate.ssp.ssp_solve` -- and the solve.  A Monte Carlo of the noise
    alone (no rows are simulated): the second-order effects of the ridge, which dominate at
    small n·ε, are kept."""
    from dpreg.multivariate import PublicScaling, plan_adassp
    from dpreg.privacy import check_neighbouring

    rel = check_neighbouring(options.get("neighbouring", "add-remove"))
    intercept = design.fit_intercept
    sc = PublicScaling.from_bounds(list(design.x_bounds), design.y_bounds,
                                   fit_intercept=intercept)
    p, k = sc.n_columns, design.k
    # the estimator's own split: inference="auto" releases yᵀy whenever there is an intercept
    # or n is public (replace-one)
    infer_opt = options.get("inference", "auto")
    infer = bool(infer_opt) if infer_opt != "auto" else (
        intercept or rel.value == "replace-one")
    # the release's own plan: its split, sensitivities and noise sds (public inputs only)
    plan = plan_adassp(d=p, x_norm_bound=sc.row_norm_bound, y_bound=1.0, epsilon=epsilon,
                       delta=delta, neighbouring=rel,
                       failure_prob=float(options.get("failure_prob", 0.05)), inference=infer,
                       calibration=str(options.get("calibration", "gdp")),
                       count_index=0 if intercept else None, lambda_rule=lambda_rule,
                       floor_scale=floor_scale)
    fail = plan.options["failure_prob"]
    sd_xx, sd_xy = plan.noise["XtX"], plan.noise["Xty"]
    # w = (1, x, y) -> (z, ỹ): the estimator's scaling (clip to the bounds, centre, scale)
    Aw = np.zeros((p + 1, k + 2))
    off = 1 if intercept else 0
    if intercept:
        Aw[0, 0] = 1.0
    for j in range(k):
        Aw[off + j, 0] = -sc.shift[j] / sc.scale[j]
        Aw[off + j, 1 + j] = 1.0 / sc.scale[j]
    Aw[:p] *= sc.column_factor
    Aw[p, 0] = -sc.y_shift / sc.y_scale
    Aw[p, k + 1] = 1.0 / sc.y_scale
    G = design.n * (Aw @ design.second_moments() @ Aw.T)
    G = (G + G.T) / 2.0
    xtx, xty = G[:p, :p], G[:p, p]
    g = _noise_generator(seed)
    Ahat = xtx + sd_xx * _sym_noise(g, draws, p)
    bhat = xty + sd_xy * g.standard_normal((draws, p))
    if lambda_rule == "wang":
        sd_lam = plan.noise["lambda_min"]
        lam_min = max(0.0, float(np.linalg.eigvalsh(xtx)[0]))
        lam_noisy = lam_min + sd_lam * g.standard_normal(draws)
        lam_lower = np.maximum(0.0, lam_noisy - sd_lam * math.sqrt(math.log(6.0 / delta)))
        lam = np.maximum(0.0, sd_xx * math.sqrt(p * math.log(2.0 * p * p / fail)) - lam_lower)
        theta = np.linalg.solve(Ahat + lam[:, None, None] * np.eye(p), bhat[..., None])[..., 0]
        rule = "λ rule 'wang': the noisy λ_min lower bound (its own draw) and Wang's ridge"
    else:
        floor = floor_scale * sd_xx * math.sqrt(p)
        w, V = np.linalg.eigh(Ahat)
        w = np.maximum(w, floor)
        tol = np.finfo(float).eps * np.maximum(1.0, np.max(np.abs(w), axis=1)) * p
        ok = np.abs(w) > tol[:, None]
        inv = np.where(ok, 1.0 / np.where(ok, w, 1.0), 0.0)
        theta = np.einsum("kij,kj,klj,kl->ki", V, inv, V, bhat)
        rule = f"λ rule 'eigen-floor' (floor {floor_scale:g}·σ_XX·√d of the noisy XᵀX)"
    T = scaling_transform(sc)
    coefs = theta @ T.T + _scaling_offset(sc)
    finite = np.all(np.isfinite(coefs), axis=1)
    return _summarise(coefs, finite, design.ols(),
                      f"noise Monte Carlo: the design's exact sufficient statistics (from its "
                      f"moments) and {draws} seeded draws of AdaSSP's Gaussian noise "
                      f"(σ_XX={sd_xx:.3g}, σ_Xy={sd_xy:.3g} in the scaled units), {rule}; no "
                      "rows simulated", names=design.names)


# ---------------------------------------------------------------------------- CovarianceOLS
def sscp_ols_error(design: PlanDesign, *, epsilon: float, delta: float,
                   options: Mapping[str, Any], seed: int, draws: int = NOISE_DRAWS,
                   refusal_draws: int = 200) -> ExpectedError:
    """CovarianceOLS (Analyze Gauss on the [0, 1]-scaled SSCP matrix, PSD repair, sweep OLS)
    on the design's exact scaled SSCP matrix (from its moments) with ``draws`` seeded draws of
    the release's Gaussian noise, each repaired as :func:`~dpreg.covariance.calibration.
    repair_psd` does and solved for the OLS coefficients in original units as
    :func:`~dpreg.covariance.sweep.sweep_regression` does (batched; a draw whose regressor
    block is numerically singular is ⊥); the interval's refusal probability is
    the share of ``refusal_draws`` of them whose released matrix the interval rule
    (:class:`~dpreg.inference.dpci.ssp.SSCPModel`: κ = σ/λ_min of the released regressor block
    <= 0.5 and no repair of this model's block) refuses (``se="dp"``, the default)."""
    from dpreg.covariance import plan_sscp
    from dpreg.covariance.calibration import scaling_matrix
    from dpreg.inference.dpci.ssp import SSCPModel

    k = design.k
    bounds = [*design.x_bounds, design.y_bounds]
    # the release's own plan: its σ (scaled units) from public inputs only
    plan = plan_sscp(columns=[*(f"x{j}" for j in range(k)), "y"], bounds=bounds,
                     epsilon=epsilon, delta=delta,
                     neighbouring=options.get("neighbouring", "add-remove"),
                     calibration=str(options.get("calibration", "analytic")))
    rel, sigma = plan.relation, plan.noise["sscp"]
    # w = (1, x, y) -> d' = (1, (x − lo)/w, (y − lo)/w)
    P = k + 2
    A = np.zeros((P, P))
    A[0, 0] = 1.0
    for j, (lo, hi) in enumerate(bounds, start=1):
        A[j, 0] = -lo / (hi - lo)
        A[j, j] = 1.0 / (hi - lo)
    S = design.n * (A @ design.second_moments() @ A.T)
    S = (S + S.T) / 2.0
    g = _noise_generator(seed)
    noisy = S + sigma * _sym_noise(g, draws, P)
    x_idx = ([0] if design.fit_intercept else []) + list(range(1, k + 1))
    y_idx = k + 1
    # the PSD repair of :func:`repair_psd` on every draw at once: eigenvalues <= tol·max|λ|
    # are replaced by the smallest one above it (⊥ when none is)
    vals, vecs = np.linalg.eigh(noisy)
    thr = 1e-10 * np.max(np.abs(vals), axis=1, keepdims=True)
    good = vals > thr
    ok = good.any(axis=1) & (thr[:, 0] > 0)
    low = np.min(np.where(good, vals, np.inf), axis=1, keepdims=True)
    fixed = np.where(good, vals, np.where(np.isfinite(low), low, 0.0))
    repaired = np.einsum("kij,kj,klj->kil", vecs, fixed, vecs)
    # the sweep's OLS in original units, solved on the scaled matrix: M = T_xᵀĈT_x,
    # v = T_xᵀĈt_y (equilibrated: the same solution as the sweep's QR up to rounding)
    T = scaling_matrix(bounds)
    Tx, ty = T[:, x_idx], T[:, y_idx]
    M = np.einsum("ia,kij,jb->kab", Tx, repaired, Tx)
    v = np.einsum("ia,kij,j->ka", Tx, repaired, ty)
    dm = np.sqrt(np.clip(np.einsum("kaa->ka", M), 1e-300, None))
    with np.errstate(all="ignore"):
        Ms = M / (dm[:, :, None] * dm[:, None, :])
        conds = np.linalg.cond(Ms)
        ok &= np.isfinite(conds) & (conds < 1e12)
        coefs = np.full((draws, len(x_idx)), math.nan)
        if ok.any():
            coefs[ok] = np.linalg.solve(Ms[ok], (v[ok] / dm[ok])[..., None])[..., 0] / dm[ok]
    ok &= np.all(np.isfinite(coefs), axis=1)
    names = design.names
    se = str(options.get("se", "dp"))
    n_public = float(design.n) if rel.value == "replace-one" else None
    refused = checked = 0
    if se != "plugin":
        # κ = σ/λ_min of the released (unrepaired) regressor block first (vectorised): above
        # the limit the rule refuses whatever else holds; the full model only for the others
        lam_x = np.linalg.eigvalsh(noisy[:, x_idx][:, :, x_idx])[:, 0]
        with np.errstate(divide="ignore"):
            kappa = np.where(lam_x > 0, sigma / np.where(lam_x > 0, lam_x, 1.0), np.inf)
        for i in np.flatnonzero(ok)[:refusal_draws]:
            checked += 1
            if not kappa[i] <= SSCPModel.noise_ratio_limit:
                refused += 1
                continue
            model = SSCPModel(scaled_repaired=repaired[i], noisy_count=float(noisy[i, 0, 0]),
                              bounds=bounds, sigma=sigma, psd_tol=1e-10, n_public=n_public,
                              x_idx=x_idx, y_idx=y_idx, names=names, noisy_scaled=noisy[i])
            refused += not model.sufficient
    refusal = None if se == "plugin" or checked == 0 else refused / checked  # 0 draws: skipped
    return _summarise(coefs, ok, design.ols(),
                      f"noise Monte Carlo: the design's exact [0, 1]-scaled SSCP matrix (from "
                      f"its moments) and "
                      f"{draws} seeded draws of the Analyze-Gauss noise (σ={sigma:.3g}), each "
                      f"repaired and solved as the release is; no rows simulated",
                      refusal, names=design.names)
