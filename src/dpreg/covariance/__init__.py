"""Release once, analyse many: a DP sums-of-squares-and-cross-products (SSCP) matrix.

:func:`release_sscp` runs Analyze Gauss (Dwork, Talwar, Thakurta & Zhang 2014, as used by Bain,
D'Orazio, Sheffet & Vadhan 2014) on the (d+1)×(d+1) matrix DᵀD of the chosen columns plus a
leading intercept column of ones:

1. every column is clamped to its PUBLIC bounds [lo, hi] and scaled to [0, 1]:
   x' = (x − lo)/(hi − lo) (Bain et al. print the denominator with the wrong sign);
2. a row of D' = [1, x'] has squared norm <= d + 1, so the L2 sensitivity of the upper
   triangle of D'ᵀD' is d + 1 under add/remove and √2·(d + 1) under replace-one
   (:func:`dpreg.mechanisms.sensitivity.sscp_sensitivity`; Bain et al. say √d, which is the
   row norm, not the sensitivity);
3. i.i.d. Gaussian noise goes on the upper triangle including the diagonal and is mirrored;
   σ is the analytic (ε, δ) calibration (default) or the classical Δ√(2 ln(1.25/δ))/ε (ε < 1);
4. the noisy matrix is repaired to be positive definite (eigenvalues <= tol·λ_max are replaced by
   the smallest eigenvalue above it; no such eigenvalue → ⊥) and mapped back to original units
   with C = TᵀĈT, T₀₀ = 1, T₀ᵢ = lo_i, T_ii = hi_i − lo_i (exact, since D = D'T; the noisy
   intercept row supplies the count and sums, and PSD-ness is preserved).

:class:`SSCPRelease` stores the release with its metadata (JSON :meth:`~SSCPRelease.save` /
:meth:`~SSCPRelease.load`) and fits any OLS on any subset of the columns by post-processing
(:meth:`~SSCPRelease.regress`).  :func:`accuracy` / :func:`epsilon_for` are Bain et al.'s
getAccuracy/getParameters.

The release is :func:`plan_sscp` (public: bounds, checks, the budget, sensitivity and σ; reads
no data) -> :func:`sscp_statistics` (the exact scaled SSCP, in chunks) -> the ledger charge ->
:func:`release_sscp_matrix` (THE draw and the privacy statement) -> :func:`sscp_release_result`
(post-processing into an :class:`SSCPRelease`); :func:`release_sscp` runs exactly these steps.

Modules: :mod:`~dpreg.covariance.release` (:func:`release_sscp`, :class:`SSCPRelease`),
:mod:`~dpreg.covariance.calibration` (bounds, scaling, PSD repair, sensitivity → σ),
:mod:`~dpreg.covariance.planning` (accuracy planning), :mod:`~dpreg.covariance.sweep`
(regression from the matrix) and :mod:`~dpreg.covariance.io` (the versioned release file);
the last two read a release through :class:`~dpreg.covariance._view.ReleaseView`, so they do not
import ``release`` (which calls them).
Every public name is importable from ``dpreg.covariance``.
"""

# constants and the σ calibration are re-exported too (``X as X``), outside ``__all__``
from dpreg.covariance.calibration import INTERCEPT as INTERCEPT
from dpreg.covariance.calibration import MECHANISM as MECHANISM
from dpreg.covariance.calibration import SOURCE as SOURCE
from dpreg.covariance.calibration import repair_psd, upscale
from dpreg.covariance.io import FORMAT as FORMAT
from dpreg.covariance.io import FORMAT_VERSION as FORMAT_VERSION
from dpreg.covariance.io import MAX_RELEASE_COLUMNS as MAX_RELEASE_COLUMNS
from dpreg.covariance.io import READABLE_VERSIONS as READABLE_VERSIONS
from dpreg.covariance.io import validate_release_dict
from dpreg.covariance.planning import accuracy, epsilon_for, noise_sd_matrix
from dpreg.covariance.release import (
    SSCPRelease,
    plan_sscp,
    release_sscp,
    release_sscp_matrix,
    sscp_release_result,
    sscp_statistics,
)
from dpreg.covariance.sweep import PLUGIN_SE as PLUGIN_SE
from dpreg.covariance.sweep import SE_KINDS as SE_KINDS
from dpreg.covariance.sweep import sweep_regression

__all__ = [
    "release_sscp",
    "plan_sscp",
    "sscp_statistics",
    "release_sscp_matrix",
    "sscp_release_result",
    "SSCPRelease",
    "sweep_regression",
    "repair_psd",
    "upscale",
    "noise_sd_matrix",
    "accuracy",
    "epsilon_for",
    "validate_release_dict",
]
