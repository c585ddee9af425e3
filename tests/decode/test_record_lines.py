"""A line that is a record object is parsed once, with the format's schema under ``value``.

The shapes a value can take inside a record (an object, null, a JSON string holding the message,
something else) must decode exactly as the same value given bare.
"""

from __future__ import annotations

import json

from builders.dbz import event, tombstone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from cdclake import decode, sources
from cdclake.model import Op


def _decoded(
    spark: SparkSession, lines: list[str], fmt: str = "debezium"
) -> list[dict[str, object]]:
    changes = decode.decode(sources.raw_from_lines(spark, lines), fmt)
    rows = changes.orderBy("lineage.offset").collect()
    return [
        {
            "table": r["table"],
            "op": r["op"],
            "key_columns": r["key_columns"],
            "after": None if r["after"] is None else json.loads(r["after"].toJson()),
            "position": r["position"],
            "error": r["error"],
        }
        for r in rows
    ]


def test_record_and_bare_value_decode_alike(spark: SparkSession) -> None:
    line = event("c", after={"id": 1, "name": "a", "qty": 5}, lsn=10)
    bare = json.dumps(json.loads(line)["value"])
    as_string = json.dumps({"key": {"id": 1}, "value": bare})

    record, plain, stringified = _decoded(spark, [line, bare, as_string])

    assert record == {
        "table": "shop.public.items",
        "op": Op.INSERT,
        "key_columns": ["id"],
        "after": {"id": 1, "name": "a", "qty": 5},
        "position": [10],
        "error": None,
    }
    # bare: no record key, so no key columns; otherwise the same change
    assert plain == {**record, "key_columns": []}
    # a value written as a JSON string that holds the message reads like the object itself
    assert stringified == record


def test_record_value_null_is_a_tombstone_and_other_values_are_quarantined(
    spark: SparkSession,
) -> None:
    lines = [
        tombstone({"id": 1}),
        json.dumps({"key": {"id": 2}, "value": 42}),
        # a field outside the record fields: the whole object is the value (not a record)
        json.dumps({"value": json.loads(event("c", after={"id": 3}))["value"], "extra": 1}),
    ]

    tomb, number, not_record = _decoded(spark, lines)

    assert (tomb["op"], tomb["error"]) == (Op.TOMBSTONE, None)
    assert number["error"] == "not valid JSON"
    assert not_record["error"] == "not a Debezium change event: no op, status or ts_ms"


def test_auto_detects_inside_records(spark: SparkSession) -> None:
    line = event("u", before={"id": 1, "name": "a"}, after={"id": 1, "name": "b"}, lsn=11)
    lines = [
        line,
        json.dumps({"key": {"id": 1}, "value": json.dumps(json.loads(line)["value"])}),
        tombstone({"id": 1}),
        json.dumps({"key": None, "value": {"neither": "format"}}),
    ]

    auto = _decoded(spark, lines, "auto")

    assert auto[:3] == _decoded(spark, lines[:3])
    assert [r["op"] for r in auto[:3]] == [Op.UPDATE, Op.UPDATE, Op.TOMBSTONE]
    assert auto[3]["error"] == (
        "not a message of any known format (debezium, canal, ckafka, dataworks)"
    )


def _spelled(key: str, escaped: list[bool]) -> str:
    """``key`` as a JSON string, with the characters ``escaped`` says written as ``\\uXXXX``."""
    flags = (escaped + [False] * len(key))[: len(key)]
    chars = [f"\\u{ord(c):04x}" if e else c for c, e in zip(key, flags, strict=True)]
    return '"' + "".join(chars) + '"'


_KEYS = [*sources.RECORD_FIELDS, "extra", "Value", "values", "payload", "schema"]
_members = st.tuples(
    st.sampled_from(_KEYS),
    st.lists(st.booleans(), max_size=6),
    st.sampled_from(['{"id": 1}', "null", '"value"', '{"value": 2}', "[1]", '"\\u00e9"']),
)
_objects = st.lists(_members, max_size=5, unique_by=lambda m: m[0])


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_objects, min_size=1, max_size=30))
def test_a_line_is_a_record_exactly_when_its_keys_say_so(
    spark: SparkSession, objects: list[list[tuple[str, list[bool], str]]]
) -> None:
    """Whatever the text (keys spelled with escapes, ``"value"`` only inside values or only as
    a value), a line is a record object exactly when its keys include ``value`` and are all
    record fields: the test on the bytes that spares most lines a second tokenization only
    decides which lines need it."""
    lines = ["{" + ", ".join(f"{_spelled(k, e)}: {v}" for k, e, v in o) + "}" for o in objects]
    keys = [{k for k, _, _ in o} for o in objects]
    expected = [("value" in k) and k <= set(sources.RECORD_FIELDS) for k in keys]

    rows = sources.raw_from_lines(spark, lines).orderBy("lineage.offset").collect()

    assert [r["nested"] for r in rows] == expected
