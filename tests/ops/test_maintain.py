"""``cdclake maintain`` (issue 37, items 2 and 3): compaction and vacuum change no row a reader
sees, ``_cdc_sources`` rolls up without changing what ``cdclake status`` says, records past their
retention go, and a stream can maintain its own target between batches."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from test_html_report import live_workload
from typer.testing import CliRunner

from cdclake.apply.results import BatchResult
from cdclake.apply.tables import Target
from cdclake.cli import app
from cdclake.ops.maintain import RETENTION_CHECK, Retention, delta_tables, maintain
from cdclake.ops.status import bookkeeping_sizes, target_status
from cdclake.run.stream_metrics import BatchMetrics, write_record
from cdclake.target_layout import QUARANTINE, SOURCES

NOW = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture
def short_retention(spark: SparkSession) -> Any:
    """VACUUM with a retention below Delta's 7 days, as ``--retention-hours`` allows."""
    spark.conf.set(RETENTION_CHECK, "false")
    yield
    spark.conf.unset(RETENTION_CHECK)


@pytest.fixture(scope="module")
def live_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the live workload's lake is built, once for the module (by :func:`live_lake`)."""
    return tmp_path_factory.mktemp("live-template") / "lake"


@pytest.fixture
def live_lake(lake: Any, live_template: Path) -> Any:
    """The lake of :func:`live_workload` (four batches over three tables, with quarantined
    records), a copy of its own for each test to change: the workload's applies run once for the
    module. A Delta table's log holds paths relative to it, so a copied table is the same table."""
    if not live_template.exists():
        live_workload(type(lake)(lake.spark, live_template))
    shutil.copytree(live_template, lake.root)
    return lake


