"""The contenders. Each returns a zero-argument callable that does the whole job once.

- floor-parse: ``spark.read.text`` + ``from_json`` with the exact schema, every leaf selected,
  into the ``noop`` sink: the least any JSON decoder on Spark can cost.
- floor-write: the same rows appended to a fresh Delta table (no MERGE).
- cdclake decode: :func:`cdclake.run.runner.read_changes` into ``noop`` (format given, or ``auto``).
- cdclake apply: ``apply_changes(read_changes(...), target)`` (the library's defaults); with
  ``scd_type=2`` the same into history tables (``stored_as_scd_type=2``).
- recipe: what a PySpark user writes from the usual snippets (Debezium only), done well:
  ``json.loads`` in a Python UDF returning a struct, latest change per key with a window,
  one ``DeltaTable.merge`` per batch with an LSN guard.
- recipe-typed: the same apply, the line parsed by ``from_json`` with the table's exact types
  (no Python): the strongest recipe for a table whose schema the engineer wrote down. Targets
  compare cdclake with the faster of the two recipes.
- many tables (one input carrying 100 tables): ``apply-many`` is cdclake's apply over it;
  ``recipe-many`` parses once, persists, and loops filter + window + MERGE per table.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from delta.tables import DeltaTable
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType

from bench import tables
from bench.data import WIRE_FORMATS, primary_keys

Job = Callable[[], object]


def _leaves(prefix: list[str], t: DataType, col: Column) -> list[Column]:
    """Every leaf field of a struct, as its own column (arrays and maps are leaves)."""
    if isinstance(t, StructType):
        out: list[Column] = []
        for f in t.fields:
            out += _leaves([*prefix, f.name], f.dataType, col[f.name])
        return out
    return [col.alias("_".join(prefix))]


def parsed(spark: SparkSession, path: Path, fmt: str) -> DataFrame:
    ddl = WIRE_FORMATS[fmt].exact_schema
    schema = spark.createDataFrame([], ddl).schema
    text = spark.read.text(str(path))
    v = F.from_json(F.col("value"), schema)
    return text.select(v.alias("v")).select(*_leaves([], schema, F.col("v")))


def floor_parse(spark: SparkSession, path: Path, fmt: str) -> Job:
    return lambda: parsed(spark, path, fmt).write.format("noop").mode("overwrite").save()


def floor_write(spark: SparkSession, path: Path, fmt: str, out: Path) -> Job:
    def run() -> None:
        parsed(spark, path, fmt).write.format("delta").mode("append").save(str(out))

    return run


def decode(spark: SparkSession, path: Path, fmt: str, wire: str) -> Job:
    """``fmt`` is the format cdclake is told (``auto`` or ``wire``, the one written)."""
    from cdclake.run.runner import read_changes

    def run() -> None:
        changes = read_changes(spark, [path], fmt, keys=primary_keys(wire))
        changes.write.format("noop").mode("overwrite").save()

    return run


def apply(spark: SparkSession, path: Path, fmt: str, target: Path, scd_type: int = 1) -> Job:
    """``scd_type`` 2: the same input into history tables (every version of every row)."""
    from cdclake.apply.batch import apply_changes
    from cdclake.run.runner import read_changes

    def run() -> object:
        changes = read_changes(spark, [path], fmt, keys=primary_keys(fmt))
        return apply_changes(changes, str(target), stored_as_scd_type=scd_type)

    return run


def kafka_rows(spark: SparkSession, path: Path) -> DataFrame:
    """The records of ``path`` as Spark's Kafka source delivers them to a stream's batch
    (binary key and value, headers, one partition), written once as Parquet beside it: what
    :func:`stream_batch` reads, so that its batch decodes records as a stream's does (a file's
    record lines are another input, which a stream never reads)."""
    from cdclake import sources

    out = path.with_name(path.name + ".kafka.parquet")
    if not (out / "_SUCCESS").exists():
        raw = sources.read_files(spark, [str(path)])
        # a record line's key and headers are in its text (read_files leaves them there)
        key = F.coalesce(sources.record_field(F.col("raw"), "key"), F.col("key"))
        own = F.coalesce(sources.record_field(F.col("raw"), "headers"), F.col("headers"))
        headers = F.transform(
            F.map_entries(F.coalesce(own, F.create_map().cast("map<string,string>"))),
            lambda e: F.struct(e["key"].alias("key"), e["value"].cast("binary").alias("value")),
        )
        raw.select(
            key.cast("binary").alias("key"),
            F.col("value").cast("binary").alias("value"),
            F.lit("bench").alias("topic"),
            F.lit(0).alias("partition"),
            F.col("lineage")["offset"].alias("offset"),
            F.current_timestamp().alias("timestamp"),
            F.lit(0).alias("timestampType"),
            headers.alias("headers"),
        ).write.mode("overwrite").parquet(str(out))
    return spark.read.parquet(str(out))


def _runner_batch(
    spark: SparkSession, rows: DataFrame, fmt: str, target: Path, known: object
) -> object:
    """Kafka source ``rows`` (:func:`kafka_rows`) applied as one micro-batch of a stream whose
    plans ``known`` holds (a :class:`cdclake.decode.KnownGroups`): the runner's path, its
    message count observed as a stream's is; returns its ``BatchResult``."""
    from pyspark.sql import Observation

    from cdclake import sources
    from cdclake.config import ApplyConfig
    from cdclake.run.runner import apply_raw

    config = ApplyConfig(
        format=fmt, inputs=("kafka",), target=str(target), keys=primary_keys(fmt) or {}
    )
    counted = Observation()
    raw = sources.from_kafka_df(rows.observe(counted, F.count(F.lit(1)).alias("n")))
    return apply_raw(raw, config, messages=lambda: counted.get["n"], known=known)  # type: ignore[arg-type]


