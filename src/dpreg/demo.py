"""The demo job: per-tract DP regressions on the bundled simulated Opportunity-Atlas-like state.

What it does (Alabi et al. 2022 §7.2.1, Figure 3, on *simulated* data):

1. loads the bundled state (:func:`dpreg.data.load_oa_simulated`: 3,108 tracts of 30–400
   (parent rank, child rank) pairs in [0, 1]²; a simulation, documented in
   :func:`dpreg.data.simulate_oa_state`);
2. for every tract and method releases the predictions p̃₂₅, p̃₇₅ at the 25th and 75th parent
   percentile with budget ε per tract.  Tracts are disjoint sets of people, so the whole
   state's release is ε-DP by parallel composition (replace-one neighbours, tract sizes public;
   the tract list is read from the bundled simulated data, so the key set is not protected --
   a real release declares the public list of tracts, as ``fit_by_group(groups=[...])`` does);
3. measures each method's error as the paper does: on each tract the mechanism is re-run
   ``trials`` times, Ĉ(0.68) is the 68th percentile of |p̃₂₅ − p̂₂₅| (p̂₂₅ from OLS; ⊥ counts
   as an infinite error) and is divided by the OLS standard error σ̂(p̂₂₅) of eq. (3).  A
   ratio below 1 means the privacy noise is smaller than the sampling error.  (The re-runs
   are an evaluation device that only makes sense on simulated data: each one is a release.)
4. prints a table, writes ``releases.csv`` (one row per tract and method: the release, the
   OLS reference and the ratio), ``summary.csv`` and ``ecdf.png`` (the paper's Figure 3 for
   this simulation) to the output folder.

It needs matplotlib (the ``[plots]`` extra) for ``ecdf.png`` and rich (``[cli]``) for its
table and bars -- ``dpreg demo`` has both with ``pip install 'dpreg[cli,plots]'`` (or
``[repro]``); without them :class:`~dpreg.exceptions.MissingExtraError` names the extra before
anything runs.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from dpreg import methods
from dpreg._validation import check_epsilon, check_int
from dpreg.bench.metrics import c_hat
from dpreg.data import load_oa_simulated
from dpreg.grouped import group_seed_sequence

__all__ = ["run_demo", "DEMO_METHODS"]

#: every one-x method of the simple harness (the method registry's order)
DEMO_METHODS = methods.names(harness="simple")
X_BOUNDS = (0.0, 1.0)
Y_BOUNDS = (0.0, 1.0)
OUTPUT_RANGE = (-0.5, 1.5)  # Alabi et al. Table 1, for data in [0, 1]


#: with workers, each method's tracts are cut into this many contiguous chunks per worker: the
#: pool hands out (method, chunk) jobs as workers free up, so the methods' very different costs
#: balance without a cost model (the last job to finish is one chunk, not one method)
_CHUNKS_PER_WORKER = 3
#: below this many replicates (tracts × trials) ``workers=None`` runs in this process: starting
#: the workers would cost more than it saves
_PARALLEL_MIN_REPLICATES = 5_000
#: the job the forked workers run (set by :func:`run_demo` before they start; inherited by fork)
_FORK_JOB: Any = None


def run_demo(out: str | Path = "demo-output", *, epsilon: float = 16.0, trials: int = 25,
             max_tracts: int | None = None, seed: int = 0, methods: tuple[str, ...] = DEMO_METHODS,
             progress: bool = True, console: Any = None, workers: int | None = None
             ) -> dict[str, Any]:
    """Run the demo; returns a JSON-ready summary (also written to ``out``).

    ``workers``: processes that run the methods' replicates, one method at a time each (forked,
    Linux; elsewhere, and with ``workers=1``, everything runs in this process).  ``None``: one
    per available CPU, at most one per method, and none for a small job.  Every tract and
    method draws from its own generator (derived from ``seed``, the tract and the method), so
    the files and the table do not depend on ``workers`` (except the timing columns)."""
    from dpreg._extras import require

    require("matplotlib", "the demo (its ecdf.png)")
    if progress or console is not None:
        require("rich", "the demo's table and progress bars")
    from dpreg.simple import ols, ols_prediction_se

    eps = check_epsilon(epsilon, allow_inf=False)
    trials = check_int(trials, "trials", minimum=1)
    if workers is not None:
        workers = check_int(workers, "workers", minimum=1)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ds = load_oa_simulated()
    frame = ds.frame
    tracts, starts = np.unique(frame["tract"].to_numpy(), return_index=True)
    order = np.argsort(starts)
    tracts, starts = tracts[order], starts[order]
    ends = np.append(starts[1:], len(frame))
    if max_tracts is not None:
        keep = check_int(max_tracts, "max_tracts", minimum=1)
        tracts, starts, ends = tracts[:keep], starts[:keep], ends[:keep]
    xs = frame["parent_rank"].to_numpy(float)
    ys = frame["child_rank"].to_numpy(float)
    job = _Job(xs, ys, starts, ends, tracts, np.random.SeedSequence(seed), eps, trials)
    rows: list[dict[str, Any]] = []

    t_start = time.perf_counter()
    replicates, timing = _all_replicates(job, methods, _workers(workers, methods, job), progress)
    for i in range(len(tracts)):
        x, y = xs[starts[i]:ends[i]], ys[starts[i]:ends[i]]
        ref = ols(x, y, x_eval=(0.25, 0.75))
        p25_hat, p75_hat = ref.predictions[0.25], ref.predictions[0.75]
        se = float(ols_prediction_se(x, y, 0.25))
        for m in methods:
            reps = replicates[m][i]
            c68 = c_hat(np.abs(reps[:, 0] - p25_hat))
            p25, p75 = reps[0]
            failed = bool(np.isnan(p25))
            slope = 2.0 * (p75 - p25) if not failed else np.nan
            rows.append({
                "tract": tracts[i], "n": x.size, "method": m, "p25": p25, "p75": p75,
                "slope": slope, "intercept": (p25 - 0.25 * slope) if not failed else np.nan,
                "failed": failed, "ols_p25": p25_hat, "ols_p75": p75_hat, "ols_se_p25": se,
                "c68": c68, "ratio": c68 / se if se > 0 else np.nan,
            })
    elapsed = time.perf_counter() - t_start
    table = pd.DataFrame(rows)
    table.to_csv(out / "releases.csv", index=False)
    summary = _summarise(table, methods, timing)
    summary.to_csv(out / "summary.csv", index=False)
    fig_path = out / "ecdf.png"
    _plot(table, methods, fig_path, eps, trials)
    report = {
        "tracts": int(len(tracts)), "rows": int(len(frame.iloc[: ends[-1]])), "epsilon": eps,
        "trials": trials, "seconds": round(elapsed, 2),
        "privacy": (f"ε={eps:g} per tract (pure DP, replace-one neighbours, tract sizes public); "
                    "tracts are disjoint, so the state's release is ε-DP by parallel composition; "
                    "the tract list is read from the bundled data: the key set is NOT protected "
                    "(for real data declare the public list, fit_by_group(groups=[...]))"),
        "methods": summary.to_dict(orient="records"),
        "files": {"releases": str(out / "releases.csv"), "summary": str(out / "summary.csv"),
                  "figure": str(fig_path)},
    }
    if console is not None:
        _print(console, summary, report)
    return report


class _Job(NamedTuple):
    """The demo's data and settings: tract i is ``xs[starts[i]:ends[i]]`` (and ``ys``)."""

    xs: np.ndarray
    ys: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    tracts: np.ndarray
    root: np.random.SeedSequence
    epsilon: float
    trials: int

    def rng(self, i: int, method: str) -> np.random.Generator:
        """Tract i's generator for ``method`` (its own stream: the same in any process)."""
        return np.random.default_rng(group_seed_sequence(self.root, (str(self.tracts[i]), method)))


