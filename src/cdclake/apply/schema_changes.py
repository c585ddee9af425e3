"""DDL control records -> Delta table changes, each recorded in ``<target>/_cdc_ddl``.

Statements are parsed with sqlglot (:mod:`cdclake.formats.ddl`), never with regular expressions, and
applied in source order before the batch's row changes are typed, so that a CREATE TABLE types
the rows that follow it and an ALTER TABLE ADD COLUMN widens the table first.

What each statement does (the policy, configurable where it says so):

==================== =====================================================================
CREATE TABLE         creates the Delta table with mapped types; records its primary key
                     (table property ``cdclake.keyColumns``); an existing table gains the
                     columns it lacks
ADD COLUMN           adds the column; earlier rows get a constant DEFAULT (else null)
DROP COLUMN          ``drop_column="keep"`` (default): the column stays, nullable, and new rows
                     leave it null; ``"drop"``: dropped (needs column mapping, enabled on demand)
MODIFY / CHANGE      a widening the table supports (int -> bigint, float -> double, decimal
                     precision) is applied with Delta type widening; anything else is recorded
                     and skipped, the column keeps its type
RENAME COLUMN        renamed with Delta column mapping (enabled on demand)
TRUNCATE             removes every row older than the statement's position
DROP TABLE (ERASE)   ``drop_table="keep"`` (default): the Delta table stays as it was, recorded;
                     ``"drop"``: its folder is deleted
RENAME TABLE         ``rename_table="follow"`` (default): the Delta table moves to the new
                     identifier; ``"keep"``: recorded only
anything else        (CREATE DATABASE, indexes, grants...) recorded as skipped with the reason
==================== =====================================================================

A column name Delta takes only with column mapping (a space, a comma, ``$% ^,& *(``) turns it on
for the table (see :mod:`cdclake.names`); a statement that names a column no table can
hold (``_cdc_*``, ``__START_AT``, ``__END_AT``, an empty name, one equal to another ignoring
case) fails with the reason.

A statement that cannot be parsed is quarantined with the parser's message; the pipeline goes on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from cdclake import names, paths
from cdclake.apply import tables as tbl
from cdclake.apply.keyless import KEYLESS_FIELDS
from cdclake.apply.results import Txn
from cdclake.formats import ddl as sql
from cdclake.formats import mysql_types
from cdclake.model import DEFAULTS_JSON_OPTIONS, LINEAGE_TYPE, POSITION_COL, POSITION_TYPE

WIDENINGS = {
    ("byte", "short"),
    ("byte", "integer"),
    ("byte", "long"),
    ("short", "integer"),
    ("short", "long"),
    ("integer", "long"),
    ("float", "double"),
    ("date", "timestamp_ntz"),
}


@dataclass(frozen=True)
class DdlPolicy:
    drop_column: str = "keep"
    drop_table: str = "keep"
    rename_table: str = "follow"
    tinyint1_as_boolean: bool = False


@dataclass
class DdlOutcome:
    table: str | None
    action: str
    outcome: str  # applied | skipped | failed
    reason: str = ""


def _ident(name: sql.TableName, default_db: str | None) -> str:
    db = name.database or default_db
    return f"{db}.{name.name}" if db else name.name


class DdlApplier:
    """Applies parsed DDL to the Delta tables under one target folder."""

    def __init__(self, spark: SparkSession, target: tbl.Target, policy: DdlPolicy) -> None:
        self.spark, self.target, self.policy = spark, target, policy
        self.added_defaults: dict[str, dict[str, Any]] = {}  # table -> column -> typed default

    def _path(self, name: sql.TableName, db: str | None) -> tuple[str, str]:
        ident = _ident(name, db)
        return ident, self.target.table_path(ident)

    def _exists(self, path: str) -> bool:
        return DeltaTable.isDeltaTable(self.spark, path)

    def _spark_type(self, col: sql.ColumnDef) -> Any:
        return mysql_types.spark_type(
            col.type_sql, tinyint1_as_boolean=self.policy.tinyint1_as_boolean
        )

    def apply(self, action: Any, db: str | None, position: list[int]) -> DdlOutcome:
        kind = type(action).__name__
        handler = getattr(self, f"_{kind}", None)
        if handler is None:
            return DdlOutcome(None, kind, "skipped", f"{kind} is not handled")
        return handler(action, db, position)  # type: ignore[no-any-return]

    def _CreateTable(self, a: sql.CreateTable, db: str | None, pos: list[int]) -> DdlOutcome:
        ident, path = self._path(a.table, db)
        columns = StructType([StructField(c.name, self._spark_type(c), True) for c in a.columns])
        problem = names.name_problem(columns)
        if problem is not None:
            return DdlOutcome(ident, "create table", "failed", problem)
        extra = [] if a.primary_key else KEYLESS_FIELDS
        full = StructType([*columns.fields, *tbl.meta_fields(POSITION_TYPE), *extra])
        existed = self._exists(path)
        props = {tbl.KEY_PROPERTY: names.keys_to_text(a.primary_key)} if a.primary_key else {}
        tbl.ensure_table(self.spark, path, full, props)
        if existed and props:
            tbl.set_properties(self.spark, path, props)
        keys = ",".join(a.primary_key) or "none"
        return DdlOutcome(
            ident,
            "create table",
            "applied",
            f"{'existed: added missing columns' if existed else 'created'}; primary key {keys}",
        )

    def _CreateTableLike(
        self, a: sql.CreateTableLike, db: str | None, pos: list[int]
    ) -> DdlOutcome:
        ident, path = self._path(a.table, db)
        _, like = self._path(a.like, db)
        if not self._exists(like):
            return DdlOutcome(
                ident,
                "create table like",
                "skipped",
                f"{_ident(a.like, db)} has no Delta table to copy",
            )
        schema = self.spark.read.format("delta").load(like).schema
        props = tbl.table_properties(self.spark, like)
        props.pop("delta.columnMapping.maxColumnId", None)  # Delta's own: a create may not set it
        tbl.ensure_table(self.spark, path, schema, props)
        return DdlOutcome(ident, "create table like", "applied", f"like {_ident(a.like, db)}")

    def _need(
        self, name: sql.TableName, db: str | None, action: str
    ) -> tuple[str, str, DdlOutcome | None]:
        ident, path = self._path(name, db)
        if not self._exists(path):
            return (
                ident,
                path,
                DdlOutcome(
                    ident,
                    action,
                    "skipped",
                    "no Delta table for it yet (no CREATE TABLE or rows seen)",
                ),
            )
        return ident, path, None

    def _AddColumn(self, a: sql.AddColumn, db: str | None, pos: list[int]) -> DdlOutcome:
        ident, path, missing = self._need(a.table, db, "add column")
        if missing:
            return missing
        existing = {f.name.lower() for f in self.spark.read.format("delta").load(path).schema}
        if a.column.name.lower() in existing:
            return DdlOutcome(ident, "add column", "skipped", f"column {a.column.name} exists")
        data_type = self._spark_type(a.column)
        problem = names.name_problem(StructType([StructField(a.column.name, data_type, True)]))
        if problem is not None:
            return DdlOutcome(ident, "add column", "failed", problem)
        default = self._typed_default(a.column, data_type)
        tbl.sync_table(
            self.spark,
            path,
            StructType([StructField(a.column.name, data_type, True)]),
            defaults={a.column.name: default} if default is not None else None,
        )
        if default is not None:
            self.added_defaults.setdefault(ident, {})[a.column.name] = default
            earlier = f"earlier rows {a.column.default}"
        elif a.column.default and a.column.default.upper() != "NULL":
            earlier = f"earlier rows null (default {a.column.default} is not a constant)"
        else:
            earlier = "earlier rows null"
        return DdlOutcome(
            ident, "add column", "applied", f"{a.column.name} {a.column.type_sql}; {earlier}"
        )

    def _typed_default(self, col: sql.ColumnDef, data_type: Any) -> Any:
        """A constant DEFAULT as the typed JSON value :func:`tbl.sync_table` fills earlier rows
        with; None for no default, NULL, or an expression (``CURRENT_TIMESTAMP``)."""
        value = sql.constant_value(col.default) if col.default else None
        if value is None:
            return None
        typed = F.lit(value).try_cast(data_type)
        row = (
            self.spark.sql("SELECT 1")
            .select(F.to_json(F.struct(typed.alias("v")), DEFAULTS_JSON_OPTIONS))
            .first()
        )
        return json.loads(row[0]).get("v") if row else None

    def _DropColumn(self, a: sql.DropColumn, db: str | None, pos: list[int]) -> DdlOutcome:
        ident, path, missing = self._need(a.table, db, "drop column")
        if missing:
            return missing
        if self.policy.drop_column != "drop":
            return DdlOutcome(
                ident,
                "drop column",
                "skipped",
                f"{a.name} kept (nullable) by policy drop_column=keep",
            )
        tbl.enable_column_mapping(self.spark, path)
        self.spark.sql(f"ALTER TABLE delta.{tbl.quote(path)} DROP COLUMN {tbl.quote(a.name)}")
        return DdlOutcome(ident, "drop column", "applied", a.name)

    def _ModifyColumn(self, a: sql.ModifyColumn, db: str | None, pos: list[int]) -> DdlOutcome:
        ident, path, missing = self._need(a.table, db, "modify column")
        if missing:
            return missing
        return self._retype(ident, path, a.column.name, a.column)

    def _retype(self, ident: str, path: str, name: str, col: sql.ColumnDef) -> DdlOutcome:
        schema = self.spark.read.format("delta").load(path).schema
        current = next((f.dataType for f in schema.fields if f.name.lower() == name.lower()), None)
        new = self._spark_type(col)
        if current is None:
            return DdlOutcome(ident, "modify column", "skipped", f"no column {name}")
        if current == new:
            return DdlOutcome(
                ident, "modify column", "skipped", f"{name} already {new.simpleString()}"
            )
        widening = (current.typeName(), new.typeName()) in WIDENINGS or (
            current.typeName() == "decimal" == new.typeName()
            and new.precision - new.scale >= current.precision - current.scale  # type: ignore[attr-defined]
            and new.scale >= current.scale  # type: ignore[attr-defined]
        )
        if not widening:
            return DdlOutcome(
                ident,
                "modify column",
                "skipped",
                f"{name}: {current.simpleString()} -> {new.simpleString()} is not a "
                "widening Delta supports; the column keeps its type",
            )
        tbl.set_properties(self.spark, path, {"delta.enableTypeWidening": "true"})
        self.spark.sql(
            f"ALTER TABLE delta.{tbl.quote(path)} ALTER COLUMN {tbl.quote(name)} "
            f"TYPE {new.simpleString()}"
        )
        return DdlOutcome(
            ident,
            "modify column",
            "applied",
            f"{name}: {current.simpleString()} -> {new.simpleString()}",
        )

    def _RenameColumn(self, a: sql.RenameColumn, db: str | None, pos: list[int]) -> DdlOutcome:
        ident, path, missing = self._need(a.table, db, "rename column")
        if missing:
            return missing
        problem = names.name_problem(StructType([StructField(a.new, StringType())]))
        if problem is not None:
            return DdlOutcome(ident, "rename column", "failed", problem)
        if a.old != a.new:
            tbl.enable_column_mapping(self.spark, path)
            self.spark.sql(
                f"ALTER TABLE delta.{tbl.quote(path)} RENAME COLUMN {tbl.quote(a.old)} "
                f"TO {tbl.quote(a.new)}"
            )
        if a.column is not None:
            self._retype(ident, path, a.new, a.column)
        return DdlOutcome(ident, "rename column", "applied", f"{a.old} -> {a.new}")

    def _SetPrimaryKey(self, a: sql.SetPrimaryKey, db: str | None, pos: list[int]) -> DdlOutcome:
        ident, path, missing = self._need(a.table, db, "primary key")
        if missing:
            return missing
        tbl.set_properties(self.spark, path, {tbl.KEY_PROPERTY: names.keys_to_text(a.columns)})
        return DdlOutcome(ident, "primary key", "applied", ",".join(a.columns) or "dropped")

    def _TruncateTable(self, a: sql.TruncateTable, db: str | None, pos: list[int]) -> DdlOutcome:
        ident, path, missing = self._need(a.table, db, "truncate")
        if missing:
            return missing
        if tbl.cached_properties(self.spark, path).get(tbl.SCD_TYPE_PROPERTY) == "2":
            return DdlOutcome(
                ident, "truncate", "skipped", "a history table keeps its versions (SCD type 2)"
            )
        stored = tbl.truncate_position(self.spark, path)
        if stored is not None and stored >= pos:
            return DdlOutcome(ident, "truncate", "skipped", "already applied")
        DeltaTable.forPath(self.spark, path).delete(
            F.col(POSITION_COL) < F.array(*[F.lit(x).cast("bigint") for x in pos])
        )
        tbl.set_truncate_position(self.spark, path, pos)
        return DdlOutcome(ident, "truncate", "applied", "rows older than the statement removed")

    def _DropTable(self, a: sql.DropTable, db: str | None, pos: list[int]) -> DdlOutcome:
        ident, path = self._path(a.table, db)
        if self.policy.drop_table != "drop":
            return DdlOutcome(
                ident,
                "drop table",
                "skipped",
                "kept by policy drop_table=keep (the lake keeps the last state)",
            )
        for p in (path, self.target.tombstone_path(ident), self.target.history_log_path(ident)):
            paths.delete(self.spark, p)
        tbl.forget(path)
        return DdlOutcome(ident, "drop table", "applied", "Delta table folder deleted")

    def _RenameTable(self, a: sql.RenameTable, db: str | None, pos: list[int]) -> DdlOutcome:
        old, old_path = self._path(a.old, db)
        new, new_path = self._path(a.new, db)
        if self.policy.rename_table != "follow":
            return DdlOutcome(old, "rename table", "skipped", f"-> {new} kept by policy")
        if not self._exists(old_path):
            return DdlOutcome(old, "rename table", "skipped", "no Delta table for it")
        if paths.exists(self.spark, new_path):
            return DdlOutcome(old, "rename table", "skipped", f"{new} already has a table")
        paths.rename(self.spark, old_path, new_path)
        tbl.forget(old_path, new_path)
        for side in (self.target.tombstone_path, self.target.history_log_path):
            if paths.exists(self.spark, side(old)):
                paths.rename(self.spark, side(old), side(new))
        return DdlOutcome(old, "rename table", "applied", f"moved to {new}")

    def _NoOp(self, a: sql.NoOp, db: str | None, pos: list[int]) -> DdlOutcome:
        return DdlOutcome(None, a.statement_kind.lower(), "skipped", a.reason)


@dataclass
class DdlBatch:
    """What a batch's DDL did that its rows need to know."""

    errors: dict[tuple[Any, ...], str]  # lineage -> why the DDL record is quarantined
    added_defaults: dict[str, dict[str, Any]]  # table -> column added with a default -> value
    statements: int = 0  # DDL records of the batch


