"""Privacy budgets, conversions, neighbouring relations and the ledger."""

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
from dpreg.privacy.ledger import Ledger, PrivacyEvent, charge
from dpreg.privacy.neighbours import Neighbouring, PrivacyStatement, check_neighbouring

__all__ = [
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
    "Neighbouring",
    "PrivacyStatement",
    "check_neighbouring",
]
