"""Adding a method is one spec file (+ its privacy note + its test file): shown by adding one.

A copy of the package gets ONE new module, ``dpreg/methods/noisy_mean.py`` (below): a real,
tiny DP method with no estimator class, no entry in the audit registry and no code anywhere
else.  In a fresh interpreter on that copy, ``regress``, the CLI (``dpreg fit``, ``dpreg
methods``), ``fit_by_group``, ``plan`` and the auditor (``dpreg.audit.TARGETS``) all pick it
up, its ledger charge is the budget its plan states, its ε→∞ limit is the non-private mean
and its noise has the Laplace scale its plan states.  docs/architecture.md ("Adding a method")
states the count this test shows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

#: the whole method: identity, plan, statistics, release (through dpreg.mechanisms), results
SPEC_MODULE = '''
"""``noisy-mean``: an intercept-only baseline, the Laplace-noised mean of y clipped to its
public bounds (the Laplace mechanism, Dwork, McSherry, Nissim & Smith 2006).

Guarantee: ε-DP (pure), replace-one neighbours, n public; sensitivity of the clipped mean
(hi − lo)/n; one Laplace draw of scale (hi − lo)/(n ε)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np

from dpreg._spec import IntervalSupport, MethodSpec, Release, ReleasePlan
from dpreg.exceptions import InvalidInputError


class NoisyMeanSpec(MethodSpec):
    name = "noisy-mean"
    algorithm = "intercept-only baseline, the Laplace-noised mean of y (Dwork et al. 2006)"
    target = "the mean of y clipped to its bounds (the slope is fixed at 0)"
    features = "one"
    delta = "never"
    guarantee = "ε-DP"
    relation = "replace-one"
    min_rows = 2
    always_intercept = True
    pure = True
    privacy_notes = ("noisy_mean.md",)
    order = 25
    estimator = None
    options = MappingProxyType({})
    interval = IntervalSupport(missing="the noisy mean carries no interval")

    def plan(self, *, epsilon: float, delta: float | None, n: int | None,
             x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
             fit_intercept: bool, options: Any) -> ReleasePlan:
        from dpreg._validation import check_bounds, check_epsilon
        from dpreg.privacy import Neighbouring, PureDP

        eps = check_epsilon(epsilon)
        lo, hi = check_bounds(y_bounds, "bounds for the response")
        if n is None or n < 2:
            raise InvalidInputError(f"noisy-mean needs at least 2 rows; got {n}")
        sens = (hi - lo) / n
        return ReleasePlan(self.name, {"y_bounds": (lo, hi)}, PureDP(eps),
                           Neighbouring.REPLACE_ONE, n=n, d=1,
                           sensitivities={"mean": sens}, noise={"mean": sens / eps})

    def statistics(self, X: np.ndarray, y: np.ndarray, plan: ReleasePlan) -> Any:
        return float(np.mean(np.clip(np.asarray(y, dtype=np.float64),
                                     *plan.options["y_bounds"])))

    def release(self, stats: Any, plan: ReleasePlan, rng: Any, *,
                seeded: bool = False) -> Release:
        from dpreg.mechanisms import laplace
        from dpreg.privacy import PrivacyStatement

        level = float(laplace(stats, sensitivity=plan.sensitivities["mean"],
                              epsilon=plan.budget.epsilon, rng=rng))
        stmt = PrivacyStatement(plan.budget, plan.relation, "Laplace noisy mean",
                                "Dwork et al. 2006", seeded, dict(plan.noise))
        return Release(plan, {"level": level}, stmt)

    def results(self, release: Release, *, x_names: list[str], y_name: str) -> Any:
        from dpreg.simple._result import SimpleRegressionResult

        level = release.values["level"]
        return SimpleRegressionResult(
            self.name, release.privacy, released_slope=0.0, released_intercept=level,
            n=release.plan.n, no_interval=self.interval.missing,
        ).to_regression_results(x_name=x_names[0], y_name=y_name)


SPECS = (NoisyMeanSpec(),)
'''

#: what the copy must do, run in a fresh interpreter on it
CHECKS = '''
import math, subprocess, sys, warnings
import numpy as np, pandas as pd
import dpreg
from dpreg import Ledger, PureDP, fit_by_group, plan, regress
from dpreg import methods
from dpreg.exceptions import PrivacyLeakWarning

