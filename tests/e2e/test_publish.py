"""End to end per format: a Delta table changed by inserts, updates, deletes and a schema change
-> publish (its Change Data Feed, encoded) -> the Kafka broker -> ``cdclake apply`` -> a second
Delta table equal to the first."""

from __future__ import annotations

import ast
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


@pytest.mark.e2e
def test_convert_reencodes_a_topic_into_another_with_the_pass_through_options(
    kafka_broker: str, spark: SparkSession, tmp_path: Path
) -> None:
    """``cdclake convert`` from Kafka to Kafka (the query :mod:`cdclake.run.queries` builds for
    every command): Debezium events of a table, re-encoded as canal into another topic, with a
    ``--kafka-option`` the read and the write both take, apply back to the same table."""
    from typer.testing import CliRunner

    from cdclake.cli import app
    from cdclake.run.kafka_tools import dump

    source = str(tmp_path / "source")
    table = f"delta.`{source}`"
    spark.sql(
        f"CREATE TABLE {table} ({COLUMNS['default']}) USING delta "
        "TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    for statement in CHANGES["default"]:
        spark.sql(statement.format(t=table))
    suffix = uuid.uuid4().hex[:8]
    topic_in, topic_out = f"convert-in-{suffix}", f"convert-out-{suffix}"
    for topic in (topic_in, topic_out):
        create_topic(kafka_broker, topic, partitions=1)
    changes = produce.changes_from_cdf(produce.read_change_feed(spark, source, 0), SOURCE, ("id",))
    messages = produce.encode(changes, "debezium", EncodeOptions(connector="mysql")).persist()
    sent = produce.counts(messages)["messages"]
    produce.write_kafka(messages, kafka_broker, topic_in)

    args = [
        "convert", "--to", "canal", "--from", "debezium",
        "--kafka-bootstrap", kafka_broker, "--topic", topic_in, "--to-topic", topic_out,
        "--checkpoint", str(tmp_path / "chk-convert"), "--available-now",
        "--kafka-option", "kafka.client.id=cdclake-convert-test",
    ]  # fmt: skip
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output

    out = list(dump(topic_out, kafka_broker))
    # one batch; a Debezium tombstone (the record after a delete) has no canal message
    counts = ast.literal_eval(run.output.strip().splitlines()[-1].split(": ", 1)[1])
    assert counts == {"messages": len(out), "skipped": sent - len(out), "quarantined": 0}
    assert counts["skipped"] == CHANGES["default"][2].count("DELETE"), run.output
    kinds = sorted({r["value"]["type"] for r in out})
    assert kinds == ["DELETE", "INSERT", "UPDATE"], out[:3]
    config = ApplyConfig(
        format="canal",
        kafka_bootstrap=kafka_broker,
        topics=(topic_out,),
        checkpoint=str(tmp_path / "chk-apply"),
        target=str(tmp_path / "lake"),
        available_now=True,
    )
    assert run_kafka(spark, config).quarantined == 0
    target = Target(str(tmp_path / "lake")).table_path(SOURCE)
    assert _sorted(spark, target) == _sorted(spark, source)
