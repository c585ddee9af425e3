"""Keeping query plans small when a batch's intermediate result is read many times.

A persisted DataFrame is read from the cache, but its *plan* still holds every step that made
it: the whole decode of the batch (for ``--format auto``, every format's parse). A history
(SCD type 2) batch joins its changes with themselves and with the history log several times,
and each reference copies that plan; the driver then spends minutes analysing and serializing
plan trees hundreds of nodes deep, and can run out of memory doing it (seen with four formats
in one batch). :func:`detached` re-roots a persisted, materialized DataFrame on its cache
itself (the in-memory relation Spark keeps for it): later plans hold one leaf. Scans of it keep
what a cache scan has, column pruning and per-batch statistics for filters (a table's rows out
of a batch of many tables read little more than the ``table`` column of the others), and a lost
cache block is recomputed from the cached plan, as with any persisted data (unlike a local
checkpoint). The same batch applied to many tables, each planning against the whole decode,
cost time and memory growing with the tables times the schema versions of the batch.
"""

from __future__ import annotations

from typing import Any

from py4j.protocol import Py4JError
from pyspark.sql import DataFrame, SparkSession

from cdclake.jvm import jclass


def detached(df: DataFrame, spark: SparkSession | None = None) -> DataFrame:
    """``df``'s rows under a one-node plan (Spark Connect: ``df`` as it is), in ``spark`` (a
    session sharing ``df``'s cache, e.g. a clone; None: ``df``'s own).

    Call it on a DataFrame that is persisted, so that the scan reads the cache (filled by the
    first job that reads it, when it is not yet). Column names and types are kept; refer to
    columns by name, not through ``df[...]`` objects made before.
    """
    if getattr(df, "_jdf", None) is None:  # Spark Connect
        return df
    jsession = df._jdf.sparkSession()
    cached = jsession.sharedState().cacheManager().lookupCachedData(df._jdf)
    if cached.isDefined():
        try:
            return _on_cache(df, cached.get().cachedRepresentation(), spark or df.sparkSession)
        except Py4JError:  # another Spark's internals: the rows under a one-node plan all the same
            pass
    jdf = df.select("*")._jdf
    rows = jdf.queryExecution().toRdd()
    return DataFrame(jsession.internalCreateDataFrame(rows, jdf.schema(), False), df.sparkSession)


def _on_cache(df: DataFrame, relation: Any, spark: SparkSession) -> DataFrame:
    """A plan of ``relation`` (the cache's in-memory relation) alone.

    The relation is copied without its output ordering: a self-join gives one side new
    attributes, and the copy Spark makes for it keeps the ordering on the old ones, which then
    fails in the cache lookup of the join. The ordering of a decoded batch means nothing to us.
    """
    jvm = df.sparkSession.sparkContext._jvm
    assert jvm is not None
    nil = getattr(jclass(jvm, "scala.collection.immutable.Nil$"), "MODULE$")
    leaf = relation.copy(relation.output(), relation.cacheBuilder(), nil)
    getattr(leaf, "statsOfPlanToCache_$eq")(relation.statsOfPlanToCache())
    jdf = jclass(jvm, "org.apache.spark.sql.classic.Dataset").ofRows(spark._jsparkSession, leaf)
    return DataFrame(jdf, spark)