def _source_order(r: Row) -> tuple[Any, ...]:
    """Spark's ascending order of ``(position, seq)``: nulls first, arrays element by element."""

    def nulls_first(v: Any) -> tuple[bool, Any]:
        return (v is not None, v if v is not None else 0)

    position = r["position"]
    return (
        position is not None,
        [nulls_first(x) for x in position or []],
        nulls_first(r["seq"]),
    )


def apply_ddl_records(
    spark: SparkSession, ddl: list[Row], target: tbl.Target, policy: DdlPolicy, txn: Txn
) -> DdlBatch:
    """Apply the batch's DDL records (``ddl``, as :func:`cdclake.decode.scan` collected them:
    few, one per statement) in source order."""
    # sorted on the driver: a sort in Spark would cost two more jobs for a few rows
    records = sorted(ddl, key=_source_order)
    if not records:
        return DdlBatch({}, {})
    applier = DdlApplier(spark, target, policy)
    rows, errors = [], {}
    for r in records:
        db = (r["meta"] or {}).get("database") or (r["table"] or "").split(".")[0] or None
        pos = list(r["position"] or [])
        lineage = tuple(r["lineage"])
        try:
            actions = sql.parse_ddl(r["detail"] or "", default_database=db)
        except sql.DdlParseError as e:
            errors[lineage] = f"DDL not parsed: {e}"
            rows.append((r["table"], r["detail"], "parse", "failed", str(e), r))
            continue
        for action in actions:
            try:
                out = applier.apply(action, db, pos)
            except Exception as e:  # a Delta error on one statement must not stop the batch
                out = DdlOutcome(r["table"], type(action).__name__, "failed", str(e)[:500])
            rows.append(
                (out.table or r["table"], r["detail"], out.action, out.outcome, out.reason, r)
            )
    _record(target, rows, txn)
    return DdlBatch(errors, applier.added_defaults, len(records))


DDL_RECORD = StructType(
    [
        *[StructField(n, StringType()) for n in ("table", "statement", "action", "outcome")],
        StructField("reason", StringType()),
        StructField("position", POSITION_TYPE),
        StructField("lineage", LINEAGE_TYPE),
        StructField("source_ts", TimestampType()),
        StructField("recorded_at", TimestampType()),
    ]
)
"""A row of ``_cdc_ddl``: a statement, what it did to which table, and where it came from."""


def _record(target: tbl.Target, rows: list[Any], txn: Txn) -> None:
    """The batch's statements appended to ``_cdc_ddl`` (a few rows: by the driver where it can,
    :meth:`Txn.append_rows`)."""
    now = datetime.now(UTC)
    records = [
        {
            "table": table,
            "statement": statement,
            "action": action,
            "outcome": outcome,
            "reason": reason,
            "position": list(r["position"] or []),
            "lineage": r["lineage"] and r["lineage"].asDict(),
            "source_ts": r["source_ts"],
            "recorded_at": now,
        }
        for table, statement, action, outcome, reason, r in rows
    ]
    txn.append_rows(records, DDL_RECORD, target.system_path(tbl.DDL_TABLE), "ddl")
