"""The method registry: ONE table of dpreg's regression methods (``method=`` / ``--method``).

Every place that needs to know which methods exist or what they need reads this table:
:mod:`dpreg.api` (``METHODS``, ``SIMPLE_ONLY``, ``MULTI``, ``NEEDS_DELTA``; input checks),
:mod:`dpreg._dispatch` (which estimator or core fits a method, its minimum row count),
:mod:`dpreg.grouped` (minimum rows, the LocalBackend's vectorised methods, the relation),
:mod:`dpreg.auto`, :mod:`dpreg.bench` (the methods each harness runs) and the CLI
(``dpreg methods``, "did you mean" on a misspelt name).

The table sits at the bottom of the layering (docs/architecture.md): it imports nothing of
dpreg but :mod:`dpreg.exceptions`.  Estimators and cores are named by dotted paths
(``"package.module:attribute"``) and imported only when :func:`load` is called, so reading the
table never imports an estimator.

Adding a method: one :class:`Method` entry here, one functional core, one estimator file in
``linear_model/`` and one privacy note in ``docs/privacy/`` (docs/architecture.md).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from dpreg.exceptions import InvalidInputError, UnknownNameError

__all__ = ["Method", "REGISTRY", "get", "names", "methods", "load", "suggest"]


@dataclass(frozen=True)
class Method:
    """One regression method (a row of :data:`REGISTRY`).

    Attributes
    ----------
    name:
        The ``method=`` / ``--method`` name.
    algorithm:
        One line: the algorithm and its paper.
    features:
        ``"one"``: fits y on exactly one x; ``"any"``: one or more.
    delta:
        ``"always"``: needs δ; ``"never"``: no δ; ``"multi-x"``: needs δ with several x.
    guarantee:
        The privacy guarantee in words (as charged to a ledger).
    relation:
        The neighbouring relation of a release by default (``"replace-one"``: n public, or
        ``"add-remove"``).
    takes_neighbouring:
        Whether the estimator takes ``neighbouring=`` (per-group fits set replace-one on it).
    min_rows:
        Rows the method needs (a check on public n; per-group fits give smaller groups ⊥).
    always_intercept:
        The release always contains an intercept (``fit_intercept=False`` is refused).
    pure:
        Every release is pure ε-DP (the ledger is charged ``PureDP(ε)``).
    estimator:
        ``"module:Class"`` of the scikit-learn estimator (``None``: fitted by the core alone).
    estimator_options:
        Fixed constructor arguments this method name stands for (e.g. ``median="exp"``).
    cores:
        ``"module:function"`` of the functional core(s) behind the estimator (the one-x and
        several-x algorithm of ``dp-gd``; the pipeline of ``auto``).
    local_options:
        Options the LocalBackend of :func:`dpreg.fit_by_group` vectorises for this method
        (``None``: per-group fits of this method run the reference loop).
    spark_native:
        Whether the Spark backend computes this method's statistics with one native
        aggregation.
    harness:
        The ``dpreg reproduce`` harnesses that run the method (``"simple"``, ``"multivariate"``).
    privacy_notes:
        The notes in ``docs/privacy/`` that state its guarantee, relation and sensitivity.
    """

    name: str
    algorithm: str
    features: Literal["one", "any"]
    delta: Literal["always", "never", "multi-x"]
    guarantee: str
    relation: Literal["replace-one", "add-remove"]
    takes_neighbouring: bool
    min_rows: int
    always_intercept: bool
    pure: bool
    estimator: str | None
    cores: tuple[str, ...]
    estimator_options: Mapping[str, Any] = field(default_factory=dict)
    local_options: tuple[str, ...] | None = None
    spark_native: bool = False
    harness: tuple[str, ...] = ()
    privacy_notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "estimator_options",
                           MappingProxyType(dict(self.estimator_options)))

    @property
    def one_x_only(self) -> bool:
        return self.features == "one"

    @property
    def needs_delta(self) -> bool:
        """δ is required whatever the data (``delta == "always"``)."""
        return self.delta == "always"

    @property
    def is_selector(self) -> bool:
        """``auto``: chooses among the other methods privately (:mod:`dpreg.auto`)."""
        return self.name == "auto"

    def load_estimator(self) -> Any:
        if self.estimator is None:
            raise InvalidInputError(f"method {self.name!r} has no estimator class")
        return load(self.estimator)

    def load_core(self, index: int = 0) -> Any:
        return load(self.cores[index])


_TS_OPTIONS = ("pairs", "theta", "output_range", "dof")
_SIMPLE = "ε-DP"


def _theil_sen(median: str, what: str) -> Method:
    return Method(
        name=f"theil-sen-{median}", algorithm=f"DP Theil-Sen, {what}", features="one",
        delta="never", guarantee=_SIMPLE, relation="replace-one", takes_neighbouring=False,
        min_rows=2, always_intercept=True, pure=True, estimator="dpreg.linear_model:DPTheilSen",
        estimator_options={"median": median},
        cores=("dpreg.simple:theil_sen", "dpreg.simple:theil_sen_with_ci"),
        local_options=_TS_OPTIONS, harness=("simple",),
        privacy_notes=("theil_sen.md", "theil_sen_ci.md"))


#: name -> method, in the order listings show them (``auto`` last)
REGISTRY: Mapping[str, Method] = MappingProxyType({m.name: m for m in (
    Method(
        name="noisy-stats",
        algorithm="DPSuffStats, noisy sufficient statistics (Alabi et al. 2022, Alg. 1)",
        features="one", delta="never", guarantee=_SIMPLE, relation="replace-one",
        takes_neighbouring=False, min_rows=2, always_intercept=True, pure=True,
        estimator="dpreg.linear_model:NoisyStats", cores=("dpreg.simple:noisy_stats",),
        local_options=(), spark_native=True, harness=("simple",),
        privacy_notes=("noisy_stats.md",)),
    Method(
        name="dp-intercept",
        algorithm="intercept-only baseline, a noisy mean of y (Alabi et al. 2022)",
        features="one", delta="never", guarantee=_SIMPLE, relation="replace-one",
        takes_neighbouring=False, min_rows=2, always_intercept=True, pure=True,
        estimator=None, cores=("dpreg.simple:dp_intercept",), local_options=(),
        spark_native=True, harness=("simple",), privacy_notes=("dp_intercept.md",)),
    _theil_sen("exp", "exponential-mechanism median"),
    _theil_sen("wide", "θ-widened exponential-mechanism median"),
    _theil_sen("smooth", "smooth-sensitivity median with Student-t noise"),
    Method(
        name="dp-gd",
        algorithm="DP gradient descent (Alabi et al. 2022 for one x; clipped GD otherwise)",
        features="any", delta="multi-x",
        guarantee="one x: ε-DP, ρ-zCDP or (ε, δ)-DP (variant); several x: (ε, δ)-DP via μ-GDP",
        relation="replace-one", takes_neighbouring=True, min_rows=2, always_intercept=False,
        pure=False, estimator="dpreg.linear_model:DPGradientDescent",
        cores=("dpreg.simple:gradient_descent", "dpreg.multivariate:dp_gradient_descent"),
        local_options=("variant", "tau", "steps", "rho"), harness=("simple", "multivariate"),
        privacy_notes=("gradient_descent.md", "dpgd_multivariate.md")),
    Method(
        name="adassp", algorithm="AdaSSP (Wang 2018)", features="any", delta="always",
        guarantee="(ε, δ)-DP via ρ-zCDP", relation="add-remove", takes_neighbouring=True,
        min_rows=2, always_intercept=False, pure=False,
        estimator="dpreg.linear_model:AdaSSP", cores=("dpreg.multivariate:adassp",),
        harness=("multivariate",), privacy_notes=("adassp.md",)),
    Method(
        name="boosted-adassp", algorithm="BoostedAdaSSP (Tang et al. 2023)", features="any",
        delta="always", guarantee="(ε, δ)-DP via μ-GDP", relation="add-remove",
        takes_neighbouring=True, min_rows=2, always_intercept=False, pure=False,
        estimator="dpreg.linear_model:BoostedAdaSSP",
        cores=("dpreg.multivariate:boosted_adassp",), harness=("multivariate",),
        privacy_notes=("boosted_adassp.md",)),
    Method(
        name="tukey-em", algorithm="TukeyEM (Amin et al. 2023)", features="any",
        delta="always", guarantee="(ε, δ)-DP", relation="replace-one",
        takes_neighbouring=False, min_rows=16, always_intercept=False, pure=False,
        estimator="dpreg.linear_model:TukeyEM", cores=("dpreg.multivariate:tukey_em",),
        harness=("multivariate",), privacy_notes=("tukeyem.md", "ptr.md")),
    Method(
        name="covariance-ols",
        algorithm="OLS on an Analyze-Gauss DP SSCP matrix (Bain et al. 2014)", features="any",
        delta="always", guarantee="(ε, δ)-DP", relation="add-remove",
        takes_neighbouring=True, min_rows=2, always_intercept=False, pure=False,
        estimator="dpreg.linear_model:CovarianceOLS", cores=("dpreg.covariance:release_sscp",),
        harness=("multivariate",), privacy_notes=("sscp_release.md",)),
    Method(
        name="auto", algorithm="private choice among the above (dpreg.auto)", features="any",
        delta="multi-x", guarantee="one x: ε-DP; several x: (ε, δ)-DP", relation="replace-one",
        takes_neighbouring=False, min_rows=2, always_intercept=False, pure=False,
        estimator="dpreg.auto:AutoDPRegression", cores=("dpreg.auto:fit_auto",),
        privacy_notes=("accounting.md",)),
)})


_PAIRS = ("its release is a DP median over pairs of rows (all pairs or k matchings), which "
          "needs every row at once, not sums over rows")
#: why a method cannot be released from one pass of sufficient statistics (a file streamed in
#: chunks or a Spark DataFrame): what it needs of the rows beyond sums -- the reason
#: :func:`dpreg.api.needs_memory_message` gives (every method without a statistics step for a
#: data source has one; tests/scale/test_sources.py checks it)
NEEDS_ROWS: Mapping[str, str] = MappingProxyType({
    "theil-sen-exp": _PAIRS,
    "theil-sen-wide": _PAIRS,
    "theil-sen-smooth": _PAIRS,
    "dp-gd": "each of its gradient steps is a pass over the rows at the current noisy "
             "estimate, so it needs the rows, not one set of sums",
    "boosted-adassp": "each of its boosting rounds is a pass over the rows at the current "
                      "estimate (residuals), so it needs the rows, not one set of sums",
    "tukey-em": "it fits models on disjoint random subsets of the rows and releases a "
                "Tukey-depth median of them, which needs the rows themselves",
    "auto": "it chooses privately among methods, some of which need every row",
})


def methods(*, selector: bool | None = None, features: str | None = None,
            delta: str | None = None, harness: str | None = None,
            local: bool | None = None, spark_native: bool | None = None) -> list[Method]:
    """The methods matching every given filter, in registry order (``selector=False``
    leaves out ``auto``)."""
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
        out.append(m)
    return out


def names(**filters: Any) -> tuple[str, ...]:
    """Names of :func:`methods` with the same filters."""
    return tuple(m.name for m in methods(**filters))


def suggest(name: Any, candidates: Any = None) -> str:
    """`` (did you mean 'x'?)`` for a near miss among ``candidates`` (default: all names),
    else ``""``.  Only the user's own string is compared; nothing else is shown."""
    if not isinstance(name, str):
        return ""
    pool = list(REGISTRY) if candidates is None else [str(c) for c in candidates]
    close = difflib.get_close_matches(name.strip().lower(), pool, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def get(name: Any, *, allowed: Any = None) -> Method:
    """The registry entry of ``name``; an :class:`InvalidInputError` listing the allowed names
    (all by default) with a "did you mean" suggestion otherwise."""
    pool = tuple(REGISTRY) if allowed is None else tuple(allowed)
    if isinstance(name, str) and name in pool and name in REGISTRY:
        return REGISTRY[name]
    raise UnknownNameError(f"method must be one of {list(pool)}; got {name!r}"
                           + suggest(name, pool))


def load(path: str) -> Any:
    """The object a dotted path ``"package.module:attribute"`` names (imported on demand)."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)
