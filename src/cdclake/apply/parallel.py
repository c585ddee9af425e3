"""Applying the tables of one batch side by side, each in a session of its own.

A batch that carries many tables (one topic for a whole database) is mostly small Spark jobs and
Delta commits per table: driver-bound work that leaves the cluster idle when the tables go one by
one. Up to ``parallel_tables`` tables are applied at once from driver threads; Spark runs their
jobs concurrently.

Each thread works in a clone of the caller's session (``cloneSession``: the same SparkContext,
cache and runtime settings, its own SQL conf). That is what keeps exactly-once intact: Delta's
idempotent-write identifiers (``spark.databricks.delta.write.txnAppId``/``txnVersion``) are
session settings, and two tables' writes in one session would see each other's. The batch's
changes are re-bound to the clone without recomputation: the clone shares the cache manager, so
the persisted changes are read from the cache.

Sessions from Spark Connect, which have no clone, apply their tables one at a time.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from pyspark.sql import DataFrame, SparkSession
from pyspark.util import inheritable_thread_target

from cdclake.jvm import jclass

R = TypeVar("R")
Task = Callable[[SparkSession, DataFrame], R]


def isolated(spark: SparkSession, df: DataFrame) -> tuple[SparkSession, DataFrame] | None:
    """A clone of ``spark`` with its own SQL conf, and ``df`` bound to it (None: no clone)."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:  # Spark Connect
        return None
    clone = jsession.cloneSession()
    session = SparkSession(spark.sparkContext, clone)
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    plan = df._jdf.queryExecution().logical()
    bound = jclass(jvm, "org.apache.spark.sql.classic.Dataset").ofRows(clone, plan)
    return session, DataFrame(bound, session)


def run_all(spark: SparkSession, df: DataFrame, tasks: Sequence[Task[R]], parallel: int) -> list[R]:
    """Run ``task(session, df)`` for every task, at most ``parallel`` at once; results in order.

    With ``parallel`` 1 (or one task) they run one after another in ``spark`` itself. A task
    that fails does not stop the others: an error is raised once every task has finished, the
    first task's in order first.
    """
    if parallel <= 1 or len(tasks) <= 1 or getattr(spark, "_jsparkSession", None) is None:
        return _in_turn(spark, df, tasks)

    def run(task: Task[R]) -> R:
        own = isolated(spark, df)
        assert own is not None
        return task(*own)

    with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="cdclake-table") as pool:
        # each task in a copy of the caller's context (progress reporting lives in a ContextVar)
        # and with the caller's Spark local properties, copied per task: job group (a streaming
        # query's stop cancels its batch's jobs by it), scheduler pool, job tags
        futures = [
            pool.submit(contextvars.copy_context().run, inheritable_thread_target(spark)(run), task)
            for task in tasks
        ]
        errors = [f.exception() for f in futures]
    for error in errors:
        if error is not None:
            raise error
    return [f.result() for f in futures]


def _in_turn(spark: SparkSession, df: DataFrame, tasks: Sequence[Task[R]]) -> list[R]:
    """Every task, one after another; the first error is raised after the last task."""
    results, errors = [], []
    for task in tasks:
        try:
            results.append(task(spark, df))
        except Exception as e:  # the next tables are applied all the same
            errors.append(e)
    if errors:
        raise errors[0]
    return results
