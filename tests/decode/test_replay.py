"""A decode's plan is built once per query and replayed on later batches
(cdclake._spark.plan_cache)."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdclake._spark.plan_cache import forget, replayed


def _batch(spark: SparkSession, rows: list[tuple[int, str]]) -> DataFrame:
    return spark.createDataFrame(rows, "id INT, name STRING")


def test_a_later_batch_gets_the_recorded_calls(spark: SparkSession) -> None:
    forget()
    built: list[int] = []

    def build(df: DataFrame) -> DataFrame:
        built.append(1)
        staged = df.withColumn("upper", F.upper("name")).filter(F.col("id") > 1)
        return staged.select("id", F.concat("upper", F.lit("!")).alias("shout"))

    first = replayed("shout", _batch(spark, [(1, "a"), (2, "b")]), build)
    second = replayed("shout", _batch(spark, [(3, "c"), (0, "d")]), build)
    assert sorted(map(tuple, first.collect())) == [(2, "B!")]
    assert sorted(map(tuple, second.collect())) == [(3, "C!")]
    assert len(built) == 1
    # another key, or another schema, is built again
    replayed("other", _batch(spark, [(1, "a")]), build)
    wider = spark.createDataFrame([(5, "e", 1.0)], "id INT, name STRING, x DOUBLE")
    assert [tuple(r) for r in replayed("shout", wider, build).collect()] == [(5, "E!")]
    assert len(built) == 3


def test_a_builder_that_does_more_than_project_runs_every_time(spark: SparkSession) -> None:
    """A join, a column bound to the input's plan, or two branches from one step: the
    recording could not stand for them, so the builder runs for every input."""
    forget()
    built: list[str] = []

    def joined(df: DataFrame) -> DataFrame:
        built.append("join")
        names = df.select("id", F.upper("name").alias("u"))
        return df.join(names, "id").select("id", "u")

    def bound(df: DataFrame) -> DataFrame:
        built.append("bound")
        return df.select(df["id"], F.lit("x").alias("u"))

    def branched(df: DataFrame) -> DataFrame:
        built.append("branched")
        base = df.withColumn("u", F.upper("name"))
        base.withColumn("v", F.lit(1))  # a step that is not the result's
        return base.select("id", "u")

    for builder in (joined, bound, branched):
        for rows in ([(1, "a")], [(2, "b")]):
            out = replayed(builder.__name__, _batch(spark, rows), builder)
            assert [r["id"] for r in out.collect()] == [rows[0][0]]
    assert built == ["join", "join", "bound", "bound", "branched", "branched"]
