"""Delta tables without a JVM: delta-rs (the ``deltalake`` package), for the commands that only
read (``cdclake status``, ``quarantine list``, ``report``), and for the few rows of cdclake's own
bookkeeping and the few tombstones a batch appends on the driver (:func:`append`). Spark writes
every other table.

Locations are cdclake's (:mod:`cdclake.paths`): a plain path, a ``file:`` URI, or ``s3a://``,
which delta-rs spells ``s3://``. On S3 the settings are those of cdclake's Spark sessions
(:func:`cdclake._spark.s3a_options`): ``CDCLAKE_S3_ENDPOINT`` (path-style access, plain HTTP
when the URL says so), ``AWS_REGION``, and the credentials of ``AWS_ACCESS_KEY_ID`` /
``AWS_SECRET_ACCESS_KEY`` (``AWS_SESSION_TOKEN``), else delta-rs's own lookup (instance
profiles, ``~/.aws``).

Only cdclake's own tables (``_cdc_sources``, ``_cdc_quarantine``, ``_cdc_cuts``) are read
here. Of a target table only the log is read: its row count from the add actions' statistics
(:func:`row_count`) and its properties; never its data (tables with column mapping read as nulls
through ``to_pyarrow_table()``).

>>> storage_uri("s3a://bucket/lake/_cdc_sources")
's3://bucket/lake/_cdc_sources'
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from cdclake.paths import has_scheme, is_local, local_path, s3_endpoint, to_uri

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable
    from pyspark.sql import SparkSession
    from pyspark.sql.types import DataType, StructType


def storage_uri(location: str) -> str:
    """``location`` as delta-rs takes it: a local path, or the URI with ``s3a://`` as ``s3://``."""
    if is_local(location):
        return str(local_path(to_uri(location)).absolute())
    if location.startswith("s3a://"):
        return "s3://" + location.removeprefix("s3a://")
    return location


def storage_options(location: str) -> dict[str, str]:
    """What delta-rs needs to reach ``location``: nothing for a local path; for S3 the endpoint,
    region and credentials cdclake's Spark sessions use."""
    if not has_scheme(location) or not location.startswith(("s3a://", "s3://")):
        return {}
    s3 = s3_endpoint()
    options = {"AWS_REGION": s3.region}
    if s3.url is not None:
        options["AWS_ENDPOINT_URL"] = s3.url
        options["AWS_VIRTUAL_HOSTED_STYLE_REQUEST"] = "false"  # path-style, as fs.s3a is set
        options["AWS_ALLOW_HTTP"] = str(not s3.tls).lower()
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        if os.environ.get(key):
            options[key] = os.environ[key]
    return options


def open_table(location: str) -> DeltaTable | None:
    """The Delta table at ``location`` (its newest version), or None when there is none."""
    # delta-rs logs a warning for every credential source it tries and finds nothing in (IMDS
    # on a machine that is not in a cloud): errors reach a person as one line of cdclake's
    os.environ.setdefault("RUST_LOG", "error")
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        return DeltaTable(storage_uri(location), storage_options=storage_options(location))
    except TableNotFoundError:
        return None


def appends_here(spark: SparkSession, location: str) -> bool:
    """Whether :func:`append` writes at ``location`` for ``spark``'s batches: a local path of a
    classic session, whose Python driver shares the JVM driver's disk (a Spark Connect client
    does not). Elsewhere Spark appends, with the storage settings only its session has."""
    return getattr(spark, "_jvm", None) is not None and is_local(location)


def driver_files(spark: SparkSession, location: str) -> LiveFiles | None:
    """:func:`live_files` where the driver reads ``location`` for ``spark``'s batches
    (:func:`appends_here`), None elsewhere: then Spark reads the table, through Delta."""
    return live_files(location) if appends_here(spark, location) else None


