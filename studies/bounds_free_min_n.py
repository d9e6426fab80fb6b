"""Minimum data size for bounds-free mode (issue 20, item 5): ``method="auto"`` with
``bounds="private"`` on a public simulated design, over n and ε.

Design (public, seeded): x ~ N(50, 10²), y = 2 + 0.5·x + N(0, 5²); one x; coarse range ±10⁶
(the default).  For each (n, ε): ``reps`` fits with fresh data; reported: the share of fits the
reliability check lets through (``dpreg.auto.checks``), and the median relative slope error
|ŝ − 0.5|/0.5 of the fits it lets through and of all fits made with ``allow_unreliable=True``.

Run: ``python studies/bounds_free_min_n.py`` (a few minutes on 2 cores).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pandas as pd

import dpreg
from dpreg._random import SimulationGenerator


def main(reps: int = 10) -> pd.DataFrame:
    rows = []
    for eps in (0.5, 1.0, 2.0, 4.0):
        for n in (300, 1000, 2000, 3000, 5000, 10000, 30000):
            g = np.random.default_rng([n, int(eps * 10)])
            passed, err_ok, err_all = 0, [], []
            for r in range(reps):
                x = g.normal(50, 10, n)
                df = pd.DataFrame({"x": x, "y": 2 + 0.5 * x + g.normal(0, 5, n)})
                gen = SimulationGenerator(np.random.PCG64(np.random.SeedSequence([n, r, 7])))
                with warnings.catch_warnings(record=True):
                    warnings.simplefilter("always")
                    res = dpreg.regress(df, "y ~ x", method="auto", epsilon=eps,
                                        bounds="private",  # type: ignore[arg-type]
                                        random_state=gen,
                                        allow_unreliable=True)
                e = abs(float(res.params["x"]) - 0.5) / 0.5 if not res.failed else np.inf
                err_all.append(e)
                if res.extra.get("reliable", True):
                    passed += 1
                    err_ok.append(e)
            rows.append({"epsilon": eps, "n": n, "passes_check": passed / reps,
                         "median_rel_error_passed": float(np.median(err_ok)) if err_ok else None,
                         "median_rel_error_all": float(np.median(err_all))})
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


if __name__ == "__main__":
    out = main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
    print(out.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