def stream_batch(spark: SparkSession, path: Path, fmt: str, target: Path, known: object) -> Job:
    """A stream's next batch (the records of ``path`` as the Kafka source gives them), typed in
    one pass with the plans of the stream's first batch."""
    rows = kafka_rows(spark, path)

    def run() -> object:
        result = _runner_batch(spark, rows, fmt, target, known)
        if not result.one_pass:  # type: ignore[attr-defined]
            raise RuntimeError("the stream's batch was not typed in one pass")
        return result

    return run


def learn_plans(spark: SparkSession, path: Path, fmt: str, lake: Path, lines: int = 1000) -> object:
    """The plans a stream's first batch (the first ``lines`` records of ``path``, applied to a
    lake of its own, in two passes) makes: a :class:`cdclake.decode.KnownGroups`."""
    from cdclake.decode import KnownGroups

    first = kafka_rows(spark, path).orderBy("offset").limit(lines)
    known = KnownGroups()
    _runner_batch(spark, first, fmt, lake, known)
    return known


# ---- the recipe ----------------------------------------------------------------------------

RECIPE_EVENT = (
    "op STRING, id INT, first_name STRING, last_name STRING, email STRING, "
    "_commit_lsn STRING, _change_lsn STRING, _serial BIGINT"
)


def _fields(p: dict[str, Any]) -> tuple[object, ...]:
    """The recipe's columns from a Debezium payload."""
    row = p["after"] if p["after"] is not None else p["before"]
    src = p["source"]
    return (
        p["op"],
        row["id"],
        row["first_name"],
        row["last_name"],
        row["email"],
        src["commit_lsn"],
        src["change_lsn"],
        int(src["event_serial_no"] or 0),
    )


def parse_debezium_line(line: str) -> tuple[object, ...] | None:
    """The recipe's parse of a line of the bench's files (``{"key": ..., "value": ...}``)."""
    return _fields(json.loads(line)["value"]["payload"])


def parse_debezium_value(value: str) -> tuple[object, ...] | None:
    """The same parse of a Kafka record value (the recipe in ``foreachBatch``)."""
    return _fields(json.loads(value)["payload"])


def _parse_debezium_routed(line: str) -> tuple[object, ...] | None:
    """The same parse, with the source table the event belongs to in front."""
    p = json.loads(line)["value"]["payload"]
    return (p["source"]["table"], *_fields(p))


