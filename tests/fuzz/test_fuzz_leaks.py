"""No private value and no non-DP fact in what dpreg says about data it refuses or releases.

Standard: an exception, warning or output may name a column and the *kind* of problem, never
a value of the private data, a count of bad cells or (under add/remove neighbours, where n is
private) the number of rows.  Two checks, over every public entry point:

* **sentinels** -- the data carry distinctive values (0.123456789, 0.98765432, the strings
  ``SENTINELA``/``SENTINELB``, n = 4171 rows under add/remove); no message, warning, summary or
  JSON may contain them;
* **invariance** -- for two data sets that differ only in private content (where the NaN sits
  and how many there are, which string is in a cell, the value of a constant column, by how
  many rows y is short), every entry point must behave identically: the same exception type
  with the same message, or success in both.  This catches leaks of counts and positions that
  no sentinel can.

The checks fail on the code before the fix: e.g. AdaSSP refused a constant column with
``every value is np.float64(0.123456789)``, a 1-D X echoed the array through scikit-learn's
message, and the non-finite check reported how many values were NaN.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import (
    AdaSSP,
    BoostedAdaSSP,
    CovarianceOLS,
    DPGradientDescent,
    DPTheilSen,
    NoisyStats,
    TukeyEM,
)
from dpreg.exceptions import DPRegError

S_X = 0.123456789
S_Y = 0.98765432
SENTINELS = ("12345", "98765", "SENTINELA", "SENTINELB", "4171")
N = 40

Outcome = tuple[str, str]


def _run(fn: Callable[[], Any]) -> tuple[Outcome, list[str]]:
    """(outcome, texts): the outcome is ("ok", "") or (exception type, message); texts are every
    message, warning and rendered output produced."""
    texts: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn()
            outcome: Outcome = ("ok", "")
            texts.extend(_render(out))
        except DPRegError as exc:
            outcome = (type(exc).__name__, str(exc))
            texts.append(str(exc))
    texts.extend(str(w.message) for w in caught)
    return outcome, texts


def _render(out: Any) -> list[str]:
    res = getattr(out, "results_", out)
    texts = []
    if hasattr(res, "summary"):
        texts.append(str(res.summary()))
    if hasattr(res, "to_dict"):
        texts.append(json.dumps(res.to_dict(), default=str))
    if isinstance(res, pd.DataFrame):
        texts.append(res.to_csv())
        texts.append(str(res.attrs))
    return texts


def _no_sentinel(texts: list[str], where: str, *, n_private: bool = True) -> None:
    for text in texts:
        for s in SENTINELS:
            if s == "4171":  # the private n: as a number of its own, not digits of a release
                if n_private and re.search(r"(?<![\d.])4171(?![\d.])", text):
                    raise AssertionError(f"{where}: private n=4171 in output: {text[:300]!r}")
                continue
            assert s not in text, f"{where}: private sentinel {s!r} in output: {text[:300]!r}"


# ------------------------------------------------------------------ data variants
def _base(n: int = N, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.05, 0.95, (n, 2))
    y = np.clip(0.2 + X @ np.array([0.4, -0.2]) + rng.normal(0, 0.05, n), 0, 1)
    X[3, 0] = S_X
    y[5] = S_Y
    return X, y


def _variant(kind: str, side: int) -> tuple[Any, Any]:
    """Data set ``side`` (0 or 1) of a pair that differs only in private content."""
    X, y = _base()
    if kind == "nan":  # one NaN vs three NaNs elsewhere
        rows = [2] if side == 0 else [7, 11, 19]
        X[rows, 0] = np.nan
    elif kind == "inf":
        X[4 if side == 0 else 30, 1] = np.inf if side == 0 else -np.inf
    elif kind == "nan_y":
        y[[1] if side == 0 else [8, 9]] = np.nan
    elif kind == "string":
        X = X.astype(object)
        X[6, 1] = "SENTINELA" if side == 0 else "SENTINELB"
    elif kind == "constant":
        X[:, 1] = S_X if side == 0 else 0.5
    elif kind == "short_y":
        y = y[: N - 1 - side]
    elif kind == "one_d":
        X = X[:, 0] * 0 + (S_X if side == 0 else 0.25)
    elif kind == "list":
        X = X.tolist()
        X[2 + side][0] = float("nan")
        y = y.tolist()
    elif kind == "complex":
        X = X.astype(complex)
        X[1 + side, 0] = S_X + 1j
    return X, y


KINDS = ["nan", "inf", "nan_y", "string", "constant", "short_y", "one_d", "list", "complex"]
B1 = [(0.0, 1.0)]
B2 = [(0.0, 1.0), (0.0, 1.0)]


def _one_x(X: Any) -> Any:
    if isinstance(X, list):
        return [row[:1] for row in X]
    arr = np.asarray(X)
    return arr[:, :1] if arr.ndim == 2 else arr


ESTIMATORS: dict[str, tuple[Callable[[], Any], bool, bool]] = {
    # name: (factory, one x only, n private)
    "NoisyStats": (lambda: NoisyStats(epsilon=1.0, bounds_X=B1, bounds_y=(0, 1),
                                      random_state=0), True, False),
    "DPTheilSen": (lambda: DPTheilSen(epsilon=1.0, bounds_X=B1, bounds_y=(0, 1),
                                      random_state=0), True, False),
    "DPGradientDescent": (lambda: DPGradientDescent(epsilon=1.0, bounds_X=B1, bounds_y=(0, 1),
                                                    random_state=0), True, False),
    "AdaSSP": (lambda: AdaSSP(epsilon=1.0, delta=1e-6, bounds_X=B2, bounds_y=(0, 1),
                              random_state=0), False, True),
    "BoostedAdaSSP": (lambda: BoostedAdaSSP(epsilon=1.0, delta=1e-6, bounds_X=B2,
                                            bounds_y=(0, 1), random_state=0), False, True),
    "CovarianceOLS": (lambda: CovarianceOLS(epsilon=1.0, delta=1e-6, bounds_X=B2,
                                            bounds_y=(0, 1), random_state=0), False, True),
    "TukeyEM": (lambda: TukeyEM(epsilon=1.0, delta=1e-6, n_models=4, random_state=0),
                False, False),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_estimators_say_nothing_private(name: str, kind: str) -> None:
    make, one_x, n_private = ESTIMATORS[name]
    outcomes = []
    for side in (0, 1):
        X, y = _variant(kind, side)
        if one_x:
            X = _one_x(X)
        outcome, texts = _run(lambda X=X, y=y: make().fit(X, y))
        _no_sentinel(texts, f"{name}/{kind}/{side}", n_private=n_private)
        outcomes.append(outcome)
    assert outcomes[0] == outcomes[1], f"{name}/{kind}: outcome depends on private content"


def _frame(kind: str, side: int) -> pd.DataFrame:
    X, y = _base()
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y})
    if kind == "nan":
        df.loc[[2] if side == 0 else [7, 11, 19], "a"] = np.nan
    elif kind == "string":
        df["b"] = df["b"].astype(object)
        df.loc[6, "b"] = "SENTINELA" if side == 0 else "SENTINELB"
    elif kind == "constant":
        df["b"] = S_X if side == 0 else 0.5
    elif kind == "empty_level":  # a declared level with no rows gives an all-zero dummy
        levels = np.where(df["a"] > (0.5 if side == 0 else 0.4), "u", "v")
        df["c"] = pd.Categorical(levels, categories=["u", "v", "w"])
    return df


FRAME_KINDS = ["nan", "string", "constant", "empty_level"]
REGRESS = {m: ("y ~ a" if m in dpreg.api.SIMPLE_ONLY else "y ~ a + b")
           for m in dpreg.METHODS}


@pytest.mark.parametrize("kind", FRAME_KINDS)
@pytest.mark.parametrize("method", list(REGRESS))
def test_regress_says_nothing_private(method: str, kind: str) -> None:
    formula = REGRESS[method]
    if kind == "empty_level":
        formula = "y ~ a + c" if method not in dpreg.api.SIMPLE_ONLY else "y ~ a"
    opts: dict[str, Any] = {"n_models": 4} if method == "tukey-em" else {}
    outcomes = []
    for side in (0, 1):
        df = _frame(kind, side)
        outcome, texts = _run(lambda df=df: dpreg.regress(
            df, formula, method=method, epsilon=1.0, delta=1e-6, random_state=0,
            bounds={"a": (0, 1), "b": (0, 1), "y": (0, 1)}, **opts))
        _no_sentinel(texts, f"regress {method}/{kind}/{side}")
        outcomes.append(outcome)
    assert outcomes[0] == outcomes[1], f"regress {method}/{kind}: outcome depends on data"


@pytest.mark.parametrize("kind", ["nan", "string", "constant"])
@pytest.mark.parametrize("method", ["noisy-stats", "theil-sen-exp", "adassp", "covariance-ols"])
def test_fit_by_group_says_nothing_private(method: str, kind: str) -> None:
    """One hostile group must neither abort the table with a data-dependent message nor show
    its values; groups are declared, so every row of the table is public in shape."""
    outcomes = []
    for side in (0, 1):
        df = _frame(kind, side)
        df["g"] = np.repeat([1, 2], N // 2)
        outcome, texts = _run(lambda df=df: dpreg.fit_by_group(
            df, "g", "b" if kind == "constant" else "a", "y", method=method, epsilon=1.0,
            delta=1e-6, bounds={"a": (0, 1), "b": (0, 1), "y": (0, 1)}, groups=[1, 2],
            random_state=0))
        _no_sentinel(texts, f"fit_by_group {method}/{kind}/{side}", n_private=False)
        outcomes.append(outcome)
    assert outcomes[0] == outcomes[1]


def test_add_remove_outputs_do_not_show_n() -> None:
    """Under add/remove neighbours n is private: summaries and JSON must not print it."""
    rng = np.random.default_rng(3)
    n = 4171
    X = rng.uniform(0, 1, (n, 2))
    y = np.clip(0.3 + X @ np.array([0.2, 0.1]) + rng.normal(0, 0.05, n), 0, 1)
    for make in (lambda: AdaSSP(epsilon=1.0, delta=1e-6, bounds_X=B2, bounds_y=(0, 1),
                                random_state=1),
                 lambda: BoostedAdaSSP(epsilon=1.0, delta=1e-6, bounds_X=B2, bounds_y=(0, 1),
                                       random_state=1),
                 lambda: CovarianceOLS(epsilon=1.0, delta=1e-6, bounds_X=B2, bounds_y=(0, 1),
                                       random_state=1)):
        outcome, texts = _run(lambda make=make: make().fit(X, y))
        assert outcome == ("ok", "")
        _no_sentinel(texts, "add-remove outputs")


@pytest.mark.parametrize("kind", ["nan", "list"])
def test_mechanisms_say_nothing_private(kind: str) -> None:
    from dpreg.mechanisms import exp_quantile, gaussian, laplace, smooth_median
    from dpreg.privacy import ZCDP

    outcomes: dict[str, list[Outcome]] = {}
    for side in (0, 1):
        z = np.full(N, S_X)
        z[[1] if side == 0 else [4, 5, 6]] = np.nan
        val: Any = z.tolist() if kind == "list" else z
        calls = {
            "laplace": lambda val=val: laplace(val, sensitivity=1.0, epsilon=1.0, rng=0),
            "gaussian": lambda val=val: gaussian(val, sensitivity=1.0, budget=ZCDP(0.5), rng=0),
            "exp_quantile": lambda val=val: exp_quantile(val, epsilon=1.0, lo=0.0, hi=1.0, rng=0),
            "smooth_median": lambda val=val: smooth_median(val, epsilon=1.0, lo=0.0, hi=1.0, rng=0),
        }
        for name, call in calls.items():
            outcome, texts = _run(call)
            _no_sentinel(texts, f"{name}/{kind}")
            outcomes.setdefault(name, []).append(outcome)
    for name, (a, b) in outcomes.items():
        assert a == b, f"{name}: message depends on private content"


def test_cli_says_nothing_private(tmp_path) -> None:
    from typer.testing import CliRunner

    from dpreg.cli import app

    runner = CliRunner()
    outs = []
    for side in (0, 1):
        df = _frame("string", side)
        path = tmp_path / f"d{side}.csv"
        df.to_csv(path, index=False)
        res = runner.invoke(app, ["fit", str(path), "--y", "y", "--x", "b", "-m", "adassp",
                                  "-e", "1", "-d", "1e-6", "-b", "b=0:1", "-b", "y=0:1"])
        text = res.output
        for s in SENTINELS:
            assert s not in text, f"CLI fit: sentinel {s!r} in {text!r}"
        outs.append((res.exit_code, text.replace(str(path), "DATA")))
    assert outs[0] == outs[1]


def _cores() -> dict[str, tuple[Callable[[Any, Any], Any], bool]]:
    from dpreg.multivariate import adassp, boosted_adassp, dp_gradient_descent, tukey_em
    from dpreg.preprocess import noisy_count, noisy_nvar, propose_bounds
    from dpreg.simple import (
        dp_intercept,
        gradient_descent,
        noisy_stats,
        theil_sen,
        theil_sen_ci,
    )

    one = {"x_bounds": (0, 1), "y_bounds": (0, 1)}
    return {  # name: (call(X, y), one x)
        "noisy_stats": (lambda x, y: noisy_stats(x, y, epsilon=1.0, rng=0, **one), True),
        "dp_intercept": (lambda x, y: dp_intercept(x, y, epsilon=1.0, y_bounds=(0, 1), rng=0),
                         True),
        "theil_sen": (lambda x, y: theil_sen(x, y, epsilon=1.0, output_range=(0, 1),
                                             x_bounds=(0, 1), rng=0), True),
        "gradient_descent": (lambda x, y: gradient_descent(x, y, epsilon=1.0, rng=0, **one),
                             True),
        "theil_sen_ci": (lambda x, y: theil_sen_ci(x, y, epsilon=1.0, output_range=(-5, 5),
                                                   rng=0), True),
        "adassp": (lambda X, y: adassp(X, y, epsilon=1.0, delta=1e-6, x_norm_bound=2.0,
                                       y_bound=1.0, rng=0), False),
        "boosted_adassp": (lambda X, y: boosted_adassp(X, y, epsilon=1.0, delta=1e-6, rng=0),
                           False),
        "dp_gradient_descent": (lambda X, y: dp_gradient_descent(X, y, epsilon=1.0, delta=1e-6,
                                                                 rng=0), False),
        "tukey_em": (lambda X, y: tukey_em(X, y, epsilon=1.0, delta=1e-6, n_models=4, rng=0),
                     False),
        "release_sscp": (lambda X, y: dpreg.release_sscp(
            pd.DataFrame({"a": np.asarray(X, dtype=object)[: len(y), 0], "y": y}),
            columns=["a", "y"], bounds={"a": (0, 1), "y": (0, 1)}, epsilon=1.0, delta=1e-6,
            random_state=0), False),
        "noisy_count": (lambda X, y: noisy_count(X, epsilon=1.0, rng=0), False),
        "noisy_nvar": (lambda x, y: noisy_nvar(x, epsilon=1.0, x_bounds=(0, 1), rng=0), True),
        "propose_bounds": (lambda x, y: propose_bounds(x, epsilon=1.0, rng=0), True),
    }


@pytest.mark.parametrize("kind", ["nan", "inf", "nan_y", "string", "short_y", "list",
                                  "complex"])
@pytest.mark.parametrize("name", sorted(_cores()))
def test_cores_say_nothing_private(name: str, kind: str) -> None:
    call, one_x = _cores()[name]
    outcomes = []
    for side in (0, 1):
        X, y = _variant(kind, side)
        if one_x:
            X = _one_x(X)
            X = [r[0] for r in X] if isinstance(X, list) else np.asarray(X)[:, 0]
        outcome, texts = _run(lambda X=X, y=y: call(X, y))
        _no_sentinel(texts, f"{name}/{kind}/{side}", n_private=name in (
            "adassp", "boosted_adassp", "release_sscp", "noisy_count"))
        outcomes.append(outcome)
    assert outcomes[0] == outcomes[1], f"{name}/{kind}: outcome depends on private content"


@pytest.mark.parametrize("kind", FRAME_KINDS)
@pytest.mark.parametrize("formula", ["y ~ a", "y ~ a + b"])
def test_auto_bounds_free_says_nothing_private(formula: str, kind: str) -> None:
    outcomes = []
    for side in (0, 1):
        df = _frame(kind, side)
        outcome, texts = _run(lambda df=df: dpreg.regress(
            df, formula, method="auto", epsilon=1.0, delta=1e-6, bounds="private",
            random_state=0))
        _no_sentinel(texts, f"auto {formula}/{kind}/{side}", n_private=False)
        outcomes.append(outcome)
    assert outcomes[0] == outcomes[1]


def test_cli_unreadable_csv_quotes_nothing(tmp_path) -> None:
    from typer.testing import CliRunner

    from dpreg.cli import app

    path = tmp_path / "bad.csv"
    path.write_bytes(b"x,y\n0.1,0.2\n\xffSENTINELA,0.3\n")
    res = CliRunner().invoke(app, ["fit", str(path), "--y", "y", "--x", "x", "-m", "noisy-stats",
                                   "-e", "1", "-b", "x=0:1", "-b", "y=0:1"])
    assert res.exit_code == 1
    assert "SENTINELA" not in res.output and "0xff" not in res.output, res.output