spec = methods.get("noisy-mean")
assert spec.estimator is None and "noisy-mean" in dpreg.METHODS

g = np.random.default_rng(1)
n = 200
df = pd.DataFrame({"x": g.uniform(0, 1, n), "y": g.uniform(0, 10, n),
                   "g": np.repeat(["a", "b"], n // 2)})
bounds = {"x": (0, 1), "y": (0, 10)}
exact = float(np.clip(df["y"], 0, 10).mean())

# regress: one charge of the plan's budget, under its relation
led = Ledger(PureDP(3.0))
res = regress(df, "y ~ x", method="noisy-mean", epsilon=1.0, bounds=bounds, ledger=led,
              random_state=0)
assert led.spent() == PureDP(1.0), led.spent()
(event,) = led.events()
assert event.neighbouring.value == "replace-one"
assert res.params.iloc[1] == 0.0 and math.isfinite(res.params.iloc[0])

# the eps -> inf limit is the non-private counterpart (the clipped mean), with the warning
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    inf = regress(df, "y ~ x", method="noisy-mean", epsilon=math.inf, bounds=bounds,
                  random_state=0)
assert inf.params.iloc[0] == exact
assert any(issubclass(w.category, PrivacyLeakWarning) for w in caught)

# the noise has the stated Laplace scale b = (hi - lo)/(n eps): sd sqrt(2) b; 400 seeded
# releases give the sd within 10 % (a wrong sensitivity, e.g. 1/n or 2(hi - lo)/n, fails)
from dpreg.api import fit_arrays
X, y = df[["x"]].to_numpy(), df["y"].to_numpy()
draws = np.array([fit_arrays(X, y, method="noisy-mean", epsilon=1.0, x_bounds=[(0, 1)],
                             y_bounds=(0, 10), random_state=s).params.iloc[0]
                  for s in range(400)])
b = 10.0 / n
assert abs(draws.std() / (math.sqrt(2) * b) - 1) < 0.1, draws.std()
assert abs(draws.mean() - exact) < 4 * math.sqrt(2) * b / math.sqrt(400)

# fit_by_group: one row per declared group (the per-group reference loop)
table = fit_by_group(df, "g", "x", "y", method="noisy-mean", epsilon=1.0, bounds=bounds,
                     groups=["a", "b"], random_state=0)
assert len(table) == 2, table

# plan: the expected error on a public design (simulated releases)
p = plan("noisy-mean", 1.0, n=200, formula="y ~ x", bounds=bounds, n_sim=50)
assert "noisy-mean" in str(p)

# the auditor builds its target from the spec, and it runs and passes
from dpreg.audit import TARGETS, audit_target
target = TARGETS["noisy-mean"]
assert target.claim.epsilon == 2.0 and target.claim.delta == 0.0
(result,) = audit_target("noisy-mean", pairs=[target.pairs()[0].name], samples=200,
                         alpha=1e-6, rng=0)
assert result.passed

# the CLI lists it and fits with it
df.to_csv("data.csv", index=False)
cli = [sys.executable, "-m", "dpreg"]
out = subprocess.run(cli + ["methods"], capture_output=True, text=True)
assert out.returncode == 0 and "noisy-mean" in out.stdout, out.stdout + out.stderr
out = subprocess.run(cli + ["fit", "data.csv", "--y", "y", "--x", "x", "--method", "noisy-mean",
                            "--epsilon", "1", "-b", "x=0:1", "-b", "y=0:10", "--seed", "3"],
                     capture_output=True, text=True)
assert out.returncode == 0, out.stdout + out.stderr
print("ok")
'''


def _copy_package(tmp_path: Path) -> Path:
    copy = tmp_path / "src"
    shutil.copytree(SRC / "dpreg", copy / "dpreg",
                    ignore=shutil.ignore_patterns("__pycache__", "files"))
    (copy / "dpreg" / "data" / "files").symlink_to(SRC / "dpreg" / "data" / "files")
    return copy


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.slow
def test_a_new_method_is_one_spec_file(tmp_path):
    copy = _copy_package(tmp_path)
    before = _files(copy)
    (copy / "dpreg" / "methods" / "noisy_mean.py").write_text(textwrap.dedent(SPEC_MODULE),
                                                             encoding="utf-8")
    assert _files(copy) - before == {"dpreg/methods/noisy_mean.py"}
    assert before <= _files(copy)  # nothing else was touched
    env = {**os.environ, "PYTHONPATH": str(copy), "DPREG_LEDGER": ""}
    env.pop("DPREG_LEDGER")
    proc = subprocess.run([sys.executable, "-c", CHECKS], capture_output=True, text=True,
                          env=env, cwd=str(tmp_path), timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("ok")


def _noisy_mean_spec() -> object:
    namespace: dict[str, object] = {}
    exec(compile(textwrap.dedent(SPEC_MODULE), "noisy_mean.py", "exec"), namespace)
    return namespace["NoisyMeanSpec"]()  # type: ignore[operator]


def test_a_spec_without_an_estimator_fits_by_its_pipeline(monkeypatch):
    """``MethodSpec.fit`` of a spec with ``estimator = None`` runs plan -> statistics -> one
    charge of the plan's budget -> release -> results: refused requests (an interval it does
    not offer, a budget the ledger cannot pay) charge nothing and draw no noise."""
    import numpy as np

    from dpreg import Ledger, PureDP
    from dpreg.exceptions import BudgetExceededError, InvalidInputError

    spec = _noisy_mean_spec()
    g = np.random.default_rng(0)
    X, y = g.uniform(0, 1, (50, 1)), g.uniform(0, 10, 50)
    kw = dict(epsilon=1.0, delta=None, x_bounds=[(0.0, 1.0)], y_bounds=(0.0, 10.0),
              x_names=["x"], y_name="y", fit_intercept=True, random_state=0, options={})
    led = Ledger(PureDP(1.5))
    res = spec.fit(X, y, ledger=led, **kw)  # type: ignore[attr-defined]
    assert led.spent() == PureDP(1.0) and len(led.events()) == 1
    assert res.params.iloc[1] == 0.0 and res.privacy.budget == PureDP(1.0)
    drawn = []
    real = type(spec).release

    def release(self: object, *args: object, **kwargs: object) -> object:
        drawn.append(1)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(type(spec), "release", release)
    with pytest.raises(BudgetExceededError):
        spec.fit(X, y, ledger=led, **kw)  # type: ignore[attr-defined]
    with pytest.raises(InvalidInputError, match="offers no interval"):
        spec.fit(X, y, ledger=led, ci_alpha=0.1, **kw)  # type: ignore[attr-defined]
    assert drawn == [] and led.spent() == PureDP(1.0)
    spec.fit(X, y, ledger=None, **kw)  # type: ignore[attr-defined]
    assert drawn == [1]


def test_architecture_doc_states_the_count():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("### Adding a method", 1)[1].split("\n## ", 1)[0]
    assert "three files" in section and "src/dpreg/methods/" in section
    assert "audit/registry.py" not in section.split("Optional", 1)[0]


def test_an_audit_case_is_built_from_the_spec_or_refused():
    """The default case of a spec audits its fit against the budget it charges; a case naming
    a sampler or a pair set the auditor does not have is refused naming both lists."""
    from dpreg._spec import AuditCase
    from dpreg.audit.registry import _method_target

    spec = _noisy_mean_spec()
    (case,) = spec.audit_cases()  # type: ignore[attr-defined]
    target = _method_target(spec, case)
    assert (target.name, target.kind, target.loop) == ("noisy-mean", "core", True)
    assert (target.claim.epsilon, target.claim.delta) == (2.0, 0.0)
    assert target.output_names == ("intercept", "slope") and len(target.pairs()) >= 3
    with pytest.raises(RuntimeError, match="the auditor has the samplers"):
        _method_target(spec, AuditCase("x", "x", sampler="nope"))
    with pytest.raises(RuntimeError, match="and the pairs"):
        _method_target(spec, AuditCase("x", "x", pairs="nope"))
