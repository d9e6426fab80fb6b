"""Rendering audit results: plain text, a rich table, JSON-ready dictionaries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpreg.audit.estimate import AuditResult

__all__ = ["results_table", "results_text", "results_json", "COLUMNS"]

COLUMNS = ("method", "pair", "N", "claim", "ε claimed", "ε_LCB", "ε_LCB/ε", "result")


def _row(r: AuditResult) -> tuple[str, ...]:
    return (r.method, r.pair, f"{r.samples:,}", str(r.claim), f"{r.claim.epsilon:.4g}",
            f"{r.epsilon_lcb:.4f}", f"{r.ratio:.3f}", r.verdict)


def results_table(results: Sequence[AuditResult], title: str = "dpreg privacy audit") -> Any:
    """A :class:`rich.table.Table` with one row per audited (method, pair) (rich: the ``[audit]``
    or ``[cli]`` extra)."""
    from dpreg._extras import require

    Table = require("rich.table", "the audit results table", extra="audit").Table

    alphas = sorted({r.alpha for r in results})
    cap = f"α = {', '.join(f'{a:g}' for a in alphas)}" if alphas else ""
    table = Table(title=title, caption=cap)
    for col in COLUMNS:
        table.add_column(col, justify="right" if col in ("N", "ε claimed", "ε_LCB", "ε_LCB/ε")
                         else "left")
    for r in results:
        row = list(_row(r))
        row[-1] = "[green]PASS[/]" if r.passed else "[bold red]FAIL[/]"
        table.add_row(*row)
    return table


def results_text(results: Sequence[AuditResult]) -> str:
    """Markdown table (for reports and the closing note)."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(_row(r)) + " |" for r in results]
    return "\n".join(lines)


def results_json(results: Sequence[AuditResult]) -> list[dict[str, Any]]:
    return [r.as_dict() for r in results]


def load_results(folder: str) -> list[dict[str, Any]]:
    """All result dictionaries in the JSON files of ``folder`` (as written by the suite)."""
    import json
    from pathlib import Path

    rows: list[dict[str, Any]] = []
    for f in sorted(Path(folder).glob("*.json")):
        rows += json.loads(f.read_text())
    return rows


def rows_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown table of result dictionaries, in the registry's order."""
    from dpreg.audit.registry import list_targets

    order = {n: i for i, n in enumerate(list_targets())}
    rows = sorted(rows, key=lambda r: (order.get(r["method"], 10**6), r["method"]))
    lines = ["| method | pair | N | claim | ε claimed | ε_LCB | ε_LCB/ε | result | seconds |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['method']} | {r['pair']} | {r['samples']:,} | {r['claim']} | "
                     f"{r['epsilon']:.4g} | {r['epsilon_lcb']:.4f} | {r['ratio']:.3f} | "
                     f"{r['verdict']} | {r['seconds']:.1f} |")
    n_fail = sum(not r["passed"] for r in rows)
    lines.append("")
    lines.append(f"{len(rows)} audits, {len(rows) - n_fail} PASS, {n_fail} FAIL "
                 f"(α = {rows[0]['alpha']:g})" if rows else "no results")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m dpreg.audit.report FOLDER``: print the suite's table; exit 1 on a FAIL."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    folder = args[0] if args else "audit-output"
    rows = load_results(folder)
    text = rows_markdown(rows)
    print(text)
    from pathlib import Path

    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / "audit-table.md").write_text(text + "\n")
    return 0 if rows and all(r["passed"] for r in rows) else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
