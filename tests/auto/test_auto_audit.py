"""Empirical audit (dpreg.audit) of the whole auto pipeline: DP bounds + selection + method.

The neighbouring pair is built so that the selection statistic u = ε²·nvar(x) sits on either side of
the threshold: a pipeline that chose its method without noise would reveal which data set it
ran on through the chosen method, which the auditor must catch (planted bug); the real pipeline
must pass at its claimed total ε.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpreg.preprocess as pre
from dpreg.audit import audit, loop_sampler
from dpreg.auto import NS_K, NS_S0, fit_auto


def _flip_pair(n: int = 4000) -> tuple[dict, dict, float]:
    g = np.random.default_rng(0)
    x = np.repeat([0.02, 0.98], n // 2)  # inside the bounds: no row on the boundary
    y = np.clip(0.3 + 0.4 * x + g.normal(0, 0.05, n), 0, 1)
    x2 = x.copy()
    x2[0] = 0.5  # one record changed: nvar drops by ≈ 0.23
    nv = [float(np.sum((v - v.mean()) ** 2)) for v in (x, x2)]
    # the threshold on u = ε²·nvar with no row on the bounds (K/s0) lies between the two data
    # sets' statistics
    eps = math.sqrt(NS_K / NS_S0 / (0.5 * (nv[0] + nv[1])))
    return {"x": x, "y": y}, {"x": x2, "y": y}, eps


def _release(eps: float, private: bool):
    # allow_unreliable: the reliability check decides on DP outputs only; audited is the output
    kw = (dict(x_bounds="private", y_bounds="private", allow_unreliable=True) if private
          else dict(x_bounds=[(0.0, 1.0)], y_bounds=(0.0, 1.0)))

    def release(data, rng):
        r = fit_auto(data["x"][:, None], data["y"], epsilon=eps, random_state=rng, **kw)
        p = r._params.to_numpy()
        return [p[0] + 0.25 * p[1], p[0] + 0.75 * p[1],
                float(r.extra["auto"]["method"] == "noisy-stats")]
    return release


def _audit(eps: float, private: bool, samples: int = 400):
    d, dp, _ = _flip_pair()
    rel = _release(eps, private)
    return audit(lambda data, n, rng: loop_sampler(rel, data, n, rng), d, dp, claim=eps,
                 samples=samples, rng=5, method="auto", pair="selection-flip",
                 names=["p25", "p75", "chose_noisy_stats"])


def test_auto_pipeline_passes_its_audit_at_small_epsilon():
    _, _, eps = _flip_pair()
    assert eps < 4.0  # a moderate ε (about 1.85 with the shipped threshold and n = 4000)
    res = _audit(eps, private=False)
    assert res.passed, res.as_dict()


def test_a_noiseless_selection_step_is_caught(monkeypatch):
    import warnings

    real, real_count = pre.noisy_nvar, pre.noisy_boundary_count

    def leaky(x, *, epsilon, x_bounds, **kw):  # planted bug: exact nvar, still "charged" ε
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return real(x, epsilon=float("inf"), x_bounds=x_bounds, **kw)

    def leaky_count(data, *, epsilon, **kw):  # and the exact count (the rule reads both)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return real_count(data, epsilon=float("inf"), **kw)

    monkeypatch.setattr(pre, "noisy_nvar", leaky)
    monkeypatch.setattr(pre, "noisy_boundary_count", leaky_count)
    _, _, eps = _flip_pair()
    res = _audit(eps, private=False)
    assert not res.passed
    assert res.epsilon_lcb > eps


@pytest.mark.slow
def test_bounds_free_pipeline_passes_its_audit():
    _, _, eps = _flip_pair()
    res = _audit(eps, private=True, samples=1500)
    assert res.passed, res.as_dict()
