"""What a format module provides, and what the core does with it.

A format turns raw records (:data:`cdclake.model.RAW_SCHEMA`) into *envelopes*
(:data:`ENVELOPE_SCHEMA`): the canonical change minus the typed row images, which are still JSON
text plus a ``schema_token`` that says how to type them. The core then collects the few distinct
``(table, schema_token)`` pairs of a batch on the driver, asks the format for the
:class:`ColumnSpec` list of each, and types the row images with column expressions only.

A format overrides:

- :attr:`Format.detect_fields` and :meth:`Format.detect_parsed`: the few fields that tell a
  message of mine, and the test on them (for ``--format auto``)
- :meth:`Format.envelope`: raw records -> envelopes (explode multi-row messages here)
- :meth:`Format.column_specs`: one ``schema_token`` -> the columns of the row image
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import InitVar, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql import Column, DataFrame
from pyspark.sql.types import (
    ArrayType,
    DataType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from cdclake.model import LINEAGE_TYPE, POSITION_TYPE

if TYPE_CHECKING:
    from cdclake.formats.encode import EncodeOptions

Converter = Callable[[Column], Column]
"""Raw text of one JSON value -> a typed Column; null when the text does not fit the type.

The raw text is what ``from_json(..., StringType)`` renders: a JSON string's contents unquoted, a
number's or boolean's literal text, a nested object's or array's JSON text; null for JSON null.
"""


@dataclass(frozen=True)
class ColumnSpec:
    """One column of a row image: its Spark type and how to get there from raw JSON text.

    ``expected`` names the source type in error messages ("INT32", "decimal(10,2)").
    ``is_unavailable`` flags a placeholder that means "value not sent, keep the stored one".
    ``default`` is the source column's default as raw text (what ``convert`` reads), if known.
    ``parse_type`` is what the row image's value is parsed as, so what ``convert`` and
    ``is_unavailable`` read: STRING (the raw text, see :data:`Converter`) or VARIANT, where the
    JSON token's type decides (a Kafka Connect ``Decimal`` is base64 text or a number). A
    converter of a VARIANT takes a STRING too (the ``default``), as the text of a JSON string.
    """

    name: str
    data_type: DataType
    convert: Converter
    expected: str
    is_unavailable: Callable[[Column], Column] | None = None
    nullable: bool = True
    default: str | None = None
    parse_type: DataType = field(default_factory=StringType)


@dataclass(frozen=True)
class DecodeOptions:
    """Options every format may read (all optional). ``keys``: table -> its key columns, for
    messages that carry none (``primary_keys``, its earlier name, is taken too)."""

    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    tinyint1_as_boolean: bool = False
    source_timezone: str = "UTC"
    binary_encoding: str = "latin1"
    """How formats that write binary values as text encode them (canal, CKafka): ``latin1``
    (ISO-8859-1, one character per byte: what canal writes), ``base64`` or ``hex``."""
    primary_keys: InitVar[dict[str, tuple[str, ...]] | None] = None

    def __post_init__(self, primary_keys: dict[str, tuple[str, ...]] | None) -> None:
        if primary_keys:  # the earlier name of ``keys``
            object.__setattr__(self, "keys", {**primary_keys, **self.keys})


ENVELOPE_SCHEMA = StructType(
    [
        StructField("table", StringType()),
        StructField("op", StringType()),
        StructField("key_columns", ArrayType(StringType())),
        StructField("key_source", StringType()),
        StructField("before_text", StringType()),  # JSON object text of the before image
        StructField("after_text", StringType()),  # JSON object text of the after image
        StructField("schema_token", StringType()),  # how to type the images; null: from table
        StructField("position", POSITION_TYPE),
        StructField("seq", LINEAGE_TYPE),
        StructField("source_ts", TimestampType()),
        StructField("lineage", LINEAGE_TYPE),
        StructField("raw", StringType()),
        StructField("key", StringType()),  # the Kafka record's (see select_envelope)
        StructField("headers", MapType(StringType(), StringType())),
        StructField("detail", StringType()),
        StructField("meta", MapType(StringType(), StringType())),
        StructField("error", StringType()),
    ]
)
ENVELOPE_COLUMNS: tuple[str, ...] = tuple(ENVELOPE_SCHEMA.fieldNames())


class Format(ABC):
    """Base of every format. Subclasses are registered in :mod:`cdclake.formats`."""

    name: ClassVar[str]
    description: ClassVar[str]
    transactions: ClassVar[str | None] = None
    """How the format marks source transactions (:data:`cdclake.model.TRANSACTION_IDS` or
    :data:`cdclake.model.TRANSACTION_MARKERS`); None: it does not (``--consistent`` refuses it)."""

    detect_fields: ClassVar[str]
    """DDL of the few fields :meth:`detect_parsed` reads (top-level, or one level down), every
    leaf a STRING. ``--format auto`` parses each message once with the merge of every format's
    fields (:func:`detection_type`), a light parse that materializes nothing else."""

    @abstractmethod
    def detect_parsed(self, fields: Column) -> Column:
        """A boolean Column: is this message, parsed with :func:`detection_type`, one of mine?

        Must not overlap with the other formats' detection.
        """

    def detect(self, value: Column) -> Column:
        """A boolean Column: does this raw JSON value (text) look like a message of this format?"""
        from pyspark.sql import functions as F

        return self.detect_parsed(F.from_json(value, self.detect_fields))

    @abstractmethod
    def envelope(self, raw: DataFrame, options: DecodeOptions) -> DataFrame:
        """Raw records (:data:`cdclake.model.RAW_SCHEMA`) -> envelopes (:data:`ENVELOPE_SCHEMA`).

        Every raw record yields at least one envelope row: a change, a control record, or a row
        with ``error`` set (quarantine). Use :func:`select_envelope` to finish.
        """

    def typed_spec(
        self, name: str, data_type: DataType, options: DecodeOptions | None = None
    ) -> ColumnSpec | None:
        """A column of a message without types, whose Spark type the core already knows
        (from the table, or inferred). None: the core's plain text casts
        (:func:`cdclake.decode.text_spec`)."""
        return None

    def envelope_with_images(
        self,
        raw: DataFrame,
        options: DecodeOptions,
        images: StructType,
        lanes: Sequence[Lane] = (),
    ) -> DataFrame | None:
        """:meth:`envelope`, with each row image read in the message's own parse as ``images``
        (a struct of STRING fields: every column the caller has a typing plan for) into the
        extra columns :data:`IMAGE_COLUMNS`; ``before_text`` and ``after_text`` then only tell
        whether there is an image (the text ``{}``), and :data:`REPARSE` marks the messages whose
        value did not parse that way (an image that is not a JSON object, invalid JSON), which
        the caller decodes again from :meth:`envelope`. None: the format does not offer this
        (the caller parses the images' text).

        ``lanes``: what :meth:`learning_envelope` learned; a message of one of them may take a
        shorter way to the same envelope row."""
        return None

    def learning_envelope(self, raw: DataFrame, options: DecodeOptions) -> DataFrame | None:
        """:meth:`envelope` plus the extra column :data:`LANE`: for each message that a later
        :meth:`envelope_with_images` could read by a :class:`Lane`, a struct of the lane's
        ``hash`` and ``check``, ``plain_key`` (the key's columns are each message's own) and
        ``connector``; else null. None: the format has no lanes."""
        return None

    @abstractmethod
    def column_specs(self, schema_token: str, options: DecodeOptions) -> list[ColumnSpec]:
        """The columns of a row image whose envelope carried ``schema_token``.

        Raises :class:`cdclake.errors.DecodeError` when the token describes a type the format
        cannot map; the message names the column and the type.
        """

    def encode(self, changes: DataFrame, options: EncodeOptions) -> DataFrame:
        """Canonical changes -> messages of this format
        (:data:`cdclake.formats.encode.MESSAGE_SCHEMA`): the inverse of decoding, for every
        field the format carries."""
        from cdclake.errors import ConfigError

        raise ConfigError(f"format {self.name!r} has no encoder")


MALFORMED = "_malformed"
IMAGE_COLUMNS = ("before_image", "after_image")
"""The row images :meth:`Format.envelope_with_images` adds, parsed (structs of STRING)."""
REPARSE = "reparse"
"""The column :meth:`Format.envelope_with_images` adds: the message needs
:meth:`Format.envelope`."""
LANE = "_lane"
"""The column :meth:`Format.learning_envelope` adds: the message's :class:`Lane` key."""


@dataclass(frozen=True)
class Lane:
    """Messages whose text starts the same way, and whose envelope rows therefore share what
    that start decides: their ``schema_token``, their source's ``connector`` and their key's
    columns (None: each message's own key tells them). A format that offers lanes
    (:meth:`Format.learning_envelope`) reads a message of a known lane without what its generic
    envelope spends on those: the schema section and the key are not parsed, and the position
    is read the connector's way only. ``hash`` and ``check``: two hashes of the start (64 and
    32 bits), which a message must match both."""

    hash: int
    check: int
    schema_token: str
    connector: str
    key_columns: tuple[str, ...] | None


def json_list_token(schema_token: str, what: str) -> list[Any]:
    """A schema token that holds a JSON list (field schemas, columns); DecodeError otherwise."""
    import json

    from cdclake.errors import DecodeError

    try:
        items = json.loads(schema_token)
    except json.JSONDecodeError as e:
        raise DecodeError(f"{what} is not JSON: {schema_token[:200]!r}: {e}") from None
    if not isinstance(items, list):
        raise DecodeError(f"{what} must be a JSON list, got {schema_token[:200]!r}")
    return items


def input_order() -> Column:
    """The raw record's input order (``order``, see :data:`cdclake.model.INPUT_ORDER_DOC`): the
    position of a change whose source gives none, or the tie-breaker inside one that does."""
    from pyspark.sql import functions as F

    return F.col("order")


TOMBSTONE = "_tombstone"
"""Column :func:`parse_value` adds: the record's value is null (a Kafka tombstone)."""


def parse_value(
    raw: DataFrame,
    schema: str | StructType,
    record_fields: bool = False,
    *,
    into: str = "_v",
    where: Column | None = None,
) -> DataFrame:
    """``raw`` plus ``_v`` (or ``into``): the value parsed ONCE with ``schema`` (a DDL string
    that ends with ``_malformed STRING``, which holds the text of a value that is not valid JSON),
    and :data:`TOMBSTONE` (unless ``raw`` has it: a second parse of the same records).

    ``where``: parse only the records it holds for (the others get a null struct): a format
    that reads some of its messages with another format's schema parses them in the same
    projection, instead of a filtered copy of the input (a filter on a parsed field makes Spark
    parse every record again below it).

    A ``nested`` record (a line that is a record object) is parsed as a whole, with ``schema``
    under ``value``: the value is not re-serialized to text and parsed again. Only ``raw`` is
    read (it is the value itself when not nested); a record whose ``value`` is not an object (a
    JSON string holding the message, say) falls back to parsing that text.

    ``record_fields``: the format reads ``key`` and ``headers``; a record object's are then read
    in the same parse (the columns are replaced), not by a parse of their own.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    from cdclake.model import RAW_SCHEMA
    from cdclake.sources import record_field, value_text

    options = {"columnNameOfCorruptRecord": MALFORMED}
    value_type = StructType.fromDDL(schema) if isinstance(schema, str) else schema
    assert isinstance(value_type, StructType), schema
    inner = StructType([f for f in value_type.fields if f.name != MALFORMED])
    own = ("key", "headers") if record_fields else ()
    record_type = StructType(
        [
            *[RAW_SCHEMA[name] for name in own],
            StructField("value", inner),
            StructField(MALFORMED, StringType()),
        ]
    )
    nested = F.col("nested") if where is None else F.col("nested") & where
    staging = f"{into}_rec"
    staged = raw.withColumn(
        staging, F.when(nested, F.from_json(F.col("raw"), record_type, options))
    )
    rec = F.col(staging)
    unwrapped = rec["value"].withField(MALFORMED, F.lit(None).cast("string"))
    as_text = value_text(F.col("raw"))  # not raw's ``value``: that column is computed eagerly
    # a value the record's parse left null is a tombstone only if it is JSON null: Spark keeps
    # the other fields of a record whose value failed to parse (partial results)
    use_rec = nested & rec[MALFORMED].isNull() & (rec["value"].isNotNull() | as_text.isNull())
    # a line that looked like a record object but is not valid JSON is not a tombstone (a record
    # whose value is a string or a number did not fit ``record_type`` either, but has a text)
    broken = nested & rec[MALFORMED].isNotNull() & as_text.isNull()
    # a record read whole gives its key and headers; one whose value did not parse reads them
    # on its own; a Kafka record has them as columns
    fields = [
        F.when(use_rec, rec[name])
        .when(nested, record_field(F.col("raw"), name))
        .otherwise(F.col(name))
        .alias(name)
        for name in own
    ]
    value = (
        F.when(use_rec, unwrapped)
        .when(broken, F.from_json(F.col("raw"), value_type, options))
        .otherwise(F.from_json(as_text, value_type, options))
    )
    tombstone = (
        F.when(use_rec, rec["value"].isNull())
        .when(broken, F.lit(False))
        .otherwise(as_text.isNull())
    )
    return staged.select(
        *[c for c in raw.columns if c not in own],
        *fields,
        (value if where is None else F.when(where, value)).alias(into),
        *([] if TOMBSTONE in raw.columns else [tombstone.alias(TOMBSTONE)]),
    )


def detection_type(fmts: list[Format]) -> StructType:
    """The merge of the formats' :attr:`Format.detect_fields` (structs merged field by field)."""

    def merge(a: StructType, b: StructType) -> StructType:
        fields = {f.name: f for f in a.fields}
        for f in b.fields:
            mine = fields.get(f.name)
            if mine is None:
                fields[f.name] = f
            elif isinstance(mine.dataType, StructType) and isinstance(f.dataType, StructType):
                fields[f.name] = StructField(f.name, merge(mine.dataType, f.dataType))
            elif mine.dataType != f.dataType:
                raise TypeError(f"detection field {f.name}: {mine.dataType} against {f.dataType}")
        return StructType(list(fields.values()))

    out = StructType()
    for fmt in fmts:
        own = StructType.fromDDL(fmt.detect_fields)
        assert isinstance(own, StructType), fmt.detect_fields
        out = merge(out, own)
    return out


DETECTED = "_detected"
"""Column :func:`parse_detection` adds: the value's detection fields (null: no JSON object)."""
NO_VALUE = "_no_value"
"""Column :func:`parse_detection` adds: the record has no value (a Kafka tombstone)."""


def parse_detection(raw: DataFrame, fields: StructType) -> DataFrame:
    """``raw`` plus :data:`DETECTED` (the value parsed with ``fields`` only) and
    :data:`NO_VALUE`.

    One light parse per message: a record object is parsed as a whole with ``fields`` under
    ``value``; only a record whose value is not an object (a JSON string holding the message,
    say) falls back to the value's text. Each step is a projection of its own (a ``CASE``), so
    that Spark does not split the parse into one per field read.
    """
    from pyspark.sql import functions as F

    from cdclake.sources import value_text

    record_type = StructType([StructField("value", fields)])
    staged = raw.withColumn(
        "_drec", F.when(F.col("nested"), F.from_json(F.col("raw"), record_type))
    )
    in_record = F.col("_drec")["value"]
    use_record = F.col("nested") & in_record.isNotNull()
    text = value_text(F.col("raw"))
    return staged.select(
        *raw.columns,
        F.when(use_record, in_record).otherwise(F.from_json(text, fields)).alias(DETECTED),
        F.when(use_record, F.lit(False)).otherwise(text.isNull()).alias(NO_VALUE),
    )


def select_envelope(
    df: DataFrame, extra: dict[str, Column] | None = None, /, **columns: Column
) -> DataFrame:
    """Project ``df`` to :data:`ENVELOPE_SCHEMA`, casting each given column; missing ones null.
    ``extra``: columns kept after them as they are.

    ``key`` and ``headers`` default to the raw record's own (:data:`cdclake.model.RAW_SCHEMA`)
    where it is a Kafka record: kept for quarantine, so that a replay gives the record back
    whole. A file's line (``nested``) has them in its ``raw``; a format that read them there
    replaced the columns, which are then not the record's as read."""
    from pyspark.sql import functions as F

    record = {
        name: F.when(~F.col("nested"), F.col(name))
        for name in ("key", "headers")
        if {name, "nested"} <= set(df.columns)
    }
    out = []
    for f in ENVELOPE_SCHEMA.fields:
        col = columns.get(f.name, record.get(f.name))
        out.append((F.lit(None) if col is None else col).cast(f.dataType).alias(f.name))
    out += [c.alias(name) for name, c in (extra or {}).items()]
    return df.select(*out)


__all__ = [
    "ENVELOPE_COLUMNS",
    "ENVELOPE_SCHEMA",
    "ColumnSpec",
    "Converter",
    "DecodeOptions",
    "Format",
    "select_envelope",
]