def driver_table(spark: SparkSession, location: str) -> DeltaTable | None:
    """The Delta table at ``location`` opened by delta-rs where the driver reads the path
    (:func:`appends_here`); None elsewhere, when there is no table there, or when delta-rs cannot
    read its log (a protocol it lacks): then Spark reads it."""
    if not appends_here(spark, location):
        return None
    try:
        return open_table(location)
    except Exception:  # a protocol or a log delta-rs does not read: Spark's reader does
        return None


def newest_txn(table: DeltaTable, tag: str, user_key: str, reach: int) -> int | None:
    """The newest batch the idempotent write ``tag`` committed to ``table``: Delta's own
    ``txn`` of ``tag``, or a newer one named in the ``userMetadata`` of one of the ``reach``
    newest commits (``{user_key: tag, "version": n}``, as Spark's appends of an earlier cdclake
    named theirs without a ``txn`` action). None when neither says."""

    found = table.transaction_version(tag)
    for limit in (1, reach):  # a stream's own previous batch is the newest commit
        for info in table.history(limit):
            try:
                doc = json.loads(info.get("userMetadata") or "null")
            except ValueError:  # a user's own text
                continue
            if isinstance(doc, dict) and doc.get(user_key) == tag:
                return max(int(doc["version"]), -1 if found is None else found)
    return found


@dataclass(frozen=True)
class LiveFiles:
    """The data files of a table's newest version as its log lists them, and the schema and
    version they are read with (:func:`live_files`)."""

    version: int
    schema_json: str  # Delta's schema string: Spark's ``StructType.json()``
    paths: list[str]


def plain_schema(location: str) -> StructType | Literal[False] | None:
    """The Spark schema of the Delta table at ``location`` as delta-rs reads its log, None when
    there is no table there, False when its columns are not stored under their names (column
    mapping) or delta-rs cannot read the log: what :func:`append` may write to."""
    from pyspark.sql.types import StructType

    try:
        table = open_table(location)
        if table is None:
            return None
        if _column_mapped(table):
            return False
        return StructType.fromJson(json.loads(table.schema().to_json()))
    except Exception:  # a protocol or a log delta-rs does not read
        return False


def _column_mapped(table: DeltaTable) -> bool:
    """Whether the table's files store its columns under other names (column mapping)."""
    return table.metadata().configuration.get("delta.columnMapping.mode", "none") not in (
        "none",
        None,
    )


def live_files(location: str) -> LiveFiles | None:
    """The data files the newest version of the Delta table at ``location`` holds, listed from
    its log by delta-rs on the driver (a checkpoint and the commits after it: milliseconds); None
    when they cannot be read as plain Parquet files of the table's schema: no table there,
    deletion vectors, column mapping or partition columns, or a log delta-rs cannot read.

    For cdclake's own logs that a batch appends to and then reads (tombstones, history events):
    Spark's Delta reader rebuilds the state of every new version it reads, three Spark jobs and
    their planning (about 0.5 s a batch), where the files are a listing away."""
    try:
        table = open_table(location)
        if table is None:
            return None
        if table.metadata().partition_columns or _column_mapped(table):
            return None
        vectors = "deletionVectors" in (table.protocol().reader_features or [])
        if vectors and _arrow(table.deletion_vectors()).num_rows:  # rows a file does not hold
            return None
        return LiveFiles(table.version(), table.schema().to_json(), list(table.file_uris()))
    except Exception:  # a protocol or a log delta-rs does not read: Spark's reader does
        return None


CHECKPOINT_INTERVAL = "delta.checkpointInterval"
SPARK_CHECKPOINT_INTERVAL = "10"
"""Spark's own default: a table :func:`append` writes declares it (once, when it did not), for
delta-rs checkpoints every 100 commits by default, and every reader, Spark's too, would replay up
to 100 commits of a log that gains one a batch."""


