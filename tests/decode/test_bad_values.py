"""A value that does not fit its column in a table that already exists quarantines its message
only; the rest of the batch lands (issue 11: one such message used to end the whole run with
``INVALID_VARIANT_CAST``)."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest
from builders import msgs

from cdclake import formats

GOOD = [{"id": 1, "name": "a", "qty": 10}, {"id": 2, "name": "b", "qty": 20}]
MORE = [{"id": 3, "name": "c", "qty": 30}, {"id": 4, "name": "d", "qty": 40}]
BAD = {"id": "not-a-number", "name": "x", "qty": 1}


def _reconciles(r: Any) -> None:
    assert r.messages == r.applied + r.ignored + r.control + r.quarantined


def _first_batch(lake: Any, fmt: str) -> list[str]:
    if fmt == "debezium":  # typed by the schema of the first messages: id INT
        return [msgs.debezium(i, row, schema=msgs.DBZ_FIELDS) for i, row in enumerate(GOOD, 1)]
    lines = [msgs.BUILDERS[fmt](i, row) for i, row in enumerate(GOOD, 1)]
    return [msgs.ckafka_create(), *lines] if fmt == "ckafka" else lines


@pytest.mark.parametrize("fmt", formats.names())
def test_bad_typed_value_into_an_existing_table(lake: Any, fmt: str) -> None:
    lake.apply(_first_batch(lake, fmt), format=fmt)
    build = msgs.BUILDERS[fmt]
    lines = [build(10, MORE[0]), build(11, BAD), build(12, MORE[1])]
    r = lake.apply(lines, format=fmt)
    table = msgs.TABLES[fmt]
    assert lake.rows(table, "id", "name", "qty") == [
        (1, "a", 10),
        (2, "b", 20),
        (3, "c", 30),
        (4, "d", 40),
    ]
    assert r.quarantined == 1 and r.applied == 2
    _reconciles(r)
    [(line, reason)] = lake.quarantine()
    assert line == 2
    assert reason.startswith("column id: value 'not-a-number' does not fit ")
    assert reason.split(" does not fit ")[1].split()[0] in ("int", "int(11)", "bigint", "LONG")
    assert lake.quarantined_raw() == {2: lines[1]}  # read again: the batch's cache had none


@pytest.mark.parametrize("fmt", ["debezium", "canal", "dataworks"])
def test_a_message_whose_schema_contradicts_the_table(lake: Any, fmt: str) -> None:
    """The message's own schema says ``id`` is text: its values are cast to the table's type,
    and one that does not fit quarantines that message only."""
    lake.apply(_first_batch(lake, fmt), format=fmt)
    texts = {
        "debezium": lambda n, row: msgs.debezium(
            n, row, schema=[{**msgs.DBZ_FIELDS[0], "type": "string"}, *msgs.DBZ_FIELDS[1:]]
        ),
        "canal": lambda n, row: msgs.canal(n, row, mysql={**msgs.MYSQL, "id": "varchar(10)"}),
        "dataworks": lambda n, row: msgs.dataworks(
            n, row, columns={**msgs.DW_TYPES, "id": "STRING"}
        ),
    }[fmt]
    build = msgs.BUILDERS[fmt]
    r = lake.apply(
        [build(10, MORE[0]), texts(11, BAD), texts(12, {**MORE[1], "id": "4"})], format=fmt
    )
    assert lake.rows(msgs.TABLES[fmt], "id", "name", "qty")[2:] == [(3, "c", 30), (4, "d", 40)]
    _reconciles(r)
    [(line, reason)] = lake.quarantine()
    assert line == 2
    assert reason.startswith("column id: value 'not-a-number' does not fit ")
    assert "the table's type" in reason


def test_long_values_are_cut_in_the_reason(lake: Any) -> None:
    lake.apply(_first_batch(lake, "canal"), format="canal")
    r = lake.apply([msgs.canal(10, {**BAD, "id": "9" * 5000})], format="canal")
    assert r.quarantined == 1
    [(_, reason)] = lake.quarantine()
    assert reason == f"column id: value '{'9' * 80}' does not fit int(11)"


def test_keyless_table_gets_the_good_rows_only(lake: Any) -> None:
    """No record key and no --primary-key: the table keeps whole rows; the same typing holds."""
    first = [msgs.debezium(i, r, schema=msgs.DBZ_FIELDS, key=None) for i, r in enumerate(GOOD, 1)]
    lake.apply(first)
    r = lake.apply(
        [
            msgs.debezium(10, MORE[0], key=None),
            msgs.debezium(11, {**BAD, "id": 7, "qty": "lots"}, key=None),
            msgs.debezium(12, MORE[1], key=None),
        ]
    )
    assert lake.rows(msgs.TABLES["debezium"], "id", "name", "qty")[2:] == [
        (3, "c", 30),
        (4, "d", 40),
    ]
    _reconciles(r)
    [(line, reason)] = lake.quarantine()
    assert (line, reason.split(" does not fit ")[0]) == (2, "column qty: value 'lots'")


def test_a_column_added_by_ddl_types_the_rows_after_it(lake: Any) -> None:
    """After ALTER TABLE ADD COLUMN in the same batch, a value that does not fit the new
    column's type quarantines its message only."""
    lake.apply(_first_batch(lake, "canal"), format="canal")
    alter = json.loads(msgs.ckafka_create())
    alter.update(sql="ALTER TABLE `items` ADD COLUMN `born` date", type="ALTER")
    mysql = {**msgs.MYSQL, "born": "date"}
    r = lake.apply(
        [
            json.dumps({**alter, "es": 1_700_000_000_005}),
            msgs.canal(10, {**MORE[0], "born": "2020-01-02"}, mysql=mysql),
            msgs.canal(11, {**MORE[1], "born": "2020-02-30"}, mysql=mysql),
        ],
        format="canal",
    )
    _reconciles(r)
    [(line, reason)] = lake.quarantine()
    assert (line, reason) == (3, "column born: value '2020-02-30' does not fit date")
    assert lake.quarantined_raw() == {
        3: msgs.canal(11, {**MORE[1], "born": "2020-02-30"}, mysql=mysql)
    }
    assert lake.rows(msgs.TABLES["canal"], "id", "born")[2:] == [(3, date(2020, 1, 2))]


