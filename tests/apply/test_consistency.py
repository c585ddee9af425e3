"""--consistent (issue 39): a batch applies only complete source transactions, in commit order;
the rest waits in ``_cdc_pending``; every batch records a cut that ``cdclake.snapshot`` reads."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from builders import msgs
from builders.dbz import event, transaction_marker
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from cdclake.apply.consistency import snapshot
from cdclake.cli import app
from cdclake.config import ApplyConfig
from cdclake.errors import ConfigError
from cdclake.ops.status import target_status

ACC, LED = "shop.public.accounts", "shop.public.ledger"
MINUTE = 60_000
T0 = 1_700_000_000_000


def account(i: int, balance: int, lsn: int, txid: str, order: int, ts: int = T0) -> str:
    op = "c" if lsn < 20 else "u"
    after = {"id": i, "name": f"acct{i}", "qty": balance}
    return event(
        op, after=after, lsn=lsn, table="accounts", transaction=txid, order=order, ts_ms=ts
    )


def ledger(i: int, amount: int, lsn: int, txid: str, order: int, ts: int = T0) -> str:
    after = {"id": i, "name": f"transfer{i}", "qty": amount}
    return event("c", after=after, lsn=lsn, table="ledger", transaction=txid, order=order, ts_ms=ts)


def end(txid: str, accounts: int, ledger: int = 0, ts: int = T0) -> str:
    counts = {"accounts": accounts, **({"ledger": ledger} if ledger else {})}
    return transaction_marker("END", txid, counts, ts_ms=ts)


# t0 opens two accounts; t1 moves 10 from 1 to 2 and logs it; t2 moves 5 back and logs it
T0_EVENTS = [account(1, 100, 10, "t0", 1), account(2, 100, 11, "t0", 2), end("t0", 2)]
T1_ACCOUNTS = [account(1, 90, 20, "t1", 1), account(2, 110, 21, "t1", 2)]
T1_LEDGER = ledger(1, 10, 22, "t1", 3)
T2_EVENTS = [
    account(2, 105, 30, "t2", 1),
    account(1, 95, 31, "t2", 2),
    ledger(2, 5, 32, "t2", 3),
    end("t2", 2, 1),
]


def balances(tables: dict[str, object]) -> list[tuple[int, int]]:
    df = tables[ACC]
    return sorted((r["id"], r["qty"]) for r in df.collect())  # type: ignore[attr-defined]


def test_a_batch_applies_complete_transactions_in_commit_order_and_the_rest_waits(lake, spark):
    # t1's ledger row is late; t2 is complete but committed after t1: both wait
    first = [
        transaction_marker("BEGIN", "t0"),
        *T0_EVENTS,
        transaction_marker("BEGIN", "t1"),
        *T1_ACCOUNTS,
        end("t1", 2, 1),
        transaction_marker("BEGIN", "t2"),
        *T2_EVENTS,
    ]
    r1 = lake.apply(first, consistent=True, source="b1.jsonl")
    assert lake.rows(ACC) == [(1, "acct1", 100), (2, "acct2", 100)]
    assert not (lake.root / "shop.public.ledger").exists()
    assert r1.pending == 2 + 1 + 1 + 4 + 1  # t1: 2 events, BEGIN, END; t2: 3 events, END, BEGIN
    assert (r1.changes, r1.released_from_pending, r1.timed_out) == (2, 0, [])

    # the late row, and t0 delivered again (a connector restarted: its events and END again)
    r2 = lake.apply([T1_LEDGER, T0_EVENTS[0], T0_EVENTS[2]], consistent=True, source="b2.jsonl")
    assert lake.rows(ACC) == [(1, "acct1", 95), (2, "acct2", 105)]
    assert lake.rows(LED) == [(1, "transfer1", 10), (2, "transfer2", 5)]
    assert (r2.pending, r2.released_from_pending) == (0, 9)
    # t1's and t2's four, and t0's again (superseded in the batch by t1's newer change)
    assert (r2.tables[ACC].changes, r2.tables[ACC].updated) == (5, 2)

    # every cut holds whole transactions: the balances always sum to 200
    cut0, cut1 = snapshot(spark, str(lake.root), at=0), snapshot(spark, str(lake.root))
    assert sorted(cut0) == [ACC] and balances(cut0) == [(1, 100), (2, 100)]
    assert sorted(cut1) == [ACC, LED] and balances(cut1) == [(1, 95), (2, 105)]
    assert cut1[LED].count() == 2 and "_cdc_position" not in cut1[ACC].columns

    # status and `cdclake snapshot` read the cuts without a JVM
    assert target_status(str(lake.root)).consistency["cut"] == 1
    res = CliRunner().invoke(app, ["snapshot", "--target", str(lake.root), "--at", "0", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert (doc["cut"], doc["held"], [t["table"] for t in doc["tables"]]) == (0, 9, [ACC])
    res = CliRunner().invoke(app, ["snapshot", "--target", str(lake.root), "--at", "7"])
    assert res.exit_code == 2 and f"no cut of {str(lake.root)!r} at or before 7" in res.output


def test_a_transaction_incomplete_past_the_timeout_is_applied_as_it_stands(lake):
    # t9's END says two events; one never comes. t10 commits 10 minutes later.
    lines = [
        account(1, 100, 10, "t9", 1, ts=T0),
        end("t9", 2, ts=T0),
        account(2, 50, 20, "t10", 1, ts=T0 + 10 * MINUTE),
        end("t10", 1, ts=T0 + 10 * MINUTE),
    ]
    waits = lake.apply(lines, consistent=True, consistent_timeout=timedelta(minutes=30))
    assert (waits.changes, waits.pending, waits.timed_out) == (0, 4, [])
    gone = lake.apply([], consistent=True, consistent_timeout=timedelta(minutes=5), source="b2")
    assert gone.timed_out == ["t9"] and gone.pending == 0
    assert lake.rows(ACC) == [(1, "acct1", 100), (2, "acct2", 50)]


def test_the_initial_snapshot_is_one_transaction_before_every_streamed_one(lake):
    def read(i: int, lsn: int, mark: str) -> str:
        after = {"id": i, "name": f"acct{i}", "qty": 100}
        return event("r", after=after, lsn=lsn, table="accounts", snapshot=mark)

    # the snapshot's last read is late: neither the snapshot nor t1 (after it) is applied
    first = [read(1, 5, "first"), read(2, 5, "true"), *T1_ACCOUNTS, T1_LEDGER, end("t1", 2, 1)]
    waits = lake.apply(first, consistent=True, source="b1.jsonl")
    assert (waits.changes, waits.pending) == (0, 6)
    done = lake.apply([read(3, 5, "last")], consistent=True, source="b2.jsonl")
    assert lake.rows(ACC) == [(1, "acct1", 90), (2, "acct2", 110), (3, "acct3", 100)]
    assert (done.pending, done.released_from_pending) == (0, 6)


def test_dataworks_applies_up_to_its_last_transaction_end(lake):
    def dw(n: int, op: str, row: dict[str, object] | None = None) -> str:
        return json.dumps(msgs.dataworks_doc(n, row, op=op, table="accounts"))

    lines = [
        dw(1, "TRANSACTION_BEGIN"),
        dw(2, "INSERT", {"id": 1, "name": "a", "qty": 100}),
        dw(3, "TRANSACTION_END"),
        dw(4, "TRANSACTION_BEGIN"),
        dw(5, "INSERT", {"id": 2, "name": "b", "qty": 100}),
    ]
    first = lake.apply(lines, format="dataworks", consistent=True, source="b1.jsonl")
    assert lake.rows("shop.accounts") == [(1, "a", 100)] and first.pending == 2
    lake.apply([dw(6, "TRANSACTION_END")], format="dataworks", consistent=True, source="b2.jsonl")
    assert lake.rows("shop.accounts") == [(1, "a", 100), (2, "b", 100)]


@pytest.mark.parametrize("fmt", ["canal", "ckafka", "auto"])
def test_formats_without_transaction_boundaries_are_refused_in_one_line(fmt: str) -> None:
    with pytest.raises(ConfigError) as e:
        ApplyConfig(format=fmt, inputs=("x.jsonl",), target="/tmp/x", consistent=True).check()
    assert str(e.value) == (
        "--consistent needs transaction boundaries in the input: --format debezium or "
        f"dataworks (got {fmt!r}; canal and ckafka messages carry none)"
    )


def test_snapshot_of_a_target_without_cuts_says_so(spark: SparkSession, tmp_path) -> None:
    with pytest.raises(ConfigError, match="were not written with --consistent"):
        snapshot(spark, str(tmp_path))


class Crash(Exception):
    """The driver dying at one point of a batch."""


@pytest.mark.parametrize("at", ["before its cut", "before its pending table"])
def test_a_batch_run_again_after_a_crash_applies_nothing_twice_and_loses_nothing(
    spark: SparkSession, tmp_path, monkeypatch: pytest.MonkeyPatch, at: str
) -> None:
    from cdclake.apply import consistency
    from cdclake.apply.consistency import Gate, cuts
    from cdclake.run.runner import apply_raw
    from cdclake.sources import raw_from_lines

    root = tmp_path / "lake"
    config = ApplyConfig(format="debezium", target=str(root), consistent=True)
    batches = [
        [*T0_EVENTS, *T1_ACCOUNTS, end("t1", 2, 1)],  # t1 waits for its ledger row
        [T1_LEDGER, *T2_EVENTS],
    ]

    def run(batch_id: int) -> object:
        lines = batches[batch_id]
        raw = raw_from_lines(spark, lines, f"b{batch_id}.jsonl", epoch=batch_id)
        return apply_raw(raw, config, "crash-test", batch_id, len(lines), False)

    run(0)
    point = "close" if at == "before its cut" else "keep_waiting"
    original = getattr(Gate, point)

    def crash(self: Gate, *args: object) -> None:
        raise Crash(at)

    monkeypatch.setattr(Gate, point, crash)
    with pytest.raises(Crash):
        run(1)
    monkeypatch.setattr(Gate, point, original)
    again = run(1)  # the stream's replay of the batch
    lake = consistency.snapshot(spark, str(root))
    assert balances(lake) == [(1, 95), (2, 105)]
    assert sorted((r["id"], r["qty"]) for r in lake[LED].collect()) == [(1, 10), (2, 5)]
    assert again.pending == 0  # type: ignore[attr-defined]
    recorded = sorted((r["cut"], r["batch_id"]) for r in cuts(spark, str(root)).collect())
    assert recorded == [(0, 0), (1, 1)]
    pending = spark.read.format("delta").load(str(root / "_cdc_pending"))
    assert pending.filter("not _cdc_done").count() == 0
