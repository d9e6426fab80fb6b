"""dpreg's research studies and results-page tooling -- NOT part of the installed package.

They live in the source repository only (the wheel ships ``src/dpreg`` alone) and import the
library like any user would; the library never imports them.  Run them from the root of a
source checkout:

* ``python -m studies.auto ...``        -- derivation/evaluation of ``method="auto"`` (docs/auto.md)
* ``python -m studies.dpci ...``        -- coverage studies of the DP-aware intervals
  (docs/uncertainty.md)
* ``python -m studies.mv_accuracy``     -- R² of the multivariate methods on real data
  (docs/multivariate.md)
* ``python -m studies.report [SOURCE]`` -- regenerate docs/results.md from reproduction runs
  (``make results-page``; :mod:`studies.beyond` renders its "beyond the papers" section from
  the studies' committed files in docs/)

Their tests are in ``studies/tests`` (collected by ``make test`` / ``make test-slow``).
"""
