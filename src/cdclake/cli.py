"""The ``cdclake`` command line: parses arguments, builds a config, calls the runner."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from cdclake.errors import CdclakeError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Land database change streams in Delta Lake tables with Apache Spark.")
console = Console()
err = Console(stderr=True)

SAMPLES = Path(__file__).resolve().parent / "samples"


def _spark():  # type: ignore[no-untyped-def]
    from cdclake import _spark as s

    return s.get_or_create()


@app.command()
def apply(
    target: Annotated[str, typer.Option(help="Folder of the Delta tables")],
    inputs: Annotated[list[str] | None, typer.Option("--input", help="JSON-lines file or dir")] = None,
    more: Annotated[list[str] | None, typer.Argument(help="More input paths")] = None,
    format: Annotated[str, typer.Option(help="debezium or auto")] = "debezium",
    primary_key: Annotated[list[str] | None, typer.Option(help="TABLE=COL[,COL]")] = None,
    stream: Annotated[bool, typer.Option(help="Run as a Structured Streaming query")] = False,
    checkpoint: Annotated[str | None, typer.Option(help="Streaming checkpoint folder")] = None,
    available_now: Annotated[bool, typer.Option(help="Process what is there, then exit")] = False,
    fail_on_bad_input: Annotated[bool, typer.Option(help="Stop at the first bad record")] = False,
) -> None:
    """Apply change events to one Delta table per source table and print a summary."""
    from cdclake.config import ApplyConfig, parse_primary_key
    from cdclake.report import print_summary
    from cdclake.runner import run_batch, run_stream

    try:
        config = ApplyConfig(
            format=format,
            inputs=tuple([*(inputs or []), *(more or [])]),
            target=target,
            keys=dict(parse_primary_key(p) for p in primary_key or []),
            stream=stream,
            checkpoint=checkpoint,
            available_now=available_now,
            fail_on_bad_input=fail_on_bad_input,
        ).check()
        spark = _spark()
        if config.stream:
            def progress(batch_id: int, r: object) -> None:
                from cdclake.report import reconciliation

                console.print(f"batch {batch_id}: {reconciliation(r)}")  # type: ignore[arg-type]

            result = run_stream(spark, config, progress)
        else:
            result = run_batch(spark, config)
    except CdclakeError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None
    print_summary(result, console)


@app.command()
def demo(
    target: Annotated[str, typer.Option(help="Folder for the demo's Delta tables")] = "demo-output",
) -> None:
    """Apply the bundled sample events (every Debezium example of the docs) and show each table."""
    from cdclake.demo import run_demo

    try:
        run_demo(_spark(), target, console)
    except CdclakeError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None


def main() -> None:
    app()


if __name__ == "__main__":
    main()
