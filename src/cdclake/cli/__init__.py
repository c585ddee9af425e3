"""The ``cdclake`` command line: parses arguments, builds a config, calls the runner."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from cdclake import formats
from cdclake.cli.common import (
    AvailableNow,
    BatchesRetention,
    Checkpoint,
    Inputs,
    KafkaOptions,
    KeepBatches,
    MasterOption,
    MoreInputs,
    PrimaryKeys,
    QuarantineRetention,
    SourceTimezone,
    Tinyint1AsBoolean,
    TombstoneRetention,
    VerboseOption,
    _spark,
    app,
    console,
    duration,
    err,
    kafka_options,
    one_line_errors,
)
from cdclake.target_layout import KEEP_BATCHES

# The commands of their own modules register on ``app`` when imported.
from cdclake.cli import catalog, cluster, maintain, produce, quarantine, snapshot, status  # noqa: F401  isort: skip

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdclake.apply.results import BatchResult
    from cdclake.config import ApplyConfig, BinaryEncoding, DropPolicy, Maintenance, RenamePolicy


@app.command()
def apply(
    target: Annotated[str, typer.Option(help="Folder of the Delta tables")],
    inputs: Inputs = None,
    more: MoreInputs = None,
    format: Annotated[str, typer.Option(help=f"{formats.choices()} (per message)")] = "debezium",
    primary_key: PrimaryKeys = None,
    scd_type: Annotated[
        list[str] | None, typer.Option(help="1 or 2 (history), or TABLE=1|2 (globs allowed)")
    ] = None,
    track_history_columns: Annotated[
        list[str] | None, typer.Option(help="SCD2: TABLE=COL[,COL] open a new version")
    ] = None,
    track_history_except_columns: Annotated[
        list[str] | None, typer.Option(help="SCD2: TABLE=COL[,COL] only update in place")
    ] = None,
    stream: Annotated[bool, typer.Option(help="Run as a Structured Streaming query")] = False,
    checkpoint: Checkpoint = None,
    available_now: AvailableNow = False,
    fail_on_bad_input: Annotated[bool, typer.Option(help="Stop at the first bad record")] = False,
    parallel_tables: Annotated[
        int, typer.Option(min=1, help="Apply up to N tables of a batch at once")
    ] = 4,
    include: Annotated[list[str] | None, typer.Option(help="Only tables matching (glob)")] = None,
    exclude: Annotated[list[str] | None, typer.Option(help="Skip tables matching (glob)")] = None,
    map_table: Annotated[
        list[str] | None, typer.Option(help="SOURCE=TARGET: write a source table under a new name")
    ] = None,
    tinyint1_as_boolean: Tinyint1AsBoolean = False,
    source_timezone: SourceTimezone = "UTC",
    drop_column: Annotated[str, typer.Option(help="DROP COLUMN policy: keep or drop")] = "keep",
    drop_table: Annotated[str, typer.Option(help="DROP TABLE policy: keep or drop")] = "keep",
    rename_table: Annotated[
        str, typer.Option(help="RENAME TABLE policy: follow or keep")
    ] = "follow",
    kafka_bootstrap: Annotated[
        str | None, typer.Option(help="Read Kafka at HOST:PORT[,HOST:PORT] (needs --checkpoint)")
    ] = None,
    topic: Annotated[list[str] | None, typer.Option(help="Kafka topic (repeat for more)")] = None,
    topic_pattern: Annotated[
        str | None, typer.Option(help="Java regex of the Kafka topics to read")
    ] = None,
    starting_offsets: Annotated[
        str, typer.Option(help="earliest, latest or Spark's JSON (a new checkpoint only)")
    ] = "earliest",
    fail_on_data_loss: Annotated[
        bool, typer.Option(help="Stop when offsets are gone (deleted, aged out)")
    ] = True,
    trigger_interval: Annotated[
        str, typer.Option(help="Time between micro-batches (without --available-now)")
    ] = "10 seconds",
    max_offsets_per_trigger: Annotated[
        int | None, typer.Option(min=1, help="At most this many Kafka records per batch")
    ] = None,
    max_message_bytes: Annotated[
        int, typer.Option(min=1, help="Quarantine larger records (key + value) unparsed")
    ] = 10 * 1024 * 1024,
    kafka_option: KafkaOptions = None,
    binary_encoding: Annotated[
        str, typer.Option(help="Binary values of canal/CKafka: latin1 (canal's), base64 or hex")
    ] = "latin1",
    metrics_port: Annotated[
        int | None,
        typer.Option(min=1, max=65535, help="Serve Prometheus /metrics on this port while running"),
    ] = None,
    metrics_host: Annotated[
        str, typer.Option(help="Address of /metrics (0.0.0.0: every interface)")
    ] = "127.0.0.1",
    maintain_every: Annotated[
        str | None,
        typer.Option(
            help="Streams: compact, vacuum, roll up (cdclake maintain) every N batches, or every "
            "30m, 6h … of time"
        ),
    ] = None,
    tombstone_retention: TombstoneRetention = None,
    batches_retention: BatchesRetention = None,
    quarantine_retention: QuarantineRetention = None,
    keep_batches: KeepBatches = KEEP_BATCHES,
    maintain_budget: Annotated[
        str,
        typer.Option(
            help="With --maintain-every: one maintenance begins no table after this long (the "
            "next goes on from there); 'none': every table each time"
        ),
    ] = "1m",
    catalog_database: Annotated[
        str | None,
        typer.Option(help="Register every table by name in this database of Spark's catalog"),
    ] = None,
    consistent: Annotated[
        bool,
        typer.Option(
            help="Apply only complete source transactions (debezium with transaction metadata, "
            "dataworks); each batch records a cut (cdclake snapshot)"
        ),
    ] = False,
    consistent_timeout: Annotated[
        str | None,
        typer.Option(
            help="With --consistent: apply a transaction as it stands once the source has moved "
            "on this long (source time: 5m, 1h …)"
        ),
    ] = None,
    conf: Annotated[
        list[str] | None,
        typer.Option(help="KEY=VALUE for the Spark session cdclake builds, e.g. a metastore's"),
    ] = None,
    master: MasterOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Apply change events to one Delta table per source table and print a summary."""
    from cdclake.config import (
        ApplyConfig,
        KafkaSource,
        parse_mapping,
        parse_primary_key,
        parse_scd_type,
        parse_setting,
    )
    from cdclake.run.summary import print_summary

    with one_line_errors(f"applying to {target}"):
        config = ApplyConfig(
            format=format,
            inputs=tuple([*(inputs or []), *(more or [])]),
            target=target,
            keys=dict(parse_primary_key(p) for p in primary_key or []),
            stored_as_scd_type=cast("Any", parse_scd_type(scd_type or [])),
            track_history_column_list=dict(
                parse_primary_key(p, "--track-history-columns") for p in track_history_columns or []
            ),
            track_history_except_column_list=dict(
                parse_primary_key(p, "--track-history-except-columns")
                for p in track_history_except_columns or []
            ),
            stream=stream,
            checkpoint=checkpoint,
            available_now=available_now,
            fail_on_bad_input=fail_on_bad_input,
            parallel_tables=parallel_tables,
            include=tuple(include or []),
            exclude=tuple(exclude or []),
            table_map=dict(parse_mapping(m) for m in map_table or []),
            tinyint1_as_boolean=tinyint1_as_boolean,
            source_timezone=source_timezone,
            # checked by the config model, whose error names the allowed values
            drop_column=cast("DropPolicy", drop_column),
            drop_table=cast("DropPolicy", drop_table),
            rename_table=cast("RenamePolicy", rename_table),
            trigger_interval=trigger_interval,
            kafka=KafkaSource(
                bootstrap=kafka_bootstrap,
                topics=tuple(topic or []),
                topic_pattern=topic_pattern,
                starting_offsets=starting_offsets,
                fail_on_data_loss=fail_on_data_loss,
                max_offsets_per_trigger=max_offsets_per_trigger,
                max_message_bytes=max_message_bytes,
                options=kafka_options(kafka_option),
            ),
            binary_encoding=cast("BinaryEncoding", binary_encoding),
            metrics_port=metrics_port,
            metrics_host=metrics_host,
            maintenance=_maintenance(
                maintain_every,
                maintain_budget,
                keep_batches,
                tombstone_retention,
                batches_retention,
                quarantine_retention,
            ),
            catalog_database=catalog_database,
            consistent=consistent,
            consistent_timeout=duration(consistent_timeout, "--consistent-timeout"),
        ).check()
        settings = dict(parse_setting(c) for c in conf or [])
        if config.metrics_port is not None:
            url = f"http://{config.metrics_host}:{config.metrics_port}/metrics"
            console.print(f"metrics at {url}", soft_wrap=True, highlight=False)
        spark = _spark(master, verbose, hive=catalog_database is not None, conf=settings)
        result = _run(spark, config)
    print_summary(result, console)
    if config.catalog_database is not None:
        _print_names(spark, config)


