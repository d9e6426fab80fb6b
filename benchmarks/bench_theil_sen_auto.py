"""All-pairs DP Theil-Sen: where ``algorithm="auto"`` switches from materialising the pairs to
the O(n log n) exact-fast path, and what that does at n = 1,000 and per group.

Run: .venv/bin/python benchmarks/bench_theil_sen_auto.py [--quick | --path-choice]

1. Crossover: one release with each path (``algorithm="materialise"`` / ``"exact-fast"``)
   for n in {50, ..., 10,000}, exp and wide medians, estimand slope and predictions (best of
   a few runs each; materialising is skipped above 5,000).  ``AUTO_FAST_MIN_N`` (the public
   size rule of ``algorithm="auto"``) is set from this table.
2. Target (issue 19): ``algorithm="auto"`` at n = 1,000 <= 20 ms and never slower than at
   n = 10,000 -- both measured here, with the former rule (materialise below 2,000) as the
   "before" column, timed in the same run.
3. Per-group Theil-Sen (``fit_by_group``, LocalBackend) on groups of 200 to 2,000 rows with
   the current rule and with the former one (the module constant set back to 2,000 for the
   "before" run; the releases of each rule are those of ``theil_sen`` with the same rule).
4. The per-group path choice (``--path-choice`` runs only this): every group forced to
   materialise vs to the exact-fast counter, group sizes 30 to 5,000, in the same run -- the
   rule (``AUTO_FAST_MIN_N``) should pick the faster path on each side of the crossover.

Data: x ~ U[0, 1], y = 0.5x + 0.2 + N(0, 0.1²); ε = 1.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import pandas as pd
from _timing import best_of, table

import dpreg.simple._theil_sen as ts
from dpreg.grouped import fit_by_group
from dpreg.simple import theil_sen

SIZES = (50, 100, 200, 300, 400, 500, 1000, 2000, 5000, 10_000)
FORMER_MIN_N = 2000


def data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    x = g.uniform(0, 1, n)
    return x, 0.5 * x + 0.2 + g.normal(0, 0.1, n)


def kwargs(median: str, estimand: str) -> dict:
    if estimand == "predictions":
        return dict(epsilon=1.0, median=median, estimand=estimand, output_range=(-0.5, 1.5),
                    x_bounds=(0, 1))
    return dict(epsilon=1.0, median=median, estimand=estimand, output_range=(-2.0, 3.0))


def best_cpu(fn, repeat: int = 5) -> float:
    """Best CPU time (seconds, this process) of one call over ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def release(n: int, algorithm: str, median: str = "exp", estimand: str = "predictions"):
    x, y = data(n)
    kw = kwargs(median, estimand)
    return lambda: theil_sen(x, y, algorithm=algorithm, rng=0, **kw)


def main(quick: bool = False) -> None:
    warnings.simplefilter("ignore")  # the seeded runs' weak-seed notice
    release(50, "exact-fast")()  # compile the numba kernel (cached on disk)
    sizes = SIZES if not quick else (100, 300, 500, 1000)
    configs = [(m, e) for m in ("exp", "wide") for e in ("predictions", "slope")]
    rows = []
    for n in sizes:
        row: list = [n]
        for med, est in configs:
            rep = 3 if n <= 2000 else 1
            mat = (best_of(release(n, "materialise", med, est), repeat=rep) if n <= 5000
                   else float("nan"))
            fast = best_of(release(n, "exact-fast", med, est), repeat=rep)
            row += [f"{mat * 1e3:.1f}", f"{fast * 1e3:.1f}"]
        rows.append(tuple(row))
    head = ("n",) + tuple(f"{m[:4]}-{e[:4]} {a}" for m, e in configs for a in ("mat", "fast"))
    print("1. one release, ms (mat = materialise, fast = exact-fast)")
    print(table(rows, head))
    print(f"   AUTO_FAST_MIN_N = {ts.AUTO_FAST_MIN_N}")

    print("\n2. algorithm='auto', predictions (the default), ms: wall (best of k) and this "
          "process's CPU time (best of k; on a shared machine the wall time also counts the "
          "time other jobs hold the cores)")
    rows = []
    for med in ("exp", "wide"):
        t, c = {}, {}
        for n in (1000, 10_000):
            t[n] = best_of(release(n, "auto", med), repeat=5 if n == 1000 else 3)
            c[n] = best_cpu(release(n, "auto", med), repeat=9 if n == 1000 else 5)
        before = best_of(release(1000, "materialise", med), repeat=3)
        rows.append((med, f"{before * 1e3:.1f}", f"{t[1000] * 1e3:.1f}",
                     f"{t[10_000] * 1e3:.1f}", f"{c[1000] * 1e3:.1f}", f"{c[10_000] * 1e3:.1f}",
                     f"{before / t[1000]:.0f}x",
                     "PASS" if c[1000] <= 0.020 and c[1000] <= c[10_000] else "MISS"))
    print(table(rows, ("median", "n=1000 before", "n=1000 auto", "n=10000 auto",
                       "n=1000 CPU", "n=10000 CPU", "speed-up",
                       "CPU <= 20 ms and <= n=10000")))

    print("\n3. fit_by_group theil-sen-exp (LocalBackend, 1 worker), s")
    rows = []
    for groups, size in ((50, 200), (20, 500), (10, 1000), (5, 2000)) if not quick else (
            (10, 500),):
        fit = grouped_fit(groups, size)

        after = best_of(fit, repeat=2)
        ts.AUTO_FAST_MIN_N = FORMER_MIN_N
        try:
            before = best_of(fit, repeat=2)
        finally:
            ts.AUTO_FAST_MIN_N = _CURRENT
        rows.append((groups, size, f"{before:.3f}", f"{after:.3f}", f"{before / after:.1f}x"))
    print(table(rows, ("groups", "rows/group", "former rule s", "current rule s", "speed-up")))


