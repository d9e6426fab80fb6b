"""Lower confidence bounds on the privacy loss from samples of M(D) and M(D′).

Method (DP-Sniper, Bichsel et al. 2021; Delta-Siege, Lokna et al. 2023; Clopper–Pearson as in
Ding et al. 2018).  Any event E gives a lower bound on the privacy loss of a mechanism M on a
neighbouring pair: ε >= ln(P[M(D) ∈ E] / P[M(D′) ∈ E]) for pure ε-DP, and for (ε, δ)-DP
P[M(D) ∈ E] − e^ε·P[M(D′) ∈ E] <= δ, the *hockey-stick divergence* at e^ε being the largest
such difference.  The auditor

1. splits the N samples of each side in a **selection half** and an **estimation half**;
2. on the selection half (itself split to *fit* and *choose*) builds candidate events --
   thresholds on every output coordinate, on linear projections (the mean difference scaled
   by the per-coordinate variances, and Fisher's discriminant with the pooled covariance), on
   a Gaussian (quadratic) log-likelihood-ratio score, on naive-Bayes log-likelihood-ratio
   scores from histograms at several resolutions (this covers unions of bins with the largest
   ratio, the DP-Sniper construction), and the failure event ⊥ -- and chooses the single
   event, in either direction, with the largest expected lower bound on the estimation half
   (computed on the choose part at the estimation half's size);
3. on the estimation half, which the choice never looked at, computes one-sided
   Clopper–Pearson bounds at level α/2 each, p_low for the numerator side and p_up for the
   denominator side, and reports

       ε_LCB = ln((p_low − δ)/p_up)        (δ = 0 for pure DP; 0 if p_low <= δ),
       hockey-stick LCB = p_low − e^ε·p_up.

With probability >= 1 − α (over the estimation half) ε_LCB is below the mechanism's true
privacy loss at δ on that pair, so a correct ε-DP (or (ε, δ)-DP) mechanism FAILS the audit
(ε_LCB > ε, equivalently hockey-stick LCB > δ) with probability at most α.  Sampling the
mechanism is the caller's job; floating-point samplers are assumed exact (the secure samplers
of :mod:`dpreg.mechanisms.secure` are).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from dpreg._validation import check_int, check_probability, check_rng
from dpreg.exceptions import InvalidInputError
from dpreg.privacy.budgets import GDP, ZCDP, ApproxDP, Budget, PureDP, zcdp_epsilon

__all__ = [
    "Claim",
    "Event",
    "AuditResult",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lcb",
    "audit_samples",
    "audit",
    "DEFAULT_ALPHA",
    "DEFAULT_SAMPLES",
    "AUDIT_DELTA",
]

DEFAULT_ALPHA = 1e-6
DEFAULT_SAMPLES = 100_000
#: δ at which zCDP and GDP claims are turned into an (ε, δ) claim to test
AUDIT_DELTA = 0.01
_N_CUTS = 256
_BIN_COUNTS = (8, 32, 128)


# ----------------------------------------------------------------------------- claims
@dataclass(frozen=True)
class Claim:
    """The (ε, δ) guarantee tested, with a readable label of where it comes from."""

    epsilon: float
    delta: float = 0.0
    label: str = ""

    @classmethod
    def from_budget(cls, budget: Budget, *, audit_delta: float = AUDIT_DELTA) -> Claim:
        """Pure and (ε, δ) budgets are tested as they are.  A ρ-zCDP budget is tested at
        (ε(ρ, δ₀), δ₀) with dpreg's zCDP conversion and a μ-GDP budget at (ε, δ₀) with ε the
        smallest value on its exact trade-off curve with δ_μ(ε) <= δ₀ (δ₀ = ``audit_delta``,
        default 0.01: a δ large enough to be measured with 10⁵ samples)."""
        if isinstance(budget, PureDP):
            return cls(budget.epsilon, 0.0, f"ε={budget.epsilon:g}")
        if isinstance(budget, ApproxDP):
            return cls(budget.epsilon, budget.delta, f"(ε={budget.epsilon:g}, δ={budget.delta:g})")
        if isinstance(budget, ZCDP):
            eps = zcdp_epsilon(budget.rho, audit_delta)
            return cls(eps, audit_delta, f"ρ={budget.rho:.4g}-zCDP at δ={audit_delta:g}")
        if isinstance(budget, GDP):
            eps = budget.to_approx(audit_delta).epsilon  # δ_μ(eps) <= audit_delta
            return cls(eps, audit_delta, f"μ={budget.mu:.4g}-GDP at δ={audit_delta:g}")
        raise InvalidInputError(f"cannot audit a claim of type {type(budget).__name__}")

    def __str__(self) -> str:
        return self.label or (f"ε={self.epsilon:g}" if self.delta == 0
                              else f"(ε={self.epsilon:g}, δ={self.delta:g})")


def as_claim(claim: Any, delta: float = 0.0) -> Claim:
    if isinstance(claim, Claim):
        return claim
    if isinstance(claim, Budget):
        return Claim.from_budget(claim)
    try:
        eps = float(claim)
    except (TypeError, ValueError):
        raise InvalidInputError(f"epsilon must be a number, a Budget or a Claim; got {claim!r}") from None
    if not eps > 0:
        raise InvalidInputError(f"epsilon must be > 0; got {claim!r}")
    dlt = float(delta)
    if not 0.0 <= dlt < 1.0:
        raise InvalidInputError(f"delta must satisfy 0 <= delta < 1; got {delta!r}")
    return Claim(eps, dlt)


# ----------------------------------------------------------------------------- Clopper–Pearson
def clopper_pearson_lower(k: Any, n: int, alpha: float) -> np.ndarray:
    """One-sided (1 − α) lower bound on a binomial p from k successes in n (0 for k = 0)."""
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        out = stats.beta.ppf(alpha, k, n - k + 1)
    return np.where(k <= 0, 0.0, np.nan_to_num(out, nan=0.0))


def clopper_pearson_upper(k: Any, n: int, alpha: float) -> np.ndarray:
    """One-sided (1 − α) upper bound on a binomial p from k successes in n (1 for k = n)."""
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        out = stats.beta.ppf(1.0 - alpha, k + 1, n - k)
    return np.where(k >= n, 1.0, np.nan_to_num(out, nan=1.0))


def epsilon_lcb(k_num: Any, k_den: Any, n_num: int, n_den: int, alpha: float,
                delta: float = 0.0) -> np.ndarray:
    """ε_LCB = ln((p_low − δ)/p_up) with one-sided Clopper–Pearson bounds at α/2 each
    (0 where p_low <= δ).  Vectorised over events."""
    lo = clopper_pearson_lower(k_num, n_num, alpha / 2.0)
    hi = clopper_pearson_upper(k_den, n_den, alpha / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.log((lo - delta) / hi)
    return np.where(lo > delta, np.maximum(val, 0.0), 0.0)


# ----------------------------------------------------------------------------- events
@dataclass(frozen=True)
class Event:
    """A measurable event of the output: ``feature`` compared with ``threshold``.

    ``numerator`` is the side whose probability is larger ("D" or "D'").
    """

    feature: str
    op: str
    threshold: float
    numerator: str

    def __str__(self) -> str:
        if self.feature == "⊥":
            what = "output is ⊥" if self.op == ">" else "output is not ⊥"
        else:
            what = f"{self.feature} {self.op} {self.threshold:.6g}"
        return f"{what} (more likely under {self.numerator})"


@dataclass
class _Feature:
    name: str
    fn: Callable[[np.ndarray], np.ndarray]


def _as_2d(out: Any) -> np.ndarray:
    arr = np.asarray(out, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise InvalidInputError(f"samples must be a 1-D or 2-D array; got shape {arr.shape}")
    big = np.finfo(np.float64).max
    return np.where(np.isinf(arr), np.sign(arr) * big, arr)


def _bottom(arr: np.ndarray) -> np.ndarray:
    """Rows that are ⊥ (all NaN)."""
    return np.all(np.isnan(arr), axis=1)


def _column(j: int) -> Callable[[np.ndarray], np.ndarray]:
    def column(a: np.ndarray) -> np.ndarray:
        return a[:, j]
    return column


def _projection(w: np.ndarray, centre: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    def projection(a: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.nan_to_num(a - centre, nan=0.0) @ w
        return out + np.where(_bottom(a), np.nan, 0.0)
    return projection


def _gaussian_fit(v: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Mean and a ridge-regularised covariance of the rows of v (None if degenerate)."""
    if v.shape[0] <= v.shape[1] + 1:
        return None
    mu = v.mean(axis=0)
    cov = np.atleast_2d(np.cov(v, rowvar=False))
    scale = float(np.trace(cov)) / cov.shape[0]
    if not np.isfinite(scale) or scale <= 0:
        return None
    return mu, cov + 1e-9 * scale * np.eye(cov.shape[0])


