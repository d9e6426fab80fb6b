"""Benchmark of the experiment harness: the full Alabi et al. Fig. 5 grid.

Target (tracker issue 6): the full grid -- 18 cells, 500 data sets × 50 trials per cell, 9
methods -- in at most 10 minutes on 2 cores.

Prints
  1. the speed-up of the vectorised engines over the library's public functions on one
     Fig. 5 data set (n = 1000, 50 releases per method; baseline measured in the same run);
  2. the full grid with ``workers`` processes: wall time, CPU time of all processes, and the
     2-core estimate CPU/2 (what the wall time would be on 2 otherwise idle cores with perfect
     balance -- the wall time alone is misleading on a shared machine).

Usage: python benchmarks/bench_harness.py [--workers 2] [--datasets 500] [--skip-grid]
(``--datasets`` scales the grid down and extrapolates linearly to 500.)
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_of, table  # noqa: E402


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def engine_vs_library() -> None:
    from dpreg.bench import engines as E
    from dpreg.bench.generators import alabi_uniform
    from dpreg.replicates import replicate_predictions
    from dpreg.simple import gradient_descent, nonprivate_theil_sen, theil_sen

    warnings.simplefilter("ignore")
    x, y = alabi_uniform(1000, sigma_x2=0.05, sigma_e2=0.005, rng=0)
    T, eps = 50, 1.0
    out = (-2.0, 2.0)

    def lib_ts(median: str) -> None:
        g = np.random.default_rng(0)
        kw = {"theta": 0.01} if median == "wide" else {}
        for _ in range(T):
            theil_sen(x, y, epsilon=eps, output_range=out, median=median, pairs=10, rng=g, **kw)

    def eng_ts(median: str) -> None:
        g = np.random.default_rng(0)
        ms = E.kmatch_multisets(x, y, 10, T, g)[0]
        if median == "smooth":
            E.smooth_median_rows(ms, epsilon_target=0.5, lo=-2, hi=2, rng=g)
        else:
            E.em_median_rows(ms, epsilon_target=0.5, lo=-2, hi=2,
                             theta=0.01 if median == "wide" else 0.0, rng=g)

    def lib_gd() -> None:
        g = np.random.default_rng(0)
        for _ in range(T):
            gradient_descent(x, y, epsilon=eps, x_bounds=(0, 1), y_bounds=(0, 1), rng=g)

    def rep_gd() -> None:
        replicate_predictions("dp-gd", x, y, epsilon=eps, x_bounds=(0, 1), y_bounds=(0, 1),
                              trials=T, rng=0)

    def eng_gd() -> None:
        E.gd_replicates(x, y, epsilon=eps, x_bounds=(0, 1), y_bounds=(0, 1), trials=T, rng=0)

    def lib_tsall() -> None:
        nonprivate_theil_sen(x, y)

    def eng_tsall() -> None:
        E.theil_sen_all_pairs(x, y)

    rows = []
    for label, base, fast in [
        ("DPExpTheilSen10Match", lambda: lib_ts("exp"), lambda: eng_ts("exp")),
        ("DPWideTheilSen10Match", lambda: lib_ts("wide"), lambda: eng_ts("wide")),
        ("DPSSTheilSen10Match", lambda: lib_ts("smooth"), lambda: eng_ts("smooth")),
        ("DPGDPure (vs single calls)", lib_gd, eng_gd),
        ("DPGDPure (vs replicate_predictions)", rep_gd, eng_gd),
        ("TheilSen, all pairs (non-private)", lib_tsall, eng_tsall),
    ]:
        b, f = best_of(base, repeat=3), best_of(fast, repeat=3)
        rows.append((label, f"{b * 1e3:.1f}", f"{f * 1e3:.1f}", f"{b / f:.1f}x"))
    print("One Fig. 5 data set (n = 1000), 50 releases per method")
    print(table(rows, ("method", "library ms", "engine ms", "speed-up")))


def grid(workers: int, datasets: int) -> None:
    from dpreg.bench import load_spec, reproduce
    from dpreg.bench.spec import Spec

    spec = load_spec("alabi-fig5")
    data = dict(spec.data)
    data["evaluation"] = {**data["evaluation"], "datasets": datasets}
    scaled = Spec(spec.name, spec.kind, spec.seed, data)
    out = Path("bench-output") / "bench_harness"
    cpu0, t0 = _cpu(), time.perf_counter()
    res = reproduce(scaled, out=out, workers=workers,
                    progress=lambda d, t, s: print(f"  {s} ({time.perf_counter() - t0:.0f}s)",
                                                   flush=True))
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    scale = 500.0 / datasets
    ev = scaled["evaluation"]
    print(f"Alabi Fig. 5 grid: {res.cells_total} cells × {datasets} data sets × {ev['trials']} "
          f"trials × {len(scaled['methods'])} methods, {workers} worker(s)")
    rows = [("wall time", f"{wall:.0f}", f"{wall * scale:.0f}"),
            ("CPU time (all processes)", f"{cpu:.0f}", f"{cpu * scale:.0f}"),
            ("2-core estimate = CPU / 2", f"{cpu / 2:.0f}", f"{cpu * scale / 2:.0f}")]
    header = ("measure", f"seconds ({datasets} data sets)", "seconds (500 data sets)")
    if datasets == 500:  # measured on the full grid: no extrapolated column
        rows = [r[:2] for r in rows]
        header = header[:2]
    print(table(rows, header))
    print(f"target: 600 s on 2 cores -> wall {wall * scale / 600:.2f}x, "
          f"2-core estimate {cpu * scale / 2 / 600:.2f}x of the budget")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--datasets", type=int, default=500)
    ap.add_argument("--skip-grid", action="store_true")
    args = ap.parse_args()
    engine_vs_library()
    if not args.skip_grid:
        grid(args.workers, args.datasets)


if __name__ == "__main__":
    main()
