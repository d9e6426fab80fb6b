"""The model matrices, built by formulaic from the validated tree (internal identifiers only)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpreg._formula.parser import parse_term
from dpreg._formula.render import Formula, _render, display_name
from dpreg._formula.tokens import _INTERNAL, _INTERNAL_RE, _fail, _show
from dpreg._formula.tree import Node, _rename
from dpreg.exceptions import InvalidInputError


@dataclass(frozen=True)
class ModelMatrices:
    """Model matrices built by formulaic behind the gate, with user-facing column names."""

    lhs: pd.DataFrame
    rhs: pd.DataFrame
    #: per rhs column: True when every factor of its term is categorical (a 0/1 dummy product)
    dummy: tuple[bool, ...]
    #: per rhs column: the factors whose product it is -- a numeric expression over the user's
    #: column names, or ``None`` for a categorical factor (a 0/1 dummy); () for the intercept
    factors: tuple[tuple[Node | None, ...], ...] = ()
    #: the same for the lhs columns
    lhs_factors: tuple[tuple[Node | None, ...], ...] = ()



def _term_factors(spec: Any, n_columns: int, columns: Sequence[str]
                  ) -> tuple[tuple[Node | None, ...], ...]:
    """Per model-matrix column of a formulaic ``ModelSpec``: its factors (see
    :class:`ModelMatrices`).  A numeric factor's expression is re-parsed by this module's
    grammar (over the internal identifiers) and mapped back to the user's column names."""
    from formulaic.parser.types import Factor

    internal = [_INTERNAL.format(i) for i in range(len(columns))]
    back = dict(zip(internal, columns))
    kinds = {expr: state[0] for expr, state in spec.encoder_state.items()}
    out: list[tuple[Node | None, ...]] = [()] * n_columns
    for term, idx in spec.term_indices.items():
        facs: list[Node | None] = []
        for f in term.factors:
            expr = str(f.expr)
            if expr == "1":
                continue
            if kinds.get(expr) == Factor.Kind.CATEGORICAL:
                facs.append(None)
            else:
                facs.append(_rename(parse_term(expr, internal), back))
        for j in idx:
            out[j] = tuple(facs)
    return tuple(out)


def _back(name: str, columns: Sequence[str]) -> str:
    """Internal identifiers in a formulaic column name -> user spelling (bare factors keep the
    raw column name, as formulaic writes them; inside calls the formula spelling)."""

    def sub(m: re.Match[str]) -> str:
        raw = columns[int(m.group(1))]
        start, end = m.span()
        bare = (start == 0 or name[start - 1] == ":") and \
            (end == len(name) or name[end] in ":[")
        return raw if bare else display_name(raw)

    return _INTERNAL_RE.sub(sub, name)


def model_matrices(formula: Formula, data: pd.DataFrame) -> ModelMatrices:
    """Build the model matrices of a validated ``formula`` on ``data`` with formulaic.

    Only the referenced columns are handed over, renamed to internal identifiers.  formulaic's
    own warnings (which can print data values, e.g. categories outside the declared levels) are
    suppressed and its errors are replaced by messages that name the term, never values.
    """
    from formulaic import Formula as _Formulaic
    from formulaic.parser.types import Factor

    cols = formula.columns
    labels = {str(c): c for c in data.columns}
    frame = pd.DataFrame({_INTERNAL.format(i): data[labels[c]] for i, c in enumerate(cols)},
                         index=data.index, copy=False)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            mm = _Formulaic(formula.internal()).get_model_matrix(frame, na_action="raise")
    except RecursionError:
        raise _fail("too deeply nested to evaluate") from None
    except Exception as exc:  # formulaic raises several types; never echo data
        msg = str(exc)
        m = re.search(r"checking for nulls in `([^`]*)`", msg)
        if m:
            raise InvalidInputError(
                f"formula term {_show(_back(m.group(1), cols), 80)} has missing (null/NaN) or "
                "undefined values in some rows (e.g. log of a non-positive number or an empty "
                "cell); clean the data or change the transform"
            ) from None
        raise InvalidInputError(
            f"could not build the model matrix for formula {_show(formula.text(), 200)} "
            f"({type(exc).__name__})"
        ) from None
    lhs, rhs = mm.lhs, mm.rhs  # fresh objects of this call: renamed in place
    spec = rhs.model_spec
    rhs_factors = _term_factors(spec, rhs.shape[1], cols)
    lhs_factors = _term_factors(lhs.model_spec, lhs.shape[1], cols)
    index = {c: _INTERNAL.format(i) for i, c in enumerate(cols)}

    def col(name: str) -> str:
        return index[name]

    # declared levels (a codebook) are written out for formulaic; the names show C(col)
    short = {_render(c, col, True): _render(c, col) for c in formula.categorical_calls()
             if c.declared}

    def name(c: Any) -> str:
        text = str(c)
        for full, brief in short.items():
            text = text.replace(full, brief)
        return _back(text, cols)

    lhs.columns = [name(c) for c in lhs.columns]
    rhs.columns = [name(c) for c in rhs.columns]
    kinds = {expr: state[0] for expr, state in spec.encoder_state.items()}
    dummy = [False] * rhs.shape[1]
    for term, idx in spec.term_indices.items():
        factors = list(term.factors)
        cat = bool(factors) and all(
            kinds.get(str(f.expr)) == Factor.Kind.CATEGORICAL for f in factors)
        for j in idx:
            dummy[j] = cat
    return ModelMatrices(lhs, rhs, tuple(dummy), rhs_factors, lhs_factors)
