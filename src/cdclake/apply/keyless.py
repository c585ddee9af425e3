"""Tables without a key: exactly the live rows, duplicates included.

With no key, a row is identified by its content. The table keeps one physical row per live
source row, each with ``_cdc_row_hash`` (SHA-256 of the content) and ``_cdc_dup`` (1..n among
identical rows), and the newest position that touched that content. A batch turns into a net
count per content:

- an insert (or snapshot read) adds one row equal to its after image, a delete removes one row
  equal to its before image, an update does both;
- an event whose position is not newer than what is stored for its content is ignored, so a
  re-delivered event has no effect, while the snapshot reads of one batch, which share one source
  position, all land (identical non-snapshot events of one batch count once);
- when the last copy of a content goes, a tombstone keeps its position.
"""

from __future__ import annotations

from collections.abc import Sequence

from delta.tables import DeltaTable
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from cdclake.apply import tables as tbl
from cdclake.apply.results import TableResult, Txn, timed
from cdclake.apply.scd1 import DELETED_FIELD, META_SET, ROW
from cdclake.model import POSITION_COL, Op
from cdclake.target_layout import DELETED_AT

HASH_COL = "_cdc_row_hash"
DUP_COL = "_cdc_dup"
KEYLESS_FIELDS = [StructField(HASH_COL, StringType()), StructField(DUP_COL, IntegerType())]


def _content_hash(image: str, columns: Sequence[str]) -> Column:
    return F.sha2(F.to_json(F.struct(*[F.col(image)[c].alias(c) for c in columns])), 256)


def row_events(rows: DataFrame, columns: Sequence[str]) -> DataFrame:
    """Changes -> (+1 after image, -1 before image) events per content (the image in
    :data:`cdclake.apply.scd1.ROW`)."""
    meta = [F.col(c) for c in ("position", "seq", "source_ts", "lineage", "op")]
    plus = rows.filter(F.col("op").isin(Op.INSERT, Op.READ, Op.UPDATE) & F.col("a").isNotNull())
    minus = rows.filter(F.col("op").isin(Op.DELETE, Op.UPDATE) & F.col("b").isNotNull())
    return plus.select(
        _content_hash("a", columns).alias("h"), F.lit(1).alias("sign"), *meta, F.col("a").alias(ROW)
    ).unionByName(
        minus.select(
            _content_hash("b", columns).alias("h"),
            F.lit(-1).alias("sign"),
            *meta,
            F.col("b").alias(ROW),
        )
    )


def apply_keyless(
    spark: SparkSession,
    target: tbl.Target,
    table: str,
    rows: DataFrame,
    row_struct: StructType,
    txn: Txn,
    result: TableResult,
) -> None:
    """Apply a keyless table's changes: each distinct row content is a multiset of copies
    (``_cdc_dup``); a change counts as +1 or -1 copies of its content, stale ones (older than
    the content's last write or tombstone, or re-delivered within the batch) are ignored, and
    one MERGE sets every content's copies; a content whose copies go to 0 gets a tombstone."""
    columns = [f.name for f in row_struct.fields]
    path = target.table_path(table)
    tomb_path = target.tombstone_path(table)
    ev = _events_seen(spark, rows, columns, path, tomb_path).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        result.ignored += ev.filter("_stale").count()
        per_content = _per_content(ev.filter(~F.col("_stale")))
        with txn("merge"), timed(result.seconds, "write"):
            merged = _merge_copies(spark, per_content, columns, path)
        row = merged.first()
        if row is not None:
            result.inserted += int(row["num_inserted_rows"] or 0)
            result.deleted += int(row["num_deleted_rows"] or 0)
        gone = per_content.filter("final = 0").select(
            "h", F.col("position").alias(POSITION_COL), F.current_timestamp().alias(DELETED_AT)
        )
        with txn("tombstones"), timed(result.seconds, "tombstones"):
            (
                DeltaTable.forPath(spark, tomb_path)
                .alias("t")
                .merge(gone.alias("s"), "t.h = s.h")
                .whenMatchedUpdate(
                    condition=f"s.{POSITION_COL} > t.{POSITION_COL}",
                    set={POSITION_COL: f"s.{POSITION_COL}", DELETED_AT: f"s.{DELETED_AT}"},
                )
                .whenNotMatchedInsertAll()
                .execute()
            )
    finally:
        ev.unpersist()


