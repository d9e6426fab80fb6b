"""Whitelist parsers of the text typed on the command line: numbers, ``--bounds``, ``-o``, ε and δ."""

from __future__ import annotations

import math
import re
import sys
from decimal import Decimal
from typing import Any

import typer

from dpreg.cli._app import _cli_warning, _usage, _usage_error


def _non_ascii_digits(text: str) -> bool:
    """Whether ``text`` holds a digit other than 0-9 (``١``, ``１``, ...)."""
    return any(not ch.isascii() and (ch.isdigit() or ch.isnumeric()) for ch in text)


def _not_a_number_why(text: str) -> str:
    """Why ``text`` is not read as a number (the parenthesis of a usage error)."""
    if _non_ascii_digits(text):
        return " (only ASCII digits 0-9 are accepted in numbers)"
    return " (not a finite decimal number written with the ASCII digits 0-9)"


def parse_bounds(items: list[str] | None) -> Any:
    """``["x=0:1", "y=-1:2.5"]`` -> ``{"x": (0, 1), "y": (-1, 2.5)}`` (usage error if malformed).

    ``["private"]`` -> ``"private"`` and ``COL=private`` -> ``"private"`` for that column
    (bounds-free mode of ``--method auto``).  LO and HI are read by the one whitelist of typed
    numbers (:data:`dpreg._validation.ASCII_NUMBER`: ASCII digits only)."""
    from dpreg._validation import ASCII_NUMBER

    if items and list(items) == ["private"]:
        return "private"
    out: dict[str, Any] = {}
    for item in items or []:
        name, sep, rng = item.rpartition("=")
        if sep and name and rng == "private":
            out[name] = "private"
            continue
        lo_s, sep2, hi_s = rng.partition(":")
        lo_s, hi_s = lo_s.strip(), hi_s.strip()
        if not sep or not sep2 or not name or not (ASCII_NUMBER.fullmatch(lo_s)
                                                   and ASCII_NUMBER.fullmatch(hi_s)):
            raise typer.BadParameter(
                f"expected COL=LO:HI (e.g. income=0:250000), LO and HI decimal numbers "
                f"written with the ASCII digits 0-9; got {item!r}", param_hint="--bounds")
        out[name] = (float(lo_s), float(hi_s))
    return out


def _ascii_float(value: Any) -> float:
    """The parser of the CLI's real-valued options (``--ci``, ``--alpha``, ``--target-sd``):
    the one whitelist of typed numbers (ASCII digits only), else a usage error naming the
    option (exit 2).  Typer passes defaults through unchanged."""
    from dpreg._validation import ASCII_NUMBER

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    if not ASCII_NUMBER.fullmatch(text) or not math.isfinite(float(text)):
        raise typer.BadParameter(f"{str(value)!r} is not a number{_not_a_number_why(text)}")
    return float(text)


