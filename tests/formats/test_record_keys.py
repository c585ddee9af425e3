"""Debezium record keys in each shape Kafka Connect writes them: bare (``schemas.enable=false``),
the JsonConverter envelope with a struct schema, and the envelope with a null schema (issue 11:
the last was read as a key of columns ``schema`` and ``payload``)."""

from __future__ import annotations

import json

from builders import msgs
from pyspark.sql import SparkSession

from cdclake.decode import decode
from cdclake.sources import raw_from_lines

ROW = {"id": 101, "name": "a", "qty": 1}
KEY_SCHEMA = {
    "type": "struct",
    "name": "shop.dbo.items.Key",
    "optional": False,
    "fields": [{"type": "int32", "optional": False, "field": "id"}],
}
SHAPES = {
    "bare": {"id": 101},
    "envelope with schema": {"schema": KEY_SCHEMA, "payload": {"id": 101}},
    "envelope with null schema": {"schema": None, "payload": {"id": 101}},
    "envelope without schema field": {"payload": {"id": 101}},
    "key text of an envelope": json.dumps({"schema": None, "payload": {"id": 101}}),
}


def test_every_key_shape_names_the_key_columns(spark: SparkSession) -> None:
    lines = [msgs.debezium(n, ROW, key=k) for n, k in enumerate(SHAPES.values(), 1)]
    rows = decode(raw_from_lines(spark, lines), "debezium").orderBy("lineage.offset").collect()
    got = {
        shape: (r["key_columns"], r["key_source"], r["error"], r["after"].toPython()["id"])
        for shape, r in zip(SHAPES, rows, strict=True)
    }
    expected = (["id"], "record-key", None, 101)
    # a bare key whose only column happens to be called payload stays a bare key
    odd = got.pop("envelope without schema field")
    assert got == {
        "bare": expected,
        "envelope with schema": expected,
        "envelope with null schema": expected,
        "key text of an envelope": expected,
    }
    assert odd[:2] == (["payload"], "record-key")
    assert odd[2].startswith("key column(s) payload not in the row of shop.dbo.items")


def test_a_key_column_named_schema_or_payload_of_a_bare_key_is_kept(spark: SparkSession) -> None:
    row = {"schema": "s1", "payload": 7, "x": 1}
    line = msgs.debezium(1, row, key={"schema": "s1", "payload": 7})
    [r] = decode(raw_from_lines(spark, [line]), "debezium").collect()
    assert (r["key_columns"], r["error"]) == (["schema", "payload"], None)
