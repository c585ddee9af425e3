"""``cdclake status``: exact numbers after a known workload, and heartbeat-driven freshness.

Freshness (see :mod:`cdclake.ops.status`): now - max(source time of the newest change applied to the
table, source time of the newest record of the table's source). The events' source times are
fixed, so each expected number is worked out by hand below.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from builders.dbz import event
from typer.testing import CliRunner

from cdclake.cli import app
from cdclake.ops.status import parse_duration, target_status

T0 = 1_700_000_000_000  # ms: 2023-11-14 22:13:20 UTC
ITEMS, ORDERS = "shop.public.items", "shop.public.orders"


def at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def heartbeat(ts_ms: int, server: str = "pg") -> str:
    """A Debezium heartbeat: key names the connector's logical server, value its time."""
    return json.dumps({"key": {"serverName": server}, "value": {"ts_ms": ts_ms}})


def row(i: int, name: str) -> dict[str, Any]:
    return {"id": i, "name": name, "qty": i}


def workload(lake: Any) -> None:
    """Two batches over two tables; items gets 3 inserts and a delete, orders 1 insert and
    1 update; one items change and one line of no table are quarantined."""
    lake.apply(
        [
            event("c", after=row(1, "a"), lsn=10, ts_ms=T0),
            event("c", after=row(2, "b"), lsn=11, ts_ms=T0 + 1000),
            event("c", after=row(3, "c"), lsn=12, ts_ms=T0 + 2000, table="orders"),
            event("c", after=row(4, "d"), lsn="x1", ts_ms=T0 + 2500),  # no integer LSN
            "not json",
        ]
    )
    lake.apply(
        [
            event("c", after=row(5, "e"), lsn=20, ts_ms=T0 + 3000),
            event("d", before=row(2, "b"), lsn=21, ts_ms=T0 + 4000),
            event("u", after=row(3, "c2"), lsn=22, ts_ms=T0 + 5000, table="orders"),
            event("c", after=row(1, "a"), lsn=10, ts_ms=T0),  # re-delivered: ignored
        ]
    )


def test_status_after_a_known_workload(lake: Any) -> None:
    workload(lake)
    now = at(T0 + 65_000)
    s = target_status(str(lake.root), now=now)
    got = {
        t.table: (
            t.rows,
            t.key_columns,
            t.key_source,
            t.scd_type,
            t.last_position,
            t.last_source_ts and t.last_source_ts.astimezone(UTC),
            t.freshness_seconds,
            t.quarantined,
            t.recent_applied,
            t.recent_ignored,
        )
        for t in s.tables
    }
    assert got == {
        # items: 1, 2, 5 inserted, 2 deleted: 2 rows; newest change lsn 21 at T0+4 s; the
        # source (pg) last spoke at T0+5 s (the orders update): 60 s behind at T0+65 s
        ITEMS: (2, ["id"], "record-key", 1, [21], at(T0 + 4000), 60.0, 1, 4, 1),
        ORDERS: (1, ["id"], "record-key", 1, [22], at(T0 + 5000), 60.0, 0, 2, 0),
    }
    assert s.quarantine == {
        "source.lsn 'x1' is not an integer LSN": 1,
        "not valid JSON": 1,
    }
    doc = s.to_json()
    assert list(doc) == ["tables", "stream", "quarantine"]
    assert [list(t) for t in doc["tables"]] == [
        [
            "table",
            "rows",
            "key_columns",
            "scd_type",
            "last_position",
            "last_source_ts",
            "freshness_seconds",
            "quarantined",
            "ordering",
        ]
    ] * 2
    assert doc["tables"][0]["last_source_ts"] == "2023-11-14T22:13:24+00:00"


def test_freshness_follows_heartbeats(lake: Any) -> None:
    """No changes for an hour but live heartbeats: fresh; heartbeats stop: it goes stale. A
    heartbeat of another server does not make the table fresh."""
    lake.apply([event("c", after=row(1, "a"), lsn=10, ts_ms=T0)])
    hour = 3_600_000
    lake.apply([heartbeat(T0 + hour // 2), heartbeat(T0 + hour), heartbeat(T0 + 2 * hour, "my")])

    def behind(now_ms: int) -> float | None:
        (t,) = target_status(str(lake.root), now=at(now_ms)).tables
        return t.freshness_seconds

    assert behind(T0 + hour + 5_000) == 5.0  # quiet table, live source
    s = target_status(str(lake.root), now=at(T0 + hour + 5_000))
    assert s.stale(900) == []
    # the heartbeats stopped at T0 + 1 h: 20 min later the table is 1200 s behind
    s = target_status(str(lake.root), now=at(T0 + hour + 1_200_000))
    assert [(t.table, t.freshness_seconds) for t in s.stale(900)] == [(ITEMS, 1200.0)]
    # a new heartbeat makes it fresh again, without any change to the table
    lake.apply([heartbeat(T0 + hour + 1_190_000)])
    assert behind(T0 + hour + 1_200_000) == 10.0


def test_cli_json_and_max_staleness_exit_status(lake: Any) -> None:
    now_ms = int(datetime.now(UTC).timestamp() * 1000)
    lake.apply([event("c", after=row(1, "a"), lsn=10, ts_ms=now_ms - 7_200_000)])
    lake.apply([heartbeat(now_ms - 60_000)])  # the source spoke a minute ago
    args = ["status", "--target", str(lake.root), "--json"]
    res = CliRunner().invoke(app, [*args, "--max-staleness", "15m"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    (t,) = doc["tables"]
    assert (t["table"], t["rows"], t["last_position"], t["quarantined"]) == (ITEMS, 1, [10], 0)
    assert 60 <= t["freshness_seconds"] < 60 + 120
    res = CliRunner().invoke(app, [*args, "--max-staleness", "30s"])
    assert res.exit_code == 1
    assert f"stale: {ITEMS} (behind their source by more than 30s)" in res.stderr
    res = CliRunner().invoke(app, ["status", "--target", str(lake.root)])
    assert res.exit_code == 0 and ITEMS in res.stdout and "last batch: " in res.stdout
    res = CliRunner().invoke(app, [*args, "--max-staleness", "soon"])
    assert res.exit_code == 2
    assert "--max-staleness 'soon': expected a duration such as 90s, 15m, 2h, 1d" in res.stderr


def test_parse_duration() -> None:
    assert [parse_duration(x) for x in ("90", "90s", "15m", "2h", "1d", "1h30m")] == [
        90.0, 90.0, 900.0, 7200.0, 86400.0, 5400.0
    ]  # fmt: skip
