"""The SCD type 2 rule in plain Python, and source histories rendered in every format.

:func:`expected_history` states what a history table must hold given the batches of events that
reached cdclake; the property tests hold cdclake to it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from builders.dbz import event
from hypothesis import strategies as st

COLUMNS = ("id", "name", "qty")
Version = tuple[Any, tuple[Any, ...], int, int | None]  # key, values, start, end


@dataclass(frozen=True)
class Ev:
    """One row event of a key (``kind`` upsert or delete) or a table truncate (key None)."""

    pos: int
    kind: str
    key: Any = None
    values: tuple[tuple[str, Any], ...] = ()
    unavailable: frozenset[str] = frozenset()


def expected_history(batches: Sequence[Sequence[Ev]], tracked: Sequence[str]) -> set[Version]:
    """The versions of every key: events in position order, one per (key, position); an event
    not newer than a truncate of an earlier batch is dropped."""
    seen: dict[tuple[Any, int, bool], Ev] = {}
    mark: int | None = None
    for batch in batches:
        for e in batch:
            if mark is None or e.pos > mark:
                seen.setdefault((e.key, e.pos, e.kind == "truncate"), e)
        truncated = [e.pos for e in batch if e.kind == "truncate"]
        if truncated:
            mark = max([*truncated, *([] if mark is None else [mark])])
    truncates = [e.pos for e in seen.values() if e.kind == "truncate"]
    out: set[Version] = set()
    for key in {e.key for e in seen.values() if e.kind != "truncate"}:
        own = [e for e in seen.values() if e.key == key and e.kind != "truncate"]
        closing = [Ev(p, "truncate", key) for p in truncates]
        evs = sorted(own + closing, key=lambda e: (e.pos, e.kind))
        known: dict[str, Any] = {}
        cur: tuple[int, dict[str, Any]] | None = None
        for e in evs:
            if e.kind == "upsert":
                vals = {c: known.get(c) if c in e.unavailable else v for c, v in e.values}
                known.update({c: v for c, v in e.values if c not in e.unavailable})
                if cur is not None and all(cur[1][c] == vals[c] for c in tracked):
                    cur = (cur[0], vals)
                    continue
                if cur is not None:
                    out.add((key, tuple(cur[1].values()), cur[0], e.pos))
                cur = (e.pos, vals)
            elif cur is not None:
                out.add((key, tuple(cur[1].values()), cur[0], e.pos))
                cur = None
        if cur is not None:
            out.add((key, tuple(cur[1].values()), cur[0], None))
    return out


@dataclass(frozen=True)
class Change:
    """A source change: op c/u/d (or t, truncate), full images, and whether ``name`` was
    sent as the TOAST placeholder (an update that left it unchanged)."""

    op: str
    pos: int
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    toast: bool = False

    def events(self) -> list[Ev]:
        """The change as row events: an update that changes the key also deletes the old key."""
        if self.op == "t":
            return [Ev(self.pos, "truncate")]
        out = []
        if self.before is not None and (
            self.op == "d" or (self.after is not None and self.after["id"] != self.before["id"])
        ):
            out.append(Ev(self.pos, "delete", self.before["id"]))
        if self.after is not None:
            gone = frozenset({"name"}) if self.toast else frozenset()
            values = tuple((c, self.after[c]) for c in COLUMNS)
            out.append(Ev(self.pos, "upsert", self.after["id"], values, gone))
        return out


@dataclass
class Source:
    """Builds a valid source history: ids 1..3, inserts of absent rows, updates of live ones."""

    live: dict[int, dict[str, Any]] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)

    def step(self, key: int, action: int, name: str, qty: int, new_key: int) -> None:
        pos = 10 * (len(self.changes) + 1)
        row = {"id": key, "name": name, "qty": qty}
        old = self.live.get(key)
        if old is None:
            self.live[key] = row
            self.changes.append(Change("c", pos, after=row))
        elif action == 0:
            self.changes.append(Change("d", pos, before=self.live.pop(key)))
        elif action == 1 and new_key not in self.live:
            moved = {**row, "id": new_key}
            del self.live[key]
            self.live[new_key] = moved
            self.changes.append(Change("u", pos, before=old, after=moved))
        else:
            toast = action == 2
            row = {**row, "name": old["name"]} if toast else row
            self.live[key] = row
            self.changes.append(Change("u", pos, before=old, after=row, toast=toast))


# --- rendering: one JSON line per change in each format, and how to read a position back ----


def _text(row: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if row is None else {k: None if v is None else str(v) for k, v in row.items()}


def debezium(c: Change, table: str = "items") -> list[str]:
    if c.op == "t":
        return [event("t", lsn=c.pos, key=None, table=table)]
    after = {**c.after, "name": "__debezium_unavailable_value"} if c.toast and c.after else c.after
    return [event(c.op, before=c.before, after=after, lsn=c.pos, table=table)]


MYSQL = {"id": "int(11)", "name": "varchar(20)", "qty": "int(11)"}
CANAL_TYPES = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}
ES = 1_700_000_000_000


def canal(c: Change, table: str = "items") -> list[str]:
    data = c.before if c.op == "d" else c.after
    old = None
    if c.op == "u" and c.before and c.after:
        old = [{k: _text(c.before)[k] for k in COLUMNS if c.before[k] != c.after[k]}]  # type: ignore[index]
    msg = {
        "data": [_text(data)],
        "database": "shop",
        "es": ES + 1000 * c.pos,  # ms, whole seconds as canal sends them
        "id": 1,
        "isDdl": False,
        "mysqlType": MYSQL,
        "old": old,
        "pkNames": ["id"],
        "sql": "",
        "sqlType": None,
        "table": table,
        "ts": ES + 1000 * c.pos,
        "type": CANAL_TYPES[c.op],
    }
    return [json.dumps(msg)]


def ckafka_create(table: str = "items") -> str:
    body = "`id` int NOT NULL, `name` varchar(20), `qty` int, PRIMARY KEY (`id`)"
    return json.dumps(
        {
            "data": None,
            "database": "shop",
            "es": 1,
            "id": 0,
            "isDdl": True,
            "mysqlType": None,
            "old": None,
            "pkNames": None,
            "sql": f"CREATE TABLE `{table}` ({body})",
            "sqlType": None,
            "table": table,
            "ts": 1,
            "type": "CREATE",
        }
    )


def ckafka(c: Change, table: str = "items") -> list[str]:
    msg = {
        "BINLOG_NAME": "mysql-bin.000001",
        "BINLOG_POS": c.pos,
        "DATABASE": "shop",
        "EVENT_SERVER_ID": None,
        "GLOBAL_ID": None,
        "GROUP_ID": None,
        "NEW_VALUES": _text(c.after) if c.op != "d" else None,
        "OLD_VALUES": _text(c.before) if c.op != "c" else None,
        "TABLE": table,
        "TIME": "20240101000000",
        "TYPE": {"c": "I", "u": "U", "d": "D"}[c.op],
    }
    return [json.dumps(msg)]


DW_OPS = {"c": "INSERT", "u": "UPDATE_AFTER", "d": "DELETE", "t": "TRUNCATE"}


def dataworks(c: Change, table: str = "items") -> list[str]:
    def image(row: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if row is None else {"dataColumn": row}

    msg = {
        "schema": {
            "dataColumn": [
                {"name": "id", "type": "LONG"},
                {"name": "name", "type": "STRING"},
                {"name": "qty", "type": "LONG"},
            ],
            "primaryKey": ["id"],
            "source": {"dbType": "MySQL", "dbName": "shop", "tableName": table},
        },
        "payload": {
            "before": image(c.before if c.op != "c" else None),
            "after": image(c.after if c.op != "d" else None),
            "sequenceId": str(c.pos),
            "timestamp": {"eventTime": 1700000000000, "systemTime": 1700000000001},
            "op": DW_OPS[c.op],
            "ddl": None,
        },
        "version": "0.0.1",
    }
    return [json.dumps(msg)]


def _canal_step(position: list[int]) -> int:
    return (position[0] - ES) // 1000


@dataclass(frozen=True)
class Rendering:
    """How one format writes a change, which table it lands in, and where its step is."""

    name: str
    render: Callable[[Change], list[str]]
    table: str
    step: Callable[[list[int]], int]
    preamble: tuple[str, ...] = ()


FORMATS = {
    "debezium": Rendering("debezium", debezium, "shop.public.items", lambda p: p[0]),
    "canal": Rendering(
        "canal", partial(canal, table="items_canal"), "shop.items_canal", _canal_step
    ),
    "ckafka": Rendering(
        "ckafka",
        partial(ckafka, table="items_ckafka"),
        "shop.items_ckafka",
        lambda p: p[1],
        (ckafka_create("items_ckafka"),),
    ),
    "dataworks": Rendering(
        "dataworks", partial(dataworks, table="items_dw"), "shop.items_dw", lambda p: p[1]
    ),
}
"""Every format into its own table, so that one stream can carry all four (``format="auto"``)."""


def history_rows(df: Any, step: Callable[[list[int]], int]) -> set[Version]:
    """A history table's rows as (key, values, start, end) with positions read as steps."""
    out: set[Version] = set()
    for r in df.collect():
        end = r["__END_AT"]
        values = tuple(r[c] for c in COLUMNS)
        out.add((r["id"], values, step(list(r["__START_AT"])), None if end is None else step(end)))
    return out