def merge_latest(spark: SparkSession, events: DataFrame, target: Path) -> None:
    """The recipe's apply: the latest change per key (window), one guarded MERGE into
    ``target`` (created when missing). SQL Server LSNs are fixed-width hex, so comparing them
    as strings orders them correctly here (it would not for MySQL binlog positions)."""
    cols = ["id", "first_name", "last_name", "email", "_commit_lsn", "_change_lsn", "_serial"]
    newer = "(s._commit_lsn, s._change_lsn, s._serial) > (t._commit_lsn, t._change_lsn, t._serial)"
    w = Window.partitionBy("id").orderBy(
        F.col("_commit_lsn").desc(), F.col("_change_lsn").desc(), F.col("_serial").desc()
    )
    latest = events.withColumn("_rn", F.row_number().over(w)).filter("_rn = 1").drop("_rn")
    table = tables.create_recipe_table(spark, target)
    (
        table.alias("t")
        .merge(latest.alias("s"), "t.id = s.id")
        .whenMatchedDelete(condition=f"s.op = 'd' AND {newer}")
        .whenMatchedUpdate(condition=f"s.op != 'd' AND {newer}", set={c: f"s.{c}" for c in cols})
        .whenNotMatchedInsert(condition="s.op != 'd'", values={c: f"s.{c}" for c in cols})
        .execute()
    )


def recipe(spark: SparkSession, path: Path, target: Path, use_arrow: bool = True) -> Job:
    """The hand-written pipeline: parse in a Python UDF, :func:`merge_latest`."""
    parse = F.udf(parse_debezium_line, RECIPE_EVENT, useArrow=use_arrow)

    def run() -> None:
        events = spark.read.text(str(path)).select(parse("value").alias("e")).select("e.*")
        merge_latest(spark, events, target)

    return run


_TYPED_PAYLOAD = (
    "STRUCT<before: {row}, after: {row}, op: STRING, "
    "source: STRUCT<commit_lsn: STRING, change_lsn: STRING, event_serial_no: BIGINT>>"
).format(row="STRUCT<id: INT, first_name: STRING, last_name: STRING, email: STRING>")
RECIPE_TYPED_VALUE = f"payload {_TYPED_PAYLOAD}"
"""What the typed recipe reads of a Kafka value: the payload alone, typed as the table is
(Spark's JSON reader skips the ``schema`` section without materializing it)."""
RECIPE_TYPED_LINE = f"value STRUCT<payload: {_TYPED_PAYLOAD}>"
"""The same of a file's line ``{"key": ..., "value": ...}`` (the key skipped too)."""


def typed_events(value: Column, line: bool) -> Column:
    """The payload of a Debezium value (``line``: of a file's line ``{"key":..,"value":..}``)
    parsed by ``from_json`` with the table's exact types: a struct of the recipe's columns."""
    parsed = F.from_json(value, RECIPE_TYPED_LINE if line else RECIPE_TYPED_VALUE)
    p = parsed["value"]["payload"] if line else parsed["payload"]
    row = F.coalesce(p["after"], p["before"])
    return F.struct(
        p["op"].alias("op"),
        *[row[c].alias(c) for c in ("id", "first_name", "last_name", "email")],
        p["source"]["commit_lsn"].alias("_commit_lsn"),
        p["source"]["change_lsn"].alias("_change_lsn"),
        F.coalesce(p["source"]["event_serial_no"], F.lit(0)).alias("_serial"),
    )


def recipe_typed(spark: SparkSession, path: Path, target: Path) -> Job:
    """The recipe as a Spark engineer who knows the table's schema writes it: the line parsed
    by ``from_json`` with the exact types (no Python), the same columns as the UDF's, then
    :func:`merge_latest`."""

    def run() -> None:
        lines = spark.read.text(str(path))
        events = lines.select(typed_events(F.col("value"), line=True).alias("e")).select("e.*")
        merge_latest(spark, events, target)

    return run


def recipe_many(spark: SparkSession, path: Path, lake: Path, use_arrow: bool = True) -> Job:
    """The recipe for one input carrying many tables, as users write it: parse once (the same
    UDF, plus the source table), persist the parsed rows, then loop over the distinct tables:
    filter, :func:`merge_latest` into ``lake/<table>``; unpersist at the end."""
    parse = F.udf(_parse_debezium_routed, "_table STRING, " + RECIPE_EVENT, useArrow=use_arrow)

    def run() -> None:
        events = (
            spark.read.text(str(path))
            .select(parse("value").alias("e"))
            .select("e.*")
            .persist(StorageLevel.MEMORY_AND_DISK)
        )
        try:
            names = sorted(r[0] for r in events.select("_table").distinct().collect())
            for name in names:
                mine = events.filter(F.col("_table") == name).drop("_table")
                merge_latest(spark, mine, lake / name)
        finally:
            events.unpersist()

    return run


def rows_of(spark: SparkSession, path: Path) -> int:
    return DeltaTable.forPath(spark, str(path)).toDF().count() if path.exists() else 0
