"""Tight Theil-Sen interval targets: the O(M) scan over all ranks against the O(1)-memory
bisection (``dpreg.simple.ci.tight_targets(search=...)``), CPU time (``time.process_time``)
and peak traced allocation, in the same run.  All pairs (M = n(n − 1)), α = 0.1.

    .venv/bin/python benchmarks/bench_tight_targets.py
"""

from __future__ import annotations

import math
import time
import tracemalloc

from dpreg.simple.ci import tight_targets, union_targets
from dpreg.simple.pairs import kendall_null_variance


def run(n: int, eps: float, search: str) -> tuple[float, float, dict]:
    size, k = n * (n - 1), n - 1
    e = eps / 2 / (2 * k)
    kw = dict(size=size, sigma=math.sqrt(kendall_null_variance(n)), eps_lower=e, eps_upper=e,
              half_range=2.0, theta=4.0 / max(eps * n, 200.0))
    u = union_targets(alpha=0.1, r_alpha=0.5, **kw)
    tracemalloc.start()
    t0 = time.process_time()
    r = tight_targets(alpha=0.1, union=u, search=search, **kw)
    cpu = time.process_time() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return cpu, peak, r


def main() -> None:
    print("n       eps  search  CPU ms   peak MiB  (t_lower, t_upper)   scan/bisect CPU")
    for n in (300, 1000, 3162, 20000, 200000):
        for eps in (1.0, 10.0):
            scan = run(n, eps, "scan") if n <= 1000 else None
            bis = run(n, eps, "bisect")
            for name, res in (("scan", scan), ("bisect", bis)):
                if res is None:
                    continue
                cpu, peak, r = res
                ratio = f"{scan[0] / bis[0]:.1f}x" if scan and name == "bisect" else ""
                print(f"{n:<7} {eps:<4} {name:<7} {cpu * 1e3:7.1f} {peak / 2**20:9.2f}  "
                      f"({r['t_lower']}, {r['t_upper']})  {ratio}")
            if scan is not None:
                assert (scan[2]["t_lower"], scan[2]["t_upper"]) == \
                    (bis[2]["t_lower"], bis[2]["t_upper"])


if __name__ == "__main__":
    main()
