"""What every output says about privacy, and the warnings for weak seeds and large δ.

* :data:`NOT_PRIVATE_NOTICE` -- carried by every output of an ``epsilon=inf`` run (the exact,
  non-private reference computation that the API keeps for comparisons), and of a run whose
  budget is above the cap (:data:`~dpreg.privacy.EPSILON_MAX`, ``RHO_MAX``, ``MU_MAX``), which
  is treated as ``inf``.
* :data:`SEED_NOTICE` -- carried by every output of a seeded run: a seeded release is only as
  private as its seed is secret.  Anyone who knows the seed (or can guess it: a small integer
  is found by brute force in well under a second) regenerates the noise and subtracts it.  The
  guarantee therefore needs a *secret* seed with at least :data:`SEED_ENTROPY_BITS` bits of
  entropy, e.g. ``python -c "import secrets; print(secrets.randbits(128))"``; without a seed
  dpreg runs in secure mode (fresh OS entropy for every release).
* :func:`weak_seed` flags seeds that certainly cannot carry 128 bits of entropy (integers below
  :data:`WEAK_SEED_BELOW` = 2**96, SeedSequences whose entropy is that small, legacy
  ``RandomState`` objects); :func:`warn_weak_seed` turns that into a
  :class:`~dpreg.exceptions.WeakSeedWarning`.  Why 2**96 and not 2**128: a seed's entropy cannot
  be read off its value; any value below 2**96 came from at most 96 bits, while a proper
  ``secrets.randbits(128)`` seed falls below 2**96 only with probability 2**-32, so the
  warning catches the usual ``0``, ``42``, ``1234`` and dates/timestamps without flagging good
  seeds.  A :class:`numpy.random.Generator` cannot be judged and is not warned about (its
  outputs still carry :data:`SEED_NOTICE`).
* :func:`large_delta_message` / :func:`warn_large_delta` -- δ is the probability with which the
  guarantee may fail outright (e.g. a record published verbatim), so it must be much smaller
  than 1/n; δ >= :data:`LARGE_DELTA` (1e-3) draws a :class:`~dpreg.exceptions.LargeDeltaWarning`,
  and so does δ >= 1/n where n is public (replace-one results).

The warnings are emitted once per public call (:func:`public_call`): ``regress``, every
estimator's ``fit``, ``release_sscp`` and ``fit_by_group`` open a scope; the public calls they
make internally (``regress`` → ``AdaSSP.fit``, per-group fits, ...) do not warn again.  The
same decorators say what the call releases (:func:`dpreg.privacy.ledger.release_context`: the
requested budget, method, formula or columns, recorded by every ledger charge inside) and, for
the outermost call only, charge the session's default ledger
(:func:`dpreg.privacy.ledger.set_default_ledger`) when no ledger is passed.
"""

from __future__ import annotations

import contextvars
import functools
import math
import numbers
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from dpreg._validation import EPSILON_MAX
from dpreg.exceptions import LargeDeltaWarning, WeakSeedWarning

__all__ = [
    "NOT_PRIVATE_NOTICE",
    "INFINITE_BUDGET",
    "SEED_NOTICE",
    "SEED_ENTROPY_BITS",
    "WEAK_SEED_BITS",
    "WEAK_SEED_BELOW",
    "LARGE_DELTA",
    "GOOD_SEED_COMMAND",
    "SECURE_DESCRIPTION",
    "SEEDED_DESCRIPTION",
    "seed_entropy_bound",
    "user_stacklevel",
    "weak_seed",
    "weak_seed_message",
    "warn_weak_seed",
    "large_delta_message",
    "warn_large_delta",
    "public_call",
    "public_function",
    "public_entry",
]

#: why a budget is infinite, in the words of every NOT PRIVATE message
INFINITE_BUDGET = f"epsilon = inf (or above the cap {EPSILON_MAX:g}, treated as inf)"
#: the notice every output of an infinite-budget run carries
NOT_PRIVATE_NOTICE = (f"NOT PRIVATE: {INFINITE_BUDGET}, the exact non-private result (no noise "
                      "was added); a reference for comparisons, never a release")
