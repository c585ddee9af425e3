"""``cdclake quarantine list|show|replay``: what was rejected, why, and getting it in."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from cdclake import formats
from cdclake.cli.common import (
    PrimaryKeys,
    SourceTimezone,
    Tinyint1AsBoolean,
    _spark,
    app,
    console,
    one_line_errors,
)

if TYPE_CHECKING:
    from cdclake.ops.quarantine import Selection

quarantine_app = typer.Typer(
    rich_markup_mode=None,
    no_args_is_help=True,
    help="Inspect the quarantine and replay what is in it.",
)
app.add_typer(quarantine_app, name="quarantine")

Target = Annotated[str, typer.Option(help="Folder of the Delta tables")]
Reason = Annotated[str | None, typer.Option(help="Only reasons matching this glob")]
TableGlob = Annotated[str | None, typer.Option("--table", help="Only tables matching this glob")]
Since = Annotated[str | None, typer.Option(help="Only records quarantined at or after (ISO)")]


def _selection(reason: str | None, table: str | None, since: str | None) -> Selection:
    from cdclake.ops.quarantine import Selection

    return Selection(reason=reason, table=table, since=since)


@quarantine_app.command("list")
def list_(
    target: Target, reason: Reason = None, table: TableGlob = None, since: Since = None
) -> None:
    """Counts of quarantined records by reason and table (read directly with delta-rs: no
    Spark)."""
    from cdclake.ops.quarantine import counts

    with one_line_errors(f"reading {target}"):
        rows = counts(target, _selection(reason, table, since))
    t = Table(title=f"quarantined under {target}")
    for col in ("reason", "table", "count"):
        t.add_column(col, justify="right" if col == "count" else "left")
    for r, tb, n in rows:
        t.add_row(r, tb, str(n))
    console.print(t)
    console.print(f"{sum(n for *_, n in rows)} records", highlight=False)


@quarantine_app.command("show")
def show(
    target: Target,
    reason: Reason = None,
    table: TableGlob = None,
    since: Since = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many records")] = 20,
) -> None:
    """The raw records with where they came from (file + line, or topic + partition + offset),
    and a Kafka record's key and headers."""
    from cdclake.ops.quarantine import show as rows_of

    with one_line_errors(f"reading {target}"):
        rows = rows_of(_spark(), target, _selection(reason, table, since), limit)
    for r in rows:
        where = (
            f"{r['source']} line {r['offset']}"
            if r["partition"] is None
            else f"topic {r['source']} partition {r['partition']} offset {r['offset']}"
        )
        console.print(
            f"[bold]{where}[/bold] table {r['table'] or '-'}, batch {r['batch_id']}, "
            f"at {r['quarantined_at']}: {r['reason']}",
            soft_wrap=True,
        )
        if r["key"] is not None:
            console.print(f"key: {r['key']}", soft_wrap=True, highlight=False, markup=False)
        if r["headers"]:
            console.print(
                f"headers: {json.dumps(r['headers'], ensure_ascii=False, sort_keys=True)}",
                soft_wrap=True,
                highlight=False,
                markup=False,
            )
        console.print(r["raw"], soft_wrap=True, highlight=False, markup=False)


@quarantine_app.command("replay")
def replay(
    target: Target,
    reason: Reason = None,
    table: TableGlob = None,
    since: Since = None,
    format: Annotated[str, typer.Option(help=f"{formats.choices()} (per message)")] = "auto",
    primary_key: PrimaryKeys = None,
    tinyint1_as_boolean: Tinyint1AsBoolean = False,
    source_timezone: SourceTimezone = "UTC",
) -> None:
    """Decode and apply the selected records again with these options; those that now apply
    leave the quarantine, the others stay with their new reason. Exactly once if interrupted."""
    from cdclake.config import ApplyConfig, parse_primary_key
    from cdclake.run.quarantine_replay import replay as run_replay

    with one_line_errors(f"replaying into {target}"):
        config = ApplyConfig(
            format=format,
            target=target,
            keys=dict(parse_primary_key(p) for p in primary_key or []),
            tinyint1_as_boolean=tinyint1_as_boolean,
            source_timezone=source_timezone,
        )
        s = run_replay(_spark(), config.target, _selection(reason, table, since), config)
    head = f"resumed replay {s.replay_id}" if s.resumed else f"replay {s.replay_id}"
    console.print(
        f"{head}: selected {s.selected}; applied {s.applied}; still quarantined {s.requarantined}",
        highlight=False,
    )
    for why, n in sorted(s.reasons.items(), key=lambda kv: -kv[1]):
        console.print(f"  {n}  {why}", highlight=False, markup=False)
