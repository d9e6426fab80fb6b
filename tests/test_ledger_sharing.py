"""A ledger in scikit-learn model selection (issue 16 item 7).

``clone``, ``cross_val_score`` and ``GridSearchCV`` with ``ledger=`` used to fail with
"cannot pickle '_thread.lock'".  A ledger is now shared by reference across clones (every fold
is charged to it); a pickled file ledger reopens the same file in the receiving process (the
file is the shared state), so process-parallel search charges every fit; an in-memory ledger
refuses to be pickled (a copy in another process would under-count).
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score

from dpreg import BudgetExceededError, InvalidInputError, Ledger, NoisyStats, PureDP
from dpreg.exceptions import LedgerFileError


@pytest.fixture(scope="module")
def data():
    g = np.random.default_rng(0)
    X = g.uniform(0, 1, (240, 1))
    y = 0.3 + 0.5 * X[:, 0] + g.normal(0, 0.1, 240)
    return X, y


#: n_jobs=2: joblib's process pool (loky), whose workers each import dpreg and scikit-learn
#: (~2.5 CPU-s): ``--dist loadgroup`` (make test) runs these cases on one xdist worker, one after
#: the other, so they share one pool instead of starting one per xdist worker and test
LOKY_2 = pytest.param(2, marks=pytest.mark.xdist_group("loky"), id="2")


def _est(ledger: Ledger, epsilon: float = 1.0) -> NoisyStats:
    return NoisyStats(epsilon=epsilon, bounds_X=(0, 1), bounds_y=(-1, 2), ledger=ledger,
                      random_state=0)


def test_copies_are_the_ledger_itself(tmp_path):
    for led in (Ledger(PureDP(1.0)), Ledger(PureDP(1.0), tmp_path / "l.db")):
        assert copy.copy(led) is led and copy.deepcopy(led) is led
        assert clone(_est(led)).ledger is led
        assert copy.deepcopy({"a": [led]})["a"][0] is led


def test_pickle_file_ledger_reopens_the_file(tmp_path):
    path = tmp_path / "l.db"
    led = Ledger(PureDP(1.0), path, neighbouring="add-remove", slack=1e-9)
    led.spend(PureDP(0.25), "before")
    other = pickle.loads(pickle.dumps(led))
    assert other is not led
    assert (other.path, other.total, other.neighbouring, other._slack) == (
        path.resolve(), PureDP(1.0), led.neighbouring, 1e-9)
    other.spend(PureDP(0.5), "through the copy")
    assert [e.label for e in led.events()] == ["before", "through the copy"]
    with pytest.raises(BudgetExceededError):
        led.spend(PureDP(0.5))


def test_pickle_never_creates_a_fresh_ledger(tmp_path):
    path = tmp_path / "gone.db"
    blob = pickle.dumps(Ledger(PureDP(1.0), path))
    for suffix in ("", "-wal", "-shm"):
        p = path.with_name(path.name + suffix)
        if p.exists():
            p.unlink()
    with pytest.raises(LedgerFileError, match="no longer exists"):
        pickle.loads(blob)
    assert not path.exists()


def test_pickle_in_memory_ledger_is_refused():
    with pytest.raises(InvalidInputError, match="in-memory Ledger cannot be pickled"):
        pickle.dumps(Ledger(PureDP(1.0)))


def _n_events(path) -> int:
    return len(Ledger(None, path).events())


def test_cross_val_score_in_memory(data):
    X, y = data
    led = Ledger(PureDP(10.0))
    scores = cross_val_score(_est(led), X, y, cv=3)
    assert np.all(np.isfinite(scores))
    assert len(led.events()) == 3 and led.spent() == PureDP(3.0)


def test_grid_search_in_memory(data):
    X, y = data
    led = Ledger(PureDP(10.0))
    GridSearchCV(_est(led), {"epsilon": [0.5, 1.0]}, cv=3).fit(X, y)
    # 2 candidates x 3 folds + the refit on the whole data with the best epsilon
    assert len(led.events()) == 7
    assert sorted(e.budget.epsilon for e in led.events())[:3] == [0.5, 0.5, 0.5]


def test_in_memory_ledger_with_processes_is_a_clear_error(data):
    X, y = data
    with pytest.raises(Exception) as info:
        cross_val_score(_est(Ledger(PureDP(10.0))), X, y, cv=3, n_jobs=2)
    chain, exc = [], info.value
    while exc is not None:
        chain.append(str(exc))
        exc = exc.__cause__ or exc.__context__
    assert any("in-memory Ledger cannot be pickled" in text for text in chain)


@pytest.mark.parametrize("n_jobs", [1, LOKY_2])
def test_cross_val_score_file_ledger(tmp_path, data, n_jobs):
    X, y = data
    path = tmp_path / "cv.db"
    led = Ledger(PureDP(10.0), path)
    cross_val_score(_est(led), X, y, cv=3, n_jobs=n_jobs)
    assert _n_events(path) == 3 and led.spent() == PureDP(3.0)


@pytest.mark.parametrize("n_jobs", [1, LOKY_2])
def test_grid_search_file_ledger(tmp_path, data, n_jobs):
    X, y = data
    path = tmp_path / "gs.db"
    led = Ledger(PureDP(10.0), path)
    GridSearchCV(_est(led), {"epsilon": [0.5, 1.0]}, cv=3, n_jobs=n_jobs).fit(X, y)
    assert _n_events(path) == 7


@pytest.mark.parametrize("n_jobs", [1, LOKY_2])
def test_too_small_total_refuses(tmp_path, data, n_jobs):
    X, y = data
    path = tmp_path / "small.db"
    led = Ledger(PureDP(2.5), path)  # room for two folds at ε = 1
    with pytest.raises(BudgetExceededError, match="would exceed"):
        cross_val_score(_est(led), X, y, cv=3, n_jobs=n_jobs, error_score="raise")
    assert _n_events(path) == 2 and led.spent() == PureDP(2.0)
    # with scikit-learn's default error_score the refusal surfaces as a FitFailedWarning
    led2 = Ledger(PureDP(2.5), tmp_path / "small2.db")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = cross_val_score(_est(led2), X, y, cv=3, n_jobs=n_jobs)
    assert np.isnan(scores).sum() == 1
    assert any("BudgetExceededError" in str(w.message) for w in caught)
    assert len(led2.events()) == 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_uses_its_own_connection(tmp_path):
    """A file ledger inherited through fork (multiprocessing's default start method on Linux)
    opens its own connection in the child: SQLite connections must not cross a fork."""
    path = tmp_path / "fork.db"
    led = Ledger(PureDP(1.0), path)
    led.spend(PureDP(0.5), "parent")
    _INHERITED[:] = [led, led._conn]  # reaches the children through fork, not pickling
    try:
        with multiprocessing.get_context("fork").Pool(2) as pool:
            got = pool.map(_spend_inherited, [0.25, 0.25, 0.25], chunksize=1)
    finally:
        _INHERITED.clear()
    assert sorted(r for r, _ in got) == ["ok", "ok", "refused"]
    assert all(own for _, own in got), "a child used the connection it inherited"
    assert [e.label for e in led.events()].count("child") == 2
    assert led.spent() == PureDP(1.0)
    led.spend(PureDP(0.0), "parent still works")


_INHERITED: list = []


def _spend_inherited(eps: float) -> tuple[str, bool]:
    led, parent_conn = _INHERITED
    try:
        led.spend(PureDP(eps), "child")
        result = "ok"
    except BudgetExceededError:
        result = "refused"
    return result, led._conn is not parent_conn
