"""Seeded coverage studies of the DP-aware intervals (evaluation only).

A study repeats, ``reps`` times: draw a data set from a *design*, make a real DP release with
inference enabled (the library's own functional core / estimator, seeded), read its intervals
for every α, and record

* whether the interval covers the design's true coefficients;
* its width, and an **oracle width** √(w_np² + w_noise²): w_np is the non-private OLS interval
  width on the same (clipped) data, w_noise the central (1 − α) range of the DP estimate's law
  given the data (``oracle_draws`` runs of the mechanism on the true statistics) -- the "known
  noise spread";
* the naive plug-in interval, estimate ± z·(OLS standard error computed from the noisy
  statistics as if they were exact), which ignores the privacy noise.

Designs (``design(name, d)``; d = 1 for the simple methods, 3 for the multivariate ones):

``uniform``     x ~ U[0, 1]^d, Gaussian errors (σ = 0.1)
``clustered``   x from a few tight clusters (sd 0.03-0.05), Gaussian errors
``two-point``   every coordinate ∈ {0.25, 0.75} with probability ½, Gaussian errors
``t3``          x ~ U[0, 1]^d, errors 0.1·t₃/√3 (heavy tails, same variance)
``diabetes``    rows resampled with replacement from scikit-learn's diabetes data
                (progression on bmi, or on bmi + bp + s5); truth = the full-data OLS fit

The truth of a synthetic design is the population OLS fit of the *clipped* data (computed once
from 4·10⁶ draws), because a DP release with public bounds estimates the regression of the
clipped data.  Every release, bootstrap and oracle stream comes from
``numpy.random.SeedSequence(seed)``, so a study is reproducible from its arguments.

A research study, not part of the installed package.  Command line (from the root of a source
checkout): ``python -m studies.dpci --method noisy-stats --design all``.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from dpreg.exceptions import InvalidInputError

__all__ = ["Design", "design", "DESIGNS", "METHODS", "coverage_study", "STUDY_SETTINGS",
           "run_release", "oracle_noise_draws", "summarise"]

DESIGNS = ("uniform", "clustered", "two-point", "t3", "diabetes", "diabetes-residual")
METHODS = ("noisy-stats", "covariance-ols", "adassp")

#: (n, ε, δ) used for each method in docs/uncertainty.md (chosen before any coverage run so that
#: privacy noise and sampling error are of the same order on the uniform design)
STUDY_SETTINGS: dict[str, dict[str, Any]] = {
    "noisy-stats": {"n": 4000, "epsilon": 2.0, "delta": None},
    "covariance-ols": {"n": 50_000, "epsilon": 4.0, "delta": 1e-6},
    "adassp": {"n": 20_000, "epsilon": 2.0, "delta": 1e-6},
}

_SIGMA = 0.1
_BETA1 = (0.2, 0.5)                    # intercept, slope (simple designs)
_BETA3 = (0.1, 0.3, 0.2, -0.1)         # intercept, three slopes (multivariate designs)
_CENTRES1 = np.array([[0.2], [0.5], [0.8]])
_W1 = np.array([0.4, 0.2, 0.4])
_CENTRES3 = np.array([[0.2, 0.3, 0.7], [0.8, 0.6, 0.2], [0.5, 0.9, 0.5], [0.3, 0.2, 0.2]])
_W3 = np.array([0.3, 0.3, 0.2, 0.2])


@dataclass(frozen=True)
class Design:
    """A data-generating design with public bounds and a true coefficient vector."""

    name: str
    d: int
    x_bounds: tuple[tuple[float, float], ...]
    y_bounds: tuple[float, float]
    sampler: Callable[[int, np.random.Generator], tuple[np.ndarray, np.ndarray]] = field(
        repr=False)
    truth_fn: Callable[[], np.ndarray] = field(repr=False)
    description: str = ""
    x_names: tuple[str, ...] = ()

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X, y = self.sampler(n, rng)
        lo = np.array([b[0] for b in self.x_bounds])
        hi = np.array([b[1] for b in self.x_bounds])
        return np.clip(X, lo, hi), np.clip(y, *self.y_bounds)

    @property
    def truth(self) -> np.ndarray:
        """(intercept, slopes...) of the population the design draws from (clipped data)."""
        return self.truth_fn()


def _ols(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OLS with intercept: (coefficients, standard errors)."""
    Z = np.column_stack([np.ones(X.shape[0]), X])
    G = Z.T @ Z
    beta = np.linalg.solve(G, Z.T @ y)
    r = y - Z @ beta
    s2 = float(r @ r) / (Z.shape[0] - Z.shape[1])
    return beta, np.sqrt(s2 * np.diag(np.linalg.inv(G)))


