"""The method registry: ONE table of dpreg's regression methods (``method=`` / ``--method``),
built from the method objects (:class:`~dpreg._spec.MethodSpec`) of this package.

Every module of this package whose name does not start with ``_`` defines one or more specs in
a module-level ``SPECS`` tuple; the registry collects them in :attr:`MethodSpec.order`.
Adding a method is therefore one new module here (plus its privacy note and its tests):
``regress``, the CLI, ``fit_by_group``, ``plan``, ``auto`` and the reproduction harness ask
the spec for what they need (docs/architecture.md).

Importing this package imports the spec modules only; a spec imports its core and estimator
when it is used, so listing the methods (``dpreg methods``) stays cheap.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from dpreg._spec import MethodSpec
from dpreg.exceptions import UnknownNameError
from dpreg.methods._planning import ExpectedError, PlanDesign, robust_sd, tail_note

__all__ = ["MethodSpec", "REGISTRY", "get", "names", "specs", "suggest", "ExpectedError",
           "PlanDesign", "robust_sd", "tail_note"]


def _collect() -> Mapping[str, MethodSpec]:
    found: list[MethodSpec] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(getattr(module, "SPECS", ()))
    found.sort(key=lambda s: (s.order, s.name))
    table: dict[str, MethodSpec] = {}
    for spec in found:
        if spec.name in table:  # pragma: no cover - a packaging error, caught by the tests
            raise RuntimeError(f"two method specs are named {spec.name!r}")
        table[spec.name] = spec
    return MappingProxyType(table)


#: name -> method, in the order listings show them (``auto`` last)
REGISTRY: Mapping[str, MethodSpec] = _collect()


def specs(*, selector: bool | None = None, features: str | None = None,
          delta: str | None = None, harness: str | None = None,
          local: bool | None = None, spark_native: bool | None = None,
          source: bool | None = None) -> list[MethodSpec]:
    """The methods matching every given filter, in registry order (``selector=False`` leaves
    out ``auto``; ``local``: has a batched per-group kernel; ``source``: fits from a file or a
    Spark DataFrame in one pass)."""
    out = []
    for m in REGISTRY.values():
        if selector is not None and m.is_selector != selector:
            continue
        if features is not None and m.features != features:
            continue
        if delta is not None and m.delta != delta:
            continue
        if harness is not None and harness not in m.harness:
            continue
        if local is not None and (m.local_options is not None) != local:
            continue
        if spark_native is not None and m.spark_native != spark_native:
            continue
        if source is not None and (m.needs_rows is None) != source:
            continue
        out.append(m)
    return out


def names(**filters: Any) -> tuple[str, ...]:
    """Names of :func:`specs` with the same filters."""
    return tuple(m.name for m in specs(**filters))


def suggest(name: Any, candidates: Any = None) -> str:
    """`` (did you mean 'x'?)`` for a near miss among ``candidates`` (default: all names),
    else ``""``.  Only the user's own string is compared; nothing else is shown."""
    if not isinstance(name, str):
        return ""
    pool = list(REGISTRY) if candidates is None else [str(c) for c in candidates]
    close = difflib.get_close_matches(name.strip().lower(), pool, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def get(name: Any, *, allowed: Any = None) -> MethodSpec:
    """The spec of ``name``; an :class:`UnknownNameError` listing the allowed names (all by
    default) with a "did you mean" suggestion otherwise."""
    pool = tuple(REGISTRY) if allowed is None else tuple(allowed)
    if isinstance(name, str) and name in pool and name in REGISTRY:
        return REGISTRY[name]
    raise UnknownNameError(f"method must be one of {list(pool)}; got {name!r}"
                           + suggest(name, pool))