def expected_current(batches: Sequence[Sequence[Ev]]) -> set[tuple[Any, ...]]:
    """The SCD type 1 rule: each key holds the values of its newest event by position among
    every event that arrived, whatever the order and however often; none if that was a delete.
    (Histories without truncates and TOAST placeholders.)"""
    newest: dict[Any, Ev] = {}
    for e in (e for batch in batches for e in batch):
        if e.key not in newest or e.pos > newest[e.key].pos:
            newest[e.key] = e
    return {tuple(v for _, v in e.values) for e in newest.values() if e.kind == "upsert"}


# --- generated deliveries: a history, re-delivered in part, shuffled, cut into batches ----

STEP = st.tuples(
    st.integers(1, 3),  # key
    st.integers(0, 3),  # 0 delete, 1 key change, 2 TOAST update, 3 update
    st.sampled_from(["a", "b"]),
    st.integers(0, 2),
    st.integers(1, 4),  # the new key of a key change
)


@st.composite
def deliveries(draw: st.DrawFn, toast: bool) -> tuple[Source, list[list[int]]]:
    """A source history, and the order its changes arrive in: batches of change indexes,
    shuffled, some re-delivered (a later batch or the same one)."""
    source = Source()
    for key, action, name, qty, new_key in draw(st.lists(STEP, min_size=1, max_size=8)):
        source.step(key, action if toast or action != 2 else 3, name, qty, new_key)
    n = len(source.changes)
    again = draw(st.lists(st.integers(0, n - 1), max_size=3))
    order = draw(st.permutations([*range(n), *again]))
    cuts = sorted(draw(st.lists(st.integers(0, len(order)), max_size=2)))
    bounds = [0, *cuts, len(order)]
    return source, [order[a:b] for a, b in itertools.pairwise(bounds) if b > a]
