"""Counting the Spark jobs an action runs, with the status tracker (issue 13's job counts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession


def count_jobs(spark: SparkSession, tag: str, action: Callable[[], Any]) -> tuple[int, Any]:
    """The number of Spark jobs ``action`` ran (in the job group ``tag``, which must be new),
    and what it returned. The session's cache is cleared afterwards."""
    sc = spark.sparkContext
    sc.setJobGroup(tag, tag)
    try:
        out = action()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        sc.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]
    spark.catalog.clearCache()
    return len(sc.statusTracker().getJobIdsForGroup(tag)), out
