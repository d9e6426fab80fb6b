"""Experiment harness: reproduce the five papers' experiments and benchmark every method.

* Specs are data: TOML files in ``dpreg/bench/specs`` (:func:`list_specs`, :func:`load_spec`).
* :func:`reproduce` runs one (seeded, resumable, optionally in several processes) and writes
  ``results.csv`` (one tidy row per cell × data set × method, each with the spec hash, seed
  entropy, spawn key and dpreg version), ``summary.csv``, figures (PNG + the plotted numbers as
  CSV), ``claims.csv`` (the papers' claims with verdicts) and ``meta.json``.
* ``docs/results.md`` is built from the summaries by ``studies/report.py`` in the source repository
  (``make results-page``; not part of the installed package).

Command line: ``dpreg reproduce --list``, ``dpreg reproduce NAME [--quick] [--out DIR]
[--resume] [--workers N] [--json]``.

Every experiment re-runs mechanisms many times on the same data to measure their error
distribution; each re-run is a full release (an evaluation device for simulated or public
benchmark data), so no ledger is charged.
"""

from dpreg.bench.runner import DEFAULT_OUT, RunResult, reproduce
from dpreg.bench.spec import Spec, list_specs, load_spec, parse_spec, spec_names

__all__ = ["reproduce", "RunResult", "DEFAULT_OUT", "Spec", "list_specs", "load_spec",
           "parse_spec", "spec_names"]
