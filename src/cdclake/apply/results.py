"""What applying does, as data: per-table and per-batch results, the stats a batch holds for a
table, and the idempotent-write scope of a batch. A leaf of :mod:`cdclake.apply`: every applier
module imports it, it imports none of them."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

_log = logging.getLogger(__name__)

STEPS = ("decode", "quarantine", "tables", "consistency", "record")
"""The steps of a batch, in order (:attr:`BatchResult.seconds`); they cut its wall time:

- ``decode``: reading the records, planning, decoding and typing them into the batch's cache,
  and the batch's counts (the first action that reads the input; two passes when needed);
- ``quarantine``: appending the bad records to ``_cdc_quarantine``;
- ``tables``: writing the tables (:data:`TABLE_STEPS` tells what of it each table took);
- ``consistency``: ``--consistent``'s gate keeping the changes of incomplete transactions;
- ``record``: cdclake's bookkeeping (``_cdc_sources``, a stream's record of the batch)."""

TABLE_STEPS = ("tombstones", "log", "write")
"""What of a batch's ``tables`` step one table took (:attr:`TableResult.seconds`): recording
its deletes' tombstones, appending to its history's log (SCD type 2), and the write itself (the
MERGE, an initial load, a truncate's delete). The rest of the step is planning, counts and
probes. Tables are written side by side, so their sums can exceed the step."""


class Laps:
    """A batch's wall time cut into its :data:`STEPS`: :meth:`lap` gives a step the time
    since the lap before (or since the batch began)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, step: str) -> None:
        now = time.perf_counter()
        self.seconds[step] = self.seconds.get(step, 0.0) + now - self._last
        self._last = now


@contextmanager
def timed(seconds: dict[str, float], step: str) -> Iterator[None]:
    """Add the wall time of the block to ``seconds[step]``."""
    started = time.perf_counter()
    try:
        yield
    finally:
        seconds[step] = seconds.get(step, 0.0) + time.perf_counter() - started


def _add(into: dict[str, float], other: dict[str, float]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0.0) + v


@dataclass
class TableResult:
    """What one batch did to one table."""

    table: str
    changes: int = 0
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    ignored: int = 0  # stale, re-delivered, or a delete of a row that is not there
    truncated: int = 0
    stale_before_truncate: int = 0
    key_columns: tuple[str, ...] = ()
    key_source: str = ""
    rows_now: int | None = None
    input_ordered: bool = False  # ordered by input order only: its source gives no position
    seconds: dict[str, float] = field(default_factory=dict)  # by TABLE_STEPS


