"""The whole chain, end to end: databases -> Debezium -> Kafka -> cdclake -> Delta == databases.

1. start a fresh Kafka broker (free port, own data dir), PostgreSQL and MariaDB (reused when
   already running; stopped at the end only when started here);
2. create the tables and the initial rows (``workload.setup``), start four Kafka Connect workers
   (PostgreSQL and MariaDB, JsonConverter ``schemas.enable`` true and false) with fresh offsets:
   each snapshots the initial rows, then streams;
3. run N seeded transactions per database (``workload.stream``), wait until the topics are quiet;
4. dump every topic to JSON lines (record objects), run ``cdclake apply`` per variant (files; one
   variant straight from Kafka with ``--kafka-bootstrap --topic-pattern --available-now``);
5. compare every Delta table with its source table (``compare.py``) and check the quarantine is
   empty.

Used by ``scripts/conformance.sh`` (CLI runs of ``cdclake apply``) and
``tests/e2e/test_conformance.py`` (the same calls in-process, on the test session's Spark)::

    PYTHONPATH=src:tests python -m conformance.chain --transactions 60
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ports import free_port

from conformance._sql import Connection, Dialect, run_sql
from conformance.capture import wait_settled
from conformance.compare import KNOWN_GAPS, diff_rows, lake_rows
from conformance.dump import _columns, dump_table
from conformance.topics import dump_topic, list_topics
from conformance.types import ADDED_COLUMN
from conformance.workload import Workload

__all__ = ["VARIANTS", "Chain", "Outcome", "main"]

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
VARIANTS: tuple[tuple[Dialect, bool], ...] = (
    ("pg", True),
    ("pg", False),
    ("mariadb", True),
    ("mariadb", False),
)
DIALECTS: tuple[Dialect, ...] = ("pg", "mariadb")
KAFKA_VARIANT = ("mariadb", True)
"""Applied straight from Kafka (the others from dumped files): schema-change topic included."""
TABLES: dict[Dialect, tuple[str, ...]] = {
    "pg": ("all_types", "order_lines", "truncated", "toasty"),
    "mariadb": ("all_types", "order_lines", "truncated"),
}
ADDED_DEFAULTS: dict[Dialect, dict[str, Any]] = {
    db: {ADDED_COLUMN[db].name: "dflt"} for db in ("pg", "mariadb")
}
"""``ALTER TABLE all_types ADD COLUMN c_added varchar(20) DEFAULT 'dflt'`` (types.py)."""
FLOAT32: dict[Dialect, frozenset[str]] = {
    "pg": frozenset({"c_real"}),
    "mariadb": frozenset({"c_float"}),
}


def _say(msg: str) -> None:
    print(f"conformance: {msg}", file=sys.stderr, flush=True)


def _run(args: list[str], env: dict[str, str] | None = None, timeout: float = 600) -> str:
    done = subprocess.run(
        args, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} failed (exit {done.returncode}):\n"
            f"{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return done.stdout


def tag(schemas: bool) -> str:
    return "schemas" if schemas else "noschemas"


@dataclass
class Outcome:
    """What one variant gave: differences per table and quarantined messages."""

    variant: str
    via: str
    differences: dict[str, list[str]] = field(default_factory=dict)
    quarantined: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    known_gaps: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.quarantined and not any(self.differences.values())

    def report(self) -> str:
        lines = [f"{self.variant} (via {self.via}): " + ("OK" if self.ok else "DIFFERENT")]
        for table, n in sorted(self.rows.items()):
            diffs = self.differences.get(table, [])
            lines.append(f"  {table}: {n} rows, {'equal' if not diffs else 'differs'}")
            lines += [f"    {d}" for d in diffs]
        lines += [f"  quarantined: {q}" for q in self.quarantined[:10]]
        lines += [
            f"  known gap ({n} values): {name}: {KNOWN_GAPS[name]}"
            for name, n in sorted(self.known_gaps.items())
        ]
        return "\n".join(lines)


@dataclass
class Chain:
    """One run of the chain under ``work`` (broker data, connector run dirs, topics, lakes)."""

    work: Path
    transactions: int = 60
    initial_rows: int = 6
    seed: int = 11
    prefix: str = "conf"
    kafka_port: int = field(default_factory=free_port)
    started: list[str] = field(default_factory=list)
    connectors: list[tuple[Dialect, bool]] = field(default_factory=list)
    workloads: dict[Dialect, Workload] = field(default_factory=dict)
    rest_ports: dict[tuple[Dialect, bool], int] = field(
        default_factory=lambda: {v: free_port() for v in VARIANTS}
    )

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.kafka_port}"

    def topic_prefix(self, db: Dialect, schemas: bool) -> str:
        return f"{self.prefix}_{db}_{tag(schemas)}"

    def _env(self) -> dict[str, str]:
        return {**os.environ, "KAFKA_DATA": str(self.work / "kafka-data")}

    def _connector_args(self, db: Dialect, schemas: bool) -> list[str]:
        rest = self.rest_ports[(db, schemas)]
        return [
            db, "--schemas", str(schemas).lower(), "--topic-prefix", self.topic_prefix(db, schemas),
            "--run-dir", str(self.work / "connect" / f"{db}-{tag(schemas)}"),
            "--rest-port", str(rest),
        ]  # fmt: skip

    # ---- servers ---------------------------------------------------------------------------
    def start(self) -> None:
        """Broker, databases, tables + initial rows, four connectors streaming."""
        self.work.mkdir(parents=True, exist_ok=True)
        env = self._env()
        for script in ("postgres", "mariadb", "kafka", "debezium"):
            _run(["bash", str(SCRIPTS / f"{script}.sh"), "install"], env, timeout=1800)
        _say(f"starting Kafka on {self.bootstrap}")
        _run(["bash", str(SCRIPTS / "kafka.sh"), "start", "--port", str(self.kafka_port),
              "--fresh"], env)  # fmt: skip
        self.started.append("kafka")
        for db, script in zip(DIALECTS, ("postgres", "mariadb"), strict=True):
            status = subprocess.run(["bash", str(SCRIPTS / f"{script}.sh"), "status"],
                                    capture_output=True, check=False)  # fmt: skip
            if status.returncode != 0:
                _run(["bash", str(SCRIPTS / f"{script}.sh"), "start"], env)
                self.started.append(db)
        for db in DIALECTS:
            w = self.workloads[db] = Workload(db, seed=self.seed, initial_rows=self.initial_rows)
            run_sql(Connection.from_env(db), w.setup_sql())
        for db, schemas in VARIANTS:
            _say(f"starting connector {self.topic_prefix(db, schemas)}")
            _run(["bash", str(SCRIPTS / "debezium.sh"), "start",
                  *self._connector_args(db, schemas), "--fresh", "--bootstrap", self.bootstrap],
                 env)  # fmt: skip
            self.connectors.append((db, schemas))
        for db, schemas in VARIANTS:
            _run(["bash", str(SCRIPTS / "debezium.sh"), "wait-streaming",
                  *self._connector_args(db, schemas), "--timeout", "480"], env)  # fmt: skip

    def stream(self) -> int:
        """The seeded transactions on both databases; then wait until the topics are quiet."""
        for db, w in self.workloads.items():
            _say(f"{self.transactions} transactions on {db}")
            run_sql(Connection.from_env(db), w.stream_sql(self.transactions))
        prefixes = [self.topic_prefix(db, s) for db, s in VARIANTS]
        return wait_settled(self.bootstrap, prefixes, quiet_s=6.0, timeout_s=300.0)

    def dump(self) -> dict[str, Path]:
        """Every topic of each variant -> ``topics/<variant>/<topic>.jsonl``."""
        out: dict[str, Path] = {}
        topics = list_topics(self.bootstrap)
        for db, schemas in VARIANTS:
            prefix = self.topic_prefix(db, schemas)
            folder = self.work / "topics" / prefix
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            for topic in [t for t in topics if t == prefix or t.startswith(prefix + ".")]:
                with (folder / f"{topic}.jsonl").open("w", encoding="utf-8") as fh:
                    for rec in dump_topic(self.bootstrap, topic):
                        fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")))
                        fh.write("\n")
            out[prefix] = folder
        return out

    def stop(self) -> None:
        """Stop the connectors, drop their slots, stop what this run started."""
        env = self._env()
        for db, schemas in self.connectors:
            subprocess.run(["bash", str(SCRIPTS / "debezium.sh"), "stop",
                            *self._connector_args(db, schemas)], env=env, capture_output=True,
                           check=False)  # fmt: skip
        if any(db == "pg" for db, _ in self.connectors):
            for db, schemas in self.connectors:
                if db != "pg":
                    continue
                slot = f"cdclake_{self.topic_prefix(db, schemas)}"
                subprocess.run(["bash", str(SCRIPTS / "postgres.sh"), "psql", "-q", "-tAc",
                                "SELECT pg_drop_replication_slot(slot_name) FROM "
                                f"pg_replication_slots WHERE slot_name = '{slot}'"],
                               env=env, capture_output=True, check=False)  # fmt: skip
        self.connectors.clear()
        for svc in reversed(self.started):
            script = {"kafka": "kafka", "pg": "postgres", "mariadb": "mariadb"}[svc]
            args = ["--port", str(self.kafka_port)] if svc == "kafka" else []
            subprocess.run(["bash", str(SCRIPTS / f"{script}.sh"), "stop", *args], env=env,
                           capture_output=True, check=False)  # fmt: skip
        self.started.clear()

    # ---- cdclake ------------------------------------------------------------------------------
    def target(self, db: Dialect, schemas: bool) -> Path:
        return self.work / "lake" / self.topic_prefix(db, schemas)

    def kafka_pattern(self, db: Dialect, schemas: bool) -> str:
        return self.topic_prefix(db, schemas) + r"(\..+)?"

    def apply_cli(self, db: Dialect, schemas: bool, folder: Path, via_kafka: bool) -> None:
        """``cdclake apply`` as a user runs it (one Spark application per call)."""
        target = self.target(db, schemas)
        shutil.rmtree(target, ignore_errors=True)
        args = [str(Path(sys.executable).parent / "cdclake"), "apply", "--format", "debezium",
                "--target", str(target)]  # fmt: skip
        if via_kafka:
            args += ["--kafka-bootstrap", self.bootstrap, "--topic-pattern",
                     self.kafka_pattern(db, schemas), "--available-now", "--checkpoint",
                     str(self.work / "checkpoints" / self.topic_prefix(db, schemas))]  # fmt: skip
            shutil.rmtree(args[-1], ignore_errors=True)
        else:
            args += ["--input", str(folder)]
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        _say(" ".join(args))
        print(_run(args, env, timeout=1200), file=sys.stderr)

    def apply_in_process(
        self, spark: Any, db: Dialect, schemas: bool, folder: Path, via_kafka: bool
    ) -> Any:
        """The same as :meth:`apply_cli`, on an existing Spark session."""
        from cdclake.config import ApplyConfig
        from cdclake.run.runner import run_batch
        from cdclake.run.streaming import run_kafka

        target = self.target(db, schemas)
        shutil.rmtree(target, ignore_errors=True)
        if via_kafka:
            checkpoint = self.work / "checkpoints" / self.topic_prefix(db, schemas)
            shutil.rmtree(checkpoint, ignore_errors=True)
            config = ApplyConfig(
                format="debezium", target=str(target), kafka_bootstrap=self.bootstrap,
                topic_pattern=self.kafka_pattern(db, schemas), checkpoint=str(checkpoint),
                available_now=True,
            )  # fmt: skip
            return run_kafka(spark, config)
        config = ApplyConfig(format="debezium", inputs=(str(folder),), target=str(target))
        return run_batch(spark, config)

    # ---- comparison ---------------------------------------------------------------------------
    def compare(self, spark: Any, db: Dialect, schemas: bool, via: str) -> Outcome:
        """Every table of ``db`` in the lake of one variant against the database."""
        from cdclake.apply.tables import QUARANTINE, Target

        outcome = Outcome(self.topic_prefix(db, schemas), via)
        target = Target(str(self.target(db, schemas)))
        conn = Connection.from_env(db)
        quarantine = Path(target.system_path(QUARANTINE))
        if quarantine.exists():
            rows = spark.read.format("delta").load(str(quarantine)).collect()
            outcome.quarantined = [json.dumps(r.asDict(), default=str)[:600] for r in rows]
        for table in TABLES[db]:
            ident = f"cdclake.public.{table}" if db == "pg" else f"cdclake.{table}"
            cols = _columns(conn, table)
            kinds = {n: k for n, k, _ in cols}
            keys = [n for n, _, pk in cols if pk]
            want = dump_table(conn, table)
            path = Path(target.table_path(ident))
            if not path.exists():
                outcome.rows[table] = 0
                outcome.differences[table] = [f"no Delta table at {path}"] if want else []
                continue
            got = lake_rows(spark, str(path))
            outcome.rows[table] = len(got)
            outcome.differences[table] = diff_rows(
                got,
                want,
                kinds,
                keys,
                encoded=not schemas,
                dialect=db,
                float32=FLOAT32[db],
                defaults=ADDED_DEFAULTS[db] if table == "all_types" else {},
                gaps=outcome.known_gaps,
            )
        return outcome

    def run(self, spark: Any | None, apply: str = "in-process") -> list[Outcome]:
        """Start, stream, dump, apply each variant, compare; always stops the servers."""
        try:
            self.start()
            total = self.stream()
            _say(f"topics settled at {total} records")
            folders = self.dump()
            outcomes = []
            for db, schemas in VARIANTS:
                via_kafka = (db, schemas) == KAFKA_VARIANT
                folder = folders[self.topic_prefix(db, schemas)]
                if apply == "cli":
                    self.apply_cli(db, schemas, folder, via_kafka)
                else:
                    self.apply_in_process(spark, db, schemas, folder, via_kafka)
                if spark is None:
                    from cdclake import _spark

                    spark = _spark.get_or_create()
                via = "kafka" if via_kafka else "files"
                outcomes.append(self.compare(spark, db, schemas, via))
                _say(outcomes[-1].report())
            return outcomes
        finally:
            self.stop()


def main(argv: list[str] | None = None) -> int:
    """Command line of ``scripts/conformance.sh``."""
    parser = argparse.ArgumentParser(prog="python -m conformance.chain", description=__doc__)
    parser.add_argument("--transactions", type=int, default=60)
    parser.add_argument("--initial-rows", type=int, default=6)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--work", default=None, help="work folder (default: a fresh temp dir)")
    parser.add_argument("--apply", choices=["cli", "in-process"], default="cli")
    args = parser.parse_args(argv)
    import tempfile

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="cdclake-conformance-"))
    chain = Chain(work, args.transactions, args.initial_rows, args.seed)
    started = time.monotonic()
    spark = None
    if args.apply == "in-process":
        from cdclake import _spark

        spark = _spark.get_or_create()
    outcomes = chain.run(spark, args.apply)
    print(f"\nwork folder: {work} ({time.monotonic() - started:.0f} s)")
    for o in outcomes:
        print(o.report())
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
