"""Experiment specifications: TOML files shipped in ``dpreg/bench/specs``.

A spec is data: which generator or real data set, which methods with which hyperparameters,
the grid (panels of cells), how many data sets and trials, and the seed.  Every spec has the
top-level keys

``name``, ``title``, ``paper``, ``figure``, ``kind``, ``seed``, ``summary`` (one line) and
``notes`` (free text: assumptions, stand-ins, deviations),

plus kind-specific tables (see the spec files and :mod:`dpreg.bench.kinds`).  Keys are
parsed by whitelist: every key of every table (and of the top level and ``[quick]``) must be
one the spec's kind reads (:attr:`dpreg.bench.kinds.Kind.tables`), else :func:`parse_spec`
raises :class:`~dpreg.exceptions.UnknownNameError` naming the table, the key, a did-you-mean
and the allowed keys before anything runs.  A ``[quick]``
table holds overrides merged over the rest for ``--quick`` runs (tables merge key by key; lists
and values are replaced).  The **spec hash** identifies the effective spec (after the quick
overrides): rows of a results CSV carry it, and a resumed run skips cells whose rows exist for
the same hash.
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from dpreg.exceptions import InvalidInputError, UnknownNameError

__all__ = ["Spec", "load_spec", "list_specs", "spec_names", "parse_spec"]

_REQUIRED = ("name", "title", "paper", "figure", "kind", "seed", "summary")


@dataclass(frozen=True)
class Spec:
    """An effective experiment spec (quick overrides applied when ``quick``)."""

    name: str
    kind: str
    seed: int
    data: dict[str, Any] = field(repr=False)
    quick: bool = False

    @property
    def title(self) -> str:
        return str(self.data["title"])

    @property
    def paper(self) -> str:
        return str(self.data["paper"])

    @property
    def figure(self) -> str:
        return str(self.data["figure"])

    @property
    def summary(self) -> str:
        return str(self.data["summary"])

    @property
    def notes(self) -> str:
        return str(self.data.get("notes", "")).strip()

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def __getitem__(self, key: str) -> Any:
        try:
            return self.data[key]
        except KeyError:
            raise InvalidInputError(f"spec {self.name!r} has no key {key!r}") from None

    @property
    def hash(self) -> str:
        """First 12 hex digits of the SHA-256 of the canonical JSON of the effective spec."""
        text = json.dumps(self.data, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def parse_spec(text: str, *, quick: bool = False, source: str = "<string>") -> Spec:
    """Parse TOML text into a :class:`Spec` (validating the common keys)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInputError(f"{source}: not valid TOML ({exc})") from None
    missing = [k for k in _REQUIRED if k not in raw]
    if missing:
        raise InvalidInputError(f"{source}: missing required keys {missing}")
    quick_over = raw.pop("quick", {})
    if not isinstance(quick_over, dict):
        raise InvalidInputError(f"{source}: [quick] must be a table")
    from dpreg.bench.kinds import KINDS

    kind = raw["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        raise InvalidInputError(f"{source}: kind must be one of {sorted(KINDS)}; got {kind!r}")
    # every key of every table must be one the kind reads -- in the spec as written and with
    # its quick overrides merged, whichever run this is -- before anything runs (a typo such
    # as ``trails`` never silently runs the default)
    KINDS[kind].check_keys(raw, source)
    KINDS[kind].check_keys(quick_over, source, within="quick")
    data = _merge(raw, quick_over) if quick else raw
    seed = data["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidInputError(f"{source}: seed must be a non-negative integer; got {seed!r}")
    if data["kind"] != kind:
        raise InvalidInputError(f"{source}: [quick] may not change the kind")
    spec = Spec(str(data["name"]), str(kind), int(seed), data, quick)
    KINDS[kind].validate(spec)
    return spec


def _spec_files() -> dict[str, Any]:
    folder = resources.files("dpreg.bench").joinpath("specs")
    out = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".toml"):
            out[entry.name[:-5]] = entry
    return dict(sorted(out.items()))


def spec_names() -> list[str]:
    """Names of the shipped specs (``dpreg reproduce --list``)."""
    return list(_spec_files())


def load_spec(name: str, *, quick: bool = False) -> Spec:
    """Load a shipped spec by name (e.g. ``"alabi-fig5"``)."""
    files = _spec_files()
    if name not in files:
        from dpreg._validation import did_you_mean

        raise UnknownNameError(
            f"unknown reproduction {name!r}{did_you_mean(str(name), list(files))}; "
            f"available: {', '.join(files) or 'none'}"
        )
    spec = parse_spec(files[name].read_text(encoding="utf-8"), quick=quick,
                      source=f"specs/{name}.toml")
    if spec.name != name:
        raise InvalidInputError(f"specs/{name}.toml declares name={spec.name!r}")
    return spec


def list_specs() -> list[dict[str, str]]:
    """One entry per shipped spec: name, paper, figure, kind, summary."""
    out = []
    for name in spec_names():
        s = load_spec(name)
        out.append({"name": s.name, "paper": s.paper, "figure": s.figure, "kind": s.kind,
                    "summary": s.summary})
    return out
