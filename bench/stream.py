"""The Kafka cases of ``python -m bench.run --streaming`` on a real broker (scripts/kafka.sh).

- **stream-apply**: the run's largest event count of Debezium produced into one topic (two
  partitions, keyed) first, then cdclake's query (:func:`cdclake.run.streaming.run_kafka`, trigger
  available-now, ``max_offsets_per_trigger`` 100,000) over the whole backlog. Events/s = events
  / wall time from the query's start to its return (the last batch committed).
- **stream-recipe**: the recipe (:func:`bench.contenders.merge_latest` on the UDF parse) in
  ``foreachBatch`` over the same topic, same trigger and limit; **stream-recipe-typed** the
  same with the value parsed by ``from_json`` and the table's exact types. The headline's
  ``stream_ratio`` compares cdclake with the faster of the two.
- **stream-latency** (:mod:`bench.latency`): cdclake's query with a processing-time trigger
  of 1 s on an empty topic;
  then events are produced at a steady rate (half of stream-apply's events/s, capped at 80 % of
  what this process produced the backlog at) for ``--stream-seconds``, by a child process (so
  the producer does not hold the GIL the query's ``foreachBatch`` needs). Each event carries its
  produce time as the Kafka record timestamp and as Debezium ``source.ts_ms``. Latency = the
  time the event became visible in Delta minus its produce time, where "visible" is the
  ``commitInfo`` timestamp of the target table's commit written by the batch that read the
  event's offset (cdclake tags each write of batch *n* with ``txnAppId`` = its app id and
  ``txnVersion`` = *n*; the offsets of batch *n* are the ones the query's callback reports).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.listener import StreamingQueryListener

from bench import contenders as C
from bench import data, tables
from bench.autocdc import first_line, free_port
from bench.measure import Measurement

if TYPE_CHECKING:
    from bench.run import Bench

REPO = Path(__file__).resolve().parents[1]
MAX_OFFSETS = 100_000
PARTITIONS = 2
TABLE = f"{data.DB}.{data.SCHEMA}.{data.TABLE}"


@contextmanager
def broker() -> Iterator[str]:
    """A fresh single-node broker on a free port with its data in a temp dir, stopped after."""
    port = str(free_port())
    with tempfile.TemporaryDirectory(prefix="bench-kafka-") as tmp:
        env = {**os.environ, "KAFKA_DATA": tmp}

        def kafka(*args: str) -> subprocess.CompletedProcess[str]:
            cmd = ["bash", str(REPO / "scripts" / "kafka.sh"), *args, "--port", port]
            return subprocess.run(
                cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600
            )

        started = kafka("start", "--fresh")
        if started.returncode != 0:
            raise RuntimeError(f"kafka.sh start failed: {(started.stdout + started.stderr)[-500:]}")
        try:
            yield f"127.0.0.1:{port}"
        finally:
            kafka("stop")


def new_topic(bootstrap: str, name: str, partitions: int = PARTITIONS) -> str:
    from cdclake.run.kafka_tools import create_topic

    topic = f"{name}-{uuid.uuid4().hex[:6]}"
    create_topic(bootstrap, topic, partitions=partitions)
    return topic


def metadata_topic(bootstrap: str, topic: str) -> str:
    """The transaction-metadata topic that goes with ``topic`` (one partition, as Debezium's)."""
    from cdclake.run.kafka_tools import create_topic

    create_topic(bootstrap, f"{topic}.transaction", partitions=1)
    return f"{topic}.transaction"


def send_event(
    p: Any, topic: str, meta: str | None, e: data.Event, n: int, ts: int | None = None, **kw: Any
) -> bool:
    """``e`` to ``topic``; with a metadata topic ``meta``, in its source transaction (the
    ``transaction`` block, and the END record after the transaction's last change). True when
    an END was sent."""
    _send(p, topic, *data.debezium_record(e, n, ts, transaction=meta is not None), **kw)
    end = None if meta is None else data.transaction_end(e, n, ts)
    if end is not None:
        assert meta is not None
        _send(p, meta, *end)
    return end is not None


def _producer(bootstrap: str) -> Any:
    from confluent_kafka import Producer

    from cdclake.run.kafka_tools import LIBRDKAFKA_LOG

    return Producer(
        {
            "bootstrap.servers": bootstrap,
            "logger": LIBRDKAFKA_LOG,
            "enable.idempotence": True,
            "partitioner": "murmur2_random",  # as Kafka Connect places a key
            "linger.ms": 5,
        }
    )


def _send(p: Any, topic: str, key: str, value: str, **kw: Any) -> None:
    while True:
        try:
            p.produce(topic, key=key.encode(), value=value.encode(), **kw)
            return
        except BufferError:  # local queue full: let deliveries drain
            p.poll(0.1)


def produce_backlog(
    bootstrap: str, topic: str, n: int, keys: int, seed: int, meta: str | None = None
) -> float:
    """Produce the run's events into ``topic`` (in transactions, with ``meta``: see
    :func:`send_event`); returns the events/s this process produced at."""
    p = _producer(bootstrap)
    t0 = time.perf_counter()
    for e in data.events(n, keys, 100, seed):
        send_event(p, topic, meta, e, n)
        p.poll(0)
    if p.flush(120) != 0:
        raise RuntimeError(f"events to {topic} not delivered to {bootstrap} within 120 s")
    return n / (time.perf_counter() - t0)


class RunIds(StreamingQueryListener):
    """Run ids of the queries started in this session: Spark groups a query's jobs under its
    run id, so the event-log profile of a streaming contender is that group."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def onQueryStarted(self, event: Any) -> None:
        self.ids.append(str(event.runId))

    def onQueryProgress(self, event: Any) -> None:
        pass

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        pass

    def newest_since(self, count: int, timeout_s: float = 5.0) -> str | None:
        """The run id of the query started after ``count`` ids were known (events arrive late)."""
        deadline = time.time() + timeout_s
        while len(self.ids) <= count and time.time() < deadline:
            time.sleep(0.05)
        return self.ids[-1] if len(self.ids) > count else None


def _recorded(run: Callable[[], None], runs: RunIds, info: dict[str, Any]) -> C.Job:
    """``run``, keeping the run id of the query it started in ``info["run_ids"]``."""

    def job() -> None:
        known = len(runs.ids)
        run()
        info.setdefault("run_ids", []).append(runs.newest_since(known))

    return job


def _config(bootstrap: str, topic: str | tuple[str, ...], work: Path, **kw: Any) -> Any:
    from cdclake.config import ApplyConfig, KafkaSource

    topics = (topic,) if isinstance(topic, str) else topic
    return ApplyConfig(
        kafka=KafkaSource(bootstrap=bootstrap, topics=topics),
        checkpoint=str(work / "chk"),
        target=str(work / "lake"),
        **kw,
    )


def _consistency(consistent: bool, transactions: bool) -> dict[str, Any]:
    """The config of a case on transactional input: Debezium named (``--consistent`` needs it;
    the default-mode run names it too, so that the two differ in the mode alone)."""
    return {"format": "debezium", "consistent": consistent} if transactions else {}


def table_rows(spark: SparkSession, lake: Path) -> int:
    from cdclake.apply.tables import Target

    path = Target(str(lake)).table_path(TABLE)
    return int(spark.read.format("delta").load(path).count())


def stream_apply(
    spark: SparkSession,
    bootstrap: str,
    topic: str | tuple[str, ...],
    work: Path,
    info: dict[str, Any],
    runs: RunIds,
    consistent: bool = False,
) -> C.Job:
    """cdclake over the backlog, available-now; ``info`` gets the batches of the last run."""
    from cdclake.run.streaming import run_kafka

    def run() -> None:
        config = _config(
            bootstrap,
            topic,
            work,
            available_now=True,
            max_offsets_per_trigger=MAX_OFFSETS,
            **_consistency(consistent, isinstance(topic, tuple)),
        )
        batches: list[Any] = []
        total = run_kafka(spark, config, batches.append)
        info.update(batches=len(batches), messages=total.messages)

    return _recorded(run, runs, info)


def stream_recipe(
    spark: SparkSession,
    bootstrap: str,
    topic: str,
    work: Path,
    info: dict[str, Any],
    runs: RunIds,
    typed: bool = False,
) -> C.Job:
    """The recipe in ``foreachBatch`` over the same topic, same trigger and limit; ``typed``:
    each value parsed by ``from_json`` with the table's exact types (:func:`C.typed_events`)
    instead of the Python UDF, into ``work/recipe-typed``."""
    parse = F.udf(C.parse_debezium_value, C.RECIPE_EVENT, useArrow=True)
    name = "recipe-typed" if typed else "recipe"
    target = work / name

    def each(batch: Any, batch_id: int) -> None:
        value = F.col("value").cast("string")
        event = C.typed_events(value, line=False) if typed else parse(value)
        events = batch.select(event.alias("e")).select("e.*")
        C.merge_latest(spark, events, target)
        info["batches"] = batch_id + 1

    def run() -> None:
        source = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", str(MAX_OFFSETS))
            .load()
        )
        query = (
            source.writeStream.foreachBatch(each)
            .option("checkpointLocation", str(work / f"{name}-chk"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()

    return _recorded(run, runs, info)


# ---- the cases in the bench run ------------------------------------------------------------


def _warm_up(bench: Bench, bootstrap: str, work: Path, runs: RunIds) -> None:
    """cdclake's stream and both recipes' once over a topic of ``WARMUP_EVENTS``, untimed: the
    first streaming contender measured does not pay, for the others, the JVM's loading and
    compiling of the Kafka source, the streaming engine and Delta's MERGE (in a run with
    ``--no-core`` nothing else has warmed the JVM: stream-apply took 152 s cold against 105 s
    after the core contenders, bench/README.md issue 36 step 23)."""
    from bench.run import WARMUP_EVENTS, log

    sp, n = bench.spark, WARMUP_EVENTS
    topic = new_topic(bootstrap, "bench-warmup")
    produce_backlog(bootstrap, topic, n, bench.keys_for(n), bench.args.seed)
    t0 = time.perf_counter()
    try:
        for job in (
            stream_apply(sp, bootstrap, topic, work, {}, runs),
            stream_recipe(sp, bootstrap, topic, work, {}, runs),
            stream_recipe(sp, bootstrap, topic, work, {}, runs, typed=True),
        ):
            job()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    took = time.perf_counter() - t0
    log(f"streaming warm-up: 3 contenders on {n:,} events, untimed, in {took:.1f}s")


def run_cases(bench: Bench, n: int) -> None:
    """The Kafka cases (see the module docstring) on a broker of their own, or on the one
    ``--kafka-bootstrap`` names."""
    from bench.run import log

    sp, w, seed = bench.spark, bench.work / f"stream-{n}", bench.args.seed
    keys = bench.keys_for(n)
    expected = data.live_rows(n, keys, 100, seed).get(data.TABLE, 0)
    runs = RunIds()
    sp.streams.addListener(runs)
    try:
        given = bench.args.kafka_bootstrap
        with nullcontext(given) if given else broker() as bootstrap:
            topic = new_topic(bootstrap, "bench-backlog")
            produce_eps = produce_backlog(bootstrap, topic, n, keys, seed)
            log(f"produced {n:,} events to {topic} at {produce_eps:,.0f} ev/s")
            if bench.args.warmup and not bench.args.smoke:  # the smoke run checks no timing
                _warm_up(bench, bootstrap, w / "warmup", runs)
            info: dict[str, object] = {}
            m = bench.measure(
                "stream-apply",
                "debezium",
                n,
                lambda: stream_apply(sp, bootstrap, topic, w, info, runs),
                setup=lambda _: tables.remove(w / "lake", w / "chk"),
            )
            rows = table_rows(sp, w / "lake") if m.status == "ok" else None
            m.extra.update(info, rows=rows, expected_rows=expected, produce_eps=produce_eps)
            m.extra["max_offsets_per_trigger"] = MAX_OFFSETS
            rinfo: dict[str, object] = {}
            r = bench.measure(
                "stream-recipe",
                "debezium",
                n,
                lambda: stream_recipe(sp, bootstrap, topic, w, rinfo, runs),
                setup=lambda _: tables.remove(w / "recipe", w / "recipe-chk"),
            )
            rows = C.rows_of(sp, w / "recipe") if r.status == "ok" else None
            r.extra.update(rinfo, rows=rows, expected_rows=expected)
            r.extra["max_offsets_per_trigger"] = MAX_OFFSETS
            tinfo: dict[str, object] = {}
            t = bench.measure(
                "stream-recipe-typed",
                "debezium",
                n,
                lambda: stream_recipe(sp, bootstrap, topic, w, tinfo, runs, typed=True),
                setup=lambda _: tables.remove(w / "recipe-typed", w / "recipe-typed-chk"),
            )
            rows = C.rows_of(sp, w / "recipe-typed") if t.status == "ok" else None
            t.extra.update(tinfo, rows=rows, expected_rows=expected)
            t.extra["max_offsets_per_trigger"] = MAX_OFFSETS
            rate = bench.args.stream_rate or min((m.eps or 2000.0) / 2, 0.8 * produce_eps)
            _latency_case(bench, bootstrap, w / "latency", rate, runs)
            if bench.args.consistent:
                _consistent_cases(bench, bootstrap, n, rate, runs)
    except Exception as e:  # no broker: the cases are reported, the rest of the run stands
        cases = ("stream-apply", "stream-recipe", "stream-recipe-typed", "stream-latency")
        for c in (*cases, *CONSISTENT_CASES):
            if not any(x.contender == c for x in bench.results):
                bench.unavailable(c, "debezium", n, first_line(e))
        log(f"[red]streaming: {first_line(e)[:300]}")
    finally:
        sp.streams.removeListener(runs)


CONSISTENT_CASES = (
    "stream-apply-txn",
    "stream-apply-consistent",
    "stream-latency-txn",
    "stream-latency-consistent",
)
"""``--consistent``: the same stream in source transactions (:func:`send_event`), applied in
the default mode (``-txn``) and with ``--consistent``: what consistent mode costs, in events/s
over a backlog and in latency at the stream-latency rate (issue 39)."""


def _given(job: C.Job) -> Callable[[], C.Job]:
    return lambda: job


def _remover(work: Path) -> Callable[[int], None]:
    return lambda _: tables.remove(work / "lake", work / "chk")


def _consistent_cases(bench: Bench, bootstrap: str, n: int, rate: float, runs: RunIds) -> None:
    from bench.run import log

    sp, w, seed = bench.spark, bench.work / f"stream-{n}", bench.args.seed
    keys = bench.keys_for(n)
    topic = new_topic(bootstrap, "bench-backlog-txn")
    meta = metadata_topic(bootstrap, topic)
    produce_eps = produce_backlog(bootstrap, topic, n, keys, seed, meta)
    log(f"produced {n:,} events in transactions to {topic} (ENDs: {meta})")
    expected = data.live_rows(n, keys, 100, seed).get(data.TABLE, 0)
    for consistent in (False, True):
        name = "stream-apply-consistent" if consistent else "stream-apply-txn"
        d, info = w / name, dict[str, object]()
        job = stream_apply(sp, bootstrap, (topic, meta), d, info, runs, consistent)
        m = bench.measure(name, "debezium", n, _given(job), setup=_remover(d))
        rows = table_rows(sp, d / "lake") if m.status == "ok" else None
        m.extra.update(info, rows=rows, expected_rows=expected, produce_eps=produce_eps)
        m.extra["max_offsets_per_trigger"] = MAX_OFFSETS
    for consistent in (False, True):
        name = "stream-latency-consistent" if consistent else "stream-latency-txn"
        _latency_case(bench, bootstrap, w / name, rate, runs, name, consistent)


def _latency_case(
    bench: Bench,
    bootstrap: str,
    work: Path,
    rate: float,
    runs: RunIds,
    name: str = "stream-latency",
    consistent: bool | None = None,
) -> None:
    """``name``: stream-latency (``consistent`` None: plain events), or on transactional input
    in the default mode (False) or with ``--consistent`` (True)."""
    from bench import latency
    from bench.run import log

    secs = bench.args.stream_seconds
    log(f"{name}: {rate:,.0f} ev/s for {secs:.0f}s")
    try:
        known = len(runs.ids)
        got = latency.run_latency(
            bench.spark,
            bootstrap,
            work,
            rate,
            secs,
            bench.args.seed,
            transactions=consistent is not None,
            consistent=bool(consistent),
        )
        got["run_ids"] = [runs.newest_since(known)]
    except Exception as e:
        bench.results.append(
            Measurement(name, "debezium", 0, status="failed", reason=first_line(e))
        )
        log(f"[red]{name}: FAILED: {first_line(e)[:300]}")
        return
    # its events/s is the rate achieved while producing; wall_s runs to the last commit
    m = Measurement(name, "debezium", got["produced"], times=[got["produce_s"]])
    m.extra.update(got)
    log(
        f"{name}: p50 {got['latency_p50_s']}s p95 {got['latency_p95_s']}s "
        f"p99 {got['latency_p99_s']}s over "
        f"{got['batches']} batches; rows {got['rows']} (expected {got['expected_rows']})"
    )
    bench.results.append(m)
