"""Where tables live under the target folder (:mod:`cdclake.target_layout`), and how their
schemas evolve.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql.types import DataType, StructField, StructType

from cdclake.jvm import jclass
from cdclake.model import (
    LINEAGE_COL,
    OP_COL,
    POSITION_COL,
    SOURCE_TS_COL,
    is_source_column,
)
from cdclake.names import (
    COLUMN_MAPPING,
    keys_from_text,
    mapping_properties,
    needs_column_mapping,
)
from cdclake.names import column as column  # re-exported: T.quote, T.column
from cdclake.names import quote as quote
from cdclake.paths import exists, join, read_text

# the layout's names, re-exported (T.QUARANTINE, T.escape_identifier, ...)
from cdclake.target_layout import BACKFILL_PROPERTY as BACKFILL_PROPERTY
from cdclake.target_layout import BATCHES as BATCHES
from cdclake.target_layout import DDL_TABLE as DDL_TABLE
from cdclake.target_layout import HISTORY_LOG as HISTORY_LOG
from cdclake.target_layout import KEY_PROPERTY as KEY_PROPERTY
from cdclake.target_layout import ORDERING_PROPERTY as ORDERING_PROPERTY
from cdclake.target_layout import QUARANTINE as QUARANTINE
from cdclake.target_layout import REPLAYS as REPLAYS
from cdclake.target_layout import SAFE as SAFE
from cdclake.target_layout import SCD_TYPE_PROPERTY as SCD_TYPE_PROPERTY
from cdclake.target_layout import SOURCES as SOURCES
from cdclake.target_layout import SYSTEM_TABLES as SYSTEM_TABLES
from cdclake.target_layout import TOMBSTONES as TOMBSTONES
from cdclake.target_layout import TRUNCATE_PROPERTY as TRUNCATE_PROPERTY
from cdclake.target_layout import TargetPaths as TargetPaths
from cdclake.target_layout import escape_identifier as escape_identifier


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
class Target(TargetPaths):
    """The target folder: paths of every table cdclake writes there, and what Spark reads of
    them."""

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
        return keys_from_text(keys) if keys else None


def data_columns(schema: StructType) -> list[StructField]:
    return [f for f in schema.fields if is_source_column(f.name)]


def data_column_names(schema: StructType) -> list[str]:
    return [f.name for f in data_columns(schema)]


def enable_column_mapping(spark: SparkSession, path: str) -> None:
    """Turn on column mapping by name for the table at ``path``, unless it is on (a protocol
    upgrade: it cannot be undone)."""
    if cached_properties(spark, path).get("delta.columnMapping.mode", "none") == "none":
        set_properties(spark, path, COLUMN_MAPPING)


@dataclass(frozen=True)
class Synced:
    """What :func:`sync_table` found and did."""

    table: DeltaTable
    created: bool
    added: tuple[str, ...]  # columns added to an existing table


@dataclass(frozen=True)
class Creation:
    """A table to create with its first rows (:func:`create_with_rows`)."""

    schema: StructType
    properties: dict[str, str]


def ensure_table(
    spark: SparkSession,
    path: str,
    schema: StructType,
    properties: dict[str, str] | None = None,
) -> DeltaTable:
    """Create the Delta table at ``path`` if missing; add columns it lacks (earlier rows null)."""
    return sync_table(spark, path, schema, properties).table


def sync_table(
    spark: SparkSession,
    path: str,
    schema: StructType,
    properties: dict[str, str] | None = None,
    defaults: dict[str, Any] | None = None,
) -> Synced:
    """Create the Delta table at ``path`` if missing; add columns it lacks.

    Columns are only ever added: a column missing from ``schema`` stays in the table. Rows that
    were already there get an added column's source default (``defaults``: column -> the typed
    value as JSON, see :data:`cdclake.model.DEFAULTS_KEY`), as the database fills them when the
    column is added; columns without a default are null there.
    """
    if not DeltaTable.isDeltaTable(spark, path):
        props = {**mapping_properties(schema), **(properties or {})}
        builder = DeltaTable.createIfNotExists(spark).location(path).addColumns(schema)
        for k, v in props.items():
            builder = builder.property(k, v)
        table = builder.execute()
        _PROPS[path] = props
        return Synced(table, True, ())
    table = DeltaTable.forPath(spark, path)
    existing = {f.name.lower() for f in table.toDF().schema.fields}
    new = [f for f in schema.fields if f.name.lower() not in existing]
    known = defaults or {}
    backfill = {f.name: known[f.name] for f in new if f.name in known}
    if new:
        if backfill:
            # remembered before the column exists, so that a crash between adding the column and
            # filling it is finished by the next run (which sees the column as already there)
            set_properties(spark, path, {BACKFILL_PROPERTY: json.dumps(backfill)})
        if any("timestamp_ntz" in f.dataType.simpleString() for f in new):
            # a created table gets the feature from its schema; an added column needs it enabled
            set_properties(spark, path, {"delta.feature.timestampNtz": "supported"})
        if needs_column_mapping(StructType(new)):
            enable_column_mapping(spark, path)
        cols = ", ".join(f"{quote(f.name)} {f.dataType.simpleString()}" for f in new)
        spark.sql(f"ALTER TABLE delta.{quote(path)} ADD COLUMNS ({cols})")
        table = DeltaTable.forPath(spark, path)
    finish_backfill(spark, path, table)
    return Synced(table, False, tuple(f.name for f in new))


def rows_in(spark: SparkSession, path: str) -> int | None:
    """The rows the Delta table at ``path`` holds now; None when there is no table there (a
    DROP TABLE of the run removed it).

    From the newest snapshot's checksum when it lists every file with its statistics (Delta
    does for small tables: ``spark.databricks.delta.allFilesInCrc.*``): no Spark job, ~10 ms on
    the driver where a count took 0.3-0.7 s after a batch's MERGE (a query to plan, the new
    version's state rebuilt). Otherwise a count, which Delta answers from the same statistics
    where it can."""
    from_stats = _rows_from_checksum(spark, path)
    if from_stats is not None:
        return from_stats
    if not DeltaTable.isDeltaTable(spark, path):
        return None
    return spark.read.format("delta").load(path).count()


def _rows_from_checksum(spark: SparkSession, path: str) -> int | None:
    """The live rows (``numLogicalRecords``: deletion vectors taken off) summed over the files
    the table's newest checksum lists; None when it lists none, a file lacks the statistic, or
    the session has no JVM (Spark Connect)."""
    jvm: Any = getattr(spark, "_jvm", None)
    if jvm is None:
        return None
    try:
        snapshot = _newest_snapshot(jvm, spark, path)
        checksum = snapshot.checksumOpt()
        if snapshot.version() < 0 or not checksum.isDefined():
            return None
        files = checksum.get().allFiles()
        if not files.isDefined():
            return None
        total, it = 0, files.get().iterator()
        while it.hasNext():
            rows = it.next().numLogicalRecords()
            if not rows.isDefined():
                return None
            total += int(rows.get())
        return total
    except Exception:  # Delta's internals moved, or the log cannot be read: the count says
        return None


ROWS_PER_FILE = 50_000
"""About how many rows cdclake puts in one file of a write it sizes (:func:`write_partitions`)."""


def write_partitions(spark: SparkSession, rows: int) -> int:
    """How many partitions, so files, a write of at most ``rows`` rows gets: one per
    :data:`ROWS_PER_FILE`, at least one, at most ``spark.sql.shuffle.partitions``.

    What cdclake writes comes out of a shuffle by key (the latest change per key, the versions
    of a key), and the writes kept that shuffle's partitions: with Spark's default of 200, a
    batch of 30 rows wrote 26 files (``tests/apply/test_write_files.py``), and a stream added
    that many small files to every table at every trigger.
    """
    wanted = max(1, -(-rows // ROWS_PER_FILE))
    configured = str(spark.conf.get("spark.sql.shuffle.partitions", "200"))
    # Databricks accepts "auto" here: then the rows alone decide
    return min(int(configured), wanted) if configured.isdigit() else wanted


def create_with_rows(
    df: DataFrame, path: str, schema: StructType, properties: dict[str, str] | None = None
) -> None:
    """Create the Delta table at ``path`` holding ``df``'s rows, in one commit (create table as
    select): schema, properties and rows together, where a create and an append take two.

    ``df`` has a column of every name in ``schema``; each is cast to its type there, so the
    table's schema is exactly ``schema`` (every column nullable, as :func:`sync_table` makes it).
    """
    from pyspark.sql import functions as F

    rows = df.select(*[F.col(quote(f.name)).cast(f.dataType).alias(f.name) for f in schema])
    writer = rows.writeTo(f"delta.{quote(path)}").using("delta")
    props = {**mapping_properties(schema), **(properties or {})}
    for k, v in props.items():
        writer = writer.tableProperty(k, v)
    writer.create()
    _PROPS[path] = props


def created_rows(spark: SparkSession, path: str) -> int | None:
    """The rows the write that created the table at ``path`` wrote (version 0's commit).

    Delta records them in the commit's ``commitInfo.operationMetrics.numOutputRows``; reading
    the one small commit file on the driver costs no Spark job, where counting the rows again
    costs two. None when the commit does not say (metrics turned off with
    ``spark.databricks.delta.history.metricsEnabled=false``, or another writer).
    """
    n = operation_metrics(commit_info(spark, path, 0)).get("numOutputRows")
    return int(n) if n is not None else None


LAST_COMMIT_CONF = "spark.databricks.delta.lastCommitVersionInSession"


def merge_source_rows(spark: SparkSession, path: str, counts: tuple[int, int, int]) -> int | None:
    """The source rows of the MERGE into ``path`` this session has just committed, whose result
    was ``counts`` (inserted, updated, deleted), from the commit's ``operationMetrics``; None
    when it cannot be told without a Spark job.

    Delta sets ``spark.databricks.delta.lastCommitVersionInSession`` at every commit of the
    session. A MERGE that changes nothing may commit nothing, so the version is trusted only
    for a MERGE that changed rows, and only when that commit is a MERGE with the same counts.
    """
    if not any(counts):
        return None
    version = spark.conf.get(LAST_COMMIT_CONF, None)
    if not version:
        return None
    info = commit_info(spark, path, int(version))
    metrics = operation_metrics(info)
    names = ("numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted")
    if (
        info is None
        or info.get("operation") != "MERGE"
        or "numSourceRows" not in metrics
        or tuple(int(metrics.get(n, -1)) for n in names) != counts
    ):
        return None
    return int(metrics["numSourceRows"])


def commit_info(spark: SparkSession, path: str, version: int) -> dict[str, Any] | None:
    """The ``commitInfo`` of one commit of the table at ``path``, read on the driver."""
    return _commit_info_of(read_text(spark, join(path, "_delta_log", f"{version:020d}.json")))


def _commit_info_of(text: str | None) -> dict[str, Any] | None:
    for line in (text or "").splitlines():
        info = json.loads(line).get("commitInfo") if "commitInfo" in line else None
        if info is not None:
            return dict(info)
    return None


TXN_KEY = "cdclake_txn"
"""The key of a commit's ``userMetadata`` (a JSON object) that names the idempotent write that
made it: ``{"cdclake_txn": "<app id>/<step>", "version": <batch id>}``."""
TXN_REACH = 1000
"""How many of a table's newest commits :func:`last_txn_version` reads, at most, for its write."""


def txn_metadata(tag: str | None, version: int | None, **more: Any) -> str:
    return json.dumps({TXN_KEY: tag, "version": version, **more}, separators=(",", ":"))


def newest_version(spark: SparkSession, path: str) -> int:
    """The newest Delta version of the table at ``path`` (-1 when there is none), from Delta's
    own log listing: no snapshot state, no Spark job (a Spark Connect session: its history)."""
    if not exists(spark, join(path, "_delta_log")):
        return -1
    jvm: Any = getattr(spark, "_jvm", None)
    if jvm is None:
        first = DeltaTable.forPath(spark, path).history(1).select("version").first()
        return -1 if first is None else int(first[0])
    return int(_newest_snapshot(jvm, spark, path).version())


def pinned(spark: SparkSession, path: str) -> DataFrame:
    """The Delta table at ``path`` as of its newest version, read by that version's number.

    For a batch that caches frames reading a table and then writes that table (the SCD2 history
    log, a keyless table and its tombstones). After a save or a MERGE, Spark and Delta re-plan
    every cached query that reads the written table (``recacheByPlan``). A scan of Delta's
    "latest" is that table: its cache was cleared, and planning it again rebuilt the table's new
    state (six Spark jobs in an SCD2 batch) for frames released a moment later. A scan of a
    version by number is not the table the write names, so the cache is left alone, and the
    batch goes on reading the table as it was when the batch began."""
    version = newest_version(spark, path)
    return spark.read.format("delta").option("versionAsOf", version).load(path)


def log_rows(spark: SparkSession, path: str) -> DataFrame:
    """The rows of the newest version of cdclake's own log at ``path`` (tombstones, history
    events), read straight from the Parquet files its Delta log lists (delta-rs, on the driver:
    :func:`cdclake.delta_rs.live_files`); else, as :func:`pinned` reads it, through Delta.

    A batch appends to these logs and reads them back; Spark's Delta reader rebuilds the state
    of each new version it scans, three Spark jobs and their planning, about 0.5 s of a small
    batch that the listing saves. Like :func:`pinned`, the frame reads the files of the version
    it was made at: the batch's own appends neither re-plan it nor change what it reads. On
    object storage or a Spark Connect session (where the driver may not reach the files as
    Spark does), and for a log whose files are not plain Parquet of its schema (deletion vectors,
    column mapping), Delta reads it."""
    from cdclake import delta_rs

    files = delta_rs.driver_files(spark, path)
    if files is None:
        return pinned(spark, path)
    schema = StructType.fromJson(json.loads(files.schema_json))
    if not files.paths:
        return spark.createDataFrame([], schema)
    return spark.read.schema(schema).parquet(*files.paths)


def _newest_snapshot(jvm: Any, spark: SparkSession, path: str) -> Any:
    """Delta's snapshot of the newest version of the table at ``path`` (a JVM object), from its
    own log listing; its state is not computed until asked for."""
    empty = jclass(jvm, "scala.Option").empty()
    log = jclass(jvm, "org.apache.spark.sql.delta.DeltaLog").forTable(spark._jsparkSession, path)
    return log.update(False, empty, empty)


def last_txn_version(
    spark: SparkSession, path: str, tag: str, reach: int = TXN_REACH
) -> int | None:
    """The batch id of the newest commit of the table at ``path`` made by the idempotent write
    ``tag`` (see :data:`TXN_KEY`); -1 when there is no table there; None when no commit of it
    is among the ``reach`` newest (or they cannot be read: a Spark Connect session, a log
    cleaned up past them), so that the table's log cannot say.

    The newest version comes from Delta's own log listing (no snapshot state), then the commit
    files are read newest first on the driver: one small file when the table's last write is
    this one's previous batch, as it is for cdclake's own logs in a stream. The newest tagged
    commit is the write's newest batch: a stream writes its batches in order.
    """
    found = newest_metadata(spark, path, lambda doc: doc.get(TXN_KEY) == tag, reach)
    return found if isinstance(found, int) else None if found is None else int(found["version"])


def newest_metadata(
    spark: SparkSession, path: str, wanted: Callable[[dict[str, Any]], bool], reach: int
) -> dict[str, Any] | int | None:
    """The ``userMetadata`` document of the newest of the table's ``reach`` newest commits
    that cdclake wrote (it names :data:`TXN_KEY`) and that ``wanted`` accepts; -1 when there is
    no table at ``path``; None when no such commit is there or the log cannot be read (a Spark
    Connect session, commits cleaned up). Commit files are read newest first on the driver."""
    jvm: Any = getattr(spark, "_jvm", None)
    if jvm is None:
        return None
    newest = newest_version(spark, path)
    if newest < 0:
        return -1
    for version in range(newest, max(newest - reach, -1), -1):
        text = read_text(spark, join(path, "_delta_log", f"{version:020d}.json"))
        if text is None:  # cleaned up (older than the log's retention)
            return None
        meta = (_commit_info_of(text) or {}).get("userMetadata")
        if meta and TXN_KEY in meta:
            try:
                doc = json.loads(meta)
            except ValueError:  # a user's own text that names the key
                continue
            if isinstance(doc, dict) and wanted(doc):
                return doc
    return None


def operation_metrics(info: dict[str, Any] | None) -> dict[str, Any]:
    return dict((info or {}).get("operationMetrics") or {})


def typed_default(name: str, data_type: DataType, value: Any) -> Column:
    """A column default as a typed Column (``value``: the typed value as ``to_json`` wrote it)."""
    from pyspark.sql import functions as F

    from cdclake.model import DEFAULTS_JSON_OPTIONS

    struct = StructType([StructField(name, data_type)])
    text = json.dumps({name: value})
    return F.from_json(F.lit(text), struct, DEFAULTS_JSON_OPTIONS)[name]


def finish_backfill(spark: SparkSession, path: str, table: DeltaTable) -> None:
    """Fill added columns of earlier rows with their defaults, if a backfill is pending."""
    pending = cached_properties(spark, path).get(BACKFILL_PROPERTY)
    if not pending:
        return
    from pyspark.sql import functions as F

    schema = table.toDF().schema
    values = {c: v for c, v in json.loads(pending).items() if c in schema.fieldNames()}
    if values:
        table.update(
            condition=" OR ".join(f"{quote(c)} IS NULL" for c in values),
            set={
                quote(c): F.coalesce(F.col(quote(c)), typed_default(c, schema[c].dataType, v))
                for c, v in values.items()
            },
        )
    spark.sql(
        f"ALTER TABLE delta.{quote(path)} UNSET TBLPROPERTIES IF EXISTS ('{BACKFILL_PROPERTY}')"
    )
    _PROPS.get(path, {}).pop(BACKFILL_PROPERTY, None)


def table_properties(spark: SparkSession, path: str) -> dict[str, str]:
    """The properties of the Delta table at ``path``: from its log on the driver (delta-rs,
    milliseconds) where the driver reads the path, else from ``DESCRIBE DETAIL`` (a Spark job)."""
    from cdclake import delta_rs

    table = delta_rs.driver_table(spark, path)
    if table is not None:
        return delta_rs.properties(table)
    detail = DeltaTable.forPath(spark, path).detail().select("properties").first()
    return dict(detail["properties"]) if detail and detail["properties"] else {}


def holds_no_files(spark: SparkSession, path: str) -> bool:
    """Whether the newest version of the Delta table at ``path`` has no data file (its log,
    listed on the driver by delta-rs); False where the driver does not read the path."""
    from cdclake import delta_rs

    listing = delta_rs.driver_files(spark, path)
    return listing is not None and not listing.paths


def current_properties(spark: SparkSession, path: str) -> dict[str, str]:
    """The table's properties as they are now (a user may have set some: the Change Data
    Feed), none when there is no table."""
    return table_properties(spark, path) if DeltaTable.isDeltaTable(spark, path) else {}


def set_properties(spark: SparkSession, path: str, props: dict[str, str]) -> None:
    pairs = ", ".join(f"'{k}' = '{sql_string(v)}'" for k, v in props.items())
    spark.sql(f"ALTER TABLE delta.{quote(path)} SET TBLPROPERTIES ({pairs})")
    if path in _PROPS:
        _PROPS[path].update(props)


def sql_string(text: str) -> str:
    """The body of a single-quoted Spark SQL string literal."""
    return text.replace("\\", "\\\\").replace("'", "\\'")


_PROPS: dict[str, dict[str, str]] = {}


def cached_properties(spark: SparkSession, path: str) -> dict[str, str]:
    """The table's properties, read once per process (cdclake is the table's only writer, and
    it keeps this cache current with what it sets)."""
    if path not in _PROPS:
        _PROPS[path] = table_properties(spark, path) if DeltaTable.isDeltaTable(spark, path) else {}
    return _PROPS[path]


def forget(*paths: str) -> None:
    """Drop cached properties of tables whose folder was deleted or moved."""
    for path in paths:
        _PROPS.pop(path, None)


def truncate_position(spark: SparkSession, path: str) -> list[int] | None:
    """The newest truncate applied to the table."""
    return position_from_text(cached_properties(spark, path).get(TRUNCATE_PROPERTY))


def set_truncate_position(spark: SparkSession, path: str, position: list[int]) -> None:
    set_properties(spark, path, {TRUNCATE_PROPERTY: position_to_text(position)})


def position_to_text(position: list[int]) -> str:
    return json.dumps(position, separators=(",", ":"))


def position_from_text(text: str | None) -> list[int] | None:
    return None if not text else [int(x) for x in json.loads(text)]
