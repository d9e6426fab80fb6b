"""Simple (one-x) suite timings, as ratios to non-private baselines measured in the same run.

Run: .venv/bin/python benchmarks/bench_simple.py

Baselines: ``dpreg.simple.ols`` (OLS with eq. (3) standard errors) for the OLS-type methods, and
``dpreg.simple.nonprivate_theil_sen`` on the same pair design for the Theil-Sen methods
(``scipy.stats.theilslopes`` on all pairs is printed as an outside reference).  ε = 1
throughout; data y = 0.5x + 0.2 + N(0, 0.1²), x ~ U[0, 1].
"""

from __future__ import annotations

import warnings

import numpy as np
from _timing import best_of, table
from scipy import stats

from dpreg.simple import (
    dp_intercept,
    gradient_descent,
    noisy_stats,
    nonprivate_theil_sen,
    ols,
    theil_sen,
    theil_sen_ci,
)


def bench_n(n: int, g: np.random.Generator, rows: list[tuple]) -> None:
    """Time every method on one dataset of size n (appends to ``rows``)."""
    x = g.uniform(0, 1, n)
    y = 0.5 * x + 0.2 + g.normal(0, 0.1, n)
    b = {"x_bounds": (0, 1), "y_bounds": (0, 1)}
    rep = 5 if n < 2000 else 3
    t_ols = best_of(lambda: ols(x, y), repeat=rep, number=5)
    t_ts = {p: best_of(lambda p=p: nonprivate_theil_sen(x, y, pairs=p, rng=g), repeat=rep)
            for p in ("all", 10)}
    t_scipy = best_of(lambda: stats.theilslopes(y, x), repeat=rep)
    rows.append((n, "OLS (baseline)", f"{t_ols * 1e3:.3f}", "1.0x OLS"))
    rows.append((n, "Theil-Sen all pairs (baseline)", f"{t_ts['all'] * 1e3:.2f}",
                 f"{t_ts['all'] / t_ols:.0f}x OLS"))
    rows.append((n, "Theil-Sen 10 matchings (baseline)", f"{t_ts[10] * 1e3:.2f}",
                 f"{t_ts[10] / t_ols:.0f}x OLS"))
    rows.append((n, "scipy.stats.theilslopes (reference)", f"{t_scipy * 1e3:.2f}",
                 f"{t_scipy / t_ts['all']:.2f}x TS-all"))

    def add(label: str, fn, base: float, base_name: str) -> None:
        t = best_of(fn, repeat=rep)
        rows.append((n, label, f"{t * 1e3:.3f}" if t < 1e-2 else f"{t * 1e3:.2f}",
                     f"{t / base:.2f}x {base_name}"))

    add("noisy_stats", lambda: noisy_stats(x, y, epsilon=1, rng=g, **b), t_ols, "OLS")
    add("dp_intercept", lambda: dp_intercept(x, y, epsilon=1, y_bounds=(0, 1), rng=g),
        t_ols, "OLS")
    add("gradient_descent pure (T=80)",
        lambda: gradient_descent(x, y, epsilon=1, rng=g, **b), t_ols, "OLS")
    add("gradient_descent zcdp (T=80)",
        lambda: gradient_descent(x, y, rho=0.5, variant="zcdp", rng=g, **b), t_ols, "OLS")
    for pairs in ("all", 10):
        base = t_ts[pairs]
        name = "TS-all" if pairs == "all" else "TS-10"
        for median in ("exp", "wide", "smooth"):
            add(f"theil_sen {median} pairs={pairs}",
                lambda m=median, p=pairs: theil_sen(x, y, epsilon=1, output_range=(-0.5, 1.5),
                                                    median=m, pairs=p, rng=g), base, name)
        add(f"theil_sen exp slope pairs={pairs}",
            lambda p=pairs: theil_sen(x, y, epsilon=1, output_range=(-2, 2), estimand="slope",
                                      pairs=p, rng=g), base, name)
        for method in ("union", "tight"):
            add(f"theil_sen_ci {method} pairs={pairs}",
                lambda m=method, p=pairs: theil_sen_ci(x, y, epsilon=1, output_range=(-2, 2),
                                                       ci_method=m, pairs=p, rng=g), base, name)


def main() -> None:
    warnings.simplefilter("ignore")
    g = np.random.default_rng(0)
    rows: list[tuple] = []
    for n in (100, 400, 2000):
        bench_n(n, g, rows)
    print(table(rows, ("n", "method", "time (ms)", "ratio")))
    print("Theil-Sen predictions: two DP medians (p25, p75) of the doubled multiset; baselines "
          "compute the same pair design; eps = 1.")


if __name__ == "__main__":
    main()
