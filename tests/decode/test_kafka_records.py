"""Records of Spark's Kafka source as cdclake reads them (no broker: the source's schema)."""

from __future__ import annotations

from pyspark.sql import SparkSession

from cdclake.sources import from_kafka_df

KAFKA_SCHEMA = (
    "key BINARY, value BINARY, topic STRING, `partition` INT, offset BIGINT, timestamp TIMESTAMP, "
    "headers ARRAY<STRUCT<key: STRING, value: BINARY>>"
)


def test_a_header_name_twice_keeps_its_last_value_and_fails_nothing(spark: SparkSession) -> None:
    records = [
        (b"k1", b"{}", "t", 0, 1, None, [("a", b"1"), ("b", b"2"), ("a", b"3")]),
        (None, b"{}", "t", 0, 2, None, [("a", None)]),
        (b"k3", b"{}", "t", 0, 3, None, []),
        (b"k4", b"{}", "t", 0, 4, None, None),
    ]
    raw = from_kafka_df(spark.createDataFrame(records, KAFKA_SCHEMA))
    got = {r["lineage"]["offset"]: (r["key"], r["headers"]) for r in raw.collect()}
    assert got == {
        1: ("k1", {"b": "2", "a": "3"}),
        2: (None, {"a": None}),
        3: ("k3", {}),
        4: ("k4", None),
    }