def everything(spark: SparkSession, root: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every Delta table under ``root``, as a reader sees them."""
    out = {}
    for folder, _ in delta_tables(spark, str(root)):
        df = spark.read.format("delta").load(str(root / folder))
        out[folder] = sorted((tuple(map(repr, r)) for r in df.collect()), key=repr)
    return out


def status_doc(root: Path) -> dict[str, Any]:
    return asdict(target_status(str(root), now=NOW))


def test_maintain_compacts_and_vacuums_without_changing_a_row(
    spark: SparkSession, live_lake: Any, short_retention: Any
) -> None:
    rows, status = everything(spark, live_lake.root), status_doc(live_lake.root)

    report = maintain(spark, str(live_lake.root), retention=Retention(vacuum_hours=0))

    by_table = {t.table: t for t in report}
    assert {t.outcome for t in report} == {"ok"}, [(t.table, t.reason) for t in report]
    targets = [t for t in report if t.kind == "table"]
    assert sorted(t.table for t in targets) == [
        "shop.public.customers",
        "shop.public.items",
        "shop.public.orders",
    ]
    assert all(t.files_after == 1 for t in report), report
    # tables that every batch appended to (a MERGE may leave one file already)
    for t in [by_table[n] for n in ("shop.public.items", SOURCES, QUARANTINE)]:
        assert t.files_before > 1, t
        assert t.files_vacuumed >= t.files_before - 1, t  # the compacted files left storage
    assert everything(spark, live_lake.root) == rows
    assert status_doc(live_lake.root) == status

    again = maintain(spark, str(live_lake.root), retention=Retention(vacuum_hours=0))
    assert [(t.files_before, t.files_after, t.rows_removed) for t in again] == [(1, 1, 0)] * len(
        report
    )


def test_sources_roll_up_keeps_the_status_and_the_newest_batches(
    spark: SparkSession, live_lake: Any
) -> None:
    source_rows = spark.read.format("delta").load(str(live_lake.root / SOURCES))
    before = source_rows.count()
    status = status_doc(live_lake.root)
    newest = source_rows.agg({"recorded_at": "max"}).first()[0]
    newest_rows = sorted(map(repr, source_rows.filter(source_rows.recorded_at == newest).collect()))

    report = maintain(
        spark, str(live_lake.root), compact=False, vacuum=False, retention=Retention(keep_batches=1)
    )

    rolled = spark.read.format("delta").load(str(live_lake.root / SOURCES))
    removed = {t.table: t.rows_removed for t in report}
    # what status reports of cdclake's own tables follows
    sizes = bookkeeping_sizes(str(live_lake.root), [t["table"] for t in status["tables"]])
    assert sizes[SOURCES]["rows"] == rolled.count() < before
    quarantined = spark.read.format("delta").load(str(live_lake.root / QUARANTINE)).count()
    assert sizes[QUARANTINE]["rows"] == quarantined > 0
    assert removed[SOURCES] == before - rolled.count() > 0
    assert {k: v for k, v in removed.items() if k != SOURCES} == dict.fromkeys(
        [k for k in removed if k != SOURCES], 0
    )
    # one row per (kind, source, table) of the older batches, the newest batch as it was
    older = rolled.filter(rolled.recorded_at < newest)
    assert older.count() == older.select("kind", "source_id", "table").distinct().count()
    assert sorted(map(repr, rolled.filter(rolled.recorded_at == newest).collect())) == newest_rows
    assert status_doc(live_lake.root) == status


def test_a_kafka_batchs_record_outlives_the_roll_up_and_goes_after_its_retention(
    spark: SparkSession, live_lake: Any
) -> None:
    """A Kafka batch's record (a ``batch`` row of ``_cdc_sources``) is not a batch's bookkeeping
    to roll up: the roll-up keeps it as it is and counts only the other rows' batches;
    ``--batches-retention`` drops it."""
    root = str(live_lake.root)
    at = datetime.now(UTC)
    for batch_id in (7, 8):
        record = BatchMetrics(batch_id, BatchResult(), at, at, end_offsets={("t", 0): batch_id})
        write_record(spark, Target(root), record, "app")
    source_rows = spark.read.format("delta").load(str(live_lake.root / SOURCES))
    own = source_rows.filter("kind <> 'batch'")
    newest = own.agg({"recorded_at": "max"}).first()[0]
    newest_rows = sorted(map(repr, own.filter(own.recorded_at == newest).collect()))
    status = status_doc(live_lake.root)
    assert status["stream"]["last_batch_id"] == 8

    maintain(spark, root, compact=False, vacuum=False, retention=Retention(keep_batches=1))

    rolled = spark.read.format("delta").load(str(live_lake.root / SOURCES))
    assert sorted(r["batch"]["end_offsets"] for r in rolled.filter("kind = 'batch'").collect()) == [
        '{"t":{"0":7}}',
        '{"t":{"0":8}}',
    ]
    older = rolled.filter(f"kind <> 'batch' AND recorded_at < '{newest.isoformat()}'")
    assert older.count() == older.select("kind", "source_id", "table").distinct().count() > 0
    assert sorted(map(repr, rolled.filter(rolled.recorded_at == newest).collect())) == newest_rows
    assert status_doc(live_lake.root) == status
    n_rolled = rolled.count()

    def retained(days: int) -> int:
        report = maintain(
            spark, root, compact=False, vacuum=False,
            retention=Retention(batches=timedelta(days=days)),
        )  # fmt: skip
        return {t.table: t.rows_removed for t in report}[SOURCES]

    assert retained(1) == 0
    assert retained(0) == 2
    after = spark.read.format("delta").load(str(live_lake.root / SOURCES))
    assert after.filter("kind = 'batch'").count() == 0
    assert after.count() == n_rolled - 2
    assert status_doc(live_lake.root)["stream"]["last_batch_id"] is None


def test_records_past_their_retention_go(spark: SparkSession, live_lake: Any) -> None:
    quarantined = spark.read.format("delta").load(str(live_lake.root / QUARANTINE)).count()
    kept = maintain(
        spark, str(live_lake.root), compact=False, vacuum=False,
        retention=Retention(quarantine=timedelta(days=1)),
    )  # fmt: skip
    assert {t.table: t.rows_removed for t in kept}[QUARANTINE] == 0
    gone = maintain(
        spark, str(live_lake.root), compact=False, vacuum=False,
        retention=Retention(quarantine=timedelta(0)),
    )  # fmt: skip
    assert {t.table: t.rows_removed for t in gone}[QUARANTINE] == quarantined > 0
    assert spark.read.format("delta").load(str(live_lake.root / QUARANTINE)).count() == 0


def test_cli_reports_every_table_and_refuses_a_bad_duration(live_lake: Any) -> None:
    runner = CliRunner()
    out = runner.invoke(
        app, ["maintain", "--target", str(live_lake.root), "--retention-hours", "0", "--json"]
    )
    assert out.exit_code == 0, out.output
    report = [json.loads(line) for line in out.output.splitlines()]
    assert {r["table"] for r in report} >= {"shop.public.items", SOURCES, QUARANTINE}
    items = next(r for r in report if r["table"] == "shop.public.items")
    assert (items["files_after"], items["outcome"]) == (1, "ok")
    assert items["files_vacuumed"] > 0

    bad = runner.invoke(
        app, ["maintain", "--target", str(live_lake.root), "--quarantine-retention", "a week"]
    )
    assert bad.exit_code == 2
    assert "--quarantine-retention 'a week': expected a duration such as 90s" in bad.output

    status = json.loads(
        runner.invoke(app, ["status", "--target", str(live_lake.root), "--json"]).output
    )
    own = status["bookkeeping"]
    assert own[SOURCES]["files"] == 1 and own[SOURCES]["rows"] > 0  # compacted
    assert set(own) >= {SOURCES, QUARANTINE}

    none = runner.invoke(app, ["maintain", "--target", str(live_lake.root / "nothing")])
    assert none.exit_code == 2
    assert "no Delta table under" in none.output


def test_a_stream_maintains_its_target_between_batches(spark: SparkSession, tmp_path: Path) -> None:
    """Two runs of a file stream, a batch each: the second batch is the second of the query, so
    ``maintain_every=2`` compacts after it and drops the tombstones past their retention (here
    all); every row stays exact, and every table is registered by name as it appears."""
    from builders.dbz import event
    from test_status import row

    from cdclake.config import ApplyConfig
    from cdclake.ops.catalog import registered_tables
    from cdclake.run.runner import run_stream

    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    inbox.mkdir()
    db = f"maintained_{tmp_path.name[-6:].replace('-', '_')}"
    config = ApplyConfig(
        inputs=(str(inbox),), target=str(lake), stream=True, checkpoint=str(tmp_path / "chk"),
        available_now=True, maintain_every=2, tombstone_retention=timedelta(0),
        catalog_database=db, maintain_budget=None,
    )  # fmt: skip
    expected: dict[int, str] = {}
    for b in range(2):
        lines = [event("c", after=row(10 * b + i, f"v{b}"), lsn=10 * b + i) for i in range(1, 4)]
        lines.append(event("c", after=row(0, f"v{b}"), lsn=10 * b + 9))
        if b == 1:  # a delete: its tombstone is past the retention at once
            lines.append(event("d", before=row(1, "v0"), lsn=19))
            del expected[1]
        (inbox / f"{b:03}.jsonl").write_text("\n".join(lines) + "\n")
        expected.update({10 * b + i: f"v{b}" for i in range(1, 4)})
        expected[0] = f"v{b}"
        run_stream(spark, config)

    items = spark.read.format("delta").load(str(lake / "shop.public.items"))
    assert {r["id"]: r["name"] for r in items.collect()} == expected
    sources = spark.sql(f"DESCRIBE HISTORY delta.`{lake / SOURCES}`").collect()
    operations = [r["operation"] for r in sorted(sources, key=lambda r: r["version"])]
    assert operations[:3] == ["WRITE", "WRITE", "OPTIMIZE"]  # then VACUUM at 7 days: nothing
    assert spark.read.format("delta").load(str(lake / SOURCES)).inputFiles().__len__() == 1
    tombstones = spark.read.format("delta").load(str(lake / "_cdc_tombstones/shop.public.items"))
    assert tombstones.count() == 0
    assert {r["id"]: r["name"] for r in spark.table(f"{db}.shop_public_items").collect()} == (
        expected
    )
    assert "_cdc_tombstones__shop_public_items" in registered_tables(spark, db)


def test_a_retention_without_maintenance_is_refused(tmp_path: Path) -> None:
    from cdclake.config import ApplyConfig
    from cdclake.errors import ConfigError

    config = ApplyConfig(inputs=("x",), target=str(tmp_path), tombstone_retention=timedelta(1))
    with pytest.raises(ConfigError, match=r"--tombstone-retention .* give --maintain-every N"):
        config.check()
    config = ApplyConfig(inputs=("x",), target=str(tmp_path), keep_batches=20)
    with pytest.raises(ConfigError, match=r"--keep-batches .* give --maintain-every N"):
        config.check()
    inbox = tmp_path / "in.jsonl"
    inbox.write_text("")
    bad = CliRunner().invoke(
        app, ["apply", str(inbox), "--target", str(tmp_path / "t"), "--maintain-budget", "soon"]
    )
    assert bad.exit_code == 2
    assert "--maintain-budget 'soon': expected a duration" in bad.output


def test_a_streams_maintenance_takes_the_tables_in_turn_within_its_budget(
    spark: SparkSession, live_lake: Any
) -> None:
    """With a budget too short for more than one table, each maintenance of a stream visits one,
    the one after where the last stopped: every table in turn, then round again, also after a
    restart; and a dropped table's place is still known."""
    from cdclake.config import ApplyConfig
    from cdclake.run.runner import BetweenBatches

    tables = delta_tables(spark, str(live_lake.root))
    assert len(tables) == 5, tables  # three tables, _cdc_quarantine, _cdc_sources
    config = ApplyConfig(
        inputs=("x",), target=str(live_lake.root), maintain_every=1, maintain_budget=timedelta(0)
    )
    between = BetweenBatches(spark, config)
    visited = []
    for batch_id in range(len(tables) + 1):
        between.maintain(batch_id)
        visited.append(between.turn_cursor)
    assert visited == [*tables, tables[0]]
    restarted = BetweenBatches(spark, config)  # goes on after the one maintained last
    restarted.maintain(0)
    assert restarted.turn_cursor == tables[1]

    # the table maintained last is gone: the next turn takes the one after its place
    between.turn_cursor = (tables[1][0] + "-dropped", tables[1][1])
    between.maintain(len(tables) + 1)
    assert between.turn_cursor == tables[2]


def test_tombstones_past_their_retention_go_and_a_late_event_then_comes_back(
    spark: SparkSession, lake: Any
) -> None:
    """The documented trade-off of ``--tombstone-retention``: while the tombstone is kept a late
    event for the deleted key stays out; once it is gone, the same event brings the row back."""
    from builders import msgs

    table, f = msgs.TABLES["debezium"], msgs.DBZ_FIELDS
    ann, bob = {"id": 1, "name": "ann", "qty": 1}, {"id": 2, "name": "bob", "qty": 2}
    lake.apply([msgs.debezium(1, ann, schema=f), msgs.debezium(2, bob, schema=f)])
    lake.apply([msgs.debezium(4, None, ann, op="d", schema=f)])
    late = [msgs.debezium(3, {**ann, "qty": 9}, ann, op="u", schema=f)]  # older than the delete
    tombs = f"_cdc_tombstones/{table}"

    def removed(retention: timedelta) -> int:
        report = maintain(spark, str(lake.root), compact=False, vacuum=False,
                          retention=Retention(tombstones=retention))  # fmt: skip
        return {t.table: t.rows_removed for t in report}[tombs]

    assert removed(timedelta(days=1)) == 0
    assert lake.apply(late).tables[table].ignored == 1
    assert lake.rows(table) == [(2, "bob", 2)]
    assert removed(timedelta(0)) == 1
    lake.apply(late)
    assert lake.rows(table) == [(1, "ann", 9), (2, "bob", 2)]


def test_tombstone_logs_keep_only_live_tombstones_and_still_hold_late_events_back(
    spark: SparkSession, lake: Any
) -> None:
    """The log keeps one tombstone per key deleted now: ann (deleted twice, each delete
    logged) keeps her newest, bob (deleted, then back) none. A late event older than ann's
    newest delete and one older than bob's row still change nothing; newer ones do."""
    from builders import msgs

    table, f = msgs.TABLES["debezium"], msgs.DBZ_FIELDS
    ann, bob = {"id": 1, "name": "ann", "qty": 1}, {"id": 2, "name": "bob", "qty": 2}
    lake.apply([msgs.debezium(1, ann, schema=f), msgs.debezium(2, bob, schema=f)])
    lake.apply([msgs.debezium(3, None, ann, op="d", schema=f),
                msgs.debezium(4, None, bob, op="d", schema=f)])  # fmt: skip
    lake.apply([msgs.debezium(5, ann, schema=f), msgs.debezium(6, bob, schema=f)])
    lake.apply([msgs.debezium(7, None, ann, op="d", schema=f)])
    tombs = f"_cdc_tombstones/{table}"

    def log() -> list[tuple[int, int]]:
        rows = spark.read.format("delta").load(str(lake.root / tombs)).collect()
        return sorted((r["id"], r["_cdc_position"][0]) for r in rows)

    assert [k for k, _ in log()] == [1, 1, 2]  # every delete ever applied
    report = maintain(spark, str(lake.root), compact=False, vacuum=False)
    assert {t.table: t.rows_removed for t in report}[tombs] == 2
    assert log() == [(1, 7)]  # ann's newest delete; bob is back
    late = [
        msgs.debezium(6, {**ann, "qty": 6}, ann, op="u", schema=f),  # older than ann's delete
        msgs.debezium(5, {**bob, "qty": 5}, bob, op="u", schema=f),  # older than bob's row
    ]
    assert lake.apply(late).tables[table].ignored == 2
    assert lake.rows(table) == [(2, "bob", 2)]
    again = maintain(spark, str(lake.root), compact=False, vacuum=False)
    assert {t.table: t.rows_removed for t in again}[tombs] == 0
    lake.apply([msgs.debezium(8, {**ann, "qty": 8}, schema=f)])
    assert lake.rows(table) == [(1, "ann", 8), (2, "bob", 2)]


def test_maintain_killed_mid_table_leaves_every_table_readable_and_exact(
    spark: SparkSession, live_lake: Any, short_retention: Any
) -> None:
    """``cdclake maintain`` SIGKILLed (its Spark JVM with it) while it works on a table, after
    reporting the ones before; every table reads the same rows after the kill, and a full run
    afterwards finishes the work. Compaction, vacuum and the roll-up are each one
    Delta commit or deletes of unreferenced files: a kill leaves a table at its last commit."""
    import os
    import signal
    import subprocess
    import sys

    rows, status = everything(spark, live_lake.root), status_doc(live_lake.root)
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo / "src"), "PYTHONUNBUFFERED": "1",
           "CDCLAKE_DRIVER_MEMORY": "1g"}  # fmt: skip
    args = ["maintain", "--target", str(live_lake.root), "--retention-hours", "0",
            "--keep-batches", "11", "--json"]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "cdclake.cli", *args], stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env, text=True,
        start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None
    done = [proc.stdout.readline() for _ in range(2)]  # then killed inside the third table
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert all(json.loads(line)["outcome"] == "ok" for line in done), done
    assert everything(spark, live_lake.root) == rows
    assert status_doc(live_lake.root) == status
    report = maintain(spark, str(live_lake.root), retention=Retention(vacuum_hours=0))
    assert {t.outcome for t in report} == {"ok"} and all(t.files_after == 1 for t in report)
    assert everything(spark, live_lake.root) == rows
    assert status_doc(live_lake.root) == status


