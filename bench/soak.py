"""Soak (issue 37): cdclake's Kafka stream over many tables at a steady rate for a long time,
with its own maintenance on, sampled over time. A benchmark, not a test.

    python -m bench.soak                          # 20 tables, 500 events/s, 30 minutes
    python -m bench.soak --tables 5 --rate 100 --minutes 2 --maintain-every 5 \\
        --keep-batches 11 --sample-seconds 10     # a smoke run

What runs. A broker of its own (``scripts/kafka.sh``, as ``bench.run --streaming``), one topic of
two partitions carrying a whole database: the bench's Debezium stream spread over ``--tables``
tables (:func:`bench.data.events`: inserts, updates, deletes; a delete leaves a tombstone).
cdclake's query (:func:`cdclake.run.streaming.run_kafka`, trigger ``--trigger``) starts on the
empty topic; then a child process produces ``--rate`` events/s for ``--minutes``
(:func:`bench.latency.produce_apart`). The query maintains its target every
``--maintain-every`` batches (compaction, vacuum at the tables' own retention, bookkeeping
bounded by ``--batches-retention``, ``--tombstone-retention`` and ``--keep-batches``).

What is sampled, every ``--sample-seconds`` by a thread of the driver (no Spark job, no forced
GC): the driver's heap after GC (JVM management beans), data files of each table's current
version and rows of each of cdclake's own tables (their Delta logs, with delta-rs), bytes of the
query's checkpoint and of every ``_delta_log`` under the target. After the run, each event's
latency (produce time to the end of the batch that read its offset), bucketed by the window it
was produced in, and the check that the lake is exact: every table holds exactly the rows the
generator leaves, and the query counted every message produced.

The report (``soak.json``, ``soak.md``, ``soak.png`` in ``--out``) and its targets:
:mod:`bench.soak_report`. ``--publish`` copies it to ``bench/results/soak.*``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import threading
import time
from bisect import bisect_left
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench import data, latency, soak_report
from bench.stream import _config, broker, new_topic

BENCH = Path(__file__).resolve().parent
MB = 1024 * 1024
KEEP_BATCHES = 11
"""The least cdclake takes: a 30-minute run of 60-second batches has about 30 batches, and
with 30 kept (this bench's first default) nothing was rolled up (bench/results/soak.md)."""


def log(msg: str) -> None:
    """One line on stderr, with the time."""
    print(f"{time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench.soak",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--tables", type=int, default=20, help="source tables in the topic (20)")
    p.add_argument("--rate", type=float, default=500.0, help="events/s produced (500)")
    p.add_argument("--minutes", type=float, default=30.0, help="how long to produce (30)")
    p.add_argument(
        "--maintain-every",
        type=int,
        default=25,
        help="the stream maintains its target after every N batches (25)",
    )
    p.add_argument(
        "--keep-batches",
        type=int,
        default=KEEP_BATCHES,
        help=f"batches of _cdc_sources kept row by row ({KEEP_BATCHES}, the least; cdclake's "
        "default, 100, is more batches than a 30-minute run has)",
    )
    p.add_argument(
        "--batches-retention",
        default=None,
        help="rows of _cdc_batches kept (a duration: 90s, 10m; default a third of --minutes)",
    )
    p.add_argument(
        "--tombstone-retention",
        default=None,
        help="tombstones kept (a duration; default a third of --minutes)",
    )
    p.add_argument("--trigger", default=latency.LATENCY_TRIGGER, help="processing-time trigger")
    p.add_argument("--sample-seconds", type=float, default=30.0, help="sampling interval (30)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument(
        "--deletion-vectors",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="create tables with deletion vectors (default: off, cdclake's default)",
    )
    p.add_argument("--out", type=Path, default=BENCH / "out" / "soak", help="report folder")
    p.add_argument(
        "--publish",
        action="store_true",
        help="also copy the report to bench/results/soak.{md,json,png}",
    )
    a = p.parse_args(argv)
    from cdclake.ops.status import parse_duration

    third = f"{a.minutes * 60 / 3:.0f}s"
    a.batches_retention = a.batches_retention or third
    a.tombstone_retention = a.tombstone_retention or third
    for name in ("batches_retention", "tombstone_retention"):
        option = "--" + name.replace("_", "-")
        setattr(a, name + "_s", parse_duration(getattr(a, name), option))
    return a


@contextmanager
def maintenance(runs: list[dict[str, Any]]) -> Iterator[None]:
    """In this process only, what each run of the stream's maintenance did per table is
    appended to ``runs`` (the stream logs only a table that failed): the stream takes
    ``maintain`` from :mod:`cdclake.ops.maintain` when it maintains, which sees this."""
    from cdclake.ops import maintain as ops

    saved = ops.maintain

    def recorded(*args: Any, **kwargs: Any) -> Any:
        started = time.time()
        report = saved(*args, **kwargs)
        runs.append({"started": started, "ended": time.time(),
                     "tables": [t.to_json() for t in report]})  # fmt: skip
        return report

    ops.maintain = recorded
    try:
        yield
    finally:
        ops.maintain = saved


# ---- what the sampler reads ------------------------------------------------------------------


class Heap:
    """The driver JVM's heap after GC, from its management beans (no GC is forced).

    ``heap_after_gc_mb``: the heap pools in use right after the newest collection the JVM ran
    (young, mixed or full: ``GcInfo.getMemoryUsageAfterGc``). ``old_gen_after_gc_mb``: the old
    generation's ``getCollectionUsage()``; G1 updates it only at a mixed or full collection, so
    it stays 0 until the first one."""

    def __init__(self, spark: Any) -> None:
        mf = spark.sparkContext._jvm.java.lang.management.ManagementFactory
        pools = list(mf.getMemoryPoolMXBeans())
        self._heap_pools = {str(p.getName()) for p in pools if str(p.getType().name()) == "HEAP"}
        old = [p for p in pools if "Old" in str(p.getName()) or "Tenured" in str(p.getName())]
        self._old = old[0] if old else None
        self._gcs = list(mf.getGarbageCollectorMXBeans())
        self._mx = mf.getMemoryMXBean()

    def read(self) -> dict[str, Any]:
        newest, after = -1, 0
        counts: dict[str, int] = {}
        for gc in self._gcs:
            counts[str(gc.getName())] = int(gc.getCollectionCount())
            info = gc.getLastGcInfo()
            if info is not None and int(info.getEndTime()) > newest:
                newest = int(info.getEndTime())
                usage = info.getMemoryUsageAfterGc()
                after = sum(int(usage[k].getUsed()) for k in usage if k in self._heap_pools)
        old = self._old.getCollectionUsage() if self._old is not None else None
        return {
            "heap_after_gc_mb": round(after / MB, 1) if newest >= 0 else None,
            "old_gen_after_gc_mb": round(int(old.getUsed()) / MB, 1) if old else None,
            "heap_used_mb": round(int(self._mx.getHeapMemoryUsage().getUsed()) / MB, 1),
            "gc_counts": counts,
        }


def _bytes(folder: Path) -> tuple[int, int]:
    """Bytes under ``folder``: in ``_delta_log`` folders, and elsewhere."""
    log_bytes = other = 0
    for root, _, files in os.walk(folder):
        in_log = "_delta_log" in Path(root).parts
        for f in files:
            try:
                size = os.stat(os.path.join(root, f)).st_size
            except OSError:  # vacuumed or replaced while walking
                continue
            if in_log:
                log_bytes += size
            else:
                other += size
    return log_bytes, other


@dataclass
class Lake:
    """The target and checkpoint of the run, read without Spark."""

    target: Path
    checkpoint: Path
    identifiers: list[str]

    def files(self) -> list[int]:
        """Data files of each table's current version (0 for a table not created yet)."""
        from cdclake import delta_rs
        from cdclake.apply.tables import Target

        out = []
        for ident in self.identifiers:
            table = delta_rs.open_table(Target(str(self.target)).table_path(ident))
            out.append(0 if table is None else len(table.file_uris()))
        return out

    def bookkeeping(self) -> dict[str, dict[str, int | None]]:
        """Rows, files and bytes of each of cdclake's own tables (tombstones summed)."""
        from cdclake.ops.status import bookkeeping_sizes

        return bookkeeping_sizes(str(self.target), self.identifiers)

    def sizes(self) -> dict[str, int]:
        delta_log, data_bytes = _bytes(self.target)
        checkpoint = sum(_bytes(self.checkpoint))
        return {"checkpoint_bytes": checkpoint, "delta_log_bytes": delta_log,
                "data_bytes": data_bytes}  # fmt: skip


@dataclass
class Batch:
    """One micro-batch as the query's callback saw it; ``after_s``: from the batch's end to the
    callback (its ``_cdc_batches`` record, and the maintenance when it ran after this batch)."""

    metrics: Any
    callback_at: float
    maintained: bool

    @property
    def after_s(self) -> float:
        return self.callback_at - float(self.metrics.finished_at.timestamp())

    @property
    def seconds(self) -> float:
        return float((self.metrics.finished_at - self.metrics.started_at).total_seconds())

    def as_json(self, t0: float) -> dict[str, Any]:
        m = self.metrics
        return {
            "batch_id": m.batch_id,
            "started_s": round(m.started_at.timestamp() - t0, 2),
            "finished_s": round(m.finished_at.timestamp() - t0, 2),
            "seconds": round(self.seconds, 2),
            "after_s": round(self.after_s, 2),
            "maintained": self.maintained,
            "messages": m.result.messages,
            "behind_s": None if m.seconds_behind is None else round(m.seconds_behind, 1),
        }


class Sampler(threading.Thread):
    """One sample every ``every`` seconds from ``t0`` (see the module docstring), a console line
    each."""

    def __init__(self, lake: Lake, heap: Heap, batches: list[Batch], every: float) -> None:
        super().__init__(name="soak-sampler", daemon=True)
        self.lake, self.heap, self.batches, self.every = lake, heap, batches, every
        self.samples: list[dict[str, Any]] = []
        self.t0 = time.time()
        self.produce_end: float | None = None
        self._stop_event = threading.Event()

    def run(self) -> None:
        k = 1
        while not self._stop_event.wait(max(self.t0 + k * self.every - time.time(), 0)):
            self.take()
            k = int((time.time() - self.t0) // self.every) + 1

    def stop(self) -> None:
        self._stop_event.set()
        self.join()

    def take(self) -> dict[str, Any]:
        started = time.time()
        since = self.samples[-1]["t_s"] + self.t0 if self.samples else self.t0
        s: dict[str, Any] = {"t_s": round(started - self.t0, 1)}
        s["phase"] = "producing" if self.produce_end is None else "catching up"
        done = list(self.batches)
        window = [b for b in done if b.callback_at > since]
        s["batches"] = len(done)
        s["messages"] = sum(b.metrics.result.messages or 0 for b in done)
        s["maintenances"] = sum(b.maintained for b in done)
        s["batch_s_max"] = round(max(b.seconds for b in window), 2) if window else None
        behind = [b.metrics.seconds_behind for b in window if b.metrics.seconds_behind is not None]
        s["behind_s_max"] = round(max(behind), 1) if behind else None
        try:
            s.update(self.heap.read())
            files = self.lake.files()
            s["files"] = files
            s["files_max"] = max(files, default=0)
            s["files_mean"] = round(sum(files) / len(files), 2) if files else 0
            own = self.lake.bookkeeping()
            s["rows"] = {name: v["rows"] for name, v in own.items()}
            s["bookkeeping_files"] = {name: v["files"] for name, v in own.items()}
            s.update(self.lake.sizes())
        except Exception as e:  # a read that meets a table being rewritten: the next one will do
            s["error"] = soak_report.first_line(e)
        s["sample_s"] = round(time.time() - started, 2)
        self.samples.append(s)
        log(soak_report.sample_line(s))
        return s


# ---- the run ---------------------------------------------------------------------------------


def start_spark() -> Any:
    from cdclake import _spark

    t0 = time.perf_counter()
    spark = _spark.get_or_create("cdclake-soak", log_file=_spark.new_log_file())
    log(f"Spark {spark.version} up in {time.perf_counter() - t0:.1f}s (JVM output in Spark's log)")
    return spark


def expected_rows(n: int, seed: int, tables: int) -> dict[str, dict[int, tuple[Any, ...]]]:
    """The rows the generator's ``n`` events leave in each table: table -> id -> row."""
    out: dict[str, dict[int, tuple[Any, ...]]] = {}
    for e in data.events(n, max(n // 10, 1), 100, seed, tables):
        row = e.after if e.after is not None else e.before
        assert row is not None
        live = out.setdefault(e.table, {})
        key = int(row["id"])  # type: ignore[call-overload]
        if e.op == "d":
            live.pop(key, None)
        else:
            live[key] = tuple(row[c] for c in data.COLUMNS[1:])
    return out


def check_lake(spark: Any, target: Path, n: int, seed: int, tables: int) -> dict[str, Any]:
    """Every table's rows against the generator's: counts, and rows not equal on both sides."""
    from cdclake.apply.tables import Target

    want = expected_rows(n, seed, tables)
    bad: list[str] = []
    rows = expected = 0
    for name, live in sorted(want.items()):
        path = Target(str(target)).table_path(f"{data.DB}.{data.SCHEMA}.{name}")
        got = {
            int(r[0]): tuple(r[1:])
            for r in spark.read.format("delta").load(path).select(*data.COLUMNS).collect()
        }
        rows, expected = rows + len(got), expected + len(live)
        differ = sum(got.get(k) != v for k, v in live.items()) + len(got.keys() - live.keys())
        if differ:
            bad.append(f"{name}: {differ} rows differ ({len(got)} rows, {len(live)} expected)")
    return {"tables_checked": len(want), "rows": rows, "expected_rows": expected,
            "tables_differ": bad}  # fmt: skip


def window_latencies(
    samples: list[dict[str, Any]], pairs: list[tuple[int, int]], t0: float
) -> None:
    """Set each sample's p50/p95 latency of the events produced in its window."""
    pairs = sorted(pairs)
    stamps = [ts for ts, _ in pairs]
    start = t0
    for s in samples:
        end = t0 + s["t_s"]
        lo, hi = bisect_left(stamps, start * 1000), bisect_left(stamps, end * 1000)
        lat = [(v - ts) / 1000 for ts, v in pairs[lo:hi]]
        s["events"] = len(lat)
        s["latency_p50_s"] = round(latency.quantile(lat, 0.5), 3) if lat else None
        s["latency_p95_s"] = round(latency.quantile(lat, 0.95), 3) if lat else None
        s["latency_max_s"] = round(max(lat), 3) if lat else None
        start = end


def warm_up(bootstrap: str) -> None:
    """One record from an idempotent producer, to a topic of its own: right after the broker
    starts, the first producer id it hands out waits for its coordinator to load ("Coordinator
    load in progress"), a wait the first events of the run would otherwise carry."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "log_level": 3})
    p.produce(new_topic(bootstrap, "soak-warm-up"), value=b"warm-up")
    if p.flush(120) != 0:
        raise RuntimeError(f"the broker at {bootstrap} did not take a record within 120 s")


def run(a: argparse.Namespace) -> dict[str, Any]:
    from cdclake.run.streaming import run_kafka

    out: Path = a.out.absolute()
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    idents = [f"{data.DB}.{data.SCHEMA}.{data.table_name(i, a.tables)}" for i in range(a.tables)]
    lake = Lake(work / "lake", work / "chk", idents)
    spark = start_spark()
    heap = Heap(spark)
    batches: list[Batch] = []
    failure: list[BaseException] = []
    result: dict[str, Any] = {"status": "ok"}
    started = time.time()
    runs: list[dict[str, Any]] = []
    with broker() as bootstrap, maintenance(runs):
        warm_up(bootstrap)
        topic = new_topic(bootstrap, "soak")
        config = _config(
            bootstrap,
            topic,
            work,
            trigger_interval=a.trigger,
            maintain_every=a.maintain_every,
            keep_batches=a.keep_batches,
            batches_retention=timedelta(seconds=a.batches_retention_s),
            tombstone_retention=timedelta(seconds=a.tombstone_retention_s),
        )

        def on_batch(m: Any) -> None:
            maintained = (m.batch_id + 1) % a.maintain_every == 0
            batches.append(Batch(m, time.time(), maintained))

        def query() -> None:
            try:
                run_kafka(spark, config, on_batch)
            except BaseException as e:
                failure.append(e)

        thread = threading.Thread(target=query, name="soak-query", daemon=True)
        thread.start()
        running = latency._wait_ready(spark, failure)
        log(f"query ready on {topic} ({a.tables} tables); producing {a.rate:g} ev/s "
            f"for {a.minutes:g} min")  # fmt: skip
        sampler = Sampler(lake, heap, batches, a.sample_seconds)
        sampler.start()
        try:
            n, produce_s, produced = latency.produce_apart(
                bootstrap, topic, a.rate, a.minutes * 60, a.seed, work, a.tables
            )
            sampler.produce_end = time.time()
            log(f"produced {n:,} events in {produce_s:.1f}s; waiting for the query to catch up")
            result.update(produced=n, produce_s=round(produce_s, 2))
            _wait_caught_up(batches, produced, failure, thread, a.minutes * 60)
            result["caught_up_s"] = round(time.time() - sampler.produce_end, 1)
        except Exception as e:
            result["status"] = f"failed: {soak_report.first_line(e)}"
            log(result["status"])
            produced = None
        finally:
            sampler.stop()
            sampler.take()  # the state the run ends in
            running.stop()
            thread.join(300)
    if failure and result["status"] == "ok":
        result["status"] = f"failed: {soak_report.first_line(failure[0])}"
    events = _after_run(spark, a, result, produced, batches, sampler)
    result["wall_s"] = round(time.time() - started, 1)
    spark.stop()
    t0 = sampler.t0
    for r in runs:
        r["started_s"], r["ended_s"] = (
            round(r.pop("started") - t0, 2),
            round(r.pop("ended") - t0, 2),
        )
    result["maintenance_runs"] = runs
    return soak_report.build(a, result, sampler.samples, [b.as_json(t0) for b in batches], events)


def _after_run(
    spark: Any,
    a: argparse.Namespace,
    result: dict[str, Any],
    produced: Any,
    batches: list[Batch],
    sampler: Sampler,
) -> list[tuple[float, float]]:
    """Counts, each window's latencies and the lake's check, into ``result`` and the samples;
    (produce time into the run, latency) of every event, for the targets (not the JSON)."""
    t0 = sampler.t0
    result["messages"] = sum(b.metrics.result.messages or 0 for b in batches)
    result["quarantined"] = sum(b.metrics.result.quarantined or 0 for b in batches)
    result["produce_end_s"] = round((sampler.produce_end or time.time()) - t0, 1)
    if produced is None or result["status"] != "ok":
        return []
    if produced.errors:
        result["status"] = f"failed: {len(produced.errors)} events not delivered"
    pairs, _ = latency.visible_at(produced, [b.metrics for b in batches], {})
    window_latencies(sampler.samples, pairs, t0)
    t1 = time.perf_counter()
    result["lake"] = check_lake(spark, sampler.lake.target, result["produced"], a.seed, a.tables)
    log(f"lake checked in {time.perf_counter() - t1:.1f}s")
    return [(ts / 1000 - t0, (v - ts) / 1000) for ts, v in pairs]


def _wait_caught_up(
    batches: list[Batch], produced: Any, failure: list[BaseException], thread: Any, secs: float
) -> None:
    """Until the query's batches have read every produced offset (or it stops, or the deadline:
    as long as the production took, at least 5 minutes)."""
    ends, deadline = produced.ends(), time.time() + max(300.0, secs)
    while True:
        if latency._caught_up([b.metrics for b in list(batches)], ends):
            return
        if failure or not thread.is_alive():
            raise RuntimeError(f"the query stopped: {failure[:1]}")
        if time.time() > deadline:
            raise RuntimeError("the query did not catch up within its deadline")
        time.sleep(0.2)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    os.environ.setdefault("CDCLAKE_SPARK_LOG_LEVEL", "ERROR")
    os.environ["CDCLAKE_DELETION_VECTORS"] = "true" if a.deletion_vectors else "false"
    os.environ.setdefault("RUST_LOG", "error")
    summary = run(a)
    publish = BENCH / "results" if a.publish else None
    soak_report.write(summary, a.out.absolute(), publish)
    print(soak_report.targets_table(summary), file=sys.stderr, flush=True)
    log(f"report: {a.out.absolute() / 'soak.md'}")
    return 0 if summary["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
