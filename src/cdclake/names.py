"""Column names: which a Delta table holds only with column mapping, and which none can hold.

MySQL takes any character in a backquoted column name (Paimon's tests sync a column named
``$% ^,& *(``), PostgreSQL in a quoted one. Delta refuses a few characters (``" ,;{}()\\n\\t="``)
in a table without column mapping; with it (``delta.columnMapping.mode = 'name'``) a name is
only metadata and may hold anything, so a table that needs it gets it, and keeps the source's
names exactly. A few names no table can hold as they are (:func:`name_problem`): their table's
changes are quarantined with the reason.

>>> from pyspark.sql.types import StringType, StructField, StructType
>>> needs_column_mapping(StructType([StructField("a b", StringType())]))
True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, DataType, MapType, StructType

from cdclake.model import DATA_OPS, HISTORY_COLUMNS, META_PREFIX, Op


def quote(name: str) -> str:
    """``name`` as a Spark SQL identifier: any character, a backquote doubled.

    >>> quote("a.b`c")
    '`a.b``c`'
    """
    return "`" + name.replace("`", "``") + "`"


def column(name: str) -> Column:
    """The column called ``name``, whatever it holds (``F.col("a.b")`` reads field ``b`` of
    column ``a``)."""
    return F.col(quote(name))


MAPPED_CHARACTERS = frozenset(" ,;{}()\n\t=")
"""Characters Delta refuses in a column name unless the table maps names (column mapping)."""
COLUMN_MAPPING = {
    "delta.minReaderVersion": "2",
    "delta.minWriterVersion": "5",
    "delta.columnMapping.mode": "name",
}
"""Delta column mapping by name: a column's name is only metadata, so it may hold any character
(and the column can be renamed or dropped). Turned on only for a table that needs it: readers
without column mapping read such a table wrong (the ``deltalake`` package's
``to_pyarrow_table()`` gives every column null; its ``scan()`` reads it right)."""


def field_names(data_type: DataType) -> Iterator[str]:
    """Every field name in ``data_type``, nested ones too (in structs, arrays and maps)."""
    if isinstance(data_type, StructType):
        for f in data_type.fields:
            yield f.name
            yield from field_names(f.dataType)
    elif isinstance(data_type, ArrayType):
        yield from field_names(data_type.elementType)
    elif isinstance(data_type, MapType):
        yield from field_names(data_type.keyType)
        yield from field_names(data_type.valueType)


def needs_column_mapping(schema: StructType) -> bool:
    """Whether a Delta table can hold ``schema``'s names only with column mapping.

    >>> from pyspark.sql.types import StringType, StructField
    >>> needs_column_mapping(StructType([StructField("$% ^,& *(", StringType())]))
    True
    """
    return any(not MAPPED_CHARACTERS.isdisjoint(n) for n in field_names(schema))


def mapping_properties(schema: StructType) -> dict[str, str]:
    """The properties a new table with ``schema`` needs for its names (none for most)."""
    return dict(COLUMN_MAPPING) if needs_column_mapping(schema) else {}


def name_problem(schema: StructType) -> str | None:
    """Why no Delta table can hold ``schema``'s source columns as they are named, or None.

    Any character is fine (see :data:`COLUMN_MAPPING`); what is not: an empty name, two names
    of one struct that differ only in case (Spark and Delta resolve names case-insensitively),
    and the names of cdclake's own columns (``_cdc_*``, ``__START_AT``, ``__END_AT``).

    >>> from pyspark.sql.types import IntegerType as I
    >>> name_problem(StructType([StructField("$% ^,& *(", I())])) is None
    True
    >>> name_problem(StructType([StructField("Id", I()), StructField("id", I())]))[:35]
    "column 'id' differs from column 'Id'"
    """
    for f in schema.fields:
        low = f.name.lower()
        if low.startswith(META_PREFIX) or low in {c.lower() for c in HISTORY_COLUMNS}:
            return (
                f"column {f.name!r} is named like cdclake's own columns "
                f"({META_PREFIX}*, {', '.join(HISTORY_COLUMNS)}); expected another name"
            )
    return _struct_problem(schema)


def _struct_problem(struct: StructType, parent: str | None = None) -> str | None:
    """An empty name or two names equal ignoring case among ``struct``'s fields, at any depth."""
    seen: dict[str, str] = {}
    for f in struct.fields:
        what = _label(f.name, parent)
        if not f.name:
            return f"{what} has an empty name; expected a non-empty name"
        other = seen.setdefault(f.name.lower(), f.name)
        if other != f.name:
            return (
                f"{what} differs from {_label(other, parent)} only in case; expected names "
                "unique ignoring case (Delta resolves names case-insensitively)"
            )
        for inner in _structs_in(f.dataType):
            problem = _struct_problem(inner, what)
            if problem is not None:
                return problem
    return None


