"""Where tables live under the target folder, and how their schemas evolve.

Layout of ``<target>``::

    <target>/<identifier>/            one Delta table per source table: the live rows
    <target>/_cdc_tombstones/<identifier>/   deleted keys with their delete position
    <target>/_cdc_quarantine/         bad input, with its lineage and the reason
    <target>/_cdc_batches/            one metrics record per applied batch

``identifier`` is the source identifier with every character outside ``[A-Za-z0-9_.$-]``
percent-escaped (and a leading dot too), so no identifier can leave ``<target>``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from delta.tables import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql.types import DataType, StructField, StructType

from cdclake.model import LINEAGE_COL, META_PREFIX, OP_COL, POSITION_COL, SOURCE_TS_COL

SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.$-")
QUARANTINE = "_cdc_quarantine"
TOMBSTONES = "_cdc_tombstones"
BATCHES = "_cdc_batches"
TRUNCATE_PROPERTY = "cdclake.truncatePosition"
KEY_PROPERTY = "cdclake.keyColumns"


def escape_identifier(identifier: str) -> str:
    """A folder name for a source identifier that cannot escape the target folder.

    >>> escape_identifier("db.dbo.my table/../x")
    'db.dbo.my%20table%2F..%2Fx'
    >>> escape_identifier("..")
    '%2E.'
    """
    out = []
    for i, ch in enumerate(identifier):
        if ch in SAFE and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8")))
    return "".join(out) or "%00"


def meta_fields(position_type: DataType) -> list[StructField]:
    from pyspark.sql.types import StringType, TimestampType

    from cdclake.model import LINEAGE_TYPE

    return [
        StructField(POSITION_COL, position_type),
        StructField(OP_COL, StringType()),
        StructField(SOURCE_TS_COL, TimestampType()),
        StructField(LINEAGE_COL, LINEAGE_TYPE),
    ]


@dataclass(frozen=True)
class Target:
    """The target folder: paths of every table cdclake writes there."""

    root: str
    table_map: dict[str, str] = field(default_factory=dict)  # source identifier -> target name

    def name(self, identifier: str) -> str:
        return self.table_map.get(identifier, identifier)

    def table_path(self, identifier: str) -> str:
        return str(Path(self.root) / escape_identifier(self.name(identifier)))

    def tombstone_path(self, identifier: str) -> str:
        return str(Path(self.root) / TOMBSTONES / escape_identifier(self.name(identifier)))

    def system_path(self, name: str) -> str:
        return str(Path(self.root) / name)

    def schema(self, spark: SparkSession, identifier: str) -> StructType | None:
        """The current schema of a source table's Delta table, or None when there is none."""
        path = self.table_path(identifier)
        if not DeltaTable.isDeltaTable(spark, path):
            return None
        return spark.read.format("delta").load(path).schema

    def keys(self, spark: SparkSession, identifier: str) -> tuple[str, ...] | None:
        """The primary key recorded for a table by a CREATE TABLE, if any."""
        path = self.table_path(identifier)
        if not DeltaTable.isDeltaTable(spark, path):
            return None
        keys = table_properties(spark, path).get(KEY_PROPERTY)
        return tuple(keys.split(",")) if keys else None


def data_columns(schema: StructType) -> list[StructField]:
    return [f for f in schema.fields if not f.name.startswith(META_PREFIX)]


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def ensure_table(
    spark: SparkSession,
    path: str,
    schema: StructType,
    properties: dict[str, str] | None = None,
) -> DeltaTable:
    """Create the Delta table at ``path`` if missing; add columns it lacks (earlier rows null).

    Columns are only ever added: a column missing from ``schema`` stays in the table.
    """
    if not DeltaTable.isDeltaTable(spark, path):
        builder = DeltaTable.createIfNotExists(spark).location(path).addColumns(schema)
        for k, v in (properties or {}).items():
            builder = builder.property(k, v)
        return builder.execute()
    table = DeltaTable.forPath(spark, path)
    existing = {f.name.lower() for f in table.toDF().schema.fields}
    new = [f for f in schema.fields if f.name.lower() not in existing]
    if new:
        cols = ", ".join(f"{quote(f.name)} {f.dataType.simpleString()}" for f in new)
        spark.sql(f"ALTER TABLE delta.{quote(path)} ADD COLUMNS ({cols})")
        table = DeltaTable.forPath(spark, path)
    return table


def table_properties(spark: SparkSession, path: str) -> dict[str, str]:
    detail = DeltaTable.forPath(spark, path).detail().select("properties").first()
    return dict(detail["properties"]) if detail and detail["properties"] else {}


def set_properties(spark: SparkSession, path: str, props: dict[str, str]) -> None:
    pairs = ", ".join(f"'{k}' = '{v}'" for k, v in props.items())
    spark.sql(f"ALTER TABLE delta.{quote(path)} SET TBLPROPERTIES ({pairs})")


_TRUNCATED: dict[str, list[int] | None] = {}


def truncate_position(spark: SparkSession, path: str) -> list[int] | None:
    """The newest truncate applied to the table (cached: cdclake is the table's only writer)."""
    if path not in _TRUNCATED:
        props = table_properties(spark, path) if DeltaTable.isDeltaTable(spark, path) else {}
        _TRUNCATED[path] = position_from_text(props.get(TRUNCATE_PROPERTY))
    return _TRUNCATED[path]


def set_truncate_position(spark: SparkSession, path: str, position: list[int]) -> None:
    set_properties(spark, path, {TRUNCATE_PROPERTY: position_to_text(position)})
    _TRUNCATED[path] = list(position)


def position_to_text(position: list[int]) -> str:
    return json.dumps(position, separators=(",", ":"))


def position_from_text(text: str | None) -> list[int] | None:
    return None if not text else [int(x) for x in json.loads(text)]