#: bits of entropy a seed needs for a seeded release to keep its guarantee
SEED_ENTROPY_BITS = 128
#: integer seeds below 2**WEAK_SEED_BITS carry at most that many bits (see the module doc)
WEAK_SEED_BITS = 96
#: integer seeds below this draw a WeakSeedWarning (see the module doc)
WEAK_SEED_BELOW = 2**WEAK_SEED_BITS
#: δ at or above this draws a warning (it should be much smaller than 1/n)
LARGE_DELTA = 1e-3
#: how to make a good seed
GOOD_SEED_COMMAND = 'python -c "import secrets; print(secrets.randbits(128))"'
#: the notice every output of a seeded run carries
SEED_NOTICE = ("seeded: the guarantee holds only if the seed is secret and carries at least "
               f"{SEED_ENTROPY_BITS} bits of entropy (anyone who knows or can guess the seed "
               "can remove the noise)")
#: the randomness row of a secure-mode summary
SECURE_DESCRIPTION = "secure (OS CSPRNG, exact discrete noise on a grid)"
#: the randomness row of a seeded summary
SEEDED_DESCRIPTION = ("seeded (reproducible): private only if the seed is secret and has "
                      f">= {SEED_ENTROPY_BITS} bits of entropy; anyone who knows or can guess "
                      "the seed can remove the noise")


def seed_entropy_bound(random_state: Any) -> int | None:
    """At most how many bits of entropy ``random_state`` can carry (``None``: unknown or not a
    seed -- ``None`` itself is secure mode, a Generator cannot be judged)."""
    if random_state is None or isinstance(random_state, (bool, np.bool_, np.random.Generator)):
        return None
    if isinstance(random_state, numbers.Integral):
        return max(int(random_state), 0).bit_length()
    if isinstance(random_state, np.random.SeedSequence):
        ent = random_state.entropy
        if ent is None:  # pragma: no cover - numpy always fills it
            return None
        if isinstance(ent, numbers.Integral):
            return int(ent).bit_length()
        return sum(max(int(w), 0).bit_length() for w in np.ravel(ent).tolist())
    if isinstance(random_state, np.random.RandomState):
        return 31  # check_rng seeds a Generator with one 31-bit draw from it
    return None


def weak_seed(random_state: Any) -> bool:
    """True when ``random_state`` is a seed that cannot carry 128 bits of entropy (an integer
    below 2**96, a SeedSequence with as little entropy, a legacy RandomState)."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state,
                                                                    (bool, np.bool_)):
        return 0 <= int(random_state) < WEAK_SEED_BELOW
    bits = seed_entropy_bound(random_state)
    return bits is not None and bits <= WEAK_SEED_BITS


def weak_seed_message(shown: str) -> str:
    """One line: why the seed ``shown`` (e.g. ``"--seed 1234"``) is unsafe and what to do."""
    return (f"{shown} cannot carry {SEED_ENTROPY_BITS} bits of entropy: anyone who knows or "
            "guesses it can remove the noise from this release. For a real release omit the "
            "seed (secure mode), or use a secret seed from: " + GOOD_SEED_COMMAND)


def user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning issued by the caller of this function at the
    first frame outside the dpreg package (the user's call), however deep inside dpreg the
    warning is raised (the tie warnings of :mod:`dpreg.simple.ties`, :mod:`dpreg.simple.ci`
    and the per-group tables)."""
    import os
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(root + os.sep):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def warn_weak_seed(random_state: Any, name: str = "random_state", stacklevel: int = 3) -> None:
    """A :class:`~dpreg.exceptions.WeakSeedWarning` when :func:`weak_seed` holds."""
    if weak_seed(random_state):
        # the text does not repeat the value, so that Python shows it once per call site
        shown = (f"{name} (an integer below 2**{WEAK_SEED_BITS})"
                 if isinstance(random_state, numbers.Integral)
                 else f"{name} (a {type(random_state).__name__} with at most "
                      f"{WEAK_SEED_BITS} bits of entropy)")
        warnings.warn(weak_seed_message(shown), WeakSeedWarning, stacklevel=stacklevel)


