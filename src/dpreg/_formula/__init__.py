"""The one formula front end: a restricted grammar parsed by whitelist, never evaluated.

Formulas come from analysts (``dpreg.regress``, ``dpreg fit --y/--x``, ``SSCPRelease.regress``,
``dpreg regress``).  A formula string is tokenised and parsed here against the *names* of the
data's columns only -- no value of the data is read -- into a small tree of whitelisted node
types.  Anything outside the grammar is an :class:`~dpreg.exceptions.InvalidInputError` that
names the offending token and its position.  Only then is the model matrix built with
`formulaic <https://matthewwardrop.github.io/formulaic/>`_, from a string *re-rendered from the
validated tree* in which every column is replaced by an internal identifier (``_dpreg_c0_``,
...) that formulaic looks up in a copy of the referenced columns.  So the text formulaic sees
contains nothing but internal identifiers, numeric and quoted-level literals, the operators
below and the whitelisted function names: user text never reaches Python evaluation, a column
name can never be code, and a column called ``np``, ``C``, ``I`` or ``open`` cannot shadow
anything.

Grammar (``docs/formulas.md`` has the user-facing version)::

    formula   := side '~' side               exactly one '~'; the left side is one factor
    side      := sum
    sum       := term (('+' | '-') term)*    formula meaning: add / remove terms
    term      := ['+' | '-'] (0 | 1)         intercept terms: 1, 0, -1, +1, -0
               | product
    product   := inter (('*' | '/') inter)*  a*b = a + b + a:b;  a/b = a + a:b
    inter     := power (':' power)*          interaction
    power     := atom ['**' INT]             (a + b)**2: all interactions up to order 2
    atom      := COLUMN | call | '(' sum ')'
    call      := 'I' '(' arith ')'
               | 'C' '(' COLUMN [',' 'levels' '=' '[' literal (',' literal)* ']'] ')'
               | TRANSFORM '(' arith ')'     log, log1p, exp, sqrt, abs (also np.log, ...)
               | 'power' '(' arith ',' ['-'] NUMBER ')'     (also np.power)
    arith     := aterm (('+' | '-') aterm)*  ordinary arithmetic on columns and numbers
    aterm     := afactor (('*' | '/') afactor)*
    afactor   := ('+' | '-') afactor | apower
    apower    := aatom ['**' afactor]
    aatom     := COLUMN | NUMBER | TRANSFORM-or-power call | '(' arith ')'
    COLUMN    := a column name of the data: an identifier (letters, digits, _; Unicode letters
                 only in NFKC-normal form) or any name in backquotes: `my column`
    literal   := NUMBER | 'text' | "text"    (levels only; no backslashes, quotes or backquotes
                                              inside)

Centring and scaling use public constants inside ``I()``, e.g. ``I((age - 40) / 10)``;
formulaic's ``center()``/``scale()`` (which use the data's mean and standard deviation, a
private statistic) are refused.  ``C(col)`` without ``levels=`` is only accepted for columns
whose pandas dtype is ``Categorical`` (its declared categories are the public levels); that
check needs the dtypes and is made by :func:`check_categorical_levels`.

Layout (a package; every name other modules use is re-exported here)::

    tokens       limits, whitelists, the tokeniser     tree     the node types and walks over them
    cursor       the token stream the grammar shares   render   spellings of a tree; Formula
    expressions  calls and the arithmetic inside them  parser   the formula level; entry points
    terms        term expansion (capped); linear terms levels   declared categorical levels
    matrices     model matrices built by formulaic
"""

from __future__ import annotations

from dpreg._formula.levels import (
    categorical_columns,
    check_categorical_levels,
    declare_levels,
    level_node,
)
from dpreg._formula.matrices import ModelMatrices, model_matrices
from dpreg._formula.parser import formula_from_columns, parse_formula, parse_term
from dpreg._formula.render import Formula, display_name
from dpreg._formula.render import _render as _render
from dpreg._formula.terms import linear_terms
from dpreg._formula.tokens import (
    MAX_EXPRESSION_NODES,
    MAX_FORMULA_CHARS,
    MAX_NESTING,
    MAX_TERMS,
    TRANSFORMS,
)
from dpreg._formula.tokens import _show as _show
from dpreg._formula.tree import Call as Call
from dpreg._formula.tree import Chain as Chain
from dpreg._formula.tree import Col as Col
from dpreg._formula.tree import Node as Node
from dpreg._formula.tree import Num as Num
from dpreg._formula.tree import Paren as Paren
from dpreg._formula.tree import Pow as Pow
from dpreg._formula.tree import Str as Str
from dpreg._formula.tree import Unary as Unary
from dpreg._formula.tree import _walk as _walk

__all__ = [
    "MAX_FORMULA_CHARS",
    "MAX_NESTING",
    "MAX_EXPRESSION_NODES",
    "MAX_TERMS",
    "TRANSFORMS",
    "Formula",
    "ModelMatrices",
    "parse_formula",
    "parse_term",
    "formula_from_columns",
    "model_matrices",
    "linear_terms",
    "check_categorical_levels",
    "declare_levels",
    "categorical_columns",
    "level_node",
    "display_name",
]
