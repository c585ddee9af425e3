"""SCD type 2: every version of every row of a keyed table, exact whatever order events arrive in.

The history table (``stored_as_scd_type=2``) holds the data columns, ``__START_AT`` and
``__END_AT`` (the source positions where a version became valid and where it stopped, the same
type as ``_cdc_position``; ``__END_AT`` is null for the current version), ``_cdc_start_ts`` and
``_cdc_end_ts`` (the source times of both ends) and the usual ``_cdc_`` columns of the last
event that wrote the version.

The rules, for the events of one key in position order:

- an insert, snapshot read or update opens a version when no version is open or a tracked column
  changed (``track_history_column_list`` / ``track_history_except_column_list``; every column by
  default); a change of untracked columns only updates the open version in place;
- a delete closes the open version; a truncate closes every open version at its position; an
  update that changes the key closes the old key and opens the new one;
- a column the source marks unavailable (PostgreSQL TOAST) takes the value of the latest earlier
  event of the key, whenever that event arrives;
- an event at a position already seen for its key (a re-delivery) changes nothing; an event older
  than a truncate that an earlier batch applied is dropped, as in SCD type 1.

Exactness under late events comes from recomputing, not patching: every accepted event is kept in
``<target>/_cdc_history_log/<identifier>`` (the record a late event is placed against), and each
batch rebuilds the history of the keys it touches from that log with window functions, then
replaces those keys' versions with one MERGE. A batch that brings a truncate rebuilds every key.
Tables without a key are refused (see :func:`refuse_keyless`).

What a batch reads of the log: the position of the newest truncate comes from the log's newest
commit (:func:`_watermark`), not from its events; a batch of at most :data:`BROADCAST_CHANGES`
changes and no truncate reads the log once, for the events of its keys and the truncates
(:func:`_of_keys`). That one scan still reads every file of the log: the log grows with every
event the table ever had, and its files are in arrival order, not by key.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from delta.tables import DeltaTable
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, MapType, StringType, StructField, StructType, TimestampType

from cdclake import globs
from cdclake._spark.detach import detached
from cdclake.apply import tables as tbl
from cdclake.apply.results import TableResult, Txn, timed
from cdclake.apply.scd1 import ROW, UPSERT, expand
from cdclake.errors import ConfigError
from cdclake.model import (
    END_AT,
    END_TS_COL,
    LINEAGE_COL,
    OP_COL,
    POSITION_COL,
    SOURCE_TS_COL,
    START_AT,
    START_TS_COL,
    Op,
)

if TYPE_CHECKING:
    from pyspark.sql.types import DataType

BROADCAST_CHANGES = 100_000
"""Up to this many changes in a batch (and no truncate), the keys it touches are broadcast to
the joins that pick their events from the log and their versions from the table."""
KIND_COL = "_cdc_kind"  # upsert, delete or truncate
# The working columns next to the data columns are named _cdc_* too: no source column is (see
# cdclake.names.name_problem), so a source column of any other name fits beside them.
SEQ_COL = "_cdc_seq"  # input order of an incoming event
UNAVAILABLE_COL = "_cdc_unavailable"
BATCH_COL = "_cdc_batch"  # which batch brought the event (a truncate's batch does not drop its own)
TRUNCATE = "truncate"
# A key's events in source order; at one position a delete or truncate comes before an upsert.
EVENT_ORDER = (POSITION_COL, KIND_COL)

ColumnChoice = Sequence[str] | Mapping[str, Sequence[str]] | None


@dataclass(frozen=True)
class HistoryOptions:
    """Which tables keep history, and which columns open a new version (AUTO CDC's names).

    Each option is one value for every table or a mapping of table identifier or glob to value
    (the first matching entry wins; unmatched tables get type 1 and every column tracked).

    >>> opts = HistoryOptions(stored_as_scd_type={"shop.*": 2},
    ...                       track_history_except_column_list={"shop.orders": ["updated_at"]})
    >>> opts.scd_type("shop.orders"), opts.tracked("shop.orders", ["id", "updated_at"])
    (2, ['id'])
    """

    stored_as_scd_type: int | Mapping[str, int] = 1
    track_history_column_list: ColumnChoice = None
    track_history_except_column_list: ColumnChoice = None
    batch_tag: str = field(default_factory=lambda: uuid.uuid4().hex)

    def scd_type(self, table: str) -> int:
        return int(_pick(self.stored_as_scd_type, table) or 1)

    def tracked(self, table: str, columns: Sequence[str]) -> list[str]:
        only = _pick(self.track_history_column_list, table)
        but = set(_pick(self.track_history_except_column_list, table) or ())
        return [c for c in columns if (only is None or c in only) and c not in but]


def _pick(choice: Any, table: str) -> Any:
    if not isinstance(choice, Mapping):
        return choice
    if table in choice:
        return choice[table]
    return next((v for k, v in choice.items() if globs.matches(table, k)), None)


def check_layout(spark: SparkSession, path: str, table: str, scd_type: int) -> None:
    """A table keeps the SCD type it was created with: switching would mix two layouts."""
    if not DeltaTable.isDeltaTable(spark, path):
        return
    df = spark.read.format("delta").load(path)
    has_history = START_AT in df.columns
    if has_history != (scd_type == 2) and (has_history or df.limit(1).count() > 0):
        now = "a history table (SCD type 2)" if has_history else "a table of live rows (SCD type 1)"
        raise ConfigError(
            f"table {table}: {path} is {now}; --scd-type {scd_type} cannot apply to it "
            "(write to another --target, or keep its SCD type)"
        )


def refuse_keyless(table: str) -> None:
    """History needs a key: a version is 'the row with this key between two positions'."""
    raise ConfigError(
        f"table {table}: --scd-type 2 needs a primary key, and the changes carry none; "
        f"give --primary-key {table}=COL[,COL] or keep this table at --scd-type 1"
    )


def history_fields(position_type: DataType) -> list[StructField]:
    """The columns a history table has next to the data columns."""
    return [
        StructField(START_AT, position_type),
        StructField(END_AT, position_type),
        StructField(START_TS_COL, TimestampType()),
        StructField(END_TS_COL, TimestampType()),
        *tbl.meta_fields(position_type),
    ]


def _log_fields(position_type: DataType) -> list[StructField]:
    return [
        StructField(KIND_COL, StringType()),
        *tbl.meta_fields(position_type),
        StructField(UNAVAILABLE_COL, ArrayType(StringType())),
        StructField(BATCH_COL, StringType()),
    ]


def _incoming(rows: DataFrame, keys: Sequence[str], columns: Sequence[str], tag: str) -> DataFrame:
    """This batch's changes as log rows: upserts, deletes (key columns set) and truncates."""
    meta = {
        POSITION_COL: F.col("position"),
        OP_COL: F.col("op"),
        SOURCE_TS_COL: F.col("source_ts"),
        LINEAGE_COL: F.col("lineage"),
        UNAVAILABLE_COL: F.col("unavailable"),
        BATCH_COL: F.lit(tag),
    }
    ops = expand(rows.filter(F.col("op") != Op.TRUNCATE), keys)
    row = F.col(ROW)
    data = ops.select(
        *[(F.col(f"_k{keys.index(c)}") if c in keys else row[c]).alias(c) for c in columns],
        F.col("_kind").alias(KIND_COL),
        *[v.alias(k) for k, v in meta.items()],
        F.col("seq").alias(SEQ_COL),
    )
    truncates = rows.filter(F.col("op") == Op.TRUNCATE).select(
        F.lit(TRUNCATE).alias(KIND_COL),
        *[v.alias(k) for k, v in meta.items()],
        F.col("seq").alias(SEQ_COL),
    )
    return data.unionByName(truncates, allowMissingColumns=True)


def _cols(names: Sequence[str]) -> list[Column]:
    return [tbl.column(n) for n in names]


def _same_keys(left: DataFrame, right: DataFrame, keys: Sequence[str]) -> list[Column]:
    """Null-safe equality of the key columns of two DataFrames (a name with a dot is quoted:
    ``df["a.b"]`` reads field ``b`` of column ``a``)."""
    return [left[tbl.quote(k)].eqNullSafe(right[tbl.quote(k)]) for k in keys]


def _first_per_event(events: DataFrame, keys: Sequence[str], order: Column) -> DataFrame:
    """One row per (key, position, kind of boundary): a re-delivered event counts once."""
    w = Window.partitionBy(*_cols(keys), POSITION_COL, F.col(KIND_COL) == TRUNCATE).orderBy(order)
    return (
        events.withColumn("_cdc_rn", F.row_number().over(w)).filter("_cdc_rn = 1").drop("_cdc_rn")
    )


def _fill_unavailable(events: DataFrame, keys: Sequence[str], columns: Sequence[str]) -> DataFrame:
    """An unavailable column takes the value of the latest earlier upsert of the key that had it."""
    w = (
        Window.partitionBy(*_cols(keys))
        .orderBy(*EVENT_ORDER)
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    upsert = F.col(KIND_COL) == UPSERT
    filled = {
        c: F.last(
            F.when(
                upsert & ~F.coalesce(F.array_contains(UNAVAILABLE_COL, c), F.lit(False)),
                F.struct(tbl.column(c).alias("v")),
            ),
            ignorenulls=True,
        ).over(w)["v"]
        for c in columns
        if c not in keys
    }
    return events.withColumns(filled)


def _comparable(c: str, data_type: DataType) -> Column:
    col = F.col(tbl.quote(c))
    return F.to_json(F.struct(col)) if _has_map(data_type) else col


def _has_map(data_type: DataType) -> bool:
    if isinstance(data_type, MapType):
        return True
    if isinstance(data_type, StructType):
        return any(_has_map(f.dataType) for f in data_type.fields)
    if isinstance(data_type, ArrayType):
        return _has_map(data_type.elementType)
    return False


def versions(
    events: DataFrame, keys: Sequence[str], columns: Sequence[str], tracked: Sequence[str]
) -> DataFrame:
    """Log events of some keys (one per position, unavailable values filled) -> their versions.

    A version opens at an upsert that follows no upsert (nothing open) or changes a tracked
    column; it holds the values of the last upsert before the next boundary (a delete, a
    truncate, or the next opening upsert), whose position and time end it.
    """
    schema = events.schema
    w = Window.partitionBy(*_cols(keys)).orderBy(*EVENT_ORDER)
    upsert = F.col(KIND_COL) == UPSERT
    ident = F.to_json(F.struct(*[_comparable(c, schema[c].dataType) for c in tracked]))
    prev_upsert = F.lag(upsert).over(w)
    opens = upsert & (
        F.coalesce(~prev_upsert, F.lit(True)) | ~F.lag(ident).over(w).eqNullSafe(ident)
    )
    running = w.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    ev = events.withColumn("_cdc_opens", opens).withColumns(
        {
            "_cdc_start": F.last(
                F.when(F.col("_cdc_opens"), F.struct(POSITION_COL, SOURCE_TS_COL)), ignorenulls=True
            ).over(running),
            "_cdc_next": F.lead(
                F.struct(
                    F.col(POSITION_COL).alias("p"),
                    F.col(SOURCE_TS_COL).alias("ts"),
                    (F.col(KIND_COL) == UPSERT).alias("up"),
                )
            ).over(w),
        }
    )
    ev = ev.withColumn("_cdc_next_opens", F.lead("_cdc_opens").over(w))
    last_of_run = upsert & (
        F.col("_cdc_next").isNull()
        | ~F.col("_cdc_next.up")
        | F.coalesce(F.col("_cdc_next_opens"), F.lit(True))
    )
    return ev.filter(last_of_run).select(
        *[F.col(tbl.quote(c)) for c in columns],
        F.col(f"_cdc_start.{POSITION_COL}").alias(START_AT),
        F.col("_cdc_next.p").alias(END_AT),
        F.col(f"_cdc_start.{SOURCE_TS_COL}").alias(START_TS_COL),
        F.col("_cdc_next.ts").alias(END_TS_COL),
        POSITION_COL,
        OP_COL,
        SOURCE_TS_COL,
        LINEAGE_COL,
    )


@dataclass(frozen=True)
class HistoryTable:
    """One table's history: where it lives and what defines a version."""

    name: str
    path: str
    log_path: str
    keys: tuple[str, ...]
    empty: bool  # created by this batch: an initial load appends without a MERGE
    # the batch's changes of this table are at most BROADCAST_CHANGES and hold no truncate (from
    # the batch's summary): the log is read once, for the events of the keys they touch
    narrow: bool = False


def apply_history(
    spark: SparkSession,
    table: HistoryTable,
    rows: DataFrame,
    row_struct: StructType,
    txn: Txn,
    result: TableResult,
    options: HistoryOptions,
    defaults: dict[str, object],
) -> None:
    """Apply one batch of a keyed table's changes (``rows`` with typed ``a``/``b`` images)."""
    keys = list(table.keys)
    position_type = rows.schema["position"].dataType
    log_schema = StructType([*row_struct.fields, *_log_fields(position_type)])
    synced = tbl.sync_table(spark, table.log_path, log_schema, None, dict(defaults))
    prior = tbl.log_rows(spark, table.log_path)
    stored = spark.read.format("delta").load(table.path)
    columns = [c for c in prior.columns if c in set(tbl.data_column_names(stored.schema))]
    before, after = (None, None) if synced.created else _watermark(spark, table, prior, options)
    watermark = before
    incoming = _incoming(rows, keys, row_struct.fieldNames(), options.batch_tag)
    if watermark is not None:
        late = F.col(POSITION_COL) <= F.array(*[F.lit(x).cast("bigint") for x in watermark])
        incoming = incoming.withColumn("_cdc_late", late)
    else:
        incoming = incoming.withColumn("_cdc_late", F.lit(False))
    held: list[DataFrame] = []
    touched = None
    if table.narrow and not table.empty:  # the keys it touches, computed once for the log's
        # scan and the rebuild (a new history's log holds nothing to scan)
        touched = incoming.filter(F.col(KIND_COL) != TRUNCATE).select(*_cols(keys)).distinct()
        touched = _held(touched, held)
        prior = _held(_of_keys(prior, touched, keys), held)
    seen = None if table.empty else prior
    cached = _mark_fresh(incoming, seen, keys).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        # per change (its log rows: a key change has two), then over the changes: one shuffle,
        # where two distinct counts expanded every row and shuffled twice
        truncating = F.col("_cdc_fresh") & (F.col(KIND_COL) == TRUNCATE)
        counts = (
            cached.groupBy(SEQ_COL, POSITION_COL)
            .agg(
                F.bool_or("_cdc_fresh").alias("fresh"),
                F.bool_or(truncating).alias("truncate"),
                F.max(F.when(truncating, F.col(POSITION_COL))).alias("truncated"),
            )
            .agg(
                F.count(F.lit(1)).alias("changes"),
                F.count_if("fresh").alias("fresh"),
                F.bool_or("truncate").alias("truncate"),
                F.max("truncated").alias("truncated"),
            )
            .first()
        )
        assert counts is not None
        # what follows joins the batch with itself and the log several times: one leaf per copy
        incoming = detached(cached)
        result.ignored += counts["changes"] - counts["fresh"]
        fresh = incoming.filter("_cdc_fresh").drop(SEQ_COL, "_cdc_late", "_cdc_fresh")
        tracked = options.tracked(table.name, columns)
        new_truncate = bool(counts["truncate"])
        files = tbl.write_partitions(spark, int(counts["changes"]))
        # the keys of a batch of a bounded size are sent to every task, not joined by a shuffle
        # of the log and of the table: each shuffle is a Spark job of its own
        small = not new_truncate and counts["changes"] <= BROADCAST_CHANGES
        _rebuild(
            spark, table, prior, fresh, incoming, columns, tracked, new_truncate, files, txn,
            result, small, touched,
        )  # fmt: skip
        mark = {"batch": options.batch_tag, "before": before}
        mark["after"] = _later(after, counts["truncated"])
        with timed(result.seconds, "log"):
            log = fresh.coalesce(files)
            txn.append(log, table.log_path, "history-log", metadata={WATERMARK: mark})
    finally:
        cached.unpersist()
        for df in held:
            df.unpersist()


def _of_keys(prior: DataFrame, touched: DataFrame, keys: Sequence[str]) -> DataFrame:
    """The log events of the ``touched`` keys, and every truncate: all that finding the batch's
    re-deliveries and rebuilding its keys' versions read of the log, in one scan of it (the keys
    are sent to every task), where each of them scanned the whole log."""
    marks = touched.select(
        *[F.col(tbl.quote(k)).alias(f"_cdc_t{i}") for i, k in enumerate(keys)],
        F.lit(True).alias("_cdc_hit"),
    )
    on = [prior[tbl.quote(k)].eqNullSafe(F.col(f"_cdc_t{i}")) for i, k in enumerate(keys)]
    return (
        prior.join(F.broadcast(marks), on, "left")
        .filter(F.col("_cdc_hit").isNotNull() | (F.col(KIND_COL) == TRUNCATE))
        .select(*[prior[tbl.quote(c)] for c in prior.columns])
    )


WATERMARK = "truncated"
"""The key of a history log append's commit metadata that carries its truncate watermark:
``{"batch": <batch tag>, "before": <position>, "after": <position>}``, the newest position of a
truncate in the log before this batch's first append and after this append (null: none)."""
WATERMARK_REACH = 100
"""How many of a log's newest commits :func:`_watermark` reads for it (maintenance and schema
changes commit to the log too)."""

Position = list[int] | None


def _later(a: Position, b: Position) -> Position:
    """The later of two positions (None: none), compared element by element as Spark does."""
    if a is None or b is None:
        return a if b is None else b
    return max(list(a), list(b))


def _watermark(
    spark: SparkSession, table: HistoryTable, prior: DataFrame, options: HistoryOptions
) -> tuple[Position, Position]:
    """(the position of the newest truncate in the log not of this batch, that of any batch).

    Read from the log's newest append (its commit metadata, :data:`WATERMARK`): the driver reads
    a commit file or two, where an aggregate would scan every event the log holds, once per
    batch, in a log that only grows. A log whose newest appends do not say (written by an
    earlier cdclake, or its commits cleaned up) is aggregated, once: this batch's append says.
    """
    doc = tbl.newest_metadata(spark, table.log_path, lambda d: WATERMARK in d, WATERMARK_REACH)
    if isinstance(doc, dict):
        mark = doc[WATERMARK]
        # the same batch again (after a crash, or its next part of one table): its own truncates
        # do not hold back its own events
        own_batch = mark["batch"] == options.batch_tag
        return mark["before"] if own_batch else mark["after"], mark["after"]
    own = F.col(BATCH_COL) == options.batch_tag
    truncates = prior.filter(F.col(KIND_COL) == TRUNCATE)
    row = truncates.agg(
        F.max(F.when(~own, F.col(POSITION_COL))).alias("before"),
        F.max(POSITION_COL).alias("after"),
    ).first()
    return (None, None) if row is None else (row["before"], row["after"])


def _mark_fresh(incoming: DataFrame, prior: DataFrame | None, keys: Sequence[str]) -> DataFrame:
    """``_cdc_fresh``: the first delivery in this batch of an event the log does not hold yet
    and that is not older than an earlier truncate (``_cdc_late``); ``prior`` None: the log
    holds nothing (a new history)."""
    is_truncate = F.col(KIND_COL) == TRUNCATE
    w = Window.partitionBy(*_cols(keys), POSITION_COL, is_truncate).orderBy(SEQ_COL)
    first = incoming.withColumn("_cdc_first", (F.row_number().over(w) == 1) & ~F.col("_cdc_late"))
    if prior is None:
        return first.withColumnRenamed("_cdc_first", "_cdc_fresh")
    seen = prior.select(
        *[F.col(tbl.quote(k)).alias(f"_cdc_p{i}") for i, k in enumerate(keys)],
        F.col(POSITION_COL).alias("_cdc_pp"),
        is_truncate.alias("_cdc_pt"),
        F.lit(True).alias("_cdc_seen"),
    )
    same = (F.col(POSITION_COL) == F.col("_cdc_pp")) & (is_truncate == F.col("_cdc_pt"))
    for i, k in enumerate(keys):
        same = same & F.col(tbl.quote(k)).eqNullSafe(F.col(f"_cdc_p{i}"))
    return (
        first.join(seen, same, "left")
        .withColumn("_cdc_fresh", F.col("_cdc_first") & F.col("_cdc_seen").isNull())
        .drop(
            *[f"_cdc_p{i}" for i in range(len(keys))],
            "_cdc_pp",
            "_cdc_pt",
            "_cdc_seen",
            "_cdc_first",
        )
    )


def _rebuild(
    spark: SparkSession,
    table: HistoryTable,
    prior: DataFrame,
    fresh: DataFrame,
    incoming: DataFrame,
    columns: list[str],
    tracked: list[str],
    all_keys: bool,
    files: int,
    txn: Txn,
    result: TableResult,
    broadcast_keys: bool = False,
    touched: DataFrame | None = None,
) -> None:
    """Recompute the versions of the keys this batch touched and MERGE them in (a new table's
    versions are written in at most ``files`` files); ``broadcast_keys``: the touched keys are
    few enough to send to every task; ``touched``: those keys, when the caller has them."""
    keys = list(table.keys)
    log = prior.unionByName(fresh, allowMissingColumns=True)
    truncates = log.filter(F.col(KIND_COL) == TRUNCATE).select(
        KIND_COL, POSITION_COL, OP_COL, SOURCE_TS_COL, LINEAGE_COL, UNAVAILABLE_COL
    )
    rows = log.filter(F.col(KIND_COL) != TRUNCATE)
    source = rows if all_keys else incoming.filter(F.col(KIND_COL) != TRUNCATE)
    held: list[DataFrame] = []
    # the log's rows are all of touched keys when they are all that the caller read of the log
    # (``touched`` given), when every key is touched, or when the log is the batch's own (a new
    # history); else the log is read whole, and its rows of the touched keys are picked
    of_touched = touched is not None or all_keys or table.empty
    if table.empty and not all_keys:
        events = rows  # a new history without a truncate: nothing to close
    else:
        if touched is None or all_keys:
            touched = source.select(*_cols(keys)).distinct()
            if broadcast_keys:  # computed once, not by each join that reads them
                touched = _held(touched, held)
        if broadcast_keys:  # and sent to its tasks
            touched = F.broadcast(touched)
        if not of_touched:
            rows = rows.join(touched, _same_keys(rows, touched, keys), "left_semi")
        closing = touched.crossJoin(F.broadcast(truncates))
        events = rows.unionByName(closing, allowMissingColumns=True)
    # one shuffle by key serves the windows of every step below (each partitions by the key,
    # the first by the key and more): without it, the first step shuffled on its own
    events = events.repartition(*_cols(keys))
    if not table.empty:  # a new history's events are each the first of its own (``fresh``)
        # stored events first: a re-delivery keeps the lineage the history already shows
        events = _first_per_event(events, keys, F.col(LINEAGE_COL))
    events = _fill_unavailable(events, keys, columns)
    new = versions(events, keys, columns, tracked)
    try:
        if table.empty:
            with txn("merge"), timed(result.seconds, "write"):
                new.coalesce(files).write.format("delta").mode("append").save(table.path)
            result.inserted += spark.read.format("delta").load(table.path).count()
            return
        if broadcast_keys:  # the MERGE's source reads them twice (and the versions they replace)
            new = _held(new, held)
        assert touched is not None  # set above for every table that is not new
        _replace(spark, table, new, touched, columns, txn, result)
    finally:
        for df in held:
            df.unpersist()


def _held(df: DataFrame, held: list[DataFrame]) -> DataFrame:
    """``df`` cached (and listed in ``held``, to release): a small frame that several parts of
    one plan read, computed once instead of by each."""
    held.append(df.persist(StorageLevel.MEMORY_AND_DISK))
    return df


def _replace(
    spark: SparkSession,
    table: HistoryTable,
    new: DataFrame,
    touched: DataFrame,
    columns: list[str],
    txn: Txn,
    result: TableResult,
) -> None:
    """One MERGE: the touched keys' versions become ``new`` (matched on key and __START_AT)."""
    keys = list(table.keys)
    delta = DeltaTable.forPath(spark, table.path)
    stored = delta.toDF()
    old = stored.join(touched, _same_keys(stored, touched, keys), "left_semi")
    on = [*_same_keys(old, new, keys), old[START_AT] == new[START_AT]]
    gone = (
        old.join(new, on, "left_anti")
        .select(*_cols(keys), START_AT)
        .withColumn("_cdc_gone", F.lit(True))
    )
    source = new.withColumn("_cdc_gone", F.lit(False)).unionByName(gone, allowMissingColumns=True)
    every = [*columns, END_AT, START_TS_COL, END_TS_COL, POSITION_COL, OP_COL, SOURCE_TS_COL]
    schema = new.schema
    differs = " OR ".join(
        f"NOT (to_json(struct(t.{tbl.quote(c)})) <=> to_json(struct(s.{tbl.quote(c)})))"
        if _has_map(schema[c].dataType)
        else f"NOT (t.{tbl.quote(c)} <=> s.{tbl.quote(c)})"
        for c in every
    )
    values: dict[str, str | Column] = {
        tbl.quote(c): f"s.{tbl.quote(c)}" for c in [*every, START_AT, LINEAGE_COL]
    }
    cond = " AND ".join(
        [*(f"t.{tbl.quote(k)} <=> s.{tbl.quote(k)}" for k in keys), f"t.{START_AT} = s.{START_AT}"]
    )
    with txn("merge"), timed(result.seconds, "write"):
        merged = (
            delta.alias("t")
            .merge(source.alias("s"), cond)
            .whenMatchedDelete(condition="s._cdc_gone")
            .whenMatchedUpdate(condition=f"NOT s._cdc_gone AND ({differs})", set=values)
            .whenNotMatchedInsert(condition="NOT s._cdc_gone", values=values)
            .execute()
        )
    row = merged.first() if merged is not None else None
    d = row.asDict() if row is not None else {}
    result.inserted += int(d.get("num_inserted_rows") or 0)
    result.updated += int(d.get("num_updated_rows") or 0)
    result.deleted += int(d.get("num_deleted_rows") or 0)
