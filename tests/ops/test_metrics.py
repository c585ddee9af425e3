"""Prometheus metrics (:mod:`cdclake.ops.metrics`): the text after apply runs holds the runs'
counts.

Every expected value is the runs' own summary (their :class:`BatchResult`) or the target's
status, read back from the text format with prometheus_client's parser.
"""

from __future__ import annotations

import socket
import urllib.request
from datetime import UTC, datetime
from typing import Any

import pytest
from builders.dbz import event
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from cdclake.apply.results import BatchResult
from cdclake.cli import app
from cdclake.ops.metrics import (
    MetricsError,
    RunMetrics,
    StatusGauges,
    exposition,
    folded,
    reason_template,
)
from cdclake.ops.status import target_status

T0 = 1_700_000_000_000  # ms
ITEMS, ORDERS = "shop.public.items", "shop.public.orders"
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples(text: str) -> Samples:
    """(sample name, sorted labels) -> value of every sample of the text format."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def by_label(got: Samples, name: str, label: str) -> dict[str, float]:
    return {dict(labels)[label]: v for (n, labels), v in got.items() if n == name}


def row(i: int, name: str) -> dict[str, Any]:
    return {"id": i, "name": name, "qty": i}


BATCHES = [
    [
        event("c", after=row(1, "a"), lsn=10, ts_ms=T0),
        event("c", after=row(2, "b"), lsn=11, ts_ms=T0 + 1000),
        event("c", after=row(3, "c"), lsn=12, ts_ms=T0 + 2000, table="orders"),
        event("c", after=row(4, "d"), lsn="x1", ts_ms=T0 + 2500),  # no integer LSN
        "not json",
    ],
    [
        event("c", after=row(5, "e"), lsn=20, ts_ms=T0 + 3000),
        event("d", before=row(2, "b"), lsn=21, ts_ms=T0 + 4000),
        event("c", after=row(1, "a"), lsn=10, ts_ms=T0),  # re-delivered: ignored
        event("c", after=row(6, "f"), lsn="x2", ts_ms=T0 + 5000),  # folds with x1
    ],
]


def test_metrics_after_apply_runs_equal_their_summaries(lake: Any) -> None:
    status = lambda: target_status(str(lake.root))  # noqa: E731
    m = RunMetrics(status)
    total = BatchResult()
    for lines in BATCHES:
        started = datetime.now(UTC)
        result = lake.apply(lines)
        m.batch(result, started, datetime.now(UTC))
        total.merge(result)
    got = samples(m.text())

    assert got[("cdclake_messages_total", ())] == total.messages == 9
    assert got[("cdclake_batches_total", ())] == 2
    applied = {t: r.changes - r.ignored for t, r in total.tables.items()}
    ignored = {t: r.ignored for t, r in total.tables.items()}
    assert by_label(got, "cdclake_events_applied_total", "table") == applied
    assert by_label(got, "cdclake_events_ignored_total", "table") == ignored
    assert applied == {ITEMS: 4, ORDERS: 1} and ignored == {ITEMS: 1, ORDERS: 0}
    quarantined = by_label(got, "cdclake_events_quarantined_total", "reason")
    assert sum(quarantined.values()) == total.quarantined == 3
    # the two unparsable lines, of different text, fold into one reason
    assert quarantined == folded(total.quarantine_reasons)
    assert len(total.quarantine_reasons) == 3 and len(quarantined) == 2
    assert got[("cdclake_batch_duration_seconds_count", ())] == 2
    # where the batches' time went: each step once a batch, its seconds the results' own
    step_sums = by_label(got, "cdclake_batch_step_seconds_sum", "step")
    assert by_label(got, "cdclake_batch_step_seconds_count", "step") == dict.fromkeys(
        ["decode", "quarantine", "tables", "record"], 2
    )
    assert step_sums == pytest.approx(total.seconds) and step_sums["decode"] > 0
    writes = {
        dict(labels)["table"]: v
        for (n, labels), v in got.items()
        if n == "cdclake_table_step_seconds_count" and dict(labels)["step"] == "write"
    }
    assert writes == {ITEMS: 2, ORDERS: 1}  # orders has no change in the second batch

    s = status()
    rows = by_label(got, "cdclake_table_rows", "table")
    assert rows == {t.table: t.rows for t in s.tables} == {ITEMS: 2, ORDERS: 1}
    source_ts = by_label(got, "cdclake_table_last_source_timestamp_seconds", "table")
    assert source_ts == {ITEMS: (T0 + 4000) / 1000, ORDERS: (T0 + 2000) / 1000}
    # items changed in both batches, orders in the first only
    latency = by_label(got, "cdclake_end_to_end_latency_seconds_count", "table")
    assert latency == {ITEMS: 2, ORDERS: 1}
    # freshness at scrape time: the newest source time of pg (items' delete, T0+4 s) to now
    freshness = by_label(got, "cdclake_table_freshness_seconds", "table")
    now = datetime.now(UTC).timestamp()
    assert freshness.keys() == {ITEMS, ORDERS}
    for value in freshness.values():
        assert now - (T0 + 4000) / 1000 - 60 < value <= now - (T0 + 4000) / 1000


def test_status_format_prometheus_prints_the_status_gauges(lake: Any) -> None:
    lake.apply(BATCHES[0])
    out = CliRunner().invoke(app, ["status", "--target", str(lake.root), "--format", "prometheus"])
    assert out.exit_code == 0, out.output
    got = samples(out.output)
    s = target_status(str(lake.root))
    assert by_label(got, "cdclake_table_rows", "table") == {ITEMS: 2, ORDERS: 1}
    assert by_label(got, "cdclake_table_quarantined_records", "table") == {
        t.table: t.quarantined for t in s.tables
    }
    assert sum(by_label(got, "cdclake_quarantined_records", "reason").values()) == 2
    fresh = by_label(got, "cdclake_table_freshness_seconds", "table")
    expected = {t.table: t.freshness_seconds for t in s.tables}
    assert fresh.keys() == expected.keys() == {ITEMS, ORDERS}
    for table, value in fresh.items():  # the CLI read the status a few seconds earlier
        assert 0 <= (expected[table] or 0) - value < 120
    assert ("cdclake_stream_last_batch_timestamp_seconds", ()) in got
    # --json is kept as an alias of --format json
    as_json = CliRunner().invoke(app, ["status", "--target", str(lake.root), "--json"])
    assert as_json.exit_code == 0 and as_json.output.startswith("{")
    # a textfile measures freshness at the status' time
    now = datetime.fromtimestamp((T0 + 65_000) / 1000, UTC)
    at_now = target_status(str(lake.root), now=now)
    assert (
        by_label(
            samples(exposition(StatusGauges(at_now))), "cdclake_table_freshness_seconds", "table"
        )
        == {t.table: t.freshness_seconds for t in at_now.tables}
        == {ITEMS: 63.0, ORDERS: 63.0}
    )  # pg's newest good record: the orders insert at T0+2 s


def test_reasons_are_folded_to_templates() -> None:
    assert reason_template("message of 812 bytes is over the limit of 500 bytes") == (
        "message of N bytes is over the limit of N bytes"
    )
    assert reason_template("column 'qty' of 'orders': got 'abc'") == "column '…' of '…': got '…'"
    assert reason_template("not valid JSON: Unexpected character ('n' (code 110))") == (
        "not valid JSON"
    )
    assert len(reason_template("x" * 500)) == 90


def _busy_port() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s


def test_metrics_are_served_over_http() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    m = RunMetrics()
    m.serve(port)
    try:
        m.batch(BatchResult(messages=3, control=3, control_by_op={"heartbeat": 3}), *_times())
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            got = samples(r.read().decode())
    finally:
        m.close()
    assert got[("cdclake_messages_total", ())] == 3
    assert got[("cdclake_control_records_total", (("op", "heartbeat"),))] == 3


def _times() -> tuple[datetime, datetime]:
    now = datetime.now(UTC)
    return now, now


def test_a_taken_port_is_one_line(tmp_path: Any) -> None:
    with _busy_port() as busy:
        port = busy.getsockname()[1]
        with pytest.raises(MetricsError, match=rf"^--metrics-port {port}: cannot serve .*in use"):
            RunMetrics().serve(port)
        busy_port = ["--metrics-port", str(port)]
        lines = tmp_path / "in.jsonl"
        lines.write_text(BATCHES[0][0] + "\n")
        out = CliRunner().invoke(
            app,
            ["apply", "--target", str(tmp_path / "lake"), "--input", str(lines), *busy_port],
        )
    assert out.exit_code == 2, out.output
    assert out.output.count("\n") == 2, out.output  # "metrics at …", then the error
    assert f"error: --metrics-port {port}: cannot serve metrics on 127.0.0.1:{port}" in out.output


def test_an_unknown_status_format_is_one_line(tmp_path: Any) -> None:
    out = CliRunner().invoke(app, ["status", "--target", str(tmp_path), "--format", "xml"])
    assert out.exit_code == 2
    assert out.output == "error: --format 'xml': expected one of table, json, prometheus\n"


def test_a_file_stream_serves_metrics_updated_after_each_batch(spark: Any, tmp_path: Any) -> None:
    """``ApplyConfig.metrics_port`` on :func:`run_stream`: each batch's callback sees /metrics
    already counting that batch."""
    from cdclake.config import ApplyConfig
    from cdclake.run.runner import run_stream

    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "001.jsonl").write_text("\n".join(BATCHES[0]) + "\n")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = ApplyConfig(
        inputs=(str(inbox),),
        target=str(tmp_path / "lake"),
        stream=True,
        checkpoint=str(tmp_path / "chk"),
        available_now=True,
        metrics_port=port,
    )
    seen: list[Samples] = []

    def scrape(_batch_id: int, _result: BatchResult) -> None:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            seen.append(samples(r.read().decode()))

    total = run_stream(spark, config, scrape)
    assert len(seen) == 1
    got = seen[0]
    assert got[("cdclake_messages_total", ())] == total.messages == 5
    assert by_label(got, "cdclake_events_applied_total", "table") == {ITEMS: 2, ORDERS: 1}
    assert by_label(got, "cdclake_table_rows", "table") == {ITEMS: 2, ORDERS: 1}
    with pytest.raises(OSError):  # served only while the run lasts
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5)
