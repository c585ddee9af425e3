"""``cdclake maintain``: compact, vacuum and bound the bookkeeping of every table of a target."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from cdclake.cli.common import (
    BatchesRetention,
    KeepBatches,
    MasterOption,
    QuarantineRetention,
    TombstoneRetention,
    VerboseOption,
    _spark,
    app,
    console,
    duration,
    err,
    one_line_errors,
)
from cdclake.target_layout import KEEP_BATCHES

if TYPE_CHECKING:
    from cdclake.ops.maintain import TableMaintenance


@app.command()
def maintain(
    target: Annotated[str, typer.Option(help="Folder of the Delta tables (path or s3a:// URI)")],
    compact: Annotated[bool, typer.Option(help="Compact small files (OPTIMIZE)")] = True,
    vacuum: Annotated[bool, typer.Option(help="Delete unreferenced files (VACUUM)")] = True,
    retention_hours: Annotated[
        float | None,
        typer.Option(
            min=0,
            help="VACUUM keeps files younger than this (default: each table's own, Delta's 7 "
            "days); time travel to older versions then fails",
        ),
    ] = None,
    batches_retention: BatchesRetention = None,
    quarantine_retention: QuarantineRetention = None,
    tombstone_retention: TombstoneRetention = None,
    keep_batches: KeepBatches = KEEP_BATCHES,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per table")] = False,
    master: MasterOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Compact small files, vacuum unreferenced ones and bound cdclake's own records, for every
    Delta table under the target; a table per line with what was done. Safe beside a running
    stream: a table that meets a concurrent write is reported (conflict) and left as it was."""
    from cdclake.ops.maintain import RETENTION_CHECK, Retention
    from cdclake.ops.maintain import maintain as run

    with one_line_errors(f"maintaining {target}"):
        retention = Retention(
            vacuum_hours=retention_hours,
            batches=duration(batches_retention, "--batches-retention"),
            quarantine=duration(quarantine_retention, "--quarantine-retention"),
            tombstones=duration(tombstone_retention, "--tombstone-retention"),
            keep_batches=keep_batches,
        )
        spark = _spark(master, verbose)
        if retention_hours is not None:  # asked for explicitly: Delta's check would refuse it
            spark.conf.set(RETENTION_CHECK, "false")
        table = _table()

        def shown(done: TableMaintenance) -> None:
            if as_json:
                typer.echo(json.dumps(done.to_json()))
            else:
                _add_row(table, done)

        report = run(spark, target, compact=compact, vacuum=vacuum, retention=retention,
                     on_table=shown)  # fmt: skip
    if not report:
        err.print(f"[red]error:[/red] no Delta table under {escape(target)}", highlight=False)
        raise typer.Exit(2)
    if not as_json:
        console.print(table)
    if any(t.outcome == "failed" for t in report):
        raise typer.Exit(1)


def _table() -> Table:
    t = Table(title="cdclake maintain")
    for col in ("table", "files", "MB", "rows removed", "files vacuumed", "s", "outcome"):
        t.add_column(col, justify="left" if col in ("table", "outcome") else "right")
    return t


def _add_row(t: Table, m: TableMaintenance) -> None:
    t.add_row(
        escape(m.table),
        f"{m.files_before} → {m.files_after}",
        f"{m.bytes_before / 1e6:.2f} → {m.bytes_after / 1e6:.2f}",
        str(m.rows_removed),
        str(m.files_vacuumed),
        f"{m.seconds:.1f}",
        escape(m.outcome if m.outcome == "ok" else f"{m.outcome}: {m.reason}"),
    )
