"""Privacy audit of the study implementation of iterative Hessian mixing with dpreg's auditor.

The target is the one the library registry carried while IHM was a dpreg method (it is no longer
a built-in target, ``dpreg audit`` does not list it): the core :func:`studies.ihm.mechanism.
hessian_mixing` at ε = 1, δ = 10⁻⁶ with T = 2 iterations and k = 12 sketch rows (small, so a
leak would show), add/remove neighbouring designs (d = 2 features in [0, 1] plus an intercept,
y in [−1, 1]); the release audited is everything the mechanism publishes -- coefficients, the T
noisy gradients and the T sketched Hessians.  The claim is the Rényi curve read at the audit's
δ (the (ε, 10⁻⁶) point cannot be resolved by sampling).  :func:`audit` passes the target object
to :func:`dpreg.audit.registry.audit_target`.

    nice -n 10 python -m studies.ihm.audit [-n 100000] [--seed 2026] [--json] [--workers 1]

prints the result table (or the JSON list that docs/hessian-mixing-data/audit.json holds).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from dpreg.audit.estimate import AUDIT_DELTA, AuditResult, Claim
from dpreg.audit.neighbours import design_pairs
from dpreg.audit.registry import AuditTarget, audit_target, loop_sampler
from dpreg.audit.report import results_json, results_text
from dpreg.privacy.budgets import ApproxDP
from studies.ihm.mechanism import hessian_mixing, ihm_budget, ihm_epsilon

__all__ = ["TARGET", "NAME", "audit", "main"]

NAME = "hessian-mixing"
EPS, DELTA = 1.0, 1e-6
N_ITER, SKETCH = 2, 12  # small, so a leak would show
N_ROWS, N_FEATURES = 20, 2


def _x_norm(X: np.ndarray) -> float:
    return math.sqrt(X.shape[1])  # features in [0, 1] plus the ones column


def release(data: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    """One run on ``data``: coefficients, T noisy gradients and T sketched Hessians (upper
    triangles) -- everything the mechanism publishes along the way."""
    X = np.asarray(data["X"], float)
    res = hessian_mixing(X, data["y"], epsilon=EPS, delta=DELTA, x_norm_bound=_x_norm(X),
                         tau=1.0, n_iter=N_ITER, sketch_size=SKETCH, rng=rng)
    iu = np.triu_indices(X.shape[1])
    hess = np.asarray(res.extra["hessians"])[:, iu[0], iu[1]]
    return np.concatenate([np.asarray(res.params, float), np.ravel(res.extra["gradients"]),
                           np.ravel(hess)])


def claim() -> Claim:
    """(ε at AUDIT_DELTA, AUDIT_DELTA) from the exact Rényi curve of the audited configuration."""
    b = math.sqrt(N_FEATURES + 1.0)
    plan = ihm_budget(EPS, DELTA, sketch_rows=SKETCH, n_iter=N_ITER, x_norm_bound=b)
    return Claim.from_budget(ApproxDP(ihm_epsilon(plan, AUDIT_DELTA, x_norm_bound=b), AUDIT_DELTA))


TARGET = AuditTarget(
    NAME, "core", f"iterative Hessian mixing (study implementation, add/remove), T = {N_ITER}, "
    f"k = {SKETCH}, ε = {EPS:g}, δ = {DELTA:g} (Rényi curve read at δ = {AUDIT_DELTA:g})",
    claim(), partial(loop_sampler, release),
    partial(design_pairs, N_ROWS, N_FEATURES, relation="add-remove"), loop=True)


def audit(*, pairs: Sequence[str] | None = None, samples: int = 100_000, alpha: float = 1e-6,
          rng: Any = None, workers: int = 1) -> list[AuditResult]:
    """Run dpreg's auditor on :data:`TARGET` (one result per neighbouring pair)."""
    return audit_target(TARGET, pairs=pairs, samples=samples, alpha=alpha, rng=rng,
                        workers=workers)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m studies.ihm.audit")
    ap.add_argument("-n", "--samples", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--alpha", type=float, default=1e-6)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    res = audit(samples=a.samples, alpha=a.alpha, rng=a.seed, workers=a.workers)
    print(json.dumps(results_json(res), indent=2) if a.json else results_text(res))
    return 0 if all(r.passed for r in res) else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
