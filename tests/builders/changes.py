"""Canonical changes built in memory, and the round trip through a format (encode, decode)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from cdclake.decode import decode
from cdclake.formats.base import DecodeOptions
from cdclake.formats.encode import EncodeOptions
from cdclake.model import CHANGE_SCHEMA
from cdclake.run.produce import encode, record_line
from cdclake.sources import raw_from_lines_df


@dataclass
class Change:
    """One canonical change, as a test writes it."""

    table: str
    op: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    position: list[int]
    key_columns: list[str] = field(default_factory=list)
    source_ts: datetime | None = None
    meta: dict[str, str] = field(default_factory=dict)
    detail: str | None = None


def changes_df(
    spark: SparkSession, changes: list[Change], schemas: dict[str, StructType]
) -> DataFrame:
    """Changes of tables whose row images ``schemas`` types (one per table)."""
    parts = []
    for table, schema in schemas.items():
        mine = [c for c in changes if c.table == table]
        if not mine:
            continue
        rows = [
            (i, c.op, c.key_columns, c.before, c.after, c.position, c.source_ts, c.meta, c.detail)
            for i, c in enumerate(mine)
        ]
        df_schema = StructType.fromDDL(
            f"i INT, op STRING, key_columns ARRAY<STRING>, before {schema.simpleString()}, "
            f"after {schema.simpleString()}, position ARRAY<BIGINT>, source_ts TIMESTAMP, "
            "meta MAP<STRING,STRING>, detail STRING"
        )
        # keep the column names exactly (simpleString may not quote them)
        df_schema = StructType(
            [
                f if f.name not in ("before", "after") else f.__class__(f.name, schema)
                for f in df_schema.fields
            ]
        )
        df = spark.createDataFrame(rows, df_schema)
        row_schema = json.dumps(schema.jsonValue(), separators=(",", ":"))
        is_data = F.col("op").isin("insert", "update", "delete", "read")
        cols = {
            "table": F.lit(table),
            "op": F.col("op"),
            "key_columns": F.col("key_columns"),
            "key_source": F.lit("message"),
            "before": F.to_variant_object(F.col("before")),
            "after": F.to_variant_object(F.col("after")),
            "row_schema": F.when(is_data, F.lit(row_schema)),
            "unavailable": F.array().cast("array<string>"),
            "position": F.col("position"),
            "source_ts": F.col("source_ts"),
            "detail": F.col("detail"),
            "meta": F.col("meta"),
        }
        parts.append(
            df.orderBy("i").select(
                *[
                    (cols[f.name] if f.name in cols else F.lit(None)).cast(f.dataType).alias(f.name)
                    for f in CHANGE_SCHEMA.fields
                ]
            )
        )
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p)
    return out


def round_trip(
    changes: DataFrame,
    format_name: str,
    options: EncodeOptions | None = None,
    decode_options: DecodeOptions | None = None,
    table_schemas: dict[str, StructType] | None = None,
) -> tuple[DataFrame, DataFrame]:
    """(messages, decoded changes): encode, then decode the messages as a consumer would
    (in write order, one record object per line)."""
    messages = encode(changes, format_name, options).persist()
    good = messages.filter(F.col("error").isNull() & F.col("skipped").isNull())
    order = F.row_number().over(
        __import__("pyspark.sql", fromlist=["Window"]).Window.orderBy("table", "position", "part")
    )
    lines = good.select(
        record_line(good).alias("line"),
        F.struct(
            F.lit("rt").alias("source"),
            F.lit(None).cast("int").alias("partition"),
            order.cast("bigint").alias("offset"),
        ).alias("lineage"),
    )
    schemas = table_schemas or {}
    decoded = decode(
        raw_from_lines_df(lines), format_name, decode_options, table_schemas=schemas.get
    )
    return messages, decoded