@dataclass
class BatchResult:
    """What one batch did: per-table results and the batch-wide counts."""

    tables: dict[str, TableResult] = field(default_factory=dict)
    messages: int | None = None  # input records (lines or Kafka messages), when known
    changes: int = 0  # data changes decoded (a multi-row message gives several)
    control: int = 0
    control_by_op: dict[str, int] = field(default_factory=dict)
    quarantined: int = 0
    excluded: int = 0  # changes of tables left out by --include/--exclude
    quarantine_reasons: dict[str, int] = field(default_factory=dict)
    one_pass: bool = False  # typed in one pass, with the plans of earlier batches of a stream
    # --consistent (cdclake.apply.consistency): changes waiting for their transaction after the
    # batch, changes of earlier batches it applied, transactions it applied incomplete
    pending: int = 0
    released_from_pending: int = 0
    timed_out: list[str] = field(default_factory=list)
    # the batch's rows of _cdc_sources when its caller writes them (apply_changes' record_sources)
    sources_rows: list[dict[str, Any]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # wall time by STEPS

    @property
    def applied(self) -> int:
        return self.changes - self.ignored

    @property
    def ignored(self) -> int:
        return sum(t.ignored for t in self.tables.values())

    def table_seconds(self) -> dict[str, float]:
        """The :data:`TABLE_STEPS` of the batch's tables, summed over the tables."""
        total: dict[str, float] = {}
        for t in self.tables.values():
            _add(total, t.seconds)
        return total

    def merge(self, other: BatchResult) -> None:
        for name, t in other.tables.items():
            mine = self.tables.setdefault(name, TableResult(name))
            for attr in ("changes", "inserted", "updated", "deleted", "ignored", "truncated"):
                setattr(mine, attr, getattr(mine, attr) + getattr(t, attr))
            mine.key_columns, mine.key_source = t.key_columns, t.key_source
            mine.input_ordered = mine.input_ordered or t.input_ordered
            mine.rows_now = t.rows_now
            _add(mine.seconds, t.seconds)
        self.messages = (self.messages or 0) + (other.messages or 0)
        self.changes += other.changes
        self.control += other.control
        self.quarantined += other.quarantined
        self.excluded += other.excluded
        self.pending = other.pending
        self.released_from_pending += other.released_from_pending
        self.timed_out += other.timed_out
        for k, v in other.control_by_op.items():
            self.control_by_op[k] = self.control_by_op.get(k, 0) + v
        for k, v in other.quarantine_reasons.items():
            self.quarantine_reasons[k] = self.quarantine_reasons.get(k, 0) + v
        _add(self.seconds, other.seconds)


@dataclass(frozen=True)
class TableStats:
    """What the batch holds for one table (from the one aggregate that groups tables)."""

    changes: int
    truncates: int
    deletes: int
    befores: int  # updates with a before image: a key change among them deletes the old key
    unavailable: int  # changes with TOAST-unavailable columns
    input_ordered: bool = False  # its source gives no position (see cdclake.model.ORDERING_KEY)


class Txn:
    """Idempotent Delta writes: a replayed batch skips the writes it already committed.

    Writes that read the table (MERGE, DELETE, a table's creation) take Delta's own
    ``txnAppId``/``txnVersion`` (``with txn(step):``). Blind appends to cdclake's own logs go
    through :meth:`append`, which does not: Delta answers ``txnVersion`` from the table's whole
    state (a state reconstruction of three Spark jobs, 0.6 s a table in a small batch), where
    an append needs none.
    """

    def __init__(self, spark: SparkSession, app_id: str | None, version: int | None) -> None:
        self.spark, self.app_id, self.version = spark, app_id, version

    def __call__(self, step: str) -> _TxnScope:
        return _TxnScope(self, step)

    def append(
        self,
        df: DataFrame,
        path: str,
        step: str,
        options: dict[str, str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> bool:
        """Append ``df`` to the Delta table at ``path`` (created by the append when it is not
        there) unless this batch's ``step`` has appended to it already; whether it appended.

        The commit names the write in its ``userMetadata`` (:data:`cdclake.apply.tables.TXN_KEY`),
        and the table's newest commits say whether the batch is there
        (:func:`cdclake.apply.tables.last_txn_version`): a replayed batch finds its own commit
        at the top of the log. When they cannot say (the write's first batch to this table, a
        table written by an earlier cdclake, a Spark Connect session), the append also takes
        Delta's own ``txnAppId``/``txnVersion``, and Delta decides. ``metadata``: more keys for
        that document, which later batches read back from the commit
        (:func:`cdclake.apply.tables.newest_metadata`).
        """
        from cdclake.apply.tables import last_txn_version, txn_metadata

        writer = df.write.format("delta").mode("append").options(**(options or {}))
        if self.app_id is None or self.version is None:
            if metadata:
                writer = writer.option("userMetadata", txn_metadata(None, None, **metadata))
            writer.save(path)
            return True
        tag = f"{self.app_id}/{step}"
        last = last_txn_version(self.spark, path, tag)
        if last is not None and last >= self.version:
            return False
        writer = writer.option("userMetadata", txn_metadata(tag, self.version, **(metadata or {})))
        if last is None:
            writer = writer.option("txnAppId", tag).option("txnVersion", str(self.version))
        writer.save(path)
        return True

    def append_rows(
        self, rows: list[dict[str, Any]], schema: StructType, path: str, step: str
    ) -> bool:
        """Append ``rows`` of ``schema`` (a few, on the driver) to the Delta table at ``path`` as
        :meth:`append` does, a column the table lacks added; whether it appended.

        On a local path of a classic session the driver commits them itself, with delta-rs
        (:func:`cdclake.delta_rs.append`): no Spark job, a few milliseconds where Spark's append
        of a few rows takes about half a second (a batch's bookkeeping). The commit carries the
        same ``userMetadata`` and Delta's own ``txn`` action of the write, so either writer
        finds a batch the other committed. Elsewhere, or if delta-rs cannot write the table (a
        protocol feature it lacks), Spark appends them."""
        from cdclake import delta_rs
        from cdclake.apply.tables import TXN_KEY, TXN_REACH, txn_metadata
        from cdclake.errors import one_line

        if delta_rs.appends_here(self.spark, path):
            tag = None if self.app_id is None else f"{self.app_id}/{step}"
            txn = None if tag is None or self.version is None else (tag, self.version)
            try:
                table = delta_rs.open_table(path)
                if txn is not None and table is not None:
                    last = delta_rs.newest_txn(table, txn[0], TXN_KEY, TXN_REACH)
                    if last is not None and last >= txn[1]:
                        return False
                meta = None if txn is None else txn_metadata(*txn)
                delta_rs.append(path, rows, schema, meta, txn, table)
                return True
            except Exception as e:  # Spark's append below is the fallback
                _log.warning("delta-rs cannot append to %s (%s); Spark does", path, one_line(e))
        df = self.spark.createDataFrame(rows, schema).coalesce(1)  # a few rows: one file
        return self.append(df, path, step, {"mergeSchema": "true"})


class _TxnScope:
    def __init__(self, txn: Txn, step: str) -> None:
        self.txn, self.step = txn, step

    def __enter__(self) -> None:
        if self.txn.app_id is not None and self.txn.version is not None:
            conf = self.txn.spark.conf
            conf.set("spark.databricks.delta.write.txnAppId", f"{self.txn.app_id}/{self.step}")
            conf.set("spark.databricks.delta.write.txnVersion", str(self.txn.version))

    def __exit__(self, *exc: object) -> None:
        if self.txn.app_id is not None:
            conf = self.txn.spark.conf
            conf.unset("spark.databricks.delta.write.txnAppId")
            conf.unset("spark.databricks.delta.write.txnVersion")
