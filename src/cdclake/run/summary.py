"""Tables a person reads: the per-table summary of a run and the reconciliation line."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from cdclake.apply.results import STEPS, TABLE_STEPS, BatchResult


def summary_table(result: BatchResult, title: str = "cdclake apply") -> Table:
    t = Table(title=title)
    for col in (
        "table",
        "key",
        "changes",
        "inserted",
        "updated",
        "deleted",
        "ignored (stale)",
        "rows now",
    ):
        t.add_column(col, justify="left" if col in ("table", "key") else "right")
    for name, r in sorted(result.tables.items()):
        key = ",".join(r.key_columns) or "(none: whole row)"
        t.add_row(
            name,
            f"{key} ({r.key_source})" if r.key_columns else key,
            str(r.changes),
            str(r.inserted),
            str(r.updated),
            str(r.deleted + r.truncated),
            str(r.ignored),
            "" if r.rows_now is None else str(r.rows_now),
        )
    return t


def reconciliation(result: BatchResult) -> str:
    parts = [
        f"changes {result.changes} = applied {result.applied} + ignored {result.ignored}",
        f"control {result.control}",
        f"quarantined {result.quarantined}",
    ]
    if result.excluded:
        parts.append(f"excluded by --include/--exclude {result.excluded}")
    if result.pending or result.released_from_pending:
        parts.append(
            f"waiting for their transaction {result.pending} "
            f"(of earlier batches, applied now: {result.released_from_pending})"
        )
    head = f"messages {result.messages}; " if result.messages is not None else ""
    return head + "; ".join(parts)


def timing(result: BatchResult, shown: float = 0.05) -> str:
    """The batch's wall time by step (:data:`cdclake.apply.results.STEPS`), with what its
    tables' writes took of theirs, steps of under ``shown`` seconds left out: ``4.1 s: decode
    2.0 s, tables 1.9 s (tombstones 0.2 s, write 1.5 s), record 0.1 s``; "" if not timed."""
    if not result.seconds:
        return ""
    tables = result.table_seconds()
    parts = []
    for step in STEPS:
        took = result.seconds.get(step, 0.0)
        if took < shown:
            continue
        inner = [f"{s} {tables[s]:.1f} s" for s in TABLE_STEPS if tables.get(s, 0.0) >= shown]
        more = f" ({', '.join(inner)})" if step == "tables" and inner else ""
        parts.append(f"{step} {took:.1f} s{more}")
    return f"{sum(result.seconds.values()):.1f} s: " + ", ".join(parts)


def print_summary(result: BatchResult, console: Console | None = None) -> None:
    console = console or Console()
    console.print(summary_table(result))
    console.print(reconciliation(result))
    if result.seconds:
        console.print(f"time {timing(result)}", highlight=False)
    by_input = sorted(name for name, r in result.tables.items() if r.input_ordered)
    if by_input:
        names = ", ".join(by_input)
        console.print(f"ordered by input order only (their source gives no position): {names}")
    if result.timed_out:
        console.print(
            f"applied incomplete after --consistent-timeout: {len(result.timed_out)} "
            f"transaction(s): {', '.join(result.timed_out[:10])}",
            soft_wrap=True,
            highlight=False,
        )
    if result.quarantine_reasons:
        q = Table(title="quarantined (see <target>/_cdc_quarantine)")
        q.add_column("reason")
        q.add_column("count", justify="right")
        for reason, n in sorted(result.quarantine_reasons.items(), key=lambda kv: -kv[1]):
            q.add_row(reason, str(n))
        console.print(q)
