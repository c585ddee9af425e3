"""Raw records -> canonical changes: format dispatch, key resolution and typing of row images.

Typing is where formats meet the core. A format leaves each row image as JSON text with a
``schema_token``; here the few distinct ``(format, table, token)`` groups of a batch are collected
(a tiny result: one row per table and schema version), each is turned into a list of
:class:`~cdclake.formats.base.ColumnSpec`, and the images are typed with column expressions only.
A value that does not fit its column quarantines the change with a message naming both.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial, reduce

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    DateType,
    MapType,
    StringType,
    StructField,
    StructType,
    VariantType,
)

from cdclake import formats
from cdclake._spark.plan_cache import replayed
from cdclake.errors import DecodeError, TableError
from cdclake.formats.base import (
    DETECTED,
    IMAGE_COLUMNS,
    LANE,
    NO_VALUE,
    REPARSE,
    ColumnSpec,
    DecodeOptions,
    Format,
    Lane,
    detection_type,
    parse_detection,
    select_envelope,
)
from cdclake.formats.values import date_from_days
from cdclake.model import (
    CHANGE_SCHEMA,
    DATA_OPS,
    DEFAULTS_JSON_OPTIONS,
    DEFAULTS_KEY,
    KeySource,
    Op,
    is_source_column,
)
from cdclake.names import name_problem
from cdclake.sources import value_text, with_order

TableSchemas = Callable[[str], StructType | None]
"""Looks up the current schema of a target table by source identifier (None: no table yet)."""

_FORMAT = "_format"
NO_IDENTITY = (
    "no key and no before image: cannot tell which row to delete "
    "(give --primary-key TABLE=COLS or capture full before images)"
)
NOT_A_FORMAT = "not a message of any known format ({names})"
VALUE_CHARS = 80
"""A value quoted in a quarantine reason is cut to this many characters."""
NEW_SCHEMA = "cdclake: not typed in one pass (a schema version, table or DDL not seen before)"
"""The error :func:`type_known` gives a change it cannot type: the batch is decoded again in two
passes, so no user ever sees it."""


def _no_tables(_: str) -> StructType | None:
    return None


def text_spec(name: str, data_type: DataType) -> ColumnSpec:
    """A column typed from plain JSON text by Spark's casts (schemaless input).

    Dates also accept epoch days; binary values are base64.
    """

    def convert(raw: Column) -> Column:
        if isinstance(data_type, StringType):
            return raw
        if isinstance(data_type, BinaryType):
            return F.try_to_binary(raw, F.lit("base64"))
        if isinstance(data_type, DateType):
            return F.coalesce(raw.try_cast("date"), date_from_days(raw.try_cast("int")))
        if isinstance(data_type, StructType | ArrayType):
            return F.from_json(raw, data_type)
        if isinstance(data_type, MapType):
            return F.from_json(raw, data_type.json())  # the exact type, as JSON
        return raw.try_cast(data_type)

    return ColumnSpec(name, data_type, convert, data_type.simpleString())


def envelopes(
    raw: DataFrame, format_name: str, options: DecodeOptions, learn: bool = False
) -> tuple[DataFrame, DataFrame | None]:
    """Raw records -> envelopes of one format, or of every format detected (``auto``).

    With ``auto``, an input whose messages are all of one format is decoded as that format
    (:func:`only_format`). Otherwise the raw records tagged with their format are persisted
    (each format's envelope reads its slice of them) and returned second, for the caller to
    release once the envelopes are materialized.

    ``learn``: the envelopes of a format that has lanes carry their :data:`LANE` key, for
    :func:`type_changes` to learn them (an input of several formats learns none).
    """
    raw = with_order(raw)
    resolved = _resolved(raw, format_name)
    if resolved is None:
        return _mixed_envelopes(raw, options)
    fmt = formats.get(resolved)

    def build(r: DataFrame) -> DataFrame:
        env = fmt.learning_envelope(r, options) if learn else None
        env = fmt.envelope(r, options) if env is None else env
        return env.withColumn(_FORMAT, F.lit(fmt.name))

    return replayed(("envelope", fmt.name, repr(options), learn), raw, build), None


def _resolved(raw: DataFrame, format_name: str) -> str | None:
    """The format to decode ``raw`` with: ``format_name``, or for ``auto`` the one format of
    all its messages (None: they are of several formats, or of none)."""
    return only_format(raw) if format_name == formats.AUTO else format_name


def only_format(raw: DataFrame) -> str | None:
    """The format of every message of ``raw`` when they are all of one (records without a value
    count as the first format's, as :func:`_tag_formats` gives them), else None: one job of a
    light parse per message and a one-row aggregate.

    A topic carries one format, so ``auto`` usually finds one: the input is then decoded exactly
    as with that format given (each of its messages is that format's, and a format's envelope of
    a message does not depend on the others), without persisting the tagged records and reading
    them back, which cost ``auto`` a third of a decode's time (bench/README.md, step 13).
    """
    tag = F.col(_FORMAT)
    found = (
        _tagged(raw)
        .agg(
            F.min(tag).alias("first"),
            F.max(tag).alias("last"),
            F.count_if(tag.isNull()).alias("none"),
        )
        .collect()[0]
    )
    if found["none"] or found["first"] != found["last"]:
        return None
    return str(found["first"]) if found["first"] is not None else None


def _mixed_envelopes(raw: DataFrame, options: DecodeOptions) -> tuple[DataFrame, DataFrame]:
    """``auto``'s envelopes of an input with messages of several formats, or of none."""
    fmts = formats.all_formats()
    names = tuple(f.name for f in fmts)
    # one light parse per message decides its format; the full parse is then its format's alone.
    # Every step is built once per query and replayed on later batches of the same schema
    # (:func:`replayed`): building the five branches costs the driver about 2 s a batch. The
    # detection :func:`only_format` ran is run again here, persisted: a mixed input is rare, and
    # persisting it there would cost every input of one format the cache it no longer needs.
    tagged = _tagged(raw).persist(StorageLevel.MEMORY_AND_DISK)
    parts = [
        replayed(
            ("envelope in auto", fmt.name, repr(options)),
            tagged,
            partial(_envelope_of_tagged, fmt=fmt, columns=raw.columns, options=options),
        )
        for fmt in fmts
    ]
    # a message of no format has nothing to read but its lineage: no format's parse is spent on it
    unknown = replayed(("no format", names), tagged, lambda t: _not_a_format(t, raw.columns, names))
    columns = parts[0].columns
    return reduce(DataFrame.unionByName, parts, unknown.select(*columns)), tagged


def _tagged(raw: DataFrame) -> DataFrame:
    """:func:`_tag_formats` over every registered format, built once per query."""
    fmts = formats.all_formats()
    return replayed(("detected", tuple(f.name for f in fmts)), raw, lambda r: _tag_formats(r, fmts))


def _tag_formats(raw: DataFrame, fmts: Sequence[Format]) -> DataFrame:
    """``raw`` (less ``value``) plus :data:`_FORMAT`: the first format whose detection takes
    the message (null: none does; a record without a value goes to the first format)."""
    detected = parse_detection(raw, detection_type(list(fmts)))
    name = F.lit(None).cast("string")
    for fmt in reversed(fmts):
        name = F.when(fmt.detect_parsed(F.col(DETECTED)), F.lit(fmt.name)).otherwise(name)
    # ``value`` is not cached: for a record object it is derived text (a full parse), and no
    # envelope needs it but where the line is not a record (then it is ``raw``, cheap)
    return detected.select(
        *[c for c in raw.columns if c != "value"],
        F.when(F.col(NO_VALUE), F.lit(fmts[0].name)).otherwise(name).alias(_FORMAT),
    )


def _envelope_of_tagged(
    tagged: DataFrame, fmt: Format, columns: Sequence[str], options: DecodeOptions
) -> DataFrame:
    """The envelopes of the records ``tagged`` gave to ``fmt``."""
    env = fmt.envelope(_records_of(tagged, columns, fmt.name), options)
    return env.withColumn(_FORMAT, F.lit(fmt.name))


def _records_of(tagged: DataFrame, columns: Sequence[str], format_name: str | None) -> DataFrame:
    """The raw records (``columns``) ``tagged`` gave to ``format_name`` (None: to no format)."""
    mine = F.col(_FORMAT).isNull() if format_name is None else F.col(_FORMAT) == format_name
    return tagged.filter(mine).select(
        *[value_text(F.col("raw")).alias(c) if c == "value" else F.col(c) for c in columns],
        _FORMAT,
    )


def _not_a_format(tagged: DataFrame, columns: Sequence[str], names: Sequence[str]) -> DataFrame:
    """The envelopes of the messages of no format: their lineage, their text and the reason."""
    return select_envelope(
        _records_of(tagged, columns, None),
        {_FORMAT: F.lit(None).cast("string")},
        key_columns=F.array().cast("array<string>"),
        key_source=F.lit(KeySource.NONE),
        seq=F.col("lineage"),
        lineage=F.col("lineage"),
        raw=F.col("raw"),
        error=F.lit(NOT_A_FORMAT.format(names=", ".join(names))),
    )


def configured_keys(env: DataFrame, options: DecodeOptions) -> DataFrame:
    """``--primary-key`` wins over what the message says."""
    if not options.keys:
        return env
    lookup = F.create_map(
        *[x for t, cols in options.keys.items() for x in (F.lit(t), F.array(*map(F.lit, cols)))]
    )
    configured = lookup[F.col("table")]
    return env.withColumns(
        {
            "key_columns": F.coalesce(configured, F.col("key_columns")),
            "key_source": F.when(configured.isNotNull(), F.lit(KeySource.CONFIG)).otherwise(
                F.col("key_source")
            ),
        }
    )


def infer_types(env: DataFrame) -> dict[str, StructType]:
    """Per table, the Spark types of schemaless row images (one small aggregate)."""
    rows = env.groupBy("table").agg(_inferred().alias("inferred")).collect()
    spark = env.sparkSession
    out = {r["table"]: _inferred_struct(spark, r["inferred"]) for r in rows}
    return {table: struct for table, struct in out.items() if struct is not None}


def _inferred(where: str = "true") -> Column:
    """The aggregate of a schemaless image's types (of the rows ``where`` holds), as Spark's
    ``OBJECT<...>`` text."""
    image = "coalesce(after_text, before_text)"
    return F.expr(f"schema_of_variant_agg(try_parse_json({image})) FILTER (WHERE {where})")


def _inferred_struct(spark: SparkSession, ddl: str | None) -> StructType | None:
    """The columns of :func:`_inferred`'s text (None: the images are not JSON objects)."""
    if not ddl or not ddl.startswith("OBJECT<"):
        return None
    struct_ddl = "STRUCT<" + ddl[len("OBJECT<") :]
    dtype = (
        spark.sql(f"SELECT CAST(NULL AS {struct_ddl.replace('OBJECT<', 'STRUCT<')}) x")
        .schema[0]
        .dataType
    )
    assert isinstance(dtype, StructType)
    return StructType([StructField(f.name, _widen_inferred(f.dataType)) for f in dtype.fields])


_DDL_FIELDS = ("table", "detail", "meta", "position", "seq", "lineage", "source_ts")
"""What :func:`cdclake.apply.schema_changes.apply_ddl_records` reads of a DDL record."""


@dataclass(frozen=True)
class Scan:
    """What the first pass over a batch's envelopes finds, in one small aggregate: the
    ``(format, table, schema token)`` groups of its typable changes (with their rows' types
    where the messages carry none), and its DDL records (few: one per statement), which the
    DDL of the batch is applied from before its changes are typed."""

    groups: list[Row]
    ddl: list[Row]
    inferred: dict[str, StructType] | None
    """Per table, the types of its schemaless images (None: a table has them in two formats,
    whose types :func:`infer_types` settles over both)."""


def scan(env: DataFrame, learn_lanes: bool = False) -> Scan:
    """One job over the envelopes (it fills their cache): the groups :func:`type_changes` types
    and the DDL records, where three jobs found the DDL, the groups and the inferred types.
    ``learn_lanes``: the groups carry the lanes their messages took (:func:`_lanes_seen`)."""
    typable = _typable()
    ddl = F.col("error").isNull() & (F.col("op") == Op.DDL)
    rows = (
        env.filter(typable | ddl)
        .groupBy(_FORMAT, "table", "schema_token", typable.alias("_typable"))
        .agg(
            F.max(F.size("key_columns")).alias("keyed"),
            F.count(F.lit(1)).alias("n"),
            *([_lanes_seen()] if learn_lanes and LANE in env.columns else []),
            _inferred("schema_token IS NULL").alias("inferred"),
            F.collect_list(F.when(ddl, F.struct(*_DDL_FIELDS))).alias("ddl"),
        )
        .collect()
    )
    groups = [r for r in rows if r["_typable"]]
    schemaless = [g for g in groups if g["schema_token"] is None]
    spark = env.sparkSession
    inferred: dict[str, StructType] | None = None
    if len({g["table"] for g in schemaless}) == len(schemaless):
        found = {g["table"]: _inferred_struct(spark, g["inferred"]) for g in schemaless}
        inferred = {table: struct for table, struct in found.items() if struct is not None}
    return Scan(groups, [d for r in rows if not r["_typable"] for d in r["ddl"]], inferred)


def _widen_inferred(t: DataType) -> DataType:
    # Inference sees only the values of this batch: an unbounded JSON number stays a double
    # rather than a decimal sized to the sample, and nested values stay JSON text.
    name = t.typeName()
    if name == "decimal":
        from pyspark.sql.types import DoubleType

        return DoubleType()
    if name in ("struct", "array", "map", "variant", "void"):
        return StringType()
    return t


def _specs_for(
    fmt: Format,
    table: str,
    token: str | None,
    options: DecodeOptions,
    table_schemas: TableSchemas,
    inferred: dict[str, StructType],
) -> list[ColumnSpec]:
    if token is not None:
        return fmt.column_specs(token, options)
    known = table_schemas(table)
    fields = [f for f in (known.fields if known else []) if is_source_column(f.name)]
    names = {f.name for f in fields}
    fields += [f for f in inferred.get(table, StructType()).fields if f.name not in names]
    return [
        fmt.typed_spec(f.name, f.dataType, options) or text_spec(f.name, f.dataType) for f in fields
    ]


def fit_spec(spec: ColumnSpec, data_type: DataType) -> ColumnSpec:
    """``spec`` whose values must land in a column of ``data_type`` (the table's type, or the
    type the batch settled on): a value that does not cast fits nothing, so its change is
    quarantined instead of failing the write."""
    if spec.data_type.simpleString() == data_type.simpleString():
        return spec

    def convert(raw: Column) -> Column:
        return spec.convert(raw).try_cast(data_type)

    expected = f"{data_type.simpleString()} (the table's type; the message says {spec.expected})"
    return replace(spec, data_type=data_type, convert=convert, expected=expected)


def settled_types(
    specs: Sequence[Sequence[ColumnSpec]], known: StructType | None
) -> dict[str, DataType]:
    """Per column (lower-case name), the one type every schema version of a table's batch is
    cast to: the table's type where the table has the column, else that of the first version
    (``specs``: the most common first), widened by the others (int and bigint: bigint)."""
    out: dict[str, DataType] = {f.name.lower(): f.dataType for f in (known.fields if known else [])}
    table = set(out)
    for group in specs:
        for s in group:
            name = s.name.lower()
            if name not in table:
                out[name] = _wider(out.get(name), s.data_type)
    return out


_NUMERIC = ("byte", "short", "integer", "long", "float", "double", "decimal", "boolean")
_TIMES = ("date", "timestamp", "timestamp_ntz")


def _castable(source: DataType, target: DataType) -> bool:
    """Whether Spark's try_cast takes ``source`` to ``target`` (its rules, in short: text
    from anything atomic and to anything atomic, numbers and booleans among themselves,
    dates and timestamps among themselves, timestamps and numbers, nested types field by
    field)."""
    s, t = source.typeName(), target.typeName()
    if (s == t and s not in ("struct", "array", "map")) or s in ("null", "void"):
        return True
    if isinstance(source, StructType) and isinstance(target, StructType):
        return len(source.fields) == len(target.fields) and all(
            _castable(a.dataType, b.dataType)
            for a, b in zip(source.fields, target.fields, strict=True)
        )
    if isinstance(source, ArrayType) and isinstance(target, ArrayType):
        return _castable(source.elementType, target.elementType)
    if isinstance(source, MapType) and isinstance(target, MapType):
        return _castable(source.keyType, target.keyType) and _castable(
            source.valueType, target.valueType
        )
    nested = ("struct", "array", "map", "variant")
    if t == "string":
        return True
    if s == "string":
        return t not in nested
    numbers = _NUMERIC[:-1]  # without boolean
    pairs = {(s in _NUMERIC, t in _NUMERIC), (s in _TIMES, t in _TIMES)}
    return (
        (True, True) in pairs
        or (s == "timestamp" and t in numbers)
        or (s in numbers and t == "timestamp")
    )


def type_conflict(specs: Sequence[ColumnSpec], settled: dict[str, DataType]) -> str | None:
    """Why the values of ``specs`` cannot be cast to the settled types (a column typed as a
    struct by one message and as a number by the table or the other messages), if they can't."""
    for spec in specs:
        target = settled[spec.name.lower()]
        if spec.data_type.simpleString() != target.simpleString() and not _castable(
            spec.data_type, target
        ):
            return (
                f"column {spec.name}: the message's type {spec.data_type.simpleString()} "
                f"cannot become {target.simpleString()} (the table's or the batch's type)"
            )
    return None


def _check_tables(
    groups: Sequence[Row], conflicts: Sequence[str | None], table_schemas: TableSchemas
) -> None:
    """An existing table that no message of the batch fits was written by something else."""
    for table in {g["table"] for g in groups}:
        mine = [c for g, c in zip(groups, conflicts, strict=True) if g["table"] == table]
        if all(mine) and table_schemas(table) is not None:
            raise TableError(
                f"table {table}: {mine[0]}; the Delta table was not written by cdclake from "
                "this source (move it away, or write the source elsewhere with --map-table)"
            )


_RANKS = {"byte": 1, "short": 2, "integer": 3, "long": 4, "float": 11, "double": 12}


def _wider(a: DataType | None, b: DataType) -> DataType:
    """Of two versions of a column not yet in the table, the one the other widens to (int and
    bigint: bigint); otherwise the first."""
    if a is None:
        return b
    ra, rb = _RANKS.get(a.typeName(), 0), _RANKS.get(b.typeName(), 0)
    same_family = ra and rb and (ra > 10) == (rb > 10)
    return b if same_family and rb > ra else a


def row_struct(specs: Sequence[ColumnSpec]) -> StructType:
    """The Spark struct a row image with these columns is read as."""
    return StructType([StructField(s.name, s.data_type, True) for s in specs])


def _text_struct(specs: Sequence[ColumnSpec]) -> StructType:
    """A row image read as raw values per column (what converters take): text, or a variant
    where the spec asks for one (:attr:`ColumnSpec.parse_type`)."""
    return StructType([StructField(s.name, s.parse_type) for s in specs])


def _typed_image(
    text: Column, specs: Sequence[ColumnSpec], raw: Column | None = None, struct: bool = False
) -> tuple[Column, Column, Column]:
    """JSON text of a row image -> (typed values, error, unavailable columns): the values as a
    VARIANT, or with ``struct`` as a struct of the specs' types (see :func:`type_known`).

    ``raw``: the image already parsed with :func:`_text_struct` (a column of its own, so that
    the many references below do not parse the text again).
    """
    if raw is None:
        raw = F.from_json(text, _text_struct(specs))
    values, errors, unavailable = [], [], []
    for s in specs:
        cell = raw[s.name]
        typed = s.convert(cell)
        if s.is_unavailable is not None:
            missing = F.coalesce(s.is_unavailable(cell), F.lit(False))
            unavailable.append(F.when(missing, F.lit(s.name)))
            typed = F.when(~missing, typed)
            bad = cell.isNotNull() & ~missing & typed.isNull()
        else:
            bad = cell.isNotNull() & typed.isNull()
        values.append(typed.cast(s.data_type).alias(s.name))
        errors.append(
            F.when(
                bad,
                F.concat(
                    F.lit(f"column {s.name}: value '"),
                    F.substring(cell, 1, VALUE_CHARS),
                    F.lit(f"' does not fit {s.expected}"),
                ),
            )
        )
    # a JSON string image is text that parses (to nulls: Spark reads invalid text so), so the
    # text must also open an object (an image's text is compact JSON)
    not_object = text.isNotNull() & (raw.isNull() | ~text.startswith("{"))
    error = F.when(
        not_object, F.concat(F.lit("row image is not a JSON object: "), F.substring(text, 1, 100))
    ).otherwise(F.coalesce(*errors, F.lit(None).cast("string")) if errors else F.lit(None))
    if struct:
        image = F.when(text.isNotNull(), F.struct(*values))
    elif values:
        image = F.when(text.isNotNull(), F.to_variant_object(F.struct(*values)))
    else:
        image = F.when(text.isNotNull(), F.parse_json(F.lit("{}")))
    unavailable_col = (
        F.filter(F.array(*unavailable), lambda x: x.isNotNull()) if unavailable else F.array()
    )
    return image, error, unavailable_col.cast("array<string>")


def _key_error(specs: Sequence[ColumnSpec], key_columns: Column) -> Column:
    names = F.array(*[F.lit(s.name) for s in specs]) if specs else F.array().cast("array<string>")
    missing = F.array_except(key_columns, names)
    return F.when(
        F.size(missing) > 0,
        F.concat(
            F.lit("key column(s) "),
            F.array_join(missing, ", "),
            F.lit(" not in the row of "),
            F.col("table"),
            F.lit(" (columns: "),
            F.array_join(names, ", "),
            F.lit(")"),
        ),
    )


def _is_null(spec: ColumnSpec, image: Column) -> Column:
    """Whether ``image`` leaves ``spec``'s column out or sets it to null (a JSON null parsed as
    a variant is a variant null, not SQL NULL)."""
    value = image[spec.name]
    if isinstance(spec.parse_type, VariantType):
        return value.isNull() | F.coalesce(F.is_variant_null(value), F.lit(False))
    return value.isNull()


def _null_key_error(
    specs: Sequence[ColumnSpec], key_columns: Column, before_raw: Column, after_raw: Column
) -> Column:
    """A key column that the row image leaves out or sets to null: no row can be found by it."""
    image = F.when(F.col("after_text").isNotNull(), after_raw).otherwise(before_raw)
    is_null = F.create_map(*[x for s in specs for x in (F.lit(s.name), _is_null(s, image))])
    missing = F.filter(key_columns, lambda k: F.coalesce(is_null[k], F.lit(False)))
    return F.when(
        F.size(missing) > 0,
        F.concat(F.lit("key column(s) "), F.array_join(missing, ", "), F.lit(" null or missing")),
    )


def _identity_error(key_columns: Column) -> Column:
    """A keyless delete or update with no before image cannot say which row it removes."""
    return F.when(
        (F.size(key_columns) == 0) & (F.col("op") == Op.DELETE) & F.col("before_text").isNull(),
        F.lit(NO_IDENTITY),
    )


def _row_schema(specs: Sequence[ColumnSpec]) -> Column:
    """The ``row_schema`` of a group: the struct's JSON, plus the typed column defaults (a
    constant: Spark folds the conversion once)."""
    text = json.dumps(row_struct(specs).jsonValue(), separators=(",", ":"))
    with_default = [s for s in specs if s.default is not None]
    if not with_default:
        return F.lit(text)
    typed = F.struct(
        *[s.convert(F.lit(s.default)).cast(s.data_type).alias(s.name) for s in with_default]
    )
    return F.concat(
        F.lit(f'{text[:-1]},"{DEFAULTS_KEY}":'),
        F.to_json(typed, DEFAULTS_JSON_OPTIONS),
        F.lit("}"),
    )


def _typed_columns(
    specs: Sequence[ColumnSpec],
    before_raw: Column | None = None,
    after_raw: Column | None = None,
    key_columns: Column | None = None,
    struct: bool = False,
) -> dict[str, Column]:
    """The typed columns of a change whose images have these columns (``key_columns``: the
    change's key, when not its own ``key_columns``; ``struct``: the images as structs)."""
    keys = F.col("key_columns") if key_columns is None else key_columns
    before_raw = (
        F.from_json(F.col("before_text"), _text_struct(specs)) if before_raw is None else before_raw
    )
    after_raw = (
        F.from_json(F.col("after_text"), _text_struct(specs)) if after_raw is None else after_raw
    )
    before, before_err, _ = _typed_image(F.col("before_text"), specs, before_raw, struct)
    after, after_err, unavailable = _typed_image(F.col("after_text"), specs, after_raw, struct)
    return {
        "before": before,
        "after": after,
        "row_schema": _row_schema(specs),
        "unavailable": unavailable,
        "error": F.coalesce(
            after_err,
            before_err,
            _key_error(specs, keys),
            _null_key_error(specs, keys, before_raw, after_raw),
            _identity_error(keys),
        ),
    }


TableKeys = Callable[[str], tuple[str, ...] | None]
"""Looks up the primary key a CREATE TABLE recorded for a table (None: none recorded)."""


def _no_keys(_: str) -> tuple[str, ...] | None:
    return None


def decode_envelopes(
    raw: DataFrame,
    format_name: str = "debezium",
    options: DecodeOptions | None = None,
    *,
    lean: bool = True,
    learn: bool = False,
) -> DataFrame:
    """Raw records -> envelopes (persisted: typing and DDL handling read them again).
    ``learn``: see :func:`envelopes`.

    With ``auto`` the records tagged with their format stay persisted until
    :func:`release_detection` (call it once a job has read ``env``): no job of its own
    materializes the envelopes.

    ``lean``: the cache holds a record's own text (:data:`RECORD_TEXT`) only where its envelope
    already has an error. A change that fails later (a value that does not fit its column, a
    DDL record the target refuses) gets it back from ``raw`` by its lineage when it is
    quarantined (:func:`with_records`): one more read of the input, in a batch with such
    changes only. Else the cache held every message twice, as text and parsed; at 10^6
    Debezium messages of 2 KB that was 2 GB more in a 4 GB driver, and an apply 10-16 % slower
    (bench/README.md, issue 36 step 16).
    """
    options = options or DecodeOptions()
    env, tagged = envelopes(raw, format_name, options, learn)
    env = configured_keys(env, options)
    if lean:
        env = text_where_bad(env)
    env = env.persist(StorageLevel.MEMORY_AND_DISK)
    if lean:
        setattr(env, _RAW_RECORDS, raw)
    if tagged is not None:
        setattr(env, _DETECTION, tagged)
    return env


RECORD_TEXT = ("raw", "key", "headers")
"""A change's copy of its record as read, for the quarantine (:data:`cdclake.model.RAW_SCHEMA`)."""


def text_where_bad(df: DataFrame) -> DataFrame:
    """``df`` with its :data:`RECORD_TEXT` only on rows with an ``error``: the quarantine's copy
    of a record, which a good change need not carry into a cache."""
    bad = F.col("error").isNotNull()
    return df.withColumns({c: F.when(bad, F.col(c)) for c in RECORD_TEXT})


_RAW_RECORDS = "_cdclake_raw_records"
_LINEAGE_IDS = ("_lineage_source", "_lineage_partition", "_lineage_offset")


def _lineage_ids(df: DataFrame) -> DataFrame:
    lineage = F.col("lineage")
    return df.withColumns(
        {
            "_lineage_source": lineage["source"],
            "_lineage_partition": F.coalesce(lineage["partition"], F.lit(-1)),  # a file's: null
            "_lineage_offset": lineage["offset"],
        }
    )


def raw_records(changes: DataFrame) -> DataFrame | None:
    """The raw records the lean envelopes behind ``changes`` were decoded from (None: the
    changes hold every record's text themselves, or are not :func:`decode`'s)."""
    env = getattr(changes, _CACHED_INPUT, None)
    return None if env is None else getattr(env, _RAW_RECORDS, None)


def with_records(bad: DataFrame, records: DataFrame | None) -> DataFrame:
    """``bad`` (changes with an error) with their records' text (:data:`RECORD_TEXT`) where
    the lean envelopes left it out, read again from ``records`` (:func:`raw_records`) by
    lineage. A job finds whether any is missing; only then is the input read again, its rows
    of those lineages alone kept (one per lineage: a record is where its lineage says)."""
    if records is None:
        return bad
    lost = bad.filter(F.col("raw").isNull())  # a Kafka tombstone's is null, and stays so
    if lost.isEmpty():
        return bad
    ids = list(_LINEAGE_IDS)
    wanted = _lineage_ids(lost).select(*ids).distinct()
    found = (
        _lineage_ids(records)
        .select(*ids, *RECORD_TEXT)
        .join(wanted, ids, "left_semi")
        .dropDuplicates(ids)
    )
    restored = _lineage_ids(lost).drop(*RECORD_TEXT).join(found, ids, "left").drop(*ids)
    return bad.filter(F.col("raw").isNotNull()).unionByName(restored.select(*bad.columns))


_DETECTION = "_cdclake_detection"


def release_detection(env: DataFrame) -> None:
    """Release the tagged raw records ``auto`` kept for ``env`` (a no-op otherwise)."""
    tagged = getattr(env, _DETECTION, None)
    if tagged is not None:
        tagged.unpersist()
        delattr(env, _DETECTION)


def mark_errors(env: DataFrame, errors: dict[tuple[object, ...], str]) -> DataFrame:
    """Set ``error`` on the envelopes with the given lineages (a few DDL records at most)."""
    if not errors:
        return env
    error = F.col("error")
    for (source, partition, offset), reason in errors.items():
        hit = (
            F.col("lineage.source").eqNullSafe(F.lit(source))
            & F.col("lineage.partition").eqNullSafe(F.lit(partition))
            & F.col("lineage.offset").eqNullSafe(F.lit(offset))
        )
        error = F.when(hit, F.lit(reason)).otherwise(error)
    return env.withColumn("error", error)


def type_changes(
    env: DataFrame,
    options: DecodeOptions | None = None,
    table_schemas: TableSchemas = _no_tables,
    table_keys: TableKeys = _no_keys,
    known: KnownGroups | None = None,
    struct_images: bool = False,
    scanned: Scan | None = None,
) -> DataFrame:
    """Envelopes -> canonical changes: type the row images, one small job to find schemas.

    ``known``: learns this batch's groups and their plans, for :func:`type_known` to type later
    batches in one pass. ``struct_images``: as :func:`type_known`'s. ``scanned``: the
    envelopes' :func:`scan`, when the caller made it (to apply the batch's DDL first).
    """
    options = options or DecodeOptions()
    typable, imageless = _typable(), _imageless()
    scanned = scanned or scan(env, learn_lanes=known is not None)
    groups = sorted(scanned.groups, key=lambda g: (g[_FORMAT], g["table"], g["schema_token"] or ""))
    inferred = scanned.inferred
    if inferred is None:
        inferred = infer_types(env.filter(typable & F.col("schema_token").isNull()))
    group_specs: list[list[ColumnSpec] | DecodeError] = []
    for g in groups:
        try:
            group_specs.append(
                _specs_for(
                    formats.get(g[_FORMAT]),
                    g["table"],
                    g["schema_token"],
                    options,
                    table_schemas,
                    inferred,
                )
            )
        except DecodeError as e:
            group_specs.append(e)
    # all versions of a table's rows are cast to one type per column: the table's, where it
    # exists, so that a value that does not fit it is quarantined here, not failing the write
    settled_per_table = {
        table: settled_types(
            [  # the version most changes have first: a stray message does not decide
                s
                for g, s in sorted(
                    zip(groups, group_specs, strict=True), key=lambda gs: -int(gs[0]["n"])
                )
                if g["table"] == table and not isinstance(s, DecodeError)
            ],
            table_schemas(table),
        )
        for table in {g["table"] for g in groups}
    }
    conflicts = [
        None
        if isinstance(specs, DecodeError)
        else type_conflict(specs, settled_per_table[g["table"]])
        for g, specs in zip(groups, group_specs, strict=True)
    ]
    _check_tables(groups, conflicts, table_schemas)
    plans = [
        _plan(g, specs, conflict, settled_per_table[g["table"]], table_keys, options)
        for g, specs, conflict in zip(groups, group_specs, conflicts, strict=True)
    ]
    if known is not None:
        known.learn(groups, plans)
    members = [
        _Member(g[_FORMAT], g["table"], g["schema_token"], p)
        for g, p in zip(groups, plans, strict=True)
    ]
    return _typed(env, members, typable, imageless, struct_images=struct_images)


def _lanes_seen() -> Column:
    """The lanes of a group's messages (:data:`LANE`), with the key's columns they decide (a
    key configured by the user decides nothing)."""
    lane = F.col(LANE)
    mine = lane.isNotNull() & (F.col("key_source") != KeySource.CONFIG)
    seen = lane.withField("key_columns", F.col("key_columns"))
    return F.collect_set(F.when(mine, seen)).alias("lanes")


def type_known(env: DataFrame, known: KnownGroups, struct_images: bool = False) -> DataFrame:
    """Envelopes -> canonical changes in one pass, with the plans ``known`` holds from earlier
    batches: no job runs here, and the envelopes need not be cached.

    ``struct_images``: when every known group is typed by one plan (one table, or tables of
    one layout), ``before`` and ``after`` are structs of that plan's columns and types rather
    than :data:`~cdclake.model.CHANGE_SCHEMA`'s VARIANTs, for a reader that takes the images'
    columns by name (:func:`cdclake.apply.apply_changes` does): no VARIANT is built per row
    only to be cast back to the same types at the write.

    A change these plans cannot type exactly as :func:`type_changes` would (a schema version or
    a table not seen before, a schemaless image with a key its plan lacks, a change of
    keyedness) and every
    DDL record get the error :data:`NEW_SCHEMA`; when there is any, the batch must be decoded
    again with :func:`type_changes` (``apply_changes(..., one_pass=True)`` tells).
    """
    typable, imageless = _typable(), _imageless()
    members = [
        _Member(fmt, table, token, plan, keyed)
        for (fmt, table, token), (keyed, plan) in sorted(known.plans.items(), key=_group_order)
    ]
    unknown = F.col("error").isNull() & (F.col("op") == Op.DDL)
    if REPARSE in env.columns:
        unknown = unknown | F.col(REPARSE)
    return _typed(env, members, typable, imageless, unknown, struct_images)


def _group_order(item: tuple[tuple[str, str, str | None], object]) -> tuple[object, ...]:
    """A known group's place in a stable order (a schemaless group's token is None)."""
    fmt, table, token = item[0]
    return fmt, table, token is not None, token or ""


LANES_MAX = 1000
"""The most lanes a stream learns (each is a few comparisons per message)."""

IMAGE_FIELDS_MAX = 1000
"""The most columns the row images of a one-pass batch are parsed into (see
:func:`one_pass_envelopes`); with more, the images are parsed from their text."""


def one_pass_envelopes(
    raw: DataFrame, format_name: str, options: DecodeOptions, known: KnownGroups
) -> tuple[DataFrame, DataFrame | None]:
    """:func:`envelopes` for :func:`type_known`: where the format offers it, the row images
    are read in the message's own parse, as the columns ``known``'s plans type (no text of the
    images is made and parsed again)."""
    raw = with_order(raw)
    resolved = _resolved(raw, format_name)
    if resolved is None:
        return _mixed_envelopes(raw, options)
    fmt = formats.get(resolved)
    images = known.images(fmt.name)
    if images is not None:
        lanes = known.lanes(fmt.name)

        def build(r: DataFrame) -> DataFrame | None:
            env = fmt.envelope_with_images(r, options, images, lanes)
            return None if env is None else env.withColumn(_FORMAT, F.lit(fmt.name))

        key = ("envelope with images", fmt.name, repr(options), images.json(), lanes)
        env = replayed(key, raw, build)
        if env is not None:
            return env, None
    return envelopes(raw, resolved, options)


@dataclass(frozen=True)
class _Member:
    """A ``(format, table, schema_token)`` group and its plan; ``keyed``: whether its rows
    carry a key (only checked in one pass: a row that differs is not of the group)."""

    fmt: str
    table: str
    token: str | None
    plan: _Plan
    keyed: bool | None = None


def _typable() -> Column:
    has_image = F.col("before_text").isNotNull() | F.col("after_text").isNotNull()
    return F.col("error").isNull() & F.col("op").isin(*DATA_OPS) & has_image


def _imageless() -> Column:
    has_image = F.col("before_text").isNotNull() | F.col("after_text").isNotNull()
    no_image = F.col("error").isNull() & F.col("op").isin(*DATA_OPS) & ~has_image
    return F.when(
        no_image & (F.col("op") == Op.DELETE) & (F.size("key_columns") == 0), NO_IDENTITY
    ).when(no_image, F.concat(F.lit("an "), F.col("op"), F.lit(" without a row image")))


def _typed(
    env: DataFrame,
    members: Sequence[_Member],
    typable: Column,
    imageless: Column,
    unknown: Column | None = None,
    struct_images: bool = False,
) -> DataFrame:
    """The changes of ``env``, each typable row typed by the plan of its group in ``members``.
    ``unknown`` (one pass): rows that must be typed in two passes, besides the typable rows of
    no group, get the error :data:`NEW_SCHEMA`. ``struct_images``: see :func:`type_known`.

    The expressions are built once per query for the same groups (:func:`replayed`): what they
    depend on is each group and its plan's signature (format, token, options, fitted column
    types, keys; an error plan's names its error), whether ``unknown`` is given (it,
    ``typable`` and ``imageless`` depend on ``env``'s columns only) and ``struct_images``."""
    key = (
        "typed",
        tuple((m.fmt, m.table, m.token, m.keyed, m.plan.signature) for m in members),
        unknown is None,
        struct_images,
    )
    return replayed(
        key, env, lambda e: _typed_plan(e, members, typable, imageless, unknown, struct_images)
    )


def _typed_plan(
    env: DataFrame,
    members: Sequence[_Member],
    typable: Column,
    imageless: Column,
    unknown: Column | None = None,
    struct_images: bool = False,
) -> DataFrame:
    plans = [m.plan for m in members]
    # Groups that type their rows alike (tables of one layout: shards, tenants, partitions)
    # share one plan: each row finds its plan once (``_plan``), and each output column picks
    # that plan's expression. Expressions are built per plan, not per table, so the driver's
    # planning and Spark's analysis do not grow with the number of tables of one layout.
    # (A union of one filtered copy per group would scan the envelopes once per group.)
    shapes: dict[tuple[object, ...], int] = {}
    for p in plans:
        shapes.setdefault(p.signature, len(shapes))
    by_shape = {shapes[p.signature]: p for p in plans}
    # a row's plan: one test per (format, token, plan), its tables as a set
    tests: dict[tuple[str, str | None, int, bool | None], list[str]] = {}
    for m in members:
        tests.setdefault((m.fmt, m.token, shapes[m.plan.signature], m.keyed), []).append(m.table)
    index = F.lit(None).cast("int")
    for (fmt_name, token, i, keyed), tables in reversed(tests.items()):
        in_group = (
            (F.col(_FORMAT) == fmt_name)
            & F.col("schema_token").eqNullSafe(F.lit(token))
            & F.col("table").isin(*tables)
        )
        if keyed is not None:
            in_group = in_group & ((F.size("key_columns") > 0) == F.lit(keyed))
        index = F.when(typable & in_group, F.lit(i)).otherwise(index)
    out: dict[str, Column] = {
        f.name: F.col(f.name) if f.name in env.columns else F.lit(None).cast(f.dataType)
        for f in CHANGE_SCHEMA.fields
    }
    out["error"] = F.coalesce(F.col("error"), imageless)
    parsed: dict[str, Column] = {}  # each plan's images parsed once, in a projection of its own
    # one plan for every row: its images as structs of its types, when the caller reads them
    # so (no VARIANT built here and cast back at the write)
    one = by_shape[0] if len(by_shape) == 1 else None
    image_type = (
        row_struct(one.specs) if struct_images and one and one.error is None and one.specs else None
    )
    if image_type is not None:
        out["before"] = out["after"] = F.lit(None).cast(image_type)
    images = all(c in env.columns for c in IMAGE_COLUMNS)  # parsed with the message
    for i, plan in sorted(by_shape.items()):
        mine = F.col("_plan") == i
        key_columns = F.col("key_columns")
        if plan.keys is not None:
            # no key in the message or the configuration: the CREATE TABLE seen earlier names it
            key_columns = F.array(*map(F.lit, plan.keys))
            out["key_columns"] = F.when(mine, key_columns).otherwise(out["key_columns"])
            out["key_source"] = F.when(mine, F.lit(KeySource.DDL)).otherwise(out["key_source"])
        if plan.error is not None:
            out["error"] = F.when(mine, F.lit(plan.error)).otherwise(out["error"])
            continue
        for image in ("before", "after"):
            parsed[f"_{image}{i}"] = F.when(
                mine,
                F.col(f"{image}_image")
                if images
                else F.from_json(F.col(f"{image}_text"), _text_struct(plan.specs)),
            )
        typed_columns = _typed_columns(
            plan.specs,
            F.col(f"_before{i}"),
            F.col(f"_after{i}"),
            key_columns,
            struct=image_type is not None,
        )
        for name, typed in typed_columns.items():
            out[name] = F.when(mine, typed).otherwise(out[name])
    if unknown is not None:
        # after the plans: a row of a known group that must be read again (the format's
        # ``REPARSE``) is not typed from the images of the one-pass parse, nor is a schemaless
        # image with a key its plan does not type
        new = (typable & F.col("_plan").isNull()) | unknown
        for i in sorted({shapes[m.plan.signature] for m in members if m.token is None}):
            new = new | ((F.col("_plan") == i) & _new_keys(by_shape[i].specs))
        out["error"] = F.when(new, F.lit(NEW_SCHEMA)).otherwise(out["error"])
    staged = env.withColumn("_plan", index)
    if parsed:
        staged = staged.withColumns(parsed)
    types = {f.name: f.dataType for f in CHANGE_SCHEMA.fields}
    if image_type is not None:
        types["before"] = types["after"] = image_type
    return staged.select(*[out[n].cast(t).alias(n) for n, t in types.items()])


def _new_keys(specs: Sequence[ColumnSpec]) -> Column:
    """Whether a row image (its text) has a key none of ``specs`` types: a schemaless message
    with a column its plan was not made for. Keys are compared exactly, as the parse reads them."""
    names = F.array(*[F.lit(s.name) for s in specs]).cast("array<string>")

    def new(text: str) -> Column:
        keys = F.json_object_keys(F.col(text))
        return F.coalesce(F.size(F.array_except(keys, names)) > 0, F.lit(False))

    return new("before_text") | new("after_text")


@dataclass(frozen=True)
class _Plan:
    """How the rows of one ``(format, table, schema_token)`` group are typed: ``specs`` fitted
    to the settled types, or ``error`` for every row; ``keys`` replaces a keyless row's key."""

    signature: tuple[object, ...]
    specs: list[ColumnSpec]
    error: str | None = None
    keys: tuple[str, ...] | None = None


class NeedsTwoPasses(Exception):
    """A batch typed by :func:`type_known` holds changes of a group it does not know."""

    def __init__(self, changes: int) -> None:
        super().__init__(f"{changes} changes need two passes")
        self.changes = changes


@dataclass
class KnownGroups:
    """The ``(format, table, schema_token)`` groups a stream has typed, with their plans: what
    lets :func:`type_known` type a later batch in one pass, without collecting its groups first.

    A plan holds the types settled for its table when it was made. They stay valid while cdclake
    is the table's only writer: a batch writes a table with the types it settled on, and only DDL
    changes them otherwise (a batch with DDL goes through :func:`type_changes`, which starts
    over). A group without a schema token (schemaless messages: CKafka's rows, a schemaless
    Debezium payload, canal without ``mysqlType``) is typed by its table's columns, and by the
    types its values suggest only for keys the table lacks: its plan stays valid for images
    whose keys are all columns of the plan, and :func:`type_known` sends any other image through
    two passes (:func:`_new_keys`).
    """

    plans: dict[tuple[str, str, str | None], tuple[bool, _Plan]] = field(default_factory=dict)
    _lanes: dict[tuple[str, int], Lane | None] = field(default_factory=dict)
    """(format, lane hash) -> the lane; None: seen with two different outcomes, never used."""

    def __bool__(self) -> bool:
        return bool(self.plans)

    def learn(self, groups: Sequence[Row], plans: Sequence[_Plan]) -> None:
        """Keep the plans of a batch typed in two passes; they replace those of its tables.
        The lanes its groups' messages took (:func:`envelopes` with ``learn``) are kept too."""
        tables = {g["table"] for g in groups}
        self.plans = {k: v for k, v in self.plans.items() if k[1] not in tables}
        for g, p in zip(groups, plans, strict=True):
            if g["schema_token"] is None and p.error is not None:
                continue  # a schemaless group's error came from its values: not for later rows
            self.plans[(g[_FORMAT], g["table"], g["schema_token"])] = (bool(g["keyed"]), p)
        for g in groups:
            for seen in g.asDict().get("lanes") or ():
                self._learn_lane(g[_FORMAT], g["schema_token"], seen)

    def _learn_lane(self, fmt: str, token: str | None, seen: Row) -> None:
        if token is None or seen["connector"] is None or len(self._lanes) >= LANES_MAX:
            return
        keys = None if seen["plain_key"] else tuple(seen["key_columns"])
        lane = Lane(int(seen["hash"]), int(seen["check"]), token, seen["connector"], keys)
        at = (fmt, lane.hash)
        if self._lanes.setdefault(at, lane) != lane:
            self._lanes[at] = None  # one start, two outcomes: the start does not decide them

    def lanes(self, format_name: str) -> tuple[Lane, ...]:
        """The lanes of ``format_name`` whose schema token one of the plans types."""
        tokens = {token for fmt, _, token in self.plans if fmt == format_name}
        return tuple(
            lane
            for (fmt, _), lane in sorted(self._lanes.items(), key=lambda kv: kv[0])
            if fmt == format_name and lane is not None and lane.schema_token in tokens
        )

    def forget(self) -> None:
        self.plans.clear()
        self._lanes.clear()

    def images(self, format_name: str) -> StructType | None:
        """The columns of the row images the plans of ``format_name`` type, as their converters
        read them (:attr:`ColumnSpec.parse_type`): what a message's parse reads its images as
        (:func:`one_pass_envelopes`). None: no plan, or too many columns, or two that differ
        only in case (a parse reads them exactly, a struct field is found whatever its case),
        or a column two plans parse differently (a Decimal's variant and a string's text: each
        plan then parses the images' text its own way), or a plan of schemaless messages (their
        images' keys are checked against the plan's columns, which needs the text)."""
        fields: dict[str, StructField] = {}
        for (fmt, _, token), (_, plan) in self.plans.items():
            if fmt != format_name:
                continue
            if token is None:
                return None
            for s in plan.specs:
                mine = fields.setdefault(s.name.lower(), StructField(s.name, s.parse_type))
                if (mine.name, mine.dataType) != (s.name, s.parse_type):
                    return None
        if not fields or len(fields) > IMAGE_FIELDS_MAX:
            return None
        return StructType(list(fields.values()))


def _plan(
    group: Row,
    specs: list[ColumnSpec] | DecodeError,
    conflict: str | None,
    settled: dict[str, DataType],
    table_keys: TableKeys,
    options: DecodeOptions,
) -> _Plan:
    keys = None if group["keyed"] else table_keys(group["table"]) or None
    # names no table holds (``Id`` beside ``id``) fail every row here: a parse of such an image
    # cannot even reference its columns
    error = (
        str(specs)
        if isinstance(specs, DecodeError)
        else conflict or name_problem(row_struct(specs))
    )
    if error is not None or isinstance(specs, DecodeError):
        return _Plan(("error", error, keys), [], error=error, keys=keys)
    fitted = [fit_spec(s, settled[s.name.lower()]) for s in specs]
    # what the expressions depend on: the format and the token (or, without one, the column
    # types, from which the format's specs follow), the options the specs were made with (the
    # encoding of binary values, the source's time zone...), the fitted types and the key
    columns = tuple(
        (s.name, s.data_type.simpleString(), s.expected, s.default, s.nullable) for s in fitted
    )
    signature = (group[_FORMAT], group["schema_token"], repr(options), columns, keys)
    return _Plan(signature, fitted, keys=keys)


def decode(
    raw: DataFrame,
    format_name: str = "debezium",
    options: DecodeOptions | None = None,
    table_schemas: TableSchemas = _no_tables,
    table_keys: TableKeys = _no_keys,
) -> DataFrame:
    """Raw records -> canonical changes (:data:`cdclake.model.CHANGE_SCHEMA`).

    Runs one small job to find the distinct row schemas of the input; the result is a lazy
    DataFrame over a persisted intermediate, which :func:`release` frees (``apply_changes``
    does that itself).

    >>> changes = decode(sources.raw_from_lines(spark, lines), "debezium")  # doctest: +SKIP
    """
    env = decode_envelopes(raw, format_name, options)
    try:
        changes = type_changes(env, options, table_schemas, table_keys)  # its collect reads env
    except BaseException:
        env.unpersist()
        raise
    finally:
        release_detection(env)
    return hand_over(changes, env)


_CACHED_INPUT = "_cdclake_cached_input"


def hand_over(changes: DataFrame, env: DataFrame) -> DataFrame:
    """``changes``, made responsible for the persisted envelopes ``env`` it reads: whoever
    caches the changes frees them with :func:`release`."""
    setattr(changes, _CACHED_INPUT, env)
    return changes


def release(changes: DataFrame) -> None:
    """Release the cached envelopes :func:`decode` keeps for ``changes`` (a no-op for any other
    DataFrame). :func:`cdclake.apply.batch.apply_changes` calls it once it has cached the
    changes itself; call it when you consume the changes another way and are done with them."""
    env = getattr(changes, _CACHED_INPUT, None)
    if env is not None:
        env.unpersist()
        delattr(changes, _CACHED_INPUT)
