"""``convert`` between every ordered pair of the four formats (issue 40, item 6).

One generated workload (inserts, updates, deletes, a key change, a column added mid-stream, three
tables, several changes of one key in one source second) is written natively in each format,
with that format's own positions: Debezium SQL Server LSNs (7 numbers), canal's ``es`` of one
second for several changes, CKafka binlog coordinates with its DDL in canal form, DataWorks
``sequenceId`` with update pairs. Each source is decoded once, encoded into the three other
formats with positions mapped (``EncodeOptions.epoch``), and every result is applied: the tables
must equal those that applying the source gives, which in turn equal a plain-Python replay of the
workload. Each format's workload and the three conversions into that format are applied in one
batch, each under the database of its source (``from_<source format>``): four applies in all.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import reduce
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdclake import formats, sources
from cdclake.decode import release
from cdclake.formats.encode import EncodeOptions
from cdclake.run import produce
from tests.conftest import Lake

FORMATS = tuple(formats.names())
PAIRS = [(s, t) for s in FORMATS for t in FORMATS if s != t]
Row = dict[str, Any]
COLUMNS: dict[str, dict[str, str]] = {  # table -> column -> "long" or "text", in column order
    "items": {"id": "long", "name": "text", "qty": "long"},
    "notes": {"id": "long", "body": "text"},
    "tags": {"k": "text", "v": "long"},
}
KEYS = {"items": "id", "notes": "id", "tags": "k"}
ADDED_AT = 14  # from this event on, notes has the column ``tag`` (after an ALTER TABLE)
BASE_S = 1_700_000_000  # source time of event 0, in seconds; three events share each second


@dataclass(frozen=True)
class Event:
    table: str
    op: str  # insert, update (the key may change), delete
    before: Row | None
    after: Row | None


def columns(table: str, index: int) -> dict[str, str]:
    added = {"tag": "text"} if table == "notes" and index >= ADDED_AT else {}
    return {**COLUMNS[table], **added}


def workload(seed: int = 42, tail: int = 18) -> list[Event]:
    """A fixed start (one key changed three times in its first second, a key change, a delete
    and re-insert), then ``tail`` random events that keep every image consistent."""
    live: dict[str, dict[Any, Row]] = {t: {} for t in COLUMNS}
    events: list[Event] = []

    def add(table: str, op: str, before: Row | None, after: Row | None) -> None:
        index = len(events)
        full = {c: None for c in columns(table, index)}
        before = None if before is None else {**full, **before}
        after = None if after is None else {**full, **after}
        if before is not None:
            del live[table][before[KEYS[table]]]
        if after is not None:
            live[table][after[KEYS[table]]] = after
        events.append(Event(table, op, before, after))

    add("items", "insert", None, {"id": 1, "name": "a", "qty": 1})
    add("items", "update", {"id": 1, "name": "a", "qty": 1}, {"id": 1, "name": "a2", "qty": 2})
    add("items", "update", {"id": 1, "name": "a2", "qty": 2}, {"id": 1, "name": "a3", "qty": 3})
    add("items", "insert", None, {"id": 2, "name": "b", "qty": 20})
    add("notes", "insert", None, {"id": 1, "body": "n1"})
    add("tags", "insert", None, {"k": "x", "v": 1})
    add("items", "update", live["items"][2], {"id": 20, "name": "b", "qty": 21})  # key change
    add("items", "delete", live["items"][1], None)
    add("items", "insert", None, {"id": 1, "name": "again", "qty": None})
    rng = random.Random(seed)
    while len(events) < 9 + tail:
        table = rng.choice(sorted(COLUMNS))
        _random_event(rng, table, live[table], len(events), add)
    return events


Add = Callable[[str, str, Row | None, Row | None], None]


def _random_event(
    rng: random.Random, table: str, rows: dict[Any, Row], index: int, add: Add
) -> None:
    key = KEYS[table]
    value: dict[str, Callable[[], Any]] = {
        "long": lambda: rng.randrange(1000),
        "text": lambda: rng.choice(["p", "q r", "é", ""]),
    }
    fresh = {c: value[kind]() for c, kind in columns(table, index).items() if c != key}
    new_key: Any = rng.randrange(100, 200) if key == "id" else f"k{rng.randrange(100)}"
    op = (
        rng.choice(["insert", "insert", "update", "update", "delete", "rekey"])
        if rows
        else "insert"
    )
    if op == "insert" or new_key in rows:
        if new_key not in rows:
            add(table, "insert", None, {key: new_key, **fresh})
        return
    old = rows[rng.choice(sorted(rows))]
    if op == "delete":
        add(table, "delete", old, None)
    else:
        add(table, "update", old, {**fresh, key: new_key if op == "rekey" else old[key]})


def replay(events: list[Event]) -> dict[str, list[Row]]:
    """The reference: the live rows after the events, per table."""
    live: dict[str, dict[Any, Row]] = {t: {} for t in COLUMNS}
    for e in events:
        key = KEYS[e.table]
        if e.before is not None:
            live[e.table].pop(e.before[key], None)
        if e.after is not None:
            live[e.table][e.after[key]] = e.after
    width = {t: columns(t, len(events)) for t in COLUMNS}
    return {
        t: _sorted([{c: r.get(c) for c in width[t]} for r in rows.values()])
        for t, rows in live.items()
    }


def _sorted(rows: list[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


# --- the workload in each format, with that format's own positions --------------------------


def _text(row: Row | None) -> Row | None:
    return None if row is None else {k: None if v is None else str(v) for k, v in row.items()}


def _ms(index: int) -> int:
    return (BASE_S + index // 3) * 1000


def debezium_lines(db: str, events: list[Event]) -> list[str]:
    """SQL Server events with schemas; a key change is a delete (serial 1) and a create
    (serial 2) at one LSN; a tombstone follows each delete."""
    out: list[str] = []
    for i, e in enumerate(events):
        key = KEYS[e.table]
        lsn = f"0000002b:{i + 1:08x}:0001"
        rekey = e.op == "update" and e.before and e.after and e.before[key] != e.after[key]
        parts = (
            [("d", e.before, None, 1), ("c", None, e.after, 2)]
            if rekey
            else [({"insert": "c", "update": "u", "delete": "d"}[e.op], e.before, e.after, 2)]
        )
        for op, before, after, serial in parts:
            source = {
                "version": "2.5.0.Final", "connector": "sqlserver", "name": "server1",
                "ts_ms": _ms(i), "snapshot": "false", "db": db, "schema": "dbo",
                "table": e.table, "change_lsn": lsn, "commit_lsn": lsn, "event_serial_no": serial,
            }  # fmt: skip
            payload = {"before": before, "after": after, "source": source, "op": op}
            value = {"schema": _dbz_schema(e.table, i), "payload": {**payload, "ts_ms": _ms(i)}}
            record_key = {key: (after or before or {})[key]}
            out.append(json.dumps({"key": record_key, "value": value}))
            if op == "d":
                out.append(json.dumps({"key": record_key, "value": None}))
    return out


def _dbz_schema(table: str, index: int) -> dict[str, Any]:
    fields = [
        {"type": "int64" if kind == "long" else "string", "optional": c != KEYS[table], "field": c}
        for c, kind in columns(table, index).items()
    ]
    row = {"type": "struct", "optional": True, "fields": fields}
    return {"type": "struct", "fields": [{**row, "field": "before"}, {**row, "field": "after"}]}


def _mysql_types(table: str, index: int) -> dict[str, str]:
    return {
        c: {"long": "bigint(20)", "text": "varchar(40)"}[k]
        for c, k in columns(table, index).items()
    }


def _canal_ddl(db: str, table: str, kind: str, sql: str, es: int) -> str:
    return json.dumps(
        {"data": None, "database": db, "es": es, "id": 0, "isDdl": True, "mysqlType": None,
         "old": None, "pkNames": None, "sql": sql, "sqlType": None, "table": table, "ts": es,
         "type": kind}
    )  # fmt: skip


ALTER = "ALTER TABLE `notes` ADD COLUMN `tag` varchar(40)"


def canal_lines(db: str, events: list[Event]) -> list[str]:
    """Flat messages of one row, ``es`` of second precision; ``old`` the changed columns."""
    out: list[str] = []
    for i, e in enumerate(events):
        if i == ADDED_AT:
            out.append(_canal_ddl(db, "notes", "ALTER", ALTER, _ms(i)))
        kind = e.op.upper()
        data = e.after if e.after is not None else e.before
        old = None
        if e.op == "update" and e.before and e.after:
            old = [{c: v for c, v in (_text(e.before) or {}).items() if e.before[c] != e.after[c]}]
        message = {
            "data": [_text(data)], "database": db, "es": _ms(i), "id": i, "isDdl": False,
            "mysqlType": _mysql_types(e.table, i), "old": old, "pkNames": [KEYS[e.table]],
            "sql": "", "sqlType": None, "table": e.table, "ts": _ms(i), "type": kind,
        }  # fmt: skip
        out.append(json.dumps(message))
    return out


def ckafka_lines(db: str, events: list[Event]) -> list[str]:
    """Official Format I DML after a canal-form CREATE TABLE per table (its types and key)."""
    out = []
    for table, cols in COLUMNS.items():
        defs = ", ".join(
            f"`{c}` {'bigint' if k == 'long' else 'varchar(40)'}" for c, k in cols.items()
        )
        sql = f"CREATE TABLE `{table}` ({defs}, PRIMARY KEY (`{KEYS[table]}`))"
        out.append(_canal_ddl(db, table, "CREATE", sql, BASE_S))
    for i, e in enumerate(events):
        if i == ADDED_AT:
            out.append(_canal_ddl(db, "notes", "ALTER", ALTER, BASE_S + i // 3))
        when = datetime.fromtimestamp(_ms(i) / 1000, UTC).strftime("%Y%m%d%H%M%S")
        message = {
            "BINLOG_NAME": "mysql-bin.000003", "BINLOG_POS": 1000 + 100 * i, "DATABASE": db,
            "EVENT_SERVER_ID": None, "GLOBAL_ID": None, "GROUP_ID": None,
            "NEW_VALUES": _text(e.after), "OLD_VALUES": _text(e.before), "TABLE": e.table,
            "TIME": when, "TYPE": {"insert": "I", "update": "U", "delete": "D"}[e.op],
        }  # fmt: skip
        out.append(json.dumps(message))
    return out


def dataworks_lines(db: str, events: list[Event]) -> list[str]:
    """Messages with 19-digit ``sequenceId``; an update is UPDATE_BEFOR + UPDATE_AFTER."""
    out = []
    for i, e in enumerate(events):
        cols = columns(e.table, i)
        schema = {
            "dataColumn": [
                {"name": c, "type": "LONG" if k == "long" else "STRING"} for c, k in cols.items()
            ],
            "primaryKey": [KEYS[e.table]],
            "source": {"dbType": "MySQL", "dbName": db, "tableName": e.table},
        }
        halves: list[tuple[str, Row | None, Row | None]] = (
            [("UPDATE_BEFOR", e.before, None), ("UPDATE_AFTER", None, e.after)]
            if e.op == "update"
            else [("INSERT" if e.op == "insert" else "DELETE", e.before, e.after)]
        )
        for op, before, after in halves:
            payload = {
                "before": before and {"dataColumn": before},
                "after": after and {"dataColumn": after},
                "sequenceId": str(1_700_000_000_000_000_000 + i),
                "timestamp": {"eventTime": _ms(i), "systemTime": _ms(i), "checkpointTime": _ms(i)},
                "op": op,
                "ddl": None,
            }
            out.append(json.dumps({"schema": schema, "payload": payload, "version": "0.0.1"}))
    return out


BUILDERS = {
    "debezium": debezium_lines,
    "canal": canal_lines,
    "ckafka": ckafka_lines,
    "dataworks": dataworks_lines,
}


def identifier(source: str, table: str) -> str:
    """Where a source format's copy of a table lands (SQL Server tables have a schema)."""
    return f"from_{source}.dbo.{table}" if source == "debezium" else f"from_{source}.{table}"