def _lda(va: np.ndarray, vb: np.ndarray) -> Callable[[np.ndarray], np.ndarray] | None:
    """Fisher's discriminant w = Σ⁻¹(μ_a − μ_b) with the pooled covariance: the most powerful
    linear event when both sides are Gaussian with a common covariance (e.g. the Gaussian
    mechanism on correlated coordinates)."""
    ga, gb = _gaussian_fit(va), _gaussian_fit(vb)
    if ga is None or gb is None:
        return None
    w = np.linalg.solve(0.5 * (ga[1] + gb[1]), ga[0] - gb[0])
    if not np.all(np.isfinite(w)) or not np.any(w != 0):
        return None
    return _projection(w, 0.5 * (ga[0] + gb[0]))


def _qda(va: np.ndarray, vb: np.ndarray) -> Callable[[np.ndarray], np.ndarray] | None:
    """Gaussian log-likelihood-ratio score log N(a; μ_a, Σ_a) − log N(a; μ_b, Σ_b): also sees a
    change of spread or correlation between the sides (data-dependent noise scales)."""
    ga, gb = _gaussian_fit(va), _gaussian_fit(vb)
    if ga is None or gb is None:
        return None
    (ma, ca), (mb, cb) = ga, gb
    try:
        ia, ib = np.linalg.inv(ca), np.linalg.inv(cb)
    except np.linalg.LinAlgError:
        return None
    la, lb = np.linalg.slogdet(ca)[1], np.linalg.slogdet(cb)[1]

    def score(a: np.ndarray) -> np.ndarray:
        x = np.nan_to_num(a, nan=0.0)
        da, db = x - ma, x - mb
        out = 0.5 * (np.einsum("ij,jk,ik->i", db, ib, db) - np.einsum("ij,jk,ik->i", da, ia, da)
                     + lb - la)
        return np.where(_bottom(a), np.nan, out)
    return score


