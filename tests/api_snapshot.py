"""The public API as text: names and signatures of what users call (the snapshot of
tests/test_api_snapshot.py).

Covered: every name of ``dpreg.__all__``; the stable names of the functional cores, mechanisms,
estimators, results and exceptions in their own modules (:data:`STABLE`); the public methods,
properties and dataclass fields of every covered class that dpreg defines (inherited members of
other libraries, e.g. scikit-learn's ``get_params``, are theirs); the attributes a fitted
estimator and its results object carry; and every ``dpreg`` CLI command with its arguments and
options.  A signature is written without type annotations (parameter names, kinds and default
values are what calling code depends on); memory addresses are dropped from default values.

Update the snapshot consciously, after checking that no user-visible name or parameter was lost::

    make api-snapshot      # = DPREG_UPDATE_API_SNAPSHOT=1 pytest tests/test_api_snapshot.py

Names listed in :data:`STABLE` cannot be dropped even then (add, don't rename).
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import re
from pathlib import Path, PurePath
from typing import Any

SNAPSHOT = Path(__file__).resolve().parent / "snapshots" / "public_api.txt"
UPDATE_ENV = "DPREG_UPDATE_API_SNAPSHOT"
UPDATE_COMMAND = f"make api-snapshot   (or: {UPDATE_ENV}=1 .venv/bin/python -m pytest tests/test_api_snapshot.py)"

#: the stable names of the public API (module -> names); ``dpreg.__all__`` is covered in full on
#: top of these.  ``OPTIONAL`` names are covered once they exist (added stable names).
STABLE: dict[str, tuple[str, ...]] = {
    "dpreg": ("PureDP", "ApproxDP", "ZCDP", "GDP", "Ledger", "regress", "release_sscp",
              "SSCPRelease", "fit_by_group", "RegressionResults", "NoisyStats", "DPTheilSen",
              "DPGradientDescent", "AdaSSP", "BoostedAdaSSP", "TukeyEM", "CovarianceOLS",
              "AutoDPRegression", "DPRegError", "InvalidInputError", "BudgetExceededError",
              "MechanismFailure", "PrivacyLeakWarning"),
    "dpreg.privacy": ("PureDP", "ApproxDP", "ZCDP", "GDP", "Ledger"),
    "dpreg.mechanisms": ("laplace", "gaussian", "exp_quantile", "smooth_median"),
    "dpreg.simple": ("noisy_stats", "dp_intercept", "theil_sen", "gradient_descent",
                     "theil_sen_ci", "ConfidenceInterval", "SimpleRegressionResult"),
    "dpreg.simple.ties": ("dp_tied_share", "tied_share_sensitivity", "TiedShare"),
    "dpreg.linear_model": ("NoisyStats", "DPTheilSen", "DPGradientDescent", "AdaSSP",
                           "BoostedAdaSSP", "TukeyEM", "CovarianceOLS"),
    "dpreg.auto": ("AutoDPRegression",),
    "dpreg.inference": ("RegressionResults",),
    "dpreg.exceptions": ("DPRegError", "InvalidInputError", "BudgetExceededError",
                         "MechanismFailure", "PrivacyLeakWarning", "MissingExtraError",
                         "TiedSlopesWarning"),
}
OPTIONAL: dict[str, tuple[str, ...]] = {"dpreg": ("plan",)}
#: stable CLI commands (design of the command line); the snapshot lists all of them
STABLE_COMMANDS = ("fit", "fit-groups", "release-cov", "regress", "reproduce", "audit", "demo")

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
#: members that scikit-learn's metadata routing generates on every estimator class
_GENERATED = re.compile(r"set_\w+_request")


def _clean(text: str) -> str:
    return _ADDRESS.sub("", text)


class _Text:
    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _default(value: Any) -> str:
    if isinstance(value, PurePath):  # same text on every platform
        return f"Path({value.as_posix()!r})"
    return _clean(repr(value))


def signature(obj: Any) -> str:
    """``(a, b=1, *, c)``: parameter names, kinds and defaults, no annotations."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    params = [p.replace(annotation=inspect.Parameter.empty,
                        default=_Text(_default(p.default)) if isinstance(p.default, PurePath)
                        else p.default) for p in sig.parameters.values()]
    return _clean(str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty)))


def _owner(cls: type, name: str) -> type | None:
    for klass in cls.__mro__:
        if name in vars(klass):
            return klass
    return None


def class_lines(path: str, cls: type) -> list[str]:
    """The class line (constructor signature, public bases) and one line per public member that
    dpreg defines."""
    if isinstance(cls, enum.EnumMeta):  # members and their values (the constructor is Enum's)
        kind = "str enum" if issubclass(cls, str) else "enum"
        return [f"class {path}  [{kind}]"] + [f"  {path}.{m.name} = {m.value!r}" for m in cls]
    bases = [b.__name__ for b in cls.__mro__[1:] if b is not object and not b.__name__.startswith("_")]
    lines = [f"class {path}{signature(cls)}  bases: {', '.join(bases) or '-'}"]
    members: dict[str, str] = {}
    if dataclasses.is_dataclass(cls):
        for f in dataclasses.fields(cls):
            if not f.name.startswith("_"):
                members[f.name] = f"  {path}.{f.name}  [field]"
    for name in dir(cls):
        if name.startswith("_") or name in members or _GENERATED.fullmatch(name):
            continue
        owner = _owner(cls, name)
        if owner is None or not owner.__module__.startswith("dpreg"):
            continue
        raw = vars(owner)[name]
        if isinstance(raw, property):
            members[name] = f"  {path}.{name}  [property]"
        elif isinstance(raw, classmethod):
            members[name] = f"  {path}.{name}{signature(getattr(cls, name))}  [classmethod]"
        elif isinstance(raw, staticmethod):
            members[name] = f"  {path}.{name}{signature(raw.__func__)}  [staticmethod]"
        elif inspect.isfunction(raw):
            members[name] = f"  {path}.{name}{signature(raw)}"
        else:
            members[name] = f"  {path}.{name}  [attribute]"
    return lines + [members[k] for k in sorted(members)]


