"""``cdclake status``, ``quarantine list`` and ``report`` read with delta-rs (issue 38, item 1): the
same answer as the Spark implementation they replace (``tests/spark_status.py``) on the test
workloads, rows from the Delta log (and ``None`` rather than a scan when the log has no count),
and a command that starts no JVM.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from apply.test_column_names import BATCH_1, BATCH_2, ODD_TABLE, PLAIN_TABLE
from builders.dbz import event
from builders.msgs import USERS_V1 as V1
from builders.msgs import canal_ddl as ddl
from builders.msgs import canal_rows as canal_row
from pyspark.sql import SparkSession
from test_html_report import live_workload
from test_status import ITEMS, T0, at, heartbeat, row
from typer.testing import CliRunner

from cdclake.apply.tables import Target
from cdclake.cli import app
from cdclake.ops.html_report import batches, quarantine_over_time
from cdclake.ops.quarantine import Selection, counts
from cdclake.ops.status import Status, target_status
from cdclake.run.stream_metrics import BatchMetrics, write_record
from tests import spark_status

REPO = Path(__file__).resolve().parents[2]


def plain(s: Status) -> dict[str, Any]:
    """Every field of a status, times in UTC (Spark hands back naive local times)."""
    doc = asdict(s)
    for t in doc["tables"]:
        if t["last_source_ts"] is not None:
            t["last_source_ts"] = t["last_source_ts"].astimezone(UTC)
    doc["stream"] = s.to_json()["stream"]
    doc["now"] = s.now.astimezone(UTC)
    return doc


def same_as_spark(spark: SparkSession, root: str, now: datetime, recent: int = 10) -> Status:
    """The delta-rs status equals the Spark one, field for field and as JSON."""
    new = target_status(root, now=now, recent=recent)
    old = spark_status.target_status(spark, root, now=now, recent=recent)
    assert new.to_json() == old.to_json()
    assert plain(new) == plain(old)
    assert list(new.quarantine.values()) == sorted(new.quarantine.values(), reverse=True)
    return new


def test_same_as_spark_on_a_live_workload(lake: Any) -> None:
    """Two sources, three tables, three batches, stale re-deliveries, three quarantine reasons,
    and a stream's batch records (the ``batch`` rows of ``_cdc_sources``): every window of
    recent batches, the quarantine selections and the report's series agree with Spark's."""
    live_workload(lake)
    result = lake.apply([heartbeat(int(datetime.now(UTC).timestamp() * 1000) - 2_000)])
    finished = datetime.now(UTC).replace(microsecond=0)
    for batch_id, behind in ((7, 40), (8, 5)):
        metrics = BatchMetrics(
            batch_id,
            result,
            finished - timedelta(seconds=10 - batch_id),
            finished - timedelta(seconds=9 - batch_id),
            end_offsets={("pg", 0): 100 * batch_id},
            latest_offsets={("pg", 0): 100 * batch_id + behind},
            newest_message_at=finished - timedelta(seconds=behind),
        )
        write_record(lake.spark, Target(str(lake.root)), metrics, "test-app")
    root, now = str(lake.root), datetime.now(UTC)
    for recent in (1, 2, 3, 10):
        s = same_as_spark(lake.spark, root, now, recent)
    assert [t.table.rsplit(".", 1)[1] for t in s.tables] == ["customers", "items", "orders"]
    assert (s.stream["last_batch_id"], s.stream["offsets_behind"]) == (8, 5)
    # 5 LSNs that are not integers, 2 truncated lines, 1 unknown op
    assert sorted(s.quarantine.values()) == [1, 2, 5]
    selections = [
        Selection(),
        Selection(reason="*0x1f*"),
        Selection(table="*.items", reason="source.*"),
        Selection(table="nothing*"),
        Selection(since=(now - timedelta(days=1)).isoformat()),
        Selection(since="2999-01-01T00:00:00"),
    ]
    for selection in selections:
        assert counts(root, selection) == spark_status.counts(lake.spark, root, selection)
    utc_times = [
        {**b, "at": b["at"].astimezone(UTC)} for b in spark_status.batches(lake.spark, root)
    ]
    assert batches(root) == utc_times
    assert quarantine_over_time(root) == spark_status.quarantine_over_time(lake.spark, root)


def test_same_as_spark_with_column_mapping_history_and_ddl(lake: Any) -> None:
    """A history (SCD2) table with column mapping (whose data delta-rs's pyarrow reader would
    read as nulls: only its log is read), a plain table, and a table made by DDL."""
    users = "CREATE TABLE `users` (`id` int NOT NULL, `name` varchar(20), PRIMARY KEY (`id`))"
    lake.apply(
        [
            *BATCH_1,
            ddl(users, "CREATE", T0),
            canal_row("INSERT", T0 + 1000, [{"id": "1", "name": "ann"}], V1),
        ],
        format="canal",
        stored_as_scd_type={ODD_TABLE: 2},
    )
    lake.apply(
        [*BATCH_2, ddl("CREATE INDEX ix_name ON users (name)", "CINDEX", T0 + 2000)],
        format="canal",
        stored_as_scd_type={ODD_TABLE: 2},
    )
    s = same_as_spark(lake.spark, str(lake.root), at(T0 + 3_600_000))
    got = {t.table: (t.rows, t.scd_type, t.last_ddl) for t in s.tables}
    assert got == {
        ODD_TABLE: (4, 2, None),  # versions: 1, 1b, 2 (closed), 3
        PLAIN_TABLE: (1, 1, None),
        "shop.users": (1, 1, "CREATE INDEX ix_name ON users (name)"),
    }
    assert [t.key_columns for t in s.tables[:2]] == [["_id"], ["id"]]


def test_rows_are_none_when_the_log_has_no_count(lake: Any, spark: SparkSession) -> None:
    """A table written without file statistics: its rows are unknown (None, ``?``), not scanned;
    rows deleted by deletion vectors are taken off the files' counts."""
    lake.apply([event("c", after=row(i, "a"), lsn=i, ts_ms=T0) for i in (1, 2, 3)])
    lake.apply([event("c", after=row(1, "a"), lsn=1, ts_ms=T0, table="orders")])
    spark.conf.set("spark.databricks.delta.stats.collect", "false")
    try:
        lake.apply([event("c", after=row(4, "a"), lsn=4, ts_ms=T0)])  # items: a file, no stats
    finally:
        spark.conf.unset("spark.databricks.delta.stats.collect")
    dv = "spark.databricks.delta.properties.defaults.enableDeletionVectors"
    spark.conf.set(dv, "true")
    try:  # a table created with deletion vectors on: its deletes mark rows in place
        lake.apply([event("c", after=row(i, "a"), lsn=i, ts_ms=T0, table="dv") for i in (1, 2)])
    finally:
        spark.conf.set(dv, "false")
    lake.apply([event("d", before=row(1, "a"), lsn=5, ts_ms=T0, table="dv")])
    import pyarrow as pa
    from deltalake import DeltaTable

    dvs = DeltaTable(str(lake.root / "shop.public.dv")).deletion_vectors()
    marked = pa.RecordBatchReader.from_stream(dvs).read_all()
    assert marked.num_rows == 1  # the delete was a deletion vector, not a rewrite
    s = target_status(str(lake.root), now=at(T0))
    rows = {t.table.rsplit(".", 1)[1]: t.rows for t in s.tables}
    assert rows == {"dv": 1, "items": None, "orders": 1}
    assert rows["dv"] == lake.df("shop.public.dv").count()
    res = CliRunner().invoke(app, ["status", "--target", str(lake.root)])
    assert res.exit_code == 0, res.output
    assert "rows ?: a file of the table has no row count in the Delta log" in res.stdout
    assert (
        json.loads(
            CliRunner().invoke(app, ["status", "--target", str(lake.root), "--json"]).stdout
        )["tables"][1]["rows"]
        is None
    )


