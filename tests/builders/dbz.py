"""Builders of Debezium test events, so that a test reads like the change history it models."""

from __future__ import annotations

import json
from typing import Any

INT32 = {"type": "int32", "optional": False}
INT64 = {"type": "int64", "optional": True}
STRING = {"type": "string", "optional": True}


def fields(**types: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**t, "field": name} for name, t in types.items()]


DEFAULT_FIELDS = fields(id=INT32, name=STRING, qty=INT64)


def event(
    op: str,
    *,
    after: dict[str, Any] | None = None,
    before: dict[str, Any] | None = None,
    lsn: int = 0,
    table: str = "items",
    key: dict[str, Any] | str | None = "auto",
    row_fields: list[dict[str, Any]] | None = None,
    headers: dict[str, Any] | None = None,
    schema: bool = True,
    snapshot: bool | str = False,
    ts_ms: int = 1_700_000_000_000,
    transaction: str | None = None,
    order: int = 1,
) -> str:
    """One PostgreSQL Debezium event as a record-object line (key from the ``id`` column);
    ``transaction``: its transaction block's id (``order``: its ``total_order``)."""
    row_fields = row_fields or DEFAULT_FIELDS
    source = {
        "version": "2.7.0.Final",
        "connector": "postgresql",
        "name": "pg",
        "ts_ms": ts_ms,
        "snapshot": snapshot,
        "db": "shop",
        "schema": "public",
        "table": table,
        "txId": 1,
        "lsn": lsn,
    }
    payload = {"before": before, "after": after, "source": source, "op": op, "ts_ms": ts_ms}
    if transaction is not None:
        block = {"id": transaction, "total_order": order, "data_collection_order": order}
        payload["transaction"] = block
    row_schema = {"type": "struct", "fields": row_fields, "optional": True}
    value: dict[str, Any] = payload
    if schema:
        value = {
            "schema": {
                "type": "struct",
                "fields": [
                    {**row_schema, "field": "before"},
                    {**row_schema, "field": "after"},
                    {"type": "struct", "fields": [], "field": "source"},
                    {"type": "string", "field": "op"},
                ],
            },
            "payload": payload,
        }
    if key == "auto":
        image = after or before
        key = {"id": image["id"]} if image and "id" in image else None
    rec: dict[str, Any] = {"key": key, "value": value}
    if headers:
        rec["headers"] = headers
    return json.dumps(rec)


def transaction_marker(
    status: str, txid: str, counts: dict[str, int] | None = None, ts_ms: int = 1_700_000_000_000
) -> str:
    """A record of Debezium's transaction-metadata topic: BEGIN, or END with ``counts`` (table ->
    events) as ``data_collections`` and their sum as ``event_count``."""
    value: dict[str, Any] = {"status": status, "id": txid, "ts_ms": ts_ms}
    if status == "END":
        counts = counts or {}
        value["event_count"] = sum(counts.values())
        value["data_collections"] = [
            {"data_collection": f"public.{t}", "event_count": n} for t, n in counts.items()
        ]
    return json.dumps({"key": {"id": txid}, "value": value})


def tombstone(key: dict[str, Any]) -> str:
    return json.dumps({"key": key, "value": None})