def test_every_bad_message_is_quarantined_whole_whichever_step_rejects_it(
    lake: Any, spark: Any
) -> None:
    """The decode's cache keeps a message's text only where its envelope failed (not valid
    JSON); a change that fails its typing (a value, a key column the row lacks) is quarantined
    with its message read again by lineage, through the runner and through the Python API."""
    from cdclake.apply.batch import apply_changes
    from cdclake.apply.tables import Target
    from cdclake.decode import decode
    from cdclake.sources import raw_from_lines

    lake.apply(_first_batch(lake, "debezium"))
    build = msgs.BUILDERS["debezium"]
    lines = [
        build(10, MORE[0]),
        '{"payload": {"op": "c", "after": ',
        build(11, BAD),
        msgs.debezium(12, MORE[1], key={"nope": 4}),
        build(13, {"id": 5, "name": "e", "qty": "many"}),
    ]
    reasons = {
        2: "not valid JSON",
        3: "column id: value 'not-a-number'",
        4: "key column(s) nope not in the row",
        5: "column qty: value 'many'",
    }
    r = lake.apply(lines)
    assert (r.quarantined, r.applied) == (4, 1)
    _reconciles(r)
    assert {n: why[: len(reasons[n])] for n, why in lake.quarantine()} == reasons
    assert lake.quarantined_raw() == {n: lines[n - 1] for n in reasons}

    # the Python API, into the same lake (its lines have a source of their own)
    target = Target(str(lake.root))
    changes = decode(
        raw_from_lines(spark, lines, "api.jsonl"),
        "debezium",
        table_schemas=lambda t: target.schema(spark, t),
    )
    texts = {c["lineage"]["offset"]: (c["error"], c["raw"]) for c in changes.collect()}
    assert {n: raw for n, (_, raw) in texts.items() if raw is not None} == {2: lines[1]}
    assert {n for n, (error, _) in texts.items() if error} == set(reasons)
    apply_changes(changes, str(lake.root))
    quarantine = spark.read.format("delta").load(str(lake.root / "_cdc_quarantine"))
    assert {
        q["lineage"]["offset"]: q["raw"]
        for q in quarantine.filter("lineage.source = 'api.jsonl'").collect()
    } == {n: lines[n - 1] for n in reasons}
