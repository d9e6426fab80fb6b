"""Privacy budgets, conversions, neighbouring relations, the ledger and the integrity records
of ledger and release files (:class:`Integrity`, :func:`create_key_file`, :func:`key_id`).

:data:`EPSILON_MAX`, :data:`RHO_MAX` and :data:`MU_MAX` are the largest budgets dpreg treats as
a privacy guarantee; a larger finite value is treated exactly like ``inf`` (NOT PRIVATE)."""

from dpreg._integrity import Integrity, create_key_file, key_id
from dpreg._validation import EPSILON_MAX, MU_MAX, RHO_MAX
from dpreg.privacy.budgets import (
    GDP,
    ZCDP,
    ApproxDP,
    Budget,
    PureDP,
    as_budget,
    compose,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    zcdp_epsilon,
    zcdp_rho_for_approx,
)
from dpreg.privacy.ledger import (
    BOTH_RELATIONS,
    Ledger,
    LedgerCharge,
    PrivacyEvent,
    charge,
    get_default_ledger,
    release_context,
    set_default_ledger,
)
from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement, check_neighbouring
from dpreg.privacy.relations import add_remove_to_replace_one, convert_relation

__all__ = [
    "EPSILON_MAX",
    "RHO_MAX",
    "MU_MAX",
    "Budget",
    "PureDP",
    "ApproxDP",
    "ZCDP",
    "GDP",
    "as_budget",
    "compose",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "zcdp_epsilon",
    "zcdp_rho_for_approx",
    "Ledger",
    "PrivacyEvent",
    "charge",
    "set_default_ledger",
    "get_default_ledger",
    "release_context",
    "BOTH_RELATIONS",
    "Neighbouring",
    "PrivacyStatement",
    "check_neighbouring",
    "convert_relation",
    "add_remove_to_replace_one",
    "LedgerCharge",
    "Integrity",
    "create_key_file",
    "key_id",
]
