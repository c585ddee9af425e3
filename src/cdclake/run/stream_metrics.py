"""What each micro-batch of a Kafka query did: a progress line and a ``batch`` row of
``_cdc_sources`` (:data:`cdclake.apply.liveness.BATCH_SCHEMA`).

One record per batch id, written with the batch's other ``_cdc_sources`` rows as one idempotent
append (:meth:`cdclake.apply.results.Txn.append`), so a batch that is replayed after a crash
does not add a second record::

    batch 3: messages 40; changes 38 = applied 30 + ignored 8; control 1; quarantined 1;
    tables 2; lag 120 offsets (max 80 on orders[0]), 2.1 s behind the newest message

Lag is measured right after the batch is applied: the broker's latest offsets minus where the
batch ended (the query's offset log), summed over partitions; and the time between now and the
newest Kafka timestamp the batch read.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from cdclake.apply import liveness
from cdclake.apply.results import BatchResult, Txn
from cdclake.apply.tables import Target
from cdclake.run.summary import reconciliation, timing

_log = logging.getLogger(__name__)

PartitionOffsets = dict[tuple[str, int], int]
"""(topic, partition) -> offset."""


@dataclass
class BatchMetrics:
    """One micro-batch: its counts (``result``) and how far the query is behind."""

    batch_id: int
    result: BatchResult
    started_at: datetime
    finished_at: datetime
    oversize: int = 0
    end_offsets: PartitionOffsets = field(default_factory=dict)
    latest_offsets: PartitionOffsets | None = None
    newest_message_at: datetime | None = None

    @property
    def behind_by_partition(self) -> PartitionOffsets | None:
        if self.latest_offsets is None or not self.end_offsets:
            return None
        return {
            tp: max(self.latest_offsets[tp] - end, 0)
            for tp, end in self.end_offsets.items()
            if tp in self.latest_offsets
        }

    @property
    def offsets_behind(self) -> int | None:
        behind = self.behind_by_partition
        return None if behind is None else sum(behind.values())

    @property
    def seconds_behind(self) -> float | None:
        if self.newest_message_at is None:
            return None
        return max((self.finished_at - self.newest_message_at).total_seconds(), 0.0)

    def balanced(self) -> bool:
        """messages = applied + ignored + control + quarantined (one message, one change)."""
        r = self.result
        return r.messages == r.applied + r.ignored + r.control + r.quarantined

    def record(self, app_id: str) -> dict[str, Any]:
        """The record of this batch (a row of :data:`cdclake.apply.liveness.BATCH_SCHEMA`)."""
        r = self.result
        behind = self.behind_by_partition
        return {
            "batch_id": self.batch_id,
            "app_id": app_id,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "messages": r.messages or 0,
            "changes": r.changes,
            "applied": r.applied,
            "ignored": r.ignored,
            "control": r.control,
            "quarantined": r.quarantined,
            "oversize": self.oversize,
            "inserted": sum(t.inserted for t in r.tables.values()),
            "updated": sum(t.updated for t in r.tables.values()),
            "deleted": sum(t.deleted + t.truncated for t in r.tables.values()),
            "tables": sorted(r.tables),
            "control_by_op": dict(r.control_by_op),
            "quarantine_reasons": dict(r.quarantine_reasons),
            "end_offsets": offsets_json(self.end_offsets),
            "offsets_behind": self.offsets_behind,
            "max_offsets_behind": max(behind.values(), default=0) if behind is not None else None,
            "seconds_behind": self.seconds_behind,
            "newest_message_at": self.newest_message_at,
        }


def offsets_json(offsets: PartitionOffsets) -> str:
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return json.dumps(out, separators=(",", ":"))


def progress_line(m: BatchMetrics) -> str:
    """One line a person reads per batch (see the module docstring)."""
    parts = [f"batch {m.batch_id}: {reconciliation(m.result)}", f"tables {len(m.result.tables)}"]
    behind = m.behind_by_partition
    if behind:
        (topic, partition), worst = max(behind.items(), key=lambda kv: kv[1])
        parts.append(f"lag {sum(behind.values())} offsets (max {worst} on {topic}[{partition}])")
    else:
        parts.append("lag ? offsets" if behind is None else "lag 0 offsets")
    if m.seconds_behind is not None:
        parts.append(f"{m.seconds_behind:.1f} s behind the newest message")
    if m.result.seconds:
        parts.append(f"took {timing(m.result)}")
    return "; ".join(parts)


def write_record(spark: SparkSession, target: Target, m: BatchMetrics, app_id: str) -> None:
    """Append the batch's record and its other ``_cdc_sources`` rows (``m.result.sources_rows``)
    in one commit, once however often the batch is replayed."""
    rows = [*m.result.sources_rows, liveness.batch_row(m.record(app_id))]
    liveness.write(spark, target, rows, Txn(spark, app_id, m.batch_id))


def batch_end_offsets(spark: SparkSession, checkpoint: str, batch_id: int) -> PartitionOffsets:
    """Where batch ``batch_id`` ends, from the query's offset log (``offsets/<id>``).

    The log is written before the batch runs: line 1 is the version, line 2 the batch metadata,
    line 3 the Kafka source's offsets as ``{"topic": {"partition": offset}}``.
    """
    parsed = _offset_log_line(spark, checkpoint, batch_id, 2)
    if not isinstance(parsed, dict):
        return {}
    return {(t, int(p)): int(o) for t, parts in parsed.items() for p, o in parts.items()}


def batch_epoch(spark: SparkSession, checkpoint: str, batch_id: int) -> int | None:
    """The time (ms) the query's offset log gave batch ``batch_id`` when it planned it: the
    batch's input-order epoch (:data:`cdclake.model.INPUT_ORDER_DOC`), the same when the batch
    runs again after a crash. None when the log cannot be read."""
    meta = _offset_log_line(spark, checkpoint, batch_id, 1)
    stamp = meta.get("batchTimestampMs") if isinstance(meta, dict) else None
    return int(stamp) if isinstance(stamp, int) else None


def _offset_log_line(spark: SparkSession, checkpoint: str, batch_id: int, line: int) -> Any:
    """Line ``line`` of the offset log of ``batch_id``, parsed; None when unreadable."""
    path = f"{checkpoint.rstrip('/')}/offsets/{batch_id}"
    try:
        if "://" not in path or path.startswith("file:"):
            lines = Path(path.removeprefix("file:")).read_text(encoding="utf-8").splitlines()
        else:
            lines = [r[0] for r in spark.read.text(path).collect()]
        return json.loads(lines[line])
    except (OSError, IndexError, ValueError) as e:
        _log.warning("cannot read the offset log %s: %s", path, e)
        return None


class LatestOffsets:
    """The broker's latest offsets, asked with the Kafka admin client; None when unreachable.

    Options of the Spark source that start with ``kafka.`` are passed on without the prefix
    where librdkafka knows them (security settings mostly share their names).
    """

    def __init__(self, bootstrap: str, options: Mapping[str, str], timeout_s: float = 5.0) -> None:
        self.bootstrap, self.timeout_s = bootstrap, timeout_s
        self.options = {
            k.removeprefix("kafka."): v
            for k, v in options.items()
            if k.startswith("kafka.") and k != "kafka.bootstrap.servers"
        }
        self._admin: Any = None

    def _client(self) -> Any:
        if self._admin is None:
            from cdclake.run.kafka_tools import LIBRDKAFKA_LOG

            config = {"bootstrap.servers": self.bootstrap, "logger": LIBRDKAFKA_LOG}
            self._admin = _kafka_admin().AdminClient({**config, **self.options})
        return self._admin

    def __call__(self, partitions: Iterable[tuple[str, int]]) -> PartitionOffsets | None:
        from confluent_kafka import TopicPartition

        wanted = list(partitions)
        if not wanted:
            return {}
        try:
            futures = self._client().list_offsets(
                {TopicPartition(t, p): _kafka_admin().OffsetSpec.latest() for t, p in wanted},
                request_timeout=self.timeout_s,
            )
            return {
                (tp.topic, tp.partition): fut.result(timeout=self.timeout_s).offset
                for tp, fut in futures.items()
            }
        except Exception as e:  # lag is informative: a failed probe must not stop the query
            _log.warning("cannot read the latest offsets from %s: %s", self.bootstrap, e)
            return None


def _kafka_admin() -> Any:
    """``confluent_kafka.admin`` (untyped; imported late so Spark-only use does not need it)."""
    import importlib

    return importlib.import_module("confluent_kafka.admin")


def now() -> datetime:
    return datetime.now(UTC)
