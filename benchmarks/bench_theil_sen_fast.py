"""Exact all-pairs DP Theil-Sen in O(n log n) (dpreg.simple.fast) vs the materialising path.

Run: .venv/bin/python benchmarks/bench_theil_sen_fast.py [--quick]

Targets (tracker issue 7): one DP release (DPExpTheilSen, predictions at the two default
evaluation points, ε = 1) at n = 15,848 in <= 0.3 s and at n = 1e5 in <= 2 s with O(n) memory;
>= 50x faster than materialising all n(n−1)/2 pairs at n = 1e4.  Every ratio is against a
baseline measured in the same run.  Data: x ~ U[0, 1], y = 0.5x + 0.2 + N(0, 0.1²).
"""

from __future__ import annotations

import sys
import time
import tracemalloc

import numpy as np
from _timing import best_of, table

from dpreg.simple import theil_sen
from dpreg.simple.fast import HAVE_NUMBA, all_pairs_median, dp_median_all_pairs, pair_counter
from dpreg.simple.pairs import all_pairs, doubled_pair_values

KW = dict(epsilon=1.0, output_range=(-0.5, 1.5), x_bounds=(0, 1))


def data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    x = g.uniform(0, 1, n)
    return x, 0.5 * x + 0.2 + g.normal(0, 0.1, n)


def release(x: np.ndarray, y: np.ndarray, algorithm: str, seed: int = 0) -> object:
    return theil_sen(x, y, **KW, algorithm=algorithm, rng=seed)


def peak_bytes(fn) -> int:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main(quick: bool = False) -> None:
    release(*data(50), "exact-fast")  # compile the numba kernel (cached on disk)
    rows = []
    sizes = (15_848, 100_000) if not quick else (15_848,)
    for n in sizes:
        x, y = data(n)
        t = best_of(lambda x=x, y=y: release(x, y, "exact-fast"), repeat=5)
        target = 0.3 if n == 15_848 else 2.0
        mem = peak_bytes(lambda x=x, y=y: release(x, y, "exact-fast"))
        rows.append((n, "DP release, exact-fast", f"{t:.3f}", f"<= {target}",
                     "PASS" if t <= target else "MISS", f"{mem / n:.0f} B/row"))
    print(table(rows, ("n", "what", "seconds", "target", "", "peak memory")))

    # ratio vs the materialising implementation at n = 1e4 (same run)
    n = 10_000 if not quick else 3_000
    x, y = data(n, seed=1)
    t0 = time.perf_counter()
    release(x, y, "materialise")
    t_mat = time.perf_counter() - t0
    t_fast = best_of(lambda: release(x, y, "exact-fast"), repeat=5)
    d = all_pairs(n)
    t0 = time.perf_counter()
    med_ref = float(np.median(doubled_pair_values(x, y, d, estimand="slope")))
    t_med_mat = time.perf_counter() - t0
    t_med = best_of(lambda: all_pairs_median(x, y), repeat=3)
    assert all_pairs_median(x, y) == med_ref
    rows = [(n, "DP release (2 predictions)", f"{t_mat:.3f}", f"{t_fast:.4f}",
             f"{t_mat / t_fast:.0f}x", ">= 50x"),
            (n, "exact median (slope)", f"{t_med_mat:.3f}", f"{t_med:.4f}",
             f"{t_med_mat / t_med:.0f}x", "")]
    print()
    print(table(rows, ("n", "what", "materialise s", "exact-fast s", "speed-up", "target")))

    # counting kernel: numba vs the pure-NumPy fallback (same counts)
    n = 100_000 if not quick else 20_000
    x, y = data(n, seed=2)
    rows = []
    counts = {}
    for backend in (["numba"] if HAVE_NUMBA else []) + ["numpy"]:
        pc = pair_counter(x, y, backend=backend)
        counts[backend] = pc.count(0.5)
        t = best_of(lambda pc=pc: pc.count(0.5), repeat=3)
        rows.append((n, backend, f"{t * 1e3:.1f}"))
    assert len(set(counts.values())) == 1
    print()
    print(table(rows, ("n", "rank-count kernel", "ms per count")))
    # i.i.d. draws reuse the envelope (replicate studies)
    x, y = data(15_848, seed=3)
    t = best_of(lambda: dp_median_all_pairs(x, y, epsilon=1 / (2 * 15_847), lo=-0.5, hi=1.5,
                                            rng=0, size=1000), repeat=3)
    print(f"\n1000 i.i.d. draws at n = 15,848: {t:.3f} s")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
