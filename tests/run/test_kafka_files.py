"""kafka_tools without a broker: how JSON-lines files are read and how bad lines are reported."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from cdclake.errors import ConfigError
from cdclake.run.kafka_tools import KafkaToolError, _messages, produce, wait_ready


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def test_lines_become_message_bytes(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        '{"a": 1}\n'
        "\n"
        '{"key": "k", "value": null, "headers": {"h": "text", "n": 1, "z": null}}\n'
        '{"value": 1, "extra": true}\n'
        '{"key": [1], "value": "v", "topic": "t", "partition": 3, "offset": 9}\n',
    )

    assert _messages(path, keep_partitions=False) == [
        (1, {"key": None, "value": b'{"a":1}', "headers": [], "partition": -1}),
        (
            3,
            {
                "key": b'"k"',
                "value": None,
                "headers": [("h", b"text"), ("n", b"1"), ("z", None)],
                "partition": -1,
            },
        ),
        # Not a record object (a field outside the record fields): the whole object is the value.
        (4, {"key": None, "value": b'{"value":1,"extra":true}', "headers": [], "partition": -1}),
        (5, {"key": b"[1]", "value": b'"v"', "headers": [], "partition": -1}),
    ]
    assert _messages(path, keep_partitions=True)[3][1]["partition"] == 3


def test_bad_json_line_is_named_and_nothing_is_sent(tmp_path: Path) -> None:
    path = _file(tmp_path, '{"a": 1}\n{"a": \n')
    expected = re.escape(f"{path}:2: '{{\"a\":' is not JSON")
    # An unreachable bootstrap proves the file is rejected before any connection is made.
    with pytest.raises(ConfigError, match=expected):
        produce(path, "t", "127.0.0.1:1", timeout_s=1)


def test_bad_headers_and_partition_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"in\.jsonl:1: headers \['h'\] is not an object"):
        _messages(_file(tmp_path, '{"value": 1, "headers": ["h"]}\n'), keep_partitions=False)
    with pytest.raises(ConfigError, match=r"in\.jsonl:1: headers '' is not an object"):
        _messages(_file(tmp_path, '{"value": 1, "headers": ""}\n'), keep_partitions=False)
    with pytest.raises(ConfigError, match=r"in\.jsonl:1: partition '0' is not a partition number"):
        _messages(_file(tmp_path, '{"value": 1, "partition": "0"}\n'), keep_partitions=True)


def test_wait_ready_names_the_unreachable_broker() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # The port is free again now: nothing listens there.
    with pytest.raises(KafkaToolError, match=rf"no Kafka broker answered at 127\.0\.0\.1:{port}"):
        wait_ready(f"127.0.0.1:{port}", timeout_s=1.5)
