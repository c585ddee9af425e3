"""SCD1 semantics, read back from Delta: replays, late events, deletes, PK changes, truncates."""

from __future__ import annotations

import json

from builders.dbz import INT32, INT64, STRING, event, fields, tombstone

T = "shop.public.items"


def test_last_change_per_key_wins_within_a_batch(lake):
    r = lake.apply(
        [
            event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10),
            event("u", after={"id": 1, "name": "b", "qty": 2}, lsn=20),
            event("c", after={"id": 2, "name": "x", "qty": 5}, lsn=15),
        ]
    )
    assert lake.rows(T) == [(1, "b", 2), (2, "x", 5)]
    t = r.tables[T]
    assert (t.changes, t.inserted, t.updated, t.deleted, t.ignored) == (3, 2, 0, 0, 0)
    assert t.key_columns == ("id",) and t.key_source == "record-key"


def test_order_comes_from_the_position_not_the_input_order(lake):
    lake.apply(
        [
            event("u", after={"id": 1, "name": "newest", "qty": 3}, lsn=300),
            event("c", after={"id": 1, "name": "oldest", "qty": 1}, lsn=100),
            event("u", after={"id": 1, "name": "middle", "qty": 2}, lsn=200),
        ]
    )
    assert lake.rows(T) == [(1, "newest", 3)]


def test_lsn_compares_as_a_number_not_as_text(lake):
    """Pins HUDI-6766: '9' > '10' as text would keep the older row."""
    lake.apply([event("c", after={"id": 1, "name": "old", "qty": 1}, lsn=9)])
    lake.apply([event("u", after={"id": 1, "name": "new", "qty": 2}, lsn=10)])
    assert lake.rows(T) == [(1, "new", 2)]


def test_replay_of_older_events_has_no_effect(lake):
    history = [
        event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10),
        event("u", after={"id": 1, "name": "b", "qty": 2}, lsn=20),
        event("c", after={"id": 2, "name": "x", "qty": 5}, lsn=30),
    ]
    lake.apply(history)
    lake.apply([event("u", after={"id": 1, "name": "c", "qty": 3}, lsn=40)])
    again = lake.apply(history)  # an at-least-once producer re-sends the range
    assert lake.rows(T) == [(1, "c", 3), (2, "x", 5)]
    t = again.tables[T]
    assert (t.inserted, t.updated, t.deleted, t.ignored) == (0, 0, 0, 2)


def test_same_event_twice_in_one_batch_is_one_event(lake):
    e = event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10)
    r = lake.apply([e, e])
    assert lake.rows(T) == [(1, "a", 1)]
    assert r.tables[T].inserted == 1


def test_delete_then_late_update_stays_deleted(lake):
    lake.apply(
        [
            event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10),
            event("d", before={"id": 1, "name": "a", "qty": 1}, lsn=30),
            tombstone({"id": 1}),
        ]
    )
    assert lake.rows(T) == []
    late = lake.apply([event("u", after={"id": 1, "name": "late", "qty": 9}, lsn=20)])
    assert lake.rows(T) == []
    assert late.tables[T].ignored == 1
    tombs = lake.spark.read.format("delta").load(str(lake.root / "_cdc_tombstones" / T))
    assert [(r["id"], list(r["_cdc_position"])) for r in tombs.collect()] == [(1, [30])]


def test_delete_then_newer_insert_brings_the_row_back(lake):
    lake.apply(
        [
            event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10),
            event("d", before={"id": 1, "name": "a", "qty": 1}, lsn=20),
        ]
    )
    lake.apply([event("c", after={"id": 1, "name": "again", "qty": 2}, lsn=30)])
    assert lake.rows(T) == [(1, "again", 2)]


def test_tombstone_records_are_control_records(lake):
    r = lake.apply(
        [
            event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10),
            event("d", before={"id": 1, "name": "a", "qty": 1}, lsn=20),
            tombstone({"id": 1}),
        ]
    )
    assert r.control_by_op == {"tombstone": 1}
    assert r.messages == 3 and r.changes == 2 and r.quarantined == 0


def test_primary_key_change_postgres_headers(lake):
    """PostgreSQL: a delete with __debezium.newkey, then a create with __debezium.oldkey."""
    lake.apply([event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10)])
    lake.apply(
        [
            event(
                "d",
                before={"id": 1, "name": "a", "qty": 1},
                lsn=20,
                headers={"__debezium.newkey": {"id": 2}},
            ),
            event(
                "c",
                after={"id": 2, "name": "a", "qty": 1},
                lsn=20,
                headers={"__debezium.oldkey": {"id": 1}},
            ),
        ]
    )
    assert lake.rows(T) == [(2, "a", 1)]


