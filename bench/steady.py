"""A stream's steady micro-batches, one by one: seconds (by step), Spark jobs and Delta commits.

``python -m bench.steady [--events-per-batch 300] [--batches 18] [--keys 200]`` (``src`` and the
checkout on ``PYTHONPATH``). The bench's Debezium stream (inserts, 85 % updates, 15 % deletes)
is cut into batches applied in order to one target, as a stream applies its micro-batches: the
runner's ``apply_raw`` with the batch's idempotent-write ids and the plans of the batches before
(typed in one pass from the second batch on), the tables' rows not counted (as a Kafka stream
does). What a small batch costs is fixed work, not work per event: this is the tool that shows it
(issue 36). A batch whose commits reach a tenth version also writes Delta checkpoints.

``--dead-tombstones N`` first loads N other keys, deletes them and brings them back (three
batches), so the tombstone log holds N tombstones no change can meet any more, as a table
accumulates over weeks; ``--prune`` then prunes the log to its live tombstones
(:func:`cdclake.apply.scd1.prune_tombstones`, what ``cdclake maintain`` does) before the steady
batches. The two runs side by side show what a batch with deletes pays for dead tombstones.

``--scd-type 2`` applies the stream into history tables (SCD type 2) instead. ``--history N``
first loads N events of other keys (inserted, then updated in three more batches), so the history
log a batch reads holds N events more, as a history table's log accumulates over weeks.

``--format F`` cuts the same stream in another wire format (``canal``, ``ckafka``,
``dataworks``; CKafka's key configured as the bench does): a schemaless format's batches are
typed in one pass too once its table's plan is known.

``--recipe`` also runs the hand-written recipe (:func:`bench.contenders.merge_latest`: its Python
UDF parse, the latest change per key, one MERGE) on the same batches in the same session, each
right after cdclake's batch of the same events (so both see the same JVM, warm-up and machine),
into a table of its own, and reports the median steady batch of each and their ratio: what a
Delta MERGE a batch costs any stream built on one, beside what cdclake adds to it (Debezium,
current state, without ``--transactions``, ``--dead-tombstones`` or ``--history``).

``--count-rows`` reports each table's rows after each batch (``rows_now``), as a batch over
files does.

``--kafka`` hands each batch to the Kafka stream's own batch function
(:func:`cdclake.run.streaming.process_batch`) as Spark's Kafka source delivers it
(:func:`cdclake.run.kafka_tools.source_rows`), so a batch also writes what a Kafka stream's does
(its record of the batch, its lag); no broker is asked.

``--transactions K`` groups the stream into source transactions of K events (each event's
``transaction`` block, and an END record of the transaction-metadata topic after its events; a
batch ends anywhere in a transaction); ``--consistent`` applies it with ``--consistent``
(:mod:`cdclake.apply.consistency`). The same input with and without it shows what consistent
mode costs a batch (issue 39); the ``waiting`` column counts the changes held for the next batch.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from rich.console import Console
from rich.table import Table

from bench.data import WIRE_FORMATS, Event, debezium_line, events, primary_keys
from bench.measure import delta_commits
from cdclake._spark import get_or_create
from cdclake.apply.scd1 import prune_tombstones
from cdclake.config import ApplyConfig
from cdclake.decode import KnownGroups
from cdclake.run.kafka_tools import source_rows
from cdclake.run.runner import apply_raw
from cdclake.run.streaming import process_batch
from cdclake.run.summary import timing
from cdclake.sources import raw_from_lines
from cdclake.target_layout import TOMBSTONES


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.steady", description=__doc__)
    p.add_argument("--events-per-batch", type=int, default=300)
    p.add_argument("--batches", type=int, default=18)
    p.add_argument("--keys", type=int, default=200, help="distinct keys of the stream (200)")
    p.add_argument("--dead-tombstones", type=int, default=0, help="tombstones of keys back")
    p.add_argument("--prune", action="store_true", help="prune the log before the batches")
    p.add_argument("--transactions", type=int, default=0, help="events per source transaction")
    p.add_argument("--consistent", action="store_true", help="apply with --consistent")
    p.add_argument("--format", default="debezium", choices=sorted(WIRE_FORMATS))
    p.add_argument("--scd-type", type=int, default=1, choices=(1, 2), help="2: history tables")
    p.add_argument("--kafka", action="store_true", help="batches as a Kafka stream's")
    p.add_argument(
        "--count-rows", action="store_true", help="each table's rows after each batch, as files"
    )
    p.add_argument(
        "--history", type=int, default=0, help="with --scd-type 2: events of other keys first"
    )
    p.add_argument("--recipe", action="store_true", help="the recipe too, on the same batches")
    args = p.parse_args(argv)
    if args.recipe and (
        args.format != "debezium" or args.scd_type != 1 or args.transactions
        or args.dead_tombstones or args.history or args.consistent
    ):  # fmt: skip
        p.error("--recipe: the recipe applies Debezium's plain stream to a current-state table")
    if args.format != "debezium" and (args.transactions or args.dead_tombstones):
        p.error("--transactions and --dead-tombstones take Debezium's stream only")
    if args.kafka and args.count_rows:
        p.error("--count-rows: a Kafka stream counts its tables' rows once, when it ends")
    n, batches = args.events_per_batch, args.batches
    if args.kafka:  # no query here, so no offset log to read each batch's end from
        logging.getLogger("cdclake.run.stream_metrics").setLevel(logging.ERROR)
    spark = get_or_create("bench-steady")
    spark.sparkContext.setLogLevel("ERROR")
    tracker = spark.sparkContext.statusTracker()
    dead = args.dead_tombstones
    history = args.history
    total = n * batches + 3 * dead + history
    stream = [replace(e, i=e.i + 3 * dead + history) for e in events(n * batches, args.keys, 100)]
    line = WIRE_FORMATS[args.format].line
    lines = [line(e, total) for e in stream]
    if args.transactions:
        lines = in_transactions(lines, args.transactions)
    n = len(lines) // batches  # with END records, a batch holds the same share of the input
    table = Table(
        "batch", "seconds", "Spark jobs", "Delta commits", "one pass", "applied", "waiting",
        *[f"{step} s" for step in STEP_COLUMNS],
    )  # fmt: skip
    seconds: list[float] = []
    steady: list[Any] = []  # the warm batches' results: their seconds by step
    with tempfile.TemporaryDirectory(prefix="bench-steady-") as tmp:
        target = Path(tmp) / "lake"
        kafka: dict[str, Any] = (
            {"kafka_bootstrap": "127.0.0.1:9", "topics": ("steady",), "checkpoint": f"{tmp}/chk"}
            if args.kafka
            else {}
        )  # a Kafka stream's settings: its batches are given here, no broker is asked
        config = ApplyConfig(
            format=args.format,
            target=str(target),
            consistent=args.consistent,
            stored_as_scd_type=args.scd_type,
            keys=primary_keys(args.format) or {},
            **kafka,
        )
        known = KnownGroups()
        recipe = _Recipe(spark, Path(tmp) / "recipe") if args.recipe else None
        if dead:
            _dead_tombstones(spark, config, dead, total, known)
            if args.prune:
                [log] = (target / TOMBSTONES).iterdir()  # the stream's one table
                started = time.perf_counter()
                gone = prune_tombstones(spark, str(log), str(target / log.name))
                Console().print(
                    f"pruned {gone:,} tombstones in {time.perf_counter() - started:.1f} s"
                )
        if history:
            started = time.perf_counter()
            _history(spark, config, history, total, known)
            Console().print(
                f"loaded a history of {history:,} events in {time.perf_counter() - started:.1f} s"
            )
        for b in range(batches):
            batch = lines[b * n : (b + 1) * n]
            before = delta_commits(target)
            spark.sparkContext.setJobGroup(f"steady-{b}", f"steady batch {b}")
            started = time.perf_counter()
            if args.kafka:
                records = source_rows(spark, batch, "steady", b * n)
                result = process_batch(records, b, config, "bench-steady", known=known).result
            else:
                raw = raw_from_lines(spark, batch, epoch=b)
                result = apply_raw(raw, config, "bench-steady", b, n, args.count_rows, known)
            took = time.perf_counter() - started
            jobs = len(tracker.getJobIdsForGroup(f"steady-{b}"))
            if b >= 2:  # warm
                seconds.append(took)
                steady.append(result)
            table.add_row(
                str(b), f"{took:.2f}", str(jobs), str(delta_commits(target) - before),
                "yes" if result.one_pass else "no", str(result.applied), str(result.pending),
                *_steps(result),
            )  # fmt: skip
            if recipe is not None:
                recipe.batch(b, batch)
    console = Console(width=max(Console().width, 132))  # the steps' columns, in a log too
    console.print(table)
    if seconds:
        console.print(_steady("steady batches", seconds, n))
        median = sorted(steady, key=lambda r: sum(r.seconds.values()))[len(steady) // 2]
        console.print(f"the median steady batch by step: {timing(median)}", highlight=False)
    if recipe is not None:
        console.print(recipe.table)
        console.print(_steady("the recipe's steady batches", recipe.seconds, n))
        ratio = statistics.median(recipe.seconds) / statistics.median(seconds)
        console.print(f"recipe / cdclake, median steady batch: {ratio:.2f}")


STEP_COLUMNS = ("decode", "tables", "tombstones", "write", "record")
"""A batch's seconds by step (:data:`cdclake.apply.results.STEPS`), and of its ``tables`` step
what its writes and tombstones took (:data:`cdclake.apply.results.TABLE_STEPS`)."""


def _steps(result: Any) -> list[str]:
    took = {**result.table_seconds(), **result.seconds}
    return [f"{took.get(step, 0.0):.2f}" for step in STEP_COLUMNS]


def _steady(what: str, seconds: list[float], n: int) -> str:
    """The line that sums up the steady batches (from the third) of one contender."""
    median = statistics.median(seconds)
    return (
        f"{what} (from the third): median {median:.2f} s, min {min(seconds):.2f} s "
        f"over {len(seconds)}; {n / median:,.0f} records/s"
    )


class _Recipe:
    """The recipe's stream into ``target``: each batch's lines parsed by its Python UDF (the
    parse of :func:`bench.contenders.recipe`) and MERGEd (:func:`bench.contenders.merge_latest`);
    seconds, Spark jobs and Delta commits of each."""

    def __init__(self, spark: SparkSession, target: Path) -> None:
        from pyspark.sql import functions as F

        from bench import contenders

        self._spark, self._target, self._merge = spark, target, contenders.merge_latest
        self._parse = F.udf(contenders.parse_debezium_line, contenders.RECIPE_EVENT, useArrow=True)
        self.table = Table("recipe batch", "seconds", "Spark jobs", "Delta commits")
        self.seconds: list[float] = []

    def batch(self, b: int, lines: list[str]) -> None:
        spark = self._spark
        before = delta_commits(self._target)
        spark.sparkContext.setJobGroup(f"recipe-{b}", f"recipe batch {b}")
        started = time.perf_counter()
        values = spark.createDataFrame([(line,) for line in lines], "value string")
        events_df = values.select(self._parse("value").alias("e")).select("e.*")
        self._merge(spark, events_df, self._target)
        took = time.perf_counter() - started
        if b >= 2:  # warm
            self.seconds.append(took)
        jobs = len(spark.sparkContext.statusTracker().getJobIdsForGroup(f"recipe-{b}"))
        self.table.add_row(
            str(b), f"{took:.2f}", str(jobs), str(delta_commits(self._target) - before)
        )


def in_transactions(lines: list[str], size: int) -> list[str]:
    """``lines`` as source transactions of ``size`` events: each event's ``transaction`` block,
    and after the last of each, the transaction's END record."""
    out = []
    for start in range(0, len(lines), size):
        tx = f"{start // size + 1}:0"
        group = lines[start : start + size]
        ts = 0
        for order, line in enumerate(group, 1):
            rec = json.loads(line)
            payload = rec["value"]["payload"]
            payload["transaction"] = {
                "id": tx,
                "total_order": order,
                "data_collection_order": order,
            }
            ts = payload.get("ts_ms") or payload["source"]["ts_ms"]
            out.append(json.dumps(rec, separators=(",", ":")))
        end = {"status": "END", "id": tx, "event_count": len(group), "ts_ms": ts}
        out.append(json.dumps({"key": {"id": tx}, "value": end}, separators=(",", ":")))
    return out


