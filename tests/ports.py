"""Free TCP ports for the services the tests start (brokers, S3, clusters, databases)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