def _synthetic(name: str, d: int) -> Design:
    beta = np.array(_BETA1 if d == 1 else _BETA3)
    centres, weights = (_CENTRES1, _W1) if d == 1 else (_CENTRES3, _W3)
    csd = 0.03 if d == 1 else 0.05

    def draw_x(n: int, rng: np.random.Generator) -> np.ndarray:
        if name == "clustered":
            k = rng.choice(len(weights), size=n, p=weights)
            return centres[k] + rng.normal(0.0, csd, (n, d))
        if name == "two-point":
            return np.where(rng.random((n, d)) < 0.5, 0.25, 0.75)
        return rng.random((n, d))

    def sampler(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = draw_x(n, rng)
        if name == "t3":
            e = _SIGMA * rng.standard_t(3, n) / math.sqrt(3.0)
        else:
            e = rng.normal(0.0, _SIGMA, n)
        return X, beta[0] + X @ beta[1:] + e

    xb = tuple((0.0, 1.0) for _ in range(d))
    yb = (0.0, 1.0) if d == 1 else (-0.5, 1.0)
    des = Design(name, d, xb, yb, sampler, lambda: np.zeros(d + 1),
                 description=_DESCRIPTIONS[name], x_names=tuple(f"x{j}" for j in range(d)))

    @lru_cache(maxsize=1)
    def truth() -> np.ndarray:
        rng = np.random.default_rng(np.random.SeedSequence(20240601, spawn_key=(d, len(name))))
        X, y = des.sample(4_000_000, rng)
        return _ols(X, y)[0]

    object.__setattr__(des, "truth_fn", truth)
    return des


_DESCRIPTIONS = {
    "uniform": "x ~ U[0,1]^d, Gaussian errors sd 0.1",
    "clustered": "x from tight clusters (sd 0.03 / 0.05), Gaussian errors sd 0.1",
    "two-point": "each x coordinate 0.25 or 0.75 (prob. 1/2), Gaussian errors sd 0.1",
    "t3": "x ~ U[0,1]^d, errors 0.1·t3/√3 (heavy tails)",
    "diabetes": "rows resampled from sklearn diabetes; truth = full-data OLS",
    "diabetes-residual": "sklearn diabetes rows of x resampled, y = full-data OLS fit + a "
                         "resampled full-data residual (residual bootstrap: real x and real, "
                         "non-Gaussian, homoscedastic errors); truth by simulation",
}


def _diabetes(d: int) -> Design:
    from dpreg.data import load_dataset

    ds = load_dataset("diabetes")
    cols = ("bmi",) if d == 1 else ("bmi", "bp", "s5")
    X0 = ds.frame[list(cols)].to_numpy(dtype=float)
    y0 = ds.frame[ds.y].to_numpy(dtype=float)
    xb = tuple(tuple(ds.bounds[c]) for c in cols)
    yb = (float(ds.bounds[ds.y][0]), float(ds.bounds[ds.y][1]))
    lo = np.array([b[0] for b in xb])
    hi = np.array([b[1] for b in xb])
    Xc, yc = np.clip(X0, lo, hi), np.clip(y0, yb[0], yb[1])
    beta = _ols(Xc, yc)[0]

    def sampler(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        idx = rng.integers(0, X0.shape[0], n)
        return X0[idx], y0[idx]

    return Design("diabetes", d, xb, yb, sampler, lambda: beta,  # type: ignore[arg-type]
                  description=_DESCRIPTIONS["diabetes"], x_names=cols)


def _diabetes_residual(d: int) -> Design:
    """Residual bootstrap of the diabetes regression: the model is the full-data OLS fit, so the
    homoscedastic linear model holds by construction while x and the error distribution are
    real (the pairs bootstrap of :func:`_diabetes` adds heteroscedasticity and
    misspecification, under which model-based intervals -- private or not -- undercover)."""
    base = _diabetes(d)
    from dpreg.data import load_dataset

    ds = load_dataset("diabetes")
    X0 = ds.frame[list(base.x_names)].to_numpy(dtype=float)
    y0 = ds.frame[ds.y].to_numpy(dtype=float)
    beta0, _ = _ols(X0, y0)
    resid = y0 - beta0[0] - X0 @ beta0[1:]
    resid = resid - resid.mean()

    def sampler(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = X0[rng.integers(0, X0.shape[0], n)]
        return X, beta0[0] + X @ beta0[1:] + resid[rng.integers(0, resid.size, n)]

    des = Design("diabetes-residual", d, base.x_bounds, base.y_bounds, sampler,
                 lambda: np.zeros(d + 1), description=_DESCRIPTIONS["diabetes-residual"],
                 x_names=base.x_names)

    @lru_cache(maxsize=1)
    def truth() -> np.ndarray:  # OLS of the clipped population, by a large simulation
        rng = np.random.default_rng(np.random.SeedSequence(20240602, spawn_key=(d,)))
        X, y = des.sample(4_000_000, rng)
        return _ols(X, y)[0]

    object.__setattr__(des, "truth_fn", truth)
    return des


@lru_cache(maxsize=16)
def design(name: str, d: int = 1) -> Design:
    """The design ``name`` (one of :data:`DESIGNS`) with ``d`` features (1 or 3)."""
    if name not in DESIGNS:
        raise InvalidInputError(f"design must be one of {list(DESIGNS)}; got {name!r}")
    if d not in (1, 3):
        raise InvalidInputError(f"d must be 1 or 3; got {d!r}")
    if name == "diabetes":
        return _diabetes(d)
    if name == "diabetes-residual":
        return _diabetes_residual(d)
    return _synthetic(name, d)


# --------------------------------------------------------------------------------------------
# one release and its oracle
# --------------------------------------------------------------------------------------------
def run_release(method: str, X: np.ndarray, y: np.ndarray, des: Design, *, epsilon: float,
                delta: float | None, n_boot: int, seed: int) -> Any:
    """A real DP release of ``method`` with inference on (a RegressionResults)."""
    xb = list(des.x_bounds)
    if method == "noisy-stats":
        from dpreg.simple import noisy_stats

        r = noisy_stats(X[:, 0], y, epsilon=epsilon, x_bounds=xb[0], y_bounds=des.y_bounds,
                        inference=True, rng=seed)
        return r.to_regression_results(n_boot=n_boot)
    from dpreg.exceptions import MechanismFailure
    from dpreg.linear_model import AdaSSP, CovarianceOLS

    if method == "covariance-ols":
        est: Any = CovarianceOLS(epsilon=epsilon, delta=delta, bounds_X=xb,
                                 bounds_y=des.y_bounds, n_boot=n_boot, random_state=seed)
    elif method in ("adassp", "adassp-wang"):  # the default (eigen floor) or Wang's λ_min ridge
        est = AdaSSP(epsilon=epsilon, delta=delta, bounds_X=xb, bounds_y=des.y_bounds,
                     inference=True, n_boot=n_boot, random_state=seed,
                     lambda_rule="wang" if method == "adassp-wang" else "eigen-floor")
    else:
        raise InvalidInputError(f"method must be one of {list(METHODS)}; got {method!r}")
    try:
        est.fit(X, y)
    except MechanismFailure:
        pass
    return est.results_


def oracle_noise_draws(method: str, X: np.ndarray, y: np.ndarray, des: Design, *,
                       epsilon: float, delta: float | None, size: int,
                       rng: np.random.Generator) -> np.ndarray:
    """``size`` DP estimates (intercept first) from the mechanism run on the TRUE statistics of
    (X, y): the law of the privacy noise given the data (⊥ runs dropped)."""
    xb = list(des.x_bounds)
    if method == "noisy-stats":
        from dpreg.privacy import PureDP
        from dpreg.simple._noisy_stats import (
            INFERENCE_SPLIT,
            noisy_stats_statistics,
            release_noisy_stats,
        )

        parts = PureDP(epsilon).split(INFERENCE_SPLIT)
        stats = noisy_stats_statistics(X[:, 0], y, xb[0], des.y_bounds).replicate(size)
        draw = release_noisy_stats(stats, x_bounds=xb[0], y_bounds=des.y_bounds,
                                   parts=parts[:3], rng=rng)
        ok = draw["reason"] == ""
        return np.column_stack([draw["intercept"], draw["slope"]])[ok]
    if method == "covariance-ols":
        from dpreg.covariance.calibration import analyze_gauss_sigma as sscp_sigma
        from dpreg.inference.dpci.ssp import batched_repair_psd, sym_normal
        from dpreg.privacy import Neighbouring

        bounds = xb + [des.y_bounds]
        lo = np.array([b[0] for b in bounds])
        hi = np.array([b[1] for b in bounds])
        arr = np.column_stack([X, y])
        D = np.column_stack([np.ones(arr.shape[0]), (np.clip(arr, lo, hi) - lo) / (hi - lo)])
        S = D.T @ D
        P = S.shape[0]
        _, sigma = sscp_sigma(P - 1, epsilon, float(delta), Neighbouring.ADD_REMOVE,  # type: ignore[arg-type]
                              "analytic")
        rep, ok = batched_repair_psd(S + sym_normal(size, P, sigma, rng), 1e-10)
        T = np.zeros((P, P))
        T[0, 0] = 1.0
        T[0, 1:] = lo
        T[np.arange(1, P), np.arange(1, P)] = hi - lo
        C = T.T @ rep @ T
        xi = list(range(P - 1))
        beta = np.linalg.solve(C[:, xi][:, :, xi], C[:, xi, P - 1][..., None])[..., 0]
        return beta[ok]
    if method in ("adassp", "adassp-wang"):
        from dpreg.inference.dpci.ssp import sym_normal
        from dpreg.inference.uncertainty import affine_map
        from dpreg.mechanisms.gaussian import gaussian_sigma
        from dpreg.mechanisms.sensitivity import (
            gram_sensitivity,
            lambda_min_sensitivity,
            xty_sensitivity,
        )
        from dpreg.multivariate._common import PublicScaling
        from dpreg.multivariate.ssp import EIGEN_FLOOR_SCALE, adassp_budget

        sc = PublicScaling.from_bounds(xb, des.y_bounds, fit_intercept=True)
        Z, yl = sc.design(X), sc.label(y)
        d = Z.shape[1]
        B, C = sc.row_norm_bound, 1.0
        # the estimator's default rule and split, with the interval's yᵀy share (inference on)
        plan = adassp_budget(epsilon, float(delta), inference=True,  # type: ignore[arg-type]
                             lambda_rule="wang" if method == "adassp-wang" else "eigen-floor")
        part = dict(zip(plan.releases, plan.parts))
        sd_xx = gaussian_sigma(gram_sensitivity(B, "add-remove"), part["XtX"])
        sd_xy = gaussian_sigma(xty_sensitivity(B, C, "add-remove"), part["Xty"])
        xtx, xty = Z.T @ Z, Z.T @ yl
        A = xtx + sym_normal(size, d, sd_xx, rng)
        b = xty + rng.normal(0.0, sd_xy, (size, d))
        if "lambda_min" in part:  # Wang's ridge from a released λ_min
            sd_lam = gaussian_sigma(lambda_min_sensitivity(B, "add-remove"), part["lambda_min"])
            lam_min = max(0.0, float(np.linalg.eigvalsh(xtx)[0]))
            log6 = math.log(6.0 / float(delta))  # type: ignore[arg-type]
            lam_noisy = lam_min + rng.normal(0.0, sd_lam, size)
            lower = np.maximum(0.0, lam_noisy - sd_lam * math.sqrt(log6))
            lam = np.maximum(0.0, sd_xx * math.sqrt(d * math.log(2.0 * d * d / 0.05)) - lower)
            theta = np.linalg.solve(A + lam[:, None, None] * np.eye(d), b[..., None])[..., 0]
        else:  # the eigenvalue floor of ssp_solve, batched
            w, V = np.linalg.eigh((A + np.swapaxes(A, 1, 2)) / 2.0)
            w = np.maximum(w, EIGEN_FLOOR_SCALE * sd_xx * math.sqrt(d))
            theta = np.einsum("bij,bj->bi", V, np.einsum("bji,bj->bi", V, b) / w)

        def to_params(th: np.ndarray) -> np.ndarray:
            b0, bj = sc.to_original(th)
            return np.concatenate([[b0], bj])

        Am, c = affine_map(to_params, d)
        return theta @ Am.T + c
    raise InvalidInputError(f"method must be one of {list(METHODS)}; got {method!r}")


# --------------------------------------------------------------------------------------------
# the study
# --------------------------------------------------------------------------------------------
def coverage_study(method: str, design_name: str, *, n: int | None = None,
                   epsilon: float | None = None, delta: float | None = None, reps: int = 2000,
                   alphas: Sequence[float] = (0.05, 0.1), n_boot: int = 2000,
                   kinds: Sequence[str] = ("percentile", "studentized", "basic"), oracle_draws: int = 400,
                   seed: int = 0, progress: bool = False) -> pd.DataFrame:
    """Run a coverage study; returns one row per repetition × parameter × α × interval kind
    (see :func:`summarise` for the table).  Defaults for n, ε, δ: :data:`STUDY_SETTINGS`."""
    if method not in METHODS:
        raise InvalidInputError(f"method must be one of {list(METHODS)}; got {method!r}")
    cfg = dict(STUDY_SETTINGS[method])
    n_ = int(n if n is not None else cfg["n"])
    eps = float(epsilon if epsilon is not None else cfg["epsilon"])
    dlt = delta if delta is not None else cfg["delta"]
    des = design(design_name, 1 if method == "noisy-stats" else 3)
    truth = des.truth
    names = ["intercept", *des.x_names]
    ss = np.random.SeedSequence(seed, spawn_key=(METHODS.index(method), DESIGNS.index(
        design_name)))
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    for r, child in enumerate(ss.spawn(reps)):
        s_data, s_rel, s_orc = child.spawn(3)
        X, y = des.sample(n_, np.random.default_rng(s_data))
        res = run_release(method, X, y, des, epsilon=eps, delta=dlt, n_boot=n_boot,
                          seed=int(s_rel.generate_state(1, dtype=np.uint64)[0] >> 1))
        if res.failed:
            rows.append({"rep": r, "failed": True})
            continue
        if res.bootstrap is None:  # interval refused (κ above the limit, issue 18)
            rows.append({"rep": r, "failed": True, "refused": True})
            continue
        est = res.params.to_numpy()
        plug = np.asarray(res.extra["bse_plugin_ignores_noise"], dtype=float)
        beta_np, se_np = _ols(X, y)
        draws = oracle_noise_draws(method, X, y, des, epsilon=eps, delta=dlt, size=oracle_draws,
                                   rng=np.random.default_rng(s_orc))
        for a in alphas:
            z = float(stats.norm.ppf(1 - a / 2))
            tq = float(stats.t.ppf(1 - a / 2, n_ - len(names)))
            w_np = 2.0 * tq * se_np
            w_noise = (np.quantile(draws, 1 - a / 2, axis=0) - np.quantile(draws, a / 2, axis=0)
                       if draws.shape[0] >= 20 else np.full(len(names), np.nan))
            oracle = np.sqrt(w_np**2 + w_noise**2)
            for kind in kinds:
                lo, hi = res.bootstrap.interval_arrays(a, kind)
                for j, name in enumerate(names):
                    rows.append({
                        "rep": r, "failed": False, "alpha": a, "kind": kind, "param": name,
                        "truth": truth[j], "estimate": est[j],
                        "lower": lo[j], "upper": hi[j],
                        "covered": bool(lo[j] <= truth[j] <= hi[j]),
                        "width": hi[j] - lo[j], "oracle_width": oracle[j],
                        "np_width": w_np[j], "noise_width": w_noise[j],
                        "naive_covered": bool(abs(est[j] - truth[j]) <= z * plug[j]),
                        "naive_width": 2 * z * plug[j],
                        "np_covered": bool(abs(beta_np[j] - truth[j]) <= tq * se_np[j]),
                        "boot_failure_rate": res.bootstrap.failure_rate,
                    })
        if progress and (r + 1) % max(1, reps // 10) == 0:
            print(f"  {method}/{design_name}: {r + 1}/{reps} reps, {time.time() - t0:.0f}s",
                  flush=True)
    out = pd.DataFrame(rows)
    out.attrs.update(method=method, design=design_name, n=n_, epsilon=eps, delta=dlt,
                     reps=reps, n_boot=n_boot, seed=seed, seconds=time.time() - t0)
    return out


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    """Per (α, kind, parameter): coverage (± its binomial SE), the target band, median width,
    median oracle width, median width/oracle ratio, naive plug-in coverage and width,
    non-private OLS coverage, median noise share of the oracle variance, ⊥ releases."""
    ok = df[~df["failed"].astype(bool)].copy()
    for col in ("covered", "naive_covered", "np_covered"):
        ok[col] = ok[col].astype(float)
    bad = df["failed"].astype(bool)
    failed = int(df.loc[bad, "rep"].nunique()) if bad.any() else 0
    g = ok.groupby(["alpha", "kind", "param"], sort=False)
    res = g.agg(reps=("covered", "size"), coverage=("covered", "mean"),
                naive_coverage=("naive_covered", "mean"), np_coverage=("np_covered", "mean"),
                median_width=("width", "median"), median_oracle=("oracle_width", "median"),
                median_naive_width=("naive_width", "median"))
    ratio = (ok["width"] / ok["oracle_width"]).groupby([ok["alpha"], ok["kind"], ok["param"]],
                                                       sort=False)
    res["median_ratio"] = ratio.median()
    res["p90_ratio"] = ratio.quantile(0.9)
    share = (ok["noise_width"] ** 2 / ok["oracle_width"] ** 2).groupby(
        [ok["alpha"], ok["kind"], ok["param"]], sort=False)
    res["noise_share"] = share.median()
    res["coverage_se"] = np.sqrt(res["coverage"] * (1 - res["coverage"]) / res["reps"])
    a = res.index.get_level_values("alpha").to_numpy(dtype=float)
    res["target_lo"] = 1 - a - 0.01
    res["target_hi"] = 1 - a + 0.03
    res["in_target"] = (res["coverage"] >= res["target_lo"]) & (res["coverage"] <= res["target_hi"])
    res["width_ok"] = res["median_ratio"] <= 1.5
    res["failed_releases"] = failed
    return res.reset_index()


def pool_summaries(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Pool :func:`summarise` tables of independent runs (different seeds) of the same cells:
    coverage and the naive / non-private coverages weighted by repetitions, the binomial SE of
    the pooled coverage, the band check on the pooled value, and the largest median width ratio
    of the runs.  Every run of a cell must be passed -- pooling only some runs would bias it."""
    df = pd.concat(list(frames), ignore_index=True)
    keys = ["method", "design", "alpha", "kind", "param"]
    w = df["reps"].astype(float)
    df = df.assign(_c=df["coverage"] * w, _nc=df["naive_coverage"] * w, _np=df["np_coverage"] * w)
    g = df.groupby(keys, sort=False)
    out = g.agg(runs=("reps", "size"), reps=("reps", "sum"), _c=("_c", "sum"), _nc=("_nc", "sum"),
                _np=("_np", "sum"), median_ratio_max=("median_ratio", "max")).reset_index()
    out["coverage"] = out.pop("_c") / out["reps"]
    out["naive_coverage"] = out.pop("_nc") / out["reps"]
    out["np_coverage"] = out.pop("_np") / out["reps"]
    out["coverage_se"] = np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["reps"])
    a = out["alpha"].to_numpy(dtype=float)
    out["target_lo"], out["target_hi"] = 1 - a - 0.01, 1 - a + 0.03
    out["in_target"] = (out["coverage"] >= out["target_lo"]) & (out["coverage"] <= out["target_hi"])
    out["width_ok"] = out["median_ratio_max"] <= 1.5
    return out


def _main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.dpci",
                                 description="Coverage studies of dpreg's DP-aware intervals")
    ap.add_argument("--pool", nargs="+", default=None, metavar="CSV",
                    help="pool summary CSVs of independent runs instead of running a study")
    ap.add_argument("--method", choices=METHODS)
    ap.add_argument("--design", default="all", choices=("all", *DESIGNS))
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--epsilon", type=float, default=None)
    ap.add_argument("--kinds", default="percentile,studentized,basic")
    ap.add_argument("--out", default=None, help="CSV file for the summary table")
    ap.add_argument("--real", action="store_true",
                    help="real-data study (studies/dpci_real.py): --real-methods, --datasets, "
                         "--real-kinds, --epsilons; summaries appended to --out")
    ap.add_argument("--real-methods", default="noisy-stats,adassp,covariance-ols,theil-sen")
    ap.add_argument("--datasets", default="diabetes,star98,boston,fair")
    ap.add_argument("--real-kinds", default="residual,fixed")
    ap.add_argument("--epsilons", default="0.5,1,4")
    ap.add_argument("--real-ci-kind", default="percentile",
                    help="interval construction of the real-data study (e.g. inversion)")
    args = ap.parse_args(argv)
    if args.real:
        from studies.dpci_real import run_cells

        run_cells(args.real_methods.split(","), args.datasets.split(","),
                  args.real_kinds.split(","), [float(e) for e in args.epsilons.split(",")],
                  reps=args.reps, seed=args.seed, n_boot=args.n_boot, out=args.out,
                  ci_kind=args.real_ci_kind)
        return
    if args.pool:
        pooled = pool_summaries([pd.read_csv(f) for f in args.pool])
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print(pooled.round(4).to_string(index=False))
        if args.out:
            pooled.to_csv(args.out, index=False)
        return
    if args.method is None:
        ap.error("--method is required unless --pool is given")
    names = DESIGNS if args.design == "all" else (args.design,)
    tables = []
    for nm in names:
        df = coverage_study(args.method, nm, n=args.n, epsilon=args.epsilon, reps=args.reps,
                            n_boot=args.n_boot, kinds=tuple(args.kinds.split(",")),
                            seed=args.seed, progress=True)
        tab = summarise(df)
        tab.insert(0, "design", nm)
        tab.insert(0, "method", args.method)
        tab["seconds"] = round(df.attrs["seconds"], 1)
        tab["n"], tab["epsilon"] = df.attrs["n"], df.attrs["epsilon"]
        tables.append(tab)
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print(tab.round(4).to_string(index=False), flush=True)
    out = pd.concat(tables, ignore_index=True)
    if args.out:
        out.to_csv(args.out, index=False)


if __name__ == "__main__":  # pragma: no cover - command line
    _main()
