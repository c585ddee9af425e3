"""cdclake's Prometheus metrics: every name, type and label in one place.

Two sets, one exposition format (Prometheus' text format, the ``prometheus_client`` library):

- the **status gauges** (:class:`StatusGauges`), built from a :class:`cdclake.ops.status.Status`:
  what ``cdclake status --format prometheus`` prints for node_exporter's textfile collector,
  and what ``cdclake apply --metrics-port`` serves after reading the status after each batch;
- the **run metrics** (:class:`RunMetrics`), counted from what each batch of a running
  ``cdclake apply`` produced (its :class:`cdclake.apply.results.BatchResult`): counters since the
  process started, histograms, the Kafka lag per partition.

Labels are bounded: table names, Kafka topics and partitions, control ops, and quarantine
reasons folded to their templates (:func:`reason_template`), never a raw value. Freshness is
computed when scraped (now minus the newest source time the status saw), so it grows while no
batch comes.

=============================================== ========= ==================================
metric                                          type      labels
=============================================== ========= ==================================
``cdclake_table_freshness_seconds``             gauge     table
``cdclake_table_last_source_timestamp_seconds`` gauge     table
``cdclake_table_rows``                          gauge     table
``cdclake_table_quarantined_records``           gauge     table
``cdclake_quarantined_records``                 gauge     reason
``cdclake_stream_last_batch_timestamp_seconds`` gauge
``cdclake_stream_lag_offsets``                  gauge
``cdclake_stream_lag_seconds``                  gauge
``cdclake_messages_total``                      counter
``cdclake_events_applied_total``                counter   table
``cdclake_events_ignored_total``                counter   table
``cdclake_events_quarantined_total``            counter   reason
``cdclake_control_records_total``               counter   op
``cdclake_batches_total``                       counter
``cdclake_batch_duration_seconds``              histogram
``cdclake_batch_step_seconds``                  histogram step
``cdclake_table_step_seconds``                  histogram table, step
``cdclake_end_to_end_latency_seconds``          histogram table
``cdclake_kafka_lag_offsets``                   gauge     topic, partition
=============================================== ========= ==================================

>>> gauges = StatusGauges(target_status("/lake"))  # doctest: +SKIP
>>> print(exposition(gauges))  # doctest: +SKIP
# HELP cdclake_table_freshness_seconds Seconds the table is behind its source ...
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from cdclake.errors import CdclakeError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdclake.apply.results import BatchResult
    from cdclake.config import ApplyConfig
    from cdclake.ops.status import Status

_log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
REASON_LENGTH = 90
# seconds: a micro-batch takes from under a second to many minutes (a first snapshot)
DURATION_BUCKETS = (0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)
# a batch's steps (decode, tables, ...) and a table's (its MERGE, its tombstones): from tens of
# milliseconds in a steady stream
STEP_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800)
# seconds from the source's commit to ours: the trigger interval plus a batch, or hours behind
LATENCY_BUCKETS = (1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800, 3600, 4 * 3600, 24 * 3600)


class MetricsError(CdclakeError):
    """The metrics endpoint cannot be served (the port is taken, the host is not ours)."""


def reason_template(reason: str) -> str:
    """A quarantine reason without its values: the label of ``cdclake_*quarantined*``.

    Quoted values become ``'…'``, numbers ``N``; a JSON parser's message keeps only its
    first clause (the rest quotes the input); at most 90 characters.

    >>> reason_template("message of 812 bytes is over the limit of 500 bytes")
    'message of N bytes is over the limit of N bytes'
    >>> reason_template("column 'qty': expected int64, got 'abc'")
    "column '…': expected intN, got '…'"
    """
    text = reason.split(":")[0] if "not valid JSON" in reason else reason
    text = re.sub(r"'[^']*'", "'…'", text)
    return re.sub(r"\d+", "N", text)[:REASON_LENGTH]


def folded(reasons: dict[str, int]) -> dict[str, int]:
    """Counts by reason -> counts by :func:`reason_template`."""
    out: dict[str, int] = {}
    for reason, n in reasons.items():
        key = reason_template(reason or "")
        out[key] = out.get(key, 0) + n
    return out


def _unix(moment: datetime | None) -> float | None:
    from cdclake.ops.status import utc

    return None if moment is None else utc(moment).timestamp()


class StatusGauges(Collector):
    """The gauges of a :class:`~cdclake.ops.status.Status` (see the module doc for the names).

    ``clock`` (unix seconds) is when freshness is measured: by default the status's own ``now``
    (a textfile written once); a live endpoint passes ``time.time`` so that a table of a silent
    source grows staler between batches.
    """

    def __init__(
        self, status: Status | None = None, clock: Callable[[], float] | None = None
    ) -> None:
        self.status, self.clock = status, clock

    def update(self, status: Status) -> None:
        self.status = status

    def describe(self) -> list[Metric]:
        return []  # names are only known once collected; none clash with RunMetrics'

    def collect(self) -> Iterator[Metric]:
        s = self.status
        if s is None:
            return
        taken = s.now.timestamp()
        now = self.clock() if self.clock is not None else taken
        per_table = {
            name: GaugeMetricFamily(f"cdclake_table_{name}", text, labels=["table"])
            for name, text in (
                ("freshness_seconds", "Seconds the table is behind its source (heartbeats count)"),
                ("last_source_timestamp_seconds", "Source time of the newest change applied"),
                ("rows", "Rows the table holds (its current rows under SCD2 and history)"),
                ("quarantined_records", "Records of the table in the quarantine"),
            )
        }
        for t in s.tables:
            if t.freshness_seconds is not None:
                newest = taken - t.freshness_seconds
                per_table["freshness_seconds"].add_metric([t.table], round(now - newest, 3))
            source_ts = _unix(t.last_source_ts)
            if source_ts is not None:
                per_table["last_source_timestamp_seconds"].add_metric([t.table], source_ts)
            if t.rows is not None:  # unknown without the log's statistics: no sample
                per_table["rows"].add_metric([t.table], t.rows)
            per_table["quarantined_records"].add_metric([t.table], t.quarantined)
        yield from per_table.values()
        reasons = GaugeMetricFamily(
            "cdclake_quarantined_records",
            "Records in the quarantine, by reason template",
            labels=["reason"],
        )
        for reason, n in sorted(folded(s.quarantine).items()):
            reasons.add_metric([reason], n)
        yield reasons
        yield from self._stream(s.stream)

    def _stream(self, stream: dict[str, Any]) -> Iterator[Metric]:
        values = (
            ("last_batch_timestamp_seconds", "When the newest batch was committed",
             _unix(stream.get("last_batch_at"))),
            ("lag_offsets", "Kafka offsets behind the broker after the newest batch, in all",
             stream.get("offsets_behind")),
            ("lag_seconds", "Seconds between the newest batch's end and its newest message",
             stream.get("seconds_behind")),
        )  # fmt: skip
        for name, text, value in values:
            if value is not None:
                yield GaugeMetricFamily(f"cdclake_stream_{name}", text, value=float(value))


def exposition(*collectors: Collector) -> str:
    """The collectors' metrics in Prometheus' text format."""
    registry = CollectorRegistry(auto_describe=False)
    for c in collectors:
        registry.register(c)
    return generate_latest(registry).decode("utf-8")


class RunMetrics:
    """The metrics of one ``cdclake apply`` run, in a registry of its own; ``status_of`` reads
    the target's status after each batch (a failing read is logged and skipped); ``table_map``
    (``--map-table``) names tables as the target does.

    >>> m = RunMetrics(lambda: target_status(spark, "/lake"))  # doctest: +SKIP
    >>> m.serve(9108)  # doctest: +SKIP
    >>> m.batch(result, started, finished)  # after every batch  # doctest: +SKIP
    """

    def __init__(
        self,
        status_of: Callable[[], Status] | None = None,
        table_map: dict[str, str] | None = None,
    ) -> None:
        self.status_of, self.table_map = status_of, dict(table_map or {})
        self.registry = r = CollectorRegistry(auto_describe=True)
        self.gauges = StatusGauges(clock=time.time)
        r.register(self.gauges)
        self.messages = Counter("cdclake_messages", "Input records read", registry=r)
        self.applied = Counter("cdclake_events_applied", "Changes applied", ["table"], registry=r)
        self.ignored = Counter(
            "cdclake_events_ignored",
            "Changes ignored as stale (not newer than the row's) or re-delivered",
            ["table"],
            registry=r,
        )
        self.quarantined = Counter(
            "cdclake_events_quarantined", "Records quarantined, by reason template", ["reason"],
            registry=r,
        )  # fmt: skip
        self.control = Counter(
            "cdclake_control_records", "Heartbeats, transaction markers, DDL", ["op"], registry=r
        )
        self.batches = Counter("cdclake_batches", "Batches committed", registry=r)
        self.duration = Histogram(
            "cdclake_batch_duration_seconds", "Time to apply a batch", registry=r,
            buckets=DURATION_BUCKETS,
        )  # fmt: skip
        self.steps = Histogram(
            "cdclake_batch_step_seconds",
            "Wall time of a batch by step (decode, quarantine, tables, consistency, record)",
            ["step"],
            registry=r,
            buckets=STEP_BUCKETS,
        )
        self.table_steps = Histogram(
            "cdclake_table_step_seconds",
            "Wall time of a table's write in a batch by step (tombstones, log, write)",
            ["table", "step"],
            registry=r,
            buckets=STEP_BUCKETS,
        )
        self.latency = Histogram(
            "cdclake_end_to_end_latency_seconds",
            "Source time of a batch's newest change of a table to the batch's commit",
            ["table"],
            registry=r,
            buckets=LATENCY_BUCKETS,
        )
        self.lag = Gauge(
            "cdclake_kafka_lag_offsets",
            "Offsets of the partition not yet read after the newest batch",
            ["topic", "partition"],
            registry=r,
        )
        self._server: Any = None

    def serve(self, port: int, host: str = DEFAULT_HOST) -> None:
        """Serve ``/metrics`` on ``host:port`` from a daemon thread until :meth:`close`."""
        from prometheus_client import start_http_server

        try:
            self._server, _ = start_http_server(port, addr=host, registry=self.registry)
        except OSError as e:
            raise MetricsError(
                f"--metrics-port {port}: cannot serve metrics on {host}:{port} ({e.strerror or e})"
            ) from None

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def batch(
        self,
        result: BatchResult,
        started: datetime,
        finished: datetime,
        behind: dict[tuple[str, int], int] | None = None,
    ) -> None:
        """Count a committed batch, then read the status for the gauges and the latency."""
        self.messages.inc(result.messages or 0)
        tables = {self.table_map.get(n, n): t for n, t in result.tables.items()}
        for name, t in tables.items():
            self.applied.labels(name).inc(t.changes - t.ignored)
            self.ignored.labels(name).inc(t.ignored)
        for reason, n in folded(result.quarantine_reasons).items():
            self.quarantined.labels(reason).inc(n)
        # a table refused as a whole counts its changes as quarantined without a reason row
        unnamed = result.quarantined - sum(result.quarantine_reasons.values())
        if unnamed > 0:
            self.quarantined.labels("(other)").inc(unnamed)
        for op, n in result.control_by_op.items():
            self.control.labels(op).inc(n)
        self.batches.inc()
        self.duration.observe(max((finished - started).total_seconds(), 0.0))
        for step, seconds in result.seconds.items():
            self.steps.labels(step).observe(seconds)
        for name, t in tables.items():
            for step, seconds in t.seconds.items():
                self.table_steps.labels(name, step).observe(seconds)
        for (topic, partition), n in (behind or {}).items():
            self.lag.labels(topic, str(partition)).set(n)
        status = self.refresh()
        if status is None:
            return
        committed = finished.timestamp()
        for ts in status.tables:
            done = tables.get(ts.table)
            source_ts = _unix(ts.last_source_ts)
            if done is not None and done.changes > done.ignored and source_ts:
                self.latency.labels(ts.table).observe(max(committed - source_ts, 0.0))

    def refresh(self) -> Status | None:
        """Read the status into the gauges; None when it cannot be read (logged)."""
        if self.status_of is None:
            return None
        try:
            status = self.status_of()
        except Exception as e:  # the gauges are informative: a failed read must not stop a run
            _log.warning("metrics: cannot read the target's status: %s", e)
            return None
        self.gauges.update(status)
        return status

    def text(self) -> str:
        return generate_latest(self.registry).decode("utf-8")


@contextmanager
def serving(spark: SparkSession, config: ApplyConfig) -> Iterator[RunMetrics | None]:
    """The run's metrics served on ``config.metrics_host:metrics_port`` while the block runs;
    None without a port. Raises :class:`MetricsError` when the port cannot be had."""
    if config.metrics_port is None:
        yield None
        return
    from cdclake.ops.status import target_status

    m = RunMetrics(lambda: target_status(config.target), config.table_map)
    m.serve(config.metrics_port, config.metrics_host)
    m.refresh()  # a restarted run shows where the tables stand before its first batch
    try:
        yield m
    finally:
        m.close()
