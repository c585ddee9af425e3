"""Kafka -> Delta with Structured Streaming, exactly once across crashes.

The query reads with Spark's Kafka source and applies each micro-batch with
:func:`cdclake.run.runner.apply_raw`. Exactly once rests on two things:

- Spark's checkpoint: the offsets of batch *n* are logged before it runs, and a batch that was
  not marked committed is run again after a restart, with the same id over the same offsets;
- idempotent Delta writes: every write of batch *n* carries ``txnAppId``/``txnVersion = n``
  (the app id derives from the checkpoint path), so Delta skips what a crashed run already
  committed. The batch's record (a ``batch`` row of ``<target>/_cdc_sources``, see
  :mod:`cdclake.apply.liveness`) is written the same way, in the one commit of the batch's
  bookkeeping, after its tables.

Every message becomes a change, a control record, or a row of ``<target>/_cdc_quarantine``. A
message larger than ``max_message_bytes`` (key + value) is quarantined here, before decoding,
with its size and the limit as the reason, and is never parsed.

>>> config = ApplyConfig(kafka_bootstrap="127.0.0.1:9092", topics=("dbz.inventory",),
...                      checkpoint="/chk", target="/lake", available_now=True)  # doctest: +SKIP
>>> total = run_kafka(spark, config, lambda m: print(progress_line(m)))  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pyspark.errors import StreamingQueryException
from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from cdclake import sources
from cdclake.apply.batch import quarantine
from cdclake.apply.results import BatchResult, Laps, Txn
from cdclake.apply.tables import Target
from cdclake.config import ApplyConfig
from cdclake.decode import KnownGroups
from cdclake.errors import BadInputError, CdclakeError, ConfigError
from cdclake.ops.metrics import serving
from cdclake.run import queries
from cdclake.run.runner import BetweenBatches, app_id_for, apply_raw, count_rows, start_query
from cdclake.run.stream_metrics import (
    BatchMetrics,
    LatestOffsets,
    batch_end_offsets,
    batch_epoch,
    now,
    write_record,
)

_log = logging.getLogger(__name__)

MetricsCallback = Callable[[BatchMetrics], None]

OVERSIZE = "oversize"


class KafkaStreamError(CdclakeError):
    """The Kafka query stopped: the broker, the offsets or the checkpoint are the cause."""


def _limit(config: ApplyConfig) -> int:
    """The largest Kafka record (key, value and headers) a batch takes (--max-message-bytes)."""
    assert config.kafka is not None
    return config.kafka.max_message_bytes


def message_bytes() -> Column:
    """Size of a Kafka record as the limit counts it: key plus value bytes."""
    size = [F.coalesce(F.octet_length(c), F.lit(0)) for c in ("key", "value")]
    return size[0] + size[1]


def oversize_reason(limit: int) -> Column:
    return F.concat(
        F.lit("message of "),
        message_bytes().cast("string"),
        F.lit(f" bytes is over the limit of {limit} bytes (--max-message-bytes); not parsed"),
    )


def _quarantine_oversize(
    kafka: DataFrame, config: ApplyConfig, app_id: str, batch_id: int, n_big: int
) -> tuple[int, dict[str, int]]:
    """Quarantine the ``n_big`` records over the size limit without parsing them, with their key
    and headers (a replay decodes them as they came); their count and reasons (a batch without
    any runs no job here)."""
    if not n_big:
        return 0, {}
    big = kafka.filter(message_bytes() > _limit(config)).select(
        F.col("value").cast("string").alias("raw"),
        F.struct(F.col("topic").alias("source"), F.col("partition"), F.col("offset")).alias(
            "lineage"
        ),
        sources.kafka_key(),
        sources.kafka_headers(),
        oversize_reason(_limit(config)).alias("error"),
        F.lit(None).cast("string").alias("table"),
        F.lit(None).cast("string").alias("op"),
    )
    reasons = {r["error"]: r["count"] for r in big.groupBy("error").count().collect()}
    if not reasons:
        return 0, {}
    if config.fail_on_bad_input:
        first = (
            kafka.filter(message_bytes() > _limit(config))
            .orderBy("topic", "partition", "offset")
            .select("topic", "partition", "offset", message_bytes().alias("n"))
            .first()
        )
        assert first is not None
        raise BadInputError(
            f"bad input at topic {first['topic']} partition {first['partition']} offset "
            f"{first['offset']}: message of {first['n']} bytes is over the limit of "
            f"{_limit(config)} bytes (--max-message-bytes)"
        )
    spark = kafka.sparkSession
    # Its own app id: apply_changes' quarantine step uses "<app_id>/quarantine" for this batch.
    txn = Txn(spark, f"{app_id}/{OVERSIZE}", batch_id)
    quarantine(spark, Target(config.target), big, txn, batch_id)
    return sum(reasons.values()), reasons


def process_batch(
    kafka: DataFrame,
    batch_id: int,
    config: ApplyConfig,
    app_id: str,
    latest: LatestOffsets | None = None,
    known: KnownGroups | None = None,
) -> BatchMetrics:
    """Apply one micro-batch of Spark's Kafka source, then write its record with its other
    ``_cdc_sources`` rows, in one commit.

    ``known``: the groups the query's earlier batches typed (see
    :func:`cdclake.run.runner.apply_raw`). The batch's size, newest record time and records over
    the size limit are observed on the decode's own read of the records: no pass of their own.
    """
    spark = kafka.sparkSession
    started = now()
    laps = Laps()  # the batch's wall time by step, from here to its record
    stats = _BatchStats(kafka, _limit(config))
    if config.fail_on_bad_input:  # a record over the limit stops the batch before any write
        _quarantine_oversize(kafka, config, app_id, batch_id, stats.computed()["big"])
    fits = stats.observed.filter(message_bytes() <= _limit(config))
    assert config.checkpoint is not None
    raw = sources.from_kafka_df(fits, batch_epoch(spark, config.checkpoint, batch_id))
    # the rows each table holds are counted once, when the run ends (see run_kafka)
    result = apply_raw(
        raw, config, app_id, batch_id, stats.fitting, count_rows=False, known=known,
        record_sources=False, laps=laps,
    )  # fmt: skip
    oversize, reasons = _quarantine_oversize(kafka, config, app_id, batch_id, stats.get()["big"])
    laps.lap("quarantine")
    result.messages = stats.get()["n"]
    result.quarantined += oversize
    for reason, n in reasons.items():
        result.quarantine_reasons[reason] = result.quarantine_reasons.get(reason, 0) + n
    assert config.checkpoint is not None
    end = batch_end_offsets(spark, config.checkpoint, batch_id)
    newest = stats.get()["newest"]
    metrics = BatchMetrics(
        batch_id=batch_id,
        result=result,
        started_at=started,
        finished_at=now(),
        oversize=oversize,
        end_offsets=end,
        latest_offsets=latest(end) if latest is not None else None,
        newest_message_at=datetime.fromtimestamp(newest / 1000, UTC) if newest else None,
    )
    write_record(spark, Target(config.target, dict(config.table_map)), metrics, app_id)
    laps.lap("record")
    return metrics


class _BatchStats:
    """A micro-batch's record count, newest record time (ms) and records over the size limit
    (``n``, ``newest``, ``big``), observed (:class:`pyspark.sql.Observation`) on the first
    action that reads :attr:`observed` in full: the decode's. If none did (a batch whose decode
    failed before reading it), one aggregate computes them."""

    _WAIT_S = 10.0

    def __init__(self, kafka: DataFrame, limit: int) -> None:
        self._kafka = kafka
        self._aggregates = [
            F.count(F.lit(1)).alias("n"),
            F.max(F.unix_millis("timestamp")).alias("newest"),
            F.count_if(message_bytes() > limit).alias("big"),
        ]
        self._observation = Observation()
        self.observed = kafka.observe(self._observation, *self._aggregates)
        self._stats: dict[str, Any] | None = None

    def get(self) -> dict[str, Any]:
        if self._stats is None:
            future = self._observation._jo.future() if self._observation._jo else None
            deadline = time.monotonic() + self._WAIT_S
            while future is not None and not future.isCompleted() and time.monotonic() < deadline:
                time.sleep(0.01)  # the metrics arrive with the action's end, on Spark's side
            if future is not None and future.isCompleted() and self._reported():
                self._stats = self._observation.get
            else:
                self.computed()
        assert self._stats is not None
        return self._stats

    def _reported(self) -> bool:
        """Whether the completed observation holds the numbers: Spark completes it with an empty
        row when the first action that read the records did not run the part of the plan that
        counts them (an aggregate over an empty batch, which adaptive execution cuts short)."""
        jo = self._observation._jo
        return jo is not None and bool(jo.getRow().size())

    def computed(self) -> dict[str, Any]:
        """The same numbers from an aggregate of their own."""
        row = self._kafka.agg(*self._aggregates).first()
        assert row is not None
        self._stats = row.asDict()
        return self._stats

    def fitting(self) -> int:
        """Records within the size limit: the ones decoded."""
        return int(self.get()["n"]) - int(self.get()["big"])


def run_kafka(
    spark: SparkSession, config: ApplyConfig, on_batch: MetricsCallback | None = None
) -> BatchResult:
    """Run the Kafka query of ``config``; the counts of every batch this run applied.

    With ``available_now`` it applies what the topics hold when it starts, then returns;
    otherwise it runs until stopped (Ctrl-C stops it after the running batch). With
    ``config.metrics_port`` it serves ``/metrics``, updated after every batch
    (:mod:`cdclake.ops.metrics`). Raises
    :class:`BadInputError` (with ``fail_on_bad_input``) naming topic, partition and offset, and
    :class:`KafkaStreamError` when the query fails for another reason.
    """
    config.check()
    if config.kafka is None or config.kafka.bootstrap is None:
        raise ConfigError("run_kafka needs kafka_bootstrap (HOST:PORT of a Kafka broker)")
    assert config.checkpoint is not None
    app_id = app_id_for(config.checkpoint)
    latest = LatestOffsets(config.kafka.bootstrap, config.kafka.options)
    total = BatchResult()
    total.messages = 0
    failure: list[BaseException] = []
    known = KnownGroups()  # batches after the first of a schema decode in one pass
    between = BetweenBatches(spark, config)

    with serving(spark, config) as served:

        def each(batch: DataFrame, batch_id: int) -> None:
            try:
                metrics = process_batch(batch, batch_id, config, app_id, latest, known)
            except BaseException as e:  # kept: py4j turns it into a long Java stack trace
                failure.append(e)
                raise
            total.merge(metrics.result)
            between(batch_id, metrics.result)
            if served is not None:
                served.batch(
                    metrics.result, metrics.started_at, metrics.finished_at,
                    metrics.behind_by_partition,
                )  # fmt: skip
            if on_batch is not None:
                on_batch(metrics)

        query = start_query(queries.read_kafka(spark, config.kafka), each, config)
        try:
            query.awaitTermination()
        except StreamingQueryException as e:
            if failure and isinstance(failure[0], CdclakeError):
                raise failure[0] from None
            raise KafkaStreamError(_query_failure(e, config)) from None
        except KeyboardInterrupt:
            query.stop()
    count_rows(spark, Target(config.target, dict(config.table_map)), total)
    return total


def _query_failure(e: StreamingQueryException, config: ApplyConfig) -> str:
    """The first lines of Spark's error, with what the query was reading."""
    text = str(e).strip()
    head = "\n".join(line for line in text.splitlines()[:6] if line.strip())
    kafka = config.kafka
    assert kafka is not None
    return (
        f"the Kafka query on {kafka.subscription} at {kafka.bootstrap} stopped "
        f"(checkpoint {config.checkpoint}); restart it to resume from the last committed batch. "
        f"Spark said: {head}"
    )
