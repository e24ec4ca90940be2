"""A backend's request held until the client has a stream to receive it on.

Over streamable HTTP a request from a backend (``roots/list``, sampling,
elicitation) that belongs to no open client request can only travel on the
client's standalone GET stream. A backend may ask right after the handshake
(server-filesystem asks for roots on ``notifications/initialized``), before the
client has opened that stream; the SDK's transport then drops the message (it
keeps it only for a replay the client never asks for), and the backend waits
for an answer that never comes. So the session holds such a request until a
stream is there (the GET stream opened, or a client request is open whose
response stream can carry it), a bounded number of them for a bounded time; a
request still held at the deadline, or one past the bound, is answered to the
backend with an error. Nothing waits forever and nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import anyio
from mcp_types import RequestId

MAX_HELD = 32
"""Backend requests one session holds at a time; one more is refused at once."""
_POLL_S = 0.02
"""How often a held request looks for a stream (a GET stream opening says nothing)."""


@dataclass(frozen=True)
class Delivery:
    """Where a held request may go: ``deliverable``, on the stream of ``related``
    (``None``: the stream for messages of no request)."""

    deliverable: bool
    related: RequestId | None = None
    reason: str | None = None
    """Why it may not, for the backend's error."""
    busy: bool = False
    """Refused at once because the session holds its limit (not a client too slow)."""


class ClientStream:
    """Whether the client can receive a message that belongs to no request, and a
    bounded wait for it to be able to."""

    def __init__(self, is_open: Callable[[], bool] | None, *, max_held: int = MAX_HELD):
        """``is_open``: the front's test for that stream (an HTTP session's GET
        stream); ``None`` for a front whose one stream is always there (stdio)."""
        self._is_open = is_open
        self._max_held = max_held
        self.held = 0

    def route(self, latest: Callable[[], RequestId | None]) -> Delivery | None:
        """Where a message can go now, or ``None`` if nowhere yet."""
        related = latest()
        if related is not None:
            return Delivery(True, related)
        if self._is_open is None or self._is_open():
            return Delivery(True, None)
        return None

    async def wait(self, latest: Callable[[], RequestId | None], limit_s: float) -> Delivery:
        """A stream for a request of no client request, within ``limit_s``."""
        now = self.route(latest)
        if now is not None:
            return now
        if self.held >= self._max_held:
            return Delivery(
                False,
                reason=f"the session already holds {self._max_held} for the client",
                busy=True,
            )
        self.held += 1
        try:
            with anyio.move_on_after(limit_s):
                while True:
                    await anyio.sleep(_POLL_S)
                    found = self.route(latest)
                    if found is not None:
                        return found
        finally:
            self.held -= 1
        return Delivery(False, reason="the client opened no stream to receive it in time")
