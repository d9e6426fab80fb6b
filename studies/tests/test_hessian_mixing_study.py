"""The paired statistics of studies.hessian_mixing: the sign-test interval for a median ratio."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from studies.hessian_mixing import median_ratio_ci, table


@pytest.mark.parametrize("n", [6, 10, 20, 50, 51])
def test_interval_is_the_sign_test_inversion(n):
    # with c of n log ratios negative (the rest positive), the interval lies below 1 exactly
    # when the two-sided exact sign test rejects "median ratio 1" at 5%, and above 1 exactly
    # when it rejects the other way
    for c in range(n + 1):
        lr = np.r_[-np.arange(1, c + 1, dtype=float), np.arange(1, n - c + 1, dtype=float)]
        _, lo, hi = median_ratio_ci(lr)
        p = stats.binomtest(c, n, 0.5).pvalue
        assert (hi < 1) == (p <= 0.05 and c > n / 2), (n, c, p, hi)
        assert (lo > 1) == (p <= 0.05 and c < n / 2), (n, c, p, lo)


def test_interval_order_statistics_and_coverage():
    # n = 20: k = 6, exact coverage 1 - 2 P(Bin(20, 1/2) <= 5) = 0.9586 (k = 7 would give 0.885)
    lr = np.linspace(-1, 1, 20)
    med, lo, hi = median_ratio_ci(lr[::-1])
    assert med == pytest.approx(1.0)
    assert (lo, hi) == (pytest.approx(math.exp(lr[5])), pytest.approx(math.exp(lr[14])))
    rng = np.random.default_rng(5)
    samples = rng.standard_t(3, size=(4000, 20)) + 0.3  # true median log ratio 0.3
    cover = np.mean([lo <= math.exp(0.3) <= hi
                     for _, lo, hi in (median_ratio_ci(s) for s in samples)])
    # 4000 draws: sd 0.0031 around 0.9586; the k = 7 interval's 0.885 is 20 sd away
    assert abs(cover - 0.9586) < 0.013


def test_interval_degenerate():
    assert median_ratio_ci(np.array([-1.0, -2.0, -3.0]))[1:] == (0.0, math.inf)  # n too small
    assert math.isnan(median_ratio_ci(np.array([np.nan]))[0])


def test_table_counts_a_clear_win():
    rows = []
    for t in range(30):
        for m, mse in (("IHM", 1.0), ("AdaSSP", 2.0 + t), ("BoostedAdaSSP", 1.5)):
            rows.append({"data": "a", "n_train": 100, "d": 2, "epsilon": 1.0, "method": m,
                         "trial": t, "test_mse": mse, "ols_test_mse": 1.0, "rel_mse": mse})
    md, v = table(pd.DataFrame(rows))
    assert v["ihm_best_significant"] == 1 and v["ihm_worse_significant"] == 0
    assert "| win |" in md


def _reject_rates(shift: float, n: int, reps: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    lr = rng.standard_t(3, size=(reps, n)) + shift
    out = np.array([median_ratio_ci(s)[1:] for s in lr])
    return float(np.mean(out[:, 1] < 1)), float(np.mean(out[:, 0] > 1))


def test_paired_test_size_and_power_match_the_sign_test():
    # n = 50 pairs: k = 18, the interval excludes 1 on the low side exactly when at least
    # 33 of 50 log ratios are negative; P(Bin(50, 1/2) >= 33) = 0.0164 per side.
    n, reps = 50, 3000
    tail = float(stats.binom.sf(32, n, 0.5))
    assert tail == pytest.approx(0.0164, abs=5e-4)
    win, loss = _reject_rates(0.0, n, reps, seed=3)
    sd = math.sqrt(tail * (1 - tail) / reps)
    assert abs(win - tail) < 4 * sd and abs(loss - tail) < 4 * sd
    # IHM's log errors shifted down by 0.5 (t3 noise): each pair favours IHM with probability
    # p = F_t3(0.5) and the power is P(Bin(50, p) >= 33)
    p = float(stats.t.cdf(0.5, 3))
    power = float(stats.binom.sf(32, n, p))
    win, loss = _reject_rates(-0.5, n, reps, seed=4)
    assert abs(win - power) < 4 * math.sqrt(power * (1 - power) / reps)
    assert loss == 0.0
    assert power > 0.5  # the test would fail if the shift went undetected


def _rows(ihm_factor: np.ndarray, split_effect: np.ndarray, noise: np.ndarray) -> pd.DataFrame:
    rows = []
    for t, s in enumerate(split_effect):
        for m, mse in (("IHM", s * ihm_factor[t] * noise[t]), ("AdaSSP", s),
                       ("BoostedAdaSSP", s * 1.2)):
            rows.append({"data": "a", "n_train": 100, "d": 2, "epsilon": 1.0, "method": m,
                         "trial": t, "test_mse": mse, "ols_test_mse": 1.0, "rel_mse": mse})
    return pd.DataFrame(rows)


def test_table_pairs_fits_by_split():
    # the split effect (log-sd 2) dwarfs IHM's 10% gain; pairing by split removes it, so the
    # cell is a significant win -- and breaking the pairing (shuffling IHM's splits) loses it
    rng = np.random.default_rng(8)
    split = np.exp(2.0 * rng.standard_normal(50))
    noise = np.exp(0.05 * rng.standard_normal(50))
    _, v = table(_rows(np.full(50, 0.9), split, noise))
    assert v["ihm_best_significant"] == 1 and v["vs_adassp_win"] == 1
    rows = _rows(np.full(50, 0.9), split, noise)
    ihm = rows["method"] == "IHM"
    rows.loc[ihm, "trial"] = rng.permutation(rows.loc[ihm, "trial"].to_numpy())
    _, v = table(rows)
    assert v["ihm_best_significant"] == 0


def test_table_counts_a_significant_loss():
    rng = np.random.default_rng(9)
    split = np.exp(rng.standard_normal(40))
    _, v = table(_rows(np.full(40, 1.5), split, np.exp(0.05 * rng.standard_normal(40))))
    assert v["ihm_worse_significant"] == 1 and v["vs_adassp_loss"] == 1
    assert v["vs_boosted_loss"] == 1 and v["ihm_best_point"] == 0
