"""Converting a privacy guarantee from one neighbouring relation to the other.

A guarantee is a statement about pairs of *neighbouring* datasets, and the two relations dpreg
uses (:class:`~dpreg.privacy.neighbours.Neighbouring`) are not interchangeable:

* **add/remove-one ⇒ replace-one** always holds at a cost: replacing a record is removing it
  and adding another, i.e. two add/remove steps, so group privacy with k = 2 applies.  For the
  four definitions this gives

  =================  ==============================  ==========================================
  add/remove         replace-one                     why
  =================  ==============================  ==========================================
  ``PureDP(ε)``      ``PureDP(2ε)``                  densities chain: e^ε · e^ε
  ``ApproxDP(ε,δ)``  ``ApproxDP(2ε, (1+e^ε)·δ)``     P ≤ e^ε(e^ε P'' + δ) + δ
  ``ZCDP(ρ)``        ``ZCDP(4ρ)``                    group privacy of zCDP: k²ρ
                                                     (Bun & Steinke 2016, Prop. 1.9)
  ``GDP(μ)``         ``GDP(2μ)``                     group privacy of GDP: kμ
                                                     (Dong, Roth & Su 2022, Thm. 2.14)
  =================  ==============================  ==========================================

  The factors are tight in general: a Laplace or Gaussian sum of values in [−1, 1] has
  sensitivity 1 under add/remove and 2 under replace-one, so its true replace-one loss is
  exactly the converted one (ε doubles, ρ quadruples, μ doubles).

* **replace-one ⇒ add/remove** does *not* follow at all: under replace-one the number of
  records n is public, and a mechanism may release n exactly (or calibrate its noise to it),
  which add/remove neighbours -- whose sizes differ -- would distinguish with certainty.
  :func:`convert_relation` refuses that direction.

Every conversion rounds toward *more* privacy loss.
"""

from __future__ import annotations

import math
from fractions import Fraction

from dpreg.exceptions import InvalidInputError
from dpreg.privacy.budgets import GDP, ZCDP, ApproxDP, Budget, PureDP, _round_up, _up, as_budget
from dpreg.privacy.neighbours import Neighbouring, check_neighbouring

__all__ = ["convert_relation", "add_remove_to_replace_one"]


def add_remove_to_replace_one(budget: Budget) -> Budget:
    """The replace-one guarantee implied by ``budget`` stated under add/remove neighbours
    (group privacy with k = 2; see the module documentation for the factors and sources)."""
    b = as_budget(budget)
    if isinstance(b, PureDP):
        return PureDP(2.0 * b.epsilon)  # doubling is exact (inf stays inf)
    if isinstance(b, ZCDP):
        return ZCDP(4.0 * b.rho)
    if isinstance(b, GDP):
        return GDP(2.0 * b.mu)
    assert isinstance(b, ApproxDP)
    if b.is_infinite:
        return ApproxDP(math.inf, b.delta)
    if b.delta == 0.0:
        return ApproxDP(2.0 * b.epsilon, 0.0)
    try:
        growth = _up(math.exp(b.epsilon), 2)  # e^ε, rounded up past exp's rounding error
    except OverflowError:
        growth = math.inf
    delta = math.inf if math.isinf(growth) else _round_up((1 + Fraction(growth)) * Fraction(b.delta))
    if not delta < 1.0:
        raise InvalidInputError(
            f"budget {b} stated under add/remove neighbours gives δ = (1 + e^ε)·δ = {delta:g} "
            "under replace-one, which is no guarantee (δ must be < 1); state the release under "
            "replace-one instead")
    return ApproxDP(2.0 * b.epsilon, delta)


def convert_relation(budget: Budget, from_: Neighbouring | str, to: Neighbouring | str) -> Budget:
    """``budget`` stated under the relation ``from_``, as a guarantee under ``to``.

    * same relation: ``budget`` unchanged;
    * add/remove → replace-one: :func:`add_remove_to_replace_one` (ε ×2, δ ×(1 + e^ε), ρ ×4,
      μ ×2);
    * replace-one → add/remove: refused with :class:`~dpreg.exceptions.InvalidInputError`
      (n is public under replace-one, so no add/remove guarantee follows).
    """
    b = as_budget(budget)
    src = check_neighbouring(from_, "from_")
    dst = check_neighbouring(to, "to")
    if src is dst:
        return b
    if src is Neighbouring.ADD_REMOVE:
        return add_remove_to_replace_one(b)
    raise InvalidInputError(
        f"a release stated under replace-one neighbours ({b}) gives no add/remove guarantee: "
        "under replace-one the number of records n is public (and may be released exactly), "
        "while add/remove neighbours differ in n; charge it to a replace-one ledger, or run the "
        "release with neighbouring='add-remove'")
