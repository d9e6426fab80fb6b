"""Mechanism and ledger throughput, as ratios to a non-private baseline measured in the same run.

Run: .venv/bin/python benchmarks/bench_mechanisms.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from _timing import best_of, table

from dpreg import Ledger, PureDP
from dpreg.mechanisms import exp_quantile, laplace, smooth_median
from dpreg.privacy import gdp_mu


def main() -> None:
    g = np.random.default_rng(0)
    rows = []
    for n in (1_000, 100_000, 1_000_000):
        z = g.normal(size=n)
        base = best_of(lambda: np.median(z))
        t_exp = best_of(lambda: exp_quantile(z, epsilon=1.0, lo=-5, hi=5, rng=g))
        t_wide = best_of(lambda: exp_quantile(z, epsilon=1.0, lo=-5, hi=5, theta=0.01, rng=g))
        rows.append((f"exp_quantile n={n:,}", f"{t_exp * 1e3:.2f} ms", f"{t_exp / base:.1f}x"))
        rows.append((f"exp_quantile θ>0 n={n:,}", f"{t_wide * 1e3:.2f} ms", f"{t_wide / base:.1f}x"))
        if n <= 100_000:
            t_ss = best_of(lambda: smooth_median(z, epsilon=1.0, lo=-5, hi=5, rng=g), repeat=3)
            rows.append((f"smooth_median n={n:,}", f"{t_ss * 1e3:.2f} ms", f"{t_ss / base:.1f}x"))
    v = np.zeros(1_000_000)
    base = best_of(lambda: v + g.standard_normal(v.size))
    t_lap = best_of(lambda: laplace(v, sensitivity=1.0, epsilon=1.0, rng=g))
    rows.append(("laplace 1e6 draws", f"{t_lap * 1e3:.2f} ms", f"{t_lap / base:.2f}x vs normal"))
    t_gdp = best_of(lambda: gdp_mu(1.0, 1e-6), repeat=20)
    rows.append(("GDP.from_approx (root find)", f"{t_gdp * 1e6:.0f} µs", "-"))

    led = Ledger(PureDP(1e9))
    t_mem = best_of(lambda: led.spend(PureDP(0.001)), repeat=200)
    with tempfile.TemporaryDirectory() as d:
        led_db = Ledger(PureDP(1e9), Path(d) / "l.db")
        t_db = best_of(lambda: led_db.spend(PureDP(0.001)), repeat=50)
        led_db.close()
    rows.append(("Ledger.spend in memory", f"{t_mem * 1e6:.1f} µs", "1.0x"))
    rows.append(("Ledger.spend SQLite (fsync)", f"{t_db * 1e6:.1f} µs", f"{t_db / t_mem:.0f}x"))
    print(table(rows, ("operation", "time", "ratio to baseline")))
    print("baselines: np.median on the same data; Gaussian draws of the same size; in-memory ledger")


if __name__ == "__main__":
    main()
