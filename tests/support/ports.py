"""A loopback port that refuses connections, held so no other test can take it."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator


@contextlib.contextmanager
def refusing_port() -> Iterator[int]:
    """A 127.0.0.1 port bound but not listening while the block runs: a connection to it
    is refused (Linux answers the SYN with a reset), and no other process (a parallel
    test's server) can bind it meanwhile, as it could a port that was freed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
