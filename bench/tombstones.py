"""A batch's tombstone check against a long tombstone log: the log read whole, or kept.

``python -m bench.tombstones [--files 200,1000] [--rounds 5]`` (``src`` and the checkout on
``PYTHONPATH``). A keyed table's tombstone log gains one file in every batch with a delete, and
maintenance prunes it only when it runs (issue 36: "never a scan of every delete ever seen").
For each length the bench writes a log of that many appended files (375 deletes each, of 200,000
keys, as the driver's append writes a steady batch's), then, round after round, appends one file
more (the next batch's deletes) and times the join a batch's MERGE source makes with each key's
newest tombstone (a 2,500-key batch, counted), the two ways alternated in the same session:

- ``read whole``: every file of the log read and aggregated
  (:func:`cdclake.apply.scd1.tombstone_positions`), what a batch did before step 29;
- ``kept``: the aggregate kept from the round before plus the new file
  (:func:`cdclake.apply.tombstones.newest_tombstones`).

Both give the same tombstones (checked each round); the table gives their median seconds and the
ratio.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, LongType, StructField, StructType, TimestampType
from rich.console import Console
from rich.progress import track
from rich.table import Table

from cdclake import delta_rs
from cdclake._spark import get_or_create
from cdclake.apply.scd1 import tombstone_positions
from cdclake.apply.tombstones import newest_tombstones
from cdclake.model import POSITION_COL
from cdclake.target_layout import DELETED_AT

SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField(POSITION_COL, ArrayType(LongType())),
        StructField(DELETED_AT, TimestampType()),
    ]
)
PER_FILE, KEYS, BATCH = 375, 200_000, 2_500


def _append(path: str, batch: int, rng: random.Random) -> None:
    now = datetime.now(UTC)
    rows = [
        {"id": rng.randrange(KEYS), POSITION_COL: [batch, i], DELETED_AT: now}
        for i in range(PER_FILE)
    ]
    delta_rs.append(path, rows, SCHEMA)


def _check(spark: SparkSession, source: DataFrame, tombs: DataFrame) -> tuple[float, int]:
    """Seconds of the batch's join with ``tombs`` and a count, and the keys it held back."""
    started = time.perf_counter()
    joined = source.join(tombs, F.col("_k0").eqNullSafe(F.col("_t0")), "left")
    held = joined.agg(F.count_if(F.col("_tomb") >= F.col("position"))).first()
    return time.perf_counter() - started, int(held[0]) if held else 0


def measure(spark: SparkSession, files: int, rounds: int) -> tuple[float, float]:
    """Median seconds of the check (read whole, kept) after each of ``rounds`` appends to a log
    of ``files`` files."""
    rng = random.Random(files)
    path = f"{tempfile.mkdtemp(prefix='cdclake-tomb-')}/log"
    for batch in track(range(files), description=f"a log of {files:,} files", transient=True):
        _append(path, batch, rng)
    source = (
        spark.range(BATCH)
        .select(
            (F.col("id") * (KEYS // BATCH)).alias("_k0"),
            F.array(F.lit(files // 2), F.lit(0)).cast("array<bigint>").alias("position"),
        )
        .persist()
    )
    source.count()
    ways: dict[str, Callable[[], DataFrame]] = {
        "whole": lambda: tombstone_positions(spark, path, ["id"]),
        "kept": lambda: newest_tombstones(spark, path, ["id"]),
    }
    for way in ways.values():  # warm: the first read of the log, either way
        _check(spark, source, way())
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    for r in range(rounds):
        _append(path, files + r, rng)
        held = {}
        for name in sorted(ways, reverse=r % 2 == 1):
            took, held[name] = _check(spark, source, ways[name]())
            seconds[name].append(took)
        if held["whole"] != held["kept"]:
            raise SystemExit(f"the kept tombstones hold back {held['kept']} keys, the log {held}")
    source.unpersist()
    return statistics.median(seconds["whole"]), statistics.median(seconds["kept"])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--files", default="200,1000", help="log lengths in files (200,1000)")
    p.add_argument("--rounds", type=int, default=5, help="appends timed per length (5)")
    args = p.parse_args(argv)
    spark = get_or_create("bench-tombstones")
    table = Table("log files", "read whole s", "kept s", "kept / read whole")
    for files in [int(x) for x in args.files.split(",")]:
        whole, kept = measure(spark, files, args.rounds)
        table.add_row(f"{files:,}", f"{whole:.2f}", f"{kept:.2f}", f"{kept / whole:.2f}")
    Console().print(table)


if __name__ == "__main__":
    main()
