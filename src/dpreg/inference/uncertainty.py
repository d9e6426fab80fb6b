"""Honest uncertainty for every dpreg estimator: which interval each method has, and why.

Every :class:`~dpreg.inference.RegressionResults` says how its standard errors and intervals
were obtained (``uncertainty``, plain words) and which construction ``conf_int`` uses
(``ci_method``).  The DP-aware intervals are post-processing of the release:

=====================  ===================================================================
method                 interval (``conf_int``)
=====================  ===================================================================
noisy-stats            ``inference=True``: parametric bootstrap of the release (ε split five
                       ways, two extra noisy statistics); default release: none
adassp                 ``inference=True``: parametric bootstrap (a fourth Gaussian release of
                       yᵀy from the same budget); default release: none
covariance-ols /       parametric bootstrap of the SSCP release (default; nothing extra is
SSCPRelease.regress    released); ``se="plugin"``: labelled plug-in SEs ignoring the noise
theil-sen-*            Sarathy–Vadhan DP interval for the slope, computed at fit time from
                       half of ε (``ci_alpha=``); only at that α; no intercept interval
boosted-adassp         none: residual clipping in every round makes the release a nonlinear
                       function of individual residuals that the released statistics do not
                       determine
tukey-em, dp-gd,       none: no valid interval is known that is post-processing of the
dp-intercept           release (TukeyEM's output is an exponential-mechanism draw over a depth
                       region; DP-GD's iterates depend on per-example clipping; the
                       intercept-only line has no slope to cover)
=====================  ===================================================================

The bootstrap engine is :mod:`dpreg.inference.dpci` (Ferrando, Wang & Sheldon 2022); the
coverage studies that back these claims are ``coverage_study`` of ``studies/dpci.py`` (source
repository only) and ``docs/uncertainty.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpreg.inference.dpci.engine import SOURCE, ParametricBootstrap

__all__ = [
    "bootstrap_kwargs",
    "point_estimates_only",
    "ci_label",
    "refusal_kwargs",
    "excluded_estimates",
]

def point_estimates_only(method: str) -> str:
    """The uncertainty text of a release without an interval whose method gave no reason of
    its own (each method's own reason is in its spec: ``dpreg.methods.get(m).interval``)."""
    return f"none: {method} releases point estimates only"


def ci_label(kind: str) -> str:
    return f"parametric bootstrap ({kind}) of the DP release — Ferrando, Wang & Sheldon 2022"


#: level at which an interval that excludes its own point estimate is flagged at fit time
EXCLUSION_CHECK_ALPHA = 0.05


def excluded_estimates(boot: ParametricBootstrap, point: Any,
                       alpha: float = EXCLUSION_CHECK_ALPHA) -> list[str]:
    """Names of the parameters whose (1 − α) bootstrap interval excludes the released point
    estimate ``point`` (post-processing: both are functions of the release)."""
    lo, hi = boot.interval_arrays(alpha)
    pt = np.asarray(point, dtype=float).ravel()
    out = (pt < lo) | (pt > hi)
    return [n for n, o in zip(boot.names, out) if bool(o)]


def _exclusion_note(names: list[str]) -> str:
    return (f". NOTE: the {1 - EXCLUSION_CHECK_ALPHA:.0%} interval of {', '.join(names)} excludes "
            f"the point estimate: AdaSSP's estimate is a ridge estimate shrunk toward 0 by λ, the "
            f"interval is for the un-shrunk coefficient (extra['dp_ci_excludes_estimate'])")


def refusal_kwargs(text: str, *, noise_ratio: float) -> dict[str, Any]:
    """RegressionResults keyword arguments for a release that was refused an interval
    (``conf_int`` raises :class:`~dpreg.inference.NoUncertaintyError` with ``text``); the
    ``extra_uncertainty`` entry is meant to be merged into the result's ``extra``."""
    return {"uncertainty": text, "ci_method": "none",
            "extra_uncertainty": {"dp_ci_noise_ratio": float(noise_ratio),
                                  "dp_ci_reliable": False, "dp_ci_refused": True}}


def bootstrap_kwargs(boot: ParametricBootstrap, *, what: str,
                     point: Any = None) -> dict[str, Any]:
    """RegressionResults keyword arguments for a DP-aware, bootstrap-backed result.

    ``bse`` is the analytic DP-aware standard error (sampling variance plus the delta-method
    variance of the privacy noise), ``conf_int`` is the bootstrap interval.  With ``point``
    (an estimate that is not the bootstrap's own centre, e.g. AdaSSP's ridge estimate) the
    95% intervals are computed now and any that exclude it are flagged
    (``extra['dp_ci_excludes_estimate']`` and a NOTE in the uncertainty text).
    """
    # the bootstrap-t reference only matters for the studentized construction
    src = SOURCE if boot.kind == "studentized" else SOURCE.split("; bootstrap-t")[0]
    text = (f"DP-aware: standard errors combine the sampling variance with the variance of the "
            f"privacy noise (delta method at the release); intervals are a parametric bootstrap "
            f"({boot.kind}, B={boot.n_boot}) that re-simulates data and privacy noise from {what} "
            f"(post-processing, no extra budget; {src})")
    kappa = float(boot.model.noise_ratio)
    if not boot.reliable:
        text += (f". WARNING: the privacy noise is large relative to the released statistics "
                 f"(noise ratio κ = {kappa:.3g} > {boot.model.noise_ratio_limit:g}); the "
                 f"interval is then only a rough approximation and under-covered in stress "
                 f"tests (docs/uncertainty.md)")
    extra: dict[str, Any] = {"bse_bootstrap_kind": boot.kind, "n_boot": boot.n_boot,
                             "dp_ci_noise_ratio": kappa, "dp_ci_reliable": boot.reliable}
    if point is not None:
        out = excluded_estimates(boot, point)
        extra["dp_ci_excludes_estimate"] = out
        if out:
            text += _exclusion_note(out)
    plugin_se = boot.plugin_se
    if plugin_se is not None:
        extra["bse_plugin_ignores_noise"] = [float(v) for v in np.asarray(plugin_se).ravel()]
    return {"bse": boot.se, "interval_fn": boot.conf_int, "uncertainty": text,
            "ci_method": ci_label(boot.kind), "bootstrap": boot, "extra_uncertainty": extra}


def affine_map(fn: Any, p: int) -> tuple[np.ndarray, np.ndarray]:
    """(A, c) with fn(θ) = Aθ + c for an affine ``fn`` from ℝᵖ (read off basis vectors)."""
    c = np.asarray(fn(np.zeros(p)), dtype=float)
    A = np.column_stack([np.asarray(fn(np.eye(p)[k]), dtype=float) - c for k in range(p)])
    return A, c


def reparametrised_kwargs(core: Any, fn: Any, names: list[str],
                          point: Any = None) -> dict[str, Any]:
    """RegressionResults keyword arguments for the DP-aware bootstrap of ``core`` (a result
    whose ``bootstrap`` lives on a publicly rescaled design) reported as φ = fn(θ) under
    ``names`` (same replicates' law; a fresh simulation seeded from the original one).  The
    ``extra_uncertainty`` entry is meant to be merged into the result's ``extra``.  ``point``:
    the reported estimate, checked against the 95% intervals when ``core`` was (see
    :func:`bootstrap_kwargs`)."""
    boot: ParametricBootstrap = core.bootstrap
    p = boot.estimate.size
    A, c = affine_map(fn, p)
    new = ParametricBootstrap(boot.model, n_boot=boot.n_boot, kind=boot.kind,
                              rng=int(boot._rng.integers(0, 2**63 - 1)),
                              transform=(A, c, names))
    check = point if "dp_ci_excludes_estimate" in core.extra else None
    kw = bootstrap_kwargs(new, what="the noisy statistics of the release", point=check)
    text = core.uncertainty.split(". NOTE: ")[0]  # already carries any reliability warning
    out = kw["extra_uncertainty"].get("dp_ci_excludes_estimate")
    kw["uncertainty"] = text + (_exclusion_note(out) if out else "")
    return kw


def bootstrap_rng(random_state: Any) -> Any:
    """Seed for the post-processing simulation that is independent of the release's noise
    stream: ``None`` stays ``None`` (fresh entropy); a seed or SeedSequence gives a child
    sequence tagged for the bootstrap (so a seeded run never replays its own noise); a
    Generator gives a seed drawn from it (its state has moved past the release)."""
    if random_state is None:
        return None
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.SeedSequence(random_state.entropy, spawn_key=(0xB007,))
    if isinstance(random_state, (int, np.integer)):
        return np.random.SeedSequence(int(random_state), spawn_key=(0xB007,))
    return None
