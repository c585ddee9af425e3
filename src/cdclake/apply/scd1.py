"""SCD type 1: keep exactly the live rows of a source table, whatever order changes arrive in.

The rules (``stored_as_scd_type=1``):

- within a batch the last change per key by ``position`` wins (input order breaks ties);
- across batches a change whose position is not newer than what the table holds for its key is
  ignored: re-delivered and late events have no effect;
- a delete leaves a tombstone ``(key, position)`` in ``<target>/_cdc_tombstones/<identifier>``
  (an append-only log; the newest position per key counts) so that an older event cannot bring
  the row back, while a newer insert does;
- a truncate removes every row older than its position and is remembered as a table property,
  so that older events that arrive later are ignored too;
- a column the source marks unavailable (PostgreSQL TOAST) keeps its stored value;
- an update whose before image has another key also deletes the old key (primary-key change).

Tables without a key keep one physical row per live source row, duplicates included; see
:mod:`cdclake.apply.keyless`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from delta.tables import DeltaTable
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType, TimestampType

from cdclake.apply import tables as tbl
from cdclake.apply.results import TableResult, TableStats, Txn, timed
from cdclake.apply.tombstones import newest_per_key, newest_tombstones
from cdclake.model import LINEAGE_COL, OP_COL, POSITION_COL, SOURCE_TS_COL, Op
from cdclake.names import needs_column_mapping
from cdclake.target_layout import DELETED_AT

DELETED_FIELD = StructField(DELETED_AT, TimestampType())
UPSERT = "upsert"
DELETE = "delete"
ROW = "_cdc_row"
"""The image's columns, nested in one struct while a batch is worked on: next to the working
columns (``position``, ``op``, ``seq``...) a source column of any name, ``position`` too."""


def _merge_counts(result: DataFrame | None) -> tuple[int, int, int]:
    row = result.first() if result is not None else None
    if row is None:
        return 0, 0, 0
    d = row.asDict()
    return (
        int(d.get("num_inserted_rows") or 0),
        int(d.get("num_updated_rows") or 0),
        int(d.get("num_deleted_rows") or 0),
    )


def position_literal(position: Sequence[int]) -> Column:
    return F.array(*[F.lit(int(x)).cast("bigint") for x in position])


def apply_truncates(
    spark: SparkSession, path: str, rows: DataFrame, txn: Txn, result: TableResult
) -> DataFrame:
    """Delete rows older than the newest truncate; drop changes at or before it."""
    newest = rows.filter(F.col("op") == Op.TRUNCATE).agg(F.max("position")).first()
    batch_pos = list(newest[0]) if newest and newest[0] is not None else None
    stored = tbl.truncate_position(spark, path)
    data = rows.filter(F.col("op") != Op.TRUNCATE)
    if stored is not None:
        result.stale_before_truncate = data.filter(
            F.col("position") <= position_literal(stored)
        ).count()
    if batch_pos is not None and (stored is None or batch_pos > stored):
        with txn("truncate"), timed(result.seconds, "write"):
            before = spark.read.format("delta").load(path).count()
            DeltaTable.forPath(spark, path).delete(
                F.col(POSITION_COL) < position_literal(batch_pos)
            )
            result.truncated += before - spark.read.format("delta").load(path).count()
        tbl.set_truncate_position(spark, path, batch_pos)
        stored = batch_pos
    if stored is None:
        return data
    return data.filter(F.col("position") > position_literal(stored))


def _key_of(image: str, keys: Sequence[str]) -> list[Column]:
    return [F.col(image)[k].alias(f"_k{i}") for i, k in enumerate(keys)]


def expand(rows: DataFrame, keys: Sequence[str]) -> DataFrame:
    """Changes -> row operations: an upsert of the after image and/or a delete of the before key
    (the image in :data:`ROW`, the key in ``_k0.._kn``).

    Each change yields its operations from one generator over ``rows``, not from a union of two
    filtered reads of it: a filter is pushed below the projection that casts the images
    (variants) to the table's row type, so each filter and each branch cast them again, and a
    variant's cast builds an expression per value. Here each image is cast once per change.
    """
    image = rows.schema["a"].dataType
    assert isinstance(image, StructType), image
    a = F.col("a")
    meta = [F.col(c) for c in ("position", "seq", "source_ts", "lineage", "unavailable", "op")]
    upsert = F.struct(*_key_of("a", keys), F.lit(UPSERT).alias("_kind"), *meta, a.alias(ROW))
    delete = F.struct(
        *_key_of("b", keys),
        F.lit(DELETE).alias("_kind"),
        *meta,
        F.lit(None).cast(image).alias(ROW),
    )
    ops = F.array(
        F.when(F.col("op").isin(Op.INSERT, Op.READ, Op.UPDATE) & a.isNotNull(), upsert),
        F.when((F.col("op") == Op.DELETE) | deletes_old_key(keys), delete),
    )
    return rows.select(F.inline(F.filter(ops, lambda o: o.isNotNull())))


def deletes_old_key(keys: Sequence[str]) -> Column:
    """An update that deletes its before image's key: the key changed, or no after image."""
    key_changed = F.lit(False)
    for k in keys:
        key_changed = key_changed | ~F.col("b")[k].eqNullSafe(F.col("a")[k])
    return (F.col("op") == Op.UPDATE) & F.col("b").isNotNull() & (F.col("a").isNull() | key_changed)


