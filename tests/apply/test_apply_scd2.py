"""SCD type 2 (history tables): versions, late and re-delivered events, truncates, TOAST."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from builders.dbz import INT32, INT64, STRING, event, fields, tombstone
from scd2_model import COLUMNS, Change, Ev, debezium, expected_history, history_rows

from cdclake.errors import ConfigError
from cdclake.history import as_of, current

T = "shop.public.items"
MS = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC


def history(lake: Any, table: str = T) -> list[tuple[Any, ...]]:
    """(id, name, qty, start, end) in key and start order, positions as their first element."""
    rows = lake.df(table).collect()
    out = [
        (
            r["id"],
            r["name"],
            r["qty"],
            r["__START_AT"][0],
            None if r["__END_AT"] is None else r["__END_AT"][0],
        )
        for r in rows
    ]
    return sorted(out, key=lambda x: (x[0], x[3]))


def row(i: int, name: str, qty: int) -> dict[str, Any]:
    return {"id": i, "name": name, "qty": qty}


def scd2(lake: Any, lines: list[str], **options: Any) -> Any:
    return lake.apply(lines, stored_as_scd_type=2, **options)


def test_worked_example_versions_and_as_of(lake: Any) -> None:
    """The README's example: insert, update, late update, delete, and as-of queries."""
    r = scd2(
        lake,
        [
            event("c", after=row(1, "ann", 1), lsn=10, ts_ms=MS),
            event("u", after=row(1, "anne", 1), lsn=30, ts_ms=MS + 30_000),
            event("c", after=row(2, "bob", 5), lsn=40, ts_ms=MS + 40_000),
        ],
    )
    assert (r.tables[T].inserted, r.tables[T].ignored) == (3, 0)
    late = scd2(
        lake,
        [
            event("u", after=row(1, "annie", 2), lsn=20, ts_ms=MS + 20_000),  # late: splits v1
            event("d", before=row(2, "bob", 5), lsn=50, ts_ms=MS + 50_000),
            tombstone({"id": 2}),
            event("u", after=row(1, "anne", 1), lsn=30, ts_ms=MS + 30_000),  # re-delivered
        ],
    )
    assert history(lake) == [
        (1, "ann", 1, 10, 20),
        (1, "annie", 2, 20, 30),
        (1, "anne", 1, 30, None),
        (2, "bob", 5, 40, 50),
    ]
    t = late.tables[T]
    assert (t.changes, t.ignored, t.inserted, t.updated, t.deleted) == (3, 1, 1, 2, 0)
    path = str(lake.root / T)
    at_25 = as_of(lake.spark, path, ts=datetime(2023, 11, 14, 22, 13, 45))
    assert sorted((r["id"], r["name"]) for r in at_25.collect()) == [(1, "annie")]
    at_45 = as_of(lake.spark, path, position=[45])
    assert sorted((r["id"], r["name"]) for r in at_45.collect()) == [(1, "anne"), (2, "bob")]
    assert [(r["id"], r["name"]) for r in current(lake.spark, path).collect()] == [(1, "anne")]
    starts = lake.df(T).filter("id = 1 AND name = 'annie'").first()
    assert (starts["_cdc_start_ts"], starts["_cdc_end_ts"]) == (
        datetime(2023, 11, 14, 22, 13, 40),
        datetime(2023, 11, 14, 22, 13, 50),
    )


def test_late_event_older_than_a_delete_does_not_reopen_the_row(lake: Any) -> None:
    scd2(
        lake,
        [
            event("c", after=row(1, "a", 1), lsn=10),
            event("d", before=row(1, "a", 1), lsn=30),
        ],
    )
    scd2(lake, [event("u", after=row(1, "late", 9), lsn=20)])
    assert history(lake) == [(1, "a", 1, 10, 20), (1, "late", 9, 20, 30)]


def test_truncate_closes_open_versions_and_drops_older_late_events(lake: Any) -> None:
    scd2(
        lake,
        [
            event("c", after=row(1, "a", 1), lsn=10),
            event("c", after=row(2, "b", 2), lsn=20),
            event("d", before=row(2, "b", 2), lsn=25),
        ],
    )
    r = scd2(lake, [event("t", lsn=30, key=None), event("c", after=row(3, "c", 3), lsn=40)])
    late = scd2(lake, [event("u", after=row(1, "late", 9), lsn=15)])
    assert history(lake) == [
        (1, "a", 1, 10, 30),
        (2, "b", 2, 20, 25),
        (3, "c", 3, 40, None),
    ]
    assert r.tables[T].changes == 2 and late.tables[T].ignored == 1


