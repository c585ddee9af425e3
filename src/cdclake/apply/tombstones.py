"""Each key's newest tombstone, kept in Spark's cache from one batch to the next.

A keyed table's tombstone log (:func:`cdclake.apply.scd1.record_tombstones`) is append-only, and
every MERGE joins its changes with the newest delete position of each key in it. Read from the
log, that is a scan of every file the log holds (one more each batch with a delete) and an
aggregate over all of them, in every batch: about a fifth of a steady streaming batch (issue 36,
step 28), growing until maintenance prunes the log.

:func:`newest_tombstones` keeps the aggregate of a log, persisted, with the exact set of data
files it was computed from (the log's own listing, :func:`cdclake.delta_rs.live_files`). The
next batch lists the log again:

- the same files: the kept aggregate is the log's, as it is;
- the same files and more (appends: this process's previous batch, or another writer): the
  kept aggregate and the new files' rows are aggregated again: a scan of the cache and of the
  new files, not of every file;
- any file gone (maintenance pruned or compacted the log, the table was dropped): read whole.

So what a batch joins is always computed from the files of the log's newest version, whoever
wrote them; keeping it only saves reading the files it already read. Every
:data:`REREAD_AFTER` increments the log is read whole again, which bounds the lineage Spark
keeps to recompute a lost cache block. A replaced aggregate is released at the next call for
its log, once the batch that read it is done. Where the driver cannot list the log (object
storage, Spark Connect, deletion vectors) every batch reads it through Delta, as before.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from cdclake._spark.detach import detached
from cdclake.apply import tables as tbl
from cdclake.model import POSITION_COL

REREAD_AFTER = 16
"""Increments after which a log is read whole again."""
KEPT_LOGS = 512
"""Logs whose aggregate is kept at most (the least recently used are released)."""


@dataclass
class _Kept:
    keys: tuple[str, ...]
    files: frozenset[str]
    frame: DataFrame  # persisted
    increments: int
    released: list[DataFrame] = field(default_factory=list)  # replaced, released next call


_KEPT: OrderedDict[str, _Kept] = OrderedDict()
_LOCK = threading.Lock()  # tables of one batch are applied from several threads


def newest_per_key(rows: DataFrame, keys: Sequence[str], position: str = POSITION_COL) -> DataFrame:
    """The newest ``position`` of each key among tombstone ``rows`` (``_t0.._tn``, ``_tomb``)."""
    return rows.groupBy(*[F.col(tbl.quote(k)).alias(f"_t{i}") for i, k in enumerate(keys)]).agg(
        F.max(position).alias("_tomb")
    )


def newest_tombstones(spark: SparkSession, path: str, keys: Sequence[str]) -> DataFrame:
    """The newest delete position of each key in the tombstone log at ``path`` (``_t0.._tn``,
    ``_tomb``): from the aggregate kept since the previous batch where the log's files allow."""
    from cdclake import delta_rs

    listing = delta_rs.driver_files(spark, path)
    if listing is None:
        forget(path)
        return newest_per_key(tbl.pinned(spark, path), keys)
    files, wanted = frozenset(listing.paths), tuple(keys)
    schema = StructType.fromJson(json.loads(listing.schema_json))
    with _LOCK:
        kept = _KEPT.pop(path, None)
    if kept is not None:
        for frame in kept.released:
            frame.unpersist()
        kept.released.clear()
    if kept is not None and kept.keys == wanted and kept.files == files:
        _keep(path, kept)
        return detached(kept.frame, spark)
    grows = kept is not None and kept.keys == wanted and kept.files < files
    if kept is not None and grows and kept.increments < REREAD_AFTER:
        new = spark.read.schema(schema).parquet(*sorted(files - kept.files))
        both = detached(kept.frame, spark).unionByName(newest_per_key(new, keys))
        frame = newest_per_key(both, [f"_t{i}" for i in range(len(keys))], "_tomb")
        increments, released = kept.increments + 1, [kept.frame]
    else:
        rows = (
            spark.read.schema(schema).parquet(*files)
            if files
            else spark.createDataFrame([], schema)
        )
        frame = newest_per_key(rows, keys)
        increments, released = 0, [kept.frame] if kept is not None else []
    frame = frame.persist(StorageLevel.MEMORY_AND_DISK)
    _keep(path, _Kept(wanted, files, frame, increments, released))
    return detached(frame, spark)


def _keep(path: str, kept: _Kept) -> None:
    with _LOCK:
        _KEPT[path] = kept
        evicted = [_KEPT.popitem(last=False)[1] for _ in range(len(_KEPT) - KEPT_LOGS)]
    for old in evicted:
        for frame in [old.frame, *old.released]:
            frame.unpersist()


def forget(path: str) -> None:
    """Release the aggregate kept for the log at ``path``, if any."""
    with _LOCK:
        kept = _KEPT.pop(path, None)
    if kept is not None:
        for frame in [kept.frame, *kept.released]:
            frame.unpersist()