def has_deletes(rows: DataFrame, keys: Sequence[str], stats: TableStats) -> bool:
    """Whether the batch deletes a key of this table. Updates with a before image (PostgreSQL's
    ``REPLICA IDENTITY FULL``, MySQL's binlog) rarely change their key: one look at the
    batch's rows, which stops at the first key change, decides it, rather than a write of
    tombstones that would find none."""
    if stats.deletes:
        return True
    if not stats.befores:
        return False
    return bool(rows.filter(deletes_old_key(keys)).select(F.lit(1)).limit(1).collect())


def fill_unavailable(ops: DataFrame, keys: Sequence[str], columns: Sequence[str]) -> DataFrame:
    """An unavailable (TOAST) value takes the last known value of the same key in this batch."""
    w = (
        Window.partitionBy(*[f"_k{i}" for i in range(len(keys))])
        .orderBy("position", "seq")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    filled = {}
    for c in columns:
        value = F.struct(F.col(ROW)[c].alias("v"))
        filled[c] = F.last(
            F.when(~F.array_contains(F.col("unavailable"), c), value), ignorenulls=True
        ).over(w)
    out = ops.select(
        *[tbl.column(c) for c in ops.columns if c != ROW],
        F.struct(*[filled[c]["v"].alias(c) for c in columns]).alias(ROW),
        *[filled[c].isNull().alias(f"_u_{i}") for i, c in enumerate(columns)],
    )
    still = F.filter(
        F.array(*[F.when(F.col(f"_u_{i}"), F.lit(c)) for i, c in enumerate(columns)]),
        lambda x: x.isNotNull(),
    )
    return out.withColumn("unavailable", F.array_intersect(F.col("unavailable"), still)).drop(
        *[f"_u_{i}" for i in range(len(columns))]
    )


def latest_per_key(ops: DataFrame, keys: Sequence[str]) -> DataFrame:
    w = Window.partitionBy(*[f"_k{i}" for i in range(len(keys))]).orderBy(
        F.col("position").desc(), F.col("seq").desc()
    )
    return ops.withColumn("_rn", F.row_number().over(w)).filter("_rn = 1").drop("_rn")


def _key_match(keys: Sequence[str], left: str, right: str) -> str:
    """Null-safe equality of the table's key columns with the source's ``_k0.._kn``."""
    return " AND ".join(f"{left}.{tbl.quote(k)} <=> {right}.`_k{i}`" for i, k in enumerate(keys))


TOMBSTONES_ON_DRIVER = 10_000
"""A batch's tombstones, when it can have at most this many (its deletes and its updates with a
before image, which the batch summary counts), are collected and committed by the driver with
delta-rs on a local path (:meth:`Txn.append_rows`): a key and a position each, well under a
megabyte. A Spark append of a few rows is a write job and its planning, about 0.7 s of a steady
micro-batch with deletes (issue 36); more tombstones than this, object storage and Spark Connect
are appended by Spark."""

_DRIVER_KEY_TYPES = (
    "string",
    "long",
    "integer",
    "short",
    "byte",
    "boolean",
    "double",
    "float",
    "decimal",
    "date",
    "binary",
    "timestamp",
)
"""The key types whose values the driver's append writes exactly as Spark would (a time
without a zone, ``timestamp_ntz``, or a nested key goes through Spark)."""


def record_tombstones(
    spark: SparkSession,
    target: tbl.Target,
    table: str,
    source: DataFrame,
    keys: Sequence[str],
    key_types: StructType,
    txn: Txn,
    at_most: int | None = None,
) -> None:
    """Append ``(key, position, deleted_at)`` of this batch's deletes to the table's tombstone
    log (``deleted_at``: now, what ``cdclake maintain --tombstone-retention`` ages).

    The log is append-only: a key deleted again gets a second row, and readers take the newest
    position per key (:func:`tombstone_positions`; a batch's MERGE joins the aggregate that
    :func:`cdclake.apply.tombstones.newest_tombstones` keeps from batch to batch, reading only
    the files appended since). An append is one write and one commit,
    where keeping one row per key took a MERGE (about ten Spark jobs) in every batch with a
    delete. ``at_most``: how many tombstones the batch can hold at most (None: unknown); up to
    :data:`TOMBSTONES_ON_DRIVER` the driver commits them itself.
    """
    path = target.tombstone_path(table)
    deletes = source.filter(F.col("_kind") == DELETE)
    position_type = source.schema["position"].dataType
    schema = StructType([*key_types.fields, *tbl.meta_fields(position_type)[:1], DELETED_FIELD])
    on_driver = at_most is not None and at_most <= TOMBSTONES_ON_DRIVER
    if on_driver and _append_on_driver(spark, path, deletes, keys, schema, txn):
        return
    exists = DeltaTable.isDeltaTable(spark, path)
    types = [f.dataType for f in key_types]
    if exists:  # a log written before tombstones had a time gains the column (older rows null)
        log = tbl.ensure_table(spark, path, schema).toDF().schema
        stored = {f.name.lower(): f.dataType for f in log}  # the log's types: a blind append
        types = [stored[k.lower()] for k in keys]
        position_type = stored[POSITION_COL.lower()]
    rows = deletes.select(
        *[F.col(f"_k{i}").cast(types[i]).alias(k) for i, k in enumerate(keys)],
        F.col("position").cast(position_type).alias(POSITION_COL),
        F.current_timestamp().alias(DELETED_AT),
    )
    if exists or not needs_column_mapping(rows.schema):
        txn.append(rows, path, "tombstones")
    else:  # a key Delta takes only with column mapping, set when the log is created
        with txn("tombstones"):
            tbl.create_with_rows(rows, path, rows.schema)


def _append_on_driver(
    spark: SparkSession,
    path: str,
    deletes: DataFrame,
    keys: Sequence[str],
    schema: StructType,
    txn: Txn,
) -> bool:
    """The tombstones of ``deletes`` collected and appended to the log at ``path`` by the
    driver (:data:`TOMBSTONES_ON_DRIVER`), in the log's own types; False when this is not the
    place for it (not a local path of a classic session, a key type or a log the driver's append
    does not write as Spark does), and Spark appends them."""
    from cdclake import delta_rs

    def writable(fields: Sequence[StructField]) -> bool:
        return all(f.dataType.typeName() in _DRIVER_KEY_TYPES for f in fields[: len(keys)])

    if not delta_rs.appends_here(spark, path) or needs_column_mapping(schema):
        return False
    if not writable(schema.fields):  # decided before the log is opened
        return False
    stored = delta_rs.plain_schema(path)
    if stored is False:  # column mapping, or a log delta-rs cannot read
        return False
    if stored is not None:
        by_name = {f.name.lower(): f for f in stored.fields}
        if any(f.name.lower() not in by_name for f in schema.fields[:-1]):
            return False  # not a log of these keys: Spark's append says what is wrong
        # the log's own types (and its deleted_at, when an older log lacks it: added)
        schema = StructType([by_name.get(f.name.lower(), f) for f in schema.fields])
        if not writable(schema.fields):
            return False
    names = [f.name for f in schema.fields]
    rows = deletes.select(
        *[F.col(f"_k{i}").cast(schema.fields[i].dataType).alias(k) for i, k in enumerate(keys)],
        F.col("position").cast(schema[POSITION_COL].dataType).alias(POSITION_COL),
    ).collect()
    now = datetime.now(UTC)
    records = [{**dict(zip(names, r, strict=False)), DELETED_AT: now} for r in rows]
    txn.append_rows(records, schema, path, "tombstones")
    return True


def prune_tombstones(spark: SparkSession, path: str, table_path: str) -> int:
    """Delete the tombstones of ``path`` (a keyed table's log, see :func:`record_tombstones`)
    that can no longer hold any change back; rows deleted (0 for a keyless table's log).

    A tombstone ``(key, p)`` is dead when the log holds a newer delete of its key, or when the
    table holds the key with a position newer than ``p`` (the key came back): every change an
    older tombstone would stop is stopped as well by the newer delete or by the row, whose
    position a change must pass, and a row leaves the table only by a newer delete (which
    leaves its own tombstone) or a truncate (remembered by the table). What stays is the set
    of live tombstones, one per deleted key, which every batch with a delete joins: the log no
    longer grows with every delete ever applied. Exact beside a running stream: the decision
    rests only on newer positions, which later writes never take back, and the deletes are a
    MERGE of the dead rows alone under Delta's concurrency rules (a batch's concurrent append
    to the log is left as it is).
    """
    if not DeltaTable.isDeltaTable(spark, table_path):
        return 0
    log = spark.read.format("delta").load(path)
    target = spark.read.format("delta").load(table_path)
    keys = [c for c in log.columns if c not in (POSITION_COL, DELETED_AT)]
    from cdclake.apply.keyless import HASH_COL  # keyless builds on this module

    stored = {c.lower() for c in target.columns}
    # a keyless table's log holds content hashes, kept one per content by its own MERGE
    keyless = HASH_COL.lower() in stored or any(k.lower() not in stored for k in keys)
    if not keys or keyless or POSITION_COL not in log.columns:
        return 0
    names = [f"_k{i}" for i in range(len(keys))]
    entries = log.select(
        *[F.col(tbl.quote(c)).alias(n) for c, n in zip(keys, names, strict=True)],
        F.col(POSITION_COL).alias("_p"),
    )
    newest = tombstone_positions(spark, path, keys)  # ``_t0.._tn``, ``_tomb``
    rows = target.select(
        *[F.col(tbl.quote(c)).alias(f"_r{i}") for i, c in enumerate(keys)],
        F.col(POSITION_COL).alias("_q"),
    )
    dead = (
        entries.join(
            newest, _and([F.col(n).eqNullSafe(F.col(f"_t{i}")) for i, n in enumerate(names)])
        )
        .join(
            rows, _and([F.col(n).eqNullSafe(F.col(f"_r{i}")) for i, n in enumerate(names)]), "left"
        )
        .filter(
            (F.col("_p") < F.col("_tomb")) | F.coalesce(F.col("_q") > F.col("_p"), F.lit(False))
        )
        .select(*names, "_p")
        .distinct()
    )
    match = " AND ".join([_key_match(keys, "t", "s"), f"t.{tbl.quote(POSITION_COL)} <=> s._p"])
    metrics = (
        DeltaTable.forPath(spark, path)
        .alias("t")
        .merge(dead.alias("s"), match)
        .whenMatchedDelete()
        .execute()
        .first()
    )
    return int(metrics["num_deleted_rows"] or 0) if metrics is not None else 0


def tombstone_positions(spark: SparkSession, path: str, keys: Sequence[str]) -> DataFrame:
    """The newest delete position of each key in a tombstone log (``_t0.._tn``, ``_tomb``),
    read whole (a batch's MERGE reads what :func:`newest_tombstones` keeps)."""
    return newest_per_key(tbl.log_rows(spark, path), keys)


def apply_keyed(
    spark: SparkSession,
    target: tbl.Target,
    table: str,
    rows: DataFrame,
    row_struct: StructType,
    keys: Sequence[str],
    txn: Txn,
    result: TableResult,
    stats: TableStats,
    empty: bool = False,
    create: tbl.Creation | None = None,
) -> None:
    """Apply one batch of a keyed table's changes (``rows`` has ``a``/``b`` typed images).

    ``empty``: the table was created by this batch, so there is nothing to match: the live rows
    are appended without a MERGE (an initial load). ``create``: the table does not exist yet;
    it is created with the live rows in one commit.
    """
    columns = [f.name for f in row_struct.fields]
    path = target.table_path(table)
    files = tbl.write_partitions(spark, stats.changes)
    if files == 1:
        # one partition from the cached batch to the write: the latest change per key needs no
        # shuffle (one partition holds every key together), so no stage and no job of its own
        rows = rows.coalesce(1)
    ops = expand(rows, keys)
    if stats.unavailable:
        ops = fill_unavailable(ops, keys, columns)
    deletes = has_deletes(rows, keys, stats)
    source = latest_per_key(ops, keys).coalesce(files)
    if deletes:  # the tombstones' write reads it too
        source = source.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        key_types = StructType([row_struct[k] for k in keys])
        tomb_path = target.tombstone_path(table)
        had_tombstones = DeltaTable.isDeltaTable(spark, tomb_path)
        if deletes:
            at_most = stats.deletes + stats.befores
            with timed(result.seconds, "tombstones"):
                record_tombstones(spark, target, table, source, keys, key_types, txn, at_most)
        joined = _with_tombstones(spark, source, keys, tomb_path if had_tombstones else None)
        if empty:
            # the table is new, so it holds exactly the live rows
            from_commits = create is not None and not had_tombstones
            with txn("merge"), timed(result.seconds, "write"):
                _load(joined, columns, path, create)
            n_source, ins = _initial_counts(
                spark, joined, LIVE, path, tomb_path if deletes else None, from_commits
            )
            upd = dele = 0
            result.rows_now = ins
        else:
            with txn("merge"), timed(result.seconds, "write"):
                merged = _merge(spark, joined, columns, keys, path)
            ins, upd, dele = _merge_counts(merged)
            # the MERGE's commit says how many source rows it read: no count of its own
            from_commit = tbl.merge_source_rows(spark, path, (ins, upd, dele))
            n_source = source.count() if from_commit is None else from_commit
        result.inserted += ins
        result.updated += upd
        result.deleted += dele
        result.ignored += n_source - ins - upd - dele
    finally:
        source.unpersist()


META_SET = {
    POSITION_COL: "s.position",
    OP_COL: "s.op",
    SOURCE_TS_COL: "s.source_ts",
    LINEAGE_COL: "s.lineage",
}
"""cdclake's columns of a target row, from the change that wrote it (``s``)."""
LIVE = f"s._kind = '{UPSERT}' AND (s._tomb IS NULL OR s.position > s._tomb)"
"""A change that leaves a row: an upsert newer than any tombstone of its key."""


def _with_tombstones(
    spark: SparkSession, source: DataFrame, keys: Sequence[str], tomb_path: str | None
) -> DataFrame:
    """``source`` with ``_tomb``: the position of its key's tombstone from earlier batches (the
    log at ``tomb_path``; None: there is none). Tombstones written by this batch alone need no
    join: ``source`` has one row per key, so a key deleted here has no upsert to hold back."""
    if tomb_path is None:
        return source.withColumn("_tomb", F.lit(None).cast(source.schema["position"].dataType))
    tomb_pos = newest_tombstones(spark, tomb_path, keys)
    cond = [F.col(f"_k{i}").eqNullSafe(F.col(f"_t{i}")) for i in range(len(keys))]
    return source.join(tomb_pos, on=_and(cond), how="left").drop(
        *[f"_t{i}" for i in range(len(keys))]
    )


def _load(joined: DataFrame, columns: list[str], path: str, create: tbl.Creation | None) -> None:
    """An initial load: the live rows appended to a table that is empty, or created with them
    (``create``) in one commit; nothing to match."""
    inserts = (
        joined.alias("s")
        .filter(LIVE)
        .select(
            *[F.col(f"s.{ROW}")[c].alias(c) for c in columns],
            *[F.col(v).alias(k) for k, v in META_SET.items()],
        )
    )
    if create is not None:
        tbl.create_with_rows(inserts, path, create.schema, create.properties)
    else:
        inserts.write.format("delta").mode("append").save(path)


def _merge(
    spark: SparkSession, joined: DataFrame, columns: list[str], keys: Sequence[str], path: str
) -> DataFrame:
    """The MERGE of the latest change per key: a newer delete deletes, a newer upsert updates
    (a column whose value the source did not send keeps the target's), a live upsert of a new
    key inserts; older changes leave the row as it is. Its metrics."""
    update_set = {
        tbl.quote(c): f"CASE WHEN array_contains(s.unavailable, '{tbl.sql_string(c)}') "
        f"THEN t.{tbl.quote(c)} ELSE s.{ROW}.{tbl.quote(c)} END"
        for c in columns
    }
    insert_set = {tbl.quote(c): f"s.{ROW}.{tbl.quote(c)}" for c in columns}
    return (
        DeltaTable.forPath(spark, path)
        .alias("t")
        .merge(joined.alias("s"), _key_match(keys, "t", "s"))
        .whenMatchedDelete(condition=f"s._kind = '{DELETE}' AND s.position > t.{POSITION_COL}")
        .whenMatchedUpdate(
            condition=f"s._kind = '{UPSERT}' AND s.position > t.{POSITION_COL}",
            set={**update_set, **META_SET},
        )
        .whenNotMatchedInsert(condition=LIVE, values={**insert_set, **META_SET})
        .execute()
    )


def _initial_counts(
    spark: SparkSession,
    joined: DataFrame,
    live: str,
    path: str,
    tomb_path: str | None,
    from_commits: bool,
) -> tuple[int, int]:
    """(source rows, live rows) of an initial load.

    ``from_commits``: this batch created the table and its first tombstones, with no earlier
    tombstones to hold rows back, so every upsert was written and every delete became a
    tombstone (``tomb_path``: None when the batch has no deletes); the two creating commits say
    how many rows each wrote, without a Spark job. Otherwise (or when a commit does not say),
    one aggregate counts both.
    """
    if from_commits:
        ins = tbl.created_rows(spark, path)
        dels = tbl.created_rows(spark, tomb_path) if tomb_path is not None else 0
        if ins is not None and dels is not None:
            return ins + dels, ins
    counts = joined.alias("s").agg(F.count(F.lit(1)), F.count_if(F.expr(live))).first()
    return (int(counts[0]), int(counts[1])) if counts else (0, 0)


def _and(conds: Sequence[Column]) -> Column:
    out = conds[0]
    for c in conds[1:]:
        out = out & c
    return out
