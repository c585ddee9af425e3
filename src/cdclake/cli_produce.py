"""``cdclake convert`` and ``cdclake publish``: the producer side of the command line.

Exactly once across restarts (streaming): each micro-batch is encoded deterministically (the same
changes give the same messages, keys and positions) and written with Kafka's idempotent producer
(``enable.idempotence``, ``acks=all``: no duplicates from retried sends); the checkpoint records
the batch only after the write. A batch replayed after a crash between the write and the
checkpoint is written again with identical messages; consumers that apply by position (``cdclake
apply``: equal positions on one row are the same event) end in the same state. Spark's Kafka sink
has no transactions, so a plain Kafka consumer may see such a replayed batch twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, cast

import typer

from cdclake.cli import _spark, app, console, err
from cdclake.errors import CdclakeError, ConfigError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from cdclake.formats._encode import Connector, EncodeOptions

ToFormat = Annotated[str, typer.Option("--to", help="debezium, canal, ckafka or dataworks")]
Connector_ = Annotated[
    str, typer.Option(help="Debezium source block: sqlserver, postgresql or mysql")
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
Zone = Annotated[str, typer.Option(help="canal/CKafka: zone of timestamp text and TIME")]
Output = Annotated[str | None, typer.Option(help="Write JSON-lines files into this folder")]
Bootstrap = Annotated[str | None, typer.Option(help="Kafka HOST:PORT to write to (and read)")]
ToTopic = Annotated[
    str, typer.Option(help="Output topic template: {db}, {schema}, {table}, {source}")
]
Checkpoint = Annotated[str | None, typer.Option(help="Streaming checkpoint folder")]
KafkaOption = Annotated[
    list[str] | None, typer.Option(help="KEY=VALUE for Spark's Kafka sink/source")
]


def _options(
    connector: str,
    schemas: bool,
    key_schemas: bool,
    tombstones: bool,
    server_name: str,
    update_pairs: bool,
    heartbeat_interval_ms: int | None,
    source_timezone: str,
) -> EncodeOptions:
    from cdclake.formats._encode import EncodeOptions

    if connector not in ("sqlserver", "postgresql", "mysql"):
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


def _kafka_options(pairs: list[str] | None) -> dict[str, str]:
    from cdclake.config import parse_kafka_option

    return dict(parse_kafka_option(o) for o in pairs or [])


def _report(messages: DataFrame) -> None:
    from cdclake import produce

    c = produce.counts(messages)
    console.print(
        f"{c['messages']} messages written, {c['skipped']} control records without a message "
        f"in this format, {c['quarantined']} changes quarantined",
        highlight=False,
    )
    for reason, n in produce.reasons(messages):
        console.print(f"  quarantined {n}: {reason}", soft_wrap=True, highlight=False)


def _write(
    messages: DataFrame,
    output: str | None,
    bootstrap: str | None,
    to_topic: str,
    kafka_options: dict[str, str],
    mode: str = "overwrite",
) -> None:
    from cdclake import produce

    if output is not None:
        produce.write_files(messages, output, mode)
    if bootstrap is not None:
        produce.write_kafka(messages, bootstrap, to_topic, kafka_options)


def _target(output: str | None, bootstrap: str | None) -> None:
    if (output is None) == (bootstrap is None):
        raise ConfigError("give exactly one of --output DIR or --kafka-bootstrap HOST:PORT")


@app.command()
def convert(
    to: ToFormat,
    from_: Annotated[
        str, typer.Option("--from", help="Input format, or auto (per message)")
    ] = "auto",
    inputs: Annotated[
        list[str] | None, typer.Option("--input", help="JSON-lines file or dir")
    ] = None,
    output: Output = None,
    kafka_bootstrap: Bootstrap = None,
    topic: Annotated[list[str] | None, typer.Option(help="Kafka topic to read")] = None,
    to_topic: ToTopic = "{source}",
    checkpoint: Checkpoint = None,
    available_now: Annotated[bool, typer.Option(help="Kafka: process what is there, exit")] = False,
    connector: Connector_ = "postgresql",
    schemas: Schemas = True,
    key_schemas: KeySchemas = True,
    tombstones: Tombstones = True,
    server_name: ServerName = "cdclake",
    update_pairs: UpdatePairs = True,
    heartbeat_interval_ms: Heartbeat = None,
    source_timezone: Zone = "UTC",
    primary_key: Annotated[list[str] | None, typer.Option(help="TABLE=COL[,COL]")] = None,
    kafka_option: KafkaOption = None,
) -> None:
    """Re-encode change events in another format: files to files, or Kafka to Kafka."""
    from cdclake import produce, sources
    from cdclake.config import parse_primary_key
    from cdclake.decode import decode
    from cdclake.formats.base import DecodeOptions

    try:
        options = _options(
            connector, schemas, key_schemas, tombstones, server_name, update_pairs,
            heartbeat_interval_ms, source_timezone,
        )  # fmt: skip
        decode_options = DecodeOptions(
            primary_keys=dict(parse_primary_key(p) for p in primary_key or []),
            source_timezone=source_timezone,
        )
        spark = _spark()
        if inputs:
            if output is None:
                raise ConfigError("--input needs --output DIR")
            changes = decode(sources.read_files(spark, inputs), from_, decode_options)
            messages = produce.encode(changes, to, options).persist()
            _write(messages, output, None, to_topic, {})
            _report(messages)
            return
        if kafka_bootstrap is None or not topic or checkpoint is None:
            raise ConfigError(
                "give --input PATH… --output DIR, or --kafka-bootstrap, --topic and --checkpoint"
            )
        kafka = _kafka_options(kafka_option)

        def batch(df: DataFrame, batch_id: int) -> None:
            changes = decode(sources.from_kafka_df(df), from_, decode_options)
            messages = produce.encode(changes, to, options).persist()
            produce.write_kafka(messages, kafka_bootstrap, to_topic, kafka)
            c = produce.counts(messages)
            console.print(f"batch {batch_id}: {c}", highlight=False)
            messages.unpersist()

        stream = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", kafka_bootstrap)
            .option("subscribe", ",".join(topic))
            .option("startingOffsets", "earliest")
            .option("includeHeaders", "true")
            .load()
        )
        _run(stream, batch, checkpoint, available_now)
    except CdclakeError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None


def _run(stream: DataFrame, batch: object, checkpoint: str, available_now: bool) -> None:
    writer = stream.writeStream.foreachBatch(batch).option("checkpointLocation", checkpoint)  # type: ignore[arg-type]
    writer = writer.trigger(availableNow=True) if available_now else writer
    writer.start().awaitTermination()


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
    available_now: Annotated[
        bool, typer.Option(help="Stream: publish what is there, exit")
    ] = False,
    connector: Connector_ = "postgresql",
    schemas: Schemas = True,
    key_schemas: KeySchemas = True,
    tombstones: Tombstones = True,
    server_name: ServerName = "cdclake",
    update_pairs: UpdatePairs = True,
    heartbeat_interval_ms: Heartbeat = None,
    source_timezone: Zone = "UTC",
    kafka_option: KafkaOption = None,
) -> None:
    """Publish a Delta table's Change Data Feed as change events of a format."""
    from cdclake import produce

    try:
        options = _options(
            connector, schemas, key_schemas, tombstones, server_name, update_pairs,
            heartbeat_interval_ms, source_timezone,
        )  # fmt: skip
        _target(output, kafka_bootstrap)
        source = name or "lake." + table.rstrip("/").rsplit("/", 1)[-1]
        keys = tuple(k.strip() for k in (primary_key or "").split(",") if k.strip())
        kafka = _kafka_options(kafka_option)
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
    except CdclakeError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None
