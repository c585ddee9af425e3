"""The latest change per key, two ways: cdclake's window (``row_number`` over the key, newest
position first) against a partial aggregation (``max_by`` of the row by position and input
order), on the same cached row operations (issue 36, item 6).

``python -m bench.dedupe [--rows 100000,1000000] [--changes-per-key 10] [--repeat 5]``
(``src`` and the checkout on ``PYTHONPATH``). Each contender's result is written to Spark's
``noop`` sink (the whole result computed, nothing stored); the table reports the median of the
repeats after an untimed first run of each, and checks that both keep the same rows.

The rows have the shape :func:`cdclake.apply.scd1.expand` gives a batch: the key ``_k0``, the
change's ``position`` (an array of numbers) and ``seq``, its kind and the image as a struct of
four columns (a 200-character text among them).
"""

from __future__ import annotations

import argparse
import statistics
import time

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from rich.console import Console
from rich.table import Table

from cdclake._spark import get_or_create
from cdclake.apply.scd1 import ROW, latest_per_key


def operations(spark: SparkSession, rows: int, per_key: int) -> DataFrame:
    """``rows`` row operations over ``rows // per_key`` keys, persisted and counted."""
    i = F.col("id")
    ops = spark.range(rows).select(
        (i % max(rows // per_key, 1)).alias("_k0"),
        F.lit("upsert").alias("_kind"),
        F.array(F.floor(i / 7).cast("long"), i).alias("position"),
        i.alias("seq"),
        F.struct(
            i.alias("id"),
            F.concat(F.lit("name-"), i.cast("string")).alias("name"),
            (i * 3).alias("qty"),
            F.lit("x" * 200).alias("pad"),
        ).alias(ROW),
    )
    ops = ops.persist()
    ops.count()
    return ops


def by_max(ops: DataFrame) -> DataFrame:
    """The newest row operation per key as one aggregate: ``max_by`` of the whole row."""
    rest = [c for c in ops.columns if c != "_k0"]
    newest = F.max_by(F.struct(*rest), F.struct("position", "seq")).alias("_r")
    return ops.groupBy("_k0").agg(newest).select("_k0", "_r.*")


def timed(df: DataFrame, repeat: int) -> float:
    df.write.format("noop").mode("overwrite").save()  # untimed: plan, compile, warm
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        df.write.format("noop").mode("overwrite").save()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.dedupe", description=__doc__)
    p.add_argument("--rows", default="100000,1000000", help="row operations, comma-separated")
    p.add_argument("--changes-per-key", type=int, default=10)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args(argv)
    spark = get_or_create("cdclake-bench-dedupe")
    spark.sparkContext.setLogLevel("ERROR")
    out = Table("rows", "keys", "window (s)", "max_by (s)", "max_by / window", "same rows")
    for n in [int(x) for x in a.rows.split(",")]:
        ops = operations(spark, n, a.changes_per_key)
        window, aggregate = latest_per_key(ops, ["_k0"]), by_max(ops)
        same = window.select(*ops.columns).exceptAll(aggregate.select(*ops.columns)).isEmpty()
        tw, ta = timed(window, a.repeat), timed(aggregate, a.repeat)
        out.add_row(
            f"{n:,}", f"{n // a.changes_per_key:,}", f"{tw:.2f}", f"{ta:.2f}", f"{ta / tw:.2f}",
            "yes" if same else "NO",
        )  # fmt: skip
        ops.unpersist()
    aggregate.explain()  # the plan of the last size: where max_by runs
    Console().print(out)


if __name__ == "__main__":
    main()
