"""The CLI end to end (in-process, sharing the test session), read back with delta-rs too."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders.dbz import event, tombstone
from typer.testing import CliRunner

from cdclake.cli import app

T = "shop.public.items"


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def events(tmp_path: Path) -> Path:
    d = tmp_path / "in"
    _write(
        d / "001.jsonl",
        [
            event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10),
            event("c", after={"id": 2, "name": "b", "qty": 2}, lsn=11),
            "this is not json",
        ],
    )
    _write(
        d / "002.jsonl",
        [
            event("u", after={"id": 1, "name": "a2", "qty": 3}, lsn=20),
            event("d", before={"id": 2, "name": "b", "qty": 2}, lsn=21),
            tombstone({"id": 2}),
            event("c", after={"id": 2, "name": "b", "qty": 2}, lsn=11),  # replayed, stale
        ],
    )
    return d


def _apply(source: Path, target: Path, *options: str):  # type: ignore[no-untyped-def]
    """``cdclake apply --input SOURCE --target TARGET [OPTIONS]``."""
    return CliRunner().invoke(
        app, ["apply", "--input", str(source), "--target", str(target), *options]
    )


def test_apply_prints_a_summary_and_writes_tables(spark, events, tmp_path):
    target = tmp_path / "lake"
    res = _apply(events, target)
    assert res.exit_code == 0, res.output
    out = res.output
    assert T in out
    assert "messages 7; changes 5 = applied 4 + ignored 1; control 1; quarantined 1" in out
    assert "not valid JSON" in out
    rows = spark.read.format("delta").load(str(target / T)).select("id", "name", "qty")
    assert sorted(map(tuple, rows.collect())) == [(1, "a2", 3)]


def test_tables_read_back_with_delta_rs(spark, events, tmp_path):
    """The independent delta-rs reader sees exactly the live rows."""
    from deltalake import DeltaTable

    target = tmp_path / "lake"
    res = _apply(events, target)
    assert res.exit_code == 0, res.output
    table = DeltaTable(str(target / T)).to_pyarrow_table().to_pylist()
    assert [(r["id"], r["name"], r["qty"]) for r in table] == [(1, "a2", 3)]
    assert table[0]["_cdc_op"] == "update" and table[0]["_cdc_position"] == [20]


def test_fail_on_bad_input_names_file_and_line(events, tmp_path):
    res = _apply(events, tmp_path / "lake", "--fail-on-bad-input")
    assert res.exit_code == 2
    # the file's URI, as lineage keeps it (file:/…, s3a://…)
    assert f"bad input at file:{events / '001.jsonl'} line 3: not valid JSON" in res.output


def test_bad_primary_key_option_is_a_clear_error(events, tmp_path):
    res = _apply(events, tmp_path / "lake", "--primary-key", "items")
    assert res.exit_code == 2
    assert "expected TABLE=COL[,COL]" in res.output


def test_missing_input_is_a_clear_error(tmp_path):
    res = _apply(tmp_path / "nope", tmp_path / "lake")
    assert res.exit_code == 2
    assert "does not exist" in res.output


def test_stream_available_now_picks_up_new_files(spark, events, tmp_path):
    target, cp = tmp_path / "lake", tmp_path / "cp"
    args = [
        "apply",
        "--input",
        str(events),
        "--target",
        str(target),
        "--stream",
        "--checkpoint",
        str(cp),
        "--available-now",
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    _write(events / "003.jsonl", [event("c", after={"id": 3, "name": "c", "qty": 1}, lsn=30)])
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "changes 1 = applied 1" in res.output  # only the new file
    rows = spark.read.format("delta").load(str(target / T)).select("id", "name", "qty")
    assert sorted(map(tuple, rows.collect())) == [(1, "a2", 3), (3, "c", 1)]