HISTORY_STEPS = 4


def _history(
    spark: SparkSession, config: ApplyConfig, history: int, total: int, known: KnownGroups
) -> None:
    """Keys the stream never touches (ids from 2 * 10^9), inserted, then updated in
    :data:`HISTORY_STEPS` - 1 more batches: ``history`` events in the log, as many versions."""
    keys = [2 * 10**9 + j for j in range(history // HISTORY_STEPS)]
    for b in range(HISTORY_STEPS):
        rows = [
            {"id": k, "first_name": "x", "last_name": "y", "email": f"{k}.{b}@example.org"}
            for k in keys
        ]
        step = [Event(b * len(keys) + j, "u" if b else "c", None, r) for j, r in enumerate(rows)]
        raw = raw_from_lines(spark, [debezium_line(e, total) for e in step], epoch=-10 + b)
        apply_raw(raw, config, "bench-steady-history", b, len(step), False, known)


def _dead_tombstones(
    spark: SparkSession, config: ApplyConfig, dead: int, total: int, known: KnownGroups
) -> None:
    """Keys the stream never touches (ids from 10^9), inserted, deleted and inserted again."""
    keys = [10**9 + j for j in range(dead)]
    rows = [
        {"id": k, "first_name": "x", "last_name": "y", "email": f"{k}@example.org"} for k in keys
    ]
    steps = [
        [Event(j, "c", None, r) for j, r in enumerate(rows)],
        [Event(dead + j, "d", r, None) for j, r in enumerate(rows)],
        [Event(2 * dead + j, "c", None, r) for j, r in enumerate(rows)],
    ]
    for b, step in enumerate(steps):
        raw = raw_from_lines(spark, [debezium_line(e, total) for e in step], epoch=-3 + b)
        apply_raw(raw, config, "bench-steady-dead", b, len(step), False, known)


if __name__ == "__main__":
    main()