def test_maintenance_is_due_every_n_batches_or_after_an_interval() -> None:
    from cdclake.cli import maintenance_every
    from cdclake.config import ApplyConfig, Maintenance
    from cdclake.errors import ConfigError
    from cdclake.run.runner import BetweenBatches

    def between(every: str) -> BetweenBatches:
        maintenance = Maintenance(**maintenance_every(every))
        config = ApplyConfig(inputs=("x",), target="/t", maintenance=maintenance)
        return BetweenBatches(None, config)  # type: ignore[arg-type]  # no Spark to decide

    assert [between("3").due(i, 0.0) for i in range(6)] == [False, False, True] * 2
    half_hour = between("30m")
    half_hour.last_maintained = 100.0
    assert not half_hour.due(0, 100.0 + 1799) and half_hour.due(1, 100.0 + 1800)
    with pytest.raises(ConfigError, match="--maintain-every 'soon': expected a duration"):
        maintenance_every("soon")


@given(
    names=st.sets(st.text("abc._", min_size=1, max_size=4), max_size=8),
    own=st.sets(st.sampled_from(["_cdc_sources", "_cdc_batches", "_cdc_quarantine"])),
    after=st.none() | st.tuples(st.text("abc._", max_size=4), st.sampled_from(["table", "x"])),
    turns=st.integers(1, 20),
)
def test_turns_visit_every_table_once_before_any_twice(
    names: set[str], own: set[str], after: tuple[str, str] | None, turns: int
) -> None:
    """``in_turn`` as a stream's maintenances use it, one table a turn from where the last one
    stopped (the model: a cursor over the sorted tables): every table once before any twice,
    from any starting point, also one no longer there."""
    from cdclake.ops.maintain import in_turn

    tables = sorted(
        [(n, "table") for n in names] + [(n, "cdclake") for n in own],
        key=lambda t: (t[1] != "table", t[0]),
    )
    visited, last = [], after
    for _ in range(turns):
        order = in_turn(tables, last)
        assert sorted(order) == sorted(tables)  # a rotation: every table, once
        if not order:
            break
        visited.append(order[0])
        last = order[0]
    if tables:
        n = len(tables)
        for i in range(len(visited) - n + 1):
            assert len(set(visited[i : i + n])) == len(visited[i : i + n])
        assert all(visited[i] == visited[i + n] for i in range(len(visited) - n))
