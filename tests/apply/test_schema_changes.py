"""DDL in the stream (canal form): tables created, evolved and recorded in _cdc_ddl."""

from __future__ import annotations

from builders.msgs import USERS_V1
from builders.msgs import canal_ddl as ddl
from builders.msgs import canal_rows as row
from pyspark.sql import functions as F

V1 = USERS_V1
V2 = {**V1, "score": "decimal(5,2)"}


def test_create_table_then_rows_then_add_column(lake):
    r = lake.apply(
        [
            ddl(
                "CREATE TABLE `users` (`id` int NOT NULL, `name` varchar(20), PRIMARY KEY (`id`))",
                "CREATE",
                1_700_000_000_000,
            ),
            row("INSERT", 1_700_000_001_000, [{"id": "1", "name": "ann"}], V1),
            ddl(
                "ALTER TABLE `users` ADD COLUMN `score` decimal(5,2) NULL",
                "ALTER",
                1_700_000_002_000,
            ),
            row("INSERT", 1_700_000_003_000, [{"id": "2", "name": "bob", "score": "9.50"}], V2),
            ddl("CREATE INDEX ix_name ON users (name)", "CINDEX", 1_700_000_004_000),
            ddl("ALTER TABLE users ADD COLUMN (", "ALTER", 1_700_000_005_000),
        ],
        format="canal",
    )
    from decimal import Decimal

    assert lake.rows("shop.users") == [(1, "ann", None), (2, "bob", Decimal("9.50"))]
    t = r.tables["shop.users"]
    # the key came from the CREATE TABLE: canal's pkNames was null
    assert t.key_columns == ("id",) and t.key_source == "ddl"
    assert dict(lake.df("shop.users").dtypes)["score"] == "decimal(5,2)"
    log = lake.spark.read.format("delta").load(str(lake.root / "_cdc_ddl"))
    outcomes = sorted((x["action"], x["outcome"]) for x in log.collect())
    assert outcomes == [
        ("add column", "applied"),
        ("create index", "skipped"),
        ("create table", "applied"),
        ("parse", "failed"),
    ]
    assert r.control_by_op == {"ddl": 3}  # the unparsable one is quarantined, not control
    assert r.quarantined == 1
    [(line, reason)] = lake.quarantine()
    assert line == 6 and reason.startswith("DDL not parsed")


def test_a_table_created_by_ddl_takes_its_first_rows_by_an_append_in_its_own_types(lake):
    """Rows of a table a CREATE TABLE made (in an earlier batch here) are appended, not merged,
    into the columns the statement declared; later changes merge."""
    from delta.tables import DeltaTable

    create = "CREATE TABLE `users` (`id` int NOT NULL, `name` varchar(20), PRIMARY KEY (`id`))"
    lake.apply([ddl(create, "CREATE", 1_700_000_000_000)], format="canal")
    first = [{"id": "1", "name": "ann"}, {"id": "2", "name": "bob"}]
    r = lake.apply([row("INSERT", 1_700_000_001_000, first, V1)], format="canal")
    assert r.tables["shop.users"].inserted == 2
    lake.apply(
        [row("UPDATE", 1_700_000_002_000, [{"id": "2", "name": "bo"}], V1)],
        format="canal",
    )
    assert lake.rows("shop.users") == [(1, "ann"), (2, "bo")]
    assert dict(lake.df("shop.users").dtypes)["id"] == "int"
    table = DeltaTable.forPath(lake.spark, str(lake.root / "shop.users"))
    operations = [r["operation"] for r in table.history().orderBy("version").collect()]
    assert operations[0] == "CREATE TABLE" and operations[-2:] == ["WRITE", "MERGE"]


def test_include_exclude_and_table_mapping(lake):
    lines = [
        row("INSERT", 1_700_000_001_000, [{"id": "1", "name": "a"}], V1, table="users"),
        row("INSERT", 1_700_000_001_000, [{"id": "1", "name": "a"}], V1, table="audit_log"),
    ]
    r = lake.apply(
        lines,
        format="canal",
        keys={"shop.users": ("id",)},
        exclude=("*.audit_*",),
        table_map={"shop.users": "people"},
    )
    assert set(r.tables) == {"shop.users"}
    assert r.excluded == 1
    assert sorted(p.name for p in lake.root.iterdir() if not p.name.startswith("_")) == ["people"]


def test_progress_records_last_event_per_source(lake):
    lake.apply(
        [row("INSERT", 1_700_000_001_000, [{"id": "1", "name": "a"}], V1)],
        format="canal",
        source="a.jsonl",
    )
    lake.apply(
        [row("INSERT", 1_700_000_009_000, [{"id": "2", "name": "b"}], V1)],
        format="canal",
        source="a.jsonl",
    )
    inputs = (
        lake.spark.read.format("delta")
        .load(str(lake.root / "_cdc_sources"))
        .filter("kind = 'input'")
        .groupBy("source_id")
        .agg(F.sum("messages").alias("records"), F.max("last_message_ts").alias("last"))
        .collect()
    )
    assert [(p["source_id"], p["records"], str(p["last"])) for p in inputs] == [
        ("a.jsonl", 2, "2023-11-14 22:13:29")
    ]
