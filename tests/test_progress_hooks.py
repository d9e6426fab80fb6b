"""Progress hooks (issue 20 item 6): the library reports its steps -- per DP median of a
Theil-Sen fit, per bootstrap batch, per replicate, per group -- through one hook, with
monotone counts that end at the total, public text only, and nothing at all without a hook.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpreg import _progress

SECRET = 123.456789


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, int, int | None]] = []

    def __call__(self, description: str, done: int, total: int | None) -> None:
        self.events.append((description, done, total))

    def by_job(self) -> dict[str, list[tuple[int, int | None]]]:
        out: dict[str, list[tuple[int, int | None]]] = {}
        for d, done, total in self.events:
            out.setdefault(d, []).append((done, total))
        return out


def assert_monotone_to_total(counts: list[tuple[int, int | None]]) -> None:
    done = [c for c, _ in counts]
    totals = {t for _, t in counts}
    assert len(totals) == 1, counts
    (total,) = totals
    assert done[0] == 0 and done[-1] == total, counts
    assert all(b >= a for a, b in zip(done, done[1:])), counts


def _xy(n: int = 300):
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, n)
    y = 2 * x + rng.normal(0, 0.1, n)
    x[0] = SECRET / 1000  # in range; must never show up
    return x, y


@pytest.mark.parametrize("algorithm", ["materialise", "exact-fast"])
def test_theil_sen_reports_each_prediction_point(algorithm):
    from dpreg.simple import theil_sen

    x, y = _xy()
    rec = Recorder()
    with _progress.hook(rec):
        theil_sen(x, y, epsilon=1, output_range=(-1, 3), x_bounds=(0, 1), rng=1,
                  algorithm=algorithm)
    jobs = rec.by_job()
    assert list(jobs) == ["Theil-Sen: DP median of 2 prediction points"]
    assert jobs["Theil-Sen: DP median of 2 prediction points"] == [(0, 2), (1, 2), (2, 2)]


class _ToyModel:
    """A bootstrap world of one coefficient (engine test double)."""

    names = ["b"]
    description = ""
    noise_ratio = 0.0
    noise_ratio_limit = 0.5

    def released(self):
        return np.array([1.0]), np.eye(1)

    def replicate(self, size, rng):
        return (rng.normal(1.0, 1.0, (size, 1)), np.tile(np.eye(1), (size, 1, 1)),
                np.ones(size, dtype=bool))


def test_bootstrap_reports_each_batch_of_replicates():
    from dpreg.inference.dpci.engine import _CHUNK, ParametricBootstrap

    rec = Recorder()
    n_boot = 2 * _CHUNK + 100
    boot = ParametricBootstrap(_ToyModel(), n_boot=n_boot, rng=0)
    with _progress.hook(rec):
        boot.conf_int(0.05)
        boot.conf_int(0.1)  # drawn once: no second job
    jobs = rec.by_job()
    assert list(jobs) == [f"bootstrap: {n_boot} simulated releases"]
    counts = jobs[f"bootstrap: {n_boot} simulated releases"]
    assert counts == [(0, n_boot), (_CHUNK, n_boot), (2 * _CHUNK, n_boot), (n_boot, n_boot)]


def test_matching_replicates_report_each_replicate():
    from dpreg.replicates import replicate_predictions

    x, y = _xy(120)
    rec = Recorder()
    with _progress.hook(rec):
        replicate_predictions("theil-sen-exp", x, y, epsilon=1, x_bounds=(0, 1),
                              y_bounds=(-1, 3), output_range=(-1, 3), trials=5, pairs=3,
                              rng=0)
    (counts,) = rec.by_job().values()
    assert_monotone_to_total(counts)
    assert counts[-1] == (10, 10) and len(counts) == 11


@pytest.mark.parametrize("backend", ["local", "reference"])
def test_groups_report_per_declared_key_and_hide_inner_fits(backend):
    from dpreg.grouped import fit_by_group

    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({"g": rng.integers(0, 4, n), "x": rng.uniform(0, 1, n)})
    df["y"] = 2 * df["x"] + rng.normal(0, 0.1, n)
    rec = Recorder()
    with _progress.hook(rec):
        fit_by_group(df, "g", "x", "y", method="theil-sen-exp", epsilon=1,
                     bounds={"x": (0, 1), "y": (-1, 3)}, groups=[0, 1, 2, 3, 7],
                     random_state=1, backend=backend, workers=1)
    jobs = rec.by_job()
    per_group = [d for d in jobs if "5 groups" in d and "vectorised" not in d]
    assert len(per_group) == 1, jobs  # one bar over the 5 declared keys
    counts = jobs[per_group[0]]
    assert_monotone_to_total(counts)
    assert counts[-1] == (5, 5)
    # the per-group Theil-Sen fits report nothing while the outer loop runs
    assert not any(d.startswith("Theil-Sen") for d in jobs), jobs


def test_nothing_without_a_hook_and_hook_is_scoped(capsys):
    from dpreg.simple import theil_sen

    x, y = _xy()
    theil_sen(x, y, epsilon=1, output_range=(-1, 3), x_bounds=(0, 1), rng=1)
    rec = Recorder()
    with _progress.hook(rec):
        pass
    theil_sen(x, y, epsilon=1, output_range=(-1, 3), x_bounds=(0, 1), rng=1)
    assert rec.events == []
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err == ""


def test_spinner_does_not_hide_inner_bars_but_steps_do():
    rec = Recorder()
    with _progress.hook(rec):
        with _progress.spinner("outer call"):
            _progress.report("inner", 0, 3)
        for _ in _progress.steps(range(2), "loop"):
            _progress.report("hidden", 0, 1)
        _progress.report("after", 1, 1)  # depth restored after the loop
    assert [e[0] for e in rec.events] == ["outer call", "inner", "outer call", "loop", "loop",
                                          "loop", "after"]
    assert rec.events[2] == ("outer call", 1, 1)


def test_abandoned_loop_restores_reporting():
    rec = Recorder()
    with _progress.hook(rec):
        for i in _progress.steps(range(5), "loop"):
            if i == 1:
                break
        _progress.report("after", 1, 1)
    assert rec.events[-1] == ("after", 1, 1)