def test_a_history_made_by_a_batch_with_a_truncate_and_replays_is_the_models(lake: Any) -> None:
    """The batch that makes a history table reads no log (it holds nothing yet) and writes its
    versions without a MERGE: a key change, a re-delivery and a truncate in that first batch give
    the model's versions, as the same events do in two batches into an existing table."""
    changes = [
        Change("c", 10, after=row(1, "a", 1)),
        Change("c", 20, after=row(2, "b", 2)),
        Change("u", 25, before=row(2, "b", 2), after=row(4, "b", 2)),
        Change("t", 30),
        Change("c", 40, after=row(3, "c", 3)),
    ]
    # shuffled, the insert of 2 twice; in two batches, the truncate comes in the second
    batches = [[changes[i] for i in (1, 0, 2)], [changes[i] for i in (4, 3, 1)]]
    two = type(lake)(lake.spark, lake.root.parent / "two")
    scd2(lake, [ln for c in (*batches[1][:1], *batches[0], *batches[1][1:]) for ln in debezium(c)])
    for batch in batches:
        scd2(two, [ln for c in batch for ln in debezium(c)])

    def model(parts: list[list[Change]]) -> list[tuple[Any, ...]]:
        got = expected_history([[e for c in part for e in c.events()] for part in parts], COLUMNS)
        return sorted((*values, start, end) for _, values, start, end in got)

    want = [(1, "a", 1, 10, 30), (2, "b", 2, 20, 25), (3, "c", 3, 40, None), (4, "b", 2, 25, 30)]
    assert model([batches[0] + batches[1]]) == model(batches) == want
    assert history(lake) == want
    assert history(two) == want


