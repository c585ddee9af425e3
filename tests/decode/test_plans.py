"""A persisted batch re-rooted on one leaf: same rows, read from the cache, joinable with itself."""

from __future__ import annotations

from typing import Any

from pyspark import StorageLevel
from pyspark.sql import functions as F

from cdclake._spark.detach import detached


def test_detached_keeps_the_rows_reads_the_cache_and_joins_with_itself(spark: Any) -> None:
    df = (
        spark.range(20)
        .withColumn("k", F.col("id") % 5)
        .withColumn("s", F.concat(F.lit("v"), F.col("id").cast("string")))
        .filter("id % 2 = 0")
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    try:
        want = sorted(tuple(r) for r in df.collect())
        leaf = detached(df)
        assert leaf.schema == df.schema
        assert sorted(tuple(r) for r in leaf.collect()) == want
        plan = leaf._jdf.queryExecution()
        assert plan.logical().children().size() == 0  # one node
        assert "CachedPartitions" in plan.toRdd().toDebugString()  # rows from the cache
        pairs = leaf.alias("a").join(leaf.alias("b"), F.col("a.k") == F.col("b.k"))
        assert pairs.count() == sum(1 for x in want for y in want if x[1] == y[1])
    finally:
        df.unpersist()
    assert sorted(tuple(r) for r in leaf.collect()) == want  # recomputed once the cache is gone
