"""DP-aware confidence intervals by parametric bootstrap (post-processing of a release).

* :mod:`~dpreg.inference.dpci.engine` -- :class:`ParametricBootstrap` (studentized,
  percentile and basic intervals; ⊥ replicates dropped);
* :mod:`~dpreg.inference.dpci.noisy_stats` -- DPSuffStats release (``inference=True``);
* :mod:`~dpreg.inference.dpci.ssp` -- noisy sufficient statistics (AdaSSP with
  ``inference=True``, the SSCP/covariance release);

The seeded coverage studies (designs, oracle widths) are not part of the package: ``studies/dpci.py``
in the source repository (``python -m studies.dpci``).

Source: Ferrando, Wang & Sheldon, *Parametric Bootstrap for Differentially Private Confidence
Intervals*, AISTATS 2022.
"""

from dpreg.inference.dpci.engine import KINDS, SOURCE, BootstrapModel, ParametricBootstrap

__all__ = ["KINDS", "SOURCE", "BootstrapModel", "ParametricBootstrap"]
