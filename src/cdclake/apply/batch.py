"""Apply one batch of canonical changes to the target folder: quarantine, control, every table.

Counts reconcile: every change is either applied to a table (inserted, updated, deleted, or
superseded inside the batch), ignored (stale: not newer than what the table holds), a control
record, or quarantined with its reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from cdclake.apply import tables as T
from cdclake.apply.keyless import KEYLESS_FIELDS, apply_keyless
from cdclake.apply.scd1 import TableResult, Txn, apply_keyed, apply_truncates
from cdclake.errors import BadInputError
from cdclake.model import CONTROL_OPS, DATA_OPS, POSITION_TYPE, Op


@dataclass
class BatchResult:
    """What one batch did: per-table results and the batch-wide counts."""

    tables: dict[str, TableResult] = field(default_factory=dict)
    messages: int | None = None  # input records (lines or Kafka messages), when known
    changes: int = 0  # data changes decoded (a multi-row message gives several)
    control: int = 0
    control_by_op: dict[str, int] = field(default_factory=dict)
    quarantined: int = 0
    quarantine_reasons: dict[str, int] = field(default_factory=dict)

    @property
    def applied(self) -> int:
        return self.changes - self.ignored

    @property
    def ignored(self) -> int:
        return sum(t.ignored for t in self.tables.values())

    def merge(self, other: BatchResult) -> None:
        for name, t in other.tables.items():
            mine = self.tables.setdefault(name, TableResult(name))
            for attr in ("changes", "inserted", "updated", "deleted", "ignored", "truncated"):
                setattr(mine, attr, getattr(mine, attr) + getattr(t, attr))
            mine.key_columns, mine.key_source = t.key_columns, t.key_source
            mine.rows_now = t.rows_now
        self.messages = (self.messages or 0) + (other.messages or 0)
        self.changes += other.changes
        self.control += other.control
        self.quarantined += other.quarantined
        for k, v in other.control_by_op.items():
            self.control_by_op[k] = self.control_by_op.get(k, 0) + v
        for k, v in other.quarantine_reasons.items():
            self.quarantine_reasons[k] = self.quarantine_reasons.get(k, 0) + v


def _union_struct(schemas: list[str]) -> StructType:
    """The columns of every row-schema version seen in a batch, in first-seen order."""
    fields: dict[str, StructField] = {}
    for text in schemas:
        for f in StructType.fromJson(json.loads(text)).fields:
            fields[f.name] = StructField(f.name, f.dataType, True)  # a later version wins
    return StructType(list(fields.values()))


def quarantine(
    spark: SparkSession, target: T.Target, bad: DataFrame, txn: Txn, batch_id: int | None
) -> None:
    path = target.system_path(T.QUARANTINE)
    rows = bad.select(
        F.col("raw"),
        F.col("lineage"),
        F.col("error").alias("reason"),
        F.col("table"),
        F.col("op"),
        F.lit(batch_id).cast("bigint").alias("batch_id"),
        F.current_timestamp().alias("quarantined_at"),
    )
    with txn("quarantine"):
        rows.write.format("delta").mode("append").option("mergeSchema", "true").save(path)


def _raise_bad(bad: DataFrame) -> None:
    first = bad.orderBy("seq").select("lineage", "error", "raw").first()
    if first is None:
        return
    lin = first["lineage"]
    where = (
        f"{lin['source']} line {lin['offset']}"
        if lin["partition"] is None
        else f"topic {lin['source']} partition {lin['partition']} offset {lin['offset']}"
    )
    raw = (first["raw"] or "")[:200]
    raise BadInputError(f"bad input at {where}: {first['error']}: {raw}")


def apply_changes(
    changes: DataFrame,
    target: str,
    *,
    fail_on_bad_input: bool = False,
    app_id: str | None = None,
    batch_id: int | None = None,
    count_rows: bool = True,
) -> BatchResult:
    """Apply canonical changes (:data:`cdclake.model.CHANGE_SCHEMA`) to Delta tables under ``target``.

    ``app_id``/``batch_id`` make the writes idempotent: applying the same batch again (a
    streaming replay after a crash) skips what was already committed.

    >>> result = apply_changes(read_changes(spark, ["in.jsonl"]), "/lake")  # doctest: +SKIP
    >>> result.tables["testDB.dbo.customers"].inserted  # doctest: +SKIP
    1
    """
    spark = changes.sparkSession
    tgt = T.Target(target)
    txn = Txn(spark, app_id, batch_id)
    result = BatchResult()
    changes = changes.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        bad = changes.filter(F.col("error").isNotNull())
        reasons = bad.groupBy("error").count().collect()
        result.quarantined = sum(r["count"] for r in reasons)
        result.quarantine_reasons = {r["error"]: r["count"] for r in reasons}
        if result.quarantined:
            if fail_on_bad_input:
                _raise_bad(bad)
            quarantine(spark, tgt, bad, txn, batch_id)
        good = changes.filter(F.col("error").isNull())
        for r in good.filter(F.col("op").isin(*CONTROL_OPS)).groupBy("op").count().collect():
            result.control_by_op[r["op"]] = r["count"]
        result.control = sum(result.control_by_op.values())
        data = good.filter(F.col("op").isin(*DATA_OPS, Op.TRUNCATE))
        groups = (
            data.groupBy("table")
            .agg(
                F.collect_set("row_schema").alias("schemas"),
                F.max_by("key_columns", "seq").alias("keys"),
                F.max_by("key_source", "seq").alias("key_source"),
                F.count(F.lit(1)).alias("n"),
                F.count_if(F.col("op") == Op.TRUNCATE).alias("n_truncate"),
                F.count_if(
                    (F.col("op") == Op.DELETE)
                    | ((F.col("op") == Op.UPDATE) & F.col("before").isNotNull())
                ).alias("n_delete"),
                F.count_if(F.size("unavailable") > 0).alias("n_unavailable"),
            )
            .collect()
        )
        for g in sorted(groups, key=lambda r: r["table"]):
            res = apply_table(
                spark, tgt, g["table"], data.filter(F.col("table") == g["table"]),
                [s for s in g["schemas"] if s], tuple(g["keys"] or ()), txn,
                TableStats(g["n"], g["n_truncate"], g["n_delete"], g["n_unavailable"]),
            )
            res.changes = g["n"]
            res.key_source = g["key_source"] or ""
            if count_rows:
                res.rows_now = spark.read.format("delta").load(tgt.table_path(g["table"])).count()
            result.tables[g["table"]] = res
        result.changes = sum(t.changes for t in result.tables.values())
    finally:
        changes.unpersist()
    return result


def apply_table(
    spark: SparkSession,
    target: T.Target,
    table: str,
    data: DataFrame,
    schemas: list[str],
    keys: tuple[str, ...],
    txn: Txn,
    stats: TableStats,
) -> TableResult:
    """Apply one table's changes of a batch."""
    result = TableResult(table, key_columns=keys)
    row_struct = _union_struct(schemas)
    extra = [] if keys else KEYLESS_FIELDS
    full = StructType([*row_struct.fields, *T.meta_fields(POSITION_TYPE), *extra])
    path = target.table_path(table)
    T.ensure_table(spark, path, full, {T.KEY_PROPERTY: ",".join(keys)} if keys else None)
    rows = data.select(
        "op", "position", "seq", "source_ts", "lineage", "unavailable",
        F.col("after").cast(row_struct).alias("a"),
        F.col("before").cast(row_struct).alias("b"),
    )
    n_data = stats.changes - stats.truncates
    if stats.truncates or T.truncate_position(spark, path) is not None:
        rows = apply_truncates(spark, path, rows, txn, result)
        rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
        n_live = rows.count()
        result.ignored += result.stale_before_truncate
    else:
        n_live = n_data
    try:
        if n_live:
            if keys:
                apply_keyed(spark, target, table, rows, row_struct, keys, txn, result, stats)
            else:
                apply_keyless(spark, target, table, rows, row_struct, txn, result)
    finally:
        rows.unpersist()
    return result


@dataclass(frozen=True)
class TableStats:
    """What the batch holds for one table (from the one aggregate that groups tables)."""

    changes: int
    truncates: int
    deletes: int  # deletes, and updates with a before image (a key change deletes the old key)
    unavailable: int  # changes with TOAST-unavailable columns
