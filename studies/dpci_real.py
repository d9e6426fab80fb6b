"""Coverage of the DP-aware intervals on real data of ordinary size (evaluation only).

Four real data sets between 200 and 10,000 rows, each with public a-priori bounds (stated in
:data:`REAL_SETS`, never read off the data), one multivariate formula (AdaSSP, covariance-ols)
and one single regressor (noisy-stats, Theil-Sen):

==========  ====================  ======  ==================================================
name        source                rows    model
==========  ====================  ======  ==================================================
diabetes    scikit-learn          442     progression ~ age + bmi + bp + s5  (simple: bmi)
star98      statsmodels           303     pct_above ~ LOWINC + PERMINTE + AVYRSEXP + PTRATIO
                                          (simple: LOWINC)
boston      ISLP                  506     medv ~ lstat + rm + ptratio  (simple: lstat)
fair        statsmodels           6,366   affairs ~ rate_marriage + age + yrs_married +
                                          religious  (simple: rate_marriage)
==========  ====================  ======  ==================================================

Two kinds of repetition (``kind``):

``residual``  the design's x rows resampled (n = the data set's size), y = full-data OLS fit +
              a resampled centred full-data residual: real x, real non-Gaussian errors, the
              homoscedastic linear model holds.  Truth: the OLS fit of the *clipped*
              population (a 2·10⁶-draw simulation), as in ``diabetes-residual`` of
              :mod:`studies.dpci`; for Theil-Sen the generating slope.
``fixed``     the data set itself every time; only the privacy noise varies.  Truth: the OLS
              fit of the clipped full data (Theil-Sen: its full-data Theil-Sen slope).  This
              is *conditional-on-data* coverage -- the question "does the interval cover the
              number I would get without privacy on these data?"; a DP-aware interval also
              allows for sampling error, so it should over-cover here, never under-cover.

Each repetition makes a real seeded release with the library (inference on; Theil-Sen: one
release per α with ``ci_alpha=α``, ε split in halves).  A release whose interval is *refused*
(:class:`~dpreg.inference.NoUncertaintyError`, e.g. AdaSSP when its release carries too little
information) counts as a refusal; coverage is over the releases that gave an interval.
Command line: ``python -m studies.dpci --real --method M --dataset D --kind K --epsilon E``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from dpreg.exceptions import InvalidInputError
from studies.dpci import Design, _ols, oracle_noise_draws, run_release

__all__ = ["REAL_SETS", "REAL_METHODS", "KINDS", "real_design", "real_coverage_study",
           "summarise_real"]

#: "adassp-wang": AdaSSP with Wang's λ_min ridge (the default before issue 30), on the same data
#: draws as "adassp" (a paired comparison of the two rules)
REAL_METHODS = ("noisy-stats", "adassp", "covariance-ols", "theil-sen", "adassp-wang")
KINDS = ("residual", "fixed")


@dataclass(frozen=True)
class RealSet:
    name: str
    source: str
    loader: Callable[[], pd.DataFrame]
    y: str
    x: tuple[str, ...]
    x1: str
    bounds: dict[str, tuple[float, float]]
    bounds_note: str


def _diabetes() -> pd.DataFrame:
    from dpreg.data import load_dataset

    return load_dataset("diabetes").frame


def _star98() -> pd.DataFrame:
    import statsmodels.api as sm

    d = sm.datasets.star98.load_pandas().data
    d = d.assign(pct_above=100.0 * d["NABOVE"] / (d["NABOVE"] + d["NBELOW"]))
    return d


def _boston() -> pd.DataFrame:
    from ISLP import load_data

    return load_data("Boston")


def _fair() -> pd.DataFrame:
    from dpreg.data import load_dataset

    return load_dataset("fair").frame


def _registry_bounds(name: str, cols: Sequence[str]) -> dict[str, tuple[float, float]]:
    from dpreg.data import load_dataset

    b = load_dataset(name).bounds
    return {c: (float(b[c][0]), float(b[c][1])) for c in cols}


def _auto() -> pd.DataFrame:
    from ISLP import load_data

    return load_data("Auto")


REAL_SETS: dict[str, RealSet] = {
    "diabetes": RealSet(
        "diabetes", "scikit-learn load_diabetes (original units)", _diabetes, "progression",
        ("age", "bmi", "bp", "s5"), "bmi",
        _registry_bounds("diabetes", ("progression", "age", "bmi", "bp", "s5")),
        "dpreg.data 'diabetes' bounds (clinical ranges; progression documented as 25-346)"),
    "star98": RealSet(
        "star98", "statsmodels star98 (California schools, 1998)", _star98, "pct_above",
        ("LOWINC", "PERMINTE", "AVYRSEXP", "PTRATIO"), "LOWINC",
        {"pct_above": (0.0, 100.0), "LOWINC": (0.0, 100.0), "PERMINTE": (0.0, 100.0),
         "AVYRSEXP": (0.0, 40.0), "PTRATIO": (5.0, 40.0)},
        "percentages in [0, 100] (pct_above = 100·NABOVE/(NABOVE+NBELOW)); teacher experience "
        "0-40 years; 5-40 pupils per teacher"),
    "boston": RealSet(
        "boston", "ISLP Boston (Harrison & Rubinfeld 1978)", _boston, "medv",
        ("lstat", "rm", "ptratio"), "lstat",
        {"medv": (0.0, 50.0), "lstat": (0.0, 100.0), "rm": (1.0, 12.0),
         "ptratio": (5.0, 40.0)},
        "medv in $1000s, documented as censored at 50; lstat a percentage; 1-12 rooms per "
        "dwelling; 5-40 pupils per teacher"),
    "fair": RealSet(
        "fair", "statsmodels fair (Fair 1978 affairs survey)", _fair, "affairs",
        ("rate_marriage", "age", "yrs_married", "religious"), "rate_marriage",
        _registry_bounds("fair", ("affairs", "rate_marriage", "age", "yrs_married",
                                  "religious")),
        "dpreg.data 'fair' bounds (the survey's answer codes; affairs bounded by 60)"),
    "auto": RealSet(
        "auto", "ISLP Auto (1970-82 cars, StatLib)", _auto, "mpg",
        ("horsepower", "weight"), "horsepower",
        {"mpg": (0.0, 60.0), "horsepower": (0.0, 300.0), "weight": (1000.0, 6000.0)},
        "fuel economy 0-60 miles per gallon; 0-300 horsepower; 1,000-6,000 lb (passenger "
        "cars of the period)"),
    # a second one-regressor model of diabetes (only noisy-stats' interval-rule study uses it):
    # age fills 13% of what its bounds allow (bmi 3%), so the release can show its spread
    "diabetes-age": RealSet(
        "diabetes-age", "scikit-learn load_diabetes (original units)", _diabetes, "progression",
        ("age", "bmi", "bp", "s5"), "age",
        _registry_bounds("diabetes", ("progression", "age", "bmi", "bp", "s5")),
        "dpreg.data 'diabetes' bounds (age 0-100 years; progression documented as 25-346)"),
}


def _clip(X: np.ndarray, y: np.ndarray, des: Design) -> tuple[np.ndarray, np.ndarray]:
    lo = np.array([b[0] for b in des.x_bounds])
    hi = np.array([b[1] for b in des.x_bounds])
    return np.clip(X, lo, hi), np.clip(y, *des.y_bounds)


@lru_cache(maxsize=32)
def real_design(name: str, kind: str, simple: bool) -> tuple[Design, int, np.ndarray]:
    """(design, n, truth) of data set ``name``: ``kind`` "residual" or "fixed", ``simple``
    for the one-regressor model.  ``truth`` is (intercept, slopes...) as in the module doc
    (the Theil-Sen truths come from :func:`theil_sen_truth`)."""
    if name not in REAL_SETS:
        raise InvalidInputError(f"dataset must be one of {list(REAL_SETS)}; got {name!r}")
    if kind not in KINDS:
        raise InvalidInputError(f"kind must be one of {list(KINDS)}; got {kind!r}")
    rs = REAL_SETS[name]
    cols = (rs.x1,) if simple else rs.x
    frame = rs.loader()[[*cols, rs.y]].dropna()
    X0 = frame[list(cols)].to_numpy(dtype=float)
    y0 = frame[rs.y].to_numpy(dtype=float)
    n = X0.shape[0]
    xb = tuple(rs.bounds[c] for c in cols)
    yb = rs.bounds[rs.y]
    if kind == "fixed":
        def sampler(m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
            return X0.copy(), y0.copy()

        des = Design(f"{name}-fixed", len(cols), xb, yb, sampler, lambda: np.zeros(1),
                     description="the data set itself; only the privacy noise varies",
                     x_names=cols)
        truth = _ols(*_clip(X0, y0, des))[0]
        return des, n, truth
    beta0, _ = _ols(X0, y0)
    resid = y0 - beta0[0] - X0 @ beta0[1:]
    resid = resid - resid.mean()

    def rsampler(m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = X0[rng.integers(0, n, m)]
        return X, beta0[0] + X @ beta0[1:] + resid[rng.integers(0, n, m)]

    des = Design(f"{name}-residual", len(cols), xb, yb, rsampler, lambda: np.zeros(1),
                 description="residual bootstrap of the full-data OLS fit", x_names=cols)
    rng = np.random.default_rng(np.random.SeedSequence(20261124, spawn_key=(len(name), n,
                                                                            len(cols))))
    Xp, yp = des.sample(2_000_000, rng)
    truth = _ols(Xp, yp)[0]
    return des, n, truth


@lru_cache(maxsize=32)
def theil_sen_truth(name: str, kind: str) -> float:
    """Slope the Theil-Sen interval targets: the generating slope (residual) or the
    full-data Theil-Sen slope of the clipped data (fixed)."""
    des, n, _ = real_design(name, kind, True)
    rs = REAL_SETS[name]
    frame = rs.loader()[[rs.x1, rs.y]].dropna()
    X0 = frame[[rs.x1]].to_numpy(dtype=float)
    y0 = frame[rs.y].to_numpy(dtype=float)
    if kind == "residual":
        return float(_ols(X0, y0)[0][1])
    from scipy.stats import theilslopes

    Xc, yc = _clip(X0, y0, des)
    return float(theilslopes(yc, Xc[:, 0]).slope)


def _theil_sen_release(X: np.ndarray, y: np.ndarray, des: Design, *, epsilon: float,
                       alpha: float, seed: int) -> Any:
    from dpreg.linear_model import DPTheilSen

    est = DPTheilSen(epsilon=epsilon, bounds_X=des.x_bounds[0], bounds_y=des.y_bounds,
                     ci_alpha=alpha, random_state=seed)
    return est.fit(X, y).results_


def real_coverage_study(method: str, dataset: str, kind: str, *, epsilon: float,
                        delta: float = 1e-6, reps: int = 200,
                        alphas: Sequence[float] = (0.05, 0.1), n_boot: int = 1000,
                        oracle_draws: int = 100, seed: int = 0,
                        ci_kind: str = "percentile") -> pd.DataFrame:
    """One row per repetition × α × parameter (see :func:`summarise_real`).  ``ci_kind``:
    the bootstrap interval construction (e.g. ``"inversion"`` for noisy-stats; an unbounded
    interval is recorded as covering and not informative)."""
    if method not in REAL_METHODS:
        raise InvalidInputError(f"method must be one of {list(REAL_METHODS)}; got {method!r}")
    simple = method in ("noisy-stats", "theil-sen")
    des, n, truth = real_design(dataset, kind, simple)
    names = ["intercept", *des.x_names]
    if method == "theil-sen":
        truth = np.array([math.nan, theil_sen_truth(dataset, kind)])
    dlt = None if method == "noisy-stats" else delta
    seed_method = "adassp" if method == "adassp-wang" else method  # paired data draws
    ss = np.random.SeedSequence(seed, spawn_key=(REAL_METHODS.index(seed_method),
                                                 list(REAL_SETS).index(dataset),
                                                 KINDS.index(kind), int(epsilon * 1000)))
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    for r, child in enumerate(ss.spawn(reps)):
        s_data, s_rel, s_orc = child.spawn(3)
        X, y = des.sample(n, np.random.default_rng(s_data))
        seed_rel = int(s_rel.generate_state(1, dtype=np.uint64)[0] >> 1)
        beta_np, se_np = _ols(X, y)
        if method == "theil-sen":
            from dpreg.simple.ci import nonprivate_theil_sen_ci

            for a in alphas:
                res = _theil_sen_release(X, y, des, epsilon=epsilon, alpha=a, seed=seed_rel)
                base = {"rep": r, "alpha": a, "param": names[1], "truth": truth[1]}
                if res.failed:
                    rows.append({**base, "failed": True, "refused": False})
                    continue
                ci = res.conf_int(a).iloc[1]  # the slope (the estimator names it x0)
                # oracle: Sen's classical interval (the ε = ∞ limit of the default
                # calibrated interval; narrower than Sarathy & Vadhan's α/8 version)
                npci = nonprivate_theil_sen_ci(X[:, 0], y, ci_alpha=a, approximation="normal")
                lo, hi = float(ci["lower"]), float(ci["upper"])
                rows.append({**base, "failed": False, "refused": False,
                             "estimate": float(res.params.iloc[1]), "lower": lo, "upper": hi,
                             "covered": bool(lo <= truth[1] <= hi), "width": hi - lo,
                             "oracle_width": npci.high - npci.low,
                             "informative": all(res.extra.get("ci_informative",
                                                              {}).values()),
                             "calibrated": all(res.extra.get("ci_calibrated",
                                                             {}).values()),
                             "np_covered": bool(npci.low <= truth[1] <= npci.high)})
            continue
        res = run_release(method, X, y, des, epsilon=epsilon, delta=dlt, n_boot=n_boot,
                          seed=seed_rel)
        if res.failed:
            rows.append({"rep": r, "failed": True, "refused": False})
            continue
        if res.bootstrap is None:
            rows.append({"rep": r, "failed": False, "refused": True,
                         "reason": res.uncertainty[:80]})
            continue
        draws = oracle_noise_draws(method, X, y, des, epsilon=epsilon, delta=dlt,
                                   size=oracle_draws, rng=np.random.default_rng(s_orc))
        est = res.params.to_numpy()
        for a in alphas:
            tq = float(stats.t.ppf(1 - a / 2, n - len(names)))
            w_np = 2.0 * tq * se_np
            w_noise = (np.quantile(draws, 1 - a / 2, axis=0) - np.quantile(draws, a / 2, axis=0)
                       if draws.shape[0] >= 20 else np.full(len(names), np.nan))
            oracle = np.sqrt(w_np**2 + w_noise**2)
            ci = res.conf_int(a) if ci_kind == "percentile" else \
                res.bootstrap.conf_int(a, kind=ci_kind)
            lo, hi = ci["lower"].to_numpy(), ci["upper"].to_numpy()
            for j, nm in enumerate(names):
                rows.append({
                    "rep": r, "failed": False, "refused": False, "alpha": a, "param": nm,
                    "truth": truth[j], "estimate": est[j], "lower": lo[j], "upper": hi[j],
                    "covered": bool(lo[j] <= truth[j] <= hi[j]), "width": hi[j] - lo[j],
                    "oracle_width": oracle[j],
                    "informative": bool(np.isfinite(lo[j]) and np.isfinite(hi[j])),
                    "reliable": bool(res.extra.get("dp_ci_reliable", True)),
                    "excludes_estimate": bool(est[j] < lo[j] or est[j] > hi[j]),
                    "np_covered": bool(abs(beta_np[j] - truth[j]) <= tq * se_np[j])})
    out = pd.DataFrame(rows)
    out.attrs.update(method=method, dataset=dataset, kind=kind, n=n, epsilon=epsilon,
                     reps=reps, n_boot=n_boot, seed=seed, seconds=time.time() - t0)
    return out


def summarise_real(df: pd.DataFrame) -> pd.DataFrame:
    """Per (α, parameter): releases with an interval, refusals, ⊥, coverage and its Monte
    Carlo SE, the band [1 − α − 0.01, 1 − α + 0.03] and the band widened by 2 MC SE, median
    width / oracle width (theil-sen: / the non-private Theil-Sen interval), share of
    uninformative (range-clipped) intervals and of intervals excluding their estimate."""
    a = df.attrs
    meta = {"method": a.get("method"), "dataset": a.get("dataset"), "kind": a.get("kind"),
            "n": a.get("n"), "epsilon": a.get("epsilon")}
    reps = int(a.get("reps", df["rep"].nunique()))
    refused = int(df.loc[df["refused"].astype(bool), "rep"].nunique()) if len(df) else 0
    failed = int(df.loc[df["failed"].astype(bool), "rep"].nunique()) if len(df) else 0
    ok = df[~df["failed"].astype(bool) & ~df["refused"].astype(bool)]
    if ok.empty:
        return pd.DataFrame([{**meta, "alpha": math.nan, "param": "all", "reps": reps,
                              "with_interval": 0, "refused": refused, "failed": failed,
                              "verdict": "refused" if refused else "failed"}])
    out = []
    for (al, p), g in ok.groupby(["alpha", "param"], sort=False):
        m = len(g)
        cov = float(g["covered"].astype(float).mean())
        nominal = 1.0 - float(al)
        se = math.sqrt(nominal * (1 - nominal) / m)
        lo_b, hi_b = nominal - 0.01, nominal + 0.03
        in_band = lo_b <= cov <= hi_b
        in_wide = lo_b - 2 * se <= cov <= hi_b + 2 * se
        ratio = (g["width"] / g["oracle_width"]).median()
        rel = g["reliable"].astype(bool) if "reliable" in g else pd.Series(True, index=g.index)
        cov_rel = float(g.loc[rel, "covered"].astype(float).mean()) if rel.any() else math.nan
        out.append({**meta, "alpha": al, "param": p, "reps": reps, "with_interval": m,
                    "refused": refused, "failed": failed, "coverage": cov, "mc_se": se,
                    "band_lo": lo_b, "band_hi": hi_b, "in_band": in_band,
                    "in_band_2se": in_wide, "median_width": float(g["width"].median()),
                    "median_width_ratio": float(ratio),
                    "uninformative": float((~g["informative"].astype(bool)).mean()),
                    "excludes_estimate": float(g.get("excludes_estimate", pd.Series(
                        False, index=g.index)).astype(float).mean()),
                    "np_coverage": float(g["np_covered"].astype(float).mean()),
                    "conservative": (float((~g["calibrated"].astype(bool)).mean())
                                     if "calibrated" in g else 0.0),
                    "flagged_unreliable": float((~rel).mean()),
                    "coverage_if_reliable": cov_rel,
                    "verdict": ("in band" if in_band else
                                "in band ±2 MC SE" if in_wide else
                                ("over" if cov > hi_b else "UNDER"))})
    return pd.DataFrame(out)


def run_cells(methods: Sequence[str], datasets: Sequence[str], kinds: Sequence[str],
              epsilons: Sequence[float], *, reps: int, seed: int, n_boot: int,
              out: str | None = None, progress: bool = True,
              ci_kind: str = "percentile") -> pd.DataFrame:
    """Every cell (method × data set × kind × ε), summaries concatenated (and written to
    ``out`` after every cell)."""
    tables = []
    for method in methods:
        for ds in datasets:
            for kind in kinds:
                for eps in epsilons:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        df = real_coverage_study(method, ds, kind, epsilon=eps, reps=reps,
                                                 seed=seed, n_boot=n_boot, ci_kind=ci_kind)
                    tab = summarise_real(df)
                    tab["seconds"] = round(df.attrs["seconds"], 1)
                    tables.append(tab)
                    if out:  # rewritten after every cell: a long run keeps what it did
                        pd.concat(tables, ignore_index=True).to_csv(out, index=False)
                    if progress:
                        with pd.option_context("display.width", 220, "display.max_columns", 30):
                            print(tab.round(4).to_string(index=False), flush=True)
    return pd.concat(tables, ignore_index=True)


def markdown_summary(tab: pd.DataFrame) -> str:
    """One Markdown row per method × data set × kind × ε: refusals, coverage range over the
    parameters at each α, cells in the band (and within 2 MC SE of it), median width ratio."""
    lines = ["| method | data set (n) | truth | ε | refused | coverage 95% (min–max) | "
             "coverage 90% (min–max) | in band / ±2 SE / cells | median width / oracle | "
             "flags |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    keys = ["method", "dataset", "kind", "epsilon"]
    for (m, ds, kind, eps), g in tab.groupby(keys, sort=False):
        reps = int(g["reps"].max())
        ref = int(g["refused"].max())
        fail = int(g["failed"].max()) if "failed" in g else 0
        head = f"| {m} | {ds} ({int(g['n'].iloc[0])}) | {kind} | {eps:g} | "
        refused = f"{ref}/{reps}" + (f" (⊥ {fail})" if fail else "")
        gi = g[g["with_interval"] > 0] if "with_interval" in g else g
        if gi.empty or gi["coverage"].isna().all():
            lines.append(head + f"{refused} | – | – | – | – | all refused |")
            continue

        def rng(a: float, gi: pd.DataFrame = gi) -> str:
            s = gi[np.isclose(gi["alpha"].astype(float), a)]["coverage"]
            return f"{s.min():.3f}–{s.max():.3f}" if len(s) else "–"

        inb = int(gi["in_band"].astype(bool).sum())
        in2 = int(gi["in_band_2se"].astype(bool).sum())
        wr = gi["median_width_ratio"]
        flags = []
        if "uninformative" in gi and gi["uninformative"].max() > 0:
            flags.append(f"range-clipped ≤ {gi['uninformative'].max():.0%}")
        if "conservative" in gi and gi["conservative"].max() > 0:
            flags.append(f"conservative (tight) {gi['conservative'].max():.0%}")
        if "excludes_estimate" in gi and gi["excludes_estimate"].max() > 0:
            flags.append(f"excl. estimate ≤ {gi['excludes_estimate'].max():.0%}")
        lines.append(head + f"{refused} | {rng(0.05)} | {rng(0.1)} | {inb} / {in2} / "
                     f"{len(gi)} | {wr.min():.2f}–{wr.max():.2f} | {'; '.join(flags) or '–'} |")
    return "\n".join(lines)