def append(
    location: str,
    rows: list[dict[str, Any]],
    schema: StructType,
    user_metadata: str | None = None,
    txn: tuple[str, int] | None = None,
    table: DeltaTable | None = None,
) -> None:
    """Append ``rows`` (dicts of ``schema``'s Python values, as Spark's ``createDataFrame``
    takes them) to the Delta table at ``location`` (``table``, when it is open already) in one
    commit, creating it when it is not there; a column the table lacks is added.
    ``user_metadata`` is the commit's ``userMetadata``; ``txn`` (app id, version) its
    idempotent-write ``txn`` action, as Spark's ``txnAppId``/``txnVersion`` write it. No Spark
    job: for a few rows already on the driver."""
    import pyarrow as pa
    from deltalake import CommitProperties, Transaction, write_deltalake

    data = pa.Table.from_pylist([_utc(r) for r in rows], schema=arrow_schema(schema))
    if table is not None and CHECKPOINT_INTERVAL not in properties(table):
        table.alter.set_table_properties({CHECKPOINT_INTERVAL: SPARK_CHECKPOINT_INTERVAL})
    write_deltalake(
        table if table is not None else storage_uri(location),
        data,
        mode="append",
        schema_mode="merge",
        configuration={CHECKPOINT_INTERVAL: SPARK_CHECKPOINT_INTERVAL},  # a new table's
        commit_properties=CommitProperties(
            custom_metadata=None if user_metadata is None else {"userMetadata": user_metadata},
            app_transactions=[Transaction(*txn)] if txn else None,
        ),
    )


