"""Method objects: what every caller needs to know about one regression method, in one place.

A :class:`MethodSpec` describes one ``method=`` name completely: its identity and privacy facts
(guarantee, neighbouring relation, whether it needs δ), its options with their constraints
(declarative, in the spirit of scikit-learn's parameter validation), the budget one fit charges,
the interval it offers, what a plan can say about it, whether it has a one-pass statistics
step, the batched kernels the per-group backends may use -- and the fit itself.  The concrete
specs live in :mod:`dpreg.methods` (one module per method family); every caller (``regress``,
the CLI, ``fit_by_group``, ``plan``, ``auto``, the reproduction harness) asks a spec for a
capability instead of branching on a method name.

The types a release passes through are defined here too:

``ReleasePlan``
    frozen and PUBLIC: the validated options, the budget charged and its parts, the neighbouring
    relation -- everything a release is calibrated from, computed before any private value is
    read, so it can be shown, compared and planned with;
``Release``
    frozen: what the mechanisms returned (noisy statistics and estimates), ⊥ and its reason, and
    the privacy statement -- the only objects that carry private-data-derived values, all DP.

This module sits low in the layers (it imports only the privacy types and the validation
helpers) so that cores, inference and every caller above can use the types.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Literal

import numpy as np

from dpreg._validation import did_you_mean, fmt
from dpreg.exceptions import InvalidInputError, InvalidParameterError, UnknownNameError

__all__ = [
    "Constraint", "Real", "Integer", "Choice", "Flag", "Pair", "AnyOf", "NoneOr", "Anything",
    "Option", "IntervalSupport", "MethodSpec", "ReleasePlan", "Release", "SET_BY_CALLER",
    "GroupBatch", "GroupLines", "GroupLine", "AuditCase", "load",
]


# ---------------------------------------------------------------------------- constraints
class Constraint:
    """A declarative constraint on one option value: :meth:`accepts` says whether a value
    satisfies it, :meth:`convert` returns the normalised value (called only after
    :meth:`accepts`), :meth:`describe` the allowed values for error messages (in the wording
    of :mod:`dpreg._validation`: ``"n_iter must be an integer with 1 <= n_iter <= 1000000"``)."""

    text: str = "any value"

    def describe(self, name: str) -> str:
        return self.text

    def accepts(self, value: Any) -> bool:  # pragma: no cover - overridden
        return True

    def convert(self, value: Any) -> Any:
        return value


def _is_real(value: Any) -> bool:
    return (isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
            and not isinstance(value, str))


@dataclass(frozen=True)
class Real(Constraint):
    """A real number in ``[lo, hi]`` (``closed`` says which ends are included; ``None``: no
    bound on that side).  NaN is never accepted; ±inf only when ``allow_inf``."""

    lo: float | None = None
    hi: float | None = None
    closed: Literal["both", "left", "right", "neither"] = "both"
    allow_inf: bool = False

    @property
    def text(self) -> str:  # type: ignore[override]
        return self.describe("x")

    def describe(self, name: str) -> str:
        lo_op = "<=" if self.closed in ("both", "left") else "<"
        hi_op = "<=" if self.closed in ("both", "right") else "<"
        lo = "" if self.lo is None else f"{self.lo:g} {lo_op} "
        hi = (" < inf" if not self.allow_inf else " <= inf") if self.hi is None \
            else f" {hi_op} {self.hi:g}"
        return f"a real number with {lo}{name}{hi}"

    def accepts(self, value: Any) -> bool:
        if not _is_real(value):
            return False
        v = float(value)
        if math.isnan(v) or (math.isinf(v) and not self.allow_inf):
            return False
        if self.lo is not None:
            if v < self.lo or (v == self.lo and self.closed in ("right", "neither")):
                return False
        if self.hi is not None:
            if v > self.hi or (v == self.hi and self.closed in ("left", "neither")):
                return False
        return True

    def convert(self, value: Any) -> float:
        return float(value)


@dataclass(frozen=True)
class Integer(Constraint):
    """An integer in ``[lo, hi]`` (bool is not an integer here)."""

    lo: int | None = None
    hi: int | None = None

    @property
    def text(self) -> str:  # type: ignore[override]
        return self.describe("x")

    def describe(self, name: str) -> str:
        lo = "-inf" if self.lo is None else str(self.lo)
        hi = "inf" if self.hi is None else str(self.hi)
        return f"an integer with {lo} <= {name} <= {hi}"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            return False
        v = int(value)
        return (self.lo is None or v >= self.lo) and (self.hi is None or v <= self.hi)

    def convert(self, value: Any) -> int:
        return int(value)


@dataclass(frozen=True)
class Choice(Constraint):
    """One of a fixed set of strings."""

    values: tuple[str, ...]

    def __init__(self, *values: str) -> None:
        object.__setattr__(self, "values", tuple(values))

    @property
    def text(self) -> str:  # type: ignore[override]
        return f"one of {list(self.values)}"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.values


@dataclass(frozen=True)
class Flag(Constraint):
    """``True`` or ``False`` (numpy booleans included)."""

    text: str = "True or False"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, (bool, np.bool_))

    def convert(self, value: Any) -> bool:
        return bool(value)


@dataclass(frozen=True)
class Pair(Constraint):
    """A ``(lo, hi)`` pair of finite reals with lo < hi."""

    text: str = "a (lo, hi) pair of finite numbers with lo < hi"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
            return False
        if len(value) != 2 or not all(_is_real(v) for v in value):
            return False
        lo, hi = float(value[0]), float(value[1])
        return math.isfinite(lo) and math.isfinite(hi) and lo < hi

    def convert(self, value: Any) -> tuple[float, float]:
        return float(value[0]), float(value[1])


@dataclass(frozen=True)
class AnyOf(Constraint):
    """Any of several constraints (the first that accepts converts)."""

    options: tuple[Constraint, ...]

    def __init__(self, *options: Constraint) -> None:
        object.__setattr__(self, "options", tuple(options))

    @property
    def text(self) -> str:  # type: ignore[override]
        return " or ".join(c.text for c in self.options)

    def describe(self, name: str) -> str:
        return " or ".join(c.describe(name) for c in self.options)

    def accepts(self, value: Any) -> bool:
        return any(c.accepts(value) for c in self.options)

    def convert(self, value: Any) -> Any:
        for c in self.options:
            if c.accepts(value):
                return c.convert(value)
        raise AssertionError("convert called on a value no option accepts")  # pragma: no cover


@dataclass(frozen=True)
class _NoneValue(Constraint):
    text: str = "None"

    def accepts(self, value: Any) -> bool:
        return value is None


def NoneOr(constraint: Constraint) -> AnyOf:  # noqa: N802 (reads as a constraint type)
    """``None`` or a value ``constraint`` accepts."""
    return AnyOf(_NoneValue(), constraint)


@dataclass(frozen=True)
class Anything(Constraint):
    """Checked by the method itself (a value whose validation needs other inputs, e.g. a range
    that must lie inside the bounds); :attr:`text` says what is expected."""

    text: str = "any value (checked by the method)"

    def accepts(self, value: Any) -> bool:
        return True


# ---------------------------------------------------------------------------- options
@dataclass(frozen=True)
class Option:
    """One option (hyperparameter) of a method: its constraint, default and meaning.

    ``used_if``: a predicate ``(options, context)`` on the completed options and the call's
    context (``n_features``: the number of regressors; ``ci_alpha``: the interval asked for;
    a key is missing when not known yet) saying whether this option takes part in the fit
    (e.g. ``rho`` only with ``variant="zcdp"`` and one x).  An option given explicitly
    where it would not be used is an error, never silently dropped.
    ``when``: the words for that condition in the error message.
    """

    constraint: Constraint
    default: Any = None
    doc: str = ""
    used_if: Callable[[Mapping[str, Any], Mapping[str, Any]], bool] | None = None
    when: str = ""


@dataclass(frozen=True)
class IntervalSupport:
    """What interval a method's release supports (docs/uncertainty.md).

    ``offered``: one line on the interval (``"none"`` when there is none); ``missing``: why a
    release has no interval (shown in the summary's Uncertainty line and raised by
    ``conf_int``); ``fit_statistics``: why a release has no R²/σ̂² (``None`` when it has them);
    ``request``: how a caller asks for it -- ``"inference"`` (an option of the release that
    adds the statistics an interval needs, no extra budget), ``"ci_alpha"`` (an interval with
    its own share of ε, requested at fit time), ``"default"`` (always), or ``"none"``."""

    offered: str = "none"
    missing: str = ""
    fit_statistics: str | None = None
    request: Literal["inference", "ci_alpha", "default", "none"] = "none"
    #: what a per-group table's interval columns cover (``fit_by_group(..., ci_alpha=)``;
    #: ``None``: no per-group intervals) and the rows a group needs for them
    per_group: str | None = None
    per_group_min_rows: int = 0


#: arguments callers set themselves (a user option with one of these names is rejected)
SET_BY_CALLER = frozenset({
    "x", "y", "X", "epsilon", "delta", "bounds_X", "bounds_y", "x_bounds", "y_bounds",
    "fit_intercept", "random_state", "rng", "ledger", "x_names", "y_name", "self",
    "raise_on_failure"})


# ---------------------------------------------------------------------------- plan/release
def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class ReleasePlan:
    """Everything a release is calibrated from -- PUBLIC, computed before any private value is
    read (so a plan may be printed, compared or charged from).

    ``method``: the method name; ``options``: the validated options (defaults filled in);
    ``budget``: what the ledger is charged, in the definition the release is analysed in;
    ``parts``: the budget of each release step (they compose to at most ``budget``);
    ``relation``: the neighbouring relation; ``n``: the number of rows where it is public
    (replace-one), else ``None``; ``d``: the number of coefficients; ``sensitivities`` and
    ``noise``: per release step, where they do not depend on the data."""

    method: str
    options: Mapping[str, Any]
    budget: Any
    relation: Any
    parts: Mapping[str, Any] = field(default_factory=dict)
    n: int | None = None
    d: int | None = None
    sensitivities: Mapping[str, float] = field(default_factory=dict)
    noise: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("options", "parts", "sensitivities", "noise"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))


@dataclass(frozen=True)
class Release:
    """What one release put out: ``values`` (the noisy statistics and estimates, all DP),
    ``failed``/``reason`` (⊥, decided from released quantities only) and ``privacy`` (the
    :class:`~dpreg.privacy.PrivacyStatement`), with the public ``plan`` it was made from."""

    plan: ReleasePlan
    values: Mapping[str, Any]
    privacy: Any
    failed: bool = False
    reason: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", _frozen(self.values))


@dataclass(frozen=True)
class AuditCase:
    """One audit target of a method, declared by its spec (:meth:`MethodSpec.audit_cases`)
    and built by :mod:`dpreg.audit.registry` (``make audit``, ``dpreg audit NAME``): releases
    drawn by one of the auditor's samplers on one of its sets of worst-case neighbouring
    pairs, tested against the claim.

    ``claim``: the budget the releases must satisfy (``None``: what the spec says one fit
    charges, :meth:`MethodSpec.budget`, at the sampler's ``epsilon``/``delta``).
    ``sampler``: a name of ``dpreg.audit.registry.SAMPLERS`` -- ``"fit"`` draws one
    :func:`dpreg.api.fit_arrays` release per sample (what ``regress``, the CLI and a
    per-group table release), ``"replicates"`` the method's vectorised replicates, the others
    one core or estimator call with the keywords ``params``.  ``pairs``: a name of
    ``dpreg.audit.registry.PAIRS`` (``"simple"``: one x, n = 20; ``"design"``: two features,
    n = 20, under the spec's ``relation``).  ``kind``: ``"core"`` or ``"estimator"``."""

    name: str
    description: str
    claim: Any = None
    sampler: str = "fit"
    params: Mapping[str, Any] = field(default_factory=dict)
    pairs: str = "simple"
    kind: Literal["core", "estimator"] = "core"
    output_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", _frozen(self.params))


# ---------------------------------------------------------------------------- the spec
class MethodSpec:
    """One regression method (one ``method=`` name).  Subclasses set the class attributes and
    override the capabilities they have; :mod:`dpreg.methods` holds the instances.

    Identity and privacy facts
    --------------------------
    ``name``, ``algorithm`` (one line with the paper), ``features`` (``"one"``: y on exactly
    one x; ``"any"``), ``delta`` (``"always"``, ``"never"``, ``"multi-x"``: needs δ with
    several x), ``guarantee`` (in words), ``relation`` (default neighbouring relation),
    ``takes_neighbouring`` (the fit takes ``neighbouring=``), ``min_rows`` (public n needed),
    ``always_intercept``, ``pure`` (every release is pure ε-DP), ``privacy_notes``,
    ``order`` (position in listings).

    Capabilities
    ------------
    ``options`` (:class:`Option` per name), ``interval`` (:class:`IntervalSupport`),
    ``needs_rows`` (why the method has no one-pass statistics step for a file or Spark source;
    ``None`` when it has one), ``reads_columns`` (a pandas DataFrame named by a plain formula
    is fitted from its columns in place: the estimator's ``_fit_source`` on an in-memory
    :class:`~dpreg._source.ArraySource` of them, which computes the same statistics as its fit
    on arrays -- bit for bit -- without a copy of the columns into a design matrix),
    ``needs_bounds`` (public bounds of every column are required),
    ``spark_native`` (its per-group statistics are one native Spark aggregation),
    ``harness`` (the reproduction harnesses that run it), ``estimator`` (the scikit-learn
    class, dotted path; optional: without one, :meth:`fit` runs :meth:`fit_by_pipeline`, the
    method's own plan -> statistics -> charge -> release -> results), ``core_function`` (the
    public function of a method without an estimator, if it has one) and the methods below --
    :meth:`audit_cases` among them (the auditor's targets of the method).
    """

    name: ClassVar[str]
    algorithm: ClassVar[str]
    features: ClassVar[Literal["one", "any"]] = "any"
    delta: ClassVar[Literal["always", "never", "multi-x"]] = "never"
    guarantee: ClassVar[str] = ""
    relation: ClassVar[Literal["replace-one", "add-remove"]] = "replace-one"
    takes_neighbouring: ClassVar[bool] = False
    min_rows: ClassVar[int] = 2
    always_intercept: ClassVar[bool] = False
    pure: ClassVar[bool] = False
    privacy_notes: ClassVar[tuple[str, ...]] = ()
    order: ClassVar[int] = 100
    options: ClassVar[Mapping[str, Option]] = MappingProxyType({})
    interval: ClassVar[IntervalSupport] = IntervalSupport()
    needs_rows: ClassVar[str | None] = None
    reads_columns: ClassVar[bool] = False
    needs_bounds: ClassVar[bool] = True
    spark_native: ClassVar[bool] = False
    harness: ClassVar[tuple[str, ...]] = ()
    estimator: ClassVar[str | None] = None
    #: a method without an estimator: its public core function (dotted path), whose keyword
    #: parameters besides the public inputs are the method's options; ``None`` when the spec
    #: is the method's only code (its :meth:`fit_by_pipeline` fits it)
    core_function: ClassVar[str | None] = None
    #: options fixed by this method name (e.g. ``median="exp"`` for ``theil-sen-exp``)
    estimator_options: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    is_selector: ClassVar[bool] = False
    #: what a plan from declared moments alone cannot capture for this method (said in the
    #: plan's assumptions when its design is moments only; ``None``: nothing to say)
    moment_plan_caveat: ClassVar[str | None] = None
    #: what the release estimates, in words (the estimand): shown in every summary
    #: (``Estimates`` row) and JSON (``extra["target"]``) of a fit through the dispatcher
    target: ClassVar[str] = ""
    #: the option defaults of a per-group table (``fit_by_group``, ``dpreg fit-groups``) where
    #: they differ from ``options``' (the default of every other entry point: ``regress``,
    #: ``fit_arrays``, the CLI's ``fit``, ``plan``, the estimator), with the reason in
    #: ``group_defaults_reason``; a table given the option explicitly honours it
    group_defaults: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    group_defaults_reason: ClassVar[str] = ""
    #: deprecated option spellings kept for one release (old -> new): an option given by its
    #: old name warns (``DeprecationWarning`` naming the new one); both at once are an error
    renamed_options: ClassVar[Mapping[str, str]] = MappingProxyType({})

    # -- derived facts ---------------------------------------------------------------------
    @property
    def one_x_only(self) -> bool:
        return self.features == "one"

    @property
    def needs_delta(self) -> bool:
        """δ is required whatever the data (``delta == "always"``)."""
        return self.delta == "always"

    def __repr__(self) -> str:
        return f"<method {self.name!r}>"

    def check_rows(self, n: int, options: Mapping[str, Any]) -> None:
        """Refuse a public number of rows n the method cannot fit with these options (beyond
        ``min_rows``; e.g. a path whose cost grows as n²) with an
        :class:`~dpreg.exceptions.InvalidInputError` naming the limit and the alternatives.
        Per-group tables check their largest group before anything is charged.  Default:
        no upper limit."""

    # -- options ---------------------------------------------------------------------------
    def check_options(self, options: Mapping[str, Any], *,
                      context: Mapping[str, Any] | None = None, fill: bool = False
                      ) -> dict[str, Any]:
        """Validate option names and values (before anything is read, charged or drawn).

        Unknown names raise :class:`UnknownNameError` (with a did-you-mean); a value outside
        its constraint raises :class:`InvalidParameterError` naming the option, the allowed
        values and what was received; an option given where the other settings (and the
        ``context``: ``n_features``, the number of regressors, and ``ci_alpha``, the interval
        asked for, where known) do not use it is an error too -- never silently dropped.
        Returns the given options converted (with ``fill``, the defaults of the others
        added).  A deprecated spelling (``renamed_options``) warns, naming the new one, and is
        returned under the new name; both spellings at once are an error naming both."""
        options = self._renamed(options)
        allowed = sorted(self.options)
        unknown = sorted(set(options) - set(self.options), key=str)
        if unknown:
            hint = "".join(did_you_mean(str(u), allowed) for u in unknown)
            raise UnknownNameError(
                f"unknown option(s) for method {self.name!r}: {', '.join(map(str, unknown))}"
                f"{hint}; expected one of {', '.join(allowed) if allowed else '(none)'}")
        out: dict[str, Any] = {}
        for key, value in options.items():
            spec = self.options[key]
            if not spec.constraint.accepts(value):
                hint = did_you_mean(str(value), spec.constraint.values) \
                    if isinstance(spec.constraint, Choice) else ""
                raise InvalidParameterError(
                    f"{key} must be {spec.constraint.describe(key)}; got {fmt(value)}{hint}")
            out[key] = spec.constraint.convert(value)
        full: dict[str, Any] = {k: o.default for k, o in self.options.items()}
        full.update(out)
        for key in out:
            used_if = self.options[key].used_if
            if used_if is not None and not used_if(full, dict(context or {})):
                raise InvalidParameterError(
                    f"option {key!r} is not used by method {self.name!r} "
                    f"{self.options[key].when or 'with these settings'}; remove it")
        return full if fill else out

    def _renamed(self, options: Mapping[str, Any]) -> Mapping[str, Any]:
        """``options`` with each deprecated spelling resolved to its new name
        (:func:`dpreg._validation.resolve_renamed`: warns, or refuses both spellings)."""
        if not any(old in options for old in self.renamed_options):
            return options
        from dpreg._validation import resolve_renamed

        out = dict(options)
        for old, new in self.renamed_options.items():
            if old in out:
                out[new] = resolve_renamed(out.pop(old), out.get(new), old=old, new=new,
                                           where=f"method {self.name!r}",
                                           new_given=out.get(new) is not None, stacklevel=4)
        return out

    def uses(self, option: str, options: Mapping[str, Any],
             context: Mapping[str, Any] | None = None) -> bool:
        """Whether ``option`` takes part in a fit with these (other) options and context."""
        spec = self.options.get(option)
        if spec is None:
            return False
        if spec.used_if is None:
            return True
        full = {k: o.default for k, o in self.options.items()}
        full.update(options)
        return bool(spec.used_if(full, dict(context or {})))

    # -- budget ----------------------------------------------------------------------------
    def budget(self, *, epsilon: float, delta: float | None, options: Mapping[str, Any],
               n_features: int = 1) -> Any:
        """The budget one fit charges to a ledger, in the definition it is charged (PureDP,
        ApproxDP, ZCDP or GDP), from public inputs only.  The default: ``PureDP(ε)`` for a
        pure method, ``ApproxDP(ε, δ)`` otherwise."""
        from dpreg._validation import check_delta, check_epsilon
        from dpreg.privacy import ApproxDP, PureDP

        eps = check_epsilon(epsilon)
        if self.pure:
            return PureDP(eps)
        if delta is None:
            raise InvalidInputError(f"delta is required for method {self.name!r}")
        return ApproxDP(eps, check_delta(delta, allow_zero=False))

    # -- the release pipeline ----------------------------------------------------------------
    # plan (public: validation, budget split, sensitivities) -> statistics (deterministic, on
    # the clipped data) -> release (the only step that reads private values and draws noise)
    # -> results (post-processing).  Methods that implement these four let every caller --
    # the single fit, per-group backends, replicates -- run the same public steps.
    def plan(self, *, epsilon: float, delta: float | None, n: int | None,
             x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
             fit_intercept: bool, options: Mapping[str, Any]) -> ReleasePlan:
        """The public plan of one release (:class:`ReleasePlan`)."""
        raise InvalidInputError(f"method {self.name!r} has no public release plan")

    def statistics(self, X: np.ndarray, y: np.ndarray, plan: ReleasePlan) -> Any:
        """The deterministic statistics step on the clipped data (no noise)."""
        raise InvalidInputError(f"method {self.name!r} has no statistics step")

    def release(self, stats: Any, plan: ReleasePlan, rng: Any, *, seeded: bool = False
                ) -> Release:
        """The release from the statistics: the only step that draws noise."""
        raise InvalidInputError(f"method {self.name!r} has no release step")

    def results(self, release: Release, *, x_names: list[str], y_name: str) -> Any:
        """The :class:`~dpreg.inference.RegressionResults` of a release (post-processing
        only: no private value is read, no noise drawn) -- the last step of the pipeline
        :meth:`fit_by_pipeline` runs for a method without an estimator."""
        raise InvalidInputError(f"method {self.name!r} has no results step")

    # -- fitting ---------------------------------------------------------------------------
    def fit(self, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float | None,
            x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
            x_names: list[str], y_name: str, fit_intercept: bool, ledger: Any,
            random_state: Any, options: dict[str, Any], ci_alpha: float | None = None) -> Any:
        """One fit on validated arrays; ⊥ is a result with ``failed=True``.  The default runs
        the method's estimator (``ci_alpha`` asks for its interval explicitly: a refusal is
        raised before anything is charged) or, for a method without one (``estimator =
        None``), its release pipeline (:meth:`fit_by_pipeline`)."""
        import pandas as pd

        from dpreg.exceptions import MechanismFailure

        if self.estimator is None:
            return self.fit_by_pipeline(X, y, epsilon=epsilon, delta=delta, x_bounds=x_bounds,
                                        y_bounds=y_bounds, x_names=x_names, y_name=y_name,
                                        fit_intercept=fit_intercept, ledger=ledger,
                                        random_state=random_state, options=options,
                                        ci_alpha=ci_alpha)
        est = self.make_estimator(epsilon=epsilon, delta=delta, x_bounds=x_bounds,
                                  y_bounds=y_bounds, fit_intercept=fit_intercept, ledger=ledger,
                                  random_state=random_state, options=options)
        if ci_alpha is not None and hasattr(type(est), "_interval_required"):
            est._interval_required = True
        try:  # the frame wraps X (pandas copies an array by default: one copy of the data)
            est.fit(pd.DataFrame(X, columns=x_names, copy=False), y)
        except MechanismFailure:
            pass  # ⊥ is a typed result here: results_ holds failed=True and the reason
        return est.results_

    def fit_by_pipeline(self, X: np.ndarray, y: np.ndarray, *, epsilon: float,
                        delta: float | None, x_bounds: list[tuple[float, float]],
                        y_bounds: tuple[float, float], x_names: list[str], y_name: str,
                        fit_intercept: bool, ledger: Any, random_state: Any,
                        options: dict[str, Any], ci_alpha: float | None = None) -> Any:
        """One fit through the method's own steps, with no estimator class: :meth:`plan`
        (public: every check, the budget and its split; n only where it is public, under
        replace-one) -> :meth:`statistics` (deterministic, on the clipped data) -> ONE ledger
        charge of ``plan.budget`` under ``plan.relation`` (after every check, before any
        noise) -> :meth:`release` (the only step that draws noise) -> :meth:`results`
        (post-processing).

        Guarantee: the release step's, for ``plan.budget`` under ``plan.relation`` (the
        statistics step is deterministic and the results step post-processing, so the fit
        adds nothing to it); the method's spec module states it with its sensitivity and
        paper, and its privacy note is pinned to that module."""
        import warnings

        from dpreg._random import check_rng, is_seeded
        from dpreg.exceptions import PrivacyLeakWarning
        from dpreg.privacy.ledger import charge

        if ci_alpha is not None and self.interval.request == "none":
            raise InvalidInputError(f"method {self.name!r} offers no interval: "
                                    f"{self.interval.missing or 'its release carries none'}")
        n = int(X.shape[0]) if self.relation == "replace-one" else None
        plan = self.plan(epsilon=epsilon, delta=delta, n=n, x_bounds=x_bounds,
                         y_bounds=y_bounds, fit_intercept=fit_intercept, options=options)
        rng = check_rng(random_state, "random_state")
        stats = self.statistics(X, y, plan)
        charge(ledger, plan.budget, f"dpreg method {self.name}", plan.relation)
        if plan.budget.is_infinite:
            warnings.warn(f"{self.name}: infinite privacy budget -- returning the exact "
                          "non-private estimate", PrivacyLeakWarning, stacklevel=3)
        release = self.release(stats, plan, rng, seeded=is_seeded(random_state))
        return self.results(release, x_names=x_names, y_name=y_name)

    def fit_source(self, source: Any, *, x_cols: list[str], y_col: str, epsilon: float,
                   delta: float | None, x_bounds: list[tuple[float, float]],
                   y_bounds: tuple[float, float], fit_intercept: bool, ledger: Any,
                   random_state: Any, options: dict[str, Any],
                   ci_alpha: float | None = None) -> Any:
        """One fit from a data source read in one pass (a file or a Spark DataFrame); only
        methods with ``needs_rows is None`` -- or, for an in-memory source (the columns of a
        DataFrame), methods that ``reads_columns`` (they may pass over the rows many times)."""
        from dpreg.exceptions import MechanismFailure

        in_memory = self.reads_columns and getattr(source, "kind", None) == "memory"
        if self.needs_rows is not None and not in_memory:
            raise InvalidInputError(f"method {self.name!r} cannot fit from a file or a Spark "
                                    f"DataFrame: {self.needs_rows}")
        est = self.make_estimator(epsilon=epsilon, delta=delta, x_bounds=x_bounds,
                                  y_bounds=y_bounds, fit_intercept=fit_intercept, ledger=ledger,
                                  random_state=random_state, options=options)
        if ci_alpha is not None and hasattr(type(est), "_interval_required"):
            est._interval_required = True
        try:
            est._fit_source(source, x_cols, y_col)
        except MechanismFailure:
            pass
        return est.results_

    def estimator_class(self) -> Any:
        """The scikit-learn estimator class (imported on demand)."""
        if self.estimator is None:
            raise InvalidInputError(f"method {self.name!r} has no estimator class")
        return load(self.estimator)

    def make_estimator(self, *, epsilon: float, delta: float | None,
                       x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
                       fit_intercept: bool, ledger: Any, random_state: Any,
                       options: Mapping[str, Any]) -> Any:
        """The method's estimator with the public inputs (δ where the method takes one)."""
        kwargs: dict[str, Any] = dict(epsilon=epsilon, bounds_X=x_bounds, bounds_y=y_bounds,
                                      fit_intercept=fit_intercept, random_state=random_state,
                                      ledger=ledger, **self.estimator_options)
        if self.delta != "never":
            kwargs["delta"] = delta
        return self.estimator_class()(**kwargs, **dict(options))

    # -- planning --------------------------------------------------------------------------
    def expected_cov(self, *, epsilon: float, delta: float | None, n: int,
                     x_bounds: list[tuple[float, float]], y_bounds: tuple[float, float],
                     fit_intercept: bool, options: Mapping[str, Any]) -> Any:
        """The covariance of the coefficients' privacy noise on the plan's public design in
        closed form, with P(⊥) and a line saying how: ``(cov, p_fail, how)``; ``None`` when
        the method has no closed form (the plan then simulates the release)."""
        return None

    def expected_error(self, *, epsilon: float, delta: float | None, design: Any,
                       options: Mapping[str, Any], seed: int, detail: bool = True) -> Any:
        """The expected error of one release on the plan's public design (a
        :class:`dpreg.methods._planning.PlanDesign`) from the design's sufficient statistics --
        in closed form or by a seeded Monte Carlo of the privacy noise alone -- as an
        :class:`~dpreg.methods._planning.ExpectedError`; ``None`` when the method has no
        such plan (:func:`dpreg.plan` then runs the release on synthetic rows of the
        design).  ``detail=False``: the noise alone is needed (a search over ε), so costly
        extras such as the interval's refusal probability may be skipped."""
        return None

    def failure_probability(self, *, epsilon: float, delta: float | None, n: int, d: int,
                            options: Mapping[str, Any]) -> float | None:
        """P(⊥) from public inputs in closed form, or ``None`` (the plan's simulation
        counts the failed runs instead)."""
        return None

    def planned_interval(self, *, epsilon: float, n: int, x_bounds: list[tuple[float, float]],
                         options: Mapping[str, Any], design: Any = None) -> str | None:
        """What a plan says about the interval a fit with these options would give (``None``:
        nothing to say); ``design`` (a public :class:`~dpreg.methods._planning.PlanDesign`,
        optional) is the plan's design where the answer depends on the spread of x."""
        return None

    def max_epsilon(self, *, delta: float | None, options: Mapping[str, Any]) -> float:
        """The largest ε this method can be calibrated for with these options (``inf``)."""
        return math.inf

    def group_interval_text(self, *, level: str, epsilon: float) -> str:
        """How a per-group table's intervals at ``level`` are paid for (its privacy texts)."""
        return ""

    def tight_intervals(self, *, epsilon: float, sizes: Any, options: Mapping[str, Any]
                        ) -> np.ndarray | None:
        """Per public group size, whether the group's interval is the conservative fallback
        of the method's own rule (``None``: the method has no such fallback)."""
        return None

    # -- audit -------------------------------------------------------------------------------
    def audit_cases(self) -> tuple[AuditCase, ...]:
        """The audit targets of this method (:class:`AuditCase`); :mod:`dpreg.audit.registry`
        builds its ``TARGETS`` from every spec's.  The default: the method's fit as
        ``regress`` runs it (``sampler="fit"``), at ε = 2 with one x on the one-x pairs, or
        at ε = 1 (δ = 1e-6 where it takes δ) on two-feature designs, tested against the
        budget it charges."""
        out: tuple[str, ...]
        if self.features == "one":
            eps, dlt, pairs, out = 2.0, None, "simple", ("intercept", "slope")
        else:
            eps, dlt, pairs = 1.0, (None if self.delta == "never" else 1e-6), "design"
            out = ("intercept", "x1", "x2")
        what = f"ε = {eps:g}" + ("" if dlt is None else f", δ = {dlt:g}")
        return (AuditCase(self.name, f"{self.algorithm}: its fit (regress), {what}, n = 20",
                          sampler="fit", params={"epsilon": eps, "delta": dlt, "features": pairs},
                          pairs=pairs, output_names=out),)

    # -- reproductions ------------------------------------------------------------------------
    #: options the papers' own releases use, which the reproduction harness sets unless its
    #: spec file says otherwise (e.g. AdaSSP without the interval's yᵀy)
    paper_options: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    #: how the one-x harness replicates the method: ``"replicates"`` (:meth:`replicates`),
    #: ``"gradient"`` (the DP-GD replicate engine, every budget variant) or ``"median"`` (a
    #: DP median on pair multisets shared between the Theil-Sen variants)
    harness_engine: ClassVar[Literal["replicates", "gradient", "median"] | None] = None

    def paper_model_count(self, requested: Any, n: int, d: int, *, epsilon: float,
                          delta: float) -> Any:
        """The number of subsample models of a reproduction (methods with an ``n_models``
        option); ``None`` when too few fit the design."""
        raise InvalidInputError(f"method {self.name!r} fits no subsample models")

    def fit_unit_ball(self, X: np.ndarray, y: np.ndarray, *, epsilon: float, delta: float,
                      rng: Any, params: Mapping[str, Any]) -> Any:
        """The core on a design already in the unit ball (Tang et al.'s protocol: raw rows
        clipped to norm 1, labels and residuals bounded by 1, no intercept)."""
        raise InvalidInputError(f"method {self.name!r} has no meaning under the unit-ball "
                                "protocol")

    # -- evaluation ------------------------------------------------------------------------
    def replicates(self, x: np.ndarray, y: np.ndarray, *, epsilon: float,
                   x_bounds: tuple[float, float], y_bounds: tuple[float, float], trials: int,
                   x_eval: tuple[float, float], rng: Any, options: Mapping[str, Any]
                   ) -> np.ndarray:
        """Predictions at the two ``x_eval`` points from ``trials`` independent releases on
        one data set (evaluation only, nothing charged: :func:`dpreg.replicates.
        replicate_predictions`); shape (trials, 2), NaN rows where a replicate was ⊥."""
        raise InvalidInputError(f"method {self.name!r} has no vectorised replicates")

    #: whether :meth:`replicates_many` runs the seeded data sets together (one batched
    #: mechanism call per call of a data set's own release, row i taking data set i's keys)
    batched_replicates: ClassVar[bool] = False

    def replicates_many(self, data: Sequence[tuple[np.ndarray, np.ndarray]], *,
                        epsilon: float, x_bounds: tuple[float, float],
                        y_bounds: tuple[float, float], trials: int,
                        x_eval: tuple[float, float], rngs: Sequence[Any],
                        options: Mapping[str, Any]) -> list[np.ndarray]:
        """:meth:`replicates` of many data sets, data set i with generator ``rngs[i]``: the
        same arrays, bit for bit, as ``[self.replicates(*data[i], ..., rng=rngs[i]) ...]``
        (evaluation only, nothing charged: :func:`dpreg.replicates.
        replicate_predictions_many`).  With :attr:`batched_replicates`, the data sets whose
        generator is seeded (neither secure nor a simulation generator) at a finite ε run
        together through :meth:`replicates_batch`; the others (and every data set of the
        other methods) run one at a time."""
        from dpreg._random import is_secure, is_simulation

        out: list[np.ndarray | None] = [None] * len(data)
        if self.batched_replicates and math.isfinite(epsilon):
            batch = [i for i, g in enumerate(rngs) if not is_secure(g) and not is_simulation(g)]
            if batch:
                got = self.replicates_batch(
                    [data[i] for i in batch], epsilon=epsilon, x_bounds=x_bounds,
                    y_bounds=y_bounds, trials=trials, x_eval=x_eval,
                    rngs=[rngs[i] for i in batch], options=options)
                for i, reps in zip(batch, got):
                    out[i] = reps
        for i, (x, y) in enumerate(data):
            if out[i] is None:
                out[i] = self.replicates(x, y, epsilon=epsilon, x_bounds=x_bounds,
                                         y_bounds=y_bounds, trials=trials, x_eval=x_eval,
                                         rng=rngs[i], options=options)
        return [o for o in out if o is not None]

    def replicates_batch(self, data: Sequence[tuple[np.ndarray, np.ndarray]], *,
                         epsilon: float, x_bounds: tuple[float, float],
                         y_bounds: tuple[float, float], trials: int,
                         x_eval: tuple[float, float], rngs: Sequence[np.random.Generator],
                         options: Mapping[str, Any]) -> list[np.ndarray]:
        """The batched kernel of :meth:`replicates_many` (``batched_replicates`` methods;
        seeded generators, finite ε): data set i's mechanism calls are row i of batched
        calls through a :class:`~dpreg.mechanisms.batch.RowRandomness` of ``rngs``."""
        raise InvalidInputError(f"method {self.name!r} has no batched replicates")

    # -- per-group fits --------------------------------------------------------------------
    #: options the LocalBackend of ``fit_by_group`` runs itself (``None``: per-group fits of
    #: this method run the reference loop, one :meth:`fit` per group)
    local_options: ClassVar[tuple[str, ...] | None] = None
    #: how the LocalBackend runs it: ``"vector"`` (:meth:`release_groups` on all groups at
    #: once) or ``"each"`` (:meth:`group_release` per group, on threads or processes)
    local_kind: ClassVar[Literal["vector", "each"] | None] = None

    def release_groups(self, batch: GroupBatch) -> GroupLines:
        """The release of every active group of ``batch`` at once (``local_kind="vector"``):
        the method's statistics by segment operations, then its one release function on the
        batch, each group's noise from its own row of randomness."""
        raise InvalidInputError(f"method {self.name!r} has no batched per-group release")

    def release_line_statistics(self, stats: Any, *, epsilon: float,
                                x_bounds: tuple[float, float], y_bounds: tuple[float, float],
                                rng: Any) -> GroupLines:
        """The release of many groups from their clipped line statistics computed elsewhere
        (``spark_native`` methods: one native Spark aggregation)."""
        raise InvalidInputError(f"method {self.name!r} has no release from line statistics")

    def table_plan(self, *, epsilon: float, delta: float | None,
                   x_bounds: tuple[float, float], y_bounds: tuple[float, float],
                   options: Mapping[str, Any]) -> ReleasePlan | None:
        """The public plan every group of a per-group table (``fit_by_group``: y on one x,
        with an intercept) is released from, built ONCE per table from the public inputs alone
        -- ε, δ, the bounds and the table's options, never a group's rows.  A group's n (public
        under the table's replace-one relation) is added by :meth:`release_group_line`, exactly
        where the single fit adds it.  ``None`` (the default): the method has no such plan, and
        every group is fitted by :func:`dpreg.api.fit_arrays`."""
        return None

    def release_group_line(self, plan: ReleasePlan, x: np.ndarray, y: np.ndarray, rng: Any
                           ) -> GroupLine:
        """One group's line released from the table's :meth:`table_plan` with the group's own
        generator: the statistics step on the group's rows, then the method's one release
        function -- the same draws, bit for bit, as :func:`dpreg.api.fit_arrays` on the
        group with that generator.  Charges nothing (the table is charged once)."""
        raise InvalidInputError(f"method {self.name!r} has no per-table release plan")

    def group_release(self, *, epsilon: float, x_bounds: tuple[float, float],
                      y_bounds: tuple[float, float], options: Mapping[str, Any],
                      validated: bool, delta: float | None = None
                      ) -> Callable[[np.ndarray, np.ndarray, Any], Any]:
        """One group's release as a function ``(x, y, generator) -> result`` with ``slope``,
        ``intercept``, ``predictions``, ``failed`` and ``reason`` (``local_kind="each"``).
        ``validated=False``: the full core (validates the options on the first group);
        ``True``: the lean release of the same draws for the others."""
        raise InvalidInputError(f"method {self.name!r} has no per-group release")


# ---------------------------------------------------------------------------- loading
def load(path: str) -> Any:
    """Import ``"package.module:attribute"``."""
    import importlib

    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


# ---------------------------------------------------------------------------- group batches
@dataclass(frozen=True)
class GroupBatch:
    """The rows of many disjoint groups, for a method's batched per-group release
    (``fit_by_group``'s LocalBackend).

    ``x``, ``y``: the rows, contiguous per segment; ``starts``: segment boundaries (S + 1,
    tiling x and y); ``active``: the positions (ascending) of the segments to release -- the
    other segments are groups with too few rows, whose statistics may be computed but are
    never released; ``randomness(positions)``: the per-row randomness
    (:class:`~dpreg.mechanisms.batch.RowRandomness`) of those active groups, one row each, in
    order; ``epsilon``, ``delta``, ``x_bounds``, ``y_bounds``, ``options``: the public inputs
    of every group's release; ``workers``: threads the statistics steps may use (the
    releases do not depend on it)."""

    x: np.ndarray
    y: np.ndarray
    starts: np.ndarray
    active: np.ndarray
    randomness: Callable[[np.ndarray], Any]
    epsilon: float
    delta: float | None
    x_bounds: tuple[float, float]
    y_bounds: tuple[float, float]
    options: Mapping[str, Any] = field(default_factory=dict)
    workers: int = 1

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.starts)

    def active_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """x, y and segment starts restricted to the active segments (no copy when every row
        belongs to one)."""
        counts = self.counts
        keep = np.zeros(counts.size, dtype=bool)
        keep[self.active] = True
        starts = np.concatenate(([0], np.cumsum(counts[self.active]))).astype(np.int64)
        if np.all(keep | (counts == 0)):
            return self.x, self.y, starts
        rows = np.repeat(keep, counts)
        return self.x[rows], self.y[rows], starts


@dataclass(frozen=True)
class GroupLines:
    """Released lines of the active groups of a :class:`GroupBatch` (one entry per active
    group, in order): slope, intercept, predictions at the public x points, whether the group
    released a line (``ok``; else ⊥ with its reason)."""

    slope: np.ndarray
    intercept: np.ndarray
    predictions: Mapping[float, np.ndarray]
    ok: np.ndarray
    reasons: Sequence[str]


@dataclass(frozen=True)
class GroupLine:
    """One group's released line (:meth:`MethodSpec.release_group_line`), in original units:
    ``intercept``, ``slope`` (NaN when ⊥), ``failed`` and its ``reason``, and the release's
    privacy statement."""

    intercept: float
    slope: float
    failed: bool
    reason: str
    privacy: Any