def grouped_fit(groups: int, size: int):
    """A seeded ``fit_by_group`` theil-sen-exp job on ``groups`` groups of ``size`` rows (the
    data built once; the returned callable times only the fit)."""
    g = np.random.default_rng(5)
    keys = np.repeat(np.arange(groups), size)
    x = g.uniform(0, 1, keys.size)
    df = pd.DataFrame({"k": keys, "x": x,
                       "y": np.clip(0.2 + 0.5 * x + g.normal(0, 0.1, keys.size), 0, 1)})

    def fit() -> object:
        return fit_by_group(df, "k", "x", "y", method="theil-sen-exp", epsilon=1.0,
                            bounds={"x": (0, 1), "y": (0, 1)}, groups=list(range(groups)),
                            random_state=0, workers=1)

    return fit


PATH_SIZES = ((40, 30), (20, 100), (10, 200), (6, 300), (5, 400), (3, 1000), (2, 2000), (1, 5000))


def path_choice(sizes: tuple[tuple[int, int], ...] = PATH_SIZES) -> None:
    """4. The per-group path choice: ``fit_by_group`` theil-sen-exp with every group forced to
    materialise vs forced to the exact-fast counter (the module rule set to ∞ / 2), same run,
    interleaved, best of 3; materialising is skipped above 2,000 rows per group."""
    print("\n4. fit_by_group theil-sen-exp, path per group: materialise vs exact-fast, s")
    rows = []
    for groups, size in sizes:
        fit = grouped_fit(groups, size)

        t = {"mat": float("inf"), "fast": float("inf")}
        try:
            for _ in range(3):
                for name, rule in (("mat", 10**12), ("fast", 2)):
                    if name == "mat" and size > 2000:
                        continue
                    ts.AUTO_FAST_MIN_N = rule
                    t[name] = min(t[name], best_of(fit, repeat=1))
        finally:
            ts.AUTO_FAST_MIN_N = _CURRENT
        ratio = t["fast"] / t["mat"] if np.isfinite(t["mat"]) else float("nan")
        uses = "exact-fast" if size >= _CURRENT else "materialise"
        rows.append((groups, size, f"{t['mat']:.3f}", f"{t['fast']:.3f}", f"{ratio:.2f}", uses))
    print(table(rows, ("groups", "rows/group", "materialise s", "exact-fast s", "fast/mat",
                       f"rule (>= {_CURRENT})")))


_CURRENT = ts.AUTO_FAST_MIN_N

if __name__ == "__main__":
    if "--path-choice" in sys.argv:
        warnings.simplefilter("ignore")
        path_choice()
    else:
        main(quick="--quick" in sys.argv)
        path_choice(((20, 100), (6, 300), (5, 400), (3, 1000)) if "--quick" in sys.argv
                    else PATH_SIZES)
