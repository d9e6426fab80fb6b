"""Empirical privacy auditing: lower confidence bounds on the privacy loss of dpreg mechanisms.

DP bugs do not raise errors; they show up as slightly better accuracy.  The auditor samples a
mechanism N times on each of two neighbouring data sets D and D′, chooses an output event on
half of the samples and bounds its probability ratio on the other half with Clopper–Pearson
intervals (DP-Sniper / Delta-Siege style), giving ε_LCB: with probability >= 1 − α the true
privacy loss on that pair is at least ε_LCB.  A mechanism whose claimed ε is below ε_LCB is
not private (FAIL); a correct mechanism fails with probability <= α.

* :func:`audit` -- audit any sampler on a pair you choose;
* :func:`audit_samples` -- audit from samples drawn elsewhere;
* :func:`audit_target` -- audit a built-in configuration of a dpreg mechanism, core function
  or estimator on its built-in worst-case neighbouring pairs (:mod:`dpreg.audit.neighbours`);
  :func:`list_targets` names them.  CLI: ``dpreg audit METHOD``; the whole suite:
  ``make audit``.

See ``docs/audit.md`` for the method, the pairs and the results of the full suite.
"""

from dpreg.audit.estimate import (
    AUDIT_DELTA,
    DEFAULT_ALPHA,
    DEFAULT_SAMPLES,
    AuditResult,
    Claim,
    Event,
    audit,
    audit_samples,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lcb,
)
from dpreg.audit.neighbours import NeighbourPair
from dpreg.audit.registry import (
    TARGETS,
    AuditTarget,
    audit_target,
    get_target,
    list_targets,
    loop_sampler,
)
from dpreg.audit.report import results_json, results_table, results_text

__all__ = [
    "audit",
    "audit_samples",
    "audit_target",
    "list_targets",
    "get_target",
    "loop_sampler",
    "AuditResult",
    "AuditTarget",
    "Claim",
    "Event",
    "NeighbourPair",
    "TARGETS",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lcb",
    "results_table",
    "results_text",
    "results_json",
    "DEFAULT_ALPHA",
    "DEFAULT_SAMPLES",
    "AUDIT_DELTA",
]