def object_lines(path: str, obj: Any) -> list[str]:
    if inspect.isclass(obj):
        return class_lines(path, obj)
    if inspect.ismodule(obj):
        return [f"module {path}"]
    if callable(obj):
        return [f"def {path}{signature(obj)}"]
    if path.endswith("__version__"):
        return [f"{path}  [str]"]
    if isinstance(obj, (tuple, list, frozenset, set)) and all(isinstance(v, str) for v in obj):
        return [f"{path} = {sorted(obj)!r}"]
    return [f"{path}  [{type(obj).__name__}]"]


def covered_names() -> list[tuple[str, str]]:
    """(module, name) of every covered name, in a stable order."""
    import dpreg

    names = {("dpreg", n) for n in dpreg.__all__}
    for mod, ns in STABLE.items():
        names.update((mod, n) for n in ns)
    for mod, ns in OPTIONAL.items():
        m = importlib.import_module(mod)
        names.update((mod, n) for n in ns if hasattr(m, n))
    return sorted(names)


def python_lines() -> list[str]:
    """One block per covered name; a name bound to an object already written (the same class
    re-exported by ``dpreg`` and its own module) is an alias line."""
    out: list[str] = []
    seen: dict[int, str] = {}
    for mod, name in covered_names():
        module = importlib.import_module(mod)
        path = f"{mod}.{name}"
        if not hasattr(module, name):
            out.append(f"MISSING {path}")
            continue
        obj = getattr(module, name)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and id(obj) in seen:
            out.append(f"alias {path} = {seen[id(obj)]}")
            continue
        seen[id(obj)] = path
        out += object_lines(path, obj)
    return out


def fitted_lines() -> list[str]:
    """Public attributes of fitted estimators (one x and several x) and of their results."""
    import warnings

    import numpy as np

    from dpreg import AdaSSP, NoisyStats

    gen = np.random.default_rng(0)
    X = gen.uniform(0.0, 1.0, size=(400, 2))
    y = np.clip(0.5 * X[:, 0] + 0.2 * X[:, 1] + gen.normal(0.0, 0.05, 400), 0.0, 1.0)
    out: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = {"NoisyStats": NoisyStats(epsilon=100.0, bounds_X=[(0.0, 1.0)], bounds_y=(0.0, 1.0),
                                         random_state=1).fit(X[:, :1], y),
                "AdaSSP": AdaSSP(epsilon=10.0, delta=1e-6, bounds_X=[(0.0, 1.0)] * 2,
                                 bounds_y=(0.0, 1.0), random_state=1).fit(X, y)}
    for name, est in fits.items():
        attrs = sorted(a for a in vars(est) if a.endswith("_") and not a.startswith("_"))
        out.append(f"fitted dpreg.{name}: {', '.join(attrs)}")
        res = est.results_
        attrs = sorted(a for a in vars(res) if not a.startswith("_"))
        out.append(f"fitted dpreg.{name}.results_ ({type(res).__name__}): {', '.join(attrs)}")
    return out


def command_lines(cmd: Any, path: str = "dpreg") -> list[str]:
    """One line per command (recursively) and per parameter of a click/typer command object."""
    out = [f"command {path}"]
    for p in cmd.params:
        if getattr(p, "param_type_name", "") == "argument" or type(p).__name__.endswith("Argument"):
            tags = ["required" if p.required else "optional"] + (["multiple"] if p.multiple else [])
            out.append(f"  argument {p.name.upper()}  [{', '.join(tags)}]")
            continue
        opts = " / ".join(sorted(p.opts) + sorted(p.secondary_opts))
        tags = ["required" if p.required else f"default={_default(p.default)}"]
        if getattr(p, "is_flag", False):
            tags.append("flag")
        if p.multiple:
            tags.append("multiple")
        if getattr(p, "hidden", False):
            tags.append("hidden")
        out.append(f"  option {opts}  [{', '.join(tags)}]")
    for name in sorted(getattr(cmd, "commands", {})):
        out += command_lines(cmd.commands[name], f"{path} {name}")
    return out


def cli_lines() -> list[str]:
    import typer

    from dpreg.cli import app

    return command_lines(typer.main.get_command(app))


def build() -> list[str]:
    return (["# dpreg public API snapshot (tests/api_snapshot.py); update: " + UPDATE_COMMAND, ""]
            + python_lines() + [""] + fitted_lines() + [""] + cli_lines())


def read() -> list[str]:
    return SNAPSHOT.read_text(encoding="utf-8").splitlines() if SNAPSHOT.exists() else []


def write(lines: list[str]) -> None:
    SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
    SNAPSHOT.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")
