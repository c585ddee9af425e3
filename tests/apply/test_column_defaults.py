"""ALTER TABLE ... ADD COLUMN ... DEFAULT: the database gives the rows already there the default
and sends no event for them; the lake must end up the same."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from builders.dbz import INT32, INT64, STRING, event, fields
from builders.msgs import USERS_V1 as V1
from builders.msgs import canal_ddl as ddl
from builders.msgs import canal_rows as row

T = "shop.public.items"
OLD = fields(id=INT32, name=STRING, qty=INT64)
COLOR = {"type": "string", "optional": True, "default": "none"}
SINCE = {"type": "int32", "optional": True, "name": "io.debezium.time.Date", "default": 19000}
NEW = fields(id=INT32, name=STRING, qty=INT64, color=COLOR, since=SINCE)
DAY_19000 = dt.date(2022, 1, 8)  # io.debezium.time.Date counts days since 1970-01-01


def test_rows_already_in_the_table_get_the_default_of_an_added_column(lake):
    lake.apply(
        [
            event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10, row_fields=OLD),
            event("c", after={"id": 2, "name": "b", "qty": 2}, lsn=20, row_fields=OLD),
        ]
    )
    lake.apply(
        [
            event(
                "c",
                after={"id": 3, "name": "c", "qty": 3, "color": "red", "since": 19500},
                lsn=40,
                row_fields=NEW,
            ),
            # set to NULL on purpose after the ALTER: stays NULL
            event(
                "u",
                after={"id": 2, "name": "b", "qty": 2, "color": None, "since": None},
                lsn=50,
                row_fields=NEW,
            ),
        ]
    )
    assert lake.rows(T) == [
        (1, "a", 1, "none", DAY_19000),
        (2, "b", 2, None, None),
        (3, "c", 3, "red", dt.date(2023, 5, 23)),
    ]


def test_changes_from_before_the_alter_in_the_same_batch_get_the_default(lake):
    lake.apply(
        [
            event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10, row_fields=OLD),
            event("u", after={"id": 1, "name": "a2", "qty": 1}, lsn=20, row_fields=OLD),
            event(
                "c",
                after={"id": 2, "name": "b", "qty": 2, "color": "red", "since": None},
                lsn=40,
                row_fields=NEW,
            ),
        ]
    )
    assert lake.rows(T) == [(1, "a2", 1, "none", DAY_19000), (2, "b", 2, "red", None)]


def test_a_crash_between_adding_the_column_and_filling_it_is_finished_by_the_replay(
    lake, monkeypatch
):
    from cdclake.apply import tables

    lake.apply([event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10, row_fields=OLD)])
    batch = [
        event(
            "c",
            after={"id": 2, "name": "b", "qty": 2, "color": "red", "since": 1},
            lsn=40,
            row_fields=NEW,
        )
    ]
    real = tables.finish_backfill
    calls = []

    def crash_once(spark, path, table):
        calls.append(path)
        if len(calls) == 1:
            raise RuntimeError("killed")
        real(spark, path, table)

    monkeypatch.setattr(tables, "finish_backfill", crash_once)
    with pytest.raises(RuntimeError, match="killed"):
        lake.apply(batch)
    assert "color" in lake.df(T).columns  # the column was added, the rows not filled yet
    tables._PROPS.clear()  # a new process after the crash
    lake.apply(batch)
    assert lake.rows(T) == [
        (1, "a", 1, "none", DAY_19000),
        (2, "b", 2, "red", dt.date(1970, 1, 2)),
    ]
    props = tables.table_properties(lake.spark, str(lake.root / T))
    assert tables.BACKFILL_PROPERTY not in props


def test_a_column_without_default_leaves_earlier_rows_null(lake):
    lake.apply([event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10, row_fields=OLD)])
    plain = fields(id=INT32, name=STRING, qty=INT64, color=STRING)
    lake.apply(
        [
            event(
                "c",
                after={"id": 2, "name": "b", "qty": 2, "color": "red"},
                lsn=20,
                row_fields=plain,
            )
        ]
    )
    assert lake.rows(T) == [(1, "a", 1, None), (2, "b", 2, "red")]


def test_ddl_add_column_with_a_constant_default_in_canal(lake):
    V2 = {**V1, "score": "decimal(5,2)"}
    lake.apply(
        [
            ddl(
                "CREATE TABLE `users` (`id` int NOT NULL, `name` varchar(20), PRIMARY KEY (`id`))",
                "CREATE",
                1_700_000_000_000,
            ),
            row("INSERT", 1_700_000_001_000, [{"id": "1", "name": "ann"}], V1),
        ],
        format="canal",
    )
    lake.apply(
        [
            row("INSERT", 1_700_000_002_000, [{"id": "2", "name": "bob"}], V1),
            ddl(
                "ALTER TABLE `users` ADD COLUMN `score` decimal(5,2) NOT NULL DEFAULT '1.50'",
                "ALTER",
                1_700_000_003_000,
            ),
            ddl(
                "ALTER TABLE `users` ADD COLUMN `seen` datetime DEFAULT CURRENT_TIMESTAMP",
                "ALTER",
                1_700_000_004_000,
            ),
            row("INSERT", 1_700_000_005_000, [{"id": "3", "name": "cy", "score": "7.25"}], V2),
        ],
        format="canal",
    )
    assert lake.rows("shop.users", "id", "name", "score", "seen") == [
        (1, "ann", Decimal("1.50"), None),  # in the table before the ALTER
        (2, "bob", Decimal("1.50"), None),  # in the same batch, before the ALTER
        (3, "cy", Decimal("7.25"), None),
    ]
    log = lake.spark.read.format("delta").load(str(lake.root / "_cdc_ddl"))
    reasons = sorted(x["reason"] for x in log.filter("action = 'add column'").collect())
    assert reasons == [
        "score decimal(5,2); earlier rows '1.50'",
        "seen datetime; earlier rows null (default CURRENT_TIMESTAMP is not a constant)",
    ]
