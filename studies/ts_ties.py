"""How often the Theil-Sen release rule for tied slopes fires (issue 30 item 4; evaluation
only).

The rule (:func:`dpreg.simple.ci.point_mass_flag`) flags a released slope interval that
contains 0 and lies within 2θ of it.  It should fire where the pairwise slopes pile up at
exactly 0 (a response with few values) and essentially never on a continuous response.  Each
release is :func:`dpreg.simple.theil_sen_with_ci` with its defaults (what
``DPTheilSen(ci_alpha=0.05)`` and ``regress(..., ci_alpha=0.05)`` run: the line at ε/2, the
slope interval at ε/2, ``ci_method="auto"``, all pairs).  Three kinds of data:

* ``continuous``: x ~ U(0, 10), y = 0.3 + b·x + N(0, 0.1²) clipped to [0, 1], b = 0.03 or
  b = 0 (a true slope of exactly 0: the interval contains 0, but it is as wide as the
  sampling spread, far more than 4θ);
* ``binary``: the same x, y ~ Bernoulli(0.2 + 0.03·x) (about half of the pairs share their y);
* ``fair``: the statsmodels Fair (1978) affairs survey (6,366 rows), the 0/1 response "any
  affairs" (affairs > 0) on one regressor at a time (``age``, ``yrs_married``, ``educ``), with
  the data set's public bounds.

Per cell: the number of releases, how many were flagged, the share of pairs with a slope of
exactly 0 in the data (averaged over replicates; not private, evaluation only) and the median
released interval ends.  Runs in well under 2 CPU-minutes:

``python -m studies.ts_ties --out docs/simple-data/ts-ties.csv``
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["ties_study"]

ALPHA = 0.05
FAIR_X = ("age", "yrs_married", "educ")


def _release(x: np.ndarray, y: np.ndarray, eps: float, xb: tuple[float, float],
             yb: tuple[float, float], rng: np.random.Generator) -> tuple[bool, float, float]:
    from dpreg.simple import theil_sen_with_ci

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded generators, the TiedSlopesWarning itself
        res = theil_sen_with_ci(x, y, epsilon=eps, ci_alpha=ALPHA, x_bounds=xb, y_bounds=yb,
                                rng=rng)
    name = res.params.index[1]
    lo, hi = res.conf_int(ALPHA).loc[name]
    return bool(res.extra["ci_point_mass"][name]), float(lo), float(hi)


def _cell(kind: str, label: str, n: int, eps: float, reps: int, data, xb, yb,
          seed: Sequence[int]) -> dict[str, object]:
    from dpreg.simple.ties import zero_slope_share

    ss = np.random.SeedSequence(list(seed))
    flags, lows, highs, shares = [], [], [], []
    for child in ss.spawn(reps):
        s_data, s_rel = child.spawn(2)
        x, y = data(np.random.default_rng(s_data))
        shares.append(zero_slope_share(x, y))
        f, lo, hi = _release(x, y, eps, xb, yb, np.random.default_rng(s_rel))
        flags.append(f)
        lows.append(lo)
        highs.append(hi)
    return {"data": kind, "design": label, "n": n, "epsilon": eps, "releases": reps,
            "flagged": int(np.sum(flags)), "flagged_share": float(np.mean(flags)),
            "zero_slope_pair_share": float(np.mean(shares)),
            "median_ci_low": float(np.median(lows)), "median_ci_high": float(np.median(highs))}


def ties_study(*, ns: Sequence[int] = (200, 1000, 4000),
               epsilons: Sequence[float] = (1.0, 4.0), continuous_reps: int = 80,
               binary_reps: int = 10, fair_reps: int = 15, seed: int = 0) -> pd.DataFrame:
    rows = []
    xb, yb = (0.0, 10.0), (0.0, 1.0)
    for n in ns:
        for eps in epsilons:
            for b in (0.03, 0.0):
                def cont(g: np.random.Generator, n: int = n, b: float = b
                         ) -> tuple[np.ndarray, np.ndarray]:
                    x = g.uniform(0.0, 10.0, n)
                    return x, np.clip(0.3 + b * x + g.normal(0.0, 0.1, n), 0.0, 1.0)

                rows.append(_cell("continuous", f"slope {b:g}", n, eps, continuous_reps, cont,
                                  xb, yb, (seed, 1, n, int(eps * 10), int(b * 100))))

            def binary(g: np.random.Generator, n: int = n) -> tuple[np.ndarray, np.ndarray]:
                x = g.uniform(0.0, 10.0, n)
                return x, (g.uniform(size=n) < 0.2 + 0.03 * x).astype(float)

            rows.append(_cell("binary", "Bernoulli(0.2 + 0.03x)", n, eps, binary_reps, binary,
                              xb, yb, (seed, 2, n, int(eps * 10))))
    from dpreg.data.real import load_fair

    fair = load_fair()
    frame = fair.frame
    y01 = (frame["affairs"] > 0).to_numpy(dtype=np.float64)
    for col in FAIR_X:
        xcol = frame[col].to_numpy(dtype=np.float64)
        for eps in epsilons:
            def fixed(g: np.random.Generator, xcol: np.ndarray = xcol
                      ) -> tuple[np.ndarray, np.ndarray]:
                return xcol, y01

            rows.append(_cell("fair", f"affairs > 0 on {col}", int(xcol.size), eps, fair_reps,
                              fixed, fair.bounds[col], (0.0, 1.0),
                              (seed, 3, FAIR_X.index(col), int(eps * 10))))
    return pd.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    t0 = time.process_time()
    table = ties_study(seed=args.seed)
    cpu = time.process_time() - t0
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"CPU: {cpu:.1f} s")
    for kind, part in table.groupby("data", sort=False):
        print(f"{kind}: {int(part.flagged.sum())} of {int(part.releases.sum())} flagged")
    if args.out:
        table.to_csv(args.out, index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