def _sqlserver(op, serial, before=None, after=None, change="00000030:00000100:0002"):
    source = {
        "connector": "sqlserver",
        "db": "testDB",
        "schema": "dbo",
        "table": "t",
        "ts_ms": 1,
        "change_lsn": change,
        "commit_lsn": "00000030:00000100:0005",
        "event_serial_no": serial,
    }
    key = {"id": (after or before)["id"]}
    return json.dumps(
        {"key": key, "value": {"before": before, "after": after, "source": source, "op": op}}
    )


def test_primary_key_change_sqlserver_serial_numbers(lake):
    """SQL Server: delete (serial 1) + create (serial 2) with the same LSNs."""
    lake.apply([_sqlserver("c", 1, after={"id": 1, "v": "x"}, change="00000030:00000090:0002")])
    lake.apply(
        [
            _sqlserver("d", 1, before={"id": 1, "v": "x"}),
            _sqlserver("c", 2, after={"id": 7, "v": "x"}),
        ]
    )
    assert lake.rows("testDB.dbo.t") == [(7, "x")]


def test_update_with_changed_key_deletes_the_old_key(lake):
    lake.apply([event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10)])
    lake.apply(
        [
            event(
                "u",
                before={"id": 1, "name": "a", "qty": 1},
                after={"id": 5, "name": "a", "qty": 1},
                lsn=20,
            )
        ]
    )
    assert lake.rows(T) == [(5, "a", 1)]
    # the old key's tombstone holds back an older change that arrives late
    late = lake.apply([event("c", after={"id": 1, "name": "late", "qty": 2}, lsn=15)])
    assert lake.rows(T) == [(5, "a", 1)]
    assert late.tables[T].ignored == 1


def test_truncate_mid_batch_keeps_later_events(lake):
    lake.apply(
        [
            event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10),
            event("c", after={"id": 2, "name": "b", "qty": 1}, lsn=11),
        ]
    )
    r = lake.apply(
        [
            event("c", after={"id": 3, "name": "c", "qty": 1}, lsn=20),
            event("t", lsn=30, key=None),
            event("c", after={"id": 4, "name": "d", "qty": 1}, lsn=40),
        ]
    )
    assert lake.rows(T) == [(4, "d", 1)]
    assert r.tables[T].truncated == 2
    # an event from before the truncate, delivered late, stays out
    lake.apply([event("u", after={"id": 1, "name": "late", "qty": 2}, lsn=25)])
    assert lake.rows(T) == [(4, "d", 1)]


TOAST = "__debezium_unavailable_value"
DOC_FIELDS = fields(id=INT32, body=STRING, qty=INT64)


def test_toast_placeholder_never_overwrites_the_stored_value(lake):
    big = "x" * 5000
    lake.apply([event("c", after={"id": 1, "body": big, "qty": 1}, lsn=10, row_fields=DOC_FIELDS)])
    lake.apply(
        [event("u", after={"id": 1, "body": TOAST, "qty": 2}, lsn=20, row_fields=DOC_FIELDS)]
    )
    assert lake.rows(T) == [(1, big, 2)]


def test_toast_placeholder_in_the_same_batch_as_the_insert(lake):
    lake.apply(
        [
            event("c", after={"id": 1, "body": "full", "qty": 1}, lsn=10, row_fields=DOC_FIELDS),
            event("u", after={"id": 1, "body": TOAST, "qty": 2}, lsn=20, row_fields=DOC_FIELDS),
        ]
    )
    assert lake.rows(T) == [(1, "full", 2)]


def test_new_column_is_added_and_earlier_rows_are_null(lake):
    lake.apply([event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10)])
    wider = fields(id=INT32, name=STRING, qty=INT64, color=STRING)
    lake.apply(
        [
            event(
                "c",
                after={"id": 2, "name": "b", "qty": 2, "color": "red"},
                lsn=20,
                row_fields=wider,
            )
        ]
    )
    assert lake.rows(T) == [(1, "a", 1, None), (2, "b", 2, "red")]


def test_primary_key_option_when_there_is_no_record_key(lake):
    lines = [
        event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10, key=None),
        event("u", after={"id": 1, "name": "b", "qty": 1}, lsn=20, key=None),
    ]
    r = lake.apply(lines, keys={T: ("id",)})
    assert lake.rows(T) == [(1, "b", 1)]
    assert r.tables[T].key_source == "config"


