"""``cdclake quarantine list|show|replay``: counts, raw records with lineage, and a replay that
applies what now decodes, keeps what still fails with its new reason, is exactly once when killed
midway (SIGKILL) and re-run, and keeps the position rules (a replayed older change is ignored).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from builders.dbz import event
from typer.testing import CliRunner

from cdclake.cli import app

ITEMS, ORDERS = "shop.public.items", "shop.public.orders"
WRONG_KEY = "key column(s) item_id not in the row of shop.public.items (columns: id, name, qty)"
ORDERS_KEY = "key column(s) oid not in the row of shop.public.orders (columns: id, name, qty)"


def row(i: int, name: str) -> dict[str, Any]:
    return {"id": i, "name": name, "qty": i}


def workload(lake: Any) -> None:
    """Record keys that name a column the rows lack: quarantined until a --primary-key."""
    lake.apply(
        [
            event("c", after=row(1, "a"), lsn=10, key={"item_id": 1}),  # older than lsn 30
            event("c", after=row(2, "b"), lsn=11, key={"item_id": 2}),
            event("u", after=row(1, "a3"), lsn=30),  # good key: applied
            event("c", after=row(7, "o"), lsn=12, key={"oid": 7}, table="orders"),
            "not json",
        ]
    )


def quarantine(lake: Any) -> list[tuple[int, str]]:
    return lake.quarantine()  # (line, reason), sorted


def test_list_and_show(lake: Any) -> None:
    workload(lake)
    target = ["--target", str(lake.root)]
    res = CliRunner().invoke(app, ["quarantine", "list", *target])
    assert res.exit_code == 0, res.output
    assert "4 records" in res.stdout
    res = CliRunner().invoke(app, ["quarantine", "list", *target, "--reason", "key column*"])
    assert "3 records" in res.stdout
    res = CliRunner().invoke(app, ["quarantine", "show", *target, "--table", "*.orders"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith(f"test.jsonl line 4 table {ORDERS}, batch None, at ")
    assert lines[0].endswith(ORDERS_KEY)
    assert '"oid": 7' in lines[1]  # a file's line: its key is in the line, none of its own
    res = CliRunner().invoke(app, ["quarantine", "list", "--target", str(lake.root / "none")])
    assert res.exit_code == 2 and "no quarantine under" in res.stderr


def test_a_files_records_have_no_key_or_headers_of_their_own(lake: Any) -> None:
    """A line's key and headers are in its ``raw`` (a record object): the columns are null."""
    workload(lake)
    rows = lake.spark.read.format("delta").load(str(lake.root / "_cdc_quarantine")).collect()
    assert len(rows) == 4
    assert {(r["key"], r["headers"]) for r in rows} == {(None, None)}


def test_a_quarantine_written_before_keys_and_headers_were_kept(lake: Any) -> None:
    """Its list, show and replay work; the replay's writes add the columns."""
    workload(lake)
    path = str(lake.root / "_cdc_quarantine")
    old = lake.spark.read.format("delta").load(path).drop("key", "headers")
    old.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(path)
    target = ["--target", str(lake.root)]
    res = CliRunner().invoke(app, ["quarantine", "list", *target])
    assert res.exit_code == 0, res.output
    assert "4 records" in res.stdout
    res = CliRunner().invoke(app, ["quarantine", "show", *target, "--table", "*.orders"])
    assert res.exit_code == 0, res.output
    assert '"oid": 7' in res.stdout.splitlines()[1]
    res = CliRunner().invoke(app, ["quarantine", "replay", *target, "--primary-key", f"{ITEMS}=id"])
    assert res.exit_code == 0, res.output
    assert "selected 4; applied 2; still quarantined 2" in res.stdout
    expected_after_replay(lake)
    assert {"key", "headers"} <= set(lake.spark.read.format("delta").load(path).columns)


def expected_after_replay(lake: Any) -> None:
    # id 1: the replayed insert at lsn 10 is older than the update at lsn 30: ignored
    assert lake.rows(ITEMS, "id", "name", "_cdc_position") == [(1, "a3", [30]), (2, "b", [11])]
    reasons = sorted(r for _, r in quarantine(lake))
    assert reasons == sorted(
        [ORDERS_KEY, "not a message of any known format (debezium, canal, ckafka, dataworks)"]
    )


def test_replay_with_a_primary_key(lake: Any) -> None:
    workload(lake)
    assert sorted(r for _, r in quarantine(lake)) == sorted(
        ["not valid JSON", WRONG_KEY, WRONG_KEY, ORDERS_KEY]
    )
    res = CliRunner().invoke(
        app,
        ["quarantine", "replay", "--target", str(lake.root), "--primary-key", f"{ITEMS}=id"],
    )
    assert res.exit_code == 0, res.output
    assert "selected 4; applied 2; still quarantined 2" in res.stdout
    expected_after_replay(lake)
    # nothing pending: a second replay selects the two that still fail, and they stay
    res = CliRunner().invoke(app, ["quarantine", "replay", "--target", str(lake.root)])
    assert "selected 2; applied 0; still quarantined 2" in res.stdout
    expected_after_replay(lake)


def _commits(table: Path) -> int:
    log = table / "_delta_log"
    return len(list(log.glob("*.json"))) if log.is_dir() else 0


def test_replay_killed_midway_is_exactly_once(lake: Any) -> None:
    """SIGKILL right after the replay's first write to a table; the re-run resumes it."""
    workload(lake)
    items = lake.root / ITEMS
    before = _commits(items)
    cmd = [sys.executable, "-m", "cdclake.cli", "quarantine", "replay"]
    cmd += ["--target", str(lake.root), "--primary-key", f"{ITEMS}=id"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=os.environ.copy()
    )
    deadline = time.monotonic() + 800
    while _commits(items) == before and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    out = proc.communicate()[0].decode()
    assert proc.returncode == -signal.SIGKILL, out
    assert _commits(items) > before, out
    # killed midway: the originals are still there, next to the re-quarantined ones
    assert len(quarantine(lake)) > 2
    res = CliRunner().invoke(app, ["quarantine", "replay", "--target", str(lake.root)])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("resumed replay "), res.stdout
    assert "selected 4; applied 2; still quarantined 2" in res.stdout
    expected_after_replay(lake)
