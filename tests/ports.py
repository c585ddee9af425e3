"""Free TCP ports for the services the tests start (brokers, S3, clusters, databases)."""

from __future__ import annotations

import socket

_GIVEN: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now, and not one this process was given
    before: the kernel may hand the same free port to two binds in a row, and the ports of one
    chain are picked before its services start (the conformance chain's Kafka and Connect REST
    ports once came out equal, and the Connect worker could not bind)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port: int = s.getsockname()[1]
        if port not in _GIVEN:
            _GIVEN.add(port)
            return port
