"""``cdclake status`` and ``cdclake report``: where every table of a target stands."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from cdclake.cli.common import app, console, err, one_line_errors
from cdclake.errors import ConfigError

if TYPE_CHECKING:
    from cdclake.ops.status import Status, TableStatus

FORMATS = ("table", "json", "prometheus")


@app.command()
def status(
    target: Annotated[str, typer.Option(help="Folder of the Delta tables (path or s3a:// URI)")],
    output: Annotated[
        str,
        typer.Option(
            "--format", help="table, json, or prometheus (text format, for a textfile collector)"
        ),
    ] = "table",
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json")] = False,
    max_staleness: Annotated[
        str | None,
        typer.Option(help="Exit with status 1 when a table is staler than this (90s, 15m, 2h)"),
    ] = None,
) -> None:
    """Per table: rows, key, SCD type, last position, freshness, quarantine; then the stream.
    Reads the Delta logs and cdclake's own tables directly (delta-rs): no Spark."""
    from cdclake.ops.status import bookkeeping_sizes, parse_duration, target_status

    output = "json" if as_json else output
    with one_line_errors(f"reading {target}"):
        if output not in FORMATS:
            raise ConfigError(f"--format {output!r}: expected one of {', '.join(FORMATS)}")
        limit = parse_duration(max_staleness) if max_staleness is not None else None
        s = target_status(target)
        own = bookkeeping_sizes(target, [t.table for t in s.tables])
    if output == "json":
        typer.echo(json.dumps({**s.to_json(), "bookkeeping": own}, sort_keys=False))
    elif output == "prometheus":
        from cdclake.ops.metrics import StatusGauges, exposition

        typer.echo(exposition(StatusGauges(s)), nl=False)
    else:
        print_status(s)
        if own:
            console.print(bookkeeping_table(own))
    stale = s.stale(limit) if limit is not None else []
    if stale:
        names = ", ".join(t.table for t in stale)
        err.print(f"stale: {names} (behind their source by more than {max_staleness})")
        raise typer.Exit(1)


def bookkeeping_table(own: dict[str, dict[str, int | None]]) -> Table:
    """Rows, files and MB of cdclake's own tables (``cdclake maintain`` bounds them)."""
    t = Table(title="cdclake's own tables (cdclake maintain compacts and bounds them)")
    for col in ("table", "rows", "files", "MB"):
        t.add_column(col, justify="left" if col == "table" else "right")
    for name, size in own.items():
        rows = "?" if size["rows"] is None else str(size["rows"])
        t.add_row(name, rows, str(size["files"]), f"{(size['bytes'] or 0) / 1e6:.2f}")
    return t


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if abs(seconds) >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def status_table(s: Status) -> Table:
    """The per-table rows of :func:`status` as a rich table."""
    t = Table(title=f"cdclake status at {s.now:%Y-%m-%d %H:%M:%S %Z}")
    for col in ("table", "rows", "key", "scd", "last position", "source time", "behind",
                "applied", "ignored", "quarantined", "last DDL"):  # fmt: skip
        t.add_column(col, justify="left" if col in ("table", "key", "last DDL") else "right")
    for r in s.tables:
        key = ",".join(r.key_columns) or "(none: whole row)"
        t.add_row(
            r.table,
            "?" if r.rows is None else str(r.rows),
            f"{key} ({r.key_source})" if r.key_columns else key,
            str(r.scd_type),
            _position_cell(r),
            f"{r.last_source_ts:%Y-%m-%d %H:%M:%S}" if r.last_source_ts else "",
            _age(r.freshness_seconds),
            str(r.recent_applied),
            str(r.recent_ignored),
            f"{r.recent_quarantined} ({r.quarantined} in all)",
            (r.last_ddl or "")[:60],
        )
    return t


def _position_cell(r: TableStatus) -> str:
    """The last position; a table ordered by input order only says so."""
    text = json.dumps(r.last_position) if r.last_position else ""
    return f"{text} (input order)" if r.ordering == "input" else text


def print_status(s: Status) -> None:
    console.print(status_table(s))
    unknown = [t.table for t in s.tables if t.rows is None]
    if unknown:
        from cdclake.ops.status import ROWS_UNKNOWN

        console.print(f"rows ?: {ROWS_UNKNOWN}: {', '.join(unknown)}", highlight=False)
    st = s.stream
    lag = (
        f"; lag {st['offsets_behind']} offsets, {st['seconds_behind']:.1f} s"
        if st.get("offsets_behind") is not None and st.get("seconds_behind") is not None
        else ""
    )
    last = st.get("last_batch_at")
    batch = f" {st['last_batch_id']}" if st.get("last_batch_id") is not None else ""
    console.print(
        f"last batch{batch}: {last:%Y-%m-%d %H:%M:%S}{lag}" if last else "no batch recorded yet",
        highlight=False,
    )
    c = s.consistency
    if c:
        late = f"; applied incomplete by the timeout: {', '.join(c['timed_out'])}"
        console.print(
            f"consistent: cut {c['cut']} (batch {c['batch_id']}, source time "
            f"{c['source_ts']:%Y-%m-%d %H:%M:%S}); {c['held']} changes wait for their "
            f"transaction{late if c['timed_out'] else ''} (cdclake snapshot)"
            if c["source_ts"]
            else f"consistent: cut {c['cut']}; {c['held']} changes wait for their transaction",
            highlight=False,
            soft_wrap=True,
        )
    if s.quarantine:
        q = Table(title="quarantined (cdclake quarantine list)")
        q.add_column("reason")
        q.add_column("count", justify="right")
        for reason, n in s.quarantine.items():
            q.add_row(reason, str(n))
        console.print(q)


@app.command()
def report(
    target: Annotated[str, typer.Option(help="Folder of the Delta tables (path or s3a:// URI)")],
    out: Annotated[str, typer.Option(help="The HTML file to write")] = "report.html",
) -> None:
    """One self-contained HTML file: throughput, lag, freshness, quarantine, the status table."""
    from cdclake.ops.html_report import write_report

    with one_line_errors(f"reading {target}"):
        write_report(target, out)
    console.print(f"wrote {out}", highlight=False)