def _make_features(fa: np.ndarray, fb: np.ndarray, names: Sequence[str]) -> list[_Feature]:
    """Features fitted on the *fit* part of the selection half (never the estimation half)."""
    k = fa.shape[1]
    feats: list[_Feature] = []
    for j in range(k):
        feats.append(_Feature(names[j], _column(j)))
    bot_a, bot_b = _bottom(fa), _bottom(fb)
    feats.append(_Feature("⊥", lambda a: _bottom(a).astype(float)))
    va, vb = fa[~bot_a], fb[~bot_b]
    if k > 1 and len(va) > 2 and len(vb) > 2:
        ma, mb = np.nanmean(va, axis=0), np.nanmean(vb, axis=0)
        sd = np.sqrt(0.5 * (np.nanvar(va, axis=0) + np.nanvar(vb, axis=0)))
        w = np.where(sd > 0, (ma - mb) / np.where(sd > 0, sd * sd, 1.0), 0.0)
        w = np.nan_to_num(w)
        if np.any(w != 0):
            centre = 0.5 * (ma + mb)
            feats.append(_Feature("projection", _projection(w, centre)))
        for label, make in (("discriminant (pooled covariance)", _lda),
                            ("Gaussian likelihood-ratio score", _qda)):
            fn = make(va, vb)
            if fn is not None:
                feats.append(_Feature(label, fn))
    na, nb = max(len(fa), 1), max(len(fb), 1)
    p_bot = math.log((bot_a.sum() + 0.5) / (na + 1.0)) - math.log((bot_b.sum() + 0.5) / (nb + 1.0))
    for bins in _BIN_COUNTS:
        edges_list, ratios = [], []
        for j in range(k):
            pooled = np.concatenate([fa[:, j], fb[:, j]])
            pooled = pooled[~np.isnan(pooled)]
            if pooled.size < 2:
                edges_list.append(np.array([]))
                ratios.append(np.zeros(1))
                continue
            edges = np.unique(np.quantile(pooled, np.linspace(0, 1, bins + 1)[1:-1]))
            ca = np.bincount(np.searchsorted(edges, fa[~np.isnan(fa[:, j]), j], side="right"),
                             minlength=edges.size + 1)
            cb = np.bincount(np.searchsorted(edges, fb[~np.isnan(fb[:, j]), j], side="right"),
                             minlength=edges.size + 1)
            r = np.log((ca + 0.5) / (ca.sum() + 0.5 * ca.size)) - np.log(
                (cb + 0.5) / (cb.sum() + 0.5 * cb.size))
            edges_list.append(edges)
            ratios.append(r)

        def score(a: np.ndarray, edges_list: list[np.ndarray] = edges_list,
                  ratios: list[np.ndarray] = ratios) -> np.ndarray:
            s = np.zeros(a.shape[0])
            for j, (e, r) in enumerate(zip(edges_list, ratios)):
                col = a[:, j]
                ok = ~np.isnan(col)
                idx = np.searchsorted(e, np.where(ok, col, 0.0), side="right")
                s += np.where(ok, r[np.minimum(idx, r.size - 1)], 0.0)
            return np.where(_bottom(a), p_bot, s)

        feats.append(_Feature(f"likelihood-ratio score ({bins} bins)", score))
    return feats


