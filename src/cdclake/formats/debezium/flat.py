"""Debezium events flattened by Kafka Connect's ``ExtractNewRecordState`` SMT: a variant of
:mod:`cdclake.formats.debezium`, read by the same format.

Producer documentation: Debezium, "New Record State Extraction" (``event-flattening``), and its
source (``io.debezium.transforms.ExtractNewRecordState``, ``DefaultDeleteHandlingStrategy``).

The value is the row itself (the ``after`` image; the ``before`` image of a rewritten delete),
with its Connect schema named ``<topic.prefix>.<db or schema>.<table>.Value`` when the
JsonConverter has ``schemas.enable=true``::

    {"schema": {"type": "struct", "name": "dbserver1.inventory.customers.Value",
                "fields": [{"type": "int32", "field": "id"}, ..., {"type": "string",
                "optional": true, "field": "__op"}]},
     "payload": {"id": 1004, "email": "annek@noanswer.org", "__op": "u", "__deleted": "false"}}

- ``add.fields=op,table,lsn,source.ts_ms`` adds ``__op``, ``__table``, ``__lsn``,
  ``__source_ts_ms`` (an unqualified name is looked up at the top level for ``op``/``ts_ms``,
  in ``transaction`` for ``id``/``total_order``, else in ``source``; ``source.x`` gives
  ``__source_x``). ``add.headers`` puts the same names in record headers instead.
- ``delete.handling.mode=rewrite`` (``delete.tombstone.handling.mode=rewrite``): every record
  gets ``__deleted`` (the *string* ``"true"``/``"false"``); a delete is its before image with
  ``"true"``.
- ``delete.tombstone.handling.mode=tombstone`` (the default since Debezium 2.5): a delete becomes a
  record whose value is null (the key names the row), Debezium's own tombstone is dropped;
  headers added with ``add.headers`` are set from the delete (``__op: d``). ``drop`` drops deletes.
- Truncate and logical-decoding message events are dropped by the SMT.

What cdclake makes of it: a value or payload with ``__op`` or ``__deleted`` (or a record with
those headers, or a value schema named ``*.Value``) and no ``before``, ``after`` or ``source``
is flattened. Op: ``__deleted == "true"`` is a delete, else ``__op`` (c/u/d/r), else an update
(an upsert of the row). A null value with header ``__op: d`` is a delete of the record key; a null
value without it stays a tombstone (a control record, as after an unflattened delete: the two
cannot be told apart). Table: ``__db``/``__schema``/``__table`` (fields or headers), else the
schema name, else the Kafka topic (or a record line's ``topic``), less their first part
(``topic.prefix``). Position: a complete source position among the added fields (``__lsn``;
``__commit_lsn`` + ``__change_lsn``; ``__file`` + ``__pos``; ``__scn``), else input order.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column
from pyspark.sql import functions as F

from cdclake.sources import value_text

PREFIX = "__"
"""``add.fields.prefix`` and ``add.headers.prefix``: only the default is read."""
DELETED = "__deleted"
_SOURCE_READ = (
    "connector", "name", "db", "schema", "table", "ts_ms", "snapshot", "change_lsn",
    "commit_lsn", "event_serial_no", "lsn", "txId", "file", "pos", "row", "gtid", "scn",
    "commit_scn",
)  # fmt: skip
"""The ``source`` fields read back, in the order of the Debezium ``source`` parse type."""
_NAMES = sorted(
    {"op", "deleted", "total_order", "transaction_total_order"}
    | {n for s in _SOURCE_READ for n in (s, f"source_{s}")}
)
BODY: list[tuple[str, str]] = [(f"{PREFIX}{n}", "STRING") for n in _NAMES]
"""The added fields the format parses (top level of the value or of ``payload``), as text."""

_SOURCE_NAMES = (
    "version|connector|name|ts_ms|ts_us|ts_ns|snapshot|db|sequence|schema|table|txId|lsn|xmin|"
    "change_lsn|commit_lsn|event_serial_no|file|pos|row|server_id|gtid|thread|query|scn|"
    "commit_scn|rs_id|ssn|redo_thread|user_name|row_id"
)
ADDED_FIELD = (
    f"{PREFIX}(?:deleted|op|ts_ms|ts_us|ts_ns|id|total_order|data_collection_order|"
    f"transaction_(?:id|total_order|data_collection_order)|(?:source_)?(?:{_SOURCE_NAMES}))"
)
"""The names the SMT adds (regular expression): they are not source columns."""


def added(body: Column, headers: Column, name: str) -> Column:
    """An added field ``name`` (``op``, ``lsn``...): from the value, else from the headers; a
    source field also under its qualified name (``source.lsn`` gives ``__source_lsn``)."""
    names = [f"{PREFIX}{name}"]
    if name in _SOURCE_READ:
        names.append(f"{PREFIX}source_{name}")
    if name == "total_order":
        names.append(f"{PREFIX}transaction_total_order")
    return F.coalesce(*[body[n] for n in names], *[headers[n] for n in names])


def is_flattened(body: Column, headers: Column, schema_name: Column) -> Column:
    """A value (or payload) the SMT wrote: marked by ``__op``/``__deleted`` (value or headers)
    or by its schema's name, and without the envelope's ``before``, ``after`` and ``source``
    (``op`` may be a column of the row)."""
    marked = F.coalesce(
        body[f"{PREFIX}op"],
        body[DELETED],
        headers[f"{PREFIX}op"],
        headers[DELETED],
    ).isNotNull() | F.coalesce(schema_name.endswith(".Value"), F.lit(False))
    envelope = [body[f].isNull() for f in ("before", "after", "source")]
    return reduce(lambda a, b: a & b, envelope, marked)


def source(body: Column, headers: Column) -> Column:
    """A Debezium ``source`` struct made of the added fields: a position field only where the
    position is complete, so that an incomplete one leaves the change in input order."""

    def get(name: str) -> Column:
        return added(body, headers, name)

    lsn, commit, change = get("lsn"), get("commit_lsn"), get("change_lsn")
    file, pos = get("file"), get("pos")
    sqlserver = commit.isNotNull() & change.isNotNull()
    binlog = file.isNotNull() & pos.isNotNull()
    connector = (
        F.when(sqlserver, F.lit("sqlserver"))
        .when(binlog, F.coalesce(get("connector"), F.lit("mysql")))
        .when(lsn.isNotNull(), F.lit("postgresql"))
    )
    values = {
        "connector": connector,
        "change_lsn": F.when(sqlserver, change),
        "commit_lsn": F.when(sqlserver, commit),
        "file": F.when(binlog, file),
        "pos": F.when(binlog, pos),
        # source.ts_ms (when the row changed) before the event's ts_ms (when it was read)
        "ts_ms": F.coalesce(get("source_ts_ms"), get("ts_ms")),
    }
    return F.struct(*[values.get(n, get(n)).alias(n) for n in _SOURCE_READ])


def table(schema_name: Column, topic: Column) -> Column:
    """The table from the schema name (``prefix.db.table.Value``) or the topic
    (``prefix.db.table``), less the topic prefix: used when no ``__table`` was added."""
    from_schema = F.regexp_extract(schema_name, r"^[^.]+\.(.+)\.Value$", 1)
    from_topic = F.regexp_extract(topic, r"^[^.]+\.(.+)$", 1)
    return F.coalesce(
        F.when(from_schema != "", from_schema),
        F.when(from_topic != "", from_topic),
    )


def topic() -> Column:
    """The record's Kafka topic: a Kafka record's lineage source, or a record line's ``topic``."""
    lineage = F.col("lineage")
    return F.when(lineage["partition"].isNotNull(), lineage["source"]).when(
        F.col("nested"), F.get_json_object(F.col("raw"), "$.topic")
    )


