"""stream-latency: end-to-end latency (produce -> visible in Delta) of cdclake's Kafka query.

The query (:func:`cdclake.run.streaming.run_kafka`, processing-time trigger of 1 s) starts on an
empty topic and is waited for; then a child process (spawned, so that its Python does not hold
the GIL the query's ``foreachBatch`` needs) produces at a steady rate for a fixed time. Each
event carries its produce time (wall-clock ms) as the Kafka record timestamp and as Debezium
``source.ts_ms``; its delivery report gives its partition and offset. The event is visible at
the ``commitInfo`` timestamp of the target table's commit written by the batch that read its
offset: the query's per-batch callback gives each batch's end offsets, and cdclake tags every
write of batch *n* with ``txnAppId`` (the query's app id) and ``txnVersion`` = *n*, which the
commit's ``txn`` action records.

With ``transactions`` the events come in source transactions of five (the ``transaction``
block, and an END record on the transaction-metadata topic after each transaction's last change,
which the query reads too); with ``consistent`` the query runs with ``--consistent`` and an
event is visible when the cut that applied it is written (:func:`cut_visible`): a reader of
:func:`cdclake.snapshot` sees it then.
"""

from __future__ import annotations

import json
import multiprocessing
import threading
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from bench import data
from bench.measure import delta_commits
from bench.stream import (
    TABLE,
    _config,
    _consistency,
    _producer,
    metadata_topic,
    new_topic,
    send_event,
    table_rows,
)

LATENCY_TRIGGER = "1 second"


class Produced:
    """(partition -> sorted offsets, produce ms) of the events the broker acknowledged."""

    def __init__(self) -> None:
        self.by_partition: dict[int, list[tuple[int, int]]] = {}
        self.errors: list[str] = []
        self.ends_sent = 0  # END records sent to the transaction-metadata topic

    def on_delivery(self, ts_ms: int) -> Callable[[Any, Any], None]:
        def done(err: Any, msg: Any) -> None:
            if err is not None:
                self.errors.append(str(err))
            else:
                self.by_partition.setdefault(msg.partition(), []).append((msg.offset(), ts_ms))

        return done

    def ends(self) -> dict[int, int]:
        """The offset after the last acknowledged event of each partition."""
        return {p: max(o for o, _ in rows) + 1 for p, rows in self.by_partition.items()}