def _threshold_counts(va: np.ndarray, vb: np.ndarray, cuts: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Counts of {v > c} and {v <= c} on each side (NaN values are in neither)."""
    sa = np.sort(va[~np.isnan(va)])
    sb = np.sort(vb[~np.isnan(vb)])
    le_a = np.searchsorted(sa, cuts, side="right")
    le_b = np.searchsorted(sb, cuts, side="right")
    return sa.size - le_a, sb.size - le_b, le_a, le_b


def _cuts(va: np.ndarray, vb: np.ndarray) -> np.ndarray:
    pooled = np.concatenate([va, vb])
    pooled = pooled[~np.isnan(pooled)]
    if pooled.size == 0:
        return np.array([])
    uniq = np.unique(pooled)
    if uniq.size <= _N_CUTS:
        return uniq
    qs = np.quantile(pooled, np.linspace(0.0, 1.0, _N_CUTS))
    return np.unique(np.concatenate([qs, uniq[:8], uniq[-8:]]))


def _selection_score(k_num: np.ndarray, k_den: np.ndarray, n_num: int, n_den: int,
                     alpha: float, delta: float, scale: float) -> np.ndarray:
    """What the ε lower bound of each event is expected to be on the estimation half: the
    Clopper–Pearson bounds are computed from the choose part's frequencies at ``scale`` times
    its size (the estimation half is that much larger), and not floored at 0, so that events
    whose bound is still negative at this size are ranked too (a smaller deficit first)."""
    kn = np.asarray(k_num, dtype=float) * scale
    kd = np.asarray(k_den, dtype=float) * scale
    nn, nd = n_num * scale, n_den * scale
    lo = clopper_pearson_lower(kn, nn, alpha / 2.0)  # type: ignore[arg-type]
    hi = clopper_pearson_upper(kd, nd, alpha / 2.0)  # type: ignore[arg-type]
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.log((lo - delta) / hi)
    return np.where(lo > delta, val, -1e3 + (lo - delta))


def _select_event(features: list[_Feature], ca: np.ndarray, cb: np.ndarray, alpha: float,
                  delta: float, labels: tuple[str, str], scale: float = 1.0
                  ) -> tuple[Event, _Feature] | None:
    """The event with the largest expected ε lower bound on the estimation half (computed on the
    *choose* part, see :func:`_selection_score`), in either direction."""
    best: tuple[float, Event, _Feature] | None = None
    na, nb = ca.shape[0], cb.shape[0]
    for feat in features:
        va, vb = feat.fn(ca), feat.fn(cb)
        cuts = _cuts(va, vb)
        if cuts.size == 0:
            continue
        gt_a, gt_b, le_a, le_b = _threshold_counts(va, vb, cuts)
        for op, ka, kb in ((">", gt_a, gt_b), ("<=", le_a, le_b)):
            for num, k_num, k_den, n_num, n_den in ((labels[0], ka, kb, na, nb),
                                                     (labels[1], kb, ka, nb, na)):
                lcb = _selection_score(k_num, k_den, n_num, n_den, alpha, delta, scale)
                # tie-break towards more probable events (more stable on the estimation half)
                score = lcb + 1e-9 * k_num / max(n_num, 1)
                i = int(np.argmax(score))
                if best is None or score[i] > best[0]:
                    best = (float(score[i]), Event(feat.name, op, float(cuts[i]), num), feat)
    return None if best is None else (best[1], best[2])


def _count(feat: _Feature, ev: Event, arr: np.ndarray) -> int:
    v = feat.fn(arr)
    with np.errstate(invalid="ignore"):
        hit = v > ev.threshold if ev.op == ">" else v <= ev.threshold
    return int(np.count_nonzero(hit & ~np.isnan(v)))


# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class AuditResult:
    """Outcome of one audit (one mechanism, one neighbouring pair).

    ``epsilon_lcb`` is the (1 − α) lower confidence bound on the privacy loss at the claimed δ;
    ``hockey_stick_lcb`` the lower bound on P[E|num] − e^ε·P[E|den] (for δ > 0 claims the
    quantity compared with δ); ``passed`` is ``epsilon_lcb <= claim.epsilon``.
    """

    method: str
    pair: str
    samples: int
    alpha: float
    claim: Claim
    epsilon_lcb: float
    hockey_stick_lcb: float
    event: str
    counts: tuple[int, int, int]
    passed: bool
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def ratio(self) -> float:
        """ε_LCB / ε claimed (how much of the claimed loss the audit could demonstrate)."""
        return self.epsilon_lcb / self.claim.epsilon if self.claim.epsilon > 0 else math.nan

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method, "pair": self.pair, "samples": self.samples,
            "alpha": self.alpha, "epsilon": self.claim.epsilon, "delta": self.claim.delta,
            "claim": str(self.claim), "epsilon_lcb": self.epsilon_lcb,
            "ratio": self.ratio, "hockey_stick_lcb": self.hockey_stick_lcb,
            "event": self.event, "counts": {"numerator": self.counts[0],
                                            "denominator": self.counts[1],
                                            "per_side": self.counts[2]},
            "verdict": self.verdict, "passed": self.passed, "seconds": self.seconds,
            "details": dict(self.details),
        }


def audit_samples(
    out_d: Any, out_d_prime: Any, *, claim: Any, delta: float = 0.0,
    alpha: float = DEFAULT_ALPHA, rng: Any = None, method: str = "", pair: str = "",
    names: Sequence[str] | None = None, seconds: float = 0.0,
) -> AuditResult:
    """Audit from samples already drawn: ``out_d`` from M(D), ``out_d_prime`` from M(D′).

    Each is an array of N outputs (shape (N,) or (N, k); a row of NaN is ⊥).  ``claim`` is ε
    (with ``delta``), a :class:`~dpreg.Budget` or a :class:`Claim`.  ``rng`` only drives the
    random split into selection and estimation halves.
    """
    cl = as_claim(claim, delta)
    a_alpha = check_probability(alpha, "alpha")
    a, b = _as_2d(out_d), _as_2d(out_d_prime)
    if a.shape[1] != b.shape[1]:
        raise InvalidInputError(f"both sides need the same number of output columns; got "
                                f"{a.shape[1]} and {b.shape[1]}")
    if min(a.shape[0], b.shape[0]) < 8:
        raise InvalidInputError("each side needs at least 8 samples")
    gen = check_rng(rng)
    a = a[gen.permutation(a.shape[0])]
    b = b[gen.permutation(b.shape[0])]
    ha, hb = a.shape[0] // 2, b.shape[0] // 2
    sel_a, est_a = a[:ha], a[ha:]
    sel_b, est_b = b[:hb], b[hb:]
    qa, qb = ha // 2, hb // 2
    cols = list(names) if names is not None else (
        ["output"] if a.shape[1] == 1 else [f"output[{j}]" for j in range(a.shape[1])])
    if len(cols) != a.shape[1]:
        raise InvalidInputError("names must have one entry per output column")
    feats = _make_features(sel_a[:qa], sel_b[:qb], cols)
    scale = min(len(est_a), len(est_b)) / max(min(ha - qa, hb - qb), 1)
    chosen = _select_event(feats, sel_a[qa:], sel_b[qb:], a_alpha, cl.delta, ("D", "D'"), scale)
    if chosen is None:
        ev_text, k_num, k_den, n_num, n_den = "no event (constant outputs)", 0, 0, len(est_a), len(est_b)
    else:
        ev, feat = chosen
        ka, kb = _count(feat, ev, est_a), _count(feat, ev, est_b)
        if ev.numerator == "D":
            k_num, k_den, n_num, n_den = ka, kb, len(est_a), len(est_b)
        else:
            k_num, k_den, n_num, n_den = kb, ka, len(est_b), len(est_a)
        ev_text = str(ev)
    lcb = float(epsilon_lcb(k_num, k_den, n_num, n_den, a_alpha, cl.delta))
    p_low = float(clopper_pearson_lower(k_num, n_num, a_alpha / 2.0))
    p_up = float(clopper_pearson_upper(k_den, n_den, a_alpha / 2.0))
    hs = p_low - math.exp(min(cl.epsilon, 700.0)) * p_up
    passed = bool(lcb <= cl.epsilon)
    return AuditResult(method, pair, int(min(a.shape[0], b.shape[0])), a_alpha, cl, lcb, hs,
                       ev_text, (k_num, k_den, n_num), passed, seconds,
                       {"p_numerator_lower": p_low, "p_denominator_upper": p_up,
                        "estimation_half": n_num})


def audit(
    sampler: Callable[[Any, int, np.random.Generator], Any], d: Any, d_prime: Any, *,
    claim: Any, delta: float = 0.0, samples: int = DEFAULT_SAMPLES,
    alpha: float = DEFAULT_ALPHA, rng: Any = None, method: str = "", pair: str = "",
    names: Sequence[str] | None = None,
) -> AuditResult:
    """Empirical privacy audit of ``sampler`` on the neighbouring pair (``d``, ``d_prime``).

    ``sampler(data, n, rng)`` must return n independent outputs of the mechanism on ``data``
    (array of shape (n,) or (n, k); a row of NaN marks ⊥), drawing its randomness from ``rng``.
    ``claim`` is the guarantee to test: ε (plus ``delta``), a :class:`~dpreg.Budget` or a
    :class:`Claim`.  Returns an :class:`AuditResult` with ε_LCB, the chosen event, N, α and
    PASS/FAIL.  See the module doc for the method and its error guarantee (a correct
    mechanism fails with probability <= α).
    """
    import time

    n = check_int(samples, "samples", minimum=16)
    gen = check_rng(rng)
    seeds = gen.spawn(3)
    t0 = time.perf_counter()
    out_d = sampler(d, n, seeds[0])
    out_dp = sampler(d_prime, n, seeds[1])
    seconds = time.perf_counter() - t0
    return audit_samples(out_d, out_dp, claim=claim, delta=delta, alpha=alpha, rng=seeds[2],
                         method=method, pair=pair, names=names, seconds=seconds)
