"""The accounting of a ledger: events, running sums and composition across definitions.

What a charge costs and whether it fits -- budget arithmetic (exact ``Fraction`` sums), the
relation conversion of a charge, which definitions a total accepts, the recorded
:class:`PrivacyEvent` and the :class:`LedgerCharge` receipt.  Pure functions of public
budgets: no file, no lock, no data.  The rules are the module docstring of
:mod:`dpreg.privacy.ledger` ("Accounting across definitions", "Neighbouring relations");
:class:`~dpreg.privacy.ledger.Ledger` applies them and :mod:`dpreg.privacy._store` keeps the
events.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from dpreg.exceptions import BudgetExceededError, InvalidInputError
from dpreg.privacy.budgets import (
    GDP,
    ZCDP,
    ApproxDP,
    Budget,
    PureDP,
    _round_down,
    _round_up,
    _sqrt_down,
    _sqrt_up,
    as_budget,
    gdp_epsilon,
    zcdp_epsilon,
)
from dpreg.privacy.context import RELEASE_KEYS
from dpreg.privacy.neighbours import Neighbouring, check_neighbouring
from dpreg.privacy.relations import convert_relation

#: the text every output of a non-private ledger or event carries
NOT_PRIVATE = "NOT PRIVATE (infinite budget)"
#: pass to :func:`charge` for a release whose guarantee holds under both relations (e.g. a
#: quantile by the exponential mechanism, a count of rows at the bounds)
BOTH_RELATIONS = (Neighbouring.REPLACE_ONE, Neighbouring.ADD_REMOVE)


@dataclass(frozen=True)
class PrivacyEvent:
    """One recorded charge.

    ``budget`` is what was charged to the ledger (in the ledger's relation); ``stated`` and
    ``neighbouring`` are the budget and relation the release stated (``stated`` equals
    ``budget`` unless the relation was converted).  ``info`` says what was released, from the
    entry point's :func:`release_context` (keys :data:`RELEASE_KEYS`: the budget as
    ``requested`` in the user's units, ``method``, ``formula`` or ``columns``, the ``data`` file
    name as the user gave it, the ``entry`` point) -- public facts only, never a data value;
    empty for events recorded before ledgers stored it.
    """

    id: int
    budget: Budget
    label: str
    timestamp: float
    neighbouring: Neighbouring = Neighbouring.REPLACE_ONE
    stated: Budget | None = field(default=None)
    info: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.stated is None:
            object.__setattr__(self, "stated", self.budget)

    @property
    def private(self) -> bool:
        """False for an infinite charge (a non-private release)."""
        return not (self.budget.is_infinite or as_budget(self.stated).is_infinite)

    @property
    def converted(self) -> bool:
        """True when the charge differs from the stated budget (relation conversion)."""
        return self.stated != self.budget

    def as_dict(self) -> dict[str, Any]:
        stated = as_budget(self.stated)
        out: dict[str, Any] = {
            "id": self.id, "budget": self.budget.as_dict(), "label": self.label,
            "timestamp": self.timestamp, "neighbouring": self.neighbouring.value,
            "stated_budget": stated.as_dict(), "converted": self.converted,
            "private": self.private, "time": _utc(self.timestamp), **dict(self.info),
        }
        if not self.private:
            out["note"] = NOT_PRIVATE
        return out

    @property
    def requested(self) -> Budget | None:
        """The budget as the user requested it (``None`` for events without that record)."""
        req = self.info.get("requested")
        if not isinstance(req, dict) or not isinstance(req.get("epsilon"), (int, float)):
            return None
        from dpreg.privacy.units import requested_budget

        return requested_budget(req["epsilon"], req.get("delta"))

    @property
    def released(self) -> str:
        """What was released, in words (method, formula/columns, data file), or the label."""
        parts = [str(self.info[k]) for k in ("method", "formula") if self.info.get(k)]
        cols = self.info.get("columns")
        if cols and not self.info.get("formula"):
            parts.append(", ".join(map(str, cols)) if isinstance(cols, list) else str(cols))
        if self.info.get("data"):
            parts.append(f"data {self.info['data']}")
        return "; ".join(parts) if parts else self.label

    def __str__(self) -> str:
        req = self.requested
        text = f"#{self.id} {_utc(self.timestamp)} "
        text += f"{req} as requested, charged {self.budget}" if req is not None and \
            req != self.budget else str(self.budget)
        if self.converted:
            text += f" (stated {self.stated} under {self.neighbouring} neighbours)"
        what = self.released
        if what:
            text += f" [{what}]"
        if not self.private:
            text += f" -- {NOT_PRIVATE}"
        return text



#: how a budget stated under add/remove neighbours is charged to a replace-one ledger
#: (:func:`~dpreg.privacy.relations.add_remove_to_replace_one`), in words
_CONVERSION_RULE = {"PureDP": "ε → 2ε", "ApproxDP": "(ε, δ) → (2ε, (1 + e^ε)·δ)",
                    "ZCDP": "ρ → 4ρ", "GDP": "μ → 2μ"}


@dataclass(frozen=True)
class LedgerCharge:
    """What one release cost on a ledger, in the ledger's units, and why -- the price shown
    where it is paid (a fit's summary and JSON, :attr:`PrivacyStatement.charges`).

    ``event`` is the recorded :class:`PrivacyEvent`; ``total`` and ``neighbouring`` are the
    ledger's; ``spent_before`` and ``spent_after`` are :meth:`Ledger.spent` around this charge
    (the ledger's composed loss, in its own definition).  Budget accounting only: public
    numbers, never a data value."""

    event: PrivacyEvent
    total: Budget
    neighbouring: Neighbouring
    spent_before: Budget
    spent_after: Budget

    @property
    def price(self) -> str:
        """The charge in the ledger's units, e.g. ``ε=1.875 of the ledger's (ε=3, δ=1e-05)
        (spent ε 0 → 1.875)``."""
        b, a, t = self.spent_before, self.spent_after, self.total
        if isinstance(t, GDP):
            mb, ma = float(b.mu), float(a.mu)  # type: ignore[attr-defined]
            return f"μ {mb:.4g} → {ma:.4g} of the ledger's {t} (μ composes in quadrature)"
        if isinstance(t, ZCDP):
            rb, ra = float(b.rho), float(a.rho)  # type: ignore[attr-defined]
            return f"ρ={ra - rb:.4g} of the ledger's {t} (spent ρ {rb:.4g} → {ra:.4g})"
        eb, ea = float(b.epsilon), float(a.epsilon)  # type: ignore[attr-defined]
        if math.isinf(ea):
            return f"ε=inf of the ledger's {t} ({NOT_PRIVATE})"
        return f"ε={ea - eb:.4g} of the ledger's {t} (spent ε {eb:.4g} → {ea:.4g})"

    @property
    def why(self) -> str:
        """Why the price is what it is: the budget as requested, the relation conversion and
        how charges of another kind compose on this ledger ("" when there is nothing to
        explain: a charge of the ledger's kind, relation and size as requested)."""
        ev = self.event
        stated = as_budget(ev.stated)
        parts = []
        req = ev.requested
        if req is not None and req != stated:
            parts.append(f"requested {req}, which the mechanism accounts as {stated}")
        if ev.converted:
            rule = _CONVERSION_RULE.get(type(stated).__name__, "")
            parts.append(f"stated under {ev.neighbouring} neighbours, charged to this "
                         f"{self.neighbouring}-neighbours ledger as {ev.budget}"
                         + (f" ({rule}: one replacement is a removal and an addition)"
                            if rule else ""))
        if isinstance(self.total, ApproxDP) and isinstance(ev.budget, (ZCDP, GDP)):
            parts.append(f"{type(ev.budget).__name__} charges are pooled and turned into (ε, δ) "
                         f"once at the ledger's δ={self.total.delta:g}, so this charge adds "
                         "its marginal ε (several such charges cost less than the sum of "
                         "their ε)")
        return "; ".join(parts)

    def __str__(self) -> str:
        why = self.why
        return self.price + (f" -- {why}" if why else "")

    def as_dict(self) -> dict[str, Any]:
        return {"event_id": self.event.id, "price": self.price, "why": self.why,
                "charged": self.event.budget.as_dict(),
                "stated": as_budget(self.event.stated).as_dict(),
                "release_neighbouring": self.event.neighbouring.value,
                "ledger_neighbouring": self.neighbouring.value,
                "converted": self.event.converted, "ledger_total": self.total.as_dict(),
                "spent_before": self.spent_before.as_dict(),
                "spent_after": self.spent_after.as_dict()}


class _Totals:
    """Exact running sums of the charges, by track."""

    __slots__ = ("eps_pure", "pure_rho", "eps_approx", "delta", "rho", "mu2", "count", "infinite")

    def __init__(self) -> None:
        self.eps_pure = Fraction(0)
        self.pure_rho = Fraction(0)  # Σ ε²/2 over pure charges (their zCDP view)
        self.eps_approx = Fraction(0)
        self.delta = Fraction(0)
        self.rho = Fraction(0)
        self.mu2 = Fraction(0)
        self.count = 0
        self.infinite = False

    def copy(self) -> _Totals:
        t = _Totals()
        for k in self.__slots__:
            setattr(t, k, getattr(self, k))
        return t

    def add(self, b: Budget) -> None:
        self.count += 1
        if b.is_infinite:
            self.infinite = True
            return
        if isinstance(b, PureDP):
            self.eps_pure += Fraction(b.epsilon)
            self.pure_rho += Fraction(b.epsilon) ** 2 / 2
        elif isinstance(b, ApproxDP):
            self.eps_approx += Fraction(b.epsilon)
            self.delta += Fraction(b.delta)
        elif isinstance(b, ZCDP):
            self.rho += Fraction(b.rho)
        elif isinstance(b, GDP):
            self.mu2 += Fraction(b.mu) ** 2


def _concentrated_epsilon(rho: Fraction, mu2: Fraction, delta: float) -> float:
    """ε of the pooled zCDP/GDP part at ``delta`` (inf if delta <= 0)."""
    if rho == 0 and mu2 == 0:
        return 0.0
    if delta <= 0:
        return math.inf
    if rho == 0:
        return gdp_epsilon(_sqrt_up(mu2), delta)
    return zcdp_epsilon(_round_up(rho + mu2 / 2), delta)

def _utc(ts: float) -> str:
    """A timestamp as ``YYYY-MM-DD HH:MM:SS UTC``."""
    try:
        return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return "?"


# ------------------------------------------------------------------ what a ledger accepts
def check_kind(total: Budget, budget: Budget) -> None:
    """Refuse a charge of a definition a ledger with ``total`` cannot account (module
    docstring of :mod:`dpreg.privacy.ledger`, "Accounting across definitions")."""
    t = total
    ok = (
        isinstance(t, ApproxDP)
        or (isinstance(t, PureDP) and isinstance(budget, PureDP))
        or (isinstance(t, ZCDP) and isinstance(budget, (PureDP, ZCDP, GDP)))
        or (isinstance(t, GDP) and isinstance(budget, GDP))
    )
    if not ok:
        remedy = ""
        if isinstance(t, PureDP):
            remedy = (" This ledger was created without δ, so it accounts pure-ε releases "
                      "only: use a method that needs no δ (`dpreg methods`, "
                      "column 'needs --delta'), or create the ledger with a δ "
                      "(Ledger(ApproxDP(ε, δ), path); `dpreg ledger init PATH --epsilon E "
                      "--delta D`).")
        raise InvalidInputError(
            f"a ledger with total {t} cannot account a {type(budget).__name__} charge "
            "(pure-DP ledgers take PureDP; GDP ledgers take GDP; zCDP ledgers take "
            "PureDP/ZCDP/GDP; (ε,δ) ledgers take everything)." + remedy
            + " Nothing was charged."
        )


def as_charge(total: Budget, relation: Neighbouring, budget: Any, neighbouring: Any
              ) -> tuple[Budget, Neighbouring, Budget]:
    """(stated budget, stated relation, budget to charge) of a charge on a ledger with
    ``total`` accounting ``relation`` -- validated and converted, nothing charged."""
    stated = as_budget(budget)
    rel = relation if neighbouring is None else check_neighbouring(neighbouring)
    try:
        charged = convert_relation(stated, rel, relation)
    except InvalidInputError as exc:
        raise InvalidInputError(f"this ledger accounts {relation} neighbours: {exc}. "
                                "Nothing was charged.") from None
    check_kind(total, charged)
    return stated, rel, charged


# ------------------------------------------------------------------ composition
def loss(total: Budget, s: _Totals) -> tuple[Fraction | float, Fraction | float]:
    """(primary loss, δ used) of the totals ``s``, in the definition of ``total``."""
    t = total
    if s.infinite:
        return math.inf, 0.0
    if isinstance(t, PureDP):
        return s.eps_pure, 0.0
    if isinstance(t, ZCDP):
        return s.rho + s.mu2 / 2 + s.pure_rho, 0.0
    if isinstance(t, GDP):
        return s.mu2, 0.0
    assert isinstance(t, ApproxDP)
    delta_left = float(Fraction(t.delta) - s.delta)
    linear = s.eps_pure + s.eps_approx
    conc = _concentrated_epsilon(s.rho, s.mu2, delta_left)
    best: Fraction | float = linear + Fraction(conc) if math.isfinite(conc) else math.inf
    if s.eps_pure > 0 and (s.rho > 0 or s.mu2 > 0):
        folded = _concentrated_epsilon(s.rho + s.pure_rho, s.mu2, delta_left)
        if math.isfinite(folded):
            alt = s.eps_approx + Fraction(folded)
            if alt < best:
                best = alt
    uses_conc = s.rho > 0 or s.mu2 > 0
    return best, (float(t.delta) if uses_conc else float(s.delta))


def fits(total: Budget, s: _Totals, slack: float) -> bool:
    """Whether the composed loss of ``s`` fits in ``total`` (up to the relative ``slack``)."""
    t = total
    if t.is_infinite:
        return True
    used, _ = loss(t, s)
    if isinstance(used, float) and math.isinf(used):
        return False
    if isinstance(t, PureDP):
        cap = Fraction(t.epsilon)
    elif isinstance(t, ZCDP):
        cap = Fraction(t.rho)
    elif isinstance(t, GDP):
        cap = Fraction(t.mu) ** 2
    else:
        assert isinstance(t, ApproxDP)
        if s.delta > Fraction(t.delta) * (1 + Fraction(slack)):
            return False
        cap = Fraction(t.epsilon)
    return Fraction(used) <= cap * (1 + Fraction(slack))


def spent_budget(total: Budget, s: _Totals) -> Budget:
    """The composed loss of ``s`` as a budget of the definition of ``total`` (rounded up)."""
    t = total
    used, delta_used = loss(t, s)
    if isinstance(t, PureDP):
        return PureDP(_as_float_up(used))
    if isinstance(t, ZCDP):
        return ZCDP(_as_float_up(used))
    if isinstance(t, GDP):
        infinite = isinstance(used, float) and math.isinf(used)
        return GDP(math.inf if infinite else _sqrt_up(Fraction(used)))
    assert isinstance(t, ApproxDP)
    return ApproxDP(_as_float_up(used), min(float(delta_used), t.delta))


def remaining_budget(total: Budget, spent: Budget) -> Budget:
    """``total`` less ``spent`` (rounded down; 0 when exhausted): a conservative summary."""
    t, s = total, spent
    if isinstance(t, PureDP):
        return PureDP(_sub_down(t.epsilon, s.epsilon))  # type: ignore[attr-defined]
    if isinstance(t, ZCDP):
        return ZCDP(_sub_down(t.rho, s.rho))  # type: ignore[attr-defined]
    if isinstance(t, GDP):
        if t.is_infinite:
            return GDP(math.inf)
        left = Fraction(t.mu) ** 2 - Fraction(s.mu) ** 2  # type: ignore[attr-defined]
        return GDP(0.0 if left <= 0 else _sqrt_down(left))
    assert isinstance(t, ApproxDP) and isinstance(s, ApproxDP)
    return ApproxDP(_sub_down(t.epsilon, s.epsilon), _sub_down(t.delta, s.delta))


def admit(total: Budget, relation: Neighbouring, slack: float, totals: _Totals,
          charged: Budget, stated: Budget, rel: Neighbouring, label: str) -> _Totals:
    """The running sums with ``charged`` added, if they fit in ``total``; otherwise
    :class:`~dpreg.exceptions.BudgetExceededError` (nothing is recorded)."""
    trial = totals.copy()
    trial.add(charged)
    if fits(total, trial, slack):
        return trial
    what = str(charged) if charged == stated else (
        f"{charged} (stated {stated} under {rel} neighbours, converted to {relation})")
    raise BudgetExceededError(
        f"charging {what} ({label or 'unlabelled'}) would exceed the ledger total "
        f"{total}; already spent {spent_budget(total, totals)}. Nothing was charged.")


def _jsonable_info(info: dict[str, Any]) -> dict[str, Any]:
    """The release context as plain JSON (a budget as ``{"epsilon", "delta"}``)."""
    out: dict[str, Any] = {}
    for k in RELEASE_KEYS:
        v = info.get(k)
        if v is None:
            continue
        if isinstance(v, Budget):
            from dpreg.privacy.units import requested_dict

            v = requested_dict(v)
        elif isinstance(v, (list, tuple)):
            v = [str(c) for c in v]
        elif not isinstance(v, (dict, int, float)):
            v = str(v)
        out[k] = v
    return out


def _read_info(text: Any) -> dict[str, Any]:
    """An event's stored ``info`` (``{}`` when absent; an unreadable one is ignored, it carries
    no accounting)."""
    if not text:
        return {}
    try:
        info = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return {k: info[k] for k in RELEASE_KEYS if k in info} if isinstance(info, dict) else {}


def _as_float_up(x: Fraction | float) -> float:
    if isinstance(x, float):
        return x
    return _round_up(x)


def _sub_down(a: float, b: float) -> float:
    if math.isinf(a):
        return math.inf
    if math.isinf(b):
        return 0.0
    d = Fraction(a) - Fraction(b)
    return 0.0 if d <= 0 else _round_down(d)

