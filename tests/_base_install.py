"""What ``pip install dpreg`` (no extra) must run, with the extras' dependencies made absent.

Run as a script in a fresh interpreter (tests/test_extras.py)::

    python tests/_base_install.py base        # the base paths; prints "ok" last
    python tests/_base_install.py missing     # the MissingExtraError of each optional part
    python tests/_base_install.py console M:F # the console script M:F (typer and rich absent)
    python tests/_base_install.py cli-plot    # dpreg fit/fit-groups --plot without matplotlib

:func:`block` installs a meta-path finder that refuses every module of :data:`HEAVY` (as if it
were not installed) and records each attempt; the base paths must not even try one.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile

#: the dependencies that only the extras install (cli: typer, rich; plots: matplotlib;
#: repro: statsmodels)
HEAVY = ("matplotlib", "statsmodels", "typer", "rich")
ATTEMPTS: list[str] = []


class _Absent:
    """A meta-path finder for which the modules of ``names`` are not installed."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.split(".")[0] in self.names:
            ATTEMPTS.append(name)
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def block(names: tuple[str, ...] = HEAVY) -> None:
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in names)
    assert not loaded, f"already imported before blocking: {loaded}"
    sys.meta_path.insert(0, _Absent(names))


def base_paths() -> None:
    """Fit every method through regress(), the estimators, a CSV and a Parquet path, plan(), a
    ledger file, release_sscp (saved, loaded, regressed on) and per-group fits."""
    import numpy as np
    import pandas as pd

    import dpreg
    from dpreg.api import SIMPLE_ONLY

    seed = 2**100 + 17  # a strong seed (no WeakSeedWarning), fixed for a stable run
    g = np.random.default_rng(0)
    n = 4000  # TukeyEM's propose-test-release step passes at this n with d = 2
    x1, x2 = g.uniform(0, 1, n), g.uniform(0, 1, n)
    y = np.clip(0.2 + 0.5 * x1 + 0.2 * x2 + g.normal(0, 0.05, n), 0, 1)
    df = pd.DataFrame({"x1": x1, "x2": x2, "y": y, "g": np.repeat(["a", "b", "c", "d"], n // 4)})
    bounds = {"x1": (0, 1), "x2": (0, 1), "y": (0, 1)}
    for k, method in enumerate(dpreg.METHODS):
        formula = "y ~ x1" if method in SIMPLE_ONLY else "y ~ x1 + x2"
        res = dpreg.regress(df, formula, method=method, epsilon=5.0, delta=1e-6, bounds=bounds,
                            random_state=seed + k)
        assert not res.failed and np.isfinite(res.params.to_numpy()).all(), method
        assert "DP" in str(res.summary()), method
    est = dpreg.AdaSSP(epsilon=2.0, delta=1e-6, bounds_X=(0, 1), bounds_y=(0, 1),
                       random_state=seed).fit(df[["x1", "x2"]], y)
    assert est.predict(df[["x1", "x2"]]).shape == (n,)
    with tempfile.TemporaryDirectory() as tmp:
        paths = {"parquet": os.path.join(tmp, "d.parquet"), "csv": os.path.join(tmp, "d.csv")}
        df.to_parquet(paths["parquet"])
        df.to_csv(paths["csv"], index=False)
        led = dpreg.Ledger(dpreg.ApproxDP(20.0, 1e-5), os.path.join(tmp, "budget.db"),
                           key_file=os.path.join(tmp, "budget.key"))
        for kind, path in paths.items():
            res = dpreg.regress(path, "y ~ x1 + x2", method="adassp", epsilon=2.0, delta=1e-6,
                                bounds=bounds, ledger=led, random_state=seed)
            assert abs(res.params["x1"] - 0.5) < 0.2, kind
        assert len(led.events()) == 2
        again = dpreg.Ledger(None, os.path.join(tmp, "budget.db"),
                             key_file=os.path.join(tmp, "budget.key"))
        assert again.spent() == led.spent()
        rel = dpreg.release_sscp(paths["parquet"], columns=["x1", "x2", "y"], bounds=bounds,
                                 epsilon=2.0, delta=1e-6, random_state=seed)
        rel.save(os.path.join(tmp, "release.json"))
        loaded = dpreg.SSCPRelease.load(os.path.join(tmp, "release.json"))
        assert np.isfinite(loaded.regress("y ~ x1 + x2").params.to_numpy()).all()
    plan = dpreg.plan("adassp", 1.0, 1e-6, n=1000, formula="y ~ x1 + x2", bounds=bounds)
    assert "adassp" in str(plan)
    table = dpreg.fit_by_group(df, "g", "x1", "y", method="noisy-stats", epsilon=2.0,
                               bounds={"x1": (0, 1), "y": (0, 1)}, groups=["a", "b", "c", "d"],
                               random_state=seed)
    assert len(table) == 4
    assert not ATTEMPTS, f"a base path tried to import {sorted(set(ATTEMPTS))}"
    loaded_heavy = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
    assert not loaded_heavy, loaded_heavy


def _expect_missing(call: object, extra: str) -> None:
    from dpreg.exceptions import DPRegError, MissingExtraError

    try:
        call()  # type: ignore[operator]
    except MissingExtraError as exc:
        assert isinstance(exc, ImportError) and isinstance(exc, DPRegError)
        assert f"pip install 'dpreg[{extra}]'" in str(exc), str(exc)
        print(f"{extra}: {exc}")
        return
    raise AssertionError(f"no MissingExtraError for the [{extra}] extra")


def missing_parts() -> None:
    """Each optional part, used without its extra, raises MissingExtraError naming the extra
    before anything is charged."""
    import numpy as np
    import pandas as pd

    import dpreg
    from dpreg.data import load_dataset

    g = np.random.default_rng(1)
    df = pd.DataFrame({"x": g.uniform(0, 1, 400), "y": g.uniform(0, 1, 400),
                       "g": np.repeat([0, 1], 200)})
    b = {"x": (0, 1), "y": (0, 1)}
    res = dpreg.regress(df, "y ~ x", method="noisy-stats", epsilon=1.0, bounds=b,
                        random_state=2**100)
    _expect_missing(res.plot, "plots")
    from dpreg.inference.plots import plot_groups

    _expect_missing(lambda: plot_groups(pd.DataFrame({"group": [0], "slope": [0.1]})), "plots")
    _expect_missing(lambda: load_dataset("longley"), "repro")
    led = dpreg.Ledger(dpreg.PureDP(5.0))
    _expect_missing(lambda: dpreg.fit_by_group(df, "g", "x", "y", method="noisy-stats",
                                               epsilon=1.0, bounds=b, groups=[0, 1],
                                               progress=True, ledger=led), "cli")
    assert led.events() == [], "fit_by_group charged the ledger before refusing progress=True"
    _expect_missing(lambda: importlib.import_module("dpreg.cli"), "cli")
    from dpreg.audit import results_table

    _expect_missing(lambda: results_table([]), "audit")


def cli_plot() -> None:
    """``dpreg fit ... --plot`` without matplotlib: exit 1 naming [plots], nothing charged."""
    import numpy as np
    import pandas as pd
    from typer.testing import CliRunner

    import dpreg
    from dpreg.cli import app

    with tempfile.TemporaryDirectory() as tmp:
        g = np.random.default_rng(2)
        data = os.path.join(tmp, "d.csv")
        pd.DataFrame({"x": g.uniform(0, 1, 300), "y": g.uniform(0, 1, 300)}).to_csv(data, index=False)
        ledger = os.path.join(tmp, "l.db")
        dpreg.Ledger(dpreg.PureDP(5.0), ledger)
        for command in (["fit", data, "--y", "y", "--x", "x"], ["fit-groups", data, "--by", "x",
                                                             "--y", "y", "--x", "x",
                                                             "--keys-from-data", "--out",
                                                             os.path.join(tmp, "t.csv")]):
            got = CliRunner().invoke(app, [*command, "--method", "noisy-stats", "--epsilon", "1",
                                           "--bounds", "x=0:1", "--bounds", "y=0:1", "--ledger",
                                           ledger, "--plot", os.path.join(tmp, "p.png")])
            text = got.output + (got.stderr if got.stderr_bytes is not None else "")
            assert got.exit_code == 1, (got.exit_code, text)
            assert "pip install 'dpreg[plots]'" in text, text
            assert dpreg.Ledger(None, ledger).events() == [], "charged before refusing --plot"
            print(command[0], "refused: [plots]")


def console(target: str) -> None:
    """Run the console script ``module:function`` as pip's generated script does."""
    module, _, func = target.partition(":")
    sys.argv = ["dpreg", "--help"]
    getattr(importlib.import_module(module), func)()


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "console":
        block(("typer", "rich"))
        console(sys.argv[2])
    elif mode == "cli-plot":
        block(("matplotlib",))
        cli_plot()
        print("ok")
    else:
        block()
        (base_paths if mode == "base" else missing_parts)()
        print("ok")