def _workers(workers: int | None, methods: tuple[str, ...], job: _Job) -> int:
    """How many processes run the replicates (1: this process)."""
    if _fork_context() is None or len(methods) < 2:
        return 1
    if workers is None:
        if len(job.tracts) * job.trials < _PARALLEL_MIN_REPLICATES:
            return 1
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        workers = cpus or 1
    return max(1, min(workers, len(methods)))


def _fork_context() -> Any:
    """The ``fork`` multiprocessing context where the platform has it (Linux), else None (the
    workers inherit the data and the imported, compiled library instead of re-importing it)."""
    import multiprocessing as mp
    import sys

    if sys.platform != "linux" or "fork" not in mp.get_all_start_methods():
        return None
    if mp.current_process().daemon:  # a daemonic process may not have children
        return None
    return mp.get_context("fork")


def _method_replicates(method: str, job: _Job | None = None, bar: bool = False,
                       chunk: tuple[int, int] | None = None) -> tuple[list[np.ndarray], float]:
    """``method``'s ``(trials, 2)`` replicates in every tract (or the tracts ``chunk`` =
    ``(first, stop)``), and the seconds they took.  The batched methods run the tracts at once:
    the same arrays, bit for bit, as replicate_predictions per tract with the tract's own
    generator (much faster)."""
    from dpreg.replicates import BATCHED, replicate_predictions, replicate_predictions_many

    if job is None:  # in a forked worker: its progress is the parent's spinner, not this
        from dpreg._progress import _HOOK  # process's copy of a caller's hook

        _HOOK.set(None)
        job = _FORK_JOB
    t0 = time.perf_counter()
    first, stop = chunk if chunk is not None else (0, len(job.tracts))
    cuts = {i: (job.starts[i], job.ends[i]) for i in range(first, stop)}
    common: dict[str, Any] = dict(epsilon=job.epsilon, x_bounds=X_BOUNDS, y_bounds=Y_BOUNDS,
                                  trials=job.trials, output_range=OUTPUT_RANGE)
    description = f"{method}: DP regressions in {len(cuts)} tracts"
    if method in BATCHED:
        from dpreg._progress import spinner

        with spinner(description, enabled=bar):
            reps = replicate_predictions_many(
                method, [job.xs[a:b] for a, b in cuts.values()],
                [job.ys[a:b] for a, b in cuts.values()],
                rngs=[job.rng(i, method) for i in cuts], **common)
    else:
        index: Any = list(cuts)
        if bar:
            from rich.progress import track

            from dpreg._progress import _console

            # the bar goes to stderr (the table and the statement to the console, stdout)
            index = track(index, description=description, transient=True, console=_console())
        reps = [replicate_predictions(method, job.xs[cuts[i][0]:cuts[i][1]],
                                      job.ys[cuts[i][0]:cuts[i][1]], rng=job.rng(i, method),
                                      **common) for i in index]
    return reps, time.perf_counter() - t0


