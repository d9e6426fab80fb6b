"""One vocabulary per layer (docs/architecture.md, "Vocabulary"), checked on every public
signature: the walk of the API snapshot (tests/api_snapshot.py: ``dpreg.__all__``, the stable
names and the members of their classes) plus the ``__all__`` of the functional cores.

A parameter whose name belongs to one of the vocabulary's families (randomness, bounds,
interval level, interval method, iterations) must be the spelling of its layer.  An old
spelling is allowed only as a deprecated alias listed in :data:`DEPRECATED` with its
replacement -- and then the callable must declare both and resolve the old one through the one
alias mechanism (``dpreg._validation.renamed_parameters`` / ``resolve_renamed``), which warns
and refuses both at once.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

import api_snapshot as snap
import dpreg
from dpreg._validation import DEPRECATED as SENTINEL
from dpreg._validation import ESTIMATOR_DEPRECATED, deprecated_aliases
from dpreg.exceptions import InvalidParameterError

#: the families of names the vocabulary fixes (any parameter with one of these names is checked)
FAMILIES: dict[str, frozenset[str]] = {
    "randomness": frozenset({"random_state", "rng", "seed", "random_seed", "generator", "gen"}),
    "bounds": frozenset({"bounds", "bounds_X", "bounds_y", "bounds_x", "x_bounds", "y_bounds",
                         "x_range", "y_range", "output_range", "x_norm_bound", "y_bound"}),
    "interval level": frozenset({"alpha", "ci_alpha", "level", "ci_level", "conf_level"}),
    "interval method": frozenset({"method", "ci_method", "interval_method"}),
    "iterations": frozenset({"steps", "n_iter", "n_steps", "max_iter", "iterations",
                             "n_iterations"}),
}

#: the spellings allowed per layer and family (docs/architecture.md, "Vocabulary")
VOCABULARY: dict[str, dict[str, frozenset[str]]] = {
    # dpreg.regress, fit_by_group, release_sscp, plan, SSCPRelease.regress, fit_arrays, ...
    "entry point": {
        "randomness": frozenset({"random_state"}),
        "bounds": frozenset({"bounds"}),  # a column mapping, converted once
        "interval level": frozenset({"ci_alpha"}),
        "interval method": frozenset({"method", "ci_method"}),  # method = the method's name
        "iterations": frozenset({"n_iter"}),
    },
    # scikit-learn estimators (dpreg.linear_model, AutoDPRegression)
    "estimator": {
        "randomness": frozenset({"random_state"}),
        # output_range: DPTheilSen's public range of the released predictions (the median's
        # search range, not a column's bounds); x_norm_bound: BoostedAdaSSP's clip radius B_x
        # of the publicly rescaled rows (an algorithm constant of Tang et al., not data bounds)
        "bounds": frozenset({"bounds_X", "bounds_y", "output_range", "x_norm_bound"}),
        "interval level": frozenset({"ci_alpha"}),
        "interval method": frozenset({"ci_method"}),
        "iterations": frozenset({"n_iter"}),
    },
    # functional cores and mechanisms (dpreg.simple, .multivariate, .covariance, .mechanisms)
    "core": {
        "randomness": frozenset({"rng"}),
        # bounds: the SSCP cores' column mapping (covariance: no x/y roles); x_norm_bound and
        # y_bound: the unit-ball cores' norm bounds of the scaled design (AdaSSP, Boosted)
        "bounds": frozenset({"x_bounds", "y_bounds", "output_range", "bounds", "x_norm_bound",
                             "y_bound"}),
        "interval level": frozenset({"ci_alpha"}),
        "interval method": frozenset({"ci_method"}),
        "iterations": frozenset({"n_iter"}),
    },
    # results and types: fields that record what a release was (its method, bounds, interval)
    "result": {
        "randomness": frozenset({"random_state"}),
        "bounds": frozenset({"bounds"}),
        "interval level": frozenset({"ci_alpha"}),
        "interval method": frozenset({"method", "ci_method"}),
        "iterations": frozenset({"n_iter"}),
    },
}

#: post-processing of a fitted result keeps statsmodels' spelling (``conf_int(alpha)``), and a
#: result records the level its interval was computed at: (callable, parameter) -> why
EXEMPT: dict[tuple[str, str], str] = {
    ("dpreg.RegressionResults.conf_int", "alpha"): "post-processing (statsmodels' spelling)",
    ("dpreg.RegressionResults.excludes_estimate", "alpha"): "post-processing",
    ("dpreg.RegressionResults.plot", "alpha"): "post-processing",
    ("dpreg.RegressionResults.summary", "alpha"): "post-processing",
    ("dpreg.simple.ConfidenceInterval", "alpha"): "a released interval's recorded level",
    ("dpreg.simple.ConfidenceInterval", "method"): "a released interval's label",
    ("dpreg.simple.SimpleRegressionResult", "method"): "the released method's name",
}

#: deprecated spellings kept for one release: callable -> {old: new}
DEPRECATED: dict[str, dict[str, str]] = {
    "dpreg.release_sscp": {"rng": "random_state"},
    "dpreg.SSCPRelease.regress": {"rng": "random_state"},
    "dpreg.plan": {"seed": "random_state"},
    "dpreg.simple.theil_sen_ci": {"alpha": "ci_alpha", "method": "ci_method"},
    "dpreg.simple.theil_sen_with_ci": {"alpha": "ci_alpha"},
    "dpreg.simple.nonprivate_theil_sen_ci": {"alpha": "ci_alpha"},
    "dpreg.simple.ols_ci": {"alpha": "ci_alpha"},
    "dpreg.simple.default_prediction_range": {"bounds_y": "y_bounds"},
    "dpreg.simple.gradient_descent": {"steps": "n_iter"},
    "dpreg.simple.plan_gradient_descent": {"steps": "n_iter"},
    "dpreg.DPGradientDescent": {"steps": "n_iter"},
}

#: the entry points that are not named at ``dpreg.*`` (the array engine)
EXTRA_ENTRY_POINTS = ("dpreg.api.fit_arrays",)
#: where fit_arrays differs: it takes arrays (no column names to key a mapping by), so its
#: bounds are the cores' x_bounds/y_bounds -- the one entry point that does
ARRAY_ENGINE_BOUNDS = frozenset({"x_bounds", "y_bounds"})
CORE_PACKAGES = ("dpreg.simple", "dpreg.multivariate", "dpreg.covariance", "dpreg.mechanisms")


def _layer(path: str, obj: Any, owner: type | None) -> str:
    from sklearn.base import BaseEstimator

    core = path.startswith(tuple(f"{p}." for p in CORE_PACKAGES))
    if owner is not None:  # a member of a class
        if path == "dpreg.SSCPRelease.regress":
            return "entry point"
        return "estimator" if issubclass(owner, BaseEstimator) else "core" if core else "result"
    if inspect.isclass(obj):  # a core's own types (e.g. PublicScaling) speak the core's words
        return "estimator" if issubclass(obj, BaseEstimator) else "core" if core else "result"
    if path in EXTRA_ENTRY_POINTS or path.count(".") == 1:  # dpreg.<name>
        return "entry point"
    return "core"


def callables() -> Iterator[tuple[str, Any, str]]:
    """(path, callable, layer) of every public callable: the snapshot's walk and the cores'
    ``__all__``; a class contributes its constructor and its public methods."""
    names = set(snap.covered_names())
    for mod in CORE_PACKAGES:
        names.update((mod, n) for n in importlib.import_module(mod).__all__)
    seen: set[int] = set()
    for mod, name in sorted(names):
        obj = getattr(importlib.import_module(mod), name)
        path = f"{mod}.{name}"
        if id(obj) in seen or not callable(obj):
            continue
        seen.add(id(obj))
        if inspect.isclass(obj):
            if issubclass(obj, BaseException):
                continue
            yield path, obj, _layer(path, obj, None)
            for member, raw in vars(obj).items():
                if not member.startswith("_") and inspect.isfunction(raw):
                    yield f"{path}.{member}", raw, _layer(f"{path}.{member}", raw, obj)
        else:
            yield path, obj, _layer(path, obj, None)
    for path in EXTRA_ENTRY_POINTS:
        mod, _, name = path.rpartition(".")
        yield path, getattr(importlib.import_module(mod), name), "entry point"


def violations(items: Any = None) -> list[str]:
    """Every parameter spelled outside its layer's vocabulary (and not an exemption or a
    listed deprecated alias), and every listed alias that is not what the table says."""
    out: list[str] = []
    for path, obj, layer in (callables() if items is None else items):
        try:
            params = inspect.signature(obj).parameters
        except (TypeError, ValueError):
            continue
        aliases = DEPRECATED.get(path, {})
        declared = deprecated_aliases(obj)
        if declared != aliases:
            out.append(f"{path}: deprecated aliases {declared} (the table lists {aliases})")
        for pname, param in params.items():
            if (path, pname) in EXEMPT:
                continue
            if pname in aliases:
                old_default = ESTIMATOR_DEPRECATED if layer == "estimator" else SENTINEL
                if aliases[pname] not in params or not (param.default is old_default or (
                        layer == "estimator" and param.default == old_default)):
                    out.append(f"{path}: deprecated {pname} must default to DEPRECATED next "
                               f"to its replacement {aliases[pname]}")
                continue
            for family, spellings in FAMILIES.items():
                if pname not in spellings:
                    continue
                allowed = VOCABULARY[layer][family]
                if path in EXTRA_ENTRY_POINTS and family == "bounds":
                    allowed = ARRAY_ENGINE_BOUNDS
                if pname not in allowed:
                    out.append(f"{path} ({layer}): {family} parameter {pname!r}; the {layer} "
                               f"spelling is {sorted(allowed)}")
    return out


def test_every_public_signature_speaks_its_layers_vocabulary():
    found = violations()
    assert not found, "\n".join(found)


def test_the_walk_covers_every_layer():
    layers = {}
    for path, _, layer in callables():
        layers.setdefault(layer, []).append(path)
    assert {"dpreg.regress", "dpreg.fit_by_group", "dpreg.plan", "dpreg.release_sscp",
            "dpreg.SSCPRelease.regress", "dpreg.api.fit_arrays"} <= set(layers["entry point"])
    assert {"dpreg.NoisyStats", "dpreg.DPGradientDescent", "dpreg.AutoDPRegression"} <= set(
        layers["estimator"])
    assert {"dpreg.simple.theil_sen_ci", "dpreg.mechanisms.laplace",
            "dpreg.multivariate.adassp"} <= set(layers["core"])
    assert "dpreg.RegressionResults.conf_int" in layers["result"]


# ---------------------------------------------------------------- the check can fail
@pytest.mark.parametrize("layer,path,bad", [
    ("entry point", "dpreg.fake_entry", "rng"),
    ("entry point", "dpreg.fake_entry", "x_bounds"),
    ("entry point", "dpreg.fake_entry", "alpha"),
    ("estimator", "dpreg.FakeEstimator", "seed"),
    ("estimator", "dpreg.FakeEstimator", "bounds"),
    ("core", "dpreg.simple.fake_core", "random_state"),
    ("core", "dpreg.simple.fake_core", "method"),
    ("core", "dpreg.simple.fake_core", "steps"),
])
def test_a_planted_wrong_spelling_is_reported(layer, path, bad):
    ns: dict[str, Any] = {}
    exec(f"def f(x, *, epsilon, {bad}=None):\n    return x", ns)  # a planted signature
    found = violations([(path, ns["f"], layer)])
    assert len(found) == 1 and repr(bad) in found[0] and layer in found[0]
    ok: dict[str, Any] = {}
    right = {"entry point": "random_state", "estimator": "random_state", "core": "rng"}[layer]
    exec(f"def f(x, *, epsilon, {right}=None):\n    return x", ok)
    assert violations([(path, ok["f"], layer)]) == []


def test_an_unlisted_or_wrongly_declared_alias_is_reported():
    from dpreg._validation import renamed_parameters

    @renamed_parameters(rng="random_state")
    def f(x, *, random_state=None, rng=SENTINEL):
        return random_state

    found = violations([("dpreg.fake_entry", f, "entry point")])  # not in DEPRECATED
    assert any("deprecated aliases" in f for f in found)

    def g(x, *, random_state=None, rng=None):  # the old name without the mechanism
        return random_state

    assert violations([("dpreg.release_sscp", g, "entry point")])


# ---------------------------------------------------------------- the alias mechanism
def _data() -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(3)
    x = g.uniform(0.0, 1.0, 300)
    return x, np.clip(0.5 * x + g.normal(0.0, 0.1, 300), 0.0, 1.0)


def test_an_old_spelling_warns_naming_the_new_one_and_gives_the_same_release():
    from dpreg.simple import theil_sen_ci

    x, y = _data()
    new = theil_sen_ci(x, y, epsilon=2.0, ci_alpha=0.1, output_range=(-3, 3), ci_method="tight",
                       rng=5)
    with pytest.warns(DeprecationWarning, match=r"alpha= is deprecated.*use ci_alpha="):
        old = theil_sen_ci(x, y, epsilon=2.0, alpha=0.1, output_range=(-3, 3),
                           ci_method="tight", rng=5)
    assert (old.low, old.high, old.alpha) == (new.low, new.high, new.alpha)
    frame = pd.DataFrame({"x": x, "y": y})
    kw = dict(columns=["x", "y"], bounds={"x": (0, 1), "y": (0, 1)}, epsilon=1.0, delta=1e-6)
    with pytest.warns(DeprecationWarning, match="use random_state="):
        a = dpreg.release_sscp(frame, rng=2**100 + 7, **kw)
    b = dpreg.release_sscp(frame, random_state=2**100 + 7, **kw)
    np.testing.assert_array_equal(a.noisy_scaled, b.noisy_scaled)
    with pytest.warns(DeprecationWarning, match="use random_state="):
        p_old = dpreg.plan("noisy-stats", 1.0, n=500, formula="y ~ x",
                           bounds={"x": (0, 1), "y": (0, 1)}, seed=4)
    p_new = dpreg.plan("noisy-stats", 1.0, n=500, formula="y ~ x",
                       bounds={"x": (0, 1), "y": (0, 1)}, random_state=4)
    assert p_old.coef_sd == p_new.coef_sd


def test_both_spellings_at_once_are_refused_before_anything_is_charged():
    from dpreg.simple import theil_sen_ci

    x, y = _data()
    led = dpreg.Ledger(dpreg.PureDP(10.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused, not warned
        with pytest.raises(InvalidParameterError, match=r"alpha=.*ci_alpha="):
            theil_sen_ci(x, y, epsilon=1.0, alpha=0.1, ci_alpha=0.1, output_range=(-3, 3),
                         ledger=led)
        with pytest.raises(InvalidParameterError, match=r"seed=.*random_state="):
            dpreg.plan("noisy-stats", 1.0, n=500, formula="y ~ x",
                       bounds={"x": (0, 1), "y": (0, 1)}, seed=1, random_state=1)
        frame = pd.DataFrame({"x": x, "y": y})
        with pytest.raises(InvalidParameterError, match=r"rng=.*random_state="):
            dpreg.release_sscp(frame, columns=["x", "y"], bounds={"x": (0, 1), "y": (0, 1)},
                               epsilon=1.0, delta=1e-6, rng=1, random_state=1, ledger=led)
    assert not led.events()


def test_deprecated_parameters_show_in_the_snapshot_with_their_replacement():
    lines = "\n".join(snap.python_lines())
    for path, aliases in DEPRECATED.items():
        for old, new in aliases.items():
            if f"def {path}(" in lines or f"class {path}(" in lines:
                line = next(ln for ln in lines.splitlines()
                            if ln.startswith((f"def {path}(", f"class {path}(")))
                assert (f"{old}=<deprecated>" in line or f"{old}='deprecated'" in line) \
                    and new in line, line


# ---------------------------------------------------------------- DP-GD: one name for the rounds
def test_dp_gd_rounds_are_n_iter_everywhere_and_steps_is_the_deprecated_spelling():
    """Both algorithms count their rounds in ``n_iter`` (default None: 80 with one x as Alabi
    et al., 100 with several); ``steps`` (the one-x spelling) warns and means the same."""
    x, y = _data()
    X = x.reshape(-1, 1)
    kw = dict(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1), random_state=2**100 + 3)
    default = dpreg.DPGradientDescent(**kw).fit(X, y)
    assert default.privacy_.details["steps"] == 80
    new = dpreg.DPGradientDescent(n_iter=12, **kw).fit(X, y)
    with pytest.warns(DeprecationWarning, match="use n_iter="):
        old = dpreg.DPGradientDescent(steps=12, **kw).fit(X, y)
    assert new.privacy_.details["steps"] == 12
    np.testing.assert_array_equal(old.coef_, new.coef_)
    assert not np.array_equal(default.coef_, new.coef_)  # the rounds reached the release
    frame = pd.DataFrame({"x": x, "y": y})
    rk = dict(method="dp-gd", epsilon=1.0, bounds={"x": (0, 1), "y": (0, 1)},
              random_state=2**100 + 3)
    with pytest.warns(DeprecationWarning, match="use n_iter="):
        r_old = dpreg.regress(frame, "y ~ x", steps=12, **rk)
    r_new = dpreg.regress(frame, "y ~ x", n_iter=12, **rk)
    np.testing.assert_array_equal(r_old.params.to_numpy(), r_new.params.to_numpy())
    # several x: n_iter defaults to "auto", the public schedule rule of clipped DP-GD (1600 rounds)
    g = np.random.default_rng(1)
    X3 = g.uniform(0, 1, (200, 3))
    est = dpreg.DPGradientDescent(epsilon=1.0, delta=1e-6, bounds_X=(0, 1), bounds_y=(0, 1),
                                  random_state=2**100 + 3).fit(X3, X3.mean(axis=1))
    assert est.algorithm_ == "ClippedDPGradientDescent"
    assert est.results_.privacy.details["n_iter"] == 1600


def test_dp_gd_both_spellings_are_refused_before_anything_is_charged():
    x, y = _data()
    led = dpreg.Ledger(dpreg.PureDP(10.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InvalidParameterError, match=r"steps=.*n_iter="):
            dpreg.DPGradientDescent(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1), steps=5,
                                    n_iter=5, ledger=led).fit(x.reshape(-1, 1), y)
        with pytest.raises(InvalidParameterError, match=r"steps=.*n_iter="):
            dpreg.regress(pd.DataFrame({"x": x, "y": y}), "y ~ x", method="dp-gd",
                          epsilon=1.0, bounds={"x": (0, 1), "y": (0, 1)}, steps=5, n_iter=5,
                          ledger=led)
    assert not led.events()


def test_simple_dp_gd_n_iter_defaults_to_auto_so_both_spellings_are_always_refused():
    """SimpleDPGradientDescent's n_iter defaults to "auto" (80 rounds, as DPGradientDescent
    and the dp-gd method with one x): steps= together with ANY n_iter -- 80 included, which
    the old integer default could not tell from "not given" -- is refused naming both, before
    anything is charged; the default fit is the 80-round fit, bit for bit."""
    from dpreg.linear_model import SimpleDPGradientDescent

    x, y = _data()
    X = x.reshape(-1, 1)
    kw = dict(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1), random_state=2**100 + 3)
    assert SimpleDPGradientDescent().get_params()["n_iter"] == "auto"
    default = SimpleDPGradientDescent(**kw).fit(X, y)
    eighty = SimpleDPGradientDescent(n_iter=80, **kw).fit(X, y)
    assert default.results_.privacy.details["steps"] == 80
    np.testing.assert_array_equal(default.coef_, eighty.coef_)
    assert default.intercept_ == eighty.intercept_
    with pytest.warns(DeprecationWarning, match="use n_iter="):
        old = SimpleDPGradientDescent(steps=12, **kw).fit(X, y)
    np.testing.assert_array_equal(old.coef_, SimpleDPGradientDescent(n_iter=12, **kw)
                                  .fit(X, y).coef_)
    led = dpreg.Ledger(dpreg.PureDP(10.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n_iter in (80, 12):
            with pytest.raises(InvalidParameterError,
                               match=rf"got both steps=12 and n_iter={n_iter}"):
                SimpleDPGradientDescent(steps=12, n_iter=n_iter, ledger=led,
                                        **kw).fit(X, y)
    assert not led.events()
