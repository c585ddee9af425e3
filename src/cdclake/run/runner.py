"""Running cdclake: a batch over files, or a Structured Streaming query over a directory."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from cdclake import paths, sources
from cdclake import phases as progress
from cdclake.apply.batch import apply_changes
from cdclake.apply.results import BatchResult, Laps, Txn
from cdclake.apply.schema_changes import apply_ddl_records
from cdclake.apply.tables import Target, rows_in
from cdclake.config import ApplyConfig
from cdclake.decode import (
    KnownGroups,
    NeedsTwoPasses,
    configured_keys,
    decode,
    decode_envelopes,
    hand_over,
    mark_errors,
    one_pass_envelopes,
    release_detection,
    scan,
    type_changes,
    type_known,
)
from cdclake.formats.base import DecodeOptions
from cdclake.ops.metrics import serving
from cdclake.run import queries

if TYPE_CHECKING:
    from cdclake.ops.catalog import Registrar

BatchCallback = Callable[[int, BatchResult], None]
_log = logging.getLogger(__name__)


def read_changes(
    spark: SparkSession,
    inputs: Iterable[str | Path],
    format: str = "debezium",
    *,
    keys: dict[str, tuple[str, ...]] | None = None,
    target: str | None = None,
    options: DecodeOptions | None = None,
    primary_keys: dict[str, tuple[str, ...]] | None = None,
) -> DataFrame:
    """Decode JSON-lines files into canonical changes (:data:`cdclake.model.CHANGE_SCHEMA`).

    ``keys``: table -> its key columns, for messages that carry none (``primary_keys``, its
    earlier name, is taken too). ``target`` lets schemaless input be typed like the tables
    already there.

    >>> changes = read_changes(spark, ["events.jsonl"], "debezium")  # doctest: +SKIP
    >>> changes.select("table", "op", "position").show()  # doctest: +SKIP
    """
    opts = options or DecodeOptions(keys={**(primary_keys or {}), **(keys or {})})
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
    messages: int | Callable[[], int] | None = None,
    count_rows: bool = True,
    known: KnownGroups | None = None,
    record_sources: bool = True,
    laps: Laps | None = None,
) -> BatchResult:
    """Decode and apply one batch of raw records. ``messages``: how many records ``raw`` holds,
    when the caller counted them already (the line numbers of files), or a function that says
    once the batch is applied (a Kafka batch's observed metrics); otherwise the driver's own
    count of lines it made (:func:`cdclake.sources.records_known`), or ``raw`` is cached and
    counted here. ``count_rows``: report each table's rows
    after the batch; ``record_sources`` False: the batch's ``_cdc_sources`` rows are left for the
    caller to write (see :func:`cdclake.apply.batch.apply_changes`).

    ``known``: the groups earlier batches of a stream typed. With some, the batch is typed in one
    pass (:func:`cdclake.decode.type_known`); a batch that holds a new schema version, a new
    table or DDL is then decoded again in two passes, before anything is written. Either way
    ``known`` learns the plans a two-pass batch made.

    ``laps``: the batch's clock (a stream's batch starts it before this call); the result's
    ``seconds`` is the batch's wall time by step (:data:`cdclake.apply.results.STEPS`).
    """
    spark = raw.sparkSession
    laps = laps or Laps()
    if messages is None:
        messages = sources.records_known(raw)
    cache_raw = messages is None  # only to count it
    if cache_raw:
        raw = raw.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        progress.phase("reading")
        if messages is None:
            messages = raw.count()
        progress.phase("decoding", "" if callable(messages) else f"{messages} messages")
        options = config.decode_options()
        run = _BatchRun(spark, config, options, app_id, batch_id, count_rows, laps, record_sources)
        result = None
        if known:
            try:
                result = run.one_pass(raw, known)
            except NeedsTwoPasses as e:
                progress.phase("decoding", f"again in two passes: {e}")
        if result is None:
            result = run.two_passes(raw, known)
        result.messages = messages() if callable(messages) else messages
        return result
    finally:
        if cache_raw:
            raw.unpersist()


@dataclass
class _BatchRun:
    """Decoding and applying one batch, in one pass or in two."""

    spark: SparkSession
    config: ApplyConfig
    options: DecodeOptions
    app_id: str | None
    batch_id: int | None
    count_rows: bool
    laps: Laps
    record_sources: bool = True

    @property
    def struct_images(self) -> bool:
        """Whether the changes carry their images as structs (see
        :func:`cdclake.decode.type_known`): yes, unless a consistent run's gate keeps them in its
        pending table, as :data:`cdclake.model.CHANGE_SCHEMA` says."""
        return not self.config.consistent

    def one_pass(self, raw: DataFrame, known: KnownGroups) -> BatchResult:
        env, tagged = one_pass_envelopes(raw, self.config.format, self.options, known)
        try:
            changes = type_known(configured_keys(env, self.options), known, self.struct_images)
            result = self._apply(changes, {}, one_pass=True)
        finally:
            if tagged is not None:
                tagged.unpersist()
        result.one_pass = True
        return result

    def two_passes(self, raw: DataFrame, known: KnownGroups | None) -> BatchResult:
        config, spark = self.config, self.spark
        target = Target(config.target, dict(config.table_map))
        # a consistent batch may hold its changes back in the pending table, text and all
        env = decode_envelopes(
            raw, config.format, self.options, lean=not config.consistent, learn=known is not None
        )
        try:
            txn = Txn(spark, self.app_id, self.batch_id)
            scanned = scan(env, learn_lanes=known is not None)
            ddl = apply_ddl_records(spark, scanned.ddl, target, config.ddl_policy(), txn)
            if known is not None and ddl.statements:
                known.forget()  # the tables' types and keys may have changed
            changes = type_changes(
                mark_errors(env, ddl.errors),
                self.options,
                lambda t: target.schema(spark, t),
                lambda t: target.keys(spark, t),
                known,
                self.struct_images,
                # the groups hold no DDL record, whose errors are all that marking sets
                scanned,
            )
            release_detection(env)  # the DDL and typing jobs have read the envelopes
            changes = hand_over(changes, env)  # apply_changes frees them once it has its own
            return self._apply(changes, ddl.added_defaults)
        finally:
            release_detection(env)
            env.unpersist()

    def _apply(
        self, changes: DataFrame, added_defaults: dict[str, dict[str, Any]], one_pass: bool = False
    ) -> BatchResult:
        config = self.config
        if not config.consistent:
            return self._apply_changes(changes, added_defaults, one_pass)
        from cdclake.apply.consistency import open_gate, rule_for

        target = Target(config.target, dict(config.table_map))
        timeout = config.consistent_timeout
        gate = open_gate(changes, target, rule_for(config.format), timeout, self.batch_id)
        try:
            result = self._apply_changes(gate.released, added_defaults, one_pass)
            gate.close(result, Txn(self.spark, self.app_id, self.batch_id), self.batch_id)
            self.laps.lap("consistency")
        finally:
            gate.release()
        return result

    def _apply_changes(
        self, changes: DataFrame, added_defaults: dict[str, dict[str, Any]], one_pass: bool
    ) -> BatchResult:
        config = self.config
        return apply_changes(
            changes,
            config.target,
            fail_on_bad_input=config.fail_on_bad_input,
            app_id=self.app_id,
            batch_id=self.batch_id,
            include=config.include,
            exclude=config.exclude,
            table_map=config.table_map,
            added_defaults=added_defaults,
            stored_as_scd_type=config.stored_as_scd_type,
            track_history_column_list=config.track_history_column_list or None,
            track_history_except_column_list=config.track_history_except_column_list or None,
            parallel_tables=config.parallel_tables,
            count_rows=self.count_rows,
            one_pass=one_pass,
            record_sources=self.record_sources,
            laps=self.laps,
        )


def run_batch(spark: SparkSession, config: ApplyConfig) -> BatchResult:
    """Apply every line of the input files in one batch (``/metrics`` served while it runs
    when ``config.metrics_port`` is set; see :mod:`cdclake.ops.metrics`)."""
    config.check()
    with serving(spark, config) as served:
        started = _now()
        raw, messages = sources.read_files_counted(spark, config.inputs)
        result = apply_raw(raw, config, messages=messages)
        BetweenBatches(spark, config).register(result)
        if served is not None:
            served.batch(result, started, _now())
    return result


def _now() -> datetime:
    return datetime.now(UTC)


def app_id_for(checkpoint: str) -> str:
    """A stable id for idempotent Delta writes of the query that owns ``checkpoint``."""
    digest = hashlib.sha1(paths.to_uri(checkpoint).encode()).hexdigest()[:16]
    return f"cdclake-{digest}"


def run_stream(
    spark: SparkSession, config: ApplyConfig, on_batch: BatchCallback | None = None
) -> BatchResult:
    """A Structured Streaming query over the input directory; files in name order.

    With ``available_now`` it processes what is there and returns; otherwise it runs until
    stopped. Each micro-batch goes through the same path as :func:`run_batch`; with
    ``config.metrics_port`` each updates the metrics served (:mod:`cdclake.ops.metrics`). The
    tables' rows are counted once, when the query ends (as a Kafka stream does).
    """
    config.check()
    assert config.checkpoint is not None
    directory = config.inputs[0]
    if len(config.inputs) != 1 or not paths.is_dir(spark, paths.to_uri(directory)):
        from cdclake.errors import ConfigError

        raise ConfigError(f"--stream reads one directory, got {list(config.inputs)}")
    total = BatchResult()
    app_id = app_id_for(config.checkpoint)
    known = KnownGroups()  # batches after the first of a schema decode in one pass
    between = BetweenBatches(spark, config)

    from cdclake.run.stream_metrics import batch_epoch

    with serving(spark, config) as served:

        def each(batch: DataFrame, batch_id: int) -> None:
            assert config.checkpoint is not None
            started = _now()
            epoch = batch_epoch(spark, config.checkpoint, batch_id)
            raw, messages = sources.raw_from_text(batch, epoch)
            result = apply_raw(raw, config, app_id, batch_id, messages, False, known)
            total.merge(result)
            between(batch_id, result)
            if served is not None:
                served.batch(result, started, _now())
            if on_batch is not None:
                on_batch(batch_id, result)

        stream = sources.text_with_files(
            spark.readStream.format("text").option("pathGlobFilter", "[!._]*").load(directory)
        )
        start_query(stream, each, config).awaitTermination()
    count_rows(spark, Target(config.target, dict(config.table_map)), total)
    return total


class BetweenBatches:
    """What a run does after each batch, between batches, while nothing writes its tables:
    maintenance (``config.maintenance``) every N batches or after an interval of time
    and, with ``config.catalog_database``, the catalog kept in step with the target
    (:class:`cdclake.ops.catalog.Registrar`)."""

    def __init__(self, spark: SparkSession, config: ApplyConfig) -> None:
        self.spark = spark
        self.config = config
        self.last_maintained = time.monotonic()  # the interval counts from the run's start
        self.turn_cursor: tuple[str, str] | None = None  # where the next turn goes on
        self.registrar: Registrar | None = None
        if config.catalog_database is not None:
            from cdclake.ops.catalog import Registrar

            self.registrar = Registrar(
                spark, config.target, config.catalog_database, dict(config.table_map)
            )

    def __call__(self, batch_id: int, result: BatchResult) -> None:
        self.maintain(batch_id)
        self.register(result)

    def register(self, result: BatchResult) -> None:
        if self.registrar is not None and self.registrar.needed(result):
            progress.phase("registering", f"tables in {self.registrar.database}")
            self.registrar.after(result)

    def due(self, batch_id: int, now: float) -> bool:
        """Whether maintenance runs after batch ``batch_id`` (``now``: monotonic seconds)."""
        every, interval = self.config.maintenance.every, self.config.maintenance.interval
        return (every is not None and (batch_id + 1) % every == 0) or (
            interval is not None and now - self.last_maintained >= interval.total_seconds()
        )

    def maintain(self, batch_id: int) -> None:
        """When :meth:`due`, maintain the target (:mod:`cdclake.ops.maintain`: compact, vacuum
        at the tables' own retention, roll up bookkeeping, drop records past the config's
        retentions) inside the stream's own batch: nothing writes the tables meanwhile. A table
        that fails is logged and left for the next time: maintenance never stops the stream.

        One maintenance holds the stream up for about ``config.maintenance.budget`` at most: it
        visits the tables in turn from where the one before stopped (in a restarted stream: the
        one before it, as the tables' logs tell), and begins no table once the budget has gone
        (a target of 40 tables took two minutes in the soak)."""
        spark, config = self.spark, self.config
        if not self.due(batch_id, time.monotonic()):
            return
        self.last_maintained = time.monotonic()
        from cdclake.ops.maintain import Retention, maintain

        progress.phase("maintaining", config.target)
        retention = Retention(
            batches=config.maintenance.batches_retention,
            quarantine=config.maintenance.quarantine_retention,
            tombstones=config.maintenance.tombstone_retention,
            keep_batches=config.maintenance.keep_batches,
        )
        budget = config.maintenance.budget
        try:
            report = maintain(
                spark,
                config.target,
                retention=retention,
                start_after=self.turn_cursor,
                resume=True,
                budget=None if budget is None else budget.total_seconds(),
            )
        except Exception as e:  # the store, listing the target: the next time may do better
            _log.warning("maintenance of %s failed: %s", config.target, e)
            return
        if report:
            self.turn_cursor = report[-1].table, report[-1].kind
        for done in report:
            if done.outcome != "ok":
                _log.warning("maintenance of %s: %s: %s", done.table, done.outcome, done.reason)


def count_rows(spark: SparkSession, target: Target, result: BatchResult) -> None:
    """Set the rows each table of ``result`` holds now: once per run, not once per batch."""
    for name, table in result.tables.items():
        table.rows_now = rows_in(spark, target.table_path(name))


def start_query(
    stream: DataFrame, each: Callable[[DataFrame, int], None], config: ApplyConfig
) -> StreamingQuery:
    """Start ``stream`` with ``each`` per micro-batch, on the config's checkpoint and trigger."""
    assert config.checkpoint is not None
    return queries.start(
        stream, each, config.checkpoint,
        available_now=config.available_now, trigger_interval=config.trigger_interval,
    )  # fmt: skip