def large_delta_message(delta: Any, n_public: int | None = None, shown: str = "delta"
                        ) -> str | None:
    """The warning text for a large δ (``None`` when δ is fine): δ >= 1e-3, or δ >= 1/n where
    ``n_public`` is a public number of records (replace-one results)."""
    if delta is None or isinstance(delta, (bool, np.bool_)) or not isinstance(delta,
                                                                             numbers.Real):
        return None
    d = float(delta)
    if not math.isfinite(d) or d <= 0:
        return None
    per_n = n_public is not None and n_public > 0 and d * n_public >= 1
    if d < LARGE_DELTA and not per_n:
        return None
    text = (f"{shown}={d:g} is large: delta is the probability that the guarantee fails "
            "outright (e.g. a record is published), so it should be much smaller than 1/n "
            "(typically 1e-6 or below)")
    if per_n:
        text += f"; here delta >= 1/n for the public n = {int(n_public)}"  # type: ignore[arg-type]
    return text


def warn_large_delta(delta: Any, n_public: int | None = None, stacklevel: int = 3) -> None:
    """A :class:`~dpreg.exceptions.LargeDeltaWarning` when :func:`large_delta_message` says so."""
    text = large_delta_message(delta, n_public)
    if text is not None:
        warnings.warn(text, LargeDeltaWarning, stacklevel=stacklevel)


_IN_PUBLIC_CALL: contextvars.ContextVar[bool] = contextvars.ContextVar("dpreg_public_call",
                                                                      default=False)


@contextmanager
def public_call(*, delta: Any = None, random_state: Any = None, seed_name: str = "random_state",
                stacklevel: int = 5) -> Iterator[bool]:
    """Scope of one public call: warns about a large ``delta`` and a weak ``random_state`` on
    entry unless an enclosing public call already did; yields True for the outermost call."""
    if _IN_PUBLIC_CALL.get():
        yield False
        return
    warn_large_delta(delta, stacklevel=stacklevel)
    warn_weak_seed(random_state, seed_name, stacklevel=stacklevel)
    token = _IN_PUBLIC_CALL.set(True)
    try:
        yield True
    finally:
        _IN_PUBLIC_CALL.reset(token)


F = TypeVar("F", bound=Callable[..., Any])


def _nobs(out: Any) -> int | None:
    """The public n of a result (``RegressionResults.nobs`` is None where n is private)."""
    n = getattr(out, "nobs", None)
    return int(n) if isinstance(n, numbers.Integral) and not isinstance(n, bool) else None


def _warn_per_n(delta: Any, n: int | None) -> None:
    if n and large_delta_message(delta) is None:  # δ >= 1e-3 was already said on entry
        warn_large_delta(delta, n_public=n, stacklevel=4)


def _call_release(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
                  ) -> dict[str, Any]:
    """What a public function call releases, from its (public) arguments: the requested
    budget, the method, the formula (``regress``; ``y ~ x by key`` for ``fit_by_group``) or
    the columns (``release_sscp``).  Never a data value."""
    import inspect

    from dpreg.privacy.units import requested_budget

    try:
        a = inspect.signature(fn).bind_partial(*args, **kwargs).arguments
    except TypeError:
        a = dict(kwargs)
    formula = a.get("formula") if isinstance(a.get("formula"), str) else None
    if formula is None and all(isinstance(a.get(k), str) for k in ("y", "x", "by")):
        formula = f"{a['y']} ~ {a['x']} by {a['by']}"
    cols = a.get("columns")
    return {"entry": getattr(fn, "__name__", None),
            "method": a.get("method") if isinstance(a.get("method"), str) else None,
            "formula": formula,
            "columns": [str(c) for c in cols] if isinstance(cols, (list, tuple)) else None,
            "requested": requested_budget(a.get("epsilon"), a.get("delta"))}