def row_text(enveloped: Column) -> Column:
    """The row's JSON object text, less the added fields (the value, or its ``payload``)."""
    text = value_text(F.col("raw"))
    row = F.when(enveloped, F.get_json_object(text, "$.payload")).otherwise(
        F.get_json_object(text, "$")
    )
    # compact JSON (get_json_object re-serializes): a key in quotes followed by a colon is
    # always a key, never text inside a string, where quotes are escaped
    value = r'(?:"(?:[^"\\]|\\.)*"|[^,{}\[\]"]*)'
    stripped = F.regexp_replace(row, f',?"{ADDED_FIELD}":{value}', "")
    return F.regexp_replace(stripped, r"^\{,", "{")


def schema_token(enveloped: Column) -> Column:
    """The row's field schemas (``schema.fields``) as a JSON list, less the added fields."""
    fields = F.from_json(
        F.get_json_object(value_text(F.col("raw")), "$.schema.fields"), "array<string>"
    )
    kept = F.filter(fields, lambda f: ~F.get_json_object(f, "$.field").rlike(f"^{ADDED_FIELD}$"))
    return F.when(enveloped, F.concat(F.lit("["), F.array_join(kept, ","), F.lit("]")))


DETECT_FIELDS = (
    f"`{PREFIX}op` STRING, `{DELETED}` STRING, before STRING, after STRING, source STRING"
)
"""The fields :func:`detected` reads, at the top level and in ``payload``."""


def detected(fields: Column) -> Column:
    """``--format auto``: a flattened value, from the value alone (a row whose only marks are
    in its headers is not told from other JSON: give ``--format debezium``)."""

    def either(name: str) -> Column:
        return F.coalesce(fields["payload"][name], fields[name])

    marked = F.coalesce(either(f"{PREFIX}op"), either(DELETED)).isNotNull() | F.coalesce(
        fields["schema"]["name"].endswith(".Value"), F.lit(False)
    )
    envelope = [either(f).isNull() for f in ("before", "after", "source")]
    return reduce(lambda a, b: a & b, envelope, marked)
