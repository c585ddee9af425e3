"""A batch's few tombstones are committed by the driver (delta-rs), and hold back exactly what
Spark's append of them holds back (:data:`cdclake.apply.scd1.TOMBSTONES_ON_DRIVER`).

Two tables: one keyed by a date, a decimal and a text (types the driver writes itself), one by a
time without a zone (which Spark appends). Each takes an insert, a delete, an older insert that
the tombstone must stop, and a newer one that brings the key back; the same batches are applied
with the driver's append turned off, and both lakes must hold the same rows and tombstones.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from builders.dbz import INT64, STRING, event, fields
from pyspark.sql import SparkSession

from cdclake.apply import scd1
from cdclake.apply.tables import Target
from tests.conftest import Lake

DATE = {"type": "int32", "optional": False, "name": "io.debezium.time.Date"}
AMOUNT = {
    "type": "bytes",
    "optional": False,
    "name": "org.apache.kafka.connect.data.Decimal",
    "parameters": {"scale": "2", "connect.decimal.precision": "10"},
}
MICROS = {"type": "int64", "optional": False, "name": "io.debezium.time.MicroTimestamp"}
PAYMENTS = fields(day=DATE, amount=AMOUNT, code=STRING, qty=INT64)
VISITS = fields(at=MICROS, note=STRING)
DAY = 19_000  # 2022-01-08
AT = 1_700_000_000_000_000  # microseconds: 2023-11-14T22:13:20


def _cents(amount: int) -> str:
    """A Connect decimal's bytes: the unscaled value, big-endian two's complement, base64."""
    return base64.b64encode(amount.to_bytes(4, "big", signed=True)).decode()


def _payment(code: str, qty: int) -> dict[str, Any]:
    return {"day": DAY, "amount": _cents(1234), "code": code, "qty": qty}


def _pay(op: str, lsn: int, row: dict[str, Any]) -> str:
    key = {k: row[k] for k in ("day", "amount", "code")}
    image = {"after": row} if op != "d" else {"before": row}
    return event(op, **image, lsn=lsn, table="payments", key=key, row_fields=PAYMENTS)


def _visit(op: str, lsn: int, note: str) -> str:
    row = {"at": AT, "note": note}
    image = {"after": row} if op != "d" else {"before": row}
    return event(op, **image, lsn=lsn, table="visits", key={"at": AT}, row_fields=VISITS)


BATCHES = [
    [_pay("c", 10, _payment("a", 1)), _pay("c", 11, _payment("b", 2)), _visit("c", 12, "v1")],
    [_pay("d", 20, _payment("a", 1)), _visit("d", 21, "v1")],
    # older than the tombstones: held back
    [_pay("c", 15, _payment("a", 9)), _visit("c", 16, "late")],
    # newer: the keys come back
    [_pay("c", 30, _payment("a", 3)), _visit("c", 31, "v3")],
]


def _applied(spark: SparkSession, root: Path) -> Lake:
    lake = Lake(spark, root)
    for i, lines in enumerate(BATCHES):
        result = lake.apply(lines)
        assert result.quarantined == 0, (i, result.quarantine_reasons)
    return lake


def _log(spark: SparkSession, lake: Lake, table: str) -> list[tuple[Any, ...]]:
    path = Target(str(lake.root)).tombstone_path(table)
    rows = spark.read.format("delta").load(path).drop("_cdc_deleted_at").collect()
    return sorted(tuple(r) for r in rows)


def _writers(lake: Lake, table: str) -> list[str]:
    """Who committed each version of the table's tombstone log: Spark or delta-rs."""
    log = Path(Target(str(lake.root)).tombstone_path(table)) / "_delta_log"
    out = []
    for commit in sorted(log.glob("*.json")):
        info = next(
            json.loads(line)["commitInfo"]
            for line in commit.read_text().splitlines()
            if "commitInfo" in json.loads(line)
        )
        out.append("spark" if "Apache-Spark" in info.get("engineInfo", "") else "delta-rs")
    return out


def test_driver_and_spark_tombstones_hold_back_the_same_changes(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver = _applied(spark, tmp_path / "driver")
    monkeypatch.setattr(scd1, "TOMBSTONES_ON_DRIVER", -1)
    by_spark = _applied(spark, tmp_path / "spark")

    payments = "shop.public.payments"
    visits = "shop.public.visits"
    want = [
        (dt.date(2022, 1, 8), Decimal("12.34"), "a", 3),
        (dt.date(2022, 1, 8), Decimal("12.34"), "b", 2),
    ]
    for lake in (driver, by_spark):
        assert lake.rows(payments, "day", "amount", "code", "qty") == want
        assert lake.rows(visits, "note") == [("v3",)]
    assert _log(spark, driver, payments) == _log(spark, by_spark, payments)
    assert _log(spark, driver, payments)[0][:3] == want[0][:3]
    assert _log(spark, driver, visits) == _log(spark, by_spark, visits)
    # the date, decimal and text key: the driver; the time without a zone: Spark
    assert _writers(driver, payments) == ["delta-rs"]
    assert _writers(driver, visits) == ["spark"]
    assert _writers(by_spark, payments) == ["spark"]