def _maintenance(
    every: str | None,
    budget: str,
    keep_batches: int,
    tombstone_retention: str | None,
    batches_retention: str | None,
    quarantine_retention: str | None,
) -> Maintenance:
    """A stream's maintenance from ``apply``'s options (durations as ``30s``, ``7d``...)."""
    from cdclake.config import Maintenance

    return Maintenance(
        **maintenance_every(every),
        tombstone_retention=duration(tombstone_retention, "--tombstone-retention"),
        batches_retention=duration(batches_retention, "--batches-retention"),
        quarantine_retention=duration(quarantine_retention, "--quarantine-retention"),
        keep_batches=keep_batches,
        budget=None if budget.strip().lower() == "none" else duration(budget, "--maintain-budget"),
    )


def _run(spark: SparkSession, config: ApplyConfig) -> BatchResult:
    """The run ``config`` asks for: a Kafka query, a folder watched as a stream, or one batch
    over files (with its progress on stderr)."""
    from cdclake.run.runner import run_batch, run_stream

    if config.kafka is not None:
        return _run_kafka(spark, config)
    if config.stream:

        def progress(batch_id: int, r: BatchResult) -> None:
            from cdclake.run.summary import reconciliation

            console.print(f"batch {batch_id}: {reconciliation(r)}")

        return run_stream(spark, config, progress)
    from cdclake.phases import reporting

    with reporting(err):
        return run_batch(spark, config)