def test_batches_read_the_truncate_watermark_from_the_logs_newest_commit(
    lake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The position of the newest truncate rides in the history log's newest commit: a batch
    reads it there, not by scanning every event the log holds. A log whose commits do not say
    (an earlier cdclake's) is scanned, once: that batch's commit says."""
    from cdclake.apply import scd2 as history_module
    from cdclake.apply.tables import Target, newest_metadata

    log = Target(str(lake.root)).history_log_path(T)

    def watermark() -> dict[str, Any]:
        doc = newest_metadata(lake.spark, log, lambda d: history_module.WATERMARK in d, 10)
        assert isinstance(doc, dict), doc
        mark: dict[str, Any] = doc[history_module.WATERMARK]
        return {k: None if v is None else v[0] for k, v in mark.items() if k != "batch"}

    scd2(lake, [event("c", after=row(1, "a", 1), lsn=10)])
    assert watermark() == {"before": None, "after": None}
    scd2(lake, [event("t", lsn=30, key=None), event("c", after=row(3, "c", 3), lsn=40)])
    assert watermark() == {"before": None, "after": 30}
    with monkeypatch.context() as m:  # a log whose newest commits do not say
        m.setattr(history_module, "WATERMARK_REACH", 0)
        first = scd2(
            lake,
            [event("u", after=row(1, "late", 9), lsn=15), event("u", after=row(3, "d", 4), lsn=50)],
        )
    assert watermark() == {"before": 30, "after": 30}
    second = scd2(lake, [event("u", after=row(1, "later", 8), lsn=25)])
    assert (first.tables[T].ignored, second.tables[T].ignored) == (1, 1)
    assert history(lake) == [(1, "a", 1, 10, 30), (3, "c", 3, 40, 50), (3, "d", 4, 50, None)]


def test_toast_placeholder_takes_the_value_of_the_version_current_then_even_if_it_arrives_later(
    lake: Any,
) -> None:
    toasted = {"id": 1, "name": "__debezium_unavailable_value", "qty": 3}
    scd2(lake, [event("c", after=row(1, "a", 1), lsn=10), event("u", after=toasted, lsn=30)])
    scd2(lake, [event("u", after=row(1, "b", 2), lsn=20)])  # the version current at 30
    assert history(lake) == [(1, "a", 1, 10, 20), (1, "b", 2, 20, 30), (1, "b", 3, 30, None)]


def test_untracked_columns_update_the_current_version_in_place(lake: Any) -> None:
    opts = {"track_history_except_column_list": {"shop.*": ("qty",)}}
    scd2(
        lake,
        [
            event("c", after=row(1, "a", 1), lsn=10),
            event("u", after=row(1, "a", 2), lsn=20),
            event("u", after=row(1, "b", 3), lsn=30),
            event("u", after=row(1, "b", 4), lsn=40),
        ],
        **opts,
    )
    assert history(lake) == [(1, "a", 2, 10, 30), (1, "b", 4, 30, None)]


def test_primary_key_change_closes_the_old_key_and_opens_the_new(lake: Any) -> None:
    scd2(
        lake,
        [
            event("c", after=row(1, "a", 1), lsn=10),
            event("u", before=row(1, "a", 1), after=row(7, "a", 1), lsn=20),
        ],
    )
    assert history(lake) == [(1, "a", 1, 10, 20), (7, "a", 1, 20, None)]


def test_new_column_is_null_in_earlier_versions(lake: Any) -> None:
    wide = fields(id=INT32, name=STRING, qty=INT64, note=STRING)
    scd2(lake, [event("c", after=row(1, "a", 1), lsn=10)])
    scd2(lake, [event("u", after={**row(1, "a", 2), "note": "n"}, lsn=20, row_fields=wide)])
    got = sorted((r["qty"], r["note"]) for r in lake.df(T).collect())
    assert got == [(1, None), (2, "n")]


def test_keyless_tables_are_refused_with_one_line(lake: Any) -> None:
    with pytest.raises(ConfigError) as e:
        scd2(lake, [event("c", after=row(1, "a", 1), lsn=10, key=None)], keys={})
    assert str(e.value) == (
        "table shop.public.items: --scd-type 2 needs a primary key, and the changes carry none; "
        "give --primary-key shop.public.items=COL[,COL] or keep this table at --scd-type 1"
    )


def test_reference_model_states_the_rules() -> None:
    """The model itself, on the worked example (so that a reader can check it by hand)."""
    changes = [
        Change("c", 10, after=row(1, "ann", 1)),
        Change("u", 30, before=row(1, "ann", 1), after=row(1, "anne", 1)),
        Change("u", 20, before=row(1, "ann", 1), after=row(1, "annie", 2)),
        Change("t", 40),
        Change("c", 35, after=row(2, "bob", 5)),
    ]
    batches = [[e for c in part for e in c.events()] for part in (changes[:2], changes[2:])]
    assert expected_history(batches, COLUMNS) == {
        (1, (1, "ann", 1), 10, 20),
        (1, (1, "annie", 2), 20, 30),
        (1, (1, "anne", 1), 30, 40),
        (2, (2, "bob", 5), 35, 40),
    }
    late = [[Ev(40, "truncate")], [Ev(35, "upsert", 2, (("id", 2), ("name", "x"), ("qty", 0)))]]
    assert expected_history(late, COLUMNS) == set()
    assert history_rows  # used by the property tests


def test_scd_type_and_tracked_columns_per_table() -> None:
    from cdclake.apply.scd2 import HistoryOptions
    from cdclake.config import parse_scd_type

    assert parse_scd_type([]) == 1 and parse_scd_type(["2"]) == 2
    assert parse_scd_type(["shop.orders=2", "shop.audit_*=2"]) == {
        "shop.orders": 2,
        "shop.audit_*": 2,
    }
    with pytest.raises(ConfigError, match=r"^--scd-type '3': the SCD type is 1 or 2, got '3'$"):
        parse_scd_type(["3"])
    with pytest.raises(ConfigError, match=r"^--scd-type 'x=4': the SCD type is 1 or 2, got '4'$"):
        parse_scd_type(["x=4"])
    opts = HistoryOptions(
        stored_as_scd_type={"shop.orders": 2, "shop.audit_*": 2},
        track_history_column_list={"shop.audit_*": ["status"]},
        track_history_except_column_list={"shop.orders": ["updated_at"]},
    )
    assert [opts.scd_type(t) for t in ("shop.orders", "shop.audit_log", "shop.items")] == [2, 2, 1]
    assert opts.tracked("shop.orders", ["id", "status", "updated_at"]) == ["id", "status"]
    assert opts.tracked("shop.audit_log", ["id", "status", "updated_at"]) == ["status"]


def test_cli_scd_type_2_history_read_back_with_delta_rs(spark: Any, tmp_path: Any) -> None:
    """``cdclake apply --scd-type 2``; an independent Delta reader sees the versions."""
    from deltalake import DeltaTable
    from typer.testing import CliRunner

    from cdclake.cli import app

    src = tmp_path / "in.jsonl"
    src.write_text(
        "\n".join(
            [
                event("c", after=row(1, "a", 1), lsn=10),
                event("c", after=row(2, "b", 2), lsn=11),
                event("u", after=row(1, "a", 3), lsn=15),  # qty only: in place
                event("u", after=row(1, "a2", 3), lsn=20),
                event("d", before=row(2, "b", 2), lsn=21),
                tombstone({"id": 2}),
            ]
        )
        + "\n"
    )
    target = tmp_path / "lake"
    args = ["apply", "--input", str(src), "--target", str(target), "--scd-type", "2"]
    res = CliRunner().invoke(app, [*args, "--track-history-except-columns", f"{T}=qty"])
    assert res.exit_code == 0, res.output
    assert "messages 6; changes 5 = applied 5 + ignored 0; control 1; quarantined 0" in res.output
    table = DeltaTable(str(target / T)).to_pyarrow_table().to_pylist()
    got = sorted(
        (r["id"], r["name"], r["qty"], r["__START_AT"], r["__END_AT"], r["_cdc_op"]) for r in table
    )
    assert got == [
        (1, "a", 3, [10], [20], "update"),
        (1, "a2", 3, [20], None, "update"),
        (2, "b", 2, [11], [21], "insert"),
    ]
    bad = CliRunner().invoke(app, [*args[:-1], "3"])
    assert bad.exit_code == 2
    assert "--scd-type '3': the SCD type is 1 or 2, got '3'" in bad.output
