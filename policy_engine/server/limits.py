"""Every bound the transports put on what a client controls, with its default.

One place for the numbers: the CLI's options, the docs' table ("Limits and
how to change them" in docs/server.md) and the transports all read them here.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

ENVELOPE_BYTES = 64 * 1024
"""Room for the JSON-RPC envelope around a payload of the largest allowed size."""

DEFAULT_PAYLOAD_BYTES = 4 * 1024 * 1024
"""The compiler's default ``--max-payload-bytes`` (the server may not import the
compiler; ``tests/server/test_server_limits.py`` checks that the two agree)."""

_DESCRIPTORS_KEPT = 64
"""Descriptors left for the log, policy files and the listening socket."""


def message_limit(max_payload_bytes: int) -> int:
    """The largest stdio line or HTTP body taken for a given payload limit."""
    return max_payload_bytes + ENVELOPE_BYTES


def default_max_connections() -> int:
    """Open HTTP connections allowed: what the descriptor limit leaves room for.

    With the soft ``RLIMIT_NOFILE`` at 256, 300 idle connections used to lock
    everyone out; refusing the connection past this count keeps descriptors
    for the work in progress.
    """
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(16, min(4096, soft - _DESCRIPTORS_KEPT))


@dataclass(frozen=True)
class TransportLimits:
    """Bounds on one server's transports; the defaults are the documented ones."""

    max_message_bytes: int = message_limit(DEFAULT_PAYLOAD_BYTES)
    """stdio line or HTTP body; longer ones get -32600 (HTTP 413)."""
    max_in_flight: int = 256
    """stdio: requests read and not yet answered before reading pauses."""
    header_timeout: float = 10.0
    """HTTP: seconds from connecting (or from the last response) to complete headers."""
    body_timeout: float = 30.0
    """HTTP: seconds from the headers to the end of the body."""
    idle_timeout: float = 5.0
    """HTTP: seconds a keep-alive connection may sit idle between requests."""
    session_idle_timeout: float = 600.0
    """HTTP: seconds a stateful session may go without a request before it ends."""
    max_sessions: int = 1000
    """HTTP: open stateful sessions; past it the oldest idle session is ended."""
    max_connections: int | None = None
    """HTTP: open connections; ``None`` derives it from the descriptor limit."""

    def connections(self) -> int:
        return self.max_connections or default_max_connections()
