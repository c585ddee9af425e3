"""Running cdclake: a batch over files, or a Structured Streaming query over a directory."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from cdclake import paths, progress, sources
from cdclake.apply.batch import BatchResult, apply_changes
from cdclake.apply.scd1 import Txn
from cdclake.apply.schema_changes import apply_ddl_records
from cdclake.apply.tables import Target
from cdclake.config import ApplyConfig
from cdclake.decode import (
    decode,
    decode_envelopes,
    hand_over,
    mark_errors,
    release_detection,
    type_changes,
)
from cdclake.formats.base import DecodeOptions

BatchCallback = Callable[[int, BatchResult], None]


def read_changes(
    spark: SparkSession,
    inputs: Iterable[str | Path],
    format: str = "debezium",
    *,
    primary_keys: dict[str, tuple[str, ...]] | None = None,
    target: str | None = None,
    options: DecodeOptions | None = None,
) -> DataFrame:
    """Decode JSON-lines files into canonical changes (:data:`cdclake.model.CHANGE_SCHEMA`).

    ``target`` lets schemaless input be typed like the tables already there.

    >>> changes = read_changes(spark, ["events.jsonl"], "debezium")  # doctest: +SKIP
    >>> changes.select("table", "op", "position").show()  # doctest: +SKIP
    """
    opts = options or DecodeOptions(primary_keys=dict(primary_keys or {}))
    schemas = Target(paths.to_uri(target)).schema if target else None
    raw = sources.read_files(spark, inputs)
    if schemas is None:
        return decode(raw, format, opts)
    return decode(raw, format, opts, lambda t: schemas(spark, t))


def apply_raw(
    raw: DataFrame,
    config: ApplyConfig,
    app_id: str | None = None,
    batch_id: int | None = None,
    messages: int | None = None,
    count_rows: bool = True,
) -> BatchResult:
    """Decode and apply one batch of raw records. ``messages``: how many records ``raw`` holds,
    when the caller counted them already (the line numbers of files, a Kafka batch's stats);
    otherwise ``raw`` is cached and counted here. ``count_rows``: report each table's rows
    after the batch (see :func:`cdclake.apply.batch.apply_changes`)."""
    spark = raw.sparkSession
    target = Target(config.target, dict(config.table_map))
    cache_raw = messages is None  # only to count it
    if cache_raw:
        raw = raw.persist(StorageLevel.MEMORY_AND_DISK)
    env = None
    try:
        progress.phase("reading")
        if messages is None:
            messages = raw.count()
        progress.phase("decoding", f"{messages} messages")
        options = config.decode_options()
        env = decode_envelopes(raw, config.format, options)
        ddl = apply_ddl_records(env, target, config.ddl_policy(), Txn(spark, app_id, batch_id))
        changes = type_changes(
            mark_errors(env, ddl.errors),
            options,
            lambda t: target.schema(spark, t),
            lambda t: target.keys(spark, t),
        )
        release_detection(env)  # the DDL and typing jobs have read the envelopes
        changes = hand_over(changes, env)  # apply_changes frees them once it has cached its own
        result = apply_changes(
            changes,
            config.target,
            fail_on_bad_input=config.fail_on_bad_input,
            app_id=app_id,
            batch_id=batch_id,
            include=config.include,
            exclude=config.exclude,
            table_map=config.table_map,
            added_defaults=ddl.added_defaults,
            stored_as_scd_type=config.stored_as_scd_type,
            track_history_column_list=config.track_history_column_list or None,
            track_history_except_column_list=config.track_history_except_column_list or None,
            parallel_tables=config.parallel_tables,
            count_rows=count_rows,
        )
        result.messages = messages
        return result
    finally:
        if env is not None:
            release_detection(env)
            env.unpersist()
        if cache_raw:
            raw.unpersist()


def run_batch(spark: SparkSession, config: ApplyConfig) -> BatchResult:
    """Apply every line of the input files in one batch."""
    config.check()
    raw, messages = sources.read_files_counted(spark, config.inputs)
    return apply_raw(raw, config, messages=messages)


def app_id_for(checkpoint: str) -> str:
    """A stable id for idempotent Delta writes of the query that owns ``checkpoint``."""
    digest = hashlib.sha1(paths.to_uri(checkpoint).encode()).hexdigest()[:16]
    return f"cdclake-{digest}"


def run_stream(
    spark: SparkSession, config: ApplyConfig, on_batch: BatchCallback | None = None
) -> BatchResult:
    """A Structured Streaming query over the input directory; files in name order.

    With ``available_now`` it processes what is there and returns; otherwise it runs until
    stopped. Each micro-batch goes through the same path as :func:`run_batch`.
    """
    config.check()
    assert config.checkpoint is not None
    directory = config.inputs[0]
    if len(config.inputs) != 1 or not paths.is_dir(spark, paths.to_uri(directory)):
        from cdclake.errors import ConfigError

        raise ConfigError(f"--stream reads one directory, got {list(config.inputs)}")
    total = BatchResult()
    app_id = app_id_for(config.checkpoint)

    def each(batch: DataFrame, batch_id: int) -> None:
        raw, messages = sources.raw_from_text(batch)
        result = apply_raw(raw, config, app_id, batch_id, messages)
        total.merge(result)
        if on_batch is not None:
            on_batch(batch_id, result)

    stream = sources.text_with_files(
        spark.readStream.format("text").option("pathGlobFilter", "[!._]*").load(directory)
    )
    start_query(stream, each, config).awaitTermination()
    return total


def start_query(
    stream: DataFrame, each: Callable[[DataFrame, int], None], config: ApplyConfig
) -> StreamingQuery:
    """Start ``stream`` with ``each`` per micro-batch, on the config's checkpoint and trigger."""
    writer = stream.writeStream.foreachBatch(each).option("checkpointLocation", config.checkpoint)
    writer = (
        writer.trigger(availableNow=True)
        if config.available_now
        else writer.trigger(processingTime=config.trigger_interval)
    )
    return writer.start()
