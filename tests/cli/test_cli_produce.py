"""``cdclake publish`` and ``cdclake convert`` in-process, sharing the test session."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession
from typer.testing import CliRunner

from cdclake.cli import app

SEEDS = Path(__file__).resolve().parents[1] / "data" / "seeds"


def test_publish_without_change_data_feed_says_how_to_enable_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "plain")
    spark.range(3).write.format("delta").save(path)
    result = CliRunner().invoke(
        app, ["publish", "--table", path, "--to", "debezium", "--output", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert f"--table '{path}' has no Change Data Feed" in message
    assert "SET TBLPROPERTIES (delta.enableChangeDataFeed = true)" in message


def test_publish_to_files_then_convert_to_canal(spark: SparkSession, tmp_path: Path) -> None:
    """publish writes Debezium records (key, then tombstone after the delete); convert turns
    them into canal flat messages with only the changed column in ``old``."""
    path = str(tmp_path / "items")
    spark.sql(
        f"CREATE TABLE delta.`{path}` (id BIGINT, name STRING) USING delta "
        "TBLPROPERTIES (delta.enableChangeDataFeed = true)"
    )
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"UPDATE delta.`{path}` SET name = 'a2' WHERE id = 1")
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 2")
    out = tmp_path / "dbz"
    runner = CliRunner()
    published = runner.invoke(
        app,
        ["publish", "--table", path, "--name", "shop.items", "--primary-key", "id",
         "--to", "debezium", "--connector", "mysql", "--output", str(out)],
    )  # fmt: skip
    assert published.exit_code == 0, published.output
    assert "5 messages written, 0 control records" in published.output
    lines = [
        json.loads(line) for f in sorted(out.glob("part-*")) for line in f.read_text().splitlines()
    ]
    ops = [(r["value"] or {}).get("payload", {}).get("op") for r in lines]
    assert ops == ["c", "c", "u", "d", None]  # a tombstone follows the delete
    assert lines[-1]["key"]["payload"] == {"id": 2}
    converted = runner.invoke(
        app,
        ["convert", "--from", "auto", "--to", "canal", "--input", str(out),
         "--output", str(tmp_path / "canal")],
    )  # fmt: skip
    assert converted.exit_code == 0, converted.output
    assert "4 messages written, 1 control records" in converted.output
    canal = [
        json.loads(line)
        for f in sorted((tmp_path / "canal").glob("*.jsonl"))
        for line in f.read_text().splitlines()
    ]
    values = [r.get("value", r) for r in canal]
    assert [v["type"] for v in values] == ["INSERT", "INSERT", "UPDATE", "DELETE"]
    assert values[2]["old"] == [{"name": "a"}] and values[2]["data"] == [{"id": "1", "name": "a2"}]
