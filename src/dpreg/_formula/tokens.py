"""Limits, whitelists and the tokeniser of the formula grammar (no value of the data is read)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from dpreg.exceptions import InvalidInputError, InvalidParameterError

#: Longest formula accepted (characters).
MAX_FORMULA_CHARS = 10_000
#: Deepest nesting of parentheses, calls, unary signs and powers.
MAX_NESTING = 32
#: Most nodes inside one ``I()``/transform call (formulaic's evaluator recurses over them).
MAX_EXPRESSION_NODES = 200
#: Most terms a right-hand side may expand to (``a*b*c*...`` doubles with every factor).
MAX_TERMS = 500

#: Whitelisted transforms: accepted spelling -> what formulaic evaluates (NumPy ufuncs).
TRANSFORMS: dict[str, str] = {
    "log": "np.log", "log1p": "np.log1p", "exp": "np.exp", "sqrt": "np.sqrt",
    "abs": "np.abs", "power": "np.power",
}
_REFUSED_WITH_REASON = {
    "center": "center() centres by the data's mean, a private statistic",
    "scale": "scale() scales by the data's mean and standard deviation, private statistics",
    "standardize": "standardize() uses the data's mean and standard deviation",
    "poly": "poly() fits orthogonal polynomials to the data (private statistics)",
    "bs": "splines place knots at data quantiles (private statistics)",
    "cr": "splines place knots at data quantiles (private statistics)",
    "cc": "splines place knots at data quantiles (private statistics)",
    "cs": "splines place knots at data quantiles (private statistics)",
    "Q": "Q('name') is patsy quoting; write the column name in backquotes: `name`",
}
_INTERNAL = "_dpreg_c{}_"
_INTERNAL_RE = re.compile(r"_dpreg_c(\d+)_")
_TOKEN_RE = re.compile(
    r"(?P<ws>[ \t\r\n]+)"
    r"|(?P<number>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"  # ASCII digits only
    r"|(?P<string>'[^'\\`\x00-\x1f\x7f]*'|\"[^\"\\`\x00-\x1f\x7f]*\")"
    r"|(?P<bq>`[^`\x00-\x1f\x7f]+`)"
    r"|(?P<name>[^\W\d]\w*)"
    r"|(?P<op>\*\*|[~+\-*/:(),=\[\].])"
)


def _fail(message: str) -> InvalidInputError:
    """A malformed formula: the caller's text (a usage error: exit 2 on the command line)."""
    return InvalidParameterError(f"formula: {message}")


def _show(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")



@dataclass(frozen=True)
class _Token:
    kind: str  # number, string, bq, name, op, end
    text: str
    pos: int


def _non_ascii_digit(ch: str) -> bool:
    """A digit other than 0-9 (Arabic-Indic ``١``, full-width ``１``, ...): ``int``/``float``
    would read it as a number, the grammar does not (docs/formulas.md)."""
    return not ch.isascii() and (ch.isdigit() or ch.isnumeric())


def _tokenize(text: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    n = len(text)
    while pos < n:
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            ch = text[pos]
            if ch in "'\"":
                raise _fail(f"string literal at position {pos} is not closed or contains a "
                            "backslash, a backquote or a control character")
            if ch == "`":
                raise _fail(f"backquoted name at position {pos} is not closed or is empty")
            if _non_ascii_digit(ch):
                raise _fail(f"character {ch!r} (U+{ord(ch):04X}) at position {pos} is a "
                            "non-ASCII digit: only ASCII digits 0-9 are accepted in numbers")
            raise _fail(f"character {ch!r} (U+{ord(ch):04X}) at position {pos} is not allowed "
                        "(the grammar is in docs/formulas.md)")
        kind = m.lastgroup or ""
        tok = m.group()
        end = m.end()
        if kind == "number" and end < n and _non_ascii_digit(text[end]):
            raise _fail(f"number {_show(text[pos:end + 1])} at position {pos} has a non-ASCII "
                        "digit: only ASCII digits 0-9 are accepted in numbers")
        if kind == "number" and end < n and (text[end].isalnum() or text[end] in "_."):
            raise _fail(f"malformed number {_show(text[pos:end + 1])} at position {pos}")
        if kind == "name" and end < n and text[end] in "'\"":
            raise _fail(f"string prefix {tok!r} at position {pos} is not allowed (no f-strings, "
                        "bytes or raw strings)")
        if kind == "name" and unicodedata.normalize("NFKC", tok) != tok:
            raise _fail(f"name {_show(tok)} at position {pos} is not in Unicode NFKC normal "
                        f"form (it reads as {_show(unicodedata.normalize('NFKC', tok))}); "
                        "write column names with odd characters in backquotes")
        if kind != "ws":
            out.append(_Token(kind, tok, pos))
        pos = end
    out.append(_Token("end", "", n))
    return out