# --- convert, apply, compare ------------------------------------------------------------------


@dataclass
class Applied:
    lakes: dict[str, Lake]  # per format: its own workload and every conversion into it, applied
    counts: dict[tuple[str, str], dict[str, int]]  # per pair: messages, skipped, quarantined
    expected: dict[str, list[Row]]


Converted = tuple[list[str], dict[str, int]]
"""The lines a conversion writes, in write order, and its counts."""


def _converted(spark: SparkSession, source: str, lines: list[str]) -> dict[str, Converted]:
    """The source decoded once and encoded into each other format, the three in one job."""
    epoch = sources.epoch_now()
    raw = sources.raw_from_lines(spark, lines, f"{source}.jsonl", epoch)
    changes = produce.decode_input(raw, source).persist()
    try:
        options = EncodeOptions(connector=None, epoch=epoch)
        targets = [target for target in FORMATS if target != source]
        parts = [_encoded(changes, target, options) for target in targets]
        rows = reduce(DataFrame.unionByName, parts).collect()
        return {target: _lines_and_counts(rows, target) for target in targets}
    finally:
        changes.unpersist()
        release(changes)


def _encoded(changes: DataFrame, target: str, options: EncodeOptions) -> DataFrame:
    """What the encoder of ``target`` writes for ``changes``: each message's line and where it
    goes, or why it is skipped or quarantined."""
    messages = produce.encode(changes, target, options)
    return messages.select(
        F.lit(target).alias("target"),
        *("table", "position", "part", "error", "skipped"),
        produce.record_line(messages).alias("line"),
    )


