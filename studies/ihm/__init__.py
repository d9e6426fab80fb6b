"""Iterative Hessian mixing (Lev, Shenfeld, Srinivasan, Ligett & Wilson 2026): a research
implementation kept in the studies, not a dpreg method and not in the wheel.

It was measured against AdaSSP and BoostedAdaSSP on the thirteen offline data sets
(``python -m studies.hessian_mixing run``; docs/multivariate.md, docs/hessian-mixing-data/) and
won no majority of the cells, so, as the project's rule for new algorithms says, it stays here.

* :mod:`studies.ihm.mechanism` -- the functional core :func:`hessian_mixing` and its Rényi-DP
  accounting (docs/privacy/hessian_mixing.md).
* :mod:`studies.ihm.estimator` -- :class:`IterativeHessianMixing`, the scikit-learn layer.
* :mod:`studies.ihm.audit` -- its privacy-audit target for dpreg's auditor
  (``python -m studies.ihm.audit``).
"""

from studies.ihm.estimator import IterativeHessianMixing
from studies.ihm.mechanism import hessian_mixing, ihm_budget

__all__ = ["IterativeHessianMixing", "hessian_mixing", "ihm_budget"]