NO_JVM = """
import sys
from cdclake.cli import main
sys.argv = ["cdclake", *sys.argv[1:]]
try:
    main()
finally:
    print("pyspark imported" if "pyspark" in sys.modules else "no pyspark", file=sys.stderr)
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``cdclake ARGS`` in a new process, which says whether it imported PySpark."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    return subprocess.run(
        [sys.executable, "-c", NO_JVM, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_status_list_and_report_start_no_jvm(lake: Any, tmp_path: Path) -> None:
    """In a process of their own, status, quarantine list and report answer without importing
    PySpark (so without a JVM); a missing target is one line, no traceback."""
    now_ms = int(datetime.now(UTC).timestamp() * 1000)
    lake.apply([event("c", after=row(1, "a"), lsn=10, ts_ms=now_ms), "not json"])
    root = str(lake.root)
    done = cli("status", "--target", root, "--json")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "no pyspark"
    (t,) = json.loads(done.stdout)["tables"]
    assert (t["table"], t["rows"], t["last_position"], t["quarantined"]) == (ITEMS, 1, [10], 0)
    done = cli("quarantine", "list", "--target", root)
    assert done.returncode == 0 and "not valid JSON" in done.stdout and "1 records" in done.stdout
    assert done.stderr.strip() == "no pyspark"
    done = cli("report", "--target", root, "--out", str(tmp_path / "r.html"))
    assert done.returncode == 0 and done.stderr.strip() == "no pyspark", done.stderr
    assert ITEMS in (tmp_path / "r.html").read_text()
    done = cli("status", "--target", str(tmp_path / "nowhere"))
    assert done.returncode == 2
    first, *rest = done.stderr.strip().splitlines()
    assert first.startswith(f"error: no cdclake target at '{tmp_path / 'nowhere'}'")
    assert rest == ["no pyspark"] and "Traceback" not in done.stderr


def test_locations_as_uris(lake: Any) -> None:
    """A ``file:`` URI or a trailing slash names the same target as its path."""
    lake.apply([event("c", after=row(1, "a"), lsn=10, ts_ms=T0)])
    expected = target_status(str(lake.root), now=at(T0)).to_json()
    assert expected["tables"][0]["rows"] == 1
    for location in (f"file:{lake.root}", f"file://{lake.root}", f"{lake.root}/"):
        assert target_status(location, now=at(T0)).to_json() == expected, location