def maintenance_every(text: str | None) -> dict[str, Any]:
    """``--maintain-every``: N batches, or a duration (``30m``), as fields of
    :class:`cdclake.config.Maintenance`.

    >>> maintenance_every("100"), maintenance_every("30m")
    ({'every': 100}, {'interval': datetime.timedelta(seconds=1800)})
    """
    if text is None:
        return {}
    if text.strip().isdigit():
        return {"every": int(text)}
    return {"interval": duration(text, "--maintain-every")}


def _print_names(spark: SparkSession, config: ApplyConfig) -> None:
    """The line that says where the tables are by name."""
    from cdclake.ops.catalog import registered_tables, under

    db = config.catalog_database
    assert db is not None
    names = [n for n, loc in registered_tables(spark, db).items() if under(loc, config.target)]
    console.print(
        f"{len(names)} tables by name in database {db} (SHOW TABLES IN {db})", highlight=False
    )


def _run_kafka(spark: SparkSession, config: ApplyConfig) -> BatchResult:
    """The Kafka query: one progress line per micro-batch (see cdclake.run.streaming)."""
    from cdclake.run.stream_metrics import progress_line
    from cdclake.run.streaming import run_kafka

    kafka = config.kafka
    assert kafka is not None
    what = kafka.topic_pattern or ", ".join(kafka.topics)
    console.print(
        f"streaming {what} from {kafka.bootstrap} (checkpoint {config.checkpoint})",
        soft_wrap=True,
        highlight=False,
    )
    return run_kafka(
        spark, config, lambda m: console.print(progress_line(m), soft_wrap=True, highlight=False)
    )


@app.command()
def demo(
    target: Annotated[str, typer.Option(help="Folder for the demo's Delta tables")] = "demo-output",
    master: MasterOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Apply the bundled sample events (every Debezium example of the docs) and show each table."""
    from cdclake.run.demo import run_demo

    with one_line_errors(f"running the demo into {target}"):
        run_demo(_spark(master, verbose), target, console)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
