"""Free TCP ports for the services the tests start (brokers, S3, clusters, databases)."""

from __future__ import annotations

import random
import socket
from pathlib import Path

_GIVEN: set[int] = set()
_LOWEST = 20000
"""The lowest port given: above the ports services listen on by default."""


def _ephemeral_start() -> int:
    """The first port of the kernel's range for outgoing connections and ``bind(0)``."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now, below the kernel's ephemeral range,
    and not one this process was given before.

    The ports of one chain are picked before its services start. A port from the ephemeral range
    (what ``bind(0)`` gives) can be taken in between by any outgoing connection: a Kafka client's,
    a JDBC driver's, Spark's (the conformance chain's Connect worker once found its REST port in
    use). Below that range only a listener takes a port, and this process never gives the same one
    twice (the kernel may hand the same free port to two binds in a row)."""
    top = _ephemeral_start()
    rng = random.SystemRandom()
    while True:
        port = rng.randrange(_LOWEST, top) if top > _LOWEST + 1000 else 0
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # a listener has it
            port = s.getsockname()[1]
        if port not in _GIVEN:
            _GIVEN.add(port)
            return port
