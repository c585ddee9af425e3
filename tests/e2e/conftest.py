"""End-to-end fixtures: a real Kafka broker (KRaft, single node) started by scripts/kafka.sh."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from ports import free_port

REPO = Path(__file__).resolve().parents[2]
KAFKA_SH = REPO / "scripts" / "kafka.sh"


def _kafka_sh(*args: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(KAFKA_SH), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Bootstrap address (``127.0.0.1:<port>``) of a fresh broker that lives for the session.

    The broker gets a free port and its own data dir under pytest's temp dir; ``kafka.sh start``
    installs the jars first if ``make test`` has not already done so.
    """
    port = str(free_port())
    env = {**os.environ, "KAFKA_DATA": str(tmp_path_factory.mktemp("kafka-data"))}
    # 10 minutes covers a first-time jar download; a warm start takes a few seconds.
    started = _kafka_sh("start", "--port", port, "--fresh", env=env, timeout=600)
    if started.returncode != 0:
        pytest.fail(
            f"scripts/kafka.sh start --port {port} failed (exit {started.returncode}):\n"
            f"{started.stdout}{started.stderr}",
            pytrace=False,
        )
    try:
        yield f"127.0.0.1:{port}"
    finally:
        stopped = _kafka_sh("stop", "--port", port, env=env, timeout=120)
        assert stopped.returncode == 0, f"kafka.sh stop failed:\n{stopped.stdout}{stopped.stderr}"