def _label(name: str, parent: str | None) -> str:
    return f"column {name!r}" if parent is None else f"field {name!r} of {parent}"


def _structs_in(data_type: DataType) -> Iterator[StructType]:
    """The structs directly inside ``data_type`` (itself, or in an array or map)."""
    if isinstance(data_type, StructType):
        yield data_type
    elif isinstance(data_type, ArrayType):
        yield from _structs_in(data_type.elementType)
    elif isinstance(data_type, MapType):
        yield from _structs_in(data_type.keyType)
        yield from _structs_in(data_type.valueType)


def keys_to_text(keys: Sequence[str]) -> str:
    """The value of :data:`cdclake.apply.tables.KEY_PROPERTY` for ``keys``: comma-separated
    as it always was, or a JSON array when a name holds a comma (or starts with ``[``).

    >>> keys_to_text(["id", "region"]), keys_to_text(["a,b"])
    ('id,region', '["a,b"]')
    """
    if any("," in k for k in keys) or (keys and keys[0].startswith("[")):
        return json.dumps(list(keys))
    return ",".join(keys)


def keys_from_text(text: str) -> tuple[str, ...]:
    """The key columns a :data:`cdclake.apply.tables.KEY_PROPERTY` value names (see
    :func:`keys_to_text`)."""
    if text.startswith("["):
        try:
            keys = json.loads(text)
        except ValueError:
            keys = None
        if isinstance(keys, list) and all(isinstance(k, str) for k in keys):
            return tuple(keys)
    return tuple(text.split(","))


def feed_problem(schema: StructType, properties: Mapping[str, str]) -> str | None:
    """Why Delta cannot write ``schema``'s columns into a table with ``properties``, or None.

    With the Change Data Feed on, Delta's MERGE and UPDATE (4.4) refer to each column of the
    feed's rows by a name they quote without doubling a backquote in it (``packedCdc.`q`q```),
    and fail on such a name.
    """
    feed = properties.get("delta.enableChangeDataFeed", "false").lower() == "true"
    ticked = next((f.name for f in schema.fields if "`" in f.name), None) if feed else None
    if ticked is None:
        return None
    return (
        f"column {ticked!r} holds a backquote, which Delta cannot write while the table's "
        "Change Data Feed is on; expected a name without one, or "
        "delta.enableChangeDataFeed = false"
    )


def refusals(
    tables: Mapping[str, StructType], properties: Callable[[str], Mapping[str, str]]
) -> dict[str, str]:
    """The tables (table -> the columns a batch writes) whose columns Delta cannot hold or
    write as they are named, with the reason (``properties``: a table's Delta properties, read
    only for a name with a backquote)."""
    refused = {}
    for table, columns in tables.items():
        problem = name_problem(columns)
        if problem is None and any("`" in f.name for f in columns.fields):
            problem = feed_problem(columns, properties(table))
        if problem is not None:
            refused[table] = problem
    return refused


def refused_changes(changes: DataFrame, refused: Mapping[str, str]) -> DataFrame:
    """The data changes of the ``refused`` tables, each with its table's reason as ``error``."""
    reason = F.coalesce(*[F.when(F.col("table") == t, F.lit(r)) for t, r in refused.items()])
    mine = F.col("table").isin(*refused) & F.col("error").isNull()
    data = changes.filter(mine & F.col("op").isin(*DATA_OPS, Op.TRUNCATE))
    return data.withColumn("error", reason)
