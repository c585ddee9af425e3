"""Inputs: JSON-lines files, in-memory lines and Kafka, all turned into raw records.

A raw record (:data:`cdclake.model.RAW_SCHEMA`) is a message value plus what travels with it: the
record key, headers, and its lineage (file + line, or topic + partition + offset).

A line of a file is either a bare message value, or a *record object* that carries what a Kafka
record has::

    {"key": {...}, "value": {...} | null, "headers": {"__debezium.oldkey": {...}},
     "topic": "...", "partition": 0, "offset": 42}

``value: null`` is a tombstone. Blank lines are skipped and not counted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from cdclake.errors import ConfigError
from cdclake.model import RAW_SCHEMA
from cdclake.paths import has_scheme, list_visible_files, local_path

RECORD_FIELDS = ("key", "value", "headers", "topic", "partition", "offset", "timestamp")
_RECORD_SCHEMA = "key STRING, headers MAP<STRING, STRING>"


def list_files(paths: Iterable[str | Path], spark: SparkSession | None = None) -> list[str]:
    """Expand files and directories (their visible files, by name) in the order given.

    Local paths come back absolute; URIs (``s3a://…``) are listed through ``spark``'s Hadoop
    file systems and come back as URIs.

    >>> list_files(["events/"])  # doctest: +SKIP
    ['/abs/events/000.jsonl', '/abs/events/001.jsonl']
    """
    files: list[str] = []
    for p in map(str, paths):
        if has_scheme(p) and not p.startswith("file:"):
            if spark is None:
                raise ConfigError(f"input {p!r} is a URI; listing it needs a Spark session")
            found = list_visible_files(spark, p)
            if found is None:
                raise ConfigError(f"input {p!r} does not exist (expected a file or a directory)")
            files += found
        else:
            files += _list_local(local_path(p))
    if not files:
        raise ConfigError(f"no input files under {[str(p) for p in paths]}")
    return files


def _list_local(p: Path) -> list[str]:
    if p.is_dir():
        return sorted(
            str(f.resolve())
            for f in p.iterdir()
            if f.is_file() and not f.name.startswith((".", "_"))
        )
    if p.is_file():
        return [str(p.resolve())]
    raise ConfigError(f"input {str(p)!r} does not exist (expected a file or a directory)")


def epoch_now() -> int:
    """The input-order epoch of a batch that starts now (ms; see
    :data:`cdclake.model.INPUT_ORDER_DOC`)."""
    return time.time_ns() // 1_000_000


def input_order(epoch: int | None, rank: Column, offset: Column) -> Column:
    """``[epoch, rank, offset]``: a record's input order (``epoch`` None: now)."""
    first = F.array(F.lit(epoch_now() if epoch is None else epoch).cast("bigint"))
    # the epoch joins the record's own values as a one-element array: Spark writes a number
    # literal into the code it generates, so a new epoch (every batch) would compile the
    # decode's projections again (~0.4 s of a small stream batch); an array is passed to it
    return F.concat(first, F.array(rank.cast("bigint"), offset.cast("bigint")))


def with_order(raw: DataFrame, epoch: int | None = None) -> DataFrame:
    """``raw`` with its ``order`` column: records built elsewhere (a caller's DataFrame with
    lineage) get ``[epoch, partition or 0, offset]``."""
    if "order" in raw.columns:
        return raw
    lineage = F.col("lineage")
    return raw.withColumn(
        "order", input_order(epoch, F.coalesce(lineage["partition"], F.lit(0)), lineage["offset"])
    )


def raw_from_lines_df(lines: DataFrame, epoch: int | None = None) -> DataFrame:
    """``lines`` with columns ``line`` and ``lineage`` (and ``rank``, the file's place among the
    batch's files, 0 when absent) -> raw records, ordered within ``epoch``
    (:func:`input_order`).

    A line is a record object when its top-level keys include ``value`` and are all among
    :data:`RECORD_FIELDS`; it is then ``nested``: its ``value`` is derived text, its ``key`` and
    ``headers`` are left null (see :func:`record_field`), and a format parses the line once with
    its own schema nested under ``value``
    (:func:`cdclake.formats.base.parse_value`) rather than parsing the re-serialized value again.
    Each step is its own projection so that Spark reads the keys once (in one projection the
    optimizer splits ``from_json`` into one parse per field it extracts).

    Only a line whose text can hold the key ``value`` has its keys read (a second tokenization
    of the whole line): one that contains ``"value"``, or a ``\\u`` escape that could spell it.
    A bare message value (one not wrapped in a record) is told apart by that test on its bytes
    alone.
    """
    line = F.col("line")
    may_be_record = line.contains('"value"') | line.contains("\\u")
    keys = lines.withColumn("_keys", F.when(may_be_record, F.json_object_keys(line)))
    is_record = F.coalesce(
        F.array_contains("_keys", "value")
        & (F.size(F.array_except("_keys", F.array(*map(F.lit, RECORD_FIELDS)))) == 0),
        F.lit(False),
    )
    rank = F.col("rank") if "rank" in lines.columns else F.lit(0)
    order = input_order(epoch, rank, F.col("lineage")["offset"])
    parsed = keys.select("line", "lineage", is_record.alias("nested"), order.alias("order"))
    # a record object's key and headers are read with its value, by the format's one parse of
    # the line (``parse_value(..., record_fields=True)``): a column here would be a parse of
    # its own, computed for every line whether a format reads it or not
    return parsed.select(
        F.lit(None).cast(RAW_SCHEMA["key"].dataType).alias("key"),
        value_text(F.col("line")).alias("value"),
        F.lit(None).cast(RAW_SCHEMA["headers"].dataType).alias("headers"),
        F.col("lineage").cast(RAW_SCHEMA["lineage"].dataType).alias("lineage"),
        F.col("line").alias("raw"),
        F.col("nested"),
        F.col("order"),
    )


def record_field(raw: Column, name: str) -> Column:
    """A record object's ``key`` or ``headers``, from a raw record's ``raw`` and ``nested``
    (null for a line that is not a record object): a parse of the line, so keep it inside a
    branch that needs it (:func:`cdclake.formats.base.parse_value` reads them in its parse)."""
    return F.when(F.col("nested"), F.from_json(raw, _RECORD_SCHEMA)[name])


def value_text(raw: Column) -> Column:
    """The message value as text, from a raw record's ``raw`` and ``nested``: a record object's
    ``value`` re-serialized (a full parse, so keep it inside a branch that needs it), else
    ``raw`` itself."""
    return F.when(F.col("nested"), F.from_json(raw, "value STRING")["value"]).otherwise(raw)


def raw_from_lines(
    spark: SparkSession, lines: Sequence[str], source: str = "<memory>", epoch: int | None = None
) -> DataFrame:
    """Raw records from a list of lines (tests, small inputs); line numbers start at 1. The
    driver knows how many records they are (:func:`records_known`): applying them counts none."""
    rows = [(line, (source, None, i)) for i, line in enumerate(lines, start=1) if line.strip()]
    schema = StructType([RAW_SCHEMA["raw"], RAW_SCHEMA["lineage"]])
    df = spark.createDataFrame(rows, schema).withColumnRenamed("raw", "line")
    raw = raw_from_lines_df(df, epoch)
    setattr(raw, _RECORDS, len(rows))
    return raw


_RECORDS = "_cdclake_records"


def records_known(raw: DataFrame) -> int | None:
    """How many records ``raw`` holds, where the driver made them (:func:`raw_from_lines`); None
    for any other DataFrame (one derived from it included)."""
    return getattr(raw, _RECORDS, None)


def _file_uri(path: Column) -> Column:
    """Spark's ``file:///x`` as Hadoop writes it, ``file:/x``; other URIs (``s3a://…``) as they
    are: lineage names the file where it really is."""
    return F.regexp_replace(path, r"^file:///", "file:/")


# Up to this many file splits, the lines' offsets travel inside the plan as one literal map;
# more take a broadcast join (whose small side costs a Spark job of its own to collect).
LITERAL_SPLITS = 1000
_SEP = "\x00"  # between a split's file and start in the map's keys: no URI holds it


def number_lines(text: DataFrame, literal_splits: int = LITERAL_SPLITS) -> tuple[DataFrame, int]:
    """Give each line its file and 1-based line number (input: :func:`text_with_files`); and
    the number of records (lines that are not blank), which the same aggregate counts.

    Spark's text source does not expose line numbers. Rows of one file split are read in order
    and get consecutive ``monotonically_increasing_id`` values, so a line's number is the lines of
    the file's earlier splits plus its rank inside its split. The per-split counts are a tiny
    aggregate; nothing proportional to the data reaches the driver. Each split's shift (line
    number minus id) is looked up in a literal map (Spark folds it once and looks keys up by
    hash), or, beyond ``literal_splits`` splits, joined from a broadcast table.
    """
    spark = text.sparkSession
    base = text.select(
        F.col("value").alias("line"),
        _file_uri(F.col("file_path")).alias("file"),
        F.col("file_block_start").alias("block"),
        F.monotonically_increasing_id().alias("mid"),
    )
    blocks = (
        base.groupBy("file", "block")
        .agg(
            F.count(F.lit(1)).alias("n"),
            F.min("mid").alias("first"),
            F.count_if(_not_blank(F.col("line"))).alias("records"),
        )
        .collect()
    )
    records = sum(b["records"] for b in blocks)
    shifts = []
    running: dict[str, int] = {}
    for b in sorted(blocks, key=lambda r: (r["file"], r["block"])):
        before = running.get(b["file"], 0)
        shifts.append((b["file"], b["block"], before - b["first"] + 1))
        running[b["file"]] = before + b["n"]
    if not shifts:
        empty = spark.createDataFrame(
            [],
            "line STRING, lineage STRUCT<source: STRING, partition: INT, offset: BIGINT>, "
            "rank BIGINT",
        )
        return empty, 0
    # a file's place among the batch's files in name order: the input order of its lines
    ranks = {f: i for i, f in enumerate(sorted(running))}
    if len(shifts) <= literal_splits:
        table = F.from_json(
            F.lit(json.dumps({f"{f}{_SEP}{b}": s for f, b, s in shifts})), "map<string,bigint>"
        )
        key = F.concat_ws(_SEP, F.col("file"), F.col("block").cast("string"))
        rank = F.from_json(F.lit(json.dumps(ranks)), "map<string,bigint>")[F.col("file")]
        numbered = base.withColumns({"shift": table[key], "rank": rank})
    else:
        rows = [(f, b, s, ranks[f]) for f, b, s in shifts]
        split_df = spark.createDataFrame(
            rows, "file STRING, block BIGINT, shift BIGINT, rank BIGINT"
        )
        numbered = base.join(F.broadcast(split_df), ["file", "block"])
    lineage = F.struct(
        F.col("file").alias("source"),
        F.lit(None).cast("int").alias("partition"),
        (F.col("mid") + F.col("shift")).alias("offset"),
    )
    return numbered.select("line", lineage.alias("lineage"), "rank"), records


def _not_blank(line: Column) -> Column:
    return F.trim(line) != ""


def text_with_files(text: DataFrame) -> DataFrame:
    """A text source's lines with the file and split each came from (batch or streaming)."""
    return text.select(
        "value",
        F.col("_metadata.file_path").alias("file_path"),
        F.col("_metadata.file_block_start").alias("file_block_start"),
    )


def raw_from_text(text: DataFrame, epoch: int | None = None) -> tuple[DataFrame, int]:
    """Lines from :func:`text_with_files` -> raw records with file + line lineage, and how many
    there are (counted with the line numbers); ``epoch``: the batch's input-order epoch."""
    lines, records = number_lines(text)
    return raw_from_lines_df(lines.filter(_not_blank(F.col("line"))), epoch), records


def read_files(spark: SparkSession, paths: Iterable[str | Path]) -> DataFrame:
    """Raw records from JSON-lines files or directories of them, with file + line lineage."""
    return read_files_counted(spark, paths)[0]


def read_files_counted(
    spark: SparkSession, paths: Iterable[str | Path], epoch: int | None = None
) -> tuple[DataFrame, int]:
    """:func:`read_files`, and how many records the files hold (no pass of its own)."""
    return raw_from_text(text_with_files(spark.read.text(list_files(paths, spark))), epoch)


def kafka_key() -> Column:
    """The key of a record of Spark's Kafka source as text (:data:`cdclake.model.RAW_SCHEMA`)."""
    return F.col("key").cast("string").alias("key")


def kafka_headers() -> Column:
    """The headers of a record of Spark's Kafka source (``includeHeaders``) as a map of text. Kafka
    allows a header name twice; the map keeps its last value (as ``Headers.lastHeader`` reads
    it), where a map of both would fail the batch (Spark refuses duplicate map keys)."""
    entries = F.transform(
        F.col("headers"),
        lambda h: F.struct(h["key"].alias("key"), h["value"].cast("string").alias("value")),
    )
    last = F.filter(
        entries,
        lambda h, i: (
            ~F.exists(
                F.slice(entries, i + 2, F.greatest(F.size(entries) - i - 1, F.lit(1))),
                lambda later: later["key"] == h["key"],
            )
            | (i + 1 == F.size(entries))
        ),
    )
    return F.map_from_entries(last).alias("headers")


def from_kafka_df(kafka: DataFrame, epoch: int | None = None) -> DataFrame:
    """Raw records from a DataFrame of Spark's Kafka source (batch or micro-batch);
    ``epoch``: the batch's input-order epoch (a stream's batch time)."""
    value = F.col("value").cast("string")
    return kafka.select(
        kafka_key(),
        value.alias("value"),
        kafka_headers(),
        F.struct(
            F.col("topic").alias("source"),
            F.col("partition").alias("partition"),
            F.col("offset").alias("offset"),
        ).alias("lineage"),
        value.alias("raw"),
        F.lit(False).alias("nested"),
        input_order(epoch, F.col("partition"), F.col("offset")).alias("order"),
    )


def raw_from_kept(kept: DataFrame, epoch: int | None = None) -> DataFrame:
    """Raw records again from rows that kept them as the quarantine does (``raw``, ``lineage``,
    and ``key`` and ``headers``, which a table written before them lacks): a Kafka record
    (its lineage has a partition) as :func:`from_kafka_df` made it, so that it decodes as it
    first did (a Debezium row's key may be in the record key alone); a file's line as
    :func:`raw_from_lines_df` reads it.

    >>> raw = raw_from_kept(spark.read.format("delta").load(quarantine_path))  # doctest: +SKIP
    """
    epoch = epoch_now() if epoch is None else epoch  # one epoch for both kinds
    missing = {
        name: F.lit(None).cast(RAW_SCHEMA[name].dataType)
        for name in ("key", "headers")
        if name not in kept.columns
    }
    kept = kept.withColumns(missing) if missing else kept
    lineage = F.col("lineage")
    from_kafka = lineage["partition"].isNotNull()
    lines = kept.filter(~from_kafka).select(F.col("raw").alias("line"), "lineage")
    records = kept.filter(from_kafka).select(
        *[F.col(name).cast(RAW_SCHEMA[name].dataType).alias(name) for name in ("key", "headers")],
        F.col("raw").alias("value"),
        lineage.cast(RAW_SCHEMA["lineage"].dataType).alias("lineage"),
        F.col("raw"),
        F.lit(False).alias("nested"),
        input_order(epoch, lineage["partition"], lineage["offset"]).alias("order"),
    )
    return raw_from_lines_df(lines, epoch).unionByName(records)