def _events_seen(
    spark: SparkSession, rows: DataFrame, columns: list[str], path: str, tomb_path: str
) -> DataFrame:
    """Each change as a signed event of its content hash ``h``, with the content's stored
    copies ``c``, their newest position ``p``, its tombstone's ``tp`` and whether it is
    ``_stale``."""
    events = row_events(rows, columns)
    # A re-delivery inside one batch: same content, same position, same sign, not a snapshot read.
    w_dup = Window.partitionBy("h", "position", "sign").orderBy("seq")
    events = events.withColumn(
        "_redelivered", (F.col("op") != Op.READ) & (F.row_number().over(w_dup) > 1)
    )
    # both read as of now (see tables.log_rows): this batch's MERGE into each must not re-plan
    # ``ev``
    stored = (
        tbl.log_rows(spark, path)
        .groupBy(F.col(HASH_COL).alias("h"))
        .agg(F.count(F.lit(1)).alias("c"), F.max(POSITION_COL).alias("p"))
    )
    tomb_schema = StructType(
        [
            StructField("h", StringType()),
            StructField(POSITION_COL, rows.schema["position"].dataType),
            DELETED_FIELD,
        ]
    )
    tbl.ensure_table(spark, tomb_path, tomb_schema)
    tombs = tbl.log_rows(spark, tomb_path).select("h", F.col(POSITION_COL).alias("tp"))
    ev = events.join(stored, "h", "left").join(tombs, "h", "left")
    seen = F.greatest(F.col("p"), F.col("tp"))
    return ev.withColumn(
        "_stale", F.col("_redelivered") | (seen.isNotNull() & (F.col("position") <= seen))
    )


def _per_content(live: DataFrame) -> DataFrame:
    """Per content hash: its newest live change and the copies it ends with (``final``: the
    stored copies ``c`` plus the signed events, at least 0)."""
    last = Window.partitionBy("h").orderBy(F.col("position").desc(), F.col("seq").desc())
    return (
        live.withColumn("_rn", F.row_number().over(last))
        .withColumn("net", F.sum("sign").over(Window.partitionBy("h")))
        .filter("_rn = 1")
        .select(
            "h",
            "position",
            "op",
            "source_ts",
            "lineage",
            ROW,
            F.coalesce(F.col("c"), F.lit(0)).alias("c"),
            F.greatest(F.lit(0), F.coalesce(F.col("c"), F.lit(0)) + F.col("net")).alias("final"),
        )
    )


def _merge_copies(
    spark: SparkSession, per_content: DataFrame, columns: list[str], path: str
) -> DataFrame:
    """One MERGE over copy slots 1..max(c, final) of each content: a slot past ``final`` is
    deleted, a kept one takes the newest change's metadata, a missing one is inserted. Its
    metrics."""
    slots = per_content.select(
        "*",
        F.explode(F.sequence(F.lit(1), F.greatest(F.col("c"), F.col("final"), F.lit(1)))).alias(
            "dup"
        ),
    ).filter((F.col("dup") <= F.col("c")) | (F.col("dup") <= F.col("final")))
    meta_set: dict[str, str | Column] = {**META_SET}
    return (
        DeltaTable.forPath(spark, path)
        .alias("t")
        .merge(slots.alias("s"), f"t.{HASH_COL} = s.h AND t.{DUP_COL} = s.dup")
        .whenMatchedDelete(condition="s.dup > s.final")
        .whenMatchedUpdate(set=meta_set)
        .whenNotMatchedInsert(
            condition="s.dup <= s.final",
            values={
                **{tbl.quote(c): f"s.{ROW}.{tbl.quote(c)}" for c in columns},
                HASH_COL: "s.h",
                DUP_COL: "s.dup",
                **meta_set,
            },
        )
        .execute()
    )
