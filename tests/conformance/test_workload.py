"""The workload generator, the dump normalisation, and the captured real-producer fixtures.

No server is needed: the SQL is checked as text, the fixtures as files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conformance._sql import quote_bytes, quote_text
from conformance.dump import canonical_json, normalise
from conformance.workload import Workload

REAL = Path(__file__).resolve().parent.parent / "data" / "debezium_real"


def _sql(dialect: str, seed: int, n: int = 40) -> str:
    work = Workload(dialect, seed=seed, initial_rows=6)  # type: ignore[arg-type]
    return work.setup_sql() + work.stream_sql(n)


@pytest.mark.parametrize("dialect", ["pg", "mariadb"])
def test_same_seed_same_sql_and_other_seed_other_sql(dialect: str) -> None:
    assert _sql(dialect, 7) == _sql(dialect, 7)
    assert _sql(dialect, 7) != _sql(dialect, 8)


@pytest.mark.parametrize("dialect", ["pg", "mariadb"])
def test_short_stream_covers_every_kind(dialect: str) -> None:
    sql = Workload(dialect, seed=7, initial_rows=6)  # type: ignore[arg-type]
    sql.setup_sql()
    stream = sql.stream_sql(12)
    assert "TRUNCATE TABLE truncated;" in stream
    assert "ALTER TABLE all_types ADD COLUMN c_added" in stream
    assert re.search(r"UPDATE all_types SET id = \d+, ", stream)
    delete_reinsert = re.search(
        r"DELETE FROM all_types WHERE id = (\d+);\n"
        r"INSERT INTO all_types \(id, [^)]*\) VALUES \((\d+),",
        stream,
    )
    assert delete_reinsert and delete_reinsert.group(1) == delete_reinsert.group(2)
    assert "INSERT INTO order_lines" in stream and "UPDATE truncated SET note" in stream
    assert stream.count("BEGIN;") == 12 and stream.count("COMMIT;") == 12
    if dialect == "pg":
        assert re.search(r"UPDATE toasty SET label = '[^']*' WHERE id = \d+;", stream)


def test_updates_only_touch_existing_keys() -> None:
    work = Workload("pg", seed=3, initial_rows=5)
    setup = work.setup_sql()
    stream = work.stream_sql(300)
    live = {
        int(m) for m in re.findall(r"INSERT INTO all_types \(id, [^)]*\) VALUES \((\d+),", setup)
    }
    for stmt in stream.splitlines():
        if m := re.match(r"INSERT INTO all_types \(id, [^)]*\) VALUES \((\d+),", stmt):
            assert int(m.group(1)) not in live, stmt[:80]
            live.add(int(m.group(1)))
        elif m := re.match(r"UPDATE all_types SET id = (\d+), .* WHERE id = (\d+);$", stmt):
            assert int(m.group(2)) in live, stmt[:80]
            live.discard(int(m.group(2)))
            live.add(int(m.group(1)))
        elif m := re.match(
            r"(?:UPDATE all_types SET .*|DELETE FROM all_types) WHERE id = (\d+);$", stmt
        ):
            assert int(m.group(1)) in live, stmt[:80]
            if stmt.startswith("DELETE"):
                live.discard(int(m.group(1)))
    assert live == set(work.ids)


def test_literals_quote_per_dialect() -> None:
    assert quote_text("pg", "O'Re\\illy") == "'O''Re\\illy'"
    assert quote_text("mariadb", "O'Re\\illy") == "'O''Re\\\\illy'"
    assert quote_bytes("pg", b"\x00\xff") == "'\\x00ff'::bytea"
    assert quote_bytes("mariadb", b"") == "X''"


def test_normalise_per_kind() -> None:
    assert canonical_json('{"b": [1, 2.5], "a": -1.25e10}') == canonical_json(
        '{"a": -12500000000, "b": [1, 2.5]}'
    )
    assert canonical_json('{"b":1,"a":"é"}') == '{"a":"é","b":1}'
    assert normalise("bytes", "00ff") == b"\x00\xff"
    assert normalise("int", "18446744073709551615") == 2**64 - 1
    assert normalise("decimal", "-12.500") == "-12.500"
    assert normalise("float", "3.4028234663852886e+38") == 3.4028234663852886e38
    assert normalise("uuid", "ABC") == "abc"
    assert normalise("int_array", [1, None]) == [1, None]
    assert normalise("timestamptz", None) is None


def _records(variant: str) -> list[dict[str, object]]:
    files = sorted((REAL / variant).glob("*.jsonl"))
    assert files, f"no fixtures in {REAL / variant}"
    out = []
    for f in files:
        lines = f.read_text(encoding="utf-8").splitlines()
        assert 0 < len(lines) <= 300, f"{f.name} has {len(lines)} lines; expected 1..300"
        out += [json.loads(line) for line in lines]
    return out


@pytest.mark.parametrize(
    "variant", ["pg_schemas", "pg_noschemas", "mariadb_schemas", "mariadb_noschemas"]
)
def test_real_fixtures_cover_every_op_kind(variant: str) -> None:
    records = _records(variant)
    payloads = []
    for r in records:
        value = r["value"]
        if isinstance(value, dict) and "schema" in value and "payload" in value:
            value = value["payload"]
        payloads.append(value)
    ops = {v["op"] for v in payloads if isinstance(v, dict) and "op" in v}
    assert ops == {"r", "c", "u", "d", "t"}, ops
    assert any(v is None for v in payloads), "no tombstone"
    headers = [h for r in records for h in r["headers"]]  # type: ignore[attr-defined]
    assert "__debezium.oldkey" in headers and "__debezium.newkey" in headers
    if variant.startswith("pg"):
        assert any(
            isinstance(v, dict)
            and (v.get("after") or {}).get("big") == "__debezium_unavailable_value"
            for v in payloads
        ), "no TOAST placeholder"
    else:
        assert any(isinstance(v, dict) and "ddl" in v for v in payloads), "no schema-change record"
