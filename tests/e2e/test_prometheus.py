"""Prometheus scrapes a running ``cdclake apply --stream`` over Kafka; its alert fires.

One stream over the session's broker, with ``--metrics-port``, and Debian's Prometheus server
(scripts/prometheus.sh) with a config of its own: scrape and rule evaluation every second, and
docs/alerts.yml with the freshness threshold and ``for:`` cut down to the test's time. Through
Prometheus' HTTP API the test checks each table's freshness, the quarantine counter after two
bad messages, and that CdclakeTableStale goes from inactive to firing once the producer stops
sending heartbeats.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from builders.dbz import event
from confluent_kafka import Producer
from ports import free_port

from cdclake.run.kafka_tools import create_topic

REPO = Path(__file__).resolve().parents[2]
ALERTS = REPO / "docs" / "alerts.yml"
STALE_AFTER = 60  # seconds: above a batch's time on a busy 2-core machine
ITEMS, ORDERS = "shop.public.items", "shop.public.orders"
T = TypeVar("T")


def _test_rules(path: Path) -> Path:
    """docs/alerts.yml with the staleness threshold and every ``for:`` cut to seconds."""
    text = ALERTS.read_text()
    assert "cdclake_table_freshness_seconds > 900" in text
    text = text.replace(
        "cdclake_table_freshness_seconds > 900", f"cdclake_table_freshness_seconds > {STALE_AFTER}"
    )
    text = re.sub(r"for: \d+m", "for: 1s", text)
    path.write_text(text)
    return path


class Heartbeats:
    """Debezium heartbeats of the connector ``pg``, one a second, until :meth:`stop`."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        self.topic, self._stop = topic, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            value = {"ts_ms": int(time.time() * 1000)}
            self.producer.produce(self.topic, json.dumps(value), json.dumps({"serverName": "pg"}))
            self.producer.flush(10)
            self._stop.wait(1)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(30)


def _produce(bootstrap: str, topic: str, values: list[tuple[str | None, str]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for key, value in values:
        producer.produce(topic, value, key)
    assert producer.flush(30) == 0


def _changes() -> list[tuple[str | None, str]]:
    now = int(time.time() * 1000)
    lines = [
        event("c", after={"id": 1, "name": "a", "qty": 1}, lsn=10, ts_ms=now),
        event("c", after={"id": 2, "name": "b", "qty": 2}, lsn=11, ts_ms=now),
        event("c", after={"id": 1, "name": "o", "qty": 3}, lsn=12, ts_ms=now, table="orders"),
    ]
    records = [json.loads(line) for line in lines]
    out = [(json.dumps(r["key"]), json.dumps(r["value"])) for r in records]
    return [*out, (None, "not json"), (None, "{not json either")]


class Prometheus:
    """Debian's prometheus on a free port, scraping ``target``, with ``rules``."""

    def __init__(self, tmp: Path, target: str, rules: Path) -> None:
        config = tmp / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"rule_files: [{rules}]\n"
            "scrape_configs:\n"
            f"  - job_name: cdclake\n    static_configs: [{{targets: ['{target}']}}]\n"
        )
        self.url = f"http://127.0.0.1:{free_port()}"
        self.log = (tmp / "prometheus.log").open("wb")
        self.proc = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp / 'tsdb'}",
             f"--web.listen-address={self.url.removeprefix('http://')}"],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    def get(self, path: str, **params: str) -> Any:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.loads(r.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str, label: str = "table") -> dict[str, float]:
        """``label``'s value -> value, of each series an instant query returns."""
        return {
            r["metric"].get(label, ""): float(r["value"][1])
            for r in self.get("/api/v1/query", query=expr)["result"]
        }

    def alert_state(self, name: str) -> tuple[str, list[dict[str, Any]]]:
        for group in self.get("/api/v1/rules", type="alert")["groups"]:
            for rule in group["rules"]:
                if rule["name"] == name:
                    return rule["state"], rule["alerts"]
        raise AssertionError(f"no alert rule {name}")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()


