"""The producer side: canonical changes -> messages of a format, written to files or Kafka.

Sources of changes: any decoded stream (:func:`cdclake.decode.decode`, for ``convert``) or a
Delta table's Change Data Feed (:func:`changes_from_cdf`, for ``publish``). Format-blind: each
format's encoder (:meth:`cdclake.formats.base.Format.encode`) does the writing of fields.

Example::

    >>> changes = changes_from_cdf(spark.read.format("delta").option("readChangeFeed", "true")
    ...     .option("startingVersion", 0).load(path), "shop.items", ("id",))  # doctest: +SKIP
    >>> messages = encode(changes, "debezium")  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Row, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructField, StructType

from cdclake import formats, paths
from cdclake.errors import ConfigError, DecodeError
from cdclake.formats.base import DecodeOptions
from cdclake.formats.encode import MESSAGE_SCHEMA, EncodeOptions
from cdclake.formats.values import lookup
from cdclake.model import CHANGE_SCHEMA, META_PREFIX, KeySource, Op
from cdclake.names import column

CDF_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")
_CHANGE_RANK = {"delete": 0, "update_preimage": 1, "update_postimage": 1, "insert": 2}
TOPIC_FIELDS = ("db", "schema", "table", "source")


def encode(changes: DataFrame, format_name: str, options: EncodeOptions | None = None) -> DataFrame:
    """Canonical changes -> messages (:data:`cdclake.formats.encode.MESSAGE_SCHEMA`)."""
    if format_name == formats.AUTO:
        raise ConfigError(
            "--to auto: name the format to write (" + ", ".join(formats.names()) + ")"
        )
    fmt = formats.get(format_name)
    out = fmt.encode(changes, options or EncodeOptions())
    return out.select(*[F.col(f.name).cast(f.dataType) for f in MESSAGE_SCHEMA.fields])


def record_line(messages: DataFrame) -> Column:
    """A message as a JSON-lines record object ``{"key": …, "value": …}`` (what
    :func:`cdclake.sources.read_files` reads back), or the bare value when it has no key."""
    key, value = F.col("key"), F.col("value")
    record = F.concat(
        F.lit('{"key":'), key, F.lit(',"value":'), F.coalesce(value, F.lit("null")), F.lit("}")
    )
    return F.when(key.isNull() & value.isNotNull(), value).otherwise(record)


def topic_for(template: str) -> Column:
    """The output topic of a message: ``template`` with ``{db}``, ``{schema}``, ``{table}``
    and ``{source}`` (the whole identifier) replaced from the message's source table.

    >>> topic_for("cdc.{db}.{table}")  # doctest: +SKIP
    """
    parts = F.split(F.col("table"), r"\.")
    three = F.size(parts) >= 3
    values = {
        "db": F.get(parts, 0),
        "schema": F.coalesce(F.when(three, F.get(parts, 1)), F.lit("")),
        "table": F.element_at(parts, -1),
        "source": F.col("table"),
    }
    out: Column = F.lit(template)
    for name, value in values.items():
        out = F.replace(out, F.lit("{" + name + "}"), F.coalesce(value, F.lit("")))
    unknown = [n for n in _placeholders(template) if n not in TOPIC_FIELDS]
    if unknown:
        raise ConfigError(
            f"--to-topic {template!r}: unknown field {{{unknown[0]}}}; "
            f"expected {', '.join('{' + f + '}' for f in TOPIC_FIELDS)}"
        )
    return out


def _placeholders(template: str) -> list[str]:
    import re

    return re.findall(r"\{([^}]*)\}", template)


def changes_from_cdf(
    cdf: DataFrame, table: str, keys: Sequence[str] = (), source_ts: bool = True
) -> DataFrame:
    """A Delta Change Data Feed -> canonical changes of source table ``table``.

    ``insert`` -> insert, ``delete`` -> delete; with ``keys``, an ``update_preimage`` and the
    ``update_postimage`` of the same key in one commit -> one update with both images (without
    keys: a delete and an insert). The position is ``[commit version, row order]``; the row order
    inside a commit puts deletes and pre-images first, then updates, then inserts, each by key
    (then by the whole row), so it is the same on every read. ``source_ts`` is the commit time.
    Columns starting with ``_cdc_`` (cdclake's own) are left out of the images.
    """
    columns = [c for c in cdf.columns if c not in CDF_COLUMNS and not c.startswith(META_PREFIX)]
    row = F.struct(*[column(c) for c in columns])
    images = cdf.select(*[column(c) for c in columns])  # a name with a dot is quoted
    row_schema = json.dumps(images.schema.jsonValue(), separators=(",", ":"))
    kind = F.col("_change_type")
    rank = lookup(_CHANGE_RANK)[kind]
    order = [rank, *[column(k) for k in keys], F.to_json(row).alias("_row_text")]
    if keys:
        pre = cdf.filter(kind == "update_preimage").select(
            "_commit_version", *[column(k) for k in keys], row.alias("_before")
        )
        others = cdf.filter(kind != "update_preimage").withColumn("_row", row)
        joined = others.join(pre, ["_commit_version", *keys], "left").withColumn(
            "_before", F.when(kind == "update_postimage", F.col("_before"))
        )
        op = F.when(kind == "update_postimage", F.lit(Op.UPDATE))
    else:
        joined = cdf.withColumn("_row", row)
        op = F.when(kind == "update_preimage", F.lit(Op.DELETE)).when(
            kind == "update_postimage", F.lit(Op.INSERT)
        )
    op = op.when(kind == "insert", F.lit(Op.INSERT)).when(kind == "delete", F.lit(Op.DELETE))
    window = Window.partitionBy("_commit_version").orderBy(*order)
    ranked = joined.withColumn("_order", F.row_number().over(window) - 1)
    image_after = F.when(op.isin(Op.INSERT, Op.UPDATE), F.to_variant_object(F.col("_row")))
    if keys:
        before = F.when(op == Op.UPDATE, F.to_variant_object(F.col("_before"))).when(
            op == Op.DELETE, F.to_variant_object(F.col("_row"))
        )
    else:
        before = F.when(op == Op.DELETE, F.to_variant_object(F.col("_row")))
    key_cols = F.array(*map(F.lit, keys)).cast("array<string>")
    out = {
        "table": F.lit(table),
        "op": op,
        "key_columns": key_cols,
        "key_source": F.lit(KeySource.CONFIG if keys else KeySource.NONE),
        "before": before,
        "after": image_after,
        "row_schema": F.lit(row_schema),
        "unavailable": F.array().cast("array<string>"),
        "position": F.array(F.col("_commit_version"), F.col("_order")).cast("array<bigint>"),
        "source_ts": F.col("_commit_timestamp") if source_ts else F.lit(None),
        "meta": F.create_map().cast("map<string,string>"),
    }
    return ranked.select(
        *[
            (out[f.name] if f.name in out else F.lit(None)).cast(f.dataType).alias(f.name)
            for f in CHANGE_SCHEMA.fields
        ]
    )


def counts(messages: DataFrame) -> dict[str, int]:
    """Messages to write, control records skipped, changes quarantined (one small aggregate)."""
    kind = (
        F.when(F.col("error").isNotNull(), F.lit("quarantined"))
        .when(F.col("skipped").isNotNull(), F.lit("skipped"))
        .otherwise(F.lit("messages"))
    )
    out = {"messages": 0, "skipped": 0, "quarantined": 0}
    for r in messages.groupBy(kind.alias("k")).count().collect():
        out[r["k"]] = r["count"]
    return out


def reasons(messages: DataFrame, limit: int = 5) -> list[tuple[str, int]]:
    """The most frequent quarantine reasons (a small aggregate)."""
    rows = (
        messages.filter(F.col("error").isNotNull())
        .groupBy("error")
        .count()
        .orderBy(F.desc("count"))
        .limit(limit)
        .collect()
    )
    return [(r["error"], r["count"]) for r in rows]


def _good(messages: DataFrame) -> DataFrame:
    return messages.filter(F.col("error").isNull() & F.col("skipped").isNull())


def write_files(messages: DataFrame, output: str, mode: str = "overwrite") -> None:
    """Messages as JSON lines under ``output`` (record objects, in write order: file names
    sort as the messages do), quarantined changes under ``output/_quarantine``."""
    good = _good(messages).orderBy("table", "position", "part")
    good.select(record_line(good).alias("value")).write.mode(mode).text(output)
    bad = messages.filter(F.col("error").isNotNull())
    bad.select("table", "position", "lineage", F.col("error").alias("reason")).write.mode(
        "append"
    ).json(output.rstrip("/") + "/_quarantine")


def kafka_rows(messages: DataFrame, topic_template: str) -> DataFrame:
    """Messages -> rows of Spark's Kafka sink, per key in (position, part) order: one task per
    (topic, key) group writes them in that order, so a partitioned topic keeps per-key order."""
    good = _good(messages).withColumn("topic", topic_for(topic_template))
    return (
        good.repartition("topic", "key")
        .sortWithinPartitions("topic", "key", "position", "part")
        .select("topic", "key", "value")
    )


KAFKA_PRODUCER = {"kafka.enable.idempotence": "true", "kafka.acks": "all"}
"""The idempotent producer: a retried send is not written twice."""


def write_kafka(
    messages: DataFrame,
    bootstrap: str,
    topic_template: str,
    options: dict[str, str] | None = None,
) -> None:
    """Messages to Kafka (``topic_template``: see :func:`topic_for`)."""
    rows = kafka_rows(messages, topic_template)
    writer = rows.write.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    for k, v in {**KAFKA_PRODUCER, **(options or {})}.items():
        writer = writer.option(k, v)
    writer.save()


def check_change_feed(spark: SparkSession, path: str) -> None:
    """ConfigError (one line, how to enable it) when the Delta table's Change Data Feed is off."""
    from delta.tables import DeltaTable

    try:
        detail = DeltaTable.forPath(spark, path).detail().select("properties").first()
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConfigError(f"--table {path!r} is not a Delta table: {first[:200]}") from None
    props = (detail["properties"] if detail else None) or {}
    if str(props.get("delta.enableChangeDataFeed", "false")).lower() != "true":
        raise ConfigError(
            f"--table {path!r} has no Change Data Feed: enable it with ALTER TABLE "
            f"delta.`{path}` SET TBLPROPERTIES (delta.enableChangeDataFeed = true) "
            "(changes from then on can be published)"
        )


def read_change_feed(
    spark: SparkSession, path: str, starting_version: int, stream: bool = False
) -> DataFrame:
    """The Change Data Feed of the Delta table at ``path`` from ``starting_version``."""
    check_change_feed(spark, path)
    reader = spark.readStream if stream else spark.read
    return (
        reader.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", starting_version)
        .load(path)
    )


# ``convert``: raw records of one batch -> messages of another format, written as apply reads them


class SourceTables:
    """The source tables' columns and primary keys as the DDL records seen so far leave them:
    the types and key of row changes whose messages carry neither (CKafka's DML), which
    ``apply`` takes from the Delta tables the same DDL creates. Kept across a stream's batches
    (not across restarts). Follows CREATE TABLE, ADD/MODIFY COLUMN and primary keys; other
    statements change nothing here (a dropped column stays, as ``apply`` keeps it by default).

    >>> tables = SourceTables()  # doctest: +SKIP
    >>> tables.learn(envelopes)  # doctest: +SKIP
    >>> tables.schema("shop.items")  # doctest: +SKIP
    """

    def __init__(self) -> None:
        self.columns: dict[str, dict[str, DataType]] = {}
        self.primary_keys: dict[str, tuple[str, ...]] = {}

    def schema(self, table: str) -> StructType | None:
        columns = self.columns.get(table.lower())
        return StructType([StructField(n, t) for n, t in columns.items()]) if columns else None

    def keys(self, table: str) -> tuple[str, ...] | None:
        return self.primary_keys.get(table.lower())

    def learn(self, env: DataFrame, options: DecodeOptions | None = None) -> None:
        """Follow the DDL records of a batch's envelopes, in source order (a small collect)."""
        from cdclake.formats import ddl

        records = (
            env.filter((F.col("op") == Op.DDL) & F.col("error").isNull())
            .select("table", "detail", "meta", "position", "seq")
            .collect()
        )
        boolean = (options or DecodeOptions()).tinyint1_as_boolean
        for r in sorted(records, key=_source_order):
            db = (r["meta"] or {}).get("database") or (r["table"] or "").split(".")[0] or None
            try:
                for action in ddl.parse_ddl(r["detail"] or "", default_database=db):
                    self._follow(action, boolean)
            except DecodeError:  # apply quarantines the statement: it changes no table
                continue

    def _follow(self, action: object, boolean: bool) -> None:
        from cdclake.formats import ddl
        from cdclake.formats.mysql_types import spark_type

        def typed(column: ddl.ColumnDef) -> DataType:
            return spark_type(column.type_sql, tinyint1_as_boolean=boolean)

        if isinstance(action, ddl.CreateTable):  # an existing table gains the columns it lacks
            columns = self.columns.setdefault(str(action.table).lower(), {})
            for c in action.columns:
                columns.setdefault(c.name, typed(c))
            if action.primary_key:
                self.primary_keys[str(action.table).lower()] = action.primary_key
        elif isinstance(action, ddl.AddColumn | ddl.ModifyColumn):
            self.columns.setdefault(str(action.table).lower(), {})[action.column.name] = typed(
                action.column
            )
        elif isinstance(action, ddl.SetPrimaryKey):
            self.primary_keys[str(action.table).lower()] = action.columns


def _source_order(r: Row) -> tuple[object, ...]:
    """Spark's ascending order of ``(position, seq)``: nulls first, arrays element by element."""

    def nulls_first(v: object) -> tuple[bool, object]:
        return (v is not None, v if v is not None else 0)

    seq = r["seq"]
    return (
        r["position"] is not None,
        [nulls_first(x) for x in r["position"] or []],
        [nulls_first(x) for x in seq or []],
    )


def decode_input(
    raw: DataFrame,
    from_format: str,
    decode_options: DecodeOptions | None = None,
    tables: SourceTables | None = None,
) -> DataFrame:
    """Raw records of one batch -> canonical changes, decoded as ``apply`` decodes them: row
    changes without types or key take them from the DDL before them (``tables``, a new one when
    None). What ``convert`` encodes (:func:`encode`, with :attr:`EncodeOptions.epoch` the
    batch's input-order epoch: README "convert: positions"). Free the decoded input with
    :func:`cdclake.decode.release` once done.

    >>> changes = decode_input(read_files(spark, ["in"]), "canal")  # doctest: +SKIP
    >>> messages = encode(changes, "debezium", EncodeOptions(connector=None, epoch=epoch))
    ...  # doctest: +SKIP
    """
    from cdclake.decode import decode_envelopes, hand_over, release_detection, type_changes

    tables = SourceTables() if tables is None else tables
    env = decode_envelopes(raw, from_format, decode_options)
    try:
        tables.learn(env, decode_options)
        changes = type_changes(env, decode_options, tables.schema, tables.keys)
    except BaseException:
        env.unpersist()
        raise
    finally:
        release_detection(env)
    return hand_over(changes, env)


def write_jsonl(messages: DataFrame, output: str) -> str | None:
    """Messages as JSON lines in the folder ``output``, replacing what was there: files named
    in write order (``00000.jsonl``, ``00001.jsonl``…, what ``apply --input`` reads back in that
    order), nothing else. Quarantined changes (table, position, lineage, reason) go to the
    sibling folder ``<output>_quarantine``, whose location is returned (None, and an old one
    removed, when there are none)."""
    spark = messages.sparkSession
    folder = paths.to_uri(output).rstrip("/")
    good = _good(messages).orderBy("table", "position", "part")
    _write_lines(good.select(record_line(good).alias("value")), folder)
    quarantine = folder + "_quarantine"
    paths.delete(spark, quarantine)
    bad = messages.filter(F.col("error").isNotNull())
    if bad.isEmpty():
        return None
    record = F.struct("table", "position", "lineage", F.col("error").alias("reason"))
    _write_lines(bad.select(F.to_json(record).alias("value")), quarantine)
    return quarantine


def _write_lines(lines: DataFrame, folder: str) -> None:
    """Text lines as ``folder/00000.jsonl``… in partition order, without Spark's ``part-*``
    names, ``_SUCCESS`` marker or ``.crc`` checksums."""
    spark = lines.sparkSession
    staging = folder + "/_writing"
    paths.delete(spark, folder)
    lines.write.text(staging)
    for i, part in enumerate(sorted(paths.list_visible_files(spark, staging) or [])):
        name = f"{i:05d}.jsonl"
        paths.rename(spark, part, f"{folder}/{name}")
        paths.delete(spark, f"{folder}/.{name}.crc")  # the local file system moved it along
    paths.delete(spark, staging)