def _ascii_int(value: Any) -> int:
    """The parser of the CLI's integer options (``--seed``, ``--n``, ``--workers``, ...):
    ASCII digits only (no ``_`` separators, no Unicode digits), else a usage error."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value).strip()
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        why = (" (only ASCII digits 0-9 are accepted in numbers)" if _non_ascii_digits(text)
               else " (an integer written with the ASCII digits 0-9)")
        raise typer.BadParameter(f"{str(value)!r} is not an integer{why}")
    return int(text)


#: ``-o`` keys each command sets through its own options (a method option of the same name
#: would be given twice): the key -> the option to use instead
_SET_BY_COMMAND: dict[str, dict[str, str]] = {
    "fit": {"epsilon": "--epsilon", "delta": "--delta", "bounds": "--bounds",
            "x_bounds": "--bounds", "y_bounds": "--bounds", "bounds_X": "--bounds",
            "bounds_y": "--bounds", "random_state": "--seed", "rng": "--seed", "seed": "--seed",
            "ledger": "--ledger", "codebook": "--codebook", "method": "--method",
            "median": "--method", "fit_intercept": "--no-intercept", "x_names": "--x",
            "x": "--x", "X": "--x", "y_name": "--y", "y": "--y", "formula": "--y and --x",
            "data": "DATA", "allow_unreliable": "--allow-unreliable"},
}
_SET_BY_COMMAND["fit-groups"] = {
    **{k: v for k, v in _SET_BY_COMMAND["fit"].items() if k not in ("fit_intercept",
                                                                     "allow_unreliable")},
    "fit_intercept": "--method (per-group fits keep the intercept)",
    "groups": "--groups-file or --keys-from-data", "by": "--by", "df": "DATA",
    "backend": "--backend", "workers": "--workers", "progress": "--progress",
    "spark": "--backend spark"}
_SET_BY_COMMAND["plan"] = {
    **{k: v for k, v in _SET_BY_COMMAND["fit"].items() if k not in ("ledger", "codebook",
                                                                     "allow_unreliable")},
    "n": "--n", "n_sim": "--n-sim", "seed": "--seed", "target_sd": "--target-sd",
    "target": "--target", "fit_intercept": "the formula", "codebook": "--codebook",
    "design": "--design", "ledger": "--ledger"}
#: the longest ``-o`` list of numbers and word
_OPTION_LIST_MAX = 16
_OPTION_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
_OPTION_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")


def _option_number(key: str, text: str, item: str) -> int | float:
    """One number of a ``-o`` value (ASCII digits only; finite; an integer literal stays an
    integer), else a usage error naming the option."""
    from dpreg._validation import ASCII_NUMBER

    text = text.strip()
    if _OPTION_INTEGER.fullmatch(text):
        return int(text)
    if not ASCII_NUMBER.fullmatch(text):
        _usage_error(f"-o {key}", _OPTION_EXPECTED, item, _not_a_number_why(text))
    exact = Decimal(text)
    value = float(exact)
    if not math.isfinite(value) or (value == 0 and exact != 0):
        _usage_error(f"-o {key}", _OPTION_EXPECTED, item,
                     " (it does not fit a double: it would become inf or 0)")
    return value


_OPTION_EXPECTED = (f"a number (ASCII digits), true, false, none, a word such as wide, or a "
                    f"list of at most {_OPTION_LIST_MAX} numbers such as [-3, 3]")


def _option_value(key: str, raw: str, item: str) -> Any:
    """A ``-o`` value by whitelist: a number, ``true``/``false``, ``none``/``null``, a word
    (an enumerated choice such as ``wide``, ``all``, ``add-remove``) or a flat list of
    numbers ``[a, b, ...]``; nothing else is passed to the library (never evaluated)."""
    text = raw.strip()
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if low.lstrip("+-") in ("inf", "infinity", "nan"):
        _usage_error(f"-o {key}", _OPTION_EXPECTED, item, " (not a finite number)")
    if _OPTION_WORD.fullmatch(text):
        return text
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        parts = [] if not inner else inner.split(",")
        if len(parts) > _OPTION_LIST_MAX:
            _usage_error(f"-o {key}", _OPTION_EXPECTED, item,
                         f" (a list of more than {_OPTION_LIST_MAX} numbers)")
        return [_option_number(key, p, item) for p in parts]
    return _option_number(key, text, item)


def parse_options(items: list[str] | None, *, command: str = "fit") -> dict[str, Any]:
    """``["theta=0.02", "pairs=10", "median=wide"]`` -> typed values, each read by whitelist
    (:func:`_option_value`); a key the command sets through its own option (``bounds``,
    ``epsilon``, ``random_state``, ...) or a value outside the whitelist is a usage error
    (exit 2) naming the option.  The budget is ``--epsilon``/``--delta`` only: no method
    option is a privacy parameter (dp-gd's zCDP variant runs at ρ = ε²/2)."""
    own = _SET_BY_COMMAND[command]
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise typer.BadParameter(f"expected KEY=VALUE; got {item!r}", param_hint="--option")
        if key in own:
            _usage(f"-o {key} is not a method option: dpreg {command} sets it; use {own[key]}")
        out[key] = _option_value(key, raw, item)
    return out


_INFINITY = frozenset({"inf", "+inf", "infinity", "+infinity"})
_NOT_PRIVATE_HELP = ("Allow --epsilon inf or above the cap 100 (the exact, NOT PRIVATE result, "
                     "labelled so in every output) and --delta in [0.5, 1).")
#: smallest positive δ accepted (the smallest normal double): below it δ is rounded, and
#: 1e-400 would silently become 0 -- pure DP, a different claim
DELTA_MIN = sys.float_info.min

def _check_range(value: float | None, option: str, *, low: float, high: float | None = None,
                 open_low: bool = False, open_high: bool = True, integer: bool = False) -> None:
    """A numeric option of the CLI itself in its range, else a usage error (exit 2) naming the
    option, the range and what was received (``None``: not given)."""
    if value is None:
        return
    ok = (value > low if open_low else value >= low) and (
        high is None or (value < high if open_high else value <= high)) and not (
        isinstance(value, float) and math.isnan(value))
    if ok:
        return
    what = "an integer" if integer else "a number"
    rng = (f"{low:g} {'<' if open_low else '<='} {option.lstrip('-').upper()}"
           + ("" if high is None else f" {'<' if open_high else '<='} {high:g}"))
    _usage_error(option, f"{what} with {rng}", str(value))


def _check_choice(value: str, option: str, choices: tuple[str, ...]) -> None:
    """An enumerated option of the CLI: a usage error (exit 2) with a did-you-mean."""
    if value in choices:
        return
    from dpreg._validation import did_you_mean

    _usage_error(option, "one of " + ", ".join(choices), value,
                 did_you_mean(value, choices))

def _read_number(raw: str, option: str, expected: str) -> Decimal | None:
    """The exact decimal value of ``raw`` (``None`` for inf/infinity); anything that is not a
    plain decimal number (nan, -inf, hex, words) is a usage error."""
    text = str(raw).strip()
    if text.lower() in _INFINITY:
        return None
    from dpreg._validation import ASCII_NUMBER  # the one whitelist of typed numbers

    if not ASCII_NUMBER.fullmatch(text):
        _usage_error(option, expected, raw, _not_a_number_why(text))
    return Decimal(text)


def parse_epsilon(raw: str, *, option: str = "--epsilon", not_private: bool = False,
                  has_flag: bool = True) -> float:
    """ε from the command line: a number with 1e-100 <= ε <= :data:`~dpreg.privacy.EPSILON_MAX`
    (100; above it the noise is below the printed precision of the outputs: no privacy in
    practice); ``inf``/``infinity`` or a finite ε above the cap only with ``not_private``, and
    then it is ``inf`` (any literal that overflows a double such as ``1e309`` is refused even
    then: write ``inf``).  ``has_flag``: the command has ``--not-private`` (the messages then
    mention it)."""
    from dpreg._validation import EPSILON_MAX, PRIVACY_PARAM_MIN

    expected = f"a number with {PRIVACY_PARAM_MIN:g} <= EPS <= {EPSILON_MAX:g} (e.g. 1)"
    exact = _read_number(raw, option, expected)
    if exact is None:
        if not_private:
            return math.inf
        _usage_error(option, expected, raw, ": an infinite epsilon releases the exact, NOT "
                     "PRIVATE result" + ("; add --not-private if that is what you want"
                                         if has_flag else ""))
    value = float(exact)
    if math.isinf(value):
        _usage_error(option, expected, raw, ": it overflows a double to inf, which would "
                     "release the exact, NOT PRIVATE result" + (
                         " (for a non-private reference run write --epsilon inf "
                         "--not-private)" if has_flag else ""))
    if exact <= 0 or value < PRIVACY_PARAM_MIN:
        _usage_error(option, expected, raw, " (it underflows to 0 as a double)"
                     if exact > 0 and value == 0 else "")
    if exact > Decimal(repr(EPSILON_MAX)):
        if not_private:
            _cli_warning(f"{option} {str(raw).strip()} is above the cap {EPSILON_MAX:g}: run as "
                         f"{option} inf (the exact, NOT PRIVATE result)")
            return math.inf
        _usage_error(option, expected, raw, f": above {EPSILON_MAX:g} the noise is below the "
                     "printed precision of the outputs, which is no privacy in practice" + (
                         "; add --not-private for a NOT PRIVATE reference run (the exact "
                         "result, as with --epsilon inf)" if has_flag else ""))
    return value


def parse_delta(raw: str | None, *, option: str = "--delta", not_private: bool = False
                ) -> float | None:
    """δ from the command line: 0 or a number in [2.2e-308, 0.5) (up to 1 with
    ``not_private``), exact as typed up to double rounding -- never silently 0."""
    if raw is None:
        return None
    top = "1" if not_private else "0.5"
    expected = f"a number with 0 <= DELTA < {top}, much smaller than 1/n (e.g. 1e-6)"
    exact = _read_number(raw, option, expected)
    if exact is None or exact < 0 or exact >= 1:
        _usage_error(option, expected, raw, " (delta is a probability)")
    value = float(exact) + 0.0  # -0 becomes 0
    if exact > 0 and value < DELTA_MIN:
        _usage_error(option, expected, raw, f": it is below the smallest normal double "
                     f"({DELTA_MIN:.3g}) and would be rounded"
                     + (" to 0 -- pure DP, a different claim" if value == 0 else "")
                     + "; write 0 for pure DP")
    if exact >= Decimal("0.5") and not not_private:
        _usage_error(option, expected, raw, ": with delta >= 0.5 a mechanism may publish "
                     "records outright with that probability, which is no privacy guarantee; "
                     "add --not-private to run anyway")
    return value
