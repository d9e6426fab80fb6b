"""Runtime of the multivariate DP regressions, each as a ratio to plain OLS
(``numpy.linalg.lstsq``) measured in the same run on the same data.

Cases (the performance targets of the TukeyEM and BoostedAdaSSP papers):

* TukeyEM on n = 22,000, d = 11 (10 features + intercept), m = 1000 models -- Amin et al.'s
  synthetic setting (sklearn ``make_regression`` with 10 informative features, noise 10);
* BoostedAdaSSP with T = 100 rounds on 100,000 × 10;
* AdaSSP, DP gradient descent (T = 100) and the SSCP release + regression on 100,000 × 10.

OLS and the method are timed alternately (one pair per repeat, ``--repeats``, default 7), and
the ratio reported is the median of the per-pair ratios, so a change in machine load during
the run affects both sides.  Run: ``.venv/bin/python benchmarks/bench_multivariate.py``
(``OMP_NUM_THREADS=1`` gives the most stable numbers on a shared machine).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable

import numpy as np
from sklearn.datasets import make_regression

from dpreg.covariance import release_sscp
from dpreg.multivariate import adassp, boosted_adassp, dp_gradient_descent, tukey_em


def paired(fn: Callable[[], object], base: Callable[[], object], repeats: int
           ) -> tuple[float, float, float]:
    """(median method time, median baseline time, median per-pair ratio)."""
    fn()
    base()  # warm-up (imports, caches)
    t_fn, t_base, ratios = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        base()
        t1 = time.perf_counter()
        fn()
        t2 = time.perf_counter()
        t_base.append(t1 - t0)
        t_fn.append(t2 - t1)
        ratios.append((t2 - t1) / (t1 - t0))
    return statistics.median(t_fn), statistics.median(t_base), statistics.median(ratios)


def ols(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.linalg.lstsq(X, y, rcond=None)[0]


def report(name: str, timing: tuple[float, float, float]) -> None:
    t, t_ols, ratio = timing
    print(f"{name:<46s} {t * 1e3:10.1f} ms   OLS {t_ols * 1e3:8.2f} ms   ratio {ratio:8.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    # --- TukeyEM, Amin et al.'s synthetic setting
    X, y = make_regression(n_samples=22_000, n_features=10, n_informative=10, noise=10.0,
                           random_state=0)
    Xi = np.column_stack([np.ones(len(X)), X])
    timing = paired(lambda: tukey_em(Xi, y, epsilon=np.log(3), delta=1e-5, n_models=1000, rng=0),
                    lambda: ols(Xi, y), args.repeats)
    res = tukey_em(Xi, y, epsilon=np.log(3), delta=1e-5, n_models=1000, rng=0)
    status = "⊥" if res.failed else "ok"
    report(f"TukeyEM n=22,000 d=11 m=1000 (PTR {status})", timing)

    # --- 1e5 x 10 (+ intercept), features in [-1, 1]
    rng = np.random.default_rng(1)
    n, d = 100_000, 10
    F = rng.uniform(-1, 1, size=(n, d))
    yb = F @ rng.normal(size=d) + 0.5 + rng.normal(0, 0.5, n)
    Z = np.column_stack([np.ones(n), F])
    Zu = Z / np.sqrt(d + 1)  # unit-ball rows, as the estimators scale them
    ys = np.clip(yb, -8, 8) / 8
    def base() -> object:
        return ols(Z, yb)

    report("BoostedAdaSSP T=100 on 1e5 x 10",
           paired(lambda: boosted_adassp(Zu, ys, epsilon=1.0, delta=1e-6, n_rounds=100, rng=0),
                  base, args.repeats))
    report("AdaSSP on 1e5 x 10",
           paired(lambda: adassp(Z, ys, x_norm_bound=np.sqrt(d + 1), y_bound=1.0, epsilon=1.0,
                                 delta=1e-6, rng=0), base, args.repeats))
    report("DP gradient descent T=100 on 1e5 x 10",
           paired(lambda: dp_gradient_descent(Zu, ys, epsilon=1.0, delta=1e-6, n_iter=100,
                                              rng=0), base, args.repeats))
    # the default since issue 30: T = 1600 rounds (noise drawn in one batched sampler call)
    report("DP gradient descent default (T=1600) on 1e5 x 10",
           paired(lambda: dp_gradient_descent(Zu, ys, epsilon=1.0, delta=1e-6, rng=0), base,
                  args.repeats))
    Zs, yss = Zu[:1000], ys[:1000]
    report("DP gradient descent default (T=1600) on 1e3 x 10",
           paired(lambda: dp_gradient_descent(Zs, yss, epsilon=1.0, delta=1e-6, rng=0),
                  lambda: ols(Z[:1000], yb[:1000]), args.repeats))
    cols = [f"x{j}" for j in range(d)] + ["y"]
    data = np.column_stack([F, np.clip(yb, -8, 8)])
    bounds = [(-1.0, 1.0)] * d + [(-8.0, 8.0)]
    formula = "y ~ " + " + ".join(cols[:-1])

    def sscp() -> object:
        rel = release_sscp(data, columns=cols, bounds=bounds, epsilon=1.0, delta=1e-6, random_state=0)
        return rel.regress(formula)

    report("SSCP release + regress on 1e5 x 10", paired(sscp, base, args.repeats))


if __name__ == "__main__":
    main()
