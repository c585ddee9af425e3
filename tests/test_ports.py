"""The tests' free ports (tests/ports.py): none an outgoing connection can take first."""

from __future__ import annotations

import random
import socket
from collections.abc import Iterator

import pytest

from tests import ports


def test_ports_are_distinct_bindable_and_below_the_ephemeral_range() -> None:
    given = [ports.free_port() for _ in range(200)]
    assert len(set(given)) == len(given)
    assert all(ports._LOWEST <= p < ports._ephemeral_start() for p in given)
    for p in given[:20]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))  # free: raises if not


def test_a_port_with_a_listener_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        taken = listener.getsockname()[1]
        other = ports.free_port()
        ports._GIVEN.discard(other)
        picks: Iterator[int] = iter([taken, other])
        monkeypatch.setattr(random.SystemRandom, "randrange", lambda self, a, b: next(picks))
        assert ports.free_port() == other
