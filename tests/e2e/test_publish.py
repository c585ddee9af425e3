"""End to end per format: a Delta table changed by inserts, updates, deletes and a schema change
-> publish (its Change Data Feed, encoded) -> the Kafka broker -> ``cdclake apply`` -> a second
Delta table equal to the first."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from cdclake import formats
from cdclake.apply.tables import Target
from cdclake.config import ApplyConfig
from cdclake.formats.encode import EncodeOptions
from cdclake.run import produce
from cdclake.run.kafka_tools import create_topic
from cdclake.run.streaming import run_kafka

SOURCE = "shop.items"
COLUMNS = {
    # DataWorks has six types: a decimal would come back as its text, a date as a timestamp
    "dataworks": "id BIGINT, name STRING, score DOUBLE",
    "default": "id BIGINT, name STRING, price DECIMAL(10,2), day DATE",
}
CHANGES = {
    "dataworks": [
        "INSERT INTO {t} VALUES (1, 'a', 1.5), (2, 'b', 2.5), (3, 'c', 3.5)",
        "UPDATE {t} SET name = 'b2', score = 20.25 WHERE id = 2",
        "DELETE FROM {t} WHERE id = 3",
        "ALTER TABLE {t} ADD COLUMNS (qty BIGINT)",
        "UPDATE {t} SET qty = 7 WHERE id = 1",
        "INSERT INTO {t} VALUES (4, 'd', NULL, 40)",
    ],
    "default": [
        "INSERT INTO {t} VALUES (1, 'a', 1.50, DATE'2020-01-01'), (2, 'b', 2.25, NULL),"
        " (3, 'c', -3.00, DATE'1999-12-31')",
        "UPDATE {t} SET name = 'b2', price = 20.05 WHERE id = 2",
        "DELETE FROM {t} WHERE id = 3",
        "ALTER TABLE {t} ADD COLUMNS (qty INT)",
        "UPDATE {t} SET qty = 7 WHERE id = 1",
        "INSERT INTO {t} VALUES (4, 'd', NULL, DATE'2024-02-29', 40)",
    ],
}


def _sorted(spark: SparkSession, path: str) -> list[tuple[object, ...]]:
    df = spark.read.format("delta").load(path)
    cols = sorted(c for c in df.columns if not c.startswith("_cdc_"))
    return sorted((tuple(r) for r in df.select(*cols).collect()), key=repr)


@pytest.mark.e2e
@pytest.mark.parametrize("fmt", formats.names())
def test_published_table_applies_back_equal(
    kafka_broker: str, spark: SparkSession, tmp_path: Path, fmt: str
) -> None:
    kind = "dataworks" if fmt == "dataworks" else "default"
    source = str(tmp_path / "source")
    table = f"delta.`{source}`"
    spark.sql(
        f"CREATE TABLE {table} ({COLUMNS[kind]}) USING delta "
        "TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    for statement in CHANGES[kind]:
        spark.sql(statement.format(t=table))

    topic = f"publish-{fmt}-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_broker, topic, partitions=1)
    cdf = produce.read_change_feed(spark, source, 0)
    changes = produce.changes_from_cdf(cdf, SOURCE, ("id",))
    messages = produce.encode(changes, fmt, EncodeOptions(connector="mysql")).persist()
    counts = produce.counts(messages)
    assert counts["quarantined"] == 0, produce.reasons(messages)
    produce.write_kafka(messages, kafka_broker, topic)

    config = ApplyConfig(
        format=fmt,
        kafka_bootstrap=kafka_broker,
        topics=(topic,),
        checkpoint=str(tmp_path / "chk"),
        target=str(tmp_path / "lake"),
        available_now=True,
    )
    result = run_kafka(spark, config)

    assert result.quarantined == 0
    target = Target(str(tmp_path / "lake")).table_path(SOURCE)
    assert _sorted(spark, target) == _sorted(spark, source)