def _all_replicates(job: _Job, methods: tuple[str, ...], workers: int, progress: bool
                    ) -> tuple[dict[str, list[np.ndarray]], dict[str, float]]:
    """Every method's replicates (:func:`_method_replicates`), in this process or, with
    ``workers`` > 1, as (method, chunk of tracts) jobs in forked worker processes; the seconds
    of a method are the sum over its chunks."""
    global _FORK_JOB
    if workers == 1:
        done = {m: _method_replicates(m, job, bar=progress) for m in methods}
        return {m: done[m][0] for m in methods}, {m: done[m][1] for m in methods}
    from concurrent.futures import ProcessPoolExecutor

    from dpreg._progress import spinner

    n = len(job.tracts)
    k = min(n, _CHUNKS_PER_WORKER * workers)
    bounds = np.linspace(0, n, k + 1).round().astype(int)
    chunks = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    reps: dict[str, list[np.ndarray]] = {m: [] for m in methods}
    timing = dict.fromkeys(methods, 0.0)
    _FORK_JOB = job
    try:
        # the workers are forked at the first submit, before the spinner's thread starts
        with ProcessPoolExecutor(max_workers=workers, mp_context=_fork_context()) as pool:
            futures = [(m, pool.submit(_method_replicates, m, None, False, c))
                       for m in methods for c in chunks]
            with spinner(f"DP regressions in {n} tracts ({len(methods)} methods, {workers} "
                         f"processes)", enabled=progress):
                for m, f in futures:  # in method and tract order
                    got, seconds = f.result()
                    reps[m].extend(got)
                    timing[m] += seconds
    finally:
        _FORK_JOB = None
    return reps, timing

