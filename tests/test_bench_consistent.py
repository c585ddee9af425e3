"""The bench's consistent-mode cases (issue 39): the transactional stream it produces, when an
event counts as visible in ``--consistent`` mode, and the headline's keys. No Spark."""

from __future__ import annotations

import json

import pytest

from bench import data, latency, report


def test_every_transaction_is_closed_by_an_end_that_counts_its_events() -> None:
    n = 12
    stream = list(data.events(n, 4, 100))
    ids = [
        json.loads(data.debezium_record(e, n, transaction=True)[1])["payload"]["transaction"]["id"]
        for e in stream
    ]
    ends = [json.loads(end[1]) for e in stream if (end := data.transaction_end(e, n))]
    assert [(x["status"], x["event_count"]) for x in ends] == [("END", 5), ("END", 5), ("END", 2)]
    assert [x["id"] for x in ends] == list(dict.fromkeys(ids))  # one END per id, in order
    assert [ids.count(x["id"]) for x in ends] == [x["event_count"] for x in ends]
    plain = json.loads(data.debezium_record(stream[0], n)[1])["payload"]
    assert "transaction" not in plain


def test_an_event_is_visible_at_the_first_cut_that_reaches_its_source_time() -> None:
    produced = latency.Produced()
    produced.by_partition = {0: [(0, 100), (1, 250)], 1: [(0, 180), (1, 400)]}
    # (source ms the cut reaches, ms the cut was written); a cut that applied nothing repeats
    cuts = [(120, 1000), (120, 1500), (260, 2000), (400, 3000)]
    assert sorted(latency.cut_visible(produced, cuts)) == [
        (100, 1000),
        (180, 2000),
        (250, 2000),
        (400, 3000),
    ]
    with pytest.raises(RuntimeError, match="produced at 400 ms is in no cut"):
        latency.cut_visible(produced, cuts[:3])


def test_the_headline_compares_consistent_mode_with_the_default_on_the_same_input() -> None:
    def row(contender: str, **extra: object) -> dict[str, object]:
        return {"contender": contender, "format": "debezium", "status": "ok", **extra}

    rows = [
        row("stream-apply-txn", eps=400.0),
        row("stream-apply-consistent", eps=300.0),
        row("stream-latency-txn", latency_p50_s=2.0, latency_p95_s=3.0, latency_p99_s=3.5),
        row("stream-latency-consistent", latency_p50_s=4.0, latency_p95_s=6.5, latency_p99_s=8.0),
    ]
    assert report.consistent_headline(rows) == {
        "consistent_eps": 300.0,
        "consistent_default_eps": 400.0,
        "consistent_ratio": 0.75,
        "consistent_default_latency_p50_s": 2.0,
        "consistent_default_latency_p95_s": 3.0,
        "consistent_default_latency_p99_s": 3.5,
        "consistent_latency_p50_s": 4.0,
        "consistent_latency_p95_s": 6.5,
        "consistent_latency_p99_s": 8.0,
    }
    assert report.consistent_headline(rows[:0]) == {}
