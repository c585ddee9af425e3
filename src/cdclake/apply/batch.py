"""Apply one batch of canonical changes to the target folder: quarantine, control, every table.

Counts reconcile: every change is either applied to a table (inserted, updated, deleted, or
superseded inside the batch), ignored (stale: not newer than what the table holds), a control
record, or quarantined with its reason.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from delta.tables import DeltaTable
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from cdclake import globs
from cdclake import phases as phases
from cdclake._spark.detach import detached
from cdclake.apply import liveness
from cdclake.apply import tables as tbl
from cdclake.apply.keyless import KEYLESS_FIELDS, apply_keyless
from cdclake.apply.parallel import Task, run_all
from cdclake.apply.results import BatchResult, Laps, TableResult, TableStats, Txn
from cdclake.apply.rollup import roll_up
from cdclake.apply.scd1 import apply_keyed, apply_truncates
from cdclake.apply.scd2 import (
    BROADCAST_CHANGES,
    ColumnChoice,
    HistoryOptions,
    HistoryTable,
    apply_history,
    check_layout,
    history_fields,
    refuse_keyless,
)
from cdclake.decode import (
    NEW_SCHEMA,
    NeedsTwoPasses,
    raw_records,
    release,
    text_where_bad,
    with_records,
)
from cdclake.errors import BadInputError, is_write_conflict, one_line
from cdclake.model import (
    CHANGE_SCHEMA,
    CONTROL_OPS,
    DATA_OPS,
    DEFAULTS_KEY,
    INPUT_ORDERED,
    ORDERING_KEY,
    POSITION_TYPE,
    Op,
)
from cdclake.names import keys_to_text, refusals, refused_changes

_log = logging.getLogger(__name__)
R = TypeVar("R")


def _union_struct(schemas: list[str]) -> tuple[StructType, dict[str, Any]]:
    """The columns of every row-schema version seen in a batch, in first-seen order, and the
    source defaults of those columns (typed values as JSON; see :data:`DEFAULTS_KEY`)."""
    fields: dict[str, StructField] = {}
    defaults: dict[str, Any] = {}
    for text in schemas:
        doc = json.loads(text)
        for f in StructType.fromJson(doc).fields:
            fields[f.name] = StructField(f.name, f.dataType, True)  # a later version wins
        defaults.update(doc.get(DEFAULTS_KEY) or {})
    return StructType(list(fields.values())), defaults


def _fill_defaults(
    image: Column,
    row_struct: StructType,
    schemas: list[str],
    columns: list[str],
    defaults: dict[str, Any],
) -> Column:
    """An image written before a column existed gets the column's default, as the database
    gave that row when the column was added (``columns``: added by this batch)."""
    names = {s: set(StructType.fromJson(json.loads(s)).fieldNames()) for s in schemas}
    for c in columns:
        lacking = [s for s in schemas if c not in names[s]]
        if c in defaults and c in row_struct.fieldNames() and lacking:
            value = tbl.typed_default(c, row_struct[c].dataType, defaults[c])
            image = image.withField(  # a field path: a name with a dot is quoted
                tbl.quote(c), F.when(F.col("row_schema").isin(*lacking), value).otherwise(image[c])
            )
    return image


# what a quarantined Kafka record keeps besides its value (``raw``): a replay gives it back whole
_KEY_AND_HEADERS = ("key", "headers")


def _with_record_fields(df: DataFrame) -> DataFrame:
    """``df`` with the columns of ``_KEY_AND_HEADERS``, null where it has none (changes
    built before they were part of the model)."""
    missing = [name for name in _KEY_AND_HEADERS if name not in df.columns]
    if not missing:
        return df
    return df.withColumns({n: F.lit(None).cast(CHANGE_SCHEMA[n].dataType) for n in missing})


def quarantine(
    spark: SparkSession, target: tbl.Target, bad: DataFrame, txn: Txn, batch_id: int | None
) -> None:
    """Append the bad changes or records of ``bad`` (``raw``, ``lineage``, ``error``, ``table``,
    ``op``; a Kafka record's ``key`` and ``headers`` where it has them) to the quarantine."""
    path = target.system_path(tbl.QUARANTINE)
    rows = _with_record_fields(bad).select(
        F.col("raw"),
        F.col("lineage"),
        *_KEY_AND_HEADERS,
        F.col("error").alias("reason"),
        F.col("table"),
        F.col("op"),
        F.lit(batch_id).cast("bigint").alias("batch_id"),
        F.current_timestamp().alias("quarantined_at"),
    )
    txn.append(rows, path, "quarantine", {"mergeSchema": "true"})


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


def _table_filter(include: tuple[str, ...], exclude: tuple[str, ...]) -> Column | None:
    """Glob patterns on table identifiers (``shop.*``, ``*.audit_*``; see
    :mod:`cdclake.globs`) as a Column predicate."""
    if not include and not exclude:
        return None
    table = F.col("table")
    keep = globs.any_match(table, include) if include else F.lit(True)
    if exclude:
        keep = keep & ~globs.any_match(table, exclude)
    # control records without a table (heartbeats, transaction markers) are always kept
    return table.isNull() | keep


def apply_changes(
    changes: DataFrame,
    target: str,
    *,
    fail_on_bad_input: bool = False,
    app_id: str | None = None,
    batch_id: int | None = None,
    count_rows: bool = True,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    table_map: dict[str, str] | None = None,
    added_defaults: dict[str, dict[str, Any]] | None = None,
    stored_as_scd_type: int | Mapping[str, int] = 1,
    track_history_column_list: ColumnChoice = None,
    track_history_except_column_list: ColumnChoice = None,
    parallel_tables: int = 4,
    one_pass: bool = False,
    record_sources: bool = True,
    laps: Laps | None = None,
) -> BatchResult:
    """Apply canonical changes (:data:`cdclake.model.CHANGE_SCHEMA`) to the tables in ``target``.

    ``app_id``/``batch_id`` make the writes idempotent: applying the same batch again (a
    streaming replay after a crash) skips what was already committed. ``include``/``exclude``
    are glob patterns on source identifiers; ``table_map`` renames identifiers in the target.
    ``added_defaults`` (table -> column -> typed default) names columns this batch's DDL added
    with a default: the batch's rows written before the DDL get that default.
    ``stored_as_scd_type`` 2 keeps every version of every row (for all tables, or a mapping of
    table identifier or glob to 1 or 2); ``track_history_column_list`` /
    ``track_history_except_column_list`` say which columns open a new version (see
    :mod:`cdclake.apply.scd2`). Up to ``parallel_tables`` tables are applied at once (see
    :mod:`cdclake.apply.parallel`). ``one_pass``: the changes come from
    :func:`cdclake.decode.type_known`; if some of them need two passes, it raises
    :class:`cdclake.decode.NeedsTwoPasses` before writing anything. ``record_sources`` False:
    the batch's rows of ``_cdc_sources`` (:mod:`cdclake.apply.liveness`) are left in
    ``result.sources_rows`` for the caller to write with its own (a Kafka batch's record, in
    the same commit). ``laps``: the batch's clock, when its caller started it (the decode
    before this call is the batch's too); ``result.seconds`` is its wall time by step
    (:data:`cdclake.apply.results.STEPS`).

    A table whose column names Delta cannot hold or write (see
    :func:`cdclake.names.refusals`) has its changes quarantined with the reason. A table
    that fails does not stop the others: the first error is raised once every table was tried.

    >>> result = apply_changes(read_changes(spark, ["in.jsonl"]), "/lake")  # doctest: +SKIP
    >>> result.tables["testDB.dbo.customers"].inserted  # doctest: +SKIP
    1
    """
    spark = changes.sparkSession
    decoded = changes  # holds the decode's cached envelopes, released once ours is built
    records = raw_records(changes)  # where a bad change's message is read again, if needed
    tgt = tbl.Target(target, dict(table_map or {}))
    txn = Txn(spark, app_id, batch_id)
    history = HistoryOptions(
        stored_as_scd_type,
        track_history_column_list,
        track_history_except_column_list,
        **({"batch_tag": f"{app_id}/{batch_id}"} if app_id is not None else {}),
    )
    laps = laps or Laps()
    result = BatchResult(seconds=laps.seconds)
    keep = _table_filter(include, exclude)
    if keep is not None and one_pass:  # what needs two passes is counted, whatever its table
        keep = keep | F.col("error").eqNullSafe(NEW_SCHEMA)
    if keep is not None:
        changes = changes.withColumn("_keep", keep)
    with_raw = changes = _with_record_fields(changes)  # a refused table's are quarantined raw
    cached = changes = text_where_bad(changes).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        if keep is not None:
            result.excluded = changes.filter(~F.col("_keep")).count()
            changes = changes.filter(F.col("_keep")).drop("_keep")
        per_op, per_input, n_bad, per_source, n_new = _summarize(changes)  # computes the cache
        if one_pass and n_new:
            raise NeedsTwoPasses(n_new)
        laps.lap("decode")
        tables = _data_tables(per_op, result)
        refused = refusals(
            {t: _union_struct(_schemas(p))[0] for t, p in tables.items()},
            lambda t: tbl.current_properties(spark, tgt.table_path(t)),
        )
        if not refused:  # else the decode is read again for the refused tables' raw messages
            release(decoded)
        # every table's steps below plan against one leaf, not against the whole decode (whose
        # plan grows with the batch's tables and schema versions)
        changes = detached(changes)
        bad = _Bad(changes, with_raw, n_bad, refused, records)
        bad.quarantine(tgt, tables, result, txn, batch_id, fail_on_bad_input)
        release(decoded)
        laps.lap("quarantine")
        _apply_tables(
            changes, tables, result, parallel_tables,
            lambda name, parts: _table_task(
                tgt, name, parts, txn, count_rows, added_defaults, history
            ),
        )  # fmt: skip
        laps.lap("tables")
        applied = [r for r in per_op if r["table"] not in refused or r["op"] in CONTROL_OPS]
        rows = liveness.rows(tgt, per_source, per_input, applied, result, batch_id)
        if record_sources:
            liveness.write(spark, tgt, rows, txn)
        else:
            result.sources_rows = rows
        laps.lap("record")
    finally:
        cached.unpersist()
        release(decoded)
    return result


@dataclass(frozen=True)
class _Bad:
    """A batch's bad changes (``n``: how many the summary counted) and the tables whose column
    names Delta refuses (``refused``: table -> reason), whose changes are quarantined raw (from
    ``with_raw``); ``records``: the batch's raw records, where a bad change whose message the
    decode's cache left out finds it (:func:`cdclake.decode.with_records`)."""

    changes: DataFrame
    with_raw: DataFrame
    n: int
    refused: dict[str, str]
    records: DataFrame | None = None

    def quarantine(
        self,
        tgt: tbl.Target,
        tables: dict[str, list[Row]],
        result: BatchResult,
        txn: Txn,
        batch_id: int | None,
        fail_on_bad_input: bool,
    ) -> None:
        """Count the bad changes by reason into ``result``, take the refused tables out of
        ``tables``, and append them all to the quarantine (or raise the first one, with
        ``fail_on_bad_input``)."""
        n_bad = self.n
        bad = self.changes.filter(F.col("error").isNotNull())
        if n_bad:
            reasons = bad.groupBy("error").count().orderBy(F.desc("count")).limit(50).collect()
            result.quarantine_reasons = {r["error"]: r["count"] for r in reasons}
        if self.refused:
            n_bad += _count_refused(tables, self.refused, result)
            raw = refused_changes(self.with_raw, self.refused)
            bad = bad.unionByName(raw.select(*bad.columns))
        if n_bad:
            result.quarantined = n_bad
            bad = with_records(bad, self.records)
            if fail_on_bad_input:
                _raise_bad(bad)
            quarantine(self.changes.sparkSession, tgt, bad, txn, batch_id)


def _apply_tables(
    changes: DataFrame,
    tables: dict[str, list[Row]],
    result: BatchResult,
    parallel_tables: int,
    task: Callable[[str, list[Row]], Task[TableResult]],
) -> None:
    """Apply the good data changes of every table (``task``: applying one, from its rows of the
    batch aggregate), up to ``parallel_tables`` at once; their results into ``result``."""
    good = changes.filter(F.col("error").isNull())
    data = good.filter(F.col("op").isin(*DATA_OPS, Op.TRUNCATE))
    names = sorted(tables)
    if names:
        phases.tables(len(names))
    tasks = [task(name, tables[name]) for name in names]
    for name, res in zip(
        names, run_all(changes.sparkSession, data, tasks, parallel_tables), strict=True
    ):
        result.tables[name] = res
    result.changes = sum(t.changes for t in result.tables.values())


def _data_tables(per_op: list[Row], result: BatchResult) -> dict[str, list[Row]]:
    """The batch's tables with their rows of ``per_op`` (one per data op); control records are
    counted in ``result``."""
    tables: dict[str, list[Row]] = {}
    for r in per_op:
        if r["op"] in CONTROL_OPS:
            result.control_by_op[r["op"]] = result.control_by_op.get(r["op"], 0) + r["n"]
        else:
            tables.setdefault(r["table"], []).append(r)
    result.control = sum(result.control_by_op.values())
    return tables


def _schemas(parts: list[Row]) -> list[str]:
    """The row-schema versions of a table's changes in the batch (from its rows of ``per_op``)."""
    return sorted({s for r in parts for s in r["schemas"] if s})


def _count_refused(
    tables: dict[str, list[Row]], refused: dict[str, str], result: BatchResult
) -> int:
    """Take the refused tables (see :func:`cdclake.names.refusals`) out of ``tables``;
    their changes count as quarantined under their reason."""
    total = 0
    for name, reason in refused.items():
        n = sum(r["n"] for r in tables.pop(name))
        result.quarantine_reasons[reason] = result.quarantine_reasons.get(reason, 0) + n
        total += n
    return total


def _summarize(changes: DataFrame) -> tuple[list[Row], list[Row], int, list[Row], int]:
    """One pass over the batch: per (table, op), per input source and per source id (see
    :mod:`cdclake.apply.liveness`), for the good changes; the number of bad ones, and of those
    the number that need two passes (:data:`cdclake.decode.NEW_SCHEMA`). One aggregate groups
    by all of these at once; the groupings are rolled up from its few rows
    (:mod:`cdclake.apply.rollup`)."""
    groups = (
        changes.withColumns(
            {
                "_bad": F.col("error").isNotNull(),
                "_source": F.col("lineage.source"),
                "_source_id": liveness.source_id(),
            }
        )
        .groupBy("_bad", "table", "op", "_source", "_source_id")
        .agg(
            *liveness.aggregates(),
            F.collect_set("row_schema").alias("schemas"),
            F.max_by("key_columns", "seq").alias("keys"),
            F.max_by("key_source", "seq").alias("key_source"),
            F.max("seq").alias("last_seq"),
            F.count(F.lit(1)).alias("n"),
            F.count_if(F.col("error") == NEW_SCHEMA).alias("n_new"),
            F.count_if(F.col("before").isNotNull()).alias("n_before"),
            F.count_if(F.size("unavailable") > 0).alias("n_unavailable"),
            F.max("source_ts").alias("last_event_time"),
            F.max(F.when(F.col("op") == Op.HEARTBEAT, F.col("source_ts"))).alias("last_heartbeat"),
            F.max_by("position", "seq").alias("last_position"),
            F.max("lineage.offset").alias("last_offset"),
            F.bool_or(F.coalesce(F.col("meta")[ORDERING_KEY] == INPUT_ORDERED, F.lit(False))).alias(
                "input_ordered"
            ),
        )
        .collect()
    )
    good = [g for g in groups if not g["_bad"]]
    bad = [g for g in groups if g["_bad"]]
    per_op = roll_up(good, ("table", "op"))
    progress = roll_up(good, ("_source",))
    per_source = roll_up(good, ("_source_id",))
    return per_op, progress, sum(g["n"] for g in bad), per_source, sum(g["n_new"] for g in bad)


def _table_task(
    tgt: tbl.Target,
    name: str,
    parts: list[Row],
    txn: Txn,
    count_rows: bool,
    added_defaults: dict[str, dict[str, Any]] | None,
    history: HistoryOptions,
) -> Task[TableResult]:
    """Applying table ``name``, from its rows of the batch aggregate (one per op)."""
    # a truncate carries no key: the key comes from the newest row change, or, in a batch of
    # truncates only, from what the table recorded when it was created
    changes_only = [r for r in parts if r["op"] != Op.TRUNCATE]
    latest = max(changes_only or parts, key=lambda r: r["last_seq"])
    stats = TableStats(
        changes=sum(r["n"] for r in parts),
        truncates=sum(r["n"] for r in parts if r["op"] == Op.TRUNCATE),
        deletes=sum(r["n"] for r in parts if r["op"] == Op.DELETE),
        befores=sum(r["n_before"] for r in parts if r["op"] == Op.UPDATE),
        unavailable=sum(r["n_unavailable"] for r in parts),
        input_ordered=any(r["input_ordered"] for r in parts),
    )
    schemas = _schemas(parts)

    def run(spark: SparkSession, data: DataFrame) -> TableResult:
        phases.table(name, stats.changes)
        keys = tuple(latest["keys"] or ()) if changes_only else (tgt.keys(spark, name) or ())

        def attempt() -> TableResult:
            return apply_table(
                spark,
                tgt,
                name,
                data.filter(F.col("table") == name),
                schemas,
                keys,
                Txn(spark, txn.app_id, txn.version),  # the writes' identifiers in this session
                stats,
                (added_defaults or {}).get(name, {}),
                history,
            )

        res = retrying_conflicts(attempt, name)
        res.changes = stats.changes
        res.key_source = latest["key_source"] or ""
        res.input_ordered = stats.input_ordered
        if count_rows and res.rows_now is None:  # not known from the write itself
            res.rows_now = tbl.rows_in(spark, tgt.table_path(name))
        return res

    return run


CONFLICT_ATTEMPTS = 4


def retrying_conflicts(
    attempt: Callable[[], R], table: str, attempts: int = CONFLICT_ATTEMPTS, pause: float = 0.5
) -> R:
    """``attempt()``, again (up to ``attempts`` times, waiting a little longer each time) while
    it fails with Delta's answer to a concurrent commit: ``cdclake maintain`` (or another
    writer) compacting the table while the batch merges into it. Trying again is safe: the
    writes of the failed attempt that did commit carry the batch's idempotent-write identifiers
    and are skipped, exactly as when a stream re-runs a batch after a crash."""
    for n in range(1, attempts + 1):
        try:
            return attempt()
        except Exception as e:
            if n == attempts or not is_write_conflict(e):
                raise
            _log.warning(
                "%s met a concurrent write (%s); applying it again (%d of %d)",
                table, one_line(e, 160), n + 1, attempts,
            )  # fmt: skip
            time.sleep(pause * n)
    raise AssertionError("unreachable")


def as_row(changes: DataFrame, image: str, row_struct: StructType) -> Column:
    """The row image ``image`` of ``changes`` as a ``row_struct``: a VARIANT image cast, a
    struct image (:func:`cdclake.decode.type_known`'s ``struct_images``) taken column by column,
    by name (a struct cast would pair fields by position), a column it lacks null."""
    typed = changes.schema[image].dataType
    if not isinstance(typed, StructType):
        return F.col(image).cast(row_struct)
    have = set(typed.fieldNames())
    fields = [
        (F.col(image)[f.name] if f.name in have else F.lit(None)).cast(f.dataType).alias(f.name)
        for f in row_struct.fields
    ]
    return F.when(F.col(image).isNotNull(), F.struct(*fields))


def apply_table(
    spark: SparkSession,
    target: tbl.Target,
    table: str,
    data: DataFrame,
    schemas: list[str],
    keys: tuple[str, ...],
    txn: Txn,
    stats: TableStats,
    ddl_defaults: dict[str, Any],
    history: HistoryOptions | None = None,
) -> TableResult:
    """Apply one table's changes of a batch (``ddl_defaults``: columns the batch's DDL added
    with a default): its layout made or brought up to date, then its rows typed and applied as
    current state (:func:`_apply_current`) or history (:func:`apply_history`)."""
    result = TableResult(table, key_columns=keys)
    row_struct, defaults = _union_struct(schemas)
    scd_type = history.scd_type(table) if history else 1
    if scd_type == 2 and not keys:
        refuse_keyless(table)
    full, props = _layout(row_struct, keys, scd_type, stats.input_ordered)
    path = target.table_path(table)
    check_layout(spark, path, table, scd_type)
    # an initial load of a keyed table creates it with its rows in one commit (see apply_keyed)
    initial_load = (
        scd_type == 1
        and bool(keys)
        and not stats.truncates
        and not DeltaTable.isDeltaTable(spark, path)
    )
    synced = None if initial_load else tbl.sync_table(spark, path, full, props or None, defaults)
    created = synced is None or synced.created
    if scd_type == 2 and tbl.cached_properties(spark, path).get(tbl.SCD_TYPE_PROPERTY) != "2":
        tbl.set_properties(spark, path, {tbl.SCD_TYPE_PROPERTY: "2"})
    if stats.input_ordered and synced is not None and not created:
        _mark_input_ordered(spark, path)
    stored = synced.table.toDF().schema if ddl_defaults and synced else StructType()
    for c in ddl_defaults:
        if c not in row_struct.fieldNames() and c in stored.fieldNames():
            # every row of the batch predates the DDL: they all get its default
            row_struct = row_struct.add(StructField(c, stored[c].dataType, True))
    new_columns = (
        [*synced.added, *ddl_defaults] if synced and not created else row_struct.fieldNames()
    )
    defaults = {**ddl_defaults, **defaults}
    after = as_row(data, "after", row_struct)
    if defaults and new_columns:
        after = _fill_defaults(after, row_struct, schemas, new_columns, defaults)
    rows = data.select(
        "op",
        "position",
        "seq",
        "source_ts",
        "lineage",
        "unavailable",
        after.alias("a"),
        as_row(data, "before", row_struct).alias("b"),
    )
    if history is not None and scd_type == 2:
        log_path = target.history_log_path(table)
        empty = created and not DeltaTable.isDeltaTable(spark, log_path)
        narrow = not stats.truncates and stats.changes <= BROADCAST_CHANGES
        where = HistoryTable(table, path, log_path, keys, empty, narrow)
        apply_history(spark, where, rows, row_struct, txn, result, history, defaults)
        return result
    create = tbl.Creation(full, props) if initial_load else None
    # a table its CREATE TABLE made (in this batch or before) and no row since: nothing to match
    empty = created or (bool(keys) and tbl.holds_no_files(spark, path))
    wrote = _apply_current(
        spark, target, table, rows, row_struct, keys, txn, result, stats, empty, create
    )
    if initial_load and not wrote:  # no write created it: the table, empty
        tbl.sync_table(spark, path, full, props or None, defaults)
    return result


def _layout(
    row_struct: StructType, keys: tuple[str, ...], scd_type: int, input_ordered: bool
) -> tuple[StructType, dict[str, str]]:
    """A target table's schema (the source's columns, then cdclake's) and properties."""
    extra = [] if keys else KEYLESS_FIELDS
    meta = [*tbl.meta_fields(POSITION_TYPE), *extra]
    if scd_type == 2:
        meta = history_fields(POSITION_TYPE)
    props = {tbl.KEY_PROPERTY: keys_to_text(keys)} if keys else {}
    if scd_type == 2:
        props[tbl.SCD_TYPE_PROPERTY] = "2"
    if input_ordered:
        props[tbl.ORDERING_PROPERTY] = INPUT_ORDERED
    return StructType([*row_struct.fields, *meta]), props


def _apply_current(
    spark: SparkSession,
    target: tbl.Target,
    table: str,
    rows: DataFrame,
    row_struct: StructType,
    keys: tuple[str, ...],
    txn: Txn,
    result: TableResult,
    stats: TableStats,
    created: bool,
    create: tbl.Creation | None,
) -> bool:
    """Apply typed rows as the table's current state: truncates first, then the keyed MERGE
    (or initial load, creating the table with its rows when ``create``) or the keyless rows.
    Whether a keyed write ran (and so created the table)."""
    path = target.table_path(table)
    n_data = stats.changes - stats.truncates
    if stats.truncates or tbl.truncate_position(spark, path) is not None:
        rows = apply_truncates(spark, path, rows, txn, result)
        rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
        n_live = rows.count()
        result.ignored += result.stale_before_truncate
    else:
        n_live = n_data
    try:
        if n_live and keys:
            apply_keyed(spark, target, table, rows, row_struct, keys, txn, result, stats,
                        empty=created, create=create)  # fmt: skip
        elif n_live:
            apply_keyless(spark, target, table, rows, row_struct, txn, result)
    finally:
        rows.unpersist()
    return bool(n_live and keys)


def _mark_input_ordered(spark: SparkSession, path: str) -> None:
    """Record on the table that it is ordered by input order only (once: status reads it)."""
    if tbl.cached_properties(spark, path).get(tbl.ORDERING_PROPERTY) != INPUT_ORDERED:
        tbl.set_properties(spark, path, {tbl.ORDERING_PROPERTY: INPUT_ORDERED})
