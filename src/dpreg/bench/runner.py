"""The resumable, seeded experiment runner behind ``dpreg reproduce``.

Randomness.  The spec's ``seed`` is the entropy of a root :class:`numpy.random.SeedSequence`;
cell i uses the child ``SeedSequence(seed, spawn_key=(i,))`` -- exactly ``root.spawn(N)[i]`` --
and inside a cell every data set, method and (where a method is not vectorised) trial gets its
own ``.spawn`` child.  A cell's numbers therefore do not depend on which other cells ran, in
which order or in how many processes.  Each result row records the spec hash, the seed entropy,
its spawn key and the dpreg version.

Resuming.  Rows are appended to ``results.csv`` as soon as a cell finishes; with ``resume`` a
cell whose rows already exist for the same spec hash is skipped.  Without ``resume`` an existing
``results.csv`` is replaced.

Evaluation device.  Experiments re-run mechanisms many times on the same data set to measure
their error distribution.  Each re-run is a full release, so this is only done on simulated or
public benchmark data and no ledger is charged.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpreg._version import __version__
from dpreg.bench.kinds import KINDS
from dpreg.bench.spec import Spec, load_spec
from dpreg.exceptions import InvalidInputError

__all__ = ["reproduce", "RunResult", "META_COLUMNS", "DEFAULT_OUT", "cell_seed_sequence",
           "output_dir"]

DEFAULT_OUT = Path("bench-output") / "reproduce"
META_COLUMNS = ("spec", "spec_hash", "seed_entropy", "spawn_key", "dpreg_version", "cell",
                "panel")

Progress = Callable[[int, int, str], None]


@dataclass
class RunResult:
    """What a reproduction produced (paths are inside ``out_dir``)."""

    name: str
    spec_hash: str
    quick: bool
    out_dir: Path
    results_csv: Path
    summary_csv: Path
    claims_csv: Path
    meta_json: Path
    figures: list[Path]
    cells_total: int
    cells_run: int
    cells_skipped: int
    seconds: float
    summary: pd.DataFrame = field(repr=False)
    claims: pd.DataFrame = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "spec_hash": self.spec_hash, "quick": self.quick,
            "out_dir": str(self.out_dir), "results": str(self.results_csv),
            "summary": str(self.summary_csv), "claims": str(self.claims_csv),
            "meta": str(self.meta_json), "figures": [str(p) for p in self.figures],
            "cells_total": self.cells_total, "cells_run": self.cells_run,
            "cells_skipped": self.cells_skipped, "seconds": round(self.seconds, 2),
            "verdicts": self.claims[["claim_id", "verdict"]].to_dict(orient="records")
            if len(self.claims) else [],
            "evidence": _quick_note() if self.quick else "full grid",
        }


def _quick_note() -> str:
    from dpreg.bench.claims import QUICK_NOTE

    return QUICK_NOTE


def cell_seed_sequence(seed: int, cell: int) -> np.random.SeedSequence:
    """Child ``cell`` of the root sequence (equal to ``SeedSequence(seed).spawn(N)[cell]``)."""
    return np.random.SeedSequence(seed, spawn_key=(cell,))


def output_dir(out: str | Path, spec: Spec) -> Path:
    """``out/NAME`` (``out/NAME-quick`` for quick runs)."""
    return Path(out) / (spec.name + ("-quick" if spec.quick else ""))


def _run_cell(spec: Spec, cell: dict[str, Any]) -> tuple[int, list[dict[str, Any]], float]:
    # One BLAS thread per process: the cells are many small vector operations, and a
    # multi-threaded BLAS on a shared 2-core machine spends more time synchronising than
    # computing (measured: an n = 15848 Fig. 5 cell ran 2.2x faster single-threaded).
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    kind = KINDS[spec.kind]()
    t0 = time.perf_counter()
    with threadpool_limits(limits=1):
        rows = kind.run_cell(spec, cell, cell_seed_sequence(spec.seed, int(cell["cell"])))
    meta = {"spec": spec.name, "spec_hash": spec.hash, "seed_entropy": spec.seed,
            "dpreg_version": __version__, "cell": int(cell["cell"]), "panel": cell["panel"]}
    out = []
    for r in rows:
        key = f"{cell['cell']}" + (f"/{r['dataset']}" if "dataset" in r else "")
        out.append({**meta, "spawn_key": key, **r})
    return int(cell["cell"]), out, time.perf_counter() - t0


def _column_order(kind_columns: tuple[str, ...], frame: pd.DataFrame) -> list[str]:
    """Metadata columns, then every column the kind declares, then extras of the first cell
    (a later cell's undeclared columns are not written)."""
    cols = list(META_COLUMNS) + [c for c in kind_columns if c not in META_COLUMNS]
    return cols + [c for c in frame.columns if c not in cols]


def _append(path: Path, rows: list[dict[str, Any]], columns: list[str]) -> None:
    frame = pd.DataFrame(rows)
    for c in columns:
        if c not in frame.columns:
            frame[c] = np.nan
    frame = frame[columns]
    header = not path.exists() or path.stat().st_size == 0
    frame.to_csv(path, mode="a", header=header, index=False)


def _existing_cells(path: Path, spec_hash: str) -> tuple[set[int], list[str] | None]:
    if not path.exists() or path.stat().st_size == 0:
        return set(), None
    frame = pd.read_csv(path)
    if "spec_hash" not in frame.columns:
        return set(), None
    same = frame[frame["spec_hash"].astype(str) == spec_hash]
    return set(int(c) for c in same["cell"].unique()), list(frame.columns)


def reproduce(name: str | Spec, *, out: str | Path = DEFAULT_OUT, quick: bool = False,
              resume: bool = False, workers: int | None = 1,
              progress: Progress | None = None) -> RunResult:
    """Run a named reproduction and write CSVs, figures and claims under ``out/NAME``.

    Parameters
    ----------
    name:
        A shipped spec name (``dpreg.bench.spec_names()``) or a :class:`Spec`.
    out:
        Output root folder (default ``bench-output/reproduce``).
    quick:
        Use the spec's ``[quick]`` overrides (a reduced grid that runs in seconds).
    resume:
        Keep rows of ``results.csv`` with the same spec hash and skip their cells.
    workers:
        Processes for the cells (1 = in this process; ``None`` = ``os.cpu_count()``).
    progress:
        Optional callback ``progress(done, total, description)``.

    Needs the ``[repro]`` extra (statsmodels for the OLS references and data sets, matplotlib
    for the figures): checked before anything runs (:class:`~dpreg.exceptions.MissingExtraError`).
    """
    from dpreg._extras import require
    from dpreg.bench.claims import evaluate_claims

    for module in ("statsmodels.api", "matplotlib"):
        require(module, "the reproductions (dpreg.bench)", extra="repro")

    spec = name if isinstance(name, Spec) else load_spec(name, quick=quick)
    kind = KINDS[spec.kind]()
    folder = output_dir(out, spec)
    folder.mkdir(parents=True, exist_ok=True)
    results = folder / "results.csv"
    t_start, cpu_start = time.perf_counter(), _cpu_seconds()
    cells = kind.cells(spec)
    if not cells:
        raise InvalidInputError(f"spec {spec.name!r} has no cells")
    done: set[int] = set()
    columns: list[str] | None = None
    if resume:
        done, columns = _existing_cells(results, spec.hash)
        if columns is not None:
            frame = pd.read_csv(results)
            frame = frame[frame["spec_hash"].astype(str) == spec.hash]
            frame.to_csv(results, index=False)  # drop rows of other spec versions
    elif results.exists():
        results.unlink()
    pending = [c for c in cells if int(c["cell"]) not in done]
    pending.sort(key=lambda c: -float(c.get("cost", 1.0)))
    total = len(cells)
    finished = total - len(pending)
    if progress:
        progress(finished, total, f"{spec.name}: {finished}/{total} cells")

    def handle(rows: list[dict[str, Any]]) -> None:
        nonlocal columns, finished
        if rows:
            if columns is None:
                columns = _column_order(kind.columns, pd.DataFrame(rows))
            _append(results, rows, columns)
        finished += 1
        if progress:
            progress(finished, total, f"{spec.name}: {finished}/{total} cells")

    n_workers = (os.cpu_count() or 1) if workers is None else max(1, int(workers))
    if n_workers == 1 or len(pending) <= 1:
        for cell in pending:
            _, rows, _ = _run_cell(spec, cell)
            handle(rows)
    else:
        with ProcessPoolExecutor(max_workers=min(n_workers, len(pending)),
                                 mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(_run_cell, spec, cell) for cell in pending]
            for fut in as_completed(futures):
                _, rows, _ = fut.result()
                handle(rows)

    frame = pd.read_csv(results) if results.exists() else pd.DataFrame()
    if len(frame):
        frame = frame.sort_values([c for c in ("cell", "dataset", "method") if c in frame.columns],
                                  kind="stable").reset_index(drop=True)
        frame.to_csv(results, index=False)
    summary = kind.summarise(spec, frame)
    summary_csv = folder / "summary.csv"
    summary.to_csv(summary_csv, index=False)
    figures = kind.figures(spec, frame, summary, folder)
    suffix = "-quick" if spec.quick else ""
    lookup_root = folder.parent

    def lookup(sibling: str) -> pd.DataFrame | None:
        path = lookup_root / (sibling + suffix) / "summary.csv"
        return pd.read_csv(path) if path.exists() else None

    claims = evaluate_claims(spec, frame, summary, lookup)
    claims_csv = folder / "claims.csv"
    claims.to_csv(claims_csv, index=False)
    seconds = time.perf_counter() - t_start
    meta = {
        "name": spec.name, "title": spec.title, "paper": spec.paper, "figure": spec.figure,
        "kind": spec.kind, "summary": spec.summary, "notes": spec.notes,
        "spec_hash": spec.hash, "seed": spec.seed, "quick": spec.quick,
        "dpreg_version": __version__, "cells": total, "cells_run": len(pending),
        "rows": int(len(frame)), "seconds": round(seconds, 2),
        "cpu_seconds": round(_cpu_seconds() - cpu_start, 2), "workers": n_workers,
        "figures": [p.name for p in figures],
        "evidence": _quick_note() if spec.quick else "full grid",
    }
    meta_json = folder / "meta.json"
    meta_json.write_text(json.dumps(meta, indent=2, default=_json_default) + "\n")
    return RunResult(spec.name, spec.hash, spec.quick, folder, results, summary_csv, claims_csv,
                     meta_json, figures, total, len(pending), total - len(pending), seconds,
                     summary, claims)


def _cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (the cell workers).

    On a shared machine the wall time mostly measures the other users' load; the CPU time
    (divided by the number of workers) is what the run would take on idle cores.
    """
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer, np.floating)):
        v = o.item()
        return v if not (isinstance(v, float) and not math.isfinite(v)) else str(v)
    return str(o)
