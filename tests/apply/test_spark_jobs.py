"""How many Spark jobs a batch runs (issue 13): counted with the status tracker on a tiny input.

The counts are the plan's, not the data's: the same jobs run at 10^5 events (bench/README.md,
"Issue 13, step 1").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jobs import count_jobs
from pyspark.sql import SparkSession

from cdclake import formats
from cdclake.apply.batch import apply_changes
from cdclake.config import ApplyConfig
from cdclake.formats.base import detection_type
from cdclake.run.runner import read_changes, run_batch

SEEDS = Path(__file__).resolve().parent.parent / "data" / "seeds"


def _line(seed_line: int, key: int, lsn: int) -> str:
    """A line of the PostgreSQL seed, for another key at another position."""
    record = json.loads((SEEDS / "002_postgres.jsonl").read_text().splitlines()[seed_line])
    record["key"]["payload"]["id"] = str(key)
    payload = record["value"]["payload"]
    for image in ("before", "after"):
        if payload.get(image):
            payload[image]["id"] = key
    payload["source"]["lsn"] = lsn
    return json.dumps(record)


def test_detection_reads_every_formats_fields_in_one_struct(spark: SparkSession) -> None:
    fields = detection_type(formats.all_formats())
    assert fields.simpleString() == (
        "struct<payload:struct<op:string,status:string,ddl:string,databaseName:string,"
        "__op:string,__deleted:string,before:string,after:string,source:string,"
        "timestamp:string>,op:string,status:string,ddl:string,databaseName:string,"
        "schema:struct<name:string>,__op:string,__deleted:string,before:string,after:string,"
        "source:string,isDdl:string,database:string,table:string,TYPE:string>"
    )


def test_auto_adds_no_job_to_decide_the_format(spark: SparkSession, tmp_path: Path) -> None:
    """Before: ``auto`` ran 15 jobs against 7 (a count to materialize the envelopes, and the
    detection re-serialized every value), then up to one more per format branch (the cached
    tagged records, read once per branch). An input of one format now takes two jobs more than
    that format given: the light parse that finds the format, a one-row aggregate (its partial
    and its final stage)."""
    path = str(SEEDS / "002_postgres.jsonl")

    def decoded(fmt: str) -> Callable[[], list[Any]]:
        return lambda: read_changes(spark, [path], fmt).select("table", "op", "after").collect()

    given, rows_given = count_jobs(spark, "i13-given", decoded("debezium"))
    auto, rows_auto = count_jobs(spark, "i13-auto", decoded("auto"))

    assert sorted(map(str, rows_auto)) == sorted(map(str, rows_given))
    assert auto == given + 2


def test_initial_load_counts_no_rows_in_extra_jobs(spark: SparkSession, tmp_path: Path) -> None:
    """Before: 34 jobs for a single-table batch into an empty target (a count of the source, a
    count of the inserts through a join with the tombstones just written, a count of the new
    table), then 22 (with a separate progress table), 19 once progress became a row of
    ``_cdc_sources``, 17 since the counts come from the creating commits' metrics, 16 since the
    line numbers' split offsets travel in the plan rather than in a broadcast, 15 since a small
    table's batch stays in one partition, where the latest change per key needs no shuffle."""
    inserts, delete = 0, 5  # lines of the seed
    path = tmp_path / "in.jsonl"
    path.write_text(
        "\n".join([_line(inserts, 1, 100), _line(inserts, 2, 101), _line(delete, 1, 102)])
    )
    target = str(tmp_path / "lake")

    jobs, result = count_jobs(
        spark, "i13-apply", lambda: apply_changes(read_changes(spark, [str(path)]), target)
    )

    (table,) = result.tables.values()
    stored = spark.read.format("delta").load(str(tmp_path / "lake" / table.table)).count()
    assert (table.inserted, table.ignored, table.rows_now, stored) == (1, 1, 1, 1)
    tombstones = spark.read.format("delta").load(
        str(tmp_path / "lake" / "_cdc_tombstones" / table.table)
    )
    assert [r["id"] for r in tombstones.collect()] == [1]
    assert jobs <= 15


def test_initial_load_counts_without_commit_metrics(spark: SparkSession, tmp_path: Path) -> None:
    """With Delta's commit metrics turned off the counts come from one aggregate instead, and
    say the same."""
    path = tmp_path / "in.jsonl"
    path.write_text(
        "\n".join([_line(0, 1, 100), _line(0, 2, 101), _line(0, 3, 102), _line(5, 1, 103)])
    )
    target = str(tmp_path / "lake")
    spark.conf.set("spark.databricks.delta.history.metricsEnabled", "false")
    try:
        result = apply_changes(read_changes(spark, [str(path)]), target)
    finally:
        spark.conf.unset("spark.databricks.delta.history.metricsEnabled")

    (table,) = result.tables.values()
    stored = spark.read.format("delta").load(str(tmp_path / "lake" / table.table)).count()
    assert (table.changes, table.inserted, table.ignored, table.rows_now, stored) == (4, 2, 1, 2, 2)