def _lines_and_counts(rows: list[Any], target: str) -> Converted:
    mine = [r for r in rows if r["target"] == target]
    kinds = [
        "quarantined" if r["error"] else "skipped" if r["skipped"] else "messages" for r in mine
    ]
    good = [r for r, kind in zip(mine, kinds, strict=True) if kind == "messages"]
    # Spark's write order, (table, position, part) ascending with nulls first
    good.sort(
        key=lambda r: (r["table"] or "", r["position"] is not None, r["position"] or [], r["part"])
    )
    counts = {k: kinds.count(k) for k in ("messages", "skipped", "quarantined")}
    return [r["line"] for r in good], counts


# over 120 s in a full run (97-138 s, paid by its first test), because: every ordered pair of
# the four formats is encoded and applied (twelve conversions and four sources, three tables each
# with a DDL), in four batches, not sixteen
@pytest.fixture(scope="module")
def applied(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Applied:
    """Four applies: each format's lake takes its own workload (``from_<format>``) and what
    the other three converted into it (their ``from_<source>``) in one batch."""
    root: Path = tmp_path_factory.mktemp("pairs")
    events = workload()
    into = {f: BUILDERS[f](f"from_{f}", events) for f in FORMATS}
    counts = {}
    for source in FORMATS:
        native = BUILDERS[source](f"from_{source}", events)
        for target, (text, c) in _converted(spark, source, native).items():
            into[target] += text
            counts[(source, target)] = c
    lakes = {f: Lake(spark, root / f) for f in FORMATS}
    for f, lake in lakes.items():
        lake.apply(into[f], format=f, source=f"{f}.jsonl")
    return Applied(lakes, counts, replay(events))


def table_rows(lake: Lake, table: str) -> list[Row]:
    df = lake.df(table)
    names = [c for c in df.columns if not c.startswith("_cdc_")]
    return _sorted([r.asDict() for r in df.select(*names).collect()])


def _key(e: Event, row: Row) -> Any:
    return row[KEYS[e.table]]


def test_the_workload_has_what_the_issue_asks_for() -> None:
    """The generated events include a key change, a delete, a re-insert, an added column and
    three changes of one key in one source second."""
    events = workload()
    ops = [(e.table, e.op) for e in events]
    assert ("items", "delete") in ops and len({e.table for e in events}) == 3
    assert any(e.before and e.after and _key(e, e.before) != _key(e, e.after) for e in events)
    assert [e.after and e.after["id"] for e in events[:3]] == [1, 1, 1]  # second 0, one key
    assert any(e.table == "notes" and e.after and "tag" in e.after for e in events)


@pytest.mark.parametrize("source", FORMATS)
def test_source_applies_to_the_reference_state(applied: Applied, source: str) -> None:
    """The native workload of each format applies to what a plain replay of the events gives
    (so that the comparisons below compare something)."""
    lake = applied.lakes[source]
    for table, expected in applied.expected.items():
        assert table_rows(lake, identifier(source, table)) == expected, (source, table)


@pytest.mark.parametrize(("source", "target"), PAIRS)
def test_converted_stream_applies_to_the_same_tables(
    applied: Applied, source: str, target: str
) -> None:
    """Pins issue 40 item 6: convert wrote nothing between position families (canal ->
    debezium, SQL Server -> dataworks: every change quarantined, exit 0), and with a connector
    that fit, canal -> debezium wrote positions that did not keep canal's order. Every change
    is written, and applying the result gives the tables applying the source gives."""
    c = applied.counts[(source, target)]
    assert c["quarantined"] == 0 and c["messages"] > 0, c
    for table in COLUMNS:
        ident = identifier(source, table)
        got = table_rows(applied.lakes[target], ident)
        assert got == table_rows(applied.lakes[source], ident), (source, target, table)


SPELLINGS = {  # target name -> (format, connector)
    "debezium-sqlserver": ("debezium", "sqlserver"),
    "debezium-mysql": ("debezium", "mysql"),
    "debezium-postgresql": ("debezium", "postgresql"),
    "canal": ("canal", None),
    "ckafka": ("ckafka", None),
    "dataworks": ("dataworks", None),
}


@pytest.mark.parametrize("target", sorted(SPELLINGS))
def test_sequence_reads_back_in_order_across_batches(spark: SparkSession, target: str) -> None:
    """The sequence ``(epoch, rank)`` each target writes for positions it cannot spell reads
    back, as its decoder orders positions, in source order inside a batch and across two
    batches, the later with the larger epoch (pins a file number cut to 6 digits, which made
    the epochs of ``mysql-bin.<epoch>`` equal). The same event delivered twice keeps one
    position, but in canal: a duplicate is a line of its own there. Input-ordered changes are
    always sequenced, whatever the target."""
    from builders.changes import Change, changes_df
    from pyspark.sql.types import LongType, StructField, StructType

    fmt, connector = SPELLINGS[target]
    schema = StructType([StructField("id", LongType())])
    batches = [[[9, 0, 1], [9, 0, 7], [9, 0, 7], [9, 1, 2]], [[12, 0, 1], [12, 0, 3]]]
    lines: list[str] = []
    for b, positions in enumerate(batches):
        changes = [
            Change("shop.items", "insert", None, {"id": 10 * b + i}, p, ["id"], meta=INPUT)
            for i, p in enumerate(positions)
        ]
        if b == 0:
            changes[2].after = changes[1].after  # the event of changes[1] delivered again
        options = EncodeOptions(connector=connector, epoch=1_765_432_100_000 + 1000 * b)  # type: ignore[arg-type]
        encoded = _encoded(changes_df(spark, changes, {"shop.items": schema}), fmt, options)
        lines += _lines_and_counts(encoded.collect(), fmt)[0]
    decoded = produce.decode_input(sources.raw_from_lines(spark, lines, "seq.jsonl"), fmt)
    rows = decoded.filter("op = 'insert'").orderBy("lineage.offset").collect()
    release(decoded)
    got = [list(r["position"]) for r in rows]
    assert [r["error"] for r in rows] == [None] * 6
    assert got[0] < got[1] < got[3] < got[4] < got[5], got
    assert got[1] == got[2] or (fmt == "canal" and got[1] < got[2]), got


INPUT = {"ordering": "input"}  # meta of a change ordered by input order only
