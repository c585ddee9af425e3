"""``cdclake convert`` and ``cdclake publish``: the producer side of the command line.

Exactly once across restarts (streaming): each micro-batch is encoded deterministically (the same
changes give the same messages, keys and positions) and written with Kafka's idempotent producer
(``enable.idempotence``, ``acks=all``: no duplicates from retried sends); the checkpoint records
the batch only after the write. A batch replayed after a crash between the write and the
checkpoint is written again with identical messages; consumers that apply by position (``cdclake
apply``: equal positions on one row are the same event) end in the same state. Spark's Kafka sink
has no transactions, so a plain Kafka consumer may see such a replayed batch twice.

``convert`` of files reads its inputs as ``apply`` does (``--input PATH`` and more paths after
it; a folder's files in name order) and writes ``<output>/00000.jsonl``… in write order, which
``apply --input <output>`` reads back in that order; quarantined changes go to the sibling folder
``<output>_quarantine``. A run that read changes and wrote none exits 1 with one line naming the
first reason. Positions: README "convert: positions".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.markup import escape

from cdclake import formats
from cdclake.cli.common import (
    AvailableNow,
    Checkpoint,
    Inputs,
    KafkaOptions,
    MoreInputs,
    PrimaryKeys,
    SourceTimezone,
    _spark,
    app,
    console,
    err,
    kafka_options,
    one_line_errors,
)
from cdclake.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from cdclake.formats.base import DecodeOptions
    from cdclake.formats.encode import Connector, EncodeOptions

ToFormat = Annotated[str, typer.Option("--to", help=formats.choices(auto=False))]
Connector_ = Annotated[
    str, typer.Option(help="Debezium source block: sqlserver, postgresql or mysql")
]
SourceConnector = Annotated[
    str | None,
    typer.Option(
        "--connector",
        help="Debezium source block: sqlserver, postgresql or mysql (default: the source's own; "
        "mysql for canal, CKafka and DataWorks)",
    ),
]
Schemas = Annotated[bool, typer.Option(help="Debezium: value with schema (schemas.enable)")]
KeySchemas = Annotated[bool, typer.Option(help="Debezium: record key with schema")]
Tombstones = Annotated[bool, typer.Option(help="Debezium: a tombstone after each delete")]
ServerName = Annotated[str, typer.Option(help="Debezium source.name (topic prefix)")]
UpdatePairs = Annotated[
    bool, typer.Option(help="DataWorks: UPDATE_BEFOR + UPDATE_AFTER (else one UPDATE_AFTER)")
]
Heartbeat = Annotated[
    int | None, typer.Option(min=1, help="DataWorks: an MHEARTBEAT per this many ms")
]
Output = Annotated[str | None, typer.Option(help="Write JSON-lines files into this folder")]
Bootstrap = Annotated[str | None, typer.Option(help="Kafka HOST:PORT to write to (and read)")]
ToTopic = Annotated[
    str, typer.Option(help="Output topic template: {db}, {schema}, {table}, {source}")
]


def _options(
    connector: str | None,
    schemas: bool,
    key_schemas: bool,
    tombstones: bool,
    server_name: str,
    update_pairs: bool,
    heartbeat_interval_ms: int | None,
    source_timezone: str,
) -> EncodeOptions:
    from cdclake.formats.encode import EncodeOptions

    if connector is not None and connector not in ("sqlserver", "postgresql", "mysql"):
        raise ConfigError(f"--connector {connector!r}: expected sqlserver, postgresql or mysql")
    return EncodeOptions(
        connector=cast("Connector", connector),
        schemas=schemas,
        key_schemas=key_schemas,
        tombstones=tombstones,
        server_name=server_name,
        update_pairs=update_pairs,
        heartbeat_interval_ms=heartbeat_interval_ms,
        source_timezone=source_timezone,
    )


def _report(messages: DataFrame, quarantine: str | None = None) -> dict[str, int]:
    """Print the counts and the most frequent quarantine reasons; return the counts."""
    from cdclake.run import produce

    c = produce.counts(messages)
    where = f" (in {quarantine})" if quarantine else ""
    console.print(
        f"{c['messages']} messages written, {c['skipped']} control records without a message "
        f"in this format, {c['quarantined']} changes quarantined{where}",
        highlight=False,
        markup=False,
    )
    for reason, n in produce.reasons(messages):
        console.print(f"  quarantined {n}: {reason}", soft_wrap=True, highlight=False, markup=False)
    return c


def _first_reason(messages: DataFrame) -> tuple[str, int] | None:
    """The most frequent reason a change was quarantined, else a control record skipped."""
    from pyspark.sql import functions as F

    from cdclake.run import produce

    found = produce.reasons(messages, limit=1)
    if found:
        return found[0]
    rows = messages.groupBy("skipped").count().filter(F.col("skipped").isNotNull())
    top = rows.orderBy(F.desc("count")).limit(1).collect()
    return (top[0]["skipped"], top[0]["count"]) if top else None


def _nothing_written(counts: dict[str, int], reason: tuple[str, int] | None) -> None:
    """Exit 1 with one line when a run read changes or records and wrote no message."""
    read = counts["quarantined"] + counts["skipped"]
    if counts["messages"] or not read or reason is None:
        return
    text, n = reason
    err.print(
        f"[red]error:[/red] nothing written: {read} changes read, none has a message in this "
        f"format; first reason ({n}): {escape(text)}",
        soft_wrap=True,
        highlight=False,
    )
    raise typer.Exit(1)


def _write(
    messages: DataFrame,
    output: str | None,
    bootstrap: str | None,
    to_topic: str,
    kafka: dict[str, str],
    mode: str = "overwrite",
) -> None:
    from cdclake.run import produce

    if output is not None:
        produce.write_files(messages, output, mode)
    if bootstrap is not None:
        produce.write_kafka(messages, bootstrap, to_topic, kafka)


def _target(output: str | None, bootstrap: str | None) -> None:
    if (output is None) == (bootstrap is None):
        raise ConfigError("give exactly one of --output DIR or --kafka-bootstrap HOST:PORT")


@app.command()
def convert(
    to: ToFormat,
    from_: Annotated[
        str, typer.Option("--from", help="Input format, or auto (per message)")
    ] = "auto",
    inputs: Inputs = None,
    more: MoreInputs = None,
    output: Annotated[
        str | None,
        typer.Option(help="Folder of the JSON-lines files (quarantine: <output>_quarantine)"),
    ] = None,
    kafka_bootstrap: Bootstrap = None,
    topic: Annotated[list[str] | None, typer.Option(help="Kafka topic to read")] = None,
    to_topic: ToTopic = "{source}",
    checkpoint: Checkpoint = None,
    available_now: AvailableNow = False,
    connector: SourceConnector = None,
    schemas: Schemas = True,
    key_schemas: KeySchemas = True,
    tombstones: Tombstones = True,
    server_name: ServerName = "cdclake",
    update_pairs: UpdatePairs = True,
    heartbeat_interval_ms: Heartbeat = None,
    source_timezone: SourceTimezone = "UTC",
    primary_key: PrimaryKeys = None,
    kafka_option: KafkaOptions = None,
) -> None:
    """Re-encode change events in another format: files to files, or Kafka to Kafka.

    Positions the target cannot write as they are become a sequence that keeps their order
    (README "convert: positions"). Exits 1 when it read changes and wrote none.
    """
    from cdclake.config import parse_primary_key
    from cdclake.formats.base import DecodeOptions

    with one_line_errors(f"converting to {to}"):
        options = _options(
            connector, schemas, key_schemas, tombstones, server_name, update_pairs,
            heartbeat_interval_ms, source_timezone,
        )  # fmt: skip
        decode_options = DecodeOptions(
            keys=dict(parse_primary_key(p) for p in primary_key or []),
            source_timezone=source_timezone,
        )
        input_paths = [*(inputs or []), *(more or [])]
        if input_paths:
            if output is None:
                raise ConfigError("--input needs --output DIR")
            _convert_files(_spark(), input_paths, output, from_, to, options, decode_options)
            return
        if kafka_bootstrap is None or not topic or checkpoint is None:
            raise ConfigError(
                "give --input PATH… --output DIR, or --kafka-bootstrap, --topic and --checkpoint"
            )
        from cdclake.config import KafkaSource
        from cdclake.run import queries

        kafka = kafka_options(kafka_option)
        spark = _spark()
        # the pass-through options (security settings) apply to the read and to the write
        source = KafkaSource(bootstrap=kafka_bootstrap, topics=tuple(topic), options=kafka)
        converted = _KafkaConvert(
            spark, from_, to, options, decode_options, kafka_bootstrap, to_topic, kafka, checkpoint
        )
        _run(queries.read_kafka(spark, source), converted, checkpoint, available_now)
        if available_now:
            _nothing_written(converted.totals, converted.reason)


def _convert_files(
    spark: SparkSession,
    inputs: list[str],
    output: str,
    from_: str,
    to: str,
    options: EncodeOptions,
    decode_options: DecodeOptions,
) -> None:
    """One batch: the input files in name order, written as ``apply`` reads them back."""
    from cdclake import sources
    from cdclake.decode import release
    from cdclake.run import produce

    epoch = sources.epoch_now()
    raw, _ = sources.read_files_counted(spark, inputs, epoch)
    changes = produce.decode_input(raw, from_, decode_options)
    try:
        messages = produce.encode(changes, to, replace(options, epoch=epoch)).persist()
        try:
            quarantine = produce.write_jsonl(messages, output)
            counts = _report(messages, quarantine)
            reason = None if counts["messages"] else _first_reason(messages)
        finally:
            messages.unpersist()
    finally:
        release(changes)
    _nothing_written(counts, reason)


class _KafkaConvert:
    """The micro-batch function of a Kafka convert: each batch's epoch is the time its offset
    log records (the same when it runs again after a crash); counts add up over the batches."""

    def __init__(
        self,
        spark: SparkSession,
        from_: str,
        to: str,
        options: EncodeOptions,
        decode_options: DecodeOptions,
        bootstrap: str,
        to_topic: str,
        kafka: dict[str, str],
        checkpoint: str,
    ) -> None:
        from cdclake.run import produce

        self.spark, self.from_, self.to = spark, from_, to
        self.options, self.decode_options = options, decode_options
        self.bootstrap, self.to_topic, self.kafka = bootstrap, to_topic, kafka
        self.checkpoint = checkpoint
        self.tables = produce.SourceTables()
        self.totals: Counter[str] = Counter(messages=0, skipped=0, quarantined=0)
        self.reason: tuple[str, int] | None = None

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        from cdclake import sources
        from cdclake.decode import release
        from cdclake.run import produce
        from cdclake.run.stream_metrics import batch_epoch

        epoch = batch_epoch(self.spark, self.checkpoint, batch_id) or sources.epoch_now()
        raw = sources.from_kafka_df(df, epoch)
        changes = produce.decode_input(raw, self.from_, self.decode_options, self.tables)
        try:
            messages = produce.encode(changes, self.to, replace(self.options, epoch=epoch))
            messages.persist()
            try:
                produce.write_kafka(messages, self.bootstrap, self.to_topic, self.kafka)
                c = produce.counts(messages)
                if self.reason is None and not self.totals["messages"] and not c["messages"]:
                    self.reason = _first_reason(messages)
            finally:
                messages.unpersist()
        finally:
            release(changes)
        self.totals.update(c)
        console.print(f"batch {batch_id}: {c}", highlight=False, markup=False)


def _run(
    stream: DataFrame, batch: Callable[[DataFrame, int], None], checkpoint: str, available_now: bool
) -> None:
    """Run a convert or publish query (see :mod:`cdclake.run.queries`) until it ends."""
    from cdclake.run import queries

    queries.start(stream, batch, checkpoint, available_now=available_now).awaitTermination()


@app.command()
def publish(
    table: Annotated[str, typer.Option(help="Path (URI) of the Delta table to publish")],
    to: ToFormat,
    name: Annotated[
        str | None, typer.Option(help="Source table name in the messages, db.table")
    ] = None,
    primary_key: Annotated[
        str | None, typer.Option(help="COL[,COL]: pairs update images, keys the records")
    ] = None,
    starting_version: Annotated[int, typer.Option(min=0, help="First commit to publish")] = 0,
    output: Output = None,
    kafka_bootstrap: Bootstrap = None,
    to_topic: ToTopic = "{source}",
    stream: Annotated[bool, typer.Option(help="Keep publishing new commits")] = False,
    checkpoint: Checkpoint = None,
    available_now: AvailableNow = False,
    connector: Connector_ = "postgresql",
    schemas: Schemas = True,
    key_schemas: KeySchemas = True,
    tombstones: Tombstones = True,
    server_name: ServerName = "cdclake",
    update_pairs: UpdatePairs = True,
    heartbeat_interval_ms: Heartbeat = None,
    source_timezone: SourceTimezone = "UTC",
    kafka_option: KafkaOptions = None,
) -> None:
    """Publish a Delta table's Change Data Feed as change events of a format."""
    from cdclake.run import produce

    with one_line_errors(f"publishing {table}"):
        options = _options(
            connector, schemas, key_schemas, tombstones, server_name, update_pairs,
            heartbeat_interval_ms, source_timezone,
        )  # fmt: skip
        _target(output, kafka_bootstrap)
        source = name or "lake." + table.rstrip("/").rsplit("/", 1)[-1]
        keys = tuple(k.strip() for k in (primary_key or "").split(",") if k.strip())
        kafka = kafka_options(kafka_option)
        spark = _spark()
        if not stream:
            cdf = produce.read_change_feed(spark, table, starting_version)
            changes = produce.changes_from_cdf(cdf, source, keys)
            messages = produce.encode(changes, to, options).persist()
            _write(messages, output, kafka_bootstrap, to_topic, kafka)
            _report(messages)
            return
        if checkpoint is None:
            raise ConfigError("--stream needs --checkpoint DIR")

        def batch(df: DataFrame, batch_id: int) -> None:
            changes = produce.changes_from_cdf(df, source, keys)
            messages = produce.encode(changes, to, options).persist()
            _write(messages, output, kafka_bootstrap, to_topic, kafka, mode="append")
            console.print(f"batch {batch_id}: {produce.counts(messages)}", highlight=False)
            messages.unpersist()

        cdf = produce.read_change_feed(spark, table, starting_version, stream=True)
        _run(cdf, batch, checkpoint, available_now)