def _two_batches(spark: SparkSession, tmp_path: Path, second: list[str]) -> tuple[int, Any]:
    """An initial load of keys 1 and 2, then ``second`` into the existing table: its jobs and
    its result."""
    tmp_path.mkdir(exist_ok=True)
    first = tmp_path / "first.jsonl"
    first.write_text("\n".join([_line(0, 1, 100), _line(0, 2, 101)]))
    target = str(tmp_path / "lake")
    apply_changes(read_changes(spark, [str(first)]), target)
    path = tmp_path / "second.jsonl"
    path.write_text("\n".join(second))
    return count_jobs(
        spark,
        f"i13-merge-{tmp_path.parent.name}-{tmp_path.name}",
        lambda: apply_changes(read_changes(spark, [str(path)]), target),
    )


def test_merge_reads_its_source_rows_from_its_commit(spark: SparkSession, tmp_path: Path) -> None:
    """A batch into an existing table takes the MERGE's source rows (for the changes it
    ignored) from the metrics of the commit it just made, and caches the latest change per key
    only when the tombstones' write reads it too. Before: 28 jobs for the inserts, 30 for
    the delete."""
    delete = 5  # a line of the seed
    replay = _line(0, 2, 101)  # already applied: ignored
    jobs, result = _two_batches(spark, tmp_path, [replay, _line(0, 3, 200), _line(0, 4, 201)])
    (table,) = result.tables.values()
    assert (table.inserted, table.updated, table.deleted, table.ignored) == (2, 0, 0, 1)
    assert table.rows_now == 4
    assert jobs <= 25

    jobs, result = _two_batches(spark, tmp_path / "d", [replay, _line(delete, 1, 201)])
    (table,) = result.tables.values()
    assert (table.inserted, table.updated, table.deleted, table.ignored) == (0, 0, 1, 1)
    assert table.rows_now == 1
    assert jobs <= 28


def test_update_with_before_image_writes_no_tombstones(spark: SparkSession, tmp_path: Path) -> None:
    """An update with a before image (PostgreSQL's ``REPLICA IDENTITY FULL``) that keeps its
    key deletes nothing: one look at the batch tells, and no tombstones are written. Before:
    a MERGE into the tombstones that found none, 30 jobs for this batch."""
    update = 1  # a line of the seed, with a before image
    jobs, result = _two_batches(spark, tmp_path, [_line(update, 1, 201), _line(0, 3, 202)])
    (table,) = result.tables.values()
    assert (table.inserted, table.updated, table.deleted, table.ignored) == (1, 1, 0, 0)
    assert not (tmp_path / "lake" / "_cdc_tombstones" / table.table).exists()
    assert jobs <= 26


def test_merge_counts_without_commit_metrics(spark: SparkSession, tmp_path: Path) -> None:
    """With Delta's commit metrics turned off, one count of the source says the same."""
    spark.conf.set("spark.databricks.delta.history.metricsEnabled", "false")
    try:
        _, result = _two_batches(spark, tmp_path, [_line(0, 2, 101), _line(0, 3, 200)])
    finally:
        spark.conf.unset("spark.databricks.delta.history.metricsEnabled")
    (table,) = result.tables.values()
    assert (table.inserted, table.updated, table.ignored, table.rows_now) == (1, 0, 1, 3)


def test_cli_batch_counts_messages_with_the_line_numbers(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The CLI's batch reports its messages (blank lines are not messages) from the aggregate
    that numbers the lines: no cache of the raw records and no count of its own, so it runs the
    library path's jobs. Before: 21, then 19 with the line offsets in the plan, then 16."""
    path = tmp_path / "in.jsonl"
    lines = [_line(0, 1, 100), "", _line(0, 2, 101), "   ", _line(5, 1, 102), ""]
    path.write_text("\n".join(lines))
    config = ApplyConfig(inputs=(str(path),), target=str(tmp_path / "lake"))

    jobs, result = count_jobs(spark, "i13-cli", lambda: run_batch(spark, config))

    assert result.messages == 3
    assert result.messages == result.changes + result.control + result.quarantined
    (table,) = result.tables.values()
    assert (table.inserted, table.ignored, table.rows_now) == (1, 1, 1)
    assert jobs <= 15


def test_a_history_batch_computes_its_keys_and_new_versions_once(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A batch into an existing history table (SCD type 2): the keys it touches are computed
    once and sent to the joins that read them, the rebuilt versions once for the MERGE's
    source. Before: 59 jobs (bench/README.md, "Issue 36, step 5"). The batch that makes the
    table reads no history log (there is none yet): 27 jobs before (step 34)."""
    first = tmp_path / "first.jsonl"
    first.write_text("\n".join([_line(0, 1, 100), _line(0, 2, 101)]))
    target = str(tmp_path / "lake")
    made, _ = count_jobs(
        spark,
        "i36-history-new",
        lambda: apply_changes(read_changes(spark, [str(first)]), target, stored_as_scd_type=2),
    )
    assert made <= 24  # 21 measured
    second = tmp_path / "second.jsonl"
    replay = _line(0, 2, 101)  # already in the history log: ignored
    second.write_text("\n".join([replay, _line(0, 3, 200), _line(5, 1, 201)]))

    jobs, result = count_jobs(
        spark,
        "i36-history",
        lambda: apply_changes(read_changes(spark, [str(second)]), target, stored_as_scd_type=2),
    )

    (table,) = result.tables.values()
    history = spark.read.format("delta").load(str(tmp_path / "lake" / table.table))
    versions = sorted((r["id"], r["__END_AT"] is None) for r in history.collect())
    assert versions == [(1, False), (2, True), (3, True)]  # key 1 deleted: its version closed
    assert table.ignored == 1
    assert jobs <= 50
