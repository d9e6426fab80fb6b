"""Built-in audit targets and neighbour generators: every target runs, pairs are neighbours
under the stated relation, worker processes give the same kind of result."""

from __future__ import annotations

import numpy as np
import pytest

from dpreg.audit import TARGETS, audit_target, get_target, list_targets
from dpreg.audit.neighbours import (
    design_pairs,
    distance_pairs,
    matching_pair,
    quantile_pairs,
    scalar_pairs,
    simple_pairs,
    tukey_pairs,
    vector_pairs,
)
from dpreg.audit.registry import run_sampler
from dpreg.exceptions import InvalidInputError

KINDS = {"mechanism", "core", "estimator", "pipeline"}


def test_every_method_and_estimator_has_a_target():
    names = set(list_targets())
    for m in ("laplace", "gaussian", "exp-quantile", "wide-quantile", "wide-quantile-q20", "smooth-median", "ptr",
              "noisy-stats", "dp-intercept", "theil-sen-exp", "theil-sen-wide",
              "theil-sen-smooth", "dp-gd", "theil-sen-ci-union", "theil-sen-ci-union-fast",
              "theil-sen-ci-tight-fast", "adassp", "boosted-adassp",
              "tukey-em", "dp-gd-mv", "dp-gd-mv-auto-clip", "sscp", "NoisyStats", "DPTheilSen", "DPGradientDescent",
              "AdaSSP", "BoostedAdaSSP", "TukeyEM", "CovarianceOLS", "laplace-secure",
              "gaussian-secure", "fit-by-group", "fit-by-group-adassp", "laplace-seeded",
              "gaussian-seeded", "laplace-seeded-reachability", "adassp-eps30", "adassp-wang"):
        assert m in names
    assert {t.kind for t in TARGETS.values()} == KINDS
    assert all(len(t.pairs()) >= 3 for t in TARGETS.values())


@pytest.mark.parametrize("name", list_targets())
def test_target_runs_small(name):
    target = get_target(name)
    first = target.pairs()[0].name
    (res,) = audit_target(name, pairs=[first], samples=48, alpha=1e-6, rng=0)
    assert res.method == name and res.pair == first and res.samples == 48
    assert res.claim == target.claim and np.isfinite(res.epsilon_lcb)
    assert res.passed  # 48 releases cannot show a loss above the claim at α = 1e-6


def test_unknown_names():
    with pytest.raises(InvalidInputError, match="unknown audit target"):
        get_target("nope")
    with pytest.raises(InvalidInputError, match="unknown pair"):
        audit_target("laplace", pairs=["nope"], samples=100)


def test_workers_split_the_releases():
    t = get_target("ptr")
    out = run_sampler(t.sampler, t.pairs()[0].d, 4000, np.random.SeedSequence(1), workers=2)
    assert out.shape == (4000, 1) and set(np.unique(out)) <= {0.0, 1.0}


def _rows(data):
    if "x" in data:
        return np.column_stack([data["x"], data["y"]])
    return np.column_stack([data["X"], data["y"]])


@pytest.mark.parametrize("pairs", [simple_pairs(20), simple_pairs(12), [matching_pair()],
                                   design_pairs(20, 2), tukey_pairs()])
def test_replace_one_pairs_differ_in_one_record(pairs):
    for p in pairs:
        a, b = _rows(p.d), _rows(p.d_prime)
        assert a.shape == b.shape and p.relation == "replace-one"
        differs = ~np.all((a == b) | (np.isnan(a) & np.isnan(b)), axis=1)
        assert differs.sum() == 1, p.name


def test_table_pairs_differ_in_one_record_of_one_group():
    """The pipeline pairs: one record of one group changes and keeps its group; the other
    group's data are the same on both sides."""
    for name in ("fit-by-group", "fit-by-group-adassp"):
        for p in get_target(name).pairs():
            changed = [g for g in ("A", "B")
                       if not np.array_equal(_rows(p.d[g]), _rows(p.d_prime[g]))]
            assert len(changed) == 1 and p.relation == "replace-one", p.name
            a, b = _rows(p.d[changed[0]]), _rows(p.d_prime[changed[0]])
            assert a.shape == b.shape and (~np.all(a == b, axis=1)).sum() == 1, p.name


def test_add_remove_pairs_add_one_record():
    for p in design_pairs(20, 2, relation="add-remove"):
        a, b = _rows(p.d), _rows(p.d_prime)
        assert b.shape[0] == a.shape[0] + 1 and np.array_equal(a, b[:-1])


def test_value_pairs_respect_the_sensitivity():
    for p in scalar_pairs(2.0):
        assert abs(p.d["value"] - p.d_prime["value"]) <= 2.0
    for norm, ordn in (("l1", 1), ("l2", 2)):
        for p in vector_pairs(2.0, norm):
            assert np.linalg.norm(p.d["value"] - p.d_prime["value"], ordn) <= 2.0 + 1e-12
    for p in quantile_pairs():
        assert p.d["z"].size == p.d_prime["z"].size
        assert np.sum(np.sort(p.d["z"]) != np.sort(p.d_prime["z"])) <= 2
    for p in distance_pairs(13.1):
        assert abs(p.d["distance"] - p.d_prime["distance"]) == 1