def produce_steady(
    bootstrap: str,
    topic: str,
    rate: float,
    seconds: float,
    seed: int,
    produced: Produced,
    tables: int = 1,
    meta: str | None = None,
) -> int:
    """``rate`` events/s for ``seconds`` (the generator's stream over ``tables`` tables); each
    event's Kafka timestamp and ``source.ts_ms`` are the wall-clock ms it was handed to the
    client. With ``meta``, in source transactions (:func:`bench.stream.send_event`)."""
    n = max(int(rate * seconds), 1)
    p = _producer(bootstrap)
    t0 = time.time()
    for e in data.events(n, max(n // 10, 1), 100, seed, tables):
        ahead = t0 + e.i / rate - time.time()
        if ahead > 0:
            time.sleep(ahead)
        ts = int(time.time() * 1000)
        ended = send_event(
            p, topic, meta, e, n, ts, timestamp=ts, on_delivery=produced.on_delivery(ts)
        )
        produced.ends_sent += ended
        p.poll(0)
    if p.flush(120) != 0:
        raise RuntimeError(f"events to {topic} not delivered to {bootstrap} within 120 s")
    return n


Job = tuple[str, str, float, float, int, str, int, str | None]


def _produce_to_file(args: Job) -> tuple[int, float]:
    """:func:`produce_steady` in a process of its own; (partition, offset, ms) lines to a file.
    Returns the events and the seconds producing them took."""
    bootstrap, topic, rate, seconds, seed, out, tables, meta = args
    produced = Produced()
    t0 = time.perf_counter()
    n = produce_steady(bootstrap, topic, rate, seconds, seed, produced, tables, meta)
    took = time.perf_counter() - t0
    with open(out, "w", encoding="utf-8") as f:
        for partition, rows in produced.by_partition.items():
            f.writelines(f"{partition} {o} {ts}\n" for o, ts in rows)
        f.writelines(f"error {e}\n" for e in produced.errors)
        f.write(f"ends {produced.ends_sent} 0\n")
    return n, took


def produce_apart(
    bootstrap: str,
    topic: str,
    rate: float,
    seconds: float,
    seed: int,
    work: Path,
    tables: int = 1,
    meta: str | None = None,
) -> tuple[int, float, Produced]:
    """:func:`produce_steady` in a child process, so that the producer's Python does not share
    the GIL with the query's ``foreachBatch`` driver code in this process."""
    out = work / "produced.txt"
    work.mkdir(parents=True, exist_ok=True)
    ctx = multiprocessing.get_context("spawn")
    job: Job = (bootstrap, topic, rate, seconds, seed, str(out), tables, meta)
    with ctx.Pool(1) as pool:
        n, took = pool.apply(_produce_to_file, (job,))
    produced = Produced()
    for line in out.read_text(encoding="utf-8").splitlines():
        a, b, c = line.split(" ", 2)
        if a == "error":
            produced.errors.append(f"{b} {c}")
        elif a == "ends":
            produced.ends_sent = int(b)
        else:
            produced.by_partition.setdefault(int(a), []).append((int(b), int(c)))
    for rows in produced.by_partition.values():
        rows.sort()
    return n, took, produced


def commit_times(table_path: str, app_id: str) -> dict[int, int]:
    """Batch id -> commit timestamp (ms) of the last commit that batch wrote to the table, from
    the ``txn`` action (app id, version = batch id) and ``commitInfo`` of each commit file."""
    out: dict[int, int] = {}
    for f in sorted(Path(table_path.removeprefix("file:")).joinpath("_delta_log").glob("*.json")):
        batch, ts = None, None
        for line in f.read_text().splitlines():
            action = json.loads(line)
            txn = action.get("txn")
            if txn and str(txn.get("appId", "")).startswith(app_id):
                batch = int(txn["version"])
            info = action.get("commitInfo")
            if info:
                ts = int(info.get("inCommitTimestamp") or info["timestamp"])
        if batch is not None and ts is not None:
            out[batch] = max(out.get(batch, 0), ts)
    return out


def visible_at(
    produced: Produced,
    batches: list[Any],
    committed: dict[int, int],
    topic: str | None = None,
) -> tuple[list[tuple[int, int]], str]:
    """(produce ms, visible ms) of every produced event, and where "visible" came from: the
    table's commit by the batch that read the event, or the batch's end when a batch left no
    tagged commit (an empty ``committed`` makes it every batch's end). ``topic``: the events'
    topic, when the query reads others too."""
    source = "delta commit"
    ordered = sorted(batches, key=lambda m: m.batch_id)
    out: list[tuple[int, int]] = []
    for partition, rows in produced.by_partition.items():
        ends = [_read(m, topic).get(partition, 0) for m in ordered]
        for offset, ts in rows:
            i = bisect_right(ends, offset)
            if i == len(ordered):
                raise RuntimeError(f"partition {partition} offset {offset} read by no batch")
            m = ordered[i]
            visible = committed.get(m.batch_id)
            if visible is None:
                source = "batch end (no tagged commit for some batches)"
                visible = int(m.finished_at.timestamp() * 1000)
            out.append((ts, visible))
    return out, source


def cut_visible(produced: Produced, cuts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(produce ms, visible ms) of every produced event in ``--consistent`` mode: visible at
    the first cut (``(source ms, cut ms)`` in cut order) whose source time reaches the event's
    (its ``source.ts_ms`` is its produce time, and the cuts apply whole transactions in commit
    order, so the cut that reaches an event has applied every transaction before it)."""
    reach: list[int] = []
    at: list[int] = []
    for source_ms, cut_ms in cuts:
        if not reach or source_ms > reach[-1]:
            reach.append(source_ms)
            at.append(cut_ms)
    out = []
    for rows in produced.by_partition.values():
        for _, ts in rows:
            i = bisect_left(reach, ts)
            if i == len(reach):
                raise RuntimeError(f"an event produced at {ts} ms is in no cut")
            out.append((ts, at[i]))
    return out


def cut_times(spark: SparkSession, target: str) -> list[tuple[int, int]]:
    """(source ms, written ms) of every cut of ``target``, in cut order."""
    from cdclake.apply.consistency import cuts

    df = cuts(spark, target)
    if df is None:
        return []
    rows = df.select(
        F.unix_millis("source_ts").alias("s"), F.unix_millis("cut_at").alias("c")
    ).orderBy("cut")
    return [(r["s"], r["c"]) for r in rows.collect() if r["s"] is not None]


def quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(int(q * len(s)), len(s) - 1)]


def _wait_ready(spark: SparkSession, failure: list[BaseException], timeout_s: float = 180) -> Any:
    """The running query, once its first trigger has found the (empty) topic."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if failure:
            raise RuntimeError(f"the latency query failed: {failure[0]}")
        for q in spark.streams.active:
            if str(q.status.get("message", "")).startswith("Waiting"):
                return q
        time.sleep(0.2)
    raise RuntimeError(f"the latency query did not start within {timeout_s:.0f} s")


def _read(m: Any, topic: str | None) -> dict[int, int]:
    """Partition -> the end offset batch ``m`` read to, of ``topic`` (None: any topic)."""
    out: dict[int, int] = {}
    for (t, p), o in m.end_offsets.items():
        if topic is None or t == topic:
            out[p] = max(out.get(p, 0), o)
    return out


def _caught_up(batches: list[Any], ends: dict[int, int], topic: str | None = None) -> bool:
    read: dict[int, int] = {}
    for m in list(batches):
        for p, o in _read(m, topic).items():
            read[p] = max(read.get(p, 0), o)
    return all(read.get(p, 0) >= end for p, end in ends.items())


def run_latency(
    spark: SparkSession,
    bootstrap: str,
    work: Path,
    rate: float,
    seconds: float,
    seed: int,
    transactions: bool = False,
    consistent: bool = False,
) -> dict[str, Any]:
    """cdclake's query on an empty topic, ``rate`` events/s for ``seconds``, then the latency
    of every event (see the module docstring) and the counts that must reconcile.
    ``transactions``: the events in source transactions, their END records on a metadata topic
    the query reads too; ``consistent``: the query runs with ``--consistent``, and an event is
    visible at the first cut that applied it (:func:`cut_visible`)."""
    from cdclake.apply.tables import Target
    from cdclake.run.runner import app_id_for
    from cdclake.run.streaming import run_kafka

    topic = new_topic(bootstrap, "bench-latency")
    meta = metadata_topic(bootstrap, topic) if transactions or consistent else None
    config = _config(
        bootstrap,
        topic if meta is None else (topic, meta),
        work,
        trigger_interval=LATENCY_TRIGGER,
        **_consistency(consistent, meta is not None),
    )
    batches: list[Any] = []
    failure: list[BaseException] = []
    counted = _BatchCounter(spark, work / "lake")

    def each(m: Any) -> None:
        counted(m)
        batches.append(m)

    def query() -> None:
        try:
            run_kafka(spark, config, each)
        except BaseException as e:
            failure.append(e)

    thread = threading.Thread(target=query, name="bench-latency-query", daemon=True)
    thread.start()
    running = _wait_ready(spark, failure)
    counted.group = str(running.runId)  # the query's jobs are in its run's job group
    t0 = time.perf_counter()
    try:
        n, produce_s, produced = produce_apart(
            bootstrap, topic, rate, seconds, seed, work, meta=meta
        )
        ends, deadline = produced.ends(), time.time() + max(300.0, 5 * seconds)
        while not (
            _caught_up(batches, ends, topic)
            and (meta is None or _caught_up(batches, {0: produced.ends_sent}, meta))
        ):
            if failure or not thread.is_alive():
                raise RuntimeError(f"the latency query stopped: {failure[:1]}")
            if time.time() > deadline:
                raise RuntimeError("the latency query did not catch up within its deadline")
            time.sleep(0.1)
        wall = time.perf_counter() - t0
    finally:
        running.stop()
        thread.join(120)
    if produced.errors:
        raise RuntimeError(f"{len(produced.errors)} events not delivered: {produced.errors[0]}")
    assert config.checkpoint is not None
    if consistent:
        pairs = cut_visible(produced, cut_times(spark, config.target))
        lat, visible = [(v - ts) / 1000 for ts, v in pairs], "consistent cut"
    else:
        table = Target(config.target).table_path(TABLE)
        committed = commit_times(table, app_id_for(config.checkpoint))
        pairs, visible = visible_at(produced, batches, committed, topic)
        lat = [(v - ts) / 1000 for ts, v in pairs]
    rows = table_rows(spark, work / "lake")
    expected = data.live_rows(n, max(n // 10, 1), 100, seed).get(data.TABLE, 0)
    messages = sum(m.result.messages or 0 for m in batches)
    return {
        "wall_s": round(wall, 2),
        "produced": n,
        "produce_s": round(produce_s, 2),
        "rate_eps": round(rate, 1),
        "achieved_rate_eps": round(n / produce_s, 1),
        "seconds": seconds,
        "trigger": LATENCY_TRIGGER,
        "transactions": meta is not None,
        "consistent": consistent,
        "batches": len(batches),
        "messages": messages,
        "rows": rows,
        "expected_rows": expected,
        "rows_ok": rows == expected and messages == n + produced.ends_sent,
        "latency_p50_s": round(quantile(lat, 0.5), 3),
        "latency_p95_s": round(quantile(lat, 0.95), 3),
        "latency_p99_s": round(quantile(lat, 0.99), 3),
        "latency_max_s": round(max(lat), 3),
        "visible_from": visible,
        "steady_batch": counted.steady(batches),
    }


class _BatchCounter:
    """Per batch of the query (its callback, once the batch has committed): the Spark jobs it
    ran (its run's job group, once :attr:`group` is known) and the Delta commits it made in the
    lake."""

    def __init__(self, spark: SparkSession, lake: Path) -> None:
        self.tracker, self.lake = spark.sparkContext.statusTracker(), lake
        self.group: str | None = None
        self.seen: set[int] = set()
        self.commits = 0
        self.by_batch: dict[int, tuple[int | None, int]] = {}

    def __call__(self, m: Any) -> None:
        jobs = None
        if self.group is not None:
            ids = set(self.tracker.getJobIdsForGroup(self.group))
            jobs, self.seen = len(ids - self.seen), self.seen | ids
        commits = delta_commits(self.lake)
        self.by_batch[m.batch_id] = (jobs, commits - self.commits)
        self.commits = commits

    def steady(self, batches: list[Any]) -> dict[str, Any] | None:
        """The breakdown of the median steady batch (by wall time; from the third batch that
        read events, or the last one in a run too short to have one: ``steady`` False): its
        seconds by step, Spark jobs and Delta commits."""
        from cdclake.run.summary import timing

        read = [m for m in batches if m.result.messages]
        steady = sorted(read[2:] or read[-1:], key=lambda m: sum(m.result.seconds.values()))
        if not steady:
            return None
        m = steady[len(steady) // 2]
        jobs, commits = self.by_batch.get(m.batch_id, (None, None))
        return {
            "batch_id": m.batch_id,
            "of": len(steady),
            "steady": len(read) > 2,
            "messages": m.result.messages,
            "seconds": round(sum(m.result.seconds.values()), 3),
            "steps": {k: round(v, 3) for k, v in m.result.seconds.items()},
            "table_steps": {k: round(v, 3) for k, v in m.result.table_seconds().items()},
            "jobs": jobs,
            "commits": commits,
            "line": timing(m.result),
        }