def test_keyless_table_keeps_its_live_rows_with_duplicates(lake):
    row = {"id": 1, "name": "dup", "qty": 1}
    snapshot = [event("r", after=row, lsn=5, key=None, snapshot=True) for _ in range(3)]
    lake.apply(snapshot)
    assert lake.rows(T) == [(1, "dup", 1)] * 3  # snapshot reads sharing one position all land
    lake.apply([event("d", before=row, lsn=10, key=None)])
    assert lake.rows(T) == [(1, "dup", 1)] * 2  # a delete removes one row equal to its before
    again = lake.apply([*snapshot, event("d", before=row, lsn=10, key=None)])
    assert lake.rows(T) == [(1, "dup", 1)] * 2  # re-delivered events have no effect
    assert again.tables[T].ignored == 4
    lake.apply([event("c", after=row, lsn=20, key=None)])
    assert lake.rows(T) == [(1, "dup", 1)] * 3


def test_schemaless_payloads_are_typed_by_inference(lake):
    lake.apply([event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10, schema=False)])
    df = lake.df(T)
    assert dict(df.dtypes)["id"] == "bigint" and dict(df.dtypes)["name"] == "string"
    assert lake.rows(T) == [(1, "a", 1)]


def test_toast_placeholder_without_schemas(lake):
    """Pins a conformance finding: schemaless payloads stored the placeholder as the value."""
    lake.apply([event("c", after={"id": 1, "name": "full", "qty": 1}, lsn=10, schema=False)])
    lake.apply([event("u", after={"id": 1, "name": TOAST, "qty": 2}, lsn=20, schema=False)])
    assert lake.rows(T) == [(1, "full", 2)]


def test_each_kind_of_bad_input_is_quarantined_with_its_reason(lake):
    good = event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10)
    unknown_op = good.replace('"op": "c"', '"op": "x"')
    misfit = event("c", after={"id": 2, "name": "b", "qty": "lots"}, lsn=11)
    keyless_delete = event("d", before=None, lsn=12, key=None, table="logs")
    r = lake.apply([good, "{not json", unknown_op, misfit, keyless_delete])
    assert lake.rows(T) == [(1, "a", 1)]
    assert lake.quarantine() == [
        (2, "not valid JSON"),
        (3, "unknown op 'x' (expected one of c, u, d, r, t, m)"),
        (4, "column qty: value 'lots' does not fit int64"),
        (
            5,
            "no key and no before image: cannot tell which row to delete "
            "(give --primary-key TABLE=COLS or capture full before images)",
        ),
    ]
    assert (r.messages, r.changes, r.control, r.quarantined) == (5, 1, 0, 4)


def test_initial_load_is_one_commit_and_later_batches_merge_nulls(lake):
    """The first batch of a keyed table creates it with its rows in one commit (create table as
    select, not a create and an append), with its key recorded and every column nullable, so a
    later change that sets a column to null merges."""
    from delta.tables import DeltaTable

    lake.apply(
        [
            event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10),
            event("c", after={"id": 2, "name": "b", "qty": 2}, lsn=11),
        ]
    )
    table = DeltaTable.forPath(lake.spark, str(lake.root / T))
    commits = [(r["version"], r["operation"]) for r in table.history().collect()]
    assert commits == [(0, "CREATE TABLE AS SELECT")]
    properties = table.detail().first()["properties"]
    assert properties["cdclake.keyColumns"] == "id"
    # what cdclake reads from the log on the driver (delta-rs) is what Spark's DESCRIBE says
    from cdclake.apply.tables import set_properties, table_properties

    set_properties(lake.spark, str(lake.root / T), {"delta.enableChangeDataFeed": "true"})
    properties = table.detail().first()["properties"]
    assert properties["delta.enableChangeDataFeed"] == "true"
    assert table_properties(lake.spark, str(lake.root / T)) == dict(properties)
    assert all(f.nullable for f in lake.df(T).schema.fields)
    lake.apply([event("u", after={"id": 1, "name": None, "qty": 3}, lsn=20)])
    assert lake.rows(T) == [(1, None, 3), (2, "b", 2)]


def test_a_table_with_no_rows_takes_its_next_rows_by_an_append_behind_its_tombstones(lake):
    """A table its deletes emptied holds no file: its next batch appends the live rows (no
    MERGE), and the tombstones of earlier batches still hold a late change back."""
    from delta.tables import DeltaTable

    lake.apply(
        [
            event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10),
            event("d", before={"id": 1, "name": "a", "qty": 1}, lsn=30),
        ]
    )
    assert lake.rows(T) == []
    r = lake.apply(
        [
            event("u", after={"id": 1, "name": "late", "qty": 9}, lsn=20),
            event("c", after={"id": 2, "name": "b", "qty": 2}, lsn=40),
        ]
    )
    assert lake.rows(T) == [(2, "b", 2)]
    t = r.tables[T]
    assert (t.inserted, t.updated, t.deleted, t.ignored, t.rows_now) == (1, 0, 0, 1, 1)
    history = DeltaTable.forPath(lake.spark, str(lake.root / T)).history(1).collect()
    assert history[0]["operation"] == "WRITE"
