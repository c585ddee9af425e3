"""Pre-filled target tables (``M`` rows, ids ``0..M-1``) built once and copied per repeat.

The cdclake base table is built with the exact schema and properties cdclake gives the table:
a probe applies the first events of the input to a scratch target and the schema is read back.
Rows carry position ``[-1]``, older than any event, so every change of the batch is newer.
Copying a Delta directory gives a valid table (the log holds relative paths); the copy is not
timed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from delta.tables import DeltaTable
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructType,
)

RECIPE_SCHEMA = (
    "id INT, first_name STRING, last_name STRING, email STRING, _commit_lsn STRING, "
    "_change_lsn STRING, _serial BIGINT"
)


def _value(name: str, t: DataType, ident: Column) -> Column:
    if name == "id" and isinstance(t, IntegerType | LongType):
        return ident.cast(t)
    if isinstance(t, StringType):
        return F.concat(F.lit(f"{name}-"), ident.cast("string"))
    if isinstance(t, ArrayType) and isinstance(t.elementType, LongType):
        return F.array(F.lit(-1).cast("bigint"))
    return F.lit(None).cast(t)


def build_like(spark: SparkSession, probe_path: str, path: Path, rows: int) -> None:
    """A table with the schema and properties of the Delta table at ``probe_path``."""
    if (path / "_delta_log").exists():
        return
    probe = DeltaTable.forPath(spark, probe_path)
    schema: StructType = probe.toDF().schema
    detail = probe.detail().select("properties").first()
    props = (detail[0] if detail is not None else None) or {}
    builder = DeltaTable.create(spark).location(str(path)).addColumns(schema)
    for k, v in props.items():
        builder = builder.property(k, v)
    builder.execute()
    ident = F.col("id")
    df = spark.range(rows).select(
        *[_value(f.name, f.dataType, ident).alias(f.name) for f in schema.fields]
    )
    df.write.format("delta").mode("append").save(str(path))


def build_recipe(spark: SparkSession, path: Path, rows: int) -> None:
    """The hand-written recipe's table, same rows."""
    if (path / "_delta_log").exists():
        return
    create_recipe_table(spark, path)
    df = spark.range(rows).select(
        F.col("id").cast("int").alias("id"),
        F.concat(F.lit("first_name-"), F.col("id")).alias("first_name"),
        F.concat(F.lit("last_name-"), F.col("id")).alias("last_name"),
        F.concat(F.lit("email-"), F.col("id")).alias("email"),
        F.lit("00000000:00000000:0000").alias("_commit_lsn"),
        F.lit("00000000:00000000:0000").alias("_change_lsn"),
        F.lit(0).cast("bigint").alias("_serial"),
    )
    df.write.format("delta").mode("append").save(str(path))


def create_recipe_table(spark: SparkSession, path: Path) -> DeltaTable:
    return (
        DeltaTable.createIfNotExists(spark)
        .location(str(path))
        .addColumns(spark.createDataFrame([], RECIPE_SCHEMA).schema)
        .property(
            "delta.enableDeletionVectors", os.environ.get("CDCLAKE_DELETION_VECTORS", "false")
        )
        .execute()
    )


def copy_table(src: Path, dst: Path) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-r", str(src), str(dst)], check=True)


def remove(*paths: Path) -> None:
    for path in paths:
        if path.exists():
            shutil.rmtree(path)
