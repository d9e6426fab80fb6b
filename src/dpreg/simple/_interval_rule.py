"""noisy-stats' public interval rule: whether the ``inference=True`` release is given an
interval, decided from public inputs only (n, ε, the x bounds).

Its own module (not :mod:`dpreg.simple._noisy_stats`) because the release's result type
(:mod:`dpreg.simple._result`) consults it too; the names are re-exported by
:mod:`dpreg.simple._noisy_stats`.
"""

from __future__ import annotations

import math

from dpreg._validation import check_bounds, check_epsilon, check_int
from dpreg.mechanisms.sensitivity import nvar_sensitivity

__all__ = ["INFERENCE_SPLIT", "INTERVAL_MAX_NVAR_NOISE_SHARE", "interval_nvar_noise_share",
           "interval_refusal"]

#: ε weights of ncov, nvar, intercept, nvar(y), x̄ when ``inference=True``
INFERENCE_SPLIT = (6.0, 6.0, 6.0, 1.0, 1.0)

#: the largest public nvar-noise share (:func:`interval_nvar_noise_share`) at which the
#: ``inference=True`` release is given a (bounded, default) interval; above it the interval is
#: refused from public inputs alone (:func:`interval_refusal`; docs/uncertainty.md,
#: "noisy-stats: the public interval rule")
INTERVAL_MAX_NVAR_NOISE_SHARE = 0.025


def interval_nvar_noise_share(n: int, epsilon: float, x_bounds: tuple[float, float]) -> float:
    """The public nvar-noise share of an ``inference=True`` release: the Laplace noise sd of
    the released nvar = Σ(x_i − x̄)², √2·b with b = (1 − 1/n)·w_x² / (0.3ε), divided by the
    largest nvar that x in its bounds can have, n·w_x²/4.  It depends on n and ε only (the
    widths cancel): 4√2·(1 − 1/n)/(0.3·n·ε) ≈ 18.9/(n·ε).  Public inputs only; nothing is
    read from data (ε = ∞: 0)."""
    xb = check_bounds(x_bounds, "x_bounds")
    n = check_int(n, "n", minimum=2)
    eps = check_epsilon(epsilon)
    if math.isinf(eps):
        return 0.0
    w = INFERENCE_SPLIT[1] / sum(INFERENCE_SPLIT)
    wx = xb[1] - xb[0]
    return math.sqrt(2.0) * nvar_sensitivity(xb, n) / (w * eps) / (n * wx * wx / 4.0)


def _interval_refusal_text(share: float, n: int, epsilon: float, *, released: bool) -> str:
    lim = INTERVAL_MAX_NVAR_NOISE_SHARE
    eps_min = epsilon * share / lim
    n_min = n  # share ∝ (1 − 1/n)/n at fixed ε: the smallest n at which it is <= lim
    while n_min < 10**9 and share * n * n * (n_min - 1) / ((n - 1) * n_min * n_min) > lim:
        n_min = max(n_min + 1, int(n_min * 1.01))
    when = ("by the public rule (the interval statistics were released, as inference=True "
            "asked)" if released else "before release")
    return (f"none: refused {when} -- at n = {n} and ε = {epsilon:g} the noise of the "
            f"interval release on Σ(x − x̄)² (Laplace sd) is {share:.1%} of the largest "
            f"Σ(x − x̄)² the public x bounds allow (n·w_x²/4); noisy-stats intervals need at "
            f"most {lim:.1%}. Above that the release cannot tell x's spread from the noise, and "
            f"on real data with a-priori bounds its bounded intervals under-cover "
            f"(docs/uncertainty.md, \"noisy-stats: the public interval rule\"). Use ε >= "
            f"{eps_min:.3g} at this n, or about {n_min} rows or more at this ε (the share "
            f"depends on n·ε only; narrower public bounds on x do not change it)")


def interval_refusal(n: int, epsilon: float, x_bounds: tuple[float, float], *,
                     released: bool = False) -> str:
    """The public interval rule of noisy-stats: the reason its interval is refused at these
    PUBLIC inputs, or ``""`` when it is offered.

    Refused when the noise share of nvar (:func:`interval_nvar_noise_share`, ≈ 18.9/(n·ε))
    exceeds :data:`INTERVAL_MAX_NVAR_NOISE_SHARE` = 2.5 %, i.e. roughly when n·ε < 755.  Every
    path consults this one function: the estimators (``inference="auto"`` makes the plain
    release; ``ci_alpha=`` / CLI ``--ci`` raise :class:`~dpreg.inference.NoUncertaintyError`
    before any noise is drawn or budget charged), the release's own ``conf_int``
    (``released=True``: the core ``noisy_stats(..., inference=True)`` releases as asked and
    its interval is refused), the per-group tables (NA interval columns) and the planner.

    Inputs: n (public: noisy-stats is stated under replace-one neighbours only, where n is
    public; its sensitivities use n too), ε and the public x bounds -- never the data or the
    release, so the refusal reveals nothing and selects no release.

    Notes
    -----
    Why 2.5 % (measured, docs/uncertainty.md "Real data of ordinary size"; 300 seeded releases
    per cell, B = 1000): the real-data cells whose default interval stayed under the target
    band had shares 3.7 % (boston, ε = 1), 7.5 % (boston, ε = 0.5) and 8.5 % (diabetes,
    ε = 0.5); the cells at shares <= 1.6 % (every ε = 4 cell of the three small sets, fair at
    every ε) were within 2 Monte Carlo SE of the band.  Whether a cell between is fine depends
    on how much of its bounds x fills -- a private fact -- so the rule takes the public share
    and leaves a margin below the smallest failing one (3.7 %) rather than fitting it: some
    cells that happened to cover (diabetes ε = 1, star98 ε <= 1) are refused too.  The share
    is the right public summary because the release's slope is ncov~/nvar~: when the noise of
    nvar~ is comparable to nvar the slope's law is far from what the bootstrap can recover
    (the exact inversion interval is then unbounded in most releases)."""
    share = interval_nvar_noise_share(n, epsilon, x_bounds)
    if share <= INTERVAL_MAX_NVAR_NOISE_SHARE:
        return ""
    return _interval_refusal_text(share, int(n), float(epsilon), released=released)
