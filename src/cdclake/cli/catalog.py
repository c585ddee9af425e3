"""``cdclake register``: every Delta table of a target registered by name in Spark's catalog."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from cdclake.cli.common import MasterOption, VerboseOption, _spark, app, console, one_line_errors
from cdclake.errors import CdclakeError


@app.command()
def register(
    target: Annotated[str, typer.Option(help="Folder of the Delta tables (path or s3a:// URI)")],
    catalog_database: Annotated[str, typer.Option(help="Database of Spark's catalog")],
    conf: Annotated[
        list[str] | None,
        typer.Option(help="KEY=VALUE for the Spark session cdclake builds, e.g. a metastore's"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per table")] = False,
    master: MasterOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Register every Delta table under the target as an external table of the database (Spark's
    Hive catalog, its metastore as Spark is configured), drop the names of tables that left the
    target, and list the names; what ``cdclake apply --catalog-database`` does after its
    batches."""
    from cdclake.config import parse_setting
    from cdclake.ops.catalog import VALID_DATABASE, register_tables

    with one_line_errors(f"registering {target} in {catalog_database}"):
        if not VALID_DATABASE.match(catalog_database):
            raise CdclakeError(
                f"--catalog-database {catalog_database!r}: expected letters, digits and _"
            )
        settings = dict(parse_setting(c) for c in conf or [])
        spark = _spark(master, verbose, hive=True, conf=settings)
        done = register_tables(spark, target, catalog_database)
    new = {name for name, _ in done.created}
    rows = [(n, loc, "registered" if n in new else "kept") for n, loc in done.tables.items()]
    rows += [(n, "", "dropped") for n in done.dropped]
    if as_json:
        for name, location, what in sorted(rows):
            typer.echo(json.dumps({"name": f"{catalog_database}.{name}", "location": location,
                                   "outcome": what}))  # fmt: skip
        return
    t = Table(title=f"tables by name in {catalog_database}")
    for col in ("name", "location", "outcome"):
        t.add_column(col)
    for name, location, what in sorted(rows):
        t.add_row(escape(f"{catalog_database}.{name}"), escape(location), what)
    console.print(t)
