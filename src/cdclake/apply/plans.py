"""Keeping query plans small when a batch's intermediate result is read many times.

A persisted DataFrame is read from the cache, but its *plan* still holds every step that made
it: the whole decode of the batch (for ``--format auto``, every format's parse). A history
(SCD type 2) batch joins its changes with themselves and with the history log several times,
and each reference copies that plan; the driver then spends minutes analysing and serializing
plan trees hundreds of nodes deep, and can run out of memory doing it (seen with four formats
in one batch). :func:`detached` re-roots a persisted, materialized DataFrame on a scan of its
rows: later plans hold one leaf. The rows still come from the cache, and a lost cache block is
recomputed from the RDD's lineage, as with any persisted data (unlike a local checkpoint).
"""

from __future__ import annotations

from pyspark.sql import DataFrame


def detached(df: DataFrame) -> DataFrame:
    """``df``'s rows under a one-node plan (Spark Connect: ``df`` as it is).

    Call it on a DataFrame that is persisted and already computed, so that the scan reads the
    cache. Column names and types are kept; the columns are new attributes, so refer to them by
    name, not through ``df[...]`` objects made before.
    """
    if getattr(df, "_jdf", None) is None:  # Spark Connect
        return df
    jdf = df.select("*")._jdf  # a plan made now, so that the cache is substituted into it
    jsession = jdf.sparkSession()
    rows = jdf.queryExecution().toRdd()
    return DataFrame(jsession.internalCreateDataFrame(rows, jdf.schema(), False), df.sparkSession)
