"""All-pairs DP Theil-Sen wall time at n = 1,000 against n = 10,000 (issue 19 item 3: n = 1,000
within 20 ms of wall time and never slower than n = 10,000).

Run: .venv/bin/python benchmarks/bench_theil_sen_wall.py [--repeat R]

One release of ``dpreg.simple.theil_sen`` (``algorithm="auto"``, ε = 1, all pairs) per call,
exp and widened medians, the slope and the two default predictions, seeded and secure mode;
best and median wall time of R calls after one warm-up call (numba compilation and caches are
excluded). The ratio column is n = 1,000 over n = 10,000 in the same run.  Wall figures are
only meaningful on a quiet machine; run ``uptime`` alongside.

Data: x ~ U[0, 1], y = 0.5x + 0.2 + N(0, 0.1²).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
from _timing import table

from dpreg.simple import theil_sen


def _times(fn, repeat: int) -> list[float]:
    fn()  # warm-up: compilation and caches
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    gen = np.random.default_rng(0)
    data = {}
    for n in (1000, 10_000):
        x = gen.uniform(0.0, 1.0, n)
        data[n] = (x, 0.5 * x + 0.2 + gen.normal(0.0, 0.1, n))
    rows = []
    for median in ("exp", "wide"):
        for estimand in ("predictions", "slope"):
            out_range = (-1.0, 2.0) if estimand == "predictions" else (-5.0, 5.0)
            for mode, rng in (("seeded", 1), ("secure", None)):
                cell = {}
                for n, (x, y) in data.items():
                    def fit(x=x, y=y, rng=rng):
                        return theil_sen(x, y, epsilon=1.0, output_range=out_range,
                                         x_bounds=(0.0, 1.0), median=median,
                                         estimand=estimand, rng=rng)
                    cell[n] = _times(fit, args.repeat)
                b1, b10 = min(cell[1000]), min(cell[10_000])
                rows.append((median, estimand, mode,
                             f"{b1 * 1e3:.1f}", f"{statistics.median(cell[1000]) * 1e3:.1f}",
                             f"{b10 * 1e3:.1f}", f"{statistics.median(cell[10_000]) * 1e3:.1f}",
                             f"{b1 / b10:.2f}x", "pass" if b1 <= 0.020 and b1 <= b10 else "MISS"))
    print(table(rows, ("median", "estimand", "mode", "n=1e3 best ms", "n=1e3 median ms",
                       "n=1e4 best ms", "n=1e4 median ms", "1e3 / 1e4", "<= 20 ms, <= 1e4")))


if __name__ == "__main__":
    main()
