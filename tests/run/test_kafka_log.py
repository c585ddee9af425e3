"""The Kafka client's own log (librdkafka) is a debug log: a run against a broker it cannot reach
says so in cdclake's one line, and ``--debug`` shows what the client logged."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ports import free_port

from cdclake.run.kafka_tools import KafkaToolError, produce


def _one_line(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text('{"value": {"id": 1}}\n')
    return path


def test_a_refused_broker_is_one_line_and_the_clients_log_a_debug_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bootstrap = f"127.0.0.1:{free_port()}"
    with (
        caplog.at_level(logging.DEBUG, logger="cdclake.librdkafka"),
        pytest.raises(KafkaToolError) as raised,
    ):
        produce(_one_line(tmp_path), "t", bootstrap, timeout_s=1.5)
    assert str(raised.value) == (
        f"1 of 1 messages from {tmp_path / 'in.jsonl'} to topic 't' were not delivered to "
        f"{bootstrap} within 1.5s; expected a reachable broker"
    )
    client = [r for r in caplog.records if r.name == "cdclake.librdkafka"]
    assert client and {r.levelno for r in client} == {logging.DEBUG}
    # librdkafka's own level and facility lead the message
    refused = [r.getMessage() for r in client if "Connection refused" in r.getMessage()]
    assert refused and refused[0].startswith("ERROR FAIL [rdkafka#producer-"), refused


def test_the_command_line_prints_only_its_error_unless_debug(tmp_path: Path) -> None:
    bootstrap = f"127.0.0.1:{free_port()}"
    args = [sys.executable, "-m", "cdclake.run.kafka_tools", "produce", str(_one_line(tmp_path))]
    args += ["--topic", "t", "--bootstrap", bootstrap, "--timeout", "1.5"]
    env = {**os.environ, "CDCLAKE_DEBUG": ""}
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: 1 of 1 messages from {tmp_path / 'in.jsonl'} to topic 't' were not delivered "
        f"to {bootstrap} within 1.5s; expected a reachable broker"
    ], done.stderr

    # ``cdclake --debug`` turns cdclake's debug log on, the client's included
    script = (
        "import sys\n"
        "from cdclake.cli import app\n"
        "from cdclake.run.kafka_tools import produce\n"
        "app(['--debug', 'status', '--help'], standalone_mode=False)\n"
        "try:\n"
        "    produce(sys.argv[1], 't', sys.argv[2], timeout_s=1.5)\n"
        "except Exception as e:\n"
        "    print('error:', e, file=sys.stderr)\n"
    )
    args = [sys.executable, "-c", script, str(_one_line(tmp_path)), bootstrap]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=False)
    lines = done.stderr.splitlines()
    assert lines[-1].startswith("error: 1 of 1 messages"), done.stderr
    assert any(
        x.startswith("DEBUG cdclake.librdkafka: ERROR FAIL [rdkafka#producer-")
        and "Connection refused" in x
        for x in lines
    ), done.stderr
