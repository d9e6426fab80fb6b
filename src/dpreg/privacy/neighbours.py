"""Neighbouring relations and the privacy statement attached to every release."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from dpreg.exceptions import InvalidParameterError
from dpreg.privacy.budgets import Budget
from dpreg.privacy.notices import (
    NOT_PRIVATE_NOTICE,
    SECURE_DESCRIPTION,
    SEED_NOTICE,
    SEEDED_DESCRIPTION,
)
from dpreg.privacy.units import (
    accounting_dict,
    describe_requested,
    requested_budget,
    requested_dict,
)

__all__ = ["Neighbouring", "check_neighbouring", "PrivacyStatement"]


class Neighbouring(StrEnum):
    """Which pairs of datasets a guarantee protects.

    * ``REPLACE_ONE`` -- bounded DP: datasets of the same, public size n that differ in one
      record (a record is changed).  Used by Alabi et al. 2022 and Sarathy & Vadhan 2025.
    * ``ADD_REMOVE`` -- unbounded DP: one dataset is the other with one record added or
      removed; n itself is protected.  Used by Wang 2018 (AdaSSP) and Amin et al. 2023.

    A guarantee under add/remove at ε implies replace-one at 2ε (replace = remove + add);
    sensitivities are stated for each relation in :mod:`dpreg.mechanisms.sensitivity`.
    """

    REPLACE_ONE = "replace-one"
    ADD_REMOVE = "add-remove"

    def __str__(self) -> str:
        return self.value


def check_neighbouring(value: Any, name: str = "neighbouring") -> Neighbouring:
    """Accept a :class:`Neighbouring` or its string value (``"replace-one"``/``"add-remove"``)."""
    if isinstance(value, Neighbouring):
        return value
    if isinstance(value, str):
        norm = value.strip().lower().replace("_", "-").replace("/", "-")
        aliases = {
            "replace-one": Neighbouring.REPLACE_ONE, "replace": Neighbouring.REPLACE_ONE,
            "bounded": Neighbouring.REPLACE_ONE, "change-one": Neighbouring.REPLACE_ONE,
            "add-remove": Neighbouring.ADD_REMOVE, "add-remove-one": Neighbouring.ADD_REMOVE,
            "unbounded": Neighbouring.ADD_REMOVE,
        }
        if norm in aliases:
            return aliases[norm]
    from dpreg._validation import did_you_mean

    raise InvalidParameterError(
        f"{name} must be 'replace-one' or 'add-remove'; got {value!r}"
        + did_you_mean(str(value), ["replace-one", "add-remove"])
    )


@dataclass(frozen=True)
class PrivacyStatement:
    """What a release cost and what it protects.

    Attributes
    ----------
    budget:
        The budget charged for the release (in the definition the mechanism is analysed in).
    neighbouring:
        The neighbouring relation the guarantee is stated for.
    mechanism:
        Short name of the algorithm (e.g. ``"DPSuffStats"``).
    source:
        The paper/algorithm the implementation follows.
    seeded:
        ``True`` when the caller supplied a seed: the output is reproducible, and the guarantee
        holds only while the seed is secret and carries >= 128 bits of entropy (anyone who knows
        or can guess the seed can remove the noise; :data:`~dpreg.privacy.notices.SEED_NOTICE`).
        ``False`` means secure mode (see :attr:`randomness`).
    details:
        Mechanism-specific facts (per-step budgets, sensitivities, clipping bounds ...).
    requested:
        The budget as the user asked for it (``PureDP(ε)`` or ``ApproxDP(ε, δ)``), set by the
        public entry points (:mod:`dpreg.privacy.units`); ``None`` where a core was called
        directly.  ``budget`` stays the exact accounting; outputs show ``requested`` first.
    charges:
        The ledger charges the release made (:class:`~dpreg.privacy.ledger.LedgerCharge`:
        the price in the ledger's units and why), set by the public entry point that charged
        them; empty without a ledger.
    """

    budget: Budget
    neighbouring: Neighbouring
    mechanism: str
    source: str = ""
    seeded: bool = False
    details: dict[str, Any] = field(default_factory=dict, compare=False)
    requested: Budget | None = field(default=None, compare=False)
    charges: tuple[Any, ...] = field(default=(), compare=False)

    def with_charges(self, charges: Any) -> PrivacyStatement:
        """This statement with the ledger charges its release made (see ``charges``)."""
        return replace(self, charges=tuple(charges))

    def with_requested(self, epsilon: Any, delta: Any = None) -> PrivacyStatement:
        """This statement with ``requested`` set from the user's ε (and δ) -- unchanged when
        it is already set (the outermost entry point's request stands)."""
        if self.requested is not None:
            return self
        req = requested_budget(epsilon, delta, self.budget)
        return self if req is None else replace(self, requested=req)

    @property
    def randomness(self) -> str:
        """``"secure"`` (no seed: bits from the OS CSPRNG) or ``"seeded"`` (bits from a SHAKE256
        stream keyed by the seeded generator: reproducible, and private only while the seed is
        secret).  In both modes Laplace/Gaussian noise is exact and discrete on a public grid
        (:mod:`dpreg.mechanisms.secure`).  A :class:`~dpreg._random.SimulationGenerator`
        (harness and audit simulations, float noise, nothing released) is also recorded as
        ``"seeded"``."""
        return "seeded" if self.seeded else "secure"

    @property
    def randomness_description(self) -> str:
        """The randomness mode in words; for a seeded release it states that the guarantee
        needs a secret seed with >= 128 bits of entropy."""
        return SEEDED_DESCRIPTION if self.seeded else SECURE_DESCRIPTION

    @property
    def private(self) -> bool:
        """False when the release used an infinite budget (a non-private reference run)."""
        return not self.budget.is_infinite

    @property
    def notices(self) -> list[str]:
        """What a reader must know besides the budget: :data:`NOT_PRIVATE_NOTICE` for an
        infinite budget, :data:`SEED_NOTICE` for a seeded release (empty for a private
        secure-mode release)."""
        out = []
        if not self.private:
            out.append(NOT_PRIVATE_NOTICE)
        if self.seeded:
            out.append(SEED_NOTICE)
        return out

    def as_dict(self) -> dict[str, Any]:
        """Plain-Python form.  Besides the statement's fields: ``private`` (False for an
        infinite budget), ``notice`` (the :attr:`notices` joined, ``""`` when there is nothing
        to add), ``randomness_description``, ``requested`` (the budget in the user's units,
        ``{"epsilon": ε[, "delta": δ]}``, when set) and ``accounting`` (``budget`` plus, for a
        zCDP/GDP charge, the (ε, δ) it implies and why compositions can be tighter).  An
        infinite ε stays ``inf`` here (JSON writers of dpreg turn it into ``null``; ``private``
        says why)."""
        out: dict[str, Any] = {
            "budget": self.budget.as_dict(),
            "private": self.private,
            "notice": " | ".join(self.notices),
            "neighbouring": self.neighbouring.value,
            "mechanism": self.mechanism,
            "source": self.source,
            "seeded": self.seeded,
            "randomness": self.randomness,
            "randomness_description": self.randomness_description,
            "details": dict(self.details),
        }
        if self.requested is not None:
            out["requested"] = requested_dict(self.requested)
        out["accounting"] = accounting_dict(self.budget, self.requested)
        if self.charges:
            out["ledger_charges"] = [c.as_dict() for c in self.charges]
        return out

    def __str__(self) -> str:
        shown = describe_requested(self.requested, self.budget)
        if self.requested is not None and self.requested != self.budget:
            shown += f", accounted as {self.budget}"
        text = f"{shown}, {self.neighbouring} neighbours, {self.mechanism}"
        if self.source:
            text += f" [{self.source}]"
        if not self.private:
            text = f"{NOT_PRIVATE_NOTICE} -- {text}"
        if self.seeded:
            text += f" -- {SEED_NOTICE}"
        return text
