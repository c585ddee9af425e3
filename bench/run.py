"""Run the cdclake benchmark: ``python -m bench.run [--smoke]`` (see bench/README.md).

Generates the inputs (cached under ``bench/out/data``), runs every contender on the same files
in one Spark session, writes ``bench/out/report.{md,json,png}`` (and, for a full run, copies
them to ``bench/results/latest.*``) and prints one JSON line with the headline numbers.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import sys
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from bench import contenders as C
from bench import data, eventlog, many, report, stream, tables
from bench.autocdc import AutoCdc, first_line, free_port
from bench.measure import Measurement, repeat

BENCH = Path(__file__).resolve().parent
WARMUP_EVENTS = 2000
SMOKE_WARMUP_EVENTS = 200
"""The smoke run's warm-up (it checks no timing, only that every contender runs warmed up)."""
console = Console(stderr=True)


def log(msg: str) -> None:
    console.log(msg)


def _ints(text: str) -> list[int]:
    return [int(float(x)) for x in text.split(",") if x.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__)
    p.add_argument(
        "--smoke",
        action="store_true",
        help="CI size: 2e3 events, Debezium only, tables 2e3..1e4, 1 repeat; skips "
        "decode-auto, recipe-existing and the recipe's MERGE scaling",
    )
    p.add_argument(
        "--events",
        type=_ints,
        default=[10**4, 10**5, 10**6],
        help="event counts, comma-separated (default 1e4,1e5,1e6; add 1e7 if you dare)",
    )
    p.add_argument(
        "--table-sizes",
        type=_ints,
        default=[10**5, 10**6, 10**7],
        help="pre-filled table sizes for the MERGE scaling (default 1e5,1e6,1e7)",
    )
    p.add_argument(
        "--merge-batch",
        type=int,
        default=10**4,
        help="changes in the MERGE-scaling batch (default 1e4)",
    )
    p.add_argument("--repeat", type=int, default=3, help="repeats per measurement (default 3)")
    p.add_argument(
        "--formats",
        default=None,
        help="formats to run (default: all four, --smoke: debezium; unregistered "
        "ones are reported as not available)",
    )
    p.add_argument("--out", type=Path, default=BENCH / "out", help="output folder")
    p.add_argument(
        "--publish",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="copy the report to bench/results/latest.* (default: yes unless --smoke)",
    )
    p.add_argument("--seed", type=int, default=42)
    p.add_argument(
        "--warmup",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="before any timing, run every contender once, untimed, on a small input "
        f"({WARMUP_EVENTS:,} events) so that the first one measured does not pay the JVM's "
        "class loading and JIT for all of them (default: on)",
    )
    p.add_argument(
        "--deletion-vectors",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="create every table (cdclake's and the recipe's) with deletion vectors, "
        "the setting for MERGE into large tables (default: on; cdclake's own default "
        "is off, see CDCLAKE_DELETION_VECTORS)",
    )
    p.add_argument(
        "--core",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the single-table contenders (floor, decode, apply, recipe, AUTO CDC, MERGE "
        "scaling); --no-core runs only the cases asked for with --many-tables / --streaming",
    )
    p.add_argument(
        "--many-tables",
        action="store_true",
        help="also run apply-many and recipe-many: the largest --events count of Debezium "
        "spread over --tables tables in one input file",
    )
    p.add_argument("--tables", type=int, default=100, help="tables for --many-tables (100)")
    p.add_argument(
        "--streaming",
        action="store_true",
        help="also run the Kafka cases on a broker started by scripts/kafka.sh: sustained "
        "throughput (stream-apply, stream-recipe) and latency at half that rate (stream-latency)",
    )
    p.add_argument(
        "--kafka-bootstrap",
        metavar="HOST:PORT",
        help="with --streaming, run the Kafka cases on this broker instead of starting one "
        "(each case makes topics of its own, with unique names)",
    )
    p.add_argument(
        "--consistent",
        action="store_true",
        help="with --streaming, also the same stream in source transactions applied in the "
        "default mode and with --consistent: stream-apply-txn/-consistent (events/s over the "
        "backlog) and stream-latency-txn/-consistent (latency at stream-latency's rate)",
    )
    p.add_argument(
        "--stream-seconds",
        type=float,
        default=60.0,
        help="how long stream-latency produces at its steady rate (default 60)",
    )
    p.add_argument(
        "--stream-rate",
        type=float,
        default=None,
        help="stream-latency's steady rate in events/s (default: half of stream-apply's "
        "events/s in this run); a fixed rate compares two builds at the same load",
    )
    p.add_argument(
        "--scd2",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also apply the same input as history tables (SCD type 2): apply-scd2-empty for "
        "every format, apply-scd2-existing (Debezium) into a history of 10x the events",
    )
    p.add_argument(
        "--scd2-history-events",
        type=int,
        default=None,
        help="events whose history apply-scd2-existing starts from (default 10x the events; "
        "10^6 events give about 10^6 history rows)",
    )
    a = p.parse_args(argv)
    if a.smoke:
        a.events, a.table_sizes, a.merge_batch, a.repeat = [2000], [2000, 10**4], 500, 1
        # a history of twice the events, not ten times: the case runs, and its build (20 s at
        # ten times) is not what the smoke run checks
        a.scd2_history_events = a.scd2_history_events or 2 * a.events[0]
    if a.formats is None:
        a.formats = "debezium" if a.smoke else ",".join(data.WIRE_FORMATS)
    if a.publish is None:
        a.publish = not a.smoke
    return a


def registered_formats() -> list[str]:
    from cdclake import formats

    return formats.names()


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.out: Path = args.out.absolute()
        self.work = self.out / "work"
        self.results: list[Measurement] = []
        self.probes: dict[str, tuple[str, str]] = {}  # format -> (identifier, table to copy)
        self.started = time.time()
        self.load_at_start = Path("/proc/loadavg").read_text().split()[:3]

    # ---- inputs ----------------------------------------------------------------------------

    def events_file(self, fmt: str, n: int, keys: int, stride: int, n_tables: int = 1) -> Path:
        spread = f"-t{n_tables}" if n_tables > 1 else ""
        folder = self.out / "data" / fmt / f"n{n}-k{keys}-s{stride}{spread}-seed{self.args.seed}"
        path = folder / "events.jsonl"
        if not (path.exists() and path.with_suffix(".jsonl.done").exists()):
            t0 = time.perf_counter()
            data.write_events(path, fmt, n, keys, stride, self.args.seed, n_tables)
            size = path.stat().st_size
            log(f"generated {fmt} n={n:,} ({size / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f}s")
        return path

    @staticmethod
    def keys_for(n: int) -> int:
        return max(n // 10, 1)

    # ---- session ---------------------------------------------------------------------------

    def start_spark(self) -> None:
        from cdclake import _spark

        events_dir = self.out / "eventlog"
        shutil.rmtree(events_dir, ignore_errors=True)
        events_dir.mkdir(parents=True)
        self.events_dir = events_dir
        b = (
            _spark.builder("cdclake-bench", kafka=False)
            .config("spark.eventLog.enabled", "true")
            .config("spark.eventLog.dir", events_dir.as_uri())
            .config("spark.eventLog.compress", "false")  # plain JSON lines, one file
            .config("spark.eventLog.rolling.enabled", "false")
            .config("spark.sql.warehouse.dir", (self.work / "warehouse").as_uri())
            # AUTO CDC's Connect service: loopback only; the port picked now may be taken by the
            # time the service starts, so it may move up (the client reads the bound port)
            .config("spark.connect.grpc.binding.address", "127.0.0.1")
            .config("spark.connect.grpc.binding.port", str(free_port()))
            .config("spark.connect.grpc.port.maxRetries", "50")
        )
        t0 = time.perf_counter()
        self.spark = b.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")
        log(
            f"Spark {self.spark.version} up in {time.perf_counter() - t0:.1f}s "
            f"(master {self.spark.sparkContext.master}, "
            f"shuffle partitions {self.spark.conf.get('spark.sql.shuffle.partitions')})"
        )

    # ---- measuring -------------------------------------------------------------------------

    def measure(
        self,
        contender: str,
        fmt: str,
        n: int,
        job: Callable[[], Callable[[], object]],
        table_rows: int = 0,
        setup: Callable[[int], object] | None = None,
        teardown: Callable[[int], object] | None = None,
        repeats: int | None = None,
    ) -> Measurement:
        m = Measurement(contender, fmt, n, table_rows)
        label = f"{fmt} n={n:,} {contender}" + (f" table={table_rows:,}" if table_rows else "")
        try:
            repeat(self.spark, m, job(), repeats or self.args.repeat, setup, teardown)
            log(
                f"{label}: median {m.t_median:.2f}s min {m.t_min:.2f}s "
                f"({m.eps:,.0f} ev/s) heap≤{m.peaks.get('jvm_heap', 0):.0f} MB"
            )
        except Exception as e:  # a contender that breaks is reported, not fatal
            m.status, m.reason = "failed", first_line(e)
            log(f"[red]{label}: FAILED: {m.reason[:300]}")
        self.results.append(m)
        return m

    def warm_up(self, fmts: list[str]) -> None:
        """Every contender of this run once on a small input, untimed, in the job group
        ``warmup`` (which the profile leaves out): the JVM loads its classes and compiles the
        hot paths of the JSON reader, Delta and the codegen before the first measurement, so
        that the contender measured first does not pay it for the others."""
        sp, a = self.spark, self.args
        n = SMOKE_WARMUP_EVENTS if a.smoke else WARMUP_EVENTS
        w = self.work / "warmup"
        jobs: list[Callable[[], object]] = []
        for fmt in fmts:
            path = self.events_file(fmt, n, self.keys_for(n), 100)
            jobs += [
                C.floor_parse(sp, path, fmt),
                C.floor_write(sp, path, fmt, w / fmt / "floor"),
                C.decode(sp, path, fmt, fmt),
                C.apply(sp, path, fmt, w / fmt / "lake"),
            ]
            if fmt == "debezium":
                jobs.append(C.recipe(sp, path, w / "recipe"))
                jobs.append(C.recipe_typed(sp, path, w / "recipe-typed"))
        if a.many_tables:
            path = self.events_file("debezium", n, self.keys_for(n), 100, min(a.tables, 10))
            jobs += [
                C.apply(sp, path, "debezium", w / "many"),
                C.recipe_many(sp, path, w / "many-recipe"),
            ]
        t0 = time.perf_counter()
        self.spark.sparkContext.setJobGroup("warmup", "warm-up, untimed")
        try:
            for job in jobs:
                job()
                self.spark.catalog.clearCache()
        finally:
            sc = self.spark.sparkContext
            sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
            shutil.rmtree(w, ignore_errors=True)
        took = time.perf_counter() - t0
        log(f"warm-up: {len(jobs)} contenders on {n:,} events, untimed, in {took:.1f}s")

    def unavailable(self, contender: str, fmt: str, n: int, reason: str) -> None:
        self.results.append(Measurement(contender, fmt, n, status="not available", reason=reason))

    # ---- the run ---------------------------------------------------------------------------

    @staticmethod
    def applied_table(lake: Path) -> tuple[str, str] | None:
        """The one table cdclake wrote under ``lake``: its identifier and folder."""
        from cdclake.apply.tables import Target

        found = (
            sorted(p for p in lake.iterdir() if not p.name.startswith("_")) if lake.is_dir() else []
        )
        if len(found) != 1:
            return None
        ident = urllib.parse.unquote(found[0].name)
        return ident, Target(str(lake)).table_path(ident)

    def base_table(self, fmt: str, rows: int, probe_path: str) -> Path:
        path = self.out / "tables" / f"{fmt}-cdclake-{rows}{self.dv_suffix}"
        if not (path / "_delta_log").exists():
            t0 = time.perf_counter()
            tables.remove(path)
            tables.build_like(self.spark, probe_path, path, rows)
            log(f"built {fmt} base table of {rows:,} rows in {time.perf_counter() - t0:.1f}s")
        return path

    @property
    def dv_suffix(self) -> str:
        """Cached base tables differ with the deletion-vector setting they were built with."""
        return "-dv" if self.args.deletion_vectors else ""

    def recipe_table(self, rows: int) -> Path:
        path = self.out / "tables" / f"recipe-{rows}{self.dv_suffix}"
        if not (path / "_delta_log").exists():
            t0 = time.perf_counter()
            tables.remove(path)
            tables.build_recipe(self.spark, path, rows)
            log(f"built recipe base table of {rows:,} rows in {time.perf_counter() - t0:.1f}s")
        return path

    def run_format(self, fmt: str, n: int, path: Path) -> None:
        from cdclake.apply.tables import Target

        sp, lite = self.spark, self.args.smoke
        w = self.work / f"{fmt}-{n}"
        self.measure("floor-parse", fmt, n, lambda: C.floor_parse(sp, path, fmt))
        out = w / "floor-write"
        self.measure(
            "floor-write",
            fmt,
            n,
            lambda: C.floor_write(sp, path, fmt, out),
            setup=lambda _: tables.remove(out),
        )
        self.measure("decode", fmt, n, lambda: C.decode(sp, path, fmt, fmt))
        if not lite:
            self.measure("decode-auto", fmt, n, lambda: C.decode(sp, path, "auto", fmt))
        lake = w / "lake"
        self.measure(
            "apply-empty",
            fmt,
            n,
            lambda: C.apply(sp, path, fmt, lake),
            setup=lambda _: tables.remove(lake),
        )
        applied = self.applied_table(lake)
        if applied is not None:
            self.probes.setdefault(fmt, (applied[0], str(self.copy_probe(fmt, applied[1]))))
        rows = 10 * n
        if self.args.scd2:
            history = self.args.scd2_history_events or rows
            self.run_scd2(fmt, n, path, history if fmt == "debezium" else 0)
        if fmt != "debezium":
            return
        if fmt not in self.probes:
            self.unavailable("apply-existing", fmt, n, "apply-empty wrote no table to copy")
            return
        ident, probe = self.probes[fmt]
        base = self.base_table(fmt, rows, probe)
        table_path = Path(Target(str(lake)).table_path(ident))

        def fill(_: int) -> None:
            tables.remove(lake)
            tables.copy_table(base, table_path)

        self.measure(
            "apply-existing",
            fmt,
            n,
            lambda: C.apply(sp, path, fmt, lake),
            table_rows=rows,
            setup=fill,
        )
        try:  # a build without one-pass typing (a before/after run) reports it unavailable
            known = C.learn_plans(sp, path, fmt, w / "first-batch")
        except ImportError as e:
            self.unavailable("apply-stream-batch", fmt, n, first_line(e))
        else:
            self.measure(
                "apply-stream-batch",
                fmt,
                n,
                lambda: C.stream_batch(sp, path, fmt, lake, known),
                table_rows=rows,
                setup=fill,
            )
        rt = w / "recipe"
        self.measure(
            "recipe-empty",
            fmt,
            n,
            lambda: C.recipe(sp, path, rt),
            setup=lambda _: tables.remove(rt),
        )
        self.measure(
            "recipe-typed-empty",
            fmt,
            n,
            lambda: C.recipe_typed(sp, path, rt),
            setup=lambda _: tables.remove(rt),
        )
        if not lite:
            rbase = self.recipe_table(rows)
            for name, job in (("recipe", C.recipe), ("recipe-typed", C.recipe_typed)):
                self.measure(
                    f"{name}-existing",
                    fmt,
                    n,
                    functools.partial(job, sp, path, rt),
                    table_rows=rows,
                    setup=lambda _: tables.copy_table(rbase, rt),
                )
        self.run_autocdc(n, path)

    def run_scd2(self, fmt: str, n: int, path: Path, rows: int) -> None:
        """SCD type 2 on the same input: into an empty lake, and (``rows`` > 0) into a lake
        whose history table already holds the history of ``rows`` events (built once by cdclake
        from a generated input of that size, then copied before every repeat)."""
        sp = self.spark
        lake = self.work / f"{fmt}-{n}" / "lake-scd2"
        self.measure(
            "apply-scd2-empty",
            fmt,
            n,
            lambda: C.apply(sp, path, fmt, lake, scd_type=2),
            setup=lambda _: tables.remove(lake),
        )
        if not rows:
            return
        base = self.out / "tables" / f"{fmt}-scd2-{rows}{self.dv_suffix}"
        if not (base / "_done").exists():
            t0 = time.perf_counter()
            tables.remove(base)
            source = self.events_file(fmt, rows, self.keys_for(rows), 100)
            C.apply(sp, source, fmt, base, scd_type=2)()
            (base / "_done").write_text("")
            log(f"built {fmt} history of {rows:,} events in {time.perf_counter() - t0:.1f}s")
        history_rows = sum(C.rows_of(sp, p) for p in base.iterdir() if not p.name.startswith("_"))

        def fill(_: int) -> None:
            tables.remove(lake)
            shutil.copytree(base, lake)

        self.measure(
            "apply-scd2-existing",
            fmt,
            n,
            lambda: C.apply(sp, path, fmt, lake, scd_type=2),
            table_rows=history_rows,
            setup=fill,
        )

    def copy_probe(self, fmt: str, table: str) -> Path:
        """Keep the first table cdclake made for ``fmt``: pre-filled tables copy its schema."""
        dst: Path = self.work / "probe" / fmt
        if not dst.exists():
            tables.copy_table(Path(table), dst)
        return dst

    def run_autocdc(self, n: int, path: Path) -> None:
        assert self.autocdc is not None
        if self.autocdc.error is not None:
            self.unavailable("autocdc", "debezium", n, self.autocdc.error)
            return
        name = f"bench_autocdc_{n}"
        m = Measurement("autocdc", "debezium", n)
        try:
            for _ in range(self.args.repeat):
                m.times.append(self.autocdc.run(path.parent, name))
            log(f"debezium n={n:,} autocdc: median {m.t_median:.2f}s")
        except Exception as e:
            m.status, m.reason = "not available", first_line(e)
            self.autocdc.error = m.reason
            log(f"[yellow]AUTO CDC cannot run: {m.reason}")
        self.results.append(m)

    def run_merge_scaling(self, ident: str, probe: str) -> None:
        from cdclake.apply.tables import Target

        sp, nb = self.spark, self.args.merge_batch
        keys = self.keys_for(nb)
        for rows in self.args.table_sizes:
            path = self.events_file("debezium", nb, keys, max(rows // keys, 1))
            base = self.base_table("debezium", rows, probe)
            lake = self.work / f"merge-{rows}" / "lake"
            table_path = Path(Target(str(lake)).table_path(ident))

            def fill(_: int, base: Path = base, lake: Path = lake, tp: Path = table_path) -> None:
                tables.remove(lake)
                tables.copy_table(base, tp)

            self.measure(
                "merge-scaling",
                "debezium",
                nb,
                functools.partial(C.apply, sp, path, "debezium", lake),
                table_rows=rows,
                setup=fill,
            )
            if self.args.smoke:
                continue
            rbase = self.recipe_table(rows)
            rt = self.work / f"merge-{rows}" / "recipe"
            self.measure(
                "merge-scaling-recipe",
                "debezium",
                nb,
                functools.partial(C.recipe, sp, path, rt),
                table_rows=rows,
                setup=functools.partial(_copy_for, rbase, rt),
            )

    def run(self) -> dict[str, object]:
        a = self.args
        wanted = [f.strip() for f in a.formats.split(",") if f.strip()]
        registered = registered_formats()
        fmts = [f for f in wanted if f in registered]
        for f in wanted:
            if f not in registered:
                for n in a.events:
                    self.unavailable(
                        "*",
                        f,
                        n,
                        f"format {f!r} is not registered in cdclake.formats.names() {registered}",
                    )
                log(f"[yellow]{f}: not available (not in cdclake.formats.names() {registered})")
        log(
            f"formats {fmts}; events {a.events}; tables {a.table_sizes}; "
            f"merge batch {a.merge_batch}; repeat {a.repeat}"
        )
        shutil.rmtree(self.work, ignore_errors=True)
        files = {
            (f, n): self.events_file(f, n, self.keys_for(n), 100)
            for n in (a.events if a.core else [])
            for f in fmts
        }
        self.start_spark()
        if a.warmup:
            self.warm_up(fmts if a.core else [])
        # the Connect service AUTO CDC needs starts only when the core contenders run
        self.autocdc = AutoCdc(self.spark, self.work / "pipelines") if a.core else None
        try:
            for n in a.events if a.core else []:
                for f in fmts:
                    self.run_format(f, n, files[(f, n)])
            if "debezium" in self.probes:
                self.run_merge_scaling(*self.probes["debezium"])
            if a.many_tables:
                many.run_cases(self, max(a.events))
            if a.streaming:
                stream.run_cases(self, max(a.events))
        finally:
            if self.autocdc is not None:
                self.autocdc.close()
            self.spark.stop()
        profile = eventlog.parse(self.events_dir)
        summary = report.build(self.results, profile, a, time.time() - self.started)
        summary["machine"]["loadavg_at_start"] = self.load_at_start
        return summary


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("CDCLAKE_SPARK_LOG_LEVEL", "ERROR")
    os.environ["CDCLAKE_DELETION_VECTORS"] = "true" if args.deletion_vectors else "false"
    bench = Bench(args)
    summary = bench.run()
    report.write(summary, bench.out, BENCH / "results" if args.publish else None)
    log(f"report: {bench.out / 'report.md'}")
    print(json.dumps(summary["headline"]), flush=True)
    return 0


def _copy_for(src: Path, dst: Path, _repeat: int) -> None:
    """A measurement's setup: a fresh copy of ``src`` at ``dst`` before each repeat."""
    tables.copy_table(src, dst)


if __name__ == "__main__":
    sys.exit(main())
