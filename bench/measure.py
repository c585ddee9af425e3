"""Timing and memory: repeated runs, min/median, and a sampler for peak memory.

In ``local[*]`` mode the driver and the executor are one JVM, so "executor memory" is that JVM's
heap and RSS; Python UDF workers (the recipe) are separate processes, sampled as their own line.
Heap is read from the JVM's ``MemoryMXBean`` (``heapMemoryUsage.used``) every 100 ms; RSS from
``/proc/<pid>/status``. The Spark UI (and its ``/api/v1``) is disabled by cdclake's session.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

MB = 1024 * 1024


def delta_commits(target: Path) -> int:
    """The Delta commits of every table under ``target`` (their ``_delta_log/*.json``)."""
    return sum(1 for _ in target.glob("**/_delta_log/*.json"))


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            text = (task / "children").read_text().split()
            out += [int(c) for c in text]
    except OSError:
        return out
    return out


def _descendants(pid: int) -> list[int]:
    todo, seen = _children(pid), []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += _children(p)
    return seen


@dataclass
class Peaks:
    jvm_heap: int = 0
    jvm_rss: int = 0
    py_driver_rss: int = 0
    py_workers_rss: int = 0

    def as_mb(self) -> dict[str, float]:
        return {k: round(v / MB, 1) for k, v in self.__dict__.items()}


class Sampler:
    """Samples memory in a background thread while a measurement runs."""

    def __init__(self, spark: SparkSession, interval: float = 0.1) -> None:
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        self._mx = jvm.java.lang.management.ManagementFactory.getMemoryMXBean()
        self.jvm_pid = int(jvm.java.lang.ProcessHandle.current().pid())
        self.interval = interval
        self.peaks = Peaks()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        p = self.peaks
        with contextlib.suppress(Exception):  # the py4j gateway may be shutting down
            p.jvm_heap = max(p.jvm_heap, int(self._mx.getHeapMemoryUsage().getUsed()))
        p.jvm_rss = max(p.jvm_rss, _rss(self.jvm_pid))
        p.py_driver_rss = max(p.py_driver_rss, _rss(os.getpid()))
        workers = [c for c in _descendants(self.jvm_pid)]
        p.py_workers_rss = max(p.py_workers_rss, sum(_rss(c) for c in workers))

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> Sampler:
        self.peaks = Peaks()
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()


@dataclass
class Measurement:
    """One contender on one input: wall times of every repeat, and the peaks over all of them."""

    contender: str
    fmt: str
    events: int
    table_rows: int = 0
    times: list[float] = field(default_factory=list)
    peaks: dict[str, float] = field(default_factory=dict)
    status: str = "ok"  # ok | not available | failed
    reason: str | None = None
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def t_min(self) -> float | None:
        return min(self.times) if self.times else None

    @property
    def t_median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def eps(self) -> float | None:
        """Throughput from the median time (events per second)."""
        t = self.t_median
        return self.events / t if t else None

    def as_dict(self) -> dict[str, object]:
        return {
            "contender": self.contender,
            "format": self.fmt,
            "events": self.events,
            "table_rows": self.table_rows,
            "times_s": [round(t, 3) for t in self.times],
            "min_s": _r(self.t_min),
            "median_s": _r(self.t_median),
            "eps": None if self.eps is None else round(self.eps, 1),
            "peak_mb": self.peaks,
            "status": self.status,
            "reason": self.reason,
            **self.extra,
        }


def noop_rounds(
    runs: dict[str, DataFrame], rounds: int, log: Callable[[str], object]
) -> dict[str, float]:
    """Each of ``runs`` written to Spark's ``noop`` sink (computed, nothing stored), interleaved
    round by round; per run, the median seconds of the rounds after the first (a warm-up), or
    of the only one."""
    times: dict[str, list[float]] = {k: [] for k in runs}
    for r in range(rounds):
        for name, df in runs.items():
            t0 = time.perf_counter()
            df.write.format("noop").mode("overwrite").save()
            times[name].append(time.perf_counter() - t0)
        log(f"round {r + 1} of {rounds}")
    return {k: statistics.median(v[1:] or v) for k, v in times.items()}


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def repeat(
    spark: SparkSession,
    m: Measurement,
    run: Callable[[], object],
    repeats: int,
    setup: Callable[[int], object] | None = None,
    teardown: Callable[[int], object] | None = None,
) -> Measurement:
    """Run ``run`` ``repeats`` times (``setup``/``teardown`` untimed), tagging its Spark jobs
    with the job group ``<format>/<events>/<contender>/r<i>`` for the event-log profile. The
    session's cache is cleared after each run."""
    sampler = Sampler(spark)
    total = Peaks()
    sc = spark.sparkContext
    for i in range(repeats):
        if setup is not None:
            setup(i)
        sc.setJobGroup(f"{m.fmt}/{m.events}/{m.table_rows}/{m.contender}/r{i}", m.contender)
        try:
            with sampler:
                t0 = time.perf_counter()
                run()
                m.times.append(time.perf_counter() - t0)
        finally:
            sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
            # each run starts cold: a frame one left persisted (cdclake's decode leaves one
            # behind) has the same plan as the next run's, which would read it instead of the
            # input (the decode's repeats measured the cache until step 10)
            spark.catalog.clearCache()
        for k in total.__dict__:
            setattr(total, k, max(getattr(total, k), getattr(sampler.peaks, k)))
        if teardown is not None:
            teardown(i)
    m.peaks = total.as_mb()
    return m