def _summarise(table: pd.DataFrame, methods: tuple[str, ...], timing: dict[str, float]
               ) -> pd.DataFrame:
    rows = []
    for m in methods:
        t = table[table["method"] == m]
        r = t["ratio"].dropna()
        rows.append({
            "method": m,
            "tracts": int(len(t)),
            "noise_below_se": int((r < 1).sum()),
            "share_below_se": float((r < 1).mean()) if len(r) else float("nan"),
            "median_ratio": float(np.median(r)) if len(r) else float("nan"),
            "failure_rate": float(t["failed"].mean()),
            "seconds": round(timing[m], 2),
        })
    return pd.DataFrame(rows).sort_values("share_below_se", ascending=False)


def _plot(table: pd.DataFrame, methods: tuple[str, ...], path: Path, eps: float,
          trials: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=120)
    for m in methods:
        r = np.sort(table.loc[table["method"] == m, "ratio"].dropna().to_numpy())
        r = np.where(np.isinf(r), np.nan, r)
        finite = r[~np.isnan(r)]
        if finite.size == 0:
            continue
        ecdf = np.arange(1, finite.size + 1) / r.size
        ax.step(finite, ecdf, where="post", label=m)
    ax.axvline(1.0, color="black", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("Ĉ(0.68) / σ̂(p̂₂₅)  (privacy error relative to OLS standard error)")
    ax.set_ylabel("fraction of tracts")
    ax.set_ylim(0, 1)
    ax.set_title(f"Simulated state, {table['tract'].nunique():,} tracts, ε={eps:g} per tract "
                 f"({trials} runs per tract)", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _print(console: Any, summary: pd.DataFrame, report: dict[str, Any]) -> None:
    from rich.table import Table

    tab = Table(title=f"Privacy noise vs sampling error in {report['tracts']:,} simulated tracts "
                      f"(ε={report['epsilon']:g} per tract)")
    for col in ("method", "tracts with noise < OLS s.e.", "median Ĉ(0.68)/σ̂", "⊥ rate", "time"):
        tab.add_column(col, justify="right" if col != "method" else "left")
    for r in summary.itertuples():
        tab.add_row(r.method, f"{r.noise_below_se:,} ({r.share_below_se:.0%})",
                    f"{r.median_ratio:.2f}", f"{r.failure_rate:.1%}", f"{r.seconds:.1f}s")
    console.print(tab)
    console.print(report["privacy"], highlight=False)
    console.print(f"wrote {report['files']['releases']}, {report['files']['summary']} and "
                  f"{report['files']['figure']} ({report['seconds']:.1f}s)", highlight=False)


# ---------------------------------------------------------------------- the national job
#: methods of ``dpreg demo --scale nation`` by default: those whose per-group release is one
#: vectorised kernel (seconds each on 20.9 M rows); the per-group ones (the Theil-Sen variants)
#: take minutes (``--method all`` or ``--method theil-sen-exp``)
NATION_DEMO_METHODS = tuple(m.name for m in methods.specs(local=True) if m.local_kind == "vector")
NATION_METHODS = NATION_DEMO_METHODS + tuple(m.name for m in methods.specs(local=True)
                                             if m.local_kind != "vector")


def nation_data(path: str | Path, tracts: int) -> Path:
    """The simulated nation of ``tracts`` tracts as Parquet under ``path`` (written by
    :func:`dpreg.data.write_nation` with its fixed seed, or reused when ``path`` already holds
    it: a manifest ``_nation.json`` records the size and seed).  Returns the folder of the
    points; the generating lines are in ``path/truth.parquet``."""
    import json

    from dpreg.data import NATION_SEED, write_nation

    root = Path(path)
    points, manifest = root / "points", root / "_nation.json"
    want = {"tracts": tracts, "seed": NATION_SEED, "format": 1}
    if manifest.exists() and (root / "truth.parquet").exists():
        try:
            if json.loads(manifest.read_text()) == want:
                return points
        except ValueError:
            pass
    if points.exists():
        for f in points.glob("part-*.parquet"):
            f.unlink()
    truth = write_nation(points, tracts, rng=NATION_SEED)
    truth.to_parquet(root / "truth.parquet", index=False)
    manifest.write_text(json.dumps(want))
    return points


def run_nation_demo(out: str | Path = "demo-output", *, epsilon: float = 1.0,
                    methods: tuple[str, ...] = NATION_DEMO_METHODS, tracts: int | None = None,
                    data: str | Path | None = None, progress: bool = False) -> dict[str, Any]:
    """The national small-area job on the simulated nation: every tract's line with each of
    ``methods`` in secure mode (``fit_by_group``, local backend, ``random_state=None``).

    The nation (:func:`dpreg.data.simulate_nation`; default 73,057 tracts, ~20.9 M rows) is
    written once as Parquet to ``data`` (default ``out/nation-<tracts>``) and reused.  The
    tract list 0 .. tracts − 1 is the public key list (every tract gets a row).  Returns a
    JSON-ready report (also written to ``out/nation_summary.csv``): per method the seconds,
    the tracts released and ⊥, and -- an evaluation only possible on simulated data -- the
    median absolute error of the released slope against the tract's generating slope.
    ``progress`` shows a bar over the steps on stderr.
    """
    from dpreg._progress import _console, check_bars
    from dpreg._source import FileSource
    from dpreg._validation import did_you_mean
    from dpreg.data import NATION_TRACTS
    from dpreg.exceptions import UnknownNameError
    from dpreg.grouped import fit_by_group

    check_bars(progress)  # the bar is rich's (the [cli] extra)
    eps = check_epsilon(epsilon, allow_inf=False)
    n_tracts = check_int(NATION_TRACTS if tracts is None else tracts, "tracts", minimum=1)
    for m in methods:
        if m not in NATION_METHODS:
            raise UnknownNameError(f"method must be one of {list(NATION_METHODS)} (or 'all'); "
                                   f"got {m!r}{did_you_mean(m, NATION_METHODS)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    root = Path(data) if data is not None else out / f"nation-{n_tracts}"
    bounds = {"parent_rank": X_BOUNDS, "child_rank": Y_BOUNDS}
    rows: list[dict[str, Any]] = []

    def steps(bar: Any = None, task: Any = None) -> tuple[float, int]:
        def step(desc: str) -> None:
            if bar is not None:
                bar.update(task, description=desc)

        t0 = time.perf_counter()
        step(f"simulated nation of {n_tracts:,} tracts (written once)")
        points = nation_data(root, n_tracts)
        t_data = time.perf_counter() - t0
        step("reading tract, parent_rank, child_rank")
        t0 = time.perf_counter()
        frame = FileSource(points).to_pandas(["tract", "parent_rank", "child_rank"])
        truth = pd.read_parquet(root / "truth.parquet")["slope"].to_numpy()
        t_read = time.perf_counter() - t0
        if bar is not None:
            bar.advance(task)
        keys = list(range(n_tracts))
        for m in methods:
            step(f"{m}: {n_tracts:,} tracts")
            t0 = time.perf_counter()
            table = fit_by_group(frame, "tract", "parent_rank", "child_rank", method=m,
                                 epsilon=eps, bounds=bounds, groups=keys, random_state=None)
            seconds = time.perf_counter() - t0
            ok = ~table["failed"].to_numpy()
            err = np.abs(table["slope"].to_numpy()[ok] - truth[ok])
            rows.append({"method": m, "seconds": round(seconds, 2),
                         "released": int(ok.sum()), "failed": int((~ok).sum()),
                         "median_abs_slope_error": float(np.median(err)) if err.size
                         else float("nan")})
            if bar is not None:
                bar.advance(task)
        return t_data + t_read, len(frame)

    if progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=_console(), transient=True) as bar:
            task = bar.add_task("nation", total=len(methods) + 1)
            t_io, n_rows = steps(bar, task)
    else:
        t_io, n_rows = steps()
    summary = pd.DataFrame(rows)
    summary.to_csv(out / "nation_summary.csv", index=False)
    return {
        "tracts": n_tracts, "rows": n_rows, "epsilon": eps, "data": str(root),
        "data_seconds": round(t_io, 2), "methods": rows,
        "privacy": (f"ε={eps:g} per tract (replace-one neighbours, tract sizes public), secure "
                    "mode; tracts are disjoint, so the nation's release is ε-DP by parallel "
                    "composition; the tract list 0..N-1 is declared (public), so the key set "
                    "is protected"),
        "files": {"summary": str(out / "nation_summary.csv")},
    }
