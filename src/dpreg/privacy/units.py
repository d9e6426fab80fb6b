"""Budgets in the user's units: what was requested (ε, or ε and δ) first, the accounting second.

Mechanisms are analysed in the definition that gives them the least noise: AdaSSP and the
covariance-free fits in ρ-zCDP, BoostedAdaSSP and DP-GD in μ-GDP, the simple ones in pure ε-DP.
The user asks for ε (and δ).  A :class:`~dpreg.privacy.PrivacyStatement` keeps the exact
accounting (its ``budget``: what a ledger is charged) and, set by the public entry points
(``regress``, every estimator's ``fit``, ``fit_by_group``, ``release_sscp``), the budget as
requested (its ``requested``).  Every summary, JSON document and ledger line shows the
requested budget first and the accounting second, with :data:`COMPOSITION_NOTE` saying why
several releases can compose to less than the sum of their ε.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from dpreg.privacy.budgets import GDP, ZCDP, ApproxDP, Budget, PureDP

__all__ = [
    "COMPOSITION_NOTE",
    "requested_budget",
    "implied_approx",
    "requested_dict",
    "accounting_dict",
    "describe_requested",
    "describe_accounting",
]

#: one sentence on why releases accounted in zCDP/GDP compose to less than the sum of their ε
COMPOSITION_NOTE = ("accounted in {kind}: {param} adds up across releases and is converted "
                    "to (ε,δ) once, so k releases at ε each compose to less than k·ε")


def _kind_words(budget: Budget) -> tuple[str, str]:
    if isinstance(budget, ZCDP):
        return "ρ-zCDP", "ρ"
    if isinstance(budget, GDP):
        return "μ-Gaussian DP", "μ²"
    return "(ε, δ)-DP", "ε"


def requested_budget(epsilon: Any, delta: Any = None, charged: Budget | None = None
                     ) -> Budget | None:
    """The budget as the user gave it: ``PureDP(ε)`` without δ (or when the release is pure,
    ``charged`` a :class:`PureDP`: a δ given to a pure method is not used), else
    ``ApproxDP(ε, δ)``.  ``None`` when ε is not a number (nothing to state)."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        return None
    eps = float(epsilon)
    if math.isnan(eps) or eps <= 0:
        return None
    if (delta is None or isinstance(delta, bool) or not isinstance(delta, numbers.Real)
            or not 0 < float(delta) < 1 or isinstance(charged, PureDP)):
        return PureDP(eps)
    return ApproxDP(eps, float(delta))


def implied_approx(charged: Budget, delta: float | None) -> ApproxDP | None:
    """The (ε, δ)-DP guarantee a zCDP/GDP charge implies at the requested δ (rounded up);
    ``None`` for pure/approximate charges or without δ."""
    if delta is None or not 0 < delta < 1 or charged.is_infinite:
        return None
    if isinstance(charged, (ZCDP, GDP)):
        return charged.to_approx(delta)
    return None


def requested_dict(requested: Budget) -> dict[str, Any]:
    """``{"epsilon": ε}`` or ``{"epsilon": ε, "delta": δ}``: the budget in the user's units."""
    out: dict[str, Any] = {"epsilon": getattr(requested, "epsilon", None)}
    delta = getattr(requested, "delta", None)
    if delta:
        out["delta"] = delta
    return out


def accounting_dict(charged: Budget, requested: Budget | None) -> dict[str, Any]:
    """The exact accounting (``charged.as_dict()``), plus -- for a zCDP/GDP charge -- the
    (ε, δ) it implies at the requested δ and :data:`COMPOSITION_NOTE`."""
    out = charged.as_dict()
    delta = getattr(requested, "delta", None)
    implied = implied_approx(charged, delta)
    if implied is not None:
        out["implies"] = {"epsilon": implied.epsilon, "delta": implied.delta}
    if isinstance(charged, (ZCDP, GDP)) and not charged.is_infinite:
        kind, param = _kind_words(charged)
        out["note"] = COMPOSITION_NOTE.format(kind=kind, param=param)
    return out


def describe_requested(requested: Budget | None, charged: Budget) -> str:
    """The first line of a budget: as requested, e.g. ``ε=1, δ=1e-06 (as requested)``."""
    if requested is None:
        return str(charged)
    if isinstance(requested, ApproxDP):
        return f"ε={requested.epsilon:g}, δ={requested.delta:g} (as requested)"
    return f"ε={getattr(requested, 'epsilon', math.nan):g} (as requested; pure DP)"


def describe_accounting(requested: Budget | None, charged: Budget) -> str | None:
    """The second line: how the release is accounted, when that differs from the request
    (``None`` when the charge *is* the request), e.g. ``ρ=0.0107 (zCDP) ⇒ (ε=1, δ=1e-06)-DP;
    the mechanism is analysed in ρ-zCDP, where ρ adds up ...``."""
    if requested is None or requested == charged:
        return None
    text = str(charged)
    implied = implied_approx(charged, getattr(requested, "delta", None))
    if implied is not None:
        text += f" ⇒ (ε={implied.epsilon:.4g}, δ={implied.delta:g})-DP"
    if isinstance(charged, (ZCDP, GDP)) and not charged.is_infinite:
        kind, param = _kind_words(charged)
        text += "; " + COMPOSITION_NOTE.format(kind=kind, param=param)
    return text