def wait_for(what: str, probe: Callable[[], T | None], timeout: float, why: Callable[[], str]) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            got = probe()
        except OSError:  # not listening yet
            got = None
        if got:
            return got
        time.sleep(1)
    raise AssertionError(f"{what}: not within {timeout:.0f}s\n{why()}")


@pytest.fixture
def apply_stream(kafka_broker: str, tmp_path: Path) -> Iterator[Callable[..., tuple[int, Path]]]:
    """Start ``cdclake apply`` over a topic with ``--metrics-port``; killed at the end."""
    started: list[subprocess.Popen[bytes]] = []

    def start(topic: str) -> tuple[int, Path]:
        port, log = free_port(), tmp_path / "apply.log"
        env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "CDCLAKE_DRIVER_MEMORY": "1g"}
        args = [
            "--target", str(tmp_path / "lake"), "--checkpoint", str(tmp_path / "chk"),
            "--kafka-bootstrap", kafka_broker, "--topic", topic,
            "--trigger-interval", "1 second", "--metrics-port", str(port),
        ]  # fmt: skip
        with log.open("wb") as out:
            started.append(
                subprocess.Popen(
                    [sys.executable, "-m", "cdclake.cli", "apply", *args],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    cwd=REPO,
                    start_new_session=True,
                )
            )
        return port, log

    yield start
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


# About 4 minutes, and it must: a CLI driver starts a Kafka stream (about a minute), Prometheus
# scrapes it while it applies, and the stale alert can only fire once the heartbeats have been
# gone for longer than the rule's freshness threshold (60 s here, cut down from 900 s).
@pytest.mark.e2e
# over 120 s (122 s), because: Prometheus scrapes a running stream, and the stale alert fires only
# once the stream has been quiet for longer than the threshold above (60 s)
def test_prometheus_scrapes_freshness_and_quarantine_and_fires_the_stale_alert(
    kafka_broker: str, apply_stream: Callable[..., tuple[int, Path]], tmp_path: Path
) -> None:
    topic = f"metrics-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_broker, topic)
    _produce(kafka_broker, topic, _changes())
    heartbeats = Heartbeats(kafka_broker, topic)
    port, log = apply_stream(topic)
    prom = Prometheus(tmp_path, f"127.0.0.1:{port}", _test_rules(tmp_path / "rules.yml"))
    try:
        why = lambda: log.read_text(errors="replace")[-3000:]  # noqa: E731
        wait_for(
            "both tables' freshness in Prometheus",
            lambda: (
                (f := prom.query("cdclake_table_freshness_seconds")).keys() == {ITEMS, ORDERS} and f
            ),
            480,
            why,
        )
        # two bad messages, one reason once folded
        quarantined = wait_for(
            "the quarantine counter",
            lambda: prom.query("cdclake_events_quarantined_total", "reason"),
            120,
            why,
        )
        assert quarantined == {"not valid JSON": 2.0}
        assert prom.query("cdclake_table_rows") == {ITEMS: 2.0, ORDERS: 1.0}
        assert prom.query("cdclake_kafka_lag_offsets", "topic").keys() == {topic}
        # the heartbeats keep both tables fresh though their changes are older: once the
        # batches after the first (the backlog of the start-up) come, the alert is inactive
        wait_for(
            "CdclakeTableStale inactive while heartbeats arrive",
            lambda: (
                prom.alert_state("CdclakeTableStale")[0] == "inactive"
                and (f := prom.query("cdclake_table_freshness_seconds")).keys() == {ITEMS, ORDERS}
                and all(0 <= v < STALE_AFTER for v in f.values())
                and f
            ),
            300,
            why,
        )

        heartbeats.stop()
        state = wait_for(
            "CdclakeTableStale firing after the heartbeats stopped",
            lambda: (s := prom.alert_state("CdclakeTableStale"))[0] == "firing" and s,
            STALE_AFTER + 60,
            why,
        )
        assert sorted(a["labels"]["table"] for a in state[1]) == [ITEMS, ORDERS]
        assert all(v > STALE_AFTER for v in prom.query("cdclake_table_freshness_seconds").values())
    finally:
        heartbeats.stop()
        prom.stop()