def attach_charges(out: Any, charges: list[Any]) -> Any:
    """``out`` with the ledger charges its call made shown where they are paid: a result's
    (or a release's, or an estimator's ``privacy_``/``results_``) privacy statement gets them
    (:attr:`PrivacyStatement.charges`: summary row, JSON ``ledger_charges``); a grouped table
    gets ``attrs["ledger_charges"]`` and a line in ``attrs["privacy"]``.  Unchanged without
    charges."""
    import dataclasses

    if not charges:
        return out
    got = tuple(charges)

    def stated(stmt: Any) -> Any:
        return stmt.with_charges(got) if hasattr(stmt, "with_charges") else stmt

    attrs = getattr(out, "attrs", None)
    if isinstance(attrs, dict) and "privacy" in attrs:  # a grouped table (DataFrame)
        attrs["ledger_charges"] = [c.as_dict() for c in got]
        attrs["privacy"] = str(attrs["privacy"]) + "".join(
            f"\nLedger charge: {c}" for c in got)
        return out
    if hasattr(out, "privacy_"):  # a fitted estimator (fit returns self)
        old, new = out.privacy_, stated(out.privacy_)
        out.privacy_ = new
        res = getattr(out, "results_", None)
        if res is not None and hasattr(res, "replace"):  # one statement object, as before
            out.results_ = res.replace(privacy=new if res.privacy is old else stated(res.privacy))
        return out
    stmt = getattr(out, "privacy", None)
    if not hasattr(stmt, "with_charges"):
        return out
    if hasattr(out, "replace") and not dataclasses.is_dataclass(out):  # RegressionResults
        return out.replace(privacy=stated(stmt))
    if dataclasses.is_dataclass(out) and not isinstance(out, type):
        return dataclasses.replace(out, privacy=stated(stmt))
    out.privacy = stated(stmt)  # a release object (SSCPRelease)
    return out


def public_function(seed_arg: str = "random_state",
                    n_public: Callable[[Any], int | None] = _nobs) -> Callable[[F], F]:
    """Decorator for public functions taking ``delta=`` and a seed (``seed_arg``) as keywords:
    one :func:`public_call` scope per call, then the δ >= 1/n warning when ``n_public(result)``
    is a public number of records.  The outermost call charges the session's default ledger
    when its ``ledger`` keyword is None; every charge inside records what the call releases."""

    def deco(fn: F) -> F:
        from dpreg.privacy.context import collect_charges, get_default_ledger, release_context

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            delta = kwargs.get("delta")
            with public_call(delta=delta, random_state=kwargs.get(seed_arg),
                             seed_name=seed_arg) as outer, \
                    release_context(**_call_release(fn, args, kwargs)), \
                    collect_charges() as charges:
                default = get_default_ledger() if outer else None
                if default is not None and kwargs.get("ledger") is None:
                    kwargs["ledger"] = default
                out = fn(*args, **kwargs)
                out = attach_charges(out, charges)
            if outer:
                _warn_per_n(delta, n_public(out))
            return out

        return wrapper  # type: ignore[return-value]

    return deco


def public_entry(fit: F) -> F:
    """Decorator for estimators' ``fit``: one :func:`public_call` scope per fit (``self.delta``
    and ``self.random_state``), then the δ >= 1/n warning when the fitted result's n is public.
    An outermost fit with ``ledger=None`` charges the session's default ledger (``self.ledger``
    is set to it for the fit and restored after); every charge inside records the estimator,
    its requested budget and the feature names of a DataFrame ``X``."""
    from dpreg.privacy.context import collect_charges, get_default_ledger, release_context
    from dpreg.privacy.units import requested_budget

    @functools.wraps(fit)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        delta = getattr(self, "delta", None)
        X = args[0] if args else kwargs.get("X")
        cols = getattr(X, "columns", None)
        info = {"entry": f"{type(self).__name__}.fit", "method": type(self).__name__,
                "columns": [str(c) for c in cols] if cols is not None else None,
                "requested": requested_budget(getattr(self, "epsilon", None), delta)}
        with public_call(delta=delta, random_state=getattr(self, "random_state", None)) as outer, \
                release_context(**info), collect_charges() as charges:
            default = get_default_ledger() if outer else None
            if default is None or not hasattr(self, "ledger") or self.ledger is not None:
                out = fit(self, *args, **kwargs)
            else:
                self.ledger = default
                try:
                    out = fit(self, *args, **kwargs)
                finally:
                    self.ledger = None
            attach_charges(self, charges)
        if outer:
            _warn_per_n(delta, _nobs(getattr(self, "results_", None)))
        return out

    return wrapper  # type: ignore[return-value]


def warn_if_not_private(epsilon: float, what: str) -> None:
    """The :class:`~dpreg.exceptions.PrivacyLeakWarning` of an infinite budget (``what`` is
    computed without noise; :data:`INFINITE_BUDGET`), shared by the multivariate and
    covariance cores."""
    if math.isinf(epsilon):
        from dpreg.exceptions import PrivacyLeakWarning

        warnings.warn(f"{INFINITE_BUDGET}: {what} is computed without noise and is NOT "
                      "private",
                      PrivacyLeakWarning, stacklevel=3)
