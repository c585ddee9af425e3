"""``cdclake snapshot``: the tables of one consistent cut and their Delta versions (no JVM)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from cdclake.cli.common import app, console, one_line_errors


@app.command()
def snapshot(
    target: Annotated[str, typer.Option(help="Folder of the Delta tables (path or s3a:// URI)")],
    at: Annotated[
        str | None,
        typer.Option(help="A cut number, a source time (ISO 8601) or a position ([5, 120])"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The cut as one JSON object")] = False,
) -> None:
    """List the tables of the latest cut a --consistent run recorded (or of the one --at names)
    with the Delta version of each: read them at those versions (``versionAsOf``, or
    ``cdclake.snapshot`` in Python) and no table holds half of a source transaction."""
    from cdclake.ops.cuts import read_cut
    from cdclake.paths import to_uri
    from cdclake.target_layout import TargetPaths

    with one_line_errors(f"reading the cuts of {target}"):
        cut = read_cut(target, at)
    paths = TargetPaths(to_uri(target))
    versions = sorted(cut["tables"].items())
    if as_json:
        doc = {
            "cut": cut["cut"],
            "batch_id": cut["batch_id"],
            "source_ts": None if cut["source_ts"] is None else cut["source_ts"].isoformat(),
            "position": cut["position"],
            "held": cut["held"],
            "timed_out": cut["timed_out"],
            "tables": [
                {"table": n, "version": v, "location": paths.table_path(n)} for n, v in versions
            ],
        }
        typer.echo(json.dumps(doc))
        return
    t = Table(
        title=f"cut {cut['cut']} (source time {cut['source_ts']}, position {cut['position']}; "
        f"waiting {cut['held']})"
    )
    for col in ("table", "version", "location"):
        t.add_column(col, justify="right" if col == "version" else "left")
    for name, version in versions:
        t.add_row(escape(name), str(version), escape(paths.table_path(name)))
    console.print(t)