def _utc(value: Any) -> Any:
    """``value`` with every time in UTC: a time without a zone is local time, as PySpark reads
    it (``createDataFrame``, and what ``collect`` returns)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    if isinstance(value, dict):
        return {k: _utc(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_utc(v) for v in value]
    return value


def arrow_schema(schema: StructType) -> pa.Schema:
    """``schema`` as Arrow types, every field nullable (as Delta keeps a table's columns)."""
    import pyarrow as pa

    return pa.schema([pa.field(f.name, arrow_type(f.dataType)) for f in schema.fields])


def arrow_type(kind: DataType) -> pa.DataType:
    """The Arrow type delta-rs writes for a Spark type of cdclake's own tables."""
    import pyarrow as pa
    from pyspark.sql import types as T

    simple = {
        T.StringType: pa.string(),
        T.LongType: pa.int64(),
        T.IntegerType: pa.int32(),
        T.DoubleType: pa.float64(),
        T.BooleanType: pa.bool_(),
        T.TimestampType: pa.timestamp("us", tz="UTC"),
        T.ShortType: pa.int16(),
        T.ByteType: pa.int8(),
        T.FloatType: pa.float32(),
        T.DateType: pa.date32(),
        T.BinaryType: pa.binary(),
    }
    if type(kind) in simple:
        return simple[type(kind)]
    if isinstance(kind, T.DecimalType):
        return pa.decimal128(kind.precision, kind.scale)
    if isinstance(kind, T.ArrayType):
        return pa.list_(arrow_type(kind.elementType))
    if isinstance(kind, T.MapType):
        return pa.map_(arrow_type(kind.keyType), arrow_type(kind.valueType))
    if isinstance(kind, T.StructType):
        return pa.struct([pa.field(f.name, arrow_type(f.dataType)) for f in kind.fields])
    raise TypeError(f"no Arrow type for {kind.simpleString()}")


def read(location: str, columns: list[str]) -> pa.Table | None:
    """``columns`` of the Delta table at ``location`` (a small table of cdclake's own), or None
    when there is no table there. Read with delta-rs's own engine (``scan``): pyarrow's dataset
    reader would import pandas, a second or more of a command that should answer in one."""
    table = open_table(location)
    return None if table is None else _arrow(table.scan(columns=columns))


def read_struct(location: str, column: str, fields: list[str]) -> pa.Table | None:
    """``kind`` and the ``fields`` of the struct ``column`` (as top-level columns) of the Delta
    table at ``location``; None when there is no table there or it has no such column."""
    table = open_table(location)
    if table is None or column not in {f.name for f in table.schema().fields}:
        return None
    data = _arrow(table.scan(columns=["kind", column])).flatten()
    return data.select(["kind", *[f"{column}.{f}" for f in fields]]).rename_columns(
        ["kind", *fields]
    )


def _arrow(stream: object) -> pa.Table:
    """An Arrow C stream (delta-rs hands out arro3 objects) as a pyarrow table, string views as
    plain strings (what pyarrow's group-by takes)."""
    import pyarrow as pa

    table = pa.RecordBatchReader.from_stream(stream).read_all()
    fields = [f.with_type(pa.string()) if f.type == pa.string_view() else f for f in table.schema]
    return table.cast(pa.schema(fields))


def files_and_bytes(table: DeltaTable) -> tuple[int, int]:
    """The files of ``table``'s version and their bytes, from its log."""
    import pyarrow.compute as pc

    actions = _arrow(table.get_add_actions(flatten=True))
    size = pc.sum(actions.column("size_bytes")).as_py() if actions.num_rows else 0
    return actions.num_rows, int(size or 0)


def row_count(table: DeltaTable) -> int | None:
    """The rows ``table`` holds, from its log alone: the sum of its files' ``numRecords``
    statistics, less the rows their deletion vectors delete. None when a file was written
    without statistics (then only a scan could tell, and this does not scan)."""
    import pyarrow.compute as pc

    actions = _arrow(table.get_add_actions(flatten=True))
    if actions.num_rows == 0:
        return 0
    records = actions.column("num_records")
    if records.null_count:
        return None
    return int(pc.sum(records).as_py()) - deleted_rows(table)


def deleted_rows(table: DeltaTable) -> int:
    """Rows of live files that deletion vectors delete. delta-rs's add actions do not carry a
    vector's cardinality, so the vectors themselves are read (a few bytes per file, not data)."""
    if "deletionVectors" not in (table.protocol().reader_features or []):
        return 0
    import pyarrow.compute as pc

    vectors = _arrow(table.deletion_vectors())
    if vectors.num_rows == 0:
        return 0
    keep = pc.list_flatten(vectors.column("selection_vector"))  # False: deleted
    return int(pc.sum(pc.invert(keep)).as_py() or 0)


def properties(table: DeltaTable) -> dict[str, str]:
    """The table's properties (``TBLPROPERTIES``: ``delta.*``, ``cdclake.*``)."""
    return dict(table.metadata().configuration)


def count_rows(table: pa.Table, *columns: str) -> Counter[tuple[Any, ...]]:
    """Rows of ``table`` per distinct value of ``columns`` (nulls too), like a SQL ``GROUP BY``
    ``count(*)``.

    Plain Python, here and in the callers' filters: pyarrow's ``group_by`` runs on Acero, and
    its compute functions convert Python values to Arrow scalars, and both import pandas, which
    alone takes a second or more on a busy machine."""
    return Counter(zip(*(values(table, c) for c in columns), strict=True))


def values(table: pa.Table, column: str) -> list[Any]:
    """A column as Python values; a time with a zone as an aware ``datetime`` in UTC. (pyarrow
    makes those through pandas' time zones: a second's import on a busy machine.)"""
    import pyarrow as pa

    data = table.column(column)
    kind = data.type
    if not (pa.types.is_timestamp(kind) and kind.tz is not None):
        return list(data.to_pylist())
    naive = data.cast(pa.timestamp(kind.unit)).to_pylist()  # the same instants, as UTC
    return [None if v is None else v.replace(tzinfo=UTC) for v in naive]


def records(table: pa.Table) -> list[dict[str, Any]]:
    """The rows of a small table as dicts, times as :func:`values` gives them."""
    columns = {c: values(table, c) for c in table.column_names}
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]
